"""LGB orchestration (paper 002, Alg. 1, Def. 9-10 and Fig. 2): :func:`lgb`
validates the table and the parameters, bucketizes every semi-sensitive and
sensitive attribute, generalizes the QI cells into local equivalence groups,
and builds the published table of Fig. 2 with the bucket tables IDT(ID, BID)
and SAT(value, BID); :class:`LGBResult` holds the release and what the checks
and metrics need, and writes it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...hierarchy import Hierarchy
from ...validate import check_int
from .bucketize import _closeness_buckets, _suppress_for_eligibility, local_bucketization
from .domain import _encode, _make_domain
from .flags import _flags_matrix, _generator, _promote
from .generalize import METHODS, local_generalization
from .metrics import c_dm, ncp


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
        from ...io.atomic import atomic_path
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
                from ...io.atomic import same_file
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


def _per_attr(v, attrs: list, name: str) -> dict:
    if isinstance(v, Mapping):
        extra = [a for a in v if a not in attrs]
        if extra:
            raise ValueError(f"{name} names {extra}, which are not semi-sensitive or sensitive")
        return dict(v)
    return {a: v for a in attrs}


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
    k = check_int(k, "k", minimum=1)
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
        lmap[a] = check_int(lmap[a], "l", minimum=1, column=a)
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
