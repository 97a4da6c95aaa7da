# cython: language_level=3
"""Thin nogil wrappers over csrc/semantic.c ((l, d)-semantic diversity, paper 001).

Validation of user input happens in anonset.semantic; these wrappers check
shapes and dtypes and translate status codes into exceptions.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

cnp.import_array()

cdef extern from "anonset_common.h":
    void anonset_mark_fork_child() nogil
    int ANONSET_OK
    int ANONSET_ERR_NOMEM
    int ANONSET_ERR_VALUE

cdef extern from "rng.h":
    ctypedef struct anonset_key:
        uint32_t key[8]
        int kind

cdef extern from "semantic.h":
    int ANONSET_SEM_MAX_WORDS
    int ANONSET_SEM_MAX_L
    int ANONSET_SEM_INFEASIBLE
    int ANONSET_SEM_TOO_BIG
    ctypedef struct anonset_sem_spec:
        int32_t F
        int32_t words
        int32_t l
        int32_t algo
        int32_t radius
        int32_t ordered
        const uint64_t *compat
    int anonset_sem_sample(const anonset_sem_spec *spec, const anonset_key *key,
                           int64_t n, int64_t row0, uint32_t attr,
                           const int32_t *codes, uint64_t *out, int n_threads) nogil
    int anonset_sem_feasible(const anonset_sem_spec *spec, int32_t *feasible) nogil
    int anonset_sem_paths(const anonset_sem_spec *spec, uint32_t *N, int64_t *nodes) nogil
    int anonset_sem_exact_q(const anonset_sem_spec *spec, int64_t max_nodes,
                            double *q, int64_t *nodes, int n_threads) nogil

MAX_DOMAIN = 64 * ANONSET_SEM_MAX_WORDS
MAX_L = ANONSET_SEM_MAX_L
ALGOS = {"simple": 0, "duplicate": 1}
RNG_KINDS = {"chacha20": 0, "philox": 1}


class TooBig(RuntimeError):
    """Exact enumeration would exceed its node budget."""


cdef void _check(int status, str what) except *:
    if status == ANONSET_OK:
        return
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError(f"{what}: out of memory")
    if status == ANONSET_SEM_INFEASIBLE:
        raise ValueError(f"{what}: some value has no set of l values pairwise at least d apart")
    if status == ANONSET_SEM_TOO_BIG:
        raise TooBig(f"{what}: exact enumeration exceeds its node budget")
    raise ValueError(f"{what}: a value is outside its domain or a parameter is invalid")


cdef class _Spec:
    cdef anonset_sem_spec s
    cdef cnp.ndarray compat

    def __cinit__(self, compat, int l, str algo, int radius, bint ordered):
        c = np.ascontiguousarray(compat, dtype=np.uint64)
        if c.ndim != 2:
            raise ValueError("compat must be a 2-d array of bitmask rows")
        F = c.shape[0]
        if F < 1 or F > MAX_DOMAIN or c.shape[1] != (F + 63) // 64:
            raise ValueError(f"compat must have shape (F, ceil(F/64)) with 1 <= F <= {MAX_DOMAIN}")
        if algo not in ALGOS:
            raise ValueError(f"algorithm must be one of {sorted(ALGOS)}, got {algo!r}")
        if not 1 <= l <= min(F, MAX_L):
            raise ValueError(f"l must be in [1, {min(F, MAX_L)}], got {l}")
        if radius < 0 or 2 * radius + 1 > F:
            raise ValueError(f"radius must be in [0, (F-1)/2], got {radius}")
        self.compat = c
        self.s.F = F
        self.s.words = (F + 63) // 64
        self.s.l = l
        self.s.algo = ALGOS[algo]
        self.s.radius = radius
        self.s.ordered = 1 if ordered else 0
        self.s.compat = <const uint64_t *>self.compat.data


cdef void _make_key(anonset_key *k, bytes key, str kind) except *:
    if len(key) != 32:
        raise ValueError("key must be 32 bytes")
    if kind not in RNG_KINDS:
        raise ValueError(f"rng must be one of {sorted(RNG_KINDS)}, got {kind!r}")
    words = np.frombuffer(key, dtype="<u4")
    for i in range(8):
        k.key[i] = <uint32_t>words[i]
    k.kind = RNG_KINDS[kind]


def sample(compat, int l, str algo, int radius, bint ordered, codes, bytes key,
           str rng="chacha20", int64_t row0=0, uint32_t attr=0, int n_threads=0):
    """(n, words) uint64 bitmasks: each code's set of l values."""
    cdef _Spec sp = _Spec(compat, l, algo, radius, ordered)
    cdef anonset_key k
    _make_key(&k, key, rng)
    cdef cnp.ndarray c = np.ascontiguousarray(codes, dtype=np.int32)
    if c.ndim != 1:
        raise ValueError("codes must be 1-d")
    cdef int64_t n = c.shape[0]
    cdef cnp.ndarray out = np.empty((n, sp.s.words), dtype=np.uint64)
    cdef int status
    with nogil:
        status = anonset_sem_sample(&sp.s, &k, n, row0, attr, <const int32_t *>c.data,
                                    <uint64_t *>out.data, n_threads)
    _check(status, "semantic sample")
    return out


def feasible(compat, int l, str algo, int radius, bint ordered):
    """Boolean array: can value t be published in a valid set of l values?"""
    cdef _Spec sp = _Spec(compat, l, algo, radius, ordered)
    cdef cnp.ndarray out = np.zeros(sp.s.F, dtype=np.int32)
    cdef int status
    with nogil:
        status = anonset_sem_feasible(&sp.s, <int32_t *>out.data)
    _check(status, "semantic feasible")
    return out.astype(bool)


def paths(compat, int l, str algo, int radius, bint ordered):
    """Per value: (N, nodes) of its path tree - one draw in [0, N) picks a
    whole set - or N = 0 where the value is sampled step by step."""
    cdef _Spec sp = _Spec(compat, l, algo, radius, ordered)
    cdef cnp.ndarray N = np.zeros(sp.s.F, dtype=np.uint32)
    cdef cnp.ndarray nodes = np.zeros(sp.s.F, dtype=np.int64)
    cdef int status
    with nogil:
        status = anonset_sem_paths(&sp.s, <uint32_t *>N.data, <int64_t *>nodes.data)
    _check(status, "semantic paths")
    return N, nodes


def exact_q(compat, int l, str algo, int radius, bint ordered, int64_t max_nodes,
            int n_threads=0):
    """(F, F) matrix q[t, j] = P(j is a dummy | true value t) and the nodes visited."""
    cdef _Spec sp = _Spec(compat, l, algo, radius, ordered)
    cdef int32_t F = sp.s.F
    cdef cnp.ndarray q = np.zeros((F, F), dtype=np.float64)
    cdef int64_t nodes = 0
    cdef int status
    with nogil:
        status = anonset_sem_exact_q(&sp.s, max_nodes, <double *>q.data, &nodes, n_threads)
    _check(status, "semantic exact_q")
    return q, int(nodes)

# ------------------------------------------------------------ fork safety
def _one_thread_after_fork():
    """Run this module's kernels on one thread from now on (anonset._fork:
    a process forked after OpenMP teams ran cannot start another)."""
    anonset_mark_fork_child()


from anonset._fork import adopt as _adopt    # noqa: E402
_adopt(_one_thread_after_fork)
