"""pytest-benchmark suites for paper 000's core kernels.

Run (pytest-benchmark times each; `--benchmark-disable` runs each once,
as a check that it still works):

    PYTHONPATH=src python -m pytest bench/bench_core.py

Every benchmark is seeded and checks its result: published sets have eta
members and hold the true value (p = 1); w equals the NumPy baseline's and
sums to N x prod(eta); the EM equals the NumPy eq. 26.  The data is a
census-shaped table (anonset.synthetic) with eta_j = min(5, d_j - 1).
"""
import math

import numpy as np
import pytest

from anonset.randomized import _kernels
from anonset.randomized.params import AttributeParams
from anonset.randomized.publish import sample_sets
from anonset.synthetic import census_like_codes

import numpy_baseline as nb

KEY = bytes(range(32))
SIZES = (20_000, 200_000)
N_COUNT = 200_000
N_ATTRS = 68


def census_params(d):
    return {k: AttributeParams(k, 1.0, min(5, dj - 1), dj) for k, dj in d.items()}


@pytest.fixture(scope="module")
def census():
    codes, d = census_like_codes(max(SIZES), N_ATTRS, seed=0)
    return codes, d, census_params(d), {k: j for j, k in enumerate(d)}


def head(codes, n):
    return {k: v[:n] for k, v in codes.items()}


def check_sets(masks, codes, params, rows=2000):
    for k, m in masks.items():
        mm = m[:rows]
        bits = np.unpackbits(mm.view(np.uint8), axis=1, bitorder="little")
        assert (bits.sum(axis=1) == params[k].eta).all(), k
        v = codes[k][:rows]
        assert (bits[np.arange(len(v)), v] == 1).all(), k


# ---------------------------------------------------------------- publishing
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("rng", ["chacha20", "philox"])
def test_publish_anonset(benchmark, census, n, n_threads, rng):
    codes, d, params, ids = census
    sub = head(codes, n)
    benchmark.group = f"publish n={n} x {N_ATTRS}"
    benchmark.extra_info["cells"] = n * N_ATTRS
    out = benchmark.pedantic(sample_sets, args=(sub, params, ids, KEY),
                             kwargs={"rng": rng, "n_threads": n_threads},
                             rounds=3, warmup_rounds=1)
    check_sets(out, sub, params)


@pytest.mark.parametrize("n", SIZES[:1])
def test_publish_numpy(benchmark, census, n):
    codes, d, params, ids = census
    sub = head(codes, n)
    benchmark.group = f"publish n={n} x {N_ATTRS}"
    benchmark.extra_info["cells"] = n * N_ATTRS
    out = benchmark.pedantic(nb.publish, args=(sub, params, 0), rounds=3, warmup_rounds=1)
    check_sets(out, sub, params)


# ---------------------------------------------------------------- w counting
@pytest.fixture(scope="module")
def published(census):
    codes, d, params, ids = census
    sub = head(codes, N_COUNT)
    # the four largest-domain attributes with eta = 5: the heaviest q' = 4
    big = sorted(d, key=lambda k: -d[k])[:4]
    masks = sample_sets({k: sub[k] for k in big}, params, ids, KEY, n_threads=2)
    return big, masks, d, params


@pytest.fixture(scope="module")
def w_reference(published):
    big, masks, d, params = published
    return {q: nb.count_w([masks[k] for k in big[:q]], [d[k] for k in big[:q]],
                          [params[k].eta for k in big[:q]]) for q in (1, 2, 3, 4)}


@pytest.mark.parametrize("q", [1, 2, 3, 4])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_count_w(benchmark, published, w_reference, q, n_threads):
    big, masks, d, params = published
    attrs = big[:q]
    etas = [params[k].eta for k in attrs]
    benchmark.group = f"count_w q'={q} n={N_COUNT}"
    benchmark.extra_info["cells"] = N_COUNT * math.prod(etas)
    w = benchmark.pedantic(_kernels.count_w,
                           args=([masks[k] for k in attrs], [d[k] for k in attrs],
                                 math.prod(etas), n_threads),
                           rounds=3, warmup_rounds=1)
    assert w.sum() == N_COUNT * math.prod(etas)
    np.testing.assert_array_equal(w, w_reference[q])


@pytest.mark.parametrize("q", [2, 4])
def test_count_w_numpy(benchmark, published, w_reference, q):
    big, masks, d, params = published
    attrs = big[:q]
    benchmark.group = f"count_w q'={q} n={N_COUNT}"
    w = benchmark.pedantic(nb.count_w, args=([masks[k] for k in attrs], [d[k] for k in attrs],
                                             [params[k].eta for k in attrs]),
                           rounds=1, warmup_rounds=0)
    np.testing.assert_array_equal(w, w_reference[q])


# ---------------------------------------------------------------- EM (eq. 26)
EM_ITERS = 200


@pytest.fixture(scope="module")
def em_problem(published, w_reference):
    big, masks, d, params = published
    dims = [d[k] for k in big]
    a = [params[k].inclusion for k in big]
    b = [params[k].other_inclusion for k in big]
    w = w_reference[4].astype(np.float64)
    ref = nb.em_ab(w, w, a, b, EM_ITERS, 0.0)
    return dims, a, b, w, ref


@pytest.mark.parametrize("n_threads", [1, 2])
def test_em_kron(benchmark, em_problem, n_threads):
    dims, a, b, w, ref = em_problem
    benchmark.group = f"em eq.26 |C|={w.size} x {EM_ITERS} it"
    x, it, ch = benchmark.pedantic(_kernels.em_kron,
                                   args=(w, w, dims, [None] * 4, a, b, EM_ITERS, 0.0, n_threads),
                                   rounds=3, warmup_rounds=1)
    assert it == EM_ITERS
    np.testing.assert_allclose(x, ref[0], rtol=1e-9)


@pytest.mark.parametrize("variant", ["em_ab", "em_kron"])
def test_em_numpy(benchmark, em_problem, variant):
    dims, a, b, w, ref = em_problem
    benchmark.group = f"em eq.26 |C|={w.size} x {EM_ITERS} it"
    if variant == "em_ab":
        fn, args = nb.em_ab, (w, w, a, b, EM_ITERS, 0.0)
    else:
        mats = [nb.ab_matrix(a[j], b[j], dims[j]) for j in range(4)]
        fn, args = nb.em_kron, (w, w, mats, EM_ITERS, 0.0)
    x, it, ch = benchmark.pedantic(fn, args=args, rounds=1, warmup_rounds=0)
    np.testing.assert_allclose(x, ref[0], rtol=1e-9)


def test_em_dense_small(benchmark):
    """Dense |C| x |C| eq. 26 at the Adult-like |C| = 9*8*16*2 = 2,304."""
    dims = [9, 8, 16, 2]
    rng = np.random.default_rng(0)
    w = rng.integers(0, 200, dims).astype(np.float64)
    a = [0.0] * 4
    b = [0.0] * 4
    for j, dj in enumerate(dims):
        eta = min(2, dj)
        a[j], b[j] = 1.0, (eta - 1) / (dj - 1)
    mats = [nb.ab_matrix(a[j], b[j], dims[j]) for j in range(4)]
    delta = nb.kron_dense(mats)
    benchmark.group = "em dense vs kron |C|=2304 x 20 it"
    x, it, ch = benchmark.pedantic(nb.em_dense, args=(w, w, delta, 20, 0.0), rounds=1)
    ref = _kernels.em_kron(w, w, dims, [None] * 4, a, b, 20, 0.0, 1)[0]
    np.testing.assert_allclose(x, ref, rtol=1e-9)
