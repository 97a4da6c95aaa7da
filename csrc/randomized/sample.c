#include "sample.h"
#include "draws.h"

#include <stdlib.h>
#include <string.h>

/* A cell's draws (draws.h): first the 2 half-words of its lane word 1 (word 0
 * is the coin), then overflow blocks (row, 0x80000000 | attr, 0, 1, ...). */
#define SAMPLE_OVER 0x80000000u

/* Floyd's algorithm: a uniform k-subset of the n "virtual" indices, where
 * virtual index x is value x (skip < 0) or x + (x >= skip) (skip >= 0), so a
 * subset of D \ {skip} is drawn without building that set.  Bits are set in
 * mask (words 64-bit words), which must be zero on entry except for skip. */
static void floyd(anonset_draws *c, int32_t n, int32_t k, int32_t skip,
                  uint64_t *mask) {
    for (int32_t m = n - k; m < n; m++) {
        int32_t t = (int32_t)anonset_bounded16(c, (uint32_t)m + 1u);
        int32_t vt = (skip >= 0 && t >= skip) ? t + 1 : t;
        int32_t vm = (skip >= 0 && m >= skip) ? m + 1 : m;
        int32_t v = (mask[vt >> 6] >> (vt & 63)) & 1u ? vm : vt;
        mask[v >> 6] |= (uint64_t)1 << (v & 63);
    }
}

/* Floyd's algorithm for domains of at most 64 values, drawing only from the
 * two half-words of the cell's lane word 1: a uniform k-subset of
 * [0, n) as a bitmask, with Lemire's bounded draws and a branch-free
 * collision step.  Returns 0 when the lane runs out of draws (rejections or
 * k > 6); the caller then redoes the cell with the general stream, which
 * consumes the same half-words first and so gives the same set. */
static inline int floyd64_lane(const uint32_t *lane, int32_t n, int32_t k, uint64_t *out) {
    uint64_t lo = lane[1];
    uint64_t hi = 0;
    int left = 2;
    uint64_t m = 0;
    for (int32_t x = n - k; x < n; x++) {
        const uint32_t bound = (uint32_t)x + 1u;
        uint32_t t = 0;
        if (bound > 1) {
            if (!left) return 0;
            uint32_t y = (uint32_t)(lo & 0xFFFFu) * bound;
            lo = (lo >> 16) | (hi << 48); hi >>= 16; left--;
            uint32_t l = y & 0xFFFFu;
            if (l < bound) {
                const uint32_t thr = (65536u - bound) % bound;
                while (l < thr) {
                    if (!left) return 0;
                    y = (uint32_t)(lo & 0xFFFFu) * bound;
                    lo = (lo >> 16) | (hi << 48); hi >>= 16; left--;
                    l = y & 0xFFFFu;
                }
            }
            t = y >> 16;
        }
        const uint64_t bt = (uint64_t)1 << t;
        const uint64_t hit = (uint64_t)0 - (uint64_t)((m & bt) != 0);
        m |= (((uint64_t)1 << x) & hit) | (bt & ~hit);
    }
    *out = m;
    return 1;
}

/* All k-subsets of [0, n) as bitmasks (n <= 64), in colex order: a uniform
 * index into this table is a uniform k-subset for one bounded draw and one
 * load, instead of k draws of Floyd's algorithm.  Used where C(n, k) is at
 * most TABLE_MAX (128 KiB of table). */
#define TABLE_MAX 16384

typedef struct {
    int32_t n, k;
    uint32_t count;       /* C(n, k) */
    uint64_t *subsets;
} subset_table;

static uint32_t binom_capped(int32_t n, int32_t k, uint32_t cap) {
    if (k < 0 || k > n) return 0;
    if (k > n - k) k = n - k;
    uint64_t c = 1;
    for (int32_t i = 1; i <= k; i++) {
        c = c * (uint64_t)(n - k + i) / (uint64_t)i;   /* exact: C(n-k+i, i) */
        if (c > cap) return cap + 1;
    }
    return (uint32_t)c;
}

/* The table for (n, k) from the cache, built on first use; NULL where the
 * table would be too large (or n > 64), or on allocation failure (*nomem). */
static const subset_table *subset_table_get(subset_table *cache, int *ncache, int32_t n,
                                            int32_t k, int *nomem) {
    if (n > 64 || k < 0 || k > n) return NULL;
    for (int i = 0; i < *ncache; i++)
        if (cache[i].n == n && cache[i].k == k) return &cache[i];
    uint32_t count = binom_capped(n, k, TABLE_MAX);
    if (count > TABLE_MAX) return NULL;
    uint64_t *tab = (uint64_t *)malloc((size_t)count * sizeof(uint64_t));
    if (!tab) { *nomem = 1; return NULL; }
    uint64_t v = k == 0 ? 0 : (k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1));
    for (uint32_t i = 0; i < count; i++) {
        tab[i] = v;
        if (i + 1 < count) {          /* Gosper's hack: the next k-subset in colex order */
            uint64_t c = v & (~v + 1);
            uint64_t r = v + c;
            v = (((r ^ v) >> 2) / c) | r;
        }
    }
    subset_table *t = &cache[(*ncache)++];
    t->n = n; t->k = k; t->count = count; t->subsets = tab;
    return t;
}

