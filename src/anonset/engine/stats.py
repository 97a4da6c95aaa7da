"""The first pass: what the whole table determines, gathered block by block
into statistics that merge (:class:`Stats`), and the typing of CSV text (a
column's type decided over the whole file, :func:`cast_text`)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .. import validate as V
from ..encode import encode_column, shortest_floats
from ..io.keys import checked_record_hashes, missing_record_ids
from ..io.tables import INT_TEXT, text_type
from ..passthrough import RowSample
from ..randomized.pair_adversary import SAMPLE_ROWS as PAIR_ROWS
from ..shared_ids import shared_rows, value_hashes
from ..schema import Attribute
from ..validate import InputError, numbers_expected
from .request import Draft, attribute_of, scalar

__all__ = ["Stats", "cast_text", "missing_text", "text_type", "INT_TEXT"]

# ================================================================== stats
class Stats:
    """What one pass over the rows learns; mergeable across blocks.

    * ``n``: rows;
    * ``seen[c]``: value -> count of every column whose domain is inferred
      (text values for CSV, typed values otherwise);
    * ``na[c]``: the missing cells of every column read (inferred, and
      declared ones when validating); ``first_na[c]``: the global row of the
      first of them (what an error shows, whatever the blocks);
    * ``counts[c]``: value counts (codes of the declared domain) of every
      other column whose distribution closeness needs; every other value of a
      declared domain is checked (encoded) and dropped;
    * ``ids``: the hashes of the persistent-mode record ids;
    * ``shared[c]``: hashes of the values of every identifier column (other
      than the record id), to count the rows that share a value; the Dask
      path counts them on the workers instead (``count_shared=False``, the
      counts then set as ``shared_counts``).
    """

    def __init__(self, d: Draft, *, validate: bool = True, count_shared: bool = True):
        self.draft = d
        self.n = 0
        self.seen = {c: {} for c in d.need_domain}
        self.na = {c: 0 for c in d.need_domain}
        #: per inferred sensitive or exact column, per value seen (as ``seen``), the
        #: sum (mod 2^64) of its rows' :func:`row_mix`, and of its missing
        #: cells': with the codes of the domain once it is known, the column's
        #: :func:`placed_sum` (the declared columns' ``placed``)
        self.seen_mix = {c: {} for c in d.need_domain if d.drafts[c].role in KEYED_ROLES}
        self.na_mix = {c: 0 for c in self.seen_mix}
        self.first_na: dict = {}
        self.real_token: dict = {}              # declared columns: cells holding
        self.first_token: dict = {}             # the missing token as a real value
        self.counts: dict = {}
        self.ids: list = []
        self.ids_missing = 0                    # record ids missing, empty or blank
        self.first_id_missing: int | None = None
        #: under a record id, per block, each row's code of each sensitive
        #: column (2 bytes a cell; a record id needs declared domains): one
        #: record's rows whose codes differ draw independent sets
        #: (:func:`anonset.shared_ids.changed_records`)
        self.id_values: list | None = [] if d.options.record_id is not None else None
        self.shared = {c: [] for c in d.identifiers if c != d.options.record_id} \
            if count_shared else {}
        self.shared_counts: dict | None = None
        self.passthrough = d.passthrough_check() if d.passthrough_columns else None
        #: rows of the sensitive columns drawn from the whole table: two
        #: columns' sets read together (:func:`anonset.validate.check_set_pairs`)
        # (and a set beside columns published as they are: read together)
        self.set_rows = RowSample(PAIR_ROWS) if len(d.sensitive) >= 2 or (
            d.sensitive and (d.exact or d.passthrough or d.series_read or d.series_targets)) \
            else None
        # (a series' earlier sets-columns too: their sets link to this
        # release's rows, and are read beside them; H43)
        self.set_columns = d._in_order({*d.sensitive, *d.exact, *d.series_targets})
        self._declared = {}
        #: per declared sensitive or exact column, a sum (mod 2^64) of a mix of each
        #: row's index and code: with the counts, what a release's draws are
        #: keyed by besides its key (:func:`data_digest`)
        self.placed: dict = {}
        self.kinds: dict = {}                   # object columns: value kinds seen
        #: per pass-through column, the same sum over a hash of each cell's
        #: text (:func:`passthrough_placed`), where the draws are keyed by a
        #: given seed or key file without a record id (H96: rows reordered
        #: that differ only there drew the same sets, linking their people)
        opts = d.options
        keyed = opts.record_id is None and (opts.seed is not None or opts.key_file is not None)
        self.placed_other: dict = {c: 0 for c in d.passthrough
                                   if keyed and c in d.passthrough_columns}
        for cd in d.published:
            if cd.name not in self.seen and (validate or cd.name in d.need_counts):
                if lacks_token_leaf(cd):
                    # the missing token joins only a column with missing cells
                    # (make_plan): checked without it, its missing cells counted
                    cd = replace(cd, missing=None)
                attr = attribute_of(cd, cd.domain)
                self._declared[cd.name] = attr
                self.na[cd.name] = 0
                if cd.name in d.need_counts:
                    self.counts[cd.name] = np.zeros(attr.d, dtype=np.int64)
                if cd.role in KEYED_ROLES:
                    self.placed[cd.name] = 0

    def add(self, block: pd.DataFrame, row0: int | None = None) -> "Stats":
        row0 = self.n if row0 is None else row0
        d = self.draft
        if not d.text:
            # float32 read as the decimals they spell, as publishing reads them
            block = shortest_floats(block)
            # a cell holding a list, a dict or an array (an object column
            # can) is no value to publish: refused as the partitions refuse it
            V.check_plain_values(block, [c for c in (*self.seen, *self._declared)
                                         if block[c].dtype == object], file=d.file)
        blockmix = None
        errors = []             # of the columns' errors, the first row's is raised
        for c in self.seen:
            col = block[c]
            if d.text:
                vals = col.to_numpy(dtype=object)
                miss = missing_text(vals)
                col = pd.Series(vals[~miss], dtype=object)
            else:
                miss = col.isna().to_numpy()
            self._missing(c, miss, row0)
            mix = None
            if c in self.seen_mix:
                if blockmix is None:                     # once a block, for every column
                    blockmix = row_mix(row0, len(block))
                mix = blockmix[~miss] if miss.any() else blockmix
            # small whole numbers counted, and their row mixes summed, by
            # their own value (no hashing), in one pass
            small = None if d.text else small_whole(col[~miss] if miss.any() else col, mix)
            if small is not None:
                cnt = small[0]
                held = np.flatnonzero(cnt)
                values, counts = held.tolist(), cnt[held].tolist()
            else:
                vc = col.value_counts(dropna=True, sort=False)
                if col.dtype == object:
                    self._note_kinds(c, vc.index)
                values, counts = vc.index.tolist(), vc.to_numpy().tolist()
            acc = self.seen[c]
            new = []
            for v, k in zip(values, counts):
                v = scalar(v)
                if v in acc:
                    acc[v] += k
                else:
                    acc[v] = k
                    new.append(v)
            if len(acc) > V.MAX_DOMAIN:
                # named by the row of the first value beyond the limit, so
                # that a row error before it comes first on every path (a
                # domain error at row 4 was named in blocks of 1,000, this
                # one read whole, H48)
                errors.append(V.domain_too_large(c, len(acc), file=d.file, more=True,
                                                 row=row0 + _beyond(col, miss, set(new),
                                                                    len(acc) - len(new),
                                                                    d.text)))
                continue
            if mix is not None:
                self._mix(c, col if d.text else col[~miss], miss, blockmix,
                          None if small is None else small[1])
        rowmix = None
        codes_of = {}               # the declared sensitive columns' codes (a record id's)
        for c, attr in self._declared.items():
            col = block[c].reset_index(drop=True)
            miss = missing_text(col.to_numpy(dtype=object), attr) if d.text else \
                col.isna().to_numpy()
            self._missing(c, miss, row0)
            try:
                if d.text:
                    col = cast_text(col, attr, c, d.file, row0=row0)
                token = d.drafts[c].missing
                if token is not None:
                    self._real_token(c, col, miss, token, row0)
                # missing cells without a token are counted over the whole
                # table and refused with the total (make_plan), as inferred
                # columns' are
                if not d.text and col.dtype == object:
                    self._note_kinds(c, pd.unique(col[~miss]))
                codes = encode_column(col, attr, row0=row0, skip_missing=True)
            except InputError as e:
                errors.append(e.in_file(d.file))
                continue
            if c in self.counts:
                self.counts[c] += np.bincount(codes[codes >= 0], minlength=attr.d)
            if self.id_values is not None and c in self.placed:
                codes_of[c] = codes
            if c in self.placed:
                if rowmix is None:                       # once a block, for every column
                    rowmix = row_mix(row0, len(codes))
                self.placed[c] = (self.placed[c] + placed_sum(codes, rowmix)) % (1 << 64)
        if errors:
            raise V.first_row_error(errors)
        rid = d.options.record_id
        if rid is not None:
            # missing ids are counted over the whole table and refused with
            # the total (make_plan), as missing cells are, on every path
            vals = block[rid].to_numpy(dtype=object)
            miss = missing_record_ids(vals, text=d.text)
            if miss.any():
                self.ids_missing += int(miss.sum())
                first = row0 + int(np.flatnonzero(miss)[0])
                self.first_id_missing = first if self.first_id_missing is None else \
                    min(first, self.first_id_missing)
            elif not self.ids_missing:
                self.ids.append(checked_record_hashes(vals, text=d.text, column=rid,
                                                      file=d.file, row0=row0))
                self.id_values.append(cell_codes(block, d.sensitive, codes_of))
        for c, parts in self.shared.items():
            parts.append(value_hashes(block[c], text=d.text))
        for c in self.placed_other:
            if rowmix is None:
                rowmix = row_mix(row0, len(block))
            self.placed_other[c] = (self.placed_other[c] + passthrough_placed(
                block[c], rowmix)) % (1 << 64)
        if self.passthrough is not None and set(d.passthrough_columns) <= set(block.columns):
            self.passthrough.add(block, row0)    # in memory; files and Dask read them apart
        if self.set_rows is not None:
            self.set_rows.add(block, row0, self.set_columns)
        self.n += len(block)
        return self

    def _note_kinds(self, c: str, values) -> None:
        """Booleans in one block and numbers in another (a Dask partition
        each) are refused as one block of both is (H95: True was counted as
        1, or refused in other words)."""
        self._add_kinds(c, V.value_kinds(values))

    def _add_kinds(self, c: str, kinds: set) -> None:
        mine = self.kinds.setdefault(c, set())
        mine |= kinds
        if {"bool", "number"} <= mine:
            raise V.bools_among_numbers(c, self.draft.file)

    def _mix(self, c: str, present: pd.Series, miss: np.ndarray, blockmix: np.ndarray,
             sums: np.ndarray | None = None) -> None:
        """Add a block's row mixes of column ``c`` per value (``present``: its
        cells that are not missing, in row order; ``sums``: their sums per
        small whole value, as :func:`small_whole` gives them) and of its
        missing cells."""
        mix = blockmix[~miss] if miss.any() else blockmix
        if sums is not None:
            # small whole numbers are their own codes: no hashing (the
            # factorization took a third of this on 20 M rows; a value absent
            # here adds 0, as a value absent from the domain adds nothing)
            uniq = np.arange(len(sums))
        else:
            codes, uniq = pd.factorize(present.reset_index(drop=True), use_na_sentinel=True)
            ok = codes >= 0
            sums = np.zeros(len(uniq), dtype=np.uint64)
            if ok.all():
                np.add.at(sums, codes, mix)
            else:
                np.add.at(sums, codes[ok], mix[ok])
        acc = self.seen_mix[c]
        for v, x in zip(uniq.tolist(), sums.tolist()):
            v = scalar(v)
            acc[v] = (acc.get(v, 0) + int(x)) % (1 << 64)
        if miss.any():
            na = int(blockmix[miss].sum(dtype=np.uint64))
            self.na_mix[c] = (self.na_mix[c] + na) % (1 << 64)

    def placed_of(self, c: str, index, token_code: int | None, typed=None) -> int:
        """An inferred column's :func:`placed_sum`, once its domain is known:
        ``index`` maps a value (as ``typed`` makes it of what ``seen`` holds)
        to its code, ``token_code`` is the missing token's."""
        total = 0
        for v, x in self.seen_mix[c].items():
            tv = typed(v) if typed is not None else v
            at = index.get(tv)
            if at is None:
                # no value of the domain (a text 'NAN' typed as a float NaN,
                # each its own object): the checks after the plan refuse it
                # as before (H27)
                continue
            total += (at + 1) * x
        if token_code is not None:
            total += (token_code + 1) * self.na_mix[c]
        return total % (1 << 64)

    def _missing(self, c: str, miss: np.ndarray, row0: int) -> None:
        k = int(miss.sum())
        if k:
            self.na[c] += k
            first = row0 + int(np.argmax(miss))
            self.first_na[c] = min(first, self.first_na.get(c, first))

    def _real_token(self, c: str, col: pd.Series, miss: np.ndarray, token: str,
                    row0: int) -> None:
        """Count the cells holding the missing-value token as a real value
        (refused with missing cells in the same column: make_plan)."""
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            return                          # no cell of it is text
        at = np.flatnonzero(~miss)
        real = np.flatnonzero(col.to_numpy(dtype=object)[at] == token)
        rows = at[real]
        if len(rows):
            self.real_token[c] = self.real_token.get(c, 0) + len(rows)
            first = row0 + int(rows[0])
            self.first_token[c] = min(first, self.first_token.get(c, first))

    def merge(self, other: "Stats") -> "Stats":
        self.n += other.n
        for c, k in other.real_token.items():
            self.real_token[c] = self.real_token.get(c, 0) + k
        for c, r in other.first_token.items():
            self.first_token[c] = min(r, self.first_token.get(c, r))
        for c, r in other.first_na.items():
            self.first_na[c] = min(r, self.first_na.get(c, r))
        for c, acc in self.seen.items():
            for v, k in other.seen[c].items():
                acc[v] = acc.get(v, 0) + k
            if len(acc) > V.MAX_DOMAIN:         # as one pass over the blocks finds
                raise V.domain_too_large(c, len(acc), file=self.draft.file, more=True)
        for c in self.na:
            self.na[c] += other.na[c]
        for c in self.counts:
            self.counts[c] += other.counts[c]
        for c in self.placed:
            self.placed[c] = (self.placed[c] + other.placed[c]) % (1 << 64)
        for c in self.placed_other:
            self.placed_other[c] = (self.placed_other[c] + other.placed_other[c]) % (1 << 64)
        for c, kinds in other.kinds.items():
            self._add_kinds(c, kinds)
        for c, acc in self.seen_mix.items():
            for v, x in other.seen_mix[c].items():
                acc[v] = (acc.get(v, 0) + x) % (1 << 64)
            self.na_mix[c] = (self.na_mix[c] + other.na_mix[c]) % (1 << 64)
        self.ids.extend(other.ids)
        if self.id_values is not None:
            self.id_values.extend(other.id_values)
        self.ids_missing += other.ids_missing
        if other.first_id_missing is not None:
            self.first_id_missing = other.first_id_missing if self.first_id_missing is None \
                else min(other.first_id_missing, self.first_id_missing)
        for c, parts in self.shared.items():
            parts.extend(other.shared[c])
        if self.passthrough is not None:
            self.passthrough.merge(other.passthrough)
        if self.set_rows is not None:
            self.set_rows.merge(other.set_rows)
        return self

    def shared_rows(self) -> dict:
        """:func:`shared_rows` of the identifiers (the record id included)."""
        cols = dict(self.shared)
        if self.draft.options.record_id is not None:
            cols[self.draft.options.record_id] = self.ids
        return {**(self.shared_counts or {}), **shared_rows(cols)}


