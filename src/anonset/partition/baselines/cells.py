"""A whole workload of paper 004's count queries (Sec. 6.1, eq. 11-12)
answered at once from per-point statistics: the same answers as the
per-query functions of :mod:`.queries`, without a pass over the rows per
query.

A query's QID predicate is a product of per-attribute sets, so its cell is a
union of *points* (distinct tuples of all the QIDs; on the 600,000-row
OCC-5 stand-in about 37,000).  Everything an answer sums over the cell's
rows -- the true counts of S, the counts ``w`` of the published sets (eq.
17) that the Proposal's EM starts from, Anatomy's per-row share of its
group's sensitive values -- is summed once per point into a (points, |S|)
table, and a batch of queries is one matrix product of their 0/1 point
masks with the tables.  A generalization (Mondrian, TP) does not look at
rows at all: its answer is the groups' box shares (Xiao & Tao's uniform
assumption, :func:`.queries.box_weights`) times the groups' histograms, again
one product per batch.

Integer sums (true counts, ``w``, cell sizes) are exact in float64, so the
Proposal's EM gets the very ``w`` of the per-query path; fractional answers
(Anatomy, Mondrian, TP) differ from it only in the order of summation.
This pays when points are much fewer than rows and the tables (``points x
|S|``, ``groups x |S|``) are modest (:func:`dense_ok`); otherwise (Adult: 14
QIDs, nearly a point per row) callers use the per-query path.
"""
from __future__ import annotations

import numpy as np

from .queries import box_weights

__all__ = ["PointCells", "dense_ok", "true_sums", "partition_sums", "set_w"]

#: Largest table (entries) built densely: points x |S| or groups x |S|.
DENSE_LIMIT = 30_000_000
#: Entries of one batch of point masks (queries x points), about 32 MB.
MASK_ENTRIES = 4_000_000


