"""Local generalization and bucketization (LGB) for personalized privacy
(paper 002: Li, He & Sun).

Every cell of a *semi-sensitive* attribute carries a flag: flagged cells hold
sensitive values, the others quasi-identifier (QI) values.  QI attributes hold
only QI values, sensitive attributes only sensitive ones.  LGB (Alg. 1)

1. bucketizes the sensitive values of each semi-sensitive and sensitive
   attribute independently (Alg. 2, :func:`local_bucketization`): a recursive
   median split while both halves stay l-eligible, then the Anatomy /
   m-invariance assignment into local buckets in which every value appears at
   most once and which hold at least ``l`` values (Corollary 2); an attribute
   may instead follow t-closeness (the paper uses it for sex);
2. splits the table by *QI partition* (rows with QI values on the same
   attributes, Def. 7) and generalizes each subset into local equivalence
   groups of at least ``k`` rows (Corollary 1), either Mondrian-style
   (Alg. 3, ``method='mdp'``) or top-down minimizing NCP (Alg. 4,
   ``method='ncp'``, Xu et al. 2006).

The published table has the shape of the paper's Fig. 2: ``ID``, ``GID``, and
per attribute its generalized value (a range ``[lo-hi]`` or a hierarchy node)
for a QI cell, or a value plus its bucket id ``<attr>_bid`` for a sensitive
cell.  Within a bucket the values are shown in a uniformly random order (Fig.
2 permutes them), so only the bucket, never the row, carries the value; the
bucket tables IDT(ID, BID) and SAT(value, BID) (Def. 9) say the same.

Examples
--------
>>> import pandas as pd, numpy as np
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"age": rng.integers(20, 60, 60),
...                    "zip": rng.integers(100, 110, 60),
...                    "disease": rng.integers(0, 12, 60)})
>>> flags = pd.DataFrame({"age": rng.random(60) < 0.3})
>>> res = lgb(df, qi=["zip"], semi_sensitive=["age"], sensitive=["disease"],
...           flags=flags, k=4, l=3, seed=1)
>>> verify(res)["ok"]
True
>>> list(res.table.columns)
['ID', 'GID', 'age', 'age_bid', 'zip', 'disease', 'disease_bid']
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..encode import domain_codes
from ..hierarchy import Hierarchy

__all__ = ["lgb", "LGBResult", "draw_flags", "local_bucketization", "local_generalization",
           "verify", "attack", "c_dm", "ncp", "query_error", "METHODS"]

METHODS = ("mdp", "ncp")
_YES = {"yes", "y", "true", "t", "1", "sensitive", "s"}
_NO = {"no", "n", "false", "f", "0", "qi", "q", ""}


# ====================================================================== domains
@dataclass(frozen=True, eq=False)
class _Domain:
    """Ordered domain of one attribute, with what generalization needs.

    Numeric attributes generalize to ranges of domain values; categorical ones
    to hierarchy nodes.  Leaves are ordered so that every subtree is a
    contiguous code range: then the lowest common ancestor of a code range is
    the LCA of its two ends, and a generalized cell is a code interval
    ``[glo, ghi]`` in both cases.
    """
    name: str
    numeric: bool
    values: tuple                      # domain values in code order
    hierarchy: Hierarchy | None        # categorical: leaves in code order
    cost: np.ndarray                   # numeric: (d,) normalized values; else (d, d)
    node_lo: np.ndarray | None = None  # categorical: leaf range of every node
    node_hi: np.ndarray | None = None
    lca: np.ndarray | None = None      # categorical: (d, d) LCA node id

    @property
    def d(self) -> int:
        return len(self.values)

    def range_cost(self, lo, hi):
        """NCP of generalizing to the code range [lo, hi] (Sec. 3.2.2)."""
        lo, hi = np.asarray(lo), np.asarray(hi)
        if self.numeric:
            return self.cost[hi] - self.cost[lo]
        return self.cost[lo, hi]

    def cover(self, lo, hi):
        """Published code interval of a group whose codes span [lo, hi]."""
        if self.numeric:
            return np.asarray(lo), np.asarray(hi)
        node = self.lca[lo, hi]
        return self.node_lo[node], self.node_hi[node]

    def labels(self, lo, hi) -> np.ndarray:
        """Published label of code intervals (already covers)."""
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        out = np.empty(lo.shape, dtype=object)
        if lo.size == 0:
            return out
        pairs, inv = np.unique(np.stack([lo, hi]), axis=1, return_inverse=True)
        labs = np.empty(pairs.shape[1], dtype=object)
        for j, (a, b) in enumerate(pairs.T):
            if a == b:
                labs[j] = str(self.values[a])
            elif self.numeric:
                labs[j] = f"[{_fmt(self.values[a])}-{_fmt(self.values[b])}]"
            else:
                labs[j] = self.hierarchy.labels[int(self.lca[a, b])]
        return labs[np.asarray(inv).ravel()]


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _contiguous(h: Hierarchy) -> Hierarchy:
    """The same tree with leaves reordered so that every subtree is a
    contiguous range, keeping the file's order otherwise."""
    anc = h.ancestors
    first = {}
    for i in range(h.d):
        for lev in range(h.height + 1):
            first.setdefault(int(anc[i, lev]), i)
    keys = [tuple(first[int(anc[i, lev])] for lev in range(h.height, -1, -1)) for i in range(h.d)]
    order = sorted(range(h.d), key=lambda i: keys[i])
    return Hierarchy([h.paths[i] for i in order])


