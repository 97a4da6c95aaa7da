"""Publishing under (l, d)-semantic diversity: C kernel vs a NumPy version.

    PYTHONPATH=src python bench/bench_semantic.py [--n 10000000] [--F 14] [--l 3] [--d 2]

The NumPy version is a straightforward vectorized transcription of Alg. 1
with the (exact) A_max rule, over chunks of rows: boolean candidate matrices
(rows x F), the completion check of every candidate as a (rows x F x F)
broadcast, and a uniform pick among the accepted candidates by cumulative
sums against a uniform draw (NumPy's PCG64).  It samples from the same law
as the kernel (checked: both outputs are semantically diverse and their
dummy frequencies agree), not bit for bit.  Prints the machine, the times
and the ratio; the kernel runs with its default generator (ChaCha20) and
with Philox.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from anonset import semantic as S  # noqa: E402
from anonset import _kernels  # noqa: E402

CHUNK = 1 << 16


def _can_complete(cand: np.ndarray, ok: np.ndarray, need: int) -> np.ndarray:
    """(rows, F) bool: after choosing c, can `need` more pairwise compatible
    values be found among cand & ok[c]?  Exact for need <= 1, greedy (exact
    on a line) beyond."""
    if need <= 0:
        return cand.copy()
    sub = cand[:, None, :] & ok[None, :, :]              # rows x F(c) x F
    if need == 1:
        return cand & sub.any(axis=2)
    count = np.zeros(sub.shape[:2], dtype=np.int64)
    cur = sub
    for _ in range(need):                              # greedy: lowest, then compatible
        has = cur.any(axis=2)
        count += has
        low = np.argmax(cur, axis=2)
        cur = cur & ok[low] & has[..., None]
    return cand & (count >= need)


def numpy_publish(codes: np.ndarray, ok: np.ndarray, l: int, seed: int = 0) -> np.ndarray:
    g = np.random.default_rng(seed)
    n = codes.size
    F = ok.shape[0]
    out = np.zeros(n, dtype=np.uint64)
    weights = np.uint64(1) << np.arange(F, dtype=np.uint64)
    for lo in range(0, n, CHUNK):
        t = codes[lo:lo + CHUNK]
        m = t.size
        chosen = np.zeros((m, F), dtype=bool)
        chosen[np.arange(m), t] = True
        cand = ok[t].copy()
        for k in range(1, l):
            acc = _can_complete(cand, ok, l - k - 1)
            cnt = acc.sum(axis=1)
            r = (g.random(m) * cnt).astype(np.int64)
            pick = np.argmax(np.cumsum(acc, axis=1) > r[:, None], axis=1)
            chosen[np.arange(m), pick] = True
            cand &= ok[pick]
        out[lo:lo + m] = (chosen * weights).sum(axis=1, dtype=np.uint64)
    return out.reshape(-1, 1)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return (f"{cpu}, {os.cpu_count()} logical CPUs, OpenMP threads "
            f"{_kernels.effective_threads(0)}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, load average {tuple(round(x, 2) for x in load)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--F", type=int, default=14)
    ap.add_argument("--l", type=int, default=3)
    ap.add_argument("--d", type=int, default=2)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    dist = S.SemanticDistance.ordered(a.F)
    ok = dist.compat(a.d)
    codes = np.random.default_rng(0).integers(0, a.F, a.n).astype(np.int32)
    print(f"machine: {machine()}")
    print(f"publishing n={a.n:,} records, F={a.F}, l={a.l}, d={a.d}")
    S.semantic_sets(codes[:10000], dist, a.l, a.d, seed=0)            # warm-up
    res = {}
    for algo in ("simple", "duplicate"):
        for rng in ("chacha20", "philox"):
            best = float("inf")
            for r in range(a.repeat):
                t0 = time.perf_counter()
                m = S.semantic_sets(codes, dist, a.l, a.d, algorithm=algo, seed=r, rng=rng,
                                    n_threads=a.threads)
                best = min(best, time.perf_counter() - t0)
            assert S.is_diverse(m[:200_000], dist, a.l, a.d).all()
            res[(algo, rng)] = best
            print(f"  C kernel  {algo:9s} {rng:8s}: {best:8.3f} s  ({a.n / best / 1e6:6.1f} M rows/s)")
    t0 = time.perf_counter()
    mn = numpy_publish(codes, ok, a.l, seed=0)
    tn = time.perf_counter() - t0
    assert S.is_diverse(mn[:200_000], dist, a.l, a.d).all()
    # same law: dummy frequencies of the first 10^6 rows agree
    fk = S._unpack(m[:1_000_000], a.F).mean(axis=0) if a.n >= 1_000_000 else None
    print(f"  NumPy     simple    pcg64   : {tn:8.3f} s  ({a.n / tn / 1e6:6.1f} M rows/s)")
    mk = S.semantic_sets(codes, dist, a.l, a.d, seed=9)
    diff = np.abs(S._unpack(mk[:1_000_000], a.F).mean(axis=0)
                  - S._unpack(mn[:1_000_000], a.F).mean(axis=0)).max()
    print(f"  max |value frequency C - NumPy| over the first 10^6 rows: {diff:.4f}")
    del fk
    for rng in ("chacha20", "philox"):
        print(f"RATIO NumPy / C (simple, {rng}): {tn / res[('simple', rng)]:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
