"""The audit of a published file larger than memory, chunk by chunk (issue
15 item 6, issue 16 target 6).

The first pass reads the published sets (:func:`anonset.io.stream.iter_masks`)
and, where given, the original file, and adds up :class:`~anonset.audit.
stats.AuditStats`: set sizes, values outside the domain, per-value counts,
the true value's inclusion, A_j, the pass-through columns' value counts (by
distinct sampling, bounded memory) and the sets of the few rows the attack
and the class checks need.  Every check that a whole table determines is a
function of those statistics, so the report has the same rows as
:func:`anonset.audit.audit` on the table in memory, except that
diversity and anonymity rest on the proof from set sizes (paper 000's
lemma, docs/security.md): a second pass measures sampled classes exactly
only where that proof fails.  Memory is bounded by ``chunk_rows`` and the
distinct-sample budget, never by the file.
"""
from __future__ import annotations

import os

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .._typing import PathLike, Seed, TableLike
from ..io.stream import DEFAULT_CHUNK_ROWS, iter_masks, read_metadata
from ..io.tables import file_format, iter_blocks
from ..randomized.params import AttributeParams
from ..schema import Schema
from ..validate import (InputError, check_int, check_n_classes, check_original_columns,
                        check_sampling_seed, release_sample_seed)
from . import report as _report
from .attack import attack_rows, check_attack_args, choose_victims, reconstructed_marginal
from .checks import anonymity_result, declared_target, diversity_result, proven_by_sizes
from .classes import class_counts, record_class_stats, sample_keys, sampled_counts
from .masks import MaskMembership, bits
from .stats import DEFAULT_BUDGET, AuditStats, hash_cells

__all__ = ["audit_file", "FileHeader"]


class FileHeader:
    """A published file's metadata seen as a table without rows: ``schema``,
    ``params``, ``model``, ``info``, ``n_rows`` and ``names``."""

    def __init__(self, meta: dict):
        self.meta = meta
        self.schema = Schema.from_dict(meta["schema"])
        self.params = {k: AttributeParams.from_dict(v) for k, v in meta["params"].items()}
        self.model = dict(meta.get("model") or {})
        self.info = dict(meta.get("info") or {})
        self.n_rows = int(meta["n_rows"])

    @property
    def names(self) -> list:
        return [a.name for a in self.schema.published]


class _Lined:
    """Rows of the original handed out in pieces of given sizes, whatever
    the sizes of the chunks it is read in (lines the original up with the
    published chunks)."""

    def __init__(self, chunks):
        self.chunks = iter(chunks)
        self.codes, self.frame = None, None

    def _have(self) -> int:
        return 0 if self.frame is None else len(self.frame)

    def take(self, n: int):
        while self._have() < n:
            nxt = next(self.chunks, None)
            if nxt is None:
                break
            c, f = nxt
            if self.frame is None:
                self.codes, self.frame = c, f
            else:
                if self.codes is not None:
                    self.codes = {k: np.concatenate([v, c[k]]) for k, v in self.codes.items()}
                self.frame = pd.concat([self.frame, f], ignore_index=True)
        if self.frame is None or not len(self.frame):
            return None
        if self.codes is None:          # cells only
            out = (None, self.frame.iloc[:n])
            self.frame = self.frame.iloc[n:].reset_index(drop=True)
            return out
        out = ({k: v[:n] for k, v in self.codes.items()}, self.frame.iloc[:n])
        self.codes = {k: v[n:] for k, v in self.codes.items()}
        self.frame = self.frame.iloc[n:].reset_index(drop=True)
        return out

    def rest(self):
        while True:
            part = self.take(1 << 20)
            if part is None:
                return
            yield part


def _original_columns(original, fmt) -> list:
    if isinstance(original, pd.DataFrame):
        return list(original.columns)
    if file_format(original, fmt, param="original_format") == "parquet":
        import pyarrow.parquet as pq
        from ..validate import check_columns
        # a repeated name, refused naming the file (H72)
        return check_columns(pq.ParquetFile(original).schema_arrow.names, file=original)
    from ..io.tables import file_columns
    return file_columns(original, "csv")


