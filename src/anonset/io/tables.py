"""Input tables: in-memory frames of any kind, and CSV/Parquet files read
whole or block by block, all arriving as pandas DataFrames the engine
(:mod:`anonset.engine`) can publish.

In memory, anything that speaks the Arrow PyCapsule stream protocol
(``__arrow_c_stream__``: pyarrow, Polars, DuckDB results) or the dataframe
interchange protocol (``__dataframe__``) is accepted wherever a pandas
DataFrame is.

CSV files are read by pyarrow's CSV reader with every cell as text, exactly as
written: a row with more or fewer fields than the header is an error (pandas
would silently drop or pad fields), and nothing is converted yet.  The engine
decides each column's type over the WHOLE file (see :func:`anonset.engine`),
so reading a file in one block or in chunks gives the same typed values.
Parquet files keep their stored types.  Every error names the file.
"""
from __future__ import annotations

import contextlib
import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..validate import InputError, check_columns, row_name

__all__ = ["as_frame", "file_format", "check_input_file", "file_columns", "iter_blocks",
           "read_table", "read_typed", "type_text_column", "n_rows_hint", "PARQUET_SUFFIXES", "CSV_SUFFIXES", "NA_MARKERS",
           "is_missing_text", "text_type", "INT_TEXT", "CODE_TEXT"]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
#: Compressions pyarrow reads a text table through (by its suffix).
TEXT_COMPRESSIONS = ("", ".gz", ".bz2", ".xz", ".zst")
#: Tab-separated tables: read as CSV with the tab as separator.
TSV_SUFFIXES = tuple(s + c for s in (".tsv", ".tab") for c in TEXT_COMPRESSIONS)
CSV_SUFFIXES = tuple(".csv" + c for c in TEXT_COMPRESSIONS) + TSV_SUFFIXES
#: Text cells that mean "missing" in a column the engine types (pandas' default
#: markers).  Pass-through and identifier columns keep their text exactly.
NA_MARKERS = frozenset(["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                        "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                        "nan", "null"])


# pandas' Interval and Period columns are Arrow extension types that pandas
# registers only once it has converted one: before, a file holding them read
# as their storage (struct<left, right>, int64), so that the audit's verdict
# and a refusal's words depended on what the process had done before (H139)
try:
    import pandas.core.arrays.arrow.extension_types  # noqa: F401
except ImportError:  # pragma: no cover - a pandas without them
    pass


def is_missing_text(values: np.ndarray) -> np.ndarray:
    """Which text cells are missing-value markers."""
    return np.fromiter((v is None or v in NA_MARKERS for v in values), dtype=bool,
                       count=len(values))


# ================================================================== memory
def as_frame(data, *, param: str = "data") -> pd.DataFrame:
    """A pandas DataFrame for any supported in-memory table.

    Examples
    --------
    >>> import pyarrow as pa
    >>> as_frame(pa.table({"a": [1, 2]}))["a"].tolist()
    [1, 2]
    """
    from ..encode import shortest_floats
    frame = _as_frame(data, param)
    # before any column is read as one: a repeated name is a frame (H69)
    refuse_repeated(list(frame.columns), param)
    # 16- and 32-bit floats as the decimals they spell, on every path (H42)
    return shortest_floats(frame)


def refuse_repeated(cols, param: str = "data") -> None:
    """Refuse a table that names a column more than once, in one line
    (:func:`~anonset.validate.check_columns`), the error given as ``param``'s."""
    if len(set(map(repr, cols))) != len(cols) or len(set(cols)) != len(cols):
        try:
            check_columns(cols)
        except InputError as e:
            raise (e if param == "data" else InputError(e.what, param=param,
                                                         expected=e.expected)) from None


def given_type(data, column, default):
    """The type of ``column`` as the table given holds it (pandas, Arrow or
    Polars), where the frame made of it may hold another (float32 read as
    float64, H42); ``default`` where it cannot be told."""
    try:
        if isinstance(data, pd.DataFrame):
            return data[column].dtype if column in data.columns else default
        schema = getattr(data, "schema", None)
        if schema is not None and hasattr(schema, "field"):          # pyarrow
            return schema.field(column).type
        if isinstance(schema, dict) or type(schema).__name__ == "Schema":   # Polars
            return str(schema[column]).lower()
    except (KeyError, TypeError, ValueError, AttributeError):
        pass
    return default


