"""The adversary who reads a row's sets of two sensitive columns and knows
their joint distribution: how often it names the row's true value of one of
them, beside the adversary who reads that column's set alone.

Paper 000's guarantees hold per attribute.  Two sensitive columns that tell
much about each other are two independent draws around one person's values,
and their sets intersect: Adult's education and education-num (one a recode
of the other) published at l = 3 leave a single consistent education for
74 % of the rows.  This module measures that adversary; the publishers refuse
a column it names nearly in the clear (:func:`anonset.validate.check_set_pairs`).

The measure is a Monte Carlo one over rows sampled from the table: each
row's sets are drawn by the mechanism (Sec. V-C3: a set is kappa_c likely if
it holds the true value, kappa_d if not) from a generator under a fixed key,
so one table and one (p, eta) per column always give the same figures, on
every path.  The adversary's joint distribution is the sample's counts with
the row itself left out (what the other rows teach it); it names

    argmax_v  L_a(S_a | v) * sum_w J(v, w) L_b(S_b | w),

a tie settled by the set alone (the marginal), then split evenly.  It is
*certain* where every other value of S_a has no row in J consistent with
S_b, and that absence is no accident: the rows expected there if the two
columns were independent are at least ln(1 / alpha) (the chance of seeing
none, e^-E, below alpha, as :meth:`anonset.passthrough.ValueSample.given_away`
asks of a value that gives another away).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

__all__ = ["SAMPLE_ROWS", "draw_members", "pair_adversary", "group_adversary", "group_bound",
           "linear_rule", "rule_adversary", "recode_lambda", "set_ratio"]

#: Rows of the table the pairs are measured on (drawn as
#: :class:`anonset.passthrough.RowSample` draws them: the same on every path).
SAMPLE_ROWS = 1 << 14
#: Multiply-adds of the posteriors at most over all pairs of one release.
TOTAL_WORK = 1 << 31
#: Rows a pair is measured on at least (where the budget leaves fewer).
MIN_ROWS = 2048
#: Cells of a three-column count table held densely at most (else sorted keys).
DENSE_CELLS = 1 << 24
#: Rows a three-column group is measured on at most.
GROUP_ROWS = 1 << 14
#: Random keys drawn at most per column and batch (rows x domain size).
_KEYS = 1 << 22


def set_ratio(p: float, eta: int, d: int) -> float:
    """kappa_d / kappa_c (Sec. V-C3): how much likelier a set is under a
    value it holds than under one it lacks, inverted (0 where p = 1)."""
    incl = p + (1.0 - p) * eta / d                 # eq. 19
    return 0.0 if incl >= 1.0 or eta >= d else (1.0 - incl) / incl * eta / (d - eta)


def generator(name: str) -> np.random.Generator:
    """The fixed generator of a column's measured sets (not a release's)."""
    h = hashlib.sha256(b"anonset-set-pairs\0" + name.encode("utf-8")).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "little")))


def _distinct(rng: np.random.Generator, m: int, k: int, n: int) -> np.ndarray:
    """(m, k) values of [0, n), distinct within each row, uniformly."""
    if k <= 0:
        return np.zeros((m, 0), dtype=np.int64)
    if k >= n:
        return np.broadcast_to(np.arange(n), (m, n)).copy()
    out = np.empty((m, k), dtype=np.int64)
    step = max(1, _KEYS // n)
    for lo in range(0, m, step):
        keys = rng.random((min(step, m - lo), n))
        out[lo:lo + step] = np.argpartition(keys, k - 1, axis=1)[:, :k]
    return out


def draw_members(x: np.ndarray, d: int, p: float, eta: int,
                 rng: np.random.Generator) -> np.ndarray:
    """(m, eta) members of each row's set, drawn as the publishers draw them
    (eq. 19): with probability p the true value ``x`` and eta - 1 others at
    random, else eta values at random."""
    x = np.asarray(x, dtype=np.int64)
    m = x.size
    coin = rng.random(m) < p if p < 1.0 else np.ones(m, dtype=bool)
    out = np.empty((m, eta), dtype=np.int64)
    if coin.any():
        others = _distinct(rng, int(coin.sum()), eta - 1, d - 1)
        xc = x[coin][:, None]
        out[coin] = np.concatenate([xc, others + (others >= xc)], axis=1)
    if (~coin).any():
        out[~coin] = _distinct(rng, int((~coin).sum()), eta, d)
    return out


def _likelihood(members: np.ndarray, u: int, ratio: float) -> np.ndarray:
    """(u, m) L(S | v) / kappa_c over the first ``u`` codes (values by rows:
    reductions run over values, across rows): 1 where v is in the set,
    kappa_d / kappa_c where not."""
    m = members.shape[0]
    L = np.full((u, m), ratio, dtype=np.float64)
    rows = np.repeat(np.arange(m), members.shape[1])
    vals = members.ravel()
    inside = vals < u
    L[vals[inside], rows[inside]] = 1.0
    return L


def _named(post: np.ndarray, alone: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Credit per row of naming argmax ``post`` (values by rows; ties: by
    ``alone``, then split evenly) when the true value is ``x``."""
    best = post.max(axis=0)
    cand = post >= best * (1.0 - 1e-12)
    sec = np.where(cand, alone, -1.0)
    fin = cand & (sec >= sec.max(axis=0) * (1.0 - 1e-12))
    return fin[x, np.arange(x.size)] / fin.sum(axis=0)


