/* Bounded draws from a counter-based stream, shared by the set samplers
 * (sample.c for paper 000, semantic.c for paper 001).
 *
 * A draw stream hands out 16-bit half-words: first those of the words the
 * caller gives (the cell's own words of a shared block), then the words of
 * overflow blocks (counter row, stream `stream`, sub = sub0, sub0 + 1, ...).
 * Everything is a pure function of (key, row, stream): the thread schedule
 * cannot change a draw. */
#ifndef ANONSET_DRAWS_H
#define ANONSET_DRAWS_H

#include "rng.h"

typedef struct {
    const anonset_key *key;
    uint64_t row;
    uint32_t stream;    /* overflow stream id, tag included */
    uint32_t sub;       /* next overflow block */
    int nwords;         /* words available in w */
    int pos;            /* next half-word */
    uint32_t w[16];
} anonset_draws;

/* Start a stream on the caller's words (at most 16), then overflow blocks
 * (row, stream, sub0), (row, stream, sub0 + 1), ... */
static inline void anonset_draws_init(anonset_draws *c, const anonset_key *key, uint64_t row,
                                      uint32_t stream, uint32_t sub0, const uint32_t *words,
                                      int nwords) {
    c->key = key; c->row = row; c->stream = stream; c->sub = sub0;
    c->nwords = nwords; c->pos = 0;
    for (int i = 0; i < nwords; i++) c->w[i] = words[i];
}

static inline uint32_t anonset_next16(anonset_draws *c) {
    if (c->pos >= 2 * c->nwords) {
        anonset_block(c->key, c->row, c->stream, c->sub++, c->w);
        c->nwords = 16;
        c->pos = 0;
    }
    uint32_t v = (c->w[c->pos >> 1] >> (16 * (c->pos & 1))) & 0xFFFFu;
    c->pos++;
    return v;
}

/* Uniform integer in [0, n), 1 <= n <= 65536, without modulo bias
 * (Lemire 2019, 16-bit variant: reject the low part below 2^16 mod n). */
static inline uint32_t anonset_bounded16(anonset_draws *c, uint32_t n) {
    if (n <= 1) return 0;
    uint32_t x = anonset_next16(c) * n;
    uint32_t l = x & 0xFFFFu;
    if (l < n) {
        uint32_t t = (65536u - n) % n;
        while (l < t) {
            x = anonset_next16(c) * n;
            l = x & 0xFFFFu;
        }
    }
    return x >> 16;
}

/* Uniform integer in [0, n), 2 <= n < 2^32, from the 32-bit words of the
 * overflow blocks (row, stream, sub0), (row, stream, sub0 + 1), ... in order
 * (Lemire 2019, 32-bit; a word is rejected when the low half of w * n is
 * below thr = 2^32 mod n, probability < n / 2^32).  The slow path of a draw
 * whose first word was rejected. */
static inline uint32_t anonset_bounded32_overflow(const anonset_key *key, uint64_t row,
                                                  uint32_t stream, uint32_t sub0,
                                                  uint32_t n, uint32_t thr) {
    uint32_t blk[16];
    uint32_t sub = sub0;
    uint64_t x;
    int off = 16;
    do {
        if (off == 16) { anonset_block(key, row, stream, sub++, blk); off = 0; }
        x = (uint64_t)blk[off++] * n;
    } while ((uint32_t)x < thr);
    return (uint32_t)(x >> 32);
}

#endif
