"""LGB orchestration (paper 002, Alg. 1, Def. 9-10 and Fig. 2): :func:`lgb`
validates the table, the roles of its columns and the parameters, draws the
release's row order and record IDs from its key, bucketizes every
semi-sensitive and sensitive attribute, generalizes the QI cells into local
equivalence groups, and builds the published table of Fig. 2 with the bucket
tables IDT(ID, BID) and SAT(value, BID); :class:`LGBResult` holds the release
and what the checks and metrics need, and writes it.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...hierarchy import Hierarchy, hierarchy_of
from ...schema import SuppressionWarning, _outside_stacklevel
from ...passthrough import (check_allow_identifier, check_allow_recode, check_recodes,
                             passthrough_findings, warn_findings)
from ...shared_ids import shared_without_key
from ...validate import (InputError, ValuesError, check_bool, check_choice, check_int, check_names,
                         check_plain_values, apply_missing, check_token_declared, missing_rows,
                         refuse_clear_l, resolve_roles, check_output_names)
from ..homogeneous import homogeneous_metadata, single_value_groups
from ..keyed import ReleaseKey, by_name
from ...io.keys import frame_digest
from ...io.tables import csv_compression
from ..output import format_of, write_tables
from .bucketize import bucketize_attributes, closeness_ground
from .domain import encode_column, make_domain
from .flags import (drawn_flags, flags_matrix, promote_for_closeness, promote_for_k,
                    promote_second_value)
from .generalize import MDP_SPLITS, METHODS, local_generalization, published_intervals
from .metrics import c_dm, ncp


@dataclass(eq=False, repr=False)
class LGBResult:
    """An LGB publication and what is needed to evaluate it.

    ``table``, ``idt`` and ``sat`` are what gets published, with
    ``metadata`` (the model, the key mode, the row order, the pass-through
    columns).  The other fields hold the *original* codes, row by published
    row (for metrics, the attack simulation and query answering): never
    publish the object itself.  ``order[i]`` is the input row of published
    row i.
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
    order: np.ndarray = field(default=None, repr=False)   # (n,) input row of each row
    metadata: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.gid.size)

    @property
    def n_groups(self) -> int:
        return int(self.gid.max()) + 1 if self.gid.size else 0

    def __repr__(self) -> str:
        # a notebook prints this: the fields beside the published tables
        # hold the original codes, row by published row
        return (f"LGBResult(method={self.method!r}, k={self.k}, rows={self.n:,}, "
                f"groups={self.n_groups:,}, bucket tables={sorted(self.idt)})")

    def summary(self) -> dict:
        """Sizes, metrics and the release's metadata in one dictionary."""
        out = {"rows": self.n, "groups": self.n_groups, "method": self.method, "k": self.k,
               "C_DM": c_dm(self), "NCP": ncp(self), "promoted_cells": self.promoted,
               "suppressed_cells": int(self.suppressed.sum())}
        for a, name in enumerate(self.attributes):
            if self.roles[name] != "qi":
                inb = self.bid[a] >= 0
                out[f"buckets[{name}]"] = int(self.bid[a].max()) + 1 if inb.any() else 0
        out.update({k: v for k, v in self.metadata.items() if k not in ("paper", "model")})
        return out

    def write(self, path, *, format: str | None = None, protect=(), outputs=None) -> list:
        """Write the table to ``path`` and the bucket tables beside it as
        ``<stem>.<attr>.idt.<ext>`` and ``<stem>.<attr>.sat.<ext>`` (compressed
        as the table is: ``out.csv.gz`` gets ``out.<attr>.idt.csv.gz``); each
        file atomically, Parquet files with the release's metadata (and its
        C_DM and NCP under ``utility``), moved into place together with
        the removal of the bucket tables of the release it replaces that it
        leaves out (``outputs``: a release of more files they belong to).
        Returns the paths written."""
        path = Path(path)
        fmt = format or format_of(path)
        jobs = [(path, self.table)]
        for (a, kind), p in bucket_table_paths(path, fmt, list(self.idt)).items():
            jobs.append((p, (self.idt if kind == "idt" else self.sat)[a]))
        stem, ext = _stem_ext(path, fmt)
        # the bucket tables of the release this one replaces, of attributes it
        # leaves out: beside it they would still be read as its (their IDs
        # link them to this release's rows under one key); removed as the
        # new files move into place (an input among them: refused first)
        stale = _stale_tables(path, fmt, stem, ext, set(self.idt))
        meta = {**self.metadata, "utility": {"C_DM": c_dm(self), "NCP": ncp(self)}}
        written = write_tables(jobs, format=fmt, metadata=meta, protect=protect,
                               outputs=outputs, remove=stale)
        self.removed = stale
        return written


