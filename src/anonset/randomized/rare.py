"""Counting the sets that hold a value of a domain read off the data.

A domain that is declared may list values nobody holds; a domain read off
the data (an *inferred* domain) lists exactly the values that occur, so it
tells everyone that each of its values is some row's true value.  An
adversary who counts the published sets holding a value v (c_v of them)
then knows that at least one of those c_v rows holds v: each of them holds
it with probability at least 1/c_v on average, and where c_v = 1 under
p = 1 the one row is named with certainty.  Paper 000 promises at most 1/l;
for a value of a column of 2,000 distinct incomes published as 2-sets,
about 37 % of the values lie in their holder's set alone.

:func:`expected_exposed` is the expected number of values of one column
that lie in at least one and fewer than L sets, where L is the column's l
(or k), or 2 under t-closeness alone: a value held by k rows lies in the set
of each holder with probability ``inclusion`` (p + (1 - p) eta / d, eq. 19)
and in the set of each other row with probability ``other_inclusion``
(p (eta - 1) / (d - 1) + (1 - p) eta / d), independently, so c_v is the sum
of two binomials, Bin(k, r) + Bin(n - k, q).  The sum runs over the distinct
holder counts, so its cost does not grow with the domain.

Publishing measures it where p = 1 only: there every holder's set holds
its value, so c_v >= k and the count bounds the posterior from below for
certain.  Under p < 1 a holder's set may miss its value, and a value in
one set may be a decoy there; that case is not measured
(docs/security.md, "Inferred domains").
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["below", "expected_exposed", "expected_exposed_mu", "finding", "RARE_EXPECTED"]

#: Publishing refuses a column whose expected number of exposed values
#: (:func:`expected_exposed`) is at least this, unless the user names it.
RARE_EXPECTED = 1e-3


def below(par) -> int:
    """L of a column: a value in fewer than L sets beats its model's bound
    (1/c_v > 1/l); 2 (a value in one set alone) where the model has no l."""
    v = par.l if par.l is not None else par.k
    return max(2, int(v)) if v is not None else 2


def _binom_head(m: int, x: float, top: int) -> np.ndarray:
    """P(Bin(m, x) = i) for i = 0 .. top - 1 (zeros past m)."""
    out = np.zeros(top)
    i = np.arange(min(top, m + 1))
    if x <= 0.0:
        out[0] = 1.0
        return out
    if x >= 1.0:
        if m < top:
            out[m] = 1.0
        return out
    logc = (math.lgamma(m + 1) - np.array([math.lgamma(k + 1) + math.lgamma(m - k + 1)
                                          for k in i]))
    out[:len(i)] = np.exp(logc + i * math.log(x) + (m - i) * math.log1p(-x))
    return out


def expected_exposed(counts, n: int, par) -> float:
    """Expected number of values of one column that lie in at least one and
    fewer than :func:`below` sets (``counts``: rows per value of its
    inferred domain; ``n``: rows; ``par``: its AttributeParams)."""
    top = below(par)
    r, q = par.inclusion, par.other_inclusion
    ks, times = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
    total = 0.0
    for k, m in zip(ks.tolist(), times.tolist()):
        if k <= 0:
            continue
        if r >= 1.0 and k >= top:
            continue                        # its own holders' sets are enough
        c = np.convolve(_binom_head(k, r, top), _binom_head(n - k, q, top))[:top]
        total += m * float(c[1:].sum())
    return total


def expected_exposed_mu(counts, mu, top: int) -> float:
    """As :func:`expected_exposed` where every holder's set holds its value
    and the other rows' sets hold value v ``mu[v]`` times on average, by
    many small independent chances (paper 001's dummies): the count of
    decoys is taken as Poisson(mu[v]), the law of many small chances, which
    errs toward refusing where it matters most: P(X = 0) = prod(1 - q_i) <=
    exp(-sum q_i), the Poisson figure."""
    counts = np.asarray(counts, dtype=np.int64)
    mu = np.asarray(mu, dtype=float)
    total = 0.0
    for k, m in zip(counts.tolist(), mu.tolist()):
        if k <= 0 or k >= top:
            continue
        # P(X <= top - 1 - k), X ~ Poisson(m)
        i = np.arange(top - k)
        logp = -m + i * math.log(m) - np.array([math.lgamma(j + 1) for j in i]) if m > 0 \
            else np.where(i == 0, 0.0, -np.inf)
        total += float(np.exp(logp).sum())
    return total


def finding(expected: float, top: int, counts) -> dict | None:
    """What publishing records of a column (``info['rare']``) and its
    refusal names: the expected count, L, the values one row alone holds
    and the domain's size; None below ``RARE_EXPECTED``."""
    if expected < RARE_EXPECTED:
        return None
    c = np.asarray(counts)
    return {"expected": round(expected, 4), "below": top, "lone": int((c == 1).sum()),
            "d": int(c.size)}
