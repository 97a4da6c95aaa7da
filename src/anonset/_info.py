"""Build and runtime facts, for bug reports and benchmark records."""
from __future__ import annotations

import os
import platform
import sys


def build_info() -> dict:
    from .randomized import _kernels
    from ._version import __version__
    import numpy
    info = {
        "anonset": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "openmp": _kernels.openmp_enabled(),
        "simd": _kernels.simd_level(),             # chosen at run time, per CPU
        "threads": _kernels.effective_threads(0),
        "numpy": numpy.__version__,
    }
    for mod in ("pandas", "pyarrow"):
        try:
            info[mod] = __import__(mod).__version__
        except ImportError:  # pragma: no cover
            info[mod] = None
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def show_versions() -> None:
    """Print anonset's build facts (OpenMP, threads, versions)."""
    for k, v in build_info().items():
        print(f"{k:>10}: {v}")
