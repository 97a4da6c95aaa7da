"""SetTable storage and round trips (Parquet, CSV with {a|b|c} cells, pandas)."""
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset.randomized.settable import masks_from_codes


@pytest.fixture
def published():
    df = pd.DataFrame({
        "name": [f"p{i}" for i in range(40)],
        "age": np.arange(40) * 2 + 5,           # every bin held
        "job": np.array(["nurse", "clerk", "chef", "pilot", "judge"])[np.arange(40) % 5],
        "sex": np.array(["F", "M"])[np.arange(40) % 2],
        "score": np.linspace(0, 1, 40),
    })
    schema = anonset.Schema.infer(df, sensitive=["age", "job"], exact=["sex"], identifiers=["name"],
                                  other=["score"], bins={"age": [0, 20, 40, 60, 100]})
    return df, anonset.publish(df, anonset.Diversity({"age": 2, "job": 3}), schema, seed=7,
                               research_seed=True, keep_order=True,
                               allow_identifier=["score"])     # a value per row, by design


def test_identifiers_dropped_and_columns(published):
    df, pub = published
    assert "name" not in pub.schema and "name" not in pub.to_pandas().columns
    assert pub.names == ["age", "job", "sex"]
    frame = pub.to_pandas()
    assert list(frame.columns) == ["age", "job", "sex", "score"]
    assert all(len(s) == 3 for s in frame["job"])
    assert (frame["sex"] == df["sex"]).all()
    np.testing.assert_array_equal(frame["score"], df["score"])


def test_sets_contain_truth_in_domain_order(published):
    df, pub = published
    dom = pub.schema["job"].domain
    for truth, s in zip(df["job"], pub.sets("job")):
        assert truth in s and list(s) == sorted(s, key=dom.index)


def test_parquet_round_trip(published, tmp_path):
    _, pub = published
    path = tmp_path / "pub.parquet"
    pub.to_parquet(path)
    back = anonset.read_parquet(path)
    assert back.equals(pub)
    meta = json.loads(pq.read_schema(path).metadata[b"anonset"])
    assert meta["params"]["job"]["eta"] == 3 and meta["model"]["l"] == {"age": 2, "job": 3}
    col = pq.read_table(path).column("job")
    assert str(col.type) == "uint8"                  # 5 jobs: a bitmask in one byte
    # sets as lists of values, for other Parquet readers: read back the same
    lists = tmp_path / "lists.parquet"
    pub.to_parquet(lists, sets="lists")
    assert str(pq.read_table(lists).column("job").type).startswith("list")
    assert anonset.read_parquet(lists).equals(pub)
    with pytest.raises(ValueError, match="sets: got 'rows'"):
        pub.to_parquet(tmp_path / "x.parquet", sets="rows")


def test_csv_round_trip(published, tmp_path):
    _, pub = published
    path = tmp_path / "pub.csv"
    pub.to_csv(path)
    text = path.read_text()
    assert text.splitlines()[0] == "age,job,sex,score"
    assert "{" in text.splitlines()[1] and "|" in text.splitlines()[1]
    back = anonset.read_csv(path)
    assert back.equals(pub)


def test_no_key_in_outputs(tmp_path):
    df = pd.DataFrame({"a": list("abcabc"), "b": list("xyzzyx")})
    pub = anonset.publish(df, anonset.Diversity(2), seed="my secret seed", research_seed=True,
                          sensitive=["a", "b"])
    pub.to_parquet(tmp_path / "p.parquet")
    pub.to_csv(tmp_path / "p.csv")
    key = anonset.io.keys.make_key("my secret seed", research_seed=True)
    for f in tmp_path.iterdir():
        raw = f.read_bytes()
        assert key not in raw and key.hex().encode() not in raw and b"my secret seed" not in raw


