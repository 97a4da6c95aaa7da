"""Checks of paper 000's privacy models on a published table:
(l_1..l_q)-diversity (Def. 11-14), (k_1..k_q)-anonymity (Def. 17-18) and
(t_1..t_q)-closeness (Def. 15-16 with eq. 12, Theorem 4).

Equivalence classes (Def. 10) live in the *non-aggregated* table
(:mod:`anonset.audit.classes`).  For every class for S_j,

* a record adds at most one occurrence of each value of S_j, and
* it adds |R_ij| >= m_j := min_i |R_ij| rows,

so n_j(v) <= (records in the class) <= (class size) / m_j: every relative
frequency is at most 1/m_j (frequency m_j-diversity, Def. 11), the entropy is
at least -log(max frequency) >= log(m_j) (entropy m_j-diversity, Def. 13) and
the class has at least m_j rows (m_j-anonymity, Def. 17).  The checkers
therefore *prove* diversity and anonymity from the set sizes alone, in O(N)
time, without expanding -- which is also what lets a file be checked chunk by
chunk (the smallest set size is a minimum over chunks).  The expansion (exact,
for small tables) and a sample of classes (exact per class, for large
tables) measure the actual values and serve as test oracles.  Closeness is
checked against the worst set of every size eta_j (eq. 12), with the true
A_j where the data holder has it and a bound valid for every A_j otherwise.
See docs/security.md.

Examples
--------
>>> import pandas as pd, anonset
>>> pub = anonset.publish(pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")}),
...                       anonset.Diversity(2), sensitive=["a", "b"],
...                       domains={"a": list("wxyz"), "b": list("uvw")})
>>> check_diversity(pub).ok, check_anonymity(pub).ok
(True, True)
"""
from __future__ import annotations

import math
from typing import Mapping, NamedTuple

import numpy as np
import pandas as pd

from .._typing import PerAttribute, Seed, TableLike, Weights
from ..emd import emd_batch
from ..randomized.closeness_search import u_of_p, worst_emd
from ..randomized.params import ground_object
from ..randomized.settable import SetTable
from ..schema import Schema
from ..validate import InputError, check_n_classes, check_original_columns, release_sample_seed
from .classes import (EXPAND_LIMIT, class_counts, class_stats, expanded_counts, lazy_membership,
                      sample_keys, sampled_counts)
from .masks import row_sizes

__all__ = ["CheckResult", "check_diversity", "check_anonymity", "check_closeness",
           "closeness_bound_any_A", "diversity_result", "anonymity_result",
           "closeness_result", "size_range", "declared_target", "ground_name", "codes_of"]

_TOL = 1e-9


class CheckResult(NamedTuple):
    """A per-attribute report (one row per attribute) and the verdict."""

    report: pd.DataFrame
    ok: bool


def _attr_value(value, name, default):
    """Per-attribute value from a scalar, a mapping or None."""
    if value is None:
        return default
    if isinstance(value, Mapping):
        return value.get(name, default)
    return value


def declared_target(params, name: str, what: str):
    """The l (or k) that the published parameters declare for an attribute:
    1 for exact attributes, k falling back to l (frequency l-diversity implies
    l-anonymity, Sec. VII-D), None where nothing is declared."""
    par = params[name]
    if par.exact:
        return 1
    if what == "k" and par.k is not None:
        return par.k
    return par.l


def size_range(table: SetTable) -> dict:
    """{attribute: (smallest, largest) set size} of a whole table."""
    out = {}
    for n in table.names:
        sz = row_sizes(table.mask(n))
        out[n] = (int(sz.min()), int(sz.max())) if sz.size else (0, 0)
    return out


