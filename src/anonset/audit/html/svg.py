"""matplotlib figures as inline SVG for the release report: real text (not
glyph paths, so a reader can search, copy and zoom it and a screen reader
can read it), the figure's alt text as its accessible name, the full text of
every shortened label as a tooltip, and ids made unique per figure so that
many figures can live in one HTML page.

The figures are drawn on a bare ``Figure`` with the SVG canvas, never through
``pyplot``: no global backend is touched and nothing needs a display.  The
styling (:func:`style`) and the colour-blind-safe palette live here too.
"""
from __future__ import annotations

import contextlib
import io
import re
from html import escape

__all__ = ["OKABE_ITO", "style", "new_figure", "short_label", "short_labels", "to_svg"]

#: Okabe & Ito's palette (distinguishable with every common colour vision
#: deficiency), without black: orange, sky blue, bluish green, yellow, blue,
#: vermillion, reddish purple.
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
#: Longest label drawn in full; longer ones are cut, with the full text as a tooltip.
LABEL_CHARS = 26

_RC = {"svg.fonttype": "none", "font.family": "sans-serif",
       "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "Liberation Sans"],
       "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11,
       "xtick.labelsize": 10, "ytick.labelsize": 10, "legend.fontsize": 10,
       "axes.spines.top": False, "axes.spines.right": False, "svg.image_inline": True}


@contextlib.contextmanager
def style(salt: str = "anonset"):
    """matplotlib settings of every report figure (text as text, the
    palette, sizes readable at 100 % zoom, deterministic ids)."""
    from ..plot import require_matplotlib
    mpl = require_matplotlib()
    from cycler import cycler
    rc = dict(_RC, **{"axes.prop_cycle": cycler(color=list(OKABE_ITO)), "svg.hashsalt": salt})
    if "text.parse_math" in mpl.rcParams:
        # values are drawn as they are: '$5k_$10k' is an income band, not
        # math text (which drew '5k10k' or failed the whole page, H127)
        rc["text.parse_math"] = False
    with mpl.rc_context(rc):
        yield


def new_figure(width: float, height: float):
    """A ``Figure`` of ``width`` x ``height`` inches on the SVG canvas, laid
    out by matplotlib's constrained layout (legends and colour bars
    included)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def _cut(text: str, limit: int, tail: int) -> str:
    """``text`` cut to ``limit`` characters: its start, an ellipsis and its
    last ``tail`` characters."""
    return text[: limit - 1 - tail] + "\u2026" + text[len(text) - tail:] if tail else \
        text[: limit - 1] + "\u2026"


def short_labels(texts, tips: dict, limit: int = LABEL_CHARS) -> list:
    """[(label to draw, gid or None)] of ``texts``, one axis' labels: each
    longer than ``limit`` is cut in the middle with an ellipsis (its end
    kept: names often differ there, 'how_satisfied_are_you_with_q01' and
    '..._q02'); where cut labels coincide the cut moves along them, and
    where they coincide wherever cut they are numbered, so that the drawn
    labels are as distinct as the texts.  The full text is kept in ``tips``
    under the returned gid, to become the tooltip.

    Examples
    --------
    >>> [d for d, _ in short_labels(["how_satisfied_are_you_with_q01",
    ...                              "how_satisfied_are_you_with_q02"], {})]
    ['how_satisfied_are\u2026with_q01', 'how_satisfied_are\u2026with_q02']
    """
    texts = [str(t) for t in texts]
    if all(len(t) <= limit for t in texts):
        return [(t, None) for t in texts]
    keep = limit - 1
    tails = [keep // 3] + list(range(keep // 3 + 1, keep)) + list(range(keep // 3 - 1, -1, -1))
    distinct = len(set(texts))
    for tail in tails:
        drawn = [t if len(t) <= limit else _cut(t, limit, tail) for t in texts]
        if len(set(drawn)) == distinct:
            break
    else:                           # alike at every place: numbered, in order
        drawn = [t if len(t) <= limit else _cut(t, limit - 1 - len(str(i)), keep // 3)
                 + f"#{i}" for i, t in enumerate(texts, 1)]
    out = []
    for t, d in zip(texts, drawn):
        gid = None
        if d != t:
            gid = f"tip{len(tips)}"
            tips[gid] = t
        out.append((d, gid))
    return out


def short_label(text, tips: dict, limit: int = LABEL_CHARS) -> tuple:
    """(label to draw, gid or None): a label longer than ``limit`` is cut
    in the middle with an ellipsis (:func:`short_labels`) and its full text
    kept in ``tips`` under the returned gid, to become the tooltip of the
    drawn text."""
    return short_labels([text], tips, limit)[0]


_ID = re.compile(r'\bid="([^"]+)"')


def to_svg(fig, fid: str, alt: str, tips: dict | None = None) -> str:
    """The figure as an ``<svg>`` element for inline use.

    ``fid`` prefixes every id of the figure (unique in the page); ``alt``
    becomes its ``<title>`` and accessible name (``role="img"``); ``tips``
    maps gids of shortened labels to their full text (a ``<title>`` child,
    shown as a tooltip).
    """
    from matplotlib.text import Text
    for t in fig.findobj(Text):          # where the rcParam is missing, and set texts
        t.set_parse_math(False)
    buf = io.StringIO()
    try:
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    except (ValueError, TypeError, RuntimeError, KeyError, IndexError) as e:
        # one line naming the chart (matplotlib's messages can start with a
        # line break: the CLI printed an empty error line, H127)
        why = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
        what = alt.split(":", 1)[0]
        raise ValueError(f"could not draw the chart {what!r}: {type(e).__name__}"
                         + (f": {why}" if why else "")) from e
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    ids = set(_ID.findall(text))
    for i in sorted(ids, key=len, reverse=True):
        new = f"{fid}-{i}"
        text = text.replace(f'id="{i}"', f'id="{new}"').replace(f"url(#{i})", f"url(#{new})")
        text = text.replace(f'href="#{i}"', f'href="#{new}"')
    for gid, full in (tips or {}).items():
        text = text.replace(f'<g id="{fid}-{gid}">',
                            f'<g id="{fid}-{gid}"><title>{escape(full)}</title>', 1)
    head_end = text.index(">") + 1
    head = text[:head_end]
    head = head.replace("<svg ", f'<svg role="img" aria-labelledby="{fid}-alt" '
                        'class="chart" ', 1)
    return head + f'<title id="{fid}-alt">{escape(alt)}</title>' + text[head_end:]
