"""Reproduce paper 001's results into docs/results/001/.

    PYTHONPATH=src python bench/reproduce_001.py [--seeds 3] [--out docs/results/001]

Writes:
* table10.md            -- Table 9 -> Table 10 by Alg. 2 (eq. 2 probabilities)
* mse_<dataset>.csv/png -- Figs. 11-13: MSE (eq. 18) vs l or d, panels (a) l=2,
                           (b) d=d_b, (c) l=3, (d) d=d_d; QIDs age x sex
* violation.csv/png     -- Figs. 14-15: violation rate of paper 000's sampler,
                           simulation vs eq. 11 and the exact rate
* bias.md               -- bias of every estimator over 200 seeds (income)

Names (Table 12): N- = duplicate-processing sampler (Alg. 3), Ex- = simple
sampler (Alg. 1); -Proposal = Alg. 2 with eq. 2's probabilities (the paper),
-Exact = Alg. 2 with the sampler's exact probabilities, -EM = non-negative
EM with the exact probabilities, -Existing = eq. 21-22, -Simple = eq. 20,
N-Anonymity = the raw report counts.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from anonset import semantic as S  # noqa: E402
from anonset.datasets import semantic as SD  # noqa: E402


def omega_of(ds, masks, qdoms):
    F = len(ds.domain)
    cell = np.zeros(len(ds.frame), dtype=np.int64)
    dims = []
    for q in ds.qids:
        idx = {v: i for i, v in enumerate(qdoms[q])}
        cell = cell * len(qdoms[q]) + ds.frame[q].map(idx).to_numpy()
        dims.append(len(qdoms[q]))
    bits = S._unpack(masks, F)
    om = np.zeros((int(np.prod(dims)), F))
    np.add.at(om, cell, bits)
    truth = np.zeros_like(om)
    np.add.at(truth, (cell, ds.codes), 1)
    return om, truth


def run_point(ds, l, d, seeds, qdoms):
    dist = ds.distance
    ok = S.feasible_values(dist, l, d)
    if not ok[np.unique(ds.codes)].all():
        return None
    algos = ["simple"]
    try:
        dist.duplicate_radius(d)
        if 2 * dist.duplicate_radius(d) + 1 <= dist.F:
            algos.append("duplicate")
    except ValueError:
        pass
    qp = S.paper_selection_matrix(dist, l, d)
    out = {}
    for algo in algos:
        pre = "Ex" if algo == "simple" else "N"
        q, info = S.selection_matrix(dist, l, d, algorithm=algo, draws=100_000)
        acc = {}
        for s in range(seeds):
            m = S.semantic_sets(ds.codes, dist, l, d, algorithm=algo, seed=1000 * s + 7)
            om, truth = omega_of(ds, m, qdoms)
            N = truth.sum()
            est = {"Proposal": S.estimate_linear(om, qp), "Exact": S.estimate_linear(om, q),
                   "EM": S.estimate_em(om, q)[0], "Existing": S.estimate_existing(om, l),
                   "Simple": S.estimate_simple(om, l)}
            if algo == "duplicate":
                est["Anonymity"] = om
            for k, v in est.items():
                acc.setdefault(f"{pre}-{k}", []).append(S.mse(truth, v, N))
        for k, v in acc.items():
            out[k] = float(np.mean(v))
        out[f"{pre}-q"] = info["method"]
    return out


PANELS = {
    "income": [("a", "d", 2, [1, 2, 3, 4, 5, 6]), ("b", "l", 2, [2, 3, 4, 5]),
               ("c", "d", 3, [1, 2, 3, 4, 5]), ("d", "l", 3, [2, 3, 4, 5])],
    "education": [("a", "d", 2, [1, 2, 3]), ("b", "l", 2, [2, 3, 4, 5]),
                  ("c", "d", 3, [1, 2, 3]), ("d", "l", 3, [2, 3, 4])],
    "fnlwgt": [("a", "d", 2, [5, 10, 20, 40]), ("b", "l", 10, [2, 3, 4]),
               ("c", "d", 3, [5, 10, 20, 30]), ("d", "l", 20, [2, 3, 4])],
}


def mse_figures(out, seeds):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sets = {"income": SD.income(), "education": SD.adult_education(), "fnlwgt": SD.adult_fnlwgt()}
    for name, ds in sets.items():
        qdoms = ds.qid_domains()
        rows = []
        for panel, var, fixed, xs in PANELS[name]:
            for x in xs:
                l, d = (fixed, x) if var == "d" else (x, fixed)
                t0 = time.time()
                r = run_point(ds, l, d, seeds, qdoms)
                if r is None:
                    continue
                rows.append({"panel": panel, "l": l, "d": d, **r})
                print(f"{name} ({panel}) l={l} d={d}: {time.time() - t0:.1f} s", flush=True)
        df = pd.DataFrame(rows)
        df.to_csv(os.path.join(out, f"mse_{name}.csv"), index=False)
        fig, axes = plt.subplots(1, 4, figsize=(18, 4))
        for ax, (panel, var, fixed, _) in zip(axes, PANELS[name]):
            sub = df[df.panel == panel]
            for col in [c for c in df.columns if "-" in c and not c.endswith("-q")]:
                if col in sub and sub[col].notna().any():
                    ax.plot(sub[var], sub[col], marker="o", label=col,
                            linestyle="--" if col.startswith("Ex") else "-")
            ax.set_yscale("log")
            ax.set_xlabel(var)
            ax.set_title(f"({panel}) {'l' if var == 'd' else 'd'} = {fixed}")
            ax.set_ylabel("MSE (eq. 18)")
        axes[-1].legend(fontsize=7, loc="best")
        fig.suptitle(f"MSE, {name} data set (QIDs age x sex)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"mse_{name}.png"), dpi=90)
        plt.close(fig)


def violation_figure(out, n=100_000):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = []
    g = np.random.default_rng(0)
    for F in (10, 14, 20):
        dist = S.SemanticDistance.ordered(F)
        codes = g.integers(0, F, n)
        for fig_, var, fixed, xs in (("14", "l", 3, range(2, 7)), ("15", "d", 3, range(1, 7))):
            for x in xs:
                l, d = (x, fixed) if var == "l" else (fixed, x)
                if l > F:
                    continue
                exact = S.violation_probability(dist, l, d)
                rows.append({"figure": fig_, "F": F, "l": l, "d": d,
                             "eq11_bound": S.violation_bound(F, l, d),
                             "exact_uniform": float(exact.mean()),
                             "simulation": S.simulate_violation(dist, l, d, codes, seed=F * 100 + x),
                             "eq12_N100": S.database_violation_bound(F, l, d, 100)})
    df = pd.DataFrame(rows)
    df.to_csv(os.path.join(out, "violation.csv"), index=False)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (fig_, var) in zip(axes, (("14", "l"), ("15", "d"))):
        for F in (10, 14, 20):
            sub = df[(df.figure == fig_) & (df.F == F)]
            p = ax.plot(sub[var], sub["simulation"], marker="o", label=f"simulation F={F}")
            ax.plot(sub[var], sub["eq11_bound"], linestyle="--", color=p[0].get_color(),
                    label=f"eq. 11 F={F}")
        ax.set_xlabel(var)
        ax.set_ylabel("violation rate per record")
        ax.set_title(f"Fig. {fig_}: {'d' if var == 'l' else 'l'} = 3")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "violation.png"), dpi=90)
    plt.close(fig)


def table10(out):
    q = S.paper_selection_matrix(S.example_distance(), 2, 2)
    x = S.estimate_linear(S.TABLE_9, q)
    lines = ["# Table 9 -> Table 10 (Alg. 2, l = 2, d = 2, distance |i - j|)", "",
             "| row | 1 | 2 | 3 | 4 | 5 | max abs diff to paper |", "|---|---|---|---|---|---|---|"]
    for name, r, p in zip(["male >= 50", "female >= 50", "male < 50", "female < 50"], x, S.TABLE_10):
        lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in r) + f" | {np.abs(r - p).max():.3f} |")
    lines += ["", f"MSE (eq. 19) of Table 10 vs Table 8: {S.mse(S.TABLE_8, S.TABLE_10, 1000):.3e}"]
    open(os.path.join(out, "table10.md"), "w").write("\n".join(lines) + "\n")


def bias(out, seeds=200):
    ds = SD.income()
    lines = ["# Bias over 200 seeds (income, N = 100,000, all records as one cell)", "",
             "| sampler | (l, d) | estimator | max abs bias | max abs bias / SE | mean RMSE | min estimate |",
             "|---|---|---|---|---|---|---|"]
    truth = np.bincount(ds.codes, minlength=14).astype(float)
    for algo in ("simple", "duplicate"):
        for l, d in ((3, 2), (4, 3)):
            if algo == "duplicate" and 2 * (d - 1) + 1 > 14:
                continue
            q, _ = S.selection_matrix(ds.distance, l, d, algorithm=algo)
            qp = S.paper_selection_matrix(ds.distance, l, d)
            om = np.array([S._unpack(S.semantic_sets(ds.codes, ds.distance, l, d, algorithm=algo,
                                                     seed=s), 14).sum(axis=0)
                           for s in range(seeds)], dtype=float)
            ests = {"linear (exact q)": S.estimate_linear(om, q),
                    "linear (eq. 2 q)": S.estimate_linear(om, qp),
                    "EM (exact q)": S.estimate_em(om, q, tol=1e-6, max_iter=20000)[0],
                    "existing (eq. 21)": S.estimate_existing(om, l),
                    "simple (eq. 20)": S.estimate_simple(om, l)}
            for k, e in ests.items():
                b = e.mean(axis=0) - truth
                se = e.std(axis=0, ddof=1) / np.sqrt(seeds) + 1e-12
                lines.append(f"| {algo} | ({l}, {d}) | {k} | {np.abs(b).max():.2f} | "
                             f"{(np.abs(b) / se).max():.1f} | "
                             f"{np.sqrt(((e - truth) ** 2).mean()):.2f} | {e.min():.2f} |")
    open(os.path.join(out, "bias.md"), "w").write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                   "results", "001"))
    ap.add_argument("--only", choices=("table10", "bias", "violation", "mse"), default=None)
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    steps = {"table10": lambda: table10(a.out), "bias": lambda: bias(a.out),
             "violation": lambda: violation_figure(a.out), "mse": lambda: mse_figures(a.out, a.seeds)}
    for k, f in steps.items():
        if a.only in (None, k):
            t0 = time.time()
            f()
            print(f"{k}: {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
