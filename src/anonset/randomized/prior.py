"""An earlier release that a later one under the same persistent key must
match (``params=latest``; ``--params-from LATEST``: the series' latest).

Under a persistent key each record's set is a function of (key, record id,
attribute, true value) *and* of the attribute's domain (its values and
their order give the codes), (p, eta) and the generator.  A later release
that changes any of these redraws every set of the column, and the two
releases intersect toward the true values; the parameters alone (what
``first.params`` carries) do not show a domain that grew, shrank or was
reordered.  :class:`PriorRelease` keeps what must stay the same, and
:func:`check_prior` compares a new release's plan with it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..validate import InputError
from .params import AttributeParams

__all__ = ["PriorRelease", "prior_of", "check_prior", "check_series_key", "check_new_in_series",
           "series_record", "release_record", "check_series_columns", "check_series_values"]


@dataclass(frozen=True)
class PriorRelease:
    """An earlier release's parameters, sensitive domains and generator.

    ``where`` names it in messages (its file, or 'the earlier release').
    """

    params: Mapping[str, AttributeParams]
    domains: Mapping[str, tuple] = field(default_factory=dict)
    rng: str | None = None
    where: str = "the earlier release"
    #: made under a persistent key (its sets are the ones to keep)
    persistent: bool = True
    #: the persistent key's check value (``info['key_check']``,
    #: :func:`~anonset.io.keys.key_check`); None in files made before it
    key_check: str | None = None
    #: the record id column it was published under
    record_id: str | None = None
    #: every release of the series up to this one (:func:`release_record`):
    #: the columns each published as they are and as sets, and the earlier
    #: ones its pass-through check read beside them (a record)
    releases: tuple = ()
    #: the bin edges of its binned sensitive columns (a refusal's advice)
    bins: Mapping[str, tuple] = field(default_factory=dict)

    @classmethod
    def of_settable(cls, pub) -> "PriorRelease":
        """From a :class:`~anonset.SetTable` (in memory or read from a file)
        or a Dask release."""
        sens = [a for a in pub.schema.sensitive]
        params, domains = _carried(pub.info)
        params.update({a.name: pub.params[a.name] for a in sens})
        domains.update({a.name: _plain(a.domain) for a in sens})
        return cls(params=params, domains=domains,
                   rng=pub.info.get("rng"), persistent=pub.info.get("key") == "persistent",
                   key_check=pub.info.get("key_check"), record_id=pub.info.get("record_id"),
                   releases=_releases(pub.info), bins=_bins(sens))

    @classmethod
    def of_metadata(cls, meta: Mapping, where) -> "PriorRelease":
        """From a published file's metadata (``read_metadata``)."""
        from ..schema import Schema
        schema = Schema.from_dict(meta["schema"])
        have = meta.get("params") or {}
        sens = [a for a in schema.sensitive if a.name in have and not have[a.name].get("exact")]
        params, domains = _carried(meta.get("info") or {})
        params.update({a.name: AttributeParams.from_dict(have[a.name]) for a in sens})
        domains.update({a.name: _plain(a.domain) for a in sens})
        info = meta.get("info") or {}
        return cls(params=params, domains=domains, rng=info.get("rng"), where=repr(str(where)),
                   persistent=info.get("key") == "persistent", key_check=info.get("key_check"),
                   record_id=info.get("record_id"), releases=_releases(info), bins=_bins(sens))

    @property
    def as_is(self) -> set:
        """Columns some release of the series published as they are."""
        return {c for r in self.releases for c in r["as_is"]}

    @property
    def sets(self) -> set:
        """Columns some release of the series published as random sets."""
        return {c for r in self.releases for c in r["sensitive"]}



def release_record(as_is, sensitive, read=()) -> dict:
    """One release's entry of ``info['series_releases']``: the columns it
    published as they are (pass-through columns, exact QIDs) and as sets,
    and the columns of earlier releases its pass-through check read."""
    return {"as_is": list(as_is), "sensitive": list(sensitive), "read": list(read)}


def _releases(info: Mapping) -> tuple:
    """The series' releases up to the one ``info`` describes: its
    ``series_releases``, or, in a file written before it, the one release
    its roles describe."""
    if info.get("series_releases") is not None:
        return tuple(release_record(r.get("as_is", ()), r.get("sensitive", ()), r.get("read", ()))
                     for r in info["series_releases"])
    roles = info.get("roles") or {}
    return (release_record([c for c, r in roles.items() if r in ("other", "exact")],
                           [c for c, r in roles.items() if r == "sensitive"]),)


def _edge(e) -> str:
    """A bin edge as it is written: 5, not 5.0."""
    return str(int(e)) if float(e).is_integer() else repr(float(e))


