"""Partition publishing (papers 002, 003): records are grouped into
equivalence classes or buckets, values are generalized or bucketized, and
each class is checked against the model.

Subpackages and modules: :mod:`.lgb` (paper 002, local generalization and
bucketization: domain, flags, bucketize, generalize, core, verify, metrics),
:mod:`.msa` (paper 003, t-closeness for several sensitive attributes:
encoding, clustering, problem, result), :mod:`.checks` (k-anonymity,
l-diversity and t-closeness of a partition).
"""
