"""Risks a publication can carry although every check of its model passes
(issue 13): what the papers' models do not cover, and what the founders'
rule "the user opts into risk by naming it, then the audit names it too"
asks the audit to say.

* key: a research seed (short, guessable: re-running the sampler with it
  pins every true value), or a user seed of unknown strength (files from
  anonset versions that did not record the key mode);
* row order: rows kept in the input order (a file sorted by age gives each
  row's age away by its position), or an order nobody recorded;
* published in the clear: a sensitive attribute whose sets are its true
  value (p = 1, eta = 1), whether or not the user allowed it;
* identifiers: a column declared an identifier that is nevertheless in the
  published table;
* pass-through columns (published unchanged): one with a different value for
  most rows is a likely identifier (at least ``IDENTIFIER_SHARE`` = 50 % of
  the rows hold a value no other row has: each of them is singled out by that
  column alone); one that nearly determines a sensitive attribute (a recode)
  publishes it in the clear: Goodman and Kruskal's lambda of predicting the
  sensitive value from the pass-through value, leave one out, at least
  ``DETERMINES`` = 0.9 (the column removes 90 % of the errors of guessing the
  most common value; a one-to-one recode scores 1, an unrelated column 0, a
  column with a new value per row 0); one some of whose values give the
  sensitive value away (``given_away``: at least ``GIVEN_SHARE`` = 1 % of
  the rows hold a value whose rows share one sensitive value far beyond its
  overall share, :meth:`anonset.passthrough.ValueSample.given_away`) although
  its lambda stays below 0.9 publishes those rows' values in the clear;
* exact QIDs (paper 004: published as they are): where their combination
  singles out rows, whoever knows a person's QIDs finds that person's row in
  every release, so releases drawn with different keys intersect to the true
  values (docs/security.md, "repeated releases"); a warning unless the key is
  persistent (the same sets in every release);
* identifiers whose values several rows share (recorded at publishing,
  ``info['shared_ids']``): if those rows are one person's (panel waves,
  visits), fresh sets per row intersect toward the person's true values; a
  warning unless the key is persistent (one set per record and value);
* rows left out for a missing cell (``missing='drop'``, semantic diversity,
  LGB, msa): whoever is in the data but not in the release left a published
  column unanswered; a warning naming how many rows;
* the attack: a success rate above the model's bound and above the prior
  alone (:mod:`anonset.audit.attack`).

Each risk is a row with status 'risk'; what was checked and found fine is a
row with status 'pass' (or 'info'), so the report shows both.
"""
from __future__ import annotations

import math

import numpy as np

from ..passthrough import (DETERMINES, GIVEN_SHARE, IDENTIFIER_SHARE, SAMPLE_ROWS, columns_of,
                           rule_recodes,
                           set_lambda, target_of)

#: What a risk row adds where the user named the column (``allow_recode``).
_ALLOWED = " (published as the user allowed: allow_recode)"
_ALLOWED_ID = " (published as the user allowed: allow_identifier)"

__all__ = ["IDENTIFIER_SHARE", "DETERMINES", "key_risks", "order_risks", "clear_risks",
           "role_risks", "passthrough_risks", "order_and_joint_risks", "recorded_recode_risks",
           "allowed_recodes", "allowed_identifiers",
           "exact_qid_risks", "shared_id_risks", "changed_value_risks", "dropped_row_risks",
           "attack_risks"]


def key_risks(info, add, model=None, *, partition: bool = False) -> None:
    """The key mode recorded in ``info['key']`` (older files: ``seeded``);
    ``partition``: an LGB or msa release, whose key draws its row order,
    IDs and groups (no sets)."""
    mode = info.get("key")
    # a declaration the publisher made, named in every persistent key's row
    first = ("; declared the first release of its series (first_in_series): a later release "
             "is read beside it only when given it (params=; --params-from)"
             if mode == "persistent" and info.get("first_in_series") else "")
    if mode == "research-seed" and partition:
        add("key", "-", "risk", mode, "os",
            "key: a research seed (under 128 bits) drew the release; anyone who guesses it can "
            "re-run it and undo its random row order and IDs, finding which published row is "
            "whose")
    elif mode == "research-seed":
        add("key", "-", "risk", mode, "os",
            "key: a research seed (under 128 bits) drew the sets; anyone who guesses it can "
            "re-run the sampler and keep, for each record, the values that reproduce its sets")
    elif mode == "seed":
        add("key", "-", "warn", mode, "os",
            "key: a secret of at least 128 bits given by the publisher (a seed or a key file "
            "without a record id); it determines the whole release, so keep it as secret as "
            "the data")
    elif mode == "persistent" and info.get("streams") != "name":
        add("key", "-", "warn", mode, "os",
            "key: a persistent key, with each attribute's stream keyed by its position (written "
            "by an anonset version before name-keyed streams): a release whose columns differ "
            "draws other sets for the same records" + first)
    elif mode == "persistent" and info.get("params") in ("optimized", "partly given") and \
            "t" in (model or {}):
        add("key", "-", "warn", mode, "os",
            "key: a persistent key with t-closeness parameters chosen for this release's data; "
            "later releases keep the same sets only with these parameters (params=this; "
            "--params-from THIS_RELEASE)" + first)
    elif mode == "persistent" and first:
        # a declaration the user made: listed, not among the passes (H141)
        add("key", "-", "info", "persistent, first in series", "os",
            "key: a persistent key file; the same record gets the same sets in every release"
            + first)
    elif mode in ("os", "persistent"):
        add("key", "-", "pass", mode, "os",
            "key: a fresh key from the operating system, never stored" if mode == "os" else
            "key: a persistent key file; the same record gets the same sets in every release"
            + first)
    elif info.get("seeded"):
        add("key", "-", "risk", "seeded", "os",
            "key: a user seed of unknown strength (written by an anonset version that accepted "
            "short seeds and did not record the key mode)")
    elif "seeded" in info:
        add("key", "-", "pass", "os", "os", "key: a fresh key from the operating system")
    else:
        add("key", "-", "warn", "unknown", "os", "key: the key mode is not recorded")


