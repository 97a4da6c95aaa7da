"""Worst case of paper 000 Algorithm 1: derivation, exactness, bounds."""
import itertools
from math import comb

import numpy as np
import pytest

import anonset.datasets
from hypothesis import given, settings, strategies as st, HealthCheck

from anonset.closeness_search import (
    max_admissible_p, max_admissible_p_bruteforce, max_h, p_of_u, u_of_p, worst_emd,
    worst_emd_bruteforce, _B)
from anonset.emd import Ground, emd
from anonset.hierarchy import Hierarchy

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _tree(d, rng):
    groups = rng.integers(0, max(1, d // 3), d)
    return Hierarchy([[f"v{i}", f"g{groups[i]}", "*"] for i in range(d)])


def _ground(kind, d, rng):
    if kind == "hierarchical":
        return Ground.tree(_tree(d, rng))
    return getattr(Ground, kind)(d)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.floats(0, 1))
def test_mixture_derivation(seed, p):
    """B_Z = lam A + (1-lam) A|_Z and EMD(A, B_Z) = (1-lam) EMD(A, A|_Z)."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 9))
    A = rng.integers(0, 6, d).astype(float)
    A[0] += 1
    A /= A.sum()
    eta = int(rng.integers(1, d))
    Z = sorted(rng.choice(d, eta, replace=False).tolist())
    a = A[Z].sum()
    B = _B(A, Z, p, eta)
    if B is None:
        # A(Z) = 0 and kappa_d * A sums to 0 in floating point: p is 1 up to
        # rounding (hypothesis found p = 1 - 2^-53, where 1 - (p + (1-p) eta/d) = 0)
        assert a == 0.0 and p > 1.0 - 1e-12
        return
    u = u_of_p(p, eta, d)
    AZ = np.zeros(d)
    if a > 0:
        AZ[Z] = A[Z] / a
    lam = u / (u + (1 - u) * a)
    assert np.allclose(B, lam * A + (1 - lam) * AZ, atol=1e-14)
    for kind in ("equal", "ordered", "hierarchical"):
        g = _ground(kind, d, rng)
        EZ = emd(A, AZ, g) if a > 0 else 0.0
        assert abs(emd(A, B, g) - (1 - lam) * EZ) < 1e-12


def test_u_p_inverse():
    for d in (2, 5, 73):
        for eta in range(1, d):
            for p in (0.0, 0.3, 0.9, 1.0):
                assert abs(p_of_u(u_of_p(p, eta, d), eta, d) - p) < 1e-12


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from(["equal", "ordered", "hierarchical"]))
def test_worst_equals_bruteforce(seed, kind):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 15))
    A = rng.integers(0, 8, d)              # zeros allowed
    A[rng.integers(d)] += 1
    g = _ground(kind, d, rng)
    p = float(rng.random())
    for eta in range(1, d + 1):
        if comb(d, eta) > 1000:            # keep the brute force cheap
            continue
        r = worst_emd(A, eta, p, g)
        ref, _ = worst_emd_bruteforce(A, eta, p, g)
        assert r.exact and abs(r.value - ref) < 1e-12
        # the proven bound is never below the truth
        assert worst_emd(A, eta, p, g, method="bound").value >= ref - 1e-12


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from(["equal", "ordered", "hierarchical"]))
def test_max_p_equals_bruteforce(seed, kind):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    A = rng.integers(0, 8, d)
    A[0] += 1
    g = _ground(kind, d, rng)
    t = float(rng.uniform(0.0, 0.6))
    for eta in range(1, d + 1):
        p, exact = max_admissible_p(A, eta, t, g)
        assert exact
        ref = max_admissible_p_bruteforce(A, eta, t, g, tol=1e-13)
        assert abs(p - ref) < 1e-12
        pb, _ = max_admissible_p(A, eta, t, g, method="bound")
        assert pb <= p + 1e-12                    # conservative
        assert worst_emd_bruteforce(A, eta, p, g)[0] <= t + 1e-12


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_equal_dp_is_exact(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 15))
    A = rng.integers(0, 30, d)
    A[0] += 1
    t = float(rng.random())
    for eta in range(1, d + 1):
        if comb(d, eta) > 3500:
            continue
        r = max_h(A, eta, t, "equal", method="dp")
        e = max_h(A, eta, t, "equal", method="enumerate")
        assert abs(r.value - e.value) < 1e-12


def test_eta_equals_d_and_zero_frequencies():
    A = np.array([0, 5, 0, 3])
    assert worst_emd(A, 4, 0.9, "ordered").value == 0.0
    assert max_admissible_p(A, 4, 0.0, "ordered") == (1.0, True)
    # p = 1 and Z = the two zero-frequency values: that set is never published
    r = worst_emd(A, 2, 1.0, "equal")
    ref, _ = worst_emd_bruteforce(A, 2, 1.0, "equal")
    assert abs(r.value - ref) < 1e-12


@pytest.mark.slow
def test_adult_attributes_finish():
    import pandas as pd
    df = anonset.datasets.load_adult(complete=False)
    for col in ("age", "native-country"):
        A = df[col].value_counts().sort_index().to_numpy()
        d = A.size
        for kind in ("equal", "ordered"):
            for eta in range(1, d + 1):
                p, exact = max_admissible_p(A, eta, 0.2, kind)
                assert 0.0 <= p <= 1.0
                if kind == "equal":
                    assert exact


def test_errors():
    from anonset import InputError
    with pytest.raises(InputError, match=r"eta: got 3; expected an integer in \[1, d = 2\]"):
        worst_emd([1, 2], 3, 0.5, "equal")
    with pytest.raises(InputError, match=r"p: got 1.5; expected a number in \[0, 1\]"):
        worst_emd([1, 2], 1, 1.5, "equal")
    with pytest.raises(InputError, match=r"t: got -0.1; expected a number in \[0, 1\]"):
        max_admissible_p([1, 2], 1, -0.1, "equal")
    # a bool is no t, and NumPy numbers are (H78)
    with pytest.raises(InputError, match="t: got True"):
        max_admissible_p([1, 2], 1, True, "equal")
    assert max_admissible_p(np.array([5, 2]), np.int64(1), np.float64(0.3), "equal")[0] > 0
    with pytest.raises(ValueError, match="A contains negative"):
        max_h([1, -2], 1, 0.1, "equal")
    with pytest.raises(ValueError, match="method='dp'"):
        max_h([1.0, 2.0, 3.0], 1, 0.1, "equal", method="dp")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(["equal", "ordered", "hierarchical"]),
       st.booleans())
def test_refined_bound_never_below_bruteforce(seed, kind, integer):
    """The refined bound (reachable totals / a-intervals) is >= the enumerated
    maximum for every eta; a 'certified' answer equals it."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 15))
    A = rng.integers(0, 40, d)
    A[rng.integers(d)] += 1
    if not integer:
        A = A * rng.random(d) + 0.0
        if A.sum() == 0:
            A[0] = 1.0
    g = _ground(kind, d, rng)
    t = float(rng.uniform(0.0, 0.5))
    for eta in range(1, d):
        if comb(d, eta) > 3500:
            continue
        ex = max_h(A, eta, t, g, method="enumerate").value
        b = max_h(A, eta, t, g, method="bound")
        assert b.value >= ex - 1e-12
        if b.exact:
            assert b.method == "certified" and abs(b.value - ex) < 1e-12


def test_refined_bound_is_much_tighter_on_adult_education():
    """Adult education-num, ordered, t = 0.2, eta = 1: exact p* = 0.754; the
    coarse bound of the first version gave 0.075, the refined one >= 0.6."""
    import pandas as pd
    df = anonset.datasets.load_adult(complete=False)
    A = df["education-num"].value_counts().sort_index().to_numpy()
    p_exact, ex = max_admissible_p(A, 1, 0.2, "ordered", method="enumerate")
    p_bound, _ = max_admissible_p(A, 1, 0.2, "ordered", method="bound")
    assert ex and abs(p_exact - 0.754) < 1e-3
    assert 0.6 <= p_bound <= p_exact + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=2, max_size=30), st.integers(1, 29),
       st.floats(0.0, 1.0))
