"""Input of any kind (issue 15 item 5): Polars and DuckDB results (the Arrow
PyCapsule stream protocol) and pyarrow tables are published exactly as the
same pandas frame; a pandas Categorical's categories are the declared domain
(and its order, when ordered); an order that would come from sorting text is
refused by name."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset

SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
ROLES = dict(identifiers=["id"], sensitive=["job", "city"], other=["n"])


def frame():
    rng = np.random.default_rng(3)
    return pd.DataFrame({"id": np.arange(60), "job": rng.choice(list("abcd"), 60),
                         "city": rng.choice(["x", "y", "z"], 60), "n": rng.integers(0, 9, 60)})


def test_arrow_polars_and_duckdb_inputs_equal_pandas():
    import pyarrow as pa
    df = frame()
    ref = anonset.publish(df, anonset.Diversity(2), seed=SEED, **ROLES)
    got = [anonset.publish(pa.table(df), anonset.Diversity(2), seed=SEED, **ROLES)]

    class LazyFrame:                 # as a Polars LazyFrame: a query, collected on demand
        def collect(self):
            return df
    with pytest.raises(ValueError, match=r"^data: got a LazyFrame \(a lazy table: collect it "):
        anonset.publish(LazyFrame(), anonset.Diversity(2), **ROLES)
    pl = pytest.importorskip("polars", reason="polars is not installed")
    got.append(anonset.publish(pl.from_pandas(df), anonset.Diversity(2), seed=SEED, **ROLES))
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed")
    con = duckdb.connect()
    con.register("people", df)
    rel = con.sql("select * from people")
    got.append(anonset.publish(rel, anonset.Diversity(2), seed=SEED, **ROLES))
    for g in got:
        assert g.equals(ref)
    with pytest.raises(ValueError, match=r"^data: got a list \(plain Python data: "
                                         r"pd.DataFrame\(data\) first\); expected a pandas "):
        anonset.publish([1, 2], anonset.Diversity(2), **ROLES)
    with pytest.raises(ValueError, match=r"lf\.collect\(\)"):
        anonset.publish(pl.from_pandas(df).lazy(), anonset.Diversity(2), **ROLES)


def _stream_inputs(df, cats):
    """The tables that reach anonset through the Arrow stream protocol, each
    holding ``df`` (its column 'job' as text, a Categorical or an Enum of
    ``cats``), with a name."""
    import pyarrow as pa
    t = pa.table(df)
    out = {"reader": pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=25))}
    try:
        import polars as pl
    except ImportError:
        pl = None
    if pl is not None:
        p = pl.from_pandas(df)
        out["polars"] = p
        out["polars Categorical"] = p.with_columns(pl.col("job").cast(pl.Categorical))
        out["polars Enum"] = p.with_columns(pl.col("job").cast(pl.Enum(cats)))
    try:
        import duckdb
    except ImportError:
        duckdb = None
    if duckdb is not None:
        con = duckdb.connect()
        con.execute(f"CREATE TYPE jobs AS ENUM ({', '.join(repr(c) for c in cats)})")
        con.register("people", t)
        out["duckdb"] = con.sql("select * from people")
        cols = ", ".join("job::jobs AS job" if c == "job" else c for c in df.columns)
        out["duckdb ENUM"] = con.sql(f"select {cols} from people")
    return out


@pytest.mark.parametrize("major", [None, 14, 15, 17])
def test_stream_inputs_give_one_release_on_every_pyarrow(major, monkeypatch):
    """H156: on pyarrow 14 (pyproject: pyarrow>=14) every Polars frame,
    DuckDB relation and RecordBatchReader failed with AttributeError
    (``RecordBatchReader.from_stream`` came with pyarrow 15); on 15 a Polars
    frame's text views, before 18 a Polars Categorical's, and before 23 the
    unsigned indices of a Polars Enum or a DuckDB ENUM were refused.  Each
    is now read on every pyarrow, as the same release.  Fails before the fix
    on those pyarrow versions; on newer ones the reading for an older major
    version (``major``) is taken where it can be (the capsule import of
    pyarrow 14, Polars' oldest Arrow types), so the test means the same on
    every version."""
    import pyarrow as pa
    from anonset.io import tables
    if major is not None:
        if major > int(pa.__version__.split(".")[0]):
            pytest.skip(f"pyarrow {pa.__version__} cannot read as pyarrow {major} does")
        monkeypatch.setattr(tables, "pyarrow_major", lambda: major)
    cats = ["d", "c", "b", "a", "e"]                    # 'e': declared, held by no row
    df = frame()
    kw = dict(seed=SEED, allow_clear=["job"], **ROLES)
    text = anonset.publish(df, anonset.Diversity(2), **kw)
    cat = anonset.publish(df.assign(job=pd.Categorical(df.job, categories=sorted(cats))),
                          anonset.Diversity(2), **kw)
    for name, data in _stream_inputs(df, cats).items():
        want = cat if "Enum" in name or "ENUM" in name else text
        assert anonset.publish(data, anonset.Diversity(2), **kw).equals(want), name


def test_unsigned_dictionary_indices_are_read_as_signed_ones():
    """H156: pyarrow < 23 refuses to convert a dictionary with unsigned
    indices (Polars' Enum and Categorical, a DuckDB ENUM) to pandas; such a
    table is read with signed indices one size up, its order, values and
    metadata kept, as the same Categorical."""
    import pyarrow as pa
    from anonset.io import tables
    idx = pa.array([2, 0, 1, 2, None], pa.uint8())
    arr = pa.DictionaryArray.from_arrays(idx, pa.array(["x", "y", "z"]), ordered=True)
    field = pa.field("c", arr.type, metadata={b"k": b"v"})
    t = pa.Table.from_arrays([arr, pa.array([1, 2, 3, 4, 5])],
                             schema=pa.schema([field, pa.field("n", pa.int64())]))
    got = tables.signed_dictionaries(t)
    assert got.schema.field("c").type == pa.dictionary(pa.int16(), pa.string(), ordered=True)
    assert got.schema.field("c").metadata == {b"k": b"v"}
    assert got.column("c").to_pylist() == ["z", "x", "y", "z", None]
    assert tables.signed_dictionaries(t.to_batches()[0]).schema == got.schema
    frame = tables.arrow_frame(t)
    assert list(frame.c.cat.categories) == ["x", "y", "z"] and frame.c.cat.ordered
    assert frame.c.tolist()[:4] == ["z", "x", "y", "z"] and pd.isna(frame.c.iloc[4])


@pytest.mark.parametrize("what, needle", [
    ("path", "got a str (a file name: read the file first, or publish it block by block with "
             "anonset.stream.publish_file(path, out, model, ...))"),
    ("pathlib", "got a PosixPath (a file name"),
    ("dataset", "(a dataset: ds.to_table() reads it into memory"),
    ("series", "got a pandas Series (one column); expected a table: s.to_frame()"),
    ("array", "got a ndarray (an array: pd.DataFrame(a, columns=[...]) first"),
    ("dict", "got a dict (plain Python data"),
])
def test_what_is_not_a_table_is_named_with_how_to_make_one(tmp_path, what, needle):
    """A file name, a pyarrow dataset, a Series or an array handed to
    publish is refused in one line that says how to make a table of it."""
    import pathlib

    import pyarrow.dataset as ds
    df = frame()
    df.to_parquet(tmp_path / "t.parquet")
    data = {"path": str(tmp_path / "t.parquet"), "pathlib": pathlib.PosixPath(tmp_path),
            "dataset": ds.dataset(tmp_path / "t.parquet"), "series": df["job"],
            "array": df.to_numpy(), "dict": df.to_dict("list")}[what]
    for call in (lambda: anonset.publish(data, anonset.Diversity(2), **ROLES),
                 lambda: anonset.semantic.semantic_publish(data, "job", l=2, d=1,
                                                           qids=["city"]),
                 lambda: anonset.lgb.lgb(data, qi=["city"], sensitive=["job"], k=2, l=2)):
        with pytest.raises(anonset.InputError) as e:
            call()
        assert needle in str(e.value) and "\n" not in str(e.value)


def test_categorical_categories_are_the_declared_domain():
    df = frame()
    levels = ["none", "primary", "secondary", "tertiary"]
    df["edu"] = pd.Categorical(np.resize(["primary", "tertiary", "secondary"], len(df)),
                               categories=levels, ordered=True)
    pub = anonset.publish(df, anonset.Closeness(0.3), seed=SEED, identifiers=["id"],
                          sensitive=["job", "city", "edu"], other=["n"])
    a = pub.schema["edu"]
    assert a.domain == tuple(levels) and not a.inferred and a.kind == "ordinal"
    assert pub.params["edu"].ground == "ordered"             # the declared order, not a-z
    # an unordered Categorical's order means nothing, and is often the order
    # its values first appear in: published sorted, or the domain began with
    # the first row's values
    plain = pd.Categorical(df["job"], categories=["d", "c", "b", "a", "e"])
    pub = anonset.publish(df.assign(job=plain), anonset.Diversity(3), seed=SEED, drop=["edu"],
                          **ROLES)
    assert pub.schema["job"].domain == ("a", "b", "c", "d", "e")
    assert pub.schema["job"].kind == "nominal"


def test_an_unordered_categorical_met_in_row_order_publishes_no_row(tmp_path):
    """pd.Categorical(x, pd.unique(x)), a Polars Categorical handed over as
    pandas and Arrow's dictionary_encode list the categories in the order
    the rows hold them: kept as the published domain, its first values were
    the first row's sensitive values and exact QID, on every path.  An
    unordered Categorical is published sorted; an ordered one keeps its
    order; ground 'ordered' on unordered text is refused (its order would
    be a-z)."""
    import dask.dataframe as dd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from anonset import dask as adask
    from anonset.cli import main
    from anonset.stream import publish_file
    rng = np.random.default_rng(11)
    n = 900
    cols = {"job": rng.choice(list("pqrstu"), n), "city": rng.choice(["Oslo", "Bergen", "Alta"], n),
            "sex": rng.choice(["M", "F"], n)}
    first = {"job": "t", "city": "Bergen", "sex": "M"}
    for c, v in first.items():
        cols[c][0] = v
    kw = dict(sensitive=["job", "city"], exact=["sex"], seed=SEED)
    met = pd.DataFrame({c: pd.Categorical(v, categories=pd.unique(v)) for c, v in cols.items()})
    assert all(met[c].cat.categories[0] == v for c, v in first.items())     # the leak's shape
    arrow = pa.table({c: pa.array(v).dictionary_encode() for c, v in cols.items()})
    pq.write_table(arrow, tmp_path / "in.parquet", row_group_size=200)
    pubs = [anonset.publish(met, anonset.Diversity(2), **kw),
            anonset.publish(arrow, anonset.Diversity(2), **kw),
            adask.publish(dd.read_parquet(tmp_path / "in.parquet"), anonset.Diversity(2),
                          scheduler="sync", **kw).to_settable(scheduler="sync")]
    publish_file(tmp_path / "in.parquet", tmp_path / "s.parquet", anonset.Diversity(2),
                 chunk_rows=170, **kw)
    pubs.append(anonset.read_parquet(tmp_path / "s.parquet"))
    assert main(["anonymize", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "c.parquet"),
                 "--l", "2", "--sensitive", "job,city", "--exact", "sex", "--seed", SEED]) == 0
    pubs.append(anonset.read_parquet(tmp_path / "c.parquet"))
    for pub in pubs:
        for c, v in cols.items():
            assert pub.schema[c].domain == tuple(sorted(set(v))), (c, pub.schema[c].domain)
    ordered = met.assign(city=pd.Categorical(cols["city"], categories=["Oslo", "Bergen", "Alta"],
                                             ordered=True))
    pub = anonset.publish(ordered, anonset.Diversity(2), **kw)
    assert pub.schema["city"].domain == ("Oslo", "Bergen", "Alta")
    with pytest.raises(anonset.InputError, match="alphabetically") as e:
        anonset.publish(met.assign(city=pd.Categorical(cols["city"], categories=["Oslo", "Bergen",
                                                                                  "Alta", "Bodo"])),
                        anonset.Closeness(0.4, ground={"city": "ordered"}), allow_clear=["city"],
                        **kw)
    assert "city" in str(e.value) and "ground" in str(e.value)


def test_an_ordered_categorical_every_category_held_takes_the_ordered_ground():
    """An ordered Categorical declares its order, whether or not every
    category is someone's: ground 'ordered' was refused on it ('its order
    would come from sorting its text values alphabetically') once every
    category was held, and accepted with one unused (H19).  It publishes
    with the p that the same order declared as ordinal= gives."""
    rng = np.random.default_rng(1)
    n = 200
    df = pd.DataFrame({"job": rng.choice(list("abcd"), n, p=[.5, .3, .15, .05]),
                       "city": rng.choice(list("wxyz"), n)})
    model = anonset.Closeness(0.3, ground={"job": "ordered", "city": "equal"})
    cat = df.assign(job=pd.Categorical(df["job"], categories=list("dcba"), ordered=True))
    pub = anonset.publish(cat, model, sensitive=["job", "city"], seed=SEED)
    assert pub.schema["job"].domain == ("d", "c", "b", "a")
    named = anonset.publish(df, model, sensitive=["job", "city"], seed=SEED,
                            ordinal={"job": list("dcba")})
    assert pub.params["job"].p == named.params["job"].p
    assert pub.params["job"].ground == "ordered"
    # unordered text under 'ordered' is still refused
    with pytest.raises(anonset.InputError, match="alphabetically"):
        anonset.publish(df.assign(job=pd.Categorical(df["job"])), model,
                        sensitive=["job", "city"], seed=SEED)


def test_a_polars_categorical_is_read_off_the_data_and_an_enum_declared():
    """A Polars Categorical's categories are the values it met (nothing the
    user declared): its domain is inferred, and flagged as such, where an
    Enum's categories are declared.  Polars marks every Enum ordered, so an
    Enum is read unordered, as a DuckDB ENUM is (H69: an ordered domain gets
    t-closeness along its order, a weaker bound): its categories sorted,
    its ground the equal one; an order is declared with ``ordinal=``."""
    pl = pytest.importorskip("polars", reason="polars is not installed")
    df = pl.DataFrame({"id": list(range(8)), "job": ["a", "b", "c", "a", "b", None, "a", "b"],
                       "grade": ["low", "mid", "high", "low", "mid", "high", "mid", "low"]})
    df = df.with_columns(pl.col("job").cast(pl.Categorical),
                         pl.col("grade").cast(pl.Enum(["low", "mid", "high", "top"])))
    for data in (df, df.to_arrow()):
        pub = anonset.publish(data, anonset.Diversity(2), seed=SEED, identifiers=["id"],
                              sensitive=["job", "grade"], missing="category",
                              allow_rare=["job"],          # 8 rows: 'c' may lie in one set
                              allow_clear=["grade"])       # 'top', nobody's: a decoy
        job, grade = pub.schema["job"], pub.schema["grade"]
        assert job.inferred and job.domain == ("a", "b", "c", "?") and job.kind == "nominal"
        assert not grade.inferred and grade.domain == ("high", "low", "mid", "top")
        assert grade.kind == "nominal"
        flagged = anonset.audit(pub).checks.query("check == 'domain' and status == 'warn'")
        assert list(flagged.attribute) == ["job"]


def test_a_polars_enum_is_unordered_on_every_path(tmp_path):
    """H69: a Polars Enum reaches Arrow (and Parquet) marked ordered, so a
    job title was published under t-closeness along its category order
    (CPS1985 occupation at t = 0.2: p 0.29 -> 0.37, eta 2 -> 1).  In
    memory, streamed and on Dask it is now the unordered Categorical a
    DuckDB ENUM or pandas gives: the same release."""
    pl = pytest.importorskip("polars", reason="polars is not installed")
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    from anonset.stream import publish_file
    rng = np.random.default_rng(4)
    jobs = ["worker", "technical", "services", "sales", "office", "management"]
    df = pd.DataFrame({"id": np.arange(600), "job": rng.choice(jobs, 600),
                       "town": rng.choice(list("xyz"), 600)})
    kw = dict(seed=SEED, identifiers=["id"], sensitive=["job"], exact=["town"])
    ref = anonset.publish(df.assign(job=pd.Categorical(df["job"], categories=jobs)),
                          anonset.Closeness(0.2), **kw)
    assert ref.params["job"].ground == "equal" and ref.schema["job"].kind == "nominal"
    enum = pl.from_pandas(df).with_columns(pl.col("job").cast(pl.Enum(jobs)))
    enum.write_parquet(tmp_path / "e.parquet")
    assert anonset.publish(enum, anonset.Closeness(0.2), **kw).equals(ref)
    publish_file(tmp_path / "e.parquet", tmp_path / "o.parquet", anonset.Closeness(0.2),
                 chunk_rows=100, **kw)
    assert anonset.read_parquet(tmp_path / "o.parquet").equals(ref)
    got = adask.publish(dd.read_parquet(tmp_path / "e.parquet"), anonset.Closeness(0.2),
                        scheduler="sync", **kw).to_settable(scheduler="sync")
    assert got.equals(ref)


def test_text_order_is_refused_for_ordinal_columns():
    df = frame().assign(edu=np.resize(["High School", "Less Than High School", "College"], 60))
    with pytest.raises(ValueError, match=r"column 'edu': is ordinal, but its order would come "
                                         r"from sorting its text values alphabetically \(it "
                                         r"would read 'College' < 'High School' < 'Less Than "
                                         r"High School'\)"):
        anonset.publish(df, anonset.Closeness(0.3), identifiers=["id"], other=["n"],
                        sensitive=["job", "city", "edu"], ordinal=["edu"])
    # declared in order: accepted, and the order is the declared one
    order = ["Less Than High School", "High School", "College"]
    pub = anonset.publish(df, anonset.Closeness(0.3), identifiers=["id"], other=["n"],
                          sensitive=["job", "city", "edu"], ordinal={"edu": order})
    assert pub.schema["edu"].domain == tuple(order)


def test_notebook_display_of_a_release_a_crosstab_and_an_audit():
    df = frame()
    pub = anonset.publish(df, anonset.Diversity(2), **ROLES)
    html = pub._repr_html_()
    assert "anonset SetTable" in html and "<table" in html and "shuffled" in html
    assert "passed through" in html and "<script" not in html
    ct = anonset.reconstruct(pub, ["job"])
    assert "anonset CrossTab" in ct._repr_html_() and "iterations" in ct._repr_html_()
    rep = anonset.audit(pub, df)
    h = rep._repr_html_()
    assert rep.verdict in h and "conforms to the declared model" in h and "<table" in h
    # text is escaped: a value that looks like markup stays text
    odd = df.assign(job=np.resize(["<b>x</b>", "y&z"], len(df)))
    assert "<b>x</b>" not in anonset.publish(odd, anonset.Diversity(2), **ROLES)._repr_html_()


def test_csv_written_by_a_spreadsheet_with_a_byte_order_mark(tmp_path):
    # "CSV UTF-8" from a spreadsheet starts with U+FEFF: it named the first
    # column '\ufeffage', so --sensitive age was "not a column of the data"
    from anonset import cli
    from anonset.io.stream import publish_file
    src = tmp_path / "in.csv"
    src.write_bytes("\ufeffage,job\n23,nurse\n45,clerk\n33,chef\n".encode("utf-8"))
    # three rows, each value held once: named as a risk the user takes
    pub = publish_file(src, tmp_path / "o.parquet", anonset.Diversity(2), sensitive=["age", "job"],
                       seed="d1f3a8c04e9b27f65a0c3e81b7d9f246", allow_rare=["age", "job"])
    assert [a.name for a in pub.schema] == ["age", "job"]
    assert cli.main(["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--sensitive",
                     "age,job", "--allow-rare", "age,job", "--l", "2", "-q"]) == 0
    assert (tmp_path / "o.csv").read_text().startswith("age,job\n")


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_file_separated_by_semicolons_tabs_or_bars_is_read_as_its_header_says(tmp_path, sep,
                                                                                 capsys):
    """Spreadsheets set to a decimal comma write ';' between fields, TSV
    files a tab: such a file was refused ("has one column, whose name holds
    ';'").  The separator is read off the header (no comma in it, exactly
    one of ';', tab, '|'), so every reader of the file (publishing in
    memory from the command line and streamed, the partition publishers, the
    audit's original) sees the same columns, and the release equals the one
    of the same data written with commas."""
    from anonset import cli
    from anonset.io.stream import publish_file
    from anonset.io.tables import read_typed
    df = frame().assign(note=lambda d: np.where(d.id % 2 == 0, "x, y", "z"))
    kw = dict(identifiers=["id"], sensitive=["job", "city"], other=["n", "note"],
              domains={"job": list("abcd"), "city": ["x", "y", "z"]}, seed=SEED)
    df.to_csv(tmp_path / "comma.csv", index=False)
    df.to_csv(tmp_path / "other.csv", index=False, sep=sep)
    assert read_typed(tmp_path / "other.csv", "csv").equals(read_typed(tmp_path / "comma.csv",
                                                                       "csv"))
    want = publish_file(tmp_path / "comma.csv", tmp_path / "a.parquet", anonset.Diversity(2),
                        **kw)
    got = publish_file(tmp_path / "other.csv", tmp_path / "b.parquet", anonset.Diversity(2),
                       chunk_rows=7, **kw)
    assert got.info == want.info
    assert anonset.read_parquet(tmp_path / "b.parquet").equals(
        anonset.read_parquet(tmp_path / "a.parquet"))
    args = ["--identifier", "id", "--sensitive", "job,city", "--other", "n,note",
            "--domain", "job=a,b,c,d", "--domain", "city=x,y,z", "--l", "2", "--seed", SEED, "-q"]
    for src, out in (("comma.csv", "c.parquet"), ("other.csv", "d.parquet")):
        assert cli.main(["anonymize", str(tmp_path / src), "-o", str(tmp_path / out),
                         *args]) == 0
    assert anonset.read_parquet(tmp_path / "d.parquet").equals(
        anonset.read_parquet(tmp_path / "c.parquet"))
    capsys.readouterr()
    assert cli.main(["audit", str(tmp_path / "d.parquet"), "--original",
                     str(tmp_path / "other.csv")]) == 0, capsys.readouterr().err
    assert cli.main(["msa-anonymize", str(tmp_path / "other.csv"), "-o",
                     str(tmp_path / "m.csv"), "--qi", "n", "--sa", "job", "--k", "3",
                     "--t", "0.5", "--identifier", "id", "--drop", "city,note",
                     "--seed", SEED, "-q"]) == 0, capsys.readouterr().err


def test_a_file_named_tsv_is_read_with_tabs_and_never_written(tmp_path, capsys):
    """A file named .tsv was refused ("names no known format") unless
    --input-format csv was given.  It is read as CSV with the tab as its
    separator (a comma in a column's name stays part of the name), the same
    release as the comma-separated file on every path; an output named .tsv
    is refused on every path (anonset writes comma-separated values only:
    before, it was written with commas under a .tsv name), nothing written."""
    from anonset import cli
    from anonset.io.stream import publish_file
    from anonset.io.tables import read_typed
    df = frame().rename(columns={"n": "n, count"})
    kw = dict(identifiers=["id"], sensitive=["job", "city"], other=["n, count"],
              domains={"job": list("abcd"), "city": ["x", "y", "z"]}, seed=SEED)
    df.to_csv(tmp_path / "comma.csv", index=False)
    df.to_csv(tmp_path / "t.tsv", index=False, sep="\t")
    df.to_csv(tmp_path / "t.tab.gz", index=False, sep="\t")
    want = read_typed(tmp_path / "comma.csv", "csv")
    for name in ("t.tsv", "t.tab.gz"):
        assert read_typed(tmp_path / name, "csv").equals(want)
    ref = publish_file(tmp_path / "comma.csv", tmp_path / "a.parquet", anonset.Diversity(2), **kw)
    got = publish_file(tmp_path / "t.tsv", tmp_path / "b.parquet", anonset.Diversity(2), **kw)
    assert got.info == ref.info
    assert anonset.read_parquet(tmp_path / "b.parquet").equals(
        anonset.read_parquet(tmp_path / "a.parquet"))
    args = ["--identifier", "id", "--sensitive", "job,city", "--other", "n\\, count",
            "--domain", "job=a,b,c,d", "--domain", "city=x,y,z", "--l", "2", "--seed", SEED, "-q"]
    assert cli.main(["anonymize", str(tmp_path / "t.tsv"), "-o", str(tmp_path / "c.parquet"),
                     *args]) == 0
    assert anonset.read_parquet(tmp_path / "c.parquet").equals(
        anonset.read_parquet(tmp_path / "a.parquet"))
    # an output named .tsv: refused in memory, streamed and on the command line
    before = sorted(p.name for p in tmp_path.iterdir())
    line = "is named as a tab-separated file, which anonset reads but does not write; " \
           "expected a .csv (comma-separated) or .parquet name"
    with pytest.raises(ValueError) as mem:
        anonset.read_parquet(tmp_path / "a.parquet").to_csv(tmp_path / "o.tsv")
    with pytest.raises(ValueError) as streamed:
        publish_file(tmp_path / "t.tsv", tmp_path / "o.tsv", anonset.Diversity(2), **kw)
    capsys.readouterr()
    assert cli.main(["anonymize", str(tmp_path / "t.tsv"), "-o", str(tmp_path / "o.tsv"),
                     *args]) == 2
    err = capsys.readouterr().err.strip()
    assert str(mem.value) == str(streamed.value) == f"{str(tmp_path / 'o.tsv')!r}: {line}"
    assert err == f"anonset anonymize: error: {str(tmp_path / 'o.tsv')!r}: {line}"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@given(st.lists(st.text(alphabet="ab,;|\t\" x\n", min_size=1, max_size=6), min_size=1,
                max_size=12), st.sampled_from([";", "\t", "|"]))
@settings(max_examples=60, deadline=None)
def test_any_text_reads_alike_under_any_separator(values, sep):
    """Whatever a cell holds (separators, quotes, line breaks: written
    quoted), a file separated by ';', tab or '|' reads as the same table
    as the one written with commas."""
    import tempfile
    from anonset.io.tables import read_typed
    df = pd.DataFrame({"id": np.arange(len(values)), "t": values, "n": np.arange(len(values))})
    with tempfile.TemporaryDirectory() as tmp:
        df.to_csv(f"{tmp}/a.csv", index=False)
        df.to_csv(f"{tmp}/b.csv", index=False, sep=sep)
        a = read_typed(f"{tmp}/a.csv", "csv", text_columns=["t"])
        b = read_typed(f"{tmp}/b.csv", "csv", text_columns=["t"])
    assert list(b.columns) == ["id", "t", "n"] and b.equals(a)


def test_a_decimal_comma_is_named_with_the_conversion(tmp_path, capsys):
    """A ';'-separated file writes numbers with a decimal comma ('354,94'),
    which is text to anonset: a column with bins says so, and how to
    convert the file."""
    from anonset import cli
    (tmp_path / "w.csv").write_text("id;wage;job\n1;354,94;a\n2;123,5;b\n3;99;a\n")
    assert cli.main(["anonymize", str(tmp_path / "w.csv"), "-o", str(tmp_path / "o.parquet"),
                     "--identifier", "id", "--sensitive", "wage,job", "--bins",
                     "wage=0:100:1000", "--domain", "job=a,b", "--l", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "column 'wage': holds the text '354,94' at row 1, but its domain is numeric; expected " \
           "numbers with a decimal point (the file writes them with a decimal comma: convert " \
           "it, e.g. pandas.read_csv(path, sep=';', decimal=',')" in err and "\n" not in err, err
    assert not (tmp_path / "o.parquet").exists()


def test_side_files_with_a_byte_order_mark(tmp_path):
    # domain lists, hierarchies and configs saved by editors that write a BOM
    from anonset import cli
    bom = "\ufeff"
    src = tmp_path / "in.csv"
    src.write_text("job,city\nnurse,Oslo\nclerk,Rome\nchef,Oslo\nnurse,Lima\n", encoding="utf-8")
    (tmp_path / "jobs.txt").write_text(bom + "chef\nclerk\nnurse\n", encoding="utf-8")
    (tmp_path / "city.csv").write_text(bom + "Oslo;Europe;*\nRome;Europe;*\nLima;America;*\n",
                                       encoding="utf-8")
    (tmp_path / "c.json").write_text(bom + '{"sensitive": ["job", "city"], "l": 2}',
                                     encoding="utf-8")
    out = tmp_path / "o.parquet"
    assert cli.main(["anonymize", str(src), "-o", str(out), "--config", str(tmp_path / "c.json"),
                     "--domain", f"job={tmp_path / 'jobs.txt'}",
                     "--hierarchy", f"city={tmp_path / 'city.csv'}", "-q"]) == 0
    pub = anonset.read_parquet(out)
    assert pub.schema["job"].domain == ("chef", "clerk", "nurse")
    assert pub.schema["city"].domain[0] == "Oslo"


def test_lgb_and_msa_take_the_inputs_publish_takes():
    # lgb refused a Polars frame ("got a DataFrame; expected a pandas
    # DataFrame"), msa everything but pandas and pyarrow
    import pyarrow as pa
    from anonset import lgb as L
    from anonset.partition.msa import MSAProblem
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"age": rng.integers(20, 70, 120), "sex": rng.choice(["f", "m"], 120),
                       "job": rng.choice(list("abcdef"), 120)})
    inputs = [pa.table(df)]
    pl = pytest.importorskip("polars", reason="polars is not installed")
    inputs.append(pl.from_pandas(df))
    ref_l = L.lgb(df, qi=["age", "sex"], sensitive=["job"], k=3, l=2, seed=SEED).table
    ref_m = MSAProblem(df, ["age", "sex"], ["job"]).run("pca", 3, 0.5, seed=SEED).generalized()
    for data in inputs:
        assert L.lgb(data, qi=["age", "sex"], sensitive=["job"], k=3, l=2,
                     seed=SEED).table.equals(ref_l)
        assert MSAProblem(data, ["age", "sex"], ["job"]).run(
            "pca", 3, 0.5, seed=SEED).generalized().equals(ref_m)
    for bad in (lambda: L.lgb([1, 2], qi=["age"], k=2),
                lambda: MSAProblem([1, 2], ["age"], ["job"])):
        with pytest.raises(ValueError, match=r"^data: got a list \(plain Python data: "
                                             r"pd.DataFrame\(data\) first\); expected a pandas "
                                             "DataFrame, a pyarrow Table"):
            bad()



def test_the_audit_takes_the_inputs_publish_takes_and_lgb_and_msa_results(tmp_path):
    # anonset.audit(pub, arrow_table) was a bare pandas ValueError ("DataFrame
    # constructor not properly called!"); an LGB or msa result had no Python
    # audit (anonset.audit refused it, expecting a SetTable): it gets the
    # checks `anonset audit` runs on the release's file
    import pyarrow as pa
    from anonset import lgb as L
    from anonset.audit.html.release import open_release
    from anonset.audit.partition import audit_partition
    from anonset.partition.msa import MSAProblem
    df = frame()
    pub = anonset.publish(df, anonset.Diversity(2), seed=SEED, keep_order=True, **ROLES)
    ref = anonset.audit(pub, df).checks
    inputs = [pa.table(df)]
    pl = pytest.importorskip("polars", reason="polars is not installed")
    inputs.append(pl.from_pandas(df))
    for data in inputs:
        pd.testing.assert_frame_equal(anonset.audit(pub, data).checks, ref)
    part = df.assign(age=np.random.default_rng(2).integers(20, 70, len(df)))
    results = [L.lgb(part, qi=["age", "city"], sensitive=["job"], k=3, l=2, seed=SEED,
                     identifiers=["id"], other=["n"]),
               MSAProblem(part, ["age", "city"], ["job"], identifiers=["id"], drop=["n"]).run(
                   "pca", 3, 0.5, seed=SEED)]
    for res, name in zip(results, ("l.parquet", "m.parquet")):
        res.write(tmp_path / name)
        on_file = audit_partition(open_release(tmp_path / name), part).report
        for data in (part, pa.table(part)):
            rep = anonset.audit(res, data)
            assert rep.verdict == on_file.verdict and rep.conforms
            # (the bucket tables beside a file: a check of the file alone)
            assert set(rep.checks["check"]) == set(on_file.checks["check"]) - {"bucket_tables"}
        with pytest.raises(ValueError, match=r"^attack: applies to a table of random sets"):
            anonset.audit(res, part, attack=True)


def _dictionary_files(tmp_path):
    """A pandas Categorical (ordered, one category unused, five row groups)
    and a column whose row groups carry different dictionaries."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(8)
    n = 900
    df = pd.DataFrame({"id": np.arange(n), "job": rng.choice(list("abcd"), n),
                       "bmi": pd.Categorical(rng.choice(["normal", "over", "obese"], n),
                                             categories=["under", "normal", "over", "obese"],
                                             ordered=True)})
    df.to_parquet(tmp_path / "cat.parquet", row_group_size=200)
    first = pa.DictionaryArray.from_arrays(pa.array(np.resize([0, 1], 300), pa.int8()),
                                           pa.array(["z", "m"]))
    second = pa.DictionaryArray.from_arrays(pa.array(np.resize([0, 1, 2], 240), pa.int8()),
                                            pa.array(["b", "z", "a"]))
    batches = [pa.record_batch([pa.array(np.arange(a, a + len(v))), v,
                                pa.array(rng.choice(list("xy"), len(v)))],
                               names=["id", "bmi", "job"])
               for a, v in ((0, first), (300, second))]
    pq.write_table(pa.Table.from_batches(batches), tmp_path / "dict.parquet",
                   row_group_size=300)
    return {"cat.parquet": ("under", "normal", "over", "obese"),
            "dict.parquet": ("a", "b", "m", "z")}     # unordered: sorted, not as met


def test_a_parquet_categorical_is_the_same_declared_domain_on_every_path(tmp_path, capsys):
    """A pandas Categorical written to Parquet is declared in memory
    (pd.read_parquet gives it back); read block by block, the file's
    dictionary column was a domain read off the data, sorted a-z (another
    domain, other sets, and an inferred-domain warning), and Dask's
    read_parquet gave it unknown (or no) categories, refused as values
    outside a one-value domain.  Now every path reads the categories as
    pandas does: each row group's dictionary, new values appended."""
    import warnings
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset.cli import main
    from anonset.stream import publish_file
    model = anonset.Diversity({"job": 2, "bmi": 3})   # bmi: l = 2 leaves the unheld level a decoy
    kw = dict(identifiers=["id"], sensitive=["job", "bmi"], seed=SEED)
    for name, levels in _dictionary_files(tmp_path).items():
        src = tmp_path / name
        # cat.parquet lists a category nobody holds: declared; every value of
        # dict.parquet's dictionaries is held, as a Categorical made from
        # the data (astype('category')) holds them: read off the data
        inferred = name == "dict.parquet"
        ref = anonset.publish(pd.read_parquet(src), model, **kw)
        assert ref.schema["bmi"].domain == levels and ref.schema["bmi"].inferred == inferred
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = publish_file(src, tmp_path / "out.parquet", model, chunk_rows=170, **kw)
        assert res.schema["bmi"].domain == levels and res.schema["bmi"].inferred == inferred
        assert any("'bmi'" in str(w.message) for w in caught) == inferred, \
            [str(w.message) for w in caught]
        assert anonset.read_parquet(tmp_path / "out.parquet").equals(ref)
        lazy = adask.publish(dd.read_parquet(src), model, scheduler="sync", **kw)
        assert lazy.to_settable(scheduler="sync").equals(ref)
        assert main(["anonymize", str(src), "-o", str(tmp_path / "cli.parquet"), "--l", "2,bmi=3",
                     "--identifier", "id", "--sensitive", "job,bmi",
                     "--seed", SEED]) == 0
        assert anonset.read_parquet(tmp_path / "cli.parquet").equals(ref)
        err = capsys.readouterr().err
        assert ("bmi" in err.split("read off the data")[0][-60:]) == inferred, err
    assert ref.schema["bmi"].kind == "nominal"
    cat = anonset.read_parquet(tmp_path / "out.parquet")
    assert cat.schema["bmi"].kind == "nominal"       # dict.parquet: not ordered


def test_a_polars_categorical_in_a_parquet_file_is_read_off_the_data(tmp_path):
    """Polars writes its Categorical (the values it met) as a dictionary
    column: streamed, as in memory from Polars, its domain counts as read
    off the data."""
    pl = pytest.importorskip("polars", reason="polars is not installed")
    from anonset.stream import publish_file
    df = pl.DataFrame({"id": list(range(40)), "job": list("abcab" * 8)}) \
        .with_columns(pl.col("job").cast(pl.Categorical))
    df.write_parquet(tmp_path / "pl.parquet")
    kw = dict(identifiers=["id"], sensitive=["job"], seed=SEED)
    ref = anonset.publish(df, anonset.Diversity(2), **kw)
    res = publish_file(tmp_path / "pl.parquet", tmp_path / "out.parquet", anonset.Diversity(2),
                       **kw)
    assert ref.schema["job"].inferred and res.schema["job"].inferred
    assert anonset.read_parquet(tmp_path / "out.parquet").equals(ref)


def test_a_named_index_is_a_column_on_every_path(tmp_path, capsys):
    """A frame indexed by person id (``set_index('pid')``), written to
    Parquet by pandas: in memory and on Dask the index was dropped without
    a word, streamed the same file showed 'pid' as a column that needs a
    role, and with `--identifier pid` the command line failed with the bare
    message "pid" (its blocks held it as the index).  A named index is now a
    column after the others on every path (a role is required, the outputs
    are equal); an unnamed index (row labels, pandas' '__index_level_0__'
    in a file) is never published and needs no role."""
    from anonset import cli
    from anonset.stream import publish_file
    df = frame().assign(pid=lambda f: [f"P{i:04d}" for i in f["id"]]).drop(columns="id") \
        .set_index("pid")
    df.to_parquet(tmp_path / "ix.parquet")
    kw = dict(sensitive=["job", "city"], other=["n"], domains={"job": list("abcd")},
              seed=SEED)
    with pytest.raises(ValueError, match=r"1 column has no role: 'pid'"):
        anonset.publish(df, anonset.Diversity(2), **kw)
    with pytest.raises(ValueError, match=r"1 column has no role: 'pid'"):
        publish_file(tmp_path / "ix.parquet", tmp_path / "o.parquet", anonset.Diversity(2), **kw)
    ref = anonset.publish(df, anonset.Diversity(2), identifiers=["pid"], **kw)
    assert ref.equals(anonset.publish(pd.read_parquet(tmp_path / "ix.parquet"),
                                      anonset.Diversity(2), identifiers=["pid"], **kw))
    publish_file(tmp_path / "ix.parquet", tmp_path / "o.parquet", anonset.Diversity(2),
                 identifiers=["pid"], chunk_rows=25, **kw)
    assert anonset.read_parquet(tmp_path / "o.parquet").equals(ref)
    assert cli.main(["anonymize", str(tmp_path / "ix.parquet"), "-o", str(tmp_path / "c.parquet"),
                     "--sensitive", "job,city", "--other", "n", "--identifier", "pid",
                     "--l", "2", "-q"]) == 0, capsys.readouterr().err
    # an unnamed index of row labels (rows filtered out): no role, not published
    part = frame().query("n > 2")
    part.to_parquet(tmp_path / "filtered.parquet")
    kw = dict(kw, identifiers=["id"])
    ref = anonset.publish(part, anonset.Diversity(2), **kw)
    publish_file(tmp_path / "filtered.parquet", tmp_path / "f.parquet", anonset.Diversity(2),
                 chunk_rows=25, **kw)
    assert anonset.read_parquet(tmp_path / "f.parquet").equals(ref)
    with pytest.raises(ValueError, match=r"^data: has an index named 'job', as one of its "):
        anonset.publish(frame().set_index(pd.Index([f"r{i}" for i in range(60)], name="job")),
                        anonset.Diversity(2), **kw)
    # a named range of row numbers: row labels too (a file keeps only its range)
    ranged = frame().set_index(pd.RangeIndex(60, name="row"))
    assert anonset.publish(ranged, anonset.Diversity(2), **kw).equals(
        anonset.publish(frame(), anonset.Diversity(2), **kw))
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    ddf = dd.read_parquet(tmp_path / "ix.parquet")
    assert ddf._meta.index.name == "pid"
    kw = dict(kw, identifiers=["pid"])
    ref = anonset.publish(df, anonset.Diversity(2), **kw)
    got = adask.publish(ddf, anonset.Diversity(2), scheduler="sync", **kw)
    assert got.to_settable(scheduler="sync").equals(ref)


def test_an_integer_index_read_by_dask_from_parquet_needs_a_role(tmp_path):
    """H63: ``dd.read_parquet`` describes a file's integer index column
    'pid' as an empty RangeIndex (its partitions hold the ids), so Dask took
    the person ids for row numbers: left out with no role asked for, and a
    panel (each person twice) published with independent sets per wave,
    where memory and the streamed path refuse the unnamed column and then the
    shared identifier.  The partitions are now asked; a named range of row
    numbers stays row labels on Dask as in memory."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    rng = np.random.default_rng(5)
    panel = pd.DataFrame({"pid": np.repeat(np.arange(100) + 1000, 2),
                          "job": rng.choice(list("abcd"), 200),
                          "city": rng.choice(list("xyz"), 200)}).set_index("pid")
    panel.to_parquet(tmp_path / "panel.parquet")
    ddf = dd.read_parquet(tmp_path / "panel.parquet")
    kw = dict(sensitive=["job"], exact=["city"], seed=SEED, scheduler="sync")
    with pytest.raises(anonset.InputError, match=r"^1 column has no role: 'pid'"):
        adask.publish(ddf, anonset.Diversity(2), **kw)
    with pytest.raises(anonset.InputError, match=r"column 'pid': is an identifier whose values "
                                                 r"200 rows share"):
        adask.publish(ddf, anonset.Diversity(2), identifiers=["pid"], **kw)
    once = panel.iloc[::2]
    once.to_parquet(tmp_path / "once.parquet")
    kw.pop("scheduler")
    ref = anonset.publish(once, anonset.Diversity(2), identifiers=["pid"], **kw)
    got = adask.publish(dd.read_parquet(tmp_path / "once.parquet"), anonset.Diversity(2),
                        identifiers=["pid"], scheduler="sync", **kw)
    assert got.to_settable(scheduler="sync").equals(ref)
    ranged = once.reset_index(drop=True).set_index(pd.RangeIndex(100, name="row"))
    got = adask.publish(dd.from_pandas(ranged, npartitions=3), anonset.Diversity(2),
                        scheduler="sync", **kw)
    assert got.to_settable(scheduler="sync").equals(
        anonset.publish(ranged, anonset.Diversity(2), **kw))


def test_a_column_name_with_a_comma_can_be_named_on_the_command_line(tmp_path, capsys):
    """A French survey's 'Revenu, annuel' could not be named in any
    comma-separated list ('--drop: names 'Revenu''), so the file could not
    be published from the command line at all.  A comma inside a name or a
    value is written \\, (every list: roles, --l COL=..., --ground, inline
    domains, config strings), and the refusal of a name that is not a column
    says so where a column's name holds a comma."""
    from anonset.cli import main
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"Age (years)": rng.integers(18, 90, n),
                       "État civil": rng.choice(["marié", "célibataire", "divorcé"], n),
                       "Revenu, annuel": rng.choice(["<10,000", "10,000+"], n)})
    src = tmp_path / "fr.csv"
    df.to_csv(src, index=False)
    base = ["anonymize", str(src), "-o", str(tmp_path / "o.parquet"), "--exact", "Age (years)"]
    capsys.readouterr()
    assert main(base + ["--sensitive", "État civil", "--drop", "Revenu, annuel", "--l",
                        "2"]) == 2
    err = capsys.readouterr().err
    assert "--drop: names 'Revenu', which is not a column of the data" in err
    assert err.rstrip().endswith("(on the command line, a comma inside a name is written \\, "
                                 "as in 'Revenu\\, annuel')")
    assert not (tmp_path / "o.parquet").exists()
    assert main(base + ["--sensitive", "État civil,Revenu\\, annuel",
                        "--l", "État civil=2,Revenu\\, annuel=2",
                        "--domain", "Revenu\\, annuel=<10\\,000,10\\,000+", "-q"]) == 0
    pub = anonset.read_parquet(tmp_path / "o.parquet")
    assert pub.schema["Revenu, annuel"].domain == ("<10,000", "10,000+")
    assert not pub.schema["Revenu, annuel"].inferred
    assert pub.params["Revenu, annuel"].l == 2
    # semantic-anonymize's one sensitive column is written alike (H66: it
    # was taken as written, backslash and all, beside its unescaped
    # --allow-rare)
    assert main(["semantic-anonymize", str(src), "-o", str(tmp_path / "s.parquet"),
                 "--sensitive", "Revenu\\, annuel", "--l", "2", "--d", "1",
                 "--domain", "<10\\,000,10\\,000+", "--qids", "Age (years)",
                 "--drop", "État civil", "--allow-rare", "Revenu\\, annuel", "-q"]) == 0, \
        capsys.readouterr().err
    assert anonset.read_parquet(tmp_path / "s.parquet").names[-1] == "Revenu, annuel"


def test_nested_and_binary_pass_through_columns_publish_to_parquet_and_are_refused_in_csv(
        tmp_path, capsys):
    """A Parquet file's list, struct and binary columns passed through (as
    the refusal of them as sensitive suggests): publishing crashed with
    "unhashable type: 'numpy.ndarray'" in the pass-through check, and so
    did the audit with the original; msa and lgb wrote "[1 2]" (numpy's
    text of the array, with '...' inside a long one) into a CSV.  They now
    publish to Parquet as they are, the audit runs, and a CSV output is
    refused with one line naming the column, nothing written."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    from anonset.cli import main
    rng = np.random.default_rng(3)
    n = 240
    tags = [list(range(int(k))) for k in rng.integers(0, 4, n)]
    table = pa.table({"age": rng.integers(20, 60, n), "job": rng.choice(list("abcd"), n),
                      "tags": tags, "st": [{"x": int(k)} for k in rng.integers(0, 3, n)],
                      "raw": [bytes([int(k)]) for k in rng.integers(0, 3, n)]})
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    for col in ("tags", "st", "raw"):
        drop = ",".join(c for c in ("tags", "st", "raw") if c != col)
        args = ["anonymize", str(src), "--sensitive", "job", "--exact", "age", "--other", col,
                "--drop", drop, "--l", "2", "-q"]
        assert main(args + ["-o", str(tmp_path / "o.parquet")]) == 0, capsys.readouterr().err
        back = pq.read_table(tmp_path / "o.parquet").column(col).to_pylist()
        assert sorted(map(repr, back)) == sorted(map(repr, table.column(col).to_pylist()))
        capsys.readouterr()
        assert main(["audit", str(tmp_path / "o.parquet"), "--original", str(src)]) == 0
        assert capsys.readouterr().out.startswith("anonset audit of 240 rows")
        assert main(args + ["-o", str(tmp_path / "o.csv")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"o.csv': column '{col}': holds " in err, err
        assert "which a CSV file cannot hold as they are; expected a Parquet output" in err
        assert not (tmp_path / "o.csv").exists()
        assert not (tmp_path / "o.csv.anonset.json").exists()
    # in memory alike
    df = table.to_pandas()
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], exact=["age"],
                          other=["tags"], drop=["st", "raw"])
    with pytest.raises(anonset.InputError, match=r"column 'tags': holds nested values \(e\.g\. "):
        pub.to_csv(tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()
    # the partition publishers' CSV outputs
    for cmd in (["msa-anonymize", "--qi", "age", "--sa", "job", "--k", "5", "--t", "0.5"],
                ["lgb", "--qi", "age", "--sensitive", "job", "--k", "3", "--l", "2"]):
        base = [cmd[0], str(src), *cmd[1:], "--other", "tags", "--drop", "st,raw", "-q"]
        assert main(base + ["-o", str(tmp_path / "p.parquet")]) == 0, capsys.readouterr().err
        assert main(base + ["-o", str(tmp_path / "p.csv")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "column 'tags': holds nested values" in err, err
        assert not list(tmp_path.glob("p.csv*")) and not list(tmp_path.glob("p.*.csv"))


def test_exotic_parquet_types_are_published_or_refused_in_one_line(tmp_path, capsys):
    """A sweep of Parquet types over every role and the three publishing
    commands crashed with a traceback on three: an unsigned 64-bit column
    above 2^63 as sensitive or exact (an OverflowError in the code lookup),
    an Arrow null column passed through (an IndexError in the order check),
    and an Arrow map (which pandas reads as lists of pairs) as an msa or lgb
    attribute or passed through (unhashable lists; a Parquet writer that
    could not store the pairs).  Each is now published or refused with one
    line naming the column; nothing is written when refused."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    from anonset.cli import main
    rng = np.random.default_rng(0)
    n = 90
    cols = {"u64": pa.array(rng.integers(0, 4, n).astype(np.uint64) + np.uint64(2 ** 63)),
            "nulls": pa.nulls(n),
            "map": pa.array([[("k", int(v))] for v in rng.integers(0, 3, n)],
                            pa.map_(pa.string(), pa.int64()))}
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"job": rng.choice(list("abcd"), n), "age": rng.integers(20, 60, n),
                             **cols}), src)
    out = tmp_path / "o.parquet"

    def run(*args, drop_all_but=None):
        drop = ",".join(c for c in cols if c != drop_all_but)
        capsys.readouterr()
        rc = main([args[0], str(src), "-o", str(out), *args[1:], "--drop", drop, "-q"])
        err = capsys.readouterr().err
        assert "Traceback" not in err and (rc == 0 or err.count("\n") == 1), err
        assert rc == 0 or not out.exists()
        if out.exists():
            out.unlink()
        return rc, err

    sens = ("anonymize", "--sensitive", "job,u64", "--exact", "age", "--l", "2")
    rc, err = run(*sens, drop_all_but="u64")
    assert rc == 2 and "column 'u64': holds integers beyond 64-bit signed range" in err
    rc, err = run("anonymize", "--sensitive", "job", "--exact", "age,u64", "--l", "2",
                  drop_all_but="u64")
    assert rc == 2 and "column 'u64': holds integers beyond 64-bit signed range" in err
    for cmd in (("anonymize", "--sensitive", "job", "--exact", "age", "--l", "2"),
                ("msa-anonymize", "--qi", "age", "--sa", "job", "--k", "3", "--t", "0.5"),
                ("lgb", "--qi", "age", "--sensitive", "job", "--k", "3", "--l", "2")):
        rc, err = run(*cmd, "--other", "nulls", drop_all_but="nulls")
        assert rc == 0, err
        rc, err = run(*cmd, "--other", "map", drop_all_but="map")
        assert rc == 2 and f"'{out}': column 'map': holds values Parquet cannot store as " \
                           "they are read" in err, err
    rc, err = run("msa-anonymize", "--qi", "age", "--sa", "job,map", "--k", "3", "--t", "0.5",
                  drop_all_but="map")
    assert rc == 2 and "column 'map': holds nested values (e.g. [('k', " in err
    rc, err = run("lgb", "--qi", "age,map", "--sensitive", "job", "--k", "3", "--l", "2",
                  drop_all_but="map")
    assert rc == 2 and "column 'map': holds nested values" in err


