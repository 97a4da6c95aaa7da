"""The audit of a partition release from what was published (papers 002
and 003): the checks a reader of the file can make, in the row format of
:class:`~anonset.audit.AuditReport`, so that a partition release gets the
same verdict words as a randomized one.

* paper 003 (``msa-anonymize``): every equivalence class ``ec`` has at least
  k rows; each sensitive attribute's distribution in every class is within t
  of the table's under its ground distance (Def. 4, recomputed by
  :func:`anonset.checks.check_partition` with the ground and, for a
  hierarchical ground, the hierarchy the metadata records);
* paper 002 (``lgb``): every local group ``GID`` has at least k rows
  (Corollary 3); every bucket of an l-diversity attribute holds at least l
  values, each once; every bucket of a t-closeness attribute is within t of
  the bucketized values (and, with the original data, of the whole column;
  an ordered ground needs the original's domain, so without it the figure is
  an estimate over the values shown);
* both: the key mode, the row order, the record IDs, columns published
  unchanged, identifiers that should not be there, and no key material in
  the metadata;
* the class adversary: who knows which class (bucket) a victim is in and
  guesses its most frequent value is right on ``success`` of the records,
  against what the model promises (1/l, or max A + t/delta as in
  :func:`anonset.audit.attack.model_bound`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..emd import Ground, emd_batch
from ..hierarchy import Hierarchy
from ..partition.checks import check_partition
from ..validate import InputError
from .attack import model_bound
from .declared import secrets_in
from .report import AuditReport, Rows
from .risks import (_ALLOWED_ID, allowed_identifiers, dropped_row_risks, foreign_cell_risks,
                    key_risks, order_risks, passthrough_risks, recorded_recode_risks,
                    shared_id_risks)
from .stats import CellSample, ValueSample, hash_cells

__all__ = ["PartitionAudit", "audit_partition"]

_TOL = 1e-9


@dataclass
class PartitionAudit:
    """Outcome of :func:`audit_partition`.

    Attributes
    ----------
    report : AuditReport
        The checks and the verdict.
    sizes : dict
        ``{'groups' | 'classes' | 'buckets of A': (array of sizes, the
        smallest size the model requires or None)}``.
    attack : DataFrame
        Per attribute: attribute, cells, success, worst (largest share of
        one value in a class), prior, bound, where.
    utility : dict
        Information loss: recomputed and recorded figures.
    attributes : DataFrame
        Per published attribute: role, model parameter, cells.
    """

    report: AuditReport
    sizes: dict
    attack: pd.DataFrame
    utility: dict = field(default_factory=dict)
    attributes: pd.DataFrame | None = None


# -------------------------------------------------------------- shared
def refuse_set_options(given: dict, kind: str, how: str) -> None:
    """An option of a random-set table's audit or page, named for an LGB or
    msa release (``kind``), is refused rather than ignored: ``given`` maps
    each option to whether it was named; ``how`` says what is done instead."""
    for name, named in given.items():
        if named:
            raise InputError(f"applies to a table of random sets, not to an {kind} release "
                             f"({how})", param=name, expected="it left out")

def _scanned(meta: dict) -> dict:
    """The metadata as :func:`~anonset.audit.declared.secrets_in` reads it:
    the key mode where set tables keep it (``info.key``), and mappings keyed
    by column name (the model's l, t, grounds, roles) as their values only,
    so that a column called 'seed' is not taken for key material."""
    m = {k: v for k, v in meta.items() if k != "key"}
    m["info"] = {"key": meta.get("key")}
    m["model"] = {k: list(v.values()) if isinstance(v, dict) else v
                  for k, v in (meta.get("model") or {}).items()}
    return m


def _as_is_and_targets(meta: dict) -> tuple:
    """A partition release's columns published as they are (pass-through
    columns, an ID column), the attributes a recode would give away, and
    the QIs it generalizes."""
    ids = meta.get("ids")
    idcol = [ids[len("column "):].strip("'\"")] if isinstance(ids, str) and \
        ids.startswith("column ") else []
    as_is = list(meta.get("pass_through") or ()) + idcol
    model = meta.get("model") or {}
    if "attributes" in model:                                   # lgb
        roles = model["attributes"]
        qi = [a for a, r in roles.items() if r == "qi"]
        targets = [a for a, r in roles.items() if r != "qi"]
    else:                                                       # msa
        qi = list(model.get("quasi_identifiers") or ())
        targets = list(model.get("sensitive") or ())
    return as_is, targets, qi


def _recode_risks(meta: dict, original, rows: Rows) -> set:
    """With the original: what publishing measured, measured again."""
    from ..passthrough import passthrough_findings
    from .risks import allowed_recodes, measured_recode_risks
    as_is, targets, qi = _as_is_and_targets(meta)
    as_is = [c for c in as_is if c in original.columns]
    targets = [c for c in targets if c in original.columns]
    qi = [c for c in qi if c in original.columns]
    if not as_is or not (targets or qi):
        return set()
    # msa publishes its SAs exactly on each row: read beside a pass-through
    # column toward a QI, as publishing reads them
    beside = targets if "attributes" not in (meta.get("model") or {}) else []
    found = passthrough_findings(original, as_is, targets, generalized=qi, beside=beside)
    return measured_recode_risks(found, as_is, allowed_recodes(meta), rows.add)


def _release_risks(meta: dict, frame: pd.DataFrame, rows: Rows, original=None) -> None:
    leaks = secrets_in(_scanned(meta))
    rows.add("metadata", "-", "fail" if leaks else "pass", leaks or None, "no key or seed",
             f"metadata: possible key material at {leaks}" if leaks else
             "metadata: no generator key or seed stored")
    order = {"random": "shuffled"}.get(meta.get("row_order"), meta.get("row_order"))
    info = {"key": meta.get("key"), "row_order": order}
    key_risks(info, rows.add, partition=True)
    order_risks(info, rows.add)
    dropped_row_risks({"missing": meta.get("missing")}, rows.add)
    shared_id_risks({"shared_ids": meta.get("shared_ids"),
                     "shared_ids_allowed": meta.get("shared_ids_allowed")}, rows.add,
                    model={"name": "partition"})
    if original is not None and meta.get("row_order") != "input":
        _lined_up_rows(frame, original, rows)
    ids = meta.get("ids")
    numbered = "ID" in frame.columns and _row_number_ids(frame, ids, rows)
    if ids == "input row numbers":
        rows.add("record_ids", "-", "risk", ids, "random",
                 "record IDs: input row numbers; a file sorted by an attribute gives it away")
    elif isinstance(ids, str) and ids.startswith("column"):
        # lgb refuses an ID column unless allow_identifier names it: a real
        # identifier's values name the rows wherever they are known and link
        # every release that publishes them (H104: it was a WARN and PASSED)
        named = ids[len("column "):].strip("'\"") in allowed_identifiers(meta)
        rows.add("record_ids", "-", "risk", ids, "random",
                 f"record IDs: {ids} published verbatim: its values name the rows wherever "
                 "they are known and link this release's rows to any other that publishes "
                 "them" + (_ALLOWED_ID if named else ""))
    elif ids == "random" and not numbered:
        rows.add("record_ids", "-", "pass", ids, "random", "record IDs: drawn at random")
    if original is not None and "ID" in frame.columns:
        _id_column_risks(frame, original, ids, rows)
    shown = [c for c in meta.get("identifiers") or () if c in frame.columns]
    for c in shown:
        rows.add("roles", c, "risk", "published", "not published",
                 f"{c}: declared an identifier but published")
    other = list(meta.get("pass_through") or ())
    if other:
        rows.add("roles", "-", "info", ", ".join(other), None,
                 f"published unchanged (pass-through): {', '.join(other)}")
        # a pass-through column whose values single rows out is a likely
        # identifier, as in a set table's audit
        ids = {}
        for c in other:
            if c in frame.columns:
                ids[c] = ValueSample(None)
                ids[c].add(hash_cells(frame[c]))
        passthrough_risks(SimpleNamespace(ids=ids, pairs={}), rows.add,
                          ids_allowed=allowed_identifiers(meta))
    if original is not None:
        # each column published as it is holds the original's cells (H121)
        from ..io.keys import cell_text_hashes
        cells = {}
        for c in other:
            if c in frame.columns and c in original.columns:
                cells[c] = (CellSample(None), CellSample(None))
                cells[c][0].add(cell_text_hashes(frame[c]))
                cells[c][1].add(cell_text_hashes(original[c]))
        foreign_cell_risks(cells, rows.add)
    measured = _recode_risks(meta, original, rows) if original is not None else set()
    recorded_recode_risks(meta, measured, rows.add)


def _told_columns(frame: pd.DataFrame, original) -> list:
    """A partition release's attribute columns as :func:`cell_agreement`
    reads them: an LGB cell left to a bucket (its ``_bid`` set) is shown in
    an order drawn at random, and read as telling nothing."""
    own = {"ID", "GID", "ec"}
    out = []
    for c in frame.columns:
        if c in own or str(c).endswith("_bid") or c not in original.columns:
            continue
        bid = f"{c}_bid"
        out.append((c, frame[bid].isna().to_numpy() if bid in frame.columns else None))
    return out


def _lined_up_rows(frame: pd.DataFrame, original, rows: Rows) -> None:
    """With the original: whether the published rows line up with its rows
    by position, whatever the metadata says (H104: a release in input order
    whose metadata was edited to 'random' PASSED)."""
    from .report import position_row
    if len(original) != len(frame) or len(frame) < 2:
        return
    match = _position_match(frame, original)
    if match is not None:
        position_row(rows, match, "every cell published as it is equals the original row's, "
                     "every range holds it, at the same position")


def _position_match(frame: pd.DataFrame, original):
    """The row-order test of a partition release beside the original rows
    it is paired with (:class:`anonset.audit.order.PositionMatch`): msa
    publishes its rows grouped by class (``ec``), in an order of the classes
    and of the rows of each drawn from the key, and the count is compared
    with orders drawn so (H110: uniform pairings gave 3 false risks in 40);
    lgb shuffles its rows uniformly.  None where no cell tells anything."""
    from .order import PositionMatch, generalized_columns
    cols = generalized_columns(frame, original, _told_columns(frame, original))
    if not cols:
        return None
    match = PositionMatch(len(frame), blocks=frame["ec"].to_numpy()
                          if "ec" in frame.columns else None)
    match.add(0, cols)
    return match


def _row_number_ids(frame: pd.DataFrame, ids, rows: Rows) -> bool:
    """An ID column that is 1..n (or 0..n-1) in published order: the rows'
    own numbers, which random IDs are with probability 1/n! (H110: an lgb
    release in input order whose metadata said 'random' PASSED); seen
    without the original.  Returns whether it is."""
    n = len(frame)
    if n < _ROW_NUMBER_ROWS or ids == "input row numbers" or \
            (isinstance(ids, str) and ids.startswith("column")):
        return False
    got = pd.to_numeric(frame["ID"], errors="coerce").to_numpy(dtype="float64",
                                                              na_value=np.nan)
    for first in (1, 0):
        if np.array_equal(got, np.arange(first, first + n, dtype="float64")):
            rows.add("record_ids", "-", "risk", f"{first}..{first + n - 1} in row order",
                     "random", f"record IDs: the ID column is {first}..{first + n - 1} in "
                     f"published order, the rows' own numbers (the metadata says "
                     f"{ids if isinstance(ids, str) else 'not recorded'}): random IDs are so "
                     f"with probability 1/{n}!, rows in input order always")
            return True
    return False


#: rows from which IDs 1..n in row order are a risk (random: 1/12! < 3e-9)
_ROW_NUMBER_ROWS = 12


def _id_column_risks(frame: pd.DataFrame, original, ids, rows: Rows) -> None:
    """With the original: an ID column that is a column of the original,
    row for row (each published row agrees with the original row holding its
    ID far beyond chance), is published verbatim whatever the metadata's
    ``ids`` says (H104)."""
    from .report import position_row
    if len(frame) < 2:
        return
    pub = _as_text(frame["ID"])
    for c in original.columns:
        if c in frame.columns or ids == f"column {c!r}":     # that one is a RISK already
            continue
        org = _as_text(original[c])
        if org.duplicated().any():
            continue
        where = pd.Index(org).get_indexer(pub)
        if (where < 0).any():
            continue
        match = _position_match(frame, original.iloc[where].reset_index(drop=True))
        if match is None:
            return
        said = ids if isinstance(ids, str) else "not recorded"
        # a column whose values the IDs merely share (row numbers 1..n
        # beside random IDs 1..n) pairs the rows at random: no row, and the
        # search goes on
        if match.verdict()[0]:
            position_row(rows, match, "every cell published as it is equals that row's",
                         check="record_ids", attribute=str(c),
                         lined=f"record IDs: the ID column is the original's column {c!r} "
                               f"published verbatim (the metadata says {said}): each "
                               "published row lines up with the original row that holds its "
                               "ID")
            return


def _adversary(attribute: str, C: np.ndarray, bound: tuple, unit: str = "class") -> dict:
    """The class adversary on one attribute from its (classes, values)
    counts; ``unit``: what a row's group is called ('class', 'bucket')."""
    tot = C.sum(axis=1)
    keep = tot > 0
    C, tot = C[keep], tot[keep]
    A = C.sum(axis=0)
    n = float(A.sum())
    return {"attribute": attribute, "cells": int(n),
            "success": float(C.max(axis=1).sum() / n) if n else math.nan,
            "worst": float((C.max(axis=1) / tot).max()) if n else math.nan,
            "prior": float(A.max() / n) if n else math.nan,
            "bound": bound[0], "where": bound[1], "unit": unit}


