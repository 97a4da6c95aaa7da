"""Sensitivity flags of LGB (paper 002, Def. 5-7 and Fig. 1(b)): reading the
per-cell flags of semi-sensitive attributes (boolean masks, flag columns of
yes/no, true/false or 1/0), drawing them at a density for experiments (Sec.
4.3), and promoting flags -- marking more cells sensitive, which is
over-protection and never a leak -- so that every QI-partition subset (Def. 7)
can form groups of k rows, and so that the flagged values of a t-closeness
attribute can be bucketized within t of the whole column (docs/algorithms.md).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

_YES = {"yes", "y", "true", "t", "1", "sensitive", "s"}
_NO = {"no", "n", "false", "f", "0", "qi", "q"}     # an empty flag is not a 'no': refused


def draw_flags(data, attributes: Sequence[str], density: float, seed=None,
               key_file=None) -> pd.DataFrame:
    """Sensitivity flags for experiments: each cell of each attribute is
    flagged sensitive independently with probability ``density`` (Sec. 4.3:
    about 10-40%).

    Parameters
    ----------
    data : DataFrame or int
        The table (or its number of rows).
    attributes : column names
    density : float in [0, 1]
    seed : int, str or bytes, optional
        Reproducible flags (keep it as secret as the data); default: a fresh
        key from the operating system.
    key_file : path, optional
        A file holding the key material (instead of ``seed``; refused with
        one), read as ``anonset lgb --key-file`` reads it: with ``--density``
        the command draws its flags so, and ``lgb(..., key_file=PATH,
        flags=draw_flags(df, semi, density, key_file=PATH))`` gives the
        command's release.

    Returns
    -------
    DataFrame of bool, one column per attribute, marked as drawn at random
    (``attrs[DRAWN]``): where an attribute is then not l-eligible,
    :func:`~anonset.partition.lgb.lgb` advises an l that nearly every draw
    allows, not only this one (H150).

    Examples
    --------
    >>> f = draw_flags(1000, ["age"], 0.2, seed=3)
    >>> bool(0.15 < f["age"].mean() < 0.25)
    True
    """
    from ...validate import InputError, close_match
    if isinstance(attributes, str):
        attributes = [attributes]
    n = data if isinstance(data, (int, np.integer)) else len(data)
    if isinstance(density, bool) or not isinstance(density, (int, float, np.integer,
                                                             np.floating)) \
            or not 0.0 <= float(density) <= 1.0:
        raise InputError(f"got {density!r}", param="density", expected="a number in [0, 1]")
    if not isinstance(data, (int, np.integer)):
        cols = [str(c) for c in getattr(data, "columns", [])]
        for a in attributes:
            if a not in cols:
                raise InputError(f"names {a!r}, which is not a column of the data"
                                 f"{close_match(a, cols)}", param="attributes",
                                 expected=f"columns of the data: {cols}")
    from ...io.keys import seed_or_key_file
    seed = seed_or_key_file(seed, key_file)
    rng = experiment_generator(seed, "flags")
    # drawn in the order of the names, returned as listed: the attributes
    # listed in another order are flagged alike (H113: lgb --density over
    # --semi-sensitive listed two ways drew other flags under one seed, and
    # the two releases, linked by their IDs, pinned 23 educations)
    drawn = {a: rng.random(int(n)) < float(density) for a in sorted(set(attributes))}
    out = pd.DataFrame({a: drawn[a] for a in attributes})
    # drawn at random: lgb's refusal advises an l that other draws allow too
    out.attrs[DRAWN] = {a: float(density) for a in attributes}
    return out


#: The key of :attr:`pandas.DataFrame.attrs` under which :func:`draw_flags`
#: marks its flags as drawn at random (at the density it records).
DRAWN = "anonset.drawn_flags"


def drawn_flags(flags, attributes) -> frozenset:
    """The attributes whose ``flags`` :func:`draw_flags` drew at random:
    another key (seed) draws other flags, so an l that these allow may be
    refused under it (:func:`.bucketize.drawn_l`)."""
    marked = getattr(flags, "attrs", None)
    if not isinstance(flags, pd.DataFrame) or not isinstance(marked, dict):
        return frozenset()
    return frozenset(a for a in attributes if a in marked.get(DRAWN, {}))


def experiment_generator(seed, purpose: str) -> np.random.Generator:
    """Randomness of the experiment helpers (drawn flags, random queries):
    not key material -- which cells are flagged shows in the release anyway
    -- so any seed is accepted.  A release's own randomness comes from its
    :class:`~anonset.partition.keyed.ReleaseKey`."""
    from ...io.keys import make_key
    key = make_key(seed, research_seed=True)
    words = np.frombuffer(key + purpose.encode().ljust(16, b"\0")[:16], dtype=np.uint32)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words.tolist())))


def _flag_values(x, name: str, column: str | None = None) -> np.ndarray:
    """One semi-sensitive attribute's flags as booleans.  ``column``: the
    flag column they came from (named in messages)."""
    from ...validate import InputError, row_name
    where = dict(column=column) if column is not None else dict(param="flags")
    s = pd.Series(x)
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.to_numpy(dtype=bool)
    unknown = s.isna().to_numpy()
    if not pd.api.types.is_numeric_dtype(s.dtype):
        unknown = unknown | (s.astype(str).str.strip() == "").to_numpy()
    if unknown.any():
        # whether the person counts the value as sensitive is not known: never
        # read as a 'no' (that would publish it generalized, as a QI value)
        raise InputError(f"holds {int(unknown.sum()):,} missing or empty flag(s) of {name!r} "
                         f"(first at {row_name(int(np.flatnonzero(unknown)[0]))}): whether those "
                         "cells are sensitive is not known", **where,
                         expected="a flag in every row: yes/no, true/false or 1/0 (a cell "
                                  "whose flag is unknown is safest flagged yes: its value is "
                                  "then bucketized)")
    if pd.api.types.is_numeric_dtype(s.dtype):
        v = s.to_numpy()
        if not np.isin(v, (0, 1)).all():
            bad = v[~np.isin(v, (0, 1))][0].item()
            raise InputError(f"holds {bad!r} among the flags of {name!r}", **where,
                             expected="0/1, yes/no or true/false")
        return v.astype(bool)
    low = s.astype(str).str.strip().str.lower()
    yes, no = low.isin(_YES), low.isin(_NO)
    if not (yes | no).all():
        bad = s[~(yes | no)].iloc[0]
        raise InputError(f"holds {bad!r} among the flags of {name!r}", **where,
                         expected="yes/no, true/false or 1/0")
    return yes.to_numpy()


def flags_matrix(frame: pd.DataFrame, semi: list, flags) -> np.ndarray:
    from ...validate import InputError
    n = len(frame)
    if not semi:
        return np.zeros((n, 0), dtype=bool)
    if flags is None:
        raise InputError("is not given, but semi-sensitive attributes need per-cell "
                         "sensitivity flags", param="flags",
                         expected="a boolean mask, flag columns, or draw_flags(...)")
    if isinstance(flags, np.ndarray):
        if flags.shape != (n, len(semi)):
            raise InputError(f"has shape {flags.shape}", param="flags",
                             expected=f"a boolean array of shape {(n, len(semi))} "
                                      "(rows x semi-sensitive attributes)")
        return np.stack([_flag_values(flags[:, j], a) for j, a in enumerate(semi)], axis=1)
    if isinstance(flags, pd.DataFrame):
        cols = {a: flags[a] for a in semi if a in flags.columns}
    elif isinstance(flags, Mapping):
        cols = {}
        for a, v in flags.items():
            cols[a] = frame[v] if isinstance(v, str) else v
    else:
        raise InputError(f"is a {type(flags).__name__}", param="flags",
                         expected="a boolean array, a DataFrame or a mapping")
    missing = [a for a in semi if a not in cols]
    if missing:
        raise InputError(f"gives no flags for the semi-sensitive attribute(s) {missing}",
                         param="flags", expected=f"flags for each of {semi}")
    extra = [a for a in cols if a not in semi]
    if extra:
        raise InputError(f"names {extra}, which are not semi-sensitive attributes",
                         param="flags", expected=f"flags for {semi} only")
    out = np.empty((n, len(semi)), dtype=bool)
    named = dict(flags) if isinstance(flags, Mapping) else {}
    for j, a in enumerate(semi):
        v = _flag_values(np.asarray(cols[a]) if not isinstance(cols[a], pd.Series)
                         else cols[a].reset_index(drop=True), a,
                         named[a] if isinstance(named.get(a), str) else None)
        if v.shape != (n,):
            raise InputError(f"holds {v.shape[0]} values for {a!r}", param="flags",
                             expected=f"one per row ({n})")
        out[:, j] = v
    return out


def promote_for_k(flags: np.ndarray, k: int) -> int:
    """Make every QI-partition subset hold >= k rows by flagging more cells
    sensitive (over-protection is always allowed: a flagged value is only
    ever bucketized).  flags (n, s) of the semi-sensitive attributes is
    changed in place; returns the number of cells promoted.

    An undersized subset moves into the largest existing subset whose QI
    attributes are a proper subset of its own (the one with none, if no such
    subset exists); the subset with no semi-sensitive QI value, if undersized,
    takes the rows it lacks from the largest subset that can spare them
    (else absorbs the smallest other subset whole)."""
    n, s = flags.shape
    if s == 0:
        return 0
    if n < k:
        raise ValueError(f"the table has {n} rows, fewer than k={k}")
    weights = (1 << np.arange(s)).astype(np.int64)
    promoted = 0
    while True:
        masks = (~flags).astype(np.int64) @ weights
        keys, counts = np.unique(masks, return_counts=True)
        small = [(bin(int(m)).count("1"), c, int(m)) for m, c in zip(keys, counts) if c < k]
        if not small:
            return promoted
        small.sort(key=lambda x: (-x[0], x[1]))
        _, _, m = small[0]
        have = dict(zip(keys.tolist(), counts.tolist()))
        if m != 0:
            subs = [(c, bin(t).count("1"), t) for t, c in have.items() if t != m and t & ~m == 0]
            target = max(subs)[2] if subs else 0
            rows = masks == m
            for j in range(s):
                if (m >> j) & 1 and not (target >> j) & 1:
                    flags[rows, j] = True
                    promoted += int(rows.sum())
        else:
            # the all-flagged subset needs `need` more rows: flag every cell of
            # that many rows of a subset that keeps >= k rows (the largest);
            # if none can spare them, absorb the smallest subset whole
            need = k - have[0]
            others = sorted((c, t) for t, c in have.items() if t != 0)
            c, t = others[-1]
            rows = np.flatnonzero(masks == t)
            if c - need < k:
                c, t = others[0]
                rows = np.flatnonzero(masks == t)
            else:
                rows = rows[:need]
            promoted += int((~flags[rows]).sum())
            flags[rows] = True


def promote_for_closeness(flags: np.ndarray, codes: np.ndarray, d: int, t: float, ground,
                          rng: np.random.Generator) -> int:
    """Flag more cells of one t-closeness attribute so that the distribution
    of its flagged values is within EMD t of the whole column's; ``flags``
    (n,) is changed in place, returns the number of cells promoted.

    Every bucket is a part of the flagged values, so when their distribution
    F is farther than t from the column's W no bucketing can bring every
    bucket within t of W (EMD is convex: the buckets' mean is F).  Value v's
    flagged count f_v is raised to max(f_v, ceil(lam c_v)), c_v its count in
    the column, for the smallest lam (bisection) that brings F within t; at
    lam = 1 every cell is flagged and F = W.  The promoted cells are drawn
    at random among the unflagged cells of each value.

    Examples
    --------
    >>> codes = np.repeat([0, 1], 50)
    >>> flags = np.r_[np.ones(20, bool), np.zeros(80, bool)]     # 20 of value 0 only
    >>> promote_for_closeness(flags, codes, 2, 0.2, "equal", np.random.default_rng(0))
    9
    >>> round(float(flags[codes == 0].sum() / flags.sum()), 2)     # within 0.2 of 0.5
    0.69
    """
    from ...emd import emd_batch
    whole = np.bincount(codes, minlength=d)
    have = np.bincount(codes[flags], minlength=d)
    if d < 2 or have.sum() == 0:
        return 0

    def target(lam):
        return np.maximum(have, np.ceil(lam * whole)).astype(np.int64)

    def far(lam):
        return float(emd_batch(target(lam)[None, :], whole, ground)[0]) > t

    if not far(0.0):
        return 0
    lo, hi = 0.0, 1.0                  # far(lo), not far(hi): at 1 the column itself
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if far(mid) else (lo, mid)
    add = target(hi) - have
    for v in np.flatnonzero(add):
        free = np.flatnonzero(~flags & (codes == v))
        flags[rng.choice(free, size=int(add[v]), replace=False)] = True
    return int(add.sum())


def promote_second_value(flags: np.ndarray, codes: np.ndarray, d: int,
                         rng: np.random.Generator) -> int:
    """Flag one more cell of a t-closeness attribute whose flagged values
    hold one value alone while its column holds two or more (``flags``
    changed in place; returns the cells promoted, 0 or 1): the buckets of
    one value would tell every flagged row's value
    (:mod:`anonset.partition.homogeneous`).  The cell is drawn at random
    among the unflagged cells of the column's most frequent other value.

    Examples
    --------
    >>> codes = np.repeat([0, 1], [90, 10])
    >>> flags = np.r_[np.ones(3, bool), np.zeros(97, bool)]      # three 0s flagged
    >>> promote_second_value(flags, codes, 2, np.random.default_rng(0))
    1
    >>> sorted(set(codes[flags].tolist()))
    [0, 1]
    """
    have = np.bincount(codes[flags], minlength=d)
    whole = np.bincount(codes, minlength=d)
    if np.count_nonzero(have) != 1 or np.count_nonzero(whole) < 2:
        return 0
    other = whole.copy()
    other[have > 0] = 0
    v = int(np.argmax(other))
    flags[rng.choice(np.flatnonzero(~flags & (codes == v)))] = True
    return 1