def test_output_is_atomic_and_input_protected(published, tmp_path):
    _, pub = published
    src = tmp_path / "in.csv"
    src.write_text("x\n1\n")
    with pytest.raises(ValueError, match="output: is an input file"):
        pub.to_csv(src, protect=[src])
    assert src.read_text() == "x\n1\n"
    with pytest.raises(ValueError, match="is in a directory that does not exist"):
        pub.to_parquet(tmp_path / "missing" / "out.parquet")
    # a directory as the output leaves no sidecar behind (data and metadata are one unit)
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(ValueError, match="output: is a directory"):
        pub.to_csv(tmp_path / "dir.csv")
    assert not (tmp_path / "dir.csv.anonset.json").exists()
    (tmp_path / "dir.csv").rmdir()
    # a failure while writing leaves nothing behind
    bad = tmp_path / "bad.csv"
    df = pd.DataFrame({"a": ["x|y", "z", "x|y"], "b": list("uvw")})
    with pytest.raises(ValueError, match=r"holds one of '\{', '\|', '\}'"):
        anonset.publish(df, anonset.Diversity(2), seed=0, research_seed=True,
                        sensitive=["a", "b"], allow_rare=["a", "b"]).to_csv(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_read_errors(tmp_path):
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match="junk.parquet': is not a readable Parquet file"):
        anonset.read_parquet(junk)
    plain = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(plain)
    with pytest.raises(ValueError, match="no anonset metadata"):
        anonset.read_parquet(plain)
    with pytest.raises(ValueError, match="nothing.csv': input: does not exist"):
        anonset.read_csv(tmp_path / "nothing.csv")
    (tmp_path / "bare.csv").write_text("a\n{x|y}\n")
    with pytest.raises(ValueError, match=r"bare.csv.anonset.json': is missing: a published CSV "
                                         r"needs its metadata file"):
        anonset.read_csv(tmp_path / "bare.csv")


@given(st.integers(1, 200), st.data())
@settings(max_examples=40)
def test_masks_from_codes(d, data):
    sizes = data.draw(st.lists(st.integers(0, min(d, 6)), min_size=1, max_size=20))
    sets = [data.draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k, unique=True))
            for k in sizes]
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    codes = np.array([c for s in sets for c in s], dtype=np.int64)
    m = masks_from_codes(codes, offsets, d)
    assert m.shape == (len(sets), (d + 63) // 64)
    for row, s in zip(m, sets):
        got = {w * 64 + b for w in range(m.shape[1]) for b in range(64) if (int(row[w]) >> b) & 1}
        assert got == set(s)


def test_large_domain_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"zip": rng.integers(0, 150, 300), "x": rng.integers(0, 3, 300)})
    schema = anonset.Schema.infer(df, sensitive=["zip", "x"],
                                  domains={"zip": list(range(150)), "x": [0, 1, 2]})
    pub = anonset.publish(df, anonset.Closeness(0.3), schema, seed=1, research_seed=True)
    assert pub.mask("zip").shape == (300, 3)
    pub.to_parquet(tmp_path / "z.parquet")
    pub.to_csv(tmp_path / "z.csv")
    assert anonset.read_parquet(tmp_path / "z.parquet").equals(pub)
    assert anonset.read_csv(tmp_path / "z.csv").equals(pub)


def test_csv_pass_through_text_and_compression(tmp_path):
    df = pd.DataFrame({"a": list("xyzxyzxx"), "zip": ["007", "010", "NA", "0", "1", "2", "3", "4"],
                       "n": np.arange(8), "f": np.linspace(0, 1, 8) / 3})
    pub = anonset.publish(df, anonset.Diversity(2), seed=3, research_seed=True, sensitive=["a"],
                          other=["zip", "n", "f"], allow_identifier=["zip", "n", "f"])
    for name in ("o.csv", "o.csv.gz"):
        pub.to_csv(tmp_path / name)
        back = anonset.read_csv(tmp_path / name)
        assert back.equals(pub)
        assert sorted(back.other["zip"]) == sorted(["007", "010", "NA", "0", "1", "2", "3", "4"])
    import gzip
    assert gzip.open(tmp_path / "o.csv.gz").read().startswith(b"a,zip,n,f")


