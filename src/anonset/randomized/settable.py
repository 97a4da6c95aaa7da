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

import json
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from . import _kernels
from .._typing import PathLike
from ..io.atomic import atomic_path
from .params import AttributeParams
from ..schema import Attribute, Schema

__all__ = ["SetTable", "read_parquet", "read_csv", "FORMAT_VERSION"]

FORMAT_VERSION = 1
META_KEY = b"anonset"
CSV_META_SUFFIX = ".anonset.json"
_CSV_FORBIDDEN = set("{}|")
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}


def _csv_compression(path) -> str | None:
    """Compression implied by the final name (the temporary name has none)."""
    return _COMPRESSION.get(Path(path).suffix.lower())


def masks_from_codes(codes: np.ndarray, offsets: np.ndarray, d: int) -> np.ndarray:
    """Bitmasks (n, words) from flattened member codes and list offsets."""
    n = len(offsets) - 1
    words = (d + 63) // 64
    out = np.zeros((n, words), dtype=np.uint64)
    rows = np.repeat(np.arange(n), np.diff(offsets))
    codes = np.asarray(codes, dtype=np.int64)
    bits = np.left_shift(np.uint64(1), (codes & 63).astype(np.uint64))
    np.bitwise_or.at(out, (rows, codes >> 6), bits)
    return out


def popcount(masks: np.ndarray) -> np.ndarray:
    """Set sizes of bitmask rows."""
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    if m.shape[0] == 0:                  # reshape(0, -1) is ambiguous
        return np.zeros(0, dtype=np.uint64)
    return np.unpackbits(m.view(np.uint8).reshape(m.shape[0], -1), axis=1).sum(axis=1)


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
        if len(self.other) != self.n_rows:
            raise ValueError("SetTable: pass-through columns have a different number of rows")

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
            raise KeyError(f"{name!r} is not a published attribute; published: {self.names}")
        return name

    def __len__(self):
        return self.n_rows

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
        return self.other.reset_index(drop=True).equals(other.other.reset_index(drop=True))

    # --------------------------------------------------------- metadata
    def metadata(self) -> dict:
        return {
            "format": "anonset.SetTable",
            "version": FORMAT_VERSION,
            "schema": self.schema.to_dict(),
            "params": {k: v.to_dict() for k, v in self.params.items()},
            "model": self.model,
            "n_rows": self.n_rows,
            "info": self.info,
        }

    @classmethod
    def _from_metadata(cls, meta: Mapping, masks, other):
        if meta.get("format") != "anonset.SetTable":
            raise ValueError("not an anonset SetTable (metadata missing or of another format)")
        if int(meta.get("version", 0)) > FORMAT_VERSION:
            raise ValueError(f"SetTable format version {meta.get('version')} is newer than this "
                             f"anonset understands ({FORMAT_VERSION})")
        schema = Schema.from_dict(meta["schema"])
        params = {k: AttributeParams.from_dict(v) for k, v in meta["params"].items()}
        return cls(schema, masks, params, meta.get("model"), other, meta.get("info"))

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
                cols[a.name] = self.other[a.name].to_numpy()
        return pd.DataFrame(cols)

    # ----------------------------------------------------------- parquet
    def to_parquet(self, path: PathLike, *, protect: Iterable[PathLike] = ()) -> None:
        """Write Parquet: list columns for sets, parameters in the file metadata.
        Written atomically; ``protect`` names input files never to overwrite."""
        import pyarrow as pa
        import pyarrow.parquet as pq
        arrays, names = [], []
        for a in self.schema:
            if a.name in self._masks:
                mem = self.members(a.name)
                dom = _domain_array(a)
                vals = dom.take(pa.array(mem.ravel()))
                if self.params[a.name].exact:
                    arrays.append(vals)
                else:
                    eta = mem.shape[1]
                    offsets = pa.array(np.arange(0, self.n_rows * eta + 1, eta, dtype=np.int32))
                    arrays.append(pa.ListArray.from_arrays(offsets, vals))
            elif a.name in self.other.columns:
                arrays.append(pa.array(self.other[a.name]))
            else:
                continue
            names.append(a.name)
        table = pa.Table.from_arrays(arrays, names=names)
        meta = dict(table.schema.metadata or {})
        meta[META_KEY] = json.dumps(self.metadata()).encode("utf-8")
        table = table.replace_schema_metadata(meta)
        with atomic_path(path, protect=protect) as tmp:
            pq.write_table(table, tmp)

    # --------------------------------------------------------------- csv
    def to_csv(self, path: PathLike, *, protect: Iterable[PathLike] = ()) -> None:
        """Write CSV with ``{a|b|c}`` cells (the papers' aggregated expression)
        and the metadata in ``<path>.anonset.json``; both written atomically."""
        frame = pd.DataFrame()
        for a in self.schema:
            if a.name in self._masks:
                labels = np.array([str(v) for v in a.domain], dtype=object)
                bad = [v for v in labels if _CSV_FORBIDDEN & set(v)]
                if bad:
                    raise ValueError(f"attribute {a.name!r}: value {bad[0]!r} contains one of "
                                     "'{', '|', '}', which the CSV set notation reserves; use Parquet")
                mem = labels[self.members(a.name)]
                if self.params[a.name].exact:
                    frame[a.name] = mem[:, 0]
                else:
                    frame[a.name] = ["{" + "|".join(r) + "}" for r in mem.tolist()]
            elif a.name in self.other.columns:
                frame[a.name] = self.other[a.name].to_numpy()
        path = Path(path)
        meta_path = Path(str(path) + CSV_META_SUFFIX)
        meta = self.metadata()
        # pass-through columns: their dtypes, so that reading restores them exactly
        meta["csv_dtypes"] = {c: str(self.other[c].dtype) for c in self.other.columns}
        with atomic_path(path, protect=protect) as tmp, \
                atomic_path(meta_path, protect=protect) as tmp_meta:
            frame.to_csv(tmp, index=False, compression=_csv_compression(path))
            tmp_meta.write_text(json.dumps(meta, indent=1), encoding="utf-8")