def _as_frame(data, param: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return index_as_columns(data, param=param)
    if isinstance(data, pd.Series):
        raise InputError("got a pandas Series (one column)", param=param,
                         expected="a table: s.to_frame(), with the column's role named")
    if type(data).__module__.split(".")[0] == "dask":
        # its interchange object fails half-way with an error about chunks
        raise InputError(f"got a Dask {type(data).__name__}, which this function reads whole",
                         param=param,
                         expected="a table in memory (ddf.compute()), or for paper 000 "
                                  "anonset.dask.publish, which publishes partition by "
                                  "partition")
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pa = None
    if pa is not None:
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            # names checked before pandas is given them: pyarrow < 15 raises
            # a bare 'Found non-unique column index' (H156)
            refuse_repeated(data.schema.names, param)
            return _arrow_to_pandas(data)
        if hasattr(data, "__arrow_c_stream__"):          # Polars, DuckDB, ...
            try:
                table = stream_table(data)
            except (TypeError, ValueError, pa.ArrowException) as e:
                raise InputError(f"could not be read through the Arrow stream protocol ({e})"
                                 f"{_newer_pyarrow()}", param=param) from None
            refuse_repeated(table.schema.names, param)
            try:
                return _arrow_to_pandas(table)
            except (TypeError, ValueError, pa.ArrowException) as e:
                raise InputError(f"could not be read through the Arrow stream protocol ({e})",
                                 param=param) from None
    if hasattr(data, "__dataframe__"):
        try:
            return pd.api.interchange.from_dataframe(data)
        except Exception as e:     # noqa: BLE001 - any failure of the protocol
            raise InputError(f"could not be read through the dataframe interchange protocol "
                             f"({e})", param=param) from None
    raise InputError(f"got a {type(data).__name__}{_table_hint(data)}", param=param,
                     expected="a pandas DataFrame, a pyarrow Table, or a table that speaks the "
                              "Arrow PyCapsule or dataframe interchange protocol (Polars, DuckDB)")


def pyarrow_major() -> int:
    """The major version of the pyarrow installed."""
    import pyarrow as pa
    return int(pa.__version__.split(".")[0])


def _newer_pyarrow() -> str:
    """What to add to a refusal of an Arrow stream where the pyarrow
    installed is older than the one that reads every type the tests meet."""
    import pyarrow as pa
    if pyarrow_major() >= 18:
        return ""
    return f"; pyarrow {pa.__version__} is installed, and pyarrow >= 18 reads more Arrow types"


def stream_table(data):
    """An object that speaks the Arrow PyCapsule stream protocol
    (``__arrow_c_stream__``: Polars, DuckDB, a ``pyarrow.RecordBatchReader``)
    as one pyarrow Table, on every pyarrow anonset supports (>= 14).

    ``RecordBatchReader.from_stream`` came with pyarrow 15; pyarrow 14
    imports the stream's capsule itself.  A Polars frame gives text views
    (``string_view``), which pyarrow reads from 16 on and casts from 18 on
    (a Categorical's dictionary): before 18 it is asked for its oldest
    Arrow types instead (``to_arrow(compat_level=CompatLevel.oldest())``:
    large strings), the same values and metadata (a Categorical's, an
    Enum's), so the same release (H156)."""
    import pyarrow as pa
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    major = pyarrow_major()
    if major < 18 and type(data).__module__.split(".")[0] == "polars" \
            and callable(getattr(data, "to_arrow", None)):
        import polars as pl
        kw = {"compat_level": pl.CompatLevel.oldest()} if hasattr(pl, "CompatLevel") else {}
        return data.to_arrow(**kw)
    if major >= 15:
        return pa.RecordBatchReader.from_stream(data).read_all()
    return pa.RecordBatchReader._import_from_c_capsule(data.__arrow_c_stream__()).read_all()


def cast_views(arr, target):
    """``arr`` (an Arrow array or chunked array of text or bytes views, or
    a dictionary of them) cast to ``target`` (large text or bytes, or a
    dictionary of them).  pyarrow < 18 casts no views ('Unsupported cast
    from string_view to large_utf8'): there the values are rebuilt through
    Python, the same values (H156)."""
    import pyarrow as pa
    try:
        return arr.cast(target)
    except pa.ArrowNotImplementedError:
        pass

    def rebuilt(c):
        if pa.types.is_dictionary(target):
            return pa.DictionaryArray.from_arrays(
                c.indices, pa.array(c.dictionary.to_pylist(), target.value_type),
                ordered=target.ordered)
        return pa.array(c.to_pylist(), target)
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([rebuilt(c) for c in arr.chunks], type=target)
    return rebuilt(arr)


def signed_dictionaries(table):
    """An Arrow table or batch with its dictionaries' unsigned indices
    (Polars' Enum and Categorical: uint8 to uint32; a DuckDB ENUM) as
    signed integers one size up, which pyarrow < 23 converts to pandas
    (it refused unsigned ones: 'Converting unsigned dictionary indices to
    pandas not yet supported').  pandas sizes a Categorical's codes by its
    number of categories, so the frame is the same on every pyarrow."""
    import pyarrow as pa
    wider = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
             pa.uint64(): pa.int64()}
    if not any(pa.types.is_dictionary(f.type) and f.type.index_type in wider
               for f in table.schema):
        return table
    fields, cols = [], []
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if pa.types.is_dictionary(f.type) and f.type.index_type in wider:
            t = pa.dictionary(wider[f.type.index_type], f.type.value_type, f.type.ordered)
            chunks = [pa.DictionaryArray.from_arrays(c.indices.cast(t.index_type), c.dictionary,
                                                     ordered=t.ordered)
                      for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col])]
            col = pa.chunked_array(chunks, type=t) if isinstance(col, pa.ChunkedArray) \
                else chunks[0]
            f = f.with_type(t)
        fields.append(f)
        cols.append(col)
    cls = pa.RecordBatch if isinstance(table, pa.RecordBatch) else pa.Table
    return cls.from_arrays(cols, schema=pa.schema(fields, metadata=table.schema.metadata))


def _table_hint(data) -> str:
    """How to make a table of what was given instead of one."""
    import os
    if isinstance(data, (str, bytes, os.PathLike)):
        return (" (a file name: read the file first, or publish it block by block with "
                "anonset.stream.publish_file(path, out, model, ...))")
    if callable(getattr(data, "collect", None)):
        return " (a lazy table: collect it first, e.g. lf.collect())"
    if callable(getattr(data, "to_table", None)) and callable(getattr(data, "scanner", None)):
        return (" (a dataset: ds.to_table() reads it into memory; its files are published "
                "block by block with anonset.stream.publish_file)")
    if isinstance(data, (dict, list, tuple)):
        return " (plain Python data: pd.DataFrame(data) first)"
    if type(data).__module__ == "numpy":
        return " (an array: pd.DataFrame(a, columns=[...]) first, naming the columns)"
    return ""


def polars_enum(field) -> bool:
    """Whether an Arrow field is a Polars Enum's (its field metadata says
    so), which Polars always marks ordered."""
    return any(k.startswith(b"_PL_ENUM") for k in (field.metadata or {}))


def unordered_enums(table):
    """An Arrow table or batch with its Polars Enums' dictionaries marked
    unordered: Polars marks every Enum ordered, whether its order means
    anything or not (job titles), and an ordered domain gets t-closeness
    along that order, a weaker bound than the equal ground's (H69: CPS1985
    occupation at t = 0.2, p 0.29 -> 0.37, eta 2 -> 1).  As a DuckDB ENUM,
    it is then read as an unordered Categorical: its categories the declared
    domain, sorted; an order is declared with ``ordinal=``."""
    import pyarrow as pa
    if not any(pa.types.is_dictionary(f.type) and f.type.ordered and polars_enum(f)
               for f in table.schema):
        return table
    fields, cols = [], []
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if pa.types.is_dictionary(f.type) and f.type.ordered and polars_enum(f):
            t = pa.dictionary(f.type.index_type, f.type.value_type, ordered=False)
            f = f.with_type(t)
            col = col.cast(t)
        fields.append(f)
        cols.append(col)
    cls = pa.RecordBatch if isinstance(table, pa.RecordBatch) else pa.Table
    return cls.from_arrays(cols, schema=pa.schema(fields, metadata=table.schema.metadata))


