"""Count queries and their mean squared error: the utility measure of paper
004 (Sec. 6.1, eq. 11-12), after Xiao & Tao's Anatomy (VLDB 2006, Sec. 6).

A query counts the rows with ``A_1 in b_1 and ... and A_q in b_q and S in
b_S``: ``q`` QIDs drawn at random, each predicate ``b_i`` a random set of
``ceil(|A_i| * s ** (1 / (q + 1)))`` values of its domain (eq. 12; a random
interval for an ordered attribute), and the same for the sensitive attribute
S, so that the query's expected selectivity is about ``s``.

Answers:

* the truth ``X`` and the number ``N`` of rows whose QIDs satisfy the
  predicate (the query's cell; paper 004 writes X_{i,j} and N_i);
* a generalization (Mondrian, TP): each group contributes its rows with S in
  b_S times the share of its QID box inside the predicate, under the uniform
  assumption of Xiao & Tao;
* Anatomy: each QIT row satisfying the QID predicate contributes its group's
  share of values in b_S (the ST);
* set-valued releases (paper 004's proposal): the rows satisfying the QID
  predicate (QIDs are exact) are one cell; the distribution of S in it is
  reconstructed by ``anonset.reconstruct`` (EM, its default stopping rule)
  from the counts of their published sets, and the estimate is the
  reconstructed count in b_S.

Error (eq. 11, our reading): the squared error of the fraction,
``((X - X_hat) / N) ** 2``, averaged over the queries with ``N > 0``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["CountQuery", "predicate_size", "random_queries", "match_rows", "answer_true",
           "answer_partition", "answer_sets", "query_mse"]


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
    """(X, N): the true answers and the sizes of the queries' QID cells."""
    X = np.zeros(len(queries))
    N = np.zeros(len(queries))
    for i, qu in enumerate(queries):
        r = match_rows(qcodes, qu) if rows is None else rows[i]
        N[i] = r.size
        X[i] = np.count_nonzero(qu.s_members[scodes[r]])
    return X, N


def answer_partition(rel, queries, rows=None) -> np.ndarray:
    """Estimated answers from a partition release (uniform assumption)."""
    ghist = rel.ghist.astype(np.float64)
    gsize = ghist.sum(axis=1)
    out = np.zeros(len(queries))
    for i, qu in enumerate(queries):
        hits = ghist @ qu.s_members.astype(np.float64)
        if rel.exact_qids:                         # Anatomy: QIT rows are exact
            r = match_rows(rel.qcodes, qu) if rows is None else rows[i]
            share = np.divide(hits, gsize, out=np.zeros_like(hits), where=gsize > 0)
            out[i] = share[rel.group[r]].sum()
            continue
        frac = np.ones(gsize.size)
        for a, m in zip(qu.attrs, qu.members):
            cum = np.concatenate([[0], np.cumsum(m)])
            lo, hi = rel.glo[:, a], rel.ghi[:, a]
            frac *= (cum[hi + 1] - cum[lo]) / (hi - lo + 1)
        out[i] = float(frac @ hits)
    return out


def _set_counts(mask: np.ndarray, rows: np.ndarray, d: int) -> np.ndarray:
    """How many of the rows' published sets hold each value (w of eq. 17)."""
    sub = np.ascontiguousarray(mask[rows])
    bits = np.unpackbits(sub.view(np.uint8), axis=1, bitorder="little")
    return bits[:, :d].sum(axis=0, dtype=np.int64)


def answer_sets(table, sensitive: str, qcodes: np.ndarray, queries, rows=None) -> np.ndarray:
    """Estimated answers from a set-valued release whose QIDs are exact (in
    ``qcodes``, the input row order of ``table``): EM per query cell."""
    from ...randomized.reconstruct import reconstruct
    mask = np.asarray(table.mask(sensitive))
    d = table.schema[sensitive].d
    out = np.zeros(len(queries))
    for i, qu in enumerate(queries):
        r = match_rows(qcodes, qu) if rows is None else rows[i]
        if r.size == 0:
            continue
        w = _set_counts(mask, r, d)
        est = reconstruct(table, [sensitive], "em", w=w).counts
        out[i] = float(est[qu.s_members].sum())
    return out


def query_mse(X, Xhat, N) -> float:
    """Eq. 11 over a workload: mean of ((X - X_hat) / N)^2 over the queries
    whose QID cell is not empty."""
    X, Xhat, N = (np.asarray(v, dtype=np.float64) for v in (X, Xhat, N))
    ok = N > 0
    if not ok.any():
        return float("nan")
    return float(np.mean(((X[ok] - Xhat[ok]) / N[ok]) ** 2))