def _class_scan(table: SetTable, method: str, n_classes: int, seed, max_rows,
                proven=None) -> tuple:
    """(size range per attribute, per-attribute exact class counts or None).
    ``proven(sizes)``: whether the set sizes prove every bound asked for;
    where they do, 'auto' does not sample classes (a sample can refute, not
    prove: the audit of a file skips it alike, and the in-memory audit of a
    million rows took 14 s against 0.9 s for the same report, H48)."""
    if method not in ("auto", "bound", "expand", "sample"):
        raise InputError(f"got {method!r}", param="method",
                         expected="'auto', 'bound', 'expand' or 'sample'")
    check_n_classes(n_classes)
    seed = release_sample_seed(seed, table)
    sizes = size_range(table)
    if method == "bound" or table.n_rows == 0:
        return sizes, None
    if method in ("auto", "expand"):
        total = np.ones(table.n_rows)
        for n in table.names:
            total = total * row_sizes(table.mask(n))
        # the cells too: 400 rows of 150 exact and 12 sensitive columns at
        # eta = 2 expand to 1.6 M rows of 162 codes
        if method == "expand" or (total.sum() <= max_rows and
                                  total.sum() * len(table.names) <= 8 * max_rows):
            return sizes, expanded_counts(table, None if method == "expand" else max_rows)
    if method == "auto" and proven is not None and proven(sizes):
        return sizes, None
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, table.n_rows, size=n_classes)
    Ms = [lazy_membership(table, n) for n in table.names]
    keys = sample_keys([M[rows] for M in Ms], rng)
    return sizes, sampled_counts(table.names, class_counts(Ms, keys))


def proven_by_sizes(table, sizes: dict, want_div: bool, want_an: bool) -> bool:
    """Whether the smallest set of every attribute reaches its declared l
    (``want_div``) and k (``want_an``): the proof from set sizes."""
    for n in table.names:
        for want, what in ((want_div, "l"), (want_an, "k")):
            target = declared_target(table.params, n, what)
            if want and target is not None and sizes[n][0] < target:
                return False
    return True


