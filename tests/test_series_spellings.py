"""A series under a persistent key keeps each record's sets whatever type
its files give the record ids and the sensitive values (H124): ids stored
as bytes (a Parquet BINARY column) or as DECIMAL(10, 2), and a boolean
column read from a CSV file in one wave and from Parquet in the next.
Redrawn, two waves intersected pinned more than half the values."""
from __future__ import annotations

import decimal

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset.io.keys import new_key_file
from anonset.validate import InputError

JOBS = [f"j{i}" for i in range(6)]


def _waves(tmp_path, first_ids, second_ids, n=600):
    key = tmp_path / "k.key"
    new_key_file(key)
    rng = np.random.default_rng(4)
    job = rng.choice(JOBS, n)
    kw = dict(sensitive=["job"], identifiers=["rid"], record_id="rid", key_file=key,
              domains={"job": JOBS})
    one = anonset.publish(pd.DataFrame({"rid": first_ids, "job": job}), anonset.Diversity(3),
                          first_in_series=True, keep_order=True, **kw)
    one.to_parquet(tmp_path / "r1.parquet")
    two = anonset.publish(pd.DataFrame({"rid": second_ids, "job": job}), anonset.Diversity(3),
                          params=anonset.read_parquet(tmp_path / "r1.parquet"),
                          keep_order=True, **kw)
    return one.mask("job"), two.mask("job")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("second", ["bytes", "decimal"])
def test_record_ids_as_bytes_or_decimals_keep_the_sets(second, tmp_path):
    n = 600
    first = [f"{i:05d}" for i in range(n)]
    other = [f"{i:05d}".encode() for i in range(n)] if second == "bytes" else \
        [decimal.Decimal(i).quantize(decimal.Decimal("0.01")) for i in range(n)]
    a, b = _waves(tmp_path, first, other, n)
    assert (a == b).all()


def test_a_fractional_decimal_record_id_is_refused_as_a_fractional_number(tmp_path):
    ids = [decimal.Decimal(i).quantize(decimal.Decimal("0.01")) for i in range(100)]
    ids[1] = decimal.Decimal("2.50")
    key = tmp_path / "k.key"
    new_key_file(key)
    with pytest.raises(InputError, match=r"record_id: column 'rid': holds the fractional "
                                         r"number 2.50 at row \d+"):
        anonset.publish(pd.DataFrame({"rid": ids, "job": ["j0", "j1"] * 50}),
                        anonset.Diversity(2), sensitive=["job"], identifiers=["rid"],
                        record_id="rid", key_file=key, domains={"job": JOBS},
                        first_in_series=True)


@pytest.mark.filterwarnings("ignore")
def test_a_boolean_column_read_from_another_format_is_refused_saying_so(tmp_path):
    """A CSV wave holds a boolean column as text and a Parquet wave as
    booleans: the sets are keyed by the values as held, so the second wave
    would redraw them.  It is refused, and the line says why (it advised
    the --domain the user had given)."""
    rng = np.random.default_rng(5)
    n = 500
    d = pd.DataFrame({"rid": np.arange(n), "a": rng.choice(JOBS, n), "s": rng.random(n) < 0.3})
    d.to_csv(tmp_path / "w.csv", index=False)
    d.to_parquet(tmp_path / "w.parquet", index=False)
    key = tmp_path / "k.key"
    new_key_file(key)
    from anonset.stream import publish_file
    kw = dict(sensitive=["a", "s"], identifiers=["rid"], record_id="rid", key_file=key,
              domains={"a": JOBS, "s": ["False", "True"]}, keep_order=True)
    publish_file(tmp_path / "w.csv", tmp_path / "r1.parquet", anonset.Closeness(0.3),
                 first_in_series=True, **kw)
    prior = anonset.read_parquet(tmp_path / "r1.parquet")
    with pytest.raises(InputError, match=r"column 's': holds its booleans as read from a "
                                         r"Parquet file \(booleans\), and .* from a CSV file"):
        publish_file(tmp_path / "w.parquet", tmp_path / "r2.parquet", anonset.Closeness(0.3),
                     params=prior, **kw)
    assert not (tmp_path / "r2.parquet").exists()
    publish_file(tmp_path / "w.csv", tmp_path / "r2.parquet", anonset.Closeness(0.3),
                 params=prior, **kw)                    # the same format: kept
    two = anonset.read_parquet(tmp_path / "r2.parquet")
    for c in ("a", "s"):
        assert (prior.mask(c) == two.mask(c)).all(), c


@pytest.mark.parametrize("bad, said", [
    (b"caf\xe9", "bytes that are not UTF-8 text"),
    (decimal.Decimal("1E+5000"), "the number 1E\\+5000, not a whole number below 10\\^40"),
    (decimal.Decimal("Infinity"), "the number Infinity"),
])
def test_record_ids_no_path_reads_alike_are_refused_in_one_line(bad, said, tmp_path):
    """H126: a non-UTF-8 bytes id keyed as its repr, which a text id can
    spell (two people one record); a DECIMAL of 5,000 digits was a
    ValueError, one of 50,000,000 never ended."""
    key = tmp_path / "k.key"
    new_key_file(key)
    ids = [f"{i:04d}".encode() if isinstance(bad, bytes) else decimal.Decimal(i)
           for i in range(100)]
    ids[40] = bad
    with pytest.raises(InputError, match=rf"^record_id: column 'rid': holds {said}.* at row "):
        anonset.publish(pd.DataFrame({"rid": ids, "job": ["j0", "j1"] * 50}),
                        anonset.Diversity(2), sensitive=["job"], identifiers=["rid"],
                        record_id="rid", key_file=key, domains={"job": JOBS},
                        first_in_series=True)


@pytest.mark.parametrize("text", ["inf", "-Infinity"])
def test_an_infinite_record_id_in_a_csv_is_refused_on_every_path(text, tmp_path):
    """H130: pandas reads 'inf' as a float, refused in memory; the file
    paths keyed it as text and published."""
    from anonset.stream import publish_file
    key = tmp_path / "k.key"
    new_key_file(key)
    ids = [str(i) for i in range(100)]
    ids[60] = text
    src = tmp_path / "in.csv"
    pd.DataFrame({"rid": ids, "job": ["j0", "j1"] * 50}).to_csv(src, index=False)
    kw = dict(sensitive=["job"], identifiers=["rid"], record_id="rid", key_file=key,
              domains={"job": JOBS}, first_in_series=True)
    want = r"^record_id: column 'rid': holds the infinite number .* at row 61"
    with pytest.raises(InputError, match=want):
        anonset.publish(pd.read_csv(src), anonset.Diversity(2), **kw)
    for chunk in ({}, {"chunk_rows": 25}):
        with pytest.raises(InputError, match=want.replace("^", "^.*")):
            publish_file(src, tmp_path / "o.parquet", anonset.Diversity(2), **chunk, **kw)
        assert not (tmp_path / "o.parquet").exists()
