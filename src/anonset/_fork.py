"""Fork safety of the OpenMP kernels.

GNU OpenMP's thread pool does not survive ``fork()``: in a process forked
from one that ran a team of two threads or more (``multiprocessing``'s
'fork' start method, the default on Linux before Python 3.14, a
``ProcessPoolExecutor``, a Dask ``LocalCluster`` of forked workers), the
child's first team of two threads or more waits forever for threads that
are not there (H54: ``publish`` hung in a forked pool worker).  After a fork
every kernel of anonset's extension modules therefore runs on one thread
(``anonset_threads`` in ``csrc/common/anonset_common.h``): the same results,
since no kernel's output depends on its thread count, and the processes are
the parallelism.  'spawn' children start afresh and use every thread; so do
'forkserver' children, unless the server itself imported anonset
(``set_forkserver_preload``): they are its forks.

Each extension module hands its marker to :func:`adopt` when it is imported;
the marker sets that module's flag.  An extension first imported in a child
is marked at once.
"""
from __future__ import annotations

import os

#: The extension modules' markers, and whether this process is a fork child.
_markers: list = []
_child: list = [False]


def adopt(mark) -> None:
    """Register an extension module's marker (called at its import)."""
    _markers.append(mark)
    if _child[0]:
        mark()


def in_fork_child() -> bool:
    """Whether this process was forked from one that had imported anonset
    (its kernels then run on one thread)."""
    return _child[0]


def _after_fork_in_child() -> None:
    _child[0] = True
    for mark in _markers:
        mark()


if hasattr(os, "register_at_fork"):          # POSIX; Windows has no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)
