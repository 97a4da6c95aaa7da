"""(l, d)-semantic diversity: publishing and analysis (paper 001, Oishi et al.).

Every record keeps its QIDs; its sensitive value becomes a set of ``l`` values
-- the true one and ``l - 1`` dummies -- pairwise at semantic distance ``>= d``
(Definition 1).  Published as one set per person (a :class:`SetTable`) or as
the shuffled ``N x l`` rows of the paper's Table 7.

Publishing (C kernel ``csrc/semantic.c``):

* ``algorithm='simple'``: Alg. 1 with ``extract`` -- each dummy is drawn
  uniformly from the values at distance ``>= d`` from every value chosen so
  far, restricted to those after which the set can still be completed to
  ``l`` values (the A_max rule of eq. 5-10, made exact; see docs/semantic.md).
* ``algorithm='duplicate'``: Alg. 3 (ordered attributes with equally spaced
  values): every chosen value removes the same number of candidates from a
  circular window, extended past positions already removed.

Analysis per QID combination, with the selection probabilities the sampler
really has (:func:`selection_matrix`, exact by enumerating the sampler's
decision tree where feasible, otherwise Monte Carlo with the kernel itself):

* :func:`estimate_linear` -- Alg. 2, the linear system of eq. 1-3;
* :func:`estimate_em`     -- non-negative EM (Richardson-Lucy) with the same
  transition matrix, run by the Kronecker EM kernel over all QID cells at once;
* :func:`estimate_existing` -- eq. 21-22 (paper 000's estimator);
* :func:`estimate_simple` -- eq. 20.

Also: eq. 18 (:func:`mse`), eq. 11-12 for paper 000's sampler
(:func:`violation_bound`, :func:`violation_probability`,
:func:`simulate_violation`) and the paper's worked example (:data:`TABLE_9`).
"""
from __future__ import annotations

import itertools
import hashlib
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from . import _kernels
from . import _semantic
from ..io.keys import check_research_seed, check_rng, make_key
from ..validate import InputError, check_plain_values, check_threads as _threads
from .crosstab import CrossTab, warn_unconverged
from ..encode import encode_column
from ..hierarchy import Hierarchy
from .params import COIN_ONE, AttributeParams
from ..schema import Attribute, Schema, warn_inferred_domains
from .settable import SetTable, popcount

__all__ = [
    "SemanticDistance", "ALGORITHMS", "ESTIMATORS", "feasible_values", "check_feasible",
    "semantic_sets", "is_diverse", "semantic_publish", "semantic_rows", "report_counts",
    "selection_matrix", "paper_selection_matrix", "estimate_linear", "estimate_em",
    "estimate_existing", "estimate_simple", "estimate", "analyze", "mse",
    "violation_bound", "database_violation_bound", "violation_probability",
    "simulate_violation", "TABLE_8", "TABLE_9", "TABLE_10", "example_distance",
]

ALGORITHMS = ("simple", "duplicate")
ESTIMATORS = ("linear", "em", "existing", "simple")
#: How the selection probabilities of :func:`analyze` are computed.
SELECTION_METHODS = ("auto", "exact", "montecarlo", "paper")

#: Exact enumeration of the sampler's decision tree stops where one true
#: value's tree passes this many nodes (about 1 s of kernel time per 5e7
#: nodes on the 2-core dev VM; the F trees together may take F times that).
MAX_EXACT_NODES = 50_000_000


