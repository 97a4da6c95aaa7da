"""The attack simulation: a Bayesian adversary against a published table
(paper 000 Sec. V-C3 and VII-A), measured against what the privacy model
promises.

In plain words: the adversary has found a victim's row (the strongest case,
paper 000 Example 4), knows some of the victim's attributes exactly, knows
the published parameters (p_j, eta_j) and a prior -- the population's
distribution A_j, or the distribution among people who share the victim's
known values.  For each other attribute it weighs every value by the prior
and by how likely the published set is under that value (kappa_c inside the
set, kappa_d outside) and guesses the most likely one.  The table reports
how often that guess is right (success), how sure the adversary is
(confidence), how often the prior alone would be right, and the bound the
model promises:

* diversity / anonymity: 1/l_j (1/k_j) -- the largest share of one value in
  an equivalence class (Def. 11).  It is a bound on a row-counting
  adversary, not on a Bayesian one with a skewed prior, which is exactly
  what the simulation shows;
* closeness: max_v A_j(v) + t_j / delta_j, where delta_j is the smallest
  distance between two values of the ground distance.  Theorem 4 bounds
  EMD(A_j, posterior) by t_j; the total variation is at most EMD / delta_j,
  so no posterior puts more than A_j(v) + t_j / delta_j on a value v;
* both: the smaller of the two.

A risk is reported when the success rate exceeds the model's bound AND what
the prior alone gives, each by more than a margin of max(0.01, three
binomial standard errors): the publication, not the population, lets the
adversary beat the promise.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..emd import emd_batch
from ..randomized.closeness_search import u_of_p
from ..randomized.params import ground_object
from ..randomized.settable import SetTable
from ..validate import InputError, release_sample_seed
from .checks import codes_of, ground_name
from .masks import bits

__all__ = ["AttackResult", "attack", "model_bound", "SUMMARY_COLUMNS"]

#: The attack summary's columns, in words (printed under the table).
SUMMARY_COLUMNS = {
    "attribute": "the attribute the adversary tries to learn",
    "victims": "victims attacked on it (those whose value of it the adversary did not know)",
    "model_bound": "the success rate the privacy model promises not to exceed (the bound "
                   "lines say why)",
    "bound": "where the bound comes from: 1/l (class frequency, Def. 11) or "
             "max A + t/delta (closeness, Theorem 4)",
    "success": "share of victims whose true value is the adversary's guess "
               "(without the original data: its mean confidence, an estimate)",
    "prior_only": "the same share for a guess from the prior alone, without the table",
    "conf_mean": "the adversary's confidence in its guess (posterior probability), mean",
    "conf_median": "... median",
    "conf_max": "... largest over the victims",
    "above_bound": "share of victims on whom the confidence exceeds the model's bound",
    "shift_max": "largest EMD between prior and posterior (closeness promises <= t)",
    "risk": "success above both the bound and the prior alone (by more than a margin)",
}


@dataclass
class AttackResult:
    """Outcome of :func:`attack`.

    Attributes
    ----------
    summary : DataFrame
        One row per target attribute; the columns of :data:`SUMMARY_COLUMNS`
        plus l, t, p, eta, d, conf_q90, conf_q99, prior_confidence (mean
        confidence of the prior alone), shift_mean, margin and
        success_measured (False when ``success`` is the mean confidence).
    victims : DataFrame
        One row per (victim, target attribute): row, attribute, confidence,
        guess, truth (-1 unknown), correct, prior_confidence, shift.
    settings : dict
    """

    summary: pd.DataFrame
    victims: pd.DataFrame
    settings: dict = field(default_factory=dict)

    def explain(self, columns=None) -> str:
        """The summary's columns in plain words (``columns``: those shown,
        default all)."""
        shown = SUMMARY_COLUMNS if columns is None else columns
        return "\n".join(f"  {k:12s} {SUMMARY_COLUMNS[k]}" for k in shown)

    def plot(self, path=None, ax=None):
        """Box plot of the confidence per attribute with the model's bound
        (red) and the success rate (triangle); needs matplotlib.  Returns the
        figure."""
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
        for i in range(len(names)):
            row = self.summary.iloc[i]
            ax.hlines(row["model_bound"], i + 0.6, i + 1.4, colors="red", linestyles="--")
            ax.plot(i + 1, row["success"], "k^")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("adversary's confidence in its guess")
        ax.set_title(f"Bayes adversary, known = {self.settings.get('known')}, prior = "
                     f"{self.settings.get('prior')} ({self.settings.get('prior_source')}); "
                     "red: model's bound, triangle: success rate", fontsize=8)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig


# ----------------------------------------------------------------- bounds
def _smallest_distance(g) -> float:
    """The smallest distance between two different values of a ground."""
    w = g.weight[g.weight > 0]
    if g.kind == "equal" or not w.size:
        return 1.0
    return float(2.0 * w.min()) if g.kind == "hierarchical" else float(w.min())


def t_below(delta: float, top: float) -> str:
    """Where the bound max A + t / delta says nothing (100 %): the t below
    which it would, delta (1 - max A), rounded down so that the t it names
    bounds (H21: 0.1236 printed as 0.124); none where one value is every
    row's."""
    need = delta * (1.0 - top)
    if need <= 0.0:
        return "no t bounds it: one value is every row's"
    # four decimals, or three significant digits below 1e-4, rounded down in
    # decimal (binary floats put 0.7 one step low: H27)
    from decimal import ROUND_FLOOR, Decimal
    exp = -4 if need >= 1e-4 else math.floor(math.log10(need)) - 2
    cut = Decimal(repr(need)).quantize(Decimal(1).scaleb(exp), rounding=ROUND_FLOOR)
    return f"below 100 % at t < {float(cut):.4g}"


