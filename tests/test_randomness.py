"""Randomness as a privacy property (issue 8, item 4).

* The generator key never appears in any output or log: the published files
  and stdout/stderr are scanned for the 32 key bytes, their hex and base64
  forms and the seed text, for a seeded run and for the default OS key.
* The position of the true value is not recoverable from any encoding: every
  encoding of a set (bit order, Parquet list order, CSV ``{a|b|c}`` order) is
  a function of the set alone, and with uniform true values the true value's
  rank within its encoded set is uniform (chi-square, each encoding).
* The published row order is shuffled where the papers require it (paper
  001's Table 7 rows): keyed, reproducible for a seed, unrelated to the input
  order.

The candidates' frequencies against their theoretical probabilities (10^6
draws) and the known-answer vectors of the generators are in test_sample.py,
test_semantic.py and test_rng.py.
"""
from __future__ import annotations

import base64
import secrets

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import anonset
from anonset import cli, semantic
from anonset.io.keys import make_key

BINS = "age=0:30:50:70:120"


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, n),
        "job": rng.choice(list("abcdefgh"), n),
        "city": rng.choice(list("wxyz"), n),
        "note": rng.choice(["n1", "n2"], n),
    })


def _forms(key: bytes) -> list:
    """The ways a key could leak into a file or a log."""
    return [key, key.hex().encode(), key.hex().upper().encode(),
            base64.b64encode(key), base64.urlsafe_b64encode(key),
            base64.b64encode(key).rstrip(b"="),
            repr(key).encode(), str(list(key)).encode(),
            # the key as the kernels see it: eight little-endian 32-bit words
            str(np.frombuffer(key, dtype="<u4").tolist()).encode()]


def _scan(blobs: dict, secrets_: list) -> list:
    hits = []
    for name, blob in blobs.items():
        for s in secrets_:
            if s and s in blob:
                hits.append((name, s[:16]))
    return hits


@pytest.fixture
def captured_keys(monkeypatch):
    """Every default key drawn from the OS during the test."""
    keys = []
    real = secrets.token_bytes

    def spy(n=None):
        b = real(n)
        if n == 32:
            keys.append(b)
        return b

    monkeypatch.setattr(secrets, "token_bytes", spy)
    return keys


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("seeded", [True, False], ids=["seed", "os-key"])
def test_key_never_in_outputs_or_logs(tmp_path, capsys, captured_keys, fmt, seeded):
    src = tmp_path / "in.csv"
    _frame().to_csv(src, index=False)
    seed = "s" + secrets.token_hex(16)                  # text that cannot occur by chance
    out = tmp_path / f"out.{fmt}"
    argv = ["anonymize", str(src), "-o", str(out), "--l", "3", "--t", "0.8",
            "--identifier", "id", "--other", "note", "--bins", BINS,
            "--sensitive", "age,job,city"]
    if seeded:
        argv += ["--seed", seed]
    assert cli.main(argv) == 0
    cap = capsys.readouterr()
    if seeded:
        keys = [make_key(seed)]
        assert not captured_keys
    else:
        assert len(captured_keys) == 1                   # one fresh key per publication
        keys = captured_keys
    blobs = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p != src}
    assert out.name in blobs
    pub = anonset.read_parquet(out) if fmt == "parquet" else anonset.read_csv(out)
    blobs["stdout"] = cap.out.encode()
    blobs["stderr"] = cap.err.encode()
    blobs["repr"] = repr(pub).encode()
    blobs["metadata"] = repr(pub.metadata()).encode()
    needles = [f for k in keys for f in _forms(k)]
    if seeded:
        needles += [seed.encode(), seed[1:].encode()]
    assert _scan(blobs, needles) == []
    assert pub.info.get("seeded") is seeded              # only whether a seed was used


