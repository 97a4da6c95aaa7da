"""Paper 004 (Sei et al., IPSJ Journal 56(5), 2015: l-diversity that keeps
the QIDs exact), Sec. 6: Figs. 1-5, against TP, Anatomy and Mondrian.

* Data: OCC-d / SAL-d (d = 3, 5, 7) -- **stand-ins** generated with Table 8's
  domain sizes (:mod:`anonset.datasets.ipums_standin`; the IPUMS extracts
  are not available), and Adult(1..15) (45,223 complete records; Adult(i)
  takes the i-th attribute of Table 9 as sensitive, the other 14 as QIDs).
* Methods (the paper's legend names): Proposal (``anonset.publish`` with
  Diversity(l) on the sensitive attribute, QIDs exact; reconstruction by
  ``anonset.reconstruct`` per query cell, its default stopping rule), TP,
  Anatomy, Mondrian (:mod:`anonset.partition.baselines`).
* Measure: count queries over q random QIDs and S with selectivity s (eq.
  12), MSE of eq. 11 (:mod:`anonset.partition.baselines.queries`; column
  ``mse``: the cell's fractions X_j / N over the values of b_S, the reading
  that gives the paper's magnitudes; ``mse_count``: the whole count's
  fraction); defaults l = 10, q = 3, s = 0.07, 1,000 queries per setting
  (Sec. 6.3).
* Evaluation: a workload is answered from per-QID-point tables
  (:mod:`anonset.partition.baselines.cells`) where points are fewer than
  rows (the stand-ins), else query by query (Adult); the same answers.
"""
from __future__ import annotations

import time
import zlib

import numpy as np
import pandas as pd

from ..datasets import ipums_standin as IPUMS
from ..datasets import load_adult
from ..partition import baselines as B
from ..partition.baselines import cells as C
from ..partition.baselines import queries as Q
from . import figures as F

TITLE = "l-diversity keeping QIDs exact (Sei et al. 2015), Figs. 1-5"
METHODS = ("Proposal", "TP", "Anatomy", "Mondrian")
#: Not a method: every query cell answered with the table's distribution of S
#: (what an estimate that ignores the QIDs gets; how much S depends on them).
REFERENCE = "table's S distribution"
ADULT_ORDER = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
               "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
               "hours-per-week", "native-country", "salary-class")
ADULT_ORDERED = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                 "hours-per-week"}
SCALES = {
    "smoke": dict(rows=4_000, queries=25, ds=(3,), adult_rows=4_000, adult_ls=(2, 5),
                  adult_sets=(2, 8, 10)),
    # quick leaves out Adult(3): fnlwgt's 26,742 values make each query's EM
    # about 30 ms (the full run has it)
    "quick": dict(rows=60_000, queries=200, ds=(3, 5, 7), adult_rows=None,
                  adult_ls=(2, 6, 10), adult_sets=(1, 2) + tuple(range(4, 16))),
    "full": dict(rows=IPUMS.IPUMS_ROWS, queries=1000, ds=(3, 5, 7), adult_rows=None,
                 adult_ls=tuple(range(2, 11)), adult_sets=tuple(range(1, 16))),
}
#: the settings a reduced run names on its page (:func:`.page.reductions`)
REDUCED = {"rows": "rows per stand-in", "queries": "queries per setting",
           "ds": "stand-ins' d", "adult_rows": "Adult rows", "adult_ls": "Fig. 4: l",
           "adult_sets": "Fig. 4: Adult(i), i in"}
L_DEFAULT, Q_DEFAULT, S_DEFAULT = 10, 3, 0.07
SEED = "anonset-reproduce-paper-004-research-seed"        # 41 characters


def steps(scale: str) -> int:
    c = SCALES[scale]
    fig1 = 2 * sum(d - 1 for d in c["ds"])
    return fig1 + 2 * 3 + 2 * 4 + len(c["adult_sets"]) * len(c["adult_ls"]) + 1


