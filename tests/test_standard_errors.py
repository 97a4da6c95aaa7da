"""Standard errors of a reconstruction (docs/algorithms.md, "Standard
errors"): the parametric bootstrap of ``standard_errors=B`` / ``--se B``
against the spread of the estimates over many releases of one known table,
the closed-form variance of the moment estimator, the command line's
warning that the counts are mostly noise, and the checks of B."""
from __future__ import annotations

import hashlib
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import cli
from anonset.randomized.params import AttributeParams
from anonset.randomized.uncertainty import (MAX_REPLICATES, NOISE_L1, moment_variance,
                                            noise_l1, whole_counts)
from anonset.stream import reconstruct_file

DOM_A, DOM_B = list("pqrs"), list("xyz")


def known_table(n=3000, seed=7):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(DOM_A, n, p=[.4, .3, .2, .1]),
                         "b": rng.choice(DOM_B, n, p=[.5, .3, .2])})


def releases(df, model, count):
    """``count`` releases of ``df`` under fixed research seeds (the test's
    own randomization of the original; the bootstrap's keys are fresh)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [anonset.publish(df, model, sensitive=["a", "b"],
                                domains={"a": DOM_A, "b": DOM_B}, seed=1000 + s,
                                research_seed=True) for s in range(count)]


@pytest.fixture(scope="module")
def spread():
    """The standard deviation of each cell's estimate over 100 releases of
    one table, per model and method."""
    df = known_table()
    out = {}
    for name, model in (("l2", anonset.Diversity(2)), ("t", anonset.Closeness(0.25))):
        pubs = releases(df, model, 100)
        for method in ("em", "exact_em", "value_adding"):
            est = np.array([anonset.reconstruct(p, ["a", "b"], method).counts.ravel()
                            for p in pubs])
            out[name, method] = (pubs[0], est.std(axis=0, ddof=1))
    out["truth"] = anonset.true_crosstab(df, pubs[0].schema, ["a", "b"]).counts
    return out


@pytest.mark.parametrize("model", ["l2", "t"])
@pytest.mark.parametrize("method", ["em", "exact_em", "value_adding"])
def test_the_bootstrap_se_is_the_spread_over_releases_of_one_table(spread, model, method):
    """B = 100 replicates of one release's estimate against 100 releases of
    the table: each standard deviation is within about 7 % of its own (1 /
    sqrt(2 x 99)), the plug-in (the estimate standing for the truth) adds
    more: the median ratio within 20 %, and within a factor 2 every cell
    estimated at least 2 standard errors from 0 (an EM that put a cell of
    118 records at 0 gave it about half its spread: docs/algorithms.md, the
    bootstrap's limits)."""
    pub, emp = spread[model, method]
    ct = anonset.reconstruct(pub, ["a", "b"], method, standard_errors=100)
    assert ct.se.shape == ct.counts.shape and ct.info["se"]["replicates"] == 100
    assert ct.info["se"]["not_converged"] == 0
    ratio = ct.se.ravel() / emp
    assert 0.8 <= np.median(ratio) <= 1.25, ratio
    inside = ct.counts.ravel() >= 2 * ct.se.ravel()
    assert inside.sum() >= 4
    assert (ratio[inside] > 0.5).all() and (ratio[inside] < 2.0).all(), (ratio, inside)


@pytest.mark.parametrize("model", ["l2", "t"])
def test_the_moment_variance_is_the_em_spread_where_every_cell_is_large(spread, model):
    """Where a cell is far from 0 the paper EM's maximum is the moment
    estimator Delta^{-1} w, whose variance is in closed form; nearer 0 the
    EM, kept >= 0, spreads less (a cell of 48 records: 0.7 of it at l = 2)."""
    pub, emp = spread[model, "em"]
    sd = np.sqrt(moment_variance([pub.params["a"], pub.params["b"]], spread["truth"])).ravel()
    far = spread["truth"].ravel() >= 2.5 * sd
    assert far.sum() >= 4
    ratio = sd / emp
    assert (ratio[far] > 0.8).all() and (ratio[far] < 1.25).all(), (ratio, far)
    assert (ratio[~far] >= 0.8).all(), ratio


def test_the_moment_variance_of_randomized_response():
    """d = 2, eta = 1: Var = N b (1 - b) / p^2 whatever the split (Warner's
    randomized response on a fixed table)."""
    p = 0.5
    par = AttributeParams("a", p, 1, 2)
    b = (1 - p) / 2
    for counts in ([60.0, 40.0], [100.0, 0.0]):
        assert np.allclose(moment_variance([par], np.array(counts)), 100 * b * (1 - b) / p ** 2)
    exact = AttributeParams("e", 1.0, 1, 3, exact=True)
    assert np.array_equal(moment_variance([exact], np.array([5.0, 1.0, 0.0])), np.zeros(3))
    assert noise_l1([exact], np.array([5.0, 1.0, 0.0]), 6) == 0.0
    assert math.isclose(noise_l1([par], np.array([60.0, 40.0]), 100),
                        math.sqrt(2 / math.pi) * 2 * math.sqrt(75.0) / 100)


def test_whole_counts_keep_the_total():
    x = np.array([[0.4, 0.4, 0.2], [1.5, -0.1, 7.6]])
    w = whole_counts(x, 10)
    assert w.sum() == 10 and w.shape == x.shape and (w >= 0).all()
    assert (np.abs(w - x * 10 / x.clip(0).sum()) < 1).all()


def test_the_random_baseline_se_is_multinomial_and_the_frame_has_se():
    df = known_table(400)
    pub = releases(df, anonset.Diversity(2), 1)[0]
    ct = anonset.reconstruct(pub, ["a", "b"], "random", standard_errors=2, seed=3)
    assert np.allclose(ct.se, math.sqrt(400 * (1 / 12) * (11 / 12)))
    assert ct.info["se"]["method"] == "exact"
    frame = anonset.reconstruct(pub, ["a", "b"], standard_errors=3).to_frame()
    assert list(frame.columns) == ["a", "b", "count", "se"]
    assert anonset.reconstruct(pub, ["a"]).se is None
    assert "se" not in anonset.reconstruct(pub, ["a"]).to_frame().columns


def test_an_attribute_named_se_keeps_its_name():
    df = known_table(300).rename(columns={"a": "se"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity(2), sensitive=["se", "b"],
                              domains={"se": DOM_A, "b": DOM_B})
    frame = anonset.reconstruct(pub, ["se", "b"], standard_errors=2).to_frame()
    assert list(frame.columns) == ["se", "b", "count", "se_"]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    d = tmp_path_factory.mktemp("se")
    pub = releases(known_table(500), anonset.Diversity(2), 1)[0]
    pub.to_parquet(d / "pub.parquet")
    return pub, d / "pub.parquet"


@pytest.mark.parametrize("bad", [0, 1, -3, MAX_REPLICATES + 1, 2.0, 2.5, True, "10", np.int8(1)])
def test_a_bad_number_of_replicates_is_refused_alike_in_memory_and_streamed(published, bad):
    pub, path = published
    with pytest.raises(anonset.InputError) as mem:
        anonset.reconstruct(pub, ["a", "b"], standard_errors=bad)
    with pytest.raises(anonset.InputError) as streamed:
        reconstruct_file(path, ["a", "b"], standard_errors=bad)
    assert str(mem.value) == str(streamed.value)
    assert str(mem.value).startswith("standard_errors: got ")
    assert "from 2 to 10,000" in str(mem.value)


def test_streamed_se_and_numpy_integers(published):
    pub, path = published
    for method in ("em", "exact_em", "value_adding"):
        ct = reconstruct_file(path, ["a", "b"], method, standard_errors=np.int64(3))
        assert ct.se.shape == (4, 3) and (ct.se >= 0).all() and ct.se.max() > 0
        assert ct.info["se"]["replicates"] == 3


def run(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    return rc, capsys.readouterr()


@pytest.mark.parametrize("value", ["0", "1", "10001", "-2", "x", "2.5"])
def test_the_command_line_refuses_a_bad_se_in_one_line(published, tmp_path, capsys, value):
    _, path = published
    out = tmp_path / "ct.csv"
    rc, cap = run(["reconstruct", path, "--attributes", "a,b", "--se", value, "-o", out], capsys)
    assert rc == 2 and not out.exists()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and "--se" in lines[0], cap.err
    if value.lstrip("-").isdigit():
        assert lines[0] == (f"anonset reconstruct: error: --se: got {int(value):,}; expected a "
                            "whole number of bootstrap replicates from 2 to 10,000")


def test_the_command_line_writes_and_prints_an_se_column(published, tmp_path, capsys):
    _, path = published
    out = tmp_path / "ct.csv"
    rc, cap = run(["reconstruct", path, "--attributes", "a,b", "--se", "4", "-o", out], capsys)
    assert rc == 0, cap.err
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["a", "b", "count", "se"] and (frame["se"] > 0).any()
    assert "standard errors: parametric bootstrap of 4 releases" in cap.out
    rc, cap = run(["reconstruct", path, "--attributes", "a", "--se", "3"], capsys)
    assert rc == 0 and cap.out.splitlines()[-5].split() == ["a", "count", "se"], cap.out


def _tiny(tmp_path):
    """100 records, l = 3 of 4 values on two attributes, written to
    tmp_path/tiny.parquet: a release whose counts are mostly noise."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.choice(list("wxyz"), 100, p=[.5, .3, .15, .05]),
                       "b": rng.choice(list("wxyz"), 100, p=[.4, .3, .2, .1])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity(3), sensitive=["a", "b"],
                              domains={"a": list("wxyz"), "b": list("wxyz")}, seed=5,
                              research_seed=True)
    pub.to_parquet(tmp_path / "tiny.parquet")
    return pub


def test_the_warning_fires_on_a_tiny_noisy_release(tmp_path, capsys):
    """100 records, l = 3 of 4 values on two attributes: the EM's L1/N is
    1.4 (a trial found 0.47-0.63 on such tables), the criterion 2.2; one
    line says so."""
    pub = _tiny(tmp_path)
    rc, cap = run(["reconstruct", tmp_path / "tiny.parquet", "--attributes", "a,b"], capsys)
    assert rc == 0
    noisy = [ln for ln in cap.err.splitlines() if "mostly noise" in ln]
    assert len(noisy) == 1 and noisy[0].startswith("anonset: WARNING: the counts of a x b are "
                                                   "mostly noise"), cap.err
    assert "--se B" in noisy[0]
    # the same criterion in Python, and the warning is left out under -q
    ct = anonset.reconstruct(pub, ["a", "b"])
    assert noise_l1([pub.params["a"], pub.params["b"]], ct.counts, 100) >= NOISE_L1
    rc, cap = run(["reconstruct", tmp_path / "tiny.parquet", "--attributes", "a,b", "-q"],
                  capsys)
    assert rc == 0 and cap.err == ""
    # the random baseline asked for is not warned about
    rc, cap = run(["reconstruct", tmp_path / "tiny.parquet", "--attributes", "a,b", "--method",
                   "random"], capsys)
    assert rc == 0 and "mostly noise" not in cap.err


def test_the_warning_states_no_figure_as_the_printed_counts_error(tmp_path, capsys):
    """The criterion is the unconstrained moment estimate's L1/N (2.2 on
    this tiny release): the warning says whose figure it is, never states a
    cell's count off by its standard deviation, nor an L1/N above 2 as the
    printed counts' error (counts >= 0 summing to N err at most 2 N); with
    --se given it points at the column se, not at --se B (H157)."""
    _tiny(tmp_path)
    rc, cap = run(["reconstruct", tmp_path / "tiny.parquet", "--attributes", "a,b", "--se", "5",
                   "-o", tmp_path / "ct.csv"], capsys)
    assert rc == 0
    (line,) = [ln for ln in cap.err.splitlines() if "mostly noise" in ln]
    assert "off by" not in line and "--se B" not in line, line
    assert "the column se gives each cell's standard error" in line, line
    l1 = float(re.search(r"L1 error of ([0-9.]+) times the 100 records", line).group(1))
    assert l1 > 2 and "unconstrained moment estimate an L1 error of" in line, line


def test_no_warning_on_adult_at_mild_parameters(tmp_path, capsys):
    """Adult, all 48,842 records, l = 4 (the least it publishes at): the
    two- and three-attribute tables of the paper's Fig. 7 are not noise."""
    df = anonset.datasets.load_adult(complete=False)
    schema = anonset.datasets.adult_schema(df, attributes=["age", "occupation", "sex"],
                                           hierarchies=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pub = anonset.publish(df, anonset.Diversity({"age": 4, "occupation": 4, "sex": 1}),
                              schema, seed=11, research_seed=True, allow_clear=["sex"])
    pub.to_parquet(tmp_path / "adult.parquet")
    for attrs in ("age,occupation", "age,occupation,sex", "occupation"):
        rc, cap = run(["reconstruct", tmp_path / "adult.parquet", "--attributes", attrs, "-o",
                       tmp_path / "ct.csv"], capsys)
        assert rc == 0 and "mostly noise" not in cap.err, (attrs, cap.err)


@pytest.mark.parametrize("method", ["em", "exact_em", "value_adding"])
def test_a_replicate_drawn_in_blocks_is_the_one_drawn_whole(published, monkeypatch, method):
    """The bootstrap draws a replicate's rows in blocks (its memory does not
    grow with N, as the streamed path promises): under the same keys the
    blocks give the standard errors of one block."""
    from anonset.randomized import uncertainty

    pub, _ = published
    ct = anonset.reconstruct(pub, ["a", "b"], method)

    def run_with(block_rows):
        keys = iter(hashlib.sha256(bytes([k])).digest() for k in range(1, 100))
        monkeypatch.setattr(uncertainty.os, "urandom", lambda n: next(keys))
        return uncertainty.bootstrap_se(pub, ["a", "b"], method, ct.counts, 4, max_iter=20000,
                                        tol=1e-6, tol_ll=1e-14 if method == "em" else 1e-10,
                                        accelerate=True, block_rows=block_rows)[0]

    whole, blocks = run_with(1 << 18), run_with(37)
    assert whole.max() > 0 and np.array_equal(whole, blocks)