def _original_chunks(original, header, opts, cols, chunk_rows, fmt):
    """(codes, frame) chunks of the original: a file read in chunks, or a
    DataFrame cut into chunks."""
    from ..encode import encode
    names = header.names
    check_original_columns(names, cols,
                           file=None if isinstance(original, pd.DataFrame) else original)
    from ..engine import cast_text
    from ..validate import as_published, missing_rows
    csv = False
    if isinstance(original, pd.DataFrame):
        chunks = (original.iloc[i:i + chunk_rows].reset_index(drop=True)
                  for i in range(0, len(original), chunk_rows))
    else:
        text = [c for c in opts.passthrough if c in cols and c not in names]
        rid = header.info.get("record_id")
        if rid is not None and rid in cols and rid not in names + text:
            text.append(rid)        # a record's rows share their sets (AuditStats.clusters)
        ofmt = file_format(original, fmt, param="original_format")
        csv = ofmt == "csv"
        chunks = (b for _, b in iter_blocks(original, ofmt, chunk_rows=chunk_rows,
                                            columns=names + text))
    for chunk in chunks:
        if csv:                 # typed as the engine typed them when publishing
            chunk = chunk.copy()
            for n in names:
                chunk[n] = cast_text(chunk[n], header.schema[n], n, original)
        if opts.drop:           # the publisher left the rows with a missing cell out
            gone = missing_rows(chunk, names)[0]
            if gone.any():
                chunk = chunk.loc[~gone].reset_index(drop=True)
        chunk = as_published(chunk, opts.category)      # missing='category' of semantic
        yield encode(chunk, header.schema, columns=names, missing=opts.missing), chunk


def _pass_one(path, fmt, header, opts, stats, original, ocols, chunk_rows, ofmt,
              progress=None) -> int:
    """Published sets (with the original lined up where aligned), then the
    rest of the original and the published pass-through columns."""
    names = header.names
    orig = lined = None
    if original is not None:
        orig = _original_chunks(original, header, opts, ocols, chunk_rows, ofmt)
        # lined up by position even where the rows are said to be shuffled:
        # whether they are is measured (add_positions, H104)
        lined = _Lined(orig)
    # the published pass-through cells beside the sets, where the position
    # test reads them (H110: they showed a release in input order)
    shown = [c for c in stats.passthrough if c in ocols] \
        if original is not None and not opts.aligned else []
    cells = _Lined((None, _unescaped(f, fmt, header))
                   for _, f in _stored_blocks(path, fmt, header, shown, chunk_rows)) \
        if shown else None
    chunks = 0
    for row0, masks in iter_masks(path, names, chunk_rows=chunk_rows, fmt=fmt, meta=header.meta):
        k = masks[0].shape[0]
        truth = None
        part = lined.take(k) if lined is not None else None
        if part is not None:
            stats.add_original(*part)
            truth = part[0] if len(part[1]) == k else None
            if truth is not None and not opts.aligned:
                pub = cells.take(k)[1] if cells is not None else None
                stats.add_positions(row0, dict(zip(names, masks)), truth, pub, part[1])
                truth = None
        stats.add_sets(row0, dict(zip(names, masks)), truth, opts.semantic)
        chunks += 1
        if progress is not None:
            progress(k)
    for part in (lined.rest() if lined is not None else ()):
        stats.add_original(*part)
    cols = list(opts.passthrough)
    if cols:
        # the exact QIDs as stored, beside the pass-through columns of the
        # same rows: their combinations link rows across releases
        for _, frame in _stored_blocks(path, fmt, header, cols + stats.exact, chunk_rows):
            # the cells as published (a CSV's unescaped), compared with the original's
            stats.add_passthrough(_unescaped(frame, fmt, header),
                                  {n: hash_cells(frame[n]) for n in stats.exact})
    return chunks


def _unescaped(frame, fmt, header):
    """A CSV block's cells as they were before the escape that keeps a
    spreadsheet from running them ("'=x" is '=x')."""
    if fmt == "parquet" or not header.meta.get("csv_escape"):
        return frame
    out = {}
    for c in frame.columns:                 # a CSV block's cells are text
        col = frame[c].astype(object)
        quoted = col.str.startswith("'", na=False)
        out[c] = col.where(~quoted, col.str[1:]) if quoted.any() else col
    return pd.DataFrame(out, index=frame.index)


def _stored_blocks(path, fmt, header, want, chunk_rows):
    """Blocks of the published columns ``want`` as stored, named as they
    are (a CSV's headers as written: '=x' is stored "'=x", H60)."""
    stored = want
    if fmt != "parquet" and header.meta.get("csv_escape"):
        from ..io.published import _escape_header
        stored = [_escape_header(c) for c in want]
    for row0, frame in iter_blocks(path, fmt, chunk_rows=chunk_rows, columns=stored):
        yield row0, frame.rename(columns=dict(zip(stored, want)))


