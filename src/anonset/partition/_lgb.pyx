# cython: language_level=3
"""Thin nogil wrappers over csrc/partition/lgb.c (paper 002, Alg. 2-4).
Validation happens in anonset.lgb."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cnp.import_array()

from ._status cimport check_status


cdef extern from "lgb.h":
    int anonset_lgb_bucketize(int64_t n_runs, const int64_t *run_count, int64_t l,
                              int64_t *bucket, int64_t *n_buckets) nogil
    int anonset_lgb_mondrian(int64_t m, int64_t *idx, int64_t n_total, const int32_t *codes,
                             int32_t na, const int32_t *attrs, const int32_t *dom,
                             const int32_t *cost_kind, const int64_t *cost_off,
                             const double *cost_tab, int64_t k, int32_t below_max,
                             int64_t *group_end, int64_t *n_groups) nogil
    int anonset_lgb_topdown(int64_t m, int64_t *idx, int64_t n_total, const int32_t *codes,
                            int32_t na, const int32_t *attrs, const int32_t *dom,
                            const int32_t *cost_kind, const int64_t *cost_off,
                            const double *cost_tab, int64_t k, int32_t balance,
                            int64_t *group_end, int64_t *n_groups) nogil



def bucketize(const int64_t[::1] run_count, int64_t l):
    """Bucket of every tuple (sorted by value) and the number of buckets."""
    cdef int64_t n = 0, nb = 0, r
    cdef int status
    for r in range(run_count.shape[0]):
        n += run_count[r]
    out = np.empty(max(n, 1), dtype=np.int64)
    cdef int64_t[::1] o = out
    if run_count.shape[0] == 0:
        return out[:0], 0
    with nogil:
        status = anonset_lgb_bucketize(run_count.shape[0], &run_count[0], l, &o[0], &nb)
    check_status(status, "bucketize kernel", "bad input")
    return out[:n], nb


def partition(str method, int64_t[::1] idx, const int32_t[:, ::1] codes,
              const int32_t[::1] attrs, const int32_t[::1] dom,
              const int32_t[::1] cost_kind, const int64_t[::1] cost_off,
              const double[::1] cost_tab, int64_t k, bint balance=False,
              bint below_max=True):
    """Reorder idx (in place) into contiguous groups; return the group ends."""
    cdef int64_t m = idx.shape[0], ng = 0
    cdef int32_t na = attrs.shape[0]
    cdef int status
    cdef int mdp = method == "mdp"
    ends = np.empty(m // k + 1, dtype=np.int64)
    cdef int64_t[::1] e = ends
    cdef int32_t zero32 = 0
    cdef const int32_t *ap = &attrs[0] if na > 0 else &zero32
    with nogil:
        if mdp:
            status = anonset_lgb_mondrian(m, &idx[0], codes.shape[1], &codes[0, 0], na, ap,
                                          &dom[0], &cost_kind[0], &cost_off[0], &cost_tab[0],
                                          k, 1 if below_max else 0, &e[0], &ng)
        else:
            status = anonset_lgb_topdown(m, &idx[0], codes.shape[1], &codes[0, 0], na, ap,
                                         &dom[0], &cost_kind[0], &cost_off[0], &cost_tab[0],
                                         k, 1 if balance else 0, &e[0], &ng)
    check_status(status, f"{method} kernel", "bad input")
    return ends[:ng]
