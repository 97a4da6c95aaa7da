"""Attributes, their domains and roles, and the schema of a table.

Roles (paper 000, Sec. II-A and VII-B):

``sensitive``   a sensitive QID S_j: published as a random set (its l_j / t_j
                come from the privacy model);
``exact``       a non-sensitive QID: published exactly (l_j = 1, paper 004);
``identifier``  an explicit identifier: dropped, never published (it may key
                the persistent-key mode: see :func:`anonset.publish`);
``other``       a non-QID, non-sensitive attribute: passed through unchanged;
``drop``        a column the user does not want published: dropped.

Every column of an input table must have a role its user chose
(:func:`anonset.validate.resolve_roles`): nothing is published, passed
through or dropped by default.

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

from ._typing import TableLike
from .hierarchy import Hierarchy

__all__ = ["Attribute", "Schema", "ROLES", "KINDS", "InferredDomainWarning",
           "SharedIdWarning", "SuppressionWarning", "warn_inferred_domains"]


def _outside_stacklevel() -> int:
    """The stacklevel, for a warning raised by this frame's caller, of the
    first frame outside the anonset package."""
    import os
    import sys
    pkg = str(Path(__file__).resolve().parent) + os.sep
    f, level = sys._getframe(1), 1
    while f is not None and str(Path(f.f_code.co_filename).resolve()).startswith(pkg):
        f, level = f.f_back, level + 1
    return level


class InferredDomainWarning(UserWarning):
    """A sensitive column's domain was read off the data.

    Every value of such a domain occurs in the data, so publishing the domain
    (it is in every set table's metadata) tells which values occur: a value
    held by one person is itself a disclosure.  Declare the domain
    (``domains=``, ``bins=``, ``hierarchies=``; ``--domain``, ``--bins``,
    ``--hierarchy``) to avoid it, or silence the warning where that is
    acceptable::

        warnings.simplefilter("ignore", anonset.InferredDomainWarning)
    """


class SharedIdWarning(UserWarning):
    """Rows share an identifier's value and were drawn independently.

    If such rows are one person's (panel waves, hospital visits), each row's
    random sets were drawn on their own, and an adversary who links the rows
    (their exact QIDs alike) intersects the sets toward the person's true
    values.  A key file with the person's id as ``record_id`` gives one
    person's rows the same set for the same value (docs/security.md).

    No longer emitted: since 2026-11-28 such rows are refused
    (:class:`anonset.validate.InputError`) unless the column is named in
    ``allow_shared_id``.  Kept so that code filtering it keeps working.
    """


class SuppressionWarning(UserWarning):
    """Sensitive cells were published as ``*`` to make an attribute
    l-eligible (:func:`anonset.lgb` with ``suppress=True``).

    The cells a cap removes are those of the values held too often, so a
    ``*`` tells that the person's value is one of them: where a single value
    dominates the column (a two-valued attribute, a majority group), a ``*``
    is that value, in the clear.  The release's metadata (``suppressed``)
    and its audit (check ``suppressed``) name the cells.
    """


class RepeatedReleaseWarning(UserWarning):
    """A release replaced an earlier one of the same sensitive columns in
    the same file, under another key.

    Random sets drawn under two keys intersect: a person's true value is in
    both of their sets, so each release published beside another narrows it
    (docs/security.md, "repeated releases": 64 % of Adult's native-country
    values after two releases at l = 5).  If the earlier file was shared,
    publish the same people under one key file and a record id in every
    release (``key_file=``, ``record_id=``; ``--key-file``,
    ``--record-id``), which gives them the same sets.
    """


#: How a domain is declared, for :func:`warn_inferred_domains`'s advice.
DECLARE = "domains=, bins=, hierarchies=; --domain, --bins, --hierarchy"


def warn_inferred_domains(attributes: Iterable["Attribute"],
                          lone: Mapping[str, int] | None = None,
                          declare: str = DECLARE) -> list[str]:
    """Warn (:class:`InferredDomainWarning`) naming the sensitive columns
    among ``attributes`` whose domains were read off the data; exact QIDs
    are published as they are, so their domains reveal nothing more.
    ``lone``: per column, how many of its values one row alone holds (each
    a person's value that the domain publishes; named in the warning).
    ``declare``: the caller's ways to declare a domain (its parameters and
    flags; :data:`DECLARE` for :func:`anonset.publish`).  The
    warning points at the first caller outside anonset.  Returns the names
    warned about."""
    attrs = [a for a in attributes if a.inferred and a.role == "sensitive"]
    names = [a.name for a in attrs]
    if names:
        which = (f"the domain of {names[0]!r} was" if len(names) == 1 else
                 f"the domains of {', '.join(map(repr, names))} were")
        held = [f"{lone[a.name]:,} of the {a.d:,} of {a.name!r}" for a in attrs
                if (lone or {}).get(a.name)]
        once = f" (it lists values that one row alone holds: {', '.join(held)})" if held else ""
        warnings.warn(f"{which} read off the data, which reveals which values occur{once}; "
                      f"declare {'it' if len(names) == 1 else 'them'} where that matters "
                      f"({declare})",
                      InferredDomainWarning, stacklevel=_outside_stacklevel())
    return names

ROLES = ("sensitive", "exact", "identifier", "other", "drop")
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
    missing : str, optional
        The value that stands for a missing cell (e.g. ``'?'``): it is the
        last value of the domain (appended when a declared domain or the bins
        lack it), and a missing cell is published as this value.  None: a
        missing cell is an error.
    """

    name: str
    role: str = "sensitive"
    domain: tuple | None = None
    kind: str = "nominal"
    bins: tuple | None = None
    hierarchy: Hierarchy | None = field(default=None, compare=False)
    inferred: bool = False
    missing: str | None = None

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
            with_token = labels + ((self.missing,) if self.missing is not None else ())
            if self.domain is None:
                object.__setattr__(self, "domain", with_token)
            elif tuple(self.domain) not in (labels, with_token):
                raise ValueError(f"attribute {self.name!r}: a binned attribute's domain is its bin "
                                 f"labels {labels[:3]}..., not a separate list")
            object.__setattr__(self, "kind", "ordinal")
        if self.missing is not None:
            if not isinstance(self.missing, str) or not self.missing:
                raise ValueError(f"attribute {self.name!r}: missing must be a non-empty string "
                                 f"(the value that stands for a missing cell), got {self.missing!r}")
            if self.domain is not None and self.missing not in self.domain:
                object.__setattr__(self, "domain", tuple(self.domain) + (self.missing,))
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
        if self.missing is not None:
            out["missing"] = self.missing
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
                   inferred=bool(d.get("inferred", False)), missing=d.get("missing"))


