"""Columns published as they are across the releases of a persistent-key
series.

Under a persistent key a record keeps its sets from release to release, so
the sets link each record's rows across the series (H36: the same sets
linked 100 % of the rows of two releases).  A column one release published
as it is and a column another release published as it is then sit on one
row for whoever holds both files: an admission date in the first release
and a discharge date in the second gave every patient's stay, which both
releases published only as sets (84.6 % of the rows pinned, H36), while
each release alone passed every check.  A later release therefore reads
the series' earlier columns beside its own (the metadata's
``series_releases`` says which), refuses what it cannot measure, and
refuses a column the series published as sets that it would publish as it
is.  Each refusal is one line naming the column, on every path, and the
user may name the risk (``allow_recode``), which the metadata and the
audit then name."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset.cli import main as cli_main
from anonset.io.keys import new_key_file
from anonset.stream import publish_file
from anonset.validate import InputError

DOMAINS = {"stay": list(range(1, 21)), "ward": list("ABCDE")}


def _stays(n=3000, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    admit = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 300, n), unit="D")
    stay = rng.integers(1, 21, n)
    return pd.DataFrame({"pid": np.arange(n), "stay": stay,
                         "ward": rng.choice(list("ABCDE"), n),
                         "admit": admit.strftime("%Y-%m-%d"),
                         "discharge": (admit + pd.to_timedelta(stay, unit="D"))
                         .strftime("%Y-%m-%d"),
                         "clinic": rng.choice(list("pqrs"), n)})


@pytest.fixture
def series(tmp_path):
    """The stays, a key file, the keywords of every release, and release 1
    (the admission date passed through), in memory and from its file."""
    key = tmp_path / "series.key"
    new_key_file(key)
    df = _stays()
    kw = dict(identifiers=["pid"], record_id="pid", key_file=key, domains=DOMAINS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(df, anonset.Diversity(3), sensitive=["stay", "ward"],
                             other=["admit"], drop=["discharge", "clinic"],
                             first_in_series=True, **kw)
    r1.to_parquet(tmp_path / "r1.parquet")
    return df, kw, r1, anonset.read_parquet(tmp_path / "r1.parquet")


def _release(df, kw, prior, **roles):
    return anonset.publish(df, anonset.Diversity(3), sensitive=["stay", "ward"], params=prior,
                           **kw, **roles)


def test_release_one_records_what_it_published(series):
    df, kw, r1, back = series
    assert r1.info["series_releases"] == [{"as_is": ["admit"], "sensitive": ["stay", "ward"],
                                           "read": []}]
    assert back.info["series_releases"] == r1.info["series_releases"]


@pytest.mark.parametrize("prior", ["memory", "file"])
def test_a_column_read_beside_an_earlier_release_s_column_is_refused(series, prior):
    """Release 2 passes the discharge date through; release 1 passed the
    admission date: the two give the stay.  Refused, naming the earlier
    column, and the remedy is about this release's column."""
    df, kw, r1, back = series
    p = r1 if prior == "memory" else back
    with pytest.raises(InputError, match=r"column 'discharge': together with column 'admit', "
                                         r"gives 'stay' by a rule .*\('admit' was published by "
                                         r"an earlier release of the series.*expected "
                                         r"'discharge' left out of this release.*"
                                         r"allow_recode=\['discharge', 'admit'\]"):
        _release(df, kw, p, other=["discharge"], drop=["admit", "clinic"])
    # the same release without a series (a fresh key) links nothing: published
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anonset.publish(df, anonset.Diversity(3), sensitive=["stay", "ward"],
                        other=["discharge"], drop=["admit", "clinic"], identifiers=["pid"],
                        domains=DOMAINS)


def test_a_column_the_input_lacks_is_refused_unless_named(series):
    """Without the admission date in the input, whether it and the discharge
    date give a value away cannot be measured: refused, saying how to read
    it (dropped) or to name the risk."""
    df, kw, r1, back = series
    lacking = df.drop(columns=["admit"])
    with pytest.raises(InputError, match=r"column 'admit': was published as it is by a release "
                                         r"of the series .* is not a column of this input: "
                                         r"whether it and 'discharge', published here as it "
                                         r"is, give a value away together cannot be measured"
                                         r".*drop=\['admit'\].*allow_recode=\['admit'\]"):
        _release(lacking, kw, back, other=["discharge"], drop=["clinic"])
    # named, it is published, and the metadata records the release's columns
    r2 = _release(lacking, kw, back, other=["discharge"], drop=["clinic"],
                  allow_recode=["admit"])
    assert r2.info["series_releases"][-1] == {"as_is": ["discharge"],
                                              "sensitive": ["stay", "ward"], "read": []}
    # the stay's sets again, without the admission date: a wave's stays
    # may differ, and beside the admission date their new sets cannot be
    # measured (H40): refused too, or named
    with pytest.raises(InputError, match=r"column 'admit': .*whether it and 'stay', published "
                                         r"here as random sets"):
        _release(lacking.drop(columns=["discharge"]), kw, back, drop=["clinic"])
    r3 = _release(lacking.drop(columns=["discharge"]), kw, back, drop=["clinic"],
                  allow_recode=["admit"])
    assert r3.info["series_releases"][-1]["as_is"] == []