def test_key_never_in_semantic_outputs(tmp_path, capsys, captured_keys):
    src = tmp_path / "in.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"zip": rng.choice(["a", "b"], 300),
                  "disease": rng.integers(0, 12, 300)}).to_csv(src, index=False)
    out, rows = tmp_path / "out.parquet", tmp_path / "rows.csv"
    assert cli.main(["semantic-anonymize", str(src), "-o", str(out), "--sensitive", "disease",
                     "--qids", "zip", "--l", "3", "--d", "2", "--rows", str(rows)]) == 0
    cap = capsys.readouterr()
    assert captured_keys                                  # fresh keys: sets and the shuffle
    blobs = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p != src}
    blobs["stdout"], blobs["stderr"] = cap.out.encode(), cap.err.encode()
    assert {"out.parquet", "rows.csv"} <= blobs.keys()
    assert _scan(blobs, [f for k in captured_keys for f in _forms(k)]) == []


# ------------------------------------------------ position of the true value
def _uniform_table(d, eta, n, seed, model):
    rng = np.random.default_rng(seed)
    dom = [f"v{i:03d}" for i in range(d)]
    df = pd.DataFrame({"x": rng.choice(dom, n), "y": rng.choice(list("pqrstuvw"), n)})
    schema = anonset.Schema((anonset.Attribute("x", domain=tuple(dom)),
                             anonset.Attribute("y", domain=tuple("pqrstuvw"))))
    pub = anonset.publish(df, model, schema, seed=seed, research_seed=True, keep_order=True)
    codes = np.searchsorted(np.array(dom), df["x"].to_numpy())
    return pub, dom, codes


def _ranks_bits(mask, true):
    """Rank of the true value among the set bits, in bit order (word 0 bit 0 first)."""
    words = mask.shape[1]
    bits = np.unpackbits(mask.view(np.uint8).reshape(len(mask), words * 8), axis=1,
                         bitorder="little").astype(bool)
    inset = bits[np.arange(len(true)), true]
    below = np.cumsum(bits, axis=1)[np.arange(len(true)), true] - 1
    return below[inset], inset


def _ranks_lists(lists, labels_true):
    ranks, inset = [], []
    for lst, t in zip(lists, labels_true):
        if t in lst:
            ranks.append(list(lst).index(t))
            inset.append(True)
        else:
            inset.append(False)
    return np.asarray(ranks), np.asarray(inset)


def _uniform_ok(ranks, eta):
    counts = np.bincount(ranks, minlength=eta)
    return stats.chisquare(counts).pvalue, counts


@pytest.mark.parametrize("d, eta, model", [
    (10, 4, anonset.Diversity(4)),
    (100, 5, anonset.Diversity(5)),                      # two words per mask
    (12, 3, anonset.DiversityCloseness(3, 0.35)),        # p < 1: tail draws too
], ids=["d10-eta4", "d100-eta5", "d12-closeness"])
def test_true_value_rank_is_uniform_in_every_encoding(tmp_path, d, eta, model):
    n = 30_000
    pub, dom, codes = _uniform_table(d, eta, n, seed=d, model=model)
    p = pub.params["x"]
    assert p.eta == eta
    true_labels = np.array(dom, dtype=object)[codes]

    # bitmask (bit order)
    r_bits, inset = _ranks_bits(np.asarray(pub.mask("x")), codes)
    if isinstance(model, anonset.DiversityCloseness):
        assert p.p < 1.0 and not inset.all()             # tail draws are exercised
    else:
        assert inset.all()
    # Parquet (list order)
    pub.to_parquet(tmp_path / "t.parquet", sets="lists")   # the list order is checked
    import pyarrow.parquet as pq
    lists_pq = pq.read_table(tmp_path / "t.parquet").column("x").to_pylist()
    r_pq, in_pq = _ranks_lists(lists_pq, true_labels)
    # CSV (order inside {a|b|c})
    pub.to_csv(tmp_path / "t.csv")
    cells = pd.read_csv(tmp_path / "t.csv", dtype=str)["x"]
    lists_csv = [c[1:-1].split("|") for c in cells]
    r_csv, in_csv = _ranks_lists(lists_csv, true_labels)

    assert np.array_equal(inset, in_pq) and np.array_equal(inset, in_csv)
    for name, r in (("bits", r_bits), ("parquet", r_pq), ("csv", r_csv)):
        pval, counts = _uniform_ok(r, eta)
        assert pval > 1e-4, (name, counts)
    # every encoding lists a set in domain order: a function of the set alone,
    # so records with the same set are indistinguishable in every file
    for lists in (lists_pq, lists_csv):
        for lst in lists[:2000]:
            assert list(lst) == sorted(lst, key=dom.index)
    assert np.array_equal(r_bits, r_pq) and np.array_equal(r_pq, r_csv)


