"""Paper 000 (Sei et al., IEEE TDSC: sensitive QIDs, (l_1..l_q)-diversity and
(t_1..t_q)-closeness), Sec. VI: Figs. 1-7, with the Rating baseline.

Data
----
* Adult: the 45,223 complete records, age in 10-year bins + 9 categorical
  attributes, all sensitive QIDs, declared domains (``adult_schema``).
* Census-shaped: ``anonset.synthetic.census_like_codes`` -- 2,458,285 x 68,
  domains 2..18, a latent class model; a **stand-in** for the US Census 1990
  file, which is not shipped.

Set-up (as the paper): l_j = l with l_j = d_j - 1 where d_j <= l (clip_l);
t_j = t; each setting averages over random attribute subsets S' of size q'
(one fixed stream: every method sees the same subsets and the same published
table).  Methods: the paper's EM (eq. 26-27, "Proposed"), anonset's exact
EM, ValueAdding (eq. 18), Rating (diversity only, as in the paper;
:func:`anonset.partition.baselines.rating`) and Random.  Every EM runs with
``anonset.reconstruct``'s default stopping rule; the exact EM is skipped
where its operations per iteration times its iteration cap exceed a budget
(NaN in the CSV).

Fig. 7's gap (the paper: "almost perfectly"; ours: L1/N about 0.2, the
range over publications on the results page) is measured in :mod:`.p000_gap`.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd

from .. import metrics

TITLE = "(l_1..l_q)-diversity and (t_1..t_q)-closeness for sensitive QIDs, Figs. 1-7"
METHODS = ("em", "exact_em", "value_adding", "rating", "random")
LABELS = {"em": "Proposed (EM, eq. 26)", "exact_em": "exact EM (anonset)",
          "value_adding": "ValueAdding", "rating": "Rating", "random": "Random"}
COLORS = {"em": "tab:blue", "exact_em": "tab:green", "value_adding": "tab:orange",
          "rating": "tab:red", "random": "tab:gray"}
METRICS = ("L1", "L2", "Hellinger")
SCALES = {
    "smoke": dict(adult_rows=4_000, census_rows=5_000, subsets=1, ls=(2, 5), ts=(0.3,),
                  exact_budget=1e8, gap_seeds=1, gap_scale=(1,), fig6_qs=(1, 2)),
    "quick": dict(adult_rows=None, census_rows=100_000, subsets=2, ls=(2, 5, 10),
                  ts=(0.1, 0.3, 0.5), exact_budget=2e10, gap_seeds=3, gap_scale=(1, 10),
                  fig6_qs=(1, 2, 3, 4)),
    "full": dict(adult_rows=None, census_rows=None, subsets=10, ls=(2, 4, 6, 8, 10),
                 ts=(0.1, 0.2, 0.3, 0.4, 0.5), exact_budget=5e10, gap_seeds=10,
                 gap_scale=(1, 10, 100), fig6_qs=(1, 2, 3, 4)),
}
#: the settings a reduced run names on its page (:func:`.page.reductions`)
REDUCED = {"adult_rows": "Adult rows", "census_rows": "census stand-in rows",
           "subsets": "random attribute subsets per setting", "ls": "l", "ts": "t",
           "exact_budget": "exact-EM budget (operations)",
           "gap_seeds": "Fig. 7 gap: publications", "gap_scale": "Fig. 7 gap: Adult tilings",
           "fig6_qs": "Fig. 6: q'"}
QS = (1, 4)
SEED = "anonset-reproduce-paper-000-research-seed"
#: The iteration cap of anonset.reconstruct's default stopping rule (for the
#: exact EM's budget: operations per iteration x this).
EM_CAP = 2000


def steps(scale: str) -> int:
    c = SCALES[scale]
    grid = 2 * (len(c["ls"]) + len(c["ts"]))
    return grid + len(c["ls"]) + 2


# ----------------------------------------------------------------- data
def adult(rows=None):
    import anonset
    df = anonset.datasets.load_adult()
    if rows is not None and rows < len(df):
        df = df.sample(n=rows, random_state=0).reset_index(drop=True)
    attrs = list(anonset.datasets.ADULT_QIDS)
    return df[attrs], anonset.datasets.adult_schema(df[attrs]), attrs


def census(rows):
    import anonset
    from ..datasets.synthetic import CENSUS_ROWS, census_like_codes
    codes, d = census_like_codes(rows or CENSUS_ROWS, seed=0)
    df = pd.DataFrame(codes, copy=False)
    schema = anonset.Schema(tuple(anonset.Attribute(k, domain=tuple(range(v)))
                                  for k, v in d.items()))
    return df, schema, list(d)


def publish(df, schema, model, tag):
    """The paper's set-up: l_j = d_j - 1 where d_j <= l (clip_l), which
    publishes two-valued attributes in the clear (l_j = 1), and the paper's
    t, which leaves some attributes nearly in the clear (Adult's age at
    t = 0.3: p = 0.94, eta = 1): named in ``allow_clear``, as anonset
    requires, so that the figures are the paper's.  Returns the release and
    the seconds of the whole :func:`anonset.publish`."""
    pub, secs, _ = publish_timed(df, schema, model, tag)
    return pub, secs


def publish_timed(df, schema, model, tag):
    """:func:`publish`, returning also the seconds spent drawing the sets
    (the randomization, what the paper's Fig. 5 times): the rest of
    :func:`anonset.publish` is anonset's pre-publication checks (the sets
    read in pairs, pass-through columns, rare values), which the paper's
    method does not have.  The draw is timed on its own after the release:
    the same kernel over the release's codes, parameters and streams (its
    cost does not depend on the key)."""
    import anonset
    from ..encode import encode_column
    from ..io.keys import make_key, name_stream_ids
    from ..randomized.publish import sample_sets
    clear = [a.name for a in schema.published if a.role == "sensitive"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # clip_l warnings: l_j = d_j - 1 by design
        t0 = time.perf_counter()
        pub = anonset.publish(df, model, schema, seed=f"{SEED}-{tag}", research_seed=True,
                              clip_l=True, allow_clear=clear)
        secs = time.perf_counter() - t0
    published = pub.schema.published
    codes = {a.name: encode_column(df[a.name].reset_index(drop=True), a) for a in published}
    t = time.perf_counter()
    sample_sets(codes, pub.params, name_stream_ids(list(codes)), make_key(None),
                rng=pub.info["rng"])
    return pub, secs, time.perf_counter() - t


def rating(df, schema, attrs, l, tag):
    """A fresh Rating release over ``attrs`` only (its key is drawn from the
    attributes, their l and the data, so it is not the release over all
    attributes restricted to ``attrs``: H84)."""
    import anonset
    from ..partition.baselines import rating as rating_
    sub = anonset.Schema(tuple(schema[a] for a in attrs))
    t0 = time.perf_counter()
    # the paper's set-up clips l to what each attribute admits, down to l = 1
    # (a bucket of one row: in the clear), which anonset requires naming
    rel = rating_(df[list(attrs)], attributes=list(attrs), l=l, schema=sub, clip_l=True,
                  clip_eligible=True, seed=f"{SEED}-rating-{tag}", research_seed=True,
                  allow_clear=list(attrs))
    return rel, time.perf_counter() - t0


def distinct_set_tuples(pub, attrs) -> int:
    """The number of distinct set tuples over ``attrs`` (what the exact EM
    iterates over).  Where the sets fit in 64 bits together, one sort of the
    packed words (d_j bits per attribute); else
    :class:`~anonset.randomized.reconstruct.PatternCounter` (a sort of rows)."""
    from ..randomized.reconstruct import PatternCounter
    ds = [pub.schema[a].d for a in attrs]
    if sum(ds) > 64:
        pc = PatternCounter([pub.mask(a).shape[1] for a in attrs])
        pc.add_masks([pub.mask(a) for a in attrs])
        return len(pc.result()[1])
    packed = np.zeros(pub.n_rows, dtype=np.uint64)
    shift = 0
    for a, d in zip(attrs, ds):
        packed |= np.asarray(pub.mask(a))[:, 0].astype(np.uint64) << np.uint64(shift)
        shift += d
    packed.sort()
    return int(np.count_nonzero(packed[1:] != packed[:-1])) + (len(packed) > 0)


def exact_cost(pub, attrs):
    """Operations per exact-EM iteration: distinct set tuples x prod(1 + eta)."""
    return distinct_set_tuples(pub, attrs) * math.prod(1 + pub.params[a].eta for a in attrs)


def run_setting(df, schema, pub, attrs, truth, budget, rows, base, l=None):
    """Every method on one attribute subset; appends one row per method."""
    import anonset
    t0 = time.perf_counter()
    w = anonset.count_w(pub, attrs)
    t_w = time.perf_counter() - t0
    for m in METHODS:
        rec = dict(base, method=m, q=len(attrs), attributes="+".join(attrs))
        if m == "rating" and l is None:
            continue                                 # the paper runs Rating for l only
        if m == "exact_em":
            rec["exact_cost"] = cost = exact_cost(pub, attrs)
            if cost * EM_CAP > budget:
                rows.append(dict(rec, L1=np.nan, L2=np.nan, Hellinger=np.nan, seconds=np.nan,
                                 iterations=np.nan, skipped=True))
                continue
        if m == "rating":
            # the release is built outside the timer: Fig. 6 times the
            # reconstruction alone, as for the other methods (H146)
            rel, _ = rating(df, schema, attrs, l, f"{base['data']}-{l}")
        t0 = time.perf_counter()
        if m == "rating":
            est = rel.crosstab(attrs)
            rec["rating_clipped"] = len(rel.info["clipped"])
            # attributes Rating published at a lower l than the Proposed's
            # l_j (clip_l: d_j - 1 where d_j <= l): its wins there are not
            # like for like (H84)
            rec["rating_weaker"] = sum(
                1 for a in attrs
                if rel.info["clipped"].get(a, {}).get("used", l) <
                (l if l < schema[a].d else schema[a].d - 1))
        else:
            kw = {"w": w} if m in ("em", "value_adding") else {}
            est = anonset.reconstruct(pub, attrs, m, seed=0, **kw)
        sec = time.perf_counter() - t0 + (t_w if m in ("em", "value_adding") else 0.0)
        mt = metrics.compare(truth, est)
        rows.append(dict(rec, L1=mt["L1"], L2=mt["L2"], Hellinger=mt["Hellinger"],
                         seconds=sec, iterations=est.info.get("iterations", np.nan),
                         converged=est.info.get("converged", np.nan), skipped=False))


def utility_grid(name, df, schema, attrs_all, kind, values, c, rng, progress):
    import anonset
    rows, anon = [], []
    for v in values:
        model = anonset.Diversity(v) if kind == "l" else anonset.Closeness(v)
        pub, t_pub, t_sets = publish_timed(df, schema, model, f"{name}-{kind}-{v}")
        # seconds: the whole call with its checks; sampler_seconds: drawing
        # the sets alone (the paper's anonymization)
        rec = {"data": name, "model": kind, "value": v, "method": "proposed", "seconds": t_pub,
               "sampler_seconds": t_sets, "rows": len(df),
               "attributes": len(schema.published)}
        anon.append(rec)
        if kind == "l":                 # Rating's anonymization time, all attributes
            _, t_r = rating(df, schema, attrs_all, v, f"{name}-{v}-all")
            anon.append(dict(rec, method="rating", seconds=t_r, sampler_seconds=np.nan))
        for q in QS:
            for s in range(c["subsets"]):
                attrs = [str(a) for a in rng.choice(attrs_all, size=q, replace=False)]
                truth = anonset.true_crosstab(df, schema, attrs)
                run_setting(df, schema, pub, attrs, truth, c["exact_budget"], rows,
                            {"data": name, "model": kind, "value": v, "subset": s},
                            l=v if kind == "l" else None)
        progress.step(f"{name} {kind}={v}")
        del pub
    return rows, anon


def fig6_rows(df, schema, attrs_all, c, rng, progress):
    import anonset
    rows = []
    for l in c["ls"]:
        pub, _ = publish(df, schema, anonset.Diversity(l), f"fig6-{l}")
        for q in c["fig6_qs"]:
            attrs = [str(a) for a in rng.choice(attrs_all, size=q, replace=False)]
            truth = anonset.true_crosstab(df, schema, attrs)
            run_setting(df, schema, pub, attrs, truth, c["exact_budget"], rows,
                        {"data": "census", "model": "l", "value": l, "subset": 0}, l=l)
        progress.step(f"Fig. 6 l={l}")
        del pub
    return pd.DataFrame(rows)


def fig7(c):
    """Adult age x occupation at l = 5: the truth and every method."""
    import anonset
    df, schema, _ = adult(c["adult_rows"])
    attrs = ["age", "occupation"]
    pub, _ = publish(df, schema, anonset.Diversity(5), "fig7")
    truth = anonset.true_crosstab(df, schema, attrs)
    ests = {}
    for m in METHODS:
        if m == "rating":
            ests[m] = rating(df, schema, attrs, 5, "fig7")[0].crosstab(attrs)
        else:
            ests[m] = anonset.reconstruct(pub, attrs, m, seed=0)
    frame = truth.to_frame().rename(columns={"count": "original"})
    for m, e in ests.items():
        frame[m] = e.counts.ravel()
    return truth, ests, frame


# ----------------------------------------------------------------- main
def run(out, scale, progress, page):
    from ..datasets.synthetic import CENSUS_ROWS
    from . import p000_page as P
    from .p000_gap import measure_gap
    c = SCALES[scale]
    rng = np.random.default_rng(2024)
    rows, anon = [], []
    a = adult(c["adult_rows"])
    cen = census(c["census_rows"])
    for name, (df, schema, attrs) in (("adult", a), ("census", cen)):
        for kind, values in (("l", c["ls"]), ("t", c["ts"])):
            r, an = utility_grid(name, df, schema, attrs, kind, values, c, rng, progress)
            rows += r
            anon += an
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "utility.csv", index=False)
    anon_f = pd.DataFrame(anon)
    anon_f.to_csv(out / "anonymization_time.csv", index=False)
    rec = fig6_rows(*cen, c, rng, progress)
    rec.to_csv(out / "reconstruction_time.csv", index=False)
    truth, ests, f7 = fig7(c)
    f7.to_csv(out / "fig7_adult_age_occupation.csv", index=False)
    gap = measure_gap(c, publish, adult)
    gap.to_csv(out / "fig7_gap.csv", index=False)
    progress.step("Fig. 7 and its gap")
    P.figures(out, frame, anon_f, rec, truth, ests, gap)
    progress.step("figures")
    page.files += ["utility.csv", "anonymization_time.csv", "reconstruction_time.csv",
                   "fig7_adult_age_occupation.csv", "fig7_gap.csv",
                   "fig1_adult_diversity.png", "fig2_census_diversity.png",
                   "fig3_adult_closeness.png", "fig4_census_closeness.png",
                   "fig5_anonymization_time.png", "fig6_reconstruction_time.png",
                   "fig7_adult_age_occupation.png", "fig7_gap.png"]
    census_rows = c["census_rows"] or CENSUS_ROWS
    P.write_page(page, frame, anon_f, rec, truth, ests, gap, c, census_rows)
