"""The sections every release report has, whatever the kind of release:
the release at a glance (rows, columns and their roles, the model, the key
and the row order), the privacy verdict, every check in plain words, and how
to reproduce the check, with a sign-off block.  The sections that depend on
the kind live in :mod:`.randomized` and :mod:`.partition`."""
from __future__ import annotations

import datetime as dt
import math

from .page import badge, data_value, esc, facts, num, table
from .words import CHECKS, KEY_MODES, ROLES, ROW_ORDERS

__all__ = ["Figures", "describe_model", "glance", "verdict", "checks", "reproduce",
           "SEVERITY"]

#: Order of the check table: what needs attention first.
SEVERITY = {"fail": 0, "risk": 1, "unverified": 2, "warn": 3, "pass": 4, "info": 5}


class Figures:
    """Numbers the figures of one page (unique ids for their SVG), and
    counts them as progress."""

    def __init__(self, steps=None):
        self.n = 0
        self.steps = steps

    def fid(self) -> str:
        self.n += 1
        if self.steps is not None:
            self.steps(1)
        return f"fig{self.n}"


def _per(value) -> str:
    if isinstance(value, dict):
        vals = set(map(str, value.values()))
        if len(vals) == 1:
            return vals.pop()
        return ", ".join(f"{k} = {v}" for k, v in value.items())
    return str(value)


def describe_model(kind: str, model: dict) -> str:
    """The declared privacy model in words."""
    m = model or {}
    if kind == "semantic":
        return (f"({m.get('l')}, {m.get('d')})-semantic diversity of {m.get('sensitive')} "
                f"(paper 001, Definition 1; {m.get('algorithm', 'simple')} sampler)")
    if kind == "msa":
        return (f"k-anonymity with k = {m.get('k')} and t-closeness with t = {m.get('t')} for "
                f"every sensitive attribute (paper 003, Def. 4; algorithm "
                f"{m.get('algorithm')})")
    if kind == "lgb":
        parts = [f"groups of at least k = {m.get('k')} rows"]
        if m.get("l"):
            parts.append(f"l-diverse buckets (l: {_per(m['l'])})")
        if m.get("closeness"):
            parts.append(f"t-close buckets (t: {_per(m['closeness'])})")
        split = {"paper": ", Alg. 3 as printed",
                 "below_max": ", split below a node's largest value where it is the median"
                 }.get(m.get("mdp_split"), "")
        return "; ".join(parts) + f" (paper 002, {m.get('method', 'mdp')} generalization{split})"
    name = m.get("model")
    if name == "diversity":
        return (f"{m.get('measure', 'frequency')} l-diversity (paper 000 Def. 11-14), "
                f"l: {_per(m.get('l'))}")
    if name == "anonymity":
        return f"k-anonymity (paper 000 Def. 17-18), k: {_per(m.get('k'))}"
    if name == "closeness":
        return f"t-closeness (paper 000 Def. 15-16), t: {_per(m.get('t'))}"
    if name == "diversity+closeness":
        return (f"{m.get('measure', 'frequency')} l-diversity and t-closeness (paper 000 "
                f"Sec. VII-D), l: {_per(m.get('l'))}, "
                f"t: {_per(m.get('t'))}")
    return "none declared" if not m else str(m)


