"""The release report's charts, each returned as inline SVG with alt text
that states what the chart shows in numbers: marginal bar charts (true
against reconstructed counts, paper 000 Fig. 7), heat maps of a
cross-tabulation and of the reconstruction's error, the attack simulation
against the model's bound (paper 000 Sec. V-C3), and histograms of class
sizes (papers 002, 003).

Readable at any domain size: bars are horizontal (labels are read, never
rotated), a domain larger than ``top`` values shows its ``top - 1`` largest
values and one bar for all the others (:func:`top_k`), long labels are cut
with their full text as a tooltip.  Colours are Okabe-Ito (categories) and
viridis / purple-orange (heat maps): safe for colour-blind readers and in
greyscale, where the hatching still tells the series apart.
"""
from __future__ import annotations

import math

import numpy as np

from .svg import new_figure, short_label, short_labels, style, to_svg

__all__ = ["SERIES_COLOURS", "top_groups", "group_labels", "top_k", "marginal_bars",
           "heatmaps", "attack_chart", "size_histogram"]

#: Colour and hatch of each series (true first); others take the palette in turn.
SERIES_COLOURS = {"true": ("#0072B2", ""), "em": ("#E69F00", "///"),
                  "exact_em": ("#009E73", "\\\\\\"), "semantic_em": ("#E69F00", "///"),
                  "semantic_linear": ("#009E73", "\\\\\\")}
# (dotted hatches cost ~170 kB of SVG circles per chart: line hatches only)
_MORE = [("#CC79A7", "xx"), ("#56B4E9", "--"), ("#D55E00", "||")]


def _fmt_count(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 10 else f"{v:.3g}"


def top_groups(ref, top: int, ordered: bool) -> list:
    """Index groups of a domain cut to ``top`` entries: the ``top - 1``
    values largest in ``ref`` one each, then one group of all the others.
    An ordered domain keeps its order; a nominal one larger than ``top`` is
    sorted by ``ref``, largest first."""
    ref = np.asarray(ref, dtype=np.float64)
    d = ref.size
    if d <= top:
        return [[i] for i in range(d)]
    rank = np.argsort(-ref, kind="stable")[: top - 1]
    keep = np.sort(rank) if ordered else rank
    return [[int(i)] for i in keep] + [np.setdiff1d(np.arange(d), keep).tolist()]


def group_labels(labels, groups) -> list:
    """Labels of :func:`top_groups`' groups ('other (m values)' last when cut)."""
    labels = [str(v) for v in labels]
    if len(groups) == len(labels):
        return labels
    return [labels[g[0]] for g in groups[:-1]] + [f"other ({len(groups[-1])} values)"]


def top_k(labels, series, top: int, ordered: bool) -> tuple:
    """(labels, series) cut to ``top`` entries by ``series[0]``
    (:func:`top_groups`), the others summed into one 'other' entry.

    Examples
    --------
    >>> top_k(list("abcd"), [np.array([1., 5., 3., 2.])], 3, ordered=True)
    (['b', 'c', 'other (2 values)'], [array([5., 3., 3.])])
    """
    series = [np.asarray(s, dtype=np.float64) for s in series]
    groups = top_groups(series[0], top, ordered)
    return group_labels(labels, groups), [np.array([s[g].sum() for g in groups])
                                          for s in series]


def _series_style(names) -> list:
    more = iter(_MORE)
    return [SERIES_COLOURS.get(n) or next(more, ("#000000", "")) for n in names]


def marginal_bars(fid: str, attribute: str, labels, series: list, *, top: int = 15,
                  ordered: bool = False) -> str:
    """Horizontal grouped bars: the count of every value of ``attribute`` in
    each of ``series`` (``[(name, counts)]``, the truth first when known)."""
    names = [n for n, _ in series]
    labs, vals = top_k(labels, [v for _, v in series], top, ordered)
    tips: dict = {}
    with style(fid):
        n, m = len(labs), len(vals)
        fig = new_figure(5.3, 1.0 + n * (0.12 + 0.11 * m))
        ax = fig.add_subplot(1, 1, 1)
        y = np.arange(n)
        h = 0.8 / m
        for k, ((name, _), v, (colour, hatch)) in enumerate(zip(series, vals,
                                                             _series_style(names))):
            ax.barh(y + (k - (m - 1) / 2) * h, v, h, color=colour, hatch=hatch,
                    edgecolor="white" if not hatch else "#333333", linewidth=0.3, label=name)
        ax.set_yticks(y)
        drawn = short_labels(labs, tips)
        ax.set_yticklabels([d for d, _ in drawn])
        for tick, (_, gid) in zip(ax.get_yticklabels(), drawn):
            if gid:
                tick.set_gid(gid)
        ax.invert_yaxis()
        ax.set_xlabel("records")
        ax.xaxis.set_major_formatter(_thousands())
        head, gid = short_label(attribute, tips, 40)
        fig.suptitle(head, x=0.02, ha="left", fontsize=12).set_gid(gid)
        fig.legend(loc="outside upper right", ncol=m, frameon=False)
        gap = np.abs(vals[-1] - vals[0]) if m > 1 else None
        alt = (f"Horizontal bar chart of {attribute}: for each of {n} values"
               f"{' (the rest summed as other)' if len(labs) < len(labels) else ''}, "
               f"the {' and the '.join(names)} count.")
        if gap is not None and gap.size:
            i = int(np.argmax(gap))
            alt += (f" The largest difference is at {labs[i]}: {names[0]} "
                    f"{_fmt_count(vals[0][i])}, {names[-1]} {_fmt_count(vals[-1][i])}.")
        return to_svg(fig, fid, alt, tips)


def _thousands():
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 1 or v == 0 else f"{v:.2g}")


