"""Publishing and reconstruction on Dask (``pip install 'anonset[dask]'``):
the partition path of :mod:`anonset.engine`.

:func:`publish` runs the engine's first pass as one task per partition
(mergeable statistics; their row counts give each partition its global row
offset), builds the plan on the client exactly as in memory, and maps
:func:`anonset.engine.publish_block` over the partitions.  Every set is a pure
function of (key, global row, attribute) and every task a pure function of
its inputs, so the output equals :func:`anonset.publish` on the concatenated
table for the same key, whatever the partitioning, the number of workers, or
which tasks were re-run after a worker died.  The output order is the keyed
shuffle of the engine: the partitions' blocks carry each row's rank (and
input row), and everything that gathers or writes the table
(:attr:`DaskSetTable.frame`, ``to_settable``, ``to_parquet``, ``to_csv``)
goes by rank, without either.

:func:`reconstruct` sums per-partition counts (w of eq. 17, or distinct set
tuples for 'exact_em') and estimates on the client.

The generator key travels to the workers inside the task graph: the
scheduler and workers must be as trusted as the data.  See docs/scaling.md.
"""
from __future__ import annotations

import contextlib
import inspect

import numpy as np
import pandas as pd

from .. import engine
from ..encode import shortest_floats
from ..randomized.crosstab import CrossTab
from ..randomized.pair_adversary import SAMPLE_ROWS as PAIR_ROWS
from ..randomized.settable import SetTable, mask_columns
from ..schema import Schema
from ..validate import InputError
from .published import TableHeader, metadata, open_sink

__all__ = ["publish", "reconstruct", "DaskSetTable"]

_RANK, _ROW = "__rank__", "__row__"


def _internal_names(columns) -> tuple:
    """Names for the blocks' rank and input-row columns that no published
    column has (a table may hold a column named ``__rank__``: it would be
    overwritten by the ranks, or publish the input row numbers)."""
    taken, out = set(columns), []
    for base in (_RANK, _ROW):
        name = base
        while name in taken:
            name = "_" + name
        taken.add(name)
        out.append(name)
    return tuple(out)


def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError("anonset.dask needs Dask: pip install 'anonset[dask]'") from e


# ------------------------------------------------------------------ tasks
def _stats_task(part, d, row0, cut=None, pair_cut=None):
    """A partition's statistics, or the error its rows raise (returned, so
    that the client reports the first bad partition's, as memory would).
    ``cut``: the pass-through check's sample over the whole table
    (:func:`~anonset.passthrough.sample_cut`), so that a partition keeps
    only its rows of it."""
    try:
        stats = engine.Stats(d, count_shared=False)
        if stats.passthrough is not None:
            stats.passthrough.cut = cut
        if stats.set_rows is not None and pair_cut is not None:
            stats.set_rows.cut = np.uint64(pair_cut)
        return stats.add(part, row0)
    except (ValueError, TypeError) as e:
        return e


