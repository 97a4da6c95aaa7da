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
    assert page.counts() == {"match": 1, "differs": 0, "not comparable": 1, "not decided": 0}
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


def test_reproduce_names_a_read_only_file_system(tmp_path, monkeypatch, capsys):
    """An --out folder on a read-only file system was refused expecting "a
    folder this user may write in"; the cause is named, and the folder the
    run made is removed."""
    import errno

    import anonset.reproduce as R

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(R.tempfile, "mkdtemp", read_only)
    out = tmp_path / "res"
    assert main(["reproduce", "003", "--quick", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert ("--out: cannot be written in (Read-only file system); expected a folder on a file "
            "system that is not read-only") in err, err
    assert not out.exists()


def test_an_interrupted_run_removes_the_folders_it_made_and_no_other(tmp_path, monkeypatch,
                                                                     capsys):
    """H119: stopped by a signal, reproduce said "no output is left
    half-written" and left the folders it made (and its marker file) on
    disk.  They are removed; a folder the user had is kept, with its files."""
    from anonset.reproduce import p003

    def stop(out, *a):
        (out / "grid.csv").write_text("half")
        raise KeyboardInterrupt
    monkeypatch.setattr(p003, "run", stop)
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "003", "--quick", "--no-progress", "--out", "new/sub"]) == 130
    assert "no output is left half-written" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    assert main(["reproduce", "003", "--quick", "--no-progress", "--out", "mine/a/b"]) == 130
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]

    # a file the user saves meanwhile in a folder the run made is kept: the
    # run removed the whole folder it had made (H126)
    def meanwhile(out, *a):
        (out / "grid.csv").write_text("half")
        (tmp_path / "results" / "notes.txt").write_text("keep")
        raise KeyboardInterrupt
    monkeypatch.setattr(p003, "run", meanwhile)
    assert main(["reproduce", "003", "--quick", "--no-progress", "--out",
                 "results/p003"]) == 130
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["notes.txt"]


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


# ---- H89: a page's verdicts and reasons follow from the numbers it wrote
def _rows(page):
    return {(f, r.item): r for f, r in page.rows}


def test_page_differs_without_a_reason_says_so_and_not_decided_is_counted(tmp_path):
    page = Page("999", "t", "cmd", "smoke")
    r = page.compare("Fig. 1", "x", "a", "b", "differs")
    page.compare("Fig. 2", "y", "a", "b", "not decided", "not decided: within timing noise")
    assert r.why == "reason not measured"
    assert page.counts()["not decided"] == 1
    assert "1 differ, 0 not comparable, 1 not decided" in page.write(tmp_path, 1.0).read_text()


def test_reduced_runs_name_every_reduction():
    from anonset.reproduce import p003, p004
    from anonset.reproduce.page import reductions
    assert reductions(p003.SCALES, "full", p003.REDUCED) == ""
    note = reductions(p003.SCALES, "quick", p003.REDUCED)
    assert "t {0.1, 0.3, 0.5} (full: {0.1, 0.2, 0.3, 0.4, 0.5})" in note
    note = reductions(p004.SCALES, "quick", p004.REDUCED)
    assert "Adult(i), i in {1, 2, 4," in note and "rows per stand-in 60,000" in note


def test_002_attack_row_checks_all_three_bounds():
    import pandas as pd
    from anonset.reproduce import p002_page
    at = pd.DataFrame({"method": ["mdp"], "k": [5], "l": [5], "l_occupation": [5],
                       "max_identity": [0.2], "bound_identity": [0.2], "max_value[sex]": [0.7],
                       "max_value[age]": [0.2], "max_value[occupation]": [0.2],
                       "max_value[salary]": [0.12], "max_excess[sex]": [0.03], "t_sex": [0.2]})
    page = Page("002", "t", "cmd", "full")
    p002_page._attack_row(page, at)
    assert page.rows[-1][1].verdict == "match"       # sex (under t) is not held to 1/l
    for col, v, what in (("max_value[age]", 0.9, "values"), ("max_excess[sex]", 0.5,
                                                              "sex excess")):
        bad = at.assign(**{col: v})
        p002_page._attack_row(page, bad)
        row = page.rows[-1][1]
        assert row.verdict == "differs" and what in row.why and f"{v:.3f}" in row.ours


def test_002_ncp_cdm_against_l_decided_against_the_spread_over_seeds():
    import pandas as pd
    from anonset.reproduce import p002_page
    g = pd.DataFrame({"method": "ncp", "k": [5, 5, 5], "l": [5, 10, 20],
                      "C_DM": [750_000, 670_000, 690_000]})
    seeds = pd.DataFrame({"method": "ncp", "k": 5, "l": 5, "seed": [2, 3],
                          "C_DM": [640_000, 700_000]})
    page = Page("002", "t", "cmd", "quick")
    p002_page._cdm_against_l(page, g, "ncp", seeds)
    row = page.rows[-1][1]
    assert row.verdict == "match" and "80,000 over l" in row.ours, row.ours
    p002_page._cdm_against_l(page, g, "ncp", seeds.assign(C_DM=[745_000, 752_000]))
    assert page.rows[-1][1].verdict == "differs"
    p002_page._cdm_against_l(page, g, "ncp", None)
    assert page.rows[-1][1].why.startswith("reason not measured")


