"""Repeated LGB releases (paper 002) of the same records with fresh keys:
how far does intersecting them narrow a victim's sensitive value?

The adversary knows each victim's QI and semi-sensitive values and that the
victim is in the table.  In each release, a published row is a candidate
when every cell is consistent with the victim (a generalized interval that
covers the value, a bucket whose values include it, or '*'); the victim's
possible occupations are the union of the candidates' occupation buckets.
Releases are intersected.  Run: ``PYTHONPATH=src python bench/lgb_repeat.py
[ROWS] [RELEASES] [below_max|paper]``; figures in docs/lgb.md ("Repeated
releases").
"""
from __future__ import annotations

import sys
import warnings

import numpy as np

from anonset import lgb as L
from anonset.datasets import load_adult

QI, SEMI, SENS = ["relationship", "race", "sex"], ["age", "education"], ["occupation"]


def possible(res, target: str = "occupation") -> tuple[np.ndarray, np.ndarray]:
    """(victims, d) bool: the target values each victim (input row) may
    hold in this release; and the victims' true codes."""
    attrs = list(res.attributes)
    s = attrs.index(target)
    n = res.n
    bsets = {}                      # attribute -> (buckets, d): values of each bucket
    for j in range(len(attrs)):
        b = res.bid[j]
        if (b >= 0).any():
            m = np.zeros((b.max() + 1, res.domains[j].d), bool)
            m[b[b >= 0], res.codes[j, b >= 0]] = True
            bsets[j] = m
    truth = np.empty_like(res.codes)
    truth[:, res.order] = res.codes
    row_values = bsets[s][res.bid[s]]
    out = np.zeros((n, res.domains[s].d), bool)
    for v in range(n):
        ok = np.ones(n, bool)
        for j in range(len(attrs)):
            if j == s:
                continue
            x = truth[j, v]
            cell = res.qi_mask[:, j] & (res.glo[j] <= x) & (x <= res.ghi[j])
            if j in bsets:
                cell |= (res.bid[j] >= 0) & bsets[j][np.maximum(res.bid[j], 0), x]
            ok &= cell | res.suppressed[j]
        out[v] = row_values[ok].any(axis=0)
    return out, truth[s]


def main(rows: int = 10_000, releases: int = 3, l: int = 4,
         mdp_split: str = "below_max") -> None:
    warnings.simplefilter("ignore")
    df = load_adult().head(rows).reset_index(drop=True)
    flags = L.draw_flags(df, SEMI, 0.3, seed=1)
    kw = dict(qi=QI, semi_sensitive=SEMI, sensitive=SENS, flags=flags, k=l, l=l,
              drop=[c for c in df.columns if c not in QI + SEMI + SENS], suppress=True,
              mdp_split=mdp_split)
    inter = None
    print(f"Adult, first {rows:,} rows, k = l = {l}, density 0.3, target occupation, "
          f"mdp_split={mdp_split}")
    for r in range(releases):
        p, truth = possible(L.lgb(df, **kw))       # a fresh OS key each time
        assert p[np.arange(truth.size), truth].all()
        inter = p if inter is None else inter & p
        size = inter.sum(axis=1)
        print(f"{r + 1} release(s): pinned {int((size == 1).sum())}, fewer than l "
              f"{int((size < l).sum())} of {size.size}; median possible {np.median(size):.0f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]),
         **({"mdp_split": sys.argv[3]} if len(sys.argv) > 3 else {}))
