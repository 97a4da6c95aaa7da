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

/* Checks parent[] describes a tree with parent[v] > v (root: -1, exactly one,
 * the last node).  Returns ANONSET_OK or ANONSET_ERR_VALUE. */
int anonset_tree_check(int64_t n_nodes, int64_t d, const int64_t *parent);

#ifdef __cplusplus
}
#endif
#endif /* ANONSET_EMD_H */
