"""SetTable: the published table of papers 000/004.

Each record keeps its row; each sensitive QID becomes a set of eta_j values
(a bitmask over the domain, one uint64 word per 64 values), each exact QID
keeps its value, pass-through columns are unchanged, identifiers are gone.
The published parameters (p_j, eta_j) and the privacy model travel with the
table: in the Parquet file's metadata, or in a JSON file beside a CSV.  The
generator key never does.

Within a set, values are listed in domain order, so no encoding (bit order,
list order, CSV order) reveals which member was the true value.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import _kernels
from ..io import published as _published
from ..io.published import FORMAT_VERSION, metadata as _metadata
from .params import AttributeParams
from .._typing import PathLike
from ..schema import Schema

__all__ = ["SetTable", "read_parquet", "read_csv", "FORMAT_VERSION", "masks_from_codes",
           "popcount"]


def mask_columns(attr) -> list:
    """Column names of an attribute's bitmask words in a mask frame."""
    words = (attr.d + 63) // 64
    return [attr.name] if words == 1 else [f"{attr.name}#{k}" for k in range(words)]


def masks_from_codes(codes: np.ndarray, offsets: np.ndarray, d: int) -> np.ndarray:
    """Bitmasks (n, words) from flattened member codes and list offsets."""
    return _published.masks_from_codes(codes, offsets, d)


def popcount(masks: np.ndarray) -> np.ndarray:
    """Set sizes of bitmask rows."""
    return _published.popcount(masks).astype(np.uint64)


def _family(col: pd.Series):
    """'text', 'decimal' or 'bytes' where a column holds them (as Python
    objects or in an Arrow type), else None."""
    from ..engine.apply import is_text
    if is_text(col):
        return "text"
    dt = col.dtype
    if isinstance(dt, pd.ArrowDtype):
        import pyarrow as pa
        t = dt.pyarrow_dtype
        if pa.types.is_decimal(t):
            return "decimal"
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or \
                pa.types.is_fixed_size_binary(t):
            return "bytes"
        return None
    if dt == object:
        kind = pd.api.types.infer_dtype(col, skipna=True)
        return kind if kind in ("decimal", "bytes") else None
    return None


def _same_cells(a: pd.Series, b: pd.Series) -> bool:
    """Two pass-through columns hold the same cells: text held as Python
    strings (``object``, as pandas reads many files) and as pandas' string
    type is one column (H125: the same release from pandas and from Arrow
    was not ``equals``), and so are decimals and bytes held as Python
    objects (as a file's reader gives them) and in an Arrow type (H139);
    any other difference of type is a difference."""
    if a.equals(b):
        return True
    fam = _family(a)
    if fam is None or fam != _family(b) or len(a) != len(b):
        return False
    na = a.isna().to_numpy()
    if not np.array_equal(na, b.isna().to_numpy()):
        return False
    return bool((a[~na].astype(object).to_numpy() == b[~na].astype(object).to_numpy()).all())


