/* Counter-based generators: ChaCha20 (default, cryptographic) and Philox4x64-10. */
#include "rng.h"

#include <string.h>

#define ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))

/* "expand 32-byte k" */
static const uint32_t CHACHA_CONST[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};

#define QR(a, b, c, d)                       \
    a += b; d ^= a; d = ROTL32(d, 16);       \
    c += d; b ^= c; b = ROTL32(b, 12);       \
    a += b; d ^= a; d = ROTL32(d, 8);        \
    c += d; b ^= c; b = ROTL32(b, 7);

static void chacha20_block(const uint32_t key[8], uint64_t counter, uint32_t stream,
                           uint32_t sub, uint32_t out[16]) {
    uint32_t in[16], x[16];
    memcpy(in, CHACHA_CONST, sizeof CHACHA_CONST);
    memcpy(in + 4, key, 8 * sizeof(uint32_t));
    in[12] = (uint32_t)counter;
    in[13] = (uint32_t)(counter >> 32);
    in[14] = stream;
    in[15] = sub;
    memcpy(x, in, sizeof x);
    for (int r = 0; r < 10; r++) {
        QR(x[0], x[4], x[8], x[12]);
        QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]);
        QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]);
        QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]);
        QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++) out[i] = x[i] + in[i];
}

/* Several ChaCha20 blocks side by side, for consecutive counters (same stream
 * and sub).  Lanes are blocks (x[word][lane]).  The lane count and the
 * instruction set are chosen at run time (anonset_simd_level): 16 lanes in
 * AVX-512 registers, 8 lanes in AVX2 registers, or 8 lanes of portable code
 * (GCC/clang vector extensions: pairs of SSE2 registers on x86-64, NEON on
 * arm64; plain loops elsewhere).  No -march flag is needed: the AVX2 and
 * AVX-512 versions are compiled with target attributes and only called where
 * the CPU (and the OS) supports them.  Every version gives the same bytes. */
#if defined(__GNUC__)
/* GCC/clang vector extensions: 16 state vectors stay in registers. */
#define VROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define VQR(a, b, c, d)                          \
    a += b; d ^= a; d = VROTL(d, 16);            \
    c += d; b ^= c; b = VROTL(b, 12);            \
    a += b; d ^= a; d = VROTL(d, 8);             \
    c += d; b ^= c; b = VROTL(b, 7);

/* The body of an L-lane block function on vector type T; lane l has the
 * counter CTR (an expression in l); STORE(x, out) writes the blocks (a
 * macro chosen where the body is used). */
#define CHACHA_LANES_AT(T, L, CTR)                                                          \
    T in[16];                                                                               \
    for (int i = 0; i < 4; i++) in[i] = (T){0} + CHACHA_CONST[i];                           \
    for (int i = 0; i < 8; i++) in[4 + i] = (T){0} + key[i];                                \
    for (int l = 0; l < (L); l++) {                                                         \
        uint64_t c = (CTR);                                                                 \
        in[12][l] = (uint32_t)c;                                                            \
        in[13][l] = (uint32_t)(c >> 32);                                                    \
    }                                                                                       \
    in[14] = (T){0} + stream;                                                               \
    in[15] = (T){0} + sub;                                                                  \
    T x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3], x4 = in[4], x5 = in[5], x6 = in[6],   \
      x7 = in[7], x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11], x12 = in[12],         \
      x13 = in[13], x14 = in[14], x15 = in[15];                                             \
    for (int r = 0; r < 10; r++) {                                                          \
        VQR(x0, x4, x8, x12);                                                               \
        VQR(x1, x5, x9, x13);                                                               \
        VQR(x2, x6, x10, x14);                                                              \
        VQR(x3, x7, x11, x15);                                                              \
        VQR(x0, x5, x10, x15);                                                              \
        VQR(x1, x6, x11, x12);                                                              \
        VQR(x2, x7, x8, x13);                                                               \
        VQR(x3, x4, x9, x14);                                                               \
    }                                                                                       \
    T x[16] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15};       \
    for (int i = 0; i < 16; i++) x[i] += in[i];                                             \
    STORE(x, out);

