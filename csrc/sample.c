#include "sample.h"

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
    int bad = 0;
    int nt = anonset_threads(n_threads);
    (void)nt;
    /* Fixed chunks of rows; every cell is a pure function of (key, row, attr),
     * so the schedule cannot change the output. */
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1024) default(none) \
        shared(key, n, row0, q, codes, d, eta, coin, exact, attr_id, out) reduction(|:bad)
#endif
    for (int64_t i = 0; i < n; i++) {
        uint32_t blk[64];
        int32_t cached = -1;
        uint64_t row = (uint64_t)(row0 + i);
        for (int j = 0; j < q; j++) {
            int32_t dj = d[j];
            int words = (dj + 63) >> 6;
            uint64_t *mask = out[j] + i * words;
            int32_t v = codes[j][i];
            for (int w = 0; w < words; w++) mask[w] = 0;
            if (v < 0 || v >= dj) { bad = 1; continue; }
            if (exact[j]) { mask[v >> 6] = (uint64_t)1 << (v & 63); continue; }
            uint32_t s = (uint32_t)attr_id[j];
            int32_t group = (int32_t)(s >> 4);
            if (group != cached) {
                anonset_block4(key, row, (uint32_t)group << 2, 0u, blk);
                cached = group;
            }
            const uint32_t *lane = blk + 16 * ((s >> 2) & 3u) + 4 * (s & 3u);
            cellstream c;
            c.key = key; c.row = row; c.attr = s; c.sub = 0;
            c.nwords = 3; c.pos = 0;
            c.w[0] = lane[1]; c.w[1] = lane[2]; c.w[2] = lane[3];
            int head = (uint64_t)lane[0] < coin[j];
            if (eta[j] == dj) {  /* every value: no draw needed */
                for (int w = 0; w < words; w++) mask[w] = ~(uint64_t)0;
                if (dj & 63) mask[words - 1] = ((uint64_t)1 << (dj & 63)) - 1;
            } else if (head) {
                mask[v >> 6] |= (uint64_t)1 << (v & 63);
                floyd(&c, dj - 1, eta[j] - 1, v, mask);
            } else {
                floyd(&c, dj, eta[j], -1, mask);
            }
        }
    }
    return bad ? ANONSET_ERR_VALUE : ANONSET_OK;
}
