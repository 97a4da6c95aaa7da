"""Publishing and reconstruction of files larger than memory, chunk by chunk.

Every published cell is a pure function of (key, global row index, attribute
stream id) (see :func:`anonset.randomize.sample_sets`), so publishing a file
chunk by chunk, with each chunk's first global row index as ``row0``, gives
exactly the sets that :func:`anonset.publish` gives for the whole table under
the same key.  What a chunked run cannot see in one chunk is computed in a
first pass over only the columns that need it:

* domains that are not declared (inferred from the union of values, as
  :meth:`Schema.infer` does on the whole table);
* the distribution A_j of each sensitive attribute, which closeness needs to
  optimize (p_j, eta_j) (paper 000, Algorithm 1) and to check given params.

Memory is bounded by ``chunk_rows`` (plus, in the first pass, the distinct
values of the inferred columns), never by the file size.  Outputs are written
atomically (a temporary file beside the target, renamed at the end): a Parquet
file of one row group per chunk with the same columns and ``b"anonset"``
metadata as :meth:`SetTable.to_parquet`, or a CSV with ``{a|b|c}`` cells and
its ``.anonset.json`` as :meth:`SetTable.to_csv` (the CSV text is
byte-identical to the in-memory writer's).

Reconstruction reads only the chosen attributes' columns, chunk by chunk, and
adds up what every method needs: the counts w of eq. 17 ('em',
'value_adding'), or the distinct set tuples with their multiplicities
('exact_em').  Both are sums of integers, so the estimate is exactly the
in-memory one.  See docs/scaling.md.
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import json
import lzma
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..randomized import _kernels
from .atomic import atomic_path
from .keys import check_rng, make_key
from ..randomized.crosstab import CrossTab
from ..encode import encode, encode_column
from ..models import Closeness, DiversityCloseness
from ..randomized.params import AttributeParams, optimize
from ..randomized.publish import check_params, sample_sets
from ..schema import Schema, _infer_domain, _scalar
from ..randomized.settable import CSV_META_SUFFIX, FORMAT_VERSION, META_KEY, SetTable

__all__ = ["publish_file", "reconstruct_file", "read_metadata", "StreamResult",
           "DEFAULT_CHUNK_ROWS"]

#: Rows per chunk by default.  At 10 sensitive attributes with eta = 5 a chunk
#: of 2^18 rows holds about 110 MiB of codes, bitmasks and Arrow list values;
#: larger chunks gain < 5 % throughput on the 2-core dev VM (docs/scaling.md).
DEFAULT_CHUNK_ROWS = 1 << 18

_PARQUET = (".parquet", ".pq", ".parq")
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: pandas' default missing-value markers (kept for every column but text ones).
_NA_MARKERS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
               "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


@dataclass
class StreamResult:
    """What :func:`publish_file` wrote.

    Attributes
    ----------
    path : Path
    schema : Schema       the published schema (identifiers removed)
    params : dict         name -> AttributeParams
    model : dict          the privacy model, as ``model.to_dict()``
    n_rows : int
    chunks : int          chunks of the publishing pass
    passes : int          1, or 2 when domains or A_j needed a first pass
    info : dict
    """

    path: Path
    schema: Schema
    params: dict
    model: dict
    n_rows: int
    chunks: int
    passes: int
    info: dict = field(default_factory=dict)
    source_schema: Schema | None = None     # the input's schema, identifiers included

    def metadata(self) -> dict:
        return _metadata(self.schema, self.params, self.model, self.n_rows, self.info)


def _metadata(schema, params, model, n_rows, info) -> dict:
    # the same dict as SetTable.metadata(), key for key
    return {"format": "anonset.SetTable", "version": FORMAT_VERSION,
            "schema": schema.to_dict(), "params": {k: v.to_dict() for k, v in params.items()},
            "model": dict(model), "n_rows": int(n_rows), "info": dict(info)}


# ====================================================================== input
def file_format(path, fmt=None) -> str:
    """'parquet' or 'csv', from ``fmt`` or the file name."""
    if fmt is not None:
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"format must be 'csv' or 'parquet', got {fmt!r}")
        return fmt
    name = str(path).lower()
    if name.endswith(_PARQUET):
        return "parquet"
    if ".csv" in Path(name).name:
        return "csv"
    raise ValueError(f"cannot tell the format of {str(path)!r} from its name; pass format=")


def _check_chunk_rows(chunk_rows) -> int:
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    return int(chunk_rows)


def _csv_header(path) -> list:
    try:
        return list(pd.read_csv(path, nrows=0).columns)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{str(path)!r} is empty (no header line)") from None


def _csv_kwargs(header, text_columns) -> dict:
    """Pass-through and identifier columns are read as text, exactly (a zip
    code '007' stays '007', as the CLI reads them); the others are parsed."""
    text = [c for c in header if c in set(text_columns)]
    if not text:
        return {}
    return {"dtype": {c: str for c in text}, "keep_default_na": False,
            "na_values": {c: _NA_MARKERS for c in header if c not in text}}


def _columns(path, fmt) -> list:
    if fmt == "parquet":
        import pyarrow.parquet as pq
        return list(pq.ParquetFile(path).schema_arrow.names)
    return _csv_header(path)


def iter_chunks(path, fmt, columns, chunk_rows, text_columns=()):
    """DataFrames of at most ``chunk_rows`` rows holding ``columns``, in file order."""
    if fmt == "parquet":
        import pyarrow.parquet as pq
        f = pq.ParquetFile(path)
        for batch in f.iter_batches(batch_size=chunk_rows, columns=list(columns),
                                    use_threads=True):
            yield batch.to_pandas()
        return
    header = _csv_header(path)
    kw = _csv_kwargs(header, text_columns)
    try:
        reader = pd.read_csv(path, usecols=list(columns), chunksize=chunk_rows, **kw)
        with reader:
            for chunk in reader:
                yield chunk[list(columns)].reset_index(drop=True)
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise ValueError(f"{str(path)!r} is not a readable CSV file: {e}") from None


def _n_rows(path, fmt):
    if fmt == "parquet":
        import pyarrow.parquet as pq
        return pq.ParquetFile(path).metadata.num_rows
    return None


def first_rows(path, fmt=None, text_columns=(), n=4096) -> pd.DataFrame:
    """The first ``n`` rows of a CSV or Parquet file, read as a chunk is."""
    return _first_chunk(path, file_format(path, fmt), n, text_columns)


def _first_chunk(path, fmt, chunk_rows, text_columns):
    cols = _columns(path, fmt)
    for chunk in iter_chunks(path, fmt, cols, min(chunk_rows, 65536), text_columns):
        return chunk
    raise ValueError(f"{str(path)!r} is empty: nothing to publish")


class _CodesFromCounts(Mapping):
    """Codes with given per-value counts, made on demand one attribute at a
    time: what optimize() / check_params() need from a column is its
    bincount (A_j), so the whole column is never held."""

    def __init__(self, counts):
        self._counts = counts

    def __getitem__(self, name):
        c = self._counts[name]
        return np.repeat(np.arange(len(c), dtype=np.int32), c)

    def __iter__(self):
        return iter(self._counts)

    def __len__(self):
        return len(self._counts)


def needs_distribution(model) -> bool:
    """Closeness needs each attribute's distribution A_j (Algorithm 1, eq. 12)."""
    return isinstance(model, (Closeness, DiversityCloseness))