def _pass_two(path, fmt, header, stats, picks, class_rows, record_rows, seed, chunk_rows,
              truth: bool, progress=None) -> tuple:
    """Exact counts of sampled classes (keys drawn as the in-memory audit
    draws them) and of the classes keyed by sampled records' true values,
    added up over the chunks."""
    names = header.names
    dims = [header.schema[n].d for n in names]
    rng = np.random.default_rng(seed)
    rng.integers(0, header.n_rows, size=class_rows.size)      # the draws of class_rows
    at = np.searchsorted(picks, class_rows)
    keys = sample_keys([bits(stats.picked_masks(n)[at], d) for n, d in zip(names, dims)], rng)
    rkeys = None
    if truth:
        at = np.searchsorted(picks, record_rows)
        rkeys = np.stack([stats.picked_codes(n)[at] for n in names], axis=1).astype(np.int64)
        keys = np.concatenate([keys, rkeys])
    totals = [np.zeros((len(keys), d), dtype=np.int64) for d in dims]
    for _, masks in iter_masks(path, names, chunk_rows=chunk_rows, fmt=fmt, meta=header.meta):
        # a column or a class at a time: a chunk of 262,144 rows over 60,000
        # values would be 15.7 GB as a dense matrix
        lazy = [MaskMembership(m, d) for m, d in zip(masks, dims)]
        for acc, c in zip(totals, class_counts(lazy, keys)):
            acc += c
        if progress is not None:
            progress(masks[0].shape[0] if masks else 0)
    k = class_rows.size
    exact = sampled_counts(names, [t[:k] for t in totals])
    classes = None if rkeys is None else record_class_stats(
        names, [declared_target(header.params, n, "l") for n in names], rkeys,
        [t[k:] for t in totals])
    return exact, classes