def _arrow_to_pandas(table) -> pd.DataFrame:
    # A Polars Categorical's categories are the values it has met (its
    # Enum's are declared): as text, its domain counts as inferred (the
    # summary, metadata and audit then say that it reveals which values
    # occur), where a pandas Categorical would have called it declared
    import pyarrow as pa
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    for i, f in enumerate(table.schema):
        meta = f.metadata or {}
        if pa.types.is_dictionary(f.type) and any(k.startswith(b"_PL_CATEGORICAL") for k in meta):
            text = pa.large_string()
            col = pa.chunked_array(
                [pa.DictionaryArray.from_arrays(c.indices, cast_views(c.dictionary, text))
                 .dictionary_decode() for c in table.column(i).chunks], type=text)
            table = table.set_column(i, pa.field(f.name, text), col)
    # (a table pandas made of a frame whose metadata names a dtype pandas
    # cannot rebuild, an ArrowDtype list: as Arrow's own types say, H139)
    return index_as_columns(_batch_to_pandas(unordered_enums(table)))


def index_as_columns(frame: pd.DataFrame, *, param: str = "data", file=None) -> pd.DataFrame:
    """A named index is data (``set_index('pid')``, ``read_csv(index_col=...)``,
    a Parquet file written by pandas with its index): its levels become
    columns after the others, which then need a role like any other, as the
    same table read from a file shows them.  An unnamed index, or a range of
    row numbers (a RangeIndex, named or not: pandas stores only its range in
    a file), is row labels: never published.

    Examples
    --------
    >>> index_as_columns(pd.DataFrame({"a": [1, 2]}, index=pd.Index([7, 9], name="pid")))
       a  pid
    0  1    7
    1  2    9
    """
    names = [n for n in frame.index.names if n is not None]
    if not names or isinstance(frame.index, pd.RangeIndex):
        return frame            # row numbers (a file keeps only their range, Dask drops it)
    clash = [n for n in names if n in frame.columns]
    if clash:
        raise InputError(f"has an index named {clash[0]!r}, as one of its columns is", param=param,
                         file=file, expected="distinct names (rename the index, or "
                                             "reset_index(drop=True) if it is not data)")
    # after the other columns, where pandas writes an index in a Parquet
    # file (the column order keys each attribute's draws)
    out = frame.reset_index(level=names).reset_index(drop=True)
    return out[[c for c in out.columns if c not in names] + names]


# =================================================================== files
def file_format(path, fmt=None, *, param: str = "format", output: bool = False,
                named_by: str | None = None) -> str:
    """'parquet' or 'csv', from ``fmt`` or the file name; a tab-separated
    name (``.tsv``, ``.tab``) is read as CSV, and refused for an ``output``
    (anonset writes comma-separated values only).  ``param``: the option
    that names the format; ``named_by``: instead, the option that names the
    file, where the caller has no format option (a name is all that says
    the format then: H144, audit's '--original csv|parquet' named no
    option)."""
    if output:
        refuse_tsv_output(path)
    if fmt is not None:
        if fmt not in ("csv", "parquet"):
            raise InputError(f"got {fmt!r}", param=param, expected="csv or parquet")
        if output:
            check_named_format(path, fmt, param)
        return fmt
    name = str(path).lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    names = ".csv or .parquet (or .csv.gz)" if output else ".csv, .tsv or .parquet"
    if named_by is not None:
        raise InputError("has an extension that names no known format", file=path,
                         param=named_by, expected=f"a name ending in {names} (rename the "
                                                  "file, or link it under such a name)")
    raise InputError("has an extension that names no known format", file=path,
                     expected=f"a name ending in {names}, or {{@{param}}} csv|parquet")


def check_named_format(path, fmt: str, param: str = "format") -> None:
    """An output written as ``fmt`` (named by an option) is not named as
    the other format, nor, as Parquet, as compressed: no file holds a
    format its name does not say (H39: '-o o.parquet.gz --format parquet'
    wrote plain Parquet named .gz; H44: lgb and msa too)."""
    name = str(path).lower()
    inner = name[:-len(Path(name).suffix)] if Path(name).suffix in CSV_OUTPUT_COMPRESSIONS \
        else name
    said = "parquet" if inner.endswith(PARQUET_SUFFIXES) else \
        "csv" if inner.endswith(".csv") else None
    if said is not None and said != fmt:
        named, written = ({"csv": "CSV", "parquet": "Parquet"}[f] for f in (said, fmt))
        raise InputError(f"is named as {named}, but is written as {written}", param="output",
                         file=path, expected=f"the two to agree (a name that says {written}, "
                                             f"or {named} written to it)")
    if fmt == "parquet" and inner != name:
        raise InputError("is named as compressed, but a Parquet file is written as it is "
                         "(compressed inside)", file=path,
                         expected=f"a name without {Path(name).suffix}")


def refuse_tsv_output(path) -> None:
    """An output named as tab-separated (anonset writes commas only), or as
    a compression it does not write (zstd: read, not written)."""
    if str(path).lower().endswith(TSV_SUFFIXES):
        raise InputError("is named as a tab-separated file, which anonset reads but does not "
                         "write", file=path, expected="a .csv (comma-separated) or .parquet name")
    if str(path).lower().endswith(".zst"):
        raise InputError("has a compression this writer does not support", param="output",
                         file=path, expected="a .csv, .csv.gz, .csv.bz2 or .csv.xz name")


#: The compressions a CSV output is written through, by its name's suffix.
CSV_OUTPUT_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}
#: Suffixes of compressions and archives anonset does not write.
UNWRITTEN_COMPRESSIONS = (".zip", ".zst", ".bz", ".7z", ".lz4", ".tar", ".lzma", ".z", ".br")


def check_csv_output(path) -> None:
    """A CSV output (one whose format its name says, or was named with
    ``--format csv``: any other name, ``rel.dat``, is written as plain
    CSV) is not named as tab-separated or as a compression anonset does not
    write."""
    refuse_tsv_output(path)
    if Path(path).suffix.lower() in UNWRITTEN_COMPRESSIONS:
        raise InputError("has a compression this writer does not support", param="output",
                         file=path, expected="a .csv, " + ", ".join(
                             ".csv" + s for s in CSV_OUTPUT_COMPRESSIONS) + " name")


def csv_compression(path) -> str | None:
    """The compression a CSV written to ``path`` gets from its name (None:
    plain text); a temporary file's own name does not carry it."""
    return CSV_OUTPUT_COMPRESSIONS.get(Path(path).suffix.lower())


