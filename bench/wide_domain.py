"""Wide domains: the exact EM's trie reading sets by their words or by their
members, and the audit's adversary in one block or in blocks of victims,
side by side in one run (same inputs, same outputs checked bit for bit).

A release of 30,000 rows with one sensitive column over 60,000 declared
codes (eta = 5) and one over 7 values, as a register of ids or fine-grained
codes would give; `python bench/wide_domain.py [--rows N] [--d D]` prints a
Markdown table with the machine and its load.
"""
from __future__ import annotations

import argparse
import importlib
import os
import platform
import resource
import time

import numpy as np
import pandas as pd

import anonset
from anonset.randomized import _kernels
from anonset.randomized import reconstruct as R

attack_module = importlib.import_module("anonset.audit.attack")


def _best(f, repeats: int = 3):
    out, best = None, float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return out, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--d", type=int, default=60_000)
    ap.add_argument("--victims", type=int, default=10_000)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    codes = np.arange(args.d)
    df = pd.DataFrame({"code": rng.choice(codes, args.rows, replace=False)
                       if args.rows <= args.d else rng.choice(codes, args.rows),
                       "race": rng.choice(list("abcdefg"), args.rows, p=[.6, .2, .1, .04, .03,
                                                                         .02, .01])})
    key = "5f0e1d2c3b4a59687766554433221100"
    pub = anonset.publish(df, anonset.Diversity(5), sensitive=["code", "race"],
                          domains={"code": codes.tolist(), "race": list("abcdefg")}, seed=key,
                          allow_clear=["code"])
    load0 = os.getloadavg()[0]
    # --- the exact EM's E-step: one trie pass, words against members
    params = [pub.params[a] for a in ("code", "race")]
    dims = [args.d, 7]
    pm, wt = R._patterns(pub, ["code", "race"])
    order, cols, wts, mems = R.trie_tuples(params, dims, pm, wt)
    ds = [dims[j] for j in order]
    us = [R.likelihood_ratio(params[j].p, params[j].eta, dims[j]) for j in order]
    pi = np.full(ds, 1.0 / np.prod(ds))
    (g0, l0), t_words = _best(lambda: _kernels.exact_trie(cols, ds, us, wts, pi, 1, 1,
                                                              check_order=False))
    (g1, l1), t_members = _best(lambda: _kernels.exact_trie(cols, ds, us, wts, pi, 1, 1, mems,
                                                                check_order=False))
    assert np.array_equal(g0, g1) and l0 == l1
    ct, t_em = _best(lambda: anonset.reconstruct(pub, ["code", "race"], "exact_em"), 1)
    # --- the adversary: one block against blocks of victims
    kw = dict(n_targets=args.victims, seed=3)

    def one_block():
        old = attack_module.ADVERSARY_BLOCK_CELLS
        attack_module.ADVERSARY_BLOCK_CELLS = 1 << 62
        try:
            return attack_module.attack(pub, df, **kw)
        finally:
            attack_module.ADVERSARY_BLOCK_CELLS = old
    r1, t_blocks = _best(lambda: attack_module.attack(pub, df, **kw), 1)
    rss_blocks = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r0, t_one = _best(one_block, 1)
    rss_one = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    pd.testing.assert_frame_equal(r0.victims, r1.victims)
    print(f"# Wide domains ({args.rows:,} rows; code d = {args.d:,}, race d = 7; l = 5)\n")
    print(f"- Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"load average (1 min) {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end; "
          f"anonset {anonset.__version__}, 1 thread for the kernel rows\n")
    print("| what | time | ratio |\n|---|---|---|")
    print(f"| exact EM E-step, sets by their words (one update) | {t_words * 1e3:.1f} ms | "
          f"{t_words / t_members:.1f}x |")
    print(f"| exact EM E-step, sets by their members (one update) | {t_members * 1e3:.1f} ms "
          f"| 1.0x |")
    print(f"| `reconstruct(..., 'exact_em')` to convergence ({ct.info['iterations']} updates) "
          f"| {t_em:.2f} s | |")
    print(f"| adversary, {args.victims:,} victims in blocks of "
          f"{max(1, attack_module.ADVERSARY_BLOCK_CELLS // args.d):,} | {t_blocks:.2f} s | "
          f"1.0x |")
    print(f"| adversary, one block | {t_one:.2f} s | {t_one / t_blocks:.1f}x |")
    print(f"\nPeak resident memory after the blocked adversary {rss_blocks / 1024:,.0f} MiB, "
          f"after the one-block one {rss_one / 1024:,.0f} MiB (the process's peak so far).")


if __name__ == "__main__":
    main()
