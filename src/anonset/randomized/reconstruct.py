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

Stopping rule (both EMs; emdrive.py, docs/algorithms.md "EM stopping rule"):
stop when the log-likelihood the EM maximizes gains at most ``tol_ll`` per
EM update and per counted cell (paper EM: the Poisson likelihood of w) or
per record (exact EM); or when no cell moves by more than ``tol`` records
(default 1e-6; 0: not used); ``max_iter`` EM updates are a safety cap.  By default the EMs
are accelerated by SQUAREM (same fixed points, far fewer updates).
CrossTab.info reports 'iterations' (EM updates), 'change', 'loglik',
'gain', 'converged' and 'stopped' (which rule).
"""
from __future__ import annotations

import math
from itertools import permutations, product as _product

import numpy as np

from . import _kernels
from . import emdrive
from ..validate import InputError, check_threads as _threads
from .._typing import Names, Seed
from .crosstab import ConvergenceWarning, CrossTab, warn_unconverged
from .settable import SetTable
from .uncertainty import bootstrap_se, check_replicates

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


def reconstruct(table: SetTable, attributes: Names, method: str = "em", *,
                max_iter: int = emdrive.MAX_ITER, tol: float = 1e-6,
                n_threads: int | None = None, seed: Seed = None, w: np.ndarray | None = None,
                tol_ll: float | None = None, accelerate: bool = True,
                standard_errors: int | None = None) -> CrossTab:
    """Estimate the counts x_m over the chosen attributes.

    Parameters
    ----------
    table : SetTable
    attributes : list of str
        S', the q' >= 1 attributes to cross-tabulate (sensitive or exact).
    method : {'em', 'exact_em', 'value_adding', 'random'}
    max_iter : safety cap on EM updates (reported as not converged).
    tol : also stop when no cell moves by more than ``tol`` records in an
        update (0: not used; on Adult the log-likelihood rule always stops
        first at the defaults).
    tol_ll : stop when the EM's log-likelihood gains at most ``tol_ll`` per
        update and per counted cell (em) or record (exact_em); 0: not used;
        None: the method's default (1e-14 for em, 1e-10 for exact_em), which
        converges (docs/algorithms.md, "EM stopping rule").
    accelerate : SQUAREM acceleration of the EMs (same fixed point).
    n_threads : kernel threads (the estimate does not depend on it).
    seed : seed of the 'random' baseline.
    w : precomputed counts of eq. 17 (for 'em' and 'value_adding').
    standard_errors : int, optional
        B, from 2 to 10,000: also estimate each cell's standard error by a
        parametric bootstrap of B replicates (``CrossTab.se``, the column
        ``se`` of ``to_frame()``): B releases of the estimate, drawn with
        this release's parameters under throwaway keys from the operating
        system, reconstructed by the same method and stopping rule
        (:func:`anonset.randomized.uncertainty.bootstrap_se`; it costs B
        reconstructions).  It measures the noise of the randomization, not
        the bias of the estimator (docs/algorithms.md, "Standard errors").

    Returns
    -------
    CrossTab

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xyzxyzxx"), "b": list("uvuvuvuv")})
    >>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], drop=["b"])
    >>> ct = anonset.reconstruct(pub, ["a"], "em")
    >>> round(ct.total, 6), ct.info["converged"]
    (8.0, True)
    """
    from ..validate import (check_choice, check_informative, check_reconstructable,
                            check_settable)
    check_settable(table)
    check_choice(method, "method", METHODS)
    check_reconstructable(table)
    _check_stopping(max_iter, tol, tol_ll, accelerate)
    replicates = check_replicates(standard_errors)
    max_iter = int(max_iter)
    if tol_ll is None:
        tol_ll = emdrive.TOL_LL.get(method, 0.0)
    attributes = _check_attrs(table, attributes)
    check_informative(table, attributes)
    dims = _dims(table, attributes)
    N = table.n_rows
    domains = tuple(table.schema[a].domain for a in attributes)
    nt = _threads(n_threads)
    rule = {"max_iter": max_iter, "tol": float(tol), "tol_ll": float(tol_ll),
            "accelerate": bool(accelerate), "n_threads": nt}
    if method == "random":
        from ..validate import check_sampling_seed
        rng = np.random.default_rng(check_sampling_seed(seed))
        counts = rng.multinomial(N, np.full(math.prod(dims), 1.0 / math.prod(dims)))
        return with_se(CrossTab(tuple(attributes), domains,
                                counts.reshape(dims).astype(np.float64), "random",
                                {"seeded": seed is not None}), table, replicates, rule)
    if method == "exact_em":
        x, info = _exact_em(table, attributes, dims, **rule)
        return with_se(warn_unconverged(CrossTab(tuple(attributes), domains, x, "exact_em",
                                                 info)), table, replicates, rule)
    if w is None:
        w = count_w(table, attributes, n_threads=n_threads)
    w = np.asarray(w)
    if w.shape != tuple(dims):
        raise InputError(f"has shape {w.shape}", param="w",
                         expected=f"the shape {tuple(dims)} of the attributes' domains "
                                  "(count_w's result for them)")
    eta_prod = math.prod(table.params[a].eta for a in attributes)
    _check_w(w, table.n_rows, eta_prod)
    if method == "value_adding":
        return with_se(CrossTab(tuple(attributes), domains, value_adding(table, attributes, w),
                                "value_adding", {}), table, replicates, rule)
    a, b = transition_factors(table, attributes)
    x, info = paper_em(w, dims, a, b, eta_prod, **rule)
    return with_se(warn_unconverged(CrossTab(tuple(attributes), domains, x, "em", info)),
                   table, replicates, rule)


def with_se(ct: CrossTab, header, replicates: int | None, rule: dict) -> CrossTab:
    """``ct`` with its standard errors (``ct.se``, ``ct.info['se']``) from
    ``replicates`` bootstrap replicates, or as it is for None."""
    if replicates is None:
        return ct
    se, report = bootstrap_se(header, ct.attributes, ct.method, ct.counts, replicates,
                              **rule)
    if report["not_converged"]:
        import warnings
        warnings.warn(ConvergenceWarning(
            f"{ct.method}: {report['not_converged']} of {replicates} bootstrap replicates "
            "stopped at the cap of EM updates unconverged, so the standard errors hold "
            "where they stopped; raise the cap (max_iter=, --max-iter)"), stacklevel=3)
    ct.se = se
    ct.info["se"] = report
    return ct


def em_of_w(table, attributes, w=None) -> np.ndarray:
    """Eq. 26-27 at reconstruct's default stopping rule on eq. 17's counts
    ``w`` of some of the table's rows (a query's cell in paper 004's
    workloads, the audit's marginal of a release whatever it claims): the
    estimate sums to those rows.  ``reconstruct(..., w=)`` takes the whole
    table's counts only (another release's gave its estimate as this
    table's, H47)."""
    attributes = list(attributes)
    dims = _dims(table, attributes)
    if w is None:                                   # the whole table's
        w = count_w(table, attributes)
    a, b = transition_factors(table, attributes)
    eta_prod = math.prod(table.params[x].eta for x in attributes)
    x, _ = paper_em(np.asarray(w), dims, a, b, eta_prod, max_iter=emdrive.MAX_ITER, tol=1e-6,
                    tol_ll=emdrive.TOL_LL["em"], accelerate=True, n_threads=_threads(None))
    return x


