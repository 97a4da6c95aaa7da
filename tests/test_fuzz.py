"""Fuzz harness over every compiled kernel's Python entry point (issue 8, item 5).

Hypothesis draws shapes, dtypes and values, valid and invalid alike.  Each call
must either return a result that an obviously-correct Python oracle accepts,
or raise one of ``ALLOWED`` -- never crash the interpreter, write outside a
buffer (run under .ci/sanitize.sh to see that), or hang (a watchdog kills the
process after ``HANG_S`` seconds with every thread's traceback).

* ``anonset.randomized._kernels``: sample_sets, count_w, members, kron_apply, em_kron,
  exact_estep, block, fill, philox4x64 -- called directly;
* ``anonset._emd``, ``_semantic``, ``_lgb``, ``_msa``: through their public
  wrappers (emd/emd_batch, semantic_sets/feasible_values/is_diverse,
  local_bucketization/lgb, anonymize_msa), which own the validation.

Examples per test: ``ANONSET_FUZZ_EXAMPLES`` (default 25: the file runs in
about 20-30 s); a longer run: ``ANONSET_FUZZ_EXAMPLES=2000 pytest
tests/test_fuzz.py`` (docs/reliability.md).
"""
from __future__ import annotations

import faulthandler
import itertools
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonset
from anonset.randomized import _kernels
from anonset import lgb
from anonset import msa
from anonset import semantic
from anonset.emd import emd_reference

EXAMPLES = int(os.environ.get("ANONSET_FUZZ_EXAMPLES", "25"))
HANG_S = int(os.environ.get("ANONSET_FUZZ_HANG_S", "300"))
ALLOWED = (ValueError, TypeError, MemoryError, OverflowError)

fuzz = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 100,
                suppress_health_check=list(HealthCheck), database=None)


@pytest.fixture(autouse=True)
def watchdog():
    """A hang is a failure too: dump every thread and exit after HANG_S."""
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def call(f, *a, **k):
    """f(*a, **k), or None when it raised an allowed error."""
    try:
        return f(*a, **k)
    except ALLOWED:
        return None


# ---------------------------------------------------------------- strategies
KEYS = st.one_of(st.binary(min_size=32, max_size=32), st.binary(max_size=40))
RNGS = st.sampled_from(["chacha20", "philox", "chacha20", "nope"])
DOMAINS = st.sampled_from([-1, 0, 1, 2, 3, 7, 63, 64, 65, 130, 65536, 65537])
DTYPES = st.sampled_from([np.int32, np.int64, np.int8, np.uint16, np.float64])
THREADS = st.sampled_from([0, 1, 2, -3])


