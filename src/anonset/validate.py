"""Every check of a table, its column roles and a privacy model, in one place.

The in-memory path (:func:`anonset.publish`), the streamed path
(:mod:`anonset.stream`) and Dask (:mod:`anonset.dask`) all call these
functions, so they accept and refuse exactly the same inputs.

Errors are :class:`InputError`: a ``ValueError`` that carries what it is
about as data (the parameter, the column, the file) instead of baking a
Python keyword into its text.  The library renders a parameter as the
keyword argument (``clip_l=True``); the command line renders it as its flag
(``--clip-l``) through one table (:mod:`anonset.cli.args`), never by
rewriting messages.
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import os
import re
from typing import Any, Callable, Mapping, Sequence

__all__ = ["InputError", "api_name", "check_int", "check_threads"]

#: ``{@name}`` or ``{@name=value}`` in a message: a reference to a parameter
#: (and the value to give it), rendered by the caller's naming convention.
_REF = re.compile(r"\{@(\w+)(?:=(\{[^{}]*\}|[^}]*))?\}")


def api_name(param: str, value: str | None = None) -> str:
    """How the Python API names a parameter: ``clip_l`` or ``clip_l=True``."""
    return param if value is None else f"{param}={value}"


def cli_escape(x, key: bool = False) -> str:
    r"""A name or value as a list option's reader takes it back: a
    backslash written ``\\``, a comma ``\,``, a space at either end ``\ ``
    and, in a key, an ``=`` ``\=`` (:func:`anonset.cli.args.split_commas`).

    >>> print(cli_escape(" pay, band "), cli_escape("a=b", key=True))
    \ pay\, band\  a\=b
    """
    t = str(x).replace("\\", "\\\\").replace(",", "\\,")
    if key:
        t = t.replace("=", "\\=")
    core = t.strip()
    if core != t:           # white space at either end (a no-break space too)
        lead, trail = t[:len(t) - len(t.lstrip())], t[len(t.rstrip()):]
        t = "".join("\\" + c for c in lead) + core + "".join("\\" + c for c in trail) \
            if core else "".join("\\" + c for c in t)
    return t


def option_text(option: str, value) -> str:
    """``option`` and ``value`` as typed on the command line: a list cut at
    commas, a mapping as COLUMN=VALUE pairs, a comma inside a name or value
    written ``\\,`` and an ``=`` inside a key ``\\=`` (as the options'
    readers cut them), the whole quoted for the shell where it needs it, so
    that a suggestion can be typed as given (H18: `--l Wage, hourly=3`).

    >>> option_text("--allow-clear", ["job title", "pay, band"])
    "--allow-clear 'job title,pay\\\\, band'"
    >>> option_text("--t", {"a=b": 0.3, "c": 0.2})
    "--t 'a\\\\=b=0.3,c=0.2'"
    """
    import shlex

    esc = cli_escape
    if isinstance(value, (list, tuple)):
        text = ",".join(esc(x) for x in value)
    elif isinstance(value, Mapping):
        text = ",".join(f"{esc(a, key=True)}={esc(b)}" for a, b in value.items())
    else:
        text = str(value)
    return f"{option} {shlex.quote(text)}"


#: A number written with a decimal comma ('354,94'; '1,234' too, which a
#: comma-separated file would write as thousands).
DECIMAL_COMMA = re.compile(r"^[ \t]*[+-]?\d+,\d+[ \t]*$")
#: A number written with thousands separators ('1,234', '12,345,678.5').
THOUSANDS_COMMA = re.compile(r"^[ \t]*[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?[ \t]*$")


def comma_kind(values, sep: str | None = None) -> str:
    """'thousands' or 'decimal': what the comma of numbers written with one
    (``values``, each a decimal comma or thousands separators) is, where the
    file's field separator is ``sep`` (None: not a CSV file).  Thousands
    where one of them can be nothing else ('12,345,678', '1,234.5'), or,
    in a comma-separated file (which quotes them), where every one has
    groups of three digits ('33,000'); else a decimal comma, which
    spreadsheets set to one write in ';'-separated files."""
    vals = [str(v) for v in values]
    if any(THOUSANDS_COMMA.match(v) and not DECIMAL_COMMA.match(v) for v in vals):
        return "thousands"
    if sep in (",", None) and vals and all(THOUSANDS_COMMA.match(v) for v in vals):
        return "thousands"
    return "decimal"


def comma_conversion(kind: str, sep: str | None = None) -> str:
    """The pandas call that reads a CSV file whose numbers are written
    with a comma of ``kind`` (:func:`comma_kind`) and field separator
    ``sep`` (None: unknown, a ';' file of a decimal comma assumed), as it
    can be typed."""
    if sep is None:
        sep = ";" if kind == "decimal" else ","
    arg = "" if sep == "," else f"sep={sep!r}, "
    return f"pandas.read_csv(path, {arg}{'thousands' if kind == 'thousands' else 'decimal'}=',')"


def numbers_expected(value, sep: str | None = None) -> str:
    """What a numeric column expected instead of the text ``value``: a
    number written with a comma (a decimal comma, '3,5', as spreadsheets
    set to one write it; thousands separators, '33,000') is named, with
    the conversion for a file whose field separator is ``sep`` (None: not
    known)."""
    v = str(value).strip()
    if DECIMAL_COMMA.match(v) or THOUSANDS_COMMA.match(v):
        kind = comma_kind([v], sep)
        what = "a decimal comma" if kind == "decimal" else "thousands separators"
        return (f"numbers with a decimal point (the file writes them with {what}: "
                f"convert it, e.g. {comma_conversion(kind, sep)}"
                ".to_csv(out, index=False))")
    return "numbers"


def row_name(i: int) -> str:
    """A row as error messages name it: counted from 1, the header not
    counted, whatever the path (row 1 is a file's first data row, a
    DataFrame's ``iloc[0]``)."""
    return f"row {int(i) + 1:,}"


class InputError(ValueError):
    """Bad input, refused before any work is done.

    Parameters
    ----------
    what : str
        What is wrong, in words.  It may refer to other parameters as
        ``{@name}`` or ``{@name=value}``; they are rendered as keyword
        arguments in Python and as flags on the command line.
    param : str, optional
        The parameter the error is about (the keyword argument's name).
    column : str, optional
        The column the error is about.
    file : str or path, optional
        The file the error is about.
    expected : str, optional
        What was expected instead.
    row : int, optional
        The global row (from 0) the error is about, where it is about one:
        of the errors a block of rows raises, the first row's is reported,
        so that a table read whole or in blocks is refused alike.

    Examples
    --------
    >>> e = InputError("is below 2", param="l", column="age",
    ...                expected="an integer >= 2, or {@allow_clear=['age']}")
    >>> str(e)
    "l: column 'age': is below 2; expected an integer >= 2, or allow_clear=['age']"
    >>> e.render(lambda p, v=None: "--allow-clear age" if p == "allow_clear" else "--" + p)
    "--l: column 'age': is below 2; expected an integer >= 2, or --allow-clear age"
    """

    def __init__(self, what: str, *, param: str | None = None, column: Any = None,
                 file: str | os.PathLike | None = None,
                 expected: str | None = None, row: int | None = None):
        self.what, self.param, self.column = what, param, column
        self.row = None if row is None else int(row)
        self.file = None if file is None else str(file)
        self.expected = expected
        super().__init__(self.render(api_name))

    def render(self, name: Callable[..., str]) -> str:
        """The message, naming parameters with ``name(param[, value])``."""
        def sub(text):
            return _REF.sub(lambda m: name(m.group(1), m.group(2)) if m.group(2) is not None
                            else name(m.group(1)), text)
        parts = []
        if self.file is not None:
            parts.append(repr(self.file))
        if self.param is not None:
            parts.append(name(self.param))
        if self.column is not None:
            parts.append(f"column {self.column!r}")
        msg = ": ".join(parts + [sub(self.what)])
        if self.expected:
            msg += f"; expected {sub(self.expected)}"
        return msg

    def __str__(self):
        return self.args[0] if self.args else self.render(api_name)

    def in_file(self, file: str | os.PathLike | None) -> "InputError":
        """This error naming ``file`` too (itself where it names a file, or
        ``file`` is None)."""
        if file is None or self.file is not None or self.param in ("key_file", "seed_env",
                                                                     "seed"):
            return self         # a key's error is not the input file's (H83)
        return InputError(self.what, param=self.param, column=self.column, file=file,
                          expected=self.expected, row=self.row)

    def __reduce__(self):        # picklable across Dask workers
        return (_rebuild, (self.what, self.param, self.column, self.file, self.expected,
                           self.row))


def _rebuild(what, param, column, file, expected, row=None):
    return InputError(what, param=param, column=column, file=file, expected=expected, row=row)


class ValuesError(InputError):
    """An :class:`InputError` about a column's values that a parameter's
    value cannot meet (a sensitive column not 3-eligible under ``l=3``):
    it names the parameter, and on the command line the input file too,
    as the refusals of a column's values do (H105: lgb's named no file).
    Rebuilt as a plain InputError across processes; by then it names its
    file."""


def first_row_error(errors: list) -> "InputError":
    """Of the errors of one block's columns (in column order), the one about
    the first row; an error about no row in particular comes first."""
    return min(errors, key=lambda e: -1 if e.row is None else e.row)


def check_int(value, param: str, *, minimum: int | None = None, column=None) -> int:
    """``value`` as a Python int: ints and NumPy integer scalars are accepted,
    bools and integral floats are not."""
    import numbers
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"got {value!r}", param=param, column=column,
                         expected="an integer" + (f" >= {minimum}" if minimum is not None else ""))
    v = int(value)
    if minimum is not None and v < minimum:
        raise InputError(f"got {v}", param=param, column=column, expected=f"an integer >= {minimum}")
    return v


#: Most kernel threads asked for (a C int holds the count; no machine has more).
MAX_THREADS = 4096


def check_threads(n_threads) -> int:
    """``n_threads`` as the kernels take it: None -> 0 (OpenMP's default),
    else a positive int of at most :data:`MAX_THREADS`."""
    if n_threads is None:
        return 0
    v = check_int(n_threads, "n_threads", minimum=1)
    if v > MAX_THREADS:
        raise InputError(f"got {v}", param="n_threads",
                         expected=f"an integer from 1 to {MAX_THREADS:,}")
    return v


#: Most classes an audit measures exactly (each a drawn row's class: more
#: than this asks for memory that no table needs).
MAX_CLASSES = 10_000_000


def check_n_classes(n_classes) -> int:
    v = check_int(n_classes, "n_classes", minimum=1)
    if v > MAX_CLASSES:
        raise InputError(f"got {v:,}", param="n_classes",
                         expected=f"an integer from 1 to {MAX_CLASSES:,}")
    return v


def reads_as_number(v) -> bool:
    """Whether ``v`` is text that Python reads as a number ('3', '-1.5e3')."""
    if not isinstance(v, str):
        return False
    try:
        float(v)
        return True
    except ValueError:
        return False


def check_path(path, param: str):
    """A file name: text or an ``os.PathLike`` (None, a number or an open
    file is named, not a TypeError from deep in the writer)."""
    if isinstance(path, (str, os.PathLike)) and str(path):
        return path
    raise InputError(f"got {type(path).__name__ if not isinstance(path, str) else 'an empty name'}"
                     + (f" {path!r}" if isinstance(path, (int, float)) else ""), param=param,
                     expected="a file name (a str or a pathlib.Path)")


def check_real(value, param: str, *, minimum: float | None = None, positive: bool = False,
               maximum: float | None = None) -> float:
    """A finite real number (not a bool), within the bounds given."""
    import math
    import numbers
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not math.isfinite(float(value)):
        raise InputError(f"got {value!r}", param=param, expected="a finite number")
    v = float(value)
    if (positive and v <= 0) or (minimum is not None and v < minimum) or \
            (maximum is not None and v > maximum):
        lo = "> 0" if positive else f">= {minimum:g}" if minimum is not None else None
        hi = f"<= {maximum:g}" if maximum is not None else None
        raise InputError(f"got {value!r}", param=param,
                         expected="a number " + " and ".join(x for x in (lo, hi) if x))
    return v