def _shared_counts(ddf, cols, compute_kw) -> dict:
    """Rows that share each identifier's value, counted on the workers (the
    value counts of the values' hashes, split across partitions), so that
    the client holds nothing per row."""
    from ..shared_ids import value_hashes
    out = {}
    for c in cols:
        h = ddf[c].map_partitions(lambda s: pd.Series(value_hashes(s, text=False)),
                                  meta=(c, np.uint64))
        vc = h.value_counts(split_out=max(1, ddf.npartitions // 16))
        k = int(vc[vc > 1].sum().compute(**compute_kw))
        if k:
            out[c] = k
    return out


def _publish_task(part, plan, row0, names):
    rank, row = names
    frame = engine.publish_block(plan, part, row0).to_mask_frame()
    ranks = engine.block_ranks(plan, row0, len(frame))
    frame[rank] = ranks if ranks is not None else np.arange(row0, row0 + len(frame),
                                                            dtype=np.uint64)
    frame[row] = np.arange(row0, row0 + len(frame), dtype=np.int64)
    return frame


def _counts_task(part, rplan, attrs):
    masks = [SetTable.from_mask_frame(part, Schema(tuple(attrs)), {
        a.name: rplan.header.params[a.name] for a in attrs}).mask(a.name) for a in attrs]
    return rplan.counts().add(masks)


# --------------------------------------------------------------- published
class DaskSetTable:
    """A published table as a Dask DataFrame of bitmasks.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        The published table, lazy and in published order: one uint64 column
        per published attribute (``name#k`` for the k-th word where d > 64)
        and the pass-through columns, as :meth:`SetTable.to_mask_frame`
        gives them; safe to compute or write with Dask's own writers.
    schema, params, model, info, n_rows
        As :class:`anonset.SetTable`.
    offsets : list of int
        Partition i of the input held its rows ``offsets[i] .. offsets[i + 1] - 1``.
    """

    def __init__(self, blocks, schema, params, model, info, offsets, names=(_RANK, _ROW)):
        # the published blocks in input partition order, each row with its
        # keyed rank and its input row (columns ``names``): never handed out
        # (the row is the link to the input, and the partition order is the
        # input's order)
        self._blocks = blocks
        self._names = tuple(names)
        self.schema, self.params = schema, dict(params)
        self.model, self.info, self.offsets = dict(model), dict(info), list(offsets)
        self.n_rows = self.offsets[-1]

    def __reduce__(self):
        # its blocks carry the generator's keys and each published row's
        # input row (H82: a pickle undid the shuffle and held the key); a
        # SetTable's pickle drops its input rows, this one is refused
        raise TypeError("a DaskSetTable is not pickled: its lazy blocks hold the key and "
                        "each row's input row; write it (to_parquet, to_csv) or compute "
                        "to_settable(), whose pickle is safe")

    @property
    def frame(self):
        """The published table, lazy, in published order, without the
        rank and input row that the blocks carry (written as it is with
        ``frame.to_parquet``, it would otherwise publish each row's input
        position)."""
        return self._ordered().drop(columns=list(self._names))

    @property
    def names(self) -> list:
        return [a.name for a in self.schema.published]

    def header(self) -> TableHeader:
        return TableHeader(self.schema, self.params, self.model, self.n_rows, self.info)

    def metadata(self) -> dict:
        return metadata(self.schema, self.params, self.model, self.n_rows, self.info)

    def _ordered(self):
        """The frame in published order: a keyed shuffle by rank, with
        divisions known in advance (ranks are uniform over 64 bits), each
        partition sorted by (rank, row)."""
        n = max(1, self._blocks.npartitions)
        if self.info.get("row_order") == "input":
            return self._blocks
        divisions = [int(x) for x in np.linspace(0, 2 ** 64 - 1, n + 1, dtype=np.float64)]
        divisions = sorted(set(min(max(x, 0), 2 ** 64 - 1) for x in divisions))
        divisions[0], divisions[-1] = 0, 2 ** 64 - 1
        # the task shuffle moves the blocks as they are: the P2P shuffle a
        # distributed Client chooses turns each into Arrow, which refused a
        # column of mixed types with a RuntimeError, gave lists back as
        # arrays, and ran under no other scheduler (H143)
        shuffled = self._blocks.set_index(self._names[0], divisions=divisions, sorted=False,
                                          drop=False, shuffle_method="tasks")
        # each partition's index is its rows' places in it (0, 1, ...), not
        # the ranks the divisions speak of: divisions left unknown, or Dask
        # would trust them (H106: frame.loc[0] gave 1 row of 4)
        return shuffled.map_partitions(_sort_part, names=self._names,
                                       meta=self._blocks._meta).clear_divisions()

    def _table(self, frame: pd.DataFrame) -> SetTable:
        table = SetTable.from_mask_frame(frame, self.schema, self.params, self.model, self.info)
        if table.other is not None:
            # rows of a partition whose text cells were all missing (left
            # as object) beside others' text made an object column: text
            # again, as in memory (H130)
            table.other = engine.plain_values(table.other)
        return table

    def to_settable(self, **compute) -> SetTable:
        """Compute and gather the whole table on the client, in published order."""
        return self._table(self._ordered().compute(**compute))

    def iter_tables(self, **compute):
        """Partition by partition in published order, one in memory at a time."""
        for part in self._ordered().to_delayed():
            yield self._table(part.compute(**compute))

    def to_parquet(self, path, *, protect=(), sets: str = "masks", **compute) -> None:
        """One Parquet file, as :meth:`SetTable.to_parquet` writes it; atomic."""
        self._write(path, "parquet", protect, compute, sets)

    def to_csv(self, path, *, protect=(), **compute) -> None:
        """CSV with ``{a|b|c}`` cells and ``.anonset.json``, as one atomic unit."""
        self._write(path, "csv", protect, compute)

    def _write(self, path, fmt, protect, compute, sets="masks"):
        with open_sink(path, fmt, self.schema, self.metadata(), protect=protect,
                       sets=sets) as sink:
            for t in self.iter_tables(**compute):
                if t.n_rows:
                    sink.write(t)

    def __repr__(self):
        return (f"DaskSetTable(n_rows={self.n_rows}, partitions={len(self.offsets) - 1}, "
                f"{', '.join(self.names)})")


def _sort_part(part: pd.DataFrame, names) -> pd.DataFrame:
    rank, row = names
    part = part.reset_index(drop=True)
    order = engine.order_of(part[rank].to_numpy(dtype=np.uint64), part[row].to_numpy())
    return part.iloc[order].reset_index(drop=True)


def _polars_enums(ddf) -> set:
    """The columns a Dask frame reads from Parquet as Polars Enums (the
    file's Arrow schema, which Dask's description drops, says so), by their
    names in the reads of its expression.  Empty where there is no read to
    ask (a persisted frame) and blind to a column renamed since (H72: Dask
    describes an Enum's categories as none or its placeholder, so they
    cannot follow it)."""
    from .tables import polars_enum
    out = set()
    try:
        nodes = list(ddf.expr.walk())
    except AttributeError:          # pragma: no cover - an older Dask
        return out
    for node in nodes:
        if not type(node).__name__.startswith("ReadParquet"):
            continue
        try:
            info = node._dataset_info
        except Exception:           # noqa: BLE001 - Dask's internals, best effort
            continue
        schema = info.get("schema") if isinstance(info, dict) else None
        for f in getattr(schema, "__iter__", lambda: iter(()))():
            if polars_enum(f):
                out.add(f.name)
    return out


def _row_numbers(ddf, compute_kw) -> bool:
    """Whether a Dask frame's named index is row numbers (a RangeIndex in
    every partition), as :func:`anonset.io.tables.index_as_columns` reads an
    in-memory one.  Dask's description cannot vouch for it: ``read_parquet``
    describes a file's named index column as an empty RangeIndex, whatever its
    partitions hold, so the partitions are asked (one column of each)."""
    import dask
    from dask import delayed
    if not isinstance(ddf._meta.index, pd.RangeIndex):
        return False
    parts = ddf[list(ddf.columns[:1])].to_delayed()
    return all(dask.compute(*[delayed(lambda p: isinstance(p.index, pd.RangeIndex))(p)
                              for p in parts], **compute_kw))


def _native_order(part: pd.DataFrame, swapped: dict) -> pd.DataFrame:
    """A partition with its big-endian columns (``swapped``: their native
    dtypes) in native byte order."""
    return part.astype(swapped)


def _categories_task(frame, columns) -> dict:
    """The categories of a partition's categorical columns, in their order
    (what pandas reads as the whole column's: each part's, new ones appended)."""
    from ..encode import native_types
    frame = native_types(frame)        # an Arrow dictionary as its Categorical (H135)
    return {c: list(frame[c].cat.categories) if isinstance(frame[c].dtype, pd.CategoricalDtype)
            else list(pd.unique(frame[c].dropna())) for c in columns}


def _arrow_dictionary(t) -> bool:
    """A pandas ArrowDtype of an Arrow dictionary."""
    if not isinstance(t, pd.ArrowDtype):
        return False
    import pyarrow as pa
    return pa.types.is_dictionary(t.pyarrow_dtype)


def _ordered(t) -> bool:
    return bool(t.pyarrow_dtype.ordered if _arrow_dictionary(t) else t.ordered)


@contextlib.contextmanager
def _readable_bytes():
    """Dask's string conversion (``dataframe.convert-string``) turns a
    column of bytes into text inside the graph, lazily: bytes that are no
    UTF-8 text failed there with a bare UnicodeDecodeError (H130), where
    the in-memory path refuses them in one line."""
    try:
        yield
    except UnicodeDecodeError as e:
        if _in_csv_reader(e):
            # (H143: the advice below did not apply to a file read_csv reads)
            byte = f" (the byte 0x{e.object[e.start]:02x})" if isinstance(
                e.object, (bytes, bytearray)) and e.start < len(e.object) else ""
            raise InputError(f"holds a CSV file, read by dd.read_csv, that is not UTF-8 "
                             f"text{byte}", param="data",
                             expected="the file converted to UTF-8 (iconv -f WINDOWS-1252 -t "
                                      "UTF-8 IN > OUT), dd.read_csv(..., encoding=...), or "
                                      "anonset.stream.publish_file, which names its line") \
                from None
        raise InputError("holds bytes that are not UTF-8 text, which Dask's string conversion "
                         "(dataframe.convert-string) cannot read", param="data",
                         expected="the bytes decoded first, or "
                                  "dask.config.set({'dataframe.convert-string': False}), under "
                                  "which the refusal names the column and row") from None


def _in_csv_reader(err) -> bool:
    """Whether an error was raised inside pandas' CSV reader."""
    tb = err.__traceback__
    while tb is not None:
        if "/pandas/io/parsers/" in tb.tb_frame.f_code.co_filename.replace("\\", "/"):
            return True
        tb = tb.tb_next
    return False


def publish(ddf, model, schema: Schema | None = None, *, n_threads: int | None = 1,
            scheduler=None, **options) -> DaskSetTable:
    """Publish a Dask DataFrame partition by partition (paper 000, Sec. V-B).

    Equals ``anonset.publish(ddf.compute(), model, schema, ...)`` for the same
    seed, whatever the partitioning.  The first pass (statistics and row
    offsets) is computed now; the publishing itself is lazy (``.frame``, in
    published order).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    model, schema, **options
        As :func:`anonset.publish`.
    n_threads : int, optional
        Kernel threads per task (default 1: Dask runs tasks in parallel).
    scheduler : optional
        Dask scheduler of the first pass (default: the current one).

    Returns
    -------
    DaskSetTable

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, anonset
    >>> from anonset import dask as adask
    >>> df = pd.DataFrame({"job": list("abcabcab"), "city": list("xyxyzxyz")})
    >>> seed = "a secret seed of 32 characters.."
    >>> pub = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
    ...                     sensitive=["job", "city"], seed=seed, scheduler="sync")
    >>> pub.to_settable(scheduler="sync").equals(
    ...     anonset.publish(df, anonset.Diversity(2), sensitive=["job", "city"], seed=seed))
    True
    """
    _require_dask()
    import dask
    import dask.dataframe as dd
    from dask import delayed

    from ..validate import InputError
    if not isinstance(ddf, dd.DataFrame):
        raise InputError(f"got a {type(ddf).__name__}", param="ddf",
                         expected="a dask DataFrame")
    compute_kw = {} if scheduler is None else {"scheduler": scheduler}
    # big-endian NumPy columns (np.fromfile(f, '>i8'), FITS) in native order
    # before any column is selected: pandas 2 takes no columns of their
    # blocks ('Big-endian buffer not supported'; H156), the same values, as
    # native_types reads them in memory (H135).  Per partition: Dask moves a
    # selection below its own astype, onto the big-endian blocks
    swapped = {c: t.newbyteorder("=") for c, t in ddf._meta.dtypes.items()
               if isinstance(t, np.dtype) and not t.isnative}
    if swapped and ddf.columns.is_unique:
        ddf = ddf.map_partitions(_native_order, swapped, meta=ddf._meta.astype(swapped))
    index = ddf._meta.index.name
    with _readable_bytes():
        numbered = index is None or _row_numbers(ddf, compute_kw)
    if not numbered:
        # a named index is data, as in memory (anonset.io.tables.index_as_columns)
        if index in ddf.columns:
            raise InputError(f"has an index named {index!r}, as one of its columns is",
                             param="ddf", expected="distinct names (rename the index, or "
                                                   "reset_index(drop=True) if it is not data)")
        ddf = ddf.reset_index()
        ddf = ddf[[c for c in ddf.columns if c != index] + [index]]
    opts = engine.Options.of(model, schema, n_threads=n_threads, **options)
    # a categorical read from Parquet comes with Dask's sentinel for unknown
    # categories, or (dictionary columns with several dictionaries) with none
    # (an ArrowDtype dictionary is one too: its categories are read from the
    # partitions, as memory reads them, H135)
    dtypes = {c: pd.CategoricalDtype([engine.UNKNOWN_CATEGORIES], ordered=_ordered(t))
              if (isinstance(t, pd.CategoricalDtype) and
                  (len(t.categories) == 0 or engine.UNKNOWN_CATEGORIES in list(t.categories)))
              or _arrow_dictionary(t) else t for c, t in ddf._meta.dtypes.items()}
    # a Polars Enum read from Parquet: unordered, as in memory and streamed
    # (anonset.io.tables.unordered_enums; H69)
    enums = _polars_enums(ddf)
    dtypes = {c: pd.CategoricalDtype(t.categories, ordered=False)
              if c in enums and isinstance(t, pd.CategoricalDtype) and t.ordered else t
              for c, t in dtypes.items()}
    d = engine.draft(opts, list(ddf.columns), dtypes)
    unknown = engine.unknown_categoricals(d)
    if unknown:
        # categoricals read from Parquet: Dask knows their categories only
        # once it has read them (in-memory pandas reads them with the data)
        with _readable_bytes():
            parts = dask.compute(*[delayed(_categories_task)(p, unknown)
                                   for p in ddf[unknown].to_delayed()], **compute_kw)
        known = {c: engine.union_categories(p[c] for p in parts) for c in unknown}
        d = engine.draft(opts, list(ddf.columns), engine.with_categories(dtypes, known))
    # partition lengths first: each partition's first global row, so that an
    # error names the row the in-memory path names
    with _readable_bytes():
        lengths = dask.compute(*[delayed(len)(p) for p in ddf[d.stats_columns[:1] or
                                                             list(ddf.columns[:1])].to_delayed()],
                               **compute_kw)
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + int(n))
    # identifiers (but the record id) are counted on the workers below
    counted = [c for c in d.identifiers if c != d.options.record_id]
    # (the pass-through check draws its rows from every partition)
    cols = [c for c in ddf.columns if (c in d.stats_columns and c not in counted)
            or c in d.passthrough_columns or c in d.series_targets]
    from ..passthrough import sample_cut
    cut = sample_cut(offsets[-1]) if d.passthrough_columns else None
    # (and the sensitive columns' pairs draw theirs)
    pair_cut = sample_cut(offsets[-1], PAIR_ROWS) if len(d.sensitive) >= 2 else None
    with _readable_bytes():
        stats = dask.compute(*[delayed(_stats_task)(p, d, row0, cut, pair_cut) for p, row0 in
                               zip(ddf[cols].to_delayed(), offsets[:-1])], **compute_kw)
    total = engine.Stats(d, count_shared=False)
    for s in stats:
        if isinstance(s, Exception):
            raise s
        total.merge(s)
    total.shared_counts = _shared_counts(ddf, counted, compute_kw)
    plan = engine.make_plan(d, total)
    empty = SetTable(plan.schema, {a.name: np.zeros((0, (a.d + 63) // 64), np.uint64)
                                   for a in plan.schema.published}, plan.params, plan.model,
                     # as the blocks hold them: float32 as its shortest
                     # decimals, float64 (H95: the frame said float32)
                     shortest_floats(ddf._meta[[a.name for a in plan.schema
                                                if a.role == "other"]])
                     if any(a.role == "other" for a in plan.schema) else None, plan.info)
    meta = empty.to_mask_frame()
    names = _internal_names(meta.columns)
    meta[names[0]] = np.zeros(0, dtype=np.uint64)
    meta[names[1]] = np.zeros(0, dtype=np.int64)
    tasks = [delayed(_publish_task, pure=True)(p, plan, row0, names)
             for p, row0 in zip(ddf.to_delayed(), offsets[:-1])]
    # the published columns as the blocks hold them: Dask's string
    # conversion would turn a pass-through column of lists, times or bytes
    # into text (and fail on bytes that are not UTF-8)
    with dask.config.set({"dataframe.convert-string": False}):
        frame = dd.from_delayed(tasks, meta=meta, verify_meta=False)
    return DaskSetTable(frame, plan.schema, plan.params, plan.model, plan.info, offsets, names)


def reconstruct(pub: DaskSetTable, attributes, method: str = "em", *, max_iter: int = 20000,
                tol: float = 1e-6, tol_ll: float | None = None, accelerate: bool = True,
                n_threads: int | None = None, seed=None, standard_errors: int | None = None,
                **compute) -> CrossTab:
    """Reconstruct a cross-tabulation from a :class:`DaskSetTable`.

    Per-partition counts are computed on the workers and merged on the
    client, where the EM runs (and the bootstrap of ``standard_errors=B``,
    which needs the release's parameters only).  Equals
    ``anonset.reconstruct(pub.to_settable(), ...)`` with the same parameters;
    ``compute`` goes to ``dask.compute`` (``scheduler=``, ...).
    """
    _require_dask()
    import dask
    from dask import delayed
    from ..randomized.reconstruct import reconstruct as in_memory
    from ..validate import InputError
    # a parameter of the in-memory reconstruct is not a dask.compute option:
    # passed on there, it would be dropped without a word (tol_ll was, H29)
    if not isinstance(pub, DaskSetTable):
        # an in-memory release, the data or a path failed on a missing
        # attribute (H47); one line names what this path takes
        raise InputError(f"got a {type(pub).__name__}", param="pub",
                         expected="a DaskSetTable (anonset.dask.publish's result); for a "
                                  "SetTable, anonset.reconstruct; for a published file, "
                                  "anonset.stream.reconstruct_file")
    own = sorted(set(compute) & set(inspect.signature(in_memory).parameters))
    if own:
        raise InputError(f"got {own[0]}=, which this path does not take", param=own[0],
                         expected="anonset.reconstruct(pub.to_settable(), ...) for it")
    rplan = engine.ReconstructionPlan(pub.header(), attributes, method, max_iter=max_iter,
                                      tol=tol, tol_ll=tol_ll, n_threads=n_threads, seed=seed,
                                      accelerate=accelerate, standard_errors=standard_errors)
    counts = rplan.counts()
    if method == "random":
        counts.rows = pub.n_rows
        return rplan.estimate(counts)
    attrs = [pub.schema[a] for a in rplan.attributes]
    cols = [c for a in attrs for c in mask_columns(a)]
    parts = dask.compute(*[delayed(_counts_task)(p, rplan, attrs)
                           for p in pub._blocks[cols].to_delayed()], **compute)
    for c in parts:
        counts.merge(c)
    return rplan.estimate(counts)