/* Uniform index in [0, count) from the cell's 32-bit words: lane word 1, then
 * the overflow blocks (Lemire's method; a rejection, probability
 * below count / 2^32, moves to the next word). */
static inline uint32_t pick_index(const anonset_key *key, uint64_t row, uint32_t s,
                                  const uint32_t *lane, uint32_t count) {
    if (count <= 1) return 0;
    uint64_t x = (uint64_t)lane[1] * count;
    uint32_t l = (uint32_t)x;
    if (l < count) {
        const uint32_t thr = (0u - count) % count;
        if (l < thr) return anonset_bounded32_overflow(key, row, SAMPLE_OVER | s, 0, count, thr);
    }
    return (uint32_t)(x >> 32);
}

/* One cell: the set of row `row`, attribute stream s, true value v.
 * ht / tt: subset tables for the head (d-1, eta-1) and tail (d, eta) draws,
 * or NULL to use Floyd's algorithm. */
static inline void sample_cell(const anonset_key *key, uint64_t row, uint32_t s,
                               const uint32_t *lane, int32_t dj, int32_t eta,
                               uint64_t coin, int32_t v, uint64_t *mask, int words,
                               const subset_table *ht, const subset_table *tt) {
    int head = (uint64_t)lane[0] < coin;
    if (eta == dj) {  /* every value: no draw needed */
        for (int w = 0; w < words; w++) mask[w] = ~(uint64_t)0;
        if (dj & 63) mask[words - 1] = ((uint64_t)1 << (dj & 63)) - 1;
        return;
    }
    if (words == 1) {
        uint64_t sub;
        if (head) {
            /* other values: a subset of d-1 virtual indices, then open a gap at v */
            int ok = 1;
            if (ht) sub = ht->subsets[pick_index(key, row, s, lane, ht->count)];
            else ok = floyd64_lane(lane, dj - 1, eta - 1, &sub);
            if (ok) {
                uint64_t low = sub & (((uint64_t)1 << v) - 1);
                mask[0] = low | ((sub ^ low) << 1) | ((uint64_t)1 << v);
                return;
            }
        } else if (tt) {
            mask[0] = tt->subsets[pick_index(key, row, s, lane, tt->count)];
            return;
        } else if (floyd64_lane(lane, dj, eta, &sub)) {
            mask[0] = sub;
            return;
        }
        /* more draws needed than the lane holds: the general path below */
    }
    anonset_draws c;
    anonset_draws_init(&c, key, row, SAMPLE_OVER | s, 0, lane + 1, 1);
    for (int w = 0; w < words; w++) mask[w] = 0;
    if (head) {
        mask[v >> 6] |= (uint64_t)1 << (v & 63);
        floyd(&c, dj - 1, eta - 1, v, mask);
    } else {
        floyd(&c, dj, eta, -1, mask);
    }
}

#define BATCH 32  /* records per batch: 4 calls of 8 lanes per block stream */

