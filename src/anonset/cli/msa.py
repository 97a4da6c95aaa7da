"""``anonset msa-anonymize``: k-anonymity and t-closeness for several
sensitive attributes (paper 003).

    anonset msa-anonymize IN -o OUT --k 5 --t 0.2 --qi A,B,C --sa S1,S2 \\
        [--identifier X] [--other Y] [--drop Z] \\
        [--algorithm pca|cluster|microagg] [--hierarchy COL=PATH.csv ...] \\
        [--numeric COL,...] [--ground S1=ordered ...] \\
        [--seed S | --seed-env VAR | --key-file F] [--research-seed] \\
        [--keep-order] [--allow-homogeneous S1,...] [--threads N] \\
        [--format csv|parquet] [--report PATH.json]

Every input column needs a role: ``--qi``, ``--sa``, ``--identifier``,
``--other`` (passed through; ``--keep`` is the same) or ``--drop``.  OUT
(.csv or .parquet) gets the generalized table: ``ec`` (equivalence class),
the QIs generalized (``[lo, hi]`` for numeric ones, hierarchy nodes for
categorical ones), the sensitive attributes unchanged and the ``--other``
columns; rows grouped by class, class labels and the order within a class
random (``--keep-order``: input order).  One summary line goes to stdout.
Exit codes: 0 ok, 2 a usage or data error (one line on stderr), 130
interrupted.  Outputs are written atomically and the input is never
overwritten.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .args import EXIT_OK, hierarchy_file, naming_input, note, kv as _kv, names as _names, positive_int as _k
from ._partition import (COMMON_FLAGS, add_io_arguments, add_key_arguments, add_role_arguments,
                         check_outputs, key_kwargs, key_line, read_input, risk_note,
                         role_kwargs)

__all__ = ["register"]

#: anonymize_msa()'s parameters and their flags (for error messages).
FLAGS = {"quasi_identifiers": "--qi", "sensitive": "--sa", "numeric": "--numeric",
         "ground": "--ground", "n_threads": "--threads", "k": "--k", "t": "--t",
         "domains": "--domain", "allow_homogeneous": "--allow-homogeneous",
         "allow_clear": "--allow-clear", "algorithm": "--algorithm"}


def _t(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return v


def register(sub) -> None:
    """Add ``msa-anonymize`` to the ``anonset`` subcommands."""
    p = sub.add_parser(
        "msa-anonymize",
        help="k-anonymity + t-closeness for several sensitive attributes (paper 003)",
        description=__doc__.split("\n\n")[0])
    add_io_arguments(p, "published table (.csv or .parquet)")
    p.add_argument("--k", type=_k, required=True, help="smallest class size")
    p.add_argument("--t", type=_t, required=True,
                   help="largest EMD of any sensitive attribute in any class (Def. 4)")
    p.add_argument("--algorithm", choices=("pca", "cluster", "microagg"), default="pca",
                   help="pca = Algorithm 2 (default, fastest), cluster = Algorithm 1 "
                        "(equi-sized FCM), microagg = t-closeness-first microaggregation")
    g = p.add_argument_group("columns (each input column needs a role)")
    g.add_argument("--qi", action="append", required=True, metavar="COLS",
                   help="quasi-identifier columns (comma-separated, repeatable)")
    g.add_argument("--sa", "--sensitive", action="append", required=True, metavar="COLS",
                   help="sensitive columns (comma-separated, repeatable)")
    add_role_arguments(g, other_aliases=("--keep",))
    g.add_argument("--hierarchy", action="append", metavar="COL=PATH",
                   help="ARX-format hierarchy (CSV, ';') of a categorical column")
    g.add_argument("--numeric", action="append", metavar="COLS",
                   help="columns treated as numeric (default: numeric columns without a "
                        "hierarchy)")
    g.add_argument("--domain", action="append", metavar="SA=PATH|SA=v1,v2,...",
                   help="the values of a text sensitive column in their order (a file with "
                        "one value per line, or inline): with --ground SA=ordered, t is "
                        "measured under that order (an answer scale), which text read off "
                        "the data cannot give")
    g.add_argument("--ground", action="append", metavar="SA=KIND",
                   help="ground distance of a sensitive column: ordered, equal or "
                        "hierarchical (default: ordered for numeric, hierarchical with a "
                        "hierarchy, else equal)")
    g.add_argument("--allow-homogeneous", action="append", metavar="SA,...",
                   help="sensitive columns for which a class may hold one value alone, as "
                        "the paper allows within t (its rows' value is then told); by "
                        "default such a class is merged with its nearest one")
    g.add_argument("--allow-clear", action="append", metavar="QI,...",
                   help="at --k 1 with every SA in --allow-homogeneous, the QIs a class of "
                        "one row shows exactly, which you accept; refused otherwise")
    g = p.add_argument_group("release")
    add_key_arguments(g)
    g.add_argument("--threads", type=_k, default=None, help="threads for the kernels")
    g.add_argument("--report", default=None, metavar="PATH.json",
                   help="also write the summary (sizes, t, IL, timings, key mode, row order, "
                        "pass-through columns) as JSON")
    p.set_defaults(func=_run, flag_names={**COMMON_FLAGS, **FLAGS})




def _merged_words(summary: dict) -> str:
    """What the default cost: the classes within t merged only for holding
    one value of a sensitive attribute alone."""
    n = summary.get("homogeneous_merged") or 0
    if not n:
        return ""
    return (f"; merged {n:,} class{'es' if n > 1 else ''} within t that held one value "
            "alone, which would tell their rows' value (--allow-homogeneous keeps them)")


def _run(args) -> int:
    from ..hierarchy import hierarchy_of
    from ..partition.msa import MSAProblem
    from ..partition.output import check_csv_name, format_of

    inp, out = Path(args.input), Path(args.output)
    fout = args.format or format_of(out)
    if args.format:
        from ..io.tables import check_named_format
        check_named_format(out, args.format)
    if fout == "csv":
        check_csv_name(out)
    check_outputs(args, {"-o": out, "--report": args.report}, fmt=fout)
    from .args import check_suffix
    check_suffix(args.report, "--report", (".json",), "JSON")
    qi, sa = _names(args.qi), _names(args.sa)
    hier = {}
    for col, path in _kv(args.hierarchy, "--hierarchy", commas=True).items():
        hier[col] = hierarchy_of(col, hierarchy_file(col, path))
    ground = _kv(args.ground, "--ground", commas=True)
    for col, g in ground.items():
        if g not in ("ordered", "equal", "hierarchical"):
            raise ValueError(f"--ground {col}: expected ordered, equal or hierarchical, got {g!r}")
    numeric = _names(args.numeric) or None
    from .config import read_domain_file
    domains = {}
    for col, v in _kv(args.domain, "--domain").items():
        try:
            domains[col] = read_domain_file(v)
        except ValueError as e:
            raise ValueError(f"--domain for {col!r}: {e}") from None
    roles = role_kwargs(args)
    declared = {**{c: h.leaves for c, h in hier.items()}, **domains}
    df = read_input(inp, args.input_format, roles["other"] + roles["identifiers"], declared,
                    numbers=qi + sa)
    with naming_input(inp):
        prob = MSAProblem(df, qi, sa, hierarchies=hier, numeric=numeric, ground=ground,
                          domains=domains,
                          n_threads=args.threads, **roles)
        res = prob.run(args.algorithm, args.k, args.t, **key_kwargs(args),
                       allow_homogeneous=_names(args.allow_homogeneous),
                       allow_clear=_names(args.allow_clear))
    from ..io.atomic import Outputs
    from .args import read_files
    reads = read_files(args)
    s = res.summary()
    # the release and its report: one unit (both moved into place, or neither)
    with Outputs(protect=reads) as outs:
        res.write(out, format=fout, protect=reads, outputs=outs)
        if args.report:
            outs.path(Path(args.report)).write_text(json.dumps(s, indent=2) + "\n")
    note(args, f"{args.algorithm}: {res.problem.n} records in {s['n_classes']} classes "
               f"(sizes {s['min_size']}..{s['max_size']}, mean {s['avg_size']:.1f}); "
               f"achieved k={s['k_achieved']} (asked {args.k}), t={s['t_achieved']:.4f} "
               f"(asked {args.t:g}), IL={s['il']:.4f}; wrote {out}{_merged_words(s)}"
               f"{risk_note(s, by_k=qi if args.k == 1 else ())}")
    note(args, key_line(s))
    return EXIT_OK