def _scalar(v):
    """Plain Python scalar for a domain value (NumPy scalars -> int/float/str)."""
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class Schema:
    """An ordered collection of attributes.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [23, 41, 67], "job": ["a", "b", "a"]})
    >>> s = Schema.infer(df, sensitive=["age", "job"], bins={"age": [0, 40, 120]})
    >>> [a.name for a in s.sensitive]
    ['age', 'job']
    >>> s["age"].domain
    ('[0, 40)', '[40, 120)')
    """

    attributes: tuple

    def __post_init__(self):
        from .validate import InputError
        if isinstance(self.attributes, (str, bytes, Attribute)) or \
                not hasattr(self.attributes, "__iter__"):
            raise InputError(f"got {type(self.attributes).__name__}", param="attributes",
                             expected="a sequence of anonset.Attribute (or Schema.infer(df, "
                                      "...) to read them off a table)")
        attrs = tuple(self.attributes)
        for a in attrs:
            if not isinstance(a, Attribute):
                raise InputError(f"holds {a!r}", param="attributes",
                                 expected="anonset.Attribute objects (or Schema.infer(df, ...) "
                                          "to read them off a table)")
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
    def infer(cls, data: TableLike, *, sensitive: Iterable[str] = (), exact: Iterable[str] = (),
              identifiers: Iterable[str] = (), other: Iterable[str] = (),
              drop: Iterable[str] = (),
              bins: Mapping[str, Sequence[float]] | None = None,
              domains: Mapping[str, Sequence] | None = None,
              ordinal: Iterable[str] | Mapping[str, Sequence] = (),
              hierarchies: Mapping[str, Hierarchy | str | Path] | None = None,
              warn_inferred: bool = False, missing: str = "error",
              missing_token: str = "?") -> "Schema":
        """The schema :func:`anonset.publish` builds from a table and these
        declarations (every column of the data, with its role).

        Parameters
        ----------
        data : pandas.DataFrame, pyarrow.Table, or an Arrow/interchange table
        sensitive, exact, identifiers, other, drop : column names
            Every column must be named in exactly one of them.
        bins : {column: edges}
            Categorize a numeric column into intervals [edges[i], edges[i+1]).
        domains : {column: values}
            Declared domains (preferred over inference).
        ordinal : column names, or {column: ordered values}
            Columns whose domain order is meaningful.  An order that would
            come from sorting text values is refused: declare it.
        hierarchies : {column: Hierarchy, ARX CSV path or text, or its rows}
            Generalization trees; without a declared domain the tree's leaves
            are the domain.
        warn_inferred : bool
            Warn (:class:`InferredDomainWarning`) naming the sensitive
            columns whose domains were read off the data.
        missing, missing_token : as :func:`anonset.publish`.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"age": [23, 41, 67], "job": ["a", "b", "a"]})
        >>> s = Schema.infer(df, sensitive=["age", "job"], bins={"age": [0, 40, 120]})
        >>> [a.name for a in s.sensitive]
        ['age', 'job']
        >>> s["age"].domain
        ('[0, 40)', '[40, 120)')
        """
        from .engine import Options, infer_schema
        from .io.tables import as_frame
        from .models import Diversity
        frame = as_frame(data)
        opts = Options(Diversity(1), sensitive=sensitive, exact=exact, identifiers=identifiers,
                       other=other, drop=drop, bins=bins or {}, domains=domains or {},
                       ordinal=ordinal, hierarchies=hierarchies or {}, missing=missing,
                       missing_token=missing_token)
        schema = infer_schema(frame, opts)
        if warn_inferred:
            warn_inferred_domains(schema.published)
        return schema
