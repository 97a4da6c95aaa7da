"""missing='category' (--missing category) for semantic diversity (paper
001), LGB (paper 002) and msa (paper 003), as paper 000's publishing has it:
a missing cell is published as a value of its own (``missing_token``,
default '?') instead of being refused or leaving its row out.  The row
stays in the release, so its absence tells nothing; the token is a value
like any other under the privacy model.  A column of numbers refuses it, a
column that already holds the token refuses it, and a declared domain or
hierarchy must list the token where it belongs.  The metadata, the summary,
the audit (which fills the original's cells alike before comparing) and the
report name it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from anonset.audit import audit, audit_file
from anonset.audit.partition import audit_partition
from anonset.cli import main
from anonset.hierarchy import Hierarchy
from anonset.msa import anonymize_msa
from anonset.partition.lgb import lgb
from anonset.randomized.semantic import semantic_publish
from anonset.validate import InputError, apply_missing

SEED = "missing-category-test-key-012345"


def survey(n: int = 400, seed: int = 0, *, rate: float = 0.08) -> pd.DataFrame:
    """Answers in text, some unanswered (None), and a number column."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"id": np.arange(n),
                       "sex": rng.choice(["f", "m"], n).astype(object),
                       "region": rng.choice(["north", "south", "east", "west"], n).astype(object),
                       "health": rng.choice(["poor", "fair", "good", "excellent"], n)
                       .astype(object),
                       "smoker": rng.choice(["yes", "no", "former"], n).astype(object),
                       "age": rng.integers(18, 80, n).astype(float)})
    for c in ("region", "health", "smoker"):
        df.loc[rng.random(n) < rate, c] = None
    return df


def filled(df, cols, token="?"):
    out = df.copy()
    for c in cols:
        out[c] = out[c].astype(object).where(out[c].notna(), token)
    return out


def _release(res):
    from anonset.audit.html.release import _from_object
    return _from_object(res)


def test_apply_missing_fills_counts_and_refuses_what_it_must():
    df = survey()
    before = df.copy()
    out, rec = apply_missing(df, ["sex", "health", "smoker"], "category")
    pd.testing.assert_frame_equal(df, before)             # the caller's frame is left as it is
    assert len(out) == len(df) and not out[["health", "smoker"]].isna().any().any()
    assert rec == {"policy": "category", "token": "?",
                   "columns": {"health": int(df.health.isna().sum()),
                               "smoker": int(df.smoker.isna().sum())}}
    assert (out.health == "?").sum() == df.health.isna().sum()
    assert (out.health[df.health.notna()] == df.health[df.health.notna()]).all()
    # another token
    out, rec = apply_missing(df, ["health"], "category", token="(none)")
    assert rec["token"] == "(none)" and (out.health == "(none)").sum() == df.health.isna().sum()
    # a pandas Categorical gains the token as a category
    cat = df.assign(health=df.health.astype("category"))
    out, _ = apply_missing(cat, ["health"], "category")
    assert "?" in out.health.cat.categories and not out.health.isna().any()
    # an order that lists the token already keeps it where it is; categories
    # that are not text become text (as every filled column does)
    cat = pd.Series(pd.Categorical(["x", None, "y"], categories=["x", "?", "y"], ordered=True))
    out, _ = apply_missing(pd.DataFrame({"c": cat}), ["c"], "category")
    assert list(out.c) == ["x", "?", "y"] and list(out.c.cat.categories) == ["x", "?", "y"]
    ints = pd.DataFrame({"c": pd.Categorical([1, None, 2])})
    out, _ = apply_missing(ints, ["c"], "category")
    assert list(out.c) == ["1", "?", "2"]
    # booleans with a missing cell become text
    b = pd.DataFrame({"flag": [True, False, None, True]})
    out, _ = apply_missing(b, ["flag"], "category")
    assert list(out.flag) == ["True", "False", "?", "True"]
    # refused: a column of numbers, a column holding the token, a bad token
    num = df.assign(age=df.age.where(df.index % 7 != 3))
    with pytest.raises(InputError, match=r"column 'age': is a column of numbers with 57 missing "
                                         r"value\(s\) \(first at row 4\).*missing='drop'"):
        apply_missing(num, ["age", "health"], "category")
    clash = df.assign(health=df.health.where(df.index != 0, "?"))
    with pytest.raises(InputError, match=r"column 'health': holds the value '\?', which is the "
                                         r"missing-value token.*another missing_token"):
        apply_missing(clash, ["health"], "category")
    with pytest.raises(InputError, match=r"missing_token: got ''"):
        apply_missing(df, ["health"], "category", token="")
    # a token without the category would be ignored: refused, as publish does
    for policy in (None, "error", "drop"):
        with pytest.raises(InputError, match=r"missing_token: is 'NA', which only "
                                             r"missing='category' uses"):
            apply_missing(df, ["health"], policy, token="NA")
    # nothing missing: nothing changes, the record lists no column
    out, rec = apply_missing(df, ["sex"], "category")
    assert out is df and rec["columns"] == {}


