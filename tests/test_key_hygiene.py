"""Key material stays secret (H82): a persistent key is drawn at random,
a typed seed is refused however it is written, a seed or key is never
echoed by an error, and nothing that holds the key is pickled."""
from __future__ import annotations

import pickle
import secrets

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import cli
from anonset.validate import InputError


def _table(n=300, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rid": np.arange(n), "job": rng.choice(list("abcd"), n),
                         "town": rng.choice(list("xyz"), n)})


KW = dict(sensitive=["job"], identifiers=["rid"], drop=["town"], domains={"job": list("abcd")})


@pytest.mark.parametrize("seed, research", [("0123456789abcdef" * 2, True),
                                            ("d1f3a8c04e9b27f65a0c3e81b7d9f246", True)])
def test_a_persistent_key_is_no_research_seed(seed, research):
    """The README's old key, accepted as a research seed, was recorded as a
    persistent key, PASSED the audit, and each release's key_check
    confirmed a guess of it offline."""
    with pytest.raises(InputError, match="record_id: needs a key of at least 128 bits drawn at "
                                         "random"):
        anonset.publish(_table(), anonset.Diversity(2), seed=seed, research_seed=research,
                        record_id="rid", first_in_series=True, **KW)


@pytest.mark.parametrize("seed", [10 ** 40, int("1" * 41), int("1234567890" * 4)])
def test_an_int_seed_is_read_as_typed_in_decimal(seed):
    """10**40 looks random in hex: its decimal digits are read too."""
    with pytest.raises(InputError, match="^seed: got a seed of 1[0-9]{2} bits that "):
        anonset.publish(_table(), anonset.Diversity(2), seed=seed, **KW)
    assert anonset.io.keys.seed_pattern(secrets.randbits(128) | 1 << 127) is None


def test_an_int_drawn_with_128_bits_but_shorter_is_refused_saying_why():
    """secrets.randbits(128) is shorter than 128 bits half the time: its
    refusal says why, and the int seeds it names pass."""
    short = 1 << 126 | secrets.randbits(126)           # a randbits(128) with a leading 0
    with pytest.raises(InputError, match=r"^seed: got a seed of 127 bits \(an int's bits are "
                                         r"its length: secrets.randbits\(128\) is shorter"):
        anonset.publish(_table(), anonset.Diversity(2), seed=short, **KW)
    with pytest.raises(InputError, match=r"^seed: got a seed of 11 bits; expected"):
        anonset.publish(_table(), anonset.Diversity(2), seed=2024, **KW)
    pub = anonset.publish(_table(), anonset.Diversity(2), seed=1 << 255 | secrets.randbits(255),
                          **KW)
    assert len(pub) == 300


