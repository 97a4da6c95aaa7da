"""How paper 003 splits records before forming classes (Sec. 4.2-4.3): the
k adjustment and group sizes of Algorithm 2, the first principal component
order of the sensitive attributes (Algorithm 2), and the equal-size fuzzy
c-means of Hoppner & Klawonn (Algorithm 1, the paper's ref. [19]).
"""
from __future__ import annotations

import numpy as np


def adjusted_k(n: int, k: int) -> int:
    """The paper's k adjustment (Algorithm 2 line 2, from ref. [9]):
    ``k + floor((n mod k) / floor(n / k))``."""
    if n < k:
        raise ValueError(f"the table has {n} records, fewer than k={k}")
    return k + (n % k) // (n // k)


def split_sizes(n: int, g: int, where: str = "central") -> np.ndarray:
    """Sizes of g groups of n records: floor(n/g) each, the n mod g extra
    records one each to the central groups (Algorithm 2 line 5) or, with
    ``where='first'``, to the first groups.  Sizes differ by at most one."""
    m, r = divmod(n, g)
    sizes = np.full(g, m, dtype=np.int64)
    start = (g - r) // 2 if where == "central" else 0
    sizes[start:start + r] += 1
    return sizes


def pca_order(M: np.ndarray, standardize: bool = True, *,
              tiebreak: np.ndarray | None = None) -> np.ndarray:
    """Records sorted ascending by their first principal component.

    Columns are standardized first (PCA of the correlation matrix, Weka's
    default, which the paper used); constant columns are dropped.  The sign
    of the component is fixed so that its largest loading is positive.
    Records with equal scores follow ``tiebreak`` (ranks; default: their
    index), so that a random tiebreak keeps the input order out of it.

    Examples
    --------
    >>> pca_order(np.array([[3.0, 1.0], [1.0, 0.0], [2.0, 0.5]])).tolist()
    [1, 2, 0]
    """
    X = np.asarray(M, dtype=np.float64)
    X = X - X.mean(axis=0)
    sd = X.std(axis=0)
    keep = sd > 0
    ties = np.arange(X.shape[0]) if tiebreak is None else np.asarray(tiebreak)
    if not keep.any():
        return np.argsort(ties, kind="stable")
    X = X[:, keep]
    if standardize:
        X = X / sd[keep]
    C = X.T @ X / max(X.shape[0] - 1, 1)
    w, V = np.linalg.eigh(C)
    v = V[:, -1]
    v = v * (1.0 if v[np.argmax(np.abs(v))] > 0 else -1.0)
    return np.lexsort((ties, X @ v))


def equisized_fcm(Z: np.ndarray, k: int, *, rng=None, max_iter: int = 100, tol: float = 1e-6,
                  inner: int = 60) -> np.ndarray:
    """Equi-sized fuzzy c-means (Hoppner & Klawonn 2008), hard labels.

    Minimizes sum_ij u_ij^2 ||z_j - v_i||^2 subject to sum_i u_ij = 1 for
    every record and sum_j u_ij = n / k for every cluster (fuzzifier 2).  The
    memberships solve the Lagrange conditions u_ij = max(0, (a_j + b_i) /
    (2 d_ij)) by alternating exact updates of the record multipliers a and
    the cluster multipliers b (coordinate ascent on the concave dual); the
    prototypes are the u^2-weighted means.  Identical points share their
    memberships, so the work is over the distinct points with multiplicities
    (Adult's two SAs have 205 distinct pairs).

    The fuzzy partition is made hard under the size constraint: cluster c
    receives exactly ``split_sizes(n, k, 'first')[c]`` records (floor(n/k) or
    ceil(n/k)), filled greedily in decreasing membership.

    Returns
    -------
    labels : ndarray of int64, shape (n,)
    """
    rng = np.random.default_rng(rng)
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    if k < 1 or k > n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    P, inv, w = np.unique(Z, axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    u_n = P.shape[0]
    wf = w.astype(np.float64)
    target = n / k
    # initial prototypes: k-means++ over the distinct points (weighted)
    V = np.empty((k, P.shape[1]))
    V[0] = P[rng.choice(u_n, p=wf / wf.sum())]
    dmin = ((P - V[0]) ** 2).sum(1)
    for c in range(1, k):
        pr = wf * dmin
        V[c] = P[rng.choice(u_n, p=pr / pr.sum())] if pr.sum() > 0 else \
            P[rng.integers(u_n)] + 1e-9 * rng.standard_normal(P.shape[1])
        dmin = np.minimum(dmin, ((P - V[c]) ** 2).sum(1))
    b = np.zeros(k)
    U = np.full((k, u_n), 1.0 / k)
    for _ in range(max_iter):
        D = ((P[None, :, :] - V[:, None, :]) ** 2).sum(2) + 1e-12     # (k, u)
        G = 0.5 / D
        for _ in range(inner):
            a = _solve_multipliers(G.T, b, np.ones(u_n))               # per point
            b = _solve_multipliers(G * wf[None, :], a, np.full(k, target))
        U = np.maximum(0.0, (a[None, :] + b[:, None]) * G)
        U /= U.sum(0, keepdims=True)
        W2 = U ** 2 * wf[None, :]
        Vn = (W2 @ P) / np.maximum(W2.sum(1, keepdims=True), 1e-300)
        shift = np.abs(Vn - V).max()
        V = Vn
        if shift < tol:
            break
    # hard assignment with exact sizes: greedy in decreasing membership
    cap = split_sizes(n, k, "first").astype(np.int64)
    supply = w.astype(np.int64).copy()
    alloc = np.zeros((k, u_n), dtype=np.int64)
    order = np.lexsort((D.ravel(), -U.ravel()))
    for f in order:
        c, j = divmod(int(f), u_n)
        m = min(cap[c], supply[j])
        if m:
            alloc[c, j] += m
            cap[c] -= m
            supply[j] -= m
    labels = np.empty(n, dtype=np.int64)
    recs = np.argsort(inv, kind="stable")
    starts = np.concatenate([[0], np.cumsum(w)])
    for j in range(u_n):
        mem = rng.permutation(recs[starts[j]:starts[j + 1]])
        labels[mem] = np.repeat(np.arange(k), alloc[:, j])
    return labels


def _solve_multipliers(G: np.ndarray, other: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """For every row r solve sum_c max(0, (x_r + other_c) G[r, c]) = rhs[r] for
    x_r (a monotone piecewise-linear equation; exact, vectorized)."""
    order = np.argsort(-other, kind="stable")                 # largest first
    o = other[order]
    Gs = G[:, order]
    cg = np.cumsum(Gs, axis=1)
    cog = np.cumsum(Gs * o[None, :], axis=1)
    x = (rhs[:, None] - cog) / cg                              # candidate with top-s active
    nxt = np.r_[o[1:], -np.inf]
    valid = (x + o[None, :] > 0) & (x + nxt[None, :] <= 0)
    s = np.where(valid.any(1), np.argmax(valid, axis=1), Gs.shape[1] - 1)
    return x[np.arange(G.shape[0]), s]
