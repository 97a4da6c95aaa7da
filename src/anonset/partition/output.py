"""Writing partition releases (papers 002, 003): each table atomically, as
CSV (optionally compressed; text cells a spreadsheet would run get a leading
``'``) or Parquet, the release's metadata -- key mode,
row order, pass-through columns, the model -- in the Parquet file's schema
metadata under ``anonset``, and never over an input file.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

__all__ = ["format_of", "write_tables", "read_metadata"]

_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}


def format_of(path) -> str:
    """'parquet' or 'csv' from a file name."""
    name = str(path).lower()
    if name.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if name.endswith(".csv") or any(name.endswith(".csv" + s) for s in _COMPRESSION):
        return "csv"
    raise ValueError(f"cannot tell the format of {str(path)!r}: use .csv or .parquet")


def write_tables(jobs, *, format: str | None = None, metadata: dict | None = None,
                 protect=()) -> list:
    """Write ``[(path, frame), ...]``, each atomically; refuse before writing
    anything when a path is one of ``protect`` (the inputs).  Returns the
    paths written.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "t.parquet")
    >>> _ = write_tables([(p, pd.DataFrame({"a": [1]}))], metadata={"key": "os"})
    >>> read_metadata(p)["key"]
    'os'
    """
    from ..io.atomic import atomic_path, same_file
    from ..io.published import csv_safe_frame
    jobs = [(Path(p), f) for p, f in jobs]
    for p, _ in jobs:
        for inp in protect:
            if inp is not None and same_file(p, inp):
                raise ValueError(f"output {str(p)!r} is the input file; choose another name "
                                 "(the input is never overwritten)")
    written = []
    for p, frame in jobs:
        fmt = format or format_of(p)
        with atomic_path(p, protect=protect) as tmp:
            if fmt == "parquet":
                _to_parquet(frame, tmp, metadata)
            else:
                csv_safe_frame(frame).to_csv(tmp, index=False,
                                             compression=_COMPRESSION.get(p.suffix.lower()))
        written.append(p)
    return written


def _to_parquet(frame: pd.DataFrame, path, metadata: dict | None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        meta = dict(table.schema.metadata or {})
        meta[b"anonset"] = json.dumps(metadata, default=str).encode()
        table = table.replace_schema_metadata(meta)
    pq.write_table(table, path)


def read_metadata(path) -> dict:
    """The ``anonset`` metadata of a Parquet release ({} when it has none)."""
    import pyarrow.parquet as pq
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"anonset")
    return json.loads(raw) if raw else {}
