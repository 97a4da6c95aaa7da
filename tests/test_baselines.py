"""The papers' baselines (anonset.partition.baselines): each guarantee as a
hypothesis property, the kernels against simple oracles, the input and
output conventions, and the count-query evaluation of paper 004."""
import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from anonset.partition import baselines as B
from anonset.partition.baselines import _baselines, queries as Q
from anonset.validate import InputError

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tables(draw, min_rows=6, max_rows=80):
    """A small table with 1-3 QIDs and an l-eligible sensitive column; l."""
    n = draw(st.integers(min_rows, max_rows))
    q = draw(st.integers(1, 3))
    d_s = draw(st.integers(2, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    cols = {f"q{a}": rng.integers(0, draw(st.integers(1, 6)), n) for a in range(q)}
    s = rng.integers(0, d_s, n)
    l_max = B.eligible_l(s.astype(np.int32), d_s)
    l = draw(st.integers(1, max(1, min(l_max, 5))))
    cols["s"] = np.array([f"v{v}" for v in s])
    return pd.DataFrame(cols), [f"q{a}" for a in range(q)], l


def _clear(l):
    """At l = 1 a group may be one row: named, to test the algorithm there."""
    return ["s"] if l == 1 else []


def _groups_distinct(rel):
    """Every group's rows hold distinct sensitive values (Anatomy's groups)."""
    return int(rel.ghist.max()) <= 1


# ------------------------------------------------------------- guarantees
@SETTINGS
@given(tables())
def test_anatomy_every_group_l_diverse(t):
    df, qids, l = t
    # (a small random table's QIDs may predict s by chance: named, so the
    # recode check, tested in test_safe_defaults, lets the groups be tested)
    rel = B.anatomy(df, qids=qids, sensitive="s", l=l, seed=7, research_seed=True,
                    allow_recode=qids, allow_clear=_clear(l))
    chk = rel.check()
    assert chk["ok"], chk["problems"]
    sizes = rel.ghist.sum(axis=1)
    assert sizes.min() >= l and sizes.sum() - l * sizes.size < l  # < l rows left over
    assert _groups_distinct(rel)
    # QIT: the QIDs of every row, exactly; ST counts sum to the rows
    assert len(rel.table) == len(df) and rel.st["count"].sum() == len(df)
    assert sorted(map(tuple, rel.table[qids].to_numpy())) == sorted(map(tuple, df[qids].to_numpy()))


@SETTINGS
@given(tables())
def test_mondrian_groups_l_diverse_and_strict(t):
    df, qids, l = t
    rel = B.mondrian(df, qids=qids, sensitive="s", l=l, seed=7, research_seed=True,
                     allow_clear=_clear(l))
    chk = rel.check()
    assert chk["ok"], chk["problems"]
    fl = B.checks.frequency_l(rel.ghist)
    assert fl.min() >= l
    # strict multidimensional: the groups' boxes never overlap
    for g, h in itertools.combinations(range(rel.n_groups), 2):
        apart = (rel.ghi[g] < rel.glo[h]) | (rel.ghi[h] < rel.glo[g])
        assert apart.any()


@SETTINGS
@given(tables())
def test_tp_groups_l_diverse_exact_or_suppressed(t):
    df, qids, l = t
    rel = B.tp(df, qids=qids, sensitive="s", l=l, seed=7, research_seed=True,
               allow_clear=_clear(l))
    chk = rel.check()
    assert chk["ok"], chk["problems"]
    for a, c in enumerate(qids):
        d = len(rel.domains[c])
        # suppression model: a QID is kept (one value) or '*' (whole domain)
        kept = rel.glo[:, a] == rel.ghi[:, a]
        starred = (rel.glo[:, a] == 0) & (rel.ghi[:, a] == d - 1)
        assert (kept | starred).all()
    assert rel.info["rows_in_exact_groups"] + (rel.group >= rel.info["exact_groups"]).sum() \
        == len(df)


@settings(max_examples=12, deadline=None)
@given(st.integers(20, 120), st.integers(2, 4), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_rating_buckets_l_diverse_and_marginal_exact(n, q, l, seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"a{j}": rng.integers(0, 8, n) for j in range(q)})
    try:
        rel = B.rating(df, attributes=list(df.columns), l=l, seed=seed, research_seed=True)
    except InputError as e:                      # not l-eligible: refused, naming l
        assert e.param == "l"
        return
    chk = rel.check()
    assert chk["ok"], chk["problems"]
    for a in df.columns:                         # one attribute: the spread is exact
        truth = np.bincount(df[a].map({v: i for i, v in enumerate(rel.domains[a])}),
                            minlength=len(rel.domains[a]))
        np.testing.assert_allclose(rel.crosstab([a]).counts, truth, atol=1e-9)
    ct = rel.crosstab(list(df.columns[:2]))
    assert ct.total == pytest.approx(n)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 60), st.integers(1, 90), st.integers(0, 2**32 - 1))
