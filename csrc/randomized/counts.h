/* w counting (paper 000, eq. 17) and set-member extraction. */
#ifndef ANONSET_COUNTS_H
#define ANONSET_COUNTS_H

#include "anonset_common.h"

/* w[m] += number of rows whose product set E(r*, S'_1) x ... x E(r*, S'_q)
 * contains cell m of C = D(S'_1) x ... x D(S'_q) (C order: the last attribute
 * varies fastest).
 * masks[j]: n * words[j] uint64 bitmasks over d[j] values;
 * max_set: an upper bound on prod_j |set_j| (the scratch size);
 * w: ncells int64, accumulated into (zero it for a fresh count).
 * Each thread counts into a private table, summed at the end: integer sums,
 * so the result is the same for any number of threads. */
int anonset_count_w(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                    int64_t max_set, int64_t ncells, int64_t *w, int n_threads);

/* The same with the method chosen: 0 = by cost (what anonset_count_w does),
 * 1 = direct (every row increments each cell of its product set), 2 =
 * factorized where an attribute has at most 16 values (rows grouped by that
 * attribute's set, the other attributes' products summed per group and
 * multiplied out), else direct.  Every method gives the same w. */
int anonset_count_w_method(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                           int64_t max_set, int64_t ncells, int64_t *w, int n_threads,
                           int method);

/* members[i*k + t] = t-th smallest member of row i's set (n rows, k members
 * each).  Returns ANONSET_ERR_SETSIZE if a set does not have exactly k members. */
int anonset_members(int64_t n, int32_t d, const uint64_t *mask, int32_t k,
                    int32_t *members, int n_threads);

#endif
