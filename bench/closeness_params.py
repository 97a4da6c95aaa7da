"""Algorithm 1 (paper 000) on wide domains: the (p, eta) search of
t-closeness, against searching every set size exactly as round two did.

Algorithm 1 tries every eta in [eta_min, d) and keeps the one of least
expected error (eq. 9).  It now stops where even p = 1 loses, skips the
sizes whose error with p bounded by a cheap lower bound on H loses, and, for
the equal ground, finds H from a set that reaches the best total instead of
the subset-sum DP.  The (p, eta) must be the same; the baseline here is the
every-size loop with the DP for every equal-ground H (what ran before).

    python bench/closeness_params.py            # a few minutes on 2 cores
"""
from __future__ import annotations

import math
import os
import platform
import time

import numpy as np

from anonset.emd import Ground
from anonset.randomized import closeness_search as cs
from anonset.randomized.params import closeness_parameters, expected_l2, grid_p


def every_size(A, N, t, g, eta_min):
    """Round two's Algorithm 1: every eta searched, the equal ground by DP."""
    d = len(A)
    best = (math.inf, 1.0, d)
    for eta in range(eta_min, d):
        if g.kind == "equal":
            # the DP over every size at once, as round two ran it (cached)
            a = cs._bits(_dp(A)[eta]).astype(np.float64) / A.sum()
            H = float((a * (1.0 - a) - t * a).max())
            p = 1.0 if H <= 0 else min(1.0, max(0.0, cs.p_of_u(H / (H + t), eta, d)))
        else:
            p = cs.max_admissible_p(A, eta, t, g)[0]
        p = grid_p(p)
        if p <= 0.0:
            continue
        e = expected_l2(N, d, p, eta)
        if e < best[0]:
            best = (e, p, eta)
    return best[1], best[2]


_DP = {}


def _dp(A):
    key = A.tobytes()
    if key not in _DP:
        _DP[key] = cs._reachable_counts(A, A.size)
    return _DP[key]


def case(name, A, t, g, eta_min, baseline=True):
    N = int(A.sum())
    t0 = time.perf_counter()
    got = closeness_parameters(A, N, t, g, eta_min=eta_min)
    new = time.perf_counter() - t0
    line = f"| {name} | {len(A):,} | {N:,} | {got[1]} | {got[0]:.6g} | {new:.2f} s |"
    if baseline:
        _DP.clear()
        t0 = time.perf_counter()
        ref = every_size(A, N, t, g, eta_min)
        old = time.perf_counter() - t0
        assert ref == got, (ref, got)
        line += f" {old:.1f} s | {old / new:.0f}x | same |"
    else:
        line += " not run | | |"
    print(line, flush=True)


def main():
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}")
    print("| case | d | N | eta | p | now | every size | ratio | (p, eta) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    tails = rng.zipf(1.6, 4044).clip(1, 600).astype(np.int64)       # tail numbers
    case("equal, zipf counts (tail numbers), t = 0.4, l = 5", tails, 0.4,
         Ground.equal(tails.size), 5)
    for d in (300, 1000):
        A = rng.integers(1, 200, d).astype(np.int64)
        case(f"ordered, uniform counts, t = 0.2, l = 3", A, 0.2, Ground.ordered(d), 3,
             baseline=d <= 300)


if __name__ == "__main__":
    main()