def _reduce2d(M: np.ndarray, rg: list, cg: list) -> np.ndarray:
    """``M`` summed over row groups ``rg`` and column groups ``cg``."""
    return np.array([[M[np.ix_(r, c)].sum() for c in cg] for r in rg])


def heatmaps(fid: str, attributes: tuple, rows, cols, estimate: np.ndarray, method: str,
             truth: np.ndarray | None = None, *, top: int = 12,
             ordered: tuple = (False, False)) -> str:
    """Heat maps of a two-attribute cross-tabulation: the truth (when
    known), the ``method`` estimate on the same colour scale, and the
    estimate's error (estimate - truth) on a diverging scale."""
    a, b = attributes
    ref = truth if truth is not None else estimate
    panels = [("true", truth)] if truth is not None else []
    panels.append((method, estimate))
    rg = top_groups(ref.sum(axis=1), top, ordered[0])
    cg = top_groups(ref.sum(axis=0), top, ordered[1])
    rlab, clab = group_labels(rows, rg), group_labels(cols, cg)
    mats = [(name, _reduce2d(M, rg, cg)) for name, M in panels]
    if truth is not None:
        mats.append((f"{method} - true", mats[1][1] - mats[0][1]))
    from matplotlib.colors import Normalize, PowerNorm
    tips: dict = {}
    with style(fid):
        nr, nc = len(rlab), len(clab)
        width, height = min(10.4, 1.4 + (0.9 + 0.24 * nc) * len(mats)), max(3.0, 1.9 + 0.24 * nr)
        fig = new_figure(width, height)
        axes = fig.subplots(1, len(mats), squeeze=False, sharey=True)[0]
        counts = [M for n, M in mats if not n.endswith("- true")]
        vmax = max(float(M.max()) for M in counts) or 1.0
        cl = short_labels(clab, tips, 16)
        rl = short_labels(rlab, tips, 20)
        shown = []
        for k, (ax, (name, M)) in enumerate(zip(axes, mats)):
            diff = name.endswith("- true")
            lim = float(np.abs(M).max()) or 1.0
            norm = Normalize(-lim, lim) if diff else PowerNorm(0.5, 0.0, vmax)
            im = ax.imshow(M, cmap="PuOr" if diff else "viridis", norm=norm, aspect="auto",
                           interpolation="nearest")
            shown.append(im)
            ax.set_title(name, fontsize=10)
            ax.set_xticks(range(nc))
            ax.set_xticklabels([c for c, _ in cl], rotation=55, ha="right",
                               rotation_mode="anchor", fontsize=9)
            if k == 0:
                ax.set_yticks(range(nr))
                ax.set_yticklabels([r for r, _ in rl], fontsize=9)
                # the row attribute's name runs along the panel's height
                ylab, gid = short_label(a, tips, int((height - 1.0) * 72 / 7))
                ax.set_ylabel(ylab).set_gid(gid)
                for tick, (_, gid) in zip(ax.get_yticklabels() + ax.get_xticklabels(), rl + cl):
                    if gid:
                        tick.set_gid(gid)
        # the column attribute's name once, under all the panels (one under
        # each, wider than its panel, were drawn over each other, H127)
        xlab, gid = short_label(b, tips, int(width * 72 / 8))
        fig.supxlabel(xlab, fontsize=11).set_gid(gid)
        n_counts = len(counts)
        for im, axs, what in ((shown[0], axes[:n_counts], "records (\u221a scale)"),
                              (shown[-1], axes[n_counts:], "error (records)")):
            if len(axs):
                cb = fig.colorbar(im, ax=list(axs), shrink=0.9, aspect=25, pad=0.02)
                cb.set_label(what, fontsize=9)
                cb.ax.tick_params(labelsize=9)
                cb.ax.yaxis.set_major_formatter(_thousands())
        alt = (f"Heat maps of {a} (rows, {len(rows)} values) by {b} (columns, {len(cols)} "
               f"values): " + ", ".join(n for n, _ in mats) + ".")
        if truth is not None:
            D = mats[-1][1]
            i, j = np.unravel_index(int(np.argmax(np.abs(D))), D.shape)
            alt += (f" The largest error is {D[i, j]:+,.0f} records at {a} = {rlab[i]}, "
                    f"{b} = {clab[j]} (true {mats[0][1][i, j]:,.0f}).")
        if nr < len(rows) or nc < len(cols):
            alt += f" Values beyond the {top - 1} largest are summed as other."
        return to_svg(fig, fid, alt, tips)