def _release_facts(release, version: str) -> list:
    meta = release.meta
    info = (release.header.info if release.header is not None else meta) or {}
    key = info.get("key")
    order = info.get("row_order")
    items = [("release", esc(release.name)),
             ("kind", esc(f"paper {release.paper}: {release.what}"), {"id": "kind",
                                                                     "data-kind": release.kind}),
             ("rows", esc(num(release.n_rows)), {"id": "rows",
                                                 "data-value": data_value(release.n_rows)}),
             ("privacy model", esc(describe_model(release.kind,
                                                  release.header.model if release.header
                                                  is not None else meta.get("model")))),
             ("key", esc(f"{key}: {KEY_MODES.get(key, 'not recorded')}"),
              {"id": "key", "data-value": key or ""}),
             ("row order", esc(f"{order}: {ROW_ORDERS.get(order, 'not recorded')}"),
              {"id": "row-order", "data-value": order or ""})]
    if release.randomized:
        clear = list(info.get("clear") or ())
        items.append(("published in the clear", esc(", ".join(clear) or "none"),
                      {"id": "clear", "data-value": ",".join(clear)}))
        other = [a.name for a in release.header.schema if a.role == "other"]
    else:
        other = list(meta.get("pass_through") or ())
        if meta.get("ids"):
            items.append(("record IDs", esc(meta["ids"])))
    items.append(("passed through unchanged", esc(", ".join(other) or "none"),
                  {"id": "pass-through", "data-value": ",".join(other)}))
    rec = info.get("missing") if isinstance(info.get("missing"), dict) else meta.get("missing")
    if isinstance(rec, dict) and rec.get("policy") == "drop":
        cols = _cells(rec.get("columns"))
        items.append(("rows left out", esc(f"{num(rec.get('rows', 0))}, for a missing value "
                                           f"(missing='drop'; missing cells: {cols or 'none'})"),
                      {"id": "rows-left-out", "data-value": data_value(rec.get("rows", 0))}))
    if isinstance(rec, dict) and rec.get("policy") == "category" and rec.get("columns"):
        cols = _cells(rec["columns"])
        items.append(("missing cells", esc(f"published as the value {rec.get('token')!r} "
                                           f"(missing='category'): {cols}"),
                      {"id": "missing-category", "data-value": rec.get("token")}))
    made = info.get("anonset") or meta.get("anonset")
    items.append(("published with", esc(f"anonset {made}" if made else "not recorded")))
    items.append(("report made with", esc(f"anonset {version}")))
    return items


def _cells(columns) -> str:
    """A ``missing`` record's columns: with their counts where it holds them."""
    if isinstance(columns, dict):
        return ", ".join(f"{c} {num(k)}" for c, k in columns.items())
    return ", ".join(map(str, columns or ()))


def _set_columns(release) -> str:
    header = release.header
    roles = dict((header.info or {}).get("roles") or {})
    for a in header.schema:
        roles.setdefault(a.name, a.role)
    rows, attrs = [], []
    for col, role in roles.items():
        pub = col in header.schema.names
        par = header.params.get(col) if pub else None
        if par is not None and not par.exact:
            how = f"sets of {par.eta} of {par.d} values"
        elif par is not None:
            how = "exactly"
        else:
            how = "unchanged" if pub else "not published"
        word = "semantic" if col == release.semantic_attribute else role
        rows.append([col, ROLES.get(word, role), num(header.schema[col].d) if pub and
                     header.schema[col].d else "-", how])
        attrs.append({"data-column": col, "data-role": role})
    return table(["column", "role", "values (d)", "published as"], rows, row_attrs=attrs,
                 numeric=(2,), attrs={"id": "columns"})


def glance(release, version: str, extra: str = "") -> str:
    """Rows, kind, model, key, order, and the table of columns (set
    tables; ``extra`` holds the kind's own tables)."""
    body = facts(_release_facts(release, version))
    if release.randomized:
        body += "<h3>Columns</h3>" + _set_columns(release)
    return body + extra


