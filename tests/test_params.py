"""Parameter optimization (paper 000, Sec. V-C)."""
import itertools
import math
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import anonset
from anonset.emd import Ground, emd
from anonset.randomized.params import (P_GRID, _p_for_subset, closeness_parameters,
                                       expected_l2, grid_p, kappa, max_admissible_p,
                                       max_admissible_p_bruteforce, optimize, quantize_p)
from anonset.schema import Attribute


def _posterior(A, Z, p, eta):
    kc, kd = kappa(p, eta, len(A))
    w = np.where(np.isin(np.arange(len(A)), Z), kc, kd) * A
    return w / w.sum()


@given(st.lists(st.integers(0, 20), min_size=2, max_size=7), st.data(), st.floats(0.01, 0.7),
       st.sampled_from(["equal", "ordered"]))
@settings(max_examples=60)
def test_closed_form_p_equals_bisection(counts, data, t, gname):
    A = np.array(counts, float) + 0.0
    if A.sum() == 0:
        A[0] = 1
    A /= A.sum()
    d = len(A)
    eta = data.draw(st.integers(1, d - 1))
    Z = data.draw(st.lists(st.integers(0, d - 1), min_size=eta, max_size=eta, unique=True))
    g = Ground.equal(d) if gname == "equal" else Ground.ordered(d)
    a = A[Z].sum()
    R = np.zeros(d)
    if a > 0:
        R[Z] = A[Z] / a
    E = emd(A, R, g) if a > 0 else 0.0
    p_closed = _p_for_subset(a, E, eta, d, t)
    f = lambda p: emd(A, _posterior(A, Z, p, eta), g) if a > 0 else 0.0
    # EMD(A, B_Z(p)) is increasing in p: bisection for the largest admissible p
    lo, hi = 0.0, 1.0
    if f(1.0) <= t:
        lo = 1.0
    else:
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) <= t else (lo, mid)
    assert p_closed == pytest.approx(lo, abs=1e-9)
    assert f(p_closed) <= t + 1e-9


def test_expected_l2_theorem_1():
    """Eq. 9 increases with eta and decreases with p (Theorem 1)."""
    d, N = 12, 10_000
    for p in (0.2, 0.6, 1.0):
        vals = [expected_l2(N, d, p, eta) for eta in range(1, d)]
        assert all(b >= a - 1e-15 for a, b in zip(vals, vals[1:]))
    for eta in (1, 4, 9):
        vals = [expected_l2(N, d, p, eta) for p in np.linspace(0.05, 1, 20)]
        assert all(b <= a + 1e-15 for a, b in zip(vals, vals[1:]))
    assert expected_l2(N, d, 0.0, 3) == math.inf and expected_l2(N, d, 1.0, d) == math.inf


def test_kappa_sums_to_one():
    """kappa_c / kappa_d are probabilities of individual sets: over all sets they sum to 1."""
    for d, eta, p in [(5, 2, 0.3), (7, 3, 1.0), (6, 6, 0.5), (4, 1, 0.0)]:
        kc, kd = kappa(p, eta, d)
        total = math.comb(d - 1, eta - 1) * kc + (math.comb(d - 1, eta) * kd if eta < d else 0)
        assert total == pytest.approx(1.0)


def test_pseudocode_reading_breaks_the_guarantee():
    """Algorithm 1's pseudo-code keeps, per eta, the p of the most lenient
    subset; the text asks for the worst subset.  On a skewed distribution the
    lenient p publishes sets whose posterior is farther than t from A."""
    A = np.array([0.7, 0.2, 0.05, 0.05])
    t, eta, g = 0.1, 2, Ground.equal(4)
    lenient = 0.0
    for Z in itertools.combinations(range(4), eta):
        a = A[list(Z)].sum()
        R = np.zeros(4); R[list(Z)] = A[list(Z)] / a
        lenient = max(lenient, _p_for_subset(a, emd(A, R, g), eta, 4, t))
    strict = max_admissible_p(A, eta, t, g)
    assert strict < lenient
    worst = max(emd(A, _posterior(A, list(Z), lenient, eta), g)
                for Z in itertools.combinations(range(4), eta))
    assert worst > t + 0.01
    assert strict == pytest.approx(max_admissible_p_bruteforce(A, eta, t, g), abs=1e-9)


