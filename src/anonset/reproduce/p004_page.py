"""The results page of paper 004: each claim of Sec. 6.3 beside what the
grid measured, with a verdict computed from the numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .p004 import METHODS, REFERENCE

__all__ = ["write_page"]


def _winner_count(tab, keys) -> tuple:
    """Settings (grouped by keys) where Proposal has the lowest MSE."""
    piv = tab.pivot_table(index=keys, columns="method", values="mse").dropna()
    if piv.empty:
        return 0, 0, piv
    best = piv[list(METHODS)].idxmin(axis=1)
    return int((best == "Proposal").sum()), len(piv), piv


def _monotone(piv_col, increasing=True) -> bool:
    v = piv_col.to_numpy()
    d = np.diff(v)
    return bool((d > 0).all() if increasing else (d < 0).all())


def _verdict(hits, total, share=0.75) -> str:
    return "match" if total and hits >= share * total else "differs"


def write_page(page, grid, adult, fig5, scale, c):
    page.intro += [
        "OCC-d and SAL-d are **synthetic stand-ins** with the domain sizes of Table 8 "
        "(`anonset.datasets.ipums_standin`; the IPUMS extracts are not available): values are "
        "not comparable with the paper's, rankings and trends are.  Adult is the real data "
        f"(45,223 complete records).  {c['queries']} random queries per setting "
        f"(the paper: 1,000), {c['rows']:,} rows per stand-in (the paper: about 600,000).",
        "",
        "TP is identified from 004's text as Xiao, Yi & Tao (EDBT 2010) and implemented from "
        "the structure of its (l*d)-approximation (exact groups within QID points, then "
        "suppressed groups): `anonset.partition.baselines.tp`.  The Proposal's EM uses "
        "`anonset.reconstruct`'s default stopping rule (the paper: convergence threshold 1.0).",
        "", "MSE: eq. 11 sums over the sensitive values j of a QID cell; per query we take the "
        "cell of its QID predicate and average the squared error of X_j / N over the values j "
        "of its sensitive predicate (column `mse`, plotted; this reading gives the magnitudes "
        "of the paper's figures, 1e-6..1e-3).  `mse_count` in the CSVs is the squared error of "
        "the whole count as a share of the cell.",
    ]
    f1 = grid[grid.figure == "Fig. 1"]
    hits, total, piv = _winner_count(f1, ["data", "q"])
    lost = [f"{d} q={q}: {piv.loc[(d, q)][list(METHODS)].idxmin()}" for d, q in piv.index
            if piv.loc[(d, q)][list(METHODS)].idxmin() != "Proposal"]
    ref = f1[f1.method == REFERENCE].groupby("data")["mse"].mean()
    prop = f1[f1.method == "Proposal"].groupby("data")["mse"].mean()
    weak = [d for d in ref.index if ref[d] < prop.get(d, np.inf)]
    weak_why = ("on " + ", ".join(weak) + " the table's own S distribution, ignoring the QIDs, "
                "already beats the Proposal (mean MSE " + ", ".join(
                    f"{d} {ref[d]:.2g} vs {prop[d]:.2g}" for d in weak) + "): S depends on the "
                "QIDs too little in these stand-ins (a modelling choice; Table 8 gives only "
                "domain sizes), so estimates pulled toward the table's distribution win.  On "
                "the real Adult (Fig. 4) the Proposal wins") if weak else ""
    page.compare("Fig. 1", "lowest MSE (l = 10, s = 0.07)", "Proposal lowest in most settings",
                 f"Proposal lowest in {hits} of {total} (data, q) settings",
                 "not comparable" if weak else _verdict(hits, total, 0.5),
                 weak_why or ("" if not lost else "others lowest at " + "; ".join(lost[:6])
                                 + (f" and {len(lost) - 6} more" if len(lost) > 6 else "")))
    big = piv[piv.index.get_level_values("q") >= 3] if total else piv
    if len(big):
        ratio = (big["TP"] / big["Proposal"]).to_numpy()
        close = int(((ratio > 0.5) & (ratio < 2)).sum())
        page.compare("Fig. 1", "q >= 3", "TP about as good as Proposal",
                     f"TP / Proposal MSE in {np.min(ratio):.2g}..{np.max(ratio):.2g}; within a "
                     f"factor 2 in {close} of {len(ratio)}",
                     "not comparable" if weak else _verdict(close, len(ratio), 0.5),
                     "stand-ins (see the row above)" if weak else "")
    for name, x, inc, claim in (("Fig. 2", "l", True, "MSE grows with l (5, 10, 15)"),
                                ("Fig. 3", "s", False, "MSE falls as s grows (0.04..0.1)")):
        sub = grid[(grid.figure == name) & grid.method.isin(METHODS)]
        piv2 = sub.pivot_table(index=["data", "method"], columns=x, values="mse").dropna()
        mono = [idx for idx in piv2.index if _monotone(piv2.loc[idx], inc)]
        bad = [f"{d} {m}" for d, m in piv2.index if (d, m) not in mono]
        page.compare(name, claim, claim, f"monotone for {len(mono)} of {len(piv2)} "
                     "(data, method) curves", _verdict(len(mono), len(piv2)),
                     ("not monotone: " + "; ".join(bad)) if bad else "")
        hits2, total2, _ = _winner_count(sub, ["data", x])
        page.compare(name, "lowest MSE", "Proposal lowest",
                     f"Proposal lowest in {hits2} of {total2} settings",
                     "not comparable" if weak else _verdict(hits2, total2, 0.5),
                     "stand-ins whose S depends little on the QIDs (Fig. 1 row)" if weak else "")
    # Fig. 4
    ref_adult = adult[adult.method == REFERENCE]
    adult = adult[adult.method.isin(METHODS)]
    okr = adult.groupby("method")["ok"].mean().reindex(list(METHODS))
    elig = adult[adult.method != "Proposal"]
    agree = int(((elig["eligible_l"] >= elig["l"]) == elig["ok"]).sum())
    prop = adult[adult.method == "Proposal"]
    prop_ok = int(((prop["d_S"] >= prop["l"]) == prop["ok"]).sum())
    page.compare("Fig. 4(a)", "ratio of successful anonymization",
                 "Proposal publishes whenever l <= |S|; Mondrian, TP, Anatomy only when the "
                 "eligibility requirement holds",
                 ", ".join(f"{m} {okr[m]:.0%}" for m in METHODS)
                 + f"; success = (l <= |S|) in {prop_ok}/{len(prop)} Proposal runs, = "
                 f"eligibility in {agree}/{len(elig)} baseline runs",
                 "match" if okr["Proposal"] >= okr.drop("Proposal").max()
                 and prop_ok == len(prop) and agree == len(elig) else "differs")
    hits4, total4, piv4 = _winner_count(adult, ["data", "l"])
    avg = piv4.mean() if total4 else pd.Series(dtype=float)
    ref4 = ref_adult.set_index(["data", "l"])["mse"].reindex(piv4.index).mean() \
        if total4 else np.nan
    sets = sorted({int(str(d).strip("Adult()")) for d in adult["data"].unique()})
    missing = [i for i in range(1, 16) if i not in sets]
    over = "Adult(1..15)" if not missing else "Adult(1..15) without " + ", ".join(
        f"Adult({i})" for i in missing)
    page.compare("Fig. 4(b)", f"average MSE over {over}", "Proposal smallest",
                 "; ".join(f"{m} {avg.get(m, np.nan):.3g}" for m in METHODS)
                 + f" (over the {total4} settings all four publish; Proposal lowest in "
                 f"{hits4}; the table's S distribution, ignoring the QIDs: {ref4:.3g})",
                 "match" if total4 and avg.idxmin() == "Proposal" else "differs")
    # Fig. 5
    l1 = {}
    for m in METHODS:
        share = []
        for col in ("Original", m):
            t = fig5.pivot_table(index="sex", columns="relationship", values=col)
            share.append(t.div(t.sum(axis=1), axis=0).to_numpy())
        l1[m] = float(np.abs(share[0] - share[1]).sum()) if np.isfinite(share[1]).all() \
            else np.nan
    best = min((v, m) for m, v in l1.items() if np.isfinite(v))[1]
    page.compare("Fig. 5", "relationship x gender, Adult(8), l = 2",
                 "Proposal reconstructs the original distribution most closely",
                 "L1 of the shares within gender to the original: "
                 + ", ".join(f"{m} {v:.3f}" for m, v in l1.items()),
                 "match" if best == "Proposal" else "differs",
                 "" if best == "Proposal" else f"{best} is closest")
    t_adult = prop[prop.ok]["publish_seconds"].mean()
    page.compare("Sec. 6.3", "anonymization time, Adult", "about 3.7 s on average",
                 f"{t_adult:.2f} s on average (Proposal, sensitive attribute only)",
                 "not comparable", "different machine and implementation; ours is the C "
                 "sampler of anonset.publish")
    page.table("Fig. 1-3: MSE by setting", grid.pivot_table(
        index=["figure", "data", "l", "q", "s"], columns="method", values="mse")
        .reindex(columns=list(METHODS) + [REFERENCE]).reset_index(), ".3g",
        intro=f"'{REFERENCE}': every cell answered with the table's distribution of S, a "
              "reference for how much S depends on the QIDs, not a method.")
    page.table("Fig. 4: Adult(i) by l", pd.concat([adult, ref_adult]).pivot_table(
        index=["data", "sensitive", "d_S", "eligible_l", "l"], columns="method", values="mse")
        .reindex(columns=list(METHODS) + [REFERENCE]).reset_index(), ".3g",
        intro="MSE per (Adult(i), l); '-' where the method could not publish.")
