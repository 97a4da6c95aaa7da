"""missing='drop' (--missing drop) for the publishers without a missing
category: semantic diversity (paper 001), LGB (paper 002) and msa (paper
003).  Survey data has unanswered questions; by default a missing cell is
refused, and 'drop' leaves its row out, which the metadata records, the
summary and the audit name (absence from the release tells that a person
left a published column unanswered), and the audit's and the report's
comparisons with the original leave out too."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from anonset.audit import audit, audit_file
from anonset.audit.partition import audit_partition
from anonset.cli import main
from anonset.partition.lgb import lgb
from anonset.msa import anonymize_msa
from anonset.randomized.semantic import semantic_publish
from anonset.validate import InputError, apply_missing

SEED = "missing-drop-test-key-0123456789"


def survey(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A survey whose answers are missing now and then (at known rows)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"id": np.arange(n),
                       "age": rng.integers(14, 19, n).astype(float),
                       "sex": rng.choice(["f", "m"], n),
                       "tv": rng.integers(0, 6, n).astype(float),
                       "score": rng.integers(0, 11, n).astype(float)})
    df.loc[rng.choice(n, 30, replace=False), "score"] = np.nan
    df.loc[rng.choice(n, 12, replace=False), "age"] = np.nan
    return df


def gone(df, cols) -> np.ndarray:
    return df[cols].isna().any(axis=1).to_numpy()


def test_drop_missing_counts_and_refuses_what_it_must():
    df = survey()
    kept, rec = apply_missing(df, ["age", "score"], "drop")
    g = gone(df, ["age", "score"])
    assert len(kept) == len(df) - g.sum() and not kept[["age", "score"]].isna().any().any()
    assert rec == {"policy": "drop", "rows": int(g.sum()),
                   "columns": {"age": 12, "score": 30}}
    assert list(kept["id"]) == list(df["id"][~g])               # the rows kept, in order
    # the default refuses, naming the remedy
    with pytest.raises(InputError, match=r"column 'score': has 30 missing value\(s\).*"
                                         r"missing='drop' to leave those rows out"):
        apply_missing(df, ["score", "age"], None)
    with pytest.raises(InputError, match=r"missing: got 'impute'; expected one of error, "
                                         r"category, drop"):
        apply_missing(df, ["score"], "impute")
    with pytest.raises(InputError, match=r"every one of its 3 rows has a missing value in 'a'"):
        apply_missing(pd.DataFrame({"a": [np.nan] * 3}), ["a"], "drop")
    # nothing missing: nothing left out, and the record says 0
    assert apply_missing(df, ["sex"], "drop")[1]["rows"] == 0


def test_semantic_diversity_leaves_the_rows_out_and_the_audit_follows(tmp_path):
    df = survey()
    kw = dict(qids=["sex", "age"], identifiers=["id"], drop=["tv"], domain=list(range(11)),
              seed=SEED)
    with pytest.raises(InputError, match="missing='drop'"):
        semantic_publish(df, "score", 3, 2, **kw)
    t = semantic_publish(df, "score", 3, 2, missing="drop", **kw)
    g = gone(df, ["score", "sex", "age"])
    assert t.n_rows == len(df) - g.sum()
    rec = t.info["missing"]
    assert rec == {"policy": "drop", "rows": int(g.sum()), "columns": {"score": 30, "age": 12}}
    # the audit with the original compares the rows kept (it failed 'rows'
    # and refused policy 'drop' before), and names the rows left out
    for rep in (audit(t, df), audit_file(_written(t, tmp_path), df, chunk_rows=97)):
        assert rep.conforms, rep.checks.query("status == 'fail'")
        rows = rep.checks.set_index("check")
        assert rows.loc["rows", "status"] == "pass"
        miss = rep.checks.query("check == 'missing'")
        assert list(miss.status) == ["warn"] and miss.value.iloc[0] == g.sum()
        assert "left one of those columns unanswered" in miss.message.iloc[0]
    # the release report's true counts leave the same rows out
    from anonset.audit.html import report
    page = report(_written(t, tmp_path), tmp_path / "r.html", original=df,
                  pairs=[("sex", "score")], attack=False)
    html = (tmp_path / "r.html").read_text()
    assert "row(s) with a missing value left out" in html
    assert re.search(r'id="rows-left-out" data-value="%d"' % g.sum(), html), \
        re.findall(r'<[^>]*rows-left-out[^>]*>', html)
    assert page is not None


def _written(t, tmp_path):
    p = tmp_path / "sem.parquet"
    if not p.exists():
        t.to_parquet(p)
    return p


def test_lgb_drops_the_rows_and_their_flags_together():
    df = survey()
    g = gone(df, ["age", "score", "sex", "tv"])
    # every row left out is flagged, every row kept is not: the flags of
    # the rows kept must be the ones that follow them (none flagged)
    flags = g.reshape(-1, 1)
    kw = dict(qi=["age", "sex"], semi_sensitive=["tv"], sensitive=["score"], k=4, l=2,
              identifiers=["id"], seed=SEED, flags=flags)
    with pytest.raises(InputError, match="missing='drop'"):
        lgb(df, **kw)
    res = lgb(df, missing="drop", **kw)
    assert res.n == len(df) - g.sum()
    assert res.metadata["missing"]["rows"] == g.sum()
    j = list(res.attributes).index("tv")
    assert res.qi_mask.shape[0] == res.n and res.qi_mask[:, j].all()
    a = audit_partition(_release(res), df)
    checks = a.report.checks.set_index("check")
    assert checks.loc["rows", "status"] == "pass"
    assert checks.loc["missing", "status"] == "warn"


def _release(res):
    from anonset.audit.html.release import _from_object
    return _from_object(res)


def test_msa_drops_the_rows_and_the_audit_follows():
    df = survey()
    g = gone(df, ["age", "sex", "score", "tv"])
    kw = dict(identifiers=["id"], seed=SEED)
    with pytest.raises(InputError, match="missing='drop'"):
        anonymize_msa(df, ["age", "sex"], ["score", "tv"], 5, 0.3, **kw)
    r = anonymize_msa(df, ["age", "sex"], ["score", "tv"], 5, 0.3, missing="drop", **kw)
    assert r.problem.n == len(df) - g.sum()
    assert r.summary()["missing"] == {"policy": "drop", "rows": int(g.sum()),
                                      "columns": {"age": 12, "score": 30}}
    a = audit_partition(_release(r), df)
    checks = a.report.checks.set_index("check")
    assert checks.loc["rows", "status"] == "pass"
    assert checks.loc["missing", "status"] == "warn"


@pytest.mark.parametrize("cmd", ["semantic", "lgb", "msa"])
def test_the_cli_refuses_then_drops_and_says_so(cmd, tmp_path, capsys):
    df = survey()
    src = tmp_path / "survey.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "pub.parquet"
    argv = {"semantic": ["semantic-anonymize", str(src), "-o", str(out), "--sensitive", "score",
                         "--qids", "sex,age", "--identifier", "id", "--drop", "tv", "--l", "3",
                         "--d", "2", "--domain", ",".join(str(float(v)) for v in range(11))],
            "lgb": ["lgb", str(src), "-o", str(out), "--qi", "age,sex", "--sensitive",
                    "score", "--identifier", "id", "--drop", "tv", "--k", "4", "--l", "2"],
            "msa": ["msa-anonymize", str(src), "-o", str(out), "--qi", "age,sex", "--sa",
                    "score", "--identifier", "id", "--drop", "tv", "--k", "5", "--t", "0.3"]}[cmd]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert ("survey.csv': column 'age': has 12 missing value(s)" in err
            or "survey.csv': column 'score': has 30 missing value(s)" in err), err
    assert "--missing drop to leave those rows out" in err and not out.exists()
    assert main([*argv, "--missing", "drop"]) == 0
    said = capsys.readouterr().out
    n = int(gone(df, ["age", "score"]).sum())
    assert f"{n} row(s) with a missing value left out (--missing drop; missing cells: " in said
    assert main(["audit", str(out), "--original", str(src)]) == 0
    said = capsys.readouterr().out
    assert "PASSED" in said and f"missing: {n} row(s) with a missing value left out" in said
    # a partition release's audit runs its attack every time (its rows are
    # in the table): the verdict must not say it was not run
    head = said.split("\n\n")[0]
    assert ("not run: the attack simulation" in head) == (cmd == "semantic"), said


@pytest.mark.parametrize("cmd", ["semantic", "lgb", "msa"])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_drop_of_every_row_is_refused_naming_the_file(cmd, fmt, tmp_path, capsys):
    # --missing drop over a column missing in every row leaves nothing to
    # publish: the one line names the input file, CSV and Parquet alike
    df = survey().dropna().reset_index(drop=True).assign(tv=None)
    src = tmp_path / f"survey.{fmt}"
    df.to_csv(src, index=False) if fmt == "csv" else df.to_parquet(src)
    out = tmp_path / "pub.parquet"
    argv = {"semantic": ["semantic-anonymize", "--sensitive", "tv", "--drop", "age,sex,score",
                         "--l", "2", "--d", "1"],
            "lgb": ["lgb", "--qi", "age,sex,tv", "--sensitive", "score", "--drop", "id",
                    "--k", "4", "--l", "2"],
            "msa": ["msa-anonymize", "--qi", "age,sex,tv", "--sa", "score", "--drop", "id",
                    "--k", "5", "--t", "0.3"]}[cmd]
    if cmd == "semantic":
        argv += ["--identifier", "id"]
    assert main([argv[0], str(src), "-o", str(out), *argv[1:], "--missing", "drop"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.endswith(f"error: {str(src)!r}: --missing: every one of its {len(df)} rows has "
                         "a missing value in 'tv'; expected rows with a value in every "
                         "published column"), line
    assert "\n" not in line and not out.exists()


def test_paper_000s_publishing_refuses_drop_and_names_category(tmp_path, capsys):
    """`--missing drop`, which the partition commands take, reached
    `anonymize` as argparse's "invalid choice" without a word of why: paper
    000's publishing keeps every row (a missing cell is a value inside its
    random set), so dropping is refused with the reason and the remedy, in
    Python, on Dask and on the command line alike."""
    import anonset
    from anonset import dask as adask
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame({"vote": ["y", "n", None, "y", "n", "a"] * 10,
                       "sex": ["f", "m"] * 30})
    kw = dict(sensitive=["vote"], exact=["sex"], missing="drop")
    want = (r"missing: 'drop' leaves rows out of the release, which tells who left a question "
            r"unanswered; paper 000's publishing keeps every row; expected missing='category'")
    with pytest.raises(anonset.InputError, match=want):
        anonset.publish(df, anonset.Diversity(2), **kw)
    with pytest.raises(anonset.InputError, match=want):
        adask.publish(dd.from_pandas(df, npartitions=2), anonset.Diversity(2), **kw)
    df.to_csv(tmp_path / "v.csv", index=False)
    capsys.readouterr()
    assert main(["anonymize", str(tmp_path / "v.csv"), "-o", str(tmp_path / "o.parquet"),
                 "--sensitive", "vote", "--exact", "sex", "--l", "2", "--missing", "drop"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--missing: 'drop' leaves rows out" in err
    assert err.rstrip().endswith("expected --missing category (a missing cell published as a "
                                 "value of its own, inside the random sets like any other)")
    assert not (tmp_path / "o.parquet").exists()
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["vote"], exact=["sex"],
                          missing="category")
    assert pub.n_rows == len(df)
