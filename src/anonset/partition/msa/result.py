"""A published partition of paper 003 (Def. 4, eq. 1): :class:`MSAResult`
holds the classes, their generalized QIs and the facts of the run, builds
and writes the published table; :func:`information_loss` is IL_T of eq. 1;
:func:`anonymize_msa` is the one-call entry point.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .problem import MSAProblem


@dataclass(repr=False)
class MSAResult:
    """A published partition table and its facts.

    Attributes
    ----------
    classes : ndarray, the final equivalence class of every input row (the
        published ``ec``: labels drawn from the key unless keep_order)
    k_used : the number of SA clusters/groups (k after adjustment)
    counts, lo, hi : per class, its SA value counts and generalized QI codes,
        in the order of ``problem.sas`` and ``problem.qis`` (by name, not as
        listed; the published table keeps the order listed)
    n_merges : merges made by EnsureTCloseness
    timings : seconds per step (partition, generate, ensure, total)
    order : ndarray, the input row of every published row (default: grouped
        by class, classes in label order)
    metadata : the release's facts: model, key mode, row order, the columns
        passed through and those never published
    """

    problem: MSAProblem
    algorithm: str
    k: int
    t: float
    k_used: int
    classes: np.ndarray
    counts: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n_merges: int
    n_initial_classes: int
    cluster_sizes: list
    timings: dict = field(default_factory=dict)
    order: np.ndarray | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.order is None:
            self.order = np.argsort(self.classes, kind="stable")

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.classes)

    @property
    def k_achieved(self) -> int:
        return int(self.sizes.min())

    @property
    def class_emd(self) -> np.ndarray:
        return self.problem.class_emd(self.counts)

    @property
    def t_achieved(self) -> float:
        return float(self.class_emd.max())

    def size_stats(self) -> tuple:
        """(min, max, mean) class size, as Tables 6-8."""
        s = self.sizes
        return int(s.min()), int(s.max()), float(s.mean())

    def information_loss(self) -> float:
        """IL_T of eq. 1 (sum over QIs per record, mean over records)."""
        return information_loss(self)

    def generalized(self) -> pd.DataFrame:
        """The published table: ``ec`` (class id), the generalized QIs (ranges
        ``[lo, hi]`` for numeric QIs, hierarchy node labels for categorical),
        the SAs unchanged and the pass-through (``other``) columns, in the
        published row order (:attr:`order`)."""
        p = self.problem
        out = {"ec": self.classes}
        where = {q.name: a for a, q in enumerate(p.qis)}      # p.qis: by name (H111)
        for name in p.quasi_identifiers:                        # published as listed
            a = where[name]
            q = p.qis[a]
            if q.numeric:
                vals = [_fmt(v) for v in q.values]
                lab = np.array([f"[{vals[l]}, {vals[h]}]" for l, h in
                                zip(self.lo[:, a], self.hi[:, a])], dtype=object)
            else:
                lab = np.asarray(q.hierarchy.labels, dtype=object)[self.lo[:, a]]
            out[q.name] = lab[self.classes]
        for c in p.sensitive + p.other:
            out[c] = p.data[c].to_numpy()
        return pd.DataFrame(out).iloc[self.order].reset_index(drop=True)

    def __repr__(self) -> str:
        # a notebook prints this: the classes of the input rows and the
        # problem (the original table) are not for it
        return (f"MSAResult(algorithm={self.algorithm!r}, k={self.k}, t={self.t:g}, "
                f"rows={len(self.classes):,}, classes={int(self.sizes.size):,})")

    def summary(self) -> dict:
        """Sizes, t, IL, timings and the release's metadata (key mode, row
        order, pass-through columns)."""
        mn, mx, avg = self.size_stats()
        return {"algorithm": self.algorithm, "k": self.k, "t": self.t, "k_used": self.k_used,
                "n_classes": int(self.sizes.size), "min_size": mn, "max_size": mx,
                "avg_size": avg, "k_achieved": self.k_achieved, "t_achieved": self.t_achieved,
                "il": self.information_loss(), "n_merges": self.n_merges,
                **{f"time_{k}": v for k, v in self.timings.items()},
                **{k: v for k, v in self.metadata.items() if k not in ("paper", "model")}}

    def write(self, path, *, format: str | None = None, protect=(), outputs=None) -> Path:
        """Write the published table atomically: Parquet (with the release's
        metadata and its information loss IL_T) for ``.parquet``/``.pq``, CSV
        (``.csv``, ``.csv.gz``, ...) otherwise.  ``protect`` names files never
        overwritten; ``outputs``: a release of more files it belongs to (moved
        into place together)."""
        from ..output import write_tables
        meta = {**self.metadata, "utility": {"il": self.information_loss()}}
        return write_tables([(path, self.generalized())], format=format,
                            metadata=meta, protect=protect, outputs=outputs)[0]


def _fmt(v) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def information_loss(result: MSAResult) -> float:
    """IL_T of eq. 1 with Sec. 2.2's generalized loss: per record the sum over
    QIs of (U_NA - L_NA) / (U - L) (numeric) or (LN_n - 1) / (LN - 1)
    (categorical), averaged over records."""
    p = result.problem
    per_class = np.zeros(result.lo.shape[0])
    for a, q in enumerate(p.qis):
        if q.numeric:
            span = q.values[-1] - q.values[0]
            if span > 0:
                per_class += (q.values[result.hi[:, a]] - q.values[result.lo[:, a]]) / span
        else:
            LN = q.hierarchy.d
            if LN > 1:
                per_class += (q.leaf_count[result.lo[:, a]] - 1) / (LN - 1)
    return float(per_class[result.classes].mean())


def anonymize_msa(data, quasi_identifiers, sensitive, k: int, t: float, *,
                  algorithm: str = "pca", hierarchies=None, numeric=None, ground=None,
                  identifiers: Sequence[str] = (), other: Sequence[str] = (),
                  drop: Sequence[str] = (), seed=None, research_seed: bool = False,
                  key_file=None, keep_order: bool = False, n_threads: int | None = None,
                  fcm_options: Mapping | None = None, missing: str | None = None,
                  missing_token: str = "?", domains: Mapping | None = None,
                  allow_recode: Sequence[str] = (),
                  allow_shared_id: Sequence[str] = (),
                  allow_homogeneous: Sequence[str] = (),
                  allow_identifier: Sequence[str] = (),
                  allow_clear: Sequence[str] = ()) -> MSAResult:
    """Publish ``data`` under k-anonymity and t-closeness for every sensitive
    attribute (paper 003, Def. 4).

    Parameters
    ----------
    data : DataFrame or pyarrow Table
        Every column needs a role; a column nobody named is refused.
    quasi_identifiers, sensitive : column names
    k : int
        Smallest class size.
    t : float in [0, 1]
        Largest EMD between a class's and the table's distribution of any SA.
    algorithm : {'cluster', 'pca', 'microagg'}
        Algorithm 1, Algorithm 2, or the t-closeness-first microaggregation.
    identifiers, other, drop, hierarchies, numeric, ground, n_threads, missing, missing_token,
    domains, allow_recode, allow_identifier, allow_shared_id
        See :class:`MSAProblem`.
    seed : bytes, str or int, optional
        Key material of at least 128 bits; the release (FCM's start, the
        seeds of Pseudocode 1, ties, class labels, row order) is a pure
        function of the data and the key.  Default: a fresh key from the OS.
    research_seed : bool
        Accept a seed shorter than 128 bits (the metadata records
        ``key: 'research-seed'``).
    key_file : path, optional
        A file holding the key material (instead of ``seed``; refused with
        one), so that the secret never sits in code or on a command line:
        the release is the one ``anonset msa-anonymize --key-file`` makes
        (the file's bytes, a trailing newline left out, as the command
        reads them; its text passed as ``seed`` is another key).
    keep_order : bool
        Publish the rows in input order with the classes as numbered by the
        algorithm (the metadata records ``row_order: 'input'``).  A risk:
        when the input is sorted by some attribute, the order of the rows of
        a class links their exact sensitive values to that attribute.
        Default: rows grouped by class, class labels and the order within a
        class drawn at random from the key.
    allow_homogeneous : SA names
        SAs for which a class may hold one value alone, as the paper's
        Pseudocode 2 allows whenever that value is common enough to be
        within t: every row of such a class has its value told.  By default
        such a class violates too and is merged with its nearest class
        (:mod:`anonset.partition.homogeneous`); the metadata
        (``homogeneous``, ``homogeneous_allowed``) and the audit name the
        classes an allowed SA kept.
    allow_clear : QI names
        At k = 1 with every SA in ``allow_homogeneous`` a class may hold
        one row, whose QI cells it shows exactly: refused unless every QI
        is named here; the metadata (``clear``) and the audit then name
        them.

    Returns
    -------
    MSAResult
        ``.generalized()`` is the published table, ``.write(path)`` writes it.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"zip": [1, 2, 3, 4, 5, 6], "s": list("aabbcc")})
    >>> r = anonymize_msa(df, ["zip"], ["s"], k=3, t=0.2)
    >>> r.size_stats()[0] >= 3, r.summary()["row_order"]
    (True, 'random')
    """
    # read as the command reads --key-file, before any work (H150: no
    # key_file= here, and a key file's text as seed= is another key)
    from ...io.keys import seed_or_key_file
    seed = seed_or_key_file(seed, key_file)
    prob = MSAProblem(data, quasi_identifiers, sensitive, identifiers=identifiers, other=other,
                      drop=drop, hierarchies=hierarchies, numeric=numeric, ground=ground,
                      n_threads=n_threads, missing=missing, missing_token=missing_token,
                      domains=domains,
                      allow_recode=allow_recode, allow_shared_id=allow_shared_id,
                      allow_identifier=allow_identifier)
    return prob.run(algorithm, k, t, seed=seed, research_seed=research_seed,
                    keep_order=keep_order, fcm_options=fcm_options,
                    allow_homogeneous=allow_homogeneous, allow_clear=allow_clear)
