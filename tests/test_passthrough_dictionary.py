"""A column passed through is published as its rows' values, never with the
input's dictionary (H117): a pandas Categorical's unused categories are
values nobody in the release holds (a person filtered out), and an Arrow
dictionary built by ``dictionary_encode`` is in the input's first-appearance
order, which read back each published row's input position past the keyed
shuffle.  In memory, streamed and on Dask alike."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import anonset
from anonset.stream import publish_file

SECRET = "Oncology-ward-7"
JOBS = ["chef", "clerk", "judge", "nurse"]
KW = dict(sensitive=["job"], other=["ward", "tok"], allow_identifier=["tok"],
          domains={"job": JOBS})


def _table(n=600, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ward = pd.Series(rng.choice(["A", "B", "C", "D"], n).astype(object))
    ward[7] = SECRET
    df = pd.DataFrame({"job": rng.choice(JOBS, n), "ward": ward.astype("category"),
                       # a token per row, dictionary-encoded in row order
                       "tok": [f"t{rng.integers(1 << 40):x}" for _ in range(n)]})
    df = df[df.index != 7].reset_index(drop=True)       # the person who withdrew
    tok = pa.array(df["tok"].tolist()).dictionary_encode()
    df["tok"] = pd.Series(pd.arrays.ArrowExtensionArray(tok))
    return df


def _dictionaries(path) -> dict:
    t = pq.read_table(path)
    out = {}
    for c in ("ward", "tok"):
        col = t.column(c).combine_chunks()
        out[c] = col.dictionary.to_pylist() if pa.types.is_dictionary(col.type) else None
    return out


def _check(path, df):
    for c, dictionary in _dictionaries(path).items():
        assert dictionary is None, (c, dictionary[:5])
    back = pq.read_table(path).to_pandas()
    assert SECRET not in set(back["ward"].astype(str))
    for c in ("ward", "tok"):
        assert sorted(back[c].astype(str)) == sorted(df[c].astype(str)), c


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("how", ["memory", "stream", "dask"])
def test_a_dictionary_column_is_published_as_its_values(how, tmp_path):
    df = _table()
    assert SECRET in df["ward"].cat.categories          # unused, and not in any row
    out = tmp_path / "pub.parquet"
    if how == "memory":
        anonset.publish(df, anonset.Diversity(2), **KW).to_parquet(out)
    elif how == "stream":
        src = tmp_path / "in.parquet"
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), src)
        assert _dictionaries(src)["tok"][:3] == df["tok"].astype(str).tolist()[:3]
        publish_file(src, out, anonset.Diversity(2), chunk_rows=97, **KW)
    else:
        dd = pytest.importorskip("dask.dataframe")
        from anonset import dask as adask
        adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                      **KW).to_parquet(out)
    _check(out, df)


def test_a_csv_release_keeps_no_dictionary_in_its_metadata(tmp_path):
    df = _table()
    out = tmp_path / "pub.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anonset.publish(df, anonset.Diversity(2), **KW).to_csv(out)
    meta = (tmp_path / "pub.csv.anonset.json").read_text()
    assert SECRET not in meta and "dictionary" not in meta
    back = anonset.read_csv(out)
    assert sorted(back.other["tok"].astype(str)) == sorted(df["tok"].astype(str))
    assert json.loads(meta)                                # still the metadata


@pytest.mark.filterwarnings("ignore")
def test_text_in_any_holder_is_one_release_on_every_path(tmp_path):
    """H130: a text pass-through column held as Arrow text was published as
    Arrow 'string' where pandas' text gave 'large_string', and a Dask
    partition whose cells were all missing kept 'object'."""
    pd_text = pd.Series(["a"]).dtype
    if pd_text == object:
        pytest.skip("pandas without its own text type")
    rng = np.random.default_rng(3)
    n = 400
    note = pd.Series([f"n{i % 9}" for i in range(n)], dtype=object)
    note[300:] = None                                   # the last partition: all missing
    base = pd.DataFrame({"job": rng.choice(JOBS, n), "note": note})
    kw = dict(sensitive=["job"], other=["note"], domains={"job": JOBS},
              allow_recode=["note"], seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    holders = {"object": base,
               "arrow": base.assign(note=base["note"].astype(pd.ArrowDtype(pa.string()))),
               "string": base.assign(note=base["note"].astype("string"))}
    outs = {}
    for name, df in holders.items():
        pub = anonset.publish(df, anonset.Diversity(2), **kw)
        assert pub.equals(anonset.publish(base, anonset.Diversity(2), **kw)), name
        outs[name] = tmp_path / f"{name}.parquet"
        pub.to_parquet(outs[name])
    dd = pytest.importorskip("dask.dataframe")
    import dask
    from anonset import dask as adask
    with dask.config.set({"dataframe.convert-string": False}):
        adask.publish(dd.from_pandas(base, npartitions=4), anonset.Diversity(2),
                      **kw).to_parquet(tmp_path / "dask.parquet")
    outs["dask"] = tmp_path / "dask.parquet"
    types = {k: pq.read_schema(v).field("note").type for k, v in outs.items()}
    assert len(set(types.values())) == 1, types


@pytest.mark.filterwarnings("ignore")
def test_a_dask_partition_of_missing_cells_takes_its_columns_type(tmp_path):
    """H131: an object column of whole numbers missing in every partition
    but the last was written as text when an output block of missing cells
    came first (or refused as changing type), where memory wrote int64."""
    dd = pytest.importorskip("dask.dataframe")
    import dask
    from anonset import dask as adask
    rng = np.random.default_rng(4)
    n = 400
    num = pd.Series([None] * n, dtype=object)
    num[350:] = [int(x) for x in rng.integers(1, 10, 50)]
    df = pd.DataFrame({"job": rng.choice(JOBS, n), "num": num})
    kw = dict(sensitive=["job"], other=["num"], domains={"job": JOBS},
              allow_recode=["num"], seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    anonset.publish(df, anonset.Diversity(2), **kw).to_parquet(tmp_path / "mem.parquet")
    with dask.config.set({"dataframe.convert-string": False}):
        adask.publish(dd.from_pandas(df, npartitions=8), anonset.Diversity(2),
                      **kw).to_parquet(tmp_path / "dask.parquet")
    mem, dsk = (pq.read_table(tmp_path / f"{k}.parquet") for k in ("mem", "dask"))
    assert mem.schema.field("num").type == dsk.schema.field("num").type == pa.int64()
    assert mem.column("num").to_pylist() == dsk.column("num").to_pylist()


def test_whole_numbers_no_parquet_integer_holds_are_refused_in_one_line(tmp_path):
    df = pd.DataFrame({"job": JOBS * 10, "big": [-5, 2 ** 64 - 1] * 20})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], other=["big"],
                          domains={"job": JOBS}, allow_recode=["big"])
    with pytest.raises(anonset.InputError, match=r"column 'big': holds whole numbers that no "
                                                 r"Parquet integer type holds together"):
        pub.to_parquet(tmp_path / "o.parquet")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("late", [[0, 1, 2], ["t", "u", "v"]])
def test_a_dask_column_of_two_types_is_refused_not_cast(late, tmp_path):
    """H132: once a column's type was known, later blocks were cast to it
    silently: booleans then numbers wrote 2 as True, numbers after text
    became text, where memory refuses the column as mixing value types."""
    dd = pytest.importorskip("dask.dataframe")
    import dask
    from anonset import dask as adask
    n = 200
    x = pd.Series([None] * n, dtype=object)
    x[50:100] = True if late[0] == 0 else 5
    x[100:] = [late[i % 3] for i in range(100)]
    df = pd.DataFrame({"job": JOBS * 50, "x": x})
    kw = dict(sensitive=["job"], other=["x"], domains={"job": JOBS}, allow_recode=["x"],
              keep_order=True, seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    with dask.config.set({"dataframe.convert-string": False}):
        pub = adask.publish(dd.from_pandas(df, npartitions=4), anonset.Diversity(2), **kw)
        with pytest.raises(anonset.InputError, match=r"dask.parquet': column 'x': is of type "
                                                     r"\S+ in one block and \S+ in another"):
            pub.to_parquet(tmp_path / "dask.parquet")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.filterwarnings("ignore")
def test_nested_and_decimal_pass_through_columns_stream_to_parquet(tmp_path):
    """H133: streamed block by block, a list column whose block held [None]
    alone (list<double> beside list<int64>), a struct with a missing field,
    and Decimals whose precision Arrow infers per block (1.50 then 12.50)
    were refused as changing type; they are written, values unchanged."""
    import decimal
    from anonset.stream import publish_file
    n = 200
    half = n // 2
    t = pa.table({
        "job": pa.array((JOBS * n)[:n]),
        "li": pa.array([[1, 2]] * half + [[None]] * half, type=pa.list_(pa.int64())),
        "st": pa.array([{"a": 1}] * half + [{"a": None}] * half,
                       type=pa.struct([("a", pa.int64())])),
        "dec": pa.array([decimal.Decimal("1.50")] * half + [decimal.Decimal("12.50")] * half,
                        type=pa.decimal128(10, 2))})
    src = tmp_path / "in.parquet"
    pq.write_table(t, src)
    publish_file(src, tmp_path / "o.parquet", anonset.Diversity(2), chunk_rows=50,
                 sensitive=["job"], other=["li", "st", "dec"], domains={"job": JOBS},
                 allow_recode=["li", "st", "dec"], keep_order=True,
                 seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    back = pq.read_table(tmp_path / "o.parquet")
    assert back.column("li").to_pylist() == t.column("li").to_pylist()
    assert back.column("st").to_pylist() == t.column("st").to_pylist()
    assert back.column("dec").to_pylist() == t.column("dec").to_pylist()
