"""``anonset anonymize IN -o OUT``: publish a CSV or Parquet table under a
model of paper 000 (sensitive QIDs as random sets, exact QIDs kept: paper
004), block by block through the engine (:func:`anonset.stream.publish_file`),
so a file of any size is published in bounded memory and a seed gives the
same output whatever ``--chunk-rows``."""
from __future__ import annotations

from pathlib import Path

from . import args as A
from .progress import LONG_ROWS, Progress, progress_enabled

__all__ = ["register", "run"]


def register(sub) -> None:
    p = sub.add_parser(
        "anonymize", help="publish a CSV/Parquet table (paper 000/004)",
        description="Publish a table: each sensitive column becomes a random set (paper 000), "
                    "exact QIDs are kept (paper 004), identifiers and dropped columns are not "
                    "published, pass-through columns are copied.  Every column needs a role.  "
                    "Rows come out in a random order.  Options override those of --config.")
    p.add_argument("input", metavar="IN", help="input table (.csv or .parquet)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="published table (.csv, with OUT.anonset.json beside it, or .parquet)")
    A.add_roles(p)
    g = p.add_argument_group("domains (declared domains are preferred: an inferred one "
                             "reveals which values occur)")
    g.add_argument("--bins", action="append", metavar="COL=E0:E1:...",
                   help="categorize a numeric column into [E0,E1), [E1,E2), ... (repeatable; "
                        "or several columns in one, separated by commas)")
    g.add_argument("--hierarchy", action="append", metavar="COL=PATH.csv",
                   help="ARX-format generalization hierarchy (repeatable)")
    g.add_argument("--domain", action="append", metavar="COL=PATH.txt|COL=A,B,...",
                   help="declared domain: a file with one value per line, or the values "
                        "inline, comma-separated, in order (repeatable)")
    g.add_argument("--ordinal", action="append", metavar="A,B",
                   help="columns whose domain order is meaningful (numeric, or with a "
                        "declared domain in order)")
    g.add_argument("--missing", choices=("error", "category", "drop"), default=None,
                   help="missing cells: an error (default), or published as a value of their "
                        "own (category); drop, which the partition commands take, is refused "
                        "here: every row is published")
    g.add_argument("--missing-token", default=None, metavar="TEXT",
                   help="the value that stands for a missing cell with --missing category "
                        "(default '?'; it must not be a real value of the column)")
    g = p.add_argument_group("privacy model")
    g.add_argument("--l", metavar="L|[L,]COL=L,...",
                   help="frequency l-diversity (one l, or one per column: COL=L for each, or a "
                        "default first, 3,job=5)")
    g.add_argument("--entropy", action="store_true", default=None,
                   help="entropy instead of frequency l-diversity")
    g.add_argument("--k", metavar="K|[K,]COL=K,...", help="k-anonymity")
    g.add_argument("--t", metavar="T|[T,]COL=T,...",
                   help="t-closeness; with --l: diversity and closeness at once")
    g.add_argument("--ground", metavar="NAME|[NAME,]COL=NAME,...",
                   help=f"EMD ground distance for --t: {', '.join(A.GROUNDS)} (default auto: "
                        "hierarchical with --hierarchy, ordered for --ordinal columns "
                        "without a missing token, else equal)")
    g.add_argument("--clip-l", action="store_true", default=None,
                   help="where l >= d, use l = d - 1 (weaker; the paper's experiments do this)")
    g.add_argument("--allow-clear", action="append", metavar="A,B",
                   help="sensitive columns you accept to publish in the clear (a model that gives "
                        "p = 1 and eta = 1, e.g. l = 1) or nearly (sets that values few hold, or "
                        "another column's sets, give away; under --record-id, a value that "
                        "changes between one record's rows); refused otherwise")
    g.add_argument("--allow-recode", action="append", metavar="A,B",
                   help="pass-through columns or exact QIDs you accept to publish although "
                        "they recode a sensitive column (lambda >= 0.9: published as they are, "
                        "they publish it nearly in the clear), or some of their values give it "
                        "away for at least 1%% of the rows; refused otherwise")
    g.add_argument("--allow-rare", action="append", metavar="A,B",
                   help="sensitive columns with a domain read off the data that you accept to "
                        "publish although some values are so rare that counting the sets "
                        "holding one points at its holders; refused otherwise (declaring the "
                        "domain, --domain or --bins, lifts it)")
    A.add_allow_identifier(g)
    A.add_allow_shared_id(g)
    A.add_key_options(p)
    g = p.add_argument_group("run")
    g.add_argument("--record-id", default=None, metavar="COL",
                   help="persistent-key mode: with --key-file and this identifier column, a "
                        "record gets the same sets in every release (intersecting releases "
                        "then reveals nothing more than one); rows that share the id are one "
                        "record's rows (panel waves, visits): the same value, the same set")
    g.add_argument("--params-from", default=None, metavar="RELEASE",
                   help="take (p, eta) of every sensitive column from an earlier release "
                        "(.parquet, or .csv with its .anonset.json) instead of optimizing "
                        "them; they are checked against this input (under --record-id every "
                        "later release of the series needs it, given the series' latest; the "
                        "first is declared with --first-in-series)")
    g.add_argument("--first-in-series", action="store_true", default=None,
                   help="with --record-id: declare this release the first of its series (a "
                        "later release is given the latest with --params-from, and read beside "
                        "it; one given neither is refused)")
    g.add_argument("--new-in-series", action="append", metavar="A,B",
                   help="with --params-from: sensitive columns that no earlier release of the "
                        "series published under any name (their (p, eta) are chosen for this "
                        "release); a column missing from RELEASE is refused otherwise, since a "
                        "renamed column would draw new sets for values published before")
    g.add_argument("--keep-order", action="store_true", default=None,
                   help="keep the input row order (a file sorted by a sensitive value reveals "
                        "it: see docs/security.md)")
    g.add_argument("--rng", choices=("chacha20", "philox"), default=None,
                   help="generator (default chacha20, cryptographically strong)")
    g.add_argument("--config", metavar="CFG.json|CFG.toml", help="options from a file")
    g.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from OUT's extension)")
    g.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from IN's extension)")
    g.add_argument("--sets", choices=("masks", "lists"), default=None,
                   help="how a Parquet output stores the sets: masks (default: the narrowest "
                        "integer bitmask, small and fast) or lists of values (what other "
                        "Parquet readers show as values)")
    g.add_argument("--chunk-rows", type=A.positive_int, default=None, metavar="N",
                   help="rows per block (memory is bounded by it; the output does not depend "
                        "on it); see docs/scaling.md")
    A.add_run_options(g)
    p.set_defaults(func=run)


# ============================================================== options
def _options(args) -> dict:
    from .config import load_config, merge, parse_bins
    config = load_config(args.config) if args.config else {}
    bins = {}
    # one column per flag, or several in one, separated by commas (edges
    # are separated by ':'; '--bins age=0:30:120,inc=0:10:inf' was read as
    # age's edges and refused naming the edge '120,inc=0')
    for col, text in A.kv(args.bins, "--bins", commas=True,
                          form="COL=E0:E1:... (edges separated by ':', columns by ',')").items():
        try:
            bins[col] = parse_bins(text)
        except ValueError as e:
            raise A.UsageError(f"--bins for {col!r}: {e}") from None
    flags = {
        "sensitive": A.names(args.sensitive), "exact": A.names(args.exact),
        "identifiers": A.names(args.identifier), "other": A.names(args.other),
        "drop": A.names(args.drop), "ordinal": A.names(args.ordinal),
        "allow_clear": A.names(args.allow_clear), "allow_recode": A.names(args.allow_recode),
        "allow_rare": A.names(args.allow_rare), "new_in_series": A.names(args.new_in_series),
        "allow_shared_id": A.names(args.allow_shared_id),
        "allow_identifier": A.names(args.allow_identifier),
        "l": A.model_value(args.l, "--l", int), "k": A.model_value(args.k, "--k", int),
        "t": A.model_value(args.t, "--t", float), "entropy": True if args.entropy else None,
        "ground": A.ground_value(args.ground),
        # a comma in a hierarchy's path written '\,', as lgb's and msa's lists read it
        "bins": bins, "hierarchies": {c: v.replace("\\,", ",")
                                      for c, v in A.kv(args.hierarchy, "--hierarchy").items()},
        "domains": A.kv(args.domain, "--domain"),
        "key_file": args.key_file, "params_from": args.params_from,
        "research_seed": True if args.research_seed else None,
        "record_id": args.record_id, "keep_order": True if args.keep_order else None,
        "rng": args.rng, "threads": args.threads, "clip_l": True if args.clip_l else None,
        "missing": args.missing, "missing_token": args.missing_token,
        "format": args.format, "input_format": args.input_format,
    }
    opts = merge(config, flags)
    given = [A.flag(k) for k in ("l", "k", "t") if flags[k] is not None]
    dropped = [k for k in ("l", "k", "t", "entropy") if k in config and flags[k] is None]
    if given and dropped:
        # the model is taken whole from the command line: a file's t
        # dropped by --l alone is said, never silent (H119)
        import warnings
        warnings.warn(f"config {args.config!r}: {', '.join(dropped)} ignored: "
                      f"{' and '.join(given)} on the command line replaces the file's privacy "
                      "model (l, k, t and entropy are taken as a whole)", stacklevel=2)
    # an error about an option the config file gave names the file too
    # (the per-column l of a file was blamed on an --l nobody typed)
    from_file = {k: f"{A.flag(k)} (from {args.config})" for k in config
                 if k in flags and flags[k] is None and k not in ("sensitive", "exact",
                                                                   "identifiers", "other",
                                                                   "drop")}
    if from_file:
        args.flag_names = {**(getattr(args, "flag_names", None) or {}), **from_file}
    for key, choices in (("rng", ("chacha20", "philox")),
                         ("missing", ("error", "category", "drop")),     # drop: the engine says

                         ("format", ("csv", "parquet")), ("input_format", ("csv", "parquet"))):
        if opts.get(key) is not None and opts[key] not in choices:
            raise A.UsageError(f"--{key.replace('_', '-')}: expected one of "
                               f"{', '.join(choices)}, got {opts[key]!r}")
    return opts


def build_model(opts):
    """The privacy model from merged options; errors name the options."""
    import anonset
    l, k, t = opts.get("l"), opts.get("k"), opts.get("t")
    entropy, ground = opts.get("entropy"), opts.get("ground")
    if k is not None and l is not None:
        raise A.UsageError("--l and --k are conflicting privacy models; give one "
                           "(diversity implies anonymity with k = l)")
    if k is not None and t is not None:
        raise A.UsageError("--k cannot be combined with --t; use --l with --t for diversity "
                           "and closeness at once")
    if entropy and l is None:
        raise A.UsageError("--entropy needs --l (entropy l-diversity)")
    if ground is not None and t is None:
        raise A.UsageError("--ground applies to closeness only; give --t too")
    if l is None and k is None and t is None:
        raise A.UsageError("no privacy model: give --l (diversity), --k (anonymity) or --t "
                           "(closeness), or set one in --config")
    try:
        if t is not None and l is not None:
            return anonset.DiversityCloseness(l, t, ground or "auto",
                                              "entropy" if entropy else "frequency")
        if t is not None:
            return anonset.Closeness(t, ground or "auto")
        if k is not None:
            return anonset.Anonymity(k)
        return anonset.EntropyDiversity(l) if entropy else anonset.Diversity(l)
    except ValueError as e:
        from ..validate import InputError
        if isinstance(e, InputError):
            raise                     # names its parameter: rendered as the flag
        raise A.UsageError(f"privacy model: {e}") from None


def _domain_values(values):
    """Values read from a domain file: integers or numbers where every value
    spells one, else text; codes written with leading zeros ('01', '007':
    occupation, ICD and FIPS codes) stay text, as the API keeps them (H81:
    '01'..'10' became 1..10, another domain than the same release's in
    Python)."""
    import re
    if any(isinstance(v, str) and re.match(r"\s*[+-]?0[0-9]", v) for v in values):
        return list(values)
    for kind in (int, float):
        try:
            return [kind(v) for v in values]
        except ValueError:
            continue
    return list(values)


def run(args) -> int:
    from ..io.stream import DEFAULT_CHUNK_ROWS, publish_file
    from ..io.tables import check_input_file, file_format, n_rows_hint
    from .config import read_domain_file

    opts = _options(args)
    for key, flag in (("l", "--l"), ("k", "--k"), ("t", "--t"), ("ground", "--ground")):
        # '3,job=5': 3 for every sensitive column the value does not name
        opts[key] = A.fill_default(opts.get(key), list(opts.get("sensitive") or ()), flag)
    model = build_model(opts)
    src = check_input_file(args.input)
    in_fmt = file_format(src, opts.get("input_format"), param="input_format")
    out = Path(args.output)
    out_fmt = file_format(out, opts.get("format"), param="format", output=True)
    if args.sets is not None and out_fmt == "csv":
        raise A.UsageError(f"--sets {args.sets}: applies to a Parquet output; a CSV writes each "
                           "set as {a|b|c} (name the output .parquet, or leave --sets out)")
    hier_paths = dict(opts.get("hierarchies") or {})
    for col, p in hier_paths.items():
        A.hierarchy_file(col, p)
    domains = {}
    for col, v in (opts.get("domains") or {}).items():
        try:
            domains[col] = _domain_values(read_domain_file(v) if isinstance(v, str) else v)
        except ValueError as e:
            raise A.UsageError(f"--domain for {col!r}: {e}") from None
    protect = [src] + [Path(p) for p in hier_paths.values()] \
        + [Path(v) for v in (opts.get("domains") or {}).values() if isinstance(v, str)] \
        + ([Path(args.config)] if args.config else []) \
        + ([Path(opts["key_file"])] if opts.get("key_file") else [])
    key = A.key_options(args)
    if opts.get("key_file") and key["key_file"] is None and key["seed"] is None:
        key["key_file"] = opts["key_file"]
    if opts.get("research_seed"):
        key["research_seed"] = True
    options = dict(
        sensitive=opts.get("sensitive") or (), exact=opts.get("exact") or (),
        identifiers=opts.get("identifiers") or (), other=opts.get("other") or (),
        drop=opts.get("drop") or (), bins=opts.get("bins") or {}, domains=domains,
        ordinal=opts.get("ordinal") or (), hierarchies=hier_paths,
        missing=opts.get("missing") or "error",
        missing_token="?" if opts.get("missing_token") is None else opts["missing_token"],
        clip_l=bool(opts.get("clip_l")), allow_clear=opts.get("allow_clear") or (),
        allow_recode=opts.get("allow_recode") or (), allow_rare=opts.get("allow_rare") or (),
        allow_shared_id=opts.get("allow_shared_id") or (),
        allow_identifier=opts.get("allow_identifier") or (),
        keep_order=bool(opts.get("keep_order")), record_id=opts.get("record_id"),
        new_in_series=opts.get("new_in_series") or (),
        first_in_series=bool(args.first_in_series),
        rng=opts.get("rng") or "chacha20", n_threads=opts.get("threads"), **key)
    if opts.get("params_from") is not None:
        options["params"] = _params_from(opts["params_from"], options["sensitive"])
        protect.append(Path(opts["params_from"]))
    rows = n_rows_hint(src, in_fmt)
    long_work = (rows or src.stat().st_size // 50) >= LONG_ROWS
    chunk = args.chunk_rows or DEFAULT_CHUNK_ROWS
    with Progress(rows, f"anonymize {src.name}: reading", progress_enabled(
            args.progress, long_work, getattr(args, "quiet", False))) as prog:
        res = publish_file(src, out, model, chunk_rows=chunk, in_format=in_fmt,
                           out_format=out_fmt, protect=protect, progress=prog,
                           sets=args.sets or "masks",
                           **options)
    if not getattr(args, "quiet", False):
        _summary(res, model, out, out_fmt)
    return A.EXIT_OK


def _params_from(release, sensitive):
    """An earlier release (its parameters, sensitive domains and generator),
    from its metadata."""
    from ..io.published import read_metadata
    from ..randomized.prior import PriorRelease
    # a sensitive column the earlier releases never published, named with
    # --new-in-series, gets its parameters chosen for this release (the engine)
    return PriorRelease.of_metadata(read_metadata(release), release)


def _model_text(model) -> str:
    # "l=3", or "l per column: job=3, sex=2" rather than a Python dict
    def one(k, v):
        if isinstance(v, dict):
            return f"{k} per column: " + ", ".join(f"{c}={x}" for c, x in v.items())
        return f"{k}={v}"
    return "; ".join(one(k, v) for k, v in model.to_dict().items() if k != "model")


def _summary(res, model, out, out_fmt) -> None:
    import logging
    log = logging.getLogger("anonset")
    extra = f" and {out}.anonset.json" if out_fmt == "csv" else ""
    print(f"published {res.n_rows:,} records under {model.to_dict()['model']} "
          f"({_model_text(model)}) -> {out}{extra}")
    rows = []
    clear = set(res.info.get("clear", ()))
    for a in res.schema.published:
        p = res.params[a.name]
        rows.append([a.name, a.role + (" (CLEAR)" if a.name in clear else ""), p.d,
                     A.fmt(p.p), p.eta, "-" if p.l is None else str(p.l),
                     "-" if p.t is None else A.fmt(p.t, 6), p.ground or "-",
                     "inferred" if a.inferred else "declared"])
    A.print_table(rows, ["column", "role", "d", "p", "eta", "l", "t", "ground", "domain"])
    print("  (d: values in the domain; each row's set holds eta of them: its own value and "
          "eta - 1 others with probability p, else eta at random; l, t: the model's; ground: "
          "t's distance)")
    A.print_roles_and_key(res.info)
    A.warn_allowed_clear(res.info)
    A.warn_allowed_recodes(res.info)
    A.warn_allowed_identifiers(res.info)
    A.warn_allowed_rare(res.info)
    A.warn_allowed_shared_ids(res.info)
    A.warn_allowed_changes(res.info)
    whole = [a.name for a in res.schema.sensitive if res.params[a.name].says_nothing]
    if whole:
        log.warning("the sets of %s carry no information (each set the whole domain, as at "
                    "l = d, or drawn with p = 0): reconstruct refuses these columns",
                    ", ".join(whole))
