/* Keyed row ranks and the radix argsort of them (see order.h). */
#include <stdlib.h>
#include <string.h>

#include "order.h"

#define RANK_UNIT 64           /* blocks per generator call: 4 KiB of scratch */
#define RADIX_BITS 11
#define RADIX_BINS (1 << RADIX_BITS)
#define RADIX_PASSES 6         /* ceil(64 / 11) */
#define RUN_MAX 64             /* the longest run of ties the packed sort orders by insertion */

void anonset_rank_words(const anonset_key *k, uint64_t counter0, uint32_t stream, uint32_t sub,
                        int64_t n, uint64_t *out, int n_threads, int level) {
    int nt = anonset_threads(n_threads);
    const int64_t nunits = (n + RANK_UNIT - 1) / RANK_UNIT;
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
        shared(k, counter0, stream, sub, n, out, nunits, level) if (nunits > 64)
#endif
    for (int64_t u = 0; u < nunits; u++) {
        uint32_t buf[16 * RANK_UNIT];
        const int64_t b = u * RANK_UNIT;
        const int64_t len = n - b < RANK_UNIT ? n - b : RANK_UNIT;
        anonset_blocks_simd(k, counter0 + (uint64_t)b, stream, sub, len, buf, level);
        for (int64_t j = 0; j < len; j++)
            out[b + j] = (uint64_t)buf[16 * j] | ((uint64_t)buf[16 * j + 1] << 32);
    }
}

/* One LSD pass over digits [shift, shift + RADIX_BITS) of ks (positions is,
 * NULL: in input order) into kd / id, from the digit's counts. */
static void radix_pass(const uint64_t *ks, const int64_t *is, uint64_t *kd, int64_t *id,
                       int64_t n, int shift, const int64_t *count) {
    int64_t off[RADIX_BINS], sum = 0;
    for (int b = 0; b < RADIX_BINS; b++) { off[b] = sum; sum += count[b]; }
    for (int64_t i = 0; i < n; i++) {
        const uint64_t x = ks[i];
        const int64_t pos = off[(x >> shift) & (RADIX_BINS - 1)]++;
        kd[pos] = x;
        if (id != NULL) id[pos] = is == NULL ? i : is[i];
    }
}

/* Bits of the keys sorted by digits: the top ones that vary, about log2(n)
 * + 4 of them in whole digits (random keys then tie on them in about one
 * key of 16, which the packed sort's insertion step orders), all of them
 * when the keys vary in fewer. */
static int low_bit(int hb, int64_t n) {
    int want = 4;
    for (int64_t m = n; m > 1; m >>= 1) want++;
    want = ((want + RADIX_BITS - 1) / RADIX_BITS) * RADIX_BITS;
    return hb + 1 > want ? hb + 1 - want : 0;
}

/* The sort of words w[0..n) by their bits above ib (the bits [ib, 64) hold
 * a key's bits [lo, lo + 64 - ib), the bits below ib its position), with
 * positions id (NULL: the words hold them) in the buffers kbuf (2 n words)
 * and ibuf (2 n, or NULL); the sorted words (and positions) are returned in
 * *wk (*wi). */
static int radix_sort(const uint64_t *w, int64_t n, int ib, uint64_t *kbuf, int64_t *ibuf,
                      const uint64_t **wk, const int64_t **wi) {
    int64_t (*count)[RADIX_BINS] = calloc(RADIX_PASSES, sizeof *count);
    if (count == NULL) return ANONSET_ERR_NOMEM;
    const int np = (64 - ib + RADIX_BITS - 1) / RADIX_BITS;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t x = w[i] >> ib;
        for (int p = 0; p < np; p++) count[p][(x >> (p * RADIX_BITS)) & (RADIX_BINS - 1)]++;
    }
    const uint64_t *ks = w, first = w[0] >> ib;
    const int64_t *is = NULL;
    uint64_t *kd = kbuf;
    int64_t *id = ibuf;
    for (int p = 0; p < np; p++) {
        if (count[p][(first >> (p * RADIX_BITS)) & (RADIX_BINS - 1)] == n)
            continue;                           /* one digit everywhere: order kept */
        radix_pass(ks, is, kd, id, n, ib + p * RADIX_BITS, count[p]);
        ks = kd;
        kd = kd == kbuf ? kbuf + n : kbuf;
        if (id != NULL) {
            is = id;
            id = id == ibuf ? ibuf + n : ibuf;
        }
    }
    free(count);
    *wk = ks;
    *wi = is;
    return ANONSET_OK;
}

