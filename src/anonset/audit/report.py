"""The audit of a published SetTable (papers 000, 004 and 001) and its
report: two separate verdicts, "conforms to the declared model" and "risks
found", and PASSED only when the table conforms and no risk was found.

:func:`audit` runs every check the available information allows -- the
published table alone (what an analyst can verify) or with the original data
(what the data holder can verify) -- on a table in memory; the same sections
run on a file, chunk by chunk, in :func:`anonset.audit.audit_file`.  The
sections (:func:`model_sections`, :func:`holder_sections`,
:func:`risk_sections`) read what they need from :class:`~anonset.audit.stats.
AuditStats`, so both paths report the same rows for the same rows of data.

Examples
--------
>>> import pandas as pd, anonset
>>> df = pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")})
>>> domains = {"a": list("wxyz"), "b": list("uvw")}
>>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"], domains=domains)
>>> rep = audit(pub, df)
>>> rep.conforms, rep.verdict
(True, 'PASSED')
>>> weak = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"], domains=domains,
...                        seed=3, research_seed=True)
>>> audit(weak, df).verdict                 # a research seed is guessed at once
'RISKS FOUND'
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._typing import PathLike, Seed, TableLike
from ..randomized.closeness_search import worst_emd
from ..randomized.params import ground_object
from ..randomized.settable import SetTable
from ..schema import Schema
from ..validate import InputError, check_n_classes, release_sample_seed, row_name
from . import risks as _risks
from .attack import AttackResult, attack as run_attack, reconstructed_marginal
from .checks import (CheckResult, audit_classes, closeness_result, codes_of, declared_target,
                     source_rows)
from .classes import class_counts, lazy_membership, record_class_stats
from .declared import metadata_checks, param_checks
from .ldp import epsilon_table
from .stats import AuditStats, mask_hashes

__all__ = ["AuditReport", "audit", "Options"]

_TOL = 1e-9
_COLUMNS = ["check", "attribute", "status", "value", "expected", "message"]


@dataclass
class AuditReport:
    """Outcome of :func:`audit` and :func:`~anonset.audit.audit_file`.

    Attributes
    ----------
    checks : DataFrame
        One row per check: check, attribute, status, value, expected,
        message.  Status: 'pass'; 'fail' (the table does not conform to its
        declared model); 'risk' (a risk the model does not cover);
        'unverified' (cannot be decided with the information given); 'warn'
        and 'info' (worth knowing, no verdict).
    diversity, anonymity, closeness : CheckResult or None
    classes : DataFrame or None
        Data holder only: exact diversity of the equivalence classes keyed by
        sampled records' true values.
    attack : AttackResult or None
    with_data : bool
    epsilon : DataFrame or None
        Local differential privacy epsilon per randomized attribute
        (:func:`anonset.audit.ldp.epsilon_table`).
    facts : dict
        What was audited: rows, how (memory or chunks), alignment.
    """

    checks: pd.DataFrame
    diversity: CheckResult | None = None
    anonymity: CheckResult | None = None
    closeness: CheckResult | None = None
    classes: pd.DataFrame | None = None
    attack: AttackResult | None = None
    with_data: bool = False
    epsilon: pd.DataFrame | None = None
    facts: dict = field(default_factory=dict)

    def _where(self, status) -> list:
        return self.checks.loc[self.checks["status"] == status, "message"].tolist()

    def _grouped(self, status) -> list:
        """The messages of one status, those of one check that say the same
        of several attributes ("a: the domain was inferred ...") said once
        for all of them, in the order they first occur."""
        from .risks import name_list
        rows = self.checks.loc[self.checks["status"] == status]
        groups: dict = {}          # (check, text after "attr: " or the whole message) -> attrs
        for check, attr, msg in zip(rows["check"], rows["attribute"], rows["message"]):
            head = f"{attr}: "
            if isinstance(attr, str) and attr != "-" and msg.startswith(head):
                groups.setdefault((check, msg[len(head):]), []).append(attr)
            else:
                groups.setdefault((check, msg), [])
        return [f"{name_list(attrs)}: {text}" if attrs else text
                for (_, text), attrs in groups.items()]

    @property
    def conforms(self) -> bool:
        """True when no check of the declared model failed."""
        return not bool((self.checks["status"] == "fail").any())

    @property
    def risks(self) -> list:
        """Messages of the risks found (empty when none)."""
        return self._where("risk")

    @property
    def failures(self) -> list:
        """Messages of the failed checks of the model."""
        return self._where("fail")

    @property
    def ok(self) -> bool:
        """PASSED: the table conforms to its declared model and no risk was
        found (what ``anonset audit``'s exit code 0 means)."""
        return self.conforms and not self.risks

    @property
    def verdict(self) -> str:
        """'PASSED', 'RISKS FOUND' (conforms, but risks) or 'FAILED'."""
        if not self.conforms:
            return "FAILED"
        return "RISKS FOUND" if self.risks else "PASSED"

    def to_frame(self) -> pd.DataFrame:
        return self.checks.copy()

    def _repr_html_(self) -> str:
        from .._html import card
        facts = {"verdict": self.verdict,
                 "conforms to the declared model": "yes" if self.conforms else "NO",
                 "rows": f"{self.facts.get('rows', 0):,}",
                 "with the original data": "yes" if self.with_data else "no"}
        notes = [f"RISK: {m}" for m in self.risks] + [f"FAIL: {m}" for m in self.failures]
        tables = [("checks", self.checks[["check", "attribute", "status", "value", "expected"]])]
        if self.epsilon is not None and len(self.epsilon):
            tables.append(("local differential privacy", self.epsilon))
        return card("anonset audit", facts, tables, notes)

    def _headline(self) -> list:
        f = self.facts
        what = "with the original data" if self.with_data else "published table only"
        how = f"; {f['how']}" if f.get("how") else ""
        counts = self.checks["status"].value_counts()
        model_rows = self.checks[~self.checks["check"].isin(_RISK_CHECKS)]["status"]
        c = model_rows.value_counts()
        detail = ", ".join(f"{int(c[k])} {k}" for k in ("pass", "fail", "unverified", "warn")
                           if k in c)
        # a check that cannot be decided is not a pass (H34: "yes" beside a
        # t-closeness bound above t)
        said = "NO" if not self.conforms else "yes" if "unverified" not in c else \
            "yes, as far as it could be checked"
        lines = [f"anonset audit of {f.get('rows', 0):,} rows ({what}{how}): {self.verdict}",
                 f"  conforms to the declared model: {said} ({detail})",
                 f"  risks found: {len(self.risks) if self.risks else 'none'}"]
        for st in ("risk", "fail", "warn", "unverified"):
            for m in self._grouped(st):
                lines.append(f"  {st.upper():10s} {m}")
        lines.append("  all rows: " + ", ".join(f"{int(v)} {k}" for k, v in counts.items()))
        if self.attack is None and self.with_data and \
                not (self.checks["check"] == "attack").any():
            # the verdict covers the model and the risks checked; a Bayesian
            # adversary's prior can beat 1/l where a value is common (a
            # partition release's audit runs its attack every time: its rows
            # are there)
            lines.append("  not run: the attack simulation (`audit(..., attack=True)` in Python, "
                         "`--attack` on the command line), which measures how often an "
                         "adversary with a prior guesses a value; `anonset report` runs it")
        return lines

    def to_text(self, every: bool = True, hint: str = "") -> str:
        """The report in words: the verdict lines first, then every check (or,
        with ``every=False``, those that did not pass, and how many did:
        ``hint`` says where the rest are), the epsilon of each attribute and
        the attack table with its legend."""
        lines = self._headline()
        cols = ["check", "attribute", "status", "value", "expected"]
        shown = self.checks if every else self.checks[self.checks["status"] != "pass"]
        hidden = len(self.checks) - len(shown)
        with pd.option_context("display.width", 160, "display.max_columns", 30,
                               "display.max_colwidth", 60,
                               "display.float_format", "{:.4g}".format):
            # to_string takes no width from the options: a cell naming 150
            # columns would widen every row of the table to its length
            if len(shown):
                lines += ["", shown[cols].to_string(index=False, max_colwidth=60)]
            if hidden:
                lines += ["", f"{hidden} check{'s' if hidden > 1 else ''} passed, not listed"
                          + (f" ({hint})" if hint else "")]
            if self.epsilon is not None and len(self.epsilon):
                lines += ["", "local differential privacy of each attribute's sets (epsilon: "
                          "every set is at most e^epsilon times likelier under one true value "
                          "than under another; inf: not differentially private):",
                          self.epsilon[["attribute", "mechanism", "p", "eta", "d", "epsilon"]]
                          .to_string(index=False, max_colwidth=60, na_rep="-")]
            if self.attack is not None and len(self.attack.summary):
                s = self.attack.settings
                cols = ["attribute", "victims", "model_bound", "success", "prior_only",
                        "conf_mean", "conf_median", "conf_max", "above_bound", "shift_max",
                        "risk"]
                lines += ["", f"attack: a Bayesian adversary who found each victim's row and "
                          f"knows {s['known']} of its attributes, with the {s['prior']} prior "
                          f"({s['prior_source']}), {s['n_targets']} victims:",
                          self.attack.summary[cols].to_string(index=False, max_colwidth=60),
                          "bound:"]
                # the bound's source is a sentence: one line per attribute
                lines += [f"  {a}: {b}" for a, b in
                          zip(self.attack.summary["attribute"], self.attack.summary["bound"])]
                lines += ["columns:", self.attack.explain(cols)]
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def plot(self, path: PathLike | None = None, ax: Any = None) -> Any:
        """The attack's confidence plot (see :meth:`AttackResult.plot`)."""
        if self.attack is None:
            raise InputError("no attack simulation in this report",
                             expected="an audit run with {@attack=True}")
        return self.attack.plot(path=path, ax=ax)


_RISK_CHECKS = ("key", "row_order", "clear", "roles", "identifier", "recode", "given_away",
                "qi_recode", "order_recode", "set_recode", "rare", "repeat", "shared_id",
                "attack", "epsilon", "suppressed", "homogeneous", "series", "passthrough_cells")


class Rows(list):
    """The report's rows, added by every section."""

    def add(self, check, attribute, status, value, expected, message) -> None:
        self.append({"check": check, "attribute": attribute, "status": status,
                     "value": value, "expected": expected, "message": message})

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self), columns=_COLUMNS)


