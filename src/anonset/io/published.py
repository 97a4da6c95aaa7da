"""Published set tables on disk: writing them block by block, and reading
them back only after checking them.

Two formats (paper 000's sets; DESIGN.md "Data model"):

* Parquet: one list column per sensitive attribute (each set a list of its
  values, in domain order), exact attributes and pass-through columns as
  plain columns, the metadata (schema, parameters, model, row count, how it
  was published) as JSON under the file-metadata key ``anonset``;
* CSV: ``{a|b|c}`` cells (the papers' aggregated expression) and the same
  metadata in ``OUT.anonset.json`` beside it; the two files are written as
  one unit.  Text cells and headers that a spreadsheet would execute (a
  leading ``=``, ``+``, ``-``, ``@``, tab or carriage return) are written
  with a leading ``'`` as OWASP recommends, and a leading ``'`` is doubled;
  :func:`read_settable` and :func:`iter_masks` restore them exactly.

A published file is never trusted: before any use, :func:`read_metadata`
checks the format and version, the schema, every parameter (0 <= p <= 1,
1 <= eta <= d, d equal to the domain size) and the row count, and the
readers check every set (exactly eta distinct members inside the domain) and
that the file holds as many rows as its metadata says.  A tampered or
truncated file is refused with the file and the field named.
"""
from __future__ import annotations

import contextlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import Schema
from ..validate import InputError
from .atomic import atomic_paths

__all__ = ["FORMAT_VERSION", "META_KEY", "CSV_META_SUFFIX", "metadata", "write_settable",
           "ParquetSink", "CsvSink", "open_sink", "read_metadata", "TableHeader", "iter_masks",
           "read_settable", "csv_escape", "csv_unescape", "csv_safe_frame"]

#: 2: the ``info`` keys of the safe defaults (key mode, row order, clear
#: columns, roles, missing values) and escaped CSV text.  Version 1 files
#: (anonset 0.1) are still read.
FORMAT_VERSION = 2
META_KEY = b"anonset"
CSV_META_SUFFIX = ".anonset.json"
_CSV_RESERVED = set("{}|")
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "'")
#: text a spreadsheet reads as a number or a lone sign, never as a formula
_INERT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]")


# ================================================================ CSV cells
def csv_escape(values: np.ndarray) -> np.ndarray:
    """Text cells a spreadsheet would run as a formula, neutralised: a
    leading ``'`` before ``= + - @ \\t \\r`` (and before a leading ``'``, so
    that :func:`csv_unescape` is exact).  A number written as text (``-5``,
    ``+1.5e3``) or a lone sign (``-``, the audit's "no attribute") is no
    formula and is left as it is."""
    out = np.array(values, dtype=object, copy=True)
    for i, v in enumerate(out):
        if isinstance(v, str) and v.startswith(_FORMULA) and not _INERT.fullmatch(v):
            out[i] = "'" + v
    return out


def csv_unescape(values: np.ndarray) -> np.ndarray:
    out = np.array(values, dtype=object, copy=True)
    for i, v in enumerate(out):
        if isinstance(v, str) and v.startswith("'"):
            out[i] = v[1:]
    return out


def refuse_nested(col: pd.Series, name, *, file=None) -> None:
    """A CSV cell holds text: a column of lists, arrays, dicts or bytes (a
    nested or binary Parquet column passed through) would be written as
    Python's repr of each (numpy elides a long array's middle as '...'),
    and read back as that text; refused, naming the Parquet output that
    keeps them.  One C pass over the column (``infer_dtype``), the cells
    looked at only where it finds mixed kinds."""
    from ..validate import first_nested
    found = first_nested(col, binary=True)
    if found is None:
        return
    bad, shown = found
    raise InputError(f"holds {'bytes' if isinstance(bad, (bytes, bytearray)) else 'nested values'}"
                     f" (e.g. {shown}), which a CSV file cannot hold as they are",
                     column=str(name), file=file,
                     expected="a Parquet output (-o OUT.parquet), which keeps them, or the "
                              "column dropped")


