"""The release report (issue 18): one self-contained HTML page per release
kind -- randomized sets (papers 000 and 004), semantic sets (001), LGB (002)
and MSA (003) -- whose figures are those of the audit, loaded in headless
Chromium with no console message and no request (skipped, with the reason,
where Chromium is absent).

The key figures are read back from the page's ``data-*`` attributes and
compared with numbers computed here independently: the audit run directly,
the epsilon table, the published parameters, the release objects' own
k, t, C_DM and information loss.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import lgb as L
from anonset.partition.lgb.metrics import c_dm
from anonset.partition.lgb.verify import verify as lgb_verify
from anonset.audit import epsilon_table
from anonset.audit.html import report
from anonset.audit.html.charts import top_k
from anonset.cli import main
from anonset.datasets import adult_hierarchy, load_adult
from anonset.msa import anonymize_msa

pytest.importorskip("matplotlib")

SEED = "report-test"
N_TARGETS = 300


# ================================================================ the page
class Dom(HTMLParser):
    """Every element's tag and attributes, the text of <title>s, and the
    URLs the page refers to."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements, self.urls, self.titles, self._title = [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        for k in ("src", "href", "xlink:href", "action", "poster", "data"):
            if a.get(k):
                self.urls.append((tag, k, a[k]))
        if tag == "title":
            self._title = []

    def handle_data(self, data):
        if self._title is not None:
            self._title.append(data)

    def handle_endtag(self, tag):
        if tag == "title" and self._title is not None:
            self.titles.append("".join(self._title))
            self._title = None

    def find(self, **attrs) -> list:
        return [a for _, a in self.elements
                if all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def one(self, **attrs) -> dict:
        found = self.find(**attrs)
        assert len(found) == 1, (attrs, len(found))
        return found[0]


def rows_with(dom: Dom, key: str) -> list:
    return [a for _, a in dom.elements if key in a and _ == "tr"]


def number(text: str) -> float:
    return math.inf if text == "inf" else float(text)


def assert_self_contained(html: str) -> None:
    """No script, no external reference, a policy that forbids loading,
    every figure with alt text, every id unique."""
    dom = Dom(html)
    tags = [t for t, _ in dom.elements]
    assert "script" not in tags and "iframe" not in tags and "link" not in tags
    assert "<script" not in html.lower() and "@import" not in html and "url(http" not in html
    for tag, k, url in dom.urls:
        assert url.startswith("#") or url.startswith("data:"), (tag, k, url)
    csp = [a for t, a in dom.elements if t == "meta" and a.get("http-equiv") ==
           "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]
    svgs = [a for t, a in dom.elements if t == "svg"]
    assert svgs, "a report without figures"
    for a in svgs:
        assert a.get("role") == "img" and a.get("aria-labelledby")
        alt = dom.one(id=a["aria-labelledby"])
        assert alt is not None
    alts = [t for t in dom.titles[1:] if t]
    assert len(alts) >= len(svgs) and all(len(t) > 20 for t in alts[:len(svgs)])
    ids = [a["id"] for _, a in dom.elements if "id" in a]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1][:5]


# =============================================================== releases
def _table(n=400, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    jobs = [f"occupation number {i} with a rather long name" for i in range(20)]
    return pd.DataFrame({
        "name": [f"person {i}" for i in range(n)],
        "age": rng.choice([20, 30, 40, 50, 60], n, p=[.3, .3, .2, .1, .1]),
        "job": rng.choice(jobs, n, p=np.r_[np.full(10, .08), np.full(10, .02)]),
        "city": rng.choice(list("ABCD"), n),
        "zip": rng.choice(["z1", "z2", "z3"], n)})


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Five releases on disk with their originals: {kind: (release path,
    original path, object)}."""
    d = tmp_path_factory.mktemp("report")
    out = {}
    df = _table()
    df.to_csv(d / "people.csv", index=False)
    pub = anonset.publish(df, anonset.Closeness(0.3), sensitive=["age", "job", "city"],
                          identifiers=["name"], drop=["zip"], seed=SEED, research_seed=True)
    pub.to_parquet(d / "sets.parquet")
    out["sets"] = (d / "sets.parquet", d / "people.csv", pub)
    pub = anonset.publish(df, anonset.Diversity(3), sensitive=["job", "city"],
                          exact=["zip"], identifiers=["name"], drop=["age"], seed=SEED,
                          research_seed=True)
    pub.to_csv(d / "qid.csv")
    out["sets-qid"] = (d / "qid.csv", d / "people.csv", pub)
    from anonset import semantic as S
    rng = np.random.default_rng(1)
    sem = pd.DataFrame({"sex": rng.choice(["f", "m"], 300), "income": rng.integers(0, 8, 300)})
    sem.to_parquet(d / "sem_orig.parquet")
    tab = S.semantic_publish(sem, "income", l=2, d=2, qids=["sex"], domain=list(range(8)),
                             seed=SEED, research_seed=True)
    tab.to_parquet(d / "sem.parquet")
    out["semantic"] = (d / "sem.parquet", d / "sem_orig.parquet", tab)
    adult = load_adult().iloc[:600].reset_index(drop=True)
    adult.to_parquet(d / "adult.parquet")
    qi, semi, sens = ["relationship", "race"], ["sex", "age", "occupation"], ["fnlwgt"]
    res = L.lgb(adult, qi=qi, semi_sensitive=semi, sensitive=sens,
                flags=L.draw_flags(adult, semi, 0.3, seed=1),
                drop=[c for c in adult.columns if c not in qi + semi + sens],
                k=4, l=3, closeness={"sex": 0.3}, seed=SEED, research_seed=True,
                hierarchies={"occupation": adult_hierarchy("occupation")})
    res.write(d / "lgb.parquet")
    out["lgb"] = (d / "lgb.parquet", d / "adult.parquet", res)
    qi, sa = ["age", "sex", "race"], ["occupation", "education-num"]
    r = anonymize_msa(adult, qi, sa, k=5, t=0.4, hierarchies={
        "occupation": adult_hierarchy("occupation")}, other=["salary-class"],
        drop=[c for c in adult.columns if c not in qi + sa + ["salary-class"]],
        seed=SEED, research_seed=True)
    r.write(d / "msa.parquet")
    out["msa"] = (d / "msa.parquet", d / "adult.parquet", r)
    return out


@pytest.fixture(scope="module")
def pages(cases, tmp_path_factory):
    """The report of every release, with its original, as written."""
    d = tmp_path_factory.mktemp("pages")
    out = {}
    for kind, (path, orig, _) in cases.items():
        methods = ["em", "exact_em"] if kind == "sets" else None if kind == "semantic" \
            else ["em"]
        # a partition release's page takes none of a set table's options
        page = report(path, d / f"{kind}.html", original=orig) if kind in ("lgb", "msa") \
            else report(path, d / f"{kind}.html", original=orig, n_targets=N_TARGETS, seed=7,
                        methods=methods)
        assert page.path.read_text(encoding="utf-8") == page.html
        out[kind] = page
    return out


# ============================================================ the figures
_AUDITS: dict = {}


def _audit_of(kind, cases):
    if kind not in _AUDITS:
        _AUDITS[kind] = _run_audit(kind, cases)
    return _AUDITS[kind]


def _run_audit(kind, cases):
    path, orig, _ = cases[kind]
    table = anonset.read_csv(path) if str(path).endswith(".csv") else anonset.read_parquet(path)
    original = pd.read_csv(orig) if str(orig).endswith(".csv") else pd.read_parquet(orig)
    return table, anonset.audit(table, original, attack=True, n_targets=N_TARGETS, seed=7,
                                known=min(1, len(table.names) - 1 - sum(
                                    table.params[n].exact for n in table.names)))


def check_randomized(kind, dom: Dom, cases) -> None:
    table, rep = _audit_of(kind, cases)
    v = dom.one(id="verdict")
    assert v["data-verdict"] == rep.verdict
    assert v["data-risks"] == str(len(rep.risks)) and v["data-failures"] == str(
        len(rep.failures))
    assert dom.one(id="rows")["data-value"] == str(table.n_rows)
    assert dom.one(id="key")["data-value"] == table.info["key"]
    eps = epsilon_table(table)
    for r in eps.itertuples():
        got = dom.find(data_attribute=r.attribute)
        got = [a for a in got if "data-epsilon" in a]
        assert got and all(number(a["data-epsilon"]) == pytest.approx(r.epsilon) for a in got)
    for n in table.names:
        par = table.params[n]
        got = [a for a in dom.find(data_attribute=n) if "data-eta" in a and "data-p" in a]
        assert got and all(a["data-eta"] == str(par.eta) and float(a["data-p"]) ==
                           pytest.approx(par.p) for a in got)
    checks = rows_with(dom, "data-check")
    # the page's file holds only the columns its metadata describes (a
    # check of the file, which the table in memory has no part in)
    assert [a["data-status"] for a in checks if a["data-check"] == "columns"] == ["pass"]
    checks = [a for a in checks if a["data-check"] != "columns"]
    # a table read back from the file carries that file's row too (H86)
    rc = rep.checks[rep.checks["check"] != "columns"]
    assert len(checks) == len(rc)
    got = sorted((a["data-check"], a["data-attribute"], a["data-status"]) for a in checks)
    assert got == sorted(zip(rc["check"], rc["attribute"], rc["status"]))
    att = {a["data-attribute"]: a for a in rows_with(dom, "data-success")}
    assert set(att) == set(rep.attack.summary["attribute"])
    for r in rep.attack.summary.itertuples():
        assert float(att[r.attribute]["data-success"]) == pytest.approx(r.success)


def check_utility(kind, dom: Dom, cases) -> None:
    """The error of every reconstruction on the page is that of
    anonset.reconstruct against the truth."""
    path, orig, _ = cases[kind]
    table, _ = _audit_of(kind, cases)
    original = pd.read_csv(orig) if str(orig).endswith(".csv") else pd.read_parquet(orig)
    rows = rows_with(dom, "data-l1")
    assert rows
    for a in rows:
        attrs = (a.get("data-pair") or a.get("data-marginal")).split(":")
        truth = anonset.true_crosstab(original, table.schema, attrs)
        if kind == "semantic":
            from anonset import semantic as S
            qids = [x for x in attrs if x != "income"]
            est = S.analyze(table, qids, estimator=a["data-method"].split("_", 1)[1])
        else:
            est = anonset.reconstruct(table, attrs, a["data-method"])
        assert float(a["data-l1"]) == pytest.approx(anonset.metrics.l1(truth, est), rel=1e-9)
        assert float(a["data-hellinger"]) == pytest.approx(
            anonset.metrics.hellinger(truth, est), rel=1e-9)


def check_partition(kind, dom: Dom, cases) -> None:
    _, _, res = cases[kind]
    v = dom.one(id="verdict")
    assert dom.one(id="rows")["data-value"] == str(len(res.table) if kind == "lgb"
                                                   else res.problem.n)
    checks = {(a["data-check"], a["data-attribute"]): a for a in rows_with(dom, "data-check")}
    if kind == "msa":
        k = checks[("classes_k", "-")]
        assert int(k["data-value"]) == res.k_achieved and k["data-status"] == "pass"
        t = max(float(a["data-value"]) for (c, _), a in checks.items() if c == "classes_t")
        assert t == pytest.approx(res.t_achieved, abs=1e-9)
        il = dom.one(data_utility="information loss IL_T (eq. 1, recorded at publishing)")
        assert float(il["data-value"]) == pytest.approx(res.information_loss())
    else:
        g = checks[("groups", "-")]
        assert int(g["data-value"]) == int(np.bincount(res.gid).min())
        assert lgb_verify(res)["ok"]
        assert all(a["data-status"] == "pass" for (c, _), a in checks.items()
                   if c in ("groups", "buckets", "bucket_closeness"))
        cdm = dom.one(data_utility="discernibility C_DM (sum of squared group sizes)")
        assert int(cdm["data-value"]) == c_dm(res)
    # every QI cell is generalized (lgb: within its group, msa: its class)
    n = len(res.table) if kind == "lgb" else res.problem.n
    qis = [a for a in rows_with(dom, "data-cells") if a["data-role"] in ("qi", "quasi_identifier")]
    assert qis and all(int(a["data-cells"]) == n for a in qis)
    # conforms; the research seed is the one risk the publisher named
    assert v["data-verdict"] == "RISKS FOUND" and v["data-failures"] == "0"
    assert checks[("key", "-")]["data-status"] == "risk"


def check_page(kind, html: str, cases) -> None:
    dom = Dom(html)
    assert dom.one(data_anonset_report="1")["data-kind"] == kind
    assert dom.one(id="confidential")        # made with the original: it says so
    if kind in ("lgb", "msa"):
        check_partition(kind, dom, cases)
    else:
        check_randomized(kind, dom, cases)
        check_utility(kind, dom, cases)


KINDS = ["sets", "sets-qid", "semantic", "lgb", "msa"]


@pytest.mark.parametrize("kind", KINDS)
def test_report_figures(kind, pages, cases):
    assert_self_contained(pages[kind].html)
    check_page(kind, pages[kind].html, cases)
    if kind == "sets":       # long labels are cut on the chart, whole in the tooltip
        assert re.search(r'<g id="fig\d+-tip\d+"><title>occupation number \d+ with a rather '
                         r"long name</title>", pages[kind].html)


def test_report_streamed_equals_in_memory(cases, tmp_path):
    """Chunk by chunk (audit_file, one pass for every reconstruction, one
    for the truth) the page carries the figures of the in-memory page."""
    path, orig, _ = cases["sets"]
    pages = [report(path, original=orig, n_targets=N_TARGETS, seed=7, methods=["em"],
                    chunk_rows=c) for c in (0, 37)]
    doms = [Dom(p.html) for p in pages]
    for key in ("data-l1", "data-hellinger", "data-epsilon", "data-eta"):
        vals = [sorted((a.get("data-attribute") or a.get("data-pair") or a.get("data-marginal"),
                        a.get("data-method", ""), a[key]) for a in rows_with(d, key))
                for d in doms]
        assert vals[0] == vals[1] and vals[0]
    assert pages[0].verdict == pages[1].verdict


def test_a_release_whose_sets_carry_nothing_reports_chunk_by_chunk(tmp_path):
    """H66: every sensitive column published as its whole domain (k = 2 on
    two-valued columns) has nothing to reconstruct; read chunk by chunk the
    page asked the file for no column and took its 0 rows for a truncated
    file (exit 2), where in memory it wrote the page."""
    from anonset.cli import main
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "smoker": rng.choice(["no", "yes"], n),
                       "region": rng.choice(["n", "s", "e"], n)})
    df.to_csv(tmp_path / "in.csv", index=False)
    for out in ("o.csv", "o.parquet"):
        assert main(["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / out),
                     "--sensitive", "sex,smoker", "--exact", "region", "--k", "2",
                     "--domain", "sex=f,m", "--domain", "smoker=no,yes", "-q"]) == 0
        pages = [report(tmp_path / out, original=df, chunk_rows=c, attack=False)
                 for c in (0, 100)]
        for page in pages:
            assert "every set is the whole domain" in page.html
        assert pages[0].verdict == pages[1].verdict
        assert main(["report", str(tmp_path / out), "-o", str(tmp_path / "r.html"),
                     "--chunk-rows", "100", "-q"]) == 0


def test_report_flags_a_violation(cases, tmp_path):
    """A release whose metadata claims more than its classes give FAILS."""
    import pyarrow.parquet as pq
    path, _, _ = cases["msa"]
    t = pq.read_table(path)
    meta = json.loads(t.schema.metadata[b"anonset"])
    meta["model"]["t"] = 0.01
    meta["model"]["k"] = 1000
    bad = tmp_path / "bad.parquet"
    pq.write_table(t.replace_schema_metadata({b"anonset": json.dumps(meta).encode()}), bad)
    page = report(bad)
    assert page.verdict == "FAILED"
    dom = Dom(page.html)
    assert not dom.find(id="confidential")   # only what the release shows
    fails = {(a["data-check"], a["data-status"]) for a in rows_with(dom, "data-check")}
    assert ("classes_k", "fail") in fails and ("classes_t", "fail") in fails


def test_estimated_counts_read_as_records_not_exponents():
    from anonset.audit.html import randomized as R
    html = R._numbers(["a", "b", "c"], [("true", np.array([0, 3, 1434])),
                                         ("em", np.array([5.82e-23, 2.5, 1434.2]))])
    assert "e-23" not in html and "1,434" in html and "2.5" in html
    assert ">0<" in html.replace(" ", "")


def test_top_k_keeps_totals_and_the_largest():
    rng = np.random.default_rng(0)
    for d in (3, 15, 16, 41):
        v = rng.integers(0, 100, d).astype(float)
        w = rng.integers(0, 100, d).astype(float)
        labs, (a, b) = top_k([f"v{i}" for i in range(d)], [v, w], 15, ordered=False)
        assert len(labs) == min(d, 15) and a.sum() == v.sum() and b.sum() == w.sum()
        if d > 15:
            assert labs[-1] == f"other ({d - 14} values)"
            assert set(a[:-1]) <= set(v) and a[:-1].min() >= np.sort(v)[::-1][13]


def test_partition_csv_reads_with_its_metadata_else_refused(cases, tmp_path):
    # a CSV partition release carries its metadata beside it; one without
    # (written before 2026-11-27, or the file lost) is refused by name
    _, _, res = cases["msa"]
    p = tmp_path / "msa.csv"
    res.write(p)
    page = report(p, tmp_path / "r.html")
    assert page.verdict and (tmp_path / "r.html").is_file()
    # a set table's options were ignored for it: refused by name
    for kw, name in ((dict(attack=False), "attack"), (dict(methods=["em"]), "methods"),
                     (dict(pairs="a:b"), "pairs"), (dict(n_targets=50), "n_targets"),
                     (dict(seed=3), "seed"), (dict(top=5), "top"), (dict(known=0), "known"),
                     (dict(chunk_rows=10), "chunk_rows"),
                     # named at its default value too: it was ignored (H80)
                     (dict(known=1), "known"), (dict(n_targets=10_000), "n_targets"),
                     (dict(top=15), "top")):
        with pytest.raises(anonset.validate.InputError,
                           match=f"^{name}: applies to a table of random sets, not to an msa "):
            report(p, **kw)
    from anonset.cli import main
    for argv in (["report", p, "-o", tmp_path / "x.html", "--known", "1"],
                 ["report", p, "-o", tmp_path / "x.html", "--targets", "10000"],
                 ["report", p, "-o", tmp_path / "x.html", "--top", "15"],
                 ["audit", p, "--targets", "10000"], ["audit", p, "--prior", "marginal"],
                 ["audit", p, "--classes", "200"]):
        assert main([str(a) for a in argv]) == 2, argv
    assert not (tmp_path / "x.html").exists()
    (tmp_path / "msa.csv.anonset.json").unlink()
    with pytest.raises(anonset.validate.InputError, match="has no .anonset.json beside it"):
        report(p)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_report_pairs_take_names_with_commas_and_colons(tmp_path):
    """`--pairs` cut at every comma, so a column with a comma in its name
    could not be named (H18); a comma is written \\, and a colon \\: as in
    the other list options."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"wage, hourly": rng.choice(list("abcd"), n),
                       "time:of day": rng.choice(list("xyz"), n)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=list(df.columns),
                          allow_clear=list(df.columns))
    pub.to_parquet(tmp_path / "p.parquet")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "p.parquet"), "-o", str(out), "--methods", "em",
                 "--pairs", "wage\\, hourly:time\\:of day", "-q"]) == 0
    dom = Dom(out.read_text(encoding="utf-8"))
    assert {a["data-pair"] for a in dom.find() if "data-pair" in a} == \
        {"wage, hourly:time:of day"}