def cell_codes(block: pd.DataFrame, columns, codes: dict) -> np.ndarray:
    """(rows, columns) uint16: each row's code of each column, where
    ``codes`` holds the column's (a declared domain, bins included: two ages
    in one bin are one value; codes < MAX_DOMAIN = 2^16, a missing cell's -1
    refused before they are compared), else a 16-bit hash of the cell as the
    path reads it (a column whose domain is read off the data, which a
    record id refuses)."""
    out = np.empty((len(block), len(columns)), np.uint16)
    for j, c in enumerate(columns):
        if c in codes:
            out[:, j] = np.asarray(codes[c], dtype=np.int64).astype(np.uint16)
        else:
            h = pd.util.hash_pandas_object(block[c].reset_index(drop=True),
                                           index=False).to_numpy()
            out[:, j] = (h >> np.uint64(48)).astype(np.uint16)
    return out


def _beyond(present: pd.Series, miss: np.ndarray, new: set, before: int, text: bool) -> int:
    """The row in its block (from 0) of the first value that takes a column
    beyond :data:`MAX_DOMAIN` distinct values: ``new`` the block's values
    the blocks before did not hold, ``before`` how many those held;
    ``present`` is the block's cells, its missing ones left out where
    ``text``."""
    codes, uniq = pd.factorize(present.reset_index(drop=True), use_na_sentinel=True)
    _, first = np.unique(codes, return_index=True)
    if codes.size and codes.min() < 0:                 # the NA sentinel's first row
        first = first[1:]
    need = V.MAX_DOMAIN + 1 - before                   # the need-th value new here
    fresh = [f for f, u in zip(first.tolist(), uniq.tolist()) if scalar(u) in new]
    at = sorted(fresh)[need - 1]
    return int(np.flatnonzero(~miss)[at]) if text else int(at)


