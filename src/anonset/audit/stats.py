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

Under a persistent key with a record id, a record's rows holding the same
value share one set, so the sets are clustered: with the original's record
ids, the rows of each (record, value) cluster are counted (by the same
distinct sampling), which sizes the variance of the inclusion test.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..passthrough import (DEFAULT_BUDGET, JOINT_CELLS, JOINT_ROWS,  # noqa: F401
                           SAMPLE_ROWS, OrderSample, RowSample, ValueSample, _mix64, _pair_hash,
                           _SUB, hash_cells, hash_values)
from .masks import row_sizes, stray_rows, value_counts

__all__ = ["ValueSample", "AuditStats", "hash_values", "DEFAULT_BUDGET"]


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
        self.params = {n: header.params[n] for n in self.names}
        self.n = 0
        self.smallest = {n: None for n in self.names}
        self.largest = {n: 0 for n in self.names}
        self.stray = {n: 0 for n in self.names}
        self.wrong_size = {n: 0 for n in self.names}
        self.first_wrong = {n: None for n in self.names}       # (row, size)
        self.w = {n: np.zeros(self.dims[n], dtype=np.int64) for n in self.names}
        self.hits = {n: 0 for n in self.names}
        self.aligned_rows = 0
        #: rows whose every set holds the value of the original row at the
        #: same position and whose every pass-through cell equals its cell,
        #: against random pairings (where the rows are said to be shuffled:
        #: a release in input order shows through, H104, H110)
        from .order import PositionMatch
        self.position = PositionMatch(int(getattr(header, "n_rows", 0) or 0))
        self.A = {n: np.zeros(self.dims[n], dtype=np.int64) for n in self.names}
        self.original_rows = 0
        self.picks = np.asarray(picks, dtype=np.int64)
        self.picked = {n: [] for n in self.names}
        self.picked_truth = {n: [] for n in self.names}
        self.ids = {c: ValueSample(budget) for c in passthrough}
        #: per pass-through column, its cells as published and the original
        #: column's, keyed alike whatever the file's type (a CSV's text, a
        #: Parquet number: :func:`~anonset.io.keys.cell_text_hashes`): a
        #: column published as it is holds the original's cells (H121)
        #: (the sums of their hashes tell any difference: the sample only
        #: counts it, on fewer values than the other statistics keep)
        few = None if budget is None else min(budget, CELL_BUDGET)
        self.cells = {c: (CellSample(few), CellSample(few)) for c in passthrough}
        self.pairs = {pair: ValueSample(budget) for pair in pairs}
        # as publishing measures them, over rows of the original drawn at
        # random (the same way): each column's order, every two together
        self.sample_columns = list(dict.fromkeys(c for c, _ in self.pairs))
        self.sample_targets = list(dict.fromkeys(t for _, t in self.pairs))
        #: targets whose codes are in the order of numbers (bins, or a
        #: domain of numbers): their rank is measured against each column's
        self.ordered_targets = {t for t in self.sample_targets if t in header.schema.names and
                                _numbers_in_order(header.schema[t])}
        #: targets whose domain is numbers (no bins): their values, per code,
        #: for a linear rule of two columns (:meth:`rule_inputs`); columns
        #: published as their bins, whose numbers are not published
        self.number_domains = {}
        for t in self.sample_targets:
            a = header.schema[t] if t in header.schema.names else None
            if a is not None and getattr(a, "bins", None) is None and _numbers_in_order(a):
                self.number_domains[t] = np.array([float(v) if v != a.missing else np.nan
                                                   for v in a.domain])
        self.binned_columns = {c for c in self.sample_columns if c in header.schema.names
                               and getattr(header.schema[c], "bins", None) is not None}
        self.sampled = RowSample(SAMPLE_ROWS)
        #: the sensitive columns' codes over rows of the original drawn as
        #: publishing draws them: two sets read together (check_set_pairs)
        from ..randomized.pair_adversary import SAMPLE_ROWS as PAIR_ROWS
        self.set_names = list(self.names)          # the exact QIDs too (threes)
        sets = sum(not header.params[n].exact for n in self.names)
        as_is = len(self.names) > sets or bool(list(passthrough))
        self.set_rows = RowSample(PAIR_ROWS) if sets >= 2 or (sets and as_is) else None
        self.budget = budget
        self.semantic_bad = 0
        #: the columns published as they are (exact QIDs, then pass-through
        #: columns) and their combinations, which link a row across releases
        self.exact = [n for n in self.names if header.params[n].exact]
        self.passthrough = list(passthrough)
        self.linking = self.exact + self.passthrough
        self.qid_tuples = ValueSample(budget) if self.linking else None
        #: the record id of a persistent-key release (None: rows drew their
        #: sets independently), and per randomized attribute the rows of
        #: each (record, value) cluster, counted where the original holds
        #: the record id column
        self.record_id = (getattr(header, "info", None) or {}).get("record_id")
        self.clusters = {n: ValueSample(budget) for n in self.names
                         if not header.params[n].exact} if self.record_id else {}
        #: ... and per randomized attribute the (record, value) pairs of the
        #: records sampled by their id's hash (all of a sampled record's rows):
        #: a record with two values drew the second's sets apart (H65)
        self.moves = {n: ValueSample(budget) for n in self.clusters}

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

    def add_positions(self, row0: int, masks: dict, codes: dict, published=None,
                      original=None) -> None:
        """One chunk of published sets (rows ``row0``..) beside the
        original's codes of the rows at the same positions, where the rows
        are said to be shuffled, with the chunk's pass-through columns as
        published and as in the original (DataFrames; H110: a release in
        input order with weak sets PASSED although its pass-through cells
        were the original's row for row)
        (:class:`anonset.audit.order.PositionMatch`)."""
        from .order import cell_column, set_column
        k = next(iter(masks.values())).shape[0] if masks else 0
        if not k or any(len(codes[n]) != k for n in masks if n in codes):
            return
        cols = [set_column(masks[n], codes[n]) for n in masks if n in codes]
        for c in self.passthrough:
            if published is not None and original is not None and c in published \
                    and c in original and len(published) == len(original) == k:
                cols.append(cell_column(published[c].to_numpy(), original[c].to_numpy()))
        self.position.add(row0, cols)

    def add_passthrough(self, frame: pd.DataFrame, exact: dict | None = None) -> None:
        """One chunk of the published pass-through columns, with ``exact``:
        a hash per row of each exact QID (:func:`mask_hashes`, or
        :func:`hash_cells` of its stored column) for the same rows."""
        if not self.passthrough or frame is None:
            return
        cells = {c: hash_cells(frame[c]) for c in self.passthrough}
        for c, s in self.ids.items():
            s.add(cells[c])
        from ..io.keys import cell_text_hashes
        for c, (s, _) in self.cells.items():
            s.add(cell_text_hashes(frame[c]))
        if self.qid_tuples is not None and len(frame):
            self.qid_tuples.add(row_hash({**(exact or {}), **cells}))

    def add_original(self, codes: dict, other: pd.DataFrame | None = None) -> None:
        """One chunk of the original (codes of the published attributes and
        its pass-through columns); row order does not matter."""
        for name in self.names:
            self.A[name] += np.bincount(codes[name], minlength=self.dims[name])
        if other is not None:
            from ..io.keys import cell_text_hashes
            for c, (_, s) in self.cells.items():
                if c in other.columns:
                    s.add(cell_text_hashes(other[c]))
        for (col, sens), s in self.pairs.items():
            # an exact QID by its published code (its bin, where it has bins),
            # as publishing measures it; a pass-through column by its cells
            s.add(_mix64(np.asarray(codes[col], dtype=np.int64).astype(np.uint64)) if col in codes
                  else hash_cells(other[col]), codes[sens])
        if self.pairs and other is not None and len(other):
            part = other[self.sample_columns].reset_index(drop=True)
            for t in self.sample_targets:     # the codes beside, under names no column has
                part["\x00code:" + t] = np.asarray(codes[t], dtype=np.int64)
            self.sampled.add(part, self.original_rows)
        if self.set_rows is not None and codes:
            part = pd.DataFrame({n: np.asarray(codes[n], dtype=np.int64) for n in self.set_names})
            if other is not None and len(other):
                # the pass-through columns' cells beside (all of a row read together)
                for c in self.passthrough:
                    if c in other.columns:
                        part[c] = other[c].reset_index(drop=True)
            self.set_rows.add(part, self.original_rows)
        if self.clusters and other is not None and self.record_id in other.columns:
            from ..io.keys import record_counters, record_hashes
            ids = record_hashes(other[self.record_id].to_numpy(dtype=object))
            for name, s in self.clusters.items():
                c = np.asarray(codes[name], dtype=np.int64)
                # one key per (record, value): the unit that shares a set
                s.add(record_counters(ids, c), c)
                self.moves[name].add(ids, c & 0xFFFF)
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
        self.position.merge(other.position)
        for mine, theirs in ((self.ids, other.ids), (self.pairs, other.pairs)):
            for k, s in theirs.items():
                mine[k].merge(s)
        for k, pair in other.cells.items():
            for mine, theirs in zip(self.cells[k], pair):
                mine.merge(theirs)
        self.sampled.merge(other.sampled)
        if self.set_rows is not None and other.set_rows is not None:
            self.set_rows.merge(other.set_rows)
        if self.qid_tuples is not None and other.qid_tuples is not None:
            self.qid_tuples.merge(other.qid_tuples)
        for k, s in other.clusters.items():
            self.clusters[k].merge(s)
        for k, s in other.moves.items():
            self.moves[k].merge(s)
        self.n += other.n
        self.aligned_rows += other.aligned_rows
        self.original_rows += other.original_rows
        self.semantic_bad += other.semantic_bad

    # ------------------------------------------------------------ results
    def sample_measures(self) -> tuple:
        """(order, joint, rows): the order of each column published as it is
        and every two such columns together, measured against each
        attribute on the original's rows drawn at random, as publishing
        measures them (:class:`~anonset.passthrough.PassThroughCheck`)."""
        cols, targets = self.sample_columns, self.sample_targets
        part = self.sampled.frame()
        order = OrderSample(cols, targets)
        joint = {((a, b), t): ValueSample(self.budget) for i, a in enumerate(cols)
                 for b in cols[i + 1:] for t in targets}
        if len(part):
            codes = {t: part["\x00code:" + t].to_numpy(dtype=np.int64) for t in targets}
            subs = {t: c & 0xFFFF for t, c in codes.items()}
            order.add(part[cols], subs, {t: np.where(c < 0, np.nan, c.astype(np.float64))
                                         for t, c in codes.items()
                                         if t in self.ordered_targets})
            k = min(len(part), max(4096, min(JOINT_ROWS, JOINT_CELLS // max(1, len(joint)))))
            h = {c: hash_cells(part[c].iloc[:k]) for c in cols}
            for ((a, b), t), s in joint.items():
                s.add(_pair_hash(h[a], h[b]), subs[t][:k])
        return order, joint, len(part)


    def rule_inputs(self) -> tuple:
        """(helpers, targets, rows) for
        :func:`~anonset.passthrough.rule_recodes`, as publishing measures a
        linear rule: the numbers of each column published as it is and of
        each target with a domain of numbers, over the joint measure's rows
        of the original drawn at random."""
        from ..passthrough import PassThroughCheck
        cols, targets = self.sample_columns, self.sample_targets
        part = self.sampled.frame()
        pairs = len(cols) * (len(cols) - 1) // 2 * max(1, len(targets))
        k = min(len(part), max(4096, min(JOINT_ROWS, JOINT_CELLS // max(1, pairs))))
        part = part.iloc[:k]
        helpers = {c: PassThroughCheck._numbers(part[c], None) for c in cols
                   if c not in self.binned_columns}
        nums = {}
        for t, values in self.number_domains.items():
            codes = part["\x00code:" + t].to_numpy(dtype=np.int64)
            nums[t] = (np.where(codes < 0, np.nan, values[np.clip(codes, 0, None)]), None)
        return helpers, nums, k

    def size_range(self) -> dict:
        """{attribute: (smallest, largest) set size}."""
        return {n: (self.smallest[n] or 0, self.largest[n]) for n in self.names}

    def changed_records(self, name: str) -> tuple | None:
        """(records that hold more than one value of ``name``, records) among
        the records sampled by their id (all of them below the budget), and
        the share sampled; None where the original gave no record ids."""
        s = self.moves.get(name)
        if s is None or not s.rows:
            return None
        rec = s.keys >> _SUB
        _, per = np.unique(rec, return_counts=True)
        return int((per > 1).sum()), int(per.size), s.fraction

    def cluster_squares(self, name: str) -> np.ndarray | None:
        """Per value v of a randomized attribute, the sum over the
        (record, value v) clusters of their rows squared, estimated from the
        sampled clusters (exact below the budget); the variance of the
        number of sets holding v is a sum over clusters of size^2 times a
        Bernoulli variance.  None where the rows drew independently (no
        record id) or the original did not give the record ids."""
        s = self.clusters.get(name)
        if s is None or not s.rows:
            return None
        d = self.dims[name]
        code = (s.keys & np.uint64(0xFFFF)).astype(np.int64)
        m = s.counts.astype(float)
        rows = np.bincount(code, weights=m, minlength=d)
        sq = np.bincount(code, weights=m * m, minlength=d)
        pooled = sq.sum() / rows.sum() if rows.sum() else 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            per_row = np.where(rows > 0, sq / rows, pooled)
        return self.A[name] * per_row

    def picked_masks(self, name: str) -> np.ndarray:
        parts = self.picked[name]
        return np.concatenate(parts) if parts else np.empty((0, 1), dtype=np.uint64)

    def picked_codes(self, name: str):
        parts = self.picked_truth[name]
        return np.concatenate(parts) if parts else None


#: Distinct values a :class:`CellSample` of a file's audit keeps at most.
CELL_BUDGET = 1 << 16


class CellSample(ValueSample):
    """A :class:`ValueSample` of a column's cells that also adds up their
    64-bit hashes (modulo 2^64): two columns of as many cells whose sums
    differ hold different cells, however few of their values are sampled."""

    def __init__(self, budget: int | None = DEFAULT_BUDGET):
        super().__init__(budget)
        self.total = 0

    def add(self, hashes: np.ndarray, sub: np.ndarray | None = None) -> None:
        super().add(hashes, sub)
        self.total = (self.total + int(np.asarray(hashes, dtype=np.uint64).sum(
            dtype=np.uint64))) & 0xFFFFFFFFFFFFFFFF

    def merge(self, other: "CellSample") -> None:
        super().merge(other)
        self.total = (self.total + other.total) & 0xFFFFFFFFFFFFFFFF


def _held(mine: ValueSample, other: ValueSample, limit) -> np.ndarray:
    """Per value ``mine`` samples below ``limit``: its count there less
    ``other``'s, where positive."""
    keep = (mine.keys >> _SUB) < limit
    k, c = mine.keys[keep], mine.counts[keep]
    at = np.searchsorted(other.keys, k)
    ok = at < other.keys.size
    ok[ok] = other.keys[at[ok]] == k[ok]
    held = np.zeros(k.size, dtype=np.int64)
    held[ok] = other.counts[at[ok]]
    return np.maximum(c - held, 0)


def foreign_cells(pub: CellSample, org: CellSample) -> tuple | None:
    """(cells counted in ``pub`` that ``org`` does not hold, or holds fewer
    times, estimated over the values both sample; the share of the
    distinct values sampled; whether the cells differ where the sampled
    values show none, told by the sums of their hashes).  Where both count
    as many cells, as many of the original's are missing from ``pub`` as it
    holds foreign ones, and the larger count is taken (one foreign value
    may be left out of the sample, the values it replaced seldom are).
    None where the original gave no cell."""
    if not org.rows:
        return None
    level = max(pub.level, org.level)
    limit = np.uint64((1 << 48) >> level)
    extra = int(_held(pub, org, limit).sum())
    same = pub.rows == org.rows
    if same:
        extra = max(extra, int(_held(org, pub, limit).sum()))
    frac = 2.0 ** -level
    return round(extra / frac), frac, bool(same and not extra and pub.total != org.total)


def _numbers_in_order(attr) -> bool:
    """Whether an attribute's codes follow the order of numbers: bins, or a
    domain of numbers in increasing order."""
    if getattr(attr, "bins", None) is not None:
        return True
    dom = [v for v in (attr.domain or ()) if v != getattr(attr, "missing", None)]
    return bool(dom) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                             for v in dom) and all(a < b for a, b in zip(dom, dom[1:]))
