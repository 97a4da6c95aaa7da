"""Command-line defects a user trial found (2026-11-29): each refused in one
line (exit 2), nothing left behind."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset.cli import main

EX = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"


def _err(capsys):
    return capsys.readouterr().err.strip().splitlines()


def test_a_config_reads_its_files_beside_itself_wherever_it_runs(tmp_path, monkeypatch, capsys):
    """msa.toml names job_hierarchy.csv: read beside msa.toml, never from
    the folder the command runs in (one file, one key file and one
    hierarchy, wherever it runs)."""
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    shutil.copy(EX / "msa.toml", cfg / "msa.toml")
    shutil.copy(EX / "job_hierarchy.csv", tmp_path / "job_hierarchy.csv")   # not beside it
    monkeypatch.chdir(tmp_path)
    rc = main(["msa-anonymize", str(EX / "people.csv"), "-o", "m.csv", "--config",
               "cfg/msa.toml"])
    err = _err(capsys)
    assert rc == 2 and len(err) == 1 and not (tmp_path / "m.csv").exists()
    assert str(cfg / "job_hierarchy.csv") in err[0]
    shutil.copy(EX / "job_hierarchy.csv", cfg / "job_hierarchy.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["msa-anonymize", str(EX / "people.csv"), "-o", "m.csv", "--config",
                     "cfg/msa.toml", "-q"]) == 0


def test_anonymize_refuses_two_configs(tmp_path, capsys):
    (tmp_path / "a.toml").write_text("l = 5\n")
    (tmp_path / "b.toml").write_text("l = 2\n")
    rc = main(["anonymize", str(EX / "people.csv"), "-o", str(tmp_path / "o.parquet"),
               "--config", str(tmp_path / "a.toml"), "--config", str(tmp_path / "b.toml")])
    err = _err(capsys)
    assert rc == 2 and len(err) == 1 and "--config: given twice" in err[0]
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("what", ["config", "hierarchy", "domain"])
def test_files_that_are_not_utf8_are_named(tmp_path, capsys, what):
    out = tmp_path / "o.parquet"
    args = ["anonymize", str(EX / "people.csv"), "-o", str(out), "--identifier", "name,ssn",
            "--drop", "zip", "--sensitive", "job,disease", "--exact", "age,sex", "--l", "2",
            "--allow-recode", "age,sex"]
    if what == "config":
        f = tmp_path / "c.json"
        f.write_bytes('{"l": 2}'.encode("utf-16"))
        args = args[:2] + ["-o", str(out), "--config", str(f)]
    elif what == "hierarchy":
        f = tmp_path / "h.csv"
        f.write_bytes("nurse;caf\xe9;*\n".encode("latin-1"))
        args += ["--hierarchy", f"job={f}"]
    else:
        f = tmp_path / "d.txt"
        f.write_bytes("flu\ncaf\xe9\n".encode("latin-1"))
        args += ["--domain", f"disease={f}"]
    rc = main(args)
    err = _err(capsys)
    assert rc == 2 and len(err) == 1 and not out.exists(), err
    assert str(f) in err[0] and "is not UTF-8 text" in err[0] and "iconv -f" in err[0]


def test_reproduce_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "README.md").write_text("my notes\n")
    rc = main(["reproduce", "003", "--quick", "--no-progress", "--out", str(mine)])
    err = _err(capsys)
    assert rc == 2 and len(err) == 1 and "no run of `anonset reproduce 003` wrote" in err[0]
    assert (mine / "README.md").read_text() == "my notes\n"
    f = tmp_path / "f.csv"
    f.write_text("x\n")
    assert main(["reproduce", "003", "--quick", "--no-progress", "--out", str(f)]) == 2
    assert "is a file" in _err(capsys)[0]


@pytest.mark.parametrize("name", ["kd/", ""])
def test_keygen_refuses_a_name_that_is_no_file(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    assert main(["keygen", name]) == 2
    assert "names no file" in _err(capsys)[0]
    assert not any(tmp_path.iterdir())


def test_a_period_column_is_refused_alike_in_memory_and_from_parquet(tmp_path):
    from anonset.stream import publish_file
    df = pd.DataFrame({"job": np.resize(list("abcd"), 60),
                       "month": pd.period_range("2020-01", periods=3, freq="M").repeat(20)})
    df.to_parquet(tmp_path / "p.parquet", index=False)
    said = []
    for run in (lambda: anonset.publish(df, anonset.Diversity(2), sensitive=["job", "month"]),
                lambda: publish_file(tmp_path / "p.parquet", tmp_path / "o.parquet",
                                     anonset.Diversity(2), sensitive=["job", "month"])):
        with pytest.raises(anonset.InputError) as e:
            run()
        said.append(str(e.value).split("column 'month': ", 1)[1])
    assert said[0] == said[1] and said[0].startswith("holds dates or times")


def test_an_equals_sign_in_a_column_name_is_written_escaped(tmp_path, capsys):
    df = pd.DataFrame({"a=b": np.resize(list("xyz"), 60), "job": np.resize(list("abcd"), 60)})
    df.to_csv(tmp_path / "eq.csv", index=False)
    out = tmp_path / "o.parquet"
    rc = main(["anonymize", str(tmp_path / "eq.csv"), "-o", str(out), "--sensitive",
               r"a\=b,job", "--domain", r"a\=b=x,y,z", "--domain", "job=a,b,c,d",
               "--l", r"a\=b=2,job=3", "-q"])
    assert rc == 0, capsys.readouterr().err
    pub = anonset.read_parquet(out)
    assert pub.params["a=b"].l == 2 and pub.params["job"].l == 3


@pytest.mark.parametrize("cmd, name, args", [
    ("msa-anonymize", "ec", ["--qi", "age,ec", "--sa", "wage", "--k", "4", "--t", "0.4"]),
    ("lgb", "GID", ["--qi", "age,GID", "--sensitive", "wage", "--k", "4", "--l", "2"]),
    ("lgb", "ID", ["--qi", "age,ID", "--sensitive", "wage", "--k", "4", "--l", "2"]),
    ("lgb", "wage_bid", ["--qi", "age", "--sensitive", "wage", "--other", "wage_bid", "--k", "4",
                         "--l", "2"])])
def test_a_column_named_as_a_partition_release_column_is_refused(tmp_path, capsys, cmd, name,
                                                                   args):
    """A QI named 'ec' replaced msa's class labels, 'GID' or 'ID' lgb's group
    or record IDs, a pass-through 'wage_bid' the bucket IDs (and the bucket
    tables no longer joined); the audit then passed the broken release
    (H34).  Refused by name, nothing written."""
    rng = np.random.default_rng(0)
    n = 200
    src = tmp_path / "t.csv"
    pd.DataFrame({"age": rng.integers(20, 60, n), name: rng.choice(list("abcd"), n),
                  "wage": rng.choice(list("pqrstu"), n)}).to_csv(src, index=False)
    out = tmp_path / "o.parquet"
    assert main([cmd, str(src), "-o", str(out), *args]) == 2
    err = "\n".join(_err(capsys))
    assert f"column {name!r}: has the name of the release's" in err and "renamed" in err, err
    assert not out.exists()


def test_partition_publishers_read_a_declared_na_as_a_value(tmp_path, capsys):
    """A CSV value 'NA' (North America) declared by --domain or a hierarchy
    was read as missing by msa-anonymize and lgb (refused; the suggested
    --missing category made every North American '?'), where anonymize and
    a Parquet input read it as a value (H34)."""
    rng = np.random.default_rng(1)
    n = 300
    src = tmp_path / "c.csv"
    pd.DataFrame({"age": rng.integers(20, 60, n), "continent": rng.choice(["NA", "EU", "AS"], n),
                  "job": rng.choice(list("pqrstu"), n)}).to_csv(src, index=False)
    hier = tmp_path / "cont.csv"
    hier.write_text("NA;*\nEU;*\nAS;*\n")
    out = tmp_path / "m.parquet"
    assert main(["msa-anonymize", str(src), "-o", str(out), "--qi", "age", "--sa", "continent",
                 "--domain", "continent=NA,EU,AS", "--k", "4", "--t", "0.5", "--drop",
                 "job", "-q"]) == 0, _err(capsys)
    assert set(pd.read_parquet(out)["continent"]) == {"NA", "EU", "AS"}
    assert main(["lgb", str(src), "-o", str(tmp_path / "l.parquet"), "--qi", "age,continent",
                 "--sensitive", "job", "--hierarchy", f"continent={hier}", "--k", "4", "--l", "2",
                 "-q"]) == 0, _err(capsys)


def test_a_partition_audit_names_the_original_that_lacks_an_attribute(tmp_path, capsys):
    """An lgb release audited against an original without one of its
    attributes printed 'error: maritl' (a KeyError) (H34): the file, the
    option and what was expected, as the set tables' audit says it."""
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "sex": rng.choice(["f", "m"], n),
                       "job": rng.choice(list("pqrstu"), n)})
    src, short = tmp_path / "o.csv", tmp_path / "short.csv"
    df.to_csv(src, index=False)
    df.drop(columns=["job"]).to_csv(short, index=False)
    rel = tmp_path / "r.parquet"
    assert main(["lgb", str(src), "-o", str(rel), "--qi", "age,sex", "--sensitive", "job",
                 "--k", "4", "--l", "2", "-q"]) == 0, _err(capsys)
    for cmd in (["audit", str(rel)], ["report", str(rel), "-o", str(tmp_path / "r.html")]):
        assert main([*cmd, "--original", str(short)]) == 2
        err = "\n".join(_err(capsys))
        assert f"{str(short)!r}: --original: lacks the column 'job'" in err, err
    assert not (tmp_path / "r.html").exists()


