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


# ----------------------------------------------------------- packaging facts
import importlib.metadata
import importlib.resources
import inspect
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: True when anonset was imported from an installed wheel, not a source tree
INSTALLED = not (Path(anonset.__file__).resolve().parents[2] / "setup.py").is_file()


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli",
                                  reason="reads pyproject.toml")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


#: comparison peers: they pin exact numpy/pandas versions or lack wheels on
#: some platforms anonset ships wheels for, so they belong in `bench`
PEERS = {"pycanon", "pot", "pyreadstat", "pytest-benchmark"}


def _name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower()


def test_test_extra_pins_nothing_and_has_no_peers():
    extras = _pyproject()["project"]["optional-dependencies"]
    for req in extras["test"]:
        assert _name(req) not in PEERS, f"{req}: comparison peers go to the bench extra"
        assert "==" not in req and "<" not in req and "~=" not in req, \
            f"{req}: the test extra may not pin or cap a version"
    assert PEERS - {"pyreadstat"} <= {_name(r) for r in extras["bench"]}


def test_one_version_source():
    cfg = _pyproject()
    assert "version" not in cfg["project"] and "version" in cfg["project"]["dynamic"]
    assert cfg["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "anonset._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc|\.dev)?\d*", anonset.__version__)


@pytest.mark.skipif(not INSTALLED, reason="anonset runs from a source tree, not an install")
def test_installed_metadata_matches_version():
    assert importlib.metadata.version("anonset") == anonset.__version__


def test_py_typed_ships():
    assert importlib.resources.files("anonset").joinpath("py.typed").is_file()


@pytest.mark.skipif(not INSTALLED, reason="anonset runs from a source tree, not an install")
def test_wheel_has_no_extension_sources():
    pkg = Path(anonset.__file__).parent
    stray = [p for p in pkg.rglob("*") if p.suffix in (".pyx", ".pxd", ".c", ".h")]
    assert not stray, stray


def _public_callables():
    """(qualified name, function) for every function and public method of
    the classes and functions named in anonset.__all__ (modules excluded)."""
    for name in anonset.__all__:
        obj = getattr(anonset, name)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if inspect.isfunction(obj):
            yield name, obj
            continue
        if "__init__" in vars(obj) and not getattr(obj, "__dataclass_fields__", None):
            yield f"{name}.__init__", obj.__init__
        for attr, value in vars(obj).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value):
                yield f"{name}.{attr}", value


def test_public_api_is_fully_annotated():
    """Every parameter and return value of the public API has a type hint
    (mypy then checks them against use: tests/typing/public_api.py)."""
    missing = []
    for qual, fn in _public_callables():
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty:
                missing.append(f"{qual}({p.name})")
        if sig.return_annotation is inspect.Signature.empty and not qual.endswith("__init__"):
            missing.append(f"{qual} -> ?")
    assert not missing, "unannotated: " + ", ".join(missing)
