"""Small HTML renderings for Jupyter (``_repr_html_``) of the published
table, a cross-tabulation and an audit report: escaped text and pandas'
own table markup, no scripts, no styles from outside."""
from __future__ import annotations

from html import escape

__all__ = ["card"]


def card(title: str, facts: dict, tables: list = (), notes: list = ()) -> str:
    """``<div>`` with a title, a definition list of facts, notes and tables
    (pairs of (caption, DataFrame))."""
    parts = [f"<div class='anonset'><strong>{escape(title)}</strong>"]
    if facts:
        parts.append("<dl style='display:grid;grid-template-columns:max-content auto;"
                     "column-gap:1em;margin:0.3em 0'>")
        for k, v in facts.items():
            parts.append(f"<dt>{escape(str(k))}</dt><dd style='margin:0'>{escape(str(v))}</dd>")
        parts.append("</dl>")
    for n in notes:
        parts.append(f"<p style='margin:0.2em 0'>{escape(str(n))}</p>")
    for caption, frame in tables:
        parts.append(f"<p style='margin:0.4em 0 0.1em'><em>{escape(caption)}</em></p>")
        parts.append(frame.to_html(index=False, max_rows=20, escape=True, border=0))
    parts.append("</div>")
    return "".join(parts)
