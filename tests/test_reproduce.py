"""``anonset reproduce``: every paper's grid runs end to end at the smoke
scale and writes its tables, figures and a results page whose rows carry a
verdict; the CLI and the progress display."""
import pytest

pytest.importorskip("matplotlib")

from anonset.cli import main
from anonset.reproduce import PAPERS, run
from anonset.reproduce.page import VERDICTS, Page
from anonset.reproduce.progress import Progress


def test_page_rejects_unknown_verdicts_and_counts_rows(tmp_path):
    page = Page("999", "t", "cmd", "smoke")
    page.compare("Fig. 1", "x", "a", "b", "match")
    page.compare("Fig. 2", "y", "a", "b", "not comparable", "why")
    with pytest.raises(ValueError):
        page.compare("Fig. 3", "z", "a", "b", "maybe")
    assert page.counts() == {"match": 1, "differs": 0, "not comparable": 1}
    text = page.write(tmp_path, 1.0).read_text()
    assert "2 comparisons -- 1 match, 0 differ, 1 not comparable" in text
    assert "Machine:" in text and "| Fig. 2 | y | a | b | **not comparable** | why |" in text


def test_progress_plain_line(capsys):
    import sys
    p = Progress("004", 2, stream=sys.stderr)
    p._bar = None                                  # the plain display, tqdm or not
    p.step("Fig. 1")
    p.close()
    assert "reproduce 004: 1/2 Fig. 1" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_runs_at_smoke_scale(paper, tmp_path):
    res = run(paper, scale="smoke", out=tmp_path, progress=False)
    text = res["page"].read_text()
    assert sum(res["counts"].values()) >= 5
    assert all(v in VERDICTS for v in res["counts"])
    assert list(tmp_path.glob("*.png")) and list(tmp_path.glob("*.csv"))
    assert "## The paper's results beside ours" in text


def test_reproduce_cli_smoke_004(tmp_path, monkeypatch, capsys):
    """The subcommand, on paper 004 shrunk to a few hundred rows."""
    from anonset.reproduce import p004
    tiny = dict(p004.SCALES["smoke"], rows=800, queries=5, adult_rows=800,
                adult_sets=(8,), adult_ls=(2,))
    monkeypatch.setitem(p004.SCALES, "quick", tiny)
    rc = main(["reproduce", "004", "--quick", "--no-progress", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "README.md" in out and "match" in out
    page = (tmp_path / "README.md").read_text()
    assert "anonset reproduce 004 --quick" in page and "stand-in" in page
    for f in ("grid.csv", "adult.csv", "fig1_mse_vs_q.png", "fig5_relationship_gender.png"):
        assert (tmp_path / f).exists()


def test_reproduce_cli_names_an_out_folder_it_cannot_make(tmp_path, capsys):
    """H66: a folder that cannot be made was refused as "'DIR' No such file
    or directory", naming no option."""
    from anonset.cli import main
    (tmp_path / "file").write_text("x")
    assert main(["reproduce", "001", "--quick", "--no-progress",
                 "--out", str(tmp_path / "file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out: could not be made a folder" in err, err


def test_reproduce_cli_rejects_unknown_paper(capsys):
    assert main(["reproduce", "005"]) == 2


@pytest.mark.parametrize("kind, q, l", [("OCC", 2, 10), ("SAL", 1, 5)])
def test_004_workload_paths_give_the_same_answers(kind, q, l, monkeypatch):
    """Paper 004's evaluation from the per-point tables (taken on the stand-in,
    where points are fewer than rows) equals the query-by-query evaluation:
    true counts and the Proposal's EM estimates exactly, the baselines' up
    to summation order."""
    import numpy as np
    from anonset.partition.baselines import cells as C
    from anonset.partition.baselines import queries as Q
    from anonset.reproduce import p004
    ds = p004.ipums(kind, 3, 6_000)
    assert C.dense_ok(ds.cells.n_points, ds.scodes.size, ds.d_s)
    rels = [p004.Release(m, ds, l, "t") for m in p004.METHODS]
    qs = Q.random_queries(ds.dom, ds.d_s, q, 0.07, 40, ordered=ds.ordered,
                          ordered_s=ds.ordered_s, seed=9)
    X1, N1, E1 = p004.workload_answers(ds, rels, qs)
    monkeypatch.setattr(C, "dense_ok", lambda *a: False)
    X0, N0, E0 = p004.workload_answers(ds, rels, qs)
    assert np.array_equal(N0, N1) and (N1 > 0).any()
    assert all(np.array_equal(a, b) for a, b in zip(X0, X1))
    assert set(E0) == set(E1) == set(p004.METHODS)
    assert all(np.array_equal(a, b) for a, b in zip(E0["Proposal"], E1["Proposal"]))
    for m in ("TP", "Anatomy", "Mondrian"):
        for a, b in zip(E0[m], E1[m]):
            np.testing.assert_allclose(b, a, rtol=1e-11, atol=1e-9)


@pytest.mark.parametrize("attrs", [["a"], ["a", "b"], ["a", "b", "c", "w"], ["w", "v"]])
def test_p000_distinct_set_tuples_matches_pattern_counter(attrs):
    """The packed-word count of distinct set tuples (the exact EM's cost)
    against PatternCounter, with and without the 64-bit packing."""
    import numpy as np
    import pandas as pd
    import anonset
    from anonset.randomized.reconstruct import PatternCounter
    from anonset.reproduce.p000 import distinct_set_tuples
    rng = np.random.default_rng(5)
    doms = {"a": 3, "b": 7, "c": 12, "w": 40, "v": 30}
    df = pd.DataFrame({k: rng.integers(0, d, 3000) for k, d in doms.items()})
    schema = anonset.Schema(tuple(anonset.Attribute(k, domain=tuple(range(d)))
                                  for k, d in doms.items()))
    pub = anonset.publish(df, anonset.Diversity(2), schema, seed=7, research_seed=True)
    pc = PatternCounter([pub.mask(a).shape[1] for a in attrs])
    pc.add_masks([pub.mask(a) for a in attrs])
    assert distinct_set_tuples(pub, attrs) == len(pc.result()[1]) > 1
