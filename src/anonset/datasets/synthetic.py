"""Synthetic tables shaped like the data of paper 000's experiments.

:func:`census_like_codes` / :func:`census_like` make a table shaped like the
US Census 1990 data (UCI "US Census Data (1990)") that paper 000 uses for its
speed figures: 2,458,285 records x 68 categorical attributes with domain sizes
between 2 and 18.  The real file is 360 MB and not shipped; benchmarks and
scale tests only need its shape and some realistic structure, which this
generator gives in a few seconds.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

__all__ = ["census_like", "census_like_codes", "census_domain_sizes", "CENSUS_ROWS",
           "CENSUS_ATTRS"]

#: Records and attributes of the US Census 1990 data set used by paper 000.
CENSUS_ROWS = 2_458_285
CENSUS_ATTRS = 68

_N_CLASSES = 16
_SHAPE_SEED = 1990        # domain sizes and class profiles: the table's fixed "shape"
_RES_BITS = 16            # probabilities are quantized to 1 / 2**16


def census_domain_sizes(n_attrs: int = CENSUS_ATTRS) -> list:
    """Domain sizes d_j in 2..18, the same for every seed.

    Skewed toward small domains as in the Census 1990 data (many binary and
    small coded attributes, a few with 10-18 values); the first attribute has
    2 values and the second 18, so both ends of the range are always present.
    """
    if isinstance(n_attrs, bool) or not isinstance(n_attrs, (int, np.integer)) or n_attrs < 1:
        raise ValueError(f"n_attrs must be a positive integer, got {n_attrs!r}")
    rng = np.random.default_rng(_SHAPE_SEED)
    # geometric-like weights over 2..18: about a fifth binary, a tail to 18
    sizes = np.arange(2, 19)
    weights = 0.82 ** (sizes - 2)
    d = rng.choice(sizes, size=int(n_attrs), p=weights / weights.sum())
    d[0] = 2
    if n_attrs > 1:
        d[1] = 18
    return [int(v) for v in d]


@functools.lru_cache(maxsize=4)
def _shape(n_attrs: int):
    """Class weights and, per attribute, the inverse-CDF lookup table of each
    class's conditional distribution (int8, shape (K, 2**16))."""
    d = census_domain_sizes(n_attrs)
    rng = np.random.default_rng(_SHAPE_SEED + 1)
    # cached (about 0.9 s for 68 attributes); the tables are read-only
    class_w = rng.dirichlet(np.full(_N_CLASSES, 2.0))
    res = 1 << _RES_BITS
    grid = np.arange(res, dtype=np.float64) + 0.5
    tables = []
    for dj in d:
        # skewed base marginal: Dirichlet(0.8) mixed with 10 % uniform
        base = 0.9 * rng.dirichlet(np.full(dj, 0.8)) + 0.1 / dj
        # strength of the dependence on the class: concentration 1.5-40
        # (log-uniform); small means a strongly class-dependent attribute
        alpha = float(np.exp(rng.uniform(np.log(1.5), np.log(40.0))))
        cond = rng.dirichlet(alpha * base, size=_N_CLASSES)
        # a floor so that every value occurs in every class (2 % of the mass)
        cond = 0.98 * cond + 0.02 * base
        cum = np.cumsum(cond, axis=1) * res
        cum[:, -1] = res            # guard against rounding: the last bin ends at 2**16
        tab = np.empty((_N_CLASSES, res), dtype=np.int8)
        for c in range(_N_CLASSES):
            tab[c] = np.searchsorted(cum[c], grid, side="right")
        tab = tab.ravel()
        tab.flags.writeable = False
        tables.append(tab)
    cls_cum = np.cumsum(class_w) * res
    cls_cum[-1] = res
    cls_tab = np.searchsorted(cls_cum, grid, side="right").astype(np.int32)
    cls_tab.flags.writeable = False
    return d, cls_tab, tables


def _u16(rng, n):
    """n uniform 16-bit integers (raw generator bytes, little-endian)."""
    return np.frombuffer(rng.bytes(2 * n), dtype="<u2")


