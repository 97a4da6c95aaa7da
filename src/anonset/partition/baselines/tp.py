"""TP: the l-diverse generalization of Xiao, Yi & Tao ("The hardness and
approximation algorithms for l-diversity", EDBT 2010), the third baseline of
paper 004 (Sec. 6; its reference [17], which also supplies the eligibility
requirement of Sec. 5.4 and, with Anatomy [16], the OCC / SAL data).

Identification: paper 004 names TP beside Mondrian as a method that
generalizes QIDs, cites [17] for the eligibility requirement, and takes its
experimental set-up (OCC-d / SAL-d, count queries of selectivity s) from
[16] and [17].  Xiao, Yi & Tao's algorithm works in the suppression model
(a QID of a group is either kept, when all its rows agree, or replaced by
``*``) and has three phases; the full text is not in our reference set, so
this module implements the structure of their (l*d)-approximation as we read
it, and docs/results/004 says so:

1. **exact groups** -- rows that share all their QIDs (a *point*) are
   grouped with Anatomy's group creation within the point: these groups keep
   every QID (no information loss);
2. **eligibility repair** -- the rows left over must themselves be
   l-eligible; while their most frequent value exceeds 1/l of them, an exact
   group lacking that value (keyed random choice) is dissolved into them;
3. **suppressed groups** -- the left-over rows are partitioned by l-diverse
   Mondrian cuts (relaxed: when the median cut is not allowable, ranks
   around it are tried, :data:`TRIES` per attribute), and each such group
   keeps a QID only where its rows agree (``*`` elsewhere).

Guarantee: every group frequency l-diverse (>= l rows), as Mondrian's and
Anatomy's; the table must be l-eligible.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...io.keys import derive_key, shuffled_order
from . import _baselines
from ._common import PartitionRelease, generalized_table, group_ranges, prepare
from .mondrian import mondrian_groups

__all__ = ["tp"]

#: Cut ranks tried per attribute in phase 3 (the left-over rows are often
#: l-eligible only just, which blocks median cuts).  Measured: on the OCC-7
#: stand-in (100,000 rows, l = 10) and on Adult with occupation sensitive
#: (l = 5) it gives the same groups as the median cut alone (1).
TRIES = 8


def _exact_groups(qcodes: np.ndarray, scodes: np.ndarray, d: int, l: int, key: bytes):
    """Phase 1: Anatomy's groups within each QID point; -1 for left-over rows."""
    n = scodes.size
    perm = shuffled_order(derive_key(key, "tp-rows"), n)
    dims = qcodes.max(axis=1).astype(np.int64) + 1 if qcodes.shape[0] else np.zeros(0, np.int64)
    if qcodes.shape[0] and np.prod(dims.astype(float)) < 2.0 ** 62:
        # one int64 key per point (same lexicographic order as unique(axis=0))
        point = np.unique(np.ravel_multi_index(tuple(qcodes.astype(np.int64)), tuple(dims)),
                          return_inverse=True)[1].ravel()
    elif qcodes.shape[0]:
        point = np.unique(qcodes.T, axis=0, return_inverse=True)[1].ravel()
    else:
        point = np.zeros(n, dtype=np.int64)
    order = perm[np.argsort(point[perm], kind="stable")]   # points contiguous, keyed inside
    bounds = np.flatnonzero(np.diff(point[order])) + 1
    seg = np.concatenate([[0], bounds, [n]]).astype(np.int64)
    pos_group, n_groups = _baselines.diverse_groups(seg, np.ascontiguousarray(scodes[order],
                                                                              np.int32), d, l)
    group = np.empty(n, dtype=np.int64)
    group[order] = pos_group
    return group, n_groups


