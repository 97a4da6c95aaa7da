"""Attributes, their domains and roles, and the schema of a table.

Roles (paper 000, Sec. II-A and VII-B):

``sensitive``   a sensitive QID S_j: published as a random set (its l_j / t_j
                come from the privacy model);
``exact``       a non-sensitive QID: published exactly (l_j = 1, paper 004);
``identifier``  an explicit identifier: dropped, never published;
``other``       a non-QID, non-sensitive attribute: passed through unchanged.

A domain is an ordered tuple of values; a value is encoded as its index.
Declared domains are preferred: an inferred domain reveals which values occur
in the data (a value that occurs once is itself a disclosure).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._typing import TableLike
from .hierarchy import Hierarchy

__all__ = ["Attribute", "Schema", "ROLES", "KINDS"]

ROLES = ("sensitive", "exact", "identifier", "other")
KINDS = ("nominal", "ordinal")


def _bin_labels(edges: Sequence[float]) -> tuple:
    def fmt(x):
        return str(int(x)) if float(x).is_integer() else repr(float(x))
    return tuple(f"[{fmt(lo)}, {fmt(hi)})" for lo, hi in zip(edges[:-1], edges[1:]))


@dataclass(frozen=True)
class Attribute:
    """One column of a table.

    Parameters
    ----------
    name : str
        Column name.
    role : {'sensitive', 'exact', 'identifier', 'other'}
    domain : tuple, optional
        Ordered domain values (required for 'sensitive' and 'exact').
    kind : {'nominal', 'ordinal'}
        'ordinal' means the domain order is meaningful (ordered ground
        distance); numeric columns categorized by ``bins`` are ordinal.
    bins : tuple of float, optional
        Increasing edges; value x falls into bin i when edges[i] <= x < edges[i+1].
        The domain is then the bin labels ``'[lo, hi)'``.
    hierarchy : Hierarchy, optional
        Generalization tree whose leaves are the domain values.
    inferred : bool
        True when the domain was read off the data rather than declared.
    """

    name: str
    role: str = "sensitive"
    domain: tuple | None = None
    kind: str = "nominal"
    bins: tuple | None = None
    hierarchy: Hierarchy | None = field(default=None, compare=False)
    inferred: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"attribute name must be a non-empty string, got {self.name!r}")
        if self.role not in ROLES:
            raise ValueError(f"attribute {self.name!r}: role must be one of {ROLES}, got {self.role!r}")
        if self.kind not in KINDS:
            raise ValueError(f"attribute {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.bins is not None:
            edges = tuple(float(x) for x in self.bins)
            if len(edges) < 2 or any(not math.isfinite(x) and not math.isinf(x) for x in edges) \
                    or any(b <= a for a, b in zip(edges[:-1], edges[1:])):
                raise ValueError(f"attribute {self.name!r}: bins must be at least two strictly "
                                 f"increasing edges, got {self.bins!r}")
            object.__setattr__(self, "bins", edges)
            labels = _bin_labels(edges)
            if self.domain is None:
                object.__setattr__(self, "domain", labels)
            elif tuple(self.domain) != labels:
                raise ValueError(f"attribute {self.name!r}: a binned attribute's domain is its bin "
                                 f"labels {labels[:3]}..., not a separate list")
            object.__setattr__(self, "kind", "ordinal")
        if self.domain is not None:
            dom = tuple(_scalar(v) for v in self.domain)
            if len(dom) == 0:
                raise ValueError(f"attribute {self.name!r}: empty domain")
            if len(set(dom)) != len(dom):
                dup = sorted({str(v) for v in dom if dom.count(v) > 1})
                raise ValueError(f"attribute {self.name!r}: domain has duplicate values {dup[:5]}")
            object.__setattr__(self, "domain", dom)
        if self.role in ("sensitive", "exact") and self.domain is None:
            raise ValueError(f"attribute {self.name!r}: a {self.role} attribute needs a domain "
                             "(declare it, give bins or a hierarchy, or infer it from data)")
        if self.hierarchy is not None:
            h = self.hierarchy
            if self.domain is None:
                object.__setattr__(self, "domain", tuple(h.leaves))
            # the tree's leaves must be exactly the domain, in domain order
            labels = [str(v) for v in self.domain]
            try:
                object.__setattr__(self, "hierarchy", h.reorder(labels))
            except ValueError as e:
                raise ValueError(f"attribute {self.name!r}: {e}") from None

    @property
    def d(self) -> int:
        """Domain size d_j."""
        return len(self.domain) if self.domain is not None else 0

    @property
    def published(self) -> bool:
        return self.role in ("sensitive", "exact")

    def index(self) -> dict:
        """Map from domain value to code."""
        return {v: i for i, v in enumerate(self.domain)}

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"name": self.name, "role": self.role, "kind": self.kind}
        if self.domain is not None:
            out["domain"] = list(self.domain)
        if self.bins is not None:
            out["bins"] = [x if math.isfinite(x) else ("inf" if x > 0 else "-inf") for x in self.bins]
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy.to_csv()
        if self.inferred:
            out["inferred"] = True
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> "Attribute":
        bins = d.get("bins")
        if bins is not None:
            bins = tuple(float(x) for x in bins)
        h = d.get("hierarchy")
        return cls(name=d["name"], role=d.get("role", "sensitive"),
                   domain=None if bins is not None else (tuple(d["domain"]) if "domain" in d else None),
                   kind=d.get("kind", "nominal"), bins=bins,
                   hierarchy=Hierarchy.from_csv(h) if h else None,
                   inferred=bool(d.get("inferred", False)))


def _scalar(v):
    """Plain Python scalar for a domain value (numpy scalars -> int/float/str)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer() and not isinstance(v, bool):
        return v
    return v