def _attack_row(rows: Rows, r: dict) -> None:
    b = r["bound"]
    if math.isnan(b):
        rows.add("attack", r["attribute"], "info", round(r["success"], 4), None,
                 f"{r['attribute']}: knowing the {r['unit']}, the most frequent value is right "
                 f"for {r['success']:.1%} of the records (no bound declared)")
        return
    ok = r["worst"] <= b + _TOL
    rows.add("attack", r["attribute"], "pass" if ok else "risk", round(r["worst"], 4),
             round(b, 4),
             f"{r['attribute']}: knowing the {r['unit']}, the most frequent value is right for "
             f"{r['success']:.1%} of the records (prior alone {r['prior']:.1%}); in the worst "
             f"{r['unit']} {r['worst']:.1%} {'<=' if ok else '>'} the model's bound {b:.1%} "
             f"({r['where']})")


def _counts(classes: np.ndarray, values: pd.Series, domain=None) -> tuple:
    """(classes x values counts, domain) of one attribute."""
    if domain is None:
        domain = np.unique(values.to_numpy())
    codes = pd.Categorical(values, categories=domain).codes.astype(np.int64)
    _, cls = np.unique(classes, return_inverse=True)
    cls = np.asarray(cls).ravel()
    C = np.zeros((int(cls.max()) + 1 if cls.size else 0, len(domain)), dtype=np.int64)
    ok = codes >= 0
    np.add.at(C, (cls[ok], codes[ok]), 1)
    return C, list(domain)


