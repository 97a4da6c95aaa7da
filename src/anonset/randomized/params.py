"""Parameter optimization, paper 000 Sec. V-C: (p_j, eta_j) per sensitive QID.

* Diversity and anonymity: p_j = 1, eta_j = l_j (k_j) (Theorems 1-3).
* Closeness (Algorithm 1): for each eta the largest p such that the WORST set
  of size eta still has EMD(A_j, B_j) <= t_j (eq. 12), then the eta that
  minimizes the expected L2 distance of eq. 9.  The pseudo-code of Algorithm 1
  records a (p, eta) pair per subset and takes the overall minimum of eq. 9,
  which keeps the most lenient subset and breaks Theorem 4; we follow the text
  (docs/algorithms.md).

The coin of the sampler is a 32-bit comparison, so a p given is published as
floor(p * 2^32) / 2^32: never above the admissible p.  A p that Algorithm 1
computes is published as floor(p * P_GRID) / P_GRID: the admissible p is a
closed-form function of the worst set's share of the rows, so at full
precision it published an exact count of the original table, and two
releases one person apart told whether that person holds the value.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Sequence

import numpy as np

from .._typing import Model
from ..models import Anonymity, Closeness, Diversity, DiversityCloseness
from ..schema import Attribute

__all__ = ["AttributeParams", "expected_l2", "kappa", "optimize", "closeness_parameters",
           "max_admissible_p", "COIN_ONE", "P_GRID", "grid_p", "T_GRID",
           "grid_t"]

COIN_ONE = 1 << 32

#: Algorithm 1's p is published on this grid (rounded down, so never above
#: the admissible p): one person moves the exact p by about 1/n, so a step
#: of 1/256 hides that move on all but about 256/n of the tables one person
#: apart (docs/algorithms.md, "The published p of t-closeness").
P_GRID = 256

#: The t a refusal names for a series' later release (the least t its data
#: admits at the series' p) is rounded up to this grid: that least t is a
#: closed form of the column's counts, and at six digits two waves' named t
#: told a value's exact counts (1,530 and 1,531: one person moved, H76).  A
#: step of 1/200 hides a move of one person as P_GRID does for p.
T_GRID = 200


@dataclass(frozen=True)
class AttributeParams:
    """Publishing parameters of one attribute.

    p : head probability of the coin (true value kept); eta : set size.
    l, t, k : the privacy targets that produced them (None when not used).
    ground : the EMD ground distance used for t (None when not used).
    """

    name: str
    p: float
    eta: int
    d: int
    exact: bool = False
    l: int | None = None
    t: float | None = None
    k: int | None = None
    ground: str | None = None

    def __post_init__(self):
        # whole numbers and real numbers as Python's own: an eta of
        # np.int64(2) wrote no metadata, True read back as no integer, 2.5
        # failed deep in the sampler (H78)
        from ..validate import InputError
        for f in ("eta", "d", "l", "k"):
            v = getattr(self, f)
            if v is None and f in ("l", "k"):
                continue
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, float,
                                                                      np.floating)) \
                    or not float(v).is_integer():
                raise InputError(f"{f} = {v!r}", param="params", column=self.name,
                                 expected=f"a whole number for {f}")
            object.__setattr__(self, f, int(v))
        for f in ("p", "t"):
            v = getattr(self, f)
            if v is None and f == "t":
                continue
            # (a NaN is a number: the range checks of its readers name it)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, float,
                                                                      np.floating)):
                raise InputError(f"{f} = {v!r}", param="params", column=self.name,
                                 expected=f"a real number for {f}")
            object.__setattr__(self, f, float(v))
        object.__setattr__(self, "exact", bool(self.exact))

    @property
    def coin(self) -> int:
        """32-bit coin threshold: head iff a uniform 32-bit word < coin."""
        return COIN_ONE if self.p >= 1.0 else int(math.floor(self.p * COIN_ONE))

    @property
    def says_nothing(self) -> bool:
        """Every set is drawn without regard to the true value: eta >= d (each
        set is the whole domain) or p = 0 (each a uniform eta-subset), on a
        domain of d > 1 values.  The sets then carry no information (epsilon
        0), and any estimate of the attribute is its estimator's start."""
        return self.d > 1 and not self.exact and (self.eta >= self.d or self.p <= 0.0)

    @property
    def kappa_c(self) -> float:
        return kappa(self.p, self.eta, self.d)[0]

    @property
    def kappa_d(self) -> float:
        return kappa(self.p, self.eta, self.d)[1]

    @property
    def inclusion(self) -> float:
        """P(true value in its set) = p + (1 - p) eta / d (eq. 19, diagonal)."""
        return self.p + (1.0 - self.p) * self.eta / self.d

    @property
    def other_inclusion(self) -> float:
        """P(a given other value in the set) (eq. 19, off-diagonal)."""
        if self.d == 1:
            return 0.0
        return self.p * (self.eta - 1) / (self.d - 1) + (1.0 - self.p) * self.eta / self.d

    def to_dict(self) -> dict:
        out = {"name": self.name, "p": self.p, "eta": self.eta, "d": self.d, "exact": self.exact}
        for k in ("l", "t", "k", "ground"):
            v = getattr(self, k)
            if v is not None:
                out[k] = "inf" if isinstance(v, float) and math.isinf(v) else v
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> "AttributeParams":
        t = d.get("t")
        return cls(name=d["name"], p=float(d["p"]), eta=int(d["eta"]), d=int(d["d"]),
                   exact=bool(d.get("exact", False)), l=d.get("l"),
                   t=math.inf if t == "inf" else t, k=d.get("k"), ground=d.get("ground"))


