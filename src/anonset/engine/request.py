"""The request of a publication and its draft: the options a caller gives
(:class:`Options`, validated in one place), checked against a table's column
names and types before any row is read (:func:`draft`): every column has a
role the user chose, options name real columns, the model names only
sensitive columns, nested values are not published."""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .. import validate as V
from ..hierarchy import Hierarchy, hierarchy_of
from ..io.keys import check_research_seed, check_rng, read_key_file
from ..passthrough import check_allow_identifier, check_allow_recode
from ..schema import Attribute, Schema
from ..validate import InputError

__all__ = ["Options", "ColumnDraft", "Draft", "draft", "attribute_of", "scalar", "ROLE_OF_PARAM"]

ROLE_OF_PARAM = {"sensitive": "sensitive", "exact": "exact", "identifiers": "identifier",
                 "other": "other", "drop": "drop"}


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
    allow_recode: tuple = ()
    allow_identifier: tuple = ()
    allow_rare: tuple = ()
    allow_shared_id: tuple = ()
    keep_order: bool = False
    record_id: str | None = None
    new_in_series: tuple = ()
    first_in_series: bool = False
    seed: Any = field(default=None, repr=False)         # key material: never printed
    research_seed: bool = False
    key_file: Any = field(default=None, repr=False)
    rng: str = "chacha20"
    n_threads: int | None = None
    #: set by :meth:`check` when ``params`` is an earlier release (a SetTable
    #: or a PriorRelease): what a persistent-key release must keep of it
    prior: Any = None

    @classmethod
    def of(cls, model, schema=None, **options) -> "Options":
        """Options from the keyword arguments of a publishing call (a file,
        Dask): a name :func:`anonset.publish` does not take is refused."""
        from dataclasses import fields
        known = {f.name for f in fields(cls)} - {"model", "schema", "prior"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise InputError(f"got {', '.join(map(repr, unknown))}", param="options",
                             expected="keyword arguments of anonset.publish ("
                                      + ", ".join(sorted(known)) + ")")
        return cls(model, schema, **options)

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
        for p, what in (("bins", "increasing bin edges"), ("domains", "the domain's values")):
            for c, v in getattr(self, p).items():
                V.check_value_list(v, p, c, what)
        for c, v in self.bins.items():
            # a bin edge is a number: text or None was a ValueError or a
            # TypeError from inside the binning (H125)
            bad = [x for x in v if isinstance(x, (bool, np.bool_))
                   or not isinstance(x, (numbers.Real, np.integer, np.floating)) or x != x]
            if bad:
                raise InputError(f"has the edge {bad[0]!r}", param="bins", column=c,
                                 expected="numbers in increasing order (float('inf') for an "
                                          "open end)")
        ordinal = self.ordinal if isinstance(self.ordinal, Mapping) else \
            {c: None for c in V.check_names(self.ordinal, "ordinal")}
        for c, v in ordinal.items():
            if v is not None:
                V.check_value_list(v, "ordinal", c, "the domain's values in their order")
        if self.missing == "drop":
            # leaving out the rows with a missing cell tells whoever knows a
            # person is in the data that they left a question unanswered; a
            # missing cell published as a value is inside its random set
            raise InputError("'drop' leaves rows out of the release, which tells who left a "
                             "question unanswered; paper 000's publishing keeps every row",
                             param="missing",
                             expected="{@missing='category'} (a missing cell published as a "
                                      "value of its own, inside the random sets like any other)")
        V.check_choice(self.missing, "missing", ("error", "category"))
        if not isinstance(self.missing_token, str) or not self.missing_token:
            raise InputError(f"got {self.missing_token!r}", param="missing_token",
                             expected="a non-empty string")
        if self.missing_token != "?" and self.missing != "category":
            # the token would be ignored: a missing cell is then an error
            raise InputError(f"is {self.missing_token!r}, which only {{@missing='category'}} "
                             "uses (without it a missing cell is refused)", param="missing_token",
                             expected="{@missing='category'} with it, or no {@missing_token}")
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
        if self.key_file is None:
            check_research_seed(self.seed, self.research_seed)
        from ..randomized.prior import prior_of
        params, prior = prior_of(self.params)
        prior = prior if prior is not None else self.prior
        if params is not None and not isinstance(params, Mapping):
            raise InputError(f"got a {type(params).__name__}", param="params",
                             expected="an earlier release (a SetTable), or its .params")
        if params is not None and prior is None and self.record_id is not None:
            # a mapping shows neither the series it continues nor its
            # domains and columns, and its sets are kept all the same (H40,
            # H41: params=first.params, or a pickled copy's, skipped every
            # check of the series while every set was drawn again alike)
            raise InputError("is a mapping of parameters, which under a persistent key "
                             "(record_id) shows neither the series it continues nor the "
                             "domains and columns its releases published", param="params",
                             expected="the earlier release itself (params=first: a SetTable, "
                                      "one read with anonset.read_parquet, or a Dask release; "
                                      "--params-from FILE), or, in the first release of a "
                                      "series, no {@params} and {@first_in_series=True}")
        first = V.check_bool(self.first_in_series, "first_in_series")
        if first and self.record_id is None:
            raise InputError("is given without {@record_id}: only a persistent key (a key file "
                             "and a record id) makes a series of releases",
                             param="first_in_series",
                             expected="{@record_id} and {@key_file} with it, or no "
                                      "{@first_in_series=True}")
        # an earlier release drawn under a persistent key continues its
        # series; one that was not (a fresh key, a key file without a record
        # id) gives parameters only, and is no earlier release of a series
        in_series = prior is not None and prior.persistent
        if first and in_series:
            raise InputError("is given together with {@params}, an earlier release of the series",
                             param="first_in_series",
                             expected="either {@params} (a later release) or "
                                      "{@first_in_series=True} (the series' first release)")
        new = V.check_names(self.new_in_series, "new_in_series")
        if new and prior is None:
            raise InputError(f"names {list(new)}, but no earlier release was given",
                             param="new_in_series",
                             expected="{@params} naming the series' latest release, or no "
                                      "{@new_in_series} in a first release")
        if self.record_id is not None and params is None and not first:
            # a later release given no earlier one was taken for a first
            # release: it kept every set and read nothing of the series, so
            # an admission date passed through before and a discharge date
            # now gave 77 % of the stays (H46); a first release is declared
            raise InputError("makes this release part of a series under its key, and no earlier "
                             "release was given: a later release must be read beside the "
                             "series' earlier ones (a record keeps its sets, which link its rows "
                             "across the releases)", param="record_id",
                             expected="{@params} (the series' latest release), or "
                                      "{@first_in_series=True} to declare this release the "
                                      "first of its series")
        if self.record_id is not None and prior is not None and not in_series and not first:
            # ... and so was one given a release drawn under no persistent
            # key (an older fresh-key release): it gave its parameters only
            # (H49: 2,262 of 3,000 stays linked and read off)
            named = "" if prior.where == "the earlier release" else f"{prior.where} "
            raise InputError(f"{named}was drawn under no persistent key (no record id), so it "
                             "is no earlier release of this series: it gives parameters only, "
                             "and this release would be taken for the first of its series",
                             param="params",
                             expected="the series' latest release, or {@first_in_series=True} "
                                      "to declare this release the first of its series (its "
                                      "parameters then taken from the one given)")
        return replace(self, ordinal=ordinal, params=params, prior=prior, new_in_series=new,
                       first_in_series=first,
                       clip_l=V.check_bool(self.clip_l, "clip_l"),
                       keep_order=V.check_bool(self.keep_order, "keep_order"),
                       research_seed=V.check_bool(self.research_seed, "research_seed"),
                       allow_clear=V.check_names(self.allow_clear, "allow_clear"),
                       allow_rare=V.check_names(self.allow_rare, "allow_rare"),
                       allow_shared_id=V.check_names(self.allow_shared_id, "allow_shared_id"),
                       allow_recode=V.check_names(self.allow_recode, "allow_recode"),
                       allow_identifier=V.check_names(self.allow_identifier,
                                                      "allow_identifier"), **roles)

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
    inferred: bool = False           # a schema's domain that was read off some data

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
        """Sensitive columns whose value counts the plan reads: every one (A_j
        of t-closeness; the adversary who reads a set alone,
        :func:`check_clear`; a domain a schema read off some data, or a pandas
        Categorical's categories, for the count of the sets that hold a rare
        value, :func:`check_rare`)."""
        return [c.name for c in self.published if c.role == "sensitive"]

    @property
    def stats_columns(self) -> list:
        """Columns the first pass reads: every published column (each value is
        checked against its domain before anything is published, so a lazy
        Dask graph and a file refuse bad values as early as memory does) and
        the identifiers (the persistent-mode record id among them), whose
        values several rows may share.  (The pass-through columns are read
        in the same pass where there are any: :attr:`passthrough_columns`.)"""
        return self._in_order({c.name for c in self.published} | set(self.identifiers))

    def _in_order(self, names: set) -> list:
        """``names`` in the table's column order."""
        return [c for c in self.columns if c in names]

    def _with_role(self, role: str) -> list:
        return [c for c, cd in self.drafts.items() if cd.role == role]

    @property
    def passthrough(self) -> list:
        """The pass-through columns (published unchanged)."""
        return self._with_role("other")

    @property
    def passthrough_columns(self) -> list:
        """What the pass-through check reads (:mod:`anonset.passthrough`:
        a pass-through column that singles rows out, a pass-through column
        or exact QID that recodes a sensitive one), of every row (it keeps
        a sample): the pass-through, exact and sensitive columns, or nothing
        without a sensitive column or a column published as it is."""
        if not (self.passthrough or self.exact or self.series_read) or \
                not (self.sensitive or self.series_targets):
            return []
        return self._in_order({*self.passthrough, *self.exact, *self.sensitive,
                               *self.series_read, *self.series_targets})

    def passthrough_check(self):
        """A fresh :class:`~anonset.passthrough.PassThroughCheck` of this
        release's columns (sensitive columns in bins measured by their bin),
        and of a series' earlier columns that the input holds."""
        from ..passthrough import PassThroughCheck
        return PassThroughCheck(self.passthrough, self.sensitive, self.exact,
                                bins={c.name: c.bins for c in self.published
                                      if c.bins is not None},
                                earlier=self.series_read, earlier_targets=self.series_targets)

    @property
    def series(self):
        """The earlier release of the persistent-key series this release
        continues (a :class:`~anonset.randomized.prior.PriorRelease`), or
        None: its records' rows are linked to this release's by their sets."""
        return series_of(self.options)

    @property
    def series_read(self) -> list:
        """Columns of this input that a release of the series published as
        they are and this one does not: read beside this release's columns
        published as they are (an admission date then, a discharge date now,
        give the stay)."""
        s = self.series
        if s is None:
            return []
        mine = {*self.passthrough, *self.exact}
        return [c for c in self.columns if c in s.as_is and c not in mine]

    @property
    def series_targets(self) -> list:
        """Columns of this input that a release of the series published as
        sets and this one does not publish: what this release's columns
        published as they are must not give away either."""
        s = self.series
        if s is None:
            return []
        mine = {*self.passthrough, *self.exact, *self.sensitive}
        return [c for c in self.columns if c in s.sets and c not in mine]

    @property
    def exact(self) -> list:
        """The exact QIDs (paper 004: published as they are)."""
        return self._with_role("exact")

    @property
    def sensitive(self) -> list:
        """The columns published as random sets."""
        return self._with_role("sensitive")

    @property
    def identifiers(self) -> list:
        """The identifier columns (never published)."""
        return self._with_role("identifier")


def draft(options: Options, columns, dtypes: Mapping | None = None, *, text: bool = False,
          file=None) -> Draft:
    """Check the request against a table's columns (and their types, when
    known: pandas dtypes or Arrow types)."""
    opts = options.check()
    cols = V.check_columns(columns, file=file)
    dtypes = dict(dtypes or {})
    if opts.record_id is not None and opts.record_id in dtypes:
        from ..io.keys import refuse_narrow_float_ids
        refuse_narrow_float_ids(dtypes[opts.record_id], opts.record_id, file=file)
    if opts.schema is not None:
        missing = [a.name for a in opts.schema if a.name not in cols]
        if missing:
            raise InputError(f"names columns that are not in the data: {missing}", param="schema",
                             file=file, expected=f"columns of the data: {cols}")
        V.resolve_roles(cols, {"schema": [a.name for a in opts.schema]}, file=file)
        token = opts.missing_token if opts.missing == "category" else None
        drafts = {a.name: ColumnDraft(a.name, a.role, a.domain, a.bins, a.hierarchy, a.kind,
                                      missing=a.missing or (token if a.published else None),
                                      inferred=a.inferred)
                  for a in opts.schema}
        drafts = {c: drafts[c] for c in cols}
    else:
        named = {p: list(getattr(opts, p)) for p in ROLE_OF_PARAM}
        rid = opts.record_id
        if rid is not None and rid in cols and not any(rid in v for v in named.values()):
            # named as the record id only: say which role it needs (the list
            # of columns without a role would leave the user guessing)
            raise InputError("has no role", param="record_id", column=rid, file=file,
                             expected="a column also named in {@identifiers} (a record id is "
                                      "never published)")
        roles = V.resolve_roles(cols, named, file=file)
        for p in ("bins", "domains", "hierarchies", "ordinal"):
            for c in getattr(opts, p):
                if c not in cols:
                    raise InputError(f"names {c!r}, which is not a column of the data"
                                     + V.close_match(c, cols), param=p, file=file,
                                     expected=f"one of {cols}" + V.comma_hint(cols))
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
                declare(cd, opts, dtypes.get(c))
            drafts[c] = cd
    if opts.record_id is not None:
        rid = drafts.get(opts.record_id)
        if rid is None or rid.role != "identifier":
            raise InputError("must name an identifier column (never published)",
                             param="record_id", column=opts.record_id, file=file,
                             expected="a column also named in {@identifiers}")
        # every release under a persistent key must give a record the same
        # sets: a domain read off each release's data changes whenever a
        # value appears or disappears, and then every set of the column is
        # drawn anew, so that two releases intersect to the true values
        inferred = [c.name for c in drafts.values() if c.role == "sensitive"
                    and (c.inferred or (c.domain is None and c.bins is None))]
        if inferred:
            # a series' earlier release fixed them: say so (they are declared
            # again, the same, and the plan checks that they are)
            held = [c for c in inferred if opts.prior is not None
                    and c in (opts.prior.domains or {})]
            again = (f"; {opts.prior.where} holds the domain{'s' if len(held) > 1 else ''} of "
                     f"{held}: declare {'them' if len(held) > 1 else 'it'} again, the same"
                     if held else "")
            raise InputError(f"needs a declared domain for every sensitive column; "
                             f"{inferred} would be read off this release's data, and a value "
                             f"that appears or disappears between releases redraws every set "
                             f"of the column (releases then intersect to the true values)"
                             + again, param="record_id", file=file,
                             expected="{@domains}, {@bins} or {@hierarchies} for each (in "
                                      "Python also a pandas Categorical or a Polars Enum)")
    for c in drafts.values():
        if c.published:
            V.check_publishable_type(c.name, dtypes.get(c.name), file=file)
    published = [c for c in drafts.values() if c.published]
    V.check_word_names([c.name for c in published],
                       [c.name for c in drafts.values() if c.published or c.role == "other"],
                       file=file)
    if not published:
        raise InputError("no column is sensitive or exact", param="sensitive", file=file,
                         expected="at least one column to publish")
    if not any(c.role == "sensitive" for c in published):
        raise InputError("no column is sensitive (every published column is exact)",
                         param="sensitive", file=file, expected="at least one sensitive column")
    V.check_model_columns(opts.model, [c.name for c in published if c.role == "sensitive"],
                          [c.name for c in published])
    for p in ("allow_clear", "allow_rare"):
        for n in getattr(opts, p):
            if p == "allow_clear" and series_of(opts) is not None and \
                    n in series_of(opts).sets and (n not in drafts or
                                                   drafts[n].role != "sensitive"):
                continue          # an earlier release's sets read with this one's (H43)
            if n not in drafts or drafts[n].role != "sensitive":
                raise InputError(f"names {n!r}, which is not a sensitive column", param=p,
                                 file=file, expected="sensitive columns")
    series = series_of(opts)
    check_allow_recode(opts.allow_recode, [c.name for c in drafts.values()
                                           if c.role in ("other", "exact")] +
                       ([c for c in sorted(series.as_is | series.sets)
                         if c not in drafts or drafts[c].role not in ("other", "exact") and
                         (c in series.as_is or drafts[c].role != "sensitive")]
                        if series is not None else []), file=file)
    if series is not None:
        from ..randomized.prior import check_series_columns
        check_series_columns(series, {c: d.role for c, d in drafts.items()}, opts.allow_recode,
                             file=file)
    check_allow_identifier(opts.allow_identifier, [c.name for c in drafts.values()
                                                   if c.role == "other"], file=file)
    for n in opts.allow_shared_id:
        if n not in drafts or drafts[n].role != "identifier":
            raise InputError(f"names {n!r}, which is not an identifier column",
                             param="allow_shared_id", file=file, expected="identifier columns")
        if n == opts.record_id:
            raise InputError(f"names {n!r}, the record id: rows that share it are one record's "
                             "already", param="allow_shared_id", file=file,
                             expected="other identifier columns (a household, a site)")
    return Draft(opts, cols, drafts, text, file)


def series_of(opts: Options):
    """The earlier release (a PriorRelease) of the persistent-key series a
    release under ``opts`` continues, or None."""
    p = opts.prior
    return p if p is not None and p.persistent and opts.record_id is not None else None


def declare(cd: ColumnDraft, opts: Options, dtype) -> None:
    """A published column's declared domain, bins, hierarchy, kind."""
    c = cd.name
    h = opts.hierarchies.get(c)
    if h is not None:
        h = hierarchy_of(c, h)
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
        # a pandas Categorical declares its domain (and order, when ordered);
        # 16- and 32-bit float categories as the decimals they spell (H42)
        from ..encode import _narrow, shortest_decimals
        kind = _narrow(dtype)
        dom = shortest_decimals(dtype.categories.to_numpy(dtype=kind)).tolist() \
            if kind is not None else [scalar(v) for v in dtype.categories]
        cd.categorical = True
        if dtype.ordered:
            cd.kind = "ordinal"
        else:
            # an unordered Categorical's order means nothing, and is often the
            # order its values first appear in (pd.unique, Polars, Arrow's
            # dictionary_encode): kept, the published domain began with the
            # first row's values
            dom = sorted_categories(dom)
            if cd.kind == "ordinal" and any(isinstance(v, str) for v in dom
                                            if v != UNKNOWN_CATEGORIES):
                # named ordinal without an order: the order would be a-z
                raise V.InputError("is ordinal, but its order would come from sorting its "
                                   f"text values alphabetically ({V.alphabetical_order(dom)}): an "
                                   "unordered Categorical declares no order", column=c,
                                   expected="the order declared: {@domains} listing its values "
                                            "in order, or bins (in Python also "
                                            "ordinal={column: [values in order]} or an ordered "
                                            "pandas Categorical)")
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
        cd.domain = tuple(scalar(v) for v in as_bools(dom, dtype))


def as_bools(dom, dtype) -> list:
    """A declared domain of a column of booleans, its values written as text
    ('False', 'True', as a command line or a CSV file writes them) read as
    the booleans they spell: the same domain declares the column in a CSV
    (text) and in Parquet (booleans) alike (H39: Parquet took only 0,1)."""
    from ..encode import BOOL_TEXT as spelled
    if not _is_bools(dtype) or \
            not all(isinstance(v, str) and v.strip().lower() in spelled for v in dom):
        return list(dom)
    return [spelled[v.strip().lower()] for v in dom]


def _is_bools(dtype) -> bool:
    """A pandas or an Arrow type of booleans."""
    if dtype is None:
        return False
    pa_type = getattr(dtype, "pyarrow_dtype", dtype)
    if type(pa_type).__module__.startswith("pyarrow"):
        import pyarrow as pa
        return pa.types.is_boolean(pa_type)
    try:
        return pd.api.types.is_bool_dtype(dtype)
    except TypeError:
        return False


def sorted_categories(values: list) -> list:
    """An unordered Categorical's categories as a published domain: sorted
    (numbers by value, then text; other mixes by type name and text), so
    that their order tells nothing of the rows."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=lambda v: (not isinstance(v, (int, float)),
                                             type(v).__name__, str(v)))


#: The categories of a categorical column whose categories are not known
#: before its data is read: a Dask categorical read from Parquet (Dask's own
#: sentinel), or a dictionary-typed Parquet column read block by block.
UNKNOWN_CATEGORIES = "__UNKNOWN_CATEGORIES__"


def unknown_categoricals(d: "Draft") -> list:
    """Published columns whose domain is a categorical's categories that are
    not known yet: the path must read them (as pandas would read the whole
    column) and draft again with :func:`with_categories`."""
    return [c for c, cd in d.drafts.items()
            if cd.categorical and cd.domain == (UNKNOWN_CATEGORIES,)]


def union_categories(parts) -> list:
    """The categories of a column read in parts, as pandas reads the whole
    column: the first part's, then each new one in order of appearance."""
    seen: dict = {}
    for cats in parts:
        for v in cats:
            seen.setdefault(v, None)
    return list(seen)


def with_categories(dtypes: Mapping, categories: Mapping) -> dict:
    """``dtypes`` with the categories found for some categorical columns."""
    out = dict(dtypes)
    for c, cats in categories.items():
        out[c] = pd.CategoricalDtype(list(cats), ordered=bool(getattr(out[c], "ordered", False)))
    return out


def scalar(v):
    """A plain Python scalar for a domain value (NumPy scalars -> int/float/str)."""
    return v.item() if isinstance(v, np.generic) else v


def attribute_of(cd: ColumnDraft, domain, inferred: bool = False) -> Attribute:
    try:
        return Attribute(cd.name, role=cd.role, domain=domain if cd.bins is None else None,
                         kind=cd.kind, bins=cd.bins, hierarchy=cd.hierarchy,
                         inferred=inferred, missing=cd.missing)
    except ValueError as e:
        raise InputError(str(e).split(": ", 1)[-1], column=cd.name) from None
