"""Streaming publish / reconstruct (anonset.stream): the output for a key is
the in-memory output, whatever the chunk size; only the needed columns are
read in the first pass; errors name rows and columns; outputs are atomic."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import stream
from anonset.stream import publish_file, reconstruct_file

SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"

ROOT = Path(__file__).resolve().parents[1]


def table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, n),
        "job": rng.choice(list("abcdef"), n, p=[.3, .25, .2, .1, .1, .05]),
        "city": rng.choice(["x", "y", "z", "w"], n),
        "zip": rng.choice(["007", "123", "NA"], n),
    })


INFER = dict(identifiers=["id"], other=["zip"], sensitive=["age", "job", "city"],
             bins={"age": [0, 30, 50, 70, 120]})
MODELS = [anonset.Diversity(3), anonset.Closeness(0.3),
          anonset.DiversityCloseness(2, 0.25), anonset.Anonymity(2)]


def in_memory(df, model, seed=5, **kw):
    return anonset.publish(df, model, seed=seed, research_seed=True, **kw)


@pytest.fixture
def files(tmp_path):
    df = table()
    pq_in = tmp_path / "in.parquet"
    df.to_parquet(pq_in, row_group_size=64)
    csv_in = tmp_path / "in.csv"
    df.to_csv(csv_in, index=False)
    return df, pq_in, csv_in


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.to_dict()["model"])
@pytest.mark.parametrize("chunk", [37, 64, 1000])
def test_parquet_equals_in_memory(files, tmp_path, model, chunk):
    df, pq_in, _ = files
    out = tmp_path / "pub.parquet"
    res = publish_file(pq_in, out, model, chunk_rows=chunk, seed=5, research_seed=True, **INFER)
    ref = in_memory(df, model, **INFER)
    got = anonset.read_parquet(out)
    assert got.equals(ref)
    assert got.metadata() == ref.metadata() == res.metadata()
    # shuffled through about n / chunk rank buckets, each written as a row group
    assert res.n_rows == len(df) and res.chunks <= -(-len(df) // chunk)
    # inferred domains of job and city and A_j for closeness need the first pass
    assert res.passes == 2
    meta = stream.read_metadata(out)
    assert meta == ref.metadata()
    # one row group per chunk
    import pyarrow.parquet as pq
    assert pq.ParquetFile(out).metadata.num_row_groups == res.chunks


def test_row_by_row(tmp_path):
    df = table(25, seed=3)
    p = tmp_path / "in.parquet"
    df.to_parquet(p)
    publish_file(p, tmp_path / "pub.parquet", anonset.Closeness(0.4), chunk_rows=1, seed=8, research_seed=True, **INFER)
    assert anonset.read_parquet(tmp_path / "pub.parquet").equals(
        in_memory(df, anonset.Closeness(0.4), seed=8, **INFER))


def test_declared_domains_need_one_pass(files, tmp_path):
    df, pq_in, _ = files
    schema = anonset.Schema.infer(df, **INFER)
    out = tmp_path / "pub.parquet"
    res = publish_file(pq_in, out, anonset.Diversity(2), schema, chunk_rows=50, seed=9, research_seed=True)
    assert res.passes == 2               # every value is checked before anything is written
    assert anonset.read_parquet(out).equals(anonset.publish(df, anonset.Diversity(2), schema,
                                                            seed=9, research_seed=True))


def test_csv_output_is_byte_identical(files, tmp_path):
    df, _, csv_in = files
    ref_frame = pd.read_csv(csv_in, dtype={"zip": str, "id": str}, keep_default_na=False)
    model = anonset.Closeness(0.3)
    ref = in_memory(ref_frame, model, **INFER)
    ref.to_csv(tmp_path / "ref.csv")
    publish_file(csv_in, tmp_path / "pub.csv", model, chunk_rows=41, seed=5, research_seed=True, **INFER)
    assert (tmp_path / "pub.csv").read_bytes() == (tmp_path / "ref.csv").read_bytes()
    assert json.loads((tmp_path / "pub.csv.anonset.json").read_text()) == \
        json.loads((tmp_path / "ref.csv.anonset.json").read_text())
    got = anonset.read_csv(tmp_path / "pub.csv")
    assert got.equals(anonset.read_csv(tmp_path / "ref.csv"))
    assert sorted(got.other["zip"]) == sorted(df["zip"].astype(str))   # '007', 'NA' kept


def test_csv_to_parquet_and_back(files, tmp_path):
    df, _, csv_in = files
    out = tmp_path / "pub.parquet"
    publish_file(csv_in, out, anonset.Diversity(2), chunk_rows=100, seed=2, research_seed=True, **INFER)
    ref_frame = pd.read_csv(csv_in, dtype={"zip": str, "id": str}, keep_default_na=False)
    assert anonset.read_parquet(out).equals(in_memory(ref_frame, anonset.Diversity(2), seed=2,
                                                      **INFER))


def test_large_domain_multiword_and_exact(tmp_path):
    rng = np.random.default_rng(1)
    n = 500
    df = pd.DataFrame({"big": rng.integers(0, 150, n), "sex": rng.choice(["f", "m"], n),
                       "c": rng.choice(list("pqrs"), n)})
    p = tmp_path / "in.parquet"
    df.to_parquet(p)
    out = tmp_path / "pub.parquet"
    model = anonset.Diversity({"big": 4, "c": 2})
    dom = {"big": list(range(150))}       # 500 rows: declared, not read off
    publish_file(p, out, model, chunk_rows=77, seed=3, research_seed=True, exact=["sex"],
                 sensitive=["big", "c"], domains=dom)
    ref = anonset.publish(df, model, seed=3, research_seed=True, exact=["sex"],
                          sensitive=["big", "c"], domains=dom)
    got = anonset.read_parquet(out)
    assert got.equals(ref) and ref.mask("big").shape[1] == 3
    for method in ("em", "exact_em", "value_adding", "random"):
        a = reconstruct_file(out, ["big", "sex"], method, chunk_rows=123, max_iter=10, seed=1)
        b = anonset.reconstruct(ref, ["big", "sex"], method, max_iter=10, seed=1)
        assert np.array_equal(a.counts, b.counts), method


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("method", ["em", "exact_em", "value_adding", "random"])
def test_reconstruct_file_equals_in_memory(files, tmp_path, fmt, method):
    df, pq_in, _ = files
    out = tmp_path / f"pub.{fmt}"
    model = anonset.DiversityCloseness(2, 0.3)
    publish_file(pq_in, out, model, chunk_rows=64, seed=11, research_seed=True, **INFER)
    ref = in_memory(df, model, seed=11, **INFER)
    for attrs in (["job"], ["age", "job", "city"]):
        a = reconstruct_file(out, attrs, method, chunk_rows=29, max_iter=300, seed=4)
        b = anonset.reconstruct(ref, attrs, method, max_iter=300, seed=4)
        assert np.array_equal(a.counts, b.counts)
        assert a.method == b.method and a.attributes == b.attributes
        for k in ("iterations", "converged", "patterns"):
            assert a.info.get(k) == b.info.get(k)


def test_thread_count_does_not_matter(files, tmp_path):
    _, pq_in, _ = files
    for nt in (1, 2):
        publish_file(pq_in, tmp_path / f"p{nt}.parquet", anonset.Diversity(3), chunk_rows=50,
                     seed=1, research_seed=True, n_threads=nt, **INFER)
    assert anonset.read_parquet(tmp_path / "p1.parquet").equals(
        anonset.read_parquet(tmp_path / "p2.parquet"))


def test_missing_category(tmp_path):
    df = pd.DataFrame({"job": ["a", None, "b", "c", "a", "b"] * 20,
                       "city": list("xyzxyz") * 20})
    p = tmp_path / "in.parquet"
    df.to_parquet(p)
    out = tmp_path / "pub.parquet"
    roles = dict(sensitive=["job", "city"])
    publish_file(p, out, anonset.Closeness(0.4), chunk_rows=7, seed=1, research_seed=True,
                 missing="category", **roles)
    ref = anonset.publish(df, anonset.Closeness(0.4), seed=1, research_seed=True,
                          missing="category", **roles)
    assert anonset.read_parquet(out).equals(ref)
    assert "?" in ref.schema["job"].domain
    with pytest.raises(ValueError, match="missing value"):
        publish_file(p, tmp_path / "x.parquet", anonset.Diversity(2), chunk_rows=7, seed=1,
                     research_seed=True, **roles)
    assert not (tmp_path / "x.parquet").exists()


def test_errors_name_rows_and_leave_no_file(files, tmp_path):
    df, pq_in, _ = files
    schema = anonset.Schema.infer(df.iloc[:10], **INFER)       # a domain too small
    out = tmp_path / "pub.parquet"
    with pytest.raises(ValueError, match=r"column 'job': value '.' at row \d+ is not in the domain"):
        publish_file(pq_in, out, anonset.Diversity(2), schema, chunk_rows=64, seed=1, research_seed=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "in.parquet"]
    with pytest.raises(ValueError, match="output: is an input file"):
        publish_file(pq_in, pq_in, anonset.Diversity(2), chunk_rows=64, seed=1, research_seed=True, **INFER)
    with pytest.raises(ValueError, match="chunk_rows"):
        publish_file(pq_in, out, anonset.Diversity(2), chunk_rows=0, **INFER)
    with pytest.raises(ValueError, match="sensitive: names 'nope', which is not a column of the"):
        publish_file(pq_in, out, anonset.Diversity(2), sensitive=["nope"])
    with pytest.raises(ValueError, match="exceeds the largest p"):
        full = anonset.Schema.infer(df, **INFER)
        bad = {n: anonset.AttributeParams(n, 1.0, 1, full[n].d) for n in ("age", "job", "city")}
        publish_file(pq_in, out, anonset.Closeness(0.1), full, params=bad, chunk_rows=64)
    with pytest.raises(ValueError, match="no anonset metadata"):
        reconstruct_file(pq_in, ["job"])
    publish_file(pq_in, out, anonset.Diversity(2), chunk_rows=64, seed=1, research_seed=True, **INFER)
    with pytest.raises(ValueError, match="not a published attribute"):
        reconstruct_file(out, ["zip"])


def test_given_params_are_used(files, tmp_path):
    df, pq_in, _ = files
    ref = in_memory(df, anonset.Closeness(0.3), **INFER)
    out = tmp_path / "pub.parquet"
    publish_file(pq_in, out, anonset.Closeness(0.3), params=ref.params, chunk_rows=100,
                 seed=5, research_seed=True, **INFER)
    assert anonset.read_parquet(out).equals(ref)


def test_only_needed_columns_are_read(files, tmp_path, monkeypatch):
    df, pq_in, _ = files
    seen = []
    orig = stream.iter_blocks

    def spy(path, fmt, *, chunk_rows, columns=None):
        seen.append(list(columns))
        return orig(path, fmt, chunk_rows=chunk_rows, columns=columns)

    monkeypatch.setattr(stream, "iter_blocks", spy)
    schema = anonset.Schema.infer(df, **INFER)
    publish_file(pq_in, tmp_path / "p.parquet", anonset.Closeness(0.3), schema, chunk_rows=100,
                 seed=1, research_seed=True)
    # first pass: the published columns, the identifiers (only to count the
    # rows that share a value: nothing of them is kept or written) and the
    # pass-through columns (the pass-through check draws its rows from the
    # whole table, anonset.passthrough), in the file's order
    assert seen[0] == ["id", "age", "job", "city", "zip"]
    assert seen[1] == ["age", "job", "city", "zip"]        # the second pass skips identifiers
    assert len(seen) == 2


@pytest.mark.slow
def test_stream_scale_small(tmp_path):
    """bench/stream_scale.py at a reduced size: RSS bound, identical
    reconstruction (the bench runs 20 million rows)."""
    rows = int(os.environ.get("ANONSET_STREAM_ROWS", "2000000"))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "stream_scale.py"), "--rows", str(rows),
                        "--dir", str(tmp_path), "--no-report", "--in-memory-rows", str(rows)],
                       env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["identical"] and res["reconstruction_identical"]
    assert res["stream_peak_rss_mib"] < 1024


# ------------------------------------------------------------------ the CLI
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_chunk_rows_gives_the_same_output(files, tmp_path, suffix, capsys):
    from anonset import cli
    _, _, csv_in = files
    base = ["--identifier", "id", "--other", "zip", "--bins", "age=0:30:50:70:120",
            "--sensitive", "age,job,city", "--t", "0.3", "--l", "2", "--seed", "4",
            "--research-seed"]
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    assert cli.main(["anonymize", str(csv_in), "-o", str(a), *base]) == 0
    assert cli.main(["anonymize", str(csv_in), "-o", str(b), "--chunk-rows", "33", *base]) == 0
    out = capsys.readouterr().out
    assert "published 300 records" in out and "not published (identifiers): id" in out
    if suffix == ".csv":
        assert a.read_bytes() == b.read_bytes()
    else:
        assert anonset.read_parquet(a).equals(anonset.read_parquet(b))
    ca, cb = tmp_path / "ca.csv", tmp_path / "cb.csv"
    for method in ("em", "exact_em"):
        assert cli.main(["reconstruct", str(a), "--attributes", "age,job", "-o", str(ca),
                         "--method", method, "--max-iter", "100"]) == 0
        assert cli.main(["reconstruct", str(b), "--attributes", "age,job", "-o", str(cb),
                         "--method", method, "--max-iter", "100", "--chunk-rows", "50",
                         "--original", str(csv_in)]) == 0
        assert ca.read_bytes() == cb.read_bytes()
    assert cli.main(["anonymize", str(csv_in), "-o", str(b), "--chunk-rows", "0", *base]) == 2
    assert cli.main(["reconstruct", str(tmp_path / "nope.parquet"), "--attributes", "job",
                     "--chunk-rows", "5"]) == 2


def test_write_behind_keeps_order_and_raises_the_sinks_error():
    """The writer thread writes blocks in order; an error of the sink is
    raised on the caller's thread (at the next write or on leaving); a stop
    on the caller's side drops the blocks still waiting."""
    from anonset.io.stream import _WriteBehind

    class Sink:
        def __init__(self, fail_at=None):
            self.got, self.fail_at = [], fail_at

        def write(self, t):
            if t == self.fail_at:
                raise OSError("disk full")
            self.got.append(t)

    sink = Sink()
    with _WriteBehind(sink) as w:
        for i in range(50):
            w.write(i)
    assert sink.got == list(range(50))
    sink = Sink(fail_at=3)
    with pytest.raises(OSError, match="disk full"):
        with _WriteBehind(sink) as w:
            for i in range(50):
                w.write(i)
    assert sink.got == [0, 1, 2]
    import threading
    gate, sink = threading.Event(), Sink()
    real = sink.write
    sink.write = lambda t: (gate.wait(5), real(t))
    with pytest.raises(KeyboardInterrupt):
        with _WriteBehind(sink, depth=2) as w:
            for i in range(3):
                w.write(i)            # 0 is being written (held), 1 and 2 wait
            threading.Timer(0.2, gate.set).start()
            raise KeyboardInterrupt
    assert sink.got == [0]            # the write in progress ends; 1 and 2 are dropped


