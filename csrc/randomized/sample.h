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

/* Maximum domain size: Floyd's bounds and the virtual-index arithmetic are
 * sized for it. */
#define ANONSET_MAX_DOMAIN 65536

/* Version of the stream layout below (bumped whenever the sets drawn for a
 * given key change). */
#define ANONSET_SAMPLE_STREAM 2

/* codes[j]: n codes of attribute j in [0, d[j]);
 * eta[j]:   set size in [1, d[j]];
 * coin[j]:  head iff a uniform 32-bit word < coin[j]; coin in [0, 2^32]
 *           (2^32 = always head, i.e. p_j = 1; 0 = always tail);
 * exact[j]: nonzero = publish the true value alone (non-sensitive QID);
 * attr_id[j]: the attribute's stream id s (its position in the schema), so
 *           that the sets of a column do not depend on which other columns
 *           are published in the same call;
 * row0:     global index of codes[j][0] (streaming / partitions);
 * counters: NULL, or one entry per attribute: NULL (the cell's counter is
 *           its global row, row0 + i) or n counters that replace the row
 *           (persistent-key mode: a counter per (record id, value), so the
 *           same record and value get the same set in every release);
 * out[j]:   n * words(d[j]) uint64, overwritten.
 *
 * Stream layout (version 2).  Attribute s draws from its own keystream: the
 * 64-bit draw word t is words 2(t mod 8) (low half) and 2(t mod 8) + 1 of
 * block (counter t div 8, stream s, sub 0); the coin of counter r, drawn only
 * where 0 < coin < 2^32, is word r mod 16 of block (r div 16, s, sub 1); a
 * draw word t that Lemire's method rejects is replaced by the same position
 * of sub 2, then sub 3, ...  Which words a cell reads depends only on
 * (d, eta, coin) of its attribute:
 *  - a subset of n values of size k (head: n, k = d - 1, eta - 1 and a gap is
 *    opened at the true value; tail: n, k = d, eta) with C(n, k) <= 16,384
 *    and n <= 64 is one index into the table of all k-subsets in colex
 *    order; such indices are packed g to a word (g in 1, 2, 4, 8: the
 *    largest with every product of g counts <= 2^52): counter r uses digit
 *    r mod g of word r div g (mixed radix, first digit most significant, one
 *    Lemire draw of the product of the g counts);
 *  - otherwise every counter r owns words r W .. r W + W - 1, W fixed by the
 *    attribute: for n <= 64 one word, a uniform index into C(n, k) unranked
 *    through the compositions of the k-subset over parts of 16 values; for
 *    d > 64 Floyd's algorithm on min(k, n - k) draws packed into words
 *    (product of bounds <= 2^52), complemented when k > n / 2.
 * Every cell is thus a pure function of (key, counter, s, d, eta, coin). */
int anonset_sample_sets(const anonset_key *key, int64_t n, int64_t row0, int q,
                        const int32_t *const *codes, const int32_t *d,
                        const int32_t *eta, const uint64_t *coin,
                        const int32_t *exact, const int32_t *attr_id,
                        const uint64_t *const *counters,
                        uint64_t *const *out, int n_threads);

#endif
