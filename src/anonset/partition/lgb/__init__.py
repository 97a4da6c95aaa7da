"""Local generalization and bucketization (LGB) for personalized privacy
(paper 002: Li, He & Sun).

Every cell of a *semi-sensitive* attribute carries a flag: flagged cells hold
sensitive values, the others quasi-identifier (QI) values.  QI attributes hold
only QI values, sensitive attributes only sensitive ones.  LGB (Alg. 1)

1. bucketizes the sensitive values of each semi-sensitive and sensitive
   attribute independently (Alg. 2, :func:`local_bucketization`): a recursive
   median split while both halves stay l-eligible, then the Anatomy /
   m-invariance assignment into local buckets in which every value appears at
   most once and which hold at least ``l`` values (Corollary 2); an attribute
   may instead follow t-closeness (the paper uses it for sex);
2. splits the table by *QI partition* (rows with QI values on the same
   attributes, Def. 7) and generalizes each subset into local equivalence
   groups of at least ``k`` rows (Corollary 1), either Mondrian-style
   (Alg. 3, ``method='mdp'``) or top-down minimizing NCP (Alg. 4,
   ``method='ncp'``, Xu et al. 2006).

The published table has the shape of the paper's Fig. 2: ``ID``, ``GID``, and
per attribute its generalized value (a range ``[lo-hi]`` or a hierarchy node)
for a QI cell, or a value plus its bucket id ``<attr>_bid`` for a sensitive
cell.  Within a bucket the values are shown in a uniformly random order (Fig.
2 permutes them), so only the bucket, never the row, carries the value; the
bucket tables IDT(ID, BID) and SAT(value, BID) (Def. 9) say the same.  The
rows are published in a random order with random IDs, both drawn from the
release's key (``keep_order=True`` keeps the input order, and says so in the
metadata).

Modules: :mod:`.domain` (attribute domains), :mod:`.flags` (sensitivity
flags and their promotion), :mod:`.bucketize` (Alg. 2, t-closeness buckets),
:mod:`.generalize` (Alg. 3-4), :mod:`.core` (Alg. 1, :func:`lgb`, the
published tables), :mod:`.verify` (Corollary 3, the adversary),
:mod:`.metrics` (C_DM, NCP, query error).

Examples
--------
>>> import pandas as pd, numpy as np
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"age": rng.integers(20, 60, 60),
...                    "zip": rng.integers(100, 110, 60),
...                    "disease": rng.integers(0, 12, 60)})
>>> flags = pd.DataFrame({"age": rng.random(60) < 0.3})
>>> res = lgb(df, qi=["zip"], semi_sensitive=["age"], sensitive=["disease"],
...           flags=flags, k=4, l=3)
>>> verify(res)["ok"]
True
>>> list(res.table.columns)
['ID', 'GID', 'age', 'age_bid', 'zip', 'disease', 'disease_bid']
>>> res.summary()["row_order"], res.summary()["key"]
('random', 'os')
"""
from __future__ import annotations

from .bucketize import local_bucketization
from .core import LGBResult, lgb
from .flags import draw_flags
from .generalize import METHODS, local_generalization
from .metrics import c_dm, ncp, query_error
from .verify import attack, order_attack, verify

__all__ = ["lgb", "LGBResult", "draw_flags", "local_bucketization", "local_generalization",
           "verify", "attack", "order_attack", "c_dm", "ncp", "query_error", "METHODS"]
