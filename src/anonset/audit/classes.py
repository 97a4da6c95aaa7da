"""Equivalence classes of the non-aggregated table (paper 000 Def. 10,
Table III(b)), measured exactly: by expanding every record's product set
(small tables, and the test oracle) or one class at a time without expanding
(large tables and files, chunk by chunk).

The class for S_j with key c (one value per other published attribute)
holds, for every record i whose sets on the other attributes all contain c,
the |R_ij| rows (c, v), v in R_ij.  A class's count vector over the values of
S_j is a sum over records, so the counts of one class add up over the chunks
of a file.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..randomized.settable import SetTable
from .masks import bits

__all__ = ["EXPAND_LIMIT", "expand", "membership", "class_counts", "sample_keys",
           "class_stats", "expanded_counts", "sampled_counts", "record_class_stats"]

#: Largest expanded (non-aggregated) table that method='auto' builds, in rows.
EXPAND_LIMIT = 2_000_000
#: (and at most 8 times as many cells, rows x attributes: see checks._class_scan)


def membership(table: SetTable, name: str) -> np.ndarray:
    """(n_rows, d) bool: ``M[i, v]`` is True when value code v is in row i's set.

    Read straight from the bitmasks, so it works on tables whose sets do not
    have the published size (which :meth:`SetTable.members` refuses).

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> pub = anonset.publish(pd.DataFrame({"a": list("xyzx")}), anonset.Diversity(2),
    ...                       sensitive=["a"], domains={"a": list("xyz")})
    >>> membership(pub, "a").sum(axis=1).tolist()
    [2, 2, 2, 2]
    """
    return bits(table.mask(name), table.schema[name].d)


# ------------------------------------------------------------- expansion
def expand(table: SetTable, *, values: bool = False, max_rows: int | None = EXPAND_LIMIT
           ) -> pd.DataFrame:
    """The non-aggregated table: one row per element of each record's product
    set (paper 000 Table III(b)), with a ``_record`` column.

    Parameters
    ----------
    values : bool
        Domain values instead of codes.
    max_rows : int or None
        Refuse (ValueError) to build more rows than this.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> pub = anonset.publish(pd.DataFrame({"a": list("xyzx"), "b": list("uvuv")}),
    ...                       anonset.Diversity(2), sensitive=["a", "b"],
    ...                       domains={"a": list("xyz"), "b": list("uv")})
    >>> len(expand(pub))                  # 4 records x 2 x 2 values
    16
    """
    names = table.names
    rec, cols = _expand_codes([lazy_membership(table, n) for n in names], table.n_rows,
                              max_rows)
    out = pd.DataFrame({n: c for n, c in zip(names, cols)})
    if values:
        for n in names:
            dom = np.empty(table.schema[n].d, dtype=object)
            dom[:] = list(table.schema[n].domain)
            out[n] = dom[out[n].to_numpy()]
    out.insert(0, "_record", rec)
    return out


def lazy_membership(table: SetTable, name: str):
    """:func:`membership` as a :class:`~anonset.audit.masks.MaskMembership`:
    columns and rows on demand, never the whole n x d matrix."""
    from .masks import MaskMembership
    return MaskMembership(table.mask(name), table.schema[name].d)


def _expand_codes(Ms: list, n: int, max_rows) -> tuple:
    """(record index, [codes per attribute]) of every expanded row (``Ms``:
    :class:`~anonset.audit.masks.MaskMembership` of each attribute)."""
    sizes = np.ones(n, dtype=np.float64)
    for M in Ms:
        sizes *= M.row_sizes()
    total = float(sizes.sum())
    if max_rows is not None and total > max_rows:
        raise ValueError(f"the expanded table would have {total:.3g} rows (max_rows={max_rows}); "
                         "use method='bound' or 'sample'")
    rec = np.arange(n)
    cols = []
    for M in Ms:
        rr, vv = M.nonzero()                        # sorted by row
        cnt = np.bincount(rr, minlength=n)
        start = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        rep = cnt[rec]
        take = np.repeat(np.arange(rec.size), rep)
        off = np.arange(take.size) - np.repeat(np.cumsum(rep) - rep, rep)
        new = vv[start[rec[take]] + off]
        cols = [c[take] for c in cols] + [new]
        rec = rec[take]
    return rec, cols


def class_stats(C: np.ndarray) -> tuple:
    """(class sizes, max relative frequency, entropy) of count rows C (k, d)."""
    C = np.asarray(C, dtype=np.float64)
    size = C.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        P = C / size[:, None]
        maxf = P.max(axis=1) if P.shape[1] else np.zeros(P.shape[0])
        H = -np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0).sum(axis=1)
    return size, maxf, H


def _dense(key: np.ndarray) -> tuple:
    """(ids in [0, n), n) of the distinct values of ``key`` (hashing: the
    order of the ids does not matter here)."""
    g, uniq = pd.factorize(key, sort=False)
    return g.astype(np.int64, copy=False), max(len(uniq), 1)


def _pair(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> tuple:
    """(key, bound) of the pairs (a, b), a < na and b < nb: a * nb + b when
    that stays below 2^62, else the pairs of their dense ids."""
    if na * nb >= 2 ** 62:              # dense ids are below the row count
        (a, na), (b, nb) = _dense(a), _dense(b)
    return a * nb + b, na * nb


def expanded_counts(table: SetTable, max_rows) -> dict:
    """{attribute: (count rows of every class, 'expand')}, from the expansion.

    The class of S_j is keyed by every other attribute's code.  Those keys
    are built from a running key of the attributes before j and stored keys
    of those after it (each an integer below 2^62, re-numbered densely where
    the next code would overflow it), so q attributes cost O(q) passes over
    the expanded rows rather than q keys of q - 1 codes each (a release of
    150 exact columns took minutes per attribute)."""
    names = table.names
    _, cols = _expand_codes([lazy_membership(table, n) for n in names], table.n_rows,
                            max_rows)
    dims = [table.schema[n].d for n in names]
    q = len(names)
    rows = cols[0].size if cols else 0
    after = [None] * (q + 1)            # after[k]: key of attributes k .. q - 1
    after[q] = (np.zeros(rows, dtype=np.int64), 1)
    for k in range(q - 1, 0, -1):
        key, bound = after[k + 1]
        after[k] = _pair(cols[k].astype(np.int64), dims[k], key, bound)
    before = (np.zeros(rows, dtype=np.int64), 1)
    out = {}
    for jj, j in enumerate(names):
        d = dims[jj]
        v = cols[jj].astype(np.int64)
        if q > 1:
            key, _ = _pair(*before, *after[jj + 1])
            _, g = np.unique(key, return_inverse=True)
        else:
            g = np.zeros(v.size, dtype=np.int64)
        after[jj + 1] = None                            # no longer needed
        before = _pair(*before, v, d)
        g = np.asarray(g).ravel()
        ncls = int(g.max()) + 1 if g.size else 0
        out[j] = (np.bincount(g * d + v, minlength=ncls * d).reshape(ncls, d), "expand")
    return out


# ------------------------------------------------------ one class at a time
def class_counts(Ms: Sequence[np.ndarray], keys: np.ndarray) -> list:
    """Count vectors of single classes without expanding.

    ``Ms`` are the membership matrices of the attributes (whole table or one
    chunk: counts of a chunk add up); ``keys`` (K, q) full keys, one code per
    attribute.  Returns, per attribute j, the (K, d_j) counts of the class
    for S_j keyed by each key's other codes.

    The class for S_j with key c holds the records whose sets contain c_k for
    every k != j.  With s_i = number of attributes k for which row i's set
    contains c_k, those are the rows with s_i = q, plus the rows with
    s_i = q - 1 whose set for j misses c_j: one pass over the rows per key.
    """
    q = len(Ms)
    out = [np.zeros((len(keys), M.shape[1]), dtype=np.int64) for M in Ms]
    # the class for S_j depends on the key's other codes only: sampled keys
    # repeat them often (always where q = 1: the whole table, which took
    # 12 s for 200 keys of 60,000 rows and 1,500 values)
    seen = [{} for _ in range(q)]
    for r, key in enumerate(keys):
        others = [tuple(np.delete(key, j).tolist()) for j in range(q)]
        if any(o not in seen[j] for j, o in enumerate(others)):
            cols = [M[:, c] for M, c in zip(Ms, key)]
            s = np.zeros(cols[0].shape[0], dtype=np.int16)
            for col in cols:
                s += col
            near = np.flatnonzero(s >= q - 1)
            s_near = s[near]
        for j, other in enumerate(others):
            if other not in seen[j]:
                inj = cols[j][near]
                rows = near[(s_near == q) | ((s_near == q - 1) & ~inj)]
                seen[j][other] = Ms[j].column_sums(rows) if hasattr(Ms[j], "column_sums") \
                    else Ms[j][rows].sum(axis=0, dtype=np.int64)
            out[j][r] = seen[j][other]
    return out


def sample_keys(row_Ms: Sequence[np.ndarray], rng) -> np.ndarray:
    """Keys of non-empty classes from the membership rows of randomly chosen
    records: a random member of each of a record's sets (so each key is a
    row of the expanded table)."""
    k = row_Ms[0].shape[0] if row_Ms else 0
    keys = np.empty((k, len(row_Ms)), dtype=np.int64)
    for j, M in enumerate(row_Ms):
        sz = M.sum(axis=1)
        pick = np.floor(rng.random(k) * np.maximum(sz, 1)).astype(np.int64)
        cum = np.cumsum(M, axis=1) - 1
        keys[:, j] = np.argmax((cum == pick[:, None]) & M, axis=1)
        keys[sz == 0, j] = 0
    return keys


def sampled_counts(names: Sequence[str], counts: list) -> dict:
    """{attribute: (count rows of the non-empty sampled classes, 'sample')}."""
    return {n: (C[C.sum(axis=1) > 0], "sample") for n, C in zip(names, counts)}


def record_class_stats(names: Sequence[str], ls: Sequence, keys: np.ndarray,
                       counts: list) -> pd.DataFrame:
    """Exact stats of the classes for S_j keyed by sampled records' true
    values on the other attributes (``keys``): the classes an adversary who
    knows the victim's other values looks at.  Classes with no row (true
    values not all in their sets, p < 1) are skipped."""
    rows = []
    for jj, (nm, l, C) in enumerate(zip(names, ls, counts)):
        tot = C.sum(axis=1)
        keep = tot > 0
        C = C[keep]
        size, maxf, H = class_stats(C)
        share = C[np.arange(C.shape[0]), keys[keep, jj]] / tot[keep] if C.shape[0] else []
        rows.append({"attribute": nm, "l": l, "classes": int(C.shape[0]),
                     "min_class": int(size.min()) if size.size else 0,
                     "max_freq": float(maxf.max()) if size.size else np.nan,
                     "l_entropy": float(np.exp(H.min())) if size.size else np.nan,
                     "max_true_share": float(np.max(share)) if len(share) else np.nan})
    return pd.DataFrame(rows)
