"""``anonset lgb``: local generalization and bucketization (paper 002).

    anonset lgb IN -o OUT --k 5 --l 5 --qi A,B --semi-sensitive C,D \\
        --sensitive E (--flags C=C_flag ... | --density 0.2) \\
        [--identifier X] [--other Y] [--drop Z] [--t C=0.2] [--method mdp|ncp] \\
        [--hierarchy COL=PATH.csv] [--id COL] [--keep-order]
        [--seed S | --seed-env VAR | --key-file F] [--research-seed]

Every input column needs a role: an attribute, a flag column (``--flags``),
``--id``, ``--identifier``, ``--other`` (passed through) or ``--drop``.  OUT
(.csv, .csv.gz, .csv.bz2, .csv.xz or .parquet) gets the table in the shape
of the paper's Fig. 2, rows in a random order with random IDs
(``--keep-order``: input order, IDs = input row numbers); the bucket tables
go beside it as ``<stem>.<attr>.idt.<ext>``
(ID, BID) and ``<stem>.<attr>.sat.<ext>`` (value, BID), compressed as OUT is
(``out.csv.gz``: ``out.<attr>.idt.csv.gz``).  Exit codes: 0 ok, 2
a usage or data error (one line on stderr), 130 interrupted.  Every output is
written atomically and the input is never overwritten.
"""
from __future__ import annotations

import argparse

from .args import EXIT_OK, hierarchy_file, naming_input, note, kv as _kv, names as _names, number as _number, positive_int as _positive_int
from ._partition import (COMMON_FLAGS, add_io_arguments, add_key_arguments, add_role_arguments,
                         check_outputs, key_kwargs, key_line, read_input,
                         risk_note, role_kwargs)

__all__ = ["register"]

#: lgb()'s parameters and their flags (for error messages).
FLAGS = {"qi": "--qi", "semi_sensitive": "--semi-sensitive", "sensitive": "--sensitive",
         "flags": "--flags", "id_column": "--id", "closeness": "--t", "suppress": "--suppress",
         "k": "--k", "l": "--l", "method": "--method", "mdp_split": "--mdp-split",
         "balance": "--balance", "allow_homogeneous": "--allow-homogeneous",
         "allow_clear": "--allow-clear", "density": "--density"}


def register(sub) -> None:
    """Add the ``lgb`` subcommand to an argparse subparsers object."""
    p = sub.add_parser(
        "lgb", help="local generalization and bucketization (paper 002)",
        description="Publish a table with personalized sensitivity flags: sensitive cells go "
        "into local buckets (l-diversity or t-closeness per attribute), QI cells are "
        "generalized into local equivalence groups of >= k rows (Li, He & Sun).")
    add_io_arguments(p, "published table (.csv or .parquet); bucket tables beside it")
    g = p.add_argument_group("columns (each input column needs a role)")
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
    g.add_argument("--id", metavar="COL",
                   help="a column published verbatim as the record ID (a pseudonym, never a "
                        "real identifier; default: random IDs 1..n)")
    add_role_arguments(g)
    g = p.add_argument_group("privacy")
    g.add_argument("--k", required=True, metavar="K", help="k-anonymity of the groups")
    g.add_argument("--l", metavar="L|COL=L,...", help="l-diversity of the buckets")
    g.add_argument("--t", metavar="COL=T,...", help="t-closeness instead, for these attributes")
    g.add_argument("--allow-clear", action="append", metavar="A,B",
                   help="attributes held to --l 1 that you accept to publish in the clear (a "
                        "bucket of one row tells its value), and under --k 1 the QI and "
                        "semi-sensitive ones (a group of one row shows its QI cells); refused "
                        "otherwise")
    g.add_argument("--allow-homogeneous", action="append", metavar="A,B",
                   help="--t attributes whose buckets may hold one value alone, as t allows "
                        "where the value is common (the bucket then tells its rows' value); "
                        "by default every bucket holds two values or more")
    g.add_argument("--method", choices=("mdp", "ncp"), default="mdp",
                   help="local generalization: mdp (Alg. 3, default) or ncp (Alg. 4)")
    g.add_argument("--mdp-split", choices=("below_max", "paper"), default=None,
                   help="with --method mdp: where a node's lower median is its largest value, "
                        "split below it (below_max, default) or not on that attribute (paper: "
                        "Alg. 3 as printed, which never splits on a majority value that sorts "
                        "last, e.g. 'Male' or 'White')")
    g.add_argument("--balance", action="store_true",
                   help="with --method ncp: Xu et al.'s balancing step (groups of k..2k-1 rows; "
                        "lower NCP) instead of Alg. 4 as printed")
    g.add_argument("--suppress", action="store_true",
                   help="publish the fewest sensitive values as '*' when an attribute is not "
                        "l-eligible (default: error); a '*' tells that the value is one held "
                        "too often (one dominant value: that value), and the summary and the "
                        "audit say so")
    add_key_arguments(g)
    p.set_defaults(func=_run, flag_names={**COMMON_FLAGS, **FLAGS})




