"""Pass-through columns: what they publish beside the privacy model.

A pass-through column (role ``other``, ``--other``) is published unchanged,
so the model protects nothing in it.  Two ways it can still publish what the
model protects are measured here, the same way by the audit and, as a
warning, by every publisher at publishing time:

* a **likely identifier**: at least ``IDENTIFIER_SHARE`` of the rows hold a
  value no other row has (a name, an ID, an exact timestamp), which singles
  those rows out;
* a **recode** of a sensitive column: predicting each row's sensitive value
  from the other rows with the same pass-through value removes at least
  ``DETERMINES`` of the errors of guessing the most common value (Goodman
  and Kruskal's lambda; a resume study's first names were chosen to signal
  race: lambda 1);
* a **partial recode** of a sensitive column (pass-through columns only):
  some of its values give away the sensitive value of at least
  ``GIVEN_SHARE`` of the rows although its lambda stays below
  ``DETERMINES`` (:meth:`ValueSample.given_away`: Adult's relationship
  'Husband' gives sex 'Male', 45 % of the rows, at lambda 0.31);
* a **recode of a generalized QI** (the partition publishers: LGB, msa,
  Mondrian, TP): the same lambda, predicting a QI's exact value; published
  beside the QI's range (a birth year beside an age published as [30-39]),
  it undoes the generalization, and whoever knows a person's QIs finds their
  row inside its group.

Both are counts over distinct values, kept by distinct sampling (Gibbons,
VLDB 2001) in :class:`ValueSample`: exact counts of the values whose hash
falls below a threshold that halves whenever more than ``budget`` values are
held, so memory is bounded and every share is estimated without bias over
the sampled values.
"""
from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
import pandas as pd

__all__ = ["IDENTIFIER_SHARE", "DETERMINES", "GIVEN_SHARE", "GIVEN_ALPHA", "DEFAULT_BUDGET",
           "ValueSample", "hash_values", "hash_cells", "PassThroughWarning", "PassThroughCheck",
           "check_passthrough", "given_away_message", "check_recodes", "check_allow_recode",
           "passthrough_findings", "warn_findings", "REFUSED_CHECKS"]

#: A pass-through column whose values single out at least this share of the rows.
IDENTIFIER_SHARE = 0.5
#: A pass-through column that removes at least this share of the guessing errors.
DETERMINES = 0.9
#: A pass-through column some of whose values give away the sensitive value
#: of at least this share of the rows (:meth:`ValueSample.given_away`).
GIVEN_SHARE = 0.01
#: A value counts as giving a sensitive value away only where Chernoff's
#: bound on the chance that its rows agree that much by accident is below this.
GIVEN_ALPHA = 1e-6

#: Distinct (value, sensitive value) pairs a ValueSample holds at most (~40 MB).
DEFAULT_BUDGET = 1 << 20
_H = 48                                 # bits of a value's hash kept in a key
_SUB = np.uint64(64 - _H)               # low bits: the sensitive code (< 65536)


def hash_values(col: pd.Series) -> np.ndarray:
    """A 64-bit hash of every cell (equal cells, equal hashes, in any chunk)."""
    return pd.util.hash_pandas_object(col.reset_index(drop=True), index=False) \
        .to_numpy(dtype=np.uint64)


def hash_cells(col: pd.Series) -> np.ndarray:
    """:func:`hash_values`, also for cells that hold arrays or lists (a set
    column stored as lists): equal cells, equal hashes, within one file."""
    try:
        return hash_values(col)
    except TypeError:
        return hash_values(col.map(lambda v: repr(v.tolist() if hasattr(v, "tolist") else v)))


