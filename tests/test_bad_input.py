"""Bad input (issue 14): well over a hundred mistakes, each refused before any
work with one clear line that names the file, the column or the parameter
(as the flag on the command line, as the argument in Python) and what was
expected; nothing is left on disk; the input is never touched.

* Table cases run through every path that can publish that table -- in
  memory (:func:`anonset.publish`), streamed from Parquet and from CSV
  (:func:`anonset.stream.publish_file`), on Dask (:func:`anonset.dask.publish`)
  and the command line -- and the in-memory, streamed-Parquet and Dask
  refusals must be the same error (same parameter, column and words).
* File cases (what only a file can get wrong: its bytes, its header, its
  rows) run through the streamed API and the command line.
* Published-file cases (a tampered or truncated release) run through every
  reader: ``read_parquet``/``read_csv``, ``reconstruct_file``, and the
  ``reconstruct`` and ``audit`` subcommands.
* Subcommand cases cover the other papers' subcommands.
"""
from __future__ import annotations

import datetime
import decimal
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset import cli
from anonset.stream import publish_file, reconstruct_file
from anonset.validate import InputError

SRC = str(Path(anonset.__file__).resolve().parent.parent)
BINS = "age=0:30:50:70:120"
EDGES = [0, 30, 50, 70, 120]
SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"
ROLES_CLI = ["--identifier", "id", "--other", "note", "--sensitive", "age,job,city",
             "--bins", BINS]
ROLES_API = dict(identifiers=["id"], other=["note"], sensitive=["age", "job", "city"],
                 bins={"age": EDGES})


def frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, n),
        "job": rng.choice(list("abcdef"), n),
        "city": rng.choice(list("wxyz"), n),
        "note": rng.choice(["n1", "n2"], n),
    })


#: rows whose ages fill every bin (two rows in two of four bins leave the
#: others a decoy beside each true bin: refused at l = 2 before the output)
FOUR_AGES = "1,20,a,x,n\n2,40,b,y,n\n3,60,a,x,n\n4,80,b,y,n\n"