def _int(text: str, option: str) -> int:
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"{option}: {e}") from None


def _run(args) -> int:
    from ..partition import lgb as L
    from ..partition.output import check_csv_name, format_of
    qi, semi, sens = _names(args.qi), _names(args.semi_sensitive), _names(args.sensitive)
    if not (qi or semi or sens):
        raise ValueError("name the attributes: --qi, --semi-sensitive, --sensitive")
    k = _int(args.k, "--k")
    tval = {c: _number(v, "--t", float) for c, v in _kv([args.t], "--t", commas=True).items()} \
        if args.t else {}
    if args.l is None:
        lval = None
    elif "=" in args.l:
        # one default for every attribute held to an l, exceptions by name
        # (--l 3,age=2), as anonymize reads it
        from .args import model_value
        lval = model_value(args.l, "--l", int)
        default = lval.pop(None, None)
        if default is not None:
            for c in semi + sens:
                if c not in tval:
                    lval.setdefault(c, default)
    else:
        lval = _int(args.l, "--l")
    out_fmt = args.format or format_of(args.output)
    if args.format:
        from ..io.tables import check_named_format
        check_named_format(args.output, args.format)
    if out_fmt == "csv":
        check_csv_name(args.output)
    check_outputs(args, {"-o": args.output}, fmt=out_fmt, buckets=semi + sens)
    flag_cols = _kv(args.flags, "--flags", commas=True)
    if flag_cols and args.density is not None:
        raise ValueError("give --flags or --density, not both")
    roles, key = role_kwargs(args), key_kwargs(args)
    text = ([args.id] if args.id else []) + roles["other"] + roles["identifiers"]
    hier = _kv(args.hierarchy, "--hierarchy", commas=True)
    from ..hierarchy import hierarchy_of
    declared = {c: hierarchy_of(c, hierarchy_file(c, path)).leaves for c, path in hier.items()}
    frame = read_input(args.input, args.input_format, text, declared, numbers=qi + semi + sens)
    if flag_cols:
        for a, c in flag_cols.items():
            if c not in frame.columns:
                raise ValueError(f"--flags: flag column {c!r} of {a!r} is not in the input")
        flags = dict(flag_cols)
    elif args.density is not None:
        # which cells are flagged shows in the release anyway: not key material
        with naming_input(args.input):
            flags = L.draw_flags(frame, semi, _number(args.density, "--density", float),
                                 seed=key["seed"])
    elif semi:
        raise ValueError("semi-sensitive attributes need --flags COL=FLAGCOL or --density X")
    else:
        flags = None
    with naming_input(args.input):
        res = L.lgb(frame, qi=qi, semi_sensitive=semi, sensitive=sens, flags=flags, k=k,
                    l=lval, closeness=tval, method=args.method, hierarchies=hier,
                    id_column=args.id, suppress=args.suppress, balance=args.balance,
                    mdp_split=args.mdp_split,
                    allow_homogeneous=_names(args.allow_homogeneous),
                    allow_clear=_names(args.allow_clear), **roles, **key)
    from .args import read_files
    written = res.write(args.output, format=out_fmt, protect=read_files(args))
    s = res.summary()
    note(args, f"anonset lgb: {s['rows']} rows in {s['groups']} groups (k={k}, {args.method}), "
               f"C_DM={s['C_DM']}, NCP={s['NCP']:.1f}, promoted={s['promoted_cells']}, "
               f"suppressed={s['suppressed_cells']}; wrote {len(written)} files"
               f"{risk_note(s, res.metadata['model']['l'], _by_k(res))}"
               + ("".join(f"; removed {p.name}, of the release it replaced"
                          for p in getattr(res, "removed", ()))))
    note(args, key_line(s))
    return EXIT_OK


def _by_k(res) -> list:
    """The attributes whose QI cells k = 1 shows exactly (none at k >= 2)."""
    model = res.metadata["model"]
    return [a for a, r in model["attributes"].items() if r in ("qi", "semi_sensitive")] \
        if model["k"] == 1 else []
