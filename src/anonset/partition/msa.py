"""t-closeness for several sensitive attributes by partition publishing
(paper 003: Wang, Zhu, Chen, Chang, JCST 2018).

Three algorithms put the records into equivalence classes, generalize the
quasi-identifiers (QIs) of each class to their lowest common ancestor (a
range for numeric QIs, a hierarchy node for categorical ones) and keep the
sensitive attributes (SAs) exact:

``cluster``   Algorithm 1: equi-sized fuzzy c-means (Hoppner & Klawonn's
              size-constrained FCM, the paper's ref. [19]) over the SA distance
              of eq. 3 splits the records into k clusters of floor(n/k) or
              ceil(n/k) records; GenerateEquivalenceClasses (Pseudocode 1)
              then builds each class from one record per cluster (QI-nearest
              to a random seed, eq. 2) and EnsureTCloseness (Pseudocode 2)
              merges every class that violates t with the class whose
              centroid is nearest, until all satisfy t (Def. 4).
``pca``       Algorithm 2: records sorted by the first principal component of
              the SAs (one-hot for categorical ones), split into k' groups
              with the k-adjustment formula, then the same two steps.
``microagg``  The contrast: t-closeness-first microaggregation (Soria-Comas et
              al. 2015, ref. [9], their Algorithm 3) adapted to several SAs:
              k' from their EMD bound, records in joint SA order split into k'
              subsets, MDAV-style classes (seed = record farthest from the
              centroid of the remaining ones), Pseudocode 2 where Def. 4 still
              fails.

Every output satisfies k-anonymity and t-closeness for every SA (Def. 4)
under the declared ground distances; tests check it with
:func:`anonset.checks.check_partition`.  Choices where the paper is silent are
listed in docs/msa.md.

Examples
--------
>>> import pandas as pd
>>> from anonset.msa import anonymize_msa
>>> df = pd.DataFrame({"age": [21, 25, 33, 38, 45, 52, 58, 63],
...                    "sex": list("MFMFMFMF"),
...                    "job": list("abcdabcd"), "edu": [1, 2, 3, 4, 4, 3, 2, 1]})
>>> r = anonymize_msa(df, ["age", "sex"], ["job", "edu"], k=2, t=0.5,
...                   algorithm="pca", seed=1)
>>> r.k_achieved >= 2 and r.t_achieved <= 0.5
True
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..emd import Ground, effective_n_threads
from ..encode import domain_codes
from ..hierarchy import Hierarchy

__all__ = ["ALGORITHMS", "MSAProblem", "MSAResult", "anonymize_msa", "equisized_fcm",
           "pca_order", "adjusted_k", "split_sizes", "information_loss", "dist_num",
           "dist_cat"]

ALGORITHMS = ("cluster", "pca", "microagg")

# A class violates t when its EMD exceeds t - _T_MARGIN: the kernel and the
# checker agree bit for bit, the margin only guards against a caller who
# recomputes the EMD in another summation order (differences ~1e-16).
_T_MARGIN = 1e-12


# ---------------------------------------------------------------- distances (Sec. 4.1)
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


# ---------------------------------------------------------------- k and group sizes
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


# ---------------------------------------------------------------- encoded attributes
@dataclass
class _QI:
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
class _SA:
    name: str
    numeric: bool
    codes: np.ndarray            # domain index
    domain: list
    ground: Ground
    hierarchy: Hierarchy | None  # for distCat (flat when none declared)
    spec: object                 # what to hand anonset.checks as ground


def _node_tables(h: Hierarchy):
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


def _is_numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)


def _leaf_codes(col: pd.Series, h: Hierarchy, name: str, what: str) -> np.ndarray:
    vals = col.astype(str).to_numpy() if not pd.api.types.is_string_dtype(col.dtype) \
        else col.to_numpy().astype(str)
    codes = domain_codes(vals, h.leaves).astype(np.int64)
    if (codes < 0).any():
        bad = pd.unique(vals[codes < 0])[:5]
        raise ValueError(f"{what} {name!r}: value(s) {list(bad)!r} are not leaves of its hierarchy")
    return codes


# ---------------------------------------------------------------- the problem
class MSAProblem:
    """A table encoded for the algorithms of paper 003.

    Encoding is independent of k, t and the algorithm, so one problem serves a
    whole parameter grid.

    Parameters
    ----------
    data : DataFrame
    quasi_identifiers, sensitive : lists of column names
    hierarchies : {column: Hierarchy or ARX CSV path}, optional
        Generalization trees of categorical QIs (without one a QI gets the
        one-level tree) and of categorical SAs (their hierarchical ground).
    numeric : column names, optional
        Columns treated as numeric (ranges; distNum; ordered ground).  Default:
        numeric-dtype columns without a hierarchy.
    ground : {SA: 'ordered' | 'equal' | 'hierarchical' | Ground}, optional
        Ground distance of each SA for t-closeness.  Default: 'ordered' for
        numeric SAs, 'hierarchical' when a hierarchy is given, else 'equal'.
    n_threads : int, optional
    """

    def __init__(self, data: pd.DataFrame, quasi_identifiers: Sequence[str],
                 sensitive: Sequence[str], *, hierarchies: Mapping | None = None,
                 numeric: Sequence[str] | None = None, ground: Mapping | None = None,
                 n_threads: int | None = None):
        if not isinstance(data, pd.DataFrame):
            try:
                import pyarrow as pa
                if isinstance(data, pa.Table):
                    data = data.to_pandas()
            except ImportError:  # pragma: no cover
                pass
        if not isinstance(data, pd.DataFrame):
            raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        qi = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers)
        sa = [sensitive] if isinstance(sensitive, str) else list(sensitive)
        if not sa:
            raise ValueError("sensitive: give at least one sensitive attribute")
        for role, names in (("quasi_identifiers", qi), ("sensitive", sa)):
            for c in names:
                if c not in data.columns:
                    raise ValueError(f"{role}: column {c!r} is not in the data; columns are "
                                     f"{list(data.columns)}")
            if len(set(names)) != len(names):
                raise ValueError(f"{role}: duplicate column names {names}")
        both = sorted(set(qi) & set(sa))
        if both:
            raise ValueError(f"column(s) {both} are both quasi-identifier and sensitive")
        if len(data) == 0:
            raise ValueError("the table is empty")
        hier = {}
        for c, h in dict(hierarchies or {}).items():
            if c not in data.columns:
                raise ValueError(f"hierarchies: column {c!r} is not in the data")
            hier[c] = h if isinstance(h, Hierarchy) else Hierarchy.from_csv(h)
        numeric = set(numeric) if numeric is not None else {
            c for c in qi + sa if c not in hier and _is_numeric(data[c])}
        for c in numeric:
            if c not in qi + sa:
                raise ValueError(f"numeric: column {c!r} is neither a quasi-identifier nor "
                                 "sensitive")
            if not _is_numeric(data[c]):
                raise ValueError(f"numeric: column {c!r} has dtype {data[c].dtype}, not numeric")
        ground = dict(ground or {})
        for c in ground:
            if c not in sa:
                raise ValueError(f"ground: column {c!r} is not a sensitive attribute")
        for c in qi + sa:
            if data[c].isna().any():
                raise ValueError(f"column {c!r} has missing values; drop or impute them first")
        self.data = data.reset_index(drop=True)
        self.n = len(self.data)
        self.quasi_identifiers = qi
        self.sensitive = sa
        self.n_threads = effective_n_threads(n_threads)
        self.qis = [self._encode_qi(c, c in numeric, hier.get(c)) for c in qi]
        self.sas = [self._encode_sa(c, c in numeric, hier.get(c), ground.get(c)) for c in sa]
        self._kernel_arrays()

    # ------------------------------------------------------------ encoding
    def _encode_qi(self, name, numeric, h) -> _QI:
        col = self.data[name]
        if numeric:
            values, codes = np.unique(col.to_numpy(dtype=np.float64), return_inverse=True)
            return _QI(name, True, codes.astype(np.int32), values=values)
        if h is None:
            h = Hierarchy.flat(sorted(col.astype(str).unique()))
        leaves = _leaf_codes(col, h, name, "quasi-identifier")
        lca, sqd, leaf_count = _node_tables(h)
        return _QI(name, False, h.ancestors[leaves, 0].astype(np.int32), hierarchy=h,
                   n_nodes=len(h.labels), sqd=sqd, lca=lca, leaf_count=leaf_count)

    def _encode_sa(self, name, numeric, h, gspec) -> _SA:
        col = self.data[name]
        if isinstance(gspec, Hierarchy):
            h, gspec = gspec, "hierarchical"
        if gspec in ("hierarchical", "tree") and h is None:
            raise ValueError(f"ground for {name!r} is 'hierarchical' but no hierarchy was given")
        if h is not None and gspec in (None, "hierarchical", "tree"):
            codes = _leaf_codes(col, h, name, "sensitive attribute")
            g = Ground.tree(h)
            return _SA(name, False, codes, list(h.leaves), g, h, g)
        if numeric:
            domain, codes = np.unique(col.to_numpy(), return_inverse=True)
        else:
            domain, codes = np.unique(col.astype(str).to_numpy(), return_inverse=True)
        domain = list(domain)
        d = len(domain)
        if gspec is None:
            gspec = "ordered" if numeric else "equal"
        g = Ground.from_spec(gspec, d)
        if g.kind == "hierarchical":
            h = g._hierarchy
        elif numeric or g.kind in ("ordered", "values"):
            h = None                    # distNum over the ranks
        else:
            h = Hierarchy.flat([str(v) for v in domain])
        return _SA(name, numeric and h is None, codes.astype(np.int64), domain, g, h, g)

    def _kernel_arrays(self):
        qis = self.qis
        self._x = np.ascontiguousarray(np.stack([q.codes for q in qis], axis=1)
                                       if qis else np.zeros((self.n, 0), np.int32), np.int32)
        # distinct QI tuples: the kernel searches tuples, not records
        if qis:
            xu, tid = np.unique(self._x, axis=0, return_inverse=True)
        else:
            xu, tid = np.zeros((1, 0), np.int32), np.zeros(self.n, np.int64)
        self._xu = np.ascontiguousarray(xu, np.int32)
        self._tid = np.ascontiguousarray(np.asarray(tid).reshape(-1), np.int64)
        self._kind = np.array([0 if q.numeric else 1 for q in qis], dtype=np.int32)
        self._scale = np.array([q.scale for q in qis], dtype=np.float64)
        self._dom = np.array([0 if q.numeric else q.n_nodes for q in qis], dtype=np.int32)
        off, tabs, lcas = [], [], []
        o = 0
        for q in qis:
            off.append(o)
            if not q.numeric:
                tabs.append(q.sqd.ravel())
                lcas.append(q.lca.ravel())
                o += q.sqd.size
        self._tab_off = np.array(off, dtype=np.int64)
        self._tab = np.ascontiguousarray(np.concatenate(tabs) if tabs else np.zeros(0))
        self._lca = np.ascontiguousarray(np.concatenate(lcas) if lcas
                                         else np.zeros(0, np.int32), np.int32)
        sas = self.sas
        self._d = np.array([s.ground.d for s in sas], dtype=np.int64)
        self._d_off = np.concatenate([[0], np.cumsum(self._d)[:-1]]).astype(np.int64)
        self._d_total = int(self._d.sum())
        self._n_nodes = np.array([s.ground.n_nodes for s in sas], dtype=np.int64)
        self._node_off = np.concatenate([[0], np.cumsum(self._n_nodes)[:-1]]).astype(np.int64)
        self._parent = np.ascontiguousarray(np.concatenate([s.ground.parent for s in sas]))
        self._weight = np.ascontiguousarray(np.concatenate([s.ground.weight for s in sas]))
        q = []
        for s in sas:
            tot = np.bincount(s.codes, minlength=s.ground.d).astype(np.float64)
            q.append(tot / tot.sum())       # the checker's normalization, bit for bit
        self._q = np.ascontiguousarray(np.concatenate(q))
        # flat column index of every record's SA value in the class-count matrix
        self._sa_cols = np.stack([s.codes + off for s, off in zip(sas, self._d_off)], axis=1)

    # ------------------------------------------------------------ distances
    def dist_qi(self, i, j) -> np.ndarray:
        """Eq. 2: QI distance between records i and j (arrays broadcast)."""
        i, j = np.asarray(i), np.asarray(j)
        acc = np.zeros(np.broadcast(i, j).shape)
        for q in self.qis:
            if q.numeric:
                acc = acc + dist_num(q.codes[i], q.codes[j], len(q.values)) ** 2
            else:
                acc = acc + q.sqd[q.codes[i], q.codes[j]]
        return np.sqrt(acc)

    def sa_embedding(self) -> np.ndarray:
        """Records as points whose Euclidean distances are eq. 3 exactly.

        A numeric SA is its rank / (m - 1) (distNum).  A categorical SA with a
        tree of height h is a one-hot over its non-root nodes, the node at
        level l scaled by sqrt((2l + 1) / (2 h^2)): two leaves with LCA at
        level L then differ in 2 L nodes and their squared distance is
        sum_{l<L} (2l + 1) / h^2 = (L / h)^2 = distCat^2 (an ultrametric).
        """
        cols = []
        for s in self.sas:
            if s.hierarchy is None:
                m = s.ground.d
                cols.append((s.codes / (m - 1) if m > 1 else 0.0 * s.codes)[:, None])
                continue
            h = s.hierarchy
            H = h.height
            if H == 0:
                continue
            nn = len(h.labels)
            w = np.sqrt((2.0 * h.level + 1.0) / (2.0 * H * H))
            w[h.level == H] = 0.0
            E = np.zeros((self.n, nn))
            for lvl in range(H):
                E[np.arange(self.n), h.ancestors[s.codes, lvl]] = w[h.ancestors[s.codes, lvl]]
            cols.append(E[:, h.level < H])
        return np.hstack(cols) if cols else np.zeros((self.n, 1))

    def dist_sa(self, i, j) -> np.ndarray:
        """Eq. 3: SA distance between records i and j."""
        i, j = np.asarray(i), np.asarray(j)
        acc = np.zeros(np.broadcast(i, j).shape)
        for s in self.sas:
            if s.hierarchy is None:
                acc = acc + dist_num(s.codes[i], s.codes[j], s.ground.d) ** 2
            else:
                acc = acc + dist_cat(s.codes[i], s.codes[j], s.hierarchy) ** 2
        return np.sqrt(acc)

    # ------------------------------------------------------------ steps
    def _check_kt(self, k, t):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) \
                or not (0.0 <= float(t) <= 1.0) or math.isnan(float(t)):
            raise ValueError(f"t must be a number in [0, 1], got {t!r}")
        if self.n < k:
            raise ValueError(f"the table has {self.n} records, fewer than k={k}")

    def clusters(self, algorithm: str, k: int, t: float = 1.0, *, seed=None,
                 fcm_options: Mapping | None = None):
        """The SA clusters/groups of an algorithm: (list of member arrays,
        seed mode, effective k)."""
        rng = np.random.default_rng(seed)
        n = self.n
        if algorithm == "cluster":
            labels = equisized_fcm(self.sa_embedding(), k, rng=rng, **dict(fcm_options or {}))
            groups = [np.flatnonzero(labels == c) for c in range(k)]
            return groups, 0, k
        if algorithm == "pca":
            kk = adjusted_k(n, k)
            order = pca_order(self._pca_matrix())
            sizes = split_sizes(n, kk, "central")
            return np.split(order, np.cumsum(sizes)[:-1]), 0, kk
        if algorithm == "microagg":
            t = float(t)
            # Soria-Comas et al. 2015, Prop. 2: one record from each of k equal
            # subsets of the SA order keeps the ordered EMD <= (n - k) / (2 k (n - 1)),
            # so k >= n / (2 (n - 1) t + 1) guarantees t for one SA.
            kt = k if n <= 1 else max(k, math.ceil(n / (2.0 * (n - 1) * t + 1.0)))
            kk = adjusted_k(n, min(kt, n))
            order = self._joint_sa_order()
            sizes = split_sizes(n, kk, "central")
            return np.split(order, np.cumsum(sizes)[:-1]), 1, kk
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")

    def _pca_matrix(self) -> np.ndarray:
        cols = []
        for s in self.sas:
            if s.numeric:
                cols.append(np.asarray(s.domain, dtype=np.float64)[s.codes][:, None])
            else:                       # one binary attribute per value (Sec. 4.2)
                oh = np.zeros((self.n, s.ground.d))
                oh[np.arange(self.n), s.codes] = 1.0
                cols.append(oh)
        return np.hstack(cols)

    def _joint_sa_order(self) -> np.ndarray:
        """Records in lexicographic SA order; a categorical SA's values in the
        depth-first order of its tree (siblings adjacent)."""
        keys = []
        for s in reversed(self.sas):
            if s.hierarchy is not None:
                h = s.hierarchy
                path = [tuple(int(a) for a in h.ancestors[i, ::-1]) for i in range(h.d)]
                rank = np.empty(h.d, dtype=np.int64)
                rank[sorted(range(h.d), key=lambda i: path[i])] = np.arange(h.d)
                keys.append(rank[s.codes])
            else:
                keys.append(s.codes)
        return np.lexsort(keys) if keys else np.arange(self.n)   # stable

    def generate(self, groups, seed_mode: int, *, seed=None) -> tuple:
        """GenerateEquivalenceClasses (Pseudocode 1): class id per record."""
        from . import _msa
        rng = np.random.default_rng(seed)
        # random order within a tuple, equal tuples contiguous within a group
        groups = [np.asarray(g, dtype=np.int64) for g in groups]
        groups = [p[np.argsort(self._tid[p], kind="stable")]
                  for p in (rng.permutation(g) for g in groups)]
        sizes = np.array([len(g) for g in groups])
        if seed_mode == 0:
            cmin = int(np.argmin(sizes))
            seed_order = rng.permutation(groups[cmin]).astype(np.int64)
        else:
            seed_order = np.zeros(0, dtype=np.int64)
        cl_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        members = np.ascontiguousarray(np.concatenate(groups), dtype=np.int64)
        return _msa.generate_ecs(self._xu, self._tid, self._kind, self._scale, self._dom, self._tab_off,
                                 self._tab, cl_start, members, int(seed_mode), seed_order,
                                 self.n_threads)

    def class_state(self, classes: np.ndarray, n_classes: int):
        """SA counts and QI centroids (lo, hi) of every class."""
        counts = np.zeros((n_classes, self._d_total), dtype=np.int64)
        for j in range(self._sa_cols.shape[1]):
            flat = np.bincount(classes * self._d_total + self._sa_cols[:, j],
                               minlength=n_classes * self._d_total)
            counts += flat.reshape(n_classes, self._d_total)
        nq = len(self.qis)
        lo = np.zeros((n_classes, nq), dtype=np.int32)
        hi = np.zeros((n_classes, nq), dtype=np.int32)
        order = np.argsort(classes, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(classes[order]) != 0])
        for a, q in enumerate(self.qis):
            c = q.codes[order]
            if q.numeric:
                lo[:, a] = np.minimum.reduceat(c, starts)
                hi[:, a] = np.maximum.reduceat(c, starts)
                continue
            h = q.hierarchy
            leaf_of_node = np.full(q.n_nodes, -1, dtype=np.int64)
            leaf_of_node[h.ancestors[:, 0]] = np.arange(h.d)
            leaves = leaf_of_node[c]
            node = np.full(n_classes, -1, dtype=np.int64)
            for lvl in range(h.height + 1):
                anc = h.ancestors[leaves, lvl].astype(np.int64)
                same = np.minimum.reduceat(anc, starts) == np.maximum.reduceat(anc, starts)
                take = same & (node < 0)
                node[take] = np.minimum.reduceat(anc, starts)[take]
            lo[:, a] = node
            hi[:, a] = node
        return counts, lo, hi

    def ensure(self, counts, lo, hi, t: float):
        """EnsureTCloseness (Pseudocode 2) on class state, in place: the merge
        map (final class of every class) and the number of merges."""
        from . import _msa
        return _msa.ensure_t(self._d, self._d_off, counts, self._q, self._n_nodes,
                             self._node_off, self._parent, self._weight, self._kind,
                             self._scale, self._dom, self._tab_off, self._tab, self._lca,
                             lo, hi, float(t) - _T_MARGIN, self.n_threads)

    def class_emd(self, counts) -> np.ndarray:
        """Def. 4 value (largest EMD over the SAs) of every class row."""
        from . import _msa
        return _msa.class_emd(self._d, self._d_off, np.ascontiguousarray(counts, np.int64),
                              self._q, self._n_nodes, self._node_off, self._parent,
                              self._weight)

    # ------------------------------------------------------------ the whole run
    def run(self, algorithm: str, k: int, t: float, *, seed=None,
            fcm_options: Mapping | None = None) -> "MSAResult":
        """Anonymize: clusters, Pseudocode 1, Pseudocode 2, generalization."""
        self._check_kt(k, t)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        ss = np.random.SeedSequence(seed)
        s_part, s_gen = ss.spawn(2)
        times = {}
        t0 = time.perf_counter()
        groups, mode, kk = self.clusters(algorithm, k, t, seed=s_part, fcm_options=fcm_options)
        t1 = time.perf_counter()
        classes, n_ec = self.generate(groups, mode, seed=s_gen)
        counts, lo, hi = self.class_state(classes, n_ec)
        t2 = time.perf_counter()
        into, merges = self.ensure(counts, lo, hi, t)
        t3 = time.perf_counter()
        final, relabel = np.unique(into, return_inverse=True)
        classes = relabel[classes].astype(np.int64)
        res = MSAResult(self, algorithm, int(k), float(t), kk, classes, counts[final],
                        lo[final], hi[final], int(merges), n_ec,
                        [len(g) for g in groups])
        times.update(partition=t1 - t0, generate=t2 - t1, ensure=t3 - t2,
                     total=t3 - t0)
        res.timings = times
        return res


# ---------------------------------------------------------------- partitions
def pca_order(M: np.ndarray, standardize: bool = True) -> np.ndarray:
    """Records sorted ascending by their first principal component (stable).

    Columns are standardized first (PCA of the correlation matrix, Weka's
    default, which the paper used); constant columns are dropped.  The sign
    of the component is fixed so that its largest loading is positive.
    """
    X = np.asarray(M, dtype=np.float64)
    X = X - X.mean(axis=0)
    sd = X.std(axis=0)
    keep = sd > 0
    if not keep.any():
        return np.arange(X.shape[0])
    X = X[:, keep]
    if standardize:
        X = X / sd[keep]
    C = X.T @ X / max(X.shape[0] - 1, 1)
    w, V = np.linalg.eigh(C)
    v = V[:, -1]
    v = v * (1.0 if v[np.argmax(np.abs(v))] > 0 else -1.0)
    return np.argsort(X @ v, kind="stable")


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


# ---------------------------------------------------------------- result
@dataclass
class MSAResult:
    """A published partition table and its facts.

    Attributes
    ----------
    classes : ndarray, the final equivalence class of every input row
    k_used : the number of SA clusters/groups (k after adjustment)
    n_merges : merges made by EnsureTCloseness
    timings : seconds per step (partition, generate, ensure, total)
    """

    problem: MSAProblem
    algorithm: str
    k: int
    t: float
    k_used: int
    classes: np.ndarray
    counts: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n_merges: int
    n_initial_classes: int
    cluster_sizes: list
    timings: dict = field(default_factory=dict)

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.classes)

    @property
    def k_achieved(self) -> int:
        return int(self.sizes.min())

    @property
    def class_emd(self) -> np.ndarray:
        return self.problem.class_emd(self.counts)

    @property
    def t_achieved(self) -> float:
        return float(self.class_emd.max())

    def size_stats(self) -> tuple:
        """(min, max, mean) class size, as Tables 6-8."""
        s = self.sizes
        return int(s.min()), int(s.max()), float(s.mean())

    def information_loss(self) -> float:
        """IL_T of eq. 1 (sum over QIs per record, mean over records)."""
        return information_loss(self)

    def generalized(self, keep: Sequence[str] = ()) -> pd.DataFrame:
        """The published table: ``ec`` (class id), the generalized QIs (ranges
        ``[lo, hi]`` for numeric QIs, hierarchy node labels for categorical),
        the SAs unchanged and the ``keep`` columns; rows grouped by class."""
        p = self.problem
        out = {"ec": self.classes}
        for a, q in enumerate(p.qis):
            if q.numeric:
                vals = [_fmt(v) for v in q.values]
                lab = np.array([f"[{vals[l]}, {vals[h]}]" for l, h in
                                zip(self.lo[:, a], self.hi[:, a])], dtype=object)
            else:
                lab = np.asarray(q.hierarchy.labels, dtype=object)[self.lo[:, a]]
            out[q.name] = lab[self.classes]
        for c in p.sensitive:
            out[c] = p.data[c].to_numpy()
        for c in keep:
            if c not in p.data.columns:
                raise ValueError(f"keep: column {c!r} is not in the data")
            if c in out:
                continue
            out[c] = p.data[c].to_numpy()
        df = pd.DataFrame(out)
        order = np.argsort(self.classes, kind="stable")
        return df.iloc[order].reset_index(drop=True)

    def summary(self) -> dict:
        mn, mx, avg = self.size_stats()
        return {"algorithm": self.algorithm, "k": self.k, "t": self.t, "k_used": self.k_used,
                "n_classes": int(self.sizes.size), "min_size": mn, "max_size": mx,
                "avg_size": avg, "k_achieved": self.k_achieved, "t_achieved": self.t_achieved,
                "il": self.information_loss(), "n_merges": self.n_merges,
                **{f"time_{k}": v for k, v in self.timings.items()}}

    def write(self, path, *, keep: Sequence[str] = (), protect=()) -> Path:
        """Write the published table atomically: Parquet for ``.parquet``/
        ``.pq``, CSV otherwise.  ``protect`` names files never overwritten."""
        from ..io.atomic import atomic_path
        path = Path(path)
        df = self.generalized(keep)
        with atomic_path(path, protect=protect) as tmp:
            if path.suffix.lower() in (".parquet", ".pq"):
                df.to_parquet(tmp, index=False)
            else:
                df.to_csv(tmp, index=False)
        return path


def _fmt(v) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def information_loss(result: MSAResult) -> float:
    """IL_T of eq. 1 with Sec. 2.2's generalized loss: per record the sum over
    QIs of (U_NA - L_NA) / (U - L) (numeric) or (LN_n - 1) / (LN - 1)
    (categorical), averaged over records."""
    p = result.problem
    per_class = np.zeros(result.lo.shape[0])
    for a, q in enumerate(p.qis):
        if q.numeric:
            span = q.values[-1] - q.values[0]
            if span > 0:
                per_class += (q.values[result.hi[:, a]] - q.values[result.lo[:, a]]) / span
        else:
            LN = q.hierarchy.d
            if LN > 1:
                per_class += (q.leaf_count[result.lo[:, a]] - 1) / (LN - 1)
    return float(per_class[result.classes].mean())


def anonymize_msa(data, quasi_identifiers, sensitive, k: int, t: float, *,
                  algorithm: str = "pca", hierarchies=None, numeric=None, ground=None,
                  seed=None, n_threads: int | None = None,
                  fcm_options: Mapping | None = None) -> MSAResult:
    """Publish ``data`` under k-anonymity and t-closeness for every sensitive
    attribute (paper 003, Def. 4).

    Parameters
    ----------
    data : DataFrame or pyarrow Table
    quasi_identifiers, sensitive : column names
    k : int
        Smallest class size.
    t : float in [0, 1]
        Largest EMD between a class's and the table's distribution of any SA.
    algorithm : {'cluster', 'pca', 'microagg'}
        Algorithm 1, Algorithm 2, or the t-closeness-first microaggregation.
    hierarchies, numeric, ground, n_threads
        See :class:`MSAProblem`.
    seed : int or SeedSequence, optional
        Randomness of FCM initialization and of the seeds of Pseudocode 1
        (not privacy-critical); default fresh from the OS.

    Returns
    -------
    MSAResult
        ``.generalized()`` is the published table, ``.write(path)`` writes it.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"zip": [1, 2, 3, 4, 5, 6], "s": list("aabbcc")})
    >>> r = anonymize_msa(df, ["zip"], ["s"], k=3, t=0.2, seed=0)
    >>> r.size_stats()[0] >= 3
    True
    """
    prob = MSAProblem(data, quasi_identifiers, sensitive, hierarchies=hierarchies,
                      numeric=numeric, ground=ground, n_threads=n_threads)
    return prob.run(algorithm, k, t, seed=seed, fcm_options=fcm_options)
