"""A small configuration file for ``anonset anonymize``: JSON or TOML.

The keys mirror the command-line options (a dash may be written as an
underscore); values are what the option would take, typed::

    # anonymize.toml
    identifiers = ["id"]
    sensitive   = ["age", "job", "city"]
    other       = ["note"]
    l           = 5                    # or  [l]  age = 3  job = 5  city = 5
    clip_l      = true
    ordinal     = ["grade"]

    [bins]
    age = [0, 20, 40, 60, 80, 120]     # or "0:20:40:60:80:120"

    [hierarchies]
    job = "job_hierarchy.csv"          # ARX format; relative to this file

    [domains]
    city = "cities.txt"                # one value per line, or a list

Paths inside the file are relative to the file's own directory.  Unknown keys
are errors (a misspelt key must not silently weaken the privacy model).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

__all__ = ["load_config", "read_raw", "merge", "parse_bins", "read_domain_file", "CONFIG_KEYS",
           "ConfigError"]

#: key -> expected kind: 'names' (list of column names), 'model' (number or
#: {column: number}), 'ground' (name or {column: name}), 'bins' ({column:
#: edges}), 'paths' ({column: path}), 'domains' ({column: path or values}),
#: 'bool', 'str', 'int', 'seed'.
CONFIG_KEYS = {
    "sensitive": "names", "exact": "names", "identifiers": "names", "other": "names",
    "drop": "names", "ordinal": "names", "allow_clear": "names", "allow_recode": "names",
    "allow_rare": "names", "allow_shared_id": "names", "allow_identifier": "names",
    "new_in_series": "names",
    "l": "model", "k": "model", "t": "model", "entropy": "bool", "ground": "ground",
    "bins": "bins", "hierarchies": "paths", "domains": "domains",
    "key_file": "path", "params_from": "path", "record_id": "str", "research_seed": "bool",
    "keep_order": "bool",
    "rng": "str", "threads": "int", "clip_l": "bool", "missing": "str", "missing_token": "str",
    "format": "str", "input_format": "str",
}
_ALIASES = {"identifier": "identifiers", "hierarchy": "hierarchies", "domain": "domains",
            "n_threads": "threads"}


class ConfigError(ValueError):
    """An invalid configuration file; the message names the file and the key."""


def load_config(path) -> dict:
    """Read and validate a JSON (``.json``) or TOML (``.toml``) config file.

    Returns a dict with canonical keys (see :data:`CONFIG_KEYS`); relative
    paths are resolved against the file's directory.

    Examples
    --------
    >>> import json, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "c.json")
    >>> _ = open(p, "w").write(json.dumps({"l": 3, "identifier": ["id"]}))
    >>> sorted(load_config(p).items())
    [('identifiers', ['id']), ('l', 3)]
    """
    path = Path(path)
    where = str(path)
    raw = read_raw(path)
    base = path.resolve().parent
    out: dict[str, Any] = {}
    for key, value in raw.items():
        canon = str(key).replace("-", "_")
        canon = _ALIASES.get(canon, canon)
        if canon == "seed":
            raise ConfigError(f"config {where!r}: key 'seed': a seed is key material and does "
                              "not belong in a configuration file; put it in a key file "
                              "(anonset keygen FILE) and name it with key_file")
        if canon == "first_in_series":
            # a file serves every release of a series: kept in it, the
            # declaration would take each later release for a first one
            raise ConfigError(f"config {where!r}: key {key!r}: a release is the first of its "
                              "series once; declare it on the command line "
                              "(--first-in-series), not in a file every release reads")
        if canon not in CONFIG_KEYS:
            from ..validate import close_match
            raise ConfigError(f"config {where!r}: unknown key {key!r}"
                              f"{close_match(key, CONFIG_KEYS)}; known keys are "
                              f"{sorted(CONFIG_KEYS)}")
        if canon in out:
            raise ConfigError(f"config {where!r}: key {key!r} is given twice")
        out[canon] = _check(CONFIG_KEYS[canon], value, f"config {where!r}: {key!r}", base)
    return out


def read_raw(path) -> dict:
    """The top-level table of a JSON (``.json``) or TOML (``.toml``) file,
    unchecked; :class:`ConfigError` names the file where it cannot be read."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        what = ("is a folder" if path.is_dir() else "is not a regular file" if path.exists()
                else "is a link to nothing" if path.is_symlink() else "does not exist")
        raise ConfigError(f"config file {where!r} {what}; expected a .json or .toml file")
    from ..io.tables import read_text_file
    text = read_text_file(path, "configuration file")
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"config {where!r}: invalid JSON at line {e.lineno}: {e.msg}") from None
    elif suffix == ".toml":
        raw = _load_toml(text, where)
    else:
        raise ConfigError(f"config {where!r}: unknown format {suffix or '(no suffix)'!r}; "
                          "use a .json or .toml file")
    if not isinstance(raw, dict):
        raise ConfigError(f"config {where!r}: the top level must be a table/object of options")
    return raw


