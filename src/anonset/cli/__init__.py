"""The ``anonset`` command: one module per subcommand, registered here.

Subcommands::

    anonset demo          publish Adult under (5,...,5)-diversity, reconstruct, audit
    anonset anonymize     IN -o OUT: publish a CSV/Parquet table (papers 000/004)
    anonset reconstruct   IN --attributes a,b: cross-tabulate a published table
    anonset audit         PUBLISHED [--original IN]: check a release
    anonset semantic-anonymize / semantic-analyze   paper 001
    anonset lgb           paper 002
    anonset msa-anonymize paper 003
    anonset keygen FILE   a new key file
    anonset info          build facts (also ``anonset --version``)

Exit codes: 0 success, 1 a check failed (audit), 2 usage or data error (one
line on stderr naming the flag, column or file, no traceback), 130
interrupted (SIGINT, SIGTERM, SIGHUP).  Outputs are written atomically, so an
error or an interrupt never leaves a half-written file, and an input file is
never overwritten.  ``-q`` shows only errors, ``-v`` adds notes.  See
docs/cli.md.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import re
import importlib
import importlib.util
import logging
import os
import signal
import sys
import warnings

from .args import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, ONCE_SECRET, UsageError, error_line

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_USAGE", "EXIT_INTERRUPTED", "UsageError"]

#: Subcommand modules, each with ``register(subparsers)``, in help order.
SUBCOMMANDS = ("anonset.cli.demo", "anonset.cli.anonymize", "anonset.cli.reconstruct",
               "anonset.cli.audit", "anonset.cli.semantic", "anonset.cli.lgb",
               "anonset.cli.msa", "anonset.cli.report", "anonset.cli.info")
#: Further modules that add subcommands (kept for registration by name).
PLUGIN_MODULES: tuple = ("anonset.cli.reproduce",)

log = logging.getLogger("anonset")


# ------------------------------------------------------------------ parser
#: Words in an option's name that say its value may be a secret.
_SECRET_WORDS = ("key", "seed", "secret", "pass", "token")


def _may_carry_a_secret(flag: str) -> bool:
    """An unknown option whose value is never echoed: one close to a key
    option, a prefix of one (H95: '--key SECRET' on audit printed it), or
    one whose name holds a word such as key, seed, secret or pass."""
    name = flag.lstrip("-").lower()
    return bool(difflib.get_close_matches(flag, ONCE_SECRET, n=1, cutoff=0.75)) or \
        any(o.startswith(flag) for o in ONCE_SECRET if len(flag) > 2) or \
        any(w in name for w in _SECRET_WORDS)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors in one line (exit 2), like every other error."""

    def error(self, message):
        # argparse's own "ambiguous option: --see=VALUE could match --seed,
        # ..." echoes the value, which may be key material: never (H83)
        message = re.sub(r"^(ambiguous option: [^=\s]+)=.*?( could match )", r"\1=...\2",
                         message, flags=re.S)
        # nor argparse's "argument --seed: invalid int value: 'VALUE'": a
        # publication's key given to audit's or report's sampling seed (H87)
        message = re.sub(r"^(argument [^:]*(?:seed|key)[^:]*: invalid \S+ value): .*$",
                         r"\1 (not printed: it may be key material)", message, flags=re.S)
        # nor "argument --research-seed: ignored explicit argument 'VALUE'":
        # a switch given a value with '=' (H126)
        message = re.sub(r"^(argument [^:]*: ignored explicit argument) .*$",
                         r"\1 (not printed: it may be key material)", message, flags=re.S)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        # an argument no parser knows reaches the top parser; name the
        # subcommand that was meant, and the flag the user probably meant
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = self._subcommand(getattr(ns, "command", None)) or self
            flags = [f for a in sub._actions for f in a.option_strings if f.startswith("--")]
            # a value after a switch such as --research-seed, which takes
            # none, is left over: key material given to it by mistake is
            # never echoed either (H119)
            argv = list(sys.argv[1:] if args is None else args)

            def keyish(t: str) -> bool:
                # the flag, or the option an abbreviation of it names
                # (--research for --research-seed, H126)
                name = t.split("=", 1)[0]
                return _may_carry_a_secret(name) or any(
                    f.startswith(name) and _may_carry_a_secret(f) for f in flags)
            after = {str(argv[i + 1]) for i, t in enumerate(argv[:-1])
                     if str(t).startswith("--") and len(str(t)) > 2 and keyish(str(t))}
            near, shown, secret = [], [], False
            for x in extras:
                if x.startswith("--"):
                    m = difflib.get_close_matches(x.split("=", 1)[0], flags, n=1, cutoff=0.75)
                    near += [f"{x.split('=', 1)[0]}: did you mean {m[0]}?"] if m else []
                    # a misspelt --seed or --key-file, or one given to a
                    # command that takes no key: what follows it is key
                    # material, never echoed (H82: '--sed SECRET'; H87:
                    # 'audit ... --key-file SECRET' printed it)
                    secret = _may_carry_a_secret(x.split("=", 1)[0])
                    shown.append(x.split("=", 1)[0] + ("=..." if "=" in x and secret else ""))
                else:
                    shown.append("..." if secret or x in after else x)
                    secret = False
            sub.error(f"unrecognized arguments: {' '.join(shown)}" +
                      (f" ({'; '.join(near)})" if near else ""))
        return ns

    def _subcommand(self, name):
        for a in self._actions:
            if isinstance(a, argparse._SubParsersAction) and name in a.choices:
                return a.choices[name]
        return None


