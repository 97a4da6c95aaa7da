"""The honest audit (issue 13 item 7): two verdicts, "conforms to the
declared model" and "risks found", and PASSED only without either problem.

Every risk of the contract is built here from a SetTable with the metadata
keys the engine writes (info['key'], 'row_order', 'clear', 'roles',
'missing', 'rng', 'anonset') and checked to be reported; the LDP epsilon is
checked against the brute-force maximum ratio over every set, and against
the sampler itself."""
import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings, strategies as st

import anonset
from anonset.audit import audit, set_epsilon, epsilon_table
from anonset.audit.attack import model_bound
from anonset.audit.declared import secrets_in
from anonset.audit.ldp import semantic_epsilon
from anonset.audit.stats import ValueSample, hash_values
from anonset.emd import Ground
from anonset.randomized.params import AttributeParams, quantize_p
from anonset.randomized.settable import SetTable, masks_from_codes
from anonset.schema import Attribute, Schema

DOM = ("a", "b", "c", "d", "e")


def release(n=400, *, eta=3, p=1.0, l=3, other=None, seed=0, model=None, **info):
    """A published table of one sensitive attribute (honest sets of size eta
    holding the true value when p = 1), with the engine's metadata."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(DOM), n)
    rows = []
    for t in truth:
        rest = rng.permutation([v for v in range(len(DOM)) if v != t])[:eta - 1]
        rows.append(sorted([int(t), *rest]))
    attrs = [Attribute("job", "sensitive", domain=DOM)]
    if other is not None:
        attrs += [Attribute(c, "other") for c in other]
    par = AttributeParams("job", p, eta, len(DOM), l=l)
    meta = {"key": "os", "row_order": "shuffled", "clear": [], "rng": "chacha20",
            "roles": {a.name: a.role for a in attrs}, "missing": {"policy": "error"},
            "anonset": anonset.__version__}
    meta.update(info)
    # the rows the metadata says are shuffled are (in the original's order
    # the audit sees them line up with it, H104)
    order = np.random.default_rng(seed + 1).permutation(n) \
        if meta["row_order"] == "shuffled" else np.arange(n)
    mask = masks_from_codes(np.concatenate([rows[i] for i in order]),
                            np.arange(0, n * eta + 1, eta), len(DOM))
    table = SetTable(Schema(tuple(attrs)), {"job": mask}, {"job": par},
                     model or anonset.Diversity(l).to_dict(),
                     pd.DataFrame(other).iloc[order].reset_index(drop=True)
                     if other is not None else None, meta)
    original = pd.DataFrame({"job": [DOM[t] for t in truth], **(other or {})})
    return table, original


def statuses(rep, check):
    f = rep.checks
    return dict(zip(f.loc[f["check"] == check, "attribute"], f.loc[f["check"] == check, "status"]))


# ------------------------------------------------------------- verdicts
def test_a_clean_release_is_passed_and_says_so():
    table, df = release()
    for rep in (audit(table), audit(table, df)):
        assert rep.conforms and not rep.risks and rep.ok and rep.verdict == "PASSED"
        text = rep.to_text()
        assert "PASSED" in text and "conforms to the declared model: yes" in text
        assert "risks found: none" in text


def test_unique_per_row_passthrough_is_a_risk():
    n = 400
    ids = {"ssn": [f"{i:09d}" for i in range(n)], "region": list("nsew") * (n // 4)}
    table, df = release(n, other=ids)
    rep = audit(table)                        # the published table alone shows it
    assert rep.conforms and not rep.ok and rep.verdict == "RISKS FOUND"
    assert statuses(rep, "identifier") == {"ssn": "risk", "region": "pass"}
    assert any("ssn" in m and "identifier" in m for m in rep.risks)
    assert "RISKS FOUND" in rep.to_text()


def test_a_recode_of_a_sensitive_column_is_a_risk_with_the_original():
    table, df = release(600)
    code = {v: i * 10 for i, v in enumerate(DOM)}
    rng = np.random.default_rng(1)
    other = {"jobcode": df["job"].map(code).to_numpy(),         # one-to-one recode
             "noise": rng.integers(0, 5, len(df))}              # unrelated
    table, df = release(600, other=other)
    assert audit(table).ok                    # invisible without the original
    rep = audit(table, df)
    st_ = statuses(rep, "recode")
    assert st_ == {"jobcode -> job": "risk", "noise -> job": "pass"}
    recode = rep.checks[(rep.checks["check"] == "recode")].set_index("attribute")["value"]
    assert recode["jobcode -> job"] == 1.0 and abs(recode["noise -> job"]) < 0.1


def test_a_recode_is_found_right_after_publishing_in_memory():
    """audit(publish(df), df): the original's codes were lined up with the
    shuffled published rows, its pass-through cells were not, so each code
    was paired with another row's value and a one-to-one recode scored
    lambda ~0 (passed)."""
    import warnings
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"job": rng.choice(DOM, 800)})
    df["jobcode"] = df["job"].map({v: i * 10 for i, v in enumerate(DOM)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", anonset.PassThroughWarning)
        pub = anonset.publish(df, anonset.Diversity(3), sensitive=["job"], other=["jobcode"],
                              domains={"job": DOM}, allow_recode=["jobcode"])
    assert pub.info["row_order"] == "shuffled"
    rep = audit(pub, df)
    recode = rep.checks[rep.checks["check"] == "recode"].set_index("attribute")
    assert recode.loc["jobcode -> job", "status"] == "risk"
    assert recode.loc["jobcode -> job", "value"] == 1.0


def test_near_recode_with_a_few_errors_is_still_flagged():
    table, df = release(1000)
    job = df["job"].to_numpy().copy()
    job[::50] = "a"                            # 2 % miscoded
    table, df = release(1000, other={"jobcode": job})
    assert statuses(audit(table, df), "recode") == {"jobcode -> job": "risk"}


@pytest.mark.parametrize("mode,status", [("os", "pass"), ("persistent", "pass"), ("seed", "warn"),
                                         ("research-seed", "risk")])
def test_key_modes(mode, status):
    # (a persistent release records its name-keyed streams; one without that
    # record predates them and warns: tests/test_safe_defaults.py)
    table, _ = release(key=mode, **({"streams": "name"} if mode == "persistent" else {}))
    rep = audit(table)
    assert statuses(rep, "key") == {"-": status}
    assert rep.conforms                                   # a key mode is not key material
    assert rep.ok == (status != "risk")


def test_older_files_without_key_mode_or_row_order():
    table, _ = release()
    old = SetTable(table.schema, {"job": np.array(table.mask("job"))}, table.params, table.model,
                   None, {"rng": "chacha20", "seeded": True})
    rep = audit(old)
    assert statuses(rep, "key") == {"-": "risk"} and statuses(rep, "row_order") == {"-": "risk"}
    assert any("row order unknown" in m for m in rep.risks)
    fresh = SetTable(table.schema, {"job": np.array(table.mask("job"))}, table.params,
                     table.model, None, {"rng": "chacha20", "seeded": False})
    assert statuses(audit(fresh), "key") == {"-": "pass"}


def test_kept_input_order_is_a_risk():
    table, _ = release(row_order="input")
    rep = audit(table)
    assert statuses(rep, "row_order") == {"-": "risk"} and not rep.ok and rep.conforms


def test_clear_attributes_are_risks_declared_or_not():
    # eta = 1, p = 1: the set is the true value, although nothing says so
    table, df = release(eta=1, l=1)
    rep = audit(table, df)
    assert statuses(rep, "clear") == {"job": "risk"} and not rep.ok
    assert any("published in the clear" in m and "did not name" in m for m in rep.risks)
    # declared with allow_clear: still named
    table, df = release(eta=1, l=1, clear=["job"])
    rep = audit(table, df)
    assert statuses(rep, "clear") == {"job": "risk"}
    assert any("as the user allowed" in m for m in rep.risks)
    # and its epsilon is infinite
    assert math.isinf(rep.epsilon.set_index("attribute").loc["job", "epsilon"])


def test_an_identifier_column_that_is_published_is_a_risk():
    table, _ = release(other={"name": ["x"] * 200 + ["y"] * 200})
    info = dict(table.info, roles={"job": "sensitive", "name": "identifier"})
    leaky = SetTable(table.schema, {"job": np.array(table.mask("job"))}, table.params,
                     table.model, table.other, info)
    assert statuses(audit(leaky), "roles").get("name") == "risk"


def test_metadata_keys_that_are_not_key_material():
    assert secrets_in({"info": {"key": "research-seed"}}) == []
    assert secrets_in({"params": {"seed": {"p": 1.0}}, "info": {"roles": {"token": "other"}}}) == []
    assert secrets_in({"info": {"key": "d1f3a8c04e9b27f65a0c3e81b7d9f246"}}) == ["info.key"]


def test_attack_above_the_model_bound_is_a_risk():
    # a skewed attribute under 2-diversity: the adversary beats 1/2 and its prior
    n = 5000
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"s": rng.choice(list("wxyz"), n, p=[0.7, 0.1, 0.1, 0.1]),
                       "u": rng.choice(list("pqrs"), n)})
    schema = Schema.infer(df, sensitive=["s", "u"], domains={"s": list("wxyz"), "u": list("pqrs")})
    pub = anonset.publish(df, anonset.Diversity(2), schema, seed=4, research_seed=True,
                          keep_order=True)
    table = SetTable(pub.schema, {n_: np.array(pub.mask(n_)) for n_ in pub.names}, pub.params,
                     pub.model, None, {"key": "os", "row_order": "input"})
    rep = audit(table, df, attack=True, n_targets=4000, seed=0)
    s = rep.attack.summary.set_index("attribute")
    assert s.loc["s", "risk"] and s.loc["s", "success"] > 0.75 > s.loc["s", "model_bound"]
    assert not s.loc["u", "risk"]                        # uniform: success ~ 1/l
    assert statuses(rep, "attack") == {"s": "risk", "u": "pass"}
    assert rep.conforms and not rep.ok


@given(st.lists(st.integers(1, 20), min_size=3, max_size=6), st.floats(0.0, 0.3),
       st.sampled_from(["equal", "ordered"]))
@settings(max_examples=40, deadline=None)
def test_closeness_bound_holds_for_every_posterior(counts, t, kind):
    """max A + t/delta bounds max posterior whenever EMD(A, posterior) <= t."""
    A = np.array(counts, float) / sum(counts)
    d = A.size
    g = Ground.equal(d) if kind == "equal" else Ground.ordered(d)
    bound, _ = model_bound(AttributeParams("s", 0.5, 1, d, t=t), A, g)
    from anonset.emd import emd_batch
    rng = np.random.default_rng(len(counts))
    B = rng.dirichlet(np.ones(d), size=400)
    close = emd_batch(B, A, g) <= t
    assert (B[close].max(axis=1) <= bound + 1e-12).all()


# --------------------------------------------------------------- epsilon
def _brute_epsilon(p, eta, d):
    """max over sets S and values v, w of P(S|v) / P(S|w), by enumerating the
    mechanism's branches (no closed form)."""
    sets = list(itertools.combinations(range(d), eta))
    P = np.zeros((d, len(sets)))
    index = {s: i for i, s in enumerate(sets)}
    for v in range(d):
        others = [x for x in range(d) if x != v]
        heads = list(itertools.combinations(others, eta - 1))
        for rest in heads:
            P[v, index[tuple(sorted((v, *rest)))]] += p / len(heads)
        for s in sets:
            P[v, index[s]] += (1 - p) / len(sets)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(P[:, None, :] > 0, P[:, None, :] / P[None, :, :], 1.0)
    return float(np.log(ratio.max()))


