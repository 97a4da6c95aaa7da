"""A process forked after OpenMP teams ran (H54).

GNU OpenMP's thread pool does not survive fork(): a ``multiprocessing``
'fork' child (the default start method on Linux before Python 3.14) whose
parent had run a kernel on two threads hung for ever in its first kernel of
two threads or more (publish, EM).  After a fork every kernel now runs on one
thread (anonset._fork), with the same results, and a 'spawn' child uses its
threads as before."""
from __future__ import annotations

import multiprocessing as mp
import os
import sys

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import _fork
from anonset.emd import Ground, effective_n_threads, emd_batch
from anonset.randomized import _kernels

# Linux: GNU OpenMP (macOS wheels use LLVM libomp and spawn by default)
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GNU OpenMP")

KEY = "9f3c1e7a52b84d06e1a9c37f5b2d8e40"
#: Seconds a child may take before it counts as hung (it needs about one).
HUNG_S = 120


def _table(n=120_000):
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.integers(0, 8, n), "b": rng.integers(0, 5, n)})


def _work(n_threads):
    """Every kind of threaded kernel: sampling, counting and EM, EMD, msa."""
    df = _table()
    pub = anonset.publish(df, anonset.Diversity(3), sensitive=["a", "b"], seed=KEY,
                          domains={"a": list(range(8)), "b": list(range(5))},
                          n_threads=n_threads)
    est = anonset.reconstruct(pub, ["a", "b"], "em", n_threads=n_threads)
    P = np.random.default_rng(1).random((50_000, 8))
    P /= P.sum(axis=1, keepdims=True)
    e = emd_batch(P, np.full(8, 1 / 8), Ground.ordered(8), n_threads=n_threads)
    from anonset.msa import anonymize_msa
    small = _table(3_000).assign(q=lambda f: np.arange(len(f)) % 97)
    m = anonymize_msa(small, ["q"], ["a", "b"], 5, 0.3, seed=KEY)
    return (pub.to_mask_frame().to_numpy().tobytes(), np.asarray(est.counts).tobytes(),
            e.tobytes(), m.sizes.tobytes())


def _child(queue, n_threads):
    try:
        queue.put((_fork.in_fork_child(), _kernels.effective_threads(0),
                   effective_n_threads(), _work(n_threads)))
    except BaseException as e:          # pragma: no cover - reported to the parent
        queue.put(repr(e))


def _run(method, n_threads):
    ctx = mp.get_context(method)
    queue = ctx.Queue()
    p = ctx.Process(target=_child, args=(queue, n_threads))
    p.start()
    try:
        got = queue.get(timeout=HUNG_S)
    except Exception:                   # queue.Empty: the child hangs
        got = None
    p.join(10)
    if p.is_alive():
        p.kill()
        p.join()
    assert got is not None, f"a {method!r} child asked for {n_threads} threads hangs"
    assert not isinstance(got, str), got
    return got


@pytest.mark.parametrize("n_threads", [2, None])
def test_a_fork_child_of_a_threaded_parent_finishes_on_one_thread(n_threads):
    expected = _work(2)                 # the parent runs teams of two threads first
    assert not _fork.in_fork_child()
    forked, threads, emd_threads, result = _run("fork", n_threads)
    assert forked and threads == 1 and emd_threads == 1
    assert result == expected           # the same release, counts and distances


def test_a_spawn_child_keeps_its_threads(monkeypatch):
    _work(2)
    # (a Dask cluster started by an earlier test leaves OMP_NUM_THREADS=1 in
    # this process's environment, which a spawned child reads)
    for var in ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "OMP_DYNAMIC"):
        monkeypatch.delenv(var, raising=False)
    forked, threads, _, _ = _run("spawn", 2)
    assert not forked
    assert threads == len(os.sched_getaffinity(0))     # OpenMP's default: every CPU
