"""Rows that share an identifier's value: one person's several rows (panel
waves, hospital visits) in one table.  Drawn independently, such rows'
random sets intersect toward the person's true values wherever an adversary
links the rows (docs/security.md, section 0), and a partition's group of k
rows may hold fewer than k people.  So every publishing path counts them
(recorded in the metadata as ``shared_ids``) and refuses them unless the
user names the column (``allow_shared_id``: rows that share it are
different people's, a household or a site; recorded as
``shared_ids_allowed``).  The persistent key (paper 000's sets memoized per
record, as RAPPOR memoizes) gives one record's rows one set per value.  The
counts use hashes that are never stored.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .validate import InputError

__all__ = ["value_hashes", "shared_rows", "count_shared", "shared_without_key",
           "refuse_shared_ids", "changed_records", "refuse_changed_values"]


def shared_rows(hashes) -> dict:
    """{column: rows whose value at least one other row holds}, from each
    column's value hashes (a list of arrays), for the columns with any."""
    out = {}
    for c, parts in hashes.items():
        k = _rows_sharing(np.concatenate(parts) if parts else np.zeros(0, np.uint64))
        if k:
            out[c] = k
    return out


def _rows_sharing(h: np.ndarray) -> int:
    """Rows whose hash another row holds: sorted in place, a row is alone
    where it differs from both neighbours.  About 10 bytes a row beside the
    hashes (np.unique with its inverse and counts took 73: 1.4 GB more at
    20 M rows, H48)."""
    n = h.size
    if n < 2:
        return 0
    h.sort()
    differs = h[1:] != h[:-1]                     # n - 1 bools
    alone = int(np.count_nonzero(differs[1:] & differs[:-1]))   # rows 1 .. n-2
    alone += int(differs[0]) + int(differs[-1])   # the first row, the last row
    return n - alone


def value_hashes(col: pd.Series, *, text: bool) -> np.ndarray:
    """64-bit hashes of an identifier column's present values, only to count
    the rows that share one (never stored).  A number is one value however
    a path types it (7, 7.0, and '7' or '007' read as text from a CSV);
    other text is compared as it is."""
    s = col.reset_index(drop=True)
    if text:
        vals = s.to_numpy(dtype=object)
        s = pd.Series(vals[~_missing_text(vals)], dtype=object)
    else:
        s = s.dropna()
    if pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return pd.util.hash_array(s.to_numpy(dtype=np.int64))
    if pd.api.types.is_float_dtype(s.dtype):
        x = s.to_numpy(dtype=np.float64)
        whole = np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) < 2.0 ** 63)
        out = pd.util.hash_array(x.view(np.uint64)) ^ np.uint64(0x5555555555555555)
        out[whole] = pd.util.hash_array(x[whole].astype(np.int64))
        return out
    return _text_hashes(s.to_numpy(dtype=object).astype(str))


