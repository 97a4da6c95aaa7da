"""Bad input: every case of issue 8's table gives one clear error that names
the column or parameter and what was expected, and leaves no output file
(nor a temporary one) behind; the input is never touched.

One parametrised test runs each case through the command line (in-process
``anonset.cli.main``: exit code 2, one line on stderr) and, where the case
exists there, through the Python API (a ValueError/TypeError naming the same
thing).  An interrupted run (a real SIGINT to a subprocess publishing a large
table) is checked at the end: no partial output, no temporary file.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import cli

SRC = str(Path(anonset.__file__).resolve().parent.parent)
BINS = "age=0:30:50:70:120"
EDGES = [0, 30, 50, 70, 120]
BASE = ["--identifier", "id", "--other", "note", "--bins", BINS]


def frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, n),
        "job": rng.choice(list("abcdef"), n),
        "city": rng.choice(list("wxyz"), n),
        "note": rng.choice(["n1", "n2"], n),
    })


def snapshot(d: Path) -> dict:
    """Every file under d with its bytes (temporary files included)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def infer_kw(**kw) -> dict:
    out = {"identifiers": ["id"], "other": ["note"], "bins": {"age": EDGES}}
    out.update(kw)
    return out


# ------------------------------------------------------------------ the cases
@dataclass
class Case:
    id: str
    #: writes the input files under tmp_path; returns (input path, extra argv)
    setup: Callable
    argv: list
    needles: tuple
    #: the same mistake through the Python API: f(tmp_path) raises
    api: Callable | None = None
    api_needles: tuple = ()
    api_errors: tuple = (ValueError,)
    output: str = "out.csv"
    #: add the roles of the standard frame (identifier id, other note, bins of age)
    base: bool = True


def csv_in(df=None, text=None, raw=None, name="in.csv"):
    def setup(tmp):
        p = tmp / name
        if raw is not None:
            p.write_bytes(raw)
        elif text is not None:
            p.write_text(text)
        else:
            (df if df is not None else frame()).to_csv(p, index=False)
        return p
    return setup


def parquet_in(df=None, mangle=None, name="in.parquet"):
    def setup(tmp):
        p = tmp / name
        (df if df is not None else frame()).to_parquet(p, index=False)
        if mangle is not None:
            p.write_bytes(mangle(p.read_bytes()))
        return p
    return setup


def with_files(setup, **files):
    """Also write side files (domains, hierarchies) given as name=text."""
    def inner(tmp):
        for name, text in files.items():
            (tmp / name.replace("_", ".")).write_text(text)
        return setup(tmp)
    return inner


def _missing_frame():
    df = frame()
    df.loc[7, "job"] = None
    return df


