"""Columns a published file holds that its metadata does not describe.

The audit reads the columns the release's metadata names; a column added
afterwards (an analyst's join, a third-party tool, a publisher's bug) was
never read, and a release with a column of the raw sensitive values beside
its sets passed (H59).  Such a file is not the release its metadata
describes: each check names its unknown columns and fails."""
from __future__ import annotations

from pathlib import Path

from .report import AuditReport

__all__ = ["file_columns", "declared_columns", "column_rows", "with_column_check"]


def file_columns(path, fmt: str, meta: dict) -> list:
    """The column names of a published file as written (a CSV's escaped
    headers read back; no rows read)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq
        return list(pq.ParquetFile(str(path)).schema_arrow.names)
    import pandas as pd
    names = list(pd.read_csv(path, nrows=0).columns)
    # set tables record 'csv_escape', lgb / msa releases csv.escape (H62)
    if meta.get("csv_escape") or (meta.get("csv") or {}).get("escape"):
        from ..io.published import _unescape_header
        names = [_unescape_header(c) for c in names]
    return names


def declared_columns(meta: dict) -> tuple:
    """(the columns the metadata describes, the columns it says were never
    published: identifiers and dropped ones) of a set table (a ``schema``)
    or an lgb (002) / msa (003) release."""
    paper = str(meta.get("paper", ""))
    model = meta.get("model") or {}
    if paper == "002":
        roles = model.get("attributes") or {}
        own = ["ID", "GID", *roles, *(f"{a}_bid" for a, r in roles.items() if r != "qi")]
    elif paper == "003":
        own = ["ec", *(model.get("quasi_identifiers") or ()), *(model.get("sensitive") or ())]
    else:
        attrs = ((meta.get("schema") or {}).get("attributes")) or []
        own = [a.get("name") for a in attrs if isinstance(a, dict)]
    info = meta.get("info") if isinstance(meta.get("info"), dict) else meta
    own += list(info.get("pass_through") or ())
    never = list(info.get("identifiers") or ()) + list(info.get("dropped") or ())
    roles = info.get("roles") if isinstance(info.get("roles"), dict) else {}
    never += [c for c, r in roles.items() if r in ("identifier", "identifiers", "drop")]
    return own, never


def column_rows(path, fmt: str, meta: dict) -> list:
    """The check's row (as :class:`~anonset.audit.report.Rows` holds them)."""
    own, never = declared_columns(meta)
    extra = [c for c in file_columns(path, fmt, meta) if c not in set(own)]
    if not extra:
        return [{"check": "columns", "attribute": "-", "status": "pass", "value": 0,
                 "expected": 0, "message": "the file holds only the columns its metadata "
                                           "describes"}]
    flagged = [c for c in extra if c in never]
    named = ", ".join(repr(c) for c in extra[:5]) + (f" and {len(extra) - 5} more"
                                                      if len(extra) > 5 else "")
    return [{"check": "columns", "attribute": str(extra[0]), "status": "fail",
             "value": len(extra), "expected": 0,
             "message": f"{Path(str(path)).name} holds {len(extra)} column(s) its metadata "
                        f"does not describe ({named})"
                        + (f", {', '.join(repr(c) for c in flagged)} among those it lists as "
                           "never published (identifiers, dropped)" if flagged else "")
                        + ": the audit did not read them, and a column of raw values beside "
                          "the release publishes them in the clear"}]


def with_column_check(report: AuditReport, path, fmt: str, meta: dict) -> AuditReport:
    """``report`` with the file's columns checked against its metadata."""
    import dataclasses

    import pandas as pd
    if (report.checks["check"] == "columns").any():      # audit_file checked them
        return report
    rows = pd.DataFrame(column_rows(path, fmt, meta), columns=report.checks.columns)
    return dataclasses.replace(report, checks=pd.concat([report.checks, rows],
                                                        ignore_index=True))
