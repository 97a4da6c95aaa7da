"""The table of paper 003 encoded once for its algorithms (Sec. 4): a
:class:`MSAProblem` validates the columns and their roles, encodes QIs and
SAs (independently of k, t and the algorithm, so one problem serves a
parameter grid), and runs the steps -- SA clusters or groups (Algorithms 1
and 2, or the microaggregation contrast), GenerateEquivalenceClasses
(Pseudocode 1), EnsureTCloseness (Pseudocode 2) -- with C kernels.
"""
from __future__ import annotations

import math
import time
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...emd import Ground, effective_n_threads
from ...encode import refuse_not_numeric
from ...hierarchy import Hierarchy, hierarchy_of
from ...io.keys import frame_digest
from ...shared_ids import shared_without_key
from ...passthrough import check_allow_identifier, check_allow_recode, check_passthrough
from ..._version import __version__
from ...validate import (InputError, ValuesError, apply_missing, check_int, check_names,
                         check_plain_values, check_token_declared, resolve_roles, row_name,
                         check_output_names)
from ..homogeneous import homogeneous_metadata
from ..keyed import ReleaseKey, by_name
from .clustering import adjusted_k, equisized_fcm, pca_order, split_sizes
from .encoding import QIColumn, SAColumn, is_numeric, leaf_codes, node_tables, dist_cat, dist_num

ALGORITHMS = ("cluster", "pca", "microagg")

# A class violates t when its EMD exceeds t - _T_MARGIN: the kernel and the
# checker agree bit for bit, the margin only guards against a caller who
# recomputes the EMD in another summation order (differences ~1e-16).
_T_MARGIN = 1e-12