def small_whole(present: pd.Series, mix: np.ndarray | None = None):
    """``(counts, sums)`` of a column of whole numbers (no missing cell among
    ``present``) that all lie in [0, 2^16), so that they are counted by their
    own value: ``counts[v]`` the cells equal to v and ``sums[v]`` the sum
    (mod 2^64) of their ``mix`` words (None without ``mix``); None for other
    types, an empty block or a value out of that range."""
    if present.dtype.kind not in "iu" or not len(present):
        return None
    from ..randomized import _kernels
    return _kernels.small_tally(present.to_numpy(), mix, 1 << 16)


def row_mix(row0: int, n: int) -> np.ndarray:
    """splitmix64 of the global row indices row0 .. row0 + n - 1, made odd
    (``passthrough._mix64``, in one pass)."""
    from ..randomized import _kernels
    return _kernels.row_mix(row0, n)


def placed_sum(codes: np.ndarray, rowmix: np.ndarray) -> int:
    """Sum (mod 2^64) of each row's :func:`row_mix` times its code + 1: the
    same for a table read whole, in blocks or in Dask partitions; a value
    moved to another row, or changed, changes it (an odd multiplier times a
    nonzero change of the code is nonzero mod 2^64 for any change below
    2^63), where counts do not.  One multiply and one sum a cell."""
    c = np.asarray(codes, dtype=np.int64).astype(np.uint64) + np.uint64(1)
    return int((rowmix * c).sum(dtype=np.uint64))


