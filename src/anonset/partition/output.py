"""Writing partition releases (papers 002, 003): each table atomically, as
CSV (optionally compressed; text cells a spreadsheet would run get a leading
``'``) or Parquet, the release's metadata -- key mode,
row order, pass-through columns, the model -- in the Parquet file's schema
metadata under ``anonset``, or for CSV in ``<table>.anonset.json`` beside the
main table (with each column's type, so that the audit reads the same frame
back), and never over an input file.
"""
from __future__ import annotations

import contextlib

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..io.published import CSV_META_SUFFIX     # the file beside a CSV, as for set tables
from ..validate import InputError

__all__ = ["format_of", "check_csv_name", "write_tables", "read_metadata", "read_csv_release",
           "csv_metadata"]

def format_of(path) -> str:
    """'parquet' or 'csv' from an output's name (``.csv``, ``.csv.gz``,
    ``.csv.bz2``, ``.csv.xz`` or ``.parquet``); a name of a format or a
    compression anonset does not write is refused before any work."""
    from ..io.tables import CSV_OUTPUT_COMPRESSIONS, refuse_tsv_output
    refuse_tsv_output(path)
    name = str(path).lower()
    if name.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if name.endswith(".csv") or any(name.endswith(".csv" + s) for s in CSV_OUTPUT_COMPRESSIONS):
        return "csv"
    raise InputError("names no format anonset writes", file=path, param="output",
                     expected="a name ending in .parquet, .csv, .csv.gz, .csv.bz2 or .csv.xz")


def check_csv_name(path) -> None:
    """A CSV output (also one whose format was named) is written through no
    compression anonset does not write (a .zip, a .zst):
    :func:`anonset.io.tables.check_csv_output`."""
    from ..io.tables import check_csv_output
    check_csv_output(path)


def write_tables(jobs, *, format: str | None = None, metadata: dict | None = None,
                 protect=(), outputs=None, remove=()) -> list:
    """Write ``[(path, frame), ...]`` as one unit (:class:`~anonset.io.atomic.Outputs`:
    all written, then moved into place together); refuse before writing
    anything when a path is one of ``protect`` (the inputs).  ``outputs``:
    a release these tables belong to (it moves them with its other
    files); ``remove``: files of the release they replace to remove then.
    Returns the paths written.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "t.parquet")
    >>> _ = write_tables([(p, pd.DataFrame({"a": [1]}))], metadata={"key": "os"})
    >>> read_metadata(p)["key"]
    'os'
    """
    from ..io.atomic import Outputs, check_name_lengths, same_file
    jobs = [(Path(p), f) for p, f in jobs]
    # every name first: a bucket table's longer name must not fail after
    # the main table was written
    check_name_lengths([p for p, _ in jobs] + ([Path(str(jobs[0][0]) + CSV_META_SUFFIX)]
                                               if jobs and metadata else []))
    for p, _ in jobs:
        if (format or format_of(p)) == "csv":
            check_csv_name(p)
        for inp in protect:
            if inp is not None and same_file(p, inp):
                raise ValueError(f"output {str(p)!r} is the input file; choose another name "
                                 "(the input is never overwritten)")
    if jobs and metadata:
        warn_replaced_partition(jobs[0][0], format or format_of(jobs[0][0]), metadata)
    own = outputs is None
    outs = Outputs(protect=protect) if own else outputs
    if not own:
        outs.protect += [p for p in protect if p is not None]
    written = []
    with (outs if own else contextlib.nullcontext(outs)):
        for p in remove:
            outs.remove(p)
        for i, (p, frame) in enumerate(jobs):
            fmt = format or format_of(p)
            if fmt == "parquet":
                _to_parquet(frame, outs.path(p), metadata, name=p)
            elif i == 0 and metadata:
                # the main table and its metadata file: one unit
                side = Path(str(p) + CSV_META_SUFFIX)
                tmp = outs.path(p, beside=[side])
                tside = outs.path(side)
                _to_csv(frame, tmp, p)
                meta = {**metadata, "csv": {"escape": "owasp-quote",
                                            "columns": {str(c): _kind(frame[c])
                                                        for c in frame.columns}}}
                Path(tside).write_text(json.dumps(meta, default=str, indent=1) + "\n",
                                       encoding="utf-8")
                written += [p, side]
                continue
            else:
                _to_csv(frame, outs.path(p), p)
            written.append(p)
    return written


