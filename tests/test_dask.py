"""anonset.dask: the published table and the reconstruction equal the
single-machine ones for the same key, whatever the partitioning; on a
dask.distributed LocalCluster of 2 worker processes, also when a worker is
killed in the middle of the job."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import anonset  # noqa: E402
from anonset import dask as adask  # noqa: E402

SRC = str(Path(anonset.__file__).resolve().parent.parent)
INFER = dict(identifiers=["id"], other=["note"], sensitive=["age", "job", "city"],
             bins={"age": [0, 30, 50, 70, 120]})
BIG = dict(INFER, sensitive=["age", "job", "city", "big"])
SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"


def table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, n),
        "job": rng.choice(list("abcdef"), n, p=[.3, .25, .2, .1, .1, .05]),
        "city": rng.choice(["x", "y", "z", "w"], n),
        "note": rng.choice(["n1", "n2"], n),
    })


@pytest.fixture(scope="module")
def client():
    # worker processes must import this anonset: put its parent on their path
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = SRC + (os.pathsep + old if old else "")
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="2GiB", silence_logs=40)
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


MODELS = [anonset.Diversity(3), anonset.Closeness(0.3), anonset.DiversityCloseness(2, 0.3)]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.to_dict()["model"])
@pytest.mark.parametrize("nparts", [1, 3, 7])
def test_any_partitioning_equals_in_memory(model, nparts):
    ddf = dd.from_pandas(table(), npartitions=nparts)
    # the single-machine table is ddf.compute() (Dask may turn text into Arrow strings)
    ref = anonset.publish(ddf.compute(scheduler="sync"), model, seed=42, research_seed=True, **INFER)
    pub = adask.publish(ddf, model, seed=42, research_seed=True, scheduler="sync", **INFER)
    assert pub.n_rows == len(ref) and len(pub.offsets) == pub._blocks.npartitions + 1
    got = pub.to_settable(scheduler="sync")
    assert got.equals(ref)
    assert got.metadata() == ref.metadata() == pub.metadata()


def test_uneven_and_empty_partitions():
    df = table(200, seed=3)
    df["big"] = np.random.default_rng(1).integers(0, 70, len(df))   # two words per mask
    cuts = [0, 0, 13, 13, 150, 200]          # two empty partitions
    parts = [dask.delayed(df.iloc[a:b].copy)() for a, b in zip(cuts[:-1], cuts[1:])]
    ddf = dd.from_delayed(parts, meta=df.iloc[:0])
    model = anonset.Diversity({"age": 2, "job": 3, "city": 2, "big": 5})
    big = dict(BIG, domains={"big": list(range(70))})     # 200 rows: declared, not read off
    pub = adask.publish(ddf, model, seed=1, research_seed=True, scheduler="sync", **big)
    assert pub.offsets == cuts
    ref = anonset.publish(ddf.compute(scheduler="sync"), model, seed=1, research_seed=True, **big)
    assert pub.to_settable(scheduler="sync").equals(ref)
    for method in ("em", "exact_em", "value_adding", "random"):
        a = adask.reconstruct(pub, ["job", "big"], method, max_iter=40, seed=2, scheduler="sync")
        b = anonset.reconstruct(ref, ["job", "big"], method, max_iter=40, seed=2)
        assert np.array_equal(a.counts, b.counts), method


def test_reconstruct_takes_the_stopping_rule_of_the_in_memory_one(tmp_path):
    """tol_ll and accelerate went on to dask.compute and were dropped without
    a word (H29): the Dask run stopped where the default stops.  They are
    parameters here, as in memory and on files, and equal results; another
    parameter of the in-memory reconstruct is refused by name."""
    from anonset.stream import reconstruct_file
    df = table(400)
    ddf = dd.from_pandas(df, npartitions=3)
    model = anonset.Diversity({"age": 2, "job": 3, "city": 2})
    pub = adask.publish(ddf, model, seed=3, research_seed=True, scheduler="sync", **INFER)
    ref = pub.to_settable(scheduler="sync")
    ref.to_parquet(tmp_path / "p.parquet")
    for kw in ({"tol": 0.0, "tol_ll": 1e-16, "max_iter": 3000}, {"accelerate": False,
                                                                 "max_iter": 50}):
        a = adask.reconstruct(pub, ["age", "job"], scheduler="sync", **kw)
        b = anonset.reconstruct(ref, ["age", "job"], **kw)
        c = reconstruct_file(tmp_path / "p.parquet", ["age", "job"], **kw)
        assert np.array_equal(a.counts, b.counts) and np.array_equal(a.counts, c.counts)
        for key in ("iterations", "accelerated", "tol_ll", "stopped"):
            assert a.info[key] == b.info[key] == c.info[key], key
    assert a.info["accelerated"] is False and a.info["iterations"] == 50
    with pytest.raises(ValueError, match="^w: got w=, which this path does not take"):
        adask.reconstruct(pub, ["age"], w=np.zeros(3), scheduler="sync")


def test_declared_schema_and_errors():
    df = table(100)
    schema = anonset.Schema.infer(df, **INFER)
    ddf = dd.from_pandas(df, npartitions=4)
    pub = adask.publish(ddf, anonset.Diversity(2), schema, seed=5, research_seed=True, scheduler="sync")
    assert pub.to_settable(scheduler="sync").equals(
        anonset.publish(ddf.compute(scheduler="sync"), anonset.Diversity(2), schema, seed=5, research_seed=True))
    small = anonset.Schema.infer(df.iloc[:5], **INFER)
    with pytest.raises(ValueError, match="is not in the domain"):
        adask.publish(ddf, anonset.Closeness(0.3), small, seed=5, research_seed=True, scheduler="sync")
    with pytest.raises(ValueError, match="not a published attribute"):
        adask.reconstruct(pub, ["note"], scheduler="sync")
    with pytest.raises(ValueError, match="^ddf: got a DataFrame; expected a dask DataFrame"):
        adask.publish(df, anonset.Diversity(2), sensitive=list(df.columns))


def test_cluster_publish_reconstruct_and_write(client, tmp_path):
    ddf = dd.from_pandas(table(3000, seed=7), npartitions=6)
    model = anonset.DiversityCloseness(2, 0.3)
    ref = anonset.publish(ddf.compute(), model, seed=9, research_seed=True, **INFER)
    pub = adask.publish(ddf, model, seed=9, research_seed=True, **INFER)
    assert pub.to_settable().equals(ref)
    for method in ("em", "exact_em", "value_adding"):
        a = adask.reconstruct(pub, ["age", "job"], method, max_iter=200)
        b = anonset.reconstruct(ref, ["age", "job"], method, max_iter=200)
        assert np.array_equal(a.counts, b.counts), method
    pub.to_parquet(tmp_path / "pub.parquet")
    ref.to_parquet(tmp_path / "ref.parquet")
    assert anonset.read_parquet(tmp_path / "pub.parquet").equals(
        anonset.read_parquet(tmp_path / "ref.parquet"))
    pub.to_csv(tmp_path / "pub.csv")
    ref.to_csv(tmp_path / "ref.csv")
    assert (tmp_path / "pub.csv").read_bytes() == (tmp_path / "ref.csv").read_bytes()


def test_worker_killed_mid_way(client):
    """SIGKILL one of the two worker processes while partitions are being
    published: the nanny restarts it, the scheduler re-runs its tasks, and
    the output is still the in-memory one."""
    df = table(4000, seed=11)
    n_parts = 16

    def slow_part(frame):
        import time as _t
        _t.sleep(0.25)                    # long enough to be caught mid-way
        return frame

    parts = [dask.delayed(slow_part, pure=True)(df.iloc[i::n_parts].copy())
             for i in range(n_parts)]
    ddf = dd.from_delayed(parts, meta=df.iloc[:0])
    order = np.concatenate([np.arange(i, len(df), n_parts) for i in range(n_parts)])
    whole = df.iloc[order].reset_index(drop=True)
    whole = whole.astype(ddf._meta.dtypes.to_dict())      # Dask's text dtype
    model = anonset.Closeness(0.3)
    pub = adask.publish(ddf, model, seed=3, research_seed=True, **INFER)        # first pass: not interrupted
    ref = anonset.publish(whole, model, seed=3, research_seed=True, **INFER)

    pids = client.run(os.getpid)
    fut = client.compute(pub._blocks)
    deadline = time.time() + 30
    while time.time() < deadline:                         # wait until work is under way
        done = sum(1 for ts in client.processing().values() for _ in ts)
        if done:
            break
        time.sleep(0.05)
    time.sleep(0.6)
    victim = sorted(pids)[0]
    assert not fut.done()                                 # killed mid-way
    os.kill(pids[victim], signal.SIGKILL)
    frame = fut.result(timeout=180)
    assert not fut.cancelled()
    got = pub._table(adask._sort_part(frame, pub._names))   # the published (keyed) order
    assert got.equals(ref)
    # the cluster is whole again and reconstruction still agrees
    client.wait_for_workers(2, timeout=60)
    new_pids = client.run(os.getpid)
    assert pids[victim] not in new_pids.values()
    a = adask.reconstruct(pub, ["age", "city"], "em")
    assert np.array_equal(a.counts, anonset.reconstruct(ref, ["age", "city"], "em").counts)


def test_the_lazy_frame_is_in_published_order_without_the_input_row(tmp_path):
    """``pub.frame`` held each row's input row and keyed rank, in input
    partition order: written with Dask's own ``to_parquet``, as a Dask user
    would, it published the link back to the input (and the input order,
    often sorted by a sensitive value).  It is now the published table in
    published order, as ``to_settable`` gathers it."""
    import dask.dataframe as dd
    n = 2400
    df = pd.DataFrame({"id": np.arange(n), "job": np.sort(np.resize(list("abcdef"), n)),
                       "note": np.arange(n) % 7})
    kw = dict(identifiers=["id"], sensitive=["job"], other=["note"], seed=SEED)
    pub = adask.publish(dd.from_pandas(df, npartitions=4), anonset.Diversity(2),
                        scheduler="sync", **kw)
    ref = anonset.publish(df, anonset.Diversity(2), **kw)
    assert list(pub.frame.columns) == ["job", "note"]
    pub.frame.to_parquet(tmp_path / "dask-written", write_index=False)
    back = pd.read_parquet(tmp_path / "dask-written")
    assert list(back.columns) == ["job", "note"]
    assert np.array_equal(back["job"].to_numpy(), ref.mask("job").ravel())
    assert np.array_equal(back["note"].to_numpy(), ref.other["note"].to_numpy())
    assert not hasattr(pub, "ordered")


def test_columns_named_like_the_internal_rank_and_row_are_published_as_they_are(tmp_path):
    """A table with columns named ``__rank__`` and ``__row__`` (the names the
    Dask blocks and the streamed buckets gave the keyed rank and the input
    row): on Dask the pass-through ``__rank__`` was overwritten by the ranks
    and dropped from ``frame``, and a ``__row__`` would have published each
    row's input position; streamed, the file failed ('Field "__rank__"
    exists 2 times').  The internal columns now take names no published
    column has; every path publishes the user's values, equal to memory."""
    from anonset.stream import publish_file
    rng = np.random.default_rng(3)
    n = 900
    df = pd.DataFrame({"id": np.arange(n), "__rank__": rng.integers(0, 5, n),
                       "__row__": rng.integers(0, 5, n), "job": rng.choice(list("abcd"), n)})
    kw = dict(identifiers=["id"], sensitive=["job"], other=["__rank__", "__row__"],
              domains={"job": list("abcd")}, seed=SEED)
    ref = anonset.publish(df, anonset.Diversity(2), **kw)
    pub = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                        scheduler="sync", **kw)
    assert list(pub.frame.columns) == ["__rank__", "__row__", "job"]
    # the default scheduler (the module's cluster where it runs: a 'sync'
    # shuffle beside a live client would pick Dask's p2p method)
    assert pub.to_settable().equals(ref)
    lazy = pub.frame.compute()
    assert np.array_equal(lazy["__rank__"].to_numpy(), ref.other["__rank__"].to_numpy())
    assert np.array_equal(lazy["__row__"].to_numpy(), ref.other["__row__"].to_numpy())
    df.to_parquet(tmp_path / "in.parquet", index=False)
    publish_file(tmp_path / "in.parquet", tmp_path / "out.parquet", anonset.Diversity(2),
                 chunk_rows=200, **kw)
    assert anonset.read_parquet(tmp_path / "out.parquet").equals(ref)


