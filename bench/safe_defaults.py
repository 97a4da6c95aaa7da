"""Figures for docs/security.md, "What anonset protects and what it does not":

1. row order: Adult sorted by age, published under (5,...,5)-diversity; an
   adversary who knows the file was sorted guesses each published row's age
   bin from its position (the bin that held that position in the sorted
   input).  Share of correct guesses with the input order kept vs the default
   keyed shuffle, against the best guess without position (the commonest bin).
2. repeated releases: the same Adult records published 1, 2, 3 times with
   fresh OS keys vs a persistent key; the adversary links each record across
   releases and intersects its sets.  Share of records whose value the
   intersection pins down, per attribute.

Run: PYTHONPATH=src python bench/safe_defaults.py   (about a minute on 2 cores)
"""
from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import anonset  # noqa: E402


def order_attack(l=5):
    df = anonset.datasets.load_adult().sort_values("age", kind="stable").reset_index(drop=True)
    schema = anonset.datasets.adult_schema(df)
    ls = {a.name: min(l, a.d) for a in schema.sensitive}
    truth = np.searchsorted(np.array(anonset.datasets.ADULT_AGE_BINS), df["age"], "right") - 1
    rows = {}
    for keep in (True, False):
        pub = anonset.publish(df, anonset.Diversity(ls), schema, keep_order=keep)
        src = np.arange(len(df)) if pub.source_rows is None else pub.source_rows
        # position i of the published file: the adversary guesses the bin that
        # position i held in the sorted input
        guess = truth                       # truth[i] = bin at sorted position i
        actual = truth[src]                 # the true bin of the row published at i
        rows["kept (--keep-order)" if keep else "shuffled (default)"] = float((guess == actual).mean())
    base = float(np.bincount(truth).max() / len(truth))
    return rows, base


def intersection(l=5, attrs=("native-country", "occupation", "education", "age")):
    df = anonset.datasets.load_adult().reset_index(drop=True)
    df.insert(0, "rid", [f"r{i}" for i in range(len(df))])
    base = anonset.datasets.adult_schema(df.drop(columns="rid"), attributes=list(attrs))
    schema = anonset.Schema((anonset.Attribute("rid", role="identifier"), *base))
    ls = {a.name: min(l, a.d) for a in schema.sensitive}
    model = anonset.Diversity(ls)
    key = Path(tempfile.mkdtemp()) / "k"
    anonset.io.keys.new_key_file(key)
    out = {}
    for mode in ("fresh", "persistent"):
        if mode == "fresh":
            pubs = [anonset.publish(df, model, schema) for _ in range(3)]
        else:                    # a series: the first declared, each later given the latest
            kw = {"key_file": key, "record_id": "rid"}
            pubs = [anonset.publish(df, model, schema, first_in_series=True, **kw)]
            for _ in range(2):
                pubs.append(anonset.publish(df, model, schema, params=pubs[-1], **kw))
        for a in attrs:
            masks = []
            for p in pubs:
                m = np.empty_like(p.mask(a))
                m[p.source_rows] = p.mask(a)
                masks.append(m)
            inter = masks[0]
            for k, m in enumerate(masks):
                inter = inter & m
                sizes = np.unpackbits(inter.view(np.uint8).reshape(len(inter), -1),
                                      axis=1).sum(axis=1)
                out[(mode, a, k + 1)] = float((sizes == 1).mean())
    return out


def main():
    t0 = time.time()
    print(f"# anonset safe defaults, {time.strftime('%Y-%m-%d %H:%M')} UTC")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}; anonset {anonset.__version__}")
    rows, base = order_attack()
    print("\n## Row order: Adult sorted by age, (5,...,5)-diversity, age bin guessed from the "
          "row's position\n")
    print("| order | correct guesses |\n|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {v:.1%} |")
    print(f"| no position (commonest bin) | {base:.1%} |")
    res = intersection()
    print("\n## Repeated releases: share of Adult records whose value the intersection of "
          "their sets pins down (l = 5)\n")
    print("| attribute | key | 1 release | 2 releases | 3 releases |\n|---|---|---|---|---|")
    for a in ("native-country", "occupation", "education", "age"):
        for mode in ("fresh", "persistent"):
            print(f"| {a} | {mode} | " + " | ".join(f"{res[(mode, a, k)]:.1%}" for k in (1, 2, 3))
                  + " |")
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
