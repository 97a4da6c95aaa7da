"""Paper 002 (Li, He & Sun, LGB): the trends of Figs. 5-8 on UCI Adult, on a
paper-shaped synthetic table and on Adult with its columns shuffled.

    anonset reproduce 002 [--quick] [--out DIR]

Variants: ``mdp`` (Alg. 3), ``ncp`` (Alg. 4 as printed, the default) and
``ncp_balanced`` (Alg. 4 with Xu et al.'s adjustment, ``balance=True``).
Query error is reported under both bound readings of Sec. 4.2:
``query_error_*`` the paper's floor / ceil of the expected hits per salary
bucket (``bound='paper'``), ``query_error_hard_*`` the guaranteed bounds
(rows certain / possibly matching, ``bound='hard'``); and under both readings
of a bucketized predicate cell: the default, Pro_t(A) = the share of its
bucket's values that match (``bucketed='share'``), and ``*_shown_*``, the
cell's shown value taken at face value (``bucketed='shown'``, the "specific
values" of Sec. 4.3).  ``synthetic`` repeats
the grid and the density runs on a table shaped like the paper's Table 1
(31,055 rows, occupation 257 values, salary 719 values), to tell properties of
Adult from properties of the method.

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

import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..datasets import adult_hierarchy, load_adult
from ..partition import lgb as L

TITLE = "local generalization and bucketization (LGB), Figs. 5-8"
SCALES = {
    "smoke": dict(queries=40, ks=(5,), ls=(5, 10), dens_ks=(5,), dens_ls=(5,),
                  densities=(0.1, 0.4), syn_ks=(5,), syn_ls=(5,), variants=2, extra=False,
                  rows=6_000, ncp_seeds=(2,)),
    "quick": dict(queries=200, ks=(5, 10), ls=(5, 10, 20), dens_ks=(5,), dens_ls=(5, 20),
                  densities=(0.1, 0.2, 0.3, 0.4), syn_ks=(5,), syn_ls=(5, 20), variants=3,
                  extra=True, rows=None, ncp_seeds=(2, 3, 4, 5)),
    "full": dict(queries=1000, ks=(5, 8, 10), ls=(5, 8, 10, 12, 15, 18, 20), dens_ks=(5, 8, 10),
                 dens_ls=(5, 10, 15, 20), densities=(0.1, 0.2, 0.3, 0.4), syn_ks=(5, 10),
                 syn_ls=(5, 10, 15, 20), variants=3, extra=True, rows=None,
                 ncp_seeds=(2, 3, 4, 5, 6, 7)),
}

#: the settings a reduced run names on its page (:func:`.page.reductions`)
REDUCED = {"queries": "queries per setting", "ks": "k", "ls": "l",
           "dens_ks": "density runs: k", "dens_ls": "density runs: l",
           "densities": "densities", "syn_ks": "synthetic and shuffled runs: k",
           "syn_ls": "synthetic and shuffled runs: l", "variants": "LGB variants",
           "extra": "synthetic, shuffled and attack runs", "rows": "Adult rows",
           "ncp_seeds": "seeds of the NCP spread"}
QI = ["relationship", "marital-status", "race", "education", "hours-per-week"]
SEMI = ["sex", "age", "occupation"]
HIER = ("marital-status", "race", "education", "occupation")
KS = (5, 8, 10)
LS = (5, 8, 10, 12, 15, 18, 20)
T_SEX = 0.2
# (label, method, balance)
VARIANTS = (("mdp", "mdp", False), ("ncp", "ncp", False), ("ncp_balanced", "ncp", True))


def _zipf(rng, d, s, n):
    p = 1.0 / np.arange(1, d + 1) ** s
    return rng.permutation(d)[rng.choice(d, size=n, p=p / p.sum())]


def paper_like_table(n: int = 31_055, seed: int = 7) -> pd.DataFrame:
    """A synthetic table with the paper's Table 1 shape: sex (2), age (~73,
    numeric), relationship (13), marital status (6), race (9), education (11),
    hours per week (~90, numeric, heaped at 40), occupation (257, Zipf, no
    value above 5% so l = 20 is feasible) and a log-normal-like salary with
    719 levels depending on education, age, hours and sex."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.rint(rng.normal(40, 13, n)), 17, 89).astype(int)
    edu = _zipf(rng, 11, 0.9, n)
    hours = np.where(rng.random(n) < 0.35, 40,
                     np.clip(np.rint(rng.normal(41, 13, n)), 1, 99)).astype(int)
    rel, mar, race = _zipf(rng, 13, 1.1, n), _zipf(rng, 6, 1.2, n), _zipf(rng, 9, 1.6, n)
    occ = _zipf(rng, 257, 0.6, n)
    sex = rng.integers(0, 2, n)
    logs = 9.9 + 0.07 * edu + 0.012 * (age - 40) + 0.01 * (hours - 40) + 0.1 * sex \
        + rng.normal(0, 0.55, n)
    lo, hi = np.quantile(logs, [0.001, 0.999])
    lvl = np.clip(((logs - lo) / (hi - lo) * 719).astype(int), 0, 718)
    levels = np.rint(np.exp(np.linspace(lo, hi, 719)))
    return pd.DataFrame({
        "sex": np.where(sex, "M", "F"), "age": age,
        "relationship": [f"r{v:02d}" for v in rel], "marital-status": [f"m{v}" for v in mar],
        "race": [f"c{v}" for v in race], "education": [f"e{v:02d}" for v in edu],
        "hours-per-week": hours, "occupation": [f"o{v:03d}" for v in occ],
        "salary": levels[lvl].astype(np.int64)})


