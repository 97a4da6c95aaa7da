"""(l, d)-semantic diversity (paper 001): publishing, selection probabilities,
estimators, eq. 11-12, the worked example, data sets and CLI."""
import argparse
import itertools
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset import semantic as S
from anonset.datasets import semantic as SD
from anonset.cli import semantic as _cli_semantic
from anonset.randomized import _semantic
from anonset.datasets import adult_hierarchy


# --------------------------------------------------------------- oracles
def brute_feasible(dm, l, d, t):
    F = dm.shape[0]
    others = [v for v in range(F) if v != t]
    for c in itertools.combinations(others, l - 1):
        s = (t,) + c
        if all(dm[a, b] >= d for a, b in itertools.combinations(s, 2)):
            return True
    return False


def can_extend(dm, R, l, d):
    F = dm.shape[0]
    rest = [v for v in range(F) if v not in R and all(dm[v, r] >= d for r in R)]
    need = l - len(R)
    for c in itertools.combinations(rest, need):
        if all(dm[a, b] >= d for a, b in itertools.combinations(c, 2)):
            return True
    return need == 0


def oracle_q_simple(dm, l, d):
    """The simple sampler's law by brute force: each dummy uniform over the
    values >= d from all chosen ones after which the set can be completed."""
    F = dm.shape[0]
    q = np.zeros((F, F))

    def walk(R, p):
        if len(R) == l:
            return
        cand = [c for c in range(F) if c not in R and all(dm[c, r] >= d for r in R)
                and can_extend(dm, R + [c], l, d)]
        for c in cand:
            q[R[0], c] += p / len(cand)
            walk(R + [c], p / len(cand))

    for t in range(F):
        if brute_feasible(dm, l, d, t):
            walk([t], 1.0)
    return q


def random_matrix(F, seed):
    g = np.random.default_rng(seed)
    m = g.integers(0, 5, size=(F, F)).astype(float)
    m = np.triu(m, 1)
    return m + m.T


# ------------------------------------------------------ the worked example
def test_table_9_gives_table_10():
    q = S.paper_selection_matrix(S.example_distance(), 2, 2)
    x = S.estimate_linear(S.TABLE_9, q)
    assert np.abs(x - S.TABLE_10).max() < 0.1
    np.testing.assert_allclose(x[0], [117.8, 52.5, 11.5, 20.5, 27.8], atol=0.1)
    # for l = 2 the sampler's exact law is eq. 2
    qe, info = S.selection_matrix(S.example_distance(), 2, 2)
    assert info["method"] == "exact"
    np.testing.assert_allclose(qe, q)


def test_eq19_mse():
    assert S.mse(S.TABLE_8, S.TABLE_10, 1000) == pytest.approx(8.06e-6, rel=2e-3)


def test_fig4_eq2_wrong_for_l3():
    """Sec. 5.3: F = 9, d = 2, l = 3, true $50K: eq. 2 says 1/3 for each of the
    six candidates; the simple sampler does not."""
    dist = S.SemanticDistance.ordered(9)
    q_paper = S.paper_selection_matrix(dist, 3, 2)
    q, _ = S.selection_matrix(dist, 3, 2, method="exact")
    np.testing.assert_allclose(q_paper[2, [0, 4, 5, 6, 7, 8]], 1 / 3)
    assert np.abs(q[2] - q_paper[2]).max() > 0.05
    np.testing.assert_allclose(q.sum(axis=1), 2.0)
    np.testing.assert_allclose(q, oracle_q_simple(dist.matrix, 3, 2), atol=1e-12)


# ---------------------------------------------------------------- distances
def test_tree_distance_education():
    h = adult_hierarchy("education")
    dist = S.SemanticDistance.tree(h)
    idx = {v: i for i, v in enumerate(h.leaves)}
    assert dist.matrix[idx["Doctorate"], idx["Masters"]] == 1
    assert dist.matrix[idx["Doctorate"], idx["Doctorate"]] == 0
    assert dist.matrix.max() == h.height
    np.testing.assert_array_equal(dist.matrix, dist.matrix.T)


