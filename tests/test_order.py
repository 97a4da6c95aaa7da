"""The keyed row order's kernels (csrc/common/order.c): the radix argsort is
NumPy's stable argsort, and the rank words are the first 64 bits of the
generator blocks the documented stream defines."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from anonset.io import keys
from anonset.randomized import _kernels


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.integers(0, 63))
def test_rank_order_is_the_stable_argsort(values, shift):
    # keys with few distinct digits exercise the skipped passes and the ties
    r = np.array(values, dtype=np.uint64) >> np.uint64(shift)
    assert np.array_equal(_kernels.rank_order(r), np.argsort(r, kind="stable"))


@pytest.mark.parametrize("n", [0, 1, 2047, 2048, 70_001])
def test_rank_order_large_and_tied(n):
    rng = np.random.default_rng(n)
    for r in (rng.integers(0, 2**63, n, dtype=np.uint64),
              rng.integers(0, 4, n).astype(np.uint64),
              np.full(n, 5, dtype=np.uint64)):
        assert np.array_equal(_kernels.rank_order(r), np.argsort(r, kind="stable"))


@pytest.mark.parametrize("rng", ["chacha20", "philox"])
@pytest.mark.parametrize("row0,n", [(0, 0), (0, 1), (7, 63), (1000, 64), (3, 1000)])
def test_rank_words_are_the_first_words_of_each_block(rng, row0, n):
    key = keys.derive_key(b"k" * 32, "row-order")
    blocks = _kernels.fill(key, row0, 0, 0, n, rng).reshape(n, 16)
    want = np.ascontiguousarray(blocks[:, :2]).view(np.uint64).ravel()
    got = keys.row_ranks(b"k" * 32, row0, n, rng=rng)
    assert np.array_equal(got, want)


def test_shuffled_order_is_a_permutation():
    order = keys.shuffled_order(b"s" * 32, 10_000)
    assert np.array_equal(np.sort(order), np.arange(10_000))
    assert not np.array_equal(order, np.arange(10_000))


@pytest.mark.parametrize("n", [2, 100, 5_000, 300_000])
def test_rank_order_ties_above_the_sorted_bits(n):
    # keys equal on their top bits and apart below the bits the packed sort
    # moves: the runs of ties it orders by insertion, and (one long run) the
    # sort of every digit it falls back to
    rng = np.random.default_rng(n)
    top = rng.integers(0, 2**20, n, dtype=np.uint64) << np.uint64(44)
    for r in (top | rng.integers(0, 2**20, n, dtype=np.uint64),            # short runs
              top[:1].repeat(n) | rng.integers(0, 2**40, n, dtype=np.uint64) << np.uint64(1),
              (rng.integers(0, 8, n, dtype=np.uint64) << np.uint64(61))
              | rng.integers(0, 3, n, dtype=np.uint64),                      # long runs
              np.sort(rng.integers(0, 2**64, n, dtype=np.uint64))[::-1].copy()):
        assert np.array_equal(_kernels.rank_order(r), np.argsort(r, kind="stable"))
