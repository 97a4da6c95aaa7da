"""The public API is what the README and the docs use: every ``anonset.X``
(and ``anonset.X.Y``) they name, and every ``from anonset... import ...``,
resolves (issue 12: the layout moved, the names did not)."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import anonset

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
DOTTED = re.compile(r"\banonset((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
FROM = re.compile(r"^\s*from (anonset(?:\.[A-Za-z_][\w]*)*) import ([\w, ()]+)", re.M)
#: documented paths that are files or folders, not Python names
NOT_NAMES = {"anonset.json", "anonset.SetTable"}


def _resolve(dotted: str):
    """The longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for p in parts[k:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)


def names():
    out = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in DOTTED.finditer(text):
            dotted = "anonset" + m.group(1)
            if dotted in NOT_NAMES or dotted.endswith((".md", ".py", ".csv", ".parquet")):
                continue
            out.add((page.name, dotted.rstrip(".")))
        for m in FROM.finditer(text):
            for item in m.group(2).strip("() ").split(","):
                n = item.split(" as ")[0].strip(" ()")
                if n:
                    out.add((page.name, f"{m.group(1)}.{n}"))
    return sorted(out)


@pytest.mark.parametrize("page, dotted", names(), ids=[f"{p}:{d}" for p, d in names()])
def test_documented_name_resolves(page, dotted):
    try:
        _resolve(dotted)
    except (ImportError, AttributeError) as e:       # pragma: no cover - the failure message
        pytest.fail(f"{page} names {dotted}, which does not resolve: {e}")


def test_all_is_importable_and_complete():
    for n in anonset.__all__:
        assert hasattr(anonset, n), n
    for short in ("lgb", "msa", "semantic", "checks", "closeness_search", "stream", "dask",
                  "synthetic"):
        assert importlib.import_module(f"anonset.{short}") is getattr(anonset, short)
