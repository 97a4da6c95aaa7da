"""The plan of a publication, built once from the draft and the statistics
(:func:`make_plan`): the schema, the parameters (p_j, eta_j) optimized or
checked, the clear-publication check, the key and the row order, and the
metadata that says how the release was made."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np

from .. import validate as V
from .._version import __version__
from ..io.keys import (MIN_SEED_BYTES, cell_salt, derive_key, key_check, key_mode, make_key,
                       name_stream_ids, release_key, seed_bits, seed_pattern)
from ..models import Closeness, DiversityCloseness
from ..schema import DECLARE, Attribute, Schema, _outside_stacklevel, warn_inferred_domains
from ..passthrough import check_recodes, recoded_targets, recorded, warn_findings
from ..shared_ids import changed_records, refuse_changed_values, refuse_shared_ids
from ..encode import encode_column, missing_refused
from ..validate import InputError, row_name
from .request import ColumnDraft, Draft, attribute_of
from .stats import Stats, cast_text, data_digest, lacks_token_leaf, text_type

__all__ = ["Plan", "make_plan", "finish_domain", "token_where_missing"]


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
    key: bytes = field(repr=False)             # never printed (H82)
    order_key: bytes | None = field(repr=False)    # None: input order kept (keep_order=True)
    rng: str
    n_threads: int | None
    text: bool
    record_id: str | None
    info: dict
    salts: dict | None = None      # persistent key: each column's cell_salt

    @property
    def shuffled(self) -> bool:
        return self.order_key is not None

    def stream_ids(self) -> dict:
        """The generator stream of each published attribute, keyed by its
        name: under a persistent key a release whose columns differ from the
        last one's must still give every record the same sets, and under a
        seed one table must give one release whatever the place of its
        columns (H103: streams numbered by position redrew every set when
        an identifier read as a frame's index came last in memory and first
        in its CSV, and the two releases intersected)."""
        return name_stream_ids([a.name for a in self.source.published])


def warn_unbounded_guess(published, params, counts) -> list:
    """Warn of the columns whose t bounds no adversary's chance of naming a
    row's value: max share + t / (smallest ground distance) >= 1 (the
    audit's model bound).  t bounds how far a set moves the values'
    distribution, by distance; under an ordered ground of many values, a
    posterior may put all of its weight on one value within t (H16: 97.5 %
    of DoctorVisits' visits named at t = 0.3, audit PASSED, summary
    silent).  Said at publishing only (the share is the original's)."""
    from ..audit.attack import _smallest_distance, model_bound, t_below
    from ..randomized.params import ground_object
    found = []
    for a in published:
        par = params.get(a.name)
        if a.role != "sensitive" or par is None or par.t is None or par.ground is None \
                or math.isinf(float(par.t)) or a.name not in counts or par.p <= 0.0:
            continue
        A = np.asarray(counts[a.name], dtype=np.float64)
        if A.sum() <= 0:
            continue
        A = A / A.sum()
        g = ground_object(par.ground, a)
        # an l (k) beside t bounds it by 1/l (1/k): the bound is the smaller
        if model_bound(par, A, g)[0] >= 1.0:
            found.append((a.name, par, t_below(_smallest_distance(g), float(A.max()))))
    if found:
        what = "; ".join(f"{n!r} (t = {par.t:g}, ground {par.ground}: {need})"
                         for n, par, need in found)
        warnings.warn(f"t bounds no adversary's chance of naming a row's value of {what}: t "
                      "bounds how far a set moves the distribution of the values, by their "
                      "distance, and within it a set may point at one value (max share + t / "
                      "smallest distance >= 100 %); for a bound on naming the value, a smaller "
                      "t, the equal ground, or l-diversity beside t (the audit's attack "
                      "measures it: docs/security.md)", stacklevel=_outside_stacklevel())
    return [n for n, _, _ in found]


def all_held(counts, attr) -> bool:
    """Every value of ``attr``'s domain but the missing-value token is held
    by some row (``counts``: rows per value)."""
    held = np.asarray(counts) > 0
    if attr.missing is not None and attr.missing in attr.domain:
        held[list(attr.domain).index(attr.missing)] = True
    return bool(held.all())


def order_facts(model: dict, rng: str, params: Mapping, published) -> dict:
    """What keys a release's row order besides its key
    (:func:`~anonset.io.keys.release_key`): the model, the generator, each
    attribute's (p, eta, d) and every published domain in its order; any of
    them changed draws other sets, so it draws another row order too."""
    return {"model": model, "rng": rng,
            "params": {n: [p.p, p.eta, p.d] for n, p in sorted(params.items())},
            "domains": {a.name: _domain_words(a, booleans_as_text=True) for a in published}}


def _domain_words(attr, booleans_as_text: bool = False) -> list:
    """A published attribute's domain in its order (bins as their edges), as
    the key of a release's order takes it: another order of one domain
    draws other sets, so it must draw another row order too.
    ``booleans_as_text``: True and False as a CSV file's 'True' and 'False'
    (a release's key: one table from CSV and from Parquet, one release,
    H98); a persistent key's cell salts keep their words."""
    if attr.bins is not None:
        return ["bins", *[repr(float(e)) for e in attr.bins]]
    return [repr(str(v)) if booleans_as_text and isinstance(v, (bool, np.bool_))
            else _value_word(v) for v in attr.domain]


def _value_word(v) -> str:
    """A domain value as the keys take it: a number by its value (1, 1.0
    and numpy's 1 are one word, as a series' check of its domain compares
    them: a series declared in ints, then in floats, kept its domain and
    redrew every set, H21), anything else by its repr."""
    import numbers
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, numbers.Real):
        f = float(v)
        if f == v:
            return repr(f)
    return repr(v)


