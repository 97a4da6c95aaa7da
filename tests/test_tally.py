"""The one-pass kernels of the streamed path: the table digest's tallies
(csrc/common/tally.c: the row mixes are passthrough's splitmix64 of the row
indices, the tally of small whole numbers NumPy's bincount and a sum of the
mixes per value) and the codes through a lookup table (csrc/common/lookup.c:
NumPy's gather, -1 outside the table, at every width and sign)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from anonset.passthrough import _mix64
from anonset.randomized import _kernels

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("row0", [0, 1, 12345, 2**63, 2**64 - 5])
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_row_mix_is_splitmix_of_the_row_indices(row0, n):
    rows = np.uint64(row0) + np.arange(n, dtype=np.uint64)        # wraps mod 2^64
    assert np.array_equal(_kernels.row_mix(row0, n), _mix64(rows) | np.uint64(1))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(1, 3000), st.integers(1, 9000), st.integers(0, 2**32))
def test_small_tally_is_bincount_and_the_sums_of_the_mixes(dtype, top, n, seed):
    rng = np.random.default_rng(seed)
    top = min(top, int(np.iinfo(dtype).max) + 1)
    vals = rng.integers(0, top, n).astype(dtype)
    mix = rng.integers(0, 2**64, n, dtype=np.uint64)
    counts, sums = _kernels.small_tally(vals, mix)
    want = np.zeros(int(vals.max()) + 1, dtype=np.uint64)
    np.add.at(want, vals, mix)
    assert np.array_equal(counts, np.bincount(vals))
    assert np.array_equal(sums, want)
    alone, none = _kernels.small_tally(vals)
    assert np.array_equal(alone, counts) and none is None


@pytest.mark.parametrize("vals", [np.array([3, -1], dtype=np.int8),
                                  np.array([1, 65536], dtype=np.int64),
                                  np.array([2**64 - 1], dtype=np.uint64),
                                  np.array([], dtype=np.int32),
                                  np.array([1.0, 2.0]),
                                  np.array([True, False])])
def test_small_tally_refuses_what_it_cannot_count_by_value(vals):
    assert _kernels.small_tally(vals, None, 1 << 16) is None


def test_small_tally_holds_the_top_value_of_its_range():
    counts, _ = _kernels.small_tally(np.array([65535, 0, 65535], dtype=np.uint16))
    assert len(counts) == 65536 and counts[65535] == 2 and counts[0] == 1


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(-300, 300), st.integers(1, 600),
       st.integers(0, 2000), st.integers(0, 2**32))
def test_lut_codes_is_the_gather_with_minus_one_outside(dtype, lo, size, n, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    vals = rng.integers(max(int(info.min), lo - 50), min(int(info.max), lo + size + 50) + 1,
                        n).astype(dtype) if max(int(info.min), lo - 50) <= min(
        int(info.max), lo + size + 50) else np.zeros(n, dtype=dtype)
    if n >= 2:                                 # the ends of the type
        vals[0], vals[1] = info.min, info.max
    table = rng.integers(-1, 1000, size).astype(np.int32)
    codes, none = _kernels.lut_codes(vals, lo, table)
    wide = vals.astype(object)
    inside = np.array([lo <= int(v) < lo + size for v in wide], dtype=bool)
    want = np.full(n, -1, dtype=np.int32)
    want[inside] = table[np.array([int(v) - lo for v in wide[inside]], dtype=np.int64)]
    assert np.array_equal(codes, want)
    assert none == int((codes == -1).sum())