@contextlib.contextmanager
def csv_output(tmp, final):
    """A text handle on ``tmp`` that writes CSV compressed as ``final``'s
    name says.  A gzip stream names no file and no time (as ``gzip -n``
    writes), so its header does not hold the temporary file's name (process
    id and random letters) and one key's release is the same bytes each
    time; bzip2 and xz headers hold neither."""
    import bz2
    import gzip
    import lzma
    method = csv_compression(final)
    if method == "gzip":
        raw = open(tmp, "wb")
        try:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as z, \
                    io.TextIOWrapper(z, encoding="utf-8", newline="") as f:
                yield f
        finally:
            raw.close()
        return
    opener = {"bz2": bz2.open, "xz": lzma.open}.get(method, open)
    with opener(tmp, "wt", newline="", encoding="utf-8") as f:
        yield f


def check_input_file(path, *, param: str = "input") -> Path:
    """An existing, readable file (not a directory)."""
    p = Path(path)
    if str(path) == "-" and not p.exists():
        raise InputError("stands for standard input, which anonset does not read (a table is "
                         "read more than once: its schema and statistics first, then the work)",
                         file=p, param=param, expected="a file (write the data to one first)")
    if not p.exists():
        raise InputError("does not exist", file=p, param=param)
    if p.is_dir():
        # a dataset's files lie in it or one partition level down (bounded:
        # never a walk of a large tree)
        parquet = any(next(p.glob(g), None) is not None for g in ("*.parquet", "*/*.parquet"))
        raise InputError("is a directory", file=p, param=param, expected=(
            "a file (a directory of Parquet files, such as a partitioned dataset: publish it "
            "with anonset.dask.publish(dask.dataframe.read_parquet(DIR), ...), docs/scaling.md)"
            if parquet else "a file"))
    if not p.is_file():
        # a pipe (a shell's <(zcat data.csv.gz) is one), a socket or a device
        raise InputError("is not a regular file (a pipe or a device), which anonset does not "
                         "read: a table is read more than once, its schema and statistics "
                         "first, then the work", file=p, param=param,
                         expected="a file (write the data to one first; a compressed CSV is "
                                  "read as it is: .csv.gz, .csv.bz2, .csv.xz, .csv.zst)")
    return p


#: How each compressed stream a CSV file is read through starts, by the
#: suffix its name ends in (bzip2: its block or end-of-stream mark after the
#: level, so that a header line starting 'BZh' is text).
COMPRESSION_MAGIC = {".gz": ("gzip", re.compile(rb"\x1f\x8b")),
                     ".bz2": ("bzip2", re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)")),
                     ".xz": ("xz", re.compile(rb"\xfd7zXZ\x00")),
                     # (a skippable frame first: pzstd's output, H145)
                     ".zst": ("zstd", re.compile(rb"\x28\xb5\x2f\xfd|[\x50-\x5f]\x2a\x4d\x18"))}


def _an(kind: str) -> str:
    """'a gzip', 'an xz'."""
    return f"{'an' if kind[0] in 'aeiox' else 'a'} {kind}"


def check_compression(path) -> None:
    """Refuse a CSV file whose bytes are not compressed as its name says:
    plain text named ``.csv.gz`` (or ``.bz2``, ``.xz``, ``.zst``), another
    compression than the name's, or a compressed stream named ``.csv``, in
    one line naming the file, what it is and what its name should be (a
    decompressor's own message names neither, and compressed bytes read as
    text were called Windows-1252 with iconv advice)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(10)
    except OSError:
        return                            # refused by the reader, naming the error
    if not head:
        return                            # empty: refused as having no header line
    suffix = p.suffix.lower()
    named = COMPRESSION_MAGIC.get(suffix)
    found = next(((s, kind) for s, (kind, magic) in COMPRESSION_MAGIC.items()
                  if magic.match(head)), None)
    if named is not None and (found is None or found[0] != suffix):
        base = p.name[:-len(suffix)]      # data.csv.gz -> data.csv
        if found is None:
            raise InputError(f"is not {named[0]}-compressed, though its name ends in {suffix} "
                             f"(it does not start as {named[0]} data does)", file=path,
                             expected=f"{_an(named[0])}-compressed CSV file (a plain CSV file is "
                                      f"named without {suffix}: rename it {base!r})")
        raise InputError(f"is {found[1]}-compressed, though its name ends in {suffix}",
                         file=path, expected=f"{_an(named[0])}-compressed CSV file (rename it "
                                             f"{base + found[0]!r}, which is read as it is)")
    if named is None and found is not None:
        raise InputError(f"is {found[1]}-compressed, though its name does not say so",
                         file=path, expected=f"a plain CSV file (rename it "
                                             f"{p.name + found[0]!r}, which is read as it is)")


def unreadable_csv(path, error, after: int | None = None) -> InputError:
    """The refusal of a CSV file that could not be read (``error``: the
    OSError or EOFError of the file or its decompressor; ``after``: the rows
    read before it), saying what was expected: for a compressed file, a
    whole stream (one damaged or cut short fails where it is)."""
    named = COMPRESSION_MAGIC.get(Path(path).suffix.lower())
    where = f" after row {after:,}" if after else ""
    return InputError(f"is not a readable CSV file{where} ({error})", file=path,
                      expected=f"a whole, undamaged {named[0]}-compressed CSV file, as its name "
                               "says (it may be cut short or damaged: compress it again)"
                      if named else "a CSV file that can be read to its end")


def _csv_stream(path):
    """A byte stream of a CSV file, decompressed as its name says.  Arrow
    detects gzip, bzip2 and zstd by the name; its wheels carry no xz codec
    and read a .xz file as its raw bytes (refused as not UTF-8, H18), so
    xz is read through Python's lzma (its errors raised as OSError, as
    Arrow's decompressors raise theirs)."""
    import pyarrow as pa
    if str(path).lower().endswith(".xz"):
        return pa.PythonFile(_xz_file(path), mode="r")
    return pa.input_stream(str(path), compression="detect")


def _xz_file(path):
    """An xz file read through lzma, whose ``LZMAError`` (corrupt or no xz
    data: not an OSError, so a traceback) is raised as an OSError."""
    import lzma

    class XzFile(lzma.LZMAFile):
        def _wrap(self, read, *a):
            try:
                return read(*a)
            except lzma.LZMAError as e:
                raise OSError(f"xz decompress failed: {e}") from None

        def read(self, size=-1):
            return self._wrap(super().read, size)

        def read1(self, size=-1):
            return self._wrap(super().read1, size)

        def readinto(self, b):
            return self._wrap(super().readinto, b)

        def peek(self, size=-1):
            return self._wrap(super().peek, size)

        def readline(self, size=-1):
            return self._wrap(super().readline, size)

    return XzFile(str(path), "rb")


