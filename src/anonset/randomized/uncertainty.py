"""How uncertain a reconstruction is (docs/algorithms.md, "Standard
errors").

Paper 000 (Sec. V-D) and paper 004 give estimators but no measure of their
noise.  Two are computed here, both for the randomization alone: the N
records of the original are held fixed and only their published sets are
random, as they are for a release.

* :func:`bootstrap_se`, the parametric bootstrap behind
  ``reconstruct(..., standard_errors=B)`` and ``anonset reconstruct --se B``:
  the estimate, rounded to whole records that sum to N, stands for the
  original; B releases of it are drawn with the release's parameters (p_j,
  eta_j) by the library's own set sampler, under keys fresh from the
  operating system (never the release's key), and each is reconstructed by
  the same method and stopping rule; the standard error of a cell is the
  standard deviation of its B estimates.
* :func:`moment_variance`, in closed form, the variance of the unbiased
  moment estimator Delta^{-1} w (eq. 17's counts w, eq. 19's transition
  matrix Delta), which is the paper EM's fixed point wherever that lies
  inside the simplex.  :func:`noise_l1` turns it into the L1 error per
  record that noise alone is expected to make, the cheap criterion of the
  command line's warning.

Both measure the noise of the randomization, not the bias of an estimator:
neither how far an EM's stopping rule left it from its maximum, nor how far
value_adding's shrinkage toward the uniform split lies from the truth.
"""
from __future__ import annotations

import math
import os

import numpy as np

__all__ = ["MAX_REPLICATES", "NOISE_L1", "check_replicates", "moment_variance",
           "noise_l1", "bootstrap_se", "whole_counts", "BLOCK_ROWS"]

#: Most bootstrap replicates asked for: each costs one reconstruction (on
#: Adult, 0.05-0.5 s); 10,000 give a standard error to within about 0.7 %.
MAX_REPLICATES = 10_000

#: The command line warns when the noise of the randomization alone is
#: expected to make an L1 error of at least this many records per record
#: (:func:`noise_l1`): 0.5, a quarter of the records misplaced (L1 counts a
#: misplaced record twice, short in its cell and over in another).
NOISE_L1 = 0.5


def check_replicates(value, param: str = "standard_errors") -> int | None:
    """``value`` as a number of bootstrap replicates: None (no standard
    errors), or a whole number from 2 (a standard deviation needs two) to
    :data:`MAX_REPLICATES`."""
    import numbers

    from ..validate import InputError
    if value is None:
        return None
    expected = f"a whole number of bootstrap replicates from 2 to {MAX_REPLICATES:,}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InputError(f"got {value!r}", param=param, expected=expected)
    v = int(value)
    if not 2 <= v <= MAX_REPLICATES:
        raise InputError(f"got {v:,}", param=param, expected=expected)
    return v


def moment_variance(params, counts) -> np.ndarray:
    """Var of each cell of the moment estimator Delta^{-1} w, the original
    table being ``counts`` (negative cells read as 0).

    Given a record's true cell alpha its product set's indicator vector Y
    has mean Delta e_alpha and, attributes being drawn independently,
    second moments that are a Kronecker product; every set of attribute j
    holds eta_j values, so with M_j = Delta_j^{-1} = (I - (b_j/eta_j) J) /
    (a_j - b_j) (a_j, b_j: eq. 19's diagonal and off-diagonal),
    Var(x_gamma) = sum_alpha x_alpha prod_j D_j[alpha_j, gamma_j] - x_gamma
    with D_j = (b_j (1 - b_j) J + (a_j - b_j)(1 - 2 b_j) I) / (a_j - b_j)^2:
    the pairs' inclusion probabilities cancel out.  An attribute published
    as it is (a = 1, b = 0) has D = I.  Cost: q' passes over the cells."""
    x = np.clip(np.asarray(counts, dtype=np.float64), 0.0, None)
    v = x
    for j, par in enumerate(params):
        a, b = par.inclusion, par.other_inclusion
        if b == 0.0 and a == 1.0:
            continue
        c2 = 1.0 / (a - b) ** 2
        v = (c2 * (a - b) * (1.0 - 2.0 * b)) * v + \
            (c2 * b * (1.0 - b)) * v.sum(axis=j, keepdims=True)
    return np.clip(v - x, 0.0, None)


def noise_l1(params, counts, n_rows: int) -> float:
    """E[L1] / N of the moment estimator's noise, the original table being
    ``counts``: sqrt(2/pi) sum_gamma sd_gamma / N, each cell's error taken as
    normal (E|e| = sqrt(2/pi) sd).  0 for a table published as it is; 0.5 and
    more where small cells are mostly noise.  Unlike an estimate's L1 it is
    not bounded by 2: the moment estimator is not kept >= 0 (an EM is, and
    errs less where its cells are near 0).

    Examples
    --------
    Warner's randomized response (d = 2, eta = 1, p = 0.5) of 100 records:
    each count is off by sqrt(100 x 0.25 x 0.75 / 0.25) = 8.7 records.

    >>> from anonset import AttributeParams
    >>> import numpy as np
    >>> par = AttributeParams("smoker", 0.5, 1, 2)
    >>> np.sqrt(moment_variance([par], np.array([60.0, 40.0]))).round(2)
    array([8.66, 8.66])
    >>> round(noise_l1([par], np.array([60.0, 40.0]), 100), 3)
    0.138
    """
    if n_rows <= 0:
        return 0.0
    sd = np.sqrt(moment_variance(params, counts))
    return float(math.sqrt(2.0 / math.pi) * sd.sum() / n_rows)


