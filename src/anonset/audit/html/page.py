"""The HTML of the release report: one self-contained page, no script, no
font, no image or style sheet from anywhere (a Content-Security-Policy that
forbids every load says so to the browser too), so that it opens from an
e-mail attachment and shows the same thing everywhere.

Building blocks: escaped text (:func:`esc`), tables whose rows carry their
figures as ``data-*`` attributes (what the browser test reads back, and what
a script of the reader's own could), figures with a caption and their
numbers in a collapsible table, status badges that say their status in
words (never colour alone), and the document with its style sheet.
"""
from __future__ import annotations

import math
import re
from html import escape

import numpy as np

__all__ = ["CSP", "esc", "num", "data_value", "badge", "table", "facts", "figure", "section",
           "document"]

#: Nothing may be loaded: no script, no font, no remote image; inline styles
#: and data: images only.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
       "base-uri 'none'; form-action 'none'")

_STATUS = {"pass": ("passed", "ok"), "fail": ("FAILED", "bad"), "risk": ("RISK", "bad"),
           "unverified": ("not verified", "warn"), "warn": ("warning", "warn"),
           "info": ("note", "info")}

_CSS = """
:root{--ink:#1a1a1a;--muted:#555;--line:#d0d0d0;--ok:#00603f;--okbg:#e3f3ec;
--bad:#8f2a00;--badbg:#fbe6dc;--warn:#6b5300;--warnbg:#fbf3d0;--infobg:#e8f1f8;--info:#0b4f80}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;
color:var(--ink);background:#fff;margin:0;line-height:1.45;font-size:16px}
main{max-width:1100px;margin:0 auto;padding:0 1.2rem 3rem}
header.top{background:#0b3954;color:#fff;padding:1rem 1.2rem}
header.top h1{margin:0;font-size:1.5rem} header.top p{margin:.2rem 0 0;color:#dbe9f4}
nav.toc{max-width:1100px;margin:.6rem auto 0;padding:0 1.2rem;font-size:.95rem}
nav.toc a{margin-right:1rem;color:#0b4f80}
h2{border-bottom:2px solid var(--line);padding-bottom:.2rem;margin-top:2.2rem}
h3{margin-top:1.6rem}
h2,h3,p,li,dd,figcaption,.long{overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem;max-width:100%}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f2f2} td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.wide{overflow-x:auto}
dl.facts{display:grid;grid-template-columns:max-content auto;column-gap:1.2rem;row-gap:.2rem}
dl.facts dt{font-weight:600} dl.facts dd{margin:0}
.badge{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:.85rem;
font-weight:600;white-space:nowrap;border:1px solid currentColor}
.ok{color:var(--ok);background:var(--okbg)} .bad{color:var(--bad);background:var(--badbg)}
.warn{color:var(--warn);background:var(--warnbg)} .info{color:var(--info);background:var(--infobg)}
.verdict{font-size:1.35rem;padding:.8rem 1rem;border-radius:.4rem;border:2px solid currentColor}
figure{margin:1rem 0 1.6rem} figcaption{color:var(--muted);font-size:.92rem;margin-top:.3rem}
svg.chart{max-width:100%;height:auto;display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(500px,1fr));column-gap:1.2rem}
details{margin:.3rem 0} summary{cursor:pointer;color:#0b4f80}
pre{background:#f6f6f6;padding:.6rem;overflow-x:auto;border:1px solid var(--line);
white-space:pre-wrap;word-break:break-all}
.muted{color:var(--muted)} .note{font-size:.92rem;color:var(--muted)}
.signoff td{height:2.2rem;min-width:14rem}
.notice{border-left:6px solid var(--bad);background:var(--badbg);padding:.5rem .8rem;
margin-top:1rem}
@media print{nav.toc,summary{display:none} details{display:block}
header.top{background:none;color:#000} h2{break-after:avoid} figure{break-inside:avoid}
.wide{overflow:visible}}
@media print,(max-width:800px){table{font-size:.8rem} th,td{padding:.2rem .3rem}}
"""


def esc(text) -> str:
    """Text escaped for HTML (quotes too)."""
    return escape(str(text), quote=True)


def _as_float(v):
    """``v`` as a float; None when missing (None, NaN); ``v`` itself when it
    is not a number."""
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return None if math.isnan(f) else f


def num(v, digits: int = 4) -> str:
    """A number for reading: integers with thousands separators, other
    numbers to ``digits`` significant digits, infinity as the word.

    Examples
    --------
    >>> num(45222), num(0.123456), num(float("inf")), num(2.0), num(None)
    ('45,222', '0.1235', 'infinite', '2', '-')
    """
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    f = _as_float(v)
    if not isinstance(f, float):
        return "-" if f is None else str(f)
    if math.isinf(f):
        return "infinite" if f > 0 else "-infinite"
    if f.is_integer() and abs(f) < 1e15:
        return f"{int(f):,}"
    if abs(f) >= 1e15 or abs(f) < 1e-3:
        return f"{f:.{digits - 1}e}"
    return f"{f:,.{digits}g}" if abs(f) < 1e4 else f"{f:,.1f}"


