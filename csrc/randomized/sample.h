/* Random-set publishing for papers 000 and 004 (Sec. V-B of 000).
 *
 * For every row i and attribute j: with probability p_j (a coin) the set holds
 * the true value and eta_j - 1 distinct other values drawn uniformly from
 * D(S_j) \ {true}; otherwise it holds eta_j distinct values drawn uniformly
 * from D(S_j).  Sets are bitmasks over the domain (bit v = value v), so the
 * storage never reveals which member was the true value. */
#ifndef ANONSET_SAMPLE_H
#define ANONSET_SAMPLE_H

#include "rng.h"

/* Maximum domain size: draws are 16-bit (Lemire's unbiased method). */
#define ANONSET_MAX_DOMAIN 65536

/* codes[j]: n codes of attribute j in [0, d[j]);
 * eta[j]:   set size in [1, d[j]];
 * coin[j]:  head iff a uniform 32-bit word < coin[j]; coin in [0, 2^32]
 *           (2^32 = always head, i.e. p_j = 1);
 * exact[j]: nonzero = publish the true value alone (non-sensitive QID);
 * attr_id[j]: the attribute's stream id (its position in the schema), so that
 *           the sets of a column do not depend on which other columns are
 *           published in the same call;
 * row0:     global index of codes[j][0] (streaming / partitions);
 * counters: NULL, or one entry per attribute: NULL (the cell's counter is
 *           its global row, row0 + i) or n counters that replace the row
 *           (persistent-key mode: a counter per (record id, value), so the
 *           same record and value get the same set in every release);
 * out[j]:   n * words(d[j]) uint64, overwritten.
 * Cell (row r, attribute s) reads words 2*(s&7) (the coin) and 2*(s&7)+1
 * of block (counter r, stream s>>3, sub 0), then, if it needs more, blocks
 * (r, 0x80000000|s, 0), (r, 0x80000000|s, 1), ...  Where the domain has at
 * most 64 values and C(n, k) <= 16384 (n, k = d-1, eta-1 on head and d, eta
 * on tail), one bounded 32-bit draw indexes a table of all k-subsets in colex
 * order; otherwise Floyd's algorithm draws k bounded 16-bit integers. */
int anonset_sample_sets(const anonset_key *key, int64_t n, int64_t row0, int q,
                        const int32_t *const *codes, const int32_t *d,
                        const int32_t *eta, const uint64_t *coin,
                        const int32_t *exact, const int32_t *attr_id,
                        const uint64_t *const *counters,
                        uint64_t *const *out, int n_threads);

#endif
