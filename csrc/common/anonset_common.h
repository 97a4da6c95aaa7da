/* Shared definitions for the anonset C99 kernels: status codes and OpenMP shim.
 * No Python headers here: the kernels are plain C with caller-owned buffers. */
#ifndef ANONSET_COMMON_H
#define ANONSET_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* MSVC's C compiler spells C99's restrict __restrict. */
#if defined(_MSC_VER) && !defined(__clang__) && !defined(restrict)
#define restrict __restrict
#endif

#ifndef ANONSET_HAVE_OPENMP
#define ANONSET_HAVE_OPENMP 0
#endif
#if ANONSET_HAVE_OPENMP
#include <omp.h>
#endif

typedef enum {
    ANONSET_OK = 0,
    ANONSET_ERR_NOMEM = 1,      /* a scratch allocation failed */
    ANONSET_ERR_VALUE = 2,      /* a code outside its domain, or a bad size */
    ANONSET_ERR_SETSIZE = 3     /* a published set has an unexpected size */
} anonset_status;

/* Number of threads a parallel region would use with n_threads requested
 * (<= 0 means: the OpenMP default).  Always 1 without OpenMP. */
static inline int anonset_threads(int n_threads) {
#if ANONSET_HAVE_OPENMP
    return n_threads > 0 ? n_threads : omp_get_max_threads();
#else
    (void)n_threads;
    return 1;
#endif
}

static inline int anonset_popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int c = 0;
    while (x) { x &= x - 1; c++; }
    return c;
#endif
}

static inline int anonset_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int c = 0;
    while (!(x & 1u)) { x >>= 1; c++; }
    return c;
#endif
}

/* Index of the highest set bit of a nonzero word. */
static inline int anonset_msb64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(x);
#else
    int c = 0;
    while (x >>= 1) c++;
    return c;
#endif
}

#endif
