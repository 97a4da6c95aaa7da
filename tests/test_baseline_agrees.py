"""The NumPy baseline of bench/ (the reference the speed figures are measured
against) agrees with anonset's kernels."""
import math
import pathlib
import sys

import numpy as np
import pytest

from anonset.randomized import _kernels
from anonset.randomized.params import AttributeParams

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))
import numpy_baseline as nb  # noqa: E402


def random_masks(rng, n, d, eta):
    """n random eta-subsets of range(d) as (n, words) bitmasks."""
    words = (d + 63) // 64
    pick = np.argsort(rng.random((n, d)), axis=1)[:, :eta]
    member = np.zeros((n, words * 64), dtype=bool)
    np.put_along_axis(member, pick, True, axis=1)
    return np.packbits(member, axis=1, bitorder="little").view("<u8")


@pytest.mark.parametrize("dims,etas", [
    ([7], [3]),
    ([2, 5], [1, 2]),
    ([4, 3, 6], [2, 2, 3]),
    ([18, 6, 6, 10], [5, 5, 5, 5]),
    ([70, 3], [4, 2]),                 # two words for the first attribute
])
def test_count_w_equals_kernel(dims, etas):
    rng = np.random.default_rng(sum(dims))
    masks = [random_masks(rng, 3000, d, e) for d, e in zip(dims, etas)]
    ref = _kernels.count_w(masks, dims, math.prod(etas), 1)
    got = nb.count_w(masks, dims, etas, cells_per_chunk=5000)   # several chunks
    np.testing.assert_array_equal(got, ref)
    assert got.sum() == 3000 * math.prod(etas)


def test_members():
    rng = np.random.default_rng(0)
    m = random_masks(rng, 50, 70, 4)
    ref = _kernels.members(m, 70, 4)
    np.testing.assert_array_equal(nb.members(m, 70, 4), ref)
    with pytest.raises(ValueError):
        nb.members(m, 70, 3)


def random_problem(rng, dims):
    w = rng.integers(0, 50, dims).astype(np.float64)
    w.flat[0] = 0.0                              # a zero cell exercises the y > 0 guard
    ps = rng.uniform(0.3, 1.0, len(dims))
    etas = [int(rng.integers(1, d)) if d > 1 else 1 for d in dims]
    a = [p + (1 - p) * e / d for p, e, d in zip(ps, etas, dims)]
    b = [p * (e - 1) / (d - 1) + (1 - p) * e / d for p, e, d in zip(ps, etas, dims)]
    return w, a, b


@pytest.mark.parametrize("dims", [[5], [3, 4], [2, 3, 4], [4, 2, 5, 3]])
@pytest.mark.parametrize("max_iter,tol", [(200, 0.0), (5000, 1e-3)])
def test_em_equals_kernel(dims, max_iter, tol):
    rng = np.random.default_rng(len(dims) * 10 + max_iter)
    w, a, b = random_problem(rng, dims)
    q = len(dims)
    x0 = w + 1.0
    ref, it_ref, ch_ref = _kernels.em_kron(w, x0, dims, [None] * q, a, b, max_iter, tol, 1)
    mats = [nb.ab_matrix(a[j], b[j], dims[j]) for j in range(q)]
    for x, it, ch in (nb.em_kron(w, x0, mats, max_iter, tol),
                      nb.em_ab(w, x0, a, b, max_iter, tol),
                      nb.em_dense(w, x0, nb.kron_dense(mats), max_iter, tol)):
        assert it == it_ref
        np.testing.assert_allclose(x, ref, rtol=1e-9, atol=1e-9)
        assert ch == pytest.approx(ch_ref, rel=1e-6, abs=1e-9)
    if tol > 0:
        assert it_ref < max_iter and ch_ref <= tol


def test_em_general_factors_equal_kernel():
    """Non-symmetric factors (as for paper 001): the transpose is honoured."""
    rng = np.random.default_rng(5)
    dims = [3, 4, 2]
    w = rng.integers(0, 30, dims).astype(np.float64)
    mats = [rng.uniform(0.05, 1.0, (d, d)) for d in dims]
    ref, it_ref, _ = _kernels.em_kron(w, w + 1, dims, mats, [0.0] * 3, [0.0] * 3, 100, 0.0, 1)
    x, it, _ = nb.em_kron(w, w + 1, mats, 100, 0.0)
    assert it == it_ref == 100
    np.testing.assert_allclose(x, ref, rtol=1e-9, atol=1e-9)
    xd, _, _ = nb.em_dense(w, w + 1, nb.kron_dense(mats), 100, 0.0)
    np.testing.assert_allclose(xd, ref, rtol=1e-9, atol=1e-9)


def test_em_zero_iterations():
    w = np.ones((2, 3))
    x, it, ch = nb.em_ab(w, w, [0.9, 0.8], [0.1, 0.2], 0, 0.0)
    assert it == 0 and math.isinf(ch)
    np.testing.assert_array_equal(x, w)


def popcounts(mask):
    bits = np.unpackbits(mask.view(np.uint8), axis=1, bitorder="little")
    return bits.sum(axis=1)


def has_bit(mask, v):
    return (mask[:, v // 64] >> np.uint64(v % 64)) & np.uint64(1)


@pytest.mark.parametrize("d,eta", [(2, 1), (5, 3), (18, 5), (18, 18), (70, 4)])
def test_publish_sizes_and_truth(d, eta):
    rng = np.random.default_rng(d)
    n = 5000
    code = rng.integers(0, d, n).astype(np.int32)
    params = {"x": AttributeParams("x", 1.0, eta, d)}
    m = nb.publish({"x": code}, params, seed=1, chunk=1024)["x"]
    assert m.shape == (n, (d + 63) // 64) and m.dtype == np.uint64
    assert (popcounts(m) == eta).all()
    assert (np.array([has_bit(m[i:i + 1], v)[0] for i, v in enumerate(code)]) == 1).all()
    # no bit beyond the domain
    if d % 64:
        assert (m[:, -1] >> np.uint64(d % 64) == 0).all()


def test_publish_distribution():
    """p = 0: the true value is in the set with probability eta / d; p = 1:
    every other value with probability (eta - 1) / (d - 1) (eq. 19)."""
    rng = np.random.default_rng(0)
    d, eta, n = 6, 3, 60000
    code = np.zeros(n, dtype=np.int32)
    for p, incl, other in ((0.0, eta / d, eta / d), (1.0, 1.0, (eta - 1) / (d - 1))):
        m = nb.publish({"x": code}, {"x": AttributeParams("x", p, eta, d)}, seed=2)["x"]
        assert (popcounts(m) == eta).all()
        freq = np.array([has_bit(m, v).mean() for v in range(d)])
        assert freq[0] == pytest.approx(incl, abs=0.01)
        np.testing.assert_allclose(freq[1:], other, atol=0.01)