def test_csv_pass_through_booleans_categories_dates_and_durations(tmp_path):
    # a CSV release of pass-through columns of these kinds could not be read
    # back ("holds text where its metadata says bool"): each one round-trips
    n = 24
    when = pd.date_range("2021-03-27", periods=n, freq="7h")
    df = pd.DataFrame({
        "a": list("xyz") * 8,
        "flag": np.arange(n) % 3 == 0,
        "maybe": pd.array([True, None, False] * 8, dtype="boolean"),
        "kind": pd.Categorical(["=SUM(1)", "b", "c"] * 8),
        "when": when.where(np.arange(n) != 5),                       # one NaT
        "local": when.tz_localize("Europe/Oslo"),                    # crosses summer time
        "took": pd.to_timedelta(np.arange(n) - 4, unit="min"),       # negative ones too
    })
    pub = anonset.publish(df, anonset.Diversity(2), seed=3, research_seed=True, sensitive=["a"],
                          other=[c for c in df.columns if c != "a"],
                          allow_recode=["maybe", "kind"],      # they repeat with 'a' (period 3)
                          allow_identifier=["when", "local", "took"])    # a value per row
    pub.to_csv(tmp_path / "o.csv")
    back = anonset.read_csv(tmp_path / "o.csv")
    assert back.equals(pub)
    for c in df.columns[1:]:
        assert back.other[c].dtype == pub.other[c].dtype, c
        assert back.other[c].equals(pub.other[c]), c
    # the formula-looking category stays escaped on disk
    assert "'=SUM(1)" in (tmp_path / "o.csv").read_text()


def test_csv_escape_leaves_numbers_and_lone_signs_and_round_trips():
    # a number written as text or a lone sign runs nothing in a spreadsheet;
    # everything else that starts like a formula gets its quote, and
    # unescaping gives back every value exactly
    from anonset.io.published import csv_escape, csv_unescape
    vals = np.array(["-5", "+1.5e3", ".5", "-", "+", "-2+3", "=1", "@x", "+cmd", "\tt", "'q",
                     "''", "a", "-inf", None, 3], dtype=object)
    esc = csv_escape(vals)
    kept = {"-5", "+1.5e3", ".5", "-", "+", "a"}
    for v, e in zip(vals, esc):
        if isinstance(v, str):
            assert (e == v) if v in kept else (e == "'" + v), (v, e)
    assert list(csv_unescape(esc)) == list(vals)


def test_take_reads_a_boolean_mask_as_a_mask():
    """A boolean mask was read as the positions 0 and 1 (every True row
    became row 1), a float position as its truncation; both now mean what
    they say or are refused, and a position outside the table is named."""
    import numpy as np
    df = pd.DataFrame({"a": list("xyzxyzxyz")})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], domains={"a": list("xyz")},
                          keep_order=True)
    keep = np.array([True, False, False] * 3)
    got = pub.take(keep)
    assert got.n_rows == 3 and got.source_rows.tolist() == [0, 3, 6]
    assert pub.take(slice(1, 3)).source_rows.tolist() == [1, 2]
    assert pub.take([-1, 0]).source_rows.tolist() == [8, 0]
    for bad, needle in (([1.5], "rows: holds values of type float64"),
                        (keep[:4], "rows: is a boolean mask of 4 values; expected one per row"),
                        ([9], "rows: holds a position outside the 9 rows"),
                        ([[0]], "rows: got an array of shape")):
        with pytest.raises(anonset.InputError, match=needle):
            pub.take(bad)


