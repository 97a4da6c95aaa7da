"""One engine for publishing the randomized family (papers 000 and 004), shared
by the in-memory, streamed and Dask paths, so that they accept, refuse and
publish identically (DESIGN.md, "One engine").

1. **draft** (:func:`draft`, :mod:`.request`): what the caller asked for, checked against the
   table's columns before any row is read: every column has a role the user
   chose, declared domains, bins and hierarchies name real columns, the model
   names only sensitive attributes, nested types are not published.
2. **stats** (:class:`Stats`, :mod:`.stats`): one pass over the rows gathers what the whole
   table determines -- its row count, the values of columns whose domain is
   inferred, the distribution A_j of each attribute that closeness needs
   (paper 000, Algorithm 1), the text-to-type decision of CSV columns.
   Statistics of chunks or partitions merge; the result does not depend on
   how the rows were split.
3. **plan** (:func:`make_plan`, :mod:`.plan`): built once from the draft and the statistics:
   the schema, the parameters (p_j, eta_j) (optimized or checked), the key,
   the row order; every remaining check happens here (domain limits, values
   published in the clear, seeds).
4. **apply** (:func:`publish_block`, :mod:`.apply`): a pure function of (plan, block of rows,
   global index of its first row) -> the published block, in input order.
   Every set is a pure function of (key, global row, attribute), or of (key,
   record id, attribute, value) in persistent-key mode, so any chunking gives
   the same sets.  The output order is a keyed shuffle: each row's rank
   (:func:`block_ranks`) is a pure function of (key, global row); in memory
   the rows are sorted by rank, a file is shuffled through rank buckets, Dask
   sets the rank as the index.

Reconstruction works the same way (:class:`ReconstructionPlan`): the
counts of one block (w of eq. 17, or the distinct set tuples of the exact
EM), merged over blocks, then one estimate.
"""
from .apply import block_ranks, infer_schema, order_of, plain_values, publish_block, typed_block
from .counts import Counts, ReconstructionPlan
from .plan import Plan, finish_domain, make_plan
from .request import (ROLE_OF_PARAM, UNKNOWN_CATEGORIES, ColumnDraft, Draft, Options, attribute_of,
                      draft, scalar, union_categories, unknown_categoricals,
                      with_categories)
from .stats import Stats, cast_text

__all__ = ["Options", "Draft", "ColumnDraft", "Stats", "Plan", "draft", "make_plan",
           "publish_block", "block_ranks", "order_of", "typed_block", "infer_schema",
           "plain_values", "cast_text", "finish_domain", "attribute_of", "scalar", "ReconstructionPlan",
           "Counts", "ROLE_OF_PARAM", "UNKNOWN_CATEGORIES", "union_categories",
           "unknown_categoricals", "with_categories"]
