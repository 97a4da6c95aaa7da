"""Speed of LGB (paper 002) on Adult and on Adult resampled to 1,000,000
rows, k = l = 5, 20 % flags, the reproduction's attributes and hierarchies
(anonset.reproduce.p002): lgb() from the DataFrame, then writing Parquet,
for MDP under both Alg. 3 splits and NCP as printed and balanced.

Run: ``PYTHONPATH=src python bench/lgb_speed.py [ROWS ...]``; figures in
docs/lgb.md ("Speed").
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

from anonset import lgb as L
from anonset.reproduce.p002 import SEMI, adult_table, lgb_run

VARIANTS = (("mdp (below_max, default)", "mdp", False, "below_max"),
            ("mdp (Alg. 3 as printed)", "mdp", False, "paper"),
            ("ncp (Alg. 4 as printed)", "ncp", False, "paper"),
            ("ncp, balance=True", "ncp", True, "paper"))


def main(sizes) -> None:
    warnings.simplefilter("ignore")
    df = adult_table()
    out = Path(tempfile.mkdtemp())
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| rows | method | groups | lgb() | write |\n|---|---|---|---|---|")
    for n in sizes:
        big = df if n == len(df) else df.sample(n=n, replace=True,
                                                 random_state=7).reset_index(drop=True)
        flags = L.draw_flags(big, SEMI, 0.2, seed=1)
        for label, method, balance, split in VARIANTS:
            res, secs, _ = lgb_run(big, flags, 5, 5, method, balance=balance, mdp_split=split)
            t0 = time.perf_counter()
            written = res.write(out / "speed.parquet")
            wsecs = time.perf_counter() - t0
            for p in written:
                Path(p).unlink()
            print(f"| {n:,} | {label} | {res.n_groups:,} | {secs:.2f} s | {wsecs:.2f} s |")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [len(adult_table()), 1_000_000])