int anonset_sample_sets(const anonset_key *key, int64_t n, int64_t row0, int q,
                        const int32_t *const *codes, const int32_t *d,
                        const int32_t *eta, const uint64_t *coin,
                        const int32_t *exact, const int32_t *attr_id,
                        const uint64_t *const *counters,
                        uint64_t *const *out, int n_threads) {
    for (int j = 0; j < q; j++) {
        if (d[j] < 1 || d[j] > ANONSET_MAX_DOMAIN || eta[j] < 1 || eta[j] > d[j] ||
            attr_id[j] < 0 || coin[j] > ((uint64_t)1 << 32))
            return ANONSET_ERR_VALUE;
    }
    if (n <= 0 || q <= 0) return ANONSET_OK;
    /* The distinct block streams (attr_id >> 3) this call needs, and for each
     * attribute the index of its stream in that list. */
    int32_t *groups = (int32_t *)malloc((size_t)q * sizeof(int32_t));
    int32_t *gidx = (int32_t *)malloc((size_t)q * sizeof(int32_t));
    if (!groups || !gidx) { free(groups); free(gidx); return ANONSET_ERR_NOMEM; }
    int ng = 0;
    for (int j = 0; j < q; j++) {
        gidx[j] = -1;
        if (exact[j] || (counters && counters[j])) continue;   /* no shared batch */
        int32_t g = attr_id[j] >> 3;
        int found = -1;
        for (int t = 0; t < ng; t++) if (groups[t] == g) { found = t; break; }
        if (found < 0) { groups[ng] = g; found = ng++; }
        gidx[j] = found;
    }
    /* subset tables, shared read-only by all threads */
    int nomem = 0, ncache = 0;
    subset_table *cache = (subset_table *)calloc((size_t)(2 * q), sizeof(subset_table));
    const subset_table **htab = (const subset_table **)calloc((size_t)q, sizeof(void *));
    const subset_table **ttab = (const subset_table **)calloc((size_t)q, sizeof(void *));
    if (!cache || !htab || !ttab) nomem = 1;
    for (int j = 0; j < q && !nomem; j++) {
        if (exact[j] || d[j] > 64 || eta[j] == d[j]) continue;
        if (coin[j] > 0)
            htab[j] = subset_table_get(cache, &ncache, d[j] - 1, eta[j] - 1, &nomem);
        if (coin[j] < ((uint64_t)1 << 32))
            ttab[j] = subset_table_get(cache, &ncache, d[j], eta[j], &nomem);
    }
    const int64_t nbatch = (n + BATCH - 1) / BATCH;
    int bad = 0;
    int nt = anonset_threads(n_threads);
    (void)nt;
    /* Every cell is a pure function of (key, row, attribute): the schedule
     * cannot change the output. */
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) reduction(|:bad) \
        shared(key, n, row0, q, codes, d, eta, coin, exact, attr_id, counters, out, groups, \
               gidx, ng, nbatch, htab, ttab, nomem) if (!nomem)
#endif
    {
        uint32_t *buf = nomem ? NULL
            : (uint32_t *)malloc((size_t)(ng > 0 ? ng : 1) * 16 * BATCH * sizeof(uint32_t));
        if (!buf) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            nomem = 1;
        }
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(dynamic, 16)
#endif
        for (int64_t b = 0; b < nbatch; b++) {
            if (!buf) continue;
            const int64_t first = b * BATCH;
            const int64_t last = first + BATCH < n ? first + BATCH : n;
            for (int t = 0; t < ng; t++)
                for (int64_t e = 0; e < BATCH; e += 8)
                    anonset_block8(key, (uint64_t)(row0 + first + e), (uint32_t)groups[t], 0u,
                                   buf + (size_t)t * 16 * BATCH + 16 * e);
            for (int j = 0; j < q; j++) {
                const int32_t dj = d[j];
                const int words = (dj + 63) >> 6;
                const uint32_t s = (uint32_t)attr_id[j];
                const int32_t *cj = codes[j];
                uint64_t *oj = out[j];
#if defined(__GNUC__)
                if (last + BATCH <= n) {      /* the next batch of this column */
                    __builtin_prefetch(cj + last, 0, 0);
                    __builtin_prefetch(cj + last + 16, 0, 0);
                    for (int e = 0; e < BATCH * words; e += 8)
                        __builtin_prefetch(oj + last * words + e, 1, 0);
                }
#endif
                for (int64_t i = first; i < last; i++) {
                    uint64_t *mask = oj + i * words;
                    const int32_t v = cj[i];
                    if (v < 0 || v >= dj) {
                        for (int w = 0; w < words; w++) mask[w] = 0;
                        bad = 1;
                        continue;
                    }
                    if (exact[j]) {
                        for (int w = 0; w < words; w++) mask[w] = 0;
                        mask[v >> 6] = (uint64_t)1 << (v & 63);
                        continue;
                    }
                    if (counters && counters[j]) {
                        /* persistent mode: this cell's own block at its counter */
                        uint32_t blk[16];
                        const uint64_t ctr = counters[j][i];
                        anonset_block(key, ctr, s >> 3, 0u, blk);
                        sample_cell(key, ctr, s, blk + 2 * (s & 7u), dj, eta[j], coin[j], v,
                                    mask, words, htab[j], ttab[j]);
                        continue;
                    }
                    const uint32_t *lane = buf + (size_t)gidx[j] * 16 * BATCH
                                           + 16 * (i - first) + 2 * (s & 7u);
                    sample_cell(key, (uint64_t)(row0 + i), s, lane, dj, eta[j], coin[j], v,
                                mask, words, htab[j], ttab[j]);
                }
            }
        }
        free(buf);
    }
    free(groups);
    free(gidx);
    if (cache)
        for (int i = 0; i < ncache; i++) free(cache[i].subsets);
    free(cache);
    free(htab);
    free(ttab);
    if (nomem) return ANONSET_ERR_NOMEM;
    return bad ? ANONSET_ERR_VALUE : ANONSET_OK;
}
