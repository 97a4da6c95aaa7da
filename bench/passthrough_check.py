"""Figures for docs/security.md and docs/scaling.md on the pass-through check
(anonset/passthrough.py): what it measures and what it costs.

1. leaks through columns published as they are, measured by an adversary:
   a. a row number of a file sorted by race, beside race as 3-sets of 7: the
      adversary sorts by the row number and, for each row, keeps the values
      of its set that are in the sets of its two neighbours too;
   b. the survey year and the birth year beside the exact age as 3-sets:
      the adversary names the set's value that agrees best with year - born;
   share of rows whose value the adversary names right, against the set
   alone (a guess among the set's values), and what the check says.
2. the sample: 2,000,000 rows sorted by state (5 states of about 400,000
   rows) with a state code passed through;
   lambda measured on the first 250,000 rows (what the check read before)
   and on 131,072 rows drawn at random from the whole table (what it reads).
3. the cost of the check on 2,000,000 rows (one pass-through, one exact and
   three sensitive columns, in blocks of 262,144 rows): median of 5.

Run: PYTHONPATH=src python bench/passthrough_check.py   (about a minute on 2 cores)
"""
from __future__ import annotations

import os
import platform
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import anonset  # noqa: E402
import anonset.passthrough as P  # noqa: E402


def sets_of(pub, name):
    """Each published row's set as a Python set of codes."""
    m = pub.mask(name)
    d = pub.schema[name].d
    bits = (m[:, np.arange(d) // 64] >> (np.arange(d) % 64).astype(np.uint64)) & np.uint64(1)
    return bits.astype(bool)


def row_number_attack(n=20_000, seed=1):
    rng = np.random.default_rng(seed)
    race = np.sort(rng.choice(list("abcdefg"), n, p=[.3, .2, .15, .1, .1, .1, .05]))
    df = pd.DataFrame({"rownum": np.arange(n), "race": race, "job": rng.choice(list("pqrs"), n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            anonset.publish(df, anonset.Diversity(3), sensitive=["race", "job"], other=["rownum"])
            said = "published"
        except anonset.InputError as e:
            said = "refused: " + str(e).split(": ", 2)[1][:60] + "..."
        pub = anonset.publish(df, anonset.Diversity(3), sensitive=["race", "job"],
                              other=["rownum"], allow_recode=["rownum"],
                              allow_identifier=["rownum"])
    rows = pub.other["rownum"].to_numpy()
    order = np.argsort(rows)
    s = sets_of(pub, "race")[order]
    dom = list(pub.schema["race"].domain)
    truth = np.array([dom.index(v) for v in df["race"].to_numpy()[rows[order]]])
    keep = s.copy()
    keep[1:] &= s[:-1] | ~s[:-1].any(axis=1, keepdims=True)
    keep[:-1] &= s[1:]
    keep = np.where(keep.any(axis=1, keepdims=True), keep, s)
    right = np.where(keep[np.arange(n), truth], 1.0 / keep.sum(axis=1), 0.0).mean()
    return {"leak": "row number of a file sorted by race (l = 3, d = 7)",
            "adversary": f"{right:.1%}", "set alone": f"{1 / 3:.1%}", "check": said}


def near_recode_attack(n=20_000, seed=2):
    rng = np.random.default_rng(seed)
    born = rng.integers(41, 55, n)
    year = rng.integers(68, 89, n)
    age = year - born - (rng.random(n) < 0.3)
    df = pd.DataFrame({"year": year, "born": born, "age": age, "job": rng.choice(list("pq"), n)})
    kw = dict(sensitive=["age", "job"], exact=["year", "born"], domains={"job": ["p", "q"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            anonset.publish(df, anonset.Diversity({"age": 3, "job": 2}), **kw)
            said = "published"
        except anonset.InputError as e:
            said = "refused: " + str(e).split(": ", 2)[1][:60] + "..."
        pub = anonset.publish(df, anonset.Diversity({"age": 3, "job": 2}),
                              allow_recode=["year", "born"], **kw)
    dom = np.array(pub.schema["age"].domain)
    s = sets_of(pub, "age")
    rows = pub.source_rows if pub.source_rows is not None else np.arange(n)
    guess_base = (df["year"].to_numpy() - df["born"].to_numpy())[rows]
    # the adversary: the set's value closest to year - born, below it first
    score = -np.abs(dom[None, :] - (guess_base[:, None] - 0.3))
    score = np.where(s, score, -np.inf)
    named = dom[np.argmax(score, axis=1)]
    right = (named == df["age"].to_numpy()[rows]).mean()
    return {"leak": "year and birth year beside the exact age (l = 3, d = %d)" % len(dom),
            "adversary": f"{right:.1%}", "set alone": f"{1 / 3:.1%}", "check": said}


def sample_vs_first_rows(n=2_000_000, states=5, seed=3):
    rng = np.random.default_rng(seed)
    state = np.sort(rng.integers(0, states, n))
    df = pd.DataFrame({"code": state * 7 + 3, "state": state})
    out = {}
    for how in ("first 250,000 rows", "131,072 rows drawn from the whole table"):
        vs = P.ValueSample(None)
        part = df.iloc[:250_000] if how.startswith("first") else \
            df.iloc[np.sort(np.argsort(P._mix64(np.arange(n)))[:131_072])]
        vs.add(P.hash_values(part["code"]), P.hash_values(part["state"]) & np.uint64(0xFFFF))
        lam, acc, prior = vs.determination()
        out[how] = (part["state"].nunique(), lam)
    return out


def check_cost(n=2_000_000, reps=5, seed=4):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"note": rng.integers(0, 1000, n), "region": rng.choice(list("abcdefgh"), n),
                       "a": rng.integers(0, 10, n), "b": rng.choice(list("xyzw"), n),
                       "c": rng.integers(0, 20, n)})
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        c = P.PassThroughCheck(["note"], ["a", "b", "c"], ["region"],
                               bins={"c": [0, 5, 10, 15, 20]})
        for r0 in range(0, n, 262_144):
            c.add(df.iloc[r0:r0 + 262_144], r0)
        found = c.findings()
        c.set_findings({"a": 10, "b": 4, "c": 4},
                       {k: SimpleNamespace(p=1.0, eta=2, exact=False) for k in "abc"}, found)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main():
    t0 = time.time()
    lines = [f"# anonset pass-through check, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"machine: {platform.machine()}, {os.cpu_count()} cores, load "
             f"{os.getloadavg()[0]:.1f}; anonset {anonset.__version__}", "",
             "## Leaks through columns published as they are (share of rows named right)",
             "", "| leak | adversary | set alone | the check |", "|---|---|---|---|"]
    for r in (row_number_attack(), near_recode_attack()):
        lines.append(f"| {r['leak']} | {r['adversary']} | {r['set alone']} | {r['check']} |")
    lines += ["", "## A table sorted by state, a state code passed through: lambda of the code "
              "for the state", "", "| rows read | states seen | lambda |", "|---|---|---|"]
    for how, (k, lam) in sample_vs_first_rows().items():
        lines.append(f"| {how} | {k} | {lam:.2f} |")
    lines += ["", "## Cost", "", f"The check on 2,000,000 rows (1 pass-through, 1 exact, 3 "
              f"sensitive columns): {check_cost():.2f} s (median of 5)", "",
              f"({time.time() - t0:.0f} s)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if "--no-report" not in sys.argv:
        (Path(__file__).resolve().parent / "RESULTS_passthrough.md").write_text(text)


if __name__ == "__main__":
    main()
