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
    t-closeness bucket is within t; that every flagged (sensitive) cell is in
    a bucket (or suppressed) and never generalized, and every QI cell never in
    a bucket.  Returns ``{'ok': bool, 'violations': [str, ...]}``.
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
            from ...emd import emd_batch
            d = res.domains[j].d
            P = np.zeros((bsz.size, d), dtype=np.int64)
            np.add.at(P, (b, c), 1)
            P = P[bsz > 0]
            if d > 1 and float(emd_batch(P, P.sum(0), res.grounds[a]).max()) > \
                    res.closeness[a] + 1e-9:
                v.append(f"{a}: a bucket is farther than t={res.closeness[a]}")
            continue
        la = res.l[a]
        if bsz[bsz > 0].min() < la:
            v.append(f"{a}: a bucket has {int(bsz[bsz > 0].min())} < l={la} values")
        pair = b * res.domains[j].d + c
        if np.unique(pair).size != pair.size:
            v.append(f"{a}: a value appears twice in a bucket")
        # the published multiset of a bucket is its true one
        shown = res.shown[j, inb]
        if not np.array_equal(np.sort(b * res.domains[j].d + shown), np.sort(pair)):
            v.append(f"{a}: shown values differ from the bucket's values")
    return {"ok": not v, "violations": v}


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
    r's bucket in A (Lemma 2; a suppressed cell counts as uniform over A's
    domain).

    Returns a dict with ``identity`` (max over targets of 1/|M|),
    ``value[A]`` (max over targets and values of p(t, s)) and, for
    t-closeness attributes, ``excess[A]`` (max of p(t, s) - p(s)).
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
        Bx = np.vstack([B, np.zeros((1, d)), np.full((1, d), 1.0 / d)])
        rb[res.qi_mask[:, j]] = Bx.shape[0] - 2          # QI cell: contributes nothing
        rb[res.suppressed[j]] = Bx.shape[0] - 1          # '*': uniform
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
        prior[j] = np.bincount(allc, minlength=d) / max(allc.size, 1)
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
                    excess[a] = max(excess[a], float((P - prior[j][None, :]).max()))
    return {"identity": ident, "value": value, "excess": excess}