def _bins(attrs) -> dict:
    """{column: bin edges} of the binned ones of ``attrs``."""
    return {a.name: tuple(a.bins) for a in attrs if getattr(a, "bins", None) is not None}


def _carried(info: Mapping) -> tuple:
    """The parameters and domains of the series' sensitive columns that a
    release did not publish (``info['series']``, written under a persistent
    key): a later release that publishes such a column again keeps its sets."""
    params, domains = {}, {}
    for name, rec in (info.get("series") or {}).items():
        params[name] = AttributeParams.from_dict(rec["params"])
        domains[name] = tuple(rec["domain"])
    return params, domains


def series_record(prior: "PriorRelease", published) -> dict:
    """What a release of a persistent-key series carries on of the series'
    sensitive columns it does not publish itself: each one's parameters and
    domain, so that a later release given only this one (``--params-from``)
    still draws that column's sets as the earlier releases did, instead of
    choosing its parameters anew (which would redraw every set)."""
    here = {a.name for a in published}
    return {n: {"params": p.to_dict(), "domain": list(prior.domains[n])}
            for n, p in prior.params.items() if n not in here and n in prior.domains}


def _plain(domain) -> tuple:
    """Domain values as plain Python scalars (1 and 1.0 compare equal)."""
    return tuple(v.item() if hasattr(v, "item") else v for v in domain)


def prior_of(params: Any):
    """(parameters mapping or None, PriorRelease or None) of ``params=``: a
    release (a SetTable, or a Dask release), a PriorRelease, or a mapping."""
    if all(hasattr(params, a) for a in ("schema", "params", "info")):
        params = PriorRelease.of_settable(params)
    if isinstance(params, PriorRelease):
        return dict(params.params), params
    return params, None


def _difference(was: tuple, now: tuple) -> str:
    """The first way the two domains differ, in words."""
    gone = [v for v in was if v not in set(now)]
    new = [v for v in now if v not in set(was)]
    if new or gone:
        parts = []
        if new:
            parts.append(f"{len(new)} new value{'s' if len(new) > 1 else ''} "
                         f"({', '.join(map(repr, new[:3]))}{', ...' if len(new) > 3 else ''})")
        if gone:
            parts.append(f"{len(gone)} value{'s' if len(gone) > 1 else ''} gone "
                         f"({', '.join(map(repr, gone[:3]))}{', ...' if len(gone) > 3 else ''})")
        return " and ".join(parts)
    i = next(i for i, (a, b) in enumerate(zip(was, now)) if a != b)
    return f"the same values in another order (position {i}: {was[i]!r} before, {now[i]!r} now)"


def _bools(values) -> list | None:
    """A domain of booleans, each as the text a CSV file writes ('False',
    'True'), or None where a value is no boolean."""
    from ..encode import BOOL_TEXT
    out = []
    for v in values:
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            out.append(str(bool(v)))
        elif isinstance(v, str) and v.strip().lower() in BOOL_TEXT:
            out.append(str(BOOL_TEXT[v.strip().lower()]))
        else:
            return None
    return out


def check_prior(prior: PriorRelease, published, rng: str, *, file=None,
                token: str | None = None) -> None:
    """Refuse a persistent-key release that would redraw an earlier one's sets.

    ``published`` are this release's attributes; each sensitive one that the
    earlier release also published must keep its domain (values and order),
    and the generator must be the same.  An earlier release made with a
    fresh key drew sets that no later key reproduces: nothing to keep.
    """
    if not prior.persistent:
        return
    if prior.rng is not None and prior.rng != rng:
        raise InputError(f"is {rng!r} but {prior.where} was drawn with {prior.rng!r}: under a "
                         "persistent key every set would be redrawn, and the two releases "
                         "intersect toward the true values", param="rng", file=file,
                         expected="{@rng=%s}, as in %s" % (prior.rng, prior.where))
    for a in published:
        if a.role != "sensitive" or a.name not in prior.domains:
            continue
        was, now = prior.domains[a.name], _plain(a.domain)
        if was == now:
            continue
        if _bools(was) is not None and _bools(was) == _bools(now):
            # (False, True) as a Parquet wave holds them, ('False', 'True')
            # as a CSV one does: the sets are keyed by the values as held,
            # and would be redrawn; said as it is (H124: the advice was the
            # --domain already given)
            src = ["a CSV file (text)" if isinstance(x[0], str) else "a Parquet file (booleans)"
                   for x in (now, was)]
            raise InputError(f"holds its booleans as read from {src[0]}, and {prior.where} "
                             f"from {src[1]}; under a persistent key every set of the column "
                             "would be redrawn", column=a.name, file=file,
                             expected=f"this wave read from {src[1].split(' (')[0]}, as the "
                                      "series began")
        # the earlier release's own declaration: its bins, or its values (H74, H75)
        edges = prior.bins.get(a.name)
        if token is not None and set(now) - set(was) == {token}:
            # the missing-value token joined the domain (this wave's first
            # missing cells): only a domain that listed it from the first
            # release on keeps the sets (H81: the advice was the domain
            # already given)
            raise InputError(f"has another domain than in {prior.where}: {_difference(was, now)}"
                             f", the missing-value token, which joined it with this release's "
                             "missing cells; under a persistent key every set of the column "
                             "would be redrawn", column=a.name, file=file,
                             expected="rows without missing cells in this column, or a new "
                                      "series whose declared domain lists the token "
                                      f"{token!r} from its first release on")
        raise InputError(f"has another domain than in {prior.where}: {_difference(was, now)}; "
                         "under a persistent key every set of the column would be redrawn, and "
                         "the two releases intersect toward the true values", column=a.name,
                         file=file,
                         expected=(f"the bins of {prior.where}, the same edges in "
                                   f"{{@bins}} ({', '.join(_edge(e) for e in edges)}), a value "
                                   "beyond them top- or bottom-coded into the end bins"
                                   if edges else
                                   # a hierarchy declares the order of its leaves (H81)
                                   f"the domain of {prior.where} ({len(was)} values, in its "
                                   "order): a hierarchy whose leaves keep that order, or "
                                   "{@domains} listing them so"
                                   if getattr(a, "hierarchy", None) is not None else
                                   f"the domain of {prior.where} ({len(was)} values, in its "
                                   "order), declared with {@domains}"))