class ValueSample:
    """Counts of (value, sub-value) pairs over the values of a column whose
    48-bit hash lies below ``2**48 / 2**level``; ``level`` rises whenever
    more than ``budget`` pairs are held (``budget=None``: exact, never).

    Examples
    --------
    >>> s = ValueSample()
    >>> s.add(hash_values(pd.Series(["a", "b", "a", "c"])))
    >>> s.singleton_share()
    0.5
    """

    def __init__(self, budget: int | None = DEFAULT_BUDGET):
        self.budget = budget
        self.level = 0
        self.keys = np.empty(0, dtype=np.uint64)
        self.counts = np.empty(0, dtype=np.int64)
        self.rows = 0

    @property
    def fraction(self) -> float:
        """Share of the distinct values that are sampled."""
        return 2.0 ** -self.level

    def _limit(self) -> np.uint64:
        return np.uint64((1 << _H) >> self.level)

    def add(self, hashes: np.ndarray, sub: np.ndarray | None = None) -> None:
        h = np.asarray(hashes, dtype=np.uint64) >> _SUB
        self.rows += h.size
        keep = h < self._limit()
        key = h[keep] << _SUB
        if sub is not None:
            key |= np.asarray(sub, dtype=np.uint64)[keep]
        u, c = np.unique(key, return_counts=True)
        self._absorb(u, c.astype(np.int64))

    def merge(self, other: "ValueSample") -> None:
        self.rows += other.rows
        self.level = max(self.level, other.level)
        self._absorb(other.keys, other.counts)

    def _absorb(self, u, c) -> None:
        keys = np.concatenate([self.keys, u])
        counts = np.concatenate([self.counts, c])
        keys, inv = np.unique(keys, return_inverse=True)
        counts = np.bincount(inv.ravel(), weights=counts, minlength=keys.size).astype(np.int64)
        while True:
            keep = (keys >> _SUB) < self._limit()
            keys, counts = keys[keep], counts[keep]
            if self.budget is None or keys.size <= self.budget:
                break
            self.level += 1
        self.keys, self.counts = keys, counts

    def value_totals(self) -> np.ndarray:
        """Rows of each sampled value (sub-values added up)."""
        _, inv = np.unique(self.keys >> _SUB, return_inverse=True)
        return np.bincount(inv.ravel(), weights=self.counts).astype(np.int64) \
            if self.keys.size else np.empty(0, dtype=np.int64)

    def singleton_share(self) -> float:
        """Share of the rows whose value no other row has (NaN with no row)."""
        tot = self.value_totals()
        return float((tot == 1).sum() / tot.sum()) if tot.sum() else float("nan")

    def _groups(self):
        """Per sampled entry: its value's group, the sub-value, the count;
        per group: its size, its top count and the entry holding it (the
        first at the top count)."""
        val = self.keys >> _SUB
        sub = (self.keys & np.uint64((1 << (64 - _H)) - 1)).astype(np.int64)
        c = self.counts
        _, g = np.unique(val, return_inverse=True)       # keys are sorted: groups contiguous
        g = g.ravel()
        ng = int(g.max()) + 1
        size = np.bincount(g, weights=c, minlength=ng)
        top = np.zeros(ng, dtype=np.int64)
        np.maximum.at(top, g, c)
        at_top = np.flatnonzero(c == top[g])
        first = np.full(ng, c.size, dtype=np.int64)
        np.minimum.at(first, g[at_top], at_top)
        return g, sub, c, size, top, first

    def given_away(self) -> tuple:
        """(share of the rows, groups): the rows whose value gives their
        sub-value away, although the column as a whole may not.

        A value v held by n_v rows gives away its most common sub-value s
        (c_v of its rows) when
        (a) c_v / n_v removes at least ``DETERMINES`` of the errors of
            guessing s from its overall share pi_s: (c_v / n_v - pi_s) /
            (1 - pi_s) >= DETERMINES (lambda within v),
        (b) the agreement is no accident: n_v KL(c_v / n_v || pi_s) >=
            ln(1 / GIVEN_ALPHA), Chernoff's bound on the chance that n_v rows
            drawn from the overall distribution agree that much (so a
            handful of rows that happen to agree count for nothing), and
        (c) s is not already given away for everyone: pi_s < ``DETERMINES``
            (where 91 % of CPS1988's workers are full-time, that 808 of the
            815 who earn 712.25 a week do tells little more).
        One value of a column (Minneapolis police stops: a missing
        'preRace' is a missing 'race' on every one of 8,221 rows) can give
        away the sensitive value of many rows while its lambda over the
        whole column stays low (0.41 there)."""
        if not self.keys.size:
            return float("nan"), 0
        g, sub, c, size, top, first = self._groups()
        n = c.sum()
        pi = np.bincount(sub, weights=c) / n
        s = sub[first]                                   # each group's top sub-value
        conf = top / size
        p = pi[s]
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(p < 1.0, (conf - p) / (1.0 - p), 0.0)
            kl = conf * np.log(conf / p) + np.where(conf < 1.0, (1.0 - conf) * np.log(
                (1.0 - conf) / (1.0 - p)), 0.0)
        away = (p < DETERMINES) & (lam >= DETERMINES) & (size * kl >= -np.log(GIVEN_ALPHA))
        return float(size[away].sum() / n), int(away.sum())

    def determination(self) -> tuple:
        """(lambda, accuracy, prior accuracy) of predicting the sub-value
        (a sensitive code) from the value, leave one out.

        A row is predicted by the most common sensitive value among the OTHER
        rows with its pass-through value (ties count half; a value seen once
        falls back to the most common sensitive value overall), so a column
        with a new value per row predicts nothing.  lambda = (accuracy -
        prior) / (1 - prior) (Goodman and Kruskal's lambda) is the share of
        the prior's errors the column removes: 1 for a one-to-one recode,
        about 0 for an unrelated column.
        """
        if not self.keys.size:
            return float("nan"), float("nan"), float("nan")
        g, sub, c, size, top, first = self._groups()
        ng = size.size
        n = c.sum()
        marg = np.bincount(sub, weights=c)
        mode = int(np.argmax(marg))
        prior = float(marg[mode] / n)
        # per group: the count of its leading entry (the first at the top
        # count) and the largest count among its other entries
        lead = np.arange(c.size) == first[g]
        second = np.zeros(ng, dtype=np.int64)
        np.maximum.at(second, g[~lead], c[~lead])
        lone = size[g] == 1
        loo = c - 1                                        # the leader's count without the row
        credit = np.where(lead & (loo > second[g]), 1.0,
                          np.where(lead & (loo == second[g]) & (loo > 0), 0.5, 0.0))
        credit = np.where(lone, (sub == mode).astype(float), credit)
        acc = float((credit * c).sum() / n)
        lam = 0.0 if prior >= 1.0 else (acc - prior) / (1.0 - prior)
        return lam, acc, prior