def bits_of(m, d):
    """(members as a bool matrix over [0, d), rows with a bit at or above d)."""
    m = np.ascontiguousarray(m, dtype=np.uint64)
    m = m.reshape(len(m), m.size // len(m) if len(m) else max((d + 63) // 64, 1))
    b = np.unpackbits(m.view(np.uint8).reshape(m.shape[0], m.shape[1] * 8), axis=1,
                      bitorder="little")
    return b[:, :max(d, 0)].astype(bool), b[:, max(d, 0):].any(axis=1)


@st.composite
def masks(draw, d, n=None, stray=True):
    n = draw(st.integers(0, 12)) if n is None else n
    words = max((d + 63) // 64, 0)
    mode = draw(st.sampled_from(["random", "sparse", "valid"] + (["stray"] if stray else [])))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = rng.integers(0, 2**63, size=(n, words), dtype=np.uint64, endpoint=True)
    if mode == "sparse":
        m &= rng.integers(0, 2**63, size=(n, words), dtype=np.uint64) \
            & rng.integers(0, 2**63, size=(n, words), dtype=np.uint64)
    if mode in ("valid", "sparse") and d % 64 and words:
        m[:, -1] &= np.uint64((1 << (d % 64)) - 1)
    if mode == "valid" and d >= 1:
        eta = draw(st.integers(1, min(d, 4)))
        m[:] = 0
        for i in range(n):
            for v in rng.choice(d, eta, replace=False):
                m[i, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    return m


# ------------------------------------------------------------ _kernels: rng
@fuzz
@given(key=KEYS, rng=RNGS, counter=st.integers(0, 2**64 - 1), stream=st.integers(0, 2**32 - 1),
       sub=st.integers(0, 2**32 - 1), nblocks=st.integers(-2, 6), nt=THREADS)
def test_fuzz_block_fill(key, rng, counter, stream, sub, nblocks, nt):
    out = call(_kernels.fill, key, counter, stream, sub, nblocks, rng, nt)
    if out is None:
        return
    assert out.dtype == np.uint32 and out.shape == (16 * nblocks,)
    for b in range(nblocks):
        blk = _kernels.block(key, (counter + b) % 2**64, stream, sub, rng)
        assert np.array_equal(out[16 * b:16 * (b + 1)], blk)


@fuzz
@given(ctr=st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=6),
       key=st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=3))
def test_fuzz_philox(ctr, key):
    out = call(_kernels.philox4x64, np.array(ctr, dtype=np.uint64), np.array(key, dtype=np.uint64))
    if out is None:
        assert len(ctr) != 4 or len(key) != 2
        return
    assert out.shape == (4,) and out.dtype == np.uint64


# ------------------------------------------------------- _kernels: sampler
@fuzz
@given(data=st.data(), key=KEYS, rng=RNGS, q=st.integers(0, 3), n=st.integers(0, 40),
       nt=THREADS, row0=st.integers(-5, 2**40))
def test_fuzz_sample_sets(data, key, rng, q, n, nt, row0):
    d = [data.draw(DOMAINS) for _ in range(q)]
    eta = [data.draw(st.sampled_from([-1, 0, 1, 2, max(dj, 0), dj + 1])) for dj in d]
    exact = [data.draw(st.integers(0, 1)) for _ in range(q)]
    coin = [data.draw(st.sampled_from([0, 1, 2**31, 2**32, 2**32 + 5])) for _ in range(q)]
    ids = [data.draw(st.integers(0, 2**31 - 1)) for _ in range(q)]
    codes = []
    for dj in d:
        lo, hi = (-2, dj + 2) if data.draw(st.booleans()) else (0, max(dj - 1, 0))
        lens = n if data.draw(st.integers(0, 9)) else n + 1
        c = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).integers(lo, hi + 1, lens)
        codes.append(c.astype(data.draw(DTYPES)))
    extra = data.draw(st.sampled_from([{}, {}, {"d": d[:-1]}, {"coin": coin + [1]}]))
    args = dict(d=d, eta=eta, coin=coin, exact=exact, attr_id=ids)
    args.update(extra)
    outs = call(_kernels.sample_sets, key, rng, codes, args["d"], args["eta"], args["coin"],
                exact, ids, row0=row0, n_threads=nt)
    if outs is None:
        return
    assert len(outs) == q
    n = len(codes[0]) if q else 0
    for j, m in enumerate(outs):
        assert m.shape == (n, (d[j] + 63) // 64)
        inside, stray = bits_of(m, d[j])
        assert not stray.any()
        assert (inside.sum(axis=1) == eta[j]).all()
        c = codes[j].astype(np.int64)
        if exact[j] or coin[j] >= 2**32:              # p = 1: the true value is in its set
            assert inside[np.arange(n), c].all()


# --------------------------------------------------------- _kernels: counts
def _count_oracle(ms, d):
    w = np.zeros(d, dtype=np.int64)
    for i in range(ms[0].shape[0]):
        sets = [np.flatnonzero(bits_of(m[i:i + 1], dj)[0][0]) for m, dj in zip(ms, d)]
        for cell in itertools.product(*sets):
            w[cell] += 1
    return w


@fuzz
@given(data=st.data(), q=st.integers(0, 3), nt=THREADS,
       max_set=st.sampled_from([-1, 0, 1, 4, 64, 4096, 2**40]))
def test_fuzz_count_w(data, q, nt, max_set):
    d = [data.draw(st.sampled_from([-1, 0, 1, 2, 5, 64, 70])) for _ in range(q)]
    n = data.draw(st.integers(0, 8))
    ms = [data.draw(masks(max(dj, 1), n=n)) for dj in d]
    if q and data.draw(st.integers(0, 9)) == 0:          # a mismatched row count
        ms[-1] = ms[-1][:max(n - 1, 0)]
    w = call(_kernels.count_w, ms, d, max_set, nt)
    if w is None:
        return
    assert w.shape == tuple(d)
    assert np.array_equal(w, _count_oracle(ms, d))


@fuzz
@given(data=st.data(), d=st.sampled_from([-1, 0, 1, 3, 64, 65, 200]), k=st.integers(-1, 5),
       nt=THREADS)
def test_fuzz_members(data, d, k, nt):
    m = data.draw(masks(max(d, 1)))
    out = call(_kernels.members, m, d, k, nt)
    if out is None:
        return
    assert out.shape == (m.shape[0], k)
    inside, stray = bits_of(m, d)
    assert not stray.any()
    for i in range(m.shape[0]):
        assert list(out[i]) == list(np.flatnonzero(inside[i]))


# ------------------------------------------------------------- _kernels: EM
@st.composite
def kron_args(draw):
    q = draw(st.integers(0, 3))
    dims = [draw(st.sampled_from([1, 2, 3, 4, 0, -2])) if draw(st.integers(0, 7)) == 0
            else draw(st.integers(1, 4)) for _ in range(q)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mats, a, b = [], [], []
    for dj in dims:
        kind = draw(st.sampled_from(["ab", "ab", "dense", "bad"]))
        if kind == "ab":
            mats.append(None)
        elif kind == "dense":
            mats.append(rng.random((max(dj, 0), max(dj, 0))))
        else:
            mats.append(rng.random((max(dj, 0) + 1, max(dj, 0))))
        a.append(float(rng.random()))
        b.append(float(rng.random()))
    if q and draw(st.integers(0, 9)) == 0:
        a = a[:-1]
    return dims, mats, a, b, rng


def _dense(dims, mats, a, b):
    out = np.ones((1, 1))
    for dj, m, aj, bj in zip(dims, mats, a, b):
        f = m if m is not None else np.full((dj, dj), bj) + (aj - bj) * np.eye(dj)
        out = np.kron(out, f)
    return out


@fuzz
@given(args=kron_args(), transpose=st.booleans(), nt=THREADS, extra=st.integers(0, 9))
def test_fuzz_kron_apply(args, transpose, nt, extra):
    dims, mats, a, b, rng = args
    size = math.prod(dims) if dims else 1
    x = rng.random(max(size, 0) + (1 if extra == 0 else 0))
    y = call(_kernels.kron_apply, x, dims, mats, a, b, transpose, nt)
    if y is None:
        return
    D = _dense(dims, mats, a, b)
    expect = (D.T if transpose else D) @ x
    assert np.allclose(y.ravel(), expect)


@fuzz
@given(args=kron_args(), max_iter=st.integers(-1, 4), tol=st.sampled_from([0.0, 1e-9, math.nan]),
       nt=THREADS)
def test_fuzz_em_kron(args, max_iter, tol, nt):
    dims, mats, a, b, rng = args
    size = max(math.prod(dims) if dims else 1, 0)
    w = rng.integers(0, 5, size).astype(float)
    x0 = np.full(size, 1.0)
    res = call(_kernels.em_kron, w, x0, dims, mats, a, b, max_iter, tol, nt)
    if res is None:
        return
    x, iters, change = res
    assert 0 <= iters <= max(max_iter, 0)
    # the oracle: eq. 26 with the dense transition matrix
    D = _dense(dims, mats, a, b)
    xo = x0.copy()
    for _ in range(iters):
        den = D.T @ xo
        r = np.divide(w, den, out=np.zeros_like(w), where=den > 0)
        xo = xo * (D @ r)
    assert np.allclose(x.ravel(), xo, equal_nan=True)


@st.composite
def estep_args(draw):
    q = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 4)) for _ in range(q)]
    U = draw(st.integers(0, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    members = []
    for dj in dims:
        k = draw(st.integers(1, dj))
        members.append(np.sort(np.array([rng.choice(dj, k, replace=False) for _ in range(U)],
                                        dtype=np.int32).reshape(U, k), axis=1))
    subsets = sorted(set(draw(st.lists(st.integers(0, 2**q - 1), min_size=1, max_size=4))))
    coef = rng.random(len(subsets))
    pi = rng.random(dims)
    margs = []
    for s in subsets:
        drop = tuple(j for j in range(q) if not (s >> j) & 1)
        margs.append(pi.sum(axis=drop) if drop else pi)
    weight = rng.integers(1, 4, U).astype(float)
    nchunk = draw(st.integers(1, 3))
    # one corruption at most
    bad = draw(st.sampled_from(["none"] * 6 + ["code", "subset", "marg", "coef", "chunk",
                                                 "weight", "dims"]))
    if bad == "code" and U:
        members[0][0, 0] = draw(st.sampled_from([-1, dims[0], 2**30]))
    elif bad == "subset":
        subsets[-1] = draw(st.sampled_from([-1, 2**q, 2**31 - 1]))
    elif bad == "marg":
        margs[0] = np.append(margs[0], 1.0)
    elif bad == "coef":
        coef = coef[:-1]
    elif bad == "chunk":
        nchunk = draw(st.integers(-2, 0))
    elif bad == "weight":
        weight = weight[:-1] if U else np.ones(1)
    elif bad == "dims":
        dims = dims + [2]
    return members, dims, weight, subsets, coef, margs, nchunk, bad


@fuzz
@given(args=estep_args(), nt=THREADS)
def test_fuzz_exact_estep(args, nt):
    members, dims, weight, subsets, coef, margs, nchunk, bad = args
    res = call(_kernels.exact_estep, members, dims, weight, subsets, coef, margs, nchunk, nt)
    if res is None:
        assert bad != "none"
        return
    accs, ll = res
    # oracle: per pattern z = sum_S coef_S sum_{cells of the product} marg_S
    q = len(members)
    exp = [np.zeros_like(np.asarray(m, dtype=float).ravel()) for m in margs]
    ll_o = 0.0
    for u in range(len(weight)):
        cells = []
        for s in subsets:
            axes = [j for j in range(q) if (s >> j) & 1]
            shape = [dims[j] for j in axes]
            cs = [int(np.ravel_multi_index(c, shape)) if axes else 0
                  for c in itertools.product(*[members[j][u] for j in axes])]
            cells.append(cs)
        z = sum(c * np.asarray(m).ravel()[cs].sum() for c, m, cs in zip(coef, margs, cells))
        if not z > 0:
            continue
        ll_o += weight[u] * math.log(z)
        for si, cs in enumerate(cells):
            for c in cs:
                exp[si][c] += weight[u] * coef[si] / z
    for got, want in zip(accs, exp):
        assert np.allclose(got, want)
    assert math.isclose(ll, ll_o, rel_tol=1e-9, abs_tol=1e-9)


# ----------------------------------------------------------- _emd (public)
@st.composite
def grounds(draw, d):
    kind = draw(st.sampled_from(["equal", "ordered", "values", "tree", "bad"]))
    if kind in ("equal", "ordered"):
        return kind
    if kind == "values":
        return list(draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=d, max_size=d)))
    if kind == "tree" and d >= 1:
        groups = draw(st.integers(1, max(d, 1)))
        rows = [f"v{i};g{i % groups};*" for i in range(d)]
        return anonset.Hierarchy.from_csv("\n".join(rows) + "\n")
    return draw(st.sampled_from(["manhattan", 3, None]))


