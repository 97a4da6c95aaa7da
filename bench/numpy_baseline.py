"""A straightforward NumPy implementation of paper 000's core, the baseline
that anonset's C kernels are measured against (issue 2, "Speed").

* :func:`publish` -- Sec. V-B publishing: per attribute and chunk of rows, a
  coin with head probability p and a uniform random key per (record, value);
  on head the true value's key is forced to -1 so it is always among the
  eta smallest; ``argpartition`` picks the eta smallest keys.  Output: the
  same bitmask layout as anonset (uint64, bit v of word v // 64 = value v).
* :func:`count_w` -- eq. 17: each record's set members (from the bitmasks),
  the offsets of all cells of the product set by broadcasting, and one
  ``bincount`` per chunk of rows.
* :func:`em_kron` -- eq. 26 with delta applied as a Kronecker product, one
  ``tensordot`` per attribute (general d_j x d_j factors, O(|C| sum d_j)).
* :func:`em_ab` -- eq. 26 with the a/b structure of eq. 21 per axis
  (``b * sum + (a - b) * x``, O(|C| q)), the same algorithm as anonset's
  kernel, in NumPy.
* :func:`em_dense` -- eq. 26 with the dense |C| x |C| matrix delta (two
  matrix-vector products per iteration), the textbook form.

All EMs share anonset's stopping rule: at most ``max_iter`` iterations; stop
after the first iteration whose largest change of a cell is <= ``tol``;
return ``(x, iterations, last change)``.

The random stream is NumPy's (PCG64 by default), so the sets follow the same
distribution as anonset's but are not bit-identical to them.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["publish", "members", "count_w", "ab_matrix", "kron_dense", "em_kron", "em_ab",
           "em_dense", "PUBLISH_CHUNK"]

#: Rows per chunk when publishing.  (chunk, d) float32 keys stay in L2 (2 MB
#: at d = 18); measured best among 2^13..2^18 on the reference machine.
PUBLISH_CHUNK = 1 << 15


def _words(d: int) -> int:
    return (d + 63) // 64


def _publish_one(rng, code, d: int, eta: int, p: float, chunk: int) -> np.ndarray:
    n = len(code)
    words = _words(d)
    out = np.zeros((n, words), dtype=np.uint64)
    if eta >= d:                                   # every value: nothing to draw
        for v in range(d):
            out[:, v // 64] |= np.uint64(1) << np.uint64(v % 64)
        return out
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        m = hi - lo
        true = code[lo:hi]
        keys = rng.random((m, d), dtype=np.float32)
        head = rng.random(m) < p
        rows = np.flatnonzero(head)
        keys[rows, true[rows]] = -1.0              # the true value is always kept on head
        pick = np.argpartition(keys, eta - 1, axis=1)[:, :eta]
        if words == 1:
            bits = np.left_shift(np.uint64(1), pick.astype(np.uint64))
            out[lo:hi, 0] = np.bitwise_or.reduce(bits, axis=1)
        else:
            member = np.zeros((m, words * 64), dtype=bool)
            np.put_along_axis(member, pick, True, axis=1)
            out[lo:hi] = np.packbits(member, axis=1, bitorder="little").view("<u8")
    return out


def publish(codes: dict, params: dict, seed=0, *, chunk: int = PUBLISH_CHUNK) -> dict:
    """Random sets (Sec. V-B) for every column.

    Parameters
    ----------
    codes : {name: int codes in [0, d)}
    params : {name: object with ``d``, ``eta``, ``p``} (e.g. AttributeParams)
    seed : seed of numpy.random.default_rng

    Returns
    -------
    {name: uint64 bitmask array (n, ceil(d / 64))}
    """
    rng = np.random.default_rng(seed)
    return {name: _publish_one(rng, np.asarray(c), int(params[name].d), int(params[name].eta),
                               float(params[name].p), chunk)
            for name, c in codes.items()}


def members(mask: np.ndarray, d: int, k: int) -> np.ndarray:
    """(n, k) members of each row's set, ascending; every set must have k."""
    mask = np.asarray(mask, dtype=np.uint64).reshape(len(mask), -1)
    n = mask.shape[0]
    shifts = np.arange(64, dtype=np.uint64)
    bits = ((mask[:, :, None] >> shifts) & np.uint64(1)).astype(bool).reshape(n, -1)[:, :d]
    if not (bits.sum(axis=1) == k).all():
        raise ValueError(f"every set must have {k} members")
    return np.nonzero(bits)[1].reshape(n, k)


