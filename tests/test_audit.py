"""The privacy audit: SetTable checkers against the expanded-table oracle,
the audit on honest and tampered publications, and the attack simulation on
Adult at l = 5."""
import itertools
import math
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset.audit import (attack, audit, audit_file, check_anonymity, check_closeness,
                           check_diversity, closeness_bound_any_A, expand, membership)
from anonset.audit.classes import class_counts, lazy_membership
from anonset.closeness_search import worst_emd_bruteforce
from anonset.randomized.params import AttributeParams, ground_object
from anonset.schema import Attribute, Schema
from anonset.randomized.settable import SetTable, masks_from_codes


# ------------------------------------------------------------------ oracle
def _oracle_expand(table):
    """Obviously correct: itertools over each record's sets (Table III(b))."""
    names = table.names
    sets = [[np.flatnonzero(row).tolist() for row in membership(table, n)] for n in names]
    rows = []
    for i in range(table.n_rows):
        rows.extend(itertools.product(*[s[i] for s in sets]))
    return pd.DataFrame(rows, columns=names)


def _oracle_classes(expanded, j, d):
    """{key of the class for S_j: counts of each value}."""
    others = [c for c in expanded.columns if c != j]
    out = {}
    if not others:
        if len(expanded):
            out[()] = np.bincount(expanded[j], minlength=d)
        return out
    for key, g in expanded.groupby(others):
        key = key if isinstance(key, tuple) else (key,)
        out[tuple(int(k) for k in key)] = np.bincount(g[j], minlength=d)
    return out


@st.composite
def random_set_tables(draw):
    """Tables of arbitrary sets (not necessarily of the published size): the
    honest case and every kind of tampering."""
    q = draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    attrs, masks, params = [], {}, {}
    for j in range(q):
        d = draw(st.integers(1, 5))
        name = f"s{j}"
        eta = draw(st.integers(1, d))
        sizes_fixed = draw(st.booleans())
        rows = []
        for _ in range(n):
            k = eta if sizes_fixed else draw(st.integers(1, d))
            rows.append(sorted(draw(st.permutations(range(d)))[:k]))
        offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
        masks[name] = masks_from_codes(np.concatenate(rows), offsets, d)
        attrs.append(Attribute(name, "sensitive", domain=tuple(range(d))))
        params[name] = AttributeParams(name, 1.0, eta, d, l=draw(st.integers(1, d)))
    return SetTable(Schema(tuple(attrs)), masks, params, {"model": "diversity", "l": 1})


@given(random_set_tables(), st.sampled_from(["frequency", "entropy"]))
@settings(max_examples=80)
def test_checkers_agree_with_expanded_oracle(table, measure):
    ex = _oracle_expand(table)
    # the vectorized expansion is the oracle's multiset of rows
    mine = expand(table).drop(columns="_record")
    assert sorted(map(tuple, mine.to_numpy().tolist())) == sorted(map(tuple, ex.to_numpy().tolist()))
    exact = check_diversity(table, measure=measure, method="expand").report.set_index("attribute")
    bound = check_diversity(table, measure=measure, method="bound").report.set_index("attribute")
    anon = check_anonymity(table, method="expand").report.set_index("attribute")
    anon_bound = check_anonymity(table, method="bound").report.set_index("attribute")
    for name in table.names:
        d = table.schema[name].d
        l = table.params[name].l
        classes = _oracle_classes(ex, name, d)
        freqs = [c.max() / c.sum() for c in classes.values()]
        ents = [-(c[c > 0] / c.sum() * np.log(c[c > 0] / c.sum())).sum() for c in classes.values()]
        sizes = [c.sum() for c in classes.values()]
        oracle_ok = all(f <= 1 / l + 1e-12 for f in freqs) if measure == "frequency" else \
            all(h >= math.log(l) - 1e-12 for h in ents)
        r = exact.loc[name]
        assert r["classes"] == len(classes)
        assert r["max_freq"] == pytest.approx(max(freqs), abs=1e-12)
        assert r["l_entropy"] == pytest.approx(math.exp(min(ents)), rel=1e-9)
        assert bool(r["ok"]) == oracle_ok
        # the bound proves only what is true, and proves it whenever all sets have >= l values
        m = min(membership(table, name).sum(axis=1))
        assert bound.loc[name, "bound_l"] == m
        assert bool(bound.loc[name, "ok"]) == (m >= l)
        if bound.loc[name, "ok"]:
            assert oracle_ok
        assert max(freqs) <= 1 / m + 1e-12 and min(ents) >= math.log(m) - 1e-12   # the proof
        assert min(sizes) >= m
        k = table.params[name].l
        assert anon.loc[name, "min_class"] == min(sizes)
        assert bool(anon.loc[name, "ok"]) == (min(sizes) >= k)
        if anon_bound.loc[name, "ok"]:
            assert min(sizes) >= k