def snapshot(d: Path) -> dict:
    """Every file under d with its bytes (temporary files included)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def one_line(err: str, prefix: str) -> str:
    err = err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(prefix), err
    return err


# ============================================================ table cases
@dataclass
class TableCase:
    id: str
    #: the API keyword arguments (model included) and the same as CLI flags
    api: dict
    cli: list
    needles: tuple = ()
    api_needles: tuple = ()
    cli_needles: tuple = ()
    df: Callable = frame
    #: the paths that see this mistake (a CLI-only typo has no API form, ...)
    paths: tuple = ("memory", "parquet", "csv", "dask", "cli")
    side: dict = field(default_factory=dict)       # side files: name -> text


def _missing(col, value=None):
    def f():
        df = frame()
        if value is None:
            df[col] = df[col].astype(object)
        else:
            df[col] = df[col].astype(float)
        df.loc[7, col] = value
        return df
    return f


def _with_col(name, values):
    def f():
        df = frame()
        df[name] = values(len(df))
        return df
    return f


def _mixed():
    df = frame()
    df["job"] = df["job"].astype(object)
    df.loc[3, "job"] = 17
    return df


def _big(n):
    return lambda: pd.DataFrame({"id": np.arange(n), "zip": np.arange(n),
                                 "job": np.resize(list("abc"), n)})


D2 = anonset.Diversity(2)
M = dict(model=D2)
STD = dict(M, **ROLES_API)


DECLARED = {"job": list("abcdef"), "city": list("wxyz")}
DECLARED_CLI = ["--domain", "job=jobs.txt", "--domain", "city=cities.txt"]
DECLARED_FILES = {"jobs.txt": "a\nb\nc\nd\ne\nf\n", "cities.txt": "w\nx\ny\nz\n"}


def _api(**kw):
    return {**STD, **kw}


TABLE_CASES = [
    # --- roles: every column needs one, one each, of the data
    TableCase("unnamed-columns", dict(M, sensitive=["job"]), ["--sensitive", "job", "--l", "2"],
              ("4 columns have no role: 'id', 'age', 'city', 'note'",),
              ("identifiers, sensitive, exact, other (passed through unchanged) or drop",),
              ("--identifier, --sensitive, --exact, --other (passed through unchanged) or --drop",)),
    TableCase("one-unnamed-column", dict(STD, other=[]), [*ROLES_CLI[:2], *ROLES_CLI[4:], "--l", "2"],
              ("1 column has no role: 'note'",)),
    TableCase("role-twice", _api(drop=["note"]), [*ROLES_CLI, "--drop", "note", "--l", "2"],
              ("column 'note'", "named by both"), ("other and drop",), ("--other and --drop",)),
    TableCase("sensitive-not-in-data", _api(sensitive=["age", "job", "city", "nope"]),
              [*ROLES_CLI, "--sensitive", "nope", "--l", "2"], ("names 'nope', which is not a column",),
              ("sensitive:",), ("--sensitive:",)),
    TableCase("identifier-not-in-data", _api(identifiers=["id", "idd"]),
              [*ROLES_CLI, "--identifier", "idd", "--l", "2"], ("'idd'", "not a column of the data")),
    TableCase("identifier-also-sensitive", _api(sensitive=["age", "job", "city", "id"]),
              [*ROLES_CLI, "--sensitive", "id", "--l", "2"], ("column 'id'", "named by both")),
    TableCase("identifier-also-exact", _api(exact=["id"]), [*ROLES_CLI, "--exact", "id", "--l", "2"],
              ("column 'id'", "named by both")),
    TableCase("no-sensitive-column", dict(M, identifiers=["id"], other=["note"],
                                          exact=["age", "job", "city"], bins={"age": EDGES}),
              ["--identifier", "id", "--other", "note", "--exact", "age,job,city", "--bins", BINS,
               "--l", "2"], ("no column is sensitive",)),
    TableCase("nothing-published", dict(M, identifiers=["id"], other=["note", "age", "job", "city"]),
              ["--identifier", "id", "--other", "note,age,job,city", "--l", "2"],
              ("no column is sensitive or exact",)),
    TableCase("bins-on-unknown-column", _api(bins={"age": EDGES, "q": [0, 1]}),
              [*ROLES_CLI, "--bins", "q=0:1", "--l", "2"], ("names 'q', which is not a column",),
              ("bins:",), ("--bins:",)),
    TableCase("bins-on-pass-through", _api(bins={"age": EDGES, "note": [0, 1]}),
              [*ROLES_CLI, "--bins", "note=0:1", "--l", "2"], ("'note'", "not published")),
    TableCase("ordinal-unknown-column", _api(ordinal=["nope"]),
              [*ROLES_CLI, "--ordinal", "nope", "--l", "2"], ("'nope'", "not a column")),
    TableCase("allow-clear-not-sensitive", _api(allow_clear=["note"]),
              [*ROLES_CLI, "--allow-clear", "note", "--l", "2"],
              ("names 'note', which is not a sensitive column",), ("allow_clear:",),
              ("--allow-clear:",)),
    TableCase("record-id-not-identifier", _api(record_id="note", first_in_series=True, seed=SEED),
              [*ROLES_CLI, "--record-id", "note", "--first-in-series", "--seed", SEED, "--l", "2"],
              ("column 'note'", "must name an identifier column"), ("record_id:",),
              ("--record-id:",)),
    # named as the record id only: the error says which role it needs
    # (before: "1 column has no role: 'id'", with no word of --record-id)
    TableCase("record-id-without-a-role",
              dict(M, other=["note"], sensitive=["age", "job", "city"], bins={"age": EDGES},
                   record_id="id", first_in_series=True, seed=SEED, domains=DECLARED),
              ["--other", "note", "--sensitive", "age,job,city", "--bins", BINS,
               "--record-id", "id", "--first-in-series", "--seed", SEED, *DECLARED_CLI, "--l", "2"],
              ("column 'id'", "has no role", "a record id is never published"),
              ("record_id:", "identifiers"), ("--record-id:", "--identifier"),
              side=DECLARED_FILES),
    TableCase("record-id-without-key", _api(record_id="id"), [*ROLES_CLI, "--record-id", "id", "--l", "2"],
              ("needs a persistent key",), ("key_file",), ("--key-file",)),
    # a persistent-key release is the first of its series, declared, or is
    # given the series' latest: one given neither was taken for a first
    # release, keeping every set and reading nothing of the series (H46)
    TableCase("record-id-series-undeclared", _api(record_id="id", seed=SEED, domains=DECLARED),
              [*ROLES_CLI, "--record-id", "id", "--seed", SEED, *DECLARED_CLI, "--l", "2"],
              ("makes this release part of a series under its key", "no earlier release was "
               "given"), ("record_id:", "params (the series' latest release)",
                          "first_in_series=True"),
              ("--record-id:", "--params-from (the series' latest release)",
               "--first-in-series to declare"), side=DECLARED_FILES),
    # a record id must name one record in every release, whatever the path
    TableCase("record-id-missing", _api(record_id="id", first_in_series=True, seed=SEED, domains=DECLARED),
              [*ROLES_CLI, "--record-id", "id", "--first-in-series", "--seed", SEED, *DECLARED_CLI, "--l", "2"],
              ("column 'id'", "has 1 missing or empty value(s) (first at row 10)",
               "one stable id per record"),
              df=_with_col("id", lambda n: np.where(np.arange(n) == 9, np.nan, np.arange(n))),
              side=DECLARED_FILES),
    # a blank id is a placeholder: taken as an id, every row holding it would
    # be one record, whose equal values share one set (equal sets, equal values)
    TableCase("record-id-blank", _api(record_id="id", first_in_series=True, seed=SEED, domains=DECLARED),
              [*ROLES_CLI, "--record-id", "id", "--first-in-series", "--seed", SEED, *DECLARED_CLI, "--l", "2"],
              ("column 'id'", "has 2 missing or empty value(s) (first at row 10)",
               "one stable id per record"),
              df=_with_col("id", lambda n: np.where(np.isin(np.arange(n), (9, 10)), "  ",
                                                    [f"p{i}" for i in range(n)])),
              side=DECLARED_FILES),
    # counted over the whole table on every path (a stream of 37-row blocks
    # and Dask partitions counted the first block's alone)
    TableCase("record-id-missing-in-two-blocks", _api(record_id="id", first_in_series=True, seed=SEED,
                                                      domains=DECLARED),
              [*ROLES_CLI, "--record-id", "id", "--first-in-series", "--seed", SEED, *DECLARED_CLI, "--l", "2"],
              ("column 'id'", "has 3 missing or empty value(s) (first at row 10)",
               "one stable id per record"),
              df=_with_col("id", lambda n: np.where(np.isin(np.arange(n), (9, 80, n - 1)), "",
                                                    [f"p{i}" for i in range(n)])),
              side=DECLARED_FILES),
    TableCase("record-id-fractional", _api(record_id="id", first_in_series=True, seed=SEED, domains=DECLARED),
              [*ROLES_CLI, "--record-id", "id", "--first-in-series", "--seed", SEED, *DECLARED_CLI, "--l", "2"],
              ("column 'id'", "holds the fractional number 0.5 at row 1;", "whole numbers or text"),
              df=_with_col("id", lambda n: np.arange(n) + 0.5), side=DECLARED_FILES),
    # a persistent key with a domain read off each release's data: a value
    # that appears or disappears would redraw every set of the column
    TableCase("record-id-inferred-domain", _api(record_id="id", first_in_series=True, seed=SEED,
                                                domains={"job": list("abcdef")}),
              [*ROLES_CLI, "--record-id", "id", "--first-in-series", "--seed", SEED, "--domain", "job=jobs.txt",
               "--l", "2"], ("needs a declared domain for every sensitive column", "['city']"),
              ("record_id:",), ("--record-id:", "--domain"), side={"jobs.txt": "a\nb\nc\nd\ne\nf\n"}),
    # a column named as a word of a wide attribute's sets ('job#1' beside
    # 'job') was overwritten on Dask and failed streamed
    TableCase("column-named-like-a-set-word", _api(other=["note", "job#1"]),
              [*ROLES_CLI, "--other", "job#1", "--l", "2"],
              ("column 'job#1'", "is how anonset names word 1 of the sets of 'job'",
               "another name for the column"),
              df=_with_col("job#1", lambda n: np.arange(n) % 3)),
    # --- the privacy model against the columns
    TableCase("l-mapping-misses-a-column", dict(STD, model=anonset.Diversity({"age": 2, "job": 3})),
              [*ROLES_CLI, "--l", "age=2,job=3"], ("gives no value for the sensitive column 'city'",)),
    TableCase("l-mapping-names-unknown", dict(STD, model=anonset.Diversity(
        {"age": 2, "job": 3, "city": 2, "nope": 2})), [*ROLES_CLI, "--l", "age=2,job=3,city=2,nope=2"],
              ("names 'nope', which is not a sensitive column",)),
    TableCase("l-mapping-names-pass-through", dict(STD, model=anonset.Diversity(
        {"age": 2, "job": 3, "city": 2, "note": 2})), [*ROLES_CLI, "--l", "age=2,job=3,city=2,note=2"],
              ("'note'",)),
    TableCase("t-mapping-names-exact", dict(_api(sensitive=["age", "job"], exact=["city"]),
                                            model=anonset.Closeness({"age": .3, "job": .3, "city": .3})),
              [*ROLES_CLI[:4], "--sensitive", "age,job", "--exact", "city", "--bins", BINS,
               "--t", "age=0.3,job=0.3,city=0.3"], ("'city'", "exact")),
    TableCase("l-greater-than-d", _api(model=anonset.Diversity(5)), [*ROLES_CLI, "--l", "5"],
              ("l = 5 for 'age' exceeds its domain size d = 4",), ("clip_l=True",), ("--clip-l",)),
    TableCase("l-1-in-the-clear", _api(model=anonset.Diversity(1)), [*ROLES_CLI, "--l", "1"],
              ("would publish age (l = 1), job (l = 1), city (l = 1) in the clear",),
              ("allow_clear=['age', 'job', 'city']",), ("--allow-clear age,job,city",)),
    TableCase("k-1-in-the-clear", _api(model=anonset.Anonymity(1)), [*ROLES_CLI, "--k", "1"],
              ("(k = 1)", "in the clear")),
    TableCase("t-1-in-the-clear", _api(model=anonset.Closeness(1.0)), [*ROLES_CLI, "--t", "1"],
              ("in the clear",)),
    TableCase("t-1-in-the-clear-one-column",
              _api(model=anonset.Closeness({"age": 1.0, "job": 0.3, "city": 0.3})),
              [*ROLES_CLI, "--t", "age=1,job=0.3,city=0.3"],
              ("column 'age': would publish age (t = 1.0: every true value alone is within t",
               "a smaller t, or l >= 2 beside it"),
              ("t: column 'age'", "allow_clear=['age']"),
              ("--t: column 'age'", "--allow-clear age")),
    TableCase("t-inf-in-the-clear", _api(model=anonset.Closeness(float("inf"))),
              [*ROLES_CLI, "--t", "inf"], ("in the clear",)),
    TableCase("clip-l-on-two-values", dict(M, model=anonset.Diversity(3), identifiers=["id"],
                                           sensitive=["job", "note"], drop=["age", "city"],
                                           clip_l=True),
              ["--identifier", "id", "--sensitive", "job,note", "--drop", "age,city", "--l", "3",
               "--clip-l"], ("would publish note (l = 1, after clip_l) in the clear",)),
    TableCase("hierarchical-without-hierarchy",
              _api(model=anonset.Closeness(0.3, ground="hierarchical")),
              [*ROLES_CLI, "--t", "0.3", "--ground", "hierarchical"],
              ("column 'age': has the ground 'hierarchical' but no hierarchy",)),
    # --- values against domains
    TableCase("hierarchy-unbalanced", _api(hierarchies={"job": "job_h.csv"}),
              [*ROLES_CLI, "--hierarchy", "job=job_h.csv", "--l", "2"],
              ("'job_h.csv'", "column 'job'", "line 3 ('c') has 2 levels, expected 3",
               "expected an ARX hierarchy"), ("hierarchies:",), ("--hierarchy:",),
              side={"job_h.csv": "a;x;*\nb;x;*\nc;*\nd;y;*\ne;y;*\nf;y;*\n"}),
    TableCase("hierarchy-leaf-twice", _api(hierarchies={"job": "job_h.csv"}),
              [*ROLES_CLI, "--hierarchy", "job=job_h.csv", "--l", "2"],
              ("'job_h.csv'", "column 'job'", "leaf 'b' appears twice"), ("hierarchies:",),
              ("--hierarchy:",),
              side={"job_h.csv": "a;x;*\nb;x;*\nb;y;*\nc;y;*\nd;y;*\ne;y;*\nf;y;*\n"}),
    TableCase("missing-text-value", STD, [*ROLES_CLI, "--l", "2"],
              ("column 'job'", "has 1 missing value(s) (first at row 8)"), ("missing='category'",),
              ("--missing category",), df=_missing("job")),
    # a token without missing='category' would be ignored: the user meant
    # something the run would not do
    TableCase("missing-token-without-category", dict(STD, missing_token="NA"),
              [*ROLES_CLI, "--l", "2", "--missing-token", "NA"],
              ("is 'NA', which only", "uses (without it a missing cell is refused)"),
              ("missing_token: ", "missing='category' with it"),
              ("--missing-token: ", "--missing category with it")),
    TableCase("missing-numeric-value", STD, [*ROLES_CLI, "--l", "2"],
              ("column 'age'", "has 1 missing value(s) (first at row 8)"),
              df=_missing("age", np.nan)),
    TableCase("missing-in-declared-domain", _api(domains={"job": list("abcdef")}),
              [*ROLES_CLI, "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "has 1 missing value(s) (first at row 8)"), df=_missing("job"),
              side={"jobs.txt": "a\nb\nc\nd\ne\nf\n"}),
    TableCase("value-outside-declared-domain", _api(domains={"job": list("abc")}),
              [*ROLES_CLI, "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "is not in the domain"), side={"jobs.txt": "a\nb\nc\n"}),
    # raw survey files pad their values (UCI Adult's ' Private'): named so
    TableCase("value-padded-with-spaces", _api(domains={"job": list("abcdef")}),
              [*ROLES_CLI, "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "is not in the domain",
               "the data has spaces around its values"),
              df=_with_col("job", lambda n: np.resize([" a", " b", " c"], n)),
              side={"jobs.txt": "a\nb\nc\nd\ne\nf\n"}),
    # a typo in the domain file (or the data): the value spelt nearly so is named
    TableCase("value-misspelt-in-the-domain", _api(domains={"job": ["nurze", "clerk", "chef"]}),
              [*ROLES_CLI, "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "value 'nurse' at row", "is not in the domain (3 values); the "
               "domain has 'nurze', spelt nearly so"),
              df=_with_col("job", lambda n: np.resize(["nurse", "clerk", "chef"], n)),
              side={"jobs.txt": "nurze\nclerk\nchef\n"}),
    TableCase("value-outside-bins", _api(bins={"age": [0, 30, 50]}),
              [*ROLES_CLI[:-1], "age=0:30:50", "--l", "2"], ("column 'age'", "outside the bins")),
    # the value as the data spells it (an integer column's 61, not 61.0)
    TableCase("value-outside-bins-as-spelled", _api(bins={"age": [0, 30, 50]}),
              [*ROLES_CLI[:-1], "age=0:30:50", "--l", "2"],
              ("column 'age'", "value 61 at row 4 is outside the bins", "expected values in [0, 50)"),
              df=_with_col("age", lambda n: np.r_[[20, 21, 22, 61], np.full(n - 4, 25)])),
    TableCase("bins-on-text", _api(bins={"age": EDGES, "job": [0, 5, 10]}),
              [*ROLES_CLI, "--bins", "job=0:5:10", "--l", "2"], ("column 'job'", "numeric")),
    # (Dask turns a mixed object column into text: its frame holds '17', no mix)
    TableCase("mixed-types", STD, [*ROLES_CLI, "--l", "2"], ("column 'job'", "mixes value types"),
              df=_mixed, paths=("memory",)),
    TableCase("domain-beyond-the-sampler", dict(M, identifiers=["id"], sensitive=["zip", "job"]),
              ["--identifier", "id", "--sensitive", "zip,job", "--l", "2"],
              ("column 'zip'", "more than 65,536 distinct values (the 65,537th first at row "
               "65,537)"), df=_big(70_000), paths=("memory", "parquet", "csv", "cli")),
    # a row error before the 65,537th value comes first, whatever the blocks
    # (read whole, the count was named; in blocks, the row error: H48)
    TableCase("domain-beyond-the-sampler-after-a-row-error",
              dict(M, identifiers=["id"], sensitive=["zip", "job"], domains={"job": list("abc")}),
              ["--identifier", "id", "--sensitive", "zip,job", "--domain", "job=a,b,c", "--l", "2"],
              ("column 'job'", "value 'zz' at row 4 is not in the domain"),
              df=lambda: _big(70_000)().assign(job=lambda f: f.job.where(f.index != 3, "zz")),
              paths=("memory", "parquet", "csv", "cli")),
    TableCase("domain-too-large-for-closeness", dict(M, model=anonset.Closeness(0.2),
                                                     identifiers=["id"], sensitive=["zip", "job"]),
              ["--identifier", "id", "--sensitive", "zip,job", "--t", "0.2"],
              ("column 'zip'", "5,000 values", "at most 4,096"), df=_big(5_000)),
    TableCase("nested-list-column", dict(M, identifiers=["id"], sensitive=["tags", "job"]),
              ["--identifier", "id", "--sensitive", "tags,job", "--l", "2"],
              ("column 'tags'", "nested values"),
              df=lambda: pd.DataFrame({"id": [1, 2, 3], "tags": [[1], [2, 3], []],
                                       "job": list("abc")}),
              paths=("parquet", "cli")),
    TableCase("datetime-column", dict(M, identifiers=["id"], sensitive=["when", "job"]),
              ["--identifier", "id", "--sensitive", "when,job", "--l", "2"],
              ("column 'when'", "holds dates or times", "ISO text"),
              df=lambda: pd.DataFrame({"id": [1, 2, 3, 4], "job": list("abca"),
                                       "when": pd.to_datetime(["2020-01-02", "2021-03-04",
                                                               "2020-01-02", "2022-05-06"])}),
              paths=("memory", "parquet", "dask", "cli")),
    TableCase("date-objects", dict(M, identifiers=["id"], exact=["when"], sensitive=["job"]),
              ["--identifier", "id", "--exact", "when", "--sensitive", "job", "--l", "2"],
              ("column 'when'", "holds dates or times"),
              df=lambda: pd.DataFrame({"id": [1, 2, 3, 4], "job": list("abca"),
                                       "when": [datetime.date(2020, 1, 2)] * 4}),
              # (Dask turns an object column into text: its frame holds '2020-01-02')
              paths=("memory", "parquet", "cli")),
    TableCase("ordered-ground-on-sorted-text",
              _api(model=anonset.Closeness(0.3, ground={"job": "ordered"})),
              [*ROLES_CLI, "--t", "0.3", "--ground", "job=ordered"],
              ("column 'job'", "ground 'ordered'", "sorting its text values alphabetically",
               "it would read 'a' < 'b' < 'c' < 'd' < 'e' < 'f')"),
              cli_needles=("--ground",)),
    TableCase("decimal-objects", dict(M, identifiers=["id"], sensitive=["amount", "job"]),
              ["--identifier", "id", "--sensitive", "amount,job", "--l", "2"],
              ("column 'amount'", "holds decimal numbers (e.g. Decimal('1.5'))",
               "cast it to a float"),
              df=lambda: pd.DataFrame({"id": [1, 2, 3, 4], "job": list("abca"),
                                       "amount": [decimal.Decimal("1.5")] * 4}),
              paths=("memory", "parquet")),
    TableCase("missing-token-collides", _api(missing="category"),
              [*ROLES_CLI, "--missing", "category", "--l", "2"],
              ("column 'job'", "also the real value '?'"), ("missing_token=",),
              ("--missing-token",), df=lambda: _missing("job")().assign(
                  job=lambda d: d["job"].where(d.index != 9, "?"))),
    # the same with a declared domain, which does not list the token, or lists it:
    # missing cells and real '?'s would be published as one value
    TableCase("missing-token-collides-declared",
              _api(missing="category", domains={"job": list("abcdef")}),
              [*ROLES_CLI, "--missing", "category", "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "has 1 missing value(s) and also the real value '?' 1 time(s) "
               "(first at row 101)"), ("missing_token=OTHER",), ("--missing-token OTHER",),
              df=lambda: _missing("job")().assign(
                  job=lambda d: d["job"].where(d.index != 100, "?")),
              side={"jobs.txt": "a\nb\nc\nd\ne\nf\n"}),
    TableCase("missing-token-collides-declared-with-it",
              _api(missing="category", domains={"job": [*"abcdef", "?"]}),
              [*ROLES_CLI, "--missing", "category", "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "has 1 missing value(s) and also the real value '?' 2 time(s) "
               "(first at row 51)"),
              df=lambda: _missing("job")().assign(
                  job=lambda d: d["job"].where(~d.index.isin([50, 100]), "?")),
              side={"jobs.txt": "a\nb\nc\nd\ne\nf\n?\n"}),
    # missing cells in several blocks: counted over the whole table on every path
    TableCase("missing-in-several-blocks-declared", _api(domains={"job": list("abcdef")}),
              [*ROLES_CLI, "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "has 3 missing value(s) (first at row 8)"),
              df=lambda: frame().assign(job=lambda d: d["job"].astype(object).where(
                  ~d.index.isin([7, 60, 110]), None)),
              side={"jobs.txt": "a\nb\nc\nd\ne\nf\n"}),
    TableCase("missing-in-several-blocks-binned", STD, [*ROLES_CLI, "--l", "2"],
              ("column 'age'", "has 3 missing value(s) (first at row 8)"),
              df=lambda: frame().assign(age=lambda d: d["age"].astype(float).where(
                  ~d.index.isin([7, 60, 110]), np.nan))),
    # two columns' errors: the first row's is reported, whatever the blocks
    # (the later column's error at the earlier row; a missing cell, counted
    # over the whole table, is refused after the values are checked)
    TableCase("first-row-error-of-two-columns", _api(domains={"job": list("abcdef")}),
              [*ROLES_CLI, "--domain", "job=jobs.txt", "--l", "2"],
              ("column 'job'", "value 'zz' at row 41 is not in the domain"),
              df=lambda: frame().assign(
                  age=lambda d: d["age"].where(d.index != 100, 500),
                  job=lambda d: d["job"].where(d.index != 40, "zz"),
                  city=lambda d: d["city"].astype(object).where(d.index != 5, None)),
              side={"jobs.txt": "a\nb\nc\nd\ne\nf\n"}),
    TableCase("ordinal-text-without-order", _api(ordinal=["job"]),
              [*ROLES_CLI, "--ordinal", "job", "--l", "2"],
              ("column 'job'", "alphabetically", "it would read 'a' < 'b' < 'c' < 'd' < 'e' < 'f')")),
    TableCase("empty-table", STD, [*ROLES_CLI, "--l", "2"], ("is empty (no rows)",),
              df=lambda: frame().iloc[:0], paths=("memory", "parquet", "csv", "dask", "cli")),
    # --- keys and seeds
    TableCase("seed-empty", _api(seed=""), [*ROLES_CLI, "--seed", "", "--l", "2"],
              ("is empty",), ("seed:",), ("--seed:",)),
    TableCase("seed-short-int", _api(seed=2024), [*ROLES_CLI, "--seed", "2024", "--l", "2"],
              ("got a seed of 11 bits; expected at least 128 bits",), ("research_seed=True",),
              ("--research-seed",)),
    TableCase("seed-short-text", _api(seed="my secret"), [*ROLES_CLI, "--seed", "my secret", "--l", "2"],
              ("got a seed of 36 bits",)),
    # long enough, but written with one or two symbols: guessed at once
    TableCase("seed-repetitive-text", _api(seed="s" * 32), [*ROLES_CLI, "--seed", "s" * 32, "--l", "2"],
              ("got a seed of 128 bits that is written with 1 distinct symbol(s)", "random key material"),
              ("research_seed=True",), ("--research-seed",)),
    # the example seed documents show (this project's README showed it):
    # whoever read them re-runs the sampler
    TableCase("seed-documented-example", _api(seed="0123456789abcdef" * 2),
              [*ROLES_CLI, "--seed", "0123456789abcdef" * 2, "--l", "2"],
              ("got a seed of 128 bits that repeats a block of 16 symbols", "random key material"),
              ("research_seed=True",), ("--research-seed",)),
    TableCase("seed-in-sequence", _api(seed="abcdefghijklmnopqrstuvwxyz012345"),
              [*ROLES_CLI, "--seed", "abcdefghijklmnopqrstuvwxyz012345", "--l", "2"],
              ("that is written in sequence",)),
    TableCase("seed-repetitive-int", _api(seed=2 ** 130), [], ("seed:", "2 distinct symbol(s)"),
              paths=("memory", "parquet", "dask")),
    TableCase("key-file-repetitive", _api(key_file="key.txt"),
              [*ROLES_CLI, "--key-file", "key.txt", "--l", "2"],
              ("key.txt", "holds 40 bytes and is written with 1 distinct symbol(s)"), ("key_file:",),
              ("--key-file:",), side={"key.txt": "k" * 40 + "\n"}),
    TableCase("seed-bool", _api(seed=True), [], ("seed:", "got a bool"), paths=("memory", "parquet", "dask")),
    TableCase("seed-float", _api(seed=1.5), [], ("seed:", "got a float"), paths=("memory", "parquet", "dask")),
    TableCase("seed-and-key-file", _api(seed=SEED, key_file="key.txt"), [],
              ("key_file:", "together with a seed"), side={"key.txt": "k" * 40},
              paths=("memory", "parquet", "dask")),
    TableCase("key-file-missing", _api(key_file="nokey.txt"),
              [*ROLES_CLI, "--key-file", "nokey.txt", "--l", "2"], ("nokey.txt", "does not exist")),
    TableCase("key-file-too-short", _api(key_file="key.txt"),
              [*ROLES_CLI, "--key-file", "key.txt", "--l", "2"], ("key.txt", "holds 5 bytes"),
              side={"key.txt": "short\n"}),
    # research_seed without a seed was ignored: a fresh OS key, nothing reproducible
    TableCase("research-seed-without-seed", _api(research_seed=True),
              [*ROLES_CLI, "--research-seed", "--l", "2"],
              ("is set, but no seed is given", "not reproducible"),
              ("research_seed:", "expected seed given too"),
              ("--research-seed:", "expected --seed given too")),
    TableCase("seed-env-unset", {}, [*ROLES_CLI, "--seed-env", "ANONSET_TEST_NO_SUCH_VAR", "--l", "2"],
              ("--seed-env:", "names no environment variable that is set"), paths=("cli",)),
    # --- parameter values
    TableCase("rng-unknown", _api(rng="mt19937"), [], ("rng:", "mt19937", "chacha20, philox"),
              paths=("memory", "parquet", "dask")),
    TableCase("missing-unknown", _api(missing="omit"), [], ("missing:", "'omit'", "error, category"),
              paths=("memory", "parquet", "dask")),
    TableCase("missing-drop", _api(missing="drop"), [*ROLES_CLI, "--missing", "drop", "--l", "2"],
              ("missing", "'drop' leaves rows out", "category")),
    TableCase("missing-token-empty", _api(missing="category", missing_token=""),
              [*ROLES_CLI, "--missing", "category", "--missing-token", "", "--l", "2"],
              ("got ''", "non-empty"), ("missing_token:",), ("--missing-token:",)),
    TableCase("threads-zero", _api(n_threads=0), [*ROLES_CLI, "--threads", "0", "--l", "2"],
              (), ("n_threads:", "expected an integer >= 1"), ("--threads", "positive integer")),
    TableCase("threads-text", _api(n_threads="2"), [], ("n_threads:", "'2'"),
              paths=("memory", "parquet", "dask")),
    TableCase("keep-order-not-bool", _api(keep_order="yes"), [], ("keep_order:", "True or False"),
              paths=("memory", "parquet", "dask")),
    TableCase("clip-l-not-bool", _api(clip_l=1), [], ("clip_l:", "True or False"),
              paths=("memory", "parquet", "dask")),
    TableCase("sensitive-not-names", _api(sensitive=[1, 2]), [], ("sensitive:", "column names"),
              paths=("memory", "parquet", "dask")),
    TableCase("sensitive-repeated", _api(sensitive=["age", "age", "job", "city"]),
              [], ("sensitive:", "twice"), paths=("memory", "parquet", "dask")),
    TableCase("bins-not-mapping", _api(bins=[0, 1]), [], ("bins:", "mapping"),
              paths=("memory", "parquet", "dask")),
    TableCase("model-not-a-model", dict(ROLES_API, model="l=2"), [], ("model:", "got a str"),
              paths=("memory", "parquet", "dask")),
    # a set's order is not the caller's (text in a set is ordered anew in each
    # run: one seed drew other sets), and text was read a character at a time
    TableCase("domain-a-set", _api(domains={"job": set("abcdef")}), [],
              ("domains: column 'job': got a set, which has no order of its own",
               "e.g. sorted(...)"), paths=("memory", "parquet", "dask")),
    TableCase("domain-text", _api(domains={"job": "abcdef"}), [],
              ("domains: column 'job': got the text 'abcdef'; expected a list of the domain's "
               "values",), paths=("memory", "parquet", "dask")),
    TableCase("bins-text", _api(bins={"age": "0:30:120"}), [],
              ("bins: column 'age': got the text '0:30:120'; expected a list of increasing bin "
               "edges",), paths=("memory", "parquet", "dask")),
    TableCase("ordinal-text", _api(ordinal={"job": "fedcba"}), [],
              ("ordinal: column 'job': got the text 'fedcba'",),
              paths=("memory", "parquet", "dask")),
    TableCase("schema-and-roles", dict(STD, schema=anonset.Schema((anonset.Attribute(
        "job", domain=tuple("abcdef")),))), [], ("schema:", "either a schema or role arguments"),
              paths=("memory", "parquet", "dask")),
]

#: the model's own checks, raised where the model is built (every path alike)
MODEL_CASES = [   # (id, the API call, CLI flags, CLI needle, API needle)
    ("l-zero", lambda: anonset.Diversity(0), ["--l", "0"], "--l: got 0; expected an integer >= 1",
     "l: got 0; expected an integer >= 1"),
    ("l-negative", lambda: anonset.Diversity(-3), ["--l", "-3"], "--l: got -3", "l: got -3"),
    ("l-fraction", lambda: anonset.Diversity(2.5), ["--l", "2.5"], "--l: expected an integer",
     "l: got 2.5"),
    ("l-text", lambda: anonset.Diversity("5"), ["--l", "abc"], "--l: expected an integer",
     "l: got '5'"),
    ("l-per-column-bad", lambda: anonset.Diversity({"age": 2, "job": 0}), ["--l", "age=2,job=0"],
     "--l: column 'job': got 0", "l: column 'job': got 0"),
    ("k-zero", lambda: anonset.Anonymity(0), ["--k", "0"], "--k: got 0", "k: got 0"),
    ("t-above-1", lambda: anonset.Closeness(1.5), ["--t", "1.5"],
     "--t: got 1.5; expected a number in [0, 1]", "t: got 1.5"),
    ("t-negative", lambda: anonset.Closeness(-0.1), ["--t", "-0.1"], "--t: got -0.1", "t: got -0.1"),
    ("t-nan", lambda: anonset.Closeness(float("nan")), ["--t", "nan"], "--t: expected a number",
     "t: got nan"),
    ("t-per-column-bad", lambda: anonset.Closeness({"age": 0.2, "job": 7.0}),
     ["--t", "age=0.2,job=7"], "--t: column 'job': got 7.0", "t: column 'job': got 7.0"),
    ("ground-unknown", lambda: anonset.Closeness(0.2, ground={"age": "manhattan"}),
     ["--t", "0.2", "--ground", "age=manhattan"], "--ground for 'age'", "ground: column 'age'"),
    ("ground-not-text", lambda: anonset.DiversityCloseness(2, 0.2, ground=3),
     ["--t", "0.2", "--ground", "3"], "--ground: expected one of", "ground: got 3"),
    ("measure-unknown", lambda: anonset.Diversity(2, measure="recursive"), ["--l", "2", "--entropy",
                                                                           "--k", "3"],
     "--l and --k", "measure: got 'recursive'"),
    ("l-and-k", None, ["--l", "2", "--k", "3"], "--l and --k are conflicting", None),
    ("k-and-t", None, ["--k", "2", "--t", "0.3"], "--k cannot be combined with --t", None),
    ("entropy-without-l", None, ["--entropy", "--k", "2"], "--entropy needs --l", None),
    ("ground-without-t", None, ["--l", "2", "--ground", "equal"], "--ground applies to closeness",
     None),
    ("no-model", None, [], "no privacy model", None),
    ("bins-not-numbers", None, ["--l", "2", "--bins", "job=a:b"], "--bins for 'job'", None),
    ("bins-decreasing", lambda: anonset.Attribute("age", bins=(3, 1)),
     ["--l", "2", "--bins", "job=5:1"], "increasing", "strictly increasing"),
    ("hierarchy-file-missing", None, ["--l", "2", "--hierarchy", "city=nope.csv"],
     "--hierarchy for 'city'", None),
    ("threads-text", None, ["--l", "2", "--threads", "two"], "argument --threads", None),
    ("chunk-rows-zero", lambda: publish_file("x.csv", "y.csv", D2, chunk_rows=0),
     ["--l", "2", "--chunk-rows", "0"], "argument --chunk-rows", "chunk_rows: got 0"),
    ("rng-unknown", None, ["--l", "2", "--rng", "mt"], "argument --rng: invalid choice", None),
]


def _run_paths(case: TableCase, tmp: Path):
    """Each path's outcome: an exception (API) or (rc, stderr) (CLI)."""
    from anonset import dask as adask
    df = case.df()
    for name, text in case.side.items():
        (tmp / name).write_text(text)
    out = {}
    api = dict(case.api)
    model = api.pop("model", D2)
    if any(p in case.paths for p in ("parquet", "csv", "cli")):
        df.to_parquet(tmp / "in.parquet", index=False)
        df.to_csv(tmp / "in.csv", index=False)
    for path in case.paths:
        try:
            if path == "memory":
                anonset.publish(df, model, **api)
            elif path in ("parquet", "csv"):
                publish_file(tmp / f"in.{path}", tmp / "out.parquet", model, chunk_rows=37, **api)
            elif path == "dask":
                import dask.dataframe as dd
                adask.publish(dd.from_pandas(df, npartitions=3), model, scheduler="sync", **api)
            else:
                continue
            out[path] = None
        except (ValueError, TypeError) as e:
            out[path] = e
    return out