def test_closeness_p_is_published_on_a_coarse_grid():
    # at full precision Algorithm 1's p is a closed form of the worst set's
    # share: it published an exact count, and two releases one person apart
    # told whether the person holds the worst value.  On the grid, p is never
    # above the admissible one, and releases one person apart mostly agree
    rng = np.random.default_rng(7)
    g = Ground.equal(14)
    same = 0
    for _ in range(40):
        counts = rng.multinomial(3000, rng.dirichlet(np.full(14, 2.0)))
        p, eta = closeness_parameters(counts, 3000, 0.3, g)
        assert p * P_GRID == int(p * P_GRID)
        assert p <= max_admissible_p(counts, eta, 0.3, g)
        assert quantize_p(p) == p
        worst = int(np.argmax(counts))
        less = counts.copy()
        less[worst] -= 1
        p2, eta2 = closeness_parameters(less, 2999, 0.3, g)
        same += (p2, eta2) == (p, eta)
    # the exact p moves by about 1/n (3e-4) for one person; a step of 1/256
    # hides it on all but about 256/n of the tables
    assert same >= 34


def test_closeness_parameters_choose_min_eq9():
    A = np.array([0.4, 0.3, 0.2, 0.1, 0.0])
    N, t, g = 1000, 0.15, Ground.ordered(5)
    p, eta = closeness_parameters(A, N, t, g)
    best = min((expected_l2(N, 5, grid_p(max_admissible_p(A, e, t, g)), e), e)
               for e in range(1, 5))
    assert eta == best[1]
    assert p == grid_p(max_admissible_p(A, eta, t, g))
    # t >= 1 constrains nothing; t = 0 leaves only useless parameters
    assert closeness_parameters(A, N, 1.0, g) == (1.0, 1)
    p0, eta0 = closeness_parameters(A, N, 0.0, g)
    assert eta0 == 5 or p0 == 0.0


def test_quantized_p_never_above():
    for p in (0.1, 1 / 3, 0.999999999999, 1e-12):
        assert quantize_p(p) <= p
        assert quantize_p(p) == math.floor(p * 2**32) / 2**32


def test_optimize_diversity_and_anonymity():
    attrs = [Attribute("a", domain=tuple("abcdef")), Attribute("b", domain=tuple("xyz")),
             Attribute("c", role="exact", domain=(1, 2))]
    out = optimize(anonset.Diversity({"a": 4, "b": 2}), attrs)
    assert (out["a"].p, out["a"].eta, out["b"].eta, out["c"].eta, out["c"].exact) == (1.0, 4, 2, 1, True)
    out = optimize(anonset.Anonymity(3), attrs)
    assert out["a"].eta == 3 and out["b"].eta == 3 and out["a"].k == 3
    with pytest.raises(ValueError, match="gives no value for the sensitive column 'b'"):
        optimize(anonset.Diversity({"a": 2}), attrs)


def test_l_above_domain_is_an_error_unless_clipped():
    attrs = [Attribute("sex", domain=("F", "M"))]
    with pytest.raises(ValueError, match=r"l = 3 for 'sex' exceeds its domain size d = 2"):
        optimize(anonset.Diversity(3), attrs)
    assert optimize(anonset.Diversity(2), attrs)["sex"].eta == 2       # l = d is allowed
    with pytest.warns(UserWarning, match="weaker"):
        out = optimize(anonset.Diversity(3), attrs, clip_l=True)
    assert out["sex"].eta == 1


