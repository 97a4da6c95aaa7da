"""``anonset semantic-anonymize`` and ``anonset semantic-analyze`` (paper 001).

    anonset semantic-anonymize IN.csv -o OUT.parquet --sensitive income --l 3 --d 2
        --qids age,sex [--identifier id] [--drop note] [--domain PATH.txt|v1,v2,...] [--values 0.5,1.5,...]
        [--hierarchy H.csv | --matrix M.csv] [--algorithm simple|duplicate]
        [--rows ROWS.csv] [--seed S | --key-file F] [--keep-order] [--threads N]
    anonset semantic-analyze OUT.parquet [-o TAB.csv|TAB.parquet] [--qids age,sex]
        [--estimator em|linear|existing|simple] [--selection auto|exact|montecarlo|paper]

Exit codes: 0 success, 2 usage or data error (one line on stderr).  Outputs
are written atomically and never overwrite the input.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..validate import InputError
from . import args as A

__all__ = ["register", "cmd_anonymize", "cmd_analyze"]


def _split(s):
    return A.split_commas(s) if s else None


def _read_domain(given):
    """--domain: a file with one value per line, or the values inline
    (comma-separated), as anonymize and msa-anonymize read it."""
    from .config import read_domain_file
    if not given:
        return None
    try:
        return read_domain_file(given, inline="a,b,c")
    except ValueError as e:
        raise A.UsageError(f"--domain: {e}") from None


def _domain_values(frame: pd.DataFrame, col: str, given):
    """Declared domain values converted to the column's type."""
    if given is None:
        return None
    from ..engine.request import as_bools
    if pd.api.types.is_bool_dtype(frame[col].dtype):
        return as_bools(given, frame[col].dtype)       # 'False,True' (H39)
    for test, kind, words in ((pd.api.types.is_integer_dtype, int, "integers"),
                              (pd.api.types.is_float_dtype, float, "numbers")):
        if test(frame[col]):
            out = []
            for v in given:
                try:
                    out.append(kind(v))
                except ValueError:
                    raise A.UsageError(f"--domain: column {col!r} holds {words}, and the domain "
                                       f"lists {v!r}; expected {words} (a missing cell of a "
                                       "column of numbers cannot be a category: impute it, or "
                                       "--missing drop)") from None
            return out
    return given


def _read_matrix(path) -> np.ndarray:
    """A CSV of numbers, rows and columns counted from 1 in its errors."""
    rows = []
    from ..io.tables import read_text_file
    lines = read_text_file(path, "matrix file").splitlines(keepends=True)
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        cells = line.rstrip("\r\n").split(",")
        row = []
        for j, c in enumerate(cells, 1):
            try:
                row.append(float(c))
            except ValueError:
                raise ValueError(f"row {i}, column {j} holds {c.strip()[:40]!r}, which is no "
                                 "number (the matrix has no header line)") from None
        if rows and len(row) != len(rows[0]):
            raise ValueError(f"row {i} has {len(row)} values, row 1 {len(rows[0])}")
        rows.append(row)
    if not rows:
        raise ValueError("holds no rows")
    return np.array(rows, dtype=np.float64)