# ============================================ H39: following the remedies
def _one(capsys) -> str:
    return " ".join(_err(capsys))


def test_a_boolean_column_takes_the_same_domain_from_csv_and_parquet(tmp_path, capsys):
    """'--domain deny=False,True' published the CSV and was refused on the
    same table as Parquet ('value False ... is not in the domain'): the
    text of a boolean domain now reads as the booleans it spells."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"deny": rng.random(400) < 0.3, "sex": rng.choice(["f", "m"], 400)})
    df["deny"] = df["deny"].astype("boolean")
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet", index=False)
    for src in ("t.csv", "t.parquet"):
        out = tmp_path / f"o_{src}.csv"
        assert main(["anonymize", str(tmp_path / src), "-o", str(out), "--sensitive", "deny",
                     "--exact", "sex", "--t", "0.3", "--domain", "deny=False,True", "-q"]) == 0, \
            _one(capsys)
        assert set(pd.read_csv(out)["deny"]) <= {"{False}", "{True}", "{False|True}"}
        assert main(["semantic-anonymize", str(tmp_path / src), "-o", str(tmp_path / "s.csv"),
                     "--sensitive", "deny", "--qids", "sex", "--l", "2", "--d", "1",
                     "--domain", "False,True", "-q"]) == 0, _one(capsys)


def test_float32_numbers_are_the_decimals_they_spell(tmp_path, capsys):
    """A float32 Parquet column of 0.7 holds 0.699999988: a declared 0.7 was
    refused, and an inferred domain published {0.10000000149011612|...}."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"score": rng.choice([0.1, 0.2, 0.3, 0.7], 500),
                       "sex": rng.choice(["f", "m"], 500)})
    df.astype({"score": "float32"}).to_parquet(tmp_path / "f32.parquet")
    src = str(tmp_path / "f32.parquet")
    base = ["--sensitive", "score", "--exact", "sex", "--l", "2", "-q"]
    assert main(["anonymize", src, "-o", str(tmp_path / "d.csv"), *base,
                 "--domain", "score=0.1,0.2,0.3,0.7"]) == 0, _one(capsys)
    assert main(["anonymize", src, "-o", str(tmp_path / "i.csv"), *base]) == 0, _one(capsys)
    cells = "".join(pd.read_csv(tmp_path / "i.csv")["score"])
    assert "0.7" in cells and "0000" not in cells and "9999" not in cells
    pub = anonset.publish(df.astype({"score": "float32"}), anonset.Diversity(2),
                          sensitive=["score"], exact=["sex"], domains={"score": [0.1, 0.2, 0.3,
                                                                                 0.7]})
    assert pub.schema["score"].domain == (0.1, 0.2, 0.3, 0.7)


