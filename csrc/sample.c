#include "sample.h"

#include <stdlib.h>
#include <string.h>

/* A stream of 16-bit draws for one cell: first the 6 half-words of the cell's
 * lane (its first word is reserved for the coin), then overflow blocks. */
typedef struct {
    const anonset_key *key;
    uint64_t row;
    uint32_t attr;
    uint32_t sub;
    int nwords;
    int pos;            /* in half-words */
    uint32_t w[16];
} cellstream;

static inline uint32_t next16(cellstream *c) {
    if (c->pos >= 2 * c->nwords) {
        anonset_block(c->key, c->row, 0x80000000u | c->attr, c->sub++, c->w);
        c->nwords = 16;
        c->pos = 0;
    }
    uint32_t v = (c->w[c->pos >> 1] >> (16 * (c->pos & 1))) & 0xFFFFu;
    c->pos++;
    return v;
}

/* Uniform integer in [0, n), 1 <= n <= 65536, without modulo bias
 * (Lemire 2019, 16-bit variant: reject the low part below 2^16 mod n). */
static inline uint32_t bounded(cellstream *c, uint32_t n) {
    if (n <= 1) return 0;
    uint32_t x = next16(c) * n;
    uint32_t l = x & 0xFFFFu;
    if (l < n) {
        uint32_t t = (65536u - n) % n;
        while (l < t) {
            x = next16(c) * n;
            l = x & 0xFFFFu;
        }
    }
    return x >> 16;
}

/* Floyd's algorithm: a uniform k-subset of the n "virtual" indices, where
 * virtual index x is value x (skip < 0) or x + (x >= skip) (skip >= 0), so a
 * subset of D \ {skip} is drawn without building that set.  Bits are set in
 * mask (words 64-bit words), which must be zero on entry except for skip. */
static void floyd(cellstream *c, int32_t n, int32_t k, int32_t skip,
                  uint64_t *mask) {
    for (int32_t m = n - k; m < n; m++) {
        int32_t t = (int32_t)bounded(c, (uint32_t)m + 1u);
        int32_t vt = (skip >= 0 && t >= skip) ? t + 1 : t;
        int32_t vm = (skip >= 0 && m >= skip) ? m + 1 : m;
        int32_t v = (mask[vt >> 6] >> (vt & 63)) & 1u ? vm : vt;
        mask[v >> 6] |= (uint64_t)1 << (v & 63);
    }
}

/* The same half-word stream as cellstream, held in registers: the fast path
 * for domains of at most 64 values (the overflow block is rarely needed). */
typedef struct {
    uint64_t bits;        /* unread half-words, lowest first */
    int nb;               /* how many half-words bits holds */
    int src, srcn;        /* next word of srcw to load, and how many it has */
    const uint32_t *srcw;
    uint32_t sub;
    uint32_t ov[16];      /* the current overflow block */
} faststream;

static inline uint32_t fast16(faststream *f, const anonset_key *key, uint64_t row, uint32_t s) {
    if (f->nb == 0) {
        if (f->src >= f->srcn) {
            anonset_block(key, row, 0x80000000u | s, f->sub++, f->ov);
            f->srcw = f->ov; f->srcn = 16; f->src = 0;
        }
        if (f->src + 1 < f->srcn) {
            f->bits = (uint64_t)f->srcw[f->src] | ((uint64_t)f->srcw[f->src + 1] << 32);
            f->nb = 4;
        } else {
            f->bits = f->srcw[f->src];
            f->nb = 2;
        }
        f->src += 2;
    }
    uint32_t v = (uint32_t)(f->bits & 0xFFFFu);
    f->bits >>= 16;
    f->nb--;
    return v;
}

/* Floyd's algorithm for domains of at most 64 values: a uniform k-subset of
 * [0, n) as a bitmask, with Lemire's bounded draws, branch-free on collisions. */
