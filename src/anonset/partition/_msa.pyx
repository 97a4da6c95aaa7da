# cython: language_level=3
"""Thin nogil wrappers over csrc/msa.c (paper 003).  Validation happens in
anonset.msa; the kernels re-check codes and sizes and report a status."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cnp.import_array()

cdef extern from "msa.h":
    int ANONSET_OK
    int ANONSET_ERR_VALUE
    int ANONSET_ERR_NOMEM
    int anonset_msa_generate_ecs(int64_t n, int32_t n_qi, const int32_t *xu,
                                 int64_t n_tuples, const int64_t *tid, const int32_t *kind, const double *scale,
                                 const int32_t *dom, const int64_t *tab_off,
                                 const double *tab, int32_t n_clusters,
                                 const int64_t *cl_start, const int64_t *members,
                                 int32_t seed_mode, const int64_t *seed_order,
                                 int64_t n_seed_order, int n_threads,
                                 int64_t *ec_out, int64_t *n_ec_out) nogil
    int anonset_msa_ensure_t(int64_t n_classes, int32_t n_sa, const int64_t *d,
                             const int64_t *d_off, int64_t d_total, int64_t *counts,
                             const double *q, const int64_t *n_nodes,
                             const int64_t *node_off, const int64_t *parent,
                             const double *weight, int32_t n_qi, const int32_t *kind,
                             const double *scale, const int32_t *dom,
                             const int64_t *tab_off, const double *tab,
                             const int32_t *lca_tab, int32_t *lo, int32_t *hi,
                             double t, int n_threads, int64_t *into,
                             int64_t *n_merges) nogil
    int anonset_msa_class_emd(int64_t n_classes, int32_t n_sa, const int64_t *d,
                              const int64_t *d_off, int64_t d_total,
                              const int64_t *counts, const double *q,
                              const int64_t *n_nodes, const int64_t *node_off,
                              const int64_t *parent, const double *weight,
                              double *out) nogil


cdef check_status(int status, str what):
    if status == ANONSET_OK:
        return
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError(f"{what}: scratch allocation failed")
    raise ValueError(f"{what}: bad sizes or codes outside their domain (status {status})")


cdef const double *_dptr(const double[::1] a):
    return &a[0] if a.shape[0] > 0 else NULL


def generate_ecs(const int32_t[:, ::1] xu, const int64_t[::1] tid, const int32_t[::1] kind,
                 const double[::1] scale,
                 const int32_t[::1] dom, const int64_t[::1] tab_off, const double[::1] tab,
                 const int64_t[::1] cl_start, const int64_t[::1] members, int seed_mode,
                 const int64_t[::1] seed_order, int n_threads):
    """Class id per record (Pseudocode 1) and the number of classes."""
    cdef int64_t n = tid.shape[0], n_ec = 0, n_tuples = xu.shape[0]
    cdef int32_t n_qi = <int32_t>xu.shape[1]
    cdef int32_t n_cl = <int32_t>(cl_start.shape[0] - 1)
    cdef int status
    if n < 1 or n_tuples < 1 or n_cl < 1 or members.shape[0] != n:
        raise ValueError("generate_ecs: need at least one record and one cluster")
    if kind.shape[0] != n_qi or scale.shape[0] != n_qi or dom.shape[0] != n_qi \
            or tab_off.shape[0] != n_qi:
        raise ValueError("generate_ecs: per-QI arrays must have one entry per QI")
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef const int32_t *xp = &xu[0, 0] if n_qi > 0 else NULL
    cdef const int32_t *kp = &kind[0] if n_qi > 0 else NULL
    cdef const double *sp = &scale[0] if n_qi > 0 else NULL
    cdef const int32_t *dp = &dom[0] if n_qi > 0 else NULL
    cdef const int64_t *tp = &tab_off[0] if n_qi > 0 else NULL
    cdef const double *tabp = _dptr(tab)
    cdef const int64_t *sop = &seed_order[0] if seed_order.shape[0] > 0 else NULL
    cdef int64_t nso = seed_order.shape[0]
    with nogil:
        status = anonset_msa_generate_ecs(n, n_qi, xp, n_tuples, &tid[0], kp, sp, dp, tp, tabp, n_cl,
                                          &cl_start[0], &members[0], seed_mode, sop, nso,
                                          n_threads, &o[0], &n_ec)
    check_status(status, "generate_ecs")
    return out, int(n_ec)


def ensure_t(const int64_t[::1] d, const int64_t[::1] d_off, int64_t[:, ::1] counts,
             const double[::1] q, const int64_t[::1] n_nodes, const int64_t[::1] node_off,
             const int64_t[::1] parent, const double[::1] weight, const int32_t[::1] kind,
             const double[::1] scale, const int32_t[::1] dom, const int64_t[::1] tab_off,
             const double[::1] tab, const int32_t[::1] lca_tab, int32_t[:, ::1] lo,
             int32_t[:, ::1] hi, double t, int n_threads):
    """Merge map (Pseudocode 2) and the number of merges; counts/lo/hi are
    updated in place."""
    cdef int64_t n_classes = counts.shape[0], d_total = counts.shape[1], merges = 0
    cdef int32_t n_sa = <int32_t>d.shape[0]
    cdef int32_t n_qi = <int32_t>kind.shape[0]
    cdef int status
    if n_classes < 1 or n_sa < 1 or lo.shape[0] != n_classes or hi.shape[0] != n_classes \
            or lo.shape[1] != n_qi or hi.shape[1] != n_qi or q.shape[0] != d_total:
        raise ValueError("ensure_t: shape mismatch")
    into = np.empty(n_classes, dtype=np.int64)
    cdef int64_t[::1] o = into
    cdef const int32_t *kp = &kind[0] if n_qi > 0 else NULL
    cdef const double *sp = &scale[0] if n_qi > 0 else NULL
    cdef const int32_t *dp = &dom[0] if n_qi > 0 else NULL
    cdef const int64_t *tp = &tab_off[0] if n_qi > 0 else NULL
    cdef const double *tabp = _dptr(tab)
    cdef const int32_t *lcap = &lca_tab[0] if lca_tab.shape[0] > 0 else NULL
    cdef int32_t *lop = &lo[0, 0] if n_qi > 0 else NULL
    cdef int32_t *hip = &hi[0, 0] if n_qi > 0 else NULL
    with nogil:
        status = anonset_msa_ensure_t(n_classes, n_sa, &d[0], &d_off[0], d_total,
                                      &counts[0, 0], &q[0], &n_nodes[0], &node_off[0],
                                      &parent[0], &weight[0], n_qi, kp, sp, dp, tp, tabp,
                                      lcap, lop, hip, t, n_threads, &o[0], &merges)
    check_status(status, "ensure_t")
    return into, int(merges)


def class_emd(const int64_t[::1] d, const int64_t[::1] d_off, const int64_t[:, ::1] counts,
              const double[::1] q, const int64_t[::1] n_nodes, const int64_t[::1] node_off,
              const int64_t[::1] parent, const double[::1] weight):
    """Largest EMD over the sensitive attributes, per class row."""
    cdef int64_t n_classes = counts.shape[0], d_total = counts.shape[1]
    cdef int32_t n_sa = <int32_t>d.shape[0]
    cdef int status
    out = np.zeros(n_classes, dtype=np.float64)
    if n_classes == 0:
        return out
    cdef double[::1] o = out
    with nogil:
        status = anonset_msa_class_emd(n_classes, n_sa, &d[0], &d_off[0], d_total,
                                       &counts[0, 0], &q[0], &n_nodes[0], &node_off[0],
                                       &parent[0], &weight[0], &o[0])
    check_status(status, "class_emd")
    return out
