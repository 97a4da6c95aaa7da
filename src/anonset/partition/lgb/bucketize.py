"""Local bucketization of LGB (paper 002, Alg. 2 and Corollary 2): the
sensitive values of one attribute go into local buckets in which every value
appears at most once and which hold at least l values (a recursive median
split while both halves stay l-eligible, then Anatomy's group creation and
residue assignment, in C), or, for attributes protected by t-closeness
(Sec. 4 uses it for sex; the paper gives no algorithm), into the largest
number of round-robin buckets that stay within t.
"""
from __future__ import annotations

import numpy as np

from ...validate import check_int


def local_bucketization(codes: np.ndarray, l: int) -> tuple[np.ndarray, int]:
    """Alg. 2 on the sensitive values of one attribute.

    Parameters
    ----------
    codes : int array
        Value codes (ordered) of the cells to bucketize.
    l : int
        Every bucket gets >= l values, each value at most once (Corollary 2).

    Returns
    -------
    bucket : int64 array aligned with ``codes`` (0-based, increasing with the
        value ranges of the median-split leaves), and the number of buckets.

    Raises ValueError when the values are not l-eligible (a value occurs more
    than len(codes) / l times).

    Examples
    --------
    >>> b, nb = local_bucketization(np.array([1, 1, 2, 3, 4, 5, 6, 6]), 2)
    >>> nb, sorted(np.bincount(b).tolist())
    (4, [2, 2, 2, 2])
    """
    codes = np.asarray(codes)
    l = check_int(l, "l", minimum=1)
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(codes, kind="stable")
    _, counts = np.unique(codes[order], return_counts=True)
    if counts.max() * l > n:
        raise ValueError(f"not {l}-eligible: a value occurs {int(counts.max())} times among "
                         f"{n} (at most {n // l} allowed)")
    from .. import _lgb
    b_sorted, nb = _lgb.bucketize(np.ascontiguousarray(counts, dtype=np.int64), l)
    out = np.empty(n, dtype=np.int64)
    out[order] = b_sorted
    return out, int(nb)


def _closeness_buckets(codes: np.ndarray, d: int, t: float, ground) -> tuple[np.ndarray, int]:
    """Buckets whose value distribution is within EMD t of the attribute's
    (flagged) distribution: values sorted and dealt round-robin into m
    buckets (each gets floor or ceil of every value's share); the largest m
    whose worst bucket passes (binary search; m = 1 always passes)."""
    from ...emd import emd_batch
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(codes, kind="stable")
    q = np.bincount(codes, minlength=d).astype(np.float64)

    def deal(m):
        b = np.empty(n, dtype=np.int64)
        b[order] = np.arange(n) % m
        return b

    def ok(m):
        b = deal(m)
        P = np.zeros((m, d), dtype=np.int64)
        np.add.at(P, (b, codes), 1)
        return float(emd_batch(P, q, ground).max()) <= t + 1e-12

    lo, hi = 1, n                      # ok(lo) holds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return deal(lo), lo


def _suppress_for_eligibility(codes: np.ndarray, l: int) -> np.ndarray:
    """Keep-mask removing the fewest values so the rest is l-eligible: every
    value keeps at most c* occurrences, c* the largest cap with
    sum(min(c_v, c*)) >= l * c*.  The last occurrences (row order) go."""
    counts = np.bincount(codes)
    caps = np.arange(1, counts.max() + 1)
    kept = np.minimum(counts[None, :], caps[:, None]).sum(axis=1)
    good = caps[kept >= l * caps]
    keep = np.zeros(codes.size, dtype=bool)
    if good.size == 0:
        return keep
    cap = int(good.max())
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    start = np.searchsorted(sc, sc, side="left")
    rank = np.arange(codes.size) - start
    keep[order] = rank < cap
    return keep
