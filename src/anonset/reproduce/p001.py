"""Paper 001 ((l, d)-semantic diversity), Sec. 6-7: Table 10, Figs. 8-15
and the LE baseline.

Names (Table 12): N- = duplicate-processing sampler (Alg. 3), Ex- = simple
sampler (Alg. 1); -Proposal = Alg. 2 with eq. 2's probabilities (the paper),
-Exact = Alg. 2 with the sampler's exact probabilities, -EM = non-negative
EM with the exact probabilities, -Existing = eq. 21-22, -Simple = eq. 20,
N-Anonymity = the raw report counts; LE = (l, e)-diversity by Anatomy
(:func:`anonset.partition.baselines.anatomy` with ``classes`` = the tree's
ancestors at height d - 1: two values differ there exactly when their
distance is >= d) with the simple analysis (each group's values spread over
its rows), for the tree distance of education only, as in the paper.

Data (Table 11): the synthetic income set (100,000 records), Adult
education (16 values; both the paper's Fig. 7 tree,
:mod:`anonset.datasets.education_fig7`, and the ARX hierarchy shipped with
Adult) and Adult fnlwgt (148 classes); QIDs age (decade) and sex.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..datasets import education_fig7 as E7
from ..datasets import semantic as SD
from ..randomized import semantic as S

TITLE = "(l, d)-semantic diversity (Table 10, Figs. 8-15, LE)"
SCALES = {"smoke": dict(seeds=1, bias_seeds=5, violation_n=5_000, panels="small"),
          "quick": dict(seeds=2, bias_seeds=40, violation_n=30_000, panels="all"),
          "full": dict(seeds=5, bias_seeds=200, violation_n=100_000, panels="all")}

#: the settings a reduced run names on its page (:func:`.page.reductions`)
REDUCED = {"seeds": "seeds per MSE point", "bias_seeds": "seeds of the bias table",
           "violation_n": "records per violation simulation", "panels": "MSE panels"}

PANELS = {
    "income": [("a", "d", 2, [1, 2, 3, 4, 5, 6]), ("b", "l", 2, [2, 3, 4, 5]),
               ("c", "d", 3, [1, 2, 3, 4, 5]), ("d", "l", 3, [2, 3, 4, 5])],
    "education": [("a", "d", 2, [1, 2, 3, 4]), ("b", "l", 2, [2, 3, 4, 5]),
                  ("c", "d", 3, [1, 2, 3, 4]), ("d", "l", 3, [2, 3, 4])],
    "education_arx": [("a", "d", 2, [1, 2, 3]), ("b", "l", 2, [2, 3, 4, 5]),
                      ("c", "d", 3, [1, 2, 3]), ("d", "l", 3, [2, 3, 4])],
    "fnlwgt": [("a", "d", 2, [5, 10, 20, 40]), ("b", "l", 10, [2, 3, 4]),
               ("c", "d", 3, [5, 10, 20, 30]), ("d", "l", 20, [2, 3, 4])],
}
#: Figs. 8-10: the paper's (l, d) per data set
HISTOGRAMS = {"income": (3, 7), "education": (2, 3), "fnlwgt": (3, 10)}
FIGURE = {"income": 11, "education": 12, "education_arx": 12, "fnlwgt": 13}


def datasets() -> dict:
    return {"income": SD.income(), "income_values": SD.income(values=True),
            "education": E7.adult_education_fig7(), "education_arx": SD.adult_education(),
            "fnlwgt": SD.adult_fnlwgt()}


def steps(scale: str) -> int:
    n = 2 * len(PANELS) if SCALES[scale]["panels"] == "small" else sum(
        len(xs) for p in PANELS.values() for *_, xs in p)
    return n + 4 + 3


def omega_of(ds, masks, qdoms):
    """omega (QID cell x value: reports holding the value) and the truth."""
    F = len(ds.domain)
    cell, dims = _cells(ds, qdoms)
    bits = S._unpack(masks, F)
    om = np.zeros((int(np.prod(dims)), F))
    np.add.at(om, cell, bits)
    truth = np.zeros_like(om)
    np.add.at(truth, (cell, ds.codes), 1)
    return om, truth


def _cells(ds, qdoms):
    cell = np.zeros(len(ds.frame), dtype=np.int64)
    dims = []
    for q in ds.qids:
        idx = {v: i for i, v in enumerate(qdoms[q])}
        cell = cell * len(qdoms[q]) + ds.frame[q].map(idx).to_numpy()
        dims.append(len(qdoms[q]))
    return cell, dims


def le_histogram(ds, l, d, qdoms, seed):
    """LE: Anatomy over the classes at tree height d - 1, simple analysis.
    Returns (estimate, truth) over (QID cell, value), or None when the
    classes are not l-eligible (LE cannot publish)."""
    from ..partition.baselines import anatomy
    h = ds.distance.hierarchy
    if h is None or d - 1 > h.height:
        return None
    anc = h.ancestors[:, int(d) - 1]
    classes = {v: int(anc[i]) for i, v in enumerate(ds.domain)}
    frame = ds.frame[list(ds.qids) + [ds.sensitive]]
    try:
        rel = anatomy(frame, qids=list(ds.qids), sensitive=ds.sensitive, l=l, classes=classes,
                      domains={ds.sensitive: ds.domain}, seed=f"p001-le-{seed}",
                      research_seed=True,
                      # the paper's LE publishes the QIDs exactly, whatever
                      # they tell of the sensitive value (named, as research)
                      allow_recode=list(ds.qids))
    except ValueError:
        return None
    hist = rel.ghist.astype(float)
    share = hist / hist.sum(axis=1, keepdims=True)
    cell, dims = _cells(ds, qdoms)
    est = np.zeros((int(np.prod(dims)), len(ds.domain)))
    np.add.at(est, cell, share[rel.group])
    truth = np.zeros_like(est)
    np.add.at(truth, (cell, ds.codes), 1)
    return est, truth


def samplers(ds, l, d):
    algos = ["simple"]
    try:
        if 2 * ds.distance.duplicate_radius(d) + 1 <= ds.distance.F:
            algos.append("duplicate")
    except ValueError:
        pass
    return algos


def estimates(ds, l, d, algo, seed, qdoms, q=None, qp=None):
    """Every estimator of Table 12 on one publication: {name: estimate},
    the truth and N."""
    pre = "Ex" if algo == "simple" else "N"
    if q is None:
        q, _ = S.selection_matrix(ds.distance, l, d, algorithm=algo, draws=100_000)
    qp = S.paper_selection_matrix(ds.distance, l, d) if qp is None else qp
    m = S.semantic_sets(ds.codes, ds.distance, l, d, algorithm=algo, seed=1000 * seed + 7,
                        research_seed=True)
    om, truth = omega_of(ds, m, qdoms)
    est = {f"{pre}-Proposal": S.estimate_linear(om, qp), f"{pre}-Exact": S.estimate_linear(om, q),
           f"{pre}-EM": S.estimate_em(om, q)[0], f"{pre}-Existing": S.estimate_existing(om, l),
           f"{pre}-Simple": S.estimate_simple(om, l)}
    if algo == "duplicate":
        est["N-Anonymity"] = om
    return est, truth, truth.sum()


def run_point(ds, l, d, seeds, qdoms):
    if not S.feasible_values(ds.distance, l, d)[np.unique(ds.codes)].all():
        return None
    out = {}
    qp = S.paper_selection_matrix(ds.distance, l, d)
    for algo in samplers(ds, l, d):
        q, info = S.selection_matrix(ds.distance, l, d, algorithm=algo, draws=100_000)
        acc = {}
        for s in range(seeds):
            est, truth, N = estimates(ds, l, d, algo, s, qdoms, q, qp)
            for k, v in est.items():
                acc.setdefault(k, []).append(S.mse(truth, v, N))
        out.update({k: float(np.mean(v)) for k, v in acc.items()})
        out[f"{'Ex' if algo == 'simple' else 'N'}-q"] = info["method"]
    le = [le_histogram(ds, l, d, qdoms, s) for s in range(seeds)]
    if le and le[0] is not None:
        out["LE"] = float(np.mean([S.mse(t, e, t.sum()) for e, t in le]))
    return out


def mse_grids(out, c, sets, progress) -> dict:
    tabs = {}
    for name in ("income", "education", "education_arx", "fnlwgt"):
        ds = sets[name]
        qdoms = ds.qid_domains()
        rows = []
        panels = PANELS[name] if c["panels"] == "all" else PANELS[name][:1]
        for panel, var, fixed, xs in panels:
            xs = xs if c["panels"] == "all" else xs[:2]
            for x in xs:
                l, d = (fixed, x) if var == "d" else (x, fixed)
                t0 = time.time()
                r = run_point(ds, l, d, c["seeds"], qdoms)
                progress.step(f"{name} ({panel}) l={l} d={d} {time.time() - t0:.0f} s")
                rows.append({"panel": panel, "l": l, "d": d, "feasible": r is not None,
                             **(r or {})})
        tabs[name] = pd.DataFrame(rows)
        tabs[name].to_csv(out / f"mse_{name}.csv", index=False)
    return tabs


def histograms(out, sets, progress) -> dict:
    """Figs. 8-10: the (age x sex) x value histograms at the paper's (l, d);
    income's (3, 7) is infeasible under |i - j|, so income is shown at (3, 7)
    under the million-yen distance (Example 2) and at (3, 4) under |i - j|."""
    runs = {"income": ("income_values", 3, 7), "income_index": ("income", 3, 4),
            "education": ("education", 2, 3), "fnlwgt": ("fnlwgt", 3, 10)}
    res = {}
    for key, (name, l, d) in runs.items():
        ds = sets[name]
        qdoms = ds.qid_domains()
        hist = {}
        for algo in samplers(ds, l, d):
            est, truth, _ = estimates(ds, l, d, algo, 0, qdoms)
            hist.update(est)
        le = le_histogram(ds, l, d, qdoms, 0)
        if le is not None:
            hist["LE"] = le[0]
        hist = {"Original": truth, **hist}
        res[key] = (name, l, d, hist)
        rows = []
        for k, v in hist.items():
            rows.append({"method": k, "L1/N": float(np.abs(v - truth).sum() / truth.sum()),
                         "MSE": S.mse(truth, v, truth.sum())})
        pd.DataFrame(rows).to_csv(out / f"histogram_{key}.csv", index=False)
        progress.step(f"histogram {key}")
    return res


def violation(out, n):
    rows = []
    g = np.random.default_rng(0)
    for F in (10, 14, 20):
        dist = S.SemanticDistance.ordered(F)
        codes = g.integers(0, F, n)
        for fig_, var, xs in (("14", "l", range(2, 7)), ("15", "d", range(1, 7))):
            for x in xs:
                l, d = (x, 3) if var == "l" else (3, x)
                if l > F:
                    continue
                rows.append({"figure": fig_, "F": F, "l": l, "d": d,
                             "eq11_bound": S.violation_bound(F, l, d),
                             "exact_uniform": float(S.violation_probability(dist, l, d).mean()),
                             "simulation": S.simulate_violation(dist, l, d, codes,
                                                                seed=F * 100 + x),
                             "eq12_N100": S.database_violation_bound(F, l, d, 100)})
    df = pd.DataFrame(rows)
    df.to_csv(out / "violation.csv", index=False)
    return df


def table10():
    q = S.paper_selection_matrix(S.example_distance(), 2, 2)
    return S.estimate_linear(S.TABLE_9, q)


def bias(seeds):
    ds = SD.income()
    rows = []
    truth = np.bincount(ds.codes, minlength=14).astype(float)
    for algo in ("simple", "duplicate"):
        for l, d in ((3, 2), (4, 3)):
            q, _ = S.selection_matrix(ds.distance, l, d, algorithm=algo)
            qp = S.paper_selection_matrix(ds.distance, l, d)
            om = np.array([S._unpack(S.semantic_sets(ds.codes, ds.distance, l, d, algorithm=algo,
                                                     seed=s, research_seed=True), 14).sum(axis=0)
                           for s in range(seeds)], dtype=float)
            ests = {"linear (exact q)": S.estimate_linear(om, q),
                    "linear (eq. 2 q)": S.estimate_linear(om, qp),
                    "EM (exact q)": S.estimate_em(om, q, tol=1e-6, max_iter=20000)[0],
                    "existing (eq. 21)": S.estimate_existing(om, l),
                    "simple (eq. 20)": S.estimate_simple(om, l)}
            for k, e in ests.items():
                b = e.mean(axis=0) - truth
                se = e.std(axis=0, ddof=1) / np.sqrt(seeds) + 1e-12
                rows.append({"sampler": algo, "(l, d)": f"({l}, {d})", "estimator": k,
                             "max abs bias": np.abs(b).max(),
                             "max abs bias / SE": (np.abs(b) / se).max(),
                             "mean RMSE": np.sqrt(((e - truth) ** 2).mean()),
                             "min estimate": e.min()})
    return pd.DataFrame(rows)


def run(out, scale, progress, page):
    from . import p001_page as P
    c = SCALES[scale]
    sets = datasets()
    tabs = mse_grids(out, c, sets, progress)
    hist = histograms(out, sets, progress)
    viol = violation(out, c["violation_n"])
    progress.step("Figs. 14-15")
    t10 = table10()
    b = bias(c["bias_seeds"])
    b.to_csv(out / "bias.csv", index=False)
    progress.step("bias")
    P.figures(out, tabs, hist, viol)
    progress.step("figures")
    P.write_page(page, tabs, hist, viol, t10, b, sets, c)
