"""Pass-through columns: what they publish beside the privacy model.

A pass-through column (role ``other``, ``--other``) is published unchanged,
so the model protects nothing in it.  The ways it can still publish what the
model protects are measured here, the same way by the audit and by every
publisher at publishing time, which refuses a likely identifier unless the
user names it in ``allow_identifier``, and the recodes below
(``REFUSED_CHECKS``) unless named in ``allow_recode``:

* a **likely identifier**: at least ``IDENTIFIER_SHARE`` of the rows hold a
  value no other row has (a name, an ID, an exact timestamp), which singles
  those rows out;
* a **recode** of a sensitive column: predicting each row's sensitive value
  from the other rows with the same pass-through value removes at least
  ``DETERMINES`` of the errors of guessing the most common value (Goodman
  and Kruskal's lambda; a resume study's first names were chosen to signal
  race: lambda 1);
* a **partial recode** of a sensitive column (pass-through columns and
  exact QIDs): some of its values give away the sensitive value of at least
  ``GIVEN_SHARE`` of the rows although its lambda stays below
  ``DETERMINES`` (:meth:`ValueSample.given_away`: Adult's relationship
  'Husband' gives sex 'Male', 45 % of the rows, at lambda 0.31);
* an **order recode** of a sensitive column: sorted by the column (rows
  that share a cell in every order alike), a row's neighbour holds the same
  sensitive value far more often than chance (the same lambda, with the neighbour as
  the prediction), although few rows share a value with another: a row
  number of a file sorted by a sensitive column restores the order that
  shuffling hides, and an income in thousands beside its bins published as
  sensitive gives each row's bin; the rows of a run in that order have the
  true value in every set, and their sets intersected give it;
* a **joint recode**: two columns published as they are that recode a
  sensitive column together although neither does alone (the survey year
  and the birth year give the age), measured as one column is over the
  first ``JOINT_ROWS`` rows;
* a **recode of a generalized QI** (the partition publishers: LGB, msa,
  Mondrian, TP): the same lambda, predicting a QI's exact value; published
  beside the QI's range (a birth year beside an age published as [30-39]),
  it undoes the generalization, and whoever knows a person's QIs finds their
  row inside its group.

The first three are counts over distinct values, kept by distinct sampling (Gibbons,
VLDB 2001) in :class:`ValueSample`: exact counts of the values whose hash
falls below a threshold that halves whenever more than ``budget`` values are
held, so memory is bounded and every share is estimated without bias over
the sampled values.  The recodes are measured on rows drawn at random from
the whole table (``SAMPLE_ROWS``), the likely identifier on its first
``CHECK_ROWS`` rows (:class:`PassThroughCheck`).
"""
from __future__ import annotations

import re
import warnings
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = ["IDENTIFIER_SHARE", "DETERMINES", "GIVEN_SHARE", "GIVEN_ALPHA", "DEFAULT_BUDGET",
           "ValueSample", "OrderSample", "order_keys", "set_success", "set_lambda", "hash_values", "hash_cells",
           "PassThroughWarning", "PassThroughCheck",
           "check_passthrough", "given_away_message", "check_recodes", "check_allow_recode",
           "check_allow_identifier", "rule_recodes",
           "passthrough_findings", "warn_findings", "REFUSED_CHECKS", "JOINT_ROWS", "SAMPLE_ROWS",
           "columns_of", "sample_cut", "RowSample", "recoded_targets",
           "cell_codes"]

#: A pass-through column whose values single out at least this share of the rows.
IDENTIFIER_SHARE = 0.5
#: A pass-through column that removes at least this share of the guessing errors.
DETERMINES = 0.9
#: Rows (with numbers in both) a rank correlation is measured on at least.
MONOTONE_ROWS = 50
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


def _cell_text(v) -> str:
    """A cell that holds an array, a list or a dict, as text (equal cells,
    equal texts)."""
    return repr(v.tolist() if hasattr(v, "tolist") else v)


def hash_cells(col: pd.Series) -> np.ndarray:
    """:func:`hash_values`, also for cells that hold arrays or lists (a set
    column stored as lists): equal cells, equal hashes, within one file."""
    try:
        return hash_values(col)
    except TypeError:
        return hash_values(col.map(_cell_text))


def cell_codes(col: pd.Series) -> np.ndarray:
    """A column's cells as codes 0 .. u - 1 (equal cells, equal codes; by
    :func:`hash_cells`)."""
    return np.unique(hash_cells(col.reset_index(drop=True)), return_inverse=True)[1].ravel()


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

    def shared_rows(self) -> int:
        """Sampled rows whose value another sampled row holds (the rows that
        :meth:`determination` predicts from other rows)."""
        tot = self.value_totals()
        return int(tot[tot > 1].sum())

    def shared_determination(self) -> tuple:
        """:meth:`determination` on the rows whose value another row holds
        only (a value seen once predicts nothing, and on a sparse sample of
        a function, a birth year of the survey year and the age, such rows
        hid the function: lambda 0.5 of 1).  The prior is the most common
        sub-value among those rows."""
        if not self.keys.size:
            return float("nan"), float("nan"), float("nan")
        g, sub, c, size, top, first = self._groups()
        keep = size[g] > 1
        if not keep.any():
            return float("nan"), float("nan"), float("nan")
        kept = ValueSample(None)
        kept.keys, kept.counts = self.keys[keep], self.counts[keep]
        return kept.determination()

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


#: rows an SA alone must predict a generalized QI on (from other rows with
#: its value) before its finding counts (msa: chance on a few rows)
SA_ALONE_ROWS = 30


def _kl(a: float, b: float) -> float:
    """KL(a || b) of two coins (inf where b is 0 or 1 and a is not)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = np.float64(a), np.float64(b)
        out = (a * np.log(a / b) if a > 0 else 0.0) + \
            ((1 - a) * np.log((1 - a) / (1 - b)) if a < 1 else 0.0)
    return float(out) if out == out else float("inf")




def set_success(vs: "ValueSample", d: int, eta: int, *, alone: bool = False) -> float:
    """How often an adversary who knows a row's value of the column (and
    nothing with ``alone``) names the row's sensitive value from its
    published set, a set of ``eta`` of the ``d`` values drawn around the
    true one (p = 1: the true value and eta - 1 others at random).

    The adversary's prior is the other rows with the same value (leave one
    out, as :meth:`ValueSample.determination`); it names the set's value
    most common among them, a tie split evenly.  For a row with true value
    v, whose value m others outnumber and e others equal among those rows
    (values absent from them count 0), the adversary is right when none of
    the m is among the eta - 1 drawn with v, C(d - 1 - m, eta - 1) /
    C(d - 1, eta - 1), and then with E[1 / (1 + T)], T the ties drawn
    (hypergeometric: e of the d - 1 - m, eta - 1 draws), in closed form.
    Exact; averaged over the sampled rows (tested against enumeration).
    """
    if not vs.keys.size or d < 2 or eta < 1:
        return float("nan")
    val = vs.keys >> _SUB                             # sorted: groups contiguous
    g = np.concatenate([[0], np.cumsum(val[1:] != val[:-1])])
    sub = (vs.keys & np.uint64((1 << (64 - _H)) - 1)).astype(np.int64)
    c = vs.counts
    if alone:                                         # one group: the marginal
        u, inv = np.unique(sub, return_inverse=True)
        c = np.bincount(inv.ravel(), weights=c).astype(np.int64)
        g, sub = np.zeros(u.size, dtype=np.int64), u
    k = eta - 1
    from .randomized.set_adversary import log_factorials
    lf = log_factorials(d + 1)                                 # log n!, n <= d + 1 (no scipy)

    def log_comb(n, r):
        n = np.asarray(n, dtype=np.int64)
        return lf[n] - lf[r] - lf[n - r]
    # entries in the order of (group, count): a group's entries stay where
    # they are (groups are contiguous), runs of equal (group, count) follow
    o = np.lexsort((c, g))
    gs, cs = g[o], c[o]
    n_e = c.size
    g_new = np.concatenate([[True], gs[1:] != gs[:-1]])
    g_start = np.flatnonzero(g_new)
    g_end = np.append(g_start[1:], n_e)
    gid = np.cumsum(g_new) - 1
    r_new = g_new | np.concatenate([[False], cs[1:] != cs[:-1]])
    r_start = np.flatnonzero(r_new)
    r_len = np.diff(np.append(r_start, n_e))
    rid = np.cumsum(r_new) - 1
    lo, hi = g_start[gid], g_end[gid]
    # a row's own value left out: x = c - 1 rows.  The group's entries with
    # more than x rows begin with the entry's own run; those with x rows are
    # the run before it, where that run is in the group and counts x
    above_s = hi - r_start[rid]
    prev = np.maximum(rid - 1, 0)
    equal_s = np.where((rid > 0) & (r_start[prev] >= lo) & (cs[r_start[prev]] == cs - 1),
                       r_len[prev], 0)
    above, equal = np.empty(n_e, dtype=np.int64), np.empty(n_e, dtype=np.int64)
    above[o], equal[o] = above_s, equal_s
    seen = np.empty(n_e, dtype=np.int64)
    seen[o] = hi - lo
    x = c - 1
    m = above - 1                                     # the row's own value has c > x rows
    e = equal + np.where(x == 0, d - seen, 0)         # unseen values tie with a lone row
    n_rest = d - 1 - m
    ok = n_rest >= k
    none_above = np.where(ok, np.exp(log_comb(np.maximum(n_rest, k), k) - log_comb(d - 1, k)),
                          0.0)
    # E[1 / (1 + T)], T hypergeometric (e of N = d - 1 - m, k draws), is
    # (C(N + 1, k + 1) - C(N - e, k + 1)) / ((e + 1) C(N, k)) (Vandermonde)
    big = np.maximum(n_rest, k)
    rest = n_rest - e
    ties = ((big + 1.0) / (k + 1.0) - np.where(
        rest >= k + 1, np.exp(log_comb(np.maximum(rest, k + 1), k + 1) - log_comb(big, k)),
        0.0)) / (e + 1.0)
    return float((none_above * np.where(ok, ties, 0.0) * c).sum() / c.sum())


def set_lambda(vs: "ValueSample", d: int, eta: int, alone: float | None = None) -> tuple:
    """(lambda, with, alone) of :func:`set_success`: the share of the errors
    of the adversary who reads the set alone (``alone``, computed here when
    not given) that the column(s) remove, (with - alone) / (1 - alone); NaN
    where it cannot be told or the agreement could be chance
    (n KL(with || alone) < ln(1 / ``GIVEN_ALPHA``))."""
    with_ = set_success(vs, d, eta)
    alone = set_success(vs, d, eta, alone=True) if alone is None else alone
    if not (with_ == with_ and alone < 1.0) or \
            int(vs.counts.sum()) * _kl(with_, alone) < -np.log(GIVEN_ALPHA):
        return float("nan"), with_, alone
    return (with_ - alone) / (1.0 - alone), with_, alone


def _mix64(words: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer of every 64-bit word (a bijection that mixes
    every bit into every other)."""
    z = np.asarray(words, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def order_keys(col: pd.Series) -> tuple:
    """How a column's cells sort, the same whether they were read as
    numbers or as text (a streamed CSV holds text): (kind, number, text)
    per cell, kind 0 for a number (ordered by ``number``), 1 for other text
    (ordered by ``text``, after every number), 2 for a missing cell (last).

    Examples
    --------
    >>> k, x, t = order_keys(pd.Series(["10", "9.5", "b", None]))
    >>> k.tolist(), x[:2].tolist(), t.tolist()
    ([0, 0, 1, 2], [10.0, 9.5], ['', '', 'b', ''])
    """
    s = col.reset_index(drop=True)
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(object)
    if pd.api.types.is_complex_dtype(s):        # no order: sorted as text
        s = s.astype(str).where(s.notna(), None)
    missing = s.isna().to_numpy(dtype=bool)
    if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
        # microseconds: nanoseconds overflowed on a date before 1677 (H37)
        if isinstance(s.dtype, pd.ArrowDtype) and "date" in str(s.dtype.pyarrow_dtype):
            import pyarrow as pa                # Arrow dates: no NumPy datetime of their own
            s = s.astype(pd.ArrowDtype(pa.timestamp("us")))
        dt = pd.api.types.is_datetime64_any_dtype(s)
        num = s.to_numpy(dtype="datetime64[us]" if dt else "timedelta64[us]",
                         na_value=np.datetime64("NaT", "us") if dt else
                         np.timedelta64("NaT", "us")).view(np.int64).astype(np.float64)
    elif pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
        num = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        # each distinct cell parsed once (a text column repeats its values)
        try:
            codes, uniq = pd.factorize(s.astype(object), use_na_sentinel=True)
        except TypeError:     # lists, arrays or dicts (a nested Parquet column)
            s = s.map(_cell_text, na_action="ignore")
            codes, uniq = pd.factorize(s.astype(object), use_na_sentinel=True)
        parsed = pd.to_numeric(pd.Series(uniq, dtype=object), errors="coerce") \
            .to_numpy(dtype=np.float64, na_value=np.nan)
        num = np.where(codes >= 0, parsed[np.maximum(codes, 0)], np.nan) if len(uniq) else \
            np.full(len(s), np.nan)           # every cell missing (an Arrow null column)
    text = ~missing & np.isnan(num)
    kind = np.where(missing, 2, np.where(text, 1, 0)).astype(np.int8)
    words = np.full(len(s), "", dtype=object)
    if text.any():
        try:
            words[text] = s[text].astype(str).to_numpy(dtype=object)
        except UnicodeDecodeError:
            # bytes (a binary column: hashes, thumbnails) sort by their
            # bytes; str() decodes them as UTF-8, which fails on most
            words[text] = s[text].astype(object).map(lambda v: v.decode("latin-1") if isinstance(
                v, (bytes, bytearray)) else str(v)).to_numpy(dtype=object)
    return kind, np.where(kind == 0, num, 0.0), words


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 0, ties given their average rank (Spearman's)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.concatenate([[True], xs[1:] != xs[:-1]])
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], xs.size)
    r = np.empty(x.size)
    r[order] = ((starts + ends - 1) / 2.0)[np.cumsum(new) - 1]
    return r