@pytest.mark.parametrize("case", TABLE_CASES, ids=[c.id for c in TABLE_CASES])
def test_table_case(case: TableCase, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANONSET_TEST_NO_SUCH_VAR", raising=False)
    results = _run_paths(case, tmp_path)
    before = snapshot(tmp_path)
    for path, e in results.items():
        assert e is not None, f"{path} accepted {case.id}"
        msg = str(e)
        for needle in case.needles + case.api_needles:
            assert needle in msg, f"{path}: {needle!r} not in {msg!r}"
        assert "\n" not in msg
    # memory, streamed Parquet and Dask refuse with the same error
    same = [results[p] for p in ("memory", "parquet", "dask") if p in results]
    if len(same) > 1 and all(isinstance(e, InputError) for e in same):
        sig = {(e.param, e.column, e.what) for e in same}
        assert len(sig) == 1, sig
    if "cli" in case.paths:
        inp = "in.parquet" if case.id in ("nested-list-column", "domain-too-large-for-closeness",
                                           "domain-beyond-the-sampler", "datetime-column",
                                           "date-objects") else "in.csv"
        if not (tmp_path / inp).exists():
            df = case.df()
            df.to_parquet(tmp_path / "in.parquet", index=False)
            df.to_csv(tmp_path / "in.csv", index=False)
        before = snapshot(tmp_path)
        rc = cli.main(["anonymize", inp, "-o", "cli_out.csv", *case.cli])
        err = capsys.readouterr().err
        assert rc == 2, err
        err = one_line(err, "anonset anonymize: error: ")
        for needle in case.needles + case.cli_needles:
            assert needle in err, f"cli: {needle!r} not in {err!r}"
        assert not any(w in err for w in ("clip_l=", "missing=", "allow_clear=", "research_seed=",
                                          "record_id:", "n_threads")), err
    # nothing left on disk, the inputs untouched
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("cid, build, flags, needle, api_needle", MODEL_CASES,
                         ids=[c[0] for c in MODEL_CASES])
def test_model_case(cid, build, flags, needle, api_needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    frame().to_csv("in.csv", index=False)
    before = snapshot(tmp_path)
    if build is not None:
        with pytest.raises(ValueError) as exc:
            build()
        assert api_needle in str(exc.value), str(exc.value)
    roles = [*ROLES_CLI] if "--bins" not in flags else [*ROLES_CLI[:-2]]
    rc = cli.main(["anonymize", "in.csv", "-o", "out.csv", *roles, *flags])
    err = one_line(capsys.readouterr().err, "anonset anonymize: error: ")
    assert rc == 2 and needle in err, err
    assert snapshot(tmp_path) == before


def test_numpy_integers_are_integers():
    # issue 14 item 7: NumPy integer scalars are accepted wherever Python ints are
    df = frame()
    a = anonset.publish(df, anonset.Diversity(np.int64(3)), seed=np.int64(5), research_seed=True,
                        n_threads=np.int32(1), **ROLES_API)
    b = anonset.publish(df, anonset.Diversity(3), seed=5, research_seed=True, n_threads=1,
                        **ROLES_API)
    assert a.equals(b)
    assert anonset.Closeness(np.float64(0.3)).t_for("x") == 0.3
    with pytest.raises(ValueError, match="l: got .*; expected an integer >= 1"):
        anonset.Diversity(np.float64(2.5))


# ============================================================= file cases
@dataclass
class FileCase:
    id: str
    name: str
    content: Callable          # () -> bytes, or None for "no file"
    needles: tuple
    output: str = "out.parquet"
    flags: list = field(default_factory=lambda: [*ROLES_CLI, "--l", "2"])
    api_output: str | None = None


def _csv(text):
    return lambda: text.encode()


def _pq(df=None, mangle=None):
    def f():
        import io
        buf = io.BytesIO()
        (df if df is not None else frame()).to_parquet(buf, index=False)
        b = buf.getvalue()
        return mangle(b) if mangle else b
    return f


HEAD = "id,age,job,city,note\n"
FILE_CASES = [
    FileCase("duplicate-header", "in.csv", _csv("id,age,job,job,note\n1,20,a,b,n\n"),
             ("in.csv", "names the column(s) ['job'] more than once")),
    FileCase("duplicate-identifier-header", "in.csv", _csv("id,id,age,job,city,note\n1,1,20,a,x,n\n"),
             ("names the column(s) ['id'] more than once",)),
    FileCase("empty-header-name", "in.csv", _csv("id,age,,city,note\n1,20,a,x,n\n"),
             ("in.csv", "empty or non-text column name ''")),
    # (H149: what pandas' to_csv() writes with its index: the remedy said)
    FileCase("pandas-index-column", "in.csv", _csv(",id,age,job,city,note\n0,1,20,a,x,n\n"),
             ("in.csv", "empty or non-text column name ''", "to_csv() writes: write the "
              "file with index=False")),
    # (';', tab and '|' alone are read as the separator: tests/test_inputs.py)
    FileCase("two-separators-in-the-header", "in.csv",
             _csv("id;age;job\tcity;note\n1;20;a\tx;n\n2;30;b\ty;n\n"),
             ("in.csv", "holds no comma but ';' and '\\t'", "comma-separated values, or")),
    FileCase("ragged-long-row", "in.csv", _csv(HEAD + "1,20,a,x,n\n2,30,b,y,n,extra\n"),
             ("in.csv", "wrong number of fields: row 2 has 6", "5 fields on every row")),
    FileCase("ragged-short-row", "in.csv", _csv(HEAD + "1,20,a,x,n\n2,30,b\n"),
             ("in.csv", "wrong number of fields: row 2 has 3")),
    # blank lines are no rows (the reader skips them): they shifted the row
    # the ragged-row refusal named (H138)
    FileCase("ragged-row-after-blank-lines", "in.csv",
             _csv(HEAD + "1,20,a,x,n\n\n\n2,30,b,y,n\n\n3,40,b\n"),
             ("in.csv", "wrong number of fields: row 3 has 3")),
    FileCase("non-utf8", "in.csv", lambda: (HEAD + "1,20,a,x,n\n").encode() + b"2,30,\xff\xfe,y,n\n",
             ("in.csv", "is not UTF-8 text: line 3 holds the byte 0xff (byte 38 of its text)",
              "in Windows-1252 or Latin-1, which spreadsheets on Windows write, it is 'ÿ'",
              "(iconv -f WINDOWS-1252 -t UTF-8 in.csv > in-utf8.csv)")),
    FileCase("non-utf8-header", "in.csv", lambda: b"id,\xe9ge,job,city,note\n1,2,a,x,n\n",
             ("in.csv", "line 1 holds the byte 0xe9 (byte 4 of its text)", "it is 'é'")),
    # a spreadsheet's "Unicode text" and PowerShell's default: UTF-16
    FileCase("utf16", "in.csv", lambda: (HEAD + "1,20,a,x,n\n").encode("utf-16"),
             ("in.csv", "is not UTF-8 text but UTF-16 (it starts with a UTF-16 byte-order mark)",
              "(iconv -f UTF-16 -t UTF-8 in.csv > in-utf8.csv)")),
    FileCase("non-utf8-compressed", "in.csv.gz",
             lambda: __import__("gzip").compress((HEAD + "1,20,a,x,n\n").encode() +
                                                 "2,30,Qu\u00e9bec,y,n\n".encode("cp1252")),
             ("in.csv.gz", "line 3 holds the byte 0xe9 (byte 40 of its text)",
              "(zcat in.csv.gz | iconv -f WINDOWS-1252 -t UTF-8 > in-utf8.csv)")),
    FileCase("empty-file", "in.csv", _csv(""), ("in.csv", "is empty (no header line)")),
    FileCase("header-only", "in.csv", _csv(HEAD), ("is empty (no rows)",)),
    FileCase("blank-lines-only", "in.csv", _csv("\n\n"), ("in.csv", "empty")),
    FileCase("truncated-parquet", "in.parquet", _pq(mangle=lambda b: b[: len(b) // 2]),
             ("in.parquet", "not a readable Parquet file")),
    FileCase("corrupt-parquet-footer", "in.parquet",
             _pq(mangle=lambda b: b[:-40] + b"\xff" * 32 + b[-8:]),
             ("in.parquet", "not a readable Parquet file")),
    FileCase("not-parquet-at-all", "in.parquet", _csv("hello"), ("in.parquet", "not a readable")),
    FileCase("empty-parquet", "in.parquet", _pq(frame().iloc[:0]), ("is empty (no rows)",)),
    FileCase("missing-input", "in.csv", None, ("in.csv", "does not exist")),
    FileCase("input-is-directory", "in.csv", "dir", ("in.csv", "is a directory")),
    FileCase("input-is-stdin", "-", None, ("'-'", "standard input", "expected a file")),
    # a shell's <(zcat in.csv.gz) is a pipe: read once, it would hang or
    # publish nothing on the second read
    FileCase("input-is-a-pipe", "in.csv", "fifo",
             ("in.csv", "is not a regular file (a pipe or a device)", "a compressed CSV is "
              "read as it is")),
    FileCase("input-is-a-parquet-dataset", "in.parquet", "pqdir",
             ("in.parquet", "is a directory", "anonset.dask.publish(dask.dataframe.read_parquet")),
    FileCase("unknown-input-extension", "in.dat", _csv(HEAD + "1,20,a,x,n\n"),
             ("in.dat", "extension that names no known format")),
    FileCase("unknown-output-extension", "in.csv", _csv(HEAD + "1,20,a,x,n\n"),
             ("out.dat", "extension"), output="out.dat"),
    FileCase("output-is-input", "in.csv", _csv(HEAD + FOUR_AGES),
             ("is an input file",), output="in.csv"),
    FileCase("output-directory-missing", "in.csv", _csv(HEAD + FOUR_AGES),
             ("directory that does not exist",), output="nodir/out.csv"),
    FileCase("output-is-a-directory", "in.csv", _csv(HEAD + FOUR_AGES),
             ("outdir.csv", "is a directory"), output="outdir.csv"),
    FileCase("output-compression-unsupported", "in.csv", _csv(HEAD + "1,20,a,x,n\n2,30,b,y,n\n"),
             ("out.csv.zst", "compression"), output="out.csv.zst"),
    FileCase("text-in-binned-column", "in.csv", _csv(HEAD + "1,20,a,x,n\n2,old,b,y,n\n"),
             ("column 'age'", "'old'", "numeric")),
    FileCase("header-only-in-gzip", "in.csv.gz", lambda: __import__("gzip").compress(HEAD.encode()),
             ("is empty (no rows)",)),
    # a compression the name does not say (H138: plain text named .csv.xz
    # raised lzma's LZMAError, a traceback; named .csv.gz, zlib's words and
    # nothing expected; gzip named .csv was called Windows-1252 text)
    FileCase("plain-text-named-gz", "in.csv.gz", _csv(HEAD + FOUR_AGES),
             ("'in.csv.gz': is not gzip-compressed, though its name ends in .gz",
              "expected a gzip-compressed CSV file", "rename it 'in.csv'")),
    FileCase("plain-text-named-bz2", "in.csv.bz2", _csv(HEAD + FOUR_AGES),
             ("'in.csv.bz2': is not bzip2-compressed", "rename it 'in.csv'")),
    FileCase("plain-text-named-xz", "in.csv.xz", _csv(HEAD + FOUR_AGES),
             ("'in.csv.xz': is not xz-compressed, though its name ends in .xz",
              "expected an xz-compressed CSV file", "rename it 'in.csv'")),
    FileCase("xz-named-gz", "in.csv.gz", lambda: __import__("lzma").compress(
        (HEAD + FOUR_AGES).encode()),
             ("'in.csv.gz': is xz-compressed, though its name ends in .gz",
              "rename it 'in.csv.xz'")),
    FileCase("gzip-named-csv", "in.csv", lambda: __import__("gzip").compress(
        (HEAD + FOUR_AGES).encode()),
             ("'in.csv': is gzip-compressed, though its name does not say so",
              "expected a plain CSV file (rename it 'in.csv.gz'")),
    FileCase("corrupt-xz-in-the-middle", "in.csv.xz", lambda: _damaged("xz"),
             ("'in.csv.xz': is not a readable CSV file", "xz decompress failed",
              "expected a whole, undamaged xz-compressed CSV file")),
    FileCase("truncated-xz", "in.csv.xz", lambda: _damaged("xz", cut=True),
             ("'in.csv.xz': is not a readable CSV file",
              "expected a whole, undamaged xz-compressed CSV file")),
    FileCase("corrupt-gzip-in-the-middle", "in.csv.gz", lambda: _damaged("gz"),
             ("'in.csv.gz': is not a readable CSV file",
              "expected a whole, undamaged gzip-compressed CSV file")),
]


def _damaged(kind: str, cut: bool = False) -> bytes:
    """A compressed CSV of some 300 kB of text, damaged (64 zero bytes) or
    cut short in the middle of its compressed stream."""
    import gzip
    import lzma
    rng = np.random.default_rng(0)
    rows = "".join(f"{i},{rng.integers(20, 80)},{'ab'[i % 2]},{'xy'[i % 3 % 2]},"
                   f"n{rng.integers(1e9)}\n"
                   for i in range(12_000))
    b = bytearray((lzma.compress if kind == "xz" else gzip.compress)((HEAD + rows).encode()))
    n = len(b) // 2
    if cut:
        return bytes(b[:n])
    b[n:n + 64] = bytes(64)
    return bytes(b)


@pytest.mark.parametrize("case", FILE_CASES, ids=[c.id for c in FILE_CASES])
def test_file_case(case: FileCase, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if case.content in ("dir", "pqdir"):
        (tmp_path / case.name).mkdir()
        if case.content == "pqdir":            # a partitioned dataset, as pandas writes it
            frame().to_parquet(tmp_path / case.name / "part-0.parquet")
    elif case.content == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes on this system")
        os.mkfifo(tmp_path / case.name)
    elif case.content is not None:
        (tmp_path / case.name).write_bytes(case.content())
    if case.id == "output-is-a-directory":
        (tmp_path / case.output).mkdir()
    before = snapshot(tmp_path)
    rc = cli.main(["anonymize", case.name, "-o", case.output, *case.flags])
    err = one_line(capsys.readouterr().err, "anonset anonymize: error: ")
    assert rc == 2
    for needle in case.needles:
        assert needle in err, (needle, err)
    assert snapshot(tmp_path) == before
    with pytest.raises(ValueError) as exc:
        publish_file(case.name, case.output, D2, chunk_rows=7, **ROLES_API)
    for needle in case.needles:
        assert needle in str(exc.value), (needle, str(exc.value))
    assert snapshot(tmp_path) == before
    assert not (tmp_path / (case.output + ".anonset.json")).exists()


# ================================================== published-file cases
def _published(tmp: Path, fmt: str, sets: str = "lists") -> Path:
    p = tmp / f"pub.{fmt}"
    pub = anonset.publish(frame(), anonset.Diversity(2), seed=SEED, **ROLES_API)
    pub.to_parquet(p, sets=sets) if fmt == "parquet" else pub.to_csv(p)
    return p


def _edit_masks(fn):
    """Change the bitmasks of a mask-encoded Parquet file's job column."""
    def edit(p: Path):
        import pyarrow as pa
        import pyarrow.parquet as pq
        anonset.read_parquet(p).to_parquet(p, sets="masks")
        t = pq.read_table(p)
        m = t.column("job").to_numpy().copy()
        fn(m)
        i = t.column_names.index("job")
        pq.write_table(t.set_column(i, "job", pa.array(m, type=t.schema.field("job").type)), p)
    return edit


def _edit_meta(fn):
    """Change the metadata of a published file (Parquet footer or CSV sidecar)."""
    def edit(p: Path):
        if p.suffix == ".csv":
            mp = Path(str(p) + ".anonset.json")
            meta = json.loads(mp.read_text())
            fn(meta)
            mp.write_text(json.dumps(meta))
            return
        import pyarrow.parquet as pq
        t = pq.read_table(p)
        meta = json.loads(t.schema.metadata[b"anonset"])
        fn(meta)
        pq.write_table(t.replace_schema_metadata({b"anonset": json.dumps(meta).encode()}), p)
    return edit


def _edit_rows(fn):
    """Change the sets of a published file (Parquet: the job list column)."""
    def edit(p: Path):
        if p.suffix == ".csv":
            lines = p.read_text().splitlines()
            p.write_text("\n".join(fn(lines)) + "\n")
            return
        import pyarrow as pa
        import pyarrow.parquet as pq
        t = pq.read_table(p)
        cells = fn(t.column("job").to_pylist())
        i = t.column_names.index("job")
        pq.write_table(t.set_column(i, "job", pa.array(cells, type=t.schema.field("job").type)), p)
    return edit


def _set_p(v):
    return _edit_meta(lambda m: m["params"]["job"].update(p=v))


def _dup_member(cells):
    cells[3] = [cells[3][0], cells[3][0]]
    return cells


def _empty_set(cells):
    cells[5] = []
    return cells


def _csv_dup(lines):
    import csv
    import io
    rows = list(csv.reader(lines))
    i = rows[0].index("job")
    first = rows[4][i][1:-1].split("|")[0]
    rows[4][i] = "{" + first + "|" + first + "}"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().splitlines()


PUBLISHED_CASES = [
    ("p-nan", "parquet", _set_p(float("nan")), ("metadata field 'params.job.p'", "[0, 1]")),
    ("p-above-1", "parquet", _set_p(1.5), ("'params.job.p' is 1.5",)),
    ("p-negative", "csv", _set_p(-0.5), ("'params.job.p'",)),
    ("p-text", "csv", _set_p("high"), ("'params.job.p' is 'high'", "expected a number")),
    ("d-wrong", "parquet", _edit_meta(lambda m: m["params"]["job"].update(d=9)),
     ("'params.job.d' is 9 but the domain has 6 values",)),
    ("eta-above-d", "parquet", _edit_meta(lambda m: m["params"]["job"].update(eta=8)),
     ("'params.job.eta' is 8",)),
    ("eta-raised", "parquet", _edit_meta(lambda m: m["params"]["job"].update(eta=3)),
     ("column 'job' holds a set of 2 values", "eta = 3")),
    ("eta-raised-csv", "csv", _edit_meta(lambda m: m["params"]["job"].update(eta=3)),
     ("column 'job' holds a set of 2 values",)),
    ("n-rows-wrong", "parquet", _edit_meta(lambda m: m.update(n_rows=200)),
     ("holds 120 rows but its metadata says 200",)),
    ("n-rows-huge", "csv", _edit_meta(lambda m: m.update(n_rows=10 ** 12)),
     ("but its metadata says 1,000,000,000,000",)),
    ("n-rows-negative", "parquet", _edit_meta(lambda m: m.update(n_rows=-1)), ("'n_rows' is -1",)),
    ("version-from-the-future", "parquet", _edit_meta(lambda m: m.update(version=99)),
     ("'version' is 99, newer than this anonset understands",)),
    ("version-missing", "csv", _edit_meta(lambda m: m.pop("version")), ("'version' is None",)),
    ("params-missing-attribute", "parquet", _edit_meta(lambda m: m["params"].pop("city")),
     ("'params' covers",)),
    ("schema-garbage", "csv", _edit_meta(lambda m: m.update(schema={"x": 1})),
     ("'schema' is not a valid schema",)),
    ("not-anonset", "parquet", _edit_meta(lambda m: m.update(format="other")),
     ("not a published anonset table",)),
    ("duplicate-member", "parquet", _edit_rows(_dup_member), ("a set with a repeated member",)),
    ("duplicate-member-csv", "csv", _edit_rows(_csv_dup), ("a set with a repeated member",)),
    ("empty-set", "parquet", _edit_rows(_empty_set), ("an empty set",)),
    ("value-not-in-domain", "parquet",
     _edit_rows(lambda c: [["a", "zz"] if i == 2 else x for i, x in enumerate(c)]),
     ("column 'job' holds 'zz', which is not in its published domain (data row 3)",)),
    ("csv-truncated", "csv", _edit_rows(lambda lines: lines[: len(lines) // 2]),
     ("holds 59 rows but its metadata says 120",)),
    ("csv-sidecar-missing", "csv", lambda p: Path(str(p) + ".anonset.json").unlink(),
     ("pub.csv.anonset.json", "is missing")),
    ("csv-sidecar-not-json", "csv", lambda p: Path(str(p) + ".anonset.json").write_text("{x"),
     ("not valid JSON",)),
    ("parquet-truncated", "parquet", lambda p: p.write_bytes(p.read_bytes()[:300]),
     ("pub.parquet", "not a readable Parquet file")),
    ("plain-parquet", "parquet", lambda p: frame().to_parquet(p), ("no anonset metadata",)),
    ("mask-bit-outside-domain", "parquet", _edit_masks(lambda m: m.__setitem__(6, m[6] | 128)),
     ("column 'job' holds a set with a value outside its domain",)),
    ("mask-one-bit-short", "parquet", _edit_masks(lambda m: m.__setitem__(9, m[9] & (m[9] - 1))),
     ("column 'job' holds a set of 1 values", "eta = 2")),
    ("mask-empty", "parquet", _edit_masks(lambda m: m.__setitem__(0, 0)),
     ("column 'job' holds an empty set",)),
]


@pytest.mark.parametrize("cid, fmt, tamper, needles", PUBLISHED_CASES,
                         ids=[c[0] for c in PUBLISHED_CASES])
def test_published_file_case(cid, fmt, tamper, needles, tmp_path, capsys):
    p = _published(tmp_path, fmt)
    tamper(p)
    before = snapshot(tmp_path)
    read = anonset.read_parquet if fmt == "parquet" else anonset.read_csv
    for f in (read, lambda q: reconstruct_file(q, ["job"], chunk_rows=13),
              lambda q: reconstruct_file(q, ["age", "job"], "exact_em", chunk_rows=50)):
        with pytest.raises(ValueError) as exc:
            f(p)
        for needle in needles:
            assert needle in str(exc.value), (needle, str(exc.value))
    for argv in (["reconstruct", str(p), "--attributes", "job", "-o", str(tmp_path / "ct.csv")],
                 ["audit", str(p)]):
        rc = cli.main(argv)
        err = one_line(capsys.readouterr().err, f"anonset {argv[0]}: error: ")
        assert rc == 2 and all(n in err for n in needles), err
    assert snapshot(tmp_path) == before


# ====================================================== other subcommands
def _adult_small(tmp: Path) -> Path:
    df = anonset.datasets.load_adult().head(300)
    p = tmp / "adult.csv"
    df.to_csv(p, index=False)
    return p


SUBCOMMAND_CASES = [
    ("semantic-unnamed", ["semantic-anonymize", "{adult}", "-o", "o.parquet", "--sensitive",
                          "education", "--l", "3", "--d", "1"], ("columns have no role", "--qids")),
    ("semantic-sensitive-unknown", ["semantic-anonymize", "{adult}", "-o", "o.parquet",
                                    "--sensitive", "nope", "--l", "3", "--d", "1"], ("'nope'",)),
    ("semantic-short-seed", ["semantic-anonymize", "{in}", "-o", "o.parquet", "--sensitive", "job",
                             "--qids", "city", "--identifier", "id", "--drop", "age,note", "--l",
                             "2", "--d", "1", "--domain", "a,b,c,d,e,f", "--seed", "7"],
     ("--seed:", "--research-seed")),
    ("semantic-domain-not-numbers", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                     "--sensitive", "age", "--qids", "city", "--identifier",
                                     "id", "--drop", "job,note", "--l", "2", "--d", "1",
                                     "--values", "positions", "--domain", "20,30,?"],
     ("--domain: column 'age' holds integers, and the domain lists '?'; expected integers",)),
    ("semantic-infeasible", ["semantic-anonymize", "{in}", "-o", "o.parquet", "--sensitive", "job",
                             "--qids", "city", "--identifier", "id", "--drop", "age,note",
                             "--l", "3", "--d", "9", "--domain", "a,b,c,d,e,f"], ("infeasible",)),
    ("semantic-text-unordered", ["semantic-anonymize", "{in}", "-o", "o.parquet", "--sensitive",
                                 "job", "--qids", "city", "--identifier", "id", "--drop",
                                 "age,note", "--l", "2", "--d", "2"],
     ("column 'job'", "alphabetically", "--domain")),
    ("semantic-numbers-two-readings", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                      "--sensitive", "age", "--qids", "city", "--identifier",
                                      "id", "--drop", "job,note", "--l", "2", "--d", "5"],
     ("--values: column 'age'", "not consecutive integers", "--values domain",
      "--values positions")),
    ("semantic-values-not-numbers", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                     "--sensitive", "age", "--qids", "city", "--identifier",
                                     "id", "--drop", "job,note", "--l", "2", "--d", "5",
                                     "--values", "1,two"], ("--values:", "'domain', 'positions'")),
    ("semantic-hierarchy-unbalanced", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                      "--sensitive", "job", "--qids", "city", "--identifier",
                                      "id", "--drop", "age,note", "--l", "2", "--d", "1",
                                      "--hierarchy", "{bad_h}"],
     ("'bad_h.csv': --hierarchy: column 'job': line 3 ('c') has 2 levels",)),
    ("lgb-hierarchy-unbalanced", ["lgb", "{in}", "-o", "o.csv", "--qi", "age,city",
                                  "--sensitive", "job", "--identifier", "id", "--drop", "note",
                                  "--k", "2", "--l", "2", "--hierarchy", "job={bad_h}"],
     ("'bad_h.csv': --hierarchy: column 'job': line 3 ('c') has 2 levels",)),
    ("msa-hierarchy-unbalanced", ["msa-anonymize", "{in}", "-o", "o.csv", "--qi", "age,city",
                                  "--sa", "job", "--identifier", "id", "--drop", "note",
                                  "--k", "2", "--t", "0.5", "--hierarchy", "job={bad_h}"],
     ("'bad_h.csv': --hierarchy: column 'job': line 3 ('c') has 2 levels",)),
    ("semantic-l-above-domain", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                "--sensitive", "job", "--qids", "city", "--identifier", "id",
                                "--drop", "age,note", "--l", "9", "--d", "1",
                                "--domain", "a,b,c,d,e,f"],
     ("--l: l = 9 exceeds the domain size F = 6", "expected at most 6")),
    ("semantic-infeasible", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                             "--sensitive", "job", "--qids", "city", "--identifier", "id",
                             "--drop", "age,note", "--l", "3", "--d", "3",
                             "--domain", "a,b,c,d,e,f"],
     ("--d: (l=3, d=3)-semantic diversity is infeasible", "expected a smaller d or l")),
    ("semantic-matrix-asymmetric", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                    "--sensitive", "job", "--qids", "city", "--identifier",
                                    "id", "--drop", "age,note", "--l", "2", "--d", "1",
                                    "--domain", "a,b,c", "--matrix", "{asym}"],
     ("'asym.csv': --matrix: distance matrix must be symmetric", "in --domain order")),
    ("semantic-matrix-size", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                              "--sensitive", "job", "--qids", "city", "--identifier", "id",
                              "--drop", "age,note", "--l", "2", "--d", "1",
                              "--domain", "a,b,c,d,e,f", "--matrix", "{sym3}"],
     ("'sym3.csv': --matrix: is 3 x 3; expected 6 x 6",)),
    ("semantic-matrix-missing", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                 "--sensitive", "job", "--qids", "city", "--identifier", "id",
                                 "--drop", "age,note", "--l", "2", "--d", "1",
                                 "--domain", "a,b,c,d,e,f", "--matrix", "nope.csv"],
     ("'nope.csv': --matrix: does not exist",)),
    ("semantic-analyze-not-published", ["semantic-analyze", "{in}", "-o", "x.csv"],
     ("in.csv.anonset.json", "is missing")),
    ("lgb-unnamed", ["lgb", "{in}", "-o", "o.csv", "--qi", "age", "--k", "2"],
     ("columns have no role", "--drop")),
    ("lgb-k-zero", ["lgb", "{in}", "-o", "o.csv", "--qi", "age", "--k", "0"], ("--k",)),
    ("lgb-short-seed", ["lgb", "{in}", "-o", "o.csv", "--qi", "age", "--drop", "job,city,note",
                        "--identifier", "id", "--k", "2", "--seed", "3"],
     ("--seed:", "--research-seed")),
    ("msa-unnamed", ["msa-anonymize", "{in}", "-o", "o.csv", "--qi", "age", "--sa", "job",
                     "--k", "2", "--t", "0.5"], ("columns have no role", "--other")),
    ("msa-research-seed-without-seed", ["msa-anonymize", "{in}", "-o", "o.csv", "--qi", "age",
                                        "--sa", "job", "--drop", "city,note", "--identifier",
                                        "id", "--k", "2", "--t", "0.5", "--research-seed"],
     ("--research-seed: is set, but no seed is given", "expected --seed given too")),
    ("semantic-research-seed-without-seed", ["semantic-anonymize", "{in}", "-o", "o.parquet",
                                             "--sensitive", "job", "--qids", "city",
                                             "--identifier", "id", "--drop", "age,note", "--l",
                                             "2", "--d", "1", "--domain", "a,b,c,d,e,f",
                                             "--research-seed"],
     ("--research-seed: is set, but no seed is given", "expected --seed given too")),
    ("msa-t-out-of-range", ["msa-anonymize", "{in}", "-o", "o.csv", "--qi", "age", "--sa", "job",
                            "--k", "2", "--t", "1.5"], ("--t",)),
    ("audit-missing-file", ["audit", "nope.parquet"], ("nope.parquet", "does not exist")),
    ("audit-targets-zero", ["audit", "{pub}", "--attack", "--targets", "0"], ("--targets",)),
    ("reconstruct-unknown-attribute", ["reconstruct", "{pub}", "--attributes", "agee"], ("'agee'",)),
    ("reconstruct-plot-needs-original", ["reconstruct", "{pub}", "--attributes", "age", "--plot",
                                         "p.png"], ("--plot needs --original",)),
    ("reconstruct-max-iter-negative", ["reconstruct", "{pub}", "--attributes", "age",
                                       "--max-iter", "-1"], ("--max-iter",)),
    ("reconstruct-output-is-input", ["reconstruct", "{pub}", "--attributes", "age", "-o", "{pub}"],
     ("is an input file",)),
    ("reconstruct-original-mismatch", ["reconstruct", "{pub}", "--attributes", "job",
                                       "--original", "{adult}"], ("'job'",)),
    ("keygen-exists", ["keygen", "{in}"], ("exists", "never overwritten")),
    ("keygen-no-directory", ["keygen", "no-such-dir/k.key"],
     ("'no-such-dir/k.key': cannot be written (No such file or directory); expected a new file",)),
    ("config-with-seed", ["anonymize", "{in}", "-o", "o.csv", "--config", "{cfg}"],
     ("'seed'", "key file")),
    ("config-unknown-key", ["anonymize", "{in}", "-o", "o.csv", "--config", "{cfg2}"],
     ("unknown key 'idenifiers'",)),
    # an unknown flag is named by the subcommand it was given to (it said
    # "anonset: error: ... (see anonset --help)"), with the flag meant
    ("lgb-unknown-flag", ["lgb", "{in}", "-o", "o.csv", "--qids", "age", "--k", "2"],
     ("unrecognized arguments: --qids age (--qids: did you mean --qi?)",
      "(see anonset lgb --help)")),
    ("anonymize-misspelt-flag", ["anonymize", "{in}", "-o", "o.csv", "--sensitve", "job",
                                 "--l", "2"],
     ("did you mean --sensitive?",)),
    ("anonymize-stray-word", ["anonymize", "{in}", "-o", "o.csv", "--l", "2", "extra"],
     ("unrecognized arguments: extra (see anonset anonymize --help)",)),
]