def census_like_codes(n_rows: int = CENSUS_ROWS, n_attrs: int = CENSUS_ATTRS, seed: int = 0):
    """Integer codes of a synthetic table shaped like US Census 1990.

    Generator (a latent class model, the classic model for census-type
    categorical data):

    1. Every record draws one of ``K = 16`` hidden classes (class weights
       Dirichlet(2), fixed).
    2. Attribute j has a skewed base marginal (Dirichlet(0.8) probabilities
       mixed with 10 % uniform) and, per class, a conditional distribution
       ``Dirichlet(alpha_j * base_j)`` mixed with 2 % of the base, where the
       concentration ``alpha_j`` (log-uniform in 1.5..40) sets how strongly
       the attribute depends on the class.  Given its class, a record's
       attributes are independent; marginally they are associated (Cramer's V
       of pairs typically 0.05-0.4, strongest between strongly
       class-dependent attributes).
    3. Draws are inverse-CDF lookups with 16-bit uniforms: a table of
       ``K x 2**16`` int8 codes per attribute (probabilities quantized to
       1/65536), so the full table takes about a second.

    Domain sizes, class weights and conditional distributions depend only on
    ``n_attrs`` (the fixed "shape", see :func:`census_domain_sizes`); the
    records depend on ``seed``.  Every value of every domain has probability
    at least 0.002 / d_j, so all values occur at full size.

    Parameters
    ----------
    n_rows : int
        Records (default 2,458,285 as in the real data).
    n_attrs : int
        Attributes (default 68).
    seed : int
        Seed of the records.

    Returns
    -------
    codes : dict
        ``{name: int32 array of n_rows codes in [0, d_j)}``; names ``a00``, ``a01``, ...
    d : dict
        ``{name: d_j}``.

    Examples
    --------
    >>> codes, d = census_like_codes(1000, 5, seed=1)
    >>> sorted(d.items())[:2]
    [('a00', 2), ('a01', 18)]
    >>> codes["a01"].dtype, len(codes["a01"])
    (dtype('int32'), 1000)
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 0:
        raise ValueError(f"n_rows must be a non-negative integer, got {n_rows!r}")
    if isinstance(n_attrs, bool) or not isinstance(n_attrs, (int, np.integer)) or n_attrs < 1:
        raise ValueError(f"n_attrs must be a positive integer, got {n_attrs!r}")
    n_rows, n_attrs = int(n_rows), int(n_attrs)
    d, cls_tab, tables = _shape(n_attrs)
    rng = np.random.default_rng(seed)
    # class << 16 | uniform indexes the (K, 2**16) table of an attribute
    cls = cls_tab[_u16(rng, n_rows)] << _RES_BITS
    names = [f"a{j:02d}" for j in range(n_attrs)]
    codes = {}
    idx = np.empty(n_rows, dtype=np.int32)
    for name, tab in zip(names, tables):
        np.bitwise_or(cls, _u16(rng, n_rows), out=idx)
        codes[name] = np.take(tab, idx).astype(np.int32)
    return codes, dict(zip(names, d))


def census_like(n_rows: int = CENSUS_ROWS, n_attrs: int = CENSUS_ATTRS, seed: int = 0,
                categorical: bool = False) -> pd.DataFrame:
    """The table of :func:`census_like_codes` as a pandas DataFrame.

    Columns are int32 codes, or, with ``categorical=True``, pandas
    Categoricals whose categories are the full domain ``0..d_j-1`` (so that
    schema inference sees declared domains).  ``df.attrs["d"]`` holds the
    domain sizes.

    Examples
    --------
    >>> df = census_like(100, 3, seed=0)
    >>> df.shape
    (100, 3)
    """
    codes, d = census_like_codes(n_rows, n_attrs, seed)
    if categorical:
        cols = {n: pd.Categorical.from_codes(c, categories=range(d[n])) for n, c in codes.items()}
    else:
        cols = codes
    df = pd.DataFrame(cols, copy=False)
    df.attrs["d"] = dict(d)
    return df
