"""Paper 000, Fig. 7: why our reconstruction of Adult's age x occupation
(l = 5) is not "almost perfect".  Measurements, per seed of the publication:

* ``em_iterations``: L1/N of the paper's EM (eq. 26-27) stopped after a
  fixed number of iterations, and with ``anonset.reconstruct``'s default
  stopping rule -- what the stopping rule is worth;
* ``exact_em``: anonset's exact-likelihood EM (default stopping rule);
* ``linear``: the unbiased linear estimator (delta^-1 applied to w; eq.
  19-21 inverted attribute by attribute) and the same clipped at 0 and
  rescaled to N -- the noise any unbiased use of these sets carries;
* ``scale``: the same table tiled k times (the same distribution, N = k x
  45,223): L1/N falls like 1/sqrt(N) if the gap is sampling noise of the
  randomization, and the fitted curve says which N an L1/N of 0.05 (a
  heat map indistinguishable by eye from the original) would need.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["measure_gap", "linear_estimate", "needed_n", "ITERATIONS"]

ATTRS = ("age", "occupation")
ITERATIONS = (1, 3, 10, 30, 100, 300, 1000)


def linear_estimate(pub, attrs, w) -> np.ndarray:
    """(x)_j M_j^-1 applied to w: the unbiased estimate in records (can be
    negative); M_j holds a_j on its diagonal and b_j off it (eq. 19)."""
    x = np.asarray(w, dtype=np.float64)
    for j, a in enumerate(attrs):
        par = pub.params[a]
        d = pub.schema[a].d
        A, B = par.inclusion, par.other_inclusion
        M = np.full((d, d), B) + np.eye(d) * (A - B)      # E[w] = (x) M_j applied
        x = np.moveaxis(np.tensordot(np.linalg.inv(M), x, axes=([1], [j])), 0, j)
    return x


def _l1n(truth, est) -> float:
    return float(np.abs(np.asarray(est) - truth).sum() / truth.sum())


def measure_gap(c, publish, adult) -> pd.DataFrame:
    import anonset
    df, schema, _ = adult(c["adult_rows"])
    sub = anonset.Schema(tuple(schema[a] for a in ATTRS))
    base = df[list(ATTRS)]
    rows = []
    for k in c["gap_scale"]:
        table = pd.concat([base] * k, ignore_index=True) if k > 1 else base
        truth = anonset.true_crosstab(table, sub, list(ATTRS)).counts
        seeds = c["gap_seeds"] if k == 1 else max(1, c["gap_seeds"] // 3)
        for s in range(seeds):
            pub, _ = publish(table, sub, anonset.Diversity(5), f"gap-{k}-{s}")
            w = anonset.count_w(pub, list(ATTRS))
            rec = {"tiling": k, "N": len(table), "seed": s}
            default = anonset.reconstruct(pub, list(ATTRS), "em", w=w)
            rows.append(dict(rec, estimator="em (default stopping)",
                             iterations=default.info["iterations"],
                             converged=default.info["converged"],
                             L1_over_N=_l1n(truth, default.counts)))
            if k == 1:
                for it in ITERATIONS:
                    e = anonset.reconstruct(pub, list(ATTRS), "em", w=w, max_iter=it, tol=0.0)
                    rows.append(dict(rec, estimator="em (fixed iterations)", iterations=it,
                                     converged=False, L1_over_N=_l1n(truth, e.counts)))
                ex = anonset.reconstruct(pub, list(ATTRS), "exact_em")
                rows.append(dict(rec, estimator="exact_em (default stopping)",
                                 iterations=ex.info["iterations"],
                                 converged=ex.info["converged"],
                                 L1_over_N=_l1n(truth, ex.counts)))
            lin = linear_estimate(pub, list(ATTRS), w)
            clip = np.clip(lin, 0, None)
            clip *= len(table) / clip.sum()
            rows.append(dict(rec, estimator="linear (unbiased)", iterations=0, converged=True,
                             L1_over_N=_l1n(truth, lin)))
            rows.append(dict(rec, estimator="linear, clipped", iterations=0, converged=True,
                             L1_over_N=_l1n(truth, clip)))
            del pub
    return pd.DataFrame(rows)


def needed_n(gap: pd.DataFrame, target: float, estimator: str = "em (default stopping)"):
    """N at which the fitted L1/N = a N^b reaches ``target`` (None without
    two tilings), and the fitted exponent b."""
    sub = gap[gap.estimator == estimator].groupby("N")["L1_over_N"].mean()
    if len(sub) < 2:
        return None, None
    b, log_a = np.polyfit(np.log(sub.index.to_numpy(float)), np.log(sub.to_numpy()), 1)
    return float(np.exp((np.log(target) - log_a) / b)), float(b)
