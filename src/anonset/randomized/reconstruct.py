"""Reconstruction of cross-tabulations from a SetTable (paper 000, Sec. V-D).

Methods
-------
'em'            the paper's EM, eq. 26-27, on the counts w of eq. 17, with the
                transition matrix delta (eq. 19/21) applied as a Kronecker
                product attribute by attribute.
'exact_em'      maximum likelihood by EM on each record's whole set tuple:
                P(sets | true cell alpha) = prod_j kappa_c or kappa_d
                (Sec. V-C3).  Costs N x prod(1 + eta_j) per iteration instead
                of |C| x sum d_j, and uses all the information in the sets.
'value_adding'  eq. 18.
'random'        the baseline of Sec. VI: N records placed uniformly at random.

Exact QIDs (paper 004) are attributes with p = 1, eta = 1: delta is the
identity along them, so the estimate is per QID cell.

Stopping rule (both EMs): stop after ``max_iter`` iterations, or as soon as
the largest change of any cell between two iterations, in records (after
eq. 27's division), is at most ``tol``.  CrossTab.info reports 'iterations'
and 'change'.
"""
from __future__ import annotations

import math
from itertools import product as _product

import numpy as np

from . import _kernels
from ..validate import check_threads as _threads
from .._typing import Names, Seed
from .crosstab import CrossTab
from .settable import SetTable

__all__ = ["reconstruct", "count_w", "METHODS"]

METHODS = ("em", "exact_em", "value_adding", "random")


from ..validate import check_attributes as _check_attrs, check_cells as _dims  # noqa: E402


def count_w(table: SetTable, attributes: Names, *, n_threads: int | None = None) -> np.ndarray:
    """w_m of eq. 17: how many records' product sets contain each cell."""
    attributes = _check_attrs(table, attributes)
    dims = _dims(table, attributes)
    max_set = math.prod(table.params[a].eta for a in attributes)
    return _kernels.count_w([table.mask(a) for a in attributes], dims, max_set,
                            n_threads=_threads(n_threads))


def transition_factors(table: SetTable, attributes):
    """Per attribute (a_j, b_j): delta's diagonal and off-diagonal (eq. 21)."""
    a = [table.params[x].inclusion for x in attributes]
    b = [table.params[x].other_inclusion for x in attributes]
    return a, b


def reconstruct(table: SetTable, attributes: Names, method: str = "em", *, max_iter: int = 2000,
                tol: float = 1e-6, n_threads: int | None = None, seed: Seed = None,
                w: np.ndarray | None = None) -> CrossTab:
    """Estimate the counts x_m over the chosen attributes.

    Parameters
    ----------
    table : SetTable
    attributes : list of str
        S', the q' >= 1 attributes to cross-tabulate (sensitive or exact).
    method : {'em', 'exact_em', 'value_adding', 'random'}
    max_iter, tol : EM stopping rule (see the module docstring); ``tol`` is
        in records.
    n_threads : kernel threads (the estimate does not depend on it).
    seed : seed of the 'random' baseline.
    w : precomputed counts of eq. 17 (for 'em' and 'value_adding').

    Returns
    -------
    CrossTab

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xyzxyzxx"), "b": list("uvuvuvuv")})
    >>> pub = anonset.publish(df, anonset.Diversity({"a": 2, "b": 1}), seed=3)
    >>> ct = anonset.reconstruct(pub, ["a"], "em")
    >>> round(ct.total, 6)
    8.0
    """
    from ..validate import check_choice
    check_choice(method, "method", METHODS)
    _check_stopping(max_iter, tol)
    max_iter = int(max_iter)
    attributes = _check_attrs(table, attributes)
    dims = _dims(table, attributes)
    N = table.n_rows
    domains = tuple(table.schema[a].domain for a in attributes)
    nt = _threads(n_threads)
    if method == "random":
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(N, np.full(math.prod(dims), 1.0 / math.prod(dims)))
        return CrossTab(tuple(attributes), domains, counts.reshape(dims).astype(np.float64),
                        "random", {"seeded": seed is not None})
    if method == "exact_em":
        x, info = _exact_em(table, attributes, dims, max_iter, tol, nt)
        return CrossTab(tuple(attributes), domains, x, "exact_em", info)
    if w is None:
        w = count_w(table, attributes, n_threads=n_threads)
    w = np.asarray(w)
    if w.shape != tuple(dims):
        raise ValueError(f"w has shape {w.shape}, expected {tuple(dims)}")
    eta_prod = math.prod(table.params[a].eta for a in attributes)
    if method == "value_adding":
        return CrossTab(tuple(attributes), domains, value_adding(table, attributes, w),
                        "value_adding", {})
    a, b = transition_factors(table, attributes)
    x, iters, change = _kernels.em_kron(w.astype(np.float64), w.astype(np.float64), dims,
                                        [None] * len(dims), a, b, max_iter, tol * eta_prod,
                                        n_threads=nt)
    x = x / eta_prod                                   # eq. 27
    return CrossTab(tuple(attributes), domains, x, "em",
                    {"iterations": iters, "change": change / eta_prod, "max_iter": max_iter,
                     "tol": tol, "converged": change / eta_prod <= tol})


