"""The public API as a user's typed code calls it, checked by mypy (never run).

``mypy`` (configuration in pyproject.toml) checks every call below against
the hints of anonset's public signatures and every ``assert_type`` against
what they declare to return; a hint that is wrong for documented use fails
here.  tests/test_build.py checks that no public parameter lacks a hint.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from typing_extensions import assert_type

import anonset
from anonset import (Anonymity, AuditReport, Closeness, CrossTab, Diversity,
                     DiversityCloseness, Ground, Hierarchy, Schema, SetTable)
from anonset.audit import CheckResult


def publish_and_reconstruct(df: pd.DataFrame, out: Path) -> None:
    schema = anonset.datasets.adult_schema(df)
    assert_type(schema, Schema)
    schema = Schema.infer(df, sensitive=["age", "occupation"], other=["zip"],
                          domains={"age": [1, 2, 3]}, ordinal=["age"])
    schema = schema.replace("age", kind="ordinal")
    models: list[Diversity | Anonymity | Closeness | DiversityCloseness] = [
        Diversity(5), anonset.EntropyDiversity({"age": 3, "occupation": 2.5}),
        Anonymity(4), Closeness(0.3, ground="ordered"), DiversityCloseness(2, {"age": 0.2})]
    for model in models:
        pub = anonset.publish(df, model, schema, seed="d1f3a8c04e9b27f65a0c3e81b7d9f246",
                              n_threads=2, clip_l=True)
        assert_type(pub, SetTable)
    pub = anonset.publish(df, Diversity(2), seed=2**130, sensitive=["age"])
    pub = anonset.publish(df, Diversity(2), seed=np.int64(7), sensitive=["age"])
    pub = anonset.publish(df, Closeness(0.2), identifiers=["name"], sensitive=["age"],
                          exact=["sex"], other=["zip"], drop=["note"], bins={"age": [0, 50, 100]},
                          domains={"sex": ["f", "m"]}, hierarchies={"job": out / "job.csv"},
                          key_file=out / "key", record_id="id", first_in_series=True,
                          allow_clear=["sex"],
                          keep_order=True, rng="philox")
    params = anonset.optimize(Diversity(2), list(schema.published))
    pub = anonset.publish(df, Diversity(2), schema, params=params, seed=None)
    pub.to_parquet(out / "t.parquet", protect=[out / "in.csv"])
    pub.to_csv(str(out / "t.csv"))
    back = anonset.read_parquet(out / "t.parquet")
    assert_type(back, SetTable)
    assert_type(anonset.read_csv("t.csv"), SetTable)
    ct = anonset.reconstruct(back, ["age", "occupation"], "exact_em", max_iter=50, seed=b"k" * 16)
    assert_type(ct, CrossTab)
    ct = anonset.reconstruct(back, "age")
    w = anonset.count_w(back, ["age"], n_threads=1)
    assert_type(w, np.ndarray)
    truth = anonset.true_crosstab(df, schema, ["age"])
    assert_type(anonset.metrics.compare(truth, ct), dict)


def audit(pub: SetTable, df: pd.DataFrame, out: Path) -> None:
    report = anonset.audit(pub, df, attack=True, known=["age"], seed=1)
    assert_type(report, AuditReport)
    report = anonset.audit(pub)
    report = anonset.audit_file(out / "pub.parquet", out / "in.csv", chunk_rows=10_000,
                                known=2, missing="error", aligned=False)
    assert_type(report, AuditReport)
    assert_type(report.ok, bool)
    report.plot(out / "attack.png")
    r: CheckResult = anonset.check_diversity(pub, {"age": 2})
    r = anonset.check_anonymity(pub, 3, method="exact")
    r = anonset.check_closeness(pub, df, t={"age": 0.3}, ground="ordered")
    r = anonset.check_closeness(pub, A={"age": np.array([3.0, 1.0])}, t=0.2,
                                ground={"age": "equal"}, schema=pub.schema)
    page = anonset.report(pub, out / "report.html", original=df, pairs="age:job",
                          methods=["em"], seed=1)
    page = anonset.report(out / "pub.parquet", original=out / "in.csv",
                          pairs=[("age", "job")], chunk_rows=10_000, progress=print)
    assert_type(page.verdict, str)
    assert_type(page.html, str)


def distances(h: Hierarchy, path: Path) -> None:
    h = Hierarchy.from_csv(path / "h.csv")
    h = Hierarchy.from_csv("a;*\nb;*\n")
    g = Ground.tree(h)
    for spec in ("equal", g, [0.0, 1.0, 4.0], np.arange(3.0)):
        assert_type(Ground.from_spec(spec, 3, hierarchy=h), Ground)
    assert_type(anonset.emd([0.5, 0.5], np.array([1.0, 0.0]), "ordered"), float)
    P = np.ones((4, 3)) / 3
    assert_type(anonset.emd_batch(P, [1.0, 0.0, 0.0], g, n_threads=2), np.ndarray)
    anonset.show_versions()
    assert_type(anonset.__version__, str)
