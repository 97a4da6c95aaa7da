"""What reconstruction accepts (H47): a release whose parameters contradict
its own model, metadata numbers written as text, a model that is no
mapping, eq. 17's counts of another table, and a Dask reconstruction given
something other than a Dask release.  Each gave an estimate of another
table marked converged, a traceback, or an error that blamed the sets;
each is now refused with one line naming the field or parameter, and
nothing is written."""
from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset.cli import main as cli_main
from anonset.validate import InputError

SEED = "c5e0a8d2f47b9136e1a2b3c4d5e6f708"
JOBS = list("abcdef")


def _table(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"job": rng.choice(JOBS, n, p=[.3, .2, .15, .15, .1, .1]),
                         "sex": rng.choice(["f", "m"], n)})


def _release(df, l=3, seed=SEED):
    return anonset.publish(df, anonset.Diversity(l), sensitive=["job"], exact=["sex"],
                           domains={"job": JOBS}, seed=seed)


def _edited(tmp_path, edit, name="t.csv"):
    """The release as CSV, its metadata edited by ``edit(meta)``."""
    pub = _release(_table())
    pub.to_csv(tmp_path / "pub.csv")
    meta = json.loads((tmp_path / "pub.csv.anonset.json").read_text())
    edit(meta)
    shutil.copy(tmp_path / "pub.csv", tmp_path / name)
    (tmp_path / f"{name}.anonset.json").write_text(json.dumps(meta))
    return tmp_path / name


def _cli_line(capsys, path, *more):
    capsys.readouterr()
    code = cli_main(["reconstruct", str(path), "--attributes", "job", *more])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, (code, err)
    return err[0]


def test_parameters_that_contradict_the_model_are_refused(tmp_path, capsys):
    """l-diversity publishes with p = 1; a file that says p = 0.5 beside it
    gave a converged estimate of another table.  Refused on every path;
    the audit still reads it and fails it."""
    def half(meta):
        meta["params"]["job"]["p"] = 0.5
    path = _edited(tmp_path, half)
    with pytest.raises(InputError) as e:
        anonset.stream.reconstruct_file(path, ["job"])
    said = str(e.value)
    assert said.startswith(f"{str(path)!r}: column 'job': has p = 0.5 in its parameters, but "
                           "its model (frequency-diversity) publishes with p = 1"), said
    assert "\n" not in said
    with pytest.raises(InputError, match=r"column 'job': has p = 0.5 .* publishes with p = 1"):
        anonset.stream.reconstruct_file(path, ["job"], method="exact_em", chunk_rows=100)
    line = _cli_line(capsys, path)
    assert "column 'job': has p = 0.5 in its parameters" in line, line
    # in memory: a SetTable whose parameters were replaced
    pub = _release(_table())
    from dataclasses import replace
    pub.params["job"] = replace(pub.params["job"], p=0.5)
    with pytest.raises(InputError, match=r"^table: column 'job': has p = 0.5"):
        anonset.reconstruct(pub, ["job"])
    # the audit is where a broken release is named: it reads it and fails it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not anonset.audit_file(path).conforms
    # a release as written is reconstructed as before
    ok = anonset.stream.reconstruct_file(tmp_path / "pub.csv", ["job"])
    assert ok.total == pytest.approx(600)


@pytest.mark.parametrize("field, value, words", [
    ("p", "0.5", r"metadata field 'params.job.p' is '0.5'; expected a number"),
    ("eta", 2.5, r"metadata field 'params.job.eta' is 2.5; expected an integer"),
    ("eta", True, r"metadata field 'params.job.eta' is True; expected an integer"),
    ("d", "6", r"metadata field 'params.job.d' is '6'; expected an integer"),
])
def test_metadata_numbers_are_json_numbers(tmp_path, capsys, field, value, words):
    """'0.5' as text was read as 0.5, an eta of 2.5 as 2 (and the error then
    blamed the sets): the field is named."""
    def edit(meta):
        meta["params"]["job"][field] = value
    path = _edited(tmp_path, edit)
    for read in (anonset.read_csv, lambda p: anonset.stream.reconstruct_file(p, ["job"]),
                 anonset.audit_file):
        with pytest.raises(InputError, match=words):
            read(path)
    assert "t.csv.anonset.json" in _cli_line(capsys, path)