class ColumnStats:
    """What a first pass learns from some rows: their number, the distinct
    values (with counts) of the columns whose domain is inferred, and the
    value counts of the columns whose distribution A_j closeness needs.

    Mergeable (chunks of a file, partitions of a Dask DataFrame); the result
    does not depend on how the rows were split."""

    def __init__(self, schema, need_domain, need_counts, missing="error"):
        self.schema, self.missing = schema, missing
        self.need_domain, self.need_counts = list(need_domain), list(need_counts)
        self.n = 0
        self.seen = {c: {} for c in self.need_domain}
        self.nan = {c: 0 for c in self.need_domain}
        self.counts = {c: np.zeros(schema[c].d, dtype=np.int64) for c in self.need_counts
                       if c not in self.need_domain}

    @property
    def columns(self) -> list:
        cols = set(self.need_domain) | set(self.need_counts)
        return [c for c in self.schema.names if c in cols]

    def add(self, chunk, row0=None):
        row0 = self.n if row0 is None else row0
        for c in self.need_domain:
            vc = chunk[c].value_counts(dropna=True, sort=False)
            acc = self.seen[c]
            for v, k in zip(vc.index.tolist(), vc.to_numpy().tolist()):
                v = _scalar(v)
                acc[v] = acc.get(v, 0) + k
            self.nan[c] += int(chunk[c].isna().sum())
        for c in self.counts:
            try:
                codes = encode_column(chunk[c].reset_index(drop=True), self.schema[c],
                                      missing=self.missing)
            except ValueError as e:
                raise ValueError(f"rows {row0:,}-{row0 + len(chunk) - 1:,}: {e}") from None
            self.counts[c] += np.bincount(codes, minlength=self.schema[c].d)
        self.n += len(chunk)
        return self

    def merge(self, other: "ColumnStats"):
        self.n += other.n
        for c in self.need_domain:
            acc = self.seen[c]
            for v, k in other.seen[c].items():
                acc[v] = acc.get(v, 0) + k
            self.nan[c] += other.nan[c]
        for c in self.counts:
            self.counts[c] += other.counts[c]
        return self

    def finish(self):
        """(schema with the inferred domains, {name: value counts}, rows)."""
        schema, counts = self.schema, dict(self.counts)
        for c in self.need_domain:
            seen, nan = self.seen[c], self.nan[c]
            if not seen and not nan:
                raise ValueError(f"column {c!r}: cannot infer a domain from a column with no "
                                 "values")
            if nan and self.missing == "error":
                raise ValueError(f"column {c!r} has {nan} missing value(s); drop them, or pass "
                                 "missing='category' with '?' in the domain")
            # as Schema.infer does on the whole column
            dom = _infer_domain(pd.Series(list(seen), dtype=object), c) if seen else []
            if self.missing == "category" and nan and "?" not in dom:
                dom = list(dom) + ["?"]
            schema = schema.replace(c, domain=tuple(dom))
            if c in self.need_counts:
                index = {v: i for i, v in enumerate(schema[c].domain)}
                cnt = np.zeros(len(dom), dtype=np.int64)
                for v, k in seen.items():
                    cnt[index[v]] += k
                if nan:
                    cnt[index["?"]] += nan
                counts[c] = cnt
        return schema, counts, self.n