# ------------------------------------------------------------- at publishing
#: Rows a publishing-time check reads: the table's first ones (the audit with
#: the original data reads them all).  Enough to measure a lambda or a share
#: of lone values to a few thousandths, at a cost lost in the noise of
#: publishing a 2,000,000-row file (docs/scaling.md; 1,000,000 rows added
#: about 17 %).
CHECK_ROWS = 250_000
#: Distinct values a publishing-time sample holds at most (about 1 MB).
CHECK_BUDGET = 1 << 16


class PassThroughWarning(UserWarning):
    """A column published as it is publishes what the model protects.

    A pass-through column either singles rows out (at least half of them
    hold a value no other row has: a name, an ID, an exact time), or it
    predicts a sensitive column (Goodman and Kruskal's lambda >= 0.9 over
    the other rows with the same value: first names chosen to signal race,
    a code of the diagnosis) or some of its values give it away (a
    relationship 'Husband' gives the sex), or, beside a QI that the release
    generalizes, it predicts that QI's exact values (a birth year beside an
    age range);
    an exact QID may predict a sensitive column too.  Drop the
    column, name it an identifier, or publish it as sensitive.  The audit
    with the original data reports the same as a risk.
    """


class PassThroughCheck:
    """The two measures of every pass-through column, gathered block by
    block at publishing time (mergeable, as the engine's statistics are).

    The sensitive values are not encoded yet (their domain may be read off
    the whole table), so a 16-bit hash of each stands for it: equal values,
    equal hashes; two values that share a hash (for a column of d values,
    with probability about d^2 / 2^17) count as one, which can make a column
    look more predictive than it is.  A warning is a prompt to look: the
    audit with the original data measures on the codes.  Only the first
    ``CHECK_ROWS`` rows (by global row index, on every path) are read.
    """

    def __init__(self, passthrough: Iterable[str], sensitive: Iterable[str],
                 exact: Iterable[str] = (), *, generalized: Iterable[str] = (),
                 budget: int | None = CHECK_BUDGET, rows: int | None = None):
        passthrough, sensitive, exact = list(passthrough), list(sensitive), list(exact)
        self.ids = {c: ValueSample(budget) for c in passthrough}
        # an exact QID (paper 004) is published as it is too: it may recode a
        # sensitive column (a code beside its label); singling rows out is
        # what a QID does, so it has no identifier check
        self.exact = exact
        self.pairs = {(c, s): ValueSample(budget) for c in passthrough + exact for s in sensitive}
        # a QI that the release generalizes (LGB, msa, Mondrian, TP): a
        # pass-through column that recodes it (a birth year beside an age
        # published as [30-39]) publishes it at its exact values, and whoever
        # knows a person's QIs finds their row inside its group
        self.generalized = [q for q in generalized if q not in sensitive]
        self.pairs.update({(c, q): ValueSample(budget) for c in passthrough
                           for q in self.generalized})
        self.sensitive = sensitive
        self.rows = CHECK_ROWS if rows is None else rows
        self.seen = 0            # rows of the table (a bound: the largest row + 1)

    def add(self, block: pd.DataFrame, row0: int) -> "PassThroughCheck":
        self.seen = max(self.seen, row0 + len(block))
        take = min(len(block), self.rows - row0)
        if take <= 0 or not self.pairs:
            return self
        part = block.iloc[:take]
        sub = {s: hash_cells(part[s]) & np.uint64(0xFFFF)
               for s in self.sensitive + self.generalized}
        for c in list(self.ids) + self.exact:
            h = hash_cells(part[c])
            if c in self.ids:
                self.ids[c].add(h)
            for s in self.sensitive + (self.generalized if c in self.ids else []):
                self.pairs[(c, s)].add(h, sub[s])
        return self

    def merge(self, other: "PassThroughCheck") -> "PassThroughCheck":
        self.seen = max(self.seen, other.seen)
        for mine, theirs in ((self.ids, other.ids), (self.pairs, other.pairs)):
            for k, v in theirs.items():
                mine[k].merge(v)
        return self

    def findings(self) -> list:
        """One finding per likely identifier, recode and partial recode:
        ``{'check': 'identifier', 'recode', 'given_away' or 'qi_recode',
        'column', 'sensitive' (None for an identifier; 'qi' for a
        qi_recode), 'value' (the share of the rows, or lambda),
        'message'}``; a 'given_away' finding is one per column, its
        'sensitive' and 'value' lists (one entry per attribute)."""
        out = []
        where = f" (in the first {self.rows:,} rows)" if self.seen > self.rows else ""
        for c, s in self.ids.items():
            share = s.singleton_share()
            if share == share and share >= IDENTIFIER_SHARE:
                out.append({"check": "identifier", "column": c, "sensitive": None,
                            "value": round(share, 4), "message":
                            f"pass-through column {c!r}: {share:.1%} of the rows hold a value no "
                            f"other row has{where}{_sampled(s)}: published unchanged, it singles "
                            "those rows out (a likely identifier); name it an identifier or drop "
                            "it"})
        away = {}                 # column -> [(sensitive, share, sample)]
        for (c, sens), s in self.pairs.items():
            lam, acc, prior = s.determination()
            if lam == lam and lam < DETERMINES and c in self.ids and sens in self.sensitive:
                share, _ = s.given_away()
                if share >= GIVEN_SHARE:
                    if c not in away:
                        out.append({"check": "given_away", "column": c})
                    away.setdefault(c, []).append((sens, share, s))
            if not (lam == lam and lam >= DETERMINES):
                continue
            exact = c in self.exact
            qi = sens in self.generalized
            kind = "exact" if exact else "pass-through"
            core = (f"predicts {'the QI ' if qi else ''}{sens!r} for {acc:.1%} of the rows from "
                    f"the other rows with the same value (the most common value alone: "
                    f"{prior:.1%}; lambda {lam:.2f}){where}{_sampled(s)}: published ")
            if qi:
                core += (f"unchanged beside {sens!r} generalized, it publishes {sens!r} at its "
                         f"exact values, and whoever knows a person's {sens!r} finds their row "
                         "inside its group")
                out.append({"check": "qi_recode", "column": c, "qi": sens,
                            "value": round(lam, 4),
                            "why": f"is {'an' if exact else 'a'} {kind} column that "
                                   + core.replace("it publishes", "it would publish"),
                            "remedy": "it dropped, or made a QI too",
                            "message": f"{kind} column {c!r} {core}; drop it, or make it a QI "
                                       "too"})
            else:
                core += (f"{'exactly' if exact else 'unchanged'}, it publishes {sens!r} nearly "
                         "in the clear")
                remedy = "publish it as sensitive too, or drop it" if exact else \
                    "drop it, or publish it as sensitive"
                out.append({"check": "recode", "column": c, "sensitive": sens,
                            "value": round(lam, 4),
                            "why": f"is {'an' if exact else 'a'} {kind} column that "
                                   + core.replace("it publishes", "it would publish"),
                            "remedy": "it published as sensitive too, or dropped" if exact
                            else "it dropped, or published as sensitive",
                            "message": f"{kind} column {c!r} {core}; {remedy}"})
        # a partial recode: one finding per column, naming every attribute
        for f in out:
            if f["check"] == "given_away":
                found = away[f["column"]]
                f.update({"sensitive": [a for a, _, _ in found],
                          "value": [round(v, 4) for _, v, _ in found],
                          "message": given_away_message(
                              f["column"], [(a, v) for a, v, _ in found],
                              where + _sampled(found[0][2]))})
        return out

    def warn(self, allow_recode: Iterable[str] = (), *, file=None) -> list:
        """Refuse the recodes not named in ``allow_recode``
        (:func:`check_recodes`), then warn (:class:`PassThroughWarning`)
        once per other finding, pointing at the first caller outside
        anonset; returns the findings as the release's metadata records
        them (``pass_through_risks``: the findings without their
        messages)."""
        return warn_findings(check_recodes(self.findings(), allow_recode, file=file))