@st.composite
def wide_set_tables(draw):
    """Many attributes, so the product of the other attributes' domains is
    beyond 2^62 and the class keys are re-numbered on the way."""
    q = draw(st.integers(24, 48))
    n = draw(st.integers(1, 6))
    attrs, masks, params = [], {}, {}
    for j in range(q):
        d = draw(st.integers(2, 9))
        eta = 2 if j < 3 and d > 2 else 1          # three sets, the rest exact-like
        rows = [sorted(draw(st.permutations(range(d)))[:eta]) for _ in range(n)]
        offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
        masks[f"s{j}"] = masks_from_codes(np.concatenate(rows), offsets, d)
        attrs.append(Attribute(f"s{j}", "sensitive", domain=tuple(range(d))))
        params[f"s{j}"] = AttributeParams(f"s{j}", 1.0, eta, d, l=1)
    return SetTable(Schema(tuple(attrs)), masks, params, {"model": "diversity", "l": 1})


@given(wide_set_tables())
@settings(max_examples=30, deadline=None)
def test_expanded_class_counts_of_wide_tables_agree_with_oracle(table):
    from anonset.audit.classes import expanded_counts
    ex = _oracle_expand(table)
    got = expanded_counts(table, None)
    for name in table.names:
        want = _oracle_classes(ex, name, table.schema[name].d)
        C, how = got[name]
        assert how == "expand"
        assert sorted(map(tuple, C.tolist())) == sorted(tuple(c.tolist()) for c in want.values())


@given(random_set_tables(), st.data())
@settings(max_examples=40)
def test_single_class_counts_agree_with_oracle(table, data):
    """The sampled-class path (no expansion) gives each class's exact counts."""
    ex = _oracle_expand(table)
    Ms = [membership(table, n) for n in table.names]
    row = data.draw(st.integers(0, len(ex) - 1))
    key = [int(x) for x in ex.iloc[row]]
    lazy = [lazy_membership(table, n) for n in table.names]     # the audit's own view
    for Ms_ in (Ms, lazy):
        for j, (name, counts) in enumerate(zip(table.names,
                                               class_counts(Ms_, np.array([key])))):
            classes = _oracle_classes(ex, name, table.schema[name].d)
            other_key = tuple(k for i, k in enumerate(key) if i != j)
            np.testing.assert_array_equal(counts[0], classes[other_key])


@st.composite
def closeness_cases(draw):
    d = draw(st.integers(2, 6))
    A = np.array(draw(st.lists(st.integers(0, 9), min_size=d, max_size=d)), dtype=np.int64)
    if A.sum() == 0:
        A[0] = 1
    eta = draw(st.integers(1, d))
    p = draw(st.floats(0.0, 1.0))
    t = draw(st.floats(0.0, 0.6))
    ground = draw(st.sampled_from(["equal", "ordered"]))
    return A, eta, p, t, ground


@given(closeness_cases())
@settings(max_examples=60)
def test_check_closeness_agrees_with_bruteforce(case):
    A, eta, p, t, ground = case
    d = A.size
    attr = Attribute("s", "sensitive", domain=tuple(range(d)),
                     kind="ordinal" if ground == "ordered" else "nominal")
    mask = masks_from_codes(np.arange(eta), np.array([0, eta]), d)
    par = AttributeParams("s", p, eta, d, t=t, ground=ground)
    table = SetTable(Schema((attr,)), {"s": mask}, {"s": par}, {"model": "closeness", "t": t})
    rep = check_closeness(table, A={"s": A}).report.iloc[0]
    ref, _ = worst_emd_bruteforce(A, eta, p, ground_object(ground, attr))
    assert rep["worst_emd"] == pytest.approx(ref, abs=1e-9)
    assert bool(rep["ok"]) == (ref <= t + 1e-9)
    # the data-free bound is never below the worst case for this A
    assert closeness_bound_any_A(p, eta, d) >= ref - 1e-12


# --------------------------------------------------------- small tables
def _small(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.choice(list("uvwxyz"), n, p=[.4, .2, .15, .1, .1, .05]),
        "b": rng.choice(["lo", "mid", "hi", "top"], n),
        "c": rng.choice(list("pqrst"), n),
        "z": rng.choice(["m", "f"], n),
    })


DOMAINS = {"a": list("uvwxyz"), "b": ["lo", "mid", "hi", "top"], "c": list("pqrst"),
           "z": ["m", "f"]}


def _schema(df, exact=("z",)):
    return Schema.infer(df, exact=list(exact), domains=DOMAINS,
                        sensitive=[c for c in df.columns if c not in exact])


def _statuses(rep, check):
    f = rep.to_frame()
    return dict(zip(f.loc[f["check"] == check, "attribute"], f.loc[f["check"] == check, "status"]))


@pytest.mark.parametrize("model", [anonset.Diversity(3), anonset.EntropyDiversity(3),
                                   anonset.Anonymity(2), anonset.Closeness(0.15),
                                   anonset.DiversityCloseness(2, 0.3)],
                         ids=["frequency", "entropy", "anonymity", "closeness", "both"])
