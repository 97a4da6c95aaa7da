"""Reconstruction in the engine's shape: a plan checked once
(:class:`ReconstructionPlan`), counts of each block that merge
(:class:`Counts`: w of eq. 17, or the distinct set tuples of the exact EM),
then one estimate."""
from __future__ import annotations

import math

import numpy as np

from .. import validate as V
from ..validate import InputError

__all__ = ["ReconstructionPlan", "Counts"]


# ========================================================== reconstruction
class ReconstructionPlan:
    """What a reconstruction needs besides the sets: the published header
    (schema, parameters, row count), the attributes and the method, checked
    once; :meth:`counts` makes the per-block counts, :meth:`estimate` the
    cross-tabulation from the merged counts."""

    def __init__(self, header, attributes, method: str = "em", *, max_iter=None, tol=None,
                 tol_ll=None, n_threads=None, seed=None, accelerate: bool = True,
                 standard_errors=None):
        from ..randomized.reconstruct import METHODS, _check_stopping
        from ..randomized.uncertainty import check_replicates
        V.check_choice(method, "method", METHODS)
        # the stopping rule before the file is read, not after
        _check_stopping(1 if max_iter is None else max_iter, 0.0 if tol is None else tol,
                        tol_ll, accelerate)
        self.standard_errors = check_replicates(standard_errors)
        self.accelerate = accelerate
        V.check_reconstructable(header)
        self.header, self.method = header, method
        self.attributes = V.check_attributes(header, attributes)
        V.check_informative(header, self.attributes)
        self.dims = V.check_cells(header, self.attributes)
        self.max_iter, self.tol, self.tol_ll = max_iter, tol, tol_ll
        self.n_threads, self.seed = V.check_threads(n_threads) or None, \
            V.check_sampling_seed(seed)

    def counts(self) -> "Counts":
        return Counts(self)

    def estimate(self, counts: "Counts"):
        from ..randomized.reconstruct import estimate_from_counts
        if counts.rows != self.header.n_rows:
            raise InputError(f"holds {counts.rows:,} rows but its metadata says "
                             f"{self.header.n_rows:,}", param="n_rows",
                             expected="a complete file (it may be truncated)")
        kw = {k: v for k, v in (("max_iter", self.max_iter), ("tol", self.tol),
                                ("tol_ll", self.tol_ll)) if v is not None}
        return estimate_from_counts(self.header, self.attributes, self.method,
                                    w=counts.w, patterns=counts.patterns_result(),
                                    n_threads=self.n_threads, seed=self.seed,
                                    accelerate=self.accelerate,
                                    standard_errors=self.standard_errors, **kw)


class Counts:
    """Mergeable counts of published rows: w of eq. 17 ('em',
    'value_adding'), or distinct set tuples with multiplicities
    ('exact_em'); 'random' needs only the row count."""

    def __init__(self, rplan: ReconstructionPlan):
        self.rplan = rplan
        self.rows = 0
        self.w = None
        self.patterns = None
        if rplan.method == "exact_em":
            from ..randomized.reconstruct import PatternCounter
            self.patterns = PatternCounter([(d + 63) // 64 for d in rplan.dims])
        elif rplan.method != "random":
            self.w = np.zeros(rplan.dims, dtype=np.int64)

    def add(self, masks) -> "Counts":
        """Count one block: ``masks`` holds one bitmask array per attribute."""
        from ..randomized import _kernels
        masks = [np.ascontiguousarray(m, dtype=np.uint64) for m in masks]
        n = len(masks[0]) if masks else 0
        self.rows += n
        if n == 0:
            return self
        if self.patterns is not None:
            self.patterns.add_masks(masks)
        elif self.w is not None:
            header = self.rplan.header
            max_set = math.prod(header.params[a].eta for a in self.rplan.attributes)
            self.w += _kernels.count_w(masks, self.rplan.dims, max_set,
                                       n_threads=self.rplan.n_threads or 0)
        return self

    def merge(self, other: "Counts") -> "Counts":
        self.rows += other.rows
        if self.w is not None:
            self.w += other.w
        if self.patterns is not None:
            self.patterns.merge(other.patterns)
        return self

    def patterns_result(self):
        return self.patterns.result() if self.patterns is not None else None
