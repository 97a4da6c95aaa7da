"""Privacy audit of a published SetTable (papers 000 and 004).

Three layers, each usable on its own:

* checkers of the paper's models on the *published* table:
  :func:`check_diversity` (Def. 11-14), :func:`check_anonymity` (Def. 17-18),
  :func:`check_closeness` (Def. 15-16 with eq. 12);
* :func:`audit`, which runs every check that the available information
  allows -- the published table alone (what an analyst can verify), or the
  table and the original data (what the data holder can verify);
* :func:`attack`, a Bayesian adversary who knows some attributes of a victim
  and the published parameters, measured against the promises 1/l_j and t_j.

Equivalence classes (Def. 10) live in the *non-aggregated* table: the
Cartesian product of each record's sets (paper 000 Table III(b)).  The class
for S_j with key c (one value per other published attribute) holds, for every
record i whose sets on the other attributes all contain c, the |R_ij| rows
(c, v), v in R_ij.  Hence, for every class,

* a record adds at most one occurrence of each value of S_j, and
* it adds |R_ij| >= m_j := min_i |R_ij| rows,

so n_j(v) <= (records in the class) <= (class size) / m_j: every relative
frequency is at most 1/m_j (frequency m_j-diversity, Def. 11), the entropy is
at least -log(max frequency) >= log(m_j) (entropy m_j-diversity, Def. 13) and
the class has at least m_j rows (m_j-anonymity, Def. 17).  The checkers
therefore *prove* diversity and anonymity from the set sizes alone, in
O(N) time, without expanding; the expansion (exact, for small tables) and a
sample of classes (exact per class, for large tables) are there to measure
the actual values and as test oracles.  See docs/security.md.

Examples
--------
>>> import pandas as pd, anonset
>>> from anonset.audit import audit, check_diversity
>>> df = pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")})
>>> pub = anonset.publish(df, anonset.Diversity(2), seed=3)
>>> check_diversity(pub).ok
True
>>> audit(pub, df).ok
True
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..randomized.closeness_search import u_of_p, worst_emd
from .._typing import PathLike, PerAttribute, Seed, TableLike, Weights
from ..emd import emd_batch
from ..models import (Anonymity, Closeness, Diversity, DiversityCloseness, model_from_dict)
from ..randomized.params import ground_object
from ..randomized.settable import SetTable
from ..schema import Schema

__all__ = ["CheckResult", "AuditReport", "AttackResult", "audit", "attack", "check_diversity",
           "check_anonymity", "check_closeness", "expand", "membership", "closeness_bound_any_A"]

#: Largest expanded (non-aggregated) table that method='auto' builds, in rows.
EXPAND_LIMIT = 2_000_000
_TOL = 1e-9


class CheckResult(NamedTuple):
    """A per-attribute report (one row per attribute) and the verdict."""

    report: pd.DataFrame
    ok: bool


# ------------------------------------------------------------------ access
def membership(table: SetTable, name: str) -> np.ndarray:
    """(n_rows, d) bool: ``M[i, v]`` is True when value code v is in row i's set.

    Read straight from the bitmasks, so it works on tables whose sets do not
    have the published size (which :meth:`SetTable.members` refuses).
    """
    a = table.schema[name]
    m = np.ascontiguousarray(table.mask(name), dtype="<u8")
    bits = np.unpackbits(m.view(np.uint8).reshape(m.shape[0], -1), axis=1, bitorder="little")
    return bits[:, :a.d].astype(bool)


def _stray_bits(table: SetTable, name: str) -> int:
    """Rows with a bit set at or beyond d (a value outside the domain)."""
    d = table.schema[name].d
    m = np.asarray(table.mask(name), dtype=np.uint64)
    if d % 64 == 0:
        return 0
    last = m[:, -1] >> np.uint64(d % 64)
    return int(np.count_nonzero(last))


def _sizes(M: np.ndarray) -> np.ndarray:
    return M.sum(axis=1, dtype=np.int64)


def _attr_value(value, name, default):
    """Per-attribute value from a scalar, a mapping or None."""
    if value is None:
        return default
    if isinstance(value, Mapping):
        return value.get(name, default)
    return value


# ------------------------------------------------------------- expansion
def expand(table: SetTable, *, values: bool = False, max_rows: int | None = EXPAND_LIMIT
           ) -> pd.DataFrame:
    """The non-aggregated table: one row per element of each record's product
    set (paper 000 Table III(b)), with a ``_record`` column.

    Parameters
    ----------
    values : bool
        Domain values instead of codes.
    max_rows : int or None
        Refuse (ValueError) to build more rows than this.
    """
    names = table.names
    rec, cols = _expand_codes(table, max_rows)
    out = pd.DataFrame({n: c for n, c in zip(names, cols)})
    if values:
        for n in names:
            dom = np.empty(table.schema[n].d, dtype=object)
            dom[:] = list(table.schema[n].domain)
            out[n] = dom[out[n].to_numpy()]
    out.insert(0, "_record", rec)
    return out


def _expand_codes(table: SetTable, max_rows) -> tuple:
    """(record index, [codes per attribute]) of every expanded row."""
    Ms = [membership(table, n) for n in table.names]
    sizes = np.ones(table.n_rows, dtype=np.float64)
    for M in Ms:
        sizes *= _sizes(M)
    total = float(sizes.sum())
    if max_rows is not None and total > max_rows:
        raise ValueError(f"the expanded table would have {total:.3g} rows (max_rows={max_rows}); "
                         "use method='bound' or 'sample'")
    rec = np.arange(table.n_rows)
    cols = []
    for M in Ms:
        rr, vv = np.nonzero(M)                      # row-major: sorted by row
        cnt = np.bincount(rr, minlength=table.n_rows)
        start = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        rep = cnt[rec]
        take = np.repeat(np.arange(rec.size), rep)
        off = np.arange(take.size) - np.repeat(np.cumsum(rep) - rep, rep)
        new = vv[start[rec[take]] + off]
        cols = [c[take] for c in cols] + [new]
        rec = rec[take]
    return rec, cols


def _stats_from_counts(C: np.ndarray) -> tuple:
    """(class sizes, max relative frequency, entropy) of count rows C (k, d)."""
    C = np.asarray(C, dtype=np.float64)
    size = C.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        P = C / size[:, None]
        maxf = P.max(axis=1)
        H = -np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0).sum(axis=1)
    return size, maxf, H


def _expanded_stats(table: SetTable, max_rows) -> dict:
    """Exact stats of every class for every attribute, from the expansion."""
    _, cols = _expand_codes(table, max_rows)
    names = table.names
    dims = [table.schema[n].d for n in names]
    out = {}
    for jj, j in enumerate(names):
        d = dims[jj]
        others = [k for k in range(len(names)) if k != jj]
        v = cols[jj].astype(np.int64)
        if others and math.prod(dims[k] for k in others) < 2 ** 62:
            key = np.ravel_multi_index([cols[k] for k in others], [dims[k] for k in others])
            _, g = np.unique(key, return_inverse=True)
        elif others:
            _, g = np.unique(np.stack([cols[k] for k in others], axis=1), axis=0,
                             return_inverse=True)
        else:
            g = np.zeros(v.size, dtype=np.int64)
        g = np.asarray(g).ravel()
        ncls = int(g.max()) + 1 if g.size else 0
        C = np.bincount(g * d + v, minlength=ncls * d).reshape(ncls, d)
        out[j] = (C, "expand")
    return out


class _Classes:
    """Exact counts of single equivalence classes without expanding.

    The class for S_j with key c holds the records whose sets contain c_k for
    every k != j.  With s_i = number of attributes k for which row i's set
    contains c_k, those are the rows with s_i = q, plus the rows with
    s_i = q - 1 whose set for j misses c_j: one pass over the rows per key.
    """

    def __init__(self, table: SetTable):
        self.names = table.names
        self.Ms = [membership(table, n) for n in self.names]

    def counts(self, key: Sequence[int]) -> list:
        """For one full key (one code per attribute), the count vector of the
        class for S_j keyed by the other codes, for every j."""
        q = len(self.names)
        cols = [M[:, c] for M, c in zip(self.Ms, key)]
        s = np.zeros(cols[0].shape[0], dtype=np.int16)
        for col in cols:
            s += col
        near = np.flatnonzero(s >= q - 1)
        s_near = s[near]
        out = []
        for j in range(q):
            inj = cols[j][near]
            rows = near[(s_near == q) | ((s_near == q - 1) & ~inj)]
            out.append(self.Ms[j][rows].sum(axis=0, dtype=np.int64))
        return out


def _sample_keys(table: SetTable, n_classes: int, rng) -> np.ndarray:
    """Keys of non-empty classes: a random record and a random member of each
    of its sets (so each key is a row of the expanded table)."""
    n = table.n_rows
    rows = rng.integers(0, n, size=n_classes)
    keys = np.empty((n_classes, len(table.names)), dtype=np.int64)
    for j, name in enumerate(table.names):
        M = membership(table, name)[rows]
        sz = M.sum(axis=1)
        pick = np.floor(rng.random(n_classes) * np.maximum(sz, 1)).astype(np.int64)
        cum = np.cumsum(M, axis=1) - 1
        keys[:, j] = np.argmax((cum == pick[:, None]) & M, axis=1)
        keys[sz == 0, j] = 0
    return keys


def _sampled_stats(table: SetTable, keys: np.ndarray) -> dict:
    cl = _Classes(table)
    per = {n: [] for n in table.names}
    for key in keys:
        for n, c in zip(table.names, cl.counts(key)):
            per[n].append(c)
    out = {}
    for n in table.names:
        C = np.array(per[n], dtype=np.int64).reshape(len(keys), table.schema[n].d)
        out[n] = (C[C.sum(axis=1) > 0], "sample")
    return out


def _class_scan(table: SetTable, method: str, n_classes: int, seed, max_rows) -> tuple:
    """(per-attribute minimum set sizes, per-attribute exact class counts or None)."""
    if method not in ("auto", "bound", "expand", "sample"):
        raise ValueError(f"method must be 'auto', 'bound', 'expand' or 'sample', got {method!r}")
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 1:
        raise ValueError(f"n_classes must be a positive int, got {n_classes!r}")
    sizes = {n: _sizes(membership(table, n)) for n in table.names}
    if method == "bound" or table.n_rows == 0:
        return sizes, None
    if method in ("auto", "expand"):
        total = np.ones(table.n_rows)
        for s in sizes.values():
            total = total * s
        if method == "expand" or total.sum() <= max_rows:
            return sizes, _expanded_stats(table, None if method == "expand" else max_rows)
    rng = np.random.default_rng(seed)
    return sizes, _sampled_stats(table, _sample_keys(table, n_classes, rng))


def _declared(table: SetTable, name: str, what: str):
    par = table.params[name]
    if par.exact:
        return 1
    if what == "l":
        return par.l
    if what == "k":
        return par.k if par.k is not None else par.l
    raise AssertionError(what)


# ------------------------------------------------------------ diversity
def check_diversity(table: SetTable, l: int | Mapping[str, int] | None = None,
                    measure: str = "frequency", *,
                    method: str = "auto", n_classes: int = 200, seed: Seed = None,
                    max_rows: int = EXPAND_LIMIT) -> CheckResult:
    """Check frequency or entropy (l_1..l_q)-diversity (paper 000 Def. 11-14).

    Parameters
    ----------
    table : SetTable
    l : int or {attribute: int}, optional
        Default: the published ``params[name].l`` (1 for exact attributes);
        attributes with no l are reported but not judged.
    measure : {'frequency', 'entropy'}
    method : {'auto', 'bound', 'expand', 'sample'}
        'bound': the proof from set sizes only (min |R_ij| >= l_j implies
        both measures; see the module docstring).  'expand': exact over every
        class of the non-aggregated table.  'sample': exact on ``n_classes``
        random non-empty classes (can refute, cannot prove).  'auto': the
        bound, plus 'expand' when the expanded table has at most ``max_rows``
        rows, else 'sample'.

    Returns
    -------
    CheckResult
        ``report`` columns: attribute, l, eta, min_size, max_size, bound_l
        (the l proven from set sizes), proven, method, classes (classes
        measured), max_freq, l_frequency (1/max_freq), l_entropy
        (exp of the smallest entropy), ok, message.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> pub = anonset.publish(pd.DataFrame({"a": list("xyzx"), "b": list("uvuv")}),
    ...                       anonset.Diversity({"a": 3, "b": 2}), seed=1)
    >>> r = check_diversity(pub)
    >>> r.ok, r.report["bound_l"].tolist()
    (True, [3, 2])
    """
    if measure not in ("frequency", "entropy"):
        raise ValueError(f"measure must be 'frequency' or 'entropy', got {measure!r}")
    sizes, exact = _class_scan(table, method, n_classes, seed, max_rows)
    rows = []
    for name in table.names:
        par = table.params[name]
        target = _attr_value(l, name, _declared(table, name, "l"))
        sz = sizes[name]
        m = int(sz.min()) if sz.size else 0
        row = {"attribute": name, "l": target, "eta": par.eta, "min_size": m,
               "max_size": int(sz.max()) if sz.size else 0, "bound_l": m,
               "proven": bool(target is not None and m >= target), "method": "bound",
               "classes": 0, "max_freq": np.nan, "l_frequency": np.nan, "l_entropy": np.nan}
        verdict = row["proven"]
        if exact is not None:
            C, how = exact[name]
            _, maxf, H = _stats_from_counts(C)
            row.update(method=how, classes=int(C.shape[0]))
            if C.shape[0]:
                row.update(max_freq=float(maxf.max()), l_frequency=float(1.0 / maxf.max()),
                           l_entropy=float(np.exp(H.min())))
            if target is not None and C.shape[0]:
                bad = (maxf > 1.0 / target + _TOL) if measure == "frequency" else \
                    (H < math.log(target) - _TOL)
                if how == "expand":
                    verdict = not bool(bad.any())
                elif bad.any():
                    verdict = False
        if target is None:
            msg, ok = f"{name}: no l declared; l = {m} holds (smallest set)", True
        elif verdict:
            ok = True
            msg = (f"{name}: {measure} {target}-diversity holds" +
                   (" (proven from set sizes)" if row["proven"] else " (every class checked)"))
        else:
            ok = False
            if exact is not None and row["classes"] and (
                    (measure == "frequency" and row["max_freq"] > 1.0 / target + _TOL) or
                    (measure == "entropy" and row["l_entropy"] < target * (1 - 1e-12))):
                got = row["l_frequency"] if measure == "frequency" else row["l_entropy"]
                msg = (f"{name}: {measure} {target}-diversity violated: a class for {name} "
                       f"has {measure} l = {got:.4g} < {target}")
            else:
                msg = (f"{name}: {measure} {target}-diversity not proven: smallest set has "
                       f"{m} value(s) < l = {target}")
        row.update(ok=ok, message=msg)
        rows.append(row)
    rep = pd.DataFrame(rows)
    return CheckResult(rep, bool(rep["ok"].all()) if len(rep) else True)


def check_anonymity(table: SetTable, k: int | Mapping[str, int] | None = None, *,
                    method: str = "auto", n_classes: int = 200,
                    seed: Seed = None, max_rows: int = EXPAND_LIMIT) -> CheckResult:
    """Check (k_1..k_q)-anonymity (paper 000 Def. 17-18): every equivalence
    class for S_j has at least k_j rows in the non-aggregated table.

    A record adds |R_ij| rows to each of its classes for S_j, so the smallest
    set size is a proven k.  ``k`` defaults to the published k, else the
    published l (frequency l-diversity implies l-anonymity, Sec. VII-D).
    ``method`` as in :func:`check_diversity`.

    Returns
    -------
    CheckResult
        ``report`` columns: attribute, k, eta, min_size, bound_k, proven,
        method, classes, min_class, ok, message.
    """
    sizes, exact = _class_scan(table, method, n_classes, seed, max_rows)
    rows = []
    for name in table.names:
        par = table.params[name]
        target = _attr_value(k, name, _declared(table, name, "k"))
        sz = sizes[name]
        m = int(sz.min()) if sz.size else 0
        row = {"attribute": name, "k": target, "eta": par.eta, "min_size": m, "bound_k": m,
               "proven": bool(target is not None and m >= target), "method": "bound",
               "classes": 0, "min_class": np.nan}
        verdict = row["proven"]
        if exact is not None:
            C, how = exact[name]
            size = C.sum(axis=1)
            row.update(method=how, classes=int(C.shape[0]))
            if size.size:
                row["min_class"] = int(size.min())
                if target is not None:
                    if how == "expand":
                        verdict = bool(size.min() >= target)
                    elif size.min() < target:
                        verdict = False
        if target is None:
            ok, msg = True, f"{name}: no k declared; k = {m} holds (smallest set)"
        elif verdict:
            ok, msg = True, f"{name}: {target}-anonymity holds"
        else:
            ok = False
            msg = (f"{name}: {target}-anonymity " +
                   (f"violated: a class for {name} has {row['min_class']} row(s)"
                    if row["classes"] and row["min_class"] < target else
                    f"not proven: smallest set has {m} value(s) < k = {target}"))
        row.update(ok=ok, message=msg)
        rows.append(row)
    rep = pd.DataFrame(rows)
    return CheckResult(rep, bool(rep["ok"].all()) if len(rep) else True)


# ------------------------------------------------------------ closeness
def closeness_bound_any_A(p: float, eta: int, d: int) -> float:
    """An upper bound on max_Z EMD(A, B_Z) valid for EVERY distribution A and
    every ground distance with distances in [0, 1].

    With u = kappa_d / kappa_c and a = A(Z), EMD(A, B_Z) = (1-u) a E_Z /
    (u + (1-u) a) with E_Z = EMD(A, A|_Z) <= TV(A, A|_Z) = 1 - a; maximizing
    (1-u) a (1-a) / (u + (1-u) a) over a in [0, 1] (at a = sqrt(u)/(1+sqrt(u)))
    gives (1 - sqrt(u)) / (1 + sqrt(u)).  See docs/security.md.
    """
    if eta >= d:
        return 0.0
    u = u_of_p(float(p), int(eta), int(d))
    if u >= 1.0:
        return 0.0
    r = math.sqrt(max(u, 0.0))
    return (1.0 - r) / (1.0 + r)


def _ground_name(table: SetTable, name: str, ground) -> str:
    g = _attr_value(ground, name, None) or table.params[name].ground
    if g in (None, "auto"):
        a = table.schema[name]
        g = "hierarchical" if a.hierarchy is not None else ("ordered" if a.kind == "ordinal" else "equal")
    return g


def _witness(A: np.ndarray, eta: int, p: float, g) -> tuple:
    """Largest EMD(A, B_Z) over a few candidate sets Z (a lower bound on the
    worst case): the eta least / most frequent values and every window of eta
    consecutive values."""
    d = A.size
    order = np.argsort(A, kind="stable")
    cands = [order[:eta], order[-eta:]] + [np.arange(s, s + eta) for s in range(d - eta + 1)]
    u = u_of_p(p, eta, d)
    Bs = []
    for Z in cands:
        w = np.full(d, u) * A
        w[Z] = A[Z]
        Bs.append(w / w.sum() if w.sum() > 0 else A)
    e = emd_batch(np.array(Bs), A, g)
    k = int(np.argmax(e))
    return float(e[k]), tuple(int(x) for x in np.sort(cands[k]))


def _codes_of(original, table: SetTable, schema=None) -> dict:
    from ..encode import encode
    schema = schema if schema is not None else table.schema
    codes = encode(original, schema, columns=table.names)
    for n, c in codes.items():
        if len(c) != table.n_rows:
            raise ValueError(f"original: column {n!r} has {len(c)} rows, the published table "
                             f"{table.n_rows}; give the original rows in publishing order")
    rows = getattr(table, "source_rows", None)
    if rows is not None:            # the publication shuffled the rows: align them
        codes = {n: c[rows] for n, c in codes.items()}
    return codes


def check_closeness(table: SetTable, original: TableLike | None = None,
                    A: Mapping[str, Weights] | None = None, t: PerAttribute | None = None, *,
                    ground: str | Mapping[str, str] | None = None,
                    schema: Schema | None = None) -> CheckResult:
    """Check (t_1..t_q)-closeness (paper 000 Def. 15-16) of a published table.

    For each attribute with a finite t_j, the worst EMD(A_j, B_j) over every
    possible set of size eta_j (eq. 12, with the published p_j and eta_j), by
    :func:`anonset.closeness_search.worst_emd`: exact (enumeration or the
    subset-sum DP) or, for large ordered/hierarchical domains, a proven upper
    bound (column ``exact`` says which; when the bound exceeds t_j a few
    candidate sets are tried to find a real violation).  By Lemma 1 the
    per-set bound covers every equivalence class (Theorem 4).

    Parameters
    ----------
    original : DataFrame, optional
        The original data (data holder): A_j is its distribution.
    A : {attribute: counts or distribution}, optional
        A_j given directly (integer counts enable the exact DP).
    t : float or {attribute: float}, optional
        Default: the published ``params[name].t``.
    ground : str or {attribute: str}, optional
        Default: the published ground (else the attribute's natural one).

    Without ``original`` or ``A`` only :func:`closeness_bound_any_A` (valid
    for every A) can be checked; where it exceeds t_j the attribute is
    'unverified', not failed.

    Returns
    -------
    CheckResult
        ``report`` columns: attribute, t, p, eta, d, ground, bound_any_A,
        worst_emd, exact, method, status ('pass'/'fail'/'unverified'), ok,
        message.  ``ok`` is True only when every attribute passes.
    """
    codes = _codes_of(original, table, schema) if original is not None else None
    rows = []
    for name in table.names:
        par = table.params[name]
        tj = _attr_value(t, name, par.t)
        if par.exact or tj is None or math.isinf(float(tj)):
            continue
        tj = float(tj)
        gname = _ground_name(table, name, ground)
        g = ground_object(gname, table.schema[name])
        row = {"attribute": name, "t": tj, "p": par.p, "eta": par.eta, "d": par.d,
               "ground": gname, "bound_any_A": closeness_bound_any_A(par.p, par.eta, par.d),
               "worst_emd": np.nan, "exact": False, "method": "none"}
        Aj = None
        if A is not None and name in A:
            Aj = np.asarray(A[name])
        elif codes is not None:
            Aj = np.bincount(codes[name], minlength=par.d).astype(np.int64)
        if Aj is not None:
            r = worst_emd(Aj, par.eta, par.p, g)
            row.update(worst_emd=r.value, exact=r.exact, method=r.method)
            if r.value <= tj + _TOL:
                status = "pass"
                msg = (f"{name}: worst EMD over every possible set {r.value:.4g} <= t = {tj:g}"
                       f"{'' if r.exact else ' (upper bound)'}")
            elif r.exact:
                status = "fail"
                msg = f"{name}: worst EMD {r.value:.4g} > t = {tj:g} (p = {par.p:.6g} too large)"
            else:
                Af = Aj.astype(np.float64) / Aj.sum()
                w, Z = _witness(Af, par.eta, par.p, g)
                if w > tj + _TOL:
                    status = "fail"
                    msg = f"{name}: the set {Z} gives EMD {w:.4g} > t = {tj:g}"
                else:
                    status = "unverified"
                    msg = (f"{name}: upper bound {r.value:.4g} > t = {tj:g} and no violating "
                           f"set found (largest tried {w:.4g}): not proven")
        elif row["bound_any_A"] <= tj + _TOL:
            status = "pass"
            msg = (f"{name}: worst EMD <= {row['bound_any_A']:.4g} <= t = {tj:g} for every "
                   "distribution A")
        else:
            status = "unverified"
            msg = (f"{name}: needs A_{name} (the original distribution): the bound valid for "
                   f"every A is {row['bound_any_A']:.4g} > t = {tj:g}")
        row.update(status=status, ok=status == "pass", message=msg)
        rows.append(row)
    rep = pd.DataFrame(rows, columns=["attribute", "t", "p", "eta", "d", "ground", "bound_any_A",
                                      "worst_emd", "exact", "method", "status", "ok", "message"])
    return CheckResult(rep, bool(rep["ok"].all()) if len(rep) else True)


# --------------------------------------------------------------- attack
@dataclass
class AttackResult:
    """Outcome of :func:`attack`.

    Attributes
    ----------
    summary : DataFrame
        One row per target attribute: promise 1/l and t, victims, the
        adversary's top-1 confidence (mean, quantiles, max), share of victims
        with confidence above 1/l, accuracy (share of correct top-1 guesses),
        the prior-only baseline, and EMD(prior, posterior) (mean, max).
    victims : DataFrame
        One row per (victim, target attribute): row, attribute, confidence,
        guess, truth, correct, prior_confidence, emd.
    settings : dict
    """

    summary: pd.DataFrame
    victims: pd.DataFrame
    settings: dict = field(default_factory=dict)

    def plot(self, path=None, ax=None):
        """Box plot of the confidence per attribute with the 1/l promise
        (needs matplotlib; imported here only).  Returns the figure."""
        import matplotlib.pyplot as plt
        if ax is None:
            fig, ax = plt.subplots(figsize=(1.0 + 0.8 * max(len(self.summary), 1), 4))
        else:
            fig = ax.figure
        names = list(self.summary["attribute"])
        data = [self.victims.loc[self.victims["attribute"] == n, "confidence"].to_numpy()
                for n in names]
        ax.boxplot(data, whis=(1, 99), showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=45, ha="right")
        for i, n in enumerate(names):
            row = self.summary.iloc[i]
            ax.hlines(row["promise_1_over_l"], i + 0.6, i + 1.4, colors="red", linestyles="--")
            ax.plot(i + 1, row["accuracy"], "k^")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("adversary's top-1 confidence")
        ax.set_title(f"Bayes adversary, known = {self.settings.get('known')}, prior = "
                     f"{self.settings.get('prior')} ({self.settings.get('prior_source')}); "
                     "red: 1/l, triangle: accuracy", fontsize=8)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig


def _conditional_priors(codes, K: tuple, j: str, d: int, victims: np.ndarray,
                        marginal: np.ndarray, cache: dict) -> np.ndarray:
    """Leave-one-out P(S_j | known values) from the original data: the
    distribution of S_j among the OTHER records sharing the victim's known
    values (paper 000 Sec. VII-A's adversary who knows every other record).
    Groups with no other record fall back to the marginal."""
    if K not in cache:
        dims = [int(codes[k].max()) + 1 for k in K]
        key = np.ravel_multi_index([codes[k].astype(np.int64) for k in K], dims)
        uk, g = np.unique(key, return_inverse=True)
        cache[K] = (uk.size, np.asarray(g).ravel())
    nk, g = cache[K]
    C = np.bincount(g * d + codes[j], minlength=nk * d).reshape(nk, d).astype(np.float64)
    P = C[g[victims]]
    P[np.arange(victims.size), codes[j][victims]] -= 1.0       # leave the victim out
    s = P.sum(axis=1)
    empty = s <= 0
    P[empty] = marginal
    s[empty] = 1.0
    return P / s[:, None]


def attack(table: SetTable, original=None, *, known=1, n_targets: int | None = 10_000,
           prior: str = "marginal", prior_source: str = "auto", seed=None,
           schema=None) -> AttackResult:
    """Simulate a Bayesian adversary against a published table.

    The adversary has linked a victim to its published row, knows ``known``
    of the victim's sensitive attributes exactly and the published (p_j,
    eta_j), and for every other sensitive attribute S_j computes the
    posterior ``P(v | R_ij) ∝ prior(v) * (kappa_c if v in R_ij else kappa_d)``
    (paper 000 Sec. V-C3).  Its top-1 guess is the posterior mode; its
    confidence the posterior maximum.

    Parameters
    ----------
    original : DataFrame, optional
        Needed for accuracy (the truth) and for the 'true' or 'conditional'
        prior.
    known : int or list of str
        How many sensitive attributes the adversary knows (drawn at random per
        victim), or which ones.
    n_targets : int or None
        Number of victims (random rows); None for every row.
    prior : {'marginal', 'conditional'}
        'marginal': A_j, the whole table's distribution (eq. 12).
        'conditional': the distribution of S_j among the other records that
        share the victim's known values (needs ``original``).
    prior_source : {'auto', 'true', 'reconstructed'}
        Where the marginal prior comes from: the original data, or the EM
        reconstruction from the published table (what an analyst has).
        'auto': 'true' when ``original`` is given.
    """
    if prior not in ("marginal", "conditional"):
        raise ValueError(f"prior must be 'marginal' or 'conditional', got {prior!r}")
    if prior_source not in ("auto", "true", "reconstructed"):
        raise ValueError(f"prior_source must be 'auto', 'true' or 'reconstructed', got {prior_source!r}")
    if prior_source == "auto":
        prior_source = "true" if original is not None else "reconstructed"
    if original is None and (prior_source == "true" or prior == "conditional"):
        raise ValueError(f"prior={prior!r} with prior_source={prior_source!r} needs the original data")
    sens = [n for n in table.names if not table.params[n].exact]
    if not sens:
        raise ValueError("the table has no sensitive attribute to attack")
    if isinstance(known, (list, tuple)):
        bad = [k for k in known if k not in sens]
        if bad:
            raise ValueError(f"known: {bad} are not sensitive attributes of the table ({sens})")
        n_known = len(known)
    elif isinstance(known, bool) or not isinstance(known, (int, np.integer)) or not 0 <= known < len(sens):
        raise ValueError(f"known must be a list of attributes or an int in [0, {len(sens) - 1}], "
                         f"got {known!r}")
    else:
        n_known = int(known)
    if n_targets is not None and (isinstance(n_targets, bool) or not isinstance(n_targets, (int, np.integer))
                                  or n_targets < 1):
        raise ValueError(f"n_targets must be a positive int or None, got {n_targets!r}")
    rng = np.random.default_rng(seed)
    n = table.n_rows
    victims = np.arange(n) if n_targets is None or n_targets >= n else \
        np.sort(rng.choice(n, size=int(n_targets), replace=False))
    nv = victims.size
    # which attributes each victim's adversary knows: (nv, q_s) bool
    if isinstance(known, (list, tuple)):
        K = np.zeros((nv, len(sens)), dtype=bool)
        K[:, [sens.index(k) for k in known]] = True
    else:
        r = rng.random((nv, len(sens)))
        K = np.argsort(r, axis=1)[:, :n_known]
        K = np.zeros((nv, len(sens)), dtype=bool) | \
            (np.arange(len(sens))[None, :, None] == K[:, None, :]).any(axis=2)
    codes = _codes_of(original, table, schema) if original is not None else None
    marginals = {}
    for j in sens:
        d = table.schema[j].d
        if prior_source == "true":
            A = np.bincount(codes[j], minlength=d).astype(np.float64)
        else:
            from ..randomized.reconstruct import reconstruct
            A = np.clip(np.asarray(reconstruct(table, [j], "em").counts, dtype=np.float64), 0, None)
        marginals[j] = A / A.sum()
    parts, rows, cache = [], [], {}
    for jj, j in enumerate(sens):
        par = table.params[j]
        d = par.d
        sel = ~K[:, jj]
        vj = victims[sel]
        if vj.size == 0:
            continue
        A = marginals[j]
        if prior == "conditional":
            P = np.empty((vj.size, d))
            Ksel = K[sel]
            patterns, inv = np.unique(Ksel, axis=0, return_inverse=True)
            for pi, pat in enumerate(patterns):
                idx = np.flatnonzero(inv.ravel() == pi)
                names_k = tuple(sens[i] for i in np.flatnonzero(pat))
                P[idx] = _conditional_priors(codes, names_k, j, d, vj[idx], A, cache) \
                    if names_k else A
        else:
            P = np.broadcast_to(A, (vj.size, d))
        M = membership(table, j)[vj]
        u = u_of_p(par.p, par.eta, d) if par.eta < d else 1.0
        post = P * np.where(M, 1.0, u)
        s = post.sum(axis=1, keepdims=True)
        post = np.divide(post, s, out=np.array(P, dtype=np.float64, copy=True), where=s > 0)
        guess = post.argmax(axis=1)
        conf = post[np.arange(vj.size), guess]
        pconf = np.asarray(P).max(axis=1)
        g = ground_object(_ground_name(table, j, None), table.schema[j])
        e = emd_batch(post, A, g) if par.t is not None else np.full(vj.size, np.nan)
        truth = codes[j][vj] if codes is not None else np.full(vj.size, -1)
        correct = (guess == truth) if codes is not None else np.zeros(vj.size, dtype=bool)
        pcorrect = (np.asarray(P).argmax(axis=1) == truth) if codes is not None else correct
        parts.append(pd.DataFrame({"row": vj, "attribute": j, "confidence": conf, "guess": guess,
                                   "truth": truth, "correct": correct,
                                   "prior_confidence": pconf, "emd": e}))
        lj = par.l if par.l is not None else (par.k if par.k is not None else None)
        promise = 1.0 / lj if lj else np.nan
        q = np.quantile(conf, [0.5, 0.9, 0.99])
        rows.append({
            "attribute": j, "l": lj, "promise_1_over_l": promise, "t": par.t, "p": par.p,
            "eta": par.eta, "d": d, "victims": int(vj.size),
            "conf_mean": float(conf.mean()), "conf_q50": float(q[0]), "conf_q90": float(q[1]),
            "conf_q99": float(q[2]), "conf_max": float(conf.max()),
            "share_above_1_over_l": float((conf > promise + 1e-12).mean()) if lj else np.nan,
            "accuracy": float(correct.mean()) if codes is not None else np.nan,
            "prior_accuracy": float(pcorrect.mean()) if codes is not None else np.nan,
            "prior_conf_mean": float(pconf.mean()),
            "emd_mean": float(np.nanmean(e)) if par.t is not None else np.nan,
            "emd_max": float(np.nanmax(e)) if par.t is not None else np.nan,
        })
    victims_df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return AttackResult(pd.DataFrame(rows), victims_df,
                        {"known": known, "prior": prior, "prior_source": prior_source,
                         "n_targets": int(nv), "seed_given": seed is not None})


_run_attack = attack      # audit() takes a parameter named attack


# ---------------------------------------------------------------- audit
@dataclass
class AuditReport:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    checks : DataFrame
        One row per check: check, attribute, status ('pass', 'fail', 'warn',
        'info', 'unverified'), value, expected, message.
    diversity, anonymity, closeness : CheckResult or None
    classes : DataFrame or None
        Data holder only: exact diversity of the equivalence classes keyed by
        sampled records' true values.
    attack : AttackResult or None
    with_data : bool
    """

    checks: pd.DataFrame
    diversity: CheckResult | None = None
    anonymity: CheckResult | None = None
    closeness: CheckResult | None = None
    classes: pd.DataFrame | None = None
    attack: AttackResult | None = None
    with_data: bool = False

    @property
    def ok(self) -> bool:
        """True when no check failed ('warn' and 'unverified' do not fail)."""
        return not bool((self.checks["status"] == "fail").any())

    @property
    def failures(self) -> list:
        return self.checks.loc[self.checks["status"] == "fail", "message"].tolist()

    def to_frame(self) -> pd.DataFrame:
        return self.checks.copy()

    def to_text(self) -> str:
        lines = [f"anonset audit ({'with the original data' if self.with_data else 'published table only'}):"
                 f" {'PASSED' if self.ok else 'FAILED'}"]
        for st in ("fail", "warn", "unverified"):
            for m in self.checks.loc[self.checks["status"] == st, "message"]:
                lines.append(f"  {st.upper():10s} {m}")
        counts = self.checks["status"].value_counts()
        lines.append("  checks: " + ", ".join(f"{int(v)} {k}" for k, v in counts.items()))
        with pd.option_context("display.width", 160, "display.max_columns", 30,
                               "display.float_format", "{:.4g}".format):
            lines.append("")
            lines.append(self.checks[["check", "attribute", "status", "value", "expected"]]
                         .to_string(index=False))
            if self.attack is not None and len(self.attack.summary):
                cols = ["attribute", "l", "promise_1_over_l", "victims", "conf_mean", "conf_q50",
                        "conf_q90", "conf_q99", "conf_max", "share_above_1_over_l", "accuracy",
                        "prior_accuracy", "emd_max", "t"]
                lines.append("")
                s = self.attack.settings
                lines.append(f"attack: Bayes adversary knowing {s['known']} attribute(s), "
                             f"{s['prior']} prior ({s['prior_source']}), {s['n_targets']} victims")
                lines.append(self.attack.summary[cols].to_string(index=False))
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def plot(self, path: PathLike | None = None, ax: Any = None) -> Any:
        """The attack's confidence plot (see :meth:`AttackResult.plot`)."""
        if self.attack is None:
            raise ValueError("no attack simulation in this report: run audit(..., attack=True)")
        return self.attack.plot(path=path, ax=ax)


_SECRET_NAMES = re.compile(r"(^|_)(key|seed|secret|nonce|password|token)($|_)", re.I)
_HEX_KEY = re.compile(r"^(0x)?[0-9a-fA-F]{32,}$")


def _secrets_in(obj, path="") -> list:
    found = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            p = f"{path}.{k}" if path else str(k)
            documented = p == "info.key" and v in ("os", "seed", "research-seed", "persistent")
            if _SECRET_NAMES.search(str(k)) and not isinstance(v, (bool, type(None))) \
                    and not documented:
                found.append(p)
            found += _secrets_in(v, p)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            found += _secrets_in(v, f"{path}[{i}]")
    elif isinstance(obj, (bytes, bytearray)):
        found.append(path)
    elif isinstance(obj, str) and _HEX_KEY.match(obj):
        found.append(path)
    return found


def _param_checks(table: SetTable, add) -> None:
    """The published parameters against the declared model."""
    try:
        model = model_from_dict(table.model) if table.model else None
    except (ValueError, KeyError, TypeError) as e:
        add("model", "-", "fail", table.model, "a known model", f"model: unreadable ({e})")
        model = None
    if model is None:
        add("model", "-", "warn", None, "a declared model",
            "model: none declared; only set sizes, domains and metadata are checked")
    for a in table.schema.published:
        name, par = a.name, table.params[a.name]
        probs = []
        if par.d != a.d:
            probs.append(f"params say d = {par.d}, the domain has {a.d} values")
        if not 1 <= par.eta <= a.d:
            probs.append(f"eta = {par.eta} outside [1, d = {a.d}]")
        if not 0.0 <= par.p <= 1.0:
            probs.append(f"p = {par.p} outside [0, 1]")
        if a.role == "exact":
            if not (par.exact and par.p == 1.0 and par.eta == 1):
                probs.append(f"exact QID must have p = 1, eta = 1 (got p = {par.p}, eta = {par.eta})")
            add("parameters", name, "fail" if probs else "pass", f"p={par.p:.6g}, eta={par.eta}",
                "p=1, eta=1", f"{name}: " + ("; ".join(probs) if probs else "exact QID, published as is"))
            continue
        if par.exact:
            probs.append("a sensitive QID is marked exact")
        notes = []
        status = "pass"
        if model is not None:
            wants_l = isinstance(model, (Diversity, DiversityCloseness))
            wants_k = isinstance(model, Anonymity)
            wants_t = isinstance(model, (Closeness, DiversityCloseness))
            if wants_l or wants_k:
                what = "l" if wants_l else "k"
                try:
                    declared = model.l_for(name) if wants_l else model.k_for(name)
                except ValueError as e:
                    declared = None
                    probs.append(str(e))
                got = par.l if wants_l else par.k
                if declared is not None:
                    clipped = declared >= a.d and got == max(a.d - 1, 1)
                    if clipped:
                        notes.append(f"{what} = {declared} clipped to {got} (d = {a.d}, clip_l): "
                                     f"weaker than the model")
                        status = "warn"
                    elif got != declared:
                        probs.append(f"params claim {what} = {got}, the model {what} = {declared}")
                    eff = got if got is not None else declared
                    if par.eta < eff:
                        probs.append(f"eta = {par.eta} < {what} = {eff}")
                    if isinstance(model, (Diversity, Anonymity)) and par.p != 1.0:
                        probs.append(f"p = {par.p:.6g}, but {model.name} publishes with p = 1 "
                                     "(Theorems 2-3)")
            if wants_t:
                try:
                    tm = model.t_for(name)
                except ValueError as e:
                    tm = None
                    probs.append(str(e))
                if tm is not None and (par.t is None or not math.isclose(float(par.t), tm)):
                    probs.append(f"params claim t = {par.t}, the model t = {tm}")
                if par.ground is None and tm is not None and not math.isinf(tm):
                    probs.append("no ground distance recorded for t")
        msg = f"{name}: " + "; ".join(probs + notes) if (probs or notes) else \
            f"{name}: p = {par.p:.6g}, eta = {par.eta} consistent with the model"
        add("parameters", name, "fail" if probs else status, f"p={par.p:.6g}, eta={par.eta}",
            _expected_params(model, name, a, par), msg)


def _expected_params(model, name, a, par) -> str:
    if isinstance(model, (Diversity, Anonymity)):
        what = "l" if isinstance(model, Diversity) else "k"
        eff = getattr(par, what) or min(model.l_for(name) if what == "l" else model.k_for(name), a.d)
        return f"p=1, eta>={what}={eff}"
    if isinstance(model, Closeness):
        return f"worst EMD <= t={model.t_for(name):g}"
    if isinstance(model, DiversityCloseness):
        return f"eta>=l={par.l or min(model.l_for(name), a.d)}, worst EMD <= t={model.t_for(name):g}"
    return ""


def audit(table: SetTable, original: TableLike | None = None, *, schema: Schema | None = None,
          attack: bool = False, known: int | Sequence[str] = 1,
          n_targets: int | None = 10_000, n_classes: int = 200, prior: str = "marginal",
          z_max: float = 4.0, closeness_margin: float = 0.01, seed: Seed = None) -> AuditReport:
    """Audit a published table against its declared privacy model.

    Without ``original`` (what anyone holding the table can verify):

    * metadata: no generator key or seed value is stored;
    * domains: every set lies in its declared domain; inferred domains are
      flagged (they reveal which values occur);
    * set sizes: every set of S_j has exactly eta_j values;
    * parameters: consistent with the model (diversity/anonymity: p = 1,
      eta >= l; closeness: the declared t and ground);
    * (l_j)-diversity and (k_j)-anonymity, proven from the set sizes;
    * closeness: proven where the bound valid for every distribution A holds;
      otherwise 'unverified', with an estimate from the reconstructed A_j
      ('warn' when it exceeds t_j by more than ``closeness_margin``).  A_j
      itself cannot be known without the data.

    With ``original`` (the data holder; rows in publishing order), also:

    * the rate at which the true value is in its set matches
      p_j + (1 - p_j) eta_j / d_j (binomial z-score, fail beyond ``z_max``;
      with p_j = 1 every set must hold its true value);
    * diversity of the equivalence classes for S_j keyed by the true values
      of ``n_classes`` sampled records (exact per class; Theorems 2-3);
    * closeness with the true A_j (Theorem 4).

    ``attack=True`` adds :func:`attack` (``known``, ``n_targets``, ``prior``).

    Returns
    -------
    AuditReport
        ``ok`` is False when any check fails; every failing message names the
        attribute.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")})
    >>> pub = anonset.publish(df, anonset.Diversity(2), seed=3)
    >>> rep = audit(pub, df, attack=True, n_targets=None, seed=0)
    >>> rep.ok, sorted(rep.attack.summary["attribute"])
    (True, ['a', 'b'])
    """
    if not isinstance(table, SetTable):
        raise ValueError(f"table must be a SetTable, got {type(table).__name__}")
    rows = []

    def add(check, attribute, status, value, expected, message):
        rows.append({"check": check, "attribute": attribute, "status": status,
                     "value": value, "expected": expected, "message": message})

    # --- metadata
    try:
        meta = json.loads(json.dumps(table.metadata(), default=repr))
    except (TypeError, ValueError) as e:        # pragma: no cover - metadata is plain JSON
        meta = {}
        add("metadata", "-", "fail", None, "JSON", f"metadata: not serializable ({e})")
    leaks = _secrets_in(meta)
    add("metadata", "-", "fail" if leaks else "pass", leaks or None, "no key or seed",
        f"metadata: possible key material at {leaks}" if leaks else
        "metadata: no generator key or seed stored")
    if table.info.get("seeded"):
        add("metadata", "-", "warn", "seeded", "fresh OS key",
            "metadata: published from a user seed; the seed determines every set and must be "
            "kept as secret as the data")
    if table.info.get("rng", "chacha20") != "chacha20":
        add("metadata", "-", "warn", table.info.get("rng"), "chacha20",
            f"metadata: generator {table.info.get('rng')!r} is not cryptographically strong")

    # --- domains and set sizes
    Ms = {}
    for a in table.schema.published:
        name, par = a.name, table.params[a.name]
        stray = _stray_bits(table, name)
        if stray:
            add("domain", name, "fail", stray, 0, f"{name}: {stray} set(s) hold values outside "
                f"the domain of {a.d} values")
        elif a.inferred:
            add("domain", name, "warn", "inferred", "declared", f"{name}: the domain was inferred "
                "from the data, so it reveals which values occur (declare it)")
        else:
            add("domain", name, "pass", a.d, a.d, f"{name}: declared domain of {a.d} values")
        Ms[name] = membership(table, name)
        sz = _sizes(Ms[name])
        bad = np.flatnonzero(sz != par.eta)
        if bad.size:
            add("set_size", name, "fail", f"{bad.size} rows", f"|R|={par.eta}",
                f"{name}: {bad.size} set(s) do not have eta = {par.eta} values (first at row "
                f"{int(bad[0])}, size {int(sz[bad[0]])})")
        else:
            add("set_size", name, "pass", par.eta, par.eta,
                f"{name}: all {table.n_rows} sets have eta = {par.eta} values")

    # --- parameters against the model
    _param_checks(table, add)

    # --- diversity / anonymity (proofs from set sizes; exact when small)
    div = an = None
    if any(table.params[n].l is not None for n in table.names):
        measure = table.model.get("measure", "frequency") if table.model else "frequency"
        div = check_diversity(table, measure=measure, n_classes=n_classes, seed=seed)
        for r in div.report.itertuples():
            if r.l is None or (isinstance(r.l, float) and math.isnan(r.l)):
                continue
            add("diversity", r.attribute, "pass" if r.ok else "fail", r.bound_l, r.l, r.message)
    if any(_declared(table, n, "k") not in (None, 1) for n in table.names if not table.params[n].exact):
        an = check_anonymity(table, n_classes=n_classes, seed=seed)
        for r in an.report.itertuples():
            if r.k is None or (isinstance(r.k, float) and math.isnan(r.k)):
                continue
            add("anonymity", r.attribute, "pass" if r.ok else "fail", r.bound_k, r.k, r.message)

    # --- closeness
    clo = None
    has_t = any(table.params[n].t is not None and not math.isinf(float(table.params[n].t))
                for n in table.names if not table.params[n].exact)
    codes = _codes_of(original, table, schema) if original is not None else None
    if has_t:
        clo = check_closeness(table, A={n: np.bincount(c, minlength=table.schema[n].d)
                                        for n, c in codes.items()} if codes is not None else None)
        for r in clo.report.itertuples():
            if codes is not None:
                add("closeness", r.attribute, r.status, r.worst_emd, r.t, r.message)
                continue
            if r.status == "pass":
                add("closeness", r.attribute, "pass", r.bound_any_A, r.t, r.message)
                continue
            # estimate A_j from the published table (EM); an estimate, not a proof
            from ..randomized.reconstruct import reconstruct
            Ah = np.clip(np.asarray(reconstruct(table, [r.attribute], "em").counts, float), 0, None)
            g = ground_object(r.ground, table.schema[r.attribute])
            est = worst_emd(Ah / Ah.sum(), r.eta, r.p, g).value
            st = "warn" if est > r.t + closeness_margin else "unverified"
            add("closeness", r.attribute, st, est, r.t,
                f"{r.attribute}: not verifiable without A_{r.attribute}; with A estimated from "
                f"the published table the worst EMD is {est:.4g} (t = {r.t:g}); "
                f"the bound for every A is {r.bound_any_A:.4g}")

    # --- data holder checks
    classes = None
    if codes is not None:
        n = table.n_rows
        add("rows", "-", "pass", n, n, f"original has the {n} published rows")
        for name in table.names:
            par = table.params[name]
            c = codes[name]
            hit = int(Ms[name][np.arange(n), c].sum())
            pi = par.inclusion
            if pi >= 1.0:
                st = "pass" if hit == n else "fail"
                msg = (f"{name}: every set holds its true value" if hit == n else
                       f"{name}: {n - hit} set(s) miss their true value although p = 1")
                add("inclusion", name, st, hit / n, 1.0, msg)
                continue
            z = (hit - n * pi) / math.sqrt(n * pi * (1.0 - pi))
            st = "pass" if abs(z) <= z_max else "fail"
            add("inclusion", name, st, hit / n, pi,
                f"{name}: true value in its set for {hit / n:.4f} of the rows, expected "
                f"p + (1-p) eta/d = {pi:.4f} (z = {z:+.2f}{'' if st == 'pass' else f', |z| > {z_max:g}'})")
        classes = _record_classes(table, codes, n_classes, seed)
        for r in classes.itertuples():
            if r.l is None or (isinstance(r.l, float) and math.isnan(r.l)):
                continue
            ok = r.max_freq <= 1.0 / r.l + _TOL
            add("classes", r.attribute, "pass" if ok else "fail", r.max_freq, 1.0 / r.l,
                f"{r.attribute}: in the classes of {r.classes} sampled records the largest share of "
                f"one value is {r.max_freq:.4f} (1/l = {1.0 / r.l:.4f}); the true value's "
                f"largest share {r.max_true_share:.4f}")

    att = None
    if attack:
        att = _run_attack(table, original, known=known, n_targets=n_targets,
                                  prior=prior, seed=seed, schema=schema)
        for r in att.summary.itertuples():
            above = "" if not r.l else f", {r.share_above_1_over_l:.1%} of victims above 1/l = {r.promise_1_over_l:.3g}"
            acc = "" if math.isnan(r.accuracy) else f", accuracy {r.accuracy:.3f} (prior alone {r.prior_accuracy:.3f})"
            add("attack", r.attribute, "info", r.conf_mean, r.promise_1_over_l,
                f"{r.attribute}: Bayes adversary's confidence mean {r.conf_mean:.3f}, median "
                f"{r.conf_q50:.3f}, max {r.conf_max:.3f}{above}{acc}")
            if r.t is not None and not (isinstance(r.t, float) and math.isnan(r.t)) \
                    and prior == "marginal" and att.settings["prior_source"] == "true":
                ok = r.emd_max <= r.t + _TOL
                add("attack_closeness", r.attribute, "pass" if ok else "fail", r.emd_max, r.t,
                    f"{r.attribute}: largest EMD(A, posterior) over the victims {r.emd_max:.4g} "
                    f"{'<=' if ok else '>'} t = {r.t:g}")
    return AuditReport(pd.DataFrame(rows, columns=["check", "attribute", "status", "value",
                                                   "expected", "message"]),
                       div, an, clo, classes, att, original is not None)


def _record_classes(table: SetTable, codes: dict, n_classes: int, seed) -> pd.DataFrame:
    """Exact stats of the classes for S_j keyed by sampled records' true
    values on the other attributes: the classes an adversary who knows the
    victim's other values looks at."""
    rng = np.random.default_rng(seed)
    n = table.n_rows
    picks = rng.choice(n, size=min(n_classes, n), replace=False)
    cl = _Classes(table)
    names = table.names
    per = {nm: [] for nm in names}
    true_share = {nm: [] for nm in names}
    for i in picks:
        key = [int(codes[nm][i]) for nm in names]
        for jj, (nm, C) in enumerate(zip(names, cl.counts(key))):
            tot = C.sum()
            if tot == 0:          # true values not all in their sets (p < 1)
                continue
            per[nm].append(C)
            true_share[nm].append(C[key[jj]] / tot)
    rows = []
    for nm in names:
        C = np.array(per[nm], dtype=np.int64).reshape(-1, table.schema[nm].d)
        size, maxf, H = _stats_from_counts(C)
        rows.append({"attribute": nm, "l": _declared(table, nm, "l"), "classes": int(C.shape[0]),
                     "min_class": int(size.min()) if size.size else 0,
                     "max_freq": float(maxf.max()) if size.size else np.nan,
                     "l_entropy": float(np.exp(H.min())) if size.size else np.nan,
                     "max_true_share": float(max(true_share[nm])) if true_share[nm] else np.nan})
    return pd.DataFrame(rows)
