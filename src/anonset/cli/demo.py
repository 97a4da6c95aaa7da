"""``anonset demo``: publish the embedded UCI Adult data under
(l,...,l)-diversity with the safe defaults, reconstruct a cross-tabulation
with every method of paper 000 (Sec. V-D and the baselines of Sec. VI),
compare with the truth, audit the release, and say what to try next."""
from __future__ import annotations

import time
import warnings

from . import args as A
from .progress import Progress, progress_enabled

__all__ = ["register", "run"]

METHODS = ("em", "exact_em", "value_adding", "random")


def register(sub) -> None:
    p = sub.add_parser("demo", help="publish Adult under (5,...,5)-diversity, reconstruct, audit",
                       description="Publish the embedded UCI Adult data under frequency "
                       "(l,...,l)-diversity, reconstruct a cross-tabulation with every method, "
                       "compare with the truth and audit the release.")
    p.add_argument("--l", default="5", metavar="L", help="l of (l,...,l)-diversity (default 5)")
    p.add_argument("--attributes", action="append", metavar="A,B",
                   help="attributes to cross-tabulate (default age,occupation, as Fig. 7)")
    p.add_argument("--seed", default=None, metavar="S",
                   help="key material for a reproducible run (a research seed is accepted here: "
                        "Adult is public data)")
    p.add_argument("--method", action="append", metavar="M[,M]",
                   help=f"methods to compare (default all: {','.join(METHODS)})")
    p.add_argument("--max-iter", type=A.positive_int, default=None, metavar="N",
                   help="EM iterations at most (default: the library's)")
    p.add_argument("--plot", metavar="OUT.png", help="write a bar chart of true vs EM counts")
    p.add_argument("--allow-clear", action="append", metavar="A,B",
                   help="attributes allowed to be published nearly in the clear (below l = 5, "
                        "relationship's and marital-status's sets read together name many "
                        "relationships, and a set beside values few hold, such as ages over "
                        "80, names its row's value: refused unless named here)")
    A.add_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import anonset
    from anonset import datasets

    attributes = A.names(args.attributes) or ["age", "occupation"]
    methods = A.names(args.method) or list(METHODS)
    for m in methods:
        if m not in METHODS:
            raise A.UsageError(f"--method: {m!r} is not one of {', '.join(METHODS)}")
    for a in attributes:
        if a not in datasets.ADULT_QIDS:
            raise A.UsageError(f"--attributes: {a!r} is not one of the Adult attributes "
                               f"({', '.join(datasets.ADULT_QIDS)})")
    if len(set(attributes)) != len(attributes):
        raise A.UsageError(f"--attributes: {','.join(attributes)} names an attribute twice")
    l = A.number(str(args.l), "--l", int)
    if l < 2:
        raise A.UsageError(f"--l: expected an integer >= 2, got {args.l!r} (l = 1 publishes "
                           "every value in the clear)")
    if args.plot:
        from ..audit.plot import require_matplotlib
        require_matplotlib()
        # refused before any work, naming --plot, as reconstruct and audit do
        A.check_suffix(args.plot, "--plot", (".png",), "a PNG image")
        A.check_not_input(args.plot, [], flag="--plot")
    seed = A.seed_arg(args.seed)
    allow_clear = A.names(args.allow_clear)
    for a in allow_clear:
        if a not in datasets.ADULT_QIDS:
            raise A.UsageError(f"--allow-clear: {a!r} is not one of the Adult attributes "
                               f"({', '.join(datasets.ADULT_QIDS)})")
    kw = {} if args.max_iter is None else {"max_iter": args.max_iter}
    quiet = getattr(args, "quiet", False)

    timings, results = {}, {}
    with Progress(2 + len(methods), "demo", progress_enabled(args.progress, True, quiet),
                  unit="steps") as prog:
        t0 = time.perf_counter()
        df = datasets.load_adult()
        schema = datasets.adult_schema(df)
        # l_j = min(l, d_j): a two-valued attribute (sex, salary-class) is
        # published as its whole domain, never clipped to l = 1 (in the clear)
        ls = {a.name: min(l, a.d) for a in schema.sensitive}
        pub = anonset.publish(df, anonset.Diversity(ls), schema, seed=seed,
                              research_seed=seed is not None, n_threads=args.threads,
                              allow_clear=allow_clear)
        t_pub = time.perf_counter() - t0
        prog()
        truth = anonset.true_crosstab(df, schema, attributes)
        prog()
        for m in methods:
            t0 = time.perf_counter()
            results[m] = anonset.reconstruct(pub, attributes, m, n_threads=args.threads,
                                             seed=_draws_seed(seed), **kw)
            timings[m] = time.perf_counter() - t0
            prog()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = anonset.audit(pub, df)

    whole = [a.name for a in schema.sensitive if ls[a.name] >= a.d]
    print(f"anonset demo: UCI Adult, {pub.n_rows:,} complete records, {len(schema.sensitive)} "
          f"sensitive columns (age in 10-year bins + 9 categorical); the other "
          f"{len(df.columns) - len(schema.sensitive)} columns dropped")
    print(f"published under frequency ({l},...,{l})-diversity (p = 1, eta_j = l_j) in "
          f"{t_pub:.2f} s with safe defaults: key "
          + ("from the given research seed" if seed is not None else
             "fresh from the operating system (never stored)")
          + ", rows in a random order")
    if pub.info.get("clear"):
        print(f"  {', '.join(pub.info['clear'])}: allowed nearly in the clear (--allow-clear), "
              "as the metadata and the audit say")
    if whole:
        print(f"  {', '.join(whole)}: at most {l} values, so every set is the whole domain "
              "(published, but carrying no information; never clipped into the clear)")

    dims = " x ".join(str(schema[a].d) for a in attributes)
    print()
    cells = f"{dims} = {truth.counts.size}" if len(attributes) > 1 else dims
    print(f"reconstruction of {' x '.join(attributes)} ({cells} cells), error against the "
          "true counts (lower is better):")
    rows = []
    for m in methods:
        mt = anonset.metrics.compare(truth, results[m])
        it = results[m].info.get("iterations")
        conv = results[m].info.get("converged")
        rows.append([m] + [float(mt[k]) for k in ("L1", "L1/N", "L2", "Hellinger")]
                    + ["-" if it is None else f"{it}" + ("" if conv else "*"),
                       f"{timings[m]:.2f} s"])
    A.print_table(rows, ["method", "L1", "L1/N", "L2", "Hellinger", "iterations", "time"])
    if any(not r.info.get("converged", True) for r in results.values()):
        print("  * stopped at the iteration cap before the stopping rule held")
    print("  methods: em is the paper's EM on the counts w (eq. 26-27); exact_em maximizes the "
          "likelihood of\n  each record's whole set tuple; value_adding (eq. 18) and random are "
          "the paper's baselines")

    print()
    head = report.to_text().splitlines()
    print(f"privacy audit of the release (with the original data): {report.verdict}")
    for line in head[1:]:
        if not line.strip():
            break
        print(line)
    eps = report.epsilon
    if eps is not None and len(eps):
        print("  local differential privacy: p = 1 publishing is not differentially private "
              "(epsilon infinite; see docs/security.md)")
    print()
    # the commands run as written from the repository's root (a test runs them)
    print("next: publish your own table (every column needs a role), e.g. the repository's "
          "examples/people.csv:\n"
          "  anonset anonymize examples/people.csv -o published.parquet --identifier name,ssn \\\n"
          "      --sensitive age,job,disease --exact sex --drop zip --l 3 "
          "--bins age=0:20:40:60:120\n"
          "  anonset reconstruct published.parquet --attributes age,disease\n"
          "  anonset audit published.parquet --original examples/people.csv\n"
          "see README.md and docs/cli.md; examples/ holds small input files")
    if args.plot:
        from ..audit.plot import bar_chart
        shown = [results[m] for m in ("em", "exact_em") if m in results] or list(results.values())
        bar_chart(truth, shown, args.plot,
                  title=f"Adult, ({l},...,{l})-diversity: true vs reconstructed "
                        f"{' x '.join(attributes)}")
        print(f"\nwrote {args.plot}")
    return A.EXIT_OK if report.conforms else A.EXIT_FAILED


def _draws_seed(seed):
    """The random baseline's seed (an integer) from ``--seed``: an integer
    as it is, key material through a key derived from it for this purpose
    alone (a 128-bit key was refused as the baseline's seed: H119)."""
    if seed is None or isinstance(seed, int):
        return seed
    from ..io.keys import derive_key, make_key
    key = derive_key(make_key(seed, research_seed=True), "demo-baseline")
    return int.from_bytes(key[:8], "little")
