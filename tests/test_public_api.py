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


def test_misused_calls_are_refused_by_parameter_not_by_a_traceback(tmp_path):
    """Each call below raised an AttributeError, a TypeError or a plain
    ValueError from deep inside (or, for z_max=-1, flipped the audit's
    verdict); each is an InputError naming its parameter."""
    import warnings

    import numpy as np
    import pandas as pd

    import anonset
    from anonset.semantic import semantic_publish
    # (b not a recode of a: every pair of values occurs, as 4 and 5 are coprime)
    df = pd.DataFrame({"id": range(40), "a": list("abcd") * 10, "b": list("xyzwv") * 8})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity(2), identifiers=["id"], sensitive=["a", "b"])
    sem = df.assign(v=[1, 2, 3, 4] * 10)
    cases = [
        (lambda: anonset.reconstruct(df, ["a"]), r"^table: got a DataFrame: that is data"),
        (lambda: anonset.reconstruct(pub.schema, ["a"]), r"^table: got a Schema"),
        (lambda: anonset.reconstruct(pub, ["a"], w=np.ones(3)), r"^w: has shape \(3,\)"),
        (lambda: anonset.true_crosstab(df, None, ["a"]), r"^schema: got NoneType"),
        (lambda: anonset.audit(pub, df, attack=True, z_max="x"), r"^z_max: got 'x'"),
        (lambda: anonset.audit(pub, df, z_max=-1), r"^z_max: got -1; expected a number > 0"),
        (lambda: anonset.audit(pub, df, closeness_margin=2), r"^closeness_margin: got 2"),
        (lambda: pub.to_parquet(None), r"^path: got NoneType; expected a file name"),
        (lambda: pub.to_csv(None), r"^path: got NoneType"),
        (lambda: anonset.read_parquet(None), r"^path: got NoneType"),
        (lambda: anonset.read_csv(5), r"^path: got int 5"),
        (lambda: anonset.publish(df, anonset.Closeness(0.3, ground="hierarchical"),
                                 identifiers=["id"], sensitive=["a", "b"]),
         r"^ground: column 'a': has the ground 'hierarchical' but no hierarchy"),
        (lambda: semantic_publish(sem, "v", 2, "1", identifiers=["id"], drop=["a", "b"]),
         r"^d: got '1'; expected a number"),
        (lambda: semantic_publish(sem, "v", 2, True, identifiers=["id"], drop=["a", "b"]),
         r"^d: got True"),
        (lambda: anonset.publish(pd.DataFrame({"s": [[1], [2]] * 4}), anonset.Diversity(2),
                                 sensitive=["s"]), r"^column 's': holds nested values"),
        (lambda: anonset.publish(pd.DataFrame({"s": np.arange(8) + 1j}), anonset.Diversity(2),
                                 sensitive=["s"]), r"^column 's': holds complex numbers"),
    ]
    for call, pattern in cases:
        with pytest.raises(anonset.InputError, match=pattern):
            call()
    # a SetTable stands for its schema
    ct = anonset.true_crosstab(df, pub, ["a"])
    assert ct.counts.tolist() == [10, 10, 10, 10]
    assert list(tmp_path.iterdir()) == []


def test_publishing_and_its_checks_need_no_scipy():
    """scipy is a test dependency only: the near-clear check (and the
    pass-through check's set adversary) imported scipy.special and failed
    `anonset demo` on a fresh install.  Run with scipy made unimportable."""
    import subprocess
    import sys
    code = (
        "import sys; sys.modules['scipy'] = None; sys.modules['scipy.special'] = None\n"
        "import numpy as np, pandas as pd, anonset, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame({'a': rng.choice(list('abcdef'), 500), 'b': rng.choice(list('xyz'), 500),"
        " 'c': rng.choice(list('uv'), 500)})\n"
        "anonset.publish(df, anonset.Diversity(2), sensitive=['a', 'b'], other=['c'])\n"
        "anonset.publish(df, anonset.Closeness(0.3), sensitive=['a', 'b'], exact=['c'])\n"
        "anonset.audit(anonset.publish(df, anonset.Diversity(3), sensitive=['a'], exact=['b', 'c']))\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
