"""Groups that hold one value of a sensitive attribute alone (msa's classes,
lgb's t-buckets).  t-closeness allows such a group wherever the value is
common enough; every row of it then has its value told (on AER's Affairs,
msa at k = 5, t = 0.3 put 65 people in classes that all held affairs = 0).
By default such a group violates too and is merged (msa) or never dealt
(lgb); ``allow_homogeneous`` names the risk, and the metadata, the summary
and the audit then say so."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from anonset import cli
from anonset import lgb as L
from anonset.checks import check_partition
from anonset.msa import anonymize_msa
from anonset.partition.homogeneous import single_value_groups

SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"


def survey(n, seed, common=0.75):
    """A survey-shaped table: one answer held by ``common`` of the rows (as
    Affairs' 0), a rating with a common value, QIs that cluster."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "years": rng.integers(0, 30, n),
        "sex": rng.choice(["F", "M"], n),
        "affairs": np.where(rng.random(n) < common, 0, rng.choice([1, 2, 3, 7, 12], n)),
        "rating": rng.choice([1, 2, 3, 4, 5], n, p=[0.03, 0.11, 0.15, 0.32, 0.39]),
    })


def single_groups(groups, frame, cols) -> dict:
    out = {}
    for c in cols:
        g, r = single_value_groups(groups, frame[c].to_numpy())
        if g:
            out[c] = {"groups": g, "rows": r}
    return out


@given(seed=st.integers(0, 10 ** 6), n=st.integers(20, 160), k=st.integers(2, 6),
       t=st.sampled_from([0.2, 0.3, 0.45]), alg=st.sampled_from(["pca", "cluster", "microagg"]),
       common=st.sampled_from([0.6, 0.75, 0.9]))
@settings(max_examples=40, deadline=None)
def test_no_class_holds_one_value_alone_unless_named(seed, n, k, t, alg, common):
    df = survey(n, seed, common)
    sa = ["affairs", "rating"]
    kw = dict(algorithm=alg, seed=SEED)
    safe = anonymize_msa(df, ["age", "years", "sex"], sa, k, t, **kw)
    g = safe.generalized()
    rep = check_partition(g, g["ec"].to_numpy(), sa, ground={"affairs": "ordered",
                                                             "rating": "ordered"})
    assert rep.k >= k and rep.t <= t + 1e-12                # the model still holds
    assert single_groups(g["ec"], g, sa) == {}
    assert safe.metadata["homogeneous"] == {} and safe.metadata["homogeneous_allowed"] == []
    # named: Pseudocode 2 as printed, whose one-value classes the metadata counts
    paper = anonymize_msa(df, ["age", "years", "sex"], sa, k, t, allow_homogeneous=sa, **kw)
    gp = paper.generalized()
    assert paper.metadata["homogeneous"] == single_groups(gp["ec"], gp, sa)
    assert paper.metadata["homogeneous_allowed"] == sa
    assert paper.metadata["homogeneous_merged"] == 0
    # the paper's release holds its model too.  (Its one-value classes are
    # not a subset of the initial ones within t that the default counts as
    # merged: two classes that hold one same affairs value, each beyond t on
    # rating, merge into one within t that Pseudocode 2 keeps; seed 279,
    # n = 44, k = 2, t = 0.2, pca kept 5 where the default counted 4.)
    rp = check_partition(gp, gp["ec"].to_numpy(), sa, ground={"affairs": "ordered",
                                                              "rating": "ordered"})
    assert rp.k >= k and rp.t <= t + 1e-12