def test_audit_passes_on_honest_publications(model):
    df = _small()
    pub = anonset.publish(df, model, _schema(df, exact=["z"]), seed=5, research_seed=True)
    blind = audit(pub)
    assert blind.conforms, blind.failures
    holder = audit(pub, df, attack=True, n_targets=200, seed=1)
    assert holder.conforms, holder.failures
    # the research seed this table was published with is a risk ...
    assert _statuses(holder, "key") == {"-": "risk"} and not holder.ok
    assert _statuses(holder, "row_order") == {"-": "pass"}           # shuffled by default
    # ... a release with a fresh key and shuffled rows conforms and is PASSED
    released = released_like(pub)
    assert audit(released).ok and audit(released).verdict == "PASSED"
    rel = audit(released, df, attack=True, n_targets=200, seed=1)
    assert rel.conforms, rel.failures
    assert {r["check"] for r in rel.checks.to_dict("records") if r["status"] == "risk"} <= {"attack"}
    assert set(_statuses(holder, "inclusion").values()) == {"pass"}
    assert _statuses(holder, "parameters")["z"] == "pass"          # exact QID: p = 1, eta = 1
    if isinstance(model, (anonset.Closeness, anonset.DiversityCloseness)):
        assert set(_statuses(holder, "closeness").values()) == {"pass"}
        assert holder.closeness.ok
    if isinstance(model, anonset.Diversity):
        assert holder.diversity.ok and set(_statuses(holder, "classes").values()) == {"pass"}
    assert "conforms to the declared model: yes" in holder.to_text()
    assert "PASSED" in audit(released).to_text()


def _with(table, masks=None, params=None, model=None):
    m = {n: np.array(table.mask(n)) for n in table.names}
    m.update(masks or {})
    p = dict(table.params)
    p.update(params or {})
    out = SetTable(table.schema, m, p, model if model is not None else table.model,
                   table.other, table.info)
    out.source_rows = table.source_rows          # the same rows, in the same (shuffled) order
    return out


def released_like(table, **info):
    """The table with the metadata a release by the engine carries (issue 13
    contract): a fresh OS key, shuffled rows, every column's role."""
    meta = {"key": "os", "row_order": "shuffled", "clear": [], "rng": "chacha20",
            "roles": {a.name: a.role for a in table.schema}, "missing": {"policy": "error"},
            "anonset": anonset.__version__}
    meta.update(info)
    return SetTable(table.schema, {n: np.array(table.mask(n)) for n in table.names},
                    table.params, table.model, table.other, meta)


def _fails_on(rep, attribute, check=None):
    f = rep.to_frame()
    bad = f[f["status"] == "fail"]
    if check is not None:
        bad = bad[bad["check"] == check]
    return (not rep.conforms) and any(attribute in m for m in bad.loc[bad["attribute"] == attribute, "message"])


def test_audit_fails_on_a_shrunk_set():
    df = _small()
    pub = anonset.publish(df, anonset.Diversity(3), _schema(df), seed=2, research_seed=True)
    M = np.array(pub.mask("b"))
    w = M[7, 0]
    M[7, 0] = w & (w - np.uint64(1))                 # drop the lowest member of row 7's set
    bad = _with(pub, masks={"b": M})
    for rep in (audit(bad), audit(bad, df)):
        assert _fails_on(rep, "b", "set_size")
    # the proof from set sizes no longer holds for b ...
    r = check_diversity(bad, method="bound")
    assert not r.ok and "b" in r.report.set_index("attribute").loc["b", "message"]
    # ... though the exact check may still find every class 3-diverse (other records
    # share the shrunk record's classes): the bound is sufficient, not necessary
    exact = check_diversity(bad, method="expand").report.set_index("attribute")
    assert exact.loc["b", "max_freq"] <= 1 / 2 + 1e-12


def test_audit_fails_when_the_true_value_is_dropped():
    df = _small()
    pub = anonset.publish(df, anonset.Diversity(3), _schema(df), seed=2, research_seed=True,
                          keep_order=True)
    M = np.array(pub.mask("c"))
    true = DOMAINS["c"].index(df["c"][4])
    other = next(v for v in range(5) if not (int(M[4, 0]) >> v) & 1)
    M[4, 0] = (M[4, 0] & ~np.uint64(1 << true)) | np.uint64(1 << other)   # same size, no truth
    rep = audit(_with(pub, masks={"c": M}), df)
    assert audit(_with(pub, masks={"c": M})).conforms    # invisible without the data
    assert _fails_on(rep, "c", "inclusion")


