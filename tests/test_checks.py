"""Partition checkers against pycanon on generalized Adult, and pycanon's bugs.

pycanon is a comparison peer (the ``bench`` extra: it pins exact numpy and
pandas versions); the tests that call it skip by name without it, and our
side of every pycanon bug is tested on its own.
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonset.checks import (check_partition, distinct_l_diversity, entropy_l_diversity,
                            equivalence_classes, k_anonymity, recursive_cl_diversity,
                            t_closeness)
from anonset.emd import Ground, emd
from anonset.hierarchy import Hierarchy

import anonset.datasets

HDIR = Path(anonset.datasets.__file__).parent / "data" / "adult" / "hierarchies"


@pytest.fixture(scope="module")
def an():
    return pytest.importorskip("pycanon.anonymity",
                               reason="pycanon is a comparison peer: pip install '.[bench]'")


@pytest.fixture(scope="module")
def adult():
    """Adult with age in 5-year bins: QI (age, sex, marital-status), 184 classes."""
    df = anonset.datasets.load_adult(complete=False)
    ha = Hierarchy.from_csv(HDIR / "age.csv")
    ia = {v: i for i, v in enumerate(ha.leaves)}
    g = pd.DataFrame({"age": ha.generalize([ia[str(a)] for a in df.age], 1),
                      "sex": df.sex, "marital": df["marital-status"],
                      "occupation": df.occupation, "education-num": df["education-num"],
                      "salary": df["salary-class"]})
    return g.iloc[:8000].reset_index(drop=True)     # pycanon is slow; 8000 rows suffice


QI = ["age", "sex", "marital"]


def test_k_and_distinct_l_agree_with_pycanon(adult, an):
    r = check_partition(adult, QI, ["occupation", "salary"], ground=None)
    assert r.k == an.k_anonymity(adult, QI)
    assert r.l_distinct == an.l_diversity(adult, QI, ["occupation", "salary"])
    assert k_anonymity(equivalence_classes(adult, QI)) == r.k
    assert distinct_l_diversity(adult, QI, "occupation") == an.l_diversity(adult, QI, ["occupation"])


def test_t_equal_and_ordered_agree_with_pycanon(adult, an):
    # pycanon: string columns -> equal distance, numeric -> ordered over the
    # distinct values present; both are our defaults with an inferred domain
    for s, g in (("occupation", "equal"), ("education-num", "ordered")):
        assert abs(t_closeness(adult, QI, s, g) - an.t_closeness(adult, QI, [s])) < 1e-12
    both = t_closeness(adult, QI, ["occupation", "education-num"],
                       {"occupation": "equal", "education-num": "ordered"})
    assert abs(both - an.t_closeness(adult, QI, ["occupation", "education-num"])) < 1e-12


def test_entropy_l_agrees_with_pycanon_up_to_its_int_cast(adult, an):
    ours = entropy_l_diversity(adult, QI, "occupation")
    assert int(ours) == an.entropy_l_diversity(adult, QI, ["occupation"])


def test_hierarchical_t_per_class_report(adult):
    h = Hierarchy.from_csv(HDIR / "occupation.csv")
    sub = adult[adult.occupation != "?"].reset_index(drop=True)
    r = check_partition(sub, QI, "occupation", ground="hierarchical",
                        hierarchies={"occupation": h})
    cls = equivalence_classes(sub, QI)
    c0 = sub.occupation[cls == 0]
    p = np.array([(c0 == v).sum() for v in h.leaves])
    q = np.array([(sub.occupation == v).sum() for v in h.leaves])
    assert abs(r.per_class["emd[occupation]"].iloc[0] - emd(p, q, Ground.tree(h))) < 1e-14
    assert r.t == r.per_class["emd[occupation]"].max()
    assert len(r.per_class) == cls.max() + 1


# ------------------------------------------------------------ pycanon's bugs
def test_recursive_cl_counts_sorted_descending():
    """pycanon sorts counts ascending, so r_1 is the *least* frequent value.

    One class with counts (6, 2, 1, 1) and l = 2: r_1 = 6, tail r_2.. = 4,
    (c, 2) holds iff 6 < 4c, i.e. c > 1.5.  pycanon computes 1 / (2+1+6)... and
    reports c = 1, which would wrongly certify (1, 2)-diversity (6 < 1 * 4 is false).
    """
    df = pd.DataFrame({"q": ["x"] * 10, "s": list("aaaaaabbcd")})
    assert recursive_cl_diversity(df, ["q"], "s", l=2) == 1.5
    assert recursive_cl_diversity(df, ["q"], "s", l=4) == 6.0   # ours at l = 4: 6 / 1


def test_pycanon_sorts_counts_ascending(an):
    df = pd.DataFrame({"q": ["x"] * 10, "s": list("aaaaaabbcd")})
    c_pycanon, l_pycanon = an.recursive_c_l_diversity(df, ["q"], ["s"])
    assert l_pycanon == 4 and c_pycanon == 1          # pycanon's value, with l = distinct l


NON_RANGE = pd.DataFrame({"q": ["x", "y", "y"], "s": ["a", "b", "b"]}, index=[2, 0, 1])


def test_non_range_index_t():
    """Rows (x, a), (y, b), (y, b) with index [2, 0, 1]: class x = {a} against
    the whole (1/3, 2/3) has EMD 2/3, so t = 2/3 whatever the index."""
    assert abs(t_closeness(NON_RANGE, ["q"], "s", "equal") - 2 / 3) < 1e-15


def test_non_range_index_gives_pycanon_wrong_t(an):
    """pycanon maps groupby *labels* through .iloc (positions): it reads label
    2 as position 2, i.e. row (y, b), and reports 1/3."""
    df = NON_RANGE
    assert abs(an.t_closeness(df, ["q"], ["s"]) - 1 / 3) < 1e-15       # pycanon: wrong
    assert abs(an.t_closeness(df.reset_index(drop=True), ["q"], ["s"]) - 2 / 3) < 1e-15


MISSING_QI = pd.DataFrame({"q": ["x", "x", None], "s": ["a", "b", "a"]})


def test_missing_qi_rows_kept_as_own_class():
    r = check_partition(MISSING_QI, ["q"], "s", ground="equal")
    assert r.k == 1                                      # the NaN row is a class of 1


def test_pycanon_drops_missing_qi_rows(an):
    """pycanon's groupby drops rows with a missing QI (pandas dropna=True)."""
    assert an.k_anonymity(MISSING_QI, ["q"]) == 2        # pycanon silently ignores it