def test_cli_report(cases, tmp_path, capsys):
    path, orig, _ = cases["sets-qid"]
    out = tmp_path / "r.html"
    rc = main(["report", str(path), "--original", str(orig), "-o", str(out), "--methods", "em",
               "--targets", "200", "--pairs", "zip:job"])
    assert rc == 0 and out.is_file()
    said = capsys.readouterr().out
    assert "RISKS FOUND" in said
    # it holds the original's statistics: readable by its owner only, and said so
    # (a report made from the release alone is written as any other output)
    if os.name == "posix":
        assert out.stat().st_mode & 0o777 == 0o600
        assert "readable by you only: it holds statistics of the original data" in said
        alone = tmp_path / "alone.html"
        assert main(["report", str(path), "-o", str(alone), "--targets", "200"]) == 0
        assert alone.stat().st_mode & 0o077 == 0o666 & ~_umask() & 0o077
        assert "readable by you only" not in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    # the commands name the files, not the folders they sit in (H38: a
    # public page named its maker's home and study folders), nor the hour
    assert str(tmp_path) not in page and str(path.parent) not in page
    assert f"anonset report {path.name} --original {orig.name}" in page
    assert re.search(r"generated</[^>]+>\s*<[^>]+>\d{4}-\d\d-\d\d \(UTC\)<", page)
    assert not re.search(r"\d\d:\d\d UTC", page)
    dom = Dom(page)
    assert {a["data-pair"] for a in dom.find() if "data-pair" in a} == {"zip:job"}
    assert dom.find(data_pair="zip:job", data_method="em")
    rc = main(["report", str(path), "-o", str(path)])
    assert rc == 2 and "input file" in capsys.readouterr().err
    rc = main(["report", str(path), "-o", str(tmp_path / "x.html"), "--pairs", "zip:nope"])
    err = capsys.readouterr().err
    assert rc == 2 and "--pairs" in err and "'nope'" in err
    rc = main(["report", str(path), "-o", str(tmp_path / "x.html"), "--methods", "em,nope"])
    err = capsys.readouterr().err
    assert rc == 2 and "--methods" in err and "'nope'" in err
    assert not (tmp_path / "x.html").exists()