def test_names_given_as_a_set_give_one_release_per_key_in_every_run():
    """LGB's and msa's quasi-identifiers given as a set: the set's order
    changes from one Python run to the next (text is hashed anew), and with
    it which attribute a tie splits on, so one key gave another release in
    the next run (measured: four releases in five runs).  A set's names are
    taken sorted."""
    import subprocess
    import sys
    code = (
        "import hashlib, numpy as np, pandas as pd, anonset\n"
        "from anonset.partition.msa import MSAProblem\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame({c: rng.integers(0, 50, 300) for c in 'abc'})\n"
        "df['s'] = rng.choice(list('pqrstu'), 300)\n"
        f"key = {SEED!r}\n"
        "r = anonset.lgb.lgb(df, qi={'a', 'b', 'c'}, sensitive=['s'], k=4, l=2, seed=key)\n"
        "m = MSAProblem(df, {'a', 'b', 'c'}, ['s']).run('pca', 4, 0.5, seed=key)\n"
        "print(hashlib.sha256(r.table.to_csv().encode() + "
        "m.generalized().to_csv().encode()).hexdigest())\n")
    import os
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout
            for h in (1, 2, 4, 5)}
    assert len(outs) == 1, outs


def test_dates_decimals_and_complex_numbers_are_refused_alike_by_every_publisher():
    """publish refused them; msa generalized a date QI to '*' for every row,
    lgb named a hierarchy nobody gave, and both ranged complex numbers."""
    import datetime as dt
    import decimal

    from anonset.lgb import lgb
    from anonset.msa import anonymize_msa
    n = 60
    rng = np.random.default_rng(0)
    base = pd.DataFrame({"q": rng.integers(0, 5, n), "s": rng.choice(list("abc"), n),
                         "s2": rng.choice(list("xyz"), n)})
    cols = {"holds dates or times": pd.Series(pd.date_range("2020-01-01", periods=n)),
            "holds dates or times ": pd.Series([dt.date(2020, 1, 1 + i % 28) for i in range(n)]),
            "holds decimal numbers": pd.Series([decimal.Decimal(i % 7) for i in range(n)]),
            "holds complex numbers": pd.Series(np.arange(n) % 5 + 1j)}
    for needle, col in cols.items():
        df = base.assign(d=col)
        for call in (lambda: anonymize_msa(df, ["q", "d"], ["s", "s2"], 3, 0.6),
                     lambda: lgb(df.drop(columns=["s2"]), qi=["q", "d"], sensitive=["s"], k=3,
                                 l=2),
                     lambda: anonset.publish(df, anonset.Diversity(2), sensitive=["s", "d"],
                                             drop=["q", "s2"])):
            with pytest.raises(anonset.InputError, match="^column 'd': " + needle.strip()):
                call()


