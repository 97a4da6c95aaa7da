"""EMD: agreement with an exact transportation solve (an LP; POT where the
``bench`` extra is installed), kernels, validation."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import anonset.datasets
from exact_transport import emd2
from anonset.emd import Ground, emd, emd_batch, emd_reference, _emd_batch_numpy
from anonset.hierarchy import Hierarchy

COUNTRY = Path(anonset.datasets.__file__).parent / "data" / "adult" / "hierarchies" / "native-country.csv"

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _dist(draw, d):
    x = np.array(draw(st.lists(st.integers(0, 50), min_size=d, max_size=d)), dtype=float)
    if x.sum() == 0:
        x[0] = 1.0
    return x / x.sum()


@st.composite
def random_tree(draw):
    """A balanced random hierarchy: each level groups the previous level's nodes."""
    d = draw(st.integers(1, 12))
    height = draw(st.integers(1, 4))
    paths = [[f"v{i}"] for i in range(d)]
    groups = list(range(d))
    for h in range(1, height):
        n_up = draw(st.integers(1, max(1, len(set(groups)))))
        mapping = {g: draw(st.integers(0, n_up - 1)) for g in sorted(set(groups))}
        groups = [mapping[g] for g in groups]
        for i in range(d):
            # the full path makes equal labels under different parents distinct nodes
            paths[i].append(f"n{h}_{groups[i]}")
    for i in range(d):
        paths[i].append("*")
    return Hierarchy(paths)


@st.composite
def case(draw):
    kind = draw(st.sampled_from(["equal", "ordered", "values", "hierarchical"]))
    if kind == "hierarchical":
        g = Ground.tree(draw(random_tree()))
    else:
        d = draw(st.integers(1, 12))
        if kind == "values":
            steps = draw(st.lists(st.floats(0.01, 10), min_size=d, max_size=d))
            g = Ground.values(np.cumsum(steps))
        else:
            g = getattr(Ground, kind)(d)
    return g, _dist(draw, g.d), _dist(draw, g.d)


@SETTINGS
@given(case())
def test_emd_equals_exact_transport(c):
    g, p, q = c
    exact = emd2(p, q, g.matrix())
    assert abs(emd(p, q, g) - exact) < 1e-12
    assert abs(emd_reference(p, q, g) - exact) < 1e-12


@SETTINGS
@given(case())
def test_batch_matches_single_and_numpy(c):
    g, p, q = c
    P = np.vstack([p, q, (p + q) / 2])
    out = emd_batch(P, q, g)
    assert np.allclose(out, [emd(r, q, g) for r in P], atol=1e-15, rtol=0)
    assert np.allclose(out, _emd_batch_numpy(P, q, g), atol=1e-14, rtol=0)


def test_formulas_known_answers():
    assert emd([1, 0, 0], [0, 0, 1], "ordered") == 1.0
    assert emd([1, 0, 0], [0, 0, 1], "equal") == 1.0
    assert abs(emd([1, 0, 0], [0, 1, 0], Ground.values([0, 1, 4])) - 0.25) < 1e-15
    h = Hierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"]])
    assert abs(emd([1, 0, 0], [0, 1, 0], Ground.tree(h)) - 0.5) < 1e-15
    assert abs(emd([1, 0, 0], [0, 0, 1], Ground.tree(h)) - 1.0) < 1e-15
    assert emd([1], [3], "ordered") == 0.0


def _country_pairs():
    g = Ground.tree(Hierarchy.from_csv(COUNTRY))
    rng = np.random.default_rng(0)
    for _ in range(20):
        p, q = rng.random(g.d), rng.random(g.d)
        yield g, p / p.sum(), q / q.sum()


def test_native_country_tree_matches_exact_transport():
    for g, p, q in _country_pairs():
        assert abs(emd(p, q, g) - emd2(p, q, g.matrix())) < 1e-12


def test_native_country_tree_matches_pot():
    ot = pytest.importorskip("ot", reason="POT is a comparison peer: pip install '.[bench]'")
    for g, p, q in _country_pairs():
        assert abs(emd(p, q, g) - ot.emd2(p, q, g.matrix())) < 1e-12


def test_counts_int64_census_scale():
    # 3e9 records per class: int32 would overflow, int64 is exact
    P = np.array([[3_000_000_000, 1_000_000_000], [1, 3]], dtype=np.int64)
    out = emd_batch(P, [1, 1], "equal")
    assert np.allclose(out, [0.25, 0.25], atol=1e-15)


def test_thread_count_invariance():
    rng = np.random.default_rng(1)
    P = rng.integers(0, 1000, (10_000, 16))
    q = rng.random(16)
    for g in (Ground.equal(16), Ground.ordered(16), Ground.values(np.cumsum(rng.random(16)))):
        ref = emd_batch(P, q, g, n_threads=1)
        for nt in (2, 3, 7):
            assert np.array_equal(emd_batch(P, q, g, n_threads=nt), ref)
        assert np.array_equal(emd_batch(P.astype(float), q, g, n_threads=2),
                              emd_batch(P.astype(float), q, g, n_threads=1))