def check_series_key(prior: PriorRelease, record_id: str | None, key_check: str | None, *,
                     file=None, key_param: str = "key_file") -> None:
    """Refuse a release that continues a persistent-key series (it was given
    one of its releases) with sets drawn under another key: without a
    record id (a fresh key, or a key not tied to records), or under a key
    other than the series' (a new or mistaken key file).  Either draws every
    set anew, and intersected with the series' sets, the releases narrow
    toward the true values (two 2-sets of 5 values share the true value and
    on average 0.25 others).  A record id column under another name than
    the series' warns: the sets are kept only where it holds the same ids."""
    if not prior.persistent:
        return
    persistent = record_id is not None
    rid = f" (record id {prior.record_id!r})" if prior.record_id else ""
    if not persistent:
        raise InputError(f"is not given, but {prior.where} is a release of a persistent-key "
                         f"series{rid}: this release would draw every set anew, and intersected "
                         "with the series' sets they narrow toward the true values",
                         param="record_id", file=file,
                         expected="{@key_file} of the series and {@record_id=%s}, as in %s; or, "
                                  "for records that no release of the series holds, no {@params} "
                                  "release (a new series)"
                                  % (prior.record_id or "COL", prior.where))
    if prior.key_check is not None and key_check is not None and prior.key_check != key_check:
        raise InputError(f"is not the key that drew {prior.where}{rid} (its key check "
                         f"{prior.key_check}, this key's {key_check}): every set would be drawn "
                         "anew, and intersected with the series' sets they narrow toward the true "
                         "values", param=key_param, file=file,
                         expected=f"the key of the series (the "
                                  f"{'seed' if key_param == 'seed' else 'key file'} that drew "
                                  f"{prior.where})")
    if key_check is not None and prior.record_id is not None and record_id != prior.record_id:
        import warnings
        warnings.warn(f"record id {record_id!r}: {prior.where} was published with record id "
                      f"{prior.record_id!r}; a record keeps its sets only where both columns hold "
                      "the same id for it (another numbering draws every set anew, and the "
                      "releases intersect toward the true values)", stacklevel=3)


def check_new_in_series(named, fresh, published, prior: PriorRelease, *, file=None) -> None:
    """A sensitive column the earlier release has no parameters for is
    published only where the caller named it new to the series
    (``new_in_series``): it may be a column renamed since, whose new stream
    would draw new sets for the values published before (the releases then
    intersect toward the true values), which only the caller can rule out.
    A column named new that the series did publish, or that is not a
    sensitive column of this release, is refused too."""
    names = [a.name for a in fresh]
    sensitive = {a.name for a in published if a.role == "sensitive"}
    unnamed = [n for n in names if n not in named]
    if unnamed:
        listed = ", ".join(repr(n) for n in unnamed)
        raise InputError(f"{prior.where} has no parameters for the sensitive column(s) "
                         f"{unnamed}", param="params", file=file,
                         expected="an earlier release of the same sensitive columns; for a "
                                  "column no release of the series published under any name "
                                  "(not one renamed: its new sets would intersect the old "
                                  "ones), {@new_in_series=[%s]}" % listed)
    for n in named:
        if n not in sensitive:
            raise InputError("is not a sensitive column of this release", param="new_in_series",
                             column=n, expected="sensitive columns new to the series")
        if n not in names:
            raise InputError(f"was published by {prior.where}: its parameters and sets are kept",
                             param="new_in_series", column=n,
                             expected="only columns the series never published")


