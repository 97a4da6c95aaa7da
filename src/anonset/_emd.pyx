# cython: language_level=3, boundscheck=False, wraparound=False
"""Thin nogil wrappers over csrc/emd.c.

Batched calls are validated in anonset.emd; :func:`emd_pair` validates its two
vectors itself in one pass (the single-pair path of :func:`anonset.emd.emd`).
:func:`factorize_objects` is the grouping helper of anonset.checks.
"""
import numpy as np
cimport numpy as cnp
from cpython.object cimport PyObject
from libc.stdint cimport int64_t, uint64_t, uintptr_t
from libc.stdlib cimport malloc, calloc, free

cnp.import_array()

cdef extern from "anonset_common.h":
    void anonset_mark_fork_child() nogil

cdef extern from "emd.h":
    int ANONSET_OK
    int ANONSET_ERR_VALUE
    int ANONSET_ERR_NOMEM
    int anonset_tree_emd_batch_i64(int64_t n_rows, int64_t d, const int64_t *P,
                                   const double *q, int64_t n_nodes,
                                   const int64_t *parent, const double *weight,
                                   int n_threads, double *out) nogil
    int anonset_tree_emd_batch_f64(int64_t n_rows, int64_t d, const double *P,
                                   const double *q, int64_t n_nodes,
                                   const int64_t *parent, const double *weight,
                                   int n_threads, double *out) nogil
    int anonset_tree_emd_pair(int64_t d, const double *p, const double *q,
                              int64_t n_nodes, const int64_t *parent,
                              const double *weight, double *out, int *bad) nogil

cdef extern from *:
    """
    #if ANONSET_HAVE_OPENMP
    #define ANONSET_EMD_OPENMP 1
    #else
    #define ANONSET_EMD_OPENMP 0
    #endif
    """
    int ANONSET_EMD_OPENMP

OPENMP = bool(ANONSET_EMD_OPENMP)


cdef check_status(int status):
    if status == ANONSET_OK:
        return
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError("emd kernel: scratch allocation failed")
    raise ValueError("ground: bad sizes, or the parent array is not a tree with "
                     f"parent[v] > v and the root last (status {status})")


ctypedef fused mass_t:
    int64_t
    double


def tree_emd_batch(const mass_t[:, ::1] P, const double[::1] q,
                   const int64_t[::1] parent, const double[::1] weight, int n_threads):
    """EMD of each row of P (int64 counts or float64 masses) to q on a tree ground."""
    cdef int64_t n = P.shape[0], d = P.shape[1], nn = parent.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef int status
    if q.shape[0] != d or weight.shape[0] != nn:
        raise ValueError("shape mismatch between P, q and the ground tree")
    if n == 0:
        return out
    with nogil:
        if mass_t is int64_t:
            status = anonset_tree_emd_batch_i64(n, d, &P[0, 0], &q[0], nn, &parent[0],
                                                &weight[0], n_threads, &o[0])
        else:
            status = anonset_tree_emd_batch_f64(n, d, &P[0, 0], &q[0], nn, &parent[0],
                                                &weight[0], n_threads, &o[0])
    check_status(status)
    return out


_PAIR_MESSAGES = {
    1: "{0} contains NaN or infinite values",
    2: "{0} contains negative values",
    3: "{0} sums to zero; it must have positive total mass",
}


cdef inline bint _fast_vec(object x):
    """A 1-d C-contiguous float64 ndarray (usable without a copy)."""
    return (cnp.PyArray_CheckExact(x)
            and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1
            and cnp.PyArray_DIM(<cnp.ndarray>x, 0) > 0
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x))


