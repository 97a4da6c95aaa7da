"""Attribute domains of LGB (paper 002, Sec. 3.2.2): the ordered values of
each attribute, their integer codes, and what generalization needs from them --
numeric ranges or hierarchy nodes, with leaves reordered so that every subtree
is a contiguous code range (then a generalized cell is a code interval and
the lowest common ancestor of a range is the LCA of its ends), and the NCP
cost of generalizing a code range (Xu et al.'s convention: an ungeneralized
value costs 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...encode import domain_codes
from ...hierarchy import Hierarchy
from ...validate import row_name


@dataclass(frozen=True, eq=False)
class Domain:
    """Ordered domain of one attribute, with what generalization needs.

    Numeric attributes generalize to ranges of domain values; categorical ones
    to hierarchy nodes.  Leaves are ordered so that every subtree is a
    contiguous code range: then the lowest common ancestor of a code range is
    the LCA of its two ends, and a generalized cell is a code interval
    ``[glo, ghi]`` in both cases.
    """
    name: str
    numeric: bool
    values: tuple                      # domain values in code order
    hierarchy: Hierarchy | None        # categorical: leaves in code order
    cost: np.ndarray                   # numeric: (d,) normalized values; else (d, d)
    node_lo: np.ndarray | None = None  # categorical: leaf range of every node
    node_hi: np.ndarray | None = None
    lca: np.ndarray | None = None      # categorical: (d, d) LCA node id

    @property
    def d(self) -> int:
        return len(self.values)

    def range_cost(self, lo, hi):
        """NCP of generalizing to the code range [lo, hi] (Sec. 3.2.2)."""
        lo, hi = np.asarray(lo), np.asarray(hi)
        if self.numeric:
            return self.cost[hi] - self.cost[lo]
        return self.cost[lo, hi]

    def cover(self, lo, hi):
        """Published code interval of a group whose codes span [lo, hi]."""
        if self.numeric:
            return np.asarray(lo), np.asarray(hi)
        node = self.lca[lo, hi]
        return self.node_lo[node], self.node_hi[node]

    def labels(self, lo, hi) -> np.ndarray:
        """Published label of code intervals (already covers)."""
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        out = np.empty(lo.shape, dtype=object)
        if lo.size == 0:
            return out
        pairs, inv = np.unique(np.stack([lo, hi]), axis=1, return_inverse=True)
        labs = np.empty(pairs.shape[1], dtype=object)
        for j, (a, b) in enumerate(pairs.T):
            if a == b:
                labs[j] = str(self.values[a])
            elif self.numeric:
                labs[j] = f"[{_fmt(self.values[a])}-{_fmt(self.values[b])}]"
            else:
                labs[j] = self.hierarchy.labels[int(self.lca[a, b])]
        return labs[np.asarray(inv).ravel()]


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def contiguous(h: Hierarchy) -> Hierarchy:
    """The same tree with leaves reordered so that every subtree is a
    contiguous range, keeping the file's order otherwise."""
    anc = h.ancestors
    first = {}
    for i in range(h.d):
        for lev in range(h.height + 1):
            first.setdefault(int(anc[i, lev]), i)
    keys = [tuple(first[int(anc[i, lev])] for lev in range(h.height, -1, -1)) for i in range(h.d)]
    order = sorted(range(h.d), key=lambda i: keys[i])
    return Hierarchy([h.paths[i] for i in order], strip=False)


def make_domain(name: str, col: pd.Series, hierarchy: Hierarchy | None) -> Domain:
    numeric = hierarchy is None and pd.api.types.is_numeric_dtype(col.dtype) \
        and not pd.api.types.is_bool_dtype(col.dtype)
    if numeric:
        vals = np.unique(col.to_numpy())
        if np.issubdtype(vals.dtype, np.floating) and np.isnan(vals).any():
            raise ValueError(f"column {name!r} has missing values; drop or impute them first")
        x = vals.astype(np.float64)
        span = float(x[-1] - x[0])
        cost = (x - x[0]) / span if span > 0 else np.zeros_like(x)
        return Domain(name, True, tuple(v.item() for v in vals), None, cost)
    if hierarchy is None:
        uniq = pd.unique(col)
        if pd.isna(uniq).any():
            raise ValueError(f"column {name!r} has missing values; drop or impute them first")
        try:
            uniq = sorted(uniq)
        except TypeError:
            raise ValueError(f"column {name!r} mixes value types; convert it to one type") from None
        hierarchy = Hierarchy.flat([str(v) for v in uniq])
        values = tuple(v.item() if isinstance(v, np.generic) else v for v in uniq)
    else:
        hierarchy = contiguous(hierarchy)
        values = None
    h = hierarchy
    if values is None:
        if pd.api.types.is_integer_dtype(col.dtype):
            try:
                values = tuple(int(v) for v in h.leaves)
            except ValueError:
                raise ValueError(f"column {name!r} is integer but its hierarchy has "
                                 "non-integer leaves") from None
        else:
            values = tuple(h.leaves)
    d = h.d
    n_nodes = len(h.labels)
    leaf_codes = np.repeat(np.arange(d), h.height + 1)
    nodes = h.ancestors.ravel()
    node_lo = np.full(n_nodes, d, dtype=np.int64)
    node_hi = np.full(n_nodes, -1, dtype=np.int64)
    np.minimum.at(node_lo, nodes, leaf_codes)
    np.maximum.at(node_hi, nodes, leaf_codes)
    size = node_hi - node_lo + 1
    lev = h.lca_heights()
    lca = h.ancestors[np.arange(d)[:, None], lev].astype(np.int64)
    # Xu et al.'s convention: an ungeneralized value costs 0, a node
    # size(node) / |A| (the paper's Sec. 3.2.2 formula for generalized cells)
    cost = size[lca] / float(d)
    np.fill_diagonal(cost, 0.0)
    return Domain(name, False, values, h, cost, node_lo, node_hi, lca)


def encode_column(col: pd.Series, dom: Domain) -> np.ndarray:
    if dom.numeric:
        x = col.to_numpy()
        codes = np.searchsorted(np.asarray(dom.values), x)
        return codes.astype(np.int32)
    codes = domain_codes(col.astype(str), [str(v) for v in dom.values])
    if (codes < 0).any():
        from ...validate import InputError
        bad = np.flatnonzero(codes < 0)
        v = col.iloc[int(bad[0])]
        v = v.item() if isinstance(v, np.generic) else v
        raise InputError(f"has {len(bad):,} value(s) that are not leaves of its hierarchy "
                         f"(first: {str(v)!r} at {row_name(int(bad[0]))})", column=dom.name,
                         expected="every value a leaf of the hierarchy (add a line for it)")
    return codes