def _check_w(w, n_rows: int, eta_prod: int) -> None:
    """Eq. 17's counts of this table: whole numbers >= 0 that sum to
    N * prod(eta) (each record's product set holds prod(eta) cells).  Counts
    of another release, or negative, NaN or text ones, gave a 'converged'
    estimate of another table (H47)."""
    if w.dtype == bool or not np.issubdtype(w.dtype, np.number):
        raise InputError(f"holds {w.dtype} values", param="w",
                         expected="eq. 17's counts, whole numbers >= 0 (count_w's result)")
    wf = w.astype(np.float64, copy=False)
    if not np.isfinite(wf).all() or (wf < 0).any() or (wf != np.floor(wf)).any():
        raise InputError("holds a count that is negative, fractional or not a number",
                         param="w", expected="eq. 17's counts, whole numbers >= 0 "
                                             "(count_w's result)")
    total, want = float(wf.sum()), float(n_rows) * eta_prod
    if total != want:
        raise InputError(f"sums to {total:,.0f}, but this table's {n_rows:,} records' product "
                         f"sets hold {want:,.0f} cells ({n_rows:,} x {eta_prod})", param="w",
                         expected="count_w's result for this table and these attributes "
                                  "(not another release's)")


def paper_em(w, dims, a, b, eta_prod: float, *, max_iter: int, tol: float, tol_ll: float,
             accelerate: bool, n_threads: int):
    """Eq. 26-27 from x^0 = w, driven by emdrive: returns (x / eta_prod, info).

    The kernel runs on the axes sorted by size (the largest last: its mode
    products are then the longest contiguous runs); the result is put back."""
    dims = [int(v) for v in dims]
    order = sorted(range(len(dims)), key=lambda j: (dims[j], j))
    back = np.argsort(order)
    ws = np.ascontiguousarray(np.transpose(np.asarray(w, dtype=np.float64), order))
    ds = [dims[j] for j in order]
    as_, bs = [a[j] for j in order], [b[j] for j in order]
    mats = [None] * len(ds)
    scratch = np.empty(3 * ws.size)          # reused by every update

    def step(x, nt, ll=True):
        nx, rep = _kernels.em_kron(ws, x, ds, mats, as_, bs, 1, 0.0, nt, ll_every=int(ll),
                                   report=True, scratch=scratch)
        return nx, rep["loglik"]

    choice = emdrive.ThreadChoice(n_threads, _kernels.em_threads(ws.size, n_threads) > 1)
    run = emdrive.run_squarem if accelerate else emdrive.run_plain
    x, info = run(step, ws, scale=max(float(ws.sum()), 1.0), tol=tol * eta_prod,
                  tol_ll=tol_ll, max_iter=max_iter, choice=choice)
    info["change"] = info["change"] / eta_prod
    info["tol"] = tol
    x = np.ascontiguousarray(np.transpose(x, back)) / eta_prod       # eq. 27
    return x, info


