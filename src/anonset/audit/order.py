"""Whether a release's rows line up with the original's rows (H104, H110).

A release's metadata says how its rows were ordered (``row_order``) and what
its record IDs are (``ids``); both are written by the publisher and can be
edited.  With the original at hand the audit reads the data instead: it
counts the published rows that *agree* with the original row they are paired
with, paired by position (row i with row i) or by a column the IDs equal,
and compares the count with what the same release gives in the orders its
publisher draws.  A row agrees where every one of its cells that tells
something holds the original row's value: a set holds it, a cell published
as it is (an exact QID, a pass-through column, an SA of msa) equals it, a
range contains it; '*', a hierarchy node and an lgb cell left to a bucket
agree with anything (H110: a set table's pass-through columns, an lgb
release's ranges, were read as agreeing with anything).

Under a release shuffled uniformly (set tables, lgb) the published row at
position i is a uniformly drawn row of the original, so the count paired by
position has the distribution of the count under a uniform pairing: its
mean share q is estimated on m pairs (i, j), i != j, drawn over the whole
table (m = :data:`SAMPLE`, fewer where a row's published cells exceed
:data:`MEMORY` / SAMPLE bytes; the same pairs whatever the chunks, so a
chunked audit and one in memory give the same verdict), and its variance is
taken as that of the permutation, n q (1 - q) n / (n - 1), plus that of
the estimate, n^2 q (1 - q) / m (q at the edge of its 4-sigma Wilson
interval nearest 1/2).  An msa release publishes its rows
grouped by class, the classes and the rows of each in orders drawn from the
key: agreements are correlated within a class (H110: the uniform bound gave
3 false risks in 40), so where every class is one run of rows the count is
compared with the rows of each class in a uniform order over its positions
(the classes' order as published; exact: every pair of a class's rows is
read, and the variance is Hoeffding's, up to :data:`EXACT_PAIRS` pairs); a
release whose classes are split was not ordered so and is read as a
uniform shuffle.  A RISK needs the count to exceed that mean by
:data:`Z_RISK` standard deviations and by :data:`MIN_EXCESS` rows, while a
release in input order agrees on nearly every row.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SAMPLE", "EXACT_PAIRS", "Z_RISK", "MIN_EXCESS", "PositionMatch", "set_column",
           "cell_column", "cell_codes", "generalized_columns"]

#: random pairs that estimate the agreement of a uniformly shuffled release
SAMPLE = 1 << 16
#: bytes the sampled published rows may hold (a set of a large domain is
#: many words: fewer pairs then)
MEMORY = 64 << 20
#: pairs within classes measured one by one (more: sampled)
EXACT_PAIRS = 1 << 22
#: standard deviations beyond that a RISK needs
Z_RISK = 8.0
#: rows beyond that a RISK needs (a tiny table cannot show an order)
MIN_EXCESS = 10


# ----------------------------------------------------------- column readers
# Each column is (agree, published arrays, original arrays): ``agree(p, o)``
# tells, element by element, whether published cells ``p`` agree with
# original cells ``o`` (tuples of arrays indexed alike on their first axis).

def _held(p, o):
    masks, codes = p[0], o[0]
    if not codes.size:
        return np.zeros(0, dtype=bool)
    lo, hi = int(codes.min()), int(codes.max())
    valid = None if lo >= 0 and hi < 64 * masks.shape[1] else \
        (codes >= 0) & (codes < 64 * masks.shape[1])
    if valid is not None:
        codes = np.where(valid, codes, 0)
    if masks.shape[1] == 1:                 # a domain of up to 64 values
        word = masks[:, 0]
    else:
        word = masks[np.arange(codes.size), codes >> 6]
    held = (word & (np.uint64(1) << (codes & 63).astype(np.uint64))) != 0
    return held if valid is None else held & valid


def _equal(p, o):
    return p[0] == o[0]


def _inside(p, o):
    code, lo, hi, free = p
    ocode, num = o
    with np.errstate(invalid="ignore"):
        return free | (code == ocode) | ((lo <= num) & (num <= hi))


def set_column(masks, codes) -> tuple:
    """A set column: a row agrees where its set holds the original's code."""
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        codes = codes.astype(np.int64)
    return (_held, (np.asarray(masks),), (codes,))


def cell_codes(values) -> np.ndarray:
    """A code per cell that equal cells share, whichever chunk they are read
    in: a hash of the cell as text, numbers in one spelling."""
    import pandas as pd
    from .partition import _as_text
    txt = _as_text(pd.Series(values, dtype=object)).to_numpy(dtype=object)
    return pd.util.hash_array(txt, categorize=True).view(np.int64)


def cell_column(published, original) -> tuple:
    """A column published as it is: a row agrees where its cell equals the
    original's (:func:`cell_codes`)."""
    return (_equal, (cell_codes(published),), (cell_codes(original),))


