"""Local generalization of LGB (paper 002, Alg. 3 and Alg. 4, Corollary 1):
the rows of each QI-partition subset (Def. 7) are split into local
equivalence groups of at least k rows, by Mondrian's multi-dimensional
partition (Alg. 3, ``'mdp'``) or by Xu et al.'s top-down NCP minimization
(Alg. 4, ``'ncp'``, as printed or balanced), in C; then each group's QI
cells are published as the interval or hierarchy node covering them.
"""
from __future__ import annotations

import numpy as np

from ...validate import check_choice, check_int
from .domain import Domain

METHODS = ("mdp", "ncp")
#: Alg. 3's split where the lower median is a node's largest value
MDP_SPLITS = ("below_max", "paper")


def _cost_tables(domains: list[Domain]):
    kind = np.array([0 if d.numeric else 1 for d in domains], dtype=np.int32)
    dom = np.array([d.d for d in domains], dtype=np.int32)
    tabs = [np.ascontiguousarray(d.cost, dtype=np.float64).ravel() for d in domains]
    off = np.zeros(len(domains), dtype=np.int64)
    if tabs:
        off[1:] = np.cumsum([t.size for t in tabs])[:-1]
    tab = np.concatenate(tabs) if tabs else np.zeros(1)
    return dom, kind, off, tab


def local_generalization(codes: np.ndarray, qi_mask: np.ndarray, domains: list, k: int,
                         method: str = "mdp", *, balance: bool = False,
                         mdp_split: str = "below_max") -> np.ndarray:
    """Local equivalence groups (Alg. 3 or 4) of a table already split by QI
    partition.

    Parameters
    ----------
    codes : int32 array (q, n)
        Value codes per attribute.
    qi_mask : bool array (n, q)
        True where the cell is a QI value.  Rows with the same mask form one
        QI-partition subset (Def. 7); each needs >= k rows.
    domains : list of Domain, one per attribute
    k : int
    method : {'mdp', 'ncp'}
    balance : bool
        Alg. 4 only.  False (default): Alg. 4 as printed (lines 15-20), a
        split with an undersized side is abandoned and the whole node becomes
        a group.  True: Xu et al.'s adjustment, so an undersized side takes
        rows from the other and every group has k..2k-1 rows.
    mdp_split : {'below_max', 'paper'}
        Alg. 3 only.  'paper': lines 11-13 as printed, S_l = values <= the
        lower median, S_r = the rest, so an attribute whose lower median is
        the node's largest value (a majority value last in code order, e.g.
        'Male' after 'Female', 'White' last among races) never splits a node.
        'below_max' (default): the split then falls below that value (S_r =
        its rows), so whether a node splits no longer depends on the
        alphabetical order of the values' names (docs/lgb.md).

    Returns
    -------
    gid : int64 array (n,), 0-based group ids (groups of a subset contiguous).
    """
    from .. import _lgb
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    check_choice(mdp_split, "mdp_split", MDP_SPLITS)
    k = check_int(k, "k", minimum=1)
    q, n = codes.shape
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    dom, kind, off, tab = _cost_tables(domains)
    bits = np.zeros(n, dtype=np.int64)
    for a in range(q):
        bits |= qi_mask[:, a].astype(np.int64) << a
    keys, inv = np.unique(bits, return_inverse=True)
    gid = np.empty(n, dtype=np.int64)
    base = 0
    for s, key in enumerate(keys):
        rows = np.flatnonzero(inv == s).astype(np.int64)
        if rows.size < k:
            raise ValueError(f"QI-partition subset of {rows.size} rows has fewer than k={k}")
        attrs = np.array([a for a in range(q) if (int(key) >> a) & 1], dtype=np.int32)
        ends = _lgb.partition(method, rows, codes, attrs, dom, kind, off, tab, k, bool(balance),
                              mdp_split == "below_max")
        sizes = np.diff(np.concatenate([[0], ends]))
        gid[rows] = base + np.repeat(np.arange(ends.size), sizes)
        base += ends.size
    return gid


def published_intervals(codes: np.ndarray, qi_mask: np.ndarray, gid: np.ndarray,
                        domains: list) -> tuple[np.ndarray, np.ndarray]:
    """The code interval ``[glo, ghi]`` every QI cell is published as: the
    cover (range, or hierarchy node) of its group's codes on that attribute;
    -1 for cells that are not QI (Def. 8: a group's QI cells of one
    attribute all show the same generalized value)."""
    q, n = codes.shape
    glo = np.full((q, n), -1, dtype=np.int64)
    ghi = np.full((q, n), -1, dtype=np.int64)
    if n == 0:
        return glo, ghi
    order = np.argsort(gid, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(gid[order]) != 0])
    first_row = order[starts]
    sizes = np.diff(np.r_[starts, n])
    for j in range(q):
        c = codes[j, order]
        clo, chi = domains[j].cover(np.minimum.reduceat(c, starts),
                                    np.maximum.reduceat(c, starts))
        isqi = qi_mask[first_row, j]
        glo[j, order] = np.repeat(np.where(isqi, clo, -1), sizes)
        ghi[j, order] = np.repeat(np.where(isqi, chi, -1), sizes)
    return glo, ghi