class PointCells:
    """The rows of a table grouped by their QID point.

    ``point[i]``: the point of row i; ``pcodes`` (q, points): each point's
    codes; ``sizes``: rows per point.

    Examples
    --------
    >>> import numpy as np
    >>> from anonset.partition.baselines.queries import CountQuery
    >>> qc = np.array([[0, 0, 1, 1, 1], [2, 2, 0, 2, 2]], dtype=np.int32)
    >>> cells = PointCells(qc)
    >>> cells.n_points, cells.sizes.tolist()
    (3, [2, 1, 2])
    >>> qu = CountQuery((0,), (np.array([False, True]),), np.array([True, True]))
    >>> cells.mask(qu).tolist()
    [False, True, True]
    """

    def __init__(self, qcodes: np.ndarray):
        qcodes = np.asarray(qcodes)
        q, n = qcodes.shape
        if q == 0:
            point = np.zeros(n, dtype=np.int64)
        else:
            dims = tuple(int(v) for v in qcodes.max(axis=1).astype(np.int64) + 1)
            if np.prod(np.asarray(dims, dtype=float)) < 2.0 ** 62:
                flat = np.ravel_multi_index(tuple(qcodes.astype(np.int64)), dims)
                point = np.unique(flat, return_inverse=True)[1].ravel()
            else:
                point = np.unique(qcodes.T, axis=0, return_inverse=True)[1].ravel()
        self.point = point.astype(np.int64)
        self.n_points = int(self.point.max()) + 1 if n else 0
        first = np.zeros(self.n_points, dtype=np.int64)
        first[self.point[::-1]] = np.arange(n)[::-1]            # first row of each point
        self.pcodes = np.ascontiguousarray(qcodes[:, first])
        self.sizes = np.bincount(self.point, minlength=self.n_points)
        self._order = None

    def count_table(self, codes: np.ndarray, d: int) -> np.ndarray:
        """(points, d) counts of ``codes`` (n,) or (n, k) per point."""
        codes = np.asarray(codes)
        pt = self.point if codes.ndim == 1 else np.repeat(self.point, codes.shape[1])
        flat = pt * d + codes.ravel()
        return np.bincount(flat, minlength=self.n_points * d).reshape(self.n_points, d) \
            .astype(np.float64)

    def sum_table(self, vectors, d: int, chunk: int = 65_536) -> np.ndarray:
        """(points, d): the sum over each point's rows of ``vectors(rows)``,
        a function giving the (len(rows), d) vectors of the given rows."""
        if self._order is None:
            self._order = np.argsort(self.point, kind="stable")
        out = np.zeros((self.n_points, d))
        order, pt = self._order, self.point[self._order]
        for lo in range(0, order.size, chunk):
            rows = order[lo:lo + chunk]
            p = pt[lo:lo + chunk]
            starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
            out[p[starts]] += np.add.reduceat(vectors(rows), starts, axis=0)
        return out

    def mask(self, qu) -> np.ndarray:
        """Which points the query's cell holds (bool, one per point)."""
        hit = np.ones(self.n_points, dtype=bool)
        for a, m in zip(qu.attrs, qu.members):
            hit &= m[self.pcodes[a]]
        return hit

    def sums(self, queries, tables) -> list:
        """For each (points, k) table, the (len(queries), k) sums over each
        query's cell: a batch of queries' 0/1 point masks times the table."""
        out = [np.empty((len(queries), t.shape[1])) for t in tables]
        size = max(1, min(len(queries), MASK_ENTRIES // max(self.n_points, 1)))
        for lo in range(0, len(queries), size):
            batch = queries[lo:lo + size]
            masks = np.stack([self.mask(qu) for qu in batch]).astype(np.float64)
            for o, t in zip(out, tables):
                o[lo:lo + len(batch)] = product(masks, t)
        return out


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` by NumPy's own loops, not a BLAS: a threaded BLAS on a
    loaded machine ran these products 10-60x slower than one core (2 cores,
    load 4: a (108, 37013) x (37013, 50) product 0.77 s, this 0.066 s)."""
    return np.einsum("bp,pk->bk", a, b, optimize=False)


def dense_ok(n_points: int, n_rows: int, d: int, n_groups: int = 0) -> bool:
    """Whether the point tables pay and fit: points at most half the rows
    (on Adult, 14 QIDs, nearly every row is its own point and the per-query
    path is faster) and ``max(points, groups) x d`` within
    :data:`DENSE_LIMIT`."""
    return 2 * n_points <= n_rows and max(n_points, n_groups) * d <= DENSE_LIMIT


def true_sums(cells: PointCells, scodes: np.ndarray, d: int, queries) -> tuple:
    """(X, N) as :func:`.queries.answer_true`: per query the true count of
    each value of b_S in its cell, and the cell's size."""
    S = cells.sums(queries, [cells.count_table(scodes, d)])[0]
    return ([s[qu.s_members] for s, qu in zip(S, queries)], S.sum(axis=1))


def anatomy_table(rel, cells: PointCells) -> np.ndarray:
    """(points, d): per point, the sum over its QIT rows of their group's
    share of each sensitive value (ST counts / group size)."""
    gsize = rel.group_sizes.astype(np.float64)
    share = rel.ghist / np.where(gsize > 0, gsize, 1.0)[:, None]
    return cells.sum_table(lambda rows: share[rel.group[rows]], share.shape[1])


def partition_sums(rel, cells: PointCells, queries) -> list:
    """As :func:`.queries.answer_partition`, a batch of queries at a time:
    the estimated count of each value of b_S in each query's cell."""
    if rel.exact_qids:                                # Anatomy
        est = cells.sums(queries, [anatomy_table(rel, cells)])[0]
    else:                                             # Mondrian, TP
        ghist = rel.ghist.astype(np.float64)
        est = np.empty((len(queries), ghist.shape[1]))
        for i, qu in enumerate(queries):
            weight = box_weights(rel, qu)
            idx = np.flatnonzero(weight)              # the groups the query overlaps
            # NumPy's loops, not a BLAS: a threaded BLAS on a loaded 2-core
            # machine ran such products 10-60x slower than one core
            est[i] = np.einsum("g,gk->k", weight[idx], ghist[idx], optimize=False)
    return [e[qu.s_members] for e, qu in zip(est, queries)]


def set_w(members: np.ndarray, d: int, cells: PointCells, queries) -> np.ndarray:
    """(len(queries), d) int64: the counts ``w`` (eq. 17) of each query's
    cell, from every row's published set ``members`` (n, eta)."""
    W = cells.sums(queries, [cells.count_table(members, d)])[0]
    return np.rint(W).astype(np.int64)