def _domain_array(a: Attribute):
    import pyarrow as pa
    return pa.array(list(a.domain))


def read_parquet(path: PathLike) -> SetTable:
    """Read a SetTable written by :meth:`SetTable.to_parquet`."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise ValueError(f"{str(path)!r} is not a readable Parquet file: {e}") from None
    raw = (table.schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise ValueError(f"{str(path)!r} has no anonset metadata: not a published SetTable")
    meta = json.loads(raw.decode("utf-8"))
    schema = Schema.from_dict(meta["schema"])
    masks, other = {}, {}
    for a in schema:
        if a.name not in table.column_names:
            raise ValueError(f"{str(path)!r}: column {a.name!r} of the metadata is missing")
        col = table.column(a.name).combine_chunks()
        if a.published:
            index = {v: i for i, v in enumerate(a.domain)}
            if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
                offsets = np.asarray(col.offsets)
                flat = col.flatten().to_pylist()
            else:
                flat = col.to_pylist()
                offsets = np.arange(len(flat) + 1)
            try:
                codes = np.fromiter((index[v] for v in flat), dtype=np.int64, count=len(flat))
            except KeyError as e:
                raise ValueError(f"{str(path)!r}: column {a.name!r} holds {e.args[0]!r}, which "
                                 "is not in its published domain") from None
            masks[a.name] = masks_from_codes(codes, offsets, a.d)
        else:
            other[a.name] = col.to_pandas()
    return SetTable._from_metadata(meta, masks, pd.DataFrame(other) if other else None)


def read_csv(path: PathLike) -> SetTable:
    """Read a SetTable written by :meth:`SetTable.to_csv` (needs the
    ``.anonset.json`` file beside it)."""
    path = Path(path)
    meta_path = Path(str(path) + CSV_META_SUFFIX)
    if not meta_path.exists():
        raise ValueError(f"{str(meta_path)!r} is missing: a CSV SetTable needs its metadata file")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    schema = Schema.from_dict(meta["schema"])
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False,
                            compression=_csv_compression(path))
    except (UnicodeDecodeError, pd.errors.ParserError, OSError, EOFError) as e:
        raise ValueError(f"{str(path)!r} is not a readable CSV file: {e}") from None
    masks, other = {}, {}
    for a in schema:
        if a.name not in frame.columns:
            raise ValueError(f"{str(path)!r}: column {a.name!r} of the metadata is missing")
        if a.published:
            index = {str(v): i for i, v in enumerate(a.domain)}
            cells = frame[a.name].tolist()
            lists = []
            for i, c in enumerate(cells):
                if c.startswith("{") and c.endswith("}"):
                    items = c[1:-1].split("|") if len(c) > 2 else []
                else:
                    items = [c]
                lists.append(items)
            offsets = np.zeros(len(lists) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(x) for x in lists])
            flat = [v for x in lists for v in x]
            try:
                codes = np.fromiter((index[v] for v in flat), dtype=np.int64, count=len(flat))
            except KeyError as e:
                raise ValueError(f"{str(path)!r}: column {a.name!r} holds {e.args[0]!r}, which "
                                 "is not in its published domain") from None
            masks[a.name] = masks_from_codes(codes, offsets, a.d)
        else:
            other[a.name] = frame[a.name]
    other_df = None
    if other:
        other_df = _restore_dtypes(path, list(other), meta.get("csv_dtypes", {}))
    return SetTable._from_metadata(meta, masks, other_df)


#: pandas < 3 parses floats exactly only with float_precision="round_trip";
#: pandas 3 does by default and deprecates the argument.
_EXACT_FLOATS = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def _restore_dtypes(path, columns, dtypes) -> pd.DataFrame:
    """Pass-through columns with the dtypes they had when written: text
    columns stay text ('007' stays '007', 'NA' stays 'NA'; only empty cells
    were missing values), numeric columns are parsed exactly."""
    comp = _csv_compression(path)
    text = pd.read_csv(path, usecols=columns, dtype=str, keep_default_na=False,
                       compression=comp)
    out = {}
    for c in columns:
        dt = dtypes.get(c, "object")
        if dt in ("object", "string", "str"):
            col = text[c].astype(object)
            col = col.where(col != "", None)
            # pandas 3 writes text columns as "str" (its string dtype): restore it
            out[c] = col if dt == "object" else col.astype(dt)
        else:
            parsed = pd.read_csv(path, usecols=[c], compression=comp, **_EXACT_FLOATS)[c]
            try:
                out[c] = parsed.astype(dt)
            except (TypeError, ValueError):
                out[c] = parsed
    return pd.DataFrame(out)[columns]
