"""The adversary who reads a row's sets of two sensitive columns (or of a
column and two others) and knows their joint distribution: how often it
names the row's true value of one of them, beside the adversary who reads
that column's set alone.

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
every path.  The adversary learns the joint distribution from the other
half of the sample (two folds, each attacked with what the other teaches:
what it learns is never the row itself) and names

    argmax_v  L_a(S_a | v) * sum_w J(v, w) L_b(S_b | w),

a tie settled by the set alone (the marginal), then split evenly.  It
*pins* a row where one value of S_a alone is consistent with what it read
(p = 1); a pin is right or wrong, and the share of right pins, with the
share of the pins that are right (its precision), is what a publisher
compares with its thresholds.  A pin of a value that at least 90 % of the
rows hold does not count (guessing it is already nearly in the clear for
everyone, as :meth:`anonset.passthrough.ValueSample.given_away` says), nor
one that the set alone makes (a declared value nobody holds).
"""
from __future__ import annotations

import hashlib
import itertools

import numpy as np

__all__ = ["SAMPLE_ROWS", "draw_members", "pair_adversary", "group_adversary", "group_bound",
           "cross_lambda", "known_success", "linear_rule", "rule_adversary", "recode_lambda", "set_ratio"]

#: Rows of the table the pairs are measured on (drawn as
#: :class:`anonset.passthrough.RowSample` draws them: the same on every path).
SAMPLE_ROWS = 1 << 13
#: Multiply-adds of the posteriors at most over all pairs of one release.
TOTAL_WORK = 1 << 31
#: Rows a pair is measured on at least (where the budget leaves fewer).
MIN_ROWS = 2048
#: Cells of a three-column count table held densely at most (else sorted keys).
DENSE_CELLS = 1 << 24
#: Rows a three-column group is measured on at most.
GROUP_ROWS = 1 << 13
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


def _named_at(post: np.ndarray, alone: np.ndarray) -> np.ndarray:
    """:func:`_named` over each row's members (members by rows), the true
    value the first member."""
    best = post.max(axis=0)
    cand = post >= best * (1.0 - 1e-12)
    sec = np.where(cand, alone, -1.0)
    fin = cand & (sec >= sec.max(axis=0) * (1.0 - 1e-12))
    return fin[0] / fin.sum(axis=0)


def _folds(m: int) -> np.ndarray:
    """Each sampled row's fold (0, 1): the sample is in random order."""
    return np.arange(m) & 1


def _dominant(x: np.ndarray) -> np.ndarray:
    """Per row: whether its value is held by at least ``DETERMINES`` of the
    sample (a pin of it does not count)."""
    from ..passthrough import DETERMINES
    share = np.bincount(x) / max(1, x.size)
    return share[x] >= DETERMINES


def _tally(W: np.ndarray, alone: np.ndarray, dominant: np.ndarray) -> np.ndarray:
    """[named, named by the set alone, right pins, wrong pins] over rows
    whose members (members by rows, the true value first) have the scores
    ``W`` (both columns read) and ``alone`` (the set alone)."""
    from ..passthrough import DETERMINES
    named, named1 = _named_at(W, alone), _named_at(alone, alone)
    pos = W > 0
    pin = pos.sum(axis=0) == 1
    # what the set alone already tells: a pin counts only where the set
    # alone leaves the adversary unsure of the value it pins (below
    # DETERMINES): where a set's other values are rare, the set alone is
    # as good as sure already, and their absence from a few rows' cells
    # is no evidence (independent columns pin such rows by chance)
    tot1 = alone.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sure1 = np.where(tot1 > 0, alone / tot1, 0.0)
    top = np.argmax(pos, axis=0)
    unsure = sure1[top, np.arange(top.size)] < DETERMINES
    right = pin & pos[0] & ~dominant & unsure
    wrong = pin & ~pos[0] & unsure
    return np.array([named.sum(), named1.sum(), right.sum(), wrong.sum()], dtype=np.float64)


def _figures(acc: np.ndarray, m: int, prior: float) -> dict:
    return {"success": acc[0] / m, "alone": acc[1] / m, "prior": prior,
            "certain": acc[2] / m, "wrong": acc[3] / m}


