"""Atomic outputs: every file is written to a temporary name beside its
target and renamed at the end, so a failure or an interrupt never leaves a
partial file at a final path.

* Several files that belong together (a CSV table and its ``.anonset.json``,
  LGB's bucket tables, a report beside a release) are one unit
  (:class:`Outputs`, :func:`atomic_paths`): every target is checked before
  anything is written, and none is moved into place unless all are written;
  the moves run with the interrupting signals held and under a lock on the
  directory.
* Temporary names carry the writer's process id
  (``.OUT.anonset-<pid>-<random>.tmp``); a run that was killed (SIGKILL, a
  power cut) leaves them behind, and the next run on the same output removes
  those whose process is gone (:func:`remove_stale`).  SIGTERM and SIGHUP are
  turned into an exception by the command line, so the cleanup runs.
* An input file is never overwritten.
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..validate import InputError

__all__ = ["Outputs", "atomic_path", "atomic_paths", "check_name_lengths", "same_file",
           "remove_stale", "signal_handlers", "temp_dir", "check_release_beside"]

log = logging.getLogger("anonset")
_TEMP = re.compile(r"^\.(?P<name>.+)\.anonset-(?P<pid>\d+)-[A-Za-z0-9_]+\.(tmp|d|bak)$")


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


_WRITABLE = "a folder this user may write in"


def _writable(folder: Path) -> bool:
    """Whether this user may make files in ``folder`` (as the system says,
    by the effective ids where it can tell them apart)."""
    try:
        if os.access in os.supports_effective_ids:
            return os.access(folder, os.W_OK | os.X_OK, effective_ids=True)
        return os.access(folder, os.W_OK | os.X_OK)
    except (OSError, ValueError, NotImplementedError):
        return True              # not known: the write says


def _read_only(folder: Path) -> bool:
    """Whether ``folder`` is on a file system mounted read-only (a
    read-only bind mount, a container's read-only volume), where no user
    may write, whatever its permissions say."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError, ValueError):
        return False             # not known: the permissions say


_NOT_READ_ONLY = "a folder on a file system that is not read-only"


def _write_error(err: OSError, target: Path) -> OSError:
    """An error writing or moving a temporary file, named by its target:
    the temporary name means nothing to the user.  Permissions and a
    read-only file system say what was expected (exit code 2, one line)."""
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return InputError(f"cannot be written ({err.strerror or err})", file=target,
                          expected=_WRITABLE if err.errno != errno.EROFS else
                          _NOT_READ_ONLY)
    return OSError(err.errno, err.strerror or str(err), str(target))


def check_release_beside(path, beside=()) -> None:
    """``path`` is not a published CSV release's table (nor the name of
    one whose metadata file is left): its ``.anonset.json`` beside it would
    describe a release no longer there (a cross-tabulation or an audit
    report written over the table).  ``beside``: the other files this run
    writes with ``path``; a release that writes the metadata file too
    replaces the two together."""
    from .published import CSV_META_SUFFIX
    path = Path(path)
    side = Path(str(path) + CSV_META_SUFFIX)
    try:
        if not side.is_file():
            return
    except OSError:
        return
    for t in beside:
        t = Path(t)
        if str(t) == str(side) or os.path.abspath(t) == os.path.abspath(side) or \
                same_file(t, side):
            return
    what = ("is a published release's table (its metadata file {!r} is beside it), which this "
            "output would replace, leaving that file to describe a release no longer there"
            if path.exists() else
            "has a published release's metadata file beside it ({!r}), which would then seem "
            "to describe this output")
    raise InputError(what.format(side.name), param="output", file=path,
                     expected="another output name (a release's table and its metadata file "
                              "are replaced together, by publishing again)")


def check_folder_writable(path, param: str = "output") -> None:
    """The output ``path``'s folder, where it exists, is one this user may
    write in, on a file system that is not read-only: refused otherwise,
    naming the output (``param``: its option).  The commands check it
    before any work (H157: audit -o printed the whole audit first)."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() or _writable(parent):
        return
    # named the output (H144: the temporary file's name came at the end,
    # with no word of what was expected); a read-only file system said as
    # such, not blamed on the user
    if _read_only(parent):
        raise InputError(f"is in a folder on a read-only file system ({str(parent)!r})",
                         param=param, file=path, expected=_NOT_READ_ONLY)
    raise InputError(f"is in a folder this user may not write in ({str(parent)!r})",
                     param=param, file=path, expected=_WRITABLE)


def _check_target(path: Path, protect, beside=()) -> Path:
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
    check_folder_writable(path)
    if _sticky_other(path, parent):
        # (H148: the move failed after all the work, left a backup link
        # the user cannot remove, and blamed the folder)
        raise InputError("is another user's file in a shared folder (its sticky bit lets "
                         "only the file's owner replace it)", param="output", file=path,
                         expected="another output name")
    if path.exists() and not path.is_file():
        # a FIFO, a device, /dev/stdout: it would be replaced by a file
        raise InputError("is not a regular file (a pipe, a device or a terminal)",
                         param="output", file=path,
                         expected="a file name (outputs are written whole, then moved "
                                  "into place)")
    check_release_beside(path, beside)
    return parent


def _sticky_other(path: Path, parent: Path) -> bool:
    """``path`` is a file of another user in a sticky folder not this
    user's, which only its owner (or root) may replace."""
    import stat
    try:
        uid = os.geteuid()
        st, pst = path.lstat(), parent.stat()
    except (AttributeError, OSError):
        return False
    return bool(pst.st_mode & stat.S_ISVTX) and uid != 0 and st.st_uid != uid \
        and pst.st_uid != uid


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


class Outputs:
    """The files of one release written as one unit: a table, its metadata
    file, LGB's bucket tables, a report or rows beside them.

    Each file is written to a temporary name beside its target
    (:meth:`path` checks the target first: not an input, not a directory,
    its directory exists, not asked for twice); when the ``with`` block
    ends without an error, every file is moved into place together, the
    main one (the first asked for) last, and the files of the release they
    replace that it leaves out (:meth:`remove`) are removed.  An error or
    an interrupt before that leaves no target created or changed.  The
    moves run with SIGINT, SIGTERM and SIGHUP held (delivered right after:
    an interrupt cannot land between two of them) and under a lock on each
    target's directory (two runs on one output leave one run's files, not
    a mix); a move that fails puts back the files already replaced.
    ``private``: the files are readable by their owner only (0600, whatever
    the umask), for what holds statistics of the original data."""

    def __init__(self, *, protect=(), private: bool = False):
        self.protect = [p for p in protect if p is not None]
        self.private = private
        self._files: list = []          # (target, temporary)
        self._remove: list = []

    def path(self, target, *, private: bool | None = None, beside=()) -> Path:
        """A temporary path for ``target``, moved into place at the end
        (``beside``: the files asked for next with it, as a CSV table's
        metadata file, which it may then replace)."""
        target = Path(target)
        check_name_lengths([target])
        parent = _check_target(target, self.protect,
                               [t for t, _ in self._files] + [Path(b) for b in beside])
        for t, _ in self._files:
            if str(t) == str(target) or same_file(t, target) or \
                    os.path.abspath(t) == os.path.abspath(target):
                raise InputError("is asked for twice in one release", param="output",
                                 file=target, expected="a name for each output")
        remove_stale(target)
        priv = self.private if private is None else private
        tmp = Path(_temp_name(target, parent, ".tmp"))
        try:
            tmp.touch(mode=0o600 if priv else 0o666, exist_ok=False)
        except OSError as e:         # named by the output, not the temporary name
            raise _write_error(e, target) from e
        try:
            if priv:
                os.chmod(tmp, 0o600)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._files.append((target, tmp))
        return tmp

    def remove(self, path) -> None:
        """Remove ``path`` when the files are moved into place (a file of the
        release they replace that this one leaves out); an input never."""
        path = Path(path)
        for p in self.protect:
            if same_file(path, p):
                raise InputError("is a file of the release this one replaces, which would be "
                                 "removed, and an input of this run", param="output", file=path,
                                 expected="another output name, or the input under another "
                                          "name (inputs are never removed)")
        self._remove.append(path)

    def __enter__(self) -> "Outputs":
        return self

    def __exit__(self, kind, err, tb) -> bool:
        if kind is None:
            try:
                self._commit()
            except BaseException as e:
                self._discard()
                if isinstance(e, OSError) and not isinstance(e, InputError):
                    named = self._named(e)      # a move refused: named by its output
                    if named is not None:
                        raise named from e
                raise
            return False
        self._discard()
        if isinstance(err, OSError) and not isinstance(err, InputError):
            named = self._named(err)
            if named is not None:
                raise named from err
        return False

    def _named(self, err: OSError):
        """An error writing a temporary file (a full disk), named by its
        target: the temporary name means nothing to the user."""
        if isinstance(err, (TimeoutError, ConnectionError)) or \
                type(err).__module__.split(".")[0] == "distributed":
            return None       # reading the input, or a worker lost: not the output (H143)
        temps = {str(t): target for target, t in self._files}
        target = temps.get(str(getattr(err, "filename", None) or ""))
        if getattr(err, "filename", None) and target is None:
            return None                      # names a file of its own already
        if target is None:
            if not self._files:
                return None
            target = self._files[0][0]
        return _write_error(err, target)

    def _discard(self) -> None:
        for _, t in self._files:
            with contextlib.suppress(OSError):
                t.unlink()

    def _commit(self) -> None:
        # one lock per directory however it is spelt ('.', a symlink, an
        # absolute path), taken in one order by every run, before the
        # signals are held (a run waiting for it can be interrupted)
        parents = sorted({os.path.realpath(t.parent if str(t.parent) else Path("."))
                          for t, _ in self._files})
        with _locked(parents), _signals_held():
            backups: dict = {}
            tried = []
            try:
                # the companions first, the main file last: a reader that
                # finds the main file finds its companions too
                for target, tmp in self._files[::-1]:
                    if target.is_file():
                        bak = Path(_temp_name(target, target.parent if str(target.parent)
                                              else Path("."), ".bak"))
                        try:
                            os.link(target, bak)
                            backups[target] = bak
                        except OSError:
                            pass                 # no hard links here: no way back
                    tried.append((target, tmp))
                    os.replace(tmp, target)
            except BaseException:
                # a file whose temporary is gone was moved into place (an
                # error may come right after the move): put the old one back
                for target, tmp in tried:
                    if tmp.exists():
                        continue
                    with contextlib.suppress(OSError):
                        if target in backups:
                            os.replace(backups.pop(target), target)
                        else:
                            target.unlink()
                raise
            finally:
                for bak in backups.values():
                    with contextlib.suppress(OSError):
                        bak.unlink()
            for p in self._remove:
                with contextlib.suppress(OSError):
                    p.unlink()


@contextlib.contextmanager
def signal_handlers(names, handler):
    """``handler`` for the signals ``names`` (those this system has, where
    this thread may set them: the main thread), the old handlers back when
    the block ends; yields {signal: its old handler}."""
    import signal
    old = {}
    for name in names:
        num = getattr(signal, name, None)
        if num is None:
            continue
        try:
            old[num] = signal.signal(num, handler)
        except (OSError, ValueError):            # not the main thread
            pass
    try:
        yield old
    finally:
        for num, h in old.items():
            signal.signal(num, h)


@contextlib.contextmanager
def _signals_held():
    """SIGINT, SIGTERM and SIGHUP held while the block runs and handled
    when it ends, as they would have been (in the main thread, where Python
    runs its handlers: a signal any thread receives raises there)."""
    import signal
    got: list = []
    old: dict = {}
    try:
        with signal_handlers(("SIGINT", "SIGTERM", "SIGHUP"),
                             lambda n, _frame: got.append(n)) as old:
            yield
    finally:
        for num in dict.fromkeys(got):
            handler = old.get(num)
            if callable(handler):
                handler(num, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), num)


