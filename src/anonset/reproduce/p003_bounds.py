"""Paper 003: two measurements behind the comparison with Tables 6-8.

* :func:`size_bounds` -- the smallest class that *can* be t-close.  A class
  of n records has integer counts, so its distance to the table's
  distribution cannot go below a floor that depends on n.  With the ground
  distance as a weighted tree (``anonset.emd.Ground``: EMD = sum over nodes
  of weight x |class share - table share| of the subtree), the floor is an
  exact minimum over all count vectors, by dynamic programming over the tree
  (counts capped by the records available).  A class must meet t for every
  SA (Def. 4), so the largest per-SA minimum n is a lower bound on the size
  of every class at that t (the joint constraint can only raise it).  Each
  minimizing count vector is re-evaluated with ``anonset.emd.emd``.
* :func:`investigate` -- Algorithm 1 at k = 15 / 20: the paper explains its
  advantage there by pure clusters (as many SA values as clusters); we
  measure the purity of our equi-sized FCM clusters, how many classes of
  Pseudocode 1 already meet t, and rerun Pseudocodes 1-2 on clusters cut
  from the joint SA order (records sorted by occupation, in tree order, then
  education-num, cut into k equal parts: as homogeneous in the SAs as equal
  sizes allow along that order).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["min_emd", "size_bounds", "investigate"]

N_MAX = 80


def min_emd(ground, q, n: int, avail=None) -> tuple:
    """Smallest EMD between a class of ``n`` records (integer counts, at most
    ``avail[v]`` of value v) and the distribution ``q``, and the counts that
    reach it."""
    parent = np.asarray(ground.parent)
    weight = np.asarray(ground.weight, dtype=float)
    d, nn = ground.d, parent.size
    c = np.arange(n + 1)
    sub_q = np.zeros(nn)
    sub_q[:d] = q
    children = [[] for _ in range(nn)]
    for v in range(nn):                  # a parent's index is larger than its children's
        if parent[v] >= 0:
            children[parent[v]].append(v)
            sub_q[parent[v]] += sub_q[v]
    cost, split = {}, {}
    for v in range(nn):
        # the node's own records (a domain value may also have children, as in
        # the chain of an ordered ground), then each child's share
        own = (n if avail is None else avail[v]) if v < d else 0
        cur, steps = np.where(c <= own, 0.0, np.inf), []
        for ch in children[v]:
            # min-plus convolution: best split of tot records between cur and child
            best = np.empty(n + 1)
            arg = np.empty(n + 1, dtype=np.int64)
            for tot in range(n + 1):
                tab = cur[tot::-1] + cost[ch][:tot + 1]      # child gets j = 0..tot
                j = int(np.argmin(tab))
                best[tot], arg[tot] = tab[j], j
            steps.append((ch, arg))
            cur = best
        split[v] = steps
        cost[v] = cur + weight[v] * np.abs(c / n - sub_q[v])
    root = int(np.flatnonzero(parent < 0)[0])
    counts = np.zeros(d, dtype=np.int64)
    todo = [(root, n)]
    while todo:                           # walk the splits back down
        v, m = todo.pop()
        for ch, arg in reversed(split[v]):
            give = int(arg[m])
            todo.append((ch, give))
            m -= give
        if v < d:
            counts[v] = m
    return float(cost[root][n]), counts


def _problem(df, hier):
    from ..partition.msa import MSAProblem
    from .p003 import QI, SA, rest_of
    return MSAProblem(df, QI, SA, hierarchies=hier, drop=rest_of(df))


def size_bounds(df, hier, ts) -> pd.DataFrame:
    """Per SA and n: the minimum EMD of an n-record class; per t the smallest
    feasible n (columns ``n_min[t]``, repeated on every row of the SA)."""
    from ..emd import emd
    prob = _problem(df, hier)
    rows = []
    for s in prob.sas:
        avail = np.bincount(s.codes, minlength=s.ground.d)
        q = avail / avail.sum()
        for n in range(1, N_MAX + 1):
            val, counts = min_emd(s.ground, q, n, avail)
            check = emd(counts.astype(float), q, s.ground)
            rows.append({"SA": s.name, "n": n, "min_emd": val, "emd_of_argmin": check})
    tab = pd.DataFrame(rows)
    for t in ts:
        for sa in tab.SA.unique():
            sub = tab[(tab.SA == sa) & (tab.min_emd <= t + 1e-12)]
            tab.loc[tab.SA == sa, f"n_min[t={t:g}]"] = int(sub.n.min()) if len(sub) else np.nan
    return tab


def _run_groups(prob, groups, k, t, seed):
    """Pseudocodes 1-2 on given clusters: (final sizes, IL, share of the
    initial classes already t-close, merges)."""
    from ..partition.msa.result import MSAResult
    classes, n_ec = prob.generate(groups, 0, seed=seed)
    counts, lo, hi = prob.class_state(classes, n_ec)
    ok0 = float(np.mean(prob.class_emd(counts) <= t))
    into, merges = prob.ensure(counts, lo, hi, t)
    final, relabel = np.unique(into, return_inverse=True)
    classes = relabel[classes].astype(np.int64)
    res = MSAResult(prob, "cluster", int(k), float(t), int(k), classes, counts[final],
                    lo[final], hi[final], int(merges), n_ec, [len(g) for g in groups])
    mn, mx, avg = res.size_stats()
    return mn, mx, avg, res.information_loss(), ok0, int(merges)


def _purity(prob, groups) -> float:
    """Share of records whose (SA values) pair is their cluster's most common."""
    key = np.zeros(prob.n, dtype=np.int64)
    for s in prob.sas:
        key = key * s.ground.d + s.codes
    hit = 0
    for g in groups:
        _, cnt = np.unique(key[g], return_counts=True)
        hit += cnt.max()
    return hit / prob.n


def investigate(df, hier, ks, ts) -> pd.DataFrame:
    from ..partition.msa.clustering import split_sizes
    prob = _problem(df, hier)
    rows = []
    for k in ks:
        fcm, _, _ = prob.clusters("cluster", k, seed=1)
        order = prob._joint_sa_order()
        ideal = np.split(order, np.cumsum(split_sizes(prob.n, k, "first"))[:-1])
        for name, groups in (("equi-sized FCM (ours)", fcm), ("SA-order clusters", ideal)):
            pur = _purity(prob, groups)
            for t in ts:
                mn, mx, avg, il, ok0, merges = _run_groups(prob, groups, k, t, seed=2)
                rows.append({"k": k, "t": t, "clusters": name, "purity": pur,
                             "initial_t_close": ok0, "merges": merges, "min": mn, "max": mx,
                             "avg": avg, "IL": il})
    return pd.DataFrame(rows)
