"""Utility metrics between a true and a reconstructed cross-tabulation
(paper 000, Sec. II-C, eq. 4-6; on counts, not proportions)."""
from __future__ import annotations

import numpy as np

__all__ = ["l1", "l2", "hellinger", "mse", "compare"]


def _pair(x, xhat):
    """The two tables' counts, cell by cell.  Two CrossTabs are lined up by
    their attributes' names (the estimate's axes put in the truth's order):
    tables of the same shape over (age, occupation) and (occupation, age)
    were compared cell by cell, L1/N 0.98 for 0.23 (H26); attributes or
    domains that differ are refused."""
    from .validate import InputError
    if hasattr(xhat, "attributes") and hasattr(x, "attributes"):
        a, b = tuple(x.attributes), tuple(xhat.attributes)
        if sorted(a) != sorted(b):
            raise InputError(f"the true table is over {list(a)} and the estimate over "
                             f"{list(b)}", param="xhat",
                             expected="two tables over the same attributes")
        perm = [b.index(n) for n in a]
        for n, j in zip(a, perm):
            if list(x.domains[a.index(n)]) != list(xhat.domains[j]):
                raise InputError(f"the two tables list {n!r}'s values differently",
                                 param="xhat", expected="tables of one release (one schema)")
        y = np.transpose(np.asarray(xhat.counts, dtype=np.float64), perm)
        x = np.asarray(x.counts, dtype=np.float64)
    else:
        x = np.asarray(getattr(x, "counts", x), dtype=np.float64)
        y = np.asarray(getattr(xhat, "counts", xhat), dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"true and estimated tables differ in shape: {x.shape} vs {y.shape}")
    return x.ravel(), y.ravel()


def l1(x, xhat) -> float:
    """L1 distance, eq. 4: sum_m |x_m - xhat_m|."""
    a, b = _pair(x, xhat)
    return float(np.abs(a - b).sum())


def l2(x, xhat) -> float:
    """L2 distance, eq. 5."""
    a, b = _pair(x, xhat)
    return float(np.sqrt(((a - b) ** 2).sum()))


def hellinger(x, xhat) -> float:
    """Hellinger distance, eq. 6: sqrt(sum (sqrt x - sqrt xhat)^2) / sqrt 2.
    Negative estimates (paper 001's linear estimator can produce them) count as 0."""
    a, b = _pair(x, xhat)
    return float(np.sqrt(((np.sqrt(np.clip(a, 0, None)) - np.sqrt(np.clip(b, 0, None))) ** 2).sum())
                 / np.sqrt(2.0))


def mse(x, xhat) -> float:
    """Mean squared error per cell."""
    a, b = _pair(x, xhat)
    return float(((a - b) ** 2).mean())


def compare(x, xhat) -> dict:
    """All four metrics, plus L1 / N."""
    a, _ = _pair(x, xhat)
    n = a.sum()
    return {"L1": l1(x, xhat), "L1/N": l1(x, xhat) / n if n else float("nan"),
            "L2": l2(x, xhat), "Hellinger": hellinger(x, xhat), "MSE": mse(x, xhat)}
