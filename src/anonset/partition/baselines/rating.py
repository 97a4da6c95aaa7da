"""Rating (Liu, Luo & Huang, "Rating: privacy preservation for multiple
attributes with different sensitivity requirements", ICDM Workshops 2011):
the baseline of paper 000 (Sec. III-A, Sec. VI, Figs. 1-2, 5-7).

What paper 000 says of it: Rating publishes an Attribute Table (AT) and an
ID Table (IDT) built from a sensitivity coefficient per attribute (our
``l_j``); every record of the anonymized table holds several values per
attribute, taken from *other records'* values (not at random, as paper
000's sampler does); its reconstruction is "similar" to ValueAdding, and the
reconstructed counts shrink toward the average.  Rating is a partition
method: it groups records, per attribute.

Our reading (the paper's own text is not in our reference set; docs/
results/000 says so): for every attribute ``j`` independently, Anatomy's
group creation (:func:`~anonset.partition.baselines.anatomy.diverse_groups`)
partitions the records into buckets of ``l_j`` or more records
with distinct values of ``j``; the AT of ``j`` lists each bucket's values
(BID, value), the IDT gives each record its bucket per attribute.  A record's
set for ``j`` is its bucket's values: it holds the true value and ``l_j - 1``
values of other records.  Guarantee, per attribute: every value of a bucket
belongs to exactly one of its records, so knowing a record's bucket gives
each of its values probability ``1 / |bucket|`` <= ``1 / l_j``.  An
attribute that is not l_j-eligible (a value held by more than 1/l_j of the
records) admits no such buckets and is refused, unless ``clip_eligible``
lowers its l_j (recorded in ``info``).

Reconstruction (:meth:`RatingRelease.crosstab`): every record spreads one
count uniformly over the product of its sets (ValueAdding's rule with
p = 1): ``x_hat = sum_r prod_j 1[c_j in S_j(r)] / |S_j(r)|``.  For one
attribute this is exact (each bucket value belongs to one record); for
several it keeps only what the independent buckets keep of the joint.
"""
from __future__ import annotations

import hashlib

import math
import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..keyed import ReleaseKey, by_name
from ...io.keys import frame_digest
from ...shared_ids import shared_without_key
from ...validate import (InputError, check_bool, check_choice, check_int, check_plain_values,
                         refuse_clear_l, resolve_roles)
from ._common import eligible_l, keyed_ids
from .anatomy import diverse_groups

__all__ = ["rating", "RatingRelease"]


@dataclass(eq=False)
class RatingRelease:
    """A Rating publication.  ``idt`` (one row per record, keyed random
    order: the bucket id of each attribute) and ``at`` ({attribute: (BID,
    value) table}) are what gets published; ``masks`` are the records' sets
    (bitmask words per row, in ``idt`` order).  ``codes`` holds the true
    values in the same order, for evaluation only: never publish the object.
    """
    attributes: tuple
    l: dict
    domains: dict
    idt: pd.DataFrame
    at: dict
    info: dict
    masks: dict = field(repr=False)
    bucket: dict = field(repr=False)
    codes: dict = field(repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.idt)

    def sets(self, attribute: str) -> list:
        """Each record's set of values of ``attribute`` (in ``idt`` order)."""
        dom = self.domains[attribute]
        bits = _bits(self.masks[attribute], len(dom))
        return [frozenset(dom[v] for v in np.flatnonzero(row)) for row in bits]

    def crosstab(self, attributes):
        """The ValueAdding-style reconstruction over ``attributes`` (a CrossTab)."""
        from ...randomized import _kernels
        from ...randomized.crosstab import CrossTab
        attributes = [attributes] if isinstance(attributes, str) else list(attributes)
        for a in attributes:
            if a not in self.masks:
                raise InputError(f"names {a!r}, which Rating did not publish",
                                 param="attributes", expected=f"one of {list(self.attributes)}")
        dims = [len(self.domains[a]) for a in attributes]
        sizes = np.ones(self.n_rows, dtype=np.int64)
        per = {}
        for a in attributes:
            per[a] = _popcount_rows(self.masks[a])
            sizes *= per[a]
        x = np.zeros(math.prod(dims))
        for size in np.unique(sizes):                 # few distinct set-size products
            rows = np.flatnonzero(sizes == size)
            cols = [np.ascontiguousarray(self.masks[a][rows]) for a in attributes]
            max_set = math.prod(int(per[a][rows].max()) for a in attributes)
            x += _kernels.count_w(cols, dims, max_set).ravel() / float(size)
        return CrossTab(tuple(attributes), tuple(self.domains[a] for a in attributes),
                        x.reshape(dims), "rating", {"rows": self.n_rows})

    def check(self) -> dict:
        """The guarantee, recomputed: per attribute, every bucket has at least
        l_j records with distinct values, each bucket value is one record's,
        and every record's set is its bucket's values and holds its value."""
        problems = []
        for a in self.attributes:
            d = len(self.domains[a])
            b, c = self.bucket[a], self.codes[a]
            nb = int(b.max()) + 1
            hist = np.bincount(b * d + c, minlength=nb * d).reshape(nb, d)
            if hist.max() > 1:
                problems.append(f"{a}: a bucket holds a value twice")
            size = hist.sum(axis=1)
            if size.min() < self.l[a]:
                problems.append(f"{a}: a bucket has {size.min()} records (< l = {self.l[a]})")
            bits = _bits(self.masks[a], d)
            if not np.array_equal(bits, hist[b] > 0):
                problems.append(f"{a}: a record's set is not its bucket's values")
            if not bits[np.arange(c.size), c].all():
                problems.append(f"{a}: a record's set lacks its own value")
            at = self.at[a]
            if len(at) != int((hist > 0).sum()):
                problems.append(f"{a}: the AT does not list each bucket value once")
        return {"ok": not problems, "problems": problems}