# --------------------------------------------------------------- a data set
class Dataset:
    """One table prepared for the experiment: codes of QIDs and S in their
    declared domain order, which QIDs take interval predicates."""

    def __init__(self, name, frame, qids, sensitive, domains, ordered):
        self.name, self.frame, self.qids, self.sensitive = name, frame, list(qids), sensitive
        self.domains = {c: tuple(domains[c]) for c in self.qids + [sensitive]}
        self.qcodes = np.vstack([pd.Categorical(frame[c], categories=list(self.domains[c]))
                                 .codes.astype(np.int32) for c in self.qids])
        self.scodes = pd.Categorical(frame[sensitive], categories=list(
            self.domains[sensitive])).codes.astype(np.int32)
        self.ordered = [c in ordered for c in self.qids]
        self.ordered_s = sensitive in ordered

    @property
    def dom(self):
        return [len(self.domains[c]) for c in self.qids]

    @property
    def d_s(self):
        return len(self.domains[self.sensitive])

    @property
    def cells(self) -> C.PointCells:
        """The rows grouped by QID point (made once, for every workload)."""
        if getattr(self, "_cells", None) is None:
            self._cells = C.PointCells(self.qcodes)
        return self._cells


def ipums(kind: str, d: int, rows: int) -> Dataset:
    frame = (IPUMS.occ if kind == "OCC" else IPUMS.sal)(d, n_rows=rows, seed=0)
    return Dataset(f"{kind}-{d}", frame, IPUMS.QIDS[:d], frame.columns[-1],
                   IPUMS.domains(frame.columns), IPUMS.ORDERED)


def adult(i: int, rows: int | None = None) -> Dataset:
    df = load_adult()[list(ADULT_ORDER)]
    if rows is not None and rows < len(df):
        df = df.sample(n=rows, random_state=0).reset_index(drop=True)
    sens = ADULT_ORDER[i - 1]
    qids = [c for c in ADULT_ORDER if c != sens]
    doms = {c: sorted(pd.unique(df[c]).tolist()) for c in ADULT_ORDER}
    return Dataset(f"Adult({i})", df, qids, sens, doms, ADULT_ORDERED)


# --------------------------------------------------------------- publishing
class Release:
    """A method's release of a data set and how it answers one query."""

    def __init__(self, method: str, ds: Dataset, l: int, tag: str):
        import anonset
        self.method, self.error, self.obj = method, None, None
        t0 = time.perf_counter()
        kw = dict(qids=ds.qids, sensitive=ds.sensitive, l=l, domains=ds.domains,
                  seed=f"{SEED}-{tag}-{method}", research_seed=True)
        try:
            if method == "Proposal":
                if l > ds.d_s:
                    raise ValueError(f"l = {l} > |S| = {ds.d_s}")
                # keep_order: the evaluation needs each set beside its row's QIDs
                pub = anonset.publish(ds.frame[[ds.sensitive]], anonset.Diversity(l),
                                      seed=kw["seed"], research_seed=True,
                                      sensitive=[ds.sensitive], keep_order=True,
                                      domains={ds.sensitive: ds.domains[ds.sensitive]},
                                      # the paper's l on its data, whatever a set
                                      # beside rare values gives away (research)
                                      allow_clear=[ds.sensitive])
                self.obj = Q.SetAnswers(pub, ds.sensitive)
            else:
                fn = {"TP": B.tp, "Anatomy": B.anatomy, "Mondrian": B.mondrian}[method]
                if method == "Anatomy":
                    # the paper's Anatomy publishes the QIDs exactly, whatever
                    # they tell of the sensitive value (named, as research)
                    kw["allow_recode"] = list(ds.qids)
                self.obj = fn(ds.frame[ds.qids + [ds.sensitive]], **kw)
        except ValueError as e:                 # InputError is a ValueError
            self.error = str(e)
        self.seconds = time.perf_counter() - t0
        self.ds = ds

    @property
    def ok(self) -> bool:
        return self.error is None

    def answer(self, qu, rows) -> np.ndarray:
        """Estimated count of each value of b_S in the query's cell."""
        if self.method == "Proposal":
            return self.obj.answer(qu, rows)
        return Q.answer_partition(self.obj, [qu], rows=[rows])[0]

    def answers(self, queries, cells: C.PointCells, N: np.ndarray) -> list:
        """:meth:`answer` for a whole workload at once (``N``: cell sizes)."""
        if self.method == "Proposal":
            W = C.set_w(self.obj.members, self.obj.d, cells, queries)
            return [self.obj.answer_w(qu, w, n) for qu, w, n in zip(queries, W, N)]
        return C.partition_sums(self.obj, cells, queries)


