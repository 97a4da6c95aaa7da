"""Utility of an LGB release (paper 002, Sec. 4.1-4.2): the discernibility
metric C_DM, the normalized certainty penalty NCP of Sec. 3.2.2, and the
relative error of random aggregate queries with the paper's and the hard
bounds.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .domain import Domain
from .flags import experiment_generator

if TYPE_CHECKING:
    from .core import LGBResult


def c_dm(res: LGBResult) -> int:
    """Discernibility metric C_DM = sum over groups of |LEG|^2 (Sec. 4.1)."""
    sizes = np.bincount(res.gid).astype(np.int64)
    return int((sizes * sizes).sum())


def ncp(res: LGBResult, *, buckets: bool = False) -> float:
    """NCP(T) = sum over rows and generalized (QI) cells of NCP_A(t)
    (Sec. 3.2.2; an ungeneralized value costs 0, as in Xu et al.).

    With ``buckets=True`` a bucketized cell also counts, as if generalized to
    its bucket's value range (numeric) or the LCA of its values (categorical).
    """
    total = 0.0
    for j, dom in enumerate(res.domains):
        isqi = res.qi_mask[:, j]
        if isqi.any():
            total += float(dom.range_cost(res.glo[j, isqi], res.ghi[j, isqi]).sum())
        if buckets:
            inb = res.bid[j] >= 0
            if inb.any():
                b, c = res.bid[j, inb], res.codes[j, inb]
                nb = int(b.max()) + 1
                lo = np.full(nb, dom.d, dtype=np.int64)
                hi = np.full(nb, -1, dtype=np.int64)
                np.minimum.at(lo, b, c)
                np.maximum.at(hi, b, c)
                total += float(dom.range_cost(lo[b], hi[b]).sum())
            total += float(res.suppressed[j].sum())   # '*' costs 1
    return total


def query_error(res: LGBResult, target: str, *, n_queries: int = 1000, n_predicates: int = 4,
                attributes: Sequence[str] | None = None, seed=None, detail: bool = False,
                bound: str = "paper", bucketed: str = "share"):
    """Average relative error of random aggregate queries (Sec. 4.2)::

        SELECT SUM(target) WHERE pred(A1) AND ... AND pred(A4)

    on random QI / semi-sensitive attributes.  A categorical predicate is
    ``A in {v1..vm}`` (m uniform in 1..ceil(d/2)); a numeric one ``A op v``
    with op uniform over > < = >= <= != and v a random domain value.

    Bounds (the paper's adaptation of Zhang et al.): Pro_t(A) is the share of
    the domain values of t's generalized cell that satisfy pred(A) (a QI cell)
    or the share of t's bucket's values that do (a sensitive cell);
    Pro(t) = prod_A Pro_t(A).  In every bucket b of the target, h_b = sum of
    Pro(t) over its rows; Sum_lower(b) adds the floor(h_b) smallest target
    values of b, Sum_upper(b) the ceil(h_b) largest.
    R = (Sum_upper - Sum_lower) / Sum_act, averaged over queries whose true
    answer is positive.

    ``bound`` picks how the numbers of hits of a bucket are bounded:
    ``'paper'`` (default, Sec. 4.2 as printed) floor / ceil of h_b, which is
    not a guaranteed bound (the true answer may fall outside); ``'hard'`` the
    rows certain to match (Pro(t) = 1) / possibly matching (Pro(t) > 0), so
    Sum_lower <= Sum_act <= Sum_upper always.  See docs/lgb.md for which one
    reproduces which trend.

    ``bucketed`` picks Pro_t(A) for a bucketized predicate cell:
    ``'share'`` (default) the share of its bucket's values that satisfy
    pred(A), what the published IDT / SAT support; ``'shown'`` 1 or 0 as
    the value shown in t's row (a value of its bucket, in random order)
    satisfies it or not -- the "specific values" of Sec. 4.3, an analyst
    taking Fig. 2 at face value.  Under ``'shown'`` neither bound rule is a
    guaranteed bound; it reproduces the paper's density trend on the
    paper-shaped table (docs/results/002).

    Returns the mean error (and with ``detail=True`` also the per-query
    errors; with ``detail='bounds'`` an array of rows [Sum_lower, Sum_act,
    Sum_upper] per query instead).
    """
    if target not in res.attributes or res.roles[target] == "qi":
        raise ValueError(f"target {target!r} must be a semi-sensitive or sensitive attribute")
    jt = res.attributes.index(target)
    tdom = res.domains[jt]
    if not tdom.numeric:
        raise ValueError(f"target {target!r} must be numeric to be summed")
    if (res.qi_mask[:, jt] | res.suppressed[jt]).any():
        raise ValueError(f"target {target!r} has cells outside buckets (QI or suppressed); "
                         "query bounds need every target value in a bucket")
    cand = [a for a in res.attributes if a != target and res.roles[a] != "sensitive"] \
        if attributes is None else list(attributes)
    for a in cand:
        if a not in res.attributes or a == target:
            raise ValueError(f"attributes: {a!r} is not a QI or semi-sensitive attribute")
    if len(cand) < n_predicates:
        raise ValueError(f"{n_predicates} predicates need as many attributes, have {cand}")
    if bound not in ("paper", "hard"):
        raise ValueError(f"bound must be 'paper' or 'hard', got {bound!r}")
    if bucketed not in ("share", "shown"):
        raise ValueError(f"bucketed must be 'share' or 'shown', got {bucketed!r}")
    rng = experiment_generator(seed, "queries")
    tvals = np.asarray(tdom.values, dtype=np.float64)
    y = tvals[res.codes[jt]]
    # target buckets: values sorted inside each bucket, prefix sums
    tb = res.bid[jt]
    nb = int(tb.max()) + 1
    o = np.lexsort((y, tb))
    ys = y[o]
    bstart = np.searchsorted(tb[o], np.arange(nb))
    bend = np.r_[bstart[1:], y.size]
    pref = np.r_[0.0, np.cumsum(ys)]
    # per attribute, every cell is in one "state": a generalized interval, a
    # bucket, or suppressed; Pro_t(A) is a function of the state only
    prep = {}
    for a in cand:
        j = res.attributes.index(a)
        isqi = res.qi_mask[:, j]
        b = res.bid[j]
        nbj = int(b.max()) + 1 if (b >= 0).any() else 0
        pairs, inv = np.unique(np.stack([res.glo[j, isqi], res.ghi[j, isqi]]), axis=1,
                               return_inverse=True)
        state = np.empty(res.n, dtype=np.int64)
        state[isqi] = np.asarray(inv).ravel()
        ni = pairs.shape[1]
        inb = b >= 0
        if bucketed == "shown":
            # one state per shown domain value: Pro_t(A) = pred(shown value)
            nbj = res.domains[j].d
            state[inb] = ni + res.shown[j, inb]
            bs = np.ones(nbj)
            prep[a] = (j, pairs, ni, np.arange(nbj), np.arange(nbj), bs, nbj, state)
        else:
            bs = np.bincount(b[inb], minlength=nbj).astype(np.float64)
            state[inb] = ni + b[inb]
            prep[a] = (j, pairs, ni, b[inb], res.codes[j, inb], bs, nbj, state)
        state[res.suppressed[j]] = ni + nbj
    errs, bnds = [], []
    tries = 0
    while len(errs) < n_queries and tries < 20 * n_queries:
        tries += 1
        chosen = rng.choice(len(cand), size=n_predicates, replace=False)
        pro = np.ones(res.n)
        truth = np.ones(res.n, dtype=bool)
        for ci in chosen:
            j, pairs, ni, bb, bc, bs, nbj, state = prep[cand[ci]]
            mask = _random_predicate(res.domains[j], rng)
            cum = np.r_[0.0, np.cumsum(mask)]
            truth &= mask[res.codes[j]] > 0
            lo, hi = pairs[0], pairs[1]
            table = np.empty(ni + nbj + 1)
            table[:ni] = (cum[hi + 1] - cum[lo]) / (hi - lo + 1)
            if nbj:
                table[ni:ni + nbj] = np.bincount(bb, weights=mask[bc], minlength=nbj) / \
                    np.where(bs > 0, bs, 1)
            table[-1] = mask.mean()
            pro *= table[state]
        act = float(y[truth].sum())
        if act <= 0:
            continue
        if bound == "paper":
            h = np.bincount(tb, weights=pro, minlength=nb)
            lower = np.floor(h + 1e-9).astype(np.int64)
            upper = np.minimum(np.ceil(h - 1e-9).astype(np.int64), bend - bstart)
        else:
            lower = np.bincount(tb[pro >= 1.0 - 1e-9], minlength=nb).astype(np.int64)
            upper = np.bincount(tb[pro > 1e-12], minlength=nb).astype(np.int64)
        s_low = pref[bstart + lower] - pref[bstart]
        s_up = pref[bend] - pref[bend - upper]
        errs.append((s_up.sum() - s_low.sum()) / act)
        bnds.append((s_low.sum(), act, s_up.sum()))
    errs = np.asarray(errs)
    mean = float(errs.mean()) if errs.size else float("nan")
    if isinstance(detail, str) and detail == "bounds":
        return mean, np.asarray(bnds, dtype=np.float64).reshape(-1, 3)
    return (mean, errs) if detail else mean


def _random_predicate(dom: Domain, rng) -> np.ndarray:
    d = dom.d
    mask = np.zeros(d, dtype=np.float64)
    if dom.numeric:
        v = int(rng.integers(d))
        op = int(rng.integers(6))
        c = np.arange(d)
        mask[:] = [c > v, c < v, c == v, c >= v, c <= v, c != v][op]
    else:
        m = int(rng.integers(1, max(1, math.ceil(d / 2)) + 1))
        mask[rng.choice(d, size=min(m, d), replace=False)] = 1.0
    return mask
