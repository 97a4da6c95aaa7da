"""Anatomy (Xiao & Tao, "Anatomy: simple and effective privacy
preservation", VLDB 2006): bucketization into a QI table and a sensitive
table.  The baseline of papers 004 (Sec. 6) and, with semantic classes, the
LE method of paper 001 ((l, e)-diversity of Haiyuan et al. [17], Table 12).

Algorithm (Xiao & Tao, Sec. 5):

1. hash the rows into buckets by sensitive value;
2. while at least ``l`` buckets are non-empty, form a QI-group from one row
   of each of the ``l`` largest buckets (the C kernel
   ``anonset_diverse_groups``; rows of a bucket are taken in a keyed random
   order);
3. each row left over (at most ``l - 1``, one per value, when the table is
   l-eligible) joins a keyed random group that lacks its value.

Every QI-group then holds at least ``l`` rows (``l`` plus the few left-over
rows it received, fewer than ``l`` in all) with distinct sensitive
values: frequency l-diverse, so an adversary who knows a person's QIDs gives
each of the group's values probability at most 1/l.  The table must be
l-eligible (no value held by more than 1/l of the rows), else no l-diverse
partition exists and the input is refused.

With ``classes`` (value -> class, e.g. the ancestor at a tree level) the
groups hold ``l`` distinct *classes* instead: (l, e)-diversity.

The release is the QIT (the QIDs of every row, exact, with its group id GID)
and the ST (GID, value, count), as Table 7 of paper 004.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...io.keys import derive_key, shuffled_order
from ...validate import InputError, ValuesError
from . import _baselines
from ._common import PartitionRelease, eligible_l, group_ranges, keyed_ids, prepare

__all__ = ["anatomy", "diverse_groups"]


def diverse_groups(codes: np.ndarray, d: int, l: int, key: bytes, purpose: str) -> np.ndarray:
    """Anatomy's QI-groups over one column of codes: the group of each row
    (0..groups-1), every group with ``l`` or more distinct codes (``l`` plus
    its share of the fewer than ``l`` left-over rows).

    The codes must be l-eligible.  ``key`` orders the rows of each value
    (which row of a value joins which group) and places the left-over rows.
    """
    n = codes.size
    perm = shuffled_order(derive_key(key, purpose), n)
    pos_group, n_groups = _baselines.diverse_groups(np.array([0, n], dtype=np.int64),
                                                    np.ascontiguousarray(codes[perm], np.int32),
                                                    d, l)
    group = np.empty(n, dtype=np.int64)
    group[perm] = pos_group
    left = np.flatnonzero(group < 0)
    if left.size:
        if n_groups == 0:
            raise ValuesError(f"has {n} rows with fewer than {l} distinct values", param="l",
                             expected=f"l <= {np.unique(codes).size}")
        g = np.random.default_rng(np.frombuffer(derive_key(key, purpose + "-residue"),
                                                dtype=np.uint32))
        for r in left:                       # at most l - 1 rows, distinct codes
            taken = np.zeros(n_groups, dtype=bool)
            taken[group[(codes == codes[r]) & (group >= 0)]] = True
            free = np.flatnonzero(~taken)
            if free.size == 0:               # not l-eligible: callers check first
                raise InputError("cannot place a left-over row", param="l",
                                 expected=f"l <= {eligible_l(codes, d)}")
            group[r] = free[g.integers(free.size)]
    return group


def anatomy(data: pd.DataFrame, *, qids: Sequence[str], sensitive: str, l: int,
            other: Sequence[str] = (), identifiers: Sequence[str] = (),
            drop: Sequence[str] = (), domains: Mapping[str, Sequence] | None = None,
            classes: Mapping | None = None, seed=None,
            research_seed: bool = False, keep_order: bool = False,
            allow_recode: Sequence[str] = (),
            allow_shared_id: Sequence[str] = (),
            allow_identifier: Sequence[str] = (),
            allow_clear: Sequence[str] = (), missing: str | None = None,
            missing_token: str = "?") -> PartitionRelease:
    """Publish a table by Anatomy: a QI table and a sensitive table.

    Parameters
    ----------
    data : pandas.DataFrame
    qids : column names published exactly in the QIT
    sensitive : the sensitive column (its values go to the ST)
    l : int
        Every QI-group holds ``l`` or more rows with distinct values.
    other, identifiers, drop : column names
        Passed through unchanged into the QIT / not published / not published.
        Every column needs a role.
    domains : {column: values}, optional
        Declared domains (inferring one reveals which values occur).
    classes : {value: class}, optional
        Count diversity over classes of values ((l, e)-diversity, paper 001's
        LE): every group then holds ``l`` distinct classes.
    seed : int, str or bytes, optional
        Key material (>= 128 bits unless ``research_seed``); default: fresh
        from the operating system.
    research_seed : bool
        Accept a short seed for a reproducible research run.
    keep_order : bool
        Publish the QIT in input order (by default a keyed random order).
    allow_recode : column names
        QIDs or columns of ``other`` you accept to publish although they
        recode the sensitive column (lambda >= 0.9,
        :mod:`anonset.passthrough`): the QIT publishes them as they are, so
        they are refused otherwise.
    allow_identifier : column names
        Columns of ``other`` you accept to publish although they single rows
        out (:mod:`anonset.passthrough`: a name, an ID, a timestamp); refused
        otherwise.
    allow_shared_id : column names
        Identifiers whose values several rows share that you declare to be
        different people's (a household); refused otherwise
        (:mod:`anonset.shared_ids`: one person's waves fill groups as several people).
    allow_clear : ``[sensitive]``
        To accept l = 1, at which a group may hold one row and so tell its
        value (published in the clear); refused otherwise.  The metadata
        (``clear``) names it.
    missing, missing_token
        As :func:`anonset.partition.baselines.mondrian` (a missing cell refused,
        published as a value of its own, or its row left out).

    Returns
    -------
    PartitionRelease
        ``table`` is the QIT, ``st`` the ST; ``check()`` recomputes the
        guarantee.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [25, 29, 54, 78, 20, 55, 56, 59],
    ...                    "sex": list("MMMMFFFF"),
    ...                    "disease": ["cancer", "cancer", "cancer", "cold",
    ...                                "cold", "cut", "cut", "cut"]})
    >>> rel = anatomy(df, qids=["age", "sex"], sensitive="disease", l=2,
    ...               seed=4, research_seed=True)
    >>> list(rel.table.columns), list(rel.st.columns)
    (['age', 'sex', 'GID'], ['GID', 'disease', 'count'])
    >>> rel.check()["ok"], rel.n_groups
    (True, 4)
    """
    p = prepare(data, qids=qids, sensitive=sensitive, l=l, other=other,
                identifiers=identifiers, drop=drop, domains=domains, seed=seed,
                research_seed=research_seed, keep_order=keep_order,
                allow_recode=allow_recode, allow_shared_id=allow_shared_id,
                allow_identifier=allow_identifier,
                allow_clear=allow_clear,
                need_eligible=classes is None, exact_qids=True,
                missing=missing, missing_token=missing_token)
    sdom = p.domains[sensitive]
    d = len(sdom)
    if classes is None:
        codes, dc = p.scodes, d
    else:
        unclassed = [v for v in sdom if v not in classes]
        if unclassed:
            raise InputError(f"has no class for {unclassed[:5]}", param="classes",
                             expected="a class for every value of the sensitive domain")
        labels = sorted({classes[v] for v in sdom}, key=str)
        cls = np.array([labels.index(classes[v]) for v in sdom], dtype=np.int32)
        codes, dc = cls[p.scodes], len(labels)
        best = eligible_l(codes, dc)
        if best < p.l:
            raise InputError(f"is not {p.l}-eligible over the classes", column=sensitive,
                             param="l", expected=f"l <= {best}")
    group = diverse_groups(codes, dc, p.l, p.key.key, "anatomy")
    n_groups = int(group.max()) + 1
    glo, ghi = group_ranges(p.qcodes, group, n_groups)
    gid = keyed_ids(p.key.key, n_groups, "anatomy-gid")
    order = p.key.order(p.n)
    qit = {c: p.frame[c].to_numpy()[order] for c in p.qids}
    qit["GID"] = gid[group[order]]
    for c in p.other:
        qit[c] = p.frame[c].to_numpy()[order]
    pair, count = np.unique(group * d + p.scodes, return_counts=True)
    st = pd.DataFrame({"GID": gid[pair // d], sensitive: np.asarray(sdom, dtype=object)[pair % d],
                       "count": count})
    st = st.sort_values(["GID", sensitive], kind="stable").reset_index(drop=True)
    info = {"method": "anatomy", "l": p.l, "groups": n_groups, **p.key.metadata(),
            "clear": p.clear, **p.shared_ids, "pass_through_risks": p.pass_through_risks,
            "missing": p.missing,
            "diversity_over": "classes" if classes is not None else "values"}
    return PartitionRelease("anatomy", p.l, p.qids, sensitive, p.domains, pd.DataFrame(qit), st,
                            info, group, glo, ghi, p.qcodes, p.scodes, exact_qids=True)