def count_w(masks, dims, etas, *, cells_per_chunk: int = 1 << 22) -> np.ndarray:
    """w of eq. 17: for each cell, how many records' product sets contain it.

    masks: list of (n, words) bitmasks; dims: domain sizes; etas: set sizes.
    """
    q = len(masks)
    dims = [int(v) for v in dims]
    etas = [int(v) for v in etas]
    ncells = math.prod(dims)
    strides = [math.prod(dims[j + 1:]) for j in range(q)]
    n = len(masks[0])
    per_row = math.prod(etas)
    chunk = max(1, cells_per_chunk // per_row)
    w = np.zeros(ncells, dtype=np.int64)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        off = np.zeros((hi - lo,) + (1,) * q, dtype=np.intp)
        for j in range(q):
            mem = members(masks[j][lo:hi], dims[j], etas[j]).astype(np.intp) * strides[j]
            shape = [hi - lo] + [1] * q
            shape[1 + j] = etas[j]
            off = off + mem.reshape(shape)            # broadcast: the product set
        w += np.bincount(off.ravel(), minlength=ncells)
    return w.reshape(dims)


def ab_matrix(a: float, b: float, d: int) -> np.ndarray:
    """The d x d factor of eq. 21: a on the diagonal, b off it."""
    m = np.full((d, d), float(b))
    np.fill_diagonal(m, float(a))
    return m


def kron_dense(mats) -> np.ndarray:
    """delta = M_0 (x) M_1 (x) ... as a dense |C| x |C| matrix (C order)."""
    out = np.ones((1, 1))
    for m in mats:
        out = np.kron(out, m)
    return out


def _apply(x: np.ndarray, mats, transpose: bool) -> np.ndarray:
    """(kron_j M_j) x, or with every M_j transposed; x of shape dims."""
    for j, m in enumerate(mats):
        mm = m if transpose else m.T
        # contract axis j of x with M's first axis; the new axis lands last
        x = np.moveaxis(np.tensordot(x, mm, axes=([j], [0])), -1, j)
    return x


def em_kron(w, x0, mats, max_iter: int, tol: float):
    """Eq. 26 with delta = kron_j mats[j] applied per axis by tensordot."""
    w = np.asarray(w, dtype=np.float64)
    x = np.array(x0, dtype=np.float64).reshape(w.shape)
    it, change = 0, math.inf
    while it < max_iter:
        y = _apply(x, mats, transpose=True)            # sum_gamma delta[gamma, beta] x_gamma
        r = np.divide(w, y, out=np.zeros_like(y), where=y > 0)
        z = _apply(r, mats, transpose=False)           # sum_beta delta[alpha, beta] r_beta
        nx = x * z
        change = float(np.abs(nx - x).max())
        x = nx
        it += 1
        if change <= tol:
            break
    return x, it, change


def _apply_ab(x: np.ndarray, a, b) -> np.ndarray:
    for j in range(x.ndim):
        x = b[j] * x.sum(axis=j, keepdims=True) + (a[j] - b[j]) * x
    return x


def em_ab(w, x0, a, b, max_iter: int, tol: float):
    """Eq. 26 with the a/b factors of eq. 21 (symmetric, so no transpose)."""
    w = np.asarray(w, dtype=np.float64)
    x = np.array(x0, dtype=np.float64).reshape(w.shape)
    it, change = 0, math.inf
    while it < max_iter:
        y = _apply_ab(x, a, b)
        r = np.divide(w, y, out=np.zeros_like(y), where=y > 0)
        nx = x * _apply_ab(r, a, b)
        change = float(np.abs(nx - x).max())
        x = nx
        it += 1
        if change <= tol:
            break
    return x, it, change


def em_dense(w, x0, delta, max_iter: int, tol: float):
    """Eq. 26 with the dense |C| x |C| matrix delta[alpha, beta]."""
    w = np.asarray(w, dtype=np.float64)
    shape = w.shape
    wf = w.ravel()
    x = np.array(x0, dtype=np.float64).ravel()
    delta = np.ascontiguousarray(delta, dtype=np.float64)
    it, change = 0, math.inf
    while it < max_iter:
        y = x @ delta                                  # y_beta = sum_gamma delta[gamma, beta] x_gamma
        r = np.divide(wf, y, out=np.zeros_like(y), where=y > 0)
        nx = x * (delta @ r)
        change = float(np.abs(nx - x).max())
        x = nx
        it += 1
        if change <= tol:
            break
    return x.reshape(shape), it, change


# ---------------------------------------------------------------- strong baselines
# (issue 16, target 1): the fastest NumPy forms of the same jobs.
def subset_table(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n) (n <= 64) as uint64 masks, increasing."""
    from itertools import combinations
    out = np.fromiter((sum(1 << i for i in c) for c in combinations(range(n), k)),
                      dtype=np.uint64, count=math.comb(n, k))
    out.sort()
    return out


def _gap(sub: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Open a gap at v in masks over d - 1 virtual values (bits >= v move up)."""
    vv = v.astype(np.uint64)
    low = sub & ((np.uint64(1) << vv) - np.uint64(1))
    return low | ((sub ^ low) << np.uint64(1)) | (np.uint64(1) << vv)


def publish_subset_table(codes: dict, params: dict, seed=0, *, max_table: int = 1 << 20) -> dict:
    """Sec. V-B with one index per cell into a table of all subsets: the head
    set is the true value plus table[(d-1, eta-1)][i], the tail set is
    table[(d, eta)][i].  Falls back to :func:`publish` where d > 64 or a
    table would exceed ``max_table`` entries."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, c in codes.items():
        par = params[name]
        d, eta, p = int(par.d), int(par.eta), float(par.p)
        v = np.asarray(c)
        n = len(v)
        if eta >= d:
            out[name] = _publish_one(rng, v, d, eta, p, PUBLISH_CHUNK)
            continue
        need = ([(d - 1, eta - 1)] if p > 0 else []) + ([(d, eta)] if p < 1 else [])
        if d > 64 or any(math.comb(a, b) > max_table for a, b in need):
            out[name] = _publish_one(rng, v, d, eta, p, PUBLISH_CHUNK)
            continue
        head = np.ones(n, bool) if p >= 1 else (rng.random(n) < p if p > 0 else np.zeros(n, bool))
        res = np.empty(n, dtype=np.uint64)
        if head.any():
            tab = subset_table(d - 1, eta - 1)
            idx = np.flatnonzero(head) if not head.all() else slice(None)
            sub = tab[rng.integers(0, len(tab), size=int(head.sum()))]
            res[idx] = _gap(sub, v[idx])
        if not head.all():
            tab = subset_table(d, eta)
            tail = np.flatnonzero(~head)
            res[tail] = tab[rng.integers(0, len(tab), size=len(tail))]
        out[name] = res.reshape(n, 1)
    return out


def publish_floyd(codes: dict, params: dict, seed=0) -> dict:
    """Sec. V-B with Floyd's algorithm vectorized over the rows (d <= 64):
    eta - 1 (head, over d - 1 virtual values) or eta (tail) steps, each one
    bounded draw per row; falls back to :func:`publish` for d > 64."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, c in codes.items():
        par = params[name]
        d, eta, p = int(par.d), int(par.eta), float(par.p)
        v = np.asarray(c).astype(np.int64)
        n = len(v)
        if d > 64 or eta >= d:
            out[name] = _publish_one(rng, v, d, eta, p, PUBLISH_CHUNK)
            continue
        head = np.ones(n, bool) if p >= 1 else (rng.random(n) < p if p > 0 else np.zeros(n, bool))
        # virtual index x of a head row is value x + (x >= v); tail rows: skip = d (never)
        skip = np.where(head, v, d)
        nn = np.where(head, d - 1, d)
        k = np.where(head, eta - 1, eta)
        mask = np.where(head, np.uint64(1) << v.astype(np.uint64), np.uint64(0))
        one = np.uint64(1)
        for step in range(eta):
            # Floyd: for m = nn - k .. nn - 1: t uniform in [0, m]; add m if t is taken
            m = nn - k + step
            act = step < k
            t = (rng.random(n) * (m + 1)).astype(np.int64)     # float draws: the baseline's stream
            vt = t + (t >= skip)
            vm = m + (m >= skip)
            hit = ((mask >> vt.astype(np.uint64)) & one).astype(bool)
            pick = np.where(hit, vm, vt).astype(np.uint64)
            mask = np.where(act, mask | (one << pick), mask)
        out[name] = mask.reshape(n, 1)
    return out


def count_w_factorized(masks, dims, etas, *, chunk: int = 1 << 16) -> np.ndarray:
    """w of eq. 17, factorized: rows grouped by the set of the attribute G
    with the most members among those of <= 64 values; per group, the cells
    of the other attributes' products are counted with one ``bincount``
    (key = group x R + cell); the groups are multiplied out by one BLAS
    product with the 0/1 membership matrix of the groups' sets."""
    q = len(dims)
    dims = [int(v) for v in dims]
    etas = [int(v) for v in etas]
    small = [j for j in range(q) if dims[j] <= 64]
    if q < 2 or not small:
        return count_w(masks, dims, etas)
    G = max(small, key=lambda j: (etas[j], -dims[j]))
    keys, inv = np.unique(np.asarray(masks[G])[:, 0], return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")          # rows grouped: a chunk spans few groups
    inv = inv[order]
    rest = [j for j in range(q) if j != G]
    rdims = [dims[j] for j in rest]
    R = math.prod(rdims)
    strides = [math.prod(rdims[i + 1:]) for i in range(len(rest))]
    n = len(inv)
    per_row = math.prod(etas[j] for j in rest)
    step = max(1, min(chunk, (1 << 22) // max(per_row, 1)))
    V = np.zeros(len(keys) * R, dtype=np.int64)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        rows = order[lo:hi]
        g0 = int(inv[lo])
        off = ((inv[lo:hi] - g0) * R).reshape((hi - lo,) + (1,) * len(rest))
        for i, j in enumerate(rest):
            mem = members(masks[j][rows], dims[j], etas[j]).astype(np.intp) * strides[i]
            shape = [hi - lo] + [1] * len(rest)
            shape[1 + i] = etas[j]
            off = off + mem.reshape(shape)
        span = (int(inv[hi - 1]) - g0 + 1) * R
        V[g0 * R:g0 * R + span] += np.bincount(off.ravel(), minlength=span)
    E = ((keys[:, None] >> np.arange(dims[G], dtype=np.uint64)) & np.uint64(1)).astype(np.float64)
    W = E.T @ V.reshape(len(keys), R).astype(np.float64)          # (d_G, R), exact below 2^53
    W = np.rint(W).astype(np.int64).reshape([dims[G]] + rdims)
    return np.moveaxis(W, 0, G)


# ------------------------------------------------------ Subset Selection + IBU (q = 1)
# The k-subset ("Subset Selection") mechanism of local differential privacy
# (Wang et al. 2016; Ye & Barg 2018) and the iterative Bayesian update of
# Agrawal & Aggarwal (2001), as multi-freq-ldpy implements them for one
# attribute, written here from the papers (the package does not install in
# this environment).
def ss_params(d: int, eps: float):
    """Subset size omega (Wang et al.: about d / (e^eps + 1), at least 1) and
    the probability that the report contains the true value."""
    omega = max(1, int(round(d / (math.exp(eps) + 1))))
    p_in = omega * math.exp(eps) / (omega * math.exp(eps) + d - omega)
    return omega, p_in


def ss_client(codes, d: int, eps: float, seed=0, *, chunk: int = PUBLISH_CHUNK) -> np.ndarray:
    """One SS report per record, as a uint64 bitmask (d <= 64): with
    probability p_in the true value and omega - 1 others, else omega values
    from the other d - 1 (random keys, argpartition)."""
    rng = np.random.default_rng(seed)
    omega, p_in = ss_params(d, eps)
    v = np.asarray(codes)
    out = np.zeros(len(v), dtype=np.uint64)
    for lo in range(0, len(v), chunk):
        hi = min(len(v), lo + chunk)
        m = hi - lo
        keys = rng.random((m, d), dtype=np.float32)
        inside = rng.random(m) < p_in
        keys[np.arange(m), v[lo:hi]] = np.where(inside, -1.0, 2.0)   # forced in / out
        pick = np.argpartition(keys, omega - 1, axis=1)[:, :omega].astype(np.uint64)
        out[lo:hi] = np.bitwise_or.reduce(np.uint64(1) << pick, axis=1)
    return out


def ibu(reports: np.ndarray, d: int, eps: float, *, max_iter: int = 10000, tol: float = 1e-12):
    """Iterative Bayesian update on SS reports: identical reports grouped
    first; pi <- mean over reports of pi * L / (L . pi) with L(alpha) = a if
    alpha is in the report, else b.  Stops at a largest change <= tol."""
    omega, p_in = ss_params(d, eps)
    a = p_in / math.comb(d - 1, omega - 1)
    b = (1 - p_in) / math.comb(d - 1, omega)
    keys, cnt = np.unique(reports, return_counts=True)
    L = np.where((keys[:, None] >> np.arange(d, dtype=np.uint64)) & np.uint64(1), a, b)
    wgt = cnt / cnt.sum()
    pi = np.full(d, 1.0 / d)
    it = 0
    for it in range(1, max_iter + 1):
        z = L @ pi
        new = pi * ((wgt / z) @ L)
        ch = float(np.abs(new - pi).max())
        pi = new
        if ch <= tol:
            break
    return pi, it
