"""Growth exponents of the five publishing/analysis operations (issue 16,
target 7): time each at sizes growing geometrically and fit the slope of
log t against log n by least squares (1 = linear; n log n over a x27 range
reads about 1.1).

Operations and their data:

* ``publish``     anonset.publish of a census-shaped table (anonset.synthetic), Diversity(l=3), every attribute sensitive (the first 10
                  attributes with >= 4 values).
* ``reconstruct`` count_w + the paper's EM on q' = 2 attributes of that
                  published table (anonset.reconstruct, method 'em').
* ``semantic``    paper 001 publishing (semantic_publish, 14 ordered values,
                  l = 3, d = 2, Algorithm 1).
* ``lgb``         paper 002 (anonset.lgb, MDP) on Adult rows drawn with
                  replacement, bench_papers.py's configuration.
* ``msa_scan``    the same with Pseudocode 1's nearest searches by scanning
                  the cluster (the reference; the algorithm before the k-d
                  tree; not in the default --ops).
* ``msa``         paper 003 (anonymize_msa, Algorithm 2 = 'pca', k = 10,
                  t = 0.3) on a table whose QIs are two near-continuous
                  integers (distinct QI tuples grow with n, about 0.9 n) and a
                  categorical one; SAs: an ordered 10-value one and a 6-value
                  one (equal ground).

Run::

    PYTHONPATH=src nice -n 10 python bench/growth.py            # full (about 12 minutes)
    PYTHONPATH=src python bench/growth.py --quick               # seconds, tiny sizes
    PYTHONPATH=src python bench/growth.py --ops msa --sizes msa=10000,30000

writes bench/RESULTS_growth.md (``--out``) with the machine, the load
(``uptime`` before and after) and the command.  Every size runs once (the
time includes no data generation); each result is checked (publish: eta
members per set; msa: k and t from anonset.checks; lgb: lgb.verify).
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd

import anonset
from anonset.models import Diversity
from anonset.reproduce.page import machine_line

KEY = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
N_ATTRS = 10
FULL = {"publish": [370_370, 1_111_111, 3_333_333, 10_000_000],
        "reconstruct": [370_370, 1_111_111, 3_333_333, 10_000_000],
        "semantic": [370_370, 1_111_111, 3_333_333, 10_000_000],
        "lgb": [123_457, 370_370, 1_111_111, 3_333_333],
        "msa": [370_370, 1_111_111, 3_333_333, 10_000_000],
        "msa_scan": [37_037, 111_111, 333_333, 1_000_000]}
QUICK = {op: [1_000, 3_000, 9_000, 27_000] for op in FULL}


# ---------------------------------------------------------------- the operations
def census(n, seed=0):
    """The first N_ATTRS attributes with at least 4 values of the census-shaped
    table (anonset.synthetic)."""
    df = anonset.synthetic.census_like(n, 3 * N_ATTRS, seed=seed, categorical=True)
    return df[[c for c in df.columns if df.attrs["d"][c] >= 4][:N_ATTRS]]


def run_publish(n):
    df = census(n)
    t0 = time.perf_counter()
    tab = anonset.publish(df, Diversity(l=3), sensitive=list(df.columns), seed=KEY,
                          allow_clear=list(df.columns))
    dt = time.perf_counter() - t0
    assert tab.n_rows == n
    return dt, tab


def run_reconstruct(n):
    _, tab = run_publish(n)
    attrs = list(tab.params)[:2]
    t0 = time.perf_counter()
    ct = anonset.reconstruct(tab, attrs, "em")
    dt = time.perf_counter() - t0
    assert abs(float(np.asarray(ct.counts).sum()) - n) < 1e-6 * n
    return dt, ct


def run_semantic(n):
    from anonset.semantic import semantic_publish
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"income": rng.integers(0, 14, n)})
    t0 = time.perf_counter()
    tab = semantic_publish(df, "income", 3, 2, domain=list(range(14)), seed=KEY)
    return time.perf_counter() - t0, tab


def run_lgb(n):
    from anonset import lgb as L
    from anonset.datasets import adult_hierarchy, load_adult
    adult = load_adult()
    rng = np.random.default_rng(2)
    df = adult.iloc[rng.integers(0, len(adult), n)].reset_index(drop=True)
    qi = ["relationship", "marital-status", "race", "education", "hours-per-week"]
    semi = ["sex", "age", "occupation"]
    df = df[qi + semi + ["fnlwgt"]]
    flags = L.draw_flags(df, semi, 0.2, seed=1)
    hier = {a: adult_hierarchy(a) for a in ("marital-status", "race", "education", "occupation")}
    t0 = time.perf_counter()
    res = L.lgb(df, qi=qi, semi_sensitive=semi, sensitive=["fnlwgt"], flags=flags, k=5, l=5,
                closeness={"sex": 0.2}, method="mdp", hierarchies=hier, seed=KEY)
    dt = time.perf_counter() - t0
    assert L.verify(res)["ok"]
    return dt, res


def msa_table(n, seed=3):
    """Two near-continuous integer QIs (n * 0.9 distinct pairs), a categorical
    QI with 4 values, an ordered 10-value SA correlated with x and a 6-value
    categorical SA."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4 * n, n)
    y = rng.integers(0, 4 * n, n)
    return pd.DataFrame({"x": x, "y": y, "c": rng.choice(list("abcd"), n),
                         "s1": np.minimum(9, (x * 10) // (4 * n) + rng.integers(-1, 2, n)),
                         "s2": rng.choice(list("uvwxyz"), n)})


def run_msa(n, algorithm="pca", k=10, t=0.3, reference_scan=False):
    from anonset.checks import check_partition
    from anonset.msa import MSAProblem, anonymize_msa
    df = msa_table(n)
    generate = MSAProblem.generate
    if reference_scan:      # Pseudocode 1's nearest searches by scanning (before the k-d tree)
        MSAProblem.generate = lambda self, *a, **kw: generate(self, *a, reference_scan=True, **kw)
    try:
        t0 = time.perf_counter()
        # s1 follows x by design (an ordered SA correlated with a QI, the
        # figures' table): its recode risk named, as a user would
        res = anonymize_msa(df, ["x", "y", "c"], ["s1", "s2"], k, t, algorithm=algorithm,
                            seed=KEY, allow_recode=["s1"])
        dt = time.perf_counter() - t0
    finally:
        MSAProblem.generate = generate
    print(f"  msa steps (s): {', '.join(f'{k} {v:.2f}' for k, v in res.timings.items())}; "
          f"classes {res.n_initial_classes:,}, merges {res.n_merges:,}", flush=True)
    assert res.k_achieved >= k and res.t_achieved <= t
    if n <= 200_000:                      # the independent checker (pandas; slow beyond)
        g = res.generalized()
        rep = check_partition(g, g["ec"].to_numpy(), ["s1", "s2"],
                              ground={"s1": "ordered", "s2": "equal"})
        assert rep.k >= k and rep.t <= t + 1e-12
    return dt, res


def run_msa_scan(n):
    return run_msa(n, reference_scan=True)


OPS = {"publish": run_publish, "reconstruct": run_reconstruct, "semantic": run_semantic,
       "lgb": run_lgb, "msa": run_msa, "msa_scan": run_msa_scan}
DEFAULT_OPS = "publish,reconstruct,semantic,lgb,msa"


# ---------------------------------------------------------------- fitting and output
def slope(ns, ts) -> float:
    """Least-squares slope of log t on log n."""
    x, y = np.log(np.asarray(ns, float)), np.log(np.asarray(ts, float))
    return float(np.polyfit(x, y, 1)[0])


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def markdown(rows, *, command, load0, load1, note="", title=True) -> str:
    out = (["# Growth exponents (issue 16, target 7)", ""] if title else ["", "## Another run", ""])
    out += [f"Written by `bench/growth.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
           "", f"- Machine: {machine_line()}", f"- Load before: `{load0}`",
           f"- Load after: `{load1}`", f"- Command: `{command}`", "",
           "Exponent: least-squares slope of log(time) on log(rows) over the four sizes "
           "(1.0 = linear; n log n over a x27 range reads about 1.1; 2.0 = quadratic).", "",
           "| operation | rows | seconds | exponent |", "|---|---|---|---|"]
    for op, ns, ts, why in rows:
        e = slope(ns, ts) if len(ns) >= 2 else float("nan")
        out.append(f"| {op} | {' / '.join(f'{n:,}' for n in ns)} | "
                   f"{' / '.join(f'{t:.3g}' for t in ts)} | **{e:.2f}** |")
    for op, ns, ts, why in rows:
        if why:
            out.append(f"\n{op}: {why}.")
    if note:
        out += ["", note]
    return "\n".join(out) + "\n"


def parse_sizes(specs):
    got = {}
    for s in specs or ():
        op, _, v = s.partition("=")
        got[op] = [int(x) for x in v.split(",")]
    return got


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--ops", default=DEFAULT_OPS,
                    help=f"comma-separated, of {', '.join(OPS)} (default: {DEFAULT_OPS})")
    ap.add_argument("--limit", type=float, default=400.0,
                    help="skip a size whose predicted time exceeds this many seconds")
    ap.add_argument("--sizes", nargs="*", help="op=n1,n2,... overrides")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                   "RESULTS_growth.md"))
    ap.add_argument("--note", default="", help="a paragraph appended to the page")
    ap.add_argument("--append", action="store_true",
                    help="add this run's table to --out instead of replacing it")
    a = ap.parse_args(argv)
    sizes = {**(QUICK if a.quick else FULL), **parse_sizes(a.sizes)}
    load0 = uptime()
    rows = []
    for op in a.ops.split(","):
        ns, ts, why = [], [], ""
        for n in sizes[op]:
            if ts:
                e = slope(ns, ts) if len(ts) >= 2 else 2.0
                guess = ts[-1] * (n / ns[-1]) ** max(e, 1.0)
                if guess > a.limit:
                    why = f"{n:,} rows skipped: predicted {guess:.0f} s > --limit {a.limit:.0f} s"
                    print(why, flush=True)
                    break
            dt, _ = OPS[op](n)
            ns.append(n)
            ts.append(dt)
            print(f"{op:12s} n={n:>11,} {dt:9.3f} s", flush=True)
        rows.append((op, ns, ts, why))
        print(f"{op:12s} exponent {slope(ns, ts):.2f}", flush=True)
    text = markdown(rows, command="python " + " ".join(["bench/growth.py"] + sys.argv[1:]),
                    load0=load0, load1=uptime(), note=a.note, title=not a.append)
    if a.out != "-":
        with open(a.out, "a" if a.append else "w") as f:
            f.write(text)
    print(text)
    return rows


if __name__ == "__main__":
    main()
