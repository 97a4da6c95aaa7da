"""STAND-INS for the OCC and SAL data sets of paper 004 (Sec. 6.2, Table 8).

Paper 004 (after Xiao & Tao's Anatomy and Xiao, Yi & Tao 2010) uses two
extracts of the IPUMS census microdata, about 600,000 records each: OCC-d
takes the first d of Age, Gender, Marital Status, Race, Birth Place,
Education, Work Class as QIDs and Occupation as the sensitive attribute;
SAL-d the same QIDs and Income.  Table 8 gives only the domain sizes:

    Age 80, Gender 2, Marital Status 6, Race 9, Birth Place 124,
    Education 24, Work Class 9, Occupation 50, Income 50.

We do not have the extracts, so :func:`ipums_like` generates a table with
exactly these domains and *plausible* (not published) marginals and
dependences: a latent class model (as :mod:`anonset.datasets.synthetic`) in
which every class has an age and an education level, and Marital Status,
Occupation and Income follow them.  Every frame it returns carries
``frame.attrs["stand_in"]``, and docs/results/004 labels every figure made
from it as a stand-in: results on it are comparable with the paper's in
shape and trend only, never in value.

The marginals are chosen so that both sensitive attributes are 15-eligible
(no value above 1/15 of the records), because the paper runs Anatomy,
Mondrian and TP on OCC-5 and SAL-5 at l = 15 (Fig. 2).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

__all__ = ["ipums_like", "occ", "sal", "domains", "IPUMS_ROWS", "TABLE8", "QIDS", "ORDERED",
           "STAND_IN"]

#: Records of each extract (about 600k in the papers).
IPUMS_ROWS = 600_000
#: Table 8 of paper 004: attribute -> number of distinct values.
TABLE8 = {"Age": 80, "Gender": 2, "Marital Status": 6, "Race": 9, "Birth Place": 124,
          "Education": 24, "Work Class": 9, "Occupation": 50, "Income": 50}
#: The QIDs in the order OCC-d / SAL-d take them.
QIDS = ("Age", "Gender", "Marital Status", "Race", "Birth Place", "Education", "Work Class")
#: Attributes whose domain order is meaningful (interval query predicates).
ORDERED = ("Age", "Education", "Income")
STAND_IN = ("synthetic stand-in for paper 004's IPUMS extract (Table 8 domain sizes; "
            "marginals and dependences are NOT the real data's)")

_K = 24                    # latent classes
_SHAPE_SEED = 2015         # the fixed shape: class weights and conditionals
_CAP = 0.055               # largest share of a sensitive value (< 1/15)


def _bump(d: int, center: float, width: float) -> np.ndarray:
    x = np.arange(d)
    w = np.exp(-0.5 * ((x - center) / width) ** 2)
    return w / w.sum()


@functools.lru_cache(maxsize=1)
def _shape():
    """Class weights and per-class conditional distributions (read-only)."""
    rng = np.random.default_rng(_SHAPE_SEED)
    w = rng.dirichlet(np.full(_K, 3.0))
    age_c = rng.uniform(5, 65, _K)                # age index (0 = 16 years)
    edu_c = rng.uniform(4, 21, _K)                # education level index
    cond = {}
    cond["Age"] = np.array([0.85 * _bump(80, a, 9.0) + 0.15 * _bump(80, 25, 30.0) for a in age_c])
    male = rng.beta(4, 4, _K)
    cond["Gender"] = np.stack([male, 1 - male], axis=1)
    # never married, married, divorced, widowed, separated, married-absent
    mar = []
    for a in age_c:
        young = np.clip(1 - a / 30, 0, 1)
        old = np.clip((a - 45) / 20, 0, 1)
        p = np.array([0.05 + 0.7 * young, 0.55 - 0.3 * young, 0.12, 0.02 + 0.3 * old, 0.03, 0.02])
        mar.append(rng.dirichlet(60 * p / p.sum()))
    cond["Marital Status"] = np.array(mar)
    race = np.array([0.78, 0.11, 0.04, 0.02, 0.015, 0.012, 0.01, 0.008, 0.005])
    cond["Race"] = rng.dirichlet(40 * race / race.sum(), _K)
    bp = 1.0 / np.arange(1, 125) ** 1.6
    bp[0] = 8.0 * bp[1:].sum()                    # mostly born in the country
    cond["Birth Place"] = rng.dirichlet(200 * bp / bp.sum(), _K) * 0.99 + 0.01 / 124
    cond["Education"] = np.array([0.8 * _bump(24, e, 2.5) + 0.2 / 24 for e in edu_c])
    wc = np.array([0.70, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02, 0.01, 0.01])
    cond["Work Class"] = rng.dirichlet(30 * wc / wc.sum(), _K)
    # occupation: each class concentrates on occupations near its education
    # level on a 50-value scale, over a broad Zipf-like floor
    occ = []
    for e, m in zip(edu_c, male):
        center = e / 23 * 49 + rng.normal(0, 4)
        occ.append(0.7 * _bump(50, center, 5.0) + 0.3 * rng.dirichlet(np.full(50, 2.0)))
    cond["Occupation"] = np.array(occ)
    # income: 50 classes, level rising with education and age (to ~50)
    inc = []
    for a, e in zip(age_c, edu_c):
        level = 8 + 1.3 * e + 0.25 * min(a, 35) + rng.normal(0, 3)
        inc.append(0.85 * _bump(50, level, 7.0) + 0.15 / 50)
    cond["Income"] = np.array(inc)
    # both sensitive attributes 15-eligible overall (Fig. 2 runs l = 15)
    # (mixing every class with the uniform distribution mixes the marginal)
    for s in ("Occupation", "Income"):
        top = float((w @ cond[s]).max())
        if top > _CAP:
            lam = (top - _CAP) / (top - 1.0 / 50)
            cond[s] = (1 - lam) * cond[s] + lam / 50
    for v in cond.values():
        v /= v.sum(axis=1, keepdims=True)
        v.flags.writeable = False
    return w, cond


def ipums_like(n_rows: int = IPUMS_ROWS, seed: int = 0) -> pd.DataFrame:
    """The stand-in table: the nine attributes of Table 8, integer-coded
    values with the published domain sizes (Age 16..95, the others
    ``0..d-1``), ``n_rows`` records.

    Examples
    --------
    >>> df = ipums_like(2000, seed=1)
    >>> df.shape, int(df["Birth Place"].max()) < 124
    ((2000, 9), True)
    >>> "stand-in" in df.attrs["stand_in"]
    True
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise ValueError(f"n_rows must be a positive integer, got {n_rows!r}")
    w, cond = _shape()
    rng = np.random.default_rng(seed)
    cls = rng.choice(_K, size=int(n_rows), p=w)
    cols = {}
    for name, d in TABLE8.items():
        out = np.empty(int(n_rows), dtype=np.int32)
        for k in range(_K):
            rows = np.flatnonzero(cls == k)
            out[rows] = rng.choice(d, size=rows.size, p=cond[name][k])
        cols[name] = out
    cols["Age"] = cols["Age"] + 16
    df = pd.DataFrame(cols)
    df.attrs["stand_in"] = STAND_IN
    return df


def _extract(sensitive: str, d: int, n_rows: int, seed: int) -> pd.DataFrame:
    if not 1 <= d <= len(QIDS):
        raise ValueError(f"d must be in 1..{len(QIDS)}, got {d}")
    df = ipums_like(n_rows, seed)[list(QIDS[:d]) + [sensitive]]
    df.attrs["stand_in"] = STAND_IN
    return df


def occ(d: int, n_rows: int = IPUMS_ROWS, seed: int = 0) -> pd.DataFrame:
    """OCC-d stand-in: the first ``d`` QIDs and Occupation (sensitive)."""
    return _extract("Occupation", d, n_rows, seed)


def sal(d: int, n_rows: int = IPUMS_ROWS, seed: int = 0) -> pd.DataFrame:
    """SAL-d stand-in: the first ``d`` QIDs and Income (sensitive)."""
    return _extract("Income", d, n_rows, seed)


def domains(columns) -> dict:
    """Declared domains of the stand-in's columns (all values, in order)."""
    out = {}
    for c in columns:
        d = TABLE8[c]
        out[c] = tuple(range(16, 16 + d)) if c == "Age" else tuple(range(d))
    return out
