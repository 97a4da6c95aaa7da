/* Earth mover's distance for tree ground metrics (equal, ordered, values,
 * hierarchical), batched over many distributions against one reference.
 *
 * Every ground distance anonset offers is a tree metric: leaves 0..d-1 are the
 * domain values, nodes d..n_nodes-1 are inner nodes (or, for a path, the leaves
 * themselves chain to each other), parent[v] > v for every non-root node and
 * parent[root] = -1.  Then
 *
 *     EMD(p, q) = sum_{v != root} weight[v] * | sum_{leaves i below v} (p_i - q_i) |
 *
 * which one bottom-up pass computes in O(n_nodes) per distribution.
 *
 * Plain C ABI: pointers + sizes, caller-owned outputs, anonset_status codes
 * (ANONSET_ERR_VALUE: bad size or not a tree; ANONSET_ERR_NOMEM: scratch).
 * Rows are processed in fixed-size chunks (ANONSET_EMD_CHUNK rows) and each
 * output depends on its row only, so results are bit-identical for any number
 * of threads.
 */
#ifndef ANONSET_EMD_H
#define ANONSET_EMD_H

#include <stdint.h>

#include "anonset_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows per chunk of the parallel loop (fixed: never derived from threads). */
#define ANONSET_EMD_CHUNK 256

/* A second thread is used only when the batch has at least this many tree
 * nodes of work per thread (n_rows * n_nodes): waking a thread on a loaded
 * 2-core VM costs milliseconds, a node about a nanosecond. */
#define ANONSET_EMD_WORK_PER_THREAD (1 << 20)

/* out[r] = EMD(P[r, :] / sum(P[r, :]), q) for r < n_rows.
 * q must already sum to 1.  A row with zero total mass gives out[r] = NaN.
 * P is row-major n_rows x d. */
int anonset_tree_emd_batch_i64(int64_t n_rows, int64_t d, const int64_t *P,
                               const double *q, int64_t n_nodes,
                               const int64_t *parent, const double *weight,
                               int n_threads, double *out);

int anonset_tree_emd_batch_f64(int64_t n_rows, int64_t d, const double *P,
                               const double *q, int64_t n_nodes,
                               const int64_t *parent, const double *weight,
                               int n_threads, double *out);

/* out = EMD(p / sum(p), q / sum(q)) for one pair of length-d vectors, with
 * one validation pass over each input.  On bad input returns ANONSET_ERR_VALUE
 * and sets *bad: 1 / 2 / 3 = p has a NaN or infinite entry / a negative entry /
 * zero total mass, 4 / 5 / 6 = the same for q, 7 = the tree (see
 * anonset_tree_check).  NaN / inf take precedence over negative entries. */
int anonset_tree_emd_pair(int64_t d, const double *p, const double *q,
                          int64_t n_nodes, const int64_t *parent,
                          const double *weight, double *out, int *bad);

/* Checks parent[] describes a tree with parent[v] > v (root: -1, exactly one,
 * the last node).  Returns ANONSET_OK or ANONSET_ERR_VALUE. */
int anonset_tree_check(int64_t n_nodes, int64_t d, const int64_t *parent);

#ifdef __cplusplus
}
#endif
#endif /* ANONSET_EMD_H */