int anonset_rank_order(const uint64_t *keys, int64_t n, int64_t *perm) {
    if (n <= 1) {
        if (n == 1) perm[0] = 0;
        return ANONSET_OK;
    }
    uint64_t vary = 0;
    for (int64_t i = 1; i < n; i++) vary |= keys[i] ^ keys[0];
    if (vary == 0) {
        for (int64_t i = 0; i < n; i++) perm[i] = i;
        return ANONSET_OK;
    }
    const int hb = anonset_msb64(vary), lo = low_bit(hb, n);
    const int pb = anonset_msb64((uint64_t)n - 1) + 1;         /* bits of a position */
    if (lo > 0 && (hb + 1 - lo) + pb <= 64) {
        /* Packed: each word holds the key's bits [lo, hb] above its position,
         * so that one word moves a pass and equal bits keep position order;
         * then runs equal on those bits are ordered by the whole key (an
         * insertion sort, strict: stable), or, a run longer than RUN_MAX,
         * every digit is sorted below. */
        uint64_t *kbuf = malloc(3 * (size_t)n * sizeof *kbuf);
        if (kbuf == NULL) return ANONSET_ERR_NOMEM;
        uint64_t *w = kbuf + 2 * n;
        const uint64_t pmask = ((uint64_t)1 << pb) - 1;
        const int kb = hb + 1 - lo;                         /* key bits kept */
        const uint64_t kmask = kb == 64 ? ~(uint64_t)0 : ((uint64_t)1 << kb) - 1;
        for (int64_t i = 0; i < n; i++) w[i] = (((keys[i] >> lo) & kmask) << pb) | (uint64_t)i;
        const uint64_t *ks;
        const int64_t *unused;
        if (radix_sort(w, n, pb, kbuf, NULL, &ks, &unused) != ANONSET_OK) {
            free(kbuf);
            return ANONSET_ERR_NOMEM;
        }
        int ok = 1;
        for (int64_t a = 0; a < n && ok;) {
            int64_t b = a + 1;
            while (b < n && (ks[b] >> pb) == (ks[a] >> pb)) b++;
            if (b - a > RUN_MAX) ok = 0;
            for (int64_t i = a; i < b && ok; i++) {
                const int64_t y = (int64_t)(ks[i] & pmask);
                const uint64_t x = keys[y];
                int64_t j = i;
                for (; j > a && keys[perm[j - 1]] > x; j--) perm[j] = perm[j - 1];
                perm[j] = y;
            }
            a = b;
        }
        free(kbuf);
        if (ok) return ANONSET_OK;
    }
    /* Every digit, positions beside the keys. */
    uint64_t *kbuf = malloc(2 * (size_t)n * sizeof *kbuf);
    int64_t *ibuf = malloc(2 * (size_t)n * sizeof *ibuf);
    const uint64_t *ks;
    const int64_t *is;
    int st = kbuf == NULL || ibuf == NULL ? ANONSET_ERR_NOMEM
                                          : radix_sort(keys, n, 0, kbuf, ibuf, &ks, &is);
    if (st == ANONSET_OK) {
        if (is == NULL)
            for (int64_t i = 0; i < n; i++) perm[i] = i;
        else
            memcpy(perm, is, (size_t)n * sizeof *perm);
    }
    free(kbuf); free(ibuf);
    return st;
}