@pytest.mark.parametrize("cid, argv, needles", SUBCOMMAND_CASES, ids=[c[0] for c in SUBCOMMAND_CASES])
def test_subcommand_case(cid, argv, needles, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    frame().to_csv("in.csv", index=False)
    anonset.publish(frame(), D2, **ROLES_API).to_parquet("pub.parquet")
    Path("cfg.json").write_text(json.dumps({"l": 2, "seed": 7}))
    Path("cfg2.json").write_text(json.dumps({"l": 2, "idenifiers": ["id"]}))
    Path("bad_h.csv").write_text("a;x;*\nb;x;*\nc;*\nd;y;*\ne;y;*\nf;y;*\n")
    Path("asym.csv").write_text("0,1,2\n1,0,1\n5,1,0\n")
    Path("sym3.csv").write_text("0,1,2\n1,0,1\n2,1,0\n")
    names = {"in": "in.csv", "pub": "pub.parquet", "cfg": "cfg.json", "cfg2": "cfg2.json",
             "bad_h": "bad_h.csv", "asym": "asym.csv", "sym3": "sym3.csv"}
    if any("{adult}" in a for a in argv):
        names["adult"] = _adult_small(tmp_path).name
    argv = [a.format(**names) for a in argv]
    before = snapshot(tmp_path)
    capsys.readouterr()
    rc = cli.main(argv)
    err = one_line(capsys.readouterr().err, f"anonset {argv[0]}: error: ")
    assert rc == 2
    for needle in needles:
        assert needle in err, (needle, err)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("argv", [
    ["anonymize", "in.csv", "-o", "o.parquet", "--sensitive", "job", "--l", "2"],
    ["semantic-anonymize", "in.csv", "-o", "o.parquet", "--sensitive", "job", "--l", "2",
     "--d", "1"],
    ["lgb", "in.csv", "-o", "o.csv", "--qi", "age", "--k", "2"],
    ["msa-anonymize", "in.csv", "-o", "o.csv", "--qi", "age", "--sa", "job", "--k", "2",
     "--t", "0.5"],
], ids=lambda a: a[0])
def test_a_missing_role_suggests_only_flags_the_command_has(argv, tmp_path, capsys,
                                                            monkeypatch):
    # semantic-anonymize suggested --other, which it does not have
    import re
    monkeypatch.chdir(tmp_path)
    frame().to_csv("in.csv", index=False)
    assert cli.main(argv) == 2
    err = one_line(capsys.readouterr().err, f"anonset {argv[0]}: error: ")
    assert "have no role" in err
    # every command names the file whose columns lack a role (lgb,
    # msa-anonymize and semantic-anonymize named only the columns)
    assert f"anonset {argv[0]}: error: 'in.csv': " in err, err
    flags = re.findall(r"--[a-z][a-z-]*", err.split("; expected ", 1)[1])
    assert len(flags) >= 3, err
    assert cli.main([argv[0], "--help"]) == 0
    usage = capsys.readouterr().out
    for f in flags:
        assert re.search(re.escape(f) + r"\b", usage), (f, err)


@pytest.mark.parametrize("argv", [
    ["anonymize", "in.csv", "-o", "o.parquet", "--sensitive", "job", "--l", "2"],
    ["semantic-anonymize", "in.csv", "-o", "o.parquet", "--sensitive", "job", "--l", "2",
     "--d", "1", "--domain", "a,b,c,d,e,f"],
    ["lgb", "in.csv", "-o", "o.csv", "--qi", "age", "--sensitive", "job", "--k", "2",
     "--l", "2"],
    ["msa-anonymize", "in.csv", "-o", "o.csv", "--qi", "age", "--sa", "job", "--k", "2",
     "--t", "0.5"],
], ids=lambda a: a[0])
def test_a_missing_cell_is_named_with_its_row_and_a_remedy_the_command_has(argv, tmp_path,
                                                                          capsys, monkeypatch):
    # semantic-anonymize suggested --missing category, which it does not have;
    # lgb and msa-anonymize did not say where the missing cell was, nor (with
    # semantic-anonymize) in which file
    import re
    monkeypatch.chdir(tmp_path)
    df = frame()[["id", "age", "job"]]
    df["job"] = df["job"].astype(object)
    df.loc[[41, 77], "job"] = None
    df.to_csv("in.csv", index=False)
    assert cli.main([*argv, "--identifier", "id"] + (
        ["--drop", "age"] if argv[0] in ("anonymize", "semantic-anonymize") else [])) == 2
    err = one_line(capsys.readouterr().err, f"anonset {argv[0]}: error: ")
    assert "'in.csv': column 'job': has 2 missing value(s) (first at row 42)" in err, err
    flags = re.findall(r"--[a-z][a-z-]*", err.split("; expected ", 1)[1])
    assert cli.main([argv[0], "--help"]) == 0
    usage = capsys.readouterr().out
    for f in flags:
        assert re.search(re.escape(f) + r"\b", usage), (f, err)
    assert not Path("o.csv").exists() and not Path("o.parquet").exists()


def test_the_matrix_holds_over_a_hundred_cases():
    n = len(TABLE_CASES) + len(MODEL_CASES) + len(FILE_CASES) + len(PUBLISHED_CASES) \
        + len(SUBCOMMAND_CASES)
    assert n >= 100, n


# ============================================== interrupts and temporaries
def test_stale_temporaries_of_a_killed_run_are_removed(tmp_path, capsys):
    src = tmp_path / "in.csv"
    frame().to_csv(src, index=False)
    out = tmp_path / "out.parquet"
    # a run that was SIGKILLed left its temporaries (its pid is gone)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = [tmp_path / f".out.parquet.anonset-{dead}-abc123.tmp",
             tmp_path / f".out.parquet.anonset-{dead}-def456.d"]
    stale[0].write_bytes(b"partial")
    stale[1].mkdir()
    mine = tmp_path / f".other.csv.anonset-{dead}-zzz999.tmp"      # another output's: kept
    mine.write_bytes(b"x")
    rc = cli.main(["anonymize", str(src), "-o", str(out), *ROLES_CLI, "--l", "2"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert not any(p.exists() for p in stale) and mine.exists()
    assert "left by an interrupted run" in cap.err


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_signals_leave_no_temporaries(tmp_path, sig):
    """SIGTERM, SIGHUP and SIGINT while a large file is written: exit 130 (or a
    complete output if the run finished first), never a temporary file."""
    src = tmp_path / "in.parquet"
    frame(400_000, seed=3).to_parquet(src, index=False)
    out = tmp_path / "out.csv"
    ready = tmp_path / "ready"
    script = textwrap.dedent(f"""
        import signal, sys
        # SIGINT as a terminal delivers it: a test run started in the
        # background by a shell without job control inherits SIGINT ignored
        # (POSIX), and Python then installs no KeyboardInterrupt handler
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import anonset.io.published as P
        real = P.CsvSink.write
        def slow(self, table):
            real(self, table)
            open({str(ready)!r}, "w").close()
            import time; time.sleep(8)    # the signal comes while a block is written
        P.CsvSink.write = slow
        from anonset.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", script, "anonymize", str(src), "-o", str(out),
                             *ROLES_CLI, "--l", "2", "--chunk-rows", "50000"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while not ready.exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() - t0 < 120
            time.sleep(0.05)
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert ("stopped by " + sig if sig != "SIGINT" else "interrupted") in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "ready"]


def test_an_alphabetical_order_refusal_shows_the_column_its_own_order():
    """The refusal of an order read off text shows the order the column would
    have got (the survey answers '0', '1-2', '10-19', ... put '10-19' before
    '3-5'), not a stock example."""
    from anonset.validate import alphabetical_order
    answers = ["0", "1-2", "3-5", "6-9", "10-19", "20-29", "30", "did not drive"]
    assert alphabetical_order(answers) == ("it would read '0' < '1-2' < '10-19' < '20-29' < "
                                           "'3-5' < '30' < ... (8 values)")
    assert alphabetical_order(["b", "a"]) == "it would read 'a' < 'b'"
    df = pd.DataFrame({"id": range(40), "city": ["x", "y"] * 20,
                       "texting": (answers * 5)})
    with pytest.raises(InputError, match=r"column 'texting'.*it would read '0' < '1-2' < "
                                         r"'10-19'"):
        anonset.publish(df, anonset.Diversity(2), identifiers=["id"], exact=["city"],
                        sensitive=["texting"], ordinal=["texting"])


def test_an_output_name_too_long_for_the_file_system_is_named(tmp_path, capsys, monkeypatch):
    """A name over the file system's limit (or one whose temporary name, or a
    file written beside it, would be) was refused by the OS as "File name
    too long", naming no option; lgb could write its main table and then
    fail on a bucket table's longer name.  Now one line names the output,
    the limit and the longest name that fits, before anything is written,
    in memory, streamed and on the command line."""
    import os
    import re
    monkeypatch.chdir(tmp_path)
    df = frame()
    df.to_csv("in.csv", index=False)
    long = "x" * 250 + ".parquet"
    before = snapshot(tmp_path)
    extra = 23 + len(str(os.getpid()))      # ".NAME.anonset-PID-XXXXXXXX.tmp"
    want = (f"output: has a name of 258 bytes, and the file system allows 255 (under a "
            f"temporary name first: {extra} bytes more); expected a name of at most "
            f"{255 - extra} bytes")
    pub = anonset.publish(df, anonset.Diversity(2), seed=SEED, **ROLES_API)
    with pytest.raises(InputError) as mem:
        pub.to_parquet(long)
    with pytest.raises(InputError) as streamed:
        publish_file("in.csv", long, anonset.Diversity(2), seed=SEED, **ROLES_API)
    for e in (mem.value, streamed.value):
        assert str(e) == f"{long!r}: {want}"
    assert cli.main(["anonymize", "in.csv", "-o", long, *ROLES_CLI, "--l", "2"]) == 2
    err = one_line(capsys.readouterr().err, "anonset anonymize: error: ")
    assert err == f"anonset anonymize: error: {long!r}: {want.replace('output:', '-o:')}"
    # lgb: a bucket table's name ('.occupation_group.idt.csv') is the longest;
    # the main table and its metadata file fit
    df.rename(columns={"job": "occupation_group"}).to_csv("in2.csv", index=False)
    before = snapshot(tmp_path)
    name = "y" * (234 - extra) + ".csv"                  # bucket table: 4 bytes too long
    assert len(name) + 13 + extra <= 255                  # the metadata file fits
    assert cli.main(["lgb", "in2.csv", "-o", name, "--qi", "age", "--sensitive",
                     "occupation_group", "--l", "2", "--k", "3", "--identifier", "id", "--drop",
                     "city,note"]) == 2
    err = one_line(capsys.readouterr().err, "anonset lgb: error: ")
    assert re.search(rf"-o: has a name of {len(name)} bytes, and the file system allows 255 "
                     rf"\(the files beside it, each under a temporary name first: "
                     rf"{extra + 21} bytes more\); expected a name of at most "
                     rf"{255 - extra - 21} bytes$", err), err
    assert snapshot(tmp_path) == before


def test_a_value_outside_its_hierarchy_is_named_at_its_row_by_lgb_and_msa(tmp_path, capsys):
    # LGB named a row of its shuffled frame ("at row 11" for the value in row
    # 3) and the value's numpy repr ("np.int64(13067)"); msa named neither
    # the row, the count nor the file.  Now both say it as anonymize does
    from anonset.cli import main
    from anonset.msa import anonymize_msa
    from anonset.partition.lgb import lgb
    rng = np.random.default_rng(0)
    zips = ["13053", "13068", "13067", "14850"]
    df = pd.DataFrame({"zip": rng.choice(zips[:2] + zips[3:], 60).astype(int),
                       "sex": rng.choice(["f", "m"], 60), "job": rng.choice(list("abcd"), 60)})
    df.loc[[7, 30], "zip"] = 13067
    hz = tmp_path / "zip.csv"
    hz.write_text("13053;1305*;*\n13068;1306*;*\n14850;1485*;*\n")
    want = ("column 'zip': has 2 value(s) that are not leaves of its hierarchy (first: '13067' "
            "at row 8); expected every value a leaf of the hierarchy")
    with pytest.raises(ValueError) as e:
        lgb(df, qi=["zip", "sex"], sensitive=["job"], k=3, l=2, hierarchies={"zip": str(hz)})
    assert str(e.value).startswith(want)
    with pytest.raises(ValueError) as e:
        anonymize_msa(df, ["zip", "sex"], ["job"], 3, 0.5, hierarchies={"zip": str(hz)})
    assert str(e.value).startswith(want)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    for argv in (["lgb", src, "-o", tmp_path / "o.csv", "--qi", "zip,sex", "--sensitive", "job",
                  "--k", "3", "--l", "2"],
                 ["msa-anonymize", src, "-o", tmp_path / "o.csv", "--qi", "zip,sex", "--sa",
                  "job", "--k", "3", "--t", "0.5"]):
        assert main([*map(str, argv), "--hierarchy", f"zip={hz}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"'{src}': {want}" in err, err
        assert not (tmp_path / "o.csv").exists()


def test_a_sensitive_column_of_a_million_values_is_refused_before_the_work(tmp_path, capsys,
                                                                            monkeypatch):
    # an id named as the sensitive column: semantic diversity built its
    # F x F distances (a MemoryError asking for 14.6 TiB) and msa its class
    # counts (2.9 TiB) before any refusal; anonymize and lgb already refused
    # or coped.  Now both refuse in one line before the work, naming why
    import os
    from anonset.cli import main
    from anonset.msa import anonymize_msa
    from anonset.randomized.semantic import semantic_publish
    n = 5000
    df = pd.DataFrame({"rid": np.arange(n), "q": np.resize(["a", "b"], n)})
    with pytest.raises(ValueError, match=r"^column 'rid': has 5,000 distinct values; expected "
                                         r"at most 1,024 \(semantic publishing"):
        semantic_publish(df, "rid", 3, 1, qids=["q"])
    # the class table is checked against this machine's memory: made small here
    real = os.sysconf
    monkeypatch.setattr(os, "sysconf", lambda name: 1 if name == "SC_PHYS_PAGES"
                        else real(name))
    with pytest.raises(ValueError, match=r"^sensitive: its classes' value counts would take "
                                         r"0\.1 GiB \(1,000 classes of k = 5 by 5,000 sensitive "
                                         r"values; 'rid' has 5,000\), more than this machine"):
        anonymize_msa(df, ["q"], ["rid"], 5, 0.5)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    for argv, words in ((["semantic-anonymize", src, "-o", tmp_path / "o.parquet", "--sensitive",
                          "rid", "--qids", "q", "--l", "3", "--d", "1"],
                         "column 'rid': has 5,000 distinct values"),
                        (["msa-anonymize", src, "-o", tmp_path / "o.parquet", "--sa", "rid",
                          "--qi", "q", "--k", "5", "--t", "0.5"],
                         "--sa: its classes' value counts would take")):
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
        assert not (tmp_path / "o.parquet").exists()


def test_a_ragged_row_is_named_by_its_row_and_never_by_its_cells(tmp_path, capsys):
    """The CSV parser quotes the bad row's text (a person's id and values)
    and names no row: the refusal names the row (found past the parser's
    first 4 MiB block) and the field counts, and none of the row's cells."""
    from anonset import cli
    n = 120_000                                     # ~5 MB: the row is in a later block
    lines = [f"{100000 + i},{20 + i % 50},job{i % 7},city{i % 3}" for i in range(n)]
    lines[100_000] = "987654321,47,Secretjob"       # a short row, ids and values
    (tmp_path / "in.csv").write_text("id,age,job,city\n" + "\n".join(lines) + "\n")
    rc = cli.main(["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"),
                   "--identifier", "id", "--sensitive", "age,job", "--exact", "city",
                   "--l", "2", "--allow-rare", "age,job", "-q"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err, err
    assert "has a row with the wrong number of fields: row 100,001 has 3; expected 4 fields " \
           "on every row" in err, err
    assert "987654321" not in err and "Secretjob" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_a_risk_is_named_with_true_not_with_any_truthy_value():
    """lgb(suppress='no') suppressed 37 cells, and research_seed='no' with
    seed 7 recorded a research seed on lgb, msa and semantic: a named risk
    took any truthy value.  Every publisher's switches now take True or
    False only (NumPy bools too)."""
    from anonset.msa import anonymize_msa
    from anonset.partition.baselines import rating
    from anonset.partition.lgb import lgb
    from anonset.randomized.semantic import semantic_publish
    df = pd.DataFrame({"a": [1, 2] * 10, "s": list("abcd") * 5})
    calls = {
        "lgb": lambda **kw: lgb(df, qi=["a"], sensitive=["s"], k=2, l=2, **kw),
        "msa": lambda **kw: anonymize_msa(df, ["a"], ["s"], 2, 0.5, **kw),
        "semantic": lambda **kw: semantic_publish(df, "s", 2, 1, qids=["a"],
                                                  domain=list("abcd"), **kw),
        "rating": lambda **kw: rating(df, attributes=["a", "s"], l=2, **kw),
        "publish": lambda **kw: anonset.publish(df, anonset.Diversity(2), sensitive=["s"],
                                                exact=["a"], **kw),
    }
    cases = [(name, "research_seed", {"seed": 7}) for name in calls] + \
        [("lgb", "suppress", {}), ("lgb", "balance", {"method": "ncp"}),
         ("rating", "clip_l", {}), ("rating", "clip_eligible", {}), ("publish", "clip_l", {})]
    for name, flag, extra in cases:
        for bad in ("no", "false", 1, None):
            with pytest.raises(InputError, match=f"^{flag}: got {bad!r}; expected True or False"):
                calls[name](**{flag: bad}, **extra)
    lgb(df, qi=["a"], sensitive=["s"], k=2, l=2, research_seed=np.True_, seed=7)


def test_partition_publishers_refuse_infinite_numbers_and_mixed_kinds_alike(tmp_path, capsys):
    """msa published an age of inf as [-inf-21] with an information loss of
    NaN, lgb likewise; semantic diversity said the values were not
    consecutive integers.  A column of 3, 'old' and 2.5 was generalized to
    '*' by msa, a TypeError in semantic diversity and a plain ValueError in
    lgb.  Each publisher that orders, generalizes or measures values now
    refuses both with one InputError naming the column and the row, in
    Python and on the command line (exit 2, nothing written)."""
    from anonset.cli import main
    from anonset.msa import anonymize_msa
    from anonset.partition.baselines import mondrian
    from anonset.partition.lgb import lgb
    from anonset.randomized.semantic import semantic_publish
    rng = np.random.default_rng(0)
    n = 60
    base = pd.DataFrame({"age": rng.integers(20, 60, n).astype(float),
                         "job": rng.choice(list("abcdef"), n)})
    inf = base.assign(age=base["age"].where(np.arange(n) != 4, -np.inf))
    mixed = base.assign(age=base["age"].astype(object))
    mixed.loc[7, "age"] = "old"
    calls = {
        "msa": lambda d: anonymize_msa(d, ["age"], ["job"], 3, 0.5),
        "lgb": lambda d: lgb(d, qi=["age"], sensitive=["job"], k=3, l=2),
        "semantic": lambda d: semantic_publish(d, "age", 2, 1, qids=["job"]),
        "mondrian": lambda d: mondrian(d, qids=["age"], sensitive="job", l=2),
    }
    for name, call in calls.items():
        with pytest.raises(InputError) as e:
            call(inf)
        assert str(e.value).startswith("column 'age': holds an infinite number at row 5; "
                                       "expected finite numbers"), (name, str(e.value))
        with pytest.raises(InputError) as e:
            call(mixed)
        assert str(e.value).startswith("column 'age': holds numbers and text mixed (a number "
                                       "at row 1, text at row 8)"), (name, str(e.value))
    inf.to_csv(tmp_path / "inf.csv", index=False)
    for argv in (["msa-anonymize", "--qi", "age", "--sensitive", "job", "--k", "3", "--t", "0.5"],
                 ["lgb", "--qi", "age", "--sensitive", "job", "--k", "3", "--l", "2"]):
        out = tmp_path / "o.csv"
        capsys.readouterr()
        assert main([argv[0], str(tmp_path / "inf.csv"), "-o", str(out), *argv[1:]]) == 2
        err = capsys.readouterr().err.strip()
        assert "column 'age': holds an infinite number at row 5" in err and "\n" not in err, err
        assert not out.exists()


@pytest.mark.parametrize("kind", ["object", "string", "category"])
def test_an_empty_label_is_refused_by_every_partition_publisher(kind, tmp_path, capsys):
    """'' is a missing cell once a CSV release is read back and no label a
    generalization can name: lgb and msa failed on it with a plain
    ValueError about a 'hierarchy' the user never gave (H90)."""
    from anonset.cli import main
    from anonset.msa import anonymize_msa
    from anonset.partition.baselines import mondrian
    from anonset.partition.lgb import lgb
    from anonset.randomized.semantic import semantic_publish
    rng = np.random.default_rng(3)
    n = 60
    zips = rng.choice(["a", "b", "c"], n).astype(object)
    zips[[2, 9]] = ""
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "zip": pd.Series(zips).astype(kind),
                       "job": rng.choice(list("abcdef"), n)})
    calls = {
        "msa": lambda d: anonymize_msa(d, ["age", "zip"], ["job"], 3, 0.5),
        "lgb": lambda d: lgb(d, qi=["age", "zip"], sensitive=["job"], k=3, l=2),
        "semantic": lambda d: semantic_publish(d, "zip", 2, 1, qids=["job", "age"]),
        "mondrian": lambda d: mondrian(d, qids=["age", "zip"], sensitive="job", l=2),
    }
    for name, call in calls.items():
        with pytest.raises(InputError) as e:
            call(df)
        assert str(e.value).startswith("column 'zip': holds an empty text value ('') in 2 "
                                       "row(s), first at row 3; expected a non-empty label"), \
            (name, str(e.value))
    df.to_parquet(tmp_path / "e.parquet")
    out = tmp_path / "o.csv"
    for argv in (["msa-anonymize", "--qi", "age,zip", "--sa", "job", "--k", "3", "--t", "0.5"],
                 ["lgb", "--qi", "age,zip", "--sensitive", "job", "--k", "3", "--l", "2"]):
        capsys.readouterr()
        assert main([argv[0], str(tmp_path / "e.parquet"), "-o", str(out), *argv[1:]]) == 2
        err = capsys.readouterr().err.strip()
        assert "e.parquet': column 'zip': holds an empty text value" in err and "\n" not in err
        assert not out.exists()