def whole_counts(counts, n_rows: int) -> np.ndarray:
    """``counts`` (negative cells read as 0) as whole numbers of records
    that sum to ``n_rows``: scaled to it, floored, and the remaining records
    given to the largest remainders (ties to the first cells)."""
    x = np.clip(np.asarray(counts, dtype=np.float64).ravel(), 0.0, None)
    total = x.sum()
    x = x * (n_rows / total) if total > 0 else np.full(x.size, n_rows / max(x.size, 1))
    whole = np.floor(x).astype(np.int64)
    short = int(n_rows - whole.sum())
    if short > 0:
        order = np.argsort(-(x - whole), kind="stable")
        whole[order[:short]] += 1
    elif short < 0:                 # rounding of the scaling: take from the largest cells
        order = np.argsort(-whole, kind="stable")
        whole[order[:-short]] -= 1
    return whole.reshape(np.shape(counts))


#: Rows of a replicate drawn at once: the bootstrap's memory does not grow
#: with N (the streamed path's promise), and each block is the sampler's.
BLOCK_ROWS = 1 << 18


def bootstrap_se(header, attributes, method: str, counts, replicates: int, *,
                 max_iter: int, tol: float, tol_ll: float, accelerate: bool,
                 n_threads: int = 0, block_rows: int = BLOCK_ROWS):
    """The parametric bootstrap: (standard errors shaped like ``counts``,
    report).

    ``header``: the release (a SetTable, or its header: schema, params,
    n_rows).  ``counts``: the estimate, which stands for the original.  The
    replicates are drawn under keys fresh from the operating system, so two
    calls give slightly different standard errors (their own relative
    sampling error is about 1 / sqrt(2 (B - 1))).  Each replicate is drawn
    and counted ``block_rows`` rows at a time."""
    from . import _kernels
    from .reconstruct import (PatternCounter, exact_em_patterns, paper_em,
                              transition_factors, value_adding)
    attributes = list(attributes)
    params = [header.params[a] for a in attributes]
    dims = [int(p.d) for p in params]
    N = int(header.n_rows)
    ncells = math.prod(dims)
    report = {"method": "parametric bootstrap", "replicates": int(replicates),
              "not_converged": 0}
    if method == "random":
        # the baseline ignores the sets: its counts are multinomial, exactly
        q = 1.0 / ncells
        return np.full(dims, math.sqrt(N * q * (1.0 - q))), {**report, "method": "exact"}
    if N == 0:
        return np.zeros(dims), report
    # record r of the stand-in original lies in the cell where the running
    # total of the whole counts first exceeds r (the rows in cell order: a
    # release's sets do not depend on the order of its rows)
    ends = np.cumsum(whole_counts(counts, N).ravel())
    spec = ([p.d for p in params], [p.eta for p in params], [p.coin for p in params],
            [int(p.exact) for p in params], list(range(len(params))))
    eta_prod = math.prod(p.eta for p in params)
    a, b = transition_factors(header, attributes)
    rule = {"max_iter": int(max_iter), "tol": float(tol), "tol_ll": float(tol_ll),
            "accelerate": bool(accelerate), "n_threads": n_threads}
    block = max(1, min(int(block_rows), N))
    bufs = [np.empty((block, (d + 63) // 64), dtype=np.uint64) for d in dims]
    mean = np.zeros(ncells)
    m2 = np.zeros(ncells)
    for r in range(replicates):
        # a throwaway key for each replicate; the randomness protects no one
        # here (the table drawn is the estimate, public), but no key material
        # is ever reused, least of all the release's
        key = os.urandom(32)
        w = np.zeros(dims, dtype=np.int64) if method != "exact_em" else None
        tuples = PatternCounter([(d + 63) // 64 for d in dims]) if w is None else None
        for row0 in range(0, N, block):
            n = min(block, N - row0)
            cells = np.searchsorted(ends, np.arange(row0, row0 + n), side="right")
            codes = [np.ascontiguousarray(c, dtype=np.int32)
                     for c in np.unravel_index(cells, dims)]
            out = bufs if n == block else [np.empty((n, m.shape[1]), dtype=np.uint64)
                                           for m in bufs]
            masks = _kernels.sample_sets(key, "philox", codes, *spec, row0=row0,
                                         n_threads=n_threads, out=out)
            if w is not None:
                w += _kernels.count_w(masks, dims, eta_prod, n_threads=n_threads)
            else:
                tuples.add_masks(masks)
        if method == "exact_em":
            pm, weight = tuples.result()
            x, info = exact_em_patterns(params, dims, N, pm, weight, **rule)
        elif method == "value_adding":
            x, info = value_adding(header, attributes, w), {}
        else:
            x, info = paper_em(w, dims, a, b, eta_prod, **rule)
        if info.get("converged") is False:
            report["not_converged"] += 1
        x = np.asarray(x, dtype=np.float64).ravel()
        delta = x - mean                    # Welford: one pass, no B x cells array
        mean += delta / (r + 1)
        m2 += delta * (x - mean)
    se = np.sqrt(np.clip(m2 / (replicates - 1), 0.0, None))
    return se.reshape(dims), report
