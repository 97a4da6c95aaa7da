"""Local bucketization of LGB (paper 002, Alg. 2 and Corollary 2): the
sensitive values of one attribute go into local buckets in which every value
appears at most once and which hold at least l values (a recursive median
split while both halves stay l-eligible, then Anatomy's group creation and
residue assignment, in C), or, for attributes protected by t-closeness
(Sec. 4 uses it for sex; the paper gives no algorithm), into the largest
number of round-robin buckets that stay within t.
"""
from __future__ import annotations

import numpy as np

from ...validate import ValuesError, check_int


def local_bucketization(codes: np.ndarray, l: int) -> tuple[np.ndarray, int]:
    """Alg. 2 on the sensitive values of one attribute.

    Parameters
    ----------
    codes : int array
        Value codes (ordered) of the cells to bucketize.
    l : int
        Every bucket gets >= l values, each value at most once (Corollary 2).

    Returns
    -------
    bucket : int64 array aligned with ``codes`` (0-based, increasing with the
        value ranges of the median-split leaves), and the number of buckets.

    Raises ValueError when the values are not l-eligible (a value occurs more
    than len(codes) / l times).

    Examples
    --------
    >>> b, nb = local_bucketization(np.array([1, 1, 2, 3, 4, 5, 6, 6]), 2)
    >>> nb, sorted(np.bincount(b).tolist())
    (4, [2, 2, 2, 2])
    """
    codes = np.asarray(codes)
    l = check_int(l, "l", minimum=1)
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(codes, kind="stable")
    _, counts = np.unique(codes[order], return_counts=True)
    if counts.max() * l > n:
        raise ValueError(f"not {l}-eligible: a value occurs {int(counts.max())} times among "
                         f"{n} (at most {n // l} allowed)")
    from .. import _lgb
    b_sorted, nb = _lgb.bucketize(np.ascontiguousarray(counts, dtype=np.int64), l)
    out = np.empty(n, dtype=np.int64)
    out[order] = b_sorted
    return out, int(nb)


def closeness_buckets(codes: np.ndarray, d: int, t: float, ground,
                      whole: np.ndarray, *, diverse: bool = True) -> tuple[np.ndarray, int]:
    """Buckets whose value distribution is within EMD t of both the whole
    column's (``whole``: its value counts) and the bucketized values'
    distribution: values sorted and dealt round-robin into m buckets (each
    gets the floor or ceiling of every value's share); the largest m whose
    worst bucket passes (binary search).  m = 1 passes once the flagged
    values are within t of the column (:func:`.flags.promote_for_closeness`).
    With ``diverse`` (the default) a bucket that holds one value alone fails
    too, where the bucketized values hold two or more: its rows' value would
    be told (:mod:`anonset.partition.homogeneous`)."""
    from ...emd import emd_batch
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(codes, kind="stable")
    refs = (np.bincount(codes, minlength=d), np.asarray(whole))
    diverse = diverse and np.count_nonzero(refs[0]) > 1

    def deal(m):
        b = np.empty(n, dtype=np.int64)
        b[order] = np.arange(n) % m
        return b

    def ok(m):
        b = deal(m)
        P = np.zeros((m, d), dtype=np.int64)
        np.add.at(P, (b, codes), 1)
        if diverse and (np.count_nonzero(P, axis=1) < 2).any():
            return False
        return max(float(emd_batch(P, q, ground).max()) for q in refs) <= t + 1e-12

    if not ok(1):
        raise RuntimeError("t-closeness buckets: the flagged values are farther than t from "
                           "the column; they should have been promoted first")
    lo, hi = 1, n                      # ok(lo) holds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return deal(lo), lo


def suppress_for_eligibility(codes: np.ndarray, l: int) -> np.ndarray:
    """Keep-mask removing the fewest values so the rest is l-eligible: every
    value keeps at most c* occurrences, c* the largest cap with
    sum(min(c_v, c*)) >= l * c*.  The last occurrences (row order) go."""
    counts = np.bincount(codes)
    caps = np.arange(1, counts.max() + 1)
    kept = np.minimum(counts[None, :], caps[:, None]).sum(axis=1)
    good = caps[kept >= l * caps]
    keep = np.zeros(codes.size, dtype=bool)
    if good.size == 0:
        return keep
    cap = int(good.max())
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    start = np.searchsorted(sc, sc, side="left")
    rank = np.arange(codes.size) - start
    keep[order] = rank < cap
    return keep


#: Standard deviations of margin of an advised l over flags drawn at random:
#: another draw refuses it with a chance of about 3e-5 per value (normal tail).
DRAW_MARGIN = 4.0


