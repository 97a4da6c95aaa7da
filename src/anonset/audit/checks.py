"""Checks of paper 000's models on a published SetTable: frequency and
entropy diversity (Def. 11-14), anonymity (Def. 17-18) and closeness
(Def. 15-16 with eq. 12), with their helpers: the expansion of the
non-aggregated table, exact class scans and the closeness bounds.

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

import math
from typing import Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..randomized.closeness_search import u_of_p, worst_emd
from ..emd import emd_batch
from ..randomized.params import ground_object
from ..randomized.settable import SetTable

__all__ = ["CheckResult", "check_diversity", "check_anonymity", "check_closeness", "expand",
           "membership", "closeness_bound_any_A"]

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
def check_diversity(table: SetTable, l=None, measure: str = "frequency", *,
                    method: str = "auto", n_classes: int = 200, seed=None,
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


def check_anonymity(table: SetTable, k=None, *, method: str = "auto", n_classes: int = 200,
                    seed=None, max_rows: int = EXPAND_LIMIT) -> CheckResult:
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
    return codes


def check_closeness(table: SetTable, original=None, A=None, t=None, *, ground=None,
                    schema=None) -> CheckResult:
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