def set_codes(stats: Stats, published) -> dict:
    """The codes of the sensitive columns' sampled rows (:attr:`Stats.set_rows`)."""
    if stats.set_rows is None:
        return {}
    sample = stats.set_rows.frame(stats.set_columns)
    out = {}
    for a in published:
        if a.role in ("sensitive", "exact") and a.name in sample.columns:
            col = sample[a.name].reset_index(drop=True)
            if stats.draft.text:
                col = cast_text(col, a, a.name)
            out[a.name] = encode_column(col, a)
    return out


def earlier_sets(stats: Stats, series) -> tuple:
    """([(Attribute, codes)], {name: AttributeParams}, [(name, share)]) of
    the columns the series' earlier releases published as sets that this
    release does not, over the rows of :func:`set_codes`: their sets link
    to this release's rows and are read with them (H43: an earlier A's sets
    beside X passed through now pinned A for 77 % of the rows).  Codes by
    the earlier domain (a bin label's edges for a column in bins; a whole
    number written as text is that number); a cell that is missing or in
    no earlier value gets -1 (:func:`measured_rows` leaves its row out).
    The last list: (column, rows read, rows) of the columns with more such
    cells than ``UNREAD_SHARE`` of the rows (H45: one such cell turned the
    column off unsaid), which cannot be read so."""
    if series is None or stats.set_rows is None:
        return [], {}, []
    sample = stats.set_rows.frame(stats.set_columns)
    out, params, unread = [], {}, []
    for name in stats.draft.series_targets:
        if name not in sample.columns or name not in series.params or \
                name not in series.domains or series.params[name].exact:
            continue
        domain = tuple(series.domains[name])
        attr = Attribute(name, role="sensitive", domain=domain)
        codes = _earlier_codes(sample[name].reset_index(drop=True), domain)
        have = int((codes >= 0).sum())
        if have < (1.0 - UNREAD_SHARE) * len(codes) or not len(codes):
            unread.append((name, have, len(codes)))
            continue
        out.append((attr, codes))
        params[name] = series.params[name]
    return out, params, unread


#: Largest share of the rows an earlier sets-column may leave unread (its
#: cell missing, or in none of its earlier values) and still be read.
UNREAD_SHARE = 0.1