def test_codes_with_a_leading_zero_are_published_as_the_file_spells_them(tmp_path, capsys):
    """A CSV column of ZIP codes was typed as whole numbers, so '02134' was
    published as 2134 (an exact QID, and every value of a sensitive set).
    A column where some value has a leading zero holds codes: it stays text
    on every path that reads CSV (publishing, the audit's original, the
    partition publishers), and the audit with the original agrees."""
    from anonset.cli import main
    from anonset.io.tables import text_type, type_text_column
    src = tmp_path / "zips.csv"
    zips, areas = ["02134", "10001", "00501"], ["617", "212", "631", "718"]
    rows = ["id,zip,area,job"] + [f"{i},{zips[i % 3]},{areas[i % 4]},{'ab'[i // 3 % 2]}"
                                  for i in range(48)]
    src.write_text("\n".join(rows) + "\n")
    res = publish_file(src, tmp_path / "out.csv", anonset.Diversity(2), identifiers=["id"],
                       exact=["zip"], sensitive=["area", "job"], seed=SEED)
    assert res.schema["zip"].domain == ("00501", "02134", "10001")
    assert res.schema["area"].domain == (212, 617, 631, 718)     # no leading zero: numbers
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert set(out["zip"]) == {"00501", "02134", "10001"}
    back = anonset.read_csv(tmp_path / "out.csv")
    assert set(back.sets("zip")) == {("00501",), ("02134",), ("10001",)}
    for audit_in in ("out.csv",):
        assert main(["audit", str(tmp_path / audit_in), "--original", str(src)]) == 0, \
            capsys.readouterr()
    capsys.readouterr()
    assert main(["lgb", str(src), "-o", str(tmp_path / "l.csv"), "--qi", "zip",
                 "--sensitive", "job", "--drop", "area", "--identifier", "id", "--k", "2",
                 "--l", "2"]) == 0
    assert set(pd.read_csv(tmp_path / "l.csv", dtype=str)["zip"]) <= \
        {"00501", "02134", "10001", "[00501-02134]", "[00501-10001]", "[02134-10001]", "*"}
    assert text_type(["0", "10", "-3"]) == "int" and text_type(["0.5", "-0.25"]) == "float"
    assert text_type(["007", "12"]) == "str" and text_type(["00.5"]) == "str"
    assert type_text_column(np.array(["02134", "NA"], dtype=object)).tolist() == ["02134", None]


