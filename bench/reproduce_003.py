"""Reproduce paper 003's experiments (Sec. 5) on Adult.

QIs: age (numeric), workclass, marital-status, race, sex, native-country,
salary-class (shipped hierarchies); SAs: occupation (hierarchical ground,
shipped hierarchy) and education-num (ordered ground).  For each algorithm
(cluster = Algorithm 1, pca = Algorithm 2, microagg = the contrast) and
k in {2, 5, 10, 15, 20}, t in {0.1, ..., 0.5}: class sizes (Tables 6-8),
information loss eq. 1 (Figs. 3-5), runtimes (Fig. 6).  Every output is
checked with anonset.checks.check_partition (outside the timed part).

Usage::

    PYTHONPATH=src python bench/reproduce_003.py [--out docs/results/003] [--seed 1]
        [--algorithms pca,cluster,microagg] [--ks 2,5,10,15,20] [--ts 0.1,...]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anonset.checks import check_partition
from anonset.datasets import adult_hierarchy, load_adult
from anonset.msa import MSAProblem

QI = ["age", "workclass", "marital-status", "race", "sex", "native-country", "salary-class"]
SA = ["occupation", "education-num"]
GROUND = {"occupation": "hierarchical", "education-num": "ordered"}
NAMES = {"cluster": "Algorithm 1 (cluster)", "pca": "Algorithm 2 (PCA)",
         "microagg": "Contrast (t-closeness-first microaggregation)"}

# Tables 6-8 of the paper: (min, max, avg) per k (rows) and t (columns 0.1..0.5)
PAPER = {
    "cluster": {2: ["8/14/12", "8/10/9", "8/10/9", "6/10/8", "6/8/7"],
                5: ["10/25/18", "10/20/16", "10/20/13", "5/15/10", "5/15/8"],
                10: ["10/30/25", "10/20/18", "10/20/14", "10/20/12", "10/20/12"],
                15: ["15/15/15"] * 5, 20: ["20/20/20"] * 5},
    "pca": {2: ["8/12/10", "8/10/9", "6/8/7", "6/8/7", "6/8/6"],
            5: ["10/20/15", "10/16/14", "5/10/8", "5/11/6", "5/10/6"],
            10: ["10/30/28", "10/30/20", "10/20/16", "10/20/12", "10/20/12"],
            15: ["15/30/18", "15/30/18", "15/15/15", "15/15/15", "15/15/15"],
            20: ["20/40/22", "20/40/22", "20/20/20", "20/20/20", "20/20/20"]},
    "microagg": {2: ["8/10/9", "8/10/9", "6/10/8", "6/8/7", "6/8/7"],
                 5: ["10/20/14", "10/20/12", "5/10/8", "5/10/8", "5/10/6"],
                 10: ["10/30/25", "10/20/15", "10/20/14", "10/20/12", "10/10/10"],
                 15: ["15/30/23", "15/30/21", "15/15/15", "15/15/15", "15/15/15"],
                 20: ["20/40/27", "20/40/24", "20/20/20", "20/20/20", "20/20/20"]},
}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/results/003")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--algorithms", default="pca,cluster,microagg")
    ap.add_argument("--ks", default="2,5,10,15,20")
    ap.add_argument("--ts", default="0.1,0.2,0.3,0.4,0.5")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    algs = a.algorithms.split(",")
    ks = [int(x) for x in a.ks.split(",")]
    ts = [float(x) for x in a.ts.split(",")]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    df = load_adult()
    hier = {c: adult_hierarchy(c) for c in QI[1:] + ["occupation"]}
    rows = []
    grid_time = {}
    for alg in algs:
        t0 = time.perf_counter()
        prob = MSAProblem(df, QI, SA, hierarchies=hier, n_threads=a.threads)
        t_enc = time.perf_counter() - t0
        total = t_enc
        for k in ks:
            for t in ts:
                r = prob.run(alg, k, t, seed=a.seed)
                total += r.timings["total"]
                s = r.summary()
                g = r.generalized()
                rep = check_partition(g, g["ec"].to_numpy(), SA, ground=GROUND,
                                      hierarchies={"occupation": hier["occupation"]})
                ok = rep.k >= k and rep.t <= t + 1e-12
                s.update(check_k=rep.k, check_t=rep.t, ok=bool(ok),
                         **{f"t[{c}]": v for c, v in rep.t_per_attribute.items()})
                rows.append(s)
                print(f"{alg:9s} k={k:2d} t={t:.1f}  k'={s['k_used']:2d} "
                      f"sizes {s['min_size']}/{s['max_size']}/{s['avg_size']:.1f}  "
                      f"IL={s['il']:.3f}  merges={s['n_merges']}  "
                      f"{r.timings['total']:.2f}s  {'ok' if ok else 'VIOLATION'}", flush=True)
                if not ok:
                    print("  check failed:", rep.k, rep.t, file=sys.stderr)
        grid_time[alg] = {"encode_s": t_enc, "grid_s": total}
        print(f"{alg}: grid of {len(ks) * len(ts)} settings in {total:.1f} s "
              f"(encoding {t_enc:.2f} s)", flush=True)

    res = pd.DataFrame(rows)
    res.to_csv(out / "grid.csv", index=False)
    (out / "timing.json").write_text(json.dumps(
        {"machine": machine(), "threads": a.threads, "seed": a.seed, "grid": grid_time},
        indent=2) + "\n")
    write_markdown(res, grid_time, ks, ts, algs, out, a.seed)
    if not a.no_plots:
        plots(res, ks, ts, algs, out)
    return 0 if res["ok"].all() else 1


def write_markdown(res, grid_time, ks, ts, algs, out, seed):
    L = ["# Paper 003 on Adult: reproduced results", "",
         f"Generated by `PYTHONPATH=src python bench/reproduce_003.py` (seed {seed}) on "
         f"{machine()}.  45,223 complete records.  QIs: {', '.join(QI)} (age numeric, the "
         "rest with the shipped hierarchies); SAs: occupation (hierarchical ground, shipped "
         "hierarchy), education-num (ordered ground).  Every setting checked with "
         "`anonset.checks.check_partition`: k-anonymity and t-closeness (Def. 4) hold in "
         f"{int(res['ok'].sum())} of {len(res)}.", ""]
    L += ["## Runtime of the whole grid", "",
          "| algorithm | settings | grid total (s) | encoding (s) |", "|---|---|---|---|"]
    for alg in algs:
        g = grid_time[alg]
        L.append(f"| {NAMES[alg]} | {len(ks) * len(ts)} | {g['grid_s']:.1f} | "
                 f"{g['encode_s']:.2f} |")
    L.append("")
    for alg in algs:
        sub = res[res.algorithm == alg]
        L += [f"## {NAMES[alg]}: min/max/avg class size (ours; paper in parentheses)", "",
              "| k | " + " | ".join(f"t={t:g}" for t in ts) + " |",
              "|---|" + "---|" * len(ts)]
        for k in ks:
            cells = []
            for i, t in enumerate(ts):
                r = sub[(sub.k == k) & np.isclose(sub.t, t)].iloc[0]
                paper = PAPER.get(alg, {}).get(k)
                pc = f" ({paper[i]})" if paper and i < len(paper) else ""
                cells.append(f"{r.min_size}/{r.max_size}/{r.avg_size:.0f}{pc}")
            L.append(f"| {k} | " + " | ".join(cells) + " |")
        L += ["", f"Information loss IL_T (eq. 1, sum over the 7 QIs, so in [0, 7]):", "",
              "| k | " + " | ".join(f"t={t:g}" for t in ts) + " |",
              "|---|" + "---|" * len(ts)]
        for k in ks:
            cells = [f"{sub[(sub.k == k) & np.isclose(sub.t, t)].iloc[0].il:.3f}" for t in ts]
            L.append(f"| {k} | " + " | ".join(cells) + " |")
        L += ["", "Runtime per setting (s; clusters + Pseudocode 1 + Pseudocode 2):", "",
              "| k | " + " | ".join(f"t={t:g}" for t in ts) + " |",
              "|---|" + "---|" * len(ts)]
        for k in ks:
            cells = [f"{sub[(sub.k == k) & np.isclose(sub.t, t)].iloc[0].time_total:.2f}"
                     for t in ts]
            L.append(f"| {k} | " + " | ".join(cells) + " |")
        L.append("")
    L += ["Plots: `il_<algorithm>.png` (Figs. 3-5), `runtime_k2.png` (Fig. 6).  Raw numbers: "
          "`grid.csv`, `timing.json`.  Comparison with the paper: docs/msa.md.", ""]
    (out / "README.md").write_text("\n".join(L))


def plots(res, ks, ts, algs, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plots", file=sys.stderr)
        return
    for alg in algs:
        sub = res[res.algorithm == alg]
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for k in ks:
            s = sub[sub.k == k].sort_values("t")
            ax.plot(s.t, s.il, marker="o", label=f"k={k}")
        ax.set_xlabel("t")
        ax.set_ylabel("information loss IL_T (eq. 1)")
        ax.set_title(NAMES[alg])
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"il_{alg}.png", dpi=110)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for alg in algs:
        s = res[(res.algorithm == alg) & (res.k == 2)].sort_values("t")
        ax.plot(s.t, s.time_total, marker="o", label=NAMES[alg])
    ax.set_xlabel("t (k = 2)")
    ax.set_ylabel("runtime (s)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "runtime_k2.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