#: Bytes read at most to find where a file stops being UTF-8 (an error path).
_SCAN_BYTES = 1 << 30


def read_text_file(path, what: str = "text file") -> str:
    """A small text file (a configuration, a hierarchy, a domain, a
    matrix) as UTF-8, a byte-order mark dropped; one that is not UTF-8 is
    refused naming the file, where, and how to convert it."""
    p = Path(path)
    data = p.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
        enc = "UTF-16" if utf16 else "WINDOWS-1252"
        why = (" but UTF-16 (it starts with a UTF-16 byte-order mark)" if utf16 else
               f" (line {line}, byte {e.start:,}: 0x{data[e.start]:02x}, likely Windows-1252 "
               "or Latin-1)")
        raise InputError(f"is not UTF-8 text{why}", file=path,
                         expected=f"a UTF-8 {what}: convert it first (iconv -f {enc} -t UTF-8 "
                                  f"{p.name} > {p.stem}-utf8{p.suffix})") from None


def not_utf8(path) -> InputError:
    """The refusal of a CSV file that is not UTF-8 text, saying where (the
    line and byte of the first byte that cannot be), what it likely is
    (UTF-16 from its byte-order mark; else the Windows-1252 / Latin-1 that
    spreadsheets on Windows write, with the character the byte is there) and
    how to convert it."""
    import codecs
    p = Path(path)
    cat = {".gz": "zcat", ".bz2": "bzcat", ".xz": "xzcat", ".zst": "zstdcat"}.get(
        p.suffix.lower())
    inner = Path(p.stem) if cat else p           # lat.csv.gz -> lat.csv
    out = f"{inner.stem}-utf8{inner.suffix}"

    def refusal(what, enc):
        conv = (f"{cat} {p.name} | iconv -f {enc} -t UTF-8 > {out}" if cat else
                f"iconv -f {enc} -t UTF-8 {p.name} > {out}")
        return InputError(f"is not UTF-8 text{what}", file=path,
                          expected=f"a UTF-8 CSV file: convert it first ({conv}), or save it "
                                   "from the spreadsheet as 'CSV UTF-8'")
    try:
        with _csv_stream(path) as f:
            dec = codecs.getincrementaldecoder("utf-8")()
            first = f.read(2)
            if first in (b"\xff\xfe", b"\xfe\xff"):
                return refusal(" but UTF-16 (it starts with a UTF-16 byte-order mark)", "UTF-16")
            chunk, offset, lines = first, 0, 1
            while chunk and offset < _SCAN_BYTES:
                held = len(dec.getstate()[0])
                try:
                    dec.decode(chunk)
                except UnicodeDecodeError as e:
                    at = offset - held + e.start
                    byte = e.object[e.start]
                    lines += e.object[:e.start].count(b"\n")
                    ch = bytes([byte]).decode("cp1252", errors="replace")
                    like = (f"; in Windows-1252 or Latin-1, which spreadsheets on Windows write, "
                            f"it is {ch!r}") if byte >= 0x80 and ch != "\ufffd" else ""
                    return refusal(f": line {lines:,} holds the byte 0x{byte:02x} (byte "
                                   f"{at + 1:,} of its text), which UTF-8 text cannot hold "
                                   f"there{like}", "WINDOWS-1252")
                lines += chunk.count(b"\n")
                offset += len(chunk)
                chunk = f.read(1 << 20)
    except OSError:
        pass
    return refusal("", "WINDOWS-1252")


#: Field separators read besides the comma, where a header line holds no
#: comma and splits on exactly one of them into several names (the
#: semicolon of spreadsheets set to a decimal comma, the tab of TSV files).
OTHER_SEPARATORS = (";", "\t", "|")


def _csv_dialect(path) -> tuple:
    """(header, separator): the header line split as CSV, with the checks
    pandas would skip (every name non-empty and given once), and the field
    separator, read off the header: the comma, or one of
    ``OTHER_SEPARATORS`` where the header holds no comma and splits on
    exactly one of them (so every reader of a file sees the same columns)."""
    import itertools
    check_compression(path)
    try:
        with _csv_stream(path) as f:
            # utf-8-sig: the byte-order mark that spreadsheets write ("CSV UTF-8")
            # is not part of the first column's name
            text = io.TextIOWrapper(f, encoding="utf-8-sig", newline="")
            first = text.readline()
            sep = ","
            if str(path).lower().endswith(TSV_SUFFIXES) and "\t" in first:
                sep = "\t"    # named a TSV: a comma may be part of a name
            elif first.strip("\r\n") and "," not in first:
                found = [c for c in OTHER_SEPARATORS if c in first]
                if len(found) > 1:
                    raise InputError(f"has a header line that holds no comma but "
                                     f"{' and '.join(map(repr, found))}: "
                                     f"{first.strip()[:60]!r}", file=path,
                                     expected="comma-separated values, or values separated by "
                                              f"one of {', '.join(map(repr, OTHER_SEPARATORS))}")
                sep = found[0] if found else ","
            # (a quoted name may hold a line break: the reader goes on reading)
            row = next(csv.reader(itertools.chain([first], text), delimiter=sep), None)
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    except (OSError, EOFError) as e:
        raise unreadable_csv(path, e) from None
    except csv.Error as e:
        raise InputError(f"is not a readable CSV file ({e})", file=path) from None
    if not row:
        raise InputError("is empty (no header line)", file=path,
                         expected="a header line naming every column")
    return check_columns(row, file=path), sep


def _csv_header(path) -> list:
    """The header of a CSV file (:func:`_csv_dialect`)."""
    return _csv_dialect(path)[0]


def file_columns(path, fmt) -> list:
    """Column names of a CSV or Parquet file, checked (non-empty, distinct)."""
    if fmt == "parquet":
        # pandas stores an unnamed index as '__index_level_N__': row labels,
        # which pandas reads back as the index, never a column
        unnamed = set(pandas_unnamed_index(path))
        return check_columns([c for c in _parquet_file(path).schema_arrow.names
                              if c not in unnamed], file=path)
    return _csv_header(path)


