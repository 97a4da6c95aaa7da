"""Privacy checks of an LGB release (paper 002, Sec. 2.2): :func:`verify`
checks the conditions of Corollary 3 (groups of >= k rows, l-buckets with
>= l distinct values, t-buckets within t) and the flags on a result;
:func:`attack` simulates the adversary of Sec. 1.2 and reports the identity
and value disclosure probabilities of Lemmas 1 and 2.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .core import LGBResult


def verify(res: LGBResult) -> dict:
    """Check Corollary 3 (and the flags) on a result.

    Checks that every local equivalence group has >= k rows and one QI set;
    that within a group every QI cell of an attribute shows the same
    generalized value, which covers the row's true value; that every
    l-diversity bucket holds >= l values, each at most once; that every
    t-closeness bucket is within t of both the whole column's distribution
    and the bucketized values' (docs/algorithms.md); that every flagged
    (sensitive) cell is in a bucket (or suppressed) and never generalized,
    and every QI cell never in a bucket; that the values a bucket shows are
    its values.  Returns ``{'ok': bool, 'violations': [str, ...]}``.
    """
    v = []
    tab = res.table
    sizes = np.bincount(res.gid)
    if sizes.size and sizes[sizes > 0].min() < res.k:
        v.append(f"a group has {int(sizes[sizes > 0].min())} < k={res.k} rows")
    q = len(res.attributes)
    # one QI set per group
    bits = np.zeros(res.n, dtype=np.int64)
    for j in range(q):
        bits |= res.qi_mask[:, j].astype(np.int64) << j
    per_group = pd.Series(bits).groupby(res.gid).nunique()
    if (per_group > 1).any():
        v.append("a group mixes rows with different QI attribute sets")
    for j, a in enumerate(res.attributes):
        isqi = res.qi_mask[:, j]
        inb = res.bid[j] >= 0
        sup = res.suppressed[j]
        if (isqi & (inb | sup)).any():
            v.append(f"{a}: a QI cell is bucketized")
        if (~isqi & ~inb & ~sup).any():
            v.append(f"{a}: a sensitive cell is outside every bucket")
        if (~isqi & (res.glo[j] >= 0)).any():
            v.append(f"{a}: a sensitive cell is generalized")
        if isqi.any():
            labels = tab[a].to_numpy()[isqi]
            nun = pd.Series(labels).groupby(res.gid[isqi]).nunique()
            if (nun > 1).any():
                v.append(f"{a}: QI values of a group are generalized inconsistently")
            c = res.codes[j, isqi]
            if ((c < res.glo[j, isqi]) | (c > res.ghi[j, isqi])).any():
                v.append(f"{a}: a generalized value does not cover the true value")
        if res.roles[a] == "qi":
            if a + "_bid" in tab.columns:
                v.append(f"{a}: a QI attribute has buckets")
            continue
        if not inb.any():
            continue
        b, c = res.bid[j, inb], res.codes[j, inb]
        bsz = np.bincount(b)
        if a in res.closeness:
            v.extend(_closeness_violations(res, j, b, c))
        else:
            la = res.l[a]
            if bsz[bsz > 0].min() < la:
                v.append(f"{a}: a bucket has {int(bsz[bsz > 0].min())} < l={la} values")
            if np.unique(b * res.domains[j].d + c).size != c.size:
                v.append(f"{a}: a value appears twice in a bucket")
        # the published multiset of a bucket is its true one
        d = res.domains[j].d
        if not np.array_equal(np.sort(b * d + res.shown[j, inb]), np.sort(b * d + c)):
            v.append(f"{a}: shown values differ from the bucket's values")
    return {"ok": not v, "violations": v}


def _closeness_violations(res: LGBResult, j: int, b: np.ndarray, c: np.ndarray) -> list:
    """A t-bucket must be within t of the whole column (every row's true
    value, QI cells included) and of the bucketized values."""
    from ...emd import emd_batch
    a, d = res.attributes[j], res.domains[j].d
    if d < 2:
        return []
    P = np.zeros((int(b.max()) + 1, d), dtype=np.int64)
    np.add.at(P, (b, c), 1)
    P = P[P.sum(1) > 0]
    t = res.closeness[a]
    out = []
    for what, ref in (("the whole column", np.bincount(res.codes[j], minlength=d)),
                      ("the bucketized values", P.sum(0))):
        worst = float(emd_batch(P, ref, res.grounds[a]).max())
        if worst > t + 1e-9:
            out.append(f"{a}: a bucket is {worst:.4f} from {what}, farther than t={t}")
    return out


def _group_info(res: LGBResult):
    order = np.argsort(res.gid, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(res.gid[order]) != 0])
    first = order[starts]
    sizes = np.diff(np.r_[starts, res.n])
    return order, starts, first, sizes


def attack(res: LGBResult, *, chunk: int = 512) -> dict:
    """Simulate the adversary of Sec. 1.2, who knows every person's QI values
    (and so which of their attributes hold QI values) but none of the
    sensitive ones.

    For each target t, the matching rows are those with the same QI attribute
    set whose generalized values cover t's QI values; the identity guess is
    uniform over them (Lemma 1).  For a sensitive value s of t on attribute
    A, p(t, s) = sum over matching rows r of 1/|M| * |b_r(s)| / |b_r| with b_r
    r's bucket in A (Lemma 2).  A suppressed cell (``suppress=True``) counts
    as the values the cap removed: a '*' tells that the value was one held
    too often to be l-eligible (where one value dominates, that value), so
    Lemma 2's 1/l does not hold for it.

    The adversary also reads the row order: knowing that the input may have
    been sorted by A, inside every bucket of A it matches the rows, ranked by
    their position or by their record ID (either direction), to the bucket's
    values in sorted order (:func:`order_attack`).

    Returns a dict with ``identity`` (max over targets of 1/|M|),
    ``value[A]`` (max over targets and values of p(t, s)), for t-closeness
    attributes ``excess[A]`` (max of p(t, s) - p(s), p(s) the whole column's
    or the bucketized values' share of s, whichever is larger), and
    ``order[A]`` / ``order_baseline[A]`` (:func:`order_attack`).
    """
    q = len(res.attributes)
    order, starts, first, sizes = _group_info(res)
    G = first.size
    gbits = np.zeros(G, dtype=np.int64)
    rbits = np.zeros(res.n, dtype=np.int64)
    for j in range(q):
        gbits |= res.qi_mask[first, j].astype(np.int64) << j
        rbits |= res.qi_mask[:, j].astype(np.int64) << j
    glo = res.glo[:, first]
    ghi = res.ghi[:, first]
    # per group and bucketed attribute: D_g(s) = sum_{r in g} |b_r(s)| / |b_r|
    D = {}
    prior = {}
    for j, a in enumerate(res.attributes):
        if res.roles[a] == "qi":
            continue
        d = res.domains[j].d
        inb = res.bid[j] >= 0
        b, c = res.bid[j, inb], res.codes[j, inb]
        nb = int(b.max()) + 1 if b.size else 0
        B = np.zeros((max(nb, 1), d))
        np.add.at(B, (b, c), 1.0)
        bsz = B.sum(1, keepdims=True)
        B = B / np.where(bsz > 0, bsz, 1)
        # D_g = sum over the group's rows of their bucket's distribution, in
        # chunks of whole groups (rows sorted by group) to bound memory
        rb = np.full(res.n, -1, dtype=np.int64)
        rb[inb] = b
        # a '*' cell: the values the cap removed (an adversary who knows the
        # column's distribution, or only that one value dominates it, knows
        # which they are), not the uniform guess over the domain
        sup = np.bincount(res.codes[j, res.suppressed[j]], minlength=d).astype(np.float64)
        Bx = np.vstack([B, np.zeros((1, d)), sup / max(sup.sum(), 1.0)])
        rb[res.qi_mask[:, j]] = Bx.shape[0] - 2          # QI cell: contributes nothing
        rb[res.suppressed[j]] = Bx.shape[0] - 1
        rb_sorted = rb[order]
        Dg = np.empty((G, d))
        step = max(1, (1 << 22) // max(d, 1))            # about 32 MiB of rows at a time
        g0 = 0
        while g0 < G:
            g1 = int(np.searchsorted(starts, starts[g0] + step, side="right"))
            g1 = max(g1, g0 + 1)
            r0, r1 = starts[g0], (starts[g1] if g1 < G else res.n)
            Dg[g0:g1] = np.add.reduceat(Bx[rb_sorted[r0:r1]], starts[g0:g1] - r0, axis=0)
            g0 = g1
        D[j] = Dg
        allc = res.codes[j, ~res.qi_mask[:, j]]
        prior[j] = [np.bincount(allc, minlength=d) / max(allc.size, 1),
                    np.bincount(res.codes[j], minlength=d) / max(res.n, 1)]
    ident = 0.0
    value = {res.attributes[j]: 0.0 for j in D}
    excess = {res.attributes[j]: -1.0 for j in D if res.attributes[j] in res.closeness}
    for key in np.unique(rbits):
        gsel = np.flatnonzero(gbits == key)
        tsel = np.flatnonzero(rbits == key)
        qa = [j for j in range(q) if (int(key) >> j) & 1]
        # bucketed attributes of these targets (the others are QI for them)
        Dsel = {j: D[j][gsel] for j in D if not (int(key) >> j) & 1}
        for s0 in range(0, tsel.size, chunk):
            t = tsel[s0:s0 + chunk]
            match = np.ones((t.size, gsel.size), dtype=bool)
            for j in qa:
                ct = res.codes[j, t][:, None]
                match &= (ct >= glo[j, gsel][None, :]) & (ct <= ghi[j, gsel][None, :])
            mf = match.astype(np.float64)
            M = mf @ sizes[gsel].astype(np.float64)
            if (M == 0).any():
                raise AssertionError("a target matches no group: generalization is broken")
            ident = max(ident, float((1.0 / M).max()))
            for j, Dj in Dsel.items():
                P = (mf @ Dj) / M[:, None]
                a = res.attributes[j]
                value[a] = max(value[a], float(P.max()))
                if a in excess:
                    excess[a] = max([excess[a]] + [float((P - pr[None, :]).max())
                                                   for pr in prior[j]])
    order, baseline = order_attack(res)
    return {"identity": ident, "value": value, "excess": excess, "order": order,
            "order_baseline": baseline}


def order_attack(res: LGBResult) -> tuple[dict, dict]:
    """The row-order adversary: for every bucketized attribute A, the share
    of its bucketized cells whose true value it recovers by ranking a
    bucket's rows by published position or by record ID (ascending or
    descending: the best of the four) and giving the r-th row the bucket's
    r-th smallest value.  With the input sorted by A and the rows kept in
    input order this recovers every value; in a uniformly random order it
    recovers, on average, ``baseline[A]`` = the mean over cells of the share
    of their value in their bucket, 1/|b| for an l-diversity bucket (at most
    1/l, Lemma 2).

    Returns ``(order, baseline)``, two dicts by attribute.
    """
    ids = res.table["ID"].to_numpy() if "ID" in res.table.columns else np.arange(res.n)
    if not np.issubdtype(ids.dtype, np.number):
        ids = np.unique(ids.astype(str), return_inverse=True)[1]
    order, baseline = {}, {}
    for j, a in enumerate(res.attributes):
        inb = res.bid[j] >= 0
        if res.roles[a] == "qi" or not inb.any():
            continue
        b, c = res.bid[j, inb], res.codes[j, inb]
        by_value = np.lexsort((c, b))
        best = 0.0
        for rank in (np.flatnonzero(inb), ids[inb].astype(np.float64)):
            for sign in (1, -1):
                guess = np.empty_like(c)
                guess[np.lexsort((sign * rank, b))] = c[by_value]
                best = max(best, float((guess == c).mean()))
        order[a] = best
        baseline[a] = _order_baseline(b, c, res.domains[j].d)
    return order, baseline


def _order_baseline(b: np.ndarray, c: np.ndarray, d: int) -> float:
    """Mean over cells of |b(v)| / |b|: the expected success of matching a
    uniformly random order to the sorted values."""
    keys, n_bv = np.unique(b * d + c, return_counts=True)
    size = np.bincount(b)[keys // d]
    return float((n_bv.astype(np.float64) ** 2 / size).sum() / c.size)