def test_named_risk_is_published_and_named_by_metadata_and_audit(series):
    df, kw, r1, back = series
    r2 = _release(df, kw, back, other=["discharge"], drop=["admit", "clinic"],
                  allow_recode=["discharge", "admit"])
    risks = [f for f in r2.info["pass_through_risks"] if f.get("series")]
    assert len(risks) == 1 and risks[0]["series"] == ["admit"] and risks[0]["allowed"]
    assert risks[0]["sensitive"] == "stay" and "rule" in risks[0]
    assert r2.info["series_releases"] == [
        {"as_is": ["admit"], "sensitive": ["stay", "ward"], "read": []},
        {"as_is": ["discharge"], "sensitive": ["stay", "ward"], "read": ["admit"]}]
    from anonset.cli.args import recodes_text
    assert recodes_text(r2.info) == ("discharge+admit -> stay (lambda 1.00; admit from an "
                                     "earlier release of the series)")
    rows = anonset.audit(r2).checks.query("check == 'recode'")
    assert any("admit: published by an earlier release of the series" in m
               and "allow_recode" in m for m in rows.message)
    # release 3, given release 2, without the admission date: what release
    # 2 measured on its own input is measured again on this one (a panel's
    # values change, H40), so the admission date is needed, or named
    lacking = df.drop(columns=["admit"])
    with pytest.raises(InputError, match=r"column 'admit': was published as it is by a release "
                                         r"of the series \(the earlier release or one before "
                                         r"it\) and is not a column of this input"):
        _release(lacking, kw, r2, other=["discharge"], drop=["clinic"],
                 allow_recode=["discharge"])
    r3 = _release(lacking, kw, r2, other=["discharge"], drop=["clinic"],
                  allow_recode=["discharge", "admit"])
    assert len(r3.info["series_releases"]) == 3


def test_the_same_columns_again_and_unrelated_ones_are_published(series):
    """No false refusal: release 1's columns again keep their sets; a new
    pass-through column that gives nothing away beside the earlier ones is
    published, with the earlier ones read (and recorded as read)."""
    df, kw, r1, back = series
    again = _release(df, kw, back, other=["admit"], drop=["discharge", "clinic"])
    assert again.info["pass_through_risks"] == []
    order1 = np.argsort(r1.other["admit"].to_numpy(), kind="stable")
    assert sorted(map(tuple, r1.to_mask_frame()["stay"].to_numpy().reshape(-1, 1).tolist())) \
        == sorted(map(tuple, again.to_mask_frame()["stay"].to_numpy().reshape(-1, 1).tolist()))
    assert order1.size == len(df)
    clinic = _release(df, kw, back, other=["clinic"], drop=["admit", "discharge"])
    assert clinic.info["pass_through_risks"] == []
    assert clinic.info["series_releases"][-1] == {"as_is": ["clinic"],
                                                  "sensitive": ["stay", "ward"],
                                                  "read": ["admit"]}


def test_a_column_the_series_published_as_sets_is_not_published_as_it_is(series):
    df, kw, r1, back = series
    with pytest.raises(InputError, match=r"column 'ward': was published as random sets by a "
                                         r"release of the series .*gives away every row's "
                                         r"value those sets hide.*allow_recode=\['ward'\]"):
        anonset.publish(df, anonset.Diversity(3), sensitive=["stay"], other=["ward"],
                        drop=["admit", "discharge", "clinic"], params=back,
                        **dict(kw, domains={"stay": DOMAINS["stay"]}))


