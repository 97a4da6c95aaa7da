/* A log that vectorizes, for log-likelihoods (paper 000's EM, eq. 26, and
 * the exact EM): shared by em.c and exact.c. */
#ifndef ANONSET_FASTLOG_H
#define ANONSET_FASTLOG_H

#include <stdint.h>

/* log(v) for the log-likelihood, v > 0, in a form the compiler vectorizes
 * (libm's log is a call per element): v = m 2^e with m in [sqrt(1/2),
 * sqrt(2)), log m = 2 atanh(s) = 2 s sum_k s^(2k) / (2k + 1), s = (m - 1) /
 * (m + 1), |s| <= 0.1716, summed to k = 11 (the next term is below 1e-18 of
 * the sum); the exponent is converted to a double without an int-to-float
 * instruction (2^52 + k, minus 2^52).  Relative error about 1e-16 (checked
 * against libm in tests).  v below the smallest normal double is taken as
 * that value. */
static inline double anonset_log_bits(uint64_t vbits) {
    /* integer operations on the bits only (no int-to-float conversion, no
     * branch), and the bits read as integers by the caller's loop: GCC then
     * vectorizes loops of it with AVX2 (not when it reinterprets a double
     * itself) */
    union { double d; uint64_t u; } kb, mb;
    /* v below the smallest normal 2^-1022 (-0 and negatives too: their bits
     * are negative as int64) is taken as that value: a max of int64s */
    /* (written as a max of one variable: GCC 12 does not if-convert the same
     * select written as one expression) */
    int64_t sb = (int64_t)vbits;
    const int64_t tiny = 0x0010000000000000ll;
    sb = sb < tiny ? tiny : sb;
    const uint64_t bits = (uint64_t)sb;
    const uint64_t frac = bits & 0x000FFFFFFFFFFFFFull;
    const uint64_t big = frac > 0x6A09E667F3BCDull;           /* m > sqrt(2) */
    kb.u = ((bits >> 52) + big) | 0x4330000000000000ull;       /* 2^52 + k */
    const double e = kb.d - 4503599627370496.0 - 1023.0;
    mb.u = frac | ((0x3FFull - big) << 52);                    /* m, or m / 2 */
    const double m = mb.d;
    const double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 1.0 / 23.0;
    p = p * z + 1.0 / 21.0;
    p = p * z + 1.0 / 19.0;
    p = p * z + 1.0 / 17.0;
    p = p * z + 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z + 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z + 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z + 1.0 / 3.0;
    p = p * z + 1.0;
    /* ln 2 = LN2_HI + LN2_LO, LN2_HI with trailing zero bits: e LN2_HI is exact */
    return e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10 + 2.0 * s * p);
}

#endif