def test_equal_h_certified_by_a_set_is_the_dp_value(counts, eta, t):
    """The equal ground's H from a set that reaches the best total (windows
    of sorted counts, one member swapped) is the DP's value exactly; where no
    set shows it, the DP decides (None)."""
    from anonset.randomized.closeness_search import _bits, _h_equal_certified, _reachable
    c = np.array(counts, dtype=np.int64)
    if c.sum() == 0:
        c[0] = 1
    eta = min(eta, c.size - 1) if c.size > 1 else 1
    N = int(c.sum())
    a = _bits(_reachable(c, eta)).astype(np.float64) / N
    dp = float((a * (1.0 - a) - t * a).max())
    got = _h_equal_certified(c, eta, t)
    assert got is None or got == dp


def test_equal_h_of_a_wide_domain_needs_no_dp():
    """3,743 aircraft-like counts: every set size's H is certified by a set."""
    from anonset.randomized.closeness_search import _h_equal_certified
    rng = np.random.default_rng(0)
    c = rng.zipf(1.6, 3743).clip(1, 5000).astype(np.int64)
    assert all(_h_equal_certified(c, eta, 0.4) is not None for eta in range(5, 600, 7))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(["ordered", "hierarchical"]),
       st.booleans())
def test_the_hill_climb_only_certifies_the_bound(seed, kind, integer):
    """Wide domains get no swap steps (a 2,833-value ordered domain ran for
    more than 10 minutes in them); Algorithm 1's p is the same with or
    without them (the climb can only show the proven bound to be exact),
    and it never exceeds the enumerated p."""
    import anonset.randomized.closeness_search as cs
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 14))
    A = rng.integers(0, 40, d)
    A[rng.integers(d)] += 1
    if not integer:
        A = A * rng.random(d) + 0.0
        if A.sum() == 0:
            A[0] = 1.0
    g = _ground(kind, d, rng)
    t = float(rng.uniform(0.02, 0.5))
    saved = cs.CLIMB_CELLS
    for eta in range(1, d):
        cs._TABLES.clear(), cs._BEST_SETS.clear()
        climbed = max_admissible_p(A, eta, t, g, method="bound")[0]
        cs._TABLES.clear(), cs._BEST_SETS.clear()
        try:
            cs.CLIMB_CELLS = 0
            start_sets = max_admissible_p(A, eta, t, g, method="bound")[0]
        finally:
            cs.CLIMB_CELLS = saved
        assert start_sets == pytest.approx(climbed, rel=1e-9, abs=1e-12)
        if comb(d, eta) <= 3500:
            assert start_sets <= max_admissible_p(A, eta, t, g, method="enumerate")[0] + 1e-12


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(0, 6))
def test_the_hill_climb_returns_a_set_of_its_value(seed, steps):
    """The set the climb returns attains the value it returns (it returned
    the set after one more swap than the value had seen)."""
    import anonset.randomized.closeness_search as cs
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 20))
    A = rng.random(d) + 0.01
    A /= A.sum()
    g = Ground.ordered(d)
    t = float(rng.uniform(0.0, 0.4))
    eta = int(rng.integers(1, d))
    ed, tab = cs._structure_for(A, g)
    v, Z = cs._h_lower(A, eta, t, ed, tab, max_iter=steps)
    assert len(Z) == eta
    a = A[list(Z)].sum()
    R = np.zeros(d)
    R[list(Z)] = A[list(Z)] / a
    assert v == pytest.approx(a * emd(A, R, g) - t * a, abs=1e-12)


