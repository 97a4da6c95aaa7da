"""One engine for publishing the randomized family (papers 000 and 004), shared
by the in-memory, streamed and Dask paths, so that they accept, refuse and
publish identically (DESIGN.md, "One engine").

1. **draft** (:func:`draft`): what the caller asked for, checked against the
   table's columns before any row is read: every column has a role the user
   chose, declared domains, bins and hierarchies name real columns, the model
   names only sensitive attributes, nested types are not published.
2. **stats** (:class:`Stats`): one pass over the rows gathers what the whole
   table determines -- its row count, the values of columns whose domain is
   inferred, the distribution A_j of each attribute that closeness needs
   (paper 000, Algorithm 1), the text-to-type decision of CSV columns.
   Statistics of chunks or partitions merge; the result does not depend on
   how the rows were split.
3. **plan** (:func:`make_plan`): built once from the draft and the statistics:
   the schema, the parameters (p_j, eta_j) (optimized or checked), the key,
   the row order; every remaining check happens here (domain limits, values
   published in the clear, seeds).
4. **apply** (:func:`publish_block`): a pure function of (plan, block of rows,
   global index of its first row) -> the published block, in input order.
   Every set is a pure function of (key, global row, attribute), or of (key,
   record id, attribute, value) in persistent-key mode, so any chunking gives
   the same sets.  The output order is a keyed shuffle: each row's rank
   (:func:`block_ranks`) is a pure function of (key, global row); in memory
   the rows are sorted by rank, a file is shuffled through rank buckets, Dask
   sets the rank as the index.

Reconstruction works the same way (:class:`ReconstructionPlan`): the
counts of one block (w of eq. 17, or the distinct set tuples of the exact
EM), merged over blocks, then one estimate.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import validate as V
from ._version import __version__
from .encode import encode_column
from .hierarchy import Hierarchy
from .io.keys import (check_rng, derive_key, key_mode, make_key, read_key_file, record_counters,
                      record_hashes, row_ranks, seed_bits, MIN_SEED_BYTES)
from .models import Closeness, DiversityCloseness
from .schema import Attribute, Schema
from .validate import InputError

__all__ = ["Options", "Draft", "Stats", "Plan", "draft", "make_plan", "publish_block",
           "block_ranks", "infer_schema", "ReconstructionPlan", "Counts", "ROLE_OF_PARAM"]

#: The keyword argument that gives a column each role.
ROLE_OF_PARAM = {"sensitive": "sensitive", "exact": "exact", "identifiers": "identifier",
                 "other": "other", "drop": "drop"}
_INT_TEXT = re.compile(r"^[+-]?\d+$")


# ================================================================ options
@dataclass(frozen=True)
class Options:
    """Everything a caller can ask of a publication, before any data is seen.

    The fields are the keyword arguments of :func:`anonset.publish`; see
    its docstring.  :meth:`check` validates them (one place for every path).
    """

    model: Any
    schema: Schema | None = None
    sensitive: tuple = ()
    exact: tuple = ()
    identifiers: tuple = ()
    other: tuple = ()
    drop: tuple = ()
    bins: Mapping = field(default_factory=dict)
    domains: Mapping = field(default_factory=dict)
    ordinal: Any = ()
    hierarchies: Mapping = field(default_factory=dict)
    missing: str = "error"
    missing_token: str = "?"
    clip_l: bool = False
    params: Mapping | None = None
    allow_clear: tuple = ()
    keep_order: bool = False
    record_id: str | None = None
    seed: Any = None
    research_seed: bool = False
    key_file: Any = None
    rng: str = "chacha20"
    n_threads: int | None = None

    def check(self) -> "Options":
        """Validated copy (names as tuples, flags as bools)."""
        V.check_model(self.model)
        if self.schema is not None and not isinstance(self.schema, Schema):
            raise InputError(f"got a {type(self.schema).__name__}", param="schema",
                             expected="an anonset.Schema or None")
        roles = {p: V.check_names(getattr(self, p), p) for p in ROLE_OF_PARAM}
        if self.schema is not None and any(roles.values()):
            named = sorted(p for p, v in roles.items() if v)
            raise InputError(f"a schema was given together with {named}", param="schema",
                             expected="either a schema or role arguments, not both")
        for p in ("bins", "domains", "hierarchies"):
            v = getattr(self, p)
            if not isinstance(v, Mapping):
                raise InputError(f"got a {type(v).__name__}", param=p,
                                 expected="a mapping {column: ...}")
        ordinal = self.ordinal if isinstance(self.ordinal, Mapping) else \
            {c: None for c in V.check_names(self.ordinal, "ordinal")}
        V.check_choice(self.missing, "missing", ("error", "category"))
        if not isinstance(self.missing_token, str) or not self.missing_token:
            raise InputError(f"got {self.missing_token!r}", param="missing_token",
                             expected="a non-empty string")
        check_rng(self.rng)
        V.check_threads(self.n_threads)
        if self.record_id is not None:
            if not isinstance(self.record_id, str) or not self.record_id:
                raise InputError(f"got {self.record_id!r}", param="record_id",
                                 expected="the name of a stable identifier column")
            if self.seed is None and self.key_file is None:
                raise InputError("needs a persistent key", param="record_id",
                                 expected="{@key_file} (or a seed of >= 128 bits) that stays the "
                                          "same for every release")
        if self.seed is not None and self.key_file is not None:
            raise InputError("was given together with a seed", param="key_file",
                             expected="either a key file or a seed")
        return replace(self, ordinal=ordinal,
                       clip_l=V.check_bool(self.clip_l, "clip_l"),
                       keep_order=V.check_bool(self.keep_order, "keep_order"),
                       research_seed=V.check_bool(self.research_seed, "research_seed"),
                       allow_clear=V.check_names(self.allow_clear, "allow_clear"), **roles)

    def key_material(self):
        """(seed or key-file bytes, research) as make_key takes them."""
        if self.key_file is not None:
            return read_key_file(self.key_file), False
        return self.seed, self.research_seed


# ================================================================== draft
@dataclass
class ColumnDraft:
    """One column as the caller described it (its domain may be unknown yet)."""

    name: str
    role: str
    domain: tuple | None = None
    bins: tuple | None = None
    hierarchy: Hierarchy | None = None
    kind: str = "nominal"
    categorical: bool = False        # the domain is the pandas Categorical's categories
    missing: str | None = None

    @property
    def published(self) -> bool:
        return self.role in ("sensitive", "exact")


@dataclass
class Draft:
    """The request checked against the table's columns (no rows read yet)."""

    options: Options
    columns: list
    drafts: dict                   # name -> ColumnDraft, every input column
    text: bool                     # blocks arrive as text (CSV) and are typed by the plan
    file: Any = None

    @property
    def published(self) -> list:
        return [c for c in self.drafts.values() if c.published]

    @property
    def need_domain(self) -> list:
        return [c.name for c in self.published if c.domain is None and c.bins is None]

    @property
    def need_counts(self) -> list:
        if isinstance(self.options.model, (Closeness, DiversityCloseness)):
            return [c.name for c in self.published if c.role == "sensitive"]
        return []

    @property
    def needs_first_pass(self) -> bool:
        """Whether anything but the row count must be read before publishing."""
        return bool(self.need_domain or self.need_counts or self.text or self.options.record_id)

    @property
    def stats_columns(self) -> list:
        """Columns the first pass must read (at least one, for the row count)."""
        need = set(self.need_domain) | set(self.need_counts)
        if self.text:
            need |= {c.name for c in self.published}
        if self.options.record_id:
            need.add(self.options.record_id)
        return [c for c in self.columns if c in need] or self.columns[:1]


