# cython: language_level=3
"""Thin nogil wrappers over csrc/partition/baselines.c.  Validation happens
in anonset.partition.baselines; the kernels re-check codes and sizes."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cnp.import_array()

cdef extern from "baselines.h":
    int ANONSET_OK
    int ANONSET_ERR_NOMEM
    int anonset_diverse_groups(int64_t n, int64_t n_seg, const int64_t *seg_off,
                               const int32_t *codes, int32_t d, int64_t l,
                               int64_t *group, int64_t *n_groups) nogil
    int anonset_mondrian_ldiverse(int64_t m, int64_t *idx, int64_t n_total, int32_t q,
                                  const int32_t *codes, const int32_t *dom,
                                  const int32_t *sens, int32_t d_s, int64_t l, int32_t tries,
                                  int64_t *group_end, int64_t *n_groups) nogil


cdef check_status(int status, str what):
    if status == ANONSET_OK:
        return
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError(f"{what}: scratch allocation failed")
    raise ValueError(f"{what}: bad sizes, codes outside their domain or rows not "
                     f"l-diverse (status {status})")


def diverse_groups(const int64_t[::1] seg_off, const int32_t[::1] codes, int32_t d, int64_t l):
    """Group of every position (-1: left over) and the number of groups."""
    cdef int64_t n = codes.shape[0], ng = 0, zero = 0
    cdef int64_t nseg = seg_off.shape[0] - 1
    cdef int status
    if nseg < 0:
        raise ValueError("diverse_groups: seg_off needs at least one entry")
    out = np.empty(max(n, 1), dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef int32_t zero32 = 0
    cdef const int32_t *cp = &codes[0] if n > 0 else &zero32
    with nogil:
        status = anonset_diverse_groups(n, nseg, &seg_off[0], cp, d, l, &o[0], &ng)
    check_status(status, "diverse_groups")
    return out[:n], ng


def mondrian(int64_t[::1] idx, const int32_t[:, ::1] codes, const int32_t[::1] dom,
             const int32_t[::1] sens, int32_t d_s, int64_t l, int32_t tries=1):
    """Reorder idx (in place) into contiguous groups; return the group ends."""
    cdef int64_t m = idx.shape[0], ng = 0
    cdef int32_t q = codes.shape[0]
    cdef int status
    cdef int32_t zero32 = 0
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.empty(m // l + 1, dtype=np.int64)
    cdef int64_t[::1] e = ends
    cdef const int32_t *cp = &codes[0, 0] if q > 0 else &zero32
    cdef const int32_t *dp = &dom[0] if q > 0 else &zero32
    with nogil:
        status = anonset_mondrian_ldiverse(m, &idx[0], codes.shape[1], q, cp, dp, &sens[0],
                                           d_s, l, tries, &e[0], &ng)
    check_status(status, "mondrian")
    return ends[:ng]
