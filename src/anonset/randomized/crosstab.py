"""CrossTab: a labelled count array over q' attributes."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._typing import Names, TableLike
from ..encode import encode
from ..schema import Schema
from ..io.tables import as_frame as _as_frame

__all__ = ["CrossTab", "true_crosstab", "ConvergenceWarning", "warn_unconverged"]


class ConvergenceWarning(UserWarning):
    """An EM estimate stopped by its iteration cap before its stopping rule
    held: its counts depend on where it stopped (raise ``max_iter``)."""


def warn_unconverged(ct: "CrossTab") -> "CrossTab":
    """``ct``, after warning if its EM stopped at the cap unconverged."""
    info = ct.info or {}
    if "iterations" in info and info.get("converged") is False:
        import warnings
        warnings.warn(ConvergenceWarning(
            f"{ct.method}: NOT converged: stopped by the cap of {info.get('max_iter', '?')} "
            f"EM updates (the last moved a cell by "
            f"{float(info.get('change', float('nan'))):.3g} records), so the counts depend on "
            "where it stopped; raise the cap (max_iter=, --max-iter)"), stacklevel=3)
    return ct


@dataclass(eq=False)
class CrossTab:
    """Counts over C = D(S'_1) x ... x D(S'_q') (C order: last attribute fastest).

    Attributes
    ----------
    attributes : tuple of str
    domains : tuple of tuples
    counts : ndarray of float64, shape (d_1, ..., d_q')
    method : str
        'true', 'em', 'exact_em', 'value_adding' or 'random'.
    info : dict
        Method details, e.g. iterations and final change for EM; with
        standard errors, ``info['se']`` says how they were computed.
    se : ndarray of float64 or None
        Each cell's standard error, shaped like ``counts``, where
        ``reconstruct(..., standard_errors=B)`` asked for them; else None.
    """

    attributes: tuple
    domains: tuple
    counts: np.ndarray
    method: str = "true"
    info: dict = field(default_factory=dict)
    se: np.ndarray | None = None

    @property
    def shape(self) -> tuple:
        return self.counts.shape

    @property
    def total(self) -> float:
        return float(self.counts.sum())

    def equals(self, other: object) -> bool:
        """Same attributes, domains, method and counts (``==`` is identity:
        a dataclass's own ``==`` compared the count arrays, which raised)."""
        return isinstance(other, CrossTab) and self.attributes == other.attributes and \
            self.domains == other.domains and self.method == other.method and \
            self.counts.shape == other.counts.shape and \
            bool(np.array_equal(self.counts, other.counts))

    def to_pandas(self) -> pd.Series:
        """A Series indexed by the value combinations (a MultiIndex for q' > 1)."""
        if len(self.attributes) == 1:
            idx = pd.Index(list(self.domains[0]), name=self.attributes[0])
        else:
            idx = pd.MultiIndex.from_product([list(d) for d in self.domains],
                                             names=list(self.attributes))
        return pd.Series(self.counts.ravel(), index=idx, name=self.method)

    def to_frame(self) -> pd.DataFrame:
        """Long form: one column per attribute, then 'count' (``count_`` where
        an attribute is named 'count': :func:`count_column`), then, where the
        standard errors were asked for, 'se' (``se_`` where an attribute is
        named 'se')."""
        frame = self.to_pandas().rename(count_column(self.attributes)).reset_index()
        if self.se is not None:
            frame[count_column(self.attributes, "se")] = \
                np.asarray(self.se, dtype=np.float64).ravel()
        return frame

    def _repr_html_(self) -> str:
        from .._html import card
        facts = {"attributes": " x ".join(self.attributes), "shape": self.shape,
                 "total": f"{self.total:,.6g}", "method": self.method}
        facts.update({k: v for k, v in self.info.items() if k in ("iterations", "converged",
                                                                  "change")})
        return card("anonset CrossTab", facts, [("counts", self.to_frame())])

    def __repr__(self):
        return (f"CrossTab({', '.join(self.attributes)}; shape={self.shape}, "
                f"total={self.total:.6g}, method={self.method!r})")


def count_column(attributes, name: str = "count") -> str:
    """The long form's count column: 'count' (or ``name``), with an
    underscore added for each attribute that holds the name already (H88: an
    attribute named 'count' could not be cross-tabulated)."""
    while name in set(attributes):
        name += "_"
    return name


def true_crosstab(data: TableLike, schema: Schema, attributes: Names, *,
                  missing: str = "error") -> CrossTab:
    """The true counts x_m of the original data (for evaluation).

    ``schema``: the release's :class:`~anonset.Schema` (a SetTable stands
    for its own)."""
    from ..validate import check_attributes, check_schema
    schema = check_schema(schema)
    frame = _as_frame(data)
    attributes = check_attributes(schema, attributes)
    codes = encode(frame, schema, missing=missing, columns=attributes)
    dims = tuple(schema[a].d for a in attributes)
    flat = np.ravel_multi_index(tuple(codes[a] for a in attributes), dims)
    counts = np.bincount(flat, minlength=int(np.prod(dims))).astype(np.float64).reshape(dims)
    return CrossTab(tuple(attributes), tuple(schema[a].domain for a in attributes), counts, "true")