def cmd_anonymize(args) -> int:
    from ..hierarchy import hierarchy_of
    from ..io.tables import check_input_file, file_format, read_typed
    from ..randomized import semantic as S
    src = check_input_file(args.input)
    out = Path(args.output)
    out_fmt = file_format(out, args.format, output=True)
    A.check_suffix(args.rows, "--rows", (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".parquet"),
                   "CSV or Parquet (by its name)")
    rows_fmt = file_format(args.rows, None, output=True) if args.rows else None
    A.check_outputs_apart({"-o": out, "--rows": args.rows, **A.companions(out, out_fmt)}, args)
    A.check_missing_token(args)
    key = A.key_options(args)
    # one column, written as every list writes a name: a comma in it as \,
    # (H66), a space at either end as '\ ', a backslash as \\ (H79)
    args.sensitive = A.one_name(args.sensitive)
    frame = read_typed(src, A.format_of(src, args.input_format, "--input-format"),
                       text_columns=A.names(args.identifier),
                       numbers=([] if args.domain or args.hierarchy else [args.sensitive])
                       + list(_split(args.qids) or ()))
    if args.sensitive not in frame.columns:
        raise A.UsageError(f"--sensitive: column {args.sensitive!r} is not in {src.name}")
    domain = _domain_values(frame, args.sensitive, _read_domain(args.domain))
    distance = hierarchy = None
    if args.hierarchy:
        hierarchy = hierarchy_of(args.sensitive, A.hierarchy_file(args.sensitive, args.hierarchy))
    elif args.matrix:
        if domain is None:
            raise A.UsageError("--matrix needs --domain (the values in matrix order)")
        if not Path(args.matrix).is_file():
            raise A.UsageError(f"{args.matrix!r}: --matrix: does not exist; expected a CSV of "
                               "distances in --domain order")
        try:
            m = _read_matrix(args.matrix)
            distance = S.SemanticDistance.from_matrix(m)
        except InputError as e:
            raise InputError(e.what, param="matrix", file=args.matrix,
                             expected="a CSV of distances (square, non-negative, symmetric, "
                                      "zero on the diagonal) in --domain order") from None
        except (OSError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise A.UsageError(f"{args.matrix!r}: --matrix: {why}; expected a CSV of distances "
                               "(square, non-negative, symmetric, zero on the diagonal) in "
                               "--domain order") from None
        if m.shape[0] != len(domain):
            raise A.UsageError(f"{args.matrix!r}: --matrix: is {m.shape[0]} x {m.shape[1]}; "
                               f"expected {len(domain)} x {len(domain)}, one row and column per "
                               "--domain value")
    values = args.values
    if values and values.strip() not in ("domain", "positions"):
        try:
            values = [float(v) for v in _split(values)]
        except ValueError:
            raise A.UsageError(f"--values: expected 'domain', 'positions' or numbers "
                               f"separated by commas, got {args.values!r}") from None
    elif values:
        values = values.strip()
    if key["key_file"] is not None:
        from ..io.keys import read_key_file
        key["seed"] = read_key_file(key.pop("key_file"), param="key_file")
    else:
        key.pop("key_file")
    with A.naming_input(src):
        table = S.semantic_publish(frame, args.sensitive, args.l, args.d,
                                   qids=_split(args.qids) or (),
                                   identifiers=A.names(args.identifier),
                                   drop=A.names(args.drop), distance=distance, domain=domain,
                                   values=values, hierarchy=hierarchy,
                                   algorithm=args.algorithm,
                                   keep_order=bool(args.keep_order), rng=args.rng,
                                   n_threads=args.threads, missing=args.missing,
                                   missing_token=args.missing_token,
                                   allow_recode=A.names(args.allow_recode),
                                   allow_rare=A.names(args.allow_rare),
                                   allow_shared_id=A.names(args.allow_shared_id),
                                   allow_clear=A.names(args.allow_clear), **key)
    # the Table 7 rows are built before anything is written
    rows = S.semantic_rows(table, rng=args.rng) if args.rows else None
    from ..io.atomic import Outputs
    from ..io.published import write_settable
    reads = A.read_files(args)
    # the release and its rows: one unit (both moved into place, or neither)
    with Outputs(protect=reads) as outs:
        write_settable(table, out, out_fmt, protect=reads, outputs=outs)
        if rows is not None:
            A.write_frame(rows, args.rows, rows_fmt, protect=reads, outputs=outs)
    extra = f" and {out}.anonset.json" if out_fmt == "csv" else ""
    A.note(args, f"published {table.n_rows:,} records under (l={args.l}, d={args.d:g})-semantic "
                 f"diversity ({args.algorithm}) -> {out}{extra}")
    if not getattr(args, "quiet", False):
        A.print_roles_and_key(table.info, series="semantic-anonymize has no persistent key: "
                              "publish these records once")
    A.warn_allowed_clear(table.info)
    A.warn_allowed_recodes(table.info)
    A.warn_allowed_rare(table.info)
    A.warn_allowed_shared_ids(table.info)
    if table.params[args.sensitive].says_nothing:       # l = the domain's size
        import logging
        logging.getLogger("anonset").warning(
            "every published set of %s is the whole domain (l = d): the column carries no "
            "information (semantic-analyze refuses it)", args.sensitive)
    return A.EXIT_OK


def cmd_analyze(args) -> int:
    from ..randomized import semantic as S
    from ..io.tables import check_input_file
    from ..io.tables import file_format
    src = check_input_file(args.input)
    out = Path(args.output) if args.output else None
    out_fmt = file_format(out, args.format, output=True) if out is not None else None
    if out is not None:     # an input, or a release's table, refused before the work
        A.check_not_input(out, [src, Path(str(src) + ".anonset.json")], flag="-o")
    # by the name's format, as every reader: a .csv.gz was read as Parquet
    table = A.read_settable(src, A.format_of(src, args.input_format, "--input-format"))
    if (table.model or {}).get("name") != "semantic":
        raise InputError("was not published under (l, d)-semantic diversity", file=src,
                         expected="a table written by anonset semantic-anonymize (`anonset "
                                  "reconstruct` reads the tables of anonset anonymize)")
    with A.naming_input(src):
        if args.estimator != "em" and (args.max_iter != 20000 or args.tol != 1e-4):
            raise InputError("and --tol apply to the EM only", param="max_iter",
                             expected="--estimator em with them, or neither")
        # --qids '' is no QID (the sensitive column's marginal), as the API's
        # qids=[]; it gave every QID (H116)
        qids = None if args.qids is None else A.split_commas(args.qids)
        ct = S.analyze(table, qids, estimator=args.estimator,
                       method=args.selection, n_threads=args.threads,
                       max_iter=args.max_iter, tol=args.tol)
    frame = ct.to_frame() if hasattr(ct, "to_frame") else ct.to_pandas().reset_index()
    if out is None:
        # as `anonset reconstruct` prints it: two decimals on a terminal
        A.note(args, f"estimated {'x'.join(map(str, ct.shape))} cross-tabulation "
                     f"({args.estimator}) from {table.n_rows:,} records{_em_words(ct)}")
        print(frame.to_string(index=False, formatters={frame.columns[-1]: lambda v: f"{v:,.2f}"}))
        return A.EXIT_OK
    # the name says the format: CSV text under a .parquet name was a trap
    A.write_frame(frame, out, out_fmt, protect=(src, Path(str(src) + ".anonset.json")))
    A.note(args, f"estimated {'x'.join(map(str, ct.shape))} cross-tabulation "
                 f"({args.estimator}){_em_words(ct)} -> {out}")
    return A.EXIT_OK


def _em_words(ct) -> str:
    """How the EM stopped, for the summary line ('' for the other estimators;
    an unconverged run is warned of too, on stderr)."""
    info = ct.info
    if "iterations" not in info:
        return ""
    how = (f"converged: no cell moved by more than {float(info['tol']):g} records"
           if info.get("converged") else f"NOT converged: stopped by --max-iter "
                                         f"{info.get('max_iter')}")
    return f", {info['iterations']} EM updates ({how})"


def register(sub) -> None:
    """Add the paper-001 subcommands to an argparse subparsers object."""
    p = sub.add_parser("semantic-anonymize",
                       help="publish a table under (l, d)-semantic diversity (paper 001)")
    p.add_argument("input", metavar="IN", help="CSV or Parquet table")
    p.add_argument("-o", "--output", required=True,
                   help="published table (.parquet, or .csv with a .anonset.json beside it)")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from OUT's extension)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from IN's extension)")
    p.add_argument("--sensitive", required=True, help="the sensitive column")
    p.add_argument("--l", type=A.positive_int, required=True, help="set size l")
    p.add_argument("--d", type=A.nonneg_float, required=True, help="minimum semantic distance d")
    p.add_argument("--qids", help="QID columns published exactly")
    p.add_argument("--identifier", action="append", metavar="A,B", help="identifiers: not published")
    p.add_argument("--drop", action="append", metavar="A,B", help="columns dropped")
    p.add_argument("--allow-recode", action="append", metavar="A,B",
                   help="QIDs you accept to publish although they recode the sensitive column "
                        "(lambda >= 0.9: published exactly, they publish it nearly in the "
                        "clear); refused otherwise")
    p.add_argument("--allow-rare", action="append", metavar="COL",
                   help="the sensitive column, to accept a domain read off the data although "
                        "some values are so rare that they are expected in fewer than l sets "
                        "(counting them points at their holders); refused otherwise (declare "
                        "--domain instead)")
    p.add_argument("--allow-clear", action="append", metavar="COL",
                   help="the sensitive column, to accept publishing it in the clear (--l 1: "
                        "every set is the true value) or nearly (its sets give its value away "
                        "for at least 1%% of the rows, docs/security.md); refused otherwise")
    A.add_allow_shared_id(p)
    from .option_file import add_config
    add_config(p)
    p.add_argument("--domain", metavar="PATH.txt|A,B,...",
                   help="declared ordered domain of the sensitive column: a file with one "
                        "value per line, or the values inline, comma-separated")
    p.add_argument("--values", metavar="domain|positions|V1,V2,...",
                   help="what the ordered distance measures: 'domain' |v_i - v_j| over the "
                        "numeric values themselves, 'positions' |i - j| in the ordered domain "
                        "(paper 001), or representative values in domain order (needed for "
                        "numbers that are not consecutive integers)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--hierarchy", help="ARX hierarchy CSV: tree distance (LCA height)")
    g.add_argument("--matrix", help="CSV distance matrix in --domain order")
    p.add_argument("--algorithm", choices=("simple", "duplicate"), default="simple",
                   help="simple: Alg. 1, each dummy drawn among the values at distance >= d "
                        "(default); duplicate: Alg. 3, for ordered, equally spaced values")
    p.add_argument("--rows", metavar="ROWS.csv|ROWS.parquet",
                   help="also write the shuffled N x l rows (Table 7) to this file")
    A.add_missing(p)
    A.add_key_options(p)
    p.add_argument("--keep-order", action="store_true",
                   help="keep the input row order (default: a keyed random order)")
    p.add_argument("--rng", choices=("chacha20", "philox"), default="chacha20",
                   help="generator (default chacha20, cryptographically strong)")
    p.add_argument("--threads", type=A.positive_int, default=None, metavar="N",
                   help="kernel threads (default: OpenMP's default); results do not depend on it")
    p.set_defaults(func=cmd_anonymize)

    p = sub.add_parser("semantic-analyze",
                       help="estimate QIDs x sensitive counts from a semantic-diversity table")
    p.add_argument("input", metavar="IN", help="table written by semantic-anonymize")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="cross-tabulation, long form: QID columns, the sensitive column and "
                        "count (.csv or .parquet); default: print it")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from OUT's extension)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from IN's extension)")
    p.add_argument("--qids", help="QIDs to cross with the sensitive value (default: all; "
                                  "'' for none: the sensitive value's marginal)")
    p.add_argument("--estimator", choices=("em", "linear", "existing", "simple"), default="em",
                   help="em: non-negative EM with the sampler's selection probabilities "
                        "(default); linear: Alg. 2 (eq. 1-3, can go negative); existing: "
                        "paper 000's estimator (eq. 21-22); simple: eq. 20")
    p.add_argument("--max-iter", type=A.positive_int, default=20000, metavar="N",
                   help="EM updates at most (default 20000, a safety cap); a run stopped "
                        "by it is NOT converged, and says so")
    p.add_argument("--tol", type=A.nonneg_float, default=1e-4, metavar="X",
                   help="the EM stops when no cell moves by more than X records in an update "
                        "(default 1e-4)")
    p.add_argument("--selection", choices=("auto", "exact", "montecarlo", "paper"), default="auto",
                   help="how the selection probabilities are obtained (default: exact if feasible)")
    p.add_argument("--threads", type=A.positive_int, default=None, metavar="N",
                   help="kernel threads (default: OpenMP's default); results do not depend on it")
    p.set_defaults(func=cmd_analyze)
