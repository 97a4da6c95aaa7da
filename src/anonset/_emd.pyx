# cython: language_level=3
"""Thin nogil wrappers over csrc/emd.c.  Validation happens in anonset.emd."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t

cnp.import_array()

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


def tree_emd_batch_i64(const int64_t[:, ::1] P, const double[::1] q,
                       const int64_t[::1] parent, const double[::1] weight,
                       int n_threads):
    cdef int64_t n = P.shape[0], d = P.shape[1], nn = parent.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef int status
    if q.shape[0] != d or weight.shape[0] != nn:
        raise ValueError("shape mismatch between P, q and the ground tree")
    if n == 0:
        return out
    with nogil:
        status = anonset_tree_emd_batch_i64(n, d, &P[0, 0], &q[0], nn, &parent[0],
                                            &weight[0], n_threads, &o[0])
    check_status(status)
    return out


def tree_emd_batch_f64(const double[:, ::1] P, const double[::1] q,
                       const int64_t[::1] parent, const double[::1] weight,
                       int n_threads):
    cdef int64_t n = P.shape[0], d = P.shape[1], nn = parent.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef int status
    if q.shape[0] != d or weight.shape[0] != nn:
        raise ValueError("shape mismatch between P, q and the ground tree")
    if n == 0:
        return out
    with nogil:
        status = anonset_tree_emd_batch_f64(n, d, &P[0, 0], &q[0], nn, &parent[0],
                                            &weight[0], n_threads, &o[0])
    check_status(status)
    return out
