"""Safe by default (issue 13): row order carries no information, repeated
releases under a persistent key reveal nothing more than one release, and
CSV cells a spreadsheet would execute are neutralised and restored exactly.
Each test fails on anonset 0.1, which kept the input order, had no persistent
key and wrote cells verbatim."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings, strategies as st
from scipy import stats

import anonset
from anonset.randomized.params import AttributeParams
from anonset.io.keys import derive_key, make_key, shuffled_order
from anonset.stream import publish_file
from anonset.cli import main as cli_main
from anonset.validate import InputError

SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"


def by_check(report) -> pd.DataFrame:
    """An audit's checks indexed by (check, attribute), without the keys the
    table lists more than once (its ('roles', '-') notes): where an index
    repeats any key, pandas < 3 gives a one-row frame for ``.loc[key]``
    where pandas 3 gives the row (H156: three tests failed on pandas 2.0)."""
    c = report.checks
    return c[~c.duplicated(["check", "attribute"], keep=False)].set_index(["check", "attribute"])


def sorted_adult(n=6000):
    df = anonset.datasets.load_adult().head(n).sort_values("age", kind="stable")
    return df.reset_index(drop=True)


def adult_release(df, **kw):
    schema = anonset.datasets.adult_schema(df, attributes=["age", "occupation", "native-country"])
    ls = {a.name: min(5, a.d) for a in schema.sensitive}
    return anonset.publish(df, anonset.Diversity(ls), schema, **kw)


# ------------------------------------------------------------------ order
def test_published_order_is_uncorrelated_with_a_sorted_input():
    df = sorted_adult()
    pub = adult_release(df)
    assert pub.info["row_order"] == "shuffled"
    ages = df["age"].to_numpy()[pub.source_rows]           # true age of each published row
    rho = stats.spearmanr(np.arange(len(ages)), ages).statistic
    assert abs(rho) < 0.06, rho                             # ~N(0, 1/sqrt(n)): 0.013 here
    # the risky opt-out keeps the order, and says so
    kept = adult_release(df, keep_order=True)
    assert kept.info["row_order"] == "input" and kept.source_rows is None
    rho_kept = stats.spearmanr(np.arange(len(df)), df["age"]).statistic
    assert rho_kept > 0.99


def test_a_parquet_file_read_in_several_blocks_is_shuffled_as_one(tmp_path):
    """A file no larger than one block but read in several (a Parquet file
    whose row groups hold a dictionary column come one by one) was shuffled
    block by block, so a published row's position told its row group: on a
    file sorted by diagnosis, one per row group, every set held the
    diagnosis of its position's row group (l/d = 30 % by chance), which with
    the set pins it.  The file is shuffled as one, as in memory."""
    letters = list("abcdefghij")
    n = 1000 * len(letters)
    df = pd.DataFrame({"pid": np.arange(n),
                       "diag": pd.Categorical(np.repeat(letters, 1000), categories=letters)})
    src = tmp_path / "sorted.parquet"
    df.to_parquet(src, row_group_size=1000)                 # one diagnosis per row group
    kw = dict(identifiers=["pid"], sensitive=["diag"])
    publish_file(src, tmp_path / "out.parquet", anonset.Diversity(3), **kw)
    sets = anonset.read_parquet(tmp_path / "out.parquet").sets("diag")
    hit = np.mean([letters[i // 1000] in s for i, s in enumerate(sets)])
    # by chance a set holds the guessed letter with probability l/d = 0.3
    # (sd 0.005 here); shuffled block by block: 1.0
    assert hit < 0.33, hit
    ref = anonset.publish(df, anonset.Diversity(3), seed=SEED, **kw)
    publish_file(src, tmp_path / "seeded.parquet", anonset.Diversity(3), seed=SEED, **kw)
    assert anonset.read_parquet(tmp_path / "seeded.parquet").equals(ref)


def test_order_is_a_pure_function_of_the_key_in_every_path(tmp_path):
    import dask.dataframe as dd
    from anonset import dask as adask
    df = sorted_adult(1500)[["age", "occupation", "sex"]]
    roles = dict(sensitive=["age", "occupation"], drop=["sex"], bins={"age": [0, 30, 50, 120]},
                 allow_clear=["occupation"])         # l = 2 beside rare occupations
    mem = anonset.publish(df, anonset.Diversity(2), seed=SEED, **roles)
    # the order is a keyed permutation of the row indices, keyed by the key,
    # the release's model and parameters (another l: another order) and the
    # table (another wave of the same people: another order, other sets)
    assert sorted(mem.source_rows.tolist()) == list(range(len(df)))
    again = anonset.publish(df, anonset.Diversity(2), seed=SEED, **roles)
    assert again.equals(mem) and np.array_equal(again.source_rows, mem.source_rows)
    l3 = anonset.publish(df, anonset.Diversity(3), seed=SEED, **roles)
    assert not np.array_equal(l3.source_rows, mem.source_rows)
    wave = df.copy()
    wave.loc[7, "occupation"] = "Sales" if wave.loc[7, "occupation"] != "Sales" else "Tech-support"
    later = anonset.publish(wave, anonset.Diversity(2), seed=SEED, **roles)
    assert not np.array_equal(later.source_rows, mem.source_rows)
    back = np.empty_like(mem.source_rows)
    back[mem.source_rows] = np.arange(len(df))
    back2 = np.empty_like(back)
    back2[later.source_rows] = np.arange(len(df))
    same = (mem.mask("age")[back] == later.mask("age")[back2]).all(axis=1)
    assert same.mean() < 0.9          # drawn anew, not the first release's words again
    df.to_csv(tmp_path / "in.csv", index=False)
    for chunk in (97, 1000, 10_000):
        publish_file(tmp_path / "in.csv", tmp_path / "out.parquet", anonset.Diversity(2),
                     chunk_rows=chunk, seed=SEED, **roles)
        assert anonset.read_parquet(tmp_path / "out.parquet").equals(mem), chunk
    pub = adask.publish(dd.from_pandas(df, npartitions=4), anonset.Diversity(2), seed=SEED,
                        scheduler="sync", **roles)
    assert pub.to_settable(scheduler="sync").equals(mem)
    other = anonset.publish(df, anonset.Diversity(2), seed=SEED[::-1], **roles)
    assert not np.array_equal(other.source_rows, mem.source_rows)


# -------------------------------------------------------- repeated releases
def exposed(releases, df, name):
    """Share of records whose value the intersection of their sets in all
    releases pins down (the adversary links a record across releases)."""
    masks = []
    for pub in releases:
        m = np.empty_like(pub.mask(name))
        m[pub.source_rows] = pub.mask(name)                 # back to input order
        masks.append(m)
    inter = masks[0]
    for m in masks[1:]:
        inter = inter & m
    sizes = np.unpackbits(inter.view(np.uint8).reshape(len(inter), -1), axis=1).sum(axis=1)
    return float((sizes == 1).mean())


def test_fresh_keys_expose_values_and_a_persistent_key_does_not(tmp_path):
    df = anonset.datasets.load_adult().head(4000).reset_index(drop=True)
    df.insert(0, "rid", [f"r{i:05d}" for i in range(len(df))])
    schema = anonset.datasets.adult_schema(df.drop(columns="rid"),
                                           attributes=["native-country", "occupation"])
    from dataclasses import replace
    schema = anonset.Schema((anonset.Attribute("rid", role="identifier"),
                             *(replace(a) for a in schema)))
    model = anonset.Diversity(5)
    fresh = [anonset.publish(df, model, schema) for _ in range(3)]
    two, three = exposed(fresh[:2], df, "native-country"), exposed(fresh, df, "native-country")
    assert two > 0.2 and three > two                         # intersection pins values down
    key = tmp_path / "release.key"
    anonset.io.keys.new_key_file(key)
    kept = [anonset.publish(df, model, schema, key_file=key, record_id="rid",
                            first_in_series=True)]
    for _ in range(2):                       # each later release given the latest
        kept.append(anonset.publish(df, model, schema, key_file=key, record_id="rid",
                                    params=kept[-1]))
    assert all(p.info["key"] == "persistent" for p in kept)
    assert exposed(kept, df, "native-country") == 0.0       # no more than one release
    # the same record and value get the same set in every release ...
    for name in ("native-country", "occupation"):
        a = np.empty_like(kept[0].mask(name))
        b = np.empty_like(a)
        a[kept[0].source_rows] = kept[0].mask(name)
        b[kept[1].source_rows] = kept[1].mask(name)
        assert np.array_equal(a, b)
    # ... each release in a fresh order, and the id is never published
    assert not np.array_equal(kept[0].source_rows, kept[1].source_rows)
    assert "rid" not in kept[0].schema and "rid" not in kept[0].to_pandas().columns
    # a changed value gets a fresh, independent set
    moved = df.copy()
    moved.loc[0, "native-country"] = "Canada" if df.loc[0, "native-country"] != "Canada" \
        else "Mexico"
    again = anonset.publish(moved, model, schema, key_file=key, record_id="rid",
                            params=kept[-1])
    a = np.empty_like(again.mask("native-country"))
    a[again.source_rows] = again.mask("native-country")
    b = np.empty_like(a)
    b[kept[0].source_rows] = kept[0].mask("native-country")
    assert np.array_equal(a[1:], b[1:]) and not np.array_equal(a[0], b[0])


def test_one_persons_rows_are_refused_unless_a_record_id_ties_them(tmp_path, capsys):
    """Panel data (one person's waves or visits in one table): fresh sets
    per row intersect toward the person's value wherever the rows can be
    linked (in AER's PSID7682, 595 people in 7 waves each, the intersection
    gave every person's education at l = 4).  It was a warning; now every
    path refuses it with one line, the same on each, and the command line
    with exit 2 and nothing written.  A key file with the person's id as
    record id gives the person's rows one set per value, and the
    intersection reveals nothing more; naming the column
    (``allow_shared_id``: a household's id) publishes, and the metadata,
    the summary and the audit say so."""
    from anonset.cli import main
    adult = anonset.datasets.load_adult().head(1500).reset_index(drop=True)
    visits = np.random.default_rng(3).integers(1, 5, len(adult))   # 1-4 rows a person
    df = adult.loc[np.repeat(adult.index, visits)].reset_index(names="pid")
    schema = anonset.datasets.adult_schema(adult, attributes=["occupation", "native-country"])
    sens = [a.name for a in schema.sensitive]
    kw = dict(identifiers=["pid"], drop=[c for c in adult.columns if c not in sens],
              sensitive=sens, domains={a.name: list(a.domain) for a in schema.sensitive})
    model = anonset.Diversity(5)
    shared = int((df.groupby("pid").pid.transform("size") > 1).sum())

    def pinned(pub):
        """Share of the persons with several rows whose occupation the
        intersection of their rows' sets pins down."""
        m = _in_input_order(pub, "occupation")
        inter = pd.Series(list(m[:, 0])).groupby(df.pid).agg(np.bitwise_and.reduce)
        several = df.groupby("pid").size() > 1
        bits = np.unpackbits(inter[several].to_numpy(np.uint64).view(np.uint8))
        return float((bits.reshape(-1, 64).sum(axis=1) == 1).mean())

    line = _refused_alike(df, model, kw, tmp_path, "pid", chunk_rows=700)
    assert line.startswith(f"is an identifier whose values {shared:,} rows share with other "
                           "rows: if such rows are one person's (panel waves, visits), each "
                           "draws its sets independently"), line
    assert line.endswith("expected one person's rows tied by a record id (record_id='pid' with "
                         "key_file and declared domains: one set per value per person), or one "
                         "row per person, or, if rows that share it are different people's (a "
                         "household, a site), the risk named: allow_shared_id=['pid']"), line
    # named: published on every path without a warning, and recorded
    outs = {"csv": tmp_path / "o1.parquet", "parquet": tmp_path / "o2.parquet"}
    for path, run in _four_paths(df, model, {**kw, "allow_shared_id": ["pid"]}, tmp_path,
                                 chunk_rows=700).items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.SharedIdWarning)
            pub = run()
        if path in outs:
            pub = anonset.read_parquet(outs[path])
        assert pub.info["shared_ids"] == {"pid": shared}, path
        assert pub.info["shared_ids_allowed"] == ["pid"], path
    fresh = anonset.publish(df, model, seed=SEED, allow_shared_id=["pid"], **kw)
    assert pinned(fresh) > 0.2                          # 2-4 rows of l = 5 sets: the risk
    row = anonset.audit(fresh).checks.query("check == 'shared_id'").iloc[0]
    assert (row.status, row.value) == ("warn", shared)
    assert row.message.endswith("(published as the user allowed: allow_shared_id)"), row.message
    # the remedy: one set per value per person
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    tied = anonset.publish(df, model, key_file=key, record_id="pid", first_in_series=True,
                           **kw)
    assert pinned(tied) == 0.0 and tied.info["shared_ids"] == {"pid": shared}
    assert "shared_ids_allowed" not in tied.info
    checks = anonset.audit(tied).checks.set_index("check")
    assert checks.loc["shared_id", "status"] == "pass"
    # a name that is not an identifier, or is the record id: refused
    for bad, words in ((["occupation"], "which is not an identifier column"),
                       (["pid"], "the record id")):
        with pytest.raises(InputError, match=words):
            anonset.publish(df, model, key_file=key, record_id="pid", first_in_series=True,
                            allow_shared_id=bad, **kw)
    # the command line: one line, exit 2, nothing written; named, the summary says so
    capsys.readouterr()
    args = ["anonymize", str(tmp_path / "r.csv"), "-o", str(tmp_path / "c.csv"),
            "--identifier", "pid", "--sensitive", ",".join(kw["sensitive"]),
            "--drop", ",".join(kw["drop"]), "--l", "5",
            *[f"--domain={c}={','.join(v)}" for c, v in kw["domains"].items()]]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("the risk named: --allow-shared-id pid") and "\n" not in err, err
    assert "(--record-id pid with --key-file and declared domains" in err, err
    assert not (tmp_path / "c.csv").exists()
    assert main(args + ["--allow-shared-id", "pid"]) == 0
    err = capsys.readouterr().err
    assert (f"as different people's (you allowed it: if they are one person's, linking them "
            f"narrows down the person's values): pid ({shared:,} rows)") in err, err


def test_an_identifier_that_is_not_the_record_id_is_refused_when_it_repeats(tmp_path):
    """Under a persistent key, rows that share the record id are one
    record's; rows that share another identifier would be drawn as
    different records.  Right for a household, wrong for one person's
    visits tied by a visit number: refused on every path unless named
    (``allow_shared_id``), and then the metadata names the record id and
    the audit warns on the other identifier, saying the user allowed it."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    rng = np.random.default_rng(11)
    n = 600
    pid = rng.integers(0, 200, n)
    # a person's job is the same in each visit (one that changes is refused
    # under the record id pid unless named: H65)
    df = pd.DataFrame({"visit": np.arange(n), "pid": pid,
                       "job": rng.choice(list("abcdef"), 200)[pid]})
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kw = dict(identifiers=["visit", "pid"], sensitive=["job"], key_file=key,
              domains={"job": list("abcdef")}, first_in_series=True)
    model = anonset.Diversity(3)
    shared = int((df.groupby("pid").pid.transform("size") > 1).sum())
    df.to_csv(tmp_path / "v.csv", index=False)

    def paths(**more):
        return (lambda: anonset.publish(df, model, **kw, **more),
                lambda: publish_file(tmp_path / "v.csv", tmp_path / "v.parquet", model,
                                     chunk_rows=150, **kw, **more),
                lambda: adask.publish(dd.from_pandas(df, npartitions=3), model,
                                      scheduler="sync", **kw, **more)
                .to_settable(scheduler="sync"))
    said = set()
    for run in paths(record_id="visit"):
        with pytest.raises(InputError) as e:
            run()
        said.add(str(e.value).split("column 'pid': ", 1)[1])
    assert len(said) == 1 and not (tmp_path / "v.parquet").exists(), said
    assert said.pop().endswith("expected record_id='pid' if they are one person's rows (the "
                               "record id is 'visit', so they are drawn as different records), "
                               "or, if rows that share it are different people's (a household, "
                               "a site), the risk named: allow_shared_id=['pid']")
    for rid, allow, status in (("visit", ["pid"], "warn"), ("pid", [], "pass")):
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.SharedIdWarning)
            warnings.simplefilter("ignore", UserWarning)         # the series advice
            pubs = [run() for run in paths(record_id=rid, allow_shared_id=allow)]
        pubs[1] = anonset.read_parquet(tmp_path / "v.parquet")      # the streamed one
        for pub in pubs:
            assert pub.info["record_id"] == rid and pub.info["key"] == "persistent"
            assert pub.info["shared_ids"] == {"pid": shared}
            assert pub.info.get("shared_ids_allowed", []) == allow
            row = anonset.audit(pub).checks.query("check == 'shared_id'").iloc[0]
            assert (row.attribute, row.status) == ("pid", status), row.message
            if status == "warn":
                assert "the record id is visit" in row.message
                assert "name pid as the record id" in row.message
                assert row.message.endswith("(published as the user allowed: allow_shared_id)")
    with pytest.raises(InputError, match="the risk named: allow_shared_id=\\['pid'\\]"):
        anonset.publish(df, model, seed=SEED, **{**kw, "key_file": None,
                                                 "first_in_series": False})


def _in_input_order(pub, name):
    m = np.empty_like(pub.mask(name))
    m[pub.source_rows] = pub.mask(name)
    return m


def test_a_record_id_means_one_record_however_it_is_typed(tmp_path):
    """The same ids as ints, as floats (a column with a gap turns float in
    pandas and Parquet), as zero-padded text read from a CSV: one record
    each, so a persistent key draws the same sets in every form and path."""
    rng = np.random.default_rng(6)
    n = 500
    df = pd.DataFrame({"rid": np.arange(1, n + 1), "job": rng.choice(list("abcd"), n)})
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kw = dict(identifiers=["rid"], sensitive=["job"], key_file=key, record_id="rid",
              domains={"job": list("abcd")}, keep_order=True, first_in_series=True)
    model = anonset.Diversity(2)
    want = anonset.publish(df, model, **kw).mask("job")
    as_float = anonset.publish(df.assign(rid=df.rid.astype(float)), model, **kw).mask("job")
    padded = df.assign(rid=df.rid.map(lambda i: f"{i:06d}"))
    as_text = anonset.publish(padded, model, **kw).mask("job")
    padded.to_csv(tmp_path / "p.csv", index=False)
    publish_file(tmp_path / "p.csv", tmp_path / "p.parquet", model, chunk_rows=77, **kw)
    streamed = anonset.read_parquet(tmp_path / "p.parquet").mask("job")
    for got in (as_float, as_text, streamed):
        assert np.array_equal(got, want)
    # '7' and '007' are one id then: one record's two rows, whose equal
    # values get one set (counted in the metadata as rows sharing an id)
    two = anonset.publish(padded.assign(rid=["7", "007"] + list(padded.rid[2:]),
                                        job=["c", "c"] + list(padded.job[2:])), model, **kw)
    assert np.array_equal(two.mask("job")[0], two.mask("job")[1])
    assert two.info["shared_ids"] == {"rid": 3}       # and row 7's own '000007'


@pytest.mark.skipif(__import__("os").name != "posix", reason="POSIX file modes")
def test_a_key_file_others_can_read_is_named(tmp_path):
    import os
    import warnings
    from anonset.io.keys import read_key_file
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        secret = read_key_file(key)                     # 600, as keygen writes it: silent
    os.chmod(key, 0o644)
    with pytest.warns(UserWarning, match=r"k.key' can be read or written by other users "
                                         r"\(mode 644\).*chmod 600"):
        assert read_key_file(key) == secret             # read all the same


def test_a_persistent_key_survives_changes_between_releases(tmp_path):
    """Every release under a persistent key gives a record the same sets,
    whatever else changed: a column added, dropped or moved, a value that
    appears in the data for the first time, another set of records; with
    t-closeness the first release's parameters pin (p, eta)."""
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame({"rid": [f"p{i}" for i in range(n)],
                       "job": rng.choice(list("abcde"), n),
                       "town": rng.choice(list("wxyz"), n, p=[0.4, 0.3, 0.2, 0.1]),
                       "sex": rng.choice(["f", "m"], n)})
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    domains = {"job": list("abcdef"), "town": list("wxyz")}     # 'f': nobody, yet
    kw = dict(identifiers=["rid"], exact=["sex"], key_file=key, record_id="rid",
              domains=domains)
    model = anonset.Diversity(3)
    first = anonset.publish(df, model, sensitive=["job", "town"], first_in_series=True, **kw)
    assert first.info["streams"] == "name" and first.info["first_in_series"] is True
    # a new column in front, the columns in another order, one column less
    wider = df.assign(wave=2)[["wave", "town", "rid", "sex", "job"]]
    # every later release is given the series' latest
    second = anonset.publish(wider, model, sensitive=["job", "town"], drop=["wave"],
                             params=first, **kw)
    assert "first_in_series" not in second.info
    only_job = anonset.publish(df, model, sensitive=["job"], drop=["town"], params=second,
                               **dict(kw, domains={"job": domains["job"]}))
    # a value nobody had before, held by one new record
    grown = pd.concat([df, pd.DataFrame({"rid": ["new"], "job": ["f"], "town": ["w"],
                                         "sex": ["f"]})], ignore_index=True)
    third = anonset.publish(grown, model, sensitive=["job", "town"], params=only_job, **kw)
    for name in ("job", "town"):
        a = _in_input_order(first, name)
        assert np.array_equal(a, _in_input_order(second, name)), name
        assert np.array_equal(a, _in_input_order(third, name)[:n]), name
    assert np.array_equal(_in_input_order(first, "job"), _in_input_order(only_job, "job"))
    # the streamed and Dask paths draw the same name-keyed sets
    import dask.dataframe as dd
    from anonset import dask as adask
    ordered = dict(kw, keep_order=True, params=third)
    mem = anonset.publish(wider, model, sensitive=["job", "town"], drop=["wave"], **ordered)
    wider.to_parquet(tmp_path / "w.parquet")
    streamed = publish_file(tmp_path / "w.parquet", tmp_path / "p.parquet", model, chunk_rows=701,
                            sensitive=["job", "town"], drop=["wave"], **ordered)
    assert streamed.info["streams"] == "name"
    lazy = adask.publish(dd.from_pandas(wider, npartitions=3), model, scheduler="sync",
                         sensitive=["job", "town"], drop=["wave"], **ordered)
    back = anonset.read_parquet(tmp_path / "p.parquet")
    for name in ("job", "town"):
        assert np.array_equal(mem.mask(name), _in_input_order(first, name))
        assert np.array_equal(back.mask(name), mem.mask(name))
    assert lazy.to_settable(scheduler="sync").equals(mem)
    # every release keys its streams by name (H103: by place, one table
    # under one seed drew two releases when its columns moved)
    assert anonset.publish(df, model, sensitive=["job", "town"], identifiers=["rid"],
                           exact=["sex"]).info["streams"] == "name"
    # t-closeness: Algorithm 1's (p, eta) depend on each release's data ...
    closeness = anonset.Closeness(0.15)
    with pytest.warns(UserWarning, match=r"params=this; .* keeps the \(p, eta\) that "
                                         r"Algorithm 1 chose here for t-closeness"):
        c1 = anonset.publish(df, closeness, sensitive=["job", "town"], first_in_series=True,
                             **kw)
    shifted = df.copy()
    shifted.loc[: n // 3, "town"] = "w"      # p: 0.172 -> 0.199, apart on the 1/256 grid
    free = anonset.publish(shifted, closeness, sensitive=["job", "town"], seed=SEED,
                           identifiers=["rid"], exact=["sex"], domains=domains)
    assert (free.params["town"].p, free.params["town"].eta) != \
        (c1.params["town"].p, c1.params["town"].eta)
    # ... so a later release takes the first one's, checked on its own data
    c2 = anonset.publish(shifted.iloc[n // 3 + 1:], closeness, sensitive=["job", "town"],
                         params=c1, **kw)
    assert c2.info["params"] == "given"
    # an exact QID's parameters are fixed: one that met a new value (another
    # d) takes the earlier release's parameters all the same
    third_sex = shifted.iloc[n // 3 + 1:].copy()
    third_sex.iloc[0, third_sex.columns.get_loc("sex")] = "x"
    c3 = anonset.publish(third_sex, closeness, sensitive=["job", "town"], params=c1, **kw)
    assert c3.params["sex"].d == 3 and c3.params["sex"].exact
    for name in ("job", "town"):
        assert np.array_equal(_in_input_order(c1, name)[n // 3 + 1:], _in_input_order(c2, name))
    # the audit names what the first release needs of later ones
    def key_row(pub):
        return anonset.audit(pub).checks.query("check == 'key'").iloc[0]
    assert key_row(c1).status == "warn" and "--params-from" in key_row(c1).message
    assert key_row(c2).status == "pass" and key_row(first).status == "info"
    older = anonset.publish(df, model, sensitive=["job", "town"], first_in_series=True, **kw)
    del older.info["streams"]                   # as versions before name-keyed streams wrote
    assert key_row(older).status == "warn" and "keyed by its position" in key_row(older).message
    # parameters that would break t on the new data are refused, not used
    with pytest.raises(ValueError, match="exceeds the largest p admissible"):
        anonset.publish(shifted, anonset.Closeness(0.01), sensitive=["job", "town"],
                        params=c1, **kw)


def test_a_series_may_add_a_column_and_carries_on_the_ones_it_leaves_out(tmp_path):
    """A persistent-key series: release 2 drops a column of release 1 and
    adds one the series never published; release 3, given only release 2,
    publishes the dropped column again.  The new column, named so
    (new_in_series; a renamed one would draw new sets for old values), gets
    parameters chosen for release 2 (release 2 was refused however named
    before), and release 2 carries release 1's parameters and domain of the
    column it left out, so release 3 draws that column's sets as release 1
    did (without them it would choose (p, eta) anew and redraw every set,
    and the two releases intersect toward the true values)."""
    rng = np.random.default_rng(12)
    n = 2500
    df = pd.DataFrame({"rid": np.arange(n),
                       "job": rng.choice(list("abcde"), n, p=[.4, .3, .15, .1, .05]),
                       "town": rng.choice(list("wxyz"), n, p=[.4, .3, .2, .1]),
                       "tv": rng.choice(list("0123"), n, p=[.1, .2, .3, .4])})
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    domains = {"job": list("abcde"), "town": list("wxyz"), "tv": list("0123")}
    kw = dict(identifiers=["rid"], key_file=key, record_id="rid")

    def release(sensitive, drop, **more):
        return anonset.publish(df, model, sensitive=sensitive, drop=[drop],
                               domains={c: domains[c] for c in sensitive}, **kw, **more)
    model = anonset.Closeness(0.2)
    with pytest.warns(UserWarning, match="params=this"):
        r1 = release(["job", "town"], "tv", first_in_series=True)
    # a column the earlier release lacks may be one renamed since (new sets
    # for old values): refused unless named new to the series
    with pytest.raises(InputError, match=r"params: the earlier release has no parameters for "
                                         r"the sensitive column\(s\) \['tv'\].*not one "
                                         r"renamed.*new_in_series=\['tv'\]"):
        release(["town", "tv"], "job", params=r1)
    with pytest.raises(InputError, match=r"new_in_series: column 'town': was published by"):
        release(["town", "tv"], "job", params=r1, new_in_series=["tv", "town"])
    with pytest.raises(InputError, match=r"new_in_series: names \['tv'\], but no earlier"):
        release(["town", "tv"], "job", new_in_series=["tv"])
    r2 = release(["town", "tv"], "job", params=r1, new_in_series=["tv"])
    assert r2.info["params"] == "partly given" and r2.info["new_in_series"] == ["tv"]
    assert r2.params["town"] == r1.params["town"]
    assert r2.info["series"] == {"job": {"params": r1.params["job"].to_dict(),
                                         "domain": list("abcde")}}
    # the audit names what later releases need of the parameters chosen here
    row = anonset.audit(r2).checks.query("check == 'key'").iloc[0]
    assert row.status == "warn" and "--params-from" in row.message
    # release 3 is given release 2 only, from its file (the CLI's way)
    r2.to_parquet(tmp_path / "r2.parquet")
    r2_file = anonset.read_parquet(tmp_path / "r2.parquet")
    r3 = release(["job", "tv"], "town", params=r2_file)
    assert r3.info["params"] == "given" and "new_in_series" not in r3.info
    assert r3.params["job"] == r1.params["job"] and r3.params["tv"] == r2.params["tv"]
    for name, earlier in (("job", r1), ("tv", r2)):
        assert np.array_equal(_in_input_order(r3, name), _in_input_order(earlier, name)), name
    assert np.array_equal(_in_input_order(r2, "town"), _in_input_order(r1, "town"))
    # the carried domain is held to as a published one is
    with pytest.raises(InputError, match=r"column 'job': has another domain than in"):
        anonset.publish(df, model, sensitive=["job"], drop=["town", "tv"], params=r2_file,
                        domains={"job": list("abcdef")}, **kw)
    # the command line: --params-from a release that lacks a column adds it
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    def cli(i, sensitive, drop, *more):
        doms = [x for c in sensitive for x in ("--domain", f"{c}={','.join(domains[c])}")]
        return cli_main(["anonymize", str(src), "-o", str(tmp_path / f"c{i}.parquet"), "-q",
                         "--identifier", "rid", "--key-file", str(key), "--record-id", "rid",
                         "--t", "0.2", "--sensitive", ",".join(sensitive), "--drop", drop,
                         *doms, *more])
    assert cli(1, ["job", "town"], "tv", "--first-in-series") == 0
    assert cli(2, ["town", "tv"], "job", "--params-from", str(tmp_path / "c1.parquet")) == 2
    assert cli(2, ["town", "tv"], "job", "--params-from", str(tmp_path / "c1.parquet"),
               "--new-in-series", "tv") == 0
    assert cli(3, ["job", "tv"], "town", "--params-from", str(tmp_path / "c2.parquet")) == 0
    c1, c2, c3 = (anonset.read_parquet(tmp_path / f"c{i}.parquet") for i in (1, 2, 3))
    assert c3.params["job"] == c1.params["job"] and c3.params["tv"] == c2.params["tv"]


def test_a_closeness_series_whose_data_moves_a_little_says_how_to_go_on(tmp_path):
    """Algorithm 1 gives a series' first release the largest p its data
    admits under t; a later release whose data admits a hair less is
    refused (another p would redraw every set), and the message says what
    to do: a first release under a smaller t leaves room, and then the
    later release keeps every set."""
    rng = np.random.default_rng(2)     # p 0.2500x: the 1/256 grid leaves no room
    n = 3000
    towns = list("vwxyz")
    df = pd.DataFrame({"rid": np.arange(n),
                       "town": rng.choice(towns, n, p=[.4, .25, .15, .12, .08])})
    later = df.copy()
    # 20 people moved from the rarest town to the second largest: the
    # largest admissible p falls a little below the first one's
    later.loc[later.index[later.town == "z"][:20], "town"] = "w"
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kw = dict(sensitive=["town"], identifiers=["rid"], domains={"town": towns}, key_file=key,
              record_id="rid")
    t = anonset.Closeness(0.15, ground="equal")
    with pytest.warns(UserWarning, match="params=this"):
        first = anonset.publish(df, t, first_in_series=True, **kw)
    free = anonset.publish(later, t, first_in_series=True, **kw)   # what its data alone gives
    assert (free.params["town"].eta, free.params["town"].p) != \
        (first.params["town"].eta, first.params["town"].p)
    if free.params["town"].eta == first.params["town"].eta:
        assert free.params["town"].p < first.params["town"].p
    with pytest.raises(ValueError, match=r"params: column 'town': p = .* exceeds the largest p "
                                         r"admissible for t = 0.15 .* admits that p at t = "
                                         r"([0-9.]+) \(the least t it needs, rounded up to a "
                                         r"step of 1/200\); expected .*under the t named.*smaller t") as e:
        anonset.publish(later, t, params=first, **kw)
    assert "\n" not in str(e.value)
    # the t it names keeps every set (a weaker t, named by the user and recorded)
    need = float(re.search(r"admits that p at t = ([0-9.]+)", str(e.value)).group(1))
    # on a grid of 1/200, so the t published names no exact count (H76)
    assert need == 0.155
    # ... and spells that t out, for Python and the command line
    assert f"(t={{'town': {need:g}}}; --t town={need:g};" in str(e.value)
    kept = anonset.publish(later, anonset.Closeness(need, ground="equal"), params=first, **kw)
    assert kept.params["town"].t == need and kept.params["town"].p == first.params["town"].p
    assert anonset.audit(kept, later).conforms
    # with room: the first release under a smaller t, the later one under t
    with pytest.warns(UserWarning, match="params=this"):
        roomy = anonset.publish(df, anonset.Closeness(0.14, ground="equal"),
                                first_in_series=True, **kw)
    second = anonset.publish(later, t, params=roomy, **kw)
    assert second.params["town"].t == 0.15 and second.params["town"].p == roomy.params["town"].p
    same = (df.town == later.town).to_numpy()
    assert np.array_equal(_in_input_order(roomy, "town")[same],
                          _in_input_order(second, "town")[same])


def test_the_t_a_refusal_names_is_on_a_coarse_grid(tmp_path):
    """The least t a later release needs at the series' p is a closed form
    of its column's counts: named at six digits (and so recorded as the
    model's t) two waves told a value's exact counts, 1,530 and 1,531, and
    so that one person moved (H76).  It is named on a grid of 1/200, never
    below the t needed, and one person's move leaves it as it was."""
    from anonset.emd import Ground
    from anonset.randomized.closeness_search import worst_emd
    n, rng = 20000, np.random.default_rng(0)
    base = np.array(["neg"] * n, dtype=object)
    base[rng.choice(n, 1530, replace=False)] = "pos"
    w1 = base.copy()
    w1[rng.choice(np.flatnonzero(base == "pos"), 30, replace=False)] = "neg"
    w3 = base.copy()
    w3[int(np.flatnonzero(base == "neg")[7])] = "pos"
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kw = dict(sensitive=["hiv"], identifiers=["rid"], domains={"hiv": ["neg", "pos"]},
              key_file=key, record_id="rid")

    def frame(v):
        return pd.DataFrame({"rid": np.arange(n), "hiv": v})

    with pytest.warns(UserWarning, match="params=this"):
        first = anonset.publish(frame(w1), anonset.Closeness(0.1), first_in_series=True, **kw)
    named = []
    for v in (base, w3):
        with pytest.raises(ValueError, match="admits that p at t = ") as e:
            anonset.publish(frame(v), anonset.Closeness(0.1), params=first, **kw)
        t = float(re.search(r"admits that p at t = ([0-9.]+)", str(e.value)).group(1))
        counts = np.array([(v == "neg").sum(), (v == "pos").sum()])
        exact = worst_emd(counts, first.params["hiv"].eta, first.params["hiv"].p,
                          Ground.equal(2)).value
        assert exact <= t < exact + 1 / 200 and abs(t * 200 - round(t * 200)) < 1e-9
        assert f"--t hiv={t:g};" in str(e.value)
        named.append(t)
        kept = anonset.publish(frame(v), anonset.Closeness(t), params=first, **kw)
        assert kept.metadata()["model"]["t"] == t
    assert named[0] == named[1]


def test_params_from_an_earlier_release_on_the_command_line(tmp_path, capsys):
    from anonset.cli import main
    rng = np.random.default_rng(4)
    n = 2000
    df = pd.DataFrame({"rid": np.arange(n), "job": rng.choice(list("abcd"), n),
                       "town": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1])})
    df.to_csv(tmp_path / "w1.csv", index=False)
    df.iloc[::-1].assign(wave=2).to_csv(tmp_path / "w2.csv", index=False)
    (tmp_path / "jobs.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "towns.txt").write_text("x\ny\nz\n")
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    common = ["--identifier", "rid", "--sensitive", "job,town", "--t", "0.2",
              "--key-file", str(key), "--record-id", "rid", "--keep-order",
              "--domain", f"job={tmp_path / 'jobs.txt'}", "--domain", f"town={tmp_path / 'towns.txt'}"]
    assert main(["anonymize", str(tmp_path / "w1.csv"), "-o", str(tmp_path / "p1.parquet"),
                 "--first-in-series", *common]) == 0
    assert "--params-from" in capsys.readouterr().err
    assert main(["anonymize", str(tmp_path / "w2.csv"), "-o", str(tmp_path / "p2.parquet"),
                 "--drop", "wave", "--params-from", str(tmp_path / "p1.parquet"), *common]) == 0
    p1 = anonset.read_parquet(tmp_path / "p1.parquet")
    p2 = anonset.read_parquet(tmp_path / "p2.parquet")
    assert p2.info["params"] == "given"
    for name in ("job", "town"):
        assert (p1.params[name].p, p1.params[name].eta) == (p2.params[name].p, p2.params[name].eta)
        assert np.array_equal(p1.mask(name), p2.mask(name)[::-1])
    # the same from a config file (its paths relative to the file)
    import json
    (tmp_path / "c.json").write_text(json.dumps({"params_from": "p1.parquet"}))
    assert main(["anonymize", str(tmp_path / "w2.csv"), "-o", str(tmp_path / "p4.parquet"),
                 "--drop", "wave", "--config", str(tmp_path / "c.json"), *common]) == 0
    p4 = anonset.read_parquet(tmp_path / "p4.parquet")
    assert p4.info["params"] == "given" and np.array_equal(p4.mask("job"), p2.mask("job"))
    # a later release warns what no release can check (H65)
    err = capsys.readouterr().err
    assert re.search(r"persistent key: a value of [\w, ]+ that changed since '[^']*p1\.parquet' "
                     r"draws a fresh set", err) and "reads it off" in err, err
    # a domain the earlier release declared and this one does not: the line
    # says the earlier release holds it (declare it again, the same)
    i = common.index(f"town={tmp_path / 'towns.txt'}")
    partial = common[:i - 1] + common[i + 1:]              # without --domain town=...
    assert main(["anonymize", str(tmp_path / "w2.csv"), "-o", str(tmp_path / "p6.parquet"),
                 "--drop", "wave", "--params-from", str(tmp_path / "p1.parquet"), *partial]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and not (tmp_path / "p6.parquet").exists()
    assert "p1.parquet' holds the domain of ['town']: declare it again, the same" in err, err
    # a release without a column's parameters: exit 2, one line, no output
    df.assign(extra=df.job).to_csv(tmp_path / "w3.csv", index=False)
    assert main(["anonymize", str(tmp_path / "w3.csv"), "-o", str(tmp_path / "p3.parquet"),
                 "--sensitive", "extra", "--domain", f"extra={tmp_path / 'jobs.txt'}",
                 "--params-from", str(tmp_path / "p1.parquet"), *common]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "p1.parquet" in err and "['extra']" in err, err
    assert not (tmp_path / "p3.parquet").exists()
    # parameters this release's data does not admit: the line names the
    # input, --params-from and the column, and the t to publish under
    moved = df.assign(town=np.where(np.arange(n) < n // 2, "z", df.town))
    moved.to_csv(tmp_path / "w5.csv", index=False)
    assert main(["anonymize", str(tmp_path / "w5.csv"), "-o", str(tmp_path / "p5.parquet"),
                 "--params-from", str(tmp_path / "p1.parquet"), *common]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and not (tmp_path / "p5.parquet").exists()
    assert re.search(r"'.*w5.csv': --params-from: column 'town': p = .* exceeds the largest p "
                     r"admissible for t = 0.2 .* --t job=0.2,town=", err), err


def _series(n=1500, seed=5):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rid": np.arange(n), "job": rng.choice(list("abcd"), n),
                         "town": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1])})


def test_a_later_release_that_would_redraw_the_sets_is_refused(tmp_path, capsys):
    """Under a persistent key a record's set is a function of the column's
    domain (its values and their order give the codes) and the generator as
    well: a later release with a value added to a declared domain, one taken
    out, or the same values reordered, redraws every set of the column, and
    the two releases intersect toward the true values.  Given the first
    release (``params=first``; ``--params-from``), such a release is refused
    with the same words on every path, and nothing is written; the first
    release warns that later ones need it."""
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset.cli import main
    df = _series()
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    jobs = list("abcde")
    kw = dict(identifiers=["rid"], key_file=key, record_id="rid", sensitive=["job", "town"])
    model = anonset.Diversity(3)
    with pytest.warns(UserWarning, match=r"params=this; --params-from THIS_RELEASE\), and each "
                                         r"one after it with the latest before it, which refuses "
                                         r"a changed domain; otherwise.*a year of birth, not an "
                                         r"age"):
        first = anonset.publish(df, model, domains={"job": jobs, "town": list("xyz")},
                                first_in_series=True, **kw)
    first.to_parquet(tmp_path / "first.parquet")
    on_disk = anonset.read_parquet(tmp_path / "first.parquet")
    # the same domain: accepted with no warning but what no release can check
    # (H65), the same sets; a column left out is fine
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", "persistent key: a value of")
        again = anonset.publish(df, model, domains={"job": jobs, "town": list("xyz")},
                                params=first, **kw)
        only_job = anonset.publish(df, model, domains={"job": jobs}, params=on_disk,
                                   **dict(kw, sensitive=["job"], drop=["town"]))
    assert again.info["params"] == "given"
    for name in ("job", "town"):
        assert np.array_equal(_in_input_order(first, name), _in_input_order(again, name))
    assert np.array_equal(_in_input_order(first, "job"), _in_input_order(only_job, "job"))
    # the parameters alone cannot tell: under a persistent key a mapping of
    # them is refused (H40, H41: they kept every set and skipped the series'
    # checks), a pickled copy's too
    import pickle
    for params in (first.params, pickle.loads(pickle.dumps(first)).params):
        with pytest.raises(InputError, match=r"^params: is a mapping of parameters, which under "
                                             r"a persistent key \(record_id\) shows neither"):
            anonset.publish(df, model, domains={"job": jobs[::-1], "town": list("xyz")},
                            params=params, **kw)
    cases = {
        "grown": (jobs + ["f"], "1 new value ('f')"),
        "shrunk": (jobs[:4], "1 value gone ('e')"),
        "reordered": (jobs[::-1], "the same values in another order (position 0: 'a' before, "
                                  "'e' now)"),
    }
    df.to_parquet(tmp_path / "w.parquet")
    df.to_csv(tmp_path / "w.csv", index=False)
    (tmp_path / "towns.txt").write_text("x\ny\nz\n")
    for label, (dom, words) in cases.items():
        doms = {"job": dom, "town": list("xyz")}
        errors = []
        for prior in (first, on_disk):
            with pytest.raises(InputError) as e:
                anonset.publish(df, model, domains=doms, params=prior, **kw)
            errors.append(str(e.value))
        for src in ("w.parquet", "w.csv"):
            with pytest.raises(InputError) as e:
                publish_file(tmp_path / src, tmp_path / "out.parquet", model, domains=doms,
                             params=first, **kw)
            errors.append(str(e.value).replace(f"{str(tmp_path / src)!r}: ", ""))
        with pytest.raises(InputError) as e:
            adask.publish(dd.from_pandas(df, npartitions=3), model, domains=doms, params=first,
                          scheduler="sync", **kw)
        errors.append(str(e.value))
        assert len(set(errors)) == 1, errors
        assert errors[0].startswith("column 'job': has another domain than in the earlier "
                                    f"release: {words}; under a persistent key every set"), errors
        (tmp_path / "jobs.txt").write_text("\n".join(dom) + "\n")
        capsys.readouterr()
        assert main(["anonymize", str(tmp_path / "w.csv"), "-o", str(tmp_path / "out.csv"),
                     "--identifier", "rid", "--sensitive", "job,town", "--l", "3",
                     "--key-file", str(key), "--record-id", "rid",
                     "--domain", f"job={tmp_path / 'jobs.txt'}",
                     "--domain", f"town={tmp_path / 'towns.txt'}",
                     "--params-from", str(tmp_path / "first.parquet")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"'{tmp_path / 'first.parquet'}'" in err, err
        assert words in err and "declared with --domain" in err, err
        assert not (tmp_path / "out.csv").exists() and not (tmp_path / "out.parquet").exists()
    # a Dask release is an earlier release too
    lazy_first = adask.publish(dd.from_pandas(df, npartitions=3), model, scheduler="sync",
                               domains={"job": jobs, "town": list("xyz")},
                               first_in_series=True, **kw)
    with pytest.raises(InputError, match="1 new value"):
        anonset.publish(df, model, domains={"job": jobs + ["f"], "town": list("xyz")},
                        params=lazy_first, **kw)
    # another generator redraws every set too
    with pytest.raises(InputError, match=r"^rng: is 'philox' but the earlier release "
                                                 r"was drawn with 'chacha20'"):
        anonset.publish(df, model, domains={"job": jobs, "town": list("xyz")}, params=first,
                        rng="philox", **kw)
    # a fresh key would draw the series' records anew (they intersect): a
    # release given a series' release goes on under its key, or is refused
    with pytest.raises(InputError, match=r"^record_id: is not given, but the earlier release "
                                         r"is a release of a persistent-key series"):
        anonset.publish(df, model, identifiers=["rid"], sensitive=["job", "town"],
                        domains={"job": jobs[::-1], "town": list("xyz")}, params=first)
    # its parameters alone bind nothing under a fresh key (other records, say)
    fresh = anonset.publish(df, model, identifiers=["rid"], sensitive=["job", "town"],
                            domains={"job": jobs[::-1], "town": list("xyz")},
                            params=first.params)
    assert fresh.info["key"] == "os"
    # ... and a persistent series may start from a fresh-key release's
    # parameters, declared the first of its series (it warns as a first
    # release does); undeclared, it was taken for one (H49)
    with pytest.raises(InputError, match=r"^params: was drawn under no persistent key"):
        anonset.publish(df, model, domains={"job": jobs, "town": list("xyz")}, params=fresh,
                        **kw)
    with pytest.warns(UserWarning, match="params=this"):
        started = anonset.publish(df, model, domains={"job": jobs, "town": list("xyz")},
                                  params=fresh, first_in_series=True, **kw)
    assert started.info["key"] == "persistent" and started.info["params"] == "given"
    assert started.info["first_in_series"] is True


def test_the_missing_token_joins_only_columns_with_missing_cells(tmp_path):
    """missing='category' adds its token to the domain of a column with
    missing cells, not to complete ones (a value nobody holds is a decoy an
    adversary strikes from the sets), on every path alike; a domain that
    lists the token keeps it; a persistent key too (it kept the token
    everywhere: a decoy, see test_a_persistent_key_adds_no_decoy_token).
    At l = 2 beside values nobody or two rows hold, the columns are named
    in allow_clear (set_pins)."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"id": np.arange(n), "age": rng.integers(18, 90, n),
                       "job": rng.choice(list("abcd"), n).astype(object),
                       "city": rng.choice(list("xyz"), n), "grade": rng.choice(list("pq"), n),
                       "sex": rng.choice(list("fm"), n)})
    df.loc[[3, 50], "job"] = None
    kw = dict(identifiers=["id"], sensitive=["age", "job", "city", "grade"], exact=["sex"],
              bins={"age": [0, 40, 65, 120]}, domains={"grade": ["p", "q", "r", "?"]},
              missing="category", seed=SEED, allow_clear=["job", "grade"])
    model = anonset.Diversity(2)
    mem = anonset.publish(df, model, **kw)
    want = {"age": ("[0, 40)", "[40, 65)", "[65, 120)"), "job": ("a", "b", "c", "d", "?"),
            "city": ("x", "y", "z"), "grade": ("p", "q", "r", "?"), "sex": ("f", "m")}
    assert {a.name: tuple(a.domain) for a in mem.schema.published} == want
    assert mem.schema["job"].missing == "?" and mem.schema["city"].missing is None
    roles = {k: v for k, v in kw.items() if k not in ("seed", "allow_clear")}
    assert {a.name: tuple(a.domain) for a in anonset.Schema.infer(df, **roles).published} == want
    df.to_csv(tmp_path / "in.csv", index=False)
    df.to_parquet(tmp_path / "in.parquet")
    for src in ("in.csv", "in.parquet"):
        res = publish_file(tmp_path / src, tmp_path / f"out-{src}.parquet", model, chunk_rows=97,
                           **kw)
        assert {a.name: tuple(a.domain) for a in res.schema.published} == want, src
    lazy = adask.publish(dd.from_pandas(df, npartitions=3), model, scheduler="sync", **kw)
    assert lazy.to_settable(scheduler="sync").equals(mem)
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kept = anonset.publish(df, model, **dict(kw, seed=None, key_file=key, record_id="id",
                                             first_in_series=True,
                                             domains={"grade": ["p", "q", "r"], "job": list("abcd"),
                                                      "city": list("xyz")}))
    assert [a.name for a in kept.schema.published if a.domain[-1] == "?"] == ["job"]


def test_a_hierarchy_without_the_missing_token_takes_it_only_with_missing_cells(tmp_path):
    """missing='category' beside a hierarchy without a '?' leaf (Adult's
    education hierarchy, a column without missing cells) was refused for
    every column: "hierarchy has no leaf for domain value(s) ['?']".  The
    token joins a hierarchy's column only when it has missing cells, as it
    does elsewhere; when it has, the refusal counts them and names the
    first row, on every path alike."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    from anonset.datasets import adult_hierarchy
    df = anonset.datasets.load_adult().iloc[:3000].reset_index(drop=True)
    df = df[["education", "marital-status", "sex"]].astype(object)
    df.insert(0, "id", np.arange(len(df)))
    df.loc[[7, 40], "marital-status"] = None
    kw = dict(identifiers=["id"], sensitive=["education"], exact=["sex"], drop=["marital-status"],
              hierarchies={"education": adult_hierarchy("education")}, missing="category",
              seed=SEED)
    model = anonset.Closeness(0.3)
    mem = anonset.publish(df, model, **kw)
    assert "?" not in mem.schema["education"].domain and mem.params["education"].ground == \
        "hierarchical"
    df.to_csv(tmp_path / "in.csv", index=False)
    for src in ("in.csv",):
        res = publish_file(tmp_path / src, tmp_path / "out.parquet", model, **kw)
        assert res.schema["education"].domain == mem.schema["education"].domain
    lazy = adask.publish(dd.from_pandas(df, npartitions=3), model, scheduler="sync", **kw)
    assert lazy.to_settable(scheduler="sync").equals(mem)
    # education with missing cells: refused alike, with the count and first row
    holed = df.copy()
    holed.loc[[11, 900], "education"] = None
    holed.to_csv(tmp_path / "holed.csv", index=False)
    errors = []
    for run in (lambda: anonset.publish(holed, model, **kw),
                lambda: publish_file(tmp_path / "holed.csv", tmp_path / "o.parquet", model, **kw),
                lambda: adask.publish(dd.from_pandas(holed, npartitions=3), model,
                                      scheduler="sync", **kw)):
        with pytest.raises(InputError) as e:
            run()
        errors.append(str(e.value).replace(f"{str(tmp_path / 'holed.csv')!r}: ", ""))
    assert len(set(errors)) == 1, errors
    assert errors[0].startswith("column 'education': has 2 missing value(s) (first at row 12), "
                                "published as '?', but its hierarchy has no leaf '?'"), errors
    assert not (tmp_path / "o.parquet").exists()


# ------------------------------------------------------- inferred domains
def test_an_inferred_domain_is_named_on_every_path(tmp_path, capsys):
    """A sensitive column's domain read off the data tells which values
    occur: every path warns alike (InferredDomainWarning, naming only the
    sensitive columns: exact ones are published as they are), a declared
    domain does not warn, and a schema that Schema.infer read off the data
    stays marked inferred in the release's metadata (it was published as
    declared, with no warning and a clean audit).  The command line prints
    the warning once."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    from anonset.cli import main
    rng = np.random.default_rng(8)
    n = 300
    df = pd.DataFrame({"job": rng.choice(list("abcd"), n), "city": rng.choice(list("xyz"), n),
                       "sex": rng.choice(list("fm"), n)})
    kw = dict(sensitive=["job", "city"], exact=["sex"], domains={"city": list("xyz")}, seed=SEED)
    model = anonset.Diversity(2)
    df.to_csv(tmp_path / "in.csv", index=False)
    runs = {"memory": lambda: anonset.publish(df, model, **kw),
            "stream": lambda: publish_file(tmp_path / "in.csv", tmp_path / "o.parquet", model,
                                           **kw),
            "dask": lambda: adask.publish(dd.from_pandas(df, npartitions=2), model,
                                          scheduler="sync", **kw)}
    for path, run in runs.items():
        with pytest.warns(anonset.InferredDomainWarning) as rec:
            run()
        msgs = [str(w.message) for w in rec if w.category is anonset.InferredDomainWarning]
        assert len(msgs) == 1 and "'job'" in msgs[0], (path, msgs)
        assert "'city'" not in msgs[0] and "'sex'" not in msgs[0], path
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.InferredDomainWarning)
        declared = anonset.publish(df, model, **dict(kw, domains={"city": list("xyz"),
                                                                 "job": list("abcd")}))
    assert not declared.schema["job"].inferred
    schema = anonset.Schema.infer(df, **{k: v for k, v in kw.items() if k != "seed"})
    with pytest.warns(anonset.InferredDomainWarning, match="'job'"):
        pub = anonset.publish(df, model, schema, seed=SEED)
    meta = {a["name"]: a for a in pub.metadata()["schema"]["attributes"]}
    assert meta["job"].get("inferred") is True and "inferred" not in meta["city"]
    assert pub.schema["job"].inferred
    with pytest.warns(anonset.InferredDomainWarning, match="'x'"):
        anonset.semantic.semantic_publish(pd.DataFrame({"x": rng.integers(0, 9, n)}), "x", 2,
                                          1.0, seed=SEED)
    capsys.readouterr()
    assert main(["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "c.csv"),
                 "--sensitive", "job,city", "--exact", "sex", "--l", "2"]) == 0
    err = capsys.readouterr().err
    assert err.count("read off the data") == 1 and "'job'" in err, err


# ------------------------------------------------------------- CSV cells
FORMULAS = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "'quoted", "\tTAB", "plain", "=HYPERLINK(x)"]


def test_csv_cells_a_spreadsheet_would_run_are_neutralised(tmp_path):
    n = len(FORMULAS) * 3
    df = pd.DataFrame({"job": list("abc") * len(FORMULAS),
                       "note": FORMULAS * 3,
                       "=code": (FORMULAS * 3)[::-1],
                       "n": np.arange(n) - 5})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], exact=["=code"],
                          other=["note", "n"], keep_order=True,
                          allow_identifier=["n"])             # a row number, by design
    path = tmp_path / "pub.csv"
    pub.to_csv(path)
    raw = path.read_text()
    lines = raw.splitlines()
    assert lines[0] == "job,note,'=code,n"                   # the header too
    for line in lines[1:]:
        for cell in line.split(","):
            assert not cell.startswith(("=", "+", "@", "\t")), line
    assert ",-5" in raw or ",-4" in raw                       # numbers stay numbers
    back = anonset.read_csv(path)
    assert back.equals(pub)
    assert list(back.other["note"]) == FORMULAS * 3
    assert [s[0] for s in back.sets("=code")] == (FORMULAS * 3)[::-1]


def test_missing_values_end_to_end_text_numeric_and_binned(tmp_path):
    # issue 14 item 6: every kind of column, every reader, the audit
    # (each column repeats with its own period, so that none is a recode of
    # another: publishing refuses recoded sensitive columns)
    df = pd.DataFrame({"age": [20, 35, np.nan, 50, 61, 44] * 5,
                       "n": ([1, 2, 3, np.nan, 2] * 6),
                       "job": ["a", "b", None, "a", "c", "b", "c"] * 4 + ["a", "b"]})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["age", "n", "job"],
                          bins={"age": [0, 30, 50, 120]}, missing="category")
    assert pub.schema["age"].domain[-1] == pub.schema["n"].domain[-1] == "?"
    # the columns named, not their counts (a count of a sensitive column's
    # missing cells is a count of one of its values: two releases apart by
    # one person would tell whether that person's is missing)
    assert pub.info["missing"] == {"policy": "category", "token": "?", "as_text": False,
                                   "columns": ["age", "n", "job"]}
    for name in ("m.parquet", "m.csv"):
        (pub.to_parquet if name.endswith("parquet") else pub.to_csv)(tmp_path / name)
        back = (anonset.read_parquet if name.endswith("parquet") else anonset.read_csv)(
            tmp_path / name)
        assert back.equals(pub)
    assert anonset.audit(pub, df).conforms
    assert anonset.reconstruct(pub, ["age", "n"]).total == pytest.approx(len(df))
    # a token that is also a real value would merge them: refused by name
    clash = df.assign(job=df["job"].where(df.index != 4, "?"))
    with pytest.raises(ValueError, match=r"column 'job': has 4 missing value\(s\) and also the "
                                         r"real value '\?'"):
        anonset.publish(clash, anonset.Diversity(2), sensitive=["age", "n", "job"],
                        bins={"age": [0, 30, 50, 120]}, missing="category")
    pub = anonset.publish(clash, anonset.Diversity(2), sensitive=["age", "n", "job"],
                          bins={"age": [0, 30, 50, 120]}, missing="category",
                          missing_token="<missing>")
    assert pub.schema["job"].domain[-1] == "<missing>" and "?" in pub.schema["job"].domain


def test_auto_ground_never_places_the_missing_token_in_an_order():
    # an ordinal column with a missing token: 'auto' must not invent a place
    # for "missing" beside the largest value; it takes the strictest ground
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"inc": rng.choice([1.0, 2.0, 3.0, 4.0, 5.0, np.nan], 3000,
                                         p=[.05, .1, .2, .3, .3, .05])})
    kw = dict(sensitive=["inc"], ordinal=["inc"], seed="k", research_seed=True)
    # ... and says so, since the user named an order (it was silent)
    with pytest.warns(UserWarning, match=r"'inc' is ordinal, but its missing cells \(published "
                                         r"as '\?'\) have no place in its order.*equal ground"
                                         r".*ground=\{'inc': 'ordered'\}; --ground inc=ordered"):
        auto = anonset.publish(df, anonset.Closeness(0.1), missing="category", **kw)
    assert auto.schema["inc"].domain[-1] == "?"
    assert auto.params["inc"].ground == "equal"
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*is ordinal, but")
        named = anonset.publish(df, anonset.Closeness(0.1, ground="ordered"),
                                missing="category", **kw)
    assert named.params["inc"].ground == "ordered"
    # equal distances are the largest: the published p never exceeds the
    # ordered one, and the audit checks t under the published ground
    assert auto.params["inc"].p <= named.params["inc"].p
    assert anonset.audit(auto, df).conforms
    # without missing values the order is kept
    full = anonset.publish(df.fillna(5.0), anonset.Closeness(0.1), **kw)
    assert full.params["inc"].ground == "ordered"
    # several such columns (a survey's answers): one warning names them all
    # and the one --ground that orders them all (four warnings before)
    two = df.assign(tv=df["inc"].sample(frac=1, random_state=1).to_numpy(), job="x")
    kw2 = dict(kw, sensitive=["inc", "tv"], ordinal=["inc", "tv"], exact=["job"])
    with pytest.warns(UserWarning) as got:
        anonset.publish(two, anonset.Closeness(0.1), missing="category", **kw2)
    said = [str(w.message) for w in got if "is ordinal, but" in str(w.message)
            or "are ordinal, but" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith("'inc', 'tv' are ordinal, but their missing cells")
    assert said[0].endswith("; --ground inc=ordered,tv=ordered)")


def test_audit_warns_when_exact_qids_link_releases(tmp_path):
    # exact QIDs that single out rows let anyone who knows them find a
    # person's row in every release: with fresh keys the sets intersect.
    # The audit says so (in memory and chunk by chunk), and not with a
    # persistent key.
    rng = np.random.default_rng(8)
    n = 600
    df = pd.DataFrame({"rid": np.arange(n), "zip": rng.integers(0, 300, n),
                       "sex": rng.choice(["f", "m"], n), "job": rng.choice(list("abcdef"), n)})
    kw = dict(exact=["zip", "sex"], sensitive=["job"])
    pub = anonset.publish(df, anonset.Diversity(3), identifiers=["rid"], **kw)
    pairs = df.groupby(["zip", "sex"]).size()
    share = pairs[pairs == 1].sum() / n                     # rows with a unique (zip, sex)
    assert share > 0.2
    row = pub_row = anonset.audit(pub).checks.query("check == 'repeat'").iloc[0]
    assert row.status == "warn" and row.attribute == "zip, sex"
    assert row.value == pytest.approx(share, abs=1e-4)
    assert "intersect to the true values" in row.message
    pub.to_parquet(tmp_path / "p.parquet")
    chunked = anonset.audit_file(tmp_path / "p.parquet", chunk_rows=97).checks
    row = chunked.query("check == 'repeat'").iloc[0]
    assert row.status == "warn" and row.value == pub_row.value
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kept = anonset.publish(df, anonset.Diversity(3), identifiers=["rid"], key_file=key,
                           record_id="rid", domains={"job": list("abcdef")},
                           first_in_series=True, **kw)
    row = anonset.audit(kept).checks.query("check == 'repeat'").iloc[0]
    assert row.status == "pass" and "persistent" in row.message
    # without exact QIDs there is nothing to link by: no row
    alone = anonset.publish(df, anonset.Diversity(3), identifiers=["rid"], drop=["zip", "sex"],
                            sensitive=["job"])
    assert "repeat" not in set(anonset.audit(alone).checks["check"])
    # a semantic release has no persistent key: the advice says so
    sem = anonset.semantic.semantic_publish(df.drop(columns="rid"), "job", 2, 1, qids=["zip", "sex"],
                                            domain=list("abcdef"), seed=SEED)
    row = anonset.audit(sem).checks.query("check == 'repeat'").iloc[0]
    assert row.status == "warn" and "semantic-anonymize has no persistent key" in row.message
    # pass-through columns link rows as well as exact QIDs do: a pass-through
    # 'zip' alone, and with the exact 'sex', counted alike in memory and
    # chunk by chunk, whatever the file stores
    kinds = {"zip": (dict(other=["zip"], drop=["sex"]), "zip", df.groupby("zip").size()),
             "zip+sex": (dict(other=["zip"], exact=["sex"]), "sex, zip", pairs)}
    for label, (roles, cols, groups) in kinds.items():
        pub = anonset.publish(df, anonset.Diversity(3), identifiers=["rid"], sensitive=["job"],
                              **roles)
        share = groups[groups == 1].sum() / n
        assert share > 0.01, label
        row = anonset.audit(pub).checks.query("check == 'repeat'").iloc[0]
        assert row.status == "warn" and row.attribute == cols, label
        assert row.value == pytest.approx(share, abs=1e-4), label
        for name, kw in (("m.parquet", {}), ("l.parquet", {"sets": "lists"}), ("c.csv", None)):
            if kw is None:
                pub.to_csv(tmp_path / name)
            else:
                pub.to_parquet(tmp_path / name, **kw)
            got = anonset.audit_file(tmp_path / name, chunk_rows=113).checks \
                .query("check == 'repeat'").iloc[0]
            assert (got.attribute, got.value) == (cols, row.value), (label, name)


# ------------------------------------------- persistent keys, as a property
@st.composite
def _release_pairs(draw):
    """A first release and a second one of an overlapping set of records,
    with a column added, the columns reordered, ids typed anew, and values
    new to the data (inside the declared domains)."""
    n = draw(st.integers(2, 40))
    doms = {f"s{j}": list(range(draw(st.integers(2, 9)))) for j in range(draw(st.integers(1, 3)))}
    cols = {"rid": np.arange(n)}
    for c, dom in doms.items():
        cols[c] = np.asarray(draw(st.lists(st.sampled_from(dom[:-1]), min_size=n, max_size=n)))
    first = pd.DataFrame(cols)
    keep = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    keep[0] = True
    second = first[keep].copy()
    for c, dom in doms.items():                      # the last domain value appears
        if draw(st.booleans()):
            second.iloc[0, second.columns.get_loc(c)] = dom[-1]
    second["extra"] = 1
    second = second[draw(st.permutations(list(second.columns)))]
    ids = draw(st.sampled_from(["int", "float", "text"]))
    if ids == "float":
        second["rid"] = second["rid"].astype(float)
    elif ids == "text":
        second["rid"] = second["rid"].map(lambda i: f"{i:04d}")
    return first, second, doms, draw(st.integers(2, 4))


@given(_release_pairs())
@settings(max_examples=40, deadline=None)
def test_persistent_sets_do_not_change_between_releases(pair):
    """Whatever changed between two releases under one persistent key, every
    record present in both with an unchanged value has the same sets, so
    intersecting the releases reveals nothing more than one of them."""
    import tempfile
    first, second, doms, l = pair
    model = anonset.Diversity({c: min(l, len(d)) for c, d in doms.items()})
    with tempfile.TemporaryDirectory() as tmp:
        key = f"{tmp}/k.key"
        anonset.io.keys.new_key_file(key)
        kw = dict(identifiers=["rid"], sensitive=list(doms), key_file=key, record_id="rid",
                  domains=doms, keep_order=True,
                  allow_clear=list(doms))      # tiny tables: values nobody holds are decoys
        a = anonset.publish(first, model, first_in_series=True, **kw)
        b = anonset.publish(second, model, drop=["extra"], params=a, **kw)
    rows = second["rid"].astype(float).astype(int).to_numpy()     # rid = row of first
    for c in doms:
        same = first[c].to_numpy()[rows] == second[c].to_numpy()
        assert same.sum() >= len(same) - 1
        assert np.array_equal(a.mask(c)[rows][same], b.mask(c)[same]), c


@st.composite
def _panels(draw):
    """A panel: people with 1-4 rows each, values that mostly stay and
    sometimes change between a person's rows, rows in any order."""
    people = draw(st.integers(1, 15))
    d = draw(st.integers(3, 9))
    rows = []
    for pid in range(people):
        v = draw(st.integers(0, d - 1))
        for _ in range(draw(st.integers(1, 4))):
            if draw(st.integers(0, 4)) == 0:                # a value that moved on
                v = draw(st.integers(0, d - 1))
            rows.append((pid, v))
    order = draw(st.permutations(range(len(rows))))
    df = pd.DataFrame([rows[i] for i in order], columns=["pid", "s"])
    return df, d, draw(st.integers(2, d))


@given(_panels())
@settings(max_examples=40, deadline=None)
def test_one_records_rows_share_one_set_per_value(panel):
    """Under a persistent key, the rows of one record (a record id that
    repeats) hold one set per value: equal values, equal sets, whatever the
    rows' order; every set is still a valid one (the true value among eta
    values)."""
    import tempfile
    df, d, l = panel
    with tempfile.TemporaryDirectory() as tmp:
        key = f"{tmp}/k.key"
        anonset.io.keys.new_key_file(key)
        pub = anonset.publish(df, anonset.Diversity(l), identifiers=["pid"], sensitive=["s"],
                              domains={"s": list(range(d))}, key_file=key, record_id="pid",
                              first_in_series=True, keep_order=True,
                              allow_clear=["s"])    # decoys: a tiny panel
    m = pub.mask("s")[:, 0]
    bits = (m[:, None] >> np.arange(d, dtype=np.uint64)) & np.uint64(1)
    assert (bits.sum(axis=1) == l).all() and bits[np.arange(len(df)), df.s].all()
    for _, rows in df.groupby(["pid", "s"]).groups.items():
        assert len(set(m[list(rows)].tolist())) == 1
    shared = int((df.groupby("pid").pid.transform("size") > 1).sum())
    assert pub.info["shared_ids"] == ({"pid": shared} if shared else {})


@st.composite
def _id_columns(draw):
    """An identifier column whose values may repeat, typed as a user's file
    or frame would type it: ints, whole floats (a gap), zero-padded text."""
    n = draw(st.integers(2, 30))
    ids = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    kind = draw(st.sampled_from(["int", "float", "padded", "text", "long"]))
    if kind == "long":          # one id longer than any number: chunks of other widths
        ids = ids + [-1]
    col = {"int": pd.Series(ids, dtype="int64"),
           "float": pd.Series(ids, dtype="float64"),
           "padded": pd.Series([f"{i:04d}" for i in ids], dtype=object),
           "text": pd.Series([f"p{i}" for i in ids], dtype=object),
           "long": pd.Series([f"{i:04d}" if i >= 0 else "x" * 25 for i in ids],
                             dtype=object)}[kind]
    return col, ids


@given(st.lists(st.lists(st.integers(0, 2 ** 64 - 1) | st.integers(0, 9), max_size=20),
                max_size=4))
@settings(max_examples=200, deadline=None)
def test_rows_that_share_a_hash_are_counted_as_unique_counts_them(parts):
    """The count of rows sharing an identifier's hash, by sorting in place
    (about 10 bytes a row; np.unique with its inverse and counts took 73,
    H48), equals np.unique's, whatever the blocks; the blocks are left
    as they were."""
    from anonset.shared_ids import shared_rows
    arrays = [np.asarray(p, dtype=np.uint64) for p in parts]
    before = [a.copy() for a in arrays]
    h = np.concatenate(arrays) if arrays else np.zeros(0, np.uint64)
    _, inv, cnt = np.unique(h, return_inverse=True, return_counts=True)
    want = int((cnt[inv] > 1).sum())
    assert shared_rows({"id": arrays}) == ({"id": want} if want else {})
    assert all(np.array_equal(a, b) for a, b in zip(arrays, before))


@given(_id_columns())
@settings(max_examples=40, deadline=None)
def test_rows_that_share_an_id_are_counted_alike_on_every_path(case):
    """The count of rows that share an identifier's value is the same in
    memory, streamed from CSV (ids read as text) and on Dask, whatever the
    ids' type: 7, 7.0 and '0007' are one value."""
    import tempfile
    import dask.dataframe as dd
    from anonset import dask as adask
    col, ids = case
    want = int(pd.Series(ids).duplicated(keep=False).sum())
    df = pd.DataFrame({"pid": col, "s": np.arange(len(ids)) % 3})
    # named (a household's id): counted, not refused
    kw = dict(identifiers=["pid"], sensitive=["s"], domains={"s": [0, 1, 2]}, seed=SEED,
              allow_shared_id=["pid"], allow_clear=["s"])    # 2 rows: a value may be nobody's
    model = anonset.Diversity(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.SharedIdWarning)
        got = [anonset.publish(df, model, **kw).info["shared_ids"]]
        with tempfile.TemporaryDirectory() as tmp:
            df.to_csv(f"{tmp}/in.csv", index=False)
            got.append(publish_file(f"{tmp}/in.csv", f"{tmp}/out.parquet", model, chunk_rows=7,
                                    **kw).info["shared_ids"])
        got.append(adask.publish(dd.from_pandas(df, npartitions=3), model, scheduler="sync",
                                 **kw).info["shared_ids"])
    assert got == [{"pid": want} if want else {}] * 3


def _resume_like(n=600, seed=5):
    """A field experiment's table (openintro's resume): first names chosen to
    signal race and gender, a serial per resume, an unrelated flag."""
    rng = np.random.default_rng(seed)
    names = {("black", "f"): ["Lakisha", "Tamika", "Ebony"], ("black", "m"): ["Jamal", "Darnell"],
             ("white", "f"): ["Emily", "Anne", "Jill"], ("white", "m"): ["Greg", "Brad", "Todd"]}
    race = rng.permutation(np.resize(["black", "white"], n))      # assigned half and half
    gender = rng.choice(["f", "m"], n, p=[0.75, 0.25])
    first = [rng.choice(names[(r, g)]) for r, g in zip(race, gender)]
    return pd.DataFrame({"serial": rng.permutation(n) * 7 + 11, "firstname": first,
                         "callback": rng.choice([0, 1], n), "city": rng.choice(["B", "C"], n),
                         "race": race, "gender": gender})


def _four_paths(df, model, kw, tmp_path, *, chunk_rows):
    """Publishing ``df`` in memory, streamed from CSV and from Parquet, and
    on Dask: {path: a call that publishes and returns the SetTable}."""
    from anonset import dask as adask
    dd = pytest.importorskip("dask.dataframe")
    df.to_csv(tmp_path / "r.csv", index=False)
    df.to_parquet(tmp_path / "r.parquet", index=False)
    return {
        "memory": lambda: anonset.publish(df, model, **kw),
        "csv": lambda: publish_file(tmp_path / "r.csv", tmp_path / "o1.parquet", model,
                                    chunk_rows=chunk_rows, **kw),
        "parquet": lambda: publish_file(tmp_path / "r.parquet", tmp_path / "o2.parquet", model,
                                        chunk_rows=chunk_rows, **kw),
        "dask": lambda: adask.publish(dd.from_pandas(df, npartitions=4), model,
                                      scheduler="sync", **kw).to_settable(scheduler="sync")}


def _refused_alike(df, model, kw, tmp_path, column, *, chunk_rows):
    """Publishing on the four paths is refused each time with one line, the
    same on every path, naming ``column``: what that line says after it."""
    refusals = {}
    for path, run in _four_paths(df, model, kw, tmp_path, chunk_rows=chunk_rows).items():
        with pytest.raises(InputError) as e:
            run()
        refusals[path] = str(e.value).split(f"column {column!r}: ", 1)[1]
    assert len(set(refusals.values())) == 1, refusals
    assert not (tmp_path / "o1.parquet").exists() and not (tmp_path / "o2.parquet").exists()
    return refusals["memory"]


def test_a_pass_through_column_that_recodes_a_sensitive_one_is_refused_on_every_path(
        tmp_path, capsys):
    """`--other firstname` published the resume study's first names, which
    were chosen to signal race and gender, unchanged beside race and gender
    as l-diverse sets: first the audit alone saw it, then publishing warned
    and published anyway.  A column published as it is that recodes a
    sensitive one publishes that column nearly in the clear, so every path
    now refuses it, with the same line, unless the user names the risk
    (`allow_recode`, `--allow-recode`); the metadata, the summary and the
    audit then name it."""
    from anonset.cli import main
    df = _resume_like()
    kw = dict(sensitive=["race", "gender"], exact=["city"], other=["firstname", "callback",
                                                                    "serial"])
    model = anonset.Diversity(2)
    runs = _four_paths(df, model, kw, tmp_path, chunk_rows=170)
    refusals = {}
    assert anonset.InputError is InputError                  # catchable from the top level
    for path, run in runs.items():
        with pytest.raises(anonset.InputError) as e:
            run()
        refusals[path] = str(e.value).split("column 'firstname': ", 1)[1]
    assert len(set(refusals.values())) == 1, refusals
    assert refusals["memory"].startswith("is a pass-through column that predicts 'race' for "
                                         "100.0% of the rows")
    assert "it would publish 'race' nearly in the clear (and firstname -> gender)" in \
        refusals["memory"]
    assert refusals["memory"].endswith("allow_recode=['firstname']")
    assert not (tmp_path / "o1.parquet").exists() and not (tmp_path / "o2.parquet").exists()
    # named: published, recorded as allowed, and not warned of (the summary,
    # the metadata and the audit say it); 'serial', which singles rows out,
    # is named too (test_a_pass_through_column_that_singles_rows_out_...)
    want = [{"check": "identifier", "column": "serial", "sensitive": None, "value": 1.0,
             "allowed": True},
            {"check": "recode", "column": "firstname", "sensitive": "race", "value": 1.0,
             "allowed": True},
            {"check": "recode", "column": "firstname", "sensitive": "gender", "value": 1.0,
             "allowed": True}]
    runs = _four_paths(df, model, {**kw, "allow_recode": ["firstname"],
                                   "allow_identifier": ["serial"]}, tmp_path, chunk_rows=170)
    for path, run in runs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.PassThroughWarning)
            pub = run()
        assert sorted(pub.info["pass_through_risks"], key=str) == sorted(want, key=str), path
    # the audit of the release alone names the recorded recodes as allowed;
    # with the original it measures them itself (one row each, not two)
    pub = anonset.publish(df, model, allow_recode=["firstname"], allow_identifier=["serial"],
                          **kw)
    alone = anonset.audit(pub).checks
    recode = alone[alone["check"] == "recode"]
    assert sorted(recode["attribute"]) == ["firstname -> gender", "firstname -> race"]
    assert (recode["status"] == "risk").all()
    assert recode["message"].str.contains("as the user allowed").all()
    both = anonset.audit(pub, df).checks
    measured = both[both["check"] == "recode"]
    assert len(measured) == 8 and measured["attribute"].is_unique   # (3 pass-through + 1 exact) x 2
    risky = measured[measured["status"] == "risk"]
    assert set(risky["attribute"]) == {"firstname -> race", "firstname -> gender"}
    assert risky["message"].str.contains("as the user allowed").all()
    # a column that says nothing of race or gender: no finding, no refusal
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)
        quiet = anonset.publish(df, model, sensitive=["race", "gender"], exact=["city"],
                                other=["callback"], drop=["firstname", "serial"])
    assert quiet.info["pass_through_risks"] == []
    # only a column published as it is can be named
    with pytest.raises(InputError, match=r"allow_recode: names 'race', which is not published "
                                         r"as it is; expected a column published as it is: one "
                                         r"of \['firstname', 'callback', 'city'\]"):
        anonset.publish(df, model, sensitive=["race", "gender"], exact=["city"],
                        other=["firstname", "callback"], drop=["serial"], allow_recode=["race"])
    # the command line: exit 2 and one line naming the flag, nothing written;
    # named, the summary says what was published nearly in the clear
    cli = ["anonymize", str(tmp_path / "r.csv"), "-o", str(tmp_path / "c.parquet"),
           "--sensitive", "race,gender", "--exact", "city", "--other", "firstname,callback",
           "--drop", "serial", "--l", "2"]
    capsys.readouterr()
    assert main(cli) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("or the risk named: --allow-recode firstname\n")
    assert "column 'firstname': is a pass-through column that predicts 'race'" in err
    assert not (tmp_path / "c.parquet").exists()
    assert main(cli + ["--allow-recode", "firstname"]) == 0
    err = capsys.readouterr().err
    assert "WARNING: published nearly in the clear through columns that recode them (you " \
        "allowed it): firstname -> race (lambda 1.00), firstname -> gender (lambda 1.00)" in err
    assert "predicts" not in err


def test_a_pass_through_column_that_singles_rows_out_is_refused_on_every_path(
        tmp_path, capsys):
    """`--other rownames` on ISLR's Wage (3,000 rows) published each row's
    original row name beside its sets with a warning only, and the audit of
    that release then said RISKS FOUND: a column that singles rows out (a
    name, an ID, a timestamp) tells whose row each is wherever it is known
    elsewhere, links releases made under other keys, and beside a partition
    release's exact sensitive values names them.  Every path now refuses
    it with the same line unless the user names the risk
    (`allow_identifier`, `--allow-identifier`); the metadata, the summary
    and the audit then name it.  A column that few rows hold alone passes."""
    from anonset.cli import main
    from anonset.partition import baselines as B
    from anonset.partition.msa.result import anonymize_msa
    df = _resume_like().drop(columns=["firstname"])
    kw = dict(sensitive=["race", "gender"], exact=["city"], other=["serial", "callback"])
    model = anonset.Diversity(2)
    msg = _refused_alike(df, model, kw, tmp_path, "serial", chunk_rows=170)
    assert msg == ("is a pass-through column: 100.0% of the rows hold a value no other row has: "
                   "published unchanged, it singles those rows out (a likely identifier); "
                   "expected it named an identifier (never published) or dropped, or the risk "
                   "named: allow_identifier=['serial']")
    # named: published, not warned of, recorded as allowed on every path
    for path, run in _four_paths(df, model, {**kw, "allow_identifier": ["serial"]}, tmp_path,
                                 chunk_rows=170).items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.PassThroughWarning)
            pub = run()
        assert pub.info["pass_through_risks"] == [
            {"check": "identifier", "column": "serial", "sensitive": None, "value": 1.0,
             "allowed": True}], path
    row = anonset.audit(pub).checks.query("check == 'identifier'").set_index("attribute")
    assert row.loc["serial", "status"] == "risk"
    assert row.loc["serial", "message"].endswith("(published as the user allowed: "
                                                 "allow_identifier)")
    assert row.loc["callback", "status"] == "pass"
    # only a pass-through column can be named (an exact QID singles rows out
    # as QIDs do, and has no such check)
    with pytest.raises(InputError, match=r"allow_identifier: names 'city', which is not a "
                                         r"pass-through column; expected a pass-through column: "
                                         r"one of \['serial', 'callback'\]"):
        anonset.publish(df, model, allow_identifier=["city"], **kw)
    # the partition publishers refuse it alike (beside a class's exact
    # sensitive values it names them)
    part = dict(other=["serial", "callback"])
    calls = {"lgb": lambda **a: anonset.lgb.lgb(df, qi=["city"], sensitive=["race"], k=4, l=2,
                                                drop=["gender"], **part, **a),
             "msa": lambda **a: anonymize_msa(df, ["city"], ["race", "gender"], 4, 0.5,
                                              **part, **a),
             "mondrian": lambda **a: B.mondrian(df, qids=["city"], sensitive="race", l=2,
                                                drop=["gender"], **part, **a)}
    for name, call in calls.items():
        with pytest.raises(InputError, match=r"^column 'serial': is a pass-through column: "
                                             r"100.0% .*allow_identifier=\['serial'\]$"):
            call()
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.PassThroughWarning)
            call(allow_identifier=["serial"])
    # the command line: exit 2, one line, nothing written; named, the
    # summary says it
    cli = ["anonymize", str(tmp_path / "r.csv"), "-o", str(tmp_path / "c.parquet"),
           "--sensitive", "race,gender", "--exact", "city", "--other", "serial,callback",
           "--l", "2"]
    capsys.readouterr()
    assert main(cli) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("or the risk named: --allow-identifier serial\n")
    assert not (tmp_path / "c.parquet").exists()
    assert main(cli + ["--allow-identifier", "serial"]) == 0
    err = capsys.readouterr().err
    assert "published columns that single rows out (you allowed it: each links a row to its " \
        "person wherever it is known): serial (100.0% of the rows)" in err


def _stops_like(n=3000, seed=7):
    """Police stops (carData's MplsStops): a pass-through column one of whose
    values ('none': no person recorded) goes with one race on every row,
    although the column as a whole predicts race little."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["a", "b", "c", "d"], n)
    status = np.where(race == "d", "none", rng.choice(["x", "y"], n))
    status = np.where((race == "d") & (rng.random(n) < 0.2), rng.choice(["x", "y"], n), status)
    return pd.DataFrame({"status": status, "precinct": rng.choice(["1", "2", "3"], n),
                         "race": race, "problem": rng.choice(["p", "q"], n)})


def test_a_pass_through_value_that_gives_a_sensitive_one_away_is_refused_on_every_path(
        tmp_path, capsys):
    """MplsStops: `--other preRace` (and MDC, personSearch, ...) beside race
    as an l = 3 set.  Where no person was recorded, every one of those
    columns is missing on the very rows where race is: 15.8 % of the rows
    have their race given away by one value, while each column's lambda
    over all rows (0.22-0.41) stayed under the recode check's 0.9, so
    publishing said nothing; then it warned and published.  Those rows'
    race is published nearly in the clear, so a value that gives a
    sensitive value away for at least 1 % of the rows is now refused like a
    recode on every path, with the same line, unless the column is named
    (`allow_recode`, `--allow-recode`); the metadata, the summary and the
    audit, with or without the original, then name it."""
    from anonset.cli import main
    from anonset.passthrough import ValueSample, hash_values
    df = _stops_like()
    codes = pd.factorize(df["race"])[0]
    vs = ValueSample(None)
    vs.add(hash_values(df["status"]), codes)
    assert vs.determination()[0] < 0.5                   # the whole-column check is silent
    share = round(float((df["status"] == "none").mean()), 4)
    kw = dict(sensitive=["race", "problem"], exact=["precinct"], other=["status"])
    model = anonset.Diversity(2)
    line = _refused_alike(df, model, kw, tmp_path, "status", chunk_rows=700)
    assert line.startswith(f"is a pass-through column some of whose values give away 'race' "
                           f"for {share:.1%} of the rows"), line
    assert line.endswith("it would publish those rows' 'race' nearly in the clear; expected it "
                         "dropped, or published as sensitive, or the risk named: "
                         "allow_recode=['status']"), line
    want = [{"check": "given_away", "column": "status", "sensitive": ["race"],
             "value": [share], "allowed": True}]
    outs = {"csv": tmp_path / "o1.parquet", "parquet": tmp_path / "o2.parquet"}
    for path, run in _four_paths(df, model, {**kw, "allow_recode": ["status"]}, tmp_path,
                                 chunk_rows=700).items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", anonset.PassThroughWarning)   # named: no warning
            pub = run()
        if path in outs:
            pub = anonset.read_parquet(outs[path])
        assert pub.info["pass_through_risks"] == want, path
    pub = anonset.publish(df, model, allow_recode=["status"], **kw)
    alone = anonset.audit(pub).checks.query("check == 'given_away'")
    assert list(alone["attribute"]) == ["status -> race"] and (alone["status"] == "risk").all()
    assert alone["message"].iloc[0].endswith("(published as the user allowed: allow_recode)")
    both = anonset.audit(pub, df).checks.query("check == 'given_away'").set_index("attribute")
    assert list(both.index) == ["status -> race", "status -> problem", "precinct -> race",
                                "precinct -> problem"]        # exact QIDs measured too
    assert (both.loc[["precinct -> race", "precinct -> problem"], "status"] == "pass").all()
    assert both.loc["status -> race", "status"] == "risk"
    assert both.loc["status -> race", "value"] == pytest.approx(share)
    assert both.loc["status -> race", "message"].endswith(
        "(published as the user allowed: allow_recode)")
    assert both.loc["status -> problem", "status"] == "pass"
    # published as an exact QID (paper 004) it gives those rows' race away
    # all the same: refused alike on every path (Adult's relationship
    # 'Husband' published exactly beside sex as sets told every reader the
    # sex of 41 % of the rows, and the audit said sex was protected)
    ekw = dict(sensitive=["race", "problem"], exact=["precinct", "status"])
    for o in outs.values():
        o.unlink()
    line = _refused_alike(df, model, ekw, tmp_path, "status", chunk_rows=700)
    assert line.startswith(f"is an exact QID some of whose values give away 'race' for "
                           f"{share:.1%} of the rows"), line
    assert "published exactly, it would publish those rows' 'race' nearly in the clear; " \
        "expected it published as sensitive too, or dropped, or the risk named: " \
        "allow_recode=['status']" in line, line
    named = anonset.publish(df, model, allow_recode=["status"], **ekw)
    assert named.info["pass_through_risks"] == want
    # an exact QID in bins is measured as published, by its bin: Adult's ages
    # 17-23 gave salary-class away for 14.8 % of the rows, its bin [0, 30)
    # does not (a bin of its own for them would)
    ages = pd.DataFrame({"age": np.arange(3000) % 60 + 17})
    noise = np.random.default_rng(2).random(3000) < 0.4
    ages["low"] = np.where((ages["age"] < 24) | noise, "yes", "no")
    bkw = dict(sensitive=["low"], exact=["age"], domains={"low": ["yes", "no"]})
    with pytest.raises(InputError, match="column 'age': is an exact QID some of whose values "
                                         "give away 'low'"):
        anonset.publish(ages, model, **bkw)
    anonset.publish(ages, model, bins={"age": [0, 30, 50, 120]}, **bkw)
    with pytest.raises(InputError, match="give away 'low'"):
        anonset.publish(ages, model, bins={"age": [0, 24, 50, 120]}, **bkw)
    ea = anonset.audit(named, df).checks.query("check == 'given_away'").set_index("attribute")
    assert ea.loc["status -> race", "status"] == "risk"
    assert ea.loc["status -> race", "value"] == pytest.approx(share)
    # the command line: one line and exit 2; named, the summary says so
    capsys.readouterr()
    args = ["anonymize", str(tmp_path / "r.csv"), "-o", str(tmp_path / "c.parquet"),
            "--sensitive", "race,problem", "--exact", "precinct", "--other", "status", "--l", "2"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("or the risk named: --allow-recode status") and "\n" not in err, err
    assert not (tmp_path / "c.parquet").exists()
    assert main(args + ["--allow-recode", "status"]) == 0
    err = capsys.readouterr().err
    assert f"(you allowed it): status -> race ({share:.1%} of the rows)" in err, err


def test_the_pass_through_check_draws_its_rows_from_the_whole_table(monkeypatch, tmp_path):
    """Bounded work on a census-sized file, and no blind spot in a sorted
    one: the recodes are measured on SAMPLE_ROWS rows drawn at random from
    the whole table (the same rows on every path: those whose row index has
    the smallest words), and the message says so.  It used to read the
    first rows, which in a file sorted by a sensitive column hold one of its
    values, and nothing recodes a constant (a census file sorted by state
    shows one state in its first 250,000 rows).  The likely identifier is
    still measured on the first rows (a value's rows must be seen together)."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    import anonset.passthrough as P
    monkeypatch.setattr(P, "SAMPLE_ROWS", 300)
    kw = dict(sensitive=["race", "gender"], other=["firstname"], drop=["serial", "callback",
                                                                      "city"])
    model = anonset.Diversity(2)

    def paths(df):
        df.to_csv(tmp_path / "r.csv", index=False)
        return [lambda: anonset.publish(df, model, **kw),
                lambda: publish_file(tmp_path / "r.csv", tmp_path / "o.parquet", model,
                                     chunk_rows=170, **kw),
                lambda: adask.publish(dd.from_pandas(df, npartitions=4), model,
                                      scheduler="sync", **kw).to_settable(scheduler="sync")]

    # sorted by race: the first 300 rows hold one race, and the recode is
    # found all the same, the same way on every path
    df = _resume_like(600).sort_values("race", kind="stable").reset_index(drop=True)
    assert df["race"].iloc[:300].nunique() == 1
    msgs = set()
    for run in paths(df):
        with pytest.raises(InputError) as e:
            run()
        msgs.add(str(e.value).split("column 'firstname': ", 1)[1])
    assert len(msgs) == 1
    assert "(on 300 rows drawn at random from the table's 600)" in msgs.pop()
    # the sample is the rows with the smallest words of their index
    check = P.PassThroughCheck(["firstname"], ["race"], sample_rows=300).add(df, 0)
    want = np.sort(np.argsort(P._mix64(np.arange(600)), kind="stable")[:300])
    pieces = P.PassThroughCheck(["firstname"], ["race"], sample_rows=300)
    for lo in range(0, 600, 170):
        pieces.merge(P.PassThroughCheck(["firstname"], ["race"], sample_rows=300)
                     .add(df.iloc[lo:lo + 170], lo))
    pd.testing.assert_frame_equal(pieces.sample(), check.sample())
    # where the table's length is known (Dask), each part keeps only its
    # share: the client never holds more than the sample
    cut = P.sample_cut(600, 300)
    assert cut == np.sort(P._mix64(np.arange(600)))[299] and P.sample_cut(300, 300) is None
    shares = []
    for lo in range(0, 600, 170):
        part = P.PassThroughCheck(["firstname"], ["race"], sample_rows=300)
        part.cut = cut
        shares.append(part.add(df.iloc[lo:lo + 170], lo))
    assert sum(len(x.sample()) for x in shares) == 300
    for x in shares[1:]:
        shares[0].merge(x)
    pd.testing.assert_frame_equal(shares[0].sample(), check.sample())
    pd.testing.assert_frame_equal(check.sample(), df.loc[want, ["firstname", "race"]]
                                  .iloc[np.argsort(P._mix64(want), kind="stable")]
                                  .reset_index(drop=True))


def _sorted_survey(n=2000, seed=3):
    """A survey file sorted by race (as openintro's military file is sorted
    by its grade, branch, gender and race), with a row number, a serial
    drawn at random, and a job unrelated to the order."""
    rng = np.random.default_rng(seed)
    race = np.sort(rng.choice(["amer", "asian", "black", "white"], n, p=[.1, .2, .3, .4]))
    return pd.DataFrame({"rownum": np.arange(1, n + 1), "serial": rng.permutation(n) * 3 + 7,
                         "race": race, "job": rng.choice(list("abcde"), n),
                         "city": rng.choice(["B", "C"], n)})


def test_a_row_number_of_a_sorted_file_is_refused_on_every_path(tmp_path, capsys):
    """openintro's military file (1.4 M rows) is sorted by grade, branch,
    gender and race, and R wrote its row names as a column.  `--other
    rownames` published them beside race as 3-sets, with a warning of a
    likely identifier only: sorted by the row number, the rows of each race
    are one run, so their sets intersect to it (the shuffle of the rows
    undone).  The recode check could not see it, since no two rows share a
    row number.  Now a column published as it is whose ORDER predicts a
    sensitive column (adjacent rows agree far beyond chance: lambda >= 0.9)
    is refused like a recode, on every path, with one line, unless named;
    a serial drawn at random is no such column."""
    df = _sorted_survey()
    model = anonset.Diversity(2)
    kw = dict(sensitive=["race", "job"], exact=["city"], other=["rownum", "serial"])
    msg = _refused_alike(df, model, kw, tmp_path, "rownum", chunk_rows=170)
    assert msg.startswith("is a pass-through column whose order predicts 'race': sorted by it, "
                          "99.8% of adjacent rows hold the same 'race' (the most common value "
                          "alone: ")
    assert "it would publish 'race' nearly in the clear" in msg and "job" not in msg
    assert msg.endswith("expected it dropped, or published as sensitive, or the risk named: "
                        "allow_recode=['rownum']")
    assert not (tmp_path / "o1.parquet").exists() and not (tmp_path / "o2.parquet").exists()
    # named: published and recorded; the audit of the release alone names it
    ids = {"allow_identifier": ["rownum", "serial"]}     # both single rows out
    for path, run in _four_paths(df, model, {**kw, "allow_recode": ["rownum"], **ids}, tmp_path,
                                 chunk_rows=170).items():
        pub = run()
        found = [f for f in pub.info["pass_through_risks"] if f["check"] == "order_recode"]
        assert [(f["column"], f["sensitive"], f["allowed"]) for f in found] == \
            [("rownum", "race", True)], path
        assert found[0]["value"] >= 0.99
    alone = by_check(anonset.audit(pub))
    row = alone.loc[("order_recode", "rownum -> race")]
    assert row["status"] == "risk" and "as the user allowed" in row["message"]
    # with the original, the audit measures it itself, in memory and chunk by
    # chunk alike (a release of an earlier version, which recorded nothing,
    # is found the same way)
    from anonset import audit_file
    pub.to_parquet(tmp_path / "pub.parquet")
    for rep in (anonset.audit(pub, df), audit_file(tmp_path / "pub.parquet", df, chunk_rows=300)):
        got = rep.checks.query("check == 'order_recode'").set_index("attribute")
        assert got.loc["rownum -> race", "status"] == "risk"
        assert "sorted by rownum, 99.8% of adjacent rows hold the same race" in \
            got.loc["rownum -> race", "message"]
        assert "as the user allowed" in got.loc["rownum -> race", "message"]
        assert got.loc["rownum -> job", "status"] == "pass"
        assert got.loc["serial -> race", "status"] == "pass"
    # the same data shuffled: the row number says nothing of race
    mixed = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    mixed["rownum"] = np.arange(1, len(df) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", anonset.PassThroughWarning)
        quiet = anonset.publish(mixed, model, **kw, **ids)
    assert [f["check"] for f in quiet.info["pass_through_risks"]] == ["identifier"] * 2
    # the command line: exit 2, one line, nothing written; named, the summary says it
    cli = ["anonymize", str(tmp_path / "r.csv"), "-o", str(tmp_path / "c.parquet"),
           "--sensitive", "race,job", "--exact", "city", "--other", "rownum",
           "--drop", "serial", "--l", "2"]
    capsys.readouterr()
    assert cli_main(cli) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 'rownum': is a pass-through column whose order " \
        "predicts 'race'" in err and err.endswith("--allow-recode rownum\n")
    assert not (tmp_path / "c.parquet").exists()
    assert cli_main(cli + ["--allow-recode", "rownum", "--allow-identifier", "rownum"]) == 0
    err = capsys.readouterr().err
    assert "(you allowed it): rownum -> race (lambda 1.00)" in err


def test_a_column_that_recodes_the_bins_of_a_sensitive_one_is_refused(tmp_path):
    """GSS wages: income published as sensitive in five bins, and beside it
    a bracket column holding the same five bins as labels (or the income in
    thousands).  The recode check compared the bracket with the exact
    incomes, which it predicts poorly, and only warned that some of its
    values give income away; what the sets publish is the bin, which the
    bracket gives for every row.  A sensitive column in bins is now measured
    by its bin, the same whether the file was read as numbers or as text."""
    rng = np.random.default_rng(4)
    n = 1500
    income = np.round(rng.lognormal(10, 1, n), 2)
    edges = [0, 10_000, 20_000, 40_000, 80_000, 1e9]
    df = pd.DataFrame({"income": income, "job": rng.choice(list("abc"), n),
                       "bracket": pd.cut(income, edges, right=False,
                                         labels=["<10k", "10-20k", "20-40k", "40-80k", "80k+"]
                                         ).astype(str)})
    model = anonset.Diversity(2)
    kw = dict(sensitive=["income", "job"], other=["bracket"], bins={"income": edges})
    assert _refused_alike(df, model, kw, tmp_path, "bracket", chunk_rows=400).startswith("is a pass-through column that predicts 'income' for "
                                     "100.0% of the rows from the other rows with the same value")
    # the income in thousands: finer than the bins, nearly one value per row
    df2 = df.assign(bracket=(df["income"] / 1000).round(3))
    with pytest.raises(InputError, match=r"column 'bracket': is a pass-through column "
                                         r"(that|whose order) predicts 'income'"):
        anonset.publish(df2, model, **kw)


def _panel_years(n=3000, seed=8):
    """sampleSelection's nlswork: the survey year and the birth year are
    published exactly, and the age they give is the sensitive column."""
    rng = np.random.default_rng(seed)
    born = rng.integers(41, 55, n)
    year = rng.integers(68, 89, n)
    age = year - born - (rng.random(n) < 0.3)        # before or after the birthday
    return pd.DataFrame({"year": year, "born": born, "age": age,
                         "race": rng.choice(["a", "b", "c"], n), "union": rng.choice([0, 1], n)})


def test_two_columns_that_recode_a_sensitive_one_together_are_refused(tmp_path, capsys):
    """nlswork published with `--exact year,birth_yr` and age (in bins) as
    3-sets: neither year nor birth year predicts age, but together they give
    it (age = year - birth year), and publishing said nothing.  Every pair of
    columns published as they are is now measured as one column is (lambda
    >= 0.9 over the first rows); refused on every path unless both are named."""
    df = _panel_years()
    model = anonset.Diversity(3)
    edges = [10, 20, 30, 40, 50]
    kw = dict(sensitive=["age", "race"], exact=["year"], other=["born", "union"],
              bins={"age": edges})
    msg = _refused_alike(df, model, kw, tmp_path, "born", chunk_rows=700)
    assert msg.startswith("together with column 'year', predicts 'age' for ")
    assert "from the other rows with the same pair of values" in msg
    assert msg.endswith("expected one of them dropped, or published as sensitive, or the risk "
                        "named: allow_recode=['born', 'year']")
    # both named: published and recorded; one alone is not enough
    with pytest.raises(InputError, match="together with column 'year'"):
        anonset.publish(df, model, allow_recode=["year"], **kw)
    pub = anonset.publish(df, model, allow_recode=["year", "born"], **kw)
    joint = [f for f in pub.info["pass_through_risks"] if f.get("with")]
    assert [(f["check"], f["column"], f["with"], f["sensitive"], f["allowed"]) for f in joint] \
        == [("recode", "born", "year", "age", True)]
    rows = by_check(anonset.audit(pub))
    assert rows.loc[("recode", "born+year -> age"), "status"] == "risk"
    assert "measured on the original when the release was made" in \
        rows.loc[("recode", "born+year -> age"), "message"]
    # with the original, measured by the audit itself (one row, not two)
    rows = anonset.audit(pub, df).checks
    joint = rows[rows["attribute"] == "born+year -> age"]
    assert len(joint) == 1 and joint["status"].tolist() == ["risk"]
    assert "together they predict age" in joint["message"].iloc[0]
    assert "as the user allowed" in joint["message"].iloc[0]
    # a column that says nothing of the target: quiet (the year alone, exact,
    # rules some of age's bins out: read with age's set, refused on its own)
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)
        quiet = anonset.publish(df, model, sensitive=["age", "race"], other=["union"],
                                drop=["born", "year"], bins={"age": edges})
    assert quiet.info["pass_through_risks"] == []
    df.to_csv(tmp_path / "p.csv", index=False)
    cli = ["anonymize", str(tmp_path / "p.csv"), "-o", str(tmp_path / "c.parquet"),
           "--sensitive", "age,race", "--exact", "year", "--other", "born,union", "--bins",
           "age=10:20:30:40:50", "--l", "3"]
    capsys.readouterr()
    assert cli_main(cli) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("--allow-recode born,year\n")
    assert cli_main(cli + ["--allow-recode", "born,year"]) == 0
    assert "(you allowed it): born+year -> age (lambda" in capsys.readouterr().err


def test_columns_that_narrow_a_sensitive_one_so_far_that_its_sets_give_it_away(tmp_path):
    """nlswork published with `--exact year,birth_yr` and the exact age as
    3-sets of 34 values: the two give the age to a year (lambda 0.82 by the
    values alone, under the recode threshold), and a 3-set holds the other
    candidate only by chance, so whoever reads them names the age for 98.9 %
    of the rows against 51 % from the set alone.  Once the sets' sizes are
    known, a column (or two) that removes at least 90 % of the errors of an
    adversary who reads the set alone is refused like a recode."""
    df = _panel_years()
    model = anonset.Diversity(3)
    kw = dict(sensitive=["age", "race"], exact=["year"], other=["born", "union"])
    msg = _refused_alike(df, model, kw, tmp_path, "born", chunk_rows=700)
    assert re.match(r"together with column 'year', narrows 'age' so far that its 3-sets give it "
                    r"away: whoever reads both and a row's set names the row's 'age' for "
                    r"9\d\.\d% of the rows \(from the set alone: ", msg), msg
    assert msg.endswith("or the risk named: allow_recode=['born', 'year']")
    pub = anonset.publish(df, model, allow_recode=["born", "year"], **kw)
    near = [f for f in pub.info["pass_through_risks"] if f["check"] == "set_recode"]
    assert [(f["column"], f["with"], f["sensitive"], f["allowed"]) for f in near] == \
        [("born", "year", "age", True)]
    assert near[0]["value"] >= 0.9 and near[0]["success"] > 0.95
    # the audit names it from the metadata, and with the original measures it itself
    from anonset import audit_file
    pub.to_parquet(tmp_path / "near.parquet")
    for rep, how in ((anonset.audit(pub), "recorded"), (anonset.audit(pub, df), "measured"),
                     (audit_file(tmp_path / "near.parquet", df, chunk_rows=500), "measured")):
        rows = rep.checks.query("check == 'set_recode'")
        assert rows["attribute"].tolist() == ["born+year -> age"], how
        assert rows["status"].tolist() == ["risk"]
        msg = rows["message"].iloc[0]
        assert ("measured on the original when the release was made" in msg) == \
            (how == "recorded"), msg
        assert "as the user allowed" in msg
    # larger sets hide it: at l = 12 the same columns leave too many candidates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", anonset.PassThroughWarning)
        wide = anonset.publish(df, anonset.Diversity({"age": 12, "race": 3}), **kw)
    assert not [f for f in wide.info["pass_through_risks"] if f["check"] == "set_recode"]


@given(rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), min_size=1, max_size=40),
       d=st.integers(6, 8), eta=st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_set_success_is_the_exact_success_of_the_adversary(rows, d, eta):
    """set_success against enumeration: every row, every set of eta - 1
    other values drawn with its true one, the adversary naming the set's
    value most common among the other rows with its column value (ties
    split evenly)."""
    from itertools import combinations
    from anonset.passthrough import ValueSample, set_success
    g = np.array([r[0] for r in rows], dtype=np.uint64)
    v = np.array([r[1] for r in rows], dtype=np.int64)
    vs = ValueSample(None)
    vs.add(g << np.uint64(40), v)       # the column's value in the hash's kept bits

    def oracle(groups):
        total = 0.0
        for i in range(len(rows)):
            same = [j for j in range(len(rows)) if j != i and groups[j] == groups[i]]
            count = np.bincount(v[same], minlength=d)
            others = [u for u in range(d) if u != v[i]]
            subsets = list(combinations(others, eta - 1))
            for dec in subsets:
                s = [v[i], *dec]
                best = max(count[u] for u in s)
                tied = [u for u in s if count[u] == best]
                total += (v[i] in tied) / len(tied) / len(subsets)
        return total / len(rows)

    assert set_success(vs, d, eta) == pytest.approx(oracle(g.tolist()), abs=1e-9)
    assert set_success(vs, d, eta, alone=True) == pytest.approx(oracle([0] * len(rows)),
                                                                abs=1e-9)


@given(n=st.integers(2, 400), d=st.integers(1, 6), blocks=st.integers(1, 5),
       seed=st.integers(0, 2**31), as_text=st.booleans())
@settings(max_examples=60, deadline=None)
def test_order_agreement_is_the_same_on_every_path(n, d, blocks, seed, as_text):
    """The order check is one number whatever the blocks, their order, and
    whether the column was read as numbers or as text; and a column drawn
    independently of the target never reaches a significant lambda >= 0.9."""
    from anonset.passthrough import DETERMINES, OrderSample
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"c": rng.integers(0, max(2, n // 3), n) * 0.5,
                          "t": rng.integers(0, d, n)})
    sub = {"t": frame["t"].to_numpy(dtype=np.uint16)}
    whole = OrderSample(["c"], ["t"])
    whole.add(frame, sub)
    want = whole.agreement()[("c", "t")]
    cuts = np.sort(rng.choice(np.arange(1, n), min(blocks, n) - 1, replace=False)) \
        if n > 1 else []
    parts = []
    for lo, hi in zip([0, *cuts], [*cuts, n]):
        part = frame.iloc[lo:hi]
        if as_text:
            part = part.assign(c=part["c"].map(repr).astype(object))
        s = OrderSample(["c"], ["t"])
        s.add(part.reset_index(drop=True), {"t": sub["t"][lo:hi]})
        parts.append(s)
    rng.shuffle(parts)
    for s in parts[1:]:
        parts[0].merge(s)
    assert parts[0].agreement()[("c", "t")] == want
    lam, agree, prior, significant = want
    assert not (significant and lam >= DETERMINES)


@pytest.mark.parametrize("method", ["lgb", "msa", "anatomy"])
def test_partition_publishers_refuse_a_recoding_pass_through_column_unless_named(method,
                                                                                 tmp_path):
    from anonset.audit.html.release import open_release
    from anonset.audit.partition import audit_partition
    df = _resume_like()

    def run(**allow):
        if method == "lgb":
            res = anonset.lgb.lgb(df, qi=["city"], sensitive=["race"], other=["firstname"],
                                  drop=["serial", "callback", "gender"], k=4, l=2, **allow)
            return res, res.metadata
        if method == "msa":
            from anonset.msa import anonymize_msa
            res = anonymize_msa(df, ["city"], ["race"], 4, 0.5, other=["firstname"],
                                drop=["serial", "callback", "gender"], **allow)
            return res, res.metadata
        from anonset.partition.baselines import anatomy
        res = anatomy(df, qids=["city"], sensitive="race", l=2, other=["firstname"],
                      drop=["serial", "callback", "gender"], **allow)
        return res, res.info

    with pytest.raises(InputError, match=r"column 'firstname': is a pass-through column that "
                                         r"predicts 'race'.*allow_recode=\['firstname'\]"):
        run()
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)     # named: no warning
        res, meta = run(allow_recode=["firstname"])
    assert {"check": "recode", "column": "firstname", "sensitive": "race",
            "value": 1.0, "allowed": True} in meta["pass_through_risks"]
    if method != "anatomy":
        out = tmp_path / "rel.parquet"
        res.write(out)
        rep = audit_partition(open_release(out)).report
        risky = rep.checks.query("status == 'risk'").set_index("attribute")
        assert "as the user allowed" in risky.loc["firstname -> race", "message"]


@pytest.mark.parametrize("method", ["lgb", "msa", "mondrian", "tp", "anatomy"])
def test_a_pass_through_column_that_recodes_a_generalized_qi_is_named(method, tmp_path):
    """The partition publishers generalize their QIs into groups of k (or
    l-diverse groups); a pass-through birth year beside an age published as
    a range gives the age at its exact values, and whoever knows a person's
    age finds their row inside its group (and, in msa's and Mondrian's
    tables, the row's sensitive values).  Publishing warns and records it,
    and the audit of the release alone names it; Anatomy publishes its QIs
    exactly, so there is nothing to undo."""
    import warnings as w
    from anonset.audit.html.release import open_release
    from anonset.audit.partition import audit_partition
    from anonset.partition import baselines as B
    rng = np.random.default_rng(11)
    n = 800
    age = rng.integers(20, 70, n)
    df = pd.DataFrame({"age": age, "born": 2026 - age, "town": rng.choice(list("xyz"), n),
                       "job": rng.permutation(np.resize(list("abcd"), n)),
                       "note": rng.choice(["p", "q"], n)})
    def run(**allow):
        common = dict(other=["born", "note"], **allow)
        if method == "lgb":
            res = anonset.lgb.lgb(df, qi=["age", "town"], sensitive=["job"], k=4, l=2, **common)
            return res, res.metadata
        if method == "msa":
            from anonset.msa import anonymize_msa
            res = anonymize_msa(df, ["age", "town"], ["job"], 4, 0.5, **common)
            return res, res.metadata
        res = getattr(B, method)(df, qids=["age", "town"], sensitive="job", l=2, **common)
        return res, res.info

    if method == "anatomy":
        with w.catch_warnings(record=True) as caught:
            w.simplefilter("always")
            res, meta = run()
        found = [x for x in caught if issubclass(x.category, anonset.PassThroughWarning)]
        assert not found and not [r for r in meta["pass_through_risks"]
                                  if r["check"] == "qi_recode"]
        return
    with pytest.raises(InputError) as e:
        run()
    msg = str(e.value)
    assert msg.startswith("column 'born': is a pass-through column that predicts the QI 'age'")
    assert "whoever knows a person's 'age' finds their row" in msg
    assert msg.endswith("expected it dropped, or made a QI too, or the risk named: "
                        "allow_recode=['born']")
    with w.catch_warnings():
        w.simplefilter("error", anonset.PassThroughWarning)
        res, meta = run(allow_recode=["born"])
    risks = meta["pass_through_risks"]
    assert risks == [{"check": "qi_recode", "column": "born", "qi": "age", "value": 1.0,
                      "allowed": True}]
    if method in ("lgb", "msa"):
        out = tmp_path / "rel.parquet"
        res.write(out)
        rep = audit_partition(open_release(out)).report
        assert set(rep.checks.query("status == 'risk'")["attribute"]) == {"born -> age"}
    # the note (unrelated) and a QI that is published as it is raise nothing
    with w.catch_warnings():
        w.simplefilter("error", anonset.PassThroughWarning)
        if method == "lgb":
            anonset.lgb.lgb(df, qi=["age", "town"], sensitive=["job"], k=4, l=2, other=["note"],
                            drop=["born"])
        elif method == "msa":
            from anonset.msa import anonymize_msa
            anonymize_msa(df, ["age", "town"], ["job"], 4, 0.5, other=["note"], drop=["born"])
        else:
            getattr(B, method)(df, qids=["age", "town"], sensitive="job", l=2, other=["note"],
                               drop=["born"])


@pytest.mark.parametrize("method", ["lgb", "mondrian"])
def test_a_row_number_of_a_file_sorted_by_a_qi_is_refused_by_the_partition_publishers(method):
    """A row number of a file sorted by age, published beside age as a
    range: sorted by it, the rows come in the order of their exact ages, so
    it undoes the generalization as a birth year would."""
    from anonset.partition import baselines as B
    rng = np.random.default_rng(12)
    n = 800
    df = pd.DataFrame({"age": np.sort(rng.integers(20, 70, n)), "town": rng.choice(list("xyz"), n),
                       "job": rng.permutation(np.resize(list("abcd"), n))})
    df["rownum"] = np.arange(n)

    def run(**allow):
        if method == "lgb":
            return anonset.lgb.lgb(df, qi=["age", "town"], sensitive=["job"], k=4, l=2,
                                   other=["rownum"], **allow).metadata
        return B.mondrian(df, qids=["age", "town"], sensitive="job", l=2, other=["rownum"],
                          **allow).info

    with pytest.raises(InputError, match=r"^column 'rownum': is a pass-through column whose "
                                         r"order predicts the QI 'age': sorted by it, .* it would "
                                         r"publish 'age' at its exact values beside its "
                                         r"generalization; expected it dropped, or made a QI too, "
                                         r"or the risk named: allow_recode=\['rownum'\]$"):
        run()
    with pytest.raises(InputError, match=r"^column 'rownum': is a pass-through column: 100.0% "
                                         r"of the rows hold a value no other row has"):
        run(allow_recode=["rownum"])                    # it singles rows out too
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)
        meta = run(allow_recode=["rownum"], allow_identifier=["rownum"])
    assert [(f["check"], f["qi"], f["allowed"]) for f in meta["pass_through_risks"]
            if f["check"] == "order_recode"] == [("order_recode", "age", True)]


def test_lgb_refuses_an_id_column_that_recodes_an_attribute(tmp_path, capsys):
    """LGB publishes its ID column verbatim (`--id`); a row number of a file
    sorted by race, given as the ID, gave each row's race by its place in
    the file although the buckets hide it, and nothing measured it.  It is
    measured as a pass-through column is (without the likely-identifier
    warning: an ID is unique by design), refused unless named."""
    df = _sorted_survey(1200)
    with pytest.raises(InputError, match=r"^column 'rownum': is the ID column whose order "
                                         r"predicts 'race': .*; expected another ID column, or "
                                         r"none \(random IDs\), or the risk named: "
                                         r"allow_recode=\['rownum'\]$"):
        anonset.lgb.lgb(df, qi=["city"], sensitive=["race", "job"], id_column="rownum", k=4,
                        l=2, drop=["serial"], allow_identifier=["rownum"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)      # no identifier warning
        res = anonset.lgb.lgb(df, qi=["city"], sensitive=["race", "job"], id_column="rownum",
                              k=4, l=2, drop=["serial"], allow_recode=["rownum"],
                              allow_identifier=["rownum"])
    assert [(f["check"], f["column"], f["sensitive"], f["allowed"])
            for f in res.metadata["pass_through_risks"]] == \
        [("order_recode", "rownum", "race", True), ("identifier", "rownum", None, True)]
    # a serial drawn at random is a fine ID (its link between releases named)
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)
        res = anonset.lgb.lgb(df, qi=["city"], sensitive=["race", "job"], id_column="serial",
                              k=4, l=2, drop=["rownum"], allow_identifier=["serial"])
    assert [f["check"] for f in res.metadata["pass_through_risks"]] == ["identifier"]
    df.to_csv(tmp_path / "s.csv", index=False)
    capsys.readouterr()
    assert cli_main(["lgb", str(tmp_path / "s.csv"), "-o", str(tmp_path / "o.parquet"),
                     "--qi", "city", "--sensitive", "race,job", "--id", "rownum",
                     "--drop", "serial", "--k", "4", "--l", "2",
                     "--allow-identifier", "rownum"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("or the risk named: --allow-recode rownum\n")
    assert not list(tmp_path.glob("o*"))


def test_an_exact_qid_that_recodes_a_sensitive_column_is_named(tmp_path):
    """Paper 004 keeps QIDs exact; one that is a code of the sensitive
    column (a code beside its label, Adult's education-num beside
    education) publishes it beside its sets.  Publishing (set tables and
    semantic diversity) warns and records it; the audit with the original
    measures exact QIDs as it measures pass-through columns."""
    rng = np.random.default_rng(4)
    jobs = list("abcdef")
    df = pd.DataFrame({"job": rng.choice(jobs, 900), "age": rng.integers(20, 70, 900)})
    df["jobcode"] = df["job"].map({v: 100 + i for i, v in enumerate(jobs)})
    with pytest.raises(InputError, match=r"column 'jobcode': is an exact column that predicts "
                                         r"'job'.*published exactly, it would publish 'job' "
                                         r"nearly in the clear; expected it published as "
                                         r"sensitive too, or dropped, or the risk named"):
        anonset.publish(df, anonset.Diversity(3), sensitive=["job"], exact=["jobcode", "age"],
                        domains={"job": jobs})
    pub = anonset.publish(df, anonset.Diversity(3), sensitive=["job"], exact=["jobcode", "age"],
                          domains={"job": jobs}, allow_recode=["jobcode"])
    assert pub.info["pass_through_risks"] == [
        {"check": "recode", "column": "jobcode", "sensitive": "job", "value": 1.0,
         "allowed": True}]
    checks = anonset.audit(pub, df).checks.set_index(["check", "attribute"])
    assert checks.loc[("recode", "jobcode -> job"), "status"] == "risk"
    assert checks.loc[("recode", "age -> job"), "status"] == "pass"
    with pytest.raises(InputError, match="column 'jobcode': is an exact column"):
        anonset.semantic.semantic_publish(df, "job", 2, 1, qids=["jobcode", "age"], domain=jobs)
    sem = anonset.semantic.semantic_publish(df, "job", 2, 1, qids=["jobcode", "age"],
                                            domain=jobs, allow_recode=["jobcode"])
    assert sem.info["pass_through_risks"][0]["column"] == "jobcode"
    assert sem.info["pass_through_risks"][0]["allowed"] is True
    # Anatomy publishes its QIDs as they are too (Mondrian and TP generalize)
    from anonset.partition.baselines import anatomy, mondrian
    with pytest.raises(InputError, match="column 'jobcode': is an exact column"):
        anatomy(df, qids=["jobcode", "age"], sensitive="job", l=2)
    rel = anatomy(df, qids=["jobcode", "age"], sensitive="job", l=2, allow_recode=["jobcode"])
    assert rel.info["pass_through_risks"][0]["column"] == "jobcode"
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.PassThroughWarning)
        assert mondrian(df, qids=["jobcode", "age"], sensitive="job", l=2) \
            .info["pass_through_risks"] == []


def test_a_categorical_made_from_the_data_is_a_domain_read_off_it(tmp_path):
    """CPS1985's wage was refused as a domain read off the data (164 wages
    held by one row alone), but after `df['wage'].astype('category')` the
    categories counted as a declared domain: published, audit PASSED, 17
    wages each in their holder's set alone.  A Categorical whose every
    category is someone's is what astype('category') makes of the data, so
    it counts as read off the data on every path; one that lists a value
    nobody holds is declared, as before."""
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"income": np.round(rng.lognormal(1, 1, 500), 2),
                       "job": rng.choice(list("abc"), 500)})
    plain = _refused_alike(df, anonset.Diversity(2), dict(sensitive=["income", "job"]),
                           tmp_path, "income", chunk_rows=128)
    cat = df.assign(income=df["income"].astype("category"))
    line = _refused_alike(cat, anonset.Diversity(2), dict(sensitive=["income", "job"]),
                          tmp_path, "income", chunk_rows=128)
    assert line == plain
    # and through a schema inferred from it (it declared the categories)
    schema = anonset.Schema.infer(cat, sensitive=["income", "job"])
    assert schema["income"].inferred
    with pytest.raises(InputError) as e:
        anonset.publish(cat, anonset.Diversity(2), schema)
    assert str(e.value) == "column 'income': " + plain
    # a category nobody holds: declared (it may list values nobody holds)
    wide = cat.assign(income=cat["income"].cat.add_categories([-1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.InferredDomainWarning)
        pub = anonset.publish(wide, anonset.Diversity(2), sensitive=["income"], drop=["job"])
    assert not pub.schema["income"].inferred and -1.0 in pub.schema["income"].domain


def test_an_inferred_domain_with_values_in_one_set_alone_is_refused_on_every_path(
        tmp_path, capsys):
    """An income column published with its domain read off the data lists
    every income that occurs, most held by one person (NMES1988: 1,897 of
    3,015).  That domain tells that each income is someone's, so an income
    that lies in one published set alone is that row's, with certainty: at
    l = 2 over 376 values in 500 rows, about 75 rows.  Every path refuses
    it with the same line; named (`allow_rare`, `--allow-rare`), it is
    published, and the warning, the metadata, the summary and the audit
    (which counts the values in one set alone) name it."""
    from anonset.cli import main
    from anonset.randomized.rare import expected_exposed
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"income": np.round(rng.lognormal(1, 1, 500), 2),
                       "job": rng.choice(list("abc"), 500)})
    counts = df["income"].value_counts()
    lone, d = int((counts == 1).sum()), len(counts)
    assert lone > 100
    kw = dict(sensitive=["income", "job"])
    model = anonset.Diversity(2)
    line = _refused_alike(df, model, kw, tmp_path, "income", chunk_rows=128)
    par = AttributeParams("income", 1.0, 2, d, l=2)
    x = expected_exposed(counts.to_numpy(), 500, par)
    assert 50 < x < 110
    assert line.startswith(f"its domain is read off the data, so each of its {d} values is "
                           f"known to be someone's ({lone} held by one row alone)")
    assert f"expected for {x:,.1f} of its values (in one set alone)" in line
    assert line.endswith("expected its domain declared from what the column can hold, not "
                         "copied from the data (domains, bins: every possible value, which may "
                         "include values nobody holds, or coarser values), or the risk named: "
                         "allow_rare=['income']")
    # the list of the values held, declared as the remedy seemed to ask (H16):
    # published, and warned of
    with pytest.warns(anonset.InferredDomainWarning,
                      match=r"the declared domain of 'income' lists only values the data "
                            r"holds \(all \d+, \d+ of them held by one row alone\): if it was "
                            r"copied from the data"):
        anonset.publish(df, model, domains={"income": sorted(counts.index)}, **kw)
    # the expectation is the sampler's: the values in one set alone over 20
    # releases average x within 4 standard errors (each count's variance <= x)
    from anonset.audit.masks import value_counts
    alone = [int((value_counts(anonset.publish(df, model, allow_rare=["income"], **kw)
                               .mask("income"), d) == 1).sum()) for _ in range(20)]
    assert abs(np.mean(alone) - x) <= 4 * np.sqrt(x / 20), (np.mean(alone), x)
    # a declared domain lifts it (it may list values nobody holds)
    anonset.publish(df, model, domains={"income": sorted(counts.index)}, **kw)
    # a schema whose domains were read off the data declares nothing
    schema = anonset.Schema.infer(df, **kw)
    with pytest.raises(InputError) as e:
        anonset.publish(df, model, schema)
    assert str(e.value) == "column 'income': " + line
    # named: published, and named on every path alike
    want = f"(it lists values that one row alone holds: {lone:,} of the {d:,} of 'income')"
    outs = {"csv": tmp_path / "o1.parquet", "parquet": tmp_path / "o2.parquet"}
    for path, run in _four_paths(df, model, {**kw, "allow_rare": ["income"]}, tmp_path,
                                 chunk_rows=128).items():
        with pytest.warns(anonset.InferredDomainWarning) as rec:
            pub = run()
        if path in outs:
            pub = anonset.read_parquet(outs[path])
        msg = str(rec[0].message)
        assert want in msg and "'job'" in msg.split(want)[0], msg     # job: no lone value
        rare = pub.info["rare"]
        assert list(rare) == ["income"]
        # the release's own facts only: never the original's counts
        assert rare == {"income": {"below": 2, "d": d}}
        rep = anonset.audit(pub)
        row = rep.checks[(rep.checks["check"] == "rare") &
                          (rep.checks["attribute"] == "income")].iloc[0]
        assert row["status"] == "risk" and 30 < row["value"] < 130, row
        assert "published as the user allowed: allow_rare" in row["message"]
        job = rep.checks[(rep.checks["check"] == "rare") & (rep.checks["attribute"] == "job")]
        assert job["status"].tolist() == ["pass"]
    assert not (tmp_path / "c.parquet").exists()
    df.to_csv(tmp_path / "i.csv", index=False)
    assert main(["anonymize", str(tmp_path / "i.csv"), "-o", str(tmp_path / "c.parquet"),
                 "--sensitive", "income,job", "--l", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("or the risk named: --allow-rare income") and "\n" not in err, err
    assert not (tmp_path / "c.parquet").exists()
    assert main(["anonymize", str(tmp_path / "i.csv"), "-o", str(tmp_path / "c.parquet"),
                 "--sensitive", "income,job", "--l", "2", "--allow-rare", "income"]) == 0
    assert "published with values so rare that counting their sets points at their holders " \
           "(you allowed it): income (values in fewer than 2 sets point at their holders)" \
           in capsys.readouterr().err


def test_the_audit_counts_the_values_that_lie_in_one_set_alone():
    """The audit's count from the published table alone: the values of a
    domain read off the data that lie in fewer than L sets, counted from the
    sets themselves (here against a count made by hand)."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"v": rng.integers(0, 400, 300), "j": rng.choice(list("ab"), 300)})
    pub = anonset.publish(df, anonset.Diversity({"v": 3, "j": 2}), sensitive=["v", "j"],
                          allow_rare=["v"])
    dom = pub.schema["v"].domain
    held = {x: 0 for x in dom}
    for s in pub.sets("v"):
        for x in s:
            held[x] += 1
    few = [x for x, c in held.items() if 1 <= c < 3]
    assert few
    row = anonset.audit(pub).checks.query("check == 'rare' and attribute == 'v'").iloc[0]
    assert row["status"] == "risk" and row["value"] == len(few)
    assert f"so those {sum(held[x] for x in few):,} row(s) are pointed at" in row["message"]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 60), d=st.integers(2, 12), eta=st.integers(1, 12),
       l=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_the_expected_count_of_values_in_few_sets_is_exact(n, d, eta, l, seed):
    """Property: expected_exposed is the exact expectation of the number of
    values that lie in at least one and fewer than L sets, under the
    sampler's law (each holder's set holds its value; each other row's set
    holds it with probability (eta - 1) / (d - 1)): checked against an
    exact sum over every count of decoys by dynamic programming in
    fractions."""
    from fractions import Fraction
    from math import comb
    from anonset.randomized.rare import below, expected_exposed
    eta = min(eta, d)
    rng = np.random.default_rng(seed)
    counts = np.bincount(rng.integers(0, d, n), minlength=d)
    par = AttributeParams("v", 1.0, eta, d, l=l)
    top = below(par)
    q = Fraction(eta - 1, d - 1)
    want = Fraction(0)
    for k in counts.tolist():
        if k == 0:
            continue
        m = n - k
        # P(k + Bin(m, q) in [1, top))
        want += sum(comb(m, i) * q ** i * (1 - q) ** (m - i)
                    for i in range(m + 1) if 1 <= k + i < top)
    got = expected_exposed(counts, n, par)
    assert got == pytest.approx(float(want), rel=1e-9, abs=1e-12)


_SENS = list("abcdefgh")


@settings(max_examples=30, deadline=None)
@given(n=st.integers(40, 300), k=st.integers(2, 8), noise=st.sampled_from([0.0, 0.02, 0.2, 0.6]),
       groups=st.integers(1, 40), seed=st.integers(0, 10_000))
@example(n=40, k=7, noise=0.0, groups=1, seed=23)      # a declared value nobody holds (CI)
def test_the_publishing_check_measures_what_the_audit_measures(n, k, noise, groups, seed):
    """Property: on any table (whose sensitive values' 16-bit hashes differ,
    as for these eight), the recodes and lambdas found at publishing are
    those the audit measures with the original data."""
    from anonset.passthrough import hash_cells
    assert len(set((hash_cells(pd.Series(_SENS)) & np.uint64(0xFFFF)).tolist())) == 8
    rng = np.random.default_rng(seed)
    job = rng.choice(_SENS[:k], n)
    code = pd.Series(job).map({v: i for i, v in enumerate(_SENS)}).to_numpy().copy()
    flip = rng.random(n) < noise
    code[flip] = rng.integers(0, k, int(flip.sum()))           # a noisy recode
    df = pd.DataFrame({"job": job, "code": code, "grp": rng.integers(0, groups, n)})
    kw = dict(sensitive=["job"], other=["code", "grp"], domains={"job": _SENS[:k]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            anonset.publish(df, anonset.Diversity(2), **kw)
            refused = None
        except InputError as e:
            # a noisy recode below the recode threshold may still leave
            # the job's 2-set one value: the sets read with the columns; and
            # a declared value nobody holds (40 rows of 7 values) may leave
            # some 2-sets one value a reader can take
            refused = ("read:" if "read together" in str(e) else
                       "clear:" if "nobody or few hold" in str(e) else "") + str(e.column)
        pub = anonset.publish(df, anonset.Diversity(2), allow_recode=["code", "grp"],
                              allow_identifier=["grp"], allow_clear=["job"], **kw)
        checks = anonset.audit(pub, df).checks
    measured = checks[checks["check"] == "recode"].set_index("attribute")
    found = {f"{f['column']} -> {f['sensitive']}": f["value"]
             for f in pub.info["pass_through_risks"] if f["check"] == "recode"}
    risky = measured[measured["status"] == "risk"]
    assert set(found) == set(risky.index)
    # refused unless named exactly when a recode is found (the first named);
    # without one, a column that recodes the job by its order, narrows it so
    # far that its 2-sets give it away, or gives it away through some of its
    # values is refused too; without any, one that singles rows out
    from anonset.passthrough import REFUSED_CHECKS
    others = [f["column"] for f in pub.info["pass_through_risks"]
              if f["check"] in REFUSED_CHECKS]
    ids = [f["column"] for f in pub.info["pass_through_risks"] if f["check"] == "identifier"]
    want = (min(found).split(" -> ")[0] if found else
            others[0] if others else ids[0] if ids else None)
    assert refused == want or (want is None and refused in ("read:job", "clear:job")), \
        (refused, want)
    for a, v in found.items():
        assert v == pytest.approx(float(risky.loc[a, "value"]), abs=1e-4)


@pytest.mark.parametrize("cmd", ["lgb", "msa-anonymize", "semantic-anonymize"])
def test_the_partition_and_semantic_commands_refuse_a_recode_unless_named(cmd, tmp_path,
                                                                          capsys):
    """`lgb`, `msa-anonymize` and `semantic-anonymize` refuse a column that
    recodes an attribute with exit 2 and one line naming --allow-recode;
    named, the release is written and its summary says what it took."""
    df = _resume_like()
    src = tmp_path / "r.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "o.parquet"
    argv = {"lgb": ["lgb", str(src), "-o", str(out), "--qi", "city", "--sensitive", "race",
                    "--other", "firstname", "--drop", "serial,callback,gender", "--k", "4",
                    "--l", "2"],
            "msa-anonymize": ["msa-anonymize", str(src), "-o", str(out), "--qi", "city", "--sa",
                              "race", "--other", "firstname", "--drop",
                              "serial,callback,gender", "--k", "4", "--t", "0.5"],
            "semantic-anonymize": ["semantic-anonymize", str(src), "-o", str(out),
                                   "--sensitive", "race", "--qids", "firstname,city", "--drop",
                                   "serial,callback,gender", "--l", "2", "--d", "1",
                                   "--domain", "black,white"]}[cmd]
    capsys.readouterr()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r.csv': column 'firstname': is a" in err
    assert err.rstrip().endswith("or the risk named: --allow-recode firstname")
    assert not out.exists()
    assert cli_main(argv + ["--allow-recode", "firstname"]) == 0
    cap = capsys.readouterr()
    assert "published nearly in the clear through columns that recode them" in cap.out + cap.err
    assert "firstname -> race (lambda 1.00)" in cap.out + cap.err
    assert out.exists()


def test_a_series_goes_on_under_its_own_key_only(tmp_path, capsys):
    """A release given an earlier release of a persistent-key series draws
    its sets under that series' key and record id, or is refused, in memory,
    streamed, on Dask and on the command line, with one line and nothing
    written.  Before, another key file (a new one, a colleague's) or no
    record id at all (a fresh key) was accepted silently: every set drawn
    anew, and intersected with the first release's, 2-sets of 5 values left
    the true value alone for about 3 records in 4."""
    import dask.dataframe as dd
    from anonset import dask as adask
    from anonset.io.keys import key_check, read_key_file
    rng = np.random.default_rng(31)
    n = 1200
    df = pd.DataFrame({"rid": np.arange(n), "wage": rng.choice(list("abcde"), n)})
    keys = [tmp_path / "series.key", tmp_path / "other.key"]
    for k in keys:
        anonset.io.keys.new_key_file(k)
    kw = dict(identifiers=["rid"], sensitive=["wage"], domains={"wage": list("abcde")})
    model = anonset.Diversity(2)
    with pytest.warns(UserWarning, match="params=this"):
        first = anonset.publish(df, model, key_file=keys[0], record_id="rid",
                                first_in_series=True, **kw)
    assert first.info["key_check"] == key_check(make_key(read_key_file(keys[0])))
    assert first.info["key_check"] != key_check(make_key(read_key_file(keys[1])))
    first.to_parquet(tmp_path / "r1.parquet")
    back = anonset.read_parquet(tmp_path / "r1.parquet")
    assert back.info["key_check"] == first.info["key_check"]
    # what the refusal prevents: the sets of another key, intersected
    with pytest.warns(UserWarning, match="params=this"):
        other = anonset.publish(df, model, key_file=keys[1], record_id="rid",
                                first_in_series=True, **kw)
    both = (_in_input_order(first, "wage") & _in_input_order(other, "wage"))[:, 0]
    alone = np.mean([bin(int(m)).count("1") == 1 for m in both])
    assert 0.6 < alone < 0.9
    src = tmp_path / "in.parquet"
    df.to_parquet(src)
    lines = {}
    for case, more in (("key_file", dict(key_file=keys[1], record_id="rid")),
                       ("record_id", {})):
        what = (r"is not the key that drew the earlier release \(record id 'rid'\)"
                if case == "key_file" else r"is not given, but the earlier release is a release "
                                           r"of a persistent-key series \(record id 'rid'\)")
        for prior in (first, back):
            with pytest.raises(InputError, match=what) as err:
                anonset.publish(df, model, params=prior, **kw, **more)
            assert err.value.param == case
        out = tmp_path / f"{case}.parquet"
        with pytest.raises(InputError, match=what):
            publish_file(src, out, model, params=back, chunk_rows=300, **kw, **more)
        with pytest.raises(InputError, match=what):
            adask.publish(dd.from_pandas(df, npartitions=3), model, params=back,
                          scheduler="sync", **kw, **more)
        assert not out.exists()
        args = ["anonymize", str(src), "-o", str(out), "--identifier", "rid", "--sensitive",
                "wage", "--domain", "wage=a,b,c,d,e", "--l", "2",
                "--params-from", str(tmp_path / "r1.parquet")]
        if case == "key_file":
            args += ["--key-file", str(keys[1]), "--record-id", "rid"]
        assert cli_main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and not out.exists()
        lines[case] = err[0]
    assert re.search(r"--key-file: is not the key that drew '.*r1.parquet' \(record id 'rid'\)",
                     lines["key_file"])
    assert re.search(r"--record-id: is not given, .*expected --key-file of the series and "
                     r"--record-id rid", lines["record_id"])
    # a seed that is not the series' key is named as the seed (it said --key-file)
    with pytest.raises(InputError, match=r"is not the key that drew .*the key of the series "
                                         r"\(the seed that drew") as err:
        anonset.publish(df, model, params=back, seed="0f1e2d3c4b5a69788796a5b4c3d2e1f0",
                        record_id="rid", **kw)
    assert err.value.param == "seed"
    # the series' own key goes on, with the same sets
    second = anonset.publish(df, model, params=back, key_file=keys[0], record_id="rid", **kw)
    assert np.array_equal(_in_input_order(second, "wage"), _in_input_order(first, "wage"))
    # the record id under another name keeps the sets only if it holds the
    # same ids: it warns
    with pytest.warns(UserWarning, match=r"record id 'pid': the earlier release was published "
                                         r"with record id 'rid'"):
        renamed = anonset.publish(df.rename(columns={"rid": "pid"}), model, params=back,
                                  key_file=keys[0], record_id="pid",
                                  **dict(kw, identifiers=["pid"]))
    assert np.array_equal(_in_input_order(renamed, "wage"), _in_input_order(first, "wage"))
    # a release of a key that is not persistent binds nothing
    fresh = anonset.publish(df, model, **kw)
    assert "key_check" not in fresh.info
    with pytest.warns(UserWarning, match="params=this"):
        anonset.publish(df, model, params=fresh, key_file=keys[1], record_id="rid",
                        first_in_series=True, **kw)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=40))
def test_integer_record_ids_hash_as_their_decimal_text(ids):
    """Integer record ids are hashed from the numbers (a million ids: 0.47 ->
    0.12 s); every hash must equal the one of the id's decimal text, which
    releases of a series made before keep (and a CSV's text ids give)."""
    from anonset.io import keys as K
    vals = np.asarray(ids, dtype=object)
    by_text = K._mix64(K._fnv1a64(np.asarray([str(v) for v in ids], dtype=object)))
    assert np.array_equal(K.record_hashes(vals), by_text)
    assert np.array_equal(K.checked_record_hashes(vals, text=False, column="rid"), by_text)
    assert np.array_equal(K.record_hashes(np.asarray([str(v) for v in ids], dtype=object)),
                          by_text)


@pytest.mark.parametrize("method", ["lgb", "msa"])
def test_a_partition_audit_with_the_original_measures_the_recodes_again(method, tmp_path):
    """The audit of an lgb or msa release used to show the recodes as
    recorded at publishing, even with the original at hand.  With it, the
    columns published as they are are measured again (as publishing
    measures them): a row number of a file sorted by age, allowed, is a
    risk measured now; a column that recodes nothing passes."""
    from anonset.audit.partition import audit_partition
    from anonset.audit.html.release import open_release
    from anonset.partition.msa.result import anonymize_msa
    rng = np.random.default_rng(12)
    n = 800
    df = pd.DataFrame({"age": np.sort(rng.integers(20, 70, n)), "town": rng.choice(list("xyz"), n),
                       "job": rng.permutation(np.resize(list("abcd"), n)),
                       "note": rng.choice(list("pqrs"), n)})
    df["rownum"] = np.arange(n)
    allow = dict(allow_recode=["rownum"], allow_identifier=["rownum"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", anonset.PassThroughWarning)
        if method == "lgb":
            res = anonset.lgb.lgb(df, qi=["age", "town"], sensitive=["job"], k=4, l=2,
                                  other=["rownum", "note"], **allow)
        else:
            res = anonymize_msa(df, ["age", "town"], ["job"], 4, 0.5, other=["rownum", "note"],
                                **allow)
    out = tmp_path / "pub.parquet"
    res.write(out)
    rel = open_release(out)
    alone = audit_partition(rel).report.checks
    row = alone[alone["check"] == "order_recode"].iloc[0]
    assert row["status"] == "risk" and "when the release was made" in row["message"]
    rep = audit_partition(rel, df).report.checks
    order = rep[rep["check"] == "order_recode"]
    assert len(order) == 1, order
    row = order.iloc[0]
    assert row["attribute"] == "rownum -> age" and row["status"] == "risk"
    assert row["message"].endswith("(measured with the original) (published as the user "
                                   "allowed: allow_recode)"), row["message"]
    note = rep[(rep["check"] == "recode") & (rep["attribute"] == "note")]
    assert note["status"].tolist() == ["pass"], note


@pytest.mark.parametrize("method", ["msa", "lgb"])
def test_a_partition_audit_names_a_shared_id_the_user_allowed(method, tmp_path):
    """The audit of an msa or LGB release said nothing of the user's
    allow_shared_id (the set tables' audit did), and spoke of sets drawn
    independently, words of the set tables: a partition release groups the
    rows, and one person's rows count as several people in a group."""
    from anonset.audit.html.release import open_release
    from anonset.audit.partition import audit_partition
    from anonset.msa import anonymize_msa
    from anonset.partition.lgb import lgb
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"household": np.arange(n) // 3, "sex": rng.choice(["f", "m"], n),
                       "region": rng.choice(list("nsew"), n), "job": rng.choice(list("abcd"), n)})
    kw = dict(identifiers=["household"], seed=SEED)
    if method == "msa":
        def run(**more):
            return anonymize_msa(df, ["sex", "region"], ["job"], 5, 0.4, **kw, **more)
    else:
        def run(**more):
            return lgb(df, qi=["sex", "region"], sensitive=["job"], k=4, l=2, **kw, **more)
    with pytest.raises(InputError, match=r"the risk named: allow_shared_id=\['household'\]"):
        run()
    res = run(allow_shared_id=["household"])
    res.write(tmp_path / "r.parquet")
    report = audit_partition(open_release(tmp_path / "r.parquet"), df).report
    row = report.checks.query("check == 'shared_id'").iloc[0]
    assert (row.attribute, row.status) == ("household", "warn")
    assert "a group of k rows may hold fewer than k people" in row.message, row.message
    assert "sets were drawn" not in row.message
    assert row.message.endswith("(published as the user allowed: allow_shared_id)"), row.message


def test_replacing_a_release_under_another_key_is_warned_of_on_every_path(tmp_path, capsys):
    # a monthly job that writes to one file with fresh keys publishes
    # releases that intersect to the true values, if any was shared; the
    # file it replaces says what it held, so the writer warns (every path:
    # a SetTable, a stream, Dask, the command line)
    import warnings
    import dask.dataframe as dd
    from anonset import RepeatedReleaseWarning
    from anonset.cli import main
    from anonset.io.stream import publish_file
    rng = np.random.default_rng(4)
    n = 200
    df = pd.DataFrame({"rid": [f"r{i}" for i in range(n)], "job": rng.choice(list("abcd"), n),
                       "age": rng.choice(["young", "old"], n), "city": rng.choice(list("xy"), n)})
    kw = dict(sensitive=["job", "age"], exact=["city"], identifiers=["rid"],
              domains={"job": list("abcd"), "age": ["young", "old"]})
    out = tmp_path / "pub.parquet"

    def write(pub, path=out):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            # by the name's format: a CSV name gets CSV (it got Parquet bytes)
            if callable(pub):
                pub(path)
            elif str(path).endswith(".csv"):
                pub.to_csv(path)
            else:
                pub.to_parquet(path)
        return [str(w.message) for w in got if issubclass(w.category, RepeatedReleaseWarning)]

    assert write(anonset.publish(df, anonset.Diversity(2), **kw)) == []     # nothing there yet
    said = write(anonset.publish(df, anonset.Diversity(2), **kw))
    assert len(said) == 1 and said[0].startswith(
        f"{str(out)!r} held a release of {n} records with the sensitive column(s) job, age "
        "under a fresh key; it is replaced.  If it was shared, the two can be intersected")
    # a stream and Dask say it alike; as CSV its metadata file tells
    df.to_parquet(tmp_path / "in.parquet")
    assert len(write(lambda p: publish_file(tmp_path / "in.parquet", p, anonset.Diversity(2),
                                            **kw))) == 1
    lazy = anonset.dask.publish(dd.from_pandas(df, npartitions=2), anonset.Diversity(2), **kw)
    assert len(write(lazy)) == 1
    csv = tmp_path / "pub.csv"
    write(anonset.publish(df, anonset.Diversity(2), **kw), csv)
    assert len(write(anonset.publish(df, anonset.Diversity(2), **kw), csv)) == 1
    # not warned: other sensitive columns; a file that is not a release;
    # two seeded releases (a seed reproduces its release); one persistent key
    assert write(anonset.publish(df, anonset.Diversity(2), sensitive=["city"],
                                 drop=["job", "age"], identifiers=["rid"],
                                 domains={"city": list("xy")})) == []
    df.to_parquet(tmp_path / "plain.parquet")
    assert write(anonset.publish(df, anonset.Diversity(2), **kw), tmp_path / "plain.parquet") \
        == []
    seeded = dict(kw, seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    write(anonset.publish(df, anonset.Diversity(2), **seeded))
    assert write(anonset.publish(df, anonset.Diversity(2), **seeded)) == []
    for name in ("a.key", "b.key"):
        (tmp_path / name).write_text(anonset.io.keys.secrets.token_hex(32))
        (tmp_path / name).chmod(0o600)
    # (each declared the first of its series: what the writer sees, not the series' check)
    series = dict(kw, key_file=tmp_path / "a.key", record_id="rid", first_in_series=True)
    assert len(write(anonset.publish(df, anonset.Diversity(2), **series))) == 1   # was seeded
    assert write(anonset.publish(df, anonset.Diversity(2), **series)) == []
    # one persistent key, another l without the first's parameters: the sets
    # are drawn anew (wagepan: 123 of 545 occupations pinned), so it warns
    said = write(anonset.publish(df, anonset.Diversity({"job": 3, "age": 2}), **series))
    assert len(said) == 1 and said[0].startswith(
        f"{str(out)!r} held a release of {n} records under this persistent key, but with "
        "other parameters or another domain for job, whose sets are drawn anew"), said
    assert write(anonset.publish(df, anonset.Diversity({"job": 3, "age": 2}), **series)) == []
    other = dict(series, key_file=tmp_path / "b.key")
    said = write(anonset.publish(df, anonset.Diversity(2), **other))
    assert len(said) == 1 and "under another key" in said[0]
    # the command line prints it as a warning of its own
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    argv = ["anonymize", str(src), "-o", str(tmp_path / "cli.parquet"), "--sensitive", "job,age",
            "--exact", "city", "--identifier", "rid", "--domain", "job=a,b,c,d",
            "--domain", "age=young,old", "--l", "2"]
    assert main(argv) == 0
    assert "held a release" not in capsys.readouterr().err
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "anonset: WARNING: '" in err and "cli.parquet' held a release of 200 records" in err


def test_a_key_file_over_a_later_wave_draws_anew_not_the_same_words(tmp_path):
    """wagepan's 545 men, 1980 and 1981, one key file, no record id: the rows
    came out in the same order (the order was keyed by the key and the
    parameters only) and each row's set was drawn from the same words, so a
    changed occupation showed as the difference of the two sets: 126 of the
    261 changes read off, old and new, at l = 3.  A release that is not
    persistent now keys its draws by its table too: the same table under
    one key reproduces its release on every path, another table is drawn
    as under another key (the documented risk of a fresh key; --record-id
    keeps a record's sets)."""
    import dask.dataframe as dd
    rng = np.random.default_rng(11)
    n = 600
    jobs = list("abcdefghi")
    w1 = pd.DataFrame({"job": rng.choice(jobs, n)})
    w2 = w1.copy()
    moved = rng.random(n) < 0.5
    w2.loc[moved, "job"] = rng.choice(jobs, int(moved.sum()))
    changed = (w1["job"] != w2["job"]).to_numpy()
    key = tmp_path / "k.key"
    key.write_text(anonset.io.keys.secrets.token_hex(32))
    key.chmod(0o600)
    kw = dict(sensitive=["job"], domains={"job": jobs}, key_file=key)

    def read_off(l):
        a = anonset.publish(w1, anonset.Diversity(l), **kw)
        b = anonset.publish(w2, anonset.Diversity(l), **kw)
        aligned = float(np.mean(a.source_rows == b.source_rows))
        ma, mb = np.empty_like(a.mask("job")), np.empty_like(b.mask("job"))
        ma[a.source_rows], mb[b.source_rows] = a.mask("job"), b.mask("job")   # by person
        diff = np.unpackbits((ma ^ mb).view(np.uint8), axis=1).sum(axis=1)
        # a changed value whose two sets differ by one swap names old and new
        return aligned, float(np.mean(diff[changed] == 2)), float(np.mean(diff[~changed] == 0))

    for l in (3, 4):
        aligned, swapped, kept = read_off(l)
        assert aligned < 0.05, aligned                 # no row lined up by position
        # independent sets of 9 values, around two different values, differ
        # by one swap for 0.19 of the pairs at l = 3 and 0.14 at l = 4 (sd
        # 0.025 over 273 changes; the same words: ~0.7); unchanged values
        # are drawn anew too (the bound was 0.25: 1 run in 75 failed)
        assert swapped < 0.4 and kept < 0.2, (l, swapped, kept)
    # one table under one key: the same release, in memory, streamed, on Dask
    ref = anonset.publish(w1, anonset.Diversity(3), **kw)
    w1.to_csv(tmp_path / "w1.csv", index=False)
    publish_file(tmp_path / "w1.csv", tmp_path / "o.parquet", anonset.Diversity(3),
                 chunk_rows=97, **kw)
    assert anonset.read_parquet(tmp_path / "o.parquet").equals(ref)
    lazy = anonset.dask.publish(dd.from_pandas(w1, npartitions=3), anonset.Diversity(3),
                                scheduler="sync", **kw)
    assert lazy.to_settable(scheduler="sync").equals(ref)


def test_replacing_an_lgb_or_msa_release_under_a_fresh_key_is_warned_of(tmp_path):
    # a partition release under another key draws other groups, which
    # intersect with the earlier ones: the writer warns as the sets' does
    import warnings
    from anonset import RepeatedReleaseWarning
    from anonset.msa import anonymize_msa
    from anonset.partition.lgb import lgb
    rng = np.random.default_rng(5)
    n = 120
    df = pd.DataFrame({"age": rng.integers(20, 70, n), "sex": rng.choice(["f", "m"], n),
                       "job": rng.choice(list("abcdef"), n)})
    seed = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
    makers = {"lgb": lambda **k: lgb(df, qi=["age", "sex"], sensitive=["job"], k=3, l=2, **k),
              "msa": lambda **k: anonymize_msa(df, ["age", "sex"], ["job"], 3, 0.5, **k)}

    def write(res, path):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            res.write(path)
        return [str(w.message) for w in got if issubclass(w.category, RepeatedReleaseWarning)]

    for name, make in makers.items():
        for ext in ("parquet", "csv"):
            out = tmp_path / f"{name}.{ext}"
            assert write(make(), out) == []
            said = write(make(), out)
            assert len(said) == 1 and said[0].startswith(
                f"{str(out)!r} held a release of the sensitive column(s) job under a fresh key")
            seeded = tmp_path / f"{name}-seeded.{ext}"
            write(make(seed=seed), seeded)
            assert write(make(seed=seed), seeded) == []          # one key reproduces it
    # an LGB release over an msa one (another paper's release) is not warned of
    assert write(makers["lgb"](), tmp_path / "msa.parquet") == []


def _sorted_by_income(n=600, seed=3):
    """A file sorted by income, its row number written as a column, and a
    serial drawn at random (no order)."""
    rng = np.random.default_rng(seed)
    income = np.sort(rng.lognormal(10, 0.6, n)).round(-2)
    return pd.DataFrame({"rownum": np.arange(1, n + 1), "serial": rng.permutation(n) + 1,
                         "income": income, "job": rng.choice(list("abcde"), n),
                         "city": rng.choice(["B", "C"], n)})


def test_an_order_that_follows_a_numeric_sensitive_column_is_refused_on_every_path(tmp_path):
    """CPS1985 sorted by wage, its row number passed through (lgb --id, msa
    and publish --other): no two adjacent rows share a wage, so the
    neighbour check missed it, yet the row number is each row's rank in
    wage, and sorting a bucket's wages by it read back 534 of 534.  A column
    of numbers whose rank correlation with a numeric sensitive column is
    0.9 or more in size is refused like an order recode, on every path and
    by every publisher, unless named; the audit measures it too."""
    from anonset.lgb import lgb
    from anonset.msa import anonymize_msa
    df = _sorted_by_income()
    model = anonset.Diversity(2)
    kw = dict(sensitive=["income", "job"], exact=["city"], other=["rownum", "serial"],
              allow_identifier=["rownum", "serial"], allow_rare=["income"])
    msg = _refused_alike(df, model, kw, tmp_path, "rownum", chunk_rows=170)
    assert msg.startswith("is a pass-through column whose order follows 'income': their rank "
                          "correlation is 1.00"), msg
    assert msg.endswith("allow_recode=['rownum']")
    for call in (lambda **k: lgb(df, qi=["city"], sensitive=["income"], id_column="rownum",
                                 drop=["serial", "job"], k=5, l=3,
                                 allow_identifier=["rownum"], **k),
                 lambda **k: anonymize_msa(df, ["city"], ["income", "job"], 5, 0.5,
                                           other=["rownum"], drop=["serial"],
                                           allow_identifier=["rownum"], **k)):
        with pytest.raises(InputError, match="'rownum'.*order follows 'income'"):
            call()
        call(allow_recode=["rownum"])              # named: published
    pub = anonset.publish(df, model, **kw, allow_recode=["rownum"])
    found = [(f["column"], f["sensitive"]) for f in pub.info["pass_through_risks"]
             if f["check"] == "order_recode"]
    assert found == [("rownum", "income")]
    rep = by_check(anonset.audit(pub, df))
    assert rep.loc[("order_recode", "rownum -> income"), "status"] == "risk"
    assert rep.loc[("order_recode", "serial -> income"), "status"] == "pass"


def test_other_parameters_under_one_key_give_rows_that_do_not_line_up(tmp_path):
    """Two releases of one file under one key with another l (or d) came
    out in one order, row by row, so each row's two sets (or buckets)
    intersected; the order, IDs and groups are keyed by the key and the
    release's parameters now.  The same key and parameters still reproduce
    the release, its sets included."""
    from anonset.lgb import lgb
    from anonset.semantic import semantic_publish
    rng = np.random.default_rng(4)
    n = 400
    df = pd.DataFrame({"id": np.arange(n), "job": rng.choice(list("abcdef"), n),
                       "age": rng.integers(18, 80, n), "city": rng.choice(list("xyz"), n)})
    key = dict(seed=SEED)
    kw = dict(identifiers=["id"], sensitive=["job", "age"], exact=["city"],
              bins={"age": [0, 30, 45, 60, 80]}, domains={"job": list("abcdef")}, **key)
    a = anonset.publish(df, anonset.Diversity(2), **kw)
    assert anonset.publish(df, anonset.Diversity(2), **kw).equals(a)
    b = anonset.publish(df, anonset.Diversity(3), **kw)
    # each input row's sets are drawn from its own counter: the same row, its
    # sets under both; but the published rows do not line up
    assert np.mean(a.source_rows == b.source_rows) < 0.05
    # another generator, or one domain in another order: other sets, so
    # another order too (both kept the order at first)
    other = [anonset.publish(df, anonset.Diversity(2), **kw, rng="philox"),
             anonset.publish(df, anonset.Diversity(2),
                             **{**kw, "domains": {"job": list("fedcba")}})]
    for c in other:
        assert np.mean(a.source_rows == c.source_rows) < 0.05
    # LGB: other IDs for the same row under another l
    kw2 = dict(qi=["city"], sensitive=["job"], drop=["age"], identifiers=["id"], k=4,
               seed=SEED)
    r2, r3 = lgb(df, l=2, **kw2), lgb(df, l=3, **kw2)
    assert r2.table.equals(lgb(df, l=2, **kw2).table)
    ids2 = r2.table.sort_values("ID")["ID"].to_numpy()
    assert np.mean(r2.table["ID"].to_numpy() == r3.table["ID"].to_numpy()) < 0.05
    assert len(ids2) == n
    # LGB: another hierarchy, other IDs too
    from anonset.hierarchy import Hierarchy
    h1 = Hierarchy([[v, "g1" if v in "abc" else "g2", "*"] for v in "abcdef"])
    h2 = Hierarchy([[v, "g1" if v in "ab" else "g2", "*"] for v in "abcdef"])
    kw4 = dict(qi=["city", "job"], sensitive=["age"], drop=[], identifiers=["id"], k=4, l=2,
               seed=SEED)
    g1 = lgb(df, hierarchies={"job": h1}, **kw4).table["ID"].to_numpy()
    g2 = lgb(df, hierarchies={"job": h2}, **kw4).table["ID"].to_numpy()
    assert np.mean(g1 == g2) < 0.05
    # the baselines (Anatomy): another l, another order
    from anonset.partition.baselines.anatomy import anatomy
    t2, t3 = (anatomy(df, qids=["city"], sensitive="job", l=l, identifiers=["id"],
                      drop=["age"], seed=SEED).table for l in (2, 3))
    assert not t2["city"].reset_index(drop=True).equals(t3["city"].reset_index(drop=True))
    # semantic diversity: another d, another order (its sets hold the true
    # value: lined up, two releases' sets would intersect toward it)
    sem = df.assign(v=rng.integers(1, 6, n))
    kw3 = dict(identifiers=["id"], qids=["city"], drop=["job", "age"], domain=[1, 2, 3, 4, 5],
               **key)
    s1, s2 = (semantic_publish(sem, "v", 2, d, **kw3) for d in (1.0, 2.0))
    assert semantic_publish(sem, "v", 2, 1.0, **kw3).equals(s1)
    assert not np.array_equal(s1.to_pandas()["city"].to_numpy(),
                              s2.to_pandas()["city"].to_numpy())


# ------------------------------------------------ nearly in the clear
def _enumerated_success(A, p, eta):
    """The Bayes adversary's success by enumerating every set (the oracle)."""
    import itertools
    from anonset.randomized.params import kappa
    A = np.asarray(A, dtype=float) / np.sum(A)
    d = A.size
    kc, kd = kappa(p, eta, d)
    return sum(max(A[v] * (kc if v in S else kd) for v in range(d))
               for S in map(set, itertools.combinations(range(d), eta)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=8).filter(lambda c: sum(c) > 0),
       st.data())
def test_the_set_adversary_in_closed_form_is_the_enumerated_one(counts, data):
    from anonset.randomized.set_adversary import bayes_success
    d = len(counts)
    eta = data.draw(st.integers(1, d))
    p = data.draw(st.sampled_from([1.0, 0.0, 0.5]) | st.floats(0, 1))
    assert bayes_success(counts, p, eta) == pytest.approx(_enumerated_success(counts, p, eta),
                                                          abs=1e-12)


def test_a_column_published_nearly_in_the_clear_is_refused_on_every_path(tmp_path, capsys):
    """CPS1985's gender under t = 0.53: Algorithm 1 gives p = 0.981, eta = 1,
    so 98 % of the rows show their true gender alone, the summary printed
    the number only and the audit said PASSED.  And a declared domain of
    70 jobs of which 6 are held, under l = 2: a set's other value is nearly
    always one nobody holds, which names the true job for 97 % of the rows.
    Where the Bayes adversary who reads a row's set alone (knowing the
    column's distribution, as a reconstruction gives it) removes at least
    90 % of the errors of guessing the most common value, the column is
    published nearly in the clear: refused alike on every path unless named
    (`allow_clear`), then recorded, and the audit names it."""
    rng = np.random.default_rng(3)
    n = 534
    df = pd.DataFrame({"gender": rng.choice(["female", "male"], n, p=[0.46, 0.54]),
                       "job": rng.choice(list("abcdef"), n)})
    line = _refused_alike(df, anonset.Closeness(0.53), dict(sensitive=["gender", "job"]),
                          tmp_path, "gender", chunk_rows=100)
    assert line.startswith("would be published nearly in the clear (t = 0.53: p = 0.97"), line
    assert "against 5" in line and line.endswith(
        "expected a stronger model (a smaller t, or l >= 2 beside it (Sec. VII-D)), or the "
        "risk named: allow_clear=['gender']"), line
    # a moderate t is published, and the audit finds the column not in the clear
    ok = anonset.publish(df, anonset.Closeness(0.3), sensitive=["gender", "job"])
    rows = anonset.audit(ok, df).checks.query("check == 'clear'").set_index("attribute")
    assert (rows["status"] == "pass").all()
    # named: published, recorded, and the audit (with or without the
    # original) names it as a risk the user allowed
    pub = anonset.publish(df, anonset.Closeness(0.53), sensitive=["gender", "job"],
                          allow_clear=["gender"])
    assert pub.info["clear"] == ["gender"]
    for orig in (None, df):
        row = anonset.audit(pub, orig).checks.query(
            "check == 'clear' and attribute == 'gender'").iloc[0]
        assert row["status"] == "risk" and "nearly in the clear" in row["message"] and \
            row["message"].endswith("as the user allowed"), row["message"]
    # a declared domain mostly of values nobody holds, under l = 2
    jobs = list("abcdef") + [f"x{i}" for i in range(64)]
    line = _refused_alike(df, anonset.Diversity(2), dict(sensitive=["job"], drop=["gender"],
                                                         domains={"job": jobs}),
                          tmp_path, "job", chunk_rows=100)
    assert line.startswith("would be published nearly in the clear (l = 2: p = 1, eta = 2)")
    assert "; 64 of its 70 values are held by nobody, and a set's other values are mostly " \
        "those;" in line, line
    assert "or a domain with fewer values nobody holds" in line
    # the command line: one line, exit 2, nothing written
    df.to_csv(tmp_path / "g.csv", index=False)
    capsys.readouterr()
    assert cli_main(["anonymize", str(tmp_path / "g.csv"), "-o", str(tmp_path / "g.parquet"),
                     "--sensitive", "gender,job", "--t", "0.53"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith("--allow-clear gender"), err
    assert not (tmp_path / "g.parquet").exists()


def _waves(n=150, waves=4, seed=3):
    """A panel: each person's experience a year on each wave (a change whoever
    knows the survey predicts), education the same in every wave."""
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(n), waves)
    return pd.DataFrame({"pid": pid,
                         "exp": np.repeat(rng.integers(1, 18, n), waves)
                         + np.tile(np.arange(waves), n),
                         "edu": np.repeat(rng.integers(8, 16, n), waves),
                         "year": np.tile(np.arange(waves), n) + 2000})


def test_a_record_whose_sensitive_value_changes_is_refused_unless_named(tmp_path, capsys):
    """H65: under a persistent key one record's rows with the same value
    share its set, and a changed value draws a fresh one.  A panel's rows
    are linked by the sets of what did not change (education), and where
    the change is known (experience a year on each wave) the shifted sets
    intersect: 71 % of PSID7682's workers' experience read off at l = 5,
    with the audit PASSED.  Refused now on every path, one line naming the
    column, unless ``allow_clear`` names it; then the metadata counts the
    records and the audit names the risk as allowed."""
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    df = _waves()
    df.to_csv(tmp_path / "w.csv", index=False)
    df.to_parquet(tmp_path / "w.parquet")
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kw = dict(sensitive=["exp", "edu"], identifiers=["pid"], other=["year"], key_file=key,
              record_id="pid", first_in_series=True,
              domains={"exp": list(range(1, 21)), "edu": list(range(8, 16))})
    model = anonset.Diversity(4)

    def paths(**more):
        return (lambda: anonset.publish(df, model, **kw, **more),
                lambda: publish_file(tmp_path / "w.csv", tmp_path / "o.parquet", model,
                                     chunk_rows=70, **kw, **more),
                lambda: publish_file(tmp_path / "w.parquet", tmp_path / "o.parquet", model,
                                     chunk_rows=70, **kw, **more),
                lambda: adask.publish(dd.from_pandas(df, npartitions=3), model,
                                      scheduler="sync", **kw, **more)
                .to_settable(scheduler="sync"))
    said = set()
    for run in paths():
        with pytest.raises(InputError) as e:
            run()
        said.add(str(e.value).split("column 'exp': ", 1)[1])
    assert len(said) == 1 and not (tmp_path / "o.parquet").exists(), said
    assert said.pop().startswith("holds different values in the rows of one record for 150 "
                                 "records (record id 'pid')")
    assert "the risk named: allow_clear=['exp']" in str(e.value)
    rc = cli_main(["anonymize", str(tmp_path / "w.csv"), "-o", str(tmp_path / "c.parquet"),
                   "--sensitive", "exp,edu", "--identifier", "pid", "--other", "year",
                   "--key-file", str(key), "--record-id", "pid", "--first-in-series",
                   "--domain", "exp=" + ",".join(map(str, range(1, 21))),
                   "--domain", "edu=" + ",".join(map(str, range(8, 16))), "--l", "4", "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--allow-clear exp" in err, err
    assert not (tmp_path / "c.parquet").exists()
    assert cli_main(["anonymize", str(tmp_path / "w.csv"), "-o", str(tmp_path / "c.parquet"),
                     "--sensitive", "exp,edu", "--identifier", "pid", "--other", "year",
                     "--key-file", str(key), "--record-id", "pid", "--first-in-series",
                     "--domain", "exp=" + ",".join(map(str, range(1, 21))),
                     "--domain", "edu=" + ",".join(map(str, range(8, 16))), "--l", "4",
                     "--allow-clear", "exp"]) == 0
    assert "WARNING: published values that change between one record's rows (you allowed " \
        "it: the record's other sets link its rows, and whoever knows how a value moved " \
        "intersects its sets): exp (150 records)" in capsys.readouterr().err
    # named: published, counted in the metadata, named by the audit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)         # the series advice
        pubs = [run() for run in paths(allow_clear=["exp"])]
    pubs[1] = anonset.read_parquet(tmp_path / "o.parquet")
    for pub in pubs:
        assert pub.info["changed_records"] == {"exp": 150} and "exp" not in pub.info["clear"]
    assert "values that change between a record&#x27;s rows" in pubs[0]._repr_html_()
    rows = anonset.audit(pubs[0], df).checks.set_index(["check", "attribute"])
    # its sets are not in the clear: the clear check does not say so (H67)
    assert "named as allowed in the clear" not in rows.loc[("clear", "exp"), "message"]
    row = rows.loc[("shared_id", "pid")]
    assert row["status"] == "risk" and "hold different values of exp (150 records)" in \
        row["message"] and "(published as the user allowed: allow_clear)" in row["message"]
    # ... and counts it itself on the original's record ids: named as allowed
    # where the metadata counted it, else (an older release, metadata edited)
    # a risk the release does not name
    row = rows.loc[("shared_id", "exp")]
    assert row["status"] == "risk" and row["message"].startswith(
        "exp: 150 of 150 records hold different values of it in their rows (record id 'pid')")
    assert row["message"].endswith("(published as the user allowed: allow_clear)")
    assert rows.loc[("shared_id", "edu"), "status"] == "pass"
    pubs[0].info.pop("changed_records")
    rows = anonset.audit(pubs[0], df).checks.set_index(["check", "attribute"])
    assert rows.loc[("shared_id", "pid"), "status"] == "pass"
    assert rows.loc[("shared_id", "exp"), "message"].endswith(
        "although the release does not name it (published before anonset refused it, or its "
        "metadata edited)")
    df.to_csv(tmp_path / "orig.csv", index=False)
    rows = anonset.audit_file(tmp_path / "o.parquet", tmp_path / "orig.csv", chunk_rows=100) \
        .checks.set_index(["check", "attribute"])
    assert rows.loc[("shared_id", "exp"), "value"] == 150
    # a column whose every set is its whole domain tells nothing however its
    # values move: neither refused nor a risk (H73)
    flip = df.assign(m=np.random.default_rng(5).integers(0, 2, 600))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pub = anonset.publish(flip, anonset.Diversity({"exp": 4, "edu": 4, "m": 2}),
                              **{**kw, "sensitive": ["exp", "edu", "m"],
                                 "domains": {**kw["domains"], "m": [0, 1]}},
                              allow_clear=["exp"])
    assert pub.params["m"].says_nothing and pub.info["changed_records"] == {"exp": 150}
    rows = anonset.audit(pub, flip).checks.set_index(["check", "attribute"])
    assert ("shared_id", "m") not in rows.index and rows.loc[("shared_id", "exp"), "value"] == 150
    # a release whose metadata counted such a column (made before H73): not a risk (H74)
    pub.info["changed_records"] = {"exp": 150, "m": 81}
    row = anonset.audit(pub, flip).checks.set_index(["check", "attribute"]).loc[("shared_id", "pid")]
    assert "exp (150 records)" in row["message"] and "m (81" not in row["message"]
    # a value that stays within its bin keeps its set: nothing changed
    same = df.assign(exp=np.repeat(df["exp"].to_numpy()[::4] // 5 * 5, 4) + np.tile(
        [0, 1, 2, 3], 150) % 5)
    pub = anonset.publish(same, model, **{**kw, "domains": {"edu": list(range(8, 16))}},
                          bins={"exp": [0, 5, 10, 15, 20, 25]}, allow_clear=["edu"])
    assert "changed_records" not in pub.info
    assert anonset.audit(pub, same).checks.set_index(["check", "attribute"]).loc[
        ("shared_id", "pid"), "status"] == "pass"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2), st.integers(0, 2)),
                min_size=1, max_size=40), st.integers(1, 5))
def test_changed_records_counts_what_a_groupby_counts(rows, blocks):
    """The records whose rows hold more than one value of a column, counted
    from hashes in blocks, as pandas' groupby counts them."""
    from anonset.engine.stats import cell_codes
    from anonset.io.keys import record_hashes
    from anonset.shared_ids import changed_records
    df = pd.DataFrame(rows, columns=["rid", "a", "b"])
    cuts = np.array_split(np.arange(len(df)), blocks)
    ids = [record_hashes(df["rid"].to_numpy()[c]) for c in cuts]
    vals = [cell_codes(df.iloc[c], ["a", "b"], {k: df[k].to_numpy()[c] for k in "ab"})
            for c in cuts]
    want = {c: int((df.groupby("rid")[c].nunique() > 1).sum()) for c in ("a", "b")}
    assert changed_records(ids, vals, ["a", "b"]) == {c: k for c, k in want.items() if k}



def test_changed_records_compares_codes_not_hashes():
    """H67: 32-bit hashes of the codes collided for 23901 and 52826 (a
    domain of 60,000 values), and that record's move was published unseen.
    Codes are compared now, and a single record is named as one."""
    from anonset.engine.stats import cell_codes
    from anonset.io.keys import record_hashes
    from anonset.shared_ids import changed_records, refuse_changed_values
    df = pd.DataFrame({"rid": [0, 0, 1, 1], "v": [23901, 52826, 6221, 6221]})
    got = changed_records([record_hashes(df["rid"].to_numpy())],
                          [cell_codes(df, ["v"], {"v": df["v"].to_numpy()})], ["v"])
    assert got == {"v": 1}
    with pytest.raises(InputError, match=r"for 1 record \(record id 'rid'\)"):
        refuse_changed_values(got, [], record_id="rid")


def test_a_series_with_bins_says_to_keep_the_edges_and_top_code(tmp_path):
    """H73: a later wave with a value beyond the series' last bin edge had
    no way on: widening the bins was refused as another domain 'declared
    with domains=', which a binned column cannot be given.  Both refusals
    now say to keep the edges and top- or bottom-code into the end bins."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"rid": np.arange(300), "w": rng.integers(0, 20, 300),
                       "job": rng.choice(list("abcd"), 300)})
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    kw = dict(sensitive=["w", "job"], identifiers=["rid"], key_file=key, record_id="rid",
              domains={"job": list("abcd")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        first = anonset.publish(df, anonset.Diversity(2), bins={"w": [0, 10, 20]},
                                first_in_series=True, **kw)
    later = df.assign(w=df["w"].where(df.index > 0, 25))
    with pytest.raises(InputError, match=r"value 25 at row 1 is outside the bins; expected "
                                         r"values in \[0, 20\), or the column top- and "
                                         r"bottom-coded into its end bins"):
        anonset.publish(later, anonset.Diversity(2), bins={"w": [0, 10, 20]}, params=first, **kw)
    want = (r"expected the bins of the earlier release, the same edges in bins \(0, 10, "
            r"20\), a value beyond them top- or bottom-coded")
    with pytest.raises(InputError, match=want):
        anonset.publish(later, anonset.Diversity(2), bins={"w": [0, 10, 30]}, params=first, **kw)
    # ... and so where the earlier release's domain holds the missing token
    # beside its bins (H75), or the later one forgot the bins
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        holed = df.assign(w=df["w"].astype(float).where(df.index > 3))
        tokened = anonset.publish(holed, anonset.Diversity(2), bins={"w": [0, 10, 20]},
                                  first_in_series=True, missing="category", allow_clear=["w"],
                                  **kw)           # 4 missing cells: few hold '?'
    assert "?" in tokened.schema["w"].domain
    with pytest.raises(InputError, match=want):
        anonset.publish(holed, anonset.Diversity(2), bins={"w": [0, 10, 30]}, params=tokened,
                        missing="category", allow_clear=["w"], **kw)
    with pytest.raises(InputError, match=want):
        anonset.publish(later, anonset.Diversity(2), params=first, allow_clear=["w"],
                        **{**kw, "domains": {**kw["domains"], "w": list(range(26))}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        anonset.publish(later.assign(w=later["w"].clip(upper=19)), anonset.Diversity(2),
                        bins={"w": [0, 10, 20]}, params=first, **kw)
    # an earlier release that declared the values (no bins): its domain, with domains=
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        listed = anonset.publish(df, anonset.Diversity(2), first_in_series=True,
                                 **{**kw, "domains": {**kw["domains"], "w": list(range(20))}})
    with pytest.raises(InputError, match=r"expected the domain of the earlier release \(20 "
                                         r"values, in its order\), declared with domains"):
        anonset.publish(df, anonset.Diversity(2), bins={"w": [0, 10, 20]}, params=listed, **kw)


def test_a_p0_column_is_still_refused_for_changed_values(tmp_path):
    """H74: a column drawn with p = 0 but eta < d 'says nothing' of a row
    read alone, yet under a persistent key its set follows the record's
    value, so a changed set marks a changed value: still refused (only a
    column whose every set is its whole domain tells nothing)."""
    from anonset.randomized.params import AttributeParams as AP
    rng = np.random.default_rng(0)
    n = 400
    dom = list("abcdefgh")
    doms = {"a": dom, "j": list("wxyz")}
    df = pd.DataFrame({"rid": np.arange(n), "a": rng.choice(dom, n),
                       "j": rng.choice(list("wxyz"), n)})
    seeded = anonset.publish(df, anonset.Closeness(0.3), sensitive=["a", "j"],
                             identifiers=["rid"], domains=doms, seed=SEED,
                             params={"a": AP(name="a", p=0.0, eta=3, d=8),
                                     "j": AP(name="j", p=0.5, eta=2, d=4)})
    assert seeded.params["a"].says_nothing
    key = tmp_path / "k.key"
    anonset.io.keys.new_key_file(key)
    panel = pd.DataFrame({"rid": np.repeat(np.arange(n // 2), 2), "a": rng.choice(dom, n),
                          "j": np.repeat(rng.choice(list("wxyz"), n // 2), 2)})
    with pytest.raises(InputError, match=r"^column 'a': holds different values in the rows"):
        anonset.publish(panel, anonset.Closeness(0.3), params=seeded, first_in_series=True,
                        sensitive=["a", "j"], identifiers=["rid"], key_file=key,
                        record_id="rid", domains=doms)


def test_given_parameters_that_a_larger_l_refuses_say_what_would_pass():
    """H73: a later wave asking a larger l than its series was told only
    'needs p = 1 and eta >= 4, got eta = 3', not that the given parameters
    keep each column's (p, eta) and which l they satisfy."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(list("abcdefgh"), 2000),
                       "b": rng.choice(list("wxyz"), 2000)})
    first = anonset.publish(df, anonset.Diversity(3), sensitive=["a", "b"], seed=SEED)
    with pytest.raises(InputError, match=r"^params: column 'a': frequency-diversity needs p = 1 "
                                         r"and eta >= 4, got p = 1.0, eta = 3; expected a model "
                                         r"the given parameters satisfy \(l <= 3 for 'a'\)"):
        anonset.publish(df, anonset.Diversity(4), sensitive=["a", "b"], seed=SEED, params=first)
    close = anonset.publish(df, anonset.Closeness(0.2), sensitive=["a", "b"], seed=SEED)
    with pytest.raises(InputError, match=r"expected a t-closeness model, for which the given "
                                         r"parameters \(p = [0-9.]+ < 1\) were chosen"):
        anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"], seed=SEED, params=close)