def records(v) -> str:
    """A count of records for reading: as :func:`num`, but an estimate
    within half a hundredth of a record of zero reads as 0 (an EM cell at
    1e-23 records is an empty cell, not a figure to read).

    Examples
    --------
    >>> records(5.82e-23), records(-1e-9), records(0.004), records(0.0061), records(12.25)
    ('0', '0', '0', '0.0061', '12.25')
    """
    f = _as_float(v)
    if isinstance(f, float) and math.isfinite(f) and abs(f) < 0.005:
        return "0"
    return num(v)


def data_value(v) -> str:
    """A figure for a ``data-*`` attribute: exact (the float's repr), 'inf'
    for infinity, '' when missing.

    Examples
    --------
    >>> data_value(0.1), data_value(3.0), data_value(float("inf")), data_value(None)
    ('0.1', '3', 'inf', '')
    """
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    f = _as_float(v)
    if not isinstance(f, float):
        return "" if f is None else str(f)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return str(int(f)) if f.is_integer() and abs(f) < 2 ** 53 else repr(f)


def _attrs(attrs: dict | None) -> str:
    return "".join(f' {k}="{esc(v)}"' for k, v in (attrs or {}).items() if v is not None)


def badge(status: str) -> str:
    word, cls = _STATUS.get(status, (status, "info"))
    return f'<span class="badge {cls}" data-status="{esc(status)}">{esc(word)}</span>'


def _long(cell) -> str:
    """' class="long"' for a cell with a word of over 24 characters (a long
    column name, a file's path): it may break inside its words, where the
    others keep theirs whole, so that the table fits its page (H127)."""
    words = re.sub(r"<[^>]+>", " ", str(cell)).split()
    return ' class="long"' if max(map(len, words), default=0) > 24 else ""


def table(header: list, rows: list, *, row_attrs: list | None = None, numeric=(),
          raw=(), caption: str | None = None, attrs: dict | None = None) -> str:
    """A table; cells are escaped unless their column is in ``raw``;
    columns in ``numeric`` are right-aligned; ``row_attrs`` gives each row's
    ``data-*`` attributes."""
    out = [f'<div class="wide"><table{_attrs(attrs)}>']
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f'<th scope="col"{_long(h)}>{esc(h)}</th>'
                                       for h in header) + "</tr></thead><tbody>")
    for i, r in enumerate(rows):
        ra = _attrs(row_attrs[i]) if row_attrs else ""
        cells = []
        for j, c in enumerate(r):
            cls = ' class="n"' if j in numeric else _long(c)
            cells.append(f"<td{cls}>{c if j in raw else esc(c)}</td>")
        out.append(f"<tr{ra}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def facts(items: list) -> str:
    """A definition list of (term, value html, attrs) items (values are HTML)."""
    out = ['<dl class="facts">']
    for item in items:
        term, value = item[0], item[1]
        attrs = item[2] if len(item) > 2 else None
        out.append(f"<dt>{esc(term)}</dt><dd{_attrs(attrs)}>{value}</dd>")
    out.append("</dl>")
    return "".join(out)


def figure(svg: str, caption: str, data: str = "", attrs: dict | None = None) -> str:
    """A chart with its caption and, folded, the table of its numbers."""
    more = f"<details><summary>the numbers</summary>{data}</details>" if data else ""
    return f"<figure{_attrs(attrs)}>{svg}<figcaption>{esc(caption)}</figcaption>{more}</figure>"


def section(sid: str, title: str, body: str) -> str:
    """A section; its id is ``s-<sid>`` (the table of contents links to it)."""
    return f'<section id="s-{esc(sid)}" aria-labelledby="s-{esc(sid)}-h">' \
           f'<h2 id="s-{esc(sid)}-h">{esc(title)}</h2>{body}</section>'


def document(title: str, subtitle: str, sections: list, attrs: dict | None = None,
             notice: str | None = None) -> str:
    """The whole page: ``sections`` are (id, title, body html); ``notice``
    a line shown above everything (how confidential the page is)."""
    toc = "".join(f'<a href="#s-{esc(s)}">{esc(t)}</a>' for s, t, _ in sections)
    body = "".join(section(*s) for s in sections)
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"{_attrs(attrs)}><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>"
            f'<header class="top"><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>'
            f'<nav class="toc" aria-label="sections">{toc}</nav>'
            + (f'<main><p class="notice" id="confidential">{esc(notice)}</p>' if notice
               else "<main>")
            + f"{body}</main></body></html>\n")