def value_adding(table: SetTable, attributes, w: np.ndarray) -> np.ndarray:
    """Eq. 18."""
    N = table.n_rows
    P = math.prod(table.params[a].inclusion for a in attributes)
    eta_prod = math.prod(table.params[a].eta for a in attributes)
    ncells = w.size
    x = w * (P / eta_prod)
    if ncells > eta_prod:
        x = x + (N - w) * ((1.0 - P) / (ncells - eta_prod))
    return x.astype(np.float64)


# ---------------------------------------------------------------- exact EM
def _patterns(table: SetTable, attributes):
    """Distinct set tuples over the attributes, with their multiplicities."""
    masks = [np.asarray(table.mask(a)) for a in attributes]
    stacked = np.concatenate(masks, axis=1)
    uniq, inverse, counts = np.unique(stacked, axis=0, return_inverse=True, return_counts=True)
    out, col = [], 0
    for a, m in zip(attributes, masks):
        out.append(np.ascontiguousarray(uniq[:, col:col + m.shape[1]]))
        col += m.shape[1]
    return out, counts.astype(np.float64)


def likelihood_ratio(p: float, eta: int, d: int) -> float:
    """u = kappa_d / kappa_c = (1-p) eta / (p d + (1-p) eta)."""
    den = p * d + (1.0 - p) * eta
    return (1.0 - p) * eta / den if den > 0 else 1.0


def _exact_em(table: SetTable, attributes, dims, max_iter, tol, nt):
    pmasks, weight = _patterns(table, attributes)
    return exact_em_patterns([table.params[a] for a in attributes], dims, table.n_rows,
                             pmasks, weight, max_iter=max_iter, tol=tol, n_threads=nt)


