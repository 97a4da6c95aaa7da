"""The census-shaped synthetic table (anonset.synthetic)."""
import numpy as np
import pandas as pd
import pytest

from anonset.synthetic import (CENSUS_ATTRS, census_domain_sizes, census_like,
                               census_like_codes)


def cramers_v(x, y, dx, dy):
    t = np.bincount(x * dy + y, minlength=dx * dy).reshape(dx, dy).astype(float)
    n = t.sum()
    e = np.outer(t.sum(1), t.sum(0)) / n
    keep = e > 0
    chi2 = (((t - e) ** 2)[keep] / e[keep]).sum()
    return np.sqrt(chi2 / n / (min(dx, dy) - 1))


def test_shapes_and_domains():
    codes, d = census_like_codes(5000, seed=3)
    assert len(codes) == CENSUS_ATTRS == 68
    assert list(codes) == list(d) == [f"a{j:02d}" for j in range(68)]
    for name, c in codes.items():
        assert c.dtype == np.int32 and c.shape == (5000,)
        assert 2 <= d[name] <= 18
        assert c.min() >= 0 and c.max() < d[name]
    sizes = list(d.values())
    assert min(sizes) == 2 and max(sizes) == 18
    assert sizes == census_domain_sizes()


def test_every_value_occurs_and_marginals_skewed():
    codes, d = census_like_codes(200_000, 12, seed=0)
    skews = []
    for name, c in codes.items():
        counts = np.bincount(c, minlength=d[name])
        assert len(counts) == d[name] and (counts > 0).all()
        skews.append(counts.max() / counts.mean())
    assert max(skews) > 2.0           # not uniform


def test_correlation_present():
    codes, d = census_like_codes(100_000, 20, seed=1)
    names = list(codes)
    vs = [cramers_v(codes[a], codes[b], d[a], d[b])
          for i, a in enumerate(names) for b in names[i + 1:]]
    assert max(vs) > 0.2
    assert np.mean(np.array(vs) > 0.1) > 0.1     # many associated pairs
    # and an independent column shows none (sanity of the statistic)
    rng = np.random.default_rng(0)
    indep = rng.integers(0, d[names[1]], len(codes[names[1]])).astype(np.int32)
    assert cramers_v(codes[names[2]], indep, d[names[2]], d[names[1]]) < 0.02


def test_deterministic_by_seed():
    a, _ = census_like_codes(3000, 10, seed=7)
    b, _ = census_like_codes(3000, 10, seed=7)
    c, _ = census_like_codes(3000, 10, seed=8)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not all(np.array_equal(a[k], c[k]) for k in a)
    # the shape (domains) does not depend on the seed
    assert census_like_codes(10, 10, seed=1)[1] == census_like_codes(10, 10, seed=2)[1]


def test_dataframe():
    df = census_like(500, 6, seed=2)
    assert df.shape == (500, 6)
    assert all(df[c].dtype == np.int32 for c in df.columns)
    assert df.attrs["d"]["a01"] == 18
    cat = census_like(500, 6, seed=2, categorical=True)
    assert isinstance(cat["a01"].dtype, pd.CategoricalDtype)
    assert list(cat["a01"].cat.categories) == list(range(18))
    np.testing.assert_array_equal(cat["a03"].cat.codes.to_numpy(), df["a03"].to_numpy())


def test_empty_and_invalid():
    codes, d = census_like_codes(0, 3)
    assert all(len(c) == 0 for c in codes.values())
    with pytest.raises(ValueError, match="n_rows"):
        census_like_codes(-1)
    with pytest.raises(ValueError, match="n_attrs"):
        census_like_codes(10, 0)
