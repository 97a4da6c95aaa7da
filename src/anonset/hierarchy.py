"""Generalization hierarchies (trees over an attribute's domain).

A :class:`Hierarchy` is a rooted tree whose leaves are the domain values of one
attribute, in domain order.  It is read from ARX-format CSV files (one line per
leaf, ``leaf;level1;...;root``) or built from numeric bins.  Every leaf sits at
the same depth ``height``; a label that appears under two different parents is
two different nodes (a node is identified by its label *and* its ancestors).

The tree gives the hierarchical ground distance used by t-closeness and by
(l, d)-semantic diversity: the distance between two leaves is the height of
their lowest common ancestor divided by the height of the tree.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ._typing import PathLike

__all__ = ["Hierarchy", "hierarchy_of"]


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A balanced generalization tree over a domain.

    Parameters
    ----------
    paths : sequence of sequences of str
        One path per leaf, from the leaf (level 0) to the root (level
        ``height``).  All paths have the same length and end in the same root.

    Attributes
    ----------
    leaves : tuple of str
        The domain values, in the order given.
    height : int
        Number of generalization steps from a leaf to the root.
    ancestors : ndarray of int32, shape (d, height + 1)
        ``ancestors[i, h]`` is the node id of leaf ``i``'s ancestor at level ``h``
        (level 0 is the leaf itself).  Node ids are unique across levels.
    labels : tuple of str
        The label of every node id.
    parent : ndarray of int32
        Parent node id of every node (-1 for the root).
    level : ndarray of int32
        Level of every node (0 for leaves, ``height`` for the root).

    Examples
    --------
    >>> h = Hierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"]])
    >>> h.lca_height(0, 1), h.lca_height(0, 2)
    (1, 2)
    """

    paths: tuple
    leaves: tuple = field(init=False)
    height: int = field(init=False)
    ancestors: np.ndarray = field(init=False, repr=False)
    labels: tuple = field(init=False, repr=False)
    parent: np.ndarray = field(init=False, repr=False)
    level: np.ndarray = field(init=False, repr=False)

    def __init__(self, paths: Sequence[Sequence[str]], *, strip: bool = True):
        # labels read from a file are stripped (``a; b`` is leaf 'a' under
        # 'b'); a flat tree over a column's values keeps them as they are
        paths = tuple(tuple(str(x).strip() if strip else str(x) for x in p) for p in paths)
        if not paths:
            raise ValueError("hierarchy: no leaves given")
        width = len(paths[0])
        if width < 2:
            raise ValueError("hierarchy: every line needs at least a leaf and a root "
                             f"(got {list(paths[0])!r})")
        for k, p in enumerate(paths):
            if len(p) != width:
                raise ValueError(
                    f"hierarchy: line {k + 1} ({p[0]!r}) has {len(p)} levels, expected "
                    f"{width}; unbalanced trees are not supported: repeat the last label "
                    "to pad a short branch")
            if any(x == "" for x in p):
                raise ValueError(f"hierarchy: line {k + 1} ({p[0]!r}) has an empty label")
        roots = {p[-1] for p in paths}
        if len(roots) != 1:
            raise ValueError(f"hierarchy: expected one root, found {sorted(roots)!r}")
        leaves = [p[0] for p in paths]
        seen: set = set()
        for v in leaves:
            if v in seen:
                raise ValueError(f"hierarchy: leaf {v!r} appears twice")
            seen.add(v)
        height = width - 1
        # A node is identified by its whole path to the root, so that the same
        # label under two parents becomes two nodes.
        node_of: dict = {}
        labels: list = []
        parent: list = []
        level: list = []
        anc = np.empty((len(paths), width), dtype=np.int32)
        for i, p in enumerate(paths):
            for h in range(height, -1, -1):
                key = p[h:]
                nid = node_of.get(key)
                if nid is None:
                    nid = len(labels)
                    node_of[key] = nid
                    labels.append(p[h])
                    parent.append(-1 if h == height else node_of[p[h + 1:]])
                    level.append(h)
                anc[i, h] = nid
        object.__setattr__(self, "paths", paths)
        object.__setattr__(self, "leaves", tuple(leaves))
        object.__setattr__(self, "height", height)
        object.__setattr__(self, "ancestors", anc)
        object.__setattr__(self, "labels", tuple(labels))
        object.__setattr__(self, "parent", np.asarray(parent, dtype=np.int32))
        object.__setattr__(self, "level", np.asarray(level, dtype=np.int32))
        anc.setflags(write=False)

    # ------------------------------------------------------------------ I/O
    @classmethod
    def from_csv(cls, path_or_text: PathLike, *, delimiter: str = ";") -> "Hierarchy":
        """Read an ARX-format hierarchy: one line per leaf, ``leaf;...;root``.

        ``path_or_text`` is a file path, or the CSV text itself when it contains
        a newline.
        """
        from_file = isinstance(path_or_text, (str, Path)) and "\n" not in str(path_or_text)
        if from_file:
            from .io.tables import read_text_file               # no BOM in a value
            text = read_text_file(path_or_text, "hierarchy file (leaf;...;root per line)")
        else:
            text = str(path_or_text)
        rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r and any(r)]
        try:
            return cls(rows)
        except ValueError as e:
            if not from_file:
                raise
            from .validate import InputError       # the file the bad line is in
            what = str(e)
            what = what[len("hierarchy: "):] if what.startswith("hierarchy: ") else what
            raise InputError(what, param="hierarchies", file=path_or_text,
                             expected="an ARX hierarchy: one line per leaf, leaf;...;root, "
                                      "every line as deep") from None

    def to_csv(self, delimiter: str = ";") -> str:
        r"""The ARX-format text of this hierarchy; a label that holds the
        delimiter, a quote or a line break is quoted (CSV rules), so that
        :meth:`from_csv` reads the same tree back.

        Examples
        --------
        >>> h = Hierarchy([["a;b", "x", "*"], ["c", "x", "*"]])
        >>> h.to_csv()
        '"a;b";x;*\nc;x;*\n'
        >>> Hierarchy.from_csv(h.to_csv()).paths == h.paths
        True
        """
        buf = io.StringIO()
        csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows(self.paths)
        return buf.getvalue()

    @classmethod
    def flat(cls, leaves: Sequence[str], root: str = "*") -> "Hierarchy":
        """The one-level tree: every leaf directly under the root.  Leaves are
        kept exactly as given (a data value ``' Private'``, with its space,
        is a leaf of its own)."""
        return cls([[str(v), root] for v in leaves], strip=False)

    # ------------------------------------------------------------ queries
    @property
    def d(self) -> int:
        """Number of leaves (the domain size)."""
        return len(self.leaves)

    def reorder(self, domain: Sequence[str]) -> "Hierarchy":
        """The same tree with leaves in the order of ``domain``.

        Raises ValueError naming the values that are missing on either side.
        """
        domain = [str(v) for v in domain]
        index = {v: i for i, v in enumerate(self.leaves)}
        unknown = [v for v in domain if v not in index]
        if unknown:
            raise ValueError(f"hierarchy has no leaf for domain value(s) {unknown[:10]!r}")
        extra = sorted(set(self.leaves) - set(domain))
        if extra:
            raise ValueError(f"hierarchy has leaves that are not in the domain: {extra[:10]!r}")
        return Hierarchy([self.paths[index[v]] for v in domain], strip=False)

    def restrict(self, domain: Sequence[str]) -> "Hierarchy":
        """The subtree spanned by the leaves in ``domain``, in that order."""
        domain = [str(v) for v in domain]
        index = {v: i for i, v in enumerate(self.leaves)}
        unknown = [v for v in domain if v not in index]
        if unknown:
            raise ValueError(f"hierarchy has no leaf for domain value(s) {unknown[:10]!r}")
        return Hierarchy([self.paths[index[v]] for v in domain], strip=False)

    def lca_height(self, i: int, j: int) -> int:
        """Level of the lowest common ancestor of leaves ``i`` and ``j``."""
        a, b = self.ancestors[i], self.ancestors[j]
        for h in range(self.height + 1):
            if a[h] == b[h]:
                return h
        raise AssertionError("unreachable: leaves share the root")  # pragma: no cover

    def lca_heights(self) -> np.ndarray:
        """The d x d matrix of lowest-common-ancestor levels."""
        anc = self.ancestors
        eq = anc[:, None, :] == anc[None, :, :]          # (d, d, H+1)
        # first level at which the ancestors agree (always true at the root)
        return np.argmax(eq, axis=2).astype(np.int32)

    def ground_distance(self) -> np.ndarray:
        """Hierarchical ground distance: LCA level / tree height, in [0, 1]."""
        if self.height == 0:
            return np.zeros((self.d, self.d))
        return self.lca_heights() / float(self.height)

    def generalize(self, codes: np.ndarray, level: int) -> np.ndarray:
        """Labels of the level-``level`` ancestors of leaf codes."""
        if not 0 <= level <= self.height:
            raise ValueError(f"level must be in [0, {self.height}], got {level}")
        labels = np.asarray(self.labels, dtype=object)
        return labels[self.ancestors[np.asarray(codes), level]]

    def __eq__(self, other):
        return isinstance(other, Hierarchy) and self.paths == other.paths

    def __hash__(self):
        return hash(self.paths)

    def __repr__(self):
        return f"Hierarchy(d={self.d}, height={self.height}, root={self.paths[0][-1]!r})"