@contextlib.contextmanager
def _locked(directories):
    """An exclusive lock on each directory (in a fixed order), where the
    system has one: two runs never move their files into one place at once."""
    try:
        import fcntl
    except ImportError:                      # pragma: no cover - not POSIX
        yield
        return
    fds = []
    try:
        for d in directories:
            try:
                fd = os.open(d, os.O_RDONLY)
            except OSError:
                continue
            fds.append(fd)
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def check_targets(*paths, protect=()) -> None:
    """What :func:`atomic_paths` checks of its targets, for a caller that
    reads its input first: refused before any work (H93: anonymize read a
    whole file before it refused its input named as the output)."""
    paths = [Path(p) for p in paths]
    check_name_lengths(paths)
    for p in paths:
        _check_target(p, protect, paths)


@contextlib.contextmanager
def atomic_paths(*paths, protect=(), private: bool = False, outputs: Outputs | None = None):
    """Yield one temporary path per target; on success move them all into
    place (:class:`Outputs`).  Every target is checked first (not an input,
    not a directory, its directory exists); on any failure no target is
    created or changed.  ``private``: the files are readable by their owner
    only (0600, whatever the umask), for what holds statistics of the
    original data.  ``outputs``: a release these files belong to, which
    moves them into place with its other files."""
    paths = [Path(p) for p in paths]
    check_name_lengths(paths)
    for p in paths:
        _check_target(p, protect, paths)
    if outputs is not None:
        outputs.protect += [p for p in protect if p is not None]
        tmps = [outputs.path(p, private=private or None, beside=paths) for p in paths]
        yield tmps[0] if len(tmps) == 1 else tmps
        return
    with Outputs(protect=protect, private=private) as outs:
        tmps = [outs.path(p, beside=paths) for p in paths]
        yield tmps[0] if len(tmps) == 1 else tmps


@contextlib.contextmanager
def atomic_path(path, *, protect=(), private: bool = False, outputs: Outputs | None = None):
    """Yield a temporary path beside ``path``; on success move it into place
    (``private``: readable by its owner only; ``outputs``: a release it
    belongs to; as :func:`atomic_paths`)."""
    with atomic_paths(path, protect=protect, private=private, outputs=outputs) as tmp:
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
