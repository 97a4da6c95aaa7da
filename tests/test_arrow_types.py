"""Arrow types the three paths must take alike (user trial, 2026-11-29)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset.stream import publish_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

R = dict(identifiers=["id"], sensitive=["job", "city"], seed="research", research_seed=True,
         domains={"job": list("abcd"), "city": list("xyz")})


def _frame(n=60):
    return pd.DataFrame({"id": range(n), "job": np.resize(list("abcd"), n),
                         "city": np.resize(list("xyz"), n)})


def test_bytes_that_are_not_utf8_pass_through_on_every_path(tmp_path):
    """A binary pass-through column (hashes, thumbnails): the order check
    decoded it as UTF-8 and raised UnicodeDecodeError on every path; Dask's
    string conversion turned it into text."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    t = pa.Table.from_pandas(_frame(), preserve_index=False).append_column(
        "blob", pa.array([bytes([200 + i % 3]) for i in range(60)], pa.binary()))
    pq.write_table(t, tmp_path / "in.parquet")
    kw = dict(R, other=["blob"], allow_recode=["blob"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = anonset.publish(pd.read_parquet(tmp_path / "in.parquet"), anonset.Diversity(2),
                              **kw)
        publish_file(tmp_path / "in.parquet", tmp_path / "s.parquet", anonset.Diversity(2),
                     chunk_rows=17, **kw)
        adask.publish(dd.read_parquet(tmp_path / "in.parquet"), anonset.Diversity(2),
                      scheduler="sync", **kw).to_parquet(tmp_path / "d.parquet",
                                                         scheduler="sync")
    for out in ("s.parquet", "d.parquet"):
        got = pq.read_table(tmp_path / out)
        assert got.schema.field("blob").type == pa.binary(), out
        assert got.column("blob").to_pylist() == mem.other["blob"].tolist(), out


def test_dask_keeps_lists_and_times_as_memory_does(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    t = pa.Table.from_pandas(_frame(), preserve_index=False)
    t = t.append_column("tags", pa.array([[i % 4, 1] for i in range(60)], pa.list_(pa.int64())))
    t = t.append_column("at", pa.array([i % 5 * 10**6 for i in range(60)], pa.time64("us")))
    pq.write_table(t, tmp_path / "in.parquet")
    kw = dict(R, other=["tags", "at"], allow_recode=["tags", "at"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = anonset.publish(pd.read_parquet(tmp_path / "in.parquet"), anonset.Diversity(2),
                              **kw)
        mem.to_parquet(tmp_path / "m.parquet")
        adask.publish(dd.read_parquet(tmp_path / "in.parquet"), anonset.Diversity(2),
                      scheduler="sync", **kw).to_parquet(tmp_path / "d.parquet",
                                                         scheduler="sync")
    m, d = pq.read_table(tmp_path / "m.parquet"), pq.read_table(tmp_path / "d.parquet")
    for c in ("tags", "at"):
        assert d.schema.field(c).type == m.schema.field(c).type, c
        assert d.column(c).to_pylist() == m.column(c).to_pylist(), c


def test_a_parquet_file_pandas_wrote_from_an_arrow_dictionary_streams(tmp_path):
    """pandas writes an ArrowDtype(dictionary) column's dtype into the
    file's metadata but cannot rebuild it per batch: the streamed path
    raised a TypeError (a traceback, exit 1 on the command line)."""
    df = _frame()
    df["job"] = pd.Series(pa.array(df.job).dictionary_encode(),
                          dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())))
    df.to_parquet(tmp_path / "in.parquet", index=False)
    mem = anonset.publish(df, anonset.Diversity(2), **R)
    res = publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet", anonset.Diversity(2),
                       chunk_rows=25, **R)
    got = anonset.read_parquet(tmp_path / "o.parquet")
    assert got.sets("job") == mem.sets("job") and got.sets("city") == mem.sets("city")
    assert res is not None


def test_a_parquet_dictionary_file_streams_under_pandas_2(tmp_path, monkeypatch):
    """H156: under pandas 2.x (pyproject: pandas>=2.0) the dictionary dtype a
    file's pandas metadata names is refused by NumPy with a ValueError
    ('format number 1 of "dictionary<...>[pyarrow]" is not recognized';
    pandas 3 raises TypeError), which the streamed path let through: exit 2
    naming no file or column, a traceback from publish_file.  Fails before
    the fix on pandas 2.x; on pandas 3 a stand-in raises pandas 2's error,
    so the test means the same on every version.  Another ValueError is
    not taken for it."""
    from anonset.io import tables
    df = _frame()
    df["job"] = pd.Series(pa.array(df.job).dictionary_encode(),
                          dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())))
    df.to_parquet(tmp_path / "in.parquet", index=False)
    mem = anonset.publish(df, anonset.Diversity(2), **R)
    real = tables.arrow_frame
    said = 'format number 1 of "dictionary<values=string, indices=int32, ordered=0>[pyarrow]"'

    def pandas2(batch, **kw):
        if not kw.get("ignore_metadata") and b"pandas" in (batch.schema.metadata or {}) \
                and any(pa.types.is_dictionary(f.type) for f in batch.schema):
            raise ValueError(f"{said} is not recognized")
        return real(batch, **kw)

    monkeypatch.setattr(tables, "arrow_frame", pandas2)
    publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet", anonset.Diversity(2),
                 chunk_rows=25, **R)
    got = anonset.read_parquet(tmp_path / "o.parquet")
    assert got.sets("job") == mem.sets("job") and got.sets("city") == mem.sets("city")

    def other(batch, **kw):
        raise ValueError("some other failure")

    monkeypatch.setattr(tables, "arrow_frame", other)
    batch = next(pq.ParquetFile(tmp_path / "in.parquet").iter_batches())
    with pytest.raises(ValueError, match="some other failure"):
        tables._batch_to_pandas(batch)


