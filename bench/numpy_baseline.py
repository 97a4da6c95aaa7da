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
