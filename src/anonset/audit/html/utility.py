"""Utility of a randomized release as the analyst will see it (papers 000,
004, 001): cross-tabulations of attribute pairs and marginals reconstructed
from the published sets (eq. 26-27 EM and the exact-likelihood EM; paper
001's estimators for semantic tables), and, given the original data, the
true counts and the error of each method (L1, eq. 4; Hellinger, eq. 6).

A file too large for memory is read once for every reconstruction at once
(one :class:`anonset.engine.Counts` per attribute set and method, fed from
one pass over the union of their columns), and the original once for every
true count, so the cost is two passes whatever the number of pairs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...validate import InputError

__all__ = ["Tab", "Utility", "default_pairs", "parse_pairs", "check_methods",
           "marginal_attributes", "set_utility", "true_crosstabs_file", "METHODS",
           "SEMANTIC_METHODS"]

#: Reconstruction methods compared for set tables (paper 000 Sec. V-D).
METHODS = ("em", "exact_em")
#: Paper 001's estimators compared for semantic tables.
SEMANTIC_METHODS = ("em", "linear")
#: Marginal charts at most (one per randomized attribute).
MAX_MARGINALS = 16


@dataclass
class Tab:
    """One reconstructed cross-tabulation: estimates per method, the truth
    where known, and each method's error against it."""

    attributes: tuple
    estimates: dict
    truth: object = None
    metrics: dict = field(default_factory=dict)


@dataclass
class Utility:
    pairs: list
    marginals: list
    methods: tuple
    notes: list = field(default_factory=list)


def _randomized(header) -> list:
    return [n for n in header.names if not header.params[n].exact]


def whole_domain(header) -> list:
    """Randomized attributes the sets say nothing of (every set the whole
    domain, or p = 0: ``AttributeParams.says_nothing``); reconstruction
    refuses them."""
    return [n for n in _randomized(header) if header.params[n].says_nothing]


def marginal_attributes(header) -> list:
    """The attributes whose marginal the report draws: every randomized one
    that the sets say something of (exact attributes are published as they
    are), at most MAX_MARGINALS."""
    whole = whole_domain(header)
    return [n for n in _randomized(header) if n not in whole][:MAX_MARGINALS]


def default_pairs(header, semantic: str | None = None, limit: int = 3) -> list:
    """A few attribute pairs: for a semantic table each QID with the
    sensitive attribute; otherwise consecutive pairs of the published
    attributes, randomized ones first (an exact QID with a sensitive
    attribute for paper 004 tables)."""
    names = header.names
    whole = whole_domain(header)
    if semantic is not None:
        return [] if semantic in whole else \
            [(q, semantic) for q in names if q != semantic][:limit]
    rand = [n for n in _randomized(header) if n not in whole]
    exact = [n for n in names if n not in _randomized(header)]
    order = rand + exact
    pairs = [(order[i], order[i + 1]) for i in range(0, len(order) - 1, 2)
             if order[i] in rand or order[i + 1] in rand]
    if not pairs and exact and rand:
        pairs = [(exact[0], rand[0])]
    return pairs[:limit]


def parse_pairs(pairs, header, semantic: str | None = None) -> list:
    """Pairs from ``'a:b,c:d'`` or a list of (a, b), checked against the
    published attributes.  In the text a comma inside a name is written
    ``\\,`` and a colon ``\\:``, as the command line's lists write them
    (``--pairs 'Wage\\, hourly:job title'``)."""
    import re
    if isinstance(pairs, str):
        items = [p.strip() for p in re.split(r"(?<!\\),", pairs) if p.strip()]
        pairs = [tuple(s.replace("\\,", ",").replace("\\:", ":").strip()
                       for s in re.split(r"(?<!\\):", p)) for p in items]
    out = []
    for p in pairs:
        p = tuple(p)
        if len(p) != 2 or not all(p) or p[0] == p[1]:
            raise InputError(f"got {':'.join(map(str, p))!r}", param="pairs",
                             expected="pairs of two different published attributes, A:B")
        for a in p:
            if a not in header.names:
                raise InputError(f"{a!r} is not a published attribute", param="pairs",
                                 expected=f"one of {', '.join(header.names)}")
        from ...validate import check_informative
        check_informative(header, list(p))
        if semantic is not None and semantic not in p:
            raise InputError(f"{':'.join(p)} does not hold the sensitive attribute "
                             f"{semantic!r}", param="pairs",
                             expected="QID:SENSITIVE pairs (paper 001 estimates QIDs x the "
                                      "sensitive value)")
        out.append(p)
    return out