@pytest.mark.parametrize("cmd", ["anonymize", "lgb", "msa-anonymize"])
def test_numbers_written_with_a_comma_are_refused_as_the_docs_say(tmp_path, capsys, cmd):
    """A ';'-separated CSV with decimal commas published wage as text
    (labels without order: msa's 'equal' distance, lgb's '*'), although
    docs/cli.md said such a column is refused."""
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"wage": np.round(rng.uniform(3, 40, n), 2), "age": rng.integers(20, 60, n),
                       "sex": rng.choice(["f", "m"], n)})
    src = tmp_path / "eu.csv"
    df.to_csv(src, sep=";", decimal=",", index=False)
    out = tmp_path / "o.csv"
    args = {"anonymize": ["--sensitive", "wage", "--exact", "age,sex", "--l", "3"],
            "lgb": ["--qi", "wage,age", "--sensitive", "sex", "--k", "5", "--t", "sex=0.3"],
            "msa-anonymize": ["--qi", "age,sex", "--sa", "wage", "--k", "5", "--t", "0.3"]}[cmd]
    assert main([cmd, str(src), "-o", str(out), *args, "-q"]) == 2
    err = _one(capsys)
    assert "eu.csv': column 'wage': holds numbers written with a comma" in err, err
    assert "decimal=','" in err and not out.exists()