def _to_csv(frame: pd.DataFrame, tmp, path: Path) -> None:
    from ..io.published import csv_safe_frame
    from ..io.tables import csv_output
    with csv_output(tmp, path) as f:
        csv_safe_frame(frame, file=path).to_csv(f, index=False)


def _kind(col: pd.Series) -> str:
    """How a CSV column reads back: 'int', 'Int64' (nullable), 'float',
    'bool', 'boolean' (nullable) or 'str'."""
    t = col.dtype
    if pd.api.types.is_bool_dtype(t):
        return "boolean" if isinstance(t, pd.BooleanDtype) else "bool"
    if pd.api.types.is_integer_dtype(t):
        return "Int64" if isinstance(t, pd.api.extensions.ExtensionDtype) else "int"
    if pd.api.types.is_float_dtype(t):
        return "float"
    if t == object:
        inferred = pd.api.types.infer_dtype(col, skipna=True)
        return {"integer": "int", "floating": "float", "mixed-integer-float": "float",
                "boolean": "bool"}.get(inferred, "str")
    return "str"


def csv_metadata(path) -> dict:
    """The metadata beside a CSV partition release ({} when it has none, or
    when the file beside it is not a partition release's)."""
    side = Path(str(path) + CSV_META_SUFFIX)
    if not side.is_file():
        return {}
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) and "csv" in meta and "paper" in meta else {}


def read_csv_release(path) -> tuple:
    """(metadata, frame) of a CSV partition release written by
    :func:`write_tables`: every column typed as it was written, text cells
    and headers unescaped."""
    from ..io.published import _unescape_header, csv_unescape
    from ..validate import InputError
    meta = csv_metadata(path)
    if not meta:
        raise InputError("has no partition metadata beside it", file=path,
                         expected=f"the {CSV_META_SUFFIX} that lgb or msa-anonymize wrote "
                                  "beside the CSV")
    kinds = meta["csv"]["columns"]
    raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    raw.columns = [_unescape_header(c) for c in raw.columns]
    lacks = [c for c in kinds if c not in raw.columns]
    if lacks or raw.columns.duplicated().any():
        twice = sorted(set(raw.columns[raw.columns.duplicated()]))
        raise InputError(f"lacks the column(s) {lacks} that its metadata lists" if lacks else
                         f"holds the column(s) {twice} twice", file=path,
                         expected="the CSV as lgb or msa-anonymize wrote it")
    # a column its metadata does not list (an identifier pasted back in) is
    # read as text and left to the audit, which names it (as from Parquet)
    out = {c: pd.Series(csv_unescape(raw[c].to_numpy(dtype=object)), dtype=object)
           for c in raw.columns if c not in kinds}
    extra = dict(out)
    out = {}
    for c, kind in kinds.items():
        text = raw[c].to_numpy(dtype=object)
        if kind == "str":
            out[c] = pd.Series(csv_unescape(text), dtype=object)
            continue
        empty = text == ""
        if kind in ("bool", "boolean"):
            vals = pd.array([None if e else v == "True" for v, e in zip(text, empty)],
                            dtype="boolean")
            out[c] = vals if kind == "boolean" or empty.any() else vals.astype(bool)
            continue
        try:
            num = pd.to_numeric(pd.Series(np.where(empty, None, text)), errors="raise")
        except (ValueError, TypeError):
            raise InputError(f"column {c!r}: holds text where its metadata says {kind}",
                             file=path, expected="the CSV as lgb or msa-anonymize wrote it") \
                from None
        if kind in ("int", "Int64"):
            num = num.astype("Int64") if kind == "Int64" or empty.any() else num.astype(np.int64)
        out[c] = num
    out.update(extra)
    return meta, pd.DataFrame(out)[list(raw.columns)]


def _to_parquet(frame: pd.DataFrame, path, metadata: dict | None, *, name=None) -> None:
    import pyarrow.parquet as pq
    from ..io.published import frame_to_arrow
    table = frame_to_arrow(frame, file=name or path)
    if metadata:
        meta = dict(table.schema.metadata or {})
        meta[b"anonset"] = json.dumps(metadata, default=str).encode()
        table = table.replace_schema_metadata(meta)
    pq.write_table(table, path)


