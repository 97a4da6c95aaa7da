"""Streaming at scale (issue 7): a 20-million-row synthetic Parquet file with
10 sensitive attributes, published chunk by chunk.

Checks, each in a fresh child process (peak RSS = the child's VmHWM from
/proc/self/status; getrusage's ru_maxrss is inherited across fork + exec):

1. ``anonset.stream.publish_file`` on the full file: peak RSS (target < 1 GiB)
   and rows/s end to end (read, first pass, publish, write).
2. the in-memory path on a file it can hold (``--in-memory-rows``, default
   2,000,000: the in-memory writer builds Arrow lists of every member, 8 bytes
   per member, 10 x 5 x 8 = 400 bytes a row, so 20 M rows would need ~8 GiB
   for the lists alone): ``pq.read_table`` + ``anonset.publish`` +
   ``SetTable.to_parquet``, rows/s; and the streamed path on the same file, so
   the two throughputs are compared on the same rows (target >= 70 %).
3. identity: ``anonset.publish`` of the whole 20 M-row table in memory
   (bitmasks only, no Arrow lists: ~4 GiB) against the streamed file, chunk by
   chunk, every set; and ``reconstruct_file`` against ``anonset.reconstruct``
   on the in-memory table for q' = 1, 2 and 4 ('em', plus 'exact_em' for
   q' = 1 and 2), compared with ``np.array_equal``.

Data: ``anonset.synthetic.census_like_codes`` (the census-shaped generator,
first 10 attributes: domains 2..18, correlated), written chunk by chunk with
declared domains 0..d-1; model: (t = 0.3)-closeness, whose first pass also
gathers A_j for Algorithm 1 (the harder case; every model takes two passes,
the first checking every value, docs/scaling.md).

    PYTHONPATH=src python bench/stream_scale.py                 # full: 20,000,000 rows
    PYTHONPATH=src python bench/stream_scale.py --rows 2000000 --no-report

Writes docs/results/000/streaming.md (unless --no-report) and prints one
JSON line with the numbers last.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from census_parquet import make_census_parquet  # bench/ is on sys.path when run as a script

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
N_ATTRS = 10
SEED = "stream-scale-bench"          # synthetic data: a research seed (research_seed=True)
MODEL = ("closeness", 0.3)


def vm(field: str) -> int:
    """A /proc/self/status field in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def model():
    import anonset
    return anonset.Closeness(MODEL[1])


def schema():
    import anonset
    from anonset.synthetic import census_domain_sizes
    d = census_domain_sizes(N_ATTRS)
    return anonset.Schema(tuple(anonset.Attribute(f"a{j:02d}", domain=tuple(range(dj)))
                                for j, dj in enumerate(d)))


# ------------------------------------------------------------------ children
def child_stream(inp, out, chunk_rows, threads):
    from anonset.stream import publish_file
    t0 = time.perf_counter()
    r = publish_file(inp, out, model(), schema(), chunk_rows=chunk_rows, seed=SEED,
                     research_seed=True, n_threads=threads)
    t = time.perf_counter() - t0
    return {"seconds": t, "rows": r.n_rows, "chunks": r.chunks, "passes": r.passes,
            "peak_rss": vm("VmHWM")}


def child_memory(inp, out, threads):
    import pyarrow.parquet as pq
    import anonset
    t0 = time.perf_counter()
    frame = pq.read_table(inp).to_pandas()
    pub = anonset.publish(frame, model(), schema(), seed=SEED, research_seed=True,
                          n_threads=threads)
    pub.to_parquet(out)
    t = time.perf_counter() - t0
    return {"seconds": t, "rows": pub.n_rows, "peak_rss": vm("VmHWM")}


