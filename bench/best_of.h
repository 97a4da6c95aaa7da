/* The timing of bench/cliff_parts.c and bench/cliff_popcount.c: the best of
 * 25 runs after a warm-up, in ns per cell of NCELLS cells (the includer
 * defines NCELLS first). */
#ifndef ANONSET_BENCH_BEST_OF_H
#define ANONSET_BENCH_BEST_OF_H

#include <omp.h>

static double now(void) { return omp_get_wtime(); }

#define BEST(var, body) do {                                              \
        double best_ = 1e30;                                                \
        for (int rep_ = 0; rep_ < 26; rep_++) {                            \
            const double t0_ = now();                                       \
            body;                                                           \
            const double t_ = now() - t0_;                                  \
            if (rep_ > 0 && t_ < best_) best_ = t_;                         \
        }                                                                   \
        var = best_ / NCELLS * 1e9;                                         \
    } while (0)

#endif
