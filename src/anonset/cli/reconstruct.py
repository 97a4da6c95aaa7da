"""``anonset reconstruct PUBLISHED --attributes A,B``: estimate the
cross-tabulation of published attributes (paper 000, Sec. V-D), reading only
those columns, block by block (:func:`anonset.stream.reconstruct_file`), and
optionally compare it with the true counts of the original file."""
from __future__ import annotations

import time
from pathlib import Path

from . import args as A
from .progress import LONG_ROWS, Progress, progress_enabled

__all__ = ["register", "run", "METHODS"]

METHODS = ("em", "exact_em", "value_adding", "random")


def register(sub) -> None:
    p = sub.add_parser("reconstruct", help="cross-tabulate a published table",
                       description="Estimate the counts of every combination of the chosen "
                       "published attributes (paper 000, Sec. V-D).")
    p.add_argument("input", metavar="IN",
                   help="published table (.csv with its .anonset.json, or .parquet)")
    p.add_argument("--attributes", action="append", required=True, metavar="A,B",
                   help="attributes to cross-tabulate")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="cross-tabulation, long form: attribute columns + count (.csv or "
                        ".parquet); default: print it")
    p.add_argument("--method", choices=METHODS, default="em",
                   help="em (eq. 26, default), exact_em, value_adding (eq. 18), random")
    p.add_argument("--max-iter", type=A.positive_int, default=20000, metavar="N",
                   help="EM iterations at most, a safety cap (default 20000; the EM stops "
                        "when the log-likelihood no longer gains: docs/algorithms.md)")
    p.add_argument("--tol", type=A.nonneg_float, default=1e-6, metavar="X",
                   help="EM also stops when no cell changes by more than X records in an "
                        "update (default 1e-6; 0: only the log-likelihood rule)")
    p.add_argument("--tol-ll", type=A.nonneg_float, default=None, metavar="X",
                   help="EM stops when the log-likelihood gains at most X per update and per "
                        "counted cell (em) or record (exact_em); default: the method's (1e-14 "
                        "em, 1e-10 exact_em); a smaller X shows how far the maximum lies")
    p.add_argument("--seed", default=None, metavar="N", help="seed of the random baseline")
    p.add_argument("--se", type=A.whole_int, default=None, metavar="B",
                   help="add each cell's standard error (column se) by a parametric "
                        "bootstrap of B replicates, 2 to 10000 (costs B reconstructions; "
                        "docs/algorithms.md, \"Standard errors\")")
    p.add_argument("--original", metavar="ORIG", help="the original table: print the error "
                   "of the estimate against its true counts")
    p.add_argument("--plot", metavar="OUT.png", help="bar chart of true vs reconstructed counts "
                   "(needs --original and matplotlib)")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from OUT's extension)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from IN's extension)")
    p.add_argument("--chunk-rows", type=A.positive_int, default=None, metavar="N",
                   help="rows per block (memory is bounded by it; the estimate does not depend "
                        "on it)")
    A.add_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import anonset
    from ..io.published import check_metadata, read_metadata
    from ..io.stream import DEFAULT_CHUNK_ROWS, reconstruct_file, true_crosstab_file
    from ..io.tables import check_input_file, file_format

    src = check_input_file(args.input)
    fmt = file_format(src, args.input_format, param="input_format")
    attributes = A.names(args.attributes)
    if not attributes:
        raise A.UsageError("--attributes: name at least one published attribute")
    if args.plot and not args.original:
        raise A.UsageError("--plot needs --original (the chart compares with the true counts)")
    if args.plot:
        from ..audit.plot import require_matplotlib
        require_matplotlib()
        A.check_suffix(args.plot, "--plot", (".png",), "a PNG image")
    out = Path(args.output) if args.output else None
    out_fmt = file_format(out, args.format, output=True) if out is not None else None
    inputs = [src, Path(str(src) + ".anonset.json")] + \
        ([Path(args.original)] if args.original else [])
    if args.plot:       # a folder that does not exist, before the work (H119)
        A.check_not_input(args.plot, inputs, flag="--plot")
    if out is not None:     # and a release's table, whose metadata file it would leave
        A.check_not_input(out, inputs, flag="-o")
    header = check_metadata(read_metadata(src, fmt), src)
    from ..validate import check_attributes
    check_attributes(header, attributes)        # in the words of every path (H88)
    chunk = args.chunk_rows or DEFAULT_CHUNK_ROWS
    long_work = header.n_rows * len(attributes) >= LONG_ROWS
    t0 = time.perf_counter()
    with Progress(header.n_rows, f"reconstruct {src.name}: counting",
                  progress_enabled(args.progress, long_work, getattr(args, "quiet", False))) \
            as prog:
        est = reconstruct_file(src, attributes, args.method, chunk_rows=chunk,
                               max_iter=args.max_iter, tol=args.tol, tol_ll=args.tol_ll,
                               n_threads=args.threads,
                               seed=A.seed_arg(args.seed), format=fmt, progress=prog,
                               standard_errors=args.se)
        elapsed = time.perf_counter() - t0
        truth = None
        if args.original:
            prog.stage(f"reconstruct: true counts of {Path(args.original).name}", header.n_rows)
            truth = true_crosstab_file(args.original, header.schema, attributes,
                                       chunk_rows=chunk, progress=prog)
            # another table's counts make no error to print (H18: 100 rows
            # of 7,425 gave L1/N = 73 with a warning); refused as the audit
            # and the report refuse it, before anything is written
            if round(truth.total) != header.n_rows:
                from ..validate import InputError
                raise InputError(f"the original has {int(round(truth.total)):,} rows, the "
                                 f"published table {header.n_rows:,}", param="original",
                                 file=args.original,
                                 expected="the original rows of this publication")
        if out is not None:
            A.write_frame(est.to_frame(), out, out_fmt, protect=inputs)
    dims = " x ".join(str(len(d)) for d in est.domains)
    A.note(args, f"reconstructed {' x '.join(attributes)} ({dims} cells) from "
                 f"{header.n_rows:,} records with {args.method} in {elapsed:.2f} s")
    summary = em_summary(est)
    if summary:
        A.note(args, f"{args.method}: {summary}")
    if "se" in est.info:
        A.note(args, f"standard errors: {se_summary(est.info['se'])}")
    noise = noise_warning(header, est)
    if noise:
        import warnings
        warnings.warn(noise, stacklevel=1)
    if out is not None:
        A.note(args, f"wrote {out}")
    else:
        # counts to two decimals on a terminal (a column that holds 3e-13
        # beside 447 was printed all in scientific notation); the file keeps
        # every digit
        frame = est.to_frame()
        numbers = frame.columns[len(est.attributes):]          # count (and se)
        print(frame.to_string(index=False, formatters={c: (lambda v: f"{v:,.2f}")
                                                       for c in numbers}))
    if truth is not None:
        m = anonset.metrics.compare(truth, est)
        A.print_table([[args.method] + [float(m[k]) for k in ("L1", "L1/N", "L2", "Hellinger")]],
                      ["method", "L1", "L1/N", "L2", "Hellinger"])
        if args.plot:
            from ..audit.plot import bar_chart
            bar_chart(truth, est, args.plot, protect=inputs + ([out] if out else []))
            A.note(args, f"wrote {args.plot}")
    return A.EXIT_OK