def test_a_mixed_column_on_dask_is_refused_when_dask_keeps_its_types():
    """Dask's default string conversion turns an object column of 17 and
    'a' into texts when the frame is made, before anonset sees it (H19): a
    frame made without it is refused as in memory (docs/scaling.md)."""
    import dask
    import dask.dataframe as dd
    from anonset import dask as adask
    df = _mixed()
    with pytest.raises(InputError) as mem:
        anonset.publish(df, **STD)
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(df, npartitions=3)
    with pytest.raises(InputError) as on_dask:
        adask.publish(ddf, scheduler="sync", **STD)
    assert str(on_dask.value) == str(mem.value)
    assert "column 'job': mixes value types" in str(mem.value)


def test_a_parameter_refusal_names_the_file_it_read(tmp_path):
    """The parameters' own checks (l above a column's domain, a column of
    one value) were refused without the file on the streamed path, where
    every other refusal names it (H19)."""
    from anonset.stream import publish_file
    src = tmp_path / "in.csv"
    pd.DataFrame({"job": list("abc") * 40, "one": ["x"] * 120}).to_csv(src, index=False)
    for model, kw in ((anonset.Diversity(5), dict(sensitive=["job"], drop=["one"])),
                      (anonset.Diversity(2), dict(sensitive=["job", "one"]))):
        with pytest.raises(InputError) as e:
            publish_file(src, tmp_path / "o.parquet", model, **kw)
        assert str(e.value).startswith(f"{str(src)!r}: l: l = "), str(e.value)
        with pytest.raises(InputError) as mem:                  # in memory: no file
            anonset.publish(pd.read_csv(src), model, **kw)
        assert str(e.value) == f"{str(src)!r}: {mem.value}"
    assert not (tmp_path / "o.parquet").exists()