def _protected(meta: dict) -> set:
    """The columns a partition release protects: msa's sensitive attributes,
    LGB's sensitive and semi-sensitive ones."""
    model = meta.get("model") or {}
    if str(meta.get("paper")) == "003":
        return set(model.get("sensitive") or ())
    return {a for a, r in (model.get("attributes") or {}).items() if r != "qi"}


def warn_replaced_partition(path, fmt: str, metadata: dict) -> None:
    """As :func:`anonset.io.published.warn_replaced_release`, for LGB and
    msa: a release of the same paper and protected columns replaced under a
    fresh key draws other groups, which intersect with the earlier ones if
    it was shared.  Not warned of when neither key is fresh (one key file
    reproduces a release)."""
    import warnings
    path = Path(path)
    try:
        if not path.is_file():
            return
        old = read_metadata(path) if fmt == "parquet" else csv_metadata(path)
    except Exception:               # not a release (or unreadable): nothing to intersect
        return
    if str(old.get("paper")) != str(metadata.get("paper")) or \
            "os" not in (old.get("key"), metadata.get("key")):
        return
    shared = sorted(_protected(old) & _protected(metadata))
    if not shared:
        return
    from ..schema import RepeatedReleaseWarning, _outside_stacklevel
    warnings.warn(
        f"{str(path)!r} held a release of the sensitive column(s) {', '.join(shared)} under "
        f"{'a fresh key' if old.get('key') == 'os' else 'another key'}; it is replaced.  If "
        "it was shared, the two draw other groups, which can be intersected (docs/security.md,"
        " repeated releases): one key file reproduces a release (key_file=; --key-file)",
        RepeatedReleaseWarning, stacklevel=_outside_stacklevel())


def read_metadata(path) -> dict:
    """The ``anonset`` metadata of a Parquet release ({} when it has none)."""
    import pyarrow.parquet as pq
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"anonset")
    return json.loads(raw) if raw else {}


def check_partition_metadata(meta: dict, kind: str, path=None) -> None:
    """The fields of an lgb (``kind`` 'lgb') or msa release's metadata that
    its audit reads, each of the type it was written with: a field tampered
    with is refused naming it (H121: a k deleted was audited as k = 1 and
    PASSED; a null k, an l as a list, suppressed cells as text were
    tracebacks), as a set table's metadata is
    (:func:`anonset.io.published.check_metadata`)."""
    from ..io.published import _bad, _is_number, _shown, check_findings, check_mapping, \
        check_names
    model = meta.get("model")
    if not isinstance(model, dict):
        raise _bad(path, "model", "is missing" if model is None else f"is {_shown(model)}",
                   "a mapping (the privacy model)")
    k = model.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise _bad(path, "model.k", "is missing" if "k" not in model else f"is {_shown(k)}",
                   "the k the release was published under (an integer >= 1)")
    if kind == "msa":
        t = model.get("t")
        if not _is_number(t) or not 0 <= t <= 1:
            raise _bad(path, "model.t", "is missing" if "t" not in model else f"is {_shown(t)}",
                       "the t the release was published under (a number in [0, 1])")
        check_names(model.get("quasi_identifiers"), path, "model.quasi_identifiers")
        check_names(model.get("sensitive"), path, "model.sensitive")
        check_mapping(model.get("ground"), path, "model.ground", lambda v: isinstance(v, str),
                      "a ground distance's name")
    else:
        check_mapping(model.get("l"), path, "model.l",
                      lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                      "an integer l >= 1")
        check_mapping(model.get("closeness"), path, "model.closeness",
                      lambda v: _is_number(v) and 0 <= v <= 1, "a number t in [0, 1]")
        check_mapping(model.get("grounds"), path, "model.grounds", lambda v: isinstance(v, str),
                      "a ground distance's name")
        check_mapping(model.get("attributes"), path, "model.attributes",
                      lambda v: isinstance(v, str), "a role (text)")
        check_mapping(meta.get("suppressed"), path, "suppressed",
                      lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                      "a count of cells (an integer >= 0)")
    for field in ("pass_through", "identifiers", "clear", "homogeneous_allowed"):
        check_names(meta.get(field), path, field)
    check_findings(meta.get("pass_through_risks"), path, "pass_through_risks")