def order_risks(info, add) -> None:
    """The row order recorded in ``info['row_order']``."""
    order = info.get("row_order")
    if order == "shuffled":
        add("row_order", "-", "pass", order, "shuffled",
            "row order: rows in a keyed random order, unrelated to the input")
    elif order == "input":
        add("row_order", "-", "risk", order, "shuffled",
            "row order: rows keep the input order; if the input was sorted or grouped by a "
            "sensitive attribute, a row's position reveals it")
    else:
        add("row_order", "-", "risk", "unknown", "shuffled",
            "row order unknown (not recorded: anonset versions before the shuffle kept the "
            "input order); a row's position may reveal a sensitive attribute")


def dropped_row_risks(info, add) -> None:
    """Rows the publisher left out for a missing cell (``info['missing']``,
    policy 'drop'): a warning, since absence from the release tells that a
    person left a published column unanswered."""
    from ..validate import category_words, dropped_rows_words
    record = info.get("missing")
    words = dropped_rows_words(record)
    if words:
        add("missing", "-", "warn", record["rows"], 0, "missing: " + words)
    words = category_words(record)
    if words:
        # an opt-in the summary, the metadata and the report name (H141)
        add("missing", "-", "info", f"category {record.get('token')!r}", None,
            "missing: " + words)


def clear_risks(table, add, marginal=None, *, true: bool = False) -> None:
    """Sensitive attributes whose published set is the true value, or
    nearly (``marginal(name)``: the column's distribution, true or
    reconstructed; the Bayes adversary who reads a row's set alone removes
    at least ``DETERMINES`` of the errors of the prior's guess,
    :func:`anonset.randomized.set_adversary.set_lambda`; or, at any p, gives
    the true value away for ``GIVEN_SHARE`` of the rows, the set's other
    values ones that nobody or few hold, :func:`~anonset.randomized.set_adversary.set_pins`;
    only where ``true``, the marginal the original's: a reconstructed one
    puts a rare value near nothing by chance on a small table, and the
    publisher measured the true counts already)."""
    from ..randomized.set_adversary import set_lambda, set_pins
    allowed = set(table.info.get("clear") or ())
    for name in table.names:
        par = table.params[name]
        if par.exact:
            continue
        named = (", as the user allowed" if name in allowed else
                 ", although the user did not name it as allowed in the clear")
        value = f"p={par.p:.6g}, eta={par.eta}"
        if par.p >= 1.0 and par.eta == 1 and par.d > 1:
            add("clear", name, "risk", value, "eta>1 or p<1",
                f"{name}: published in the clear (every set is the true value)" + named)
            continue
        lam = success = prior = float("nan")
        pins = 0.0
        # sets drawn without regard to the true value (l = d, p = 0): read
        # without the original, the column's "distribution" is the EM's
        # uniform start, whose largest share is no most common value's
        blind = ""
        if par.says_nothing and not true:
            blind = (f" ({'every set is the whole domain' if par.eta >= par.d else 'p = 0'}: "
                     "the sets carry no information about the column, and no estimate of "
                     "its distribution is possible from them)")
        if marginal is not None and par.d > 1 and not blind:
            lam, success, prior = set_lambda(marginal(name), par.p, par.eta)
            if true:
                pins = set_pins(marginal(name), par.eta, DETERMINES, par.p)
        if lam == lam and lam >= DETERMINES:
            add("clear", name, "risk", value, "eta>1 or p<1",
                f"{name}: published nearly in the clear (an adversary who knows the column's "
                f"distribution and reads a row's set names its true value for {success:.1%} of "
                f"the rows, against {prior:.1%} by the most common value alone)" + named)
        elif pins >= GIVEN_SHARE:
            add("clear", name, "risk", value, "eta>1 or p<1",
                f"{name}: some rows' values published nearly in the clear (for {pins:.1%} of "
                "the rows " + ("the set is the true value alone" if par.eta == 1 else
                               "every other value of the set is one that nobody or few hold")
                + ", and an adversary who knows the column's distribution reads the true "
                "value off the set)" + named)
        elif name in allowed:
            add("clear", name, "risk", value, "eta>1 or p<1",
                f"{name}: named as allowed in the clear at publishing" +
                (f" (the adversary who reads a row's set: {success:.1%} of the rows, against "
                 f"{prior:.1%} by the most common value alone)" if success == success else
                 blind))
        else:
            add("clear", name, "pass", value, "eta>1 or p<1",
                f"{name}: not published in the clear" +
                (f" (the adversary who reads a row's set alone: {success:.1%} of the rows, "
                 f"against {prior:.1%} by the most common value alone)"
                 if success == success else blind))


