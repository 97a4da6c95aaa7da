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