def draft(options: Options, columns, dtypes: Mapping | None = None, *, text: bool = False,
          file=None) -> Draft:
    """Check the request against a table's columns (and their types, when
    known: pandas dtypes or Arrow types)."""
    opts = options.check()
    cols = V.check_columns(columns, file=file)
    dtypes = dict(dtypes or {})
    if opts.schema is not None:
        missing = [a.name for a in opts.schema if a.name not in cols]
        if missing:
            raise InputError(f"names columns that are not in the data: {missing}", param="schema",
                             file=file, expected=f"columns of the data: {cols}")
        V.resolve_roles(cols, {"schema": [a.name for a in opts.schema]}, file=file)
        token = opts.missing_token if opts.missing == "category" else None
        drafts = {a.name: ColumnDraft(a.name, a.role, a.domain, a.bins, a.hierarchy, a.kind,
                                      missing=a.missing or (token if a.published else None))
                  for a in opts.schema}
        drafts = {c: drafts[c] for c in cols}
    else:
        named = {p: list(getattr(opts, p)) for p in ROLE_OF_PARAM}
        roles = V.resolve_roles(cols, named, file=file)
        for p in ("bins", "domains", "hierarchies", "ordinal"):
            for c in getattr(opts, p):
                if c not in cols:
                    raise InputError(f"names {c!r}, which is not a column of the data", param=p,
                                     file=file, expected=f"one of {cols}")
                if ROLE_OF_PARAM[roles[c]] not in ("sensitive", "exact"):
                    raise InputError(f"names {c!r}, which is not published (its role is "
                                     f"{ROLE_OF_PARAM[roles[c]]})", param=p, file=file,
                                     expected="a sensitive or exact column")
        for c in opts.bins:
            if c in opts.domains:
                raise InputError("has both bins and a declared domain", column=c, file=file,
                                 expected="either {@bins} or {@domains}")
        drafts = {}
        for c in cols:
            role = ROLE_OF_PARAM[roles[c]]
            cd = ColumnDraft(c, role)
            if cd.published:
                _declare(cd, opts, dtypes.get(c))
            drafts[c] = cd
    if opts.record_id is not None:
        rid = drafts.get(opts.record_id)
        if rid is None or rid.role != "identifier":
            raise InputError("must name an identifier column (never published)",
                             param="record_id", column=opts.record_id, file=file,
                             expected="a column also named in {@identifiers}")
    for c in drafts.values():
        if c.published:
            V.check_publishable_type(c.name, dtypes.get(c.name), file=file)
    published = [c for c in drafts.values() if c.published]
    if not published:
        raise InputError("no column is sensitive or exact", param="sensitive", file=file,
                         expected="at least one column to publish")
    if not any(c.role == "sensitive" for c in published):
        raise InputError("no column is sensitive (every published column is exact)",
                         param="sensitive", file=file, expected="at least one sensitive column")
    V.check_model_columns(opts.model, [c.name for c in published if c.role == "sensitive"],
                          [c.name for c in published])
    for n in opts.allow_clear:
        if n not in drafts or drafts[n].role != "sensitive":
            raise InputError(f"names {n!r}, which is not a sensitive column", param="allow_clear",
                             file=file, expected="sensitive columns")
    return Draft(opts, cols, drafts, text, file)