def _stem_ext(path: Path, fmt: str) -> tuple:
    """The bucket tables' name parts: out.csv.gz -> ('out', '.csv.gz'),
    compressed as the table is."""
    zipped = csv_compression(path) and path.suffix.lower()
    ext = ".parquet" if fmt == "parquet" else ".csv" + (zipped or "")
    stem = path.name
    for suf in (".parquet", ".pq", ".csv" + (zipped or "")):
        if stem.lower().endswith(suf):
            stem = stem[: -len(suf)]
            break
    return stem, ext


def bucket_table_paths(path, fmt: str, attributes) -> dict:
    """{(attribute, 'idt' | 'sat'): path} of the bucket tables written
    beside the table at ``path``: ``<stem>.<attr>.idt.<ext>`` and
    ``<stem>.<attr>.sat.<ext>``.  An attribute whose name cannot be part of
    a file name (a path separator, a NUL) is refused by name: it would name
    a file in another folder, or none."""
    path = Path(path)
    stem, ext = _stem_ext(path, fmt)
    out = {}
    for a in attributes:
        bad = [c for c in ("/", "\\", "\0") if c in str(a)]
        if bad or str(a) in (".", ".."):
            from ...validate import InputError
            raise InputError(f"has a name that cannot be part of its bucket tables' file names "
                             f"({stem}.<column>.idt{ext}): it holds {bad[0]!r}" if bad else
                             f"has a name that cannot be part of its bucket tables' file names "
                             f"({stem}.<column>.idt{ext})", column=str(a),
                             expected="a column name without '/', '\\' or NUL (rename it)")
        for kind in ("idt", "sat"):
            out[(a, kind)] = path.with_name(f"{stem}.{a}.{kind}{ext}")
    return out


def _stale_tables(path: Path, fmt: str, stem: str, ext: str, keep: set) -> list:
    """The bucket tables of the LGB release at ``path`` (about to be
    replaced) of attributes not in ``keep``: read off its metadata, never by
    a pattern that another release's names could match."""
    from ..output import csv_metadata, read_metadata
    try:
        if not path.is_file():
            return []
        old = read_metadata(path) if fmt == "parquet" else csv_metadata(path)
    except Exception:               # noqa: BLE001 - not a release: nothing of it to remove
        return []
    if str(old.get("paper")) != "002":
        return []
    roles = ((old.get("model") or {}).get("attributes") or {})
    return [f for a, r in roles.items() if r != "qi" and a not in keep
            for f in (path.with_name(f"{stem}.{a}.idt{ext}"),
                      path.with_name(f"{stem}.{a}.sat{ext}")) if f.is_file()]