def model_bound(par, A: np.ndarray, g) -> tuple:
    """(bound, where it comes from) on a Bayesian adversary's success that
    the model of one attribute promises; (nan, reason) when it promises none.

    Examples
    --------
    >>> from anonset.randomized.params import AttributeParams
    >>> from anonset.emd import Ground
    >>> model_bound(AttributeParams("s", 1.0, 4, 10, l=4), np.full(10, 0.1), Ground.equal(10))
    (0.25, '1/l = 1/4')
    """
    found = []
    lk = par.l if par.l is not None else par.k
    if lk:
        found.append((1.0 / lk, f"1/{'l' if par.l is not None else 'k'} = 1/{lk}"))
    if par.t is not None and not math.isinf(float(par.t)):
        delta = _smallest_distance(g)
        b = min(1.0, float(np.max(A)) + float(par.t) / delta)
        why = f"max A + t/delta = {np.max(A):.3g} + {float(par.t):g}/{delta:.3g}"
        if b >= 1.0:        # the t below which the bound says something
            why += "; " + t_below(delta, float(np.max(A)))
        found.append((b, why))
    if not found:
        return math.nan, "none: the model promises no bound for this attribute"
    return min(found)


# ------------------------------------------------------------- adversary
def choose_victims(rng, n: int, n_targets, sens: list, known) -> tuple:
    """(victims, K): sorted victim rows, and (victims, attributes) bool of
    what the adversary knows about each (``known`` of them at random, or the
    named ones).  The same draws in memory and on a file."""
    nv_all = n if n_targets is None or n_targets >= n else int(n_targets)
    victims = np.arange(n) if nv_all == n else np.sort(rng.choice(n, size=nv_all, replace=False))
    nv = victims.size
    if isinstance(known, (list, tuple)):
        K = np.zeros((nv, len(sens)), dtype=bool)
        K[:, [sens.index(k) for k in known]] = True
    else:
        order = np.argsort(rng.random((nv, len(sens))), axis=1)[:, :int(known)]
        K = (np.arange(len(sens))[None, :, None] == order[:, None, :]).any(axis=2)
    return victims, K


