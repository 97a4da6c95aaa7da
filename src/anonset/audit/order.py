"""Whether a release's rows line up with the original's rows (H104).

A release's metadata says how its rows were ordered (``row_order``) and what
its record IDs are (``ids``); both are written by the publisher and can be
edited.  With the original at hand the audit reads the data instead: it
counts the published rows that *agree* with the original row they are paired
with (every set holds that row's value; a cell published as it is equals
it), paired by position (row i with row i) or by a column the IDs equal, and
compares the count with what the same release gives paired at random.

Under a shuffled release the published row at position i is a uniformly
drawn row of the original, so the count paired by position has exactly the
distribution of the count under a uniform pairing: its mean is estimated by
:data:`DRAWS` random pairings (within each chunk of rows, which changes no
pairing's distribution), its standard deviation is at most
sqrt(n q (1 - q) n / (n - 1)) (the permutation variance of a 0/1 score, q its
mean share).  A RISK needs the count to exceed that mean by
:data:`Z_RISK` such standard deviations and by :data:`MIN_EXCESS` rows: far
beyond any shuffle (a 1e-8 tail even where the count is Poisson-like on a
tiny table), while a release in input order agrees on every row.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DRAWS", "Z_RISK", "MIN_EXCESS", "PositionMatch"]

#: random pairings that estimate the agreement a shuffled release gives
DRAWS = 20
#: standard deviations beyond that a RISK needs
Z_RISK = 8.0
#: rows beyond that a RISK needs (a tiny table cannot show an order)
MIN_EXCESS = 10


class PositionMatch:
    """Rows that agree with the original row they are paired with, against
    random pairings of the same rows; fed chunk by chunk with :meth:`add`."""

    def __init__(self, seed: int = 0):
        self.rows = 0
        self.hits = 0
        self.null = np.zeros(DRAWS, dtype=np.int64)
        self._rng = np.random.default_rng(seed)

    def add(self, agree, k: int, pair=None) -> None:
        """``agree(idx)``: a bool per published row of the chunk, True where
        it agrees with the chunk's original row ``idx[i]``; ``pair``: the
        original row of each published row (default: the same position)."""
        if k <= 0:
            return
        pair = np.arange(k) if pair is None else np.asarray(pair)
        self.rows += k
        self.hits += int(np.count_nonzero(agree(pair)))
        for j in range(DRAWS):
            self.null[j] += int(np.count_nonzero(agree(pair[self._rng.permutation(k)])))

    def merge(self, other: "PositionMatch") -> None:
        self.rows += other.rows
        self.hits += other.hits
        self.null += other.null

    def verdict(self) -> tuple:
        """(lined up, share of rows that agree, share at random, z)."""
        n = self.rows
        if n < 2:
            return False, math.nan, math.nan, 0.0
        mean = float(self.null.mean())
        q = min(max(mean / n, 0.0), 1.0)
        sd = max(math.sqrt(n * q * (1.0 - q) * n / (n - 1)), float(self.null.std(ddof=1)), 1.0)
        z = (self.hits - mean) / sd
        return (z >= Z_RISK and self.hits - mean >= MIN_EXCESS), self.hits / n, mean / n, z


def set_agreement(masks: dict, codes: dict):
    """``agree`` for a chunk of set columns (``masks``: per column the rows'
    bitmasks; ``codes``: the original's codes of the chunk's rows)."""
    names = [n for n in masks if n in codes]

    def agree(idx):
        ok = None
        for name in names:
            m = np.asarray(masks[name])
            c = np.asarray(codes[name], dtype=np.int64)[idx]
            word = m[np.arange(m.shape[0]), c >> 6]
            held = ((word >> (c & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)
            ok = held if ok is None else ok & held
        return ok if ok is not None else np.zeros(len(idx), dtype=bool)
    return agree


def cell_agreement(published, original, columns):
    """``agree`` for cells published as they are or generalized (a partition
    release): a published cell agrees with an original value it equals as
    text, and with any value where it is none of the column's values (a
    range, a set, '*': it tells nothing either way, nor a cell left to a
    bucket); ``published`` and ``original`` DataFrames, ``columns`` the
    columns to read, each ``(column, cells to read: bool array or None)``."""
    from .partition import _as_text
    parts = []
    for col, read in columns:
        pub = _as_text(published[col]).to_numpy(dtype=object)
        org = _as_text(original[col]).to_numpy(dtype=object)
        codes = _codes_of(np.concatenate([pub, org]))[0]
        p, o = codes[:len(pub)], codes[len(pub):]
        told = np.isin(p, o)
        if read is not None:
            told &= np.asarray(read, dtype=bool)
        if told.any():
            parts.append((p, o, ~told))

    def agree(idx):
        ok = np.ones(len(idx), dtype=bool)
        for p, o, free in parts:
            ok &= free | (p == o[idx])
        return ok
    return agree


def _codes_of(values: np.ndarray) -> tuple:
    import pandas as pd
    codes, uniq = pd.factorize(pd.Series(values, dtype=object).fillna("\x00<NA>"))
    return codes, uniq