static inline uint64_t floyd64(const uint32_t *lane, const anonset_key *key, uint64_t row,
                               uint32_t s, int32_t n, int32_t k) {
    faststream f;
    f.bits = (uint64_t)lane[1] | ((uint64_t)lane[2] << 32);
    f.nb = 4; f.srcw = lane + 3; f.src = 0; f.srcn = 1; f.sub = 0;
    uint64_t m = 0;
    for (int32_t x = n - k; x < n; x++) {
        uint32_t bound = (uint32_t)x + 1u, t;
        if (bound <= 1) {
            t = 0;
        } else {
            uint32_t y = fast16(&f, key, row, s) * bound;
            uint32_t l = y & 0xFFFFu;
            if (l < bound) {
                uint32_t thr = (65536u - bound) % bound;
                while (l < thr) {
                    y = fast16(&f, key, row, s) * bound;
                    l = y & 0xFFFFu;
                }
            }
            t = y >> 16;
        }
        uint64_t bt = (uint64_t)1 << t;
        uint64_t hit = (uint64_t)0 - (uint64_t)((m & bt) != 0);
        m |= (((uint64_t)1 << x) & hit) | (bt & ~hit);
    }
    return m;
}

/* One cell: the set of row `row`, attribute stream s, true value v. */
static inline void sample_cell(const anonset_key *key, uint64_t row, uint32_t s,
                               const uint32_t *lane, int32_t dj, int32_t eta,
                               uint64_t coin, int32_t v, uint64_t *mask, int words) {
    int head = (uint64_t)lane[0] < coin;
    if (eta == dj) {  /* every value: no draw needed */
        for (int w = 0; w < words; w++) mask[w] = ~(uint64_t)0;
        if (dj & 63) mask[words - 1] = ((uint64_t)1 << (dj & 63)) - 1;
        return;
    }
    if (words == 1) {
        if (head) {
            /* other values: a subset of d-1 virtual indices, then open a gap at v */
            uint64_t sub = floyd64(lane, key, row, s, dj - 1, eta - 1);
            uint64_t low = sub & (((uint64_t)1 << v) - 1);
            mask[0] = low | ((sub ^ low) << 1) | ((uint64_t)1 << v);
        } else {
            mask[0] = floyd64(lane, key, row, s, dj, eta);
        }
        return;
    }
    cellstream c;
    c.key = key; c.row = row; c.attr = s; c.sub = 0;
    c.nwords = 3; c.pos = 0;
    c.w[0] = lane[1]; c.w[1] = lane[2]; c.w[2] = lane[3];
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
                        uint64_t *const *out, int n_threads) {
    for (int j = 0; j < q; j++) {
        if (d[j] < 1 || d[j] > ANONSET_MAX_DOMAIN || eta[j] < 1 || eta[j] > d[j] ||
            attr_id[j] < 0 || coin[j] > ((uint64_t)1 << 32))
            return ANONSET_ERR_VALUE;
    }
    if (n <= 0 || q <= 0) return ANONSET_OK;
    /* The distinct block streams (attr_id >> 2) this call needs, and for each
     * attribute the index of its stream in that list. */
    int32_t *groups = (int32_t *)malloc((size_t)q * sizeof(int32_t));
    int32_t *gidx = (int32_t *)malloc((size_t)q * sizeof(int32_t));
    if (!groups || !gidx) { free(groups); free(gidx); return ANONSET_ERR_NOMEM; }
    int ng = 0;
    for (int j = 0; j < q; j++) {
        gidx[j] = -1;
        if (exact[j]) continue;
        int32_t g = attr_id[j] >> 2;
        int found = -1;
        for (int t = 0; t < ng; t++) if (groups[t] == g) { found = t; break; }
        if (found < 0) { groups[ng] = g; found = ng++; }
        gidx[j] = found;
    }
    const int64_t nbatch = (n + BATCH - 1) / BATCH;
    int bad = 0, nomem = 0;
    int nt = anonset_threads(n_threads);
    (void)nt;
    /* Every cell is a pure function of (key, row, attribute): the schedule
     * cannot change the output. */
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) reduction(|:bad, nomem) \
        shared(key, n, row0, q, codes, d, eta, coin, exact, attr_id, out, groups, gidx, ng, nbatch)
#endif
    {
        uint32_t *buf = (uint32_t *)malloc((size_t)(ng > 0 ? ng : 1) * 16 * BATCH * sizeof(uint32_t));
        if (!buf) nomem = 1;
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
                    const uint32_t *lane = buf + (size_t)gidx[j] * 16 * BATCH
                                           + 16 * (i - first) + 4 * (s & 3u);
                    sample_cell(key, (uint64_t)(row0 + i), s, lane, dj, eta[j], coin[j], v,
                                mask, words);
                }
            }
        }
        free(buf);
    }
    free(groups);
    free(gidx);
    if (nomem) return ANONSET_ERR_NOMEM;
    return bad ? ANONSET_ERR_VALUE : ANONSET_OK;
}