_BIN = __import__("re").compile(r"^\[(.+), (.+)\)$")


def _earlier_codes(col, domain: tuple) -> np.ndarray:
    """Codes of ``col``'s cells in an earlier release's ``domain`` (-1 where
    missing or in none of its values): a value, the same value written as
    text, or, for a domain of bin labels ('[0, 10)'), the bin a number
    falls in."""
    import pandas as pd
    edges = []
    for label in domain:
        m = _BIN.match(str(label))
        if m is None:
            edges = None
            break
        try:
            edges.append((float(m.group(1)), float(m.group(2))))
        except ValueError:
            edges = None
            break
    vals = col.to_numpy(dtype=object)
    if edges:
        x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        lo = np.array([a for a, _ in edges])
        hi = np.array([b for _, b in edges])
        at = np.searchsorted(lo, x, side="right") - 1
        ok = np.isfinite(x) & (at >= 0) & (x < hi[np.clip(at, 0, len(hi) - 1)])
        return np.where(ok, at, -1).astype(np.int32)
    lookup = {}
    for k, v in enumerate(domain):
        lookup.setdefault(v, k)
        lookup.setdefault(str(v), k)
    out = np.full(len(vals), -1, dtype=np.int32)
    for i, v in enumerate(vals):
        if v is None or (isinstance(v, float) and v != v):
            continue
        v = v.item() if hasattr(v, "item") and np.ndim(v) == 0 else v
        try:
            k = lookup.get(v)
        except TypeError:                  # a list or an array: no value of it
            continue
        if k is None and isinstance(v, str):
            k = lookup.get(v.strip())
        if k is not None:
            out[i] = k
    return out


def measured_rows(sampled: dict, others: dict, earlier: list) -> tuple:
    """``sampled`` and ``others`` over the rows where every earlier
    sets-column has a code (:func:`earlier_sets`), the earlier ones added."""
    if not earlier:
        return sampled, others
    keep = np.ones(len(earlier[0][1]), dtype=bool)
    for _, codes in earlier:
        keep &= codes >= 0
    cut = {k: np.asarray(v)[keep[:len(v)]] if len(v) == len(keep) else v
           for k, v in sampled.items()}
    cut.update({a.name: c[keep] for a, c in earlier})
    return cut, {k: np.asarray(v)[keep] if len(v) == len(keep) else v
                 for k, v in others.items()}


def passthrough_codes(stats: Stats, rows: int) -> dict:
    """The pass-through columns' values over the rows of :func:`set_codes`,
    as codes (equal values, equal codes): the pass-through check's sample is
    drawn by the same rule (the rows whose index words are smallest) and is
    larger, so its first ``rows`` rows are those rows, in the same order."""
    from ..passthrough import cell_codes
    if stats.passthrough is None or stats.set_rows is None or not rows:
        return {}
    sample = stats.passthrough.sample()
    if len(sample) < rows:
        return {}
    out = {}
    # (and a series' earlier columns published as they are: the series'
    # sets link their rows to this release's; H40)
    for c in stats.draft.passthrough + stats.draft.series_read:
        if c in sample.columns:
            out[c] = cell_codes(sample[c].iloc[:rows])
    return out


def make_plan(d: Draft, stats: Stats) -> Plan:
    """The schema, parameters, key and order of a publication.  A refusal
    names the input file where there is one, whichever check raised it
    (the parameters' own checks do not know the file: H19)."""
    try:
        return _make_plan(d, stats)
    except InputError as e:
        raise e.in_file(d.file) from None


#: what no release of a series can check (the key file records no values;
#: H65: Adult a year on, 82 % of the ages read off two releases)
CHANGES_UNCHECKED = ("a record's value that changes between releases (an age, years of "
                     "experience) draws a fresh set, which the sets of its values that did not "
                     "change link to the old one, and whoever knows how it moved intersects "
                     "the two toward the true value; no release can check this (the key file "
                     "records no values): publish such a column in a form that does not change "
                     "(a year of birth, not an age)")