def pandas_unnamed_index(path) -> list:
    """The columns in which pandas stored an unnamed index (its metadata's
    ``index_columns`` named ``__index_level_N__``).  pandas stores a named
    index so too where a column has its name: that frame is refused, as
    :func:`index_as_columns` refuses it in memory (H135)."""
    import json
    meta = (_parquet_file(path).schema_arrow.metadata or {}).get(b"pandas")
    try:
        meta = json.loads(meta) if meta else {}
        cols = meta.get("index_columns", [])
        names = {c.get("field_name"): c.get("name") for c in meta.get("columns", [])
                 if isinstance(c, dict)}
    except (ValueError, KeyError, TypeError, AttributeError):
        return []
    unnamed = [c for c in cols if isinstance(c, str) and
               re.fullmatch(r"__index_level_\d+__", c)]
    named = [names[c] for c in unnamed if isinstance(names.get(c), str)]
    if named:
        raise InputError(f"has an index named {named[0]!r}, as one of its columns is",
                         file=path, expected="distinct names (rename the index, or "
                                             "reset_index(drop=True) if it is not data)")
    return unnamed


def _parquet_file(path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        return pq.ParquetFile(str(path))
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"is not a readable Parquet file ({e})", file=path) from None


def parquet_types(path) -> dict:
    """{column: Arrow type} of a Parquet file."""
    sch = _parquet_file(path).schema_arrow
    return {f.name: f.type for f in sch}


def parquet_categoricals(path) -> dict:
    """{column: ordered} of a Parquet file's dictionary columns that read as
    a pandas Categorical (a declared domain), as :func:`as_frame` reads them:
    a Polars Categorical's (the values it met) reads as text."""
    import pyarrow as pa
    return {f.name: bool(f.type.ordered) and not polars_enum(f)
            for f in _parquet_file(path).schema_arrow
            if pa.types.is_dictionary(f.type) and
            not any(k.startswith(b"_PL_CATEGORICAL") for k in (f.metadata or {}))}


def parquet_lost_categoricals(path) -> list:
    """Columns the file's pandas metadata calls categorical that Parquet
    stores as plain values (pyarrow keeps a Categorical of numbers as its
    values only: its unused categories and its order are gone, and pandas
    reads it back as numbers too)."""
    import json

    import pyarrow as pa
    sch = _parquet_file(path).schema_arrow
    try:
        meta = json.loads((sch.metadata or {}).get(b"pandas", b"{}"))
    except ValueError:
        return []
    kinds = {c.get("name"): c.get("pandas_type") for c in meta.get("columns", [])
             if isinstance(c, dict)}
    return [f.name for f in sch if kinds.get(f.name) == "categorical"
            and not pa.types.is_dictionary(f.type)]


def n_rows_hint(path, fmt):
    """The row count when the file states it (Parquet), else None."""
    if fmt == "parquet":
        return _parquet_file(path).metadata.num_rows
    return None


def _text_frame(batch, names) -> pd.DataFrame:
    """A record batch of text columns as a frame of Python str (object dtype)."""
    cols = {}
    for name, col in zip(names, batch.columns):
        cols[name] = pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)
    return pd.DataFrame(cols)


def arrow_frame(table, **kw) -> pd.DataFrame:
    """An Arrow table or batch as pandas, its integer and boolean columns
    that hold nulls kept as pandas' nullable types (Arrow's own conversion
    makes them floats, and a code above 2^53 changes: a file that Spark,
    DuckDB, Polars or pyarrow wrote has no pandas metadata to say
    otherwise); ``kw`` to ``to_pandas``."""
    import pyarrow as pa
    table = signed_dictionaries(table)
    out = table.to_pandas(**kw)
    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(),
                pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype(),
                pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
                pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(),
                pa.bool_(): pd.BooleanDtype()}
    names = table.schema.names
    once = {n for n in names if names.count(n) == 1}      # a repeated name is refused later
    for i, f in enumerate(table.schema):
        if f.type in nullable and f.name in once and f.name in out.columns and \
                table.column(i).null_count and \
                not isinstance(out[f.name].dtype, pd.api.extensions.ExtensionDtype):
            out[f.name] = table.column(i).to_pandas(types_mapper=nullable.get).array
    from ..encode import shortest_floats
    return shortest_floats(out)       # float32 0.7 is 0.7 on every reader (H42)


def _unknown_dtype(err: ValueError) -> bool:
    """Whether ``err`` is NumPy's refusal of a pandas metadata dtype it does
    not know (pandas 2.x: an ArrowDtype's name, '...[pyarrow]')."""
    msg = str(err)
    return "is not recognized" in msg and "[pyarrow]" in msg


def _batch_to_pandas(batch) -> pd.DataFrame:
    """A Parquet batch as pandas reads it, or, where the file's pandas
    metadata names a dtype this pandas cannot make (an ArrowDtype of a
    dictionary, which pandas writes but does not read back per batch), as
    Arrow's own types say (the unnamed index left out: row labels)."""
    try:
        return arrow_frame(batch)
    except (TypeError, NotImplementedError, ValueError) as e:   # (fixed-size types: H145)
        # pandas 2 hands the dtype's name to NumPy, which raises ValueError
        # 'format number 1 of "dictionary<...>[pyarrow]" is not recognized'
        # (pandas 3: TypeError); any other ValueError is the batch's own
        if isinstance(e, ValueError) and not _unknown_dtype(e):
            raise
        out = arrow_frame(batch, ignore_metadata=True)
        return out.drop(columns=[c for c in out.columns
                                 if re.fullmatch(r"__index_level_\d+__", str(c))])