def lgb(data, *, qi: Sequence[str], semi_sensitive: Sequence[str] = (),
        sensitive: Sequence[str] = (), flags=None, k: int, l=None,
        closeness: Mapping[str, float] | None = None, method: str = "mdp",
        hierarchies: Mapping[str, Hierarchy | str] | None = None,
        id_column: str | None = None, identifiers: Sequence[str] = (),
        other: Sequence[str] = (), drop: Sequence[str] = (), seed=None,
        research_seed: bool = False, key_file=None, keep_order: bool = False,
        suppress: bool = False,
        balance: bool = False, missing: str | None = None, missing_token: str = "?",
        mdp_split: str | None = None, allow_recode: Sequence[str] = (),
        allow_identifier: Sequence[str] = (), allow_shared_id: Sequence[str] = (),
        allow_homogeneous: Sequence[str] = (), allow_clear: Sequence[str] = ()) -> LGBResult:
    """Local generalization and bucketization (Alg. 1).

    Parameters
    ----------
    data : pandas.DataFrame
        Every column needs a role: an attribute (``qi``, ``semi_sensitive``,
        ``sensitive``), a flag column (named in ``flags``), ``id_column``,
        ``identifiers``, ``other`` or ``drop``; a column nobody named is
        refused.
    qi, semi_sensitive, sensitive : column names
        QI attributes (only QI values), semi-sensitive (both, per the flags),
        sensitive (only sensitive values).  Numeric columns without a
        hierarchy generalize to ranges; the others to hierarchy nodes (a flat
        ``*`` hierarchy when none is given).  The order they are listed in
        changes nothing: each role's attributes are processed by name
        (Alg. 3's ties of width go to the QIs by name, then the
        semi-sensitive ones by name), so one table under one seed gives one
        release; ``attributes`` and the metadata list them so.
    flags : bool array (n, len(semi_sensitive)), DataFrame, or mapping
        True marks a sensitive cell.  A mapping gives, per attribute, a flag
        column name of ``data`` (Fig. 1(b): yes/no, true/false or 1/0) or an
        array.  :func:`draw_flags` draws them at a density (another seed,
        other flags: an attribute then not l-eligible is advised an l that
        nearly every draw allows, docs/lgb.md).
    k : int
        Every local equivalence group gets >= k rows.
    l : int or {attribute: int}
        l-diversity of the local buckets of every semi-sensitive and
        sensitive attribute not in ``closeness``.
    closeness : {attribute: t}, optional
        Attributes bucketized under t-closeness instead, e.g. a two-valued
        sex as in Sec. 4: every bucket's distribution is within EMD t of the
        whole column's *and* of the bucketized values' (equal ground for
        categorical, ordered for numeric attributes); cells are promoted to
        sensitive where the flagged values alone are farther than t from the
        column (docs/algorithms.md).
    method : {'mdp', 'ncp'}
        Local generalization by multi-dimensional partition (Alg. 3) or by
        minimizing NCP (Alg. 4).
    hierarchies : {column: Hierarchy or ARX CSV path}, optional
    id_column : str, optional
        A column whose values are published as the record IDs, verbatim (use
        a pseudonym, never a real identifier).  Default: IDs 1..n drawn at
        random from the key.
    identifiers, drop : column names
        Columns never published.
    other : column names
        Columns passed through unchanged with their row (the metadata lists
        them): published as they are, so only what is safe to publish.
    allow_recode : column names
        Columns of ``other`` (or ``id_column``) you accept to publish although they recode a
        (semi-)sensitive attribute or a QI (lambda >= 0.9 over 131,072 rows
        drawn at random); refused otherwise.  The metadata and the audit
        name them.
    allow_identifier : column names
        Columns of ``other`` you accept to publish although they single rows
        out (half of the first 250,000 rows or more hold a value no other
        row has): beside a row's buckets such a column tells whose row it
        is wherever it is known elsewhere; refused otherwise (name it an
        identifier, or drop it; ``id_column`` is what publishes an ID).
    allow_shared_id : column names
        Identifiers whose values several rows share that you declare to be
        different people's (a household); refused otherwise
        (:mod:`anonset.shared_ids`: one person's waves fill groups as several people).
    allow_clear : attribute names
        Attributes held to l = 1 that you accept to publish in the clear
        (a bucket of one row tells its value), and under k = 1 the QI and
        semi-sensitive attributes, whose QI cells a group of one row shows
        exactly; refused otherwise.  The metadata (``clear``) and the audit
        name them.
    allow_homogeneous : attribute names
        Attributes of ``closeness`` whose buckets may hold one value alone
        (t allows it where the value is common; the bucket then tells its
        rows' value).  By default every t-bucket holds two values or more
        (:mod:`anonset.partition.homogeneous`); the metadata
        (``homogeneous``, ``homogeneous_allowed``) and the audit name the
        buckets an allowed attribute kept.
    seed : bytes, str or int, optional
        Key material of at least 128 bits: the release (row order, IDs, the
        order of a bucket's shown values, promoted cells) is a pure function
        of the data and the key.  Default: a fresh key from the OS.
    research_seed : bool
        Accept a seed shorter than 128 bits (research on data that is not
        secret); the metadata records ``key: 'research-seed'``.
    key_file : path, optional
        A file holding the key material (instead of ``seed``; refused with
        one), so that the secret never sits in code or on a command line:
        the release is the one ``anonset lgb --key-file`` makes (the file's
        bytes, a trailing newline left out, as the command reads them) for
        the same flags.  With ``--density X`` the command draws the flags
        under the same key: pass ``flags=draw_flags(data, semi_sensitive, X,
        key_file=PATH)`` (with ``--seed S``: ``seed=S`` to both).
    keep_order : bool
        Publish the rows in input order with IDs 1..n, the input row
        numbers, as the paper's Fig. 2 does.  A risk: when the input is
        sorted by a sensitive attribute, the order and the IDs reveal it
        (the adversary of :func:`attack` then recovers every bucketized
        value).  The metadata records ``row_order: 'input'``.
    suppress : bool
        When an attribute's sensitive values are not l-eligible, publish the
        fewest of them as ``*`` instead of raising ValueError (which names
        every such attribute, each with its remedies).  This is a
        risk taken by name: the cells removed are those of the values held
        too often, so a ``*`` tells that the value is one of them (where one
        value dominates, that value).  It warns
        (:class:`~anonset.SuppressionWarning`), the metadata counts the
        cells per attribute (``suppressed``) and the audit reports them as a
        risk.
    balance : bool
        ``method='ncp'`` only: False (default) runs Alg. 4 exactly as printed
        (a split leaving a side under k rows is abandoned, the node becomes
        one group); True applies Xu et al.'s adjustment (groups of k..2k-1
        rows, lower C_DM and NCP).  Both give groups of >= k rows; see
        docs/lgb.md.
    mdp_split : {'below_max', 'paper'}, optional
        ``method='mdp'`` only (refused with 'ncp', where it would change
        nothing; likewise ``balance`` with 'mdp'): 'paper' follows Alg. 3
        lines 11-13 as printed (S_l = values <= the lower median), so an
        attribute whose lower median is a node's largest value (a majority
        value last in code order: 'Male' after 'Female', 'White' last among
        races) never splits it; 'below_max' (default) then splits below that value.  Both give
        groups of >= k rows; on the Youth Risk Behavior Survey (age, sex,
        race; k = 5, l = 2) 'paper' made 6 groups (C_DM 18.3 M), 'below_max'
        53 (5.1 M).  See docs/lgb.md.
    missing : None (default), 'category' or 'drop'
        A missing cell in an attribute is refused by default; 'category'
        publishes it as the value ``missing_token``, a value of its own
        (columns of numbers refuse it; a hierarchy lists the token among its
        leaves); 'drop' leaves those rows (and their flags) out of the release
        (:func:`anonset.validate.apply_missing`; the metadata records how
        many, and the audit names it: presence in the release tells that a
        person's attributes are all answered).
    missing_token : str
        The value of a missing cell under ``missing='category'`` (default '?').

    Returns
    -------
    LGBResult
    """
    frame = _check_frame(data)
    qi, semi, sens = _names(qi, "qi"), _names(semi_sensitive, "semi_sensitive"), \
        _names(sensitive, "sensitive")
    flag_cols = [v for v in flags.values() if isinstance(v, str)] \
        if isinstance(flags, Mapping) else []
    roles = resolve_roles(frame.columns, {
        "qi": qi, "semi_sensitive": semi, "sensitive": sens, "flags": flag_cols,
        "id_column": [id_column] if id_column is not None else [],
        "identifiers": _names(identifiers, "identifiers"), "other": _names(other, "other"),
        "drop": _names(drop, "drop")})
    # each role's attributes processed (coded, flagged, promoted, bucketized
    # with one generator, split on ties of width) and keyed by name, whatever
    # order they were listed in: one table under one seed, one release (H111:
    # listed the other way, other groups and buckets, which intersected with
    # the first release's); the published table keeps the input's columns
    semi_listed = semi                  # an array of flags has its columns in this order
    qi, semi, sens = by_name(qi), by_name(semi), by_name(sens)
    attrs = qi + semi + sens
    check_output_names({"qi": qi, "semi_sensitive": semi, "sensitive": sens,
                        "other": _names(other, "other")},
                       {"ID": "record ID column", "GID": "group ID column",
                        **{f"{a}_bid": f"bucket ID column of {a!r}" for a in semi + sens}})
    check_plain_values(frame, attrs, partition=True)
    if not attrs:
        raise InputError("no attributes", param="qi",
                         expected="columns named in {@qi}, {@semi_sensitive} or {@sensitive}")
    # read as the command reads --key-file (H154: the warning on repeated
    # releases advised key_file=, which lgb did not take)
    from ...io.keys import seed_or_key_file
    seed = seed_or_key_file(seed, key_file)
    key = ReleaseKey.make(seed, research_seed=research_seed, keep_order=keep_order)
    # suppression is a risk named with True ('no' was a yes)
    suppress, balance = check_bool(suppress, "suppress"), check_bool(balance, "balance")
    # an option of the other algorithm would change nothing: refused, not ignored
    if mdp_split is not None and method == "ncp":
        raise InputError(f"is {mdp_split!r}, but it applies to Alg. 3 only and the method is "
                         "'ncp' (Alg. 4)", param="mdp_split",
                         expected="{@method='mdp'}, or no {@mdp_split}")
    if balance and method == "mdp":
        raise InputError("applies to Alg. 4 only, and the method is 'mdp' (Alg. 3)",
                         param="balance", expected="{@method='ncp'}, or no {@balance}")
    mdp_split = "below_max" if mdp_split is None else mdp_split
    check_choice(mdp_split, "mdp_split", MDP_SPLITS)
    k, lmap, closeness, hier = _check_model(frame, attrs, semi + sens, k, l, closeness,
                                            method, hierarchies)
    # the release's own draws: another model under one key, another order
    key = key.for_release(
        {"paper": "002", "k": k, "l": lmap, "closeness": closeness, "method": method,
         "qi": qi, "semi_sensitive": semi, "sensitive": sens, "suppress": suppress,
         "balance": balance, "mdp_split": mdp_split,
         "hierarchies": {a: [list(p) for p in h.paths] for a, h in sorted(hier.items())},
         # another table under one key (a later wave): other IDs, groups and
         # order, not rows lined up with the first release's
         # (passed through too: H96)
         "data": lambda: frame_digest(frame, attrs + sorted(c for c in frame.columns
                                                            if roles[c] == "other"))})
    all_flags = flags_matrix(frame, semi_listed, flags)
    all_flags = all_flags[:, [semi_listed.index(a) for a in semi]]      # by name
    kept = ~missing_rows(frame, attrs)[0] if missing == "drop" else None
    frame, missing_record = apply_missing(frame, attrs, missing, token=missing_token)
    check_token_declared(missing_record, {c: h.leaves for c, h in hier.items()})
    if kept is not None:                 # a row's flags leave with it
        all_flags = all_flags[kept]
        if len(frame) < k:
            raise InputError(f"the table has {len(frame)} rows once the "
                             f"{int((~kept).sum()):,} with a missing cell are dropped, fewer "
                             f"than k={k}", param="k",
                             expected="a smaller k, or {@missing='category'}")
    # a pass-through column that recodes an attribute: refused before any
    # work unless named (the other findings warn once the release is made).
    # The ID column is published as it is too: one that recodes an
    # attribute (a row number of a file sorted by it) is refused the same
    # way; that it singles rows out is what an ID is for
    other_cols = [c for c in frame.columns if roles[c] == "other"]
    as_is = other_cols + ([id_column] if id_column is not None else [])
    found = check_recodes([_as_id(f) if f["column"] == id_column else f
                           for f in passthrough_findings(frame, as_is, semi + sens,
                                                         generalized=qi)
                           if not (f["check"] == "identifier" and f["column"] == id_column)]
                          + ([_id_link(frame, id_column)] if id_column is not None else []),
                          check_allow_recode(allow_recode, as_is),
                          allow_identifier=check_allow_identifier(allow_identifier, as_is))
    n = len(frame)
    # domains and codes in the input's order (a domain does not depend on
    # it), so that a value outside a hierarchy is named at its own row, not
    # at a row of the shuffled frame
    domains = [make_domain(a, frame[a], hier.get(a)) for a in attrs]
    q = len(attrs)
    codes = np.empty((q, n), dtype=np.int32)
    for j, (a, dom) in enumerate(zip(attrs, domains)):
        codes[j] = encode_column(frame[a], dom)
    order = key.order(n, "lgb-rows")
    semi_flags = np.ascontiguousarray(all_flags[order])
    frame = frame.iloc[order].reset_index(drop=True)
    codes = np.ascontiguousarray(codes[:, order])

    clear = refuse_clear_l(lmap, {a: dom.d for a, dom in zip(attrs, domains)}, allow_clear,
                           k=k, generalized=qi + semi)
    allow_homogeneous = check_names(allow_homogeneous, "allow_homogeneous")
    for a in allow_homogeneous:
        if a not in closeness:
            raise InputError(f"names {a!r}, which is not a t-closeness attribute",
                             param="allow_homogeneous",
                             expected=f"attributes of {{@closeness}}: one of {sorted(closeness)}")
    # flags only ever grow: so that every QI-partition subset holds k rows,
    # and so that the flagged values of every t-closeness attribute are
    # within t of its column (else no bucketing can be) and hold two values
    # (else every bucket tells them); repeated until none adds a flag (at
    # worst every cell: then all hold)
    rng = key.generator("lgb-promote")
    promoted = -1
    total = 0
    while promoted != 0:
        promoted = promote_for_k(semi_flags, k)
        for a in by_name(closeness):          # one generator: in one order (H111)
            if a in semi:
                j, dom = attrs.index(a), domains[attrs.index(a)]
                promoted += promote_for_closeness(semi_flags[:, semi.index(a)], codes[j],
                                                  dom.d, float(closeness[a]),
                                                  closeness_ground(dom), rng)
                if a not in allow_homogeneous:    # buckets of one value alone tell it
                    promoted += promote_second_value(semi_flags[:, semi.index(a)], codes[j],
                                                     dom.d, rng)
        total += promoted
    sens_mask = np.zeros((n, q), dtype=bool)
    sens_mask[:, len(qi):len(qi) + len(semi)] = semi_flags
    sens_mask[:, len(qi) + len(semi):] = True
    qi_mask = ~sens_mask

    bid, shown, suppressed, grounds = bucketize_attributes(
        codes, sens_mask, attrs, domains, lmap, closeness, suppress, key.generator("lgb-show"),
        allow_homogeneous, drawn_flags(flags, semi))
    gid = local_generalization(codes, qi_mask, domains, k, method, balance=balance,
                               mdp_split=mdp_split)
    glo, ghi = published_intervals(codes, qi_mask, gid, domains)

    # publish in a second, independent random order: the buckets and groups
    # were built with ties broken by the processing order, so that order is
    # not independent of who shares a bucket (tested by order_attack)
    pub = key.order(n, "lgb-publish")
    codes, bid, shown, suppressed, glo, ghi = (x[:, pub] for x in
                                               (codes, bid, shown, suppressed, glo, ghi))
    qi_mask, gid, order = qi_mask[pub], gid[pub], order[pub]
    frame = frame.iloc[pub].reset_index(drop=True)
    ids = frame[id_column].to_numpy() if id_column is not None else key.ids(n)
    attr_roles = {a: "qi" for a in qi} | {a: "semi_sensitive" for a in semi} | \
        {a: "sensitive" for a in sens}
    columns = [c for c in frame.columns if c in attr_roles or roles[c] == "other"]
    table, idt, sat = _publish(ids, gid, attrs, attr_roles, domains, qi_mask, glo, ghi, bid,
                               shown, suppressed, codes, columns, frame)
    idents = [c for c in frame.columns if roles[c] == "identifiers"]
    from ..._version import __version__
    meta = {"paper": "002", "anonset": __version__, "n_rows": int(n),
            "model": {"k": k, "l": lmap, "closeness": closeness,
                      "method": method, "attributes": attr_roles,
                      **({"mdp_split": mdp_split} if method == "mdp" else {}),
                      "grounds": grounds},
            **key.metadata(),
            "ids": f"column {id_column!r}" if id_column is not None else
            ("input row numbers" if keep_order else "random"),
            "pass_through": [c for c in frame.columns if roles[c] == "other"],
            "identifiers": idents,
            "dropped": [c for c in frame.columns if roles[c] == "drop"],
            **shared_without_key(frame, idents, allow_shared_id),      # after every refusal
            "pass_through_risks": warn_findings(found),
            "clear": clear,
            "suppressed": _warn_suppressed(attrs, suppressed, codes, domains),
            **homogeneous_metadata(_homogeneous_buckets(attrs, closeness, bid, codes),
                                   allow_homogeneous),
            "missing": missing_record}
    return LGBResult(table=table, idt=idt, sat=sat, k=k, l=lmap, closeness=closeness,
                     method=method, attributes=tuple(attrs), roles=attr_roles,
                     domains=domains, codes=codes, qi_mask=qi_mask, gid=gid, glo=glo,
                     ghi=ghi, bid=bid, shown=shown, suppressed=suppressed, promoted=total,
                     grounds=grounds, order=order, metadata=meta)