def test_a_declared_value_that_looks_missing_is_a_value_in_csv(tmp_path):
    """'NA' (North America) in a declared domain: memory and Parquet
    published it; a CSV refused it as missing, or with missing='category'
    published its rows as the missing token."""
    df = pd.DataFrame({"id": range(40), "continent": np.resize(["NA", "EU", "AS", "AF"], 40),
                       "job": np.resize(list("abcde"), 40)})
    df.to_csv(tmp_path / "c.csv", index=False)
    kw = dict(identifiers=["id"], sensitive=["continent", "job"], seed="research",
              research_seed=True, domains={"continent": ["NA", "EU", "AS", "AF"],
                                           "job": list("abcde")})
    mem = anonset.publish(df, anonset.Diversity(2), **kw)
    publish_file(tmp_path / "c.csv", tmp_path / "o.parquet", anonset.Diversity(2),
                 chunk_rows=15, **kw)
    got = anonset.read_parquet(tmp_path / "o.parquet")
    assert got.sets("continent") == mem.sets("continent")
    assert got.info["missing"] == {"policy": "error"}


def test_integers_with_nulls_from_arrow_stay_integers(tmp_path):
    """A Parquet file that pyarrow (Spark, DuckDB, Polars) wrote, or an
    Arrow table: its int64 columns with nulls became floats (a pass-through
    zip published as 94110.0; codes above 2^53 changed and merged)."""
    big = [2**53 + 1, 2**53 + 2, 2**53 + 3]
    n = 60
    t = pa.table({"id": list(range(n)), "job": list(np.resize(list("abcd"), n)),
                  "zip": [None if i % 7 == 0 else 94110 + i % 3 for i in range(n)],
                  "code": [None if i % 5 == 0 else big[i % 3] for i in range(n)]})
    pq.write_table(t, tmp_path / "in.parquet")
    kw = dict(identifiers=["id"], sensitive=["job", "code"], other=["zip"], seed="research",
              research_seed=True, domains={"job": list("abcd")}, missing="category",
              allow_recode=["zip"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = anonset.publish(t, anonset.Diversity(2), **kw)
        publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet", anonset.Diversity(2),
                     chunk_rows=16, **kw)
    assert str(mem.other["zip"].dtype) == "Int64"
    assert set(mem.schema["code"].domain) == {*big, "?"}
    back = anonset.read_parquet(tmp_path / "o.parquet")
    assert str(back.other["zip"].dtype) == "Int64"
    assert back.equals(mem)


def _ref(frame, **kw):
    return anonset.publish(frame, anonset.Diversity(2), **{**R, **kw})


def test_big_endian_columns_are_read_as_their_values(tmp_path):
    """H135: a big-endian NumPy column (``np.fromfile(f, '>i8')``, FITS,
    network order) raised pandas' 'Big-endian buffer not supported' from
    every in-memory publisher, where Dask published it; each is now read as
    the same values in native order, on every path."""
    df = _frame().assign(n=lambda f: (f.id % 7).astype(">i8"), w=lambda f: (f.id % 5 / 4).astype(">f8"))
    native = df.assign(n=df.n.astype("<i8"), w=df.w.astype("<f8"))
    kw = dict(other=["w"], sensitive=["job", "city", "n"])
    ref = _ref(native, **kw)
    assert _ref(df, **kw).equals(ref)
    assert df.n.dtype.byteorder == ">"                  # the input is left as it was
    sem = dict(l=2, d=1, qids=["job"], identifiers=["id"], drop=["city", "w"],
               seed="research", research_seed=True)
    from anonset import semantic as S
    assert S.semantic_publish(df, "n", **sem).equals(S.semantic_publish(native, "n", **sem))
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    got = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                        scheduler="sync", **{**R, **kw})
    assert got.to_settable(scheduler="sync").equals(ref)