def monotone_findings(order: "OrderSample", pairs, found: list, where: str, exact,
                      generalized) -> list:
    """'order_recode' findings of the columns whose order follows a target
    of numbers (:meth:`OrderSample.monotone`, |rho| >= ``DETERMINES``),
    where no finding names the pair yet."""
    named = {(f["column"], f.get("sensitive", f.get("qi"))) for f in found
             if f["check"] in ("recode", "qi_recode", "order_recode")}
    out = []
    for (c, t), rho in order.monotone().items():
        if (c, t) not in pairs or (c, t) in named or not abs(rho) >= DETERMINES:
            continue
        qi = t in generalized
        out.append(dict(_order_recode(
            c, t, c in exact, qi, abs(rho),
            f"order follows {'the QI ' if qi else ''}{t!r}: their rank correlation is "
            f"{rho:.2f}{where}, so it gives each row's rank in {t!r}",
            "whoever sorts the published values of a set, a bucket or a class by it reads "
            "each row's"), by="rank"))       # its value is |rho|, not a lambda
    return out


def _order_recode(c, t, is_exact: bool, qi: bool, value: float, what: str, how: str) -> dict:
    """An 'order_recode' finding of column ``c`` on target ``t``: ``what``
    the order does, ``how`` it publishes the target."""
    kind = "exact" if is_exact else "pass-through"
    core = f"{what}: published {'exactly' if is_exact else 'unchanged'}, it publishes "
    core += (f"{t!r} at its exact values beside its generalization" if qi else
             f"{t!r} nearly in the clear ({how})")
    remedy, says = _remedy(is_exact, qi)
    return {"check": "order_recode", "column": c, ("qi" if qi else "sensitive"): t,
            "value": round(value, 4),
            "why": f"is {'an' if is_exact else 'a'} {kind} column whose "
                   + core.replace("it publishes", "it would publish"),
            "remedy": remedy, "message": f"{kind} column {c!r}: its {core}; {says}"}


class OrderSample:
    """The first rows of the columns published as they are, with a 16-bit
    hash of each target (sensitive column, generalized QI) per row, to
    measure how well a column's ORDER predicts a target: sorted by the
    column, the share of adjacent rows that hold the same target value,
    expected over every order of the rows that share a cell (so it depends
    on nothing but the cells: not on the input order, the blocks or the
    path).

    That share is what a run of rows in the column's order gives away: the
    rows of a run share their true value, so it is in every one of their
    sets, and their sets intersected leave little else.  A row number of a
    file sorted by race, or an income in thousands beside its bins published
    as sensitive, puts nearly every row in a long run; an unrelated column
    leaves adjacent rows agreeing only by chance (sum of the squared shares).
    """

    def __init__(self, columns: Iterable[str], targets: Iterable[str]):
        self.columns, self.targets = list(columns), list(targets)
        self.pieces = []           # ({column: order_keys}, {target: hashes}, {target: numbers})

    def add(self, part: pd.DataFrame, subs: dict, nums=None) -> None:
        """``nums``: the numbers of the targets that are numbers (their
        values, or bins, in their order), for :meth:`monotone`, or a
        function of a target that gives them: called only where some column
        is one of numbers (text columns have no rank to follow)."""
        keys = {c: order_keys(part[c]) for c in self.columns}
        if callable(nums):
            numeric = any(k[0].size and (k[0] != 0).mean() <= 0.01 for k in keys.values())
            nums = {t: nums(t) for t in self.targets} if numeric else {}
        self.pieces.append((keys, {t: np.asarray(subs[t], dtype=np.uint16) for t in self.targets},
                            {t: np.asarray(v, dtype=np.float64) for t, v in (nums or {}).items()}))

    def monotone(self) -> dict:
        """{(column, target): Spearman's rank correlation} of every column
        whose cells are numbers (or dates) with every target given as
        numbers, on the rows where both are.  Where it is near 1 in size the
        column's order is the target's: a row number of a file sorted by
        income, a date that rises with the salary.  With many distinct values
        adjacent rows rarely agree (:meth:`agreement` misses it), yet the
        order gives each row's rank, and whoever ranks a bucket's or a
        class's published values by it reads every row's value."""
        if not self.pieces:
            return {}
        out = {}
        nums = {t: np.concatenate([p[2][t] for p in self.pieces])
                for t in self.pieces[0][2] if all(t in p[2] for p in self.pieces)}
        nums = {t: y for t, y in nums.items() if (~np.isnan(y)).sum() >= MONOTONE_ROWS}
        whole = {t: _ranks(y) for t, y in nums.items() if not np.isnan(y).any()}
        for c in self.columns:
            kind = np.concatenate([p[0][c][0] for p in self.pieces])
            x = np.concatenate([p[0][c][1] for p in self.pieces])
            if kind.size < MONOTONE_ROWS or (kind != 0).mean() > 0.01:
                continue                # not a column of numbers
            full = bool((kind == 0).all())
            rx_all = _ranks(x) if full else None
            for t, y in nums.items():
                if full and t in whole:         # the ranks of both, computed once
                    rx, ry = rx_all, whole[t]
                else:
                    ok = (kind == 0) & ~np.isnan(y)
                    if ok.sum() < MONOTONE_ROWS:
                        continue
                    rx, ry = _ranks(x[ok]), _ranks(y[ok])
                if rx.std() == 0 or ry.std() == 0:
                    continue
                out[(c, t)] = float(np.corrcoef(rx, ry)[0, 1])
        return out

    def merge(self, other: "OrderSample") -> None:
        self.pieces += other.pieces

    def agreement(self) -> dict:
        """{(column, target): (lambda, share of adjacent rows that agree,
        prior: the most common value's share, significant)}; ``lambda`` =
        (agree - prior) / (1 - prior), and ``significant``: the agreement is
        no accident, n KL(agree || chance) >= ln(1 / ``GIVEN_ALPHA``)
        (Chernoff) with chance the sum of the squared shares.

        Rows that share a cell form a block; in a random order of each
        block, two adjacent rows of block b agree with probability
        sum_s n_bs (n_bs - 1) / (n_b (n_b - 1)) over its n_b - 1 pairs, and
        the last row of b and the first of b + 1 with probability
        sum_s n_bs n_(b+1)s / (n_b n_(b+1))."""
        if not self.pieces or not self.targets:
            return {}
        subs = {t: np.concatenate([p[1][t] for p in self.pieces]) for t in self.targets}
        n = subs[self.targets[0]].size
        if n < 2:
            return {}
        out = {}
        for c in self.columns:
            kind = np.concatenate([p[0][c][0] for p in self.pieces])
            num = np.concatenate([p[0][c][1] for p in self.pieces])
            words = np.concatenate([p[0][c][2] for p in self.pieces])
            text = pd.factorize(words, sort=True)[0] if (kind == 1).any() \
                else np.zeros(n, dtype=np.int64)
            order = np.lexsort((text, num, kind))
            k, x, w = kind[order], num[order], text[order]
            new = np.concatenate([[True], (k[1:] != k[:-1]) | (x[1:] != x[:-1]) |
                                  (w[1:] != w[:-1])])
            block = np.cumsum(new) - 1                     # blocks in the column's order
            size = np.bincount(block).astype(np.float64)
            for t in self.targets:
                x_t = subs[t]
                share = np.bincount(x_t, minlength=1) / n
                prior = float(share.max())
                chance = float((share ** 2).sum())
                u, cnt = np.unique(block * 65536 + x_t[order].astype(np.int64),
                                   return_counts=True)
                b, cnt = u >> 16, cnt.astype(np.float64)
                within = float((cnt * (cnt - 1.0) / size[b]).sum())
                nxt = u + 65536                            # the same value, the next block
                at = np.minimum(np.searchsorted(u, nxt), u.size - 1)
                hit = u[at] == nxt
                between = float((cnt[hit] * cnt[at[hit]] /
                                 (size[b[hit]] * size[b[hit] + 1])).sum())
                agree = min(1.0, (within + between) / (n - 1))
                lam = 0.0 if prior >= 1.0 else (agree - prior) / (1.0 - prior)
                sig = bool(agree > chance and (n - 1) * _kl(agree, chance) >=
                           -np.log(GIVEN_ALPHA))
                out[(c, t)] = (lam, agree, prior, sig)
        return out


