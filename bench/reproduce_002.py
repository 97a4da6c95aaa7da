"""Reproduce the trends of paper 002 (Li, He & Sun, LGB) on UCI Adult.

    PYTHONPATH=src python bench/reproduce_002.py [all|grid|density|attack|speed]
        [--queries 1000] [--out docs/results/002]

Attribute mapping (the paper's US Census extract -> Adult, 45,222 complete rows):

* QI: relationship, marital-status, race, education, hours-per-week (as the
  paper's Table 1);
* semi-sensitive: sex (t-closeness, t = 0.2), age (numeric, 74 values; the
  paper's has 73), occupation (Adult's has 14 values, the paper's 257);
* sensitive "salary": Adult has no salary, only the two-valued
  salary-class.  Its role -- a numeric attribute with many distinct values
  that SUM queries add up -- is played by fnlwgt (the census sampling weight,
  26,741 distinct values) coarsened to 719 equal-frequency bins, each bin
  represented by its median, so that the domain has the paper's 719 values.
  SUM(fnlwgt) is a population-count estimate, so the query is meaningful.

Occupation has only 14 values, with the largest share about 13.3%, so its
flagged values are at most 7-eligible: for l > 7 occupation uses the largest
feasible l (recorded in the CSV as l_occupation).  Flags are drawn per cell at
the given density (20% unless varied) with a fixed seed.
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

from anonset import lgb as L
from anonset.datasets import adult_hierarchy, load_adult

QI = ["relationship", "marital-status", "race", "education", "hours-per-week"]
SEMI = ["sex", "age", "occupation"]
HIER = ("marital-status", "race", "education", "occupation")
KS = (5, 8, 10)
LS = (5, 8, 10, 12, 15, 18, 20)
T_SEX = 0.2


def adult_table() -> pd.DataFrame:
    df = load_adult()
    w = df["fnlwgt"].to_numpy()
    bins = pd.qcut(w, 719, labels=False, duplicates="drop")
    med = pd.Series(w).groupby(bins).median().round().astype(np.int64)
    df["salary"] = med.to_numpy()[bins]
    return df


def run(df, flags, k, l, method, seed=1):
    occ = flags["occupation"].to_numpy()
    cnt = df.loc[occ, "occupation"].value_counts()
    l_occ = min(l, int(occ.sum() // cnt.max()))
    hier = {a: adult_hierarchy(a) for a in HIER}
    t0 = time.perf_counter()
    res = L.lgb(df, qi=QI, semi_sensitive=SEMI, sensitive=["salary"], flags=flags, k=k,
                l={"age": l, "occupation": l_occ, "salary": l}, closeness={"sex": T_SEX},
                method=method, hierarchies=hier, seed=seed)
    return res, time.perf_counter() - t0, l_occ


def metrics_row(res, secs, k, l, l_occ, method, density, queries):
    mean, errs = L.query_error(res, "salary", n_queries=queries, seed=2024, detail=True)
    ok = L.verify(res)
    return {"method": method, "k": k, "l": l, "l_occupation": l_occ, "density": density,
            "C_DM": L.c_dm(res), "NCP": L.ncp(res), "NCP_with_buckets": L.ncp(res, buckets=True),
            "query_error_mean": mean, "query_error_median": float(np.median(errs)),
            "groups": res.n_groups, "promoted": res.promoted, "seconds": round(secs, 3),
            "corollary3": ok["ok"]}


def grid(out: Path, queries: int):
    df = adult_table()
    flags = L.draw_flags(df, SEMI, 0.2, seed=1)
    rows = []
    for method in L.METHODS:
        for k in KS:
            for l in LS:
                res, secs, l_occ = run(df, flags, k, l, method)
                rows.append(metrics_row(res, secs, k, l, l_occ, method, 0.2, queries))
                print(json.dumps(rows[-1]), flush=True)
    tab = pd.DataFrame(rows)
    tab.to_csv(out / "grid.csv", index=False)
    plot_grid(tab, out)
    return tab


def density(out: Path, queries: int):
    df = adult_table()
    rows = []
    for dens in (0.1, 0.2, 0.3, 0.4):
        flags = L.draw_flags(df, SEMI, dens, seed=1)
        for k in KS:
            for l in (5, 10, 15, 20):
                res, secs, l_occ = run(df, flags, k, l, "mdp")
                rows.append(metrics_row(res, secs, k, l, l_occ, "mdp", dens, queries))
                print(json.dumps(rows[-1]), flush=True)
    tab = pd.DataFrame(rows)
    tab.to_csv(out / "density.csv", index=False)
    plot_density(tab, out)
    return tab


def attack(out: Path):
    df = adult_table()
    flags = L.draw_flags(df, SEMI, 0.2, seed=1)
    rows = []
    for method in L.METHODS:
        res, _, l_occ = run(df, flags, 5, 5, method)
        t0 = time.perf_counter()
        a = L.attack(res)
        rows.append({"method": method, "k": 5, "l": 5, "l_occupation": l_occ,
                     "max_identity": a["identity"], "bound_identity": 1 / 5,
                     **{f"max_value[{x}]": v for x, v in a["value"].items()},
                     "max_excess[sex]": a["excess"]["sex"], "t_sex": T_SEX,
                     "seconds": round(time.perf_counter() - t0, 1)})
        print(json.dumps(rows[-1]), flush=True)
    pd.DataFrame(rows).to_csv(out / "attack.csv", index=False)


def machine() -> str:
    cpu = platform.processor() or "unknown cpu"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def speed(out: Path):
    df = adult_table()
    rows = []
    for n_rows in (len(df), 1_000_000):
        big = df if n_rows == len(df) else \
            df.sample(n=n_rows, replace=True, random_state=7).reset_index(drop=True)
        flags = L.draw_flags(big, SEMI, 0.2, seed=1)
        for method in L.METHODS:
            res, secs, _ = run(big, flags, 5, 5, method)
            t0 = time.perf_counter()
            res.write(out / f"_speed_{n_rows}.parquet")
            wsecs = time.perf_counter() - t0
            for p in out.glob(f"_speed_{n_rows}*"):
                p.unlink()
            rows.append({"rows": n_rows, "method": method, "k": 5, "l": 5,
                         "lgb_seconds": round(secs, 2), "write_parquet_seconds": round(wsecs, 2),
                         "machine": machine()})
            print(json.dumps(rows[-1]), flush=True)
    pd.DataFrame(rows).to_csv(out / "speed.csv", index=False)


def plot_grid(tab, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for metric, fig_no in (("C_DM", 5), ("NCP", 6), ("query_error_mean", 7),
                           ("query_error_median", 7)):
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
        for ax, method in zip(axes, L.METHODS):
            sub = tab[tab.method == method]
            for k in KS:
                s = sub[sub.k == k]
                ax.plot(s.l, s[metric], marker="o", label=f"k={k}")
            ax.set_title(f"LGB_{method.upper()}")
            ax.set_xlabel("l")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel(metric)
        axes[0].legend()
        fig.suptitle(f"Fig. {fig_no} on Adult: {metric}")
        fig.tight_layout()
        fig.savefig(out / f"fig{fig_no}_{metric}.png", dpi=110)
        plt.close(fig)


def plot_density(tab, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.6), sharey=True)
    for ax, dens in zip(axes, (0.1, 0.2, 0.3, 0.4)):
        sub = tab[tab.density == dens]
        for k in KS:
            s = sub[sub.k == k]
            ax.plot(s.l, s.query_error_median, marker="o", label=f"k={k}")
        ax.set_title(f"density {int(dens * 100)}%")
        ax.set_xlabel("l")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("median relative error")
    axes[0].legend()
    fig.suptitle("Fig. 8 on Adult: LGB_MDP query error by density of sensitive values")
    fig.tight_layout()
    fig.savefig(out / "fig8_density.png", dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", default="all",
                    choices=("all", "grid", "density", "attack", "speed"))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--out", default="docs/results/002")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.what in ("all", "speed"):
        speed(out)
    if a.what in ("all", "grid"):
        grid(out, a.queries)
    if a.what in ("all", "density"):
        density(out, a.queries)
    if a.what in ("all", "attack"):
        attack(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