def _declare(cd: ColumnDraft, opts: Options, dtype) -> None:
    """A published column's declared domain, bins, hierarchy, kind."""
    c = cd.name
    h = opts.hierarchies.get(c)
    if h is not None and not isinstance(h, Hierarchy):
        h = Hierarchy.from_csv(h)
    cd.hierarchy = h
    if opts.missing == "category":
        cd.missing = opts.missing_token
    if c in opts.ordinal:
        cd.kind = "ordinal"
    if c in opts.bins:
        cd.bins = tuple(opts.bins[c])
        cd.kind = "ordinal"
        return
    dom = opts.domains.get(c)
    if dom is None and opts.ordinal.get(c) is not None:
        dom = opts.ordinal[c]
    if dom is None and isinstance(dtype, pd.CategoricalDtype):
        # a pandas Categorical declares its domain (and order, when ordered)
        dom = [_scalar(v) for v in dtype.categories]
        cd.categorical = True
        if dtype.ordered:
            cd.kind = "ordinal"
    if dom is None and h is not None:
        leaves = list(h.leaves)
        if dtype is not None and pd.api.types.is_integer_dtype(dtype):
            try:
                leaves = [int(v) for v in leaves]
            except ValueError:
                raise InputError("is integer but its hierarchy has non-integer leaves",
                                 column=c, expected="integer leaves") from None
        dom = leaves
    if dom is not None:
        cd.domain = tuple(_scalar(v) for v in dom)


def _scalar(v):
    """A plain Python scalar for a domain value (NumPy scalars -> int/float/str)."""
    return v.item() if isinstance(v, np.generic) else v