def _bits(mask: np.ndarray, d: int) -> np.ndarray:
    m = np.ascontiguousarray(mask)
    return np.unpackbits(m.view(np.uint8), axis=1, bitorder="little")[:, :d].astype(bool)


def _popcount_rows(mask: np.ndarray) -> np.ndarray:
    m = np.ascontiguousarray(mask)
    return np.unpackbits(m.view(np.uint8), axis=1).sum(axis=1, dtype=np.int64)


def _release_pairs(b: np.ndarray, c: np.ndarray, bid: np.ndarray, dom: tuple, name: str):
    """The AT of one attribute and the bitmask of each BID's values.

    The AT has one row per distinct (bucket, value) pair: ``BID`` then the
    value, sorted by BID and then by value (the values' own order, as
    ``DataFrame.sort_values`` sorts them).  One sort of ``BID * d + rank``
    gives both the AT's order and each bucket's run of values.  Returns
    (AT, (buckets, words) uint64 masks indexed by BID).
    """
    d = len(dom)
    values = np.asarray(dom, dtype=object)
    rank = pd.Categorical(values, ordered=True).codes.astype(np.int64)   # sort rank of a code
    code_of = np.empty(d, dtype=np.int64)
    code_of[rank] = np.arange(d)
    key = bid[b] * d + rank[c]
    key.sort()
    key = key[np.r_[True, key[1:] != key[:-1]]]                          # distinct pairs
    pb, pc = key // d, code_of[key % d]
    starts = np.flatnonzero(np.r_[True, pb[1:] != pb[:-1]])             # each BID's run
    words = (d + 63) // 64
    bm = np.zeros((len(bid), words), dtype=np.uint64)
    bit = np.left_shift(np.uint64(1), (pc % 64).astype(np.uint64))
    for w in range(words):
        vals = np.where(pc // 64 == w, bit, np.uint64(0))
        bm[pb[starts], w] = np.bitwise_or.reduceat(vals, starts)
    return pd.DataFrame({"BID": pb, name: values[pc]}), bm


def rating(data: pd.DataFrame, *, attributes: Sequence[str], l, other: Sequence[str] = (),
           identifiers: Sequence[str] = (), drop: Sequence[str] = (), schema=None,
           clip_l: bool = False, clip_eligible: bool = False, seed=None,
           research_seed: bool = False, keep_order: bool = False,
           allow_shared_id: Sequence[str] = (),
           allow_clear: Sequence[str] = (), missing: str = "error",
           missing_token: str = "?") -> RatingRelease:
    """Publish a table by Rating (our reading; see the module docstring).

    Parameters
    ----------
    data : pandas.DataFrame
    attributes : the attributes to protect (sensitive QIDs)
    l : int or {attribute: int}
        Sensitivity coefficient: every bucket of an attribute holds >= l_j
        distinct values.
    other, identifiers, drop : column names (not published by Rating; every
        column needs a role)
    schema : anonset.Schema, optional
        Domains, bins and hierarchies of the attributes (default: inferred,
        which reveals which values occur).
    clip_l : bool
        Use l_j = d_j - 1 where the domain has at most l_j values (paper 000,
        Sec. VI), as ``anonset.publish(clip_l=True)``.
    clip_eligible : bool
        Lower l_j to the largest l for which the attribute is l-eligible where
        it is not (weaker protection, recorded in ``info['clipped']``);
        default: refuse such an attribute.
    seed, research_seed : key material (>= 128 bits unless research_seed)
    keep_order : bool
        Publish the IDT in input order (by default a keyed random order).
    allow_shared_id : column names
        Identifiers whose values several rows share that you declare to be
        different people's (a household); refused otherwise
        (:mod:`anonset.shared_ids`: one person's waves fill buckets as several people).
    allow_clear : attribute names
        Attributes held to l = 1 (given, or after ``clip_l`` or
        ``clip_eligible``) that you accept to publish in the clear (a bucket
        of one row tells its value); refused otherwise.  The metadata
        (``clear``) names them.
    missing : 'error' (default) or 'category'
        A missing cell in an attribute is refused, or published as the value
        ``missing_token`` (default '?'), a value of its own, as
        :func:`anonset.publish` does (Rating keeps every row, as paper 000
        does; the metadata records ``missing``).
    missing_token : str
        The value of a missing cell under ``missing='category'``.

    Returns
    -------
    RatingRelease

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"job": list("abcdabcdab"), "city": list("xyzwxyzwvv")})
    >>> rel = rating(df, attributes=["job", "city"], l=2, seed=3, research_seed=True)
    >>> rel.check()["ok"], sorted(len(s) for s in rel.sets("job"))[0] >= 2
    (True, True)
    >>> round(rel.crosstab(["job"]).total, 6)
    10.0
    """
    from ...encode import encode
    from ...schema import Schema
    from ...io.tables import as_frame   # pandas, Arrow, Polars, DuckDB, ... as publish (H69)
    data = as_frame(data)
    if len(data) == 0:
        raise InputError("is empty", param="data", expected="at least one row")
    attrs = [attributes] if isinstance(attributes, str) else list(attributes)
    # a numpy string (np.str_, as rng.choice draws names) is named in messages
    # and metadata as the plain name the user knows (H89)
    attrs = [str(a) if isinstance(a, str) else a for a in attrs]
    if not attrs:
        raise InputError("is empty", param="attributes", expected="at least one column")
    resolve_roles(data.columns, {"attributes": attrs, "other": list(other),
                                 "identifiers": list(identifiers), "drop": list(drop)})
    check_plain_values(data, attrs, partition=True)
    # only read below: a copy of a large frame costs more than the release
    frame = data if data.index.equals(pd.RangeIndex(len(data))) else data.reset_index(drop=True)
    check_choice(missing, "missing", ("error", "category"))
    clip_l, clip_eligible = check_bool(clip_l, "clip_l"), check_bool(clip_eligible,
                                                                       "clip_eligible")
    if missing_token != "?" and missing != "category":     # it would be ignored: refused
        raise InputError(f"is {missing_token!r}, which only {{@missing='category'}} uses",
                         param="missing_token",
                         expected="{@missing='category'} with it, or no {@missing_token}")
    if missing == "category":
        # a Categorical listing the token as a category, with missing cells
        # too: the two published as one value (H85), as publish refuses
        for a in attrs:
            na = int(frame[a].isna().sum())
            if na and bool((frame[a].astype(object) == missing_token).any()):
                raise InputError(f"holds the value {missing_token!r}, which is the "
                                 f"missing-value token, and has {na:,} missing cell(s): the "
                                 "two would publish as one value", column=a,
                                 expected="another {@missing_token}")
    if schema is None:
        schema = Schema.infer(frame[attrs], sensitive=attrs, missing=missing,
                              missing_token=missing_token)
    codes = encode(frame, schema, columns=attrs, missing=missing)
    filled = {a: int(frame[a].isna().sum()) for a in attrs} if missing == "category" else {}
    if isinstance(l, Mapping):
        for a in list(l) + attrs:
            if a not in attrs:
                raise InputError(f"names {a!r}, which is not an attribute", param="l",
                                 expected=f"values for the attributes {attrs}")
            if a not in l:
                raise InputError(f"gives no value for the attribute {a!r}", param="l",
                                 expected="one value for all, or one per attribute")
    ls = {a: check_int(l[a] if isinstance(l, Mapping) else l, "l", minimum=1, column=a)
          for a in attrs}
    rkey = ReleaseKey.make(seed, research_seed=research_seed, keep_order=keep_order).for_release(
        # the attributes by name: listed in another order, one release (H111)
        {"method": "rating", "attributes": by_name(attrs), "l": ls,
         "data": frame_digest(frame, by_name(attrs))})
    key = rkey.key
    order = rkey.order(len(frame))
    info = {"method": "rating", **rkey.metadata(), "clipped": {},
            **shared_without_key(frame, list(identifiers), allow_shared_id),
            # Rating publishes no column as it is (``other`` columns are left
            # out of its tables): nothing to measure, warn of or refuse
            "pass_through_risks": [],
            "missing": {"policy": missing, **({"token": missing_token, "columns": {
                a: k for a, k in filled.items() if k}} if missing == "category" else {})}}
    doms, masks, buckets, at, idt, true = {}, {}, {}, {}, {}, {}
    for a in attrs:
        dom = tuple(schema[a].domain)
        d = len(dom)
        c = np.asarray(codes[a], dtype=np.int32)
        want = ls[a]
        if want >= d and d > 1 and clip_l:
            # weaker than asked: said, and recorded as clip_eligible's is (H57)
            want = d - 1
            warnings.warn(f"l = {ls[a]} for {a!r} is not below its domain size {d}; using "
                          f"l = {want} as requested by clip_l (this is weaker than asked)",
                          stacklevel=2)
            info["clipped"][a] = {"asked": ls[a], "used": want, "by": "clip_l"}
        best = eligible_l(c, d)
        if best < want:
            if not clip_eligible:
                raise InputError(f"is not {want}-eligible (the largest l it admits is {best})",
                                 column=a, param="l",
                                 expected=(f"l <= {best}, or {{@clip_eligible=True}} to publish "
                                           "it with that weaker l (recorded in the metadata)")
                                 if best >= 2 else
                                 "another column, or {@clip_eligible=True} (it holds one value "
                                 "only: l = 1 tells nothing its domain does not)" if d <= 1 else
                                 "another column (no l >= 2 fits it: one value is held by "
                                 "more than half the rows), or coarser values; "
                                 "{@clip_eligible=True} publishes it at l = 1, in the clear, "
                                 "only beside {@allow_clear}")
            # weaker than asked: said as clip_l's lowering is (H58)
            warnings.warn(f"l = {want} for {a!r} is not {want}-eligible; using l = {best} as "
                          "requested by clip_eligible (this is weaker than asked)",
                          stacklevel=2)
            by = "clip_l, clip_eligible" if a in info["clipped"] else "clip_eligible"
            info["clipped"][a] = {"asked": ls[a], "used": best, "by": by}
            want = best
        ls[a] = want
        # one purpose per (use, column), the name hashed: 'rating-bid-x' was
        # both x's bucket ids and the groups of a column named 'bid-x', and
        # a non-ASCII name failed in derive_key (H82)
        tag = hashlib.sha256(str(a).encode("utf-8")).hexdigest()[:32]
        b = diverse_groups(c, d, want, key, f"rating-groups:{tag}") if want > 1 else \
            np.arange(c.size, dtype=np.int64)
        bid = keyed_ids(key, int(b.max()) + 1, f"rating-bucket-ids:{tag}")
        doms[a] = dom
        buckets[a] = b[order]
        true[a] = c[order]
        idt[a] = bid[buckets[a]]
        at[a], by_bid = _release_pairs(b, c, bid, dom, a)
        masks[a] = by_bid[idt[a]]
    notes = {a: (", after clip_eligible" if "clip_eligible" in info["clipped"].get(a, {})
                 .get("by", "") else ", after clip_l")
             for a in attrs if ls[a] == 1 and ls[a] != check_int(
                 l[a] if isinstance(l, Mapping) else l, "l", minimum=1)}
    info["clear"] = refuse_clear_l(ls, {a: len(doms[a]) for a in attrs}, allow_clear,
                                   notes=notes)
    info["l"] = dict(ls)
    return RatingRelease(tuple(attrs), ls, doms, pd.DataFrame(idt), at, info, masks, buckets,
                         true)
