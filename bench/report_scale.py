"""The release report of a large streamed release (issue 18 item 3): peak
memory and time of ``anonset.report`` on a published file read chunk by
chunk, with the original file.

Data: ``anonset.synthetic.census_like_codes`` (first ``--attrs`` attributes,
domains 2..18, correlated), written chunk by chunk as Parquet with declared
domains; published by ``anonset.stream.publish_file`` under (t = 0.3)-
closeness (p < 1: finite epsilon) with a research seed.  Then, each in a
fresh child process (peak RSS = the child's VmHWM from /proc/self/status):

1. the report chunk by chunk (``chunk_rows``), with the original: the audit
   of ``audit_file`` (attack included), one pass reconstructing every pair
   and marginal, one pass for the true counts, the charts;
2. for scale, the same report on the first ``--memory-rows`` rows in memory.

    PYTHONPATH=src python bench/report_scale.py --rows 5000000
    PYTHONPATH=src python bench/report_scale.py --rows 20000000   # about 4x longer

Prints one JSON line with the numbers last (docs/report.md quotes them).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from census_parquet import make_census_parquet  # bench/ is on sys.path when run as a script

HERE = Path(__file__).resolve().parent
SEED = "report-scale-bench"


def vm(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def schema(n_attrs):
    import anonset
    from anonset.synthetic import census_domain_sizes
    d = census_domain_sizes(n_attrs)
    return anonset.Schema(tuple(anonset.Attribute(f"a{j:02d}", domain=tuple(range(dj)))
                                for j, dj in enumerate(d)))


def child(args) -> dict:
    import anonset
    if args.child == "publish":
        from anonset.stream import publish_file
        t0 = time.perf_counter()
        r = publish_file(args.input, args.published, anonset.Closeness(0.3),
                         schema(args.attrs), chunk_rows=args.chunk_rows, seed=SEED,
                         research_seed=True)
        return {"seconds": time.perf_counter() - t0, "rows": r.n_rows,
                "peak_rss": vm("VmHWM")}
    done = []
    t0 = time.perf_counter()
    page = anonset.report(args.published, args.output, original=args.input,
                          chunk_rows=args.chunk_rows if args.child == "stream" else 0,
                          methods=["em"], progress=lambda n: done.append(n))
    return {"seconds": time.perf_counter() - t0, "rows": page.rows, "verdict": page.verdict,
            "bytes": len(page.html.encode()), "progress_calls": len(done),
            "peak_rss": vm("VmHWM")}


def run_child(**kw) -> dict:
    argv = [sys.executable, __file__, "--child", kw.pop("child")]
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def head(src: Path, dst: Path, rows: int) -> None:
    import pyarrow.parquet as pq
    t = pq.read_table(src)
    pq.write_table(t.slice(0, rows), dst)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--attrs", type=int, default=6)
    p.add_argument("--chunk-rows", type=int, default=1 << 18)
    p.add_argument("--memory-rows", type=int, default=1_000_000)
    p.add_argument("--workdir", default=None)
    p.add_argument("--child", default=None)
    p.add_argument("--input")
    p.add_argument("--published")
    p.add_argument("--output")
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    work = Path(args.workdir or tempfile.mkdtemp(prefix="report-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    inp, pub, out = work / "input.parquet", work / "published.parquet", work / "report.html"
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    if not inp.exists():
        make_census_parquet(inp, args.rows, args.attrs)
    t_make = time.perf_counter() - t0
    res = {"rows": args.rows, "attrs": args.attrs, "chunk_rows": args.chunk_rows,
           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
           "load_at_start": load, "make_input_s": t_make,
           "input_MiB": inp.stat().st_size / 2 ** 20}
    res["publish"] = run_child(child="publish", input=inp, published=pub, attrs=args.attrs,
                               chunk_rows=args.chunk_rows)
    res["published_MiB"] = pub.stat().st_size / 2 ** 20
    res["report_streamed"] = run_child(child="stream", input=inp, published=pub, output=out,
                                       attrs=args.attrs, chunk_rows=args.chunk_rows)
    m = args.memory_rows
    small_in, small_pub = work / f"input_{m}.parquet", work / f"published_{m}.parquet"
    head(inp, small_in, m)
    run_child(child="publish", input=small_in, published=small_pub, attrs=args.attrs,
              chunk_rows=args.chunk_rows)
    res["report_memory_small"] = run_child(child="memory", input=small_in, published=small_pub,
                                           output=work / "small.html", attrs=args.attrs,
                                           chunk_rows=args.chunk_rows)
    res["report_streamed_small"] = run_child(child="stream", input=small_in,
                                             published=small_pub, output=work / "small_s.html",
                                             attrs=args.attrs, chunk_rows=args.chunk_rows)
    res["load_at_end"] = os.getloadavg()[0]
    print(json.dumps(res))


if __name__ == "__main__":
    main()