#: The columns whose cells, row by row, key a release that is not
#: persistent: the sensitive ones and the exact QIDs (H91: rows of one
#: sensitive value reordered, their QIDs not, drew the same sets in the same
#: order, which linked the people on those rows across the two releases).
KEYED_ROLES = ("sensitive", "exact")


def passthrough_placed(col: pd.Series, rowmix: np.ndarray) -> int:
    """:func:`placed_sum` of a pass-through column, over a hash of each
    cell's text as every path reads it alike (a whole number in decimal,
    booleans as 'True' and 'False', a missing cell as none: the text of
    :func:`anonset.io.keys.record_id_texts`), so that one table keys one
    release from memory, a CSV or a Parquet file and on Dask."""
    from ..io.keys import cell_text_hashes
    return int((rowmix * cell_text_hashes(col)).sum(dtype=np.uint64))


def data_digest(n: int, counts: dict, na: dict, placed: dict, published,
                other: dict | None = None) -> str:
    """What a release that is not persistent keys its draws by besides its
    key (sets and row order): the row count and, per sensitive column and
    exact QID (``KEYED_ROLES``), its value counts, missing cells and
    :func:`placed_sum`.  One key over one
    table reproduces its release; over another table (a later wave of the
    same people, rows changed) the draws are those of another key, so that
    a changed value is not shown as the difference of two sets drawn from
    the same words."""
    import hashlib
    h = hashlib.sha256(b"anonset.data.v1\x00" + int(n).to_bytes(8, "little"))
    # by name, not by the columns' places: one table, one release (H103)
    for a in sorted(published, key=lambda a: a.name):
        if a.role not in KEYED_ROLES:
            continue
        h.update(a.name.encode() + b"\x00")
        c = counts.get(a.name)
        if c is not None:
            h.update(np.ascontiguousarray(c, dtype=np.int64).tobytes())
        h.update(int(na.get(a.name, 0)).to_bytes(8, "little"))
        h.update(int(placed.get(a.name, 0)).to_bytes(8, "little"))
    for c in sorted(other or {}):          # pass-through columns (H96)
        h.update(b"other\x00" + c.encode() + b"\x00" + int(other[c]).to_bytes(8, "little"))
    return h.hexdigest()


