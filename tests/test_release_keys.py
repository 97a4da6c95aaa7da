"""One key, several releases: what a release's draws are keyed by.

A key (a seed or a key file) reproduces a release only with the same data
and the same parameters.  Under other parameters the sets must be drawn as
under another key: drawn from the same words, a cell under l = 5 and under
l = 6 on 10 values (C(9, 4) = C(9, 5) subsets) took the same subset index,
and the two sets read together pinned 45 % of the values (H20).  Under a
persistent key (record ids) the same holds per column: the same (p, eta, d,
domain) gives a record the same set in every release, anything else a new
one."""
import warnings
from math import comb

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset.io.keys import new_key_file

D = 10
DOMAIN = [f"v{i}" for i in range(D)]


def _table(n=2000, seed=7):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rid": np.arange(1, n + 1),
                         "job": rng.choice(DOMAIN, n)})


def _head_ranks(pub, df) -> np.ndarray:
    """Each row's set less its own value, closed up over the other d - 1
    values, as its colex rank: the index the sampler drew (p = 1)."""
    sets = pub.sets("job")
    codes = df["job"].map({v: i for i, v in enumerate(DOMAIN)}).to_numpy()
    ranks = np.empty(len(df), dtype=np.int64)
    for r, (s, v) in enumerate(zip(sets, codes)):
        held = sorted(DOMAIN.index(x) for x in s)
        assert v in held                                  # p = 1: its own value
        others = [c - (c > v) for c in held if c != v]    # the gap at v closed
        ranks[r] = sum(comb(c, i + 1) for i, c in enumerate(others))
    return ranks


def _release(df, l, **kw):
    return anonset.publish(df, anonset.Diversity(l), sensitive=["job"],
                           domains={"job": DOMAIN}, keep_order=True, **kw)


@pytest.mark.parametrize("persistent", [False, True], ids=["key file", "record ids"])
def test_one_key_under_another_l_draws_other_sets(tmp_path, persistent):
    df = _table()
    key = tmp_path / "k.key"
    new_key_file(key)
    kw = dict(key_file=key)
    if persistent:
        # each declared the first of a series: another l, as a user could ask
        kw.update(identifiers=["rid"], record_id="rid", first_in_series=True)
    else:
        kw.update(drop=["rid"])
    with pytest.warns(UserWarning) if persistent else _nothing():
        five = _release(df, 5, **kw)
        six = _release(df, 6, **kw)
        again = _release(df, 5, **kw)
    r5, r6 = _head_ranks(five, df), _head_ranks(six, df)
    assert comb(D - 1, 4) == comb(D - 1, 5) == 126
    # independent draws agree on 1 in 126 (about 16 rows of 2,000); the same
    # words agreed on every row
    same = int((r5 == r6).sum())
    assert same < 60, same
    # one key, the same data and parameters: the same release
    assert np.array_equal(r5, _head_ranks(again, df))


def test_a_seed_reproduces_only_its_own_parameters():
    """The same for a seed, and for t-closeness, whose parameters Algorithm 1
    chooses: another t that gives another (p, eta) gives other sets."""
    df = _table(3000, seed=11)
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    a = _release(df, 5, seed=seed, drop=["rid"])
    b = _release(df, 5, seed=seed, drop=["rid"])
    assert a.sets("job") == b.sets("job")
    c = _release(df, 6, seed=seed, drop=["rid"])
    assert (_head_ranks(a, df) == _head_ranks(c, df)).mean() < 0.03


def test_semantic_sets_are_keyed_by_the_model(monkeypatch):
    """Semantic diversity's sets key holds its l, d, algorithm and distance
    besides the data: one seed under another model draws other words."""
    from anonset.randomized import semantic as S
    keys = []
    real = S.semantic_sets

    def spy(codes, distance, l, d, **kw):
        if "attr" in kw:                            # the published sets' call
            keys.append((l, d, kw["key"]))
        return real(codes, distance, l, d, **kw)

    monkeypatch.setattr(S, "semantic_sets", spy)
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"age": rng.integers(20, 60, 3000)})
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    for l, d in ((3, 2.0), (3, 2.0), (4, 2.0), (3, 3.0)):
        S.semantic_publish(df, "age", l, d, values="domain", domain=list(range(20, 60)),
                           seed=seed, algorithm="simple")
    assert [k[:2] for k in keys] == [(3, 2.0), (3, 2.0), (4, 2.0), (3, 3.0)]
    assert keys[0][2] == keys[1][2]                 # reproduced
    assert len({k[2] for k in keys}) == 3           # another l or d: another key


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_series_keeps_its_sets_when_its_domain_comes_as_floats(tmp_path):
    """A series' later release whose column (and declared domain) arrives
    as floats, 1.0 for 1, passes the series' check of its domain (the
    values are equal) and must keep every set: the cells' salt read the
    values' reprs, '1' against '1.0', and redrew 96 % of them (H21)."""
    rng = np.random.default_rng(3)
    n = 500
    df = pd.DataFrame({"rid": np.arange(n), "s": rng.integers(0, 8, n)})
    key = tmp_path / "k.key"
    new_key_file(key)
    kw = dict(identifiers=["rid"], sensitive=["s"], key_file=key, record_id="rid",
              keep_order=True)
    with pytest.warns(UserWarning, match="persistent key"):
        first = anonset.publish(df, anonset.Diversity(3), domains={"s": list(range(8))},
                                first_in_series=True, **kw)
    first.to_parquet(tmp_path / "first.parquet")
    prior = anonset.read_parquet(tmp_path / "first.parquet")
    floats = df.astype({"s": float})
    for dom in (list(range(8)), [float(i) for i in range(8)]):
        later = anonset.publish(floats, anonset.Diversity(3), params=prior,
                                domains={"s": dom}, **kw)
        assert np.array_equal(first.mask("s"), later.mask("s")), dom