def given_away_message(col: str, found: list, where: str = "") -> str:
    """The warning for :meth:`ValueSample.given_away` of one column:
    ``found`` = [(sensitive attribute, share of the rows)]."""
    what = " and ".join(f"{a!r} for {v:.1%} of the rows" for a, v in found)
    names = " and ".join(repr(a) for a, _ in found)
    return (f"pass-through column {col!r}: some of its values give away {what}{where} (at "
            f"least {DETERMINES:.0%} of the rows with such a value share one value of "
            f"{names}, far beyond its share overall, although the column as a whole predicts "
            f"less): published unchanged, it publishes those rows' {names} nearly in the clear; "
            "drop it, or publish it as sensitive")


def recorded(found: list) -> list:
    """Findings as the metadata records them (without their messages)."""
    return [{k: v for k, v in f.items() if k not in ("message", "why", "remedy")} for f in found]


#: Findings that publish what the model protects nearly in the clear: a
#: column published as it is that recodes a sensitive column or a
#: generalized QI.  Refused unless the column is named in ``allow_recode``.
REFUSED_CHECKS = ("recode", "qi_recode")


def check_recodes(found: list, allow_recode: Iterable[str] = (), *, file=None) -> list:
    """Refuse the recodes among ``found`` (:meth:`PassThroughCheck.findings`)
    whose column is not named in ``allow_recode``: one line naming the first
    such column, what it predicts, and every column to name to accept the
    risk.  The allowed ones are marked ``'allowed': True`` (the metadata
    records it; the summary and the audit name them).  Returns ``found``."""
    from .validate import InputError
    allow = set(allow_recode)
    refused = [f for f in found if f["check"] in REFUSED_CHECKS and f["column"] not in allow]
    if refused:
        f = refused[0]
        cols = list(dict.fromkeys(g["column"] for g in refused))
        more = [f"{g['column']} -> {g.get('sensitive', g.get('qi'))}" for g in refused[1:]]
        what = f["why"] + (f" (and {', '.join(more)})" if more else "")
        raise InputError(what, column=f["column"], file=file,
                         expected=f"{f['remedy']}, or the risk named: {{@allow_recode="
                                  f"{cols!r}}}")
    for f in found:
        if f["check"] in REFUSED_CHECKS:
            f["allowed"] = True
    return found


