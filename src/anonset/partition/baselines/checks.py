"""Checks of the guarantees the partition baselines claim, recomputed from
what they publish (Anatomy: Xiao & Tao 2006, Theorem 1 / Sec. 5; Mondrian
and TP: frequency l-diverse QI-groups, the l-diversity of paper 004, Sec.
5.4 and of Xiao, Yi & Tao 2010).

:func:`check_release` reads the published table (and Anatomy's ST) and the
evaluation arrays of a :class:`~anonset.partition.baselines.PartitionRelease`
and reports every violation it finds; ``ok`` is True when there is none.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_release", "frequency_l"]


def frequency_l(counts) -> float:
    """The frequency l of a set of rows: rows / (rows of its most frequent
    sensitive value); a set is frequency l-diverse when this is >= l."""
    counts = np.asarray(counts)
    top = counts.max(axis=-1)
    return np.where(top > 0, counts.sum(axis=-1) / np.maximum(top, 1), 0.0)


def _published_groups(rel) -> tuple:
    """Per published GID: rows, rows of its most frequent sensitive value,
    and the (GID, value) -> count pairs, as the published tables show them."""
    if rel.st is not None:                       # Anatomy: the ST
        pairs = rel.st.groupby(["GID", rel.sensitive])["count"].sum()
        rows = rel.table.groupby("GID").size()
    else:
        pairs = rel.table.groupby(["GID", rel.sensitive]).size()
        rows = rel.table.groupby("GID").size()
    by_gid = pairs.groupby(level=0)
    return by_gid.sum(), by_gid.max(), rows, pairs


def check_release(rel) -> dict:
    """Recompute a baseline's guarantee from its release.

    Returns a dict: ``ok``, ``groups``, ``min_group``, ``min_frequency_l``
    (over the published groups) and ``problems`` (a list of strings).
    """
    problems = []
    sizes, top, rows, pairs = _published_groups(rel)
    fl = (sizes / top).to_numpy(dtype=float)
    if len(fl) and fl.min() < rel.l:
        bad = sizes.index[np.argmin(fl)]
        problems.append(f"group {bad} is only frequency {fl.min():.3g}-diverse (< l = {rel.l})")
    if not np.array_equal(rows.reindex(sizes.index).to_numpy(), sizes.to_numpy()):
        problems.append("a group's published rows differ from its published sensitive values")
    if rel.st is None:
        # generalization: every row of a group shows the same QID labels
        t = rel.table
        for q in rel.qids:
            if (t.groupby("GID")[q].nunique() > 1).any():
                problems.append(f"a group shows several labels of {q!r}")
    # the evaluation arrays agree with what is published
    if rel.n_groups != len(sizes):
        problems.append(f"{rel.n_groups} groups in the evaluation arrays, {len(sizes)} published")
    d = len(rel.domains[rel.sensitive])
    _, counts = np.unique(rel.group * d + rel.scodes, return_counts=True)
    if not np.array_equal(np.sort(counts), np.sort(pairs.to_numpy())):
        problems.append("the per-group sensitive counts differ from the rows' values")
    for a, q in enumerate(rel.qids):
        c = rel.qcodes[a]
        if ((c < rel.glo[rel.group, a]) | (c > rel.ghi[rel.group, a])).any():
            problems.append(f"a row lies outside its group's published range of {q!r}")
    if len(rel.table) != rel.scodes.size:
        problems.append("the published table has a different number of rows than the input")
    return {"ok": not problems, "groups": int(len(sizes)),
            "min_group": int(sizes.min()) if len(sizes) else 0,
            "min_frequency_l": float(fl.min()) if len(fl) else 0.0, "problems": problems}
