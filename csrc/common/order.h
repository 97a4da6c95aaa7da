/* Keyed row order for the published output (the shuffle of the safe
 * defaults): each row's 64-bit rank, and the permutation sorting rows by
 * (rank, row).
 *
 * anonset_rank_words: the first 64 bits (words 0 and 1, little-endian) of the
 * generator block at counter counter0 + i, for i in [0, n): the same ranks as
 * anonset_fill's blocks, without writing the other 56 bytes of each block.
 *
 * anonset_rank_order: perm[j] is the position of the j-th smallest of n
 * 64-bit keys, ties in position order (a stable argsort), by an LSD radix
 * sort (11-bit digits, digits equal over all keys skipped): O(n), where a
 * comparison sort of random 64-bit keys takes O(n log n) and most of the
 * time of a shuffled block.  Keyed ranks are uniform, so their top varying
 * log2(n) + 4 bits (rounded up to whole digits) almost order them: those
 * bits are packed above each key's position into one word, which is all a
 * pass moves, and the few runs of keys equal on them are ordered by an
 * insertion sort (every digit is sorted instead when a run is longer than
 * 64).  2-3 passes where the whole key took 6. */
#ifndef ANONSET_ORDER_H
#define ANONSET_ORDER_H

#include "anonset_common.h"
#include "rng.h"

void anonset_rank_words(const anonset_key *k, uint64_t counter0, uint32_t stream, uint32_t sub,
                        int64_t n, uint64_t *out, int n_threads, int level);

int anonset_rank_order(const uint64_t *keys, int64_t n, int64_t *perm);

#endif