def test_a_release_is_not_written_under_the_other_formats_name(tmp_path):
    """to_parquet('out.csv') wrote Parquet bytes under a CSV name, which every
    CSV reader (anonset's too) then fails on; refused in memory, on a file,
    on Dask and on the command line, with nothing written."""
    from anonset.cli import main
    from anonset.stream import publish_file
    df = pd.DataFrame({"a": list("xyzxyz")})
    dom = {"a": list("xyz")}
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], domains=dom)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    calls = [lambda: pub.to_parquet(tmp_path / "o.csv"), lambda: pub.to_csv(tmp_path / "o.parquet"),
             lambda: pub.to_parquet(tmp_path / "o.tsv.gz"),
             lambda: publish_file(src, tmp_path / "o.parquet", anonset.Diversity(2),
                                  out_format="csv", sensitive=["a"], domains=dom)]
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    lazy = adask.publish(dd.from_pandas(df, npartitions=2), anonset.Diversity(2),
                         sensitive=["a"], domains=dom, scheduler="sync")
    calls.append(lambda: lazy.to_parquet(tmp_path / "o.csv", scheduler="sync"))
    for call in calls:
        with pytest.raises(anonset.InputError, match="output: is named as (CSV|Parquet), but is "
                                                     "written as (Parquet|CSV)"):
            call()
    assert main(["anonymize", str(src), "--format", "csv", "-o", str(tmp_path / "o.parquet"),
                 "--sensitive", "a", "--l", "2", "--domain", "a=x,y,z"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_pass_through_integers_beyond_2_53_and_arrow_types_round_trip(tmp_path):
    # a nullable Int64 column came out of to_pandas and to_csv as floats
    # (9007199254740993 -> 9007199254740992.0); Arrow-backed columns (as
    # read_parquet(dtype_backend='pyarrow') gives them) were written to CSV
    # and then refused by read_csv; UInt64 beyond 2**63 crashed it
    import pyarrow as pa
    n = 12
    big = [2**53 + 1, None, 2**60 + 3, 7] * 3
    df = pd.DataFrame({
        "a": list("xyz") * 4,
        "big": pd.array(big, dtype="Int64"),
        "ubig": pd.array([2**63 + 5, 3, 2**64 - 1, 0] * 3, dtype="UInt64"),
        "s": pd.array(["u", None, "=cmd", "v"] * 3, dtype=pd.ArrowDtype(pa.string())),
        "ls": pd.array(["p", "q", "r", None] * 3, dtype=pd.ArrowDtype(pa.large_string())),
        "b": pd.array([True, False, None, True] * 3, dtype=pd.ArrowDtype(pa.bool_())),
        "day": pd.array([None] + list(pd.date_range("2020-01-30", periods=n - 1).date),
                        dtype=pd.ArrowDtype(pa.date32())),
        "ts": pd.array(pd.date_range("2021-03-27 22:00", periods=n, freq="5h", tz="UTC"),
                       dtype=pd.ArrowDtype(pa.timestamp("us", tz="UTC"))),
        "dec": pd.array([__import__("decimal").Decimal("-3.25"), None, 1, 2] * 3,
                        dtype=pd.ArrowDtype(pa.decimal128(10, 2))),
        "cat": pd.array(["k", "l", "k", None] * 3,
                        dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))),
        "i8": pd.array([1, None, -3, 4] * 3, dtype=pd.ArrowDtype(pa.int8())),
        "month": pd.period_range("2020-01", periods=n, freq="M"),
    })
    other = [c for c in df.columns if c != "a"]
    pub = anonset.publish(df, anonset.Diversity(2), seed=3, research_seed=True, sensitive=["a"],
                          other=other, allow_recode=other, allow_identifier=other)
    shown = pub.to_pandas()
    assert shown["big"].dtype == "Int64" and shown["big"].tolist() == pub.other["big"].tolist()
    present = [v for v in shown["big"].tolist() if v is not pd.NA]
    assert 2**53 + 1 in present and 2**60 + 3 in present
    pub.to_csv(tmp_path / "o.csv")
    back = anonset.read_csv(tmp_path / "o.csv")
    assert back.equals(pub)
    for c in other:
        assert back.other[c].dtype == pub.other[c].dtype, c
        assert back.other[c].equals(pub.other[c]), c
    assert "'=cmd" in (tmp_path / "o.csv").read_text()