def _load_toml(text: str, where: str) -> dict:
    try:
        import tomllib as toml        # Python >= 3.11
    except ImportError:               # pragma: no cover - Python 3.10
        try:
            import tomli as toml
        except ImportError:
            raise ConfigError(f"config {where!r}: reading TOML on Python < 3.11 needs the "
                              "'tomli' package (pip install tomli), or use a .json config") from None
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as e:
        raise ConfigError(f"config {where!r}: invalid TOML: {e}") from None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: Words in a key's name that say its value may be key material.
SECRET_WORDS = ("key", "seed", "secret", "pass", "token")


def shown(v, where: str) -> str:
    """A configuration value as an error shows it: its repr, unless the key
    it was given to may hold key material (``research_seed = "<the key>"``
    printed the key, H119), then its type only."""
    key = where.rsplit(":", 1)[-1].lower()
    if any(w in key for w in SECRET_WORDS):
        return f"a {type(v).__name__} (not printed: it may be key material)"
    return repr(v)


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except OSError:                 # a name longer than a file's may be
        return False


def _check(kind: str, v, where: str, base: Path):
    if kind == "names":
        if isinstance(v, str):
            from .args import split_commas
            v = split_commas(v)
        if not isinstance(v, list) or not all(isinstance(s, str) and s for s in v):
            raise ConfigError(f"{where} must be a list of column names, got {shown(v, where)}")
        return v
    if kind == "model":
        if _number(v):
            return v
        if isinstance(v, str) and v.strip().lower() == "inf":
            return math.inf
        if isinstance(v, dict) and v:
            out = {}
            for col, x in v.items():
                if isinstance(x, str) and x.strip().lower() == "inf":
                    x = math.inf
                if not _number(x):
                    raise ConfigError(f"{where}: the value for column {col!r} must be a number, "
                                      f"got {shown(x, where)}")
                out[str(col)] = x
            return out
        raise ConfigError(f"{where} must be a number or a table {{column: number}}, "
                          f"got {shown(v, where)}")
    if kind == "ground":
        if isinstance(v, str):
            return v
        if isinstance(v, dict) and all(isinstance(x, str) for x in v.values()):
            return {str(c): x for c, x in v.items()}
        raise ConfigError(f"{where} must be a ground name or a table {{column: name}}, "
                          f"got {shown(v, where)}")
    if kind == "bins":
        if not isinstance(v, dict):
            raise ConfigError(f"{where} must be a table {{column: edges}}, got {shown(v, where)}")
        out = {}
        for col, edges in v.items():
            try:
                out[str(col)] = parse_bins(edges)
            except ValueError as e:
                raise ConfigError(f"{where}: column {col!r}: {e}") from None
        return out
    if kind == "paths":
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
            raise ConfigError(f"{where} must be a table {{column: file path}}, "
                              f"got {shown(v, where)}")
        return {str(c): str(base / x) for c, x in v.items()}
    if kind == "domains":
        if not isinstance(v, dict):
            raise ConfigError(f"{where} must be a table {{column: file path or list of values}}, "
                              f"got {shown(v, where)}")
        out = {}
        for c, x in v.items():
            if isinstance(x, str):
                # a file relative to the config, or the values inline
                # ("a,b,c"), as --domain COL=a,b,c reads them (the config's
                # folder was put before the first value, H119)
                inline = "," in x and not _is_file(base / x)
                out[str(c)] = x if inline else str(base / x)
            elif isinstance(x, list) and x:
                out[str(c)] = list(x)
            else:
                raise ConfigError(f"{where}: column {c!r} needs a file path or a non-empty list "
                                  f"of values, got {shown(x, where)}")
        return out
    if kind == "bool":
        if not isinstance(v, bool):
            raise ConfigError(f"{where} must be true or false, got {shown(v, where)}")
        return v
    if kind == "str":
        if not isinstance(v, str):
            raise ConfigError(f"{where} must be a string, got {shown(v, where)}")
        return v
    if kind == "int":
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{where} must be a positive integer, got {shown(v, where)}")
        return v
    if kind == "path":
        if not isinstance(v, str) or not v:
            raise ConfigError(f"{where} must be a file path, got {shown(v, where)}")
        return str(base / v)
    raise AssertionError(kind)  # pragma: no cover


def parse_bins(edges) -> list:
    """Bin edges from a list of numbers or a ``"0:10:20:inf"`` string."""
    if isinstance(edges, str):
        parts = [s.strip() for s in edges.split(":")]
    elif isinstance(edges, (list, tuple)):
        parts = list(edges)
    else:
        raise ValueError(f"bins must be a list of edges or 'a:b:c', got {edges!r}")
    out = []
    for x in parts:
        if isinstance(x, bool):             # JSON's true is no edge (float(True) is 1)
            raise ValueError(f"bin edge {x!r} is not a number")
        try:
            f = float(x)
        except (TypeError, ValueError):
            raise ValueError(f"bin edge {x!r} is not a number") from None
        if math.isnan(f):
            raise ValueError("bin edge NaN is not allowed")
        out.append(f)
    if len(out) < 2 or any(b <= a for a, b in zip(out[:-1], out[1:])):
        raise ValueError(f"bins need at least two strictly increasing edges, got {edges!r}")
    return out


