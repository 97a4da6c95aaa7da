"""Checks of a published table against its declared model, the Bayesian
attack simulation, and the audit report (paper 000's guarantees, Theorems
2-4)."""
from .core import (AuditReport, AttackResult, CheckResult, attack, audit, check_anonymity,
                   check_closeness, check_diversity, closeness_bound_any_A, expand, membership)

__all__ = ["AuditReport", "AttackResult", "CheckResult", "attack", "audit", "check_anonymity",
           "check_closeness", "check_diversity", "closeness_bound_any_A", "expand", "membership"]