def test_a_named_range_index_is_row_labels_as_parquet_keeps_it():
    """README: a named index is a column, but a RangeIndex (named or not) is
    row labels, as pandas writes it to Parquet (metadata, not a column)."""
    df = pd.DataFrame({"job": list("abcabc") * 10})
    df.index = pd.RangeIndex(1, 61, name="rownames")
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"])
    assert "rownames" not in pub.to_pandas().columns and pub.schema.names == ["job"]
    named = df.set_index(pd.Index(np.random.default_rng(1).permutation(60), name="serial"))
    with pytest.raises(anonset.InputError, match="serial"):
        anonset.publish(named, anonset.Diversity(2), sensitive=["job"])


def test_a_csv_header_with_a_line_break_in_a_quoted_name_is_read(tmp_path):
    """H66: pandas writes a column named 'note\\nx' as a quoted field over two
    lines; the reader skipped one line for the header, not one CSV row, and
    refused the file as ragged.  It now reads as the Parquet file does."""
    from anonset.stream import publish_file
    rng = np.random.default_rng(0)
    n = 50
    df = pd.DataFrame({"id": range(n), "a": rng.choice(list("abc"), n),
                       "b": rng.choice(list("xyz"), n), "note\nx": rng.choice(list("mn"), n)})
    df.to_csv(tmp_path / "nl.csv", index=False)
    df.to_parquet(tmp_path / "nl.parquet")
    kw = dict(identifiers=["id"], sensitive=["a", "b"], other=["note\nx"],
              domains={"a": list("abc"), "b": list("xyz")}, seed=SEED, allow_clear=["a", "b"])
    for src in ("nl.csv", "nl.parquet"):
        publish_file(tmp_path / src, tmp_path / "o.parquet", anonset.Diversity(2),
                     chunk_rows=20, **kw)
        got = anonset.read_parquet(tmp_path / "o.parquet")
        assert got.n_rows == n and sorted(got.other["note\nx"].astype(str)) == \
            sorted(df["note\nx"])