@pytest.mark.parametrize("model", [5, "diversity", [1, 2]])
def test_a_model_that_is_no_mapping_is_named(tmp_path, capsys, model):
    """A model of 5 raised a TypeError (a traceback on the command line); a
    model of 'diversity' a line that named neither the file nor the field."""
    def edit(meta):
        meta["model"] = model
    path = _edited(tmp_path, edit)
    for read in (anonset.read_csv, lambda p: anonset.stream.reconstruct_file(p, ["job"]),
                 anonset.audit_file):
        with pytest.raises(InputError, match=r"t.csv.anonset.json': metadata field 'model' is "
                                             r".*; expected a mapping \(the privacy model\)"):
            read(path)
    line = _cli_line(capsys, path)
    assert "metadata field 'model'" in line and "Traceback" not in line, line


def test_w_must_be_this_table_s_counts():
    """Counts of another release (100 rows) gave a 'converged' total of 100
    for a table of 600; negative, zero, NaN and text counts gave zeros, NaN
    or a bare NumPy error."""
    df = _table()
    pub = _release(df)
    other = _release(df.iloc[:100], seed="9a8b7c6d5e4f30211f2e3d4c5b6a7988")
    own = anonset.count_w(pub, ["job"])
    assert own.sum() == 600 * 3
    for method in ("em", "value_adding"):
        want = anonset.reconstruct(pub, ["job"], method)
        got = anonset.reconstruct(pub, ["job"], method, w=own)
        assert np.array_equal(got.counts, want.counts)
        for w, words in ((anonset.count_w(other, ["job"]),
                          r"sums to 300, but this table's 600 records' product sets hold 1,800 "
                          r"cells \(600 x 3\)"),
                         (-own, "holds a count that is negative, fractional or not a number"),
                         (np.zeros(6), "sums to 0"),
                         (np.full(6, np.nan), "holds a count .* not a number"),
                         (own + 0.5, "holds a count .*fractional"),
                         (np.array(list("abcdef")), r"holds <U1 values"),
                         (own > 0, "holds bool values")):
            with pytest.raises(InputError, match=r"^w: " + words):
                anonset.reconstruct(pub, ["job"], method, w=w)