def test_l_above_a_two_valued_domain_suggests_an_l_per_column_not_clipping(capsys):
    """Salaries (carData) at l = 3: the refusal of sex (d = 2) offered
    clip_l, which gives l = 1 there: the value in the clear (refused in
    turn).  It now names an l per column that keeps the other columns' l,
    in the API's form and the command line's, and offers clip_l only where
    d - 1 >= 2."""
    import pandas as pd
    from anonset import cli
    attrs = [Attribute("job", domain=tuple("abcde")), Attribute("sex", domain=("F", "M"))]
    with pytest.raises(ValueError) as e:
        optimize(anonset.Diversity(3), attrs)
    # ... and says that at l = d a column's sets tell nothing (H16: a steward
    # pasted the per-column l and got five columns reconstruct refuses)
    assert str(e.value) == ("l: l = 3 for 'sex' exceeds its domain size d = 2: no set of 3 "
                            "distinct values exists; expected l <= 2 (an l per column: "
                            "l={'job': 3, 'sex': 2}); at l = d the sets of 'sex' are their "
                            "whole domain and tell nothing (reconstruct refuses such a "
                            "column): t-closeness (t) keeps a column of few values "
                            "informative")
    with pytest.raises(ValueError, match=r"expected l <= 4, or clip_l=True to use l = d - 1"):
        optimize(anonset.Diversity(5), [Attribute("job", domain=tuple("abcd"))])
    out = optimize(anonset.Diversity({"job": 3, "sex": 2}), attrs)
    assert (out["job"].eta, out["sex"].eta) == (3, 2)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        pd.DataFrame({"job": list("abcde") * 4, "sex": list("FM") * 10}).to_csv(f"{d}/t.csv",
                                                                          index=False)
        assert cli.main(["anonymize", f"{d}/t.csv", "-o", f"{d}/o.csv", "--sensitive",
                         "job,sex", "--domain", "job=a,b,c,d,e", "--domain", "sex=F,M",
                         "--l", "3"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "expected l <= 2 (an l per column: --l job=3,sex=2); at l = d the sets of 'sex' are "
        "their whole domain and tell nothing (reconstruct refuses such a column): "
        "t-closeness (--t) keeps a column of few values informative")


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3", True, Fraction(3)])
def test_bad_l(bad):
    with pytest.raises(ValueError, match="l: got .*; expected an integer >= 1"):
        anonset.Diversity(bad)


def test_integral_floats_make_the_integer_model():
    # l = 2.0 is l = 2: equal models, the same metadata (never a float l)
    assert anonset.Diversity(2.0) == anonset.Diversity(2)
    assert anonset.Diversity({"a": np.float64(3.0)}).to_dict()["l"] == {"a": 3}
    assert type(anonset.Anonymity(4.0).k) is int
    assert anonset.DiversityCloseness(2.0, 0.3).to_dict()["l"] == 2


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), Fraction(1, 5), Decimal("0.2")])
def test_bad_t(bad):
    # a Fraction was accepted, published, and then no writer could write the
    # metadata (TypeError, H28): refused as a Decimal is
    with pytest.raises(ValueError, match=r"expected a number in \[0, 1\] \(inf: no constraint"):
        anonset.Closeness(bad)


def test_closeness_uses_declared_ground_and_records_it():
    df = anonset.datasets.load_adult().head(3000)
    schema = anonset.datasets.adult_schema(df, attributes=["age", "race", "relationship"])
    pub = anonset.publish(df, anonset.Closeness(0.2), schema, seed=0, research_seed=True)
    assert pub.params["age"].ground == "ordered"
    assert pub.params["race"].ground == "hierarchical"
    assert pub.params["relationship"].ground == "equal"
    with pytest.raises(anonset.InputError, match="has the ground .hierarchical. but no hierarchy"):
        anonset.publish(df, anonset.Closeness(0.2, ground="hierarchical"), schema, seed=0, research_seed=True)