def _range_of(label: str):
    """(lo, hi) of a published range: lgb's ``[lo-hi]``, msa's ``[lo, hi]``,
    the baselines' ``[lo~hi]``; None for any other label."""
    if len(label) < 5 or label[0] != "[" or label[-1] != "]":
        return None
    body = label[1:-1]
    for sep in (", ", "~"):
        if sep in body:
            parts = body.split(sep)
            return _numbers(parts) if len(parts) == 2 else None
    for at in range(1, len(body) - 1):          # '-' also signs a number
        if body[at] == "-":
            got = _numbers([body[:at], body[at + 1:]])
            if got is not None:
                return got
    return None


def _numbers(parts):
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        return None
    return (lo, hi) if lo <= hi else None


def generalized_columns(published, original, columns) -> list:
    """Columns of a partition release (``published`` and ``original``
    DataFrames; ``columns``: each ``(column, cells to read: bool array or
    None)``): a cell agrees with an original value it equals as text, a
    range with a number it contains; '*', a hierarchy node (the metadata
    does not record a QI's hierarchy) and a cell left unread (an lgb cell
    left to a bucket) agree with anything.  Columns whose every cell agrees
    with anything are left out."""
    import pandas as pd
    from .partition import _as_text
    out = []
    for col, read in columns:
        pub = _as_text(published[col]).to_numpy(dtype=object)
        org = _as_text(original[col]).to_numpy(dtype=object)
        codes, uniq = pd.factorize(pd.Series(np.concatenate([pub, org]), dtype=object))
        p, o = codes[:len(pub)].astype(np.int64), codes[len(pub):].astype(np.int64)
        known = np.zeros(len(uniq), dtype=bool)
        known[o[o >= 0]] = True
        lo = np.full(len(uniq), np.nan)
        hi = np.full(len(uniq), np.nan)
        for u in np.flatnonzero(~known):
            got = _range_of(str(uniq[u]))
            if got is not None:
                lo[u], hi[u] = got
        free = ~(known[p] | ~np.isnan(lo[p]))
        if read is not None:
            free |= ~np.asarray(read, dtype=bool)
        if free.all():
            continue
        num = pd.to_numeric(pd.Series(org, dtype=object), errors="coerce").to_numpy(
            dtype="float64", na_value=np.nan)
        out.append((_inside, (p, lo[p], hi[p], free), (o, num)))
    return out