def exact_em_patterns(params, dims, N: int, pmasks, weight, *, max_iter: int = 2000,
                      tol: float = 1e-6, n_threads=0):
    """The exact-likelihood EM on distinct set tuples.

    Parameters
    ----------
    params : list of AttributeParams, one per attribute
    dims : domain sizes
    N : number of records
    pmasks : list of (U, words) bitmask arrays: the distinct set tuples
    weight : (U,) how many records share each tuple (mergeable across chunks
        and partitions: sum the counts of identical tuples)

    Returns
    -------
    (counts, info): the estimate in records, shape dims, and the EM report.
    """
    q = len(params)
    nt = n_threads or 0
    members = [_kernels.members(m, d, par.eta, n_threads=nt)
               for m, d, par in zip(pmasks, dims, params)]
    # P(set_j | alpha_j) / kappa_c = u_j + (1 - u_j) [alpha_j in set_j]; expand
    # the product over attributes into subsets S (attributes where the
    # indicator term is taken): coefficient prod_{j not in S} u_j prod_{j in S} (1-u_j).
    u = [likelihood_ratio(par.p, par.eta, d) for par, d in zip(params, dims)]
    subsets, coefs = [], []
    for bits in _product((0, 1), repeat=q):
        s = sum(1 << j for j in range(q) if bits[j])
        c = math.prod((1.0 - u[j]) if bits[j] else u[j] for j in range(q))
        if c > 0.0:
            subsets.append(s)
            coefs.append(c)
    U = len(weight)
    ncells = math.prod(dims)
    per_chunk = sum(math.prod(dims[j] for j in range(q) if (s >> j) & 1) for s in subsets)
    nchunk = int(max(1, min(64, U // 2048, (256 << 20) // (8 * per_chunk))))
    pi = np.full(dims, 1.0 / ncells)
    iters, change, ll = 0, math.inf, math.nan
    axes_all = tuple(range(q))
    for iters in range(1, max_iter + 1):
        margs = []
        for s in subsets:
            drop = tuple(j for j in axes_all if not (s >> j) & 1)
            margs.append(pi.sum(axis=drop) if drop else pi)
        accs, ll = _kernels.exact_estep(members, dims, weight, subsets, coefs, margs,
                                        nchunk, n_threads=nt)
        g = np.zeros(dims)
        for s, acc in zip(subsets, accs):
            shape = [dims[j] if (s >> j) & 1 else 1 for j in range(q)]
            g += acc.reshape(shape)
        new = pi * g / N
        change = float(np.abs(new - pi).max()) * N
        pi = new
        if change <= tol:
            break
    info = {"iterations": iters, "change": change, "max_iter": max_iter, "tol": tol,
            "converged": change <= tol, "loglik": ll, "patterns": U}
    return pi * N, info


# ------------------------------------------------------ counts of blocks
class PatternCounter:
    """Distinct set tuples over q' attributes with their multiplicities,
    merged block by block (chunks of a file, partitions of a Dask frame).  The
    merged result is what the exact EM computes from the whole table: the same
    tuples in the same (np.unique) order, with the same counts."""

    def __init__(self, widths):
        self.widths = list(widths)
        self._parts = []

    def add_masks(self, masks):
        stacked = np.concatenate([np.asarray(m, dtype=np.uint64).reshape(len(m), -1)
                                  for m in masks], axis=1)
        uniq, cnt = np.unique(stacked, axis=0, return_counts=True)
        self.add_patterns(uniq, cnt)

    def add_patterns(self, uniq, counts):
        self._parts.append((np.asarray(uniq, dtype=np.uint64), np.asarray(counts, dtype=np.int64)))
        if len(self._parts) > 8:
            self._merge()

    def merge(self, other: "PatternCounter") -> "PatternCounter":
        self._parts.extend(other._parts)
        self._merge()
        return self

    def _merge(self):
        if len(self._parts) <= 1:
            return
        allu = np.concatenate([u for u, _ in self._parts], axis=0)
        allc = np.concatenate([c for _, c in self._parts])
        uniq, inv = np.unique(allu, axis=0, return_inverse=True)
        cnt = np.bincount(inv.ravel(), weights=allc, minlength=len(uniq)).astype(np.int64)
        self._parts = [(uniq, cnt)]

    def result(self):
        """(list of per-attribute pattern masks, float64 counts)."""
        self._merge()
        if not self._parts:
            raise ValueError("no rows")
        uniq, cnt = self._parts[0]
        out, col = [], 0
        for w in self.widths:
            out.append(np.ascontiguousarray(uniq[:, col:col + w]))
            col += w
        return out, cnt.astype(np.float64)


def estimate_from_counts(header, attributes, method, *, w=None, patterns=None,
                         max_iter: int = 2000, tol: float = 1e-6, n_threads=None,
                         seed=None) -> CrossTab:
    """Finish a reconstruction from counts merged over blocks: ``w`` (eq. 17)
    for 'em' and 'value_adding', ``patterns`` = (pattern masks, counts) for
    'exact_em'.  ``header`` is a SetTable or anything with its schema,
    params, n_rows and names.  The estimate equals :func:`reconstruct` on the
    whole table."""
    if method != "exact_em":
        return reconstruct(header, attributes, method, max_iter=max_iter, tol=tol,
                           n_threads=n_threads, seed=seed, w=w)
    attributes = _check_attrs(header, attributes)
    dims = _dims(header, attributes)
    _check_stopping(max_iter, tol)
    pm, weight = patterns
    counts, info = exact_em_patterns([header.params[a] for a in attributes], dims,
                                     header.n_rows, pm, weight, max_iter=max_iter, tol=tol,
                                     n_threads=_threads(n_threads))
    return CrossTab(tuple(attributes), tuple(header.schema[a].domain for a in attributes),
                    counts, "exact_em", info)


def _check_stopping(max_iter, tol) -> None:
    from ..validate import InputError, check_int
    check_int(max_iter, "max_iter", minimum=0)
    if not (tol >= 0):
        raise InputError(f"got {tol!r}", param="tol", expected="a number >= 0")