def test_build_has_openmp():
    from anonset import _emd
    assert _emd.OPENMP, "the build lost OpenMP"


@pytest.mark.parametrize("p,q,msg", [
    ([1, -1], [1, 1], "p contains negative"),
    ([1, np.nan], [1, 1], "p contains NaN"),
    ([0, 0], [1, 1], "p sums to zero"),
    ([1, 1], [0, 0], "q sums to zero"),
    ([1, 1, 1], [1, 1], "differ in length"),
    ([[1, 1]], [1, 1], "p must be"),
    (["a", "b"], [1, 1], "p must be numeric"),
])
def test_emd_errors_name_the_parameter(p, q, msg):
    with pytest.raises(ValueError, match=msg):
        emd(p, q, "equal")


def test_batch_errors():
    with pytest.raises(ValueError, match="P contains negative"):
        emd_batch([[1, -1]], [1, 1])
    with pytest.raises(ValueError, match="P row 1 sums to zero"):
        emd_batch([[1, 1], [0, 0]], [1, 1])
    with pytest.raises(ValueError, match="P must be 2-d"):
        emd_batch([1, 1], [1, 1])
    with pytest.raises(ValueError, match="P has 3 columns"):
        emd_batch([[1, 1, 1]], [1, 1])
    with pytest.raises(ValueError, match="n_threads"):
        emd_batch([[1, 1]], [1, 1], n_threads=0)
    with pytest.raises(ValueError, match="ground has 3 values"):
        emd_batch([[1, 1]], [1, 1], Ground.equal(3))


def test_ground_spec_errors():
    with pytest.raises(ValueError, match="ground must be"):
        Ground.from_spec("manhattan", 3)
    with pytest.raises(ValueError, match="needs a hierarchy"):
        Ground.from_spec("hierarchical", 3)
    with pytest.raises(ValueError, match="strictly increasing"):
        Ground.values([0, 2, 1])
    with pytest.raises(ValueError, match="d must be a positive int"):
        Ground.equal(0)


def test_from_spec_kinds():
    assert Ground.from_spec("equal", 3).kind == "equal"
    assert Ground.from_spec([1.0, 2.0, 5.0]).kind == "values"
    h = Hierarchy.flat(["a", "b"])
    assert Ground.from_spec("hierarchical", 2, hierarchy=h).kind == "hierarchical"
    g = Ground.ordered(4)
    assert Ground.from_spec(g, 4) is g
    assert np.allclose(Ground.values(np.arange(5.0)).matrix(), Ground.ordered(5).matrix())


def test_single_pair_fast_path_matches_batch_and_reference():
    """emd()'s one-pass C path: arrays, lists, counts, views and string specs."""
    rng = np.random.default_rng(5)
    h = Hierarchy.from_csv(COUNTRY)
    g = Ground.tree(h)
    P = rng.integers(0, 20, (50, g.d))
    P[:, 0] += 1
    q = rng.random(g.d)
    ref = emd_batch(P, q, g)
    for i in range(P.shape[0]):
        assert abs(emd(P[i].astype(float), q, g) - ref[i]) < 1e-14
        assert abs(emd(P[i], q, g) - ref[i]) < 1e-14                  # int64 counts
        assert abs(emd(P[i].tolist(), list(q), g) - ref[i]) < 1e-14   # lists
    Pf = np.asfortranarray(P.astype(float))
    assert abs(emd(Pf[3], q, g) - ref[3]) < 1e-14                     # strided view
    for kind in ("equal", "ordered"):
        a, b = rng.random(7), rng.random(7)
        assert abs(emd(a, b, kind) - emd_reference(a, b, kind)) < 1e-14
    assert abs(emd(a, b, [0.0, 1, 2, 4, 8, 9, 10])
               - emd_reference(a, b, Ground.values([0.0, 1, 2, 4, 8, 9, 10]))) < 1e-14


@pytest.mark.parametrize("p,q,msg", [
    (np.array([1.0, -1.0]), np.array([1.0, 1.0]), "p contains negative"),
    (np.array([1.0, 1.0]), np.array([np.inf, 1.0]), "q contains NaN"),
    (np.array([-1.0, np.nan]), np.array([1.0, 1.0]), "p contains NaN"),
    (np.array([0.0, 0.0]), np.array([1.0, 1.0]), "p sums to zero"),
    (np.array([1.0, 1.0]), np.array([0.0, 0.0]), "q sums to zero"),
    (np.array([1.0, 1.0]), np.array([1.0, 1.0, 1.0]), "differ in length"),
    (np.zeros(0), np.array([1.0]), "p must be a non-empty"),
])
def test_fast_path_errors_name_the_parameter(p, q, msg):
    with pytest.raises(ValueError, match=msg):
        emd(p, q, "equal")
    with pytest.raises(ValueError, match="ground has 3 values"):
        emd(np.ones(2), np.ones(2), Ground.equal(3))