@pytest.mark.parametrize("n", [4, 300])
def test_audit_fails_on_a_claimed_larger_l(n):
    df = _small(n)
    pub = anonset.publish(df, anonset.Diversity(3), _schema(df), seed=2, research_seed=True,
                          allow_clear=["a", "b", "c"])     # 4 rows: most values nobody's
    # the parameters claim l = 4 for a (eta stays 3)
    bad = _with(pub, params={"a": replace(pub.params["a"], l=4)})
    rep = audit(bad)
    assert _fails_on(rep, "a", "parameters")
    assert not check_diversity(bad, method="bound").ok
    # parameters and model both edited to claim l = 4
    bad = _with(pub, params={n: replace(pub.params[n], l=4) for n in pub.names if n != "z"},
                model=anonset.Diversity({"a": 4, "b": 4, "c": 4, "z": 1}).to_dict())
    rep = audit(bad, df)
    for name in ("a", "b", "c"):
        assert _fails_on(rep, name, "parameters")
        if n == 4:
            # few records: classes hold one record each, so a value has share 1/3 > 1/4
            assert _fails_on(rep, name, "diversity") and _fails_on(rep, name, "classes")
        else:
            # many records share each class: whether the expanded table happens to
            # be 4-diverse (Def. 11 counts classes, not sets) depends on the draw;
            # the audit's verdict must be the exact expansion's
            exact = check_diversity(bad, method="expand").report.set_index("attribute")["ok"]
            assert _statuses(rep, "diversity")[name] == ("pass" if exact[name] else "fail")
    if n != 4:
        assert not check_diversity(bad, method="expand").report.set_index("attribute")["ok"].all()
    assert "FAILED" in rep.to_text()


def test_audit_fails_when_p_exceeds_the_admissible_value():
    # 1,200 rows: the inclusion rate of p + 0.2 is then about 9 standard
    # deviations from the true rate's (with 300 rows it was 4.7, one draw in
    # four passing the |z| <= 4 test by chance)
    df = _small(1200)
    schema = _schema(df)
    pub = anonset.publish(df, anonset.Closeness(0.1, ground="equal"), schema, seed=2,
                          research_seed=True, keep_order=True)
    assert audit(pub, df).conforms
    par = pub.params["a"]
    assert par.p < 0.8
    # (1) the metadata claims a larger p than was used
    edited = _with(pub, params={"a": replace(par, p=min(1.0, par.p + 0.2))})
    rep = audit(edited, df)
    assert _fails_on(rep, "a", "closeness") and _fails_on(rep, "a", "inclusion")
    assert not check_closeness(edited, df).ok
    # (2) the sets really drawn with a p above the admissible one: publish
    # refuses such parameters, so draw them with the sampler directly
    params = dict(pub.params)
    params["a"] = replace(par, p=min(1.0, par.p + 0.2))
    with pytest.raises(ValueError, match=r"params: column 'a': p = .* exceeds the largest p"):
        anonset.publish(df, anonset.Closeness(0.1, ground="equal"), schema, seed=2, research_seed=True,
                        params=params)
    from anonset.encode import encode
    from anonset.randomized.publish import sample_sets
    ids = {a.name: schema.stream_id(a.name) for a in schema.published}
    masks = sample_sets(encode(df, schema), params, ids, anonset.io.keys.make_key(2, research_seed=True))
    drawn = _with(pub, masks=masks, params=params)
    rep = audit(drawn, df)
    assert _fails_on(rep, "a", "closeness")
    assert _statuses(rep, "inclusion")["a"] == "pass"
    assert rep.closeness.report.set_index("attribute").loc["a", "worst_emd"] > 0.1


def test_audit_flags_key_material_and_out_of_domain_bits():
    df = _small()
    pub = anonset.publish(df, anonset.Diversity(2), _schema(df), seed=2, research_seed=True)
    leaky = SetTable(pub.schema, {n: np.array(pub.mask(n)) for n in pub.names}, pub.params,
                     pub.model, pub.other, {"rng": "chacha20", "key": "ab" * 32})
    rep = audit(leaky)
    assert not rep.conforms and any("info.key" in m for m in rep.failures)
    M = np.array(pub.mask("b"))
    M[0, 0] |= np.uint64(1 << 10)                    # value 10 of a 4-value domain
    rep = audit(_with(pub, masks={"b": M}))
    assert _fails_on(rep, "b", "domain")


def test_check_closeness_without_data():
    df = _small()
    pub = anonset.publish(df, anonset.Closeness(0.15, ground="equal"), _schema(df), seed=2, research_seed=True)
    rep = check_closeness(pub).report
    assert set(rep["status"]) <= {"pass", "unverified"}
    for r in rep.itertuples():
        assert (r.status == "pass") == (r.bound_any_A <= r.t + 1e-9)
    blind = audit(pub)
    assert blind.conforms
    assert set(_statuses(blind, "closeness").values()) <= {"pass", "unverified", "warn"}