def test_semantic_rows_under_one_seed_are_shuffled_per_table():
    """Table 7's rows under one seed were shuffled by one permutation
    whatever the table: two releases (a value changed, or another d) put
    the same person's rows at every position of both outputs (H21)."""
    from anonset.semantic import semantic_publish, semantic_rows
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(2)
    n = 1000
    df = pd.DataFrame({"pid": np.arange(n), "age": rng.integers(20, 60, n)})
    changed = df.copy()
    changed.loc[::3, "age"] = rng.integers(20, 60, len(changed.loc[::3]))
    kw = dict(qids=["pid"], domain=list(range(20, 60)), seed=seed, keep_order=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tabs = [semantic_publish(df, "age", 3, 2, **kw),
                semantic_publish(changed, "age", 3, 2, **kw),
                semantic_publish(df, "age", 3, 3, **kw)]
    rows = [semantic_rows(t, seed=seed)["pid"].to_numpy() for t in tabs]
    for other in rows[1:]:
        assert (rows[0] == other).mean() < 0.01          # chance: about 1 in 1,000
    assert np.array_equal(rows[0], semantic_rows(tabs[0], seed=seed)["pid"].to_numpy())


def test_where_values_sit_keys_the_draws_of_a_domain_read_off_the_data(tmp_path):
    """A domain read off the data keyed the draws by its value counts only:
    two tables one swap apart (the same counts) under one seed drew the same
    words, and each swapped row's two sets differed by its two values; a
    Categorical (a declared domain) was keyed by its rows' places as well,
    so one seed gave another release of the same table as text (H26).  Both
    kinds now key by where each value sits, alike on every path."""
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset.stream import publish_file
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(6)
    n = 1500
    df = pd.DataFrame({"job": rng.choice(DOMAIN, n)})
    kw = dict(sensitive=["job"], seed=seed, keep_order=True, allow_rare=["job"])
    text = anonset.publish(df, anonset.Diversity(5), **kw)
    cat = anonset.publish(df.astype({"job": "category"}), anonset.Diversity(5), **kw)
    assert text.sets("job") == cat.sets("job")
    df.to_csv(tmp_path / "in.csv", index=False)
    publish_file(tmp_path / "in.csv", tmp_path / "s.parquet", anonset.Diversity(5),
                 chunk_rows=400, **kw)
    assert anonset.read_parquet(tmp_path / "s.parquet").sets("job") == text.sets("job")
    on_dask = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(5),
                            scheduler="sync", **kw).to_settable(scheduler="sync")
    assert on_dask.sets("job") == text.sets("job")
    # two rows swap values: the same counts, another table
    i, j = (int(np.flatnonzero(df["job"] == v)[0]) for v in ("v0", "v1"))
    swapped = df.copy()
    swapped.loc[i, "job"], swapped.loc[j, "job"] = df.loc[j, "job"], df.loc[i, "job"]
    assert (swapped["job"].value_counts() == df["job"].value_counts()).all()
    other = anonset.publish(swapped, anonset.Diversity(5), **kw)
    r1, r2 = _head_ranks(text, df), _head_ranks(other, swapped)
    assert (r1 == r2).mean() < 0.05          # independent: 1 in C(9, 4) = 126


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "read off the data"])
def test_rows_of_one_value_reordered_with_their_qids_draw_anew_on_every_path(tmp_path,
                                                                            declared):
    """A file sorted by the sensitive column, its ties once by zip and once
    by age: the sets were keyed by the sensitive column alone, so both
    releases drew the same sets in the same order, and each output row's
    exact QIDs named two people of one value (semantic diversity: 99 % of
    2,000 values pinned, H91).  The exact QIDs key the draws too, alike in
    memory, from files and on Dask; semantic diversity's too."""
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset import semantic as S
    from anonset.stream import publish_file
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame({"zip": rng.integers(10, 20, n), "age": rng.integers(20, 30, n),
                       "income": rng.integers(0, 6, n)})
    one = df.sort_values(["income", "zip"], kind="stable").reset_index(drop=True)
    two = df.sort_values(["income", "age"], kind="stable").reset_index(drop=True)
    assert (one["income"] == two["income"]).all() and not one.equals(two)
    kw = dict(sensitive=["income"], exact=["zip", "age"], seed=seed,
              **({"domains": {"income": list(range(6))}} if declared else
                 {"allow_rare": ["income"]}))
    pubs = [anonset.publish(t, anonset.Diversity(3), **kw) for t in (one, two)]
    same = np.mean([a == b for a, b in zip(pubs[0].sets("income"), pubs[1].sets("income"))])
    assert same < 0.5, same                   # the same sets row for row: 100 %
    # the same table on every path: the same release
    one.to_csv(tmp_path / "one.csv", index=False)
    publish_file(tmp_path / "one.csv", tmp_path / "one.parquet", anonset.Diversity(3),
                 chunk_rows=150, **kw)
    assert anonset.read_parquet(tmp_path / "one.parquet").sets("income") == \
        pubs[0].sets("income")
    on_dask = adask.publish(dd.from_pandas(one, npartitions=3), anonset.Diversity(3),
                            scheduler="sync", **kw).to_settable(scheduler="sync")
    assert on_dask.sets("income") == pubs[0].sets("income")
    sem = [S.semantic_publish(t, "income", l=3, d=1, qids=["zip", "age"], seed=seed,
                              domain=list(range(6))) for t in (one, two)]
    same = np.mean([a == b for a, b in zip(sem[0].sets("income"), sem[1].sets("income"))])
    assert same < 0.5, same


