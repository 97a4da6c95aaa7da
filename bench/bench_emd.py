"""pytest-benchmark suite for the EMD kernels and checkers (run: pytest bench/bench_emd.py
--benchmark-enable).  Every benchmark checks its result against a reference."""
import numpy as np
import pytest

ot = pytest.importorskip("ot")

from anonset.emd import Ground, emd, emd_batch
from anonset.hierarchy import Hierarchy

HDIR = "src/anonset/datasets/data/adult/hierarchies/"


@pytest.fixture(scope="module")
def country():
    h = Hierarchy.from_csv(HDIR + "native-country.csv")
    g = Ground.tree(h)
    rng = np.random.default_rng(0)
    P = rng.random((2000, g.d))
    q = rng.random(g.d)
    return g, P / P.sum(1, keepdims=True), q / q.sum()


def test_tree_emd_pot(benchmark, country):
    g, P, q = country
    M = g.matrix()
    v = benchmark(ot.emd2, P[0], q, M)
    assert abs(v - emd(P[0], q, g)) < 1e-12


def test_tree_emd_single(benchmark, country):
    g, P, q = country
    benchmark(emd, P[0], q, g)


def test_tree_emd_batch(benchmark, country):
    g, P, q = country
    out = benchmark(emd_batch, P, q, g)
    assert abs(out[0] - ot.emd2(P[0], q, g.matrix())) < 1e-12


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("kind", ["equal", "ordered"])
def test_batch_d16(benchmark, kind, n_threads):
    rng = np.random.default_rng(1)
    P = rng.integers(0, 1000, (1_000_000, 16))
    q = rng.random(16)
    out = benchmark(emd_batch, P, q, kind, n_threads)
    assert abs(out[0] - emd(P[0], q, kind)) < 1e-14