def test_distance_validation():
    with pytest.raises(ValueError, match="symmetric"):
        S.SemanticDistance.from_matrix([[0, 1], [2, 0]])
    with pytest.raises(ValueError, match="increasing"):
        S.SemanticDistance.ordered([1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="equally spaced"):
        S.semantic_sets([0], S.SemanticDistance.ordered([0, 1, 5, 6, 20]), 2, 2, algorithm="duplicate")


def test_distance_errors_name_their_parameter_and_where():
    """SemanticDistance's refusals were bare ValueErrors ("distance matrix
    must be symmetric"); they are InputErrors naming the parameter and the
    first cell at fault, as every other refusal."""
    from anonset import InputError
    cases = [(lambda: S.SemanticDistance.from_matrix([[0, 1, 2], [1, 0, 1], [2, 3, 0]]),
              "matrix: distance matrix must be symmetric (row 2, column 3: 1, but row 3, column "
              "2: 3); expected dist(a, b) = dist(b, a)"),
             (lambda: S.SemanticDistance.from_matrix([[0, 1], [1, 2]]),
              "matrix: distance matrix must have a zero diagonal (row 2: 2)"),
             (lambda: S.SemanticDistance.from_matrix([["a"]]), "matrix: is not a matrix of numbers"),
             (lambda: S.SemanticDistance.ordered([1.0, 3.0, 2.0]),
              "values: are not strictly increasing (3 then 2 at positions 1 and 2)"),
             (lambda: S.semantic_sets([0], S.SemanticDistance.ordered([0, 1, 5]), 2, 2,
                                      algorithm="duplicate"),
              "algorithm: 'duplicate' (Alg. 3) needs equally spaced values")]
    for call, want in cases:
        with pytest.raises(InputError) as e:
            call()
        assert str(e.value).startswith(want), str(e.value)


def test_scaled_values_equal_index_distance():
    a = S.SemanticDistance.ordered(14)
    b = S.SemanticDistance.ordered(np.arange(14) * 10.0)
    np.testing.assert_array_equal(a.compat(2), b.compat(20))
    assert b.duplicate_radius(20) == a.duplicate_radius(2) == 1


# -------------------------------------------------------------- feasibility
@pytest.mark.parametrize("F,l,d", [(9, 3, 4), (10, 4, 3), (14, 3, 7), (7, 3, 3), (20, 5, 5)])
def test_feasibility_ordered_matches_bruteforce(F, l, d):
    dist = S.SemanticDistance.ordered(F)
    ok = S.feasible_values(dist, l, d)
    assert [bool(x) for x in ok] == [brute_feasible(dist.matrix, l, d, t) for t in range(F)]
    # linear A_max: value t has floor(t/d) + floor((F-1-t)/d) slots
    assert [bool(x) for x in ok] == [(t // d + (F - 1 - t) // d) >= l - 1 for t in range(F)]


@pytest.mark.parametrize("seed", range(4))
def test_feasibility_matrix_matches_bruteforce(seed):
    dm = random_matrix(9, seed)
    dist = S.SemanticDistance.from_matrix(dm)
    for l, d in [(3, 2), (4, 2), (3, 3)]:
        ok = S.feasible_values(dist, l, d)
        assert [bool(x) for x in ok] == [brute_feasible(dm, l, d, t) for t in range(9)]


def test_infeasible_raises_before_output(tmp_path):
    dist = S.SemanticDistance.ordered(14)
    with pytest.raises(ValueError, match="infeasible"):
        S.semantic_sets(np.arange(14), dist, 3, 7)
    # only values that occur matter: at (3, 6), 0 (0, 6, 12) and 13 can be
    # completed, 3 cannot (nothing 6 below it, only one slot above)
    ok = S.feasible_values(dist, 3, 6)
    assert ok[0] and ok[13] and ok[6] and not ok[3]
    S.semantic_sets([0, 13, 6], dist, 3, 6, seed=1, research_seed=True)
    with pytest.raises(ValueError, match="contains 3"):
        S.semantic_sets([0, 3], dist, 3, 6, seed=1, research_seed=True)


# ------------------------------------------------------------- publishing
@settings(max_examples=40, deadline=None)
@given(F=st.integers(3, 40), l=st.integers(2, 5), d=st.integers(1, 6), kind=st.sampled_from(
    ["ordered", "values", "matrix", "duplicate"]), seed=st.integers(0, 10**6))
def test_every_set_is_semantically_diverse(F, l, d, kind, seed):
    algo = "simple"
    if kind == "ordered":
        dist = S.SemanticDistance.ordered(F)
    elif kind == "duplicate":
        dist, algo = S.SemanticDistance.ordered(F), "duplicate"
        if 2 * (d - 1) + 1 > F:
            return
    elif kind == "values":
        dist = S.SemanticDistance.ordered(np.cumsum(np.random.default_rng(seed).uniform(0.2, 3, F)))
    else:
        dist = S.SemanticDistance.from_matrix(random_matrix(min(F, 14), seed))
    l = min(l, dist.F)
    ok = S.feasible_values(dist, l, d)
    codes = np.random.default_rng(seed).integers(0, dist.F, 500).astype(np.int32)
    if not ok[codes].all():
        with pytest.raises(ValueError, match="infeasible"):
            S.semantic_sets(codes, dist, l, d, algorithm=algo, seed=seed, research_seed=True)
        codes = codes[ok[codes]]
        if codes.size == 0:
            return
    m = S.semantic_sets(codes, dist, l, d, algorithm=algo, seed=seed, research_seed=True)
    assert S.is_diverse(m, dist, l, d).all()
    bits = (m[np.arange(codes.size), codes >> 6] >> (codes & 63).astype(np.uint64)) & np.uint64(1)
    assert bits.all()                                   # the true value is always in the set


def test_tree_sets_diverse_and_exact_q():
    h = adult_hierarchy("education")
    dist = S.SemanticDistance.tree(h)
    for l, d in [(2, 3), (3, 2), (4, 2)]:
        codes = np.tile(np.arange(16, dtype=np.int32), 200)
        ok = S.feasible_values(dist, l, d)
        m = S.semantic_sets(codes[ok[codes]], dist, l, d, seed=3, research_seed=True)
        assert S.is_diverse(m, dist, l, d).all()
    q, _ = S.selection_matrix(dist, 3, 2, method="exact")
    np.testing.assert_allclose(q, oracle_q_simple(dist.matrix, 3, 2), atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_exact_q_matches_oracle_matrix(seed):
    dist = S.SemanticDistance.from_matrix(random_matrix(8, seed))
    q, _ = S.selection_matrix(dist, 3, 2, method="exact")
    np.testing.assert_allclose(q, oracle_q_simple(dist.matrix, 3, 2), atol=1e-12)


def test_thread_and_partition_invariance():
    dist = S.SemanticDistance.ordered(14)
    codes = np.random.default_rng(1).integers(0, 14, 50_000).astype(np.int32)
    key = bytes(range(32))
    for algo in S.ALGORITHMS:
        a = S.semantic_sets(codes, dist, 3, 2, algorithm=algo, key=key, n_threads=1)
        b = S.semantic_sets(codes, dist, 3, 2, algorithm=algo, key=key, n_threads=2)
        c = np.concatenate([S.semantic_sets(codes[:12345], dist, 3, 2, algorithm=algo, key=key),
                            S.semantic_sets(codes[12345:], dist, 3, 2, algorithm=algo, key=key,
                                            row0=12345)])
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert not np.array_equal(S.semantic_sets(codes, dist, 3, 2, seed=1, research_seed=True),
                              S.semantic_sets(codes, dist, 3, 2, seed=2, research_seed=True))


def test_large_domain_multiword():
    dist = S.SemanticDistance.ordered(148)
    codes = np.random.default_rng(0).integers(0, 148, 5000).astype(np.int32)
    for algo in S.ALGORITHMS:
        m = S.semantic_sets(codes, dist, 4, 10, algorithm=algo, seed=0, research_seed=True)
        assert m.shape == (5000, 3)
        assert S.is_diverse(m, dist, 4, 10).all()


# ------------------------------------------- empirical law = computed law
@pytest.mark.parametrize("algo", S.ALGORITHMS)
def test_selection_frequencies_chi_square(algo):
    """10^6 draws in total: dummy frequencies match the exact q (chi-square)."""
    from scipy import stats
    dist = S.SemanticDistance.ordered(14)
    l, d = 3, 2
    q, info = S.selection_matrix(dist, l, d, algorithm=algo, method="exact")
    n_per = 1_000_000 // 4
    for t in (0, 3, 6, 13):
        m = S.semantic_sets(np.full(n_per, t, np.int32), dist, l, d, algorithm=algo, seed=t, research_seed=True)
        counts = S._unpack(m, 14).sum(axis=0).astype(float)
        counts[t] = 0
        support = q[t] > 0
        assert counts[~support].sum() == 0
        # each draw places l - 1 dummies; the multinomial over "which value" is
        # checked on the per-slot frequencies
        exp = q[t, support] * n_per
        chi2 = ((counts[support] - exp) ** 2 / exp).sum()
        # dummies of one record are dependent (without replacement): the chi2
        # statistic's scale is at most (l - 1); use a conservative threshold
        dof = support.sum() - 1
        assert chi2 < (l - 1) * stats.chi2.ppf(1 - 1e-4, dof), (t, chi2, dof)


def _chi2_against_exact(dist, l, d, algo, ts, n_per, seed=0):
    """Dummy frequencies of n_per draws per true value match the exact q."""
    from scipy import stats
    q, _ = S.selection_matrix(dist, l, d, algorithm=algo, method="exact")
    for t in ts:
        m = S.semantic_sets(np.full(n_per, t, np.int32), dist, l, d, algorithm=algo,
                            seed=seed + t, research_seed=True)
        assert S.is_diverse(m[:20000], dist, l, d).all()
        counts = S._unpack(m, dist.F).sum(axis=0).astype(float)
        counts[t] = 0
        support = q[t] > 0
        assert counts[~support].sum() == 0
        exp = q[t, support] * n_per
        chi2 = ((counts[support] - exp) ** 2 / exp).sum()
        dof = support.sum() - 1
        assert chi2 < (l - 1) * stats.chi2.ppf(1 - 1e-4, dof), (t, chi2, dof)


def test_one_draw_path_trees_bench_configuration():
    """F = 14, l = 3, d = 2 (the 10^7-record benchmark): every value draws its
    whole set with one bounded draw from its path tree."""
    dist = S.SemanticDistance.ordered(14)
    for algo in S.ALGORITHMS:
        N, nodes = _semantic.paths(*S._kernel_args(dist, 3, 2, algo))
        assert (N > 1).all() and (nodes <= 4096).all()
        if algo == "simple":      # N(t) is a multiple of the first step's candidate count
            assert (N % dist.compat(2).sum(axis=1) == 0).all()


def test_mixed_paths_law_and_purity():
    """A spec where some values use a path tree and others (tree too large, or
    N(t) >= 2^32) the step-by-step sampler: both follow the exact law, and a
    record's set does not depend on which other values occur, on threads, or
    on the partition into calls."""
    dist = S.SemanticDistance.ordered(24)
    l, d = 4, 3
    N, _ = _semantic.paths(*S._kernel_args(dist, l, d, "simple"))
    tree, step = np.flatnonzero(N > 0), np.flatnonzero(N == 0)
    assert tree.size and step.size and 4 in step and 10 in tree
    _chi2_against_exact(dist, l, d, "simple", (0, 2, 4, 10), 100_000, seed=11)
    codes = np.random.default_rng(5).integers(0, 24, 20_000).astype(np.int32)
    key = bytes(range(32))
    a = S.semantic_sets(codes, dist, l, d, key=key, n_threads=1)
    b = S.semantic_sets(codes, dist, l, d, key=key, n_threads=2)
    c = np.concatenate([S.semantic_sets(codes[:1037], dist, l, d, key=key),
                        S.semantic_sets(codes[1037:], dist, l, d, key=key, row0=1037)])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    for i in np.random.default_rng(6).choice(codes.size, 50, replace=False):
        one = S.semantic_sets(codes[i:i + 1], dist, l, d, key=key, row0=int(i))
        np.testing.assert_array_equal(one[0], a[i])
    assert S.is_diverse(a, dist, l, d).all()


def test_multiword_paths_law():
    """F = 148 (three words): path trees and step-by-step values, exact law.
    The value with the largest N(t) (~4.4e8) rejects ~8% of its first words,
    so the overflow words are exercised too."""
    dist = S.SemanticDistance.ordered(148)
    N, _ = _semantic.paths(*S._kernel_args(dist, 3, 60, "simple"))
    big = int(np.argmax(N))
    assert (2**32 % int(N[big])) / 2**32 > 0.05
    ts = (big, int(np.flatnonzero(N > 0)[0]), int(np.flatnonzero(N == 0)[0]))
    assert S.feasible_values(dist, 3, 60)[list(ts)].all()
    _chi2_against_exact(dist, 3, 60, "simple", ts, 100_000, seed=3)


def test_kernel_checks_codes_before_drawing():
    dist = S.SemanticDistance.ordered(14)
    for bad in ([0, 14], [-1, 3], [5, 2**31 - 1]):
        with pytest.raises(ValueError, match=r"codes must lie in \[0, 14\)"):
            S.semantic_sets(np.array(bad, dtype=np.int64), dist, 3, 2, seed=0, research_seed=True)
    with pytest.raises(ValueError, match="infeasible.*contains 3"):
        S.semantic_sets([0, 13, 3], dist, 3, 6, seed=0, research_seed=True)


def test_duplicate_window_counts():
    """Alg. 3: with F >= (l - 1)(2d - 1) + 1 the duplicate sampler's first two
    steps always see F - k(2d - 1) candidates (exact q rows: the first dummy
    is uniform over F - (2d - 1) values)."""
    dist = S.SemanticDistance.ordered(14)
    q, _ = S.selection_matrix(dist, 2, 3, algorithm="duplicate", method="exact")
    for t in range(14):
        row = q[t][q[t] > 0]
        np.testing.assert_allclose(row, 1 / (14 - 5))


def test_montecarlo_close_to_exact():
    dist = S.SemanticDistance.ordered(10)
    qe, _ = S.selection_matrix(dist, 3, 2, method="exact")
    qm, info = S.selection_matrix(dist, 3, 2, method="montecarlo", draws=20000, seed=1)
    assert info["method"] == "montecarlo"
    assert np.abs(qe - qm).max() < 0.02


# ---------------------------------------------------------------- estimators
def _small_data(n=3000, seed=0):
    ds = SD.income(n, seed=seed)
    return ds


def test_estimators_shapes_and_em_nonnegative():
    ds = _small_data()
    tab = S.semantic_publish(ds.frame, "income", 3, 2, qids=ds.qids, domain=ds.domain, seed=1,
                             research_seed=True, allow_clear=["income"])   # rare incomes
    truth = S.report_counts(ds.frame, "income", ds.qids, {**ds.qid_domains(), "income": ds.domain})
    res = {}
    for est in S.ESTIMATORS:
        ct = S.analyze(tab, list(ds.qids), estimator=est)
        assert ct.counts.shape == truth.shape
        np.testing.assert_allclose(ct.counts.sum(), len(ds.frame), rtol=1e-6)
        res[est] = S.mse(truth, ct.counts)
    assert (S.analyze(tab, ["age", "sex"], estimator="em").counts >= 0).all()
    assert res["linear"] < res["simple"] and res["em"] < res["simple"]


def _bias_run(algo, n_seeds, n=2000):
    ds = _small_data(n, seed=0)
    dist = ds.distance
    l, d = 3, 2
    q, _ = S.selection_matrix(dist, l, d, algorithm=algo)
    truth = np.bincount(ds.codes, minlength=14).astype(float)
    omega = np.array([S._unpack(S.semantic_sets(ds.codes, dist, l, d, algorithm=algo, seed=s, research_seed=True),
                                14).sum(axis=0) for s in range(n_seeds)], dtype=float)
    # one call per estimator: the seeds are the "QID cells" of a vectorized run
    return truth, {e: S.estimate(omega, e, l=l, q=q) for e in S.ESTIMATORS}


@pytest.mark.parametrize("algo", S.ALGORITHMS)
def test_bias_200_seeds(algo):
    """Linear estimator with the exact q: unbiased within 4 standard errors in
    every cell; EM never negative; eq. 20 biased."""
    truth, est = _bias_run(algo, 200)
    lin = est["linear"]
    se = lin.std(axis=0, ddof=1) / math.sqrt(lin.shape[0]) + 1e-9
    assert (np.abs(lin.mean(axis=0) - truth) < 4 * se + 1e-6).all()
    assert (est["em"] >= 0).all()
    assert np.abs(est["simple"].mean(axis=0) - truth).max() > 50


# ---------------------------------------------------- paper 000's sampler
def test_violation_bound_eq11():
    for F, l, d in [(14, 3, 2), (14, 4, 3), (20, 3, 5), (10, 2, 3)]:
        dist = S.SemanticDistance.ordered(F)
        exact = S.violation_probability(dist, l, d)
        assert exact.min() == pytest.approx(S.violation_bound(F, l, d))
        assert exact[0] == pytest.approx(S.violation_bound(F, l, d))
    assert S.database_violation_bound(14, 3, 2, 10) == pytest.approx(
        1 - (1 - S.violation_bound(14, 3, 2)) ** 10)


def test_violation_simulation_matches_exact():
    dist = S.SemanticDistance.ordered(14)
    codes = np.random.default_rng(0).integers(0, 14, 100_000)
    rate = S.simulate_violation(dist, 3, 3, codes, seed=1)
    exact = S.violation_probability(dist, 3, 3)[codes].mean()
    assert rate == pytest.approx(exact, abs=0.01)
    assert rate >= S.violation_bound(14, 3, 3) - 0.01


# ---------------------------------------------------------------- data sets
def test_datasets():
    inc = SD.income()
    assert len(inc.frame) == 100_000 and len(inc.domain) == 14
    # income depends on sex and age
    tab = pd.crosstab(inc.frame["sex"], inc.frame["income"])
    assert tab.loc["male", ">25M"] > tab.loc["female", ">25M"]
    edu = SD.adult_education()
    assert len(edu.domain) == 16 and edu.distance.kind == "tree"
    fw = SD.adult_fnlwgt()
    assert len(fw.domain) == 148 and fw.codes.max() == 147 and fw.codes.min() == 0


def test_table7_rows_and_settable_roundtrip(tmp_path):
    df = pd.DataFrame({"sex": ["F", "M", "F", "M"] * 5, "level": [1, 2, 3, 4, 5] * 4})
    tab = S.semantic_publish(df, "level", 2, 2, qids=["sex"], domain=[1, 2, 3, 4, 5], seed=3, research_seed=True)
    rows = S.semantic_rows(tab, seed=4, research_seed=True)
    assert len(rows) == 40 and list(rows.columns) == ["sex", "level"]
    assert rows.groupby("sex").size().to_dict() == {"F": 20, "M": 20}
    tab.to_parquet(tmp_path / "t.parquet")
    from anonset import read_parquet
    back = read_parquet(tmp_path / "t.parquet")
    assert back.equals(tab)
    ct = S.analyze(back, ["sex"], estimator="linear")
    assert ct.counts.shape == (2, 5)


# ---------------------------------------------------------------------- CLI
def _run(argv):
    from anonset import cli
    if argv[0] == "semantic-anonymize" and "--qids" not in argv:
        argv = [*argv, "--qids", "age,sex"]
    return cli.main(argv)


def test_cli_roundtrip_and_errors(tmp_path, capsys):
    ds = _small_data(500)
    src = tmp_path / "in.csv"
    ds.frame.to_csv(src, index=False)
    out = tmp_path / "out.parquet"
    dom = ",".join(ds.domain)
    assert _run(["semantic-anonymize", str(src), "-o", str(out), "--sensitive", "income",
                 "--l", "3", "--d", "2", "--domain", dom, "--rows", str(tmp_path / "rows.csv"),
                 "--seed", "5", "--research-seed"]) == 0
    assert len(pd.read_csv(tmp_path / "rows.csv")) == 1500
    assert _run(["semantic-analyze", str(out), "-o", str(tmp_path / "x.csv"),
                 "--estimator", "linear"]) == 0
    assert len(pd.read_csv(tmp_path / "x.csv")) == 6 * 2 * 14
    # without -o the table is printed, as `anonset reconstruct` prints it; a
    # .parquet name gets Parquet (it got CSV text); a name of no known
    # format is refused in one line, naming --format, with nothing written
    capsys.readouterr()
    assert _run(["semantic-analyze", str(out), "--estimator", "linear"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1].split() == ["age", "sex", "income", "count"] and len(printed) == 2 + 168
    assert _run(["semantic-analyze", str(out), "-o", str(tmp_path / "x.parquet"),
                 "--estimator", "linear"]) == 0
    assert pd.read_parquet(tmp_path / "x.parquet").equals(pd.read_csv(tmp_path / "x.csv"))
    # --qids '' is no QID: the marginal, as the API's qids=[] (it gave all, H116)
    assert _run(["semantic-analyze", str(out), "-o", str(tmp_path / "m.csv"), "--qids", "",
                 "--estimator", "linear"]) == 0
    marginal = pd.read_csv(tmp_path / "m.csv")
    api = S.analyze(anonset.read_parquet(out), [], estimator="linear").to_frame()
    assert list(marginal.columns) == ["income", "count"] and len(marginal) == 14
    assert np.allclose(marginal["count"], api["count"])
    capsys.readouterr()
    assert _run(["semantic-analyze", str(out), "-o", str(tmp_path / "x.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x.txt'" in err and "--format csv|parquet" in err
    assert not (tmp_path / "x.txt").exists()
    # a gzipped CSV release is read as CSV (it was read as Parquet: "magic
    # bytes not found"), and an input of another name takes --input-format
    # (the refusal named --format, which sets the output's)
    gz = tmp_path / "out.csv.gz"
    assert _run(["semantic-anonymize", str(src), "-o", str(gz), "--sensitive", "income",
                 "--l", "3", "--d", "2", "--domain", dom, "--seed", "5", "--research-seed"]) == 0
    capsys.readouterr()
    assert _run(["semantic-analyze", str(gz), "--estimator", "linear"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == printed[1:]     # the same key, sets
    dat = tmp_path / "in.dat"
    dat.write_bytes(src.read_bytes())
    assert _run(["semantic-anonymize", str(dat), "-o", str(tmp_path / "d.parquet"),
                 "--sensitive", "income", "--l", "3", "--d", "2", "--domain", dom]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "in.dat'" in err and "--input-format csv|parquet" in err
    assert _run(["semantic-anonymize", str(dat), "--input-format", "csv", "-o",
                 str(tmp_path / "d.parquet"), "--sensitive", "income", "--l", "3", "--d", "2",
                 "--domain", dom]) == 0
    (tmp_path / "d.bin").write_bytes((tmp_path / "d.parquet").read_bytes())
    assert _run(["semantic-analyze", str(tmp_path / "d.bin")]) == 2
    assert "--input-format csv|parquet" in capsys.readouterr().err
    assert _run(["semantic-analyze", str(tmp_path / "d.bin"), "--input-format", "parquet"]) == 0
    # infeasible: clean one-line error, nothing written
    bad = tmp_path / "bad.parquet"
    assert _run(["semantic-anonymize", str(src), "-o", str(bad), "--sensitive", "income",
                 "--l", "3", "--d", "7", "--domain", dom]) == 2
    err = capsys.readouterr().err
    assert "infeasible" in err and err.count("\n") == 1 and not bad.exists()
    # never overwrite the input
    assert _run(["semantic-anonymize", str(src), "-o", str(src), "--sensitive", "income",
                 "--l", "2", "--d", "1"]) == 2
    assert "input" in capsys.readouterr().err
    assert len(pd.read_csv(src)) == 500
    assert _run(["semantic-anonymize", str(src), "-o", str(bad), "--sensitive", "nope",
                 "--l", "2", "--d", "1"]) == 2
    assert "nope" in capsys.readouterr().err


def test_domains_read_off_the_data_are_marked_and_audited():
    # a semantic release whose domains came from the data passed the audit's
    # domain check silently (the anonymize path warns): they are now marked
    import anonset
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"sex": rng.choice(["f", "m"], 200), "level": rng.integers(1, 6, 200)})
    inferred = S.semantic_publish(df, "level", 2, 2, qids=["sex"], seed=3, research_seed=True)
    assert inferred.schema["level"].inferred and inferred.schema["sex"].inferred
    declared = S.semantic_publish(df, "level", 2, 2, qids=["sex"], domain=[1, 2, 3, 4, 5],
                                  seed=3, research_seed=True)
    assert not declared.schema["level"].inferred
    # an exact QID is published as it is: its domain shows nothing more
    for table, names in ((inferred, {"level"}), (declared, set())):
        c = anonset.audit(table).checks
        assert set(c[(c.check == "domain") & (c.status == "warn")].attribute) == names
        sex = c[(c.check == "domain") & (c.attribute == "sex")].iloc[0]
        assert sex.status == "pass" and sex.value == "inferred"


def test_text_without_an_order_is_refused():
    # the default semantic distance is ordered; over text read off the data
    # that order was the alphabetical one ('Graduate' beside 'High School')
    from anonset.validate import InputError
    df = pd.DataFrame({"edu": ["High School", "Bachelor", "Graduate", "Less Than High School"]
                       * 10})
    with pytest.raises(InputError, match=r"column 'edu'.*alphabetically"):
        S.semantic_publish(df, "edu", 2, 1, seed=3, research_seed=True)
    order = ["Less Than High School", "High School", "Bachelor", "Graduate"]
    t = S.semantic_publish(df, "edu", 2, 2, domain=order, seed=3, research_seed=True)
    assert t.schema["edu"].domain == tuple(order)
    for s in t.sets("edu"):                    # d = 2 in the declared order
        i, j = sorted(order.index(v) for v in s)
        assert j - i >= 2


def test_one_persons_rows_are_refused_unless_named():
    """semantic-anonymize has no persistent key: rows that share an
    identifier (one person's waves or visits) draw independent sets, so
    they are refused with the remedy this method has; named
    (``allow_shared_id``), they are counted in the metadata and the audit
    warns, saying the user allowed it."""
    import warnings
    import anonset
    from anonset.validate import InputError
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"pid": np.repeat(np.arange(60), 3), "level": rng.integers(1, 6, 180)})
    kw = dict(identifiers=["pid"], domain=[1, 2, 3, 4, 5], seed=3, research_seed=True)
    with pytest.raises(InputError, match=r"^column 'pid': is an identifier whose values 180 "
                       r"rows share .* each draws its sets independently.*expected one row "
                       r"per person \(this method has no persistent key\).*"
                       r"allow_shared_id=\['pid'\]$"):
        S.semantic_publish(df, "level", 2, 1.0, **kw)
    with pytest.raises(InputError, match="which is not an identifier column"):
        S.semantic_publish(df, "level", 2, 1.0, allow_shared_id=["level"], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.SharedIdWarning)
        t = S.semantic_publish(df, "level", 2, 1.0, allow_shared_id=["pid"], **kw)
        once = S.semantic_publish(df.drop_duplicates("pid"), "level", 2, 1.0, **kw)
    assert t.info["shared_ids"] == {"pid": 180} and t.info["shared_ids_allowed"] == ["pid"]
    c = anonset.audit(t).checks
    row = c[c.check == "shared_id"].iloc[0]
    assert row.status == "warn" and "no persistent key" in row.message
    assert row.message.endswith("(published as the user allowed: allow_shared_id)")
    assert once.info["shared_ids"] == {} and "shared_ids_allowed" not in once.info


def test_an_ordered_categorical_declares_the_semantic_domain(tmp_path, capsys):
    """An ordered pandas Categorical declares its domain and order for
    anonset.publish; semantic_publish refused it as text with no declared
    order (and read a Parquet file's ordered categorical the same way).  It
    is now the declared domain, in its order; an unordered text
    categorical is still refused."""
    import warnings
    from anonset.cli import main
    rng = np.random.default_rng(4)
    levels = ["under", "normal", "over", "obese"]
    df = pd.DataFrame({"id": np.arange(400), "town": rng.choice(list("xy"), 400),
                       "bmi": pd.Categorical(rng.choice(levels, 400), categories=levels,
                                             ordered=True)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # declared: no inferred-domain warning
        t = S.semantic_publish(df, "bmi", 2, 2, qids=["town"], identifiers=["id"])
    a = t.schema["bmi"]
    assert a.domain == tuple(levels) and not a.inferred
    for s in t.sets("bmi"):                        # pairwise 2 positions apart in that order
        i, j = sorted(levels.index(v) for v in s)
        assert j - i >= 2
    plain = df.assign(bmi=df["bmi"].cat.as_unordered())
    with pytest.raises(ValueError, match="no declared order"):
        S.semantic_publish(plain, "bmi", 2, 2, qids=["town"], identifiers=["id"])
    df.to_parquet(tmp_path / "in.parquet")
    assert main(["semantic-anonymize", str(tmp_path / "in.parquet"), "-o",
                 str(tmp_path / "out.parquet"), "--sensitive", "bmi", "--l", "2", "--d", "2",
                 "--qids", "town", "--identifier", "id"]) == 0
    assert "read off the data" not in capsys.readouterr().err


def test_an_inferred_domain_warning_names_lone_values_and_semantic_flags(capsys):
    """CPS1988's first 300 rows: a school-years domain read off the data lists
    5 and 7 years, each held by one person.  The warning counts them (as
    `anonymize` does) and advises only what semantic diversity accepts
    (no --bins); declared, there is no warning."""
    import anonset
    df = pd.DataFrame({"id": np.arange(40), "region": np.resize(list("nsew"), 40),
                       "educ": np.resize([12, 12, 14, 16, 16, 18], 40)})
    df.loc[0, "educ"], df.loc[1, "educ"] = 5, 7
    with pytest.warns(anonset.InferredDomainWarning) as rec:
        S.semantic_publish(df, "educ", 2, 2, qids=["region"], identifiers=["id"],
                           values="domain", allow_rare=["educ"])    # 40 rows, 5 and 7 once
    msg = str(rec[0].message)
    assert "one row alone holds: 2 of the 6 of 'educ'" in msg
    assert msg.endswith("(domain=, hierarchy=; --domain, --hierarchy)") and "bins" not in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (0..20 would leave educ nearly in the clear: most dummies nobody's)
        S.semantic_publish(df, "educ", 2, 2, qids=["region"], identifiers=["id"],
                           domain=[5, 7, 12, 14, 16, 18], values="domain")


def test_numbers_spaced_otherwise_than_by_one_need_the_reading_of_d_named():
    import anonset
    """Household income in thousands, to one decimal (COUNT::rwm5yr): with
    d = 1 meant as 1,000 DM, the ordered distance counted positions of the
    values that occur, so dummies 0.1 apart were 'at distance 1' and the
    release was far weaker than asked, without a word.  Numbers that are
    not consecutive integers are now refused unless values= names the
    reading; under 'domain' every set is pairwise >= d in the values' units,
    under 'positions' >= d positions (and then not in units here)."""
    from anonset.validate import InputError
    rng = np.random.default_rng(8)
    inc = np.round(rng.uniform(0, 6, 3000), 1)
    df = pd.DataFrame({"id": np.arange(3000), "sex": rng.choice(list("fm"), 3000), "inc": inc})
    kw = dict(qids=["sex"], identifiers=["id"], seed="5a1c0e9b7d3f4a6e8c2b0d9f7e5a3c1b")
    with pytest.raises(InputError, match=r"values: column 'inc': holds numbers that are not "
                                         r"consecutive integers \(as close as 0.1 apart\)"):
        S.semantic_publish(df, "inc", 3, 1.0, **kw)
    with pytest.warns(anonset.InferredDomainWarning):
        units = S.semantic_publish(df, "inc", 3, 1.0, values="domain", **kw)
        pos = S.semantic_publish(df, "inc", 3, 1.0, values="positions", **kw)
    dom = list(units.schema["inc"].domain)
    gaps_units = [min(abs(a - b) for a, b in itertools.combinations(s, 2)) for s in units.sets("inc")]
    gaps_pos = [min(abs(dom.index(a) - dom.index(b)) for a, b in itertools.combinations(s, 2))
                for s in pos.sets("inc")]
    assert min(gaps_units) >= 1.0 - 1e-9
    assert min(gaps_pos) >= 1
    assert min(min(abs(a - b) for a, b in itertools.combinations(s, 2))
               for s in pos.sets("inc")) < 1.0           # positions: not 1,000 DM apart
    # no reading to name: consecutive integers, text in a declared order
    ints = df.assign(inc=np.floor(df["inc"]).astype(int))
    with pytest.warns(anonset.InferredDomainWarning):
        S.semantic_publish(ints, "inc", 2, 2, **kw, allow_clear=["inc"])   # rare values
    S.semantic_publish(df.assign(inc=np.where(df["inc"] < 3, "low", "high")), "inc", 2, 1,
                       domain=["low", "high"], **kw)
    with pytest.raises(InputError, match="values='domain' measures distances in the values' "
                                         "units, but the domain holds values that are not "
                                         "numbers"):
        S.semantic_publish(df.assign(inc=np.where(df["inc"] < 3, "low", "high")), "inc", 2, 1,
                           domain=["low", "high"], values="domain", **kw)
    with pytest.raises(InputError, match="values: got 'units'"):
        S.semantic_publish(df, "inc", 3, 1.0, values="units", **kw)


def test_paper_000s_estimators_refuse_a_semantic_table(tmp_path, capsys):
    """`anonset reconstruct` read a semantic-diversity table as paper 000's
    sets and returned wrong counts without a sign (GSS vocabulary scores:
    2,324 people with score 0 against 194): paper 001's dummies are drawn at
    distance >= d, not uniformly.  Every path refuses it and names paper
    001's estimators, which recover the marginal."""
    import anonset
    from anonset.cli import main
    from anonset.stream import reconstruct_file
    from anonset.validate import InputError
    rng = np.random.default_rng(11)
    n = 4000
    score = np.clip(np.round(rng.normal(6, 2, n)), 0, 10).astype(int)
    df = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "score": score})
    t = S.semantic_publish(df, "score", 3, 2, qids=["sex"], domain=list(range(11)),
                           seed="semantic-estimators-test-key-0001")
    truth = np.bincount(score, minlength=11)
    # paper 001's EM recovers the marginal
    est = S.analyze(t, [], estimator="em")
    got = np.asarray(est.counts if hasattr(est, "counts") else est.to_pandas()).reshape(-1)
    assert np.abs(got - truth).sum() / n < 0.15
    with pytest.raises(InputError, match=r"table: was published under \(l, d\)-semantic "
                                         r"diversity.*anonset semantic-analyze"):
        anonset.reconstruct(t, ["score"])
    t.to_parquet(tmp_path / "s.parquet")
    with pytest.raises(InputError, match=r"s.parquet': was published under"):
        reconstruct_file(tmp_path / "s.parquet", ["score"])
    assert main(["reconstruct", str(tmp_path / "s.parquet"), "--attributes", "score"]) == 2
    err = capsys.readouterr().err
    assert "s.parquet': was published under (l, d)-semantic diversity" in err
    assert "anonset semantic-analyze" in err
    # the audit's attack without the original takes its prior from paper
    # 001's estimate, in memory and chunk by chunk (it took paper 000's,
    # wrong, and then was refused with it): the prior's top share is the truth's
    share = truth.max() / n
    for rep in (anonset.audit(t, attack=True, n_targets=300, seed=0),
                anonset.audit_file(tmp_path / "s.parquet", attack=True, n_targets=300, seed=0,
                                   chunk_rows=997)):
        prior = float(rep.attack.summary["prior_only"].iloc[0])
        assert abs(prior - share) < 0.01, (prior, share)


def test_analyze_refuses_a_table_whose_sets_are_the_whole_domain(tmp_path, capsys):
    """Workinghours' occupation (4 values) published at l = 4: every set is
    the whole domain, and `semantic-analyze` printed the EM's starting point
    (595.5 people in each occupation of nonwhite = 0, 'fr' among them, held
    by 85 people in all) as counts.  It is refused, naming the file; the
    publisher's summary says the column carries no information."""
    import anonset
    from anonset.cli import main
    from anonset.validate import InputError
    rng = np.random.default_rng(3)
    n = 900
    df = pd.DataFrame({"occ": rng.choice(["mp", "fr", "swcc", "other"], n,
                                         p=[0.3, 0.03, 0.3, 0.37]),
                       "nonwhite": rng.choice([0, 1], n)})
    dom = ["mp", "fr", "swcc", "other"]
    t = S.semantic_publish(df, "occ", 4, 1, qids=["nonwhite"], domain=dom,
                           seed="semantic-whole-domain-test-key-001")
    with pytest.raises(InputError, match=r"column 'occ': was published with l = 4 values in "
                                         r"every set of a domain of 4"):
        S.analyze(t, ["nonwhite"])
    t.to_parquet(tmp_path / "w.parquet")
    capsys.readouterr()
    assert main(["semantic-analyze", str(tmp_path / "w.parquet"), "-o",
                 str(tmp_path / "a.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "w.parquet': column 'occ': was published with l = 4" in err
    assert not (tmp_path / "a.csv").exists()
    df.to_csv(tmp_path / "w.csv", index=False)
    assert main(["semantic-anonymize", str(tmp_path / "w.csv"), "-o", str(tmp_path / "w2.parquet"),
                 "--sensitive", "occ", "--qids", "nonwhite", "--l", "4", "--d", "1",
                 "--domain", ",".join(dom)]) == 0
    assert "WARNING: every published set of occ is the whole domain (l = d)" in \
        capsys.readouterr().err
    # below the domain's size it estimates, and the audit runs either way
    t3 = S.semantic_publish(df, "occ", 3, 1, qids=["nonwhite"], domain=dom,
                            seed="semantic-whole-domain-test-key-001")
    assert abs(S.analyze(t3, ["nonwhite"]).total - n) < 1e-6
    with pytest.raises(InputError, match=r"qids: names 'nope', which is not a published QID of "
                                         r"the table; expected QIDs of \['nonwhite'\]"):
        S.analyze(t3, ["nope"])
    assert anonset.audit(t, attack=True, n_targets=200, seed=0).attack is not None


def test_an_inferred_domain_with_rare_values_is_refused_and_the_dummy_estimate_holds(
        tmp_path, capsys):
    """Paper 001's sets under a domain read off the data: the domain tells
    that each value is someone's, so a value in fewer than l sets points at
    its holders.  Publishing estimates where the dummies fall (1,024 sets
    per value under a fixed key) and refuses from 0.001 expected values,
    alike in Python and on the command line, unless named; the estimate
    matches the dummies of real publications."""
    import anonset
    from anonset.audit.masks import value_counts
    from anonset.cli import main
    from anonset.randomized.rare import expected_exposed_mu
    from anonset.validate import InputError
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"score": rng.integers(0, 40, 120), "age": rng.choice([30, 40], 120)})
    with pytest.raises(InputError) as e:
        S.semantic_publish(df, "score", 3, 2, qids=["age"], values="positions")
    line = str(e.value)
    assert line.startswith("column 'score': its domain is read off the data") and \
        "(in fewer than 3 sets)" in line and line.endswith("allow_rare=['score']"), line
    # declared: published
    S.semantic_publish(df, "score", 3, 2, qids=["age"], values="positions", domain=range(40))
    cnt = np.bincount(df["score"], minlength=40)
    dom = sorted(set(df["score"]))
    cnt = cnt[dom]
    dist = S.SemanticDistance.ordered(len(dom))
    mu = S.decoy_means(cnt, dist, 3, 2)
    x = expected_exposed_mu(cnt, mu, 3)
    assert f"expected for {x:.2g} of its values" in line or f"{x:,.1f}" in line
    # the estimate against 60 publications under fresh keys: the mean number
    # of dummies per value is within 4.5 standard errors of mu.  mu is itself
    # a Monte Carlo estimate (DECOY_DRAWS sets per value under a fixed key):
    # its variance, sum_u c_u^2 p_u(1 - p_u) / draws <= max(c) mu / draws,
    # joins the publications' (<= mu / 60); without it a value whose fixed
    # estimate sits 2 of its own errors off failed about once in 1,000 runs
    runs = np.array([value_counts(S.semantic_publish(df, "score", 3, 2, qids=["age"], values="positions",
                                                     allow_rare=["score"]).mask("score"),
                                  len(dom)) - cnt for _ in range(60)], dtype=float)
    se = np.sqrt(np.maximum(mu, 0.05) / 60 + cnt.max() * mu / S.DECOY_DRAWS)
    assert np.all(np.abs(runs.mean(axis=0) - mu) <= 4.5 * se + 0.02), (runs.mean(axis=0), mu)
    pub = S.semantic_publish(df, "score", 3, 2, qids=["age"], values="positions", allow_rare=["score"])
    assert pub.info["rare"] == {"score": {"below": 3, "d": len(dom)}}   # no original counts
    assert anonset.audit(pub).checks.query("check == 'rare'")["status"].tolist() in (
        ["pass"], ["risk"])
    with pytest.raises(InputError, match="allow_rare: names 'age', which is not the sensitive"):
        S.semantic_publish(df, "score", 3, 2, qids=["age"], values="positions", allow_rare=["age"])
    df.to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "o.parquet"
    assert main(["semantic-anonymize", str(tmp_path / "s.csv"), "-o", str(out), "--sensitive",
                 "score", "--l", "3", "--d", "2", "--qids", "age", "--values", "positions"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("or the risk named: --allow-rare score") and not out.exists(), err
    assert main(["semantic-anonymize", str(tmp_path / "s.csv"), "-o", str(out), "--sensitive",
                 "score", "--l", "3", "--d", "2", "--qids", "age", "--values", "positions", "--allow-rare", "score"]) == 0
    assert "(you allowed it): score (values in fewer than 3 sets" in capsys.readouterr().err


def test_a_column_of_integer_codes_takes_a_hierarchy_of_their_text(tmp_path, capsys):
    # zip or occupation codes read as integers, under an ARX hierarchy whose
    # leaves are their text: anonset.publish takes it; semantic diversity
    # refused it ("is numeric but its domain has non-numeric values")
    from anonset.audit import audit
    from anonset.cli import main
    from anonset.hierarchy import Hierarchy
    semantic_publish = S.semantic_publish
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"zip": rng.choice([13053, 13068, 13067, 14850, 14853], 200),
                       "sex": rng.choice(["f", "m"], 200)})
    text = ("13053;1305*;130**;*\n13068;1306*;130**;*\n13067;1306*;130**;*\n"
            "14850;1485*;148**;*\n14853;1485*;148**;*\n")
    h = Hierarchy.from_csv(text)
    t = semantic_publish(df, "zip", 2, 1, qids=["sex"], hierarchy=h)
    assert t.schema["zip"].domain == (13053, 13068, 13067, 14850, 14853)
    assert audit(t, df).conforms
    with pytest.raises(ValueError, match=r"^column 'zip': is integer but its hierarchy has "
                                         r"non-integer leaves"):
        semantic_publish(df, "zip", 2, 1, qids=["sex"],
                         hierarchy=Hierarchy.from_csv(text.replace("14853;", "1485x;")))
    src, hz = tmp_path / "in.csv", tmp_path / "zip.csv"
    df.to_csv(src, index=False)
    hz.write_text(text)
    assert main(["semantic-anonymize", str(src), "-o", str(tmp_path / "s.parquet"),
                 "--sensitive", "zip", "--qids", "sex", "--l", "2", "--d", "1",
                 "--hierarchy", str(hz), "-q"]) == 0
    assert main(["audit", str(tmp_path / "s.parquet"), "--original", str(src)]) == 0
    hz.write_text(text.replace("13067;1306*;130**;*\n", ""))
    capsys.readouterr()
    assert main(["semantic-anonymize", str(src), "-o", str(tmp_path / "t.parquet"),
                 "--sensitive", "zip", "--qids", "sex", "--l", "2", "--d", "1",
                 "--hierarchy", str(hz)]) == 2
    row = int(np.flatnonzero(df["zip"].to_numpy() == 13067)[0]) + 1
    err = capsys.readouterr().err
    assert f"column 'zip': value 13067 at row {row} is not in the domain" in err


def test_a_domain_given_as_a_set_or_text_is_refused():
    """semantic_publish's domain and values, as publish's: a set has no
    order of its own (one seed drew other sets from one run to the next), and
    text was read a character at a time."""
    df = pd.DataFrame({"inc": list("abcabcabca"), "q": [1, 2] * 5})
    for kw, needle in ((dict(domain=set("abc")), "domain: column 'inc': got a set"),
                       (dict(domain="abc"), "domain: column 'inc': got the text 'abc'"),
                       (dict(domain=list("abc"), values={1.0, 2.0, 3.0}),
                        "values: column 'inc': got a set")):
        with pytest.raises(anonset.InputError, match=re.escape(needle)):
            S.semantic_publish(df, "inc", l=2, d=1, qids=["q"], **kw)


def test_analyze_names_its_qids_by_name():
    """qids=3 was "'int' object is not iterable"; a repeated QID is named."""
    df = pd.DataFrame({"inc": list("abcabcabca"), "q": [1, 2] * 5})
    t = S.semantic_publish(df, "inc", l=2, d=1, qids=["q"], domain=list("abc"))
    for bad, needle in ((3, "qids: got a int"), (["q", "q"], "qids: names ['q'] twice"),
                        ("x", "qids: names 'x', which is not a published QID")):
        with pytest.raises(anonset.InputError, match=re.escape(needle)):
            S.analyze(t, bad)


def test_analyze_refuses_sets_that_contradict_the_metadata():
    """A semantic file whose metadata was edited to d = 4 over sets drawn at
    d = 2 was estimated as if d = 4 (plausible counts, exit 0) while the
    audit FAILED it.  The estimators now check every set against the
    metadata's l and d first."""
    ds = SD.income(n=2000)
    pub = S.semantic_publish(ds.frame, ds.sensitive, 2, 1, qids=list(ds.qids),
                             domain=list(ds.domain), allow_clear=[ds.sensitive])
    S.analyze(pub)
    pub.model["d"] = 6.0
    with pytest.raises(anonset.InputError) as e:
        S.analyze(pub)
    assert str(e.value).startswith(f"column '{ds.sensitive}': holds ") and \
        "set(s) that are not 2 values pairwise at least 6 apart (first at row " in str(e.value)
    with pytest.raises(anonset.InputError, match="^table: was not published under"):
        S.analyze(anonset.publish(ds.frame, anonset.Diversity(2), sensitive=[ds.sensitive],
                                  exact=list(ds.qids), domains={ds.sensitive: list(ds.domain)},
                                  allow_clear=[ds.sensitive]))


def test_semantic_sets_nearly_in_the_clear_are_refused_unless_named():
    """Adult's hours-per-week over a declared 0..168 at l = 2, d = 1: the
    adversary who names each set's most common value was right for 96.6 %
    of the rows (46.7 % by the most common value alone), published with
    exit 0, where `anonset anonymize` refused the same column.  Refused now
    unless named in allow_clear (then recorded, and the audit names it)."""
    rng = np.random.default_rng(5)
    hours = np.where(rng.random(3000) < 0.47, 40, rng.choice([20, 35, 45, 50, 60], 3000))
    df = pd.DataFrame({"hours": hours, "sex": rng.choice(["f", "m"], 3000)})
    kw = dict(qids=["sex"], domain=list(range(169)), values="domain")
    with pytest.raises(anonset.InputError) as e:
        S.semantic_publish(df, "hours", 2, 1, **kw)
    msg = str(e.value)
    assert msg.startswith("l: column 'hours': would be published nearly in the clear (l = 2, "
                          "d = 1): an adversary who knows the column's distribution"), msg
    assert msg.endswith("or the risk named: allow_clear=['hours']"), msg
    pub = S.semantic_publish(df, "hours", 2, 1, allow_clear=["hours"], **kw)
    assert pub.info["clear"] == ["hours"]
    row = anonset.audit(pub).checks.query("check == 'clear' and attribute == 'hours'").iloc[0]
    assert row["status"] == "risk" and "nearly in the clear" in row["message"]
    # over the values held, l = 3 is published
    S.semantic_publish(df, "hours", 3, 1, qids=["sex"], domain=sorted(set(hours)),
                       values="domain")


def test_representative_values_of_another_count_name_the_parameter(tmp_path, capsys):
    """H66: two values for a domain of ten was refused as 'distance has 2
    values but the domain ... has 10', naming neither --values nor what
    was expected."""
    from anonset.cli import main
    rng = np.random.default_rng(0)
    pd.DataFrame({"score": rng.integers(0, 10, 300), "g": rng.choice(list("ab"), 300)}) \
        .to_csv(tmp_path / "sc.csv", index=False)
    assert main(["semantic-anonymize", str(tmp_path / "sc.csv"), "-o", str(tmp_path / "s.parquet"),
                 "--sensitive", "score", "--l", "2", "--d", "1", "--values", "1,2", "--qids", "g",
                 "--domain", ",".join(map(str, range(10)))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--values: column 'score': gives 2 representative values " \
        "for a domain of 10; expected 10 numbers" in err, err
    assert not (tmp_path / "s.parquet").exists()


def test_a_domain_listing_a_value_twice_is_named():
    """A plain ValueError naming no parameter (H91); publish's words now."""
    from anonset import semantic as S
    df = pd.DataFrame({"s": np.random.default_rng(0).integers(0, 4, 100), "q": 1})
    with pytest.raises(anonset.InputError, match=r"^domain: column 's': domain has duplicate "
                                                 r"values \['5'\]; expected each value once"):
        S.semantic_publish(df, "s", l=2, d=1, qids=["q"], domain=[0, 1, 2, 3, 5, 5])


def test_values_exactly_d_apart_as_decimals_are_compatible_and_audited_so():
    """|v_i - v_j| over representative values is read as the decimals they
    spell: 0.37 - 0.27 = 0.09999999999999998 in binary counted as closer
    than d = 0.1, so some pairs exactly d apart were dummies and others
    not, and {0.1, 0.2, 0.3} at l = 3, d = 0.1 was refused as infeasible
    (H116).  A pair truly closer than d stays incompatible."""
    ages = [0.19, 0.22, 0.27, 0.32, 0.37, 0.42, 0.47, 0.52, 0.57, 0.62, 0.67, 0.72]
    dist = S.SemanticDistance.ordered(ages)
    ok = dist.compat(0.1)
    for i, a in enumerate(ages):
        for j, b in enumerate(ages):
            apart = round(abs(b - a), 9)
            assert ok[i, j] == (i != j and apart >= 0.1), (a, b)
    assert not S.SemanticDistance.ordered([0.1, 0.1999999]).compat(0.1)[0, 1]
    # only rounding is forgiven, and both ways: 1e15 and 1e15 + 1 are 1 apart
    # (an allowance of ulps of the values accepted them at d = 2, H120), and
    # 0.4 - 0.1 = 0.30000000000000004 in binary is 0.3 in its decimals
    big = S.SemanticDistance.ordered([1e15 + i for i in range(8)])
    assert (big.compat(2.0) == (np.abs(np.subtract.outer(range(8), range(8))) >= 2)).all()
    assert not S.is_diverse(np.array([[0b111]], dtype=np.uint64), big, 3, 2.0)[0]
    assert not S.SemanticDistance.ordered([0.1, 0.4]).compat(0.30000000000000004)[0, 1]
    df = pd.DataFrame({"x": [0.1, 0.2, 0.3] * 40, "g": ["a", "b"] * 60})
    t = S.semantic_publish(df, "x", 3, 0.1, qids=["g"], values="domain",
                           domain=[0.1, 0.2, 0.3], seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    assert S.is_diverse(t.mask("x"), S.SemanticDistance.ordered([0.1, 0.2, 0.3]), 3, 0.1).all()
    c = anonset.audit(t).checks
    assert not (c.status == "fail").any(), c[c.status == "fail"]


def test_api_key_file_gives_the_release_of_the_cli_key_file(tmp_path):
    """semantic_publish had no key_file= where semantic-anonymize takes
    --key-file: the API could not reproduce the command's release."""
    from anonset.io.keys import new_key_file
    from anonset.validate import InputError
    ds = _small_data(300)
    src = tmp_path / "in.csv"
    ds.frame.to_csv(src, index=False)
    key = tmp_path / "k.key"
    new_key_file(key)
    out = tmp_path / "cli.parquet"
    assert _run(["semantic-anonymize", str(src), "-o", str(out), "--sensitive", "income",
                 "--l", "3", "--d", "2", "--domain", ",".join(ds.domain),
                 "--key-file", str(key), "-q"]) == 0
    kw = dict(qids=["age", "sex"], domain=ds.domain)
    api = S.semantic_publish(pd.read_csv(src), "income", 3, 2, key_file=key, **kw)
    assert anonset.read_parquet(out).equals(api)
    other = S.semantic_publish(pd.read_csv(src), "income", 3, 2, **kw)
    assert not other.equals(api)
    with pytest.raises(InputError, match=r"^key_file: was given together with a seed"):
        S.semantic_publish(ds.frame, "income", 3, 2, key_file=key, seed="s" * 32, **kw)