def drawn_l(whole: np.ndarray, flagged: int, fits: int) -> tuple[int, int]:
    """The largest l <= ``fits`` that flags drawn at random leave l-eligible
    on nearly every draw, and the value that bounds it.

    Each of the column's n cells (``whole``: its value counts) is flagged
    with the chance ``flagged`` / n, independently (:func:`.flags.draw_flags`).
    Value v, held by c cells, makes l fail where X (l - 1) > Y, X and Y the
    flagged cells of v and of the other values: l holds where the mean of
    X (l - 1) - Y lies :data:`DRAW_MARGIN` standard deviations below 0 for
    every value.  Returns ``(l, v)``: l = 1 where no l >= 2 holds so (a
    value near or above half the column).

    >>> drawn_l(np.array([500, 500]), 300, 2)[0]      # a value at 1/2: l = 2 fragile
    1
    >>> drawn_l(np.array([300, 350, 350]), 300, 2)[0]
    2
    """
    n = int(whole.sum())
    d = min(flagged / n, 1.0)
    c = whole.astype(float)
    worst = int(whole.argmax())
    for l in range(fits, 1, -1):
        mu = d * (c * (l - 1) - (n - c))
        sd = np.sqrt(d * (1 - d) * (c * (l - 1) ** 2 + (n - c)))
        bound = np.where(whole > 0, mu + DRAW_MARGIN * sd, -np.inf)
        if (bound <= 0).all():
            return l, worst
        worst = int(bound.argmax())
    return 1, worst


def _drawn_advice(column: np.ndarray, dom, flagged: int, l: int, verb: str) -> tuple:
    """(l, why) for a column whose flags were drawn at random: the l that
    nearly every draw allows (:func:`drawn_l`), and where it is below ``l``
    the reason ("... l = 3 passes these flags only"), else ""."""
    whole = np.bincount(column, minlength=dom.d)
    lr, v = drawn_l(whole, flagged, l)
    if lr >= l:
        return lr, ""
    return lr, (f"{dom.values[v]!r} holds {whole[v] / whole.sum():.1%} of the column, so the "
                f"flags another key draws can give it more than 1/{lr + 1} of their cells: "
                f"l = {l} {verb} these flags only")


def eligibility_refusal(codes: np.ndarray, sens_mask: np.ndarray, attributes, domains,
                        lmap: dict, closeness: dict, drawn=()):
    """The refusal (a :class:`~anonset.validate.ValuesError`) naming every
    attribute held to l whose sensitive values are not l-eligible, each with
    its remedies, in one message (H150: one per run made a run per
    column); None where all are.

    The l advised is the largest that the flagged values allow; for an
    attribute in ``drawn`` (flags drawn at random: another key draws other
    ones) it is also one that nearly every draw allows (:func:`drawn_l`),
    so that it holds in the next release, and the message says where the
    flags at hand allow more.  An attribute in ``drawn`` whose values are
    l-eligible on these flags but not on nearly every draw is named in a
    refusal too, as passing these flags only, with its advice (H157: a
    rerun under another key, following the refusal, was refused for it);
    it alone refuses nothing.  Where no l >= 2 holds, t-closeness is
    offered, with the t's given and every such attribute's at once (H39:
    each remedy alone undid the other)."""
    found, fragile = [], []
    for j, (a, dom) in enumerate(zip(attributes, domains)):
        if a in closeness:
            continue
        rows = np.flatnonzero(sens_mask[:, j])
        if rows.size == 0:
            continue
        vals, la = codes[j, rows], lmap[a]
        cnt = np.bincount(vals)
        if int(cnt.max()) * la <= rows.size:
            # eligible on these flags: named (in a refusal that happens
            # anyway) where another draw would refuse its l
            if a in drawn and la >= 2:
                lr, why = _drawn_advice(codes[j], dom, rows.size, la, "passes")
                if lr < la:
                    fragile.append((a, dom, rows.size, la, cnt, None, la, lr, why))
            continue
        # what the remedy costs: the '*' cells, and the value they tell
        held = np.bincount(vals[~suppress_for_eligibility(vals, la)], minlength=dom.d)
        # the largest l its values allow: at l = 1 a bucket tells its rows'
        # value, so where that is all, t-closeness (a bucket close to the
        # column's distribution) is offered
        fits = rows.size // int(cnt.max())
        lr, why = fits, ""
        if a in drawn and fits >= 2:
            lr, why = _drawn_advice(codes[j], dom, rows.size, fits, "fits")
        found.append((a, dom, rows.size, la, cnt, held, fits, lr, why))
    if not found:
        return None
    failing = len(found)
    order = {a: i for i, a in enumerate(attributes)}
    found = sorted(found + fragile, key=lambda f: order[f[0]])
    t_cols = [f[0] for f in found if f[7] < 2]
    offer = repr({**closeness, **{a: 0.3 for a in t_cols}})
    parts = []
    for a, dom, size, la, cnt, held, fits, lr, why in found:
        if lr >= 2:
            lower = f"l <= {lr} for it" + (f" ({why})" if why else "")
        else:
            reason = (f"no l >= 2 fits it on every draw of its flags: {why}" if why else
                      "no l >= 2 fits it: one value holds more than half of its cells")
            lower = (f"t-closeness for it instead ({reason}), which bounds what a bucket "
                     "tells beyond the column's distribution ({@closeness=" + offer
                     + "}, or another t)")
        if held is None:            # passes these flags only
            what = (f"its {size:,} sensitive values are {la}-eligible on these flags only "
                    f"(value {dom.values[int(cnt.argmax())]!r} occurs {int(cnt.max()):,} "
                    f"times, at most {size // la:,} allowed), not on nearly every draw")
            expected = (f"{lower}, or {{@suppress=True}}, which publishes as '*' any of its "
                        "cells that a draw makes too many (none on these flags)")
        else:
            what = (f"its {size:,} sensitive values are not {la}-eligible (value "
                    f"{dom.values[int(cnt.argmax())]!r} occurs {int(cnt.max()):,} times, "
                    f"at most {size // la:,} allowed; {int((cnt > 0).sum()):,} distinct "
                    "values)")
            expected = (f"{lower}, or {{@suppress=True}}, which publishes {int(held.sum()):,} "
                        f"of its cells as '*', {held.max() / held.sum():.1%} of them holding "
                        f"{dom.values[int(held.argmax())]!r}, which a '*' then tells")
        parts.append((a, what, expected))
    # a refusal of the column's values: the CLI names the file (H105)
    if len(parts) == 1:
        a, what, expected = parts[0]
        return ValuesError(what, param="l", column=a, expected=expected)
    head = (f"{failing} columns are not l-eligible" if failing > 1 else
            "1 column is not l-eligible")
    if len(parts) > failing:
        n = len(parts) - failing
        head += (f" and {n} {'is' if n == 1 else 'are'} on these flags only (drawn at "
                 "random: another key draws others)")
    return ValuesError(f"{head}, each named with its remedies: "
                       + "; ".join(f"column {a!r}: {what}; expected {expected}"
                                   for a, what, expected in parts),
                       param="l")


