/* Local generalization and bucketization (paper 002, Li, He & Sun): the
 * partitioning kernels.
 *
 *  - anonset_lgb_bucketize: Alg. 2 for one attribute (recursive median split
 *    while both halves stay l-eligible, then the Anatomy / m-invariance
 *    assignment into buckets with every value at most once and >= l values).
 *  - anonset_lgb_mondrian:  Alg. 3 on one QI-partition subset (strict median
 *    splits, both sides >= k, dimensions tried in decreasing NCP width).
 *  - anonset_lgb_topdown:   Alg. 4 on one subset (Xu et al. 2006 top-down:
 *    two far seeds, greedy assignment by NCP increase, optional >= k
 *    balancing).
 *
 * Plain C ABI: pointers + sizes, caller-owned outputs, anonset_status codes.
 * The kernels are serial: the partition recursions are sequential, and the
 * whole Adult table partitions in well under a second (see docs/lgb.md).
 *
 * Cost tables (NCP of generalizing a code range [lo, hi] on attribute a):
 *   cost_kind[a] == 0: numeric, cost = tab[hi] - tab[lo] with tab the domain
 *                      values divided by their range (increasing);
 *   cost_kind[a] == 1: matrix, cost = tab[lo * d[a] + hi] (categorical with a
 *                      hierarchy whose subtrees are contiguous code ranges).
 * tab for attribute a starts at cost_tab + cost_off[a].
 */
#ifndef ANONSET_LGB_H
#define ANONSET_LGB_H

#include <stdint.h>

#include "anonset_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alg. 2.  The n = sum(run_count) tuples are sorted by value; run r holds
 * run_count[r] >= 1 tuples of the r-th smallest value.  The whole set must be
 * l-eligible (max run_count * l <= n), else ANONSET_ERR_VALUE.  Writes
 * bucket[i] (0-based, increasing with the value ranges of the leaf sets) for
 * each tuple position i and *n_buckets. */
int anonset_lgb_bucketize(int64_t n_runs, const int64_t *run_count, int64_t l,
                          int64_t *bucket, int64_t *n_buckets);

/* Alg. 3 on the rows idx[0..m-1] of one subset.  codes: q columns of length
 * n_total (column a at codes + a * n_total).  attrs[0..na-1]: the attributes
 * holding QI values in this subset.  Reorders idx so that every group is a
 * contiguous run; writes group_end[g] (exclusive end of group g in idx) and
 * *n_groups (group_end needs room for m / k entries).  m >= k required.
 * below_max: where the lower median of an attribute is the node's largest
 * value (S_r of lines 12-13 empty), nonzero splits below that value (S_l =
 * the smaller values, S_r = the largest); zero follows Alg. 3 as printed
 * (the attribute cannot split the node). */
int anonset_lgb_mondrian(int64_t m, int64_t *idx, int64_t n_total, const int32_t *codes,
                         int32_t na, const int32_t *attrs, const int32_t *dom,
                         const int32_t *cost_kind, const int64_t *cost_off,
                         const double *cost_tab, int64_t k, int32_t below_max,
                         int64_t *group_end, int64_t *n_groups);

/* Alg. 4 on one subset; same arguments as anonset_lgb_mondrian, plus
 * balance: nonzero applies Xu et al.'s adjustment (a side with < k rows takes
 * the k - |G| rows of the other side that widen it least, so every group of a
 * node >= 2k gets k..2k-1 rows); zero follows Alg. 4 as printed (an
 * undersized side makes the whole node one group, line 19). */
int anonset_lgb_topdown(int64_t m, int64_t *idx, int64_t n_total, const int32_t *codes,
                        int32_t na, const int32_t *attrs, const int32_t *dom,
                        const int32_t *cost_kind, const int64_t *cost_off,
                        const double *cost_tab, int64_t k, int32_t balance,
                        int64_t *group_end, int64_t *n_groups);

#ifdef __cplusplus
}
#endif
#endif /* ANONSET_LGB_H */
