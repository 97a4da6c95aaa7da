# cython: language_level=3
"""Thin nogil wrappers over the C kernels in csrc/ (rng, sample, counts, em).

Validation of user input happens in the Python modules that call these; the
wrappers only check what the C code would otherwise trust (shapes, dtypes) and
translate status codes into exceptions.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free

cnp.import_array()

cdef extern from "anonset_common.h":
    void anonset_mark_fork_child() nogil
    int ANONSET_OK
    int ANONSET_ERR_NOMEM
    int ANONSET_ERR_VALUE
    int ANONSET_ERR_SETSIZE
    int ANONSET_HAVE_OPENMP
    int anonset_threads(int n_threads) nogil

cdef extern from "rng.h":
    ctypedef struct anonset_key:
        uint32_t key[8]
        int kind
    void anonset_block(const anonset_key *k, uint64_t counter, uint32_t stream,
                       uint32_t sub, uint32_t *out) nogil
    void anonset_philox4x64(const uint64_t *ctr, const uint64_t *key, uint64_t *out) nogil
    void anonset_fill(const anonset_key *k, uint64_t counter0, uint32_t stream,
                      uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads) nogil
    int anonset_simd_level() nogil
    void anonset_fill_simd(const anonset_key *k, uint64_t counter0, uint32_t stream,
                           uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads,
                           int level) nogil
    void anonset_blocks_at_simd(const anonset_key *k, const uint64_t *counters, uint32_t stream,
                                uint32_t sub, int64_t nblocks, uint32_t *out, int level) nogil

cdef extern from "order.h":
    void anonset_rank_words(const anonset_key *k, uint64_t counter0, uint32_t stream,
                            uint32_t sub, int64_t n, uint64_t *out, int n_threads,
                            int level) nogil
    int anonset_rank_order(const uint64_t *keys, int64_t n, int64_t *perm) nogil

cdef extern from "tally.h":
    void anonset_row_mix(uint64_t row0, int64_t n, uint64_t *out) nogil
    int64_t anonset_small_tally(const void *vals, int width, int is_signed, int64_t n,
                                int64_t cap, const uint64_t *mix, int64_t *counts,
                                uint64_t *sums) nogil

cdef extern from "lookup.h":
    int64_t anonset_lut_codes(const void *vals, int width, int is_signed, int64_t n, int64_t lo,
                              const int32_t *table, int64_t len, int32_t *codes) nogil

cdef extern from "sample.h":
    int ANONSET_MAX_DOMAIN
    int anonset_sample_sets(const anonset_key *key, int64_t n, int64_t row0, int q,
                            const int32_t *const *codes, const int32_t *d,
                            const int32_t *eta, const uint64_t *coin,
                            const int32_t *exact, const int32_t *attr_id,
                            const uint64_t *const *counters,
                            uint64_t *const *out, int n_threads) nogil

cdef extern from "counts.h":
    int anonset_count_w(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                        int64_t max_set, int64_t ncells, int64_t *w, int n_threads) nogil
    int anonset_count_w_method(int64_t n, int q, const uint64_t *const *masks,
                               const int32_t *d, int64_t max_set, int64_t ncells, int64_t *w,
                               int n_threads, int method) nogil
    int anonset_members(int64_t n, int32_t d, const uint64_t *mask, int32_t k,
                        int32_t *members, int n_threads) nogil

cdef extern from "em.h":
    ctypedef struct anonset_em_report:
        int64_t iters
        double change
        double moved
        double loglik
        double loglik_prev
        double gain
        double sum_w
        int stop
    int anonset_em_run(int q, const int32_t *dims, const double *const *mats,
                       const double *a, const double *b, const double *w,
                       double *x, double *scratch, int64_t max_iter, double tol, double tol_ll,
                       int64_t ll_every, anonset_em_report *rep, int n_threads, int simd) nogil
    double anonset_em_log(double v) nogil
    int anonset_em_threads(int64_t ncells, int n_threads) nogil
    int anonset_em_kron(int q, const int32_t *dims, const double *const *mats,
                        const double *a, const double *b, const double *w,
                        double *x, double *scratch, int64_t max_iter, double tol,
                        int64_t *iters, double *change, int n_threads) nogil
    int anonset_kron_apply(int q, const int32_t *dims, const double *const *mats,
                           const double *a, const double *b, const double *x,
                           double *y, double *scratch, int transpose, int n_threads) nogil

cdef extern from "exact.h":
    int anonset_exact_trie(int64_t U, int q, const int32_t *dims, const uint64_t *const *masks,
                           const int32_t *const *members, const int32_t *k,
                           const double *u, const double *weight, const double *pi, double *G,
                           double *loglik, int nchunk, int check_order, int n_threads) nogil
    int anonset_exact_estep(int64_t U, int q, const int32_t *dims,
                            const int32_t *const *members, const int32_t *k,
                            const double *weight, int nsub, const int32_t *sub,
                            const double *coef, const double *const *marg,
                            const int64_t *msize, double *const *acc, double *loglik,
                            int nchunk, int n_threads) nogil

MAX_DOMAIN = ANONSET_MAX_DOMAIN
RNG_KINDS = {"chacha20": 0, "philox": 1}


def openmp_enabled():
    """Whether the kernels were compiled with OpenMP."""
    return bool(ANONSET_HAVE_OPENMP)


def effective_threads(int n_threads=0):
    """Threads a kernel uses when asked for n_threads (0 = OpenMP default)."""
    return anonset_threads(n_threads)


cdef void _check(int status, str what) except *:
    if status == ANONSET_OK:
        return
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError(f"{what}: out of memory")
    if status == ANONSET_ERR_SETSIZE:
        raise ValueError(f"{what}: a published set has an unexpected number of members")
    raise ValueError(f"{what}: a value is outside its domain or a size is invalid")


#: Largest cell count a count or EM kernel accepts: the int64 index arithmetic
#: of the kernels (cell offsets, strides) must not overflow.
MAX_CELLS = 1 << 48


def _cells(dims, what):
    """Product of dims as a Python int; each dim must be >= 1."""
    out = 1
    for j, v in enumerate(dims):
        if v < 1:
            raise ValueError(f"{what}: dimension {j} is {v}; every dimension must be >= 1")
        out *= int(v)
    if out > MAX_CELLS:
        raise MemoryError(f"{what}: {out} cells exceed the kernels' limit of {MAX_CELLS}")
    return out


def _check_mask_bits(m, int64_t d, what):
    """No bit at or above d in the last word: the kernels turn bit positions
    into cell offsets, and a stray bit would address memory outside the table.
    (One pass in C: an OR of the last words, no temporary arrays.)"""
    cdef int rem = d & 63
    if not rem or m.shape[0] == 0:
        return
    cdef const uint64_t[:, :] v = m
    cdef Py_ssize_t i, n = v.shape[0], last = v.shape[1] - 1
    cdef uint64_t acc = 0
    with nogil:
        for i in range(n):
            acc |= v[i, last]
    if acc >> rem:
        raise ValueError(f"{what}: a set holds a value >= d = {d} (a bit outside the domain)")


cdef void _make_key(anonset_key *k, bytes key, str kind) except *:
    if len(key) != 32:
        raise ValueError("key must be 32 bytes")
    if kind not in RNG_KINDS:
        raise ValueError(f"rng must be one of {sorted(RNG_KINDS)}, got {kind!r}")
    words = np.frombuffer(key, dtype="<u4")
    for i in range(8):
        k.key[i] = <uint32_t>words[i]
    k.kind = RNG_KINDS[kind]


def block(bytes key, uint64_t counter, uint32_t stream, uint32_t sub, str rng="chacha20"):
    """One 16-word block of the generator (for known-answer tests)."""
    cdef anonset_key k
    _make_key(&k, key, rng)
    cdef cnp.ndarray out = np.empty(16, dtype=np.uint32)
    anonset_block(&k, counter, stream, sub, <uint32_t *>out.data)
    return out


#: SIMD levels of the block function (anonset_common.h), lowest first.
SIMD_LEVELS = ("generic", "avx2", "avx512")


def simd_level():
    """The SIMD level the kernels use on this CPU (one of SIMD_LEVELS)."""
    return SIMD_LEVELS[anonset_simd_level()]


def fill(bytes key, uint64_t counter0, uint32_t stream, uint32_t sub, int64_t nblocks,
         str rng="chacha20", int n_threads=0, str simd="auto"):
    """nblocks consecutive blocks (counters counter0, counter0 + 1, ...).

    simd: 'auto' (the CPU's level) or a level of SIMD_LEVELS up to the CPU's,
    to check that every code path gives the same bytes."""
    cdef anonset_key k
    _make_key(&k, key, rng)
    cdef int level = anonset_simd_level()
    if simd != "auto":
        if simd not in SIMD_LEVELS or SIMD_LEVELS.index(simd) > level:
            raise ValueError(f"simd must be 'auto' or one of {SIMD_LEVELS[:level + 1]}, got {simd!r}")
        level = SIMD_LEVELS.index(simd)
    if nblocks < 0:
        raise ValueError(f"nblocks must be >= 0, got {nblocks}")
    cdef cnp.ndarray out = np.empty(16 * nblocks, dtype=np.uint32)
    with nogil:
        anonset_fill_simd(&k, counter0, stream, sub, nblocks, <uint32_t *>out.data, n_threads,
                          level)
    return out


def blocks_at(bytes key, counters, uint32_t stream, uint32_t sub, str rng="chacha20",
              str simd="auto"):
    """One block per counter of counters (any order, repeats allowed), as
    the sampler's retries of rejected draws compute them; simd as in fill."""
    cdef anonset_key k
    _make_key(&k, key, rng)
    cdef int level = anonset_simd_level()
    if simd != "auto":
        if simd not in SIMD_LEVELS or SIMD_LEVELS.index(simd) > level:
            raise ValueError(f"simd must be 'auto' or one of {SIMD_LEVELS[:level + 1]}, got {simd!r}")
        level = SIMD_LEVELS.index(simd)
    cdef cnp.ndarray c = np.ascontiguousarray(counters, dtype=np.uint64)
    cdef int64_t n = c.shape[0]
    cdef cnp.ndarray out = np.empty(16 * n, dtype=np.uint32)
    with nogil:
        anonset_blocks_at_simd(&k, <const uint64_t *>c.data, stream, sub, n,
                               <uint32_t *>out.data, level)
    return out


def rank_words(bytes key, uint64_t counter0, uint32_t stream, uint32_t sub, int64_t n,
               str rng="chacha20", int n_threads=0):
    """The first 64 bits of each of n consecutive blocks (row ranks):
    ``fill(...).reshape(n, 16)[:, :2]`` read as little-endian uint64."""
    cdef anonset_key k
    _make_key(&k, key, rng)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    cdef cnp.ndarray out = np.empty(n, dtype=np.uint64)
    cdef int level = anonset_simd_level()
    with nogil:
        anonset_rank_words(&k, counter0, stream, sub, n, <uint64_t *>out.data, n_threads, level)
    return out


def rank_order(ranks):
    """Positions sorting uint64 keys ascending, ties in position order
    (``np.argsort(ranks, kind='stable')``, by an O(n) radix sort)."""
    cdef cnp.ndarray r = np.ascontiguousarray(ranks, dtype=np.uint64)
    cdef int64_t n = r.shape[0]
    cdef cnp.ndarray out = np.empty(n, dtype=np.int64)
    cdef int st
    with nogil:
        st = anonset_rank_order(<const uint64_t *>r.data, n, <int64_t *>out.data)
    if st != ANONSET_OK:
        raise MemoryError("rank_order: out of memory")
    return out


def row_mix(uint64_t row0, int64_t n):
    """splitmix64's finalizer of the row indices row0 .. row0 + n - 1 (mod
    2^64), made odd."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    cdef cnp.ndarray out = np.empty(n, dtype=np.uint64)
    with nogil:
        anonset_row_mix(row0, n, <uint64_t *>out.data)
    return out


def small_tally(vals, mix=None, int64_t cap=1 << 16):
    """(counts, sums) of an integer array whose values all lie in [0, cap):
    ``counts = np.bincount(vals)`` and, with ``mix`` (uint64, one word a
    cell), ``sums[v]`` the sum mod 2^64 of ``mix`` over the cells equal to
    v (sums is None without mix); None when a value lies outside, or vals
    is empty or not of an integer type."""
    cdef cnp.ndarray v = np.asarray(vals)
    if v.dtype.kind not in "iu" or v.ndim != 1 or v.shape[0] == 0 or cap < 1:
        return None
    v = np.ascontiguousarray(v)
    cdef int64_t n = v.shape[0]
    cdef cnp.ndarray m = None
    cdef const uint64_t *mp = NULL
    if mix is not None:
        m = np.ascontiguousarray(mix, dtype=np.uint64)
        if m.ndim != 1 or m.shape[0] != n:
            raise ValueError("mix must hold one word per value")
        mp = <const uint64_t *>m.data
    cdef cnp.ndarray counts = np.empty(cap, dtype=np.int64)
    cdef cnp.ndarray sums = np.empty(cap if mix is not None else 1, dtype=np.uint64)
    cdef int width = v.dtype.itemsize
    cdef int signed = v.dtype.kind == "i"
    cdef int64_t top
    with nogil:
        top = anonset_small_tally(<const void *>v.data, width, signed, n, cap, mp,
                                  <int64_t *>counts.data, <uint64_t *>sums.data)
    if top < 0:
        return None
    return counts[:top + 1].copy(), (sums[:top + 1].copy() if mix is not None else None)


def lut_codes(vals, int64_t lo, table):
    """(codes, none): ``codes[i] = table[vals[i] - lo]`` (int32) where
    ``lo <= vals[i] < lo + len(table)``, else -1, and the number of codes
    -1; vals an integer array."""
    cdef cnp.ndarray v = np.ascontiguousarray(vals)
    if v.dtype.kind not in "iu" or v.ndim != 1:
        raise ValueError("lut_codes: vals must be a 1-d integer array")
    cdef cnp.ndarray t = np.ascontiguousarray(table, dtype=np.int32)
    cdef int64_t n = v.shape[0]
    cdef cnp.ndarray codes = np.empty(n, dtype=np.int32)
    cdef int width = v.dtype.itemsize
    cdef int signed = v.dtype.kind == "i"
    cdef int64_t none
    with nogil:
        none = anonset_lut_codes(<const void *>v.data, width, signed, n, lo,
                                    <const int32_t *>t.data, t.shape[0], <int32_t *>codes.data)
    return codes, int(none)


def philox4x64(ctr, key):
    """Philox4x64-10 of a 4-word counter under a 2-word key (known answers)."""
    cdef cnp.ndarray c = np.ascontiguousarray(ctr, dtype=np.uint64)
    cdef cnp.ndarray kk = np.ascontiguousarray(key, dtype=np.uint64)
    cdef cnp.ndarray out = np.empty(4, dtype=np.uint64)
    if c.shape[0] != 4 or kk.shape[0] != 2:
        raise ValueError("philox4x64 needs a 4-word counter and a 2-word key")
    anonset_philox4x64(<uint64_t *>c.data, <uint64_t *>kk.data, <uint64_t *>out.data)
    return out


def sample_sets(bytes key, str rng, list codes, d, eta, coin, exact, attr_id,
                int64_t row0=0, int n_threads=0, list counters=None, list out=None):
    """Random sets as bitmasks; returns one uint64 array (n, words_j) per column.

    codes: list of int32 arrays of equal length; d, eta, exact, attr_id: int
    sequences; coin: uint64 thresholds in [0, 2**32]; counters: None, or one
    entry per column, None (counter = global row) or n uint64 counters
    (persistent-key mode); out: None, or one C-contiguous uint64 array of
    shape (n, words_j) per column to write into (reused buffers skip the
    page faults of fresh memory).
    """
    cdef anonset_key k
    _make_key(&k, key, rng)
    cdef int q = len(codes)
    cdef int j
    cdef int64_t n = len(codes[0]) if q else 0
    cdef cnp.ndarray d_a = np.ascontiguousarray(d, dtype=np.int32)
    cdef cnp.ndarray eta_a = np.ascontiguousarray(eta, dtype=np.int32)
    cdef cnp.ndarray coin_a = np.ascontiguousarray(coin, dtype=np.uint64)
    cdef cnp.ndarray ex_a = np.ascontiguousarray(exact, dtype=np.int32)
    cdef cnp.ndarray id_a = np.ascontiguousarray(attr_id, dtype=np.int32)
    for arr, name in ((d_a, "d"), (eta_a, "eta"), (coin_a, "coin"), (ex_a, "exact"), (id_a, "attr_id")):
        if arr.shape[0] != q:
            raise ValueError(f"{name} must have one entry per column ({q}), got {arr.shape[0]}")
    cols = [np.ascontiguousarray(c, dtype=np.int32) for c in codes]
    outs = []
    if out is not None and len(out) != q:
        raise ValueError(f"out must have one array per column ({q})")
    for j in range(q):
        if cols[j].ndim != 1 or cols[j].shape[0] != n:
            raise ValueError("codes must be 1-d arrays, all of the same length")
        shape = (n, (d_a[j] + 63) // 64)
        if out is None:
            outs.append(np.empty(shape, dtype=np.uint64))
        else:
            o = out[j]
            if (not isinstance(o, np.ndarray) or o.dtype != np.uint64 or o.shape != shape
                    or not o.flags.c_contiguous or not o.flags.writeable):
                raise ValueError(f"out[{j}] must be a writable C-contiguous uint64 array "
                                 f"of shape {shape}")
            outs.append(o)
    ctrs = None
    if counters is not None:
        if len(counters) != q:
            raise ValueError(f"counters must have one entry per column ({q})")
        ctrs = [None if c is None else np.ascontiguousarray(c, dtype=np.uint64) for c in counters]
        for c in ctrs:
            if c is not None and (c.ndim != 1 or c.shape[0] != n):
                raise ValueError("counters must be 1-d arrays of one counter per row")
    cdef const int32_t **cp = <const int32_t **>malloc(max(q, 1) * sizeof(int32_t *))
    cdef uint64_t **op = <uint64_t **>malloc(max(q, 1) * sizeof(uint64_t *))
    cdef const uint64_t **ctp = NULL
    cdef cnp.ndarray tmp
    cdef int status
    if cp == NULL or op == NULL:
        free(cp); free(op)
        raise MemoryError()
    try:
        if ctrs is not None:
            ctp = <const uint64_t **>malloc(max(q, 1) * sizeof(uint64_t *))
            if ctp == NULL:
                raise MemoryError()
        for j in range(q):
            tmp = cols[j]
            cp[j] = <const int32_t *>tmp.data
            tmp = outs[j]
            op[j] = <uint64_t *>tmp.data
            if ctp != NULL:
                if ctrs[j] is None:
                    ctp[j] = NULL
                else:
                    tmp = ctrs[j]
                    ctp[j] = <const uint64_t *>tmp.data
        with nogil:
            status = anonset_sample_sets(&k, n, row0, q, cp, <int32_t *>d_a.data,
                                         <int32_t *>eta_a.data, <uint64_t *>coin_a.data,
                                         <int32_t *>ex_a.data, <int32_t *>id_a.data,
                                         ctp, op, n_threads)
        _check(status, "sample_sets")
    finally:
        free(cp); free(op); free(ctp)
    return outs


COUNT_METHODS = ("auto", "direct", "factorized")


def count_w(list masks, d, int64_t max_set, int n_threads=0, str method="auto"):
    """w of eq. 17 over the given bitmask columns, as an int64 array of shape d.

    method: 'auto' (by cost), 'direct' or 'factorized' (where an attribute has
    at most 16 values); all give the same w."""
    if method not in COUNT_METHODS:
        raise ValueError(f"count_w: method must be one of {COUNT_METHODS}, got {method!r}")
    cdef int meth = COUNT_METHODS.index(method)
    cdef int q = len(masks)
    if q < 1:
        raise ValueError("count_w needs at least one attribute")
    if q > 32:
        raise ValueError(f"count_w: at most 32 attributes, got {q}")
    cdef cnp.ndarray d_a = np.ascontiguousarray(d, dtype=np.int32)
    if d_a.ndim != 1 or d_a.shape[0] != q:
        raise ValueError(f"count_w: d must give one domain size per mask ({q})")
    shape = tuple(int(x) for x in d_a)
    cdef int64_t ncells = _cells(shape, "count_w")
    if max_set < 1:
        raise ValueError(f"count_w: max_set must be >= 1, got {max_set}")
    cols = [np.ascontiguousarray(m, dtype=np.uint64) for m in masks]
    for jj in range(q):
        if cols[jj].ndim == 1:
            cols[jj] = cols[jj].reshape(-1, 1)
        if cols[jj].ndim != 2:
            raise ValueError(f"mask {jj} must be 2-d (rows, words)")
    cdef int64_t n = cols[0].shape[0]
    cdef cnp.ndarray w = np.zeros(ncells, dtype=np.int64)
    cdef const uint64_t **mp = <const uint64_t **>malloc(q * sizeof(uint64_t *))
    cdef cnp.ndarray tmp
    cdef int status, j
    if mp == NULL:
        raise MemoryError()
    try:
        for j in range(q):
            tmp = cols[j]
            if tmp.shape[0] != n or tmp.size != n * ((d_a[j] + 63) // 64):
                raise ValueError(f"mask {j} has shape {cols[j].shape}, expected ({n}, {(d_a[j] + 63) // 64})")
            _check_mask_bits(tmp, d_a[j], f"count_w: mask {j}")
            mp[j] = <const uint64_t *>tmp.data
        with nogil:
            status = anonset_count_w_method(n, q, mp, <int32_t *>d_a.data, max_set, ncells,
                                            <int64_t *>w.data, n_threads, meth)
        _check(status, "count_w")
    finally:
        free(mp)
    return w.reshape(shape)


def members(mask, int32_t d, int32_t k, int n_threads=0):
    """(n, k) int32 array of the members of each row's set (ascending)."""
    cdef cnp.ndarray m = np.ascontiguousarray(mask, dtype=np.uint64)
    if d < 1 or k < 0:
        raise ValueError(f"members: need d >= 1 and k >= 0, got d = {d}, k = {k}")
    if m.ndim == 1:
        m = m.reshape(-1, 1)
    cdef int64_t n = m.shape[0]
    if m.ndim != 2 or m.shape[1] != (d + 63) // 64:
        raise ValueError("mask shape does not match d")
    _check_mask_bits(m, d, "members")
    cdef cnp.ndarray out = np.empty((n, k), dtype=np.int32)
    cdef int status
    with nogil:
        status = anonset_members(n, d, <uint64_t *>m.data, k, <int32_t *>out.data, n_threads)
    _check(status, "members")
    return out


cdef class _Mats:
    """Holds per-attribute (a, b) or dense matrices as C arrays."""
    cdef const double **ptr
    cdef object keep
    cdef cnp.ndarray a, b
    cdef int q

    def __cinit__(self, list mats, a, b):
        self.q = len(mats)
        self.a = np.ascontiguousarray(a, dtype=np.float64)
        self.b = np.ascontiguousarray(b, dtype=np.float64)
        self.keep = [None if m is None else np.ascontiguousarray(m, dtype=np.float64) for m in mats]
        self.ptr = <const double **>malloc(max(self.q, 1) * sizeof(double *))
        if self.ptr == NULL:
            raise MemoryError()
        cdef cnp.ndarray tmp
        for j in range(self.q):
            if self.keep[j] is None:
                self.ptr[j] = NULL
            else:
                tmp = self.keep[j]
                self.ptr[j] = <const double *>tmp.data

    def __dealloc__(self):
        free(self.ptr)


def _shape_check(dims, mats, a, b):
    q = len(dims)
    if q < 1:
        raise ValueError("at least one attribute (dimension) is required")
    _cells(dims, "dims")
    if len(mats) != q or len(a) != q or len(b) != q:
        raise ValueError("one matrix (or a, b pair) per attribute is required")
    for j, m in enumerate(mats):
        if m is not None and np.shape(m) != (dims[j], dims[j]):
            raise ValueError(f"matrix {j} must be {dims[j]} x {dims[j]}, got {np.shape(m)}")


def kron_apply(x, dims, mats, a, b, bint transpose=False, int n_threads=0):
    """(kron_j M_j) @ x, or with transposed factors; x in C order of shape dims."""
    dims = [int(v) for v in dims]
    _shape_check(dims, mats, a, b)
    cdef cnp.ndarray d_a = np.asarray(dims, dtype=np.int32)
    cdef cnp.ndarray xx = np.ascontiguousarray(x, dtype=np.float64).ravel()
    cdef int64_t n = int(np.prod(dims, dtype=np.int64))
    if xx.shape[0] != n:
        raise ValueError(f"x has {xx.shape[0]} cells, expected {n}")
    cdef cnp.ndarray y = np.empty(n, dtype=np.float64)
    cdef cnp.ndarray s = np.empty(n, dtype=np.float64)
    cdef _Mats M = _Mats(list(mats), a, b)
    cdef int q = len(dims)
    with nogil:
        anonset_kron_apply(q, <int32_t *>d_a.data, M.ptr, <double *>M.a.data, <double *>M.b.data,
                           <double *>xx.data, <double *>y.data, <double *>s.data, transpose, n_threads)
    return y.reshape(dims)


def em_kron(w, x0, dims, mats, a, b, int64_t max_iter, double tol, int n_threads=0,
            double tol_ll=0.0, int64_t ll_every=0, bint report=False, str simd="auto",
            scratch=None):
    """Iterate eq. 26 from x0; returns (x, iterations, last max change), or
    with report=True (x, dict) where the dict holds iterations, change (largest
    cell change of the last iteration), moved (sum of the changes), loglik
    (the Poisson log-likelihood, computed every ll_every iterations),
    loglik_prev and gain (see em.h).  tol_ll > 0 also stops on a gain per
    iteration and unit of w <= tol_ll;
    simd 'auto', or 'generic' / 'avx2' to check that every path gives the
    same bits.  scratch: None or a float64 array of 3 x cells to work in
    (reused across calls by iterative drivers: fresh pages cost faults)."""
    dims = [int(v) for v in dims]
    _shape_check(dims, mats, a, b)
    cdef int level = -1
    if simd != "auto":
        if simd not in ("generic", "avx2"):
            raise ValueError(f"simd must be 'auto', 'generic' or 'avx2', got {simd!r}")
        level = SIMD_LEVELS.index(simd)
    if max_iter < 0 or ll_every < 0:
        raise ValueError(f"max_iter and ll_every must be >= 0, got {max_iter}, {ll_every}")
    cdef cnp.ndarray d_a = np.asarray(dims, dtype=np.int32)
    cdef int64_t n = int(np.prod(dims, dtype=np.int64))
    cdef cnp.ndarray ww = np.ascontiguousarray(w, dtype=np.float64).ravel()
    cdef cnp.ndarray x = np.array(x0, dtype=np.float64, order="C").ravel()
    if ww.shape[0] != n or x.shape[0] != n:
        raise ValueError(f"w and x0 must have {n} cells")
    cdef cnp.ndarray s
    if scratch is None:
        s = np.empty(3 * n, dtype=np.float64)
    else:
        s = scratch
        if s.dtype != np.float64 or not s.flags.c_contiguous or s.size < 3 * n \
                or not s.flags.writeable:
            raise ValueError(f"scratch must be a writable contiguous float64 array of >= {3 * n} values")
    cdef _Mats M = _Mats(list(mats), a, b)
    cdef anonset_em_report rep
    cdef int q = len(dims)
    cdef int status
    with nogil:
        status = anonset_em_run(q, <int32_t *>d_a.data, M.ptr, <double *>M.a.data,
                                <double *>M.b.data, <double *>ww.data, <double *>x.data,
                                <double *>s.data, max_iter, tol, tol_ll, ll_every, &rep,
                                n_threads, level)
    _check(status, "em_kron")
    if not report:
        return x.reshape(dims), int(rep.iters), float(rep.change)
    return x.reshape(dims), {"iterations": int(rep.iters), "change": float(rep.change),
                             "moved": float(rep.moved), "loglik": float(rep.loglik),
                             "loglik_prev": float(rep.loglik_prev), "gain": float(rep.gain),
                             "sum_w": float(rep.sum_w)}


def em_log(double v):
    """The log the EM kernel uses for the log-likelihood (tests)."""
    return anonset_em_log(v)


def em_threads(int64_t ncells, int n_threads=0):
    """Threads the EM kernels use for a table of ncells cells."""
    return anonset_em_threads(ncells, n_threads)


def exact_estep(list members, dims, weight, list subsets, coef, list margs,
                int nchunk, int n_threads=0):
    """One E-step of the exact-likelihood EM; returns (list of accumulators, loglik)."""
    cdef int q = len(members)
    cdef int nsub = len(subsets)
    cdef int s, j
    # the kernel trusts every index: check them all here (O(U * sum k), small
    # next to the E-step's O(U * sum_S prod k))
    if not 1 <= q <= 30:
        raise ValueError(f"exact_estep: 1 to 30 attributes, got {q}")
    cdef cnp.ndarray d_a = np.ascontiguousarray(dims, dtype=np.int32)
    if d_a.ndim != 1 or d_a.shape[0] != q:
        raise ValueError(f"exact_estep: dims must give one size per attribute ({q})")
    _cells(d_a.tolist(), "exact_estep")
    cdef cnp.ndarray wt = np.ascontiguousarray(weight, dtype=np.float64)
    if wt.ndim != 1:
        raise ValueError("exact_estep: weight must be 1-d")
    cdef int64_t U = wt.shape[0]
    mem = [np.ascontiguousarray(m, dtype=np.int32) for m in members]
    for j, m in enumerate(mem):
        if m.ndim != 2 or m.shape[0] != U or m.shape[1] < 1:
            raise ValueError("every member matrix needs one row per pattern and >= 1 column")
        if m.size and (m.min() < 0 or m.max() >= d_a[j]):
            raise ValueError(f"exact_estep: members of attribute {j} outside [0, {d_a[j]})")
    cdef cnp.ndarray k_a = np.asarray([m.shape[1] for m in mem], dtype=np.int32)
    cdef cnp.ndarray sub_a = np.ascontiguousarray(subsets, dtype=np.int32)
    cdef cnp.ndarray coef_a = np.ascontiguousarray(coef, dtype=np.float64)
    if nsub < 1 or sub_a.ndim != 1 or coef_a.ndim != 1 or coef_a.shape[0] != nsub \
            or len(margs) != nsub:
        raise ValueError("exact_estep: one coefficient and one marginal per subset (>= 1)")
    if sub_a.min() < 0 or sub_a.max() >= (1 << q):
        raise ValueError(f"exact_estep: subsets must be bit sets of the {q} attributes")
    if nchunk < 1:
        raise ValueError(f"exact_estep: nchunk must be >= 1, got {nchunk}")
    mg = [np.ascontiguousarray(m, dtype=np.float64).ravel() for m in margs]
    for s in range(nsub):
        size = 1
        for j in range(q):
            if (sub_a[s] >> j) & 1:
                size *= int(d_a[j])
        if mg[s].shape[0] != size:
            raise ValueError(f"exact_estep: marginal {s} has {mg[s].shape[0]} cells, expected {size}")
    cdef cnp.ndarray msize = np.asarray([m.shape[0] for m in mg], dtype=np.int64)
    accs = [np.empty_like(m) for m in mg]
    cdef const int32_t **mp = <const int32_t **>malloc(q * sizeof(int32_t *))
    cdef const double **gp = <const double **>malloc(nsub * sizeof(double *))
    cdef double **ap = <double **>malloc(nsub * sizeof(double *))
    cdef cnp.ndarray tmp
    cdef double ll = 0.0
    cdef int status
    if mp == NULL or gp == NULL or ap == NULL:
        free(mp); free(gp); free(ap)
        raise MemoryError()
    try:
        for j in range(q):
            tmp = mem[j]
            mp[j] = <const int32_t *>tmp.data
        for s in range(nsub):
            tmp = mg[s]
            gp[s] = <const double *>tmp.data
            tmp = accs[s]
            ap[s] = <double *>tmp.data
        with nogil:
            status = anonset_exact_estep(U, q, <int32_t *>d_a.data, mp, <int32_t *>k_a.data,
                                         <double *>wt.data, nsub, <int32_t *>sub_a.data,
                                         <double *>coef_a.data, gp, <int64_t *>msize.data,
                                         ap, &ll, nchunk, n_threads)
        _check(status, "exact_estep")
    finally:
        free(mp); free(gp); free(ap)
    return accs, float(ll)


def exact_trie(list masks, dims, u, weight, pi, int nchunk=1, int n_threads=0,
               members=None, bint check_order=True):
    """The exact EM's E-step by prefix-trie contraction (exact.h): returns
    (G, loglik) for tuples masks[j] (U x words), distinct and sorted by their
    bytes (attribute 0 first).  ``members``: None, or per attribute None or
    the (U, k) int32 members of masks[j]'s sets in ascending order
    (``members(masks[j], d, k)``), read instead of the words (the same sums,
    faster where a few values span many words).  ``check_order``: check the
    order pair by pair (one pass; False leaves only the trie's own checks,
    for the later updates of an EM whose tuples were checked once)."""
    cdef int q = len(masks)
    if not 1 <= q <= 30:
        raise ValueError(f"exact_trie: 1 to 30 attributes, got {q}")
    cdef cnp.ndarray d_a = np.ascontiguousarray(dims, dtype=np.int32)
    if d_a.ndim != 1 or d_a.shape[0] != q:
        raise ValueError(f"exact_trie: dims must give one size per attribute ({q})")
    shape = tuple(int(x) for x in d_a)
    cdef int64_t ncells = _cells(shape, "exact_trie")
    cdef cnp.ndarray wt = np.ascontiguousarray(weight, dtype=np.float64)
    cdef int64_t U = wt.shape[0]
    cdef cnp.ndarray u_a = np.ascontiguousarray(u, dtype=np.float64)
    cdef cnp.ndarray p_a = np.ascontiguousarray(pi, dtype=np.float64).ravel()
    if wt.ndim != 1 or u_a.shape[0] != q or p_a.shape[0] != ncells:
        raise ValueError("exact_trie: weight must be 1-d, u one value per attribute, "
                         f"pi {ncells} cells")
    if nchunk < 1:
        raise ValueError(f"exact_trie: nchunk must be >= 1, got {nchunk}")
    cdef int status, j
    cols = [np.ascontiguousarray(m, dtype=np.uint64) for m in masks]
    for j in range(q):
        if cols[j].ndim == 1:
            cols[j] = cols[j].reshape(-1, 1)
        if cols[j].shape != (U, (d_a[j] + 63) // 64):
            raise ValueError(f"exact_trie: masks[{j}] must be ({U}, {(d_a[j] + 63) // 64})")
        _check_mask_bits(cols[j], d_a[j], f"exact_trie: masks[{j}]")
    if members is None:
        members = [None] * q
    if len(members) != q:
        raise ValueError(f"exact_trie: members must give one entry per attribute ({q})")
    mems = [None if m is None else np.ascontiguousarray(m, dtype=np.int32) for m in members]
    cdef cnp.ndarray k_a = np.zeros(q, dtype=np.int32)
    for j in range(q):
        if mems[j] is None:
            continue
        if mems[j].ndim != 2 or mems[j].shape[0] != U:
            raise ValueError(f"exact_trie: members[{j}] must be ({U}, k)")
        # the kernel turns members into cell offsets: each must lie in the domain
        if mems[j].size and (mems[j].min() < 0 or mems[j].max() >= d_a[j]):
            raise ValueError(f"exact_trie: members[{j}] must lie in [0, {d_a[j]})")
        k_a[j] = mems[j].shape[1]
    cdef cnp.ndarray G = np.empty(ncells, dtype=np.float64)
    cdef const uint64_t **mp = <const uint64_t **>malloc(q * sizeof(uint64_t *))
    cdef const int32_t **ip = <const int32_t **>malloc(q * sizeof(int32_t *))
    cdef cnp.ndarray tmp
    cdef double ll = 0.0
    if mp == NULL or ip == NULL:
        free(mp); free(ip)
        raise MemoryError()
    try:
        for j in range(q):
            tmp = cols[j]
            mp[j] = <const uint64_t *>tmp.data
            if mems[j] is None:
                ip[j] = NULL
            else:
                tmp = mems[j]
                ip[j] = <const int32_t *>tmp.data
        with nogil:
            status = anonset_exact_trie(U, q, <int32_t *>d_a.data, mp, ip,
                                        <int32_t *>k_a.data, <double *>u_a.data,
                                        <double *>wt.data, <double *>p_a.data,
                                        <double *>G.data, &ll, nchunk, check_order,
                                        n_threads)
        if status == ANONSET_ERR_VALUE:
            raise ValueError("exact_trie: the tuples must be sorted (attribute 0 first) "
                             "and distinct")
        _check(status, "exact_trie")
    finally:
        free(mp); free(ip)
    return G.reshape(shape), float(ll)

# ------------------------------------------------------------ fork safety
def _one_thread_after_fork():
    """Run this module's kernels on one thread from now on (anonset._fork:
    a process forked after OpenMP teams ran cannot start another)."""
    anonset_mark_fork_child()


from anonset._fork import adopt as _adopt    # noqa: E402
_adopt(_one_thread_after_fork)