def test_lgb_t_remedies_keep_the_t_already_given(tmp_path, capsys):
    """Each remedy named only the next column's t, and following it dropped
    the one already given: --t low=0.3 led to --t smoke=0.3, which led back."""
    rng = np.random.default_rng(5)
    n = 200
    df = pd.DataFrame({"age": rng.integers(15, 45, n), "race": rng.choice(list("abc"), n),
                       "low": rng.choice([0, 1], n, p=[.7, .3]),
                       "smoke": rng.choice([0, 1], n, p=[.6, .4])})
    src = tmp_path / "bw.csv"
    df.to_csv(src, index=False)
    base = ["lgb", str(src), "-o", str(tmp_path / "b.csv"), "--qi", "age,race",
            "--sensitive", "low,smoke", "--k", "5", "--l", "2", "-q"]
    assert main(base + ["--t", "low=0.3"]) == 2
    err = _one(capsys)
    assert "--t low=0.3,smoke=0.3" in err, err
    assert main(base + ["--t", "low=0.3,smoke=0.3"]) == 0, _one(capsys)


def test_semantic_remedies_name_only_its_own_options(tmp_path, capsys):
    df = pd.DataFrame({"visit": pd.date_range("2020-01-01", periods=100, freq="D"),
                       "age": np.arange(100) % 50, "dx": list("abcd") * 25})
    df.to_parquet(tmp_path / "t.parquet")
    assert main(["semantic-anonymize", str(tmp_path / "t.parquet"), "-o",
                 str(tmp_path / "o.csv"), "--sensitive", "dx", "--l", "2", "--d", "1",
                 "--domain", "a,b,c,d", "--qids", "age,visit"]) == 2
    err = _one(capsys)
    assert "holds dates or times" in err and "--drop" in err and "--other" not in err, err


@pytest.mark.parametrize("cmd", ["lgb", "msa-anonymize"])
def test_a_date_quasi_identifier_is_advised_as_a_number(tmp_path, capsys, cmd):
    """The refusal of a date advised ISO text, which msa and LGB read as an
    unordered category: msa then published '*' for every row (H77).  They
    advise a number, which is cut into ranges."""
    rng = np.random.default_rng(1)
    n = 300
    when = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    df = pd.DataFrame({"when": when, "sex": rng.choice(["f", "m"], n),
                       "dx": rng.choice(list("abcd"), n)})
    df.to_parquet(tmp_path / "t.parquet")
    model = {"lgb": ["--sensitive", "dx", "--k", "5", "--l", "2"],
             "msa-anonymize": ["--sa", "dx", "--k", "5", "--t", "0.4"]}[cmd]
    seed = ["--seed", "d1f3a8c04e9b27f65a0c3e81b7d9f246", "-q"]
    assert main([cmd, str(tmp_path / "t.parquet"), "-o", str(tmp_path / "o.csv"),
                 "--qi", "when,sex", *model, *seed]) == 2
    err = _one(capsys)
    assert "holds dates or times; expected numbers or text: convert it to a number (e.g. " \
        "days since a date" in err and "ISO" not in err, err
    df.assign(when=(df["when"] - pd.Timestamp("2020-01-01")).dt.days).to_parquet(
        tmp_path / "d.parquet")
    assert main([cmd, str(tmp_path / "d.parquet"), "-o", str(tmp_path / "o.csv"),
                 "--qi", "when,sex", *model, *seed]) == 0, _one(capsys)
    when_out = pd.read_csv(tmp_path / "o.csv", dtype=str)["when"]
    assert (when_out != "*").mean() > 0.5 and when_out.str.startswith("[").any()


