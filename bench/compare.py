"""All side-by-side comparisons of round one in one process; rewrites
bench/RESULTS_round1.md (bench/RESULTS.md is written by compare_perf.py).

1. ``bench/compare_core.py``: the core kernels (publishing, w counting, EM)
   against the NumPy baselines of ``bench/numpy_baseline.py``; writes
   bench/RESULTS_core.md.
2. ``bench/compare_emd.py``: EMD against POT (``ot.emd2``) and the
   t-closeness check against pycanon; writes bench/RESULTS_emd.md.

bench/RESULTS_round1.md then gathers, on one page, the machine, the date, every
ratio ("speed-up" / "ratio" columns and "Target" lines) from both reports,
and links to the full reports.  All numbers come from this one run.

    PYTHONPATH=src python bench/compare.py            # full (~15 min on 2 cores)
    PYTHONPATH=src python bench/compare.py --quick    # 200,000 rows for the core part
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))


def machine() -> str:
    from anonset._info import build_info
    info = build_info()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{info['processor']}, {os.cpu_count()} cores, {mem:.0f} GiB RAM; "
            f"{platform.platform()}; Python {info['python']}, NumPy {info['numpy']}, "
            f"anonset {info['anonset']} (OpenMP {info['openmp']}, {info['threads']} threads)")


def ratio_lines(text: str) -> list:
    """Tables with a ratio / speed-up column, and the 'Target' lines, of a report."""
    out, block, keep = [], [], False
    heading = None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|"):
            if not block:
                keep = bool(re.search(r"speed-up|ratio|vs ", line, re.I))
            block.append(line)
            continue
        if block:
            if keep:
                out += ([f"**{heading}**", ""] if heading else []) + block + [""]
            block = []
        if line.startswith("Target") or "**" in line and re.search(r"\d+(\.\d+)?x", line):
            out += [line, ""]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="compare_core --quick")
    ap.add_argument("--skip-core", action="store_true")
    ap.add_argument("--skip-emd", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    date = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    load0 = os.getloadavg()[0]
    ran = []
    reports = {}
    # --quick must not replace the full-size reports: the core report goes to a
    # temporary file, and RESULTS_emd.md is put back as it was after its rerun
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_core:
            import compare_core
            out = Path(tmp) / "RESULTS_core.md" if args.quick else HERE / "RESULTS_core.md"
            compare_core.main((["--quick"] if args.quick else []) + ["--out", str(out)])
            reports["RESULTS_core.md"] = out.read_text()
            ran.append("compare_core")
        if not args.skip_emd:
            try:
                import compare_emd
            except ImportError as e:      # POT / pycanon are test extras
                print(f"compare_emd skipped: {e} (pip install -e '.[test]')", file=sys.stderr)
            else:
                emd_path = HERE / "RESULTS_emd.md"
                before = emd_path.read_bytes() if emd_path.exists() else None
                try:
                    compare_emd.main()
                    reports["RESULTS_emd.md"] = emd_path.read_text()
                    ran.append("compare_emd")
                finally:
                    if args.quick and before is not None:
                        emd_path.write_bytes(before)
    total = time.perf_counter() - t0
    L = ["# Benchmarks: anonset side by side with the references", "",
         f"Written by `bench/compare.py{' --quick' if args.quick else ''}` on {date} "
         f"({total / 60:.1f} minutes; ran {', '.join(ran) or 'nothing'}).", "",
         f"- Machine: {machine()}",
         f"- Load average at start / end: {load0:.2f} / {os.getloadavg()[0]:.2f} (a shared VM: "
         "wall times include other work; see the full reports for CPU times)", "",
         "References: NumPy baselines (`bench/numpy_baseline.py`), POT `ot.emd2` for EMD, "
         "pycanon for the t-closeness check.  Full reports: "
         "[RESULTS_core.md](RESULTS_core.md), [RESULTS_emd.md](RESULTS_emd.md); streaming at "
         "scale: [docs/results/000/streaming.md](../docs/results/000/streaming.md).", ""]
    for name, title in (("RESULTS_core.md", "Core kernels vs NumPy (compare_core.py)"),
                        ("RESULTS_emd.md", "EMD vs POT, checks vs pycanon (compare_emd.py)")):
        text = reports.get(name)
        L += [f"## {title}", ""]
        if text is None:
            p = HERE / name
            if not p.exists():
                L += ["(not run)", ""]
                continue
            text = p.read_text()
            L += [f"(not rerun in this run; figures from the existing {name})", ""]
        elif args.quick:
            L += [f"(this run, --quick; the full-size {name} was left as it was)", ""]
        L += ratio_lines(text)
    (HERE / "RESULTS_round1.md").write_text("\n".join(L).rstrip() + "\n")
    print(f"wrote {HERE / 'RESULTS_round1.md'}")


if __name__ == "__main__":
    main()