def test_dask_selects_no_column_of_a_big_endian_block(monkeypatch):
    """H156: under pandas 2.x (pyproject: pandas>=2.0) selecting columns of
    a frame that holds a big-endian column raises pandas' bare 'Big-endian
    buffer not supported on little-endian compiler', and anonset.dask.publish
    selected columns before any partition was read in native order: a
    traceback (pandas 3 takes such columns).  Fails before the fix on pandas
    2.x (the test above, too); on pandas 3 a stand-in for Dask's selection
    raises pandas 2's error where the selection meets a big-endian column,
    so the test means the same on every version."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    df = _frame().assign(n=lambda f: (f.id % 7).astype(">i8"))
    kw = dict(R, sensitive=["job", "city", "n"])
    ref = anonset.publish(df.assign(n=df.n.astype("<i8")), anonset.Diversity(2), **kw)
    real = dd.DataFrame.__getitem__

    def pandas2(self, key):
        got = real(self, key)
        meta = getattr(got, "_meta", None)
        dtypes = meta.dtypes if isinstance(meta, pd.DataFrame) else [getattr(meta, "dtype", None)]
        if any(isinstance(t, np.dtype) and not t.isnative for t in dtypes):
            raise ValueError("Big-endian buffer not supported on little-endian compiler")
        return got

    monkeypatch.setattr(dd.DataFrame, "__getitem__", pandas2)
    got = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                        scheduler="sync", **kw)
    assert got.to_settable(scheduler="sync").equals(ref)


def test_a_text_view_column_is_read_as_text():
    """H135: an ``ArrowDtype(string_view)`` column (Polars' newest Arrow,
    ``to_pandas(types_mapper=pd.ArrowDtype)``) raised a bare
    NotImplementedError from pandas' type checks; it is read as the same
    column in an Arrow table is.  (pyarrow < 16 has no text views: skipped.)"""
    if not hasattr(pa, "string_view"):
        pytest.skip(f"pyarrow {pa.__version__} has no string_view (pyarrow >= 16)")
    df = _frame().assign(note=lambda f: [f"x{i % 5}" for i in f.id])
    view = df.assign(note=pd.Series(pa.array(df.note, pa.string_view()),
                                    dtype=pd.ArrowDtype(pa.string_view())))
    table = pa.Table.from_pandas(df, preserve_index=False).set_column(
        3, "note", pa.array(df.note, pa.string_view()))
    ref = _ref(table, other=["note"])
    assert _ref(view, other=["note"]).equals(ref)
    assert sorted(_ref(view, other=["note"]).other["note"]) == sorted(df.note)


def test_text_views_are_read_where_pyarrow_casts_none():
    """H156: pyarrow 16 and 17 (pyproject: pyarrow>=14) hold text views but
    cast none ('Unsupported cast from string_view to large_utf8'), so an
    ``ArrowDtype(string_view)`` column, or a dictionary of views (a Polars
    Categorical's), failed with that ArrowNotImplementedError, a traceback.
    Where the cast is refused the values are rebuilt.  Fails before the fix
    on pyarrow 16 and 17; on newer pyarrow a stand-in array refuses the
    cast, so the test means the same on every version."""
    if not hasattr(pa, "string_view"):
        pytest.skip(f"pyarrow {pa.__version__} has no string_view (pyarrow >= 16)")
    from anonset.io import tables

    class NoCast:                      # an array as pyarrow < 18 casts it
        def __init__(self, arr):
            self._arr = arr

        def cast(self, target):
            raise pa.ArrowNotImplementedError(f"Unsupported cast from {self._arr.type}")

        def __getattr__(self, name):
            return getattr(self._arr, name)

    plain = pa.array(["a", None, "b"], pa.string_view())
    got = tables.cast_views(NoCast(plain), pa.large_string())
    assert got.equals(pa.array(["a", None, "b"], pa.large_string()))
    views = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int32()),
                                           pa.array(["x", "y"], pa.string_view()))
    want = pa.dictionary(pa.int32(), pa.large_string())
    got = tables.cast_views(NoCast(views), want)
    assert got.type == want and got.to_pylist() == ["y", "x", None, "y"]
    assert tables.cast_views(pa.chunked_array([plain, plain]), pa.large_string()).equals(
        pa.chunked_array([plain.to_pylist() * 2], pa.large_string()))
    # a frame that holds such a dictionary publishes as its Categorical
    df = _frame()
    jobs = pa.array(df.job).dictionary_encode()
    held = pa.DictionaryArray.from_arrays(jobs.indices,
                                          pa.array(jobs.dictionary.to_pylist(), pa.string_view()))
    view = df.assign(job=pd.Series(held, dtype=pd.ArrowDtype(held.type)))
    cat = df.assign(job=pd.Categorical(df.job, categories=sorted(set(df.job))))
    assert _ref(view).equals(_ref(cat))


def test_an_arrow_dictionary_held_by_pandas_declares_its_domain(tmp_path):
    """H135: ``pd.read_parquet(f, dtype_backend='pyarrow')`` holds a
    dictionary column as ``ArrowDtype(dictionary)``, whose domain was read
    off the data (a warning, an unused entry dropped, other sets), where the
    same file read as a Categorical, as an Arrow table and streamed declares
    the dictionary; one file now gives one release on every path, Dask
    included."""
    cats = ["a", "b", "c", "d", "e"]                       # 'e': declared, held by no row
    df = _frame()
    t = pa.table({"id": df.id, "job": pa.DictionaryArray.from_arrays(
        pa.array([cats.index(j) for j in df.job], pa.int32()), pa.array(cats)), "city": df.city})
    pq.write_table(t, tmp_path / "in.parquet")
    kw = dict(domains={"city": list("xyz")}, allow_clear=["job"])
    ref = _ref(pd.read_parquet(tmp_path / "in.parquet"), **kw)
    assert ref.schema["job"].domain == tuple(cats)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no 'read off the data' warning
        got = _ref(pd.read_parquet(tmp_path / "in.parquet", dtype_backend="pyarrow"), **kw)
    assert got.equals(ref)
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    frame = pd.read_parquet(tmp_path / "in.parquet", dtype_backend="pyarrow")
    for parts in (1, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.InferredDomainWarning)
            pub = adask.publish(dd.from_pandas(frame, npartitions=parts), anonset.Diversity(2),
                                scheduler="sync", **{**R, **kw})
        assert pub.to_settable(scheduler="sync").equals(ref)


def test_a_parquet_index_named_as_a_column_is_refused_as_in_memory(tmp_path, capsys):
    """H135: pandas stores an index named like one of the columns as
    '__index_level_0__' with its name in the metadata; the file was
    published with the index dropped as if unnamed, where memory (and
    ``pd.read_parquet`` of the file) refuse that frame.  Refused alike."""
    from anonset import cli
    df = _frame().set_index(pd.Index(np.resize(list("dcba"), 60), name="job"))
    df.to_parquet(tmp_path / "in.parquet")
    with pytest.raises(ValueError, match=r"^data: has an index named 'job', as one of its "):
        _ref(df)
    with pytest.raises(ValueError, match=r"in.parquet': has an index named 'job', as one of "):
        publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet", anonset.Diversity(2),
                     **R)
    assert cli.main(["anonymize", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "c.csv"),
                     "--identifier", "id", "--sensitive", "job,city", "--l", "2", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has an index named 'job'" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_a_record_id_of_lists_is_refused_on_every_path(tmp_path):
    """H139: a record id holding lists keyed as '[0, 7]' in a frame and as
    '[0 7]' (the array a Parquet file gives) streamed: two releases of one
    series drew new sets for two records in three.  Nested ids are refused
    alike on every path."""
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    df = _frame().assign(rid=lambda f: [[int(i), int(i) % 7] for i in f.id]).drop(columns="id")
    df.to_parquet(tmp_path / "in.parquet")
    kw = dict(sensitive=["job", "city"], identifiers=["rid"], record_id="rid", key_file=key,
              first_in_series=True, domains=R["domains"])
    said = []
    for run in (lambda: anonset.publish(df, anonset.Diversity(2), **kw),
                lambda: publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet",
                                     anonset.Diversity(2), **kw)):
        with pytest.raises(ValueError, match=r"column 'rid': holds nested values") as e:
            run()
        said.append(str(e.value).split("column 'rid': ")[1])
    assert said[0].replace("list", "ndarray") == said[1] or said[0] == said[1], said
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("kind", ["large_binary", "decimal", "list", "struct", "sparse"])
def test_pass_through_types_a_file_gives_back_as_objects(tmp_path, kind):
    """H139: a pass-through ArrowDtype of bytes or decimals kept its dtype in
    memory and came back as Python objects from a file (the same file gave
    two unequal releases, and a release did not equal itself read back); an
    ArrowDtype list or struct raised pyarrow's 'no kernel' from memory and
    Dask; a Sparse column was written to CSV as its dtype's text, which no
    reader took back.  Each is now read as the file's reader reads it."""
    import decimal
    n = 60
    vals = {"large_binary": pa.array([b"v%d" % (i % 5) for i in range(n)], pa.large_binary()),
            "decimal": pa.array([decimal.Decimal(i % 5) / 4 for i in range(n)],
                                pa.decimal128(10, 2)),
            "list": pa.array([[i % 5, 1] for i in range(n)], pa.list_(pa.int64())),
            "struct": pa.array([{"a": i % 5} for i in range(n)], pa.struct([("a", pa.int64())]))}
    df = _frame(n)
    if kind == "sparse":
        df["x"] = pd.arrays.SparseArray([float(i % 5 == 0) for i in range(n)], fill_value=1.0)
    else:
        df["x"] = pd.Series(vals[kind], dtype=pd.ArrowDtype(vals[kind].type))
    mem = _ref(df, other=["x"])
    if kind != "sparse":           # (pandas writes no Sparse column to Parquet)
        df.to_parquet(tmp_path / "in.parquet", index=False)
        publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet", anonset.Diversity(2),
                     other=["x"], **R)
        assert anonset.read_parquet(tmp_path / "o.parquet").equals(mem)
        mem.to_parquet(tmp_path / "m.parquet")
        assert anonset.read_parquet(tmp_path / "m.parquet").equals(mem)
    else:
        mem.to_csv(tmp_path / "m.csv")
        assert anonset.read_csv(tmp_path / "m.csv").equals(mem)
    if kind in ("list", "struct"):
        dd = pytest.importorskip("dask.dataframe")
        from anonset import dask as adask
        got = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                            scheduler="sync", other=["x"], **R)
        assert got.to_settable(scheduler="sync").equals(mem)