def test_000_fig6_tests_the_stated_ordering():
    import pandas as pd
    from anonset.reproduce import p000_page
    rec = pd.DataFrame({"q": 4, "method": ["em", "value_adding", "rating", "random"],
                        "seconds": [0.25, 0.06, 3.0, 0.001]})
    page = Page("000", "t", "cmd", "full")
    p000_page._fig6_row(page, rec)
    row = page.rows[-1][1]
    assert row.verdict == "differs" and "faster than Rating" in row.why
    p000_page._fig6_row(page, rec.assign(seconds=[5.0, 0.06, 3.0, 0.001]))
    assert page.rows[-1][1].verdict == "match"


def test_000_fig5_times_the_sampler_and_names_the_checks():
    import pandas as pd
    from anonset.reproduce import p000_page
    anon = pd.DataFrame({"data": "census", "model": ["l", "l", "t"],
                         "method": ["proposed", "rating", "proposed"],
                         "seconds": [27.0, 2.0, 20.0], "sampler_seconds": [0.5, None, 0.4]})
    page = Page("000", "t", "cmd", "quick")
    p000_page._fig5_row(page, anon, 100_000)
    row = page.rows[-1][1]
    assert row.verdict == "match" and "98% of it anonset's pre-publication checks" in row.ours
    assert "reduced size" in row.why
    p000_page._fig5_row(page, anon.drop(columns="sampler_seconds"), 2_458_285)
    row = page.rows[-1][1]
    assert row.verdict == "differs" and "not timed apart" in row.why


def test_000_rating_wins_say_what_the_data_show():
    import pandas as pd
    from anonset.reproduce import p000_page
    rows = []
    for q, s, clipped, em, ra in ((1, 0, 1, 50.0, 0.0), (1, 1, 0, 40.0, 0.0),
                                  (4, 0, 1, 900.0, 800.0), (4, 1, 0, 700.0, 900.0)):
        base = dict(data="adult", model="l", value=2, q=q, subset=s)
        rows += [dict(base, method="em", L1=em), dict(base, method="rating", L1=ra,
                                                      rating_weaker=clipped)]
    said = p000_page._rating_wins(pd.DataFrame(rows), "adult")
    assert "buys it" not in said
    assert "q' = 1: Rating lower in 2 of 2, its L1 is 0 in every one of them" in said
    assert "q' = 4: Rating lower in 1 of 2" in said and "q' = 4: Rating lower in 1 of 2," \
        not in said


def test_001_violation_rows_check_closeness_too():
    import pandas as pd
    from anonset.reproduce import p001_page
    v = pd.DataFrame({"figure": 14, "F": [10, 10], "l": [2, 3], "d": [3, 3],
                      "eq11_bound": [0.222, 0.722], "exact_uniform": [0.378, 0.833],
                      "simulation": [0.377, 0.834]})
    page = Page("001", "t", "cmd", "full")
    p001_page._violation_rows(page, v)
    (_, low), (_, close) = page.rows
    assert low.verdict == "match" and close.verdict == "differs"
    assert "0.155" in close.ours and "exact_uniform" in close.why
    page = Page("001", "t", "cmd", "full")
    p001_page._violation_rows(page, v.assign(simulation=[0.23, 0.73]))
    assert [r.verdict for _, r in page.rows] == ["match", "match"]


def test_003_runtime_within_timer_noise_is_not_decided():
    import pandas as pd
    from anonset.reproduce import p003_page
    res = pd.DataFrame({"algorithm": ["pca"] * 3 + ["cluster"] * 3 + ["microagg"] * 3,
                        "k": 2, "t": [0.1, 0.3, 0.5] * 3,
                        "time_total": [0.7, 0.8, 0.78, 1.2, 1.1, 1.3, 0.9, 0.7, 0.75]})
    page = Page("003", "t", "cmd", "full")
    p003_page._runtime_row(page, res, 2)
    row = page.rows[-1][1]
    assert row.verdict == "not decided" and "within timing noise" in row.why
    p003_page._runtime_row(page, res.assign(time_total=[0.7, 0.71, 0.72] + [2.0] * 6), 2)
    assert page.rows[-1][1].verdict == "match"


def test_003_reasons_follow_the_grid():
    import pandas as pd
    from anonset.reproduce import p003_page
    sub = pd.DataFrame({"k": 20, "t": [0.3, 0.4], "il": [3.448, 3.657], "n_merges": [0, 0]})
    why = p003_page._rises_why(sub)
    assert "merges 0 and 0" in why and "1 of these rises have no merge" in why
    assert "greedy" not in why
    # a size floor explains only a mismatch where ours is larger and the
    # paper's is below the floor
    why = p003_page._min_size_why([(2, 0.1, 28, 8), (2, 0.4, 4, 6)], {0.1: 13, 0.4: 3})
    assert "1 of the 2 mismatches" in why and "k = 2, t = 0.4: 4 vs 6" in why