def test_a_dask_frame_given_to_an_in_memory_function_is_named():
    """A Dask DataFrame given to a function that reads its table whole
    (anonset.publish, semantic, LGB, msa) failed inside the interchange
    protocol ("'DaskDataFrameInterchange' object has no attribute
    'get_chunks'"); the refusal now says what it got and what to do."""
    import dask.dataframe as dd
    from anonset.lgb import lgb
    from anonset.msa import anonymize_msa
    from anonset.semantic import semantic_publish
    from anonset.validate import InputError
    df = pd.DataFrame({"sex": ["f", "m"] * 20, "job": list("abcd") * 10})
    ddf = dd.from_pandas(df, npartitions=2)
    calls = [lambda: anonset.publish(ddf, anonset.Diversity(2), sensitive=["job"],
                                     exact=["sex"]),
             lambda: semantic_publish(ddf, "job", 2, 1, qids=["sex"], domain=list("abcd")),
             lambda: lgb(ddf, qi=["sex"], sensitive=["job"], k=2, l=2),
             lambda: anonymize_msa(ddf, ["sex"], ["job"], 2, 0.5)]
    for call in calls:
        with pytest.raises(InputError, match=r"data: got a Dask DataFrame, which this function "
                                             r"reads whole; expected .*ddf.compute\(\).*"
                                             r"anonset.dask.publish"):
            call()



