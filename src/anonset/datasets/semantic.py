"""Data sets of paper 001, Sec. 6.2 (Table 11).

* :func:`income` -- the synthetic income data set: 100,000 records, QIDs age
  (decade) and sex, annual income in F = 14 classes correlated with them.
* :func:`adult_education` -- Adult, sensitive 'education' (16 leaves) with the
  shipped hierarchy (tree distance = LCA height, Fig. 7).
* :func:`adult_fnlwgt` -- Adult, sensitive 'fnlwgt' in 148 classes.

Each returns a :class:`SemanticDataset` (frame, sensitive column, QIDs,
domain, distance).  The paper's QIDs for Adult are the other 13 attributes;
the MSE figures here use age (decade) and sex for all three data sets, the
axes of the paper's histograms (Figs. 8-10).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import adult_hierarchy, load_adult
from ..randomized.semantic import SemanticDistance

__all__ = ["SemanticDataset", "income", "adult_education", "adult_fnlwgt",
           "INCOME_CLASSES", "INCOME_VALUES", "AGE_GROUPS"]

#: The 14 classes of the National Tax Agency's salary survey (million yen):
#: <= 1, 1-2, ..., 9-10, 10-15, 15-20, 20-25, > 25.
INCOME_CLASSES = tuple(f"{a}-{a + 1}M" for a in range(10)) + ("10-15M", "15-20M", "20-25M", ">25M")
#: Representative values (class mid-points, million yen) for a value distance.
INCOME_VALUES = tuple([a + 0.5 for a in range(10)] + [12.5, 17.5, 22.5, 27.5])
_INCOME_EDGES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25], dtype=np.float64)

AGE_GROUPS = ("10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80-89", "90-99")

# Median annual income (million yen) by age group and sex, and the share of
# each age group.  Shaped after the published survey's pattern (men peak in
# their 50s near 6.7M, women stay near 3M), NOT copied from its tables: the
# survey itself is not redistributable here.
_AGES = ("20-29", "30-39", "40-49", "50-59", "60-69", "70-79")
_AGE_SHARE = np.array([0.17, 0.20, 0.23, 0.20, 0.14, 0.06])
_MEDIAN = {"male": np.array([3.4, 4.9, 5.9, 6.6, 4.6, 3.3]),
           "female": np.array([2.9, 3.1, 3.1, 3.0, 2.2, 1.9])}
_SIGMA = {"male": 0.55, "female": 0.65}


@dataclass(frozen=True)
class SemanticDataset:
    frame: pd.DataFrame
    sensitive: str
    qids: tuple
    domain: tuple
    distance: SemanticDistance

    @property
    def codes(self) -> np.ndarray:
        """Codes of the sensitive column in ``domain``."""
        idx = {v: i for i, v in enumerate(self.domain)}
        return self.frame[self.sensitive].map(idx).to_numpy(np.int32)

    def qid_domains(self) -> dict:
        return {q: tuple(sorted(pd.unique(self.frame[q]).tolist())) for q in self.qids}


def income(n: int = 100_000, seed: int = 0, *, values: bool = False) -> SemanticDataset:
    """The synthetic income data set of Sec. 6.2.

    Generation (seeded, NumPy PCG64): sex uniform; age group from a fixed
    age distribution (20s..70s); income = median(age, sex) * exp(sigma * Z),
    Z standard normal (log-normal, sigma 0.55 for men, 0.65 for women), binned
    into the 14 survey classes.  So income depends on both QIDs, as in the
    paper.  ``values=True`` uses the class mid-points (million yen) as the
    distance (Example 2); the default is |i - j|.
    """
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    g = np.random.default_rng(seed)
    sex = np.where(g.random(n) < 0.5, "male", "female")
    age = g.choice(len(_AGES), size=n, p=_AGE_SHARE)
    med = np.where(sex == "male", _MEDIAN["male"][age], _MEDIAN["female"][age])
    sig = np.where(sex == "male", _SIGMA["male"], _SIGMA["female"])
    inc = med * np.exp(sig * g.standard_normal(n))
    cls = np.searchsorted(_INCOME_EDGES, inc, side="right")
    frame = pd.DataFrame({"age": np.array(_AGES)[age], "sex": sex,
                          "income": np.array(INCOME_CLASSES)[cls]})
    dist = SemanticDistance.ordered(INCOME_VALUES if values else len(INCOME_CLASSES))
    return SemanticDataset(frame, "income", ("age", "sex"), INCOME_CLASSES, dist)


def _age_group(age) -> np.ndarray:
    a = np.clip(np.asarray(age) // 10, 1, 9)
    return np.array(AGE_GROUPS)[a - 1]


def adult_education() -> SemanticDataset:
    """Adult (45,223 complete records), sensitive 'education' (16 values),
    tree distance from the shipped hierarchy (depth 4, Fig. 7)."""
    df = load_adult()
    h = adult_hierarchy("education")
    frame = pd.DataFrame({"age": _age_group(df["age"]), "sex": df["sex"].to_numpy(),
                          "education": df["education"].to_numpy()})
    return SemanticDataset(frame, "education", ("age", "sex"), tuple(h.leaves),
                           SemanticDistance.tree(h))


def adult_fnlwgt() -> SemanticDataset:
    """Adult, sensitive 'fnlwgt' in 148 classes of width 10,000 starting at
    the minimum (13,492): class = (fnlwgt - 13492) // 10000, 0..147; ordered
    distance |i - j|.  Classes that never occur are kept in the domain."""
    df = load_adult()
    lo = 13492
    cls = ((df["fnlwgt"].to_numpy() - lo) // 10000).astype(np.int64)
    labels = tuple(f"[{lo + 10000 * k}, {lo + 10000 * (k + 1)})" for k in range(148))
    if cls.max() >= len(labels):
        raise ValueError("fnlwgt above the 148 declared classes")
    frame = pd.DataFrame({"age": _age_group(df["age"]), "sex": df["sex"].to_numpy(),
                          "fnlwgt": np.array(labels)[cls]})
    return SemanticDataset(frame, "fnlwgt", ("age", "sex"), labels, SemanticDistance.ordered(148))