def child_identity(inp, out, threads, chunk_rows):
    """In-memory publish of the whole table vs the streamed file; reconstruction."""
    import pyarrow.parquet as pq
    import anonset
    from anonset.stream import iter_masks, read_metadata, reconstruct_file
    t0 = time.perf_counter()
    frame = pq.read_table(inp).to_pandas()
    pub = anonset.publish(frame, model(), schema(), seed=SEED, research_seed=True,
                          n_threads=threads)
    del frame
    t_pub = time.perf_counter() - t0
    meta = read_metadata(out)
    same_meta = meta == pub.metadata()
    names = pub.names
    same_sets = True
    for row0, masks in iter_masks(out, names, chunk_rows=1 << 20, meta=meta):
        n = len(masks[0])
        for name, m in zip(names, masks):
            if not np.array_equal(m, pub.mask(name)[row0:row0 + n]):
                same_sets = False
    rng = np.random.default_rng(7)
    checks = []
    for q in (1, 2, 4):
        attrs = [names[i] for i in sorted(rng.choice(len(names), q, replace=False))]
        for method in (("em", "exact_em") if q <= 2 else ("em",)):
            it = 200 if method == "em" else 30
            t1 = time.perf_counter()
            a = reconstruct_file(out, attrs, method, chunk_rows=chunk_rows, max_iter=it,
                                 n_threads=threads)
            ta = time.perf_counter() - t1
            t1 = time.perf_counter()
            b = anonset.reconstruct(pub, attrs, method, max_iter=it, n_threads=threads)
            tb = time.perf_counter() - t1
            checks.append({"attributes": attrs, "method": method, "max_iter": it,
                           "identical": bool(np.array_equal(a.counts, b.counts)),
                           "stream_s": ta, "memory_s": tb})
    return {"same_metadata": same_meta, "same_sets": same_sets, "checks": checks,
            "publish_in_memory_s": t_pub, "peak_rss": vm("VmHWM")}


def run_child(args: list) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"child {args[0]} failed:\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def machine() -> str:
    model_name = platform.processor() or "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                model_name = line.split(":", 1)[1].strip()
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model_name}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.platform()}"


def mib(x):
    return x / 2**20


