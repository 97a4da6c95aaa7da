"""Reconstruction (paper 000, Sec. V-D): Kronecker vs dense EM, eq. 26 vs an
independent iterative Bayesian update, the exact-likelihood EM vs a dense
oracle, ValueAdding (eq. 18), and bias over many seeds."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset.randomized import _kernels
from anonset.randomized.params import AttributeParams
from anonset.randomized import reconstruct as reconstruct_module
from anonset.randomized.reconstruct import likelihood_ratio
from anonset.schema import Attribute, Schema
from anonset.randomized.settable import SetTable


def _factor(par):
    d = par.d
    return np.full((d, d), par.other_inclusion) + np.eye(d) * (par.inclusion - par.other_inclusion)


def dense_delta(params):
    """delta of eq. 19 as an explicit |C| x |C| matrix (reference only)."""
    D = np.ones((1, 1))
    for par in params:
        D = np.kron(D, _factor(par))
    return D


def dense_em(w, params, iters):
    """Eq. 26 with the dense delta; returns x / prod eta (eq. 27)."""
    D = dense_delta(params)
    w = w.ravel().astype(float)
    x = w.copy()
    for _ in range(iters):
        y = D.T @ x
        r = np.divide(w, y, out=np.zeros_like(w), where=y > 0)
        x = x * (D @ r)
    return x / math.prod(p.eta for p in params)


@st.composite
def em_problems(draw):
    q = draw(st.integers(1, 3))
    params = []
    for j in range(q):
        d = draw(st.integers(2, 6))
        eta = draw(st.integers(1, d))
        p = draw(st.sampled_from([0.0, 0.35, 0.8, 1.0]))
        params.append(AttributeParams(f"a{j}", p, eta, d))
    dims = [p.d for p in params]
    w = np.array(draw(st.lists(st.integers(0, 50), min_size=math.prod(dims),
                               max_size=math.prod(dims)))).reshape(dims)
    return params, w


@given(em_problems(), st.integers(1, 40))
def test_kronecker_em_equals_dense(problem, iters):
    params, w = problem
    dims = list(w.shape)
    a = [p.inclusion for p in params]
    b = [p.other_inclusion for p in params]
    x, it, change = _kernels.em_kron(w, w, dims, [None] * len(dims), a, b, iters, 0.0)
    x = x / math.prod(p.eta for p in params)
    ref = dense_em(w, params, iters)
    np.testing.assert_allclose(x.ravel(), ref, rtol=1e-9, atol=1e-9)
    assert it == iters or change == 0.0     # a fixed point stops the iteration early


@given(em_problems())
@settings(max_examples=30)
def test_kron_apply_general_matrices(problem):
    params, w = problem
    rng = np.random.default_rng(0)
    mats = [rng.random((p.d, p.d)) for p in params]
    D = np.ones((1, 1))
    for m in mats:
        D = np.kron(D, m)
    x = rng.random(w.size)
    dims = list(w.shape)
    zeros = [0.0] * len(dims)
    y = _kernels.kron_apply(x, dims, mats, zeros, zeros)
    np.testing.assert_allclose(y.ravel(), D @ x, rtol=1e-12)
    yt = _kernels.kron_apply(x, dims, mats, zeros, zeros, transpose=True)
    np.testing.assert_allclose(yt.ravel(), D.T @ x, rtol=1e-12)


def ibu(observed, transition, iters):
    """Iterative Bayesian update (Agrawal & Aggarwal 2001) written with plain
    loops: transition[a][b] = P(observe b | true a), observed[b] counts."""
    k = len(observed)
    total = sum(observed)
    f = [observed[b] / total for b in range(k)]
    for _ in range(iters):
        new = [0.0] * k
        for b in range(k):
            den = sum(transition[g][b] * f[g] for g in range(k))
            if den == 0:
                continue
            for a in range(k):
                new[a] += observed[b] / total * transition[a][b] * f[a] / den
        f = new
    return f


def _one_attr_table(codes, d, p, eta, seed):
    attr = Attribute("s", domain=tuple(range(d)))
    par = AttributeParams("s", p, eta, d)
    from anonset.randomized.publish import sample_sets
    masks = sample_sets({"s": np.asarray(codes, np.int32)}, {"s": par}, {"s": 0},
                        anonset.io.keys.make_key(seed, research_seed=True))
    return SetTable(Schema((attr,)), masks, {"s": par})


def test_paper_em_q1_equals_iterative_bayesian_update():
    rng = np.random.default_rng(3)
    codes = rng.choice(6, size=4000, p=[.4, .25, .15, .1, .06, .04])
    table = _one_attr_table(codes, 6, 0.6, 3, seed=1)
    par = table.params["s"]
    ct = anonset.reconstruct(table, ["s"], "em", max_iter=150, tol=0.0, tol_ll=0.0,
                             accelerate=False)
    w = anonset.count_w(table, ["s"])
    T = _factor(par) / par.eta               # rows: P(value b is in the set | true a) / eta
    f = ibu(list(w.astype(float)), T.tolist(), 150)
    np.testing.assert_allclose(ct.counts, np.array(f) * table.n_rows, rtol=1e-9)
    assert ct.info["iterations"] == 150


def test_exact_em_equals_dense_oracle():
    rng = np.random.default_rng(4)
    N = 2500
    df = pd.DataFrame({"a": rng.choice(5, N, p=[.4, .3, .15, .1, .05]),
                       "b": rng.choice(4, N, p=[.5, .2, .2, .1])})
    schema = Schema.infer(df, sensitive=list(df.columns))
    for model in (anonset.Diversity(2), anonset.Closeness(0.15)):
        pub = anonset.publish(df, model, schema, seed=5, research_seed=True)
        ct = anonset.reconstruct(pub, ["a", "b"], "exact_em", max_iter=200, tol=0.0, tol_ll=0.0,
                                 accelerate=False)
        L = np.ones((N, 20))
        for j, (name, rep) in enumerate((("a", 4), ("b", 5))):
            par = pub.params[name]
            u = likelihood_ratio(par.p, par.eta, par.d)
            mem = np.zeros((N, par.d), bool)
            mem[np.arange(N)[:, None], pub.members(name)] = True
            f = np.where(mem, 1.0, u)
            L *= np.repeat(f, rep, axis=1) if j == 0 else np.tile(f, (1, rep))
        pi = np.full(20, 1 / 20)
        for _ in range(200):
            pi = pi * (L / (L @ pi)[:, None]).sum(0) / N
        np.testing.assert_allclose(ct.counts.ravel(), pi * N, rtol=1e-9, atol=1e-9)


def test_exact_em_thread_invariant():
    df = anonset.datasets.load_adult().head(8000)
    schema = anonset.datasets.adult_schema(df, attributes=["age", "occupation", "sex"])
    pub = anonset.publish(df, anonset.Diversity({"age": 3, "occupation": 3, "sex": 1}), schema,
                          seed=2, research_seed=True,
                          allow_clear=["sex", "age", "occupation"])   # l = 3 beside rare values
    runs = [anonset.reconstruct(pub, ["age", "occupation"], "exact_em", max_iter=30, n_threads=t)
            for t in (1, 2, 3)]
    for r in runs[1:]:
        assert r.counts.tobytes() == runs[0].counts.tobytes()


def test_exact_qids_give_per_cell_estimates():
    """Paper 004: an exact QID has delta = identity, so each QID cell's total
    is reproduced exactly and the sensitive attribute is estimated per cell."""
    rng = np.random.default_rng(5)
    N = 6000
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], N), "disease": rng.choice(list("abcdef"), N)})
    schema = Schema.infer(df, sensitive=["disease"], exact=["sex"])
    pub = anonset.publish(df, anonset.Diversity(3), schema, seed=0, research_seed=True)
    assert pub.params["sex"].exact and pub.params["sex"].eta == 1
    truth = anonset.true_crosstab(df, schema, ["sex", "disease"])
    # H64: ValueAdding spread each cell's N - w over every QID cell (eq. 18 as
    # written), which keeps the totals only at p = 1; at p < 1 it is eq. 18
    # within each QID cell now.  Its per-cell estimate is eq. 18 on that cell.
    closer = anonset.publish(df, anonset.Closeness(0.3), schema, seed=0, research_seed=True)
    assert closer.params["disease"].inclusion < 1
    for table in (pub, closer):
        for method in ("em", "exact_em", "value_adding"):
            ct = anonset.reconstruct(table, ["sex", "disease"], method, max_iter=3000)
            np.testing.assert_allclose(ct.counts.sum(axis=1), truth.counts.sum(axis=1),
                                       rtol=1e-6)
        w = anonset.count_w(table, ["sex", "disease"])
        pa = table.params["disease"]
        va = anonset.reconstruct(table, ["sex", "disease"], "value_adding").counts
        for c in range(2):
            Nc = truth.counts[c].sum()
            want = w[c] * pa.inclusion / pa.eta + (Nc - w[c]) * (1 - pa.inclusion) / (6 - pa.eta)
            np.testing.assert_allclose(va[c], want, rtol=1e-12)
        # without the exact QID it is eq. 18 as the paper writes it
        wd = anonset.count_w(table, ["disease"])
        N = table.n_rows
        np.testing.assert_allclose(
            anonset.reconstruct(table, ["disease"], "value_adding").counts,
            wd * pa.inclusion / pa.eta + (N - wd) * (1 - pa.inclusion) / (6 - pa.eta),
            rtol=1e-12)
    np.testing.assert_allclose(anonset.count_w(pub, ["sex"]), truth.counts.sum(axis=1))


def test_totals_and_info():
    df = anonset.datasets.load_adult().head(5000)
    schema = anonset.datasets.adult_schema(df, attributes=["age", "education", "race"])
    pub = anonset.publish(df, anonset.Diversity(3), schema, seed=9, research_seed=True,
                          allow_clear=["age", "education", "race"])   # l = 3 beside rare values
    for m in anonset.reconstruct.__globals__["METHODS"]:
        ct = anonset.reconstruct(pub, ["age", "education"], m, max_iter=50, seed=1,
                                 tol_ll=0.0, accelerate=False)
        assert ct.total == pytest.approx(5000)
        assert ct.shape == (9, 16)
        if m in ("em", "exact_em"):
            assert ct.info["iterations"] == 50 and ct.info["change"] > 0
            assert ct.info["stopped"] == "max_iter" and not ct.info["converged"]
            assert (ct.counts >= 0).all()
    frame = ct.to_frame()
    assert list(frame.columns) == ["age", "education", "count"] and len(frame) == 144


def test_reconstruct_errors(tmp_path):
    df = pd.DataFrame({"a": list("xyzx"), "b": list("uvuv")})
    pub = anonset.publish(df, anonset.Diversity(2), seed=0, research_seed=True,
                          sensitive=list(df.columns), domains={"a": list("xyz"), "b": list("uv")})
    with pytest.raises(ValueError, match="attributes: names 'c', which is not a published"):
        anonset.reconstruct(pub, ["a", "c"])
    with pytest.raises(ValueError, match="^method: got .magic.; expected one of em, exact_em"):
        anonset.reconstruct(pub, ["a"], "magic")
    with pytest.raises(ValueError, match="names an attribute twice"):
        anonset.reconstruct(pub, ["a", "a"])
    with pytest.raises(ValueError, match="max_iter"):
        anonset.reconstruct(pub, ["a"], max_iter=-1)
    with pytest.raises(ValueError, match="n_threads"):
        anonset.reconstruct(pub, ["a"], n_threads=0)
    # the stopping rule's numbers and switch by name (a text tol was a bare
    # TypeError, a text accelerate taken as true), in memory and before a
    # file is read
    for kw, needle in ((dict(tol="x"), "^tol: got 'x'; expected a number >= 0"),
                       (dict(tol=True), "^tol: got True"),
                       (dict(tol_ll=-1.0), "^tol_ll: got -1.0"),
                       (dict(accelerate="yes"), "^accelerate: got 'yes'; expected True or False")):
        for method in ("em", "exact_em"):
            with pytest.raises(anonset.InputError, match=needle):
                anonset.reconstruct(pub, ["a"], method, **kw)
    # the true counts name a wrong attribute as the estimate does (a
    # KeyError, or "'int' object is not iterable")
    for bad, needle in (("c", "attributes: names 'c', which is not a published attribute"),
                        (3, "attributes: got a int"), ([1], "attributes: names 1")):
        with pytest.raises(anonset.InputError, match=needle):
            anonset.true_crosstab(df, pub.schema, bad)
    assert anonset.true_crosstab(df, pub.schema, "a").counts.tolist() == [2, 1, 1]
    from anonset.stream import reconstruct_file
    pub.to_parquet(tmp_path / "p.parquet")
    with pytest.raises(anonset.InputError, match="^tol: got 'x'"):
        reconstruct_file(tmp_path / "p.parquet", ["a"], "em", tol="x")


# ------------------------------------------------------------------ bias
TRUTH_P = np.array([[.30, .10, .05, .05], [.05, .15, .05, .02], [.03, .05, .10, .05]])


def expected_value_adding(x, params):
    """E[eq. 18] = eq. 18 applied to E[w] = delta^T x (eq. 18 is linear in w)."""
    D = dense_delta(params)
    Ew = D.T @ x.ravel()
    P = math.prod(p.inclusion for p in params)
    H = math.prod(p.eta for p in params)
    N, C = x.sum(), x.size
    return (Ew * P / H + (N - Ew) * (1 - P) / (C - H)).reshape(x.shape)


def test_bias_over_200_seeds():
    """Each estimator's mean error per cell over 200 seeds is within 3
    standard errors of its expected bias: 0 for both EMs (the truth is a fixed
    point of eq. 26 given E[w], and the exact EM is maximum likelihood; both
    are consistent), E[eq. 18] - x for ValueAdding (biased: it ignores
    delta's structure), N/|C| - x for Random."""
    N = 20_000
    rng = np.random.default_rng(123)
    cells = rng.choice(12, size=N, p=TRUTH_P.ravel() / TRUTH_P.sum())
    df = pd.DataFrame({"a": cells // 4, "b": cells % 4})
    schema = Schema.infer(df, sensitive=["a", "b"], domains={"a": [0, 1, 2], "b": [0, 1, 2, 3]})
    x = anonset.true_crosstab(df, schema, ["a", "b"]).counts
    params = {"a": AttributeParams("a", 0.75, 2, 3), "b": AttributeParams("b", 1.0, 2, 4)}
    expected = {"em": np.zeros_like(x), "exact_em": np.zeros_like(x),
                "value_adding": expected_value_adding(x, list(params.values())) - x,
                "random": N / x.size - x}
    errors = {m: [] for m in expected}
    for seed in range(200):
        pub = anonset.publish(df, anonset.Closeness(1.0), schema, seed=seed, research_seed=True, params=params)
        w = anonset.count_w(pub, ["a", "b"])
        for m in expected:
            ct = anonset.reconstruct(pub, ["a", "b"], m, max_iter=20_000, tol=1e-5, seed=seed,
                                     w=w if m in ("em", "value_adding") else None)
            errors[m].append(ct.counts - x)
    for m, errs in errors.items():
        errs = np.array(errs)
        mean, se = errs.mean(axis=0), errs.std(axis=0, ddof=1) / np.sqrt(len(errs))
        z = (mean - expected[m]) / se
        assert np.abs(z).max() < 3.0, (m, z.round(2))
    # ValueAdding really is biased here, by many standard errors
    va = np.array(errors["value_adding"])
    assert (np.abs(va.mean(axis=0)) / (va.std(axis=0, ddof=1) / np.sqrt(200))).max() > 10


def test_paper_em_thread_invariant_on_a_large_table():
    """Above the parallel threshold the EM shares each product's tiles among
    threads: the result is bit-identical for any thread count."""
    rng = np.random.default_rng(7)
    dims = [18, 17, 16, 16]                      # 78,336 cells
    w = rng.integers(0, 50, math.prod(dims)).astype(float)
    a, b = [0.5, 0.4, 0.3, 0.6], [0.1, 0.12, 0.05, 0.04]
    runs = [_kernels.em_kron(w, w, dims, [None] * 4, a, b, 25, 0.0, n_threads=t)
            for t in (1, 2, 3)]
    for x, it, ch in runs[1:]:
        assert x.tobytes() == runs[0][0].tobytes() and it == runs[0][1] and ch == runs[0][2]
    # and it is eq. 26: the same as the dense reference on a smaller table
    small = [3, 4, 2]
    ws = rng.integers(0, 50, 24).astype(float)
    params = [AttributeParams(f"a{j}", 0.7, 2, d) for j, d in enumerate(small)]
    xs, _, _ = _kernels.em_kron(ws, ws, small, [None] * 3, [p.inclusion for p in params],
                                [p.other_inclusion for p in params], 30, 0.0, n_threads=2)
    np.testing.assert_allclose(xs.ravel() / 8, dense_em(ws.reshape(small), params, 30), rtol=1e-9)


# ------------------------------------------------------------- count_w methods
def _random_sets(rng, n, d, sizes):
    """n random subsets of range(d) with sizes drawn from `sizes`, as bitmasks."""
    words = (d + 63) // 64
    k = rng.choice(sizes, size=n)
    ranks = np.argsort(np.argsort(rng.random((n, d)), axis=1), axis=1)
    member = ranks < k[:, None]
    bits = np.zeros((n, words * 64), dtype=bool)
    bits[:, :d] = member
    return np.packbits(bits, axis=1, bitorder="little").view("<u8")


@pytest.mark.parametrize("dims,sizes", [
    ([16, 18, 17, 16], [5]),             # the census-shaped q' = 4: fast path
    ([14, 15, 16, 5], [4, 5]),           # varying set sizes, a small L
    ([9, 8, 16, 2], [1, 2, 3]),
    ([6, 40], [2, 3]),                   # q' = 2, L > 32: scalar members
    ([12, 70, 3], [1, 4]),               # a two-word attribute in the records
    ([5, 7, 9, 11, 13], [2, 3]),         # q' = 5: the general prefix expansion
    ([33, 20, 16], [3, 6]),              # L in 17..32: two vectors per row
])
def test_count_w_factorized_equals_direct(dims, sizes):
    rng = np.random.default_rng(sum(dims))
    n = 20_000
    masks = [_random_sets(rng, n, d, [min(s, d) for s in sizes]) for d in dims]
    max_set = math.prod(min(max(sizes), d) for d in dims)
    ref = _kernels.count_w(masks, dims, max_set, 1, method="direct")
    for nt in (1, 2, 3):
        for meth in ("factorized", "auto"):
            got = _kernels.count_w(masks, dims, max_set, nt, method=meth)
            np.testing.assert_array_equal(got, ref, err_msg=f"{meth}, {nt} threads")
    # a set larger than max_set allows is refused by every method
    for meth in ("direct", "factorized"):
        with pytest.raises(ValueError, match="unexpected number"):
            _kernels.count_w(masks, dims, max_set - 1, 2, method=meth)


# ------------------------------------------------ EM kernels, stopping rule, SQUAREM
def test_em_report_loglik_and_simd_paths():
    rng = np.random.default_rng(11)
    dims = [5, 7, 4]
    w = rng.integers(0, 40, math.prod(dims)).astype(float).reshape(dims)
    w.flat[3] = 0.0
    a, b = [0.6, 0.5, 0.7], [0.1, 0.08, 0.1]
    x0 = w + 1.0
    x, rep = _kernels.em_kron(w, x0, dims, [None] * 3, a, b, 1, 0.0, ll_every=1, report=True)
    y = _kernels.kron_apply(x0, dims, [None] * 3, a, b, transpose=True)
    pos = w > 0
    ll = (w[pos] * np.log(y[pos])).sum() - y.sum()
    assert rep["loglik"] == pytest.approx(ll, rel=1e-13)
    # the portable and the AVX2 paths round alike (no fused multiply-add)
    levels = ["generic"] + (["avx2"] if _kernels.simd_level() != "generic" else [])
    runs = [_kernels.em_kron(w, x0, dims, [None] * 3, a, b, 40, 0.0, simd=s, report=True,
                             ll_every=1)
            for s in levels]
    for xr, r in runs[1:]:
        assert xr.tobytes() == runs[0][0].tobytes() and r == runs[0][1]
    # the log the kernel uses
    for v in (1e-300, 1e-5, 0.7, 1.0, 1.5, 2.0, 3.7e4, 1e300):
        assert _kernels.em_log(v) == pytest.approx(math.log(v), rel=3e-16, abs=1e-300)
    # either side of sqrt(2), where the mantissa is halved
    for v in (math.sqrt(2), np.nextafter(math.sqrt(2), 0), np.nextafter(math.sqrt(2), 2)):
        assert _kernels.em_log(v) == pytest.approx(math.log(v), rel=3e-16)
    # below the smallest normal (zero, -0, subnormals, negatives): that value's log
    tiny = np.finfo(np.float64).tiny
    for v in (0.0, -0.0, 5e-324, tiny / 2, -1.0):
        assert _kernels.em_log(v) == _kernels.em_log(tiny)


def test_em_log_likelihood_rule_stops_at_the_gain():
    rng = np.random.default_rng(12)
    dims = [6, 5]
    w = rng.integers(1, 60, 30).astype(float).reshape(dims)
    a, b = [0.5, 0.6], [0.1, 0.1]
    full, rep = _kernels.em_kron(w, w, dims, [None] * 2, a, b, 5000, 0.0, tol_ll=1e-9,
                                 ll_every=3, report=True)
    assert rep["iterations"] < 5000 and rep["iterations"] % 3 == 0
    assert 0 <= rep["gain"] <= 1e-9
    # the gain before the stop was above the tolerance
    _, before = _kernels.em_kron(w, w, dims, [None] * 2, a, b, rep["iterations"] - 3, 0.0,
                                 ll_every=3, report=True)
    assert before["gain"] > 1e-9


def _small_pub(seed=3, n=3000):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(6, n, p=[.35, .25, .15, .1, .1, .05]),
                       "b": rng.choice(5, n, p=[.4, .3, .1, .1, .1]),
                       "c": rng.choice(4, n)})
    return anonset.publish(df, anonset.Diversity({"a": 3, "b": 2, "c": 2}), Schema.infer(df, sensitive=list(df.columns)),
                           seed=seed, research_seed=True)


def test_squarem_reaches_the_em_fixed_point():
    """SQUAREM changes the path, not the fixed point: the accelerated EMs end
    where the plain EMs (the subset-expansion kernel for the exact EM, as
    before the trie) end when run to convergence, and report convergence."""
    pub = _small_pub()
    for method, kw in (("em", {}), ("exact_em", {})):
        fast = anonset.reconstruct(pub, ["a", "b"], method)
        # converged by either rule (which stops first depends on the draw)
        assert fast.info["converged"] and fast.info["stopped"] in ("tol_ll", "tol")
        if method == "em":
            slow = anonset.reconstruct(pub, ["a", "b"], "em", accelerate=False, tol_ll=1e-15,
                                       max_iter=200_000)
        else:
            pm, wt = reconstruct_module._patterns(pub, ["a", "b"])
            x, _ = reconstruct_module.exact_em_patterns(
                [pub.params["a"], pub.params["b"]], [6, 5], pub.n_rows, pm, wt,
                accelerate=False, tol_ll=1e-15, max_iter=200_000, kernel="subsets")
            slow = type(fast)(fast.attributes, fast.domains, x, "exact_em", {})
        assert fast.info["iterations"] * 5 < max(slow.info.get("iterations", 10**6), 10**4)
        # the exact EM's rule (tol_ll 1e-10 per record) stops a near-empty
        # cell up to 0.134 records from the fixed point (8 draws of this
        # table: 0.0002-0.134; the paper EM 0.0001-0.027)
        np.testing.assert_allclose(fast.counts, slow.counts, rtol=0, atol=5e-3 * pub.n_rows ** 0.5)


@pytest.mark.parametrize("method", ["em", "exact_em"])
def test_squarem_never_passes_max_iter(method):
    """A SQUAREM cycle whose extrapolation the safeguard rejects costs 4 EM
    updates, and the loop left room for 3: a run capped at max_iter made
    max_iter + 1 updates (H29: 61 -> 62).  Never over, at most 3 short."""
    from anonset.randomized.params import AttributeParams
    rng = np.random.default_rng(5)
    n, names = 5000, ["a0", "a1", "a2"]
    df = pd.DataFrame({"a0": rng.choice(4, n, p=[.4, .3, .2, .1]),
                       "a1": rng.choice(3, n, p=[.5, .3, .2]),
                       "a2": rng.choice(5, n, p=[.3, .3, .2, .1, .1])})
    pp = {"a0": AttributeParams("a0", 0.3, 2, 4), "a1": AttributeParams("a1", 1.0, 2, 3),
          "a2": AttributeParams("a2", 0.6, 3, 5)}
    pub = anonset.publish(df, anonset.Closeness(0.9), sensitive=names, allow_clear=names,
                          params=pp, domains={c: list(range(k)) for c, k in
                                              zip(names, (4, 3, 5))},
                          seed=5, research_seed=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cap in range(5, 260, 7):
            ct = anonset.reconstruct(pub, names, method, tol=0.0, tol_ll=0.0, max_iter=cap)
            assert cap - 3 <= ct.info["iterations"] <= cap, (cap, ct.info["iterations"])


def test_exact_trie_equals_subset_expansion():
    pub = _small_pub(seed=5, n=4000)
    attrs = ["a", "b", "c"]
    pm, wt = reconstruct_module._patterns(pub, attrs)
    params = [pub.params[x] for x in attrs]
    kws = dict(max_iter=25, tol_ll=0.0, accelerate=False)
    xt, it = reconstruct_module.exact_em_patterns(params, [6, 5, 4], pub.n_rows, pm, wt,
                                                  kernel="trie", **kws)
    xs, is_ = reconstruct_module.exact_em_patterns(params, [6, 5, 4], pub.n_rows, pm, wt,
                                                   kernel="subsets", **kws)
    np.testing.assert_allclose(xt, xs, rtol=1e-10, atol=1e-10)
    assert it["loglik"] == pytest.approx(is_["loglik"], rel=1e-12)
    # thread counts and chunking do not change a bit
    u = [reconstruct_module.likelihood_ratio(p.p, p.eta, d) for p, d in zip(params, [6, 5, 4])]
    pi = np.random.default_rng(0).random((6, 5, 4))
    ref = _kernels.exact_trie(pm, [6, 5, 4], u, wt, pi, 1, 1)
    for nchunk, nt in ((3, 2), (7, 3)):
        G, ll = _kernels.exact_trie(pm, [6, 5, 4], u, wt, pi, nchunk, nt)
        np.testing.assert_allclose(G, ref[0], rtol=1e-13)
    # the kernel refuses tuples out of order
    with pytest.raises(ValueError, match="sorted"):
        _kernels.exact_trie([m[::-1] for m in pm], [6, 5, 4], u, wt[::-1], pi)


def test_thread_choice_keeps_the_faster_and_probes_again():
    from anonset.randomized.emdrive import ThreadChoice
    ch = ThreadChoice(2, True, free=lambda: None)
    costs = {1: 1.0, 2: 5.0}                  # a busy machine: two threads are slower
    used = []
    for _ in range(60):
        nt = ch.threads()
        used.append(nt)
        ch.record(nt, costs[nt])
    assert used[:4] == [1, 2, 1, 2] and ch.used == 1
    assert 4 <= used.count(2) <= 9            # probes again, ever more rarely
    costs = {1: 1.0, 2: 0.6}                  # the machine became quiet
    for _ in range(200):
        nt = ch.threads()
        ch.record(nt, costs[nt])
    assert ch.used == 2
    assert ThreadChoice(4, False).threads() == 1


def test_thread_choice_waits_for_free_cores():
    """n threads are not even probed while fewer than n cores are free, and a
    choice of n is dropped when the machine becomes busy."""
    from anonset.randomized.emdrive import ThreadChoice, free_cores
    free = [1]
    ch = ThreadChoice(2, True, free=lambda: free[0])
    for _ in range(200):
        nt = ch.threads()
        assert nt == 1
        ch.record(nt, 1.0)
    free[0] = 2                               # quiet again: probed, and faster
    for _ in range(200):
        nt = ch.threads()
        ch.record(nt, 1.0 if nt == 1 else 0.5)
    assert ch.used == 2
    free[0] = 1                               # busy again
    for _ in range(16):
        nt = ch.threads()
        ch.record(nt, 1.0 if nt == 1 else 0.5)
    assert ch.threads() == 1 and ch.used == 1
    f = free_cores()
    assert f is None or f >= 1


def test_free_cores_reads_the_runnable_count(tmp_path):
    import os
    from anonset.randomized.emdrive import free_cores
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this system")
    cores = len(os.sched_getaffinity(0))
    stat = tmp_path / "stat"
    stat.write_text("cpu  1 2 3\nprocs_running 1\nprocs_blocked 0\n")
    assert free_cores(str(stat)) == cores
    stat.write_text(f"procs_running {cores + 5}\n")
    assert free_cores(str(stat)) == 1
    stat.write_text("nothing here\n")
    assert free_cores(str(stat)) is None


def test_thread_choice_is_not_won_by_lucky_calls():
    """On a busy machine n threads are usually much slower and now and then
    faster (the other process was off its core): the choice must follow the
    typical call, not the luckiest (the least of the last timings would pick
    n threads after most lucky calls: about 17 of 300 calls here)."""
    from anonset.randomized.emdrive import ThreadChoice
    slow = 0
    for seed in range(5):
        rng = np.random.default_rng(seed)
        ch = ThreadChoice(2, True, free=lambda: None)
        for _ in range(300):
            nt = ch.threads()
            lucky = rng.random() < 0.25
            ch.record(nt, 1.0 if nt == 1 else (0.7 if lucky else 4.0))
            slow += nt == 2
        assert ch.used == 1
    assert slow <= 60                         # the probes only: 4 + 2 per probe


def test_em_last_attribute_longer_than_a_block():
    """A last attribute of more than 256 values (the kernel's run length)
    gives eq. 26 exactly (the NumPy a/b EM of bench/numpy_baseline)."""
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))
    import numpy_baseline as nb
    rng = np.random.default_rng(13)
    dims = [3, 300]
    w = rng.integers(0, 9, 900).astype(float).reshape(dims)
    a, b = [0.5, 0.3], [0.1, 0.002]
    x, _, _ = _kernels.em_kron(w, w + 1, dims, [None, None], a, b, 7, 0.0, 1)
    ref, _, _ = nb.em_ab(w, w + 1, a, b, 7, 0.0)
    np.testing.assert_allclose(x, ref, rtol=1e-12)


