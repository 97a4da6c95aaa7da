"""The command line's one progress display: rows (or steps) done, with rate
and time left, drawn by tqdm on stderr.  It is shown only for long work when
stderr is a terminal, or when asked with ``--progress``; never with ``-q``."""
from __future__ import annotations

import contextlib
import sys

__all__ = ["Progress", "progress_enabled", "LONG_ROWS"]

#: Work over this many input rows is "long".
LONG_ROWS = 1_000_000


def progress_enabled(flag, long_work: bool, quiet: bool = False) -> bool:
    if quiet:
        return False
    if flag is not None:
        return bool(flag)
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and long_work


class Progress:
    """A counter of rows (or steps): ``with Progress(total, 'publishing', on) as p: p(n)``.

    ``total`` may be None (unknown: rate only).  Disabled, it does nothing.
    """

    def __init__(self, total, desc: str, enabled: bool, unit: str = "rows"):
        self.bar = None
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=desc, unit=f" {unit}", unit_scale=True,
                            file=sys.stderr, leave=False, dynamic_ncols=True)

    def __call__(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def stage(self, desc: str, total=None) -> None:
        """Start a new stage on the same line (e.g. the second pass)."""
        if self.bar is not None:
            prefix = self.bar.desc.split(":")[0]
            self.bar.reset(total=total)
            self.bar.set_description(f"{prefix}: {desc}" if ":" not in desc else desc)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@contextlib.contextmanager
def nothing():
    yield None