def test_whole_numbers_written_with_blanks_stay_whole(tmp_path, capsys):
    """A CSV file written as "4, 2, 0" typed its second column as floats (the
    integer test wanted no blank, float() reads one): an exact QID was
    published as 2.0 and the domain said 0.0, 1.0, ...  Blanks around a whole
    number keep it whole on every path, and merge with the same number
    written without them."""
    from anonset.cli import main
    from anonset.io.tables import text_type
    src = tmp_path / "blank.csv"
    rows = ["a,b,c"] + [f"{i % 5}, {i % 4}, {'' if i % 7 else ' '}{i % 3}" for i in range(120)]
    src.write_text("\n".join(rows) + "\n")
    res = publish_file(src, tmp_path / "out.csv", anonset.Diversity(2), sensitive=["a", "b"],
                       exact=["c"], seed=SEED)
    assert res.schema["b"].domain == (0, 1, 2, 3)
    assert res.schema["c"].domain == (0, 1, 2)          # ' 2' and '2' are one value
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert set(out["c"]) == {"0", "1", "2"}
    assert main(["audit", str(tmp_path / "out.csv"), "--original", str(src)]) == 0, \
        capsys.readouterr()
    assert text_type([" 2", "3 ", "\t-1"]) == "int" and text_type([" 02"]) == "str"
    assert text_type(["1 2"]) == "str"