def se_summary(report) -> str:
    if report.get("method") == "exact":
        return "exact (the random baseline's counts are multinomial)"
    text = (f"parametric bootstrap of {report['replicates']} releases of the estimate "
            "(fresh keys, same method and stopping rule)")
    if report.get("not_converged"):
        text += f"; {report['not_converged']} stopped unconverged at --max-iter"
    return text


def noise_warning(header, est) -> str:
    """The warning that the counts are mostly noise, or "": where the noise
    of the randomization alone is expected to make an L1 error of at least
    NOISE_L1 per record in the moment estimator (closed form, no bootstrap:
    :func:`anonset.randomized.uncertainty.noise_l1`).  The figure is the
    unconstrained moment estimate's (it may exceed 2), never stated as the
    printed counts' error: those are kept >= 0 and sum to N."""
    from ..randomized.uncertainty import NOISE_L1, noise_l1
    if est.method == "random" or header.n_rows == 0:
        return ""
    params = [header.params[a] for a in est.attributes]
    l1 = noise_l1(params, est.counts, header.n_rows)
    if l1 < NOISE_L1:
        return ""
    se = ("the column se gives each cell's standard error" if est.se is not None
          else "--se B gives each cell's standard error")
    return (f"the counts of {' x '.join(est.attributes)} are mostly noise: the sets say "
            f"little about these {est.counts.size:,} cells (the randomization alone is "
            "expected to give the unconstrained moment estimate an L1 error of "
            f"{l1:.3g} times the {header.n_rows:,} records, L1/N); the counts printed, kept "
            ">= 0, err less where that limit binds, not because the sets say more "
            f"(docs/algorithms.md, \"Standard errors\"); {se}; fewer attributes or smaller "
            "domains give less noise")


def em_summary(ct) -> str:
    info = ct.info
    if "iterations" not in info:
        return ""
    stopped = info.get("stopped")
    change = f"last update moved a cell by at most {A.fmt(float(info['change']))} records"
    if stopped == "tol_ll":
        unit = "record" if "patterns" in info else "counted cell"
        why = (f"converged: the log-likelihood gained {float(info['gain']):.3g} per update "
               f"and {unit} (rule {float(info['tol_ll']):g})")
    elif stopped == "tol":
        why = f"converged: no cell moved by more than {float(info['tol']):g} records"
    else:
        why = (f"NOT converged: stopped by --max-iter {info.get('max_iter')} (an accelerated "
               "step takes 3 or 4 updates, so the last may stop up to 3 short of it)")
    return f"{info['iterations']} EM updates ({why}; {change})"