"""What every subcommand of the ``anonset`` command shares: argument types,
the option groups (column roles, keys, run settings), the one mapping from
library parameter names to command-line flags, and the rendering of errors.

Library errors carry the parameter they are about as data
(:class:`anonset.validate.InputError`); :func:`error_line` renders it with
the flag of this table, so a message never names a Python keyword on the
command line.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import math
import re
import sys
from pathlib import Path

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "UsageError", "FLAGS",
           "flag", "error_line", "split_commas", "names", "kv", "number", "model_value",
           "ground_value", "fill_default", "positive_int", "nonneg_int", "nonneg_float",
           "whole_int",
           "add_roles", "add_key_options", "add_run_options", "key_options", "seed_arg",
           "print_table", "fmt", "format_of", "read_table", "read_settable", "check_not_input",
           "companions",
           "recodes_text", "warn_allowed_recodes",
           "add_allow_identifier", "warn_allowed_identifiers", "identifiers_text"]

EXIT_OK = 0
EXIT_FAILED = 1            # the command ran, and what it checked failed (audit)
EXIT_USAGE = 2             # bad input: one line on stderr, nothing written
EXIT_INTERRUPTED = 130     # SIGINT, SIGTERM or SIGHUP: nothing left half-written

GROUNDS = ("auto", "equal", "ordered", "hierarchical")

#: Library parameter -> the command-line flag (or words) that sets it.
FLAGS = {
    "sensitive": "--sensitive", "exact": "--exact", "identifiers": "--identifier",
    "other": "--other", "drop": "--drop", "bins": "--bins", "domains": "--domain",
    "hierarchies": "--hierarchy", "ordinal": "--ordinal", "missing": "--missing",
    "missing_token": "--missing-token", "clip_l": "--clip-l", "allow_clear": "--allow-clear",
    "allow_recode": "--allow-recode", "allow_identifier": "--allow-identifier",
    "allow_rare": "--allow-rare",
    "allow_shared_id": "--allow-shared-id",
    "keep_order": "--keep-order", "record_id": "--record-id", "params": "--params-from",
    "new_in_series": "--new-in-series", "first_in_series": "--first-in-series",
    "seed": "--seed",
    "research_seed": "--research-seed", "key_file": "--key-file", "seed_env": "--seed-env",
    "rng": "--rng", "n_threads": "--threads", "chunk_rows": "--chunk-rows",
    "l": "--l", "k": "--k", "t": "--t", "ground": "--ground", "entropy": "--entropy",
    "model": "the privacy model (--l, --k or --t)", "input": "input", "output": "-o",
    "input_format": "--input-format", "output_format": "--format", "format": "--format",
    "attributes": "--attributes", "method": "--method", "max_iter": "--max-iter",
    "tol": "--tol", "tol_ll": "--tol-ll", "original": "--original", "data": "the input",
    "schema": "--config",
    "config": "--config", "d": "--d", "qids": "--qids", "algorithm": "--algorithm",
    "estimator": "--estimator", "plot": "--plot", "n_targets": "--targets",
    "known": "--known", "sets": "--sets", "published": "PUBLISHED",
    "standard_errors": "--se",
}


class UsageError(ValueError):
    """A bad combination of options (exit code 2)."""


#: Privacy parameters of one value: given twice on the command line, the
#: last would silently replace the first (argparse), perhaps with a weaker one.
ONCE = ("--l", "--k", "--t", "--d", "--config")

#: Key options: given twice, refused too, without printing their values
#: (key material, H82).
ONCE_SECRET = ("--seed", "--key-file", "--seed-env")


def check_once(argv, sub=None) -> None:
    """Refuse a privacy parameter given twice in the user's own arguments
    (``--l 3 ... --l 2`` published at l = 2, exit 0).  A configuration
    file's options are not in ``argv`` here: the command line still wins
    over them, as documented.  ``sub(command)``: the command's parser (its
    options' metavars tell which take a value per column)."""
    i = next((j for j, a in enumerate(argv) if not a.startswith("-")), None)
    if i is None:
        return
    try:
        cmd = sub(argv[i]) if sub is not None else None
    except (KeyError, AttributeError):
        cmd = None
    metavars = {o: str(a.metavar or "") for a in getattr(cmd, "_actions", ())
                for o in a.option_strings}
    seen = {}
    rest = argv[i + 1:]
    for j, a in enumerate(rest):
        if a == "--":
            break
        name, eq, value = a.partition("=")
        if name.startswith("--") and name not in metavars:
            # argparse takes a unique prefix for its option (--key-fil for
            # --key-file): counted as that option (H83)
            full = [o for o in metavars if o.startswith(name)]
            name = full[0] if len(full) == 1 else name
        if name in ONCE_SECRET:
            if name in seen:
                raise UsageError(f"{name}: given twice, and the last would replace the first "
                                 "(the values are not printed: key material); expected it "
                                 "once")
            seen[name] = ""
            continue
        if name not in ONCE:
            continue
        value = value if eq else (rest[j + 1] if j + 1 < len(rest) else "")
        if name in seen:
            per_column = "COL=" in metavars.get(name, "")
            cols = [{p.partition("=")[0] for p in v.split(",")} for v in (seen[name], value)]
            if per_column and "=" in seen[name] and "=" in value and not cols[0] & cols[1]:
                # other columns each time: one list holds them all (H53)
                raise UsageError(f"{name}: given twice ({seen[name]}, then {value}), and only "
                                 f"the last would count; expected one list: {name} "
                                 f"{seen[name]},{value}")
            per = f" (a value per column goes in one list: {name} COL=V,COL2=V2)" \
                if per_column else ""
            raise UsageError(f"{name}: given twice ({seen[name]}, then {value}), and the last "
                             f"would replace the first; expected it once{per}")
        seen[name] = value


