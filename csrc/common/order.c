/* Keyed row ranks and the radix argsort of them (see order.h). */
#include <stdlib.h>
#include <string.h>

#include "order.h"

#define RANK_UNIT 64           /* blocks per generator call: 4 KiB of scratch */
#define RADIX_BITS 11
#define RADIX_BINS (1 << RADIX_BITS)
#define RADIX_PASSES 6         /* ceil(64 / 11) */

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

int anonset_rank_order(const uint64_t *keys, int64_t n, int64_t *perm) {
    int64_t (*count)[RADIX_BINS] = calloc(RADIX_PASSES, sizeof *count);
    uint64_t *kbuf = n > 0 ? malloc(2 * (size_t)n * sizeof *kbuf) : NULL;
    int64_t *ibuf = n > 0 ? malloc((size_t)n * sizeof *ibuf) : NULL;
    if (count == NULL || (n > 0 && (kbuf == NULL || ibuf == NULL))) {
        free(count); free(kbuf); free(ibuf);
        return ANONSET_ERR_NOMEM;
    }
    for (int64_t i = 0; i < n; i++) {
        const uint64_t x = keys[i];
        for (int p = 0; p < RADIX_PASSES; p++)
            count[p][(x >> (p * RADIX_BITS)) & (RADIX_BINS - 1)]++;
    }
    const uint64_t *ks = keys;
    const int64_t *is = NULL;               /* NULL: positions in input order */
    uint64_t *kd = kbuf;
    int64_t *id = perm;
    int last = -1;
    for (int p = 0; p < RADIX_PASSES; p++) {
        const uint64_t digit0 = n > 0 ? (keys[0] >> (p * RADIX_BITS)) & (RADIX_BINS - 1) : 0;
        if (count[p][digit0] != n) last = p;
    }
    for (int p = 0; p <= last; p++) {
        const int shift = p * RADIX_BITS;
        const uint64_t digit0 = (keys[0] >> shift) & (RADIX_BINS - 1);
        if (count[p][digit0] == n) continue;        /* one digit everywhere: order kept */
        int64_t off[RADIX_BINS], sum = 0;
        for (int b = 0; b < RADIX_BINS; b++) { off[b] = sum; sum += count[p][b]; }
        for (int64_t i = 0; i < n; i++) {
            const uint64_t x = ks[i];
            const int64_t pos = off[(x >> shift) & (RADIX_BINS - 1)]++;
            if (p != last) kd[pos] = x;
            id[pos] = is == NULL ? i : is[i];
        }
        ks = kd;
        kd = kd == kbuf ? kbuf + n : kbuf;
        is = id;
        id = id == perm ? ibuf : perm;
    }
    if (is == NULL)
        for (int64_t i = 0; i < n; i++) perm[i] = i;
    else if (is != perm)
        memcpy(perm, is, (size_t)n * sizeof *perm);
    free(count); free(kbuf); free(ibuf);
    return ANONSET_OK;
}