# ================================================================ browser
def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="headless Chromium is not installed (Debian: apt-get install "
                               "chromium); .ci/run installs it so CI runs this test")


def load(page: Path, tmp: Path) -> tuple:
    """(DOM as Chromium built it, console lines, URLs the page asked for):
    headless Chromium with its log on stderr and a network log."""
    netlog = tmp / f"{page.stem}.netlog.json"
    cmd = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--no-first-run",
           "--disable-sync", "--disable-default-apps", f"--user-data-dir={tmp / 'profile'}",
           "--enable-logging=stderr", "--v=0", f"--log-net-log={netlog}",
           "--dump-dom", page.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line
               or "Uncaught" in line]
    asked = []
    events = json.loads(netlog.read_text())["events"] if netlog.is_file() else []
    for e in events:
        p = e.get("params") or {}
        # requests the page made carry its (opaque file://) origin as initiator;
        # Chromium's own background requests carry none
        if "url" in p and p.get("initiator") not in (None, "not an origin") \
                and p["url"] != page.resolve().as_uri():
            asked.append(p["url"])
    return done.stdout, console, asked


@needs_chromium
def test_browser_catches_what_it_should(tmp_path):
    """The browser check itself: a page that loads an image from the
    network and runs a failing script is caught on both counts."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head>'
                   '<body><img src="http://example.invalid/a.png" alt="x">'
                   "<script>undefinedFunction()</script></body></html>")
    _, console, asked = load(bad, tmp_path)
    assert any("undefinedFunction" in line for line in console)
    assert any("example.invalid" in u for u in asked)


@needs_chromium
@pytest.mark.parametrize("kind", KINDS)
def test_report_in_chromium(kind, pages, cases, tmp_path):
    dom_text, console, asked = load(pages[kind].path, tmp_path)
    assert console == [] and asked == []
    assert 'data-anonset-report="1"' in dom_text
    check_page(kind, dom_text, cases)


def test_semantic_inclusion_checked_per_value(tmp_path):
    """Shuffled rows of a paper 001 table are checked per value with a test
    that holds for its non-uniform dummies (every value is in at least as
    many sets as records hold it), not paper 000's eq. 19; a table whose
    sets leave out a value's true holders fails it."""
    from anonset import semantic as S
    from anonset.randomized.settable import SetTable
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"sex": rng.choice(["f", "m"], 5000),
                       "income": rng.choice(8, 5000, p=[.3, .2, .2, .1, .1, .05, .03, .02])})
    S.semantic_publish(df, "income", l=3, d=2, qids=["sex"], domain=list(range(8)), seed=SEED,
                       research_seed=True).to_parquet(tmp_path / "sem.parquet")
    tab = anonset.read_parquet(tmp_path / "sem.parquet")        # shuffled: not aligned
    rep = anonset.audit(tab, df)
    row = rep.checks[(rep.checks["check"] == "inclusion") & (rep.checks["attribute"] == "income")]
    assert row["status"].tolist() == ["pass"], row["message"].tolist()
    m = tab.mask("income").copy()
    has0 = (m[:, 0] & np.uint64(1)) > 0
    free = ~m[has0, 0] & np.uint64(0xFF) & ~np.uint64(1)
    m[has0, 0] = (m[has0, 0] & ~np.uint64(1)) | (free & (~free + np.uint64(1)))   # 0 -> another
    bad = SetTable(tab.schema, {"income": m, "sex": tab.mask("sex")}, tab.params, tab.model,
                   info=tab.info)
    rep = anonset.audit(bad, df)
    row = rep.checks[(rep.checks["check"] == "inclusion") & (rep.checks["attribute"] == "income")]
    assert row["status"].tolist() == ["fail"]