def recodes_text(info) -> str:
    """The recodes a release published because the user named them
    (``allow_recode``), as 'column -> attribute (lambda 1.00)', or ''."""
    from ..passthrough import REFUSED_CHECKS, columns_of, target_of

    def figure(f):
        before = f"; {', '.join(f['series'])} from an earlier release of the series" \
            if f.get("series") else ""
        if f["check"] == "given_away":
            return ", ".join(f"{float(v):.1%} of the rows" for v in f["value"]) + before
        return f"lambda {float(f['value']):.2f}{before}"
    found = info.get("pass_through_risks") or ()
    return ", ".join([f"{'+'.join(columns_of(f))} -> {target_of(f)} ({figure(f)})"
                      for f in found if f.get("allowed") and f.get("check") in REFUSED_CHECKS])


def unmeasured_text(info) -> str:
    """The earlier releases' columns of a series that publishing could not
    measure beside this release's and the user named (``allow_recode``)."""
    return ", ".join(f["column"] for f in info.get("pass_through_risks") or ()
                     if f.get("allowed") and f.get("check") == "series")


def warn_allowed_recodes(info) -> None:
    """The summary's warning lines for the recodes the user allowed, and
    for a series' columns that could not be measured (H81: these were said
    to recode, which nothing had measured)."""
    import logging
    recodes, unmeasured = recodes_text(info), unmeasured_text(info)
    if recodes:
        logging.getLogger("anonset").warning(
            "published nearly in the clear through columns that recode them (you allowed it): "
            "%s", recodes)
    if unmeasured:
        logging.getLogger("anonset").warning(
            "not measured beside this release (you allowed it): %s, published by an earlier "
            "release of the series, which links a record's rows across its releases, so "
            "whatever the two tell together was not checked", unmeasured)


def add_allow_identifier(group) -> None:
    """``--allow-identifier``, as every publishing subcommand with
    pass-through columns takes it."""
    group.add_argument("--allow-identifier", action="append", metavar="A,B",
                       help="pass-through columns you accept to publish although they single "
                            "rows out (half the rows or more hold a value no other row has: a "
                            "name, an ID, a timestamp, a survey weight), which links each row "
                            "to its person wherever the column is known; refused otherwise")


def identifiers_text(info) -> str:
    """The pass-through columns that single rows out which a release
    published because the user named them (``allow_identifier``), as
    'column (share of the rows)', or ''."""
    return ", ".join(f"{f['column']} ({float(f['value']):.1%} of the rows)"
                     for f in info.get("pass_through_risks") or ()
                     if f.get("allowed") and f.get("check") == "identifier")


def warn_allowed_identifiers(info) -> None:
    """The summary's warning line for the pass-through columns that single
    rows out that the user allowed (``allow_identifier``)."""
    found = identifiers_text(info)
    if found:
        import logging
        logging.getLogger("anonset").warning(
            "published columns that single rows out (you allowed it: each links a row to its "
            "person wherever it is known): %s", found)


def add_allow_shared_id(group) -> None:
    """``--allow-shared-id``, as every publishing subcommand takes it."""
    group.add_argument("--allow-shared-id", action="append", metavar="A,B",
                       help="identifier columns whose values several rows share that you "
                            "declare to be different people's rows (a household, a site); "
                            "refused otherwise: one person's rows (panel waves, visits) would "
                            "be published as several people's, whose sets or groups narrow "
                            "down the person's values")


