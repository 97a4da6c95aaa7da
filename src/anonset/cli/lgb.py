"""``anonset lgb``: local generalization and bucketization (paper 002).

    anonset lgb IN -o OUT --k 5 --l 5 --qi A,B --semi-sensitive C,D \\
        --sensitive E (--flags C=C_flag ... | --density 0.2 --seed S) \\
        [--t C=0.2] [--method mdp|ncp] [--hierarchy COL=PATH.csv] [--id COL]

OUT (.csv or .parquet) gets the table in the shape of the paper's Fig. 2; the
bucket tables go beside it as ``<stem>.<attr>.idt.<ext>`` (ID, BID) and
``<stem>.<attr>.sat.<ext>`` (value, BID).  Exit codes: 0 ok, 2 a usage or data
error (one line on stderr), 130 interrupted.  Every output is written
atomically and the input is never overwritten.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["register", "cmd_lgb"]

from . import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, _kv, _names


def _int(text: str, option: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{option}: expected a positive integer, got {text!r}") from None
    if v < 1:
        raise ValueError(f"{option}: expected a positive integer, got {text!r}")
    return v


def _float(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{option}: expected a number, got {text!r}") from None


def _format(path, override, option="--input-format") -> str:
    from . import _format_of
    return _format_of(path, override, option)


def _read(path, fmt: str, text_columns=()):
    """The CLI's reader (duplicate or empty column names are errors, text
    columns stay exact)."""
    from . import _read_table
    return _read_table(path, fmt, text_columns)


def register(sub) -> None:
    """Add the ``lgb`` subcommand to an argparse subparsers object."""
    p = sub.add_parser(
        "lgb", help="local generalization and bucketization (paper 002)",
        description="Publish a table with personalized sensitivity flags: sensitive cells go "
        "into local buckets (l-diversity or t-closeness per attribute), QI cells are "
        "generalized into local equivalence groups of >= k rows (Li, He & Sun).")
    p.add_argument("input", metavar="IN", help="input table (.csv or .parquet)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="published table (.csv or .parquet); bucket tables beside it")
    g = p.add_argument_group("columns")
    g.add_argument("--qi", action="append", metavar="A,B", help="QI attributes")
    g.add_argument("--semi-sensitive", action="append", metavar="A,B",
                   help="semi-sensitive attributes (need --flags or --density)")
    g.add_argument("--sensitive", action="append", metavar="A,B", help="sensitive attributes")
    g.add_argument("--flags", action="append", metavar="COL=FLAGCOL",
                   help="flag column of a semi-sensitive attribute (yes/no, true/false, 1/0)")
    g.add_argument("--density", metavar="X",
                   help="instead of --flags: flag cells at random with probability X")
    g.add_argument("--hierarchy", action="append", metavar="COL=PATH.csv",
                   help="ARX-format generalization hierarchy (repeatable)")
    g.add_argument("--id", metavar="COL", help="record id column (default: 1..n)")
    g = p.add_argument_group("privacy")
    g.add_argument("--k", required=True, metavar="K", help="k-anonymity of the groups")
    g.add_argument("--l", metavar="L|COL=L,...", help="l-diversity of the buckets")
    g.add_argument("--t", metavar="COL=T,...", help="t-closeness instead, for these attributes")
    g.add_argument("--method", choices=("mdp", "ncp"), default="mdp",
                   help="local generalization: mdp (Alg. 3, default) or ncp (Alg. 4)")
    g.add_argument("--balance", action="store_true",
                   help="with --method ncp: Xu et al.'s balancing step (groups of k..2k-1 rows; "
                        "lower NCP) instead of Alg. 4 as printed")
    g.add_argument("--suppress", action="store_true",
                   help="publish the fewest sensitive values as '*' when an attribute is not "
                        "l-eligible (default: error)")
    g.add_argument("--seed", metavar="S", help="reproducible flags and value order; keep it "
                   "as secret as the data (default: fresh from the OS)")
    g.add_argument("--format", choices=("csv", "parquet"), help="output format")
    g.add_argument("--input-format", choices=("csv", "parquet"), help="input format")
    p.set_defaults(func=cmd_lgb)


def cmd_lgb(args) -> int:
    """Handler of ``anonset lgb``; returns the exit code."""
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("\nanonset lgb: interrupted; no output is left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, KeyError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"anonset lgb: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        name = f" {e.filename!r}" if getattr(e, "filename", None) else ""
        print(f"anonset lgb: error:{name} {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE


def _run(args) -> int:
    from ..partition import lgb as L
    from ..io.atomic import same_file
    qi, semi, sens = _names(args.qi), _names(args.semi_sensitive), _names(args.sensitive)
    if not (qi or semi or sens):
        raise ValueError("name the attributes: --qi, --semi-sensitive, --sensitive")
    k = _int(args.k, "--k")
    if args.l is None:
        lval = None
    elif "=" in args.l:
        lval = {c: _int(v, "--l") for c, v in _kv([args.l], "--l", commas=True).items()}
    else:
        lval = _int(args.l, "--l")
    tval = {c: _float(v, "--t") for c, v in _kv([args.t], "--t", commas=True).items()} \
        if args.t else {}
    seed = args.seed
    if seed is not None and seed.isdigit():
        seed = int(seed)
    in_fmt = _format(args.input, args.input_format)
    out_fmt = _format(args.output, args.format, "--format")
    if same_file(args.output, args.input):
        raise ValueError(f"output {args.output!r} is the input file; choose another name "
                         "(the input is never overwritten)")
    parent = Path(args.output).parent
    if str(parent) and not parent.exists():
        raise ValueError(f"output directory {str(parent)!r} does not exist")
    flag_cols = _kv(args.flags, "--flags", commas=True)
    if flag_cols and args.density is not None:
        raise ValueError("give --flags or --density, not both")
    text = [args.id] if args.id else []
    frame = _read(args.input, in_fmt, text)
    if flag_cols:
        for a, c in flag_cols.items():
            if c not in frame.columns:
                raise ValueError(f"--flags: flag column {c!r} of {a!r} is not in the input")
        flags = dict(flag_cols)
    elif args.density is not None:
        flags = L.draw_flags(frame, semi, _float(args.density, "--density"), seed=seed)
    elif semi:
        raise ValueError("semi-sensitive attributes need --flags COL=FLAGCOL or --density X")
    else:
        flags = None
    hier = _kv(args.hierarchy, "--hierarchy", commas=True)
    for c, path in hier.items():
        if not Path(path).exists():
            raise ValueError(f"--hierarchy: file {path!r} of {c!r} does not exist")
    res = L.lgb(frame, qi=qi, semi_sensitive=semi, sensitive=sens, flags=flags, k=k, l=lval,
                closeness=tval, method=args.method, hierarchies=hier, id_column=args.id,
                seed=seed, suppress=args.suppress, balance=args.balance)
    written = res.write(args.output, format=out_fmt, protect=(args.input,))
    s = res.summary()
    print(f"anonset lgb: {s['rows']} rows in {s['groups']} groups (k={k}, {args.method}), "
          f"C_DM={s['C_DM']}, NCP={s['NCP']:.1f}, promoted={s['promoted_cells']}, "
          f"suppressed={s['suppressed_cells']}; wrote {len(written)} files")
    return EXIT_OK


def main(argv=None) -> int:  # pragma: no cover - convenience for direct runs
    parser = argparse.ArgumentParser(prog="anonset")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)