def report(path: Path, res: dict) -> None:
    s, m, sm, idt = res["stream"], res["memory"], res["stream_small"], res["identity"]
    lines = [
        "# Streaming at scale (paper 000 publishing, issue 7)", "",
        f"Written by `bench/stream_scale.py` on {res['date']}.", "",
        f"- Machine: {res['machine']}; load average at start {res['load']:.2f} (shared VM)",
        f"- anonset {res['version']}, {res['threads']} kernel threads; chunk_rows = "
        f"{res['chunk_rows']:,}",
        f"- Data: {res['rows']:,} rows x {N_ATTRS} sensitive attributes "
        f"(`census_like_codes`, domains {res['domains']}), Parquet "
        f"{mib(res['input_bytes']):.0f} MiB; declared domains; model (t = {MODEL[1]})-closeness "
        f"(a first pass for A_j, then the publishing pass); published file "
        f"{mib(res['output_bytes']):.0f} MiB.", "",
        "| run | rows | time | rows/s | peak RSS |", "|---|---|---|---|---|",
        f"| streamed (`publish_file`), full file | {s['rows']:,} | {s['seconds']:.1f} s | "
        f"{s['rows'] / s['seconds'] / 1e6:.2f} M | {mib(s['peak_rss']):.0f} MiB |",
        f"| streamed, first {sm['rows']:,} rows | {sm['rows']:,} | {sm['seconds']:.1f} s | "
        f"{sm['rows'] / sm['seconds'] / 1e6:.2f} M | {mib(sm['peak_rss']):.0f} MiB |",
        f"| in memory (`read_table` + `publish` + `to_parquet`), same rows | {m['rows']:,} | "
        f"{m['seconds']:.1f} s | {m['rows'] / m['seconds'] / 1e6:.2f} M | "
        f"{mib(m['peak_rss']):.0f} MiB |", "",
        f"- Peak RSS of the streamed run over {s['rows']:,} rows: **{mib(s['peak_rss']):.0f} MiB** "
        f"(target < 1024 MiB: {'met' if s['peak_rss'] < 2**30 else 'MISSED'}).",
        f"- Throughput, streamed (full file) / in memory: **{res['ratio_full']:.0%}**; on the same "
        f"{m['rows']:,} rows: {res['ratio_same']:.0%} (target >= 70 %: "
        f"{'met' if res['ratio_full'] >= 0.7 else 'MISSED'}).  The in-memory path cannot run "
        "the full file here: its writer holds every member as an 8-byte Arrow value.",
        f"- Identity against `anonset.publish` of the whole table in memory "
        f"({idt['publish_in_memory_s']:.1f} s, peak RSS {mib(idt['peak_rss']):.0f} MiB): "
        f"metadata {'identical' if idt['same_metadata'] else 'DIFFERENT'}, every set "
        f"{'identical' if idt['same_sets'] else 'DIFFERENT'}.", "",
        "Reconstruction, `reconstruct_file` (chunked) vs `anonset.reconstruct` (in memory):", "",
        "| attributes | method | iterations at most | identical | streamed | in memory |",
        "|---|---|---|---|---|---|"]
    for c in idt["checks"]:
        lines.append(f"| {', '.join(c['attributes'])} | {c['method']} | {c['max_iter']} | "
                     f"{'yes' if c['identical'] else 'NO'} | {c['stream_s']:.1f} s | "
                     f"{c['memory_s']:.1f} s |")
    lines += ["", "Rerun: `PYTHONPATH=src python bench/stream_scale.py` (about "
              f"{res['total_s'] / 60:.0f} minutes here).", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--in-memory-rows", type=int, default=2_000_000)
    ap.add_argument("--chunk-rows", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dir", type=Path, default=None, help="work directory (default: a temp dir)")
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--no-identity", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "000" / "streaming.md")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, *rest = args.child
        thr = None if rest[-1] == "None" else int(rest[-1])
        if kind == "stream":
            out = child_stream(rest[0], rest[1], int(rest[2]), thr)
        elif kind == "memory":
            out = child_memory(rest[0], rest[1], thr)
        else:
            out = child_identity(rest[0], rest[1], thr, int(rest[2]))
        print(json.dumps(out))
        return
    sys.path.insert(0, str(ROOT / "src"))
    import anonset
    from anonset.stream import DEFAULT_CHUNK_ROWS
    chunk = args.chunk_rows or DEFAULT_CHUNK_ROWS
    t_all = time.perf_counter()
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = Path(tmp)
        big, small = tmp / "big.parquet", tmp / "small.parquet"
        print(f"writing {args.rows:,} rows", file=sys.stderr, flush=True)
        make_census_parquet(big, args.rows, N_ATTRS)
        small_rows = min(args.in_memory_rows, args.rows)
        make_census_parquet(small, small_rows, N_ATTRS)
        res = {"rows": args.rows, "chunk_rows": chunk, "machine": machine(),
               "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
               "load": os.getloadavg()[0], "version": anonset.__version__,
               "threads": args.threads or anonset.randomized._kernels.effective_threads(0),
               "domains": [a.d for a in schema()], "input_bytes": big.stat().st_size}
        print("in memory, small file", file=sys.stderr, flush=True)
        res["memory"] = run_child(["memory", small, tmp / "m.parquet", args.threads])
        print("streamed, small file", file=sys.stderr, flush=True)
        res["stream_small"] = run_child(["stream", small, tmp / "s.parquet", chunk, args.threads])
        print("streamed, full file", file=sys.stderr, flush=True)
        res["stream"] = run_child(["stream", big, tmp / "pub.parquet", chunk, args.threads])
        res["output_bytes"] = (tmp / "pub.parquet").stat().st_size
        mem_rate = res["memory"]["rows"] / res["memory"]["seconds"]
        res["ratio_full"] = res["stream"]["rows"] / res["stream"]["seconds"] / mem_rate
        res["ratio_same"] = res["stream_small"]["rows"] / res["stream_small"]["seconds"] / mem_rate
        if not args.no_identity:
            print("identity and reconstruction", file=sys.stderr, flush=True)
            res["identity"] = run_child(["identity", big, tmp / "pub.parquet", chunk,
                                         args.threads])
    res["total_s"] = time.perf_counter() - t_all
    idt = res.get("identity", {})
    summary = {"rows": args.rows, "stream_peak_rss_mib": mib(res["stream"]["peak_rss"]),
               "stream_rows_per_s": res["stream"]["rows"] / res["stream"]["seconds"],
               "memory_rows_per_s": mem_rate, "ratio_full": res["ratio_full"],
               "ratio_same": res["ratio_same"],
               "identical": bool(idt.get("same_sets") and idt.get("same_metadata")),
               "reconstruction_identical": all(c["identical"] for c in idt.get("checks", []))
               and bool(idt.get("checks"))}
    if not args.no_report:
        report(args.out, res)
        print(f"wrote {args.out}", file=sys.stderr)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
