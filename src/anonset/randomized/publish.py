"""Publishing for papers 000 and 004 (Sec. V-B of paper 000).

For each record and sensitive QID S_j, a coin with head probability p_j: on
head the set holds the true value and eta_j - 1 distinct other values, on tail
eta_j distinct values drawn from the whole domain.  Exact QIDs are published
as they are; identifiers and dropped columns are not published; pass-through
columns are copied.  Rows come out in a keyed random order.

:func:`publish` is the in-memory path of :mod:`anonset.engine`: the table is
one block.  The streamed (:mod:`anonset.stream`) and Dask
(:mod:`anonset.dask`) paths run the same engine over many blocks.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import _kernels
from .. import engine
from ..io.keys import check_rng
from ..io.tables import as_frame
from ..validate import InputError, check_threads as _threads
from .settable import SetTable
from .params import AttributeParams
from .._typing import Model, PathLike, Seed, TableLike
from ..hierarchy import Hierarchy
from ..schema import Schema

__all__ = ["publish", "sample_sets", "check_params"]


def sample_sets(codes, params, attr_ids, key: bytes, *, rng: str = "chacha20",
                row0: int = 0, n_threads=None, counters=None) -> dict:
    """Random sets for already-encoded columns.

    Parameters
    ----------
    codes : {name: int32 codes}
    params : {name: AttributeParams}
    attr_ids : {name: int} stream id of each attribute (keyed by its name,
        :func:`~anonset.io.keys.name_stream_ids`)
    key : 32-byte generator key
    row0 : global index of the first row (for chunks and partitions)
    counters : {name: uint64 array}, optional
        Per-row generator counters replacing the global row (persistent-key
        mode, :func:`anonset.io.keys.record_counters`).

    Returns
    -------
    {name: uint64 bitmask array (n, words)}
    """
    names = list(codes)
    if not names:
        return {}
    for n in names:
        if params[n].d > _kernels.MAX_DOMAIN:
            raise InputError(f"has {params[n].d:,} values", column=n,
                             expected=f"at most {_kernels.MAX_DOMAIN:,} (the set sampler's limit)")
    ctr = None if counters is None else [counters.get(n) for n in names]
    outs = _kernels.sample_sets(
        key, check_rng(rng), [codes[n] for n in names],
        [params[n].d for n in names], [params[n].eta for n in names],
        [params[n].coin for n in names], [int(params[n].exact) for n in names],
        [attr_ids[n] for n in names], row0=row0, n_threads=_threads(n_threads), counters=ctr)
    return dict(zip(names, outs))


def check_params(params, model, published, codes, *, clip_l: bool = False, file=None) -> dict:
    """Verify user-given parameters against the attributes and the model.

    Raises InputError (a ValueError; parameter ``params``, on the command
    line ``--params-from``) naming the attribute when a parameter is missing,
    does not match the attribute's domain, or would publish a weaker model
    than declared (e.g. p above the admissible value for t_j, or eta below
    l_j).
    """
    import math

    from ..models import Anonymity, Closeness, Diversity, DiversityCloseness
    from .params import (AttributeParams, resolve_ground, ground_object, max_admissible_p,
                         quantize_p, grid_t, T_GRID)

    def bad(message, column=None, expected=None):
        return InputError(message, param="params", column=column, file=file, expected=expected)

    names = [a.name for a in published]
    # an exact QID's parameters are fixed (p = 1, eta = 1): they may be left
    # out, and given ones are not held to this table's d (the parameters of
    # an earlier release, params=first.params, fit a later one)
    missing_ = [a.name for a in published if a.name not in params and a.role != "exact"]
    extra = [n for n in params if n not in names]
    if missing_ or extra:
        raise bad(f"must give the published sensitive attributes "
                  f"{[a.name for a in published if a.role != 'exact']}; "
                  f"missing {missing_}, unexpected {extra}")
    def needed_eta(a) -> int:
        """The smallest eta the model allows (l_j or k_j, clipped as optimize does)."""
        if isinstance(model, (Diversity, DiversityCloseness)):
            v = model.l_for(a.name)
        elif isinstance(model, Anonymity):
            v = model.k_for(a.name)
        else:
            return 1
        return max(a.d - 1, 1) if clip_l and v >= a.d and a.d > 1 else v

    out, too_large, t_named = {}, [], {}
    for a in published:
        par = params.get(a.name)
        if par is None and a.role == "exact":
            out[a.name] = AttributeParams(a.name, 1.0, 1, a.d, exact=True)
            continue
        if not isinstance(par, AttributeParams):
            raise bad(f"must be an AttributeParams, got {type(par).__name__}", a.name)
        if par.name != a.name:
            raise bad(f"holds the parameters of {par.name!r}", a.name,
                      expected=f"AttributeParams named {a.name!r} under its name")
        if a.role == "exact":
            if not (par.exact and par.eta == 1):
                raise bad("is an exact QID: eta = 1, exact", a.name)
            out[a.name] = AttributeParams(a.name, 1.0, 1, a.d, exact=True)
            continue
        if par.d != a.d:
            raise bad(f"d = {par.d} but the domain has {a.d} values", a.name)
        if not (1 <= par.eta <= a.d) or not (0.0 <= par.p <= 1.0):
            raise bad(f"need 1 <= eta <= d and 0 <= p <= 1, got eta = {par.eta}, p = {par.p}",
                      a.name)
        if par.exact:
            raise bad("a sensitive attribute cannot be published exactly", a.name)
        need = needed_eta(a)
        if isinstance(model, (Diversity, Anonymity, DiversityCloseness)):
            if par.eta < need or (not isinstance(model, DiversityCloseness) and par.p < 1.0):
                which = "k" if isinstance(model, Anonymity) else "l"
                raise bad(f"{model.name} needs p = 1 and eta >= {need}, "
                          f"got p = {par.p}, eta = {par.eta}", a.name,
                          expected=(f"a model the given parameters satisfy ({which} <= "
                                    f"{par.eta} for {a.name!r}): they keep each column's (p, "
                                    "eta), and with them its sets; others would redraw the "
                                    "sets (in a series, a new series under another key)"
                                    if par.p >= 1.0 else
                                    "a t-closeness model, for which the given parameters "
                                    f"(p = {par.p} < 1) were chosen"))
        if isinstance(model, (Closeness, DiversityCloseness)):
            t = model.t_for(a.name)
            g = resolve_ground(model, a)
            t_named[a.name] = t
            if not math.isinf(t) and t < 1.0:
                A = np.bincount(codes[a.name], minlength=a.d).astype(np.int64)   # counts, as optimize
                p_max = max_admissible_p(A, par.eta, t, ground_object(g, a))
                if par.p > p_max + 1e-12:
                    # Algorithm 1 gives a first release the largest p its own
                    # data admits, so a later release's data that moved a
                    # little the other way (half of them) lands here
                    from .closeness_search import worst_emd
                    t_need = worst_emd(A, par.eta, par.p, ground_object(g, a)).value
                    t_named[a.name] = grid_t(t_need)   # a coarse step: no exact counts
                    too_large.append((a.name,
                        f"p = {par.p} exceeds the largest p admissible for "
                        f"t = {t} with eta = {par.eta} ({p_max:.6g}) on this data, which admits "
                        f"that p at t = {t_named[a.name]:g} (the least t it needs, rounded up "
                        f"to a step of 1/{T_GRID})"))
            par = AttributeParams(par.name, par.p, par.eta, par.d, t=t, ground=g,
                                  l=need if isinstance(model, DiversityCloseness) else None)
        # the coin the sampler really has (never above the given p)
        out[a.name] = dataclasses.replace(par, p=quantize_p(par.p))
    if too_large:
        # the t that keeps every set, for every column the model gives a t
        # (a per-column t must name them all): in Python and on the command line
        api = "{" + ", ".join(f"{n!r}: {v:g}" for n, v in t_named.items()) + "}"
        from ..validate import option_text
        cli = option_text("--t", {n: f"{v:g}" for n, v in t_named.items()})
        one = too_large[0][0] if len(too_large) == 1 else None
        raise bad("; ".join(m if one else f"column {n!r}: {m}" for n, m in too_large), one,
                  "p at most the largest admissible.  Where the parameters come from an "
                  "earlier release (params=latest; --params-from), another p would redraw every "
                  "set and the releases would intersect: publish this release under the t "
                  f"named (t={api}; {cli}; recorded in the metadata), and leave room in a "
                  "new series by publishing its first release under a smaller t than later "
                  "ones (docs/security.md)")
    return out


def publish(data: TableLike, model: Model, schema: Schema | None = None, *,
            sensitive: Iterable[str] = (), exact: Iterable[str] = (),
            identifiers: Iterable[str] = (), other: Iterable[str] = (), drop: Iterable[str] = (),
            bins: Mapping[str, Sequence[float]] | None = None,
            domains: Mapping[str, Sequence[Any]] | None = None,
            ordinal: Iterable[str] | Mapping[str, Sequence[Any]] = (),
            hierarchies: Mapping[str, Hierarchy | PathLike] | None = None,
            seed: Seed = None, research_seed: bool = False, key_file: PathLike | None = None,
            record_id: str | None = None, allow_clear: Iterable[str] = (),
            allow_recode: Iterable[str] = (), allow_identifier: Iterable[str] = (),
            allow_rare: Iterable[str] = (),
            allow_shared_id: Iterable[str] = (), keep_order: bool = False,
            missing: str = "error", missing_token: str = "?",
            clip_l: bool = False,
            params: Mapping[str, AttributeParams] | SetTable | None = None,
            new_in_series: Iterable[str] = (), first_in_series: bool = False,
            rng: str = "chacha20", n_threads: int | None = None) -> SetTable:
    """Publish a table under a privacy model of paper 000.

    Every column must have a role you chose: pass a :class:`Schema`, or name
    each column in one of ``sensitive``, ``exact``, ``identifiers``, ``other``
    or ``drop``.  A column nobody named is refused (it would otherwise be
    published, passed through or dropped without you knowing).

    Parameters
    ----------
    data : pandas.DataFrame, pyarrow.Table, or a table speaking the Arrow
        PyCapsule or dataframe interchange protocol (Polars, DuckDB)
    model : Diversity | Anonymity | Closeness | DiversityCloseness
    schema : Schema, optional
        Roles and domains of every column (instead of the role arguments).
    sensitive, exact, identifiers, other, drop : column names
        Sensitive QIDs (published as random sets), non-sensitive QIDs
        (published as they are, paper 004), identifiers (not published),
        pass-through columns (copied unchanged: name them only when they are
        neither identifying nor sensitive), columns to drop.
    bins, domains, ordinal, hierarchies : {column: ...}
        Declared domains: numeric bins ``[e0, e1, ...]``, value lists, ordered
        value lists (or names of ordinal columns with numeric values), ARX
        hierarchies (a Hierarchy, a file's path or text, or its rows ``leaf,
        ..., root`` as a list of lists or a DataFrame).  A domain read off
        the data reveals which values occur: declare it where that matters.
        A pandas Categorical's categories are its declared domain (ordered
        ones are ordinal).
    seed : bytes, str or int, optional
        Key material (at least 128 bits, e.g. ``secrets.token_hex(16)``)
        that makes the output reproducible; anyone who knows it can recover
        every true value, so keep it as secret as the data.  By default the
        key is fresh from the operating system and never stored.
    research_seed : bool
        Accept a seed under 128 bits (research runs on data that is not
        secret); the metadata records it and the audit flags it.
    key_file : path, optional
        A file holding the key material (instead of ``seed``), so that the
        secret never sits in code or on a command line.
    record_id : str, optional
        Persistent-key mode: with ``key_file`` (or a long seed) and this
        identifier column, each record's set is a pure function of (key,
        record id, attribute, true value), so publishing the same records
        again gives the same sets and intersecting releases reveals nothing
        more than one release of the values that did not change.  A value
        that changed draws a fresh set, which the record's other sets link
        to its old one: inside one release refused unless ``allow_clear``
        names the column, across releases unchecked (every such release
        warns; docs/security.md).  The column itself is never published.
        Each release of the series is given the latest before it
        (``params=``), or declared the first (``first_in_series=True``):
        one given neither is refused.
        Sensitive columns need declared domains (a domain read off each
        release would change, and with it every set), each attribute's
        stream is keyed by its name (columns may be added, dropped or moved
        between releases), and t-closeness needs ``params`` pinned.  Rows
        that share a record id are one record's rows (panel waves, visits):
        the same value gets the same set in each of them.  Without it, an
        identifier whose values several rows share is refused (see
        ``allow_shared_id``).
    allow_clear : column names
        Sensitive columns you accept to publish in the clear (a model that
        gives p = 1 and eta = 1, e.g. l = 1, k = 1 or t >= 1) or nearly
        (sets that values few hold, or another column's sets, give away;
        under ``record_id``, a value that differs between one record's
        rows); otherwise such a release is refused.  The metadata and the
        audit name them.
    allow_recode : column names
        Pass-through columns or exact QIDs you accept to publish although
        they recode a sensitive column (predicting it from the other rows
        with the same value removes at least 90 % of the errors of guessing
        its most common value, Goodman and Kruskal's lambda, measured on
        131,072 rows drawn at random), or some of whose values give it away
        for at least 1 % of the rows: published as they are, they publish
        that column (or those rows' values) nearly in the clear, so such a
        column is refused otherwise.  The metadata (``pass_through_risks``, ``'allowed':
        True``) and the audit name them.  In a persistent-key series it may
        also name a column of an earlier release (read beside this one's:
        a record keeps its sets, which link its rows across the releases)
        that this input lacks, or that the series published as sets and
        this release publishes as it is; see docs/security.md, section 0.
    allow_identifier : column names
        Pass-through columns you accept to publish although they single rows
        out (at least half of the first 250,000 rows hold a value no other
        row has: a name, an ID, an exact timestamp, a survey weight): such a
        column links each published row to its person wherever it is known
        elsewhere, so it is refused otherwise (name it an identifier, which
        is never published, or drop it).  The metadata
        (``pass_through_risks``, ``'allowed': True``) and the audit name them.
    allow_rare : column names
        Sensitive columns with a domain read off the data that you accept to
        publish although some of its values are so rare that counting the
        sets that hold one points at its holders: such a domain tells that
        each of its values is someone's, and a value that lies in fewer than
        l sets (one set, under t-closeness) gives its holders more than 1/l
        away.  Refused otherwise where at least 0.001 values are expected
        to; declaring the domain (``domains``, ``bins``) lifts it.  The
        metadata (``rare``) and the audit name them.
    allow_shared_id : column names
        Identifier columns whose values several rows share that you declare
        to be different people's rows (a household, a site).  Refused
        otherwise: if they are one person's rows (panel waves, visits), each
        would draw its sets independently, and whoever links them intersects
        the sets toward the person's values (in the PSID panel, at l = 4,
        the education of all 595 people).  Tie one person's rows with
        ``record_id`` and ``key_file`` instead.  The metadata
        (``shared_ids_allowed``) and the audit name them.
    keep_order : bool
        Keep the input row order (by default rows come out in a keyed random
        order: a file sorted by a sensitive value would otherwise reveal it).
    missing : {'error', 'category'}
        Missing cells: an error, or published as the value ``missing_token``.
    clip_l : bool
        Where l_j (k_j) >= d_j, use d_j - 1 (weaker than asked, with a warning).
    params : SetTable or {name: AttributeParams}, optional
        Use these parameters instead of optimizing them; they are checked
        against the model on this table's data (a weaker model is refused).
        Exact QIDs may be left out.  With a persistent key, pass the
        series' latest release itself (``params=latest``; on the command
        line ``--params-from LATEST``): every later release then takes its (p, eta)
        (which t-closeness's Algorithm 1 would otherwise choose anew from
        each release's data) and is refused where a sensitive column's
        domain or the generator changed, or where it is drawn under another
        key than the series' (another key file, or no ``record_id``): each
        would redraw every set; the columns earlier releases published as
        they are are read beside this one's (docs/security.md, section 0).
        Under a persistent key a mapping (``first.params``) is refused: it
        shows neither the series nor its domains and columns; a release
        drawn under no persistent key gives parameters only, and is refused
        unless ``first_in_series=True`` declares this release the first.  Each
        release of a series carries on the parameters and domains of the
        series' columns it leaves out, so the latest release is enough.
    new_in_series : column names
        With ``params`` an earlier release: sensitive columns that no release
        of the series published under any name; their (p, eta) are chosen
        for this release.  A sensitive column the earlier release lacks is
        refused otherwise: a renamed column would draw new sets for values
        published before, and the releases intersect.
    first_in_series : bool
        With ``record_id``: this release is the first of its series (no
        earlier release to read beside it).  A persistent-key release given
        neither this nor ``params`` is refused: a later release taken for a
        first one would keep every record's sets and read none of the
        columns the series published before (docs/security.md, section 0).
        The metadata (``first_in_series``), the command line's summary and
        the audit name it.
    rng : {'chacha20', 'philox'}
        'chacha20' (default) is cryptographically strong; 'philox' is faster
        but its output could in principle be predicted from published sets.
    n_threads : int, optional
        Kernel threads (default: OpenMP's default); the output does not
        depend on it.

    Returns
    -------
    SetTable

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"name": ["Ann", "Bo", "Cy", "Di"],
    ...                    "job": ["a", "b", "c", "a"], "city": ["x", "y", "x", "z"]})
    >>> pub = anonset.publish(df, anonset.Diversity(2), identifiers=["name"],
    ...                       sensitive=["job", "city"],
    ...                       domains={"job": ["a", "b", "c"], "city": ["x", "y", "z"]})
    >>> [len(s) for s in pub.sets("job")]
    [2, 2, 2, 2]
    >>> pub.info["row_order"], pub.info["key"]
    ('shuffled', 'os')
    """
    frame = as_frame(data)
    opts = engine.Options(model, schema, sensitive=sensitive, exact=exact,
                          identifiers=identifiers, other=other, drop=drop, bins=bins or {},
                          domains=domains or {}, ordinal=ordinal, hierarchies=hierarchies or {},
                          missing=missing, missing_token=missing_token, clip_l=clip_l,
                          params=params, allow_clear=allow_clear,
                          allow_recode=allow_recode, allow_identifier=allow_identifier,
                          allow_rare=allow_rare,
                          allow_shared_id=allow_shared_id, keep_order=keep_order,
                          record_id=record_id, new_in_series=new_in_series,
                          first_in_series=first_in_series, seed=seed,
                          research_seed=research_seed,
                          key_file=key_file, rng=rng, n_threads=n_threads)
    types = dict(frame.dtypes)
    if record_id is not None and record_id in types:
        # the id's type as given: a float32 column is float64 in the frame
        from ..encode import NARROW
        from ..io.tables import given_type
        narrow = frame.attrs.get(NARROW, {})
        types[record_id] = np.dtype(narrow[record_id]) if record_id in narrow \
            else given_type(data, record_id, types[record_id])
    d = engine.draft(opts, list(frame.columns), types)
    plan = engine.make_plan(d, engine.Stats(d).add(frame, 0))
    table = engine.publish_block(plan, frame, 0)
    ranks = engine.block_ranks(plan, 0, table.n_rows)
    return table if ranks is None else table._in_order(engine.order_of(ranks))