@given(st.integers(1, 6).flatmap(lambda d: st.tuples(st.just(d), st.integers(1, d))),
       st.floats(0.0, 1.0))
@settings(max_examples=120, deadline=None)
def test_epsilon_is_the_brute_force_maximum_ratio(de, p):
    d, eta = de
    mine = set_epsilon(p, eta, d)
    ref = _brute_epsilon(p, eta, d)
    if math.isinf(ref):
        assert math.isinf(mine)
    else:
        assert mine == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_epsilon_cases_in_words():
    assert set_epsilon(1.0, 2, 5) == math.inf                  # p = 1 is not DP
    assert set_epsilon(1.0, 5, 5) == 0.0 and set_epsilon(0.0, 2, 5) == 0.0
    assert set_epsilon(0.5, 1, 2) == pytest.approx(math.log(3))  # randomized response
    table, _ = release(p=0.5, eta=2, l=None, model=anonset.Closeness(0.3).to_dict())
    eps = epsilon_table(table).set_index("attribute")
    assert eps.loc["job", "epsilon"] == pytest.approx(math.log1p(0.5 * 5 / (0.5 * 2)))
    assert eps.loc["record", "epsilon"] == eps.loc["job", "epsilon"]
    rep = audit(table)
    text = rep.to_text()
    assert "local differential privacy" in text
    # the record's row has no p, eta or d: shown as '-', not as NaN
    assert "NaN" not in text and re.search(r"record +all sets of a record +- +- +- ", text), text
    table, _ = release(p=1.0, eta=3)
    assert "not differentially private" in epsilon_table(table).loc[0, "note"]