@dataclass
class Options:
    """What the audit of one publication works with (resolved once)."""

    missing: str = "error"
    aligned: bool = True
    passthrough: tuple = ()
    semantic: tuple | None = None
    z_max: float = 4.0
    closeness_margin: float = 0.01
    #: the publisher left the rows with a missing cell out (missing='drop'):
    #: the original's such rows are left out before it is compared
    drop: bool = False
    #: the publisher made the columns it names text with a missing-value
    #: token (semantic diversity's missing='category': ``info['missing']``):
    #: the original's are made so before it is compared
    category: dict | None = None

    @classmethod
    def resolve(cls, table, *, missing=None, aligned=None, z_max=4.0, closeness_margin=0.01):
        """``missing`` defaults to the publication's policy, ``aligned`` to
        True unless the rows were shuffled."""
        from ..validate import check_real
        z_max = check_real(z_max, "z_max", positive=True)
        closeness_margin = check_real(closeness_margin, "closeness_margin", minimum=0,
                                      maximum=1)
        info = table.info
        if missing is None:
            recorded = info.get("missing")
            missing = (recorded.get("policy", "error") if isinstance(recorded, dict)
                       else recorded or "error")
        if missing not in ("error", "category", "drop"):
            raise InputError(f"got {missing!r}", param="missing",
                             expected="'error', 'category' or 'drop'")
        drop = missing == "drop"
        if drop:            # the rows kept have no missing cell
            missing = "error"
        if aligned is not None:
            from ..validate import check_bool
            aligned = check_bool(aligned, "aligned")
        if aligned is None:       # in memory right after publishing, the shuffle is known
            aligned = info.get("row_order") != "shuffled" or \
                getattr(table, "source_rows", None) is not None
        semantic = None
        if (table.model or {}).get("name") == "semantic":
            from ..randomized.semantic import SemanticDistance
            m = table.model
            sa = m["sensitive"]
            semantic = (sa, SemanticDistance.from_dict(m["distance"], table.schema[sa]),
                        int(m["l"]), float(m["d"]))
        other = tuple(a.name for a in table.schema if a.role == "other")
        from ..validate import filled_as_text
        category = filled_as_text(info.get("missing"))
        return cls(missing, bool(aligned), other, semantic, z_max, closeness_margin, drop,
                   category)

    def kept(self, original, names, *, file=None):
        """The original's rows the publication holds: all of them, or those
        with a value in every published column where the publisher left the
        others out (missing='drop')."""
        if original is None or not (self.drop or self.category):
            return original
        from ..io.tables import as_frame
        from ..validate import apply_missing, as_published
        if self.category:
            return as_published(as_frame(original), self.category)
        return apply_missing(as_frame(original), names, "drop", file=file)[0]

    def pairs(self, table, columns) -> list:
        """(column published as it is, sensitive attribute) pairs the
        original allows: pass-through columns and exact QIDs (paper 004),
        either of which may recode a sensitive column."""
        sens = [n for n in table.names if not table.params[n].exact]
        exact = [n for n in table.names if table.params[n].exact]
        return [(c, s) for c in [*self.passthrough, *exact] if c in set(columns) for s in sens]


