"""Apply a plan to a block of rows: the published block in input order, a
pure function of (plan, block, global first row), and each row's keyed rank
for the output order."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..encode import encode_column, shortest_floats
from ..io.keys import record_counters, record_hashes, row_ranks
from ..schema import Attribute, Schema
from .plan import Plan, all_held, finish_domain, token_where_missing
from .request import Options, attribute_of, draft
from .stats import Stats, cast_text

__all__ = ["typed_block", "publish_block", "block_ranks", "order_of", "infer_schema"]


# ================================================================== apply
def typed_block(plan: Plan, block: pd.DataFrame) -> pd.DataFrame:
    """The block's published columns typed as the plan says (CSV text)."""
    block = block.reset_index(drop=True)
    if not plan.text:
        # every column, passed through and record ids too, as memory's
        # reader does (H92: Dask published float32 0.1 as 0.10000000149...)
        return shortest_floats(block)
    out = block.copy()
    for a in plan.source.published:
        out[a.name] = cast_text(block[a.name], a, a.name)
    return out


def publish_block(plan: Plan, block: pd.DataFrame, row0: int):
    """Publish global rows ``row0 .. row0 + len(block) - 1`` in input order:
    the rows :func:`anonset.publish` gives for the whole table under the same
    plan.  Pure: the same (plan, block, row0) always gives the same output."""
    from ..randomized.publish import sample_sets
    from ..randomized.settable import SetTable
    block = typed_block(plan, block)
    published = plan.source.published
    if len(block) == 0:
        masks = {a.name: np.zeros((0, (a.d + 63) // 64), dtype=np.uint64) for a in published}
    else:
        codes = {a.name: encode_column(block[a.name], a, row0=row0) for a in published}
        ids = plan.stream_ids()
        counters = None
        if plan.record_id is not None:
            h = record_hashes(block[plan.record_id].to_numpy(dtype=object))
            counters = {n: record_counters(h, c, plan.salts[n]) for n, c in codes.items()}
        masks = sample_sets(codes, plan.params, ids, plan.key, rng=plan.rng, row0=row0,
                            n_threads=plan.n_threads, counters=counters)
    other = [a.name for a in plan.schema if a.role == "other"]
    return SetTable(plan.schema, masks, plan.params, plan.model,
                    plain_values(block[other]) if other else None, plan.info)


#: pandas' own type for text (``str`` from pandas 3; ``object`` before).
_TEXT = pd.Series(["a"]).dtype


def is_text(col: pd.Series) -> bool:
    """A column of text."""
    dt = col.dtype
    if isinstance(dt, pd.StringDtype):
        return True
    if isinstance(dt, pd.ArrowDtype):
        import pyarrow as pa
        return pa.types.is_string(dt.pyarrow_dtype) or pa.types.is_large_string(dt.pyarrow_dtype)
    # (a block whose cells are all missing is left as it is: the Parquet
    # sink types it as the blocks that hold values, H131)
    return dt == object and pd.api.types.infer_dtype(col, skipna=True) == "string"


def plain_values(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns passed through, each as its values: a dictionary column (a
    pandas Categorical, an Arrow dictionary) is published without its
    dictionary.  The dictionary is no published row's cell: it holds values
    nobody in the release holds (a person filtered out of the table) and,
    built by ``dictionary_encode``, the input's first-appearance order,
    which undid the keyed shuffle (H117: every row's age bin read back from
    its index into a token column's dictionary)."""
    out = {}
    for c in frame.columns:
        col, dt = frame[c], frame[c].dtype
        if isinstance(dt, pd.CategoricalDtype):
            from ..validate import first_nested
            if first_nested(pd.Series(dt.categories, dtype=object)) is not None:
                out[c] = col        # of tuples: no format keeps them, refused by name
                continue
            try:
                col = col.astype(dt.categories.dtype)
            except (TypeError, ValueError):         # ints with a missing cell
                col = col.astype(object)
        elif isinstance(dt, pd.ArrowDtype):
            import pyarrow as pa
            if pa.types.is_dictionary(dt.pyarrow_dtype):
                col = col.astype(pd.ArrowDtype(dt.pyarrow_dtype.value_type))
        if isinstance(col.dtype, pd.ArrowDtype):
            import pyarrow as pa
            if pa.types.is_string(col.dtype.pyarrow_dtype):
                # Arrow text as pandas' own text is written (large_string);
                # kept Arrow, so that a CSV release gives its missing cells
                # back (H130)
                col = col.astype(pd.ArrowDtype(pa.large_string()))
        elif _TEXT != object and col.dtype == object and is_text(col):
            # text held as Python strings (as pandas reads many files) is
            # published as pandas' own text: the release of one table read
            # by pandas and by Arrow is one (H125: string vs large_string)
            col = col.astype(_TEXT)
        out[c] = col
    return pd.DataFrame(out, index=frame.index) if out else frame


def block_ranks(plan: Plan, row0: int, n: int):
    """Keyed ranks of global rows ``row0 .. row0 + n - 1`` (None: input order).
    The published order is by (rank, row)."""
    if plan.order_key is None:
        return None
    return row_ranks(plan.order_key, row0, n)


def order_of(ranks: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Positions sorted by (rank, row); ``rows`` None: rows in position order
    (then an O(n) radix sort)."""
    if rows is None:
        from ..randomized import _kernels
        return _kernels.rank_order(ranks)
    return np.lexsort((rows, ranks))


def infer_schema(frame: pd.DataFrame, options: Options) -> Schema:
    """The schema the engine builds for a whole in-memory table (every input
    column, with its role), without publishing."""
    d = draft(options, list(frame.columns), dict(frame.dtypes))
    st = Stats(d, validate=False).add(frame, 0)      # a schema only: values are checked later
    attrs = []
    for c in d.columns:
        cd = d.drafts[c]
        if not cd.published:
            attrs.append(Attribute(c, role=cd.role))
            continue
        na = st.na[c] if c in st.na else int(frame[c].isna().sum())
        cd = token_where_missing(cd, na)
        if c in st.seen:
            dom, _ = finish_domain(cd, st.seen[c], st.na[c], d, st.first_na.get(c))
            attrs.append(attribute_of(cd, tuple(dom), inferred=True))
        else:
            attr = attribute_of(cd, cd.domain)
            # a Categorical whose every category is held: read off the data,
            # as make_plan reads it (a schema must not declare what it is not)
            held = cd.categorical and c in st.counts and all_held(st.counts[c], attr)
            attrs.append(attribute_of(cd, cd.domain, inferred=True) if held else attr)
    return Schema(tuple(attrs))