/* out[16 l + i] = x[i][l]: lane l of the state vectors is block l. */
#define STORE_LANES(x, out, L)                                                              \
    for (int l = 0; l < (L); l++)                                                           \
        for (int i = 0; i < 16; i++) (out)[16 * l + i] = (x)[i][l];
#define STORE8(x, out) STORE_LANES(x, out, 8)

/* Consecutive counters counter0, counter0 + 1, ... */
#define CHACHA_LANES(T, L) CHACHA_LANES_AT(T, L, counter0 + (uint64_t)l)

typedef uint32_t anonset_v8u __attribute__((vector_size(32)));
#define STORE STORE8

static void chacha20_block8(const uint32_t key[8], uint64_t counter0, uint32_t stream,
                            uint32_t sub, uint32_t out[128]) {
    CHACHA_LANES(anonset_v8u, 8)
}

/* Lanes at arbitrary counters ctr[0..L) (the retries of rejected draws). */
static void chacha20_at8(const uint32_t key[8], const uint64_t *ctr, uint32_t stream,
                         uint32_t sub, uint32_t out[128]) {
    CHACHA_LANES_AT(anonset_v8u, 8, ctr[l])
}

#undef STORE

#if ANONSET_X86_DISPATCH
#include <immintrin.h>
typedef uint32_t anonset_v16u __attribute__((vector_size(64)));

/* The blocks out of the state vectors by shuffles instead of one element
 * at a time (the same bytes as STORE_LANES; a quarter of the time of a
 * 16-block call went to the element-wise copy).  AVX2: two 8 x 8 transposes
 * of 32-bit words (state words 0-7 and 8-15). */
ANONSET_TARGET_AVX2
static inline void store_transposed8(const anonset_v8u *x, uint32_t *out) {
    for (int h = 0; h < 2; h++) {
        const anonset_v8u *v = x + 8 * h;
        __m256i t[8], u[8];
        for (int i = 0; i < 8; i += 2) {
            t[i] = _mm256_unpacklo_epi32((__m256i)v[i], (__m256i)v[i + 1]);
            t[i + 1] = _mm256_unpackhi_epi32((__m256i)v[i], (__m256i)v[i + 1]);
        }
        for (int i = 0; i < 8; i += 4) {
            u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
            u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
            u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
            u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
        }
        /* u[j] (j < 4): words 0-3 of blocks j and 4 + j; u[4 + j]: words 4-7 */
        for (int j = 0; j < 4; j++) {
            _mm256_storeu_si256((__m256i *)(out + 16 * j + 8 * h),
                                _mm256_permute2x128_si256(u[j], u[4 + j], 0x20));
            _mm256_storeu_si256((__m256i *)(out + 16 * (4 + j) + 8 * h),
                                _mm256_permute2x128_si256(u[j], u[4 + j], 0x31));
        }
    }
}