@fuzz
@given(data=st.data(), d=st.integers(0, 9), n=st.integers(0, 6), nt=THREADS)
def test_fuzz_emd_batch(data, d, n, nt):
    elems = st.one_of(st.floats(0, 100, allow_nan=False), st.integers(0, 50),
                      st.sampled_from([-1.0, math.nan, math.inf, 0.0]))
    P = np.array(data.draw(st.lists(st.lists(elems, min_size=d, max_size=d), min_size=n,
                                    max_size=n)), dtype=float).reshape(n, d)
    qv = np.array(data.draw(st.lists(elems, min_size=d, max_size=d + data.draw(st.integers(0, 1)))),
                  dtype=float)
    g = data.draw(grounds(d))
    if isinstance(g, anonset.Hierarchy):
        g = anonset.Ground.tree(g)
    out = call(anonset.emd_batch, P, qv, g, n_threads=max(nt, 1))
    if out is None:
        return
    assert out.shape == (n,)
    assert np.all(np.isfinite(out)) and np.all(out >= -1e-12) and np.all(out <= 1 + 1e-9)
    for i in range(n):
        assert math.isclose(out[i], anonset.emd(P[i], qv, g), rel_tol=1e-9, abs_tol=1e-9)
        ref = emd_reference(P[i], qv, g if not isinstance(g, list) else
                                    anonset.Ground.values(g))
        assert math.isclose(out[i], ref, rel_tol=1e-6, abs_tol=1e-6)


