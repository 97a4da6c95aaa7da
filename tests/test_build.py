"""The build facts: a wheel or install that silently lost OpenMP fails here."""
import os

import pytest

import anonset
from anonset.randomized import _kernels


def test_openmp_enabled():
    if os.environ.get("ANONSET_ALLOW_SERIAL") == "1":
        pytest.skip("ANONSET_ALLOW_SERIAL=1: a serial build is accepted explicitly")
    assert _kernels.openmp_enabled(), (
        "anonset was built without OpenMP; rebuild with a compiler that supports it, "
        "or set ANONSET_ALLOW_SERIAL=1 to accept a serial build")


def test_show_versions(capsys):
    anonset.show_versions()
    out = capsys.readouterr().out
    assert "openmp" in out and anonset.__version__ in out


def test_effective_threads_positive():
    assert _kernels.effective_threads(0) >= 1
    assert _kernels.effective_threads(3) == (3 if _kernels.openmp_enabled() else 1)
