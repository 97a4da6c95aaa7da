"""What the partition subcommands (``anonset lgb``, paper 002, and ``anonset
msa-anonymize``, paper 003) share: the column-role flags (every input column
needs one), the key and row-order flags, reading the input and checking the
outputs, the line that names the risks a release took, and one error path
that renders library errors with the subcommand's own flags.
"""
from __future__ import annotations

from .args import (add_allow_identifier, add_allow_shared_id, add_missing, check_missing_token,
                   format_of, key_options, read_table, names as _names)

__all__ = ["add_io_arguments", "add_role_arguments", "add_key_arguments", "role_kwargs",
           "key_kwargs", "read_input", "check_outputs", "risk_note", "key_line"]

#: Library parameters and the flags that set them, common to both subcommands.
COMMON_FLAGS = {"identifiers": "--identifier", "other": "--other", "drop": "--drop",
                "missing": "--missing", "missing_token": "--missing-token",
                "seed": "--seed", "seed_env": "--seed-env", "key_file": "--key-file",
                "research_seed": "--research-seed",
                "keep_order": "--keep-order", "hierarchies": "--hierarchy",
                "allow_recode": "--allow-recode", "allow_shared_id": "--allow-shared-id",
                "allow_identifier": "--allow-identifier", "data": "IN"}


