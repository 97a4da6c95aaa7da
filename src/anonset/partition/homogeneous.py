"""Classes that hold one value of a sensitive attribute alone.

Under k-anonymity and t-closeness (paper 003, lgb's t-buckets) a class is
allowed any distribution within t of the table's.  When the table's most
common value is common enough, a class of that value alone is within t, and
then every row of the class is published with its value told: whoever finds a
person's class (their quasi-identifiers) knows the value for certain (the
homogeneity attack of l-diversity's authors).  On AER's Affairs (601 rows),
msa-anonymize at k = 5, t = 0.3 put 65 people in 13 classes that all held
``affairs = 0`` and 5 in one class that all rated their marriage 4.

So Pseudocode 2 treats such a class as violating too and merges it, as it
merges one above t, wherever the attribute holds two values or more in the
table; ``allow_homogeneous`` names the attributes for which the paper's
Pseudocode 2 alone is wanted (reproducing its figures), and the metadata
(``homogeneous``, ``homogeneous_allowed``), the summary and the audit then
name them (docs/algorithms.md, "Classes of one value").
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__ = ["homogeneous_metadata", "homogeneous_words", "single_value_groups"]


def single_value_groups(groups: np.ndarray, values: np.ndarray) -> tuple:
    """(groups, rows) of the groups whose rows all hold one value, where the
    rows hold two values or more in all."""
    values = np.asarray(values)
    if values.size == 0 or np.unique(values).size < 2:
        return 0, 0
    _, g = np.unique(np.asarray(groups), return_inverse=True)
    _, v = np.unique(values, return_inverse=True)
    g, v = np.asarray(g).ravel(), np.asarray(v).ravel()
    n_g = int(g.max()) + 1
    lo = np.full(n_g, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(n_g, -1, dtype=np.int64)
    np.minimum.at(lo, g, v)
    np.maximum.at(hi, g, v)
    single = lo == hi
    return int(single.sum()), int(single[g].sum())


def homogeneous_metadata(found: Mapping, allowed: Sequence[str], *,
                         merged: int | None = None) -> dict:
    """The metadata entries: per attribute with such groups, their number
    and rows (``homogeneous``), the attributes the user allowed them for
    (``homogeneous_allowed``; present in every release that checks them)
    and, for msa, the classes within t merged only for holding one value
    alone (``homogeneous_merged``).  A group is a class (msa) or a bucket
    (lgb)."""
    return {"homogeneous": {a: dict(f) for a, f in found.items()},
            "homogeneous_allowed": sorted(allowed),
            **({"homogeneous_merged": int(merged)} if merged is not None else {})}


def homogeneous_words(meta: Mapping) -> str:
    """The summary's words for classes of one value a release holds ('' for
    none), e.g. "groups that hold one value alone, telling their rows'
    value (--allow-homogeneous): affairs 14 groups (70 rows)"."""
    found = meta.get("homogeneous") or {}
    if not found:
        return ""
    return ("groups that hold one value alone, telling their rows' value "
            "(--allow-homogeneous): "
            + ", ".join(f"{a} {f['groups']:,} group{'s' if f['groups'] > 1 else ''} "
                        f"({f['rows']:,} rows)" for a, f in found.items()))