# ------------------------------------------------------------------ Adult
@pytest.fixture(scope="module")
def adult_l5():
    df = anonset.datasets.load_adult()
    schema = anonset.datasets.adult_schema(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # clip_l for d <= 5
        pub = anonset.publish(df, anonset.Diversity(5), schema, seed=11, research_seed=True, clip_l=True,
                              allow_clear=["sex", "salary-class"])   # the paper clips l = d - 1 = 1
    return df, pub


def test_adult_l5_combinatorial_guarantees_hold_exactly(adult_l5):
    df, pub = adult_l5
    # Theorem 2/3 bound from set sizes: min |R_ij| = eta_j = l_j for every record
    for measure in ("frequency", "entropy"):
        rep = check_diversity(pub, measure=measure, method="bound")
        assert rep.ok
        r = rep.report.set_index("attribute")
        for n in pub.names:
            assert r.loc[n, "bound_l"] == pub.params[n].l == pub.params[n].eta
    # an exact check on a sample of classes (no expansion): every share <= 1/l_j
    rep = check_diversity(pub, method="sample", n_classes=150, seed=3).report
    assert (rep["method"] == "sample").all() and (rep["classes"] > 0).all()
    for r in rep.itertuples():
        assert r.max_freq <= 1.0 / pub.params[r.attribute].l + 1e-12
        assert r.l_entropy >= pub.params[r.attribute].l - 1e-9
    assert check_anonymity(pub, method="sample", n_classes=50, seed=4).ok


def test_adult_l5_audit_and_attack(adult_l5):
    df, pub = adult_l5
    rep = audit(pub, df, attack=True, n_targets=5000, n_classes=100, seed=7)
    assert rep.conforms, rep.failures
    # honest about what (5,...,5)-diversity does not cover: sex and salary-class
    # (d = 2, l clipped to 1) are published in the clear, and the Bayesian
    # adversary beats 1/l and its prior on age, education, occupation
    risky = {(r["check"], r["attribute"]) for r in rep.checks.to_dict("records")
             if r["status"] == "risk"}
    assert {("clear", "sex"), ("clear", "salary-class")} <= risky
    assert {("attack", "age"), ("attack", "education"), ("attack", "occupation")} <= risky
    assert rep.verdict == "RISKS FOUND" and "RISKS FOUND" in rep.to_text()
    s = rep.attack.summary.set_index("attribute")
    v = rep.attack.victims
    for name, r in s.iterrows():
        mine = v[v["attribute"] == name]
        assert r["victims"] == len(mine)
        # success is the empirical frequency of correct guesses
        assert r["success_measured"]
        assert r["success"] == pytest.approx((mine["guess"] == mine["truth"]).mean(), abs=0)
        assert r["conf_mean"] == pytest.approx(mine["confidence"].mean())
        assert r["conf_median"] <= r["conf_q90"] <= r["conf_q99"] <= r["conf_max"] <= 1.0
        # a Bayes adversary with the true prior is calibrated
        assert abs(r["conf_mean"] - r["success"]) < 0.03
        # the bound of a diversity model is 1/l; confidence is never below it
        # (a maximum over l candidates) ...
        assert r["model_bound"] == pytest.approx(1.0 / pub.params[name].l)
        assert mine["confidence"].min() >= r["model_bound"] - 1e-12
        # a risk exactly when success beats the bound and the prior alone
        assert r["risk"] == (r["success"] > r["model_bound"] + r["margin"]
                             and r["success"] > r["prior_only"] + r["margin"])
    # ... and with Adult's skewed marginals it goes far above it
    assert s.loc["native-country", "conf_median"] > 0.9 > 4 * s.loc["native-country", "model_bound"]
    assert s.loc["native-country", "success"] > 0.9
    # the frequency adversary in the expanded table stays within 1/l (Theorem 2)
    cls = rep.classes.set_index("attribute")
    for n in pub.names:
        assert cls.loc[n, "max_true_share"] <= 1.0 / pub.params[n].l + 1e-12
    text = rep.to_text()
    assert "attack" in text and "native-country" in text


def test_attack_options(adult_l5):
    df, pub = adult_l5
    a = attack(pub, df, known=["age", "sex"], prior="conditional", n_targets=2000, seed=1)
    assert set(a.summary["attribute"]) == set(pub.names) - {"age", "sex"}
    assert (a.summary["victims"] == 2000).all()
    blind = attack(pub, known=2, n_targets=1000, seed=1)          # reconstructed prior
    assert blind.settings["prior_source"] == "reconstructed"
    # without the truth, success is the adversary's mean confidence (an estimate)
    assert not blind.summary["success_measured"].any()
    assert np.allclose(blind.summary["success"], blind.summary["conf_mean"])
    with pytest.raises(ValueError, match="known"):
        attack(pub, df, known=["nope"])
    with pytest.raises(ValueError, match="prior"):
        attack(pub, df, prior="oracle")
    with pytest.raises(ValueError, match="original"):
        attack(pub, prior="conditional")


def test_the_attack_on_one_sensitive_attribute_runs_by_default(tmp_path, capsys):
    """`anonset audit --attack` on a release with one sensitive attribute
    (semantic diversity, or one sensitive column) failed: the default
    --known 1 asked the adversary to know the only attribute it attacks.
    The default is one known attribute, none where there is only one; an
    explicit number that cannot hold is still refused."""
    from anonset.cli import main
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"id": np.arange(300), "job": rng.choice(list("abcde"), 300),
                       "sex": rng.choice(["f", "m"], 300)})
    pub = anonset.publish(df, anonset.Diversity(2), identifiers=["id"], sensitive=["job"],
                          exact=["sex"])
    a = attack(pub, df, n_targets=200, seed=1)
    assert a.settings["known"] == 0 and list(a.summary["attribute"]) == ["job"]
    with pytest.raises(ValueError, match=r"known: got 1; expected .* an int in \[0, 0\]"):
        attack(pub, df, known=1)
    pub.to_parquet(tmp_path / "p.parquet")
    df.to_csv(tmp_path / "o.csv", index=False)
    for extra in ([], ["--chunk-rows", "100"]):
        rc = main(["audit", str(tmp_path / "p.parquet"), "--original", str(tmp_path / "o.csv"),
                   "--attack", "--targets", "200", *extra])
        out = capsys.readouterr()
        assert rc in (0, 1), out.err
        assert "knows 0 of its attributes" in out.out, out.out
    assert main(["audit", str(tmp_path / "p.parquet"), "--attack", "--known", "1"]) == 2
    assert "--known: got 1" in capsys.readouterr().err
    # without --attack the verdict says that the attack was not run (the
    # report, which runs it, could say RISKS FOUND of a release audit PASSED)
    main(["audit", str(tmp_path / "p.parquet"), "--original", str(tmp_path / "o.csv")])
    head = capsys.readouterr().out.split("\n\n")[0]
    assert "not run: the attack simulation (`audit(..., attack=True)` in Python, " \
        "`--attack` on the command line)" in head, head