@dataclass(frozen=True)
class Schema:
    """An ordered collection of attributes.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [23, 41, 67], "job": ["a", "b", "a"]})
    >>> s = Schema.infer(df, bins={"age": [0, 40, 120]})
    >>> [a.name for a in s.sensitive]
    ['age', 'job']
    >>> s["age"].domain
    ('[0, 40)', '[40, 120)')
    """

    attributes: tuple

    def __post_init__(self):
        attrs = tuple(self.attributes)
        names = [a.name for a in attrs]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"schema: duplicate column name(s) {dup}")
        object.__setattr__(self, "attributes", attrs)

    def __getitem__(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(f"schema has no attribute {name!r}; it has {self.names}")

    def __contains__(self, name) -> bool:
        return any(a.name == name for a in self.attributes)

    def __iter__(self):
        return iter(self.attributes)

    def __len__(self):
        return len(self.attributes)

    @property
    def names(self) -> list:
        return [a.name for a in self.attributes]

    def by_role(self, role: str) -> list:
        return [a for a in self.attributes if a.role == role]

    @property
    def sensitive(self) -> list:
        return self.by_role("sensitive")

    @property
    def exact(self) -> list:
        return self.by_role("exact")

    @property
    def published(self) -> list:
        """Sensitive and exact attributes, in schema order."""
        return [a for a in self.attributes if a.published]

    def stream_id(self, name: str) -> int:
        """Position of an attribute in the schema: keys its random stream."""
        return self.names.index(name)

    def replace(self, name: str, **changes: Any) -> "Schema":
        return Schema(tuple(replace(a, **changes) if a.name == name else a for a in self.attributes))

    def to_dict(self) -> dict:
        return {"attributes": [a.to_dict() for a in self.attributes]}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Schema":
        return cls(tuple(Attribute.from_dict(a) for a in d["attributes"]))

    # -------------------------------------------------------------- infer
    @classmethod
    def infer(cls, data: TableLike, *, sensitive: Iterable[str] | None = None,
              exact: Iterable[str] = (), identifiers: Iterable[str] = (),
              other: Iterable[str] = (), bins: Mapping[str, Sequence[float]] | None = None,
              domains: Mapping[str, Sequence] | None = None,
              ordinal: Iterable[str] | Mapping[str, Sequence] = (),
              hierarchies: Mapping[str, Hierarchy | str | Path] | None = None,
              warn_inferred: bool = False, missing: str = "error") -> "Schema":
        """Build a schema from a DataFrame (or pyarrow Table) and declarations.

        Parameters
        ----------
        data : pandas.DataFrame or pyarrow.Table
        sensitive : column names, optional
            Sensitive QIDs.  Default: every column not named in ``exact``,
            ``identifiers`` or ``other``.
        exact, identifiers, other : column names
            Non-sensitive QIDs, explicit identifiers, pass-through columns.
        bins : {column: edges}
            Categorize a numeric column into intervals [edges[i], edges[i+1]).
        domains : {column: values}
            Declared domains (preferred over inference).
        ordinal : column names, or {column: ordered values}
            Columns whose domain order is meaningful.  Inferred ordinal domains
            are sorted.
        hierarchies : {column: Hierarchy or ARX CSV path}
            Generalization trees; when no domain is declared the tree's leaves
            are the domain.
        warn_inferred : bool
            Emit a warning for every domain read off the data.
        missing : {'error', 'category'}
            With 'category', an inferred domain of a column that has missing
            values gets the value ``'?'`` for them (see ``publish(missing=)``).
        """
        frame = _as_frame(data)
        cols = list(frame.columns)
        _check_columns(cols)
        bins = dict(bins or {})
        domains = dict(domains or {})
        hierarchies = dict(hierarchies or {})
        ordinal_map = dict(ordinal) if isinstance(ordinal, Mapping) else {c: None for c in ordinal}
        exact, identifiers, other = list(exact), list(identifiers), list(other)
        named = set(exact) | set(identifiers) | set(other)
        if sensitive is None:
            sensitive = [c for c in cols if c not in named]
        else:
            sensitive = list(sensitive)
        roles: dict[str, str] = {}
        for role, names in (("sensitive", sensitive), ("exact", exact),
                            ("identifier", identifiers), ("other", other)):
            for c in names:
                if c not in cols:
                    raise ValueError(f"column {c!r} (declared {role}) is not in the data; "
                                     f"columns are {cols}")
                if c in roles:
                    raise ValueError(f"column {c!r} is declared both {roles[c]} and {role}")
                roles[c] = role
        for opt, mapping in (("bins", bins), ("domains", domains), ("ordinal", ordinal_map),
                             ("hierarchies", hierarchies)):
            for c in mapping:
                if c not in cols:
                    raise ValueError(f"{opt} names column {c!r}, which is not in the data")
        attrs = []
        for c in cols:
            role = roles.get(c, "other")
            if role in ("identifier", "other"):
                attrs.append(Attribute(c, role=role))
                continue
            h = hierarchies.get(c)
            if h is not None and not isinstance(h, Hierarchy):
                h = Hierarchy.from_csv(h)
            kind = "ordinal" if c in ordinal_map else "nominal"
            if c in bins:
                attrs.append(Attribute(c, role=role, bins=tuple(bins[c]), hierarchy=h))
                continue
            dom = domains.get(c)
            if dom is None and ordinal_map.get(c) is not None:
                dom = ordinal_map[c]
            inferred = False
            if dom is None and h is not None:
                dom = _match_labels(h.leaves, frame[c])
            if dom is None:
                dom = _infer_domain(frame[c], c)
                if missing == "category" and frame[c].isna().any() and "?" not in dom:
                    dom = list(dom) + ["?"]
                inferred = True
                if warn_inferred:
                    warnings.warn(f"domain of {c!r} inferred from the data ({len(dom)} values); "
                                  "declare it to avoid revealing which values occur",
                                  stacklevel=2)
            attrs.append(Attribute(c, role=role, domain=tuple(dom), kind=kind, hierarchy=h,
                                   inferred=inferred))
        return cls(tuple(attrs))


def _as_frame(data) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    try:
        import pyarrow as pa
        if isinstance(data, pa.Table):
            return data.to_pandas()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"expected a pandas DataFrame or a pyarrow Table, got {type(data).__name__}")