def test_epsilon_formula_is_the_samplers_law():
    """The set frequencies the C sampler draws match P(S|v) of the formula."""
    from anonset.io.keys import make_key
    from anonset.randomized.publish import sample_sets
    d, eta, p = 4, 2, quantize_p(0.5)
    par = AttributeParams("s", p, eta, d)
    n = 120_000
    masks = sample_sets({"s": np.zeros(n, dtype=np.int32)}, {"s": par}, {"s": 0},
                        make_key(b"epsilon-law-test-0123456789", research_seed=False))["s"][:, 0]
    sets = list(itertools.combinations(range(d), eta))
    for s in sets:
        m = sum(1 << v for v in s)
        want = (p * (0 in s) / math.comb(d - 1, eta - 1) + (1 - p) / math.comb(d, eta))
        got = np.count_nonzero(masks == m) / n
        assert abs(got - want) < 5 * math.sqrt(want * (1 - want) / n)
    # so the largest ratio is e^epsilon
    hi = p / math.comb(d - 1, eta - 1) + (1 - p) / math.comb(d, eta)
    assert math.log(hi / ((1 - p) / math.comb(d, eta))) == pytest.approx(set_epsilon(p, eta, d))


def test_semantic_epsilon():
    from anonset.semantic import SemanticDistance, semantic_publish
    eps, why = semantic_epsilon(SemanticDistance.ordered(6), 2, 3)
    assert math.isinf(eps) and "always in its set" in why
    eps, why = semantic_epsilon(SemanticDistance.ordered(4), 2, 3)   # only {0, 3} fits
    assert eps == 0.0
    df = pd.DataFrame({"q": list("xyxyxy"), "s": [0, 1, 2, 3, 4, 5]})
    pub = semantic_publish(df, "s", 2, 2, qids=["q"], domain=list(range(6)), seed=1,
                           research_seed=True)
    rep = audit(pub)
    assert rep.conforms, rep.failures
    assert statuses(rep, "semantic") == {"s": "pass"}
    assert math.isinf(rep.epsilon.set_index("attribute").loc["s", "epsilon"])