def _make_plan(d: Draft, stats: Stats) -> Plan:
    from ..randomized.params import optimize
    from ..randomized.publish import check_params
    from ..randomized.prior import (check_new_in_series, check_prior, check_series_key,
                                    release_record, series_record)
    opts = d.options
    if stats.n == 0:
        raise InputError("is empty (no rows)", param="data", file=d.file,
                         expected="at least one row to publish")
    if stats.ids_missing:
        from ..io.keys import refuse_missing_record_ids
        refuse_missing_record_ids(stats.ids_missing, stats.first_id_missing,
                                  column=opts.record_id, file=d.file)
    attrs, counts, inferred = [], dict(stats.counts), {}
    persistent = opts.record_id is not None
    for c in d.columns:
        cd = d.drafts[c]
        if not cd.published:
            attrs.append(Attribute(c, role=cd.role))
            continue
        cd = token_where_missing(cd, stats.na.get(c))
        if c in stats.seen:
            dom, cnt = finish_domain(cd, stats.seen[c], stats.na[c], d, stats.first_na.get(c))
            attr = attribute_of(cd, tuple(dom), inferred=True)
            inferred[c] = cnt
            if c in stats.seen_mix:
                # where each value sits keys the draws too, as a declared
                # column's does (a Categorical's did and text's did not: one
                # seed gave two releases of one table, H26; and values moved
                # between rows with the same counts drew the same words)
                at = {v: i for i, v in enumerate(attr.domain)}
                token = at.get(attr.missing) if stats.na.get(c) else None
                stats.placed[c] = stats.placed_of(
                    c, at, token, text_typer(stats.seen[c]) if d.text else None)
            if c in d.need_counts:
                counts[c] = cnt
        else:           # declared, or a schema's domain read off some data
            if stats.na.get(c) and cd.missing is None:
                raise missing_refused(c, stats.na[c], stats.first_na.get(c), d.file)
            if cd.missing is not None and stats.na.get(c) and stats.real_token.get(c):
                raise token_clash(cd, stats.na[c], stats.real_token[c],
                                  stats.first_token.get(c), d.file)
            if lacks_token_leaf(cd):
                na = stats.na.get(c, 0)
                at = "" if stats.first_na.get(c) is None else \
                    f" (first at {row_name(stats.first_na[c])})"
                why = (f"has {na:,} missing value(s){at}, published as {cd.missing!r}" if na else
                       f"takes the missing-value token {cd.missing!r} into its domain (its "
                       "declared domain lists it)")
                raise InputError(f"{why}, but its hierarchy has no leaf {cd.missing!r}",
                                 column=c, file=d.file,
                                 expected=f"a leaf {cd.missing!r} in the hierarchy (under its "
                                          "root, say), or no missing values")
            attr = attribute_of(cd, cd.domain, inferred=cd.inferred)
            if c in counts and len(counts[c]) > attr.d:
                # the token left the domain (token_where_missing): its slot,
                # the last (Attribute appends it), held by nobody
                counts[c] = counts[c][:attr.d]
            if cd.inferred and c in counts:     # a schema's domain read off some data
                inferred[c] = counts[c]
            elif cd.categorical and c in counts and all_held(counts[c], attr):
                # a Categorical whose every category is someone's is what
                # astype('category') makes of the data: a domain read off it,
                # which tells alike that each value is someone's
                attr = attribute_of(cd, cd.domain, inferred=True)
                inferred[c] = counts[c]
        V.check_domain_size(attr, file=d.file)
        V.check_domain_values(attr, file=d.file)
        attrs.append(attr)
    source = Schema(tuple(attrs))
    published = source.published
    for a in published:
        if a.role == "sensitive" and isinstance(opts.model, (Closeness, DiversityCloseness)):
            V.check_closeness_size(a, file=d.file)
            cd = d.drafts[a.name]
            V.check_ordered_ground(a, opts.model.ground_for(a.name), file=d.file,
                                   sorted_order=cd.categorical and cd.kind != "ordinal",
                                   declared_order=cd.categorical and cd.kind == "ordinal")
    # rows that share an identifier's value: one person's rows (waves,
    # visits) under a persistent key get one set per value; drawn
    # independently, they intersect toward the person's true values
    shared = stats.shared_rows()
    # pass-through columns that single rows out or recode a sensitive one
    # a series' risks the user named (columns it could not measure)
    series_named = []
    if d.series is not None:
        from ..randomized.prior import check_series_columns, check_series_values
        series_named = check_series_columns(d.series, {c: cd.role for c, cd in d.drafts.items()},
                                            opts.allow_recode, file=d.file)
        if stats.passthrough is not None:
            series_named += check_series_values(stats.passthrough.too_few(text=d.text),
                                                opts.allow_recode, file=d.file)
    found = stats.passthrough.findings() if stats.passthrough is not None else []
    check_recodes(found, opts.allow_recode, allow_identifier=opts.allow_identifier,
                  file=d.file)                                 # refused unless named
    codes_like = _CodesFromCounts(counts)
    given = opts.params
    fresh = []
    if opts.prior is not None:
        # an earlier release: its columns that this one leaves out do not
        # matter (streams are keyed by name; the metadata carries them on for
        # a later release), a changed domain or generator does
        # a release of a persistent-key series is continued under its key
        check_series_key(opts.prior, opts.record_id, None, file=d.file)
        if persistent:
            check_prior(opts.prior, published, opts.rng, file=d.file,
                        token=opts.missing_token if opts.missing == "category" else None)
        names = {a.name for a in published}
        given = {n: p for n, p in given.items() if n in names}
        # a sensitive column the series never published has no sets to keep:
        # its parameters are chosen here, as in a first release
        fresh = [a for a in published if a.role == "sensitive" and a.name not in given]
        check_new_in_series(opts.new_in_series, fresh, published, opts.prior, file=d.file)
        if fresh:
            given.update(optimize(opts.model, fresh, codes_like, clip_l=opts.clip_l))
    if given is None:
        params = optimize(opts.model, published, codes_like, clip_l=opts.clip_l)
    else:
        params = check_params(given, opts.model, published, codes_like, clip_l=opts.clip_l,
                              file=d.file)
    first = opts.prior is None or not opts.prior.persistent     # the first of a series
    warn_unbounded_guess(published, params, counts)
    clear = V.check_clear(published, params, opts.model, opts.allow_clear, opts.clip_l,
                          counts, file=d.file)
    # with the sets' sizes known: columns published as they are that narrow
    # a sensitive column so far that its sets give it away (before the sets
    # read together: a risk the user names by allow_recode is not refused
    # again as a column read with them)
    # (in a series, the earlier releases' sets-columns too: H43)
    earlier, earlier_params, unread = earlier_sets(stats, d.series)
    if unread:
        from ..randomized.prior import check_series_values
        series_named += check_series_values(unread, set(opts.allow_recode) |
                                            set(opts.allow_clear), file=d.file,
                                            what="a value of its earlier domain")
    if stats.passthrough is not None:
        near = stats.passthrough.set_findings(
            {a.name: a.d for a in published} | {a.name: a.d for a, _ in earlier},
            {**params, **earlier_params}, found)
        check_recodes(near, opts.allow_recode, file=d.file)      # refused unless named
        found = found + near
    # two sensitive columns' sets read together (education and its number),
    # in a series beside the earlier releases' sets too (H43)
    sampled = set_codes(stats, published)
    rows = min((len(v) for v in sampled.values()), default=0)
    sampled, others = measured_rows(sampled, passthrough_codes(stats, rows), earlier)
    read_clear = V.check_set_pairs(
        tuple(published) + tuple(a for a, _ in earlier), {**params, **earlier_params}, sampled,
        opts.allow_clear, others=others,
        recoded=recoded_targets(found), allow_recode=opts.allow_recode, file=d.file,
        now={a.name for a in published} | set(d.passthrough) | set(d.exact))
    clear += [n for n in read_clear if n not in clear and n in {a.name for a in published}]
    # an earlier release's column published nearly in the clear beside this
    # release's, as the user named it: recorded (H45)
    from ..randomized.prior import _named_risk
    series_named += [_named_risk(n, [], "was published as sets by an earlier release of the "
                                        "series, and read beside this release's columns its "
                                        "sets give it nearly in the clear")
                     for n in read_clear if n not in {a.name for a in published}]
    # a domain read off the data says each value is someone's: values so rare
    # that counting the sets holding them points at their holders
    rare = V.check_rare(published, params, inferred, stats.n, opts.allow_rare, file=d.file)
    # ... and a declared one that lists only what the data holds may be a
    # copy of it (the remedy of that refusal, taken literally): warned
    V.warn_rare_declared(published, params,
                         {a.name: counts[a.name] for a in published
                          if a.role == "sensitive" and not a.inferred and a.name in counts
                          and a.name not in opts.allow_rare and all_held(counts[a.name], a)},
                         stats.n, declare=DECLARE)
    # rows that share an identifier's value (one person's waves?) draw their
    # sets independently: refused unless tied by the record id or named
    # (under a persistent key, the record id's own rows are one record's)
    shared_allowed = refuse_shared_ids({c: k for c, k in shared.items() if c != opts.record_id},
                                       opts.allow_shared_id, record_id=opts.record_id,
                                       file=d.file)
    # ... and one record's rows whose sensitive value changed draw that
    # value's sets independently, linked by the sets of those that did not
    # (H65): refused unless allow_clear names them; recorded apart from
    # `clear` (the sets themselves are not in the clear: H67)
    changed = changed_records(stats.ids, stats.id_values, d.sensitive) if persistent else {}
    # (a column whose every set is its whole domain tells nothing however its
    # values move: H73; drawn with p = 0, a set still follows its record's
    # value under a persistent key, so a moved value shows: H74)
    changed = {c: k for c, k in changed.items() if params[c].eta < params[c].d}
    refuse_changed_values(changed, opts.allow_clear, record_id=opts.record_id, file=d.file)
    seed, research = opts.key_material()
    key = make_key(seed, research_seed=research)
    data = None
    if not persistent:
        # one key over one table reproduces its release; over another table
        # (a later wave, values changed) its sets and order are another
        # key's: drawn from the same words, a changed value's two sets
        # differed by the two values (wagepan under one key file, l = 3:
        # 126 of 261 men's old and new occupations read off)
        data = data_digest(stats.n, counts, stats.na, stats.placed, published,
                           stats.placed_other)
        # ... and so are other parameters': drawn from the same words, a cell
        # under l = 5 and under l = 6 (C(9, 4) = C(9, 5) subsets of 10
        # values) took the same subset index, and the two sets read together
        # pinned 45 % of the values (H20)
        key = derive_key(release_key(key, {"data": data, **order_facts(
            opts.model.to_dict(), opts.rng, params, published)}), "sets")
    if persistent and (seed_bits(seed) < 8 * MIN_SEED_BYTES or opts.research_seed
                       or seed_pattern(seed) is not None):
        # a persistent key outlives every release, and each release's
        # key_check confirms a guess of it offline: a research seed (the
        # README's old '0123456789abcdef' * 2 passed as a persistent key,
        # recorded 'persistent' and PASSED, H82) is no such key
        raise InputError("needs a key of at least 128 bits drawn at random" +
                         (", not a research seed" if opts.research_seed else ""),
                         param="record_id",
                         expected="{@key_file} holding a long-lived secret (anonset keygen "
                                  "FILE)")
    check = key_check(key) if persistent else None
    if opts.prior is not None:
        check_series_key(opts.prior, opts.record_id, check, file=d.file,
                         key_param="key_file" if opts.key_file is not None else "seed")
    # the output order: keyed by the publication's key, so a seed reproduces
    # it; in persistent mode the key outlives one release, and ordering two
    # releases alike would link their rows: each release gets a fresh order
    order_key = None if opts.keep_order else (
        make_key() if persistent else
        derive_key(release_key(key, {**order_facts(opts.model.to_dict(), opts.rng, params,
                                                   published), "data": data}), "row-order"))
    keep = Schema(tuple(a for a in source if a.role not in ("identifier", "drop")))
    info = {
        "rng": opts.rng,
        "seeded": seed is not None,
        "key": key_mode(seed, research, persistent),
        "row_order": "input" if opts.keep_order else "shuffled",
        "streams": "name",
        "params": "optimized" if opts.params is None else "partly given" if fresh else "given",
        **({"new_in_series": [a.name for a in fresh]} if fresh else {}),
        # declared by the publisher: no earlier release was read beside it
        **({"first_in_series": True} if opts.first_in_series else {}),
        **({"series": series_record(opts.prior, published)}
           if persistent and opts.prior is not None and opts.prior.persistent else {}),
        # every release of the series up to this one, what each published as
        # it is and as sets (a later release reads those columns beside its own)
        **({"series_releases": [*(opts.prior.releases if d.series is not None else ()),
                                release_record(d.passthrough + d.exact, d.sensitive,
                                               d.series_read + d.series_targets
                                               if stats.passthrough is not None else ())]}
           if persistent else {}),
        "clear": clear,
        **({"rare": rare} if rare else {}),
        "roles": {a.name: a.role for a in source},
        "missing": category_record(opts, published, stats.na),
        "shared_ids": shared,
        **({"changed_records": changed} if changed else {}),
        **({"shared_ids_allowed": shared_allowed} if shared_allowed else {}),
        "pass_through_risks": recorded(found + series_named),
        "record_id": opts.record_id,
        **({"key_check": check} if persistent else {}),
        "anonset": __version__,
    }
    # after every refusal (H81: a refused first release advised on the next
    # one); every path (memory, streamed, Dask) warns alike and the command
    # line prints the warnings as lines of their own
    if persistent and first and any(a.role == "sensitive" for a in published):
        # every set is a function of its column's domain and (p, eta) too; only
        # a later release that is given this one can check that they stay
        closeness = opts.params is None and isinstance(opts.model, (Closeness, DiversityCloseness))
        warnings.warn("persistent key: publish the next release with this one as its "
                      "parameters (params=this; --params-from THIS_RELEASE), and each one "
                      "after it with the latest before it, which refuses a changed domain" + (
                          " and keeps the (p, eta) that Algorithm 1 chose here for t-closeness "
                          "(the largest p this data admits: a later release's data may admit a "
                          "little less, so leave room by publishing this first release under a "
                          "smaller t than later ones)"
                          if closeness else "") +
                      "; otherwise a later release may redraw every set, and the two releases "
                      "intersect toward the true values; " + CHANGES_UNCHECKED, stacklevel=2)
    # a column new in the series had no earlier value to change (H81)
    told = [a.name for a in published
            if a.role == "sensitive" and params[a.name].eta < params[a.name].d
            and a.name not in (opts.new_in_series or ())]
    if persistent and not first and told:
        # short: the first release gave the whole advice (H73)
        warnings.warn(f"persistent key: a value of {', '.join(told)} that changed since "
                      f"{opts.prior.where} draws a fresh set, which the record's other sets "
                      "link to its old one, and whoever knows how it moved reads it off (no "
                      "release can check this: docs/security.md, section 0)", stacklevel=2)
    warn_inferred_domains(published, {c: sum(1 for k in seen.values() if k == 1)
                                      for c, seen in stats.seen.items()})
    warn_findings(found)
    # persistent key: a record's cell reads the same blocks in every release
    # of the same column under the same (p, eta, d, domain), other blocks
    # under others (cell_salt)
    salts = {a.name: cell_salt([params[a.name].p, params[a.name].eta, params[a.name].d,
                                _domain_words(a)]) for a in published} if persistent else None
    plan = Plan(source, keep, params, opts.model.to_dict(), stats.n, key, order_key, opts.rng,
                opts.n_threads, d.text, opts.record_id, info, salts)
    plan.stream_ids()                  # persistent mode: two names on one stream are refused
    return plan