def check_settable(table, param: str = "table") -> None:
    """A published table (a SetTable, or a published file's header), not
    the data or a schema."""
    import pandas as pd
    if not isinstance(table, pd.DataFrame) and hasattr(table, "params") and \
            hasattr(table, "schema"):
        return
    hint = {True: ": that is data, not a release (anonset.publish makes a SetTable of it; "
                  "anonset.read_parquet / read_csv read a published file)"}.get(
        isinstance(table, pd.DataFrame), "")
    if type(table).__name__ == "Schema":
        hint = ": a schema describes a release; pass the SetTable itself"
    raise InputError(f"got a {type(table).__name__}{hint}", param=param,
                     expected="a SetTable (a published table)")


def check_schema(schema, param: str = "schema"):
    """A Schema; a SetTable stands for its own."""
    if type(schema).__name__ in ("SetTable", "TableHeader"):
        schema = schema.schema
    if type(schema).__name__ == "Schema" and hasattr(schema, "published"):
        return schema
    raise InputError(f"got {type(schema).__name__}", param=param,
                     expected="an anonset.Schema (a release's .schema, or "
                              "anonset.datasets.adult_schema(...) and the like)")


def check_sampling_seed(seed, param: str = "seed"):
    """The seed of an audit's samples (victims, classes; not key material):
    None, an integer >= 0, or a NumPy Generator or SeedSequence."""
    import numbers

    import numpy as np
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        # never echoed: a publication's key given here by mistake (H87)
        got = "a negative integer" if isinstance(seed, numbers.Integral) and not isinstance(
            seed, bool) else ("text (not printed: it may be key material)"
                              if isinstance(seed, (str, bytes)) else repr(seed)
                              if isinstance(seed, float) else type(seed).__name__)
        raise InputError(f"got {got}", param=param,
                         expected="None or an integer >= 0 (the seed of a sample or a "
                                  "baseline's draws, not of the publication)")
    return int(seed)


def release_sample_seed(seed, table):
    """The seed of an audit's samples: ``seed`` where given (checked), else
    one derived from the release (its row count, its attributes' p, eta
    and d, its key check), so that one release gets one audit, in memory
    and from its file alike: a risk flagged near its threshold was flagged
    on some runs and not on others."""
    seed = check_sampling_seed(seed)
    if seed is not None:
        return seed
    import hashlib
    import json
    info = getattr(table, "info", None) or {}
    facts = {"n": int(table.n_rows), "key_check": info.get("key_check"),
             "params": [[n, float(p.p), int(p.eta), int(p.d)]
                        for n, p in sorted(table.params.items())]}
    digest = hashlib.blake2b(json.dumps(facts, sort_keys=True).encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "little")


# ---------------------------------------------------------------- roles
#: Roles a column of an input table can have, and the keyword argument (the
#: flag on the command line) that gives a column each of them.
ROLE_PARAMS = {"identifier": "identifiers", "sensitive": "sensitive", "exact": "exact",
               "other": "other", "drop": "drop"}


def check_columns(columns, *, file=None) -> list:
    """Column names must be non-empty strings, each given once."""
    cols = list(columns)
    for c in cols:
        if not isinstance(c, str) or not c.strip():
            # (H149: pandas' to_csv() writes the index first, under no name)
            first = c == "" and cols.index(c) == 0 and file is not None
            raise InputError(f"has an empty or non-text column name {c!r}", file=file,
                             expected="a non-empty name for every column" + (
                                 " (a first column with no name is the row labels pandas' "
                                 "to_csv() writes: write the file with index=False, or name "
                                 "that column)" if first else ""))
    if len(set(cols)) != len(cols):
        dup = sorted({c for c in cols if cols.count(c) > 1})
        raise InputError(f"names the column(s) {dup} more than once", file=file,
                         expected="each column name once (a repeated name would publish a "
                                  "column nobody named)")
    return cols


def check_word_names(published, columns, *, file=None) -> None:
    """A published attribute of more than 64 values is stored as 64-bit
    words named ``name#0``, ``name#1``, ... (:func:`anonset.randomized.
    settable.mask_columns`): a published or pass-through column of such a
    name would be taken for one of them (overwritten, or a duplicate field),
    so it is refused, whatever the domain turns out to be."""
    words = set(published)
    for c in columns:
        base, sep, k = str(c).rpartition("#")
        if sep and k.isdigit() and base in words:
            raise InputError(f"is how anonset names word {k} of the sets of {base!r} (stored as "
                             f"64-bit words where its domain has more than 64 values), so it "
                             f"would be taken for one of them", column=c, file=file,
                             expected="another name for the column (rename it)")


#: The columns without a role a refusal names one by one (the remedy lists all).
_ROLELESS_SHOWN = 10


def check_output_names(published: Mapping, reserved: Mapping, *, file=None) -> None:
    """A published column named as one of the columns the publisher writes
    itself (LGB's ``ID``, ``GID`` and ``<attr>_bid``, msa's ``ec``) is
    refused: it replaced that column, and the release no longer said what
    it was (H34: the audit then passed classes measured on a QI's values).
    ``published``: {param: column names}; ``reserved``: {name: what the
    publisher writes under it}."""
    for param, names in published.items():
        for c in names or ():
            if c in reserved:
                raise InputError(f"has the name of the release's {reserved[c]}, which the "
                                 "publisher writes itself", column=c, param=param, file=file,
                                 expected="the column renamed before publishing")


def resolve_roles(columns, named, *, file=None) -> dict:
    """Every column's role, as the caller named it: ``{column: param}``.

    Parameters
    ----------
    columns : the table's column names, in order
    named : {param: column names}
        The keyword arguments that give roles (``sensitive``, ``identifiers``,
        ... or a publisher's own, e.g. ``qi``), each with the columns it names:
        a publisher passes every role argument it accepts, even empty ones
        (the error lists them as the ways to give a role).

    A column nobody named is refused, listing every such column and the
    arguments that give a role: no column is ever published, passed through
    or dropped by default.  A name not in the data, or a column named by
    two arguments, is refused too.

    Examples
    --------
    >>> resolve_roles(["id", "age"], {"identifiers": ["id"], "sensitive": ["age"]})
    {'id': 'identifiers', 'age': 'sensitive'}
    >>> resolve_roles(["id", "age", "ssn"], {"sensitive": ["age"]})
    Traceback (most recent call last):
    ...
    anonset.validate.InputError: 2 columns have no role: 'id', 'ssn'; expected each named in one of identifiers, sensitive, exact, other (passed through unchanged) or drop (to leave them all out: drop=['id', 'ssn'])
    """
    cols = check_columns(columns, file=file)
    roles: dict = {}
    for param, names in named.items():
        if isinstance(names, str):
            names = [names]
        for c in names or ():
            if c not in cols:
                raise InputError(f"names {c!r}, which is not a column of the data"
                                 + close_match(c, cols), param=param, file=file,
                                 expected=f"one of {cols}" + comma_hint(cols))
            if c in roles:
                raise InputError(f"is named by both {{@{roles[c]}}} and {{@{param}}}",
                                 column=c, file=file, expected="one role per column")
            roles[c] = param
    unnamed = [c for c in cols if c not in roles]
    if unnamed:
        if list(named) == ["schema"]:      # a schema takes no role arguments beside it
            expected = ("each column in the schema, with its role (an Attribute with role "
                        "'identifier', 'other' or 'drop' for a column not to publish)")
        else:
            # the common roles, or the publisher's own: every role it accepts
            params = list(ROLE_PARAMS.values()) if set(named) <= set(ROLE_PARAMS.values()) \
                else list(named)
            listed = ", ".join(f"{{@{p}}}" + (" (passed through unchanged)" if p == "other"
                                              else "") for p in params[:-1])
            expected = f"each named in one of {listed} or {{@{params[-1]}}}"
            if "drop" in params and not any("," in c or "}" in c for c in unnamed):
                # ready to paste: leaving a column out never publishes it
                expected += f" (to leave them all out: {{@drop={unnamed!r}}})"
        shown = ", ".join(repr(c) for c in unnamed[:_ROLELESS_SHOWN])
        if len(unnamed) > _ROLELESS_SHOWN:   # a wide file: the paste-ready list has them all
            shown += f" and {len(unnamed) - _ROLELESS_SHOWN:,} more"
        raise InputError(f"{len(unnamed)} column{'s' if len(unnamed) > 1 else ''} "
                         f"ha{'ve' if len(unnamed) > 1 else 's'} no role: " + shown,
                         file=file, expected=expected)
    return {c: roles[c] for c in cols}


# ------------------------------------------------------------ arguments
def check_choice(value, param: str, choices) -> str:
    if value not in choices:
        raise InputError(f"got {value!r}", param=param, expected="one of " + ", ".join(choices))
    return value


def check_progress(value, param: str = "progress"):
    """A progress callback: None or a callable (called with a row count)."""
    if value is not None and not callable(value):
        raise InputError(f"got {value!r}", param=param,
                         expected="a callable taking a number of rows, or None")
    return value


def check_bool(value, param: str) -> bool:
    import numpy as np
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"got {value!r}", param=param, expected="True or False")


