/* OpenMP scaling of the kernels at 1, 2, 4, 8, 16 threads (bench/RESULTS.md,
 * "Scaling").  Plain C, linked with the kernels, so that it runs on a machine
 * without the Python environment:
 *
 *   gcc -O3 -fopenmp -DANONSET_HAVE_OPENMP=1 -Icsrc/common -Icsrc/randomized \
 *       bench/omp_scaling.c csrc/common/rng.c csrc/randomized/sample.c \
 *       csrc/randomized/counts.c csrc/randomized/em.c -lm -o omp_scaling
 *   ./omp_scaling [rows]
 *
 * Publishing: a census-shaped table (68 attributes, d = 2..18, eta = min(5,
 * d - 1), p = 1, uniform codes) into reused (already touched) and fresh
 * outputs; the no-cliff pair of target 2b (8 columns each of d = 16, eta = 5
 * and d = 64, eta = 32, ns per cell); count_w at q' = 4 (18 x 17 x 16 x 16),
 * direct and factorized; the
 * paper EM (50 iterations) at 78,336 and 661,248 cells.  Best of 3 wall times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "sample.h"
#include "counts.h"
#include "em.h"

#define Q 68

static double best3(double t[3]) {
    double b = t[0];
    for (int i = 1; i < 3; i++) b = t[i] < b ? t[i] : b;
    return b;
}

int main(int argc, char **argv) {
    const int64_t n = argc > 1 ? atoll(argv[1]) : 2458285;
    const int threads[] = {1, 2, 4, 8, 16};
    anonset_key key;
    for (int i = 0; i < 8; i++) key.key[i] = 0x01020304u * (uint32_t)(i + 1);
    key.kind = ANONSET_RNG_CHACHA20;
    int32_t d[Q], eta[Q], ex[Q], id[Q];
    uint64_t coin[Q];
    int32_t *codes[Q];
    uint64_t *out[Q];
    uint64_t x = 88172645463325252ull;
    for (int j = 0; j < Q; j++) {
        d[j] = 2 + (j * 7) % 17;
        eta[j] = d[j] - 1 < 5 ? d[j] - 1 : 5;
        ex[j] = 0; id[j] = j; coin[j] = (uint64_t)1 << 32;
        codes[j] = malloc((size_t)n * sizeof(int32_t));
        out[j] = malloc((size_t)n * sizeof(uint64_t));
        if (!codes[j] || !out[j]) return 1;
        for (int64_t i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            codes[j][i] = (int32_t)(x % (uint64_t)d[j]);
        }
        memset(out[j], 1, (size_t)n * sizeof(uint64_t));
    }
    printf("machine: %d processors; SIMD level %d; rows %lld\n", omp_get_num_procs(),
           anonset_simd_level(), (long long)n);
    printf("| kernel | 1 | 2 | 4 | 8 | 16 | speed-up at 16 |\n|---|---|---|---|---|---|---|\n");
    double base;
    /* publishing into reused outputs */
    printf("| publish 2.46 M x 68, reused output (s) |");
    for (int k = 0; k < 5; k++) {
        double t[3];
        for (int r = 0; r < 3; r++) {
            double t0 = omp_get_wtime();
            anonset_sample_sets(&key, n, 0, Q, (const int32_t *const *)codes, d, eta, coin, ex,
                                id, NULL, out, threads[k]);
            t[r] = omp_get_wtime() - t0;
        }
        if (k == 0) base = best3(t);
        printf(" %.3f |", best3(t));
        if (k == 4) printf(" %.1fx |\n", base / best3(t));
    }
    /* publishing into fresh outputs (page faults included) */
    printf("| publish, fresh output (s) |");
    for (int k = 0; k < 5; k++) {
        double t[3];
        for (int r = 0; r < 3; r++) {
            uint64_t *fo[Q];
            for (int j = 0; j < Q; j++) fo[j] = malloc((size_t)n * sizeof(uint64_t));
            double t0 = omp_get_wtime();
            anonset_sample_sets(&key, n, 0, Q, (const int32_t *const *)codes, d, eta, coin, ex,
                                id, NULL, fo, threads[k]);
            t[r] = omp_get_wtime() - t0;
            for (int j = 0; j < Q; j++) free(fo[j]);
        }
        if (k == 0) base = best3(t);
        printf(" %.3f |", best3(t));
        if (k == 4) printf(" %.1fx |\n", base / best3(t));
    }
    /* the no-cliff pair of issue 16's target 2b: 8 columns of d = 16, eta = 5
     * (one table lookup a cell) and 8 of d = 64, eta = 32 (the composition
     * path), p = 1, reused outputs; ns per cell at each thread count */
    {
        enum { W = 8 };
        const int32_t dd[2] = {16, 64}, ee[2] = {5, 32};
        int32_t wd[W], we[W], wx[W], wi[W];
        uint64_t wc[W];
        const int32_t *wcodes[W];
        uint64_t *wout[W];
        double one[2] = {0, 0};
        for (int c = 0; c < 2; c++) {
            for (int j = 0; j < W; j++) {
                wd[j] = dd[c]; we[j] = ee[c]; wx[j] = 0; wi[j] = j; wc[j] = (uint64_t)1 << 32;
                int32_t *cc = malloc((size_t)n * sizeof(int32_t));
                for (int64_t i = 0; i < n; i++) {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    cc[i] = (int32_t)(x % (uint64_t)dd[c]);
                }
                wcodes[j] = cc;
                wout[j] = malloc((size_t)n * sizeof(uint64_t));
                memset(wout[j], 1, (size_t)n * sizeof(uint64_t));
            }
            printf("| publish %d columns d = %d, eta = %d, reused output (ns per cell) |", W,
                   dd[c], ee[c]);
            for (int k = 0; k < 5; k++) {
                double t[3];
                for (int r = 0; r < 3; r++) {
                    double t0 = omp_get_wtime();
                    anonset_sample_sets(&key, n, 0, W, wcodes, wd, we, wc, wx, wi, NULL, wout,
                                        threads[k]);
                    t[r] = (omp_get_wtime() - t0) / ((double)n * W) * 1e9;
                }
                if (k == 0) base = best3(t);
                printf(" %.2f |", best3(t));
                if (k == 4) printf(" %.1fx |\n", base / best3(t));
            }
            one[c] = base;
            for (int j = 0; j < W; j++) { free((void *)wcodes[j]); free(wout[j]); }
        }
        printf("2b (1 thread): d = 64, eta = 32 at %.2f ns a cell, d = 16, eta = 5 at %.2f: "
               "ratio %.2f\n", one[1], one[0], one[1] / one[0]);
    }
    /* count_w on four 16..18-valued columns */
    /* the first columns with 18, 17, 16 and 16 values (the heaviest q' = 4) */
    const int wants[4] = {18, 17, 16, 16};
    int cw[4] = {-1, -1, -1, -1};
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < Q && cw[t] < 0; j++)
            if (d[j] == wants[t] && (t == 0 || j != cw[t - 1])) cw[t] = j;
    const uint64_t *cm[4];
    int32_t cd[4];
    int64_t cells = 1;
    for (int t = 0; t < 4; t++) { cm[t] = out[cw[t]]; cd[t] = d[cw[t]]; cells *= cd[t]; }
    int64_t *w = malloc((size_t)cells * sizeof(int64_t));
    for (int meth = 1; meth <= 2; meth++) {
        printf("| count_w q'=4 (%d x %d x %d x %d), %s (s) |", cd[0], cd[1], cd[2], cd[3],
               meth == 1 ? "direct" : "factorized");
        for (int k = 0; k < 5; k++) {
            double t[3];
            for (int r = 0; r < 3; r++) {
                memset(w, 0, (size_t)cells * sizeof(int64_t));
                double t0 = omp_get_wtime();
                anonset_count_w_method(n, 4, cm, cd, 625, cells, w, threads[k], meth);
                t[r] = omp_get_wtime() - t0;
            }
            if (k == 0) base = best3(t);
            printf(" %.3f |", best3(t));
            if (k == 4) printf(" %.1fx |\n", base / best3(t));
        }
    }
    /* the paper EM */
    int32_t ed[2][5] = {{16, 16, 17, 18, 0}, {8, 9, 14, 16, 41}};
    int eq[2] = {4, 5};
    for (int e = 0; e < 2; e++) {
        int64_t m = 1;
        for (int j = 0; j < eq[e]; j++) m *= ed[e][j];
        double *ww = malloc((size_t)m * sizeof(double)), *xx = malloc((size_t)m * sizeof(double));
        double *sc = malloc((size_t)(3 * m) * sizeof(double));
        double a[5] = {0.6, 0.6, 0.6, 0.6, 0.6}, b[5] = {0.1, 0.1, 0.1, 0.1, 0.1};
        for (int64_t i = 0; i < m; i++) ww[i] = (double)((i * 7919) % 100);
        printf("| EM, \\|C\\| = %lld, 50 iterations (ms per iteration) |", (long long)m);
        for (int k = 0; k < 5; k++) {
            double t[3];
            for (int r = 0; r < 3; r++) {
                memcpy(xx, ww, (size_t)m * sizeof(double));
                anonset_em_report rep;
                double t0 = omp_get_wtime();
                anonset_em_run(eq[e], ed[e], NULL, a, b, ww, xx, sc, 50, 0.0, 0.0, 0, &rep,
                               threads[k], -1);
                t[r] = (omp_get_wtime() - t0) / 50 * 1e3;
            }
            if (k == 0) base = best3(t);
            printf(" %.3f |", best3(t));
            if (k == 4) printf(" %.1fx |\n", base / best3(t));
        }
        free(ww); free(xx); free(sc);
    }
    return 0;
}
