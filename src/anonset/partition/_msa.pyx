# cython: language_level=3
"""Thin nogil wrappers over csrc/partition/msa.c (paper 003).  Validation happens in
anonset.msa; the kernels re-check codes and sizes and report a status."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t

cnp.import_array()

cdef extern from "anonset_common.h":
    void anonset_mark_fork_child() nogil

from ._status cimport check_status


cdef extern from "msa.h":
    ctypedef struct anonset_msa_qi:
        int32_t n_qi
        const int32_t *kind
        const double *scale
        const int32_t *dom
        const int64_t *tab_off
        const double *tab
        const int32_t *lca
    ctypedef struct anonset_msa_sa:
        int32_t n_sa
        const int64_t *d
        const int64_t *d_off
        const int64_t *n_nodes
        int64_t d_total
        const int64_t *node_off
        const int64_t *parent
        const double *q
        const double *weight
        const uint8_t *diverse
    ctypedef struct anonset_msa_clusters:
        int32_t n_clusters
        const int64_t *cl_start
        const int64_t *members
        int32_t seed_mode
        const int64_t *seed_order
        int64_t n_seed_order
        int32_t reference_scan
    int anonset_msa_generate_ecs(const anonset_msa_qi *qi, const anonset_msa_clusters *cl,
                                 int64_t n, const int32_t *xu, int64_t n_tuples,
                                 const int64_t *tid, int n_threads, int64_t *ec_out,
                                 int64_t *n_ec_out) nogil
    int anonset_msa_ensure_t(const anonset_msa_sa *sa, const anonset_msa_qi *qi,
                             int64_t n_classes, int64_t *counts, int32_t *lo, int32_t *hi,
                             double t, int n_threads, int64_t *into, int64_t *n_merges) nogil
    int anonset_msa_class_emd(const anonset_msa_sa *sa, int64_t n_classes,
                              const int64_t *counts, double *out) nogil



_BAD = "bad sizes or codes outside their domain"


cdef anonset_msa_qi qi_spec(str what, const int32_t[::1] kind, const double[::1] scale,
                            const int32_t[::1] dom, const int64_t[::1] tab_off,
                            const double[::1] tab, const int32_t[::1] lca):
    """The QI arrays as the kernels read them (NULL where empty)."""
    cdef anonset_msa_qi s
    cdef int32_t n_qi = <int32_t>kind.shape[0]
    if scale.shape[0] != n_qi or dom.shape[0] != n_qi or tab_off.shape[0] != n_qi:
        raise ValueError(f"{what}: per-QI arrays must have one entry per QI")
    s.n_qi = n_qi
    s.kind = &kind[0] if n_qi > 0 else NULL
    s.scale = &scale[0] if n_qi > 0 else NULL
    s.dom = &dom[0] if n_qi > 0 else NULL
    s.tab_off = &tab_off[0] if n_qi > 0 else NULL
    s.tab = &tab[0] if tab.shape[0] > 0 else NULL
    s.lca = &lca[0] if lca is not None and lca.shape[0] > 0 else NULL
    return s


cdef anonset_msa_sa sa_spec(const int64_t[::1] d, const int64_t[::1] d_off, int64_t d_total,
                            const double[::1] q, const int64_t[::1] n_nodes,
                            const int64_t[::1] node_off, const int64_t[::1] parent,
                            const double[::1] weight):
    """The sensitive attributes' arrays as the kernels read them."""
    cdef anonset_msa_sa s
    s.n_sa = <int32_t>d.shape[0]
    s.d = &d[0]
    s.d_off = &d_off[0]
    s.d_total = d_total
    s.q = &q[0]
    s.n_nodes = &n_nodes[0]
    s.node_off = &node_off[0]
    s.parent = &parent[0]
    s.weight = &weight[0]
    s.diverse = NULL
    return s


