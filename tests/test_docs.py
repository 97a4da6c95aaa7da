"""Every fenced example of README.md, docs/*.md and examples/README.md runs
(issue 15): Python blocks of a page run in order in one namespace; shell
blocks run their ``anonset ...`` commands in-process and their
``python examples/...`` scripts in a subprocess, in a scratch folder holding
a copy of examples/.  A block may opt out with ``<!-- not run: why -->`` on
the line before it (installation, benchmarks of hours); the reason is
required.  Lines that install or benchmark (pip, pytest, bench/, cibuildwheel)
are not commands of the package and are skipped by name."""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(?P<before>[^\n]*)\n```(?P<lang>[a-z]*)\n(?P<body>.*?)\n```", re.S)
SKIP_LINES = ("pip ", "pytest", "python bench/", "PYTHONPATH=", "cibuildwheel", "git ", "cd ",
              ".ci/", "python -m build", "export ", "uv ", "mypy", "time ", "python setup.py")


def blocks(page: Path):
    for m in FENCE.finditer("\n" + page.read_text(encoding="utf-8")):
        lang = m.group("lang")
        if lang not in ("python", "bash", "sh", "console"):
            continue
        reason = re.search(r"<!--\s*not run:\s*(.+?)\s*-->", m.group("before"))
        needs = re.search(r"<!--\s*needs:\s*(.+?)\s*-->", m.group("before"))
        if reason is None and needs is not None:
            # optional packages (not in the test extra: .ci/run installs them
            # in its wheel environment, where these blocks then run)
            missing = [n.strip() for n in needs.group(1).split(",")
                       if importlib.util.find_spec(n.strip()) is None]
            if missing:
                reason = f"needs {', '.join(missing)}"
        yield lang, m.group("body"), reason.group(1) if hasattr(reason, "group") else reason


def _commands(body: str, lang: str):
    joined = re.sub(r"\\\n\s*", " ", body)
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if lang == "console":                 # a transcript: only the prompted lines run
            if not line.startswith("$ "):
                continue
        if line.startswith("$ "):
            line = line[2:]
        if not line or line.startswith("#"):
            continue
        yield line


def _examples_env() -> dict:
    """The environment of an example script: the anonset these tests import
    first on its path (the folder above the package), whether installed
    (CI's test jobs and cibuildwheel install it, not editable, and run the
    tests from outside the source tree) or in the checkout.  The checkout's
    src/ holds no compiled extension after a plain ``pip install .``: an
    example run against it failed with ImportError (H156)."""
    import anonset
    above = str(Path(anonset.__file__).resolve().parent.parent)
    return dict(os.environ, PYTHONPATH=above + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_examples_import_the_anonset_under_test():
    """H156: the example scripts imported <checkout>/src whatever anonset
    the tests import, so against a non-editable install (src/ without its
    compiled extensions) every example failed with ImportError.  Fails
    before the fix wherever the tests import an installed anonset; with an
    editable install the two are one, and the test checks that they stay so."""
    import anonset
    r = subprocess.run([sys.executable, "-c", "import anonset, anonset.randomized._kernels; "
                        "print(anonset.__file__)"], env=_examples_env(), cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert Path(r.stdout.strip()).resolve() == Path(anonset.__file__).resolve()


def _scratch(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_examples_of_a_page_run(page, tmp_path, monkeypatch, capsys):
    from anonset import cli
    monkeypatch.chdir(_scratch(tmp_path))
    env = _examples_env()
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for lang, body, reason in blocks(page):
        if reason is not None:
            assert len(reason) > 5, f"{page.name}: an opt-out needs a reason"
            continue
        if lang == "python":
            code = "\n".join(ln for ln in body.splitlines() if not ln.startswith(">>> ")) \
                if ">>> " not in body else None
            if code is None:
                continue                          # doctest-style text, run by --doctest-modules
            exec(compile(code, f"{page.name}:python", "exec"), namespace)
            ran += 1
            continue
        for line in _commands(body, lang):
            if line.startswith(SKIP_LINES):
                continue
            argv = shlex.split(line)
            if argv[0] == "anonset":
                rc = cli.main(argv[1:])
                out = capsys.readouterr()
                assert rc in (0, 1), f"{page.name}: `{line}` exited {rc}: {out.err}"
                ran += 1
            elif argv[0] == "python" and argv[1].startswith("examples/"):
                r = subprocess.run([sys.executable, *argv[1:]], env=env, capture_output=True,
                                   text=True, timeout=600)
                assert r.returncode == 0, f"{page.name}: `{line}`: {r.stderr[-2000:]}"
                ran += 1
    assert ran >= 0


def _module_names():
    import pkgutil
    import anonset
    return sorted(m.name for m in pkgutil.walk_packages(anonset.__path__, "anonset.")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples_run(name):
    """Every ``>>>`` example in the package's docstrings runs and shows what
    it says (they had drifted: written before every column needed a role and
    seeds became key material, 13 of them raised)."""
    import doctest
    import importlib
    import warnings
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:           # an optional dependency (matplotlib, dask)
        pytest.skip(f"{name} needs {e.name}")
    import importlib.util
    import inspect
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):                # compiled kernels
        source = ""
    for opt in ("matplotlib", "dask"):          # imported inside functions
        if opt in source and importlib.util.find_spec(opt) is None:
            pytest.skip(f"{name} needs {opt}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # InferredDomainWarning on the small examples
        for test in finder.find(module, name):
            if test.examples:
                runner.run(test, out=out.append)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, "".join(out)[-3000:]


#: where each command's options are documented (docs/cli.md always counts)
_OPTION_PAGES = {"semantic-anonymize": "semantic.md", "semantic-analyze": "semantic.md",
                 "lgb": "lgb.md", "msa-anonymize": "msa.md", "reproduce": "reproduce.md"}


def _subcommands():
    import argparse

    from anonset.cli import build_parser
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices.items())


@pytest.mark.parametrize("command, parser", _subcommands(), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_every_command_option_is_documented(command, parser):
    """Each option of each command is named in the docs (docs/cli.md, or its
    paper's page): `--sets`, the audit's `--prior` and `--classes`, the
    report's `--original-format` and semantic-analyze's `--selection` were
    in `--help` only."""
    root = Path(__file__).resolve().parents[1] / "docs"
    text = (root / "cli.md").read_text() + (root / _OPTION_PAGES[command]).read_text() \
        if command in _OPTION_PAGES else (root / "cli.md").read_text()
    missing = []
    for action in parser._actions:
        names = [o for o in action.option_strings if o not in ("-h", "--help")]
        if names and not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)
                             for o in names):
            missing.append("/".join(names))
    assert not missing, f"anonset {command}: not in the docs: {missing}"