def test_the_paper_rule_tells_values_the_default_does_not():
    """Not vacuous: on a survey-shaped table the paper's Pseudocode 2 keeps
    classes of one value (those rows' values told), the default none."""
    df = survey(600, 4)
    sa = ["affairs", "rating"]
    paper = anonymize_msa(df, ["age", "years", "sex"], sa, 5, 0.3, seed=SEED,
                          allow_homogeneous=sa)
    assert paper.metadata["homogeneous"]["affairs"]["rows"] >= 20
    safe = anonymize_msa(df, ["age", "years", "sex"], sa, 5, 0.3, seed=SEED)
    assert safe.metadata["homogeneous"] == {}
    with pytest.raises(ValueError, match=r"^allow_homogeneous: names 'age', which is not a "
                                         r"sensitive attribute; expected sensitive attributes"):
        anonymize_msa(df, ["age", "years", "sex"], sa, 5, 0.3, allow_homogeneous=["age"])


def test_an_sa_of_one_value_merges_nothing():
    """An SA whose table holds one value tells nothing a class could: it
    must not make every class merge into one."""
    df = survey(200, 8).assign(constant=7)
    sa = ["rating", "constant"]
    one = anonymize_msa(df.drop(columns="affairs"), ["age", "years", "sex"], sa, 5, 0.3,
                        seed=SEED)
    ref = anonymize_msa(df.drop(columns=["affairs", "constant"]), ["age", "years", "sex"],
                        ["rating"], 5, 0.3, seed=SEED)
    assert np.unique(one.generalized()["ec"]).size > 1
    assert one.metadata["homogeneous"] == {}
    assert np.unique(one.generalized()["ec"]).size == np.unique(ref.generalized()["ec"]).size