def _first_pass(path, fmt, schema, need_domain, need_counts, chunk_rows, missing, text_columns):
    """One pass over the needed columns only: inferred domains and value counts."""
    stats = ColumnStats(schema, need_domain, need_counts, missing)
    cols = stats.columns or [schema.names[0]]       # row count only
    for chunk in iter_chunks(path, fmt, cols, chunk_rows, text_columns):
        stats.add(chunk)
    return stats.finish()


def resolve_params(model, schema, counts, params=None, clip_l=False):
    """(p_j, eta_j) from value counts: optimized, or given and checked."""
    codes_like = _CodesFromCounts(counts)
    if params is None:
        return optimize(model, schema.published, codes_like, clip_l=clip_l)
    return check_params(params, model, schema.published, codes_like, clip_l=clip_l)


# ==================================================================== publish
def publish_file(in_path, out_path, model, schema: Schema | None = None, *,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, seed=None, rng: str = "chacha20",
                 n_threads: int | None = None, missing: str = "error", clip_l: bool = False,
                 params=None, in_format: str | None = None, out_format: str | None = None,
                 protect=(), **infer) -> StreamResult:
    """Publish a CSV or Parquet file chunk by chunk (paper 000, Sec. V-B).

    For a given key (``seed``) the published sets, parameters and metadata are
    those of ``anonset.publish`` on the whole table, whatever ``chunk_rows``.

    Parameters
    ----------
    in_path, out_path : path
        Input table and published table (.parquet or .csv; the CSV gets its
        ``.anonset.json`` beside it).  The input is never overwritten.
    model : Diversity | Anonymity | Closeness | DiversityCloseness
    schema : Schema, optional
        Roles and domains.  When omitted, the roles come from ``**infer``
        (as :meth:`Schema.infer`) and undeclared domains from a first pass
        over those columns only.
    chunk_rows : int
        Rows per chunk (memory is proportional to it).
    seed, rng, n_threads, missing, clip_l, params
        As :func:`anonset.publish`.
    in_format, out_format : {'csv', 'parquet'}, optional
        Default: from the file names.

    Returns
    -------
    StreamResult

    Examples
    --------
    >>> import pandas as pd, tempfile, os, anonset
    >>> from anonset.stream import publish_file
    >>> d = tempfile.mkdtemp()
    >>> pd.DataFrame({"job": list("abcab"), "city": list("xyxyz")}).to_csv(
    ...     os.path.join(d, "in.csv"), index=False)
    >>> r = publish_file(os.path.join(d, "in.csv"), os.path.join(d, "out.parquet"),
    ...                  anonset.Diversity(2), chunk_rows=2, seed=1)
    >>> r.n_rows, r.chunks, r.passes
    (5, 3, 2)
    >>> t = anonset.read_parquet(os.path.join(d, "out.parquet"))
    >>> t.equals(anonset.publish(pd.read_csv(os.path.join(d, "in.csv")),
    ...                          anonset.Diversity(2), seed=1))
    True
    """
    chunk_rows = _check_chunk_rows(chunk_rows)
    check_rng(rng)
    if missing not in ("error", "category"):
        raise ValueError(f"missing must be 'error' or 'category', got {missing!r}")
    in_path, out_path = Path(in_path), Path(out_path)
    if not in_path.is_file():
        raise FileNotFoundError(f"input file {str(in_path)!r} does not exist")
    fin = file_format(in_path, in_format)
    fout = file_format(out_path, out_format)
    protect = [in_path, *protect]

    # ---- roles and declared domains
    text_columns = list(infer.get("other", ())) + list(infer.get("identifiers", ()))
    if schema is None:
        first = _first_chunk(in_path, fin, chunk_rows, text_columns)
        base = Schema.infer(first, missing=missing, **infer)
        need_domain = [a.name for a in base.published if a.inferred]
        del first
    else:
        if infer:
            raise ValueError(f"give either a schema or inference options, not both "
                             f"(got {sorted(infer)})")
        base, need_domain = schema, []
        text_columns = [a.name for a in schema if a.role in ("other", "identifier")]
    cols = _columns(in_path, fin)
    for a in base:
        if a.name not in cols:
            raise ValueError(f"column {a.name!r} of the schema is not in the data")
    if not base.published:
        raise ValueError("no sensitive or exact attribute to publish")
    need_counts = [a.name for a in base.sensitive] if needs_distribution(model) else []

    # ---- first pass: only the columns that need it
    n_rows = _n_rows(in_path, fin)
    passes = 1
    counts = {}
    if need_domain or need_counts or n_rows is None:
        base, counts, n_rows = _first_pass(in_path, fin, base, need_domain, need_counts,
                                           chunk_rows, missing, text_columns)
        passes = 2
    if n_rows == 0:
        raise ValueError("the table is empty: nothing to publish")
    params = resolve_params(model, base, counts, params, clip_l)
    keep = Schema(tuple(a for a in base if a.role != "identifier"))
    info = {"rng": rng, "seeded": seed is not None}
    read_cols = [a.name for a in base if a.role != "identifier"]

    key = make_key(seed, research_seed=True)  # seed policy: enforced by the engine (issue 13)
    sink_cls = _ParquetSink if fout == "parquet" else _CsvSink
    meta = _metadata(keep, params, model.to_dict(), n_rows, info)
    row0, chunks = 0, 0
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(atomic_path(out_path, protect=protect))
        meta_tmp = stack.enter_context(atomic_path(Path(str(out_path) + CSV_META_SUFFIX),
                                                   protect=protect)) if fout == "csv" else None
        sink = sink_cls(tmp, keep, params, meta, out_path)
        try:
            for chunk in iter_chunks(in_path, fin, read_cols, chunk_rows, text_columns):
                part = publish_chunk(chunk, base, params, key, row0, rng=rng, missing=missing,
                                     n_threads=n_threads, model=model.to_dict(), info=info)
                row0 += len(chunk)
                del chunk
                sink.write(part)
                del part
                chunks += 1
        finally:
            sink.close()
        if row0 != n_rows:
            raise ValueError(f"{str(in_path)!r} changed while it was read: "
                             f"{n_rows:,} rows in the first pass, {row0:,} in the second")
        if meta_tmp is not None:
            meta["csv_dtypes"] = sink.dtypes
            meta_tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    del key
    return StreamResult(out_path, keep, params, model.to_dict(), n_rows, chunks, passes, info,
                        base)