def check_names(value, param: str) -> tuple:
    """Column names given as one name or a sequence of names.  A set's are
    taken in sorted order: its own order changes from run to run (text is
    hashed anew in each), and an order that decides the work (LGB's and
    msa's quasi-identifiers: which attribute a tie splits on) would make one
    seed's release another in the next run."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=repr)
    try:
        names = tuple(value)
    except TypeError:
        raise InputError(f"got a {type(value).__name__}", param=param,
                         expected="a column name or a list of column names") from None
    for n in names:
        if not isinstance(n, str) or not n:
            raise InputError(f"holds {n!r}", param=param, expected="column names (text)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"names {dup} twice", param=param, expected="each column once")
    return names


def check_value_list(values, param: str, column, what: str) -> None:
    """A declared domain, order or bins: values in an order the caller
    fixed.  Text is refused (it would be read a character at a time, as
    'abc' gave the domain a, b, c), and so is a set: its order is not the
    caller's, and Python orders text in a set differently in each run, so one
    seed would draw other sets from one run to the next."""
    if isinstance(values, (str, bytes)):
        raise InputError(f"got the text {values!r}", param=param, column=column,
                         expected=f"a list of {what} (a list, tuple or array)")
    if isinstance(values, (set, frozenset)):
        raise InputError("got a set, which has no order of its own (a set of text is ordered "
                         "anew in each run: one seed would draw other sets)",
                         param=param, column=column,
                         expected=f"a list of {what} in their order, e.g. sorted(...)")
    if hasattr(values, "keys"):
        raise InputError(f"got a {type(values).__name__}", param=param, column=column,
                         expected=f"a list of {what}")
    try:
        iter(values)
    except TypeError:
        raise InputError(f"got an object of type {type(values).__name__}", param=param,
                         column=column, expected=f"a list of {what}") from None


def check_model(model) -> None:
    from .models import Anonymity, Closeness, Diversity, DiversityCloseness
    if not isinstance(model, (Diversity, Anonymity, Closeness, DiversityCloseness)):
        raise InputError(f"got a {type(model).__name__}", param="model",
                         expected="Diversity, EntropyDiversity, Anonymity, Closeness or "
                                  "DiversityCloseness")


def check_model_columns(model, sensitive, published) -> None:
    """A per-attribute model value must name exactly the sensitive columns."""
    from collections.abc import Mapping
    for param in ("l", "k", "t", "ground"):
        v = getattr(model, param, None)
        if not isinstance(v, Mapping):
            continue
        for col in v:
            if col not in sensitive:
                why = "an exact (published as is) column" if col in published else \
                    "not a sensitive column"
                raise InputError(f"names {col!r}, which is {why}", param=param,
                                 expected=f"values for the sensitive columns {list(sensitive)}")
        if param != "ground":
            lacking = [c for c in sensitive if c not in v]
            if lacking:
                raise InputError(f"gives no value for the sensitive column {lacking[0]!r}",
                                 param=param,
                                 expected="one value for all, or one per sensitive column")


# ------------------------------------------------------------ resources
#: Largest domain the set sampler supports (its draws are 16-bit).
MAX_DOMAIN = 65536
#: Largest domain of an attribute under closeness: the worst-case search of
#: Algorithm 1 holds tables of d x d numbers (about 5 d^2 x 8 bytes: 670 MB at
#: d = 4,096; 36 GB at d = 30,000) and its time grows faster still.
CLOSENESS_MAX_D = 4096


def domain_too_large(column, d, *, file=None, more=False, row=None) -> InputError:
    """``row``: the global row whose value is the first beyond the limit
    (so that a table read whole or in blocks names the same first error)."""
    at = "" if row is None else f" (the {MAX_DOMAIN + 1:,}th first at {row_name(row)})"
    return InputError(f"has more than {MAX_DOMAIN:,} distinct values{at}" if more else
                      f"has {d:,} values", column=column, row=row,
                      file=file, expected=f"at most {MAX_DOMAIN:,} (the set sampler's limit): "
                                          "generalize it with {@bins} or a {@hierarchies} level")


def check_domain_size(attr, *, file=None) -> None:
    if attr.d > MAX_DOMAIN:
        raise domain_too_large(attr.name, attr.d, file=file)


def check_closeness_size(attr, *, file=None) -> None:
    if attr.d > CLOSENESS_MAX_D:
        gib = 5 * attr.d * attr.d * 8 / 2 ** 30
        raise InputError(f"has {attr.d:,} values; the closeness search of Algorithm 1 would need "
                         f"about {gib:.1f} GiB", column=attr.name, file=file,
                         expected=f"at most {CLOSENESS_MAX_D:,} values under closeness: generalize "
                                  "it with {@bins} or a {@hierarchies} level")


_TEMPORAL_EXPECTED = ("text, numbers or booleans to publish as sensitive or exact: convert it "
                      "(e.g. to ISO text 'YYYY-MM-DD', which keeps the order, or to a year or "
                      "month number to bin), or pass it through ({@other}) or drop it ({@drop})")

#: The same for the publishers that generalize or measure values (msa, LGB,
#: the baselines, semantic diversity): ISO text is an unordered category to
#: them, which msa generalized to '*' on every row (H77); a number is cut
#: into ranges.
_TEMPORAL_PARTITION = ("numbers or text: convert it to a number (e.g. days since a date, a "
                       "year or a month number), which keeps its order and distances (text "
                       "such as 'YYYY-MM-DD' is a category without an order here), or pass "
                       "it through ({@other}) or drop it ({@drop})")


def check_original_columns(names, have, *, file=None) -> None:
    """The original given for a publication holds each published column
    (else the wrong table was given); the same words on every path."""
    have = set(have)
    lacking = [n for n in names if n not in have]
    if lacking:
        raise InputError(f"lacks the column {lacking[0]!r} of the publication", param="original",
                         file=file, expected="the original table of this publication")


def alphabetical_order(values, shown: int = 6) -> str:
    """How sorting a column's text values would order them, in the column's
    own words: "'0' < '1-2' < '10-19' < '20-29' < ... (9 values)", so that a
    refusal shows the user the order they would have got."""
    vs = sorted({str(v) for v in values})
    head = " < ".join(repr(v) for v in vs[:shown])
    more = f" < ... ({len(vs):,} values)" if len(vs) > shown else ""
    return f"it would read {head}{more}"


def check_ordered_ground(attr, ground: str, *, file=None, sorted_order: bool = False,
                         declared_order: bool = False) -> None:
    """'ordered' named for a text attribute whose order would come from
    sorting its values alphabetically (``sorted_order``: its domain is an
    unordered Categorical's categories, sorted): refused, as for an ordinal
    column (t under a made-up order does not mean what the user reads).
    ``declared_order``: an ordered Categorical's categories, the user's
    order, even where every category is someone's (a domain read off the
    data for the rare-value checks, not its order: H19)."""
    if ground != "ordered" or declared_order or not (attr.inferred or sorted_order) \
            or attr.domain is None:
        return
    if any(isinstance(v, str) for v in attr.domain if v != attr.missing):
        raise InputError("has ground 'ordered', but its order would come from sorting its text "
                         "values alphabetically ("
                         + alphabetical_order(v for v in attr.domain if v != attr.missing)
                         + ")", param="ground", column=attr.name, file=file,
                         expected="the order declared ({@domains} listing its values in order;"
                                  " in Python also ordinal={column: [values in order]} or an "
                                  "ordered Categorical), or another ground")


def check_no_missing(frame, columns, *, file=None) -> None:
    """Refuse missing cells (semantic diversity, LGB, msa by default): the
    count and the first row."""
    import numpy as np
    import pandas as pd
    for c in columns:
        na = frame[c].isna().to_numpy()
        if na.any():
            first = int(np.flatnonzero(na)[0])
            t = frame[c].dtype
            # a category has no place among numbers (apply_missing refuses it)
            numbers = pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
            own = "" if numbers else \
                "publish them as a value of their own ({@missing='category'}), "
            raise InputError(f"has {int(na.sum()):,} missing value(s) (first at {row_name(first)})",
                             column=c, file=file,
                             expected=f"no missing values: impute them first, {own}"
                                      "or {@missing='drop'} to leave those rows out of the "
                                      "release (the summary, the metadata and the audit say "
                                      "how many)")


def missing_rows(frame, columns) -> tuple:
    """(bool per row: a missing cell in one of ``columns``, {column: missing
    cells} for the columns that have any)."""
    import numpy as np
    na = np.zeros(len(frame), dtype=bool)
    per = {}
    for c in columns:
        m = frame[c].isna().to_numpy()
        if m.any():
            per[c] = int(m.sum())
            na |= m
    return na, per


def apply_missing(frame, columns, missing, *, token: str = "?", file=None):
    """The missing-value policy of the partition publishers and semantic
    diversity (LGB, msa, paper 001): ``missing`` None or 'error' refuses a
    missing cell in ``columns`` (:func:`check_no_missing`); 'category'
    publishes it as the value ``token``, a value of its own, as
    ``anonset.publish`` does; 'drop' leaves the rows that have one out of the
    release.

    'category' refuses a column of numbers with missing cells (a category
    has no place among numbers that are ordered, averaged or cut into
    intervals) and a column with missing cells that holds ``token`` as a
    value already (the two would be one value); a column it fills is text
    (booleans become 'True' and 'False').

    Returns ``(frame, record)``: the rows kept (renumbered) or filled, and
    what the metadata records, ``{'policy': 'drop', 'rows': n, 'columns':
    {column: missing cells}}`` with the count left out (0 when none was
    missing), or ``{'policy': 'category', 'token': token, 'columns': {...}}``.
    Leaving rows out tells that whoever is in the release answered every
    published column; the summary and the audit say so."""
    policy = check_choice("error" if missing is None else missing, "missing",
                          ("error", "category", "drop"))
    if token != "?" and policy != "category":       # it would be ignored: refused, as publish does
        raise InputError(f"is {token!r}, which only {{@missing='category'}} uses",
                         param="missing_token", expected="{@missing='category'} with it, or no {@missing_token}")
    columns = list(columns)
    if policy == "error":
        check_no_missing(frame, columns, file=file)
        return frame, {"policy": "error"}
    na, per = missing_rows(frame, columns)
    if policy == "category":
        return _missing_category(frame, per, token, file=file)
    if na.all():
        raise ValuesError(f"every one of its {len(frame):,} rows has a missing value in "
                         + ", ".join(repr(c) for c in per), param="missing", file=file,
                         expected="rows with a value in every published column")
    if na.any():
        frame = frame.loc[~na].reset_index(drop=True)
    return frame, {"policy": "drop", "rows": int(na.sum()), "columns": per}


def _missing_category(frame, per: dict, token, *, file=None):
    """missing='category': the missing cells of the columns in ``per``
    become ``token`` (a copy of ``frame``; the caller's is left as it is)."""
    import numpy as np
    import pandas as pd
    if not isinstance(token, str) or not token:
        raise InputError(f"got {token!r}", param="missing_token", expected="a non-empty string")
    if per:
        frame = frame.copy()
    for c, n in per.items():
        col = frame[c]
        na = col.isna().to_numpy()
        first = row_name(int(np.flatnonzero(na)[0]))
        if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
            raise InputError(f"is a column of numbers with {n:,} missing value(s) (first at "
                             f"{first}): a missing-value category has no place among numbers "
                             "that are ordered, averaged or cut into intervals", column=c,
                             file=file, expected="imputed values, or {@missing='drop'} to leave "
                                                 "those rows out (the summary, the metadata "
                                                 "and the audit say how many)")
        col = _as_text(col)
        if bool((col == token).any()):
            raise InputError(f"holds the value {token!r}, which is the missing-value token, and "
                             f"has {n:,} missing cell(s): the two would publish as one value",
                             column=c, file=file, expected="another {@missing_token}")
        frame[c] = _filled(col, token)
    return frame, {"policy": "category", "token": token, "columns": dict(per)}


def _as_text(col):
    """A column as text (booleans 'True', 'False'), its missing cells still
    missing: pandas' string dtypes and text categories as they are."""
    import pandas as pd
    if isinstance(col.dtype, pd.CategoricalDtype):
        if all(isinstance(v, str) for v in col.cat.categories):
            return col
        return col.cat.rename_categories([str(v) for v in col.cat.categories])
    if pd.api.types.is_string_dtype(col.dtype) and not pd.api.types.is_object_dtype(col.dtype):
        return col
    col = col.astype(object)        # object, nullable or Arrow booleans, other extensions
    if pd.api.types.infer_dtype(col, skipna=True) == "string":
        return col
    return col.map(str, na_action="ignore")


def _filled(col, token):
    """A text column (:func:`_as_text`) with ``token`` in its missing cells."""
    import pandas as pd
    if isinstance(col.dtype, pd.CategoricalDtype):
        if token not in col.cat.categories:     # a declared order may list it already
            col = col.cat.add_categories([token])
        return col.fillna(token)
    if pd.api.types.is_object_dtype(col.dtype):
        return col.where(col.notna(), token)
    return col.fillna(token)


def filled_as_text(record) -> dict | None:
    """The metadata's ``missing`` where its publisher made the filled columns
    text (semantic diversity, LGB, msa and the baselines), else None.  The
    random sets of ``anonymize`` keep a column's values as they are and add
    the token beside them (``"as_text": false``): its original is compared
    as it is."""
    if not isinstance(record, dict) or record.get("policy") != "category" \
            or not record.get("columns") or record.get("as_text", True) is False:
        return None
    return record


def as_published(frame, record):
    """The original's columns as a release made with missing='category'
    published them (``record``: its metadata's ``missing``, with the columns
    it filled): text, with the token in the missing cells; the same for
    every chunk of a file, whether it holds a missing cell or not.  Other
    records leave ``frame`` as it is."""
    if filled_as_text(record) is None:
        return frame
    cols = [c for c in record["columns"] if c in frame.columns]
    if not cols:
        return frame
    frame = frame.copy()
    for c in cols:
        frame[c] = _filled(_as_text(frame[c]), record.get("token", "?"))
    return frame


def check_token_declared(record, declared, *, file=None) -> None:
    """missing='category': a column with missing cells whose values are
    declared (``declared``: {column: values}, a declared domain or a
    hierarchy's leaves) lists the token among them, where it belongs; it
    does not join a declared order at a place nobody chose."""
    if not isinstance(record, dict) or record.get("policy") != "category":
        return
    token = record["token"]
    for c in record.get("columns") or {}:
        vals = declared.get(c)
        if vals is not None and token not in {str(v) for v in vals}:
            raise InputError(f"has missing cells, published as {token!r} "
                             "({@missing='category'}), "
                             "but its declared values (a domain, a hierarchy's leaves) do not "
                             "list it", column=c, file=file,
                             expected=f"{token!r} among them, where it belongs in their order")


def missing_cells(columns) -> str:
    """The columns of a metadata's ``missing`` record for a message: with
    their counts where it holds them (rows left out, partition releases
    and earlier releases), else their names (random sets and semantic
    diversity: the count of a sensitive column's missing cells is an exact
    count of one of its values, which two releases apart by one person
    would tell)."""
    if isinstance(columns, dict):
        return ", ".join(f"{c} {k:,}" for c, k in columns.items())
    return ", ".join(map(str, columns or ()))


def category_words(record) -> str | None:
    """The words for missing cells published as a value of their own
    (missing='category'; None where none were), the same in every summary."""
    if not isinstance(record, dict) or record.get("policy") != "category" \
            or not record.get("columns"):
        return None
    cols = missing_cells(record["columns"])
    return (f"missing cells published as the value {record.get('token')!r} "
            f"(missing='category'): {cols}")


def _smallest_eta(counts, lo: int, hi: int):
    """The smallest set size in [lo, hi] whose sets give fewer than
    GIVEN_SHARE of the rows away (None: none), by bisection: a larger set
    draws more decoys, whose total rows only grow, so the share falls with
    the size (each :func:`~anonset.randomized.set_adversary.set_pins` call
    is a dynamic programme, not to be run for every size)."""
    from .passthrough import DETERMINES, GIVEN_SHARE
    from .randomized.set_adversary import set_pins
    # (sizes up to twice the asked one and 64 more: beyond, the advice is
    # left out, where thousands of values would make each call seconds long)
    hi = min(hi, 2 * lo + 64)
    if lo > hi or set_pins(counts, hi, DETERMINES) >= GIVEN_SHARE:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if set_pins(counts, mid, DETERMINES) < GIVEN_SHARE:
            hi = mid
        else:
            lo = mid + 1
    return lo


def dropped_rows_words(record) -> str | None:
    """The words for rows left out by ``missing='drop'`` (None where none
    were), the same in every summary and in the audit."""
    if not isinstance(record, dict) or record.get("policy") != "drop" or not record.get("rows"):
        return None
    cols = missing_cells(record.get("columns"))
    return (f"{record['rows']:,} row(s) with a missing value left out (missing='drop'; "
            f"missing cells: {cols}): a person known to be in the data but absent from the "
            f"release is known to have left one of those columns unanswered, and every count "
            f"of the release excludes them")


def _without_through(text: str, through: bool) -> str:
    """A remedy without its pass-through half, for a publisher that passes
    no column through (semantic diversity: H39, its `--other` did not
    exist)."""
    if through:
        return text
    return text.replace("pass it through ({@other}) or drop it ({@drop})", "drop it ({@drop})") \
        .replace("pass nested columns through ({@other}) or drop them ({@drop})",
                 "drop nested columns ({@drop})")


def check_publishable_type(column, dtype, *, file=None, through: bool = True,
                           partition: bool = False) -> None:
    """Nested values (lists, structs, maps) and dates and times cannot be
    sensitive or exact (a published domain holds text, numbers and booleans,
    which the metadata restores exactly); ``through``: the remedy may pass
    the column through."""
    if dtype is None:
        return
    import pandas as pd
    try:
        import pyarrow as pa
        if isinstance(dtype, pa.DataType):
            nested = pa.types.is_nested(dtype)
            temporal = pa.types.is_temporal(dtype)
        else:
            nested = "list" in str(dtype) or "struct" in str(dtype) or "map<" in str(dtype)
            temporal = (pd.api.types.is_datetime64_any_dtype(dtype)
                        or pd.api.types.is_timedelta64_dtype(dtype)
                        or isinstance(dtype, pd.PeriodDtype))
    except ImportError:  # pragma: no cover
        nested = temporal = False
    if nested:
        raise InputError(f"holds nested values ({dtype})", column=column, file=file,
                         expected=_without_through(
                             "plain values to publish as sensitive or exact; pass nested "
                             "columns through ({@other}) or drop them ({@drop})", through))
    if pd.api.types.is_complex_dtype(dtype):
        raise InputError(f"holds complex numbers ({dtype})", column=column, file=file,
                         expected="text, numbers or booleans to publish as sensitive or exact "
                                  "(complex numbers have no order, nor a domain to declare)")
    if temporal:
        # the same words whichever reader typed it (datetime64[ns], timestamp[us], ...)
        raise InputError("holds dates or times", column=column, file=file,
                         expected=_without_through(_TEMPORAL_PARTITION if partition
                                                   else _TEMPORAL_EXPECTED, through))


#: Cells that are not plain values (a nested Parquet column, an Arrow map).
NESTED = (list, tuple, dict, set, frozenset)


def first_nested(col, *, binary: bool = False):
    """The first cell of an object column that holds a list, a tuple, a
    dict, a set or an array (and bytes, with ``binary``), as ``(cell, its
    text for a message)``; None where there is none.  One C pass
    (``infer_dtype``); the cells are looked at only where it finds mixed
    kinds or bytes."""
    import numpy as np
    import pandas as pd
    if col.dtype != object or len(col) == 0:
        return None
    kind = pd.api.types.infer_dtype(col, skipna=True)
    if not (kind.startswith("mixed") or (binary and kind == "bytes")):
        return None
    kinds = NESTED + (np.ndarray,) + ((bytes, bytearray) if binary else ())
    bad = next((v for v in col if isinstance(v, kinds)), None)
    if bad is None:
        return None
    return bad, cell_text(bad)


def cell_text(value, width: int = 40) -> str:
    """A cell as a message shows it: its repr (an array's as a list), cut
    to ``width`` characters with '...'."""
    import numpy as np
    shown = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return shown[:width] + ("..." if len(shown) > width else "")


def check_plain_values(frame, columns, *, file=None, partition: bool = False,
                       through: bool = True) -> None:
    """The attributes of a publisher that reads a pandas frame (msa, lgb,
    the baselines, semantic diversity) hold plain values: a cell that is a
    list, a tuple, a dict, a set or an array (a nested Parquet column, an
    Arrow map) is refused as :func:`check_publishable_type` refuses it for
    the set publishers.  One C pass per object column (``infer_dtype``);
    the cells are looked at only where it finds mixed kinds.  With
    ``partition`` (the publishers that order, generalize or measure values:
    msa, lgb, the baselines, semantic diversity) an infinite number and a
    column of numbers and text mixed are refused too: msa published
    [-inf-21] with an information loss of NaN, and a column of 3, 'old' and
    2.5 was generalized to '*' by msa, a TypeError in semantic diversity
    and a plain ValueError in lgb."""
    import pandas as pd
    if partition:
        _check_finite_and_one_kind(frame, columns, file)
    for c in columns:
        col = frame[c]
        found = first_nested(col)
        if found is not None:
            raise InputError(f"holds nested values (e.g. {found[1]})", column=c, file=file,
                             expected=_without_through(
                                 "plain values (text, numbers, booleans) in an attribute; "
                                 "pass nested columns through ({@other}) or drop them "
                                 "({@drop})", through))
        # dates, times, complex numbers (publish's words for them): a
        # partition publisher generalized them as text ('*' for all of them,
        # or complex numbers in ranges)
        check_publishable_type(c, col.dtype, file=file, through=through, partition=partition)
        if col.dtype == object and len(col) and pd.api.types.infer_dtype(col, skipna=True) \
                not in _PLAIN_KINDS:
            check_values(pd.unique(col.dropna()), c, file=file, partition=partition)
            _check_no_bools_among_numbers(col, c, file)


def _check_no_bools_among_numbers(col, column, file) -> None:
    """True equals 1 and False 0 where values are counted (a dict, pandas'
    unique): a column of 1, True, 2 published True as 1, and was refused
    as mixed only where True came first (H92).  Looked at cell by cell, in
    an object column that holds mixed kinds only."""
    if {"bool", "number"} <= value_kinds(col.dropna()):
        raise bools_among_numbers(column, file)


def value_kinds(values) -> set:
    """'bool', 'number' and 'other' for the values' kinds (booleans apart
    from numbers, which they equal where values are counted)."""
    import numpy as np
    return {"bool" if isinstance(v, (bool, np.bool_)) else
            "number" if isinstance(v, (int, float, np.number)) else "other" for v in values}


def bools_among_numbers(column, file=None) -> InputError:
    """The refusal of a column that holds booleans and numbers, in one
    block or across blocks and Dask partitions (H92, H95)."""
    return InputError("mixes value types ['bool', 'number'] (True would count as 1, "
                      "False as 0)", column=column, file=file,
                      expected="one value type: convert the column")


def _check_finite_and_one_kind(frame, columns, file) -> None:
    """No infinite number, and numbers or text but not both, in ``columns``."""
    import numpy as np
    import pandas as pd
    for c in columns:
        col = frame[c]
        kind = pd.api.types.infer_dtype(col, skipna=True) if col.dtype == object else None
        if kind in ("mixed", "mixed-integer"):
            vals = col.dropna()
            num = vals.map(lambda v: isinstance(v, (int, float, np.number))
                           and not isinstance(v, (bool, np.bool_)))
            text = vals.map(lambda v: isinstance(v, str))
            if num.any() and text.any():
                i, j = int(np.flatnonzero(num.to_numpy())[0]), int(np.flatnonzero(
                    text.to_numpy())[0])
                raise InputError(f"holds numbers and text mixed (a number at {row_name(i)}, "
                                 f"text at {row_name(j)})", column=c, file=file,
                                 expected="one kind: numbers (text that reads as a number "
                                          "converted, the rest marked missing), or text "
                                          "(.astype(str))")
        if kind == "string" or pd.api.types.is_string_dtype(col.dtype) and not isinstance(
                col.dtype, pd.CategoricalDtype) or isinstance(col.dtype, pd.CategoricalDtype) \
                and "" in set(col.cat.categories[np.unique(col.cat.codes[col.cat.codes >= 0])]):
            empty = (col == "").to_numpy(dtype=bool, na_value=False)
            if empty.any():
                # '' is a missing cell once a CSV release is read back, and no
                # label a generalization can name (H90: lgb and msa failed on
                # it with a plain ValueError naming no column)
                raise InputError(f"holds an empty text value ('') in {int(empty.sum()):,} "
                                 f"row(s), first at {row_name(int(np.argmax(empty)))}",
                                 column=c, file=file,
                                 expected="a non-empty label (mark it missing, as a CSV file's "
                                          "empty cell is, or recode it)")
        if pd.api.types.is_float_dtype(col.dtype) or kind in ("floating", "mixed-integer-float"):
            x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            inf = np.isinf(x)
            if inf.any():
                raise InputError(f"holds an infinite number at {row_name(int(np.argmax(inf)))}",
                                 column=c, file=file,
                                 expected="finite numbers (an infinite one has no range to "
                                          "generalize or distance to measure: mark it missing, "
                                          "or drop its row)")


#: What ``pandas.api.types.infer_dtype`` calls a column of plain values.
_PLAIN_KINDS = frozenset(["string", "integer", "floating", "boolean", "mixed-integer-float",
                          "empty"])


def check_domain_values(attr, *, file=None) -> None:
    """Every value of a published domain is text, a number or a boolean (an
    object column can hold anything: dates, decimals, tuples)."""
    if attr.domain is None:
        return
    check_values(attr.domain, attr.name, file=file)


def check_values(values, column, *, file=None, partition: bool = False) -> None:
    """Every one of ``values`` is text, a number or a boolean
    (:func:`check_domain_values`' words, for any attribute's values)."""
    import numpy as np
    import pandas as pd
    for v in values:
        if isinstance(v, (_dt.date, _dt.time, _dt.timedelta, np.datetime64, np.timedelta64,
                          pd.offsets.BaseOffset)) or type(v).__name__ == "Period":
            # (an Arrow interval, a DuckDB INTERVAL, reads as a DateOffset,
            # and its subclasses Day, MonthEnd, ...: H69, H72)
            # (a pandas Period, which a Parquet file of pandas' holds as
            # an extension type: memory and Dask read a period dtype)
            # the words of check_publishable_type: a Parquet reader types it
            raise InputError("holds dates or times", column=column, file=file,
                             expected=_TEMPORAL_PARTITION if partition else _TEMPORAL_EXPECTED)
        if isinstance(v, _decimal.Decimal):
            # a Parquet decimal (money from a database): a number to the user
            raise InputError(f"holds decimal numbers (e.g. {v!r})", column=column, file=file,
                             expected="floats or text to publish as sensitive or exact: cast "
                                      "it to a float (pandas: .astype(float); SQL: CAST AS "
                                      "DOUBLE) or to text, which keeps '1.50' as written")
        if isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 63:
            # an unsigned 64-bit ID, say: its codes are looked up as int64
            raise InputError(f"holds integers beyond 64-bit signed range (e.g. {v})",
                             column=column, file=file,
                             expected="integers within +-9,223,372,036,854,775,807, or the "
                                      "column as text (pandas: .astype(str))")
        if not isinstance(v, (str, bool, int, float)):
            raise InputError(f"holds values of another type ({type(v).__name__}, e.g. {v!r})",
                             column=column, file=file,
                             expected="text, numbers or booleans to publish as sensitive or "
                                      "exact: convert it, or pass it through ({@other}) or "
                                      "drop it ({@drop})")


def check_clear(published, params, model, allow_clear, clip_l, counts=None, *,
                file=None) -> list:
    """Sensitive attributes published in the clear (p = 1 and eta = 1 on a
    domain of d > 1 values) or nearly (``counts``: rows per value; the Bayes
    adversary who reads a row's set alone removes at least ``DETERMINES``
    of the errors of guessing the most common value,
    :func:`anonset.randomized.set_adversary.set_lambda`).  They are refused
    unless named in allow_clear; returns the allowed ones (recorded in the
    metadata)."""
    import numpy as np
    from .passthrough import DETERMINES, GIVEN_SHARE
    from .randomized.set_adversary import set_lambda, set_pins
    near, pinned = {}, {}
    for a in published:
        par = params[a.name]
        if a.role != "sensitive" or a.d <= 1 or (par.eta == 1 and par.p >= 1.0):
            continue
        c = (counts or {}).get(a.name)
        if c is not None:
            lam, success, prior = set_lambda(c, par.p, par.eta)
            if lam == lam and lam >= DETERMINES:
                near[a.name] = (success, prior, int((np.asarray(c) == 0).sum()), a.d)
            else:
                # some rows' sets: their value beside values nobody or few hold
                # (at any p: DiversityCloseness(2, 0.5) gave Adult's age p =
                # 0.996, its sets nearly the p = 1 ones, unchecked, H151)
                share = set_pins(c, par.eta, DETERMINES, par.p)
                if share >= GIVEN_SHARE:
                    # the smallest set size that gives too few away (None: none
                    # below d; not sought for a column allow_clear names, whose
                    # refusal, and advice, is never shown)
                    enough = None if a.name in allow_clear or par.l is None else \
                        _smallest_eta(c, par.eta + 1, a.d - 1)
                    pinned[a.name] = (share, int((np.asarray(c) == 0).sum()), a.d, enough)
    clear = [a.name for a in published
             if a.role == "sensitive" and a.d > 1 and params[a.name].eta == 1
             and params[a.name].p >= 1.0]
    refused = [n for n in clear if n not in allow_clear]
    if refused:
        why, whats = [], []
        for n in refused:
            par = params[n]
            if par.l is not None or par.k is not None:
                v = par.l if par.l is not None else par.k
                what = "l" if par.l is not None else "k"
                why.append(f"{n} ({what} = {v}" + (", after clip_l" if clip_l else "") + ")")
            else:
                what = "t"
                why.append(f"{n} (t = {par.t}: every true value alone is within t of the "
                           "column's distribution)")
            whats.append(what)
        stronger = ("a smaller t, or l >= 2 beside it (Sec. VII-D)" if set(whats) == {"t"}
                    else "l or k >= 2" if "t" not in whats else
                    "l or k >= 2; for t-closeness a smaller t, or l >= 2 beside it")
        if clip_l and set(whats) == {"l"}:
            # the user's l was above the domain: clip_l took it to d - 1 = 1
            stronger = ("an l of the domain's size for " + ("it" if len(refused) == 1 else
                                                            "them")
                        + " (whole-domain sets, which publish nothing of it: one l per "
                          "column), or " + ("it" if len(refused) == 1 else "them") + " dropped")
        raise InputError("would publish " + ", ".join(why) + " in the clear: with p = 1 and "
                         "eta = 1 every published set is the person's true value",
                         param=whats[0] if len(set(whats)) == 1 else "model",
                         column=refused[0] if len(refused) == 1 else None, file=file,
                         expected=f"a stronger model ({stronger}), or the risk named: "
                                  "{@allow_clear=" + repr(refused) + "}")
    refused = [n for n in near if n not in allow_clear]
    if refused:
        n = refused[0]
        par, (success, prior, unheld, d) = params[n], near[n]
        what = "t" if par.t is not None and par.l is None else "l" if par.l is not None else "k"
        setting = (f"t = {par.t}" if what == "t" else f"{what} = {par.l if what == 'l' else par.k}")
        also = f" (and {', '.join(map(repr, refused[1:]))})" if len(refused) > 1 else ""
        stronger = "a smaller t, or l >= 2 beside it (Sec. VII-D)" if what == "t" else \
            f"a larger {what}"
        # a declared domain's values that nobody holds: a set's other values
        # are mostly those, and whoever knows the distribution tells them apart
        nobody = (f"; {unheld:,} of its {d:,} values are held by nobody, and a set's other "
                  "values are mostly those") if unheld else ""
        if unheld:
            stronger += ", or a domain with fewer values nobody holds"
        raise InputError(f"would be published nearly in the clear ({setting}: p = {par.p:.4g}, "
                         f"eta = {par.eta}): an adversary who knows the column's distribution "
                         f"and reads a row's set names its true value for {success:.1%} of the "
                         f"rows, against {prior:.1%} by the most common value alone (at least "
                         f"{DETERMINES:.0%} of the errors removed){nobody}{also}",
                         param=what, column=n, file=file,
                         expected=f"a stronger model ({stronger}), or the risk named: "
                                  "{@allow_clear=" + repr(refused) + "}")
    refused = [n for n in pinned if n not in allow_clear]
    if len(refused) > 1:
        raise _pinned_refusal(refused, published, params, pinned, file)
    if refused:
        n = refused[0]
        par, (share, unheld, d, enough) = params[n], pinned[n]
        what = "l" if par.l is not None else "k" if par.k is not None else "t"
        setting = f"{what} = {par.l if what == 'l' else par.k if what == 'k' else par.t}"
        nobody = (f"{unheld:,} of its {d:,} values are held by nobody" if unheld else
                  "some of its values are held by few rows")
        what_sets = (f"the set is the true value alone (p = {par.p:.4g})" if par.eta == 1 else
                     f"every other value of the set is one that nobody or few hold ({nobody})")
        raise InputError(f"would publish some rows' values nearly in the clear ({setting}: "
                         f"eta = {par.eta}): for {share:.1%} of the rows {what_sets}, so an "
                         "adversary who knows the column's distribution (the sets' "
                         f"reconstruction shows it) reads their true value off the set, at least "
                         f"{DETERMINES:.0%} of the errors of guessing it removed",
                         param=what, column=n, file=file,
                         expected=_stronger(what) + (
                             f" (at l = {enough}, {n!r}'s sets give fewer than "
                             f"{GIVEN_SHARE:.0%} of the rows away)"
                             if what == "l" and enough is not None else "")
                         + ("" if par.eta == 1 else ", a domain without values nobody holds "
                            "(read off the data), rare values merged")
                         + ", or the risk named: {@allow_clear=" + repr(refused) + "}")
    return clear + [n for n in near if n in allow_clear] + \
        [n for n in pinned if n in allow_clear]


def _grouped(advice: list) -> list:
    """(column, advice) pairs as advice texts, the columns that share a
    text named once after it ("a smaller t ... for 'a' and 'b'"); an advice
    that names its column already ("l >= 4 for 'age'") is kept."""
    order: dict = {}
    for n, text in advice:
        order.setdefault(text, []).append(n)
    out = []
    for text, names in order.items():
        if " for " in text:
            out.append(text)
        else:
            cols = [repr(n) for n in names]
            out.append(f"{text} for " + (cols[0] if len(cols) == 1 else
                                         ", ".join(cols[:-1]) + " and " + cols[-1]))
    return out


def _stronger(what: str) -> str:
    """The stronger setting of a model parameter: a larger l or k, but a
    smaller t (a larger t raises p: it advised the weaker model, H155)."""
    return "a smaller t, or l >= 2 beside it (Sec. VII-D)" if what == "t" else f"a larger {what}"


def _pinned_refusal(refused: list, published, params, pinned: dict,
                    file) -> "InputError":
    """The refusal of several columns whose sets stand beside values that
    nobody or few hold (:func:`check_clear`): every column named with its
    share given away and the l that gives fewer than ``GIVEN_SHARE`` away,
    so that one rerun fixes them all (H150: one column per run took 4-7
    runs on Wage and Males)."""
    from .passthrough import DETERMINES, GIVEN_SHARE
    whats = {n: "l" if params[n].l is not None else "k" if params[n].k is not None else "t"
             for n in refused}
    what = next(iter(whats.values())) if len(set(whats.values())) == 1 else "model"

    def setting(n):
        par = params[n]
        v = par.l if whats[n] == "l" else par.k if whats[n] == "k" else par.t
        return f"{whats[n]} = {v}: eta = {par.eta}"

    def held(n):
        unheld, d = pinned[n][1], pinned[n][2]
        if params[n].eta == 1:
            return f"sets of one value, p = {params[n].p:.4g}"
        return (f"{unheld:,} of its {d:,} values held by nobody" if unheld else
                "some of its values held by few rows")

    def advice(n):
        enough = pinned[n][3]
        if whats[n] != "l":
            return _stronger(whats[n])
        if enough is None:      # as far as _smallest_eta looks
            top = min(pinned[n][2] - 1, 2 * (params[n].eta + 1) + 64)
            return f"a larger l for {n!r} (" + (f"none up to l = {top} does)"
                                                if top > params[n].eta else
                                                "none below its domain size does)")
        return f"l >= {enough} for {n!r}"

    def listed(items):
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

    shares = listed([f"{pinned[n][0]:.1%} of the rows of {n!r} ({setting(n)}; {held(n)})"
                     for n in refused])
    # the l per column to type, where every one is an l with an advice: every
    # sensitive column's (the others' as they are), so none is left out
    per = {a.name: params[a.name].l for a in published
           if a.role == "sensitive" and params[a.name].l is not None}
    per.update({n: pinned[n][3] for n in refused})
    typed = ("; an l per column: {@l=" + repr(per) + "}"
             if what == "l" and None not in per.values() else "")
    ones = {params[n].eta == 1 for n in refused}        # sets of one value (t alone)
    sets = ("the set is the true value alone" if ones == {True} else
            "every other value of the set is one that nobody or few hold" if ones == {False}
            else "every other value of the set is one that nobody or few hold, or the set is "
                 "the true value alone")
    # "from there": only where an l was computed (H160: a smaller t claimed it)
    computed = any(whats[n] == "l" and pinned[n][3] is not None for n in refused)
    return InputError(f"would publish some rows' values nearly in the clear in columns "
                      f"{listed([repr(n) for n in refused])}: for {shares}, {sets}, so an "
                      "adversary who knows the column's distribution (the sets' reconstruction "
                      f"shows it) reads their true value off the set, at least {DETERMINES:.0%} "
                      "of the errors of guessing it removed",
                      param=what, file=file,
                      expected=listed(_grouped([(n, advice(n)) for n in refused]))
                      + (f" (from there a column's sets give fewer than {GIVEN_SHARE:.0%} of "
                         f"the rows away{typed})" if computed else "")
                      + (", a domain without values nobody holds (read off the data), rare "
                         "values merged" if False in ones else "")
                      + ", or the risk named: {@allow_clear=" + repr(refused) + "}")


def set_pair_findings(published, params, codes: Mapping, others: Mapping | None = None,
                      recoded=(), allow_recode=(), members: Mapping | None = None) -> list:
    """Sensitive columns that the sets of another sensitive column narrow
    so far that, read together, they publish them nearly in the clear
    (:mod:`anonset.randomized.pair_adversary`): the adversary who reads
    both sets and knows the two columns' joint distribution (learnt from
    the other half of the sample) names the true value of one of them

    * for so many rows that it removes at least ``DETERMINES`` of the
      errors of guessing its most common value (beyond chance, and more
      than its set alone does: :func:`check_clear` measures that), or
    * with certainty for at least ``GIVEN_SHARE`` of the rows (beyond its
      set alone, a value 90 % hold left out), its certainty right at least
      ``CERTAIN`` of the times it is certain.

    ``codes``: per sensitive column (and exact QID), the codes of the same
    rows sampled from the table
    (:data:`~anonset.randomized.pair_adversary.SAMPLE_ROWS`); ``others``:
    per pass-through column, codes of its values over the same rows (read,
    as published, beside every other column: :func:`_record_findings`);
    ``recoded``: sensitive columns that a pass-through column or exact QID
    the user allowed (``allow_recode``) recodes or gives away, whose risk
    is named already: the record leaves them out; ``allow_recode``: columns
    published as they are whose risk the user named, a read of those alone
    beside a set is theirs (not refused again); ``members``: per column,
    the (rows, eta) members of the sets drawn for the same rows, where
    they are not drawn as eq. 19 draws them (semantic diversity's sets,
    their values pairwise d apart).  Returns one dict per
    (column, other column or two, or columns read together), the
    strongest first."""
    import numpy as np
    from .randomized import pair_adversary as PA
    given = members
    cols = [a for a in published if a.role == "sensitive" and a.name in codes
            and 1 < params[a.name].eta < a.d]
    if not cols:
        return []
    m = min(len(codes[a.name]) for a in cols)
    if m < 4:
        return []
    held, members, ratio, full = {}, {}, {}, {}
    for a in cols:
        par, x = params[a.name], np.asarray(codes[a.name][:m], dtype=np.int64)
        u, xc = np.unique(x, return_inverse=True)
        lut = np.full(a.d, u.size, dtype=np.int64)
        lut[u] = np.arange(u.size)
        mem = PA.draw_members(x, a.d, par.p, par.eta, PA.generator(a.name)) \
            if given is None or a.name not in given else \
            np.asarray(given[a.name], dtype=np.int64)[:m]
        held[a.name], members[a.name], full[a.name] = xc.ravel(), lut[mem], mem
        ratio[a.name] = PA.set_ratio(par.p, par.eta, a.d)
    pairs = [(a, b) for i, a in enumerate(cols) for b in cols[i + 1:]]
    out = []
    for a, b in pairs:
        ua, ub = int(held[a.name].max()) + 1, int(held[b.name].max()) + 1
        exact = ratio[a.name] == 0.0 and ratio[b.name] == 0.0
        # p = 1: eta_a x eta_b cells a row, every row; else (u_a x u_b a
        # row) within a budget
        rows = m if exact else \
            min(m, max(PA.MIN_ROWS, PA.TOTAL_WORK // (len(pairs) * (ua * ub + ua + ub))))
        if exact and not any(_reachable(held[t.name][:rows], members[t.name][:rows],
                                        held[o.name][:rows], t, params[t.name].eta)
                             for t, o in ((a, b), (b, a))):
            continue
        got = PA.pair_adversary(held[a.name][:rows], held[b.name][:rows],
                                members[a.name][:rows], members[b.name][:rows],
                                ratio[a.name], ratio[b.name])
        for (t, o), g in (((a, b), got["a"]), ((b, a), got["b"])):
            f = _judged(t.name, o.name, g, rows)
            if f is not None:
                f["recode"] = PA.recode_lambda(held[t.name][:rows], held[o.name][:rows])
                out.append(f)
    out += _group_findings(published, params, codes, m, members, full, out,
                           set(allow_recode))
    out += _record_findings(published, params, codes, m, held, members, others or {},
                            out + [{"column": t} for t in recoded], set(allow_recode))
    out.sort(key=lambda f: (-max(f["lambda"], f["certain"]), f["column"], str(f["with"])))
    return out


#: An adversary's pins count as certainty where at least this share of them
#: are right.  An absence the data hold (education beside its number,
#: `Husband` beside a married status, a derived column's rule) gives pins
#: right 98-100 % of the time; the absences a rare combination of three
#: columns leaves in half a sample of Adult, 49-92 %: no certainty.
CERTAIN = 0.97
#: Rows an adversary must pin rightly at least for its pins to count.
MIN_PINS = 20
#: Threes whose two helpers, known exactly, remove less than this share of
#: the errors of guessing t's most common value (:func:`cross_lambda`) are
#: not drawn: a three that pins t needs helpers that tell much about it
#: (nlswork's year and age tell the birth year: 0.80; Adult's workclass from
#: occupation and native-country 0.01, education from occupation and age 0.11).
GROUP_LAMBDA = 0.25
#: Other columns a sensitive column is measured against in threes, at most
#: (those that tell most about it: mutual information over the sample).
GROUP_HELPERS = 6
#: Columns of numbers a sensitive column of numbers is measured against for
#: a linear rule of two of them, at most (a rule's cost is one fit).
RULE_HELPERS = 16


def _reachable(xt, mt, xo, t, eta) -> bool:
    """Whether a pair at p = 1 could reach a threshold for t: the adversary
    who knows the other column's value exactly (which its set cannot beat)
    removes at least ``DETERMINES`` less 0.05 of the prior's errors, or
    the rows every other member of whose set no training row with that
    value holds reach half of ``GIVEN_SHARE`` (a pin needs that)."""
    import numpy as np
    from .passthrough import DETERMINES, GIVEN_SHARE
    from .randomized import pair_adversary as PA
    prior = float(np.bincount(xt).max() / xt.size)
    if prior >= 1.0:
        return False
    lam = (PA.known_success(xt, mt, xo) - prior) / (1.0 - prior)
    return lam >= DETERMINES - 0.05 or \
        PA.group_bound(xt, t.d, eta, [(xo, None)]) >= GIVEN_SHARE / 2


def _numbers(a):
    """A column's values as numbers per code, or None (text, bins, a
    missing-value token)."""
    import numpy as np
    if a.bins is not None or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                     for v in a.domain):
        return None
    v = np.asarray(a.domain, dtype=np.float64)
    return v if np.all(np.isfinite(v)) and v.size >= 2 else None


def _group_findings(published, params, codes, m, members, full, found,
                    allow_recode=frozenset()) -> list:
    """:func:`set_pair_findings` for a sensitive column (p = 1) and two
    other columns together (sensitive sets at p = 1, or exact QIDs), where
    no two of them are found already: age from the survey year and the
    birth year, schooling as age less experience less six.  Judged by the
    rows it pins (:func:`_judged`).  Where the three hold numbers and a
    linear rule ties them, by that rule
    (:func:`~anonset.randomized.pair_adversary.rule_adversary`); else by
    their joint counts, measured where a bound of the pins (the helpers'
    values known: :func:`~anonset.randomized.pair_adversary.group_bound`)
    reaches the threshold.  Pairs of exact QIDs (and pass-through columns)
    beside a set are the pass-through check's."""
    import numpy as np
    from .passthrough import GIVEN_SHARE
    from .randomized import pair_adversary as PA
    sets = [a for a in published if a.name in members and params[a.name].p >= 1.0]
    flagged = {f["column"] for f in found}
    # codes over the whole domain (a rule reads their numbers), members too
    part = {a.name: (np.asarray(codes[a.name][:m], dtype=np.int64), full[a.name])
            for a in sets}
    for a in published:
        if a.role == "exact" and a.name in codes and a.d > 1:
            x = np.asarray(codes[a.name][:m], dtype=np.int64)
            part[a.name] = (x, x[:, None])
    if len(part) < 3:
        return []
    attrs = {a.name: a for a in published}
    nums = {n: _numbers(attrs[n]) for n in part}
    out = []
    for t in sets:
        if t.name in flagged:
            continue
        xt, mt = part[t.name]
        others = [n for n in part if n != t.name]
        # the helpers that tell most about t (mutual information, in nats)
        info = {n: _mutual_information(xt, part[n][0]) for n in others}
        ranked = sorted(others, key=lambda n: (-info[n], n))
        others = ranked[:GROUP_HELPERS]
        # a linear rule, between any two helpers that hold numbers (exact
        # QIDs too: a small table's joint counts do not show inc = a - b,
        # and a third QID that tells nothing about inc took the place of b
        # in the record's read, H19): measured by itself, cheaply
        ruled = set()
        numeric = [n for n in ranked if nums[n] is not None][:RULE_HELPERS] \
            if nums[t.name] is not None else []
        if numeric:
            vt_rows = nums[t.name][xt]
            spacing = PA.value_spacing(nums[t.name])
            values = int(np.unique(xt).size)
        for i, h1 in enumerate(numeric):
            for h2 in numeric[i + 1:]:
                if not PA.rule_screen(vt_rows, nums[h1][part[h1][0]], nums[h2][part[h2][0]],
                                      spacing, values):
                    continue
                g = PA.rule_adversary(nums[t.name], xt, mt,
                                      [(nums[h][x], nums[h][mm]) for h, (x, mm) in
                                       ((h1, part[h1]), (h2, part[h2]))])
                f = _judged(t.name, [h1, h2], g, m) if g is not None else None
                if f is not None:
                    c1, c2, c0, tol = g["rule"]
                    f["rule"] = (f"{t.name} = {c1:.3g} x {h1} {'+' if c2 >= 0 else '-'} "
                                 f"{abs(c2):.3g} x {h2} {'+' if c0 >= 0 else '-'} "
                                 f"{abs(c0):.3g}, within {tol:.2g}, for 99 % of the rows")
                    f["recode"] = 1.0
                    # the helpers published as they are (exact QIDs): theirs to
                    # name with allow_recode too (check_set_pairs offers it)
                    f["as_is"] = [h for h in (h1, h2) if h not in members]
                    if h1 not in members and h2 not in members and \
                            {h1, h2} <= allow_recode:
                        # two columns published as they are, both named by
                        # the user: their risk, recorded (as the record's read)
                        f["named"] = True
                    out.append(f)
                    ruled |= {(h1, h2), (h2, h1)}
        for i, h1 in enumerate(others):
            for h2 in others[i + 1:]:
                if h1 not in members and h2 not in members:
                    continue                    # two exact QIDs: the pass-through check's
                if (h1, h2) in ruled:
                    continue
                helpers = [part[h1], part[h2]]
                # (half the threshold: one draw of the sets sits within a few
                # tenths of a per cent of its expectation, the bound); and
                # helpers that, known exactly, tell t's value for few rows
                # are not drawn (a heuristic: GROUP_LAMBDA)
                if PA.cross_lambda(xt, helpers) < GROUP_LAMBDA or \
                        PA.group_bound(xt, t.d, params[t.name].eta,
                                       [(x, None) for x, _ in helpers]) < GIVEN_SHARE / 2:
                    continue
                r = min(m, PA.GROUP_ROWS)
                g = PA.group_adversary(*_compact(xt[:r], mt[:r]),
                                       [_compact(x[:r], mm[:r]) for x, mm in helpers])
                f = _judged(t.name, [h1, h2], g, r)
                if f is not None:
                    gk = helpers[0][0] * (int(helpers[1][0].max()) + 1) + helpers[1][0]
                    f["recode"] = PA.recode_lambda(xt, gk)
                    out.append(f)
    return out


def _record_findings(published, params, codes, m, held, members, others,
                     found, allow_recode=frozenset()) -> list:
    """:func:`set_pair_findings` for a sensitive column (p = 1) and the
    other columns read together (sets at p = 1, exact QIDs and pass-through
    columns: ``others``, codes over the same rows), where no pair and no
    three is found already: a total beside its parts, a sum modulo a base,
    an age beside the survey year's set and a birth year published as it
    is, a single set beside columns published as they are; what no two or
    three of the sets tell
    (:func:`~anonset.randomized.pair_adversary.record_adversary`, its
    helpers read most telling first).  Judged by :func:`_judged`."""
    import numpy as np
    from .randomized import pair_adversary as PA
    sets = [a for a in published if a.name in members and params[a.name].p >= 1.0]
    if not sets:
        return []
    flagged = {f["column"] for f in found}
    names, cols = [], []
    for a in published:
        if a.name in members and params[a.name].p >= 1.0:
            cols.append((held[a.name], members[a.name]))
        elif a.role == "exact" and a.name in codes and a.d > 1:
            x = np.asarray(codes[a.name][:m], dtype=np.int64)
            cols.append(_compact(x, x[:, None]))
        else:
            continue
        names.append(a.name)
    for c, x in others.items():
        x = np.asarray(x, dtype=np.int64)[:m]
        if x.size == m and m and x.max() > 0:
            cols.append(_compact(x, x[:, None]))
            names.append(c)
    if len(cols) < 2:
        return []
    targets = [i for i, n in enumerate(names) if n not in flagged
               and any(s.name == n for s in sets)]
    if not targets:
        return []
    # each target's helpers, those that tell most about it first (mutual
    # information over the sample); the shortest reads measured too: an
    # adversary ignores columns that tell nothing (RECORD_READS)
    orders, mi = {}, {}
    for t in targets:
        for j in range(len(cols)):       # each pair once: it is symmetric
            if j != t and (j, t) not in mi:
                mi[(t, j)] = _mutual_information(cols[t][0], cols[j][0])
        info = {j: mi[(t, j)] if (t, j) in mi else mi[(j, t)]
                for j in range(len(cols)) if j != t}
        orders[t] = sorted(info, key=lambda j: (-info[j], j))
    reads = max(0, min(RECORD_READS, RECORD_PASSES // len(targets) - 1))
    out, set_names = [], {s.name for s in sets}
    for t, got in PA.record_adversary(cols, targets, orders, reads).items():
        best = named = None
        for read, g in got:               # the shortest read that names it
            helpers = [names[j] for j in read]
            f = _judged(names[t], helpers, g, m)
            if f is None:
                continue
            if set(helpers) <= allow_recode:
                # columns published as they are, all named by the user: their
                # risk, recorded (the metadata's clear; the audit says it was
                # allowed), unless a longer read tells clearly more
                named = named or dict(f, named=True)
                continue
            if named is not None and not _tells_more(f, named):
                continue
            best = f
            break
        best = best or named
        if best is not None:
            best["record"] = True
            # read of columns published as they are alone: theirs to name too
            best["as_is"] = [n for n in best["with"] if n not in set_names]
            out.append(best)
    return out


def _tells_more(f: Mapping, named: Mapping) -> bool:
    """A read with columns the user did not name tells clearly more than a
    read of columns published as they are that the user named
    (``allow_recode``): at least ``GIVEN_SHARE`` more of the rows pinned,
    or lambda up by half the margin ``DETERMINES`` leaves."""
    from .passthrough import DETERMINES, GIVEN_SHARE
    return f["certain"] >= named["certain"] + GIVEN_SHARE or \
        f["lambda"] >= named["lambda"] + (1.0 - DETERMINES) / 2


#: Shortest reads of a record measured besides all of it: the helper that
#: tells most about the column, the first two, ... (a relation of three
#: columns beside columns that tell nothing: the others' chance matches
#: thin the training rows of a reader of all of them).
RECORD_READS = 6
#: Reads of every column's record at most in all (wide tables read fewer).
RECORD_PASSES = 160


def _compact(x, members) -> tuple:
    """Codes and members renumbered over the values the sample holds (a
    member it does not hold: the next code)."""
    import numpy as np
    u, xc = np.unique(x, return_inverse=True)
    lut = np.full(int(max(x.max(), members.max())) + 1, u.size, dtype=np.int64)
    lut[u] = np.arange(u.size)
    return xc.ravel(), lut[members]


def _judged(column, with_, g, m):
    """A finding where the adversary's figures ``g`` reach a threshold
    (:func:`set_pair_findings`), else None: lambda at least
    ``DETERMINES``, more than the set alone beyond chance; or right pins of
    at least ``GIVEN_SHARE`` of the rows, right at least ``DETERMINES`` of
    the times it pins."""
    import numpy as np
    from .passthrough import DETERMINES, GIVEN_ALPHA, GIVEN_SHARE, _kl
    s, alone, prior, certain, wrong = (g["success"], g["alone"], g["prior"], g["certain"],
                                       g["wrong"])
    lam = (s - prior) / (1.0 - prior) if prior < 1.0 else float("nan")
    near = lam >= DETERMINES and s > alone and m * _kl(s, alone) >= -np.log(GIVEN_ALPHA)
    # pins: enough of them (MIN_PINS rows at least), rarely wrong, from an
    # adversary that reading more helps (a small table's chance absences
    # pin rows too, while naming fewer of them than the set alone)
    pins = certain >= GIVEN_SHARE and certain * m >= MIN_PINS and \
        certain >= CERTAIN * (certain + wrong) and s > alone
    if not (near or pins):
        return None
    return {"column": column, "with": with_, "success": s, "alone": alone, "prior": prior,
            "lambda": lam, "certain": certain, "wrong": wrong, "rows": m,
            "recode": float("nan")}


def _mutual_information(x, y) -> float:
    """I(x; y) in nats of two code columns (plug-in)."""
    import numpy as np
    x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
    J = np.bincount(x * (int(y.max()) + 1) + y).astype(np.float64)
    J = J[J > 0] / x.size
    px = np.bincount(x) / x.size
    py = np.bincount(y) / y.size
    H = lambda p: -float((p[p > 0] * np.log(p[p > 0])).sum())   # noqa: E731
    return H(px) + H(py) - H(J)


def set_pair_message(f: Mapping, verb: str = "would be published") -> str:
    """What a :func:`set_pair_findings` finding says, in one sentence."""
    wrong = f.get("wrong", 0.0)
    certain = (f" and is certain of it, rightly, for {f['certain']:.1%}"
               + (f" (wrongly for {wrong:.1%})" if wrong >= 0.0005 else "")
               if f["certain"] >= 0.0005 else "")
    three = isinstance(f["with"], (list, tuple))
    beside = " and ".join(map(repr, f["with"])) if three else repr(f["with"])
    if f.get("record"):
        shown = ", ".join(map(repr, f["with"][:6])) + (", ..." if len(f["with"]) > 6 else "")
        beside = (f"the {len(f['with'])} other columns read together ({shown})"
                  if len(f["with"]) > 1 else f"{f['with'][0]!r}, the two read together")
        recode, reads = "", ("knows the columns' joint distribution and reads everything a row "
                             "publishes of them")
    elif three:
        recode = (f"; by the rule {f['rule']}, which whoever knows the columns knows"
                  if f.get("rule") else
                  f"; the two together determine {f['column']!r} (lambda {f['recode']:.2f})"
                  if f["recode"] >= 0.9 else "")
        reads = ("knows the three columns' " + ("relation" if f.get("rule") else
                                                "joint distribution")
                 + " and reads what a row publishes of them")
    else:
        recode = (f"; {f['with']!r} recodes {f['column']!r} (lambda {f['recode']:.2f}), "
                  "so its set is a second draw around the same value"
                  if f["recode"] >= 0.9 else "")
        reads = "knows the two columns' joint distribution and reads a row's two sets"
    return (f"{verb} nearly in the clear beside {beside}: an adversary who {reads} names its "
            f"{f['column']!r} for {f['success']:.1%} of the rows{certain} (from its set alone: "
            f"{f['alone']:.1%}; by the most common value: {f['prior']:.1%}){recode}")


def check_set_pairs(published, params, codes: Mapping, allow_clear, *, others=None,
                    recoded=(), allow_recode=(), members=None, file=None, now=None) -> list:
    """Refuse the sensitive columns that :func:`set_pair_findings` finds,
    unless named in ``allow_clear`` (or read off columns published as they
    are, all named in ``allow_recode``); returns the named ones found
    (recorded in the metadata's ``clear``).  ``now``: in a persistent-key
    series, the columns this release publishes (``published`` holds the
    earlier releases' sets-columns too): a finding none of them is in is
    not this release's."""
    found = set_pair_findings(published, params, codes, others, recoded, allow_recode, members)
    if now is not None:
        found = [f for f in found if _columns_read(f) & set(now)]
    refused = [f for f in found if f["column"] not in allow_clear and not f.get("named")]
    if refused:
        f = refused[0]
        names = list(dict.fromkeys(g["column"] for g in refused))
        also = f" (and {', '.join(map(repr, names[1:]))})" if len(names) > 1 else ""
        par = params[f["column"]]
        what = "t" if par.t is not None and par.l is None else "l" if par.l is not None else "k"
        stronger = "a smaller t" if what == "t" else f"a larger {what}"
        three = isinstance(f["with"], (list, tuple))
        some = "a column" if f.get("record") else f"one of the {'three' if three else 'two'}"
        as_is = _recode_all(f, published, params, codes, others, recoded, allow_recode,
                            members, allow_clear)
        recode = (" (or, for the columns published as they are, {@allow_recode="
                  + repr(as_is) + "})") if as_is else ""
        clears = _clearing_l(published, params, codes, others, recoded, allow_recode,
                             members, f) if what == "l" and (
            now is None or _columns_read(f) <= set(now)) else None
        hint = f": l = {clears} clears this one" if clears else ""
        before = sorted(_columns_read(f) - set(now)) if now is not None else []
        if before:
            also += (f" ({', '.join(map(repr, before))} published by an earlier release of the "
                     "series, whose rows this release's rows are linked to: a record keeps its "
                     "sets under the series' persistent key)")
        if before:
            # the earlier release's sets are what they are: this release's
            # columns beside them are what may change (H45)
            mine = [c for c in sorted(_columns_read(f)) if c not in before]
            raise InputError(set_pair_message(f) + also, param=what, column=f["column"],
                             file=file,
                             expected=f"{', '.join(map(repr, mine))} left out of this release "
                                      "or published in coarser values, or the risk named: "
                                      "{@allow_clear=" + repr(names) + "}" + recode)
        raise InputError(set_pair_message(f) + also, param=what, column=f["column"], file=file,
                         expected=f"a stronger model ({stronger} for "
                                  f"{'the sets' if three else 'both'}{hint}), {some} "
                                  "dropped or published in coarser values, or the risk named: "
                                  "{@allow_clear=" + repr(names) + "}" + recode)
    return list(dict.fromkeys(f["column"] for f in found))


def _columns_read(f) -> set:
    """The columns a finding of :func:`set_pair_findings` reads."""
    w = f["with"]
    return {f["column"], *(w if isinstance(w, (list, tuple)) else [w])}


def _recode_all(f, published, params, codes, others, recoded, allow_recode, members,
                allow_clear, tries: int = 8) -> list:
    """Every column published as it is to name in ``allow_recode`` so that
    the refused column ``f['column']`` is published, those already named
    among them: with one named, the adversary reads the next most telling
    (H39: Salaries asked for rank, then rank and discipline, then all
    three); [] where columns published as they are do not explain it (a
    sensitive partner's set does)."""
    col = f["column"]
    allowed = list(dict.fromkeys(allow_recode))
    g = f
    for _ in range(tries):
        as_is = g.get("as_is") or []
        with_ = g["with"] if isinstance(g["with"], (list, tuple)) else [g["with"]]
        if not as_is or len(as_is) != len(with_):
            return []
        allowed += [c for c in as_is if c not in allowed]
        again = [h for h in set_pair_findings(published, params, codes, others, recoded,
                                              allowed, members)
                 if h["column"] == col and h["column"] not in allow_clear and not h.get("named")]
        if not again:
            return allowed             # those given too: the whole option to type
        g = again[0]
    return []


#: Larger l a refusal of :func:`check_set_pairs` tries, to name one.
CLEARING_TRIES = 4


def _clearing_l(published, params, codes, others, recoded, allow_recode, members, f):
    """The smallest l, a few steps above the sets' own, at which the sets of
    the refused column and of its partners read with it (p = 1, held to an
    l) no longer give it away; None where none of those does, or the l would
    make a set the whole domain (a set that tells nothing), or the sets are
    not drawn as eq. 19 draws them (``members`` given)."""
    import dataclasses
    if members:
        return None
    with_ = f["with"] if isinstance(f["with"], (list, tuple)) else [f["with"]]
    sizes = {a.name: a.d for a in published}
    names = [n for n in [f["column"], *with_]
             if n in params and not params[n].exact and n in sizes]
    if any(params[n].l is None or params[n].p < 1.0 for n in names):
        return None
    base = max(params[n].eta for n in names)
    for l2 in range(base + 1, base + CLEARING_TRIES + 1):
        if any(l2 >= sizes[n] for n in names):
            return None
        trial = dict(params)
        for n in names:
            trial[n] = dataclasses.replace(params[n], eta=l2, l=l2)
        again = set_pair_findings(published, trial, codes, others, recoded, allow_recode)
        if not any(g["column"] == f["column"] for g in again):
            return l2
    return None


def refuse_clear_l(ls: Mapping, sizes: Mapping, allow_clear, *, notes: Mapping | None = None,
                   file=None, k: int | None = None, generalized: Sequence = ()) -> list:
    """The partition publishers' and semantic diversity's form of
    :func:`check_clear`: an attribute held to l = 1 (``ls``) on a domain of
    two values or more (``sizes``) is published in the clear (a bucket, a
    group or a set may hold one row, whose value it then tells); so is every
    attribute ``generalized`` in groups of k rows (LGB's QI cells) when
    k = 1 (a group of one row shows its QI cells exactly, Sec. 3's identity
    protection 1/k = 1).  Refused unless named in ``allow_clear``; returns
    the named ones (recorded in the metadata as ``clear``).  ``notes``: per
    attribute, how l came to be 1 (', after clip_l')."""
    allow_clear = check_names(allow_clear, "allow_clear")
    by_k = [a for a in generalized if sizes.get(a, 2) > 1] if k == 1 else []
    for a in allow_clear:
        if a not in ls and a not in by_k:
            raise InputError(f"names {a!r}, which is not held to an l"
                             + (" nor generalized in groups of k = 1" if k == 1 else ""),
                             param="allow_clear", file=file,
                             expected=f"one of {sorted({*ls, *by_k})}")
    by_l = [a for a, v in ls.items() if v == 1 and sizes.get(a, 2) > 1]
    clear = by_l + [a for a in by_k if a not in by_l]
    refused = [a for a in clear if a not in allow_clear]
    if refused:
        notes = notes or {}
        whats = [f"{a} (l = 1{notes.get(a, '')}" + (", k = 1)" if a in by_k else ")")
                 if a in by_l else f"{a} (k = 1)" for a in refused]
        l_only = all(a in by_l and a not in by_k for a in refused)
        k_only = not any(a in by_l for a in refused)
        how = ("at l = 1 a set, bucket or group may hold its row's value alone, and so "
               "tells it" if l_only else
               "at k = 1 a group may hold one row, whose QI cells it then shows exactly "
               "(whoever knows them finds the row)"
               + ("" if k_only else "; at l = 1 a bucket may hold its row's value alone"))
        raise InputError(f"would publish {', '.join(whats)} in the clear: {how}",
                         param="l" if l_only else "k" if k_only else "model",
                         column=refused[0] if len(refused) == 1 else None, file=file,
                         expected=("l >= 2" if l_only else "k >= 2" if k_only
                                   else "k >= 2 and l >= 2")
                         + ", or the risk named: {@allow_clear=" + repr(refused) + "}")
    return clear


def check_rare(published, params, counts: dict, n: int, allow_rare, *,
               file=None, declare: str = "{@domains}, {@bins}") -> dict:
    """Sensitive columns whose domains were read off the data (``counts``:
    rows per value of each such domain) with values so rare that counting
    the sets that hold them would point at their holders
    (:func:`anonset.randomized.rare.expected_exposed` >= ``RARE_EXPECTED``).
    They are refused unless named in ``allow_rare``; returns, for the named
    ones, what is recorded in the metadata."""
    from .randomized.rare import below, expected_exposed, finding
    found = {}
    for a in published:
        par = params.get(a.name)
        if a.role != "sensitive" or a.name not in counts or a.d <= 1 or par.p < 1.0:
            continue            # under p < 1 a holder's set may miss its value
        f = finding(expected_exposed(counts[a.name], n, par), below(par), counts[a.name])
        if f is not None:
            found[a.name] = f
    return refuse_rare(found, allow_rare, file=file, declare=declare)


def warn_rare_declared(published, params, counts: dict, n: int, *,
                       declare: str = "{@domains}, {@bins}") -> list:
    """Warn where a declared domain lists only values the data holds and
    some so rare that :func:`check_rare` would refuse them were the domain
    read off the data (``counts``: rows per value of such domains): a list
    copied from the data (what the rare refusal's remedy invited) tells as
    much, and the refusal no longer runs.  Returns the columns warned of."""
    from .randomized.rare import below, expected_exposed, finding
    warned = []
    for a in published:
        par = params.get(a.name)
        if a.role != "sensitive" or a.name not in counts or a.d <= 1 or par.p < 1.0:
            continue
        f = finding(expected_exposed(counts[a.name], n, par), below(par), counts[a.name])
        if f is not None:
            warn_declared_from_data(a.name, f, declare)
            warned.append(a.name)
    return warned


def warn_declared_from_data(name: str, f: dict, declare: str) -> None:
    """The warning of :func:`warn_rare_declared` for one column (``f``: its
    rare finding)."""
    import warnings
    from .schema import InferredDomainWarning, _outside_stacklevel
    lone = f", {f['lone']:,} of them held by one row alone" if f["lone"] else ""
    warnings.warn(
        render_api(f"the declared domain of {name!r} lists only values the data holds (all "
                   f"{f['d']:,}{lone}): if it was copied from the data it tells, as a domain "
                   "read off it does, that each value is someone's, and counting the sets "
                   f"that hold a value points at its holders ({_fewer(f['below'])}); declare "
                   f"every value the column can hold, or coarser values ({declare})"),
        InferredDomainWarning, stacklevel=_outside_stacklevel())


def render_api(text: str) -> str:
    """``{@name}`` references in ``text`` as the Python API names them."""
    return _REF.sub(lambda m: api_name(m.group(1), m.group(2)) if m.group(2) is not None
                    else api_name(m.group(1)), text)


def refuse_rare(found: dict, allow_rare, *, file=None,
                declare: str = "{@domains}, {@bins}") -> dict:
    """The refusal of :func:`check_rare` (``found``: per column its
    ``expected``, ``below``, ``lone`` and ``d``) unless every column is named
    in ``allow_rare``; returns the named ones' records (``below``, ``d``)."""
    refused = [c for c in found if c not in allow_rare]
    if refused:
        c = refused[0]
        f = found[c]
        lone = f" ({f['lone']:,} held by one row alone)" if f["lone"] else ""
        also = f" (and {', '.join(map(repr, refused[1:]))})" if len(refused) > 1 else ""
        raise InputError(f"its domain is read off the data, so each of its {f['d']:,} values is "
                         f"known to be someone's{lone}: counting the sets that hold a value "
                         f"would point at its holders, expected for {_amount(f['expected'])} of "
                         f"its values ({_fewer(f['below'])}){also}",
                         column=c, file=file,
                         expected=f"its domain declared from what the column can hold, not "
                                  f"copied from the data ({declare}: every possible value, "
                                  "which may include values nobody holds, or coarser "
                                  "values), or the risk named: {@allow_rare="
                                  + repr(refused) + "}")
    # recorded in the metadata: what the release itself shows (its sets'
    # bound and the domain's size), never the original's counts (how many
    # values one row alone holds, the expectation drawn from them)
    return {c: {"below": f["below"], "d": f["d"]} for c, f in found.items() if c in allow_rare}


def _fewer(top: int) -> str:
    return "in one set alone" if top == 2 else f"in fewer than {top} sets"


def _amount(x: float) -> str:
    return f"{x:,.1f}" if x >= 10 else f"{x:.2g}"


# ------------------------------------------------------- reconstruction
#: Largest cross-tabulation reconstruct() builds, in cells.
MAX_CELLS = 1 << 28


def check_reconstructable(table, *, file=None) -> None:
    """Paper 000's estimators (eq. 18, eq. 26, the exact EM) assume its
    sampler: the set around the true value with probability p, else uniform
    over the eta-subsets.  A table published under (l, d)-semantic diversity
    (paper 001) draws its dummies at distance >= d, which is not that law,
    and those estimators then return wrong counts without a sign (GSS
    vocabulary scores, l = 3, d = 2: 2,324 people with score 0 against 194;
    paper 001's estimator: 364): refused, naming the estimator to use."""
    if getattr(table, "n_rows", None) == 0:
        # NaN counts marked converged (exact_em), zeros (em), a bare 'no
        # rows' from a file (H88): refused alike on every path
        raise InputError("has no rows", param="table" if file is None else None, file=file,
                         expected="a release with at least one row to estimate from" +
                                  ("" if file is not None else " (a take() that selects no "
                                                               "row has none)"))
    model = getattr(table, "model", None) or {}
    if model.get("name") == "semantic":
        raise InputError("was published under (l, d)-semantic diversity (paper 001), whose "
                         "dummy values are not paper 000's uniform sets: paper 000's "
                         "estimators would return wrong counts",
                         param="table" if file is None else None, file=file,
                         expected="paper 001's estimators: anonset semantic-analyze "
                                  "(anonset.semantic.analyze)")
    # parameters that contradict the release's own model (an edited or
    # corrupted file: p = 0.5 under l-diversity gave a converged estimate
    # with 0 sales workers against 38, H47); the audit fails them too
    from .models import Anonymity, Diversity, model_from_dict
    try:
        declared = model_from_dict(model) if model else None
    except (ValueError, KeyError, TypeError):
        declared = None
    if isinstance(declared, (Diversity, Anonymity)):
        for name, par in getattr(table, "params", {}).items():
            if not par.exact and par.p != 1.0:
                raise InputError(f"has p = {par.p:.6g} in its parameters, but its model "
                                 f"({declared.name}) publishes with p = 1: the release's "
                                 "parameters contradict its model (edited or corrupted), "
                                 "and the estimate would be wrong",
                                 param="table" if file is None else None, column=name,
                                 file=file, expected="a release as anonset wrote it (anonset "
                                                     "audit names what is wrong)")


def close_match(name, choices) -> str:
    """' (did you mean 'x'?)' where one of ``choices`` is spelt nearly as
    ``name`` (a typo, a case slip), else ''.

    Examples
    --------
    >>> close_match("sensitve", ["sensitive", "exact"]), close_match("zzz", ["age"])
    (" (did you mean 'sensitive'?)", '')
    >>> close_match("Age", ["age", "job"])
    " (did you mean 'age'?)"
    """
    m = nearest(name, choices)
    if isinstance(m, str) and m != m.strip() and str(name) == m.strip():
        # the command line strips a name: white space at either end is escaped
        import shlex
        return (f" (did you mean {m!r}? on the command line a space at either end of a "
                f"name is written with a backslash: {shlex.quote(cli_escape(m))})")
    return f" (did you mean {m!r}?)" if m is not None else ""


def nearest(name, choices) -> str | None:
    """The one of ``choices`` spelt nearly as ``name`` (the same but for
    case, or difflib's ratio >= 0.8), or None."""
    import difflib
    names = [str(c) for c in choices]
    lower = {c.lower(): c for c in names}
    if str(name).lower() in lower:
        return lower[str(name).lower()]
    m = difflib.get_close_matches(str(name), names, n=1, cutoff=0.8)
    return m[0] if m else None


def comma_hint(cols) -> str:
    """Where a column's name holds a comma: how to write it in a
    comma-separated list on the command line."""
    named = [str(c) for c in cols if "," in str(c)]
    return (" (on the command line, a comma inside a name is written \\, as in '"
            + named[0].replace(",", "\\,") + "')") if named else ""


def check_attributes(table, attributes) -> list:
    """Attribute names of a published table to cross-tabulate."""
    if isinstance(attributes, str):
        attributes = [attributes]
    try:
        attributes = list(attributes)
    except TypeError:
        raise InputError(f"got a {type(attributes).__name__}", param="attributes",
                         expected="names of published attributes") from None
    if not attributes:
        raise InputError("is empty", param="attributes",
                         expected="at least one published attribute")
    if len(set(attributes)) != len(attributes):
        raise InputError(f"names an attribute twice: {attributes}", param="attributes",
                         expected="each attribute once")
    # a published table's attributes, or a schema's published ones
    names = list(table.names) if hasattr(table, "params") else \
        [a.name for a in table.published]
    for a in attributes:
        if not isinstance(a, str) or a not in names:
            raise InputError(f"names {a!r}, which is not a published attribute"
                             + (close_match(a, names) if isinstance(a, str) else ""),
                             param="attributes", expected=f"one of {names}")
    return attributes


def check_informative(table, attributes, *, file=None) -> None:
    """Refuse an attribute whose sets say nothing of its values
    (``AttributeParams.says_nothing``: eta = d > 1, as at l = d or k = d,
    or p = 0): every estimator would return its starting point (the uniform
    split: Health Insurance's health at l = 2, 50 % 'yes' against 92 %
    true) as if it were an estimate."""
    blind = [a for a in attributes if table.params[a].says_nothing]
    if not blind:
        return
    a = blind[0]
    par = table.params[a]
    why = f"is its whole domain (eta = d = {par.d})" if par.eta >= par.d else \
        f"is drawn without regard to the true value (p = 0, eta = {par.eta})"
    rest = [x for x in table.names if not table.params[x].says_nothing]
    raise InputError(f"every published set of it {why}, so the table says nothing of its "
                     "values: any estimate would be the starting point (the uniform split), "
                     "not the data" +
                     (f" (so is {', '.join(map(repr, blind[1:]))})" if blind[1:] else ""),
                     param="attributes", column=a, file=file,
                     expected="attributes whose sets carry information (eta < d, p > 0)" +
                              (f": one of {rest}" if rest else "; this table has none"))


def check_cells(table, attributes) -> list:
    import math
    dims = [table.schema[a].d for a in attributes]
    n = math.prod(dims)
    if n > MAX_CELLS:
        raise InputError(f"{attributes} span {n:,} cells", param="attributes",
                         expected=f"at most {MAX_CELLS:,} cells: choose fewer attributes")
    return dims
