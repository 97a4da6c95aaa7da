"""The progress display of ``anonset reproduce``: a tqdm bar when tqdm is
installed (it is optional), else one plain line per step on stderr."""
from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Steps of one reproduction.  ``step(label)`` marks one step done.

    Examples
    --------
    >>> p = Progress("004", total=2, enabled=False)
    >>> p.step("Fig. 1"); p.step("Fig. 2"); p.close()
    >>> p.done
    2
    """

    def __init__(self, name: str, total: int, *, enabled: bool = True, stream=None):
        self.name, self.total, self.done = name, int(total), 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=self.total, desc=f"reproduce {name}", unit="step",
                                 file=self.stream)

    def add(self, n: int) -> None:
        """More steps than announced (a grid grows with the data)."""
        self.total += n
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def step(self, label: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(label[:40], refresh=False)
            self._bar.update(1)
            return
        secs = time.perf_counter() - self.t0
        print(f"reproduce {self.name}: {self.done}/{self.total} {label} ({secs:.0f} s)",
              file=self.stream, flush=True)

    def log(self, text: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