def emd_pair(object p, object q, int64_t n_leaves, object parent, object weight,
             object convert):
    """EMD of one pair on a tree ground with ``n_leaves`` leaves (``parent``
    int64, ``weight`` float64, both 1-d contiguous, as stored by
    :class:`anonset.emd.Ground`).

    ``p`` / ``q`` that are not 1-d contiguous float64 arrays go through
    ``convert(x, name)`` first (dtype / shape checks that name the argument).
    NaN / inf / negative entries and zero sums raise ``ValueError`` naming
    ``p`` or ``q``; unequal lengths name both.
    """
    if not _fast_vec(p):
        p = convert(p, "p")
    if not _fast_vec(q):
        q = convert(q, "q")
    if not (cnp.PyArray_CheckExact(parent) and cnp.PyArray_CheckExact(weight)
            and cnp.PyArray_TYPE(<cnp.ndarray>parent) == cnp.NPY_INT64
            and cnp.PyArray_TYPE(<cnp.ndarray>weight) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>parent) == 1
            and cnp.PyArray_NDIM(<cnp.ndarray>weight) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>parent)
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>weight)
            and cnp.PyArray_DIM(<cnp.ndarray>weight, 0)
                == cnp.PyArray_DIM(<cnp.ndarray>parent, 0)):
        raise ValueError("ground: parent must be a contiguous int64 array and weight a "
                         "contiguous float64 array of the same length")
    cdef cnp.ndarray pa = <cnp.ndarray>p, qa = <cnp.ndarray>q
    cdef cnp.ndarray par = <cnp.ndarray>parent, wa = <cnp.ndarray>weight
    cdef int64_t d = cnp.PyArray_DIM(pa, 0), nn = cnp.PyArray_DIM(par, 0)
    if cnp.PyArray_DIM(qa, 0) != d:
        raise ValueError(f"p and q differ in length ({d} != {cnp.PyArray_DIM(qa, 0)})")
    if n_leaves != d:
        raise ValueError(f"ground has {n_leaves} values but the distributions have {d}")
    cdef double out = 0.0
    cdef int bad = 0
    cdef int status = anonset_tree_emd_pair(
        d, <const double *>cnp.PyArray_DATA(pa), <const double *>cnp.PyArray_DATA(qa),
        nn, <const int64_t *>cnp.PyArray_DATA(par), <const double *>cnp.PyArray_DATA(wa),
        &out, &bad)
    if status == ANONSET_OK:
        return out
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError("emd kernel: scratch allocation failed")
    if 1 <= bad <= 3:
        raise ValueError(_PAIR_MESSAGES[bad].format("p"))
    if 4 <= bad <= 6:
        raise ValueError(_PAIR_MESSAGES[bad - 3].format("q"))
    check_status(status)


def factorize_objects(cnp.ndarray values):
    """Group a 1-d object array by object identity, in order of first appearance.

    Returns ``(codes, firsts)``: int64 codes (one per element, 0..m-1) and the
    object array of the first element of each group.  Equal values held by
    distinct objects get distinct codes here; the caller merges them by
    factorizing the (small) ``firsts`` by value.  Columns read by pandas share
    one object per distinct string, so ``m`` is tiny and this pass is a few ns
    per row (pd.factorize on object columns hashes every string: ~20 ns/row).
    """
    if values.ndim != 1 or values.dtype != object:
        raise ValueError("factorize_objects needs a 1-d object array")
    values = np.ascontiguousarray(values)
    cdef Py_ssize_t n = values.shape[0], i
    codes = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] c = codes
    cdef PyObject **data = <PyObject **>cnp.PyArray_DATA(values)
    cdef uint64_t cap = 64, mask, h, k
    cdef int shift = 58                     # 64 - log2(cap): Fibonacci hashing
    cdef uintptr_t *keys = <uintptr_t *>calloc(cap, sizeof(uintptr_t))
    cdef int64_t *vals = <int64_t *>malloc(cap * sizeof(int64_t))
    cdef uintptr_t *nkeys
    cdef int64_t *nvals
    cdef int64_t m = 0
    cdef uintptr_t key
    firsts_idx = []
    if keys == NULL or vals == NULL:
        free(keys); free(vals)
        raise MemoryError()
    try:
        mask = cap - 1
        for i in range(n):
            key = <uintptr_t>data[i]
            h = ((<uint64_t>key) * 0x9E3779B97F4A7C15ULL) >> shift
            while keys[h] != 0 and keys[h] != key:
                h = (h + 1) & mask
            if keys[h] == key:
                c[i] = vals[h]
                continue
            keys[h] = key
            vals[h] = m
            c[i] = m
            firsts_idx.append(i)
            m += 1
            if <uint64_t>m * 2 > cap:          # grow: keep the load <= 1/2
                nkeys = <uintptr_t *>calloc(cap * 2, sizeof(uintptr_t))
                nvals = <int64_t *>malloc(cap * 2 * sizeof(int64_t))
                if nkeys == NULL or nvals == NULL:
                    free(nkeys); free(nvals)
                    raise MemoryError()
                mask = cap * 2 - 1
                for k in range(cap):
                    if keys[k] != 0:
                        h = ((<uint64_t>keys[k]) * 0x9E3779B97F4A7C15ULL) >> (shift - 1)
                        while nkeys[h] != 0:
                            h = (h + 1) & mask
                        nkeys[h] = keys[k]
                        nvals[h] = vals[k]
                free(keys); free(vals)
                keys, vals = nkeys, nvals
                cap *= 2
                shift -= 1
    finally:
        free(keys); free(vals)
    return codes, values[np.asarray(firsts_idx, dtype=np.int64)]

# ------------------------------------------------------------ fork safety
def _one_thread_after_fork():
    """Run this module's kernels on one thread from now on (anonset._fork:
    a process forked after OpenMP teams ran cannot start another)."""
    anonset_mark_fork_child()


from anonset._fork import adopt as _adopt    # noqa: E402
_adopt(_one_thread_after_fork)