@pytest.mark.parametrize("cmd", ["lgb", "msa-anonymize", "semantic-anonymize"])
def test_an_empty_table_is_named_by_its_file(tmp_path, capsys, cmd):
    (tmp_path / "empty.csv").write_text("age,sex,dx\n")
    args = {"lgb": ["--qi", "age,sex", "--sensitive", "dx", "--k", "2", "--l", "2"],
            "msa-anonymize": ["--qi", "age,sex", "--sa", "dx", "--k", "2", "--t", "0.3"],
            "semantic-anonymize": ["--qids", "age,sex", "--sensitive", "dx", "--l", "2",
                                   "--d", "1", "--domain", "a,b,c"]}[cmd]
    assert main([cmd, str(tmp_path / "empty.csv"), "-o", str(tmp_path / "o.csv"), *args]) == 2
    err = _one(capsys)
    assert "empty.csv': " in err and "IN:" not in err and "the input:" not in err, err


def test_format_never_writes_under_a_name_of_another_format(tmp_path, capsys):
    """'-o o.parquet.gz --format parquet' wrote plain Parquet named .gz, and
    '--format csv' gzipped CSV named .parquet.gz: both refused now."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.choice(list("xyzw"), 400), "b": rng.choice(list("uv"), 400)})
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    for fmt, said in (("parquet", "is named as compressed"),
                      ("csv", "is named as Parquet, but is written as CSV")):
        out = tmp_path / "o.parquet.gz"
        assert main(["anonymize", str(src), "-o", str(out), "--format", fmt, "--sensitive", "a",
                     "--exact", "b", "--l", "2", "-q"]) == 2
        assert said in _one(capsys) and not out.exists()
    out = tmp_path / "rel.dat"
    assert main(["anonymize", str(src), "-o", str(out), "--format", "csv", "--sensitive", "a",
                 "--exact", "b", "--l", "2", "-q"]) == 0, _one(capsys)


def test_a_multiple_choice_column_is_text_not_numbers_with_a_comma(tmp_path, capsys):
    """'1,3,4' (choices 1, 3 and 4) is no number written with a comma: a
    column of them is published as text."""
    rng = np.random.default_rng(6)
    choices = ["1", "2", "3", "1,2", "1,3,4", "2,4", "1,2,3"]
    df = pd.DataFrame({"picked": rng.choice(choices, 400), "sex": rng.choice(["f", "m"], 400)})
    src = tmp_path / "mc.csv"
    df.to_csv(src, index=False)
    assert main(["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--sensitive", "picked",
                 "--exact", "sex", "--l", "3", "--domain", "picked=" + ",".join(
                     c.replace(",", "\\,") for c in choices), "-q"]) == 0, _one(capsys)
    assert main(["anonymize", str(src), "-o", str(tmp_path / "p.csv"), "--sensitive", "picked",
                 "--exact", "sex", "--l", "3", "-q", "--allow-rare", "picked"]) == 0, _one(capsys)


def test_the_allow_recode_of_a_set_read_beside_columns_names_them_all(tmp_path, capsys):
    """Salaries at l = 3 beside rank, discipline and sex published exactly:
    the refusal named rank; with rank named, rank and discipline; then all
    three (H39: one more column each time).  The first refusal now names
    every column the adversary reads, and following it publishes."""
    import re
    rng = np.random.default_rng(8)
    n = 400
    rank = rng.choice(["asst", "assoc", "prof"], n, p=[.2, .2, .6])
    disc = rng.choice(["A", "B"], n)
    sex = rng.choice(["f", "m"], n, p=[.1, .9])
    base = np.select([rank == "asst", rank == "assoc"], [80_000, 95_000], 125_000)
    salary = base + np.where(disc == "B", 12_000, 0) + np.where(sex == "m", 4_000, 0) + \
        rng.normal(0, 6_000, n)
    df = pd.DataFrame({"salary": salary.round(), "rank": rank, "discipline": disc, "sex": sex})
    src = tmp_path / "sal.csv"
    df.to_csv(src, index=False)
    args = ["anonymize", str(src), "-o", str(tmp_path / "o.parquet"), "--sensitive", "salary",
            "--exact", "sex,discipline,rank", "--l", "3", "-q",
            "--bins", "salary=0:80000:100000:120000:150000:250000"]
    assert main(args) == 2
    said = _one(capsys)
    m = re.search(r"--allow-recode (\S+)\)$", said)
    assert m, said
    named = m.group(1).split(",")
    assert main(args + ["--allow-recode", named[0]]) in (0, 2)
    again = _one(capsys)
    if again:                              # still refused: it names the same whole list
        assert again.endswith(f"--allow-recode {m.group(1)})"), again
    assert main(args + ["--allow-recode", m.group(1)]) == 0, _one(capsys)


# ============================================ H42: types alike on every path
def test_shortest_decimals_are_numpys_for_every_narrow_float():
    """The vectorized shortest decimals of float32 and float16 values are
    the ones numpy's repr writes (a CSV file of them), for any bit pattern."""
    from hypothesis import given, settings, strategies as st
    from anonset.encode import shortest_decimals

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(0, 2 ** 32 - 1), min_size=1, max_size=200),
           st.sampled_from([np.float32, np.float16]))
    def check(bits, kind):
        raw = np.array(bits, dtype=np.uint32)
        x = raw.view(np.float32) if kind == np.float32 else \
            (raw & 0xFFFF).astype(np.uint16).view(np.float16)
        got = shortest_decimals(x)
        want = np.array([float(str(v)) for v in x])
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert same.all(), [(x[i], got[i], want[i]) for i in np.flatnonzero(~same)[:3]]
    check()