class SetTable:
    """The published table.

    Attributes
    ----------
    schema : Schema
        Published attributes (sensitive and exact) and pass-through columns.
    params : dict name -> AttributeParams
        (p_j, eta_j) of every published attribute.
    model : dict
        The privacy model, as ``model.to_dict()``.
    n_rows : int
    """

    def __init__(self, schema: Schema, masks: Mapping[str, np.ndarray],
                 params: Mapping[str, AttributeParams], model: Mapping | None = None,
                 other: pd.DataFrame | None = None, info: Mapping | None = None):
        self.schema = schema
        self._masks = {k: np.ascontiguousarray(v, dtype=np.uint64) for k, v in masks.items()}
        self.params = dict(params)
        self.model = dict(model or {})
        self.info = dict(info or {})
        names = [a.name for a in schema.published]
        if set(names) != set(self._masks) or set(names) != set(self.params):
            raise ValueError("SetTable: masks and params must cover exactly the published attributes")
        ns = {v.shape[0] for v in self._masks.values()}
        if len(ns) > 1:
            raise ValueError("SetTable: all columns must have the same number of rows")
        self.n_rows = ns.pop() if ns else (len(other) if other is not None else 0)
        for a in schema.published:
            m = self._masks[a.name]
            if m.ndim == 1:
                m = m.reshape(-1, 1)
                self._masks[a.name] = m
            if m.shape[1] != (a.d + 63) // 64:
                raise ValueError(f"SetTable: mask of {a.name!r} has {m.shape[1]} words, "
                                 f"expected {(a.d + 63) // 64}")
        self.other = other.reset_index(drop=True) if other is not None else pd.DataFrame(index=range(self.n_rows))
        #: In memory only, never written: the input row of each published row,
        #: where :func:`anonset.publish` shuffled them (the data holder's audit
        #: aligns the original data with it).  None after reading a file.
        self.source_rows = None
        #: The number of input rows ``source_rows`` point into.
        self.source_n = None
        #: Read from a file: the audit's ``columns`` row of that file (the
        #: columns it holds beyond those its metadata describes).
        self.column_rows = None
        if len(self.other) != self.n_rows:
            raise ValueError("SetTable: pass-through columns have a different number of rows")

    def __getstate__(self) -> dict:
        """Pickled (sent to another process, saved by a notebook) without
        ``source_rows``: the input row of each published row would undo the
        shuffle for whoever receives it (H26: of an input sorted by
        occupation, all of it)."""
        state = dict(self.__dict__)
        state["source_rows"] = None
        return state

    # ------------------------------------------------------------ access
    @property
    def names(self) -> list:
        """Published attribute names, in schema order."""
        return [a.name for a in self.schema.published]

    def mask(self, name: str) -> np.ndarray:
        """The (n_rows, words) uint64 bitmasks of one attribute (read-only view)."""
        m = self._masks[self._check_name(name)].view()
        m.setflags(write=False)
        return m

    def members(self, name: str) -> np.ndarray:
        """(n_rows, eta) int32 codes of each set's members, ascending."""
        a = self.schema[self._check_name(name)]
        eta = self.params[name].eta
        return _kernels.members(self._masks[name], a.d, eta)

    def sets(self, name: str) -> list:
        """Each row's set as a tuple of domain values (domain order)."""
        a = self.schema[self._check_name(name)]
        dom = np.empty(a.d, dtype=object)
        dom[:] = list(a.domain)
        return [tuple(r) for r in dom[self.members(name)].tolist()]

    def _check_name(self, name: str) -> str:
        if name not in self._masks:
            from ..validate import close_match
            raise KeyError(f"{name!r} is not a published attribute{close_match(name, self.names)}"
                           f"; published: {self.names}")
        return name

    def __len__(self):
        return self.n_rows

    def take(self, rows: Sequence[int] | np.ndarray | slice) -> "SetTable":
        """The rows at the given positions, in that order: integer positions
        (negative ones count from the end), a slice, or a boolean mask of
        one value per row.

        A subset chosen by exact QIDs or pass-through columns (the women
        only) reconstructs as the same rows published on their own would
        (small counts carry the EM's small-sample bias either way:
        docs/algorithms.md, "Subsets"); one chosen by the published sets
        themselves (the rows whose set holds 'sales') does not: the EM
        assumes each set was drawn as published, not selected for what it
        holds (CPS1985 at l = 3: 215 of 238 such rows estimated as sales,
        38 true).  Cross-tabulate the whole table with that attribute
        instead.

        Examples
        --------
        >>> import pandas as pd, anonset
        >>> df = pd.DataFrame({"a": list("xyzxyz"), "sex": list("ffmmfm")})
        >>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], exact=["sex"],
        ...                       domains={"a": list("xyz")})
        >>> pub.take([0, -1]).n_rows, pub.take(slice(0, 4)).n_rows
        (2, 4)
        >>> pub.take(pub.to_pandas()["sex"] == "f").n_rows
        3
        """
        rows = _row_positions(rows, self.n_rows)
        other = self.other.iloc[rows].reset_index(drop=True) if len(self.other.columns) else \
            pd.DataFrame(index=range(len(rows)))
        out = SetTable(self.schema, {k: v[rows] for k, v in self._masks.items()}, self.params,
                       self.model, other, self.info)
        out.column_rows = self.column_rows      # the rows come from that file
        if self.source_rows is not None:     # a release just published in memory
            out.source_rows = self.source_rows[rows]
            out.source_n = self.source_n
        elif self.info.get("row_order") == "input":     # its positions are input rows
            out.source_rows = np.arange(self.n_rows)[rows]
            out.source_n = self.n_rows
        return out

    def _in_order(self, order: np.ndarray) -> "SetTable":
        """The rows of a table just drawn in input order, put in the
        publication's ``order``: the data holder's audit in memory lines the
        input up with them (``source_rows``; never written or pickled).  A
        table read from a file knows no input rows (H79: take() of a read
        shuffled release lined the input up by file position)."""
        out = self.take(order)
        out.source_rows = np.asarray(order)
        out.source_n = self.n_rows
        return out

    def _repr_html_(self) -> str:
        from .._html import card
        info = self.info
        facts = {"rows": f"{self.n_rows:,}", "model": self.model,
                 "key": info.get("key", "unknown"), "row order": info.get("row_order", "unknown")}
        clear = info.get("clear") or []
        if clear:
            facts["published in the clear"] = ", ".join(clear)
        changed = info.get("changed_records") or {}
        if changed:
            facts["values that change between a record's rows"] = ", ".join(
                f"{c} ({k:,} records)" for c, k in changed.items())
        other = list(self.other.columns)
        if other:
            facts["passed through"] = ", ".join(other)
        missing = info.get("missing")
        if isinstance(missing, dict) and missing.get("columns"):
            from ..validate import missing_cells
            facts["missing cells"] = (f"published as {missing.get('token')!r}: "
                                      + missing_cells(missing["columns"]))
        params = pd.DataFrame([{"attribute": n, "role": self.schema[n].role, "d": p.d,
                                "p": p.p, "eta": p.eta, "l": p.l, "t": p.t, "ground": p.ground}
                               for n, p in self.params.items()])
        return card("anonset SetTable", facts,
                    [("published parameters", params), ("first rows", self.take(
                        np.arange(min(10, self.n_rows))).to_pandas())])

    def __repr__(self):
        ps = ", ".join(f"{n}(p={self.params[n].p:.3g}, eta={self.params[n].eta})" for n in self.names)
        return f"SetTable(n_rows={self.n_rows}, {ps})"

    def equals(self, other: "SetTable") -> bool:
        """Same schema, sets, parameters, model and pass-through columns."""
        if not isinstance(other, SetTable) or self.n_rows != other.n_rows:
            return False
        if self.schema.to_dict() != other.schema.to_dict():
            return False
        if {k: v.to_dict() for k, v in self.params.items()} != \
                {k: v.to_dict() for k, v in other.params.items()}:
            return False
        if self.model != other.model:
            return False
        if any(not np.array_equal(self._masks[k], other._masks[k]) for k in self._masks):
            return False
        mine, theirs = self.other.reset_index(drop=True), other.other.reset_index(drop=True)
        if list(mine.columns) != list(theirs.columns):
            return False
        return all(_same_cells(mine[c], theirs[c]) for c in mine.columns)

    # --------------------------------------------------------- metadata
    def metadata(self) -> dict:
        """Schema, parameters, model, row count and how the table was published."""
        return _metadata(self.schema, self.params, self.model, self.n_rows, self.info)

    # ------------------------------------------------------------ pandas
    def to_pandas(self) -> pd.DataFrame:
        """A DataFrame: sensitive QIDs as lists of values, exact QIDs as values,
        pass-through columns unchanged, in schema order."""
        cols = {}
        for a in self.schema:
            if a.name in self._masks:
                dom = np.empty(a.d, dtype=object)
                dom[:] = list(a.domain)
                mem = dom[self.members(a.name)]
                cols[a.name] = mem[:, 0] if self.params[a.name].exact else list(mem.tolist())
            elif a.name in self.other.columns:
                cols[a.name] = self.other[a.name].array     # as held (Int64 with NA stays so)
        return pd.DataFrame(cols)

    # ------------------------------------------------------ mask columns
    def to_mask_frame(self) -> pd.DataFrame:
        """Bitmask words as uint64 columns (``name``, or ``name#k`` for the k-th
        word where d > 64) and the pass-through columns: the form of a
        published block in Dask partitions and in temporary shuffle files."""
        cols = {}
        for a in self.schema:
            if a.name in self._masks:
                m = self._masks[a.name]
                for k, c in enumerate(mask_columns(a)):
                    cols[c] = np.ascontiguousarray(m[:, k])
            elif a.name in self.other.columns:
                cols[a.name] = self.other[a.name].array      # keeps its dtype (pandas 3: str)
        return pd.DataFrame(cols, index=range(self.n_rows))

    @classmethod
    def from_mask_frame(cls, frame: pd.DataFrame, schema: Schema,
                        params: Mapping[str, AttributeParams], model: Mapping | None = None,
                        info: Mapping | None = None) -> "SetTable":
        """Inverse of :meth:`to_mask_frame`."""
        frame = frame.reset_index(drop=True)
        masks = {a.name: np.ascontiguousarray(np.stack(
            [frame[c].to_numpy(dtype=np.uint64) for c in mask_columns(a)], axis=1))
            for a in schema.published}
        other = [a.name for a in schema if a.role == "other"]
        return cls(schema, masks, params, model, frame[other] if other else
                   pd.DataFrame(index=range(len(frame))), info)

    # ------------------------------------------------------------- files
    def to_parquet(self, path: PathLike, *, protect: Iterable[PathLike] = (),
                   sets: str = "masks") -> None:
        """Write Parquet, the metadata in the file's metadata.  ``sets``:
        'masks' (default) stores each set as its bitmask in the narrowest
        unsigned integer, 'lists' as a list of its values (what other Parquet
        readers show as values).  Written atomically; ``protect`` names input
        files never to overwrite."""
        from ..io.published import write_settable
        write_settable(self, path, "parquet", protect=protect, sets=sets)

    def to_csv(self, path: PathLike, *, protect: Iterable[PathLike] = ()) -> None:
        """Write CSV with ``{a|b|c}`` cells (the papers' aggregated expression)
        and the metadata in ``<path>.anonset.json``, as one atomic unit."""
        from ..io.published import write_settable
        write_settable(self, path, "csv", protect=protect)