def value_adding(table: SetTable, attributes, w: np.ndarray) -> np.ndarray:
    """Eq. 18, in each cell of the attributes published as they are (eta = 1,
    p = 1, where delta is the identity: exact QIDs, or a sensitive column
    the user allowed in the clear): a row's set lies in its own cell of
    them, so that cell's N - w is spread over its cells alone and their
    totals are exact, as every other estimate keeps them.  Without such
    attributes this is eq. 18 as the paper writes it."""
    params = [table.params[a] for a in attributes]
    exact = [j for j, pa in enumerate(params) if pa.eta == 1 and pa.inclusion == 1.0]
    sets = [j for j in range(len(params)) if j not in exact]
    P = math.prod(params[j].inclusion for j in sets)
    eta_prod = math.prod(params[j].eta for j in sets)
    w = np.asarray(w, dtype=np.float64)
    ncells = math.prod(w.shape[j] for j in sets)
    x = w * (P / eta_prod)
    if ncells > eta_prod:
        # N of each QID cell: its rows' sets cover eta_prod of its cells each
        N = w.sum(axis=tuple(sets), keepdims=True) / eta_prod if exact else table.n_rows
        x = x + (N - w) * ((1.0 - P) / (ncells - eta_prod))
    return x


# ---------------------------------------------------------------- exact EM
def _unique_rows(a: np.ndarray, weights=None):
    """Distinct rows of a 2-d uint64 array, in the order of their bytes
    (rows as one void each: much faster than np.unique(axis=0)), with the
    summed weights (counts if None)."""
    a = np.ascontiguousarray(a, dtype=np.uint64)
    v = a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    uv, inv = np.unique(v, return_inverse=True)
    w = np.bincount(inv.ravel(), weights=weights, minlength=len(uv)).astype(np.float64)
    return uv.view(np.uint64).reshape(len(uv), a.shape[1]), w


