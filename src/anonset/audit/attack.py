"""The attack simulation: a Bayesian adversary who knows some attributes of
a victim and the published parameters (paper 000 Sec. V-C3 and VII-A),
measured against the promises 1/l_j and t_j."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..emd import emd_batch
from ..randomized.closeness_search import u_of_p
from ..randomized.params import ground_object
from ..randomized.settable import SetTable
from .checks import _codes_of, _ground_name, membership

__all__ = ["AttackResult", "attack"]


@dataclass
class AttackResult:
    """Outcome of :func:`attack`.

    Attributes
    ----------
    summary : DataFrame
        One row per target attribute: promise 1/l and t, victims, the
        adversary's top-1 confidence (mean, quantiles, max), share of victims
        with confidence above 1/l, accuracy (share of correct top-1 guesses),
        the prior-only baseline, and EMD(prior, posterior) (mean, max).
    victims : DataFrame
        One row per (victim, target attribute): row, attribute, confidence,
        guess, truth, correct, prior_confidence, emd.
    settings : dict
    """

    summary: pd.DataFrame
    victims: pd.DataFrame
    settings: dict = field(default_factory=dict)

    def plot(self, path=None, ax=None):
        """Box plot of the confidence per attribute with the 1/l promise
        (needs matplotlib; imported here only).  Returns the figure."""
        import matplotlib.pyplot as plt
        if ax is None:
            fig, ax = plt.subplots(figsize=(1.0 + 0.8 * max(len(self.summary), 1), 4))
        else:
            fig = ax.figure
        names = list(self.summary["attribute"])
        data = [self.victims.loc[self.victims["attribute"] == n, "confidence"].to_numpy()
                for n in names]
        ax.boxplot(data, whis=(1, 99), showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=45, ha="right")
        for i, n in enumerate(names):
            row = self.summary.iloc[i]
            ax.hlines(row["promise_1_over_l"], i + 0.6, i + 1.4, colors="red", linestyles="--")
            ax.plot(i + 1, row["accuracy"], "k^")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("adversary's top-1 confidence")
        ax.set_title(f"Bayes adversary, known = {self.settings.get('known')}, prior = "
                     f"{self.settings.get('prior')} ({self.settings.get('prior_source')}); "
                     "red: 1/l, triangle: accuracy", fontsize=8)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig


def _conditional_priors(codes, K: tuple, j: str, d: int, victims: np.ndarray,
                        marginal: np.ndarray, cache: dict) -> np.ndarray:
    """Leave-one-out P(S_j | known values) from the original data: the
    distribution of S_j among the OTHER records sharing the victim's known
    values (paper 000 Sec. VII-A's adversary who knows every other record).
    Groups with no other record fall back to the marginal."""
    if K not in cache:
        dims = [int(codes[k].max()) + 1 for k in K]
        key = np.ravel_multi_index([codes[k].astype(np.int64) for k in K], dims)
        uk, g = np.unique(key, return_inverse=True)
        cache[K] = (uk.size, np.asarray(g).ravel())
    nk, g = cache[K]
    C = np.bincount(g * d + codes[j], minlength=nk * d).reshape(nk, d).astype(np.float64)
    P = C[g[victims]]
    P[np.arange(victims.size), codes[j][victims]] -= 1.0       # leave the victim out
    s = P.sum(axis=1)
    empty = s <= 0
    P[empty] = marginal
    s[empty] = 1.0
    return P / s[:, None]


def attack(table: SetTable, original=None, *, known=1, n_targets: int | None = 10_000,
           prior: str = "marginal", prior_source: str = "auto", seed=None,
           schema=None) -> AttackResult:
    """Simulate a Bayesian adversary against a published table.

    The adversary has linked a victim to its published row, knows ``known``
    of the victim's sensitive attributes exactly and the published (p_j,
    eta_j), and for every other sensitive attribute S_j computes the
    posterior ``P(v | R_ij) ∝ prior(v) * (kappa_c if v in R_ij else kappa_d)``
    (paper 000 Sec. V-C3).  Its top-1 guess is the posterior mode; its
    confidence the posterior maximum.

    Parameters
    ----------
    original : DataFrame, optional
        Needed for accuracy (the truth) and for the 'true' or 'conditional'
        prior.
    known : int or list of str
        How many sensitive attributes the adversary knows (drawn at random per
        victim), or which ones.
    n_targets : int or None
        Number of victims (random rows); None for every row.
    prior : {'marginal', 'conditional'}
        'marginal': A_j, the whole table's distribution (eq. 12).
        'conditional': the distribution of S_j among the other records that
        share the victim's known values (needs ``original``).
    prior_source : {'auto', 'true', 'reconstructed'}
        Where the marginal prior comes from: the original data, or the EM
        reconstruction from the published table (what an analyst has).
        'auto': 'true' when ``original`` is given.
    """
    if prior not in ("marginal", "conditional"):
        raise ValueError(f"prior must be 'marginal' or 'conditional', got {prior!r}")
    if prior_source not in ("auto", "true", "reconstructed"):
        raise ValueError(f"prior_source must be 'auto', 'true' or 'reconstructed', got {prior_source!r}")
    if prior_source == "auto":
        prior_source = "true" if original is not None else "reconstructed"
    if original is None and (prior_source == "true" or prior == "conditional"):
        raise ValueError(f"prior={prior!r} with prior_source={prior_source!r} needs the original data")
    sens = [n for n in table.names if not table.params[n].exact]
    if not sens:
        raise ValueError("the table has no sensitive attribute to attack")
    if isinstance(known, (list, tuple)):
        bad = [k for k in known if k not in sens]
        if bad:
            raise ValueError(f"known: {bad} are not sensitive attributes of the table ({sens})")
        n_known = len(known)
    elif isinstance(known, bool) or not isinstance(known, (int, np.integer)) or not 0 <= known < len(sens):
        raise ValueError(f"known must be a list of attributes or an int in [0, {len(sens) - 1}], "
                         f"got {known!r}")
    else:
        n_known = int(known)
    if n_targets is not None and (isinstance(n_targets, bool) or not isinstance(n_targets, (int, np.integer))
                                  or n_targets < 1):
        raise ValueError(f"n_targets must be a positive int or None, got {n_targets!r}")
    rng = np.random.default_rng(seed)
    n = table.n_rows
    victims = np.arange(n) if n_targets is None or n_targets >= n else \
        np.sort(rng.choice(n, size=int(n_targets), replace=False))
    nv = victims.size
    # which attributes each victim's adversary knows: (nv, q_s) bool
    if isinstance(known, (list, tuple)):
        K = np.zeros((nv, len(sens)), dtype=bool)
        K[:, [sens.index(k) for k in known]] = True
    else:
        r = rng.random((nv, len(sens)))
        K = np.argsort(r, axis=1)[:, :n_known]
        K = np.zeros((nv, len(sens)), dtype=bool) | \
            (np.arange(len(sens))[None, :, None] == K[:, None, :]).any(axis=2)
    codes = _codes_of(original, table, schema) if original is not None else None
    marginals = {}
    for j in sens:
        d = table.schema[j].d
        if prior_source == "true":
            A = np.bincount(codes[j], minlength=d).astype(np.float64)
        else:
            from ..randomized.reconstruct import reconstruct
            A = np.clip(np.asarray(reconstruct(table, [j], "em").counts, dtype=np.float64), 0, None)
        marginals[j] = A / A.sum()
    parts, rows, cache = [], [], {}
    for jj, j in enumerate(sens):
        par = table.params[j]
        d = par.d
        sel = ~K[:, jj]
        vj = victims[sel]
        if vj.size == 0:
            continue
        A = marginals[j]
        if prior == "conditional":
            P = np.empty((vj.size, d))
            Ksel = K[sel]
            patterns, inv = np.unique(Ksel, axis=0, return_inverse=True)
            for pi, pat in enumerate(patterns):
                idx = np.flatnonzero(inv.ravel() == pi)
                names_k = tuple(sens[i] for i in np.flatnonzero(pat))
                P[idx] = _conditional_priors(codes, names_k, j, d, vj[idx], A, cache) \
                    if names_k else A
        else:
            P = np.broadcast_to(A, (vj.size, d))
        M = membership(table, j)[vj]
        u = u_of_p(par.p, par.eta, d) if par.eta < d else 1.0
        post = P * np.where(M, 1.0, u)
        s = post.sum(axis=1, keepdims=True)
        post = np.divide(post, s, out=np.array(P, dtype=np.float64, copy=True), where=s > 0)
        guess = post.argmax(axis=1)
        conf = post[np.arange(vj.size), guess]
        pconf = np.asarray(P).max(axis=1)
        g = ground_object(_ground_name(table, j, None), table.schema[j])
        e = emd_batch(post, A, g) if par.t is not None else np.full(vj.size, np.nan)
        truth = codes[j][vj] if codes is not None else np.full(vj.size, -1)
        correct = (guess == truth) if codes is not None else np.zeros(vj.size, dtype=bool)
        pcorrect = (np.asarray(P).argmax(axis=1) == truth) if codes is not None else correct
        parts.append(pd.DataFrame({"row": vj, "attribute": j, "confidence": conf, "guess": guess,
                                   "truth": truth, "correct": correct,
                                   "prior_confidence": pconf, "emd": e}))
        lj = par.l if par.l is not None else (par.k if par.k is not None else None)
        promise = 1.0 / lj if lj else np.nan
        q = np.quantile(conf, [0.5, 0.9, 0.99])
        rows.append({
            "attribute": j, "l": lj, "promise_1_over_l": promise, "t": par.t, "p": par.p,
            "eta": par.eta, "d": d, "victims": int(vj.size),
            "conf_mean": float(conf.mean()), "conf_q50": float(q[0]), "conf_q90": float(q[1]),
            "conf_q99": float(q[2]), "conf_max": float(conf.max()),
            "share_above_1_over_l": float((conf > promise + 1e-12).mean()) if lj else np.nan,
            "accuracy": float(correct.mean()) if codes is not None else np.nan,
            "prior_accuracy": float(pcorrect.mean()) if codes is not None else np.nan,
            "prior_conf_mean": float(pconf.mean()),
            "emd_mean": float(np.nanmean(e)) if par.t is not None else np.nan,
            "emd_max": float(np.nanmax(e)) if par.t is not None else np.nan,
        })
    victims_df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return AttackResult(pd.DataFrame(rows), victims_df,
                        {"known": known, "prior": prior, "prior_source": prior_source,
                         "n_targets": int(nv), "seed_given": seed is not None})