/* AVX-512: one 16 x 16 transpose of 32-bit words in four shuffle stages. */
ANONSET_TARGET_AVX512
static inline void store_transposed16(const anonset_v16u *x, uint32_t *out) {
    __m512i a[16], b[16];
    for (int i = 0; i < 16; i += 2) {           /* 32-bit pairs */
        b[i] = _mm512_unpacklo_epi32((__m512i)x[i], (__m512i)x[i + 1]);
        b[i + 1] = _mm512_unpackhi_epi32((__m512i)x[i], (__m512i)x[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {           /* 64-bit pairs */
        a[i] = _mm512_unpacklo_epi64(b[i], b[i + 2]);
        a[i + 1] = _mm512_unpackhi_epi64(b[i], b[i + 2]);
        a[i + 2] = _mm512_unpacklo_epi64(b[i + 1], b[i + 3]);
        a[i + 3] = _mm512_unpackhi_epi64(b[i + 1], b[i + 3]);
    }
    /* a[4 g + j]: 128-bit lane L holds words 4 g .. 4 g + 3 of block 4 L + j */
    for (int j = 0; j < 4; j++) {
        const __m512i t0 = _mm512_shuffle_i32x4(a[j], a[4 + j], 0x44);
        const __m512i t1 = _mm512_shuffle_i32x4(a[j], a[4 + j], 0xEE);
        const __m512i t2 = _mm512_shuffle_i32x4(a[8 + j], a[12 + j], 0x44);
        const __m512i t3 = _mm512_shuffle_i32x4(a[8 + j], a[12 + j], 0xEE);
        _mm512_storeu_si512((void *)(out + 16 * j), _mm512_shuffle_i32x4(t0, t2, 0x88));
        _mm512_storeu_si512((void *)(out + 16 * (4 + j)), _mm512_shuffle_i32x4(t0, t2, 0xDD));
        _mm512_storeu_si512((void *)(out + 16 * (8 + j)), _mm512_shuffle_i32x4(t1, t3, 0x88));
        _mm512_storeu_si512((void *)(out + 16 * (12 + j)), _mm512_shuffle_i32x4(t1, t3, 0xDD));
    }
}

#define STORE(x, out) store_transposed8(x, out)
ANONSET_TARGET_AVX2
static void chacha20_at8_avx2(const uint32_t key[8], const uint64_t *ctr, uint32_t stream,
                              uint32_t sub, uint32_t out[128]) {
    CHACHA_LANES_AT(anonset_v8u, 8, ctr[l])
}

#undef STORE
#define STORE(x, out) store_transposed16(x, out)
ANONSET_TARGET_AVX512
static void chacha20_at16_avx512(const uint32_t key[8], const uint64_t *ctr, uint32_t stream,
                                 uint32_t sub, uint32_t out[256]) {
    CHACHA_LANES_AT(anonset_v16u, 16, ctr[l])
}

#undef STORE
#define STORE(x, out) store_transposed8(x, out)
ANONSET_TARGET_AVX2
static void chacha20_block8_avx2(const uint32_t key[8], uint64_t counter0, uint32_t stream,
                                 uint32_t sub, uint32_t out[128]) {
    CHACHA_LANES(anonset_v8u, 8)
}

/* 16 lanes of 32 bits fill one zmm register; rotations are one instruction. */
#undef STORE
#define STORE(x, out) store_transposed16(x, out)
ANONSET_TARGET_AVX512
static void chacha20_block16_avx512(const uint32_t key[8], uint64_t counter0, uint32_t stream,
                                    uint32_t sub, uint32_t out[256]) {
    CHACHA_LANES(anonset_v16u, 16)
}
#undef STORE
#endif
#else
#define QR8(a, b, c, d)                                                    \
    for (int l = 0; l < 8; l++) {                                          \
        x[a][l] += x[b][l]; x[d][l] ^= x[a][l]; x[d][l] = ROTL32(x[d][l], 16); \
        x[c][l] += x[d][l]; x[b][l] ^= x[c][l]; x[b][l] = ROTL32(x[b][l], 12); \
        x[a][l] += x[b][l]; x[d][l] ^= x[a][l]; x[d][l] = ROTL32(x[d][l], 8);  \
        x[c][l] += x[d][l]; x[b][l] ^= x[c][l]; x[b][l] = ROTL32(x[b][l], 7);  \
    }

static void chacha20_block8(const uint32_t key[8], uint64_t counter0, uint32_t stream,
                            uint32_t sub, uint32_t out[128]) {
    uint32_t in[16][8], x[16][8];
    for (int l = 0; l < 8; l++) {
        uint64_t c = counter0 + (uint64_t)l;
        for (int i = 0; i < 4; i++) in[i][l] = CHACHA_CONST[i];
        for (int i = 0; i < 8; i++) in[4 + i][l] = key[i];
        in[12][l] = (uint32_t)c;
        in[13][l] = (uint32_t)(c >> 32);
        in[14][l] = stream;
        in[15][l] = sub;
    }
    memcpy(x, in, sizeof x);
    for (int r = 0; r < 10; r++) {
        QR8(0, 4, 8, 12);
        QR8(1, 5, 9, 13);
        QR8(2, 6, 10, 14);
        QR8(3, 7, 11, 15);
        QR8(0, 5, 10, 15);
        QR8(1, 6, 11, 12);
        QR8(2, 7, 8, 13);
        QR8(3, 4, 9, 14);
    }
    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 16; i++) out[16 * l + i] = x[i][l] + in[i][l];
}

static void chacha20_at8(const uint32_t key[8], const uint64_t *ctr, uint32_t stream,
                         uint32_t sub, uint32_t out[128]) {
    for (int l = 0; l < 8; l++) chacha20_block(key, ctr[l], stream, sub, out + 16 * l);
}
#endif

/* ---------------------------------------------------------------- Philox */
#define PHILOX_M0 0xD2E7470EE14C6C93ull
#define PHILOX_M1 0xCA5A826395121157ull
#define PHILOX_W0 0x9E3779B97F4A7C15ull
#define PHILOX_W1 0xBB67AE8584CAA73Bull

static inline void mulhilo64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

void anonset_philox4x64(const uint64_t ctr[4], const uint64_t key[2], uint64_t out[4]) {
    uint64_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint64_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t hi0, lo0, hi1, lo1;
        mulhilo64(PHILOX_M0, c0, &hi0, &lo0);
        mulhilo64(PHILOX_M1, c2, &hi1, &lo1);
        uint64_t n0 = hi1 ^ c1 ^ k0;
        uint64_t n1 = lo1;
        uint64_t n2 = hi0 ^ c3 ^ k1;
        uint64_t n3 = lo0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

static void philox_block(const uint32_t key[8], uint64_t counter, uint32_t stream,
                         uint32_t sub, uint32_t out[16]) {
    /* Philox keys are 128 bits: fold the 256-bit key by xor of its halves. */
    uint64_t k[2];
    k[0] = ((uint64_t)key[1] << 32 | key[0]) ^ ((uint64_t)key[5] << 32 | key[4]);
    k[1] = ((uint64_t)key[3] << 32 | key[2]) ^ ((uint64_t)key[7] << 32 | key[6]);
    for (int h = 0; h < 2; h++) {
        uint64_t c[4] = {counter, ((uint64_t)sub << 32) | stream, (uint64_t)h, 0};
        uint64_t o[4];
        anonset_philox4x64(c, k, o);
        for (int i = 0; i < 4; i++) {
            out[8 * h + 2 * i] = (uint32_t)o[i];
            out[8 * h + 2 * i + 1] = (uint32_t)(o[i] >> 32);
        }
    }
}

void anonset_block(const anonset_key *k, uint64_t counter, uint32_t stream,
                   uint32_t sub, uint32_t out[16]) {
    if (k->kind == ANONSET_RNG_PHILOX)
        philox_block(k->key, counter, stream, sub, out);
    else
        chacha20_block(k->key, counter, stream, sub, out);
}

int anonset_simd_level(void) {
#if ANONSET_X86_DISPATCH
    if (anonset_cpu_avx512()) return ANONSET_SIMD_AVX512;
    if (anonset_cpu_avx2()) return ANONSET_SIMD_AVX2;
#endif
    return ANONSET_SIMD_GENERIC;
}

/* nblocks ChaCha20 blocks with the given SIMD level (which must be supported). */
static void chacha20_blocks(const uint32_t key[8], uint64_t counter0, uint32_t stream,
                            uint32_t sub, int64_t nblocks, uint32_t *out, int level) {
    int64_t b = 0;
    (void)level;
#if ANONSET_X86_DISPATCH
    if (level >= ANONSET_SIMD_AVX512)
        for (; b + 16 <= nblocks; b += 16)
            chacha20_block16_avx512(key, counter0 + (uint64_t)b, stream, sub, out + 16 * b);
    if (level >= ANONSET_SIMD_AVX2) {
        for (; b + 8 <= nblocks; b += 8)
            chacha20_block8_avx2(key, counter0 + (uint64_t)b, stream, sub, out + 16 * b);
    }
#endif
    for (; b + 8 <= nblocks; b += 8)
        chacha20_block8(key, counter0 + (uint64_t)b, stream, sub, out + 16 * b);
    if (b < nblocks) {          /* the last 1..7 blocks: one more side-by-side call */
        uint32_t tmp[128];
#if ANONSET_X86_DISPATCH
        if (level >= ANONSET_SIMD_AVX2)
            chacha20_block8_avx2(key, counter0 + (uint64_t)b, stream, sub, tmp);
        else
#endif
            chacha20_block8(key, counter0 + (uint64_t)b, stream, sub, tmp);
        memcpy(out + 16 * b, tmp, (size_t)(nblocks - b) * 16 * sizeof(uint32_t));
    }
}

void anonset_blocks_simd(const anonset_key *k, uint64_t counter0, uint32_t stream,
                         uint32_t sub, int64_t nblocks, uint32_t *out, int level) {
    if (k->kind == ANONSET_RNG_PHILOX) {
        for (int64_t b = 0; b < nblocks; b++)
            philox_block(k->key, counter0 + (uint64_t)b, stream, sub, out + 16 * b);
    } else {
        chacha20_blocks(k->key, counter0, stream, sub, nblocks, out, level);
    }
}

void anonset_blocks(const anonset_key *k, uint64_t counter0, uint32_t stream,
                    uint32_t sub, int64_t nblocks, uint32_t *out) {
    anonset_blocks_simd(k, counter0, stream, sub, nblocks, out, anonset_simd_level());
}

void anonset_blocks_at_simd(const anonset_key *k, const uint64_t *counters, uint32_t stream,
                            uint32_t sub, int64_t nblocks, uint32_t *out, int level) {
    if (k->kind == ANONSET_RNG_PHILOX) {
        for (int64_t b = 0; b < nblocks; b++)
            philox_block(k->key, counters[b], stream, sub, out + 16 * b);
        return;
    }
    const int lanes = level >= ANONSET_SIMD_AVX512 ? 16 : 8;
    for (int64_t b = 0; b < nblocks; b += lanes) {
        uint64_t ctr[16];
        uint32_t tmp[256];
        const int64_t len = nblocks - b < lanes ? nblocks - b : lanes;
        for (int l = 0; l < lanes; l++) ctr[l] = counters[b + (l < len ? l : len - 1)];
        uint32_t *dst = len == lanes ? out + 16 * b : tmp;
#if ANONSET_X86_DISPATCH
        if (level >= ANONSET_SIMD_AVX512)
            chacha20_at16_avx512(k->key, ctr, stream, sub, dst);
        else if (level >= ANONSET_SIMD_AVX2)
            chacha20_at8_avx2(k->key, ctr, stream, sub, dst);
        else
#endif
            chacha20_at8(k->key, ctr, stream, sub, dst);
        if (dst == tmp) memcpy(out + 16 * b, tmp, (size_t)len * 16 * sizeof(uint32_t));
    }
}

void anonset_blocks_at(const anonset_key *k, const uint64_t *counters, uint32_t stream,
                       uint32_t sub, int64_t nblocks, uint32_t *out) {
    anonset_blocks_at_simd(k, counters, stream, sub, nblocks, out, anonset_simd_level());
}

void anonset_block8(const anonset_key *k, uint64_t counter0, uint32_t stream,
                    uint32_t sub, uint32_t out[128]) {
    anonset_blocks(k, counter0, stream, sub, 8, out);
}

/* Blocks per work unit of anonset_fill: a multiple of every lane count. */
#define FILL_UNIT 64

void anonset_fill(const anonset_key *k, uint64_t counter0, uint32_t stream,
                  uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads) {
    anonset_fill_simd(k, counter0, stream, sub, nblocks, out, n_threads, anonset_simd_level());
}

void anonset_fill_simd(const anonset_key *k, uint64_t counter0, uint32_t stream,
                       uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads, int level) {
    int nt = anonset_threads(n_threads);
    const int64_t nunits = (nblocks + FILL_UNIT - 1) / FILL_UNIT;
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
        shared(k, counter0, stream, sub, nblocks, out, nunits, level) if (nunits > 1)
#endif
    for (int64_t u = 0; u < nunits; u++) {
        const int64_t b = u * FILL_UNIT;
        const int64_t len = nblocks - b < FILL_UNIT ? nblocks - b : FILL_UNIT;
        anonset_blocks_simd(k, counter0 + (uint64_t)b, stream, sub, len, out + 16 * b, level);
    }
}