def check_methods(methods, semantic: bool):
    """The methods asked for, checked before any work: reconstruction
    methods of paper 000, or paper 001's estimators for a semantic table."""
    if methods is None:
        return None
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    from ...randomized.reconstruct import METHODS as ALL
    allowed = ("em", "linear", "existing", "simple") if semantic else ALL
    for m in methods:
        if m not in allowed:
            raise InputError(f"got {m!r}", param="methods",
                             expected=f"one of {', '.join(allowed)}")
    if not methods:
        raise InputError("names no method", param="methods", expected="at least one")
    return tuple(methods)


# --------------------------------------------------------------- true counts
def true_crosstabs_file(path, schema, attribute_sets, *, chunk_rows: int, fmt=None,
                        progress=None, dropped=(), category=None) -> dict:
    """True counts of several attribute sets of an original file in one
    pass, with the published domains and the engine's typing of CSV text:
    ``{attributes: CrossTab}``.  ``dropped``: columns whose missing cells
    left their rows out of the release (missing='drop'); such rows are not
    counted.  ``category``: the release's ``info['missing']`` where a
    missing='category' made columns text with a token
    (:func:`anonset.validate.as_published`)."""
    import pandas as pd
    from ...validate import as_published
    from ... import engine
    from ...encode import encode_column
    from ...io.tables import check_input_file, file_columns, file_format, iter_blocks
    from ...randomized.crosstab import CrossTab
    path = check_input_file(path, param="original")
    fmt = file_format(path, fmt, named_by="original")
    union = list(dict.fromkeys([*(a for s in attribute_sets for a in s), *dropped]))
    have = file_columns(path, fmt)
    for a in union:
        if a not in have:
            raise InputError(f"lacks the column {a!r} of the publication", param="original",
                             file=path, expected="the original table of this publication")
    dims = {s: tuple(schema[a].d for a in s) for s in attribute_sets}
    counts = {s: np.zeros(math.prod(d), dtype=np.int64) for s, d in dims.items()}
    for row0, block in iter_blocks(path, fmt, chunk_rows=chunk_rows, columns=union):
        cols = {}
        for a in union:
            col = block[a].reset_index(drop=True)
            if fmt == "csv":
                col = engine.cast_text(col, schema[a], a, path)
            cols[a] = as_published(pd.DataFrame({a: col}), category)[a] \
                if category else col
        if dropped:
            keep = ~np.logical_or.reduce([cols[a].isna().to_numpy() for a in dropped])
            cols = {a: c[keep].reset_index(drop=True) for a, c in cols.items()}
        codes = {a: encode_column(c, schema[a], row0=row0) for a, c in cols.items()}
        for s, d in dims.items():
            flat = np.ravel_multi_index([codes[a] for a in s], d)
            counts[s] += np.bincount(flat, minlength=counts[s].size)
        if progress is not None:
            progress(len(block))
    return {s: CrossTab(tuple(s), tuple(schema[a].domain for a in s),
                        counts[s].reshape(dims[s]).astype(np.float64), "true")
            for s in attribute_sets}


# -------------------------------------------------------------- estimates
def _estimates_memory(table, jobs) -> dict:
    from ...randomized.reconstruct import reconstruct
    return {s: {m: reconstruct(table, list(s), m) for m in ms} for s, ms in jobs.items()}


def _estimates_semantic(table, sa: str, jobs) -> dict:
    from ...randomized.semantic import analyze
    out = {}
    for s, ms in jobs.items():
        qids = [a for a in s if a != sa]
        est = {}
        for m in ms:
            ct = analyze(table, qids, estimator=m)
            if list(ct.attributes) != list(s):        # (sa, qid) asked: transpose
                ct.counts = np.moveaxis(ct.counts, -1, 0)
                ct.attributes, ct.domains = tuple(s), tuple(ct.domains[::-1])
            est[f"semantic_{m}"] = ct
        out[s] = est
    return out


