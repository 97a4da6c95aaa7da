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
import re

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
    with pytest.raises(ValueError, match=refusal("two", ", after clip_l")), \
            pytest.warns(UserWarning, match="as requested by clip_l"):
        B.rating(df, attributes=["zip", "rating", "two"], l=2, clip_l=True, seed=SEED)
    with pytest.warns(UserWarning, match=r"l = 2 for 'two' is not below its domain size 2; "
                                         r"using l = 1 as requested by clip_l \(this is "
                                         r"weaker than asked\)"):
        rel = B.rating(df, attributes=["zip", "rating", "two"], l=2, clip_l=True, seed=SEED,
                       allow_clear=["two"])
    assert rel.info["clear"] == ["two"]
    # weaker than asked: recorded as clip_eligible's lowering is (H57: nowhere)
    assert rel.info["clipped"] == {"two": {"asked": 2, "used": 1, "by": "clip_l"}}
    assert rel.info["l"]["two"] == 1


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
    assert "published in the clear (--allow-clear): rating (l = 1)" in capsys.readouterr().out
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


def test_lgb_refuses_k_1_unless_its_qi_attributes_are_named(tmp_path, capsys):
    """At k = 1 a group of one row shows its QI cells exactly (H53: 294 of
    367 groups of CPS1985 at --k 1, with an empty ``clear``)."""
    df = table(300)
    kw = dict(qi=["age", "zip"], sensitive=["rating"], k=1, l=2, seed=SEED)
    with pytest.raises(ValueError, match=r"^k: would publish age \(k = 1\), zip \(k = 1\) in "
                                         r"the clear: at k = 1 a group may hold one row, whose "
                                         r"QI cells it then shows exactly .*expected k >= 2, "
                                         r"or the risk named: allow_clear=\['age', 'zip'\]$"):
        L.lgb(df, **kw)
    with pytest.raises(ValueError, match="would publish zip"):      # each one named
        L.lgb(df, **kw, allow_clear=["age"])
    with pytest.raises(ValueError, match="names 'other', which is not held to an l nor "
                                         "generalized in groups of k = 1"):
        L.lgb(df.assign(other=1), **kw, drop=["other"], allow_clear=["age", "zip", "other"])
    with pytest.raises(ValueError, match="names 'age', which is not held to an l"):
        L.lgb(df, **{**kw, "k": 2}, allow_clear=["age"])     # k >= 2: nothing to name
    res = L.lgb(df, **kw, allow_clear=["age", "zip"])
    assert res.metadata["clear"] == ["age", "zip"]
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    argv = ["lgb", str(src), "--qi", "age,zip", "--sensitive", "rating", "--k", "1", "--l", "2",
            "--seed", SEED, "-o", str(tmp_path / "o.parquet")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anonset lgb: error: --k: would publish age")
    assert err[0].endswith("expected k >= 2, or the risk named: --allow-clear age,zip")
    assert not (tmp_path / "o.parquet").exists()
    assert cli.main(argv + ["--allow-clear", "age,zip"]) == 0
    assert "published in the clear (--allow-clear): age (k = 1), zip (k = 1)" in \
        capsys.readouterr().out
    assert cli.main(["audit", str(tmp_path / "o.parquet")]) == 1
    out = capsys.readouterr().out
    lone = int((res.table.groupby("GID").size() == 1).sum())
    assert lone > 0 and f"{lone:,} groups hold one row alone, whose QI cells they show " \
        "exactly" in out and "(published as the user allowed: allow_clear)" in out


def _tampered(path, out, column, values):
    import pyarrow as pa
    import pyarrow.parquet as pq
    t = pq.read_table(path)
    frame = t.to_pandas()
    frame[column] = values(frame)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False)
                   .replace_schema_metadata(t.schema.metadata), out)