# ---------------------------------------------------------------- distances
@dataclass(frozen=True, eq=False)
class SemanticDistance:
    """A symmetric semantic distance over a domain of ``F`` values.

    Build one with :meth:`ordered`, :meth:`tree` or :meth:`matrix`.

    Attributes
    ----------
    matrix : (F, F) float array, symmetric, zero diagonal
    kind : {'ordered', 'tree', 'matrix'}
    positions : (F,) float array or None
        For 'ordered': the values as points on a line, ascending.
    """

    matrix: np.ndarray
    kind: str = "matrix"
    positions: np.ndarray | None = None
    hierarchy: Hierarchy | None = field(default=None, repr=False)

    @classmethod
    def ordered(cls, values) -> "SemanticDistance":
        """|i - j| over ``values`` = an int F, or ``|v_i - v_j|`` over ascending
        representative values (Example 2)."""
        if isinstance(values, (int, np.integer)):
            if values < 1:
                raise InputError(f"got {values}", param="values",
                                 expected="a domain size of at least 1")
            pos = np.arange(int(values), dtype=np.float64)
        else:
            pos = np.asarray(values, dtype=np.float64)
            if pos.ndim != 1 or pos.size < 1 or not np.all(np.isfinite(pos)):
                raise InputError("are not a non-empty 1-d sequence of finite numbers",
                                 param="values", expected="one representative number per "
                                                          "domain value")
            if np.any(np.diff(pos) <= 0):
                i = int(np.argmax(np.diff(pos) <= 0))
                raise InputError(f"are not strictly increasing ({pos[i]:g} then {pos[i + 1]:g} "
                                 f"at positions {i} and {i + 1})", param="values",
                                 expected="representative values strictly increasing, in "
                                          "domain order")
        return cls(np.abs(pos[:, None] - pos[None, :]), "ordered", pos)

    @classmethod
    def tree(cls, hierarchy: Hierarchy) -> "SemanticDistance":
        """Height of the lowest common ancestor (Sec. 6.3, Fig. 7): siblings are
        at distance 1, cousins at 2, ...  ``hierarchy``: a Hierarchy, or what
        :func:`anonset.hierarchy.hierarchy_of` reads as one (an ARX file, its
        rows)."""
        from ..hierarchy import hierarchy_of
        hierarchy = hierarchy_of(None, hierarchy)
        return cls(np.asarray(hierarchy.lca_heights(), dtype=np.float64), "tree", None, hierarchy)

    @classmethod
    def from_matrix(cls, m) -> "SemanticDistance":
        try:
            m = np.asarray(m, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("is not a matrix of numbers", param="matrix",
                             expected="a square matrix of distances") from None
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 1:
            raise InputError(f"distance matrix must be square, got shape {m.shape}",
                             param="matrix", expected="one row and column per domain value")
        if not np.all(np.isfinite(m)) or np.any(m < 0):
            raise InputError("distance matrix must be finite and non-negative", param="matrix",
                             expected="distances >= 0")
        if not np.allclose(m, m.T):
            i, j = np.argwhere(~np.isclose(m, m.T))[0]
            raise InputError(f"distance matrix must be symmetric (row {i + 1}, column {j + 1}: "
                             f"{m[i, j]:g}, but row {j + 1}, column {i + 1}: {m[j, i]:g})",
                             param="matrix", expected="dist(a, b) = dist(b, a)")
        if np.any(np.diag(m) != 0):
            i = int(np.argmax(np.diag(m) != 0))
            raise InputError(f"distance matrix must have a zero diagonal (row {i + 1}: "
                             f"{m[i, i]:g})",
                             param="matrix", expected="dist(a, a) = 0")
        return cls(m, "matrix")


    @property
    def F(self) -> int:
        return int(self.matrix.shape[0])

    def compat(self, d: float) -> np.ndarray:
        """(F, F) bool: i != j and dist(i, j) >= d.

        Over representative values, ``|v_i - v_j|`` is read as the decimals
        the values spell: 0.37 - 0.27 is 0.09999999999999998 in binary, and
        d = 0.1 must count it as 0.1 apart, not closer (H116: some pairs
        exactly d apart were compatible and others not, and {0.1, 0.2,
        0.3} at l = 3, d = 0.1 was refused as infeasible).  The pairs whose
        binary distance falls short of d by a few units in the last place
        (or exceeds it by so little) are decided exactly, in the decimals
        of the values' and d's shortest reprs; no other pair is (1e15 and
        1e15 + 1 stay 1 apart, H120)."""
        ok = self.matrix >= d
        if self.kind == "ordered" and self.positions is not None:
            mag = np.abs(self.positions)
            ulps = 8 * np.finfo(np.float64).eps * np.maximum(
                np.maximum(mag[:, None], mag[None, :]), abs(float(d)))
            # within rounding of d either way: 0.4 - 0.1 is 0.30000000000000004
            near = np.abs(self.matrix - float(d)) <= ulps
            if near.any():
                import decimal
                exact = decimal.Context(prec=1000)      # no rounding at all
                want = decimal.Decimal(repr(float(d)))
                spelled = [decimal.Decimal(repr(float(v))) for v in self.positions]
                for i, j in np.argwhere(near):
                    gap = exact.abs(exact.subtract(spelled[i], spelled[j]))
                    ok[i, j] = exact.compare(gap, want) >= 0
        np.fill_diagonal(ok, False)
        return ok

    def compat_bits(self, d: float) -> np.ndarray:
        """The compatibility graph as (F, words) uint64 bitmask rows."""
        return _pack(self.compat(d))

    def duplicate_radius(self, d: float) -> int:
        """Window radius (in positions) of Alg. 3: values closer than d to a
        chosen one, for equally spaced ordered values."""
        if self.kind != "ordered":
            raise InputError(f"needs an ordered distance, and this one is {self.kind!r}",
                             param="algorithm", expected="{@algorithm='simple'}, or an "
                                                         "ordered distance")
        pos = self.positions
        if self.F > 1:
            step = np.diff(pos)
            if not np.allclose(step, step[0]):
                raise InputError("'duplicate' (Alg. 3) needs equally spaced values (distance "
                                 "|i - j| up to a scale)", param="algorithm",
                                 expected="{@algorithm='simple'}")
            r = int(math.ceil(d / step[0] - 1e-9)) - 1
        else:
            r = 0
        return max(r, 0)

    def to_dict(self) -> dict:
        if self.kind == "ordered":
            return {"kind": "ordered", "positions": self.positions.tolist()}
        if self.kind == "tree":
            return {"kind": "tree", "matrix": self.matrix.tolist()}
        return {"kind": "matrix", "matrix": self.matrix.tolist()}

    @classmethod
    def from_dict(cls, d: dict, attr: Attribute | None = None) -> "SemanticDistance":
        if d["kind"] == "ordered":
            return cls.ordered(d["positions"])
        if d["kind"] == "tree":
            if attr is not None and attr.hierarchy is not None:
                return cls.tree(attr.hierarchy)
            m = cls.from_matrix(d["matrix"])
            return cls(m.matrix, "tree")
        return cls.from_matrix(d["matrix"])


def _pack(ok: np.ndarray) -> np.ndarray:
    F = ok.shape[0]
    words = (F + 63) // 64
    pad = np.zeros((ok.shape[0], words * 64), dtype=bool)
    pad[:, :ok.shape[1]] = ok
    bits = pad.reshape(ok.shape[0], words, 64).astype(np.uint64)
    return (bits << np.arange(64, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)


def _unpack(masks: np.ndarray, F: int) -> np.ndarray:
    m = np.ascontiguousarray(masks, dtype=np.uint64).reshape(masks.shape[0], -1)
    bits = np.unpackbits(m.view(np.uint8), axis=1, bitorder="little")
    return bits[:, :F].astype(bool)


def _check_ld(distance: SemanticDistance, l, d) -> tuple:
    from ..validate import InputError                 # a ValueError naming its parameter
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 1:
        raise InputError(f"got {l!r}", param="l", expected="a positive integer")
    if l > distance.F:
        raise InputError(f"l = {l} exceeds the domain size F = {distance.F}", param="l",
                         expected=f"at most {distance.F}")
    if l > _semantic.MAX_L:
        raise InputError(f"got {l}", param="l", expected=f"at most {_semantic.MAX_L}")
    if isinstance(d, (bool, np.bool_, str, bytes)):      # float('1') and float(True) pass
        raise InputError(f"got {d!r}", param="d", expected="a number")
    try:
        d = float(d)
    except (TypeError, ValueError):
        raise InputError(f"got {d!r}", param="d", expected="a number") from None
    if not math.isfinite(d) or d < 0:
        raise InputError(f"got {d}", param="d", expected="a finite non-negative number")
    if distance.F > _semantic.MAX_DOMAIN:
        raise InputError(f"has {distance.F} values", param="domain",
                         expected=f"at most {_semantic.MAX_DOMAIN} values (semantic publishing)")
    return int(l), d


def _kernel_args(distance: SemanticDistance, l: int, d: float, algorithm: str) -> tuple:
    from ..validate import InputError
    if algorithm not in ALGORITHMS:
        raise InputError(f"got {algorithm!r}", param="algorithm",
                         expected=f"one of {', '.join(ALGORITHMS)}")
    radius = distance.duplicate_radius(d) if algorithm == "duplicate" else 0
    if 2 * radius + 1 > distance.F:
        raise InputError(f"d = {d:g} is too large for algorithm='duplicate' on F = "
                         f"{distance.F} values", param="d",
                         expected="a smaller d, or algorithm='simple'")
    return distance.compat_bits(d), l, algorithm, radius, distance.kind == "ordered"


# -------------------------------------------------------------- feasibility
def feasible_values(distance: SemanticDistance, l: int, d: float) -> np.ndarray:
    """(F,) bool: value t lies in some set of l values pairwise >= d apart.

    For ordered distances this is eq. 7-10 with linear ends (greedy count);
    otherwise an exact clique search in the compatibility graph.
    """
    l, d = _check_ld(distance, l, d)
    return _semantic.feasible(distance.compat_bits(d), l, "simple", 0, distance.kind == "ordered")


def check_feasible(distance: SemanticDistance, l: int, d: float, codes=None, labels=None) -> None:
    """Raise ValueError naming the values (among ``codes``, default: all) that
    cannot receive l values pairwise at least d apart."""
    ok = feasible_values(distance, l, d)
    # bincount, not np.unique: no sort of the whole column (10^7 rows: ~10 ms, not ~1 s)
    present = (np.flatnonzero(np.bincount(np.asarray(codes, dtype=np.int64).ravel(),
                                          minlength=distance.F))
               if codes is not None else np.arange(distance.F))
    bad = [int(v) for v in present if not ok[v]]
    if bad:
        names = [str(labels[v]) if labels is not None else str(v) for v in bad[:5]]
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        from ..validate import InputError
        raise InputError(f"(l={l}, d={d:g})-semantic diversity is infeasible: no set of {l} "
                         f"values pairwise at least {d:g} apart contains "
                         f"{', '.join(names)}{more}", param="d",
                         expected="a smaller d or l")


# ---------------------------------------------------------------- publishing
def semantic_sets(codes, distance: SemanticDistance, l: int, d: float, *,
                  algorithm: str = "simple", seed=None, research_seed: bool = False,
                  key: bytes | None = None,
                  rng: str = "chacha20", row0: int = 0, attr: int = 0,
                  n_threads: int | None = None) -> np.ndarray:
    """Draw every record's set: (n, ceil(F/64)) uint64 bitmasks.

    The output is a pure function of (key, global row index, attr): identical
    for any number of threads and any partitioning into calls (``row0``).

    Examples
    --------
    >>> dist = SemanticDistance.ordered(5)
    >>> m = semantic_sets([0, 2, 4], dist, l=2, d=2)
    >>> bool(is_diverse(m, dist, 2, 2).all())
    True
    """
    l, d = _check_ld(distance, l, d)
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    if codes.ndim != 1:
        raise ValueError("codes must be one-dimensional")
    args = _kernel_args(distance, l, d, algorithm)
    check_rng(rng)
    if key is None:
        key = make_key(seed, research_seed=research_seed)
    try:
        # The kernel checks every code against the domain and the feasibility
        # of every occurring value before it draws anything (one pass over the
        # codes instead of three here); on failure, name what is wrong.
        return _semantic.sample(*args, codes, key, rng=rng, row0=int(row0), attr=int(attr),
                                n_threads=_threads(n_threads))
    except ValueError:
        if codes.size and not (0 <= codes.min() and codes.max() < distance.F):
            raise ValueError(f"codes must lie in [0, {distance.F})") from None
        check_feasible(distance, l, d, codes)
        raise


#: Sets drawn per occurring value to estimate where its dummies fall
#: (:func:`decoy_means`), under a fixed key: the same data, the same estimate.
DECOY_DRAWS = 1024
_DECOY_KEY = b"anonset: where semantic dummies fall (rare.py) v1."[:32]


def decoy_means(counts, distance: SemanticDistance, l: int, d: float, *,
                algorithm: str = "simple", draws: int = DECOY_DRAWS) -> np.ndarray:
    """mu[v]: how many published sets of the rows that do not hold v are
    expected to hold v as a dummy, for a table with ``counts[u]`` rows of
    each value u: sum over u != v of counts[u] times the share of ``draws``
    sets drawn for u (under a fixed key, so the estimate is a function of
    the data) that hold v.  For :func:`anonset.randomized.rare.expected_exposed_mu`."""
    from ..audit.masks import value_counts
    counts = np.asarray(counts, dtype=np.int64)
    mu = np.zeros(distance.F)
    values = np.flatnonzero(counts)
    step = max(1, (1 << 18) // draws)            # values per kernel call: <= 2^18 sets
    for i in range(0, values.size, step):
        part = values[i:i + step]
        m = semantic_sets(np.repeat(part, draws).astype(np.int32), distance, l, d,
                          algorithm=algorithm, key=_DECOY_KEY, row0=int(i) * draws)
        for j, u in enumerate(part.tolist()):
            share = value_counts(m[j * draws:(j + 1) * draws], distance.F) / draws
            share[u] = 0.0
            mu += counts[u] * share
    return mu


def is_diverse(masks, distance: SemanticDistance, l: int, d: float) -> np.ndarray:
    """(n,) bool: the set has exactly l values, pairwise at distance >= d."""
    masks = np.asarray(masks, dtype=np.uint64).reshape(len(masks), (distance.F + 63) // 64)
    sizes = popcount(masks)
    out = sizes == l
    rows = np.flatnonzero(out)
    if l <= 1 or rows.size == 0:
        return out
    mem = _kernels.members(masks[rows], distance.F, l)
    good = np.ones(rows.size, dtype=bool)
    ok = distance.compat(d)             # the sampler's reading of >= d
    for a, b in itertools.combinations(range(l), 2):
        good &= ok[mem[:, a], mem[:, b]]
    out[rows] = good
    return out


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool,
                                                                                     np.bool_))


def _ordered_values(values, domain, column: str, d):
    """The argument of :meth:`SemanticDistance.ordered` for ``values``: an
    int (positions) or the representative values.  Numbers that are not
    consecutive integers give positions and units different distances, so
    ``d`` has two readings: the caller names one."""
    from ..validate import InputError
    numeric = len(domain) > 0 and all(_is_number(v) for v in domain)
    if isinstance(values, str):
        if values == "positions":
            return len(domain)
        if values == "domain":
            if not numeric:
                raise InputError("values='domain' measures distances in the values' units, "
                                 "but the domain holds values that are not numbers",
                                 column=column, param="values",
                                 expected="'positions', or representative values in domain "
                                          "order")
            return [float(v) for v in domain]
        raise InputError(f"got {values!r}", param="values",
                         expected="'positions', 'domain', or representative values in domain "
                                  "order")
    if values is not None:
        if len(values) != len(domain):
            raise InputError(f"gives {len(values)} representative values for a domain of "
                             f"{len(domain)}", column=column, param="values",
                             expected=f"{len(domain)} numbers, one per value in domain order, "
                                      "'positions' or 'domain'")
        return values
    if numeric and len(domain) > 1:
        gaps = np.diff(np.asarray([float(v) for v in domain]))
        if not np.all(gaps == 1.0):
            g = float(gaps.min()) if np.all(gaps > 0) else float("nan")
            how = f"as close as {g:g} apart" if math.isfinite(g) else "out of numeric order"
            dd = f"{d:g}" if _is_number(d) else repr(d)
            raise InputError(
                f"holds numbers that are not consecutive integers ({how}), so d = {dd} could "
                "count positions in the ordered domain or units of the values, which differ "
                "here", column=column, param="values",
                expected="{@values='domain'} to measure d in the values' units, or "
                         "{@values='positions'} to count positions (paper 001's |i - j|)")
    return len(domain)


def semantic_publish(data, sensitive: str, l: int, d: float, *, qids: Sequence[str] = (),
                     identifiers: Sequence[str] = (), drop: Sequence[str] = (),
                     distance: SemanticDistance | None = None, domain: Sequence | None = None,
                     values: Sequence[float] | str | None = None,
                     hierarchy: Hierarchy | None = None, algorithm: str = "simple",
                     seed=None, research_seed: bool = False, key_file=None,
                     keep_order: bool = False, rng: str = "chacha20",
                     n_threads: int | None = None, missing: str | None = None,
                     missing_token: str = "?",
                     allow_recode: Sequence[str] = (), allow_rare: Sequence[str] = (),
                     allow_shared_id: Sequence[str] = (),
                     allow_clear: Sequence[str] = ()) -> SetTable:
    """Publish ``data`` under (l, d)-semantic diversity as a :class:`SetTable`.

    Parameters
    ----------
    data : DataFrame (or an Arrow/interchange table)
    sensitive : the sensitive column.
    qids, identifiers, drop : column names
        QIDs published exactly, identifiers (not published), columns to
        drop.  Every column other than ``sensitive`` must be named in one of
        them: a column nobody named is refused.
    distance : a SemanticDistance over ``domain``.  Default: the tree distance
        of ``hierarchy`` if given, else the ordered distance over ``domain``
        (see ``values``).
    values : 'positions', 'domain', or representative values in domain order
        What the ordered distance measures: 'positions' ``|i - j|`` (paper
        001's default), 'domain' ``|v_i - v_j|`` over the numeric domain
        values themselves, or ``|v_i - v_j|`` over the values given (Example
        2).  Default: positions where they are the values' distances (text in
        a declared order, consecutive integers); numbers spaced otherwise are
        refused without it, since d could mean either (income 0.1 apart: d = 1
        is one position, or ten).
    domain : declared ordered domain of the sensitive column (preferred: an
        inferred domain reveals which values occur).
    algorithm : 'simple' (Alg. 1) or 'duplicate' (Alg. 3).
    seed, research_seed, keep_order, rng : as :func:`anonset.publish` (rows
        come out in a keyed random order unless ``keep_order``).
    key_file : path, optional
        A file holding the key material (instead of ``seed``; refused with
        one): the release is the one ``anonset semantic-anonymize
        --key-file`` makes (the file's bytes, a trailing newline left out).
    allow_recode : QIDs you accept to publish although they recode the
        sensitive column (as :func:`anonset.publish`'s ``allow_recode``:
        lambda >= 0.9 over 131,072 rows drawn at random); refused otherwise.
    allow_rare : ``[sensitive]`` to accept a domain read off the data although
        some of its values are so rare that they are expected in fewer than
        l sets (as :func:`anonset.publish`'s ``allow_rare``; where the dummies
        fall is estimated from 1,024 sets drawn per value under a fixed key);
        refused otherwise.  Declaring ``domain`` lifts it.
    allow_shared_id : identifier columns whose values several rows share
        that you declare to be different people's rows (a household, a
        site); refused otherwise, since one person's rows (panel waves)
        draw their sets independently and intersect toward the person's
        value.  The metadata (``shared_ids_allowed``) and the audit name
        them.
    allow_clear : ``[sensitive]`` to accept l = 1, whose sets are the true
        values (published in the clear); refused otherwise.  The metadata
        (``clear``) and the audit name it.
    missing : None (default), 'category' or 'drop'
        A missing cell in the sensitive column or a QID is refused by
        default; 'category' publishes it as the value ``missing_token``, a
        value of its own (a column of numbers refuses it; a declared domain,
        hierarchy or ordered Categorical of the sensitive column lists the
        token where it belongs in the order); 'drop' leaves those rows out of
        the release (:func:`anonset.validate.apply_missing`; the metadata
        records how many, and the audit names it: presence in the release
        tells that a person's published columns are all answered).
    missing_token : str
        The value of a missing cell under ``missing='category'`` (default '?').

    All validation (columns, domain, feasibility of every occurring value)
    happens before anything is drawn.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": range(6), "age": [30, 40, 30, 50, 40, 30],
    ...                    "income": [0, 2, 4, 1, 3, 4]})
    >>> t = semantic_publish(df, "income", 2, 2, qids=["age"], identifiers=["id"],
    ...                      domain=range(5))
    >>> bool(is_diverse(t.mask("income"), SemanticDistance.ordered(5), 2, 2).all())
    True
    """
    from ..io.keys import derive_key, shuffled_order
    from ..io.tables import as_frame
    from ..validate import (InputError, check_bool, check_names, check_value_list,
                            check_word_names, apply_missing, check_token_declared, resolve_roles)
    frame = as_frame(data)
    if len(frame) == 0:
        raise InputError("is empty (no rows)", param="data", expected="at least one row")
    qids, identifiers, drop = (check_names(v, p) for v, p in
                               ((qids, "qids"), (identifiers, "identifiers"), (drop, "drop")))
    keep_order = check_bool(keep_order, "keep_order")
    if not isinstance(sensitive, str):
        one = list(sensitive) if isinstance(sensitive, (list, tuple)) else None
        raise InputError(f"got {sensitive!r}", param="sensitive",
                         expected="one column's name, a string (paper 001 publishes one "
                                  "sensitive column" + (f": sensitive={one[0]!r})"
                                                        if one and len(one) == 1 else ")"))
    if domain is not None:
        check_value_list(domain, "domain", sensitive, "the domain's values")
    if values is not None and not isinstance(values, str):
        check_value_list(values, "values", sensitive, "representative values in domain order")
    resolve_roles(list(frame.columns), {"sensitive": [sensitive], "qids": list(qids),
                                        "identifiers": list(identifiers), "drop": list(drop)})
    check_plain_values(frame, [sensitive, *qids], partition=True, through=False)
    sdtype = frame[sensitive].dtype                 # before a missing token joins it
    frame, missing_record = apply_missing(frame, [sensitive, *qids], missing, token=missing_token)
    check_word_names([sensitive, *qids], [sensitive, *qids])
    from ..passthrough import check_allow_recode, check_passthrough
    allow_recode = check_allow_recode(allow_recode, qids)
    allow_rare = check_names(allow_rare, "allow_rare")
    for c in allow_rare:
        if c != sensitive:
            raise InputError(f"names {c!r}, which is not the sensitive column",
                             param="allow_rare", expected=f"[{sensitive!r}] or nothing")
    # an exact QID that recodes the sensitive column publishes it: refused
    # unless named (before any work)
    recodes = check_passthrough(frame, [], [sensitive], list(qids), allow_recode=allow_recode)
    if distance is not None and not isinstance(distance, SemanticDistance):
        raise InputError(f"got a {type(distance).__name__}", param="distance",
                         expected="a SemanticDistance (SemanticDistance.ordered, .tree or "
                                  ".from_matrix) or None")
    if hierarchy is None and distance is not None and distance.hierarchy is not None:
        hierarchy = distance.hierarchy
    if hierarchy is not None and domain is None:
        domain = hierarchy.leaves
        if pd.api.types.is_integer_dtype(sdtype):
            # as anonset.publish does: a column of integer codes (zip codes,
            # occupation codes) under a hierarchy whose leaves are their text
            try:
                domain = [int(v) for v in domain]
            except ValueError:
                raise InputError("is integer but its hierarchy has non-integer leaves",
                                 column=sensitive, expected="integer leaves") from None
    if domain is None and distance is None and isinstance(sdtype, pd.CategoricalDtype) \
            and sdtype.ordered:
        # an ordered pandas Categorical declares its domain and its order, as
        # it does for anonset.publish
        domain = [v.item() if hasattr(v, "item") else v for v in sdtype.categories]
    if domain is not None:           # declared: a missing token is listed where it belongs
        check_token_declared(missing_record, {sensitive: domain})
    filled = missing_record.get("columns") or {}    # the columns a missing token fills

    def token_of(column):
        return missing_record.get("token") if column in filled else None
    inferred = domain is None            # read off the data: it reveals which values occur
    if domain is None:
        domain = sorted(pd.unique(frame[sensitive].dropna()).tolist())
        if hierarchy is None and distance is None and any(isinstance(v, str) for v in domain):
            # the default distance is ordered: over text read off the data
            # that is the alphabetical order, a semantics nobody chose
            raise InputError("holds text values with no declared order or hierarchy: the "
                             "default (ordered) semantic distance would order them "
                             "alphabetically", column=sensitive,
                             expected="a declared domain in order (domain=[...], --domain), a "
                                      "hierarchy (hierarchy=..., --hierarchy), or a distance "
                                      "matrix over a declared domain")
    if len(domain) > _semantic.MAX_DOMAIN:
        # before the F x F distances are built (a column of a million values,
        # an id named as the sensitive one, asked for terabytes)
        raise InputError(f"has {len(domain):,} distinct values" if inferred else
                         f"has {len(domain):,} values", column=sensitive,
                         param=None if inferred else "domain",
                         expected=f"at most {_semantic.MAX_DOMAIN:,} (semantic publishing: "
                                  "every pair of values has a distance): bins or a hierarchy "
                                  "level; an identifier is not a sensitive attribute")
    if hierarchy is not None:
        hierarchy = hierarchy.reorder(list(domain))
    try:
        sattr = Attribute(sensitive, "sensitive", tuple(domain),
                          "nominal" if hierarchy is not None else "ordinal", hierarchy=hierarchy,
                          inferred=inferred, missing=token_of(sensitive))
    except ValueError as e:             # a value listed twice, as publish says it (H91)
        raise InputError(str(e).split(": ", 1)[-1], column=sensitive,
                         param=None if inferred else "domain",
                         expected="each value once" if "duplicate" in str(e) else None) from None
    if distance is None:
        if hierarchy is not None:
            distance = SemanticDistance.tree(hierarchy)
        else:
            distance = SemanticDistance.ordered(_ordered_values(values, domain, sensitive, d))
    if distance.F != sattr.d:
        raise ValueError(f"distance has {distance.F} values but the domain of {sensitive!r} "
                         f"has {sattr.d}")
    l, d = _check_ld(distance, l, d)
    from ..validate import refuse_clear_l
    clear = refuse_clear_l({sensitive: l}, {sensitive: sattr.d}, allow_clear)
    codes = encode_column(frame[sensitive], sattr)
    _kernel_args(distance, l, d, algorithm)
    check_feasible(distance, l, d, codes, sattr.domain)
    rare = {}
    cnt = np.bincount(codes, minlength=sattr.d)
    # a domain read off the data says each value is someone's: a value in
    # fewer than l sets points at its holders (randomized/rare.py); a
    # declared one that lists only what the data holds may be a copy of it
    # (the remedy of that refusal, taken literally): warned
    from ..engine.plan import all_held
    copied = not inferred and sensitive not in allow_rare and all_held(cnt, sattr)
    if sattr.d > 1 and (inferred or copied):
        from .rare import expected_exposed_mu, finding
        top = max(2, l)
        f = finding(expected_exposed_mu(cnt, decoy_means(cnt, distance, l, d,
                                                         algorithm=algorithm), top), top, cnt)
        if inferred:
            from ..validate import refuse_rare
            rare = refuse_rare({} if f is None else {sensitive: f}, allow_rare,
                               declare="{@domain}, {@hierarchy}")
        elif f is not None:
            from ..validate import warn_declared_from_data
            warn_declared_from_data(sensitive, f, "domain=, hierarchy=; --domain, --hierarchy")
    # one person's rows (panel waves) would draw their sets independently
    from ..shared_ids import shared_without_key
    shared = shared_without_key(frame, identifiers, allow_shared_id, groups=False)
    from ..io.keys import seed_or_key_file
    seed = seed_or_key_file(seed, key_file)     # as the command reads --key-file
    check_research_seed(seed, research_seed)
    from ..io.keys import derive_key as _derive, release_key as _release
    attrs, masks, params, qcodes = [], {}, {}, {}
    for q in qids:
        dom = tuple(sorted(pd.unique(frame[q].dropna()).tolist()))
        a = Attribute(q, "exact", dom,
                      "ordinal" if pd.api.types.is_numeric_dtype(frame[q]) else "nominal",
                      inferred=True, missing=token_of(q))
        c = encode_column(frame[q], a)
        qcodes[q] = c
        attrs.append(a)
        masks[q] = _pack_codes(c, a.d)
        params[q] = AttributeParams(q, 1.0, 1, a.d, exact=True)
    # one key over one table reproduces its release; over another (a later
    # wave, values changed) the sets are another key's: drawn from the same
    # words, a changed value's two sets differed by the two values
    # (the exact QIDs too, by their values' codes, as the engine keys them:
    # rows of one value reordered, their QIDs not, drew the same sets in
    # the same order, which linked their holders across the two releases,
    # 99 % of 2,000 values pinned, H91; their cells as stored keyed an
    # int32 column and its CSV apart, H95)
    h = hashlib.sha256(len(codes).to_bytes(8, "little") +
                       np.ascontiguousarray(codes, dtype=np.int32).tobytes())
    # (by name: the QIDs listed in another order are one table, H109)
    for a in sorted(attrs, key=lambda a: a.name):
        h.update(a.name.encode() + b"\x00" + repr(_words(a.domain)).encode() +
                 np.ascontiguousarray(qcodes[a.name], dtype=np.int32).tobytes())
    data = h.hexdigest()
    # ... and so are another model's (l, d, algorithm, distance) or domain:
    # from the same words, sets of two sizes share their draws and read
    # together tell more than two independent releases (H20, anonymize)
    model = {"name": "semantic", "l": l, "d": d, "algorithm": algorithm,
             "sensitive": sensitive, "distance": distance.to_dict()}
    key = _derive(_release(make_key(seed, research_seed=research_seed),
                           {"data": data, **model, "rng": rng,
                            "domain": _words(sattr.domain)}), "sets")
    attrs.append(sattr)
    warn_inferred_domains([sattr], {sensitive: int((np.bincount(codes, minlength=sattr.d) == 1)
                                                   .sum())},
                          declare="domain=, hierarchy=; --domain, --hierarchy")
    masks[sensitive] = semantic_sets(codes, distance, l, d, algorithm=algorithm, key=key,
                                     rng=rng, n_threads=n_threads,
                                     attr=len(attrs) - 1)
    # measured on sets drawn under a fixed key (the law, not this draw): the
    # same table and parameters are refused or published alike every time
    law = semantic_sets(codes, distance, l, d, algorithm=algorithm, seed="anonset-near-clear",
                        research_seed=True, n_threads=n_threads)
    def law_at(l2):
        """The law's sets at another l, or None where it is not feasible."""
        if not np.all(feasible_values(distance, l2, d)[np.unique(codes)]):
            return None
        return semantic_sets(codes, distance, l2, d, algorithm=algorithm,
                             seed="anonset-near-clear", research_seed=True,
                             n_threads=n_threads)

    clear = list(dict.fromkeys(clear + _refuse_nearly_clear(
        sensitive, codes, law, sattr.d, l, d, allow_clear, draw=law_at)))
    params[sensitive] = AttributeParams(sensitive, 1.0, l, sattr.d, l=l)
    # the sets read with the exact QIDs: a column two or more of them give
    # away together (education = age - experience - 6) is published nearly
    # in the clear, as anonymize refuses it (its audit reads it alike)
    clear = list(dict.fromkeys(clear + _refuse_read_together(
        attrs, params, {**qcodes, sensitive: codes}, law, allow_clear, recodes, allow_recode)))
    from ..io.keys import key_mode
    from .._version import __version__
    roles = {c: "sensitive" if c == sensitive else "exact" if c in qids else
             "identifier" if c in identifiers else "drop" for c in frame.columns}
    info = {"rng": rng, "seeded": seed is not None, "key": key_mode(seed, research_seed),
            "row_order": "input" if keep_order else "shuffled", "clear": clear, "roles": roles,
            "missing": _public(missing_record), **shared,
            "pass_through_risks": recodes, **({"rare": rare} if rare else {}),
            "anonset": __version__}
    table = SetTable(Schema(tuple(attrs)), masks, params, model, info=info)
    if keep_order:
        return table
    from ..io.keys import release_key
    # the model, the generator and every published domain in its order:
    # any of them changed draws other sets, so it draws another order too
    facts = {**model, "rng": rng, "data": data,
             "domains": {a.name: _words(a.domain) for a in attrs
                         if a.domain is not None}}
    return table._in_order(shuffled_order(derive_key(release_key(key, facts), "row-order"),
                                     table.n_rows))


def _words(domain) -> list:
    """A domain's values as a release's key takes them: booleans as a CSV
    file's 'True' and 'False' (one table from CSV and from Parquet keys one
    release, H98), anything else by its repr."""
    return [repr(str(v)) if isinstance(v, (bool, np.bool_)) else repr(v) for v in domain]


def _pack_codes(codes: np.ndarray, F: int) -> np.ndarray:
    words = (F + 63) // 64
    out = np.zeros((codes.size, words), dtype=np.uint64)
    out[np.arange(codes.size), codes >> 6] = np.uint64(1) << (codes & 63).astype(np.uint64)
    return out


def _table_distance(table: SetTable) -> tuple:
    m = table.model
    if m.get("name") != "semantic":
        from ..validate import InputError
        raise InputError("was not published under (l, d)-semantic diversity", param="table",
                         expected="a table of semantic_publish (anonset.reconstruct reads "
                                  "the tables of anonset.publish)")
    sa = m["sensitive"]
    return sa, SemanticDistance.from_dict(m["distance"], table.schema[sa]), int(m["l"]), float(m["d"])


def semantic_rows(table: SetTable, *, seed=None, research_seed: bool = False,
                  rng: str = "chacha20") -> pd.DataFrame:
    """The shuffled N x l rows of Table 7: each person's QIDs once per member
    of the set.  The shuffle is keyed (a fresh OS key unless ``seed``)."""
    sa, dist, l, _ = _table_distance(table)
    qids = [n for n in table.names if n != sa]
    n = table.n_rows
    mem = table.members(sa).reshape(-1)                       # n * l, domain order per person
    cols = {}
    for q in qids:
        a = table.schema[q]
        dom = np.empty(a.d, dtype=object)
        dom[:] = list(a.domain)
        cols[q] = np.repeat(dom[table.members(q)[:, 0]], l)
    sdom = np.empty(dist.F, dtype=object)
    sdom[:] = list(table.schema[sa].domain)
    cols[sa] = sdom[mem]
    # keyed by the table and its model too: one seed over two tables (a
    # value changed, another d) drew one permutation, and row i of both
    # outputs held the same person's rows (H21)
    from ..io.keys import release_key
    h = hashlib.sha256(b"anonset.semantic-rows.v1\x00" + int(n).to_bytes(8, "little"))
    for name in sorted(table.names, key=str):
        h.update(str(name).encode() + b"\x00")
        h.update(np.ascontiguousarray(table.members(name), dtype=np.int64).tobytes())
    key = release_key(make_key(seed, research_seed=research_seed),
                      {"model": table.model, "rng": rng, "data": h.hexdigest(),
                       "domains": {a.name: _words(a.domain)
                                   for a in table.schema.published}})
    words = _kernels.fill(key, 0, 0x7000_0000, 0, (2 * n * l + 15) // 16 + 1, rng)
    keys = words[: 2 * n * l].view(np.uint64)
    perm = np.argsort(keys, kind="stable")
    return pd.DataFrame({k: v[perm] for k, v in cols.items()})


def report_counts(rows: pd.DataFrame, sensitive: str, qids: Sequence[str],
                  domains: dict) -> np.ndarray:
    """omega of eq. 1 per QID combination from Table 7 rows: an array of shape
    (d_q1, ..., d_qk, F) (Table 9)."""
    dims = [len(domains[q]) for q in qids] + [len(domains[sensitive])]
    idx = []
    for name in list(qids) + [sensitive]:
        a = Attribute(name, "exact", tuple(domains[name]))
        idx.append(encode_column(rows[name], a).astype(np.int64))
    flat = np.ravel_multi_index(idx, dims)
    return np.bincount(flat, minlength=math.prod(dims)).reshape(dims).astype(np.float64)


def _table_counts(table: SetTable, qids: Sequence[str]) -> tuple:
    sa, dist, l, d = _table_distance(table)
    dims = [table.schema[q].d for q in qids]
    ncell = math.prod(dims)
    if ncell * dist.F > 50_000_000:
        from ..validate import InputError
        raise InputError(f"make {ncell:,} QID combinations x {dist.F:,} values, too many "
                         "cells", param="qids", expected="fewer QIDs (at most 50,000,000 "
                                                         "cells in all)")
    cell = np.zeros(table.n_rows, dtype=np.int64)
    for q, dq in zip(qids, dims):
        cell = cell * dq + table.members(q)[:, 0]
    mem = table.members(sa)
    omega = np.bincount((cell[:, None] * dist.F + mem).ravel(), minlength=ncell * dist.F)
    return omega.reshape(dims + [dist.F]).astype(np.float64), sa, dist, l, d


# ------------------------------------------------ selection probabilities
def paper_selection_matrix(distance: SemanticDistance, l: int, d: float) -> np.ndarray:
    """Eq. 2: q[i, j] = (l - 1) / |extract(S, {v_i}, d)| for j in extract.

    Exact for l = 2; for l >= 3 it is NOT the simple sampler's law (Sec. 5.3,
    Fig. 4): rows sum to l - 1 but the mass is spread uniformly."""
    ok = distance.compat(d)
    size = ok.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(ok, (l - 1) / np.maximum(size, 1), 0.0)
    return q


def selection_matrix(distance: SemanticDistance, l: int, d: float, *,
                     algorithm: str = "simple", method: str = "auto",
                     max_nodes: int = MAX_EXACT_NODES, draws: int = 200_000,
                     seed=0, n_threads: int | None = None) -> tuple:
    """q[t, j] = P(value j is among the dummies | true value t) of the
    implemented sampler.

    method: 'exact' enumerates every path of the sampler (the kernel's own
    candidate function, so the law is the implemented one); 'montecarlo'
    counts ``draws`` kernel draws per value; 'auto' tries exact within
    ``max_nodes`` tree nodes per true value (the F trees together may take
    more) and falls back to Monte Carlo; 'paper' is eq. 2.
    Rows of values that cannot be published are zero.

    Returns (q, info) where info says which method was used.
    """
    from ..validate import check_int
    l, d = _check_ld(distance, l, d)
    if method not in ("auto", "exact", "montecarlo", "paper"):
        raise InputError(f"got {method!r}", param="method",
                         expected="auto, exact, montecarlo or paper")
    draws = check_int(draws, "draws", minimum=1)
    max_nodes = check_int(max_nodes, "max_nodes", minimum=1)
    if method == "paper":
        return paper_selection_matrix(distance, l, d), {"method": "paper"}
    args = _kernel_args(distance, l, d, algorithm)
    nt = _threads(n_threads)
    if method in ("auto", "exact"):
        try:
            q, nodes = _semantic.exact_q(*args, int(max_nodes), n_threads=nt)
            return q, {"method": "exact", "nodes": nodes}
        except _semantic.TooBig:
            if method == "exact":
                raise
    ok = feasible_values(distance, l, d)
    F = distance.F
    q = np.zeros((F, F))
    key = make_key(seed, research_seed=True)   # Monte Carlo of the law, no personal data
    for t in np.flatnonzero(ok):
        codes = np.full(draws, t, dtype=np.int32)
        m = _semantic.sample(*args, codes, key, row0=int(t) * draws, n_threads=nt)
        q[t] = _unpack(m, F).sum(axis=0) / draws
        q[t, t] = 0.0
    return q, {"method": "montecarlo", "draws": draws}


# ---------------------------------------------------------------- estimators
def _omega2(omega) -> tuple:
    om = np.asarray(omega, dtype=np.float64)
    return om.reshape(-1, om.shape[-1]), om.shape


def estimate_linear(omega, q) -> np.ndarray:
    """Alg. 2: solve omega_i = x_i + sum_k q[k, i] x_k (eq. 1, 3) in every QID
    cell (last axis = sensitive value).  Can be negative."""
    om, shape = _omega2(omega)
    A = np.eye(q.shape[0]) + q
    try:
        x = np.linalg.solve(A.T, om.T).T
    except np.linalg.LinAlgError:
        x = np.linalg.lstsq(A.T, om.T, rcond=None)[0].T
    return x.reshape(shape)


def estimate_existing(omega, l: int) -> np.ndarray:
    """Eq. 21-22: x = (omega - q N) / (1 - q), q = (l - 1) / (F - 1), N = the
    cell's number of records (its reports / l)."""
    from ..validate import check_int
    om, shape = _omega2(omega)
    F = om.shape[1]
    l = check_int(l, "l", minimum=1)
    qq = (l - 1) / (F - 1)
    N = om.sum(axis=1, keepdims=True) / l
    return ((om - qq * N) / (1 - qq)).reshape(shape)


def estimate_simple(omega, l: int) -> np.ndarray:
    """Eq. 20: x = omega / l."""
    return np.asarray(omega, dtype=np.float64) / l


def estimate_em(omega, q, *, max_iter: int = 20000, tol: float = 1e-4,
                n_threads: int | None = None) -> tuple:
    """Non-negative EM with the transition matrix I + q: the multiplicative
    (Richardson-Lucy) update x_a <- x_a sum_b T[a, b] w_b / (T' x)_b with
    T = (I + q) / l, w = omega / l, in all QID cells at once through the
    Kronecker kernel (identity on the QID axis).  Starts from the linear
    estimate clipped to >= 0.1% of the cell's mean (every iterate stays > 0
    where a value can occur and keeps the cell total); stops after
    ``max_iter`` iterations or when no cell changes by more than ``tol``
    records.

    Returns (x, info)."""
    om, shape = _omega2(omega)
    C, F = om.shape
    l = float(np.rint((np.eye(F) + q).sum(axis=1).max()))
    T = (np.eye(F) + q) / l
    rows = T.sum(axis=1)
    bad = np.abs(rows - 1) > 1e-9
    T[bad] = np.eye(F)[bad]                      # unpublishable values: never observed
    w = om / l
    tot = w.sum(axis=1, keepdims=True)
    x0 = np.maximum(estimate_linear(om, q), 1e-3 * tot / F)
    x0 *= np.divide(tot, x0.sum(axis=1, keepdims=True), out=np.zeros_like(tot),
                    where=x0.sum(axis=1, keepdims=True) > 0)
    x, iters, change = _kernels.em_kron(w, x0, [C, F], [None, T], [1.0, 1.0], [0.0, 0.0],
                                        int(max_iter), float(tol), n_threads=_threads(n_threads))
    return x.reshape(shape), {"iterations": iters, "change": change, "converged": change <= tol}


def estimate(omega, estimator: str, *, l: int, q=None, **kw) -> np.ndarray:
    """Dispatch: 'linear' | 'em' | 'existing' | 'simple'."""
    if estimator == "linear":
        return estimate_linear(omega, q)
    if estimator == "em":
        return estimate_em(omega, q, **kw)[0]
    if estimator == "existing":
        return estimate_existing(omega, l)
    if estimator == "simple":
        return estimate_simple(omega, l)
    raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")


def analyze(table: SetTable, qids: Sequence[str] | None = None, *, estimator: str = "em",
            q=None, method: str = "auto", n_threads: int | None = None,
            max_iter: int = 20000, tol: float = 1e-4) -> CrossTab:
    """Estimate the cross-tabulation QIDs x sensitive value from a table
    published by :func:`semantic_publish`, per QID combination, vectorized
    over the cells.  The EM (``estimator='em'``) stops when no cell moves by
    more than ``tol`` records, or after ``max_iter`` updates: then
    ``info['converged']`` is False and a :class:`ConvergenceWarning` says
    so (raise ``max_iter``)."""
    from ..validate import InputError, check_choice, check_int, check_real
    if method in ESTIMATORS and method not in SELECTION_METHODS:
        # reconstruct's method= is its estimator: here the estimator has its own name
        raise InputError(f"got {method!r}, an estimator", param="method",
                         expected="one of " + ", ".join(SELECTION_METHODS) + " (the selection "
                                  f"probabilities); the estimator is estimator={method!r}")
    check_choice(method, "method", SELECTION_METHODS)
    check_choice(estimator, "estimator", ESTIMATORS)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    tol = check_real(tol, "tol", minimum=0.0)
    sa, dist, l, d = _table_distance(table)
    if table.n_rows == 0:               # refused as reconstruct refuses it (H88)
        raise InputError("has no rows", param="table",
                         expected="a release with at least one row to estimate from")
    size = table.schema[sa].d                      # the domain's size (d is the distance)
    if table.params[sa].says_nothing:              # l = size: every set the whole domain
        from ..validate import InputError
        raise InputError(f"was published with l = {l} values in every set of a domain of "
                         f"{size}: every set is the whole domain, so the "
                         "table says nothing of its values: any estimate would be the starting "
                         "point (a uniform split), not the data", column=sa,
                         expected="a table published with l below the domain's size")
    from ..validate import check_names
    qids = [n for n in table.names if n != sa] if qids is None else \
        list(check_names(qids, "qids"))
    for n in qids:
        if n not in table.names or n == sa:
            from ..validate import InputError
            raise InputError(f"names {n!r}, which is not a published QID of the table",
                             param="qids",
                             expected=f"QIDs of {[x for x in table.names if x != sa]}")
    # the sets must be what the metadata says they are: an estimate under
    # another l or d (a metadata edited, another file's) is a wrong one
    bad = ~is_diverse(table.mask(sa), dist, l, d)
    if bad.any():
        from ..validate import InputError, row_name
        raise InputError(f"holds {int(bad.sum()):,} set(s) that are not {l} values pairwise at "
                         f"least {d:g} apart (first at {row_name(int(np.argmax(bad)))}), as "
                         "its metadata says every set is", column=sa,
                         expected="a table as semantic-anonymize wrote it (its sets and its "
                                  "metadata together)")
    omega, sa, dist, l, d = _table_counts(table, qids)
    info = {"estimator": estimator, "l": l, "d": d}
    if q is None and estimator in ("linear", "em"):
        q, qinfo = selection_matrix(dist, l, d, algorithm=table.model["algorithm"], method=method,
                                    n_threads=n_threads)
        info["selection"] = qinfo
    if estimator == "em":
        x, emi = estimate_em(omega, q, n_threads=n_threads, max_iter=max_iter, tol=tol)
        info.update(emi, max_iter=max_iter, tol=tol)
    else:
        x = estimate(omega, estimator, l=l, q=q)
    attrs = tuple(qids) + (sa,)
    return warn_unconverged(CrossTab(attrs, tuple(table.schema[a].domain for a in attrs), x,
                                     f"semantic_{estimator}", info))


def _refuse_read_together(attrs, params, codes: dict, law, allow_clear, recodes,
                          allow_recode) -> list:
    """The sensitive column's sets read with the exact QIDs (``codes``: per
    column, every row's code; ``law``: the sensitive column's sets drawn by
    the sampler's law, as :func:`_refuse_nearly_clear` reads them) over
    rows drawn at random as anonymize draws them
    (:func:`anonset.validate.check_set_pairs`, its record): refused where
    they give the column away, unless named in ``allow_clear``; returns the
    named ones.  ``recodes``: the pass-through findings the user allowed
    (their targets are named already)."""
    from ..passthrough import RowSample, recoded_targets
    from ..validate import check_set_pairs
    from .pair_adversary import SAMPLE_ROWS as PAIR_ROWS
    sattr = next(a for a in attrs if a.role == "sensitive")
    if not any(a.role == "exact" and a.d > 1 for a in attrs) or not 1 < params[sattr.name].eta:
        return []
    sample = RowSample(PAIR_ROWS)
    rows = np.arange(len(codes[sattr.name]), dtype=np.int64)
    sample.add(pd.DataFrame({"__row": rows, **{c: np.asarray(v) for c, v in codes.items()}}), 0)
    got = sample.frame()
    picked = got["__row"].to_numpy()
    true = got[sattr.name].to_numpy().astype(np.int64)
    members = _kernels.members(np.ascontiguousarray(law[picked], dtype=np.uint64), sattr.d,
                               params[sattr.name].eta).astype(np.int64)
    # the true value first, as the adversary's columns hold it
    first = np.argmax(members == true[:, None], axis=1)
    members[np.arange(len(members)), first] = members[:, 0]
    members[:, 0] = true
    return check_set_pairs(attrs, params, {c: got[c].to_numpy() for c in codes}, allow_clear,
                           recoded=recoded_targets(recodes), allow_recode=allow_recode,
                           members={sattr.name: members})


def _near_clear_figures(codes, masks, size: int, l: int):
    """(lambda, share) of :func:`_refuse_nearly_clear`'s adversary over the
    sets ``masks``, or None where the column says nothing to guess."""
    from ..passthrough import DETERMINES
    cnt = np.bincount(codes, minlength=size).astype(np.float64)
    prior = float(cnt.max() / cnt.sum())
    if prior >= 1.0:
        return None
    members = _kernels.members(np.ascontiguousarray(masks, dtype=np.uint64), size, l)
    # ties to the smaller code, a fixed rule the adversary may as well use
    guess = members[np.arange(len(members)), np.argmax(cnt[members], axis=1)]
    success = float(np.mean(guess == codes))
    lam = (success - prior) / (1.0 - prior)
    # the rows whose own set gives their value away (its posterior removes
    # DETERMINES of the errors of guessing it from its share), as anonymize's
    # sets are judged (validate.check_clear, set_pins): here the published
    # sets themselves are read
    pi = cnt / cnt.sum()
    post = cnt[codes] / cnt[members].sum(axis=1)
    away = (post >= pi[codes] + DETERMINES * (1.0 - pi[codes]) - 1e-12) & (pi[codes] < DETERMINES)
    return lam, float(away.mean()), success, prior


def _refuse_nearly_clear(sensitive: str, codes, masks, size: int, l: int, d: float,
                         allow_clear, draw=None) -> list:
    """Sets drawn by the sampler's law (``masks``), against the adversary who
    knows the column's counts and names each set's most common value: where it removes at least
    ``DETERMINES`` of the errors of guessing the most common value, the
    column is published nearly in the clear (Adult's hours-per-week over a
    declared 0..168 at l = 2: 96.6 % named against 46.7 %), refused unless
    named in ``allow_clear``; returns [sensitive] where named.  A lower
    bound on the Bayes adversary (which also weighs how likely each value
    makes the set), so it never refuses what that adversary would not.
    ``draw(l)``: the law's sets at another l (None where l is not feasible
    at d), to name the l a refusal needs."""
    from ..passthrough import DETERMINES, GIVEN_SHARE
    from ..validate import InputError
    codes = np.asarray(codes, dtype=np.int64)
    if size < 2 or not len(codes):
        return []
    got = _near_clear_figures(codes, masks, size, l)
    if got is None:
        return []
    lam, share, success, prior = got
    if sensitive in (allow_clear or ()):
        return [sensitive] if lam >= DETERMINES or share >= GIVEN_SHARE else []
    if lam < DETERMINES and share < GIVEN_SHARE:
        return []
    larger = _passing_l(codes, size, l, d, draw)
    named = "{@allow_clear=" + repr([sensitive]) + "}"
    if lam < DETERMINES:
        raise InputError(f"would publish some rows' values nearly in the clear (l = {l}, "
                         f"d = {d:g}): for {share:.1%} of the rows the set's other values are "
                         "ones that nobody or few hold, so an adversary who knows the column's "
                         "distribution reads their true value off the set (at least "
                         f"{DETERMINES:.0%} of the errors of guessing it removed)", param="l",
                         column=sensitive,
                         expected=f"{larger}, a declared domain without values nobody holds "
                                  "(where it lists some), rare values merged into coarser "
                                  f"ones before publishing, or the risk named: {named}")
    raise InputError(f"would be published nearly in the clear (l = {l}, d = {d:g}): an "
                     "adversary who knows the column's distribution and names each set's "
                     f"most common value is right for {success:.1%} of the rows, against "
                     f"{prior:.1%} by the most common value alone (at least "
                     f"{DETERMINES:.0%} of the errors removed)", param="l", column=sensitive,
                     expected=f"{larger} (or a larger d), a declared domain with fewer values "
                              f"nobody holds, or the risk named: {named}")


#: Larger l a refusal of :func:`_refuse_nearly_clear` tries, to name one.
NEAR_CLEAR_TRIES = 6


def _passing_l(codes, size: int, l: int, d: float, draw) -> str:
    """'a larger l (l = L passes)', the first of the next few l the check
    passes at d; where none does, or the next one is not feasible at d,
    says so."""
    from ..passthrough import DETERMINES, GIVEN_SHARE
    if draw is None:
        return "a larger l"
    if l + 1 >= size:
        return (f"a larger l (only l = {size} is left, where every set is the whole domain and "
                "tells nothing)")
    for l2 in range(l + 1, min(size, l + NEAR_CLEAR_TRIES + 1)):
        masks = draw(l2)
        if masks is None:
            return (f"a larger l (l = {l2} is not feasible at d = {d:g}: a larger l "
                    "needs a smaller d)")
        got = _near_clear_figures(codes, masks, size, l2)
        if got is None or (got[0] < DETERMINES and got[1] < GIVEN_SHARE):
            return f"a larger l (l = {l2} passes this check at d = {d:g})"
    return f"a larger l (none up to {min(size - 1, l + NEAR_CLEAR_TRIES)} passes at d = {d:g})"


def semantic_marginal(table, omega=None) -> np.ndarray:
    """The sensitive attribute's counts estimated by paper 001's EM from
    omega, the number of published sets holding each value (counted from
    ``table``'s sets where not given; a file header with omega counted chunk
    by chunk does as well)."""
    sa, dist, l, d = _table_distance(table)
    if omega is None:
        omega = _table_counts(table, [])[0]
    q, _ = selection_matrix(dist, l, d, algorithm=table.model["algorithm"])
    x, _ = estimate_em(np.asarray(omega, dtype=np.float64), q)
    return np.asarray(x, dtype=np.float64).reshape(-1)


def mse(x, xhat, N: float | None = None) -> float:
    """Eq. 18: mean over cells of (x / N - xhat / N)^2 (N = total records)."""
    x = np.asarray(x, dtype=np.float64)
    xhat = np.asarray(xhat, dtype=np.float64)
    N = float(x.sum()) if N is None else float(N)
    return float((((x - xhat) / N) ** 2).mean())


# ------------------------------------------------- paper 000's sampler (Sec. 5.4)
def violation_bound(F: int, l: int, d: int) -> float:
    """Eq. 11 (= eq. 17): the lower bound rho of the per-record probability
    that paper 000's sampler (the true value and l - 1 of the other F - 1
    values, uniformly) violates (l, d)-semantic diversity under |i - j|; the
    minimum over true values, reached at v_1."""
    top = F + l + d - d * l - 2
    ach = math.comb(top, l - 1) if top >= 0 else 0
    return 1.0 - ach / math.comb(F - 1, l - 1)


def database_violation_bound(F: int, l: int, d: int, N: int) -> float:
    """Eq. 12: S >= 1 - (1 - rho)^N for a table of N records."""
    from ..validate import check_int
    N = check_int(N, "N", minimum=0)
    return 1.0 - (1.0 - violation_bound(F, l, d)) ** N


def violation_probability(distance: SemanticDistance, l: int, d: float) -> np.ndarray:
    """Exact per-record violation probability of paper 000's sampler with the
    true value always kept (p = 1, eta = l), for each true value: 1 - (number
    of (l-1)-subsets completing t to a valid set) / C(F - 1, l - 1)."""
    ok = distance.compat(d)
    F = distance.F
    nbr = [int(sum(1 << int(j) for j in np.flatnonzero(ok[i]))) for i in range(F)]

    def count(cand: int, k: int) -> int:
        if k == 0:
            return 1
        total = 0
        while cand and bin(cand).count("1") >= k:
            c = (cand & -cand).bit_length() - 1
            cand &= cand - 1
            total += count(cand & nbr[c], k - 1)
        return total

    tot = math.comb(F - 1, l - 1)
    return np.array([1.0 - count(nbr[t], l - 1) / tot for t in range(F)])


def simulate_violation(distance: SemanticDistance, l: int, d: float, codes, *, seed=None,
                       rng: str = "chacha20", n_threads: int | None = None) -> float:
    """Violation rate (eq. 23) of paper 000's sampler (p = 1, eta = l, the
    anonset kernel) on the true values ``codes``."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    # a simulation on given codes, not a publication: any seed will do
    m = _kernels.sample_sets(make_key(seed, research_seed=True), rng, [codes], [distance.F], [l], [COIN_ONE],
                             [0], [0], n_threads=_threads(n_threads))[0]
    return float(1.0 - is_diverse(m, distance, l, d).mean())


# ------------------------------------------------------ the worked example
#: Tables 8-10 of the paper (rows: male >= 50, female >= 50, male < 50,
#: female < 50; columns: obesity level 1..5); l = 2, d = 2, distance |i - j|.
TABLE_8 = np.array([[120, 50, 10, 20, 30], [80, 60, 30, 10, 20],
                    [50, 30, 110, 100, 90], [20, 20, 40, 40, 70]], dtype=np.float64)
TABLE_9 = np.array([[143, 72, 60, 86, 99], [108, 70, 65, 64, 93],
                    [188, 108, 155, 130, 179], [83, 62, 73, 57, 105]], dtype=np.float64)
TABLE_10 = np.array([[117.8, 52.5, 11.5, 20.5, 27.8], [82.9, 60.3, 30.8, 6.3, 19.9],
                     [55.1, 27.8, 105.3, 97.8, 94.1], [16.9, 18.3, 44.8, 42.3, 67.9]])


def example_distance() -> SemanticDistance:
    """Obesity levels 1..5 of Sec. 5.2 with distance |i - j|."""
    return SemanticDistance.ordered(5)


def _public(record: dict) -> dict:
    """The metadata's ``missing``: the columns a token fills named, not
    counted (the sensitive column's count of missing cells is an exact count
    of one of its values, which two releases apart by one person tell)."""
    if isinstance(record, dict) and record.get("policy") == "category" \
            and isinstance(record.get("columns"), dict):
        return {**record, "columns": list(record["columns"])}
    return record
