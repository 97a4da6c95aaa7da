/* Tallies of a block's cells for the table digest (engine/stats.py): the
 * row mixes of global row indices, and per small whole value its count and
 * the sum (mod 2^64) of its rows' mixes, in one pass.
 *
 * anonset_row_mix: out[i] = splitmix64's finalizer of row0 + i, made odd
 * (| 1), for i in [0, n): the words passthrough._mix64 computes.
 *
 * anonset_small_tally: vals holds n integers of `width` bytes (1, 2, 4 or
 * 8; signed when `is_signed`).  Returns -1 when one lies outside [0, cap)
 * (nothing else is written), else their largest value m, with counts[v]
 * (v <= m) the number of cells equal to v and, when mix is not NULL,
 * sums[v] the sum of mix[i] over those cells, mod 2^64.  counts and sums
 * hold cap entries and are zeroed here up to m + 1. */
#ifndef ANONSET_TALLY_H
#define ANONSET_TALLY_H

#include <stdint.h>

void anonset_row_mix(uint64_t row0, int64_t n, uint64_t *out);

int64_t anonset_small_tally(const void *vals, int width, int is_signed, int64_t n, int64_t cap,
                            const uint64_t *mix, int64_t *counts, uint64_t *sums);

#endif
