"""The baselines the papers compare against, with the input and output
conventions of anonset's own publishers (every column has a role, keyed
output order, ``seed`` is key material) and their guarantees checkable:

* :func:`anatomy` -- Xiao & Tao 2006, bucketization (QIT + ST); with
  ``classes`` the (l, e)-diversity of paper 001's LE baseline;
* :func:`mondrian` -- LeFevre et al. 2006, l-diverse strict
  multidimensional partitioning;
* :func:`tp` -- Xiao, Yi & Tao 2010 (paper 004's TP), exact groups +
  suppressed groups;
* :func:`rating` -- Liu, Luo & Huang 2011 (paper 000's Rating), per-attribute
  buckets published as sets;
* :mod:`.queries` -- paper 004's count queries of selectivity s and their
  MSE (eq. 11-12); :mod:`.cells` answers a whole workload of them from
  per-QID-point tables.

The partition methods return a :class:`PartitionRelease`; ``check()``
recomputes the guarantee from what is published.  The compiled kernels are in
csrc/partition/baselines.c.
"""
from ._common import PartitionRelease, eligible_l
from .anatomy import anatomy
from .mondrian import mondrian
from .rating import RatingRelease, rating
from .tp import tp
from . import queries
from .checks import check_release

__all__ = ["anatomy", "mondrian", "tp", "rating", "PartitionRelease", "RatingRelease",
           "queries", "check_release", "eligible_l"]
