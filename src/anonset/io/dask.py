"""Publishing and reconstruction on Dask (``pip install 'anonset[dask]'``).

:func:`publish` maps the sampler over the partitions of a Dask DataFrame.
Each record's sets are a pure function of (key, global row index, attribute),
so a partition only needs its first global row index: the row offsets come
from the partition lengths, counted in a first pass that also gathers what
the parameters need (inferred domains, closeness's A_j) as mergeable
per-partition statistics.  The output therefore equals
``anonset.publish`` on the concatenated table for the same key, whatever the
partitioning, the number of workers, or which tasks were re-run after a
worker died (every task is a pure function of its inputs).

:func:`reconstruct` sums per-partition counts -- w of eq. 17 for 'em' and
'value_adding', distinct set tuples with multiplicities for 'exact_em' -- and
runs the EM on the client, so the estimate equals the in-memory one.

The generator key is created on the client and travels to the workers inside
the task graph: the scheduler and workers must be as trusted as the data (a
seed must be kept as secret as the data in any case).  See docs/scaling.md.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .keys import check_rng, make_key
from ..randomized.crosstab import CrossTab
from ..schema import Schema
from ..randomized.settable import SetTable
from .stream import (ColumnStats, PatternCounter, TableHeader, needs_distribution,
                     publish_chunk, reconstruct_from_counts, resolve_params)

__all__ = ["publish", "reconstruct", "DaskSetTable"]


def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError("anonset.dask needs Dask: pip install 'anonset[dask]'") from e


def mask_columns(attr) -> list:
    """Column names holding an attribute's bitmask words in a partition."""
    words = (attr.d + 63) // 64
    return [attr.name] if words == 1 else [f"{attr.name}#{k}" for k in range(words)]


def _to_frame(table: SetTable) -> pd.DataFrame:
    cols = {}
    for a in table.schema:
        if a.name in table.params:
            m = table.mask(a.name)
            for k, c in enumerate(mask_columns(a)):
                cols[c] = np.ascontiguousarray(m[:, k])
        elif a.name in table.other.columns:
            cols[a.name] = table.other[a.name].array      # keeps its dtype (pandas 3: str)
    return pd.DataFrame(cols)


def _masks_of(frame: pd.DataFrame, attr) -> np.ndarray:
    cols = mask_columns(attr)
    return np.ascontiguousarray(np.stack([frame[c].to_numpy(dtype=np.uint64) for c in cols],
                                         axis=1))


# ------------------------------------------------------------------ tasks
def _stats_task(part, schema, need_domain, need_counts, missing):
    return ColumnStats(schema, need_domain, need_counts, missing).add(part)


def _publish_task(part, schema, params, key, row0, rng, missing, n_threads, model, info):
    t = publish_chunk(part, schema, params, key, row0, rng=rng, missing=missing,
                      n_threads=n_threads, model=model, info=info)
    return _to_frame(t)


def _w_task(part, attrs, dims, max_set, n_threads):
    from ..randomized import _kernels
    if len(part) == 0:
        return np.zeros(dims, dtype=np.int64)
    return _kernels.count_w([_masks_of(part, a) for a in attrs], dims, max_set,
                            n_threads=n_threads)