def _margin(b: float, nv: int) -> float:
    return max(0.01, 3.0 * math.sqrt(max(b * (1.0 - b), 0.0) / max(nv, 1)))


#: Cells (victims x domain values) of one block of the adversary's dense
#: posterior: a wide domain's victims are taken a block at a time (10,000
#: victims over 60,000 values held 4.8 GB a matrix, several at once).
ADVERSARY_BLOCK_CELLS = 1 << 22


def _posterior_block(par, g, P, M, A) -> dict:
    """The adversary's guesses on one block of victims (rows independent)."""
    d = par.d
    u = u_of_p(par.p, par.eta, d) if par.eta < d else 1.0
    post = P * np.where(M, 1.0, u)
    s = post.sum(axis=1, keepdims=True)
    post = np.divide(post, s, out=np.array(P, dtype=np.float64, copy=True), where=s > 0)
    guess = post.argmax(axis=1)
    n = guess.size
    return {"guess": guess, "conf": post[np.arange(n), guess],
            "pconf": np.asarray(P).max(axis=1), "pguess": np.asarray(P).argmax(axis=1),
            "shift": emd_batch(post, A, g) if par.t is not None else np.full(n, np.nan)}


def _adversary(header, j: str, vj, blocks, A, truth) -> tuple:
    """(victims' rows, summary row) of the attack on one attribute;
    ``blocks``: each block of victims' (prior rows, membership rows)."""
    par = header.params[j]
    d = par.d
    g = ground_object(ground_name(header, j), header.schema[j])
    got = [_posterior_block(par, g, P, M, A) for P, M in blocks]
    guess, conf, pconf, pguess, shift = (np.concatenate([b[k] for b in got]) for k in
                                         ("guess", "conf", "pconf", "pguess", "shift"))
    known = truth is not None
    truth = truth if known else np.full(vj.size, -1)
    correct = guess == truth
    pcorrect = pguess == truth
    part = pd.DataFrame({"row": vj, "attribute": j, "confidence": conf, "guess": guess,
                         "truth": truth, "correct": correct if known else False,
                         "prior_confidence": pconf, "shift": shift})
    bound, why = model_bound(par, A, g)
    success = float(correct.mean()) if known else float(conf.mean())
    prior_only = float(pcorrect.mean()) if known else float(pconf.mean())
    margin = _margin(bound if not math.isnan(bound) else 0.5, vj.size)
    q = np.quantile(conf, [0.5, 0.9, 0.99])
    row = {"attribute": j, "l": par.l if par.l is not None else par.k, "t": par.t, "p": par.p,
           "eta": par.eta, "d": d, "victims": int(vj.size), "model_bound": bound, "bound": why,
           "success": success, "prior_only": prior_only, "success_measured": known,
           "conf_mean": float(conf.mean()), "conf_median": float(q[0]),
           "conf_q90": float(q[1]), "conf_q99": float(q[2]), "conf_max": float(conf.max()),
           "above_bound": float((conf > bound + 1e-12).mean()) if not math.isnan(bound) else np.nan,
           "prior_confidence": float(pconf.mean()),
           "shift_mean": float(np.nanmean(shift)) if par.t is not None else np.nan,
           "shift_max": float(np.nanmax(shift)) if par.t is not None else np.nan,
           "margin": margin,
           "risk": bool(not math.isnan(bound) and success > bound + margin
                        and success > prior_only + margin)}
    return part, row


