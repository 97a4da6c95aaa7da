"""``anonset reproduce``: run a paper's experiment grid.

    anonset reproduce 000|001|002|003|004 [--quick] [--out DIR]

Writes CSV tables, PNG figures (matplotlib is needed: ``pip install
anonset[plot]``) and a results page README.md into DIR (default
``./anonset-reproduce-<paper>``), with a progress display on stderr (tqdm if
installed).  ``--quick`` runs a reduced grid in a few minutes on two cores;
without it the papers' sizes (long: see docs/reproduce.md).  Exit codes: 0
ok, 2 a usage error, 130 interrupted.
"""
from __future__ import annotations

__all__ = ["register", "cmd_reproduce"]


def register(sub) -> None:
    """Add the ``reproduce`` subcommand to an argparse subparsers object."""
    from ..reproduce import PAPERS
    p = sub.add_parser(
        "reproduce", help="reproduce a paper's experiments (figures, tables, results page)",
        description="Run the whole experiment grid of one of the five papers and write its "
        "figures, tables and a results page comparing each figure with the paper.")
    p.add_argument("paper", choices=PAPERS, help="which paper (000, 001, 002, 003, 004)")
    p.add_argument("--quick", action="store_true",
                   help="a reduced grid that finishes in a few minutes on two cores")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="output folder (default: ./anonset-reproduce-PAPER)")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args) -> int:
    from .args import EXIT_OK
    from ..reproduce import run
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("matplotlib is needed for the figures: pip install "
                          "'anonset[plot]'") from None
    scale = "quick" if args.quick else "full"
    cmd = f"anonset reproduce {args.paper}" + (" --quick" if args.quick else "") \
        + (f" --out {args.out}" if args.out else "")
    quiet = getattr(args, "quiet", False)
    res = run(args.paper, scale=scale, out=args.out,
              progress=not (args.no_progress or quiet), command=cmd)
    c = res["counts"]
    if not quiet:
        print(f"{res['page']}: {c['match']} match, {c['differs']} differ, "
              f"{c['not comparable']} not comparable, {c['not decided']} not decided "
              f"({res['seconds'] / 60:.1f} min)")
    return EXIT_OK