def test_a_categorical_of_intervals_passed_through_is_published_as_its_intervals(tmp_path):
    # published as its values (no dictionary: H117), which Parquet keeps
    df = pd.DataFrame({"a": list("xyz") * 4, "odd": pd.cut(pd.Series(np.arange(12.0)),
                                                           [-1, 5, 20])})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], other=["odd"],
                          allow_recode=["odd"], allow_identifier=["odd"])
    assert isinstance(pub.other["odd"].dtype, pd.IntervalDtype)
    pub.to_parquet(tmp_path / "o.parquet")
    back = anonset.read_parquet(tmp_path / "o.parquet")
    assert back.other["odd"].equals(pub.other["odd"])


@pytest.mark.parametrize("fmt, col", [
    ("csv", pd.Series(pd.arrays.IntervalArray.from_breaks(range(13)))),
    ("csv", pd.Series(np.arange(12) + 1j)),
    ("parquet", pd.Series(pd.Categorical([(1, 2), (3, 4)] * 6))),
    ("csv", pd.cut(pd.Series(np.arange(12.0)), [-1, 5, 20])),
])
def test_a_pass_through_type_a_format_cannot_keep_is_refused_by_name(tmp_path, fmt, col):
    df = pd.DataFrame({"a": list("xyz") * 4, "odd": col})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], other=["odd"],
                          allow_recode=["odd"], allow_identifier=["odd"])
    with pytest.raises(anonset.InputError, match=r"column 'odd': is of (type|a type) .* "
                                                 r"expected .*(Parquet output|converted)"):
        getattr(pub, f"to_{fmt}")(tmp_path / f"o.{fmt}")
    assert list(tmp_path.iterdir()) == []


def test_an_older_csv_release_with_integer_cells_written_as_floats_is_read(tmp_path):
    """Releases before the reader parsed integers exactly wrote an Int64
    pass-through column with a missing cell as '2.0' (metadata Int64); the
    reader refused them (H129).  A fractional cell is still refused."""
    df = pd.DataFrame({"a": list("xyz") * 8,
                       "visits": pd.array([1, None, 3, 4] * 6, dtype="Int64")})
    pub = anonset.publish(df, anonset.Diversity(2), seed=3, research_seed=True,
                          sensitive=["a"], other=["visits"], allow_recode=["visits"])
    pub.to_csv(tmp_path / "o.csv")
    text = (tmp_path / "o.csv").read_text()
    old = "\n".join(ln if i == 0 else ",".join(c + ".0" if c.isdigit() else c
                                                for c in ln.split(","))
                    for i, ln in enumerate(text.splitlines()))
    assert ".0" in old
    (tmp_path / "o.csv").write_text(old + "\n")
    back = anonset.read_csv(tmp_path / "o.csv")
    assert back.other["visits"].dtype == "Int64"
    assert back.other["visits"].equals(pub.other["visits"])
    (tmp_path / "o.csv").write_text(old.replace("3.0", "3.5", 1) + "\n")
    with pytest.raises(anonset.InputError, match="column 'visits' holds text where its "
                                                 "metadata says Int64"):
        anonset.read_csv(tmp_path / "o.csv")


def test_whole_numbers_beyond_int64_in_a_text_column_are_typed_without_a_traceback():
    # an original CSV of uint64 ids (18446744073709551615) was an
    # OverflowError in the audit's reader (H129)
    from anonset.io.tables import type_text_column
    big = np.array(["18446744073709551615", "9223372036854775813"], dtype=object)
    col = type_text_column(big)
    assert col.tolist() == [18446744073709551615, 9223372036854775813]
    gap = type_text_column(np.array(["18446744073709551615", ""], dtype=object))
    assert gap.tolist()[0] == 18446744073709551615 and gap.isna().tolist() == [False, True]