def test_same_set_same_bytes_whatever_the_true_value(tmp_path):
    """Two records with different true values and the same published set are
    encoded identically (cell bytes in CSV, list in Parquet)."""
    pub, dom, codes = _uniform_table(6, 3, 4000, seed=5, model=anonset.Diversity(3))
    pub.to_csv(tmp_path / "t.csv")
    cells = pd.read_csv(tmp_path / "t.csv", dtype=str)["x"].to_numpy()
    masks = np.asarray(pub.mask("x"))[:, 0]
    seen = {}
    pairs = 0
    for m, c, t in zip(masks, cells, codes):
        if m in seen:
            c0, t0 = seen[m]
            assert c == c0
            pairs += t != t0
        else:
            seen[m] = (c, t)
    assert pairs > 100                                   # the property was exercised


# --------------------------------------------------------- Table 7 row order
def _semantic_table(n=3000, seed=2):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"zip": rng.choice(["z1", "z2", "z3"], n),
                       "disease": rng.integers(0, 10, n)})
    df["pid"] = np.arange(n)            # a QID that identifies the input row
    return semantic.semantic_publish(df, "disease", 3, 2, qids=["zip", "pid"],
                                     domain=list(range(10)), seed=seed, research_seed=True), df


def test_table7_rows_are_shuffled():
    tab, df = _semantic_table()
    n, l = len(df), 3
    rows = semantic.semantic_rows(tab, seed=7, research_seed=True)
    assert len(rows) == n * l
    pid = rows["pid"].to_numpy().astype(np.int64)
    # the same multiset of rows as the unshuffled expansion
    assert np.array_equal(np.sort(pid), np.repeat(np.arange(n), l))
    # a person's l rows are not adjacent; the output order is unrelated to the input order
    same_next = float(np.mean(pid[1:] == pid[:-1]))
    assert same_next < 0.01, same_next                    # unshuffled: (l-1)/l = 0.67
    rho = stats.spearmanr(np.arange(n * l), pid).statistic
    assert abs(rho) < 0.05, rho
    # where each person's first row lands is uniform over the table (10 bins)
    first = np.full(n, n * l)
    np.minimum.at(first, pid, np.arange(n * l))
    last = np.zeros(n, dtype=np.int64)
    np.maximum.at(last, pid, np.arange(n * l))
    pos = np.concatenate([first, last])
    counts = np.histogram(pos, bins=10, range=(0, n * l))[0]
    assert counts.min() > 0                               # spread over the whole table
    # keyed: a seed reproduces the order, another seed or the OS key does not
    assert rows.equals(semantic.semantic_rows(tab, seed=7, research_seed=True))
    assert not rows.equals(semantic.semantic_rows(tab, seed=8, research_seed=True))
    assert not rows.equals(semantic.semantic_rows(tab))


def test_table7_shuffle_hides_which_member_is_true():
    """Within a person's rows of Table 7 the true value is at a uniform rank
    of the person's row positions (chi-square)."""
    tab, df = _semantic_table(n=6000, seed=4)
    rows = semantic.semantic_rows(tab, seed=11, research_seed=True)
    pid = rows["pid"].to_numpy().astype(np.int64)
    val = rows["disease"].to_numpy().astype(np.int64)
    true = df["disease"].to_numpy()
    order = np.argsort(pid, kind="stable")               # each person's rows, in table order
    rank = np.nonzero(val[order].reshape(-1, 3) == true[:, None])[1]
    assert len(rank) == len(df)                          # the true value is once in each set
    pval = stats.chisquare(np.bincount(rank, minlength=3)).pvalue
    assert pval > 1e-4, np.bincount(rank, minlength=3)
