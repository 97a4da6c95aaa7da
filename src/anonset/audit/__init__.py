"""Checks of a published table against its declared model, the Bayesian
attack simulation, and the audit report (paper 000's guarantees, Theorems
2-4)."""
from .attack import AttackResult, attack
from .checks import (CheckResult, check_anonymity, check_closeness, check_diversity,
                     closeness_bound_any_A, expand, membership)
from .report import AuditReport, audit

__all__ = ["AuditReport", "AttackResult", "CheckResult", "attack", "audit", "check_anonymity",
           "check_closeness", "check_diversity", "closeness_bound_any_A", "expand", "membership"]
