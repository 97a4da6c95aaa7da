"""Utility metrics between a true and a reconstructed cross-tabulation
(paper 000, Sec. II-C, eq. 4-6; on counts, not proportions)."""
from __future__ import annotations

import numpy as np

__all__ = ["l1", "l2", "hellinger", "mse", "compare"]


def _pair(x, xhat):
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
    Negative estimates (ValueAdding can produce them) count as 0."""
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