def workload_answers(ds: Dataset, releases: list, qs: list) -> tuple:
    """(X, N, {method: estimates}) of one workload, from the per-point tables
    when they fit (:func:`anonset.partition.baselines.cells.dense_ok`), else
    query by query: the same answers either way."""
    ok = [r for r in releases if r.ok]
    groups = max([r.obj.n_groups for r in ok if r.method != "Proposal"], default=0)
    if C.dense_ok(ds.cells.n_points, ds.scodes.size, ds.d_s, groups):
        X, N = C.true_sums(ds.cells, ds.scodes, ds.d_s, qs)
        return X, N, {r.method: r.answers(qs, ds.cells, N) for r in ok}
    X, N = [], np.zeros(len(qs))
    est = {r.method: [] for r in ok}
    for i, qu in enumerate(qs):
        rows = Q.match_rows(ds.qcodes, qu)
        N[i] = rows.size
        X.append(np.bincount(ds.scodes[rows], minlength=ds.d_s)[qu.s_members].astype(float))
        for r in ok:
            est[r.method].append(r.answer(qu, rows))
    return X, N, est


def evaluate(ds: Dataset, releases: list, q: int, s: float, n_queries: int, seed: int) -> dict:
    """MSE (eq. 11, both readings) of each release over one random workload:
    {method: (value reading, count reading)}."""
    qs = Q.random_queries(ds.dom, ds.d_s, q, s, n_queries, ordered=ds.ordered,
                          ordered_s=ds.ordered_s, seed=seed)
    X, N, est = workload_answers(ds, releases, qs)
    share = np.bincount(ds.scodes, minlength=ds.d_s) / ds.scodes.size
    est[REFERENCE] = [n * share[qu.s_members] for n, qu in zip(N, qs)]
    return {m: (Q.query_mse(X, e, N), Q.query_mse(X, e, N, reading="count"))
            for m, e in est.items()}


def _grid_rows(ds, l, q, s, n_queries, tag, figure, progress, cache) -> list:
    key = (ds.name, l)
    if key not in cache:
        cache[key] = [Release(m, ds, l, f"{tag}-{ds.name}-l{l}") for m in METHODS]
    rels = cache[key]
    mse = evaluate(ds, rels, q, s, n_queries, seed=zlib.crc32(f"{ds.name} {l} {q} {s}".encode()))
    progress.step(f"{figure} {ds.name} l={l} q={q} s={s}")
    nan = (np.nan, np.nan)
    out = [{"figure": figure, "data": ds.name, "l": l, "q": q, "s": s, "method": r.method,
            "mse": mse.get(r.method, nan)[0], "mse_count": mse.get(r.method, nan)[1],
            "ok": r.ok, "error": r.error or "", "publish_seconds": round(r.seconds, 3)}
           for r in rels]
    return out + [{"figure": figure, "data": ds.name, "l": l, "q": q, "s": s,
                   "method": REFERENCE, "mse": mse[REFERENCE][0],
                   "mse_count": mse[REFERENCE][1], "ok": True, "error": "",
                   "publish_seconds": 0.0}]