def test_an_earlier_release_s_sets_column_is_a_target_of_this_one(series, tmp_path):
    """Release 2 leaves the stay out and passes through a column that gives
    it away (its bracket): the stay, published as sets by release 1, is
    read as a target when the input holds it."""
    df, kw, r1, back = series
    df = df.assign(stay_band=(df["stay"] - 1) // 2)
    with pytest.raises(InputError, match=r"column 'stay_band': .*'stay'"
                                         r".*\('stay' was published by an earlier release"):
        anonset.publish(df, anonset.Diversity(3), sensitive=["ward"], other=["stay_band"],
                        drop=["stay", "admit", "discharge", "clinic"], params=back,
                        **dict(kw, domains={"ward": DOMAINS["ward"]}))
    # a release made before series_releases was written: its roles stand in
    del back.info["series_releases"]
    with pytest.raises(InputError, match=r"column 'stay_band': .*'stay' was published by"):
        anonset.publish(df, anonset.Diversity(3), sensitive=["ward"], other=["stay_band"],
                        drop=["stay", "admit", "discharge", "clinic"], params=back,
                        **dict(kw, domains={"ward": DOMAINS["ward"]}))


def test_every_path_refuses_alike_with_one_line_and_nothing_written(series, tmp_path, capsys):
    import dask.dataframe as dd
    from anonset import dask as adask
    df, kw, r1, back = series
    src = tmp_path / "in.parquet"
    df.to_parquet(src)
    out = tmp_path / "r2.parquet"
    roles = dict(other=["discharge"], drop=["admit", "clinic"])
    what = r"column 'discharge': together with column 'admit', gives 'stay' by a rule"
    with pytest.raises(InputError, match=what):
        publish_file(src, out, anonset.Diversity(3), sensitive=["stay", "ward"], params=back,
                     chunk_rows=700, **kw, **roles)
    assert not out.exists()
    with pytest.raises(InputError, match=what):
        adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(3),
                      sensitive=["stay", "ward"], params=back, scheduler="sync", **kw, **roles)
    for src_file in (src, tmp_path / "in.csv"):
        df.to_csv(tmp_path / "in.csv", index=False)
        code = cli_main(["anonymize", str(src_file), "-o", str(out), "-q",
                         "--identifier", "pid", "--record-id", "pid",
                         "--key-file", str(kw["key_file"]), "--sensitive", "stay,ward",
                         "--domain", "stay=" + ",".join(map(str, DOMAINS["stay"])),
                         "--domain", "ward=A,B,C,D,E", "--l", "3", "--other", "discharge",
                         "--drop", "admit,clinic", "--params-from", str(tmp_path / "r1.parquet")])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and not out.exists()
        assert "column 'discharge': together with column 'admit'" in err[0]
        assert err[0].endswith("--allow-recode discharge,admit")


