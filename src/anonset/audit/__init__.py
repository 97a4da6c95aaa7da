"""The audit of a published table: does it conform to its declared privacy
model (papers 000, 004, 001: Theorems 2-4 and Definition 1), and which risks
does it carry that the model does not cover (issue 13)?

Modules: :mod:`~anonset.audit.checks` (diversity, anonymity, closeness),
:mod:`~anonset.audit.classes` (equivalence classes, exact),
:mod:`~anonset.audit.declared` (metadata and parameters),
:mod:`~anonset.audit.risks` (key, row order, clear, pass-through columns),
:mod:`~anonset.audit.ldp` (epsilon of each attribute),
:mod:`~anonset.audit.attack` (the Bayesian adversary),
:mod:`~anonset.audit.stats` (statistics that add up over chunks),
:mod:`~anonset.audit.report` (the report and :func:`audit`),
:mod:`~anonset.audit.file` (:func:`audit_file`, chunk by chunk),
:mod:`~anonset.audit.plot` (charts).
"""
from .attack import AttackResult, attack
from .checks import (CheckResult, check_anonymity, check_closeness, check_diversity,
                     closeness_bound_any_A)
from .classes import expand, membership
from .file import audit_file
from .ldp import epsilon_table, set_epsilon
from .report import AuditReport, audit

__all__ = ["AuditReport", "AttackResult", "CheckResult", "attack", "audit", "audit_file",
           "check_anonymity", "check_closeness", "check_diversity", "closeness_bound_any_A",
           "epsilon_table", "expand", "membership", "set_epsilon"]
