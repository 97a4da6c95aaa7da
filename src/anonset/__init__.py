"""anonset: publish tables under l-diversity and t-closeness when attributes
are both quasi-identifiers and sensitive, and reconstruct statistics from what
was published.

The public API, re-exported here:

* schema:   :class:`Attribute`, :class:`Schema`, :class:`Hierarchy`,
            :class:`InferredDomainWarning`, :class:`SharedIdWarning`,
            :class:`SuppressionWarning`, :class:`PassThroughWarning`,
            :class:`RepeatedReleaseWarning`
* models:   :class:`Diversity`, :func:`EntropyDiversity`, :class:`Anonymity`,
            :class:`Closeness`, :class:`DiversityCloseness`
* publish:  :func:`publish` -> :class:`SetTable`; :func:`read_parquet`, :func:`read_csv`
* analyse:  :func:`reconstruct` -> :class:`CrossTab`; :func:`true_crosstab`;
            :mod:`anonset.metrics`; :class:`ConvergenceWarning`
* audit:    :func:`audit`, :func:`audit_file` -> :class:`AuditReport`; :func:`check_diversity`,
            :func:`check_anonymity`, :func:`check_closeness`; :func:`report` (one
            HTML page to sign off a release)
* EMD:      :func:`emd`, :func:`emd_batch`, :class:`Ground`
* papers 001-003: the modules :mod:`anonset.semantic` ((l,d)-semantic
            diversity), :mod:`anonset.lgb` (local generalization and
            bucketization), :mod:`anonset.msa` (t-closeness for several
            sensitive attributes); partition checkers in :mod:`anonset.checks`
* scale:    :mod:`anonset.stream` (files larger than memory), :mod:`anonset.dask`
* data:     :mod:`anonset.datasets` (Adult), :mod:`anonset.synthetic`
* facts:    :func:`show_versions`
* errors:   :class:`InputError` (a ``ValueError`` naming the parameter, column
            and file of bad input; every refusal is one)

The package is laid out by architecture (docs/architecture.md): the
foundation at the top level, one subpackage per family of papers
(:mod:`anonset.randomized`, :mod:`anonset.partition`), and :mod:`anonset.io`,
:mod:`anonset.audit`, :mod:`anonset.cli`, :mod:`anonset.datasets`.  The short
module names above (``anonset.lgb``, ``anonset.stream``, ...) are the public
import paths; they name modules of those subpackages.
"""
import sys as _sys

from ._version import __version__
from .hierarchy import Hierarchy
from .passthrough import PassThroughWarning
from .validate import InputError
from .schema import (Attribute, InferredDomainWarning, RepeatedReleaseWarning, Schema,
                     SharedIdWarning, SuppressionWarning)
from .models import Anonymity, Closeness, Diversity, DiversityCloseness, EntropyDiversity
from .emd import Ground, emd, emd_batch
from . import metrics
from .randomized.crosstab import ConvergenceWarning, CrossTab, true_crosstab
from .randomized.params import AttributeParams, optimize
from .randomized.publish import publish
from .randomized.reconstruct import count_w, reconstruct
from .randomized.settable import SetTable, read_csv, read_parquet
from .randomized import closeness_search, semantic
from .partition import checks, lgb, msa
from .io import dask, stream
from . import datasets
from .datasets import synthetic
from ._info import show_versions
from .audit import (AuditReport, audit, audit_file, check_anonymity, check_closeness,
                    check_diversity)
from .audit.html import report

# The public short names are import paths too (``from anonset.lgb import verify``).
for _name, _module in {"closeness_search": closeness_search, "semantic": semantic,
                       "checks": checks, "lgb": lgb, "msa": msa, "stream": stream,
                       "dask": dask, "synthetic": synthetic}.items():
    _sys.modules.setdefault(f"{__name__}.{_name}", _module)
del _name, _module

__all__ = [
    "__version__", "Attribute", "Schema", "Hierarchy", "InferredDomainWarning",
    "SharedIdWarning",
    "SuppressionWarning", "RepeatedReleaseWarning",
    "PassThroughWarning", "InputError",
    "Diversity", "EntropyDiversity", "Anonymity", "Closeness", "DiversityCloseness",
    "AttributeParams", "optimize", "publish", "SetTable", "read_parquet", "read_csv",
    "reconstruct", "count_w", "CrossTab", "true_crosstab", "ConvergenceWarning", "metrics",
    "datasets",
    "checks", "closeness_search", "lgb", "msa", "semantic", "synthetic", "stream", "dask",
    "Ground", "emd", "emd_batch", "show_versions",
    "audit", "audit_file", "AuditReport", "check_diversity", "check_anonymity",
    "check_closeness", "report",
]
