"""Publish a small table under (3,...,3)-diversity, reconstruct a
cross-tabulation from what was published, and audit the release.

Run from the repository root:  python examples/publish_and_reconstruct.py
"""
from pathlib import Path

import pandas as pd

import anonset

here = Path(__file__).resolve().parent
people = pd.read_csv(here / "people.csv", dtype={"zip": str})

# every column needs a role: identifiers and zip are not published, sex is an
# exact (non-sensitive) QID, age/job/disease become sets of 3 values each
pub = anonset.publish(people, anonset.Diversity(3),
                      identifiers=["name", "ssn"], drop=["zip"], exact=["sex"],
                      sensitive=["age", "job", "disease"],
                      bins={"age": [0, 30, 45, 60, 120]},
                      domains={"job": (here / "jobs.txt").read_text().split()})
print(pub)
print(pub.to_pandas().head())
pub.to_parquet("people-l3.parquet")            # sets as lists, parameters in the metadata

ct = anonset.reconstruct(anonset.read_parquet("people-l3.parquet"), ["job", "disease"])
truth = anonset.true_crosstab(people, pub.schema, ["job", "disease"])
print(anonset.metrics.compare(truth, ct))

report = anonset.audit(pub, people)
print(report.verdict)
