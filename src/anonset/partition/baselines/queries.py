"""Count queries and their mean squared error: the utility measure of paper
004 (Sec. 6.1, eq. 11-12), after Xiao & Tao's Anatomy (VLDB 2006, Sec. 6).

A query counts the rows with ``A_1 in b_1 and ... and A_q in b_q and S in
b_S``: ``q`` QIDs drawn at random, each predicate ``b_i`` a random set of
``ceil(|A_i| * s ** (1 / (q + 1)))`` values of its domain (eq. 12; a random
interval for an ordered attribute), and the same for the sensitive attribute
S, so that the query's expected selectivity is about ``s``.

Answers:

* the truth ``X_j`` for each value j of b_S and the number ``N`` of rows
  whose QIDs satisfy the predicate (the query's cell; paper 004 writes
  X_{i,j} and N_i);
* a generalization (Mondrian, TP): each group contributes its rows with S in
  b_S times the share of its QID box inside the predicate, under the uniform
  assumption of Xiao & Tao;
* Anatomy: each QIT row satisfying the QID predicate contributes its group's
  share of values in b_S (the ST);
* set-valued releases (paper 004's proposal): the rows satisfying the QID
  predicate (QIDs are exact) are one cell; the distribution of S in it is
  reconstructed by ``anonset.reconstruct`` (EM, its default stopping rule)
  from the counts of their published sets, and the estimate is the
  reconstructed count of each value of b_S.

Error (eq. 11, :func:`query_mse`): by default the mean squared error of the
cell's fractions X_j / N over the values of b_S (``reading='value'``; it
gives the magnitudes of the paper's figures), or of the whole count's
fraction (``reading='count'``); averaged over the queries with ``N > 0``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["CountQuery", "predicate_size", "random_queries", "match_rows", "answer_true",
           "answer_partition", "box_weights", "answer_sets", "SetAnswers", "query_mse"]


@dataclass(frozen=True)
class CountQuery:
    """One count query: the queried QIDs (indices), a membership mask over
    each one's domain, and one over the sensitive domain."""
    attrs: tuple
    members: tuple
    s_members: np.ndarray


def predicate_size(d: int, q: int, s: float) -> int:
    """|b_i| of eq. 12: ``ceil(d * s ** (1 / (q + 1)))``, at least 1, at most d."""
    return int(min(d, max(1, math.ceil(d * s ** (1.0 / (q + 1))))))


def _predicate(d: int, size: int, ordered: bool, rng) -> np.ndarray:
    m = np.zeros(d, dtype=bool)
    if ordered:
        start = int(rng.integers(0, d - size + 1))
        m[start:start + size] = True
    else:
        m[rng.choice(d, size=size, replace=False)] = True
    return m


def random_queries(dom: Sequence[int], d_s: int, q: int, s: float, n_queries: int, *,
                   ordered: Sequence[bool] | None = None, ordered_s: bool = False,
                   seed=0) -> list:
    """``n_queries`` random count queries over ``q`` of the QIDs (domain
    sizes ``dom``) and the sensitive attribute (``d_s`` values) with
    selectivity ``s`` (eq. 12).  ``ordered[i]``: QID i takes interval
    predicates."""
    if not 1 <= q <= len(dom):
        raise ValueError(f"q must be in 1..{len(dom)}, got {q}")
    if not 0 < s <= 1:
        raise ValueError(f"s must be in (0, 1], got {s}")
    ordered = list(ordered) if ordered is not None else [False] * len(dom)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_queries):
        attrs = tuple(sorted(rng.choice(len(dom), size=q, replace=False).tolist()))
        members = tuple(_predicate(dom[a], predicate_size(dom[a], q, s), ordered[a], rng)
                        for a in attrs)
        s_mem = _predicate(d_s, predicate_size(d_s, q, s), ordered_s, rng)
        out.append(CountQuery(attrs, members, s_mem))
    return out


def match_rows(qcodes: np.ndarray, query: CountQuery) -> np.ndarray:
    """Indices of the rows whose QIDs satisfy the query's predicate."""
    mask = None
    for a, m in zip(query.attrs, query.members):
        hit = m[qcodes[a]]
        mask = hit if mask is None else (mask & hit)
    return np.flatnonzero(mask)


def answer_true(qcodes: np.ndarray, scodes: np.ndarray, queries, rows=None) -> tuple:
    """(X, N): per query, the true count of each value of b_S (in domain
    order) among the rows of the QID cell, and the cell's size."""
    X, N = [], np.zeros(len(queries))
    for i, qu in enumerate(queries):
        r = match_rows(qcodes, qu) if rows is None else rows[i]
        N[i] = r.size
        X.append(np.bincount(scodes[r], minlength=qu.s_members.size)[qu.s_members]
                 .astype(np.float64))
    return X, N