# ------------------------------------------------------ distinct sampling
def _loo_oracle(x, s):
    """Leave-one-out majority prediction of s from x, one row at a time."""
    x, s = list(x), list(s)
    mode_all = pd.Series(s).value_counts()
    mode_all = min(v for v in mode_all.index if mode_all[v] == mode_all.max())
    credit = 0.0
    for i in range(len(x)):
        others = [s[k] for k in range(len(x)) if k != i and x[k] == x[i]]
        if not others:
            credit += s[i] == mode_all
            continue
        c = pd.Series(others).value_counts()
        top = [v for v in c.index if c[v] == c.max()]
        if s[i] in top:                     # a tie counts half
            credit += 1.0 if len(top) == 1 else 0.5
    acc = credit / len(x)
    prior = pd.Series(s).value_counts().max() / len(x)
    return acc, prior


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), min_size=2, max_size=40))
@settings(max_examples=150, deadline=None)
def test_leave_one_out_determination_matches_oracle(pairs):
    x = pd.Series([p[0] for p in pairs])
    s = np.array([p[1] for p in pairs])
    vs = ValueSample(None)
    vs.add(hash_values(x), s)
    lam, acc, prior = vs.determination()
    ref_acc, ref_prior = _loo_oracle(x, s)
    assert prior == pytest.approx(ref_prior)
    assert acc == pytest.approx(ref_acc)
    assert lam == pytest.approx(0.0 if ref_prior == 1 else (ref_acc - ref_prior) / (1 - ref_prior))