@pytest.mark.parametrize("cmd", ["anonymize", "msa-anonymize", "lgb", "semantic-anonymize"])
def test_key_material_given_to_a_switch_is_never_echoed(cmd, tmp_path, capsys):
    """research_seed = "<the key>" in a config, or --research-seed KEY on the
    command line (a switch: the key is left over), printed the key (H119)."""
    secret = secrets.token_hex(32)
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'research_seed = "{secret}"\n')
    base = [cmd, str(src), "-o", str(tmp_path / "o.csv")]
    for extra in (["--config", str(cfg)], ["--research-seed", secret],
                  [f"--research-seed={secret}"], ["--research", secret]):     # (H126)
        assert cli.main(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert secret not in err and err.count("\n") == 1, (extra, err)
    cfg.write_text(f'key_file = ["{secret}"]\n')
    if cmd == "anonymize":
        assert cli.main(base + ["--config", str(cfg)]) == 2
        err = capsys.readouterr().err
        assert secret not in err and "not printed" in err, err
    assert not (tmp_path / "o.csv").exists()


def test_a_secret_is_never_echoed(tmp_path, capsys, monkeypatch):
    secret = secrets.token_hex(16)
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    base = ["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--sensitive", "job",
            "--identifier", "rid", "--drop", "town", "--domain", "job=a,b,c,d", "--l", "2"]
    for extra in (["--seed-env", secret], ["--sed", secret], [f"--seeds={secret}"],
                  ["--key-file", secret], ["--seed", secret, "--seed", secret]):
        assert cli.main(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert secret not in err and err.count("\n") == 1, (extra, err)
    with pytest.raises(InputError) as e:
        anonset.publish(_table(), anonset.Diversity(2), seed=-int(secret, 16), **KW)
    assert str(int(secret, 16)) not in str(e.value)
    monkeypatch.setenv("ANONSET_TEST_SEED", secret)
    assert cli.main(base + ["--seed-env", "ANONSET_TEST_SEED"]) == 0
    assert not list(tmp_path.glob("*.tmp*"))


def test_a_dask_release_is_not_pickled_and_a_plan_prints_no_key():
    """A pickled DaskSetTable held the generator's keys and each row's input
    row (it undid the shuffle); a Plan's repr printed its keys."""
    dd = pytest.importorskip("dask.dataframe")
    secret = secrets.token_hex(16)
    pub = anonset.dask.publish(dd.from_pandas(_table(), npartitions=2), anonset.Diversity(2),
                               seed=secret, **KW)
    with pytest.raises(TypeError, match="a DaskSetTable is not pickled"):
        pickle.dumps(pub)
    local = pub.to_settable()
    assert pickle.loads(pickle.dumps(local)).equals(local)
    from anonset import engine
    opts = engine.Options(anonset.Diversity(2), seed=secret, **KW)
    d = engine.draft(opts, list(_table().columns), dict(_table().dtypes))
    plan = engine.make_plan(d, engine.Stats(d).add(_table(), 0))
    assert plan.key.hex() not in repr(plan) and "key=" not in repr(plan)


def test_rating_keys_one_purpose_per_column_whatever_its_name():
    """Rating built its key purposes from column names: 'x' and 'bid-x'
    derived one key for two uses, and a non-ASCII name failed."""
    from anonset.partition.baselines import rating
    rng = np.random.default_rng(2)
    n = 400
    df = pd.DataFrame({"âge": rng.choice(list("abcdef"), n), "x": rng.choice(list("pqrs"), n),
                       "bid-x": rng.choice(list("pqrs"), n)})
    rel = rating(df, attributes=["âge", "x", "bid-x"], l=2, seed=secrets.token_hex(16))
    assert rel.check()["ok"]


def test_a_record_id_a_float_cannot_hold_is_refused_on_every_path(tmp_path):
    """A float holds no every whole number from 2^53 on: ids that arrived as
    floats (a column with a gap) drew under a neighbour's stream, and a
    later release kept 9 % of its sets (H81).  Refused on every path."""
    from anonset.io.keys import new_key_file
    from anonset.stream import publish_file
    n = 200
    big = 2 ** 60 + np.arange(n) * 7
    df = pd.DataFrame({"rid": big.astype(np.float64), "job": _table(n)["job"]})
    key = tmp_path / "k.key"
    new_key_file(key)
    kw = dict(sensitive=["job"], identifiers=["rid"], domains={"job": list("abcd")},
              key_file=key, record_id="rid", first_in_series=True)
    words = (r"record_id: column .rid.: holds the number 1\.152921504606847e\+18 at row 1 "
             r"as a float")
    with pytest.raises(InputError, match=words):
        anonset.publish(df, anonset.Diversity(2), **kw)
    df.to_parquet(tmp_path / "in.parquet")
    with pytest.raises(InputError, match=words):
        publish_file(tmp_path / "in.parquet", tmp_path / "o.parquet", anonset.Diversity(2), **kw)
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(InputError, match=words):
        anonset.dask.publish(dd.from_pandas(df, npartitions=2), anonset.Diversity(2), **kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "k.key"]
    # as integers (or below 2^53 as floats) they are ids
    ok = anonset.publish(df.assign(rid=big), anonset.Diversity(2), **kw)
    assert ok.n_rows == n


def test_no_secret_of_any_alphabet_is_echoed(tmp_path, capsys):
    """The first round hid hex keys only: a urlsafe or base64 secret given
    where a name belongs, argparse's 'ambiguous option: --see=SECRET', and
    an abbreviated key option given twice all got through (H83)."""
    import base64
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    base = ["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--sensitive", "job",
            "--identifier", "rid", "--drop", "town", "--domain", "job=a,b,c,d", "--l", "2"]
    for _ in range(20):
        url = secrets.token_urlsafe(32)
        b64 = base64.b64encode(secrets.token_bytes(32)).decode()
        for extra in (["--seed-env", url], ["--key-file", b64], [f"--see={url}"],
                      ["--key-fil", str(tmp_path / "k1"), "--key-file", url]):
            assert cli.main(base + extra) == 2, extra
            err = capsys.readouterr().err
            assert url not in err and b64 not in err and err.count("\n") == 1, (extra, err)
    assert not (tmp_path / "o.csv").exists()
    opts = anonset.engine.Options(anonset.Diversity(2), seed=url, key_file=b64)
    assert url not in repr(opts) and b64 not in repr(opts)


def test_a_number_padded_with_spaces_is_one_record_id_on_every_path(tmp_path):
    """' 1000' read by pandas into memory is the int 1000; streamed, it was
    the text ' 1000', another record's stream: the same file's releases
    differed in 205 of 300 rows, and a series redrew 188 sets (H83)."""
    from anonset.io.keys import new_key_file
    from anonset.stream import publish_file
    n = 300
    df = _table(n)
    key = tmp_path / "k.key"
    new_key_file(key)
    text = df.assign(rid=[f" {1000 + i}" for i in range(n)])
    text.to_csv(tmp_path / "in.csv", index=False)
    kw = dict(sensitive=["job"], identifiers=["rid"], drop=["town"],
              domains={"job": list("abcd")}, key_file=key, record_id="rid",
              first_in_series=True, keep_order=True)
    mem = anonset.publish(pd.read_csv(tmp_path / "in.csv"), anonset.Diversity(2), **kw)
    publish_file(tmp_path / "in.csv", tmp_path / "o.parquet", anonset.Diversity(2), **kw)
    assert anonset.read_parquet(tmp_path / "o.parquet").equals(mem)


def test_the_shapes_of_secret_the_second_round_missed_are_not_echoed(tmp_path, capsys):
    """A base64 key starting with '/' (its folder '/' exists), a key longer
    than a file name may be, a base32 TOTP secret given to --seed-env, and a
    passphrase after an ambiguous '--see=' (H85)."""
    import base64
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    base = ["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--sensitive", "job",
            "--identifier", "rid", "--drop", "town", "--domain", "job=a,b,c,d", "--l", "2"]
    slash = "/" + base64.b64encode(secrets.token_bytes(30)).decode().replace("/", "A")
    long_hex = secrets.token_hex(128)
    b32 = base64.b32encode(secrets.token_bytes(20)).decode().rstrip("=")
    words = "tangerine orbit walrus plywood seventeen quasar mitten"
    for extra, secret in ((["--key-file", slash], slash), (["--key-file", long_hex], long_hex),
                          (["--seed-env", b32], b32), ([f"--see={words}"], "orbit walrus")):
        assert cli.main(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert secret not in err and err.count("\n") == 1, (extra, err)


def test_a_short_base64_key_and_a_key_given_to_a_command_that_takes_none(tmp_path, capsys):
    """A 16-byte base64 key starting with '/' is a 23-character name in the
    folder '/' (H85's rule let it through); a key option given to audit,
    reconstruct, report or info was echoed by argparse as an unrecognized
    argument or an invalid int (H87)."""
    import base64
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    out = tmp_path / "o.parquet"
    assert cli.main(["anonymize", str(src), "-o", str(out), "--sensitive", "job",
                     "--identifier", "rid", "--drop", "town", "--domain", "job=a,b,c,d",
                     "--l", "2"]) == 0
    capsys.readouterr()
    for size in (16, 17, 18):
        key = "/" + base64.b64encode(secrets.token_bytes(size)).decode()[1:]
        assert cli.main(["anonymize", str(src), "-o", str(tmp_path / "k.csv"), "--sensitive",
                         "job", "--identifier", "rid", "--drop", "town", "--domain",
                         "job=a,b,c,d", "--l", "2", "--key-file", key]) == 2
        err = capsys.readouterr().err
        assert key not in err and key[1:] not in err and "not printed" in err, err
    key = secrets.token_urlsafe(24)
    for cmd in (["audit", str(out), "--original", str(src)],
                ["reconstruct", str(out), "--attributes", "job"],
                ["report", str(out), "-o", str(tmp_path / "r.html")], ["info", str(out)]):
        for opt in ("--key-file", "--seed-env", "--seed", "--sed", "--key", "--secret"):
            assert cli.main(cmd + [opt, key]) == 2, (cmd, opt)
            err = capsys.readouterr().err
            assert key not in err and err.count("\n") == 1, (cmd, opt, err)
    # a value that is no secret is still shown
    assert cli.main(["audit", str(out), "--targets", "many"]) == 2
    assert "'many'" in capsys.readouterr().err
    with pytest.raises(InputError) as e:
        anonset.reconstruct(anonset.read_parquet(out), ["job"], method="random", seed=key)
    assert key not in str(e.value) and "not printed" in str(e.value)


def test_record_ids_stored_as_narrow_floats_are_refused_on_every_path(tmp_path):
    """Ids 123456789 and 123456791 are both 123456792 in float32 (one record
    of two people), and their shortest decimal is not their value: a Dask
    series read them so and redrew most of its sets (H99).  16- and 32-bit
    float ids are refused by their type, in memory, from Parquet and on
    Dask alike."""
    import dask.dataframe as dd
    import pyarrow as pa
    from anonset import dask as adask
    from anonset.stream import publish_file
    n = 60
    df = pd.DataFrame({"rid": (np.arange(n) + 123456789).astype(np.float32),
                       "job": np.random.default_rng(0).choice(list("abcd"), n)})
    key = tmp_path / "k"
    key.write_text(secrets.token_hex(32))
    key.chmod(0o600)
    kw = dict(sensitive=["job"], identifiers=["rid"], domains={"job": list("abcd")},
              record_id="rid", key_file=key, first_in_series=True)
    words = "record_id: column 'rid': holds float32 numbers, which cannot hold every whole"
    for data in (df, pa.Table.from_pandas(df, preserve_index=False), df.astype({"rid": "Float32"}),
                 # inside a Categorical, an index, an Arrow dictionary (H100)
                 df.astype({"rid": "category"}), df.set_index("rid"),
                 pa.table({"rid": pa.array(df["rid"]).dictionary_encode(), "job": df["job"]})):
        with pytest.raises(InputError, match="^" + words):
            anonset.publish(data, anonset.Diversity(2), **kw)
    with pytest.raises(InputError, match="^" + words):
        adask.publish(dd.from_pandas(df, npartitions=2), anonset.Diversity(2), **kw)
    df.to_parquet(tmp_path / "f.parquet")
    with pytest.raises(InputError, match="f.parquet': " + words):
        publish_file(tmp_path / "f.parquet", tmp_path / "o.parquet", anonset.Diversity(2), **kw)
    assert not (tmp_path / "o.parquet").exists()
    # float16 named so on every path (H102: 'float32' in memory)
    with pytest.raises(InputError, match="holds float16 numbers"):
        anonset.publish(df.assign(rid=np.arange(n, dtype=np.float16)), anonset.Diversity(2), **kw)
    # as integers, the ids publish (in float32, 8 pairs of them were one)
    anonset.publish(df.assign(rid=np.arange(n) + 123456789), anonset.Diversity(2), **kw)


def test_a_json_true_is_no_bin_edge(tmp_path, capsys):
    # float(True) is 1: a config's [0, true, 60] was read as edges 0, 1, 60 (H130)
    src = tmp_path / "in.csv"
    _table().assign(age=np.arange(300) % 80).to_csv(src, index=False)
    cfg = tmp_path / "c.json"
    cfg.write_text('{"bins": {"age": [0, true, 60, 120]}}')
    assert cli.main(["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--config",
                     str(cfg), "--sensitive", "job,age", "--identifier", "rid", "--drop",
                     "town", "--l", "2"]) == 2
    err = capsys.readouterr().err
    assert "bin edge True is not a number" in err and err.count("\n") == 1, err
    assert not (tmp_path / "o.csv").exists()


def test_a_key_file_is_read_bounded_and_process_substitution_works(tmp_path, capsys):
    """H144: --key-file /dev/urandom (or /dev/zero, an endless pipe) was
    read whole until the memory ran out.  At most 1 MiB + 1 bytes are read;
    more is refused in one line.  A pipe holding a key (<(cat k)) is read."""
    import os
    import threading
    from anonset.io.keys import MAX_KEY_FILE_BYTES, read_key_file
    for dev in ("/dev/zero", "/dev/urandom"):
        with pytest.raises(InputError, match="is a device, not a file; expected a file holding"):
            read_key_file(dev)
    big = tmp_path / "big.key"
    big.write_bytes(secrets.token_bytes(MAX_KEY_FILE_BYTES + 1))
    big.chmod(0o600)
    with pytest.raises(InputError, match="holds more than 1 MiB"):
        read_key_file(big)
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    argv = ["anonymize", str(src), "-o", str(tmp_path / "o.csv"), "--sensitive", "job",
            "--identifier", "rid", "--drop", "town", "--domain", "job=a,b,c,d", "--l", "2", "-q"]
    assert cli.main(argv + ["--key-file", "/dev/zero"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'/dev/zero': --key-file: is a device" in err, err
    key = secrets.token_hex(32)
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "w") as f:
            f.write(key + "\n")
    t = threading.Thread(target=feed)
    t.start()
    try:
        assert read_key_file(f"/dev/fd/{r}") == key.encode()
    finally:
        t.join()
        os.close(r)


def test_keygen_leaves_no_file_when_the_write_fails(tmp_path, monkeypatch, capsys):
    """H144: a full disk (or a file-size limit) left an empty mode-600 key
    file, which the next keygen refused as existing.  The file keygen made
    is removed; a file that was there is never touched."""
    import errno
    import os
    from anonset.io import keys

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(keys.os, "fsync", full)
    k = tmp_path / "new.key"
    assert cli.main(["keygen", str(k)]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and err.count("\n") == 1, err
    assert not k.exists()
    old = tmp_path / "old.key"
    old.write_text("mine")
    assert cli.main(["keygen", str(old)]) == 2
    assert old.read_text() == "mine"
    monkeypatch.undo()
    assert cli.main(["keygen", str(k), "-q"]) == 0 and len(k.read_text()) == 65
    assert os.stat(k).st_mode & 0o777 == 0o600
