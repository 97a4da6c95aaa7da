"""Hierarchies written into a release's metadata read back as the same tree."""
import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import anonset
from anonset.hierarchy import Hierarchy

# labels as a file would hold them after stripping: no surrounding spaces,
# but any delimiter, quote or line break inside
LABEL = st.text(st.sampled_from(list("ab;\"',\n x")), min_size=1, max_size=5).map(
    str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(leaves=st.lists(LABEL, min_size=1, max_size=6, unique=True),
       groups=st.lists(LABEL, min_size=1, max_size=3), delimiter=st.sampled_from([";", ","]))
def test_to_csv_reads_back_as_the_same_tree(leaves, groups, delimiter):
    h = Hierarchy([[v, groups[i % len(groups)], "*"] for i, v in enumerate(leaves)])
    assert Hierarchy.from_csv(h.to_csv(delimiter), delimiter=delimiter).paths == h.paths


def test_a_label_with_the_delimiter_survives_a_release(tmp_path):
    # before, to_csv joined labels with ';' unquoted: the release was
    # written, and reading it failed ("line 2 has 3 levels, expected 4")
    h = Hierarchy([["a;b", "x", "*"], ["c", "x", "*"], ["d", "y;z", "*"], ['e"q', "y;z", "*"]])
    df = pd.DataFrame({"job": np.resize(["a;b", "c", "d", 'e"q'], 40)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["job"], hierarchies={"job": h},
                          seed=1, research_seed=True)
    pub.to_parquet(tmp_path / "h.parquet")
    pub.to_csv(tmp_path / "h.csv")
    for back in (anonset.read_parquet(tmp_path / "h.parquet"),
                 anonset.read_csv(tmp_path / "h.csv")):
        assert back.schema["job"].hierarchy.paths == h.paths and back.equals(pub)


def test_a_hierarchy_given_as_its_rows_is_read_as_its_file_is(tmp_path):
    """An ARX hierarchy read with pandas (a DataFrame of leaf, ..., root) or
    written as a list of rows is the hierarchy its file is, for publish, lgb
    and msa (a DataFrame was turned into its repr: "every line needs at
    least a leaf and a root (got ['0      1  2'])"); anything else is refused
    naming the column and what a hierarchy may be."""
    import pytest
    from anonset.partition.msa import MSAProblem
    text = "13053;1305*;*\n13068;1306*;*\n13072;1307*;*\n"
    (tmp_path / "zip.csv").write_text(text)
    framed = pd.read_csv(tmp_path / "zip.csv", sep=";", header=None)     # leaves as int64
    assert framed.dtypes[0] == np.int64
    rows = [line.split(";") for line in text.splitlines()]
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"zip": rng.choice([13053, 13068, 13072], 60),
                       "job": rng.choice(list("abcd"), 60), "age": rng.integers(20, 60, 60)})
    key = "3c1f9a7e5b2d4068a1c3e5f7092b4d6e"
    outs = []
    for h in (str(tmp_path / "zip.csv"), framed, rows, Hierarchy.from_csv(text)):
        pub = anonset.publish(df, anonset.Closeness(0.5), sensitive=["zip", "job"], drop=["age"],
                              hierarchies={"zip": h}, domains={"job": list("abcd")}, seed=key)
        res = anonset.lgb.lgb(df, qi=["zip", "age"], sensitive=["job"], k=3, l=2,
                              hierarchies={"zip": h}, seed=key)
        msa = MSAProblem(df, ["zip", "age"], ["job"], hierarchies={"zip": h})
        outs.append((pub, res.table, msa.run("pca", 3, 0.6, seed=key).generalized()))
    for pub, table, gen in outs[1:]:
        assert pub.equals(outs[0][0]) and table.equals(outs[0][1]) and gen.equals(outs[0][2])
    assert outs[0][0].params["zip"].ground == "hierarchical"
    for bad, what in ((5, "got an object of type int"), ({"13053": "1305*"}, "of type dict"),
                      ([["13053"], ["13068", "1306*", "*"]], "every row as deep")):
        with pytest.raises(anonset.InputError, match="column 'zip'") as e:
            anonset.publish(df, anonset.Diversity(2), sensitive=["zip", "job"], drop=["age"],
                            hierarchies={"zip": bad}, domains={"job": list("abcd")})
        assert what in str(e.value) and "\n" not in str(e.value)