def iter_blocks(path, fmt, *, chunk_rows: int, columns=None):
    """Blocks of at most ``chunk_rows`` rows, in file order: ``(row0, frame)``.

    CSV blocks hold text (every cell a str, exactly as written); Parquet
    blocks hold the stored types.  ``columns`` limits what is read (CSV rows
    are still checked to have one field per header column).
    """
    import pyarrow as pa
    path = Path(path)
    row0 = 0
    if fmt == "parquet":
        f = _parquet_file(path)
        try:
            for batch in f.iter_batches(batch_size=chunk_rows, columns=columns, use_threads=True):
                # as pandas reads the file: a named index is a column, an
                # unnamed one row labels (file_columns)
                yield row0, index_as_columns(_batch_to_pandas(unordered_enums(batch)),
                                             file=path)
                row0 += batch.num_rows
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"could not be read after row {row0:,} ({e})", file=path) from None
        return
    import pyarrow.csv as pacsv
    header, sep = _csv_dialect(path)
    want = header if columns is None else [c for c in header if c in set(columns)]
    # the header skipped as one CSV row, not one line: a quoted name may hold
    # a line break (skip_rows counts lines: H66)
    read = pacsv.ReadOptions(column_names=header, skip_rows_after_names=1, use_threads=True,
                             block_size=1 << 22)
    parse = pacsv.ParseOptions(delimiter=sep, newlines_in_values=True)
    conv = pacsv.ConvertOptions(column_types={c: pa.string() for c in header},
                                include_columns=want, strings_can_be_null=False,
                                quoted_strings_can_be_null=False)
    pending, held = [], 0
    try:
        with _csv_stream(path) as stream:
            reader = pacsv.open_csv(stream, read_options=read, parse_options=parse,
                                    convert_options=conv)
            for batch in reader:
                pending.append(batch)
                held += batch.num_rows
                while held >= chunk_rows:
                    table = pa.Table.from_batches(pending).combine_chunks()
                    head, rest = table.slice(0, chunk_rows), table.slice(chunk_rows)
                    yield row0, _text_frame(head.to_batches()[0] if head.num_rows else head,
                                            want)
                    row0 += head.num_rows
                    pending, held = rest.to_batches(), rest.num_rows
    except pa.ArrowInvalid as e:
        msg = str(e)
        if "UTF8" in msg or "utf8" in msg.lower():
            raise not_utf8(path) from None
        if "Expected" in msg and "columns" in msg:
            raise ragged_row(path, sep, len(header), row0 + held) from None
        if "Empty CSV file" in msg:
            raise InputError("is empty (no header line)", file=path) from None
        raise InputError(f"is not a readable CSV file ({_no_cells(msg)})", file=path) \
            from None
    except (OSError, EOFError) as e:
        raise unreadable_csv(path, e, row0 + held) from None
    if held:
        table = pa.Table.from_batches(pending).combine_chunks()
        yield row0, _text_frame(table.to_batches()[0], want)


def ragged_row(path, sep: str, n_fields: int, after: int) -> InputError:
    """The refusal of a CSV file with a row of another number of fields than
    its header, naming the row (found by a second, Python reading of the
    file: the parser's message names none; blank lines skipped, as that
    parser skips them) and the counts, never the row's cells, which are a
    person's values."""
    row = k = None
    try:
        with _csv_stream(path) as f:
            text = io.TextIOWrapper(f, encoding="utf-8-sig", newline="")
            rows = csv.reader(text, delimiter=sep)
            next(rows, None)                        # the header
            # blank lines are no rows, as the Arrow reader skips them (they
            # shifted the row named: H138)
            for i, fields in enumerate(f for f in rows if f):
                if len(fields) != n_fields:
                    row, k = i, len(fields)
                    break
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    where = f"{row_name(row)} has {k}" if row is not None else \
        f"a row after row {after:,} has another number"
    return InputError(f"has a row with the wrong number of fields: {where}", file=path,
                      row=row, expected=f"{n_fields} fields on every row, as in the header")


def _no_cells(msg: str) -> str:
    """The first line of a CSV parser's message without the text of the row
    it quotes (after 'got N', or after the message's last ': ')."""
    first = msg.splitlines()[0] if msg else msg
    m = re.match(r"(.*?\bgot \d+)", first)
    if m:
        return m.group(1)
    return first.split(": ")[0] if first.count(": ") > 1 else first


def read_table(path, fmt, *, columns=None) -> pd.DataFrame:
    """A whole file as one block (CSV: text cells; Parquet: stored types)."""
    blocks = [b for _, b in iter_blocks(path, fmt, chunk_rows=1 << 62, columns=columns)]
    if not blocks:
        cols = columns or file_columns(path, fmt)
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    return blocks[0] if len(blocks) == 1 else pd.concat(blocks, ignore_index=True)


#: A whole number, with the blanks around it that a CSV file written as
#: "1, 2, 3" holds (Python's float() reads them; int() too).
INT_TEXT = re.compile(r"^[ \t]*[+-]?\d+[ \t]*$")
#: A number written with a leading zero: a code (a ZIP or area code, an ICD
#: chapter '03'), whose zero would be lost as a number.
CODE_TEXT = re.compile(r"^[ \t]*[+-]?0\d")


def text_type(values) -> str:
    """'int', 'float' or 'str': the type of a CSV column's text values (one
    rule for every path: the engine's first pass, the audit's original, the
    partition publishers).  Integers where every value spells one, numbers
    where every one is a number, else text; a column where some value has a
    leading zero ('02134') holds codes, and stays text so that what is
    published is what the file holds."""
    vals = list(values)
    if any(CODE_TEXT.match(v) for v in vals):
        return "str"
    if vals and all(INT_TEXT.match(v) for v in vals):
        return "int"
    try:
        for v in vals:
            float(v)
    except ValueError:
        return "str"
    return "float" if vals else "str"


#: A number written with a comma: a decimal comma ('354,94'), or
#: thousands separators ('1,234', '12,345,678.5'), which CSV text typing
#: reads as no number.  (A multiple choice, '1,3,4', is neither: text.)
COMMA_NUMBER = re.compile(r"^[ \t]*[+-]?(?:\d+,\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?)[ \t]*$")
#: A number written with a decimal point ('23.5', '.5').
POINT_NUMBER = re.compile(r"^[ \t]*[+-]?(?:\d+\.\d*|\.\d+)[ \t]*$")


def csv_separator(path) -> str | None:
    """The field separator of a CSV file (:func:`_csv_dialect`), or None
    where ``path`` is no readable CSV file (a Parquet file, none)."""
    if path is None or str(path).lower().endswith(PARQUET_SUFFIXES):
        return None
    try:
        return _csv_dialect(path)[1]
    except (InputError, OSError, ValueError):
        return None


