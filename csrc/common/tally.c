/* Tallies for the table digest (see tally.h). */
#include <string.h>

#include "tally.h"

void anonset_row_mix(uint64_t row0, int64_t n, uint64_t *out) {
    for (int64_t i = 0; i < n; i++) {
        uint64_t z = row0 + (uint64_t)i + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        out[i] = (z ^ (z >> 31)) | 1u;
    }
}

/* The range of the values (a pass that vectorizes), then the tally. */
/* The range of the values (a pass that vectorizes), then the tally.  A
 * small range is tallied into LANES tables side by side (cell i into table
 * i mod LANES), so that runs of one value do not wait on one counter. */
#define LANES 4
#define LANE_MAX 256
#define SMALL_TALLY(T)                                                                \
    static int64_t small_tally_##T(const T *v, int64_t n, int64_t cap, const uint64_t *mix, \
                                   int64_t *counts, uint64_t *sums) {                 \
        T lo = v[0], hi = v[0];                                                       \
        for (int64_t i = 1; i < n; i++) {                                             \
            lo = v[i] < lo ? v[i] : lo;                                               \
            hi = v[i] > hi ? v[i] : hi;                                               \
        }                                                                             \
        if (lo < 0 || (int64_t)hi >= cap || (uint64_t)hi >= (uint64_t)cap) return -1; \
        const int64_t m = (int64_t)hi;                                                \
        memset(counts, 0, (size_t)(m + 1) * sizeof *counts);                          \
        if (mix != NULL) memset(sums, 0, (size_t)(m + 1) * sizeof *sums);             \
        int64_t i = 0;                                                                \
        if (m < LANE_MAX && n >= 4 * LANE_MAX) {                                      \
            int64_t c4[LANES][LANE_MAX];                                              \
            uint64_t s4[LANES][LANE_MAX];                                             \
            for (int l = 0; l < LANES; l++) {                                         \
                memset(c4[l], 0, (size_t)(m + 1) * sizeof **c4);                      \
                memset(s4[l], 0, (size_t)(m + 1) * sizeof **s4);                      \
            }                                                                         \
            for (; i + LANES <= n; i += LANES)                                        \
                for (int l = 0; l < LANES; l++) {                                     \
                    c4[l][v[i + l]]++;                                                \
                    if (mix != NULL) s4[l][v[i + l]] += mix[i + l];                   \
                }                                                                     \
            for (int64_t x = 0; x <= m; x++)                                          \
                for (int l = 0; l < LANES; l++) {                                     \
                    counts[x] += c4[l][x];                                            \
                    if (mix != NULL) sums[x] += s4[l][x];                             \
                }                                                                     \
        }                                                                             \
        for (; i < n; i++) {                                                          \
            counts[v[i]]++;                                                           \
            if (mix != NULL) sums[v[i]] += mix[i];                                    \
        }                                                                             \
        return m;                                                                     \
    }
SMALL_TALLY(int8_t)
SMALL_TALLY(int16_t)
SMALL_TALLY(int32_t)
SMALL_TALLY(int64_t)
SMALL_TALLY(uint8_t)
SMALL_TALLY(uint16_t)
SMALL_TALLY(uint32_t)
SMALL_TALLY(uint64_t)

int64_t anonset_small_tally(const void *vals, int width, int is_signed, int64_t n, int64_t cap,
                            const uint64_t *mix, int64_t *counts, uint64_t *sums) {
    if (n <= 0) return -1;
#define CASE(W, S, U)                                                                 \
    case W: return is_signed ? small_tally_##S((const S *)vals, n, cap, mix, counts, sums) \
                             : small_tally_##U((const U *)vals, n, cap, mix, counts, sums);
    switch (width) {
        CASE(1, int8_t, uint8_t)
        CASE(2, int16_t, uint16_t)
        CASE(4, int32_t, uint32_t)
        CASE(8, int64_t, uint64_t)
        default: return -1;
    }
#undef CASE
}