def test_msa_publishes_missing_cells_as_a_value_and_the_audit_follows():
    df = survey()
    kw = dict(identifiers=["id"], drop=["age"], seed=SEED)
    with pytest.raises(InputError, match=r"missing='category'"):
        anonymize_msa(df, ["sex", "region"], ["health", "smoker"], 5, 0.3, **kw)
    r = anonymize_msa(df, ["sex", "region"], ["health", "smoker"], 5, 0.3,
                      missing="category", missing_token="NA", **kw)
    assert r.problem.n == len(df)                          # every row published
    rec = r.summary()["missing"]
    assert rec["policy"] == "category" and rec["token"] == "NA"
    assert set(rec["columns"]) == {"region", "health", "smoker"}
    g = r.generalized()
    orig = filled(df, ["region", "health", "smoker"], "NA").iloc[r.order].reset_index(drop=True)
    for sa in ("health", "smoker"):                        # exact SAs: the token where missing
        assert list(g[sa]) == list(orig[sa])
    a = audit_partition(_release(r), df)
    assert a.report.conforms, a.report.checks.query("status == 'fail'")
    checks = a.report.checks.set_index("check")
    assert checks.loc["rows", "status"] == "pass"
    # a declared domain lists the token where it belongs, or is refused
    dom = {"health": ["poor", "fair", "good", "excellent"]}
    with pytest.raises(InputError, match=r"column 'health': has missing cells, published as "
                                         r"'\?'.*do not list it"):
        anonymize_msa(df, ["sex"], ["health"], 5, 0.3, missing="category", domains=dom,
                      identifiers=["id"], drop=["age", "region", "smoker"], seed=SEED)
    dom = {"health": ["?", "poor", "fair", "good", "excellent"]}
    r = anonymize_msa(df, ["sex"], ["health"], 5, 0.5, missing="category", domains=dom,
                      ground={"health": "ordered"}, identifiers=["id"],
                      drop=["age", "region", "smoker"], seed=SEED)
    assert "?" in set(r.generalized()["health"])
    # a column of numbers refuses it
    num = df.assign(age=df.age.where(df.index % 5 != 0))
    with pytest.raises(InputError, match=r"column 'age': is a column of numbers"):
        anonymize_msa(num, ["age", "sex"], ["health"], 5, 0.3, missing="category",
                      identifiers=["id"], drop=["region", "smoker"], seed=SEED)


