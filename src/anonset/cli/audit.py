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

EXIT_OK, EXIT_FAILED = 0, 1
#: Above this many published rows the audit reads the file in chunks by default.
AUTO_CHUNK_ABOVE = 2_000_000

#: The audit's parameters as this subcommand's flags.
_FLAGS = {"original": "--original", "attack": "--attack", "known": "--known",
          "n_targets": "--targets", "seed": "--seed", "prior": "--prior",
          "missing": "--missing", "aligned": "--aligned", "chunk_rows": "--chunk-rows",
          "n_classes": "--classes"}


def _flag(param: str, value: str | None = None) -> str:
    """How this subcommand names a parameter (and the value to give it)."""
    flag = _FLAGS.get(param, "--" + param.replace("_", "-"))
    if value is None or value == "True":
        return flag
    if value == "False":
        return "--no-" + flag[2:]
    return f"{flag} {value.strip(chr(39))}"


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
                   "its .anonset.json)")
    p.add_argument("--original", metavar="ORIG", help="the original table (data holder side)")
    p.add_argument("--missing", choices=("error", "category"), default=None,
                   help="missing values in --original: as published (default: the policy the "
                   "metadata records, else error)")
    p.add_argument("--aligned", action=argparse.BooleanOptionalAction, default=None,
                   help="the rows of --original are in the published order (default: yes "
                   "unless the published rows were shuffled)")
    p.add_argument("--attack", action="store_true", help="run the attack simulation")
    p.add_argument("--known", type=int, default=1, metavar="N",
                   help="attributes the adversary knows exactly (default 1)")
    p.add_argument("--targets", type=int, default=10_000, metavar="N",
                   help="victims in the attack simulation (default 10000)")
    p.add_argument("--prior", choices=("marginal", "conditional"), default="marginal",
                   help="the adversary's prior (conditional: needs --original, in memory)")
    p.add_argument("--classes", type=int, default=200, metavar="N",
                   help="equivalence classes measured exactly (default 200)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="seed of the sampled checks and victims (not of the publication)")
    p.add_argument("--chunk-rows", type=int, default=None, metavar="N",
                   help=f"read the published file (and --original) in chunks of N rows, in "
                   f"bounded memory; 0: whole table in memory (default: chunks of 262144 "
                   f"above {AUTO_CHUNK_ABOVE:,} rows)")
    p.add_argument("-o", "--output", metavar="OUT.csv", help="write the report as CSV")
    p.add_argument("--plot", metavar="OUT.png", help="attack confidence plot (needs --attack)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None)
    p.set_defaults(func=cmd_audit)


def _run(args, fmt):
    """The report, in memory or chunk by chunk."""
    from .. import cli
    from ..audit import audit, audit_file
    from ..io.stream import DEFAULT_CHUNK_ROWS, read_metadata
    chunk = args.chunk_rows
    if chunk is None:
        chunk = DEFAULT_CHUNK_ROWS if read_metadata(args.input, fmt)["n_rows"] > \
            AUTO_CHUNK_ABOVE else 0
    common = dict(attack=args.attack, known=args.known, n_targets=args.targets,
                  prior=args.prior, n_classes=args.classes, seed=args.seed,
                  missing=args.missing, aligned=args.aligned)
    if chunk > 0:
        ofmt = cli._format_of(args.original, None, "--original") if args.original else None
        return audit_file(args.input, args.original, chunk_rows=chunk, format=fmt,
                          original_format=ofmt, **common)
    table = cli._read_settable(args.input, fmt)
    original = None
    if args.original:
        original = cli._read_table(args.original, cli._format_of(args.original, None, "--original"))
    return audit(table, original, **common)


def cmd_audit(args) -> int:
    from .. import cli
    from ..io.atomic import atomic_path
    from ..validate import InputError
    if args.plot and not args.attack:
        raise cli.UsageError("--plot needs --attack")
    if args.known < 0:
        raise cli.UsageError(f"--known must be >= 0, got {args.known}")
    if args.chunk_rows is not None and args.chunk_rows < 0:
        raise cli.UsageError(f"--chunk-rows must be >= 0, got {args.chunk_rows}")
    if args.original and Path(args.original).is_dir():
        raise cli.UsageError(f"--original {args.original!r} is a directory, not a file")
    fmt = cli._format_of(args.input, args.input_format, "--input-format")
    if not Path(args.input).exists():
        raise cli.UsageError(f"input file {str(args.input)!r} does not exist")
    if args.original and not Path(args.original).exists():
        raise cli.UsageError(f"--original {args.original!r} does not exist")
    try:
        report = _run(args, fmt)
    except InputError as e:
        raise cli.UsageError(e.render(_flag)) from None
    print(report.to_text())
    protect = [args.input] + ([args.original] if args.original else [])
    if args.output:
        cli._check_not_input(args.output, protect)
        with atomic_path(args.output, protect=protect) as tmp:
            report.to_frame().to_csv(tmp, index=False)
    if args.plot:
        cli._check_not_input(args.plot, protect)
        with atomic_path(args.plot, protect=protect) as tmp:
            report.plot(str(tmp) + ".png")
            import os
            os.replace(str(tmp) + ".png", tmp)
    sys.stdout.flush()
    return EXIT_OK if report.ok else EXIT_FAILED