def test_an_attribute_the_sets_say_nothing_of_is_not_reconstructed(tmp_path):
    """A release with a two-valued column at l = 2 (every set its whole
    domain), or a semantic table at l = the domain's size: the report
    failed once reconstruction refused such attributes, and before that it
    drew their uniform starting point as a reconstruction.  It now leaves
    them out, says why, and a pair naming one is refused as reconstruct
    refuses it; in memory and streamed alike."""
    from anonset import semantic as S
    from anonset.validate import InputError
    rng = np.random.default_rng(8)
    n = 2000
    df = pd.DataFrame({"health": rng.choice(["yes", "no"], n, p=[0.9, 0.1]),
                       "job": rng.choice(list("abcd"), n), "sex": rng.choice(["f", "m"], n)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["health", "job"], exact=["sex"],
                          domains={"health": ["yes", "no"], "job": list("abcd")},
                          seed=SEED + "-whole-domain-0000000")
    pub.to_parquet(tmp_path / "p.parquet")
    from anonset.audit.html.release import open_release
    from anonset.audit.html.utility import default_pairs, set_utility
    for chunk in (0, 500):
        rel = open_release(tmp_path / "p.parquet", chunk_rows=chunk)
        util = set_utility(rel, df, default_pairs(rel.header), chunk_rows=chunk or 10 ** 6)
        shown = {a for t in util.pairs + util.marginals for a in t.attributes}
        assert "health" not in shown and "job" in shown, shown
        assert any("health: every set is the whole domain" in m for m in util.notes)
    for chunk in (None, 500):
        page = report(tmp_path / "p.parquet", original=df, chunk_rows=chunk, attack=False)
        assert "health: every set is the whole domain" in page.html
    with pytest.raises(InputError, match="column 'health': every published set of it is its "
                                         "whole domain"):
        report(tmp_path / "p.parquet", pairs="health:job", attack=False)
    sem = S.semantic_publish(df, "job", 4, 1, qids=["sex"], drop=["health"],
                             domain=list("abcd"), seed=SEED + "-whole-domain-0000000")
    sem.to_parquet(tmp_path / "s.parquet")
    rel = open_release(tmp_path / "s.parquet")
    assert default_pairs(rel.header, rel.semantic_attribute) == []
    util = set_utility(rel, None, [], chunk_rows=10 ** 6)
    assert not util.pairs and not util.marginals
    assert any("job: every set is the whole domain" in m for m in util.notes)
    assert "job: every set is the whole domain" in report(tmp_path / "s.parquet",
                                                          attack=False).html


def test_every_check_the_audit_emits_has_plain_words():
    """The report's glossary explains each check present; a check without
    words was listed without its meaning (homogeneous, suppressed and
    shared_id were)."""
    import glob
    import re
    from anonset.audit.html.words import CHECKS
    root = Path(anonset.__file__).parent / "audit"
    names = set()
    for f in glob.glob(str(root / "**" / "*.py"), recursive=True):
        names |= set(re.findall(r'(?:rows\.add|\badd)\("([a-z_]+)"', Path(f).read_text()))
    assert len(names) > 30                                  # the pattern still finds them
    assert sorted(names - set(CHECKS)) == []


# ==================================================== text and layout (H127)
def _drawn(svg: str) -> list:
    """The text each <text> element of a chart draws (its tags removed)."""
    return [re.sub(r"<[^>]+>|\s+", "", t) for t in re.findall(r"<text\b.*?</text>", svg, re.S)]


def test_values_with_dollar_signs_are_drawn_as_they_are():
    """'$5k_$10k' was parsed as math text: the report failed (with an empty
    error line) and '$10k-$20k' was drawn as '10k-20k' with an italic k."""
    rng = np.random.default_rng(1)
    vals = ["<$5k", "$5k_$10k", "$10k-$20k", "$20k+"]
    df = pd.DataFrame({"income": rng.choice(vals, 300), "job": rng.choice(list("abcde"), 300)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["income", "job"], seed=SEED,
                          research_seed=True, allow_clear=["income", "job"])
    page = report(pub, original=df, n_targets=200, methods=["em"])
    import html
    drawn = [html.unescape(t) for t in _drawn(page.html)]
    assert "$5k_$10k" in drawn and "$10k-$20k" in drawn and "<$5k" in drawn


def test_a_chart_that_cannot_be_drawn_says_which_in_one_line(cases, tmp_path, capsys,
                                                              monkeypatch):
    """matplotlib's errors can start with a line break: the CLI said
    'anonset report: error: ' and nothing more."""
    from matplotlib.figure import Figure

    def fail(self, *a, **k):
        raise ValueError("\n$x_$\n^\nParseException: Expected end of text")

    monkeypatch.setattr(Figure, "savefig", fail)
    path, _, _ = cases["sets-qid"]
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out), "--targets", "200", "--methods", "em",
                 "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anonset report: error: could not draw the "
                                               "chart \"Bar chart of the attack simulation")
    assert "ValueError: $x_$" in err[0] and not out.exists()