def quantize_p(p: float) -> float:
    """The coin probability the sampler really has: floor(p 2^32) / 2^32."""
    if p >= 1.0:
        return 1.0
    return math.floor(p * COIN_ONE) / COIN_ONE


def grid_p(p: float) -> float:
    """Algorithm 1's p as published: floor(p P_GRID) / P_GRID (a multiple of
    2^-32, so :func:`quantize_p` keeps it)."""
    if p >= 1.0:
        return 1.0
    return math.floor(p * P_GRID) / P_GRID


def grid_t(t: float) -> float:
    """The least t a series' later release needs, as a refusal names it:
    rounded up to a multiple of 1/T_GRID (three decimals), never below t."""
    k = math.ceil(round(t * T_GRID, 9))
    v = round(k / T_GRID, 3)
    return v if v >= t else round((k + 1) / T_GRID, 3)


def kappa(p: float, eta: int, d: int) -> tuple:
    """(kappa_c, kappa_d) of Sec. V-C3: probability of one specific published
    set that contains (kappa_c) / does not contain (kappa_d) the true value."""
    c = (p + (1.0 - p) * eta / d) / math.comb(d - 1, eta - 1)
    kd = (1.0 - (p + (1.0 - p) * eta / d)) / math.comb(d - 1, eta) if eta < d else 0.0
    return c, kd


def expected_l2(N: int, d: int, p: float, eta: int) -> float:
    """Expected L2 distance of eq. 9 for one attribute (infinite where eq. 9
    divides by zero: p = 0 or eta = d)."""
    if d == 1:
        return 0.0
    if p <= 0.0 or eta >= d:
        return math.inf
    num = (1 - d) * (p * p * d + eta - (p * p + d) * eta)
    den = p * p * d * N * (d - eta)
    return math.sqrt(max(num / den, 0.0))


# ------------------------------------------------------------- closeness
def _p_for_subset(a: float, E: float, eta: int, d: int, t: float) -> float:
    """Largest p with EMD(A, B_Z) <= t for a set Z with A(Z) = a and
    E = EMD(A, A|_Z).  EMD(A, B_Z) = (1 - lam) E with lam = u / (u + (1-u) a)
    and u = kappa_d / kappa_c = (1-p) eta / (p d + (1-p) eta): see
    docs/algorithms.md, "Closed form for Algorithm 1"."""
    if E <= t or a <= 0.0:
        return 1.0
    tau = t / E
    u_star = a * (1.0 - tau) / (a + tau * (1.0 - a))
    return eta * (1.0 - u_star) / (eta + u_star * (d - eta))


def _subset_emd(A: np.ndarray, Z, ground) -> tuple:
    from ..emd import emd
    a = float(A[list(Z)].sum())
    if a <= 0.0:
        return 0.0, 0.0
    R = np.zeros_like(A)
    R[list(Z)] = A[list(Z)] / a
    return a, emd(A, R, ground)


def max_admissible_p_bruteforce(A, eta: int, t: float, ground) -> float:
    """Largest admissible p for set size eta by enumerating all C(d, eta)
    subsets (reference for small domains)."""
    A = np.asarray(A, dtype=np.float64)
    A = A / A.sum()
    d = len(A)
    best = 1.0
    for Z in combinations(range(d), eta):
        a, E = _subset_emd(A, Z, ground)
        best = min(best, _p_for_subset(a, E, eta, d, t))
    return best


def max_admissible_p(A, eta: int, t: float, ground) -> float:
    """Largest p such that every published set of size eta satisfies
    EMD(A, B) <= t (eq. 12).  Exact; uses the subset-free search of
    :mod:`anonset.closeness_search` when available, else enumeration."""
    try:
        from .closeness_search import max_admissible_p as exact
    except ImportError:  # pragma: no cover - closeness_search ships with the package
        exact = None
    if exact is not None:
        p, _is_exact = exact(A, eta, t, ground)   # a bound, when not exact, is conservative
        return float(p)
    return max_admissible_p_bruteforce(A, eta, t, ground)