def audit_classes(table, want_div: bool, want_an: bool, measure: str, n_classes: int,
                  seed) -> tuple:
    """The in-memory audit's (diversity, anonymity) results: one scan of the
    classes for both, and none sampled where the set sizes prove them."""
    sizes, exact = _class_scan(table, "auto", n_classes, seed, EXPAND_LIMIT,
                               proven=lambda s: proven_by_sizes(table, s, want_div, want_an))
    return (diversity_result(table, sizes, exact, None, measure) if want_div else None,
            anonymity_result(table, sizes, exact) if want_an else None)


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
        rows and ``8 * max_rows`` cells (rows x attributes), else 'sample'.

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
    ...                       anonset.Diversity({"a": 3, "b": 2}), sensitive=["a", "b"],
    ...                       domains={"a": list("xyz"), "b": list("uv")})
    >>> r = check_diversity(pub)
    >>> r.ok, r.report["bound_l"].tolist()
    (True, [3, 2])
    """
    if measure not in ("frequency", "entropy"):
        raise InputError(f"got {measure!r}", param="measure", expected="'frequency' or 'entropy'")
    sizes, exact = _class_scan(table, method, n_classes, seed, max_rows)
    return diversity_result(table, sizes, exact, l, measure)


def diversity_result(table, sizes: dict, exact, l=None, measure: str = "frequency"
                     ) -> CheckResult:
    """The diversity report from the size range of every attribute and, where
    measured, exact class counts (``{attribute: (counts, method)}``).
    ``table`` needs only ``names`` and ``params`` (a file's header will do)."""
    rows = []
    for name in table.names:
        par = table.params[name]
        target = _attr_value(l, name, declared_target(table.params, name, "l"))
        m, top = sizes[name]
        row = {"attribute": name, "l": target, "eta": par.eta, "min_size": m,
               "max_size": top, "bound_l": m,
               "proven": bool(target is not None and m >= target), "method": "bound",
               "classes": 0, "max_freq": np.nan, "l_frequency": np.nan, "l_entropy": np.nan}
        verdict = row["proven"]
        if exact is not None:
            C, how = exact[name]
            _, maxf, H = class_stats(C)
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
        elif verdict and par.exact and target <= 1:
            ok, msg = True, f"{name}: published exactly (an exact QID): no diversity is promised"
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

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> pub = anonset.publish(pd.DataFrame({"a": list("xyzx")}), anonset.Anonymity(2),
    ...                       sensitive=["a"], domains={"a": list("xyz")})
    >>> check_anonymity(pub).report["bound_k"].tolist()
    [2]
    """
    sizes, exact = _class_scan(table, method, n_classes, seed, max_rows)
    return anonymity_result(table, sizes, exact, k)


def anonymity_result(table, sizes: dict, exact, k=None) -> CheckResult:
    """The anonymity report, from the same inputs as :func:`diversity_result`."""
    rows = []
    for name in table.names:
        par = table.params[name]
        target = _attr_value(k, name, declared_target(table.params, name, "k"))
        m = sizes[name][0]
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
        elif verdict and par.exact and target <= 1:
            ok, msg = True, f"{name}: published exactly (an exact QID): no anonymity is promised"
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


def model_grounds(model, attr) -> tuple:
    """The ground distances a release's model gives an attribute's t, the
    one the publisher resolves today first (``auto``: its hierarchy, its
    declared order, else equal), then one an earlier version resolved:
    before 2026-11-26 ``auto`` was 'ordered' for an ordinal column with a
    missing token too (H140: such releases are correct for that model)."""
    from ..randomized.params import resolve_ground
    want = resolve_ground(model, attr)
    if model.ground_for(attr.name) == "auto" and want == "equal" and \
            attr.hierarchy is None and attr.kind == "ordinal":
        return want, "ordered"
    return (want,)


def _model_ground(table, name: str):
    """The ground of an attribute's t that the release's model allows:
    the recorded one where the model gives it, else the model's; None
    where the model has no ground or cannot tell."""
    from ..models import model_from_dict
    try:
        model = model_from_dict(table.model) if table.model else None
        if model is None or not hasattr(model, "ground_for"):
            return None
        allowed = model_grounds(model, table.schema[name])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    recorded = table.params[name].ground
    return recorded if recorded in allowed else allowed[0]


def ground_name(table, name: str, ground=None) -> str:
    """The ground distance of an attribute's t: given, else the one the
    model allows it (H136: a metadata edited to 'ordered' where the model
    means 'equal' is checked under 'equal'), else the published one, else
    the attribute's natural one (hierarchy, order, or equal)."""
    g = _attr_value(ground, name, None) or _model_ground(table, name) or \
        table.params[name].ground
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


def codes_of(original, table, schema=None, missing: str = "error", aligned: bool = True) -> dict:
    """Codes of the published attributes in the original data (data holder),
    encoded with the published domains and the publication's missing-value
    policy; the row count must match the published table's, or, for a
    table just published in memory (or rows taken from it), the input's,
    whose rows are then lined up with the published ones (``aligned``)."""
    from ..encode import encode
    from ..io.tables import as_frame
    schema = schema if schema is not None else table.schema
    check_original_columns(table.names, as_frame(original).columns)
    codes = encode(original, schema, columns=table.names, missing=missing)
    rows = source_rows(table, aligned)
    want = getattr(table, "source_n", None) if rows is not None else None
    want = table.n_rows if want is None else want
    for n, c in codes.items():
        if len(c) != want:
            raise InputError(f"has {len(c)} rows, the published table {table.n_rows}"
                             + ("" if want == table.n_rows else
                                f" taken from an input of {want} rows"),
                             param="original", column=n,
                             expected="the original rows of this publication" +
                             ("" if want == table.n_rows else
                              " (the whole input; or its rows in any order with aligned=False)"))
    if rows is not None:        # just published in memory: the shuffle is known, line up
        codes = {n: c[rows] for n, c in codes.items()}
    return codes


def source_rows(table, aligned: bool = True):
    """The input row of each published row, where the table was just
    published in memory (and ``aligned``); else None."""
    rows = getattr(table, "source_rows", None)
    return rows if aligned and rows is not None else None


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
    codes = codes_of(original, table, schema) if original is not None else None
    if codes is not None:
        A = {n: np.bincount(c, minlength=table.schema[n].d) for n, c in codes.items()}
    return closeness_result(table, A, t, ground)


def closeness_result(table, A=None, t=None, ground=None) -> CheckResult:
    """The closeness report given A_j as counts (or None where unknown).
    ``table`` needs ``names``, ``params`` and ``schema`` (a file's header will do)."""
    rows = []
    for name in table.names:
        par = table.params[name]
        tj = _attr_value(t, name, par.t)
        if par.exact or tj is None or math.isinf(float(tj)):
            continue
        tj = float(tj)
        gname = ground_name(table, name, ground)
        g = ground_object(gname, table.schema[name])
        row = {"attribute": name, "t": tj, "p": par.p, "eta": par.eta, "d": par.d,
               "ground": gname, "bound_any_A": closeness_bound_any_A(par.p, par.eta, par.d),
               "worst_emd": np.nan, "exact": False, "method": "none"}
        Aj = np.asarray(A[name]) if A is not None and A.get(name) is not None else None
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


