/* Per-cell cost of publishing (bench/RESULTS.md, "Domains over 64 values"
 * and "Persistent-key mode"): on domains of 16 to 2,000 values with a row's
 * counter (4 columns of 200,000 rows, p = 1), and with explicit counters (a
 * persistent key: each cell's counter a keyed hash, so each needs blocks of
 * its own) against row counters.  Reused output, one thread, best of 7; ns
 * per cell.
 *
 *   gcc -O3 -fopenmp -DANONSET_HAVE_OPENMP=1 -Icsrc/common -Icsrc/randomized \
 *       bench/sampler_cells.c csrc/randomized/sample.c csrc/common/rng.c -lm -o sampler_cells
 *   ./sampler_cells
 *
 * To compare with an earlier commit's sampler (the same sets, other speed):
 *   git show COMMIT:csrc/randomized/sample.c > /tmp/sample_old.c
 * and build a second program with /tmp/sample_old.c in its place. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <omp.h>

#include "rng.h"
#include "sample.h"

static double cell_ns(int32_t d, int32_t eta, double p, int persistent) {
    enum { W = 4 };
    const int64_t n = 200000;
    const int words = (d + 63) / 64;
    anonset_key key;
    for (int i = 0; i < 8; i++) key.key[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    key.kind = ANONSET_RNG_CHACHA20;
    int32_t dd[W], ee[W], ex[W], id[W];
    uint64_t coin[W];
    const int32_t *codes[W];
    uint64_t *outs[W];
    const uint64_t *ctrs[W];
    uint64_t x = 88172645463325252ull;
    for (int j = 0; j < W; j++) {
        dd[j] = d; ee[j] = eta; ex[j] = 0; id[j] = j;
        coin[j] = (uint64_t)(p * 4294967296.0);
        int32_t *c = (int32_t *)malloc((size_t)n * sizeof(int32_t));
        uint64_t *t = (uint64_t *)malloc((size_t)n * sizeof(uint64_t));
        for (int64_t i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            c[i] = (int32_t)(x % (uint64_t)d);
            t[i] = x * 0x9e3779b97f4a7c15ull;
        }
        codes[j] = c;
        ctrs[j] = t;
        outs[j] = (uint64_t *)calloc((size_t)(n * words), sizeof(uint64_t));
    }
    double best = 1e30;
    for (int rep = 0; rep < 8; rep++) {
        const double t0 = omp_get_wtime();
        anonset_sample_sets(&key, n, 0, W, codes, dd, ee, coin, ex, id,
                            persistent ? ctrs : NULL, outs, 1);
        const double t = omp_get_wtime() - t0;
        if (rep > 0 && t < best) best = t;
    }
    for (int j = 0; j < W; j++) {
        free((void *)codes[j]); free((void *)ctrs[j]); free(outs[j]);
    }
    return best / ((double)n * W) * 1e9;
}

int main(void) {
    const int32_t ds[] = {16, 64, 65, 100, 128, 200, 500, 2000};
    const int32_t es[] = {2, 5, 10, 32};
    printf("| d | eta = 2 | eta = 5 | eta = 10 | eta = 32 |\n|---|---|---|---|---|\n");
    for (size_t a = 0; a < sizeof ds / sizeof *ds; a++) {
        printf("| %d |", ds[a]);
        for (size_t b = 0; b < sizeof es / sizeof *es; b++) {
            if (es[b] >= ds[a]) printf(" - |");
            else printf(" %.1f |", cell_ns(ds[a], es[b], 1.0, 0));
        }
        printf("\n");
    }
    const int32_t pd[] = {16, 64, 100, 500}, pe[] = {5, 32, 10, 10};
    printf("\n| d | eta | p | row counters | persistent key | ratio |\n"
           "|---|---|---|---|---|---|\n");
    for (size_t a = 0; a < sizeof pd / sizeof *pd; a++)
        for (int k = 0; k < 2; k++) {
            const double p = k ? 0.5 : 1.0;
            const double r = cell_ns(pd[a], pe[a], p, 0), c = cell_ns(pd[a], pe[a], p, 1);
            printf("| %d | %d | %.1f | %.1f | %.1f | %.1fx |\n", pd[a], pe[a], p, r, c, c / r);
        }
    return 0;
}