def test_rating_attribute_table_and_masks_match_oracle(n, d, seed):
    """The one-sort AT and masks against the plain reading: distinct (BID,
    value) rows sorted by pandas, each BID's mask the OR of its values' bits
    (domains over 64 values included, in an order that is not sorted)."""
    from anonset.partition.baselines.rating import _release_pairs
    rng = np.random.default_rng(seed)
    dom = tuple(f"v{k:03d}" for k in rng.permutation(d))
    c = rng.integers(0, d, n)
    b = rng.integers(0, max(1, n // 3), n)
    b = np.unique(b, return_inverse=True)[1].astype(np.int64)    # buckets 0..nb-1
    nb = int(b.max()) + 1
    bid = rng.permutation(nb).astype(np.int64)
    at, bm = _release_pairs(b, c, bid, dom, "x")
    pair = np.unique(b * d + c)
    want = pd.DataFrame({"BID": bid[pair // d], "x": np.asarray(dom, dtype=object)[pair % d]}
                        ).sort_values(["BID", "x"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(at, want)
    oracle = np.zeros((nb, (d + 63) // 64), dtype=np.uint64)
    for bi, ci in zip(bid[b], c):
        oracle[bi, ci // 64] |= np.uint64(1) << np.uint64(ci % 64)
    np.testing.assert_array_equal(bm, oracle)


# -------------------------------------------------------------- kernels
def _greedy_group_count(counts, l):
    """Oracle: Anatomy's loop on the counts alone (ties do not matter)."""
    c = sorted((x for x in counts if x), reverse=True)
    groups = 0
    while len(c) >= l:
        c = sorted([x - 1 for x in c[:l]] + c[l:], reverse=True)
        c = [x for x in c if x]
        groups += 1
    return groups, sum(c)


@SETTINGS
@given(st.lists(st.integers(0, 5), min_size=1, max_size=60), st.integers(1, 4),
       st.integers(1, 3))
def test_diverse_groups_kernel_matches_oracle(codes, l, nseg):
    codes = np.array(codes, dtype=np.int32)
    cuts = np.sort(np.random.default_rng(len(codes)).integers(0, len(codes) + 1, nseg - 1))
    seg = np.concatenate([[0], cuts, [len(codes)]]).astype(np.int64)
    group, ng = _baselines.diverse_groups(seg, codes, 6, l)
    want_groups, want_left = 0, 0
    for s in range(nseg):
        g, left = _greedy_group_count(np.bincount(codes[seg[s]:seg[s + 1]], minlength=6), l)
        want_groups += g
        want_left += left
    assert ng == want_groups and int((group < 0).sum()) == want_left
    for g in range(ng):                           # l distinct values, one segment
        rows = np.flatnonzero(group == g)
        assert rows.size == l and np.unique(codes[rows]).size == l
        assert np.unique(np.searchsorted(seg, rows, side="right")).size == 1


def test_kernels_reject_codes_outside_the_domain():
    with pytest.raises(ValueError):
        _baselines.diverse_groups(np.array([0, 2], np.int64), np.array([0, 9], np.int32), 3, 2)
    with pytest.raises(ValueError):
        _baselines.mondrian(np.arange(4, dtype=np.int64), np.zeros((1, 4), np.int32),
                            np.array([1], np.int32), np.array([0, 0, 0, 0], np.int32), 1, 2)


# ----------------------------------------------------------- conventions
def _small():
    return pd.DataFrame({"age": [25, 29, 54, 78, 20, 55, 56, 59] * 3,
                         "sex": list("MMMMFFFF") * 3,
                         "disease": ["a", "b", "c", "d", "a", "b", "c", "d"] * 3})


def _toy_recode(method) -> dict:
    """The toy table's ages each go with one disease: Anatomy publishes the
    QIDs exactly, so it refuses them unless the recode is named."""
    return {"allow_recode": ["age"]} if method is B.anatomy else {}


@pytest.mark.parametrize("method", [B.anatomy, B.mondrian, B.tp])
def test_every_column_needs_a_role(method):
    df = _small().assign(ssn=range(24))
    with pytest.raises(InputError, match="no role: 'ssn'"):
        method(df, qids=["age", "sex"], sensitive="disease", l=2, seed=1, research_seed=True)
    rel = method(df, qids=["age", "sex"], sensitive="disease", l=2, drop=["ssn"], seed=1,
                 research_seed=True, **_toy_recode(method))
    assert "ssn" not in rel.table.columns


def test_rating_publishes_no_other_column_so_it_warns_of_none():
    """Rating leaves its `other` columns out of its tables, yet it measured
    them and warned that a serial there was "published unchanged"; it
    measures nothing of them now.  The baselines that publish them refuse
    one that singles rows out unless named."""
    import warnings
    df = pd.DataFrame({"job": list("abcdabcdab") * 5, "city": list("xyzwxyzwvv") * 5,
                       "serial": np.arange(50) * 7 + 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rel = B.rating(df, attributes=["job", "city"], l=2, other=["serial"], seed=3,
                       research_seed=True)
    assert rel.info["pass_through_risks"] == []
    assert "serial" not in rel.idt.columns
    assert all("serial" not in t.columns for t in rel.at.values())
    with pytest.raises(InputError, match="column 'serial': is a pass-through column: 100.0%"):
        B.anatomy(df, qids=["city"], sensitive="job", l=2, other=["serial"], seed=1,
                  research_seed=True, allow_recode=["city"])   # x, y, z, w give the job


@pytest.mark.parametrize("method", [B.anatomy, B.mondrian, B.tp])
def test_short_seed_needs_research_flag_and_order_is_keyed(method):
    df = _small()
    with pytest.raises(InputError, match="128 bits"):
        method(df, qids=["age", "sex"], sensitive="disease", l=2, seed=1)
    kw = dict(qids=["age", "sex"], sensitive="disease", l=2, research_seed=True,
              **_toy_recode(method))
    a, b, c = (method(df, seed=s, **kw).table for s in (1, 1, 2))
    pd.testing.assert_frame_equal(a, b)            # a pure function of the key
    assert not a.equals(c)
    # rows do not come out in input order, unless asked (and then it is recorded)
    assert not (a["age"].astype(str).to_numpy() == df["age"].astype(str).to_numpy()).all()
    kept = method(df, seed=1, keep_order=True, **kw)
    assert kept.info["row_order"] == "input" and kept.info["key"] == "research-seed"
    col = "age" if method is B.anatomy else "disease"     # a column published exactly
    assert (kept.table[col].astype(str).to_numpy() == df[col].astype(str).to_numpy()).all()


@pytest.mark.parametrize("method", [B.anatomy, B.mondrian, B.tp])
def test_not_l_eligible_is_refused(method):
    df = _small().assign(disease=["a"] * 20 + ["b"] * 4)
    with pytest.raises(InputError) as e:
        method(df, qids=["age"], sensitive="disease", l=2, drop=["sex"], seed=1,
               research_seed=True)
    assert e.value.param == "l" and e.value.column == "disease"


def test_rating_refuses_or_clips_non_eligible_attribute():
    df = pd.DataFrame({"sex": ["m"] * 30 + ["f"] * 10, "job": list("abcd") * 10})
    with pytest.raises(InputError) as e:
        B.rating(df, attributes=["sex", "job"], l=2, seed=1, research_seed=True)
    assert e.value.column == "sex"
    # clipped to l = 1, every bucket of sex is one row: in the clear unless named
    with pytest.raises(InputError, match=r"^l: column 'sex': would publish sex \(l = 1, after "
                                         r"clip_eligible\) in the clear: .*; expected l >= 2, "
                                         r"or the risk named: allow_clear=\['sex'\]$"):
        B.rating(df, attributes=["sex", "job"], l=2, clip_eligible=True, seed=1,
                 research_seed=True)
    with pytest.warns(UserWarning, match=r"l = 2 for 'sex' is not 2-eligible; using l = 1 "
                                         r"as requested by clip_eligible"):
        rel = B.rating(df, attributes=["sex", "job"], l=2, clip_eligible=True, seed=1,
                       research_seed=True, allow_clear=["sex"])
    assert rel.info["clipped"] == {"sex": {"asked": 2, "used": 1, "by": "clip_eligible"}} \
        and rel.check()["ok"]
    # both lowerings: each said, the record names both (H58)
    three = pd.DataFrame({"t": ["a"] * 30 + ["b"] * 5 + ["c"] * 5, "job": list("abcd") * 10})
    with pytest.warns(UserWarning) as got:
        both = B.rating(three, attributes=["t", "job"], l={"t": 4, "job": 2}, clip_l=True,
                       clip_eligible=True, seed=1, research_seed=True, allow_clear=["t"])
    said = [str(w.message) for w in got]
    assert any("using l = 2 as requested by clip_l" in m for m in said)
    assert any("using l = 1 as requested by clip_eligible" in m for m in said)
    assert both.info["clipped"]["t"] == {"asked": 4, "used": 1, "by": "clip_l, clip_eligible"}
    # a column of one value is not sent to allow_clear (nothing to name)
    with pytest.raises(InputError, match=r"expected another column, or clip_eligible=True "
                                         r"\(it holds one value only"):
        B.rating(three.assign(one="x"), attributes=["one", "job"], l=2, seed=1, drop=["t"],
                 research_seed=True)
    assert rel.info["clear"] == ["sex"]


def test_anatomy_with_classes_is_l_e_diverse():
    rng = np.random.default_rng(3)
    vals = [f"v{i}" for i in range(8)]
    df = pd.DataFrame({"age": rng.integers(0, 5, 200), "s": rng.choice(vals, 200)})
    classes = {v: int(v[1]) // 2 for v in vals}           # 4 classes of 2 values
    rel = B.anatomy(df, qids=["age"], sensitive="s", l=3, classes=classes, seed=2,
                    research_seed=True)
    cls = np.array([classes[v] for v in rel.domains["s"]])
    for g in range(rel.n_groups):
        present = np.flatnonzero(rel.ghist[g])
        assert np.unique(cls[present]).size == present.size >= 3


# -------------------------------------------------------------- queries
def test_predicate_size_is_eq_12():
    assert Q.predicate_size(80, 3, 0.07) == int(np.ceil(80 * 0.07 ** 0.25))
    assert Q.predicate_size(2, 1, 0.01) == 1 and Q.predicate_size(5, 1, 1.0) == 5


@SETTINGS
@given(tables(min_rows=10), st.integers(0, 1000))
def test_query_answers(t, seed):
    df, qids, _ = t
    queries_ = None
    rel1 = B.anatomy(df, qids=qids, sensitive="s", l=1, seed=1, research_seed=True,
                     allow_recode=qids, allow_clear=["s"])
    dom = [len(rel1.domains[c]) for c in qids]
    d_s = len(rel1.domains["s"])
    queries_ = Q.random_queries(dom, d_s, 1, 0.3, 20, seed=seed)
    X, N = Q.answer_true(rel1.qcodes, rel1.scodes, queries_)
    # brute force
    for qu, x, n in zip(queries_, X, N):
        ok = np.ones(len(df), bool)
        for a, m in zip(qu.attrs, qu.members):
            ok &= m[rel1.qcodes[a]]
        assert n == ok.sum()
        assert x.tolist() == [(ok & (rel1.scodes == v)).sum() for v in np.flatnonzero(qu.s_members)]
    # l = 1: Anatomy groups are single rows, estimates are exact
    for est, x in zip(Q.answer_partition(rel1, queries_), X):
        np.testing.assert_allclose(est, x)
    # a generalization answers with the uniform assumption: whole-domain
    # predicates give the exact per-value counts
    relm = B.mondrian(df, qids=qids, sensitive="s", l=1, seed=1, research_seed=True,
                      allow_clear=["s"])
    full = [Q.CountQuery(qu.attrs, tuple(np.ones_like(m) for m in qu.members), qu.s_members)
            for qu in queries_]
    for est, x in zip(Q.answer_partition(relm, full), Q.answer_true(relm.qcodes, relm.scodes,
                                                                     full)[0]):
        np.testing.assert_allclose(est, x)
    assert Q.query_mse(X, X, N) == 0.0 and Q.query_mse(X, X, N, reading="count") == 0.0
    shifted = [x + 1 for x in X]
    ok = N > 0
    want = np.mean([1 / n ** 2 for n in N[ok]])
    assert Q.query_mse(X, shifted, N) == pytest.approx(want)
    assert Q.query_mse(X, shifted, N, reading="count") == pytest.approx(
        np.mean([(x.size / n) ** 2 for x, n in zip(X, N) if n > 0]))


def test_answer_sets_recovers_counts_at_l1():
    import anonset
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"s": rng.integers(0, 6, 500)})
    qc = rng.integers(0, 4, (1, 500)).astype(np.int32)
    pub = anonset.publish(df, anonset.Diversity(1), seed=3, research_seed=True, sensitive=["s"],
                          allow_clear=["s"], keep_order=True)
    queries_ = Q.random_queries([4], 6, 1, 0.5, 10, seed=1)
    sc = np.asarray(df["s"], dtype=np.int32)
    X, N = Q.answer_true(qc, sc, queries_)
    for est, x in zip(Q.answer_sets(pub, "s", qc, queries_), X):
        np.testing.assert_allclose(est, x, atol=1e-6)


def test_count_query_mse_grows_with_l_on_a_stand_in():
    """On a small OCC-3 stand-in every baseline's query error grows with l
    (larger groups: more mixing, wider boxes)."""
    from anonset.datasets import ipums_standin as I
    df = I.occ(3, n_rows=20_000, seed=1)
    qs = Q.random_queries([80, 2, 6], 50, 2, 0.1, 200, ordered=[True, False, False], seed=3)
    errs = {}
    for method in (B.anatomy, B.mondrian, B.tp):
        for l in (2, 10):
            rel = method(df, qids=list(I.QIDS[:3]), sensitive="Occupation", l=l, seed=2,
                         research_seed=True, domains=I.domains(df.columns))
            X, N = Q.answer_true(rel.qcodes, rel.scodes, qs)
            errs[method.__name__, l] = Q.query_mse(X, Q.answer_partition(rel, qs), N)
    for m in ("anatomy", "mondrian", "tp"):
        assert 0 < errs[m, 2] < errs[m, 10], errs


@SETTINGS
@given(tables(min_rows=20, max_rows=120), st.integers(1, 3), st.integers(0, 1000))
def test_point_cell_answers_equal_the_per_query_answers(t, l_try, seed):
    """The workload path (per-point tables, anonset.partition.baselines.cells)
    gives the per-query functions' answers: true counts, cell sizes and the
    Proposal's w exactly, the partitions' estimates up to summation order."""
    import anonset
    from anonset.partition.baselines import cells as C
    df, qids, l = t
    l = min(l, l_try)
    rels = [m(df, qids=qids, sensitive="s", l=l, seed=5, research_seed=True,
              allow_clear=_clear(l)) for m in (B.anatomy, B.mondrian, B.tp)]
    qc, sc = rels[0].qcodes, rels[0].scodes
    dom = [len(rels[0].domains[c]) for c in qids]
    d_s = len(rels[0].domains["s"])
    qs = Q.random_queries(dom, d_s, min(2, len(qids)), 0.3, 15, seed=seed)
    cells = C.PointCells(qc)
    assert cells.sizes.sum() == len(df) and cells.n_points == len(np.unique(qc.T, axis=0))
    X, N = Q.answer_true(qc, sc, qs)
    Xc, Nc = C.true_sums(cells, sc, d_s, qs)
    assert np.array_equal(N, Nc) and all(np.array_equal(a, b) for a, b in zip(X, Xc))
    for rel in rels:
        for a, b in zip(Q.answer_partition(rel, qs), C.partition_sums(rel, cells, qs)):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    # (the sets' w, not their risk: a draw of few rows holding some values
    # rarely is refused by the clear check, CI drew one, so it is named)
    pub = anonset.publish(df[["s"]], anonset.Diversity(min(2, d_s)), seed=3,
                          research_seed=True, sensitive=["s"], keep_order=True,
                          domains={"s": rels[0].domains["s"]}, allow_clear=["s"])
    sa = Q.SetAnswers(pub, "s")
    W = C.set_w(sa.members, sa.d, cells, qs)
    for qu, w in zip(qs, W):
        assert np.array_equal(w, sa.w(Q.match_rows(qc, qu)))


@pytest.mark.parametrize("method", ["anatomy", "mondrian", "tp", "rating"])
def test_one_persons_rows_are_refused_by_the_baselines_unless_named(method):
    """A partition's group of k rows may hold fewer than k people when one
    person has several rows (panel waves), and the groups holding one
    person's rows narrow down the person's values: rows that share an
    identifier's value are refused unless the column is named
    (``allow_shared_id``), which the metadata then records."""
    rng = np.random.default_rng(4)
    n = 240
    df = pd.DataFrame({"pid": np.arange(n) // 3, "age": rng.integers(20, 60, n),
                       "sex": rng.choice(["f", "m"], n), "s": rng.choice(list("abcdef"), n)})
    if method == "rating":
        def run(**kw):
            return B.rating(df, attributes=["age", "s"], l=2, identifiers=["pid"],
                            drop=["sex"], seed=7, research_seed=True, **kw)
    else:
        def run(**kw):
            return getattr(B, method)(df, qids=["age", "sex"], sensitive="s", l=2,
                                      identifiers=["pid"], seed=7, research_seed=True, **kw)
    with pytest.raises(InputError, match=r"^column 'pid': is an identifier whose values 240 rows "
                       r"share .*a group of k rows may then hold fewer than k people.*"
                       r"allow_shared_id=\['pid'\]$"):
        run()
    with pytest.raises(InputError, match="which is not an identifier column"):
        run(allow_shared_id=["age"])
    rel = run(allow_shared_id=["pid"])
    assert rel.info["shared_ids"] == {"pid": n} and rel.info["shared_ids_allowed"] == ["pid"]


def test_rating_l_per_attribute_is_checked_by_name():
    """An l per attribute that misses one was a KeyError naming it, one that
    names another column was ignored; both are refused by name."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), 60), "b": rng.choice(list("uvw"), 60)})
    for l, needle in (({"a": 2}, "l: gives no value for the attribute 'b'"),
                      ({"a": 2, "b": 2, "c": 2}, "l: names 'c', which is not an attribute"),
                      ({"a": 2, "b": "2"}, "l: column 'b': got '2'")):
        with pytest.raises(InputError, match=needle):
            B.rating(df, attributes=["a", "b"], l=l)
    assert B.rating(df, attributes=["a", "b"], l={"a": 2, "b": 2}, seed=5,
                    research_seed=True).check()["ok"]


def test_anatomy_refuses_exact_qids_that_read_together_give_the_sensitive_value():
    """H57: Anatomy publishes its QIDs exactly; x, y and z in 0..4 and
    s = (x + y + z) mod 5 were published (no two of them tell s, all three
    do), where publish refuses the same columns as exact QIDs."""
    rng = np.random.default_rng(0)
    n = 5_000
    x, y, z = (rng.integers(0, 5, n) for _ in range(3))
    df = pd.DataFrame({"x": x, "y": y, "z": z, "s": (x + y + z) % 5}).astype(str)
    kw = dict(qids=["x", "y", "z"], sensitive="s", l=3, seed=1, research_seed=True)
    with pytest.raises(InputError, match=r"^column 'x': read together with 'y', 'z', predicts "
                                         r"'s' for 100\.0% of the rows .* would publish 's' "
                                         r"nearly in the clear; expected one of them dropped, "
                                         r"or the QIDs generalized \(Mondrian, TP\), or the "
                                         r"risk named: allow_recode=\['x', 'y', 'z'\]$"):
        B.anatomy(df, **kw)
    rel = B.anatomy(df, **kw, allow_recode=["x", "y", "z"])      # named: recorded
    risk = rel.info["pass_through_risks"]
    assert [(r["column"], r["with"], r["sensitive"], r["allowed"]) for r in risk] == \
        [("x", ["y", "z"], "s", True)]
    # other QIDs beside make every tuple unique: the three are still read,
    # and only they are named (H58)
    wide = df.assign(age=rng.integers(18, 90, n).astype(str),
                     zip=rng.integers(0, 1000, n).astype(str))
    with pytest.raises(InputError, match=r"^column 'x': read together with 'y', 'z', .*"
                                         r"allow_recode=\['x', 'y', 'z'\]$"):
        B.anatomy(wide, **{**kw, "qids": ["age", "x", "y", "zip", "z"]})
    B.anatomy(wide, **{**kw, "qids": ["age", "x", "y", "zip", "z"]},
              allow_recode=["x", "y", "z"])
    # an unrelated s: published; the pair case is refused by the pair check
    B.anatomy(df.assign(s=rng.integers(0, 5, n).astype(str)), **kw)
    with pytest.raises(InputError, match="together with column 'y'"):
        B.anatomy(df.assign(s=((x + y) % 5).astype(str)), **kw)


def test_a_column_no_l_fits_is_not_told_to_take_l_1():
    """H57: 'expected l <= 1' sent the user to the l = 1 refusal."""
    df = pd.DataFrame({"q": list(range(8)) * 10, "s": ["a"] * 60 + ["b"] * 20})
    with pytest.raises(InputError, match=r"is not 2-eligible.*expected another sensitive "
                                         r"column or coarser values \(no l >= 2 fits it") as e:
        B.mondrian(df, qids=["q"], sensitive="s", l=2, seed=1, research_seed=True)
    assert "l <= 1" not in str(e.value)
    with pytest.raises(InputError, match=r"expected another column \(no l >= 2 fits it") as e:
        B.rating(df, attributes=["s", "q"], l=2, seed=1, research_seed=True)


def test_the_baselines_take_the_inputs_publish_takes():
    """H69: the baselines refused an Arrow (Polars, DuckDB) table as "got a
    Table; expected a pandas DataFrame", took a named index for row labels
    and read float32 0.7 as 0.699999988; they read input as publish does."""
    import pyarrow as pa
    rng = np.random.default_rng(3)
    n = 240
    df = pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.choice(list("abcd"), n),
                       "s": rng.choice(list("pqrstu"), n),
                       "w": ((np.arange(n) % 3) / 10 + 0.7).astype(np.float32)})
    roles = dict(qids=["age", "zip"], sensitive="s", l=2, seed=7, research_seed=True,
                 other=["w"])
    for method in (B.anatomy, B.mondrian, B.tp):
        ref = method(df, **roles)
        got = method(pa.Table.from_pandas(df), **roles)
        assert ref.table.equals(got.table), method.__name__
    m = B.mondrian(df, **roles)
    assert sorted(m.table["w"].astype(str).unique()) == ["0.7", "0.8", "0.9"]
    rel = B.rating(pa.Table.from_pandas(df[["zip", "s"]]), attributes=["zip", "s"], l=2, seed=3,
                   research_seed=True)
    assert rel.check()["ok"]
    # a named index is a column (never published unless named), as publish reads it
    with pytest.raises(InputError, match=r"names 'pid'.*not"):
        B.mondrian(df, **roles, identifiers=["pid"])
    indexed = df.set_index(pd.Index(rng.permutation(n) + 1000, name="pid"))
    assert "pid" not in B.mondrian(indexed, **roles, identifiers=["pid"]).table.columns


def test_a_categorical_declares_the_domain_of_every_baseline():
    """Mondrian, TP and Anatomy sorted a Categorical's values and dropped
    its unused categories: an ordered low < mid < high < top was cut into
    alphabetical ranges such as [high~low] (H84).  They read its categories
    as publish and Rating do."""
    from anonset.partition.baselines import anatomy, mondrian, tp
    rng = np.random.default_rng(3)
    n = 240
    order = ["low", "mid", "high", "top", "phd"]
    df = pd.DataFrame({"edu": pd.Categorical(rng.choice(order[:4], n), categories=order,
                                             ordered=True),
                       "age": rng.integers(20, 70, n),
                       "dis": rng.choice(list("abcdef"), n)})
    for method in (mondrian, tp, anatomy):
        rel = method(df, qids=["edu", "age"], sensitive="dis", l=3, seed=5, research_seed=True)
        assert list(rel.domains["edu"]) == order, method.__name__
        assert rel.check()["ok"]
    rel = mondrian(df, qids=["edu", "age"], sensitive="dis", l=3, seed=5, research_seed=True)
    for label in set(rel.table["edu"]):
        if label.startswith("["):
            lo, hi = label[1:-1].split("~")
            assert order.index(lo) < order.index(hi), label


def test_a_categoricals_missing_token_is_placed_and_kept_apart_as_publish_does():
    """With missing='category', the baselines sorted the token in with an
    unordered Categorical's values ('?' first, Mondrian cut '[?~high]'),
    where publish and Rating put it last; and Rating published a
    Categorical's real '?' answers and its missing cells as one value,
    which publish refuses (H85)."""
    import anonset
    from anonset.partition.baselines import anatomy, mondrian, rating, tp
    rng = np.random.default_rng(4)
    n = 300
    edu = pd.Series(pd.Categorical(rng.choice(["low", "mid", "high", "top"], n)))
    edu[:6] = None
    df = pd.DataFrame({"edu": edu, "age": rng.integers(20, 70, n),
                       "dis": rng.choice(list("abcdef"), n)})
    want = anonset.Schema.infer(df[["edu"]], sensitive=["edu"], missing="category")["edu"].domain
    assert want[-1] == "?"
    for method in (mondrian, tp, anatomy):
        rel = method(df, qids=["edu", "age"], sensitive="dis", l=3, seed=5, research_seed=True,
                     missing="category")
        assert tuple(rel.domains["edu"]) == tuple(want), method.__name__
    both = df.assign(edu=pd.Categorical(df["edu"].astype(object).where(
        np.arange(n) % 7 != 3, "?")))
    with pytest.raises(InputError, match="column 'edu': holds the value '\\?', which is the "
                                         "missing-value token, and has"):
        rating(both, attributes=["edu", "dis"], l=2, seed=5, research_seed=True,
               missing="category", other=["age"])


@pytest.mark.parametrize("cats", [[3, 1, 2], [True, False], [1.5, 2.5, 0.5]])
def test_a_categorical_of_numbers_or_booleans_with_missing_cells(cats):
    """Filled with the missing-value token, such a column is text: its
    declared domain was not, and every baseline refused '3' as undeclared
    (H87, a regression of H84's domain reading)."""
    from anonset.partition.baselines import anatomy, mondrian, tp
    rng = np.random.default_rng(6)
    n = 240
    edu = pd.Series(pd.Categorical(rng.choice(cats, n), categories=cats))
    edu[:5] = None
    df = pd.DataFrame({"edu": edu, "age": rng.integers(20, 70, n),
                       "dis": rng.choice(list("abcdef"), n)})
    import anonset
    dom = anonset.Schema.infer(df[["edu"]], sensitive=["edu"], missing="category")["edu"].domain
    want = tuple(str(v) for v in dom)
    assert want[-1] == "?" and len(want) == len(cats) + 1
    for method in (mondrian, tp, anatomy):
        rel = method(df, qids=["edu", "age"], sensitive="dis", l=3, seed=5, research_seed=True,
                     missing="category")
        assert tuple(rel.domains["edu"]) == want, method.__name__