def _exact_sets(xa, xb, ma, mb, ua, ub) -> dict:
    """:func:`pair_adversary` where p = 1 for both columns: every set holds
    its true value (its first member), and a value's posterior is nothing
    outside its set, so only the members' eta_a x eta_b cells of J count."""
    m = xa.size
    fold = _folds(m)
    dom = {"a": _dominant(xa), "b": _dominant(xb)}
    acc = {k: np.zeros(4) for k in "ab"}
    # members by rows, so that every reduction runs across rows; a member
    # nobody in the training fold holds reads the zero row or column
    MA, MB = np.minimum(ma, ua).T, np.minimum(mb, ub).T
    for f in (0, 1):
        train, test = fold != f, np.flatnonzero(fold == f)
        J = np.zeros((ua + 1, ub + 1))
        np.add.at(J, (xa[train], xb[train]), 1.0)
        Pa, Pb = J.sum(axis=1), J.sum(axis=0)
        step = max(1, (1 << 23) // (MA.shape[0] * MB.shape[0]))
        for lo in range(0, test.size, step):
            rows = test[lo:lo + step]
            a, b = MA[:, rows], MB[:, rows]
            G = J[a[:, None, :], b[None, :, :]]     # J over the pairs of members
            acc["a"] += _tally(G.sum(axis=1), Pa[a], dom["a"][rows])
            acc["b"] += _tally(G.sum(axis=0), Pb[b], dom["b"][rows])
    return {"a": _figures(acc["a"], m, float(np.bincount(xa).max() / m)),
            "b": _figures(acc["b"], m, float(np.bincount(xb).max() / m))}


def pair_adversary(xa: np.ndarray, xb: np.ndarray, ma: np.ndarray, mb: np.ndarray,
                   ratio_a: float, ratio_b: float) -> dict:
    """The two directions of the pair adversary over m sampled rows.

    ``xa``, ``xb``: the rows' codes (compact: 0 .. u - 1 over the values the
    sample holds); ``ma``, ``mb``: (m, eta) members of each row's sets in the
    same codes (the true value first where the set holds it; a member the
    sample does not hold: any code >= u); ``ratio_*``: kappa_d / kappa_c of
    each column.  Returns, per direction ``'a'`` (naming xa) and ``'b'``:
    ``success`` (both sets), ``alone`` (its own set), ``prior`` (the most
    common value's share), ``certain`` and ``wrong`` (shares of the rows it
    pins rightly and wrongly, beyond the set alone; p = 1 only)."""
    xa, xb = np.asarray(xa, np.int64), np.asarray(xb, np.int64)
    m = xa.size
    ua, ub = int(xa.max()) + 1, int(xb.max()) + 1
    if ratio_a == 0.0 and ratio_b == 0.0:
        return _exact_sets(xa, xb, np.asarray(ma), np.asarray(mb), ua, ub)
    fold = _folds(m)
    acc = {k: np.zeros(4) for k in "ab"}
    step = max(1, (1 << 22) // max(ua, ub))
    for f in (0, 1):
        train, test = fold != f, np.flatnonzero(fold == f)
        J = np.zeros((ua, ub))
        np.add.at(J, (xa[train], xb[train]), 1.0)
        for lo in range(0, test.size, step):
            rows = test[lo:lo + step]
            La, Lb = _likelihood(ma[rows], ua, ratio_a), _likelihood(mb[rows], ub, ratio_b)
            for k, x, L1, L2, JJ in (("a", xa[rows], La, Lb, J), ("b", xb[rows], Lb, La, J.T)):
                post = L1 * (JJ @ L2)                 # sum_w J(v, w) L_2(S_2 | w)
                alone = L1 * JJ.sum(axis=1)[:, None]
                acc[k] += [_named(post, alone, x).sum(), _named(alone, alone, x).sum(), 0, 0]
    return {"a": _figures(acc["a"], m, float(np.bincount(xa).max() / m)),
            "b": _figures(acc["b"], m, float(np.bincount(xb).max() / m))}


def _lookup(keys: np.ndarray, uniq: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The count of each key among ``uniq`` (sorted), 0 where absent."""
    if not uniq.size:
        return np.zeros(keys.shape)
    i = np.minimum(np.searchsorted(uniq, keys), uniq.size - 1)
    return np.where(uniq[i] == keys, counts[i], 0).astype(np.float64)


def _counter(keys: np.ndarray, size: int):
    """A function giving the count of each key among ``keys``: by position
    (a dense table) where ``size`` cells are few, else by sorted keys."""
    if size <= DENSE_CELLS:
        dense = np.bincount(keys, minlength=size).astype(np.float64)
        return lambda k: dense[k]
    uniq, counts = np.unique(keys, return_counts=True)
    return lambda k: _lookup(k, uniq, counts)


def group_adversary(xt: np.ndarray, mt: np.ndarray, helpers) -> dict:
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
    total = radix[0] * radix[1] * radix[2]
    kt = np.int32 if total < 2 ** 31 else np.int64
    # a cell's key: t * r1 r2 + h1 * r2 + h2, its parts scaled once
    scale = (radix[1] * radix[2], radix[2], 1)
    full = sum(x.astype(np.int64) * w for (x, _), w in zip(cols, scale)).astype(kt)
    a, b, c = ((mem * w).astype(kt) for (_, mem), w in zip(cols, scale))
    dom = _dominant(xt)
    fold = _folds(m)
    acc = np.zeros(4)
    step = max(1, (1 << 22) // (a.shape[1] * b.shape[1] * c.shape[1]))
    for f in (0, 1):
        train, test = fold != f, np.flatnonzero(fold == f)
        count = _counter(full[train], total)
        Pt = np.bincount(xt[train], minlength=radix[0]).astype(np.float64)
        for lo in range(0, test.size, step):
            rows = test[lo:lo + step]
            BC = b[rows][:, :, None] + c[rows][:, None, :]          # (r, e1, e2)
            K = a[rows][:, :, None] + BC.reshape(rows.size, 1, -1)  # (r, et, e1 e2)
            W = count(K).sum(axis=2).T                           # members by rows
            acc += _tally(W, Pt[a[rows] // scale[0]].T, dom[rows])
    return _figures(acc, m, float(np.bincount(xt).max() / m))


def _cells(helpers) -> tuple:
    """Each row's cell of the helpers' values (0 .. n - 1), and n."""
    g = np.zeros(np.asarray(helpers[0][0]).size, dtype=np.int64)
    for x, _ in helpers:
        x = np.asarray(x, np.int64)
        g = g * (int(x.max()) + 1) + x
    _, ginv = np.unique(g, return_inverse=True)
    ginv = ginv.ravel()
    return ginv, int(ginv.max()) + 1 if ginv.size else 0


def group_bound(xt: np.ndarray, d: int, eta: int, helpers) -> float:
    """A bound of :func:`group_adversary`'s right pins: the expected share
    of the rows every other member of whose set no training row with the
    row's own two helper values holds, C(z, eta - 1) / C(d - 1, eta - 1)
    with z the values other than the row's own that none of those rows
    holds.  A right pin by the sets needs that: the sets of the helpers (p
    = 1) hold the row's own helper values, and every other member of t's
    set must be nowhere among the cells they span.  Cheap (no draws), so
    only threes that could reach the threshold are drawn."""
    from ..passthrough import DETERMINES
    from .set_adversary import log_factorials
    xt = np.asarray(xt, np.int64)
    ginv, n_cells = _cells(helpers)
    ut = int(xt.max()) + 1
    lf = log_factorials(d)
    e = eta - 1
    fold = _folds(xt.size)
    total = 0.0
    for f in (0, 1):
        train, test = fold != f, np.flatnonzero(fold == f)
        held = np.zeros(n_cells * ut, dtype=bool)
        held[ginv[train] * ut + xt[train]] = True
        k = held.reshape(n_cells, ut).sum(axis=1)[ginv[test]]
        own = held[ginv[test] * ut + xt[test]]
        z = (d - 1) - (k - own)                        # others nobody there holds
        zc = np.maximum(z, e)
        p = np.where(z >= e, np.exp(lf[zc] - lf[e] - lf[zc - e]
                                    - (lf[d - 1] - lf[e] - lf[d - 1 - e])), 0.0)
        # and the set alone unsure of the value (its other members at least
        # a ninth of its rows: DETERMINES), which even the most common other
        # values cannot make it for a common one; nor a value 90 % hold
        P = np.bincount(xt[train], minlength=ut).astype(np.float64)
        top = np.sort(P)[::-1]
        pt = P[xt[test]]
        others = np.where(pt >= top[min(e, top.size) - 1] if e >= 1 else True,
                          top[:e + 1].sum() - pt, top[:e].sum())
        possible = (others > pt * (1.0 - DETERMINES) / DETERMINES) & ~_dominant(xt)[test]
        total += np.where(possible, p, 0.0).sum()
    return float(total / xt.size)


def known_success(xt: np.ndarray, mt: np.ndarray, xo: np.ndarray) -> float:
    """How often the adversary who reads t's set (p = 1; compact codes, the
    true value first) and knows the other column's value exactly names t
    (each fold learning from the other): near what it can do with the other
    column's set instead, which tells no more than its value (a screen for
    pairs, with a margin)."""
    xt, xo = np.asarray(xt, np.int64), np.asarray(xo, np.int64)
    ut, uo = int(max(xt.max(), mt.max())) + 1, int(xo.max()) + 1
    fold = _folds(xt.size)
    named = 0.0
    for f in (0, 1):
        train, test = fold != f, np.flatnonzero(fold == f)
        J = np.zeros((ut, uo))
        np.add.at(J, (xt[train], xo[train]), 1.0)
        mem = mt[test].T                                  # members by rows
        named += _named_at(J[mem, xo[test]], J.sum(axis=1)[mem]).sum()
    return float(named / xt.size)


def cross_lambda(xt: np.ndarray, helpers) -> float:
    """Goodman and Kruskal's lambda of predicting t from the two helpers'
    values, each fold by the other's most common t in the row's cell (the
    overall one where the other fold has no row there): how much the
    helpers, known exactly, tell about t beyond its most common value."""
    xt = np.asarray(xt, np.int64)
    ginv, G = _cells(helpers)
    ut = int(xt.max()) + 1
    fold = _folds(xt.size)
    right = 0
    for f in (0, 1):
        train, test = fold != f, fold == f
        counts = np.zeros((G, ut))
        np.add.at(counts, (ginv[train], xt[train]), 1.0)
        guess = np.where(counts.sum(axis=1) > 0, counts.argmax(axis=1),
                         np.bincount(xt[train], minlength=ut).argmax())
        right += int((guess[ginv[test]] == xt[test]).sum())
    prior = np.bincount(xt).max() / xt.size
    return float((right / xt.size - prior) / (1.0 - prior)) if prior < 1.0 else 0.0


def linear_rule(t: np.ndarray, h1: np.ndarray, h2: np.ndarray, spacing: float):
    """(c1, c2, c0, tol) where t = c1 h1 + c2 h2 + c0 within tol for 99 %
    of the rows and that window holds at most three of t's values
    (``spacing``: their typical distance), else None.  A derived column
    (experience = age - schooling - 6, age = year - birth year - 0 or 1)
    is a rule that whoever knows the columns knows, however few rows share
    a combination of the two others: the joint counts of a small table do
    not show it, so it is measured by itself."""
    fit = _fit_rule(*(np.asarray(v, dtype=np.float64) for v in (t, h1, h2)), 0.99)
    if fit is None or 2.0 * fit[1] >= 3.0 * spacing:
        return None
    c, tol = fit
    return float(c[0]), float(c[1]), float(c[2]), tol


def _fit_rule(t: np.ndarray, h1: np.ndarray, h2: np.ndarray, share: float):
    """(coefficients, tol): the least-squares t = c1 h1 + c2 h2 + c0, both
    helpers used, and the window that ``share`` of the rows' residuals fit
    in; None where a column is constant or the fit leaves out a helper."""
    return _fit_rule_k(t, [h1, h2], share)


def _fit_rule_k(t: np.ndarray, hs: list, share: float, spacing: float | None = None):
    """:func:`_fit_rule` of any number of helpers: t = sum c_i h_i + c0;
    with ``spacing`` (t's values' typical distance), None too where a
    helper moves t by less than a quarter of it over its central 98 %: it
    adds nothing, and a rule of it named a column that tells nothing
    (H35: 'final = 0 x termGPA + 4.76 x stndfnl')."""
    if t.size < 30 or not (np.ptp(t) > 0 and all(np.ptp(h) > 0 for h in hs)):
        return None
    X = np.column_stack([*hs, np.ones_like(t)])
    # first fitted on the rows inside every column's 0.5 % tails, then
    # twice without the rows it fits worst: a few rows off the rule (a birth
    # year mistyped on 10 of 3,000) pulled the least-squares plane off every
    # other row (H32); the window is still read on every row
    inner = np.isfinite(_trimmed(t))
    for h in hs:
        inner &= np.isfinite(_trimmed(h))
    inner = inner if inner.sum() >= 30 else np.ones(t.size, dtype=bool)
    c, *_ = np.linalg.lstsq(X[inner], t[inner], rcond=None)
    for _ in range(2):
        r = np.abs(t - X @ c)
        keep = r <= np.quantile(r, 0.9)
        if keep.sum() < 30 or not np.all(np.isfinite(c)):
            break
        c, *_ = np.linalg.lstsq(X[keep], t[keep], rcond=None)
    if not np.all(np.isfinite(c)) or np.any(np.abs(c[:-1]) < 1e-9):
        return None
    if spacing is not None:
        spread = [float(np.subtract(*np.quantile(h, [0.99, 0.01]))) for h in hs]
        if any(abs(ci) * sp < spacing / 4 for ci, sp in zip(c[:-1], spread)):
            return None
    tol = float(np.quantile(np.abs(t - X @ c), share)) + 1e-9 * max(1.0, float(np.abs(t).max()))
    return c, tol


#: Rows a pair of helpers is screened on for a linear rule, at most.
RULE_SCREEN_ROWS = 1024


def rule_screen(t: np.ndarray, h1: np.ndarray, h2: np.ndarray, spacing: float,
                values: int) -> bool:
    """Whether t may be a linear rule of h1 and h2 (:func:`linear_rule`)
    that tells something: the same fit on the first ``RULE_SCREEN_ROWS``
    rows, its window read at 95 % of them (more lenient than the rule's
    99 %, so that a rule is not screened out by a few rows that break it),
    and narrower than t's ``values`` values (a window of three of a column
    of two or three values keeps every member of a set: no pin).  Cheap:
    sixteen helpers make 120 pairs a column, and a census table 68
    columns of two to eighteen values."""
    k = min(t.size, RULE_SCREEN_ROWS)
    # rows spread over the sample (a sample handed over sorted by a helper
    # would otherwise show one of its values: H25)
    at = np.linspace(0, t.size - 1, k).astype(np.int64) if t.size else np.zeros(0, np.int64)
    fit = _fit_rule(*(np.asarray(v, dtype=np.float64)[at] for v in (t, h1, h2)), 0.95)
    return fit is not None and 2.0 * fit[1] < min(3.0, values - 1.0) * spacing


#: A screened pair's residuals at most this many times t's value spacing
#: (a standard deviation, on columns without their 0.5 % tails): lenient,
#: the rule itself decides (:func:`rule_recode`).
RULE_SCREEN_SPREAD = 3.0
#: ... or a fit that explains this share of t's variance.
RULE_SCREEN_R2 = 0.95


def _trimmed(x: np.ndarray) -> np.ndarray:
    """A column without its values beyond its 0.5 % and 99.5 % quantiles
    (NaN there): a few values far off (typos) do not hide a rule from the
    correlations, nor pull a fit off every other row."""
    if not np.isfinite(x).any():
        return x
    lo, hi = np.nanquantile(x, [0.005, 0.995])
    return np.where((x >= lo) & (x <= hi), x, np.nan)


def rule_candidates(t: np.ndarray, H: np.ndarray, spacing: float) -> list:
    """Pairs (i, j) of the columns of ``H`` (rows x k numbers, NaN where a
    cell has none) between which a linear rule may give ``t`` (NaN on a row
    it leaves out): the least-squares fit of t on the two leaves residuals of
    a standard deviation below ``RULE_SCREEN_SPREAD`` times ``spacing``
    (t's values' typical distance), read off the columns' correlations
    (R^2 of two regressors from the three correlations, each over the rows
    where both hold a number, without the columns' 0.5 % tails), the
    best fit first.  Matrix products for every pair at once;
    :func:`rule_recode` decides."""
    n, k = H.shape
    if n < 30 or k < 2:
        return []
    t = _trimmed(np.asarray(t, dtype=np.float64))
    H = np.column_stack([_trimmed(H[:, i]) for i in range(k)])
    H[~np.isfinite(t)] = np.nan                      # a row t leaves out, every helper too
    t = np.where(np.isfinite(t), t, 0.0)
    sd_t = float(np.std(t[np.isfinite(H).any(axis=1)])) if np.isfinite(H).any() else 0.0
    if not sd_t > 0:
        return []
    M = np.isfinite(H).astype(np.float64)
    Hz = np.where(M > 0, H, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # every sum over the rows where both helpers of a pair hold a number
        # (one set of rows per pair: three correlations over different rows
        # made an exact rule's R^2 0.91)
        n_ij = M.T @ M
        st, st2 = (M * t[:, None]).T @ M, (M * (t * t)[:, None]).T @ M
        sx, sx2 = Hz.T @ M, (Hz * Hz).T @ M             # h_i's, where h_j holds one
        sxt = (Hz * t[:, None]).T @ M
        sxy = Hz.T @ Hz

        def corr(sa, sb, sab, saa, sbb):
            return (n_ij * sab - sa * sb) / np.sqrt((n_ij * saa - sa * sa) *
                                                    (n_ij * sbb - sb * sb))
        r_i = corr(sx, st, sxt, sx2, st2)               # corr(h_i, t), pair (i, j)'s rows
        r_j = r_i.T                                      # corr(h_j, t), the same rows
        R = corr(sx, sx.T, sxy, sx2, sx2.T)
        den = 1.0 - R * R
        r2 = (r_i ** 2 + r_j ** 2 - 2.0 * r_i * r_j * R) / den
    r2[~(den > 1e-9) | (n_ij < 30)] = np.nan             # two helpers that are one
    resid = sd_t * np.sqrt(np.clip(1.0 - r2, 0.0, None))
    iu, ju = np.triu_indices(k, 1)
    # (or R^2 >= RULE_SCREEN_R2: a few rows off the rule inflate the
    # residuals' spread, not the fit of the others)
    good = np.isfinite(r2[iu, ju]) & ((resid[iu, ju] < RULE_SCREEN_SPREAD * spacing) |
                                      (r2[iu, ju] >= RULE_SCREEN_R2))
    order = np.argsort(resid[iu, ju][good], kind="stable")
    return [(int(iu[good][o]), int(ju[good][o])) for o in order]


#: The share of the rows a rule's window holds (:func:`rule_recode`).
RULE_WINDOW_SHARE = 0.9


def rule_recode(t: np.ndarray, truth: np.ndarray, hs: list, spacing: float,
                classify) -> tuple | None:
    """(lambda, accuracy, prior, (coefficients, tol), rows) of the
    adversary who reads two or three columns published as they are
    (``hs``) and knows the linear rule t = sum c_i h_i + c0 that holds for
    90 % of the rows within a window of at most three of t's values
    (``spacing``: their typical distance), learnt from the other fold: it
    guesses the value (``classify``: a predicted number to its class, the
    value nearest or its bin; ``truth``: each row's class) the rule
    predicts, on the rows where every helper holds a number (``rows``: how
    many).  None where a fold shows no rule."""
    both = np.ones(t.size, dtype=bool)
    for h in hs:
        both &= np.isfinite(h)
    t, truth, hs = t[both], truth[both], [h[both] for h in hs]
    m = t.size
    if m < 30:
        return None
    fold = _folds(m)
    right, rules = 0, []
    for f in (0, 1):
        # fitted where t is a number (a log rule: where it is positive); the
        # guesses scored on every row the helpers give
        train, test = (fold != f) & np.isfinite(t), fold == f
        # the window on 90 % of the rows: a rule broken on 2 % of them was
        # no rule at 99 %, and gave the other 98 % away (H36); the lambda
        # of the guesses decides
        fit = _fit_rule_k(t[train], [h[train] for h in hs], RULE_WINDOW_SHARE, spacing)
        if fit is None or 2.0 * fit[1] >= 3.0 * spacing:
            return None
        c, tol = fit
        rules.append((c, tol))
        pred = sum(ci * h[test] for ci, h in zip(c[:-1], hs)) + c[-1]
        right += int((classify(pred) == truth[test]).sum())
    acc = right / m
    _, counts = np.unique(truth, return_counts=True)
    prior = float(counts.max()) / m
    lam = (acc - prior) / (1.0 - prior) if prior < 1.0 else float("nan")
    return lam, acc, prior, rules[0], m


#: A screened triple's share of t's variance explained at least (on
#: helpers whose missing cells stand at their mean: lower than a pair's).
RULE_TRIPLE_SCREEN_R2 = 0.8
#: Helpers screened for a rule of three (those that tell most of t, by
#: their correlation): C(24, 3) = 2,024 triples a target.
RULE_TRIPLE_HELPERS = 24


def rule_triples(t: np.ndarray, H: np.ndarray, spacing: float) -> list:
    """Triples (i, j, k) of the columns of ``H`` between which a linear rule
    may give ``t`` (a total beside its three parts), as
    :func:`rule_candidates` screens pairs: R^2 = r' R^-1 r of three
    regressors from the correlations, over the rows where t holds a number,
    a helper's missing cells at its mean (helpers at least half present),
    the best fit first."""
    n, k = H.shape
    if n < 30 or k < 3:
        return []
    t = _trimmed(np.asarray(t, dtype=np.float64))
    H = np.column_stack([_trimmed(H[:, i]) for i in range(k)])
    ok = np.isfinite(H).mean(axis=0) >= 0.5
    cols = np.flatnonzero(ok)
    rows = np.isfinite(t)
    if cols.size < 3 or rows.sum() < 30:
        return []
    # a helper's missing cells (or tails) at its mean, for the screen only:
    # rows complete in every column were too few in a wide table (H35);
    # each rule is then measured on its own columns' rows
    X, y = H[rows][:, cols], t[rows]
    X = np.where(np.isfinite(X), X, np.nanmean(X, axis=0))
    sd = X.std(axis=0)
    keep = sd > 0
    cols, X = cols[keep], X[:, keep]
    sd_t = float(y.std())
    if cols.size < 3 or not sd_t > 0:
        return []
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    z = (y - y.mean()) / sd_t
    r = Z.T @ z / z.size
    top = np.argsort(-np.abs(r), kind="stable")[:RULE_TRIPLE_HELPERS]
    Z, r, cols = Z[:, top], r[top], cols[top]
    C = Z.T @ Z / z.size
    tri = np.array(list(itertools.combinations(range(cols.size), 3)), dtype=np.int64)
    Rm = C[tri[:, :, None], tri[:, None, :]]                # (T, 3, 3)
    rv = r[tri]                                             # (T, 3)
    with np.errstate(all="ignore"):
        good = np.abs(np.linalg.det(Rm)) > 1e-9
        r2 = np.full(tri.shape[0], np.nan)
        if good.any():
            sol = np.linalg.solve(Rm[good], rv[good][:, :, None])[:, :, 0]
            r2[good] = (sol * rv[good]).sum(axis=1)
    resid = sd_t * np.sqrt(np.clip(1.0 - r2, 0.0, None))
    sel = np.isfinite(r2) & ((resid < RULE_SCREEN_SPREAD * spacing) |
                             (r2 >= RULE_TRIPLE_SCREEN_R2))
    order = np.argsort(resid[sel], kind="stable")
    return [tuple(int(cols[i]) for i in tri[sel][o]) for o in order]


def value_spacing(vt: np.ndarray) -> float:
    """The typical distance between a column's values (the median gap)."""
    spacing = np.diff(np.unique(vt))
    return float(np.median(spacing)) if spacing.size else 1.0


def rule_adversary(vt: np.ndarray, xt: np.ndarray, mt: np.ndarray, helpers) -> dict | None:
    """The adversary who reads a row's set of t (p = 1) and the two
    helpers (sets, or values published exactly: (m, 1) members) and knows
    the :func:`linear_rule` between them, learnt from the other fold: it
    keeps t's members that some pair of the helpers' members puts within
    the rule's window, and names the most common of those (the set alone's
    choice where none is kept).  ``vt``: t's number per code; ``xt``: the
    rows' codes; ``mt``: (m, eta) t's members (codes, the true value
    first); ``helpers``: two (numbers of the rows, numbers of the members).
    None where a fold shows no rule."""
    m = xt.size
    fold = _folds(m)
    dom = _dominant(xt)
    spacing = value_spacing(vt)
    (h1, m1), (h2, m2) = helpers
    acc = np.zeros(4)
    rules = []
    for f in (0, 1):
        train, test = fold != f, np.flatnonzero(fold == f)
        rule = linear_rule(vt[xt[train]], h1[train], h2[train], spacing)
        if rule is None:
            return None
        rules.append(rule)
        c1, c2, c0, tol = rule
        pred = c1 * m1[test][:, :, None] + c2 * m2[test][:, None, :] + c0     # (r, e1, e2)
        pred = pred.reshape(test.size, -1)
        vals = vt[mt[test]]                                                 # (r, et)
        ok = (np.abs(vals[:, :, None] - pred[:, None, :]) <= tol).any(axis=2)
        prior = np.bincount(xt[train], minlength=vt.size).astype(np.float64)
        alone = prior[mt[test]]
        # kept members score above every member that is not (the likelier
        # first); where none is kept the set alone names, and pins nothing
        W = np.where(ok, alone + 1.0, 0.0)
        W = np.where(ok.any(axis=1)[:, None], W, alone)
        acc += _tally(W.T, alone.T, dom[test])
    out = _figures(acc, m, float(np.bincount(xt).max() / m))
    out["rule"] = linear_rule(vt[xt], h1, h2, spacing) or rules[0]
    return out


def recode_lambda(xa: np.ndarray, xb: np.ndarray) -> float:
    """Goodman and Kruskal's lambda of predicting ``xa`` from ``xb`` (1: one
    recodes the other)."""
    xa, xb = np.asarray(xa, np.int64), np.asarray(xb, np.int64)
    J = np.zeros((int(xa.max()) + 1, int(xb.max()) + 1))
    np.add.at(J, (xa, xb), 1.0)
    n, top = J.sum(), J.sum(axis=1).max()
    return float((J.max(axis=0).sum() - top) / (n - top)) if n > top else float("nan")


#: 64-bit words of bitsets per batch of a record adversary's test rows, at most.
_RECORD_WORDS = 1 << 21


def _bitsets(x: np.ndarray, u: int, nb: int) -> np.ndarray:
    """(u + 1, nb) bitsets over the rows of ``x`` (codes 0 .. u - 1): bit i
    of row v set where row i holds v (row u: nobody's value, empty)."""
    B = np.zeros((u + 1) * nb, dtype=np.uint64)
    i = np.arange(x.size)
    np.bitwise_or.at(B, x * nb + (i >> 6), np.left_shift(np.uint64(1), (i & 63).astype(np.uint64)))
    return B.reshape(u + 1, nb)


def record_adversary(cols, targets, orders=None, prefixes: int = 0) -> dict:
    """The adversary who reads everything a row publishes of several
    columns (each a p = 1 set, or a column published exactly: a set of
    one, its value) and knows their joint distribution: how often it names
    the true value of each column in ``targets``, from the training rows
    (the other fold) consistent with the other columns' sets, beside the
    set alone (:func:`pair_adversary`'s figures).  What no pair and no
    three tells, four or more can: a total beside its parts.

    ``cols``: (codes, members) per column, compact (codes 0 .. u - 1 over
    the values the sample holds, members the true value first, a value the
    sample does not hold: code u); ``targets``: indices into ``cols``;
    ``orders``: per target, its helpers (indices) in the order the
    adversary reads them, those that tell most first; ``prefixes``: how
    many of the shortest reads to measure besides all of them (the first
    helper, the first two, ...): an adversary ignores the columns that
    tell nothing, whose chance matches would only thin its training rows.
    Returns per target a list of (helpers read, figures), all of them
    last.  Rows are matched by bitsets over the training fold, one AND
    and one OR a word: cheap in the number of columns and set sizes."""
    from ..io.published import popcount
    cols = [(np.asarray(x, np.int64), np.asarray(mm, np.int64)) for x, mm in cols]
    m, q = cols[0][0].size, len(cols)
    us = [int(x.max()) + 1 for x, _ in cols]
    fold = _folds(m)
    if orders is None:
        orders = {t: [j for j in range(q) if j != t] for t in targets}
    reads = {t: [list(orders[t][:k]) for k in range(1, min(prefixes, len(orders[t]) - 1) + 1)]
             + [list(orders[t])] for t in targets}
    acc = {t: np.zeros((len(reads[t]), 4)) for t in targets}
    doms = {t: _dominant(cols[t][0]) for t in targets}
    for f in (0, 1):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        nb = (train.size + 63) >> 6
        B = [_bitsets(x[train], u, nb) for (x, _), u in zip(cols, us)]
        P = [np.bincount(x[train], minlength=u + 1).astype(np.float64)
             for (x, _), u in zip(cols, us)]
        widest = max(mm.shape[1] for _, mm in cols)
        step = max(1, _RECORD_WORDS // (nb * max(q, widest)))
        for lo in range(0, test.size, step):
            rows = test[lo:lo + step]
            # each column's consistent training rows: the OR of its members'
            O = np.stack([np.bitwise_or.reduce(Bj[mm[rows]], axis=1)
                          for Bj, (_, mm) in zip(B, cols)])          # (q, r, nb)
            ones = np.full((1,) + O.shape[1:], ~np.uint64(0))
            before = np.bitwise_and.accumulate(np.concatenate([ones, O[:-1]]), axis=0)
            after = np.bitwise_and.accumulate(np.concatenate([ones, O[:0:-1]]), axis=0)[::-1]
            for t in targets:
                mt = cols[t][1][rows]                     # (r, eta)
                E = ones[0].copy()
                for i, read in enumerate(reads[t]):
                    if i == len(reads[t]) - 1:
                        E = before[t] & after[t]          # every column but t
                    else:
                        E &= O[read[-1]]                  # the read grows by one helper
                    hit = E[:, None, :] & B[t][mt]        # (r, eta, nb)
                    W = popcount(hit.reshape(-1, nb)).reshape(mt.shape).astype(np.float64)
                    acc[t][i] += _tally(W.T, P[t][mt].T, doms[t][rows])
    prior = {t: float(np.bincount(cols[t][0]).max() / m) for t in targets}
    return {t: [(read, _figures(a, m, prior[t])) for read, a in zip(reads[t], acc[t])]
            for t in targets}
