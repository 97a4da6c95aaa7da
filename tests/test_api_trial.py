"""What a user of the Python API met in a notebook (trial H14, 2026-11-29):
bad input raised plain ValueErrors naming nothing, a wrong name got no
hint, a result's repr dumped the original rows, and the semantic EM's
documented example stopped at its cap."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import InputError


def test_bad_input_is_an_input_error_that_names_the_parameter():
    from anonset import semantic as S
    from anonset.partition import lgb as L
    with pytest.raises(InputError, match=r"p and q differ in length \(2 != 1\)"):
        anonset.emd([.5, .5], [1.])
    with pytest.raises(InputError, match="ground must be"):
        anonset.emd([.5, .5], [.5, .5], ground="foo")
    df = pd.DataFrame({"occupation": list("abcd") * 25, "age": np.arange(100)})
    with pytest.raises(InputError, match=r"^density: got 2\.0; expected a number in \[0, 1\]"):
        L.draw_flags(df, ["age"], 2.0)
    # a misspelt column was given flags all the same (the error came later)
    with pytest.raises(InputError, match=r"^attributes: names 'ocupation', which is not a "
                                         r"column of the data \(did you mean 'occupation'\?\)"):
        L.draw_flags(df, ["ocupation"], 0.2)
    with pytest.raises(InputError, match=r"^flags: gives no flags for the semi-sensitive "
                                         r"attribute\(s\) \['age'\]"):
        L.lgb(df, qi=["occupation"], semi_sensitive=["age"], k=2, l={"age": 2}, flags={})
    with pytest.raises(InputError, match=r"^sensitive: got \['occupation'\]; expected one "
                                         r"column's name, a string .*sensitive='occupation'\)"):
        S.semantic_publish(df, ["occupation"], l=2, d=1, qids=["age"])


def test_semantic_analyze_names_its_estimator_apart_from_its_method():
    """reconstruct's method= is the estimator; analyze's is how the
    selection probabilities are computed: method='em' said only 'method
    must be auto, exact, montecarlo or paper'."""
    from anonset import semantic as S
    from anonset.datasets import semantic as SD
    ds = SD.income(n=2000)
    tab = S.semantic_publish(ds.frame, ds.sensitive, 3, 2, qids=list(ds.qids),
                             domain=list(ds.domain), allow_clear=[ds.sensitive])
    with pytest.raises(InputError, match=r"^method: got 'em', an estimator; .* the estimator "
                                         r"is estimator='em'"):
        S.analyze(tab, method="em")
    with pytest.raises(InputError, match=r"^estimator: got 'foo'; expected one of linear, em"):
        S.analyze(tab, estimator="foo")


def test_the_semantic_example_converges_at_the_default_cap():
    """docs/semantic.md's first example needs 2,500-9,400 EM updates
    (eight fresh keys): at the cap of 3,000 it warned NOT converged as
    written, most of the time.  The cap is a safety cap of 20,000 now, as
    reconstruct's."""
    from anonset import semantic as S
    from anonset.datasets import semantic as SD
    ds = SD.income()
    tab = S.semantic_publish(ds.frame, "income", l=3, d=2, qids=ds.qids, domain=ds.domain,
                             # a key whose release needs more than 3,000 (5,741)
                             algorithm="duplicate", seed="5feceb66ffc86f38d952786c6d696c79")
    with warnings.catch_warnings():
        warnings.simplefilter("error", anonset.ConvergenceWarning)
        ct = S.analyze(tab, ["age", "sex"], estimator="em")
    assert ct.info["converged"] and ct.info["iterations"] > 3000


def test_a_partition_result_prints_no_row():
    """repr(MSAResult) was about 8 KB: the class of every input row and the
    problem with the original table; LGBResult's the original codes."""
    from anonset.partition import lgb as L
    from anonset.partition import msa as M
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = anonset.datasets.load_adult().iloc[:1500][["age", "sex", "occupation", "race"]]
        res = M.anonymize_msa(df, ["age", "sex"], ["occupation", "race"], 5, 0.5)
        lgb = L.lgb(df, qi=["age", "sex"], sensitive=["occupation"], k=5,
                    l={"occupation": 3}, drop=["race"])
    for r in (res, lgb):
        text = repr(r)
        assert len(text) < 200, text
        assert not any(v in text for v in ("Craft-repair", "Female", "White")), text


