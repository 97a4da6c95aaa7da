/* Where the time of the wide-domain path goes (issue 16, target 2b: the
 * per-cell cost at d = 64, eta = 32 against d = 16, eta = 5; bench/RESULTS.md,
 * "Target 2b: where the time goes").  It includes the sampler's source, so
 * that the composition unranking's own pieces (static functions) are timed
 * one at a time on the same ChaCha20 words:
 *
 *   gcc -O3 -fopenmp -DANONSET_HAVE_OPENMP=1 -Icsrc/common -Icsrc/randomized \
 *       bench/cliff_parts.c csrc/common/rng.c -lm -o cliff_parts
 *   ./cliff_parts
 *
 * Rows, one thread, best of 25 after a warm-up; ns per cell.  The pieces are
 * measured apart, so they do not add up exactly to the whole. */
#include "../csrc/randomized/sample.c"

#include <stdio.h>
#include <omp.h>

#define NCELLS (1 << 18)
static uint64_t words[NCELLS], out[NCELLS];
static uint32_t blocks[2 * NCELLS + 64];
static int32_t vals[NCELLS];

typedef struct { const char *name; double ns; } row;

#include "best_of.h"

static uint64_t checksum(void) {
    uint64_t s = 0;
    for (int64_t i = 0; i < NCELLS; i++) s ^= out[i] + (uint64_t)i;
    return s;
}