def _given_away_oracle(x, s, alpha=1e-6):
    """Share of the rows whose value gives their sub-value away, value by
    value: the value's most common sub-value (the smallest at a tie) beats
    its overall share by lambda >= 0.9, and Chernoff's bound on the chance of
    that much agreement is below alpha."""
    df = pd.DataFrame({"x": x, "s": s})
    pi = df["s"].value_counts() / len(df)
    held, tails = 0, []
    for _, grp in df.groupby("x"):
        c = grp["s"].value_counts()
        top = int(c.max())
        sv = min(k for k in c.index if c[k] == top)
        conf, p, n = top / len(grp), float(pi[sv]), len(grp)
        lam = 0.0 if p == 1 else (conf - p) / (1 - p)
        kl = conf * math.log(conf / p) + ((1 - conf) * math.log((1 - conf) / (1 - p))
                                          if conf < 1 else 0.0)
        if p < 0.9 and lam >= 0.9 and n * kl >= -math.log(alpha):
            held += n
            tails.append((top, n, p))
    return held / len(df), tails


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), min_size=1, max_size=120),
       st.tuples(st.integers(0, 8), st.integers(0, 3)), st.integers(0, 60))
@settings(max_examples=150, deadline=None)
@example(pairs=[(0, 0), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1)], block=(0, 0), reps=53)
def test_given_away_matches_oracle(pairs, block, reps):
    """A value whose rows all share a sensitive value (a block of repeated
    pairs) beside random rows: the sampled measure equals the value-by-value
    oracle (lambda within the value >= 0.9 against a sensitive value held by
    under 90 % of the rows overall), and every value it counts is one whose
    agreement has an exact binomial tail below 1e-6 under the overall
    distribution."""
    from scipy import stats as sst
    pairs = pairs + [block] * reps
    x = pd.Series([p[0] for p in pairs])
    s = np.array([p[1] for p in pairs])
    vs = ValueSample(None)
    vs.add(hash_values(x), s)
    share, groups = vs.given_away()
    ref, tails = _given_away_oracle(x, s)
    assert share == pytest.approx(ref) and groups == len(tails)
    for top, n, p in tails:
        # (at the bound itself, 0.1^6, scipy's tail rounds to 1.0000000000000004e-06)
        assert sst.binom.sf(top - 1, n, p) <= 1e-6 * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_given_away_ignores_chance_agreement(seed):
    """A column unrelated to a skewed sensitive column (85 % one value), with
    many small values where all rows agreeing by chance is likely: nothing
    counts as given away.  A value that does give it away (2 % of the rows,
    all holding the rare value) is counted."""
    rng = np.random.default_rng(seed)
    n = 200_000
    s = (rng.random(n) < 0.15).astype(np.int64)
    x = rng.integers(0, 20_000, n)                      # ~10 rows a value
    vs = ValueSample(None)
    vs.add(hash_values(pd.Series(x)), s)
    assert vs.given_away() == (0.0, 0)
    x[: n // 50] = -1
    s[: n // 50] = 1
    vs = ValueSample(None)
    vs.add(hash_values(pd.Series(x)), s)
    share, groups = vs.given_away()
    assert groups == 1 and share == pytest.approx(0.02, abs=2e-4)
    assert vs.determination()[0] < 0.9
    # a value whose 2,000 rows all hold what 91 % of all rows hold tells
    # little more than the prior: not counted (CPS1988: full-time work)
    s = (rng.random(n) < 0.09).astype(np.int64)
    s[: n // 100] = 0
    x[: n // 100] = -2
    vs = ValueSample(None)
    vs.add(hash_values(pd.Series(x)), s)
    assert vs.given_away() == (0.0, 0)


@given(st.lists(st.integers(0, 300), min_size=1, max_size=400), st.integers(1, 40),
       st.integers(1, 7))
@settings(max_examples=80, deadline=None)
def test_distinct_sample_is_the_same_in_any_chunks(values, budget, parts):
    h = hash_values(pd.Series(values))
    whole = ValueSample(budget)
    whole.add(h)
    pieces = ValueSample(budget)
    for chunk in np.array_split(h, parts):
        pieces.add(chunk)
    merged = ValueSample(budget)
    for chunk in np.array_split(h, parts):
        one = ValueSample(budget)
        one.add(chunk)
        merged.merge(one)
    for other in (pieces, merged):
        assert other.level == whole.level and other.rows == whole.rows == len(values)
        np.testing.assert_array_equal(other.keys, whole.keys)
        np.testing.assert_array_equal(other.counts, whole.counts)
    assert len(whole.keys) <= budget
    exact = ValueSample(None)
    exact.add(h)
    # the sampled values keep every occurrence: their counts are exact
    tot = dict(zip(exact.keys, exact.counts))
    assert all(tot[k] == c for k, c in zip(whole.keys, whole.counts))


def test_distinct_sampling_estimates_the_singleton_share():
    rng = np.random.default_rng(5)
    vals = np.concatenate([np.arange(60_000), rng.integers(10**6, 10**6 + 2000, 40_000)])
    s = ValueSample(4096)
    s.add(hash_values(pd.Series(vals)))
    assert s.level > 0 and len(s.keys) <= 4096
    assert s.singleton_share() == pytest.approx(0.6, abs=0.05)


def test_an_attack_the_model_does_not_bound_is_a_warning_not_a_pass():
    """Under closeness with t / delta >= 1 the bound is 100%: the row said
    'passed' although the adversary nearly doubled the prior (ISLR's Wage,
    80.6% against 43.8%); it warns now, and says the bound promises nothing."""
    rng = np.random.default_rng(0)
    n = 3000
    x = rng.integers(0, 5, n)
    y = np.where(rng.random(n) < 0.9, x, rng.integers(0, 5, n))
    df = pd.DataFrame({"x": x, "y": y})
    pub = anonset.publish(df, anonset.Closeness(0.5), sensitive=["x", "y"], ordinal=["x", "y"],
                          allow_clear=["x", "y"],        # nearly in the clear: named
                          domains={"x": list(range(5)), "y": list(range(5))},
                          seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    rep = anonset.audit(pub, df, attack=True, known=1, n_targets=1000, seed=1)
    rows = rep.checks[rep.checks["check"] == "attack"].set_index("attribute")
    for a in ("x", "y"):
        assert rows.loc[a, "expected"] == 1.0
        assert rows.loc[a, "status"] == "warn", rows.loc[a, "message"]
        assert "a bound of 100% promises nothing for this attribute" in rows.loc[a, "message"]
        # and names the t that would bound it: delta (1 - max share), delta =
        # 1/4 here, rounded down (a t it names bounds)
        need = 0.25 * (1.0 - df[a].value_counts(normalize=True).max())
        said = float(re.search(r"below 100 % at t < ([0-9.e-]+)", rows.loc[a, "message"])[1])
        assert need - 1e-4 <= said <= need


def test_the_t_that_would_bound_a_guess_is_rounded_down():
    """H21: 0.1236 was printed as t < 0.124, which still bounds nothing;
    with one value every row's, no t does."""
    from anonset.audit.attack import t_below
    assert t_below(1.0, 0.8764) == "below 100 % at t < 0.1236"
    assert t_below(1.0, 0.87645) == "below 100 % at t < 0.1235"
    assert t_below(1.0, 1.0) == "no t bounds it: one value is every row's"
    assert t_below(0.001, 0.98761) == "below 100 % at t < 1.23e-05"      # 1.239e-05 (H25)
    assert t_below(0.25, 0.5) == "below 100 % at t < 0.125"               # exact: kept
    # an exact four-decimal value is itself, not one step below (H27: 0.7 said 0.6999)
    assert all(float(t_below(k / 1e4, 0.0).rsplit("< ", 1)[1]) == round(k / 1e4, 4)
               for k in range(1, 10_000))
    for delta, top in ((0.001, 0.99995), (0.25, 0.99968), (1 / 3, 0.7), (0.01, 0.123456)):
        need = delta * (1 - top)
        said = float(t_below(delta, top).rsplit("< ", 1)[1])
        assert said <= need and said > need * 0.99, (delta, top, said, need)