def test_crosstabs_are_compared_by_their_attributes_not_their_axes():
    """metrics.compare of reconstruct(pub, ['b', 'a']) with the truth over
    ['a', 'b'] compared cell by cell (same shape): L1/N 0.98 for 0.23,
    silently (H26).  The estimate is lined up by name; other attributes or
    domains are refused; CrossTab == raised on its arrays (H26)."""
    rng = np.random.default_rng(4)
    n = 3000
    df = pd.DataFrame({"a": rng.choice(list("pqrs"), n, p=[.5, .3, .15, .05]),
                       "b": rng.choice(list("wxyz"), n, p=[.1, .2, .3, .4])})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"],
                          domains={"a": list("pqrs"), "b": list("wxyz")}, allow_clear=["a", "b"])
    truth = anonset.true_crosstab(df, pub, ["a", "b"])
    ab = anonset.reconstruct(pub, ["a", "b"], method="em")
    ba = anonset.reconstruct(pub, ["b", "a"], method="em")
    swapped = anonset.metrics.compare(truth, ba)
    by_hand = anonset.metrics.compare(truth.counts, ba.counts.T)     # arrays: as given
    assert swapped == by_hand
    assert swapped["L1/N"] == pytest.approx(anonset.metrics.compare(truth, ab)["L1/N"],
                                            abs=0.01)
    with pytest.raises(InputError, match="over \\['a', 'b'\\] and the estimate over \\['a'\\]"):
        anonset.metrics.compare(truth, anonset.reconstruct(pub, ["a"], method="em"))
    assert ab.equals(ab) and not ab.equals(ba) and ab == ab and not (ab == ba)
    again = anonset.reconstruct(pub, ["a", "b"], method="em")
    assert ab.equals(again)


def test_a_pickled_release_does_not_carry_its_input_rows():
    """source_rows (each published row's input position, in memory only for
    the data holder's audit) travelled in a pickle: of an input sorted by a
    sensitive column, the recipient read every value off its position
    (H26).  Pickled, the release is the file's: no source rows."""
    import pickle
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"job": np.sort(rng.choice(list("pqrstu"), 600))})
    pub = anonset.publish(df, anonset.Diversity(3), sensitive=["job"],
                          domains={"job": list("pqrstu")})
    assert pub.source_rows is not None                  # the holder's, in memory
    back = pickle.loads(pickle.dumps(pub))
    assert back.source_rows is None
    assert back.sets("job") == pub.sets("job")
    assert pub.source_rows is not None                  # the original keeps its own


def test_bins_ground_and_mixed_pass_through_are_refused_naming_the_parameter(tmp_path):
    """H125: bins edges that are not numbers were a ValueError or TypeError
    from inside the binning; msa's ground='equal' a ValueError from dict();
    a pass-through column of text and numbers refused by Parquet as
    'e.g. blue', which Parquet stores."""
    from anonset.msa import anonymize_msa
    rng = np.random.default_rng(1)
    d = pd.DataFrame({"age": rng.integers(18, 90, 300), "job": rng.choice(list("abcd"), 300),
                      "city": rng.choice(list("xyz"), 300)})
    for edges in (["a", "b"], [0, None, 120], [[0, 1], [2, 3]], [0, float("nan"), 99]):
        with pytest.raises(InputError, match=r"^bins: column 'age': has the edge .*; expected "
                                             r"numbers in increasing order"):
            anonset.publish(d, anonset.Diversity(2), sensitive=["age", "job"], exact=["city"],
                            bins={"age": edges})
    for ground in ("equal", 5):
        with pytest.raises(InputError, match=r"^ground: got .*; expected a mapping \{SA: "):
            anonymize_msa(d, ["age"], ["job"], 5, 0.5, ground=ground, drop=["city"])
    # (numpy's str_ cells too, as rng.choice makes them: H130)
    d["note"] = pd.Series([np.str_("blue"), 5] * 150, dtype=object)
    pub = anonset.publish(d, anonset.Diversity(2), sensitive=["job"], exact=["city"],
                          other=["note"], drop=["age"], domains={"job": list("abcd")},
                          allow_recode=["note"], allow_identifier=["note"])
    with pytest.raises(InputError, match=r"column 'note': mixes value types \['number', "
                                         r"'str'\], which a Parquet column cannot hold"):
        pub.to_parquet(tmp_path / "o.parquet")
    assert list(tmp_path.iterdir()) == []


def test_text_read_by_pandas_and_by_arrow_is_one_release(tmp_path):
    """H125: a text pass-through column held as Python strings (object, as
    pandas reads many files) and as pandas' string type gave a release that
    was not ``equals`` and a Parquet file of another string type."""
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(2)
    d = pd.DataFrame({"job": rng.choice(list("abcd"), 200),
                      "note": pd.Series([f"n{i % 7}" for i in range(200)], dtype=object)})
    kw = dict(sensitive=["job"], other=["note"], domains={"job": list("abcd")},
              allow_recode=["note"], seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
    one = anonset.publish(d, anonset.Diversity(2), **kw)
    two = anonset.publish(pa.Table.from_pandas(d, preserve_index=False), anonset.Diversity(2),
                          **kw)
    assert one.equals(two)
    one.to_parquet(tmp_path / "a.parquet")
    two.to_parquet(tmp_path / "b.parquet")
    import pyarrow.parquet as pq
    assert pq.read_schema(tmp_path / "a.parquet").field("note").type == \
        pq.read_schema(tmp_path / "b.parquet").field("note").type
