"""Mondrian (LeFevre, DeWitt & Ramakrishnan, "Mondrian multidimensional
k-anonymity", ICDE 2006), strict multidimensional partitioning with
l-diversity as the split condition: the baseline of paper 004 (Sec. 6).

The table is cut recursively (the C kernel ``anonset_mondrian_ldiverse``):
a node is split on the QID of widest normalized range at its median value
(left = values <= median, else values < median), as long as both halves stay
frequency l-diverse; QIDs are tried in decreasing width, and a node with no
allowable cut becomes a QI-group (QIDs of equal width are tried by name, not
in the order listed, so one table under one seed gives one release).  Every
QI-group publishes, per QID, the range of its rows' codes ("strict": groups
never overlap), and its rows' sensitive values exactly.  Code order is the domain order: declare
``domains`` to give nominal attributes a meaningful one.

Guarantee: every QI-group is frequency l-diverse (no sensitive value held by
more than 1/l of its rows), hence has at least ``l`` rows.  The table must be
l-eligible (LeFevre et al.'s split condition holds at the root), else it is
refused.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from . import _baselines
from ._common import PartitionRelease, generalized_table, group_ranges, prepare

__all__ = ["mondrian", "mondrian_groups"]


def mondrian_groups(qcodes: np.ndarray, dom: Sequence[int], scodes: np.ndarray, d_s: int,
                    l: int, rows: np.ndarray | None = None, tries: int = 1) -> np.ndarray:
    """The Mondrian QI-group of each of ``rows`` (default: all rows), 0-based.

    ``rows`` must be frequency l-diverse as a whole.  ``tries`` > 1 relaxes
    the median cut (see csrc/partition/baselines.h); 1 is LeFevre et al.'s.
    """
    n = scodes.size
    rows = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    idx = rows.copy()                       # the kernel reorders it into groups
    ends = _baselines.mondrian(idx, np.ascontiguousarray(qcodes, dtype=np.int32),
                               np.asarray(dom, dtype=np.int32),
                               np.ascontiguousarray(scodes, dtype=np.int32), d_s, l, tries)
    sizes = np.diff(np.concatenate([[0], ends]))
    of_row = np.full(n, -1, dtype=np.int64)
    of_row[idx] = np.repeat(np.arange(ends.size, dtype=np.int64), sizes)
    return of_row[rows]


def mondrian(data: pd.DataFrame, *, qids: Sequence[str], sensitive: str, l: int,
             other: Sequence[str] = (), identifiers: Sequence[str] = (),
             drop: Sequence[str] = (), domains: Mapping[str, Sequence] | None = None,
             seed=None, research_seed: bool = False, keep_order: bool = False,
             allow_recode: Sequence[str] = (),
             allow_shared_id: Sequence[str] = (),
             allow_identifier: Sequence[str] = (),
             allow_clear: Sequence[str] = (), missing: str | None = None,
             missing_token: str = "?") -> PartitionRelease:
    """Publish a table by l-diverse strict multidimensional Mondrian.

    Parameters
    ----------
    data : pandas.DataFrame
    qids : column names, generalized to ranges of their domain order
    sensitive : the sensitive column, published exactly
    l : int
        Every QI-group is frequency l-diverse.
    other, identifiers, drop : column names (passed through / not published)
    domains : {column: values}, optional
        Declared domains; their order is the order of the ranges.
    seed, research_seed, keep_order : the key of the row order and the group
        ids, and the opt-out of the keyed row order (see
        :func:`anonset.partition.baselines.anatomy`).
    allow_recode : column names
        Columns of ``other`` you accept to publish although they recode the
        sensitive column or a QID (lambda >= 0.9, :mod:`anonset.passthrough`);
        refused otherwise.
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
    missing : None (default), 'category' or 'drop'
        A missing cell in a QID or the sensitive column is refused; 'category'
        publishes it as the value ``missing_token`` (default '?'), a value of
        its own; 'drop' leaves its row out (:func:`anonset.validate.apply_missing`,
        as msa and LGB; the metadata records ``missing``).
    missing_token : str
        The value of a missing cell under ``missing='category'``.

    Returns
    -------
    PartitionRelease
        ``table`` has one row per input row (keyed random order): each QID as
        its group's range (``v``, ``[a~b]`` or ``*``), the sensitive value,
        GID.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [25, 29, 54, 78, 20, 55, 56, 59],
    ...                    "sex": list("MMMMFFFF"),
    ...                    "disease": ["cancer", "cold", "cancer", "cold",
    ...                                "cold", "cut", "flu", "cut"]})
    >>> rel = mondrian(df, qids=["age", "sex"], sensitive="disease", l=2,
    ...                seed=4, research_seed=True)
    >>> rel.check()["ok"]
    True
    """
    p = prepare(data, qids=qids, sensitive=sensitive, l=l, other=other,
                identifiers=identifiers, drop=drop, domains=domains, seed=seed,
                research_seed=research_seed, keep_order=keep_order,
                allow_recode=allow_recode, allow_shared_id=allow_shared_id,
                allow_identifier=allow_identifier,
                allow_clear=allow_clear,
                missing=missing, missing_token=missing_token)
    d = len(p.domains[sensitive])
    by = p.canonical                    # the QIDs by name, not as listed (H111)
    group = mondrian_groups(p.qcodes[by], [len(p.domains[p.qids[a]]) for a in by], p.scodes,
                            d, p.l)
    n_groups = int(group.max()) + 1
    glo, ghi = group_ranges(p.qcodes, group, n_groups)
    table, _ = generalized_table(p, group, glo, ghi, "mondrian")
    info = {"method": "mondrian", "l": p.l, "groups": n_groups, **p.key.metadata(),
            "clear": p.clear, **p.shared_ids, "pass_through_risks": p.pass_through_risks,
            "missing": p.missing}
    return PartitionRelease("mondrian", p.l, p.qids, sensitive, p.domains, table, None, info,
                            group, glo, ghi, p.qcodes, p.scodes)
