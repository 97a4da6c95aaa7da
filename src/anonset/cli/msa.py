"""``anonset msa-anonymize``: k-anonymity and t-closeness for several
sensitive attributes (paper 003).

    anonset msa-anonymize IN -o OUT --k 5 --t 0.2 --qi A,B,C --sa S1,S2 \\
        [--algorithm pca|cluster|microagg] [--hierarchy COL=PATH.csv ...] \\
        [--numeric COL,...] [--ground S1=ordered ...] [--keep COL,...] \\
        [--seed N] [--threads N] [--format csv|parquet] [--report PATH.json]

OUT (.csv or .parquet) gets the generalized table: ``ec`` (equivalence class),
the QIs generalized (``[lo, hi]`` for numeric ones, hierarchy nodes for
categorical ones), the sensitive attributes unchanged and the ``--keep``
columns.  One summary line goes to stdout.  Exit codes: 0 ok, 2 a usage or
data error (one line on stderr), 130 interrupted.  Outputs are written
atomically and the input is never overwritten.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["register", "cmd_msa_anonymize"]

from . import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, _kv, _names
from . import _positive_int as _k


def _format(path, override, option) -> str:
    from . import _format_of
    return _format_of(path, override, option)


def _read(path: Path, fmt: str):
    """The CLI's reader (duplicate or empty column names are errors)."""
    from . import _read_table
    return _read_table(path, fmt)


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
    p.add_argument("input", help="input table (.csv or .parquet)")
    p.add_argument("-o", "--output", required=True, help="output table (.csv or .parquet)")
    p.add_argument("--k", type=_k, required=True, help="smallest class size")
    p.add_argument("--t", type=_t, required=True,
                   help="largest EMD of any sensitive attribute in any class (Def. 4)")
    p.add_argument("--algorithm", choices=("pca", "cluster", "microagg"), default="pca",
                   help="pca = Algorithm 2 (default, fastest), cluster = Algorithm 1 "
                        "(equi-sized FCM), microagg = t-closeness-first microaggregation")
    p.add_argument("--qi", action="append", required=True, metavar="COLS",
                   help="quasi-identifier columns (comma-separated, repeatable)")
    p.add_argument("--sa", action="append", required=True, metavar="COLS",
                   help="sensitive columns (comma-separated, repeatable)")
    p.add_argument("--hierarchy", action="append", metavar="COL=PATH",
                   help="ARX-format hierarchy (CSV, ';') of a categorical column")
    p.add_argument("--numeric", action="append", metavar="COLS",
                   help="columns treated as numeric (default: numeric columns without a "
                        "hierarchy)")
    p.add_argument("--ground", action="append", metavar="SA=KIND",
                   help="ground distance of a sensitive column: ordered, equal or "
                        "hierarchical (default: ordered for numeric, hierarchical with a "
                        "hierarchy, else equal)")
    p.add_argument("--keep", action="append", metavar="COLS",
                   help="other columns to publish unchanged (default: none)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the (not privacy-critical) clustering randomness")
    p.add_argument("--threads", type=_k, default=None, help="threads for the kernels")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from the output's extension)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None)
    p.add_argument("--report", default=None, metavar="PATH.json",
                   help="also write the summary (sizes, t, IL, timings) as JSON")
    p.set_defaults(func=cmd_msa_anonymize)


def cmd_msa_anonymize(args) -> int:
    where = "anonset msa-anonymize"
    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"\n{where}: interrupted; no output is left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, KeyError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"{where}: error: {' '.join(str(msg).split())}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        name = f" {e.filename!r}" if getattr(e, "filename", None) else ""
        print(f"{where}: error:{name} {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE


def _run(args) -> int:
    from ..io.atomic import atomic_path, same_file
    from ..hierarchy import Hierarchy
    from ..partition.msa import MSAProblem

    inp, out = Path(args.input), Path(args.output)
    fin = _format(inp, args.input_format, "--input-format")
    fout = _format(out, args.format, "--format")
    if same_file(out, inp):
        raise ValueError(f"output {str(out)!r} is the input file; choose another name "
                         "(the input is never overwritten)")
    if args.report and same_file(Path(args.report), inp):
        raise ValueError(f"--report {args.report!r} is the input file")
    if str(out.parent) and not out.parent.exists():
        raise ValueError(f"output directory {str(out.parent)!r} does not exist")
    qi, sa, keep = _names(args.qi), _names(args.sa), _names(args.keep)
    hier = {}
    for col, path in _kv(args.hierarchy, "--hierarchy", commas=True).items():
        hp = Path(path)
        if not hp.is_file():
            raise ValueError(f"--hierarchy {col}: file {path!r} does not exist")
        hier[col] = Hierarchy.from_csv(hp)
    ground = _kv(args.ground, "--ground", commas=True)
    for col, g in ground.items():
        if g not in ("ordered", "equal", "hierarchical"):
            raise ValueError(f"--ground {col}: expected ordered, equal or hierarchical, got {g!r}")
    numeric = _names(args.numeric) or None
    df = _read(inp, fin)
    for c in keep:
        if c not in df.columns:
            raise ValueError(f"--keep: column {c!r} is not in the input")
    prob = MSAProblem(df, qi, sa, hierarchies=hier, numeric=numeric, ground=ground,
                      n_threads=args.threads)
    res = prob.run(args.algorithm, args.k, args.t, seed=args.seed)
    table = res.generalized(keep)
    with atomic_path(out, protect=(inp,)) as tmp:
        if fout == "parquet":
            table.to_parquet(tmp, index=False)
        else:
            comp = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}.get(out.suffix.lower())
            table.to_csv(tmp, index=False, compression=comp)
    s = res.summary()
    if args.report:
        with atomic_path(Path(args.report), protect=(inp, out)) as tmp:
            tmp.write_text(json.dumps(s, indent=2) + "\n")
    print(f"{args.algorithm}: {len(table)} records in {s['n_classes']} classes "
          f"(sizes {s['min_size']}..{s['max_size']}, mean {s['avg_size']:.1f}); "
          f"k={s['k_achieved']}, t={s['t_achieved']:.4f}, IL={s['il']:.4f}; wrote {out}")
    return EXIT_OK
