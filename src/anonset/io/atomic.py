"""Atomic outputs: every file is written to a temporary name beside its
target and renamed at the end, so a failure or an interrupt never leaves a
partial file at a final path.

* Several files that belong together (a CSV table and its ``.anonset.json``)
  are one unit (:func:`atomic_paths`): every target is checked before
  anything is written, and none is left behind unless all are.
* Temporary names carry the writer's process id
  (``.OUT.anonset-<pid>-<random>.tmp``); a run that was killed (SIGKILL, a
  power cut) leaves them behind, and the next run on the same output removes
  those whose process is gone (:func:`remove_stale`).  SIGTERM and SIGHUP are
  turned into an exception by the command line, so the cleanup runs.
* An input file is never overwritten.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..validate import InputError

__all__ = ["atomic_path", "atomic_paths", "check_name_lengths", "same_file", "remove_stale",
           "temp_dir"]

log = logging.getLogger("anonset")
_TEMP = re.compile(r"^\.(?P<name>.+)\.anonset-(?P<pid>\d+)-[A-Za-z0-9_]+\.(tmp|d)$")


def same_file(a, b) -> bool:
    a, b = Path(a), Path(b)
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True            # someone else's process: leave its files alone
    return True


def remove_stale(path) -> list:
    """Remove temporaries of ``path`` left by a killed run (their process is
    gone); returns what was removed."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = _TEMP.match(p.name)
        if not m or m.group("name") != path.name or _alive(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p)
            log.warning("removed %s, left by an interrupted run", p)
    return removed


def _check_target(path: Path, protect) -> Path:
    for p in protect:
        if p is not None and same_file(path, p):
            raise InputError("is an input file; choose another name (inputs are never "
                             "overwritten)", param="output", file=path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"is in a directory that does not exist ({str(parent)!r})",
                         param="output", file=path)
    if path.is_dir():
        raise InputError("is a directory", param="output", file=path,
                         expected="a file name")
    return parent


def check_name_lengths(paths: list, parents: list | None = None) -> None:
    """Every target's temporary name fits the file system (the OS says only
    "File name too long", naming no option): refused naming the main
    target (the first) and the longest name it may have, before anything
    is written."""
    paths = [Path(p) for p in paths]
    if parents is None:
        parents = [p.parent if str(p.parent) else Path(".") for p in paths]
    main = len(os.fsencode(paths[0].name))
    extra = max(len(os.fsencode(Path(_temp_name(p, parent, ".tmp")).name)) - main
                for p, parent in zip(paths, parents))
    try:
        name_max = os.pathconf(parents[0], "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        name_max = 255
    if main + extra > name_max:
        also = " (the files beside it, each under a temporary name first" \
            if len(paths) > 1 else " (under a temporary name first"
        raise InputError(f"has a name of {main} bytes, and the file system allows {name_max}"
                         f"{also}: {extra} bytes more)", param="output", file=paths[0],
                         expected=f"a name of at most {name_max - extra} bytes")


def _temp_name(path: Path, parent: Path, suffix: str) -> str:
    return tempfile.mktemp(prefix=f".{path.name}.anonset-{os.getpid()}-", suffix=suffix,
                           dir=parent)


@contextlib.contextmanager
def atomic_paths(*paths, protect=(), private: bool = False):
    """Yield one temporary path per target; on success move them all into
    place.  Every target is checked first (not an input, not a directory, its
    directory exists); on any failure no target is created or changed.
    ``private``: the files are readable by their owner only (0600, whatever
    the umask), for what holds statistics of the original data."""
    paths = [Path(p) for p in paths]
    check_name_lengths(paths)
    parents = [_check_target(p, protect) for p in paths]
    for p in paths:
        remove_stale(p)
    tmps = []
    try:
        for p, parent in zip(paths, parents):
            t = Path(_temp_name(p, parent, ".tmp"))
            t.touch(mode=0o600 if private else 0o666, exist_ok=False)
            if private:
                os.chmod(t, 0o600)
            tmps.append(t)
        yield tmps[0] if len(tmps) == 1 else tmps
        # the companions first, the main file last: a reader that finds the
        # main file finds its companions too
        done = []
        try:
            for t, p in list(zip(tmps, paths))[::-1]:
                os.replace(t, p)
                done.append(p)
        except BaseException:
            for p in done:
                with contextlib.suppress(OSError):
                    p.unlink()
            raise
    except BaseException:
        for t in tmps:
            with contextlib.suppress(FileNotFoundError, OSError):
                t.unlink()
        raise


@contextlib.contextmanager
def atomic_path(path, *, protect=(), private: bool = False):
    """Yield a temporary path beside ``path``; on success move it into place
    (``private``: readable by its owner only, as :func:`atomic_paths`)."""
    with atomic_paths(path, protect=protect, private=private) as tmp:
        yield tmp


@contextlib.contextmanager
def temp_dir(path):
    """A temporary directory beside ``path`` (same disk), removed afterwards."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    d = Path(tempfile.mkdtemp(prefix=f".{path.name}.anonset-{os.getpid()}-", suffix=".d",
                              dir=parent))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