def _homogeneous_buckets(attrs, closeness, bid: np.ndarray, codes: np.ndarray) -> dict:
    """Per t-closeness attribute, its buckets that hold one value alone
    (possible only where the user allowed them): (classes, rows)."""
    out = {}
    for a in closeness:
        j = attrs.index(a)
        inb = bid[j] >= 0
        n_b, n_r = single_value_groups(bid[j, inb], codes[j, inb])
        if n_b:
            out[a] = {"groups": n_b, "rows": n_r}
    return out


def _warn_suppressed(attrs, suppressed: np.ndarray, codes: np.ndarray, domains) -> dict:
    """The cells published as '*' per attribute (suppress=True), with a
    :class:`~anonset.SuppressionWarning` where there are any, naming the
    value most of a column's '*' cells hold (what a '*' tells, as the audit
    with the original data says)."""
    out = {a: int(suppressed[j].sum()) for j, a in enumerate(attrs) if suppressed[j].any()}
    if out:
        told = []
        for j, a in enumerate(attrs):
            if a in out:
                held = np.bincount(codes[j, suppressed[j]], minlength=len(domains[j].values))
                told.append(f"{a} {out[a]:,}, {held.max() / held.sum():.1%} of them hold "
                            f"{domains[j].values[int(held.argmax())]!r}")
        cells = "; ".join(told)
        warnings.warn(f"cells published as '*' to make them l-eligible ({cells}): a '*' tells "
                      "that the value is one held too often, and where one value dominates "
                      "the column, that value (accepted by suppress=True; --suppress; the audit "
                      "names it)",
                      SuppressionWarning, stacklevel=_outside_stacklevel())
    return out