# ------------------------------------------------------ _semantic (public)
@fuzz
@given(data=st.data(), F=st.integers(1, 70), l=st.integers(-1, 6),
       dd=st.sampled_from([-1.0, 0.0, 1.0, 2.0, 3.5, 100.0]),
       algorithm=st.sampled_from(["simple", "duplicate", "other"]), nt=THREADS)
def test_fuzz_semantic(data, F, l, dd, algorithm, nt):
    if data.draw(st.booleans()):
        dist = semantic.SemanticDistance.ordered(F)
    else:
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        m = rng.integers(0, 5, (F, F)).astype(float)
        m = np.triu(m, 1) + np.triu(m, 1).T
        if data.draw(st.integers(0, 5)) == 0:
            m[0, min(1, F - 1)] = -1.0                     # not a distance
        dist = call(semantic.SemanticDistance.from_matrix, m)
        if dist is None:
            return
    n = data.draw(st.integers(0, 30))
    codes = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).integers(
        -1 if data.draw(st.integers(0, 5)) == 0 else 0, F, n)
    ok = call(semantic.feasible_values, dist, l, dd)
    sets = call(semantic.semantic_sets, codes, dist, l, dd, algorithm=algorithm, seed=1,
                n_threads=None if nt <= 0 else nt)
    if sets is None:
        return
    assert ok is not None and ok[codes].all() and (codes >= 0).all()
    assert sets.shape == (n, (F + 63) // 64)
    inside, stray = bits_of(sets, F)
    assert not stray.any() and (inside.sum(axis=1) == l).all()
    assert inside[np.arange(n), codes].all()
    assert semantic.is_diverse(sets, dist, l, dd).all()


# ------------------------------------------------------------ _lgb (public)
@fuzz
@given(codes=st.lists(st.integers(-2, 12), max_size=40), l=st.integers(-1, 6))
def test_fuzz_local_bucketization(codes, l):
    c = np.sort(np.array(codes, dtype=np.int64))
    res = call(lgb.local_bucketization, c, l)
    if res is None:
        return
    bucket, nb = res
    assert len(bucket) == len(c) and nb >= 0
    for b in range(nb):
        vals = c[bucket == b]
        # Corollary 2: >= l values in each bucket, each value at most once
        assert len(vals) >= l and len(set(vals.tolist())) == len(vals)


@fuzz
@given(data=st.data(), n=st.integers(0, 40), k=st.integers(-1, 6), l=st.integers(-1, 4),
       method=st.sampled_from(["mdp", "tds", "nope"]))
def test_fuzz_lgb(data, n, k, l, method):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    df = pd.DataFrame({"age": rng.integers(17, 90, n), "zip": rng.choice(list("abcd"), n),
                       "dis": rng.choice(list("pqrstu"), n)})
    if n and data.draw(st.integers(0, 6)) == 0:
        df.loc[0, "zip"] = None
    res = call(lgb.lgb, df, qi=["age", "zip"], sensitive=["dis"], k=k, l=l, method=method,
               seed=1, research_seed=True)
    if res is None:
        return
    assert res.n == n
    v = lgb.verify(res)
    assert all(bool(x) for x in v.values() if isinstance(x, (bool, np.bool_))), v


# ------------------------------------------------------------ _msa (public)
@fuzz
@given(data=st.data(), n=st.integers(0, 30), k=st.integers(-1, 8),
       t=st.sampled_from([-0.1, 0.0, 0.1, 0.3, 1.0, 1.5, math.nan]),
       algorithm=st.sampled_from(["pca", "cluster", "microagg", "nope"]))
def test_fuzz_msa(data, n, k, t, algorithm):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    df = pd.DataFrame({"age": rng.integers(17, 90, n), "hours": rng.integers(1, 99, n),
                       "inc": rng.integers(0, 5, n), "dis": rng.choice(list("pqrs"), n)})
    res = call(msa.anonymize_msa, df, ["age", "hours"], ["inc", "dis"], k, t,
               algorithm=algorithm, seed=1, research_seed=True, n_threads=1)
    if res is None:
        return
    assert res.sizes.sum() == n and res.sizes.min() >= min(k, n)
    assert res.t_achieved <= t + 1e-9