def clear_pair_risks(table, codes, add, *, others=None, recoded=()) -> None:
    """Sensitive columns that another's sets, read with theirs (and with
    the pass-through columns ``others``: codes over the same rows; not of
    the columns ``recoded``, whose pass-through risk is named), publish
    nearly in the clear (:func:`anonset.validate.set_pair_findings`, on the
    original's rows drawn as publishing draws them): a risk, named as
    allowed where the metadata's ``clear`` names the column."""
    from ..validate import set_pair_findings, set_pair_message
    allowed = set(table.info.get("clear") or ())
    seen = set()
    for f in set_pair_findings(table.schema.published, table.params, codes, others, recoded):
        if f["column"] in seen:
            continue
        seen.add(f["column"])
        named = (", as the user allowed" if f["column"] in allowed else
                 ", although the user did not name it as allowed in the clear")
        add("clear", f["column"], "risk", round(f["success"], 4), "eta>1 or p<1",
            f"{f['column']}: {set_pair_message(f, 'is published')}" + named)


def rare_risks(name, par, w, info, add) -> None:
    """A sensitive column whose domain was read off the data: that domain
    tells that each of its values is someone's, so a value that lies in
    fewer than L published sets (``w``: sets per value; L its l, or 2) points
    at its holders (1/c > 1/l).  Seen from the published table alone; the
    metadata's ``rare`` names the columns the user allowed (``allow_rare``)."""
    from ..randomized.rare import below
    top = below(par)
    w = np.asarray(w)
    few = (w >= 1) & (w < top)
    named = name in ((info or {}).get("rare") or {})
    allowed = " (published as the user allowed: allow_rare)" if named else ""
    if few.any():
        one = int((w == 1).sum())
        alone = f", {one:,} of them in one set alone" if one and top > 2 else ""
        add("rare", name, "risk", int(few.sum()), 0,
            f"{name}: {int(few.sum()):,} value(s) of the domain read off the data lie in fewer "
            f"than {top} sets{alone}; the domain tells that each is someone's, so those "
            f"{int(w[few].sum()):,} row(s) are pointed at (declare the domain)" + allowed)
    else:
        add("rare", name, "pass", 0, 0,
            f"{name}: every value of the domain read off the data lies in no set or in at "
            f"least {top}" + allowed)


def role_risks(table, add) -> None:
    """Columns the user called identifiers must not be published; list what
    passes through unchanged."""
    roles = table.info.get("roles") or {}
    published = set(table.schema.names)
    for col, role in roles.items():
        if role == "identifier" and col in published:
            add("roles", col, "risk", role, "not published",
                f"{col}: declared an identifier but published")
    other = [a.name for a in table.schema if a.role == "other"]
    exact = [a.name for a in table.schema if a.role == "exact"]
    if other:
        add("roles", "-", "info", ", ".join(other), None,
            f"published unchanged (pass-through): {', '.join(other)}")
    if exact:
        add("roles", "-", "info", ", ".join(exact), None,
            f"published exactly (QIDs declared exact): {', '.join(exact)}")


def _sampled(s) -> str:
    return "" if s.level == 0 else f" (estimated on 1/{2 ** s.level} of the distinct values)"


def foreign_cell_risks(cells: dict, add) -> None:
    """With the original: each pass-through column holds the original
    column's cells (``cells``: per column, the published cells and the
    original's, :class:`~anonset.audit.stats.CellSample` of
    :func:`~anonset.io.keys.cell_text_hashes`, which key a CSV's text and a
    Parquet number alike; :func:`~anonset.audit.stats.foreign_cells`).  A
    column whose cells were replaced (by another column's values, a
    sensitive one in the clear) is measured by the other checks on the
    original's column of that name, never on what was published (H121)."""
    from .stats import foreign_cells
    for col, (pub, org) in cells.items():
        got = foreign_cells(pub, org)
        if got is None:
            continue
        bad, frac, differs = got
        sampled = "" if frac == 1 else f" (estimated on 1/{round(1 / frac)} of the distinct values)"
        what = (f"{bad:,} of the {pub.rows:,} published cells are not the original column's "
                f"(values it does not hold, or holds fewer times){sampled}" if bad else
                f"the {pub.rows:,} published cells are not the original column's (the sums of "
                "their hashes differ; too few values sampled to count them)")
        add("passthrough_cells", col, "risk" if bad or differs else "pass", bad, 0,
            f"{col}: {what}: the column was not published as it is, and the checks of the "
            "original's column do not measure what it holds (another column's values, a "
            "sensitive value in the clear)" if bad or differs else
            f"{col}: every published cell is one of the original column's{sampled}")


