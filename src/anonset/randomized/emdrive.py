"""Driving an EM to convergence: the stopping rule, SQUAREM acceleration and
the choice of threads, shared by the paper's EM (000 eq. 26) and the
exact-likelihood EM (reconstruct.py).

An EM is given as a map ``step(x, n_threads, ll=True) -> (F(x), L(x))``: one
EM update and the log-likelihood at its input (which the step may skip, NaN,
when ``ll`` is false).  EM never lowers L.

Stopping rule (docs/algorithms.md, "EM stopping rule"): stop when the gain
of L per EM update, divided by ``scale`` (sum w for the paper's EM, N for
the exact EM: a gain per counted cell or per record), is at most ``tol_ll``;
or when no cell of the estimate moves by more than ``tol`` records in an
update (reconstruct's default 1e-6; 0: not used); ``max_iter`` EM updates are
a safety cap,
reported as not converged.

SQUAREM (Varadhan & Roland 2008, scheme S3 with the step-length control of
their R package): from x0, x1 = F(x0), x2 = F(x1), r = x1 - x0,
v = x2 - x1 - r, alpha = max(1, min(step_max, |r| / |v|)),
x' = x0 + 2 alpha r + alpha^2 v (a cell it takes to <= 0 keeps its EM value
x2: an EM update never revives a zero cell), then one stabilizing update
x_new = F(x').  Safeguard: x_new is kept only if L(x_new) >= L(x1) (so the
accepted iterates never lower L); otherwise the cycle ends at x2, two plain
EM updates, and step_max shrinks.  The fixed points are EM's.

Threads: on a machine where another process is busy, a second thread can
make a barrier-heavy EM many times slower (it waits for a thread that has
lost its core).  ``ThreadChoice`` tries n threads only while n cores are
free (Linux: /proc/stat's count of runnable threads), times the calls made
with one thread and with n threads and keeps the faster (by the median of
each count's last three timings), probing the other again after 8, 16, 32,
then every 64 calls; the estimate does not depend on the thread count, so
the choice changes only the time.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np

__all__ = ["TOL_LL", "MAX_ITER", "ThreadChoice", "free_cores", "run_plain", "run_squarem"]

#: Default tolerance of the stopping rule, per method: gain of the
#: log-likelihood per EM update and per counted cell (paper EM) or record
#: (exact EM).  Chosen from bench/em_stopping.py on Adult (docs/algorithms.md,
#: "EM stopping rule"): the paper EM's likelihood is so flat that its estimate
#: moves by several % of N between 1e-12 and its maximum, so it runs until the
#: likelihood stops rising within double precision; the exact EM's estimate
#: at 1e-10 is within 0.8 % of N (mean 0.06 %) of the one at 1e-12.
TOL_LL = {"em": 1e-14, "exact_em": 1e-10}

#: Default safety cap on EM updates (never reached by the default rule in the
#: measurements; reported as not converged when it is).
MAX_ITER = 20_000


def free_cores(proc_stat: str = "/proc/stat") -> int | None:
    """Cores of this process's CPU set that no other runnable thread holds
    now (Linux: ``procs_running`` of /proc/stat, which counts this thread);
    None where the system does not say."""
    try:
        with open(proc_stat, "rb") as f:
            for line in f:
                if line.startswith(b"procs_running"):
                    running = int(line.split()[1])
                    break
            else:
                return None
        cores = len(os.sched_getaffinity(0))
    except (OSError, ValueError, AttributeError):
        return None
    return max(1, cores - max(running - 1, 0))


class ThreadChoice:
    """One thread or n for repeated kernel calls, whichever runs faster.

    n threads are tried only while the machine has n cores free
    (:func:`free_cores`): on a busy machine one call of a barrier-heavy
    kernel with more threads than free cores can cost a scheduler time slice
    (milliseconds) per barrier, so even the probes would be too dear."""

    def __init__(self, n_threads: int, parallel: bool, free=free_cores):
        self.n = n_threads if parallel and n_threads != 1 else 1
        self.recent = {1: [], self.n: []}     # the last few timings of each count
        self.best = 1
        self.calls = 0
        self.next_probe = 1                   # probe the other count at this call
        self.gap = 8
        self._free = free

    def _room(self) -> bool:
        """Whether n threads would find n free cores now."""
        f = self._free()
        return f is None or f >= self.n

    def threads(self) -> int:
        if self.n == 1:
            return 1
        if self.calls < 4:                    # the first calls alternate
            if self.calls % 2 == 0:
                return 1
            if not self._room():              # busy: no n-thread timing yet
                self.calls += 1
                return 1
            return self.n
        if self.calls >= self.next_probe:
            if self.best == 1 and not self._room():
                # busy: skip this probe, try again after the next gap
                self.next_probe = self.calls + self.gap
                self.gap = min(2 * self.gap, 64)
                return 1
            return self.n if self.best == 1 else 1
        if self.best != 1 and self.calls % 8 == 0 and not self._room():
            # the machine became busy: one thread until a probe says otherwise
            self.best = 1
            self.recent[self.n].clear()
        return self.best

    def record(self, nt: int, seconds: float, work: int = 1) -> None:
        if self.n == 1:
            return
        # the median of the last three timings of each count: one call slowed
        # (or, with n threads on a busy machine, one lucky call sped up) by
        # the machine's other load does not decide.  The least timing would
        # favour the count whose timings vary most, which on a busy machine
        # is the slower n.
        r = self.recent[nt]
        r.append(seconds / max(work, 1))
        del r[:-3]
        self.calls += 1
        if self.calls >= 2 and all(self.recent.values()):
            self.best = min(self.recent, key=lambda k: (_median(self.recent[k]), k))
            if self.calls > self.next_probe:
                self.next_probe = self.calls + self.gap
                self.gap = min(2 * self.gap, 64)

    @property
    def used(self) -> int:
        return self.best


def _sqnorm(a: np.ndarray) -> float:
    a = a.ravel()
    return float(np.einsum("i,i->", a, a))


def _median(v):
    v = sorted(v)
    h = len(v) // 2
    return v[h] if len(v) % 2 else 0.5 * (v[h - 1] + v[h])


def _timed(step, x, choice, ll=True):
    nt = choice.threads()
    t0 = time.perf_counter()
    out = step(x, nt, ll)
    choice.record(nt, time.perf_counter() - t0)
    return out


def _info(evals, change, ll, gain, tol, tol_ll, max_iter, reason, accelerated, choice):
    """``change``: the largest cell change of the last EM update, the figure
    the ``tol`` rule tests."""
    return {"iterations": evals, "change": change, "loglik": ll, "gain": gain,
            "converged": reason in ("tol_ll", "tol"), "stopped": reason,
            "max_iter": max_iter, "tol": tol, "tol_ll": tol_ll,
            "accelerated": accelerated, "threads": choice.used}


def run_plain(step, x0, *, scale, tol, tol_ll, max_iter, choice):
    """Plain EM updates until the stopping rule holds."""
    x, ll_prev, ll, gain = np.asarray(x0, dtype=np.float64), None, math.nan, math.inf
    evals, reason, change = 0, "max_iter", math.inf
    while evals < max_iter:
        nx, ll = _timed(step, x, choice)
        evals += 1
        change = float(np.abs(nx - x).max())          # this update's largest move
        if ll_prev is not None:
            gain = (ll - ll_prev) / scale
            if tol_ll > 0 and gain <= tol_ll:
                # converged at x (whose L is ll): x is the result
                reason = "tol_ll"
                break
        ll_prev, x = ll, nx
        if tol > 0 and change <= tol:
            reason = "tol"
            break
    return x, _info(evals, change, ll, gain, tol, tol_ll, max_iter, reason, False, choice)


def run_squarem(step, x0, *, scale, tol, tol_ll, max_iter, choice, step_max0=1.0, mstep=4.0):
    """SQUAREM-accelerated EM (see the module docstring) until the stopping
    rule holds; the gain is L's increase per EM update between accepted
    iterates."""
    x = np.asarray(x0, dtype=np.float64)
    x1, ll0 = _timed(step, x, choice)
    evals, step_max = 1, step_max0
    gain, reason = math.inf, "max_iter"
    # a cycle costs up to 4 updates (2, the stabilizing one and the
    # safeguard's): it starts only where all four fit, so the cap is never
    # passed and a capped run stops at most 3 short of it
    while evals + 4 <= max_iter:
        x2, ll1 = _timed(step, x1, choice)
        r = x1 - x
        v = x2 - x1 - r
        # squared norms by NumPy's own loops, not BLAS: a threaded BLAS dot
        # costs milliseconds on a busy machine (its threads wait for cores)
        # and its sum depends on its thread count
        sr, sv = _sqnorm(r), _sqnorm(v)
        cycle = 1                                     # EM updates in this cycle
        if sv <= 0.0 or not math.isfinite(sv):
            # F(x1) - x1 = F(x) - x: the EM map is a translation here, or x is
            # a fixed point; take the plain updates
            xn = x2
            xn1, lln = _timed(step, xn, choice)
            cycle += 1
        else:
            alpha = min(step_max, max(1.0, math.sqrt(sr / sv)))
            xp = x + 2.0 * alpha * r + alpha * alpha * v
            # a cell the extrapolation takes to zero or below keeps its EM
            # value x2: EM's updates are multiplicative, so a cell set to 0
            # stays 0 for ever, and clipping at 0 made false fixed points
            # (an exact EM "converged" at L1/N 0.45 where its maximum is 0.02)
            low = xp <= 0.0
            if low.any():
                xp[low] = x2[low]
            xn, _ = _timed(step, xp, choice, False)   # the stabilizing update
            xn1, lln = _timed(step, xn, choice)       # L(x_new), and the next x1
            cycle += 2
            if not (lln >= ll1):                      # safeguard: fall back to x2
                xn = x2
                xn1, lln = _timed(step, xn, choice)
                cycle += 1
                step_max = max(step_max0, step_max / mstep)
            elif alpha >= step_max:
                step_max *= mstep
        evals += cycle
        gain = (lln - ll0) / (scale * cycle)
        x, x1, ll0 = xn, xn1, lln
        if tol_ll > 0 and gain <= tol_ll:
            reason = "tol_ll"
            break
        if tol > 0 and float(np.abs(x1 - x).max()) <= tol:
            reason = "tol"
            break
    # the last EM update from x is x1 (computed with L(x)): its change is
    # what the tol rule tests, and what is reported
    change = float(np.abs(x1 - x).max())
    return x, _info(evals, change, ll0, gain, tol, tol_ll, max_iter, reason, True, choice)
