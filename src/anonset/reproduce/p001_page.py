"""Paper 001: figures (layout of Figs. 8-15) and the results page."""
from __future__ import annotations

import numpy as np

from ..randomized import semantic as S
from .figures import plt
from .p001 import FIGURE, PANELS

__all__ = ["figures", "write_page"]

HIST_METHODS = ("Original", "N-Proposal", "N-Existing", "N-Simple", "Ex-Proposal",
                "Ex-Existing", "Ex-Simple", "LE")
HIST_FIG = {"income": 8, "income_index": 8, "education": 9, "fnlwgt": 10}


def figures(out, tabs, hist, viol):
    P = plt()
    for name, df in tabs.items():
        fig, axes = P.subplots(1, 4, figsize=(18, 4))
        for ax, (panel, var, fixed, _) in zip(axes, PANELS[name]):
            sub = df[(df.panel == panel) & df.feasible]
            for col in [c for c in df.columns if ("-" in c and not c.endswith("-q"))
                        or c == "LE"]:
                if col in sub and sub[col].notna().any():
                    ax.plot(sub[var], sub[col], marker="o", label=col,
                            linestyle="--" if col.startswith("Ex") else "-")
            ax.set_yscale("log")
            ax.set_xlabel(var)
            ax.set_title(f"({panel}) {'l' if var == 'd' else 'd'} = {fixed}")
            ax.set_ylabel("MSE (eq. 18)")
        axes[-1].legend(fontsize=7, loc="best")
        fig.suptitle(f"Fig. {FIGURE[name]}: MSE, {name} data set (QIDs age x sex)")
        fig.tight_layout()
        fig.savefig(out / f"mse_{name}.png", dpi=90)
        P.close(fig)
    for key, (name, l, d, h) in hist.items():
        names = [m for m in HIST_METHODS if m in h]
        fig, axes = P.subplots(1, len(names), figsize=(2.6 * len(names), 4.2), sharey=True)
        vmax = h["Original"].max()
        for ax, m in zip(axes, names):
            ax.imshow(np.clip(h[m].T, 0, None), aspect="auto", cmap="viridis", vmin=0,
                      vmax=vmax, origin="lower")
            l1 = np.abs(h[m] - h["Original"]).sum() / h["Original"].sum()
            ax.set_title(f"{m}\nL1/N = {l1:.3f}", fontsize=8)
            ax.set_xlabel("age x sex cell")
        axes[0].set_ylabel("sensitive value")
        fig.suptitle(f"Fig. {HIST_FIG[key]}: histograms, {name}, ({l}, {d})-semantic "
                     "diversity (x: age decade x sex, y: value, colour: frequency)")
        fig.tight_layout()
        fig.savefig(out / f"fig{HIST_FIG[key]}_histogram_{key}.png", dpi=90)
        P.close(fig)
    fig, axes = P.subplots(1, 2, figsize=(11, 4))
    for ax, (fig_, var) in zip(axes, (("14", "l"), ("15", "d"))):
        for F in (10, 14, 20):
            sub = viol[(viol.figure == fig_) & (viol.F == F)]
            p = ax.plot(sub[var], sub["simulation"], marker="o", label=f"simulation F={F}")
            ax.plot(sub[var], sub["eq11_bound"], linestyle="--", color=p[0].get_color(),
                    label=f"eq. 11 F={F}")
        ax.set_xlabel(var)
        ax.set_ylabel("violation rate per record")
        ax.set_title(f"Fig. {fig_}: {'d' if var == 'l' else 'l'} = 3")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "violation.png", dpi=90)
    P.close(fig)


def _l1(hist, m):
    h = hist
    return float(np.abs(h[m] - h["Original"]).sum() / h["Original"].sum())


def _best(h, candidates):
    have = [m for m in candidates if m in h]
    return min(have, key=lambda m: _l1(h, m)) if have else None