# ---------------------------------------------------------------- MSA
def _uniform_qis(rows: Rows, check: str, unit: str, groups: np.ndarray, cells: dict) -> None:
    """A row per release: every class (group) shows one generalized value of
    each QI on all its rows (``cells``: per QI, the published cells, None
    where a row holds no QI cell of it, which all the group's rows must
    share too).  A class whose rows show different QI values singles them
    out, however many rows it counts: the k check alone would pass it."""
    if not cells:
        return
    codes = np.asarray(groups)
    worst, name = 0, None
    for q, col in cells.items():
        # every published form of a cell as one key (a missing cell is one)
        key = pd.Series(col).astype("string").fillna("\x00")
        split = pd.Series(pd.factorize(key)[0]).groupby(codes).nunique()
        bad = int((split > 1).sum())
        if bad > worst:
            worst, name = bad, q
    if worst:
        plural = unit + ("es" if unit.endswith("s") else "s")
        rows.add(check, name, "fail", worst, 0,
                 f"{worst:,} {plural} show more than one value of {name!r} on their rows "
                 f"(a {unit} is k-anonymous only where its rows' QI cells are alike)")
    else:
        rows.add(check, "-", "pass", 0, 0,
                 f"every {unit} shows one generalized value of each QI on all its rows")


def _lone_row(rows: Rows, sizes: np.ndarray, named: list, units: str,
              tells: str = "") -> None:
    """The risk of classes or groups of one row (k = 1), whose QI cells they
    show exactly; ``named``: the attributes ``allow_clear`` named."""
    lone = int((np.asarray(sizes) == 1).sum())
    if lone:
        rows.add("clear", ", ".join(named) or "-", "risk", lone, 0,
                 f"{lone:,} {units} hold one row alone, whose QI cells they show exactly: "
                 f"whoever knows them finds the row{tells}"
                 + (" (published as the user allowed: allow_clear)" if named else ""))