def read_domain_file(path, inline: str = "COL=a,b,c") -> list:
    """Domain values from a text file: one value per line, blank lines and
    lines starting with '#' ignored, order kept.  A value that names no file
    and holds a comma lists the values inline (``a,b,c``), as
    semantic-anonymize's ``--domain`` does."""
    p = Path(path)
    try:
        is_file = p.is_file()
    except OSError:         # an inline list longer than a file name may be
        is_file = False
    if not is_file and "," in str(path):
        from .args import split_commas
        vals = split_commas(str(path), keep_empty=True)
        if any(not v for v in vals):
            raise ValueError(f"domain {str(path)!r} has an empty value")
        _refuse_repeats(vals, f"domain {str(path)!r}")
        return vals
    if not is_file:
        # a folder, a pipe or a device exists: not said not to (H144), as
        # --hierarchy and --config say
        try:
            what = ("is not a regular file (a folder)" if p.is_dir() else
                    "is not a regular file (a pipe or a device)" if p.exists()
                    else "does not exist")
        except OSError:
            what = "does not exist"
        raise ValueError(f"domain file {str(p)!r} {what}; expected a file with one value per "
                         f"line, or the values inline: {inline}")
    from ..io.tables import read_text_file
    vals = [ln.strip() for ln in read_text_file(p, "domain file").splitlines()]
    vals = [v for v in vals if v and not v.startswith("#")]
    if not vals:
        raise ValueError(f"domain file {str(p)!r} lists no values")
    _refuse_repeats(vals, f"domain file {str(p)!r}")
    return vals


def _refuse_repeats(vals: list, where: str) -> None:
    seen: set = set()
    twice = next((v for v in vals if v in seen or seen.add(v)), None)
    if twice is not None:
        raise ValueError(f"{where} lists the value {twice!r} more than once (a domain holds "
                         "each value once, in its order)")


#: The column roles: lists that the command line adds to, moving a column it
#: names out of the role the file gave it.
ROLE_KEYS = ("sensitive", "exact", "identifiers", "other", "drop")


def merge(config: Mapping, flags: Mapping) -> dict:
    """Options from the command line over those of the config file.

    A flag that is None was not given.  The privacy model (l, k, t, entropy)
    is taken as a whole from the command line when any of l, k, t is given
    there, so that ``--t`` on the command line never silently combines with
    an ``l`` from the file.  Role lists are merged: a column the command line
    names takes that role, wherever the file put it (``--drop union`` keeps
    the file's other dropped columns, and the file's bins, hierarchy,
    domain, order, per-column l, k, t or ground, and the risks it allows,
    of a column the command line drops or names an identifier go with it).
    Other lists are replaced.

    >>> merge({"drop": ["a", "b"], "sensitive": ["c"]}, {"drop": ["c"], "other": None})
    {'drop': ['a', 'b', 'c'], 'sensitive': []}
    """
    out = dict(config)
    if any(flags.get(k) is not None for k in ("l", "k", "t")):
        for k in ("l", "k", "t", "entropy"):
            out.pop(k, None)
    named = {c: k for k in ROLE_KEYS for c in (flags.get(k) or [])}
    for k in ROLE_KEYS:
        if isinstance(out.get(k), list):
            out[k] = [c for c in out[k] if named.get(c, k) == k]
    # a column the command line leaves out of this release (drop, identifier)
    # takes the file's description of it along (one file for every release
    # of a series); a description the command line gives is still refused
    gone = {c for c, k in named.items() if k in ("drop", "identifiers")}
    for k in ("bins", "hierarchies", "domains"):
        if gone and isinstance(out.get(k), dict):
            out[k] = {c: v for c, v in out[k].items() if c not in gone}
    if gone and isinstance(out.get("ordinal"), list):
        out["ordinal"] = [c for c in out["ordinal"] if c not in gone]
    # and the file's privacy model of it (an l, k, t or ground per column),
    # and the risks the file names for it: the column is not published
    for k in ("l", "k", "t", "ground"):
        if gone and isinstance(out.get(k), dict):
            out[k] = {c: v for c, v in out[k].items() if c not in gone}
    for k in ("allow_clear", "allow_recode", "allow_rare", "allow_shared_id",
              "allow_identifier", "new_in_series"):
        if gone and isinstance(out.get(k), list):
            out[k] = [c for c in out[k] if c not in gone]
    for k, v in flags.items():
        if v is None:
            continue
        if k in ROLE_KEYS and isinstance(v, list):
            have = list(out.get(k) or [])
            out[k] = have + [c for c in v if c not in have]
            continue
        if isinstance(v, dict):
            if not v:
                continue
            merged = dict(out.get(k) or {}) if isinstance(out.get(k), dict) else {}
            merged.update(v)            # per column: the command line wins
            out[k] = merged
        elif isinstance(v, list):
            if v:
                out[k] = v
        else:
            out[k] = v
    return out