def closeness_ground(dom) -> str:
    """Ground distance of a t-closeness attribute: ordered for numeric
    attributes, equal for categorical ones."""
    return "ordered" if dom.numeric else "equal"


def bucketize_attributes(codes: np.ndarray, sens_mask: np.ndarray, attributes, domains,
                         lmap: dict, closeness: dict, suppress: bool, rng,
                         allow_homogeneous=(), drawn=()):
    """Alg. 1 lines 3-6: bucketize every attribute's sensitive cells
    independently (``sens_mask`` (n, q) marks them).

    Returns ``(bid, shown, suppressed, grounds)``: the 0-based bucket of
    every cell (-1 outside buckets), the value code each bucketized cell
    shows -- its bucket's values in a uniformly random order (Fig. 2), so
    that only the bucket, never the row, carries the value -- the cells
    published as ``*`` and the ground of every t-closeness attribute.
    A t-closeness attribute's buckets each hold two values or more unless
    it is named in ``allow_homogeneous`` (where its bucketized cells hold
    one value alone while the column holds more, it is refused unless named).
    Without ``suppress``, attributes that are not l-eligible are refused
    together (:func:`eligibility_refusal`; ``drawn``: the attributes whose
    flags were drawn at random).
    """
    q, n = codes.shape
    bid = np.full((q, n), -1, dtype=np.int64)
    shown = np.full((q, n), -1, dtype=np.int32)
    suppressed = np.zeros((q, n), dtype=bool)
    grounds = {}
    if not suppress:
        refusal = eligibility_refusal(codes, sens_mask, attributes, domains, lmap, closeness,
                                      drawn)
        if refusal is not None:
            raise refusal
    for j, (a, dom) in enumerate(zip(attributes, domains)):
        rows = np.flatnonzero(sens_mask[:, j])
        if rows.size == 0:
            continue
        vals = codes[j, rows]
        if a in closeness:
            grounds[a] = closeness_ground(dom)
            whole = np.bincount(codes[j], minlength=dom.d)
            if np.unique(vals).size == 1 and np.count_nonzero(whole) > 1 and \
                    a not in allow_homogeneous:
                raise ValuesError(
                    f"its {rows.size:,} bucketized cells all hold "
                    f"{dom.values[int(vals[0])]!r}, so every bucket of it tells its rows' "
                    "value", param="closeness", column=a,
                    expected="cells of two values or more to bucketize (flag more cells), "
                             "or the risk named: {@allow_homogeneous=" + repr([a]) + "}")
            if dom.d == 1:
                b, nb = np.zeros(rows.size, dtype=np.int64), 1
            else:
                b, nb = closeness_buckets(vals, dom.d, float(closeness[a]), grounds[a],
                                          whole, diverse=a not in allow_homogeneous)
        else:
            la = lmap[a]
            cnt = np.bincount(vals)
            if int(cnt.max()) * la > rows.size:
                keep = suppress_for_eligibility(vals, la)
                suppressed[j, rows[~keep]] = True
                rows, vals = rows[keep], vals[keep]
                if rows.size == 0:
                    continue
            b, nb = local_bucketization(vals, la)
        bid[j, rows] = b
        by_bucket = np.argsort(b, kind="stable")
        shuffled = np.lexsort((rng.random(rows.size), b))
        shown[j, rows[by_bucket]] = vals[shuffled]
    return bid, shown, suppressed, grounds