def test_lgb_publishes_missing_cells_as_a_value():
    df = survey()
    kw = dict(qi=["sex", "region"], sensitive=["health"], k=4, l=2, identifiers=["id"],
              drop=["age", "smoker"], seed=SEED)
    res = lgb(df, missing="category", **kw)
    assert res.n == len(df)
    assert res.metadata["missing"] == {"policy": "category", "token": "?",
                                       "columns": {"region": int(df.region.isna().sum()),
                                                   "health": int(df.health.isna().sum())}}
    sat = res.sat["health"]
    assert (sat["health"] == "?").sum() == df.health.isna().sum()
    a = audit_partition(_release(res), df)
    assert a.report.conforms, a.report.checks.query("status == 'fail'")
    assert a.report.checks.set_index("check").loc["rows", "status"] == "pass"
    # a hierarchy lists the token among its leaves, or is refused
    h = Hierarchy.flat(["east", "north", "south", "west"])
    with pytest.raises(InputError, match=r"column 'region': has missing cells"):
        lgb(df, missing="category", hierarchies={"region": h}, **kw)
    h = Hierarchy.flat(["?", "east", "north", "south", "west"])
    assert lgb(df, missing="category", hierarchies={"region": h}, **kw).n == len(df)


def test_semantic_diversity_publishes_missing_cells_as_a_value(tmp_path):
    df = survey()
    order = ["poor", "fair", "good", "excellent"]
    kw = dict(qids=["sex", "region"], identifiers=["id"], drop=["age", "smoker"], seed=SEED)
    with pytest.raises(InputError, match=r"column 'health': has missing cells, published as "
                                         r"'\?'"):
        semantic_publish(df, "health", 2, 1, domain=order, missing="category", **kw)
    t = semantic_publish(df, "health", 2, 1, domain=["?", *order], missing="category", **kw)
    assert t.n_rows == len(df)
    assert t.schema["health"].missing == "?" and t.schema["region"].missing == "?"
    assert "?" in t.schema["region"].domain and t.schema["sex"].missing is None
    p = tmp_path / "s.parquet"
    t.to_parquet(p)
    for rep in (audit(t, df), audit_file(p, df, chunk_rows=97)):
        assert rep.conforms, rep.checks.query("status == 'fail'")
        assert rep.checks.set_index("check").loc["rows", "status"] == "pass"
    # an ordered Categorical declares the order: the token must be in it
    cat = df.assign(health=pd.Categorical(df.health, categories=order, ordered=True))
    with pytest.raises(InputError, match=r"column 'health': has missing cells"):
        semantic_publish(cat, "health", 2, 1, missing="category", **kw)
    cat = df.assign(health=pd.Categorical(df.health, categories=["?", *order], ordered=True))
    t = semantic_publish(cat, "health", 2, 1, missing="category", **kw)
    assert t.schema["health"].domain == ("?", *order)