def warn_allowed_clear(info) -> None:
    """The summary's warning line for the sensitive columns the user allowed
    to publish in the clear (``allow_clear``)."""
    clear = info.get("clear") or []
    if clear:
        import logging
        logging.getLogger("anonset").warning(
            "published in the clear or nearly (you allowed it): %s", ", ".join(sorted(clear)))


def warn_allowed_changes(info) -> None:
    """The summary's warning line for the sensitive columns whose value
    differs between one record's rows that the user allowed
    (``allow_clear`` under a record id: ``info.changed_records``)."""
    changed = info.get("changed_records") or {}
    if changed:
        import logging
        logging.getLogger("anonset").warning(
            "published values that change between one record's rows (you allowed it: the "
            "record's other sets link its rows, and whoever knows how a value moved intersects "
            "its sets): %s", ", ".join(f"{c} ({k:,} records)" for c, k in changed.items()))


def warn_allowed_shared_ids(info) -> None:
    """The summary's warning line for the identifiers whose values several
    rows share that the user allowed (``allow_shared_id``)."""
    allowed = info.get("shared_ids_allowed") or []
    if allowed:
        import logging
        shared = info.get("shared_ids") or {}
        logging.getLogger("anonset").warning(
            "published rows that share an identifier's value as different people's (you "
            "allowed it: if they are one person's, linking them narrows down the person's "
            "values): %s", ", ".join(f"{c} ({shared.get(c, 0):,} rows)" for c in allowed))


def warn_allowed_rare(info) -> None:
    """The summary's warning line for the columns with rare values of a
    domain read off the data that the user allowed (``allow_rare``)."""
    rare = info.get("rare") or {}
    if rare:
        import logging
        logging.getLogger("anonset").warning(
            "published with values so rare that counting their sets points at their holders "
            "(you allowed it): %s", ", ".join(
                f"{c} (values in fewer than {f['below']} sets point at their holders)"
                for c, f in rare.items()))


def flag(param: str, value: str | None = None, overrides=None) -> str:
    """The command-line spelling of a library parameter (and its value);
    ``overrides`` holds a subcommand's own spellings (e.g. msa's ``--sa``)."""
    f = (overrides or {}).get(param) or FLAGS.get(param, "--" + param.replace("_", "-"))
    if value is None:
        return f
    f = f.split(" (from ")[0]            # a suggestion is typed on the command line
    try:
        v = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        v = value
    if v is True:
        return f
    if v is False:
        return "--no-" + f[2:]
    from ..validate import option_text
    return option_text(f, v)


def error_line(exc: BaseException, overrides=None) -> str:
    """One line for an error, naming flags rather than Python keywords."""
    from ..validate import InputError
    if isinstance(exc, InputError):
        # line breaks (and the blanks around them) become one space; the
        # blanks inside a quoted column name stay as they are (H66)
        text = exc.render(lambda p, v=None: flag(p, v, overrides))
        return re.sub(r"\s*[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]\s*", " ", text).strip()
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# ================================================================= types
#: What a backslash escapes in a list or COLUMN=VALUE option: a comma, an
#: equals sign, a space or other white space (kept at either end of a name:
#: a spreadsheet's no-break space) and itself; before anything else it is a
#: backslash.
_ESCAPED = ",= \\"