def _block_hierarchy(leaves, sizes):
    """leaf -> blocks of `sizes` consecutive leaves -> '*'"""
    from anonset.hierarchy import Hierarchy
    return Hierarchy([[v] + [f"g{s}_{i // s}" for s in sizes] + ["*"]
                      for i, v in enumerate(sorted(leaves))])


def paper_like_hierarchies(df):
    return {"relationship": _block_hierarchy(df["relationship"].unique(), [4]),
            "marital-status": _block_hierarchy(df["marital-status"].unique(), [3]),
            "race": _block_hierarchy(df["race"].unique(), [3]),
            "education": _block_hierarchy(df["education"].unique(), [4]),
            "occupation": _block_hierarchy(df["occupation"].unique(), [8, 64])}


def adult_table(rows=None) -> pd.DataFrame:
    df = load_adult()
    if rows is not None and rows < len(df):
        df = df.sample(n=rows, random_state=0).reset_index(drop=True)
    w = df["fnlwgt"].to_numpy()
    bins = pd.qcut(w, 719, labels=False, duplicates="drop")
    med = pd.Series(w).groupby(bins).median().round().astype(np.int64)
    df["salary"] = med.to_numpy()[bins]
    return df


def lgb_run(df, flags, k, l, method, seed=1, balance=False, hier=None, mdp_split="paper"):
    occ = flags["occupation"].to_numpy()
    cnt = df.loc[occ, "occupation"].value_counts()
    l_occ = min(l, int(occ.sum() // cnt.max()))
    hier = {a: adult_hierarchy(a) for a in HIER} if hier is None else hier
    t0 = time.perf_counter()
    rest = [c for c in df.columns if c not in QI + SEMI + ["salary"]]
    res = L.lgb(df, qi=QI, semi_sensitive=SEMI, sensitive=["salary"], flags=flags, k=k,
                l={"age": l, "occupation": l_occ, "salary": l}, closeness={"sex": T_SEX},
                method=method, hierarchies=hier, drop=rest, seed=seed, research_seed=True,
                balance=balance, mdp_split=mdp_split if method == "mdp" else None)
    return res, time.perf_counter() - t0, l_occ


READINGS = (("query_error", "paper", "share"), ("query_error_hard", "hard", "share"),
            ("query_error_shown", "paper", "shown"), ("query_error_shown_hard", "hard", "shown"))


def metrics_row(res, secs, k, l, l_occ, variant, density, queries):
    errors = {}
    for name, bound, bucketed in READINGS:
        mean, errs = L.query_error(res, "salary", n_queries=queries, seed=2024, detail=True,
                                   bound=bound, bucketed=bucketed)
        errors[f"{name}_mean"] = mean
        errors[f"{name}_median"] = float(np.median(errs))
    ok = L.verify(res)
    n_qi_cells = int(res.qi_mask.sum())
    ncp_ = L.ncp(res)
    # NCP per cell of the always-QI attributes (the five of Table 1), which
    # flags on other attributes can only affect through the QI partition
    pure = [j for j, a in enumerate(res.attributes) if res.roles[a] == "qi"]
    ncp_pure = float(np.mean([res.domains[j].range_cost(res.glo[j], res.ghi[j]).mean()
                              for j in pure]))
    return {"method": variant, "k": k, "l": l, "l_occupation": l_occ, "density": density,
            "C_DM": L.c_dm(res), "NCP": ncp_, "NCP_per_QI_cell": ncp_ / max(n_qi_cells, 1),
            "NCP_per_pure_QI_cell": ncp_pure,
            "NCP_with_buckets": L.ncp(res, buckets=True),
            **errors,
            "groups": res.n_groups, "max_group": int(np.bincount(res.gid).max()),
            "promoted": res.promoted, "seconds": round(secs, 3), "corollary3": ok["ok"]}


def _grid(df, hier, ks, ls, queries, progress, variants=VARIANTS):
    flags = L.draw_flags(df, SEMI, 0.2, seed=1)
    rows = []
    for label, method, balance in variants:
        for k in ks:
            for l in ls:
                res, secs, l_occ = lgb_run(df, flags, k, l, method, balance=balance, hier=hier)
                rows.append(metrics_row(res, secs, k, l, l_occ, label, 0.2, queries))
                progress.step(f"{label} k={k} l={l}")
    return pd.DataFrame(rows)


def _density(df, hier, ks, ls, queries, progress, densities=(0.1, 0.2, 0.3, 0.4)):
    rows = []
    for dens in densities:
        flags = L.draw_flags(df, SEMI, dens, seed=1)
        for k in ks:
            for l in ls:
                res, secs, l_occ = lgb_run(df, flags, k, l, "mdp", hier=hier)
                rows.append(metrics_row(res, secs, k, l, l_occ, "mdp", dens, queries))
                progress.step(f"density {dens} k={k} l={l}")
    return pd.DataFrame(rows)


def grid(out: Path, c, progress):
    tab = _grid(adult_table(c["rows"]), None, c["ks"], c["ls"], c["queries"], progress,
                VARIANTS[:c["variants"]])
    tab.to_csv(out / "grid.csv", index=False)
    plot_grid(tab, out, ks=c["ks"], variants=VARIANTS[:c["variants"]])
    return tab


def seed_spread(out: Path, c, progress):
    """C_DM of the NCP variants at the smallest l over further seeds (the grid
    uses seed 1): Algorithm 4's random draws are keyed by the release's
    parameters, l among them, so each l draws another partition; the spread
    over seeds tells whether C_DM's change with l is more than that draw."""
    df = adult_table(c["rows"])
    flags = L.draw_flags(df, SEMI, 0.2, seed=1)
    l0 = min(c["ls"])
    rows = []
    for label, method, balance in VARIANTS[:c["variants"]]:
        if method != "ncp":
            continue
        for k in c["ks"]:
            for seed in c["ncp_seeds"]:
                res, _, _ = lgb_run(df, flags, k, l0, method, seed=seed, balance=balance)
                rows.append({"method": label, "k": k, "l": l0, "seed": seed,
                             "C_DM": L.c_dm(res)})
    progress.step("NCP seeds")
    tab = pd.DataFrame(rows)
    tab.to_csv(out / "ncp_seeds.csv", index=False)
    return tab


def density(out: Path, c, progress):
    tab = _density(adult_table(c["rows"]), None, c["dens_ks"], c["dens_ls"], c["queries"],
                   progress, c["densities"])
    tab.to_csv(out / "density.csv", index=False)
    plot_density(tab, out, ks=c["dens_ks"], densities=c["densities"])
    return tab


def synthetic(out: Path, c, progress):
    """The grid and density runs on the paper-shaped synthetic table."""
    df = paper_like_table()
    hier = paper_like_hierarchies(df)
    g = _grid(df, hier, c["syn_ks"], c["syn_ls"], c["queries"], progress)
    g.to_csv(out / "synthetic_grid.csv", index=False)
    plot_grid(g, out, prefix="synthetic_", ks=c["syn_ks"], title="synthetic (paper-shaped)")
    d = _density(df, hier, c["syn_ks"], c["syn_ls"], c["queries"], progress, c["densities"])
    d.to_csv(out / "synthetic_density.csv", index=False)
    plot_density(d, out, prefix="synthetic_", ks=c["syn_ks"], title="synthetic (paper-shaped)",
                 densities=c["densities"])
    return g, d


def shuffled(out: Path, c, progress):
    """The density runs on Adult with every column permuted independently
    (same marginals, no correlations): tells what in Adult's density curve
    comes from the relations between its attributes."""
    df = adult_table()
    rng = np.random.default_rng(11)
    for col in df.columns:
        df[col] = df[col].to_numpy()[rng.permutation(len(df))]
    d = _density(df, None, c["syn_ks"], c["syn_ls"], c["queries"], progress, c["densities"])
    d.to_csv(out / "shuffled_density.csv", index=False)
    plot_density(d, out, prefix="shuffled_", ks=c["syn_ks"], title="Adult, columns shuffled",
                 densities=c["densities"])
    return d


def attack(out: Path):
    df = adult_table()
    flags = L.draw_flags(df, SEMI, 0.2, seed=1)
    rows = []
    for label, method, balance in VARIANTS:
        res, _, l_occ = lgb_run(df, flags, 5, 5, method, balance=balance)
        t0 = time.perf_counter()
        a = L.attack(res)
        rows.append({"method": label, "k": 5, "l": 5, "l_occupation": l_occ,
                     "max_identity": a["identity"], "bound_identity": 1 / 5,
                     **{f"max_value[{x}]": v for x, v in a["value"].items()},
                     "max_excess[sex]": a["excess"]["sex"], "t_sex": T_SEX,
                     "seconds": round(time.perf_counter() - t0, 1)})
    tab = pd.DataFrame(rows)
    tab.to_csv(out / "attack.csv", index=False)
    return tab


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
        for label, method, balance in VARIANTS:
            res, secs, _ = lgb_run(big, flags, 5, 5, method, balance=balance)
            t0 = time.perf_counter()
            res.write(out / f"_speed_{n_rows}.parquet")
            wsecs = time.perf_counter() - t0
            for p in out.glob(f"_speed_{n_rows}*"):
                p.unlink()
            rows.append({"rows": n_rows, "method": label, "k": 5, "l": 5,
                         "lgb_seconds": round(secs, 2), "write_parquet_seconds": round(wsecs, 2),
                         "machine": machine()})
    tab = pd.DataFrame(rows)
    tab.to_csv(out / "speed.csv", index=False)
    return tab


def _panels(tab, ks, metric, panels, path, suptitle, width):
    """One row of panels (label, rows of ``tab``), metric against l, one line
    per k."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(panels), figsize=(width, 3.6), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, (label, sub) in zip(axes, panels):
        for k in ks:
            s = sub[sub.k == k]
            ax.plot(s.l, s[metric], marker="o", label=f"k={k}")
        ax.set_title(label)
        ax.set_xlabel("l")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(metric)
    axes[0].legend()
    fig.suptitle(suptitle)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_grid(tab, out, prefix="", ks=KS, title="Adult", variants=VARIANTS):
    for metric, fig_no in (("C_DM", 5), ("NCP", 6), ("query_error_mean", 7),
                           ("query_error_median", 7), ("query_error_hard_mean", 7),
                           ("query_error_hard_median", 7), ("query_error_shown_mean", 7),
                           ("query_error_shown_hard_mean", 7)):
        panels = [(f"LGB_{label.upper()}", tab[tab.method == label]) for label, _, _ in variants]
        _panels(tab, ks, metric, panels, out / f"{prefix}fig{fig_no}_{metric}.png",
                f"Fig. {fig_no} on {title}: {metric}", 14)


def plot_density(tab, out, prefix="", ks=KS, title="Adult", densities=(0.1, 0.2, 0.3, 0.4)):
    names = {"query_error_mean": "fig8_density.png",
             "query_error_hard_mean": "fig8_density_hard.png",
             "query_error_shown_mean": "fig8_density_shown.png",
             "query_error_shown_hard_mean": "fig8_density_shown_hard.png"}
    for metric, name in names.items():
        panels = [(f"density {int(dens * 100)}%", tab[tab.density == dens]) for dens in densities]
        _panels(tab, ks, metric, panels, out / f"{prefix}{name}",
                f"Fig. 8 on {title}: LGB_MDP {metric} by density of sensitive values", 15)


def steps(scale: str) -> int:
    c = SCALES[scale]
    n = c["variants"] * len(c["ks"]) * len(c["ls"]) + 1
    n += len(c["densities"]) * len(c["dens_ks"]) * len(c["dens_ls"])
    if c["extra"]:               # synthetic grid, synthetic and shuffled density, attack, speed
        cells = len(c["syn_ks"]) * len(c["syn_ls"])
        n += len(VARIANTS) * cells + 2 * len(c["densities"]) * cells + 2
    return n


def run(out, scale, progress, page):
    from .p002_page import write_page
    c = SCALES[scale]
    out = Path(out)
    g = grid(out, c, progress)
    extra = {"seeds": seed_spread(out, c, progress)}
    d = density(out, c, progress)
    if c["extra"]:
        extra["synthetic"] = synthetic(out, c, progress)
        extra["shuffled"] = shuffled(out, c, progress)
        extra["attack"] = attack(out)
        progress.step("attack")
        if scale == "full":
            extra["speed"] = speed(out)
        progress.step("speed")
    page.files += sorted(p.name for p in out.iterdir() if p.suffix in (".csv", ".png"))
    write_page(page, g, d, extra, c)