def _named_risk(column: str, with_, why: str) -> dict:
    """A series risk the user named in ``allow_recode``, as the metadata
    records it (``pass_through_risks``; the summary and the audit name it)."""
    return {"check": "series", "column": column, "with": list(with_), "series": [column],
            "value": None, "allowed": True, "why": why}


def check_series_columns(prior: PriorRelease, roles: Mapping[str, str], allow_recode=(), *,
                         file=None) -> list:
    """Refuse what a release of a persistent-key series would publish only
    together with the series' earlier releases, whose rows its rows are
    linked to (a record keeps its sets):

    - a column an earlier release published as sets, published as it is
      here: every row's value those sets hide;
    - a column an earlier release published (as it is, or as sets) that
      this input lacks, beside a column this release publishes: whether
      the two give a value away together (an admission date then, a
      discharge date now: the stay; A's sets then, (A + B) mod 10's now)
      cannot be measured on this input (an earlier release measured its
      own input: a panel's values change from wave to wave, H40).  Every
      such column is named at once (H41: one per run).

    Either is published where the user names the column in ``allow_recode``
    (``roles``: this input's columns and their roles); returns those named
    risks (:func:`_named_risk`), which the metadata records."""
    allow = set(allow_recode)
    named = []
    as_is = [c for c, r in roles.items() if r in ("other", "exact")]
    for c in as_is:
        if c not in prior.sets:
            continue
        if c in allow:
            named.append(_named_risk(c, [], "was published as random sets by an earlier "
                                            "release of the series, and as it is here"))
            continue
        raise InputError(f"was published as random sets by a release of the series "
                         f"({prior.where} or one before it): published as it is here, it "
                         "gives away every row's value those sets hide, and the series' "
                         "sets link each record's rows across its releases", column=c,
                         file=file,
                         expected="a sensitive column again (the series' parameters keep "
                                  "its sets), or the column left out, or the risk named: "
                                  "{@allow_recode=[%s]}" % repr(c))
    now = as_is + [c for c, r in roles.items() if r == "sensitive"]
    lacking = {}
    for m in [c for c in dict.fromkeys([*sorted(prior.as_is), *sorted(prior.sets)])
              if c not in roles]:
        # (its sets, too, are read beside this release's sets: H43, H45)
        beside = list(now)
        if beside:
            lacking[m] = beside
    for m, beside in lacking.items():
        if m in allow:
            named.append(_named_risk(m, beside, "was published by an earlier release of the "
                                                "series and is not in this input: not measured "
                                                "beside this release's columns"))
    refused = [m for m in lacking if m not in allow]
    if refused:
        m, c = refused[0], lacking[refused[0]][0]
        how = "as it is" if m in prior.as_is else "as random sets"
        more = f" (and {', '.join(map(repr, refused[1:]))}, alike)" if len(refused) > 1 else ""
        raise InputError(
            f"was published {how} by a release of the series ({prior.where} or one "
            f"before it) and is not a column of this input{more}: whether it and {c!r}, "
            f"published here {'as it is' if c in as_is else 'as random sets'}, give a "
            "value away together cannot be measured (the series' sets link each "
            "record's rows across its releases)", column=m, file=file,
            expected="the column added to the input with the values that release published, "
                     "and dropped: {@drop=%r} (read by the check of columns published as "
                     "they are, never published), or the risk named: {@allow_recode=%r}"
                     % (refused, refused))
    return named


def check_series_values(too_few, allow_recode=(), *, file=None, what: str = "a value") -> list:
    """Refuse an earlier column of the series that this input holds blank
    (:meth:`~anonset.passthrough.PassThroughCheck.too_few`: (column, rows
    with a value, rows read); ``what``: what its rows lack, for an earlier
    sets-column a value of its earlier domain), as a column it lacks is
    refused, unless named in ``allow_recode``; returns the named ones
    (:func:`_named_risk`)."""
    named = []
    for c, have, rows in too_few:
        if c in allow_recode:
            named.append(_named_risk(c, [], f"was published by an earlier release of the series "
                                            f"and holds {what} in only {have:,} of the "
                                            f"{rows:,} rows read: not measured"))
            continue
        raise InputError(f"was published by a release of the series and holds {what} in only "
                         f"{have:,} of the {rows:,} rows read here: whether it gives a value "
                         "away beside this release's columns cannot be measured (the series' "
                         "sets link each record's rows across its releases)", column=c,
                         file=file,
                         expected="its values in the input (those the earlier release "
                                  "published), or the risk named: {@allow_recode=[%s]}" % repr(c))
    return named