def test_rows_that_differ_only_in_a_column_passed_through_draw_anew_on_every_path(tmp_path):
    """Pass-through columns did not key the draws: a file whose ties were
    broken by a survey weight one time and by age the next gave the same
    sets in the same order, each output row's weight naming two people of
    one value (Adult, l = 5: 53 % of the people found pinned, two fresh
    keys 17 %; H96).  They key them now, read alike on every path: whole
    numbers in decimal, booleans as text, missing cells as none."""
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset.stream import publish_file
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(3)
    n = 600
    w = rng.integers(1, 40, n).astype(float) * 1000
    w[::37] = np.nan
    df = pd.DataFrame({"job": rng.choice(DOMAIN, n), "w": w,
                       "note": rng.choice(["x", "y", "z"], n),
                       "flag": rng.choice([True, False], n), "age": rng.integers(20, 70, n)})
    one = df.sort_values(["job", "w"], kind="stable").reset_index(drop=True)
    two = df.sort_values(["job", "age"], kind="stable").reset_index(drop=True)
    kw = dict(sensitive=["job"], other=["w", "note", "flag"], drop=["age"],
              domains={"job": DOMAIN}, seed=seed)
    pubs = [anonset.publish(t, anonset.Diversity(5), **kw) for t in (one, two)]
    same = np.mean([a == b for a, b in zip(pubs[0].sets("job"), pubs[1].sets("job"))])
    assert same < 0.2, same                    # the same sets row for row: 100 %
    want = pubs[0].sets("job")
    one.to_csv(tmp_path / "one.csv", index=False)
    one.to_parquet(tmp_path / "one.parquet")
    for src in ("one.csv", "one.parquet"):
        publish_file(tmp_path / src, tmp_path / f"{src}.out.parquet", anonset.Diversity(5),
                     chunk_rows=170, **kw)
        assert anonset.read_parquet(tmp_path / f"{src}.out.parquet").sets("job") == want, src
    on_dask = adask.publish(dd.from_pandas(one, npartitions=4), anonset.Diversity(5),
                            scheduler="sync", **kw).to_settable(scheduler="sync")
    assert on_dask.sets("job") == want


def test_a_partition_release_is_keyed_by_its_columns_passed_through_too():
    """Anatomy under one key gave two tables whose rows differ only in a
    weight passed through the same groups in the same order (H96)."""
    from anonset.partition.baselines import anatomy
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(4)
    n = 600
    df = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "job": rng.choice(DOMAIN, n),
                       "w": rng.integers(1, 60, n) * 1000, "age": rng.integers(20, 70, n)})
    one = df.sort_values(["sex", "job", "w"], kind="stable").reset_index(drop=True)
    two = df.sort_values(["sex", "job", "age"], kind="stable").reset_index(drop=True)
    rel = [anatomy(t, qids=["sex"], sensitive="job", l=4, other=["w"], drop=["age"], seed=seed)
           for t in (one, two)]
    a, b = (r.table.drop(columns=["w"]).reset_index(drop=True) for r in rel)
    assert not a.equals(b)                 # the same groups in the same order before