def attack_rows(header, sens, victims, K, member_rows, truth_of, prior_of, marginals,
                settings) -> AttackResult:
    """Run the adversary on every target attribute.  ``member_rows(j, sel)``
    gives the victims' membership rows, ``truth_of(j, sel)`` their true codes
    (or None), ``prior_of(j, sel)`` their prior rows; ``sel`` a boolean mask
    over the victims, asked for a block at a time on a wide domain."""
    parts, rows = [], []
    for jj, j in enumerate(sens):
        sel = ~K[:, jj]
        vj = victims[sel]
        if vj.size == 0:
            continue
        idx = np.flatnonzero(sel)
        step = max(1, ADVERSARY_BLOCK_CELLS // max(header.params[j].d, 1))

        def blocks(j=j, idx=idx, step=step):
            for lo in range(0, idx.size, step):
                block = np.zeros(sel.size, dtype=bool)
                block[idx[lo:lo + step]] = True
                yield prior_of(j, block), member_rows(j, block)
        part, row = _adversary(header, j, vj, blocks(), marginals[j], truth_of(j, sel))
        parts.append(part)
        rows.append(row)
    return AttackResult(pd.DataFrame(rows), pd.concat(parts, ignore_index=True) if parts
                        else pd.DataFrame(), settings)


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


def check_attack_args(table, original, known, n_targets, prior, prior_source, aligned) -> tuple:
    """Validated (sensitive attributes, prior_source, known).  ``known=None``
    is the default: one attribute known, none where the table has only one
    sensitive attribute."""
    if prior not in ("marginal", "conditional"):
        raise InputError(f"got {prior!r}", param="prior", expected="'marginal' or 'conditional'")
    if prior_source not in ("auto", "true", "reconstructed"):
        raise InputError(f"got {prior_source!r}", param="prior_source",
                         expected="'auto', 'true' or 'reconstructed'")
    if prior_source == "auto":
        prior_source = "true" if original is not None else "reconstructed"
    if original is None and (prior_source == "true" or prior == "conditional"):
        raise InputError(f"prior {prior!r} from {prior_source!r} needs the original data",
                         param="prior", expected="{@original} or the marginal prior")
    if prior == "conditional" and not aligned:
        # (H137: the advice was --aligned, which on a shuffled release
        # lined the sets up with other people's rows and FAILED it)
        raise InputError("the conditional prior needs the original rows in the published "
                         "order, which a shuffled release's are not (only the table "
                         "publish returned knows its order, in memory)", param="prior",
                         expected="the marginal prior, or a release published in the input "
                                  "order ({@keep_order=True}, a risk the audit names)")
    sens = [n for n in table.names if not table.params[n].exact]
    if not sens:
        raise ValueError("the table has no sensitive attribute to attack")
    if known is None:
        known = min(1, len(sens) - 1)
    if isinstance(known, (list, tuple)):
        bad = [k for k in known if k not in sens]
        if bad:
            raise InputError(f"{bad} are not sensitive attributes of the table ({sens})",
                             param="known")
    elif isinstance(known, bool) or not isinstance(known, (int, np.integer)) \
            or not 0 <= known < len(sens):
        raise InputError(f"got {known!r}", param="known",
                         expected=f"a list of attributes or an int in [0, {len(sens) - 1}]")
    if n_targets is not None and (isinstance(n_targets, bool) or not isinstance(
            n_targets, (int, np.integer)) or n_targets < 1):
        raise InputError(f"got {n_targets!r}", param="n_targets",
                         expected="a positive integer")
    return sens, prior_source, known


def reconstructed_marginal(header, j: str, w) -> np.ndarray:
    """A_j estimated from the published sets by the paper's EM (eq. 26-27),
    from the per-value counts w (eq. 17 for one attribute).  A semantic
    table's sensitive attribute by paper 001's EM instead (its dummies are
    not paper 000's uniform sets; w is then paper 001's omega)."""
    if (getattr(header, "model", None) or {}).get("name") == "semantic" and \
            header.model.get("sensitive") == j:
        from ..randomized.semantic import semantic_marginal
        A = np.clip(semantic_marginal(header, w), 0, None)
        return A / A.sum() if A.sum() > 0 else np.full(A.size, 1.0 / A.size)
    if header.params[j].says_nothing:       # what the EM would return: its start
        d = header.schema[j].d
        return np.full(d, 1.0 / d)
    # eq. 26-27 as reconstruct runs them, on whatever the parameters claim:
    # the adversary's view of a release, even one whose parameters
    # contradict its model (which reconstruct refuses and the audit fails)
    from ..randomized.reconstruct import em_of_w
    A = np.clip(np.asarray(em_of_w(header, [j], w), dtype=np.float64), 0, None)
    return A / A.sum() if A.sum() > 0 else np.full(A.size, 1.0 / A.size)


def attack(table: SetTable, original=None, *, known=None, n_targets: int | None = 10_000,
           prior: str = "marginal", prior_source: str = "auto", seed=None,
           schema=None, missing: str = "error", aligned: bool = True) -> AttackResult:
    """Simulate a Bayesian adversary against a published table.

    The adversary has linked a victim to its published row, knows ``known``
    of the victim's sensitive attributes exactly and the published (p_j,
    eta_j), and for every other sensitive attribute S_j computes the
    posterior ``P(v | R_ij) ∝ prior(v) * (kappa_c if v in R_ij else kappa_d)``
    (paper 000 Sec. V-C3).  Its guess is the posterior mode; its confidence
    the posterior maximum.  See the module docstring for the bound.

    Parameters
    ----------
    original : DataFrame, optional
        Needed for the success rate (the truth) and for the 'true' or
        'conditional' prior.
    known : int or list of str, optional
        How many sensitive attributes the adversary knows (drawn at random per
        victim), or which ones; default 1, or 0 where the table has one
        sensitive attribute.
    n_targets : int or None
        Number of victims (random rows); None for every row.
    prior : {'marginal', 'conditional'}
        'marginal': A_j, the whole table's distribution (eq. 12).
        'conditional': the distribution of S_j among the other records that
        share the victim's known values (needs ``original``, aligned).
    prior_source : {'auto', 'true', 'reconstructed'}
        Where the marginal prior comes from: the original data, or the EM
        reconstruction from the published table (what an analyst has).
        'auto': 'true' when ``original`` is given.
    missing : {'error', 'category'}
        How the original's missing values were published.
    aligned : bool
        The original's rows are in the published order (else the truth of a
        victim is unknown and ``success`` is the mean confidence).

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xxxxxxxy"), "b": list("uvwuvwuv")})
    >>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"])
    >>> r = attack(pub, df, n_targets=None, seed=0)
    >>> r.summary[["attribute", "model_bound"]].values.tolist()
    [['a', 0.5], ['b', 0.5]]
    """
    sens, prior_source, known = check_attack_args(table, original, known, n_targets, prior,
                                           prior_source, aligned)
    rng = np.random.default_rng(release_sample_seed(seed, table))
    victims, K = choose_victims(rng, table.n_rows, n_targets, sens, known)
    codes = codes_of(original, table, schema, missing, bool(aligned)) \
        if original is not None else None
    marginals = {}
    for j in sens:
        if prior_source == "true":
            A = np.bincount(codes[j], minlength=table.schema[j].d).astype(np.float64)
            marginals[j] = A / A.sum()
        else:
            marginals[j] = reconstructed_marginal(table, j, None)
    cache: dict = {}

    def prior_of(j, sel):
        A, vj = marginals[j], victims[sel]
        if prior != "conditional":
            return np.broadcast_to(A, (vj.size, A.size))
        P = np.empty((vj.size, A.size))
        patterns, inv = np.unique(K[sel], axis=0, return_inverse=True)
        for pi, pat in enumerate(patterns):
            idx = np.flatnonzero(inv.ravel() == pi)
            names_k = tuple(sens[i] for i in np.flatnonzero(pat))
            P[idx] = _conditional_priors(codes, names_k, j, A.size, vj[idx], A, cache) \
                if names_k else A
        return P

    return attack_rows(
        table, sens, victims, K,
        lambda j, sel: bits(np.asarray(table.mask(j))[victims[sel]], table.schema[j].d),
        lambda j, sel: codes[j][victims[sel]] if codes is not None and aligned else None,
        prior_of, marginals,
        {"known": known, "prior": prior, "prior_source": prior_source,
         "n_targets": int(victims.size), "seed_given": seed is not None, "aligned": aligned})
