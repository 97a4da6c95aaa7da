"""Reading published sets as the audit needs them (paper 000 Sec. V-B's
R_ij, stored as bitmasks over the domain).

Every check of the audit reads a set column in one of four ways: as a
membership matrix (which values each set holds), as set sizes |R_ij|, as the
number of sets holding bits beyond the domain, or as per-value counts (how
many sets hold each value: the counts w of eq. 17 for one attribute).  These
functions take a bitmask array, so they work the same on a whole table and
on one chunk of a file.
"""
from __future__ import annotations

import numpy as np

__all__ = ["bits", "row_sizes", "stray_rows", "value_counts"]

#: bit b of byte value x, for x in 0..255 (little-endian bit order): (256, 8).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1,
                           bitorder="little").astype(np.int64)


def _u8(mask: np.ndarray) -> np.ndarray:
    m = np.ascontiguousarray(mask, dtype="<u8")
    if m.ndim == 1:
        m = m.reshape(-1, 1)
    # the width spelt out: -1 cannot be inferred for a release of no rows (H88)
    return m.view(np.uint8).reshape(m.shape[0], 8 * m.shape[1])


def bits(mask: np.ndarray, d: int) -> np.ndarray:
    """(n, d) bool: ``M[i, v]`` is True when value code v is in row i's set.

    Read straight from the bitmasks, so it works on sets of any size.

    Examples
    --------
    >>> bits(np.array([[0b101]], dtype=np.uint64), 3).tolist()
    [[True, False, True]]
    """
    return np.unpackbits(_u8(mask), axis=1, bitorder="little")[:, :d].astype(bool)


class MaskMembership:
    """The (n, d) membership of a bitmask column without building it: a
    value's column (``M[:, v]``) or some rows (``M[rows]``, dense) at a
    time, so that a table of wide domains is not held as n x d bytes (a
    30,000-row release over 60,000 codes took 1.8 GB per attribute and
    pass, and 31 s to audit)."""

    def __init__(self, mask: np.ndarray, d: int):
        m = np.ascontiguousarray(mask, dtype=np.uint64)
        self.mask = m.reshape(-1, 1) if m.ndim == 1 else m
        self.d = int(d)
        self.shape = (self.mask.shape[0], self.d)

    def __getitem__(self, key):
        if isinstance(key, tuple):
            rows, v = key
            if not (isinstance(rows, slice) and rows == slice(None)):
                raise IndexError("a MaskMembership gives whole columns or rows")
            v = int(v)
            word = self.mask[:, v >> 6]
            return ((word >> np.uint64(v & 63)) & np.uint64(1)).astype(bool)
        return bits(self.mask[key], self.d)

    def nonzero(self) -> tuple:
        """(rows, values) of every member, sorted by row then value (as
        ``np.nonzero`` of the dense matrix), from the set bits alone."""
        r, v = self._members()
        order = np.lexsort((v, r))
        return r[order], v[order]

    def _members(self) -> tuple:
        """(rows, values) of every member, in no particular order."""
        rows, vals = [], []
        for w in range(self.mask.shape[1]):
            col = self.mask[:, w]
            at = np.flatnonzero(col)
            if at.size == 0:
                continue
            b = np.unpackbits(col[at].view(np.uint8).reshape(-1, 8), axis=1,
                              bitorder="little")
            r, k = np.nonzero(b)
            rows.append(at[r])
            vals.append(k + 64 * w)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        r, v = np.concatenate(rows), np.concatenate(vals)
        keep = v < self.d
        return r[keep], v[keep]

    def row_sizes(self) -> np.ndarray:
        return row_sizes(self.mask)

    def column_sums(self, rows) -> np.ndarray:
        """``M[rows].sum(axis=0)``: how many of the rows' sets hold each
        value, from their set bits."""
        _, vals = MaskMembership(self.mask[rows], self.d)._members()    # order not needed
        return np.bincount(vals, minlength=self.d).astype(np.int64)


def row_sizes(mask: np.ndarray) -> np.ndarray:
    """|R_i| of every row (bits set over all words), int64: the reader's
    own count (:func:`anonset.io.published.popcount`)."""
    from ..io.published import popcount
    return popcount(mask).astype(np.int64, copy=False)


def stray_rows(mask: np.ndarray, d: int) -> int:
    """Rows with a bit set at or beyond d (a value outside the domain)."""
    m = np.asarray(mask, dtype=np.uint64)
    if m.ndim == 1:
        m = m.reshape(-1, 1)
    if d % 64 == 0 or m.shape[0] == 0:        # the last word is full
        return 0
    return int(np.count_nonzero(m[:, -1] >> np.uint64(d % 64)))


def value_counts(mask: np.ndarray, d: int) -> np.ndarray:
    """How many sets hold each value (d,), int64: eq. 17's w for one
    attribute.  One bincount per byte of the mask, so the cost is
    ceil(d / 8) passes over the rows, not d."""
    u8 = _u8(mask)
    out = np.zeros(8 * u8.shape[1], dtype=np.int64)
    for b in range((d + 7) // 8):
        out[8 * b: 8 * b + 8] = np.bincount(u8[:, b], minlength=256) @ _BYTE_BITS
    return out[:d]