def _patterns(table: SetTable, attributes):
    """Distinct set tuples over the attributes, with their multiplicities."""
    masks = [np.asarray(table.mask(a)) for a in attributes]
    uniq, counts = _unique_rows(np.concatenate(masks, axis=1))
    out, col = [], 0
    for a, m in zip(attributes, masks):
        out.append(np.ascontiguousarray(uniq[:, col:col + m.shape[1]]))
        col += m.shape[1]
    return out, counts.astype(np.float64)


def likelihood_ratio(p: float, eta: int, d: int) -> float:
    """u = kappa_d / kappa_c = (1-p) eta / (p d + (1-p) eta)."""
    den = p * d + (1.0 - p) * eta
    return (1.0 - p) * eta / den if den > 0 else 1.0


def _exact_em(table: SetTable, attributes, dims, **rule):
    pmasks, weight = _patterns(table, attributes)
    return exact_em_patterns([table.params[a] for a in attributes], dims, table.n_rows,
                             pmasks, weight, **rule)


def _trie_order(pmasks, params, dims):
    """The attribute order of the trie that minimizes an upper bound of its
    work, sum_t min(U, prod_{j <= t} P_j) |S_t| prod_{j > t} d_j, with P_j the
    distinct sets of attribute j (all orders for q' <= 5, else by P_j)."""
    q = len(dims)
    P = [len(_unique_rows(m)[1]) for m in pmasks]
    U = max(len(pmasks[0]), 1)

    def cost(order):
        c, nodes = 0.0, 1.0
        for t, j in enumerate(order):
            nodes = min(U, nodes * P[j])
            c += nodes * params[j].eta * math.prod(dims[i] for i in order[t + 1:])
        return c

    if q <= 5:
        return list(min(permutations(range(q)), key=lambda o: (cost(o), o)))
    return sorted(range(q), key=lambda j: (P[j], dims[j], j))


def trie_tuples(params, dims, pmasks, weight, *, n_threads=0) -> tuple:
    """The trie kernel's input: (order, cols, weights, members).  The
    attributes in the trie's order; the distinct tuples sorted by the bytes of
    their reordered sets (so the trie's groups are contiguous at every depth),
    one array of set words per attribute; and for a wide domain, whose set of
    eta values spans many zero words, its members, listed once and read
    instead of the words in every update (the same sums in the same order:
    the same bits), else None."""
    order = _trie_order(pmasks, params, dims)
    srt, wts = _unique_rows(np.concatenate([np.asarray(pmasks[j]) for j in order], axis=1),
                            np.asarray(weight, dtype=np.float64))
    cols, c0 = [], 0
    for j in order:
        width = np.asarray(pmasks[j]).shape[1]
        cols.append(np.ascontiguousarray(srt[:, c0:c0 + width]))
        c0 += width
    mems = [_kernels.members(col, dims[j], params[j].eta, n_threads=n_threads)
            if col.shape[1] > params[j].eta else None for col, j in zip(cols, order)]
    return order, cols, wts, mems