def closeness_parameters(A, N: int, t: float, ground, eta_min: int = 1) -> tuple:
    """Algorithm 1 for one attribute: (p, eta) minimizing eq. 9 subject to
    the worst-case closeness constraint.  A: the distribution A_j, as counts
    (preferred: the search is exact on more cases) or probabilities.
    Returns p on the published grid (:func:`grid_p`)."""
    from .closeness_search import HLower, p_of_u
    A = np.asarray(A)
    d = len(A)
    if math.isinf(t) or t >= 1.0:   # every ground distance here lies in [0, 1]
        return 1.0, max(1, eta_min)
    bound = HLower(A, t, ground)
    best = (math.inf, 1.0, d)      # (E_L2, p, eta): eta = d is always admissible
    for eta in range(max(1, eta_min), d):
        # eq. 9 falls as p rises, so p = 1 bounds this eta's error from
        # below, and that bound rises with eta: once it reaches the best
        # error, no larger eta can do better (the same (p, eta) as trying
        # them all; d = 3,743 took 3,738 searches)
        if expected_l2(N, d, 1.0, eta) > best[0] * (1.0 + 1e-9):
            break
        # a lower bound on H gives an upper bound on this eta's p, so a lower
        # one on its error: skip the exact search where even that loses
        h_lb = bound.at(eta)
        if h_lb > 0.0:
            p_ub = p_of_u(h_lb / (h_lb + t), eta, d)
            if p_ub <= 0.0 or expected_l2(N, d, min(1.0, p_ub), eta) > best[0] * (1.0 + 1e-9):
                continue
        p = grid_p(max_admissible_p(A, eta, t, ground))
        if p <= 0.0:
            continue
        e = expected_l2(N, d, p, eta)
        if e < best[0]:
            best = (e, p, eta)
    return best[1], best[2]


# ------------------------------------------------------------- optimize
def resolve_ground(model, attr: Attribute) -> str:
    g = model.ground_for(attr.name)
    if g == "auto":
        if attr.hierarchy is not None:
            return "hierarchical"
        # A missing token has no place in an order: 'ordered' would put it
        # beside the largest value (one step away), a choice nobody made.
        # 'equal' puts every pair of values at distance 1, the largest any
        # ground distance gives, so t under it implies t under any order.
        if attr.kind == "ordinal" and attr.missing is None:
            return "ordered"
        return "equal"
    if g == "hierarchical" and attr.hierarchy is None:
        from ..validate import InputError
        raise InputError("has the ground 'hierarchical' but no hierarchy", param="ground",
                         column=attr.name,
                         expected="a hierarchy for it ({@hierarchies}), or another ground "
                                  "(equal, ordered)")
    return g


def ground_object(name: str, attr: Attribute):
    """The emd.Ground for a ground name on an attribute."""
    from ..emd import Ground
    if name == "hierarchical":
        return Ground.tree(attr.hierarchy)
    if name == "ordered":
        return Ground.ordered(attr.d)
    return Ground.equal(attr.d)


def optimize(model: Model, attributes: Sequence[Attribute],
             codes: Mapping[str, np.ndarray] | None = None, *,
             clip_l: bool = False) -> dict:
    """(p_j, eta_j) for every published attribute.

    Parameters
    ----------
    model : Diversity | Anonymity | Closeness | DiversityCloseness
    attributes : list of Attribute (sensitive and exact)
    codes : {name: codes}, needed for closeness (the distribution A_j)
    clip_l : bool
        Where l_j (or k_j) >= d_j, use l_j = d_j - 1 as the paper's experiments
        do, with a warning (this weakens the requested privacy).  Without it,
        l_j > d_j is an error.

    Returns
    -------
    dict name -> AttributeParams
    """
    out = {}
    if isinstance(model, (Closeness, DiversityCloseness)):
        _warn_order_without_missing([
            a for a in attributes
            if a.role != "exact" and a.kind == "ordinal" and a.missing is not None
            and model.ground_for(a.name) == "auto" and resolve_ground(model, a) == "equal"])
    for attr in attributes:
        d = attr.d
        if attr.role == "exact":
            out[attr.name] = AttributeParams(attr.name, 1.0, 1, d, exact=True)
            continue
        if isinstance(model, (Diversity, Anonymity)):
            target = model.l_for(attr.name) if isinstance(model, Diversity) else model.k_for(attr.name)
            what = "l" if isinstance(model, Diversity) else "k"
            target = _check_target(target, d, attr.name, what, clip_l,
                                   _per_column(model, attributes, what),
                                   _whole_domain(model, attributes, what))
            kw = {what: target}
            out[attr.name] = AttributeParams(attr.name, 1.0, target, d, **kw)
        elif isinstance(model, (Closeness, DiversityCloseness)):
            if codes is None or attr.name not in codes:
                raise ValueError(f"closeness needs the data of {attr.name!r} (its distribution A_j)")
            t = model.t_for(attr.name)
            l_min = 1
            if isinstance(model, DiversityCloseness):
                l_min = _check_target(model.l_for(attr.name), d, attr.name, "l", clip_l,
                                      _per_column(model, attributes, "l"),
                                      _whole_domain(model, attributes, "l"))
            g = resolve_ground(model, attr)
            if math.isinf(t):
                p, eta = 1.0, l_min
            else:
                # integer counts: the exact search can use the totals a set can reach
                A = np.bincount(codes[attr.name], minlength=d).astype(np.int64)
                N = int(A.sum())
                p, eta = closeness_parameters(A, N, t, ground_object(g, attr), eta_min=l_min)
            out[attr.name] = AttributeParams(attr.name, p, eta, d, t=t, ground=g,
                                             l=l_min if isinstance(model, DiversityCloseness) else None)
        else:
            raise TypeError(f"unknown privacy model {model!r}")
    return out


