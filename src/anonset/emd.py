"""Earth mover's distance (EMD) with the ground distances used by t-closeness.

Every ground distance offered here is a *tree metric*: the distance between two
domain values is the total weight of the edges on the path between them in a
weighted tree whose leaves are the domain values.  For a tree metric the EMD has
the closed form (the transport plan never needs to be computed)::

    EMD(p, q) = sum over edges e of  w_e * | p(T_e) - q(T_e) |

where ``T_e`` is the set of leaves below edge ``e``.  The four kinds are

``equal``
    every distinct pair at distance 1: a star with edge weight 1/2, so
    ``EMD = 1/2 * sum_i |p_i - q_i|`` (total variation).
``ordered``
    rank distance ``|i - j| / (d - 1)`` (Li et al.; paper 003 Sec. 2.1): a path,
    ``EMD = 1/(d-1) * sum_i |sum_{j<=i} (p_j - q_j)|``.
``values``
    ``|x_i - x_j| / (x_max - x_min)`` for declared increasing numeric values
    ``x``: the 1-Wasserstein distance on the real line, divided by the range of
    the values so that it lies in [0, 1].
``hierarchical``
    ``LCA level / tree height`` for a balanced generalization hierarchy (paper
    003 Sec. 2.1): every tree edge has weight ``1 / (2 * height)``.  This equals
    the paper's ``sum_n h(n)/h(H) * min(posExtra(n), negExtra(n))``.

All distances lie in [0, 1].  See docs/emd.md for the proofs.

Examples
--------
>>> import numpy as np
>>> from anonset.emd import Ground, emd
>>> round(emd([1, 0, 0], [0, 0, 1], Ground.ordered(3)), 12)
1.0
>>> round(emd([3, 1], [1, 1], "equal"), 12)
0.25
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ._typing import GroundSpec, Weights
from .validate import InputError

if TYPE_CHECKING:
    from .hierarchy import Hierarchy

try:
    from anonset import _emd as _EXT
except ImportError:  # pragma: no cover - only before the extension is built
    _EXT = None

__all__ = ["Ground", "emd", "emd_batch", "effective_n_threads"]

_KINDS = ("equal", "ordered", "values", "hierarchical")


def effective_n_threads(n_threads: int | None = None) -> int:
    """The number of threads a kernel will use.

    ``None`` means ``OMP_NUM_THREADS`` when it is set to a positive integer,
    else ``os.cpu_count()``.  Process-global OpenMP settings are never changed.
    In a process forked from one that had imported anonset it is 1
    (:mod:`anonset._fork`).
    """
    from ._fork import in_fork_child
    if n_threads is not None:
        if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)):
            raise InputError(f"n_threads must be a positive int or None, got {n_threads!r}")
        if n_threads < 1:
            raise InputError(f"n_threads must be >= 1, got {n_threads}")
    if in_fork_child():
        return 1
    if n_threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        if env.isdigit() and int(env) > 0:
            return int(env)
        return os.cpu_count() or 1
    return int(n_threads)


class Ground:
    """A ground distance over a domain of ``d`` values, stored as a weighted tree.

    Use the constructors :meth:`equal`, :meth:`ordered`, :meth:`values`,
    :meth:`tree` or :meth:`from_spec`; do not call ``Ground(...)`` directly.

    Attributes
    ----------
    d : int
        Domain size (number of leaves).
    kind : str
        One of ``'equal'``, ``'ordered'``, ``'values'``, ``'hierarchical'``.
    parent : ndarray of int64, shape (n_nodes,)
        Parent of every tree node, -1 for the root.  Nodes ``0 .. d-1`` are the
        domain values; every parent index is larger than its child's index.
    weight : ndarray of float64, shape (n_nodes,)
        Weight of the edge from a node to its parent (0 for the root).

    Examples
    --------
    >>> g = Ground.ordered(4)
    >>> float(g.matrix()[0, 3])
    1.0
    >>> float(Ground.values([0.0, 1.0, 4.0]).matrix()[0, 1])
    0.25
    """

    __slots__ = ("d", "kind", "parent", "weight", "_values", "_hierarchy")

    def __init__(self, d: int, kind: str, parent: np.ndarray, weight: np.ndarray,
                 values: np.ndarray | None = None, hierarchy: Hierarchy | None = None) -> None:
        self.d = int(d)
        self.kind = kind
        self.parent = np.ascontiguousarray(parent, dtype=np.int64)
        self.weight = np.ascontiguousarray(weight, dtype=np.float64)
        self.parent.setflags(write=False)
        self.weight.setflags(write=False)
        self._values = values
        self._hierarchy = hierarchy

    # ------------------------------------------------------------ constructors
    @staticmethod
    def _check_d(d) -> int:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise InputError(f"d must be a positive int, got {d!r}")
        return int(d)

    @classmethod
    def equal(cls, d: int) -> "Ground":
        """Every pair of distinct values at distance 1 (a star, edges 1/2)."""
        d = cls._check_d(d)
        parent = np.full(d + 1, d, dtype=np.int64)
        parent[d] = -1
        weight = np.full(d + 1, 0.5)
        weight[d] = 0.0
        return cls(d, "equal", parent, weight)

    @classmethod
    def ordered(cls, d: int) -> "Ground":
        """Rank distance ``|i - j| / (d - 1)`` (0 when ``d == 1``)."""
        d = cls._check_d(d)
        parent = np.arange(1, d + 1, dtype=np.int64)
        parent[d - 1] = -1
        weight = np.full(d, 1.0 / (d - 1) if d > 1 else 0.0)
        weight[d - 1] = 0.0
        return cls(d, "ordered", parent, weight)

    @classmethod
    def values(cls, x: Sequence[float]) -> "Ground":
        """1-Wasserstein distance over declared numeric values ``x``.

        ``x`` must be finite and strictly increasing (one per domain value, in
        domain order).  Distances are ``|x_i - x_j| / (max(x) - min(x))`` so that
        they lie in [0, 1]; with ``x = 0, 1, ..., d-1`` this is :meth:`ordered`.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 1 or x.size < 1:
            raise InputError(f"x must be a non-empty 1-d sequence of numbers, got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise InputError("x must be finite")
        if x.size > 1 and not np.all(np.diff(x) > 0):
            raise InputError("x must be strictly increasing (one value per domain value, in order)")
        d = x.size
        parent = np.arange(1, d + 1, dtype=np.int64)
        parent[d - 1] = -1
        weight = np.zeros(d)
        if d > 1:
            weight[:-1] = np.diff(x) / (x[-1] - x[0])
        x = x.copy()
        x.setflags(write=False)
        return cls(d, "values", parent, weight, values=x)

    @classmethod
    def tree(cls, hierarchy: Hierarchy) -> "Ground":
        """Hierarchical distance: LCA level / tree height (paper 003 Sec. 2.1).

        ``hierarchy`` is an :class:`anonset.hierarchy.Hierarchy` (balanced); its
        leaves are the domain values in domain order.
        """
        anc = np.asarray(hierarchy.ancestors, dtype=np.int64)
        d, width = anc.shape
        height = width - 1
        if height == 0:
            # a lone root: only possible with d == 1
            return cls(d, "hierarchical", np.array([-1] * d, dtype=np.int64),
                       np.zeros(d), hierarchy=hierarchy)
        # renumber: leaves keep 0..d-1 in domain order, inner nodes follow by
        # increasing level so that every parent index exceeds its child's.
        new_id = {}
        for i in range(d):
            new_id[int(anc[i, 0])] = i
        nxt = d
        for h in range(1, height + 1):
            for i in range(d):
                nid = int(anc[i, h])
                if nid not in new_id:
                    new_id[nid] = nxt
                    nxt += 1
        parent = np.full(nxt, -1, dtype=np.int64)
        for i in range(d):
            for h in range(height):
                parent[new_id[int(anc[i, h])]] = new_id[int(anc[i, h + 1])]
        weight = np.full(nxt, 1.0 / (2.0 * height))
        weight[parent < 0] = 0.0
        return cls(d, "hierarchical", parent, weight, hierarchy=hierarchy)

    @classmethod
    def from_spec(cls, spec: GroundSpec, d: int | None = None,
                  hierarchy: Hierarchy | None = None) -> "Ground":
        """Build a ground distance from a short specification.

        Parameters
        ----------
        spec : {'equal', 'ordered', 'hierarchical'}, array of values, or Ground
            'hierarchical' needs ``hierarchy``; an array gives :meth:`values`.
        d : int, optional
            Domain size; required for 'equal' and 'ordered', checked otherwise.
        hierarchy : Hierarchy, optional
            The tree for 'hierarchical'.

        Examples
        --------
        >>> Ground.from_spec("ordered", 5).kind
        'ordered'
        """
        if isinstance(spec, Ground):
            g = spec
        elif isinstance(spec, str):
            if spec == "equal":
                g = cls.equal(cls._check_d(d) if d is not None else _need_d(spec))
            elif spec == "ordered":
                g = cls.ordered(cls._check_d(d) if d is not None else _need_d(spec))
            elif spec in ("hierarchical", "tree"):
                if hierarchy is None:
                    raise InputError("ground='hierarchical' needs a hierarchy")
                g = cls.tree(hierarchy)
            else:
                raise InputError(f"ground must be 'equal', 'ordered', 'hierarchical', an "
                                 f"array of values or a Ground, got {spec!r}")
        else:
            try:
                x = np.asarray(spec, dtype=np.float64)
            except (TypeError, ValueError):
                raise InputError(f"ground must be 'equal', 'ordered', 'hierarchical', an "
                                 f"array of values or a Ground, got {spec!r}") from None
            g = cls.values(x)
        if d is not None and g.d != d:
            raise InputError(f"ground has {g.d} values but the distributions have {d}")
        return g

    # ------------------------------------------------------------ queries
    @property
    def n_nodes(self) -> int:
        return int(self.parent.size)

    def matrix(self) -> np.ndarray:
        """The dense ``d x d`` ground-distance matrix."""
        d = self.d
        if self.kind == "equal":
            return 1.0 - np.eye(d)
        if self.kind == "ordered":
            if d == 1:
                return np.zeros((1, 1))
            i = np.arange(d, dtype=np.float64)
            return np.abs(i[:, None] - i[None, :]) / (d - 1)
        if self.kind == "values":
            x = self._values
            if d == 1:
                return np.zeros((1, 1))
            return np.abs(x[:, None] - x[None, :]) / (x[-1] - x[0])
        return np.asarray(self._hierarchy.ground_distance(), dtype=np.float64)

    def leaf_sets(self) -> np.ndarray:
        """Boolean ``(n_nodes, d)`` matrix: which leaves lie below each node."""
        m = np.zeros((self.n_nodes, self.d), dtype=bool)
        m[np.arange(self.d), np.arange(self.d)] = True
        for v in range(self.n_nodes):
            p = self.parent[v]
            if p >= 0:
                m[p] |= m[v]
        return m

    def __repr__(self):
        return f"Ground(kind={self.kind!r}, d={self.d})"


def _need_d(spec):
    raise InputError(f"ground={spec!r} needs the domain size d")


# ---------------------------------------------------------------- validation
def _as_distribution(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise InputError(f"{name} must be numeric, got dtype {a.dtype}")
    a = a.astype(np.float64, copy=False)
    if a.ndim != 1 or a.size == 0:
        raise InputError(f"{name} must be a non-empty 1-d array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} contains NaN or infinite values")
    if np.any(a < 0):
        raise InputError(f"{name} contains negative values")
    s = a.sum()
    if not s > 0:
        raise InputError(f"{name} sums to zero; it must have positive total mass")
    return a / s


def _as_vector(x, name: str) -> np.ndarray:
    """dtype / shape checks of :func:`emd`'s fast path; a 1-d float64 copy."""
    a = np.asarray(x)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise InputError(f"{name} must be numeric, got dtype {a.dtype}")
    if a.ndim != 1 or a.size == 0:
        raise InputError(f"{name} must be a non-empty 1-d array, got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


_SPEC_CACHE: dict = {}


def _pair_ground(spec, d):
    """Ground for a spec and domain size; string specs are built once per d."""
    if isinstance(spec, str):
        key = (spec, d)
        g = _SPEC_CACHE.get(key)
        if g is None:
            g = Ground.from_spec(spec, d)
            if len(_SPEC_CACHE) < 256:
                _SPEC_CACHE[key] = g
        return g
    return None     # arrays of values and the rest: the general path


def resolve_ground(ground, d):
    if isinstance(ground, Ground):
        if ground.d != d:
            raise InputError(f"ground has {ground.d} values but the distributions have {d}")
        return ground
    return Ground.from_spec(ground, d)


def _tree_emd_rows(P: np.ndarray, q: np.ndarray, g: Ground) -> np.ndarray:
    """Reference NumPy evaluation of the tree formula for normalized rows."""
    n = P.shape[0]
    extra = np.zeros((n, g.n_nodes))
    extra[:, : g.d] = P - q[None, :]
    out = np.zeros(n)
    for v in range(g.n_nodes):
        p = g.parent[v]
        if p >= 0:
            out += g.weight[v] * np.abs(extra[:, v])
            extra[:, p] += extra[:, v]
    return out


def emd(p: Weights, q: Weights, ground: GroundSpec = "equal") -> float:
    """Earth mover's distance between two distributions over the same domain.

    Parameters
    ----------
    p, q : array_like, shape (d,)
        Probability vectors or counts (non-negative, finite, positive sum);
        each is divided by its own sum first.
    ground : Ground or spec
        A :class:`Ground`, or anything :meth:`Ground.from_spec` accepts with
        ``d = len(p)`` ('equal', 'ordered', an array of values).

    Returns
    -------
    float
        The EMD, in [0, 1].

    Raises
    ------
    InputError
        (a ValueError) Naming ``p``, ``q`` or ``ground`` on negative / NaN
        entries, zero sum, length mismatch or a ground over another domain
        size.

    Examples
    --------
    >>> round(emd([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], "ordered"), 12)
    0.5
    """
    if _EXT is not None:
        # fast path (about 1 us for d = 41): one validation pass over p and q
        # in C, no temporaries; the Ground's parent / weight arrays are used
        # as stored.  Anything that is not a 1-d float64 array is converted
        # (and its dtype / shape checked) by _as_vector first.
        if isinstance(ground, Ground):
            g = ground
        else:
            try:
                d = len(p)
            except TypeError:
                d = None
            g = _pair_ground(ground, d) if d else None
        if g is not None:
            try:
                return _EXT.emd_pair(p, q, g.d, g.parent, g.weight, _as_vector)
            except InputError:
                raise
            except ValueError as e:          # the kernel's checks: bad input all the same
                raise InputError(str(e)) from None
    pp = _as_distribution(p, "p")
    qq = _as_distribution(q, "q")
    if pp.size != qq.size:
        raise InputError(f"p and q differ in length ({pp.size} != {qq.size})")
    g = resolve_ground(ground, pp.size)
    return float(_batch_impl(pp[None, :], qq, g, 1, normalized=True)[0])


def emd_batch(P: np.ndarray | Sequence[Weights], q: Weights, ground: GroundSpec = "equal",
              n_threads: int | None = None) -> np.ndarray:
    """EMD of every row of ``P`` against one reference distribution ``q``.

    Parameters
    ----------
    P : array_like, shape (n, d)
        One distribution per row, as counts (int64 recommended: exact at any
        census scale) or floats; each row is divided by its own sum.
    q : array_like, shape (d,)
        Reference distribution (counts or probabilities).
    ground : Ground or spec
        See :func:`emd`.
    n_threads : int, optional
        Threads for the kernel; default :func:`effective_n_threads`.  Results
        are bit-identical for any thread count.

    Returns
    -------
    ndarray of float64, shape (n,)

    Examples
    --------
    >>> emd_batch([[1, 0], [0, 1], [1, 1]], [1, 1], "equal")
    array([0.5, 0.5, 0. ])
    """
    Pa = np.asarray(P)
    if Pa.dtype == object or not (np.issubdtype(Pa.dtype, np.number) or Pa.dtype == bool):
        raise InputError(f"P must be numeric, got dtype {Pa.dtype}")
    if Pa.ndim != 2:
        raise InputError(f"P must be 2-d (one distribution per row), got shape {Pa.shape}")
    qq = _as_distribution(q, "q")
    if Pa.shape[1] != qq.size:
        raise InputError(f"P has {Pa.shape[1]} columns but q has {qq.size} values")
    nt = effective_n_threads(n_threads)
    g = resolve_ground(ground, qq.size)
    if Pa.shape[0] == 0:
        return np.zeros(0)
    if np.issubdtype(Pa.dtype, np.integer) or Pa.dtype == bool:
        Pa = np.ascontiguousarray(Pa, dtype=np.int64)
        if (Pa < 0).any():
            raise InputError(f"P contains negative values (row {int(np.argmax((Pa < 0).any(1)))})")
    else:
        Pa = np.ascontiguousarray(Pa, dtype=np.float64)
        bad = ~np.isfinite(Pa)
        if bad.any():
            raise InputError("P contains NaN or infinite values "
                             f"(row {int(np.argmax(bad.any(1)))})")
        if (Pa < 0).any():
            raise InputError(f"P contains negative values (row {int(np.argmax((Pa < 0).any(1)))})")
    out = _batch_impl(Pa, qq, g, nt, normalized=False)
    if np.isnan(out).any():
        raise InputError(f"P row {int(np.argmax(np.isnan(out)))} sums to zero; every row needs "
                         "positive total mass")
    return out


def _batch_impl(P, q, g: Ground, n_threads: int, normalized: bool) -> np.ndarray:
    """Dispatch to the compiled kernel; NaN marks a zero-mass row."""
    try:
        from anonset import _emd
    except ImportError:  # pragma: no cover - only before the extension is built
        _emd = None
    if _emd is not None:
        if P.dtype == np.int64:
            return _emd.tree_emd_batch(P, q, g.parent, g.weight, n_threads)
        return _emd.tree_emd_batch(np.ascontiguousarray(P, dtype=np.float64), q,
                                   g.parent, g.weight, n_threads)
    return _emd_batch_numpy(P, q, g)


def _emd_batch_numpy(P, q, g: Ground) -> np.ndarray:
    """Pure-NumPy reference of :func:`emd_batch` (rows normalized here)."""
    P = np.asarray(P, dtype=np.float64)
    s = P.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        Pn = P / s[:, None]
    out = _tree_emd_rows(Pn, np.asarray(q, dtype=np.float64), g)
    out[s <= 0] = np.nan
    return out


def emd_reference(p, q, ground) -> float:
    """The paper-003 formulas written out literally (tests use this as an oracle).

    Hierarchical: ``sum_n h(n)/h(H) * min(posExtra(n), negExtra(n))`` over inner
    nodes ``n``, with ``extra`` summed over the direct children of ``n``.
    """
    p = _as_distribution(p, "p")
    q = _as_distribution(q, "q")
    g = resolve_ground(ground, p.size)
    d = p.size
    if g.kind == "equal":
        return 0.5 * float(np.abs(p - q).sum())
    if g.kind == "ordered":
        return float(np.abs(np.cumsum(p - q)).sum() / (d - 1)) if d > 1 else 0.0
    if g.kind == "values":
        x = g._values
        if d == 1:
            return 0.0
        return float((np.abs(np.cumsum(p - q))[:-1] * np.diff(x)).sum() / (x[-1] - x[0]))
    h = g._hierarchy
    H = h.height
    if H == 0:
        return 0.0
    anc = h.ancestors
    total = 0.0
    for lev in range(1, H + 1):
        for n in np.unique(anc[:, lev]):
            below = anc[:, lev] == n
            children = np.unique(anc[below, lev - 1])
            extras = np.array([(p - q)[anc[:, lev - 1] == c].sum() for c in children])
            pos = extras[extras > 0].sum()
            neg = -extras[extras < 0].sum()
            total += lev / H * min(pos, neg)
    return float(total)
