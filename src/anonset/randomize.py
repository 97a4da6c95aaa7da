"""Publishing for papers 000 and 004 (Sec. V-B of paper 000).

For each record and sensitive QID S_j, a coin with head probability p_j: on
head the set holds the true value and eta_j - 1 distinct other values, on tail
eta_j distinct values drawn from the whole domain.  Exact QIDs are published
as they are; identifiers are dropped; pass-through columns are copied.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import _kernels
from ._keys import check_rng, make_key
from .encode import encode
from .params import optimize
from .schema import Schema, _as_frame
from .settable import SetTable

__all__ = ["publish", "sample_sets"]


def _threads(n_threads) -> int:
    if n_threads is None:
        return 0
    if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer or None, got {n_threads!r}")
    return n_threads


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


def publish(data, model, schema: Schema | None = None, *, seed=None, rng: str = "chacha20",
            n_threads: int | None = None, missing: str = "error", clip_l: bool = False,
            params=None, **infer) -> SetTable:
    """Publish a table under a privacy model of paper 000.

    Parameters
    ----------
    data : pandas.DataFrame or pyarrow.Table
    model : Diversity | Anonymity | Closeness | DiversityCloseness
    schema : Schema, optional
        Roles and domains.  When omitted, ``Schema.infer(data, **infer)``.
    seed : int, str or bytes, optional
        Makes the output reproducible; keep it as secret as the data.  By
        default the key is fresh from the operating system and never stored.
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
        where they are computed once from the whole file).

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
    if schema is None:
        schema = Schema.infer(frame, missing=missing, **infer)
    elif infer:
        raise ValueError(f"give either a schema or inference options, not both "
                         f"(got {sorted(infer)})")
    if len(frame) == 0:
        raise ValueError("the table is empty: nothing to publish")
    for a in schema:
        if a.name not in frame.columns:
            raise ValueError(f"column {a.name!r} of the schema is not in the data")
    published = schema.published
    if not published:
        raise ValueError("no sensitive or exact attribute to publish")
    codes = encode(frame, schema, missing=missing)
    if params is None:
        params = optimize(model, published, codes, clip_l=clip_l)
    key = make_key(seed)
    ids = {a.name: schema.stream_id(a.name) for a in published}
    masks = sample_sets(codes, params, ids, key, rng=rng, n_threads=n_threads)
    del key
    keep = [a for a in schema if a.role != "identifier"]
    other_names = [a.name for a in keep if a.role == "other"]
    other = frame[other_names].reset_index(drop=True) if other_names else None
    return SetTable(Schema(tuple(keep)), masks, params, model.to_dict(), other,
                    info={"rng": rng, "seeded": seed is not None})
