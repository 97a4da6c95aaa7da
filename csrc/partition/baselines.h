/* Kernels of the papers' partition baselines (anonset.partition.baselines):
 * Anatomy (Xiao & Tao, VLDB 2006), l-diverse Mondrian (LeFevre et al., ICDE
 * 2006, strict multidimensional), TP (Xiao, Yi & Tao, EDBT 2010) and Rating
 * (Liu, Luo & Huang, ICDM Workshops 2011).
 *
 *  - anonset_diverse_groups: Anatomy's group creation on each segment of
 *    rows.  Anatomy and Rating run it on the whole table (Rating once per
 *    attribute), TP's first phase once per QID point.
 *  - anonset_mondrian_ldiverse: strict multidimensional median splits while
 *    both halves stay frequency l-diverse.
 *
 * Plain C ABI: pointers + sizes, caller-owned outputs, anonset_status codes.
 * Both kernels are serial (the group loop and the split recursion are
 * sequential); callers validate the inputs, the kernels re-check codes and
 * sizes.  Frequency l-diversity of a set of rows: no sensitive value is held
 * by more than 1/l of them (max count * l <= rows).
 */
#ifndef ANONSET_BASELINES_H
#define ANONSET_BASELINES_H

#include <stdint.h>

#include "anonset_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Group creation of Anatomy (Xiao & Tao 2006, Sec. 5, the loop before the
 * residue assignment) on each segment [seg_off[s], seg_off[s + 1]) of the
 * positions 0..n-1.  codes[i] in [0, d) is the sensitive value at position i.
 * While at least l distinct values still have rows in the segment, one group
 * takes one row from each of the l values with the most rows left (ties are
 * broken deterministically); a value's rows are taken in position order, so the
 * caller shuffles positions with a keyed permutation first.  Writes group[i]
 * (0-based, numbered in creation order across segments) or -1 for a row left
 * over, and *n_groups. */
int anonset_diverse_groups(int64_t n, int64_t n_seg, const int64_t *seg_off,
                           const int32_t *codes, int32_t d, int64_t l,
                           int64_t *group, int64_t *n_groups);

/* l-diverse strict multidimensional Mondrian on the rows idx[0..m-1].
 * codes: q QID columns of length n_total (column a at codes + a * n_total),
 * code values in [0, dom[a]); sens[row] in [0, d_s) the sensitive value.  A
 * node is split on the attribute of widest normalized range (max - min) /
 * (dom - 1) whose median cut leaves two frequency l-diverse halves: first
 * left = {x <= median}, then left = {x < median}; attributes are tried in
 * decreasing width.  tries > 1 also tries the values at tries - 1 further
 * ranks, alternately below and above the median (a relaxed Mondrian; 1 is
 * LeFevre et al.'s median cut).  A node with no allowable cut is a group.  idx[0..m-1]
 * must be frequency l-diverse.  Reorders idx so that every group is a
 * contiguous run; writes group_end[g] (exclusive end in idx, increasing) and
 * *n_groups; group_end needs room for m / l entries. */
int anonset_mondrian_ldiverse(int64_t m, int64_t *idx, int64_t n_total, int32_t q,
                              const int32_t *codes, const int32_t *dom,
                              const int32_t *sens, int32_t d_s, int64_t l, int32_t tries,
                              int64_t *group_end, int64_t *n_groups);

#ifdef __cplusplus
}
#endif
#endif /* ANONSET_BASELINES_H */