def test_a_dask_reconstruction_names_what_it_takes(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    from anonset import dask as adask
    df = _table()
    pub = _release(df)
    pub.to_parquet(tmp_path / "p.parquet")
    for arg, kind in ((pub, "SetTable"), (dd.from_pandas(df, npartitions=2), "DataFrame"),
                      (str(tmp_path / "p.parquet"), "str")):
        with pytest.raises(InputError, match=rf"^pub: got a {kind}; expected a DaskSetTable "
                                             r"\(anonset.dask.publish's result\)"):
            adask.reconstruct(arg, ["job"])
    lazy = adask.publish(dd.from_pandas(df, npartitions=2), anonset.Diversity(3),
                         sensitive=["job"], exact=["sex"], domains={"job": JOBS}, seed=SEED)
    assert adask.reconstruct(lazy, ["job"], scheduler="sync").total == pytest.approx(600)


def test_a_release_of_no_rows_is_refused_alike_by_every_method_and_path(tmp_path, capsys):
    """exact_em returned NaN counts marked converged, em zeros, a file a bare
    'no rows'; the audit a numpy reshape error (H88)."""
    pub = _release(_table())
    empty = pub.take(np.zeros(pub.n_rows, dtype=bool))
    for method in ("em", "exact_em", "value_adding", "random"):
        with pytest.raises(InputError, match="^table: has no rows; expected a release"):
            anonset.reconstruct(empty, ["job"], method)
    with pytest.raises(InputError, match="^table: has no rows; expected a release with at "
                                         "least one row to audit"):
        anonset.audit(empty)
    path = tmp_path / "empty.csv"
    empty.to_csv(path)
    for method in ("em", "exact_em"):
        assert _cli_line(capsys, path, "--method", method).endswith(
            "empty.csv': has no rows; expected a release with at least one row to estimate "
            "from")
    with pytest.raises(InputError, match="empty.csv': has no rows"):
        anonset.stream.reconstruct_file(path, ["job"])
    for argv in (["audit", str(path)], ["report", str(path), "-o", str(tmp_path / "r.html")]):
        capsys.readouterr()
        assert cli_main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("empty.csv': has no rows; expected a release with at least one row "
                            "to audit") and "\n" not in err, err
    assert not (tmp_path / "r.html").exists()
    from anonset import semantic as S
    rng = np.random.default_rng(0)
    sem = S.semantic_publish(pd.DataFrame({"q": rng.choice(list("ab"), 300),
                                           "age": rng.integers(20, 40, 300)}),
                             "age", l=2, d=1, qids=["q"], seed=SEED)
    sem = sem.take(np.zeros(sem.n_rows, dtype=bool))
    with pytest.raises(InputError, match="^table: has no rows"):
        S.analyze(sem, ["q"])
    sem.to_csv(tmp_path / "sem.csv")
    capsys.readouterr()
    assert cli_main(["semantic-analyze", str(tmp_path / "sem.csv"), "--qids", "q"]) == 2
    assert capsys.readouterr().err.strip().endswith("sem.csv': has no rows; expected a release "
                                                    "with at least one row to estimate from")


def test_an_attribute_named_count_and_a_numeric_domain_with_the_token(tmp_path, capsys):
    """An attribute named 'count' could not be cross-tabulated (pandas:
    'cannot insert count, already exists'); a numeric column published with
    the missing-value token failed pyarrow in -o OUT.parquet after the whole
    reconstruction; an unknown attribute was named in the CLI's own words
    (H88)."""
    rng = np.random.default_rng(1)
    n = 800
    score = pd.Series(rng.integers(1, 5, n)).astype("Int64")
    score[:40] = pd.NA
    df = pd.DataFrame({"count": rng.choice(list("abcde"), n), "score": score})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["count", "score"],
                          domains={"count": list("abcde"), "score": [1, 2, 3, 4]},
                          missing="category", seed=SEED)
    frame = anonset.reconstruct(pub, ["count", "score"]).to_frame()
    assert list(frame.columns) == ["count", "score", "count_"]
    assert frame["count_"].sum() == pytest.approx(n)
    pub.to_parquet(tmp_path / "p.parquet")
    out = tmp_path / "ct.parquet"
    assert cli_main(["reconstruct", str(tmp_path / "p.parquet"), "--attributes", "count,score",
                     "-o", str(out)]) == 0, capsys.readouterr().err
    back = pd.read_parquet(out)
    assert list(back.columns) == ["count", "score", "count_"]
    assert set(back["score"]) == {"1", "2", "3", "4", "?"}
    assert np.allclose(back["count_"], frame["count_"])
    with pytest.raises(InputError) as api:
        anonset.reconstruct(pub, ["nope"])
    capsys.readouterr()
    assert cli_main(["reconstruct", str(tmp_path / "p.parquet"), "--attributes", "nope"]) == 2
    assert capsys.readouterr().err.strip().endswith("error: --" + str(api.value))


def test_a_partition_release_of_no_rows_is_refused_by_audit_and_report(tmp_path, capsys):
    """A bare numpy error ('zero-size array to reduction operation') named
    no file (H102); refused as a set table of no rows is."""
    rng = np.random.default_rng(0)
    n = 300
    pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.choice(list("abc"), n),
                  "dis": rng.choice(list("uvwxyz"), n)}).to_csv(tmp_path / "in.csv", index=False)
    assert cli_main(["msa-anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "m.csv"),
                     "--qi", "age,zip", "--sa", "dis", "--k", "5", "--t", "0.5",
                     "--seed", SEED]) == 0
    head = (tmp_path / "m.csv").read_text().splitlines()[0]
    (tmp_path / "m.csv").write_text(head + "\n")
    for argv in (["audit", str(tmp_path / "m.csv")],
                 ["report", str(tmp_path / "m.csv"), "-o", str(tmp_path / "r.html")]):
        capsys.readouterr()
        assert cli_main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("m.csv': has no rows; expected a release with at least one row to "
                            "audit") and "\n" not in err, err