def arrow_column(col: pd.Series, name, *, file=None):
    """``col`` as an Arrow array, or one line naming the column where Arrow
    cannot store its cells as pandas holds them (an Arrow map, which pandas
    reads as a list of (key, value) pairs, is not written back)."""
    import pyarrow as pa
    try:
        return pa.array(col, from_pandas=True)
    except OverflowError:
        # whole numbers beyond int64 beside a negative one (H131)
        raise InputError("holds whole numbers that no Parquet integer type holds together "
                         "(beyond 2^63 - 1 beside negative ones)", column=str(name), file=file,
                         expected="the column converted first (e.g. to text: .astype(str)) "
                                  "or dropped") from None
    except (pa.ArrowTypeError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        from ..validate import cell_text
        cells = [v for v in col if not (v is None or (isinstance(v, float) and v != v))]
        kinds = {("number" if isinstance(v, (int, float, np.number)) and
                  not isinstance(v, (bool, np.bool_)) else "str" if isinstance(v, str)
                  else type(v).__name__) for v in cells}        # (np.str_ too, H130)
        if len(kinds) > 1 and kinds <= {"number", "str", "bool", "bool_"}:
            # text and numbers in one column: say so, not 'e.g. blue' (H125)
            raise InputError(f"mixes value types {sorted(kinds)}, which a Parquet column "
                             "cannot hold together", column=str(name), file=file,
                             expected="the column converted first (e.g. to text: "
                                      ".astype(str)) or dropped") from None
        first = cells[0] if cells else None
        raise InputError(f"holds values Parquet cannot store as they are read (e.g. "
                         f"{cell_text(first)}; an Arrow map is read "
                         "as a list of (key, value) pairs)", column=str(name), file=file,
                         expected="the column converted first (e.g. to JSON text) or dropped") \
            from None


def unwritable_column(t, *, file=None) -> None:
    """Refuse, by name, a column of Arrow table ``t`` that Parquet cannot
    write (a Categorical of tuples or of intervals: a dictionary of nested
    or extension values), before the output is opened: each column's first
    row is written to memory."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq
    for i, f in enumerate(t.schema):
        if not (pa.types.is_dictionary(f.type) or isinstance(f.type, pa.ExtensionType)):
            continue
        try:
            pq.write_table(t.select([i]).slice(0, 1), io.BytesIO())
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            raise InputError(f"is of a type Parquet cannot store ({f.type})", column=f.name,
                             file=file, expected="the column converted first (e.g. to text: "
                                                 ".astype(str)) or dropped") from None


def frame_to_arrow(frame: pd.DataFrame, *, file=None):
    """``frame`` as an Arrow table (no index), naming the column Arrow
    cannot store (:func:`arrow_column`)."""
    import pyarrow as pa
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowTypeError, pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        for c in frame.columns:
            arrow_column(frame[c], c, file=file)
        raise


def csv_safe_frame(frame: pd.DataFrame, *, file=None) -> pd.DataFrame:
    """``frame`` with every text cell and header that a spreadsheet would run
    neutralised by :func:`csv_escape`: what every CSV file anonset writes
    besides a set table (partition releases, cross-tabulations, audit
    reports) goes through this, whatever its columns hold.  Numeric
    columns are left as they are (a spreadsheet reads ``-5`` as a number).

    Examples
    --------
    >>> csv_safe_frame(pd.DataFrame({"=x": ["=1+1", "a"], "n": [-1, 2]})).to_dict("list")
    {"'=x": ["'=1+1", 'a'], 'n': [-1, 2]}
    """
    out = frame.copy(deep=False)
    for i in range(frame.shape[1]):
        col = frame.iloc[:, i]
        refuse_nested(col, frame.columns[i], file=file)
        if col.dtype == object or isinstance(col.dtype, (pd.StringDtype, pd.CategoricalDtype)):
            vals = col.astype(object).to_numpy()
            esc = csv_escape(vals)
            if any(a is not b for a, b in zip(vals, esc)):
                out.isetitem(i, pd.Series(esc, index=frame.index, dtype=object))
    out.columns = [_escape_header(c) if isinstance(c, str) else c for c in frame.columns]
    return out


def _escape_header(name: str) -> str:
    return "'" + name if name.startswith(_FORMULA) and not _INERT.fullmatch(name) else name


def _unescape_header(name: str) -> str:
    return name[1:] if name.startswith("'") else name


# ================================================================ metadata
def metadata(schema, params, model, n_rows, info) -> dict:
    """The metadata of a published table (also :meth:`SetTable.metadata`)."""
    return {"format": "anonset.SetTable", "version": FORMAT_VERSION,
            "schema": schema.to_dict(), "params": {k: v.to_dict() for k, v in params.items()},
            "model": dict(model or {}), "n_rows": int(n_rows), "info": dict(info or {})}


class TableHeader:
    """What reconstruction and the audit need of a published table besides
    its sets: schema, parameters, model, row count and how it was published."""

    def __init__(self, schema, params, model, n_rows, info=None, path=None):
        self.schema, self.params, self.model = schema, dict(params), dict(model or {})
        self.n_rows, self.info, self.path = int(n_rows), dict(info or {}), path

    @property
    def names(self):
        return [a.name for a in self.schema.published]

    def metadata(self) -> dict:
        return metadata(self.schema, self.params, self.model, self.n_rows, self.info)


def _bad(path, field, what, expected=None):
    return InputError(f"metadata field {field!r} {what}", file=path, expected=expected)


def _shown(v) -> str:
    """A metadata value as an error names it: a scalar as it is, else its type."""
    if v is None:
        return "null"
    if isinstance(v, (str, int, float, bool)):
        text = repr(v)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"a {type(v).__name__}"


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_names(value, path, field, *, what="a list of column names") -> None:
    """A metadata field that lists column names (absent or null: none)."""
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(path, field, f"is {_shown(value)}", what)


def check_mapping(value, path, field, test, what) -> None:
    """A metadata field that maps column names to values ``test`` accepts
    (absent or null: none)."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise _bad(path, field, f"is {_shown(value)}", f"a mapping of column names to {what}")
    for k, v in value.items():
        if not test(v):
            raise _bad(path, f"{field}.{k}", f"is {_shown(v)}", what)


#: What a recorded finding of each check names besides its column.
_FINDING_NEEDS = {"recode": ("sensitive", "value"), "set_recode": ("sensitive", "value"),
                  "given_away": ("sensitive", "value"), "qi_recode": ("qi", "value"),
                  "order_recode": ("value",)}


def check_findings(found, path, field) -> None:
    """The pass-through findings recorded at publishing
    (``pass_through_risks``): a list of mappings, each naming its check and
    column, and the numbers and columns its check's message reads."""
    if found is None:
        return
    if not isinstance(found, list):
        raise _bad(path, field, f"is {_shown(found)}", "a list of findings (mappings)")
    for i, f in enumerate(found):
        at = f"{field}[{i}]"
        if not isinstance(f, dict):
            raise _bad(path, at, f"is {_shown(f)}", "a mapping (a finding)")
        for key in ("check", "column", *_FINDING_NEEDS.get(f.get("check"), ())):
            if key not in f:
                raise _bad(path, f"{at}.{key}", "is missing", f"the {key} of the finding")
        for key in ("check", "column"):
            if not isinstance(f[key], str):
                raise _bad(path, f"{at}.{key}", f"is {_shown(f[key])}", "a text")
        for key in ("sensitive", "qi", "with"):
            v = f.get(key)
            if v is not None and not (isinstance(v, str) or isinstance(v, list) and
                                      all(isinstance(x, str) for x in v)):
                raise _bad(path, f"{at}.{key}", f"is {_shown(v)}",
                           "a column name, or a list of them")
        v = f.get("value")
        if v is not None and not (_is_number(v) or isinstance(v, list) and
                                  all(_is_number(x) for x in v)):
            raise _bad(path, f"{at}.value", f"is {_shown(v)}", "a number, or a list of them")


def check_metadata(meta, path=None) -> TableHeader:
    """A TableHeader from published metadata, every field checked."""
    from ..randomized.params import AttributeParams
    if isinstance(meta, dict) and str(meta.get("paper")) in ("002", "003"):
        what = "lgb" if str(meta.get("paper")) == "002" else "msa-anonymize"
        raise InputError(f"is a partition release ({what}, paper {meta['paper']}), not a table "
                         "of published sets", file=path,
                         expected="a table written by anonset anonymize (or by "
                                  "semantic-anonymize, which semantic-analyze reads); `anonset "
                                  "audit` and `anonset report` read partition releases")
    if not isinstance(meta, dict) or meta.get("format") != "anonset.SetTable":
        raise InputError("is not a published anonset table (no anonset metadata)", file=path)
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bad(path, "version", f"is {version!r}", "a format version number")
    if version > FORMAT_VERSION:
        raise _bad(path, "version", f"is {version}, newer than this anonset understands "
                   f"({FORMAT_VERSION})", "a file written by this or an older anonset: upgrade")
    try:
        schema = Schema.from_dict(meta["schema"])
    except (KeyError, TypeError, ValueError) as e:
        raise _bad(path, "schema", f"is not a valid schema ({e})") from None
    n = meta.get("n_rows")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise _bad(path, "n_rows", f"is {n!r}", "a row count >= 0")
    raw = meta.get("params")
    if not isinstance(raw, dict):
        raise _bad(path, "params", "is missing")
    names = [a.name for a in schema.published]
    if sorted(raw) != sorted(names):
        raise _bad(path, "params", f"covers {sorted(raw)}",
                   f"one entry per published attribute {names}")
    params = {}
    for a in schema.published:
        field = f"params.{a.name}"
        entry = raw[a.name]
        if not isinstance(entry, dict):
            raise _bad(path, field, f"is {type(entry).__name__}", "a mapping")
        # numbers as JSON numbers: '0.5' as text or an eta of 2.5 were read
        # as 0.5 and 2 (H47), and an error then blamed the sets
        for key, kinds, words in (("p", (int, float), "a number"), ("eta", (int,), "an integer"),
                                  ("d", (int,), "an integer")):
            v = entry.get(key)
            if key in entry and (not isinstance(v, kinds) or isinstance(v, bool)):
                raise _bad(path, f"{field}.{key}", f"is {v!r}", words)
        try:
            par = AttributeParams.from_dict(entry)
        except (KeyError, TypeError, ValueError) as e:
            raise _bad(path, field, f"is not valid ({e})") from None
        if not (isinstance(par.p, float) and math.isfinite(par.p) and 0.0 <= par.p <= 1.0):
            raise _bad(path, field + ".p", f"is {par.p!r}", "a number in [0, 1]")
        if par.d != a.d:
            raise _bad(path, field + ".d", f"is {par.d} but the domain has {a.d} values",
                       "the domain size")
        if not (1 <= par.eta <= a.d):
            raise _bad(path, field + ".eta", f"is {par.eta}", f"1 <= eta <= d = {a.d}")
        if (a.role == "exact") != par.exact or (par.exact and (par.eta != 1 or par.p != 1.0)):
            raise _bad(path, field + ".exact", "does not match the attribute's role",
                       "exact attributes with p = 1, eta = 1")
        params[a.name] = par
    info = meta.get("info", {})
    if not isinstance(info, dict):
        raise _bad(path, "info", f"is {type(info).__name__}", "a mapping")
    # the fields the audit reads (H121: a list of roles was a traceback)
    check_mapping(info.get("roles"), path, "info.roles", lambda v: isinstance(v, str),
                  "a role (text)")
    check_names(info.get("clear"), path, "info.clear")
    check_findings(info.get("pass_through_risks"), path, "info.pass_through_risks")
    model = meta.get("model")
    if model is not None and not isinstance(model, dict):
        raise _bad(path, "model", f"is {model!r}" if isinstance(model, (int, float, str))
                   else f"is {type(model).__name__}", "a mapping (the privacy model)")
    return TableHeader(schema, params, model, n, info, path)


def read_metadata(path, fmt=None) -> dict:
    """The checked metadata of a published Parquet or CSV file (no rows read)."""
    from .tables import check_input_file, file_format
    path = check_input_file(path)
    fmt = file_format(path, fmt)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            raw = (pq.ParquetFile(str(path)).schema_arrow.metadata or {}).get(META_KEY)
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"is not a readable Parquet file ({e})", file=path) from None
        if raw is None:
            raise InputError("has no anonset metadata: not a published table", file=path)
        text, where = raw.decode("utf-8", "replace"), path
    else:
        mp = Path(str(path) + CSV_META_SUFFIX)
        if not mp.is_file():
            raise InputError("is missing: a published CSV needs its metadata file", file=mp,
                             expected="the .anonset.json that anonset wrote beside the CSV")
        text, where = mp.read_text(encoding="utf-8", errors="replace"), mp
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"holds metadata that is not valid JSON ({e})", file=where) from None
    check_metadata(meta, where)
    return meta


