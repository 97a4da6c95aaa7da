"""``anonset audit``: does a published table conform to its declared model
(paper 000's guarantees, paper 001's Definition 1), and which risks does it
carry (issue 13)?  Optionally with the original data and an attack
simulation; files larger than memory are audited chunk by chunk.
Registered by :mod:`anonset.cli`.

Exit codes: 0 PASSED (conforms and no risk found), 1 FAILED or RISKS FOUND,
2 usage or data error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..validate import InputError
from . import args as A

EXIT_OK, EXIT_FAILED = 0, 1
#: Above this many published rows the audit reads the file in chunks by default.
AUTO_CHUNK_ABOVE = 2_000_000

#: The audit's parameters as this subcommand's flags.
#: This subcommand's own spellings (the rest as in cli/args.FLAGS).
FLAGS = {"original": "--original", "attack": "--attack", "known": "--known",
          "n_targets": "--targets", "seed": "--seed", "prior": "--prior",
          "missing": "--missing", "aligned": "--aligned", "chunk_rows": "--chunk-rows",
          "n_classes": "--classes"}



def register(sub) -> None:
    p = sub.add_parser(
        "audit", help="check a published table against its privacy model and for risks",
        description="Two verdicts.  Conformance: set sizes, domains, parameters against the "
        "declared model, (l)-diversity / (k)-anonymity proven from set sizes, closeness "
        "bounds; with --original also the inclusion of the true value, exact equivalence "
        "classes and closeness with the true distribution.  Risks: a research seed, kept or "
        "unknown row order, attributes published in the clear, pass-through columns that "
        "identify people or recode a sensitive attribute, and with --attack an adversary "
        "who beats the model's promise.  Also each attribute's local differential privacy "
        "epsilon.  Exit code 0 only when the table conforms and no risk is found (PASSED); "
        "1 when it FAILED or RISKS FOUND.")
    p.add_argument("input", metavar="PUBLISHED", help="published table (.parquet, or .csv with "
                   "its .anonset.json), of any anonset publishing command (anonymize, "
                   "semantic-anonymize, lgb, msa-anonymize)")
    p.add_argument("--original", metavar="ORIG", help="the original table (data holder side)")
    p.add_argument("--missing", choices=("error", "category"), default=None,
                   help="missing values in --original: as published (default: the policy the "
                   "metadata records, else error)")
    p.add_argument("--aligned", action=argparse.BooleanOptionalAction, default=None,
                   help="the rows of --original are in the published order (default: yes "
                   "unless the published rows were shuffled)")
    p.add_argument("--attack", action="store_true", help="run the attack simulation")
    p.add_argument("--known", type=int, default=None, metavar="N",
                   help="attributes the adversary knows exactly (default 1, or 0 where the "
                        "release has one sensitive attribute)")
    p.add_argument("--targets", type=int, default=None, metavar="N",
                   help="victims in the attack simulation (default 10000)")
    p.add_argument("--prior", choices=("marginal", "conditional"), default=None,
                   help="the adversary's prior (conditional: needs --original in the published "
                        "order: a --keep-order release's)")
    p.add_argument("--classes", type=int, default=None, metavar="N",
                   help="equivalence classes measured exactly (default 200)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="seed of the sampled checks and victims (not of the publication)")
    p.add_argument("--chunk-rows", type=int, default=None, metavar="N",
                   help=f"read the published file (and --original) in chunks of N rows, in "
                   f"bounded memory; 0: whole table in memory (default: chunks of 262144 "
                   f"above {AUTO_CHUNK_ABOVE:,} rows)")
    p.add_argument("-o", "--output", metavar="OUT.csv", help="write the report as CSV")
    p.add_argument("--plot", metavar="OUT.png", help="attack confidence plot (needs --attack)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="format of the release (default: from its extension)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr while a file is audited chunk by chunk "
                        "(default: on long work when stderr is a terminal; never with -q)")
    p.set_defaults(func=cmd_audit, flag_names=FLAGS)


def _partition_release(path, fmt):
    """The lgb / msa-anonymize release in a Parquet file (or a CSV with its
    metadata beside it), else None."""
    from ..partition.output import csv_metadata
    from ..partition.output import read_metadata as partition_metadata
    try:
        meta = partition_metadata(path) if fmt == "parquet" else csv_metadata(path)
        paper = str(meta.get("paper"))
    except (ValueError, KeyError, OSError):
        return None
    if paper not in ("002", "003"):
        return None
    from ..audit.html.release import open_release
    return open_release(path, format=fmt)


def _run(args, fmt):
    """The report, in memory or chunk by chunk, with the file's columns
    checked against its metadata (H59)."""
    from ..audit.columns import with_column_check
    from ..io.stream import read_metadata
    rel = _partition_release(args.input, fmt)
    meta = rel.meta if rel is not None else read_metadata(args.input, fmt)
    return with_column_check(_report(args, fmt, rel), args.input, fmt, meta)


def _report(args, fmt, rel):
    """The report, in memory or chunk by chunk."""
    from ..audit import audit, audit_file
    from ..io.stream import DEFAULT_CHUNK_ROWS, read_metadata
    if rel is not None:
        # paper 002 / 003: the checks of anonset.audit.partition (its class
        # adversary always runs; the set-table options do not apply: named,
        # they are refused, as anonset.audit refuses them, not ignored)
        given = {"--attack": args.attack, "--known": args.known is not None,
                 "--targets": args.targets is not None, "--prior": args.prior is not None,
                 "--classes": args.classes is not None, "--seed": args.seed is not None,
                 "--missing": args.missing is not None,
                 "--aligned" if args.aligned else "--no-aligned": args.aligned is not None,
                 "--chunk-rows": args.chunk_rows is not None, "--plot": args.plot is not None}
        named = [f for f, on in given.items() if on]
        if named:
            raise A.UsageError(f"{named[0]} applies to a table of random sets, not to an lgb "
                               "or msa-anonymize release (it is audited by its classes and "
                               "buckets, its attack included); leave it out")
        from ..audit.partition import audit_partition
        original = None
        if args.original:
            original = A.read_table(args.original,
                                    A.format_of(args.original, None, "--original"),
                                    declared=rel.declared_values())
        try:
            return audit_partition(rel, original).report
        except InputError as e:
            if e.param == "original" and e.file is None:
                raise e.in_file(args.original) from None     # which file lacks it
            raise
    chunk = args.chunk_rows
    if chunk is None:
        chunk = DEFAULT_CHUNK_ROWS if read_metadata(args.input, fmt)["n_rows"] > \
            AUTO_CHUNK_ABOVE else 0
    common = dict(attack=args.attack, known=args.known,
                  n_targets=10_000 if args.targets is None else args.targets,
                  prior=args.prior or "marginal",
                  n_classes=200 if args.classes is None else args.classes, seed=args.seed,
                  missing=args.missing, aligned=args.aligned)
    if chunk > 0:
        from .progress import LONG_ROWS, Progress, progress_enabled
        ofmt = A.format_of(args.original, None, "--original") if args.original else None
        on = progress_enabled(args.progress, read_metadata(args.input, fmt)["n_rows"] >= LONG_ROWS,
                              getattr(args, "quiet", False))
        # the rows of each pass (the second reads the rows the checks picked)
        with Progress(None, "audit", on) as prog:
            return audit_file(args.input, args.original, chunk_rows=chunk, format=fmt,
                              original_format=ofmt, progress=prog, **common)
    table = A.read_settable(args.input, fmt)
    if table.n_rows == 0:
        from ..audit.report import EMPTY_EXPECTED
        raise InputError("has no rows", file=args.input, expected=EMPTY_EXPECTED)
    original = None
    if args.original:
        # a declared value that reads as a missing marker ('NA' for North
        # America) is a value, as publishing and audit_file read it (H139)
        from ..audit.html.release import domain_values
        original = A.read_table(args.original, A.format_of(args.original, None, "--original"),
                                declared=domain_values(table.schema))
        from ..validate import check_original_columns
        check_original_columns(table.names, original.columns, file=args.original)  # file named
    return audit(table, original, **common)


def cmd_audit(args) -> int:
    from ..io.atomic import atomic_path
    if args.plot and not args.attack:
        raise A.UsageError("--plot needs --attack")
    A.check_suffix(args.output, "-o", (".csv", ".csv.gz", ".csv.bz2", ".csv.xz"),
                   "CSV (one row per check)")
    A.check_suffix(args.plot, "--plot", (".png",), "a PNG image")
    # outputs that are inputs are refused before the audit runs, not after
    protect = [args.input, str(args.input) + ".anonset.json"] + \
        ([args.original] if args.original else [])
    for flag, out in (("-o", args.output), ("--plot", args.plot)):
        if out:
            A.check_not_input(out, protect, flag=flag)
    if args.known is not None and args.known < 0:
        raise A.UsageError(f"--known must be >= 0, got {args.known}")
    if args.chunk_rows is not None and args.chunk_rows < 0:
        raise A.UsageError(f"--chunk-rows must be >= 0, got {args.chunk_rows}")
    if args.original and Path(args.original).is_dir():
        raise A.UsageError(f"--original {args.original!r} is a directory, not a file")
    fmt = A.format_of(args.input, args.input_format, "--input-format")
    if not Path(args.input).exists():
        raise A.UsageError(f"input file {str(args.input)!r} does not exist")
    if args.original and not Path(args.original).exists():
        raise A.UsageError(f"--original {args.original!r} does not exist")
    report = _run(args, fmt)
    # the checks that passed are listed with -v (or written with -o): a
    # survey's audit has over a hundred rows, nearly all of them passing
    print(report.to_text(every=bool(getattr(args, "verbose", False)),
                         hint="every check: -v, or -o OUT.csv"))
    # with the original, the checks hold its statistics (true shares, the
    # most common values, measured lambdas): the files are the owner's
    # alone, as the report page made with it is
    private = args.original is not None
    said = "; readable by you only: it holds statistics of the original data" if private else ""
    if args.output:
        A.write_frame(report.to_frame(), args.output, "csv", protect=protect, private=private)
        A.note(args, f"wrote {args.output} (every check{said})")
    if args.plot:
        fig = report.plot()
        with atomic_path(args.plot, protect=protect, private=private) as tmp:
            fig.savefig(tmp, format="png")
        A.note(args, f"wrote {args.plot} (the attack's chart{said})")
    sys.stdout.flush()
    return EXIT_OK if report.ok else EXIT_FAILED