def _text_hashes(u: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each text of a fixed-width array: of its number
    where it is 1-18 decimal digits (leading zeros do not count), else of
    its own UTF-32 code units, eight bytes at a time, and its length
    (multiply and xor-shift, as in splitmix64), so that a text hashes alike
    in any array."""
    n, width = len(u), max(u.dtype.itemsize // 4, 1)
    units = np.zeros((n, width + width % 2), np.uint32)
    if n and u.dtype.itemsize:
        units[:, :width] = u.view(np.uint32).reshape(n, width)
    words = units.view(np.uint64)
    # only a text's own words are mixed, then its length: the hash must not
    # depend on the width of the array (the longest text of a chunk)
    length = np.char.str_len(u).astype(np.uint64)
    own = (length + np.uint64(1)) // np.uint64(2)
    h = np.full(n, 0x9E3779B97F4A7C15, np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            mixed = (h ^ words[:, j]) * np.uint64(0xBF58476D1CE4E5B9)
            h = np.where(np.uint64(j) < own, mixed ^ (mixed >> np.uint64(31)), h)
        h = (h ^ length) * np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(29)
        # 1-18 digits: Horner's rule over the code units (a row's own; longer
        # rows elsewhere in the array change nothing)
        num = np.zeros(n, np.int64)
        digits = (length >= 1) & (length <= 18)
        for j in range(min(width, 18)):
            c = units[:, j].astype(np.int64)
            digits &= (c == 0) | ((c >= 48) & (c <= 57))
            num = np.where(c != 0, num * 10 + (c - 48), num)
        if digits.any():
            h[digits] = pd.util.hash_array(num[digits])
    return h


def count_shared(frame: pd.DataFrame, identifiers: Sequence[str]) -> dict:
    """:func:`shared_rows` of the identifier columns of an in-memory table."""
    return shared_rows({c: [value_hashes(frame[c], text=False)] for c in identifiers})


def shared_without_key(frame: pd.DataFrame, identifiers: Sequence[str],
                       allow_shared_id: Sequence[str] = (), *, file=None,
                       groups: bool = True) -> dict:
    """:func:`count_shared`, refused unless named (:func:`refuse_shared_ids`),
    for the methods that have no persistent key (semantic sets, the
    partition methods: ``groups``).  Returns the metadata's entries:
    ``shared_ids`` and, where the user named some, ``shared_ids_allowed``."""
    from .validate import check_names
    allow = check_names(allow_shared_id, "allow_shared_id")
    for c in allow:
        if c not in identifiers:
            raise InputError(f"names {c!r}, which is not an identifier column",
                             param="allow_shared_id", file=file,
                             expected=f"identifier columns: {list(identifiers)}")
    shared = count_shared(frame, identifiers)
    allowed = refuse_shared_ids(shared, allow, persistent_key=False, groups=groups, file=file)
    return {"shared_ids": shared, **({"shared_ids_allowed": allowed} if allowed else {})}


def refuse_shared_ids(shared: Mapping[str, int], allow_shared_id: Sequence[str] = (), *,
                      persistent_key: bool = True, record_id: str | None = None,
                      groups: bool = False, file=None) -> list:
    """Refuse identifier values that several rows hold (``shared``: {column:
    rows that share a value}, the record id left out) unless the column is
    named in ``allow_shared_id``: if such rows are one person's, each drew
    its sets independently (or, ``groups``, they fill a partition's groups
    as several people), and whoever links them learns the person's values.
    ``persistent_key``: whether the method offers the remedy; ``record_id``:
    the record id of a persistent release.  Returns the named columns that
    rows share, for the metadata."""
    refused = [c for c in shared if c not in allow_shared_id]
    if refused:
        col = refused[0]
        also = (f" (as do those of {', '.join(map(repr, refused[1:]))})" if len(refused) > 1
                else "")
        if groups:
            how = ("a group of k rows may then hold fewer than k people, and the groups that "
                   "hold one person's rows narrow down the person's values")
        else:
            how = ("each draws its sets independently, and whoever links them (their exact "
                   "QIDs and pass-through columns alike) intersects the sets toward the "
                   "person's true values")
        if record_id is not None:
            remedy = (f"{{@record_id={col!r}}} if they are one person's rows (the record id is "
                      f"{record_id!r}, so they are drawn as different records)")
        elif persistent_key:
            remedy = (f"one person's rows tied by a record id ({{@record_id={col!r}}} with "
                      "{@key_file} and declared domains: one set per value per person), or "
                      "one row per person")
        else:
            remedy = "one row per person (this method has no persistent key)"
        raise InputError(f"is an identifier whose values {shared[col]:,} rows share with other "
                         f"rows{also}: if such rows are one person's (panel waves, visits), "
                         f"{how}", column=col, file=file,
                         expected=f"{remedy}, or, if rows that share it are different "
                                  "people's (a household, a site), the risk named: "
                                  f"{{@allow_shared_id={refused!r}}}")
    return [c for c in shared if c in allow_shared_id]


def changed_records(ids, values, columns) -> dict:
    """{column: records whose rows hold more than one value of it}, from the
    rows' record-id hashes (``ids``, a list of arrays) and codes (``values``:
    a list of (rows, columns) arrays, as
    :func:`anonset.engine.stats.cell_codes` gives them).  Rows sorted by
    record once; then, a column at a time, each row of a record that holds
    several is compared with the next (about 40 bytes a row at most)."""
    if not ids:
        return {}
    h = np.concatenate(ids)
    if h.size < 2:
        return {}
    order = np.argsort(h, kind="stable")
    hs = h[order]
    del h
    first = np.flatnonzero(hs[1:] == hs[:-1])         # sorted rows i, i + 1: one record
    if not first.size:
        return {}
    group = np.cumsum(hs[1:] != hs[:-1])[first]       # the record of each such pair
    del hs
    a, b = order[first], order[first + 1]
    del order, first
    out = {}
    for j, c in enumerate(columns):
        col = np.concatenate([v[:, j] for v in values])
        moved = col[a] != col[b]
        if moved.any():
            out[c] = int(np.unique(group[moved]).size)
    return out


def refuse_changed_values(changed: Mapping[str, int], allow_clear: Sequence[str], *,
                          record_id: str, file=None) -> list:
    """Refuse sensitive columns whose value differs between one record's
    rows (``changed``: {column: records}) unless ``allow_clear`` names them:
    under the persistent key each value draws its own set, the record's
    sets of the values that did not change link its rows, and whoever knows
    how the value moved (an age a year on, the experience of the next wave)
    intersects the sets toward the true value (H65: a panel of 595 workers,
    experience at l = 5, 71 % read off).  Returns the named columns."""
    refused = [c for c in changed if c not in allow_clear]
    if refused:
        col = refused[0]
        also = (f" (as do those of {', '.join(map(repr, refused[1:]))})" if len(refused) > 1
                else "")
        k = changed[col]
        raise InputError(f"holds different values in the rows of one record for "
                         f"{k:,} record{'s' if k != 1 else ''} (record id {record_id!r}){also}: "
                         "each value "
                         "draws its own set, the sets of the record's values that did not "
                         "change link its rows, and whoever knows how the value moved (a year "
                         "on between waves) intersects its sets toward the true value",
                         column=col, file=file,
                         expected="one row per record, a form of it that does not change (a "
                                  "year of birth, not an age), or the risk named: "
                                  f"{{@allow_clear={refused!r}}}")
    return [c for c in changed if c in allow_clear]


def _missing_text(vals: np.ndarray) -> np.ndarray:
    from .engine.stats import missing_text
    return missing_text(vals)