def category_record(opts, published, na: dict) -> dict:
    """The metadata's ``missing``: with missing='category', the token and
    the published columns it stands for missing cells of (the summary, the
    report and the audit name them; not how many: a sensitive column's
    count of missing cells is an exact count of one of its values, and two
    releases apart by one person tell whether that person's is missing);
    the random sets keep each column's values as they are, the token
    beside them (``as_text``: false)."""
    if opts.missing != "category":
        return {"policy": "error"}
    cols = [a.name for a in published if na.get(a.name)]
    return {"policy": "category", "token": opts.missing_token, "columns": cols,
            "as_text": False}


def token_where_missing(cd: ColumnDraft, na) -> ColumnDraft:
    """With missing='category', the token joins the domain of a column that
    has missing cells only: in a column without any it would be a value
    nobody holds, a decoy that an adversary who knows the column is complete
    strikes from every set holding it (at l = 3 over 6 values, a third of
    the sets would be 2-diverse; at l = 2 over two values and the token,
    half the rows' sets would hold their true value and the token: Ecdat's
    Males under a persistent key, where the token was kept for the series'
    sake, 51 % of the rows).  Kept where the caller's domain lists it and
    where the cells were not counted.  Under a persistent key too: a later
    release in whose column missing cells appear has another domain, which
    its ``params`` refuse (declare the token in the first release's domain
    instead, at an l that :func:`anonset.validate.check_clear` lets it
    keep)."""
    if cd.missing is None or na is None or na > 0:
        return cd
    if cd.domain is not None and cd.missing in cd.domain:
        return cd
    return replace(cd, missing=None)


