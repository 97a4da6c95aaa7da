"""Performance, second round (issue 16, targets 1-5): anonset against the
strongest NumPy baselines and the memory floor, side by side in one run.

Writes bench/RESULTS.md (the per-target summary) from one run:

1. publishing the census-shaped table (2,458,285 x 68, p = 1, eta_j =
   min(5, d_j - 1), ChaCha20): anonset on 1 and 2 threads into fresh outputs
   and into reused ones, against the NumPy subset-table publisher, vectorized
   Floyd and argpartition (on 10 % of the rows), and the memory floor (a
   NumPy fill of an array of the output's size, fresh and already touched);
2. no cliff: ns per cell publishing one column at (d, eta) = (16, 5),
   (64, 32) and others, and the target's ratio from 7 interleaved pairs;
3. count_w at q' = 4 on that table (16,800 and 78,336 cells): the direct
   count (the kernel of round one), factorized counting, NumPy plain and
   factorized; the target's ratio from 7 interleaved pairs (a slow spell of
   the shared machine then slows both members of a pair);
4. the paper's EM: us per iteration by size, SIMD level and threads, quiet
   and with a competing busy process;
5. the exact EM on Adult at l = 10, q' = 4: time to converge (default rule)
   against the paper's EM on the same subsets, and the E-step kernels;
6. the q = 1 job: Subset Selection + IBU (written from the papers;
   multi-freq-ldpy does not install here) against anonset publish + EM.

    PYTHONPATH=src python bench/compare_perf.py            # ~5 min
    PYTHONPATH=src python bench/compare_perf.py --quick    # 300,000 rows
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy_baseline as nb  # noqa: E402
from compare_core import Timer, _git_state, background_busy  # noqa: E402

import anonset  # noqa: E402
from anonset._info import build_info  # noqa: E402
from anonset.randomized import _kernels  # noqa: E402
from anonset.randomized.params import AttributeParams  # noqa: E402
from anonset.randomized.reconstruct import _patterns, likelihood_ratio  # noqa: E402
from anonset.synthetic import CENSUS_ROWS, census_like_codes  # noqa: E402

KEY = bytes(range(32))


def _pub_args(codes, d, names, coin=1 << 32):
    q = len(names)
    return (KEY, "chacha20", [codes[k] for k in names], [d[k] for k in names],
            [min(5, d[k] - 1) for k in names], [coin] * q, [0] * q, list(range(q)))


def bench_publish(T, codes, d, n, log, res):
    log("publishing the census-shaped table")
    names = list(d)
    params = {k: AttributeParams(k, 1.0, min(5, d[k] - 1), d[k]) for k in names}
    cells = n * len(names)
    out_bytes = cells * 8
    args = _pub_args(codes, d, names)
    T("numpy subset table", lambda: nb.publish_subset_table(codes, params, seed=1), 1)
    T("numpy floyd", lambda: nb.publish_floyd(codes, params, seed=1), 1)
    tenth = {k: v[: n // 10] for k, v in codes.items()}
    T("numpy argpartition (10 % of rows)", lambda: nb.publish(tenth, params, seed=1), 1)
    for nt in (1, 2):
        T(f"anonset {nt}t fresh", lambda: _kernels.sample_sets(*args, n_threads=nt), 3)
    outs = [np.ones((n, 1), np.uint64) for _ in names]
    for nt in (1, 2):
        T(f"anonset {nt}t reused", lambda: _kernels.sample_sets(*args, n_threads=nt, out=outs), 3)
    T("floor: fresh fill", lambda: np.empty(out_bytes // 8, np.uint64).fill(1), 3)
    warm = np.zeros(out_bytes // 8, np.uint64)
    T("floor: warm fill", lambda: warm.fill(1), 3)
    del warm, outs
    res["publish"] = {"cells": cells, "out_bytes": out_bytes}


CLIFF = [(16, 5), (18, 5), (64, 5), (64, 32), (40, 20), (100, 10), (200, 20)]


def bench_cliff(T, n, log, res):
    log("no cliff: one column")
    rng = np.random.default_rng(0)
    rows = []
    for dd, ee in CLIFF:
        c = rng.integers(0, dd, n).astype(np.int32)
        for coin, p in ((1 << 32, 1.0), (1 << 31, 0.5)):
            out = [np.ones((n, (dd + 63) // 64), np.uint64)]
            a = (KEY, "chacha20", [c], [dd], [ee], [coin], [0], [0])
            tf = T(f"cliff d={dd} eta={ee} p={p} fresh",
                   lambda: _kernels.sample_sets(*a, n_threads=1), 7, timed=True)
            tr = T(f"cliff d={dd} eta={ee} p={p} reused",
                   lambda: _kernels.sample_sets(*a, n_threads=1, out=out), 7, timed=True)
            rows.append((dd, ee, p, tf / n * 1e9, tr / n * 1e9))
    res["cliff"] = rows
    # the target's ratio, from interleaved pairs (d = 16 then d = 64, reused
    # output, best of 3 each): a slow spell of the shared machine hits both
    # members of a pair, so the median over pairs is steadier than a ratio of
    # two bests taken minutes apart
    pair = {}
    for dd, ee in ((16, 5), (64, 32)):
        c = rng.integers(0, dd, n).astype(np.int32)
        pair[dd] = ((KEY, "chacha20", [c], [dd], [ee], [1 << 32], [0], [0]),
                    [np.ones((n, 1), np.uint64)])
    res["cliff_pairs"] = _pairs(
        T, "cliff pair", lambda: _kernels.sample_sets(*pair[16][0], n_threads=1, out=pair[16][1]),
        lambda: _kernels.sample_sets(*pair[64][0], n_threads=1, out=pair[64][1]), 7, 3)


def _pairs(T, label, fa, fb, pairs, repeat):
    """Wall times of fa and fb measured in alternation: a list of (a, b)."""
    out = []
    for i in range(pairs):
        ta = T(f"{label} {i} a", fa, repeat, timed=True)
        tb = T(f"{label} {i} b", fb, repeat, timed=True)
        out.append((ta, tb))
    return out


def _pair_ratios(pairs):
    """Median and range of b / a over interleaved pairs."""
    r = sorted(b / a for a, b in pairs)
    return r[len(r) // 2], r[0], r[-1]


def bench_count(T, codes, d, log, res):
    log("count_w, q' = 4")
    res["count"] = []
    for label, attrs in (("16,800 cells", ["a55", "a40", "a37", "a05"]),
                         ("78,336 cells", sorted(d, key=lambda k: (-d[k], k))[:4])):
        dims = [d[k] for k in attrs]
        etas = [min(5, x - 1) for x in dims]
        masks = _kernels.sample_sets(KEY, "chacha20", [codes[k] for k in attrs], dims, etas,
                                     [1 << 32] * 4, [0] * 4, [0, 1, 2, 3], n_threads=2)
        ms = math.prod(etas)
        w0 = T(f"count {label} numpy", lambda: nb.count_w(masks, dims, etas), 1)
        w1 = T(f"count {label} numpy factorized",
               lambda: nb.count_w_factorized(masks, dims, etas), 1)
        ws = [w0, w1]
        for meth in ("direct", "factorized"):
            for nt in (1, 2):
                ws.append(T(f"count {label} {meth} {nt}t",
                            lambda: _kernels.count_w(masks, dims, ms, nt, method=meth), 3))
        assert all(np.array_equal(x, w0) for x in ws), "count_w methods disagree"
        res["count"].append((label, attrs, dims))
        if label.startswith("16,800"):
            res["count_pairs"] = _pairs(
                T, "count pair", lambda: _kernels.count_w(masks, dims, ms, 1, method="factorized"),
                lambda: _kernels.count_w(masks, dims, ms, 1, method="direct"), 7, 3)


EM_SIZES = [[9, 8], [2, 8, 9, 16], [5, 14, 15, 16], [16, 16, 17, 18], [8, 9, 14, 16, 41]]


def _busy():
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def bench_em(T, log, res):
    log("paper EM")
    rng = np.random.default_rng(0)
    rows = []
    for contended in (False, True):
        proc = _busy() if contended else None
        try:
            time.sleep(0.5 if contended else 0)
            for dims in EM_SIZES:
                n = math.prod(dims)
                w = rng.integers(0, 100, n).astype(np.float64).reshape(dims)
                q = len(dims)
                a, b = [0.6] * q, [0.1] * q
                it = max(20, min(2000, int(2e8 // (n * q * 8))))
                tag = "busy" if contended else "quiet"
                cfg = [("generic", 1), ("auto", 1), ("auto", 2)]
                t = {}
                for simd, nt in cfg:
                    t[simd, nt] = T(f"em {tag} {n} {simd} {nt}t",
                                    lambda: _kernels.em_kron(w, w, dims, [None] * q, a, b, it,
                                                             0.0, nt, simd=simd), 3,
                                    timed=True, wait=not contended) / it
                # the driver's choice (ThreadChoice) in a converging run
                t0 = time.perf_counter()
                x, info = anonset.randomized.reconstruct.paper_em(
                    w, dims, a, b, 1.0, max_iter=it, tol=0.0, tol_ll=0.0, accelerate=False,
                    n_threads=2)
                t["driver", 2] = (time.perf_counter() - t0) / info["iterations"]
                rows.append((tag, n, dims, t, _kernels.em_threads(n, 2)))
        finally:
            if proc:
                proc.kill()
                proc.wait()
    res["em"] = rows


def bench_exact(T, log, res, subsets):
    log("exact EM, Adult, l = 10, q' = 4")
    df = anonset.datasets.load_adult()
    schema = anonset.datasets.adult_schema(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # clip_l takes the two-valued sex and salary-class to l = 1: named
        pub = anonset.publish(df, anonset.Diversity(10), schema, seed=1010, clip_l=True,
                              allow_clear=["sex", "salary-class"], research_seed=True)
    rng = np.random.default_rng(2024)
    attrs = list(anonset.datasets.ADULT_QIDS)
    rows = []
    for s in range(subsets):
        S = list(rng.choice(attrs, size=4, replace=False))
        truth = anonset.true_crosstab(df, schema, S).counts
        w = anonset.count_w(pub, S)
        r = {}
        for method in ("em", "exact_em"):
            t0 = time.perf_counter()
            ct = anonset.reconstruct(pub, S, method, w=w if method == "em" else None)
            r[method] = (time.perf_counter() - t0, ct.info["iterations"], ct.info["converged"],
                         float(np.abs(ct.counts - truth).sum()) / pub.n_rows)
        # E-step kernels: subset expansion (round one) vs trie, per update
        pm, wt = _patterns(pub, S)
        dims = [pub.schema[a].d for a in S]
        params = [pub.params[a] for a in S]
        x0 = np.full(dims, pub.n_rows / math.prod(dims))
        kt = {}
        for kernel in ("subsets", "trie"):
            ts = []
            for k in (2, 7):            # the difference excludes the set-up
                t0 = time.perf_counter()
                anonset.randomized.reconstruct.exact_em_patterns(
                    params, dims, pub.n_rows, pm, wt, max_iter=k, tol_ll=0.0,
                    accelerate=False, init=x0, kernel=kernel, n_threads=1)
                ts.append(time.perf_counter() - t0)
            kt[kernel] = max(ts[1] - ts[0], 0.0) / 5
        rows.append((S, r, kt, len(wt)))
        log(f"  {'x'.join(S)}: exact {r['exact_em'][0]:.2f} s ({r['exact_em'][1]} updates), "
            f"paper {r['em'][0]:.3f} s ({r['em'][1]}); E-step {kt['subsets']*1e3:.0f} -> "
            f"{kt['trie']*1e3:.1f} ms")
    res["exact"] = rows


def bench_q1(T, codes, d, n, log, res):
    log("q = 1: Subset Selection + IBU vs anonset")
    name = sorted(d, key=lambda k: (-d[k], k))[0]
    dd = d[name]
    x = codes[name]
    true = np.bincount(x, minlength=dd) / n
    eps = 1.0
    omega, p_in = nb.ss_params(dd, eps)
    rep = T("q1 ss client", lambda: nb.ss_client(x, dd, eps, seed=3), 1)
    pi, it = T("q1 ibu", lambda: nb.ibu(rep, dd, eps), 1)
    # anonset: the same randomizer (p, eta) as Subset Selection's (p_in, omega)
    # read in paper 000's parametrization: head probability p with
    # p + (1 - p) eta / d = p_in
    p = (p_in - omega / dd) / (1 - omega / dd)
    par = {name: AttributeParams(name, p, omega, dd)}
    from anonset.randomized.params import quantize_p
    coin = int(quantize_p(p) * 2**32)
    masks = T("q1 anonset publish 1t", lambda: _kernels.sample_sets(
        KEY, "chacha20", [x], [dd], [omega], [coin], [0], [0], n_threads=1)[0], 3)
    tbl_par = par[name]
    w = T("q1 anonset count_w 1t", lambda: _kernels.count_w([masks], [dd], omega, 1), 3)
    a, b = [tbl_par.inclusion], [tbl_par.other_inclusion]
    x_em, info = T("q1 anonset em 1t", lambda: anonset.randomized.reconstruct.paper_em(
        w, [dd], a, b, float(omega), max_iter=20000, tol=0.0, tol_ll=1e-14, accelerate=True,
        n_threads=1), 3)
    res["q1"] = {"name": name, "d": dd, "eps": eps, "omega": omega, "ibu_iters": it,
                 "ibu_L1": float(np.abs(pi - true).sum()),
                 "em_L1": float(np.abs(x_em / n - true).sum()), "em_iters": info["iterations"]}


def write(path, T, res, meta, n):
    r = {k: v["wall"] for k, v in T.rows.items()}
    L = []
    add = L.append
    bi = meta["build"]
    add("# Benchmarks: performance, second round (issue 16)")
    add("")
    add(f"Written by `bench/compare_perf.py{meta['flags']}` on {meta['date']} "
        f"({meta['minutes']:.1f} minutes); all figures from this one run.  Every target of "
        "issue 16 with its status and where it is measured: \"Targets at a glance\" at the "
        "end of this page.")
    add("")
    add(f"- Machine: {bi['processor']}, {bi['cpu_count']} cores, {meta['mem_gib']:.0f} GiB; "
        f"{bi['platform']}; SIMD level {_kernels.simd_level()}")
    add(f"- Kernels: git {meta['commit']}; anonset {bi['anonset']} (OpenMP {bi['openmp']}), "
        f"Python {bi['python']}, NumPy {bi['numpy']}")
    add(f"- Load average (1 min) at start / end: {meta['load_start']:.2f} / "
        f"{os.getloadavg()[0]:.2f}.  The machine is shared (2 cores, several other "
        "sessions): every wall time below is the best of its repeats after waiting (a "
        "bounded time) for the other processes to go quiet; the raw table lists how many "
        "cores the others kept busy before each best run.  Ratios are of wall times measured "
        "side by side in this run.")
    add("")
    # 1-2: publishing
    pb = res["publish"]
    cells = pb["cells"]
    strong = min(r["numpy subset table"], r["numpy floyd"])
    add(f"## Publishing the census-shaped table ({n:,} x 68 = {cells / 1e6:.1f} M cells, "
        "ChaCha20, p = 1)")
    add("")
    add("| implementation | threads | time | M cells/s | vs strongest NumPy | vs floor (fresh fill) |")
    add("|---|---|---|---|---|---|")
    floor = r["floor: fresh fill"]
    rows = [("NumPy argpartition (10 % of the rows, scaled x10)", 1,
             10 * r["numpy argpartition (10 % of rows)"]),
            ("NumPy vectorized Floyd", 1, r["numpy floyd"]),
            ("NumPy subset table (one index per cell)", 1, r["numpy subset table"])]
    for nt in (1, 2):
        rows.append((f"anonset, fresh output", nt, r[f"anonset {nt}t fresh"]))
    for nt in (1, 2):
        rows.append((f"anonset, reused output (`out=`)", nt, r[f"anonset {nt}t reused"]))
    for label, nt, t in rows:
        add(f"| {label} | {nt} | {t:.3f} s | {cells / t / 1e6:.0f} | {strong / t:.1f}x | "
            f"{t / floor:.2f}x |")
    add(f"| floor: `np.empty(...).fill(1)` of {pb['out_bytes'] / 2**20:,.0f} MiB (fresh pages) "
        f"| 1 | {floor:.3f} s | | | 1.00x |")
    add(f"| floor: `.fill(1)` of an array already touched | 1 | {r['floor: warm fill']:.3f} s | "
        f"| | {r['floor: warm fill'] / floor:.2f}x |")
    add("")
    s2 = strong / r["anonset 2t fresh"]
    add(f"Target (2 threads, ChaCha20): >= 10x the strongest NumPy baseline: **{s2:.1f}x** "
        f"({'met' if s2 >= 10 else 'not met'}); within 3x of the floor: "
        f"**{r['anonset 2t fresh'] / floor:.2f}x** ({'met' if r['anonset 2t fresh'] <= 3 * floor else 'not met'}).")
    add("")
    add("No cliff (one column of 2,000,000 rows, 1 thread; ns per cell, fresh output / reused "
        "output):")
    add("")
    add("| d | eta | p | ns/cell fresh | ns/cell reused |")
    add("|---|---|---|---|---|")
    cl = {}
    for dd, ee, p, tf, tr in res["cliff"]:
        cl[(dd, ee, p)] = (tf, tr)
        add(f"| {dd} | {ee} | {p} | {tf:.1f} | {tr:.1f} |")
    rf = cl[(64, 32, 1.0)][0] / cl[(16, 5, 1.0)][0]
    rr = cl[(64, 32, 1.0)][1] / cl[(16, 5, 1.0)][1]
    add("")
    add(f"Ratio d = 64, eta = 32 to d = 16, eta = 5 (p = 1): {rf:.2f}x with fresh output, "
        f"{rr:.2f}x into reused output (target <= 2x; round one: 135-190 vs 7-10 ns, ~20x).")
    med, lo, hi = _pair_ratios(res["cliff_pairs"])
    add(f"Interleaved pairs (d = 16 then d = 64, reused output, best of 3 each, "
        f"{len(res['cliff_pairs'])} pairs): median **{med:.2f}x**, range {lo:.2f}-{hi:.2f}x "
        f"({'met' if med <= 2 else 'not met'}).")
    add("")
    # 3: count_w
    add("## count_w, q' = 4 (2,458,285 rows, eta = 5 or 4 per attribute)")
    add("")
    add("| table | NumPy | NumPy factorized | direct 1t (round one) | direct 2t | factorized 1t | "
        "factorized 2t | factorized 1t vs direct 1t |")
    add("|---|---|---|---|---|---|---|---|")
    for label, attrs, dims in res["count"]:
        k = f"count {label}"
        add(f"| {label} ({' x '.join(map(str, dims))}) | {r[k + ' numpy']:.2f} s | "
            f"{r[k + ' numpy factorized']:.2f} s | {r[k + ' direct 1t']:.3f} s | "
            f"{r[k + ' direct 2t']:.3f} s | {r[k + ' factorized 1t']:.3f} s | "
            f"{r[k + ' factorized 2t']:.3f} s | "
            f"**{r[k + ' direct 1t'] / r[k + ' factorized 1t']:.1f}x** |")
    add("")
    med, lo, hi = _pair_ratios(res["count_pairs"])
    add(f"16,800 cells, factorized 1t and direct 1t in interleaved pairs (best of 3 each, "
        f"{len(res['count_pairs'])} pairs): direct / factorized median **{med:.1f}x**, range "
        f"{lo:.1f}-{hi:.1f}x ({'met' if med >= 10 else 'not met'}; target >= 10x).")
    add("")
    add("Every method gives the identical w (asserted in the run, and in tests/test_reconstruct.py).")
    add("")
    # 4: EM
    add("## The paper's EM (eq. 26): us per iteration")
    add("")
    add("| machine | \\|C\\| | dims | generic 1t | AVX2 1t | AVX2 2t | driver (2 asked) | threads used for 2 asked | 2t vs 1t |")
    add("|---|---|---|---|---|---|---|---|---|")
    for tag, n_, dims, t, used in res["em"]:
        add(f"| {tag} | {n_:,} | {'x'.join(map(str, dims))} | {t['generic', 1] * 1e6:.1f} | "
            f"{t['auto', 1] * 1e6:.1f} | {t['auto', 2] * 1e6:.1f} | {t['driver', 2] * 1e6:.1f} | "
            f"{used} | {t['auto', 2] / t['auto', 1]:.2f} |")
    add("")
    add("'busy': a competing process (`while True: pass`) runs throughout.  'driver': "
        "`reconstruct.paper_em` with n_threads=2, which times one- and two-thread calls and "
        "keeps the faster (emdrive.ThreadChoice); below 2^15 cells the kernel uses one thread "
        "whatever is asked.")
    add("")
    # 5: exact EM
    add("## Exact EM, Adult, l = 10, q' = 4 (default stopping rule, SQUAREM)")
    add("")
    add("| subset | tuples | exact EM | updates | paper EM | updates | exact / paper | L1/N exact, paper | E-step subsets (round one) | E-step trie |")
    add("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for S, rr_, kt, U in res["exact"]:
        e, p = rr_["exact_em"], rr_["em"]
        ratios.append(e[0] / p[0])
        add(f"| {'x'.join(S)} | {U:,} | {e[0]:.2f} s | {e[1]} ({'conv.' if e[2] else 'cap'}) | "
            f"{p[0]:.3f} s | {p[1]} ({'conv.' if p[2] else 'cap'}) | {e[0] / p[0]:.1f}x | "
            f"{e[3]:.3f}, {p[3]:.3f} | {kt['subsets'] * 1e3:.0f} ms | {kt['trie'] * 1e3:.1f} ms |")
    add("")
    add(f"Mean exact / paper time ratio {np.mean(ratios):.1f}x (target <= 10x).")
    add("")
    # 6: q = 1
    q1 = res["q1"]
    add(f"## The q = 1 job: Subset Selection + IBU vs anonset ({q1['name']}, d = {q1['d']}, "
        f"epsilon = {q1['eps']}, subset size {q1['omega']})")
    add("")
    t_ss = r["q1 ss client"] + r["q1 ibu"]
    t_an = r["q1 anonset publish 1t"] + r["q1 anonset count_w 1t"] + r["q1 anonset em 1t"]
    add("| implementation | publish | estimate | total | L1 of the estimate |")
    add("|---|---|---|---|---|")
    add(f"| NumPy SS client + IBU ({q1['ibu_iters']} iterations, identical reports grouped) | "
        f"{r['q1 ss client']:.3f} s | {r['q1 ibu']:.3f} s | {t_ss:.3f} s | {q1['ibu_L1']:.4f} |")
    add(f"| anonset sample_sets + count_w + EM (SQUAREM, {q1['em_iters']} updates), 1 thread | "
        f"{r['q1 anonset publish 1t']:.3f} s | "
        f"{r['q1 anonset count_w 1t'] + r['q1 anonset em 1t']:.3f} s | {t_an:.3f} s | "
        f"{q1['em_L1']:.4f} |")
    add("")
    add(f"anonset is {t_ss / t_an:.0f}x faster on the whole job.  Subset Selection and IBU were "
        "written from their papers (Wang et al. 2016; Agrawal & Aggarwal 2001) in "
        "bench/numpy_baseline.py: multi-freq-ldpy is not installable in this environment.  "
        "The same randomizer in paper 000's terms: head probability p with "
        "p + (1 - p) eta / d = p_in, eta = the subset size (SS draws the tail from the other "
        "values, paper 000 from all; the two differ only in the tail's law).")
    add("")
    sc = HERE / "RESULTS_scaling.md"
    if sc.exists():
        body = sc.read_text().split("\n", 1)[1]
        add("## Scaling, 1 to 16 threads (a 16-core machine; bench/omp_scaling.c)")
        add(body.rstrip())
        add("")
    add("## Raw measurements")
    add("")
    add("| measurement | wall (best) | CPU | others busy (cores) | repeats |")
    add("|---|---|---|---|---|")
    for k, v in T.rows.items():
        add(f"| {k} | {v['wall']:.4f} s | {v['cpu']:.3f} s | {v['load']:.2f} | {v['repeat']} |")
    add("")
    add("Rerun: `PYTHONPATH=src /work/venv/bin/python bench/compare_perf.py`.  Older reports: "
        "[RESULTS_round1.md](RESULTS_round1.md) (round one: compare.py), [RESULTS_core.md](RESULTS_core.md), "
        "[RESULTS_emd.md](RESULTS_emd.md).  Growth exponents of publish, reconstruct, semantic, "
        "lgb and msa: [RESULTS_growth.md](RESULTS_growth.md) (bench/growth.py).")
    # sections written by hand or by other scripts below KEEP survive a rerun
    kept = ""
    if path.exists():
        old = path.read_text()
        if KEEP in old:
            kept = old[old.index(KEEP):]
    path.write_text("\n".join(L) + "\n" + ("\n" + kept if kept else ""))


#: The marker after which bench/RESULTS.md holds sections this script keeps.
KEEP = "<!-- kept by compare_perf.py: the sections below are not written by it -->"


class PerfTimer(Timer):
    def __call__(self, label, fn, repeat=1, timed=False, wait=True):
        best, cpu, bg, out = math.inf, 0.0, float("nan"), None
        for _ in range(repeat):
            busy = self._wait() if wait else background_busy(0.1)
            c0, t0 = time.process_time(), time.perf_counter()
            out = fn()
            dt = time.perf_counter() - t0
            if dt < best:
                best, cpu, bg = dt, time.process_time() - c0, busy
        self.rows[label] = {"wall": best, "cpu": cpu, "load": bg, "repeat": repeat}
        self.log(f"  {label}: {best:.4f} s (others busy {bg:.2f})")
        return best if timed else out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=pathlib.Path, default=HERE / "RESULTS.md")
    ap.add_argument("--max-wait", type=float, default=8.0)
    ap.add_argument("--wait-budget", type=float, default=120.0)
    args = ap.parse_args(argv)
    n = 300_000 if args.quick else CENSUS_ROWS

    def log(msg):
        print(msg, flush=True)

    t_start = time.perf_counter()
    meta = {"date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "build": build_info(), "load_start": os.getloadavg()[0], "commit": _git_state(),
            "mem_gib": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
            "flags": " --quick" if args.quick else ""}
    T = PerfTimer(log, 0.3, args.max_wait, args.wait_budget)
    res = {}
    codes, d = census_like_codes(n)
    bench_publish(T, codes, d, n, log, res)
    bench_cliff(T, 2_000_000 if not args.quick else 300_000, log, res)
    bench_count(T, codes, d, log, res)
    bench_q1(T, codes, d, n, log, res)
    del codes
    bench_em(T, log, res)
    bench_exact(T, log, res, 2 if args.quick else 3)
    meta["minutes"] = (time.perf_counter() - t_start) / 60
    write(args.out, T, res, meta, n)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