/* The whole kernel on 8 columns of n rows (the 2b pair). */
static double kernel_ns(int32_t d, int32_t eta) {
    enum { W = 8 };
    const int64_t n = 300000;
    anonset_key key;
    for (int i = 0; i < 8; i++) key.key[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    key.kind = ANONSET_RNG_CHACHA20;
    int32_t dd[W], ee[W], ex[W], id[W];
    uint64_t coin[W];
    const int32_t *codes[W];
    uint64_t *outs[W];
    uint64_t x = 88172645463325252ull;
    for (int j = 0; j < W; j++) {
        dd[j] = d; ee[j] = eta; ex[j] = 0; id[j] = j; coin[j] = (uint64_t)1 << 32;
        int32_t *c = (int32_t *)malloc((size_t)n * sizeof(int32_t));
        for (int64_t i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            c[i] = (int32_t)(x % (uint64_t)d);
        }
        codes[j] = c;
        outs[j] = (uint64_t *)calloc((size_t)n, sizeof(uint64_t));
    }
    double best = 1e30;
    for (int rep = 0; rep < 16; rep++) {
        const double t0 = now();
        anonset_sample_sets(&key, n, 0, W, codes, dd, ee, coin, ex, id, NULL, outs, 1);
        const double t = now() - t0;
        if (rep > 0 && t < best) best = t;
    }
    for (int j = 0; j < W; j++) { free((void *)codes[j]); free(outs[j]); }
    return best / ((double)n * W) * 1e9;
}

int main(void) {
    anonset_key key;
    for (int i = 0; i < 8; i++) key.key[i] = 0x01020304u * (uint32_t)(i + 1);
    key.kind = ANONSET_RNG_CHACHA20;
    parts16 *p16 = (parts16 *)malloc(sizeof *p16);
    parts16_build(p16);
    const int32_t n = 63, k = 31;                  /* head cells of d = 64, eta = 32 */
    const uint64_t T = binom64(n, k), thr = (0 - T) % T;
    quart_plan q;
    if (!quart_build(&q, p16, n, k, T)) return 1;
    const uint16_t *t16 = p16->t16;
    for (int64_t i = 0; i < NCELLS; i++) vals[i] = (int32_t)(i % 64);
    row r[8];
    int nr = 0;
    double v;

    BEST(v, { anonset_blocks(&key, 0, 0, 0, NCELLS / 8, blocks);
              memcpy(words, blocks, sizeof words);
              for (int64_t i = 0; i < NCELLS; i++) out[i] = words[i]; });
    r[nr++] = (row){"ChaCha20: one 64-bit draw word a cell", v};

    /* the kernel's three passes (quart_rows_as with HEAD = 1) */
    BEST(v, { anonset_blocks(&key, 0, 0, 0, NCELLS / 8, blocks);
              memcpy(words, blocks, sizeof words);
              for (int64_t b0 = 0; b0 < NCELLS; b0 += QBATCH) {
                  uint64_t I[QBATCH]; int64_t c[QBATCH]; uint32_t pos[QBATCH][4];
                  unsigned rej = 0;
                  for (int i = 0; i < QBATCH; i++) {
                      uint64_t lo;
                      I[i] = anonset_mul128(words[b0 + i], T, &lo);
                      rej += lo < thr;
                      c[i] = quart_guess(&q, I[i]);
                  }
                  for (int i = 0; i < QBATCH; i++) quart_digits(&q, I[i], c[i], pos[i]);
                  for (int i = 0; i < QBATCH; i++) {
                      const uint64_t sub = (uint64_t)t16[pos[i][0]] |
                                           (uint64_t)t16[pos[i][1]] << 16 |
                                           (uint64_t)t16[pos[i][2]] << 32 |
                                           (uint64_t)t16[pos[i][3]] << 48;
                      out[b0 + i] = gap64(sub, vals[b0 + i]);
                  }
                  out[b0] += rej;
              } });
    r[nr++] = (row){"ChaCha20 + the composition path (the kernel's passes)", v};

    /* the same arithmetic with every table read replaced by a constant
     * record and the positions themselves: what the multiplies cost */
    BEST(v, { anonset_blocks(&key, 0, 0, 0, NCELLS / 8, blocks);
              memcpy(words, blocks, sizeof words);
              const quart_comp *rc = &q.comp[q.ncomp / 2];
              for (int64_t b0 = 0; b0 < NCELLS; b0 += QBATCH) {
                  uint64_t R[QBATCH]; uint32_t pos[QBATCH][4];
                  unsigned rej = 0;
                  for (int i = 0; i < QBATCH; i++) {
                      uint64_t lo;
                      R[i] = anonset_mul128(words[b0 + i], T, &lo) >> 6;
                      rej += lo < thr;
                  }
                  for (int i = 0; i < QBATCH; i++) {
                      const uint64_t R9 = R[i] << QDIV_PRE;
                      uint64_t lo;
                      const uint64_t Q0 = anonset_mul128(R9, rc->m[0], &lo) >> rc->l[0];
                      const uint64_t Q1 = anonset_mul128(R9, rc->m[1], &lo) >> rc->l[1];
                      const uint64_t Q2 = anonset_mul128(R9, rc->m[2], &lo) >> rc->l[2];
                      pos[i][0] = (uint32_t)Q0;
                      pos[i][1] = (uint32_t)(Q1 - Q0 * rc->N[1]);
                      pos[i][2] = (uint32_t)(Q2 - Q1 * rc->N[2]);
                      pos[i][3] = (uint32_t)(R[i] - Q2 * rc->N[3]);
                  }
                  for (int i = 0; i < QBATCH; i++) {
                      const uint64_t sub = (uint64_t)(pos[i][0] & 0xffff) |
                                           (uint64_t)(pos[i][1] & 0xffff) << 16 |
                                           (uint64_t)(pos[i][2] & 0xffff) << 32 |
                                           (uint64_t)(pos[i][3] & 0xffff) << 48;
                      out[b0 + i] = gap64(sub, vals[b0 + i]);
                  }
                  out[b0] += rej;
              } });
    r[nr++] = (row){"ChaCha20 + its arithmetic alone (no table read)", v};

    /* the table reads alone: four t16 lookups on the word's bits */
    BEST(v, { anonset_blocks(&key, 0, 0, 0, NCELLS / 8, blocks);
              memcpy(words, blocks, sizeof words);
              for (int64_t i = 0; i < NCELLS; i++) {
                  const uint64_t w = words[i];
                  const uint64_t sub = (uint64_t)t16[w & 0xffff] |
                                       (uint64_t)t16[(w >> 16) & 0xffff] << 16 |
                                       (uint64_t)t16[(w >> 32) & 0xffff] << 32 |
                                       (uint64_t)t16[w >> 48] << 48;
                  out[i] = gap64(sub, vals[i]);
              } });
    r[nr++] = (row){"ChaCha20 + four part lookups, no arithmetic", v};

    /* 64 x 64 -> 128-bit multiplies: four independent ones a cell */
    BEST(v, { for (int64_t i = 0; i < NCELLS; i++) {
                  uint64_t lo;
                  const uint64_t a = anonset_mul128(words[i], T, &lo) << 9;
                  out[i] = anonset_mul128(a, 0x123456789abcdull, &lo) ^
                           anonset_mul128(a, 0x23456789abcdefull, &lo) ^
                           anonset_mul128(a, 0x3456789abcdefull, &lo);
              } });
    r[nr++] = (row){"four 64x64->128 multiplies (of which 3 independent)", v};

    const double narrow = kernel_ns(16, 5), wide = kernel_ns(64, 32);
    printf("| piece (one thread, ns per cell) | ns |\n|---|---|\n");
    for (int i = 0; i < nr; i++) printf("| %s | %.2f |\n", r[i].name, r[i].ns);
    printf("| kernel: 8 columns, d = 16, eta = 5 (the 2b denominator) | %.2f |\n", narrow);
    printf("| kernel: 8 columns, d = 64, eta = 32 | %.2f |\n", wide);
    printf("\nratio d = 64 / d = 16: %.2f (target <= 2); compositions: %lld; "
           "checksum %llx\n", wide / narrow, (long long)q.ncomp,
           (unsigned long long)checksum());
    quart_free(&q);
    free(p16);
    return 0;
}