@pytest.mark.parametrize("kind", ["lgb", "msa"])
def test_partition_pages_give_the_audit_command_too(kind, pages, cases, capsys):
    """docs/report.md: the page gives the `anonset report` and `anonset
    audit` command lines; an lgb / msa page gave the report's only."""
    path, orig, _ = cases[kind]
    cmds = re.findall(r"<pre>(.*?)</pre>", pages[kind].html, re.S)
    assert cmds[1:] == [f"anonset audit {path.name} --original {orig.name}"]
    # as written it runs (from the folder that holds the files)
    argv = cmds[1].split()[1:]
    argv[1], argv[3] = str(path), str(orig)
    assert main(argv + ["-q"]) in (0, 1), capsys.readouterr().err


def test_cut_labels_stay_distinct():
    """Cut to their first 25 characters, 'how_satisfied_are_you_with_q01'
    to q04 read alike on the attack chart: cut in the middle, they differ
    (else numbered), each with its full name as a tooltip."""
    from anonset.audit.html.charts import attack_chart
    from anonset.audit.html.svg import short_labels
    names = [f"how_satisfied_are_you_with_q{i:02d}" for i in range(1, 5)]
    rows = [{"attribute": n, "success": 0.5, "prior": 0.4, "bound": 0.6} for n in names]
    svg = attack_chart("f", rows, title="t")
    drawn = [t for t in _drawn(svg) if t.startswith("how_")]
    assert len(set(drawn)) == 4 and all(len(t) == 26 and t.endswith(n[-3:])
                                        for t, n in zip(drawn, names))
    assert all(f"<title>{n}</title>" in svg for n in names)
    # alike at both ends: numbered in order; a short label is kept whole
    same = ["a" * 20 + c + "a" * 20 for c in "XY"] + ["short"]
    assert [d for d, _ in short_labels(same, {}, 16)] == \
        ["aaaaaaaa\u2026aaaaa#1", "aaaaaaaa\u2026aaaaa#2", "short"]


