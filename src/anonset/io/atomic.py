"""Atomic output files: write to a temporary file beside the target, then
rename.  An interrupted run (an exception, SIGINT) leaves no partial file."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_path", "same_file"]


@contextlib.contextmanager
def atomic_path(path, *, protect=()):
    """Yield a temporary path; on success move it to ``path``.

    ``protect`` lists input files that must never be overwritten: naming one of
    them as the output is an error before anything is written.
    """
    path = Path(path)
    for p in protect:
        if p is not None and same_file(path, p):
            raise ValueError(f"output {str(path)!r} is the input file; choose another name "
                             "(the input is never overwritten)")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise FileNotFoundError(f"output directory {str(parent)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def same_file(a, b) -> bool:
    a, b = Path(a), Path(b)
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False