def write_page(page, tabs, hist, viol, t10, bias, sets, c):
    page.intro += [
        "Data (Table 11): the synthetic income set (100,000 records, 14 classes; "
        "`anonset.datasets.semantic.income`, a stand-in shaped after the survey the paper "
        "cites), Adult education (16 values) and Adult fnlwgt (148 classes); QIDs age (decade) "
        f"and sex.  {c['seeds']} publications per MSE point.  Education is run under the "
        "paper's Fig. 7 tree (`anonset.datasets.education_fig7`, reconstructed from Sec. 6.3's "
        "text) and, as `education_arx`, under the ARX hierarchy shipped with Adult."]
    diff = float(np.abs(t10 - S.TABLE_10).max())
    page.compare("Table 10", "Alg. 2 on Table 9 (l = 2, d = 2)", "Table 10",
                 f"max abs difference {diff:.3f} (rounding of the paper's table)",
                 "match" if diff <= 0.051 else "differs")
    # Fig. 8: income (3, 7)
    ds_i = sets["income"]
    feas_idx = S.feasible_values(ds_i.distance, 3, 7)
    feas_val = S.feasible_values(sets["income_values"].distance, 3, 7)
    page.compare("Fig. 8", "income, (3, 7)-semantic diversity", "histograms at (3, 7)",
                 f"under |i - j| feasible for {int(feas_idx.sum())} of 14 classes; under the "
                 f"million-yen distance (Example 2) for {int(feas_val.sum())} of 14",
                 "not comparable", "three values pairwise >= 7 apart need a span of 14 "
                 "positions, the 14 classes have 13: under |i - j| no record can be published; "
                 "shown instead at (3, 7) with the million-yen distance (simple sampler only: "
                 "Alg. 3 needs equally spaced values) and at (3, 4) with |i - j|")
    for key, claim_fig in (("income", "Fig. 8"), ("income_index", "Fig. 8"),
                           ("education", "Fig. 9"), ("fnlwgt", "Fig. 10")):
        name, l, d, h = hist[key]
        props = [m for m in ("N-Proposal", "Ex-Proposal") if m in h]
        others = [m for m in ("N-Existing", "N-Simple", "Ex-Existing", "Ex-Simple", "LE")
                  if m in h]
        best = _best(h, props + others)
        page.compare(claim_fig, f"{name} ({l}, {d})", "Proposal's histogram the most similar "
                     "to the original", ", ".join(f"{m} {_l1(h, m):.3f}" for m in props + others)
                     + " (L1/N)", "match" if best in props else "differs",
                     "" if best in props else f"{best} is closest")
    _mse_rows(page, tabs)
    _violation_rows(page, viol)
    _tree_row(page, sets, tabs)
    _l2_section(page, tabs, sets)
    for name, df in tabs.items():
        cols = [x for x in df.columns if x not in ("Ex-q", "N-q")]
        page.table(f"MSE, {name} (Fig. {FIGURE[name]})", df[cols], ".3g")
    page.table("Bias over the seeds (income, N = 100,000, all records as one cell)", bias, ".3g")


#: "almost the same" (Figs. 14-15): the largest gap in violation rate
#: between the simulation and eq. 11 that the page calls close
CLOSE = 0.05


def _violation_rows(page, viol):
    """Figs. 14-15's two claims, each tested: eq. 11 a lower bound of the
    simulation, and the two almost the same (within :data:`CLOSE`)."""
    gap = viol["simulation"] - viol["eq11_bound"]
    ok = bool((gap >= -0.01).all())
    page.compare("Figs. 14-15", "violation rate of paper 000's sampler: eq. 11 a lower bound",
                 "eq. 11 keeps the lower boundary of the simulation",
                 f"eq. 11 <= simulation + 0.01 at {int((gap >= -0.01).sum())} of {len(viol)} "
                 "points", "match" if ok else "differs",
                 "" if ok else "the simulation falls below eq. 11; reason not measured")
    w = gap.abs().idxmax()
    far = int((gap.abs() > CLOSE).sum())
    why = ""
    if far:
        why = f"the simulation is more than {CLOSE} from eq. 11 at {far} points"
        if "exact_uniform" in viol:
            dev = float((viol["simulation"] - viol["exact_uniform"]).abs().max())
            why += (f"; it lies within {dev:.3f} of the exact rate averaged over the F "
                    "values (exact_uniform), which eq. 11 (the rate at the smallest value) is "
                    "below" if dev <= CLOSE else
                    f"; it is up to {dev:.3f} from the exact rate averaged over the values "
                    "too: reason not measured")
    page.compare("Figs. 14-15", "violation rate of paper 000's sampler: simulation close "
                 "to eq. 11", "the mathematical and simulation results almost the same",
                 f"largest gap {gap.abs().max():.3f} (F = {viol.F[w]}, l = {viol.l[w]}, d = "
                 f"{viol.d[w]}: eq. 11 {viol.eq11_bound[w]:.3f}, simulation "
                 f"{viol.simulation[w]:.3f}); tolerance {CLOSE}",
                 "differs" if far else "match", why)