@pytest.mark.parametrize("kind", ["lgb", "msa"])
def test_the_audit_fails_a_partition_release_whose_qis_differ_within_a_class(kind, tmp_path,
                                                                             capsys):
    """H53: the audit counted a class's rows but never read its QI cells, so
    a release holding every row's own QI values passed as k-anonymous."""
    df = table(300)
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    pub = tmp_path / "o.parquet"
    argv = (["lgb", str(src), "--qi", "age,zip", "--sensitive", "rating", "--k", "4",
             "--l", "2"] if kind == "lgb" else
            ["msa-anonymize", str(src), "--qi", "age,zip", "--sa", "rating", "--k", "4",
             "--t", "0.4"])
    assert cli.main(argv + ["--seed", SEED, "-o", str(pub)]) == 0
    capsys.readouterr()
    check, unit = ("groups_qi", "groups") if kind == "lgb" else ("classes_qi", "classes")
    assert cli.main(["audit", str(pub), "-v"]) == 0
    assert re.search(rf"\n *{check} +- +pass", capsys.readouterr().out)
    # each row its own zip (lgb copies the companions: the check reads the table)
    bad = tmp_path / "bad.parquet"
    for p in tmp_path.glob("o.*.parquet"):
        (tmp_path / p.name.replace("o.", "bad.", 1)).write_bytes(p.read_bytes())
    _tampered(pub, bad, "zip", lambda f: [f"z{i}" for i in range(len(f))])
    assert cli.main(["audit", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out
    assert re.search(rf"\d[\d,]* {unit} show more than one value of 'zip' on their rows", out)
    # one row's QI cell changed in one class: still caught
    _tampered(pub, bad, "zip", lambda f: ["odd"] + list(f["zip"].iloc[1:]))
    assert cli.main(["audit", str(bad)]) == 1
    assert f"1 {unit} show more than one value of 'zip'" in capsys.readouterr().out


def test_suppressed_semi_sensitive_cells_are_not_read_as_qi_cells(tmp_path):
    """A semi-sensitive cell suppressed to '*' has no bucket, as a QI cell
    has not: read as a QI cell it split its group (a false FAILED)."""
    from anonset.audit.html.release import open_release
    from anonset.audit.partition import audit_partition
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"age": rng.integers(18, 40, n),
                       "colour": np.where(rng.random(n) < 0.8, "w", "b")})
    flags = pd.DataFrame({"colour": rng.random(n) < 0.6})
    with pytest.warns(Warning):
        res = L.lgb(df, qi=["age"], semi_sensitive=["colour"], flags=flags, k=4, l=2,
                    suppress=True, seed=SEED)
    assert res.metadata["suppressed"]["colour"] > 0
    res.write(tmp_path / "s.parquet")
    checks = audit_partition(open_release(tmp_path / "s.parquet")).report.checks
    assert checks.query("check == 'groups_qi'")["status"].tolist() == ["pass"]


def test_msa_refuses_classes_of_one_row_unless_its_qis_are_named(tmp_path, capsys):
    """H56: at k = 1 with every SA allowed to be homogeneous, msa published
    200 classes of one row, their QI cells exact, nothing named."""
    from anonset.msa import anonymize_msa
    df = table(200)
    kw = dict(k=1, t=0.8, allow_homogeneous=["rating"], seed=SEED)
    with pytest.raises(ValueError, match=r"^k: would publish age \(k = 1\), zip \(k = 1\) in "
                                         r"the clear: .*allow_clear=\['age', 'zip'\]$"):
        anonymize_msa(df, ["age", "zip"], ["rating"], **kw)
    # without homogeneous classes every class keeps two rows: nothing to name
    r = anonymize_msa(df, ["age", "zip"], ["rating"], k=1, t=0.8, seed=SEED)
    assert r.sizes.min() >= 2 and r.metadata["clear"] == []
    r = anonymize_msa(df, ["age", "zip"], ["rating"], **kw, allow_clear=["age", "zip"])
    assert r.metadata["clear"] == ["age", "zip"] and r.sizes.min() == 1
    # where t leaves no class of one row, nothing is refused nor named (H58)
    r = anonymize_msa(df, ["age", "zip"], ["rating"], **{**kw, "t": 0.1})
    assert r.sizes.min() > 1 and r.metadata["clear"] == []
    # a name where no class can hold one row: refused, not ignored (H58)
    for bad in ({"k": 2}, {"allow_homogeneous": []}):
        with pytest.raises(ValueError, match=r"^allow_clear: applies only where a class may "
                                             r"hold one row: at k = 1 with every sensitive "
                                             r"attribute in allow_homogeneous"):
            anonymize_msa(df, ["age", "zip"], ["rating"], **{**kw, **bad},
                          allow_clear=["age", "zip"])
    with pytest.raises(ValueError, match="names 'rating', which is not a quasi-identifier"):
        anonymize_msa(df, ["age", "zip"], ["rating"], **kw, allow_clear=["rating"])
    src, pub = tmp_path / "t.csv", tmp_path / "m.parquet"
    df.to_csv(src, index=False)
    argv = ["msa-anonymize", str(src), "--qi", "age,zip", "--sa", "rating", "--k", "1",
            "--t", "0.8", "--allow-homogeneous", "rating", "--seed", SEED, "-o", str(pub)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("anonset msa-anonymize: error: --k: would publish age (k = 1)") and \
        err.endswith("--allow-clear age,zip") and not pub.exists()
    assert cli.main(argv + ["--allow-clear", "age,zip"]) == 0
    assert "published in the clear (--allow-clear): age (k = 1), zip (k = 1)" in \
        capsys.readouterr().out
    assert cli.main(["audit", str(pub)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"[\d,]+ classes hold one row alone, whose QI cells they show exactly",
                     out) and "(published as the user allowed: allow_clear)" in out


def test_an_attribute_at_l_1_and_k_1_is_named_with_both():
    """H56: 'semi (l = 1)' sent the user to l >= 2, and then to k >= 2."""
    df = table(300).assign(semi=lambda d: d["zip"] % 4)
    flags = {"semi": np.arange(300) % 2 == 0}
    kw = dict(qi=["age", "zip"], semi_sensitive=["semi"], sensitive=["rating"], flags=flags,
              k=1, l={"semi": 1, "rating": 2}, seed=SEED)
    with pytest.raises(ValueError, match=r"would publish semi \(l = 1, k = 1\) in the clear: "
                                         r"at k = 1 .*; at l = 1 .*expected k >= 2 and l >= 2"):
        L.lgb(df, **kw, allow_clear=["age", "zip"])