# ================================================================== stats
class Stats:
    """What one pass over the rows learns; mergeable across blocks.

    * ``n``: rows;
    * ``seen[c]``: value -> count of every column whose domain is inferred
      (text values for CSV, typed values otherwise), ``na[c]`` its missing
      cells;
    * ``counts[c]``: value counts (codes of the declared domain) of every
      other column whose distribution closeness needs;
    * ``ids``: the hashes of the persistent-mode record ids (uniqueness).
    """

    def __init__(self, d: Draft):
        self.draft = d
        self.n = 0
        self.seen = {c: {} for c in d.need_domain}
        self.na = {c: 0 for c in d.need_domain}
        self.counts: dict = {}
        self.ids: list = []
        self._declared = {}
        for c in d.need_counts:
            if c not in self.seen:
                attr = _attribute(d.drafts[c], d.drafts[c].domain)
                self._declared[c] = attr
                self.counts[c] = np.zeros(attr.d, dtype=np.int64)

    def add(self, block: pd.DataFrame, row0: int | None = None) -> "Stats":
        row0 = self.n if row0 is None else row0
        d = self.draft
        for c in self.seen:
            col = block[c]
            if d.text:
                vals = col.to_numpy(dtype=object)
                miss = _missing_text(vals)
                self.na[c] += int(miss.sum())
                col = pd.Series(vals[~miss], dtype=object)
            else:
                self.na[c] += int(col.isna().sum())
            vc = col.value_counts(dropna=True, sort=False)
            acc = self.seen[c]
            for v, k in zip(vc.index.tolist(), vc.to_numpy().tolist()):
                v = _scalar(v)
                acc[v] = acc.get(v, 0) + k
            if len(acc) > V.MAX_DOMAIN:
                raise V.domain_too_large(c, len(acc), file=d.file, more=True)
        for c, attr in self._declared.items():
            col = block[c].reset_index(drop=True)
            if d.text:
                col = cast_text(col, attr, c, d.file)
            codes = encode_column(col, attr, row0=row0)
            self.counts[c] += np.bincount(codes, minlength=attr.d)
        rid = d.options.record_id
        if rid is not None:
            self.ids.append(record_hashes(block[rid].to_numpy(dtype=object)))
        self.n += len(block)
        return self

    def merge(self, other: "Stats") -> "Stats":
        self.n += other.n
        for c, acc in self.seen.items():
            for v, k in other.seen[c].items():
                acc[v] = acc.get(v, 0) + k
            self.na[c] += other.na[c]
        for c in self.counts:
            self.counts[c] += other.counts[c]
        self.ids.extend(other.ids)
        return self


def _missing_text(vals: np.ndarray) -> np.ndarray:
    from .io.tables import NA_MARKERS
    return np.fromiter((v is None or v in NA_MARKERS for v in vals), dtype=bool,
                       count=len(vals))


def _text_type(values) -> str:
    """'int', 'float' or 'str': the narrowest type every text value has."""
    vals = [v for v in values]
    if vals and all(_INT_TEXT.match(v) for v in vals):
        return "int"
    try:
        for v in vals:
            float(v)
    except ValueError:
        return "str"
    return "float" if vals else "str"


def _domain_type(domain) -> str:
    vals = [v for v in domain]
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return "int"
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return "float"
    return "str"


def cast_text(col: pd.Series, attr: Attribute, name: str, file=None) -> pd.Series:
    """A text column typed like its attribute's domain; missing markers -> NA."""
    vals = col.to_numpy(dtype=object)
    miss = _missing_text(vals)
    kind = "float" if attr.bins is not None else _domain_type(
        [v for v in attr.domain if v != attr.missing])
    if kind == "str":
        out = vals.copy()
        out[miss] = None
        return pd.Series(out, dtype=object)
    num = np.full(len(vals), np.nan)
    good = ~miss
    try:
        num[good] = np.array(vals[good], dtype=np.float64)
    except ValueError:
        bad = next(v for v in vals[good] if not _is_number(v))
        raise InputError(f"holds the text {bad!r}, but its domain is numeric", column=name,
                         file=file, expected="numbers") from None
    return pd.Series(num)


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