def test_a_repeated_column_name_is_refused_from_every_kind_of_table():
    """H69: an Arrow table (or a DuckDB relation, a reader) with an integer
    column named twice that holds a null failed with AttributeError where
    pandas gave the refusal; an audit's or true_crosstab's original with a
    published column twice failed alike."""
    import pyarrow as pa
    age = pa.array([30, None, 41, 52, 30, 41], pa.int64())
    job = pa.array(list("abcabc"))
    table = pa.Table.from_arrays([job, age, age], names=["job", "age", "age"])
    want = r"names the column\(s\) \['age'\] more than once"
    # (the pandas frame made by hand: pyarrow 14's to_pandas refuses the table)
    df = pd.DataFrame(dict(zip("jab", (job.to_pylist(), age.to_pylist(), age.to_pylist()))))
    df.columns = ["job", "age", "age"]
    for data in (table, pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
                 df):
        with pytest.raises(anonset.InputError, match=want):
            anonset.publish(data, anonset.Diversity(2), sensitive=["job"], drop=["age"],
                            seed=SEED)
    df = pd.DataFrame({"job": list("abcabc") * 10})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], seed=SEED)
    twice = pd.concat([df, df], axis=1)
    with pytest.raises(anonset.InputError, match=r"^original: names the column\(s\) \['job'\]"):
        anonset.audit(pub, twice)
    with pytest.raises(anonset.InputError, match=r"names the column\(s\) \['job'\]"):
        anonset.true_crosstab(twice, pub.schema, ["job"])