def token_clash(cd: ColumnDraft, na: int, real: int, first: int | None, file) -> InputError:
    """Missing cells and real cells holding the missing-value token: published
    as one value, they would merge (whatever the domain lists)."""
    at = "" if first is None else f" (first at {row_name(first)})"
    return InputError(f"has {na:,} missing value(s) and also the real value {cd.missing!r} "
                      f"{real:,} time(s){at}", column=cd.name, file=file,
                      expected="a missing-value token that is not a real value: "
                               "{@missing_token=OTHER}")


def text_typer(seen: dict):
    """How a CSV column's text values become its domain's values (int,
    float or text, as :func:`~anonset.engine.stats.text_type` reads all of
    them)."""
    kind = text_type(seen)
    return int if kind == "int" else float if kind == "float" else (lambda v: v)


def finish_domain(cd: ColumnDraft, seen: dict, na: int, d: Draft, first_na: int | None = None):
    """An inferred domain (and value counts) from the values seen
    (``first_na``: the global row of the first missing cell)."""
    name = cd.name
    if d.text:
        from ..io.tables import check_point_numbers
        check_point_numbers(seen, name, file=d.file)     # '354,94': no label (H39)
        typer = text_typer(seen)
        typed: dict = {}
        for v, k in seen.items():
            tv = typer(v)
            typed[tv] = typed.get(tv, 0) + k
        seen = typed
    if not seen and not na:
        raise InputError("has no values to infer a domain from", column=name, file=d.file,
                         expected="a declared domain, or at least one value")
    if na and cd.missing is None:
        raise missing_refused(name, na, first_na, d.file)
    types = {type(v) for v in seen}
    if len(types) > 1 and not types <= {int, float}:
        raise InputError(f"mixes value types {sorted(t.__name__ for t in types)}", column=name,
                         file=d.file, expected="one value type: convert it or declare its domain")
    if na and cd.missing in seen:
        raise token_clash(cd, na, seen[cd.missing], None, d.file)
    if cd.kind == "ordinal" and str in types:
        raise InputError("is ordinal, but its order would come from sorting its text values "
                         f"alphabetically ({V.alphabetical_order(seen)})",
                         column=name, file=d.file,
                         expected="the order declared: {@domains} listing its values in order, "
                                  "or bins (in Python also ordinal={column: [values in order]} "
                                  "or an ordered pandas Categorical)")
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