def _audit_msa(meta, frame, original, rows: Rows) -> tuple:
    model = meta.get("model") or {}
    k, t = int(model.get("k", 1)), float(model.get("t", math.inf))
    classes = frame["ec"].to_numpy()
    sizes = np.unique(classes, return_counts=True)[1]
    rows.add("classes_k", "-", "pass" if sizes.min() >= k else "fail", int(sizes.min()), k,
             f"smallest of {sizes.size:,} classes has {int(sizes.min())} rows "
             f"{'>=' if sizes.min() >= k else '<'} k = {k}")
    _lone_row(rows, sizes, list(meta.get("clear") or ()), "classes",
              ", and its sensitive values")
    _uniform_qis(rows, "classes_qi", "class", classes,
                 {q: frame[q] for q in model.get("quasi_identifiers") or () if q in frame})
    sens = list(model.get("sensitive") or ())
    if not sens:
        rows.add("classes_t", "-", "unverified", None, t,
                 "the metadata does not name the sensitive attributes (written by an older "
                 "anonset): t-closeness not checked")
    grounds = model.get("ground") or {}
    hier = {s: Hierarchy.from_csv(txt) for s, txt in (model.get("hierarchies") or {}).items()}
    declared = {s: [str(v) for v in vals] for s, vals in (model.get("domains") or {}).items()}
    attack, attrs = [], []
    for s in sens:
        g = grounds.get(s, "equal")
        if g not in ("equal", "ordered", "hierarchical") or (g == "hierarchical"
                                                            and s not in hier):
            rows.add("classes_t", s, "unverified", None, t,
                     f"{s}: ground {g!r} is not recorded in a form that can be rebuilt")
            continue
        if s in declared:           # a text SA in its declared order
            frame = frame.assign(**{s: frame[s].astype(str)})
        rep = check_partition(frame, ["ec"], s, ground={s: g}, hierarchies=hier,
                              domains={s: declared[s]} if s in declared else None)
        worst = rep.t_per_attribute[s]
        ok = worst <= t + _TOL
        rows.add("classes_t", s, "pass" if ok else "fail", worst, t,
                 f"{s}: largest EMD of a class from the table ({g} ground) {worst:.4g} "
                 f"{'<=' if ok else '>'} t = {t:g}")
        rows.add("l_distinct", s, "info", rep.l_distinct, None,
                 f"{s}: every class holds at least {rep.l_distinct} distinct values "
                 f"(entropy l = {rep.l_entropy:.3g})")
        homogeneous_row(rows, s, classes, frame[s], meta, "class")
        dom = hier[s].leaves if g == "hierarchical" else declared.get(s)
        values = frame[s].astype(str) if dom is not None else frame[s]
        C, domain = _counts(classes, values, dom)
        ground = Ground.tree(hier[s]) if g == "hierarchical" else Ground.from_spec(g, len(domain))
        A = C.sum(axis=0) / max(C.sum(), 1)
        attack.append(_adversary(s, C, model_bound(SimpleNamespace(l=None, k=None, t=t),
                                                   A, ground)))
        attrs.append({"attribute": s, "role": "sensitive_clear", "parameter": f"t = {t:g}",
                      "ground": g, "cells": len(frame)})
    for q in model.get("quasi_identifiers") or ():
        attrs.insert(0, {"attribute": q, "role": "quasi_identifier", "parameter": f"k = {k}",
                         "ground": "", "cells": len(frame)})
    il = (meta.get("utility") or {}).get("il")
    utility = {"information loss IL_T (eq. 1, recorded at publishing)": il,
               "classes": int(sizes.size), "mean class size": float(sizes.mean())}
    return {"classes": (sizes, k)}, attack, utility, attrs


