"""Data shipped with anonset.

UCI Adult ("Census Income"; Becker & Kohavi 1996; CC BY 4.0): 48,842 records,
15 attributes, training and test parts joined; '?' marks a missing value.
Generalization hierarchies in ARX format for nine of its attributes.
"""
from __future__ import annotations

from importlib import resources

import pandas as pd

from ..hierarchy import Hierarchy
from ..schema import Schema

__all__ = ["load_adult", "adult_hierarchy", "adult_schema", "ADULT_QIDS", "ADULT_AGE_BINS",
           "ADULT_HIERARCHIES"]

ADULT_HIERARCHIES = ("age", "education", "marital-status", "native-country", "occupation",
                     "race", "salary-class", "sex", "workclass")
#: The attributes of paper 000's Adult experiments: age in 10-year bins plus
#: the 9 categorical attributes.
ADULT_QIDS = ("age", "workclass", "education", "marital-status", "occupation", "relationship",
              "race", "sex", "native-country", "salary-class")
ADULT_AGE_BINS = tuple(range(10, 101, 10))
#: Declared domains of the attributes without a shipped hierarchy.
ADULT_DOMAINS = {
    "relationship": ("Husband", "Not-in-family", "Other-relative", "Own-child", "Unmarried",
                     "Wife"),
}


def _data_path(*parts):
    return resources.files(__name__).joinpath("data", "adult", *parts)


def load_adult(*, complete: bool = True) -> pd.DataFrame:
    """The Adult table.

    Parameters
    ----------
    complete : bool
        Drop every record with a missing value ('?'), leaving 45,223 records
        (the literature usually quotes 45,222).  With False all 48,842 records
        are returned, '?' included as a value.
    """
    with _data_path("adult.csv.gz").open("rb") as f:
        df = pd.read_csv(f, compression="gzip")
    if complete:
        df = df[(df != "?").all(axis=1)].reset_index(drop=True)
    return df


def adult_hierarchy(name: str) -> Hierarchy:
    """The shipped ARX hierarchy of an Adult attribute."""
    if name not in ADULT_HIERARCHIES:
        raise ValueError(f"no shipped hierarchy for {name!r}; available: {ADULT_HIERARCHIES}")
    return Hierarchy.from_csv(_data_path("hierarchies", f"{name}.csv").read_text(encoding="utf-8"))


def adult_schema(df: pd.DataFrame | None = None, *, attributes=ADULT_QIDS,
                 hierarchies: bool = True, rest: str = "drop") -> Schema:
    """Schema of paper 000's Adult set-up: the given attributes are sensitive
    QIDs, age is categorized in 10-year bins, categorical domains come from
    the shipped hierarchies (relationship's is declared in ADULT_DOMAINS).
    Every domain is declared.

    Parameters
    ----------
    rest : {'drop', 'other'}
        The role of every other column: dropped (default), or passed through
        unchanged ('other': only when you know none of them identifies anyone).
    """
    from ..validate import check_choice
    check_choice(rest, "rest", ("drop", "other"))
    if df is None:
        df = load_adult()
    attributes = list(attributes)
    hier = {}
    if hierarchies:
        for a in attributes:
            if a in ADULT_HIERARCHIES and a != "age":
                hier[a] = adult_hierarchy(a)
    bins = {"age": ADULT_AGE_BINS} if "age" in attributes else {}
    domains = {a: ADULT_DOMAINS[a] for a in attributes if a in ADULT_DOMAINS}
    others = [c for c in df.columns if c not in attributes]
    return Schema.infer(df, sensitive=attributes, bins=bins, hierarchies=hier, domains=domains,
                        **{rest: others})