def build_parser() -> argparse.ArgumentParser:
    from .info import VersionAction
    parser = _Parser(
        prog="anonset",
        description="Publish tables under l-diversity and t-closeness when attributes are both "
                    "quasi-identifiers and sensitive, and reconstruct statistics from what was "
                    "published.",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 usage or data error, 130 interrupted. "
               "See docs/cli.md.")
    parser.add_argument("--version", action=VersionAction)
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true",
                           help="print only errors (no warnings, notes or progress)")
    verbosity.add_argument("-v", "--verbose", action="store_true", help="print notes too")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in SUBCOMMANDS + PLUGIN_MODULES:
        if importlib.util.find_spec(mod) is None:     # not part of this install
            continue
        importlib.import_module(mod).register(sub)
    for p in sub.choices.values():        # -q / -v after the subcommand too
        g = p.add_argument_group("output").add_mutually_exclusive_group()
        g.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="print only errors")
        g.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="print notes too")
    return parser


class _Signal(Exception):
    """SIGTERM or SIGHUP, raised where the program is, so that every cleanup
    (temporary files) runs."""


@contextlib.contextmanager
def _signals():
    from ..io.atomic import signal_handlers

    def handler(signum, frame):
        raise _Signal(signal.Signals(signum).name)
    with signal_handlers(("SIGTERM", "SIGHUP"), handler):
        yield


class _ClosedPipe:
    """Standard output that survives its reader leaving (`anonset audit ...
    -o audit.csv | head`): the first write into a closed pipe points the
    descriptor at the null device and the command goes on, so the files it
    was asked to write are written and its exit code is its own (a
    BrokenPipeError had ended it, exit 0, with -o never written)."""

    def __init__(self, stream):
        self._stream = stream
        self._gone = False

    def _closed(self) -> None:
        self._gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())   # the buffered rest goes nowhere
            os.close(null)

    def write(self, text):
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self):
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._closed()

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _pipe_safe_stdout():
    old = sys.stdout
    sys.stdout = _ClosedPipe(old)
    try:
        yield
    finally:
        with contextlib.suppress(BrokenPipeError):
            sys.stdout.flush()
        sys.stdout = old


@contextlib.contextmanager
def _logging(quiet: bool, verbose: bool):
    """Messages of the ``anonset`` logger (and Python warnings) on stderr,
    one line each, at the level -q / -v ask for."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("anonset: %(levelname)s: %(message)s"))
    level = logging.ERROR if quiet else logging.INFO if verbose else logging.WARNING
    old_level, old_prop = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield               # on an error, only the error line is printed
            seen = set()
            for w in caught:
                msg = str(w.message)
                if msg not in seen:
                    seen.add(msg)
                    log.warning("%s", msg)
    finally:
        log.removeHandler(handler)
        log.setLevel(old_level)
        log.propagate = old_prop


def main(argv=None) -> int:
    """Run the ``anonset`` command; returns the exit code.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).
    """
    with _pipe_safe_stdout():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    from .args import check_no_dash_outputs, check_once
    from .option_file import check_not_config, with_config
    argv = list(sys.argv[1:] if argv is None else argv)
    notes: list = []                   # what the command line replaced of a --config file
    try:
        check_once(argv, parser._subcommand)   # --l 3 ... --l 2: refused, not the last kept
        # --config of msa-anonymize, lgb, semantic-anonymize
        argv = with_config(parser, argv, notes)
    except ValueError as e:
        cmd = next((a for a in argv if not a.startswith("-")), "")
        print(f"anonset {cmd}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:            # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    where = f"anonset {args.command}"
    try:
        check_not_config(args)
        check_no_dash_outputs(args)
        with _signals(), _logging(args.quiet, args.verbose):
            for note in notes:         # (said once the run succeeds, as every warning)
                warnings.warn(note, stacklevel=1)
            return args.func(args)
    except (KeyboardInterrupt, _Signal) as e:
        why = "interrupted" if isinstance(e, KeyboardInterrupt) else f"stopped by {e}"
        print(f"\n{where}: {why}; no output is left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, KeyError) as e:
        # usage and data errors: one line, naming the flag, column or file
        print(f"{where}: error: {error_line(e, getattr(args, 'flag_names', None))}", file=sys.stderr)
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
