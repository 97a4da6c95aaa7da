"""The in-memory audit of a published table already in memory: best of 3.

1,000,000 rows of Adult resampled, 5 attributes as sets at l = 4 and 2
exact QIs.  Run on two commits side by side to compare them:

    PYTHONPATH=src python bench/audit_in_memory.py after
    git worktree add /tmp/wt 35b351a      # and copy the built .so files there
    PYTHONPATH=/tmp/wt/src python bench/audit_in_memory.py before
"""
import sys
import time
import warnings

import numpy as np

import anonset
from anonset.datasets import load_adult


def main(label: str) -> None:
    warnings.simplefilter("ignore")
    adult = load_adult()
    rows = np.random.default_rng(1).integers(0, len(adult), 1_000_000)
    df = adult.iloc[rows].reset_index(drop=True)
    sets = ["age", "workclass", "education", "marital-status", "occupation"]
    df = df[sets + ["sex", "race"]]
    pub = anonset.publish(df, anonset.Diversity(4), sensitive=sets, exact=["sex", "race"],
                          bins={"age": [0, 20, 30, 40, 50, 60, 70, 120]},
                          seed="4f1e2d3c4b5a69788796a5b4c3d2e1f0", allow_clear=sets)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        rep = anonset.audit(pub)
        times.append(time.perf_counter() - t)
    print(f"{label}: audit in memory, {pub.n_rows:,} rows: best {min(times):.2f} s of "
          f"{[round(x, 2) for x in times]} ({rep.verdict})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "this tree")