# ------------------------------------------------------------- sections
def model_sections(table, stats: AuditStats, rows: Rows, opts: Options) -> None:
    """Metadata, domains, set sizes, parameters (before the class checks)."""
    metadata_checks(table, rows.add)
    for a in table.schema.published:
        name, par = a.name, table.params[a.name]
        if stats.stray[name]:
            rows.add("domain", name, "fail", stats.stray[name], 0, f"{name}: {stats.stray[name]} "
                     f"set(s) hold values outside the domain of {a.d} values")
        elif a.inferred and par.exact:
            # the column's values are published as they are: its domain
            # shows nothing they do not
            rows.add("domain", name, "pass", "inferred", "declared, or exact",
                     f"{name}: the domain was read off the data; the column is published "
                     "exactly, so the domain shows nothing its values do not")
        elif a.inferred:
            rows.add("domain", name, "warn", "inferred", "declared", f"{name}: the domain was "
                     "inferred from the data, so it reveals which values occur (declare it)")
            if par.p >= 1.0:        # every holder's set holds its value
                _risks.rare_risks(name, par, stats.w[name], table.info, rows.add)
        else:
            rows.add("domain", name, "pass", a.d, a.d, f"{name}: declared domain of {a.d} values")
        bad = stats.wrong_size[name]
        if bad:
            row, size = stats.first_wrong[name]
            rows.add("set_size", name, "fail", f"{bad} rows", f"|R|={par.eta}",
                     f"{name}: {bad} set(s) do not have eta = {par.eta} values (first at "
                     f"{row_name(row)}, size {size})")
        else:
            rows.add("set_size", name, "pass", par.eta, par.eta,
                     f"{name}: all {stats.n} sets have eta = {par.eta} values")
    if opts.semantic is not None:
        sa, _, l, d = opts.semantic
        bad = stats.semantic_bad
        rows.add("semantic", sa, "fail" if bad else "pass", bad, 0,
                 f"{sa}: {bad} set(s) are not {l} values pairwise at least {d:g} apart "
                 "(Definition 1)" if bad else
                 f"{sa}: every set holds {l} values pairwise at least {d:g} apart (Definition 1)")
    param_checks(table, rows.add)