def _check_columns(cols):
    for c in cols:
        if not isinstance(c, str) or not c.strip():
            raise ValueError(f"column names must be non-empty strings, got {c!r}")
    if len(set(cols)) != len(cols):
        dup = sorted({c for c in cols if cols.count(c) > 1})
        raise ValueError(f"duplicate column name(s) {dup}")


def _infer_domain(col: pd.Series, name: str) -> list:
    if len(col) == 0:
        raise ValueError(f"the table is empty (no rows): nothing to publish, and no domain of "
                         f"column {name!r} to infer")
    vals = col.dropna().unique()
    if len(vals) == 0:
        raise ValueError(f"column {name!r}: cannot infer a domain from a column with no values")
    types = {type(_scalar(v)) for v in vals}
    if len(types) > 1 and not types <= {int, float}:
        raise ValueError(f"column {name!r} mixes value types {sorted(t.__name__ for t in types)}; "
                         "convert it to one type or declare its domain")
    return sorted(_scalar(v) for v in vals)


def _match_labels(leaves: Sequence[str], col: pd.Series) -> list:
    """Hierarchy leaves as domain values, typed like the column (int leaves for
    an integer column)."""
    if pd.api.types.is_integer_dtype(col.dtype):
        try:
            return [int(v) for v in leaves]
        except ValueError:
            raise ValueError(f"column {col.name!r} is integer but its hierarchy has non-integer "
                             "leaves") from None
    return list(leaves)