def _per_value(rel, qu, weight_of_group) -> np.ndarray:
    """sum over the rows with S in b_S of their group's weight, by value
    (each value's rows are summed in row order)."""
    return np.bincount(rel.scodes, weights=weight_of_group[rel.group],
                       minlength=qu.s_members.size)[qu.s_members]


def answer_partition(rel, queries, rows=None) -> list:
    """Estimated count of each value of b_S in each query's cell, from a
    partition release (Xiao & Tao's uniform assumption)."""
    gsize = rel.group_sizes.astype(np.float64)
    out = []
    for i, qu in enumerate(queries):
        if rel.exact_qids:                         # Anatomy: QIT rows are exact
            r = match_rows(rel.qcodes, qu) if rows is None else rows[i]
            in_cell = np.bincount(rel.group[r], minlength=gsize.size)
            weight = np.divide(in_cell, gsize, out=np.zeros_like(gsize), where=gsize > 0)
        else:
            weight = box_weights(rel, qu)
        out.append(_per_value(rel, qu, weight))
    return out


def box_weights(rel, qu: CountQuery) -> np.ndarray:
    """Share of each group's box (a generalization's published QID ranges)
    inside the query's QID predicate: Xiao & Tao's uniform assumption."""
    weight = np.ones(rel.n_groups)
    for a, m in zip(qu.attrs, qu.members):
        cum = np.concatenate([[0], np.cumsum(m)])
        lo, hi = rel.glo[:, a], rel.ghi[:, a]
        weight *= (cum[hi + 1] - cum[lo]) / (hi - lo + 1)
    return weight


class SetAnswers:
    """Answers from a set-valued release whose QIDs are exact: the members of
    every row's published set are listed once (n x eta), so a query's w
    (eq. 17) is one bincount over its rows, then EM (``anonset.reconstruct``
    with its default stopping rule) on that cell."""

    def __init__(self, table, sensitive: str):
        from ...randomized import _kernels
        self.table, self.sensitive = table, sensitive
        self.d = table.schema[sensitive].d
        self.members = _kernels.members(table.mask(sensitive), self.d,
                                        table.params[sensitive].eta)

    def w(self, rows: np.ndarray) -> np.ndarray:
        """How many of the rows' published sets hold each value."""
        return np.bincount(self.members[rows].ravel(), minlength=self.d)

    def answer(self, qu: CountQuery, rows: np.ndarray) -> np.ndarray:
        return self.answer_w(qu, self.w(rows), rows.size)

    def answer_w(self, qu: CountQuery, w: np.ndarray, n_rows: int) -> np.ndarray:
        """The answer from the cell's counts ``w`` and its size."""
        from ...randomized.reconstruct import em_of_w
        if n_rows == 0:
            return np.zeros(int(qu.s_members.sum()))
        if self.table.params[self.sensitive].says_nothing:
            # sets that are the whole domain (l = |S| in paper 004's grids):
            # the method's answer is the EM's starting point, the uniform
            # split, which anonset.reconstruct refuses to present as data
            return np.full(self.d, n_rows / self.d)[qu.s_members]
        est = em_of_w(self.table, [self.sensitive], w)      # the cell's rows only
        return est[qu.s_members]


def answer_sets(table, sensitive: str, qcodes: np.ndarray, queries, rows=None) -> list:
    """Estimated count of each value of b_S in each query's cell, from a
    set-valued release whose QIDs are exact (``qcodes``, in the row order of
    ``table``): EM per query cell."""
    sa = SetAnswers(table, sensitive)
    return [sa.answer(qu, match_rows(qcodes, qu) if rows is None else rows[i])
            for i, qu in enumerate(queries)]


def query_mse(X, Xhat, N, reading: str = "value") -> float:
    """Eq. 11 over a workload, averaged over the queries whose QID cell is
    not empty.  ``X``, ``Xhat``: per query, counts of the values of b_S.

    * ``'value'`` (default): the mean over the values j of b_S of
      ``(X_j / N - X_hat_j / N) ** 2`` -- eq. 11 with the cell's
      distribution of S, over the values the query names;
    * ``'count'``: ``((sum X - sum X_hat) / N) ** 2``, the error of the
      count query's answer as a share of the cell.
    """
    if reading not in ("value", "count"):
        raise ValueError(f"reading must be 'value' or 'count', got {reading!r}")
    errs = []
    for x, xh, n in zip(X, Xhat, N):
        if n <= 0:
            continue
        x, xh = np.asarray(x, dtype=np.float64), np.asarray(xh, dtype=np.float64)
        errs.append(np.mean(((x - xh) / n) ** 2) if reading == "value"
                    else ((x.sum() - xh.sum()) / n) ** 2)
    return float(np.mean(errs)) if errs else float("nan")