def _warn_order_without_missing(attrs: list) -> None:
    """Ordinal attributes with a missing token are measured under the equal
    ground by default (the token has no place in the order): say so, once
    for all of them, since the user named an order."""
    if not attrs:
        return
    from ..schema import _outside_stacklevel
    from ..validate import option_text
    names = ", ".join(repr(a.name) for a in attrs)
    tokens = sorted({repr(a.missing) for a in attrs})
    one = len(attrs) == 1
    api = ", ".join(f"{a.name!r}: 'ordered'" for a in attrs)
    cli = option_text("--ground", {a.name: "ordered" for a in attrs})
    warnings.warn(f"{names} {'is' if one else 'are'} ordinal, but {'its' if one else 'their'} "
                  f"missing cells (published as {' / '.join(tokens)}) have no place in "
                  f"{'its' if one else 'their'} order, so t is measured under the equal ground "
                  f"(every pair of values 1 apart: stricter than any order, at a cost in p); to "
                  f"put them last in the order instead, name the ground "
                  f"(ground={{{api}}}; {cli})", stacklevel=_outside_stacklevel())


def _per_column(model, attributes, what: str) -> dict:
    """The model's l (or k) per sensitive column, each at most its domain
    size: the per-column form a refusal of a too large l suggests."""
    get = model.l_for if what == "l" else model.k_for
    return {a.name: min(int(get(a.name)), a.d) for a in attributes if a.role != "exact"}


def _whole_domain(model, attributes, what: str) -> list:
    """The sensitive columns whose l (or k) reaches their domain size: in
    the per-column form, their sets are the whole domain."""
    get = model.l_for if what == "l" else model.k_for
    return [a.name for a in attributes if a.role != "exact" and int(get(a.name)) >= a.d > 1]


def _check_target(v: int, d: int, name: str, what: str, clip: bool,
                  per_column: dict | None = None, whole: list | None = None) -> int:
    if v > d or (clip and v >= d and d > 1):
        if clip:
            new = max(d - 1, 1)
            warnings.warn(f"{what} = {v} for {name!r} is not below its domain size {d}; using "
                          f"{what} = {new} as requested by clip_l (this is weaker than asked)",
                          stacklevel=3)
            return new
        from ..validate import InputError
        per = f" ({'an' if what == 'l' else 'a'} {what} per column: {{@{what}={per_column!r}}})" \
            if per_column and len(per_column) > 1 else ""
        clip_to = (f", or {{@clip_l=True}} to use {what} = d - 1, which is weaker" if d > 2
                   else "")          # at d = 2, d - 1 = 1 would publish it in the clear
        if d == 1:          # l <= 1 would be refused in turn: the column says nothing
            raise InputError(f"{what} = {v} for {name!r} exceeds its domain size d = 1: one "
                             "value (or bin) for every row, whose sets would all be that value",
                             param=what, expected=f"a domain of at least {v} values for "
                                                  f"{name!r} (more bins), or the column dropped")
        # at l = d a set is the whole domain: published, but telling nothing
        whole = whole or [name]
        nothing = (f"; at {what} = d the sets of {', '.join(map(repr, whole))} are their whole "
                   "domain and tell nothing (reconstruct refuses such a column): t-closeness "
                   "({@t}) keeps a column of few values informative")
        raise InputError(f"{what} = {v} for {name!r} exceeds its domain size d = {d}: no set of "
                         f"{v} distinct values exists", param=what,
                         expected=f"{what} <= {d}{per}{clip_to}{nothing}")
    return v