def check_allow_recode(allow_recode, columns: Iterable[str], *, file=None) -> tuple:
    """``allow_recode`` as a tuple of names, each one of ``columns`` (those
    published as they are)."""
    from .validate import InputError, check_names
    names = check_names(allow_recode, "allow_recode")
    columns = list(columns)
    for n in names:
        if n not in columns:
            raise InputError(f"names {n!r}, which is not published as it is", file=file,
                             param="allow_recode",
                             expected=f"a column published as it is: one of {columns}"
                             if columns else "no name: this release publishes no column as "
                                             "it is")
    return names


def warn_findings(found: list) -> list:
    """Warn (:class:`PassThroughWarning`) once per finding, except the
    recodes the user allowed by name (the summary, the metadata and the
    audit name those); returns :func:`recorded` of them all."""
    from .schema import _outside_stacklevel
    for f in found:
        if f.get("allowed"):
            continue
        warnings.warn(f["message"], PassThroughWarning, stacklevel=_outside_stacklevel())
    return recorded(found)


def _sampled(s: ValueSample) -> str:
    return "" if s.level == 0 else f" (estimated on 1/{2 ** s.level} of the distinct values)"


def check_passthrough(frame: pd.DataFrame, passthrough: Iterable[str],
                      sensitive: Iterable[str], exact: Iterable[str] = (), *,
                      generalized: Iterable[str] = (), allow_recode: Iterable[str] = (),
                      file=None) -> list:
    """The publishing-time check of a table in memory (the partition
    publishers, semantic diversity's exact QIDs): warns once per finding and
    returns them (as :meth:`PassThroughCheck.warn`).  ``generalized``: QIs
    the release generalizes, which a pass-through column must not recode.
    A recode is refused unless its column is named in ``allow_recode``
    (:func:`check_recodes`)."""
    found = passthrough_findings(frame, passthrough, sensitive, exact, generalized=generalized)
    return warn_findings(check_recodes(found, allow_recode, file=file))


def passthrough_findings(frame: pd.DataFrame, passthrough: Iterable[str],
                         sensitive: Iterable[str], exact: Iterable[str] = (), *,
                         generalized: Iterable[str] = ()) -> list:
    """:meth:`PassThroughCheck.findings` of a table in memory, without
    warning or refusing (a publisher that refuses before its work and warns
    after it calls :func:`check_recodes` and :func:`warn_findings` itself)."""
    passthrough, sensitive, exact = list(passthrough), list(sensitive), list(exact)
    generalized = list(generalized)
    if not (passthrough or exact) or not (sensitive or (passthrough and generalized)) \
            or len(frame) == 0:
        return []
    return PassThroughCheck(passthrough, sensitive, exact, generalized=generalized).add(
        frame.reset_index(drop=True), 0).findings()