# =================================================================== plan
@dataclass
class Plan:
    """Everything :func:`publish_block` needs; built once by :func:`make_plan`.

    ``key`` and ``order_key`` are secrets: a plan is never written anywhere
    (it travels to Dask workers inside the task graph, see docs/scaling.md).
    """

    source: Schema                 # every input column, with its role
    schema: Schema                 # what is published: no identifier, no dropped column
    params: dict
    model: dict
    n_rows: int
    key: bytes
    order_key: bytes | None        # None: input order kept (keep_order=True)
    rng: str
    n_threads: int | None
    text: bool
    record_id: str | None
    info: dict

    @property
    def shuffled(self) -> bool:
        return self.order_key is not None


def make_plan(d: Draft, stats: Stats) -> Plan:
    """The schema, parameters, key and order of a publication."""
    from .randomized.params import optimize
    from .randomized.publish import check_params
    opts = d.options
    if stats.n == 0:
        raise InputError("is empty (no rows)", param="data", file=d.file,
                         expected="at least one row to publish")
    attrs, counts = [], dict(stats.counts)
    for c in d.columns:
        cd = d.drafts[c]
        if not cd.published:
            attrs.append(Attribute(c, role=cd.role))
            continue
        if c in stats.seen:
            dom, cnt = _finish_domain(cd, stats.seen[c], stats.na[c], d)
            attr = _attribute(cd, tuple(dom), inferred=True)
            if c in d.need_counts:
                counts[c] = cnt
        else:
            attr = _attribute(cd, cd.domain)
        V.check_domain_size(attr, file=d.file)
        attrs.append(attr)
    source = Schema(tuple(attrs))
    published = source.published
    for a in published:
        if a.role == "sensitive" and isinstance(opts.model, (Closeness, DiversityCloseness)):
            V.check_closeness_size(a, file=d.file)
    if opts.record_id is not None:
        ids = np.concatenate(stats.ids) if stats.ids else np.zeros(0, np.uint64)
        if len(np.unique(ids)) != len(ids):
            raise InputError("holds a repeated value", param="record_id", column=opts.record_id,
                             file=d.file, expected="one stable, distinct id per record")
    codes_like = _CodesFromCounts(counts)
    if opts.params is None:
        params = optimize(opts.model, published, codes_like, clip_l=opts.clip_l)
    else:
        params = check_params(opts.params, opts.model, published, codes_like,
                              clip_l=opts.clip_l)
    clear = V.check_clear(published, params, opts.model, opts.allow_clear, opts.clip_l,
                          file=d.file)
    seed, research = opts.key_material()
    key = make_key(seed, research_seed=research)
    persistent = opts.record_id is not None
    if persistent and seed_bits(seed) < 8 * MIN_SEED_BYTES:
        raise InputError("needs a key of at least 128 bits", param="record_id",
                         expected="{@key_file} holding a long-lived secret")
    # the output order: keyed by the publication's key, so a seed reproduces
    # it; in persistent mode the key outlives one release, and ordering two
    # releases alike would link their rows: each release gets a fresh order
    order_key = None if opts.keep_order else (
        make_key() if persistent else derive_key(key, "row-order"))
    keep = Schema(tuple(a for a in source if a.role not in ("identifier", "drop")))
    info = {
        "rng": opts.rng,
        "seeded": seed is not None,
        "key": key_mode(seed, research, persistent),
        "row_order": "input" if opts.keep_order else "shuffled",
        "clear": clear,
        "roles": {a.name: a.role for a in source},
        "missing": {"policy": opts.missing, "token": opts.missing_token}
                   if opts.missing == "category" else {"policy": "error"},
        "anonset": __version__,
    }
    return Plan(source, keep, params, opts.model.to_dict(), stats.n, key, order_key, opts.rng,
                opts.n_threads, d.text, opts.record_id, info)


def _attribute(cd: ColumnDraft, domain, inferred: bool = False) -> Attribute:
    try:
        return Attribute(cd.name, role=cd.role, domain=domain if cd.bins is None else None,
                         kind=cd.kind, bins=cd.bins, hierarchy=cd.hierarchy,
                         inferred=inferred, missing=cd.missing)
    except ValueError as e:
        raise InputError(str(e).split(": ", 1)[-1], column=cd.name) from None