def read_parquet(path: PathLike) -> SetTable:
    """Read a SetTable written by :meth:`SetTable.to_parquet` (checked: see
    :mod:`anonset.io.published`)."""
    from ..io.published import read_settable
    return read_settable(path, "parquet")


def read_csv(path: PathLike) -> SetTable:
    """Read a SetTable written by :meth:`SetTable.to_csv` (needs the
    ``.anonset.json`` file beside it; checked)."""
    from ..io.published import read_settable
    return read_settable(path, "csv")


def _row_positions(rows, n: int) -> np.ndarray:
    """``rows`` (positions, a slice or a boolean mask of n values) as int64
    positions in [0, n); a boolean mask was read as the positions 0 and 1,
    a float as its truncation."""
    from ..validate import InputError
    if isinstance(rows, slice):
        return np.arange(n, dtype=np.int64)[rows]
    a = np.asarray(rows)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise InputError(f"got an array of shape {a.shape}", param="rows",
                         expected="row positions, a slice or a boolean mask (1-d)")
    if a.dtype == bool:
        if a.size != n:
            raise InputError(f"is a boolean mask of {a.size:,} values", param="rows",
                             expected=f"one per row ({n:,})")
        return np.flatnonzero(a).astype(np.int64)
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"holds values of type {a.dtype}", param="rows",
                         expected="integer row positions, a slice or a boolean mask")
    a = a.astype(np.int64, copy=False)
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    if lo < -n or hi >= n:
        raise InputError(f"holds a position outside the {n:,} rows", param="rows",
                         expected=f"positions in [{-n}, {n})")
    return np.where(a < 0, a + n, a) if lo < 0 else a