def test_errors():
    df = pd.DataFrame({"q": [1, 2], "s": ["a", None]})
    with pytest.raises(ValueError, match="'s' has missing values"):
        check_partition(df, ["q"], "s")
    with pytest.raises(ValueError, match="column 'z' is not in the frame"):
        check_partition(df, ["q"], "z")
    with pytest.raises(ValueError, match="classes must have one id per row"):
        check_partition(df, np.array([0, 1, 2]), "q")
    with pytest.raises(ValueError, match="no hierarchy"):
        check_partition(pd.DataFrame({"q": [1], "s": ["a"]}), ["q"], "s", ground="hierarchical")
    with pytest.raises(ValueError, match="not in its declared domain"):
        check_partition(pd.DataFrame({"q": [1], "s": ["a"]}), ["q"], "s",
                        domains={"s": ["b"]})


# ------------------------------------------------------------ fast grouping
def test_factorize_matches_pandas_on_object_columns():
    """The identity-grouping fast path gives exactly pd.factorize's codes and uniques."""
    from anonset.checks import _factorize
    rng = np.random.default_rng(3)
    words = ["b", "a", "c", "".join(["a"]), "d" * 3]
    for trial in range(20):
        n = int(rng.integers(1, 400))
        # equal strings held by distinct objects, None / NaN, ints mixed in
        vals = [words[i] if i < len(words) else (None if i == 5 else float("nan"))
                for i in rng.integers(0, 7, n)]
        vals = [("".join(list(v)) if isinstance(v, str) and rng.random() < 0.5 else v)
                for v in vals]
        arr = np.empty(n, dtype=object)
        arr[:] = vals
        for sort in (False, True):
            c1, u1 = _factorize(pd.Series(arr), sort=sort)
            c2, u2 = pd.factorize(arr, sort=sort)
            assert np.array_equal(c1, c2) and list(u1) == list(u2)
    mixed = np.array([3, "x", 3, 2.5, "x", None], dtype=object)
    c1, u1 = _factorize(mixed, sort=False)
    c2, u2 = pd.factorize(mixed, sort=False)
    assert np.array_equal(c1, c2) and list(u1) == list(u2)


def test_class_ids_independent_of_object_identity(adult):
    """Copies of the strings (distinct objects) give the same classes."""
    copy = adult.copy()
    for c in QI:
        copy[c] = [("".join(list(v)) if isinstance(v, str) else v) for v in adult[c]]
    assert np.array_equal(equivalence_classes(adult, QI), equivalence_classes(copy, QI))
    r1 = check_partition(adult, QI, "occupation", ground="equal")
    r2 = check_partition(copy, QI, "occupation", ground="equal")
    assert r1.t == r2.t and r1.k == r2.k


from hypothesis import given, settings, strategies as st


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=32),
                          st.integers(-5, 2**40), st.sampled_from(["x", "y", "z"])),
                min_size=1, max_size=40))
def test_k_anonymity_counts_labels_as_given(labels):
    """k_anonymity is the smallest class size for labels of any kind, as
    check_partition reads them: a cast to int merged classes 0.2 and 0.7
    (k = 4 for two classes of 2) and a label of 10^12 asked for 7 TiB (H78)."""
    sizes = pd.Series(labels, dtype=object).value_counts()
    assert k_anonymity(labels) == int(sizes.min())
    df = pd.DataFrame({"dis": ["a"] * len(labels)})
    if all(isinstance(v, str) for v in labels) or not any(isinstance(v, str) for v in labels):
        assert check_partition(df, np.asarray(labels), "dis", ground=None).k == int(sizes.min())


def test_class_counts_refuses_codes_it_cannot_count():
    from anonset import InputError
    from anonset.partition.checks import class_counts
    assert class_counts([0, 1, 1], [2, 0, 2], 3).tolist() == [[0, 0, 1], [1, 0, 1]]
    for classes, codes, what in [([0.2, 0.7], [0, 1], "classes"), ([0, 1], [0, 3], "codes"),
                                 ([-1, 0], [0, 1], "classes"), ([0, 1, 2], [0, 1], "classes")]:
        with pytest.raises(InputError, match=what):
            class_counts(classes, codes, 3)
