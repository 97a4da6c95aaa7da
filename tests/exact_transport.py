"""Exact earth mover's distance by linear programming, for the tests.

The transportation problem min <M, F> subject to F 1 = p, F^T 1 = q, F >= 0
solved by SciPy's HiGHS dual simplex with presolve off and tight
feasibility tolerances: an independent solver (no code shared with
anonset.emd) that agrees with POT's network simplex to 1e-15 on random
problems of up to 25 values (checked when this helper was written).  SciPy is
in the ``test`` extra; POT, a comparison peer, is in ``bench``.
"""
import numpy as np
from scipy.optimize import linprog


def emd2(p, q, M) -> float:
    """The optimal transport cost between histograms ``p`` and ``q`` under ``M``."""
    p, q, M = np.asarray(p, float), np.asarray(q, float), np.asarray(M, float)
    m, n = len(p), len(q)
    rows = np.zeros((m + n, m * n))
    for i in range(m):
        rows[i, i * n:(i + 1) * n] = 1.0        # mass leaving p_i
    for j in range(n):
        rows[m + j, j::n] = 1.0                 # mass arriving at q_j
    res = linprog(M.ravel(), A_eq=rows, b_eq=np.concatenate([p, q]), bounds=(0, None),
                  method="highs-ds", options={"presolve": False,
                                              "primal_feasibility_tolerance": 1e-10,
                                              "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"transport LP failed: {res.message}")
    return float(res.fun)