def _mse_rows(page, tabs):
    inc = tabs["income"][tabs["income"].feasible]
    if "N-Proposal" in inc:
        # the panels share some (l, d) points: each counted once (H89)
        rows = inc.dropna(subset=["N-Proposal"]).drop_duplicates(subset=["l", "d"])
        est = [c for c in ("N-Existing", "N-Simple", "Ex-Existing", "Ex-Simple") if c in rows]
        def below(col):          # at most every rival (d = 1: the linear estimators coincide)
            return (rows[col].to_numpy()[:, None] <= rows[est].to_numpy() * (1 + 1e-9)).all(1)
        beat, exact = below("N-Proposal"), below("N-Exact")
        wins = int(beat.sum())
        lost = ", ".join(f"(l={int(r.l)}, d={int(r.d)})" for r, b in zip(rows.itertuples(), beat)
                         if not b)
        page.compare("Fig. 11", "income: N-Proposal", "smallest MSE in all cases",
                     f"at most every Existing and Simple estimator in {wins} of {len(rows)} "
                     "distinct (l, d) points", "match" if wins == len(rows) else "differs",
                     "" if wins == len(rows) else f"not at {lost}: eq. 2's probabilities "
                     "depart from the duplicate sampler's law (l = 2: see below); N-Exact, "
                     "with the sampler's exact law, is at most every rival in "
                     f"{int(exact.sum())} of {len(rows)}")
        l2 = rows[(rows.l == 2) & (rows.d >= 3)]
        worse = int((l2["N-Proposal"] > l2["Ex-Proposal"]).sum())
        page.compare("Fig. 11", "income, l = 2: N-Proposal vs Ex-Proposal",
                     "N-Proposal at most Ex-Proposal", f"N-Proposal larger at {worse} of "
                     f"{len(l2)} points with d >= 3", "match" if worse == 0 else "differs",
                     "duplicate processing changes the law of the single dummy near the ends "
                     "of the range while eq. 2 keeps the simple law: see 'l = 2' below")
        big = rows[((rows.l >= 4) | (rows.d >= 4)) & (rows.l >= 3)]
        grow = int((big["Ex-Proposal"] > big["N-Proposal"]).sum())
        page.compare("Fig. 11", "income: Ex-Proposal at large l or d (l >= 3)",
                     "worse than N-Proposal as l or d grows", f"worse at {grow} of {len(big)} "
                     "points with l >= 3 and (l >= 4 or d >= 4)", "match" if grow >= 0.75 *
                     len(big) else "differs")
        if "N-Anonymity" in rows:
            a = rows.dropna(subset=["N-Anonymity"])
            ratio = (a["N-Anonymity"] / a["N-Proposal"]).to_numpy()
            page.compare("Fig. 11(a)", "income: N-Anonymity (no analysis)", "far worse",
                         f"N-Anonymity / N-Proposal MSE {ratio.min():.2g}..{ratio.max():.2g} "
                         f"over {len(a)} points", "match" if (ratio > 1).all() else "differs")
    for name in ("education", "education_arx"):
        ed = tabs[name][tabs[name].feasible]
        b = ed[ed.panel == "b"].sort_values("l")
        mono = bool((np.diff(b["Ex-Proposal"].to_numpy()) > 0).all()) if len(b) > 1 else False
        page.compare("Fig. 12", f"{name}: Ex-Proposal against l (d = 2)", "grows with l",
                     " -> ".join(f"{v:.2g}" for v in b["Ex-Proposal"]),
                     "match" if mono else "differs")
        if "LE" in b:
            le = b.dropna(subset=["LE"])
            no_le = [int(v) for v in b[b["LE"].isna()].l]
            above = int((le["Ex-Proposal"] > le["LE"]).sum())
            page.compare("Fig. 12(b)", f"{name}: Ex-Proposal vs LE", "Ex-Proposal larger than "
                         "LE (at some l)", f"larger at {above} of {len(le)} l where LE publishes"
                         + (f"; LE cannot publish at l = {no_le}" if no_le else ""),
                         "match" if above >= 1 else "differs",
                         "" if above >= 1 else "where LE publishes, Ex-Proposal is lower"
                         + (f"; at l = {no_le} the classes of values at distance < 2 are not "
                            "l-eligible in Adult (e.g. the high-school grades hold over a "
                            "third of the records), so Anatomy has no (l, e)-diverse groups"
                            if no_le else ""))
    fn = tabs["fnlwgt"][tabs["fnlwgt"].feasible]
    better = int((fn["Ex-Proposal"] < fn[["Ex-Existing", "Ex-Simple"]].min(axis=1)).sum())
    page.compare("Fig. 13", "fnlwgt: Proposal vs Existing and Simple", "Proposal lower",
                 f"Ex-Proposal lower at {better} of {len(fn)} points",
                 "match" if better >= 0.75 * len(fn) else "differs",
                 "" if better >= 0.75 * len(fn) else "eq. 2's probabilities depart from the "
                 "simple sampler's at larger l and d (Ex-Exact removes the gap)")


