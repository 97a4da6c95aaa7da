"""Privacy models of paper 000: (l_1..l_q)-diversity (frequency, entropy),
(k_1..k_q)-anonymity, (t_1..t_q)-closeness, and l and t at once (Sec. VII-D).

A model holds one value for all sensitive attributes or one per attribute
(a mapping that must name every sensitive attribute).  Models are plain data;
:mod:`anonset.params` turns them into the publishing parameters (p_j, eta_j).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Union

__all__ = ["Diversity", "EntropyDiversity", "Anonymity", "Closeness", "DiversityCloseness",
           "model_from_dict"]

Value = Union[int, float, Mapping]


def _per_attr(value, name: str, attr: str, kind=float):
    if isinstance(value, Mapping):
        if attr not in value:
            raise ValueError(f"{name} has no value for sensitive attribute {attr!r}; "
                             f"give one per attribute or a single value")
        v = value[attr]
    else:
        v = value
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{name} for {attr!r} must be a number, got {v!r}")
    return kind(v) if kind is not int else v


def _check_mapping(value, name, check):
    items = value.items() if isinstance(value, Mapping) else [(None, value)]
    for attr, v in items:
        where = f" for {attr!r}" if attr is not None else ""
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not check(v):
            yield f"{name}{where} {v!r}"


@dataclass(frozen=True)
class Diversity:
    """Frequency (l_1..l_q)-diversity (Def. 12): every equivalence class for S_j
    has no value of S_j with relative frequency above 1/l_j.  Parameters
    p_j = 1, eta_j = l_j (Theorem 2)."""

    l: Value
    measure: str = "frequency"

    def __post_init__(self):
        if self.measure not in ("frequency", "entropy"):
            raise ValueError(f"measure must be 'frequency' or 'entropy', got {self.measure!r}")
        bad = list(_check_mapping(self.l, "l", lambda v: float(v).is_integer() and v >= 1))
        if bad:
            raise ValueError(f"l must be an integer >= 1: {bad[0]}")

    def l_for(self, attr: str) -> int:
        return int(_per_attr(self.l, "l", attr))

    @property
    def name(self) -> str:
        return f"{self.measure}-diversity"

    def to_dict(self) -> dict:
        return {"model": "diversity", "measure": self.measure, "l": _jsonable(self.l)}


def EntropyDiversity(l: Value) -> Diversity:
    """Entropy (l_1..l_q)-diversity (Def. 14); parameters as Theorem 3."""
    return Diversity(l, measure="entropy")


@dataclass(frozen=True)
class Anonymity:
    """(k_1..k_q)-anonymity (Def. 18): every equivalence class for S_j has at
    least k_j records.  In the expanded table a record contributes eta_j rows to
    each of its classes for S_j, so eta_j = k_j, p_j = 1."""

    k: Value

    def __post_init__(self):
        bad = list(_check_mapping(self.k, "k", lambda v: float(v).is_integer() and v >= 1))
        if bad:
            raise ValueError(f"k must be an integer >= 1: {bad[0]}")

    def k_for(self, attr: str) -> int:
        return int(_per_attr(self.k, "k", attr))

    name = "anonymity"

    def to_dict(self) -> dict:
        return {"model": "anonymity", "k": _jsonable(self.k)}


@dataclass(frozen=True)
class Closeness:
    """(t_1..t_q)-closeness (Def. 16): for every possible published set of S_j,
    the distribution inferred by Bayes (eq. 12) is within EMD t_j of the whole
    table's distribution A_j.

    ground : 'auto' | 'equal' | 'ordered' | 'hierarchical' | {attribute: ...}
        Ground distance of the EMD.  'auto' uses the attribute's hierarchy if it
        has one, 'ordered' for ordinal attributes, else 'equal'.
    """

    t: Value
    ground: Union[str, Mapping] = "auto"

    def __post_init__(self):
        bad = list(_check_mapping(self.t, "t", lambda v: 0 <= v <= 1 or v == math.inf))
        if bad:
            raise ValueError(f"t must lie in [0, 1] (or be inf for an exact attribute): {bad[0]}")

    def t_for(self, attr: str) -> float:
        return float(_per_attr(self.t, "t", attr))

    def ground_for(self, attr: str) -> str:
        g = self.ground
        if isinstance(g, Mapping):
            g = g.get(attr, "auto")
        if g not in ("auto", "equal", "ordered", "hierarchical"):
            raise ValueError(f"ground for {attr!r} must be 'auto', 'equal', 'ordered' or "
                             f"'hierarchical', got {g!r}")
        return g

    name = "closeness"

    def to_dict(self) -> dict:
        return {"model": "closeness", "t": _jsonable(self.t), "ground": _jsonable(self.ground)}


@dataclass(frozen=True)
class DiversityCloseness:
    """Frequency and entropy (l_1..l_q)-diversity and (t_1..t_q)-closeness at
    once (Sec. VII-D): Algorithm 1 with eta ranging from l_j instead of 1."""

    l: Value
    t: Value
    ground: Union[str, Mapping] = "auto"

    def __post_init__(self):
        Diversity(self.l)
        Closeness(self.t, self.ground)

    def l_for(self, attr: str) -> int:
        return Diversity(self.l).l_for(attr)

    def t_for(self, attr: str) -> float:
        return Closeness(self.t).t_for(attr)

    def ground_for(self, attr: str) -> str:
        return Closeness(self.t, self.ground).ground_for(attr)

    name = "diversity+closeness"

    def to_dict(self) -> dict:
        return {"model": "diversity+closeness", "l": _jsonable(self.l), "t": _jsonable(self.t),
                "ground": _jsonable(self.ground)}


def _jsonable(v):
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return v


def _unjson(v):
    if isinstance(v, dict):
        return {k: _unjson(x) for k, x in v.items()}
    if v == "inf":
        return math.inf
    return v


def model_from_dict(d: Mapping):
    """Inverse of ``model.to_dict()``."""
    kind = d.get("model")
    if kind == "diversity":
        return Diversity(_unjson(d["l"]), measure=d.get("measure", "frequency"))
    if kind == "anonymity":
        return Anonymity(_unjson(d["k"]))
    if kind == "closeness":
        return Closeness(_unjson(d["t"]), ground=_unjson(d.get("ground", "auto")))
    if kind == "diversity+closeness":
        return DiversityCloseness(_unjson(d["l"]), _unjson(d["t"]), ground=_unjson(d.get("ground", "auto")))
    raise ValueError(f"unknown privacy model {kind!r}")
