/* Codes through a lookup table (see lookup.h). */
#include "lookup.h"

/* The offset v - lo is taken in unsigned 64-bit arithmetic, so that one
 * comparison with len rejects values on either side of the table (lo is
 * within the range of int64 and so is every signed value; an unsigned value
 * above 2^63 - 1 wraps to an offset >= len as well, since len < 2^62). */
#define LUT_CODES(T, WIDE)                                                            \
    static int64_t lut_codes_##T(const T *v, int64_t n, int64_t lo, const int32_t *table, \
                                 int64_t len, int32_t *codes) {                       \
        int64_t none = 0;                                                             \
        for (int64_t i = 0; i < n; i++) {                                             \
            const uint64_t off = (uint64_t)(WIDE)v[i] - (uint64_t)lo;                 \
            const int in = off < (uint64_t)len;                                       \
            const int32_t c = in ? table[in ? off : 0] : -1;                          \
            codes[i] = c;                                                             \
            none += c < 0;                                                            \
        }                                                                             \
        return none;                                                                  \
    }
LUT_CODES(int8_t, int64_t)
LUT_CODES(int16_t, int64_t)
LUT_CODES(int32_t, int64_t)
LUT_CODES(int64_t, int64_t)
LUT_CODES(uint8_t, uint64_t)
LUT_CODES(uint16_t, uint64_t)
LUT_CODES(uint32_t, uint64_t)

/* uint64: a value above INT64_MAX is outside any table (lo is an int64). */
static int64_t lut_codes_uint64_t(const uint64_t *v, int64_t n, int64_t lo, const int32_t *table,
                                  int64_t len, int32_t *codes) {
    int64_t none = 0;
    for (int64_t i = 0; i < n; i++) {
        const int big = v[i] > (uint64_t)INT64_MAX;
        const uint64_t off = (uint64_t)v[i] - (uint64_t)lo;
        const int in = !big && off < (uint64_t)len;
        const int32_t c = in ? table[in ? off : 0] : -1;
        codes[i] = c;
        none += c < 0;
    }
    return none;
}

int64_t anonset_lut_codes(const void *vals, int width, int is_signed, int64_t n, int64_t lo,
                          const int32_t *table, int64_t len, int32_t *codes) {
#define CASE(W, S, U)                                                                 \
    case W: return is_signed ? lut_codes_##S((const S *)vals, n, lo, table, len, codes)  \
                             : lut_codes_##U((const U *)vals, n, lo, table, len, codes);
    switch (width) {
        CASE(1, int8_t, uint8_t)
        CASE(2, int16_t, uint16_t)
        CASE(4, int32_t, uint32_t)
        CASE(8, int64_t, uint64_t)
        default: return -1;
    }
#undef CASE
}