def _id_link(frame, id_column: str) -> dict:
    """The ID column as the likely identifier it is: published verbatim,
    its values are the same in every release of these records and link
    their rows one for one, whose groups and buckets then intersect (H23:
    two releases under fresh keys pinned 11 % of a sensitive column held to
    l = 4, three 28 %; a pass-through identifier is refused for this).
    Refused unless named in ``allow_identifier``, as one is."""
    vc = frame[id_column].value_counts(dropna=False)
    share = float((vc == 1).sum() / max(1, len(frame)))
    core = ("published verbatim as the record IDs, its values are the same in every release "
            "of these records and link each release's rows one for one to any other's that "
            "publishes them, whose groups and buckets then intersect (three releases under "
            "fresh keys pinned 28 % of a column held to l = 4)")
    return {"check": "identifier", "column": id_column, "sensitive": None,
            "value": round(share, 4), "why": f"is the ID column: {core}",
            "remedy": "no {@id_column} (IDs drawn at random for each release)",
            "message": f"ID column {id_column!r}: {core}"}


def _as_id(finding: dict) -> dict:
    """A pass-through finding worded for the ID column (``id_column``)."""
    f = dict(finding)
    for k in ("why", "message"):
        if k in f:
            f[k] = f[k].replace("is a pass-through column", "is the ID column") \
                .replace("pass-through column", "ID column")
    if "remedy" in f:
        f["remedy"] = "another ID column, or none (random IDs)"
    return f


