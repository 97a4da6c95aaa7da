"""``anonset report PUBLISHED [--original IN] -o report.html``: one
self-contained HTML page to sign off a release (issue 18) -- what is
published and how, the audit's verdict with every check in plain words, the
attack simulation and each attribute's local differential privacy, and, with
the original, the utility the analyst will see (or, for lgb and
msa-anonymize releases, the classes and the information loss).  A set table
above 2,000,000 rows is read chunk by chunk in bounded memory, with
progress.  Registered by :mod:`anonset.cli`.

Exit codes: 0 the page was written (whatever the verdict: the page says it),
2 usage or data error, 130 interrupted.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from . import args as A
from .progress import LONG_ROWS, Progress, progress_enabled

__all__ = ["register", "cmd_report"]

#: The report's parameters as this subcommand's flags (the rest as in args.FLAGS).
FLAGS = {"format": "--input-format", "original_format": "--original-format",
         "n_targets": "--targets", "seed": "--seed", "output": "-o", "attack": "--no-attack"}


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="one self-contained HTML page to sign off a release",
        description="Write one HTML file (no script, no font, nothing loaded from the network: "
        "it opens from an e-mail attachment) with the release at a glance, the privacy "
        "verdict of the audit and every check in plain words, the attack simulation, the "
        "local differential privacy epsilon of each attribute, and with --original the "
        "utility an analyst will see (true against reconstructed cross-tabulations and "
        "marginals), or for lgb and msa-anonymize releases the class sizes and the "
        "information loss.  See docs/report.md.")
    p.add_argument("input", metavar="PUBLISHED",
                   help="the release of any publishing command: a set table or an lgb / "
                        "msa-anonymize output (.parquet, or .csv with its .anonset.json)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html", help="the page")
    p.add_argument("--original", metavar="ORIG", help="the original table (data holder side)")
    p.add_argument("--pairs", metavar="A:B,C:D",
                   help="attribute pairs whose cross-tabulation is shown (default: a few)")
    p.add_argument("--methods", metavar="M,M", default=None,
                   help="reconstruction methods to compare on the pairs (default em,exact_em, "
                        "em only for a release read in chunks; semantic tables: em,linear); "
                        "marginals use the first")
    p.add_argument("--no-attack", dest="attack", action="store_false",
                   help="leave out the attack simulation")
    p.add_argument("--known", type=A.nonneg_int, default=None, metavar="N",
                   help="attributes the simulated adversary knows exactly (default 1, or 0 where "
                        "the release has one sensitive attribute)")
    p.add_argument("--targets", type=A.positive_int, default=None, metavar="N",
                   help="victims in the attack simulation (default 10000)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="seed of the audit's samples (not of the publication)")
    p.add_argument("--top", type=A.positive_int, default=None, metavar="N",
                   help="values shown per chart axis, the rest summed as 'other' (default 15)")
    p.add_argument("--chunk-rows", type=A.nonneg_int, default=None, metavar="N",
                   help="read the release (and --original) in chunks of N rows, in bounded "
                        "memory; 0: whole in memory (default: chunks above 2,000,000 rows)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="format of the release (default: from its extension)")
    p.add_argument("--original-format", choices=("csv", "parquet"), default=None,
                   help="format of --original (default: from its extension)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                   default=None, help="progress bar on stderr (default: on long work when "
                                      "stderr is a terminal; never with -q)")
    p.set_defaults(func=cmd_report, flag_names=FLAGS)


def cmd_report(args) -> int:
    from ..audit.html import report
    from ..audit.plot import require_matplotlib
    require_matplotlib()
    src = Path(args.input)
    if not src.exists():
        raise A.UsageError(f"input file {str(src)!r} does not exist")
    if args.original and not Path(args.original).exists():
        raise A.UsageError(f"--original {args.original!r} does not exist")
    out = Path(args.output)
    A.check_not_input(out, [src, Path(str(src) + ".anonset.json")] +
                      ([Path(args.original)] if args.original else []))
    A.check_suffix(out, "-o", (".html", ".htm"), "one HTML page")
    methods = A.names([args.methods]) if args.methods else None
    rows = _rows(src, args.input_format)
    enabled = progress_enabled(args.progress, rows >= LONG_ROWS, getattr(args, "quiet", False))
    from ..validate import InputError
    with Progress(None, "report", enabled) as prog:
        try:
            page = report(src, out, original=args.original, pairs=args.pairs,
                          attack=args.attack, known=args.known, n_targets=args.targets,
                          methods=methods, chunk_rows=args.chunk_rows, top=args.top,
                          seed=args.seed, format=args.input_format,
                          original_format=args.original_format, progress=prog)
        except InputError as e:
            if e.param == "original" and e.file is None and args.original:
                raise e.in_file(args.original) from None     # which file lacks it
            if e.param == "table" and e.file is None:       # the release itself (H88)
                raise InputError(e.what, file=str(src), expected=e.expected) from None
            raise
    A.note(args, f"anonset report: {page.verdict}; wrote {out} "
                 f"({len(page.html.encode()) / 1024:,.0f} KiB" +
                 ("; readable by you only: it holds statistics of the original data"
                  if args.original else "") + ")")
    return A.EXIT_OK


def _rows(path: Path, fmt) -> int:
    """The release's row count from its metadata, for the progress decision
    (0 where it cannot be read: the report then says why)."""
    try:
        from ..io.published import read_metadata
        return int(read_metadata(path, fmt)["n_rows"])
    except (ValueError, KeyError, OSError):
        return 0