@pytest.mark.parametrize("cmd", ["semantic", "lgb", "msa"])
def test_the_cli_publishes_missing_cells_as_a_value_and_says_so(cmd, tmp_path, capsys):
    df = survey()
    src = tmp_path / "survey.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "pub.parquet"
    argv = {"semantic": ["semantic-anonymize", str(src), "-o", str(out), "--sensitive", "health",
                         "--qids", "sex,region", "--identifier", "id", "--drop", "age,smoker",
                         "--l", "2", "--d", "1", "--domain", "NA,poor,fair,good,excellent"],
            "lgb": ["lgb", str(src), "-o", str(out), "--qi", "sex,region", "--sensitive",
                    "health", "--identifier", "id", "--drop", "age,smoker", "--k", "4",
                    "--l", "2"],
            "msa": ["msa-anonymize", str(src), "-o", str(out), "--qi", "sex,region", "--sa",
                    "health,smoker", "--identifier", "id", "--drop", "age", "--k", "5",
                    "--t", "0.3"]}[cmd]
    # the refusal names the category first
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(--missing category)" in err and not out.exists()
    # a token without the category is refused, not ignored
    assert main([*argv, "--missing-token", "NA"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--missing-token 'NA' applies to --missing category" in err
    assert not out.exists()
    assert main([*argv, "--missing", "category", "--missing-token", "NA"]) == 0
    said = capsys.readouterr().out
    assert "missing cells published as the value 'NA' (--missing category): " in said
    if cmd == "semantic":               # sets: the column named, not its count
        assert "(--missing category): health\n" in said or "(--missing category): health;" \
            in said or "(--missing category): health," in said, said
        assert f"health {int(df.health.isna().sum()):,}" not in said
    else:                               # the values are published: so is their count
        assert f"health {int(df.health.isna().sum()):,}" in said
    assert main(["audit", str(out), "--original", str(src)]) == 0
    assert "PASSED" in capsys.readouterr().out
    # the report names it
    assert main(["report", str(out), "-o", str(tmp_path / "r.html"), "--original", str(src),
                 "--no-attack"] if cmd == "semantic" else
                ["report", str(out), "-o", str(tmp_path / "r.html"), "--original", str(src)]) \
        in (0, 1)
    html = (tmp_path / "r.html").read_text()
    assert 'id="missing-category" data-value="NA"' in html
    # a column of numbers with missing cells is refused in one line
    num = df.assign(age=df.age.where(df.index % 9 != 2))
    num.to_csv(src, index=False)
    capsys.readouterr()
    argv2 = {"semantic": ["semantic-anonymize", str(src), "-o", str(out), "--sensitive",
                          "health", "--qids", "sex,age", "--identifier", "id", "--drop",
                          "region,smoker", "--l", "2", "--d", "1", "--domain",
                          "?,poor,fair,good,excellent"],
             "lgb": ["lgb", str(src), "-o", str(out), "--qi", "sex,age", "--sensitive", "health",
                     "--identifier", "id", "--drop", "region,smoker", "--k", "4", "--l", "2"],
             "msa": ["msa-anonymize", str(src), "-o", str(out), "--qi", "sex,age", "--sa",
                     "health", "--identifier", "id", "--drop", "region,smoker", "--k", "5",
                     "--t", "0.3"]}[cmd]
    out.unlink()
    rc = main([*argv2, "--missing", "category"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert "column 'age': is a column of numbers with 45 missing value(s)" in err
    assert not out.exists()


@given(n=st.integers(30, 120), k=st.integers(2, 6), t=st.sampled_from([0.2, 0.4, 0.7]),
       rate=st.sampled_from([0.0, 0.05, 0.3, 0.6]), seed=st.integers(0, 10 ** 6),
       alg=st.sampled_from(["pca", "cluster", "microagg"]))
@settings(max_examples=25, deadline=None)
def test_every_msa_release_with_a_missing_category_is_k_anonymous_and_t_close(n, k, t, rate,
                                                                             seed, alg):
    df = survey(n, seed, rate=rate)
    r = anonymize_msa(df, ["sex", "region"], ["health", "smoker"], k, t, algorithm=alg,
                      missing="category", identifiers=["id"], drop=["age"], seed=seed,
                      research_seed=True)
    g = r.generalized()
    assert len(g) == n and g.groupby("ec").size().min() >= k
    orig = filled(df, ["region", "health", "smoker"]).iloc[r.order].reset_index(drop=True)
    assert list(g["health"]) == list(orig["health"])
    a = audit_partition(_release(r), df)
    assert a.report.conforms, a.report.checks.query("status == 'fail'")
    assert r.t_achieved <= t


@given(n=st.integers(30, 120), k=st.integers(2, 5), rate=st.sampled_from([0.0, 0.1, 0.4]),
       seed=st.integers(0, 10 ** 6))
@settings(max_examples=20, deadline=None)
@pytest.mark.filterwarnings("ignore::anonset.SuppressionWarning")    # suppress=True: named
def test_every_lgb_release_with_a_missing_category_holds_its_model(n, k, rate, seed):
    df = survey(n, seed, rate=rate)
    res = lgb(df, qi=["sex", "region"], sensitive=["smoker"], k=k, l=2, missing="category",
              identifiers=["id"], drop=["age", "health"], seed=seed, research_seed=True,
              suppress=True)
    assert res.n == n
    a = audit_partition(_release(res), df)
    assert a.report.conforms, a.report.checks.query("status == 'fail'")


@pytest.mark.parametrize("method", ["mondrian", "anatomy", "tp", "rating"])
def test_the_baselines_take_the_same_missing_category(method):
    """The papers' baselines (Mondrian, Anatomy, TP, Rating) refused a
    missing cell with "declare a category for missing values", a parameter
    none of them had (Rating named missing='category' and then refused it as
    an unexpected keyword).  They take the same policy now, so a comparison
    runs on the same survey rows."""
    from anonset.partition.baselines import anatomy, mondrian, tp
    from anonset.partition.baselines.rating import rating
    df = survey(600, 3)
    n_health = int(df.health.isna().sum())
    if method == "rating":
        run = lambda **kw: rating(df, attributes=["health", "smoker"], l=2,   # noqa: E731
                                  drop=["id", "sex", "region", "age"], seed=SEED, **kw)
    else:
        f = {"mondrian": mondrian, "anatomy": anatomy, "tp": tp}[method]
        run = lambda **kw: f(df, qids=["sex", "region"], sensitive="health", l=2,  # noqa: E731
                             drop=["id", "smoker", "age"], seed=SEED, **kw)
    with pytest.raises(InputError, match=r"missing='category'"):
        run()
    rel = run(missing="category", missing_token="NA")
    assert rel.check()["ok"]
    rec = rel.info["missing"]
    assert rec["policy"] == "category" and rec["token"] == "NA"
    assert rec["columns"]["health"] == n_health
    if method == "rating":
        assert "NA" in rel.domains["health"]
        with pytest.raises(InputError, match=r"missing: got 'drop'"):
            run(missing="drop")           # Rating keeps every row, as paper 000 does
        with pytest.raises(InputError, match=r"missing_token: is 'NA', which only"):
            run(missing_token="NA")       # it would be ignored
        return
    assert "NA" in rel.domains["health"] and "NA" in rel.domains["region"]
    held = (rel.st["health"] if rel.st is not None else rel.table["health"]).astype(str)
    assert (held == "NA").sum() == n_health
    # a declared domain lists the token, or is refused
    order = ["poor", "fair", "good", "excellent"]
    with pytest.raises(InputError, match=r"column 'health': has missing cells"):
        run(missing="category", domains={"health": order})
    assert run(missing="category", missing_token="NA",
               domains={"health": ["NA", *order]}).check()["ok"]
    # drop leaves the rows out and says how many
    rel = run(missing="drop")
    assert rel.info["missing"]["policy"] == "drop"
    assert rel.check()["ok"] and len(rel.scodes) == len(df) - rel.info["missing"]["rows"]


def test_typed_columns_with_missing_cells_publish_and_audit_alike(tmp_path):
    """A Parquet survey's nullable booleans and categories: filling a
    nullable boolean was a pandas TypeError (msa, lgb, semantic), and the
    audit of a semantic release compared the original's booleans with the
    published text ('False' is not False), in memory, in chunks, and from
    a CSV original."""
    from anonset.validate import as_published
    df = survey(400, 5)
    df["smoker"] = df["smoker"].astype("category")
    df["insured"] = pd.array([None if i % 13 == 0 else bool(i % 3) for i in range(len(df))],
                             dtype="boolean")
    src = tmp_path / "s.parquet"
    df.to_parquet(src)
    df = pd.read_parquet(src)
    t = semantic_publish(df, "health", 2, 1, qids=["sex", "insured"], identifiers=["id"],
                         drop=["age", "smoker", "region"],
                         domain=["?", "poor", "fair", "good", "excellent"], missing="category",
                         seed=SEED)
    assert set(t.schema["insured"].domain) == {"False", "True", "?"}
    p = tmp_path / "t.parquet"
    t.to_parquet(p)
    df.to_csv(tmp_path / "s.csv", index=False)
    for rep in (audit(t, df), audit_file(p, df, chunk_rows=37), audit_file(p, src, chunk_rows=37),
                audit_file(p, tmp_path / "s.csv", chunk_rows=37)):
        assert rep.conforms, rep.checks.query("status == 'fail'")
    # as_published: every chunk as the release has it, missing cells or not
    chunk = df.iloc[1:13]                       # no missing 'insured' here
    assert not chunk["insured"].isna().any()
    out = as_published(chunk, t.info["missing"])
    assert set(out["insured"]) <= {"True", "False"} and out["sex"].equals(chunk["sex"])
    r = anonymize_msa(df, ["sex", "insured"], ["smoker"], 5, 0.5, missing="category",
                      identifiers=["id"], drop=["age", "region", "health"], seed=SEED)
    assert set(r.generalized()["smoker"]) >= {"?"}
    res = lgb(df, qi=["insured", "sex"], sensitive=["smoker"], k=4, l=2, missing="category",
              identifiers=["id"], drop=["age", "region", "health"], seed=SEED)
    for rel in (r, res):
        assert audit_partition(_release(rel), df).report.conforms


def test_anonymize_records_its_missing_cells_alike_in_memory_streamed_and_on_dask(
        tmp_path, capsys):
    # the summary, the report and the audit name the columns whose missing
    # cells the token stands for, with their counts, on every path; the
    # random sets keep the columns' types, so the audit compares the
    # original as it is (not made text as a partition release's is)
    import anonset
    from anonset.audit.report import Options
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"vote": rng.choice([0.0, 1.0, np.nan], n),
                       "ideo": rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], n),
                       "race": rng.choice(["a", "b", "c", None], n),
                       "state": rng.choice(["x", "y"], n)})
    # named, not counted: a sensitive column's count of missing cells is a
    # count of one of its values (two releases apart by one person tell
    # whether that person's is missing)
    want = {"policy": "category", "token": "?", "as_text": False, "columns": ["vote", "race"]}
    kw = dict(sensitive=["vote", "ideo", "race"], exact=["state"], missing="category")
    pub = anonset.publish(df, anonset.Diversity(2), **kw)
    assert pub.info["missing"] == want
    assert Options.resolve(pub).category is None          # compared as it is
    assert "published as &#x27;?&#x27;: vote, race" in pub._repr_html_()
    assert audit(pub, df).conforms
    src = tmp_path / "in.parquet"
    df.to_parquet(src)
    out = tmp_path / "out.parquet"
    anonset.stream.publish_file(src, out, anonset.Diversity(2), chunk_rows=97, **kw)
    streamed = anonset.read_parquet(out)
    assert streamed.info["missing"] == want
    assert audit_file(out, src).conforms
    dd = pytest.importorskip("dask.dataframe")
    lazy = anonset.dask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2), **kw)
    assert lazy.info["missing"] == want
    df.to_csv(tmp_path / "in.csv", index=False)
    capsys.readouterr()
    assert main(["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "c.parquet"),
                 "--sensitive", "vote,ideo,race", "--exact", "state", "--l", "2",
                 "--missing", "category"]) == 0
    line = "missing cells published as the value '?' (--missing category): vote, race"
    assert line in capsys.readouterr().out
    assert main(["audit", str(tmp_path / "c.parquet"), "--original",
                 str(tmp_path / "in.csv")]) == 0


def test_a_value_outside_a_hierarchy_is_named_by_its_own_row_after_missing_cells():
    """A column whose hierarchy has no leaf for the missing token was checked
    without its missing cells, so a later value outside the hierarchy was
    named by a row shifted by the number of missing cells before it."""
    import numpy as np
    import pandas as pd

    import anonset
    from anonset.hierarchy import Hierarchy
    h = Hierarchy([[v, "g1" if v in "abc" else "g2", "*"] for v in "abcdef"])
    job = list("abcdef") * 4
    job[2] = job[5] = None                   # two missing cells first
    job[10] = "zz"                           # row 11
    df = pd.DataFrame({"job": job, "x": np.arange(24) % 3})
    with pytest.raises(anonset.InputError, match=r"value 'zz' at row 11 is not in the domain"):
        anonset.publish(df, anonset.Diversity(2), sensitive=["job"], drop=["x"],
                        hierarchies={"job": h}, missing="category")