def test_attack_plot(adult_l5, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    df, pub = adult_l5
    rep = audit(pub, df, attack=True, n_targets=500, n_classes=10, seed=0)
    fig = rep.plot(tmp_path / "attack.png")
    assert (tmp_path / "attack.png").stat().st_size > 0
    import matplotlib.pyplot as plt
    plt.close(fig)
    with pytest.raises(ValueError, match="attack=True"):
        audit(pub).plot()


def test_the_attack_legend_names_the_columns_shown(adult_l5):
    """The legend under the attack table explained a `bound` column the
    table does not print (its text is a sentence): each attribute's bound
    now has a line of its own, and the legend names only what is shown."""
    df, pub = adult_l5
    rep = audit(pub, df, attack=True, n_targets=300, n_classes=10, seed=0)
    text = rep.to_text()
    table, legend = text.split("\ncolumns:\n")
    header = next(ln for ln in table.splitlines() if ln.split()[:2] == ["attribute", "victims"])
    named = [ln.split()[0] for ln in legend.splitlines() if ln.startswith("  ")]
    assert named == header.split()
    for a, why in zip(rep.attack.summary["attribute"], rep.attack.summary["bound"]):
        assert f"  {a}: {why}" in table


def test_bad_arguments(tmp_path):
    df = _small()
    pub = anonset.publish(df, anonset.Diversity(2), _schema(df), seed=1, research_seed=True)
    with pytest.raises(ValueError, match="method"):
        check_diversity(pub, method="guess")
    with pytest.raises(ValueError, match="measure"):
        check_diversity(pub, measure="recursive")
    with pytest.raises(ValueError, match="n_classes"):
        check_diversity(pub, method="sample", n_classes=0)
    with pytest.raises(ValueError, match="rows"):
        audit(pub, df.iloc[:10])
    with pytest.raises(ValueError, match="SetTable"):
        audit(df)
    with pytest.raises(ValueError, match="expanded"):
        expand(pub, max_rows=10)
    # the samples' seed and size by name, before any work (a text seed was
    # NumPy's TypeError, n_classes=10**12 a MemoryError of 7.3 TiB), in
    # memory, on a file and in the attack alone
    path = tmp_path / "pub.parquet"
    pub.to_parquet(path)
    for kw, needle in ((dict(seed="x"), "^seed: got text \\(not printed: it may be key "
                                        "material\\); expected None or an integer >= 0"),
                       (dict(seed=-1), "^seed: got a negative integer"),
                       (dict(seed=2.5), "^seed: got 2.5"),
                       (dict(n_classes=10 ** 12),
                        "^n_classes: got 1,000,000,000,000; expected an integer from 1 to ")):
        for call in (lambda: audit(pub, df, **kw), lambda: audit_file(path, df, **kw),
                     lambda: check_diversity(pub, method="sample", **kw)):
            with pytest.raises(anonset.InputError, match=needle):
                call()
    with pytest.raises(anonset.InputError, match="^seed: got text"):
        attack(pub, df, seed="x")
    assert audit(pub, df, seed=np.random.default_rng(3), n_classes=5).conforms
    with pytest.raises(anonset.InputError, match="^n_threads: got 100000; expected an integer "
                                                 "from 1 to 4,096"):
        anonset.publish(df, anonset.Diversity(2), _schema(df), n_threads=100_000)


def test_a_wide_release_reads_in_lines_of_bounded_width():
    """150 exact columns and 12 sensitive ones with inferred domains: the
    warning that names the exact columns names the first few and how many
    more; the 12 'domain was inferred' warnings are one line; no line of the
    check table is as wide as the 150 names (to_string ignores
    display.max_colwidth)."""
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({**{f"q{i}": rng.integers(0, 4, n) for i in range(150)},
                       **{f"s{i}": rng.integers(0, 5, n) for i in range(12)}})
    sens = [f"s{i}" for i in range(12)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity(2), sensitive=sens,
                              exact=[f"q{i}" for i in range(150)])
        rep = audit(pub, df)
    text = rep.to_text()
    assert max(len(line) for line in text.splitlines()) < 400
    warn = [line for line in text.splitlines() if line.startswith("  WARN")]
    assert len(warn) == 2
    inferred = next(w for w in warn if "domain was inferred" in w)
    assert inferred.split("WARN", 1)[1].strip().startswith(
        "s0, s1, s2, s3, s4, s5, s6, s7 and 4 more: the domain was inferred")
    repeat = next(w for w in warn if "combination no other row has" in w)
    assert "q0, q1, q2, q3, q4, q5, q6, q7 and 142 more: " in repeat
    # the checks themselves keep every name and every attribute's own row
    assert (rep.checks["check"] == "domain").sum() >= 12
    row = rep.checks[rep.checks["check"] == "repeat"].iloc[0]
    assert row["attribute"].split(", ") == [f"q{i}" for i in range(150)]


def test_one_row_that_singles_itself_out_does_not_read_as_zero_percent():
    """One row of 3,000 held an age no other row had: the warning said
    "0.0% of the rows hold a combination no other row has", a warning about
    nothing to the eye.  It says "under 0.1%"; the value keeps the share."""
    rng = np.random.default_rng(2)
    n = 3000
    df = pd.DataFrame({"age": np.r_[rng.integers(20, 60, n - 1), 99],
                       "job": rng.integers(0, 5, n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = audit(anonset.publish(df, anonset.Diversity(2), sensitive=["job"],
                                    exact=["age"]), df)
    row = rep.checks[rep.checks["check"] == "repeat"].iloc[0]
    assert row["status"] == "warn" and 0 < row["value"] < 0.0005 * 2
    assert "age: under 0.1% of the rows hold a combination" in row["message"]
    assert "0.0%" not in rep.to_text()


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.1, 0.2, 0.3]))
def test_the_audit_verifies_closeness_that_algorithm_1_proved_with_its_bound(seed, t):
    """On a domain too wide to enumerate, Algorithm 1 takes p from its proven
    (refined) bound; the audit's worst case used only the coarse bound and
    left such releases 'unverified' (0.36 > t = 0.2 on 320 ordered values).
    It now proves them: every one passes, with the worst EMD <= t."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(280, 360))
    vals = rng.lognormal(6.5, float(rng.uniform(0.3, 1.0)), 5000)
    codes = np.minimum(np.searchsorted(np.quantile(vals, np.linspace(0, 1, d + 1)[1:-1]), vals),
                       d - 1)
    df = pd.DataFrame({"inc": codes})
    pub = anonset.publish(df, anonset.Closeness(t), sensitive=["inc"], ordinal=["inc"],
                          domains={"inc": list(range(d))}, seed=seed, research_seed=True)
    row = audit(pub, df).checks.query("check == 'closeness'").iloc[0]
    assert row.status == "pass", row.message
    assert float(row.value) <= t + 1e-9


@pytest.mark.parametrize("d", [1, 5, 63, 64, 65, 130])
def test_lazy_membership_matches_the_dense_one(d):
    # the audit reads a wide domain's membership a column or a class at a
    # time from the bitmasks (a 30,000 x 60,000 release took 1.8 GB a pass
    # and 31 s; 8 s now): every view equals the dense matrix's
    from anonset.audit.masks import MaskMembership, bits
    rng = np.random.default_rng(d)
    n, words = 257, (d + 63) // 64
    mask = rng.integers(0, 2 ** 63, size=(n, words), dtype=np.uint64) * np.uint64(2) \
        + rng.integers(0, 2, size=(n, words), dtype=np.uint64)
    if d % 64:                          # no bit at or beyond d
        mask[:, -1] &= np.uint64((1 << (d % 64)) - 1)
    dense, lazy = bits(mask, d), MaskMembership(mask, d)
    assert lazy.shape == dense.shape
    for v in range(d):
        assert np.array_equal(lazy[:, v], dense[:, v])
    rows = rng.choice(n, size=40, replace=False)
    assert np.array_equal(lazy[rows], dense[rows])
    assert np.array_equal(lazy.column_sums(rows), dense[rows].sum(axis=0))
    r, v = lazy.nonzero()
    rr, vv = np.nonzero(dense)
    assert np.array_equal(r, rr) and np.array_equal(v, vv)
    assert np.array_equal(lazy.row_sizes(), dense.sum(axis=1))


def test_the_attack_takes_a_wide_domain_a_block_of_victims_at_a_time(adult_l5, tmp_path,
                                                                    monkeypatch):
    """The adversary's dense posteriors (victims x d) are built a block of
    victims at a time (10,000 victims over 60,000 values held 4.8 GB a
    matrix): blocks of a few victims give the same guesses, confidences and
    shifts as one block, with the marginal and the conditional prior, in
    memory and on a file."""
    import importlib
    attack_module = importlib.import_module("anonset.audit.attack")
    df, pub = adult_l5
    path = tmp_path / "pub.parquet"
    pub.to_parquet(path)
    kw = dict(n_targets=700, seed=3)
    runs = []
    for cells in (attack_module.ADVERSARY_BLOCK_CELLS, 97):
        monkeypatch.setattr(attack_module, "ADVERSARY_BLOCK_CELLS", cells)
        runs.append((attack(pub, df, known=1, **kw),
                     attack(pub, df, known=["age"], prior="conditional", **kw),
                     audit_file(path, df, attack=True, n_classes=20, **kw).attack))
    for one, blocked in zip(*runs):
        pd.testing.assert_frame_equal(one.victims, blocked.victims)
        pd.testing.assert_frame_equal(one.summary, blocked.summary)


def test_a_reordered_original_is_named_as_a_possible_cause():
    """An original re-sorted after publishing FAILED the row-by-row check
    with 'sets miss their true value', blaming the sets (H26): a failed row
    now says the original may be in another order, and aligned=False
    checks it per value."""
    rng = np.random.default_rng(8)
    n = 2000
    df = pd.DataFrame({"a": rng.choice(list("pqrs"), n), "b": rng.choice(list("wxyz"), n)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"],
                          domains={"a": list("pqrs"), "b": list("wxyz")}, allow_clear=["a", "b"])
    assert anonset.audit(pub, df).ok
    moved = df.sort_values("a").reset_index(drop=True)
    rep = anonset.audit(pub, moved)
    failed = rep.checks.query("check == 'inclusion' and status == 'fail'")
    assert len(failed) == 2
    assert all("audit with aligned=False (--no-aligned)" in m for m in failed["message"])
    assert anonset.audit(pub, moved, aligned=False).ok


def test_rows_taken_from_a_release_in_memory_are_audited_against_its_input():
    """pub.take(rows) kept each row's input position, and the audit then
    asked for an original of the subset's size and indexed it with the
    whole input's positions: every audit of a subset failed with an
    IndexError, aligned=False too (H78).  It now lines the whole input up
    with the subset, or checks the subset's rows in any order per value."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"a": rng.choice(list("pqrs"), n), "sex": rng.choice(list("fm"), n)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], exact=["sex"],
                          domains={"a": list("pqrs")}, allow_clear=["a"])
    women = pub.take(pub.to_pandas()["sex"] == "f")
    first = women.take(slice(0, 50))              # a subset of a subset
    for sub in (women, first):
        assert sub.source_n == n
        assert anonset.audit(sub, df).ok
        rows = df.iloc[np.sort(sub.source_rows)].reset_index(drop=True)
        assert anonset.audit(sub, rows, aligned=False).ok
        with pytest.raises(anonset.InputError,
                           match=rf"original: column 'a': has {sub.n_rows} rows, the published "
                                 rf"table {sub.n_rows} taken from an input of {n} rows; "
                                 r"expected .*aligned=False"):
            anonset.audit(sub, rows)
    # a tampered subset still fails row by row
    bad = women.take(np.arange(women.n_rows)[::-1])
    bad.source_rows = women.source_rows
    assert not anonset.audit(bad, df).ok
    with pytest.raises(anonset.InputError, match="aligned: got 'no'; expected True or False"):
        anonset.audit(pub, df, aligned="no")


