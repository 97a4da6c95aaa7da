/* Kernels of paper 003 (Wang et al., t-closeness for multiple sensitive
 * attributes): the two hot loops of the cluster-, PCA- and microaggregation-
 * based algorithms.
 *
 * 1. anonset_msa_generate_ecs: GenerateEquivalenceClasses (Pseudocode 1).
 *    Records are grouped into clusters (by SA similarity).  Each round takes a
 *    seed record r and, from every cluster, the alive record nearest to r by
 *    the QI distance of eq. 2, plus one more from every cluster still larger
 *    than the smallest one.  Seeds come either from a caller-given order (the
 *    paper's "random record of the smallest cluster") or, for the
 *    microaggregation contrast (Soria-Comas et al. 2015), are the alive record
 *    farthest from the centroid of the alive records (MDAV).
 *
 * 2. anonset_msa_ensure_t: EnsureTCloseness (Pseudocode 2).  Classes are
 *    visited in id order; while a class's largest EMD over the sensitive
 *    attributes (Def. 4) exceeds t (or, where asked, it holds one value of
 *    an attribute alone) it absorbs the alive class whose centroid
 *    (the LCA of each QI; a range for numeric QIs) is nearest by eq. 2.
 *
 * QI distance (eq. 2), squared: sum over QIs of
 *   numeric QI (kind 0):  ((a - b) * scale)^2 with ranks a, b and
 *                         scale = 1 / (m - 1) (distNum);
 *   table QI   (kind 1):  tab[off + a * dom + b] (distCat^2, from the caller).
 *
 * Plain C ABI, caller-owned buffers, anonset_status codes.  Every result is a
 * pure function of the inputs: parallel loops split fixed work (one cluster
 * per iteration, or fixed chunks with a lexicographic (distance, id)
 * reduction), so results are identical for any number of threads.
 */
#ifndef ANONSET_MSA_H
#define ANONSET_MSA_H

#include <stdint.h>

#include "anonset_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* seed_mode */
#define ANONSET_MSA_SEED_ORDER 0     /* seeds: seed_order, in order */
#define ANONSET_MSA_SEED_FARTHEST 1  /* seeds: farthest from the alive centroid */

/* The quasi-identifiers, as every kernel reads them.  Per QI j: kind[j]
 * (0: numeric, a rank; 1: a node of a table), scale[j] (numeric:
 * 1 / (m - 1), distNum), dom[j] (table: its number of nodes) and tab_off[j]
 * (table: the offset of its dom x dom block in tab and lca).  tab: squared
 * distCat of two nodes, (LCA level / height)^2, also for a == b; lca: their
 * LCA node (read by anonset_msa_ensure_t only; may be NULL otherwise). */
typedef struct {
    int32_t n_qi;
    const int32_t *kind;
    const double *scale;
    const int32_t *dom;
    const int64_t *tab_off;
    const double *tab;
    const int32_t *lca;
} anonset_msa_qi;

/* The sensitive attributes.  The EMD ground of attribute s is a tree: nodes
 * [node_off[s], node_off[s] + n_nodes[s]) of parent and weight. */
typedef struct {
    int32_t n_sa;
    const int64_t *d, *d_off;  /* attribute s: columns [d_off[s], d_off[s] + d[s]) */
    int64_t d_total;           /* columns of a class's count row */
    const double *q;           /* d_total: the table's distribution, per attribute */
    const int64_t *n_nodes, *node_off;
    const int64_t *parent;     /* local ids, leaves first, parent > child, root last */
    const double *weight;
    const uint8_t *diverse;    /* n_sa or NULL: 1 where a class that holds one value of
                                * the attribute alone also violates (ensure_t only) */
} anonset_msa_sa;

/* Clusters of Pseudocode 1 and where its seeds come from.  Cluster c holds
 * the records members[cl_start[c] .. cl_start[c+1]), records with the same
 * tuple contiguous (the last of them is taken first).  seed_order: for
 * ANONSET_MSA_SEED_ORDER, the records of the smallest cluster (the first
 * smallest) in the order they become seeds.  Nearest searches use a k-d tree
 * per cluster (msa_index.h), with the scan's exact answer. */
typedef struct {
    int32_t n_clusters;
    const int64_t *cl_start, *members;
    int32_t seed_mode;
    const int64_t *seed_order;
    int64_t n_seed_order;
    int32_t reference_scan;    /* 1: nearest searches by a scan of the cluster, O(n) each
                                * (the reference the k-d tree is tested against) */
} anonset_msa_clusters;

/* Pseudocode 1.  xu: n_tuples x n_qi codes (row-major) of the distinct QI
 * tuples; tid[i]: the tuple of record i.  ec_out[i]: equivalence class of
 * record i (0 .. *n_ec_out - 1); records that remain after the smallest
 * cluster is exhausted (only possible when the cluster sizes differ by more
 * than a factor of two) join the class of the seed nearest to them. */
int anonset_msa_generate_ecs(const anonset_msa_qi *qi, const anonset_msa_clusters *cl,
                             int64_t n, const int32_t *xu, int64_t n_tuples,
                             const int64_t *tid, int n_threads, int64_t *ec_out,
                             int64_t *n_ec_out);

/* Pseudocode 2 on classes 0 .. n_classes-1.
 * counts: n_classes x d_total (modified: merged rows are summed).
 * Centroids: lo, hi: n_classes x n_qi (modified).  Numeric QI: rank range
 *   [lo, hi]; distance: span of the union of the ranges.  Table QI: lo is a
 *   node id; merged centroids take the LCA node.
 * t: a class violates when its largest EMD exceeds t, or when it holds one
 *   value alone of an attribute with sa->diverse[a] set (its rows' value
 *   would be told by the class).
 * into: output, the class each class ends up in (itself when alive). */
int anonset_msa_ensure_t(const anonset_msa_sa *sa, const anonset_msa_qi *qi,
                         int64_t n_classes, int64_t *counts, int32_t *lo, int32_t *hi,
                         double t, int n_threads, int64_t *into, int64_t *n_merges);

/* EMD of every class row against q, max over the sensitive attributes
 * (Def. 4).  out: n_classes.  Same arithmetic as anonset_msa_ensure_t. */
int anonset_msa_class_emd(const anonset_msa_sa *sa, int64_t n_classes,
                          const int64_t *counts, double *out);

#ifdef __cplusplus
}
#endif

#endif