# ---------------------------------------------------------------- LGB
def _lgb_domain(a, vals, g, original) -> tuple:
    """(domain, ground, exact) of a t-closeness attribute: the original
    column's values where given, else the values the buckets show (exact for
    the equal ground only: the ordered one depends on the whole domain)."""
    if original is not None:
        dom = [str(v) for v in np.unique(original[a].to_numpy())]
    else:
        dom = sorted(pd.unique(vals), key=_numeric_key)
    return dom, Ground.from_spec(g, max(len(dom), 1)), g == "equal" or original is not None


def _bucket_closeness(a, vals, bid, t, g, original, rows: Rows) -> tuple:
    """A t-bucket against the bucketized values (and the whole column);
    returns (counts, ground) for the adversary."""
    dom, ground, exact = _lgb_domain(a, vals, g, original)
    C, _ = _counts(bid, vals, dom)
    refs = [("the bucketized values", C.sum(axis=0))]
    if original is not None:
        whole = pd.Categorical(original[a].astype(str), categories=dom).codes
        refs.append(("the whole column", np.bincount(whole[whole >= 0], minlength=len(dom))))
    for what, ref in refs:
        worst = float(emd_batch(C.astype(np.float64), ref.astype(np.float64), ground).max()) \
            if len(dom) > 1 else 0.0
        ok = worst <= t + _TOL
        st = ("pass" if ok else "fail") if exact else ("pass" if ok else "unverified")
        note = "" if exact else (" (estimated over the values the buckets show: the ordered "
                                 "ground needs the column's domain, give the original data)")
        rows.add("bucket_closeness", a, st, worst, t,
                 f"{a}: largest EMD of a bucket from {what} ({g} ground) {worst:.4g} "
                 f"{'<=' if ok else '>'} t = {t:g}{note}")
    return C, ground


def homogeneous_row(rows: Rows, a: str, groups, values, meta, word: str) -> None:
    """Groups (classes, buckets) whose rows all hold one value of ``a``
    while the table holds two or more: each such row's value is told
    (:mod:`anonset.partition.homogeneous`).  A risk: named as the user's
    where the metadata lists ``a`` in ``homogeneous_allowed``."""
    from ..partition.homogeneous import single_value_groups
    n_groups, n_rows = single_value_groups(groups, values.astype(str).to_numpy())
    if n_groups == 0:
        rows.add("homogeneous", a, "pass", 0, 0,
                 f"{a}: no {word} holds one value alone")
        return
    allowed = " (published as the user allowed: allow_homogeneous)" \
        if a in (meta.get("homogeneous_allowed") or ()) else ""
    many = n_groups > 1
    groups_words = f"{n_groups:,} {word}{('es' if word == 'class' else 's') if many else ''}"
    rows.add("homogeneous", a, "risk", n_rows, 0,
             f"{a}: {groups_words} ({n_rows:,} rows) {'hold' if many else 'holds'} one value "
             f"alone, so whoever finds a person's {word} knows their value (within t when the "
             f"value is common){allowed}")


def _suppressed_row(a, role, frame, inb, meta, original, rows: Rows) -> None:
    """The cells of ``a`` published as '*' (lgb's suppress=True): a risk the
    user accepted, named.  The count is the metadata's; a release without it
    (written before it was recorded) is counted for an always-sensitive
    attribute, whose cells are all bucketized but the '*'.  With the original
    data (an always-sensitive attribute), the share of the '*' cells that
    hold the most frequent of their values: what a '*' tells."""
    rec = meta.get("suppressed")
    if rec is not None:
        n = int(rec.get(a, 0))
    elif role == "sensitive":
        n = int(((frame[a].astype(str) == "*") & ~inb).sum())
    else:
        return
    if n == 0:
        # a '*' may still be a QI cell generalized to its hierarchy's root
        # (a semi-sensitive attribute's unflagged cells): not a suppression
        # (H34: "no cell published as '*'" beside 215 of them)
        stars = int((frame[a].astype(str) == "*").sum()) if a in frame.columns else 0
        rows.add("suppressed", a, "pass", 0, 0,
                 f"{a}: no cell suppressed" + (
                     f" (its {stars:,} '*' cells are cells generalized to the root of its "
                     "hierarchy, as a QI's are)" if stars else " (no cell published as '*')"))
        return
    share = ""
    if original is not None and role == "sensitive" and a in original.columns:
        orig = original[a].astype(str).value_counts()
        shown = frame.loc[inb, a].astype(str).value_counts()
        gone = orig.sub(shown, fill_value=0).clip(lower=0)
        if gone.sum() > 0:
            share = (f"; {gone.max() / gone.sum():.1%} of them hold {gone.idxmax()!r}, "
                     "which a '*' therefore tells")
    rows.add("suppressed", a, "risk", n, 0,
             f"{a}: {n:,} cells published as '*' to make the rest l-eligible (the user's "
             f"suppress option): a '*' tells that the value is one held too often, and "
             f"where one value dominates the column, that value{share}")