def wants_classes(table) -> tuple:
    """(diversity to check, anonymity to check) from the declared parameters."""
    div = any(table.params[n].l is not None for n in table.names)
    an = any(declared_target(table.params, n, "k") not in (None, 1)
             for n in table.names if not table.params[n].exact)
    return div, an


def class_sections(div, an, rows: Rows) -> None:
    for res, what in ((div, "diversity"), (an, "anonymity")):
        if res is None:
            continue
        key, bound = ("l", "bound_l") if what == "diversity" else ("k", "bound_k")
        for r in res.report.itertuples():
            target = getattr(r, key)
            if target is None or (isinstance(target, float) and math.isnan(target)):
                continue
            rows.add(what, r.attribute, "pass" if r.ok else "fail", getattr(r, bound), target,
                     r.message)


def closeness_section(table, stats: AuditStats, rows: Rows, opts: Options, with_data: bool):
    """Closeness with the true A_j (data holder), else the bound for every A
    and an estimate from the published sets."""
    has_t = any(table.params[n].t is not None and not math.isinf(float(table.params[n].t))
                for n in table.names if not table.params[n].exact)
    if not has_t:
        return None
    clo = closeness_result(table, stats.A if with_data else None)
    for r in clo.report.itertuples():
        if with_data or r.status == "pass":
            rows.add("closeness", r.attribute, r.status,
                     r.worst_emd if with_data else r.bound_any_A, r.t, r.message)
            continue
        # estimate A_j from the published sets (EM on w): an estimate, not a proof
        Ah = reconstructed_marginal(table, r.attribute, stats.w[r.attribute])
        g = ground_object(r.ground, table.schema[r.attribute])
        est = worst_emd(Ah, r.eta, r.p, g).value
        st = "warn" if est > r.t + opts.closeness_margin else "unverified"
        rows.add("closeness", r.attribute, st, est, r.t,
                 f"{r.attribute}: not verifiable without A_{r.attribute}; with A estimated from "
                 f"the published table the worst EMD is {est:.4g} (t = {r.t:g}); "
                 f"the bound for every A is {r.bound_any_A:.4g}")
    return clo


def position_row(rows: Rows, match, agree: str, *, check: str = "row_order",
                 attribute: str = "by position", lined: str | None = None) -> bool:
    """The audit's row on whether a release said to be shuffled lines up
    with the original (:class:`anonset.audit.order.PositionMatch`); ``agree``:
    what a row that agrees shows.  Returns whether it does."""
    from .order import MIN_EXCESS, Z_RISK
    risk, share, chance, z = match.verdict()
    if math.isnan(share):
        return False
    lined = lined or ("row order: the rows line up with the original's rows, whatever the "
                      "metadata says: a row's position tells whose it is and, where the input "
                      "was sorted or grouped by a sensitive attribute, that attribute")
    rows.add(check, attribute, "risk" if risk else "pass", round(share, 4), round(chance, 4),
             (lined if risk else "row order: the rows do not line up with the original's")
             + f" ({agree} for {share:.1%} of the rows, {chance:.1%} paired at random; "
             f"z = {z:+.1f}" + ("" if risk else f"; a RISK needs z >= {Z_RISK:g} and "
                                f"{MIN_EXCESS} rows over chance") + ")")
    return risk


#: What a failed row-by-row inclusion check adds: the original may be this
#: release's rows in another order (sorted, filtered and re-read), which the
#: row-by-row check reads as sets that miss their values (H26: an original
#: sorted by a column FAILED, blaming the sets).
_UNALIGNED = ("; if the original's rows are not in the order this release was published "
              "from (sorted or re-read since), audit with aligned=False (--no-aligned), which "
              "checks the sets per value")


