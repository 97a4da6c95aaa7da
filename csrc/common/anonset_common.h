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
#if defined(_MSC_VER)
#include <stdlib.h>             /* _byteswap_uint64 */
#endif

#ifndef ANONSET_HAVE_OPENMP
#define ANONSET_HAVE_OPENMP 0
#endif
#if ANONSET_HAVE_OPENMP
#include <omp.h>
#endif

/* Set in a process forked from one that had imported anonset (the
 * os.register_at_fork handler of anonset/_fork.py): GNU OpenMP's thread pool
 * does not survive fork(), and a child's first team of two threads or more
 * waits forever for threads that are not there; there every parallel region
 * runs on one thread.  One flag per extension module: weak, so that its
 * files share one definition, and hidden, so that it is not another
 * module's. */
#if ANONSET_HAVE_OPENMP && (defined(__GNUC__) || defined(__clang__))
#define ANONSET_FORK_GUARD 1
__attribute__((weak, visibility("hidden"))) int anonset_fork_child = 0;
#else
#define ANONSET_FORK_GUARD 0
#endif

static inline void anonset_mark_fork_child(void) {
#if ANONSET_FORK_GUARD
    anonset_fork_child = 1;
#endif
}

typedef enum {
    ANONSET_OK = 0,
    ANONSET_ERR_NOMEM = 1,      /* a scratch allocation failed */
    ANONSET_ERR_VALUE = 2,      /* a code outside its domain, or a bad size */
    ANONSET_ERR_SETSIZE = 3     /* a published set has an unexpected size */
} anonset_status;

/* Number of threads a parallel region would use with n_threads requested
 * (<= 0 means: the OpenMP default).  Always 1 without OpenMP. */
static inline int anonset_threads(int n_threads) {
#if ANONSET_FORK_GUARD
    if (anonset_fork_child) return 1;
#endif
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

/* A word's value in the order of its bytes in memory (memcmp's order): the
 * word itself on a big-endian machine, byte-swapped on a little-endian one. */
static inline uint64_t anonset_byte_order64(uint64_t x) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return x;
#elif defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(x);
#elif defined(_MSC_VER)
    return _byteswap_uint64(x);
#else
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) { r = (r << 8) | (x & 0xFFu); x >>= 8; }
    return r;
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

/* Run-time SIMD dispatch on x86 with GCC or clang: kernels compile their
 * AVX2 / AVX-512 versions with target attributes (no -march flag; wheels run
 * on any x86-64) and call them only where __builtin_cpu_supports says the CPU
 * and the OS support them.  Elsewhere (MSVC, arm64, ANONSET_NO_MULTIVERSION)
 * only the portable versions exist. */
enum { ANONSET_SIMD_GENERIC = 0, ANONSET_SIMD_AVX2 = 1, ANONSET_SIMD_AVX512 = 2 };

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(ANONSET_NO_MULTIVERSION)
#define ANONSET_X86_DISPATCH 1
#define ANONSET_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define ANONSET_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))
static inline int anonset_cpu_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static inline int anonset_cpu_avx512(void) {
    return anonset_cpu_avx2() && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl");
}
#else
#define ANONSET_X86_DISPATCH 0
#endif

/* hi:lo = a * b (64 x 64 -> 128 bits). */
static inline uint64_t anonset_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

#endif
