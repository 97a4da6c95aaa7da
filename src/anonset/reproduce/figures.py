"""Plots of the reproductions, in the layout of the papers' figures (same
axes, same series, same legend names).  matplotlib is imported lazily with
the Agg backend (no display needed)."""
from __future__ import annotations

import numpy as np

__all__ = ["plt", "grouped_bars", "p004_figures"]

COLORS = {"Proposal": "#1f3b73", "TP": "#c0504d", "Anatomy": "#f2f2f2", "Mondrian": "#9bbb59"}
HATCH = {"Proposal": "", "TP": "", "Anatomy": "", "Mondrian": "//"}


def plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot


def grouped_bars(ax, xs, series: dict, *, log=True, xlabel="", ylabel="MSE"):
    """Bars of each series (legend name -> values over xs) side by side."""
    k = len(series)
    width = 0.8 / max(k, 1)
    for j, (name, vals) in enumerate(series.items()):
        pos = np.arange(len(xs)) + (j - (k - 1) / 2) * width
        vals = np.asarray(vals, dtype=float)
        ax.bar(pos, np.where(np.isfinite(vals), vals, 0), width, label=name,
               color=COLORS.get(name), edgecolor="black", linewidth=0.5,
               hatch=HATCH.get(name, ""))
    ax.set_xticks(np.arange(len(xs)))
    ax.set_xticklabels([str(x) for x in xs])
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)


def _series(tab, methods, x, fixed: dict):
    sub = tab
    for k, v in fixed.items():
        sub = sub[sub[k] == v]
    xs = sorted(sub[x].unique())
    return xs, {m: [sub[(sub.method == m) & (sub[x] == v)]["mse"].mean() for v in xs]
                for m in methods}


def p004_figures(out, grid, adult, fig5, methods):
    P = plt()
    # Fig. 1: MSE vs q, (a) OCC-3 (b) SAL-3 (c) OCC-5 (d) SAL-5 (e) OCC-7 (f) SAL-7
    f1 = grid[grid.figure == "Fig. 1"]
    ds = sorted({int(n.split("-")[1]) for n in f1.data.unique()})
    fig, axes = P.subplots(len(ds), 2, figsize=(11, 3.2 * len(ds)), squeeze=False)
    letters = iter("abcdefghij")
    for i, d in enumerate(ds):
        for j, kind in enumerate(("OCC", "SAL")):
            xs, ser = _series(f1, methods, "q", {"data": f"{kind}-{d}"})
            grouped_bars(axes[i][j], xs, ser, xlabel="q")
            axes[i][j].set_title(f"({next(letters)}) {kind}-{d} (stand-in)")
    axes[0][0].legend(fontsize=8, ncol=4)
    fig.suptitle("Fig. 1: MSE vs. q (l = 10, s = 0.07)")
    fig.tight_layout()
    fig.savefig(out / "fig1_mse_vs_q.png", dpi=100)
    P.close(fig)
    # Fig. 2 (bars vs l) and Fig. 3 (lines vs s) on OCC-5 and SAL-5
    for figname, x, fname in (("Fig. 2", "l", "fig2_mse_vs_l.png"),
                              ("Fig. 3", "s", "fig3_mse_vs_s.png")):
        sub = grid[grid.figure == figname]
        names = sorted(sub.data.unique(), key=lambda n: (n[:3] != "OCC", n))
        fig, axes = P.subplots(1, len(names), figsize=(5.5 * len(names), 3.4), squeeze=False)
        for ax, name, letter in zip(axes[0], names, "ab"):
            xs, ser = _series(sub, methods, x, {"data": name})
            if x == "l":
                grouped_bars(ax, xs, ser, xlabel="l")
            else:
                for m, v in ser.items():
                    ax.plot(xs, v, marker="o", label=m, color=COLORS[m] if m != "Anatomy"
                            else "gray")
                ax.set_yscale("log")
                ax.set_xlabel("s")
                ax.set_ylabel("MSE")
                ax.grid(alpha=0.3)
            ax.set_title(f"({letter}) {name} (stand-in)")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"{figname}: MSE vs. {x}")
        fig.tight_layout()
        fig.savefig(out / fname, dpi=100)
        P.close(fig)
    # Fig. 4: (a) ratio of successful anonymization, (b) average MSE
    fig, axes = P.subplots(1, 2, figsize=(10, 3.4))
    ratio = [adult[adult.method == m]["ok"].mean() for m in methods]
    axes[0].bar(methods, ratio, color=[COLORS[m] for m in methods], edgecolor="black")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_title("(a) Ratio of successful anonymization")
    both = adult.pivot_table(index=["data", "l"], columns="method", values="mse").dropna()
    avg = [both[m].mean() if m in both else np.nan for m in methods]
    axes[1].bar(methods, avg, color=[COLORS[m] for m in methods], edgecolor="black")
    axes[1].set_yscale("log")
    axes[1].set_title(f"(b) Average of MSE ({len(both)} settings all four publish)")
    fig.suptitle("Fig. 4: Result overview of the Adult data set")
    fig.tight_layout()
    fig.savefig(out / "fig4_adult.png", dpi=100)
    P.close(fig)
    # Fig. 5: relationship vs gender at l = 2, share within each gender
    panels = ["Original"] + list(methods)
    fig, axes = P.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), sharey=True)
    rel = list(dict.fromkeys(fig5["relationship"]))
    for ax, name, letter in zip(axes, panels, "abcde"):
        ser = {}
        for gender in dict.fromkeys(fig5["sex"]):
            v = fig5[fig5.sex == gender].set_index("relationship")[name].reindex(rel)
            ser[gender] = (v / v.sum()).to_numpy()
        grouped_bars(ax, rel, ser, log=False, ylabel="share within gender")
        ax.tick_params(axis="x", rotation=60, labelsize=7)
        ax.set_title(f"({letter}) " + ("Original database" if name == "Original"
                                       else f"Anonymization by {name}"), fontsize=9)
    axes[0].legend(fontsize=8)
    fig.suptitle("Fig. 5: Relationship vs. Gender in l = 2 (Adult(8))")
    fig.tight_layout()
    fig.savefig(out / "fig5_relationship_gender.png", dpi=100)
    P.close(fig)