def _scan(text: str) -> list:
    """``text`` as (character, escaped) pairs."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and (text[i + 1] in _ESCAPED
                                                     or text[i + 1].isspace()):
            out.append((text[i + 1], True))
            i += 2
        else:
            out.append((text[i], False))
            i += 1
    return out


def _cut(chars: list, sep: str, maxsplit: int = -1) -> list:
    parts, cur = [], []
    for c, esc in chars:
        if c == sep and not esc and maxsplit != 0:
            parts.append(cur)
            cur = []
            maxsplit -= 1
        else:
            cur.append((c, esc))
    return parts + [cur]


def _strip(chars: list) -> list:
    """Without the spaces at either end that were not written with a backslash."""
    a, b = 0, len(chars)
    while a < b and chars[a][0].isspace() and not chars[a][1]:
        a += 1
    while b > a and chars[b - 1][0].isspace() and not chars[b - 1][1]:
        b -= 1
    return chars[a:b]


def _join(chars: list, keep: str = "", keep_space: bool = False) -> str:
    """The text, its escapes undone but for the characters in ``keep`` (and
    white space, with ``keep_space``)."""
    return "".join("\\" + c if esc and (c in keep or keep_space and c.isspace()) else c
                   for c, esc in chars)


def one_name(text: str) -> str:
    r"""One column name as a list option writes it, its escapes undone but
    nothing cut or stripped (``--sensitive`` of semantic-anonymize, whose
    name a configuration file passes as it is).

    >>> one_name(r"\ job\, title\ "), one_name(" job ")
    (' job, title ', ' job ')
    """
    return "".join(c for c, _ in _scan(text))


def split_commas(text: str, *, keep_empty: bool = False, keys: bool = False) -> list:
    r"""``text`` cut at its commas, each part stripped; a comma inside a
    name or value is written ``\,``, a space at either end of a name ``\ ``
    and a backslash ``\\`` (``--drop 'Revenu\, annuel'``).  With ``keys``
    the parts are COLUMN=VALUE pairs whose other escapes :func:`split_key`
    undoes.

    >>> split_commas(r"a, b\, c,,d")
    ['a', 'b, c', 'd']
    >>> split_commas(r"\ region\ , x\\,y")
    [' region ', 'x\\', 'y']
    """
    parts = [_strip(p) for p in _cut(_scan(text), ",")]
    parts = [_join(p, keep="=\\", keep_space=True) if keys else _join(p) for p in parts]
    return parts if keep_empty else [p for p in parts if p]


def split_key(text: str) -> tuple:
    r"""``COLUMN=VALUE`` cut at its first ``=`` that is not written ``\=``
    (an ``=`` inside a column's name), both stripped; the column's escapes
    undone, the value's kept (a value may be a list, cut later).

    >>> split_key(r"a\=b = 2"), split_key(r"\ a\ =x\,y")
    (('a=b', '2'), (' a ', 'x\\,y'))
    """
    parts = _cut(_scan(text), "=", maxsplit=1)
    if len(parts) < 2:          # its only '=' written \= (a name's own)
        raise UsageError(f"expected COLUMN=VALUE, got {text!r} (an '=' written \\= belongs "
                         "to the column's name)")
    col, val = parts
    return _join(_strip(col)), _join(_strip(val), keep=_ESCAPED, keep_space=True)


def names(values) -> list:
    """Column names from repeated and/or comma-separated option values."""
    out = []
    for v in values or []:
        out.extend(split_commas(v))
    return out


def kv(values, option: str, *, commas: bool = False, form: str = "COLUMN=VALUE") -> dict:
    """``col=value`` pairs from repeated option values (with ``commas``, each
    value may also hold several comma-separated pairs, a comma inside one
    written ``\\,``); ``form``: what a pair looks like, in the refusal."""
    out = {}
    if commas:
        values = [item for v in values or [] for item in split_commas(v, keys=True)]
    for v in values or []:
        if "=" not in v:
            # a column named with a comma split at it ('a,b=0:50' gave 'a')
            raise UsageError(f"{option}: expected {form}, got {v!r}" + (
                " (a comma in a column's name is written \\,)" if commas else ""))
        col, val = split_key(v)
        if not col or not val:
            raise UsageError(f"{option}: expected {form}, got {v!r}")
        if col in out:
            raise UsageError(f"{option}: column {col!r} is given twice ({out[col]!r} and "
                             f"{val!r}); expected one value per column")
        out[col] = val
    return out


def number(text: str, option: str, kind):
    t = str(text).strip()
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


def model_value(text, option: str, kind):
    """``5`` -> 5; ``age=3,job=5`` -> {'age': 3, 'job': 5}; ``3,job=5`` ->
    {None: 3, 'job': 5} (3 for every other column: :func:`fill_default`)."""
    if text is None:
        return None
    if "=" not in text:
        return number(text, option, kind)
    out = {}
    for part in split_commas(text, keys=True):
        if "=" not in part:
            if None in out:
                raise UsageError(f"{option}: expected one default value and COLUMN=VALUE,..., "
                                 f"got {text!r}")
            out[None] = number(part, option, kind)
            continue
        col, val = split_key(part)
        if not col:
            raise UsageError(f"{option}: empty column name in {text!r}")
        if col in out:
            raise UsageError(f"{option}: column {col!r} is given twice ({out[col]:g} and "
                             f"{val}); expected one value per column")
        out[col] = number(val, f"{option} for {col!r}", kind)
    return out


def fill_default(value, columns, option: str):
    """A per-column value with a default (``{None: 3, 'job': 5}``) as one
    value for each of ``columns``; anything else as it is."""
    if not isinstance(value, dict) or None not in value:
        return value
    if not columns:
        raise UsageError(f"{option}: a default value needs the sensitive columns named "
                         "(--sensitive)")
    out = {c: value.get(c, value[None]) for c in columns}
    # a name that is not a sensitive column stays: refused downstream, named
    out.update({c: v for c, v in value.items() if c is not None and c not in out})
    return out


def ground_value(text):
    if text is None:
        return None
    if "=" not in text:
        if text not in GROUNDS:
            raise UsageError(f"--ground: expected one of {', '.join(GROUNDS)}, got {text!r}")
        return text
    out = {}
    for part in split_commas(text, keys=True):
        if "=" not in part:
            if None in out or part not in GROUNDS:
                raise UsageError(f"--ground: expected NAME or [NAME,]COLUMN=NAME,..., got "
                                 f"{text!r}")
            out[None] = part
            continue
        col, val = split_key(part)
        if val not in GROUNDS:
            raise UsageError(f"--ground for {col!r}: expected one of {', '.join(GROUNDS)}, "
                             f"got {val!r}")
        out[col] = val
    return out


def _typed(kind, check, what):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not check(v):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return v
    return parse


positive_int = _typed(int, lambda v: v >= 1, "a positive integer")
nonneg_int = _typed(int, lambda v: v >= 0, "a non-negative integer")
nonneg_float = _typed(float, lambda v: v >= 0, "a number >= 0")
#: any whole number: the library checks its range and names the parameter
whole_int = _typed(int, lambda v: True, "a whole number")


# ========================================================= option groups
def add_roles(p, *, sensitive_help="sensitive columns: published as random sets") -> None:
    """The five roles a column can have; every column needs one."""
    g = p.add_argument_group("column roles (every column of the input needs one)")
    g.add_argument("--sensitive", action="append", metavar="A,B", help=sensitive_help)
    g.add_argument("--exact", action="append", metavar="A,B",
                   help="non-sensitive QIDs, published exactly (paper 004)")
    g.add_argument("--identifier", action="append", metavar="A,B",
                   help="identifiers: never published")
    g.add_argument("--other", action="append", metavar="A,B",
                   help="passed through unchanged (only columns that identify no one and "
                        "reveal nothing sensitive)")
    g.add_argument("--drop", action="append", metavar="A,B", help="dropped")


def add_key_options(p) -> None:
    g = p.add_argument_group("key (default: a fresh key from the operating system, never stored)")
    g.add_argument("--seed", default=None, metavar="S",
                   help="key material of at least 128 bits (32 characters) for a reproducible "
                        "run; anyone who knows it can recover every true value")
    g.add_argument("--seed-env", default=None, metavar="VAR",
                   help="read the seed from environment variable VAR (not on the command line)")
    g.add_argument("--key-file", default=None, metavar="FILE",
                   help="read the key material from FILE (see `anonset keygen`)")
    g.add_argument("--research-seed", action="store_true", default=None,
                   help="accept a seed under 128 bits (research runs on data that is not "
                        "secret; recorded in the metadata and flagged by the audit)")


def key_options(args) -> dict:
    """seed / key_file / research_seed from the key flags (an empty --seed is refused)."""
    from ..io.keys import seed_from_env
    given = [f for f, v in (("--seed", args.seed), ("--seed-env", args.seed_env),
                            ("--key-file", args.key_file)) if v is not None]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)}: give one source of key material")
    seed = args.seed
    if args.seed_env is not None:
        seed = seed_from_env(args.seed_env)
    out = {"seed": seed_arg(seed), "key_file": args.key_file,
           "research_seed": bool(args.research_seed)}
    return out


def seed_arg(text):
    """A seed from the command line: digits are the integer they spell (as in
    Python, ``seed=7``), anything else is text.  An empty seed is refused by
    the library (``--seed "$SECRET"`` with SECRET unset)."""
    if text is None:
        return None
    t = text.strip()
    return int(t) if t.isdigit() and not (len(t) > 1 and t.startswith("0")) else text


def add_run_options(p) -> None:
    p.add_argument("--threads", type=positive_int, default=None, metavar="N",
                   help="kernel threads (default: OpenMP's default); results do not depend on it")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: on long work when stderr is a "
                        "terminal; never with -q)")


# ================================================================= output
def hierarchy_file(col: str, path) -> Path:
    """The file of ``--hierarchy COL=PATH``: an error names the flag, the
    column and whether the path is missing or not a regular file."""
    p = Path(path)
    if not p.is_file():
        what = "is not a regular file" if p.exists() else "does not exist"
        raise UsageError(f"--hierarchy for {col!r}: file {str(path)!r} {what}")
    return p


def print_roles_and_key(info: dict, *, series: str = "for a series, use --key-file and "
                        "--record-id in every release, the first with --first-in-series and "
                        "each later one with --params-from the latest, docs/security.md"
                        ) -> None:
    """The summary lines every set-table publisher prints from its release's
    metadata: the columns not drawn as sets, the key (and the generator where
    it is not the default ChaCha20) and the row order.
    ``series``: how to publish the same records more than once (a fresh key
    is named with it)."""
    roles = info.get("roles", {})
    for role, words in (("other", "passed through unchanged"), ("exact", "published exactly"),
                        ("identifier", "not published (identifiers)"),
                        ("drop", "not published (dropped)")):
        cols = [c for c, r in roles.items() if r == role]
        more = ""
        if role == "drop" and len(cols) > 12:   # a wide file: what is published is listed whole
            cols, more = cols[:10], (f" and {len(cols) - 10:,} more (the metadata's roles "
                                     "list them)")
        if cols:
            print(f"{words}: {', '.join(cols)}{more}")
    if info.get("new_in_series"):
        print(f"new in this series (parameters chosen for this release): "
              f"{', '.join(info['new_in_series'])}")
    if info.get("first_in_series"):
        print("series: the FIRST release of a series under this key (--first-in-series); give "
              "it to the next release with --params-from, which reads it beside its own columns")
    for line in missing_lines(info.get("missing")):
        print(line)
    key = {"os": "a fresh key from the operating system (never stored: releasing these "
                 f"records again under another key lets the two releases be intersected; {series})",
           "seed": "from the given seed or key file (keep it as secret as the data; it "
                   "reproduces this release of this very table, but another table (a "
                   "later wave, rows changed or reordered) or other parameters under it are "
                   "drawn as under another key and can be intersected with these; "
                   f"{series})",
           "research-seed": "a RESEARCH seed under 128 bits (anyone who guesses it recovers "
                            "every true value)",
           "persistent": "the persistent key (same sets for a record in every release; "
                         f"record id: {info.get('record_id')})"}
    rng = info.get("rng") or "chacha20"
    gen = "" if rng == "chacha20" else (
        f"; generator: {rng} (--rng {rng}: not cryptographically strong, an "
        "adversary could in principle predict the sets; the metadata and the audit name it)")
    print(f"key: {key.get(info.get('key'), info.get('key'))}{gen}; rows: "
          + ("in INPUT ORDER (--keep-order)" if info.get("row_order") == "input"
             else "in a random order"))


def missing_lines(record) -> list:
    """The summary's words for missing cells left out or published as a
    value (the metadata's ``missing``), with the flags' spelling."""
    from ..validate import category_words, dropped_rows_words
    dropped, category = dropped_rows_words(record), category_words(record)
    return ([dropped.replace("missing='drop'", "--missing drop")] if dropped else []) + \
        ([category.replace("missing='category'", "--missing category")] if category else [])


def add_missing(p) -> None:
    """--missing {error,category,drop} and --missing-token of the publishers
    with one sensitive table per release (semantic-anonymize, lgb,
    msa-anonymize)."""
    p.add_argument("--missing", choices=("error", "category", "drop"), default="error",
                   help="a missing cell in a published column: error (default), category "
                        "(published as a value of its own, --missing-token; a column of numbers "
                        "refuses it) or drop (leave its row out of the release; the summary, "
                        "the metadata and the audit say how many rows, since absence from the "
                        "release then tells that a person left a column unanswered)")
    p.add_argument("--missing-token", default="?", metavar="TEXT",
                   help="the value that stands for a missing cell with --missing category "
                        "(default '?'; it must not be a real value of the column)")


def check_missing_token(args) -> None:
    """--missing-token only with --missing category: refused, not ignored."""
    if args.missing_token != "?" and args.missing != "category":
        raise UsageError(f"--missing-token {args.missing_token!r} applies to --missing category "
                         "only; expected --missing category with it, or no --missing-token")


def note(args, text: str) -> None:
    """A summary line on stdout, left out under -q (which prints errors only)."""
    if not getattr(args, "quiet", False):
        print(text)


def fmt(v, digits=4) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}" if abs(v) < 10 else f"{v:,.{max(1, digits - 3)}f}"
    return str(v)


def print_table(rows, header, out=None) -> None:
    """A small left/right aligned text table."""
    out = out or sys.stdout
    cells = [[str(c) for c in header]] + [[c if isinstance(c, str) else fmt(c) for c in r]
                                          for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for k, r in enumerate(cells):
        line = "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths)))
        print("  " + line.rstrip(), file=out)
        if k == 0:
            print("  " + "  ".join("-" * w for w in widths), file=out)


# ================================================================== files
def format_of(path, override, option: str) -> str:
    """'csv' or 'parquet', from ``override`` or the file name.  ``option``:
    the option that names the format (--input-format), or the one that
    names the file where the command has no format option for it
    (audit's --original: the name alone says the format, H144)."""
    from ..io.tables import file_format
    name = option.lstrip("-").replace("-", "_")
    if "format" in name:
        return file_format(path, override, param=name)
    return file_format(path, override, named_by=name)


def read_table(path, fmt: str, text_columns=(), declared=None, numbers=()):
    """A whole input table, typed as the engine types CSV text (``declared``:
    per column, the values a domain or hierarchy lists; ``numbers``: columns
    refused where they hold numbers written with commas)."""
    from ..io.tables import check_input_file, read_typed
    return read_typed(check_input_file(path), fmt, text_columns=text_columns,
                      declared=declared, numbers=numbers)


@contextlib.contextmanager
def naming_input(path):
    """Errors about the data read from ``path`` (a column's values, a column
    nobody named) name the file, as ``anonset anonymize``'s do; errors about
    a flag's value name the flag, and the file too where the flag's value is
    one the column's values cannot meet (:class:`~anonset.validate.ValuesError`:
    lgb's --l 3 over a column not 3-eligible, H105)."""
    from ..validate import InputError, ValuesError
    try:
        yield
    except InputError as e:
        if isinstance(e, ValuesError) and e.file is None:
            raise e.in_file(str(path)) from None
        if e.param is None and e.file is None:
            raise e.in_file(str(path)) from None
        if e.param in ("data", "table") and e.file is None:
            # the table itself (an empty one): the file, not 'IN' (H39) nor
            # '--table' (H88)
            raise InputError(e.what, column=e.column, file=str(path), expected=e.expected,
                             row=e.row) from None
        raise


def read_settable(path, fmt):
    """A published table, checked (see :mod:`anonset.io.published`)."""
    from ..io.published import read_settable as read
    return read(path, fmt)


def check_suffix(out, option: str, suffixes: tuple, what: str) -> None:
    """An output whose name does not say the format it gets is refused
    before any work (an HTML page or CSV text under a name ending in
    .parquet or .pdf is a file nothing opens)."""
    if out is not None and not str(out).lower().endswith(suffixes):
        raise UsageError(f"{option}: {str(out)!r} is written as {what}; expected a name "
                         f"ending in {' or '.join(suffixes)}")


def write_frame(frame, out, fmt: str, *, protect=(), private: bool = False,
                outputs=None) -> None:
    """A table of results (a cross-tabulation, rows) written atomically:
    Parquet, or CSV with cells that spreadsheets would run as formulas
    quoted (``outputs``: a release it belongs to, moved into place with
    its other files)."""
    from ..io.atomic import atomic_path
    from ..io.published import csv_safe_frame
    from ..io.tables import csv_output
    with atomic_path(out, protect=protect, private=private, outputs=outputs) as tmp:
        if fmt == "parquet":
            _one_type_per_column(frame).to_parquet(tmp, index=False)
        else:       # r.csv.gz gzipped, as a published table's is (it got plain text)
            with csv_output(tmp, out) as f:
                csv_safe_frame(frame).to_csv(f, index=False)


def _one_type_per_column(frame):
    """A Parquet column holds one type: a domain of numbers and the
    missing-value token ('?', ``--missing category``) is written as text
    (H88: pyarrow refused it after the whole reconstruction)."""
    import pandas as pd
    mixed = [c for c in frame.columns if frame[c].dtype == object and
             pd.api.types.infer_dtype(frame[c], skipna=True) not in ("string", "empty")
             and pd.api.types.infer_dtype(frame[c], skipna=True).startswith("mixed")]
    return frame.assign(**{c: frame[c].map(str, na_action="ignore") for c in mixed}) \
        if mixed else frame


#: Options that name files a command reads (besides its input).
_READ_OPTIONS = ("config", "key_file", "params_from", "matrix", "hierarchy", "domain")


def read_files(args) -> list:
    """Every file a command's options name for reading: its input, config,
    key file, hierarchies, domain lists, distance matrix, earlier release
    (``COL=PATH`` values too; inline lists name no file)."""
    from pathlib import Path
    found = [Path(args.input)] if getattr(args, "input", None) else []
    for opt in _READ_OPTIONS:
        v = getattr(args, opt, None)
        for item in (v if isinstance(v, (list, tuple)) else [v]):
            if not isinstance(item, (str, Path)):
                continue
            # as given, its PATH after 'COL=', and both with '\,' undone as
            # --hierarchy reads it (H87: lgb overwrote 'survey\, 2024/zip.csv')
            texts = {str(item), str(item).split("=", 1)[-1]}
            for text in texts | {t.replace("\\,", ",") for t in texts}:
                try:
                    if text and Path(text).is_file():
                        found.append(Path(text))
                except OSError:         # a long inline list is no file name
                    pass
    return found


def companions(out, fmt: str | None, buckets=()) -> dict:
    """{what: path} of the files written beside the table ``out``."""
    from pathlib import Path
    if out is None:
        return {}
    from ..io.published import CSV_META_SUFFIX
    found = {}
    if fmt == "csv":
        found["the metadata file of -o"] = Path(str(out) + CSV_META_SUFFIX)
    if buckets:
        from ..partition.lgb.core import bucket_table_paths
        for (a, kind), p in bucket_table_paths(out, fmt, buckets).items():
            found[f"the {kind} table of {a!r} beside -o"] = p
    return found


def check_outputs_apart(outputs: dict, args) -> None:
    """Outputs (flag -> path; None: not asked for) that are none of the
    files the command reads and not one file twice, refused before any
    work: a key file, a hierarchy or a domain list named as the output was
    overwritten by lgb, msa-anonymize and semantic-anonymize."""
    from pathlib import Path

    from ..io.atomic import same_file
    inputs = read_files(args)
    given = [(f, Path(p)) for f, p in outputs.items() if p is not None]
    for flag, out in given:
        check_not_input(out, inputs, flag=flag, beside=[p for _, p in given])
    for i, (f1, a) in enumerate(given):
        for f2, b in given[i + 1:]:
            if str(a) == str(b) or same_file(a, b):
                raise UsageError(f"{f1} and {f2} name one file, {str(a)!r}; expected two names "
                                 "(each output is written whole)")


#: The options that name an output file (dest -> its spelling).
_OUTPUT_OPTIONS = {"output": "-o", "path": "FILE", "plot": "--plot", "rows": "--rows",
                   "report": "--report", "out": "--out"}


def check_no_dash_outputs(args) -> None:
    """'-' given as an output is refused before any work (as it is as an
    input): it wrote a file named '-' in the current folder (keygen the
    secret key) where standard output was meant.  ./- still names a file."""
    for dest, flag in _OUTPUT_OPTIONS.items():
        if getattr(args, dest, None) == "-":
            where = "keygen" if flag == "FILE" else flag
            # reproduce's --out names a folder, not a file
            what = "folder" if flag == "--out" else "file"
            raise UsageError(f"{where}: '-' stands for standard output, which anonset does not "
                             "write (outputs are files, written whole, then moved into place); "
                             f"expected a {what} name (./- for a {what} named '-')")


def check_not_input(out, inputs, *, flag: str | None = None, beside=()) -> None:
    """An output that is an input, or in a directory that does not exist, or
    in one this user may not write in (or on a read-only file system), or
    a published CSV release's table whose metadata file it would leave
    (``beside``: the other outputs of the run), is refused before anything
    is written (naming its option, ``flag``, where there are several: msa's
    --report)."""
    from pathlib import Path

    from ..io.atomic import check_folder_writable, check_release_beside, same_file
    who = f"{flag}: " if flag else ""
    for p in inputs:
        if p is not None and same_file(out, p):
            raise UsageError(f"{who}output {str(out)!r} is an input file; choose another name "
                             "(inputs are never overwritten)")
    parent = Path(out).parent
    if str(parent) and not parent.exists():
        raise UsageError(f"{who}output directory {str(parent)!r} does not exist")
    from ..validate import InputError
    # (H157: audit -o printed the whole audit, then refused its folder)
    param = {None: "output", "-o": "output", "--plot": "plot", "--rows": "rows",
             "--report": "report"}.get(flag)
    try:
        check_folder_writable(out, param=param or "output")
    except InputError as e:
        if param:
            raise
        raise UsageError(f"{who}output {str(out)!r} {e.what}; expected {e.expected}") from None
    try:
        check_release_beside(out, beside)
    except InputError as e:
        if not flag:
            raise
        raise UsageError(f"{who}output {str(out)!r} {e.what}; expected {e.expected}") from None
