"""Privacy models of paper 000: (l_1..l_q)-diversity (frequency, entropy),
(k_1..k_q)-anonymity, (t_1..t_q)-closeness, and l and t at once (Sec. VII-D).

A model holds one value for all sensitive attributes or one per attribute
(a mapping that must name every sensitive attribute).  Models are plain data;
:mod:`anonset.params` turns them into the publishing parameters (p_j, eta_j).
"""
from __future__ import annotations

import fractions
import math
import numbers
from dataclasses import dataclass
from typing import Mapping, Union

from .validate import InputError

__all__ = ["Diversity", "EntropyDiversity", "Anonymity", "Closeness", "DiversityCloseness",
           "model_from_dict"]

Value = Union[int, float, Mapping]


def _number(v) -> bool:
    """Python and NumPy numbers, not bools; not a Fraction, which no metadata
    writer can write (H28: published, then every writer raised TypeError):
    refused as a Decimal is."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, fractions.Fraction)) \
        and type(v).__name__ != "bool_"


def _per_attr(value, name: str, attr: str, kind=float):
    if isinstance(value, Mapping):
        if attr not in value:
            raise InputError(f"gives no value for the sensitive column {attr!r}", param=name,
                             expected="one value for all, or one per sensitive column")
        v = value[attr]
    else:
        v = value
    if not _number(v):
        raise InputError(f"got {v!r}", param=name, column=attr, expected="a number")
    return kind(v)


def _plain(value):
    """NumPy scalars (one, or in a mapping) as Python numbers, so that models
    compare, hash and serialize as the same values."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "item") and _number(value):
        return value.item()
    return value


GROUNDS = ("auto", "equal", "ordered", "hierarchical")


def _check_ground(ground) -> None:
    """A ground distance named (one, or one per attribute) is one we know, when
    the model is made, not when a column first asks for it."""
    items = ground.items() if isinstance(ground, Mapping) else [(None, ground)]
    for attr, g in items:
        if not isinstance(g, str) or g not in GROUNDS:
            raise InputError(f"got {g!r}", param="ground", column=attr,
                             expected="auto, equal, ordered or hierarchical")


def _as_int(value):
    """Integral numbers (one, or in a mapping) as ints, once checked: a model
    made with l = 2.0 is the model made with l = 2 (same metadata, equal)."""
    if isinstance(value, Mapping):
        return {k: _as_int(v) for k, v in value.items()}
    return int(value)


def _check_mapping(value, name, check, expected):
    """Every value of a model parameter (one, or one per attribute) checked."""
    items = value.items() if isinstance(value, Mapping) else [(None, value)]
    for attr, v in items:
        if not _number(v) or not check(v):
            raise InputError(f"got {v!r}", param=name, column=attr, expected=expected)


@dataclass(frozen=True)
class Diversity:
    """Frequency (l_1..l_q)-diversity (Def. 12): every equivalence class for S_j
    has no value of S_j with relative frequency above 1/l_j.  Parameters
    p_j = 1, eta_j = l_j (Theorem 2)."""

    l: Value
    measure: str = "frequency"

    def __post_init__(self):
        if self.measure not in ("frequency", "entropy"):
            raise InputError(f"got {self.measure!r}", param="measure",
                             expected="frequency or entropy")
        object.__setattr__(self, "l", _plain(self.l))
        _check_mapping(self.l, "l", lambda v: float(v).is_integer() and v >= 1,
                       "an integer >= 1")
        object.__setattr__(self, "l", _as_int(self.l))

    def l_for(self, attr: str) -> int:
        return _per_attr(self.l, "l", attr, kind=int)

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
        object.__setattr__(self, "k", _plain(self.k))
        _check_mapping(self.k, "k", lambda v: float(v).is_integer() and v >= 1,
                       "an integer >= 1")
        object.__setattr__(self, "k", _as_int(self.k))

    def k_for(self, attr: str) -> int:
        return _per_attr(self.k, "k", attr, kind=int)

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
        has one, 'ordered' for ordinal attributes without a missing token,
        else 'equal' (the strictest: every pair of values at distance 1).
        'ordered' named for an attribute with a missing token puts the token
        last, one step above the largest value.
    """

    t: Value
    ground: Union[str, Mapping] = "auto"

    def __post_init__(self):
        object.__setattr__(self, "t", _plain(self.t))
        _check_mapping(self.t, "t", lambda v: 0 <= v <= 1 or v == math.inf,
                       "a number in [0, 1] (inf: no constraint, as t = 1)")
        _check_ground(self.ground)

    def t_for(self, attr: str) -> float:
        return float(_per_attr(self.t, "t", attr))

    def ground_for(self, attr: str) -> str:
        g = self.ground
        if isinstance(g, Mapping):
            g = g.get(attr, "auto")
        if g not in GROUNDS:
            raise InputError(f"got {g!r}", param="ground", column=attr,
                             expected="auto, equal, ordered or hierarchical")
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
    #: 'frequency' or 'entropy' l-diversity (their parameters are the same,
    #: eta_j >= l_j; the audit checks the one named)
    measure: str = "frequency"

    def __post_init__(self):
        object.__setattr__(self, "l", Diversity(self.l, self.measure).l)
        object.__setattr__(self, "t", Closeness(self.t, self.ground).t)

    def l_for(self, attr: str) -> int:
        return Diversity(self.l).l_for(attr)

    def t_for(self, attr: str) -> float:
        return Closeness(self.t).t_for(attr)

    def ground_for(self, attr: str) -> str:
        return Closeness(self.t, self.ground).ground_for(attr)

    name = "diversity+closeness"

    def to_dict(self) -> dict:
        return {"model": "diversity+closeness", "measure": self.measure, "l": _jsonable(self.l),
                "t": _jsonable(self.t), "ground": _jsonable(self.ground)}


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
        return DiversityCloseness(_unjson(d["l"]), _unjson(d["t"]),
                                  ground=_unjson(d.get("ground", "auto")),
                                  measure=d.get("measure", "frequency"))
    raise ValueError(f"unknown privacy model {kind!r}")