# ------------------------------------------------------------------- match
class PositionMatch:
    """Rows of an ``n``-row release that agree with the original row they
    are paired with, against the orders its publisher draws; fed chunk by
    chunk with :meth:`add` (``blocks``: the class of each published row of a
    release grouped by class, fed in one chunk)."""

    def __init__(self, n: int, seed: int = 0, blocks=None):
        self.n = int(n)
        self.rows = 0
        self.hits = 0
        self.seed = seed
        self._runs = _class_runs(blocks) if blocks is not None and self.n else None
        self._within = None                 # (mean, variance) within classes
        self._pairs = None                  # (published rows, original rows)
        self._pub = self._org = None        # their cells, gathered chunk by chunk
        self._agrees = None
        self._factor = 1.0                  # of the permutation variance

    def _draw(self, cols) -> None:
        width = sum(int(np.prod(a.shape[1:], dtype=np.int64)) * a.dtype.itemsize
                    for _, p, _ in cols for a in p) or 1
        m = int(min(SAMPLE, max(1024, MEMORY // width)))
        rng = np.random.default_rng(self.seed)
        i = rng.integers(0, self.n, size=m)
        if self._runs is None:
            j = (i + 1 + rng.integers(0, self.n - 1, size=m)) % self.n
        else:                               # within the class of row i
            starts, sizes = self._runs
            b = np.searchsorted(starts, i, side="right") - 1
            j = starts[b] + (rng.random(m) * sizes[b]).astype(np.int64)
            big = sizes[sizes >= 2]
            self._factor = float((big / (big - 1)).max()) if big.size else 1.0
        self._pairs = (i, j)
        self._sorted = [(np.sort(r), np.argsort(r, kind="stable")) for r in (i, j)]
        self._agrees = [agree for agree, _, _ in cols]
        self._pub = [tuple(np.zeros((m, *a.shape[1:]), dtype=a.dtype) for a in p)
                     for _, p, _ in cols]
        self._org = [tuple(np.zeros(m, dtype=a.dtype) for a in o) for _, _, o in cols]

    def add(self, row0: int, cols: list) -> None:
        """Rows ``row0``.. of the release beside the original's rows at the
        same positions: ``cols``, each ``(agree, published, original)``
        (:func:`set_column`, :func:`cell_column`, :func:`generalized_columns`),
        the same columns in every chunk."""
        if not cols or self.n < 2:
            return
        k = len(cols[0][1][0])
        if k <= 0:
            return
        self.rows += k
        self.hits += _agreeing(cols, k)
        if self._runs is not None and int((self._runs[1].astype(np.int64) ** 2).sum()) \
                <= EXACT_PAIRS:
            self._within = _within_classes(self._runs, cols)
            return
        if self._pairs is None:
            self._draw(cols)
        i, j = self._pairs
        for side, rows, (srt, order) in zip((self._pub, self._org), (i, j), self._sorted):
            at = order[np.searchsorted(srt, row0):np.searchsorted(srt, row0 + k)]
            if not at.size:
                continue
            for c, (_, p, o) in enumerate(cols):
                for buf, a in zip(side[c], p if side is self._pub else o):
                    buf[at] = a[rows[at] - row0]

    def merge(self, other: "PositionMatch") -> None:
        """Another part's rows (the same release and seed, other chunks)."""
        self.rows += other.rows
        self.hits += other.hits
        if other._pairs is None:
            return
        if self._pairs is None:
            self._pairs, self._pub, self._org = other._pairs, other._pub, other._org
            self._agrees, self._sorted = other._agrees, other._sorted
            return
        # each pair's cells were gathered by the part that read their row
        for mine, theirs in ((self._pub, other._pub), (self._org, other._org)):
            for a, b in zip(mine, theirs):
                for x, y in zip(a, b):
                    x += y

    def _chance(self) -> tuple:
        """(mean count, standard deviation) where the rows are in an order
        the publisher draws."""
        n = self.rows
        if self._within is not None:
            mean, var = self._within
            return mean, max(math.sqrt(var), 1.0)
        if self._pairs is None:
            return math.nan, math.nan
        ok = np.ones(len(self._pairs[0]), dtype=bool)
        for agree, p, o in zip(self._agrees, self._pub, self._org):
            ok &= agree(p, o)
        m = ok.size
        q = float(np.count_nonzero(ok)) / m
        # q as far toward 1/2 as its 4-sigma Wilson interval allows
        z2 = 16.0
        mid = (q + z2 / (2 * m)) / (1 + z2 / m)
        half = math.sqrt(q * (1 - q) / m + z2 / (4 * m * m)) * 4.0 / (1 + z2 / m)
        qv = min(max(0.5, mid - half), mid + half, 1.0)
        perm = n / (n - 1) if self._runs is None else self._factor
        var = qv * (1 - qv) * (n * perm + n * n / m)
        return n * q, max(math.sqrt(var), 1.0)

    def verdict(self) -> tuple:
        """(lined up, share of rows that agree, share by chance, z)."""
        n = self.rows
        if n < 2:
            return False, math.nan, math.nan, 0.0
        mean, sd = self._chance()
        if math.isnan(mean):
            return False, math.nan, math.nan, 0.0
        z = (self.hits - mean) / sd
        return (z >= Z_RISK and self.hits - mean >= MIN_EXCESS), self.hits / n, mean / n, z


def _class_runs(blocks):
    """(first row, rows) of each class where every class is one run of
    rows (as msa publishes them); None where a class is split (rows not
    grouped by class: the uniform shuffle's test applies)."""
    b = np.asarray(blocks)
    if b.size == 0:
        return None
    edge = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    if edge.size != np.unique(b).size:
        return None
    return edge.astype(np.int64), np.diff(np.r_[edge, b.size]).astype(np.int64)


def _within_classes(runs, cols) -> tuple:
    """(mean, variance) of the agreeing rows where each class's rows are in
    a uniform order over its positions (the order of the classes as
    published): every pair of a class's published row and an original row
    at its positions, Hoeffding's permutation variance per class
    (1/(m - 1)) sum d_ij^2, d the doubly centred agreement, summed over the
    classes (independent orders)."""
    starts, sizes = runs
    sq = sizes * sizes
    total = int(sq.sum())
    blk = np.repeat(np.arange(sizes.size), sq)
    off = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sq) - sq, sq)
    i = starts[blk] + off // sizes[blk]
    j = starts[blk] + off % sizes[blk]
    a = np.ones(total, dtype=bool)
    for agree, p, o in cols:
        a &= agree(tuple(x[i] for x in p), tuple(x[j] for x in o))
    w = a.astype(np.float64)
    n = int(sizes.sum())
    r = np.bincount(i, weights=w, minlength=n)
    c = np.bincount(j, weights=w, minlength=n)
    row_blk = np.repeat(np.arange(sizes.size), sizes)
    t = np.bincount(blk, weights=w, minlength=sizes.size)
    rr = np.bincount(row_blk, weights=r * r, minlength=sizes.size)
    cc = np.bincount(row_blk, weights=c * c, minlength=sizes.size)
    m = sizes.astype(np.float64)
    ss = np.maximum(t - rr / m - cc / m + t * t / (m * m), 0.0)
    var = np.where(sizes > 1, ss / np.maximum(m - 1, 1), 0.0)
    return float((t / m).sum()), float(var.sum())


def _agreeing(cols, k: int) -> int:
    """Rows of a chunk whose every column agrees: each column read on the
    rows the columns before it left (a shuffled release's rows drop out
    after a column or two)."""
    agree, p, o = cols[0]
    left = np.flatnonzero(agree(p, o))
    for agree, p, o in cols[1:]:
        if not left.size:
            break
        if left.size == k:
            left = left[agree(p, o)]
        else:
            left = left[agree(tuple(a[left] for a in p), tuple(a[left] for a in o))]
    return int(left.size)