def passthrough_risks(stats, add, allowed=frozenset(), ids_allowed=frozenset()) -> None:
    """Likely identifiers and recodes among the pass-through columns
    (``allowed``: columns whose recodes the user named, ``allow_recode``;
    ``ids_allowed``: those the user accepted to single rows out,
    ``allow_identifier``)."""
    for col, s in stats.ids.items():
        share = s.singleton_share()
        if math.isnan(share):
            continue
        st = "risk" if share >= IDENTIFIER_SHARE else "pass"
        add("identifier", col, st, round(share, 4), f"<{IDENTIFIER_SHARE:g}",
            f"{col}: {share:.1%} of the rows hold a value no other row has{_sampled(s)}" +
            ("; a likely identifier, published unchanged" if st == "risk" else "") +
            (_ALLOWED_ID if st == "risk" and col in ids_allowed else ""))
    for (col, sens), s in stats.pairs.items():
        lam, acc, prior = s.determination()
        if math.isnan(lam):
            continue
        st = "risk" if lam >= DETERMINES else "pass"
        add("recode", f"{col} -> {sens}", st, round(lam, 4), f"<{DETERMINES:g}",
            f"{col} -> {sens}: predicts {sens} for {acc:.1%} of the rows from the other rows "
            f"with the same value (the most common {sens} alone: {prior:.1%}), lambda "
            f"{lam:.3f}{_sampled(s)}" +
            (f"; it publishes {sens} nearly in the clear" if st == "risk" else "") +
            (_ALLOWED if st == "risk" and col in allowed else ""))
        if st == "risk":
            continue            # a whole recode says more
        share, groups = s.given_away()
        st = "risk" if share >= GIVEN_SHARE else "pass"
        add("given_away", f"{col} -> {sens}", st, round(share, 4), f"<{GIVEN_SHARE:g}",
            f"{col} -> {sens}: {groups} value(s) of {col} give {sens} away (their rows "
            f"share one {sens} so often that it removes at least {DETERMINES:.0%} of the errors "
            "of guessing from its share overall) "
            f"for {share:.1%} of the rows{_sampled(s)}" +
            (f"; it publishes those rows' {sens} nearly in the clear" if st == "risk" else "") +
            (_ALLOWED if st == "risk" and col in allowed else ""))