def lacks_token_leaf(cd) -> bool:
    """A column whose hierarchy has no leaf for its missing-value token (one
    the caller did not list in its domain): the token can join it only if it
    has missing cells, and then the hierarchy must have that leaf."""
    return (cd.missing is not None and cd.hierarchy is not None
            and cd.missing not in set(cd.hierarchy.leaves)
            and (cd.domain is None or cd.missing not in cd.domain))


def missing_text(vals: np.ndarray, attr: Attribute | None = None) -> np.ndarray:
    """The CSV cells that stand for a missing value: empty, or a marker
    pandas reads as missing ('NA', 'null', ...), unless ``attr``'s declared
    domain holds that marker as a value (North America's 'NA')."""
    from ..io.tables import NA_MARKERS
    markers = NA_MARKERS
    if attr is not None and not attr.inferred:
        markers = NA_MARKERS - {v for v in attr.domain if isinstance(v, str)
                                and v != attr.missing}
    return np.fromiter((v is None or v in markers for v in vals), dtype=bool,
                       count=len(vals))


def domain_type(domain) -> str:
    vals = [v for v in domain]
    if vals and all(isinstance(v, (bool, np.bool_)) for v in vals):
        return "bool"
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return "int"
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return "float"
    return "str"


def _separator(file):
    """The field separator of the CSV ``file`` (for a conversion's advice)."""
    from ..io.tables import csv_separator
    return csv_separator(file)