def _check_frame(data) -> pd.DataFrame:
    from ...io.tables import as_frame        # pandas, Arrow, Polars, DuckDB, ... as publish
    data = as_frame(data)
    if len(data) == 0:
        raise InputError("the table is empty", param="data", expected="at least one row")
    return data.reset_index(drop=True)


def _names(v, param: str) -> list:
    return list(check_names(v, param))


def _check_model(frame, attrs, bucketed, k, l, closeness, method, hierarchies):
    """k, l per attribute, t per attribute and the hierarchies, checked."""
    if method not in METHODS:
        raise InputError(f"got {method!r}", param="method", expected=f"one of {METHODS}")
    k = check_int(k, "k", minimum=1)
    if len(frame) < k:
        raise ValuesError(f"the table has {len(frame)} rows, fewer than k={k}", param="k",
                          expected=f"k <= {len(frame)} (a group of k rows)")
    if closeness is not None and not isinstance(closeness, Mapping):
        raise InputError(f"got {closeness!r}", param="closeness",
                         expected="a mapping {attribute: t}, e.g. {'disease': 0.2}")
    closeness = dict(closeness or {})
    for a, t in closeness.items():
        if a not in bucketed:
            raise InputError("is not semi-sensitive or sensitive", param="closeness", column=a,
                             expected=f"t for one of {bucketed} (a QI is generalized, "
                                      "not bucketized)")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1:
            raise InputError(f"got {t!r}", param="closeness", column=a,
                             expected="a number in [0, 1]")
    need_l = [a for a in bucketed if a not in closeness]
    if need_l and l is None:
        raise InputError(f"is required for {need_l}", param="l",
                         expected="{@l=L} (one for all), or t for each of them: "
                                  "{@closeness=" + repr({**closeness, **{a: 0.2 for a in need_l}})
                                  + "}")
    lmap = _per_attr(l, need_l, "l") if need_l else {}
    for a in need_l:
        if a not in lmap:
            raise InputError("has no value for it", param="l", column=a,
                             expected="an l for every bucketized attribute without a t: "
                                      "{@l=" + repr({b: 3 for b in need_l}) + "}, or one l "
                                      "for all")
        lmap[a] = check_int(lmap[a], "l", minimum=1, column=a)
        if lmap[a] > len(frame):        # no bucket of l distinct values (nor a C long)
            raise ValuesError(f"the table has {len(frame)} rows, fewer than l={lmap[a]}",
                              param="l", column=a,
                              expected=f"l <= {len(frame)} (a bucket of l distinct values)")
    hier = {}
    for a, h in (hierarchies or {}).items():
        if a not in attrs:
            raise InputError("is not a QI, semi-sensitive or sensitive column",
                             param="hierarchies", column=a)
        hier[a] = hierarchy_of(a, h)
    return k, lmap, closeness, hier


def _per_attr(v, attrs: list, name: str) -> dict:
    if isinstance(v, Mapping):
        extra = [a for a in v if a not in attrs]
        if extra:
            raise InputError(f"names {extra}, which are not semi-sensitive or sensitive "
                             "l-diversity attributes", param=name)
        return dict(v)
    return {a: v for a in attrs}


def _publish(ids, gid, attrs, roles, domains, qi_mask, glo, ghi, bid, shown, suppressed, codes,
             columns, frame):
    """The table of Fig. 2 (ID, GID, per attribute its published value and,
    for bucketized ones, ``<attr>_bid``; pass-through columns as they are),
    and IDT / SAT per bucketized attribute (Def. 9)."""
    n = gid.size
    cols = {"ID": ids, "GID": gid + 1}
    idt, sat = {}, {}
    for a in columns:
        if a not in roles:
            cols[a] = frame[a].to_numpy()
            continue
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