def order_and_joint_risks(stats, add, allowed=frozenset()) -> set:
    """Columns published as they are whose order recodes a sensitive column
    (a row per column and attribute), two such columns that recode one
    together, and one or two that narrow a p = 1 attribute so far that its
    sets give it away (a row where they do), as publishing measures them:
    the order and the pairs on the original's rows drawn at random, the
    sets over every row; returns what was measured
    (:func:`recorded_recode_risks` leaves those to this)."""
    measured = set()
    if not hasattr(stats, "sample_measures"):
        return measured
    order, joint, drawn = stats.sample_measures()
    whole = {k for k, s in stats.pairs.items() if s.determination()[0] >= DETERMINES}
    on = (f" (on {drawn:,} rows drawn at random from the original's "
          f"{stats.original_rows:,})" if stats.original_rows > drawn else "")
    follows = {k: rho for k, rho in order.monotone().items() if abs(rho) >= DETERMINES}
    for (col, sens), (lam, agree, prior, sig) in order.agreement().items():
        measured.add(("order", col, sens))
        if (col, sens) in whole:
            continue                    # its values already give it: one row says it
        st = "risk" if sig and lam >= DETERMINES else "pass"
        if st == "pass" and (col, sens) in follows:
            # few rows agree with their neighbours, but the order is the value's
            rho = follows[(col, sens)]
            add("order_recode", f"{col} -> {sens}", "risk", round(abs(rho), 4),
                f"<{DETERMINES:g}",
                f"{col} -> {sens}: the order of {col} follows {sens} (rank correlation "
                f"{rho:.3f}){on}; it gives each row's rank in {sens}, and so publishes {sens} "
                "nearly in the clear (whoever sorts the published values of a set, a bucket "
                "or a class by it reads each row's)" + (_ALLOWED if col in allowed else ""))
            continue
        add("order_recode", f"{col} -> {sens}", st, round(lam, 4), f"<{DETERMINES:g}",
            f"{col} -> {sens}: sorted by {col}, {agree:.1%} of adjacent rows hold the same "
            f"{sens} (the most common {sens} alone: {prior:.1%}), lambda {lam:.3f}" +
            (f" (on {drawn:,} rows drawn at random from the original's "
             f"{stats.original_rows:,})" if stats.original_rows > drawn else "") +
            (f"; rows next to each other in its order share their {sens}, so it publishes "
             f"{sens} nearly in the clear" if st == "risk" else "") +
            (_ALLOWED if st == "risk" and col in allowed else ""))
    # with the sets' sizes: one column or two that narrow a p = 1 attribute
    # so far that its sets give it away (as publishing measures it)
    params = getattr(stats, "params", None) or {}
    cands = [((c,), t, s) for (c, t), s in stats.pairs.items()] + \
        [(ab, t, s) for (ab, t), s in joint.items()]
    for cols, sens, s in cands if params else ():
        par = params.get(sens)
        if par is None or par.p < 1.0 or not 1 < par.eta < par.d:
            continue
        measured.add(("set", *sorted(cols), sens))
        if any((c, sens) in whole for c in cols):
            continue
        lam, with_, alone = set_lambda(s, par.d, par.eta)
        if lam >= DETERMINES and (len(cols) == 1 or s.determination()[0] < DETERMINES):
            add("set_recode", f"{'+'.join(cols)} -> {sens}", "risk", round(lam, 4),
                f"<{DETERMINES:g}",
                f"{'+'.join(cols)} -> {sens}: whoever reads {' and '.join(cols)} and a row's "
                f"{par.eta}-set names the row's {sens} for {with_:.1%} of the rows (from the set "
                f"alone: {alone:.1%}), lambda {lam:.3f}; it publishes {sens} nearly in the clear"
                + (_ALLOWED if set(cols) <= set(allowed) else ""))
    # two columns of numbers that give a target by a linear rule (as
    # publishing measures it: PassThroughCheck._rule_findings)
    ruled = set()
    if hasattr(stats, "rule_inputs"):
        helpers, targets, k = stats.rule_inputs()
        alone = {}
        for (col, sens), s in stats.pairs.items():
            lam = s.determination()[0]
            if lam == lam and lam >= DETERMINES:
                alone.setdefault(sens, []).append({"column": col, "check": "recode",
                                                   "value": lam})
        for (col, sens), (lam, _, _, sig) in order.agreement().items():
            if sig and lam >= DETERMINES:
                alone.setdefault(sens, []).append({"column": col, "check": "order_recode",
                                                   "value": lam})
        # every rule of these columns is measured here (recorded ones of
        # other columns, or of a binned target, are read from the metadata)
        measured |= {("rule", t) for t in targets}
        for r in rule_recodes(helpers, targets, alone):
            cols, sens, lam = r["columns"], r["target"], r["lambda"]
            ruled.add((frozenset(cols), sens))
            rows = "the rows" if r["share"] >= 0.995 else \
                f"the {r['share']:.1%} of the rows where every one " + \
                ("is positive" if r["positive"] else "holds a number")
            label = "+".join(cols)
            add("recode", f"{label} -> {sens}", "risk", round(lam, 4), f"<{DETERMINES:g}",
                f"{label} -> {sens}: together they give {sens} by a rule ({r['rule']}), its "
                f"value for {r['accuracy']:.1%} of {rows} (the most common {sens} alone: "
                f"{r['prior']:.1%}), lambda {lam:.3f}"
                + (f" (on {k:,} rows drawn at random from the original's "
                   f"{stats.original_rows:,})" if stats.original_rows > k else "")
                + f"; they publish {sens} nearly in the clear"
                + (_ALLOWED if set(cols) <= set(allowed) else ""))
    for ((a, b), sens), s in joint.items():
        measured.add(("joint", *sorted((a, b)), sens))
        if (frozenset((a, b)), sens) in ruled:
            continue                    # named above, by its rule (H32: twice)
        lam, acc, prior = s.determination()
        # beside a column that recodes it alone, as publishing measures it:
        # where together they remove half the errors it leaves (H32)
        alone = [stats.pairs[(c, sens)].determination()[0] for c in (a, b)
                 if (c, sens) in whole]
        if alone and not 1.0 - lam < (1.0 - max(alone)) / 2:
            continue
        if lam == lam and lam >= DETERMINES:
            add("recode", f"{a}+{b} -> {sens}", "risk", round(lam, 4), f"<{DETERMINES:g}",
                f"{a}+{b} -> {sens}: together they predict {sens} for {acc:.1%} of the rows "
                f"from the other rows with the same pair of values (the most common {sens} "
                f"alone: {prior:.1%}), lambda {lam:.3f}; they publish {sens} nearly in the clear"
                + (_ALLOWED if {a, b} <= set(allowed) else ""))
    return measured


