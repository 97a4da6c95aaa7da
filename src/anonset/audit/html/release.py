"""What the report is about: a release read from a file or given as an
object, and its kind told from its metadata -- randomized sets of papers 000
and 004 (``anonset anonymize``), (l, d)-semantic sets of paper 001
(``anonset semantic-anonymize``), local generalization and bucketization of
paper 002 (``anonset lgb``) or t-closeness for several sensitive attributes
of paper 003 (``anonset msa-anonymize``).

A set table larger than ``AUTO_CHUNK_ABOVE`` rows (or any, with
``chunk_rows``) is left on disk and read chunk by chunk by the audit and the
reconstruction; a smaller one is read whole (every set checked on reading).
A partition release is read whole (its publishers work in memory), from
Parquet or from a CSV with the ``.anonset.json`` written beside it (which
types its columns; a CSV written before 2026-11-27 has none).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...validate import InputError

__all__ = ["Release", "open_release", "AUTO_CHUNK_ABOVE", "KINDS"]

#: Above this many rows a published set table is read chunk by chunk.
AUTO_CHUNK_ABOVE = 2_000_000
#: kind -> (paper, what the subcommand is)
KINDS = {"sets": ("000", "random sets (anonset anonymize)"),
         "sets-qid": ("004", "random sets with exact QIDs (anonset anonymize --exact)"),
         "semantic": ("001", "(l, d)-semantic diversity (anonset semantic-anonymize)"),
         "lgb": ("002", "local generalization and bucketization (anonset lgb)"),
         "msa": ("003", "t-closeness for several sensitive attributes (anonset msa-anonymize)")}


def domain_values(schema) -> dict:
    """Per published column of a set table, the values of its domain, which
    a CSV original's missing markers are not read as
    (:func:`~anonset.io.tables.type_text_column`)."""
    return {a.name: list(a.domain) for a in schema if a.domain is not None}


@dataclass
class Release:
    """A release to report on.

    ``header`` (set tables) has schema, params, model, info, n_rows and
    names; ``table`` is the SetTable when in memory; ``frame`` the published
    partition table; ``meta`` the metadata as stored.
    """

    kind: str
    name: str
    n_rows: int
    meta: dict
    path: Path | None = None
    fmt: str | None = None
    header: object = None
    table: object = None
    frame: pd.DataFrame | None = None
    streamed: bool = False

    @property
    def paper(self) -> str:
        return KINDS[self.kind][0]

    @property
    def what(self) -> str:
        return KINDS[self.kind][1]

    @property
    def randomized(self) -> bool:
        return self.kind in ("sets", "sets-qid", "semantic")

    def declared_values(self) -> dict:
        """Per column, the values the release holds as values (a set
        table's domains; a partition table's published cells), which a CSV
        original's missing markers are not read as: 'NA' for North America
        is a value where the publisher read it so (H139, H145)."""
        schema = getattr(self.header, "schema", None)
        if schema is not None:
            return domain_values(schema)
        if self.frame is None:
            return {}
        return {c: list(pd.unique(self.frame[c].dropna().astype(str)))
                for c in self.frame.columns}

    @property
    def semantic_attribute(self):
        """The sensitive attribute of a semantic table, else None."""
        if self.kind != "semantic":
            return None
        return self.header.model.get("sensitive")

    @property
    def missing(self) -> str:
        """How the original's missing cells are encoded: 'error' or
        'category' (rows left out by missing='drop' hold none)."""
        m = (self.header.info or {}).get("missing") if self.header is not None else None
        policy = (m.get("policy", "error") if isinstance(m, dict) else m) or "error"
        return "error" if policy == "drop" else policy

    @property
    def dropped_columns(self) -> list:
        """The columns whose missing cells left their rows out of the release
        (missing='drop'): the original's rows with one are not in it."""
        m = (self.header.info or {}).get("missing") if self.header is not None else None
        if not isinstance(m, dict) or m.get("policy") != "drop":
            return []
        return list(m.get("columns") or {})


def _set_kind(header) -> str:
    if (header.model or {}).get("name") == "semantic":
        return "semantic"
    if any(header.params[n].exact for n in header.names):
        return "sets-qid"
    return "sets"


def _from_object(obj) -> Release | None:
    from ...partition.lgb.core import LGBResult
    from ...partition.msa.result import MSAResult
    from ...randomized.settable import SetTable
    if isinstance(obj, SetTable):
        return Release(_set_kind(obj), "table in memory", obj.n_rows, obj.metadata(),
                       header=obj, table=obj)
    if isinstance(obj, LGBResult):
        from ...partition.lgb.metrics import c_dm, ncp
        meta = {**obj.metadata, "utility": {"C_DM": c_dm(obj), "NCP": ncp(obj)}}
        return Release("lgb", "LGB release in memory", obj.n, meta, frame=obj.table)
    if isinstance(obj, MSAResult):
        meta = {**obj.metadata, "utility": {"il": obj.information_loss()}}
        frame = obj.generalized()
        return Release("msa", "MSA release in memory", len(frame), meta, frame=frame)
    return None


def open_release(published, *, chunk_rows=None, format=None) -> Release:
    """The release in ``published``: a path (.parquet, or .csv with its
    .anonset.json), a SetTable, or an LGB / MSA result object."""
    rel = _from_object(published)
    if rel is not None:
        return rel
    if not isinstance(published, (str, Path)) and not hasattr(published, "__fspath__"):
        raise InputError(f"got a {type(published).__name__}", param="published",
                         expected="a release: a path (.parquet, or .csv with its "
                                  ".anonset.json), a SetTable, or an LGB or msa result")
    from ...io.published import check_metadata, read_metadata, read_settable
    from ...io.tables import check_input_file, file_format
    from ...partition.output import read_metadata as partition_metadata
    path = check_input_file(published, param="published")
    fmt = file_format(path, format, param="format")
    if fmt == "parquet":
        meta = partition_metadata(path)
        kind = {"002": "lgb", "003": "msa"}.get(str(meta.get("paper")))
        if kind is not None:
            frame = pd.read_parquet(path)
            return Release(kind, path.name, len(frame), meta, path, fmt, frame=frame)
    elif not Path(str(path) + ".anonset.json").is_file():
        raise InputError("has no .anonset.json beside it", file=path,
                         expected="a release written by anonset (.parquet, or .csv with its "
                                  ".anonset.json)")
    else:
        from ...partition.output import csv_metadata, read_csv_release
        kind = {"002": "lgb", "003": "msa"}.get(str(csv_metadata(path).get("paper")))
        if kind is not None:
            meta, frame = read_csv_release(path)
            return Release(kind, path.name, len(frame), meta, path, fmt, frame=frame)
    meta = read_metadata(path, fmt)
    header = check_metadata(meta, path)
    kind = _set_kind(header)
    streamed = kind != "semantic" and (chunk_rows > 0 if chunk_rows is not None
                                       else header.n_rows > AUTO_CHUNK_ABOVE)
    if streamed:
        return Release(kind, path.name, header.n_rows, meta, path, fmt, header=header,
                       streamed=True)
    table = read_settable(path, fmt)
    return Release(kind, path.name, table.n_rows, meta, path, fmt, header=table, table=table)