def holder_sections(table, stats: AuditStats, rows: Rows, opts: Options) -> None:
    """Inclusion of the true value: per row where the original lines up with
    the published rows, else per value (alignment-free)."""
    n = stats.n
    if stats.original_rows != n:
        raise InputError(f"the original has {stats.original_rows} rows, the published table {n}",
                         param="original", expected="the original rows of this publication")
    rows.add("rows", "-", "pass", n, n, f"original has the {n} published rows" +
             ("" if opts.aligned else " (in another order: the rows were shuffled)"))
    if not opts.aligned and stats.position.rows:
        position_row(rows, stats.position, "every set holds the value of the original row at "
                     "the same position and every cell published as it is equals its cell")
    for name in table.names:
        par = table.params[name]
        pi = par.inclusion
        if opts.aligned:
            hit = stats.hits[name]
            if pi >= 1.0:
                rows.add("inclusion", name, "pass" if hit == n else "fail", hit / n, 1.0,
                         f"{name}: every set holds its true value" if hit == n else
                         f"{name}: {n - hit} set(s) miss their true value although p = 1"
                         + _UNALIGNED)
                continue
            sq = stats.cluster_squares(name)
            z = (hit - n * pi) / math.sqrt(pi * (1.0 - pi) * (n if sq is None else sq.sum()))
            st = _inclusion_status(z, stats, sq, opts)
            rows.add("inclusion", name, st, hit / n, pi,
                     f"{name}: true value in its set for {hit / n:.4f} of the rows, expected "
                     f"p + (1-p) eta/d = {pi:.4f} (z = {z:+.2f}"
                     f"{'' if st == 'pass' else f', |z| > {opts.z_max:g}'})"
                     + _clustered_words(stats, sq, st) + ("" if st == "pass" else _UNALIGNED))
            continue
        if opts.semantic is not None and name == opts.semantic[0]:
            # paper 001's dummies are not uniform (eq. 19 does not hold), but the
            # true value is always in its set: no value can be in fewer sets than
            # records that hold it
            short = int(np.sum(stats.w[name] < stats.A[name]))
            rows.add("inclusion", name, "fail" if short else "pass", short, 0,
                     f"{name}: {short} value(s) are in fewer sets than records that hold them"
                     if short else f"{name}: every value is in at least as many sets as "
                     "records hold it (Definition 1 puts the true value in its set; rows "
                     "shuffled, so checked per value)")
            continue
        # sets holding v: A_v rows include it w.p. pi, the others w.p. rho (eq. 19)
        A, w, rho = stats.A[name].astype(float), stats.w[name].astype(float), par.other_inclusion
        if pi >= 1.0:
            # p = 1: every true value is in its set, so no value can be in
            # fewer sets than rows hold it, whatever the order (H59: sets
            # with their true value swapped out passed on a shuffled release)
            short = int(np.sum(w < A))
            if short:
                v = int(np.argmax(A - w))
                rows.add("inclusion", name, "fail", short, 0,
                         f"{name}: {short} value(s) are in fewer sets than rows hold them "
                         f"({table.schema[name].domain[v]!r}: {int(w[v]):,} sets, "
                         f"{int(A[v]):,} rows), although p = 1 puts each true value in its "
                         "set (rows shuffled, so checked per value)")
                continue
        mean = A * pi + (n - A) * rho
        # a sum of independent clusters (one row each unless a record id
        # ties a record's rows with the same value to one set): size^2 times
        # the Bernoulli variance of eq. 19's rate, pi inside v's clusters,
        # rho outside
        sq = stats.cluster_squares(name)
        own = A if sq is None else sq
        var = own * pi * (1 - pi) + (own.sum() - own) * rho * (1 - rho)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(var > 0, (w - mean) / np.sqrt(var), np.where(np.abs(w - mean) < 0.5,
                                                                        0.0, np.inf))
        # the largest of m scores: each held to the rate one score has at z_max
        m = int(np.count_nonzero(var > 0))
        limit = per_value_limit(opts.z_max, m)
        skewed = np.zeros(z.shape, dtype=bool)
        if sq is None and z.size:
            # a count of a few sets is far from normal (Poisson-like, its
            # upper tail heavier): at 2.5 sets a value, 60,000 values, a
            # correct release failed 44 % of the time.  A score beyond the
            # limit fails only where Bennett's bound on its tail (rows are
            # independent Bernoulli trials, each within 1 of its mean) is
            # below the same rate, which no correct release exceeds
            # ... and only on the side of its heavier tail: a sum of coins
            # of rates r is skewed by sum r(1-r)(1-2r), its other tail
            # lighter than the normal's (H59: a shortfall of sets holding a
            # value, where the tail is light, passed by the upper tail's rule)
            third = A * pi * (1 - pi) * (1 - 2 * pi) + (n - A) * rho * (1 - rho) * (1 - 2 * rho)
            heavy = np.sign(w - mean) == np.sign(third)
            skewed = (np.abs(z) > limit) & heavy & (bennett_two_sided(np.abs(w - mean), var) >
                                                    per_value_rate(opts.z_max, m))
        scored = np.where(skewed, 0.0, z)
        worst = int(np.argmax(np.abs(scored))) if z.size else 0
        zw = float(scored[worst]) if z.size else 0.0
        st = _inclusion_status(zw, stats, sq, opts, limit)
        within = f"{limit:.3g}" if m <= 1 else f"{limit:.3g}, the bound of the largest of {m:,}"
        small = int(skewed.sum())
        note = (f"; {small:,} value(s) scored beyond it within Bennett's bound on a "
                "count's tail (a count of sets is not normal where its tail is heavier), "
                "which decides for them") if small else ""
        rows.add("inclusion", name, st, round(zw, 3), f"|z|<={limit:.3g}",
                 f"{name}: sets holding each value match p = {par.p:.4g} and the true counts "
                 f"(largest |z| = {abs(zw):.2f} at value {table.schema[name].domain[worst]!r}"
                 f"{' within ' if st == 'pass' else ' > '}{within}{note}; rows shuffled, so "
                 "checked per value, which cannot tell whose set is whose: a set's true value "
                 "swapped out, or another sample's original, may pass it)"
                 + _clustered_words(stats, sq, st))