def test_a_repeated_arrow_column_is_refused_before_pandas_reads_it(monkeypatch):
    """H156: pyarrow 14 (pyproject: pyarrow>=14) converts an Arrow table
    naming a column twice to pandas only with a bare ValueError 'Found
    non-unique column index' (a traceback naming no column), where newer
    pyarrow converts it and the refusal followed; the names are now checked
    first.  Fails before the fix on pyarrow 14; on newer pyarrow a stand-in
    for the conversion raises pyarrow 14's error, so the test means the same
    on every version."""
    import pyarrow as pa
    from anonset.io import tables
    real = tables._batch_to_pandas

    def pyarrow14(table):
        names = table.schema.names
        if len(set(names)) != len(names):
            raise ValueError("Found non-unique column index")
        return real(table)

    monkeypatch.setattr(tables, "_batch_to_pandas", pyarrow14)
    age = pa.array([30, None, 41, 52, 30, 41], pa.int64())
    table = pa.Table.from_arrays([pa.array(list("abcabc")), age, age], names=["job", "age", "age"])
    want = r"names the column\(s\) \['age'\] more than once"
    for data in (table, table.to_batches()[0],
                 pa.RecordBatchReader.from_batches(table.schema, table.to_batches())):
        with pytest.raises(anonset.InputError, match="^" + want):
            anonset.publish(data, anonset.Diversity(2), sensitive=["job"], drop=["age"],
                            seed=SEED)
    pub = anonset.publish(pa.table({"job": list("abcabc") * 10}), anonset.Diversity(2),
                          sensitive=["job"], seed=SEED)
    twice = pa.Table.from_arrays([pa.array(list("abcabc") * 10)] * 2, names=["job", "job"])
    with pytest.raises(anonset.InputError, match=r"^original: names the column\(s\) \['job'\]"):
        anonset.audit(pub, twice)


