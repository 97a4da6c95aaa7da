"""``anonset audit``: verify a published table against its declared model
(paper 000's guarantees), optionally with the original data and an attack
simulation.  Registered by :mod:`anonset.cli`."""
from __future__ import annotations

import sys

EXIT_OK, EXIT_FAILED = 0, 1


def register(sub) -> None:
    p = sub.add_parser("audit", help="verify a published table against its privacy model",
                       description="Check a published SetTable: set sizes, parameters against "
                       "the declared model, (l)-diversity / (k)-anonymity from set sizes, "
                       "closeness bounds; with --original also the inclusion rate, exact "
                       "equivalence classes and closeness with the true distribution; with "
                       "--attack a Bayesian adversary who knows some attributes exactly.  "
                       "Exit code 1 when a check fails.")
    p.add_argument("input", metavar="PUBLISHED", help="published table (.parquet, or .csv with "
                   "its .anonset.json)")
    p.add_argument("--original", metavar="ORIG", help="the original table (data holder side)")
    p.add_argument("--attack", action="store_true", help="run the attack simulation")
    p.add_argument("--known", type=int, default=1, metavar="N",
                   help="attributes the adversary knows exactly (default 1)")
    p.add_argument("--targets", type=int, default=10_000, metavar="N",
                   help="victims in the attack simulation (default 10000)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="seed of the sampled checks and victims")
    p.add_argument("-o", "--output", metavar="OUT.csv", help="write the report as CSV")
    p.add_argument("--plot", metavar="OUT.png", help="attack confidence plot (needs --attack)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None)
    p.set_defaults(func=cmd_audit)


def cmd_audit(args) -> int:
    from .. import cli
    from ..io.atomic import atomic_path
    from ..audit import audit
    if args.plot and not args.attack:
        raise cli.UsageError("--plot needs --attack")
    if args.known < 0:
        raise cli.UsageError(f"--known must be >= 0, got {args.known}")
    fmt = cli._format_of(args.input, args.input_format, "--input-format")
    table = cli._read_settable(args.input, fmt)
    original = None
    if args.original:
        original = cli._read_table(args.original, cli._format_of(args.original, None, "--original"))
    report = audit(table, original, attack=args.attack, known=args.known,
                   n_targets=args.targets, seed=args.seed)
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