def _tree_row(page, sets, tabs):
    paper, arx = sets["education"], sets["education_arx"]
    i = {v: k for k, v in enumerate(paper.domain)}
    j = {v: k for k, v in enumerate(arx.domain)}
    near_p = sorted(v for v in paper.domain if paper.distance.matrix[i["Doctorate"], i[v]] == 2)
    near_a = sorted(v for v in arx.domain if arx.distance.matrix[j["Doctorate"], j[v]] == 2)
    same = sum(paper.distance.matrix[i[a], i[b]] == arx.distance.matrix[j[a], j[b]]
               for a in paper.domain for b in paper.domain if a < b)
    page.compare("Fig. 7", "education tree", "depth 4; Doctorate's distance-2 values: "
                 "Prof-school, Bachelors", f"shipped (ARX, depth 3): {', '.join(near_a)}; "
                 f"Fig. 7 as reconstructed (depth 4): {', '.join(near_p)}; the two trees give "
                 f"the same distance for {same} of 120 pairs", "differs",
                 "the shipped hierarchy is ARX's, not the paper's: anonset now ships the "
                 "paper's tree too (anonset.datasets.education_fig7) and both are run here")


def _l2_section(page, tabs, sets):
    ds = sets["income"]
    lines = ["Why N-Proposal is worse than Ex-Proposal at l = 2 in Fig. 11(a) (against the "
             "paper's claim).  At l = 2 each report has one dummy.  The simple sampler draws "
             "it uniformly among the values at distance >= d, which is exactly eq. 2's "
             "probability; the duplicate-processing sampler (Alg. 3) excludes a window of "
             "2(d - 1) + 1 positions on the circle of the F values, so for a true value "
             "within d - 1 of either end it also excludes positions at the other end, and "
             "its dummy law departs from eq. 2.  -Proposal uses eq. 2, so N-Proposal is "
             "biased; -Exact (the sampler's own law) is not:", "",
             "| d | max abs(q_eq2 - q_simple) | max abs(q_eq2 - q_duplicate) | records whose "
             "value is within d - 1 of an end | N-Exact MSE | Ex-Exact MSE |",
             "|---|---|---|---|---|---|"]
    inc = tabs["income"]
    for d in (2, 3, 4, 5, 6):
        qp = S.paper_selection_matrix(ds.distance, 2, d)
        qs, _ = S.selection_matrix(ds.distance, 2, d, algorithm="simple")
        qd, _ = S.selection_matrix(ds.distance, 2, d, algorithm="duplicate")
        near = float(np.mean((ds.codes < d - 1) | (ds.codes > 14 - d)))
        r = inc[(inc.panel == "a") & (inc.d == d)]
        ne = r["N-Exact"].iloc[0] if len(r) and "N-Exact" in r else np.nan
        ee = r["Ex-Exact"].iloc[0] if len(r) and "Ex-Exact" in r else np.nan
        lines.append(f"| {d} | {np.abs(qp - qs).max():.3f} | {np.abs(qp - qd).max():.3f} | "
                     f"{near:.1%} | {ne:.3g} | {ee:.3g} |")
    lines += ["", "So at l = 2 the duplicate processing buys nothing (there is no second "
              "dummy to de-duplicate) and costs the match with eq. 2; the paper's claim holds "
              "from l = 3 on, where the simple sampler's later dummies depart from eq. 2."]
    page.text("l = 2: duplicate processing against the simple algorithm", *lines)
