"""Publishing under (l, d)-semantic diversity: C kernel vs a NumPy version.

    PYTHONPATH=src python bench/bench_semantic.py [--n 10000000] [--F 14] [--l 3] [--d 2]

The NumPy version is a straightforward vectorized transcription of Alg. 1
with the (exact) A_max rule, over chunks of rows: boolean candidate matrices
(rows x F), the completion check of every candidate as a (rows x F x F)
broadcast, and a uniform pick among the accepted candidates by cumulative
sums against a uniform draw (NumPy's PCG64).  It samples from the same law
as the kernel (checked: both outputs are semantically diverse and their
dummy frequencies agree), not bit for bit.  Prints the machine, date, load
average, the times and the ratios; the kernel runs with its default
generator (ChaCha20) and with Philox, on one thread (CPU and wall time: the
fair per-core comparison, since the NumPy version runs on one core) and on
all threads (wall time).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from anonset import semantic as S  # noqa: E402
from anonset.randomized import _kernels  # noqa: E402

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
    return (f"{cpu}, {os.cpu_count()} logical CPUs, OpenMP threads (default) "
            f"{_kernels.effective_threads(0)}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}")


def load() -> str:
    if not hasattr(os, "getloadavg"):
        return "?"
    return str(tuple(round(x, 2) for x in os.getloadavg()))


def timed(f, repeat: int) -> tuple:
    """Best wall time and best CPU time (process_time: all threads of this
    process) over `repeat` runs, and the last result."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        out = None
        w0, c0 = time.perf_counter(), time.process_time()
        out = f()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return wall, cpu, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--F", type=int, default=14)
    ap.add_argument("--l", type=int, default=3)
    ap.add_argument("--d", type=int, default=2)
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of the multi-threaded C runs (default: OpenMP's)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per C configuration")
    ap.add_argument("--numpy-repeat", type=int, default=3, help="runs of the NumPy version")
    a = ap.parse_args(argv)
    dist = S.SemanticDistance.ordered(a.F)
    ok = dist.compat(a.d)
    codes = np.random.default_rng(0).integers(0, a.F, a.n).astype(np.int32)
    nt = a.threads or _kernels.effective_threads(0)
    print(f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    print(f"machine: {machine()}")
    print(f"load average at start: {load()}")
    print(f"publishing n={a.n:,} records, F={a.F}, l={a.l}, d={a.d}; "
          f"C: best of {a.repeat}, NumPy: best of {a.numpy_repeat}; "
          f"wall = perf_counter, CPU = process_time")
    S.semantic_sets(codes[:10000], dist, a.l, a.d, seed=0, research_seed=True)            # warm-up
    res = {}
    for algo in ("simple", "duplicate"):
        for rng in ("chacha20", "philox"):
            for threads in (1, nt):
                w, c, m = timed(lambda: S.semantic_sets(codes, dist, a.l, a.d, algorithm=algo,
                                                        seed=1, research_seed=True, rng=rng,
                                                        n_threads=threads),
                                a.repeat)
                res[(algo, rng, threads)] = (w, c)
                print(f"  C kernel  {algo:9s} {rng:8s} {threads} thread(s): wall {w:7.3f} s "
                      f"({a.n / w / 1e6:6.1f} M rows/s)   CPU {c:7.3f} s")
                if threads == nt:
                    break
            assert S.is_diverse(m[:200_000], dist, a.l, a.d).all()
    wn, cn, mn = timed(lambda: numpy_publish(codes, ok, a.l, seed=0), a.numpy_repeat)
    assert S.is_diverse(mn[:200_000], dist, a.l, a.d).all()
    print(f"  NumPy     simple    pcg64    1 thread(s): wall {wn:7.3f} s "
          f"({a.n / wn / 1e6:6.1f} M rows/s)   CPU {cn:7.3f} s")
    # same law: value frequencies of the first 10^6 rows agree
    mk = S.semantic_sets(codes, dist, a.l, a.d, seed=9, research_seed=True)
    k = min(a.n, 1_000_000)
    diff = np.abs(S._unpack(mk[:k], a.F).mean(axis=0) - S._unpack(mn[:k], a.F).mean(axis=0)).max()
    print(f"  max |value frequency C - NumPy| over the first {k:,} rows: {diff:.4f}")
    print(f"load average at end: {load()}")
    for rng in ("chacha20", "philox"):
        w1, c1 = res[("simple", rng, 1)]
        wt, _ = res[("simple", rng, nt)]
        print(f"RATIO NumPy / C (simple, {rng}): CPU 1 thread {cn / c1:.1f}x, "
              f"wall 1 thread {wn / w1:.1f}x, wall {nt} threads {wn / wt:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