def test_one_table_stored_as_other_types_keys_one_release():
    """A QID of int32 with negative values and the CSV of it (int64) drew
    two releases under one seed: semantic diversity and the partition
    publishers hashed the cells as stored (H95).  Each cell is
    read by its text now, as every path reads it."""
    from anonset import semantic as S
    from anonset.msa import anonymize_msa
    from anonset.partition.baselines import anatomy
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(2)
    n = 400
    base = pd.DataFrame({"temp": rng.integers(-5, 5, n), "job": rng.choice(DOMAIN, n),
                         "s": rng.integers(0, 6, n)})
    kinds = [base.astype({"temp": "int32"}), base]
    sem = [S.semantic_publish(t, "s", l=3, d=1, qids=["temp"], drop=["job"], seed=seed,
                              domain=list(range(6))).sets("s") for t in kinds]
    assert sem[0] == sem[1]
    ana = [anatomy(t, qids=["temp"], sensitive="job", l=3, drop=["s"],
                   seed=seed).table["GID"].tolist() for t in kinds]
    assert ana[0] == ana[1]
    msa = [anonymize_msa(t, ["temp"], ["job"], 10, 0.6, drop=["s"], seed=seed).classes
           .tolist() for t in kinds]
    assert msa[0] == msa[1]


def test_one_table_from_csv_and_parquet_keys_one_release_whatever_its_columns(tmp_path):
    """A date column passed through keyed a frame and the CSV pandas writes
    of it apart (its text '2020-01-01' there, '2020-01-01 00:00:00' here),
    as did a boolean exact QID (the text 'True' against True); a nullable
    column passed through with a missing cell crashed a seeded release and
    every partition publisher (H98)."""
    from anonset.msa import anonymize_msa
    from anonset.stream import publish_file
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(8)
    n = 400
    day = pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 30, n), "D"))
    count = pd.Series(rng.integers(0, 9, n)).astype("Int64")
    count[::17] = pd.NA
    df = pd.DataFrame({"job": rng.choice(DOMAIN, n), "flag": rng.choice([True, False], n),
                       "day": day, "count": count,
                       # an offset, and milliseconds, as the CSV writes them (H100)
                       "local": day.dt.tz_localize("Europe/Paris"),
                       "when": day + pd.to_timedelta(rng.integers(0, 4, n) * 250, "ms")})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet")
    kw = dict(sensitive=["job"], exact=["flag"], other=["day", "count", "local", "when"],
              domains={"job": DOMAIN}, seed=seed)
    sets = []
    for src in ("t.csv", "t.parquet"):
        publish_file(tmp_path / src, tmp_path / f"{src}.out.parquet", anonset.Diversity(4), **kw)
        sets.append(anonset.read_parquet(tmp_path / f"{src}.out.parquet").sets("job"))
    assert sets[0] == sets[1]
    assert anonset.publish(df, anonset.Diversity(4), **kw).sets("job") == sets[1]
    rel = anonymize_msa(df, ["flag"], ["job"], 10, 0.6, other=["day", "count", "local", "when"],
                        seed=seed)
    assert len(rel.classes) == n


def test_one_csv_file_read_by_pandas_or_by_its_own_reader_keys_one_release(tmp_path):
    """A file's own reader keeps a cell passed through as written ('NA',
    'TRUE', '1.50', '1 days 00:00:00.000000'); pandas and Dask read them
    as missing, True, 1.5 and a Timedelta, and a decimal as written: the
    same file gave two releases under one seed (H101)."""
    import decimal

    from anonset.stream import publish_file
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    rng = np.random.default_rng(9)
    n = 400
    lines = ["job,na,yes,price,wait,money"]
    for i in range(n):
        lines.append(",".join([str(rng.choice(DOMAIN)), str(rng.choice(["NA", "x", "y"])),
                               str(rng.choice(["TRUE", "FALSE"])),
                               f"{rng.integers(0, 9)}.{rng.choice([0, 5])}0",
                               f"{rng.integers(0, 3)} days 00:00:0{rng.integers(0, 9)}.000000",
                               f"{rng.integers(0, 9)}.{rng.choice([25, 50])}"]))
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    kw = dict(sensitive=["job"], other=["na", "yes", "price", "wait", "money"],
              domains={"job": DOMAIN}, seed=seed, keep_order=True)
    publish_file(tmp_path / "t.csv", tmp_path / "o.parquet", anonset.Diversity(3), **kw)
    want = anonset.read_parquet(tmp_path / "o.parquet").sets("job")
    frame = pd.read_csv(tmp_path / "t.csv")
    frame["wait"] = pd.to_timedelta(frame["wait"])
    frame["money"] = [decimal.Decimal(f"{v:.2f}") for v in frame["money"]]
    assert anonset.publish(frame, anonset.Diversity(3), **kw).sets("job") == want


SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"


def test_whole_numbers_past_2_53_passed_through_key_one_release(tmp_path):
    """A column passed through of 16-digit whole numbers with a blank cell
    is read by pandas as floats and by the file's own reader as digits:
    '9007199254740994.0' and '9007199254740994' keyed one file two ways
    under one seed, and intersecting the two releases pinned 222 of 775
    people's jobs (H103).  Such numbers key by the double pandas reads."""
    from anonset.stream import publish_file
    rng = np.random.default_rng(3)
    n = 600
    big = pd.array(2 ** 53 + 2 * rng.integers(0, 40, n), dtype="Int64")
    big[5] = pd.NA
    df = pd.DataFrame({"job": rng.choice(DOMAIN, n), "big": big,
                       "city": rng.choice(["Oslo", "Rome", "Lima"], n)})
    df.to_csv(tmp_path / "t.csv", index=False)
    kw = dict(sensitive=["job"], other=["big"], drop=["city"], domains={"job": DOMAIN},
              seed=SEED)
    publish_file(tmp_path / "t.csv", tmp_path / "o.parquet", anonset.Diversity(3), **kw)
    want = anonset.read_parquet(tmp_path / "o.parquet").sets("job")
    read = pd.read_csv(tmp_path / "t.csv")
    assert read["big"].dtype == np.float64            # pandas' read: floats
    assert anonset.publish(read, anonset.Diversity(3), **kw).sets("job") == want
    assert anonset.publish(df, anonset.Diversity(3), **kw).sets("job") == want
    from anonset.lgb import lgb
    ids = [lgb(t, qi=["city"], semi_sensitive=[], sensitive=["job"], other=["big"], k=3, l=2,
               seed=SEED).table["ID"].tolist() for t in (df, read)]
    assert ids[0] == ids[1]


def _people(n=600, seed=0):
    r = np.random.default_rng(seed)
    return pd.DataFrame({
        "pid": r.permutation(n) * 7 + 100003, "age": r.integers(18, 80, n),
        "job": r.choice(["nurse", "clerk", "chef", "pilot", "baker", "smith"], n),
        "city": r.choice(["Oslo", "Rome", "Lima"], n), "sex": r.choice(["F", "M"], n),
        "branch": r.integers(0, 7, n), "extra": r.integers(0, 4, n),
        "junk": r.integers(0, 5, n)})


def _canon(x) -> str:
    x = x.to_pandas() if hasattr(x, "to_pandas") else x
    return x[sorted(x.columns)].astype(str).reset_index(drop=True).to_csv()