def _dense_edge_ranges(et, a1, a2, tol):
    """Every count k compared (the first version): the oracle of _edge_ranges."""
    a1 = np.asarray(a1, dtype=float)[:, None, None]
    a2 = np.asarray(a2, dtype=float)[:, None, None]
    L = np.maximum(et.lo_in, a1 - et.hi_out)
    U = np.minimum(et.hi_in, a2 - et.lo_out)
    ok = et.feas & (L <= U + tol)
    return (np.where(ok, L, np.inf).min(axis=2) - tol,
            np.where(ok, U, -np.inf).max(axis=2) + tol, ~ok.any(axis=2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(["ordered", "hierarchical", "equal"]),
       st.booleans())
def test_edge_ranges_by_binary_search_equal_every_k_compared(seed, kind, ties):
    """The least and largest mass below each edge for sets of mass in
    [a1, a2] (the refined bound's inner step) are those of comparing every
    count k; k's possible values form an interval (f convex, g concave)."""
    import anonset.randomized.closeness_search as cs
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 40))
    A = (rng.integers(1, 4, d) if ties else rng.integers(0, 50, d)).astype(float)
    A[rng.integers(d)] += 1
    A /= A.sum()
    g = _ground(kind, d, rng)
    ed, tab = cs._structure_for(A, g)
    for eta in sorted({1, int(rng.integers(1, d + 1)), d}):
        et = tab.for_eta(eta)
        lo, hi = np.sort(A)[:eta].sum(), np.sort(A)[d - eta:].sum()
        cuts = np.sort(rng.uniform(lo - 0.05, hi + 0.05, 2 * 7)).reshape(7, 2)
        cuts = np.vstack([cuts, [[lo, hi], [lo, lo], [hi, hi]]])
        got = cs._edge_ranges(et, cuts[:, 0], cuts[:, 1], 1e-12)
        want = _dense_edge_ranges(et, cuts[:, 0], cuts[:, 1], 1e-12)
        assert np.array_equal(got[2], want[2])
        live = ~want[2]
        np.testing.assert_allclose(got[0][live], want[0][live], rtol=0, atol=1e-13)
        np.testing.assert_allclose(got[1][live], want[1][live], rtol=0, atol=1e-13)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(["ordered", "hierarchical"]),
       st.floats(0.02, 0.5))
def test_eta_1_is_exact_beyond_enumeration(seed, kind, t):
    """Past the enumeration cap (d^3 > 2e7) eta = 1 took p from the bound
    (2,833 weekly incomes: 0.0296 for the exact 0.0450); its worst set is
    one value, so H is the best singleton's, exactly."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(275, 330))
    A = rng.zipf(1.5, d).clip(1, 3000).astype(np.int64)
    g = _ground(kind, d, rng)
    r = max_h(A, 1, t, g)
    Af = A / A.sum()
    want = max(Af[i] * emd(Af, np.eye(d)[i], g) - t * Af[i] for i in range(d))
    assert r.exact and r.value == pytest.approx(want, abs=1e-12)
    p, exact = max_admissible_p(A, 1, t, g)
    assert exact and p == pytest.approx(max_admissible_p_bruteforce(A, 1, t, g), abs=1e-9)
