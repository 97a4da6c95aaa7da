"""``--config FILE`` for the commands whose options are argparse's own
(``msa-anonymize``, ``lgb``, ``semantic-anonymize``): a JSON or TOML file
whose keys are the command's long options, read as if they were written on
the command line before the user's own::

    # msa.toml, for: anonset msa-anonymize survey.csv -o pub.csv --config msa.toml
    qi = ["age", "sex", "zip"]
    sa = ["disease", "income"]
    identifier = ["name"]
    drop = ["note"]
    k = 5
    t = 0.3
    missing = "category"
    [hierarchy]
    zip = "zip_hierarchy.csv"          # relative to this file

A key is an option's long name (a dash may be written as an underscore; a
plural such as ``identifiers`` or ``hierarchies`` names the singular
option).  Lists of columns are lists; ``COL=VALUE`` options are tables;
switches are ``true``/``false``.  The command line wins for an option that
takes one value and adds to those that repeat (``--drop``); a column given
two roles, one in the file and one on the command line, is refused as on
the command line.  A seed, an output and a misspelt key are refused
(``anonset anonymize --config`` has its own, richer rules:
:mod:`anonset.cli.config`).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .config import ConfigError, read_raw, shown

__all__ = ["add_config", "config_argv", "with_config", "check_not_config", "COMMANDS"]

#: Options a file does not give: key material, outputs, the file itself.
_REFUSED = {"seed": "a seed is key material and does not belong in a configuration file; put "
                    "it in a key file (anonset keygen FILE) and name it with key_file",
            "output": "name the output on the command line",
            "rows": "name the output on the command line",
            "report": "name the output on the command line",
            "config": "a configuration file does not name another",
            "help": "not an option a file gives", "quiet": "not an option a file gives",
            "verbose": "not an option a file gives"}
#: Options whose values (or a table's values) are files, read relative to the
#: configuration file (as ``anonymize --config`` reads them): one file gives
#: the same key file and hierarchies wherever the command runs.
_PATHS = {"hierarchy", "domain", "matrix", "key_file"}


def add_config(p) -> None:
    p.add_argument("--config", metavar="CFG.json|CFG.toml",
                   help="options from a file: keys are this command's long options as "
                        "listed here (a dash may be an underscore); files it names are "
                        "relative to it; the command line wins for an option of one value and "
                        "adds to those that repeat (docs/cli.md)")


def _escape(name, key: bool = False) -> str:
    from ..validate import cli_escape
    return cli_escape(name, key)


def _path(v, base: Path, dest: str):
    if dest not in _PATHS or not isinstance(v, str):
        return v
    if dest == "domain" and not (v.endswith(".txt") or v.endswith(".csv")) and \
            not (base / Path(v).expanduser()).exists():
        return v                        # values written inline (a,b,c), not a file
    p = Path(v).expanduser()
    return v if p.is_absolute() else str(base / p)


def _text(v, where: str) -> str:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ConfigError(f"{where}: expected text or a number, got {shown(v, where)}")
    return str(v)


def _tokens(action, value, where: str, base: Path) -> list:
    flag = next(f for f in action.option_strings if f.startswith("--"))
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {shown(value, where)}")
        return [flag] if value else []
    keyed = "=" in str(action.metavar or "")
    if isinstance(value, dict):
        if not keyed and action.dest not in ("l", "t"):
            raise ConfigError(f"{where}: expected a list or a value, not a table")
        pairs = []
        for col, v in value.items():
            if isinstance(v, list):             # a domain's values, in order
                v = ",".join(_escape(_text(x, where)) for x in v)
            v = _path(_text(v, where), base, action.dest)
            # lgb's and msa's --hierarchy is a list of COL=PATH cut at its
            # commas (a folder named '2024, zip' was cut there: H79); the
            # rest of a path is read as it is written (H85)
            v = v.replace(",", "\\,") if action.dest == "hierarchy" else v
            pairs.append(f"{_escape(col, key=True)}={v}")
        if isinstance(action, argparse._AppendAction):
            return [f"{flag}={pair}" for pair in pairs]
        return [f"{flag}={','.join(pairs)}"]            # lgb's --l / --t COL=V,COL=V
    if keyed and isinstance(action, argparse._AppendAction):
        raise ConfigError(f"{where}: expected a table of column = value")
    if isinstance(value, list):
        return [f"{flag}={','.join(_escape(_text(x, where)) for x in value)}"]
    # FLAG=VALUE, one token: a value that starts with '-' ('-na') is not
    # read as another option (H119)
    return [f"{flag}={_path(_text(value, where), base, action.dest)}"]


def config_argv(path, parser: argparse.ArgumentParser) -> list:
    """The options a configuration file gives, as command-line tokens."""
    raw = read_raw(path)
    where = f"config {str(path)!r}"
    base = Path(path).resolve().parent
    actions = {}
    for a in parser._actions:
        for f in a.option_strings:
            if f.startswith("--"):
                actions[f[2:].replace("-", "_")] = a
    out, seen = [], set()
    for key, value in raw.items():
        canon = str(key).replace("-", "_")
        if canon in _REFUSED:
            raise ConfigError(f"{where}: key {key!r}: {_REFUSED[canon]}")
        a = actions.get(canon)
        if a is None:                   # identifiers, hierarchies, domains: the option
            for alt in (canon[:-3] + "y" if canon.endswith("ies") else None,
                        canon[:-1] if canon.endswith("s") else None):
                if alt in actions:
                    a = actions[alt]
                    break
        if a is None or a.dest in _REFUSED:
            from ..validate import close_match
            known = sorted(k for k in actions if k not in _REFUSED)
            raise ConfigError(f"{where}: unknown key {key!r}{close_match(canon, known)}; known "
                              f"keys are {known}")
        if a.dest in seen:
            raise ConfigError(f"{where}: key {key!r} gives {a.dest!r} twice")
        seen.add(a.dest)
        out += _tokens(a, value, f"{where}: {key!r}", base)
    return out


#: The commands that read ``--config`` through this module.
COMMANDS = ("msa-anonymize", "lgb", "semantic-anonymize")


def with_config(parser, argv: list, notes: list | None = None) -> list:
    """``argv`` with the options of the configuration file it names
    (``--config FILE`` after one of :data:`COMMANDS`) put before the user's
    own, so that the command line wins for an option of one value; before
    parsing, since a file may give an option argparse requires."""
    # the command is the first word that is not an option (the options
    # before it, -q, -v, take no value)
    i = next((j for j, a in enumerate(argv) if not a.startswith("-")), None)
    if i is None or argv[i] not in COMMANDS:
        return argv
    rest = argv[i + 1:]
    sub = parser._subcommand(argv[i])
    longs = [f for a in sub._actions for f in a.option_strings if f.startswith("--")]

    def config_flag(name: str) -> bool:
        # argparse takes a prefix no other option starts with (--conf FILE):
        # such a file was never read, and its t-closeness dropped (H119)
        return name == "--config" or (len(name) > 2 and "--config".startswith(name)
                                      and [f for f in longs if f.startswith(name)] == ["--config"])
    paths = [rest[j + 1] for j, a in enumerate(rest[:-1]) if config_flag(a)] + \
        [a.split("=", 1)[1] for a in rest if "=" in a and config_flag(a.split("=", 1)[0])]
    if not paths:
        return argv
    if len(paths) > 1:
        raise ConfigError("--config: given more than once; expected one configuration file")
    tokens = config_argv(paths[0], sub)
    if notes is not None:
        # an option of one value the command line gives replaces the file's
        # whole (lgb's --l job=2 dropped the file's l for disease): said
        mine = {_dest(sub, t) for t in rest} - {None}
        dropped = sorted({a.dest for a in map(lambda t: _action(sub, t), tokens)
                          if a is not None and a.dest in mine
                          and not isinstance(a, (argparse._AppendAction,
                                                 argparse._StoreTrueAction,
                                                 argparse._StoreFalseAction))})
        if dropped:
            notes.append(f"config {str(paths[0])!r}: {', '.join(dropped)} ignored: the command "
                         "line gives "
                         f"{' and '.join('--' + d.replace('_', '-') for d in dropped)}, "
                         "which replaces the file's value whole")
    return [*argv[:i + 1], *tokens, *rest]


def _action(sub, token):
    """The option ``token`` names (``--flag`` or ``--flag=value``, or a
    prefix argparse takes for one option), or None."""
    name = str(token).split("=", 1)[0]
    if not name.startswith("--") or len(name) < 3:
        return None
    acts = sub._option_string_actions
    if name in acts:
        return acts[name]
    found = {acts[f] for f in acts if f.startswith(name) and f.startswith("--")}
    return found.pop() if len(found) == 1 else None


def _dest(sub, token):
    a = _action(sub, token)
    return None if a is None else a.dest


def check_not_config(args) -> None:
    """The output is not the configuration file (an input is never overwritten)."""
    cfg, out = getattr(args, "config", None), getattr(args, "output", None)
    if cfg is not None and out is not None and Path(out).resolve() == Path(cfg).resolve():
        raise ConfigError(f"-o: the output is the configuration file {cfg!r}; choose another "
                          "name (an input is never overwritten)")