#: Which rows publishing measured a recode on.
_ROWS_READ = f"on {SAMPLE_ROWS:,} of its rows drawn at random at most"


def measured_recode_risks(found, as_is, allowed, add) -> set:
    """The findings of :func:`anonset.passthrough.passthrough_findings` made
    on the original by an audit (a partition release's columns published
    as they are, ``as_is``): a risk row per recode, measured now, and a
    pass row per column that recodes nothing; returns what was measured
    (:func:`recorded_recode_risks` leaves those to this)."""
    measured, hit = set(), set()
    for f in found:
        check = f.get("check")
        if check in (None, "identifier"):
            continue
        cols = columns_of(f)
        hit.update(cols)
        named = _ALLOWED if set(cols) <= set(allowed) else ""
        target = target_of(f)
        label = "+".join(cols)
        if check == "given_away":
            for sens, share in zip(f["sensitive"], f["value"]):
                measured.add((f["column"], sens))
                add("given_away", f"{label} -> {sens}", "risk", round(float(share), 4),
                    f"<{GIVEN_SHARE:g}", f"{f['message']} (measured with the original)" + named)
            continue
        key = {"recode": (f["column"], target) if len(cols) == 1 else
               ("joint", *sorted(cols), target),
               "order_recode": ("order", f["column"], target),
               "set_recode": ("set", *sorted(cols), target),
               "qi_recode": ("qi", *sorted(cols), target)}.get(check)
        if key is not None:
            measured.add(key)
        add(check, f"{label} -> {target}", "risk", round(float(f["value"]), 4),
            f"<{DETERMINES:g}", f"{f['message']} (measured with the original)" + named)
    for c in as_is:
        if c not in hit:
            add("recode", c, "pass", None, f"<{DETERMINES:g}",
                f"{c}: measured with the original, it recodes no attribute of the release "
                "(by its values, its order, or with another column)")
    return measured


def recorded_recode_risks(info, measured, add) -> None:
    """Recodes found at publishing (``info['pass_through_risks']``, on rows
    drawn at random) that this audit did not measure itself (it measures a recode
    only with the original data): named, so that an audit of the release
    alone shows them too."""
    for f in info.get("pass_through_risks") or ():
        named = _ALLOWED if f.get("allowed") else ""
        if f.get("check") == "series":
            # a column of an earlier release of the series that publishing
            # could not measure beside this release's (the user named it)
            add("series", f["column"], "risk", None, "measured",
                f"{f['column']}: {f.get('why', 'not measured')}; the series' sets link this "
                "release's rows to that release's" + named)
            continue
        if f.get("series"):
            # read beside columns an earlier release of the series published
            named = (f" ({', '.join(map(str, f['series']))}: published by an earlier release "
                     "of the series, whose rows this release's sets link to)" + named)
        if f.get("check") == "qi_recode":
            col, qi, lam = "+".join(columns_of(f)), f["qi"], float(f["value"])
            if ("qi", *sorted(columns_of(f)), qi) in measured:
                continue
            add("qi_recode", f"{col} -> {qi}", "risk", round(lam, 4), f"<{DETERMINES:g}",
                f"{col} -> {qi}: lambda {lam:.3f}, measured on the original when the release "
                f"was made ({_ROWS_READ}); published beside the "
                f"generalized QI {qi}, it gives {qi} at its exact values, and whoever knows a "
                "person's QIs finds their row inside its group" + named)
            continue
        if f.get("check") == "set_recode":
            cols, sens, lam = columns_of(f), f["sensitive"], float(f["value"])
            if ("set", *sorted(cols), sens) in measured:
                continue
            add("set_recode", f"{'+'.join(cols)} -> {sens}", "risk", round(lam, 4),
                f"<{DETERMINES:g}",
                f"{'+'.join(cols)} -> {sens}: whoever reads {' and '.join(cols)} and a row's set "
                f"names the row's {sens} for {float(f.get('success', float('nan'))):.1%} of the "
                f"rows (lambda {lam:.3f} against the set alone), measured on the original when "
                f"the release was made ({_ROWS_READ}); it publishes "
                f"{sens} nearly in the clear" + named)
            continue
        if f.get("check") == "order_recode":
            col, lam = f["column"], float(f["value"])
            target = f.get("sensitive", f.get("qi"))
            if ("order", col, target) in measured:
                continue
            add("order_recode", f"{col} -> {target}", "risk", round(lam, 4), f"<{DETERMINES:g}",
                f"{col} -> {target}: sorted by {col}, adjacent rows hold the same {target} "
                f"(lambda {lam:.3f}), measured on the original when the release was made "
                f"({_ROWS_READ}); the sets of a run of rows in that order "
                f"intersect to their value, so it publishes {target} nearly in the clear" + named)
            continue
        if f.get("check") == "given_away":
            col = f["column"]
            for sens, share in zip(f["sensitive"], f["value"]):
                if (col, sens) in measured:
                    continue
                add("given_away", f"{col} -> {sens}", "risk", round(float(share), 4),
                    f"<{GIVEN_SHARE:g}",
                    f"{col} -> {sens}: values of {col} give {sens} away for {float(share):.1%} "
                    f"of the rows, measured on the original when the release was made "
                    f"({_ROWS_READ}); it publishes those rows' {sens} "
                    "nearly in the clear" + named)
            continue
        if f.get("check") != "recode":
            continue
        key = (f["column"], f["sensitive"]) if not f.get("with") else \
            ("rule", f["sensitive"]) if f.get("rule") else \
            ("joint", *sorted(columns_of(f)), f["sensitive"])
        if key in measured:
            continue
        col, sens, lam = "+".join(columns_of(f)), f["sensitive"], float(f["value"])
        how = f" by a rule ({f['rule']})" if f.get("rule") else ""
        add("recode", f"{col} -> {sens}", "risk", round(lam, 4), f"<{DETERMINES:g}",
            f"{col} -> {sens}{how}: lambda {lam:.3f}, measured on the original when the release "
            f"was made ({_ROWS_READ}); it publishes {sens} nearly in the "
            "clear" + named)