def cast_text(col: pd.Series, attr: Attribute, name: str, file=None,
              row0: int = 0) -> pd.Series:
    """A text column typed like its attribute's domain; missing markers -> NA."""
    vals = col.to_numpy(dtype=object)
    miss = missing_text(vals, attr)
    kind = "float" if attr.bins is not None else domain_type(
        [v for v in attr.domain if v != attr.missing])
    if kind == "str":
        out = vals.copy()
        out[miss] = None
        return pd.Series(out, dtype=object)
    if kind == "bool":
        # a domain of booleans (a Parquet release's, declared in Python):
        # a CSV file's True and False, in any case, are they (H42: an audit
        # of a Parquet release refused the same table as CSV)
        from ..encode import BOOL_TEXT as spelled
        out = np.empty(len(vals), dtype=object)
        out[miss] = None
        for i in np.flatnonzero(~miss):
            v = vals[i]
            out[i] = spelled.get(v.strip().lower(), v) if isinstance(v, str) else v
        return pd.Series(out, dtype=object)
    num = np.full(len(vals), np.nan)
    good = ~miss
    try:
        num[good] = np.array(vals[good], dtype=np.float64)
    except ValueError:
        i = next(i for i in np.flatnonzero(good) if not V.reads_as_number(vals[i]))
        bad = vals[i]
        raise InputError(f"holds the text {bad!r} at {V.row_name(row0 + int(i))}, but its "
                         "domain is numeric", column=name, file=file, row=row0 + int(i),
                         expected=numbers_expected(bad, _separator(file))) from None
    return pd.Series(num)

