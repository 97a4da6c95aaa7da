"""Partition publishing (papers 002, 003): records are grouped into
equivalence classes or buckets, values are generalized or bucketized, and
each class is checked against the model.

Modules: :mod:`.lgb` (paper 002, local generalization and bucketization),
:mod:`.msa` (paper 003, t-closeness for several sensitive attributes),
:mod:`.checks` (k-anonymity, l-diversity and t-closeness of a partition).
"""
