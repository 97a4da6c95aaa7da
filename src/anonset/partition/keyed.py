"""The key of a partition release (papers 002, 003) and everything drawn
from it: the published row order, random record IDs and NumPy generators for
the algorithms' own random choices, each a pure function of (key, purpose)
through :func:`anonset.io.keys.derive_key`, so that a seed reproduces a
release exactly and different keys give independent ones.  Row order and IDs
are random by default because the input order often follows a sensitive
attribute (files sorted by age or date): keeping it is an opt-out that the
release's metadata records (issue 13).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..io.keys import check_research_seed, derive_key, key_mode, make_key, shuffled_order

__all__ = ["ReleaseKey", "ROW_ORDERS", "by_name"]

#: Values of ``row_order`` in a release's metadata.
ROW_ORDERS = ("random", "input")


def by_name(names) -> list:
    """Column names in one canonical order (by name), whatever order they
    were listed in: the order a partition publisher keys its draws by and
    processes its attributes in, so that one table under one seed gives one
    release however its quasi-identifiers and sensitive attributes are
    listed (H111: listed the other way, msa, LGB and the baselines drew
    another partition, whose classes intersected with the first's).

    >>> by_name(["sex", "age", 3])
    [3, 'age', 'sex']
    """
    return sorted(names, key=lambda c: (str(c), repr(c)))


@dataclass(frozen=True)
class ReleaseKey:
    """A 32-byte key and how it was obtained.

    Parameters
    ----------
    seed : bytes, str or int, optional
        Key material of at least 128 bits (see :func:`anonset.io.keys.make_key`);
        default: fresh from the operating system, never stored.
    research_seed : bool
        Accept a shorter seed; the metadata then says ``'research-seed'``.
    keep_order : bool
        Publish rows in input order with IDs 1..n (the opt-out).

    Examples
    --------
    >>> k = ReleaseKey.make("d1f3a8c04e9b27f65a0c3e81b7d9f246")
    >>> k.mode, k.row_order
    ('seed', 'random')
    >>> bool((k.order(5) == ReleaseKey.make("d1f3a8c04e9b27f65a0c3e81b7d9f246").order(5)).all())
    True
    >>> ReleaseKey.make(1, research_seed=True, keep_order=True).order(4).tolist()
    [0, 1, 2, 3]
    """
    key: bytes
    mode: str
    keep_order: bool = False

    @classmethod
    def make(cls, seed=None, *, research_seed: bool = False,
             keep_order: bool = False) -> "ReleaseKey":
        if not isinstance(keep_order, (bool, np.bool_)):
            from ..validate import InputError
            raise InputError(f"got {keep_order!r}", param="keep_order", expected="True or False")
        check_research_seed(seed, research_seed)
        return cls(make_key(seed, research_seed=research_seed),
                   key_mode(seed, research_seed), bool(keep_order))

    def for_release(self, facts) -> "ReleaseKey":
        """The key of one release's draws: this key and what the release
        publishes (:func:`anonset.io.keys.release_key`), so that other
        parameters under one key file give another order, other IDs and
        other groups, not rows lined up with an earlier release's."""
        from ..io.keys import release_key
        # a fact given as a function (the table's digest, a pass over every
        # cell) is computed only where a given seed or key file makes it
        # matter: a fresh key draws apart from any other release anyway
        facts = {k: v() if callable(v) else v for k, v in facts.items()
                 if self.mode != "os" or not callable(v)}
        return ReleaseKey(release_key(self.key, facts), self.mode, self.keep_order)

    @property
    def row_order(self) -> str:
        return "input" if self.keep_order else "random"

    def order(self, n: int, purpose: str = "rows") -> np.ndarray:
        """Published position i holds input row ``order[i]``: a keyed
        uniformly random permutation, or the identity under keep_order."""
        if self.keep_order:
            return np.arange(n, dtype=np.int64)
        return shuffled_order(derive_key(self.key, purpose), n)

    def ids(self, n: int) -> np.ndarray:
        """Record IDs 1..n of the published rows: drawn at random,
        independently of the row order (or 1..n in input order under
        keep_order, which is then the input row number)."""
        if self.keep_order:
            return np.arange(1, n + 1, dtype=np.int64)
        return shuffled_order(derive_key(self.key, "ids"), n) + 1

    def generator(self, purpose: str) -> np.random.Generator:
        """A NumPy generator for one purpose ('lgb-show', 'msa-partition', ...)."""
        words = np.frombuffer(derive_key(self.key, purpose), dtype=np.uint32)
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words.tolist())))

    def metadata(self) -> dict:
        """What a release records about its key and order (never the key)."""
        return {"key": self.mode, "row_order": self.row_order}
