"""What the audit gathers from the rows, as statistics that add up over
chunks: a table in memory is one chunk, a file larger than memory is many
(the stats step of the engine, docs/architecture.md).

Per published attribute (paper 000 Sec. V-B): the smallest and largest set,
rows with a set of the wrong size or with values outside the domain, how many
sets hold each value (w of eq. 17 for one attribute), and, where the data
holder's original rows line up with the published ones, how many sets hold
their true value.  From the original: each attribute's distribution A_j.
For the risks: per pass-through column, how often each value occurs (a
column with a value per person is an identifier), and with the original,
which sensitive values each pass-through value occurs with (a recode of a
sensitive column).  Those last two are counts over distinct values, so they
are kept by distinct sampling (Gibbons, VLDB 2001): exact counts of the
values whose hash falls below a threshold that halves whenever more than
``budget`` values are held -- bounded memory, and every share estimated over
the sampled values is unbiased.  Finally the published sets of a few chosen
rows (the attack's victims and the keys of sampled classes).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .masks import row_sizes, stray_rows, value_counts

__all__ = ["ValueSample", "AuditStats", "hash_values", "DEFAULT_BUDGET"]

#: Distinct (value, sensitive value) pairs a ValueSample holds at most (~40 MB).
DEFAULT_BUDGET = 1 << 20
_H = 48                                 # bits of a value's hash kept in a key
_SUB = np.uint64(64 - _H)               # low bits: the sensitive code (< 65536)


def hash_values(col: pd.Series) -> np.ndarray:
    """A 64-bit hash of every cell (equal cells, equal hashes, in any chunk)."""
    return pd.util.hash_pandas_object(col.reset_index(drop=True), index=False) \
        .to_numpy(dtype=np.uint64)


def hash_cells(col: pd.Series) -> np.ndarray:
    """:func:`hash_values`, also for cells that hold arrays or lists (a set
    column stored as lists): equal cells, equal hashes, within one file."""
    try:
        return hash_values(col)
    except TypeError:
        return hash_values(col.map(lambda v: repr(v.tolist() if hasattr(v, "tolist") else v)))


def row_hash(parts: dict) -> np.ndarray:
    """One hash per row of several per-row 64-bit words: equal tuples, equal
    hashes."""
    return pd.util.hash_pandas_object(
        pd.DataFrame({k: np.asarray(v, dtype=np.uint64).view(np.int64)
                      for k, v in parts.items()}), index=False).to_numpy(dtype=np.uint64)


def mask_hashes(masks) -> np.ndarray:
    """A 64-bit hash of every row of a (rows, words) mask array."""
    m = np.asarray(masks)
    return row_hash({k: m[:, k] for k in range(m.shape[1])})


class ValueSample:
    """Counts of (value, sub-value) pairs over the values of a column whose
    48-bit hash lies below ``2**48 / 2**level``; ``level`` rises whenever
    more than ``budget`` pairs are held (``budget=None``: exact, never).

    Examples
    --------
    >>> s = ValueSample()
    >>> s.add(hash_values(pd.Series(["a", "b", "a", "c"])))
    >>> s.singleton_share()
    0.5
    """

    def __init__(self, budget: int | None = DEFAULT_BUDGET):
        self.budget = budget
        self.level = 0
        self.keys = np.empty(0, dtype=np.uint64)
        self.counts = np.empty(0, dtype=np.int64)
        self.rows = 0

    @property
    def fraction(self) -> float:
        """Share of the distinct values that are sampled."""
        return 2.0 ** -self.level

    def _limit(self) -> np.uint64:
        return np.uint64((1 << _H) >> self.level)

    def add(self, hashes: np.ndarray, sub: np.ndarray | None = None) -> None:
        h = np.asarray(hashes, dtype=np.uint64) >> _SUB
        self.rows += h.size
        keep = h < self._limit()
        key = h[keep] << _SUB
        if sub is not None:
            key |= np.asarray(sub, dtype=np.uint64)[keep]
        u, c = np.unique(key, return_counts=True)
        self._absorb(u, c.astype(np.int64))

    def merge(self, other: "ValueSample") -> None:
        self.rows += other.rows
        self.level = max(self.level, other.level)
        self._absorb(other.keys, other.counts)

    def _absorb(self, u, c) -> None:
        keys = np.concatenate([self.keys, u])
        counts = np.concatenate([self.counts, c])
        keys, inv = np.unique(keys, return_inverse=True)
        counts = np.bincount(inv.ravel(), weights=counts, minlength=keys.size).astype(np.int64)
        while True:
            keep = (keys >> _SUB) < self._limit()
            keys, counts = keys[keep], counts[keep]
            if self.budget is None or keys.size <= self.budget:
                break
            self.level += 1
        self.keys, self.counts = keys, counts

    def value_totals(self) -> np.ndarray:
        """Rows of each sampled value (sub-values added up)."""
        _, inv = np.unique(self.keys >> _SUB, return_inverse=True)
        return np.bincount(inv.ravel(), weights=self.counts).astype(np.int64) \
            if self.keys.size else np.empty(0, dtype=np.int64)

    def singleton_share(self) -> float:
        """Share of the rows whose value no other row has (NaN with no row)."""
        tot = self.value_totals()
        return float((tot == 1).sum() / tot.sum()) if tot.sum() else float("nan")

    def determination(self) -> tuple:
        """(lambda, accuracy, prior accuracy) of predicting the sub-value
        (a sensitive code) from the value, leave one out.

        A row is predicted by the most common sensitive value among the OTHER
        rows with its pass-through value (ties count half; a value seen once
        falls back to the most common sensitive value overall), so a column
        with a new value per row predicts nothing.  lambda = (accuracy -
        prior) / (1 - prior) (Goodman and Kruskal's lambda) is the share of
        the prior's errors the column removes: 1 for a one-to-one recode,
        about 0 for an unrelated column.
        """
        if not self.keys.size:
            return float("nan"), float("nan"), float("nan")
        val = self.keys >> _SUB
        sub = (self.keys & np.uint64((1 << (64 - _H)) - 1)).astype(np.int64)
        c = self.counts
        n = c.sum()
        marg = np.bincount(sub, weights=c)
        mode = int(np.argmax(marg))
        prior = float(marg[mode] / n)
        _, g = np.unique(val, return_inverse=True)       # keys are sorted: groups contiguous
        g = g.ravel()
        ng = int(g.max()) + 1
        size = np.bincount(g, weights=c, minlength=ng)
        # per group: the count of its leading entry (the first at the top count)
        # and the largest count among its other entries
        top = np.zeros(ng, dtype=np.int64)
        np.maximum.at(top, g, c)
        at_top = np.flatnonzero(c == top[g])
        first = np.full(ng, c.size, dtype=np.int64)
        np.minimum.at(first, g[at_top], at_top)
        lead = np.arange(c.size) == first[g]
        second = np.zeros(ng, dtype=np.int64)
        np.maximum.at(second, g[~lead], c[~lead])
        lone = size[g] == 1
        loo = c - 1                                        # the leader's count without the row
        credit = np.where(lead & (loo > second[g]), 1.0,
                          np.where(lead & (loo == second[g]) & (loo > 0), 0.5, 0.0))
        credit = np.where(lone, (sub == mode).astype(float), credit)
        acc = float((credit * c).sum() / n)
        lam = 0.0 if prior >= 1.0 else (acc - prior) / (1.0 - prior)
        return lam, acc, prior


class AuditStats:
    """Per-chunk statistics of a publication (and of its original), merged.

    Parameters
    ----------
    header : SetTable or file header (``names``, ``schema``, ``params``)
    picks : sorted global row indices whose sets are kept (victims, class keys)
    passthrough : pass-through column names to sample
    pairs : [(pass-through column, sensitive attribute)] to sample from the original
    budget : per ValueSample (None: exact)
    """

    def __init__(self, header, *, picks=(), passthrough=(), pairs=(),
                 budget: int | None = DEFAULT_BUDGET):
        self.names = list(header.names)
        self.dims = {n: header.schema[n].d for n in self.names}
        self.eta = {n: header.params[n].eta for n in self.names}
        self.n = 0
        self.smallest = {n: None for n in self.names}
        self.largest = {n: 0 for n in self.names}
        self.stray = {n: 0 for n in self.names}
        self.wrong_size = {n: 0 for n in self.names}
        self.first_wrong = {n: None for n in self.names}       # (row, size)
        self.w = {n: np.zeros(self.dims[n], dtype=np.int64) for n in self.names}
        self.hits = {n: 0 for n in self.names}
        self.aligned_rows = 0
        self.A = {n: np.zeros(self.dims[n], dtype=np.int64) for n in self.names}
        self.original_rows = 0
        self.picks = np.asarray(picks, dtype=np.int64)
        self.picked = {n: [] for n in self.names}
        self.picked_truth = {n: [] for n in self.names}
        self.ids = {c: ValueSample(budget) for c in passthrough}
        self.pairs = {pair: ValueSample(budget) for pair in pairs}
        self.semantic_bad = 0
        #: the columns published as they are (exact QIDs, then pass-through
        #: columns) and their combinations, which link a row across releases
        self.exact = [n for n in self.names if header.params[n].exact]
        self.passthrough = list(passthrough)
        self.linking = self.exact + self.passthrough
        self.qid_tuples = ValueSample(budget) if self.linking else None

    # ------------------------------------------------------------- adding
    def add_sets(self, row0: int, masks: dict, truth: dict | None = None, semantic=None) -> None:
        """One chunk of published sets (``masks`` per attribute, rows
        ``row0 ..``); ``truth``: the original codes of the same rows."""
        n = next(iter(masks.values())).shape[0] if masks else 0
        lo, hi = np.searchsorted(self.picks, [row0, row0 + n])
        local = self.picks[lo:hi] - row0
        for name in self.names:
            m, d = masks[name], self.dims[name]
            sz = row_sizes(m)
            if sz.size:
                self.smallest[name] = int(sz.min()) if self.smallest[name] is None \
                    else min(self.smallest[name], int(sz.min()))
                self.largest[name] = max(self.largest[name], int(sz.max()))
            bad = np.flatnonzero(sz != self.eta[name])
            if bad.size and self.first_wrong[name] is None:
                self.first_wrong[name] = (row0 + int(bad[0]), int(sz[bad[0]]))
            self.wrong_size[name] += int(bad.size)
            self.stray[name] += stray_rows(m, d)
            self.w[name] += value_counts(m, d)
            self.picked[name].append(np.asarray(m[local]))
            if truth is not None:
                c = np.asarray(truth[name], dtype=np.int64)
                word = np.asarray(m)[np.arange(n), c >> 6]
                self.hits[name] += int(((word >> (c & 63).astype(np.uint64)) & np.uint64(1)).sum())
                self.picked_truth[name].append(c[local])
        if truth is not None:
            self.aligned_rows += n
        if self.qid_tuples is not None and n and not self.passthrough:
            # (with pass-through columns the tuples are counted in
            # add_passthrough, which sees both)
            self.qid_tuples.add(row_hash({n: mask_hashes(masks[n]) for n in self.exact}))
        if semantic is not None:
            from ..randomized.semantic import is_diverse
            name, dist, l, dd = semantic
            self.semantic_bad += int((~is_diverse(masks[name], dist, l, dd)).sum())
        self.n += n

    def add_passthrough(self, frame: pd.DataFrame, exact: dict | None = None) -> None:
        """One chunk of the published pass-through columns, with ``exact``:
        a hash per row of each exact QID (:func:`mask_hashes`, or
        :func:`hash_cells` of its stored column) for the same rows."""
        if not self.passthrough or frame is None:
            return
        cells = {c: hash_cells(frame[c]) for c in self.passthrough}
        for c, s in self.ids.items():
            s.add(cells[c])
        if self.qid_tuples is not None and len(frame):
            self.qid_tuples.add(row_hash({**(exact or {}), **cells}))

    def add_original(self, codes: dict, other: pd.DataFrame | None = None) -> None:
        """One chunk of the original (codes of the published attributes and
        its pass-through columns); row order does not matter."""
        for name in self.names:
            self.A[name] += np.bincount(codes[name], minlength=self.dims[name])
        for (col, sens), s in self.pairs.items():
            s.add(hash_values(other[col]), codes[sens])
        self.original_rows += len(next(iter(codes.values()))) if codes else 0

    def merge(self, other: "AuditStats") -> None:
        """Add the statistics of the rows that follow (another chunk or partition)."""
        for name in self.names:
            if other.smallest[name] is not None:
                self.smallest[name] = other.smallest[name] if self.smallest[name] is None \
                    else min(self.smallest[name], other.smallest[name])
            self.largest[name] = max(self.largest[name], other.largest[name])
            if self.first_wrong[name] is None and other.first_wrong[name] is not None:
                self.first_wrong[name] = other.first_wrong[name]
            for field in ("wrong_size", "stray", "hits"):
                getattr(self, field)[name] += getattr(other, field)[name]
            self.w[name] += other.w[name]
            self.A[name] += other.A[name]
            self.picked[name] += other.picked[name]
            self.picked_truth[name] += other.picked_truth[name]
        for mine, theirs in ((self.ids, other.ids), (self.pairs, other.pairs)):
            for k, s in theirs.items():
                mine[k].merge(s)
        if self.qid_tuples is not None and other.qid_tuples is not None:
            self.qid_tuples.merge(other.qid_tuples)
        self.n += other.n
        self.aligned_rows += other.aligned_rows
        self.original_rows += other.original_rows
        self.semantic_bad += other.semantic_bad

    # ------------------------------------------------------------ results
    def size_range(self) -> dict:
        """{attribute: (smallest, largest) set size}."""
        return {n: (self.smallest[n] or 0, self.largest[n]) for n in self.names}

    def picked_masks(self, name: str) -> np.ndarray:
        parts = self.picked[name]
        return np.concatenate(parts) if parts else np.empty((0, 1), dtype=np.uint64)

    def picked_codes(self, name: str):
        parts = self.picked_truth[name]
        return np.concatenate(parts) if parts else None