# =================================================================== sinks
def _domain_array(attr):
    """The domain as an Arrow array (as text where its values mix types, e.g.
    numbers and a missing-value token)."""
    import pyarrow as pa
    try:
        return pa.array(list(attr.domain))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([str(v) for v in attr.domain])


#: How a Parquet file stores the sets of sensitive attributes.
SET_ENCODINGS = ("masks", "lists")


def mask_type(d: int):
    """The Arrow type of a set over d values stored as a bitmask: the narrowest
    unsigned integer that holds d bits (bit v = value v), or a fixed-size list
    of uint64 words beyond 64 values."""
    import pyarrow as pa
    for bits, t in ((8, pa.uint8()), (16, pa.uint16()), (32, pa.uint32()), (64, pa.uint64())):
        if d <= bits:
            return t
    return pa.list_(pa.uint64(), (d + 63) // 64)


def _mask_array(masks: np.ndarray, d: int):
    import pyarrow as pa
    t = mask_type(d)
    if pa.types.is_integer(t):
        return pa.array(masks[:, 0].astype(t.to_pandas_dtype()), type=t)
    flat = pa.array(np.ascontiguousarray(masks).ravel())
    return pa.FixedSizeListArray.from_arrays(flat, masks.shape[1])


def settable_to_arrow(table, n_threads=None, sets: str = "masks"):
    """The Arrow columns of a published block (no metadata).

    ``sets='masks'`` (the default of Parquet files) stores each set as its
    bitmask in the narrowest unsigned integer (the domain is in the
    metadata): 8-16 times smaller and faster to write and read than
    ``'lists'``, one list of values per set, which any Parquet reader shows as
    the values themselves.  anonset reads both; exact attributes and
    pass-through columns are plain values either way."""
    import pyarrow as pa
    from ..randomized import _kernels
    if sets not in SET_ENCODINGS:
        raise InputError(f"got {sets!r}", param="sets", expected="masks or lists")
    arrays, names = [], []
    nt = 0 if n_threads is None else int(n_threads)
    for a in table.schema:
        if a.name in table.params:
            eta = table.params[a.name].eta
            if sets == "masks" and not table.params[a.name].exact:
                arrays.append(_mask_array(np.asarray(table.mask(a.name)), a.d))
                names.append(a.name)
                continue
            mem = _kernels.members(table.mask(a.name), a.d, eta, n_threads=nt)
            vals = _domain_array(a).take(pa.array(mem.ravel()))
            if table.params[a.name].exact:
                arrays.append(vals)
            else:
                offsets = pa.array(np.arange(0, table.n_rows * eta + 1, eta, dtype=np.int32))
                arrays.append(pa.ListArray.from_arrays(offsets, vals))
        elif a.name in table.other.columns:
            arrays.append(arrow_column(table.other[a.name], a.name))
        else:
            continue
        names.append(a.name)
    return pa.Table.from_arrays(arrays, names=names)


class ParquetSink:
    """Blocks to one Parquet file: a row group per block; later blocks are
    cast to the first block's schema."""

    #: Rows held back while a column has been missing in every block so far
    #: (its Arrow type is null): the file takes its type from the first
    #: block that holds one (H131: a Dask partition of missing cells came
    #: first, and a column of numbers was written as text, or refused).
    PENDING_ROWS = 1 << 20

    def __init__(self, tmp, meta, sets: str = "masks", final=None):
        self.tmp, self.meta, self.sets = tmp, meta, sets
        self.final = final              # the name errors give (not the temporary one)
        self.writer = None
        self.schema = None
        self.pending = []
        self.inferred = set()

    def write(self, table):
        try:
            t = settable_to_arrow(table, sets=self.sets)
        except InputError as e:
            raise e.in_file(self.final) from None
        if self.writer is None:
            other = getattr(table, "other", None)
            if other is not None:       # (Python objects: a type Arrow infers per block)
                self.inferred |= {str(c) for c in other.columns if other[c].dtype == object}
            self.pending.append(t)
            if any(_is_null(f.type) for f in self._typed_schema()) and \
                    sum(x.num_rows for x in self.pending) < self.PENDING_ROWS:
                return
            self._open()
            return
        self._write(t)

    def _typed_schema(self):
        """The pending blocks' schema, each column typed as the first
        pending block that holds a value of it."""
        import pyarrow as pa
        first = self.pending[0].schema
        return pa.schema([next((x.schema.field(i) for x in self.pending
                                if not _is_null(x.schema.field(i).type)), f)
                          for i, f in enumerate(first)])

    def _open(self):
        import pyarrow.parquet as pq
        for x in self.pending:
            unwritable_column(x, file=self.final)
        typed = _widest_decimals(self._typed_schema(), self.inferred)
        self.schema = typed.with_metadata({META_KEY: json.dumps(self.meta).encode()})
        self.writer = pq.ParquetWriter(str(self.tmp), self.schema)
        pending, self.pending = self.pending, []
        for x in pending:
            self._write(x)

    def _write(self, t):
        import pyarrow as pa
        t = t.replace_schema_metadata(self.schema.metadata)
        if t.schema != self.schema:
            # a block is cast to the file's types only where no value can
            # change: missing cells typed, text as other text; bools then
            # numbers, or numbers then text, were cast silently on Dask
            # (H132: 2 became True), where memory refuses the column
            for f, g in zip(t.schema, self.schema):
                if not _castable(f.type, g.type):
                    held = ("missing in every row of the first blocks written "
                            f"({self.PENDING_ROWS:,} rows or more), then of type {f.type}"
                            if _is_null(g.type) else f"of type {g.type} in one block and "
                            f"{f.type} in another")
                    raise InputError(f"is {held}", column=f.name, file=self.final,
                                     expected="one type per column (convert it first, e.g. "
                                              "to text: .astype(str))")
            try:
                t = t.cast(self.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise InputError(f"a pass-through column changed type between blocks ({e})",
                                 file=self.final, expected="one type per column") from None
        self.writer.write_table(t, row_group_size=max(1, t.num_rows))

    def close(self, meta_tmp=None):
        if self.writer is None and self.pending:
            self._open()
        if self.writer is not None:
            self.writer.close()


def _is_null(t) -> bool:
    import pyarrow as pa
    return pa.types.is_null(t)


def _texts(t) -> bool:
    import pyarrow as pa
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _castable(block, file) -> bool:
    """Whether a block's column of type ``block`` is cast to the file's
    ``file`` with no value changed: the same type, missing cells, text as
    other text, whole numbers as numbers (not a float as an integer; Arrow's
    safe cast refuses an overflow), dates and times as dates and times, and
    nested values by Arrow's safe cast (a list whose items a block holds
    as missing alone: H133); never booleans as numbers, or numbers as
    text or back (H132)."""
    import pyarrow as pa
    T = pa.types
    if block == file or _is_null(block) or (_texts(block) and _texts(file)):
        return True
    if T.is_floating(file) and (T.is_integer(block) or T.is_floating(block)):
        return True
    if (T.is_integer(file) and T.is_integer(block)) or \
            (T.is_decimal(file) and (T.is_decimal(block) or T.is_integer(block))):
        return True                     # (a fraction in an int64 file is refused: H132)
    for kind in ((T.is_timestamp,), (T.is_date,), (T.is_duration,), (T.is_time,)):
        if any(k(block) for k in kind) and any(k(file) for k in kind):
            return True
    nested = (T.is_list, T.is_large_list, T.is_fixed_size_list, T.is_struct, T.is_map)
    return any(k(block) for k in nested) and any(k(file) for k in nested)


def _widest_decimals(schema, inferred):
    """Decimal columns as wide as Arrow's 128-bit decimal holds, at their
    scale: each block holds Python Decimals, whose type Arrow infers from
    that block's values alone (decimal128(3, 2) for 1.50, (4, 2) for 12.50
    later: a streamed release was refused, H133); in memory alike.  A
    column of a declared Arrow type (``inferred`` names the others) keeps
    it."""
    import pyarrow as pa
    return pa.schema([f.with_type(pa.decimal128(38, f.type.scale))
                      if pa.types.is_decimal128(f.type) and f.name in inferred else f
                      for f in schema],
                     metadata=schema.metadata)


class CsvSink:
    """Blocks to one CSV of ``{a|b|c}`` cells; the metadata goes beside it."""

    def __init__(self, tmp, schema, meta, final):
        import contextlib

        from .tables import check_csv_output, csv_output
        self.meta = meta
        self.final = final
        check_csv_output(final)
        self._files = contextlib.ExitStack()
        self.f = self._files.enter_context(csv_output(tmp, final))
        self.header = True
        self.dtypes = None
        self.arrow_types: dict = {}
        self.labels = {}
        for a in schema.published:
            labels = np.array([str(v) for v in a.domain], dtype=object)
            bad = [v for v in labels if _CSV_RESERVED & set(v)]
            if bad:
                self._files.close()
                raise InputError(f"has the value {bad[0]!r}, which holds one of '{{', '|', '}}' "
                                 "that the CSV set notation reserves", column=a.name,
                                 param="output", file=final,
                                 expected="Parquet output for such values")
            # a set cell starts with '{'; a plain (exact) value may need escaping
            self.labels[a.name] = csv_escape(labels) if a.role == "exact" else labels

    def write(self, table):
        frame = pd.DataFrame()
        for a in table.schema:
            if a.name in table.params:
                mem = self.labels[a.name][table.members(a.name)]
                if table.params[a.name].exact:
                    frame[_escape_header(a.name)] = mem[:, 0]
                else:
                    frame[_escape_header(a.name)] = ["{" + "|".join(r) + "}"
                                                     for r in mem.tolist()]
            elif a.name in table.other.columns:
                col = table.other[a.name]
                refuse_nested(col, a.name, file=self.final)
                if self.dtypes is None:
                    refuse_unreadable_dtype(col, a.name, file=self.final)
                if pd.api.types.is_numeric_dtype(col.dtype) and \
                        not isinstance(col.dtype, pd.ArrowDtype):
                    # as held: a nullable integer's values are written as
                    # integers (to_numpy would make floats of them, losing
                    # every digit beyond 2**53)
                    frame[_escape_header(a.name)] = col.array
                else:
                    frame[_escape_header(a.name)] = csv_escape(col.to_numpy(dtype=object))
        if self.dtypes is None:
            self.dtypes = {c: str(table.other[c].dtype) for c in table.other.columns}
            self.arrow_types = {c: arrow_type_text(table.other[c])
                                for c in table.other.columns
                                if isinstance(table.other[c].dtype, pd.ArrowDtype)}
        frame.to_csv(self.f, index=False, header=self.header)
        self.header = False

    def close(self, meta_tmp=None):
        self._files.close()
        if meta_tmp is not None:
            meta = dict(self.meta)
            meta["csv_dtypes"] = self.dtypes or {}
            if self.arrow_types:
                meta["csv_arrow_types"] = self.arrow_types
            meta["csv_escape"] = "owasp-quote"
            Path(meta_tmp).write_text(json.dumps(meta, indent=1), encoding="utf-8")


def _sensitive_names(meta: dict) -> list:
    return [a.get("name") for a in (meta.get("schema") or {}).get("attributes", ())
            if isinstance(a, dict) and a.get("role") == "sensitive"]


def _drawn_as(meta: dict, name: str) -> tuple:
    """What a sensitive column's sets are drawn from besides the key: its
    (p, eta, d) and its domain in order."""
    par = (meta.get("params") or {}).get(name) or {}
    dom = next((a.get("domain") for a in (meta.get("schema") or {}).get("attributes", ())
                if isinstance(a, dict) and a.get("name") == name), None)
    return par.get("p"), par.get("eta"), par.get("d"), repr(dom)


def warn_replaced_release(path, fmt, meta: dict) -> None:
    """Warn (:class:`~anonset.RepeatedReleaseWarning`) when ``path`` holds a
    release of some of the same sensitive columns under another key: if it
    was shared, the release that replaces it can be intersected with it.
    Not when both are under one persistent key with the same parameters
    and domains (the same sets; with others, the sets are redrawn and it
    warns), nor when both were drawn from seeds (a seed reproduces its
    release; which seed was used is not recorded)."""
    import warnings
    path = Path(path)
    try:
        if not path.is_file():       # (a name too long is refused by the writer, by name)
            return
        old = read_metadata(path, fmt)
    except (InputError, OSError, ValueError):
        return                               # not a release: nothing to intersect
    new_info, old_info = meta.get("info") or {}, old.get("info") or {}
    shared = [n for n in _sensitive_names(meta) if n in set(_sensitive_names(old))]
    if not shared:
        return
    keys = (old_info.get("key"), new_info.get("key"))
    redrawn = []
    if keys == ("persistent", "persistent") and \
            old_info.get("key_check") == new_info.get("key_check"):
        # one persistent key keeps a record's sets only under the same
        # parameters and domain (--params-from): another l redraws them
        redrawn = [n for n in shared if _drawn_as(old, n) != _drawn_as(meta, n)]
        if not redrawn:
            return
    elif "os" not in keys and "persistent" not in keys:
        return
    from ..schema import RepeatedReleaseWarning, _outside_stacklevel
    if redrawn:
        warnings.warn(
            f"{str(path)!r} held a release of {int(old.get('n_rows') or 0):,} records under "
            f"this persistent key, but with other parameters or another domain for "
            f"{', '.join(redrawn)}, whose sets are drawn anew; it is replaced.  If it was "
            "shared, the two can be intersected (docs/security.md, repeated releases): publish "
            "a later release of a series with the first one's parameters (params=; "
            "--params-from)", RepeatedReleaseWarning, stacklevel=_outside_stacklevel())
        return
    how = "a fresh key" if keys[0] == "os" else "another key"
    warnings.warn(
        f"{str(path)!r} held a release of {int(old.get('n_rows') or 0):,} records with the "
        f"sensitive column(s) {', '.join(shared)} under {how}; it is replaced.  If it was "
        "shared, the two can be intersected (a person's true value is in both of their sets; "
        "docs/security.md, repeated releases): for releases of the same people use one key "
        "file and a record id in every release (key_file=, record_id=; --key-file, "
        "--record-id)", RepeatedReleaseWarning, stacklevel=_outside_stacklevel())


def check_named_as(path, fmt: str) -> None:
    """A release is not written under a name of the other format (Parquet
    bytes under ``out.csv``, which every CSV reader, anonset's too, then
    fails on)."""
    from .tables import CSV_SUFFIXES, PARQUET_SUFFIXES
    name = str(path).lower()
    named, suffixes = ("CSV", CSV_SUFFIXES) if fmt == "parquet" else ("Parquet", PARQUET_SUFFIXES)
    if name.endswith(suffixes):
        written = "Parquet" if fmt == "parquet" else "CSV"
        raise InputError(f"is named as {named}, but is written as {written}", param="output",
                         file=path, expected=f"the two to agree (a name that says {written}, "
                                             f"or {named} written to it)")


@contextlib.contextmanager
def open_sink(path, fmt, schema, meta, *, protect=(), sets: str = "masks", outputs=None):
    """A sink that writes a published table to ``path`` (and its metadata
    file, for CSV) as one atomic unit; ``sets`` is the Parquet encoding of the
    sets (see :func:`settable_to_arrow`).  A release it replaces there under
    another key is warned of (:func:`warn_replaced_release`).  ``outputs``:
    a release of more files it belongs to (:class:`~anonset.io.atomic.Outputs`),
    which moves them into place together."""
    path = Path(path)
    if sets not in SET_ENCODINGS:
        raise InputError(f"got {sets!r}", param="sets", expected="masks or lists")
    check_named_as(path, fmt)
    warn_replaced_release(path, fmt, meta)
    targets = [path] + ([Path(str(path) + CSV_META_SUFFIX)] if fmt == "csv" else [])
    with atomic_paths(*targets, protect=protect, outputs=outputs) as tmps:
        tmps = tmps if isinstance(tmps, list) else [tmps]
        sink = ParquetSink(tmps[0], meta, sets, path) if fmt == "parquet" else \
            CsvSink(tmps[0], schema, meta, path)
        ok = False
        try:
            yield sink
            ok = True
        finally:
            if not ok and isinstance(sink, ParquetSink):
                sink.pending = []       # (a failed release writes nothing more)
            sink.close(tmps[1] if (fmt == "csv" and ok) else None)
        if fmt == "parquet" and sink.writer is None:
            raise InputError("has no rows to write", param="output", file=path,
                             expected="at least one published row")


def write_settable(table, path, fmt, *, protect=(), sets: str = "masks", outputs=None) -> None:
    """Write a whole SetTable (one block; ``outputs``: as :func:`open_sink`)."""
    from ..validate import check_path
    check_path(path, "path")
    with open_sink(path, fmt, table.schema, table.metadata(), protect=protect,
                   sets=sets, outputs=outputs) as sink:
        sink.write(table)


# ================================================================= reading
def masks_from_codes(codes, offsets, d):
    """Bitmasks (n, words) from flattened member codes and list offsets."""
    n = len(offsets) - 1
    words = (d + 63) // 64
    out = np.zeros((n, words), dtype=np.uint64)
    rows = np.repeat(np.arange(n), np.diff(offsets))
    codes = np.asarray(codes, dtype=np.int64)
    bits = np.left_shift(np.uint64(1), (codes & 63).astype(np.uint64))
    np.bitwise_or.at(out, (rows, codes >> 6), bits)
    return out


def popcount(masks):
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    if m.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    m = m.reshape(m.shape[0], -1)
    if hasattr(np, "bitwise_count"):        # NumPy >= 2.0: no 64 bytes a word
        return np.bitwise_count(m).sum(axis=1, dtype=np.int64)
    return np.unpackbits(m.view(np.uint8).reshape(m.shape[0], -1), axis=1).sum(axis=1)


def _column_masks(col, attr, eta, where, row0=0):
    """Bitmasks of one published column block (Arrow list or value column),
    every set checked: exactly eta distinct members inside the domain;
    ``row0``: the block's first row in the file (a bad set is named by its
    row in the file, whatever the block size)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    n = len(col)
    if col.null_count:
        raise InputError(f"holds an empty cell in column {attr.name!r}", file=where,
                         expected=f"a set of {eta} values in every row")
    if pa.types.is_unsigned_integer(col.type) or pa.types.is_fixed_size_list(col.type):
        return _check_masks(_masks_of_column(col, attr, where), attr, eta, where, row0)
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
        flat = pc.list_flatten(col)
    else:
        lengths = np.ones(n, dtype=np.int64)
        flat = col
    dom = _domain_array(attr)
    if flat.type != dom.type:
        try:
            flat = flat.cast(dom.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            flat = pa.array([None if v is None else str(v) for v in flat.to_pylist()])
            dom = pa.array([str(v) for v in attr.domain])
    idx = pc.index_in(flat, value_set=dom)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if idx.null_count:
        at = int(np.flatnonzero(pc.is_null(idx).to_numpy(zero_copy_only=False))[0])
        i = int(np.searchsorted(offsets, at, side="right")) - 1        # its row in the block
        bad = flat[at].as_py()
        raise InputError(f"column {attr.name!r} holds {bad!r}, which is not in its published "
                         f"domain (data row {row0 + i + 1:,})", file=where, row=row0 + i,
                         expected="values of the domain in the metadata")
    codes = idx.to_numpy(zero_copy_only=False)
    masks = masks_from_codes(codes, offsets, attr.d)
    sizes = popcount(masks)
    wrong = np.flatnonzero((lengths != eta) | (sizes != eta))
    if len(wrong):
        i = int(wrong[0])
        what = "an empty set" if lengths[i] == 0 else \
            "a set with a repeated member" if sizes[i] < lengths[i] else \
            f"a set of {int(lengths[i])} values"
        raise InputError(f"column {attr.name!r} holds {what} (data row {row0 + i + 1:,})",
                         file=where, row=row0 + i,
                         expected=f"sets of exactly eta = {eta} distinct values, as the "
                                  "metadata says")
    return masks


def _masks_of_column(col, attr, where) -> np.ndarray:
    """(n, words) uint64 bitmasks of a mask-encoded column."""
    import pyarrow as pa
    words = (attr.d + 63) // 64
    if pa.types.is_fixed_size_list(col.type):
        if col.type.list_size != words:
            raise InputError(f"column {attr.name!r} holds masks of {col.type.list_size} words",
                             file=where, expected=f"{words} words for {attr.d} values")
        flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.uint64)
        return flat.reshape(len(col), words)
    if words != 1:
        raise InputError(f"column {attr.name!r} holds one-word masks", file=where,
                         expected=f"{words} words for {attr.d} values")
    return col.to_numpy(zero_copy_only=False).astype(np.uint64).reshape(-1, 1)


def _check_masks(masks, attr, eta, where, row0=0) -> np.ndarray:
    """Every mask: no bit at or above d, exactly eta bits."""
    rem = attr.d & 63
    if rem and len(masks) and (masks[:, -1] >> np.uint64(rem)).any():
        i = int(np.flatnonzero(masks[:, -1] >> np.uint64(rem))[0])
        raise InputError(f"column {attr.name!r} holds a set with a value outside its domain "
                         f"(data row {row0 + i + 1:,})", file=where, row=row0 + i,
                         expected=f"sets of values of the {attr.d}-value domain")
    sizes = popcount(masks)
    wrong = np.flatnonzero(sizes != eta)
    if len(wrong):
        i = int(wrong[0])
        what = "an empty set" if sizes[i] == 0 else f"a set of {int(sizes[i])} values"
        raise InputError(f"column {attr.name!r} holds {what} (data row {row0 + i + 1:,})",
                         file=where, row=row0 + i,
                         expected=f"sets of exactly eta = {eta} distinct values, as the "
                                  "metadata says")
    return np.ascontiguousarray(masks)


def _csv_column(series, attr, escaped):
    """One CSV column block of {a|b|c} cells (or plain values) as an Arrow
    list column of text."""
    import pyarrow as pa
    import pyarrow.compute as pc
    vals = series.to_numpy(dtype=object)
    if escaped and attr.role == "exact":
        vals = csv_unescape(vals)
    s = pa.array(vals, type=pa.string())
    braced = pc.and_(pc.starts_with(s, "{"), pc.ends_with(s, "}"))
    inner = pc.if_else(braced, pc.utf8_slice_codeunits(s, 1, -1), s)
    lists = pc.split_pattern(inner, "|")
    empty = pc.equal(inner, "")
    lengths = pc.if_else(empty, 0, pc.list_value_length(lists)).to_numpy(zero_copy_only=False)
    values = pc.list_flatten(pc.if_else(empty, pa.scalar([], type=lists.type), lists))
    offsets = np.zeros(len(vals) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


class _TextAttr:
    """An attribute seen through its text labels (CSV cells are text)."""

    def __init__(self, attr):
        self.name, self.d, self.role = attr.name, attr.d, attr.role
        self.domain = tuple(str(v) for v in attr.domain)


def _blocks(path, fmt, columns, chunk_rows, meta):
    """(row0, {column: block column}) of a published file."""
    from .tables import iter_blocks
    if fmt == "parquet":
        for row0, frame in _parquet_blocks(path, columns, chunk_rows):
            yield row0, frame
        return
    header_map = None
    for row0, frame in iter_blocks(path, "csv", chunk_rows=chunk_rows):
        if header_map is None:
            header_map = {_unescape_header(c) if meta.get("csv_escape") else c: c
                          for c in frame.columns}
            for c in columns:
                if c not in header_map:
                    raise InputError(f"lacks the column {c!r} of its metadata", file=path)
        yield row0, {c: frame[header_map[c]] for c in columns}


def _parquet_blocks(path, columns, chunk_rows):
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        f = pq.ParquetFile(str(path))
        names = f.schema_arrow.names
        for c in columns:
            if c not in names:
                raise InputError(f"lacks the column {c!r} of its metadata", file=path)
        row0 = 0
        for batch in f.iter_batches(batch_size=chunk_rows, columns=list(columns)):
            yield row0, {c: batch.column(c) for c in columns}
            row0 += batch.num_rows
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"could not be read ({e})", file=path) from None


def iter_masks(path, attributes, *, chunk_rows=1 << 18, fmt=None, meta=None):
    """Checked bitmasks of the chosen attributes, block by block:
    ``(row0, [mask of each attribute])``.  The last block is followed by a
    check that the file holds as many rows as its metadata says."""
    from .tables import file_format
    path = Path(path)
    fmt = file_format(path, fmt)
    meta = meta or read_metadata(path, fmt)
    header = check_metadata(meta, path)
    attrs = [header.schema[a] for a in attributes]
    escaped = bool(meta.get("csv_escape"))
    rows = 0
    for row0, cols in _blocks(path, fmt, [a.name for a in attrs], chunk_rows, meta):
        where = path
        masks = []
        for a in attrs:
            eta = header.params[a.name].eta
            col = cols[a.name]
            if fmt == "csv":
                masks.append(_column_masks(_csv_column(col, a, escaped), _TextAttr(a), eta,
                                           where, row0))
            else:
                masks.append(_column_masks(col, a, eta, where, row0))
        rows += len(masks[0]) if masks else 0
        yield row0, masks
    if rows != header.n_rows:
        raise InputError(f"holds {rows:,} rows but its metadata says {header.n_rows:,}",
                         file=path, expected="the complete file (it may be truncated or "
                                             "its metadata edited)")


def read_settable(path, fmt=None):
    """A whole published table, every set and the row count checked."""
    from ..randomized.settable import SetTable
    from ..validate import check_path
    from .tables import file_format
    path = Path(check_path(path, "path"))
    fmt = file_format(path, fmt)
    meta = read_metadata(path, fmt)
    header = check_metadata(meta, path)
    names = header.names
    parts = {n: [] for n in names}
    for _, masks in iter_masks(path, names, chunk_rows=1 << 62, fmt=fmt, meta=meta):
        for n, m in zip(names, masks):
            parts[n].append(m)
    masks = {n: (np.concatenate(parts[n]) if parts[n] else
                 np.zeros((0, (header.schema[n].d + 63) // 64), np.uint64)) for n in names}
    other_names = [a.name for a in header.schema if a.role == "other"]
    other = _read_other(path, fmt, other_names, meta) if other_names else None
    table = SetTable(header.schema, masks, header.params, header.model, other, header.info)
    # a column the metadata does not describe (the raw values appended) is
    # not read, but the file carries it: the audit of the table read back
    # fails it, as audit_file does (H86: it PASSED), and reading warns
    from ..audit.columns import column_rows
    table.column_rows = column_rows(path, fmt, meta)
    if table.column_rows[0]["status"] == "fail":
        import warnings
        warnings.warn(table.column_rows[0]["message"], stacklevel=3)
    return table


def _read_other(path, fmt, names, meta) -> pd.DataFrame:
    """Pass-through columns with the types they had when written."""
    if fmt == "parquet":
        import pyarrow.parquet as pq
        from .tables import arrow_frame
        return arrow_frame(pq.read_table(str(path), columns=names))
    from .tables import read_table
    frame = read_table(path, "csv")
    header_map = {_unescape_header(c) if meta.get("csv_escape") else c: c for c in frame.columns}
    dtypes = meta.get("csv_dtypes", {})
    arrow_types = meta.get("csv_arrow_types") or {}
    out = {}
    for c in names:
        text = frame[header_map[c]].to_numpy(dtype=object)
        dt = dtypes.get(c, "object")
        if c in arrow_types:
            out[c] = _parse_arrow(text, arrow_types[c], c, path, bool(meta.get("csv_escape")))
        elif dt.startswith("period["):
            out[c] = _parse_other(text, dt, c, path, bool(meta.get("csv_escape")))
        elif dt in ("object", "string", "str"):
            if meta.get("csv_escape"):
                text = csv_unescape(text)
            # an empty cell is a missing one, as pandas' text writes it (a
            # Categorical passed through is published as text: H139)
            col = pd.Series(text, dtype=object)
            col = col.where(col != "", None)
            out[c] = col if dt == "object" else col.astype(dt)
        elif dt in ("bool", "boolean", "category") or dt.startswith(("datetime64", "timedelta64")):
            out[c] = _parse_other(text, dt, c, path, bool(meta.get("csv_escape")))
        else:
            try:
                # Python's float()/int() parse: exact round trips of what pandas wrote
                if "int" in dt.lower():
                    # integers as integers (through floats, a value beyond
                    # 2**53 would lose digits), missing cells masked
                    missing = text == ""
                    ints = np.zeros(len(text), dtype=np.uint64 if dt.lower().startswith("uint")
                                    else np.int64)
                    ints[~missing] = [_whole_text(t) for t in text[~missing]]
                    parsed = pd.Series(pd.arrays.IntegerArray(ints, missing)) \
                        if missing.any() else pd.Series(ints)
                else:
                    parsed = pd.Series(np.where(text == "", "nan", text).astype(np.float64))
                out[c] = parsed.astype(dt)
            except (TypeError, ValueError, OverflowError):
                raise InputError(f"column {c!r} holds text where its metadata says {dt}",
                                 file=path, expected="the file as anonset wrote it") from None
    return pd.DataFrame(out)[names]


def _whole_text(t: str) -> int:
    """A CSV cell of an integer column: '7', or '7.0' as releases before
    the reader parsed integers exactly wrote a column with a missing cell
    (H129: such a release was refused); a fractional cell is no integer."""
    try:
        return int(t)
    except ValueError:
        import decimal
        try:
            d = decimal.Decimal(t)
        except decimal.InvalidOperation:
            raise ValueError(t) from None
        if not d.is_finite() or d != d.to_integral_value() or d.adjusted() >= 40:
            raise ValueError(t) from None
        return int(d)


def refuse_unreadable_dtype(col: pd.Series, name, *, file=None) -> None:
    """A pass-through column whose type a CSV release cannot give back
    (intervals, complex numbers, an Arrow type pandas writes as a repr) is
    refused before anything is written, naming the Parquet output that
    keeps it; what the reader parses passes."""
    dt = col.dtype
    bad = isinstance(dt, pd.IntervalDtype) or pd.api.types.is_complex_dtype(dt)
    if isinstance(dt, pd.ArrowDtype):
        import pyarrow as pa
        t = dt.pyarrow_dtype
        if pa.types.is_dictionary(t):
            t = t.value_type
        bad = not (pa.types.is_string(t) or pa.types.is_large_string(t)
                   or pa.types.is_integer(t) or pa.types.is_floating(t)
                   or pa.types.is_boolean(t) or pa.types.is_date(t)
                   or pa.types.is_timestamp(t) or pa.types.is_decimal(t))
    if bad:
        raise InputError(f"is of type {dt}, which a CSV file does not give back as it was",
                         column=str(name), file=file,
                         expected="a Parquet output (-o OUT.parquet), which keeps it, or the "
                                  "column converted (e.g. to text) or dropped")


def arrow_type_text(col: pd.Series) -> str:
    """An Arrow-backed column's type, as the metadata of a CSV release
    keeps it (its Arrow schema, serialized, in base64); a dictionary's
    values in their order too (up to 4,096 of them), which the rows of a
    shuffled release would not give back."""
    import base64
    import json

    import pyarrow as pa
    t = col.dtype.pyarrow_dtype
    meta = None
    if pa.types.is_dictionary(t):
        chunks = pa.chunked_array(col.array._pa_array).chunks
        if chunks and len(chunks[0].dictionary) <= 4096:
            meta = {"dictionary": json.dumps(chunks[0].dictionary.to_pylist(), default=str)}
    schema = pa.schema([pa.field("c", t, metadata=meta)])
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def _parse_arrow(text: np.ndarray, spec: str, name: str, path, escaped: bool) -> pd.Series:
    """An Arrow-backed pass-through column from the text pandas wrote for
    it, cast to its recorded Arrow type (an empty cell is missing)."""
    import base64

    import pyarrow as pa
    try:
        field = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(spec))).field(0)
        t = field.type
        vals = csv_unescape(text) if escaped else text
        cells = [None if v == "" else v for v in vals]
        base = t.value_type if pa.types.is_dictionary(t) else t
        if pa.types.is_boolean(base):
            words = {"True": "true", "False": "false"}
            cells = [None if v is None else words[v] for v in cells]
        arr = pa.array(cells, type=pa.string()).cast(base)
        if pa.types.is_dictionary(t):
            known = (field.metadata or {}).get(b"dictionary")
            if known is not None:           # the values in their recorded order
                import json

                import pyarrow.compute as pc
                dictionary = pa.array(json.loads(known), type=pa.string()).cast(base)
                index = pc.index_in(arr, value_set=dictionary)
                arr = pa.DictionaryArray.from_arrays(index.cast(t.index_type), dictionary)
            else:
                arr = arr.dictionary_encode()
            arr = arr.cast(t)
        return pd.Series(pd.arrays.ArrowExtensionArray(arr))
    except (TypeError, ValueError, KeyError, pa.ArrowException):
        raise InputError(f"column {name!r} holds text its recorded Arrow type does not read",
                         file=path, expected="the file as anonset wrote it") from None


def _parse_other(text: np.ndarray, dt: str, name: str, path, escaped: bool) -> pd.Series:
    """A pass-through column of booleans, categories, dates or durations from
    the text pandas wrote for it ('True', '2020-01-31 00:00:00+01:00',
    '1 days 02:00:00'; an empty cell is missing)."""
    missing = text == ""
    try:
        if dt in ("bool", "boolean"):
            words = {"True": True, "False": False}
            if any(t not in words for t in text[~missing]):
                raise ValueError
            vals = pd.Series([None if m else words[t] for t, m in zip(text, missing)],
                             dtype=object)
            return vals.astype("boolean" if missing.any() or dt == "boolean" else "bool")
        if dt == "category":
            # the categories are those that occur, as text
            vals = csv_unescape(text) if escaped else text
            return pd.Series(vals, dtype=object).where(~missing, None).astype("category")
        if dt.startswith("period["):
            freq = dt[len("period["):-1]
            vals = [None if m else t for t, m in zip(text, missing)]
            return pd.Series(pd.PeriodIndex(vals, freq=freq))
        target = pd.api.types.pandas_dtype(dt)
        vals = pd.Series(np.where(missing, None, text), dtype=object)
        if dt.startswith("timedelta64"):
            return pd.to_timedelta(vals).astype(target)
        if isinstance(target, pd.DatetimeTZDtype):
            # offsets can differ row to row (summer time): parse in UTC
            return pd.to_datetime(vals, utc=True, format="ISO8601").dt.tz_convert(
                target.tz).astype(target)
        return pd.to_datetime(vals, format="ISO8601").astype(target)
    except (TypeError, ValueError):
        raise InputError(f"column {name!r} holds text where its metadata says {dt}",
                         file=path, expected="the file as anonset wrote it") from None
