"""anonset: publish tables under l-diversity and t-closeness when attributes
are both quasi-identifiers and sensitive, and reconstruct statistics from what
was published.

The public API, re-exported here:

* schema:   :class:`Attribute`, :class:`Schema`, :class:`Hierarchy`
* models:   :class:`Diversity`, :func:`EntropyDiversity`, :class:`Anonymity`,
            :class:`Closeness`, :class:`DiversityCloseness`
* publish:  :func:`publish` -> :class:`SetTable`; :func:`read_parquet`, :func:`read_csv`
* analyse:  :func:`reconstruct` -> :class:`CrossTab`; :func:`true_crosstab`;
            :mod:`anonset.metrics`
* audit:    :func:`audit` -> :class:`AuditReport`; :func:`check_diversity`,
            :func:`check_anonymity`, :func:`check_closeness`
* EMD:      :func:`emd`, :func:`emd_batch`, :class:`Ground`
* papers 001-003: the modules :mod:`anonset.semantic` ((l,d)-semantic
            diversity), :mod:`anonset.lgb` (local generalization and
            bucketization), :mod:`anonset.msa` (t-closeness for several
            sensitive attributes); partition checkers in :mod:`anonset.checks`
* data:     :mod:`anonset.datasets` (Adult), :mod:`anonset.synthetic`
* facts:    :func:`show_versions`
"""
from ._version import __version__
from .crosstab import CrossTab, true_crosstab
from .emd import Ground, emd, emd_batch
from .hierarchy import Hierarchy
from .models import Anonymity, Closeness, Diversity, DiversityCloseness, EntropyDiversity
from .params import AttributeParams, optimize
from .randomize import publish
from .reconstruct import count_w, reconstruct
from .schema import Attribute, Schema
from .settable import SetTable, read_csv, read_parquet
from . import checks, closeness_search, datasets, lgb, metrics, msa, semantic, synthetic
from ._info import show_versions
from .audit import AuditReport, audit, check_anonymity, check_closeness, check_diversity

__all__ = [
    "__version__", "Attribute", "Schema", "Hierarchy",
    "Diversity", "EntropyDiversity", "Anonymity", "Closeness", "DiversityCloseness",
    "AttributeParams", "optimize", "publish", "SetTable", "read_parquet", "read_csv",
    "reconstruct", "count_w", "CrossTab", "true_crosstab", "metrics", "datasets",
    "checks", "closeness_search", "lgb", "msa", "semantic", "synthetic",
    "Ground", "emd", "emd_batch", "show_versions",
    "audit", "AuditReport", "check_diversity", "check_anonymity", "check_closeness",
]