def allowed_recodes(info) -> set:
    """Columns whose recodes the release published because the user named
    them (``allow_recode``)."""
    return {c for f in (info or {}).get("pass_through_risks") or ()
            if f.get("allowed") and f.get("check") != "identifier" for c in columns_of(f)}


def allowed_identifiers(info) -> set:
    """Pass-through columns that single rows out which the release published
    because the user named them (``allow_identifier``)."""
    return {f["column"] for f in (info or {}).get("pass_through_risks") or ()
            if f.get("allowed") and f.get("check") == "identifier"}


def name_list(names, most: int = 8) -> str:
    """Column names for a message: all of them up to ``most``, else the first
    ``most`` and how many more (the check's attribute field keeps them all).

    Examples
    --------
    >>> name_list(["a", "b"]), name_list([f"q{i}" for i in range(12)], most=3)
    ('a, b', 'q0, q1, q2 and 9 more')
    """
    names = list(names)
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[:most]) + f" and {len(names) - most} more"


def exact_qid_risks(stats, info, add, model=None) -> None:
    """Exact QIDs and pass-through columns whose combination singles out
    rows: linkable across releases, so fresh keys per release let the sets
    be intersected."""
    s = getattr(stats, "qid_tuples", None)
    if s is None:
        return
    share = s.singleton_share()
    if math.isnan(share):
        return
    names = list(getattr(stats, "linking", stats.exact))
    cols = ", ".join(names)
    persistent = info.get("key") == "persistent"
    st = "pass" if share == 0 or persistent else "warn"
    # any share above 0 warns, so a tiny one must not read as "0.0%"
    pct = "under 0.1%" if 0 < share < 0.0005 else f"{share:.1%}"
    msg = (f"{name_list(names)}: {pct} of the rows hold a combination no other row "
           f"has{_sampled(s)}")
    if st == "warn":
        msg += ("; whoever knows a person's values finds their row in every release, so "
                "releases drawn with different keys (or under one key from a changed or "
                "reordered table) intersect to the true values")
        if (model or {}).get("name") == "semantic":
            msg += (" (semantic-anonymize has no persistent key: publish these records once, "
                    "or coarsen or drop the columns that single them out)")
        else:
            msg += (" (keep one key file and name a record id for every release: "
                    "docs/security.md)")
    elif share > 0:
        msg += "; the key is persistent, so every release gives these rows the same sets"
    add("repeat", cols, st, round(share, 4), "persistent key" if share else None, msg)