def test_user_params_are_checked_against_the_model():
    from anonset.randomized.params import AttributeParams
    df = pd.DataFrame({"a": list("xxxxxxyyz"), "b": list("uvwuvwuvw")})
    dom = {"a": list("xyz"), "b": list("uvw")}
    ok = {"a": AttributeParams("a", 1.0, 2, 3), "b": AttributeParams("b", 1.0, 2, 3)}
    pub = anonset.publish(df, anonset.Diversity(2), params=ok, seed=0, research_seed=True, sensitive=list(df.columns), domains=dom)
    assert pub.params["a"].eta == 2
    weak = dict(ok, a=AttributeParams("a", 1.0, 1, 3))
    with pytest.raises(ValueError, match=r"params: column 'a': frequency-diversity needs p = 1 "
                                         r"and eta >= 2"):
        anonset.publish(df, anonset.Diversity(2), params=weak, seed=0, research_seed=True, sensitive=list(df.columns), domains=dom)
    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        anonset.publish(df, anonset.Diversity(2), params={"a": ok["a"]}, seed=0, research_seed=True, sensitive=list(df.columns), domains=dom)
    with pytest.raises(ValueError, match=r"d = 4 but the domain has 3 values"):
        anonset.publish(df, anonset.Diversity(2), params=dict(ok, b=AttributeParams("b", 1.0, 2, 4)), seed=0, research_seed=True, sensitive=list(df.columns), domains=dom)
    p_max = max_admissible_p(np.array([6, 2, 1]) / 9, 2, 0.1, Ground.equal(3))
    lenient = dict(ok, a=AttributeParams("a", min(1.0, p_max + 0.05), 2, 3))
    with pytest.raises(ValueError, match=r"params: column 'a': p = .* exceeds the largest p "
                                         r"admissible for t = 0.1"):
        anonset.publish(df, anonset.Closeness(0.1, ground="equal"), params=lenient, seed=0, research_seed=True, sensitive=list(df.columns), domains=dom)


def test_optimized_closeness_params_pass_the_check():
    """Parameters from optimize (e.g. computed once for a streamed file) are
    accepted by publish's check."""
    df = anonset.datasets.load_adult().head(4000)
    schema = anonset.datasets.adult_schema(df, attributes=["native-country", "age", "education"])
    pub = anonset.publish(df, anonset.Closeness(0.2), schema, seed=1, research_seed=True)
    again = anonset.publish(df, anonset.Closeness(0.2), schema, seed=1, research_seed=True, params=pub.params)
    assert again.equals(pub)


def _closeness_parameters_every_eta(A, N, t, g, eta_min=1):
    """Algorithm 1 as written: every eta searched exactly."""
    d = len(A)
    best = (math.inf, 1.0, d)
    for eta in range(max(1, eta_min), d):
        p = grid_p(max_admissible_p(A, eta, t, g))
        if p <= 0.0:
            continue
        e = expected_l2(N, d, p, eta)
        if e < best[0]:
            best = (e, p, eta)
    return best[1], best[2]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=2, max_size=40), st.floats(0.0, 0.95),
       st.sampled_from(["equal", "ordered"]), st.integers(1, 6), st.booleans())
def test_closeness_parameters_skip_only_sizes_that_cannot_win(counts, t, ground, eta_min, probs):
    """Algorithm 1 stops at the set size whose error at p = 1 already loses,
    and (equal ground, counts) skips sizes whose error with p bounded by a
    cheap lower bound on H loses: the (p, eta) are those of searching every
    size (d = 3,743 took 3,738 exact searches, 221 s; now 2 s)."""
    A = np.array(counts, dtype=np.int64)
    if A.sum() == 0:
        A[0] = 1
    if probs:
        A = A / A.sum()
    g = Ground.equal(len(A)) if ground == "equal" else Ground.ordered(len(A))
    N = 1000
    eta_min = min(eta_min, len(A))
    assert closeness_parameters(A, N, t, g, eta_min=eta_min) == \
        _closeness_parameters_every_eta(A, N, t, g, eta_min=eta_min)