def test_004_page_names_every_lost_setting_and_the_adult_sets(tmp_path):
    from pathlib import Path
    import pandas as pd
    from anonset.reproduce import p004, p004_page
    d = Path(__file__).resolve().parents[1] / "docs" / "results" / "004"
    grid, adult = pd.read_csv(d / "grid.csv"), pd.read_csv(d / "adult.csv")
    fig5 = pd.read_csv(d / "fig5_relationship_gender.csv")
    page = Page("004", "t", "cmd", "quick")
    p004_page.write_page(page, grid, adult[adult.data != "Adult(3)"], fig5, "quick",
                         p004.SCALES["quick"])
    rows = {}
    for f, r in page.rows:
        rows.setdefault(f, r)
    lost = rows["Fig. 1"].why
    assert lost.count("q=") == 6 and "and 10 more" in lost, lost
    assert rows["Fig. 4(b)"].item == "average MSE over Adult(1..15) without Adult(3)"


def test_rating_names_a_numpy_string_column_plainly():
    import warnings
    import numpy as np
    import pandas as pd
    from anonset.partition.baselines import rating
    df = pd.DataFrame({"race": ["a"] * 90 + ["b"] * 10})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rel = rating(df, attributes=list(np.array(["race"])), l=2, clip_eligible=True,
                     seed="x" * 32, research_seed=True, allow_clear=["race"])
    msgs = [str(x.message) for x in w]
    assert any("'race'" in m for m in msgs) and not any("np.str_" in m for m in msgs), msgs
    assert list(rel.info["clipped"]) == ["race"] and type(list(rel.info["clipped"])[0]) is str


def test_a_run_stages_inside_its_out_folder(tmp_path, monkeypatch, capsys):
    """H144: the run staged its files beside --out and moved them in at the
    end: a --out folder that is a mount point failed then with EXDEV (every
    result lost), and an empty writable one under a parent the user may not
    write in was refused.  It stages inside --out, moving by renames there;
    a folder a killed run left is no file of the user's, and is removed."""
    import os
    from anonset.reproduce import p003
    seen = []

    def fake(out, scale, prog, page):
        seen.append(out)
        (out / "grid.csv").write_text("x\n")
        (out / "sub").mkdir()
        (out / "sub" / "f.csv").write_text("y\n")
    monkeypatch.setattr(p003, "run", fake)
    out = tmp_path / "out"
    out.mkdir()
    dead = out / ".anonset-reproduce-999999999-abc.partial"      # a killed run's
    dead.mkdir()
    (dead / "grid.csv").write_text("half")
    assert main(["reproduce", "003", "--quick", "--no-progress", "-q", "--out", str(out)]) == 0
    assert seen[0].parent == out and seen[0].name.startswith(f".anonset-reproduce-{os.getpid()}-")
    assert sorted(p.name for p in out.iterdir()) == [".anonset-reproduce", "README.md",
                                                      "grid.csv", "sub"]
    assert (out / "sub" / "f.csv").read_text() == "y\n"

    # an interrupted run in an existing, empty folder leaves it empty
    def stop(out, *a):
        (out / "grid.csv").write_text("half")
        raise KeyboardInterrupt
    monkeypatch.setattr(p003, "run", stop)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["reproduce", "003", "--quick", "--no-progress", "--out", str(empty)]) == 130
    assert empty.is_dir() and list(empty.iterdir()) == []
    # a live run's own folder (its lock held) is refused
    import fcntl
    live = empty / ".anonset-reproduce-1-abc.partial"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        capsys.readouterr()
        assert main(["reproduce", "003", "--quick", "--no-progress", "--out", str(empty)]) == 2
        assert "is being written by another run" in capsys.readouterr().err
    finally:
        os.close(fd)


def test_a_results_page_names_the_source_that_made_it():
    """H146: every page said 'anonset 0.1.0', made by different code; the
    header now names a digest of the package's source and the keys."""
    import re
    from anonset.reproduce.page import machine_line, source_digest
    d = source_digest()
    assert re.fullmatch(r"[0-9a-f]{12}", d) and d == source_digest()
    line = machine_line()
    assert f"(source {d})" in line and "research seeds" in line


def test_a_killed_runs_folder_is_told_by_its_lock_not_its_process_id(tmp_path):
    """H148: in a container a run is process 1, and so is the next one: the
    folder a killed run left was taken for a live run's (process 1 lives)
    and blocked --out for good.  A run holds a lock on its folder while it
    lives; a folder whose lock is free is a killed run's, and a live one's
    is refused as such."""
    import fcntl
    import os
    from anonset.reproduce import _remove_stale, check_out
    out = tmp_path / "res"
    out.mkdir()
    left = out / ".anonset-reproduce-1-abcd1234.partial"        # process 1 is alive
    left.mkdir()
    (left / "fig.png").write_bytes(b"x")
    check_out(out, "003")                       # a killed run's folder: no file of the user's
    _remove_stale(out)
    assert list(out.iterdir()) == []
    live = out / ".anonset-reproduce-1-efgh5678.partial"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(ValueError, match="is being written by another run"):
            check_out(out, "003")
        _remove_stale(out)
        assert live.is_dir()
    finally:
        os.close(fd)
