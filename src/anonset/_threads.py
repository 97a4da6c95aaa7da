"""The ``n_threads`` argument shared by the publishing and reconstruction APIs."""
from __future__ import annotations


def check_threads(n_threads) -> int:
    """``n_threads`` as the kernels take it: None -> 0 (OpenMP's default),
    else a positive int; anything else is a ValueError naming the parameter."""
    if n_threads is None:
        return 0
    if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer or None, got {n_threads!r}")
    return n_threads