def _direction(x, y, La, Lb, J, alpha_e, exact_sets):
    """Figures of naming x from both sets (La, Lb: values by rows, over the
    held codes) with the joint J (values of x by values of y), each row left
    out."""
    m = x.size
    r = np.arange(m)
    Px = J.sum(axis=1)
    W = J @ Lb                                   # sum_w J(v, w) L_b(S_b | w)
    W[x, r] -= Lb[y, r]                          # the row itself left out
    post = La * W
    alone = La * Px[:, None]
    alone[x, r] -= La[x, r]
    with_ = _named(post, alone, x)
    alone_ = _named(alone, alone, x)
    if not exact_sets:                           # kappa_d > 0: never certain
        return with_, alone_, np.zeros(m, bool), np.zeros(m, bool)
    own = post[x, r]
    certain = (own > 0) & (post.sum(axis=0) - own <= 0)
    # an absence is evidence only where independence would put rows there
    Pn = Px / max(1.0, Px.sum())
    Py = J.sum(axis=0) / max(1.0, J.sum())
    expected = m * (Pn @ La - Pn[x]) * (Py @ Lb)
    certain &= expected >= alpha_e
    own1 = alone[x, r]
    certain1 = (own1 > 0) & (alone.sum(axis=0) - own1 <= 0)
    return with_, alone_, certain, certain1


def _named_at(post: np.ndarray, alone: np.ndarray) -> np.ndarray:
    """:func:`_named` over each row's members (members by rows), the true
    value the first member."""
    best = post.max(axis=0)
    cand = post >= best * (1.0 - 1e-12)
    sec = np.where(cand, alone, -1.0)
    fin = cand & (sec >= sec.max(axis=0) * (1.0 - 1e-12))
    return fin[0] / fin.sum(axis=0)