def publish_chunk(frame, schema: Schema, params, key: bytes, row0: int, *, rng="chacha20",
                  missing="error", n_threads=None, model=None, info=None) -> SetTable:
    """Publish rows ``row0 .. row0 + len(frame) - 1`` of a table (a chunk or
    a partition): the rows of ``anonset.publish`` on the whole table under the
    same key, parameters and (full) schema."""
    frame = frame.reset_index(drop=True)
    if len(frame) == 0:
        masks = {a.name: np.zeros((0, (a.d + 63) // 64), dtype=np.uint64)
                 for a in schema.published}
    else:
        try:
            codes = encode(frame, schema, missing=missing)
        except ValueError as e:
            raise ValueError(f"rows {row0:,}-{row0 + len(frame) - 1:,}: {e}") from None
        ids = {a.name: schema.stream_id(a.name) for a in schema.published}
        masks = sample_sets(codes, params, ids, key, rng=rng, row0=row0, n_threads=n_threads)
        del codes
    keep = Schema(tuple(a for a in schema if a.role != "identifier"))
    other_names = [a.name for a in keep if a.role == "other"]
    other = frame[other_names] if other_names else None
    return SetTable(keep, masks, params, model, other, info)


def _domain_array(a):
    import pyarrow as pa
    return pa.array(list(a.domain))


def settable_to_arrow(table: SetTable, n_threads=None):
    """The Arrow table that :meth:`SetTable.to_parquet` writes, without metadata."""
    import pyarrow as pa
    arrays, names = [], []
    nt = 0 if n_threads is None else int(n_threads)
    for a in table.schema:
        if a.name in table.params:
            eta = table.params[a.name].eta
            mem = _kernels.members(table.mask(a.name), a.d, eta, n_threads=nt)
            vals = _domain_array(a).take(pa.array(mem.ravel()))
            del mem
            if table.params[a.name].exact:
                arrays.append(vals)
            else:
                offsets = pa.array(np.arange(0, table.n_rows * eta + 1, eta, dtype=np.int32))
                arrays.append(pa.ListArray.from_arrays(offsets, vals))
        elif a.name in table.other.columns:
            arrays.append(pa.array(table.other[a.name]))
        else:
            continue
        names.append(a.name)
    return pa.Table.from_arrays(arrays, names=names)


class _ParquetSink:
    """Chunks to one Parquet file: a row group per chunk, the schema fixed by
    the first chunk (later chunks are cast to it)."""

    def __init__(self, tmp, schema, params, meta, final):
        self.tmp, self.meta, self.final = tmp, meta, final
        self.writer = None
        self.schema = None

    def write(self, table: SetTable):
        import pyarrow as pa
        import pyarrow.parquet as pq
        t = settable_to_arrow(table)
        if self.writer is None:
            meta = {META_KEY: json.dumps(self.meta).encode("utf-8")}
            self.schema = t.schema.with_metadata(meta)
            self.writer = pq.ParquetWriter(self.tmp, self.schema)
        t = t.replace_schema_metadata(self.schema.metadata)
        if t.schema != self.schema:
            try:
                t = t.cast(self.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise ValueError(f"a pass-through column changed type between chunks ({e}); "
                                 "declare its type, or read it as text") from None
        self.writer.write_table(t, row_group_size=max(1, t.num_rows))

    def close(self):
        if self.writer is not None:
            self.writer.close()


class _CsvSink:
    """Chunks to one CSV with {a|b|c} cells: the text of SetTable.to_csv."""

    def __init__(self, tmp, schema, params, meta, final):
        suffix = Path(final).suffix.lower()
        if suffix in (".zip", ".zst"):
            raise ValueError(f"{str(final)!r}: streamed CSV output can be plain, .gz, .bz2 or .xz")
        opener = _OPENERS.get(suffix)
        self.f = opener(tmp, "wt", newline="") if opener else open(tmp, "w", newline="")
        self.header = True
        self.dtypes = None
        self.labels = {}
        for a in schema.published:
            labels = np.array([str(v) for v in a.domain], dtype=object)
            bad = [v for v in labels if set("{}|") & set(v)]
            if bad:
                self.f.close()
                raise ValueError(f"attribute {a.name!r}: value {bad[0]!r} contains one of "
                                 "'{', '|', '}', which the CSV set notation reserves; use Parquet")
            self.labels[a.name] = labels

    def write(self, table: SetTable):
        frame = pd.DataFrame()
        for a in table.schema:
            if a.name in table.params:
                mem = self.labels[a.name][table.members(a.name)]
                if table.params[a.name].exact:
                    frame[a.name] = mem[:, 0]
                else:
                    frame[a.name] = ["{" + "|".join(r) + "}" for r in mem.tolist()]
            elif a.name in table.other.columns:
                frame[a.name] = table.other[a.name].to_numpy()
        if self.dtypes is None:
            self.dtypes = {c: str(table.other[c].dtype) for c in table.other.columns}
        frame.to_csv(self.f, index=False, header=self.header)
        self.header = False

    def close(self):
        self.f.close()


# ================================================================ reconstruct
def read_metadata(path, fmt=None) -> dict:
    """The anonset metadata of a published Parquet or CSV file, without its rows."""
    path = Path(path)
    fmt = file_format(path, fmt)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            raw = (pq.ParquetFile(path).schema_arrow.metadata or {}).get(META_KEY)
        except (pa.ArrowInvalid, OSError) as e:
            raise ValueError(f"{str(path)!r} is not a readable Parquet file: {e}") from None
        if raw is None:
            raise ValueError(f"{str(path)!r} has no anonset metadata: not a published SetTable")
        meta = json.loads(raw.decode("utf-8"))
    else:
        mp = Path(str(path) + CSV_META_SUFFIX)
        if not mp.exists():
            raise ValueError(f"{str(mp)!r} is missing: a CSV SetTable needs its metadata file")
        meta = json.loads(mp.read_text(encoding="utf-8"))
    if meta.get("format") != "anonset.SetTable":
        raise ValueError("not an anonset SetTable (metadata missing or of another format)")
    if int(meta.get("version", 0)) > FORMAT_VERSION:
        raise ValueError(f"SetTable format version {meta.get('version')} is newer than this "
                         f"anonset understands ({FORMAT_VERSION})")
    return meta


class TableHeader:
    """What reconstruction needs of a SetTable besides its sets: schema,
    parameters, model and row count (the w counts are given separately)."""

    def __init__(self, schema, params, model, n_rows, info=None):
        self.schema, self.params, self.model = schema, dict(params), dict(model or {})
        self.n_rows, self.info = int(n_rows), dict(info or {})

    @classmethod
    def from_metadata(cls, meta):
        return cls(Schema.from_dict(meta["schema"]),
                   {k: AttributeParams.from_dict(v) for k, v in meta["params"].items()},
                   meta.get("model"), meta["n_rows"], meta.get("info"))

    @property
    def names(self):
        return [a.name for a in self.schema.published]


def _masks_from_fixed(codes, n, k, d):
    """Bitmasks from an (n * k) code array where every row has k members."""
    words = (d + 63) // 64
    codes = np.asarray(codes, dtype=np.int64).reshape(n, k)
    out = np.zeros((n, words), dtype=np.uint64)
    for w in range(words):
        c = codes - 64 * w
        inside = (c >= 0) & (c < 64)
        bits = np.where(inside, np.left_shift(np.uint64(1), np.clip(c, 0, 63).astype(np.uint64)),
                        np.uint64(0))
        out[:, w] = np.bitwise_or.reduce(bits, axis=1)
    return out


def _column_masks(col, attr, where):
    """Bitmasks of one published column chunk (Arrow list or value column)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from ..randomized.settable import masks_from_codes
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    n = len(col)
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
        flat = pc.list_flatten(col)
    else:
        lengths = None
        flat = col
    dom = _domain_array(attr)
    if flat.type != dom.type:
        try:
            flat = flat.cast(dom.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            flat = pa.array([str(v) for v in flat.to_pylist()])
            dom = pa.array([str(v) for v in attr.domain])
    idx = pc.index_in(flat, value_set=dom)
    if idx.null_count:
        bad = flat.filter(pc.is_null(idx))[0].as_py()
        raise ValueError(f"{where}: column {attr.name!r} holds {bad!r}, which is not in its "
                         "published domain")
    codes = idx.to_numpy(zero_copy_only=False)
    if lengths is None:
        return _masks_from_fixed(codes, n, 1, attr.d)
    if n and (lengths == lengths[0]).all():
        return _masks_from_fixed(codes, n, int(lengths[0]), attr.d)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return masks_from_codes(codes, offsets, attr.d)


def _csv_masks(series, attr, where):
    """Bitmasks of one CSV column chunk of {a|b|c} cells (or plain values)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    s = pa.array(series.astype(str).to_numpy(dtype=object), type=pa.string())
    braced = pc.and_(pc.starts_with(s, "{"), pc.ends_with(s, "}"))
    inner = pc.if_else(braced, pc.utf8_slice_codeunits(s, 1, -1), s)
    lists = pc.split_pattern(inner, "|")
    col = pa.ListArray.from_arrays(lists.offsets, lists.values)
    lab = _StrAttr(attr)
    return _column_masks(col, lab, where)


class _StrAttr:
    """An attribute seen through its text labels (CSV cells are text)."""

    def __init__(self, attr):
        self.name, self.d = attr.name, attr.d
        self.domain = tuple(str(v) for v in attr.domain)


def iter_masks(path, attributes, *, chunk_rows=DEFAULT_CHUNK_ROWS, fmt=None, meta=None):
    """Bitmasks of the chosen attributes, one chunk at a time:
    yields ``(row0, [mask of each attribute])``."""
    path = Path(path)
    fmt = file_format(path, fmt)
    meta = meta or read_metadata(path, fmt)
    schema = Schema.from_dict(meta["schema"])
    attrs = [schema[a] for a in attributes]
    row0 = 0
    if fmt == "parquet":
        import pyarrow.parquet as pq
        f = pq.ParquetFile(path)
        for batch in f.iter_batches(batch_size=chunk_rows, columns=list(attributes)):
            where = f"{str(path)!r} rows {row0:,}-{row0 + batch.num_rows - 1:,}"
            yield row0, [_column_masks(batch.column(a.name), a, where) for a in attrs]
            row0 += batch.num_rows
    else:
        reader = pd.read_csv(path, usecols=list(attributes), dtype=str, keep_default_na=False,
                             chunksize=chunk_rows)
        with reader:
            for chunk in reader:
                where = f"{str(path)!r} rows {row0:,}-{row0 + len(chunk) - 1:,}"
                yield row0, [_csv_masks(chunk[a.name], a, where) for a in attrs]
                row0 += len(chunk)


class PatternCounter:
    """Distinct set tuples over q' attributes with their multiplicities,
    merged chunk by chunk (or partition by partition).  The merged result is
    what reconstruct's exact EM computes from the whole table: the same rows
    in the same (np.unique) order, with the same counts."""

    def __init__(self, widths):
        self.widths = list(widths)
        self._parts = []
        self._rows = 0

    def add_masks(self, masks):
        stacked = np.concatenate([np.asarray(m, dtype=np.uint64).reshape(len(m), -1)
                                  for m in masks], axis=1)
        uniq, cnt = np.unique(stacked, axis=0, return_counts=True)
        self.add_patterns(uniq, cnt)

    def add_patterns(self, uniq, counts):
        self._parts.append((np.asarray(uniq, dtype=np.uint64), np.asarray(counts, dtype=np.int64)))
        self._rows += len(uniq)
        if len(self._parts) > 8:
            self._merge()

    def _merge(self):
        if len(self._parts) <= 1:
            return
        allu = np.concatenate([u for u, _ in self._parts], axis=0)
        allc = np.concatenate([c for _, c in self._parts])
        uniq, inv = np.unique(allu, axis=0, return_inverse=True)
        cnt = np.bincount(inv.ravel(), weights=allc, minlength=len(uniq)).astype(np.int64)
        self._parts = [(uniq, cnt)]

    def result(self):
        """(list of per-attribute pattern masks, float64 counts)."""
        self._merge()
        if not self._parts:
            raise ValueError("no rows")
        uniq, cnt = self._parts[0]
        out, col = [], 0
        for w in self.widths:
            out.append(np.ascontiguousarray(uniq[:, col:col + w]))
            col += w
        return out, cnt.astype(np.float64)


def exact_em_patterns(header, attributes, pmasks, weight, *, max_iter=2000, tol=1e-6,
                      n_threads=None):
    """Exact-likelihood EM ('exact_em' of :func:`anonset.reconstruct`) on
    merged set-tuple counts: the same computation as reconstruct's, so the
    estimate is identical."""
    from ..randomized.reconstruct import _threads, exact_em_patterns as _em
    dims = [header.schema[a].d for a in attributes]
    counts, info = _em([header.params[a] for a in attributes], dims, header.n_rows,
                       pmasks, weight, max_iter=max_iter, tol=tol,
                       n_threads=_threads(n_threads))
    return CrossTab(tuple(attributes), tuple(header.schema[a].domain for a in attributes),
                    counts, "exact_em", info)


def reconstruct_from_counts(header, attributes, method, *, w=None, patterns=None,
                            max_iter=2000, tol=1e-6, n_threads=None, seed=None) -> CrossTab:
    """Finish a reconstruction from summed counts: ``w`` (eq. 17) for 'em' and
    'value_adding', ``patterns`` = (pattern masks, counts) for 'exact_em'."""
    from ..randomized.reconstruct import METHODS, reconstruct
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "exact_em":
        from ..randomized.reconstruct import _check_attrs, _dims
        attributes = _check_attrs(header, attributes)
        _dims(header, attributes)
        if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 0:
            raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
        if not (tol >= 0):
            raise ValueError(f"tol must be >= 0, got {tol!r}")
        pm, weight = patterns
        return exact_em_patterns(header, attributes, pm, weight, max_iter=max_iter, tol=tol,
                                 n_threads=n_threads)
    if method == "random":
        w = np.zeros([header.schema[a].d for a in attributes], dtype=np.int64)
    return reconstruct(header, attributes, method, max_iter=max_iter, tol=tol,
                       n_threads=n_threads, seed=seed, w=w)


def reconstruct_file(path, attributes, method: str = "em", *,
                     chunk_rows: int = DEFAULT_CHUNK_ROWS, max_iter: int = 2000,
                     tol: float = 1e-6, n_threads: int | None = None, seed=None,
                     format: str | None = None) -> CrossTab:
    """Reconstruct a cross-tabulation from a published file, chunk by chunk.

    Reads only the chosen attributes' columns; the estimate equals
    ``anonset.reconstruct(read_parquet(path), attributes, method)``.

    Examples
    --------
    >>> import pandas as pd, tempfile, os, anonset
    >>> from anonset.stream import reconstruct_file
    >>> p = os.path.join(tempfile.mkdtemp(), "pub.parquet")
    >>> df = pd.DataFrame({"a": list("xyzxyzxx"), "b": list("uvuvuvuv")})
    >>> pub = anonset.publish(df, anonset.Diversity({"a": 2, "b": 1}), seed=3)
    >>> pub.to_parquet(p)
    >>> ct = reconstruct_file(p, ["a"], chunk_rows=3)
    >>> bool((ct.counts == anonset.reconstruct(pub, ["a"]).counts).all())
    True
    """
    from ..randomized.reconstruct import METHODS, _check_attrs, _dims, _threads
    chunk_rows = _check_chunk_rows(chunk_rows)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file {str(path)!r} does not exist")
    fmt = file_format(path, format)
    meta = read_metadata(path, fmt)
    header = TableHeader.from_metadata(meta)
    attributes = _check_attrs(header, attributes)
    dims = _dims(header, attributes)
    _threads(n_threads)
    if method == "random":
        return reconstruct_from_counts(header, attributes, method, seed=seed)
    w, pc, rows = None, None, 0
    if method == "exact_em":
        pc = PatternCounter([(d + 63) // 64 for d in dims])
    else:
        w = np.zeros(dims, dtype=np.int64)
        max_set = math.prod(header.params[a].eta for a in attributes)
    for row0, masks in iter_masks(path, attributes, chunk_rows=chunk_rows, fmt=fmt, meta=meta):
        rows += len(masks[0])
        if pc is not None:
            pc.add_masks(masks)
        else:
            w += _kernels.count_w(masks, dims, max_set, n_threads=_threads(n_threads))
    if rows != header.n_rows:
        raise ValueError(f"{str(path)!r} has {rows:,} rows but its metadata says "
                         f"{header.n_rows:,}")
    return reconstruct_from_counts(header, attributes, method, w=w,
                                   patterns=pc.result() if pc is not None else None,
                                   max_iter=max_iter, tol=tol, n_threads=n_threads, seed=seed)