def test_heatmaps_name_the_column_attribute_once_and_cut_the_row_one():
    """The column attribute's name was drawn under each of the three panels
    (each wider than its panel: drawn over each other), the row
    attribute's ran off the figure with no tooltip."""
    from anonset.audit.html.charts import heatmaps
    a, b = "employment_status_of_the_respondent_" + "x" * 30, "has_private_health_insurance"
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 50, (4, 2)).astype(float)
    svg = heatmaps("f", (a, b), ["employed", "unemployed", "retired", "student"], ["yes", "no"],
                   truth + 1.0, "em", truth)
    drawn = _drawn(svg)
    assert drawn.count(b) == 1
    cut = [t for t in drawn if t.startswith("employment") and "\u2026" in t]
    assert len(cut) == 1 and a not in drawn and f"<title>{a}</title>" in svg


def _measured(page: str, tmp: Path, width: int, printed: bool) -> list:
    """Headers of tables cut off by their box, and elements wider than the
    page's main column, as Chromium lays the page out ``width`` px wide
    (the print style sheet applied on screen where ``printed``: headless
    Chromium prints to PDF only).  A copy of the page without its policy,
    with a measuring script."""
    js = """<script>window.addEventListener('load',function(){var out=[];
var m=document.querySelector('main').getBoundingClientRect().right;
document.querySelectorAll('div.wide').forEach(function(w){var b=w.getBoundingClientRect();
w.querySelectorAll('thead th').forEach(function(h){if(h.getBoundingClientRect().right>b.right+1)
out.push(w.firstChild.id+': '+h.textContent)})});
document.querySelectorAll('main *').forEach(function(e){if(!e.closest('svg')&&
e.getBoundingClientRect().right>m+1)out.push(e.tagName+': '+e.textContent.slice(0,30))});
var p=document.createElement('pre');p.id='OUT';p.textContent=JSON.stringify(out);
document.body.appendChild(p);});</script>"""
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    if printed:
        page = page.replace("@media print{", "@media all{").replace("@media print,", "@media all,")
    copy = tmp / f"measure{width}{printed}.html"
    copy.write_text(page.replace("</body>", js + "</body>"), encoding="utf-8")
    done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--window-size={width},2000",
                           f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=5000",
                           "--dump-dom", copy.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    import html
    return json.loads(html.unescape(re.search(r'<pre id="OUT">(.*?)</pre>', done.stdout,
                                              re.S).group(1)))


@needs_chromium
def test_tables_fit_the_page_in_print_and_on_screen(tmp_path):
    """Every table sat in a box that scrolls: in print its last columns
    (the attack's 'risk', the checks' 'finding') were cut, at 1280 px the
    attack table hid 'risk', and 100-character column names pushed tables
    and headings past the page."""
    rng = np.random.default_rng(2)
    names = [f"the_answer_to_the_question_about_{w}".ljust(100, "x") for w in ("job", "pet")]
    df = pd.DataFrame({names[0]: rng.choice(list("abcde"), 300),
                       names[1]: rng.choice(list("xyz"), 300)})
    pub = anonset.publish(df, anonset.Closeness(0.3), sensitive=names, seed=SEED,
                          research_seed=True)
    page = report(pub, original=df, n_targets=200, methods=["em"]).html
    assert '<td class="long">' + names[0] in page
    for width, printed in ((720, True), (1280, False), (720, False)):
        assert _measured(page, tmp_path, width, printed) == [], (width, printed)