@settings(max_examples=12, deadline=None)
@given(first=st.sampled_from(["a", "b"]), extra=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_a_total_split_across_two_releases_is_always_refused(tmp_path_factory, first, extra,
                                                             seed):
    """Property: t = a + b with a and b passed through by two releases of a
    series (either order, with or without a harmless column beside them) is
    refused in the second release, whatever the draw."""
    tmp = tmp_path_factory.mktemp("total")
    key = tmp / "k.key"
    new_key_file(key)
    rng = np.random.default_rng(seed)
    n = 600
    a, b = rng.integers(0, 40, n), rng.integers(0, 40, n)
    df = pd.DataFrame({"rid": np.arange(n), "t": a + b, "a": a, "b": b,
                       "noise": rng.choice(list("xyz"), n)})
    kw = dict(identifiers=["rid"], record_id="rid", key_file=key,
              domains={"t": list(range(79))}, sensitive=["t"], allow_clear=["t"])
    second = "b" if first == "a" else "a"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(df, anonset.Diversity(2), other=[first],
                             drop=[second, "noise"], first_in_series=True, **kw)
        with pytest.raises(InputError, match=rf"'{first}' was published by an earlier release"):
            anonset.publish(df, anonset.Diversity(2), params=r1,
                            other=[second] + (["noise"] if extra else []),
                            drop=[first] + ([] if extra else ["noise"]), **kw)


def test_a_mapping_of_parameters_is_refused_under_a_persistent_key(series):
    """``params=first.params`` kept every set of a persistent-key release and
    skipped every check of the series (H40: the stay pinned for 76.8 % of
    the rows), and so did a pickled or deep-copied release's (H41): under a
    persistent key a mapping of parameters is refused; the release itself
    (in memory, from its file, or a copy of it) continues the series."""
    import copy
    import pickle
    df, kw, r1, back = series
    for prior in (r1.params, back.params, dict(r1.params), pickle.loads(pickle.dumps(r1)).params):
        with pytest.raises(InputError, match=r"^params: is a mapping of parameters, which under "
                                             r"a persistent key"):
            _release(df, kw, prior, other=["discharge"], drop=["admit", "clinic"])
    for prior in (pickle.loads(pickle.dumps(r1)), copy.deepcopy(r1)):
        with pytest.raises(InputError, match=r"column 'discharge': together with column 'admit'"):
            _release(df, kw, prior, other=["discharge"], drop=["admit", "clinic"])
    # without a persistent key, a mapping is the parameters alone
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anonset.publish(df, anonset.Diversity(3), sensitive=["stay", "ward"], params=r1.params,
                        other=["admit"], drop=["discharge", "clinic", "pid"], domains=DOMAINS)


def _trial(seed=3, n=3000, adhere=0.895, wave2=True):
    """A trial's arm and its dose: the dose follows the arm for ``adhere`` of
    the patients (in wave 2; at random in wave 1 when ``wave2`` is False)."""
    rng = np.random.default_rng(seed)
    doses = [0, 5, 10, 20, 40]
    arm = rng.choice(["0mg", "10mg", "20mg", "40mg"], n)
    follows = rng.random(n) < adhere
    dose = np.array([int(a[:-2]) if ok and wave2 else int(rng.choice(doses))
                     for a, ok in zip(arm, follows)])
    df = pd.DataFrame({"pid": np.arange(n), "dx": rng.integers(0, 20, n),
                       "region": rng.choice(list("ABCDEFGH"), n), "arm": arm, "dose": dose})
    return df, {"dx": list(range(20)), "region": list("ABCDEFGH"), "dose": doses}


def test_a_set_read_beside_an_earlier_release_s_column_is_refused(tmp_path):
    """Release 1 passes the arm through; release 2 publishes the dose as sets
    (new to the series): the arm beside a dose set names the dose for 87 %
    of the rows (H40), which one release holding both refuses: refused."""
    key = tmp_path / "k.key"
    new_key_file(key)
    df, dom = _trial()
    kw = dict(identifiers=["pid"], record_id="pid", key_file=key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(df, anonset.Diversity(3), sensitive=["dx", "region"], other=["arm"],
                             drop=["dose"], domains={c: dom[c] for c in ("dx", "region")},
                             first_in_series=True, **kw)
    # (naming arm is not enough: beside it the dx's set gives the dose too)
    with pytest.raises(InputError, match=r"column 'dose': would be published nearly in the "
                                         r"clear beside 'arm'.*allow_clear=\['dose'\]$"):
        anonset.publish(df, anonset.Diversity(3), sensitive=["dx", "region", "dose"],
                        drop=["arm"], params=r1, new_in_series=["dose"], domains=dom, **kw)


def test_a_wave_is_measured_on_its_own_values(tmp_path):
    """At baseline the dose does not follow the arm; in wave 2 it does.  Wave
    2 reads the arm beside the dose although release 1 measured the two
    together (on its own values): refused (H40: 91.6 % pinned)."""
    key = tmp_path / "k.key"
    new_key_file(key)
    base, dom = _trial(wave2=False)
    wave2, _ = _trial(wave2=True)
    wave2 = wave2.assign(dx=base["dx"], region=base["region"])
    kw = dict(identifiers=["pid"], record_id="pid", key_file=key, domains=dom)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(base, anonset.Diversity(3), sensitive=["dx", "region", "dose"],
                             other=["arm"], first_in_series=True, **kw)
    with pytest.raises(InputError, match=r"'dose'.*'arm'.*(allow_recode=\['arm'\]|"
                                         r"allow_clear=\['dose'\]$)"):
        anonset.publish(wave2, anonset.Diversity(3), sensitive=["dx", "region", "dose"],
                        drop=["arm"], params=r1, **kw)


@pytest.mark.parametrize("blank", [np.nan, None, ""])
def test_an_earlier_column_held_blank_is_refused_as_a_missing_one(series, tmp_path, blank):
    df, kw, r1, back = series
    blanked = df.assign(admit=blank)
    with pytest.raises(InputError, match=r"column 'admit': was published by a release of the "
                                         r"series and holds a value in only 0 of the 3,000 rows "
                                         r"read here.*allow_recode=\['admit'\]"):
        _release(blanked, kw, back, other=["discharge"], drop=["admit", "clinic"])
    # and in a CSV file, where blanks are text
    src = tmp_path / "blank.csv"
    blanked.to_csv(src, index=False)
    with pytest.raises(InputError, match=r"column 'admit': was published by a release"):
        publish_file(src, tmp_path / "o.parquet", anonset.Diversity(3),
                     sensitive=["stay", "ward"], params=back, other=["discharge"],
                     drop=["admit", "clinic"], **kw)
    assert not (tmp_path / "o.parquet").exists()


def test_named_series_risks_are_recorded_and_named(series, tmp_path, capsys):
    """A column the series published that this input lacks, named in
    allow_recode, was published without a trace: metadata, summary and
    audit said nothing (H41).  Every lacking column is named at once, and
    in a typed table the text 'None' is a value, not a blank."""
    from anonset.cli.args import recodes_text
    df, kw, r1, back = series
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r2 = _release(df, kw, back, other=["admit", "clinic"], drop=["discharge"])
    with pytest.raises(InputError, match=r"column 'admit': .* \(and 'clinic', alike\): .*"
                                         r"drop=\['admit', 'clinic'\].*"
                                         r"allow_recode=\['admit', 'clinic'\]"):
        _release(df.drop(columns=["admit", "clinic"]), kw, r2, other=["discharge"])
    r3 = _release(df.drop(columns=["admit", "clinic"]), kw, r2, other=["discharge"],
                  allow_recode=["admit", "clinic"])
    named = [f for f in r3.info["pass_through_risks"] if f["check"] == "series"]
    assert [f["column"] for f in named] == ["admit", "clinic"]
    assert all(f["allowed"] and "discharge" in f["with"] for f in named)
    from anonset.cli.args import unmeasured_text
    assert unmeasured_text(r3.info) == "admit, clinic" and recodes_text(r3.info) == ""
    rows = anonset.audit(r3).checks.query("check == 'series'")
    assert list(rows.attribute) == ["admit", "clinic"] and set(rows.status) == {"risk"}
    assert anonset.audit(r3).verdict != "PASSED"
    # 'None' is a value of a typed column (only a CSV file's markers are blanks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r4 = _release(df.assign(clinic="None"), kw, back, other=["clinic"],
                      drop=["admit", "discharge"])
        _release(df.assign(clinic="None"), kw, r4, other=["admit"], drop=["discharge", "clinic"])


def test_an_empty_wave_is_refused_as_empty(tmp_path):
    """An empty table under a record id crashed with a bare ValueError (the
    record ids' hash of no rows) in memory and on Dask (H41)."""
    import dask.dataframe as dd
    from anonset import dask as adask
    key = tmp_path / "k.key"
    new_key_file(key)
    df = pd.DataFrame({"pid": np.arange(50), "s": np.arange(50) % 6, "g": ["a", "b"] * 25})
    kw = dict(sensitive=["s"], other=["g"], identifiers=["pid"], record_id="pid", key_file=key,
              domains={"s": list(range(6))}, first_in_series=True)
    with pytest.raises(InputError, match=r"is empty \(no rows\)"):
        anonset.publish(df.iloc[:0], anonset.Diversity(3), **kw)
    with pytest.raises(InputError, match=r"is empty \(no rows\)"):
        adask.publish(dd.from_pandas(df.iloc[:0], npartitions=1), anonset.Diversity(3),
                      scheduler="sync", **kw)


def _pairs_of_a(tmp_path, n=3000):
    """A in 3-sets of 10 values beside L1..L3 (which link a record's rows),
    and X, which groups A's values in pairs (alone it predicts little)."""
    key = tmp_path / "k.key"
    new_key_file(key)
    rng = np.random.default_rng(0)
    vals = list("abcdefghij")
    grp = dict(zip("afbhcjdgei", ["g1", "g1", "g2", "g2", "g3", "g3", "g4", "g4", "g5", "g5"]))
    a = rng.choice(vals, n)
    df = pd.DataFrame({"pid": np.arange(n), "A": a, "L1": rng.choice(vals, n),
                       "L2": rng.choice(vals, n), "L3": rng.choice(vals, n),
                       "X": [grp[v] for v in a]})
    kw = dict(identifiers=["pid"], record_id="pid", key_file=key)
    return df, kw, vals


def test_a_column_passed_through_beside_an_earlier_release_s_sets_is_refused(tmp_path):
    """Release 1 publishes A as sets; release 2 leaves A out and passes X
    through: X beside A's sets (linked by L1..L3's) pinned A for 77 % of
    the rows, which one release holding both refuses (H43).  Refused, on
    the set-pair check, naming the earlier release."""
    df, kw, vals = _pairs_of_a(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(df, anonset.Diversity(3), sensitive=["A", "L1", "L2", "L3"],
                             drop=["X"], domains={c: vals for c in ["A", "L1", "L2", "L3"]},
                             first_in_series=True, **kw)
    with pytest.raises(InputError, match=r"column 'A': would be published nearly in the clear "
                                         r"beside 'X'.*\('A' published by an earlier release of "
                                         r"the series"):
        anonset.publish(df, anonset.Diversity(3), sensitive=["L1", "L2", "L3"], other=["X"],
                        drop=["A"], domains={c: vals for c in ["L1", "L2", "L3"]}, params=r1,
                        **kw)
    # named (allow_clear may name the earlier column), it is published
    r2 = anonset.publish(df, anonset.Diversity(3), sensitive=["L1", "L2", "L3"], other=["X"],
                         drop=["A"], domains={c: vals for c in ["L1", "L2", "L3"]}, params=r1,
                         allow_clear=["A"], allow_recode=["X"], **kw)
    assert "A" not in r2.info["clear"]          # A is no column of this release


def test_sets_of_different_releases_are_read_together(tmp_path):
    """C = (A + B) mod 10: A and B in release 1, C (new to the series) in
    release 2; the three sets read together named A for 82 % of the rows
    at l = 2, which one release holding the three refuses (H43)."""
    key = tmp_path / "k.key"
    new_key_file(key)
    rng = np.random.default_rng(1)
    n = 3000
    a, b = rng.integers(0, 10, n), rng.integers(0, 10, n)
    df = pd.DataFrame({"pid": np.arange(n), "A": a, "B": b, "C": (a + b) % 10,
                       "L": rng.integers(0, 10, n)})
    dom = {c: list(range(10)) for c in "ABCL"}
    kw = dict(identifiers=["pid"], record_id="pid", key_file=key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(df, anonset.Diversity(2), sensitive=["A", "B", "L"], drop=["C"],
                             domains={c: dom[c] for c in "ABL"}, first_in_series=True, **kw)
    what = r"would be published nearly in the clear beside .*published by an earlier release"
    later = dict(sensitive=["C", "L"], drop=["A", "B"], domains={c: dom[c] for c in "CL"},
                 params=r1, new_in_series=["C"], **kw)
    with pytest.raises(InputError, match=what):
        anonset.publish(df, anonset.Diversity(2), **later)
    # streamed (the earlier columns read from the file) and on Dask alike
    import dask.dataframe as dd
    from anonset import dask as adask
    df.to_csv(tmp_path / "in.csv", index=False)
    with pytest.raises(InputError, match=what):
        publish_file(tmp_path / "in.csv", tmp_path / "o.parquet", anonset.Diversity(2),
                     chunk_rows=700, **later)
    assert not (tmp_path / "o.parquet").exists()
    with pytest.raises(InputError, match=what):
        adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(2),
                      scheduler="sync", **later)


def test_an_earlier_set_column_is_read_despite_a_bad_cell_and_in_bins(tmp_path):
    """H45: one cell of A outside its earlier domain, missing, or an integer
    written as text turned the reading of A's earlier sets off unsaid, and
    so did A published in bins by release 1; a wave file without A was
    published; and a risk named by allow_clear left no trace."""
    df, kw, vals = _pairs_of_a(tmp_path)
    doms = {c: vals for c in ["L1", "L2", "L3"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = anonset.publish(df, anonset.Diversity(3), sensitive=["A", "L1", "L2", "L3"],
                             drop=["X"], domains={"A": vals, **doms}, first_in_series=True, **kw)
    later = dict(sensitive=["L1", "L2", "L3"], other=["X"], domains=doms, params=r1, **kw)
    what = r"column 'A': would be published nearly in the clear beside 'X'"
    for bad in ("zz", None):
        odd = df.copy()
        odd.loc[7, "A"] = bad
        with pytest.raises(InputError, match=what):
            anonset.publish(odd, anonset.Diversity(3), drop=["A"], **later)
    with pytest.raises(InputError, match=r"column 'A': was published as random sets by a release "
                                         r"of the series .* is not a column of this input"):
        anonset.publish(df.drop(columns=["A"]), anonset.Diversity(3), **later)
    named = anonset.publish(df, anonset.Diversity(3), drop=["A"], allow_clear=["A"], **later)
    assert [f["column"] for f in named.info["pass_through_risks"]
            if f["check"] == "series"] == ["A"]
    assert anonset.audit(named).verdict == "RISKS FOUND"
    # A in bins (numbers): the bin labels' edges read the numbers
    num = df.assign(A=df["A"].map({v: i * 10 + 5 for i, v in enumerate(vals)}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b1 = anonset.publish(num, anonset.Diversity(3), sensitive=["A", "L1", "L2", "L3"],
                             drop=["X"], domains=doms, bins={"A": list(range(0, 101, 10))},
                             first_in_series=True, **kw)
    with pytest.raises(InputError, match=what):
        anonset.publish(num, anonset.Diversity(3), drop=["A"], **dict(later, params=b1))


def test_a_release_under_a_persistent_key_is_declared_first_or_given_the_latest(tmp_path,
                                                                                capsys):
    """A later release given no earlier one was taken for a first release:
    under the same key file and record id it kept every set and read
    nothing of the series, so the admission date passed through by release
    1 and the discharge date by release 2 gave the stays (H46: 77 %).  A
    persistent-key release given no earlier one is refused unless declared
    the first of its series, with the same line on every path and nothing
    written; the declaration is recorded, summarized and audited, and a
    configuration file (which every release of a series reads) refuses it."""
    import dask.dataframe as dd
    from anonset import dask as adask
    key = tmp_path / "series.key"
    new_key_file(key)
    df = _stays()
    kw = dict(identifiers=["pid"], record_id="pid", key_file=key, domains=DOMAINS,
              sensitive=["stay", "ward"])
    src = tmp_path / "in.parquet"
    df.to_parquet(src)
    out = tmp_path / "r2.parquet"
    later = dict(other=["discharge"], drop=["admit", "clinic"])
    said = []
    with pytest.raises(InputError) as e:
        anonset.publish(df, anonset.Diversity(3), **kw, **later)
    said.append(str(e.value))
    with pytest.raises(InputError) as e:
        publish_file(src, out, anonset.Diversity(3), chunk_rows=700, **kw, **later)
    said.append(str(e.value))
    with pytest.raises(InputError) as e:
        adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(3), scheduler="sync",
                      **kw, **later)
    said.append(str(e.value))
    assert len(set(said)) == 1 and not out.exists(), said
    assert e.value.param == "record_id"
    assert said[0] == ("record_id: makes this release part of a series under its key, and no "
                       "earlier release was given: a later release must be read beside the "
                       "series' earlier ones (a record keeps its sets, which link its rows "
                       "across the releases); expected params (the series' latest release), "
                       "or first_in_series=True to declare this release the first of its series")
    argv = ["anonymize", str(src), "-o", str(out), "--identifier", "pid", "--record-id", "pid",
            "--key-file", str(key), "--sensitive", "stay,ward",
            "--domain", "stay=" + ",".join(map(str, DOMAINS["stay"])),
            "--domain", "ward=A,B,C,D,E", "--l", "3"]
    capsys.readouterr()
    assert cli_main(argv + ["--other", "discharge", "--drop", "admit,clinic"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and not out.exists(), err
    assert err[0].endswith("expected --params-from (the series' latest release), or "
                           "--first-in-series to declare this release the first of its "
                           "series"), err
    assert "--record-id: makes this release part of a series" in err[0], err
    # declared: published; the metadata, the summary and the audit say so
    first = tmp_path / "r1.parquet"
    assert cli_main(argv[:3] + [str(first)] + argv[4:]
                    + ["--other", "admit", "--drop", "discharge,clinic",
                       "--first-in-series"]) == 0
    text = capsys.readouterr().out
    assert "series: the FIRST release of a series under this key (--first-in-series)" in text
    r1 = anonset.read_parquet(first)
    assert r1.info["first_in_series"] is True
    key_row = anonset.audit(r1).checks.query("check == 'key'").iloc[0]
    assert key_row.status == "info" and "declared the first release of its series " \
        "(first_in_series)" in key_row.message
    # under t-closeness the key row warns of the parameters, and names the
    # declaration too (H50: only the passing row named it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        closeness = anonset.publish(df, anonset.Closeness(0.3), first_in_series=True, **kw,
                                    other=["admit"], drop=["discharge", "clinic"])
    key_row = anonset.audit(closeness).checks.query("check == 'key'").iloc[0]
    assert key_row.status == "warn" and "t-closeness parameters" in key_row.message
    assert "declared the first release of its series (first_in_series)" in key_row.message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lazy in (False, True):
            pub = (adask.publish(dd.from_pandas(df, npartitions=3), anonset.Diversity(3),
                                 scheduler="sync", first_in_series=True, **kw,
                                 other=["admit"], drop=["discharge", "clinic"])
                   .to_settable(scheduler="sync") if lazy else
                   anonset.publish(df, anonset.Diversity(3), first_in_series=True, **kw,
                                   other=["admit"], drop=["discharge", "clinic"]))
            assert pub.info["first_in_series"] is True
    # the next release is given it: read beside it (the H46 case is refused
    # by the series' check), and is not a first release itself
    assert cli_main(argv + ["--other", "discharge", "--drop", "admit,clinic",
                            "--params-from", str(first)]) == 2
    assert "together with column 'admit'" in capsys.readouterr().err
    assert cli_main(argv + ["--other", "admit", "--drop", "discharge,clinic",
                            "--params-from", str(first), "-q"]) == 0
    assert "first_in_series" not in anonset.read_parquet(out).info
    out.unlink()
    # an earlier release drawn under no persistent key (an older fresh-key
    # release) gives parameters only: taken for the series' first, it kept
    # every set and read nothing of the series (H49: 2,262 of 3,000 stays)
    fresh = tmp_path / "r0.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anonset.publish(df, anonset.Diversity(3), identifiers=["pid"], domains=DOMAINS,
                        sensitive=["stay", "ward"], drop=["admit", "discharge", "clinic"]
                        ).to_parquet(fresh)
    with pytest.raises(InputError, match=r"^params: was drawn under no persistent key"):
        anonset.publish(df, anonset.Diversity(3), params=anonset.read_parquet(fresh), **kw,
                        **later)
    assert cli_main(argv + ["--other", "discharge", "--drop", "admit,clinic",
                            "--params-from", str(fresh)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and not out.exists(), err
    assert f"--params-from: '{fresh}' was drawn under no persistent key" in err[0], err
    assert err[0].endswith("or --first-in-series to declare this release the first of its "
                           "series (its parameters then taken from the one given)"), err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli_main(argv + ["--other", "admit", "--drop", "discharge,clinic", "-q",
                                "--params-from", str(fresh), "--first-in-series"]) == 0
    started = anonset.read_parquet(out)
    assert started.info["first_in_series"] is True and started.info["params"] == "given"
    out.unlink()
    # declared beside an earlier release, or without a record id: refused
    for more, words in ((dict(params=r1), r"^first_in_series: is given together with params"),
                        (dict(record_id=None, key_file=None),
                         r"^first_in_series: is given without record_id")):
        with pytest.raises(InputError, match=words):
            anonset.publish(df, anonset.Diversity(3), first_in_series=True,
                            **{**kw, **more, "other": ["admit"],
                               "drop": ["discharge", "clinic"]})
    assert cli_main(argv + ["--other", "admit", "--drop", "discharge,clinic",
                            "--params-from", str(first), "--first-in-series"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("anonset anonymize: error: --first-in-series: is given together with "
                          "--params-from"), err
    # a configuration file serves every release of a series: it refuses it
    cfg = tmp_path / "series.toml"
    cfg.write_text("first_in_series = true\n")
    assert cli_main(argv + ["--other", "admit", "--drop", "discharge,clinic",
                            "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "series.toml" in err[0] and "'first_in_series'" in err[0], err
    assert "declare it on the command line (--first-in-series)" in err[0], err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == \
        ["in.parquet", "r0.parquet", "r1.parquet", "series.key", "series.toml"]


def test_series_messages_say_what_helps(tmp_path):
    """H81: a refused first release advised on the next one; a wave's first
    missing cell ('?' joining the domain) was told to declare the domain
    already given; a column new in the series was named among the values
    that changed since the earlier release."""
    import warnings as W
    from anonset.io.keys import new_key_file
    rng = np.random.default_rng(9)
    n = 300
    df = pd.DataFrame({"rid": np.arange(n), "job": rng.choice(list("abc"), n),
                       "town": rng.choice(list("xyz"), n)})
    key = tmp_path / "k.key"
    new_key_file(key)
    kw = dict(identifiers=["rid"], key_file=key, record_id="rid")
    job = {"job": list("abc")}
    # a refused first release warns nothing
    twice = pd.concat([df, df.assign(job=np.roll(df["job"].to_numpy(), 1))], ignore_index=True)
    with W.catch_warnings(record=True) as got:
        W.simplefilter("always")
        with pytest.raises(anonset.InputError, match="holds different values in the rows of one"):
            anonset.publish(twice, anonset.Diversity(2), sensitive=["job"], drop=["town"],
                            first_in_series=True, domains=job, **kw)
    assert not [w for w in got if "publish the next release" in str(w.message)]
    with pytest.warns(UserWarning, match="params=this"):
        first = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], drop=["town"],
                                first_in_series=True, missing="category", domains=job, **kw)
    gap = df.astype({"job": object})
    gap.loc[3, "job"] = None
    with pytest.raises(anonset.InputError, match=r"1 new value \('\?'\), the missing-value token"
                                                 r".*expected rows without missing cells in "
                                                 r"this column, or a new series whose declared "
                                                 r"domain lists the token '\?'"):
        anonset.publish(gap, anonset.Diversity(2), sensitive=["job"], drop=["town"],
                        params=first, missing="category", domains={"job": ["?", *job["job"]]},
                        **kw)
    with W.catch_warnings(record=True) as got:
        W.simplefilter("always")
        anonset.publish(df, anonset.Diversity(2), sensitive=["job", "town"], params=first,
                        new_in_series=["town"], domains={**job, "town": list("xyz")}, **kw)
    said = [str(w.message) for w in got if "changed since" in str(w.message)]
    assert said and "a value of job that changed" in said[0] and "town" not in said[0]
