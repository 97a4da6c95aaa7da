"""What a user waits for in the default reconstruction: ``anonset.reconstruct``
(paper EM, SQUAREM, the default stopping rule) on Adult under
(5,...,5)-diversity, q' = 2, 3, 4, best of ``--repeats``.

Run it against two trees to compare them (same machine, interleaved):

    for t in OLD NEW; do PYTHONPATH=$t/src python bench/em_driver.py; done
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import anonset

SUBSETS = [["age", "occupation"], ["age", "education", "sex"],
           ["age", "education", "workclass", "relationship"],
           ["marital-status", "native-country", "workclass", "sex"]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    df = anonset.datasets.load_adult()
    attrs = list(anonset.datasets.ADULT_QIDS)
    schema = anonset.datasets.adult_schema(df[attrs])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df[attrs], anonset.Diversity(5), schema, seed=2024,
                              research_seed=True, clip_l=True,
                              allow_clear=["race", "sex", "salary-class"])
    print(f"anonset {anonset.__file__.rsplit('/src/', 1)[0]}  load {os.getloadavg()[0]:.2f}")
    for S in SUBSETS:
        w = anonset.count_w(pub, S)
        best, info = float("inf"), None
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            ct = anonset.reconstruct(pub, S, "em", w=w)
            best = min(best, time.perf_counter() - t0)
            info = ct.info
        print(f"  {' x '.join(S):55s} cells {w.size:7,d}  {best * 1e3:8.1f} ms  "
              f"{info['iterations']:5d} updates  converged {info['converged']}")


if __name__ == "__main__":
    main()
