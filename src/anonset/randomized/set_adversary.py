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
from fractions import Fraction

import numpy as np

from .params import quantize_p

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



#: Steps of a value's allowance in :func:`set_pins`: the decoys' counts are
#: rounded down to steps of 2^(e - 9) rows for the allowances in [2^e,
#: 2^(e + 1)), at most 1/512 of each (the share it gives is at most one step
#: per decoy above the exact one).
_STEP_BITS = 9
PIN_STEPS = 1 << _STEP_BITS


def _log_comb_or_inf(lf: np.ndarray, n, r) -> np.ndarray:
    """log C(n, r), -inf where r < 0 or r > n."""
    n, r = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(r, dtype=np.int64))
    out = np.full(n.shape, -np.inf)
    ok = (r >= 0) & (r <= n)
    out[ok] = lf[n[ok]] - lf[r[ok]] - lf[n[ok] - r[ok]]
    return out


def _octave(a: Fraction) -> int:
    """e with 2^e <= a < 2^(e + 1) (a > 0), exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > a else e


def _floor_scaled(a: Fraction, s: int) -> int:
    """floor(a 2^s), exactly."""
    return (a.numerator << s) // a.denominator if s >= 0 else \
        a.numerator // (a.denominator << -s)


def _few_enough(c: np.ndarray, k: int, e: int, tops: list, lf: np.ndarray) -> np.ndarray:
    """For each T in ``tops``: the chance that k values drawn uniformly
    from all d of ``c`` hold at most T steps of 2^(e - 9) rows together,
    each count rounded down to its steps.  A dynamic programme over
    (values drawn, steps held) through the values that take steps, those of
    one step taken together (hypergeometric), then the rest of the k drawn
    from the values that take none, in closed form."""
    d = c.size
    w = np.floor(np.ldexp(c, _STEP_BITS - e))      # exact: a power of two
    # no k values hold fewer steps than the k fewest: a T below is out of reach
    least = float(np.partition(w, k - 1)[:k].sum())
    out = np.zeros(len(tops))
    reach = [i for i, t in enumerate(tops) if t >= least]
    if not reach:
        return out
    top = max(tops[i] for i in reach)
    zeros = int((w == 0).sum())
    ws, ms = np.unique(w[(w > 0) & (w <= top)].astype(np.int64), return_counts=True)
    J = min(k, top, int(ms.sum()))
    j = np.arange(J + 1)
    dp = np.zeros((J + 1, top + 1))
    dp[0, 0] = 1.0
    rem = d                                          # values not taken into dp yet
    for wi, m in zip(ws.tolist(), ms.tolist()):
        R = min(m, J, top // wi)
        r = np.arange(R + 1)[:, None]
        # P(r of these m values among the k - j still drawn | j drawn)
        with np.errstate(invalid="ignore"):
            pr = np.exp(_log_comb_or_inf(lf, m, r) + _log_comb_or_inf(lf, rem - m, k - j - r)
                        - _log_comb_or_inf(lf, rem, k - j))
        pr = np.nan_to_num(pr, nan=0.0, posinf=0.0)
        new = dp * pr[0][:, None]
        for ri in range(1, R + 1):
            shift = ri * wi
            new[ri:, shift:] += dp[:J + 1 - ri, :top + 1 - shift] * pr[ri, :J + 1 - ri, None]
        dp = new
        rem -= m
    with np.errstate(invalid="ignore"):
        tail = np.exp(_log_comb_or_inf(lf, zeros, k - j) - _log_comb_or_inf(lf, rem, k - j))
    cum = (np.cumsum(dp, axis=1) * np.nan_to_num(tail)[:, None]).sum(axis=0)
    out[reach] = cum[np.asarray([tops[i] for i in reach], dtype=np.int64)]
    return out


def set_pins(counts, eta: int, determines: float, p: float = 1.0) -> float:
    """The share of the rows whose set alone gives their true value v away
    to whoever knows the column's distribution (``counts``: rows per value)
    and the parameters (``p``: the coin, taken as the sampler has it,
    :func:`~anonset.randomized.params.quantize_p`; ``eta``), as a value of
    a pass-through column gives a sensitive value away
    (:meth:`anonset.passthrough.ValueSample.given_away`): v's posterior
    given the set, pi_v / (rho + (1 - rho) pi(S)) with pi(S) the set's
    members' shares and rho = (1 - p) eta / (p d + (1 - p) eta) (at p = 1,
    pi_v / (pi_v + the other members' shares)), removes at least
    ``determines`` of the errors of guessing v from its share pi_v
    (posterior >= pi_v + determines (1 - pi_v)), and pi_v < ``determines``.
    A value nobody holds is a decoy a reader strikes from every set (the
    counts the sets' reconstruction gives show it), and a rare one nearly
    so: at l = 2 over two values and a third nobody holds, half the rows'
    sets are their value and the decoy; Adult's race at l = 2, 43 % of the
    rows (a White person's set beside Other: 99 % White).

    Per count c_v, P(v in its set) = p + (1 - p) eta / d times the chance
    that its eta - 1 other members, uniform from the other d - 1 values on
    a head and on a tail alike, hold at most its allowance
    (c_v (1 / theta_v - 1) - rho (n - c_v)) / (1 - rho) rows together
    (none where that is negative; c_v (1 / theta_v - 1) at p = 1): one
    decoy counted exactly, more by a dynamic programme per octave of the
    allowances (:func:`_few_enough`, the counts rounded down to steps of at
    most 1 / ``PIN_STEPS`` of each allowance: never below the exact share,
    above it by at most one step per decoy).
    H151: only p = 1 was measured, and Adult's age at p = 0.9961 (eta = 2)
    was published with 33.8 % of the rows' ages given away.  H149: the
    bound used before counted only sets each of whose decoys held at most
    1 / (eta - 1) of the allowance, and at eta = 14 over 266 incomes gave
    0.8 % where the sets gave 29 % away."""
    c = np.asarray(counts, dtype=np.float64)
    d, n, k = c.size, float(c.sum()), int(eta) - 1
    p = quantize_p(float(p))                # the coin the sampler really has
    if k < 0 or eta >= d or n <= 0 or p <= 0.0:
        return 0.0
    # a head (p): the true value and k decoys uniform from the other d - 1
    # values; a tail: eta values uniform from all d.  A set S is
    # L_in = p / C(d - 1, k) + (1 - p) / C(d, eta) likely from a value in
    # it, L_out = (1 - p) / C(d, eta) from one outside it; their ratio
    pf = Fraction(p)
    rho = (1 - pf) * eta / (pf * d + (1 - pf) * eta)
    # makes v's posterior given S (v in S) pi_v / (rho + (1 - rho) pi(S))
    incl = p + (1.0 - p) * eta / d          # P(v in its set): then the rest are k decoys
    det, nf = Fraction(str(determines)), Fraction(n)
    # per count c_v: what the posterior leaves the decoys, c_v (1 / theta_v -
    # 1), in exact fractions: a set whose decoys hold exactly that removes
    # exactly ``determines`` of the errors, and counts (H151: in floats it
    # came out below 22 where 22 rows were a tie, and those rows' 3.2 % were
    # left out); p < 1: a set is also a tail's, which leaves them less
    vals, mult = np.unique(c[c > 0], return_counts=True)
    given = []                              # (c_v, values with it, allowance)
    for cv, m in zip(vals.tolist(), mult.tolist()):
        cf = Fraction(cv)
        if cf >= det * nf:
            continue                        # a value 90 % hold: its share is its guess
        a = cf * (1 - det) * (nf - cf) / (cf + det * (nf - cf))
        a = (a - rho * (nf - cf)) / (1 - rho)
        if a >= 0:                          # else no set gives v away
            given.append((cv, m, a))
    if not given:
        return 0.0
    total = 0.0
    if k == 0:
        # a set of one value (t-closeness alone, p < 1: p = 1 is the clear
        # case): every row whose set is its value, where the allowance is
        # not negative (H155: Adult's age at Closeness(0.25), p = 0.86, gave
        # 65 % of the rows' ages away, unmeasured)
        for cv, m, a in given:
            total += m * cv / n * incl
        return min(total, 1.0)
    lf = log_factorials(d)
    srt = np.sort(c)
    if k == 1:
        # one decoy: the others that hold at most the allowance, counted
        # (every float c <= a has c <= float(a): no float lies between them)
        for cv, m, a in given:
            fit = int(np.searchsorted(srt, float(a), side="right")) - (cv <= float(a))
            total += m * cv / n * incl * fit / (d - 1)
        return min(total, 1.0)
    # k >= 2: the allowances by octave, [2^e, 2^(e + 1)), one programme each
    # with the counts in steps of 2^(e - 9) rows (1/512 of the octave's
    # least; H151: one per count took 13.7 s for 4,000 values over 20 M
    # rows).  v itself never fits (c_v > its allowance), so the chance over
    # k values drawn from all d is the one over the other d - 1 times
    # C(d - 1, k) / C(d, k) = (d - k) / d, and any value that might fit
    # counted only adds (never below the exact share).
    octaves: dict = {}
    for cv, m, a in given:
        if a == 0:                          # decoys nobody holds only
            fit = math.exp(float(_log_comb_or_inf(lf, int((c == 0).sum()), k)
                                 - _log_comb_or_inf(lf, d - 1, k)))
            total += m * cv / n * incl * fit
            continue
        e = _octave(a)
        octaves.setdefault(e, []).append((cv, m, _floor_scaled(a, _STEP_BITS - e)))
    for e, rows in octaves.items():
        fit = _few_enough(c, k, e, [t for _, _, t in rows], lf) * (d / (d - k))
        for (cv, m, _), f in zip(rows, fit.tolist()):
            total += m * cv / n * incl * min(f, 1.0)
    return min(total, 1.0)