def _finish_domain(cd: ColumnDraft, seen: dict, na: int, d: Draft):
    """An inferred domain (and value counts) from the values seen."""
    name, opts = cd.name, d.options
    if d.text:
        kind = _text_type(seen)
        typed: dict = {}
        for v, k in seen.items():
            tv = int(v) if kind == "int" else float(v) if kind == "float" else v
            typed[tv] = typed.get(tv, 0) + k
        seen = typed
    if not seen and not na:
        raise InputError("has no values to infer a domain from", column=name, file=d.file,
                         expected="a declared domain, or at least one value")
    if na and cd.missing is None:
        raise InputError(f"has {na:,} missing value(s)", column=name, file=d.file,
                         expected="no missing values, or {@missing='category'} to publish them "
                                  "as a value of their own")
    types = {type(v) for v in seen}
    if len(types) > 1 and not types <= {int, float}:
        raise InputError(f"mixes value types {sorted(t.__name__ for t in types)}", column=name,
                         file=d.file, expected="one value type: convert it or declare its domain")
    if na and cd.missing in seen:
        raise InputError(f"has {na:,} missing value(s) and also the real value {cd.missing!r} "
                         f"{seen[cd.missing]:,} time(s)", column=name, file=d.file,
                         expected="a missing-value token that is not a real value: "
                                  "{@missing_token=...}")
    if cd.kind == "ordinal" and str in types:
        raise InputError("is ordinal, but its order would come from sorting its text values "
                         "alphabetically (e.g. 'High School' before 'Less Than High School')",
                         column=name, file=d.file,
                         expected="the order declared: {@ordinal={column: [values in order]}}, "
                                  "a domain, bins, or an ordered pandas Categorical")
    dom = sorted(seen)
    if na and cd.missing not in dom:
        dom.append(cd.missing)
    index = {v: i for i, v in enumerate(dom)}
    cnt = np.zeros(len(dom), dtype=np.int64)
    for v, k in seen.items():
        cnt[index[v]] += k
    if na:
        cnt[index[cd.missing]] += na
    return dom, cnt


class _CodesFromCounts(Mapping):
    """What optimize()/check_params() read of a column is its bincount
    (A_j): codes with given per-value counts, made one attribute at a time."""

    def __init__(self, counts):
        self._counts = counts

    def __getitem__(self, name):
        c = self._counts[name]
        return np.repeat(np.arange(len(c), dtype=np.int32), c)

    def __iter__(self):
        return iter(self._counts)

    def __len__(self):
        return len(self._counts)


# ================================================================== apply
def typed_block(plan: Plan, block: pd.DataFrame) -> pd.DataFrame:
    """The block's published columns typed as the plan says (CSV text)."""
    block = block.reset_index(drop=True)
    if not plan.text:
        return block
    out = block.copy()
    for a in plan.source.published:
        out[a.name] = cast_text(block[a.name], a, a.name)
    return out