def shared_id_risks(info, add, model=None, whole=()) -> None:
    """Identifier values that several rows share (files from before the
    count was recorded have none to check); ``shared_ids_allowed`` names the
    columns the user declared to be different people's (``allow_shared_id``).
    ``whole``: columns whose every set is their whole domain, whose changed
    values (``changed_records``) tell nothing (H73, H74)."""
    whole = set(whole)
    shared = info.get("shared_ids")
    if shared is None:
        return
    if not shared:
        add("shared_id", "-", "pass", 0, 0, "identifiers: no value is held by two rows")
        return
    persistent = info.get("key") == "persistent"
    record_id = info.get("record_id")        # named since 2026-11; None before
    named = set(info.get("shared_ids_allowed") or ())
    for col, rows in shared.items():
        msg = f"{col}: {rows:,} rows share a value with another row"
        allowed = " (published as the user allowed: allow_shared_id)" if col in named else ""
        if persistent and record_id is not None and col != record_id:
            # other records by the user's declaration (a household), or one
            # person's rows tied to the wrong column (a visit number)
            add("shared_id", col, "warn", rows, f"record id {record_id}", msg + "; the record "
                f"id is {record_id}, so these rows were drawn as different records: if they "
                "are one person's (panel waves, visits), their sets intersect toward the "
                f"person's true values (name {col} as the record id: docs/security.md)"
                + allowed)
        elif persistent:
            changed = {c: k for c, k in (info.get("changed_records") or {}).items()
                       if c not in whole}
            if changed:
                # one record's rows with another value: that value's sets
                # were drawn independently, linked by the unchanged ones (H65)
                moved = ", ".join(f"{c} ({k:,} records)" for c, k in changed.items())
                add("shared_id", col, "risk", rows, "persistent key", msg + "; the key is "
                    "persistent, so the rows of one record get one set per value, but some "
                    f"records' rows hold different values of {moved}: each value's sets were "
                    "drawn apart, the record's other sets link its rows, and whoever knows how "
                    "a value moved intersects them toward the true value"
                    + " (published as the user allowed: allow_clear)")
                continue
            add("shared_id", col, "pass", rows, "persistent key", msg + "; the key is "
                "persistent, so the rows of one record get one set per value")
        else:
            # a model with a name is not of the random-set family (semantic, a
            # partition release), which has no persistent key
            method = (model or {}).get("name")
            remedy = (f"{method} releases have no persistent key: publish one row per person"
                      if method else
                      "a key file and the person's id as record id give them one set per value")
            how = ("a group of k rows may hold fewer than k people, and the groups that hold "
                   "one person's rows narrow down the person's values" if method == "partition"
                   else "their sets were drawn independently and intersect toward the "
                   "person's true values wherever the rows can be linked")
            add("shared_id", col, "warn", rows, "persistent key", msg + "; if such rows are "
                f"one person's (panel waves, visits), {how} ({remedy}: docs/security.md)"
                + allowed)


def changed_value_risks(stats, info, add) -> None:
    """Records of a persistent-key release whose rows hold more than one
    value of a randomized column, counted on the original where it holds
    the record id column (:meth:`AuditStats.changed_records`, on the records
    sampled by their id): each value drew its sets apart, linked by the
    record's other sets (H65).  A risk, named as allowed where the metadata
    counted the column (``changed_records``: publishing refuses it unless
    ``allow_clear`` names it)."""
    rid = info.get("record_id")
    named = set(info.get("changed_records") or ())
    params = getattr(stats, "params", None) or {}
    for name in getattr(stats, "moves", {}):
        if name in params and params[name].eta >= params[name].d:
            continue            # every set its whole domain, however its values move (H73)
        got = stats.changed_records(name)
        if got is None:
            continue
        k, m, frac = got
        of = f"{m:,} records" + ("" if frac >= 1 else
                                 f" sampled by their id (1 in {round(1 / frac):,})")
        if not k:
            add("shared_id", name, "pass", 0, 0,
                f"{name}: none of {of} holds two values of it in its rows (record id {rid!r})")
            continue
        add("shared_id", name, "risk", k, 0,
            f"{name}: {k:,} of {of} hold different values of it in their rows (record id "
            f"{rid!r}): each value's sets were drawn apart, the record's other sets link its "
            "rows, and whoever knows how the value moved intersects them toward the true value"
            + (" (published as the user allowed: allow_clear)" if name in named else
               ", although the release does not name it (published before anonset refused "
               "it, or its metadata edited)"))


def attack_risks(att, add) -> None:
    """One row per attacked attribute: a risk where the adversary beats the
    model's bound and the prior alone."""
    for r in att.summary.itertuples():
        how = "right on" if r.success_measured else "estimated right on"
        base = (f"{r.attribute}: the adversary is {how} {r.success:.1%} of {r.victims} "
                f"victims (prior alone {r.prior_only:.1%}); the model promises ")
        if math.isnan(r.model_bound):
            add("attack", r.attribute, "info", round(r.success, 4), None,
                base + "no bound for this attribute")
            continue
        why, status = "", "risk" if r.risk else "pass"
        if r.risk:
            why = "; the publication lets it beat both"
        elif r.model_bound >= 1.0:
            gain = r.success - r.prior_only
            margin = getattr(r, "margin", 0.0)
            if gain > (margin if margin == margin else 0.0):
                status = "warn"
                why = (f"; a bound of 100% promises nothing for this attribute (t / delta >= 1), "
                       f"and the publication lets the adversary beat the prior alone by "
                       f"{gain:.1%} (a t below the one the bound names bounds it)")
            else:
                why = ("; a bound of 100% promises nothing for this attribute (t / delta >= 1); "
                       "the adversary does no better than the prior alone")
        elif r.success > r.model_bound:
            why = ("; above the bound, but no better than a guess from the prior alone (the "
                   "most common value is held by more than the bound): the publication adds "
                   "nothing the prior did not give")
        add("attack", r.attribute, status, round(r.success, 4), round(r.model_bound, 4),
            base + f"at most {r.model_bound:.1%} ({r.bound})" + why)
