"""DataFrame columns <-> integer codes (a value is its index in the domain).

Every error names the column and the (global) row; nothing is silently
dropped or coerced.  A missing cell becomes the attribute's missing-value
token (:attr:`anonset.Attribute.missing`) when it has one, else it is an
error.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .schema import Attribute, Schema
from .validate import InputError, numbers_expected, reads_as_number, row_name

__all__ = ["encode", "encode_column", "decode_column", "domain_codes", "not_numbers",
           "refuse_not_numeric"]


def _numeric(dtype) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def encode_column(col: pd.Series, attr: Attribute, *, missing: str = "error",
                  row0: int = 0, skip_missing: bool = False) -> np.ndarray:
    """Codes (int32) of one column under ``attr``'s domain.

    Parameters
    ----------
    missing : {'error', 'category'}
        What a missing cell is when the attribute has no missing-value token:
        an error, or (``'category'``, the older spelling) the value ``'?'``,
        which the domain must then hold.
    row0 : int
        Global index of the column's first row (for messages).
    skip_missing : bool
        Missing cells of a column without a missing-value token get code -1
        instead of an error (the caller counts them over the whole table).
    """
    name = attr.name
    if missing not in ("error", "category"):
        raise InputError(f"got {missing!r}", param="missing", expected="error or category")
    if _narrow(col.dtype) is not None:              # 0.7, not 0.699999988 (H42)
        col = shortest_floats(pd.DataFrame({"v": col.reset_index(drop=True)}))["v"]
    col = _booleans_as_domain(col, attr.domain)
    values = col.reset_index(drop=True)
    isna = values.isna().to_numpy()
    token = attr.missing if attr.missing is not None else ("?" if missing == "category" else None)
    if isna.any():
        rows = np.flatnonzero(isna)
        if token is None and not skip_missing:
            raise missing_refused(name, len(rows), row0 + int(rows[0]))
        if token is not None and token not in attr.domain:
            raise InputError(f"has missing values but its domain lacks the missing-value token "
                             f"{token!r}", column=name,
                             expected=f"{token!r} in the declared domain")
    dom = attr.domain
    fill = -1 if token is None else None        # the code of a (skipped) missing cell
    if attr.bins is not None:
        if not _numeric(values.dtype) and not isna.all():
            # the first cell, in row order, that is no number: the same cell
            # however the table is cut in blocks (a later 'abc' was named in
            # memory and the first block's '79' streamed, H48); text that
            # reads as a number says to convert the column
            refuse_not_numeric(values, isna, name, row0)
        x = values.to_numpy(dtype=np.float64, na_value=np.nan)
        edges = np.asarray(attr.bins)
        codes = np.searchsorted(edges, x, side="right") - 1
        bad = ((codes < 0) | (codes >= len(edges) - 1)) & ~isna
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"value {_shown(values.iloc[i])!r} at {row_name(row0 + i)} is "
                             f"outside the bins", column=name, row=row0 + i,
                             expected=f"values in [{_shown(edges[0])}, {_shown(edges[-1])}), "
                                      "or the column top- and bottom-coded into its end bins "
                                      f"(a value below {_shown(edges[0])} set to it, one at or "
                                      f"above {_shown(edges[-1])} set below it; in a series the "
                                      "edges stay)")
        if isna.any():
            codes[isna] = dom.index(token) if fill is None else fill
        return codes.astype(np.int32)
    if _numeric(values.dtype):
        non_numeric = [v for v in dom if not (isinstance(v, (int, float)) and not isinstance(v, bool))
                       and v != token]
        if non_numeric:
            raise InputError(f"is numeric but its domain has non-numeric values (e.g. "
                             f"{non_numeric[0]!r})", column=name,
                             expected="a numeric domain, or the column read as text")
    else:
        kinds = {type(v) for v in values[~isna].unique()} if (~isna).any() else set()
        if len(kinds) > 1 and not kinds <= {int, float}:
            raise InputError(f"mixes value types {sorted(t.__name__ for t in kinds)}",
                             column=name, expected="one value type: convert the column")
    some_na = bool(isna.any())
    present = values[~isna] if some_na else values
    lut = _integer_lut(dom, token, values.dtype)
    if lut is not None:
        # integers over a small range: one table lookup per value, in one C
        # pass (the streamed path encodes every value twice)
        from .randomized import _kernels
        lo, table = lut
        x = present.to_numpy()
        if x.dtype.kind not in "iu":          # a nullable column's cells as objects
            x = present.to_numpy(dtype=np.int64)
        idx, none = _kernels.lut_codes(x, lo, table)     # -1 outside the domain
        if not some_na and not none:
            return idx                        # every cell a value of the domain
    elif _numeric(values.dtype):
        # numbers against the numeric part of the domain, vectorized
        pos = np.array([i for i, v in enumerate(dom) if v != token], dtype=np.int32)
        num = pd.Index(np.array([v for v in dom if v != token], dtype=np.float64))
        found = num.get_indexer(present.to_numpy(dtype=np.float64, na_value=np.nan))
        idx = np.where(found >= 0, pos[np.maximum(found, 0)], -1)
    else:
        idx = pd.Index(list(dom), dtype=object).get_indexer(
            pd.Index(present.to_numpy(dtype=object), dtype=object))
    codes = np.full(len(values), -1, dtype=np.int32)
    if some_na:
        codes[~isna] = idx
        codes[isna] = dom.index(token) if fill is None else fill
    else:
        codes[:] = idx
    bad = (codes < 0) & ~isna
    if bad.any():
        # the first bad row only: the same message whatever the chunking
        i = int(np.flatnonzero(bad)[0])
        shown = _shown(values.iloc[i])
        hint = ""
        padded = [v for v in dom if isinstance(v, str) and v.isdigit() and v.startswith("0")
                  and v.lstrip("0") == str(shown).lstrip("0") and v != str(shown)] \
            if str(shown).isdigit() and not str(shown).startswith("0") else []
        if isinstance(shown, str) and shown != shown.strip() and shown.strip() in dom:
            # raw survey files pad their values ('  Private' in UCI Adult)
            hint = f"; the domain has {shown.strip()!r}: the data has spaces around its values"
        elif padded:
            # a domain of codes written with leading zeros is text (H81, H83)
            hint = (f"; the domain has the text {padded[0]!r}: codes written with leading "
                    "zeros are text, so the data must write them so too (or the domain "
                    "without the zeros)")
        elif isinstance(shown, str) and len(dom) <= 10_000:
            from .validate import nearest              # a typo in the data or the domain
            near = nearest(shown, [v for v in dom if isinstance(v, str)])
            hint = f"; the domain has {near!r}, spelt nearly so" if near is not None else ""
        where = " (the leaves of its hierarchy)" if attr.hierarchy is not None else ""
        raise InputError(f"value {shown!r} at {row_name(row0 + i)} is not in the domain "
                         f"({len(dom):,} values){hint}", column=name, row=row0 + i,
                         expected=f"values of the declared domain{where}")
    return codes


def missing_refused(name, na: int, first: int | None, file=None) -> InputError:
    """The refusal of ``na`` missing cells (the first at global row ``first``)
    in a column without a missing-value token."""
    at = "" if first is None else f" (first at {row_name(first)})"
    return InputError(f"has {na:,} missing value(s){at}", column=name, file=file, row=first,
                      expected="no missing values, or {@missing='category'} to publish them "
                               "as a value of their own")


def _no_number(numeric_text: bool):
    """Whether a present cell is no number (a cached test, per value)."""
    seen: dict = {}

    def no(v) -> bool:
        try:
            key = (type(v), v)        # True and 1 apart
            hit = seen.get(key)
        except TypeError:             # an unhashable cell: no number
            return True
        if hit is None:
            hit = seen[key] = not (_is_number(v) or numeric_text and reads_as_number(v))
        return hit
    return no


def not_numbers(cells, *, numeric_text: bool = False) -> np.ndarray:
    """Mask of the ``cells`` (present ones: missing cells are left out
    beforehand) that are no number: text, a bool, anything else, except
    (``numeric_text``) text that reads as a number, as a CSV file's '31'
    does.  One rule for the refusals of text where numbers are due
    (:func:`refuse_not_numeric`) and the warning of a column of numbers
    read as text for a few text cells (H105)."""
    no = _no_number(numeric_text)
    return np.fromiter((no(v) for v in cells), dtype=bool, count=len(cells))


def refuse_not_numeric(values: pd.Series, isna: np.ndarray, name, row0: int = 0, *,
                       why: str = "its domain is numeric", text_first: bool = False) -> None:
    """Refuse a column where numbers are due by its first cell that is no
    number (``why``: what makes them due), naming the cell and its row:
    ``holds the text 'forty' at row 1,501, but its domain is numeric;
    expected numbers``.  Text that reads as a number counts as text, with
    the advice to convert the column; ``text_first``: a cell that reads as
    no number is named before such text (a whole table's column typed as
    text by its stray 'old', not by its '31's).  Numbers held as Python
    objects pass."""
    present = np.flatnonzero(~np.asarray(isna, dtype=bool))
    cells = values.to_numpy(dtype=object)[present]
    i = None
    for numeric_text in ((True, False) if text_first else (False,)):
        no = _no_number(numeric_text)
        i = next((k for k, v in enumerate(cells) if no(v)), None)
        if i is not None:
            break
    if i is None:              # numbers as Python objects: numbers all the same
        return
    v = cells[i]
    as_text = reads_as_number(v)
    row = row0 + int(present[i])
    kind = "the text" if isinstance(v, str) else f"a {type(v).__name__}"
    raise InputError(f"holds {kind} {_shown(v)!r} at {row_name(row)}, but {why}",
                     column=name, row=row,
                     expected="numbers (it holds them as text: convert it, e.g. "
                              "pandas.to_numeric(column))" if as_text else numbers_expected(v))


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool,
                                                                                         np.bool_))



def _narrow(dtype):
    """The numpy type of a column of 16- or 32-bit floats (numpy, pandas,
    Arrow; a Categorical of them), else None."""
    if isinstance(dtype, pd.CategoricalDtype):
        return _narrow(dtype.categories.dtype)
    pa_type = getattr(dtype, "pyarrow_dtype", None)
    if pa_type is not None:
        import pyarrow as pa
        if pa.types.is_dictionary(pa_type):
            pa_type = pa_type.value_type
        return np.float32 if pa.types.is_float32(pa_type) else \
            np.float16 if pa.types.is_float16(pa_type) else None
    t = getattr(dtype, "numpy_dtype", dtype)
    return t.type if t in (np.float32, np.float16) else None


def shortest_decimals(x: np.ndarray) -> np.ndarray:
    """16- or 32-bit floats as the float64 numbers of their shortest
    decimals (np.float32(0.7) -> 0.7, not 0.699999988079071): for each the
    fewest significant digits that read back as the same narrow float,
    found for all at once (H41: one string round trip per value cost 0.7 s
    a million)."""
    x = np.asarray(x)
    kind = x.dtype.type
    with np.errstate(over="ignore", invalid="ignore"):
        wide = x.astype(np.float64)
    out = wide.copy()
    todo = np.isfinite(wide) & (wide != 0)
    if not todo.any():
        return out
    digits = 9 if kind == np.float32 else 5
    e = np.zeros(len(wide), dtype=np.int64)
    e[todo] = np.floor(np.log10(np.abs(wide[todo]))).astype(np.int64)
    # beyond 1e+-22 a power of ten is no exact float64: numpy's repr is asked
    # (float32's smallest and largest magnitudes)
    far = todo & ((e < -22 + digits) | (e > 22))
    for i in np.flatnonzero(far):
        out[i] = float(str(kind(wide[i])))
    todo &= ~far
    for k in range(1, digits + 1):
        if not todo.any():
            break
        m = k - 1 - e[todo]                      # decimals to keep
        v = wide[todo]
        # a power of ten is exact up to 1e22: scale by it, or divide by it
        up = np.where(m >= 0, 10.0 ** np.clip(m, 0, 22), 1.0)
        down = np.where(m < 0, 10.0 ** np.clip(-m, 0, 22), 1.0)
        scaled = np.where(m >= 0, v * up, v / down)
        r = np.where(m >= 0, np.round(scaled) / up, np.round(scaled) * down)
        with np.errstate(over="ignore", invalid="ignore"):
            ok = r.astype(kind) == v.astype(kind)
        idx = np.flatnonzero(todo)
        out[idx[ok]] = r[ok]
        # a value halfway between two decimals of k digits (either may read
        # back, or the other only): numpy's repr is asked (rare: exact
        # binary fractions)
        halfway = np.abs(scaled - np.trunc(scaled)) == 0.5
        for i in idx[halfway]:
            out[i] = float(str(kind(wide[i])))
        todo[idx[ok | halfway]] = False
    return out


#: The ``DataFrame.attrs`` entry naming the columns :func:`shortest_floats`
#: read from 16- or 32-bit floats, with their type ('float16', 'float32').
NARROW = "anonset.narrow_floats"


def _arrow_unusual(dt) -> bool:
    """An ArrowDtype pandas reads no further than holding it: a dictionary
    (its categories are the declared domain, as a Categorical's are), a
    text or bytes view (string_view, binary_view: pandas' type checks raise
    NotImplementedError on them) or nested values (which a file's reader
    gives as Python objects: H139, a list column raised pyarrow's 'no
    kernel').  Bytes and decimals stay Arrow's (a CSV release keeps their
    type); ``SetTable.equals`` reads them alike in any holder."""
    if not isinstance(dt, pd.ArrowDtype):
        return False
    import pyarrow as pa
    t = dt.pyarrow_dtype
    return (pa.types.is_dictionary(t) or str(t) in ("string_view", "binary_view")
            or pa.types.is_nested(t))


def native_types(block: pd.DataFrame) -> pd.DataFrame:
    """``block`` with the column types pandas holds but does not read as a
    plain table's, each as the same column given in an Arrow table is read
    (H135): NumPy numbers in big-endian byte order (``np.fromfile(f,
    '>i8')``, FITS, network order) as native ones, and an ArrowDtype
    dictionary or text view (``pd.read_parquet(f, dtype_backend='pyarrow')``,
    Polars' newest Arrow) as :func:`~anonset.io.tables.arrow_frame` makes of
    it: a Categorical whose categories are the dictionary, large text; an
    ArrowDtype of nested values as the Python objects a file's reader gives
    (H139); a Sparse column as its values.  Other
    columns are left as they are (the same objects)."""
    odd = [n for n, dt in zip(block.columns, block.dtypes)
           if (isinstance(dt, np.dtype) and not dt.isnative) or _arrow_unusual(dt)
           or isinstance(dt, pd.SparseDtype)]
    if not odd or not block.columns.is_unique:
        return block             # (a repeated name is refused where the table is checked)
    import pyarrow as pa
    block = block.copy(deep=False)
    for n in odd:
        col = block[n]
        if isinstance(col.dtype, pd.SparseDtype):      # its values (H139: the fill value
            col = col.sparse.to_dense()               # was written as the dtype's text)
            block[n] = col
        if isinstance(col.dtype, np.dtype):
            if not col.dtype.isnative:
                block[n] = col.astype(col.dtype.newbyteorder("="))
            continue
        if not _arrow_unusual(col.dtype):
            continue
        arr = pa.array(col.array)
        t = arr.type
        from .io.tables import arrow_frame, cast_views   # (casts on pyarrow < 18 too)
        if str(t) == "string_view":
            arr = cast_views(arr, pa.large_string())
        elif str(t) == "binary_view":
            arr = cast_views(arr, pa.large_binary())
        elif pa.types.is_dictionary(t) and str(t.value_type) in ("string_view", "binary_view"):
            view = pa.large_string() if str(t.value_type) == "string_view" else pa.large_binary()
            arr = cast_views(arr, pa.dictionary(t.index_type, view, t.ordered))
        conv = arrow_frame(pa.table({"v": arr}))["v"]
        conv.index = col.index
        block[n] = conv
    return block


def shortest_floats(block: pd.DataFrame, names=None) -> pd.DataFrame:
    """``block`` with its columns in types pandas reads as a plain table's
    (:func:`native_types`), and with its 16- and 32-bit float columns among ``names``
    (default: all) as the float64 numbers their shortest decimals spell
    (:func:`shortest_decimals`), a Categorical's categories so too: a
    float32 column of 0.7 holds 0.699999988079071, which a declared 0.7
    (and the same column in a CSV file) is not (H39, H42: a Parquet file
    of float32 was refused, its inferred domain published
    {0.10000000149011612|...}, and its audit refused the original)."""
    if not block.columns.is_unique:
        return block                 # refused by name where the table is checked
    block = native_types(block)
    names = block.columns if names is None else [n for n in names if n in block.columns]
    wide = [n for n in names if _narrow(block[n].dtype) is not None]
    if not wide:
        return block
    block = block.copy(deep=False)   # columns replaced, not written in place (H97: a
    # deep copy of every column was a third of its time); which columns were
    # narrow is kept (a record id's type, H100)
    block.attrs[NARROW] = {**block.attrs.get(NARROW, {}),
                           **{n: np.dtype(_narrow(block[n].dtype)).name for n in wide}}
    for n in wide:
        col = block[n]
        kind = _narrow(col.dtype)
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = col.cat.categories
            block[n] = col.cat.rename_categories(
                shortest_decimals(cats.to_numpy(dtype=kind)).tolist())
            continue
        vals = col.to_numpy(dtype=kind, na_value=np.nan)
        codes, uniq = pd.factorize(vals, use_na_sentinel=True)   # each value once
        spelled = shortest_decimals(np.asarray(uniq, dtype=kind))
        block[n] = np.where(codes >= 0, spelled[np.maximum(codes, 0)] if spelled.size else
                            np.nan, np.nan)
    return block


#: Text that spells a boolean (any case): a CSV file's True and False.
BOOL_TEXT = {"true": True, "false": False}


def _booleans_as_domain(col: pd.Series, domain) -> pd.Series:
    """Booleans as the domain writes them: a CSV file's text 'True' and
    'False' (any case) where the domain holds booleans (a Parquet
    release's), and booleans as that text where it holds 'True' and
    'False' (a CSV release's), so that either file is the original of
    either release (H42)."""
    plain = [v for v in domain if v is not None]
    if not plain:
        return col
    spelled = BOOL_TEXT
    if all(isinstance(v, (bool, np.bool_)) for v in plain) and \
            (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
        return col.map(lambda v: spelled.get(v.strip().lower(), v) if isinstance(v, str) else v)
    if all(isinstance(v, str) for v in plain) and set(plain) <= {"True", "False"} and \
            pd.api.types.is_bool_dtype(col.dtype):
        return col.astype(object).map(lambda v: str(bool(v)) if isinstance(v, (bool, np.bool_))
                                      else v)
    return col


def domain_codes(values, domain) -> np.ndarray:
    """Position (int32) of each value in ``domain``; -1 for a value not in it.

    A hash lookup like ``pd.Categorical(values, categories=domain).codes``,
    which pandas 3 deprecates for values outside the categories.

    Examples
    --------
    >>> domain_codes(["b", "z", "a"], ["a", "b"]).tolist()
    [1, -1, 0]
    """
    index = pd.CategoricalDtype(list(domain)).categories
    return np.asarray(index.get_indexer(values), dtype=np.int32)


#: Largest value range of an integer domain encoded by a lookup table.
_LUT_RANGE = 1 << 20


def _integer_lut(dom, token, dtype):
    """(lowest value, table value - lowest -> code) for an integer column over
    an integer domain spanning a small range, else None."""
    if not pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return None
    ints = [(i, v) for i, v in enumerate(dom) if v != token]
    if not ints or not all(isinstance(v, int) and not isinstance(v, bool) for _, v in ints):
        return None
    lo = min(v for _, v in ints)
    hi = max(v for _, v in ints)
    if hi - lo >= _LUT_RANGE:
        return None
    table = np.full(hi - lo + 1, -1, dtype=np.int32)
    for i, v in ints:
        table[v - lo] = i
    return lo, table


def encode(data, schema: Schema, *, missing: str = "error", columns=None, row0: int = 0) -> dict:
    """Codes of every published attribute: ``{name: int32 array}``."""
    from .io.tables import as_frame
    frame = as_frame(data)
    if len(frame) == 0:
        raise InputError("the table is empty (no rows)", param="data",
                         expected="at least one row to publish")
    names = columns if columns is not None else [a.name for a in schema.published]
    out = {}
    for n in names:
        attr = schema[n]
        if n not in frame.columns:
            raise InputError("is in the schema but not in the data", column=n)
        out[n] = encode_column(frame[n], attr, missing=missing, row0=row0)
    return out


def decode_column(codes: np.ndarray, attr: Attribute) -> np.ndarray:
    """Domain values of codes, as an object array."""
    dom = np.empty(attr.d, dtype=object)
    dom[:] = list(attr.domain)
    return dom[np.asarray(codes)]


def _shown(v):
    """A value as an error message shows it: a plain Python scalar (NumPy 2
    writes np.float64(4.0)), a whole float as the integer a CSV spelled,
    text cut to 80 characters."""
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and len(v) > 80:         # one cell, not a page of it
        return v[:80] + "..."
    return v