# ------------------------------------------------------------- experiments
def run(out, scale, progress, page):
    c = SCALES[scale]
    rows = []
    for kind in ("OCC", "SAL"):
        cache = {}
        for d in c["ds"]:
            ds = ipums(kind, d, c["rows"])
            for q in range(1, d):                                       # Fig. 1
                rows += _grid_rows(ds, L_DEFAULT, q, S_DEFAULT, c["queries"], "f1", "Fig. 1",
                                   progress, cache)
            if d == (5 if 5 in c["ds"] else c["ds"][0]):      # Figs. 2-3 use OCC-5, SAL-5
                qq = min(Q_DEFAULT, d - 1)
                for l in (5, 10, 15):                                   # Fig. 2
                    rows += _grid_rows(ds, l, qq, S_DEFAULT, c["queries"], "f1", "Fig. 2",
                                       progress, cache)
                for s in (0.04, 0.06, 0.08, 0.1):                       # Fig. 3
                    rows += _grid_rows(ds, L_DEFAULT, qq, s, c["queries"], "f1", "Fig. 3",
                                       progress, cache)
            cache.clear()
    grid = pd.DataFrame(rows)
    grid.to_csv(out / "grid.csv", index=False)
    adult_rows = fig4(out, c, progress)
    fig5_tab = fig5(out, c)
    progress.step("Fig. 5")
    F.p004_figures(out, grid, adult_rows, fig5_tab, METHODS)
    page.files += ["grid.csv", "adult.csv", "fig5_relationship_gender.csv",
                   "fig1_mse_vs_q.png", "fig2_mse_vs_l.png", "fig3_mse_vs_s.png",
                   "fig4_adult.png", "fig5_relationship_gender.png"]
    from .p004_page import write_page
    write_page(page, grid, adult_rows, fig5_tab, scale, c)


def fig4(out, c, progress) -> pd.DataFrame:
    rows = []
    for i in c["adult_sets"]:
        ds = adult(i, c["adult_rows"])
        for l in c["adult_ls"]:
            rels = [Release(m, ds, l, f"f4-{i}-l{l}") for m in METHODS]
            mse = evaluate(ds, rels, Q_DEFAULT, S_DEFAULT, c["queries"], seed=100 * i + l)
            for r in rels:
                m = mse.get(r.method, (np.nan, np.nan))
                rows.append({"data": ds.name, "sensitive": ds.sensitive, "d_S": ds.d_s,
                             "eligible_l": B.eligible_l(ds.scodes, ds.d_s), "l": l,
                             "method": r.method, "ok": r.ok, "mse": m[0], "mse_count": m[1],
                             "publish_seconds": round(r.seconds, 3), "error": r.error or ""})
            rows.append(dict(rows[-1], method=REFERENCE, ok=True, mse=mse[REFERENCE][0],
                             mse_count=mse[REFERENCE][1], publish_seconds=0.0, error=""))
            progress.step(f"Fig. 4 {ds.name} l={l}")
    tab = pd.DataFrame(rows)
    tab.to_csv(out / "adult.csv", index=False)
    return tab


def fig5(out, c) -> pd.DataFrame:
    """Adult(8): relationship (sensitive) by gender, l = 2."""
    ds = adult(8, c["adult_rows"])
    g = ds.qids.index("sex")
    rels = [Release(m, ds, 2, "f5") for m in METHODS]
    recs = []
    for gi, gender in enumerate(ds.domains["sex"]):
        for vi, value in enumerate(ds.domains["relationship"]):
            members = tuple(np.arange(len(ds.domains["sex"])) == gi for _ in [0])
            qu = Q.CountQuery((g,), members, np.arange(ds.d_s) == vi)
            rows = Q.match_rows(ds.qcodes, qu)
            rec = {"sex": gender, "relationship": value,
                   "Original": float(np.count_nonzero(ds.scodes[rows] == vi))}
            for r in rels:
                rec[r.method] = float(r.answer(qu, rows).sum()) if r.ok else np.nan
            recs.append(rec)
    tab = pd.DataFrame(recs)
    tab.to_csv(out / "fig5_relationship_gender.csv", index=False)
    return tab