def test_a_nan_spelled_in_text_is_refused_as_a_missing_cell(tmp_path):
    """A CSV cell 'NAN' (which float() reads, NA_MARKERS does not list)
    crashed the streamed path with a bare KeyError once the digest keyed a
    domain read off the data by where its values sit (H27); it is refused
    as a missing cell, as before."""
    from anonset.stream import publish_file
    src = tmp_path / "in.csv"
    src.write_text("s\n" + "1.5\n2.5\n3.5\n4.5\nNAN\n" * 40)
    for missing in ("error", "category"):
        with pytest.raises(InputError, match=r"column 's': has 40 missing value\(s\)"):
            publish_file(src, tmp_path / "o.parquet", anonset.Diversity(3), sensitive=["s"],
                         missing=missing)
    assert not (tmp_path / "o.parquet").exists()


def test_the_error_line_keeps_the_blanks_of_a_column_name(tmp_path, capsys):
    """H66: the one error line was made by collapsing every run of blanks,
    so a column named '  pad  ' was listed as ' pad ', a name no column has.
    Only line breaks (and the blanks around them) become one space now."""
    from anonset.cli import main
    from anonset.cli.args import error_line
    from anonset.validate import InputError
    assert error_line(InputError("has  two\n   lines\r\nand\x85more", column="  pad  ")) == \
        "column '  pad  ': has  two lines and more"
    pd.DataFrame({"id": range(20), "  pad  ": ["a", "b"] * 10, "b": ["x", "y"] * 10}) \
        .to_parquet(tmp_path / "t.parquet")
    assert main(["anonymize", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "o.parquet"),
                 "--identifier", "id", "--sensitive", "nope", "--l", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "['id', '  pad  ', 'b']" in err, err


# ---------------------------------------------------------------- API arguments (H78)
def _api_argument_cases(tmp_path):
    import secrets
    import anonset.lgb as L
    import anonset.msa as M
    import anonset.semantic as S
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"a": rng.choice(list("pqrstu"), n), "b": rng.choice(list("xyzw"), n),
                       "zip": rng.integers(0, 50, n), "age": rng.integers(18, 80, n)})
    dom = {"a": list("pqrstu"), "b": list("xyzw")}
    key = secrets.token_hex(16)
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"], drop=["zip", "age"],
                          domains=dom, seed=key)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    kw = dict(sensitive=["a", "b"], drop=["zip", "age"], domains=dom, seed=key)
    return [
        ("closeness: got 0.3; expected a mapping",
         lambda: L.lgb(df, qi=["zip"], sensitive=["a"], drop=["b", "age"], k=3, closeness=0.3,
                       seed=key)),
        ("fcm_options: got {'bogus': 1}; expected a mapping with keys among",
         lambda: M.anonymize_msa(df, ["zip", "age"], ["a"], 3, .3, algorithm="cluster",
                                 drop=["b"], fcm_options={"bogus": 1}, seed=key)),
        ("options: got 'bogus'; expected keyword arguments of anonset.publish",
         lambda: publish_file(src, tmp_path / "o1.parquet", anonset.Diversity(2), bogus=1, **kw)),
        ("options: got 'bogus'; expected keyword arguments of anonset.publish",
         lambda: anonset.dask.publish(__import__("dask.dataframe").dataframe.from_pandas(
             df, npartitions=2), anonset.Diversity(2), bogus=1, **kw)),
        ("progress: got 5; expected a callable",
         lambda: publish_file(src, tmp_path / "o2.parquet", anonset.Diversity(2), progress=5,
                              **kw)),
        ("schema: got int; expected an anonset.Schema",
         lambda: anonset.audit(pub, df, schema=5)),
        ("aligned: got 'no'; expected True or False",
         lambda: anonset.audit(pub, df, aligned="no")),
        ("published: got a DataFrame; expected a release",
         lambda: anonset.report(df)),
        ("distance: got a ndarray; expected a SemanticDistance",
         lambda: S.semantic_publish(df, "a", 2, 1, drop=["b", "zip", "age"], domain=dom["a"],
                                    distance=np.zeros((6, 6)), seed=key)),
        ("l: got 0; expected an integer >= 1",
         lambda: S.estimate_existing(np.array([10., 10, 10]), 0)),
        ("N: got -1; expected an integer >= 0",
         lambda: S.database_violation_bound(8, 2, 2, -1)),
        ("draws: got 0; expected an integer >= 1",
         lambda: S.selection_matrix(S.SemanticDistance.ordered(5), 2, 1, method="montecarlo",
                                    draws=0)),
    ]