def _make_domain(name: str, col: pd.Series, hierarchy: Hierarchy | None) -> _Domain:
    numeric = hierarchy is None and pd.api.types.is_numeric_dtype(col.dtype) \
        and not pd.api.types.is_bool_dtype(col.dtype)
    if numeric:
        vals = np.unique(col.to_numpy())
        if np.issubdtype(vals.dtype, np.floating) and np.isnan(vals).any():
            raise ValueError(f"column {name!r} has missing values; drop or impute them first")
        x = vals.astype(np.float64)
        span = float(x[-1] - x[0])
        cost = (x - x[0]) / span if span > 0 else np.zeros_like(x)
        return _Domain(name, True, tuple(v.item() for v in vals), None, cost)
    if hierarchy is None:
        uniq = pd.unique(col)
        if pd.isna(uniq).any():
            raise ValueError(f"column {name!r} has missing values; drop or impute them first")
        try:
            uniq = sorted(uniq)
        except TypeError:
            raise ValueError(f"column {name!r} mixes value types; convert it to one type") from None
        hierarchy = Hierarchy.flat([str(v) for v in uniq])
        values = tuple(v.item() if isinstance(v, np.generic) else v for v in uniq)
    else:
        hierarchy = _contiguous(hierarchy)
        values = None
    h = hierarchy
    if values is None:
        if pd.api.types.is_integer_dtype(col.dtype):
            try:
                values = tuple(int(v) for v in h.leaves)
            except ValueError:
                raise ValueError(f"column {name!r} is integer but its hierarchy has "
                                 "non-integer leaves") from None
        else:
            values = tuple(h.leaves)
    d = h.d
    n_nodes = len(h.labels)
    leaf_codes = np.repeat(np.arange(d), h.height + 1)
    nodes = h.ancestors.ravel()
    node_lo = np.full(n_nodes, d, dtype=np.int64)
    node_hi = np.full(n_nodes, -1, dtype=np.int64)
    np.minimum.at(node_lo, nodes, leaf_codes)
    np.maximum.at(node_hi, nodes, leaf_codes)
    size = node_hi - node_lo + 1
    lev = h.lca_heights()
    lca = h.ancestors[np.arange(d)[:, None], lev].astype(np.int64)
    # Xu et al.'s convention: an ungeneralized value costs 0, a node
    # size(node) / |A| (the paper's Sec. 3.2.2 formula for generalized cells)
    cost = size[lca] / float(d)
    np.fill_diagonal(cost, 0.0)
    return _Domain(name, False, values, h, cost, node_lo, node_hi, lca)