# ------------------------------------------------------------- at publishing
#: Rows a publishing-time check reads: the table's first ones (the audit with
#: the original data reads them all).  Enough to measure a lambda or a share
#: of lone values to a few thousandths, at a cost lost in the noise of
#: publishing a 2,000,000-row file (docs/scaling.md; 1,000,000 rows added
#: about 17 %).
CHECK_ROWS = 250_000
#: Distinct values a publishing-time sample holds at most (about 1 MB).
CHECK_BUDGET = 1 << 16
#: Rows drawn at random from the whole table that the recodes are
#: measured on (the likely identifier: the first ``CHECK_ROWS`` rows).
SAMPLE_ROWS = 1 << 17
#: Rows the check of two columns together reads at most (a lambda to about
#: a hundredth; every pair of columns published as they are is measured):
#: fewer where there are many pairs, so that rows x (pair, target) stays
#: within ``JOINT_CELLS`` (4,096 rows at least).
JOINT_ROWS = 1 << 16
#: Pairs of columns of numbers verified for a linear rule per target, the
#: best fits first (:func:`~anonset.randomized.pair_adversary.rule_candidates`).
RULE_PAIRS = 8
JOINT_CELLS = 1 << 24


class RowSample:
    """Rows drawn at random from a table that arrives in parts: the ``k``
    rows whose global row index has the smallest :func:`_mix64` words.  The
    same rows whatever the parts and their order (merge two samples: the
    smallest of both), in bounded memory (at most 2k rows held); a part that
    knows the table's length takes only its share with :attr:`cut`
    (:func:`sample_cut`)."""

    def __init__(self, k: int):
        self.k = k
        self.cut = None          # the largest word kept, once k rows are held
        self._pool: list = []    # (words, rows)
        self._held = 0

    def add(self, frame: pd.DataFrame, row0: int, columns=None) -> None:
        """Rows ``row0 ..`` of the table (``columns`` of them: the rows are
        taken first, so a large frame is not copied whole)."""
        if not len(frame):
            return
        words = _mix64(np.arange(row0, row0 + len(frame), dtype=np.int64))
        keep = np.flatnonzero(words <= self.cut) if self.cut is not None \
            else np.arange(len(frame))
        if keep.size > self.k:                     # a large part: its own smallest first
            keep = np.sort(keep[np.argpartition(words[keep], self.k - 1)[:self.k]])
        if keep.size:
            rows = frame.iloc[keep]
            self._pool.append((words[keep], (rows if columns is None else rows[columns])
                               .reset_index(drop=True)))
            self._held += keep.size
            if self._held > 2 * self.k:
                self._trim()

    def merge(self, other: "RowSample") -> None:
        self._pool += other._pool
        self._held += other._held
        if self._held > 2 * self.k:
            self._trim()

    def _trim(self) -> None:
        words = np.concatenate([w for w, _ in self._pool])
        frame = pd.concat([f for _, f in self._pool], ignore_index=True)
        order = np.argsort(words, kind="stable")[:self.k]
        self._pool = [(words[order], frame.iloc[order].reset_index(drop=True))]
        self._held = order.size
        if order.size == self.k:
            self.cut = words[order[-1]]

    def frame(self, columns=()) -> pd.DataFrame:
        """The sample, in the order of its words."""
        if not self._pool:
            return pd.DataFrame(columns=list(columns))
        self._trim()
        return self._pool[0][1]


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

    Every publisher now refuses such a column unless the user names it
    (``allow_identifier``, ``allow_recode``), and a named one is not warned
    of: the summary, the metadata and the audit name it instead.  The class
    stays for code that filters it, and for :func:`warn_findings`.
    """


class PassThroughCheck:
    """The two measures of every pass-through column, gathered block by
    block at publishing time (mergeable, as the engine's statistics are).

    The sensitive values are not encoded yet (their domain may be read off
    the whole table), so a 16-bit hash of each stands for it: equal values,
    equal hashes; two values that share a hash (for a column of d values,
    with probability about d^2 / 2^17) count as one, which can make a column
    look more predictive than it is.  A warning is a prompt to look: the
    audit with the original data measures on the codes.

    Which rows: a likely identifier is measured over the first
    ``CHECK_ROWS`` rows (a value's rows must be seen together to tell it
    shared); the recodes over ``SAMPLE_ROWS`` rows drawn at random from the
    whole table (those with the smallest :func:`_mix64` words of their
    global row index: the same rows on every path, whatever the blocks), so
    that a file sorted by a sensitive column, whose first rows hold one of
    its values, is measured as a shuffled one (a census file sorted by state
    shows one state in its first 250,000 rows, and nothing recodes a
    constant).
    """

    def __init__(self, passthrough: Iterable[str], sensitive: Iterable[str],
                 exact: Iterable[str] = (), *, generalized: Iterable[str] = (),
                 bins: dict | None = None, budget: int | None = CHECK_BUDGET,
                 rows: int | None = None, sample_rows: int | None = None,
                 earlier: Iterable[str] = (), earlier_targets: Iterable[str] = (),
                 beside: Iterable[str] = ()):
        passthrough, sensitive, exact = list(passthrough), list(sensitive), list(exact)
        # sensitive columns a partition release publishes exactly on each
        # row (msa's SAs): one of them beside a pass-through column may give
        # a generalized QI (BMI published as an SA and the height passed
        # through give the weight; H36); alone it may give one too (the
        # tenure squared gives the tenure)
        self.beside = [c for c in beside if c not in passthrough]
        # a persistent-key series links each record's rows across its
        # releases (a record keeps its sets): columns an earlier release
        # published as they are read with this release's (an admission date
        # then, a discharge date now: the stay; H36), and columns it
        # published as sets are targets too.  Every finding that reads one
        # of this release's columns is measured on this input, also one an
        # earlier release measured on its own (a panel's values change from
        # wave to wave: H40, a dose that follows the arm only in wave 2)
        self.now = set(passthrough) | set(exact) | set(sensitive) | set(generalized)
        self.earlier = [c for c in earlier if c not in passthrough and c not in exact]
        self.earlier_targets = [c for c in earlier_targets if c not in self.now]
        ids_of = passthrough
        passthrough = passthrough + self.earlier
        sensitive = sensitive + self.earlier_targets
        # a sensitive column published in bins is predicted by its bin, which
        # is what its sets hold (a bracket column beside an income binned
        # the same way predicts every bin, and hardly an exact income)
        self.bins = {c: np.asarray(e, dtype=np.float64) for c, e in (bins or {}).items()
                     if c in sensitive}
        # an exact QID published in bins is measured as published: by its bin
        # (Adult's age in [0, 30) tells salary-class far less than age 19)
        self.exact_bins = {c: np.asarray(e, dtype=np.float64) for c, e in (bins or {}).items()
                           if c in exact}
        self.budget = budget
        self.ids = {c: ValueSample(budget) for c in ids_of}
        # an exact QID (paper 004) is published as it is too: it may recode a
        # sensitive column (a code beside its label); singling rows out is
        # what a QID does, so it has no identifier check
        self.exact = exact
        self.passthrough = passthrough
        self.sensitive = sensitive
        # a QI that the release generalizes (LGB, msa, Mondrian, TP): a
        # pass-through column that recodes it (a birth year beside an age
        # published as [30-39]) publishes it at its exact values, and whoever
        # knows a person's QIs finds their row inside its group
        self.generalized = [q for q in generalized if q not in sensitive]
        self.targets = sensitive + self.generalized
        #: (column published as it is, target) pairs measured, one column and
        #: two together (year and birth year, published exactly, give the
        #: age that the sets hide)
        as_is = passthrough + exact
        self.pair_keys = [(c, s) for c in as_is for s in sensitive if c != s] + \
            [(c, q) for c in passthrough for q in self.generalized]
        self.joint_keys = [((a, b), t) for i, a in enumerate(as_is) for b in as_is[i + 1:]
                           for t in sensitive + (self.generalized if a in passthrough and
                                                 b in passthrough else []) if t not in (a, b)] + \
            [((a, b), q) for a in passthrough for b in self.beside for q in self.generalized] + \
            [((a, b), q) for i, a in enumerate(self.beside) for b in self.beside[i + 1:]
             for q in self.generalized]
        self.rows = CHECK_ROWS if rows is None else rows
        self.sample_rows = SAMPLE_ROWS if sample_rows is None else sample_rows
        self.joint_rows = max(4096, min(JOINT_ROWS, JOINT_CELLS // max(1, len(self.joint_keys))))
        self.seen = 0            # rows of the table (a bound: the largest row + 1)
        self._columns = list(dict.fromkeys(as_is + self.targets))
        self._rows = RowSample(self.sample_rows)
        self._measured = None    # the sample's rows, measured (pairs, joint, order)

    def add(self, block: pd.DataFrame, row0: int) -> "PassThroughCheck":
        self.seen = max(self.seen, row0 + len(block))
        self._measured = None
        take = min(len(block), self.rows - row0)
        if take > 0 and self.pair_keys:
            for c in self.ids:
                self.ids[c].add(hash_cells(block[c].iloc[:take]))
        # (an SA beside is read alone toward each generalized QI too)
        if not (self.pair_keys or self.joint_keys or (self.beside and self.generalized)) \
                or not len(block):
            return self
        self._rows.add(block, row0, self._columns)
        return self

    @property
    def cut(self):
        """The largest row word the sample keeps (:class:`RowSample`)."""
        return self._rows.cut

    @cut.setter
    def cut(self, value) -> None:
        self._rows.cut = None if value is None else np.uint64(value)

    def sample(self) -> pd.DataFrame:
        """The rows the recodes are measured on, in the order of their words."""
        return self._rows.frame(self._columns)

    def _measure(self) -> None:
        """The pairs', the joint and the order samples of :meth:`sample`."""
        if self._measured is not None:
            return
        part = self.sample()
        self.pairs = {k: ValueSample(self.budget) for k in self.pair_keys}
        # an SA beside, alone toward a QI: a finding of its own, and what a
        # pair of it must do better than (H45: 'tenursq' gives the tenure
        # alone; beside a dummy SA the pair was refused, and the remedy, the
        # dummy dropped, published it all the same)
        self.beside_alone = {(b, q): ValueSample(self.budget) for b in self.beside
                             for q in self.generalized}
        self.joint = {k: ValueSample(self.budget) for k in self.joint_keys}
        # an SA that one or two generalized QIs give (a birth year from the
        # survey year and the age): whoever knows a person's QIs knows it,
        # and finds their row inside its group by it (H50)
        qis = self.generalized
        self.from_qis = {(qs, b): ValueSample(self.budget) for b in self.beside
                         for qs in [(q,) for q in qis] +
                         [(a, c) for i, a in enumerate(qis) for c in qis[i + 1:]]} \
            if self.beside else {}
        # (msa's SAs too: an SA whose order follows a generalized QI gives
        # each row's rank in it, H50)
        self.order = OrderSample(self.passthrough + self.exact + self.beside, self.targets)
        if len(part):
            sub = {s: hash_cells(self._binned(part[s], self.bins[s]) if s in self.bins
                                 else part[s]) & np.uint64(0xFFFF) for s in self.targets}
            hashes = {c: hash_cells(self._binned(part[c], self.exact_bins[c])
                                    if c in self.exact_bins else part[c])
                      for c in self.passthrough + self.exact + self.beside}
            for (c, s), vs in self.pairs.items():
                vs.add(hashes[c], sub[s])
            # (rows, not distinct rows: counted once where alike in the SA
            # and every QI, a tenure squared beside the tenure alone left 14
            # rows and passed, H50; one person's several rows, a panel whose
            # person id was dropped, then predict each other: H49)
            for (c, s), vs in self.beside_alone.items():
                vs.add(hashes[c], sub[s])
            if self.from_qis:
                qh = {q: hash_cells(part[q]) for q in self.generalized}
                for (qs, b), vs in self.from_qis.items():
                    key = qh[qs[0]] if len(qs) == 1 else _pair_hash(qh[qs[0]], qh[qs[1]])
                    vs.add(key, sub[b])
            self.order.add(part, sub, lambda s: self._numbers(part[s], self.bins.get(s)))
            k = min(len(part), self.joint_rows)
            for ((a, b), t), vs in self.joint.items():
                vs.add(_pair_hash(hashes[a][:k], hashes[b][:k]), sub[t][:k])
        self._measured = len(part)

    @classmethod
    def _numbers(cls, col: pd.Series, edges) -> np.ndarray:
        """A target's cells as numbers in its order (its bins' indices where
        it has bins; NaN for a missing cell), or all NaN where some cells
        are not numbers (text: no order to follow)."""
        if edges is not None:
            b = cls._binned(col, edges).to_numpy(dtype=np.float64)
            return np.where(b < 0, np.nan, b)
        col = col.reset_index(drop=True)
        if isinstance(col.dtype, pd.CategoricalDtype):
            # its values, not its codes (a Categorical of dates hid a rule: H36)
            col = pd.Series(np.asarray(col))
        if _is_dates(col):
            return _day_numbers(col)
        x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        present = col.notna().to_numpy()
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            # a CSV file's text: its missing-value markers ('', 'NA') are
            # missing cells, not text that is no number (H32); other
            # objects (lists, arrays) are no numbers, and no markers
            from .io.tables import NA_MARKERS
            present = present & ~np.fromiter(
                (isinstance(v, str) and v in NA_MARKERS for v in col.to_numpy(dtype=object)),
                dtype=bool, count=len(col))
        if present.any() and np.isnan(x[present]).mean() > 0.01:
            # dates written as ISO text are numbers too: days (H33), and so
            # are numbers written with a unit ('45 years', '$1,200'); each
            # distinct text read once
            try:
                codes, uniq = pd.factorize(col.where(present), use_na_sentinel=True)
            except TypeError:        # lists or arrays (a nested column): no numbers
                return np.full(len(x), np.nan)
            vals = pd.Series(np.asarray(uniq, dtype=object))
            every = np.ones(len(vals), dtype=bool)
            cells = np.bincount(codes[codes >= 0], minlength=len(vals))    # rows of each
            days = _iso_days(vals, every, cells) if len(vals) else None
            if days is None and len(vals):
                days = _unit_numbers(vals, every, cells)
            if days is None:
                return np.full(len(x), np.nan)
            return np.where(codes >= 0, days[np.maximum(codes, 0)], np.nan)
        return np.where(present, x, np.nan)

    @staticmethod
    def _binned(col: pd.Series, edges: np.ndarray) -> pd.Series:
        """Each cell's bin (as the encoder finds it; -1 for a missing cell
        or one that is no number, which publishing refuses anyway), the
        same whether the cell was read as a number or as text."""
        x = pd.to_numeric(col.reset_index(drop=True), errors="coerce") \
            .to_numpy(dtype=np.float64, na_value=np.nan)
        return pd.Series(np.where(np.isnan(x), -1, np.searchsorted(edges, x, side="right") - 1))

    def merge(self, other: "PassThroughCheck") -> "PassThroughCheck":
        self.seen = max(self.seen, other.seen)
        self._measured = None
        for k, v in other.ids.items():
            self.ids[k].merge(v)
        self._rows.merge(other._rows)
        return self

    def findings(self) -> list:
        """One finding per likely identifier, recode, order recode and
        partial recode: ``{'check': 'identifier', 'recode', 'order_recode',
        'given_away' or 'qi_recode', 'column', 'sensitive' (None for an
        identifier; 'qi' for a qi_recode and an order recode of a
        generalized QI), 'value' (the share of the rows, or lambda),
        'message'}``; a 'given_away' finding is one per column, its
        'sensitive' and 'value' lists (one entry per attribute)."""
        out = []
        self._measure()
        first = f" (in the first {self.rows:,} rows)" if self.seen > self.rows else ""
        for c, s in self.ids.items():
            share = s.singleton_share()
            if share == share and share >= IDENTIFIER_SHARE:
                core = (f"{share:.1%} of the rows hold a value no other row has{first}"
                        f"{_sampled(s)}: published unchanged, it singles those rows out (a "
                        "likely identifier)")
                out.append({"check": "identifier", "column": c, "sensitive": None,
                            "value": round(share, 4),
                            "why": f"is a pass-through column: {core}",
                            "message": f"pass-through column {c!r}: {core}; name it an "
                                       "identifier or drop it"})
        where = self._where(self._measured)
        away = {}                 # column -> [(sensitive, share, sample)]
        for (c, sens), s in self.pairs.items():
            lam, acc, prior = s.determination()
            # an exact QID's values too: 'Husband' published exactly tells
            # every reader that row's sex, whether or not they knew it
            if lam == lam and lam < DETERMINES and sens in self.sensitive and \
                    (c in self.ids or c in self.exact or c in self.earlier):
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
            else:
                core += (f"{'exactly' if exact else 'unchanged'}, it publishes {sens!r} nearly "
                         "in the clear")
            remedy, says = _remedy(exact, qi)
            out.append({"check": "qi_recode" if qi else "recode", "column": c,
                        ("qi" if qi else "sensitive"): sens, "value": round(lam, 4),
                        "why": f"is {'an' if exact else 'a'} {kind} column that "
                               + core.replace("it publishes", "it would publish"),
                        "remedy": remedy, "message": f"{kind} column {c!r} {core}; {says}"})
        # an SA published exactly on each row (msa) that alone gives a QI
        # msa generalizes: whoever knows a person's QI finds their row
        # inside its group, and with it every SA of the row ('tenursq'
        # gives the tenure; published without a word before, H36's carry)
        for (c, q), vs in self.beside_alone.items():
            lam, acc, prior = vs.determination()
            # (an association the QI's generalization hides is of use only
            # where it is known from elsewhere: a rule, or one that holds on
            # many rows; on a few rows it may be chance, and every msa
            # release has SAs beside its QIs: 30 rows predicted at least)
            if not (lam == lam and lam >= DETERMINES) or vs.shared_rows() < SA_ALONE_ROWS:
                continue
            core = (f"predicts the QI {q!r} for {acc:.1%} of the rows from the other rows "
                    f"with the same value (the most common value alone: {prior:.1%}; lambda "
                    f"{lam:.2f}){where}{_sampled(vs)}: published exactly on each row beside "
                    f"{q!r} generalized, it publishes {q!r} at its exact values, and whoever "
                    f"knows a person's {q!r} finds their row inside its group")
            out.append({"check": "qi_recode", "column": c, "qi": q, "value": round(lam, 4),
                        "why": f"is a sensitive attribute that {core}",
                        "remedy": "it dropped, or made a QI instead",
                        "message": f"sensitive attribute {c!r} {core}; drop it, or make it a "
                                   "QI instead"})
        # an SA that predicts every QI is most likely one person's value on
        # their several rows (a professor's beauty score on each course,
        # its person id dropped: H49, H51), which it links: say so
        every = {}
        for f in out:
            if f["check"] == "qi_recode" and (f["column"], f.get("qi")) in self.beside_alone:
                every.setdefault(f["column"], set()).add(f["qi"])
        for f in out:
            if len(self.generalized) > 1 and every.get(f["column"]) == set(self.generalized) \
                    and (f["column"], f.get("qi")) in self.beside_alone:
                hint = (" (it predicts every QI: rows that share its value may be one "
                        "person's rows, which it links, and msa counts rows as people)")
                f["why"] += hint
                f["message"] = f["message"].replace("; drop it, or make it", hint +
                                                    "; drop it, or make it", 1)
        # an SA that one or two QIs give: found once per SA, by the fewest
        # QIs, where the SA alone gives none of them (that is named above)
        alone = {f["column"] for f in out if f["check"] == "qi_recode"}
        for (qs, b), vs in sorted(self.from_qis.items(), key=lambda kv: len(kv[0][0])):
            lam, acc, prior = vs.shared_determination()
            if b in alone or not (lam == lam and lam >= DETERMINES) or \
                    vs.shared_rows() < SA_ALONE_ROWS:
                continue
            alone.add(b)
            named = " and ".join(repr(q) for q in qs)
            core = (f"is given by the QI{'s' if len(qs) > 1 else ''} {named} for {acc:.1%} of the "
                    f"rows whose {'values' if len(qs) > 1 else 'value'} other rows share, from "
                    f"those rows"
                    f" (the most common value alone: {prior:.1%}; lambda {lam:.2f}){where}"
                    f"{_sampled(vs)}: whoever knows a person's {named} knows it, and published "
                    f"exactly on each row it finds their row inside its group beside "
                    f"{named} generalized")
            out.append({"check": "qi_recode", "column": b, "qi": ", ".join(qs),
                        "value": round(lam, 4), "by": "qis",
                        "why": f"is a sensitive attribute that {core}",
                        "remedy": "it dropped, or made a QI instead",
                        "message": f"sensitive attribute {b!r} {core}; drop it, or make it a "
                                   "QI instead"})
        # an order recode, where the values alone predict less
        whole = {(f["column"], f.get("sensitive", f.get("qi"))) for f in out
                 if f["check"] in ("recode", "qi_recode")}
        for (c, sens), (lam, agree, prior, sig) in self.order.agreement().items():
            if (c, sens) not in self.pairs or (c, sens) in whole or not sig \
                    or lam < DETERMINES:
                continue
            qi = sens in self.generalized
            out.append(_order_recode(
                c, sens, c in self.exact, qi, lam,
                f"order predicts {'the QI ' if qi else ''}{sens!r}: sorted by it, {agree:.1%} "
                f"of adjacent rows hold the same {sens!r} (the most common value alone: "
                f"{prior:.1%}; lambda {lam:.2f}){where}, although few rows share a value",
                "rows next to each other in its order share their value"))
        # an order that follows a target of numbers (its rank, and so its value)
        out += monotone_findings(self.order, self.pairs, out, where, self.exact,
                                 self.generalized)
        # ... an SA's too, toward a QI msa generalizes (a weight measured
        # again, published as an SA beside the weight generalized: refused
        # passed through, published as an SA, H50)
        named = {(f["column"], f.get("qi")) for f in out}
        for (c, q), rho in self.order.monotone().items():
            if (c, q) not in self.beside_alone or (c, q) in named or not abs(rho) >= DETERMINES:
                continue
            core = (f"order follows the QI {q!r}: their rank correlation is {rho:.2f}{where}, "
                    f"so published exactly on each row beside {q!r} generalized, it gives each "
                    f"row's rank in {q!r}, and whoever knows a person's {q!r} finds their row "
                    "inside its group")
            out.append({"check": "order_recode", "column": c, "qi": q, "by": "rank",
                        "value": round(abs(rho), 4),
                        "why": f"is a sensitive attribute whose {core}",
                        "remedy": "it dropped, or made a QI instead",
                        "message": f"sensitive attribute {c!r}: its {core}; drop it, or make "
                                   "it a QI instead"})
        # two columns together, where neither alone recodes the target, or
        # where together they remove at least half of the errors one of them
        # leaves (H28: a birth year that alone gives age away at lambda 0.93,
        # named in allow_recode, gave it exactly beside the survey year
        # nobody named)
        where2 = self._where(min(self._measured, self.joint_rows))
        for ((a, b), t), vs in self.joint.items():
            alone = [f for f in lambda_findings(out) + self._beside_alone()
                     if f["column"] in (a, b) and f.get("sensitive", f.get("qi")) == t]
            lam, acc, prior = vs.determination()
            if not (lam == lam and lam >= DETERMINES):
                continue
            beyond = ""
            if alone:
                best = max(alone, key=lambda f: f["value"])
                if not 1.0 - lam < (1.0 - float(best["value"])) / 2.0:
                    continue                  # no better than the one alone
                beyond = (f", more than {best['column']!r} alone (lambda "
                          f"{float(best['value']):.2f})")
            exact = a in self.exact or b in self.exact
            qi = t in self.generalized
            core = (f"together with column {b!r}, predicts {'the QI ' if qi else ''}{t!r} for "
                    f"{acc:.1%} of the rows from the other rows with the same pair of values "
                    f"(the most common value alone: {prior:.1%}; lambda {lam:.2f}{beyond})"
                    f"{where2}"
                    f"{_sampled(vs)}: published {'exactly' if exact else 'unchanged'}, the two "
                    "publish ")
            core += (f"{t!r} at its exact values beside its generalization" if qi else
                     f"{t!r} nearly in the clear")
            remedy, says = _remedy(exact, qi, two=True)
            out.append({"check": "qi_recode" if qi else "recode", "column": a, "with": b,
                        ("qi" if qi else "sensitive"): t, "value": round(lam, 4),
                        "why": core.replace("the two publish", "the two would publish"),
                        "remedy": remedy, "message": f"column {a!r}, {core}; {says}"})
        out += self._rule_findings(out)
        # in a series, what reads none of this release's columns is left out
        away = {c: [e for e in v if self._new_here([c], e[0])] for c, v in away.items()}
        out = [f for f in out if (away.get(f["column"]) if f["check"] == "given_away" else
                                  self._new_here(columns_of(f), f.get("sensitive", f.get("qi"))))]
        # a partial recode: one finding per column, naming every attribute
        for f in out:
            if f["check"] == "given_away":
                found = away[f["column"]]
                shares = [(a, v) for a, v, _ in found]
                at = where + _sampled(found[0][2])
                f.update({"sensitive": [a for a, _, _ in found],
                          "value": [round(v, 4) for _, v, _ in found],
                          "why": given_away_message(f["column"], shares, at, why=True,
                                                    exact=f["column"] in self.exact),
                          "remedy": _remedy(f["column"] in self.exact, False)[0],
                          "message": given_away_message(f["column"], shares, at,
                                                        exact=f["column"] in self.exact)})
        return [self._in_series(f) for f in out]

    def _beside_alone(self) -> list:
        """The lambda of each SA beside (:attr:`beside`) alone toward each
        generalized QI, as findings of one column (never reported: the
        baseline a pair holding it must beat)."""
        self._measure()
        out = []
        for (c, q), vs in self.beside_alone.items():
            lam, _, _ = vs.determination()
            if lam == lam:
                out.append({"check": "qi_recode", "column": c, "qi": q, "value": lam})
        return out

    def _new_here(self, cols, target) -> bool:
        """Whether a finding on ``cols`` and ``target`` is this release's to
        judge: one of its own columns only, or one that reads an earlier
        release's columns beside at least one of this release's (one of
        earlier columns only, this release publishes nothing of)."""
        targets = set(target) if isinstance(target, list) else {target} - {None}
        if not (set(cols) & set(self.earlier)) and not (targets & set(self.earlier_targets)):
            return True
        return bool((set(cols) | targets) & self.now)

    def too_few(self, least: int = 30, *, text: bool = False) -> list:
        """The earlier columns (:attr:`earlier`, :attr:`earlier_targets`)
        that hold a value in fewer than ``least`` of the rows the check
        read: blank in this input (not collected this wave), they cannot be
        measured beside this release's columns (H40: an all-blank admission
        date passed the release that published the discharge date).
        ``text``: a CSV file's cells, whose missing-value markers ('', 'NA')
        are blank (in a typed table only '' is: 'None' is a value, H41)."""
        from .io.tables import NA_MARKERS
        part = self.sample()
        out = []
        blank = NA_MARKERS if text else {""}
        for c in self.earlier + self.earlier_targets:
            if c not in part.columns:
                continue
            vals = part[c].to_numpy(dtype=object)
            present = part[c].notna().to_numpy() & ~np.fromiter(
                (isinstance(v, str) and v.strip() in blank for v in vals), dtype=bool,
                count=len(vals))
            if int(present.sum()) < min(least, len(part)) or not len(part):
                out.append((c, int(present.sum()), len(part)))
        return out

    def _in_series(self, f: dict) -> dict:
        """A finding that reads a column of an earlier release of the series,
        marked (``'series'``: those columns) and said so in its words; its
        remedy is about this release's columns (the earlier ones are out)."""
        t = f.get("sensitive", f.get("qi"))
        before = [c for c in columns_of(f) if c in self.earlier] + \
            [c for c in (t if isinstance(t, list) else [t]) if c in self.earlier_targets]
        if not before:
            return f
        here = [c for c in columns_of(f) if c not in self.earlier]
        names = " and ".join(repr(c) for c in before)
        note = (f" ({names} {'was' if len(before) == 1 else 'were'} published by an earlier "
                "release of the series, whose rows this release's rows are linked to: a "
                "record keeps its sets under the series' persistent key; measured on this "
                "input's values, which must be those that release published)")
        for c in before:
            # a column this release does not publish is no pass-through one
            for a, b in (("is a pass-through column that", "was published as it is by an "
                          "earlier release, and"),
                         ("is a pass-through column some of whose values",
                          "was published as it is by an earlier release, and some of its "
                          "values"),
                         ("is a pass-through column whose", "was published as it is by an "
                          "earlier release, and its")):
                if f.get("column") == c:
                    f = dict(f, why=f["why"].replace(a, b, 1))
            f = dict(f, message=f["message"].replace(f"pass-through column {c!r}",
                                                     f"column {c!r} (an earlier release's)"))
        mine = " and ".join(repr(c) for c in here)
        gone = ", ".join(repr(c) for c in (t if isinstance(t, list) else [t]))
        # no column of this release's published as it is: what it gives away
        # is this release's (sets of a column the earlier one read beside)
        remedy, says = (f"{mine} left out of this release, or published as sensitive",
                        f"leave {mine} out of this release, or publish it as sensitive") \
            if here else (f"{gone} left out of this release",
                          f"leave {gone} out of this release")
        f = dict(f, series=before, why=f["why"] + note, remedy=remedy)
        head, _, _ = f["message"].rpartition("; ")
        f["message"] = f"{head}{note}; {says}"
        return f

    def _rule_findings(self, out: list) -> list:
        """Two columns of numbers published as they are, between which a
        linear rule gives a target of numbers: the survey year and the
        birth year give the age, however few rows share a pair of them (the
        joint counts above see none of it; H28: a partition release
        published every row's age so).  Measured on the joint sample's
        rows (:func:`rule_recodes`); one finding per (pair, target), as the
        joint counts' findings."""
        part = self.sample()
        k = min(len(part), self.joint_rows)
        if k < 30:
            return []
        part = part.iloc[:k]
        helpers = {c: self._numbers(part[c], None)
                   for c in self.passthrough + self.exact + self.beside
                   if c not in self.exact_bins}     # published as its bins: no number
        targets = {t: (self._numbers(part[t], None), self.bins.get(t)) for t in self.targets}
        done = {(frozenset(columns_of(f)), f.get("sensitive", f.get("qi"))) for f in out}
        where = self._where(k)
        found = []
        for r in rule_recodes(
                helpers, targets, {t: [f for f in out + self._beside_alone()
                                       if not f.get("with") and
                                       f.get("sensitive", f.get("qi")) == t] for t in targets},
                # (an SA beside: toward a generalized QI only, the SAs being
                # published exactly themselves)
                pairs_of=lambda t: (self.passthrough + self.beside if t in self.generalized else
                                    self.passthrough + self.exact if self.beside else None),
                done=done):
            t, (a, *others), lam = r["target"], r["columns"], r["lambda"]
            qi = t in self.generalized
            exact = any(c in self.exact for c in r["columns"])
            n = len(r["columns"])
            every = "both" if n == 2 else "all"
            rows = "the rows" if r["share"] >= 0.995 else \
                f"the {r['share']:.1%} of the rows where {every} " + \
                ("are positive" if r["positive"] else "hold a number")
            beside = " and ".join(repr(c) for c in others)
            core = (f"together with column{'s' if n > 2 else ''} {beside}, gives "
                    f"{'the QI ' if qi else ''}{t!r} by a rule ({r['rule']}): its "
                    f"{'bin' if t in self.bins else 'value'} for {r['accuracy']:.1%} of {rows} "
                    f"(the most common alone: {r['prior']:.1%}; lambda {lam:.2f}){where}: "
                    f"published {'exactly' if exact else 'unchanged'}, the {n} publish ")
            core += (f"{t!r} at its exact values beside its generalization" if qi else
                     f"{t!r} nearly in the clear")
            remedy, says = _remedy(exact, qi, two=True)
            found.append({"check": "qi_recode" if qi else "recode", "column": a,
                          "with": others[0] if n == 2 else others,
                          ("qi" if qi else "sensitive"): t, "value": round(lam, 4),
                          "rule": r["rule"],
                          "why": core.replace(f"the {n} publish", f"the {n} would publish"),
                          "remedy": remedy, "message": f"column {a!r}, {core}; {says}"})
        return found

    def _where(self, rows: int) -> str:
        """Which rows a measure read, for a message ('' for all of them)."""
        return f" (on {rows:,} rows drawn at random from the table's {self.seen:,})" \
            if self.seen > rows else ""

    def set_findings(self, dims: dict, params: dict, found: list) -> list:
        """Columns published as they are (one, or two together) that narrow
        a sensitive column so far that its sets give it away, once the sets'
        parameters are known: an adversary who reads the column(s) and the
        row's set (:func:`set_success`) is right far more often than one who
        reads the set alone, lambda = (with - alone) / (1 - alone) >=
        ``DETERMINES``, beyond chance (n KL(with || alone) >= ln(1 /
        ``GIVEN_ALPHA``)).  Attributes drawn with p = 1 only (diversity);
        pairs ``found`` already names (a recode, an order recode) are left
        out.  nlswork's exact age from the survey year and the birth year:
        lambda 0.82 by the values alone (a year either side), but 3-sets
        leave one of the two candidates for 98.9 % of the rows."""
        self._measure()
        named = {(tuple(columns_of(f)), f.get("sensitive")) for f in found
                 if f["check"] in REFUSED_CHECKS and f["check"] != "given_away"}
        named |= {((c,), t) for (cols, t) in list(named) for c in cols}
        out = []
        alone_of = {}         # the adversary who reads the set alone, per attribute
        cands = [((c,), t, vs) for (c, t), vs in self.pairs.items()] + \
            [((a, b), t, vs) for ((a, b), t), vs in self.joint.items()]
        for cols, t, vs in cands:
            par = params.get(t)
            if t not in self.sensitive or par is None or par.p < 1.0 or par.exact:
                continue
            d, eta = int(dims[t]), int(par.eta)
            if not 1 < eta < d or (cols, t) in named or \
                    any(((c,), t) in named for c in cols) or not self._new_here(cols, t):
                continue
            # (over the same rows: the first of the pairs' or of one column's)
            if (t, len(cols)) not in alone_of:
                alone_of[(t, len(cols))] = set_success(vs, d, eta, alone=True)
            lam, with_, alone = set_lambda(vs, d, eta, alone_of[(t, len(cols))])
            if not lam >= DETERMINES:
                continue
            exact = any(c in self.exact for c in cols)
            two = len(cols) == 2
            where = self._where(min(self._measured, self.joint_rows) if two
                                else self._measured)
            core = (f"{'together with column ' + repr(cols[1]) + ', ' if two else ''}narrows "
                    f"{t!r} so far that its {eta}-sets give it away: whoever reads "
                    f"{'both' if two else 'it'} and a row's set names the row's {t!r} for "
                    f"{with_:.1%} of the rows (from the set alone: {alone:.1%}; lambda "
                    f"{lam:.2f}){where}{_sampled(vs)}: published "
                    f"{'exactly' if exact else 'unchanged'}, {'the two' if two else 'it'} "
                    f"publish{'' if two else 'es'} {t!r} nearly in the clear")
            kind = "exact" if exact else "pass-through"
            remedy, says = _remedy(exact, False, two)
            out.append({"check": "set_recode", "column": cols[0],
                        **({"with": cols[1]} if two else {}), "sensitive": t,
                        "value": round(lam, 4), "success": round(with_, 4),
                        "why": (core if two else f"is {'an' if exact else 'a'} {kind} column "
                                "that " + core).replace("the two publish", "the two would publish")
                        .replace("it publishes", "it would publish"),
                        "remedy": remedy,
                        "message": (f"column {cols[0]!r}, " if two else
                                    f"{kind} column {cols[0]!r} ") + f"{core}; {says}"})
        return [self._in_series(f) for f in out]

    def warn(self, allow_recode: Iterable[str] = (), *, allow_identifier: Iterable[str] = (),
             file=None) -> list:
        """Refuse the recodes not named in ``allow_recode`` and the likely
        identifiers not named in ``allow_identifier`` (:func:`check_recodes`),
        then warn (:class:`PassThroughWarning`) once per other finding,
        pointing at the first caller outside anonset; returns the findings
        as the release's metadata records them (``pass_through_risks``: the
        findings without their messages)."""
        return warn_findings(check_recodes(self.findings(), allow_recode,
                                           allow_identifier=allow_identifier, file=file))


def _is_dates(col: pd.Series) -> bool:
    """A column of dates or times: datetime64 (any unit or zone), Arrow
    dates and timestamps, or Python date and datetime objects (what Arrow's
    and Polars' date32 become in pandas: H35)."""
    import datetime
    dt = col.dtype
    if pd.api.types.is_datetime64_any_dtype(dt):
        return True
    pa_type = getattr(dt, "pyarrow_dtype", None)
    if pa_type is not None:
        import pyarrow as pa
        return pa.types.is_date(pa_type) or pa.types.is_timestamp(pa_type)
    if dt == object:
        head = col.dropna().head(64).tolist()
        return bool(head) and all(isinstance(v, datetime.date) for v in head)
    return False


def _day_numbers(col: pd.Series) -> np.ndarray:
    """Dates and times as days since 1970 (NaN where missing), at a
    resolution of seconds (nanoseconds wrapped dates before 1677 or after
    2262 into wrong days: H35)."""
    import datetime
    vals = col.to_numpy(dtype=object) if col.dtype == object else None
    if vals is not None and all(isinstance(v, datetime.date) or v is None or v is pd.NaT
                                or v != v for v in vals):
        # Python dates: their own ordinals, whatever the year
        epoch = datetime.date(1970, 1, 1).toordinal()
        out = np.full(len(vals), np.nan)
        for i, v in enumerate(vals):
            if v is pd.NaT:
                continue                 # a missing date (pd.to_datetime(...).dt.date: H37)
            if isinstance(v, datetime.datetime):
                v = v.astimezone(datetime.timezone.utc) if v.tzinfo else v
                out[i] = v.toordinal() - epoch + (v.hour * 3600 + v.minute * 60 + v.second) \
                    / 86_400
            elif isinstance(v, datetime.date):
                out[i] = v.toordinal() - epoch
        return out
    t = pd.to_datetime(col, errors="coerce", utc=True)
    arr = t.dt.tz_localize(None).to_numpy()
    sec = arr.astype("datetime64[s]").astype(np.int64).astype(np.float64)
    return np.where(t.isna().to_numpy(), np.nan, sec / 86_400)


def _iso_days(col: pd.Series, present: np.ndarray, weights=None) -> np.ndarray | None:
    """A text column of dates as days since 1970: ISO (2020-03-01, with a
    time or not), or day, month and a four-digit year in either order
    (03/01/2020, 1.3.2020, 2020/03/01: the order under which every cell is
    a date, month first where both are; with hours and minutes or not); or
    None where some of its present cells are no such date (a first look at
    64 of them decides cheaply for text that is none; ``weights``: rows per
    cell, where the cells are a column's distinct values)."""
    vals = col.to_numpy(dtype=object)[present]
    head = [v for v in vals[:64] if isinstance(v, str)]
    if not head:
        return None
    cells = pd.Series(col.to_numpy(dtype=object)).where(present)
    if all(_ISO_DATE.match(v) for v in head):
        formats = ["ISO8601"]
    else:
        m = _OTHER_DATE.match(head[0])
        if m is None or not all(_OTHER_DATE.match(v) for v in head):
            return None
        sep = m.group("sep")
        day = ["%Y{s}%m{s}%d"] if m.group("first") and len(m.group("first")) == 4 else \
            ["%m{s}%d{s}%Y", "%d{s}%m{s}%Y"]
        formats = [f.format(s=sep) + t for f in day for t in ("", " %H:%M", " %H:%M:%S")]
    w = np.ones(len(cells)) if weights is None else np.asarray(weights, dtype=np.float64)
    for fmt in formats:
        t = pd.to_datetime(cells.str.strip() if fmt != "ISO8601" else cells, format=fmt,
                           errors="coerce", utc=True)
        bad = t.isna().to_numpy() & present
        if w[bad].sum() <= 0.01 * w[present].sum():
            return _day_numbers(t)
    return None


def _unit_numbers(col: pd.Series, present: np.ndarray, weights=None) -> np.ndarray | None:
    """A text column of numbers written with one unit or currency sign
    ('45 years', '$1,200', '12.5 %'; thousands separated by commas or not)
    as those numbers, or None where some of its present cells are no such
    number or the cells do not share one unit (a first look at 64 of them
    decides cheaply for text that is none)."""
    vals = col.to_numpy(dtype=object)
    head = [v for v in vals[present][:64] if isinstance(v, str)]
    first = _UNIT_NUMBER.match(head[0]) if head else None
    if first is None or not (first.group("pre") or first.group("post")):
        return None
    unit = (first.group("pre"), first.group("post"))
    w = np.ones(len(vals)) if weights is None else np.asarray(weights, dtype=np.float64)
    out = np.full(len(vals), np.nan)
    bad = 0.0
    for i in np.flatnonzero(present):
        v = vals[i]
        m = _UNIT_NUMBER.match(v) if isinstance(v, str) else None
        if m is None or (m.group("pre"), m.group("post")) != unit:
            bad += w[i]
            continue
        out[i] = float(m.group("num").replace(",", ""))
    return out if bad <= 0.01 * max(1.0, float(w[present].sum())) else None


#: A number with a unit or currency sign before or after it: '45 years',
#: '$1,200', '-3.5 kg' (thousands separated by commas, or none).
_UNIT_NUMBER = re.compile(r"^\s*(?P<pre>[^\d\s+.,-]{0,3})\s*(?P<num>[+-]?(?:\d{1,3}(?:,\d{3})+"
                          r"|\d+)(?:\.\d+)?)\s*(?P<post>[^\d\s]{0,12}?)\s*$")


#: An ISO 8601 date at the start of a text cell.
_ISO_DATE = re.compile(r"^\s*\d{4}-\d{2}-\d{2}")
#: A date of a four-digit year and a day and a month in some order, by one
#: separator (03/01/2020, 1.3.2020, 2020/03/01), a time after it or not.
_OTHER_DATE = re.compile(r"^\s*(?P<first>\d{4}|\d{1,2})(?P<sep>[/.-])\d{1,2}(?P=sep)"
                         r"(?:\d{4}|\d{1,2})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?\s*$")


def lambda_findings(found) -> list:
    """The findings of one column whose value is a lambda (a recode by its
    values, or its order by adjacent rows), not a rank correlation
    (an order that follows a target of numbers: ``by: 'rank'``), which a
    pair's lambda is compared with."""
    return [f for f in found if f.get("check") in ("recode", "qi_recode", "order_recode")
            and not f.get("with") and f.get("by") != "rank"]


def rule_recodes(helpers: dict, targets: dict, alone: dict, *, pairs_of=None,
                 done=frozenset()) -> list:
    """Columns of numbers published as they are that give a target by a
    rule: two by a linear rule (age = year - birth year), two by a product
    of powers (a linear rule of their logarithms: BMI = weight / height^2,
    a total = price x quantity), three by a linear rule (a total beside its
    three parts).  One dict per finding: ``columns``, ``target``,
    ``lambda``, ``accuracy``, ``prior``, ``rule`` (its text) and ``share``
    (of the target's rows, those where every column holds a number), where
    the adversary who knows the rule (learnt from the other fold) guesses
    the target's value (or bin) on those rows so often that it removes at
    least ``DETERMINES`` of the errors of guessing its most common one
    (:func:`~anonset.randomized.pair_adversary.rule_recode`), and they are
    at least ``GIVEN_SHARE`` of the rows.

    ``helpers``: column -> numbers of the sampled rows (NaN: missing or no
    number; measured on the rows where a rule's columns hold one);
    ``targets``: target -> (numbers, NaN for a missing cell; bin edges or
    None); ``alone``: target -> the findings of one column on it (a rule
    beside one of its columns must remove half the errors the strongest
    :func:`lambda_findings` of them leaves); ``pairs_of(t)``: the columns a
    target's rules are drawn from (None: all); ``done``: (frozenset of
    columns, target) found already."""
    from .randomized import pair_adversary as PA
    helpers = {c: x for c, x in helpers.items()
               if np.isfinite(x).sum() >= 30 and np.nanmax(x) > np.nanmin(x)}
    out = []
    for t, (y0, edges) in targets.items():
        limit = pairs_of(t) if pairs_of is not None else None
        names = [c for c in helpers if c != t and (limit is None or c in limit)]
        rows = np.isfinite(y0)
        if len(names) < 2 or rows.sum() < 30:
            continue
        n_t = int(rows.sum())
        y0 = y0[rows]
        H0 = np.column_stack([helpers[c][rows] for c in names])
        values = np.unique(y0)
        if values.size < 3:
            continue
        truth0 = y0 if edges is None else np.searchsorted(edges, y0, side="right") - 1
        found_here = set(done)
        strong = {f["column"] for f in lambda_findings(alone.get(t, ()))
                  if float(f["value"]) >= DETERMINES}
        for space in ("linear", "log"):
            if space == "log":
                # a product of powers: linear in logarithms, fitted where the
                # cells are positive and scored on every row whose helpers are
                # positive (the rows the adversary reads): a target of 0 there
                # counts against the rule, and no longer turns it off (H35);
                # rows chosen by the target said 100 % of a bonus paid to half
                # of them (H37)
                if (y0 > 0).sum() < 30:
                    continue
                with np.errstate(divide="ignore", invalid="ignore"):
                    y = np.where(y0 > 0, np.log(np.where(y0 > 0, y0, 1.0)), np.nan)
                    H = np.where(H0 > 0, np.log(np.where(H0 > 0, H0, 1.0)), np.nan)
                truth, vals = truth0, values
            else:
                y, H, truth, vals = y0, H0, truth0, values
            spacing = PA.value_spacing(np.unique(y[np.isfinite(y)]))
            if edges is not None and space == "linear":
                # a binned target is guessed by its bin: a window is judged
                # against the bins' width, not the raw values' (H36: income
                # = base + bonus +- 300 in bins 20,000 wide)
                width = np.diff(edges)[(edges[1:] > y.min()) & (edges[:-1] < y.max())]
                width = width[np.isfinite(width)]
                if width.size:
                    spacing = max(spacing, float(np.median(width)))

            def classify(v, values=vals, edges=edges, log=space == "log"):
                # the value nearest the rule's (then its bin): a rule's
                # 29.9999999 is the age 30
                v = np.exp(v) if log else v
                at = np.clip(np.searchsorted(values, v), 1, values.size - 1)
                lo, hi = values[at - 1], values[at]
                near = np.where(v - lo <= hi - v, lo, hi)
                return near if edges is None else \
                    np.searchsorted(edges, near, side="right") - 1
            cands = [list(p) for p in PA.rule_candidates(y, H, spacing)[:RULE_PAIRS]]
            if space == "linear":
                cands += [list(p) for p in PA.rule_triples(y, H, spacing)[:RULE_PAIRS]]
            for idx in cands:
                cols = [names[i] for i in idx]
                key = frozenset(cols)
                if any(tt == t and len(k) > 1 and k <= key for k, tt in found_here):
                    continue                  # these columns, or two of them, found
                if len(cols) > 2 and strong & key:
                    continue                  # beside a column that gives it alone (H35)
                got = PA.rule_recode(y, truth, [H[:, i] for i in idx], spacing, classify)
                if got is None or not (got[0] == got[0] and got[0] >= DETERMINES) or \
                        got[4] < max(30, GIVEN_SHARE * n_t):
                    continue
                lam, acc, prior, (c, tol), m = got
                mine = [f for f in lambda_findings(alone.get(t, ())) if f["column"] in cols]
                if mine and not 1.0 - lam < (1.0 - max(float(f["value"]) for f in mine)) / 2:
                    continue                  # no better than the one alone
                found_here.add((key, t))
                out.append({"columns": cols, "target": t, "lambda": lam, "accuracy": acc,
                            "prior": prior, "share": m / n_t, "positive": space == "log",
                            "rule": _rule_text(t, cols, c, tol, spacing, log=space == "log")})
    return out


def _rule_text(t, cols, c, tol, spacing: float = 1.0, *, log: bool = False) -> str:
    """'t = c1 x a + c2 x b + c0, within tol' (``log``: 'log t = c1 x log a
    + ...') with what a fit leaves at the last digits read as the whole
    numbers they are (1 x year - 1 x birth + 1985), and a window far below
    the values' spacing read as exact."""
    def num(v):
        if abs(v - round(v)) < 1e-6 * max(1.0, abs(v)):
            return str(int(round(v)))
        return f"{v:.4g}"
    fn = "log " if log else ""
    text = f"{fn}{t} ="
    for i, (ci, col) in enumerate(zip(c[:-1], cols)):
        sign = ("-" if ci < 0 else "") if i == 0 else (" - " if ci < 0 else " + ")
        text += (" " if i == 0 else "") + f"{sign}{num(abs(ci))} x {fn}{col}"
    c0 = c[-1]
    if abs(c0) >= 1e-6 * max(1.0, spacing):
        text += f" {'+' if c0 >= 0 else '-'} {num(abs(c0))}"
    return text + (f", within {tol:.2g}" if tol >= 1e-3 * spacing else ", exactly")


def _remedy(exact: bool, qi: bool, two: bool = False) -> tuple:
    """What to do about a column (or two) published as it is that gives a
    target away: (as a refusal's 'expected' says it, as a warning says it)."""
    if two:
        return ("one of them dropped, or made a QI too", "drop one of them, or make both QIs") \
            if qi else ("one of them dropped, or published as sensitive",
                        "drop one of them, or publish it as sensitive")
    if qi:
        return "it dropped, or made a QI too", "drop it, or make it a QI too"
    if exact:
        return ("it published as sensitive too, or dropped",
                "publish it as sensitive too, or drop it")
    return "it dropped, or published as sensitive", "drop it, or publish it as sensitive"


def sample_cut(n: int, k: int | None = None, *, chunk: int = 1 << 22):
    """The largest word of the ``k`` rows (default ``SAMPLE_ROWS``) that
    :class:`PassThroughCheck` draws from a table of ``n`` rows, or None
    where it keeps them all: given to the check of each part of a table
    whose length is known (a Dask partition), it keeps only its share of
    the sample (``check.cut = sample_cut(n)``).  Chunk by chunk: memory
    O(k + chunk)."""
    k = SAMPLE_ROWS if k is None else k
    if n <= k:
        return None
    best = np.empty(0, dtype=np.uint64)
    for lo in range(0, n, chunk):
        w = np.concatenate([best, _mix64(np.arange(lo, min(n, lo + chunk), dtype=np.int64))])
        best = np.partition(w, k - 1)[:k] if w.size > k else w
    return np.uint64(best.max())


def _pair_hash(ha: np.ndarray, hb: np.ndarray) -> np.ndarray:
    """One 64-bit hash per row of two columns' cell hashes (equal pairs,
    equal hashes; the pair (x, y) and the pair (y, x) apart)."""
    return ha ^ _mix64(hb)


def target_of(finding: dict) -> str:
    """What a finding gives away: its sensitive column or QI (the columns of
    a ``given_away`` finding, joined)."""
    t = finding.get("sensitive", finding.get("qi"))
    return "+".join(map(str, t)) if isinstance(t, list) else str(t)


def columns_of(finding: dict) -> list:
    """The columns a finding is about: one, or two or three measured
    together (``with``: a column, or a list of them)."""
    w = finding.get("with")
    return [finding["column"]] + (list(w) if isinstance(w, (list, tuple)) else [w] if w else [])


def given_away_message(col: str, found: list, where: str = "", *, why: bool = False,
                       exact: bool = False) -> str:
    """The message for :meth:`ValueSample.given_away` of one column:
    ``found`` = [(sensitive attribute, share of the rows)]; ``why``: the
    refusal's words instead (what it would publish, no remedy); ``exact``:
    the column is an exact QID, not a pass-through column."""
    what = " and ".join(f"{a!r} for {v:.1%} of the rows" for a, v in found)
    names = " and ".join(repr(a) for a, _ in found)
    kind = "an exact QID" if exact else "a pass-through column"
    core = (f"give away {what}{where} (the rows with such a value share one value of "
            f"{names} so often that it removes at least {DETERMINES:.0%} of the errors of "
            "guessing from its share overall, although the column as a whole predicts "
            f"less): published {'exactly' if exact else 'unchanged'}"
            ", it ")
    if why:
        return (f"is {kind} some of whose values {core}would publish those "
                f"rows' {names} nearly in the clear")
    return (f"{kind[kind.index(' ') + 1:]} {col!r}: some of its values {core}publishes those "
            f"rows' {names} nearly in the clear; {_remedy(exact, False)[1]}")


def recoded_targets(found: list) -> set:
    """The sensitive columns that findings of :data:`REFUSED_CHECKS` name
    (those a user allowed: the others are refused first), whose risk is
    named already (:func:`anonset.validate.set_pair_findings` leaves them
    out of the record it reads)."""
    out = set()
    for f in found:
        if f.get("check") in REFUSED_CHECKS:
            t = f.get("sensitive", f.get("qi"))
            out |= set(t) if isinstance(t, list) else {t}
    return {t for t in out if isinstance(t, str)}


def recorded(found: list) -> list:
    """Findings as the metadata records them (without their messages)."""
    return [{k: v for k, v in f.items() if k not in ("message", "why", "remedy")} for f in found]


#: Findings that publish what the model protects nearly in the clear: a
#: column published as it is (or two together) that recodes a sensitive
#: column or a generalized QI, by its values or by its order, narrows a
#: sensitive column so far that its sets give it away, or has values that
#: give a sensitive value away for at least ``GIVEN_SHARE`` of the rows.
#: Refused unless every column of the finding is named in ``allow_recode``.
REFUSED_CHECKS = ("recode", "qi_recode", "order_recode", "set_recode", "given_away")


def check_recodes(found: list, allow_recode: Iterable[str] = (), *,
                  allow_identifier: Iterable[str] = (), file=None) -> list:
    """Refuse the recodes among ``found`` (:meth:`PassThroughCheck.findings`)
    whose column is not named in ``allow_recode``: one line naming the first
    such column, what it predicts, and every column to name to accept the
    risk; then the likely identifiers not named in ``allow_identifier`` (a
    pass-through column that singles rows out links each published row to
    its person wherever the column is known elsewhere: a name, an ID, a
    timestamp; beside a partition release's exact sensitive values it names
    them).  The allowed ones are marked ``'allowed': True`` (the metadata
    records it; the summary and the audit name them).  Returns ``found``."""
    from .validate import InputError
    allow = set(allow_recode)
    refused = [f for f in found if f["check"] in REFUSED_CHECKS
               and not set(columns_of(f)) <= allow]
    if refused:
        f = refused[0]
        cols = list(dict.fromkeys(c for g in refused for c in columns_of(g)))
        more = [f"{'+'.join(columns_of(g))} -> {target_of(g)}" for g in refused[1:]]
        what = f["why"] + (f" (and {', '.join(more)})" if more else "")
        raise InputError(what, column=f["column"], file=file,
                         expected=f"{f['remedy']}, or the risk named: {{@allow_recode="
                                  f"{cols!r}}}")
    allow_id = set(allow_identifier)
    ids = [f for f in found if f["check"] == "identifier" and f["column"] not in allow_id]
    if ids:
        cols = [f["column"] for f in ids]
        more = f" (and {', '.join(repr(c) for c in cols[1:])})" if len(cols) > 1 else ""
        remedy = ids[0].get("remedy") or (f"{'each' if more else 'it'} named an identifier "
                                          "(never published) or dropped")
        raise InputError(ids[0]["why"] + more, column=ids[0]["column"], file=file,
                         expected=f"{remedy}, or the risk named: "
                                  f"{{@allow_identifier={cols!r}}}")
    for f in found:
        if f["check"] in REFUSED_CHECKS or f["check"] == "identifier":
            f["allowed"] = True
    return found


def _named(value, param: str, columns: Iterable[str], what: str, one: str, none: str, *,
           file=None) -> tuple:
    """``value`` as a tuple of names, each one of ``columns``: else one line
    saying the name is not ``what`` and expecting ``one`` of them (``none``
    where there are none)."""
    from .validate import InputError, check_names
    names = check_names(value, param)
    columns = list(columns)
    for n in names:
        if n not in columns:
            raise InputError(f"names {n!r}, which is not {what}", file=file, param=param,
                             expected=f"{one}: one of {columns}" if columns else none)
    return names


def check_allow_recode(allow_recode, columns: Iterable[str], *, file=None) -> tuple:
    """``allow_recode`` as a tuple of names, each one of ``columns`` (those
    published as they are)."""
    return _named(allow_recode, "allow_recode", columns, "published as it is",
                  "a column published as it is",
                  "no name: this release publishes no column as it is", file=file)


def check_allow_identifier(allow_identifier, passthrough: Iterable[str], *, file=None) -> tuple:
    """``allow_identifier`` as a tuple of names, each a pass-through column
    (an exact QID singles rows out as a QID does: it has no such check)."""
    return _named(allow_identifier, "allow_identifier", passthrough, "a pass-through column",
                  "a pass-through column", "no name: this release passes no column through",
                  file=file)


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


#: Most three-column subsets of the exact QIDs :func:`joint_exact_finding`
#: measures (C(12, 3)); beyond, the QIDs all together only.
JOINT_SUBSETS = 220


def joint_exact_finding(frame: pd.DataFrame, exact: Sequence[str], sensitive: str,
                        found: list = ()) -> dict | None:
    """Exact QIDs read together (three or more: one and two are measured by
    :class:`PassThroughCheck`) that give the sensitive column away: lambda
    >= ``DETERMINES`` on the rows whose tuple of values other rows share
    (a tuple seen once predicts nothing), at least ``SA_ALONE_ROWS`` of
    them.  A partition release that publishes its QIDs exactly beside the
    groups' sensitive values (Anatomy's QI table) then publishes it nearly
    in the clear (H57: x, y, z and (x + y + z) mod 5).  Every three of the
    QIDs are read (up to ``JOINT_SUBSETS`` of them: other QIDs beside make
    the whole tuple unique and hid the three, H58), then all of them; the
    finding names the first that gives it away.  Measured on at most
    ``SAMPLE_ROWS`` rows (drawn with a fixed seed).  None where no such
    finding, or where ``found`` already holds a recode of it (named by
    fewer columns)."""
    import itertools
    import math
    exact = list(exact)
    if len(exact) < 3 or len(frame) == 0 or any(
            f.get("sensitive") == sensitive and f["check"] in REFUSED_CHECKS for f in found):
        return None
    part = frame
    if len(frame) > SAMPLE_ROWS:
        rows = np.random.default_rng(0x5EED).choice(len(frame), SAMPLE_ROWS, replace=False)
        part = frame.iloc[np.sort(rows)]
    h = {c: hash_cells(part[c]) for c in exact}
    sub = hash_cells(part[sensitive]) & np.uint64(0xFFFF)
    reads = list(itertools.combinations(exact, 3)) \
        if math.comb(len(exact), 3) <= JOINT_SUBSETS else []
    if len(exact) > 3 or not reads:
        reads.append(tuple(exact))
    for cols in reads:
        key = h[cols[0]]
        for c in cols[1:]:               # in column order: (1, 2) and (2, 1) apart
            key = _mix64(key) ^ h[c]
        vs = ValueSample(None)
        vs.add(key, sub)
        lam, acc, prior = vs.shared_determination()
        if lam == lam and lam >= DETERMINES and vs.shared_rows() >= SA_ALONE_ROWS:
            break
    else:
        return None
    cols = list(cols)
    named = ", ".join(repr(c) for c in cols[:-1]) + f" and {cols[-1]!r}"
    where = "" if part is frame else f" (on {len(part):,} of its rows drawn at random)"
    core = (f"read together with {', '.join(repr(c) for c in cols[1:])}, predicts "
            f"{sensitive!r} for {acc:.1%} of the rows whose values other rows share, from "
            f"those rows (the most common value alone: {prior:.1%}; lambda {lam:.2f}){where}: "
            f"published exactly, {named} publish {sensitive!r} nearly in the clear")
    return {"check": "recode", "column": cols[0], "with": cols[1:], "sensitive": sensitive,
            "value": round(lam, 4), "why": core.replace(" publish ", " would publish ", 1),
            "remedy": "one of them dropped, or the QIDs generalized (Mondrian, TP)",
            "message": f"column {cols[0]!r}, {core}; drop one of them, or generalize the "
                       "QIDs"}


def check_passthrough(frame: pd.DataFrame, passthrough: Iterable[str],
                      sensitive: Iterable[str], exact: Iterable[str] = (), *,
                      generalized: Iterable[str] = (), beside: Iterable[str] = (),
                      allow_recode: Iterable[str] = (),
                      allow_identifier: Iterable[str] = (), file=None) -> list:
    """The publishing-time check of a table in memory (the partition
    publishers, semantic diversity's exact QIDs): warns once per finding and
    returns them (as :meth:`PassThroughCheck.warn`).  ``generalized``: QIs
    the release generalizes, which a pass-through column must not recode.
    A recode is refused unless its column is named in ``allow_recode``, a
    likely identifier unless named in ``allow_identifier``
    (:func:`check_recodes`).  ``beside``: sensitive columns published exactly
    on each row (msa's SAs), read with a pass-through column toward a
    generalized QI."""
    found = passthrough_findings(frame, passthrough, sensitive, exact, generalized=generalized,
                                 beside=beside)
    return warn_findings(check_recodes(found, allow_recode, allow_identifier=allow_identifier,
                                       file=file))


def passthrough_findings(frame: pd.DataFrame, passthrough: Iterable[str],
                         sensitive: Iterable[str], exact: Iterable[str] = (), *,
                         generalized: Iterable[str] = (), beside: Iterable[str] = ()) -> list:
    """:meth:`PassThroughCheck.findings` of a table in memory, without
    warning or refusing (a publisher that refuses before its work and warns
    after it calls :func:`check_recodes` and :func:`warn_findings` itself)."""
    passthrough, sensitive, exact = list(passthrough), list(sensitive), list(exact)
    generalized, beside = list(generalized), list(beside)
    # (an SA msa publishes exactly may give a QI, alone or with another:
    # H43, weight from BMI and height; 'tenursq' the tenure)
    pairs = bool(beside) and bool(generalized)
    if not (passthrough or exact or pairs) or \
            not (sensitive or ((passthrough or pairs) and generalized)) or len(frame) == 0:
        return []
    return PassThroughCheck(passthrough, sensitive, exact, generalized=generalized,
                            beside=beside).add(frame.reset_index(drop=True), 0).findings()