def test_api_arguments_of_the_wrong_kind_are_named(tmp_path):
    """Each of these ended in a TypeError, AttributeError or reshape error
    deep in the code, or was taken silently (a bogus keyword of a file
    publication, a string for aligned), where every refusal is an
    InputError naming the argument (H78).  Nothing is written."""
    pytest.importorskip("dask.dataframe")
    for words, call in _api_argument_cases(tmp_path):
        with pytest.raises(InputError) as e:
            call()
        assert words in str(e.value) and "\n" not in str(e.value), (words, str(e.value))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.mark.parametrize("damage", ["plain", "corrupt"])
@pytest.mark.parametrize("argv", [
    ["msa-anonymize", "--qi", "age", "--sa", "job", "--identifier", "id", "--drop", "city,note",
     "--k", "2", "--t", "0.5"],
    ["lgb", "--qi", "age", "--sensitive", "job", "--identifier", "id", "--drop", "city,note",
     "--k", "2"],
    ["semantic-anonymize", "--sensitive", "job", "--identifier", "id", "--drop", "age,city,note",
     "--l", "2", "--d", "1", "--domain", "a,b"],
], ids=lambda a: a[0] if isinstance(a, list) else a)
def test_a_bad_xz_file_is_refused_in_one_line_by_every_command(argv, damage, tmp_path, capsys,
                                                               monkeypatch):
    """An .xz name on plain text or on a damaged xz stream raised lzma's
    LZMAError (no OSError) out of every reader: a traceback (H138)."""
    monkeypatch.chdir(tmp_path)
    Path("in.csv.xz").write_bytes(_damaged("xz") if damage == "corrupt" else
                                  (HEAD + FOUR_AGES).encode())
    before = snapshot(tmp_path)
    rc = cli.main([argv[0], "in.csv.xz", "-o", "o.csv", *argv[1:]])
    err = one_line(capsys.readouterr().err, f"anonset {argv[0]}: error: ")
    assert rc == 2
    assert ("is not a readable CSV file" if damage == "corrupt" else
            "is not xz-compressed") in err and "'in.csv.xz'" in err and "expected" in err, err
    assert snapshot(tmp_path) == before
