"""Reconstruction (paper 000, Sec. V-D): Kronecker vs dense EM, eq. 26 vs an
independent iterative Bayesian update, the exact-likelihood EM vs a dense
oracle, ValueAdding (eq. 18), and bias over many seeds."""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset.randomized import _kernels
from anonset.randomized.params import AttributeParams
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
    ct = anonset.reconstruct(table, ["s"], "em", max_iter=150, tol=0.0)
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
        ct = anonset.reconstruct(pub, ["a", "b"], "exact_em", max_iter=200, tol=0.0)
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
                          seed=2, research_seed=True, allow_clear=["sex"])
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
    for method in ("em", "exact_em", "value_adding"):
        ct = anonset.reconstruct(pub, ["sex", "disease"], method, max_iter=3000)
        if method != "value_adding":
            np.testing.assert_allclose(ct.counts.sum(axis=1), truth.counts.sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(anonset.count_w(pub, ["sex"]), truth.counts.sum(axis=1))


def test_totals_and_info():
    df = anonset.datasets.load_adult().head(5000)
    schema = anonset.datasets.adult_schema(df, attributes=["age", "education", "race"])
    pub = anonset.publish(df, anonset.Diversity(3), schema, seed=9, research_seed=True)
    for m in anonset.reconstruct.__globals__["METHODS"]:
        ct = anonset.reconstruct(pub, ["age", "education"], m, max_iter=50, seed=1)
        assert ct.total == pytest.approx(5000)
        assert ct.shape == (9, 16)
        if m in ("em", "exact_em"):
            assert ct.info["iterations"] == 50 and ct.info["change"] > 0
            assert (ct.counts >= 0).all()
    frame = ct.to_frame()
    assert list(frame.columns) == ["age", "education", "count"] and len(frame) == 144


def test_reconstruct_errors():
    df = pd.DataFrame({"a": list("xyzx"), "b": list("uvuv")})
    pub = anonset.publish(df, anonset.Diversity(2), seed=0, research_seed=True, sensitive=list(df.columns))
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
