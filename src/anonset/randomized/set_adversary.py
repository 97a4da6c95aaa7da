"""The Bayes adversary who reads one row's published set and knows the
column's distribution A and the parameters (p, eta): how often it names the
row's true value, in closed form.

A set S of eta values is published with probability kappa_c if it holds the
true value v and kappa_d if not (Sec. V-C3, :func:`kappa`), so the adversary
names argmax_v A_v kappa(v in S), and is right with probability

    success = sum over S of max(kappa_c max_{v in S} A_v, kappa_d max_{v not in S} A_v).

With A sorted in decreasing order (A_0 >= A_1 >= ...), a set's two maxima
are fixed by the first index it holds and the first it lacks: a set that
holds 0 .. j-1 and lacks j (C(d - j - 1, eta - j) sets, j = 1 .. eta), or
one that lacks 0 .. i-1 and holds i (C(d - i - 1, eta - 1) sets, i = 1 ..
d - eta).  The sum has d terms (tested against enumerating every set).

Lambda, the share of the errors of guessing the most common value that the
set removes, (success - A_0) / (1 - A_0), is what the publishers compare
with :data:`anonset.passthrough.DETERMINES`: at 0.9 or more the column is
published nearly in the clear (CPS1985's gender under t = 0.53: p = 0.981,
eta = 1, right for 98 % of the rows against 54 % by the prior alone).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["bayes_success", "set_lambda", "set_pins", "log_factorials"]


def log_factorials(m: int) -> np.ndarray:
    """log n! for n = 0 .. m (math.lgamma: scipy is no dependency)."""
    return np.array([math.lgamma(i + 1.0) for i in range(int(m) + 1)], dtype=np.float64)


def _log_comb(lf: np.ndarray, n, k):
    """log C(n, k) from a table of log factorials."""
    n, k = np.asarray(n, dtype=np.int64), np.asarray(k, dtype=np.int64)
    return lf[n] - lf[k] - lf[n - k]


def bayes_success(counts, p: float, eta: int) -> float:
    """How often the adversary who reads a row's set alone names its true
    value (``counts``: rows per value, or A; ``p``, ``eta``: the column's
    parameters)."""
    A = np.sort(np.asarray(counts, dtype=np.float64))[::-1]
    if A.sum() <= 0:
        return float("nan")
    A = A / A.sum()
    d = A.size
    if d == 1:
        return 1.0
    # log kappa_c, log kappa_d (:func:`anonset.randomized.params.kappa`) from
    # their parts: C(d - 1, eta - 1) overflows a float for large d
    incl = p + (1.0 - p) * eta / d          # P(true value in its set), eq. 19
    lf = log_factorials(d)
    lkc = math.log(incl) - float(_log_comb(lf, d - 1, eta - 1))
    lkd = math.log(1.0 - incl) - float(_log_comb(lf, d - 1, eta)) \
        if eta < d and incl < 1.0 else -np.inf
    with np.errstate(divide="ignore"):
        lA = np.log(A)
    total = 0.0
    if eta < d:
        j = np.arange(1, eta + 1)
        total += float(np.exp(_log_comb(lf, d - j - 1, eta - j)
                              + np.maximum(lkc + lA[0], lkd + lA[j])).sum())
    else:                                   # the whole domain: one set
        total += math.exp(lkc + lA[0])
    i = np.arange(1, d - eta + 1)
    if i.size:
        total += float(np.exp(_log_comb(lf, d - i - 1, eta - 1)
                              + np.maximum(lkc + lA[i], lkd + lA[0])).sum())
    return min(total, 1.0)


def set_lambda(counts, p: float, eta: int) -> tuple:
    """(lambda, success, prior): the adversary's :func:`bayes_success`, the
    most common value's share (the prior alone), and the share of the
    prior's errors the set removes (NaN where the prior makes none)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.size == 0 or c.sum() <= 0:
        return float("nan"), float("nan"), float("nan")
    prior = float(c.max() / c.sum())
    success = bayes_success(c, p, eta)
    lam = (success - prior) / (1.0 - prior) if prior < 1.0 else float("nan")
    return lam, success, prior



def set_pins(counts, eta: int, determines: float) -> float:
    """The share of the rows whose set alone (p = 1) gives their true value
    v away to whoever knows the column's distribution (``counts``: rows per
    value), as a value of a pass-through column gives a sensitive value
    away (:meth:`anonset.passthrough.ValueSample.given_away`): v's posterior
    given the set removes at least ``determines`` of the errors of guessing
    v from its share pi_v (posterior >= pi_v + determines (1 - pi_v)), and
    pi_v < ``determines``.  A lower bound: the rows each of whose eta - 1
    other members is held by at most 1 / (eta - 1) of the rows the
    posterior leaves to them (exact where eta = 2, and where those values
    are held by nobody: C(U_v, eta - 1) / C(d - 1, eta - 1) of v's rows,
    U_v such values besides v).  A value nobody holds is a decoy a reader
    strikes from every set (the counts the sets' reconstruction gives show
    it), and a rare one nearly so: at l = 2 over two values and a third
    nobody holds, half the rows' sets are their value and the decoy;
    Adult's race at l = 2, 43 % of the rows (a White person's set beside
    Other: 99 % White)."""
    c = np.asarray(counts, dtype=np.float64)
    d, n, k = c.size, float(c.sum()), int(eta) - 1
    if k < 1 or eta >= d or n <= 0:
        return 0.0
    pi = c / n
    theta = pi + determines * (1.0 - pi)                 # the posterior that gives v away
    with np.errstate(divide="ignore"):
        bound = np.where(c > 0, c * (1.0 / theta - 1.0) / k, -1.0)
    U = np.searchsorted(np.sort(c), bound, side="right") - (c <= bound)
    lf = log_factorials(d)
    use = (c > 0) & (pi < determines) & (U >= k)
    if not use.any():
        return 0.0
    frac = np.exp(_log_comb(lf, U[use], k) - float(_log_comb(lf, d - 1, k)))
    return float((pi[use] * frac).sum())