def test_rows_taken_from_a_release_read_back_know_no_input_rows(tmp_path):
    """A shuffled release read from a file knows no input row of its rows:
    take() lined the whole input up with them by file position, and a
    correct release FAILED (H79).  Its subset is audited per value."""
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame({"a": rng.choice(list("pqrs"), n), "sex": rng.choice(list("fm"), n)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], exact=["sex"],
                          domains={"a": list("pqrs")}, allow_clear=["a"])
    pub.to_parquet(tmp_path / "p.parquet")
    back = anonset.read_parquet(tmp_path / "p.parquet")
    assert anonset.audit(back, df).ok
    sub = back.take(slice(0, 100))
    assert sub.source_rows is None and sub.source_n is None
    with pytest.raises(anonset.InputError, match="has 300 rows, the published table 100; "):
        anonset.audit(sub, df)
    rows = df.iloc[np.sort(pub.source_rows[:100])].reset_index(drop=True)
    assert anonset.audit(sub, rows, aligned=False).ok


def test_clear_check_at_l_equal_d_without_the_original_gives_no_figure():
    """Without the original, a column published at l = d (every set the
    whole domain) was reported as "25.0% of the rows, against 25.0% by the
    most common value alone": the reconstruction's uniform start, read as
    a distribution (the true most common value holds 28.3 %).  The sets
    say nothing of the column, and the check says so; with the original,
    the true share is given."""
    df = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity(4), _schema(df), seed=2, research_seed=True)
    assert pub.params["b"].eta == pub.schema["b"].d == 4

    def message(rep):
        f = rep.to_frame()
        return f.loc[(f["check"] == "clear") & (f["attribute"] == "b"), "message"].item()
    alone = message(audit(pub))
    assert alone == ("b: not published in the clear (every set is the whole domain: the sets "
                     "carry no information about the column, and no estimate of its "
                     "distribution is possible from them)"), alone
    assert "most common" in message(audit(pub, df))
    top = df["b"].value_counts(normalize=True).max()
    assert f"against {top:.1%} by the most common value alone" in message(audit(pub, df))