class MSAProblem:
    """A table encoded for the algorithms of paper 003.

    Encoding is independent of k, t and the algorithm, so one problem serves a
    whole parameter grid.

    Parameters
    ----------
    data : DataFrame or pyarrow Table
        Every column needs a role: ``quasi_identifiers``, ``sensitive``,
        ``identifiers``, ``other`` or ``drop``; a column nobody named is
        refused (nothing is published or dropped by default).
    quasi_identifiers, sensitive : lists of column names
    identifiers, drop : column names
        Columns never published.
    other : column names
        Columns published unchanged beside the generalized QIs (the
        metadata lists them): only what is safe to publish as it is.
    allow_recode : column names
        Columns of ``other`` you accept to publish although they recode an
        SA or a QI (lambda >= 0.9 over 131,072 rows drawn at random: an SA
        nearly in the clear, or a QI at its exact values, which finds a
        person's row inside its class); refused otherwise.  An SA read
        beside one of them, or two SAs read together, toward a QI (BMI and
        the height give the weight) are named so too.  The metadata and the
        audit name them.
    allow_identifier : column names
        Columns of ``other`` you accept to publish although they single rows
        out (half of the first 250,000 rows or more hold a value no other
        row has): beside the exact SAs such a column names whose values they
        are wherever it is known elsewhere; refused otherwise (name it an
        identifier, or drop it).  The metadata and the audit name them.
    allow_shared_id : column names
        Identifiers whose values several rows share that you declare to be
        different people's (a household); refused otherwise
        (:mod:`anonset.shared_ids`: one person's waves fill groups as several people).
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
    missing : None (default), 'category' or 'drop'
        A missing cell in a QI or SA is refused by default; 'category'
        publishes it as the value ``missing_token``, a value of its own
        (columns of numbers refuse it; a declared domain or hierarchy lists
        the token); 'drop' leaves those rows out of the release
        (:func:`anonset.validate.apply_missing`; the metadata records how
        many, and the audit names it: presence in the release tells that a
        person's QIs and SAs are all answered).
    missing_token : str
        The value of a missing cell under ``missing='category'`` (default '?').
    domains : {SA: values in order}, optional
        The declared domain of a text SA, in its order: an answer scale
        ('never', 'rarely', ..., 'always') can then be measured under the
        ordered ground (``ground={SA: 'ordered'}``), which text read off the
        data cannot (its order would be alphabetical).  Every value must be
        in it; numeric SAs are ordered by value and take none.
    """

    def __init__(self, data: pd.DataFrame, quasi_identifiers: Sequence[str],
                 sensitive: Sequence[str], *, identifiers: Sequence[str] = (),
                 other: Sequence[str] = (), drop: Sequence[str] = (),
                 hierarchies: Mapping | None = None, numeric: Sequence[str] | None = None,
                 ground: Mapping | None = None, n_threads: int | None = None,
                 missing: str | None = None, missing_token: str = "?",
                 domains: Mapping | None = None, allow_recode: Sequence[str] = (),
                 allow_shared_id: Sequence[str] = (), allow_identifier: Sequence[str] = ()):
        data = _as_frame(data)
        qi = _names(quasi_identifiers, "quasi_identifiers")
        sa = _names(sensitive, "sensitive")
        if not sa:
            raise InputError("names no column", param="sensitive",
                             expected="at least one sensitive attribute")
        roles = resolve_roles(data.columns, {
            "quasi_identifiers": qi, "sensitive": sa,
            "identifiers": _names(identifiers, "identifiers"),
            "other": _names(other, "other"), "drop": _names(drop, "drop")})
        check_output_names({"quasi_identifiers": qi, "sensitive": sa,
                            "other": _names(other, "other")}, {"ec": "class column"})
        check_plain_values(data, qi + sa, partition=True)
        hier = {}
        for c, h in dict(hierarchies or {}).items():
            if c not in data.columns:
                raise InputError("is not a column of the data", param="hierarchies", column=c)
            if c not in qi + sa:
                continue                       # a hierarchy of an unpublished column
            hier[c] = hierarchy_of(c, h)
        # the columns named checked in the order given (a set's order, which
        # varies from run to run, chose the column refused first)
        given = list(dict.fromkeys(numeric)) if numeric is not None else []
        numeric = set(given) if numeric is not None else {
            c for c in qi + sa if c not in hier and is_numeric(data[c])}
        for c in given:
            if c not in qi + sa:
                raise InputError("is neither a quasi-identifier nor sensitive",
                                 param="numeric", column=c)
            if not is_numeric(data[c]):
                # named by its first cell of text and its row, as anonymize
                # names one in a binned column; the file on the command line
                # (H105: 'has dtype object' named neither, and Parquet's
                # 'has dtype str' differed)
                col = data[c].reset_index(drop=True)
                refuse_not_numeric(col, col.isna().to_numpy(), c,
                                   why="{@numeric} names it", text_first=True)
                raise InputError(f"holds its numbers as Python objects (dtype {data[c].dtype}), "
                                 "but {@numeric} names it", column=c,
                                 expected="a column of numbers (convert it, e.g. "
                                          "pandas.to_numeric(column))")
        if ground is not None and not isinstance(ground, Mapping):
            # 'equal' as Closeness(t, ground='equal') takes it was a
            # ValueError from dict() (H125)
            raise InputError(f"got {ground!r}" if isinstance(ground, str) else
                             f"got a {type(ground).__name__}", param="ground",
                             expected="a mapping {SA: 'ordered' | 'equal' | 'hierarchical'}, "
                                      "e.g. {'job': 'equal'}")
        ground = dict(ground or {})
        for c in ground:
            if c not in sa:
                raise InputError("is not a sensitive attribute", param="ground", column=c)
        declared = {}
        for c, vals in dict(domains or {}).items():
            if c not in sa:
                raise InputError("is not a sensitive attribute", param="domains", column=c,
                                 expected="the sensitive attributes' declared orders")
            if c in numeric or c in hier:
                raise InputError("is numeric or has a hierarchy, which orders it already",
                                 param="domains", column=c,
                                 expected="a declared domain only for a text sensitive "
                                          "attribute")
            vals = [str(v) for v in (vals or ())]
            if not vals or len(set(vals)) != len(vals):
                raise InputError(f"got {len(vals)} values, {len(vals) - len(set(vals))} "
                                 "repeated", param="domains", column=c,
                                 expected="each value once, in order")
            declared[c] = vals
        data, self.missing = apply_missing(data, qi + sa, missing, token=missing_token)
        check_token_declared(self.missing, {**{c: h.leaves for c, h in hier.items()},
                                            **declared})
        #: the text SAs' declared domains, in order (recorded for the audit)
        self.declared = declared
        #: every input column's role, as the caller named it
        self.roles = roles
        self.other = [c for c in data.columns if roles[c] == "other"]
        #: rows that share an identifier's value (one person's rows?), counted
        self.shared_ids = shared_without_key(data, [c for c in data.columns
                                                    if roles[c] == "identifiers"],
                                             allow_shared_id)
        #: pass-through columns that single rows out or recode a sensitive one
        # (one that recodes an SA or a QI is refused unless named)
        # (an SA, published exactly on each row, beside a pass-through
        # column may give a QI: BMI and height give the weight, H36)
        self.pass_through_risks = check_passthrough(
            data, self.other, sa, generalized=qi, beside=sa,
            allow_recode=check_allow_recode(allow_recode, self.other + sa),
            allow_identifier=check_allow_identifier(allow_identifier, self.other))
        # identifiers and dropped columns are not kept
        self.data = data[qi + sa + self.other].reset_index(drop=True)
        self.n = len(self.data)
        self.quasi_identifiers = qi
        self.sensitive = sa
        self.n_threads = effective_n_threads(n_threads)
        # encoded, and processed, in one order by name (:func:`by_name`),
        # whatever order they were listed in: the PCA matrix, the embedding
        # FCM clusters, the joint SA order, the QI tuples and every distance
        # summed over them, so that one table under one seed gives one
        # release (H111: listed the other way, another partition, whose
        # classes intersected with the first's); the published columns keep
        # the order listed (:attr:`quasi_identifiers`, :attr:`sensitive`)
        self.qis = [self._encode_qi(c, c in numeric, hier.get(c)) for c in by_name(qi)]
        self.sas = [self._encode_sa(c, c in numeric, hier.get(c), ground.get(c), declared.get(c))
                    for c in by_name(sa)]
        self._kernel_arrays()

    # ------------------------------------------------------------ encoding
    def _encode_qi(self, name, numeric, h) -> QIColumn:
        col = self.data[name]
        if numeric:
            values, codes = np.unique(col.to_numpy(dtype=np.float64), return_inverse=True)
            return QIColumn(name, True, codes.astype(np.int32), values=values)
        if h is None:
            h = Hierarchy.flat(sorted(col.astype(str).unique()))
        leaves = leaf_codes(col, h, name, "quasi-identifier")
        lca, sqd, leaf_count = node_tables(h)
        return QIColumn(name, False, h.ancestors[leaves, 0].astype(np.int32), hierarchy=h,
                        n_nodes=len(h.labels), sqd=sqd, lca=lca, leaf_count=leaf_count)

    def _encode_sa(self, name, numeric, h, gspec, declared=None) -> SAColumn:
        col = self.data[name]
        if isinstance(gspec, Hierarchy):
            h, gspec = gspec, "hierarchical"
        if gspec in ("hierarchical", "tree") and h is None:
            raise InputError(f"is {gspec!r}, but the column has no hierarchy", param="ground",
                             column=name, expected="a hierarchy for it ({@hierarchies}), or "
                                                   "the ground 'equal' or 'ordered'")
        if h is not None and gspec in (None, "hierarchical", "tree"):
            codes = leaf_codes(col, h, name, "sensitive attribute")
            g = Ground.tree(h)
            return SAColumn(name, False, codes, list(h.leaves), g, h, g)
        if declared is not None:
            text = col.astype(str).to_numpy()
            index = {v: i for i, v in enumerate(declared)}
            codes = np.array([index.get(v, -1) for v in text], dtype=np.int64)
            if (codes < 0).any():
                r = int(np.flatnonzero(codes < 0)[0])
                raise InputError(f"value {text[r]!r} at {row_name(r)} is not in the declared "
                                 f"domain ({len(declared)} values)", param="domains", column=name,
                                 expected="every value of the column in its declared domain")
            domain = list(declared)
        elif numeric:
            domain, codes = np.unique(col.to_numpy(), return_inverse=True)
        else:
            domain, codes = np.unique(col.astype(str).to_numpy(), return_inverse=True)
        domain = list(domain)
        d = len(domain)
        if gspec is None:
            gspec = "ordered" if numeric else "equal"
        g = Ground.from_spec(gspec, d)
        if not numeric and declared is None and g.kind in ("ordered", "values"):
            # text values have no order of their own: np.unique sorts them
            # alphabetically, and t under that order would mean nothing
            from ...validate import alphabetical_order
            raise InputError(f"has ground {g.kind!r}, but its text values have no order of "
                             f"their own (sorted alphabetically, {alphabetical_order(domain)})",
                             param="ground", column=name,
                             expected="its values declared in order ({@domains}), 'equal', a "
                                      "hierarchy, or the column treated as numeric "
                                      "({@numeric}) when its values are numbers")
        if g.kind == "hierarchical":
            h = g._hierarchy
        elif numeric or g.kind in ("ordered", "values"):
            h = None                    # distNum over the ranks
        else:
            h = Hierarchy.flat([str(v) for v in domain])
        return SAColumn(name, numeric and h is None, codes.astype(np.int64), domain, g, h, g)

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
        k = check_int(k, "k", minimum=1)
        if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) \
                or not (0.0 <= float(t) <= 1.0) or math.isnan(float(t)):
            raise InputError(f"got {t!r}", param="t", expected="a number in [0, 1]")
        if self.n < k:
            raise ValuesError(f"the table has {self.n} records, fewer than k={k}", param="k",
                              expected=f"k <= {self.n} (a class of k records)")

    def clusters(self, algorithm: str, k: int, t: float = 1.0, *, seed=None,
                 fcm_options: Mapping | None = None):
        """The SA clusters/groups of an algorithm: (list of member arrays,
        seed mode, effective k).  ``seed``: a NumPy seed or Generator for
        FCM's start and the order of tied records (:meth:`run` derives it
        from the release key), so that no tie is broken by input order."""
        rng = np.random.default_rng(seed)
        n = self.n
        if algorithm == "cluster":
            labels = equisized_fcm(self.sa_embedding(), k, rng=rng, **dict(fcm_options or {}))
            groups = [np.flatnonzero(labels == c) for c in range(k)]
            return groups, 0, k
        if algorithm == "pca":
            kk = adjusted_k(n, k)
            order = pca_order(self._pca_matrix(), tiebreak=rng.permutation(n))
            sizes = split_sizes(n, kk, "central")
            return np.split(order, np.cumsum(sizes)[:-1]), 0, kk
        if algorithm == "microagg":
            t = float(t)
            # Soria-Comas et al. 2015, Prop. 2: one record from each of k equal
            # subsets of the SA order keeps the ordered EMD <= (n - k) / (2 k (n - 1)),
            # so k >= n / (2 (n - 1) t + 1) guarantees t for one SA.
            kt = k if n <= 1 else max(k, math.ceil(n / (2.0 * (n - 1) * t + 1.0)))
            kk = adjusted_k(n, min(kt, n))
            order = self._joint_sa_order(tiebreak=rng.permutation(n))
            sizes = split_sizes(n, kk, "central")
            return np.split(order, np.cumsum(sizes)[:-1]), 1, kk
        raise InputError(f"got {algorithm!r}", param="algorithm",
                         expected=f"one of {', '.join(ALGORITHMS)}")

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

    def _joint_sa_order(self, tiebreak=None) -> np.ndarray:
        """Records in lexicographic SA order (the SAs by name, not in the
        order listed: :attr:`sas`); a categorical SA's values in the
        depth-first order of its tree (siblings adjacent); ties by
        ``tiebreak`` (default: record index)."""
        keys = [np.arange(self.n) if tiebreak is None else np.asarray(tiebreak)]
        for s in reversed(self.sas):
            if s.hierarchy is not None:
                h = s.hierarchy
                path = [tuple(int(a) for a in h.ancestors[i, ::-1]) for i in range(h.d)]
                rank = np.empty(h.d, dtype=np.int64)
                rank[sorted(range(h.d), key=lambda i: path[i])] = np.arange(h.d)
                keys.append(rank[s.codes])
            else:
                keys.append(s.codes)
        return np.lexsort(keys)

    def generate(self, groups, seed_mode: int, *, seed=None,
                 reference_scan: bool = False) -> tuple:
        """GenerateEquivalenceClasses (Pseudocode 1): class id per record.
        Nearest searches use a k-d tree per cluster; ``reference_scan`` scans
        the cluster instead (same classes, O(n) per search; for tests)."""
        from .. import _msa
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
        return _msa.generate_ecs(self._xu, self._tid, self._kind, self._scale, self._dom,
                                 self._tab_off, self._tab, cl_start, members, int(seed_mode),
                                 seed_order, self.n_threads, self._lca,
                                 bool(reference_scan))

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

    def ensure(self, counts, lo, hi, t: float, diverse=None):
        """EnsureTCloseness (Pseudocode 2) on class state, in place: the merge
        map (final class of every class) and the number of merges.
        ``diverse`` (one flag per SA): a class that holds one value of a
        flagged SA alone violates too, and is merged as one above t is."""
        from .. import _msa
        if diverse is not None:
            diverse = np.ascontiguousarray(diverse, dtype=np.uint8)
        return _msa.ensure_t(self._d, self._d_off, counts, self._q, self._n_nodes,
                             self._node_off, self._parent, self._weight, self._kind,
                             self._scale, self._dom, self._tab_off, self._tab, self._lca,
                             lo, hi, float(t) - _T_MARGIN, self.n_threads, diverse)

    def homogeneous_classes(self, counts) -> dict:
        """Per SA, the classes (rows of ``counts``) that hold one value of it
        alone while the table holds two or more: their number and rows."""
        out = {}
        for j, s in enumerate(self.sas):
            d, off = int(self._d[j]), int(self._d_off[j])
            if np.count_nonzero(self._q[off:off + d]) < 2:
                continue
            block = counts[:, off:off + d]
            single = np.count_nonzero(block, axis=1) == 1
            if single.any():
                out[s.name] = {"groups": int(single.sum()),
                               "rows": int(block[single].sum())}
        return {c: out[c] for c in self.sensitive if c in out}       # as listed

    def _one_value_within_t(self, counts, t: float, diverse) -> int:
        """Classes within t that hold one value alone of a flagged SA: those
        Pseudocode 2 merges only because of it (counted before it runs; the
        summary names them, as they explain information lost)."""
        if not any(diverse):
            return 0
        within = counts[self.class_emd(counts) <= float(t) - _T_MARGIN]
        single = np.zeros(within.shape[0], dtype=bool)
        for j, flag in enumerate(diverse):
            if flag:
                d, off = int(self._d[j]), int(self._d_off[j])
                single |= np.count_nonzero(within[:, off:off + d], axis=1) == 1
        return int(single.sum())

    def class_emd(self, counts) -> np.ndarray:
        """Def. 4 value (largest EMD over the SAs) of every class row."""
        from .. import _msa
        return _msa.class_emd(self._d, self._d_off, np.ascontiguousarray(counts, np.int64),
                              self._q, self._n_nodes, self._node_off, self._parent,
                              self._weight)

    # ------------------------------------------------------------ the whole run
    def _check_class_table(self, k: int) -> None:
        """Refuse, before any work, a release whose classes' value counts
        (up to n / k classes by every value of every SA, with a temporary
        as large) would not fit in this machine's memory: a sensitive
        column of a million distinct values (an id named as an SA) was a
        MemoryError after the clustering, asking for terabytes."""
        import os
        n_classes = max(1, self.n // int(k))
        need = 16 * n_classes * self._d_total
        try:
            have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):    # not POSIX: not checked
            return
        if need <= have:
            return
        big = max(zip(self._d, (s.name for s in self.sas)))
        raise InputError(f"its classes' value counts would take {need / 2**30:,.1f} GiB "
                         f"({n_classes:,} classes of k = {k} by {self._d_total:,} sensitive "
                         f"values; {big[1]!r} has {big[0]:,}), more than this machine's "
                         f"{have / 2**30:,.0f} GiB", param="sensitive",
                         expected="fewer distinct sensitive values (bins or a hierarchy "
                                  "level; an identifier is not a sensitive attribute) or a "
                                  "larger k")

    def run(self, algorithm: str, k: int, t: float, *, seed=None, research_seed: bool = False,
            keep_order: bool = False, fcm_options: Mapping | None = None,
            allow_homogeneous: Sequence[str] = (), allow_clear: Sequence[str] = ()):
        """Anonymize: clusters, Pseudocode 1, Pseudocode 2, generalization.

        ``seed``, ``research_seed``, ``keep_order``, ``allow_homogeneous``,
        ``allow_clear``: see :func:`anonymize_msa`.
        """
        self._check_kt(k, t)
        self._check_class_table(k)
        fcm_known = {"max_iter", "tol", "inner"}      # equisized_fcm's options
        if fcm_options is not None and (not isinstance(fcm_options, Mapping)
                                        or set(fcm_options) - fcm_known):
            raise InputError(f"got {fcm_options!r}", param="fcm_options",
                             expected=f"a mapping with keys among {sorted(fcm_known)}")
        allowed = check_names(allow_homogeneous, "allow_homogeneous")
        for c in allowed:
            if c not in self.sensitive:
                raise InputError(f"names {c!r}, which is not a sensitive attribute",
                                 param="allow_homogeneous",
                                 expected=f"sensitive attributes: one of {self.sensitive}")
        # a class of one value tells it only where the table holds two or more
        diverse = [s.name not in allowed and
                   np.count_nonzero(self._q[off:off + d]) > 1
                   for s, off, d in zip(self.sas, self._d_off, self._d)]
        # a class of one row shows its QI cells exactly: possible at k = 1
        # where no SA keeps two values in every class (H56), and t then
        # decides: refused, once the classes are made, if one is left
        qsizes = {q.name: int(len(np.unique(q.codes))) for q in self.qis}
        qsizes = {c: qsizes[c] for c in self.quasi_identifiers}      # named as listed
        allow_clear = check_names(allow_clear, "allow_clear")
        if allow_clear and (k != 1 or any(diverse)):
            raise InputError("applies only where a class may hold one row: at k = 1 with "
                             "every sensitive attribute in {@allow_homogeneous}",
                             param="allow_clear",
                             expected="no {@allow_clear} (every class keeps "
                                      + (f"k = {k} rows" if k != 1 else
                                         "two rows or more, each SA two values")
                                      + " or more)")
        for a in allow_clear:
            if a not in qsizes:
                raise InputError(f"names {a!r}, which is not a quasi-identifier",
                                 param="allow_clear", expected=f"one of {list(qsizes)}")
        if algorithm not in ALGORITHMS:
            raise InputError(f"got {algorithm!r}", param="algorithm",
                             expected=f"one of {', '.join(ALGORITHMS)}")
        key = ReleaseKey.make(seed, research_seed=research_seed,
                              keep_order=keep_order).for_release(
            {"paper": "003", "k": k, "t": t, "algorithm": algorithm,
             # the columns by name: listed in another order, one release (H111)
             **self.model_columns(), "quasi_identifiers": [q.name for q in self.qis],
             "sensitive": [s.name for s in self.sas],
             "qi_kinds": [[q.name, q.numeric,
                           q.hierarchy.to_csv() if q.hierarchy is not None else None]
                          for q in self.qis],
             # another table under one key (a later wave): another order and
             # other class labels, not rows lined up with the first release's
             "data": lambda: frame_digest(self.data, [q.name for q in self.qis] +
                                          [s.name for s in self.sas] + sorted(self.other))})
        times = {}
        t0 = time.perf_counter()
        groups, mode, kk = self.clusters(algorithm, k, t, seed=key.generator("msa-clusters"),
                                         fcm_options=fcm_options)
        t1 = time.perf_counter()
        classes, n_ec = self.generate(groups, mode, seed=key.generator("msa-classes"))
        counts, lo, hi = self.class_state(classes, n_ec)
        t2 = time.perf_counter()
        one_value = self._one_value_within_t(counts, t, diverse)
        into, merges = self.ensure(counts, lo, hi, t, diverse)
        t3 = time.perf_counter()
        final, relabel = np.unique(into, return_inverse=True)
        clear = []
        if (np.bincount(relabel[classes]) == 1).any():
            from ...validate import refuse_clear_l
            clear = refuse_clear_l({}, qsizes, allow_clear, k=1, generalized=list(qsizes))
        # published class labels and row order: drawn from the key, so that
        # neither follows the input order (rows grouped by class, in a random
        # order within it); keep_order keeps both
        label_of = np.empty(final.size, dtype=np.int64)
        by_label = final[key.order(final.size, "msa-class-labels")]
        label_of[np.searchsorted(final, by_label)] = np.arange(final.size)
        classes = label_of[relabel[classes]]
        if keep_order:
            order = np.arange(self.n, dtype=np.int64)
        else:
            rank = np.empty(self.n, dtype=np.int64)
            rank[key.order(self.n, "msa-rows")] = np.arange(self.n)
            order = np.lexsort((rank, classes))
        from .result import MSAResult
        res = MSAResult(self, algorithm, int(k), float(t), kk, classes, counts[by_label],
                        lo[by_label], hi[by_label], int(merges), n_ec,
                        [len(g) for g in groups], order=order,
                        metadata={"paper": "003", "anonset": __version__,
                                  # (a class dropped or repeated shows without the original)
                                  "n_rows": int(self.n),
                                  "model": {"k": int(k), "t": float(t),
                                                            "algorithm": algorithm,
                                                            **self.model_columns()},
                                  **key.metadata(), **self.column_roles(),
                                  "clear": clear,
                                  **homogeneous_metadata(
                                      self.homogeneous_classes(counts[by_label]), allowed,
                                      merged=one_value)})
        times.update(partition=t1 - t0, generate=t2 - t1, ensure=t3 - t2,
                     total=t3 - t0)
        res.timings = times
        return res

    def model_columns(self) -> dict:
        """What a reader of the release needs to re-check Def. 4 from the
        published table alone (``anonset report``): the QI and SA columns,
        each SA's ground kind and, for a hierarchical ground, its hierarchy
        (ARX text; a public generalization tree, no record's value)."""
        return {"quasi_identifiers": list(self.quasi_identifiers),
                "sensitive": list(self.sensitive),
                "ground": {s.name: s.ground.kind for s in self._listed_sas()},
                "hierarchies": {s.name: s.hierarchy.to_csv() for s in self._listed_sas()
                                if s.ground.kind == "hierarchical"},
                **({"domains": self.declared} if self.declared else {})}

    def _listed_sas(self) -> list:
        """The encoded SAs in the order the caller listed them."""
        by = {s.name: s for s in self.sas}
        return [by[c] for c in self.sensitive]

    def column_roles(self) -> dict:
        """The columns a release passes through, and those it never publishes."""
        return {"pass_through": list(self.other),
                "identifiers": [c for c, r in self.roles.items() if r == "identifiers"],
                "dropped": [c for c, r in self.roles.items() if r == "drop"],
                **self.shared_ids,
                "pass_through_risks": self.pass_through_risks,
                "missing": self.missing}


def _as_frame(data) -> pd.DataFrame:
    from ...io.tables import as_frame        # pandas, Arrow, Polars, DuckDB, ... as publish
    data = as_frame(data)
    if len(data) == 0:
        raise InputError("the table is empty", param="data", expected="at least one record")
    return data


def _names(v, param: str) -> list:
    return list(check_names(v, param))
