"""Input handling and the release type shared by the partition baselines
(Anatomy, l-diverse Mondrian, TP): roles, domains, codes, the eligibility
requirement (Xiao & Tao 2006, Sec. 5; paper 004, Sec. 5.4) and keyed output
order.

Every column of the input must have a role (``qids``, ``sensitive``,
``other``, ``identifiers`` or ``drop``; :func:`anonset.validate.resolve_roles`
refuses the rest).  Identifiers and dropped columns are not published; other
columns pass through unchanged.  The key is the partition family's
:class:`~anonset.partition.keyed.ReleaseKey`: output rows come in a keyed
uniformly random order (``keep_order=True`` opts out, recorded in ``info``)
and group ids are numbered in a keyed random order, so neither row order nor
ids tell anything about the input order.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...io.keys import derive_key, frame_digest, shuffled_order
from ..keyed import ReleaseKey, by_name
from ...passthrough import (check_allow_identifier, check_allow_recode, check_recodes,
                             joint_exact_finding, passthrough_findings, warn_findings)
from ...shared_ids import shared_without_key
from ...validate import (InputError, apply_missing, check_int, check_plain_values,
                         check_token_declared, refuse_clear_l, resolve_roles)

__all__ = ["Prepared", "prepare", "PartitionRelease", "eligible_l", "keyed_ids", "range_label"]


@dataclass(eq=False)
class Prepared:
    """A validated input: codes of the QIDs and the sensitive attribute."""
    frame: pd.DataFrame
    qids: tuple
    sensitive: str
    other: tuple
    domains: dict                 # attribute -> tuple of values (code order)
    qcodes: np.ndarray            # (q, n) int32
    scodes: np.ndarray            # (n,) int32
    l: int
    key: ReleaseKey = field(repr=False)
    shared_ids: dict = field(default_factory=dict)   # metadata: rows sharing an id's value
    pass_through_risks: list = field(default_factory=list)   # anonset.passthrough findings
    clear: list = field(default_factory=list)     # metadata: allowed in the clear at l = 1
    missing: dict = field(default_factory=dict)   # metadata: the missing-value policy applied

    @property
    def n(self) -> int:
        return int(self.scodes.size)

    @property
    def canonical(self) -> list:
        """The rows of :attr:`qcodes` by QID name: the order the partition is
        made in, whatever order the QIDs were listed in (H111: Mondrian's
        ties of width and TP's points followed the order listed, so one
        table under one seed gave another partition)."""
        return [self.qids.index(c) for c in by_name(self.qids)]


def eligible_l(scodes: np.ndarray, d: int) -> int:
    """The largest l for which the rows are l-eligible (no sensitive value
    held by more than 1/l of them)."""
    cnt = np.bincount(scodes, minlength=d)
    return int(scodes.size // max(int(cnt.max()), 1)) if scodes.size else 0


def _domain_text(v) -> str:
    """A domain value as the release's key facts spell it: a whole number
    one way whatever its type (37 and 37.0: a column with a gap, or a CSV's
    '37.0', is the same table, H115: Anatomy drew two bucketizations of
    it under one seed, and read together they pinned 412 of 600 values);
    anything else as ``str``."""
    import numbers
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
        x = float(v)
        if np.isfinite(x) and x == np.floor(x):
            return str(int(v)) if isinstance(v, numbers.Integral) else str(int(x))
    return str(v)


def _encode(col: pd.Series, name: str, domain) -> tuple:
    if col.isna().any():
        raise InputError(f"has {int(col.isna().sum())} missing values", column=name,
                         expected="a value in every row, or {@missing='category'}")
    if domain is None:
        dom = tuple(sorted(pd.unique(col).tolist()))
    else:
        dom = tuple(domain)
        if len(set(dom)) != len(dom):
            raise InputError("has a declared domain with repeated values", column=name,
                             param="domains", expected="each value once")
    codes = pd.Categorical(col, categories=list(dom)).codes.astype(np.int32)
    if (codes < 0).any():
        bad = col[codes < 0].iloc[0]
        raise InputError(f"holds {bad!r}, which is not in its declared domain", column=name,
                         param="domains", expected=f"one of {len(dom)} declared values")
    return dom, codes


def prepare(data, *, qids: Sequence[str], sensitive: str, l, other: Sequence[str] = (),
            identifiers: Sequence[str] = (), drop: Sequence[str] = (),
            domains: Mapping[str, Sequence] | None = None, seed=None,
            research_seed: bool = False, keep_order: bool = False,
            need_eligible: bool = True, exact_qids: bool = False,
            allow_recode: Sequence[str] = (), allow_shared_id: Sequence[str] = (),
            allow_clear: Sequence[str] = (), allow_identifier: Sequence[str] = (),
            missing: str | None = None, missing_token: str = "?") -> Prepared:
    """Check roles, encode, check l-eligibility, make the key.
    ``exact_qids``: the method publishes the QIDs as they are (Anatomy), so
    they are checked for recodes of the sensitive column as pass-through
    columns are (:mod:`anonset.passthrough`).  A column published as it is
    that recodes the sensitive column (or a generalized QID) is refused
    unless named in ``allow_recode``; a pass-through column that singles
    rows out unless named in ``allow_identifier``.  ``missing``: a missing
    cell in a QID or the sensitive column is refused (None, 'error'),
    published as ``missing_token`` ('category') or leaves its row out
    ('drop'), as msa and LGB do (:func:`anonset.validate.apply_missing`)."""
    from ...io.tables import as_frame   # pandas, Arrow, Polars, DuckDB, ... as publish (H69)
    data = as_frame(data)
    if len(data) == 0:
        raise InputError("is empty", param="data", expected="at least one row")
    if not isinstance(sensitive, str):
        raise InputError(f"got {sensitive!r}", param="sensitive", expected="one column name")
    qids = [qids] if isinstance(qids, str) else list(qids)
    roles = resolve_roles(data.columns, {"qids": qids, "sensitive": [sensitive],
                                         "other": list(other), "identifiers": list(identifiers),
                                         "drop": list(drop)})
    check_plain_values(data, qids + [sensitive], partition=True)
    l = check_int(l, "l", minimum=1)
    domains = dict(domains or {})
    for c in domains:
        if c not in qids and c != sensitive:
            raise InputError(f"names {c!r}, which is not a QID or the sensitive column",
                             param="domains", expected=f"one of {qids + [sensitive]}")
    frame, missing_record = apply_missing(data, qids + [sensitive], missing, token=missing_token)
    check_token_declared(missing_record, domains)
    for c in qids + [sensitive]:
        if c not in domains and isinstance(data[c].dtype, pd.CategoricalDtype):
            # a Categorical declares its domain (its unused categories too, in
            # their order where ordered), as publish and Rating read it, the
            # missing-value token where publish puts it (H84, H85)
            from ...schema import Schema
            cat = missing == "category"
            dom = Schema.infer(data[[c]] if cat else data[[c]].dropna(), sensitive=[c],
                               missing="category" if cat else "error",
                               missing_token=missing_token)[c].domain
            # a filled column is text, its categories too (H87: a Categorical
            # of numbers with missing cells was refused, '3' not in (3, ..))
            filled = c in (missing_record.get("columns") or {})
            domains[c] = [str(v) for v in dom] if filled else dom
    frame = frame.reset_index(drop=True)
    doms, qc = {}, []
    for c in qids:
        doms[c], codes = _encode(frame[c], c, domains.get(c))
        qc.append(codes)
    doms[sensitive], sc = _encode(frame[sensitive], sensitive, domains.get(sensitive))
    clear = refuse_clear_l({sensitive: l}, {sensitive: len(doms[sensitive])}, allow_clear)
    if need_eligible and l > 1:
        best = eligible_l(sc, len(doms[sensitive]))
        if best < l:
            top = np.bincount(sc).argmax()
            share = float(np.mean(sc == top))
            raise InputError(f"is not {l}-eligible: {doms[sensitive][top]!r} is held by "
                             f"{share:.1%} of the rows, more than 1/{l}", column=sensitive,
                             param="l", expected=f"l <= {best} (the eligibility requirement: no "
                                                 "value held by more than 1/l of the rows)"
                             if best >= 2 else
                             "another sensitive column or coarser values (no l >= 2 fits "
                             "it: the eligibility requirement holds no value by more than 1/l "
                             "of the rows, and l = 1 publishes it in the clear)")
    # keyed by the release's model too: another l under one key, other groups
    key = ReleaseKey.make(seed, research_seed=research_seed, keep_order=keep_order).for_release(
        # the QIDs by name: listed in another order, one release (H111)
        {"baseline": True, "qids": by_name(qids), "sensitive": sensitive, "l": l,
         "exact_qids": bool(exact_qids), "domains": {c: [_domain_text(v) for v in doms[c]]
                                                     for c in sorted(doms)},
         # (the columns passed through too: rows reordered that differ only
         # there drew the same groups in the same order, H96)
         "data": lambda: frame_digest(frame, by_name(qids) + [sensitive] +
                                      sorted(c for c in frame.columns if roles[c] == "other"))})
    qcodes = np.ascontiguousarray(np.vstack(qc) if qc else np.zeros((0, len(frame)), np.int32),
                                  dtype=np.int32)
    shared = shared_without_key(frame, [c for c in frame.columns if roles[c] == "identifiers"],
                                allow_shared_id)
    other_cols = [c for c in frame.columns if roles[c] == "other"]
    allow_recode = check_allow_recode(allow_recode,
                                      other_cols + (list(qids) if exact_qids else []))
    found = passthrough_findings(frame, other_cols, [sensitive],
                                 list(qids) if exact_qids else [],
                                 generalized=[] if exact_qids else list(qids))
    # exact QIDs read together (three or more), as publish reads them (H57)
    joint = joint_exact_finding(frame, list(qids), sensitive, found) if exact_qids else None
    risks = warn_findings(check_recodes(
        found + ([joint] if joint else []), allow_recode,
        allow_identifier=check_allow_identifier(allow_identifier, other_cols)))
    return Prepared(frame, tuple(qids), sensitive,
                    tuple(c for c in frame.columns if roles[c] == "other"), doms, qcodes,
                    np.ascontiguousarray(sc), l, key, shared, risks, clear, missing_record)


def keyed_ids(key: bytes, n: int, purpose: str) -> np.ndarray:
    """A keyed random numbering 0..n-1 (ids that do not follow creation order)."""
    perm = shuffled_order(derive_key(key, purpose), n)
    ids = np.empty(n, dtype=np.int64)
    ids[perm] = np.arange(n)
    return ids


def range_label(dom: tuple, lo: int, hi: int) -> str:
    """The published form of a code range: the value itself, ``*`` for the
    whole domain, else ``[first~last]``."""
    if lo == hi:
        return str(dom[lo])
    if lo == 0 and hi == len(dom) - 1:
        return "*"
    return f"[{dom[lo]}~{dom[hi]}]"


@dataclass(eq=False)
class PartitionRelease:
    """A partition release of a baseline and what its evaluation needs.

    ``table`` (and, for Anatomy, ``st``) is what gets published, rows in a
    keyed random order.  The fields after ``info`` hold evaluation data in
    *input* row order, including the true sensitive codes: never publish the
    object itself.

    * ``group[i]``: the group (QI-group, bucket) of input row i;
    * ``glo``, ``ghi`` (groups, q): the published code range of every QID
      (lo == hi: exact; the whole domain: suppressed);
    * ``exact_qids``: the QIDs are published per row (Anatomy's QIT).

    A group's sensitive values (Anatomy's ST; the rows of a generalized
    group) are what :meth:`hits` counts; :attr:`ghist` is the dense (groups,
    d_s) histogram, for small domains.
    """
    method: str
    l: int
    qids: tuple
    sensitive: str
    domains: dict
    table: pd.DataFrame
    st: pd.DataFrame | None
    info: dict
    group: np.ndarray = field(repr=False)
    glo: np.ndarray = field(repr=False)
    ghi: np.ndarray = field(repr=False)
    qcodes: np.ndarray = field(repr=False)
    scodes: np.ndarray = field(repr=False)
    exact_qids: bool = False

    @property
    def n_groups(self) -> int:
        return int(self.glo.shape[0])

    @functools.cached_property
    def group_sizes(self) -> np.ndarray:
        """Rows of each group (computed once: a release is not changed)."""
        return np.bincount(self.group, minlength=self.n_groups)

    def hits(self, s_members: np.ndarray) -> np.ndarray:
        """Rows of each group whose sensitive value is in ``s_members``."""
        return np.bincount(self.group, weights=s_members[self.scodes].astype(np.float64),
                           minlength=self.n_groups)

    @property
    def ghist(self) -> np.ndarray:
        """(groups, d_s) counts of each group's sensitive values (dense)."""
        return group_hist(self.scodes, self.group, self.n_groups,
                          len(self.domains[self.sensitive]))

    def check(self) -> dict:
        """The guarantee, recomputed from the release: every group frequency
        l-diverse (and so of >= l rows), every row inside its group's
        published QID ranges, the sensitive values shown per group equal to
        its rows' values."""
        from .checks import check_release
        return check_release(self)


