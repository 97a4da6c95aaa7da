/* Counter-based random streams for anonset.
 *
 * Every block of 16 x 32-bit words is a pure function of
 * (key, counter, stream, sub): no state is shared between records, threads or
 * processes, so the output for a given key does not depend on the number of
 * threads or on how a table is partitioned.
 *
 * Two generators:
 *   ANONSET_RNG_CHACHA20  ChaCha20 block function (RFC 8439), cryptographically
 *                         strong; state words 12..15 = (counter lo, counter hi,
 *                         stream, sub).  The default.
 *   ANONSET_RNG_PHILOX    Philox4x64-10 (Salmon et al. 2011), two calls per
 *                         block; fast, statistically good, NOT cryptographic.
 */
#ifndef ANONSET_RNG_H
#define ANONSET_RNG_H

#include "anonset_common.h"

typedef enum { ANONSET_RNG_CHACHA20 = 0, ANONSET_RNG_PHILOX = 1 } anonset_rng_kind;

typedef struct {
    uint32_t key[8];   /* 256-bit key */
    int kind;          /* anonset_rng_kind */
} anonset_key;

/* One 64-byte block. */
void anonset_block(const anonset_key *k, uint64_t counter, uint32_t stream,
                   uint32_t sub, uint32_t out[16]);

/* Eight blocks for counters counter0..counter0+7 (same stream and sub),
 * written to out[0..127]; equal to eight calls of anonset_block. */
void anonset_block8(const anonset_key *k, uint64_t counter0, uint32_t stream,
                    uint32_t sub, uint32_t out[128]);

/* nblocks blocks for counters counter0, counter0 + 1, ... (same stream and
 * sub), written to out[0 .. 16 nblocks); equal to nblocks calls of
 * anonset_block, computed 16 or 8 side by side (SIMD, chosen at run time). */
void anonset_blocks(const anonset_key *k, uint64_t counter0, uint32_t stream,
                    uint32_t sub, int64_t nblocks, uint32_t *out);

/* nblocks blocks at the counters counters[0 .. nblocks) (same stream and
 * sub), written to out[0 .. 16 nblocks); equal to nblocks calls of
 * anonset_block, computed 16 or 8 side by side. */
void anonset_blocks_at(const anonset_key *k, const uint64_t *counters, uint32_t stream,
                       uint32_t sub, int64_t nblocks, uint32_t *out);

/* The SIMD level this CPU supports (ANONSET_SIMD_*), and anonset_blocks /
 * anonset_fill at a given level (at most the supported one): every level
 * gives the same bytes (tested). */
int anonset_simd_level(void);
void anonset_blocks_simd(const anonset_key *k, uint64_t counter0, uint32_t stream,
                         uint32_t sub, int64_t nblocks, uint32_t *out, int level);
void anonset_blocks_at_simd(const anonset_key *k, const uint64_t *counters, uint32_t stream,
                            uint32_t sub, int64_t nblocks, uint32_t *out, int level);
void anonset_fill_simd(const anonset_key *k, uint64_t counter0, uint32_t stream,
                       uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads, int level);

/* Philox4x64-10 on one 256-bit counter and 128-bit key, as a building block
 * (exposed for known-answer tests). */
void anonset_philox4x64(const uint64_t ctr[4], const uint64_t key[2], uint64_t out[4]);

/* Fill out[0..n) with consecutive blocks (counter = counter0 + b); for tests
 * and benchmarks of raw generator throughput. */
void anonset_fill(const anonset_key *k, uint64_t counter0, uint32_t stream,
                  uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads);

#endif