def _numeric_key(v):
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def _audit_lgb(meta, frame, original, rows: Rows) -> tuple:
    model = meta.get("model") or {}
    k = int(model.get("k", 1))
    lmap, tmap = model.get("l") or {}, model.get("closeness") or {}
    grounds = model.get("grounds") or {}
    roles = model.get("attributes") or {c[:-4]: "bucketized" for c in frame.columns
                                        if c.endswith("_bid")}
    gsizes = frame["GID"].value_counts().to_numpy()
    rows.add("groups", "-", "pass" if gsizes.min() >= k else "fail", int(gsizes.min()), k,
             f"smallest of {gsizes.size:,} local groups has {int(gsizes.min())} rows "
             f"{'>=' if gsizes.min() >= k else '<'} k = {k}")
    sizes = {"groups": (gsizes, k)}
    _lone_row(rows, gsizes, [a for a in (meta.get("clear") or ())
                             if roles.get(a) in ("qi", "semi_sensitive")], "groups")
    # a QI cell of a semi-sensitive attribute is one outside its buckets; a
    # '*' there is a sensitive cell suppressed (suppress=True) or a QI cell
    # generalized to the root, which tells nothing either way
    _uniform_qis(rows, "groups_qi", "group", frame["GID"].to_numpy(), {
        a: (frame[a] if role == "qi" or f"{a}_bid" not in frame.columns
            else frame[a].where(frame[f"{a}_bid"].isna()
                                & (frame[a].astype("string") != "*"), None))
        for a, role in roles.items() if role in ("qi", "semi_sensitive") and a in frame})
    attack, attrs = [], []
    for a, role in roles.items():
        col = f"{a}_bid"
        inb = frame[col].notna().to_numpy() if col in frame.columns else np.zeros(len(frame), bool)
        attrs.append({"attribute": a, "role": "sensitive_bucketized" if role == "sensitive"
                      else role,
                      "parameter": (f"t = {tmap[a]:g}" if a in tmap else
                                    f"l = {lmap[a]}" if a in lmap else f"k = {k}"),
                      "ground": grounds.get(a, ""),
                      # a QI's every cell is generalized within its group
                      "cells": len(frame) if role == "qi" else int(inb.sum())})
        if role != "qi":
            _suppressed_row(a, role, frame, inb, meta, original, rows)
        if not inb.any():
            continue
        vals = frame.loc[inb, a].astype(str).reset_index(drop=True)
        bid = frame.loc[inb, col].to_numpy(dtype=np.int64)
        bsizes = np.unique(bid, return_counts=True)[1]
        if a in tmap:
            t, g = float(tmap[a]), grounds.get(a, "equal")
            C, ground = _bucket_closeness(a, vals, bid, t, g, original, rows)
            homogeneous_row(rows, a, bid, vals, meta, "bucket")
            A = C.sum(axis=0) / max(C.sum(), 1)
            bound = model_bound(SimpleNamespace(l=None, k=None, t=t), A, ground)
            sizes[f"buckets of {a}"] = (bsizes, None)
        else:
            C, _ = _counts(bid, vals)
            la = int(lmap.get(a, 1))
            distinct = (C > 0).sum(axis=1)
            twice = int((C > 1).sum())
            ok = distinct.min() >= la and twice == 0
            rows.add("buckets", a, "pass" if ok else "fail", int(distinct.min()), la,
                     f"{a}: smallest of {bsizes.size:,} buckets holds {int(distinct.min())} "
                     f"distinct values {'>=' if distinct.min() >= la else '<'} l = {la}"
                     + (f"; {twice} value(s) occur twice in a bucket" if twice else ""))
            bound = (1.0 / la, f"1/l = 1/{la}")
            sizes[f"buckets of {a}"] = (bsizes, la)
            if la == 1 and C.shape[1] > 1 and (distinct == 1).any():
                named = " (published as the user allowed: allow_clear)" \
                    if a in (meta.get("clear") or ()) else ""
                rows.add("clear", a, "risk", int((distinct == 1).sum()), 0,
                         f"{a}: held to l = 1, so {int((distinct == 1).sum()):,} buckets hold "
                         f"one value alone and tell their rows' value{named}")
        attack.append(_adversary(a, C, bound, "bucket"))
        if original is not None and meta.get("row_order") == "input" and a in original \
                and len(original) == len(frame):
            _shown_row(rows, a, vals, bid, original.loc[inb, a])
    rec = meta.get("utility") or {}
    cdm = int((gsizes.astype(np.int64) ** 2).sum())
    if "C_DM" in rec and int(rec["C_DM"]) != cdm:
        rows.add("utility", "-", "warn", int(rec["C_DM"]), cdm,
                 f"the recorded C_DM {rec['C_DM']} differs from the published groups' {cdm}")
    utility = {"discernibility C_DM (sum of squared group sizes)": cdm,
               "NCP (Sec. 3.2.2, recorded at publishing)": rec.get("NCP"),
               "groups": int(gsizes.size), "mean group size": float(gsizes.mean())}
    return sizes, attack, utility, attrs


