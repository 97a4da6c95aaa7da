"""Attributes of paper 003 encoded for its algorithms (Sec. 4.1): the QI and
SA distances of eqs. 2 and 3 (distNum over ranks of the distinct values,
distCat as LCA height over tree height), and per attribute the codes and
tables the kernels use -- node-to-node LCA and squared distance for
categorical QIs, the ground distance of each sensitive attribute.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...emd import Ground
from ...encode import domain_codes
from ...hierarchy import Hierarchy


def dist_num(i, j, m: int):
    """distNum of eq. 2/3: ``|i - j| / (m - 1)`` for ranks i, j among m values."""
    if m <= 1:
        return np.zeros(np.broadcast(np.asarray(i), np.asarray(j)).shape)[()]
    return np.abs(np.asarray(i, dtype=np.float64) - np.asarray(j, dtype=np.float64)) / (m - 1)


def dist_cat(i, j, hierarchy: Hierarchy):
    """distCat of eq. 2/3: LCA height / tree height for leaf codes i, j."""
    if hierarchy.height == 0:
        return np.zeros(np.broadcast(np.asarray(i), np.asarray(j)).shape)[()]
    return hierarchy.lca_heights()[np.asarray(i), np.asarray(j)] / float(hierarchy.height)


@dataclass
class QIColumn:
    name: str
    numeric: bool
    codes: np.ndarray            # rank (numeric) or node id of the leaf (categorical)
    values: np.ndarray | None = None       # numeric: sorted distinct values
    hierarchy: Hierarchy | None = None
    n_nodes: int = 0
    sqd: np.ndarray | None = None          # node x node squared distance
    lca: np.ndarray | None = None          # node x node LCA node id
    leaf_count: np.ndarray | None = None   # leaves below every node

    @property
    def scale(self) -> float:
        m = len(self.values) if self.numeric else 0
        return 1.0 / (m - 1) if m > 1 else 0.0


@dataclass
class SAColumn:
    name: str
    numeric: bool
    codes: np.ndarray            # domain index
    domain: list
    ground: Ground
    hierarchy: Hierarchy | None  # for distCat (flat when none declared)
    spec: object                 # what to hand anonset.checks as ground


def node_tables(h: Hierarchy):
    """LCA node, squared distCat and leaf counts over all nodes of a tree."""
    nn = len(h.labels)
    H = h.height
    anc = np.full((nn, H + 1), -1, dtype=np.int64)
    for v in range(nn):
        u, lv = v, int(h.level[v])
        while u >= 0:
            anc[v, int(h.level[u])] = u
            u = int(h.parent[u])
        anc[v, :lv] = -2 - v            # below its own level: distinct per node
    eq = anc[:, None, :] == anc[None, :, :]
    lvl = np.argmax(eq, axis=2)         # first shared level (the root always is)
    lca = np.take_along_axis(anc[:, None, :].repeat(nn, axis=1), lvl[:, :, None], 2)[:, :, 0]
    lca[np.arange(nn), np.arange(nn)] = np.arange(nn)     # a node is its own LCA
    # distCat of eq. 2 extended to inner nodes: the LCA height over the tree
    # height, also for a node with itself (a merged class stays generalized)
    lvl[np.arange(nn), np.arange(nn)] = h.level
    sqd = (lvl / float(H)) ** 2 if H > 0 else np.zeros((nn, nn))
    leaf_count = np.zeros(nn, dtype=np.int64)
    np.add.at(leaf_count, h.ancestors.reshape(-1), 1)
    return lca.astype(np.int32), np.ascontiguousarray(sqd, dtype=np.float64), leaf_count


def is_numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)


def leaf_codes(col: pd.Series, h: Hierarchy, name: str, what: str) -> np.ndarray:
    vals = col.astype(str).to_numpy() if not pd.api.types.is_string_dtype(col.dtype) \
        else col.to_numpy().astype(str)
    codes = domain_codes(vals, h.leaves).astype(np.int64)
    if (codes < 0).any():
        from ...validate import InputError, row_name
        bad = np.flatnonzero(codes < 0)
        raise InputError(f"has {len(bad):,} value(s) that are not leaves of its "
                         f"hierarchy (first: {str(vals[bad[0]])!r} at {row_name(int(bad[0]))})",
                         column=name,
                         expected="every value a leaf of the hierarchy (add a line for it)")
    return codes