def generate_ecs(const int32_t[:, ::1] xu, const int64_t[::1] tid, const int32_t[::1] kind,
                 const double[::1] scale,
                 const int32_t[::1] dom, const int64_t[::1] tab_off, const double[::1] tab,
                 const int64_t[::1] cl_start, const int64_t[::1] members, int seed_mode,
                 const int64_t[::1] seed_order, int n_threads, const int32_t[::1] lca=None,
                 bint reference_scan=False):
    """Class id per record (Pseudocode 1) and the number of classes.  ``lca``:
    the table QIs' LCA nodes (the k-d tree prunes on them; optional);
    ``reference_scan``: nearest searches by scanning the cluster (the
    reference the k-d tree is tested against; same result, O(n) each)."""
    cdef int64_t n = tid.shape[0], n_ec = 0, n_tuples = xu.shape[0]
    cdef int status
    cdef anonset_msa_clusters cl
    cl.n_clusters = <int32_t>(cl_start.shape[0] - 1)
    if n < 1 or n_tuples < 1 or cl.n_clusters < 1 or members.shape[0] != n:
        raise ValueError("generate_ecs: need at least one record and one cluster")
    if xu.shape[1] != kind.shape[0]:
        raise ValueError("generate_ecs: per-QI arrays must have one entry per QI")
    if lca is not None and lca.shape[0] != tab.shape[0]:
        raise ValueError("generate_ecs: lca must have one entry per table entry")
    cdef anonset_msa_qi qi = qi_spec("generate_ecs", kind, scale, dom, tab_off, tab, lca)
    cl.cl_start = &cl_start[0]
    cl.members = &members[0]
    cl.seed_mode = seed_mode
    cl.seed_order = &seed_order[0] if seed_order.shape[0] > 0 else NULL
    cl.n_seed_order = seed_order.shape[0]
    cl.reference_scan = 1 if reference_scan else 0
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef const int32_t *xp = &xu[0, 0] if qi.n_qi > 0 else NULL
    with nogil:
        status = anonset_msa_generate_ecs(&qi, &cl, n, xp, n_tuples, &tid[0], n_threads,
                                          &o[0], &n_ec)
    check_status(status, "generate_ecs", _BAD)
    return out, int(n_ec)


def ensure_t(const int64_t[::1] d, const int64_t[::1] d_off, int64_t[:, ::1] counts,
             const double[::1] q, const int64_t[::1] n_nodes, const int64_t[::1] node_off,
             const int64_t[::1] parent, const double[::1] weight, const int32_t[::1] kind,
             const double[::1] scale, const int32_t[::1] dom, const int64_t[::1] tab_off,
             const double[::1] tab, const int32_t[::1] lca_tab, int32_t[:, ::1] lo,
             int32_t[:, ::1] hi, double t, int n_threads, const uint8_t[::1] diverse=None):
    """Merge map (Pseudocode 2) and the number of merges; counts/lo/hi are
    updated in place.  ``diverse`` (one flag per SA, optional): a class that
    holds one value alone of a flagged SA violates too."""
    cdef int64_t n_classes = counts.shape[0], merges = 0
    cdef int status
    cdef anonset_msa_qi qi = qi_spec("ensure_t", kind, scale, dom, tab_off, tab, lca_tab)
    if n_classes < 1 or d.shape[0] < 1 or lo.shape[0] != n_classes \
            or hi.shape[0] != n_classes or lo.shape[1] != qi.n_qi or hi.shape[1] != qi.n_qi \
            or q.shape[0] != counts.shape[1]:
        raise ValueError("ensure_t: shape mismatch")
    cdef anonset_msa_sa sa = sa_spec(d, d_off, counts.shape[1], q, n_nodes, node_off, parent,
                                     weight)
    if diverse is not None:
        if diverse.shape[0] != d.shape[0]:
            raise ValueError("ensure_t: diverse needs one flag per sensitive attribute")
        sa.diverse = &diverse[0]
    into = np.empty(n_classes, dtype=np.int64)
    cdef int64_t[::1] o = into
    cdef int32_t *lop = &lo[0, 0] if qi.n_qi > 0 else NULL
    cdef int32_t *hip = &hi[0, 0] if qi.n_qi > 0 else NULL
    with nogil:
        status = anonset_msa_ensure_t(&sa, &qi, n_classes, &counts[0, 0], lop, hip, t,
                                      n_threads, &o[0], &merges)
    check_status(status, "ensure_t", _BAD)
    return into, int(merges)


def class_emd(const int64_t[::1] d, const int64_t[::1] d_off, const int64_t[:, ::1] counts,
              const double[::1] q, const int64_t[::1] n_nodes, const int64_t[::1] node_off,
              const int64_t[::1] parent, const double[::1] weight):
    """Largest EMD over the sensitive attributes, per class row."""
    cdef int64_t n_classes = counts.shape[0]
    cdef int status
    out = np.zeros(n_classes, dtype=np.float64)
    if n_classes == 0:
        return out
    cdef anonset_msa_sa sa = sa_spec(d, d_off, counts.shape[1], q, n_nodes, node_off, parent,
                                     weight)
    cdef double[::1] o = out
    with nogil:
        status = anonset_msa_class_emd(&sa, n_classes, &counts[0, 0], &o[0])
    check_status(status, "class_emd", _BAD)
    return out

# ------------------------------------------------------------ fork safety
def _one_thread_after_fork():
    """Run this module's kernels on one thread from now on (anonset._fork:
    a process forked after OpenMP teams ran cannot start another)."""
    anonset_mark_fork_child()


from anonset._fork import adopt as _adopt    # noqa: E402
_adopt(_one_thread_after_fork)