def test_closeness_parameters_on_a_wide_domain_need_no_subset_sum_dp(monkeypatch):
    """A domain of 1,500 values (aircraft tail numbers): every set size's H
    but a few small ones' is shown by a set, so the subset-sum DP (O(d eta)
    shifts of N-bit integers: 52 s at d = 4,044 and 336,776 rows) runs only
    as far as those need, and the
    result is that of the exact search at every size."""
    import anonset.randomized.closeness_search as cs
    runs = []
    dp = cs._reachable_counts
    monkeypatch.setattr(cs, "_reachable_counts", lambda c, k: runs.append(k) or dp(c, k))
    cs._reachable_cached.cache_clear()
    rng = np.random.default_rng(0)
    A = rng.zipf(1.6, 1500).clip(1, 5000).astype(np.int64)
    got = closeness_parameters(A, int(A.sum()), 0.4, Ground.equal(1500), eta_min=5)
    assert max(runs, default=0) <= 64          # at most for a few small sizes
    assert got == _closeness_parameters_every_eta(A, int(A.sum()), 0.4, Ground.equal(1500), 5)
    assert got[0] > 0 and got[1] > 100          # the best size lies far out


def test_integer_parameters_stay_exact():
    """l and k are integers end to end: an l beyond a float's 53 bits is named
    as given in the refusal, not as the float nearest to it."""
    big = 10 ** 30
    assert anonset.Diversity(big).l_for("age") == big
    assert anonset.Anonymity({"age": big}).k_for("age") == big
    assert anonset.Diversity(5.0).l_for("age") == 5 and isinstance(
        anonset.Diversity(5.0).l_for("age"), int)
    df = pd.DataFrame({"age": ["a", "b", "c"] * 4})
    with pytest.raises(anonset.InputError, match=f"l = {big} for 'age'"):
        anonset.publish(df, anonset.Diversity(big), sensitive=["age"],
                        domains={"age": ["a", "b", "c"]})


def test_attribute_params_hold_python_numbers_and_refuse_others(tmp_path):
    """An eta computed with NumPy wrote no metadata, eta = True read back as
    no integer, eta = 2.5 failed deep in the sampler, and parameters of one
    column given under another's name were taken (H78)."""
    import anonset
    from anonset import InputError
    from anonset.randomized.params import AttributeParams as AP
    a = AP("a", np.float64(1.0), np.int64(2), np.int64(6))
    assert type(a.eta) is int and type(a.d) is int and type(a.p) is float
    for bad, what in [(dict(eta=True), "eta = True"), (dict(eta=2.5), "eta = 2.5"),
                      (dict(eta="2"), "eta = '2'"), (dict(p="0.5"), "p = '0.5'"),
                      (dict(p=True), "p = True"), (dict(d=None), "d = None")]:
        kw = dict(name="a", p=1.0, eta=2, d=6) | bad
        with pytest.raises(InputError, match=f"params: column 'a': {re.escape(what)}; "
                                             "expected a "):
            AP(**kw)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 6, 300), "b": rng.integers(0, 4, 300)})
    kw = dict(sensitive=["a", "b"], domains={"a": range(6), "b": range(4)}, seed=7,
              research_seed=True)
    pub = anonset.publish(df, anonset.Diversity(2),
                          params={"a": a, "b": AP("b", 1.0, np.int64(2), 4)}, **kw)
    pub.to_parquet(tmp_path / "p.parquet")
    back = anonset.read_parquet(tmp_path / "p.parquet")
    assert back.params["a"].eta == 2 and back.params["b"].eta == 2
    with pytest.raises(InputError, match="params: column 'a': holds the parameters of 'zz'"):
        anonset.publish(df, anonset.Diversity(2),
                        params={"a": AP("zz", 1.0, 2, 6), "b": AP("b", 1.0, 2, 4)}, **kw)