def test_msa_cli_names_the_risk_and_the_audit_reports_it(tmp_path, capsys):
    src = tmp_path / "survey.csv"
    survey(600, 4).to_csv(src, index=False)
    base = ["msa-anonymize", str(src), "--qi", "age,years,sex", "--sa", "affairs,rating",
            "--k", "5", "--t", "0.3", "--seed", SEED]
    assert cli.main(base + ["-o", str(tmp_path / "safe.csv")]) == 0
    out = capsys.readouterr().out
    assert "one value alone, telling" not in out
    assert "; merged " in out and " classes within t that held one value alone, which would " \
        "tell their rows' value (--allow-homogeneous keeps them)" in out
    assert cli.main(base + ["-o", str(tmp_path / "paper.csv"), "--allow-homogeneous",
                            "affairs"]) == 0
    out = capsys.readouterr().out
    assert "groups that hold one value alone, telling their rows' value " \
           "(--allow-homogeneous): affairs " in out
    capsys.readouterr()
    assert cli.main(["audit", str(tmp_path / "safe.csv")]) == 0
    assert "RISK" not in capsys.readouterr().out
    assert cli.main(["audit", str(tmp_path / "paper.csv")]) == 1
    out = capsys.readouterr().out
    assert "RISKS FOUND" in out
    assert "hold one value alone, so whoever finds a person's class knows their value" in out
    assert "(published as the user allowed: allow_homogeneous)" in out
    # an older release (no homogeneous_allowed): the same classes, not named
    import json
    meta_path = tmp_path / "paper.csv.anonset.json"
    meta = json.loads(meta_path.read_text())
    for key in ("homogeneous", "homogeneous_allowed"):
        meta.pop(key)
    meta_path.write_text(json.dumps(meta))
    assert cli.main(["audit", str(tmp_path / "paper.csv")]) == 1
    out = capsys.readouterr().out
    assert "knows their value" in out and "as the user allowed" not in out
    # a name that is not a sensitive column: exit 2, one line, nothing written
    assert cli.main(base + ["-o", str(tmp_path / "bad.csv"), "--allow-homogeneous",
                            "age"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "names 'age', which is not a sensitive attribute" in err[0]
    assert not (tmp_path / "bad.csv").exists()


@given(seed=st.integers(0, 10 ** 6), t=st.sampled_from([0.2, 0.3, 0.45]),
       common=st.sampled_from([0.6, 0.8, 0.95]), density=st.sampled_from([0.01, 0.2, 1.0]))
@settings(max_examples=30, deadline=None)
def test_no_t_bucket_holds_one_value_alone_unless_named(seed, t, common, density):
    rng = np.random.default_rng(seed)
    n = 300
    df = pd.DataFrame({"zip": rng.integers(0, 12, n),
                       "smoker": np.where(rng.random(n) < common, "no", "yes"),
                       "age": rng.integers(18, 80, n)})
    flags = pd.DataFrame({"smoker": rng.random(n) < density})
    kw = dict(qi=["zip"], semi_sensitive=["smoker"], sensitive=["age"], flags=flags, k=3, l=2,
              closeness={"smoker": t}, seed=SEED)
    safe = L.lgb(df, **kw)
    assert L.verify(safe)["ok"]
    tab = safe.table
    inb = tab["smoker_bid"].notna()
    assert single_value_groups(tab.loc[inb, "smoker_bid"], tab.loc[inb, "smoker"]) == (0, 0)
    assert safe.metadata["homogeneous"] == {}
    paper = L.lgb(df, allow_homogeneous=["smoker"], **kw)
    tab = paper.table
    inb = tab["smoker_bid"].notna()
    g, r = single_value_groups(tab.loc[inb, "smoker_bid"], tab.loc[inb, "smoker"])
    assert paper.metadata["homogeneous"] == ({"smoker": {"groups": g, "rows": r}} if g else {})


def test_lgb_t_buckets_of_one_value_were_published_and_are_not_now(tmp_path, capsys):
    """At t = 0.3 with 'no' held by 80 %, buckets of two 'no's are within t:
    the paper's dealing keeps many; the default none, and a flagged column
    of one value alone gets a cell of another value promoted."""
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame({"zip": rng.integers(0, 12, n),
                       "smoker": np.where(rng.random(n) < 0.8, "no", "yes"),
                       "age": rng.integers(18, 80, n)})
    src = tmp_path / "s.csv"
    df.to_csv(src, index=False)
    base = ["lgb", str(src), "--qi", "zip", "--sensitive", "smoker,age", "--k", "3", "--l",
            "age=2", "--t", "smoker=0.3", "--seed", SEED]
    assert cli.main(base + ["-o", str(tmp_path / "p.parquet"), "--allow-homogeneous",
                            "smoker"]) == 0
    assert "smoker " in capsys.readouterr().out
    sat = pd.read_parquet(tmp_path / "p.smoker.sat.parquet")
    assert (sat.groupby("BID")["smoker"].nunique() == 1).sum() >= 10
    assert cli.main(base + ["-o", str(tmp_path / "s.parquet")]) == 0
    capsys.readouterr()
    sat = pd.read_parquet(tmp_path / "s.smoker.sat.parquet")
    assert (sat.groupby("BID")["smoker"].nunique() >= 2).all()
    assert cli.main(["audit", str(tmp_path / "p.parquet")]) == 1        # a risk found
    out = capsys.readouterr().out
    assert "buckets (" in out and "as the user allowed: allow_homogeneous" in out
    # flagged cells of one value alone: a cell of the other value is promoted
    flags = pd.DataFrame({"smoker": (df["smoker"] == "no") & (rng.random(n) < 0.05)})
    res = L.lgb(df, qi=["zip"], semi_sensitive=["smoker"], sensitive=["age"], flags=flags, k=3,
                l=2, closeness={"smoker": 0.3}, seed=SEED)
    tab = res.table
    shown = tab.loc[tab["smoker_bid"].notna(), "smoker"]
    assert set(shown) == {"no", "yes"} and res.promoted >= 1
    with pytest.raises(ValueError, match=r"^allow_homogeneous: names 'age', which is not a "
                                         r"t-closeness attribute"):
        L.lgb(df, qi=["zip"], sensitive=["smoker", "age"], k=3, l={"age": 2},
              closeness={"smoker": 0.3}, allow_homogeneous=["age"])
