"""Publishing for papers 000 and 004 (Sec. V-B of paper 000).

For each record and sensitive QID S_j, a coin with head probability p_j: on
head the set holds the true value and eta_j - 1 distinct other values, on tail
eta_j distinct values drawn from the whole domain.  Exact QIDs are published
as they are; identifiers are dropped; pass-through columns are copied.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from . import _kernels
from ..io.keys import check_rng, make_key
from ..validate import check_threads as _threads
from ..encode import encode
from .params import AttributeParams, optimize
from .._typing import Model, Seed, TableLike
from ..schema import Schema, _as_frame
from .settable import SetTable

__all__ = ["publish", "sample_sets"]


def sample_sets(codes, params, attr_ids, key: bytes, *, rng: str = "chacha20",
                row0: int = 0, n_threads=None) -> dict:
    """Random sets for already-encoded columns.

    Parameters
    ----------
    codes : {name: int32 codes}
    params : {name: AttributeParams}
    attr_ids : {name: int} stream id of each attribute (its schema position)
    key : 32-byte generator key
    row0 : global index of the first row (for chunks and partitions)

    Returns
    -------
    {name: uint64 bitmask array (n, words)}
    """
    names = list(codes)
    if not names:
        return {}
    for n in names:
        if params[n].d > _kernels.MAX_DOMAIN:
            raise ValueError(f"attribute {n!r} has {params[n].d} values; the set sampler supports "
                             f"at most {_kernels.MAX_DOMAIN}")
    outs = _kernels.sample_sets(
        key, check_rng(rng), [codes[n] for n in names],
        [params[n].d for n in names], [params[n].eta for n in names],
        [params[n].coin for n in names], [int(params[n].exact) for n in names],
        [attr_ids[n] for n in names], row0=row0, n_threads=_threads(n_threads))
    return dict(zip(names, outs))


def check_params(params, model, published, codes, *, clip_l: bool = False) -> dict:
    """Verify user-given parameters against the attributes and the model.

    Raises ValueError naming the attribute when a parameter is missing, does
    not match the attribute's domain, or would publish a weaker model than
    declared (e.g. p above the admissible value for t_j, or eta below l_j).
    """
    import math

    from ..models import Anonymity, Closeness, Diversity, DiversityCloseness
    from .params import (AttributeParams, _resolve_ground, ground_object, max_admissible_p,
                         quantize_p)

    names = [a.name for a in published]
    missing_ = [n for n in names if n not in params]
    extra = [n for n in params if n not in names]
    if missing_ or extra:
        raise ValueError(f"params must give exactly the published attributes {names}; "
                         f"missing {missing_}, unexpected {extra}")
    def needed_eta(a) -> int:
        """The smallest eta the model allows (l_j or k_j, clipped as optimize does)."""
        if isinstance(model, (Diversity, DiversityCloseness)):
            v = model.l_for(a.name)
        elif isinstance(model, Anonymity):
            v = model.k_for(a.name)
        else:
            return 1
        return max(a.d - 1, 1) if clip_l and v >= a.d and a.d > 1 else v

    out = {}
    for a in published:
        par = params[a.name]
        if not isinstance(par, AttributeParams):
            raise ValueError(f"params[{a.name!r}] must be an AttributeParams, got {type(par).__name__}")
        if par.d != a.d:
            raise ValueError(f"params[{a.name!r}]: d = {par.d} but the domain has {a.d} values")
        if not (1 <= par.eta <= a.d) or not (0.0 <= par.p <= 1.0):
            raise ValueError(f"params[{a.name!r}]: need 1 <= eta <= d and 0 <= p <= 1, got "
                             f"eta = {par.eta}, p = {par.p}")
        if a.role == "exact":
            if not (par.exact and par.eta == 1):
                raise ValueError(f"params[{a.name!r}]: {a.name!r} is an exact QID: eta = 1, exact")
            out[a.name] = AttributeParams(a.name, 1.0, 1, a.d, exact=True)
            continue
        if par.exact:
            raise ValueError(f"params[{a.name!r}]: a sensitive attribute cannot be published exactly")
        need = needed_eta(a)
        if isinstance(model, (Diversity, Anonymity, DiversityCloseness)):
            if par.eta < need or (not isinstance(model, DiversityCloseness) and par.p < 1.0):
                raise ValueError(f"params[{a.name!r}]: {model.name} needs p = 1 and eta >= {need}, "
                                 f"got p = {par.p}, eta = {par.eta}")
        if isinstance(model, (Closeness, DiversityCloseness)):
            t = model.t_for(a.name)
            g = _resolve_ground(model, a)
            if not math.isinf(t) and t < 1.0:
                A = np.bincount(codes[a.name], minlength=a.d).astype(np.int64)   # counts, as optimize
                p_max = max_admissible_p(A, par.eta, t, ground_object(g, a))
                if par.p > p_max + 1e-12:
                    raise ValueError(f"params[{a.name!r}]: p = {par.p} exceeds the largest p "
                                     f"admissible for t = {t} with eta = {par.eta} ({p_max:.6g})")
            par = AttributeParams(par.name, par.p, par.eta, par.d, t=t, ground=g,
                                  l=need if isinstance(model, DiversityCloseness) else None)
        # the coin the sampler really has (never above the given p)
        out[a.name] = dataclasses.replace(par, p=quantize_p(par.p))
    return out


def publish(data: TableLike, model: Model, schema: Schema | None = None, *, seed: Seed = None,
            rng: str = "chacha20",
            n_threads: int | None = None, missing: str = "error", clip_l: bool = False,
            params: Mapping[str, AttributeParams] | None = None, **infer: Any) -> SetTable:
    """Publish a table under a privacy model of paper 000.

    Parameters
    ----------
    data : pandas.DataFrame or pyarrow.Table
    model : Diversity | Anonymity | Closeness | DiversityCloseness
    schema : Schema, optional
        Roles and domains.  When omitted, ``Schema.infer(data, **infer)``.
    seed : int, str or bytes, optional
        Makes the output reproducible.  Anyone who knows the seed can re-run
        the sampler for each candidate true value and keep the candidates that
        reproduce a published set, so a seed must be as secret as the data and
        unguessable (at least 128 random bits, e.g. ``secrets.token_bytes(16)``).
        By default the key is fresh from the operating system and never stored.
    rng : {'chacha20', 'philox'}
        'chacha20' (default) is cryptographically strong; 'philox' is faster
        but its output could in principle be predicted from published sets.
    n_threads : int, optional
        Kernel threads (default: OpenMP's default).  The output does not
        depend on it.
    missing : {'error', 'category'}
    clip_l : bool
        Allow l_j >= d_j by using l_j = d_j - 1, with a warning.
    params : {name: AttributeParams}, optional
        Use these parameters instead of optimizing them (e.g. for streaming,
        where they are computed once from the whole file).  They are checked
        against the model: parameters that would not satisfy it are an error.

    Returns
    -------
    SetTable

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"job": ["a", "b", "c", "a"], "city": ["x", "y", "x", "z"]})
    >>> pub = anonset.publish(df, anonset.Diversity(2), seed=1)
    >>> [len(s) for s in pub.sets("job")]
    [2, 2, 2, 2]
    """
    frame = _as_frame(data)
    if len(frame.columns) == 0:
        raise ValueError("the table has no columns")
    if len(frame) == 0:
        raise ValueError("the table is empty (no rows): nothing to publish")
    if schema is None:
        schema = Schema.infer(frame, missing=missing, **infer)
    elif infer:
        raise ValueError(f"give either a schema or inference options, not both "
                         f"(got {sorted(infer)})")
    for a in schema:
        if a.name not in frame.columns:
            raise ValueError(f"column {a.name!r} of the schema is not in the data")
    published = schema.published
    if not published:
        raise ValueError("no sensitive or exact attribute to publish")
    for a in published:
        # before the parameter search, whose closeness tables are d x d
        # (36 GiB at d = 70,000): the sampler's limit is the binding one
        if a.d > _kernels.MAX_DOMAIN:
            raise ValueError(f"attribute {a.name!r} has {a.d:,} values; the set sampler "
                             f"supports at most {_kernels.MAX_DOMAIN:,} (generalize it with "
                             "bins or a hierarchy level first)")
    codes = encode(frame, schema, missing=missing)
    if params is None:
        params = optimize(model, published, codes, clip_l=clip_l)
    else:
        params = check_params(params, model, published, codes, clip_l=clip_l)
    key = make_key(seed, research_seed=True)  # seed policy: enforced by the engine (issue 13)
    ids = {a.name: schema.stream_id(a.name) for a in published}
    masks = sample_sets(codes, params, ids, key, rng=rng, n_threads=n_threads)
    del key
    keep = [a for a in schema if a.role != "identifier"]
    other_names = [a.name for a in keep if a.role == "other"]
    other = frame[other_names].reset_index(drop=True) if other_names else None
    return SetTable(Schema(tuple(keep)), masks, params, model.to_dict(), other,
                    info={"rng": rng, "seeded": seed is not None})