def attack_chart(fid: str, rows: list, *, title: str) -> str:
    """Per attribute (``rows``: dicts with attribute, success, prior, bound):
    the adversary's success rate as a bar, the prior alone and the model's
    bound as markers."""
    tips: dict = {}
    with style(fid):
        n = len(rows)
        fig = new_figure(7.2, 1.2 + 0.42 * n)
        ax = fig.add_subplot(1, 1, 1)
        y = np.arange(n)
        succ = np.array([r["success"] for r in rows], dtype=float)
        prior = np.array([r["prior"] for r in rows], dtype=float)
        bound = np.array([r["bound"] for r in rows], dtype=float)
        ax.barh(y, succ, 0.6, color="#0072B2", label="adversary's success")
        ax.plot(prior, y, "o", mfc="white", mec="#000000", ms=7, label="prior alone")
        ok = ~np.isnan(bound)
        ax.plot(bound[ok], y[ok], "|", color="#D55E00", ms=22, mew=3,
                label="model's bound")
        drawn = short_labels([r["attribute"] for r in rows], tips)
        ax.set_yticks(y)
        ax.set_yticklabels([d for d, _ in drawn])
        for tick, (_, gid) in zip(ax.get_yticklabels(), drawn):
            if gid:
                tick.set_gid(gid)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.0)
        from matplotlib.ticker import PercentFormatter
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_xlabel("share of victims whose value the adversary guesses right")
        ax.set_title(title, loc="left")
        fig.legend(loc="outside lower center", ncol=3, frameon=False)
        parts = []
        for r, s, p, b in zip(rows, succ, prior, bound):
            parts.append(f"{r['attribute']} {s:.1%} (prior {p:.1%}"
                         + (f", bound {b:.1%})" if not math.isnan(b) else ", no bound)"))
        alt = f"Bar chart of the attack simulation's success per attribute: {'; '.join(parts)}."
        return to_svg(fig, fid, alt, tips)


def size_histogram(fid: str, sizes: np.ndarray, k: int | None, *, what: str,
                   plural: str, title: str) -> str:
    """Histogram of the sizes of classes, groups or buckets, with the
    model's smallest size ``k`` marked."""
    sizes = np.asarray(sizes, dtype=np.int64)
    with style(fid):
        fig = new_figure(5.3, 3.0)
        ax = fig.add_subplot(1, 1, 1)
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        lo, hi = int(sizes.min()), int(sizes.max())
        if hi - lo <= 60:
            bins = np.arange(lo, hi + 2) - 0.5
        else:
            bins = np.unique(np.linspace(lo, hi + 1, 41).round())
        ax.hist(sizes, bins=bins, color="#56B4E9", edgecolor="#0072B2", linewidth=0.5)
        if k is not None:
            ax.axvline(k - 0.5 if hi - lo <= 60 else k, color="#D55E00", ls="--", lw=2,
                       label=f"required at least {k}")
            ax.legend(frameon=False)
        ax.set_xlabel(f"rows per {what}")
        ax.set_ylabel(plural)
        ax.set_title(title, loc="left")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(_thousands())
        alt = (f"Histogram of the sizes of {sizes.size:,} {plural}: smallest {lo}, median "
               f"{float(np.median(sizes)):g}, largest {hi}"
               + (f"; the model requires at least {k}." if k is not None else "."))
        return to_svg(fig, fid, alt)