def hierarchy_of(column: "str | None", h) -> Hierarchy:
    """``h`` as the Hierarchy of ``column``: itself; an ARX file's path or
    text (:meth:`Hierarchy.from_csv`); or its rows, ``leaf, ..., root`` each,
    as a list of lists or a table (a pandas DataFrame, as
    ``pd.read_csv(path, sep=";", header=None)`` reads an ARX file).  An
    error names the column, and the file where there is one.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame([[13053, "1305*", "*"], [13068, "1306*", "*"]])
    >>> hierarchy_of("zip", rows).leaves
    ('13053', '13068')
    """
    if isinstance(h, Hierarchy):
        return h
    from .validate import InputError
    if isinstance(h, os.PathLike) and not isinstance(h, Path):
        h = Path(os.fspath(h))
    if isinstance(h, (str, Path)):
        try:
            return Hierarchy.from_csv(h)
        except InputError as e:
            raise InputError(e.what, param=e.param, column=column, file=e.file,
                             expected=e.expected) from None
    rows = _table_rows(h)
    if rows is None:
        raise InputError(f"got an object of type {type(h).__name__}", param="hierarchies",
                         column=column,
                         expected="a Hierarchy, an ARX file's path or text, or its rows "
                                  "(leaf, ..., root each) as a list of lists or a DataFrame")
    try:
        return Hierarchy(rows)
    except ValueError as e:
        what = str(e)
        raise InputError(what[len("hierarchy: "):] if what.startswith("hierarchy: ") else what,
                         param="hierarchies", column=column,
                         expected="an ARX hierarchy: one row per leaf, leaf, ..., root, "
                                  "every row as deep") from None


def _table_rows(h):
    """The rows of a table of paths (text cells; a missing cell ends its row,
    as in a ragged CSV), or None for what is not one."""
    if hasattr(h, "to_pandas") and not hasattr(h, "itertuples"):
        try:
            h = h.to_pandas()              # a pyarrow or Polars table
        except Exception:  # noqa: BLE001 - not a table after all
            return None
    if hasattr(h, "itertuples") and hasattr(h, "columns"):
        return [[str(v) for v in row if not (v is None or v != v)]
                for row in h.itertuples(index=False, name=None)]
    if isinstance(h, (list, tuple)) and all(isinstance(r, (list, tuple)) for r in h):
        return [[str(v) for v in r] for r in h]
    return None