def test_narrow_floats_are_their_decimals_on_every_publisher_and_the_audit(tmp_path, capsys):
    """float32 read as its decimals only by the set publisher's own read:
    the audit of the file just published refused its float32 original, and
    semantic, lgb and msa published 1.600000023841858 (H42); a Categorical
    of float32 and float16 values too."""
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset.partition.msa.result import anonymize_msa
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame({"f": rng.choice([0.1, 0.2, 0.7, 1.5], n).astype(np.float32),
                       "h": rng.choice([1.6, 1.7, 1.8], n).astype(np.float32),
                       "age": rng.integers(20, 60, n), "sex": rng.choice(["f", "m"], n)})
    src = tmp_path / "in.parquet"
    df.to_parquet(src)
    out = tmp_path / "pub.parquet"
    assert main(["anonymize", str(src), "-o", str(out), "--sensitive", "f", "--exact", "sex",
                 "--drop", "h,age", "--l", "2", "-q", "--domain", "f=0.1,0.2,0.7,1.5"]) == 0
    assert main(["audit", str(out), "--original", str(src)]) == 0, _one(capsys)
    capsys.readouterr()
    assert anonset.audit(anonset.read_parquet(out), df).verdict != "FAILED"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = anonymize_msa(df, ["h", "age"], ["f"], 5, 0.6, drop=["sex"], seed=7,
                          research_seed=True)
    shown = r.generalized().astype(str).to_string()
    assert "0000" not in shown and "9999" not in shown and "1.6" in shown, shown
    for frame in (df.astype({"f": "category"}), df.astype({"f": np.float16})):
        pub = anonset.publish(frame, anonset.Diversity(2), sensitive=["f"], exact=["sex"],
                              drop=["h", "age"], domains={"f": [0.1, 0.2, 0.7, 1.5]})
        assert pub.schema["f"].domain == (0.1, 0.2, 0.7, 1.5)
    lazy = adask.publish(dd.from_pandas(df.astype({"f": "category"}), npartitions=3),
                         anonset.Diversity(2), sensitive=["f"], exact=["sex"],
                         drop=["h", "age"], allow_rare=["f"], scheduler="sync")
    assert lazy.schema["f"].domain == (0.1, 0.2, 0.7, 1.5)