@pytest.mark.parametrize("seed", [8, 11])
def test_squarem_never_zeroes_a_cell(seed):
    """An extrapolation that takes a cell to <= 0 must not set it to 0: EM's
    multiplicative updates never revive a zero cell, and clipping at 0 made
    the exact EM stop at a false fixed point (these two seeds: L1/N 0.23
    where plain EM reaches 0.016 and 0.043)."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    d, n = 7, 20_000
    v = rng.choice(d, n, p=rng.dirichlet(np.full(d, 0.3)))
    schema = anonset.Schema((anonset.Attribute("a", domain=tuple(range(d))),))
    pub = anonset.publish(pd.DataFrame({"a": v}), anonset.Diversity(6), schema, seed=seed,
                          research_seed=True)
    truth = np.bincount(v, minlength=d)
    acc = anonset.reconstruct(pub, ["a"], "exact_em")
    plain = anonset.reconstruct(pub, ["a"], "exact_em", accelerate=False)
    l1 = [np.abs(c.counts - truth).sum() / n for c in (acc, plain)]
    assert abs(l1[0] - l1[1]) < 0.005, l1
    assert acc.info["loglik"] >= plain.info["loglik"] - 1e-6 * n


def _trie_reference(masks, dims, u, wt, pi):
    """G and the log-likelihood of the exact E-step by brute force over cells
    (libm's log), for checking the trie kernel."""
    q = len(dims)
    G, ll = np.zeros(dims), 0.0
    for i in range(len(wt)):
        f = np.ones(dims)
        for j in range(q):
            inset = np.array([(int(masks[j][i, a >> 6]) >> (a & 63)) & 1
                              for a in range(dims[j])], dtype=float)
            shape = [1] * q
            shape[j] = dims[j]
            f = f * (u[j] + (1 - u[j]) * inset).reshape(shape)
        Z = float((pi * f).sum())
        if Z > 0:
            ll += wt[i] * math.log(Z)
            G += wt[i] / Z * f
    return G, ll


@pytest.mark.parametrize("dims,u", [((70, 5), (0.0, 0.3)), ((9,), (0.2,)), ((4, 66, 3), (0.5, 0.0, 0.0))])
def test_exact_trie_matches_brute_force(dims, u):
    """The trie kernel (blocks of leaves, vectorized log terms, multiword
    sets) against the E-step written out cell by cell: G to 1e-12, the
    log-likelihood to 1e-13 (a log of its own, within 1e-16 of libm's); a
    tuple impossible under pi adds nothing."""
    rng = np.random.default_rng(sum(dims))
    q, words = len(dims), [(d + 63) // 64 for d in dims]
    tuples = set()
    while len(tuples) < 300:             # (9,) has 511 nonempty sets
        tuples.add(tuple(frozenset(rng.choice(d, size=rng.integers(1, d + 1), replace=False)
                                   .tolist()) for d in dims))
    masks = [np.zeros((len(tuples), w), dtype=np.uint64) for w in words]
    for i, t in enumerate(tuples):
        for j, s in enumerate(t):
            for a in s:
                masks[j][i, a >> 6] |= np.uint64(1 << (a & 63))
    # sorted by the bytes of the concatenated tuple, as the EM driver does
    srt, _ = reconstruct_module._unique_rows(np.concatenate(masks, axis=1))
    cols, c0 = [], 0
    for w in words:
        cols.append(np.ascontiguousarray(srt[:, c0:c0 + w]))
        c0 += w
    wt = rng.integers(1, 9, size=len(srt)).astype(np.float64)
    pi = rng.random(dims)
    pi[(0,) * q] = 0.0                          # some tuples lose mass where u = 0
    G, ll = _kernels.exact_trie(cols, list(dims), list(u), wt, pi, 4, 2)
    Gr, llr = _trie_reference(cols, dims, u, wt, pi)
    np.testing.assert_allclose(G, Gr, rtol=1e-12, atol=1e-12)
    assert ll == pytest.approx(llr, rel=1e-13)
    # a repeated tuple and a bit outside a domain are refused by name
    rep = [np.concatenate([c, c[-1:]]) for c in cols]
    with pytest.raises(ValueError, match="sorted"):
        _kernels.exact_trie(rep, list(dims), list(u), np.append(wt, 1.0), pi)
    if dims[-1] % 64:
        bad = [c.copy() for c in cols]
        bad[-1][0, -1] |= np.uint64(1) << np.uint64(dims[-1] % 64)
        with pytest.raises(ValueError, match="outside the domain"):
            _kernels.exact_trie(bad, list(dims), list(u), wt, pi)


def test_count_w_unsorted_factorized_many_rows_and_threads():
    """q' = 4 with a grouping attribute of few patterns: the factorized count
    runs without its sort (every pattern's counters in cache) and splits the
    rows among threads; each V is multiplied out after 8,192 rows.  The same
    w as the direct count for any thread count, and a set larger than max_set
    is still refused."""
    rng = np.random.default_rng(7)
    dims, n = [14, 15, 16, 5], 150_000
    masks = [_random_sets(rng, n, d, [min(s, d) for s in (3, 5)]) for d in dims]
    max_set = math.prod(min(5, d) for d in dims)
    ref = _kernels.count_w(masks, dims, max_set, 1, method="direct")
    for nt in (1, 2, 3):
        got = _kernels.count_w(masks, dims, max_set, nt, method="factorized")
        np.testing.assert_array_equal(got, ref, err_msg=f"{nt} threads")
    assert int(ref.sum()) == int(np.prod([np.unpackbits(m.view(np.uint8), axis=1).sum(axis=1)
                                          for m in masks], axis=0).sum())
    with pytest.raises(ValueError, match="unexpected number"):
        _kernels.count_w(masks, dims, max_set - 1, 2, method="factorized")


def test_an_attribute_whose_sets_are_its_whole_domain_is_refused_on_every_path(tmp_path,
                                                                                 capsys):
    """HealthInsurance's health ('yes' 92 %) published at l = 2 = d: every
    set is {yes, no}, so the table says nothing of it, and `anonset
    reconstruct --attributes health,ethnicity` printed the EM's starting
    point, a 50/50 split, as counts.  Every path now refuses such an
    attribute and names the informative ones; the audit's attack (whose
    prior for it is that same uniform split) still runs."""
    from anonset import dask as adask
    from anonset.cli import main
    from anonset.stream import reconstruct_file
    from anonset.validate import InputError
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"health": rng.choice(["yes", "no"], n, p=[0.92, 0.08]),
                       "eth": rng.choice(["a", "b", "c"], n, p=[0.7, 0.2, 0.1]),
                       "sex": rng.choice(["f", "m"], n)})
    kw = dict(sensitive=["health", "eth"], exact=["sex"],
              domains={"health": ["yes", "no"], "eth": ["a", "b", "c"]},
              seed="whole-domain-refusal-test-key-00001")
    pub = anonset.publish(df, anonset.Diversity(2), **kw)
    assert pub.params["health"].eta == 2 and pub.params["eth"].eta == 2
    want = (r"attributes: column 'health': every published set of it is its whole domain "
            r"\(eta = d = 2\), so the table says nothing of its values.*expected attributes "
            r"whose sets carry information \(eta < d, p > 0\): one of \['eth', 'sex'\]")
    pub.to_parquet(tmp_path / "p.parquet")
    dpub = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                         scheduler="sync", **kw)
    for method in ("em", "exact_em", "value_adding"):
        for run in (lambda: anonset.reconstruct(pub, ["health", "eth"], method),
                    lambda: reconstruct_file(tmp_path / "p.parquet", ["eth", "health"], method,
                                             chunk_rows=700),
                    lambda: adask.reconstruct(dpub, ["health"], method, scheduler="sync")):
            with pytest.raises(InputError, match=want):
                run()
    df.to_csv(tmp_path / "p.csv", index=False)
    capsys.readouterr()
    assert main(["anonymize", str(tmp_path / "p.csv"), "-o", str(tmp_path / "c.parquet"),
                 "--sensitive", "health,eth", "--exact", "sex", "--l", "2",
                 "--domain", "health=yes,no", "--domain", "eth=a,b,c"]) == 0
    assert "WARNING: the sets of health carry no information (each set the whole domain, as " \
        "at l = d, or drawn with p = 0): reconstruct refuses these columns" in \
        capsys.readouterr().err
    assert main(["reconstruct", str(tmp_path / "p.parquet"), "--attributes", "health,eth",
                 "-o", str(tmp_path / "ct.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 'health': every published set" in err
    assert not (tmp_path / "ct.csv").exists()
    # the informative ones still reconstruct, and the audit's attack runs
    ct = anonset.reconstruct(pub, ["eth", "sex"])
    assert abs(ct.total - n) < 1e-6
    rep = anonset.audit(pub, attack=True, n_targets=300, seed=0)
    prior = rep.attack.summary.set_index("attribute")["prior_only"]
    assert prior["health"] == pytest.approx(0.5, abs=0.1)   # the uniform prior's guess
    # sets drawn with p = 0 (given parameters) say nothing either
    from anonset.randomized.params import AttributeParams
    p0 = anonset.publish(df, anonset.Closeness(0.2), sensitive=["eth"], exact=["sex"],
                         drop=["health"], domains={"eth": ["a", "b", "c"]},
                         params={"eth": AttributeParams("eth", 0.0, 1, 3, t=0.2,
                                                        ground="equal")})
    with pytest.raises(InputError, match=r"column 'eth': every published set of it is drawn "
                                         r"without regard to the true value \(p = 0, eta = 1\)"):
        anonset.reconstruct(p0, ["eth", "sex"])


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(2, 300), min_size=1, max_size=3), seed=st.integers(0, 2**31),
       data=st.data())
def test_exact_trie_reads_members_as_it_reads_words(dims, seed, data):
    """Sets given as their members (a wide domain's few values, read without
    scanning its zero words) give the same G and log-likelihood, bit for bit,
    as the words; the tuples' order is checked from the members as memcmp
    checks it from the words (values in one byte, across words), so a sorted
    table passes and a swapped or repeated tuple is refused."""
    rng = np.random.default_rng(seed)
    ks = [data.draw(st.integers(1, max(1, min(d - 1, 6)))) for d in dims]
    words = [(d + 63) // 64 for d in dims]
    n = data.draw(st.integers(2, 120))
    masks = [np.zeros((n, w), dtype=np.uint64) for w in words]
    for j, (d, k) in enumerate(zip(dims, ks)):
        for i in range(n):
            # values bunched in a few bytes now and then: ties broken inside a byte
            pool = rng.choice(min(d, 16), size=k, replace=False) if rng.random() < .3 and d >= 16 \
                else rng.choice(d, size=k, replace=False)
            for a in pool:
                masks[j][i, a >> 6] |= np.uint64(1 << (int(a) & 63))
    srt, wt = reconstruct_module._unique_rows(np.concatenate(masks, axis=1),
                                              np.ones(n, dtype=np.float64))
    cols, c0 = [], 0
    for w in words:
        cols.append(np.ascontiguousarray(srt[:, c0:c0 + w]))
        c0 += w
    mems = [_kernels.members(c, d, k) for c, d, k in zip(cols, dims, ks)]
    u = list(rng.random(len(dims)) * 0.5)
    pi = rng.random(dims)
    G0, ll0 = _kernels.exact_trie(cols, list(dims), u, wt, pi, 2, 2)
    pick = [data.draw(st.booleans()) for _ in dims]
    G1, ll1 = _kernels.exact_trie(cols, list(dims), u, wt, pi, 2, 2,
                                  [m if p else None for m, p in zip(mems, pick)])
    assert np.array_equal(G0, G1) and ll0 == ll1
    if len(srt) >= 2:
        i = data.draw(st.integers(0, len(srt) - 2))
        for bad in (np.r_[0:i, i + 1, i, i + 2:len(srt)], np.r_[0:len(srt), len(srt) - 1]):
            with pytest.raises(ValueError, match="sorted"):
                _kernels.exact_trie([c[bad] for c in cols], list(dims), u, wt[bad], pi, 1, 1,
                                    [m[bad] for m in mems])
    with pytest.raises(ValueError, match=r"members\[0\] must lie in"):
        _kernels.exact_trie(cols, list(dims), u, wt, pi, 1, 1,
                            [mems[0] + dims[0]] + [None] * (len(dims) - 1))


def test_exact_trie_checks_the_order_pair_by_pair():
    """The trie compares the first tuple of each group only and finds a
    group's end by galloping, which stepped over a tuple out of order inside a
    run of equal sets (set 9 between two 8s below): accepted, with a wrong
    E-step.  The pair-by-pair pass (on by default; an EM runs it on its first
    update) refuses it, with the sets read from their words or members."""
    def masks(vals, d):
        a = np.zeros((len(vals), (d + 63) // 64), dtype=np.uint64)
        for i, v in enumerate(vals):
            a[i, v >> 6] |= np.uint64(1 << (v & 63))
        return a
    dims = [89, 2, 11]
    cols = [masks([8, 8, 9, 8, 10], 89), masks([0, 1, 1, 1, 0], 2), masks([5, 8, 0, 1, 4], 11)]
    pi = np.random.default_rng(1).random(dims)
    args = (cols, dims, [.1, .1, .1], np.ones(5), pi, 1, 1)
    _kernels.exact_trie(*args, check_order=False)         # the trie's own checks pass it
    for mem in (None, [_kernels.members(c, d, 1) for c, d in zip(cols, dims)]):
        with pytest.raises(ValueError, match="sorted"):
            _kernels.exact_trie(*args, members=mem)


def test_an_em_stopped_by_its_cap_warns_and_says_so(tmp_path, capsys):
    """semantic-analyze stopped its EM at a hidden cap of 3,000 updates and
    said nothing (25 of 168 cells more than 10 records from a converged
    run); the Python API of both estimators said it only in ``info``.  An
    EM stopped by its cap now issues a ConvergenceWarning, in Python and on
    the command line, and semantic-analyze takes --max-iter and --tol."""
    import warnings
    from anonset.cli import main
    from anonset.datasets import semantic as SD
    from anonset.randomized import semantic as S
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.choice(list("xyzw"), 400), "b": rng.choice(list("uvt"), 400)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"])
    for method in ("em", "exact_em"):
        with pytest.warns(anonset.ConvergenceWarning, match=f"^{method}: NOT converged: stopped "
                                                           "by the cap of 2 EM updates"):
            ct = anonset.reconstruct(pub, ["a", "b"], method, max_iter=2, tol=0, tol_ll=0)
        assert ct.info["converged"] is False
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.ConvergenceWarning)
            assert anonset.reconstruct(pub, ["a", "b"], method).info["converged"]
    ds = SD.income(n=3000)
    sem = S.semantic_publish(ds.frame, ds.sensitive, 3, 2, qids=list(ds.qids),
                             domain=list(ds.domain), allow_clear=[ds.sensitive])
    with pytest.warns(anonset.ConvergenceWarning, match="^semantic_em: NOT converged"):
        ct = S.analyze(sem, max_iter=5)
    assert ct.info["converged"] is False and ct.info["iterations"] == 5
    ok = S.analyze(sem, max_iter=100_000, tol=1e-2)
    assert ok.info["converged"] and ok.info["iterations"] < 100_000
    with pytest.raises(anonset.InputError, match="^max_iter: got 0"):
        S.analyze(sem, max_iter=0)
    sem.to_parquet(tmp_path / "s.parquet")
    capsys.readouterr()
    assert main(["semantic-analyze", str(tmp_path / "s.parquet"), "-o", str(tmp_path / "o.csv"),
                 "--max-iter", "5"]) == 0
    cap = capsys.readouterr()
    assert "5 EM updates (NOT converged: stopped by --max-iter 5)" in cap.out, cap.out
    assert "WARNING: semantic_em: NOT converged" in cap.err, cap.err
    assert main(["semantic-analyze", str(tmp_path / "s.parquet"), "--estimator", "linear",
                 "--max-iter", "5"]) == 2
    assert "--max-iter: and --tol apply to the EM only" in capsys.readouterr().err


def test_the_cli_takes_the_log_likelihood_tolerance(tmp_path, capsys):
    """`converged` means the stopping rule was met, not how far the maximum
    lies (a flat likelihood: docs/algorithms.md, "EM stopping rule"): the
    command line takes the rule's tolerance, as the API does, and gives the
    API's numbers; a negative one is refused by name."""
    from anonset.cli import main
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.choice(list("pqrs"), 3000, p=[.4, .3, .2, .1]),
                       "b": rng.choice(list("xyz"), 3000)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"])
    pub.to_parquet(tmp_path / "p.parquet")
    for tol_ll in ("1e-13", "1e-6"):
        capsys.readouterr()
        assert main(["reconstruct", str(tmp_path / "p.parquet"), "--attributes", "a,b",
                     "--method", "exact_em", "--tol-ll", tol_ll, "--tol", "0", "-o",
                     str(tmp_path / "ct.csv")]) == 0
        said = capsys.readouterr()
        assert f"(rule {float(tol_ll):g})" in said.out + said.err
        got = pd.read_csv(tmp_path / "ct.csv").sort_values(["a", "b"])["count"].to_numpy()
        # (--tol 0: the cell rule stopped some fresh draws first, a flaky
        # '(rule ...)' missing from the summary)
        api = anonset.reconstruct(pub, ["a", "b"], "exact_em", tol_ll=float(tol_ll), tol=0)
        want = api.to_frame().sort_values(["a", "b"])["count"].to_numpy()
        assert np.allclose(got, want, rtol=0, atol=1e-6)
        assert api.info["tol_ll"] == float(tol_ll)
    capsys.readouterr()
    assert main(["reconstruct", str(tmp_path / "p.parquet"), "--attributes", "a",
                 "--tol-ll", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tol-ll" in err
