/* A k-d tree over the distinct QI tuples of every cluster of paper 003's
 * Pseudocode 1 (GenerateEquivalenceClasses), so that "the alive record of
 * cluster c nearest to the seed by eq. 2" costs about O(log n) instead of a
 * scan over the cluster.
 *
 * The tree answers exactly what the scan answered: among the alive entries
 * (distinct tuples) of the cluster, the one with the least squared eq. 2
 * distance, ties to the least position in the caller's alive list (the scan
 * order).  Pruning is exact: a node's lower bound is summed over the QIs in
 * the order of anonset_msa_qi_sqd, each term no larger than the entry's own
 * term (a numeric QI: the rank gap to the node's range; a table QI: 0 when
 * the query's leaf is below the node's LCA, else the table entry of the query
 * and that LCA, which every leaf below it shares in a tree metric), so by the
 * monotonicity of rounded addition no entry of a pruned node (lower bound >
 * best) can be nearer or tie.
 *
 * Nodes keep their static bounds and a count of alive entries; removing an
 * entry decrements the counts on its leaf's path.
 */
#ifndef ANONSET_MSA_INDEX_H
#define ANONSET_MSA_INDEX_H

#include <stdint.h>

#include "msa.h"

/* Squared QI distance of eq. 2 between two code rows (a: the query). */
static inline double anonset_msa_qi_sqd(const anonset_msa_qi *s, const int32_t *a,
                                        const int32_t *b)
{
    double acc = 0.0;
    for (int32_t j = 0; j < s->n_qi; ++j) {
        if (s->kind[j] == 0) {
            const double df = (double)(a[j] - b[j]) * s->scale[j];
            acc += df * df;
        } else {
            acc += s->tab[s->tab_off[j] + (int64_t)a[j] * s->dom[j] + b[j]];
        }
    }
    return acc;
}

typedef struct {
    int64_t n_nodes;
    int32_t n_qi;
    int64_t *perm;          /* entries, each node's contiguous in [nb, ne) */
    int32_t *code;          /* perm order x n_qi: the entries' tuples (scanned in order) */
    char *gone;             /* perm order: the entry has no alive record */
    int64_t *slot;          /* entry: its position in perm */
    int64_t *nb, *ne;       /* node: range of perm */
    int64_t *left, *right;  /* node: children (-1: a leaf) */
    int64_t *parent;        /* node: parent (-1: a root) */
    int64_t *alive;         /* node: alive entries below */
    int32_t *blo, *bhi;     /* node x n_qi: rank range (numeric), LCA node (table; blo) */
    int64_t *root;          /* cluster: root node (-1: empty) */
    int64_t *leaf_of;       /* entry: its leaf */
} anonset_msa_index;

/* Build over the entries cbeg[c] .. cbeg[c] + cne[c] - 1 of every cluster c;
 * entry e's tuple is xu + etid[e] * n_qi.  qi->lca may be NULL (table QIs then
 * do not prune).  Returns an anonset_status. */
int anonset_msa_index_build(anonset_msa_index *X, const anonset_msa_qi *qi, const int32_t *xu,
                            int64_t n_ent, const int64_t *etid, int32_t n_clusters,
                            const int64_t *cbeg, const int64_t *cne);

/* The alive entry (not removed) of cluster c nearest to the tuple xr: least
 * (distance, epos[e]); -1 when the cluster has none. */
int64_t anonset_msa_index_nearest(const anonset_msa_index *X, const anonset_msa_qi *qi,
                                  const int64_t *epos, int32_t c, const int32_t *xr);

/* Entry e has no alive record left. */
void anonset_msa_index_remove(anonset_msa_index *X, int64_t e);

void anonset_msa_index_free(anonset_msa_index *X);

#endif