def _truncate(b: bytes) -> bytes:
    return b[: len(b) // 2]


def _corrupt(b: bytes) -> bytes:
    # the footer (schema, row groups) is garbage; the magic bytes are intact
    c = bytearray(b)
    c[-40:-8] = b"\xff" * 32
    return bytes(c)


def _big_domain():
    n = 70_000
    return pd.DataFrame({"zip": np.arange(n), "job": np.resize(list("abc"), n)})


def _api_publish(df_fn, model, **kw):
    def f(tmp):
        anonset.publish(df_fn(), model, seed=1, research_seed=True, **kw)
    return f


def _api_read_parquet(mangle):
    def f(tmp):
        p = tmp / "api.parquet"
        frame().to_parquet(p)
        p.write_bytes(mangle(p.read_bytes()))
        anonset.read_parquet(p)
    return f


def _api_declared_domain(tmp):
    schema = anonset.Schema.infer(frame(), domains={"job": list("abc")}, **infer_kw())
    anonset.publish(frame(), anonset.Diversity(2), schema, seed=1, research_seed=True)


def _api_hierarchy(tmp):
    h = anonset.Hierarchy.from_csv(_HIER_TEXT)
    schema = anonset.Schema.infer(frame(), hierarchies={"city": h}, **infer_kw())
    anonset.publish(frame(), anonset.Diversity(2), schema, seed=1, research_seed=True)


def _api_identifier_published(tmp):
    anonset.publish(frame(), anonset.Diversity(2), sensitive=["id", "job"],
                    identifiers=["id"], other=["note", "age", "city"])


def _api_big_domain(tmp):
    df = pd.DataFrame({"zip": [1, 2, 3], "job": list("abc")})
    schema = anonset.Schema((anonset.Attribute("zip", domain=tuple(range(70_000))),
                             anonset.Attribute("job", domain=tuple("abc"))))
    anonset.publish(df, anonset.Diversity(2), schema, seed=1, research_seed=True)


def _api_output_is_input(tmp):
    src = tmp / "in.parquet"
    frame().to_parquet(src)
    pub = anonset.publish(frame(), anonset.Diversity(2), seed=1, research_seed=True, **infer_kw())
    pub.to_parquet(src, protect=[src])


def _api_mixed(tmp):
    df = frame()
    df["job"] = df["job"].astype(object)
    df.loc[3, "job"] = 17
    anonset.publish(df, anonset.Diversity(2), seed=1, research_seed=True, **infer_kw())


_HIER_TEXT = "x;xy;*\ny;xy;*\nz;zw;*\n"     # 'w' occurs in the data, not in the tree

CASES = [
    Case("missing-value", csv_in(_missing_frame()), ["--l", "2"],
         ("'job'", "missing value", "--missing category"),
         api=_api_publish(_missing_frame, anonset.Diversity(2), **infer_kw()),
         api_needles=("'job'", "missing value", "missing='category'")),
    Case("value-outside-declared-domain", with_files(csv_in(), dom_txt="a\nb\nc\n"),
         ["--l", "2", "--domain", "job=dom.txt"],
         ("'job'", "not in the declared domain"),
         api=_api_declared_domain, api_needles=("'job'", "not in the declared domain")),
    Case("l-greater-than-d", csv_in(), ["--l", "5"],
         ("l = 5", "'age'", "domain size d = 4", "--clip-l"),
         api=_api_publish(frame, anonset.Diversity(5), **infer_kw()),
         api_needles=("'age'", "clip_l")),
    Case("t-above-1", csv_in(), ["--t", "1.5"], ("t must lie in [0, 1]", "1.5"),
         api=lambda tmp: anonset.Closeness(1.5), api_needles=("t must lie in [0, 1]",)),
    Case("t-negative", csv_in(), ["--t", "-0.1"], ("t must lie in [0, 1]", "-0.1"),
         api=lambda tmp: anonset.Closeness(-0.1), api_needles=("t must lie in [0, 1]",)),
    Case("t-per-column-out-of-range", csv_in(), ["--t", "age=0.2,job=7,city=0.3"],
         ("t must lie in [0, 1]",),
         api=lambda tmp: anonset.Closeness({"age": 0.2, "job": 7.0}),
         api_needles=("t must lie in [0, 1]",)),
    Case("duplicate-column-names", csv_in(text="id,age,job,job,note\n1,20,a,b,n1\n2,40,b,a,n2\n"),
         ["--l", "2"], ("duplicate column name", "'job'"),
         api=lambda tmp: anonset.publish(
             pd.DataFrame([[1, "a", "b"], [2, "b", "a"]], columns=["id", "job", "job"]),
             anonset.Diversity(2), identifiers=["id"]),
         api_needles=("duplicate column name", "'job'")),
    Case("empty-column-name", csv_in(text="id,age,,note\n1,20,a,n1\n2,40,b,n2\n"),
         ["--l", "2"], ("column names must be non-empty", "''"),
         api=lambda tmp: anonset.publish(pd.DataFrame({"id": [1, 2], "": ["a", "b"]}),
                                         anonset.Diversity(2), identifiers=["id"]),
         api_needles=("non-empty",)),
    Case("empty-table-header-only", csv_in(text="id,age,job,city,note\n"), ["--l", "2"],
         ("the table is empty",),
         api=_api_publish(lambda: frame().iloc[:0], anonset.Diversity(2), **infer_kw()),
         api_needles=("the table is empty",)),
    Case("empty-file", csv_in(raw=b""), ["--l", "2"], ("in.csv", "is empty")),
    Case("empty-parquet", parquet_in(frame().iloc[:0]), ["--l", "2"], ("the table is empty",)),
    Case("mixed-types", csv_in(text="id,age,job,city,note\n1,20,a,x,n\n2,unknown,b,y,n\n"
                                    "3,41,c,z,n\n"),
         ["--l", "2"], ("'age'", "must be numeric"),
         api=_api_mixed, api_needles=("'job'", "mixes value types")),
    Case("non-utf8-csv", csv_in(raw=b"id,age,job,city,note\n1,20,a,x,n\n2,30,\xff\xfe,y,n\n"),
         ["--l", "2"], ("in.csv", "not a readable CSV file", "utf-8")),
    Case("ragged-csv-long-row", csv_in(text="id,age,job,city,note\n1,20,a,x,n\n2,30,b,y,n,extra\n"),
         ["--l", "2"], ("in.csv", "not a readable CSV file", "Expected 5 fields in line 3")),
    Case("ragged-csv-short-row", csv_in(text="id,age,job,city,note\n1,20,a,x,n\n2,30,b\n"),
         ["--l", "2"], ("'city'", "missing value", "row 1")),
    Case("truncated-parquet", parquet_in(mangle=_truncate), ["--l", "2"],
         ("in.parquet", "not a readable Parquet file"),
         api=_api_read_parquet(_truncate), api_needles=("not a readable Parquet file",)),
    Case("corrupt-parquet", parquet_in(mangle=_corrupt), ["--l", "2"],
         ("in.parquet", "not a readable Parquet file"),
         api=_api_read_parquet(_corrupt), api_needles=("not a readable Parquet file",)),
    Case("domain-too-large-for-sampler", parquet_in(_big_domain()), ["--l", "2"],
         ("'zip'", "70,000 values", "at most 65,536"), base=False,
         api=_api_big_domain, api_needles=("'zip'", "at most 65,536")),
    Case("domain-too-large-closeness", parquet_in(_big_domain()), ["--t", "0.3"],
         ("'zip'", "70,000 values", "at most 65,536"), base=False),
    Case("identifier-marked-sensitive", csv_in(), ["--l", "2", "--sensitive", "id,job"],
         ("'id'", "declared both sensitive and identifier"),
         api=_api_identifier_published, api_needles=("'id'", "declared both")),
    Case("identifier-marked-exact", csv_in(), ["--l", "2", "--exact", "id"],
         ("'id'", "declared both")),
    Case("unknown-hierarchy-labels", with_files(csv_in(), h_csv=_HIER_TEXT),
         ["--l", "2", "--hierarchy", "city=h.csv"],
         ("'city'", "'w'", "not in the declared domain"),
         api=_api_hierarchy, api_needles=("'city'", "'w'")),
    Case("conflicting-l-and-k", csv_in(), ["--l", "2", "--k", "3"], ("--l and --k", "conflicting")),
    Case("conflicting-k-and-t", csv_in(), ["--k", "2", "--t", "0.3"], ("--k cannot be combined",)),
    Case("conflicting-bins-and-domain", with_files(csv_in(), dom_txt="1\n2\n"),
         ["--l", "2", "--domain", "age=dom.txt"], ("'age'", "either --bins or --domain")),
    Case("conflicting-ground-without-t", csv_in(), ["--l", "2", "--ground", "equal"],
         ("--ground applies to closeness",)),
    Case("output-is-input-csv", csv_in(), ["--l", "2"], ("is an input file",), output="in.csv"),
    Case("output-is-input-parquet", parquet_in(), ["--l", "2"], ("is an input file",),
         output="in.parquet", api=_api_output_is_input, api_needles=("is the input file",)),
    Case("output-is-side-input", with_files(csv_in(), h_csv="w;*\nx;*\ny;*\nz;*\n"),
         ["--l", "2", "--hierarchy", "city=h.csv", "--format", "csv"], ("is an input file",),
         output="h.csv"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)                  # relative side files (dom.txt, h.csv)
    src = case.setup(tmp_path)
    argv = ["anonymize", src.name, "-o", case.output, *case.argv, *(BASE if case.base else [])]
    before = snapshot(tmp_path)

    rc = cli.main(argv)
    cap = capsys.readouterr()
    assert rc == 2, (cap.out, cap.err)
    err = cap.err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("anonset anonymize: error: "), err
    for needle in case.needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    # nothing written: no output, no temporary file, the input unchanged
    assert snapshot(tmp_path) == before

    if case.api is not None:
        with pytest.raises(case.api_errors) as exc:
            case.api(tmp_path)
        for needle in case.api_needles:
            assert needle in str(exc.value), f"{needle!r} not in {str(exc.value)!r}"
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert snapshot(tmp_path).keys() - before.keys() <= {"api.parquet"}
        assert all(snapshot(tmp_path)[k] == v for k, v in before.items()
                   if not k.startswith("in.parquet") or case.id != "output-is-input-parquet")


# ----------------------------------------------------- the explicit options
def test_missing_category_option_publishes_missing_as_a_value(tmp_path, capsys):
    src = tmp_path / "in.csv"
    _missing_frame().to_csv(src, index=False)
    out = tmp_path / "out.csv"
    rc = cli.main(["anonymize", str(src), "-o", str(out), "--l", "2", "--missing", "category",
                   *BASE])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    pub = anonset.read_csv(out)
    assert "?" in pub.schema["job"].domain
    # the row whose job was missing holds '?' in its set (p = 1 for diversity)
    assert "?" in pub.sets("job")[7]


def test_clip_l_option_warns_and_uses_d_minus_1(tmp_path, capsys):
    src = tmp_path / "in.csv"
    frame().to_csv(src, index=False)
    out = tmp_path / "out.parquet"
    rc = cli.main(["anonymize", str(src), "-o", str(out), "--l", "5", "--clip-l", *BASE])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "warning" in cap.err and "'age'" in cap.err and "weaker" in cap.err
    pub = anonset.read_parquet(out)
    assert pub.params["age"].eta == 3 and pub.params["city"].eta == 3     # d - 1
    assert pub.params["job"].eta == 5                                      # l < d: unchanged
    with pytest.warns(UserWarning, match="clip_l"):
        anonset.publish(frame(), anonset.Diversity(5), seed=1, research_seed=True, clip_l=True, **infer_kw())


# ------------------------------------------------------------------ SIGINT
def _run_and_interrupt(tmp_path, src, out, delay):
    """Start ``anonset anonymize`` in a subprocess, SIGINT it ``delay`` seconds
    after its imports are done; return (exit code, stderr)."""
    ready = tmp_path / "ready"
    ready.unlink(missing_ok=True)
    script = textwrap.dedent(f"""
        import sys
        import anonset, anonset.cli, pandas, pyarrow.parquet   # imports first
        open({str(ready)!r}, "w").close()
        sys.exit(anonset.cli.main(sys.argv[1:]))
    """)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", script, "anonymize", str(src), "-o", str(out),
                             "--l", "3", "--identifier", "id", "--other", "note", "--bins", BINS,
                             "--t", "0.9"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while not ready.exists():
            if proc.poll() is not None:
                break
            assert time.monotonic() - t0 < 120, "the subprocess did not start"
            time.sleep(0.02)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ready.unlink(missing_ok=True)
    return proc.returncode, err


def test_sigint_during_a_large_anonymize_leaves_nothing(tmp_path):
    """A real SIGINT at several moments of a large run (reading, publishing,
    writing; CSV and Parquet outputs): the run ends with exit code 130 and no
    output or temporary file, or (when it finished first) with a complete,
    readable output.  The input is never touched."""
    n = 300_000
    src = tmp_path / "in.parquet"
    frame(n, seed=3).to_parquet(src, index=False)
    before = src.read_bytes()
    outcomes = []
    for fmt, delay in (("csv", 0.1), ("parquet", 0.4), ("csv", 0.9), ("parquet", 1.6)):
        out = tmp_path / f"out.{fmt}"
        rc, err = _run_and_interrupt(tmp_path, src, out, delay)
        names = sorted(p.name for p in tmp_path.iterdir())
        assert not [x for x in names if x.endswith(".tmp")], (delay, names)
        assert src.read_bytes() == before
        assert rc in (0, 130, -signal.SIGINT), (delay, rc, err)
        if rc != 0:
            # 130: caught by main(); -SIGINT: the signal came before main() began
            # or after it returned
            assert rc == -signal.SIGINT or ("interrupted" in err and "Traceback" not in err), err
        if names != ["in.parquet"]:
            # finished first (or interrupted after the final rename: while
            # printing the summary, or during interpreter shutdown, which
            # ends with -SIGINT): the output is complete, never partial
            pub = anonset.read_parquet(out) if fmt == "parquet" else anonset.read_csv(out)
            assert pub.n_rows == n
            for p in tmp_path.iterdir():
                if p != src:
                    p.unlink()
        else:
            assert rc != 0, (delay, names)
        outcomes.append((rc, names != ["in.parquet"]))
    # at least one run was interrupted before its output existed
    assert any(rc != 0 and not wrote for rc, wrote in outcomes), outcomes
