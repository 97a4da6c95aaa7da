"""Schema inference, encoding and hierarchies: every error names the column
or parameter and what was expected."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import anonset
from anonset.encode import encode
from anonset.hierarchy import Hierarchy
from anonset.schema import Attribute, Schema


def test_infer_roles_and_domains():
    df = pd.DataFrame({"id": [1, 2, 3], "age": [23, 41, 67], "job": ["b", "a", "b"],
                       "edu": ["hi", "lo", "mid"], "note": ["x", "y", "z"]})
    s = Schema.infer(df, identifiers=["id"], other=["note"], exact=["edu"], sensitive=["age", "job"],
                     bins={"age": [0, 40, 120]}, ordinal={"edu": ["lo", "mid", "hi"]})
    assert [a.role for a in s] == ["identifier", "sensitive", "sensitive", "exact", "other"]
    assert s["age"].domain == ("[0, 40)", "[40, 120)") and s["age"].kind == "ordinal"
    assert s["job"].domain == ("a", "b") and s["job"].inferred
    assert s["edu"].domain == ("lo", "mid", "hi") and s["edu"].kind == "ordinal"
    codes = encode(df, s)
    np.testing.assert_array_equal(codes["age"], [0, 1, 1])
    np.testing.assert_array_equal(codes["edu"], [2, 0, 1])
    assert Schema.from_dict(s.to_dict()).to_dict() == s.to_dict()


def test_infer_from_arrow():
    t = pa.table({"a": ["x", "y", "x"], "b": [1, 2, 3]})
    s = Schema.infer(t, sensitive=["a", "b"])
    assert s["b"].domain == (1, 2, 3)


def test_inferred_domain_warning():
    import warnings
    from anonset import InferredDomainWarning
    df = pd.DataFrame({"a": ["x", "y"], "b": [1, 2]})
    with pytest.warns(InferredDomainWarning, match="the domain of 'a' was read off the data") \
            as rec:
        Schema.infer(df, sensitive=["a"], exact=["b"], warn_inferred=True)
    assert "'b'" not in str(rec[0].message)      # exact: published as it is
    assert rec[0].filename == __file__           # points at the caller, not at anonset
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Schema.infer(df, sensitive=["a"], exact=["b"])      # only when asked


def test_every_column_needs_a_role():
    df = pd.DataFrame({"name": ["a"], "ssn": ["1"], "job": ["x"]})
    with pytest.raises(ValueError, match=r"^2 columns have no role: 'name', 'ssn'; expected each "
                                         r"named in one of identifiers, sensitive, exact, other "
                                         r"\(passed through unchanged\) or drop \(to leave them "
                                         r"all out: drop=\['name', 'ssn'\]\)$"):
        Schema.infer(df, sensitive=["job"])
    with pytest.raises(ValueError, match=r"^3 columns have no role"):
        anonset.publish(df, anonset.Diversity(2))
    s = Schema.infer(df, sensitive=["job"], identifiers=["ssn"], drop=["name"])
    assert [a.role for a in s] == ["drop", "identifier", "sensitive"]
    # a schema takes no role arguments beside it: the columns go in the schema
    part = Schema.infer(df[["job"]], sensitive=["job"])
    with pytest.raises(ValueError, match=r"^2 columns have no role: 'name', 'ssn'; expected each "
                                         r"column in the schema, with its role"):
        anonset.publish(df, anonset.Diversity(2), part)


def test_a_wide_file_is_refused_naming_ten_columns_and_pasting_all():
    # a survey file of 172 columns (medicaldata's opt) printed 165 names
    # twice on one line; the count, ten names and the full --drop list now
    cols = [f"q{i:03d}" for i in range(30)]
    df = pd.DataFrame({c: ["a"] for c in ["job", *cols]})
    with pytest.raises(ValueError) as e:
        Schema.infer(df, sensitive=["job"])
    msg = str(e.value)
    assert msg.startswith("30 columns have no role: " + ", ".join(repr(c) for c in cols[:10])
                          + " and 20 more; expected")
    assert msg.endswith(f"(to leave them all out: drop={cols!r})")
    assert repr(cols[10]) not in msg.split("; expected")[0]


def test_hierarchy_gives_domain_and_is_reordered():
    h = Hierarchy([["b", "B", "*"], ["a", "A", "*"], ["c", "A", "*"]])
    a = Attribute("x", domain=("a", "b", "c"), hierarchy=h)
    assert a.hierarchy.leaves == ("a", "b", "c")
    assert a.hierarchy.lca_height(0, 2) == 1 and a.hierarchy.lca_height(0, 1) == 2
    with pytest.raises(ValueError, match=r"attribute 'x'.*no leaf for domain value"):
        Attribute("x", domain=("a", "b", "zz"), hierarchy=h)
    adult_edu = anonset.datasets.adult_hierarchy("education")
    assert adult_edu.d == 16 and adult_edu.height == 3


@pytest.mark.parametrize("rows, msg", [
    ([["a", "*"], ["b", "X", "*"]], "unbalanced trees are not supported"),
    ([["a", "r1"], ["b", "r2"]], "expected one root"),
    ([["a", "*"], ["a", "*"]], "leaf 'a' appears twice"),
    ([["a", "", "*"]], "empty label"),
    ([], "no leaves"),
])
def test_bad_hierarchies(rows, msg):
    with pytest.raises(ValueError, match=msg):
        Hierarchy(rows)


def test_same_label_under_two_parents_is_two_nodes():
    h = Hierarchy([["a", "Other", "X", "*"], ["b", "Other", "Y", "*"]])
    assert h.ancestors[0, 1] != h.ancestors[1, 1]
    assert h.lca_height(0, 1) == 3


@pytest.mark.parametrize("df, kwargs, msg", [
    (pd.DataFrame({"a": ["x", None, "y"]}), {},
     r"^column 'a': has 1 missing value\(s\) \(first at row 2\); expected no missing values, "
     r"or missing='category'"),
    (pd.DataFrame({"a": ["x", None, "y"]}), {"domains": {"a": ["x", "y"]}},
     r"^column 'a': has 1 missing value\(s\) \(first at row 2\)"),
    (pd.DataFrame({"a": ["x", "q"]}), {"domains": {"a": ["x", "y"]}},
     r"^column 'a': value 'q' at row 2 is not in the domain"),
    (pd.DataFrame({"a": [5.0, 150.0]}), {"bins": {"a": [0, 50, 100]}},
     r"^column 'a': value 150 at row 2 is outside the bins; expected values in \[0, 100\)"),
    (pd.DataFrame({"a": [5.0, 100.5]}), {"bins": {"a": [0, 50, 100]}},
     r"^column 'a': value 100.5 at row 2 is outside the bins; expected values in \[0, 100\)"),
    (pd.DataFrame({"a": [5.0, -1.0]}), {"bins": {"a": [0.5, 50, 99.5]}},
     r"^column 'a': value -1 at row 2 is outside the bins; expected values in \[0.5, 99.5\)"),
    (pd.DataFrame({"a": ["x", "y"]}), {"bins": {"a": [0, 50, 100]}},
     r"^column 'a': holds the text 'x' at row 1, but its domain is numeric; expected numbers$"),
    # the first cell that is no number, however the rows are cut in blocks
    # (a later 'x' was named in memory, the first block's '40' streamed: H48)
    (pd.DataFrame({"a": ["40", "x"]}), {"bins": {"a": [0, 50, 100]}},
     r"^column 'a': holds the text '40' at row 1, .*it holds them as text: convert it"),
    (pd.DataFrame({"a": [40, "x"]}), {"bins": {"a": [0, 50, 100]}},
     r"^column 'a': holds the text 'x' at row 2, but its domain is numeric; expected numbers$"),
    (pd.DataFrame({"a": ["40", "7"]}), {"bins": {"a": [0, 50, 100]}},
     r"^column 'a': holds the text '40' at row 1, .*it holds them as text: convert it"),
    (pd.DataFrame({"a": ["x", 1]}), {}, r"^column 'a': mixes value types \['int', 'str'\]"),
    (pd.DataFrame({"a": ["x"]}), {"bins": {"a": [3, 1]}},
     r"^column 'a': bins must be at least two strictly increasing"),
    (pd.DataFrame({"a": ["x"]}), {"domains": {"a": ["x", "x"]}}, r"duplicate values"),
    (pd.DataFrame({"a": ["x"]}), {"exact": ["zz"]},
     r"^exact: names 'zz', which is not a column of the data"),
    (pd.DataFrame({"a": ["x"], "b": [1]}), {"sensitive": ["a"], "identifiers": ["a", "b"]},
     r"^column 'a': is named by both sensitive and identifiers; expected one role per column"),
    (pd.DataFrame({"a": ["x"]}), {"bins": {"q": [0, 1]}},
     r"^bins: names 'q', which is not a column of the data"),
])
def test_bad_input_messages(df, kwargs, msg):
    kwargs = dict(kwargs)
    if not any(k in kwargs for k in ("sensitive", "exact", "identifiers")):
        kwargs["sensitive"] = list(df.columns)
    elif "exact" in kwargs:
        kwargs["sensitive"] = list(df.columns)
    with pytest.raises(ValueError, match=msg):
        anonset.publish(df, anonset.Diversity(2), **kwargs)


def test_duplicate_and_empty_column_names():
    df = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ValueError, match=r"names the column\(s\) \['a'\] more than once"):
        Schema.infer(df, sensitive=["a"])
    df = pd.DataFrame([[1, 2]], columns=["a", ""])
    with pytest.raises(ValueError, match="has an empty or non-text column name ''"):
        Schema.infer(df, sensitive=["a"])


def test_empty_table():
    df = pd.DataFrame({"a": pd.Series([], dtype=str)})
    schema = Schema((Attribute("a", domain=("x", "y")),))
    with pytest.raises(ValueError, match=r"^data: is empty \(no rows\)"):
        anonset.publish(df, anonset.Diversity(2), schema)


def test_missing_as_category():
    df = pd.DataFrame({"a": ["x", None, "y", "x"]})
    schema = Schema((Attribute("a", domain=("x", "y", "?")),))
    pub = anonset.publish(df, anonset.Diversity(2), schema, missing="category", seed=0,
                          research_seed=True, keep_order=True)
    assert all(len(s) == 2 for s in pub.sets("a"))
    assert "?" in pub.sets("a")[1]


def test_identifier_never_published():
    df = pd.DataFrame({"ssn": ["1", "2", "3"], "a": list("xyx")})
    pub = anonset.publish(df, anonset.Diversity(2), seed=0, research_seed=True, identifiers=["ssn"],
                          sensitive=["a"])
    assert "ssn" not in pub.to_pandas().columns and "ssn" not in pub.schema


def test_schema_and_infer_options_conflict():
    df = pd.DataFrame({"a": list("xyx")})
    with pytest.raises(ValueError, match="either a schema or role arguments"):
        anonset.publish(df, anonset.Diversity(2), Schema.infer(df, sensitive=["a"]),
                        sensitive=["a"])


def test_missing_as_category_with_inferred_domain():
    df = pd.DataFrame({"a": ["x", None, "y", "x"], "b": list("uvuv")})
    pub = anonset.publish(df, anonset.Diversity(2), missing="category", seed=0, research_seed=True,
                          sensitive=["a", "b"], allow_rare=["a"])     # 'y', '?': one row each
    assert pub.schema["a"].domain == ("x", "y", "?")
    with pytest.raises(ValueError, match=r"column 'a': has 1 missing value"):
        anonset.publish(df, anonset.Diversity(2), seed=0, research_seed=True, sensitive=["a", "b"])


def test_a_schema_of_something_else_is_refused_by_name():
    """Schema([1]) failed with "'int' object has no attribute 'name'"."""
    import pytest
    import anonset
    for bad, needle in ((None, "got NoneType"), ([1], "holds 1"), ({"a": 1}, "holds 'a'"),
                        (anonset.Attribute("a", domain=("x", "y")), "got Attribute")):
        with pytest.raises(anonset.InputError, match=f"^attributes: {needle}"):
            anonset.Schema(bad)
