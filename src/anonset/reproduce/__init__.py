"""``anonset reproduce``: the experiments of the five papers, as a benchmark
suite users can run (issue 17).

:func:`run` runs one paper's whole experiment grid and writes CSV tables, PNG
figures in the layout of the paper's figures and a results page
(``README.md``) that puts each figure beside the paper's reported values or
trends with a verdict (:mod:`anonset.reproduce.page`).  Scales: ``full``
(the papers' sizes; docs/results/ holds these runs), ``quick`` (minutes on
two cores) and ``smoke`` (seconds; for tests).  One module per paper:
:mod:`.p000` ... :mod:`.p004`.
"""
from __future__ import annotations

import importlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from .page import Page, reductions
from .progress import Progress

__all__ = ["run", "PAPERS", "SCALES"]

PAPERS = ("000", "001", "002", "003", "004")
SCALES = ("smoke", "quick", "full")


def _module(paper: str):
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    return importlib.import_module(f"{__name__}.p{paper}")


#: The file that marks a folder as one ``anonset reproduce`` wrote.
MARK = ".anonset-reproduce"


def check_out(out: Path, paper: str) -> None:
    """The output folder: new, empty, or one that a run of the same paper
    wrote (whose files it replaces); never a file, never a folder of other
    files (a user's notes were replaced without a word)."""
    from ..validate import InputError
    if out.exists() and not out.is_dir():
        raise InputError("is a file", param="out", file=out,
                         expected="a folder for the figures, tables and results page (new, "
                                  "empty, or an earlier run's of this paper)")
    # (a folder a killed run left is no file of the user's)
    if out.is_dir() and any(_STAGE.match(p.name) and p.is_dir() and not _stale(p)
                            for p in out.iterdir()):
        raise InputError("is being written by another run of `anonset reproduce` (its folder "
                         f"{STAGE}*.partial is held)", param="out", file=out,
                         expected="another folder, or the other run finished first")
    if out.is_dir() and any(not _stale(p) for p in out.iterdir()):
        mark = out / MARK
        if not mark.is_file() or mark.read_text(encoding="utf-8").split()[-1:] != [paper]:
            raise InputError("holds files that no run of `anonset reproduce " + paper +
                             "` wrote, which it would replace", param="out", file=out,
                             expected="a new or empty folder, or one an earlier run of this "
                                      "paper wrote")


def run(paper: str, *, scale: str = "full", out=None, progress: bool = True,
        command: str | None = None) -> dict:
    """Run paper ``paper``'s experiments into ``out`` (default
    ``./anonset-reproduce-<paper>``).

    Returns ``{"page": path of README.md, "seconds": ..., "counts": {verdict:
    n}}``.

    Examples
    --------
    >>> import tempfile
    >>> r = run("003", scale="smoke", out=tempfile.mkdtemp(), progress=False)  # doctest: +SKIP
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    mod = _module(paper)
    out = Path(out) if out is not None else Path(f"anonset-reproduce-{paper}")
    check_out(out, paper)
    # the run writes into a hidden folder of its own inside ``out``
    # (.anonset-reproduce-PID-*.partial) and moves its files into ``out``'s
    # top level when it is done, by renames within ``out``: a folder that
    # is a mount point, or one under a parent this user may not write in,
    # takes the results (H144: staged beside ``out``, the last move failed
    # with EXDEV after the whole run).  A run that fails or is interrupted
    # removes that folder, and the folders it made where they are left
    # empty (H119), never a file of the user's (H126: a user's file saved
    # meanwhile in a folder the run made was removed)
    from ..validate import InputError
    made = []
    try:
        for p in reversed([out, *out.parents]):
            if not p.exists():
                try:
                    p.mkdir()
                    made.append(p)
                except FileExistsError:
                    pass                    # made meanwhile, by someone else
    except OSError as e:
        _unmake(made)
        raise InputError(f"could not be made a folder ({e.strerror or e})", param="out",
                         file=out, expected=_writable_words(e)) from None
    _remove_stale(out)
    try:
        stage = Path(tempfile.mkdtemp(prefix=f"{STAGE}{os.getpid()}-", suffix=".partial",
                                      dir=out))
    except OSError as e:
        _unmake(made)
        raise InputError(f"cannot be written in ({e.strerror or e})", param="out", file=out,
                         expected=_writable_words(e)) from None
    held = _hold(stage)
    try:
        res = _run(paper, mod, stage, scale, progress, command)
        _move_into(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        _unmake(made)
        raise
    finally:
        if held is not None:
            os.close(held)
    res["page"] = out / Path(res["page"]).relative_to(stage)
    return res


def _writable_words(err: OSError) -> str:
    """What was expected of an output folder that could not be made or
    written in: a read-only file system is no matter of the user's rights."""
    import errno
    return "a folder on a file system that is not read-only" if err.errno == errno.EROFS \
        else "a folder this user may write in"


#: The name a run's own folder inside ``out`` starts with (then its
#: process id).
STAGE = ".anonset-reproduce-"
_STAGE = re.compile(r"^\.anonset-reproduce-(\d+)-[A-Za-z0-9_]+\.partial$")


def _hold(stage: Path):
    """A lock held on a run's own folder for as long as the run lives (the
    kernel lets it go when the process dies, however it dies); the open
    descriptor, or None where locks are not available."""
    try:
        import fcntl
        fd = os.open(stage, os.O_RDONLY)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _stale(p: Path) -> bool:
    """A run's own folder whose process is gone (killed: SIGKILL, a power
    cut): its lock is free (H148: by process id alone, a run killed in a
    container, whose next run is process 1 again, blocked the folder for
    good), else, without locks, its process is gone."""
    m = _STAGE.match(p.name)
    if m is None or not p.is_dir():
        return False
    try:
        import fcntl
        fd = os.open(p, os.O_RDONLY)
    except (ImportError, OSError):
        from ..io.atomic import _alive
        return not _alive(int(m.group(1)))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _remove_stale(out: Path) -> None:
    """The folders that killed runs left in ``out``."""
    try:
        entries = list(out.iterdir())
    except OSError:
        return
    for p in entries:
        if _stale(p):
            shutil.rmtree(p, ignore_errors=True)


def _unmake(made: list) -> None:
    """The folders a run made, deepest first, each where it is empty."""
    for p in reversed(made):
        try:
            p.rmdir()
        except OSError:
            break                           # it holds something: kept, and above it


def _move_into(stage: Path, out: Path) -> None:
    """The run's files, from its own folder into ``out`` (each replacing an
    earlier run's file of that name; the user's other files are kept):
    renames within ``out``, whatever file system it is."""
    for src in sorted(stage.rglob("*")):
        if src.is_file():
            dst = out / src.relative_to(stage)
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
    shutil.rmtree(stage, ignore_errors=True)


def _run(paper, mod, out: Path, scale: str, progress: bool, command) -> dict:
    (out / MARK).write_text(f"anonset reproduce {paper}\n", encoding="utf-8")
    cmd = command or ("anonset reproduce " + paper
                      + {"full": "", "quick": " --quick", "smoke": " (smoke)"}[scale])
    page = Page(paper, mod.TITLE, cmd, scale)
    note = reductions(mod.SCALES, scale, getattr(mod, "REDUCED", None))
    if note:                                  # a reduced run says what it left out (H89)
        page.intro += [note, ""]
    prog = Progress(paper, mod.steps(scale), enabled=progress)
    t0 = time.perf_counter()
    try:
        mod.run(out, scale, prog, page)
    finally:
        prog.close()
    secs = time.perf_counter() - t0
    path = page.write(out, secs)
    return {"page": path, "seconds": secs, "counts": page.counts()}
