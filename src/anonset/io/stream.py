"""Publishing and reconstruction of files larger than memory, block by block:
the file path of :mod:`anonset.engine`.

Publishing reads the file twice.  The first pass gathers the engine's
statistics (row count, inferred domains, the distributions closeness needs,
the type of each CSV column) from only the columns that need them; the plan
is built from them exactly as in memory; the second pass publishes block by
block.  Every set is a pure function of (key, global row, attribute), so the
sets, parameters and metadata are those of :func:`anonset.publish` on the
whole table under the same key, whatever ``chunk_rows``.

The output order is the in-memory order too: rows are sorted by a keyed rank
(:func:`anonset.engine.block_ranks`).  A file larger than memory is shuffled
in bounded memory through temporary rank buckets beside the output: each
published block is split by rank range into about ``n / chunk_rows``
bucket files (Arrow IPC, published values only), then each bucket is sorted
and written in turn.  The buckets are removed afterwards, also on failure.

Reconstruction reads only the chosen attributes' columns, block by block,
checks every set, and merges the counts every method needs (w of eq. 17, or
the distinct set tuples of the exact EM); the estimate equals the in-memory
one.  See docs/scaling.md.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import engine
from ..randomized.crosstab import CrossTab
from ..schema import Schema
from ..validate import InputError, check_int, check_original_columns, check_progress
from .atomic import temp_dir
from .published import (TableHeader, check_metadata, iter_masks, metadata, open_sink,
                        read_metadata)
from .tables import (arrow_frame, check_input_file, file_columns, file_format, iter_blocks,
                     parquet_categoricals, parquet_types)

__all__ = ["publish_file", "reconstruct_file", "read_metadata", "iter_masks", "StreamResult",
           "TableHeader", "DEFAULT_CHUNK_ROWS"]

#: Rows per block by default.  At 10 sensitive attributes with eta = 5 a block
#: of 2^18 rows holds about 110 MiB of codes, bitmasks and Arrow list values;
#: larger blocks gain < 5 % throughput on the 2-core dev VM (docs/scaling.md).
DEFAULT_CHUNK_ROWS = 1 << 18


@dataclass
class StreamResult:
    """What :func:`publish_file` wrote.

    Attributes
    ----------
    path : Path
    schema : Schema       the published schema (no identifier or dropped column)
    params : dict         name -> AttributeParams
    model : dict          the privacy model, as ``model.to_dict()``
    n_rows : int
    chunks : int          blocks of the publishing pass
    passes : int          passes over the input (2: statistics and checks, then publishing)
    info : dict           how it was published (key mode, row order, ...)
    source_schema : Schema  every input column, with its role
    """

    path: Path
    schema: Schema
    params: dict
    model: dict
    n_rows: int
    chunks: int
    passes: int
    info: dict = field(default_factory=dict)
    source_schema: Schema | None = None

    def metadata(self) -> dict:
        return metadata(self.schema, self.params, self.model, self.n_rows, self.info)


def _check_chunk_rows(chunk_rows) -> int:
    return check_int(chunk_rows, "chunk_rows", minimum=1)


def _types(path, fmt):
    """Column types known before reading: a Parquet file's Arrow types, with
    a dictionary column (a pandas Categorical written to Parquet) as a
    categorical whose categories are read later (:func:`_dictionaries`)."""
    if fmt != "parquet":
        return None
    out = parquet_types(path)
    for c, ordered in parquet_categoricals(path).items():
        out[c] = pd.CategoricalDtype([engine.UNKNOWN_CATEGORIES], ordered=ordered)
    return out


def _dictionaries(path, columns, chunk_rows) -> dict:
    """The categories of dictionary columns, as pandas reads the whole file:
    each block's dictionary in file order, new values appended."""
    parts: dict = {c: [] for c in columns}
    for _, block in iter_blocks(path, "parquet", chunk_rows=chunk_rows, columns=columns):
        for c in columns:
            parts[c].append(block[c].cat.categories)
    return {c: engine.union_categories(p) for c, p in parts.items()}