def _exact_sets(xa, xb, ma, mb, J, alpha_e) -> dict:
    """:func:`pair_adversary` where p = 1 for both columns: every set holds
    its true value (its first member), and a value's posterior is nothing
    outside its set, so only the members' eta_a x eta_b cells of J count."""
    m = xa.size
    ua, ub = J.shape
    Jp = np.zeros((ua + 1, ub + 1))              # a member nobody in the sample holds: 0
    Jp[:ua, :ub] = J
    Pa, Pb = np.append(J.sum(axis=1), 0.0), np.append(J.sum(axis=0), 0.0)
    # members by rows, so that every reduction runs across rows
    ma, mb = np.minimum(ma, ua).T.copy(), np.minimum(mb, ub).T.copy()
    step = max(1, (1 << 23) // (ma.shape[0] * mb.shape[0]))
    acc = {k: np.zeros(3) for k in "ab"}
    for lo in range(0, m, step):
        a, b = ma[:, lo:lo + step], mb[:, lo:lo + step]
        G = Jp[a[:, None, :], b[None, :, :]]     # J over the pairs of members
        for k, (W, own, P, other, Po) in (("a", (G.sum(axis=1), a, Pa, b, Pb)),
                                          ("b", (G.sum(axis=0), b, Pb, a, Pa))):
            W[0] -= 1.0                          # the row itself left out
            alone = P[own]
            alone[0] -= 1.0
            named, named1 = _named_at(W, alone), _named_at(alone, alone)
            certain = (W[0] > 0) & (W[1:].sum(axis=0) <= 0)
            # an absence is evidence only where independence would put rows
            expected = P[own[1:]].sum(axis=0) * Po[other].sum(axis=0) / m
            certain &= expected >= alpha_e
            certain1 = (alone[0] > 0) & (alone[1:].sum(axis=0) <= 0)
            acc[k] += [named.sum(), named1.sum(), (certain & ~certain1).sum()]
    out = {}
    for k, P in (("a", Pa), ("b", Pb)):
        out[k] = {"success": acc[k][0] / m, "alone": acc[k][1] / m,
                  "prior": float(P.max() / m), "certain": acc[k][2] / m}
    return out


def pair_adversary(xa: np.ndarray, xb: np.ndarray, ma: np.ndarray, mb: np.ndarray,
                   ratio_a: float, ratio_b: float, *, alpha: float = 1e-6) -> dict:
    """The two directions of the pair adversary over m sampled rows.

    ``xa``, ``xb``: the rows' codes (compact: 0 .. u - 1 over the values the
    sample holds); ``ma``, ``mb``: (m, eta) members of each row's sets in the
    same codes (a member the sample does not hold: any code >= u);
    ``ratio_*``: kappa_d / kappa_c of each column.  Returns, per direction
    ``'a'`` (naming xa) and ``'b'``: ``success`` (both sets), ``alone`` (its
    own set), ``prior`` (the most common value's share), ``certain`` (share
    of the rows named with certainty that the set alone leaves uncertain)."""
    xa, xb = np.asarray(xa, np.int64), np.asarray(xb, np.int64)
    m = xa.size
    ua, ub = int(xa.max()) + 1, int(xb.max()) + 1
    J = np.zeros((ua, ub), dtype=np.float64)
    np.add.at(J, (xa, xb), 1.0)
    exact_sets = ratio_a == 0.0 and ratio_b == 0.0
    alpha_e = math.log(1.0 / alpha)
    if exact_sets:
        return _exact_sets(xa, xb, np.asarray(ma), np.asarray(mb), J, alpha_e)
    acc = {k: np.zeros(3) for k in "ab"}
    step = max(1, (1 << 22) // max(ua, ub))
    for lo in range(0, m, step):
        s = slice(lo, lo + step)
        La = _likelihood(ma[s], ua, ratio_a)
        Lb = _likelihood(mb[s], ub, ratio_b)
        for k, (x, y, L1, L2, JJ) in (("a", (xa[s], xb[s], La, Lb, J)),
                                      ("b", (xb[s], xa[s], Lb, La, J.T))):
            w, a1, c, c1 = _direction(x, y, L1, L2, np.ascontiguousarray(JJ), alpha_e,
                                      exact_sets)
            acc[k] += [w.sum(), a1.sum(), (c & ~c1).sum()]
    out = {}
    for k, J_ in (("a", J), ("b", J.T)):
        tot = acc[k]
        out[k] = {"success": tot[0] / m, "alone": tot[1] / m,
                  "prior": float(J_.sum(axis=1).max() / m), "certain": tot[2] / m}
    return out


def _lookup(keys: np.ndarray, uniq: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The count of each key among ``uniq`` (sorted), 0 where absent."""
    if not uniq.size:
        return np.zeros(keys.shape)
    i = np.minimum(np.searchsorted(uniq, keys), uniq.size - 1)
    return np.where(uniq[i] == keys, counts[i], 0).astype(np.float64)


def group_adversary(xt: np.ndarray, mt: np.ndarray, helpers, *,
                    alpha: float = 1e-6) -> dict:
    """The adversary who reads a row's set of column t (p = 1) and two other
    columns of the row (each a p = 1 set, or a column published exactly: a
    set of one, its value), and knows the three columns' joint
    distribution: :func:`pair_adversary`'s figures for naming t.

    ``xt``: t's compact codes (0 .. u - 1 over the values the sample holds),
    ``mt``: (m, eta) its members (the true value first; a value the sample
    does not hold: code u); ``helpers``: two (codes, members) of the same
    kind ((m, 1) members: the value itself).  Age from the survey year and
    the birth year, or schooling as age less experience less six: no two
    of the columns determine the third, all three together do."""
    xt = np.asarray(xt, np.int64)
    m = xt.size
    cols = [(xt, np.minimum(mt, int(xt.max()) + 1))]
    for x, mem in helpers:
        x = np.asarray(x, np.int64)
        cols.append((x, np.minimum(np.asarray(mem, np.int64), int(x.max()) + 1)))
    radix = [int(x.max()) + 2 for x, _ in cols]             # the last: nobody's value

    def key(parts):
        k = np.zeros(np.broadcast_shapes(*[p.shape for p in parts]), dtype=np.int64)
        for p, r in zip(parts, radix[-len(parts):]):
            k = k * r + p
        return k
    full = key([x for x, _ in cols])
    hkey = key([x for x, _ in cols[1:]])
    total = radix[0] * radix[1] * radix[2]
    if total <= DENSE_CELLS:                    # counts by position: a gather each
        dense = np.bincount(full, minlength=total).astype(np.float64)
        hdense = np.bincount(hkey, minlength=radix[1] * radix[2]).astype(np.float64)

        def count(k):
            return dense[k]

        def hcount(k):
            return hdense[k]
    else:
        uniq, counts = np.unique(full, return_counts=True)
        uh, ch = np.unique(hkey, return_counts=True)

        def count(k):
            return _lookup(k, uniq, counts)

        def hcount(k):
            return _lookup(k, uh, ch)
    Pt = np.bincount(xt, minlength=radix[0]).astype(np.float64)
    alpha_e = math.log(1.0 / alpha)
    (_, a), (_, b), (_, c) = cols
    acc = np.zeros(3)
    step = max(1, (1 << 22) // (a.shape[1] * b.shape[1] * c.shape[1]))
    for lo in range(0, m, step):
        s = slice(lo, lo + step)
        A, B, C = a[s][:, :, None, None], b[s][:, None, :, None], c[s][:, None, None, :]
        W = count(key([A, B, C])).sum(axis=(2, 3)).T   # members by rows
        W[0] -= 1.0                                  # the row itself left out
        alone = Pt[a[s]].T.copy()
        alone[0] -= 1.0
        named, named1 = _named_at(W, alone), _named_at(alone, alone)
        certain = (W[0] > 0) & (W[1:].sum(axis=0) <= 0)
        # an absence is evidence only where independence would put rows
        helpers_rows = hcount(key([b[s][:, :, None], c[s][:, None, :]])).sum(axis=(1, 2))
        expected = Pt[a[s][:, 1:]].sum(axis=1) * helpers_rows / m
        certain &= expected >= alpha_e
        certain1 = (alone[0] > 0) & (alone[1:].sum(axis=0) <= 0)
        acc += [named.sum(), named1.sum(), (certain & ~certain1).sum()]
    return {"success": acc[0] / m, "alone": acc[1] / m, "prior": float(Pt.max() / m),
            "certain": acc[2] / m}


def group_bound(xt: np.ndarray, d: int, eta: int, helpers) -> tuple:
    """Upper bounds of :func:`group_adversary`'s (success, certain) where
    the two helpers are known exactly (their sets tell no more than their
    values): the set adversary among the rows with the row's helper values
    (:func:`anonset.passthrough.set_success`, leave one out), and certain
    where every other member of t's set is a value none of those other rows
    holds, C(d - k, eta - 1) / C(d - 1, eta - 1) with k the values they
    hold.  Cheap, so only groups that could reach a threshold are drawn."""
    from ..passthrough import ValueSample, _mix64, set_success
    from .set_adversary import log_factorials
    xt = np.asarray(xt, np.int64)
    g = np.zeros(xt.size, dtype=np.int64)
    for x, _ in helpers:
        x = np.asarray(x, np.int64)
        g = g * (int(x.max()) + 1) + x
    gu, ginv = np.unique(g, return_inverse=True)
    ginv = ginv.ravel()
    vs = ValueSample(None)
    vs.add(_mix64(ginv.astype(np.uint64)), xt)
    success = set_success(vs, d, eta)
    # per (group, value): its rows; per group: the values held
    ut = int(xt.max()) + 1
    pair = ginv * ut + xt
    if gu.size * ut <= DENSE_CELLS:
        pc = np.bincount(pair, minlength=gu.size * ut)
        k = (pc.reshape(gu.size, ut) > 0).sum(axis=1)[ginv]
        own = pc[pair] >= 2                              # another row holds the value too
    else:
        pu, pinv, pcnt = np.unique(pair, return_inverse=True, return_counts=True)
        k = np.bincount(pu // ut, minlength=gu.size)[ginv]
        own = pcnt[pinv.ravel()] >= 2
    lf = log_factorials(d)
    e = eta - 1
    z = np.maximum(d - k, e)
    p = np.where(d - k >= e, np.exp(lf[z] - lf[e] - lf[z - e]
                                    - (lf[d - 1] - lf[e] - lf[d - 1 - e])), 0.0)
    return success, float(np.where(own, p, 0.0).mean())


def linear_rule(t: np.ndarray, h1: np.ndarray, h2: np.ndarray, spacing: float):
    """(c1, c2, c0, tol) where t = c1 h1 + c2 h2 + c0 within tol for 99 %
    of the rows and that window holds at most three of t's values
    (``spacing``: their typical distance), else None.  A derived column
    (experience = age - schooling - 6, age = year - birth year - 0 or 1)
    is a rule that whoever knows the columns knows, however few rows share
    a combination of the two others: the joint counts of a small table do
    not show it, so it is measured by itself."""
    t, h1, h2 = (np.asarray(v, dtype=np.float64) for v in (t, h1, h2))
    if t.size < 30 or not (np.ptp(h1) > 0 and np.ptp(h2) > 0 and np.ptp(t) > 0):
        return None
    X = np.column_stack([h1, h2, np.ones_like(h1)])
    c, *_ = np.linalg.lstsq(X, t, rcond=None)
    if not np.all(np.isfinite(c)) or abs(c[0]) < 1e-9 or abs(c[1]) < 1e-9:
        return None
    tol = float(np.quantile(np.abs(t - X @ c), 0.99)) + 1e-9
    if 2.0 * tol >= 3.0 * spacing:
        return None
    return float(c[0]), float(c[1]), float(c[2]), tol


def rule_adversary(vt: np.ndarray, mt: np.ndarray, helpers, rule, prior_counts) -> dict:
    """The adversary who reads a row's set of t (p = 1) and the two
    helpers (sets, or values published exactly: (m, 1) members) and knows
    the :func:`linear_rule` between them: it keeps t's members that some
    pair of the helpers' members puts within the rule's window, and names
    the most common of those (the set alone's choice where none is kept).
    ``vt``: t's number per code; ``mt``: (m, eta) t's members (codes, the
    true value first); ``helpers``: two (None, numbers of the members);
    ``prior_counts``: t's rows per code."""
    c1, c2, c0, tol = rule
    (_, m1), (_, m2) = helpers
    pred = c1 * m1[:, :, None] + c2 * m2[:, None, :] + c0          # (m, e1, e2)
    pred = pred.reshape(pred.shape[0], -1)
    vals = vt[mt]                                                   # (m, et)
    ok = (np.abs(vals[:, :, None] - pred[:, None, :]) <= tol).any(axis=2)
    alone = prior_counts[mt].astype(np.float64)
    alone[:, 0] -= 1.0
    score = np.where(ok, alone + 1.0, 0.0)          # kept members, the likelier first
    score = np.where(ok.any(axis=1)[:, None], score, alone)
    top = score >= score.max(axis=1, keepdims=True)
    named = top[:, 0] / top.sum(axis=1)
    top1 = alone >= alone.max(axis=1, keepdims=True)
    named1 = top1[:, 0] / top1.sum(axis=1)
    certain = ok[:, 0] & (ok.sum(axis=1) == 1)
    m = mt.shape[0]
    return {"success": float(named.sum() / m), "alone": float(named1.sum() / m),
            "prior": float(prior_counts.max() / max(1, prior_counts.sum())),
            "certain": float(certain.sum() / m)}


def recode_lambda(xa: np.ndarray, xb: np.ndarray) -> float:
    """Goodman and Kruskal's lambda of predicting ``xa`` from ``xb`` (1: one
    recodes the other)."""
    xa, xb = np.asarray(xa, np.int64), np.asarray(xb, np.int64)
    J = np.zeros((int(xa.max()) + 1, int(xb.max()) + 1))
    np.add.at(J, (xa, xb), 1.0)
    n, top = J.sum(), J.sum(axis=1).max()
    return float((J.max(axis=0).sum() - top) / (n - top)) if n > top else float("nan")