def test_interval_and_period_files_read_alike_in_a_fresh_process(tmp_path):
    """H139: pyarrow reads pandas' Interval and Period columns as their
    storage (struct, int64) until pandas has registered its extension types,
    so the audit of a correct release found RISKS in a fresh process and
    PASSED after that import.  anonset registers them when it is imported."""
    import subprocess
    import sys
    df = _frame().assign(x=pd.interval_range(0, 60, periods=60).astype("interval[int64]"))
    df.to_parquet(tmp_path / "in.parquet", index=False)
    code = ("import sys, anonset.io.tables as t; "
            "print(t.read_table(sys.argv[1], 'parquet')['x'].dtype)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "in.parquet")],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().startswith("interval"), out


def test_the_command_line_audit_reads_a_declared_na_as_a_value(tmp_path, capsys):
    """H139: `anonset audit --original X.csv` read a declared 'NA' (North
    America) as missing and refused, where publishing and audit_file read
    it as the value; so did `anonset report --original`."""
    from anonset import cli
    rng = np.random.default_rng(0)
    pd.DataFrame({"job": rng.choice(list("abcd"), 240),
                  "region": rng.choice(["NA", "EU", "AS", "AF"], 240)}).to_csv(
        tmp_path / "o.csv", index=False)
    assert cli.main(["anonymize", str(tmp_path / "o.csv"), "-o", str(tmp_path / "r.parquet"),
                     "--sensitive", "job,region", "--domain", "region=NA,EU,AS,AF",
                     "--domain", "job=a,b,c,d", "--l", "2", "-q"]) == 0
    capsys.readouterr()
    assert cli.main(["audit", str(tmp_path / "r.parquet"), "--original",
                     str(tmp_path / "o.csv"), "--chunk-rows", "0"]) == 0, capsys.readouterr()
    assert "PASSED" in capsys.readouterr().out
    assert cli.main(["report", str(tmp_path / "r.parquet"), "--original",
                     str(tmp_path / "o.csv"), "-o", str(tmp_path / "p.html"),
                     "--no-attack"]) == 0, capsys.readouterr().err


def test_a_text_column_with_missing_cells_reads_back_from_csv(tmp_path):
    """A Categorical (or Arrow dictionary) passed through is published as
    text; its missing cells were written as empty cells and read back as
    the text '', so the CSV release did not equal the release it was."""
    df = _frame().assign(tag=pd.Categorical(np.resize(["k", "l", None, "k", "l"], 60)))
    pub = _ref(df, other=["tag"])
    assert pub.other["tag"].isna().sum() == 12
    pub.to_csv(tmp_path / "o.csv")
    back = anonset.read_csv(tmp_path / "o.csv")
    assert back.equals(pub) and back.other["tag"].isna().sum() == 12


def test_a_partition_release_audit_reads_a_published_na_as_a_value(tmp_path, capsys):
    """H145: an lgb release whose region 'NA' (North America) a hierarchy
    declared was audited against its CSV original with 'NA' read as
    missing: a TypeError traceback from the audit and the report."""
    from anonset import cli
    rng = np.random.default_rng(3)
    pd.DataFrame({"age": rng.integers(18, 80, 600), "zip": rng.integers(100, 140, 600),
                  "region": rng.choice(["NA", "EU", "AS"], 600)}).to_csv(tmp_path / "in.csv",
                                                                        index=False)
    (tmp_path / "h.csv").write_text("NA;Americas;*\nEU;Eurasia;*\nAS;Eurasia;*\n")
    assert cli.main(["lgb", str(tmp_path / "in.csv"), "-o", str(tmp_path / "rel.csv"),
                     "--k", "10", "--qi", "age,zip", "--sensitive", "region", "--t",
                     "region=0.3", "--hierarchy", f"region={tmp_path / 'h.csv'}", "-q"]) == 0
    capsys.readouterr()
    assert cli.main(["audit", str(tmp_path / "rel.csv"), "--original",
                     str(tmp_path / "in.csv")]) == 0, capsys.readouterr().err
    assert "PASSED" in capsys.readouterr().out


def test_a_zstd_file_that_opens_with_a_skippable_frame_is_read(tmp_path):
    """H145: pzstd starts its output with a skippable frame, which the check
    of a compressed file's first bytes refused as 'not zstd-compressed'."""
    from anonset.io.tables import check_compression
    raw = b"\x50\x2a\x4d\x18\x04\x00\x00\x00abcd\x28\xb5\x2f\xfd"
    (tmp_path / "x.csv.zst").write_bytes(raw)
    check_compression(tmp_path / "x.csv.zst")