def check_point_numbers(values, column, *, file=None, sep=None) -> None:
    """Refuse a CSV column of numbers written with commas (``values``: its
    text cells, missing markers included; ``sep``: the file's field
    separator, read off ``file`` where not given): read as text, a
    sensitive column or a QI would be published as labels without their
    order (H39: a decimal-comma CPS1985 published wage as text, measured t
    with the 'equal' distance and generalized it as a category), where the
    same numbers with a point are numbers.

    A column of numbers, some written with a comma, is refused where the
    file is not comma-separated (a spreadsheet set to a decimal comma
    writes '25' and '23,5' in a ';' file: H138, where a sixth of the rows
    had a fraction and wage was published as labels), or, in a
    comma-separated file, where at least half its distinct values have a
    comma: a few '4,6' among whole numbers there are lists of them (H42:
    DAAG hotspots' sources).  A column with any other text is text."""
    values = np.asarray(list(values), dtype=object)
    if not len(values):
        return
    vals = pd.unique(values[~is_missing_text(values)])
    commas = []
    for v in vals:
        if not isinstance(v, str):
            return
        if COMMA_NUMBER.match(v):
            commas.append(v)
        elif not (INT_TEXT.match(v) or POINT_NUMBER.match(v)):
            return                                # text: no numbers
    if not commas:
        return
    if sep is None and file is not None:
        sep = csv_separator(file)
    if (sep is None or sep == ",") and len(commas) < len(vals) / 2:
        return
    from ..validate import comma_conversion, comma_kind
    kind = comma_kind(commas, sep)
    what = "a decimal comma" if kind == "decimal" else "thousands separators"
    raise InputError(f"holds numbers written with a comma ({commas[0].strip()!r}: {what}): "
                     "read as text, they would be published as labels, without their order",
                     column=column, file=file,
                     expected="numbers with a decimal point and no thousands separator (convert "
                              f"the file, e.g. {comma_conversion(kind, sep)} written back with "
                              "to_csv), or a domain or hierarchy declared that lists them as text")


def warn_text_among_numbers(frame: pd.DataFrame, columns, *, file=None,
                            declared=()) -> list:
    """Warn where one of ``columns`` (a table's QIs and sensitive columns,
    read whole) holds numbers and a few cells of text (at most one cell in
    ten), so that the whole column is read as text: categories without the
    numbers' order, a QI generalized to '*' instead of to ranges (H105: one
    'old' among 5,226 ages gave msa an information loss near 1 and no word of
    why).  One line per column, naming the file, the column and its first
    text cell with its row; columns of ``declared`` (a domain or hierarchy
    lists their values as text) are left alone.  Returns the columns
    warned about."""
    import warnings
    from ..encode import _no_number, _shown
    warned = []
    for c in columns:
        if c not in frame.columns or c in declared:
            continue
        col = frame[c]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            continue
        cells = col.to_numpy(dtype=object)
        present = np.flatnonzero(~pd.isna(cells))
        # each distinct value tested once (a file's cells are text), and no
        # further than a tenth of the cells in text (a column of names is
        # let go early)
        try:
            codes, uniq = pd.factorize(cells[present])
        except TypeError:       # lists or maps: refused as no plain values, later
            continue
        uniq = np.asarray(uniq, dtype=object)
        counts, limit, n = np.bincount(codes, minlength=len(uniq)), len(present) / 10, 0
        text_u = np.zeros(len(uniq), dtype=bool)
        no = _no_number(numeric_text=True)      # the rule of refuse_not_numeric
        for j in range(len(uniq)):
            if no(uniq[j]):
                text_u[j], n = True, n + int(counts[j])
                if n > limit:
                    break
        if not n or n > limit:
            continue
        text = text_u[codes]
        i = int(present[np.flatnonzero(text)[0]])
        where = f"{str(file)!r}: " if file is not None else ""
        first = f"{_shown(cells[i])!r} at {row_name(i)}"
        which = f"1 cell of text ({first})" if n == 1 else \
            f"{n:,} cells of text (the first {first})"
        warnings.warn(f"{where}column {c!r}: holds numbers and {which}, so it is read as "
                      "text: categories without the numbers' order (a quasi-identifier "
                      "generalized to '*', not to ranges); correct or clear "
                      f"{'that cell' if n == 1 else 'those cells'} to have the column read "
                      "as numbers", UserWarning, stacklevel=2)
        warned.append(c)
    return warned


def type_text_column(values: np.ndarray, declared=()) -> pd.Series:
    """A text column typed by :func:`text_type`; missing markers become
    missing values, except those ``declared`` values of the column (a
    domain or hierarchy listing 'NA' for North America)."""
    miss = is_missing_text(values)
    if len(declared) and miss.any():
        keep = {str(v) for v in declared}
        miss &= ~np.fromiter((v in keep for v in values), dtype=bool, count=len(values))
    present = values[~miss]
    kind = text_type(present)
    if kind == "int" and len(present):
        try:
            if miss.any():
                return pd.Series(pd.array([None if m else int(v) for v, m in zip(values, miss)],
                                          dtype="Int64"))
            return pd.Series(present.astype(np.int64))
        except (OverflowError, TypeError, ValueError):
            # beyond int64 (18446744073709551615: H129, a traceback): as
            # uint64 where they fit, else Python ints
            try:
                if not miss.any():
                    return pd.Series(present.astype(np.uint64))
            except (OverflowError, ValueError):
                pass
            return pd.Series([None if m else int(v) for v, m in zip(values, miss)],
                             dtype=object)
    if kind != "str" and len(present):
        return pd.Series(np.where(miss, "nan", values).astype(np.float64))
    out = values.copy()
    out[miss] = None
    return pd.Series(out, dtype=object)


def read_typed(path, fmt, *, text_columns=(), columns=None, declared=None,
               numbers=()) -> pd.DataFrame:
    """A whole file as a typed frame (for the in-memory partition publishers
    and the audit): CSV columns typed by :func:`type_text_column` over the
    whole file, except ``text_columns``, kept as exact text; ``declared``:
    per column, the values its declared domain or hierarchy lists (a
    missing-value marker among them is a value); ``numbers``: columns
    refused where they hold numbers written with commas
    (:func:`check_point_numbers`; not those ``declared``)."""
    frame = read_table(path, fmt, columns=columns)
    cols = list(frame.columns)
    if len(set(cols)) != len(cols):         # named by its file on every reader (H74)
        from ..validate import check_columns
        check_columns(cols, file=path)
    if fmt != "csv":
        return frame
    keep, declared = set(text_columns), dict(declared or {})
    for c in numbers:
        if c in frame.columns and c not in keep and c not in declared:
            check_point_numbers(frame[c].to_numpy(dtype=object), c, file=path)
    return pd.DataFrame({c: frame[c] if c in keep else
                         type_text_column(frame[c].to_numpy(dtype=object), declared.get(c, ()))
                         for c in frame.columns})