def _read_companion(path, fmt: str) -> pd.DataFrame:
    """A bucket table (IDT, SAT) as written: Parquet typed, CSV as text."""
    if fmt == "parquet":
        return pd.read_parquet(path)
    from ..io.published import _unescape_header, csv_unescape
    raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    raw.columns = [_unescape_header(c) for c in raw.columns]
    return raw.apply(lambda col: pd.Series(csv_unescape(col.to_numpy(dtype=object)),
                                           index=col.index))


def _as_text(values) -> pd.Series:
    """Cells compared as text, numbers in one spelling (a CSV companion
    holds text, a table may show a number as '6.0' beside a SAT's 6.0 or
    6: all alike)."""
    txt = pd.Series(values).reset_index(drop=True).astype("string").fillna("")
    num = pd.to_numeric(txt, errors="coerce")
    spelled = pd.Series(num.to_numpy(dtype="float64", na_value=np.nan).astype(str),
                        dtype="string")
    return txt.where(num.isna(), spelled)


def _companion_rows(release, frame: pd.DataFrame, rows: Rows) -> None:
    """The bucket tables written beside an LGB table (``<stem>.<a>.idt``,
    ``.sat``) agree with it: the IDT pairs each record ID with the bucket
    its row shows, the SAT lists each bucket's values as its rows show them
    (H59: a SAT whose bucket held one value alone, an IDT with half its
    rows gone, a shown value in no bucket, all passed: the audit never
    opened them).  Missing tables: unverified."""
    from ..partition.lgb.core import bucket_table_paths
    # the bucketized attributes as the metadata names them (H62: a column
    # 'visit_bid' passed through was taken for the buckets of 'visit')
    roles = (release.meta.get("model") or {}).get("attributes") or {}
    attrs = [a for a, r in roles.items() if r != "qi" and f"{a}_bid" in frame.columns]
    if not attrs or release.path is None:
        return
    paths = bucket_table_paths(release.path, release.fmt or "parquet", attrs)
    for a in attrs:
        inb = frame[f"{a}_bid"].notna().to_numpy()
        ids = _as_text(frame.loc[inb, "ID"])
        bids = _as_text(frame.loc[inb, f"{a}_bid"])
        shown = _as_text(frame.loc[inb, a])
        idt_p, sat_p = paths[(a, "idt")], paths[(a, "sat")]
        gone = [p.name for p in (idt_p, sat_p) if not p.is_file()]
        if gone:
            rows.add("bucket_tables", a, "unverified", len(gone), 0,
                     f"{a}: {' and '.join(gone)} not beside the table: their agreement with "
                     "it is not checked")
            continue
        bad = []
        try:
            idt, sat = _read_companion(idt_p, release.fmt), _read_companion(sat_p, release.fmt)
            pairs = sorted(zip(_as_text(idt["ID"]), _as_text(idt["BID"])))
            if pairs != sorted(zip(ids, bids)):
                bad.append(f"{idt_p.name} pairs {len(pairs):,} record IDs with buckets, the "
                           f"table {int(inb.sum()):,}, not the same")
            held = sorted(zip(_as_text(sat["BID"]), _as_text(sat[a])))
            if held != sorted(zip(bids, shown)):
                bad.append(f"{sat_p.name} lists other values per bucket than the table "
                           "shows")
        except (KeyError, ValueError, OSError) as e:
            bad.append(f"{idt_p.name} or {sat_p.name} cannot be read as a bucket table "
                       f"({type(e).__name__}: {e})")
        rows.add("bucket_tables", a, "fail" if bad else "pass", len(bad), 0,
                 f"{a}: " + ("; ".join(bad) if bad else
                             "the bucket tables agree with the table (record IDs, buckets "
                             "and values)"))


