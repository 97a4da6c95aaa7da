"""The ``anonset`` command.

Subcommands::

    anonset demo          publish Adult under (5,...,5)-diversity, reconstruct, audit
    anonset anonymize     IN -o OUT: publish a CSV/Parquet table
    anonset reconstruct   IN --attributes a,b -o OUT: cross-tabulate a published table
    anonset info          build facts (also ``anonset --version``)

Exit codes: 0 success, 2 usage or data error (one line on stderr naming the
option or column, no traceback), 130 interrupted (SIGINT).  Outputs are
written atomically (a temporary file beside the target, renamed at the end),
so an error or an interrupt never leaves a half-written file, and an input
file is never overwritten.  See docs/cli.md.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import math
import os
import re
import sys
import time
import warnings
from pathlib import Path

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

METHODS = ("em", "exact_em", "value_adding", "random")
#: Modules that add subcommands with ``register(subparsers)``.
PLUGIN_MODULES = ("anonset.cli.semantic", "anonset.cli.lgb", "anonset.cli.msa",
                  "anonset.cli.audit", "anonset.cli.reproduce")
GROUNDS = ("auto", "equal", "ordered", "hierarchical")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip", ".csv.zst")
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
#: Work above this many input bytes gets a progress bar when stderr is a TTY.
LONG_INPUT_BYTES = 64 << 20
#: Reconstruction above this many records x attributes (exact EM: records) is "long".
LONG_RECONSTRUCT = 2_000_000


#: Library messages name keyword arguments; on the command line, name the flags.
_API_TO_FLAGS = (("pass clip_l=True", "pass --clip-l"),
                 ("pass missing='category'", "pass --missing category"),
                 ("missing='category' needs", "--missing category needs"))


class UsageError(ValueError):
    """A bad combination of options (exit code 2)."""


# ======================================================================
# progress
class Progress:
    """Stage progress on stderr: tqdm when installed, else one plain line.

    The library's kernels do not report progress from inside, so the bar
    advances per stage (read, publish, write, ...), which is what a user
    waiting on a large file needs to see.
    """

    def __init__(self, total: int, desc: str, enabled: bool):
        self.total, self.desc, self.enabled = total, desc, enabled
        self.done = 0
        self._bar = None
        self._t0 = time.perf_counter()
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False,
                                 unit="step", bar_format="{desc}: {bar} {n}/{total} {postfix} [{elapsed}]")

    @contextlib.contextmanager
    def stage(self, name: str):
        if self.enabled:
            if self._bar is not None:
                self._bar.set_postfix_str(name)
            else:
                sys.stderr.write(f"\r{self.desc}: [{self.done + 1}/{self.total}] {name} ...\033[K")
                sys.stderr.flush()
        yield
        self.done += 1
        if self._bar is not None:
            self._bar.update(1)

    def close(self):
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _progress_enabled(flag, long_work: bool) -> bool:
    if flag is not None:
        return bool(flag)
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and long_work


# ======================================================================
# parsing helpers
def _names(values) -> list:
    """Column names from repeated and/or comma-separated option values."""
    out = []
    for v in values or []:
        out.extend(s.strip() for s in v.split(",") if s.strip())
    return out


def _kv(values, option: str, *, commas: bool = False) -> dict:
    """``col=value`` pairs from repeated option values (with ``commas``, each
    value may also hold several comma-separated pairs)."""
    out = {}
    if commas:
        values = [item for v in values or [] for item in v.split(",") if item.strip()]
    for v in values or []:
        if "=" not in v:
            raise UsageError(f"{option}: expected COLUMN=VALUE, got {v!r}")
        col, val = v.split("=", 1)
        col, val = col.strip(), val.strip()
        if not col or not val:
            raise UsageError(f"{option}: expected COLUMN=VALUE, got {v!r}")
        if col in out:
            raise UsageError(f"{option}: column {col!r} is given twice")
        out[col] = val
    return out


def _number(text: str, option: str, kind):
    t = text.strip()
    if kind is float and t.lower() == "inf":
        return math.inf
    try:
        v = kind(t)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise UsageError(f"{option}: expected {what}, got {text!r}") from None
    if kind is float and math.isnan(v):
        raise UsageError(f"{option}: expected a number, got {text!r}")
    return v


def _model_value(text, option: str, kind):
    """``5`` -> 5; ``age=3,job=5`` -> {'age': 3, 'job': 5}."""
    if text is None:
        return None
    if "=" not in text:
        return _number(text, option, kind)
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise UsageError(f"{option}: expected one value or COLUMN=VALUE,..., got {text!r}")
        col, val = (s.strip() for s in part.split("=", 1))
        if not col:
            raise UsageError(f"{option}: empty column name in {text!r}")
        if col in out:
            raise UsageError(f"{option}: column {col!r} is given twice")
        out[col] = _number(val, f"{option} for {col!r}", kind)
    return out


def _ground_value(text):
    if text is None:
        return None
    if "=" not in text:
        if text not in GROUNDS:
            raise UsageError(f"--ground: expected one of {', '.join(GROUNDS)}, got {text!r}")
        return text
    out = {}
    for part in text.split(","):
        if "=" not in part:
            raise UsageError(f"--ground: expected NAME or COLUMN=NAME,..., got {text!r}")
        col, val = (s.strip() for s in part.split("=", 1))
        if val not in GROUNDS:
            raise UsageError(f"--ground for {col!r}: expected one of {', '.join(GROUNDS)}, "
                             f"got {val!r}")
        out[col] = val
    return out


def _seed(text):
    if text is None:
        return None
    if isinstance(text, int):
        return text
    return int(text) if re.fullmatch(r"\d+", text.strip()) else text


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return v


def _nonneg_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return v


# ======================================================================
# files
def _format_of(path, override, option: str) -> str:
    if override:
        return override
    name = str(path).lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    raise UsageError(f"cannot tell the format of {str(path)!r} from its extension; "
                     f"pass {option} csv or {option} parquet")


#: pandas' default missing-value markers (kept for every column but the text ones).
_NA_MARKERS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
               "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def _read_table(path, fmt: str, text_columns=()):
    """Read CSV or Parquet.  ``text_columns`` (pass-through and identifier
    columns) are read from CSV as text, exactly: a zip code '007' stays
    '007' and a literal 'NA' stays 'NA'."""
    import pandas as pd
    from ..schema import _check_columns
    p = Path(path)
    if not p.exists():
        raise UsageError(f"input file {str(p)!r} does not exist")
    if p.is_dir():
        raise UsageError(f"input {str(p)!r} is a directory, not a file")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            return pq.read_table(p).to_pandas()
        except (pa.ArrowException, OSError) as e:
            raise UsageError(f"{str(p)!r} is not a readable Parquet file: {e}") from None
    try:
        # pandas renames a repeated or empty header cell ('job.1', 'Unnamed: 2'),
        # which would publish a column nobody named: check the raw header line
        raw = pd.read_csv(p, header=None, nrows=1, dtype=str, keep_default_na=False)
        try:
            _check_columns([str(c) for c in raw.iloc[0]] if len(raw) else [])
        except ValueError as e:
            raise UsageError(f"{str(p)!r}: {e}") from None
        kw = {}
        if text_columns:
            header = list(pd.read_csv(p, nrows=0).columns)
            text = [c for c in header if c in set(text_columns)]
            if text:
                kw = {"dtype": {c: str for c in text}, "keep_default_na": False,
                      "na_values": {c: _NA_MARKERS for c in header if c not in text}}
        return pd.read_csv(p, low_memory=False, **kw)
    except pd.errors.EmptyDataError:
        raise UsageError(f"{str(p)!r} is empty (no header line)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError) as e:
        raise UsageError(f"{str(p)!r} is not a readable CSV file: {e}") from None


def _write_frame(frame, path, fmt: str, protect) -> None:
    """A DataFrame to CSV or Parquet, atomically."""
    from ..io.atomic import atomic_path
    with atomic_path(path, protect=protect) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            # the temporary name ends in .tmp: name the compression explicitly
            frame.to_csv(tmp, index=False, compression=_csv_compression(path))


def _csv_compression(path):
    name = str(path).lower()
    for suffix, comp in ((".gz", "gzip"), (".bz2", "bz2"), (".xz", "xz"), (".zip", "zip"),
                         (".zst", "zstd")):
        if name.endswith(suffix):
            return comp
    return None


def _check_not_input(out, inputs) -> None:
    from ..io.atomic import same_file
    for p in inputs:
        if p is not None and same_file(out, p):
            raise UsageError(f"output {str(out)!r} is an input file; choose another name "
                             "(inputs are never overwritten)")
    parent = Path(out).parent
    if str(parent) and not parent.exists():
        raise UsageError(f"output directory {str(parent)!r} does not exist")


def _read_settable(path, fmt):
    import anonset
    p = Path(path)
    if not p.exists():
        raise UsageError(f"input file {str(p)!r} does not exist")
    if fmt == "parquet":
        return anonset.read_parquet(p)
    if _csv_compression(p):
        raise UsageError(f"{str(p)!r}: a published CSV must be uncompressed (.csv)")
    return anonset.read_csv(p)


# ======================================================================
# output helpers
def _fmt(v, digits=4) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}" if abs(v) < 10 else f"{v:,.{max(1, digits - 3)}f}"
    return str(v)


def _table(rows, header, out=None) -> None:
    """Print a small left/right aligned text table."""
    out = out or sys.stdout
    cells = [[str(c) for c in header]] + [[c if isinstance(c, str) else _fmt(c) for c in r]
                                          for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for k, r in enumerate(cells):
        line = "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths)))
        print("  " + line.rstrip(), file=out)
        if k == 0:
            print("  " + "  ".join("-" * w for w in widths), file=out)


def _em_summary(ct) -> str:
    info = ct.info
    if "iterations" not in info:
        return ""
    state = "converged" if info.get("converged") else "stopped at max_iter"
    return (f"{info['iterations']} iterations, final change {_fmt(float(info['change']))} "
            f"records ({state}; tol {info['tol']:g})")


def _emit_warnings(caught, skip=()) -> None:
    seen = set()
    for w in caught:
        msg = str(w.message)
        if msg in seen or any(s in msg for s in skip):
            continue
        seen.add(msg)
        print(f"anonset: warning: {msg}", file=sys.stderr)


# ======================================================================
# anonymize
def _build_model(opts):
    """The privacy model from merged options; errors name the options."""
    import anonset
    l, k, t = opts.get("l"), opts.get("k"), opts.get("t")
    entropy, ground = opts.get("entropy"), opts.get("ground")
    if k is not None and l is not None:
        raise UsageError("--l and --k are conflicting privacy models; give one "
                         "(diversity implies anonymity with k = l)")
    if k is not None and t is not None:
        raise UsageError("--k cannot be combined with --t; use --l with --t for diversity "
                         "and closeness at once")
    if entropy and l is None:
        raise UsageError("--entropy needs --l (entropy l-diversity)")
    if ground is not None and t is None:
        raise UsageError("--ground applies to closeness only; give --t too")
    if l is None and k is None and t is None:
        raise UsageError("no privacy model: give --l (diversity), --k (anonymity) or --t "
                         "(closeness), or set one in --config")
    try:
        if t is not None and l is not None:
            return anonset.DiversityCloseness(l, t, ground or "auto")
        if t is not None:
            return anonset.Closeness(t, ground or "auto")
        if k is not None:
            return anonset.Anonymity(k)
        return anonset.EntropyDiversity(l) if entropy else anonset.Diversity(l)
    except ValueError as e:
        raise UsageError(f"privacy model: {e}") from None


def _check_model_columns(opts, schema) -> None:
    sens = [a.name for a in schema.sensitive]
    if not sens:
        raise UsageError("no sensitive attribute: every column is exact, identifier or other "
                         "(name some with --sensitive)")
    for key in ("l", "k", "t", "ground"):
        v = opts.get(key)
        if not isinstance(v, dict):
            continue
        for col in v:
            if col not in schema:
                raise UsageError(f"--{key} names column {col!r}, which is not in the data")
            if col not in sens:
                raise UsageError(f"--{key} names column {col!r}, which is not a sensitive "
                                 f"attribute (sensitive: {', '.join(sens)})")
        if key != "ground":
            missing = [c for c in sens if c not in v]
            if missing:
                raise UsageError(f"--{key} gives no value for sensitive attribute "
                                 f"{missing[0]!r}; give one per sensitive attribute or a "
                                 "single value")


def _typed_domain(values, col, frame):
    """Domain values read from text, typed like the column."""
    import pandas as pd
    if col not in frame.columns:
        raise UsageError(f"--domain names column {col!r}, which is not in the data")
    dtype = frame[col].dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        return [str(v) if not isinstance(v, (int, float)) else v for v in values]
    kind = int if pd.api.types.is_integer_dtype(dtype) else float
    out = []
    for v in values:
        try:
            out.append(kind(v))
        except (TypeError, ValueError):
            raise UsageError(f"--domain for column {col!r}: value {v!r} is not "
                             f"{'an integer' if kind is int else 'a number'}, but the column "
                             "is numeric") from None
    return out


def _anonymize_options(args) -> dict:
    from .config import load_config, merge, parse_bins
    config = load_config(args.config) if args.config else {}
    bins = {}
    for col, text in _kv(args.bins, "--bins").items():
        try:
            bins[col] = parse_bins(text)
        except ValueError as e:
            raise UsageError(f"--bins for {col!r}: {e}") from None
    flags = {
        "sensitive": _names(args.sensitive), "exact": _names(args.exact),
        "identifiers": _names(args.identifier), "other": _names(args.other),
        "ordinal": _names(args.ordinal),
        "l": _model_value(args.l, "--l", int), "k": _model_value(args.k, "--k", int),
        "t": _model_value(args.t, "--t", float), "entropy": True if args.entropy else None,
        "ground": _ground_value(args.ground),
        "bins": bins, "hierarchies": _kv(args.hierarchy, "--hierarchy"),
        "domains": _kv(args.domain, "--domain"),
        "seed": args.seed, "rng": args.rng, "threads": args.threads,
        "clip_l": True if args.clip_l else None, "missing": args.missing,
        "format": args.format, "input_format": args.input_format,
    }
    opts = merge(config, flags)
    for key, choices in (("rng", ("chacha20", "philox")), ("missing", ("error", "category")),
                         ("format", ("csv", "parquet")), ("input_format", ("csv", "parquet"))):
        if opts.get(key) is not None and opts[key] not in choices:
            raise UsageError(f"--{key.replace('_', '-')}: expected one of {', '.join(choices)}, "
                             f"got {opts[key]!r}")
    if isinstance(opts.get("ground"), str) and opts["ground"] not in GROUNDS:
        raise UsageError(f"--ground: expected one of {', '.join(GROUNDS)}, got {opts['ground']!r}")
    return opts


def cmd_anonymize(args) -> int:
    import anonset
    from .config import read_domain_file

    opts = _anonymize_options(args)
    model = _build_model(opts)
    src = Path(args.input)
    in_fmt = _format_of(src, opts.get("input_format"), "--input-format")
    out = Path(args.output)
    out_fmt = _format_of(out, opts.get("format"), "--format")
    if out_fmt == "csv" and _csv_compression(out):
        raise UsageError(f"-o {str(out)!r}: a published CSV is written uncompressed; "
                         "name it .csv, or use Parquet (compressed) for large tables")
    file_inputs = [src] + [Path(p) for p in (opts.get("hierarchies") or {}).values()] \
        + [Path(p) for p in (opts.get("domains") or {}).values() if isinstance(p, str)] \
        + ([Path(args.config)] if args.config else [])
    _check_not_input(out, file_inputs)
    if out_fmt == "csv":
        _check_not_input(Path(str(out) + ".anonset.json"), file_inputs)
    for col, p in (opts.get("hierarchies") or {}).items():
        if not Path(p).is_file():
            raise UsageError(f"--hierarchy for {col!r}: file {p!r} does not exist")

    size = src.stat().st_size if src.is_file() else 0
    prog = Progress(4, "anonymize", _progress_enabled(args.progress, size >= LONG_INPUT_BYTES))
    # --chunk-rows: stream the file (anonset.stream); the output for a seed is the same
    streamed = args.chunk_rows is not None
    try:
        with prog.stage(f"reading {src.name}" + (" (first rows)" if streamed else "")):
            text_columns = list(opts.get("other") or ()) + list(opts.get("identifiers") or ())
            if streamed:
                from ..io.stream import first_rows
                if not src.is_file():
                    raise UsageError(f"input file {str(src)!r} does not exist")
                frame = first_rows(src, in_fmt, text_columns)
            else:
                frame = _read_table(src, in_fmt, text_columns=text_columns)
        with prog.stage("building the schema"):
            domains = {}
            for col, v in (opts.get("domains") or {}).items():
                vals = read_domain_file(v) if isinstance(v, str) else v
                domains[col] = _typed_domain(vals, col, frame)
            for col in domains:
                if col in (opts.get("bins") or {}):
                    raise UsageError(f"column {col!r}: give either --bins or --domain, not both")
            missing = opts.get("missing") or "error"
            if missing == "category":
                frame = _missing_as_category(frame, opts, domains)
            infer = dict(
                sensitive=opts.get("sensitive") or None, exact=opts.get("exact") or (),
                identifiers=opts.get("identifiers") or (), other=opts.get("other") or (),
                bins=opts.get("bins") or {}, domains=domains,
                ordinal=opts.get("ordinal") or (), hierarchies=opts.get("hierarchies") or {})
            schema = anonset.Schema.infer(frame, missing=missing if streamed else "error",
                                          **infer)
            _check_model_columns(opts, schema)
        with prog.stage(f"publishing in chunks of {args.chunk_rows:,} rows" if streamed
                        else "publishing"):
            if streamed:
                from ..io.stream import publish_file
                del frame
                table = publish_file(src, out, model, chunk_rows=args.chunk_rows,
                                     seed=_seed(opts.get("seed")),
                                     rng=opts.get("rng") or "chacha20",
                                     n_threads=opts.get("threads"), missing=missing,
                                     clip_l=bool(opts.get("clip_l")), in_format=in_fmt,
                                     out_format=out_fmt, protect=file_inputs, **infer)
                schema = table.source_schema
            else:
                table = anonset.publish(frame, model, schema, seed=_seed(opts.get("seed")),
                                        rng=opts.get("rng") or "chacha20",
                                        n_threads=opts.get("threads"), missing=missing,
                                        clip_l=bool(opts.get("clip_l")))
        with prog.stage(f"writing {out.name}"):
            if streamed:
                pass                                   # written chunk by chunk above
            elif out_fmt == "parquet":
                table.to_parquet(out, protect=file_inputs)
            else:
                table.to_csv(out, protect=file_inputs)
    finally:
        prog.close()

    extra = f" and {out}.anonset.json" if out_fmt == "csv" else ""
    print(f"published {table.n_rows:,} records under {model.to_dict()['model']} "
          f"({_model_text(model)}) -> {out}{extra}")
    rows = []
    for a in table.schema.published:
        p = table.params[a.name]
        rows.append([a.name, a.role, p.d, _fmt(p.p), p.eta,
                     "-" if p.l is None else str(p.l), "-" if p.t is None else _fmt(p.t),
                     p.ground or "-", "declared" if not a.inferred else "inferred"])
    _table(rows, ["attribute", "role", "d", "p", "eta", "l", "t", "ground", "domain"])
    whole = [a.name for a in table.schema.sensitive
             if table.params[a.name].eta >= a.d > 1 and table.params[a.name].p >= 1.0]
    if whole:
        print(f"anonset: warning: every published set of {', '.join(whole)} is the whole domain "
              "(l = d): these columns carry no information", file=sys.stderr)
    dropped = [a.name for a in schema if a.role == "identifier"]
    if dropped:
        print(f"identifiers dropped: {', '.join(dropped)}")
    inferred = [a.name for a in table.schema.published if a.inferred]
    if inferred:
        print(f"note: the domains of {', '.join(inferred)} were read off the data, which reveals "
              "which values occur; declare them (--domain, --bins, --hierarchy) where that matters",
              file=sys.stderr)
    if opts.get("seed") is not None:
        print("note: a seed makes the output reproducible; keep it as secret as the data",
              file=sys.stderr)
    return EXIT_OK


def _model_text(model) -> str:
    d = model.to_dict()
    return ", ".join(f"{k}={v}" for k, v in d.items() if k != "model")


def _missing_as_category(frame, opts, domains):
    """--missing category: missing text values become the value '?' so that an
    inferred domain contains it (the library maps missing values to '?')."""
    import pandas as pd
    named = set(opts.get("exact") or ()) | set(opts.get("sensitive") or ())
    if not opts.get("sensitive"):
        named |= set(frame.columns) - set(opts.get("identifiers") or ()) - set(opts.get("other") or ())
    frame = frame.copy()
    for c in named:
        if c in frame.columns and c not in (opts.get("bins") or {}) and c not in domains \
                and not pd.api.types.is_numeric_dtype(frame[c].dtype) and frame[c].isna().any():
            frame[c] = frame[c].astype(object).where(frame[c].notna(), "?")
    return frame


# ======================================================================
# reconstruct
def cmd_reconstruct(args) -> int:
    import anonset
    src = Path(args.input)
    fmt = _format_of(src, args.input_format, "--input-format")
    attributes = _names(args.attributes)
    if not attributes:
        raise UsageError("--attributes: name at least one published attribute")
    if args.plot and not args.original:
        raise UsageError("--plot needs --original (the chart compares with the true counts)")
    if args.plot:
        from ..audit.plot import require_matplotlib
        require_matplotlib()
    out = Path(args.output) if args.output else None
    inputs = [src, Path(str(src) + ".anonset.json")] + ([Path(args.original)] if args.original else [])
    if out is not None:
        out_fmt = _format_of(out, args.format, "--format")
        _check_not_input(out, inputs)
    if args.plot:
        _check_not_input(Path(args.plot), inputs + ([out] if out else []))

    streamed = args.chunk_rows is not None
    if streamed:
        # --chunk-rows: read only the chosen columns, chunk by chunk (anonset.stream)
        from ..io.stream import TableHeader, read_metadata
        if not src.is_file():
            raise UsageError(f"input file {str(src)!r} does not exist")
        table = TableHeader.from_metadata(read_metadata(src, fmt))
    else:
        table = _read_settable(src, fmt)
    for a in attributes:
        if a not in table.params:
            raise UsageError(f"--attributes: {a!r} is not a published attribute; published: "
                             f"{', '.join(table.names)}")
    work = table.n_rows * (1 if args.method == "exact_em" else len(attributes))
    long_work = work >= LONG_RECONSTRUCT or (args.method == "exact_em" and table.n_rows >= 100_000)
    prog = Progress(3 if args.original else 2, "reconstruct",
                    _progress_enabled(args.progress, long_work))
    try:
        with prog.stage(f"{args.method} over {' x '.join(attributes)}"):
            t0 = time.perf_counter()
            if streamed:
                from ..io.stream import reconstruct_file
                est = reconstruct_file(src, attributes, args.method, chunk_rows=args.chunk_rows,
                                       max_iter=args.max_iter, tol=args.tol,
                                       n_threads=args.threads, seed=_seed(args.seed),
                                       format=fmt)
            else:
                est = anonset.reconstruct(table, attributes, args.method,
                                          max_iter=args.max_iter, tol=args.tol,
                                          n_threads=args.threads, seed=_seed(args.seed))
            elapsed = time.perf_counter() - t0
        with prog.stage("writing"):
            if out is not None:
                _write_frame(est.to_frame(), out, out_fmt, inputs)
        truth = None
        if args.original:
            with prog.stage("true counts"):
                orig_path = Path(args.original)
                orig = _read_table(orig_path, _format_of(orig_path, None, "--original"))
                truth = anonset.true_crosstab(orig, table.schema, attributes,
                                              missing=args.missing)
    finally:
        prog.close()

    dims = " x ".join(str(len(d)) for d in est.domains)
    print(f"reconstructed {' x '.join(attributes)} ({dims} cells) from {table.n_rows:,} records "
          f"with {args.method} in {elapsed:.2f} s")
    summary = _em_summary(est)
    if summary:
        print(f"{args.method}: {summary}")
    if out is not None:
        print(f"wrote {out}")
    else:
        print(est.to_frame().to_string(index=False))
    if truth is not None:
        if round(truth.total) != table.n_rows:
            print(f"anonset: warning: --original has {int(truth.total):,} records but the "
                  f"published table has {table.n_rows:,}; is it the right file?", file=sys.stderr)
        m = anonset.metrics.compare(truth, est)
        _table([[args.method] + [float(m[k]) for k in ("L1", "L1/N", "L2", "Hellinger")]],
               ["method", "L1", "L1/N", "L2", "Hellinger"])
        if args.plot:
            from ..audit.plot import bar_chart
            bar_chart(truth, est, args.plot, protect=inputs + ([out] if out else []))
            print(f"wrote {args.plot}")
    return EXIT_OK


# ======================================================================
# demo
def cmd_demo(args) -> int:
    import numpy as np
    import anonset
    from anonset import datasets

    attributes = _names(args.attributes) or ["age", "occupation"]
    methods = _names(args.method) or list(METHODS)
    for m in methods:
        if m not in METHODS:
            raise UsageError(f"--method: {m!r} is not one of {', '.join(METHODS)}")
    for a in attributes:
        if a not in datasets.ADULT_QIDS:
            raise UsageError(f"--attributes: {a!r} is not one of the Adult attributes "
                             f"({', '.join(datasets.ADULT_QIDS)})")
    if len(set(attributes)) != len(attributes):
        raise UsageError(f"--attributes: {','.join(attributes)} names an attribute twice")
    l = _number(str(args.l), "--l", int)
    if l < 1:
        raise UsageError(f"--l: expected an integer >= 1, got {args.l!r}")
    if args.plot:
        from ..audit.plot import require_matplotlib
        require_matplotlib()
        _check_not_input(Path(args.plot), [])
    seed = _seed(args.seed)

    prog = Progress(2 + len(methods), "demo", _progress_enabled(args.progress, True))
    timings, results = {}, {}
    try:
        with prog.stage("publishing Adult"):
            t0 = time.perf_counter()
            df = datasets.load_adult()
            schema = datasets.adult_schema(df)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                pub = anonset.publish(df, anonset.Diversity(l), schema, seed=seed,
                                      clip_l=True, n_threads=args.threads)
            t_pub = time.perf_counter() - t0
        with prog.stage("true counts"):
            truth = anonset.true_crosstab(df, schema, attributes)
        for m in methods:
            with prog.stage(m):
                t0 = time.perf_counter()
                it = args.exact_max_iter if m == "exact_em" else args.max_iter
                results[m] = anonset.reconstruct(pub, attributes, m, max_iter=it,
                                                 n_threads=args.threads, seed=seed)
                timings[m] = time.perf_counter() - t0
    finally:
        prog.close()

    clipped = [(a.name, a.d, pub.params[a.name].eta) for a in schema.sensitive
               if pub.params[a.name].eta < l]
    print(f"anonset demo: UCI Adult, {pub.n_rows:,} complete records, {len(schema.sensitive)} "
          f"sensitive QIDs (age in 10-year bins + 9 categorical)")
    print(f"published under frequency ({l},...,{l})-diversity (p_j = 1, eta_j = l_j) in "
          f"{t_pub:.2f} s; seed: {'given' if seed is not None else 'fresh from the OS (pass --seed N to repeat a run)'}")
    if clipped:
        print("clip_l (as the paper does where l >= d_j): " + ", ".join(
            f"{n} d={d} -> l={e}" for n, d, e in clipped))
    _emit_warnings(caught, skip=("as requested by clip_l",))

    dims = " x ".join(str(schema[a].d) for a in attributes)
    print()
    cells = f"{dims} = {truth.counts.size}" if len(attributes) > 1 else dims
    print(f"reconstruction of {' x '.join(attributes)} ({cells} cells), "
          f"error against the true counts:")
    rows = []
    for m in methods:
        mt = anonset.metrics.compare(truth, results[m])
        it = results[m].info.get("iterations")
        rows.append([m] + [float(mt[k]) for k in ("L1", "L1/N", "L2", "Hellinger")]
                    + ["-" if it is None else f"{it}" + ("" if results[m].info.get("converged") else "*"),
                       f"{timings[m]:.2f} s"])
    _table(rows, ["method", "L1", "L1/N", "L2", "Hellinger", "iterations", "time"])
    if any(r.info.get("iterations") is not None for r in results.values()):
        print(f"  EM stopping rule: tol = 1e-06 records or max_iter (* = stopped at max_iter); "
              f"em: max_iter = {args.max_iter}")
        if "exact_em" in results:
            print(f"  exact_em: max_iter lowered to {args.exact_max_iter} for the demo's speed "
                  "(each iteration visits every distinct set tuple; --exact-max-iter N to change)")
    print("  em: eq. 26-27 on the counts w; exact_em: likelihood of each record's whole set tuple;"
          "\n  value_adding: eq. 18; random: N records placed uniformly (baselines of Sec. VI)")

    print()
    print("privacy audit (every published set checked):")
    from ..encode import encode
    codes = encode(df, schema)
    rows, all_ok = [], True
    for a in schema.sensitive:
        p = pub.params[a.name]
        masks = np.asarray(pub.mask(a.name))
        sizes = _popcount(masks)
        size_ok = int((sizes == p.eta).sum())
        c = codes[a.name].astype(np.int64)
        bit = (masks[np.arange(len(c)), c >> 6] >> (c & 63).astype(np.uint64)) & np.uint64(1)
        has_true = int(bit.sum())
        ok = size_ok == pub.n_rows and (p.p < 1.0 or has_true == pub.n_rows)
        all_ok &= ok
        rows.append([a.name, p.d, str(p.l), _fmt(p.p), p.eta, f"{size_ok}/{pub.n_rows}",
                     f"{has_true}/{pub.n_rows}", f"{1.0 / p.eta:.3f}", "ok" if ok else "FAIL"])
    _table(rows, ["attribute", "d", "l", "p", "eta", "|set| = eta", "true value in set",
                  "bound 1/l", "check"])
    print("  Theorem 2: with p_j = 1 and eta_j = l_j every set holds the true value and l_j - 1 "
          "others,\n  so in the expanded table no value of S_j exceeds 1/l_j of any equivalence "
          "class for S_j.")
    if len(attributes) >= 2:
        w = anonset.count_w(pub, attributes)
        shares = []
        for j, a in enumerate(attributes):
            tot = w.sum(axis=j, keepdims=True)
            share = np.divide(w, tot, out=np.zeros_like(w, dtype=float), where=tot > 0)
            shares.append(f"{a} {share.max():.3f} (bound {1.0 / pub.params[a].eta:.3f})")
            all_ok &= bool(share.max() <= 1.0 / pub.params[a].eta + 1e-12)
        print(f"  measured on the {' x '.join(attributes)} projection, the largest share of one "
              f"value in a class:\n    {'; '.join(shares)}")
    print(f"  audit: {'all checks passed' if all_ok else 'FAILED'}")

    if args.plot:
        from ..audit.plot import bar_chart
        shown = [results[m] for m in ("em", "exact_em") if m in results] or list(results.values())
        bar_chart(truth, shown, args.plot,
                  title=f"Adult, ({l},...,{l})-diversity: true vs reconstructed "
                        f"{' x '.join(attributes)}")
        print(f"\nwrote {args.plot}")
    return EXIT_OK if all_ok else 1


def _popcount(masks):
    import numpy as np
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    return np.unpackbits(m.view(np.uint8).reshape(m.shape[0], -1), axis=1).sum(axis=1)


# ======================================================================
# info
def cmd_info(args) -> int:
    import anonset
    anonset.show_versions()
    return EXIT_OK


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and build facts, then exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        cmd_info(namespace)
        parser.exit(EXIT_OK)


# ======================================================================
# parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anonset",
        description="Publish tables under l-diversity and t-closeness when attributes are both "
                    "quasi-identifiers and sensitive (Sei et al.), and reconstruct "
                    "cross-tabulations from what was published.",
        epilog="Exit codes: 0 ok, 2 usage or data error, 130 interrupted. See docs/cli.md.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(p):
        p.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                       help="kernel threads (default: OpenMP's default); results do not depend on it")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar on stderr (default: on long work when stderr is a terminal)")

    # demo
    p = sub.add_parser("demo", help="publish Adult under (5,...,5)-diversity, reconstruct, audit",
                       description="Publish the embedded UCI Adult data under frequency "
                       "(l,...,l)-diversity, reconstruct a cross-tabulation with every method, "
                       "compare with the truth and audit the published sets.")
    p.add_argument("--l", default="5", metavar="L", help="l of (l,...,l)-diversity (default 5)")
    p.add_argument("--attributes", action="append", metavar="A,B",
                   help="attributes to cross-tabulate (default age,occupation, as Fig. 7)")
    p.add_argument("--seed", default=None, metavar="N", help="seed for a reproducible run")
    p.add_argument("--method", action="append", metavar="M[,M]",
                   help=f"methods to compare (default all: {','.join(METHODS)})")
    p.add_argument("--max-iter", type=_nonneg_int, default=2000, metavar="N",
                   help="paper EM iterations at most (default 2000)")
    p.add_argument("--exact-max-iter", type=_nonneg_int, default=200, metavar="N",
                   help="exact EM iterations at most (default 200, lowered for speed)")
    p.add_argument("--plot", metavar="OUT.png", help="write a bar chart of true vs EM counts")
    common(p)
    p.set_defaults(func=cmd_demo)

    # anonymize
    p = sub.add_parser("anonymize", help="publish a CSV/Parquet table",
                       description="Publish a table: each sensitive QID becomes a random set "
                       "(paper 000), exact QIDs are kept, identifiers dropped, other columns "
                       "passed through.  Options override those of --config.")
    p.add_argument("input", metavar="IN", help="input table (.csv or .parquet)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="published table (.csv, with OUT.anonset.json beside it, or .parquet)")
    g = p.add_argument_group("columns")
    g.add_argument("--sensitive", action="append", metavar="A,B",
                   help="sensitive QIDs (default: every column not named otherwise)")
    g.add_argument("--exact", action="append", metavar="A,B",
                   help="non-sensitive QIDs, published exactly (paper 004)")
    g.add_argument("--identifier", action="append", metavar="A,B", help="identifiers: dropped")
    g.add_argument("--other", action="append", metavar="A,B", help="passed through unchanged")
    g.add_argument("--bins", action="append", metavar="COL=E0:E1:...",
                   help="categorize a numeric column into [E0,E1), [E1,E2), ... (repeatable)")
    g.add_argument("--hierarchy", action="append", metavar="COL=PATH.csv",
                   help="ARX-format generalization hierarchy (repeatable)")
    g.add_argument("--domain", action="append", metavar="COL=PATH.txt",
                   help="declared domain, one value per line (repeatable; preferred over "
                        "inferring it from the data)")
    g.add_argument("--ordinal", action="append", metavar="A,B",
                   help="columns whose (sorted) domain order is meaningful")
    g = p.add_argument_group("privacy model")
    g.add_argument("--l", metavar="L|COL=L,...", help="frequency l-diversity (one l, or one per column)")
    g.add_argument("--entropy", action="store_true", default=None,
                   help="entropy instead of frequency l-diversity")
    g.add_argument("--k", metavar="K|COL=K,...", help="k-anonymity")
    g.add_argument("--t", metavar="T|COL=T,...",
                   help="t-closeness; with --l: diversity and closeness at once")
    g.add_argument("--ground", metavar="NAME|COL=NAME,...",
                   help=f"EMD ground distance for --t: {', '.join(GROUNDS)} (default auto)")
    g.add_argument("--clip-l", action="store_true", default=None,
                   help="where l >= d, use l = d - 1 (weaker; the paper's experiments do this)")
    g = p.add_argument_group("run")
    g.add_argument("--seed", default=None, metavar="S",
                   help="reproducible output; keep the seed as secret as the data "
                        "(default: a fresh key from the OS, never stored)")
    g.add_argument("--rng", choices=("chacha20", "philox"), default=None,
                   help="generator (default chacha20, cryptographically strong)")
    g.add_argument("--missing", choices=("error", "category"), default=None,
                   help="missing values: error (default) or the category '?'")
    g.add_argument("--config", metavar="CFG.json|CFG.toml", help="options from a file")
    g.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from OUT's extension)")
    g.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from IN's extension)")
    g.add_argument("--chunk-rows", type=_positive_int, default=None, metavar="N",
                   help="stream the file N rows at a time (memory bounded by N, not the "
                        "file; same output for a seed); see docs/scaling.md")
    common(g)
    p.set_defaults(func=cmd_anonymize)

    # reconstruct
    p = sub.add_parser("reconstruct", help="cross-tabulate a published table",
                       description="Estimate the counts of every combination of the chosen "
                       "published attributes (paper 000, Sec. V-D).")
    p.add_argument("input", metavar="IN", help="published table (.csv with its .anonset.json, or .parquet)")
    p.add_argument("--attributes", action="append", required=True, metavar="A,B",
                   help="attributes to cross-tabulate")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="cross-tabulation, long form: attribute columns + count (.csv or "
                        ".parquet); default: print it")
    p.add_argument("--method", choices=METHODS, default="em",
                   help="em (eq. 26, default), exact_em, value_adding (eq. 18), random")
    p.add_argument("--max-iter", type=_nonneg_int, default=2000, metavar="N",
                   help="EM iterations at most (default 2000)")
    p.add_argument("--tol", type=_nonneg_float, default=1e-6, metavar="X",
                   help="EM stops when no cell changes by more than X records (default 1e-6)")
    p.add_argument("--seed", default=None, metavar="N", help="seed of the random baseline")
    p.add_argument("--original", metavar="ORIG", help="the original table: print the error "
                   "of the estimate against its true counts")
    p.add_argument("--missing", choices=("error", "category"), default="error",
                   help="missing values in --original (as when publishing)")
    p.add_argument("--plot", metavar="OUT.png", help="bar chart of true vs reconstructed counts "
                   "(needs --original and matplotlib)")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from OUT's extension)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from IN's extension)")
    p.add_argument("--chunk-rows", type=_positive_int, default=None, metavar="N",
                   help="read the chosen columns N rows at a time (same estimate)")
    common(p)
    p.set_defaults(func=cmd_reconstruct)

    # info
    p = sub.add_parser("info", help="print the version and build facts (OpenMP, threads)")
    p.set_defaults(func=cmd_info)

    # the other papers' subcommands live beside their algorithms
    for mod in PLUGIN_MODULES:
        if importlib.util.find_spec(mod) is None:     # not (yet) part of this install
            continue
        importlib.import_module(mod).register(sub)
    return parser


# ======================================================================
def main(argv=None) -> int:
    """Run the ``anonset`` command; returns the exit code.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:            # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    where = f"anonset {args.command}"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return args.func(args)
            finally:
                _emit_warnings(caught, skip=("as requested by clip_l",) if args.command == "demo" else ())
    except KeyboardInterrupt:
        print(f"\n{where}: interrupted; no output is left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, KeyError) as e:
        # usage and data errors: one line, naming the option or column
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        for api, flag in _API_TO_FLAGS:
            msg = msg.replace(api, flag)
        print(f"{where}: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as e:
        if "pip install" not in str(e):
            raise                      # a broken installation, not a usage error
        print(f"{where}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:            # pragma: no cover - e.g. `anonset demo | head`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return EXIT_OK
    except OSError as e:
        # a file that cannot be read or written (permissions, disk full, ...)
        name = f" {e.filename!r}" if getattr(e, "filename", None) else ""
        print(f"{where}: error:{name} {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