def _encode(col: pd.Series, dom: _Domain) -> np.ndarray:
    if dom.numeric:
        x = col.to_numpy()
        codes = np.searchsorted(np.asarray(dom.values), x)
        return codes.astype(np.int32)
    codes = domain_codes(col.astype(str), [str(v) for v in dom.values])
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"column {dom.name!r}: value {col.iloc[i]!r} at row {i} is not a leaf "
                         "of its hierarchy")
    return codes


# ====================================================================== flags
def draw_flags(data, attributes: Sequence[str], density: float, seed=None) -> pd.DataFrame:
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

    Returns
    -------
    DataFrame of bool, one column per attribute.

    Examples
    --------
    >>> f = draw_flags(1000, ["age"], 0.2, seed=3)
    >>> bool(0.15 < f["age"].mean() < 0.25)
    True
    """
    n = data if isinstance(data, (int, np.integer)) else len(data)
    if not isinstance(density, (int, float)) or not 0.0 <= float(density) <= 1.0:
        raise ValueError(f"density must be a number in [0, 1], got {density!r}")
    rng = _generator(seed, "flags")
    return pd.DataFrame({a: rng.random(int(n)) < float(density) for a in attributes})


def _generator(seed, purpose: str) -> np.random.Generator:
    from ..io.keys import make_key
    key = make_key(seed, research_seed=True)  # seed policy: enforced by the engine (issue 13)
    words = np.frombuffer(key + purpose.encode().ljust(16, b"\0")[:16], dtype=np.uint32)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words.tolist())))


def _flag_values(x, name: str) -> np.ndarray:
    s = pd.Series(x)
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.to_numpy(dtype=bool)
    if s.isna().any():
        raise ValueError(f"flags of {name!r} have missing values")
    if pd.api.types.is_numeric_dtype(s.dtype):
        v = s.to_numpy()
        if not np.isin(v, (0, 1)).all():
            raise ValueError(f"flags of {name!r} must be 0/1, yes/no or true/false")
        return v.astype(bool)
    low = s.astype(str).str.strip().str.lower()
    yes, no = low.isin(_YES), low.isin(_NO)
    if not (yes | no).all():
        bad = s[~(yes | no)].iloc[0]
        raise ValueError(f"flags of {name!r}: {bad!r} is not yes/no, true/false or 1/0")
    return yes.to_numpy()


def _flags_matrix(frame: pd.DataFrame, semi: list, flags) -> np.ndarray:
    n = len(frame)
    if not semi:
        return np.zeros((n, 0), dtype=bool)
    if flags is None:
        raise ValueError("flags: semi-sensitive attributes need per-cell sensitivity flags "
                         "(a boolean mask, flag columns, or draw_flags(...))")
    if isinstance(flags, np.ndarray):
        if flags.shape != (n, len(semi)):
            raise ValueError(f"flags: expected a boolean array of shape {(n, len(semi))} "
                             f"(rows x semi-sensitive attributes), got {flags.shape}")
        return np.stack([_flag_values(flags[:, j], a) for j, a in enumerate(semi)], axis=1)
    if isinstance(flags, pd.DataFrame):
        cols = {a: flags[a] for a in semi if a in flags.columns}
    elif isinstance(flags, Mapping):
        cols = {}
        for a, v in flags.items():
            cols[a] = frame[v] if isinstance(v, str) else v
    else:
        raise ValueError(f"flags must be a boolean array, a DataFrame or a mapping, got "
                         f"{type(flags).__name__}")
    missing = [a for a in semi if a not in cols]
    if missing:
        raise ValueError(f"flags: no flags given for semi-sensitive attribute(s) {missing}")
    extra = [a for a in cols if a not in semi]
    if extra:
        raise ValueError(f"flags: {extra} are not semi-sensitive attributes {semi}")
    out = np.empty((n, len(semi)), dtype=bool)
    for j, a in enumerate(semi):
        v = _flag_values(np.asarray(cols[a]) if not isinstance(cols[a], pd.Series)
                         else cols[a].reset_index(drop=True), a)
        if v.shape != (n,):
            raise ValueError(f"flags of {a!r}: expected {n} values, got {v.shape[0]}")
        out[:, j] = v
    return out


# ================================================================ bucketization
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
    l = _check_pos_int(l, "l")
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(codes, kind="stable")
    _, counts = np.unique(codes[order], return_counts=True)
    if counts.max() * l > n:
        raise ValueError(f"not {l}-eligible: a value occurs {int(counts.max())} times among "
                         f"{n} (at most {n // l} allowed)")
    from . import _lgb
    b_sorted, nb = _lgb.bucketize(np.ascontiguousarray(counts, dtype=np.int64), l)
    out = np.empty(n, dtype=np.int64)
    out[order] = b_sorted
    return out, int(nb)


def _closeness_buckets(codes: np.ndarray, d: int, t: float, ground) -> tuple[np.ndarray, int]:
    """Buckets whose value distribution is within EMD t of the attribute's
    (flagged) distribution: values sorted and dealt round-robin into m
    buckets (each gets floor or ceil of every value's share); the largest m
    whose worst bucket passes (binary search; m = 1 always passes)."""
    from ..emd import emd_batch
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.argsort(codes, kind="stable")
    q = np.bincount(codes, minlength=d).astype(np.float64)

    def deal(m):
        b = np.empty(n, dtype=np.int64)
        b[order] = np.arange(n) % m
        return b

    def ok(m):
        b = deal(m)
        P = np.zeros((m, d), dtype=np.int64)
        np.add.at(P, (b, codes), 1)
        return float(emd_batch(P, q, ground).max()) <= t + 1e-12

    lo, hi = 1, n                      # ok(lo) holds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return deal(lo), lo


def _suppress_for_eligibility(codes: np.ndarray, l: int) -> np.ndarray:
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


# =============================================================== generalization
def _cost_tables(domains: list[_Domain]):
    kind = np.array([0 if d.numeric else 1 for d in domains], dtype=np.int32)
    dom = np.array([d.d for d in domains], dtype=np.int32)
    tabs = [np.ascontiguousarray(d.cost, dtype=np.float64).ravel() for d in domains]
    off = np.zeros(len(domains), dtype=np.int64)
    if tabs:
        off[1:] = np.cumsum([t.size for t in tabs])[:-1]
    tab = np.concatenate(tabs) if tabs else np.zeros(1)
    return dom, kind, off, tab


def local_generalization(codes: np.ndarray, qi_mask: np.ndarray, domains: list, k: int,
                         method: str = "mdp", *, balance: bool = False) -> np.ndarray:
    """Local equivalence groups (Alg. 3 or 4) of a table already split by QI
    partition.

    Parameters
    ----------
    codes : int32 array (q, n)
        Value codes per attribute.
    qi_mask : bool array (n, q)
        True where the cell is a QI value.  Rows with the same mask form one
        QI-partition subset (Def. 7); each needs >= k rows.
    domains : list of _Domain, one per attribute
    k : int
    method : {'mdp', 'ncp'}
    balance : bool
        Alg. 4 only.  False (default): Alg. 4 as printed (lines 15-20), a
        split with an undersized side is abandoned and the whole node becomes
        a group.  True: Xu et al.'s adjustment, so an undersized side takes
        rows from the other and every group has k..2k-1 rows.

    Returns
    -------
    gid : int64 array (n,), 0-based group ids (groups of a subset contiguous).
    """
    from . import _lgb
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    k = _check_pos_int(k, "k")
    q, n = codes.shape
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    dom, kind, off, tab = _cost_tables(domains)
    bits = np.zeros(n, dtype=np.int64)
    for a in range(q):
        bits |= qi_mask[:, a].astype(np.int64) << a
    keys, inv = np.unique(bits, return_inverse=True)
    gid = np.empty(n, dtype=np.int64)
    base = 0
    for s, key in enumerate(keys):
        rows = np.flatnonzero(inv == s).astype(np.int64)
        if rows.size < k:
            raise ValueError(f"QI-partition subset of {rows.size} rows has fewer than k={k}")
        attrs = np.array([a for a in range(q) if (int(key) >> a) & 1], dtype=np.int32)
        ends = _lgb.partition(method, rows, codes, attrs, dom, kind, off, tab, k, bool(balance))
        sizes = np.diff(np.concatenate([[0], ends]))
        gid[rows] = base + np.repeat(np.arange(ends.size), sizes)
        base += ends.size
    return gid


def _promote(flags: np.ndarray, k: int) -> int:
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


# ======================================================================= result
@dataclass(eq=False)
class LGBResult:
    """An LGB publication and what is needed to evaluate it.

    ``table``, ``idt`` and ``sat`` are what gets published.  The other
    fields hold the *original* codes (for metrics, the attack simulation and
    query answering): never publish the object itself.
    """
    table: pd.DataFrame
    idt: dict
    sat: dict
    k: int
    l: dict
    closeness: dict
    method: str
    attributes: tuple
    roles: dict
    domains: list = field(repr=False)
    codes: np.ndarray = field(repr=False)       # (q, n) true codes
    qi_mask: np.ndarray = field(repr=False)     # (n, q) True: QI cell
    gid: np.ndarray = field(repr=False)         # (n,) 0-based
    glo: np.ndarray = field(repr=False)         # (q, n) published interval, -1 if bucketed
    ghi: np.ndarray = field(repr=False)
    bid: np.ndarray = field(repr=False)         # (q, n) 0-based bucket, -1 if none
    shown: np.ndarray = field(repr=False)       # (q, n) code shown for a bucketed cell
    suppressed: np.ndarray = field(repr=False)  # (q, n) sensitive cell published as '*'
    promoted: int = 0
    grounds: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.gid.size)

    @property
    def n_groups(self) -> int:
        return int(self.gid.max()) + 1 if self.gid.size else 0

    def summary(self) -> dict:
        """Sizes and metrics in one dictionary."""
        out = {"rows": self.n, "groups": self.n_groups, "method": self.method, "k": self.k,
               "C_DM": c_dm(self), "NCP": ncp(self), "promoted_cells": self.promoted,
               "suppressed_cells": int(self.suppressed.sum())}
        for a, name in enumerate(self.attributes):
            if self.roles[name] != "qi":
                out[f"buckets[{name}]"] = int(self.bid[a].max()) + 1 if (self.bid[a] >= 0).any() else 0
        return out

    def write(self, path, *, format: str | None = None, protect=()) -> list:
        """Write the table to ``path`` and the bucket tables beside it as
        ``<stem>.<attr>.idt.<ext>`` and ``<stem>.<attr>.sat.<ext>``; each
        file atomically.  Returns the paths written."""
        from ..io.atomic import atomic_path
        path = Path(path)
        fmt = format or _format_of(path)
        ext = ".parquet" if fmt == "parquet" else ".csv"
        stem = path.name
        for suf in (".parquet", ".pq", ".csv"):
            if stem.lower().endswith(suf):
                stem = stem[: -len(suf)]
                break
        jobs = [(path, self.table)]
        for a in self.idt:
            jobs.append((path.with_name(f"{stem}.{a}.idt{ext}"), self.idt[a]))
            jobs.append((path.with_name(f"{stem}.{a}.sat{ext}"), self.sat[a]))
        for p, _ in jobs:                 # refuse before writing anything
            for inp in protect:
                from ..io.atomic import same_file
                if inp is not None and same_file(p, inp):
                    raise ValueError(f"output {str(p)!r} is the input file; choose another "
                                     "name (the input is never overwritten)")
        written = []
        for p, frame in jobs:
            with atomic_path(p, protect=protect) as tmp:
                if fmt == "parquet":
                    frame.to_parquet(tmp, index=False)
                else:
                    frame.to_csv(tmp, index=False)
            written.append(p)
        return written


def _format_of(path) -> str:
    name = str(path).lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    raise ValueError(f"cannot tell the format of {str(path)!r}: use .csv or .parquet")


def _check_pos_int(v, name) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def _per_attr(v, attrs: list, name: str) -> dict:
    if isinstance(v, Mapping):
        extra = [a for a in v if a not in attrs]
        if extra:
            raise ValueError(f"{name} names {extra}, which are not semi-sensitive or sensitive")
        return dict(v)
    return {a: v for a in attrs}


# ========================================================================= main
def lgb(data, *, qi: Sequence[str], semi_sensitive: Sequence[str] = (),
        sensitive: Sequence[str] = (), flags=None, k: int, l=None,
        closeness: Mapping[str, float] | None = None, method: str = "mdp",
        hierarchies: Mapping[str, Hierarchy | str] | None = None,
        id_column: str | None = None, seed=None, suppress: bool = False,
        balance: bool = False) -> LGBResult:
    """Local generalization and bucketization (Alg. 1).

    Parameters
    ----------
    data : pandas.DataFrame
    qi, semi_sensitive, sensitive : column names
        QI attributes (only QI values), semi-sensitive (both, per the flags),
        sensitive (only sensitive values).  Numeric columns without a
        hierarchy generalize to ranges; the others to hierarchy nodes (a flat
        ``*`` hierarchy when none is given).
    flags : bool array (n, len(semi_sensitive)), DataFrame, or mapping
        True marks a sensitive cell.  A mapping gives, per attribute, a flag
        column name of ``data`` (Fig. 1(b): yes/no, true/false or 1/0) or an
        array.  :func:`draw_flags` draws them at a density.
    k : int
        Every local equivalence group gets >= k rows.
    l : int or {attribute: int}
        l-diversity of the local buckets of every semi-sensitive and
        sensitive attribute not in ``closeness``.
    closeness : {attribute: t}, optional
        Attributes bucketized under t-closeness instead (EMD between a
        bucket's and the attribute's sensitive-value distribution <= t; equal
        ground for categorical, ordered for numeric attributes), e.g. a
        two-valued sex as in Sec. 4.
    method : {'mdp', 'ncp'}
        Local generalization by multi-dimensional partition (Alg. 3) or by
        minimizing NCP (Alg. 4).
    hierarchies : {column: Hierarchy or ARX CSV path}, optional
    id_column : str, optional
        Column with record ids (default: 1..n).
    seed : int, str or bytes, optional
        Seeds the order in which a bucket's values are shown (default: fresh
        from the OS).
    suppress : bool
        When an attribute's sensitive values are not l-eligible, publish the
        fewest of them as ``*`` instead of raising ValueError.
    balance : bool
        ``method='ncp'`` only: False (default) runs Alg. 4 exactly as printed
        (a split leaving a side under k rows is abandoned, the node becomes
        one group); True applies Xu et al.'s adjustment (groups of k..2k-1
        rows, lower C_DM and NCP).  Both give groups of >= k rows; see
        docs/lgb.md.

    Returns
    -------
    LGBResult
    """
    frame = data if isinstance(data, pd.DataFrame) else None
    if frame is None:
        raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(frame) == 0:
        raise ValueError("the table is empty")
    frame = frame.reset_index(drop=True)
    qi, semi, sens = list(qi), list(semi_sensitive), list(sensitive)
    attrs = qi + semi + sens
    if len(set(attrs)) != len(attrs):
        dup = sorted({a for a in attrs if attrs.count(a) > 1})
        raise ValueError(f"column(s) {dup} are given more than one role")
    if not attrs:
        raise ValueError("no attributes: name the qi, semi_sensitive and sensitive columns")
    missing = [a for a in attrs + ([id_column] if id_column else []) if a not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} are not in the data; columns are "
                         f"{list(frame.columns)}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    k = _check_pos_int(k, "k")
    n = len(frame)
    if n < k:
        raise ValueError(f"the table has {n} rows, fewer than k={k}")
    bucketed = semi + sens
    closeness = dict(closeness or {})
    for a, t in closeness.items():
        if a not in bucketed:
            raise ValueError(f"closeness names {a!r}, which is not semi-sensitive or sensitive")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1:
            raise ValueError(f"closeness of {a!r} must be a number in [0, 1], got {t!r}")
    need_l = [a for a in bucketed if a not in closeness]
    if need_l and l is None:
        raise ValueError(f"l is required for {need_l}")
    lmap = _per_attr(l, need_l, "l") if need_l else {}
    for a in need_l:
        if a not in lmap:
            raise ValueError(f"l: no value for {a!r}")
        lmap[a] = _check_pos_int(lmap[a], f"l of {a!r}")
    hier = {}
    for a, h in (hierarchies or {}).items():
        if a not in attrs:
            raise ValueError(f"hierarchies names {a!r}, which is not a QI, semi-sensitive or "
                             "sensitive column")
        hier[a] = h if isinstance(h, Hierarchy) else Hierarchy.from_csv(h)
    for a in attrs:
        if frame[a].isna().any():
            raise ValueError(f"column {a!r} has missing values; drop or impute them first")

    domains = [_make_domain(a, frame[a], hier.get(a)) for a in attrs]
    q = len(attrs)
    codes = np.empty((q, n), dtype=np.int32)
    for j, (a, dom) in enumerate(zip(attrs, domains)):
        codes[j] = _encode(frame[a], dom)

    semi_flags = _flags_matrix(frame, semi, flags).copy()
    promoted = _promote(semi_flags, k)
    sens_mask = np.zeros((n, q), dtype=bool)
    sens_mask[:, len(qi):len(qi) + len(semi)] = semi_flags
    sens_mask[:, len(qi) + len(semi):] = True
    qi_mask = ~sens_mask

    # ---- local bucketization, one attribute at a time (Alg. 1 lines 3-6)
    rng = _generator(seed, "lgb-show")
    bid = np.full((q, n), -1, dtype=np.int64)
    shown = np.full((q, n), -1, dtype=np.int32)
    suppressed = np.zeros((q, n), dtype=bool)
    grounds = {}
    for j in range(len(qi), q):
        a, dom = attrs[j], domains[j]
        rows = np.flatnonzero(sens_mask[:, j])
        if rows.size == 0:
            continue
        vals = codes[j, rows]
        if a in closeness:
            ground = "ordered" if dom.numeric else "equal"
            grounds[a] = ground
            if dom.d == 1:
                b, nb = np.zeros(rows.size, dtype=np.int64), 1
            else:
                b, nb = _closeness_buckets(vals, dom.d, float(closeness[a]), ground)
        else:
            la = lmap[a]
            cnt = np.bincount(vals)
            if cnt.max() * la > rows.size:
                if not suppress:
                    raise ValueError(
                        f"attribute {a!r}: its {rows.size} sensitive values are not "
                        f"{la}-eligible (value {dom.values[int(cnt.argmax())]!r} occurs "
                        f"{int(cnt.max())} times, at most {rows.size // la} allowed; "
                        f"{int((cnt > 0).sum())} distinct values); lower l for it or "
                        "pass suppress=True")
                keep = _suppress_for_eligibility(vals, la)
                suppressed[j, rows[~keep]] = True
                rows, vals = rows[keep], vals[keep]
                if rows.size == 0:
                    continue
            b, nb = local_bucketization(vals, la)
        bid[j, rows] = b
        # show a bucket's values in a uniformly random order (Fig. 2)
        by_bucket = np.argsort(b, kind="stable")
        shuffled = np.lexsort((rng.random(rows.size), b))
        shown[j, rows[by_bucket]] = vals[shuffled]

    # ---- local generalization (Alg. 1 line 7)
    gid = local_generalization(codes, qi_mask, domains, k, method, balance=balance)

    # ---- published intervals of QI cells
    glo = np.full((q, n), -1, dtype=np.int64)
    ghi = np.full((q, n), -1, dtype=np.int64)
    order = np.argsort(gid, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(gid[order]) != 0])
    first_row = order[starts]
    sizes = np.diff(np.r_[starts, n])
    for j in range(q):
        c = codes[j, order]
        lo = np.minimum.reduceat(c, starts)
        hi = np.maximum.reduceat(c, starts)
        clo, chi = domains[j].cover(lo, hi)
        isqi = qi_mask[first_row, j]
        glo_g = np.where(isqi, clo, -1)
        ghi_g = np.where(isqi, chi, -1)
        glo[j, order] = np.repeat(glo_g, sizes)
        ghi[j, order] = np.repeat(ghi_g, sizes)

    ids = frame[id_column].to_numpy() if id_column else np.arange(1, n + 1)
    roles = {a: "qi" for a in qi} | {a: "semi_sensitive" for a in semi} | \
        {a: "sensitive" for a in sens}
    table, idt, sat = _publish(ids, gid, attrs, roles, domains, qi_mask, glo, ghi, bid, shown,
                               suppressed, codes, frame.columns)
    return LGBResult(table=table, idt=idt, sat=sat, k=k, l=lmap, closeness=closeness,
                     method=method, attributes=tuple(attrs), roles=roles, domains=domains,
                     codes=codes, qi_mask=qi_mask, gid=gid, glo=glo, ghi=ghi, bid=bid,
                     shown=shown, suppressed=suppressed, promoted=promoted, grounds=grounds)


def _publish(ids, gid, attrs, roles, domains, qi_mask, glo, ghi, bid, shown, suppressed, codes,
             column_order):
    n = gid.size
    cols = {"ID": ids, "GID": gid + 1}
    idt, sat = {}, {}
    for a in [c for c in column_order if c in roles]:
        j = attrs.index(a)
        dom = domains[j]
        lab = np.empty(n, dtype=object)
        isqi = qi_mask[:, j]
        lab[isqi] = dom.labels(glo[j, isqi], ghi[j, isqi])
        inb = bid[j] >= 0
        if inb.any():
            vals = np.array([str(v) for v in dom.values], dtype=object)
            lab[inb] = vals[shown[j, inb]]
        lab[suppressed[j]] = "*"
        cols[a] = lab
        if roles[a] != "qi":
            b = pd.array(np.where(inb, bid[j] + 1, 0), dtype="Int64")
            b[~inb] = pd.NA
            cols[f"{a}_bid"] = b
            rows = np.flatnonzero(inb)
            o = np.lexsort((ids[rows] if np.issubdtype(np.asarray(ids).dtype, np.number)
                            else np.arange(rows.size), bid[j, rows]))
            idt[a] = pd.DataFrame({"ID": ids[rows[o]], "BID": bid[j, rows[o]] + 1})
            vcodes = codes[j, rows]
            o2 = np.lexsort((vcodes, bid[j, rows]))
            dv = np.empty(dom.d, dtype=object)
            dv[:] = list(dom.values)
            sat[a] = pd.DataFrame({a: dv[vcodes[o2]], "BID": bid[j, rows[o2]] + 1})
            if dom.numeric:
                sat[a][a] = pd.to_numeric(sat[a][a])
            else:
                sat[a][a] = sat[a][a].astype(str)
    return pd.DataFrame(cols), idt, sat


# ====================================================================== checks
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
            from ..emd import emd_batch
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


# ===================================================================== metrics
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
    rng = _generator(seed, "queries")
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


def _random_predicate(dom: _Domain, rng) -> np.ndarray:
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