def add_io_arguments(p, output_help: str) -> None:
    """IN, -o OUT, --format and --input-format."""
    p.add_argument("input", metavar="IN", help="input table (.csv or .parquet)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=output_help)
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output format (default: from the output's extension)")
    p.add_argument("--input-format", choices=("csv", "parquet"), default=None,
                   help="input format (default: from the input's extension)")
    from .option_file import add_config
    add_config(p)


def add_role_arguments(group, *, other_aliases=()) -> None:
    """--identifier, --other and --drop: the roles of the columns that are
    not attributes."""
    group.add_argument("--identifier", action="append", metavar="A,B",
                       help="identifier columns: never published")
    group.add_argument("--other", *other_aliases, dest="other", action="append", metavar="A,B",
                       help="columns passed through unchanged (published as they are; the "
                            "summary lists them)")
    group.add_argument("--drop", action="append", metavar="A,B",
                       help="columns left out of the release")
    group.add_argument("--allow-recode", action="append", metavar="A,B",
                       help="pass-through columns you accept to publish although they recode "
                            "an attribute (lambda >= 0.9: a sensitive value nearly in the "
                            "clear, or a QI at its exact values); for msa-anonymize also SAs "
                            "that, alone, beside a pass-through column or beside another SA, "
                            "give a QI it generalizes; refused otherwise")
    add_allow_identifier(group)
    add_allow_shared_id(group)
    add_missing(group)


def add_key_arguments(group) -> None:
    """--seed, --seed-env, --key-file, --research-seed and --keep-order."""
    group.add_argument("--seed", metavar="S",
                       help="key material of at least 128 bits (e.g. 32 hex digits): the "
                            "release is then reproducible; keep it as secret as the data "
                            "(default: a fresh key from the OS)")
    group.add_argument("--seed-env", metavar="VAR",
                       help="read the seed from environment variable VAR (not on the command "
                            "line, where other users of the machine can see it)")
    group.add_argument("--key-file", metavar="FILE",
                       help="read the key material from FILE (see `anonset keygen`)")
    group.add_argument("--research-seed", action="store_true",
                       help="accept a seed shorter than 128 bits, for research on data that "
                            "is not secret (the summary says so)")
    group.add_argument("--keep-order", action="store_true",
                       help="publish the rows in input order (and, for lgb, IDs = input row "
                            "numbers): a risk when the input is sorted by a sensitive "
                            "attribute; default: a random order drawn from the key")


def role_kwargs(args) -> dict:
    check_missing_token(args)
    return {"identifiers": _names(args.identifier), "other": _names(args.other),
            "drop": _names(args.drop), "missing": args.missing,
            "missing_token": args.missing_token,
            "allow_recode": _names(args.allow_recode),
            "allow_identifier": _names(args.allow_identifier),
            "allow_shared_id": _names(args.allow_shared_id)}


def key_kwargs(args) -> dict:
    """seed (from --seed, --seed-env or --key-file: one of them), research_seed
    and keep_order."""
    from ..io.keys import read_key_file
    key = key_options(args)
    seed = key["seed"] if key["key_file"] is None else \
        read_key_file(key["key_file"], param="key_file")
    return {"seed": seed, "research_seed": key["research_seed"],
            "keep_order": bool(args.keep_order)}


def read_input(path, fmt_override, text_columns=(), declared=None, numbers=()):
    """The input table and its format (text columns read exactly; a CSV
    cell 'NA' is a value of a column whose ``declared`` values list it,
    as anonymize reads it, H34; ``numbers``: the QIs and sensitive columns,
    refused where they hold numbers written with commas, and warned of where
    a few cells of text make a column of numbers text)."""
    frame = read_table(path, format_of(path, fmt_override, "--input-format"), text_columns,
                       declared, numbers)
    # a column of numbers read as text for a few cells of text: said, with
    # the first such cell (H105: silently generalized to '*')
    from ..io.tables import warn_text_among_numbers
    warn_text_among_numbers(frame, [c for c in numbers if c not in text_columns],
                            file=path, declared=declared or {})
    return frame


def check_outputs(args, outputs: dict, *, fmt: str | None = None, buckets=()) -> None:
    """No output is a file the command reads (its input, key file,
    hierarchies, domain lists, config), nor another output; every output
    directory exists.  The files written beside ``-o`` count as outputs
    too: a CSV table's metadata file (``fmt``: the table's format) and
    LGB's bucket tables of the attributes ``buckets``."""
    from .args import check_outputs_apart, companions
    check_outputs_apart({**outputs, **companions(outputs.get("-o"), fmt, buckets)}, args)




def risk_note(summary: dict, ls: dict | None = None, by_k=None) -> str:
    """The risks a release took by the user's choice, for its summary line."""
    notes = []
    if summary.get("row_order") == "input":
        notes.append("rows in input order (--keep-order)")
    if summary.get("key") == "research-seed":
        notes.append("research seed (--research-seed): guessable")
    if summary.get("suppressed"):
        notes.append("published as '*' (--suppress), telling that the value is one held too "
                     "often: " + ", ".join(f"{a} {c:,} cells" for a, c in
                                          summary["suppressed"].items()))
    if summary.get("pass_through"):
        notes.append("passed through unchanged: " + ", ".join(summary["pass_through"]))
    from .args import identifiers_text, recodes_text
    recodes = recodes_text(summary)
    if recodes:
        notes.append("published nearly in the clear through columns that recode them "
                     f"(--allow-recode): {recodes}")
    ids = identifiers_text(summary)
    if ids:
        notes.append(f"columns that single rows out published unchanged (--allow-identifier): "
                     f"{ids}")
    allowed = summary.get("shared_ids_allowed") or []
    if allowed:
        shared = summary.get("shared_ids") or {}
        notes.append("rows that share an identifier's value published as different people's "
                     "(--allow-shared-id): " + ", ".join(f"{c} ({shared.get(c, 0):,} rows)"
                                                          for c in allowed))
    if summary.get("clear"):
        # lgb: l = 1 (a bucket of one value), k = 1 (a group of one row
        # shows the QI cells of ``by_k``); msa: k = 1 only
        why = {a: [w for w, yes in (("l = 1", (ls or {}).get(a) == 1),
                                     ("k = 1", a in (by_k or ()))) if yes] or ["l = 1"]
               for a in summary["clear"]}
        notes.append("published in the clear (--allow-clear): " + ", ".join(
            f"{a} ({', '.join(why[a])})" for a in summary["clear"]))
    from ..partition.homogeneous import homogeneous_words
    homogeneous = homogeneous_words(summary)
    if homogeneous:
        notes.append(homogeneous)
    from .args import missing_lines
    notes += missing_lines(summary.get("missing"))
    return "".join(f"; {n}" for n in notes)


def key_line(summary: dict) -> str:
    """The key and row-order line of a partition release's summary, as the
    set-table publishers print it (the groups are what a second release of
    the same records under another key changes: docs/security.md)."""
    # and under any key, a release of a table one person apart gives that
    # person's values away by subtraction (every row's values are published,
    # only grouped: H23)
    apart = ("; a release of this table with one person more or less gives that person's "
             "values away by subtracting the two, under any key")
    key = {"os": "a fresh key from the operating system (never stored; another release of "
                 "these records under another key draws another order, other IDs and any "
                 "random choice of groups anew, which can be "
                 "intersected: docs/security.md; one key file reproduces a release" + apart +
                 ")",
           "seed": "from the given seed or key file (keep it as secret as the data; it "
                   "reproduces this release, but other or reordered rows, or other parameters, "
                   "under it draw their order, IDs and any random choice of groups anew (a "
                   "split that depends on the values alone comes out alike), which can be "
                   "intersected: docs/security.md"
                   + apart + ")",
           "research-seed": "a RESEARCH seed under 128 bits (anyone who guesses it can "
                            "re-run the release" + apart + ")"}
    mode = summary.get("key")
    rows = ("in INPUT ORDER (--keep-order)" if summary.get("row_order") == "input"
            else "in a random order")
    return f"key: {key.get(mode, mode)}; rows: {rows}"