def _estimates_file(release, jobs, chunk_rows, progress) -> dict:
    """Every (attribute set, method) reconstructed from one pass over the file."""
    from ...engine import ReconstructionPlan
    from ...io.published import iter_masks
    header = release.header
    counts = {(s, m): ReconstructionPlan(header, list(s), m).counts()
              for s, ms in jobs.items() for m in ms}
    union = list(dict.fromkeys(a for s in jobs for a in s))
    at = {a: i for i, a in enumerate(union)}
    for _, masks in iter_masks(release.path, union, chunk_rows=chunk_rows, fmt=release.fmt,
                               meta=release.meta):
        for (s, _), c in counts.items():
            c.add([masks[at[a]] for a in s])
        if progress is not None:
            progress(masks[0].shape[0] if masks else 0)
    return {s: {m: counts[(s, m)].rplan.estimate(counts[(s, m)]) for m in ms}
            for s, ms in jobs.items()}


def set_utility(release, original, pairs, *, chunk_rows: int, methods=None,
                steps=None) -> Utility:
    """Reconstructions of ``pairs`` with every method and of every
    randomized marginal with the first (paper 001's estimators are cheap:
    every method for semantic tables), with the truth and each method's
    error when ``original`` is given."""
    from ...metrics import compare
    header = release.header
    sa = release.semantic_attribute
    notes = []
    if sa is not None:
        methods = tuple(methods or SEMANTIC_METHODS)
        marg, marg_methods = [(sa,)], methods
    else:
        if not methods and release.streamed:
            methods = METHODS[:1]
            notes.append("read in chunks: the pairs are reconstructed with em only (exact_em "
                         "costs a pass over every distinct set tuple per iteration; ask for "
                         "it with the methods option)")
        methods = tuple(methods or METHODS)
        marg, marg_methods = [(a,) for a in marginal_attributes(header)], methods[:1]
    whole = whole_domain(header)
    marg = [s for s in marg if s[0] not in whole]
    jobs = {tuple(p): methods for p in pairs}
    for s in marg:
        jobs.setdefault(s, marg_methods)
    if whole:
        notes.append(f"{', '.join(whole)}: every set is the whole domain (or drawn with p = "
                     "0), so the sets carry no information: not reconstructed (any "
                     "reconstruction would be the estimator's starting point, a uniform split; "
                     "`anonset reconstruct` refuses them)")
    if len(_randomized(header)) > MAX_MARGINALS:
        notes.append(f"marginals of the first {MAX_MARGINALS} randomized attributes are drawn")
    if steps is not None:
        steps.stage("reconstructing", release.n_rows if release.streamed else None)
    if not jobs:
        est = {}            # no column's sets carry information (the notes say so)
    elif sa is not None:
        est = _estimates_semantic(release.table, sa, jobs)
    elif release.streamed:
        est = _estimates_file(release, jobs, chunk_rows, steps)
    else:
        est = _estimates_memory(release.table, jobs)
    truth = {}
    if original is not None:
        truth = _truth(release, original, list(jobs), chunk_rows, steps)
    tabs = {}
    for s in jobs:
        t = truth.get(s)
        metrics = {m: compare(t, e) for m, e in est[s].items()} if t is not None else {}
        tabs[s] = Tab(s, est[s], t, metrics)
    return Utility([tabs[tuple(p)] for p in pairs], [tabs[s] for s in marg], methods, notes)


def _truth(release, original, sets, chunk_rows, steps) -> dict:
    import pandas as pd
    from ...randomized.crosstab import true_crosstab
    from ...validate import as_published, filled_as_text
    header = release.header
    gone = release.dropped_columns
    recorded = (header.info or {}).get("missing")
    category = filled_as_text(recorded)
    if isinstance(original, pd.DataFrame):
        if gone:                # the rows the publisher left out (missing='drop')
            from ...validate import missing_rows
            original = original.loc[~missing_rows(original, gone)[0]]
        original = as_published(original, category)
        return {s: true_crosstab(original, header.schema, list(s),
                                 missing=release.missing) for s in sets}
    if steps is not None:
        steps.stage("true counts", release.n_rows)
    return true_crosstabs_file(original, header.schema, sets, chunk_rows=chunk_rows,
                               progress=steps, dropped=gone, category=category)