def test_one_table_under_one_seed_is_one_release_whatever_its_columns_places():
    """The sets were drawn from streams numbered by each column's place in
    the whole table, identifiers and dropped columns included: a frame
    indexed by its identifier (read as the last column) and the CSV pandas
    writes of it (the index first) drew two releases under one seed, which
    pinned 231 of 774 jobs read together (H103); the partition publishers
    keyed their columns passed through in the table's order.  Streams are
    keyed by name now, and every digest takes the columns by name."""
    from anonset.lgb import lgb
    from anonset.msa import anonymize_msa
    from anonset.partition.baselines import anatomy
    from anonset.randomized.semantic import semantic_publish
    df = _people()
    n = len(df)
    jobs = {
        "publish": lambda d: anonset.publish(
            d, anonset.Diversity(3), sensitive=["job", "age"], exact=["city"],
            identifiers=["pid"], other=["branch", "sex", "extra"], drop=["junk"], seed=SEED,
            bins={"age": [0, 30, 50, 120]}, allow_clear=["age"]),
        "semantic": lambda d: semantic_publish(
            d.drop(columns=["pid", "junk", "branch", "age", "extra"]), "job", 3, 1,
            qids=["city", "sex"], seed=SEED,
            domain=["baker", "chef", "clerk", "nurse", "pilot", "smith"]),
        "anatomy": lambda d: anatomy(
            d.drop(columns=["pid", "junk", "age"]), qids=["city", "sex"], sensitive="job", l=2,
            other=["branch", "extra"], seed=SEED, allow_recode=["city", "sex"]).table,
        "lgb": lambda d: lgb(
            d, qi=["city", "sex"], semi_sensitive=["age"], sensitive=["job"],
            flags=(np.arange(n) % 5 == 0)[:, None], identifiers=["pid"],
            other=["branch", "extra"], drop=["junk"], k=3, l=2, seed=SEED).table,
        "msa": lambda d: anonymize_msa(
            d.drop(columns=["pid", "junk"]), ["age", "sex", "city"], ["job"], k=3, t=0.5,
            other=["branch", "extra"], seed=SEED).generalized(),
    }
    orders = [list(df.columns)[::-1], ["extra", "junk", "sex", "age", "pid", "city", "job",
                                       "branch"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, job in jobs.items():
            want = _canon(job(df))
            for cols in orders:
                assert _canon(job(df[cols])) == want, (name, cols)
        # semantic diversity's QIDs listed the other way: one table (H109:
        # its digest took them in the order given, 86 of 165 incomes pinned)
        sem = [semantic_publish(df.drop(columns=["pid", "junk", "branch", "age", "extra"]),
                                "job", 3, 1, qids=qids, seed=SEED,
                                domain=["baker", "chef", "clerk", "nurse", "pilot", "smith"])
               for qids in (["city", "sex"], ["sex", "city"])]
        assert _canon(sem[0]) == _canon(sem[1])


def test_cells_read_once_per_value_hash_as_cell_by_cell():
    """A long column is hashed once per distinct value where equal values
    key alike (a seeded release paid 1.8 us a cell passed through); the
    hashes are those of the cell-by-cell reading, for every column type."""
    import datetime as dt
    import decimal

    from anonset.io import keys as K
    r = np.random.default_rng(5)
    n = K._DEDUP_MIN + 904

    def pick(values, dtype=None):
        return pd.Series(np.array(values, dtype=object)[r.integers(0, len(values), n)],
                         dtype=dtype)
    cols = {
        "int": pd.Series(r.integers(-50, 50, n)),
        "int32": pd.Series(r.integers(-50, 50, n), dtype="int32"),
        "uint64": pd.Series(np.array([2 ** 64 - 1, 2 ** 63 + 5, 7], np.uint64)[
            r.integers(0, 3, n)]),
        "float": pick([0.0, -0.0, 1.5, np.nan, 2.0, 1e16, 2.0 ** 53 + 2, np.inf, 12.25],
                      "float64"),
        "Int64": pick([1, 2, None, 2 ** 53 + 2, 2 ** 60], "Int64"),
        "float32": pick([0.1, 0.5, np.nan, 3.0], "float32"),
        "bool": pick([True, False], bool),
        "boolean": pick([True, False, None], "boolean"),
        "text": pick(["a", " b", "NA", "", "TRUE", "false", "1.50", "9007199254740995",
                      "1e16", "2020-01-01", "1 days 00:00:00", None]),
        "string": pick(["a", "b", "NA", "12", None], "string"),
        "arrow": pick(["a", "b", "NA", "12"], "string[pyarrow]"),
        "category": pick(["u", "v", "NA", None], "category"),
        "category of ints": pick([1, 2, 3], "category"),
        "dates": pd.Series(pd.to_datetime(pick(["2020-01-01", "2021-03-04 05:06:07.500",
                                                None]), format="ISO8601")),
        "zoned": pd.Series(pd.to_datetime(pick(["2020-01-01", "2021-03-04 05:06:07"]),
                                          format="ISO8601").dt.tz_localize("Europe/Oslo")),
        "durations": pd.Series(pd.to_timedelta(pick(["1 days", "2 hours", None]))),
        "mixed": pick([True, 1, 1.0, "1", None]),
        "decimal": pick([decimal.Decimal("1.50"), decimal.Decimal("2")]),
        "python dates": pick([dt.date(2020, 1, 1), dt.date(2021, 2, 3)]),
    }
    for name, col in cols.items():
        assert np.array_equal(K.cell_text_hashes(col), K._cell_text_hashes(col)), name
    # 2^53 + 2 as a float, an Int64 and its digits key alike; 2^53 + 1 is
    # read by pandas as 2^53 and keys so
    three = [pd.Series([2.0 ** 53 + 2]), pd.Series([2 ** 53 + 2], dtype="Int64"),
             pd.Series(["9007199254740994"])]
    assert len({int(K.cell_text_hashes(c)[0]) for c in three}) == 1
    assert K.cell_text_hashes(pd.Series(["9007199254740993"]))[0] == \
        K.cell_text_hashes(pd.Series([2.0 ** 53]))[0]


def test_a_dask_release_frame_claims_no_divisions_it_lacks():
    """Each partition's index is its rows' places in it, while the
    divisions were the ranks of the shuffle: Dask trusted them, and
    frame.loc[0] gave one row of four (H106)."""
    dd = pytest.importorskip("dask.dataframe")
    df = _table(800)
    pub = anonset.dask.publish(dd.from_pandas(df, npartitions=4), anonset.Diversity(3),
                               sensitive=["job"], identifiers=["rid"],
                               domains={"job": DOMAIN})
    frame = pub.frame
    assert not frame.known_divisions
    whole = frame.compute(scheduler="sync")
    assert len(frame.loc[0].compute(scheduler="sync")) == int((whole.index == 0).sum())


# -------------------------------------------------- lists in another order (H111)
def _adult_rows(n=1500):
    from anonset.datasets import load_adult
    return load_adult().iloc[:n].reset_index(drop=True)


def _groups(labels) -> set:
    labels = np.asarray(labels)
    return {tuple(np.flatnonzero(labels == g)) for g in np.unique(labels)}


@pytest.mark.parametrize("algorithm", ["pca", "cluster", "microagg"])
def test_msa_under_one_seed_is_one_release_whatever_order_its_columns_are_listed(algorithm):
    """The QIs and SAs listed in another order drew another partition under
    one seed: the key's facts named them in order, PCA, FCM and the joint SA
    order took the SAs as listed, the QI tuples and distances the QIs.
    Intersected, the two releases' classes pinned 762 (pca), 641 (cluster)
    and 1,057 (microagg) of 3,000 Adult occupations, against 0 for one
    release (H111).  The published columns keep the order listed."""
    from anonset.msa import anonymize_msa
    df = _adult_rows()[["age", "sex", "race", "marital-status", "occupation", "education"]]
    lists = [(["age", "marital-status", "race", "sex"], ["education", "occupation"]),
             (["race", "marital-status", "age", "sex"], ["occupation", "education"]),
             (["sex", "age", "race", "marital-status"], ["education", "occupation"])]
    res = [anonymize_msa(df, qi, sa, k=5, t=0.35, algorithm=algorithm, seed=SEED)
           for qi, sa in lists]
    for (qi, sa), r in zip(lists, res):
        assert list(r.generalized().columns) == ["ec"] + qi + sa
        assert _groups(r.classes) == _groups(res[0].classes)
        assert (r.order == res[0].order).all() and (r.classes == res[0].classes).all()
        assert _canon(r.generalized()) == _canon(res[0].generalized())
        assert r.information_loss() == pytest.approx(res[0].information_loss(), abs=1e-12)


def test_lgb_under_one_seed_is_one_release_whatever_order_its_columns_are_listed():
    """LGB keyed its draws by the lists in order and processed the
    attributes as listed (Alg. 3's ties of width to the first, one
    generator for every attribute's shown values): the QI groups of two
    releases under one seed intersected to pin 57 of 3,000 occupations,
    where two fresh keys (the same groups) pin none (H111).  An array of
    flags keeps its columns in the order the semi-sensitive ones are listed."""
    from anonset.lgb import lgb
    df = _adult_rows()[["age", "sex", "race", "education", "occupation", "marital-status"]]
    rng = np.random.default_rng(3)
    flag = {"education": rng.random(len(df)) < 0.5, "marital-status": rng.random(len(df)) < 0.3}
    lists = [(["age", "race", "sex"], ["education", "marital-status"]),
             (["sex", "age", "race"], ["marital-status", "education"]),
             (["race", "sex", "age"], ["education", "marital-status"])]
    res = []
    for qi, semi in lists:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res.append(lgb(df, qi=qi, semi_sensitive=semi, sensitive=["occupation"],
                           flags=np.stack([flag[a] for a in semi], axis=1), k=5,
                           l={"education": 2, "marital-status": 2, "occupation": 3},
                           seed=SEED))
    for r in res:
        assert list(r.table.columns[2:]) == [c for c in r.table.columns[2:]
                                             if c in df.columns or c.endswith("_bid")]
        assert _canon(r.table) == _canon(res[0].table)
        for a in r.idt:
            assert r.idt[a].equals(res[0].idt[a]) and r.sat[a].equals(res[0].sat[a])
        assert _groups(r.gid[np.argsort(r.order)]) == _groups(res[0].gid[np.argsort(res[0].order)])
        assert int(r.promoted) == int(res[0].promoted)


def test_flags_drawn_under_one_seed_follow_the_names_not_the_listed_order():
    """lgb --density drew each semi-sensitive column's flags from one
    generator in the order listed: --semi-sensitive listed two ways under
    one seed flagged other cells, and the two releases, linked by their
    IDs, pinned 23 people's education at l = 2 (H113)."""
    from anonset.lgb import draw_flags, lgb
    df = _adult_rows()[["age", "sex", "race", "education", "occupation", "marital-status"]]
    semis = [["education", "marital-status", "race"], ["race", "education", "marital-status"]]
    flags = [draw_flags(df, semi, 0.3, seed=SEED) for semi in semis]
    assert list(flags[1].columns) == semis[1]
    for a in semis[0]:
        assert flags[0][a].equals(flags[1][a]), a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = [lgb(df, qi=["age", "sex"], semi_sensitive=semi, sensitive=["occupation"],
                   flags=f, k=5, l={"education": 2, "marital-status": 2, "occupation": 3},
                   closeness={"race": 0.3}, seed=SEED)
               for semi, f in zip(semis, flags)]
    assert _canon(res[0].table) == _canon(res[1].table)


@pytest.mark.parametrize("method", ["anatomy", "mondrian", "tp"])
def test_a_baseline_under_one_seed_is_one_release_whatever_order_its_qids_are_listed(method):
    """The baselines keyed their draws by the QIDs in order, Mondrian tried
    QIDs of equal width as listed and TP numbered its points by them: under
    one seed the QIDs listed the other way gave another partition (Mondrian
    pinned 19 of 3,000 Adult occupations read with the first release, where
    two fresh keys, the same groups, pin none; TP 975 against 874; H111).
    The QIT and the generalized table keep the QIDs in the order listed."""
    from anonset.partition import baselines
    df = _adult_rows()[["age", "sex", "race", "marital-status", "occupation"]]
    lists = [["age", "marital-status", "race", "sex"], ["marital-status", "race", "sex", "age"],
             ["sex", "age", "marital-status", "race"]]
    kw = {"allow_recode": ["age", "marital-status", "race", "sex"]} if method == "anatomy" \
        else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = [getattr(baselines, method)(df, qids=q, sensitive="occupation", l=4, seed=SEED,
                                          **kw) for q in lists]
    for q, r in zip(lists, res):
        assert [c for c in r.table.columns if c in q] == q
        assert _groups(r.group) == _groups(res[0].group)
        assert _canon(r.table) == _canon(res[0].table)
        assert (r.st is None and res[0].st is None) or r.st.equals(res[0].st)
        assert r.check()["ok"]


def test_rating_under_one_seed_is_one_release_whatever_order_its_attributes_are_listed():
    """Rating keyed its draws by the attributes in order (H111)."""
    from anonset.partition.baselines.rating import rating
    df = _adult_rows()[["occupation", "education", "marital-status"]]
    lists = [["education", "marital-status", "occupation"],
             ["occupation", "education", "marital-status"]]
    res = [rating(df, attributes=a, l=2, seed=SEED) for a in lists]
    assert list(res[1].idt.columns) == lists[1]
    assert _canon(res[0].idt) == _canon(res[1].idt)
    for a in lists[0]:
        assert res[0].at[a].equals(res[1].at[a])


@pytest.mark.parametrize("method", ["anatomy", "mondrian", "tp", "rating"])
def test_a_baseline_under_one_seed_is_one_release_whether_its_whole_numbers_are_int_or_float(
        method):
    """The baselines' key facts spelled each domain value with str(): 37 and
    37.0 (a column with a gap, a CSV's '37.0') keyed one table two ways, and
    the two Anatomy releases read together pinned 412 of 600 diseases
    (H115).  The same table with its numbers as floats is one release."""
    from anonset.partition import baselines
    from anonset.partition.baselines.rating import rating
    df = _adult_rows()[["age", "education-num", "sex", "occupation"]]
    as_float = df.astype({"age": "float64", "education-num": "float64"})
    assert (as_float[["age", "education-num"]] == df[["age", "education-num"]]).all().all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "rating":
            res = [rating(t, attributes=["age", "education-num", "occupation"], l=2, seed=SEED,
                          drop=["sex"]) for t in (df, as_float)]
            for a in ["age", "education-num", "occupation"]:
                one, two = (r.at[a].astype({a: float}) if a != "occupation" else r.at[a]
                            for r in res)
                assert one.equals(two), a
            assert res[0].idt.equals(res[1].idt)
            return
        kw = {"allow_recode": ["age", "education-num", "sex"]} if method == "anatomy" else {}
        res = [getattr(baselines, method)(t, qids=["age", "education-num", "sex"],
                                          sensitive="occupation", l=4, seed=SEED, **kw)
               for t in (df, as_float)]
    assert _groups(res[0].group) == _groups(res[1].group)
    assert (res[0].group == res[1].group).all()
    assert (res[0].st is None and res[1].st is None) or res[0].st.equals(res[1].st)
    assert res[0].table.drop(columns=["age", "education-num"]).equals(
        res[1].table.drop(columns=["age", "education-num"]))        # rows in one order