def _repair(group: np.ndarray, n_groups: int, scodes: np.ndarray, d: int, l: int,
            key: bytes) -> np.ndarray:
    """Phase 2: dissolve exact groups into the left-over rows until those
    are l-eligible.  Returns the new group array (dissolved rows: -1)."""
    group = group.copy()
    left = group < 0
    cnt = np.bincount(scodes[left], minlength=d)
    size = int(left.sum())
    if size == 0 or cnt.max() * l <= size:
        return group
    placed = ~left
    # groups_of[v]: the groups holding value v (sorted pairs, no groups x d table)
    pair = np.unique(scodes[placed].astype(np.int64) * n_groups + group[placed])
    starts_v = np.searchsorted(pair // n_groups, np.arange(d + 1))
    alive = np.ones(n_groups, dtype=bool)
    rng = np.random.default_rng(np.frombuffer(derive_key(key, "tp-repair"), dtype=np.uint32))
    by = np.where(placed, group, n_groups)          # left-over rows sort last
    members = np.argsort(by, kind="stable")
    starts = np.searchsorted(by[members], np.arange(n_groups + 1))
    while cnt.max() * l > size:
        top = int(cnt.argmax())
        lacks = alive.copy()
        lacks[pair[starts_v[top]:starts_v[top + 1]] % n_groups] = False
        cand = np.flatnonzero(lacks)
        if cand.size == 0:              # impossible for an l-eligible table
            raise ValueError("TP: the left-over rows cannot be made l-eligible")
        g = int(cand[rng.integers(cand.size)])
        alive[g] = False
        rows = members[starts[g]:starts[g + 1]]
        group[rows] = -1
        cnt += np.bincount(scodes[rows], minlength=d)
        size += rows.size
    return group


def tp(data: pd.DataFrame, *, qids: Sequence[str], sensitive: str, l: int,
       other: Sequence[str] = (), identifiers: Sequence[str] = (), drop: Sequence[str] = (),
       domains: Mapping[str, Sequence] | None = None, seed=None,
       research_seed: bool = False, keep_order: bool = False,
       allow_recode: Sequence[str] = (),
       allow_shared_id: Sequence[str] = (),
       allow_identifier: Sequence[str] = (),
       allow_clear: Sequence[str] = (), missing: str | None = None,
       missing_token: str = "?") -> PartitionRelease:
    """Publish a table by TP (exact groups, eligibility repair, suppressed
    groups; see the module docstring).

    Parameters and return value as :func:`anonset.partition.baselines.mondrian`;
    a QID of a suppressed group is published as ``*``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 30, 30, 30, 41, 52, 63, 74],
    ...                    "sex": list("MMMMFFFF"),
    ...                    "disease": ["flu", "cold", "flu", "cut",
    ...                                "cold", "cut", "flu", "cold"]})
    >>> rel = tp(df, qids=["age", "sex"], sensitive="disease", l=2,
    ...          seed=4, research_seed=True)
    >>> rel.check()["ok"], rel.info["exact_groups"] >= 1
    (True, True)
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
    group, n_exact = _exact_groups(p.qcodes[by], p.scodes, d, p.l, p.key.key)
    group = _repair(group, n_exact, p.scodes, d, p.l, p.key.key)
    kept = np.unique(group[group >= 0])
    renum = np.full(n_exact + 1, -1, dtype=np.int64)
    renum[kept] = np.arange(kept.size)
    group = renum[group]                 # -1 (left over) maps to renum[-1] = -1
    rest = np.flatnonzero(group < 0)
    n_groups = kept.size
    if rest.size:
        sub = mondrian_groups(p.qcodes[by], [len(p.domains[p.qids[a]]) for a in by],
                              p.scodes, d, p.l, rows=rest, tries=TRIES)
        group[rest] = n_groups + sub
        n_groups += int(sub.max()) + 1
    glo, ghi = group_ranges(p.qcodes, group, n_groups)
    # suppression model: a QID a group's rows disagree on becomes '*'
    for a, c in enumerate(p.qids):
        cut = glo[:, a] != ghi[:, a]
        glo[cut, a] = 0
        ghi[cut, a] = len(p.domains[c]) - 1
    table, _ = generalized_table(p, group, glo, ghi, "tp")
    info = {"method": "tp", "l": p.l, "groups": int(n_groups), "exact_groups": int(kept.size),
            "suppressed_groups": int(n_groups - kept.size), "rows_in_exact_groups":
            int(p.n - rest.size), **p.key.metadata(), "clear": p.clear, **p.shared_ids,
            "pass_through_risks": p.pass_through_risks, "missing": p.missing}
    return PartitionRelease("tp", p.l, p.qids, sensitive, p.domains, table, None, info, group,
                            glo, ghi, p.qcodes, p.scodes)