def test_a_boolean_release_is_audited_against_either_file(tmp_path, capsys):
    """A CSV release holds 'False'/'True' and a Parquet one booleans: the
    audit of each refused the other file as its original (H42)."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"b": rng.random(300) < 0.4, "sex": rng.choice(["f", "m"], 300)})
    df.to_csv(tmp_path / "in.csv", index=False)
    df.to_parquet(tmp_path / "in.parquet")
    for fmt in ("csv", "parquet"):
        assert main(["anonymize", str(tmp_path / f"in.{fmt}"), "-o",
                     str(tmp_path / f"pub_{fmt}.parquet"), "--sensitive", "b", "--exact", "sex",
                     "--t", "0.3", "--domain", "b=False,True", "-q"]) == 0, _one(capsys)
    for pub in ("csv", "parquet"):
        for orig in ("csv", "parquet"):
            main(["audit", str(tmp_path / f"pub_{pub}.parquet"), "--original",
                  str(tmp_path / f"in.{orig}")])
            said = capsys.readouterr()
            assert "conforms to the declared model: yes" in said.out, (pub, orig, said.err)


def test_a_few_lists_among_whole_numbers_are_text(tmp_path, capsys):
    """DAAG hotspots' sources: '4,6' beside single whole numbers are lists of
    them, not numbers written with a comma (H42: refused, and the hint
    decimal=',' would have made 4.6 of them)."""
    rng = np.random.default_rng(9)
    src = [str(v) for v in rng.integers(1, 30, 200)] + ["4,6", "14,15", "18,19", "20,22"]
    df = pd.DataFrame({"source": src, "sex": rng.choice(["f", "m"], len(src))})
    df.to_csv(tmp_path / "h.csv", index=False)
    assert main(["anonymize", str(tmp_path / "h.csv"), "-o", str(tmp_path / "o.csv"),
                 "--sensitive", "source", "--exact", "sex", "--l", "2", "--allow-rare", "source",
                 "-q"]) != 2 or "written with a comma" not in _one(capsys)


def test_report_commands_tell_two_files_of_one_name_apart(tmp_path, capsys):
    """With file names only, public/wave1.parquet beside --original
    private/wave1.parquet read 'anonset report wave1.parquet --original
    wave1.parquet', which no folder re-runs (H41): each by its path from the
    report's folder then, and still no absolute path."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.choice(list("wxyz"), 300), "b": rng.choice(list("uv"), 300)})
    (tmp_path / "private").mkdir()
    (tmp_path / "public").mkdir()
    df.to_parquet(tmp_path / "private" / "wave1.parquet")
    assert main(["anonymize", str(tmp_path / "private" / "wave1.parquet"), "-o",
                 str(tmp_path / "public" / "wave1.parquet"), "--sensitive", "a", "--exact", "b",
                 "--l", "2", "-q"]) == 0, _one(capsys)
    page = tmp_path / "public" / "r.html"
    assert main(["report", str(tmp_path / "public" / "wave1.parquet"), "--original",
                 str(tmp_path / "private" / "wave1.parquet"), "-o", str(page), "--targets",
                 "200"]) in (0, 1)
    text = page.read_text(encoding="utf-8")
    assert "anonset report wave1.parquet --original ../private/wave1.parquet" in text
    assert str(tmp_path) not in text


@pytest.mark.parametrize("cmd", ["lgb", "msa-anonymize"])
def test_partition_formats_never_write_under_another_format_s_name(tmp_path, capsys, cmd):
    """lgb and msa-anonymize wrote Parquet named .csv and .parquet.gz under
    --format (H44): refused as anonymize refuses it."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), 300), "b": rng.choice(list("uv"), 300)})
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    args = {"lgb": ["--qi", "b", "--sensitive", "a", "--k", "3", "--l", "2"],
            "msa-anonymize": ["--qi", "b", "--sa", "a", "--k", "3", "--t", "0.5"]}[cmd]
    for name, fmt, said in (("o.parquet.gz", "parquet", "is named as compressed"),
                            ("o.csv", "parquet", "is named as CSV, but is written as Parquet")):
        out = tmp_path / name
        assert main([cmd, str(src), "-o", str(out), "--format", fmt, *args, "-q"]) == 2
        assert said in _one(capsys) and not out.exists()


def test_semantic_qids_of_numbers_with_a_comma_are_refused(tmp_path, capsys):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": [f"{v},5" for v in rng.integers(20, 60, 200)],
                       "job": rng.choice(list("abcdef"), 200)})
    df.to_csv(tmp_path / "eu.csv", sep=";", index=False)
    assert main(["semantic-anonymize", str(tmp_path / "eu.csv"), "-o", str(tmp_path / "o.csv"),
                 "--sensitive", "job", "--domain", "a,b,c,d,e,f", "--qids", "age", "--l", "2",
                 "--d", "1"]) == 2
    assert "column 'age': holds numbers written with a comma" in _one(capsys)
