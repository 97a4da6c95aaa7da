"""End to end on files (issue 16 target 6): ``anonset anonymize big.parquet
-o pub.parquet`` on N rows x 10 sensitive attributes, against the physical
floor measured in the same run: pyarrow alone reading the input and writing
an output of the published size (the same columns, the same types).  Also
the audit of the published file (chunk by chunk) against the publishing time,
and the Parquet set encodings (bitmasks vs lists of values) side by side.

Run:  PYTHONPATH=src python bench/e2e_files.py --rows 20000000 [--dir /tmp/e2e]
Writes a Markdown table on stdout (bench/RESULTS_e2e.md holds the committed run).
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = [5, 8, 12, 16, 3, 7, 20, 9, 6, 10]


def make_input(path: Path, n: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(seed)
    writer = None
    step = 1 << 20
    for lo in range(0, n, step):
        k = min(step, n - lo)
        t = pa.table({f"s{j}": rng.integers(0, d, k).astype(np.int32)
                      for j, d in enumerate(DOMAINS)})
        if writer is None:
            writer = pq.ParquetWriter(str(path), t.schema)
        writer.write_table(t, row_group_size=1 << 18)
    writer.close()


def timed(argv) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(r.stderr)
    rss = int(r.stderr.strip().splitlines()[-1]) // 1024
    return wall, rss


def floor(inp: Path, out_like: Path, tmp: Path) -> tuple[float, float]:
    """pyarrow reading the input, and writing a table of the output's size."""
    import pyarrow.parquet as pq
    t0 = time.perf_counter()
    pq.read_table(str(inp))
    read = time.perf_counter() - t0
    like = pq.read_table(str(out_like))
    t0 = time.perf_counter()
    pq.write_table(like, str(tmp))
    write = time.perf_counter() - t0
    return read, write


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--dir", default="/tmp/anonset-e2e")
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    inp = d / "big.parquet"
    make_input(inp, args.rows)
    cols = ",".join(f"s{j}" for j in range(len(DOMAINS)))
    py = sys.executable
    rows = []
    for sets in ("masks", "lists"):
        out = d / f"pub-{sets}.parquet"
        wall, rss = timed([py, "-m", "anonset", "-q", "anonymize", str(inp), "-o", str(out),
                           "--sensitive", cols, "--l", "3", "--clip-l", "--sets", sets])
        read, write = floor(inp, out, d / "floor.parquet")
        rows.append((sets, wall, rss, read, write, out.stat().st_size / 2**20))
    audit_wall, audit_rss = timed([py, "-m", "anonset", "-q", "audit", str(d / "pub-masks.parquet"),
                                   "--chunk-rows", "262144"])
    print(f"# End to end on files: {args.rows:,} rows x {len(DOMAINS)} sensitive attributes")
    print(f"{time.strftime('%Y-%m-%d %H:%M')} UTC; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end; "
          f"`PYTHONPATH=src python bench/e2e_files.py --rows {args.rows}`\n")
    print("| sets | anonymize (s) | peak RSS (MiB) | floor: read + write (s) | ratio | output (MiB) |")
    print("|---|---|---|---|---|---|")
    for sets, wall, rss, read, write, size in rows:
        print(f"| {sets} | {wall:.1f} | {rss} | {read:.2f} + {write:.2f} | "
              f"{wall / (read + write):.1f}x | {size:.0f} |")
    pub = rows[0][1]
    print(f"\naudit of the masks file, chunk by chunk: {audit_wall:.1f} s, peak RSS {audit_rss} MiB "
          f"({audit_wall / pub:.2f}x the publishing time)")


if __name__ == "__main__":
    main()