def _warn_lost_categoricals(path, d) -> None:
    """A pandas Categorical of numbers written to Parquet declares nothing
    there (H92): its domain is read off the data, which the user may not
    expect; said, naming what declares it."""
    from ..io.tables import parquet_lost_categoricals
    lost = [c for c in parquet_lost_categoricals(path)
            if c in d.drafts and d.drafts[c].published and d.drafts[c].domain is None
            and d.drafts[c].bins is None and d.drafts[c].hierarchy is None]
    if lost:
        warnings.warn(f"{str(path)!r}: column(s) {', '.join(map(repr, lost))} were pandas "
                      "Categoricals that Parquet keeps as plain values (categories that are "
                      "numbers): their domain is read off the data, without the unused "
                      "categories or the order; declare it (domains= / --domain)",
                      stacklevel=3)


def plan_file(in_path, options: engine.Options, *, chunk_rows, in_format=None, progress=None):
    """The engine's draft, first pass and plan for a file: ``(plan, fmt, passes)``."""
    in_path = check_input_file(in_path)
    fin = file_format(in_path, in_format, param="input_format")
    cols = file_columns(in_path, fin)
    types = _types(in_path, fin)
    d = engine.draft(options, cols, types, text=fin == "csv", file=in_path)
    if fin == "parquet":
        _warn_lost_categoricals(in_path, d)
    unknown = engine.unknown_categoricals(d)
    if unknown:
        types = engine.with_categories(types, _dictionaries(in_path, unknown, chunk_rows))
        d = engine.draft(options, cols, types, text=fin == "csv", file=in_path)
    stats = engine.Stats(d)
    # the pass-through check draws its rows from the whole table: its
    # columns are read in the same pass
    columns = [c for c in cols if c in set(d.stats_columns) | set(d.passthrough_columns)
               | set(d.series_targets)]
    for row0, block in iter_blocks(in_path, fin, chunk_rows=chunk_rows, columns=columns):
        stats.add(block, row0)
        if progress is not None:
            progress(len(block))
    return engine.make_plan(d, stats), fin, 2


def publish_file(in_path, out_path, model, schema: Schema | None = None, *,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, in_format: str | None = None,
                 out_format: str | None = None, protect=(), progress=None,
                 sets: str = "masks", **options) -> StreamResult:
    """Publish a CSV or Parquet file block by block (paper 000, Sec. V-B).

    For a given key (``seed``) the published sets, their order, the
    parameters and the metadata are those of :func:`anonset.publish` on the
    whole table, whatever ``chunk_rows``; memory is bounded by ``chunk_rows``.

    Parameters
    ----------
    in_path, out_path : path
        Input table and published table (.parquet or .csv; the CSV gets its
        ``.anonset.json`` beside it).  The input is never overwritten.
    model : Diversity | Anonymity | Closeness | DiversityCloseness
    schema : Schema, optional
    chunk_rows : int
        Rows per block (memory is proportional to it).
    in_format, out_format : {'csv', 'parquet'}, optional
        Default: from the file names.
    sets : {'masks', 'lists'}
        How a Parquet output stores the sets (:meth:`SetTable.to_parquet`).
    progress : callable, optional
        Called with the number of rows of each block read (both passes); if it
        has a ``stage(name, total)`` method, that is called when the second
        pass (publishing ``total`` rows) begins.
    **options
        The keyword arguments of :func:`anonset.publish` (roles, domains,
        seed, keep_order, allow_clear, ...).

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
    >>> seed = "a secret seed of 32 characters.."
    >>> domains = {"job": list("abc"), "city": list("xyz")}
    >>> r = publish_file(os.path.join(d, "in.csv"), os.path.join(d, "out.parquet"),
    ...                  anonset.Diversity(2), sensitive=["job", "city"], domains=domains,
    ...                  chunk_rows=2, seed=seed)
    >>> r.n_rows, r.info["row_order"]
    (5, 'shuffled')
    >>> t = anonset.read_parquet(os.path.join(d, "out.parquet"))
    >>> t.equals(anonset.publish(pd.read_csv(os.path.join(d, "in.csv")), anonset.Diversity(2),
    ...                          sensitive=["job", "city"], domains=domains, seed=seed))
    True
    """
    chunk_rows = _check_chunk_rows(chunk_rows)
    check_progress(progress)
    opts = engine.Options.of(model, schema, **options)
    out_path = Path(out_path)
    fout = file_format(out_path, out_format, param="output_format", output=True)
    from .published import SET_ENCODINGS, check_named_as
    check_named_as(out_path, fout)          # before the input is read
    if sets not in SET_ENCODINGS:
        raise InputError(f"got {sets!r}", param="sets", expected="masks or lists")
    if sets != "masks" and fout == "csv":
        # a CSV writes every set as {a|b|c}: the encoding would be ignored
        raise InputError(f"is {sets!r}, which a Parquet output takes", param="sets",
                         file=out_path, expected="a .parquet output, or no {@sets} (a CSV "
                                                 "writes each set as {a|b|c})")
    # the output's name and place, before the input is read (its checks
    # again where it is opened)
    from .atomic import check_targets
    from .published import CSV_META_SUFFIX
    from .tables import check_csv_output
    if fout == "csv":
        check_csv_output(out_path)
    check_targets(out_path, *([Path(str(out_path) + CSV_META_SUFFIX)] if fout == "csv" else []),
                  protect=[check_input_file(in_path), *protect])
    plan, fin, passes = plan_file(in_path, opts, chunk_rows=chunk_rows, in_format=in_format,
                                  progress=progress)
    in_path = Path(in_path)
    if progress is not None and hasattr(progress, "stage"):
        progress.stage("publishing", plan.n_rows)
    meta = metadata(plan.schema, plan.params, plan.model, plan.n_rows, plan.info)
    read_cols = [a.name for a in plan.source if a.role not in ("drop",)]
    if plan.record_id is None:
        read_cols = [c for c in read_cols if plan.source[c].role != "identifier"]
    blocks = iter_blocks(in_path, fin, chunk_rows=chunk_rows, columns=read_cols)
    chunks = 0
    with open_sink(out_path, fout, plan.schema, meta, protect=[in_path, *protect],
                   sets=sets) as sink, _WriteBehind(sink) as writer:
        if plan.shuffled:
            with temp_dir(out_path) as tmp:
                for table in _shuffled(plan, blocks, chunk_rows, tmp, progress):
                    writer.write(table)
                    chunks += 1
        else:
            for row0, block in blocks:
                writer.write(engine.publish_block(plan, block, row0))
                chunks += 1
                if progress is not None:
                    progress(len(block))
    return StreamResult(out_path, plan.schema, plan.params, plan.model, plan.n_rows, chunks,
                        passes, plan.info, plan.source)