def per_value_rate(z_max: float, m: int) -> float:
    """The two-sided false-alarm rate each of m per-value scores is held
    to: one score's at z_max, divided by m (Bonferroni)."""
    from statistics import NormalDist
    return 2.0 * NormalDist().cdf(-z_max) / max(1, m)


def bennett_two_sided(t: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Bennett's bound on P(|S - E S| >= t) for a sum S of independent
    variables within 1 of their means with variance ``var``:
    2 exp(-var h(t / var)), h(u) = (1 + u) ln(1 + u) - u.  Valid at any
    count, small or large (where it is a little above the normal tail)."""
    t, var = np.asarray(t, dtype=float), np.asarray(var, dtype=float)
    out = np.ones(t.shape)
    ok = var > 0
    u = t[ok] / var[ok]
    out[ok] = np.minimum(1.0, 2.0 * np.exp(-var[ok] * ((1.0 + u) * np.log1p(u) - u)))
    return out


def per_value_limit(z_max: float, m: int) -> float:
    """The |z| bound for the largest of m per-value scores that keeps the
    false-alarm rate of one score at z_max (Bonferroni): 4 for one value,
    5.66 for 4,044 (at 4 for each, a correct release of 4,044 tail numbers
    failed about one time in five)."""
    from statistics import NormalDist
    if m <= 1:
        return float(z_max)
    alpha = 2.0 * NormalDist().cdf(-z_max)
    return -NormalDist().inv_cdf(alpha / (2.0 * m))


def _inclusion_status(z: float, stats: AuditStats, sq, opts: Options,
                      limit: float | None = None) -> str:
    """'pass' within z_max (or the given limit); beyond it 'fail', or
    'unverified' where a record id clusters the sets but the original did
    not give the ids, so that the variance could not be sized (it is then
    larger than the test assumed)."""
    if abs(z) <= (opts.z_max if limit is None else limit):
        return "pass"
    return "unverified" if stats.record_id is not None and sq is None else "fail"


def _clustered_words(stats: AuditStats, sq, status: str) -> str:
    rid = stats.record_id
    if rid is None:
        return ""
    if sq is not None:
        return (f"; a record's rows with the same value share one set (record id {rid!r}), so "
                "the test's variance counts those clusters")
    if status == "unverified":
        return (f"; a record's rows with the same value share one set (record id {rid!r}), and "
                f"the original has no column {rid!r} to count them: give it to size the test")
    return ""


def record_class_section(classes, rows: Rows) -> None:
    if classes is None:
        return
    for r in classes.itertuples():
        if r.l is None or (isinstance(r.l, float) and math.isnan(r.l)) or not r.classes:
            continue
        ok = r.max_freq <= 1.0 / r.l + _TOL
        rows.add("classes", r.attribute, "pass" if ok else "fail", r.max_freq, 1.0 / r.l,
                 f"{r.attribute}: in the classes of {r.classes} sampled records the largest share "
                 f"of one value is {r.max_freq:.4f} (1/l = {1.0 / r.l:.4f}); the true value's "
                 f"largest share {r.max_true_share:.4f}")


def attack_closeness_section(att, rows: Rows) -> None:
    """With the true marginal prior, Theorem 4 bounds every posterior's shift."""
    if att is None or att.settings["prior"] != "marginal" or att.settings["prior_source"] != "true":
        return
    for r in att.summary.itertuples():
        if r.t is None or (isinstance(r.t, float) and math.isnan(r.t)) or math.isinf(r.t):
            continue
        ok = r.shift_max <= r.t + _TOL
        rows.add("attack_closeness", r.attribute, "pass" if ok else "fail", r.shift_max, r.t,
                 f"{r.attribute}: largest EMD(A, posterior) over the victims {r.shift_max:.4g} "
                 f"{'<=' if ok else '>'} t = {r.t:g}")


def risk_sections(table, stats: AuditStats, att, rows: Rows) -> pd.DataFrame:
    """Every risk of :mod:`anonset.audit.risks`, and the epsilon table."""
    _risks.key_risks(table.info, rows.add, model=table.model)
    _risks.order_risks(table.info, rows.add)
    _risks.dropped_row_risks(table.info, rows.add)
    def marginal(name):
        # the column's distribution: true where the original was given, else
        # estimated from the sets (what any reader of the release can do)
        if stats.original_rows:
            return stats.A[name]
        return reconstructed_marginal(table, name, stats.w[name])
    _risks.clear_risks(table, rows.add, marginal, true=bool(stats.original_rows))
    if stats.original_rows and stats.set_rows is not None:
        from ..passthrough import cell_codes, recoded_targets
        sample = stats.set_rows.frame(stats.set_names)
        others = [c for c in stats.passthrough if c in sample.columns]
        _risks.clear_pair_risks(table, {n: sample[n].to_numpy() for n in stats.set_names},
                                rows.add, others={c: cell_codes(sample[c]) for c in others},
                                recoded=recoded_targets((table.info or {}).get("pass_through_risks")
                                                        or ()))
    _risks.role_risks(table, rows.add)
    _risks.shared_id_risks(table.info, rows.add, model=table.model,
                           whole=[n for n, p in table.params.items() if p.eta >= p.d])
    _risks.changed_value_risks(stats, table.info, rows.add)
    allowed = _risks.allowed_recodes(table.info)
    _risks.passthrough_risks(stats, rows.add, allowed, _risks.allowed_identifiers(table.info))
    if stats.original_rows:
        _risks.foreign_cell_risks(stats.cells, rows.add)
    measured = _risks.order_and_joint_risks(stats, rows.add, allowed)
    _risks.recorded_recode_risks(table.info, set(stats.pairs) | measured, rows.add)
    _risks.exact_qid_risks(stats, table.info, rows.add, model=table.model)
    if att is not None:
        _risks.attack_risks(att, rows.add)
    eps = epsilon_table(table)
    for r in eps.itertuples():
        if r.attribute != "record":
            rows.add("epsilon", r.attribute, "info", r.epsilon, None,
                     f"{r.attribute}: local differential privacy epsilon "
                     f"{'infinite' if math.isinf(r.epsilon) else f'{r.epsilon:.4g}'} "
                     f"({r.note})")
    return eps


# ------------------------------------------------------------------ audit
#: What an audit of a release with no rows is told: it has nothing to check.
EMPTY_EXPECTED = "a release with at least one row to audit"


def audit(table: SetTable, original: TableLike | None = None, *, schema: Schema | None = None,
          attack: bool = False, known: int | Sequence[str] | None = None,
          n_targets: int | None = 10_000, n_classes: int = 200, prior: str = "marginal",
          z_max: float = 4.0, closeness_margin: float = 0.01, seed: Seed = None,
          missing: str | None = None, aligned: bool | None = None) -> AuditReport:
    """Audit a published table: does it conform to its declared privacy
    model, and which risks does it carry?

    Conformance, without ``original`` (what anyone holding the table can
    verify): no key material in the metadata; every set within its declared
    domain (inferred domains are flagged) and of size eta_j; parameters
    consistent with the model; (l_j)-diversity and (k_j)-anonymity, proven
    from the set sizes (exact over every class when small); closeness proven
    where the bound valid for every A_j holds, else 'unverified' with an
    estimate from the reconstructed A_j ('warn' beyond ``closeness_margin``).
    With ``original`` (the data holder) also: the rate at which the true
    value is in its set matches p_j + (1 - p_j) eta_j / d_j (binomial z-score,
    fail beyond ``z_max``; per row when the rows line up, per value when they
    were shuffled); the classes keyed by ``n_classes`` sampled records' true
    values (Theorems 2-3); closeness with the true A_j (Theorem 4).

    Risks (:mod:`anonset.audit.risks`): research seed, kept or unknown row
    order, attributes published in the clear, likely identifiers and recodes
    among the pass-through columns (recodes need ``original``), and with
    ``attack=True`` an adversary beating the model's bound
    (:func:`~anonset.audit.attack`).  The report also gives each attribute's
    local differential privacy epsilon (:mod:`anonset.audit.ldp`).

    An LGB or msa result (paper 002, 003) is audited by its classes and
    buckets instead: k-anonymity, diversity and closeness of each group,
    the adversary's success per attribute, and the risks of the columns
    published as they are (the checks `anonset audit` runs on its file);
    the options above that concern random sets are refused for it.

    Parameters
    ----------
    table : SetTable, LGBResult or MSAResult
    original : DataFrame, or any table `publish` takes, optional
        The original rows of this publication.
    missing : {'error', 'category'}, optional
        How the original's missing values were published (default: as the
        metadata records, else 'error').
    aligned : bool, optional
        The original's rows are in the published order (default: unless the
        metadata records shuffled rows).
    attack, known, n_targets, prior, seed : see :func:`~anonset.audit.attack`.

    Returns
    -------
    AuditReport
        ``conforms``, ``risks``, ``ok`` (PASSED: conforms and no risk),
        ``verdict``; every message names the attribute.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")})
    >>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"],
    ...                       domains={"a": list("wxyz"), "b": list("uvw")})
    >>> rep = audit(pub, df, attack=True, n_targets=None, seed=0)
    >>> rep.conforms, sorted(rep.attack.summary["attribute"])
    (True, ['a', 'b'])
    """
    from ..partition.lgb.core import LGBResult
    from ..partition.msa.result import MSAResult
    if isinstance(table, (LGBResult, MSAResult)):
        given = {"schema": schema is not None, "attack": attack, "known": known is not None,
                 "n_targets": n_targets != 10_000, "n_classes": n_classes != 200,
                 "prior": prior != "marginal", "z_max": z_max != 4.0,
                 "closeness_margin": closeness_margin != 0.01, "seed": seed is not None,
                 "missing": missing is not None, "aligned": aligned is not None}
        from .html.release import _from_object
        from .partition import audit_partition, refuse_set_options
        refuse_set_options(given, type(table).__name__[:-6].lower(),
                           "it is audited by its classes and buckets, its attack included")
        return audit_partition(_from_object(table), original).report
    if not isinstance(table, SetTable):
        raise InputError(f"got {type(table).__name__}", param="table",
                         expected="a SetTable, or an LGB or msa result")
    if table.n_rows == 0:
        # its sets' smallest size was 0, a FAIL of every model (H88)
        raise InputError("has no rows", param="table", expected=EMPTY_EXPECTED)
    check_n_classes(n_classes)
    from ..validate import check_bool
    attack = check_bool(attack, "attack")           # 'yes' was taken as True (H86)
    if schema is not None:
        from ..validate import check_schema
        schema = check_schema(schema)
    seed = release_sample_seed(seed, table)
    opts = Options.resolve(table, missing=missing, aligned=aligned, z_max=z_max,
                           closeness_margin=closeness_margin)
    if original is not None:
        # any table publish takes (Arrow, Polars, DuckDB, ...): an Arrow
        # table here was a bare pandas ValueError
        from ..io.tables import as_frame
        original = as_frame(original, param="original")
    if opts.drop and original is not None:
        from ..validate import check_original_columns
        check_original_columns(table.names, original.columns)
    original = opts.kept(original, table.names)
    codes = codes_of(original, table, schema, opts.missing, opts.aligned) \
        if original is not None else None
    frame = pd.DataFrame(original) if original is not None else None
    stats = AuditStats(table, passthrough=[c for c in opts.passthrough if c in table.other],
                       pairs=opts.pairs(table, frame.columns) if frame is not None else (),
                       budget=None)
    stats.add_sets(0, {n: table.mask(n) for n in table.names},
                   codes if codes is not None and opts.aligned else None, opts.semantic)
    if codes is not None and not opts.aligned:
        stats.add_positions(0, {n: table.mask(n) for n in table.names}, codes,
                            table.other, frame)
    if stats.passthrough:
        stats.add_passthrough(table.other, {n: mask_hashes(table.mask(n)) for n in stats.exact})
    if codes is not None:
        # codes_of lines the original up with the published rows where the
        # shuffle is known; the pass-through cells must follow, or the
        # recode check pairs each name with another row's race
        moved = source_rows(table, opts.aligned)
        stats.add_original(codes, frame.iloc[moved].reset_index(drop=True)
                           if moved is not None else frame)
    rows = Rows()
    model_sections(table, stats, rows, opts)
    want_div, want_an = wants_classes(table)
    div = an = None
    if want_div or want_an:
        div, an = audit_classes(table, want_div, want_an,
                                (table.model or {}).get("measure", "frequency"), n_classes, seed)
    class_sections(div, an, rows)
    clo = closeness_section(table, stats, rows, opts, codes is not None)
    classes = None
    if codes is not None:
        holder_sections(table, stats, rows, opts)
        classes = _record_classes(table, codes, n_classes, seed)
        record_class_section(classes, rows)
    att = None
    if attack:
        att = run_attack(table, original, known=known, n_targets=n_targets, prior=prior,
                         seed=seed, schema=schema, missing=opts.missing, aligned=opts.aligned)
        attack_closeness_section(att, rows)
    eps = risk_sections(table, stats, att, rows)
    for r in getattr(table, "column_rows", None) or ():     # read from a file (H86)
        rows.add(**r)
    return AuditReport(rows.frame(), div, an, clo, classes, att, original is not None, eps,
                       {"rows": table.n_rows, "how": "in memory", "aligned": opts.aligned})


def _record_classes(table: SetTable, codes: dict, n_classes: int, seed) -> pd.DataFrame:
    """Classes keyed by the true values of ``n_classes`` sampled records."""
    rng = np.random.default_rng(seed)
    picks = rng.choice(table.n_rows, size=min(n_classes, table.n_rows), replace=False)
    keys = np.stack([codes[n][picks] for n in table.names], axis=1).astype(np.int64)
    counts = class_counts([lazy_membership(table, n) for n in table.names], keys)
    return record_class_stats(table.names, [declared_target(table.params, n, "l")
                                            for n in table.names], keys, counts)