def _shown_row(rows: Rows, a: str, shown: pd.Series, bid: np.ndarray, truth) -> None:
    """An LGB bucket shows its values in an order drawn at random: a row's
    shown value is its own about as often as a uniform order gives.  Where
    the rows line up with the original (keep_order), many more matches tell
    that the values were shown in their rows' order, each row's own value in
    the clear (H59: the shuffle undone passed).  Scored as the other checks
    are (z_max 4), with the exact mean and variance of the matches of a
    uniform arrangement of each bucket's values (H60: as independent coins
    the variance was 1 - 1/s where it is 1, and 2 % of correct releases
    failed): with counts c of a bucket of s rows, S2 = sum c^2, S4 = sum c^4,
    mean S2/s and E[X^2] = S2/s + (sum c^2 (c-1)^2 + S2^2 - S4) / (s (s-1))."""
    shown, truth = _as_text(shown), _as_text(truth)
    hit = int((shown.to_numpy() == truth.to_numpy()).sum())
    _, b = np.unique(bid, return_inverse=True)
    pairs = pd.DataFrame({"b": b, "v": shown.to_numpy()}).value_counts()
    pb = pairs.index.get_level_values("b").to_numpy()
    c = pairs.to_numpy().astype(np.float64)
    nb = int(b.max()) + 1 if b.size else 0
    size = np.bincount(b, minlength=nb).astype(np.float64)
    s2 = np.bincount(pb, weights=c ** 2, minlength=nb)
    s4 = np.bincount(pb, weights=c ** 4, minlength=nb)
    same = np.bincount(pb, weights=c ** 2 * (c - 1) ** 2, minlength=nb)
    mean_b = s2 / np.maximum(size, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        second = mean_b + np.where(size > 1, (same + s2 ** 2 - s4) / (size * (size - 1)), 0.0)
    var_b = np.where(size > 1, second - mean_b ** 2, 0.0)
    mean, var = float(mean_b.sum()), float(np.maximum(var_b, 0.0).sum())
    z = (hit - mean) / math.sqrt(var) if var > 0 else (0.0 if hit <= mean + 0.5 else math.inf)
    ok = z <= 4.0
    rows.add("shown_order", a, "pass" if ok else "fail", hit, round(mean, 1),
             f"{a}: {hit:,} of {len(shown):,} rows show their own value, "
             f"{'about ' if ok else 'more than '}the {mean:,.1f} a random order within each "
             f"bucket gives (z = {z:+.2f})" + ("" if ok else
                                               ": the values follow their rows, each row's "
                                               "own value shown in the clear"))


def _kept_rows(meta: dict, original):
    """The original's rows as the release holds them: where the publisher
    left the rows with a missing attribute out (missing='drop'), those with a
    missing cell in a column the metadata names (the columns that had any);
    where it published them as a value (missing='category'), with that
    value in those cells."""
    record = meta.get("missing")
    if original is None or not isinstance(record, dict) \
            or record.get("policy") not in ("drop", "category"):
        return original
    cols = [c for c in (record.get("columns") or {}) if c in original.columns]
    if record["policy"] == "category":
        from ..validate import as_published
        return as_published(original, record)
    from ..validate import missing_rows
    gone = missing_rows(original, cols)[0]
    return original.loc[~gone].reset_index(drop=True) if gone.any() else original


def audit_partition(release, original=None) -> PartitionAudit:
    """Audit a partition release (``release.kind`` 'lgb' or 'msa',
    ``release.frame`` the published table, ``release.meta`` its metadata).

    ``original`` (a DataFrame of the original rows, optional) adds the row
    count and, for LGB t-closeness, the exact check against the whole
    column.
    """
    meta, frame = release.meta, release.frame
    from ..partition.output import CSV_META_SUFFIX, check_partition_metadata
    where = release.path
    if where is not None and release.fmt == "csv":        # the metadata beside the CSV
        where = type(where)(str(where) + CSV_META_SUFFIX)
    check_partition_metadata(meta, release.kind, where)
    # the columns the checks read (H59: a missing 'ec' was "error: ec")
    model = meta.get("model") or {}
    need = (["ec", *(model.get("quasi_identifiers") or ()), *(model.get("sensitive") or ())]
            if release.kind == "msa" else ["ID", "GID", *(model.get("attributes") or {})])
    lacking = [c for c in need if c not in frame.columns]
    if lacking:
        what = {"ec": "the class of each row", "ID": "the record IDs",
                "GID": "the group of each row"}.get(lacking[0], "a column its metadata names")
        kind = "msa-anonymize" if release.kind == "msa" else "lgb"
        raise InputError(f"is missing ({what})", file=release.path, column=lacking[0],
                         expected=f"the columns of an {kind} release, as written: {need[:8]}")
    if len(frame) == 0:
        # as a set table of no rows is refused (H102: a bare numpy error)
        from .report import EMPTY_EXPECTED
        raise InputError("has no rows", file=release.path,
                         param=None if release.path is not None else "table",
                         expected=EMPTY_EXPECTED)
    rows = Rows()
    if original is not None:        # any table publish takes (Arrow, Polars, DuckDB, ...)
        from ..io.tables import as_frame
        original = as_frame(original, param="original")
        # it holds every column the release published from it (the
        # publisher's own ID, GID, ec and bucket IDs aside), as the set
        # tables' audit asks (H34: a KeyError, or a pass without the column)
        from ..validate import check_original_columns
        own = {"ID", "GID", "ec"}
        check_original_columns([c for c in frame.columns if c not in own and
                                not str(c).endswith("_bid")], original.columns)
    original = _kept_rows(meta, original)
    if original is not None:
        same = len(original) == len(frame)
        rows.add("rows", "-", "pass" if same else "fail", len(original), len(frame),
                 f"original has {len(original):,} rows, the release {len(frame):,}")
    elif isinstance(meta.get("n_rows"), int):
        # written since the count was recorded (H59: a class dropped or
        # repeated passed without the original)
        same = meta["n_rows"] == len(frame)
        rows.add("rows", "-", "pass" if same else "fail", len(frame), meta["n_rows"],
                 f"the table holds {len(frame):,} rows, its metadata {meta['n_rows']:,}")
    run = _audit_msa if release.kind == "msa" else _audit_lgb
    sizes, attack, utility, attrs = run(meta, frame, original, rows)
    if release.kind == "lgb":
        _companion_rows(release, frame, rows)
    for r in attack:
        _attack_row(rows, r)
    _release_risks(meta, frame, rows, original)
    report = AuditReport(rows.frame(), with_data=original is not None,
                         facts={"rows": len(frame), "how": "in memory"})
    return PartitionAudit(report, sizes, pd.DataFrame(attack), utility, pd.DataFrame(attrs))