class _WriteBehind:
    """Writes the published blocks to the sink on one other thread, so that
    encoding and writing block i overlaps publishing block i + 1 (Arrow and
    the compressors release the GIL).  At most ``depth`` blocks wait; blocks
    are written in order; an error on either side stops both and is raised
    here.  Used as a context manager: leaving it waits for the last block."""

    _DONE = object()

    def __init__(self, sink, depth: int = 2):
        import queue
        import threading
        self.sink, self.error, self.cancel = sink, None, False
        self.queue: queue.Queue = queue.Queue(maxsize=depth)
        self.thread = threading.Thread(target=self._run, name="anonset-writer", daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            table = self.queue.get()
            if table is self._DONE:
                return
            if self.error is None and not self.cancel:
                try:
                    self.sink.write(table)
                except BaseException as e:          # raised on the caller's thread
                    self.error = e

    def write(self, table) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(table)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            # stopped (an error, a signal): the waiting blocks are dropped and
            # only the write in progress is waited for, before the sink and
            # its temporary files are removed.  Dropped here, without waiting
            # for the writer to make room: a signal may have interrupted the
            # caller inside queue.put, and nothing of the queue's wake-ups is
            # relied on after that
            import queue
            self.cancel = True
            while True:
                try:
                    self.queue.get_nowait()
                except queue.Empty:
                    break
        self.queue.put(self._DONE)
        self.thread.join()
        if exc_type is None and self.error is not None:
            raise self.error
        return False


def _bucket_of(ranks: np.ndarray, n_buckets: int) -> np.ndarray:
    """floor(rank * B / 2^64): monotone in the rank, so buckets in order are
    ranks in order."""
    return (((ranks >> np.uint64(32)) * np.uint64(n_buckets)) >> np.uint64(32)).astype(np.int64)


def _block_arrow(table, order, ranks):
    """A published block as an Arrow table in the given row order: each
    attribute's mask words (narrowed), the pass-through
    columns and the rank.  No row number: the blocks arrive in row order and
    a bucket keeps its rows in that order, so a stable sort by rank is the
    (rank, row) order."""
    import pyarrow as pa
    from ..randomized.settable import mask_columns
    from .published import mask_type
    cols, names = [], []
    for a in table.schema:
        if a.name in table.params:
            m = np.asarray(table.mask(a.name))
            # the narrowest word that holds d bits, as in a Parquet file (one
            # byte for d <= 8); uint64 words beyond 64 values
            t = mask_type(a.d)
            t = t.to_pandas_dtype() if pa.types.is_integer(t) else np.uint64
            for k, c in enumerate(mask_columns(a)):
                cols.append(pa.array(m[:, k].astype(t, copy=False)[order]))
                names.append(c)
        elif a.name in table.other.columns:
            cols.append(pa.array(table.other[a.name].iloc[order], from_pandas=True))
            names.append(a.name)
    # the keyed rank goes last, under a name no published column has (the
    # reader takes it by position)
    rank = "__rank__"
    while rank in names:
        rank = "_" + rank
    cols.append(pa.array(ranks[order]))
    names.append(rank)
    return pa.Table.from_arrays(cols, names=names)


def _arrow_block(t, plan):
    """Inverse of :func:`_block_arrow`, sorted by (rank, row)."""
    from ..randomized.settable import SetTable, mask_columns
    # rows are in input order within the bucket: a stable sort by rank is (rank, row)
    # (the radix argsort of the keyed row order: O(n), where np.argsort's
    # stable sort of 64-bit keys is a merge sort)
    order = engine.order_of(t.column(t.num_columns - 1).to_numpy())      # the rank: last
    masks = {}
    for a in plan.schema.published:
        names = mask_columns(a)
        m = np.empty((len(order), len(names)), dtype=np.uint64)
        for k, c in enumerate(names):
            m[:, k] = t.column(c).to_numpy()[order]       # gathered, then widened
        masks[a.name] = m
    other = [a.name for a in plan.schema if a.role == "other"]
    frame = arrow_frame(t.select(other)).iloc[order].reset_index(drop=True) if other else None
    return SetTable(plan.schema, masks, plan.params, plan.model, frame, plan.info)


def _concat(tables):
    """Published blocks, in order, as one table."""
    from ..randomized.settable import SetTable
    first = tables[0]
    masks = {n: np.concatenate([t.mask(n) for t in tables]) for n in first.names}
    other = pd.concat([t.other for t in tables], ignore_index=True) \
        if len(first.other.columns) else None
    return SetTable(first.schema, masks, first.params, first.model, other, first.info)


def _shuffled(plan, blocks, chunk_rows, tmp: Path, progress=None):
    """Published blocks in keyed-rank order, through rank buckets on disk:
    each block is grouped by bucket (a stable radix sort of bucket numbers)
    and written as zero-copy slices; each bucket is then read and sorted by
    (rank, row)."""
    import pyarrow as pa
    n_buckets = max(1, math.ceil(plan.n_rows / chunk_rows))
    if n_buckets == 1:                     # the whole table fits one block: sort in memory
        # a file may still come in several blocks (a Parquet file's row groups
        # with dictionary columns are read one by one): shuffled block by
        # block, the output's position would tell each row's block, and a file
        # sorted by a sensitive value would publish it through the order
        tables = []
        for row0, block in blocks:
            tables.append(engine.publish_block(plan, block, row0))
            if progress is not None:
                progress(len(block))
        if tables:
            table = tables[0] if len(tables) == 1 else _concat(tables)
            yield table.take(engine.order_of(engine.block_ranks(plan, 0, table.n_rows)))
        return
    writers: dict = {}
    try:
        for row0, block in blocks:
            table = engine.publish_block(plan, block, row0)
            ranks = engine.block_ranks(plan, row0, table.n_rows)
            # group by bucket with a stable radix sort of small ints (O(n)); rows stay
            # in input order inside each bucket, so the final sort by rank alone,
            # stable, is the (rank, row) order
            bucket = _bucket_of(ranks, n_buckets)
            small = bucket.astype(np.int16 if n_buckets < (1 << 15) else np.int32)
            order = np.argsort(small, kind="stable")
            arrow = _block_arrow(table, order, ranks)
            bounds = np.searchsorted(bucket[order], np.arange(n_buckets + 1))
            for b in range(n_buckets):
                lo, hi = int(bounds[b]), int(bounds[b + 1])
                if hi == lo:
                    continue
                part = arrow.slice(lo, hi - lo)
                if b not in writers:
                    writers[b] = pa.ipc.new_file(str(tmp / f"{b}.arrow"), part.schema)
                writers[b].write_table(part)
            if progress is not None:
                progress(len(block))
    finally:
        for w in writers.values():
            w.close()
    for b in sorted(writers):
        with pa.memory_map(str(tmp / f"{b}.arrow")) as src:
            t = pa.ipc.open_file(src).read_all()
        yield _arrow_block(t, plan)
        del t
        (tmp / f"{b}.arrow").unlink()


# ================================================================ reconstruct
def reconstruct_file(path, attributes, method: str = "em", *,
                     chunk_rows: int = DEFAULT_CHUNK_ROWS, max_iter: int = 20000,
                     tol: float = 1e-6, tol_ll: float | None = None,
                     n_threads: int | None = None, seed=None,
                     format: str | None = None, progress=None,
                     accelerate: bool = True,
                     standard_errors: int | None = None) -> CrossTab:
    """Reconstruct a cross-tabulation from a published file, block by block.

    Reads only the chosen attributes' columns and checks every set; the
    estimate equals ``anonset.reconstruct(read_parquet(path), attributes,
    method)``.  ``standard_errors=B`` adds each cell's standard error by a
    parametric bootstrap of B replicates, as :func:`anonset.reconstruct`
    does (it needs the release's parameters only, not its sets).

    Examples
    --------
    >>> import pandas as pd, tempfile, os, anonset
    >>> from anonset.stream import reconstruct_file
    >>> p = os.path.join(tempfile.mkdtemp(), "pub.parquet")
    >>> df = pd.DataFrame({"a": list("xyzxyzxx"), "b": list("uvuvuvuv")})
    >>> pub = anonset.publish(df, anonset.Diversity({"a": 2, "b": 2}), sensitive=["a", "b"])
    >>> pub.to_parquet(p)
    >>> ct = reconstruct_file(p, ["a"], chunk_rows=3)
    >>> bool((ct.counts == anonset.reconstruct(pub, ["a"]).counts).all())
    True
    """
    chunk_rows = _check_chunk_rows(chunk_rows)
    check_progress(progress)
    path = check_input_file(path)
    fmt = file_format(path, format)
    meta = read_metadata(path, fmt)
    header = check_metadata(meta, path)
    from ..validate import check_reconstructable
    check_reconstructable(header, file=path)
    rplan = engine.ReconstructionPlan(header, attributes, method, max_iter=max_iter, tol=tol,
                                      tol_ll=tol_ll, n_threads=n_threads, seed=seed,
                                      accelerate=accelerate, standard_errors=standard_errors)
    counts = rplan.counts()
    if method == "random":
        counts.rows = header.n_rows
    else:
        for _, masks in iter_masks(path, rplan.attributes, chunk_rows=chunk_rows, fmt=fmt,
                                   meta=meta):
            counts.add(masks)
            if progress is not None:
                progress(len(masks[0]))
    try:
        return rplan.estimate(counts)
    except InputError as e:
        raise e.in_file(path) from None


def true_crosstab_file(path, schema: Schema, attributes, *, chunk_rows=DEFAULT_CHUNK_ROWS,
                       format: str | None = None, progress=None) -> CrossTab:
    """The true counts of an original file over published attributes (for
    evaluating a reconstruction), block by block, with the published
    schema's domains and the engine's typing of CSV text."""
    from ..encode import encode_column
    from ..validate import check_attributes, check_schema
    schema = check_schema(schema)
    attributes = check_attributes(schema, attributes)
    path = check_input_file(path, param="original")
    fmt = file_format(path, format, named_by="original")
    attrs = [schema[a] for a in attributes]
    have = file_columns(path, fmt)
    check_original_columns([a.name for a in attrs], have, file=path)
    dims = tuple(a.d for a in attrs)
    counts = np.zeros(math.prod(dims), dtype=np.int64)
    for row0, block in iter_blocks(path, fmt, chunk_rows=chunk_rows,
                                   columns=[a.name for a in attrs]):
        codes = []
        for a in attrs:
            col = block[a.name].reset_index(drop=True)
            if fmt == "csv":
                col = engine.cast_text(col, a, a.name, path)
            try:
                codes.append(encode_column(col, a, row0=row0))
            except InputError as e:
                raise e.in_file(path) from None
        counts += np.bincount(np.ravel_multi_index(codes, dims), minlength=counts.size)
        if progress is not None:
            progress(len(block))
    return CrossTab(tuple(attributes), tuple(a.domain for a in attrs),
                    counts.reshape(dims).astype(np.float64), "true")