def _patterns_task(part, attrs):
    if len(part) == 0:
        return None
    pc = PatternCounter([(a.d + 63) // 64 for a in attrs])
    pc.add_masks([_masks_of(part, a) for a in attrs])
    (masks, cnt) = pc.result()
    return np.concatenate(masks, axis=1), cnt.astype(np.int64)


# --------------------------------------------------------------- published
class DaskSetTable:
    """A published table as a Dask DataFrame of bitmasks.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        One uint64 column per published attribute (``name#k`` for the k-th
        word where d > 64) and the pass-through columns; partition i holds
        global rows ``offsets[i] .. offsets[i + 1] - 1``.
    schema, params, model, info, n_rows
        As :class:`anonset.SetTable`.
    offsets : list of int
    """

    def __init__(self, frame, schema, params, model, info, offsets):
        self.frame, self.schema, self.params = frame, schema, dict(params)
        self.model, self.info, self.offsets = dict(model), dict(info), list(offsets)
        self.n_rows = self.offsets[-1]

    @property
    def names(self) -> list:
        return [a.name for a in self.schema.published]

    def header(self) -> TableHeader:
        return TableHeader(self.schema, self.params, self.model, self.n_rows, self.info)

    def metadata(self) -> dict:
        from .stream import _metadata
        return _metadata(self.schema, self.params, self.model, self.n_rows, self.info)

    def _table(self, frame: pd.DataFrame) -> SetTable:
        frame = frame.reset_index(drop=True)
        masks = {a.name: _masks_of(frame, a) for a in self.schema.published}
        other = [a.name for a in self.schema if a.role == "other"]
        return SetTable(self.schema, masks, self.params, self.model,
                        frame[other] if other else None, self.info)

    def to_settable(self, **compute) -> SetTable:
        """Compute and gather the whole table on the client."""
        return self._table(self.frame.compute(**compute))

    def iter_tables(self, **compute):
        """Partition by partition, in order, as SetTables (one in memory at a time)."""
        for part in self.frame.to_delayed():
            yield self._table(part.compute(**compute))

    def to_parquet(self, path, *, protect=(), **compute) -> None:
        """One Parquet file, as :meth:`SetTable.to_parquet` writes it (a row
        group per partition), gathered partition by partition; atomic."""
        self._write(path, "parquet", protect, compute)

    def to_csv(self, path, *, protect=(), **compute) -> None:
        """CSV with ``{a|b|c}`` cells and ``.anonset.json``, as :meth:`SetTable.to_csv`."""
        self._write(path, "csv", protect, compute)

    def _write(self, path, fmt, protect, compute):
        import contextlib
        import json
        from pathlib import Path

        from .atomic import atomic_path
        from ..randomized.settable import CSV_META_SUFFIX
        from .stream import _CsvSink, _ParquetSink
        meta = self.metadata()
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(atomic_path(path, protect=protect))
            mtmp = stack.enter_context(atomic_path(Path(str(path) + CSV_META_SUFFIX),
                                                   protect=protect)) if fmt == "csv" else None
            sink = (_ParquetSink if fmt == "parquet" else _CsvSink)(tmp, self.schema,
                                                                    self.params, meta, path)
            try:
                for t in self.iter_tables(**compute):
                    if t.n_rows:
                        sink.write(t)
            finally:
                sink.close()
            if mtmp is not None:
                meta["csv_dtypes"] = sink.dtypes
                mtmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")

    def __repr__(self):
        return (f"DaskSetTable(n_rows={self.n_rows}, partitions={len(self.offsets) - 1}, "
                f"{', '.join(self.names)})")


def publish(ddf, model, schema: Schema | None = None, *, seed=None, rng: str = "chacha20",
            n_threads: int | None = 1, missing: str = "error", clip_l: bool = False,
            params=None, scheduler=None, **infer) -> DaskSetTable:
    """Publish a Dask DataFrame partition by partition (paper 000, Sec. V-B).

    Equals ``anonset.publish(ddf.compute(), model, schema, seed=seed, ...)``
    for the same seed, whatever the partitioning.  A first pass (computed
    now) counts each partition's rows and gathers inferred domains and, for
    closeness, each attribute's value counts; the publishing itself is lazy
    (``.frame``).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    model, schema, seed, rng, missing, clip_l, params, **infer
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
    >>> pub = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2), seed=1,
    ...                     scheduler="sync")
    >>> pub.to_settable(scheduler="sync").equals(anonset.publish(df, anonset.Diversity(2), seed=1))
    True
    """
    _require_dask()
    import dask
    import dask.dataframe as dd
    from dask import delayed

    compute_kw = {} if scheduler is None else {"scheduler": scheduler}
    check_rng(rng)
    if missing not in ("error", "category"):
        raise ValueError(f"missing must be 'error' or 'category', got {missing!r}")
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"expected a dask DataFrame, got {type(ddf).__name__}")
    parts = ddf.to_delayed()
    if schema is None:
        sample = None
        for p in parts:
            sample = p.compute(**compute_kw)
            if len(sample):
                break
        if sample is None or len(sample) == 0:
            raise ValueError("the table is empty: nothing to publish")
        base = Schema.infer(sample, missing=missing, **infer)
        need_domain = [a.name for a in base.published if a.inferred]
        del sample
    else:
        if infer:
            raise ValueError(f"give either a schema or inference options, not both "
                             f"(got {sorted(infer)})")
        base, need_domain = schema, []
    for a in base:
        if a.name not in ddf.columns:
            raise ValueError(f"column {a.name!r} of the schema is not in the data")
    if not base.published:
        raise ValueError("no sensitive or exact attribute to publish")
    need_counts = [a.name for a in base.sensitive] if needs_distribution(model) else []
    cols = sorted(set(need_domain) | set(need_counts), key=base.names.index) or \
        [base.names[0]]

    # first pass: lengths (row offsets) and mergeable statistics
    stats_parts = ddf[cols].to_delayed()
    stats = dask.compute(*[delayed(_stats_task)(p, base, need_domain, need_counts, missing)
                           for p in stats_parts], **compute_kw)
    total = ColumnStats(base, need_domain, need_counts, missing)
    offsets = [0]
    for s in stats:
        total.merge(s)
        offsets.append(offsets[-1] + s.n)
    base, counts, n_rows = total.finish()
    if n_rows == 0:
        raise ValueError("the table is empty: nothing to publish")
    params = resolve_params(model, base, counts, params, clip_l)
    keep = Schema(tuple(a for a in base if a.role != "identifier"))
    info = {"rng": rng, "seeded": seed is not None}
    key = make_key(seed, research_seed=True)  # seed policy: enforced by the engine (issue 13)
    mdict = model.to_dict()
    # the published partitions: lazy, pure tasks
    meta = _to_frame(SetTable(keep, {a.name: np.zeros((0, (a.d + 63) // 64), np.uint64)
                                     for a in keep.published}, params, mdict,
                              ddf._meta[[a.name for a in keep if a.role == "other"]]
                              if any(a.role == "other" for a in keep) else None, info))
    tasks = [delayed(_publish_task, pure=True)(p, base, params, key, row0, rng, missing,
                                               n_threads, mdict, info)
             for p, row0 in zip(parts, offsets[:-1])]
    del key
    frame = dd.from_delayed(tasks, meta=meta, verify_meta=False)
    return DaskSetTable(frame, keep, params, mdict, info, offsets)


def reconstruct(pub: DaskSetTable, attributes, method: str = "em", *, max_iter: int = 2000,
                tol: float = 1e-6, n_threads: int | None = None, seed=None,
                **compute) -> CrossTab:
    """Reconstruct a cross-tabulation from a :class:`DaskSetTable`.

    Per-partition counts (w of eq. 17, or distinct set tuples for
    'exact_em') are computed on the workers and summed on the client, where
    the EM runs.  Equals ``anonset.reconstruct(pub.to_settable(), ...)``.
    """
    _require_dask()
    import dask
    from dask import delayed

    from ..randomized.reconstruct import METHODS, _check_attrs, _dims, _threads
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    header = pub.header()
    attributes = _check_attrs(header, attributes)
    dims = _dims(header, attributes)
    attrs = [pub.schema[a] for a in attributes]
    cols = [c for a in attrs for c in mask_columns(a)]
    parts = pub.frame[cols].to_delayed()
    if method == "random":
        return reconstruct_from_counts(header, attributes, method, seed=seed)
    if method == "exact_em":
        res = dask.compute(*[delayed(_patterns_task)(p, attrs) for p in parts], **compute)
        pc = PatternCounter([(a.d + 63) // 64 for a in attrs])
        for r in res:
            if r is not None:
                pc.add_patterns(*r)
        return reconstruct_from_counts(header, attributes, method, patterns=pc.result(),
                                       max_iter=max_iter, tol=tol, n_threads=n_threads)
    max_set = math.prod(header.params[a].eta for a in attributes)
    ws = dask.compute(*[delayed(_w_task)(p, attrs, dims, max_set, 1) for p in parts], **compute)
    w = np.zeros(dims, dtype=np.int64)
    for x in ws:
        w += x
    return reconstruct_from_counts(header, attributes, method, w=w, max_iter=max_iter,
                                   tol=tol, n_threads=_threads(n_threads) or None, seed=seed)
