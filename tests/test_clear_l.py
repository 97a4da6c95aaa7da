"""l = 1 publishes in the clear on every publisher, not only paper 000's.

At l = 1 an lgb bucket, an Anatomy / Mondrian / TP group, a Rating bucket or a
semantic set may hold one row, whose value it then tells: lgb on AER's Affairs
at --l 1 published 601 buckets of one row each, every rating in the clear,
without a word.  Each of them now refuses l = 1 (given, or reached by
clipping) on an attribute of two values or more unless ``allow_clear`` names
it, as ``anonset.publish`` does; the metadata (``clear``), the summary and the
audit then say so."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from anonset import cli
from anonset import lgb as L
from anonset.partition import baselines as B
from anonset.randomized.semantic import semantic_publish

SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"


def table(n=120, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.integers(0, 9, n),
                         "rating": rng.integers(1, 6, n)})


def refusal(column="rating", note=""):
    return (rf"^l: column '{column}': would publish {column} \(l = 1{note}\) in the clear: at "
            r"l = 1 a set, bucket or group may hold its row's value alone, and so tells it; "
            rf"expected l >= 2, or the risk named: allow_clear=\['{column}'\]$")


@pytest.mark.parametrize("method", [B.anatomy, B.mondrian, B.tp])
def test_the_baselines_refuse_l_1_unless_named(method):
    df = table()
    kw = dict(qids=["age", "zip"], sensitive="rating", l=1, seed=SEED,
              allow_recode=["age", "zip"])
    if method is not B.anatomy:
        kw.pop("allow_recode")
    with pytest.raises(ValueError, match=refusal()):
        method(df, **kw)
    rel = method(df, allow_clear=["rating"], **kw)
    assert rel.info["clear"] == ["rating"]
    assert method(df, **{**kw, "l": 2}).info["clear"] == []
    with pytest.raises(ValueError, match=r"^allow_clear: names 'age', which is not held to an l"):
        method(df, allow_clear=["age"], **kw)


def test_rating_refuses_l_1_given_or_clipped():
    df = table()[["zip", "rating"]].assign(two=lambda d: np.where(d.index % 2 == 0, "a", "b"))
    with pytest.raises(ValueError, match=refusal("zip")):
        B.rating(df, attributes=["zip", "rating", "two"], l={"zip": 1, "rating": 2, "two": 2},
                 seed=SEED)
    # a two-valued column at l = 2 is clipped to l = 1 by clip_l
    with pytest.raises(ValueError, match=refusal("two", ", after clip_l")):
        B.rating(df, attributes=["zip", "rating", "two"], l=2, clip_l=True, seed=SEED)
    rel = B.rating(df, attributes=["zip", "rating", "two"], l=2, clip_l=True, seed=SEED,
                   allow_clear=["two"])
    assert rel.info["clear"] == ["two"]


def test_lgb_refuses_l_1_on_every_path_and_names_it_when_allowed(tmp_path, capsys):
    df = table(300)
    with pytest.raises(ValueError, match=refusal()):
        L.lgb(df, qi=["age", "zip"], sensitive=["rating"], k=3, l=1, seed=SEED)
    res = L.lgb(df, qi=["age", "zip"], sensitive=["rating"], k=3, l=1, seed=SEED,
                allow_clear=["rating"])
    assert res.metadata["clear"] == ["rating"]
    # every bucket is one row: that is what was published before, unnamed
    assert (res.sat["rating"].groupby("BID").size() == 1).all()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    argv = ["lgb", str(src), "--qi", "age,zip", "--sensitive", "rating", "--k", "3", "--l", "1",
            "--seed", SEED]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert cli.main(argv + ["-o", str(tmp_path / "o.parquet")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anonset lgb: error: --l: column 'rating': "
                                                "would publish rating (l = 1) in the clear")
    assert err[0].endswith("expected l >= 2, or the risk named: --allow-clear rating")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert cli.main(argv + ["-o", str(tmp_path / "o.parquet"), "--allow-clear", "rating"]) == 0
    assert "published in the clear at l = 1 (--allow-clear): rating" in capsys.readouterr().out
    assert cli.main(["audit", str(tmp_path / "o.parquet")]) == 1
    out = capsys.readouterr().out
    assert "rating: held to l = 1, so 300 buckets hold one value alone and tell their rows' " \
           "value (published as the user allowed: allow_clear)" in out


def test_semantic_refuses_l_1_unless_named(tmp_path, capsys):
    df = table()
    kw = dict(qids=["zip"], drop=["age"], domain=[1, 2, 3, 4, 5], seed=SEED)
    with pytest.raises(ValueError, match=refusal()):
        semantic_publish(df, "rating", 1, 1, **kw)
    t = semantic_publish(df, "rating", 1, 1, allow_clear=["rating"], **kw)
    assert t.info["clear"] == ["rating"]
    assert semantic_publish(df, "rating", 2, 1, **kw).info["clear"] == []
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    argv = ["semantic-anonymize", str(src), "-o", str(tmp_path / "s.parquet"), "--sensitive",
            "rating", "--qids", "zip", "--drop", "age", "--l", "1", "--d", "1", "--domain",
            "1,2,3,4,5", "--seed", SEED]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("or the risk named: --allow-clear rating")
    assert not (tmp_path / "s.parquet").exists()
    assert cli.main(argv + ["--allow-clear", "rating"]) == 0
    assert "published in the clear or nearly (you allowed it): rating" in capsys.readouterr().err
    assert cli.main(["audit", str(tmp_path / "s.parquet")]) == 1
    assert "rating: published in the clear" in capsys.readouterr().out
    assert json.loads(json.dumps(t.info))["clear"] == ["rating"]
