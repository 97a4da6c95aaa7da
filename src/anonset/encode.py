"""DataFrame / Arrow columns <-> integer codes, with input validation.

Every error names the column and what was expected; nothing is silently
dropped or coerced.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .schema import Attribute, Schema, _as_frame

__all__ = ["encode", "encode_column", "decode_column", "domain_codes"]


def encode_column(col: pd.Series, attr: Attribute, *, missing: str = "error") -> np.ndarray:
    """Codes (int32) of one column under ``attr``'s domain.

    Parameters
    ----------
    missing : {'error', 'category'}
        'error' (default) refuses missing values; 'category' requires the
        domain to contain the value ``'?'`` and maps missing values to it.
    """
    name = attr.name
    if missing not in ("error", "category"):
        raise ValueError(f"missing must be 'error' or 'category', got {missing!r}")
    values = col
    isna = values.isna().to_numpy()
    if isna.any():
        if missing == "error":
            rows = np.flatnonzero(isna)
            raise ValueError(f"column {name!r} has {len(rows)} missing value(s) (first at row "
                             f"{int(rows[0])}); drop them, or pass missing='category' with '?' "
                             "in the domain")
        if "?" not in attr.domain:
            raise ValueError(f"column {name!r}: missing='category' needs '?' in the domain")
        values = values.astype(object).where(~isna, "?")
    if attr.bins is not None:
        if not (pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype)):
            raise ValueError(f"column {name!r} has bins, so it must be numeric; got dtype {values.dtype}")
        x = values.to_numpy(dtype=np.float64)
        edges = np.asarray(attr.bins)
        codes = np.searchsorted(edges, x, side="right") - 1
        bad = (codes < 0) | (codes >= len(edges) - 1) | np.isnan(x)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"column {name!r}: value {float(x[i])!r} at row {i} is outside the bins "
                             f"[{float(edges[0])}, {float(edges[-1])})")
        return codes.astype(np.int32)
    dom = attr.domain
    index = {v: i for i, v in enumerate(dom)}
    # Fast path via pandas categorical; a value not in the domain becomes -1.
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in dom):
            raise ValueError(f"column {name!r} is numeric but its domain has non-numeric values "
                             f"(e.g. {next(v for v in dom if not isinstance(v, (int, float)))!r})")
    else:
        kinds = {type(v) for v in values.unique()}
        if len(kinds) > 1:
            raise ValueError(f"column {name!r} mixes value types "
                             f"{sorted(t.__name__ for t in kinds)}; convert it to one type")
    codes = domain_codes(values, dom)
    bad = codes < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        unknown = pd.unique(values[bad])[:5]
        raise ValueError(f"column {name!r}: value {values.iloc[i]!r} at row {i} is not in the "
                         f"declared domain ({len(dom)} values); unknown values include "
                         f"{list(unknown)!r}")
    del index
    return codes


def domain_codes(values, domain) -> np.ndarray:
    """Position (int32) of each value in ``domain``; -1 for a value not in it.

    A hash lookup like ``pd.Categorical(values, categories=domain).codes``,
    which pandas 3 deprecates for values outside the categories.

    Examples
    --------
    >>> domain_codes(["b", "z", "a"], ["a", "b"]).tolist()
    [1, -1, 0]
    """
    index = pd.CategoricalDtype(list(domain)).categories
    return np.asarray(index.get_indexer(values), dtype=np.int32)


def encode(data, schema: Schema, *, missing: str = "error", columns=None) -> dict:
    """Codes of every published attribute: ``{name: int32 array}``.

    Raises ValueError for an empty table, a column missing from the data, a
    missing value, or a value outside its domain.
    """
    frame = _as_frame(data)
    if len(frame) == 0:
        raise ValueError("the table is empty: nothing to publish")
    names = columns if columns is not None else [a.name for a in schema.published]
    out = {}
    for n in names:
        attr = schema[n]
        if n not in frame.columns:
            raise ValueError(f"column {n!r} of the schema is not in the data")
        out[n] = encode_column(frame[n], attr, missing=missing)
    return out


def decode_column(codes: np.ndarray, attr: Attribute) -> np.ndarray:
    """Domain values of codes, as an object array."""
    dom = np.empty(attr.d, dtype=object)
    dom[:] = list(attr.domain)
    return dom[np.asarray(codes)]