def exact_em_patterns(params, dims, N: int, pmasks, weight, *, max_iter: int = emdrive.MAX_ITER,
                      tol: float = 1e-6, n_threads=0, tol_ll: float = emdrive.TOL_LL["exact_em"],
                      accelerate: bool = True, init=None, kernel: str = "trie"):
    """The exact-likelihood EM on distinct set tuples.

    Parameters
    ----------
    params : list of AttributeParams, one per attribute
    dims : domain sizes
    N : number of records
    pmasks : list of (U, words) bitmask arrays: the distinct set tuples
    weight : (U,) how many records share each tuple (mergeable across chunks
        and partitions: sum the counts of identical tuples)
    max_iter, tol, tol_ll, accelerate : the stopping rule and SQUAREM (see
        :func:`reconstruct`)
    init : starting counts (shape dims, in records); default uniform
    kernel : 'trie' (prefix-trie contraction) or 'subsets' (the expansion
        over attribute subsets; slower, kept as a reference)

    Returns
    -------
    (counts, info): the estimate in records, shape dims, and the EM report.
    """
    q = len(params)
    nt = n_threads or 0
    dims = [int(v) for v in dims]
    if kernel not in ("trie", "subsets"):
        raise ValueError(f"kernel must be 'trie' or 'subsets', got {kernel!r}")
    # P(set_j | alpha_j) / kappa_c = u_j + (1 - u_j) [alpha_j in set_j]
    u = [likelihood_ratio(par.p, par.eta, d) for par, d in zip(params, dims)]
    U = len(weight)
    ncells = math.prod(dims)
    if kernel == "trie":
        order, cols, wts, mems = trie_tuples(params, dims, pmasks, weight, n_threads=nt)
        ds, us = [dims[j] for j in order], [u[j] for j in order]
        # chunks (fixed for any thread count: the sums' order) each cost a
        # tensor of ncells to clear and add: about as many as keep that under
        # an eighth of the leaves' work (U tuples x eta), at most 64
        eta_leaf = params[order[-1]].eta
        nchunk = int(max(1, min(64, len(wts) // 1024, (256 << 20) // (8 * max(ncells, 1)),
                                len(wts) * eta_leaf // (8 * max(ncells, 1)))))

        checked = [False]      # the tuples' order, checked pair by pair in the first update

        def step(x, nt_, ll=True):
            pi = x / N
            G, loglik = _kernels.exact_trie(cols, ds, us, wts, pi, nchunk, nt_, mems,
                                            check_order=not checked[0])
            checked[0] = True
            return pi * G, loglik
    else:
        order = list(range(q))
        ds = dims
        step = _subsets_step(params, dims, N, pmasks, weight, u, nt)
    back = np.argsort(order)
    x0 = (np.full(dims, N / ncells) if init is None
          else np.asarray(init, dtype=np.float64).reshape(dims))
    x0 = np.ascontiguousarray(np.transpose(x0, order))
    choice = emdrive.ThreadChoice(nt, U >= 4096)
    run = emdrive.run_squarem if accelerate else emdrive.run_plain
    x, info = run(step, x0, scale=max(float(N), 1.0), tol=tol, tol_ll=tol_ll,
                  max_iter=max_iter, choice=choice)
    info["patterns"] = U
    return np.ascontiguousarray(np.transpose(x, back)), info


def _subsets_step(params, dims, N, pmasks, weight, u, nt):
    """One exact EM update by the subset expansion (the reference kernel)."""
    q = len(params)
    members = [_kernels.members(m, d, par.eta, n_threads=nt)
               for m, d, par in zip(pmasks, dims, params)]
    # expand prod_j (u_j + (1 - u_j) [in set_j]) into subsets S (attributes
    # where the indicator term is taken): coefficient prod_{j not in S} u_j
    # prod_{j in S} (1 - u_j)
    subsets, coefs = [], []
    for bits in _product((0, 1), repeat=q):
        s = sum(1 << j for j in range(q) if bits[j])
        c = math.prod((1.0 - u[j]) if bits[j] else u[j] for j in range(q))
        if c > 0.0:
            subsets.append(s)
            coefs.append(c)
    U = len(weight)
    per_chunk = sum(math.prod(dims[j] for j in range(q) if (s >> j) & 1) for s in subsets)
    nchunk = int(max(1, min(64, U // 2048, (256 << 20) // (8 * per_chunk))))
    axes_all = tuple(range(q))

    def step(x, nt_, ll=True):
        pi = x / N
        margs = []
        for s in subsets:
            drop = tuple(j for j in axes_all if not (s >> j) & 1)
            margs.append(pi.sum(axis=drop) if drop else pi)
        accs, ll = _kernels.exact_estep(members, dims, weight, subsets, coefs, margs,
                                        nchunk, n_threads=nt_)
        g = np.zeros(dims)
        for s, acc in zip(subsets, accs):
            g += acc.reshape([dims[j] if (s >> j) & 1 else 1 for j in range(q)])
        return pi * g, ll
    return step


# ------------------------------------------------------ counts of blocks
class PatternCounter:
    """Distinct set tuples over q' attributes with their multiplicities,
    merged block by block (chunks of a file, partitions of a Dask frame).  The
    merged result is what the exact EM computes from the whole table: the same
    tuples in the same (byte) order, with the same counts."""

    def __init__(self, widths):
        self.widths = list(widths)
        self._parts = []

    def add_masks(self, masks):
        stacked = np.concatenate([np.asarray(m, dtype=np.uint64).reshape(len(m), -1)
                                  for m in masks], axis=1)
        uniq, cnt = _unique_rows(stacked)
        self.add_patterns(uniq, cnt.astype(np.int64))

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
        uniq, cnt = _unique_rows(allu, allc)
        self._parts = [(uniq, cnt.astype(np.int64))]

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
                         max_iter: int = emdrive.MAX_ITER, tol: float = 1e-6, n_threads=None,
                         seed=None, tol_ll: float | None = None,
                         accelerate: bool = True, standard_errors: int | None = None) -> CrossTab:
    """Finish a reconstruction from counts merged over blocks: ``w`` (eq. 17)
    for 'em' and 'value_adding', ``patterns`` = (pattern masks, counts) for
    'exact_em'.  ``header`` is a SetTable or anything with its schema,
    params, n_rows and names.  The estimate equals :func:`reconstruct` on the
    whole table."""
    if method != "exact_em":
        return reconstruct(header, attributes, method, max_iter=max_iter, tol=tol,
                           n_threads=n_threads, seed=seed, w=w, tol_ll=tol_ll,
                           accelerate=accelerate, standard_errors=standard_errors)
    replicates = check_replicates(standard_errors)
    attributes = _check_attrs(header, attributes)
    from ..validate import check_informative
    check_informative(header, attributes)
    dims = _dims(header, attributes)
    _check_stopping(max_iter, tol, tol_ll, accelerate)
    if tol_ll is None:
        tol_ll = emdrive.TOL_LL["exact_em"]
    pm, weight = patterns
    rule = {"max_iter": int(max_iter), "tol": float(tol), "tol_ll": float(tol_ll),
            "accelerate": bool(accelerate), "n_threads": _threads(n_threads)}
    counts, info = exact_em_patterns([header.params[a] for a in attributes], dims,
                                     header.n_rows, pm, weight, **rule)
    return with_se(warn_unconverged(CrossTab(tuple(attributes),
                                             tuple(header.schema[a].domain
                                                   for a in attributes),
                                             counts, "exact_em", info)),
                   header, replicates, rule)


def _check_stopping(max_iter, tol, tol_ll=None, accelerate=True) -> None:
    """The stopping rule's numbers and the SQUAREM switch, each by name."""
    import numbers

    from ..validate import InputError, check_bool, check_int
    check_int(max_iter, "max_iter", minimum=1)
    for name, v in (("tol", tol), ("tol_ll", tol_ll)):
        if v is None and name == "tol_ll":
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (v >= 0):
            raise InputError(f"got {v!r}", param=name, expected="a number >= 0")
    check_bool(accelerate, "accelerate")