def test_a_set_encoding_for_a_csv_output_is_refused(tmp_path):
    """sets='lists' was ignored for a CSV output (each set is {a|b|c});
    refused by name before any work, and an unknown encoding too."""
    import pandas as pd
    src = tmp_path / "in.csv"
    pd.DataFrame({"a": list("xyzxyz")}).to_csv(src, index=False)
    for out, sets, needle in (("o.csv", "lists", "sets: is 'lists', which a Parquet output takes"),
                              ("o.parquet", "json", "sets: got 'json'; expected masks or lists")):
        with pytest.raises(anonset.InputError, match=needle):
            publish_file(src, tmp_path / out, anonset.Diversity(2), sets=sets, sensitive=["a"],
                         domains={"a": list("xyz")})
        assert not (tmp_path / out).exists()


def test_a_categorical_of_numbers_in_parquet_warns_that_its_domain_is_read_off(tmp_path):
    """Parquet keeps a pandas Categorical of numbers as its values alone
    (its unused categories and order gone, pandas reads it back as numbers):
    the file's publication says its domain is read off the data (H92); a
    Categorical of text keeps its categories and says nothing."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"c": pd.Categorical(rng.choice([1, 2, 3], 300), categories=[1, 2, 3, 7],
                                           ordered=True),
                       "t": pd.Categorical(rng.choice(list("abc"), 300), categories=list("abcz"))})
    df.to_parquet(tmp_path / "in.parquet")
    with pytest.warns(UserWarning, match=r"column\(s\) 'c' were pandas Categoricals that "
                                         "Parquet keeps as plain values") as rec:
        anonset.stream.publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet",
                                    anonset.Diversity(3), sensitive=["c", "t"],
                                    seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    assert not any("'t'" in str(w.message) and "plain values" in str(w.message) for w in rec)
    back = anonset.read_parquet(tmp_path / "o.parquet")
    assert list(back.schema["t"].domain) == list("abcz")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        anonset.stream.publish_file(tmp_path / "in.parquet", tmp_path / "p.parquet",
                                    anonset.Diversity(3), sensitive=["c", "t"],
                                    domains={"c": [1, 2, 3, 7]},
                                    seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")


def test_small_whole_numbers_key_a_release_as_any_other_dtype_does(tmp_path):
    """The table's digest (what keys a release that is not persistent)
    reads small non-negative whole numbers as their own codes, without
    hashing them; the release is the one the same column gives as floats
    or as a nullable Int64 (hashed), read whole or streamed in blocks."""
    import secrets
    import warnings
    rng = np.random.default_rng(1)
    n = 5000
    df = pd.DataFrame({"a": rng.integers(0, 12, n).astype(np.int32),
                       "b": rng.choice(list("xyz"), n)})
    seed = secrets.token_hex(16)
    kw = dict(sensitive=["a", "b"], allow_clear=["a", "b"], seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity(3), **kw)
        for other in (df.astype({"a": float}), df.astype({"a": "Int64"})):
            assert anonset.publish(other, anonset.Diversity(3), **kw).equals(pub)
        df.to_parquet(tmp_path / "in.parquet")
        publish_file(tmp_path / "in.parquet", tmp_path / "out.parquet", anonset.Diversity(3),
                     chunk_rows=700, **kw)
        assert anonset.read_parquet(tmp_path / "out.parquet").equals(pub)
