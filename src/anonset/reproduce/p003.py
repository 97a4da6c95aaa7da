"""Paper 003 (t-closeness for multiple sensitive attributes), Sec. 5 on
Adult: class sizes (Tables 6-8), information loss (Figs. 3-5), runtime
(Fig. 6), plus the lower bound on small-t class sizes and the Algorithm 1
investigation at k = 15 / 20 (:mod:`.p003_bounds`).

QIs: age (numeric), workclass, marital-status, race, sex, native-country,
salary-class (shipped hierarchies); SAs: occupation (hierarchical ground,
shipped hierarchy) and education-num (ordered ground).  For each algorithm
(cluster = Algorithm 1, pca = Algorithm 2, microagg = the contrast) and
k in {2, 5, 10, 15, 20}, t in {0.1, ..., 0.5}.  Every output is checked with
anonset.checks.check_partition (outside the timed part).
"""
from __future__ import annotations

import time

import pandas as pd

TITLE = "t-closeness for multiple sensitive attributes (Tables 6-8, Figs. 3-6)"
QI = ["age", "workclass", "marital-status", "race", "sex", "native-country", "salary-class"]
SA = ["occupation", "education-num"]
GROUND = {"occupation": "hierarchical", "education-num": "ordered"}
NAMES = {"cluster": "Algorithm 1 (cluster)", "pca": "Algorithm 2 (PCA)",
         "microagg": "Contrast (t-closeness-first microaggregation)"}
ALGS = ("pca", "cluster", "microagg")
SCALES = {"smoke": dict(ks=(2, 15), ts=(0.1, 0.5), rows=6_000, invest_ks=(15,)),
          "quick": dict(ks=(2, 5, 10, 15, 20), ts=(0.1, 0.3, 0.5), rows=None,
                        invest_ks=(15, 20)),
          "full": dict(ks=(2, 5, 10, 15, 20), ts=(0.1, 0.2, 0.3, 0.4, 0.5), rows=None,
                       invest_ks=(15, 20))}
#: the settings a reduced run names on its page (:func:`.page.reductions`)
REDUCED = {"ks": "k", "ts": "t", "rows": "Adult rows", "invest_ks": "Algorithm 1 section: k"}
SEED = 1

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


def steps(scale: str) -> int:
    c = SCALES[scale]
    return len(ALGS) * len(c["ks"]) * len(c["ts"]) + 2


def adult(rows=None):
    from ..datasets import adult_hierarchy, load_adult
    df = load_adult()
    if rows is not None and rows < len(df):
        df = df.sample(n=rows, random_state=0).reset_index(drop=True)
    hier = {c: adult_hierarchy(c) for c in QI[1:] + ["occupation"]}
    return df, hier


def rest_of(df) -> list:
    """The columns of Adult the experiments do not use (dropped: every
    column needs a role)."""
    return [c for c in df.columns if c not in QI + SA]


def grid(c, progress):
    from ..partition.checks import check_partition
    from ..partition.msa import MSAProblem
    df, hier = adult(c["rows"])
    rows, grid_time = [], {}
    for alg in ALGS:
        t0 = time.perf_counter()
        prob = MSAProblem(df, QI, SA, hierarchies=hier, drop=rest_of(df))
        t_enc = time.perf_counter() - t0
        total = t_enc
        for k in c["ks"]:
            for t in c["ts"]:
                # Pseudocode 2 as printed: a class may hold one value of an SA
                # alone where t allows it (anonset merges such classes unless
                # named: docs/algorithms.md, "Classes of one value")
                r = prob.run(alg, k, t, seed=SEED, research_seed=True, allow_homogeneous=SA)
                total += r.timings["total"]
                s = r.summary()
                g = r.generalized()
                rep = check_partition(g, g["ec"].to_numpy(), SA, ground=GROUND,
                                      hierarchies={"occupation": hier["occupation"]})
                s.update(check_k=rep.k, check_t=rep.t, ok=bool(rep.k >= k and rep.t <= t + 1e-12),
                         **{f"t[{col}]": v for col, v in rep.t_per_attribute.items()})
                rows.append(s)
                progress.step(f"{alg} k={k} t={t}")
        grid_time[alg] = {"encode_s": t_enc, "grid_s": total}
    return pd.DataFrame(rows), grid_time, df, hier


def run(out, scale, progress, page):
    from . import p003_bounds as PB
    from . import p003_page as P
    c = SCALES[scale]
    res, grid_time, df, hier = grid(c, progress)
    res.to_csv(out / "grid.csv", index=False)
    bounds = PB.size_bounds(df, hier, c["ts"])
    bounds.to_csv(out / "size_bounds.csv", index=False)
    progress.step("size bounds")
    inv = PB.investigate(df, hier, c["invest_ks"], c["ts"])
    inv.to_csv(out / "algorithm1_k15_20.csv", index=False)
    progress.step("Algorithm 1 investigation")
    P.plots(res, c["ks"], c["ts"], out)
    page.files += ["grid.csv", "size_bounds.csv", "algorithm1_k15_20.csv",
                   "il_cluster.png", "il_pca.png", "il_microagg.png", "runtime_k2.png"]
    n_pairs = len(df[SA].drop_duplicates())
    P.write_page(page, res, grid_time, bounds, inv, c, len(df), n_pairs)