def test_float32_passed_through_and_ids_read_alike_and_mixed_bools_refused(tmp_path):
    """Dask published a float32 pass-through column as 0.10000000149011612
    where memory and files publish 0.1, and named a float32 id so; a
    column of 1, True, 2 published True as 1 (refused only where True came
    first); a datetime record id was hashed as '2020-01-01 00:00:00' in a
    frame and '2020-01-01' in the CSV pandas writes of it (H92)."""
    import secrets

    import dask.dataframe as dd
    rng = np.random.default_rng(0)
    n = 60
    df = pd.DataFrame({"id": np.arange(n), "job": rng.choice(list("abcd"), n),
                       "f": np.full(n, 0.1, dtype=np.float32)})
    kw = dict(sensitive=["job"], identifiers=["id"], domains={"job": list("abcd")})
    key = tmp_path / "k"
    key.write_text(secrets.token_hex(32))
    key.chmod(0o600)
    series = dict(kw, record_id="id", first_in_series=True, key_file=key)
    paths = {"memory": lambda d, **k: anonset.publish(d, anonset.Diversity(2), **k),
             "dask": lambda d, **k: adask.publish(dd.from_pandas(d, npartitions=3),
                                                  anonset.Diversity(2), **k).to_settable()}
    outs = {name: call(df, other=["f"], seed=SEED, keep_order=True, **kw)
            for name, call in paths.items()}
    assert outs["memory"].other["f"].tolist() == outs["dask"].other["f"].tolist() == [0.1] * n
    # the lazy frame says what its partitions hold (H95: float32)
    lazy = adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2), other=["f"],
                         seed=SEED, **kw).frame
    assert lazy.dtypes["f"] == lazy.compute().dtypes["f"] == np.float64
    # booleans in one partition, numbers in another: the same refusal (H95)
    split = df.drop(columns=["f"]).assign(job=pd.Series([1, 2] * (n // 4) + [True] * (n // 2),
                                                        dtype=object))
    for parts in (1, 2, 4):
        with dask.config.set({"dataframe.convert-string": False}), \
                pytest.raises(anonset.InputError, match=r"mixes value types \['bool', 'number'\]"):
            adask.publish(dd.from_pandas(split, npartitions=parts), anonset.Diversity(2),
                          seed=SEED, sensitive=["job"], identifiers=["id"]).to_settable()
    for name, call in paths.items():
        ids = df.drop(columns=["f"]).assign(id=np.arange(n, dtype=np.float32) + np.float32(0.1))
        # (refused by its type now, alike: H99)
        with pytest.raises(anonset.InputError, match="holds float32 numbers, which cannot"):
            call(ids, **series)
        with pytest.raises(anonset.InputError, match="holds the fractional number 0.1 at row 1"):
            call(ids.astype({"id": np.float64}).assign(id=np.arange(n) + 0.1), **series)
        dates = df.drop(columns=["f"]).assign(id=pd.date_range("2020-01-01", periods=n))
        with pytest.raises(anonset.InputError, match="holds dates or times"):
            call(dates, **series)
        for first, second in ((1, True), (True, 1)):
            mixed = df.drop(columns=["f"]).assign(
                job=pd.Series([first, 2, second, 3] * (n // 4), dtype=object))
            # (Dask's default string conversion makes the column text first)
            with dask.config.set({"dataframe.convert-string": False}), \
                    pytest.raises(anonset.InputError, match=r"mixes value types \['bool', "):
                call(mixed, seed=SEED, sensitive=["job"], identifiers=["id"])


def test_bytes_no_utf8_text_are_refused_in_one_line_under_dask_string_conversion():
    """Dask's lazy string conversion failed on such bytes with a bare
    UnicodeDecodeError inside the graph (H130)."""
    n = 400
    rid = [f"{i:04d}".encode() for i in range(n)]
    rid[351] = b"caf\xe9"
    df = pd.DataFrame({"rid": rid, "job": ["a", "b", "c", "d"] * 100})
    with dask.config.set({"dataframe.convert-string": True}):
        ddf = dd.from_pandas(df, npartitions=4)
        with pytest.raises(anonset.InputError, match=r"^data: holds bytes that are not UTF-8 "
                                                     r"text, which Dask's string conversion"):
            adask.publish(ddf, anonset.Diversity(2), sensitive=["job"], identifiers=["rid"],
                          domains={"job": list("abcd")}, allow_rare=["job"])


def test_a_cluster_shuffles_the_blocks_as_they_are(client, tmp_path):
    """H143: with a distributed Client the keyed shuffle ran as Dask's P2P
    shuffle, which turns each block into Arrow: a pass-through column of
    mixed types raised "P2P ... failed during transfer phase" where memory
    refuses it in one line, lists came back as arrays (not equal to
    memory's release), and `scheduler='sync'` beside a Client failed.  The
    shuffle is Dask's task shuffle on every scheduler."""
    df = table(600)
    df["obj"] = pd.Series([[i % 3, 1] for i in range(600)], dtype=object)
    ref = anonset.publish(df, anonset.Diversity(2), seed=SEED, **dict(INFER, other=["note", "obj"]))
    with dask.config.set({"dataframe.convert-string": False}):    # (else Dask's own text)
        ddf = dd.from_pandas(df, npartitions=4)
    pub = adask.publish(ddf, anonset.Diversity(2), seed=SEED, **dict(INFER, other=["note", "obj"]))
    assert pub.to_settable().equals(ref)
    assert pub.to_settable(scheduler="sync").equals(ref)
    mixed = table(600).assign(note=pd.Series([bool(i % 2) if i < 400 else i % 5
                                              for i in range(600)], dtype=object))
    with pytest.raises(ValueError) as mem:
        anonset.publish(mixed, anonset.Diversity(2), seed=SEED, **INFER).to_parquet(
            tmp_path / "m.parquet")
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(mixed, npartitions=4)
    pub = adask.publish(ddf, anonset.Diversity(2), seed=SEED, **INFER)
    with pytest.raises(ValueError) as got:
        pub.to_parquet(tmp_path / "d.parquet")
    assert str(got.value).split(": ", 1)[1] == str(mem.value).split(": ", 1)[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_csv_file_dask_reads_that_is_not_utf8_is_named_so(tmp_path):
    """H143: a Latin-1 byte in a CSV file dd.read_csv reads was refused
    with the advice to turn Dask's string conversion off, which changes
    nothing (pandas' CSV reader fails first)."""
    df = table(200)
    df.to_csv(tmp_path / "in.csv", index=False)
    raw = (tmp_path / "in.csv").read_bytes()
    at = raw.rindex(b"n1")                   # past what dd.read_csv samples for its types
    (tmp_path / "in.csv").write_bytes(raw[:at] + b"n\xe9" + raw[at + 2:])
    with pytest.raises(ValueError, match=r"^data: holds a CSV file, read by dd.read_csv, that "
                                         r"is not UTF-8 text \(the byte 0xe9\)") as e:
        adask.publish(dd.read_csv(tmp_path / "in.csv", blocksize=2000, sample=1000),
                      anonset.Diversity(2),
                      seed=SEED, scheduler="sync", **INFER)
    assert "convert-string" not in str(e.value)


def test_an_error_reading_the_input_is_not_blamed_on_the_output(tmp_path):
    """H143: a TimeoutError (an OSError without a file name) raised while a
    release was written was re-raised as an OSError naming the output
    file; it is raised as it was, and nothing is left."""
    df = table(400)

    def part(frame, fail):
        if fail and (tmp_path / "flag").exists():
            raise TimeoutError("input read timed out")
        return frame

    parts = [dask.delayed(part)(df.iloc[a:a + 100].copy(), a == 300) for a in range(0, 400, 100)]
    pub = adask.publish(dd.from_delayed(parts, meta=df.iloc[:0]), anonset.Diversity(2),
                        seed=SEED, scheduler="sync", **INFER)
    (tmp_path / "flag").touch()
    with pytest.raises(TimeoutError, match="input read timed out"):
        pub.to_parquet(tmp_path / "out.parquet", scheduler="sync")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flag"]