def test_an_arrow_interval_is_refused_as_dates_or_times():
    """H69: a DuckDB INTERVAL (an Arrow month_day_nano interval, read as a
    pandas DateOffset) was 'values of another type', without the advice a
    duration from pandas, pyarrow or Polars gets."""
    import pyarrow as pa
    iv = pa.array([pa.MonthDayNano([0, d, 0]) for d in range(6)], pa.month_day_nano_interval())
    t = pa.table({"x": iv, "job": list("abcabc")})
    with pytest.raises(anonset.InputError, match=r"^column 'x': holds dates or times"):
        anonset.publish(t, anonset.Diversity(2), sensitive=["x", "job"], seed=SEED)


def test_audit_file_reads_a_table_original_and_names_a_repeated_column(tmp_path):
    """H72: audit_file took a Polars or pyarrow original for a file's name
    (its refusal quoted the table's rows), and a repeated column in a
    Parquet original was refused naming neither the original nor its file;
    as_frame compared str(name), so columns 1 and '1' were 'repeated'."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    df = pd.DataFrame({"job": list("abcabc") * 10, "town": list("xy") * 30})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], exact=["town"],
                          seed=SEED)
    pub.to_parquet(tmp_path / "p.parquet")
    ref = anonset.audit_file(tmp_path / "p.parquet", df)
    got = anonset.audit_file(tmp_path / "p.parquet", pa.Table.from_pandas(df))
    assert got.verdict == ref.verdict
    pq.write_table(pa.table([pa.array(df.job), pa.array(df.town), pa.array(df.job)],
                            names=["job", "town", "job"]), tmp_path / "dup.parquet")
    with pytest.raises(anonset.InputError, match=r"dup\.parquet': names the column\(s\) "
                                                 r"\['job'\] more than once"):
        anonset.audit_file(tmp_path / "p.parquet", tmp_path / "dup.parquet")
    with pytest.raises(anonset.InputError, match=r"^original: names the column\(s\) \['job'\]"):
        anonset.audit_file(tmp_path / "p.parquet", pd.concat([df, df[["job"]]], axis=1))
    with pytest.raises(anonset.InputError, match=r"has an empty or non-text column name 1"):
        anonset.publish(pd.DataFrame({1: list("ab") * 5, "1": list("ab") * 5}),
                        anonset.Diversity(2), sensitive=["1"], seed=SEED)
    # numpy and pandas time values in an object column: dates or times too
    for v in (np.datetime64("2020-01-01"), np.timedelta64(3, "D"), pd.offsets.Day(2)):
        with pytest.raises(anonset.InputError, match=r"column 'x': holds dates or times"):
            anonset.publish(pd.DataFrame({"x": pd.Series([v] * 6, dtype=object),
                                          "job": list("abcabc")}),
                            anonset.Diversity(2), sensitive=["x", "job"], seed=SEED)


def test_dask_keeps_an_ordered_categorical_beside_a_polars_enum(tmp_path):
    """H74: read with categories=[...], Dask describes every categorical by
    its placeholder category, which a Polars Enum put among the Enums'
    categories; an ordered pandas Categorical in the same file then matched
    and was made unordered on Dask only."""
    pl = pytest.importorskip("polars", reason="polars is not installed")
    dd = pytest.importorskip("dask.dataframe")
    import pyarrow as pa
    import pyarrow.parquet as pq
    from anonset import dask as adask
    rng = np.random.default_rng(0)
    n = 600
    levels = ["low", "mid", "high"]
    pl.DataFrame({"team": pl.Series(rng.choice(levels, n), dtype=pl.Enum(levels))}) \
        .write_parquet(tmp_path / "e0.parquet")
    grade = pd.Categorical(rng.choice(levels, n, p=[0.6, 0.3, 0.1]), categories=levels,
                           ordered=True)
    pq.write_table(pq.read_table(tmp_path / "e0.parquet").append_column("grade", pa.array(grade)),
                   tmp_path / "e.parquet")
    kw = dict(sensitive=["grade"], other=["team"], seed=SEED)
    ref = anonset.publish(pq.read_table(tmp_path / "e.parquet"), anonset.Closeness(0.15), **kw)
    assert ref.params["grade"].ground == "ordered"
    for how in ({}, {"categories": ["team", "grade"]}):
        got = adask.publish(dd.read_parquet(tmp_path / "e.parquet", **how), anonset.Closeness(0.15),
                            scheduler="sync", **kw)
        assert got.params["grade"].ground == "ordered", how


def _survey(sep: str = ";") -> str:
    """A spreadsheet's export set to a decimal comma: whole wages as '25',
    a sixth of the rows with a fraction as '23,5' (H138)."""
    import random
    rng = random.Random(1)
    lines = [sep.join(["id", "sex", "wage"])]
    for i in range(300):
        w, sex = rng.randrange(5, 45), rng.choice("MF")
        lines.append(sep.join([f"p{i}", sex, f"{w},5" if i % 3 == 0 and w < 25 else str(w)]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("sep", [";", "\t"])
@pytest.mark.parametrize("cmd", ["anonymize", "lgb", "msa-anonymize"])
def test_a_few_decimal_commas_among_whole_numbers_are_refused(tmp_path, capsys, cmd, sep):
    """Where fewer than half the distinct values had a fraction, a
    ';'-separated column of '25' and '23,5' was published as text labels
    (the 'equal' distance; lgb and msa generalized it to '*'), although the
    docs say it is refused with the conversion to run (H138).  A file not
    separated by commas writes no list of numbers with a comma unquoted: its
    numbers with a comma are refused, whatever their share."""
    from anonset import cli
    from anonset.stream import publish_file
    src = tmp_path / "survey.csv"
    src.write_text(_survey(sep))
    out = tmp_path / "o.csv"
    args = {"anonymize": ["--exact", "sex", "--sensitive", "wage", "--t", "0.3",
                          "--allow-rare", "wage"],
            "lgb": ["--qi", "wage", "--sensitive", "sex", "--k", "5", "--t", "sex=0.3"],
            "msa-anonymize": ["--qi", "wage", "--sa", "sex", "--k", "5", "--t", "0.5"]}[cmd]
    assert cli.main([cmd, str(src), "-o", str(out), "--identifier", "id", *args, "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "survey.csv': column 'wage': holds numbers written with a " \
           "comma ('" in err and ": a decimal comma)" in err, err
    assert f"pandas.read_csv(path, sep={sep!r}, decimal=',')" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]
    if cmd == "anonymize":             # streamed in blocks: the same refusal
        with pytest.raises(ValueError) as e:
            publish_file(src, out, anonset.Closeness(0.3), identifiers=["id"], exact=["sex"],
                         sensitive=["wage"], allow_rare=["wage"], chunk_rows=7)
        assert "holds numbers written with a comma" in str(e.value)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


def test_a_few_comma_labels_among_text_are_text_in_a_semicolon_file(tmp_path, capsys):
    """The rule for ';' files refuses numbers only: a column of labels, a
    few of which are '4,6', is published as text."""
    from anonset import cli
    rng = np.random.default_rng(3)
    vals = list(rng.choice(["low", "mid", "high", "12", "30"], 200)) + ["4,6", "1,2"] * 10
    lines = ["id;sex;band"] + [f"p{i};{'MF'[i % 2]};{v}" for i, v in enumerate(vals)]
    (tmp_path / "b.csv").write_text("\n".join(lines) + "\n")
    assert cli.main(["anonymize", str(tmp_path / "b.csv"), "-o", str(tmp_path / "o.csv"),
                     "--identifier", "id", "--exact", "sex", "--sensitive", "band", "--l", "2",
                     "--allow-rare", "band", "-q"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("bins", [True, False])
def test_thousands_separators_are_named_with_a_conversion_that_runs(tmp_path, capsys, bins):
    """'33,000' in a comma-separated file was called a decimal comma, with
    pandas.read_csv(path, sep=';', decimal=','), which reads that file as
    one column (H138).  The refusal names thousands separators and the
    conversion for the file's separator; following it, the file is read."""
    import re
    from anonset import cli
    rng = np.random.default_rng(2)
    rows = ["id,sex,income"] + [f'p{i},{"MF"[i % 2]},"{int(v) * 1000:,}"'
                                for i, v in enumerate(rng.integers(10, 200, 200))]
    src = tmp_path / "inc.csv"
    src.write_text("\n".join(rows) + "\n")
    base = ["--identifier", "id", "--exact", "sex", "--sensitive", "income", "--l", "2"]
    extra = ["--bins", "income=0:50000:100000:1000000"] if bins else ["--allow-rare", "income"]
    assert cli.main(["anonymize", str(src), "-o", str(tmp_path / "o.csv"), *base, *extra,
                     "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "thousands separators" in err and "decimal comma" not in err, err
    m = re.search(r"pandas\.read_csv\(path, [^)]*\)", err)
    assert m and m.group(0) == "pandas.read_csv(path, thousands=',')", err
    conv = eval(m.group(0).replace("path", repr(str(src))), {"pandas": pd})
    conv.to_csv(tmp_path / "conv.csv", index=False)
    assert cli.main(["anonymize", str(tmp_path / "conv.csv"), "-o", str(tmp_path / "o.csv"),
                     *base, *extra, "-q"]) == 0, capsys.readouterr().err


def test_comma_advice_matches_the_separator_and_the_kind_of_comma():
    from anonset.validate import comma_conversion, comma_kind, numbers_expected
    assert comma_kind(["33,000", "120,000"], ",") == "thousands"
    assert comma_kind(["33,000", "23,5"], ",") == "decimal"
    assert comma_kind(["1,234"], ";") == "decimal"
    assert comma_kind(["1,234,567"], ";") == "thousands"
    assert comma_kind(["1,234.5"], ";") == "thousands"
    assert comma_conversion("decimal", ";") == "pandas.read_csv(path, sep=';', decimal=',')"
    assert comma_conversion("decimal", "\t") == "pandas.read_csv(path, sep='\\t', decimal=',')"
    assert comma_conversion("decimal", ",") == "pandas.read_csv(path, decimal=',')"
    assert comma_conversion("thousands", "|") == "pandas.read_csv(path, sep='|', thousands=',')"
    assert "decimal comma" in numbers_expected("3,5") and "sep=';'" in numbers_expected("3,5")
    assert "thousands separators" in numbers_expected("33,000", ",")
    assert numbers_expected("abc") == "numbers"