def publish_block(plan: Plan, block: pd.DataFrame, row0: int):
    """Publish global rows ``row0 .. row0 + len(block) - 1`` in input order:
    the rows :func:`anonset.publish` gives for the whole table under the same
    plan.  Pure: the same (plan, block, row0) always gives the same output."""
    from .randomized.publish import sample_sets
    from .randomized.settable import SetTable
    block = typed_block(plan, block)
    published = plan.source.published
    if len(block) == 0:
        masks = {a.name: np.zeros((0, (a.d + 63) // 64), dtype=np.uint64) for a in published}
    else:
        codes = {a.name: encode_column(block[a.name], a, row0=row0) for a in published}
        ids = {a.name: plan.source.stream_id(a.name) for a in published}
        counters = None
        if plan.record_id is not None:
            h = record_hashes(block[plan.record_id].to_numpy(dtype=object))
            counters = {n: record_counters(h, c) for n, c in codes.items()}
        masks = sample_sets(codes, plan.params, ids, plan.key, rng=plan.rng, row0=row0,
                            n_threads=plan.n_threads, counters=counters)
    other = [a.name for a in plan.schema if a.role == "other"]
    return SetTable(plan.schema, masks, plan.params, plan.model,
                    block[other] if other else None, plan.info)


def block_ranks(plan: Plan, row0: int, n: int):
    """Keyed ranks of global rows ``row0 .. row0 + n - 1`` (None: input order).
    The published order is by (rank, row)."""
    if plan.order_key is None:
        return None
    return row_ranks(plan.order_key, row0, n)


def order_of(ranks: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Positions sorted by (rank, row)."""
    rows = np.arange(len(ranks)) if rows is None else rows
    return np.lexsort((rows, ranks))


def infer_schema(frame: pd.DataFrame, options: Options) -> Schema:
    """The schema the engine builds for a whole in-memory table (every input
    column, with its role), without publishing."""
    d = draft(options, list(frame.columns), dict(frame.dtypes))
    st = Stats(d).add(frame, 0)
    attrs = []
    for c in d.columns:
        cd = d.drafts[c]
        if not cd.published:
            attrs.append(Attribute(c, role=cd.role))
        elif c in st.seen:
            dom, _ = _finish_domain(cd, st.seen[c], st.na[c], d)
            attrs.append(_attribute(cd, tuple(dom), inferred=True))
        else:
            attrs.append(_attribute(cd, cd.domain))
    return Schema(tuple(attrs))


# ========================================================== reconstruction
class ReconstructionPlan:
    """What a reconstruction needs besides the sets: the published header
    (schema, parameters, row count), the attributes and the method, checked
    once; :meth:`counts` makes the per-block counts, :meth:`estimate` the
    cross-tabulation from the merged counts."""

    def __init__(self, header, attributes, method: str = "em", *, max_iter=None, tol=None,
                 n_threads=None, seed=None):
        from .randomized.reconstruct import METHODS
        V.check_choice(method, "method", METHODS)
        self.header, self.method = header, method
        self.attributes = V.check_attributes(header, attributes)
        self.dims = V.check_cells(header, self.attributes)
        self.max_iter, self.tol = max_iter, tol
        self.n_threads, self.seed = V.check_threads(n_threads) or None, seed

    def counts(self) -> "Counts":
        return Counts(self)

    def estimate(self, counts: "Counts"):
        from .randomized.reconstruct import estimate_from_counts
        if counts.rows != self.header.n_rows:
            raise InputError(f"holds {counts.rows:,} rows but its metadata says "
                             f"{self.header.n_rows:,}", param="n_rows",
                             expected="a complete file (it may be truncated)")
        kw = {k: v for k, v in (("max_iter", self.max_iter), ("tol", self.tol))
              if v is not None}
        return estimate_from_counts(self.header, self.attributes, self.method,
                                    w=counts.w, patterns=counts.patterns_result(),
                                    n_threads=self.n_threads, seed=self.seed, **kw)


class Counts:
    """Mergeable counts of published rows: w of eq. 17 ('em',
    'value_adding'), or distinct set tuples with multiplicities
    ('exact_em'); 'random' needs only the row count."""

    def __init__(self, rplan: ReconstructionPlan):
        self.rplan = rplan
        self.rows = 0
        self.w = None
        self.patterns = None
        if rplan.method == "exact_em":
            from .randomized.reconstruct import PatternCounter
            self.patterns = PatternCounter([(d + 63) // 64 for d in rplan.dims])
        elif rplan.method != "random":
            self.w = np.zeros(rplan.dims, dtype=np.int64)

    def add(self, masks) -> "Counts":
        """Count one block: ``masks`` holds one bitmask array per attribute."""
        from .randomized import _kernels
        masks = [np.ascontiguousarray(m, dtype=np.uint64) for m in masks]
        n = len(masks[0]) if masks else 0
        self.rows += n
        if n == 0:
            return self
        if self.patterns is not None:
            self.patterns.add_masks(masks)
        elif self.w is not None:
            header = self.rplan.header
            max_set = math.prod(header.params[a].eta for a in self.rplan.attributes)
            self.w += _kernels.count_w(masks, self.rplan.dims, max_set,
                                       n_threads=self.rplan.n_threads or 0)
        return self

    def merge(self, other: "Counts") -> "Counts":
        self.rows += other.rows
        if self.w is not None:
            self.w += other.w
        if self.patterns is not None:
            self.patterns.merge(other.patterns)
        return self

    def patterns_result(self):
        return self.patterns.result() if self.patterns is not None else None