def generalized_table(p: Prepared, group: np.ndarray, glo: np.ndarray, ghi: np.ndarray,
                      purpose: str) -> tuple:
    """The published rows of a generalization (Mondrian, TP): each QID as its
    group's range label, the sensitive value, GID (keyed numbering), the
    pass-through columns; rows in keyed random order.  Returns (table,
    group ids by group)."""
    n_groups = glo.shape[0]
    gid = keyed_ids(p.key.key, n_groups, purpose + "-gid")
    order = p.key.order(p.n)
    cols = {}
    for a, name in enumerate(p.qids):
        dom = p.domains[name]
        labels = np.array([range_label(dom, int(lo), int(hi))
                           for lo, hi in zip(glo[:, a], ghi[:, a])], dtype=object)
        cols[name] = labels[group[order]]
    cols[p.sensitive] = np.asarray(p.domains[p.sensitive], dtype=object)[p.scodes[order]]
    cols["GID"] = gid[group[order]]
    for c in p.other:
        cols[c] = p.frame[c].to_numpy()[order]
    return pd.DataFrame(cols), gid


def group_ranges(qcodes: np.ndarray, group: np.ndarray, n_groups: int) -> tuple:
    """Per group and QID, the smallest and largest code of its rows."""
    q = qcodes.shape[0]
    lo = np.zeros((n_groups, q), dtype=np.int32)
    hi = np.zeros((n_groups, q), dtype=np.int32)
    if group.size == 0:
        return lo, hi
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    present = group[order][starts]                  # every group has rows
    for a in range(q):
        c = qcodes[a][order]
        lo[present, a] = np.minimum.reduceat(c, starts)
        hi[present, a] = np.maximum.reduceat(c, starts)
    return lo, hi


def group_hist(scodes: np.ndarray, group: np.ndarray, n_groups: int, d: int) -> np.ndarray:
    """(groups, d) counts of the sensitive values of each group."""
    return np.bincount(group * d + scodes, minlength=n_groups * d).reshape(n_groups, d)