def verdict(report, kind_note: str = "") -> str:
    """The verdict banner and the lists of what failed and what is at risk."""
    v = report.verdict
    cls = {"PASSED": "ok", "RISKS FOUND": "warn", "FAILED": "bad"}[v]
    risks, fails = report.risks, report.failures
    head = (f'<p class="verdict {cls}" id="verdict" data-verdict="{esc(v)}" '
            f'data-conforms="{data_value(report.conforms)}" data-risks="{len(risks)}" '
            f'data-failures="{len(fails)}">Privacy verdict: <strong>{esc(v)}</strong></p>')
    words = {"PASSED": "The release conforms to its declared privacy model and no risk "
                       "outside the model was found.",
             "RISKS FOUND": "The release conforms to its declared privacy model, but carries "
                            "the risks listed below, which the model does not cover (some may "
                            "have been chosen by the publisher, who named them).",
             "FAILED": "The release does NOT conform to its declared privacy model: see the "
                       "failed checks below before anything else."}[v]
    unverified = int((report.checks["status"] == "unverified").sum())
    if unverified and v != "FAILED":
        # what could not be decided is not said to conform (H34)
        words = words.replace("conforms to its declared privacy model",
                              "conforms to its declared privacy model as far as it could be "
                              f"checked ({unverified} check{'s' if unverified > 1 else ''} "
                              "could not be decided: listed under \u201cNot verified\u201d)")
    body = head + f"<p>{esc(words)} {esc(kind_note)}</p>"
    counts = report.checks["status"].value_counts()
    body += "<p>" + " ".join(f"{badge(s)} {int(counts[s])}" for s in SEVERITY if s in counts) \
        + "</p>"
    for title, msgs in (("Failed checks", fails), ("Risks", risks),
                        ("Warnings", report.checks.loc[report.checks["status"] == "warn",
                                                       "message"].tolist()),
                        ("Not verified", report.checks.loc[report.checks["status"] ==
                                                           "unverified", "message"].tolist())):
        if msgs:
            body += f"<h3>{esc(title)}</h3><ul>" + "".join(f"<li>{esc(m)}</li>" for m in msgs) \
                + "</ul>"
    return body


def _figure_of(v) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    if isinstance(v, str) or v is None:
        return "-" if v is None else v
    return num(v)


def checks(report) -> str:
    """Every check: what it means, then one row each with its figure."""
    frame = report.checks
    present = list(dict.fromkeys(frame["check"]))
    gloss = "".join(f"<dt>{esc(c)}</dt><dd>{esc(CHECKS[c])}</dd>" for c in present
                    if c in CHECKS)
    order = frame.assign(_s=frame["status"].map(SEVERITY).fillna(9)).sort_values(
        "_s", kind="stable")
    attention = order["status"].isin(("fail", "risk", "unverified", "warn"))
    body = (f'<details open><summary>what each check means</summary><dl class="facts">'
            f"{gloss}</dl></details>")
    if attention.any():
        body += "<h3>Needing attention</h3>" + _check_table(order[attention], "checks-attention")
    rest = order[~attention]
    body += (f"<details><summary>{int((rest['status'] == 'pass').sum())} passed checks and "
             f"{int((rest['status'] == 'info').sum())} notes</summary>"
             + _check_table(rest, "checks-passed") + "</details>")
    return body


def _check_table(frame, tid: str) -> str:
    rows, attrs = [], []
    for r in frame.itertuples():
        rows.append([badge(r.status), esc(r.check), esc(r.attribute), esc(_figure_of(r.value)),
                     esc(_figure_of(r.expected)), esc(r.message)])
        attrs.append({"data-check": r.check, "data-attribute": r.attribute,
                      "data-status": r.status, "data-value": _data(r.value),
                      "data-expected": _data(r.expected)})
    return table(["status", "check", "attribute", "figure", "expected", "finding"], rows,
                 row_attrs=attrs, raw=range(6), numeric=(3, 4), attrs={"id": tid})


def _data(v) -> str:
    if isinstance(v, (list, tuple)):
        return ",".join(map(str, v))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return data_value(v)
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def reproduce(commands: list, versions: dict) -> str:
    """The command lines that reproduce the report and the audit (files by
    their names, run where they are), the versions, the day, and a block
    to sign."""
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d (UTC)")
    body = ("<p>Anyone holding the same files can re-run the checks, in the folder that "
            "holds them:</p>")
    body += "".join(f"<pre>{esc(c)}</pre>" for c in commands)
    body += facts([("generated", esc(now))] +
                  [(k, esc(v)) for k, v in versions.items()])
    sign = ("reviewed by", "role", "date", "decision (release / do not release)", "signature")
    body += "<h3>Sign-off</h3>" + table(["", "entry"], [[r, ""] for r in sign],
                                        attrs={"class": "signoff"})
    return body