def audit_file(path: PathLike, original: PathLike | TableLike | None = None, *,
               chunk_rows: int = DEFAULT_CHUNK_ROWS, format: str | None = None,
               original_format: str | None = None, attack: bool = False,
               known: int | Sequence[str] | None = None, n_targets: int = 10_000,
               prior: str = "marginal", n_classes: int = 200, z_max: float = 4.0,
               closeness_margin: float = 0.01, seed: Seed = None, missing: str | None = None,
               aligned: bool | None = None,
               budget: int | None = DEFAULT_BUDGET,
               progress: Callable[[int], None] | None = None) -> _report.AuditReport:
    """Audit a published Parquet or CSV file chunk by chunk, in bounded memory.

    The same checks and risks as :func:`anonset.audit.audit` (see there and
    the module docstring for what differs: diversity and anonymity from set
    sizes, sampled classes only where that proof fails; the attack with the
    marginal prior only).

    Parameters
    ----------
    path : path
        The published table (.parquet, or .csv with its .anonset.json).
    original : path or DataFrame, optional
        The original rows of this publication (CSV or Parquet file, read in
        chunks too).
    chunk_rows : int
        Rows per chunk (memory is proportional to it).
    budget : int or None
        Distinct (value, sensitive value) pairs each pass-through statistic
        keeps (distinct sampling beyond it; None: exact).
    format, original_format : {'csv', 'parquet'}, optional
        Default: from the file names.
    progress : callable, optional
        Called with the number of published rows of each chunk read (in
        both passes).
    Other parameters as :func:`anonset.audit.audit`.

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> import os, tempfile, pandas as pd, anonset
    >>> from anonset.audit import audit_file
    >>> df = pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")})
    >>> path = os.path.join(tempfile.mkdtemp(), "pub.parquet")
    >>> anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"],
    ...                 domains={"a": list("wxyz"), "b": list("uvw")}).to_parquet(path)
    >>> rep = audit_file(path, df, chunk_rows=3)
    >>> rep.conforms, rep.facts["how"]
    (True, 'in 3 chunks of up to 3 rows')
    """
    if not isinstance(path, (str, os.PathLike)):
        # a SetTable was named by its repr as a file with no known extension
        raise InputError(f"got a {type(path).__name__}", param="path",
                         expected="the path of a published file (a table in memory: "
                                  "anonset.audit)")
    chunk_rows = check_int(chunk_rows, "chunk_rows", minimum=1)
    if budget is not None:
        # 0 sampled every value away (a false PASSED), below 0 never ended (H86)
        budget = check_int(budget, "budget", minimum=1024)
    from ..validate import check_bool, check_progress
    check_progress(progress)
    attack = check_bool(attack, "attack")
    n_classes = check_n_classes(n_classes)
    check_sampling_seed(seed)
    fmt = file_format(path, format)
    header = FileHeader(read_metadata(path, fmt))
    seed = release_sample_seed(seed, header)
    opts = _report.Options.resolve(header, missing=missing, aligned=aligned, z_max=z_max,
                                   closeness_margin=closeness_margin)
    n = header.n_rows
    if n == 0:
        raise InputError("has no rows", file=path, expected=_report.EMPTY_EXPECTED)
    if original is not None and not isinstance(original, (str, os.PathLike)):
        # a table (pandas, Arrow, Polars, DuckDB), never taken for a file's
        # name (whose message showed its rows: H72); a repeated column is
        # refused as the original's
        from ..io.tables import as_frame
        original = as_frame(original, param="original")
    ocols = _original_columns(original, original_format) if original is not None else []
    victims = np.empty(0, dtype=np.int64)
    if attack:
        n_targets = check_int(n_targets, "n_targets", minimum=1)
        if prior != "marginal":
            raise InputError(f"got {prior!r}; the conditional prior needs the table in memory",
                             param="prior", expected="'marginal' in a chunked audit")
        sens, source, known = check_attack_args(header, original, known, n_targets, prior,
                                                "auto", opts.aligned)
        victims, K = choose_victims(np.random.default_rng(seed), n, n_targets, sens, known)
    class_rows = np.random.default_rng(seed).integers(0, max(n, 1), size=n_classes)
    record_rows = np.random.default_rng(seed).choice(n, size=min(n_classes, n), replace=False)
    picks = np.unique(np.concatenate([victims, class_rows, record_rows]).astype(np.int64))
    stats = AuditStats(header, picks=picks, passthrough=opts.passthrough,
                       pairs=opts.pairs(header, ocols), budget=budget)
    chunks = _pass_one(path, fmt, header, opts, stats, original, ocols, chunk_rows,
                       original_format, progress)
    rows = _report.Rows()
    _report.model_sections(header, stats, rows, opts)
    want_div, want_an = _report.wants_classes(header)
    sizes = stats.size_range()
    exact = classes = None
    truth = original is not None and opts.aligned
    if (want_div or want_an) and not proven_by_sizes(header, sizes, want_div, want_an):
        exact, classes = _pass_two(path, fmt, header, stats, picks, class_rows, record_rows,
                                   seed, chunk_rows, truth, progress)
    div = diversity_result(header, sizes, exact, None, header.model.get("measure", "frequency")) \
        if want_div else None
    an = anonymity_result(header, sizes, exact) if want_an else None
    _report.class_sections(div, an, rows)
    clo = _report.closeness_section(header, stats, rows, opts, original is not None)
    if original is not None:
        _report.holder_sections(header, stats, rows, opts)
        _report.record_class_section(classes, rows)
    att = None
    if attack:
        at = np.searchsorted(picks, victims)
        marg = {j: stats.A[j] / stats.A[j].sum() if source == "true" else
                reconstructed_marginal(header, j, stats.w[j]) for j in sens}
        att = attack_rows(
            header, sens, victims, K,
            lambda j, sel: bits(stats.picked_masks(j)[at[sel]], header.schema[j].d),
            lambda j, sel: stats.picked_codes(j)[at[sel]] if truth else None,
            lambda j, sel: np.broadcast_to(marg[j], (int(sel.sum()), marg[j].size)), marg,
            {"known": known, "prior": prior, "prior_source": source,
             "n_targets": int(victims.size), "seed_given": seed is not None,
             "aligned": opts.aligned})
        _report.attack_closeness_section(att, rows)
    eps = _report.risk_sections(header, stats, att, rows)
    from .columns import column_rows
    for r in column_rows(path, fmt, read_metadata(path, fmt)):   # the file's own columns
        rows.add(**r)
    return _report.AuditReport(rows.frame(), div, an, clo, classes, att, original is not None,
                               eps, {"rows": n, "how": f"in {chunks:,} chunk"
                                     f"{'' if chunks == 1 else 's'} of up to {chunk_rows:,} rows",
                                     "aligned": opts.aligned})
