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

/* Eight ChaCha20 blocks for counters counter0..counter0+7 (same stream and
 * sub).  Lanes are blocks (x[word][lane]); on x86-64 Linux (glibc) an AVX2
 * clone is selected at load time when the CPU has AVX2, so no -march flag is
 * needed (8 lanes of 32 bits fill one ymm register). */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__GNUC__) && \
    !defined(ANONSET_NO_MULTIVERSION)
#define ANONSET_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define ANONSET_MULTIVERSION
#endif

#if defined(__GNUC__)
/* GCC/clang vector extensions: 16 state vectors of 8 lanes stay in
 * registers (ymm in the AVX2 clone, pairs of xmm otherwise). */
typedef uint32_t anonset_v8u __attribute__((vector_size(32)));
#define VROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define VQR(a, b, c, d)                          \
    a += b; d ^= a; d = VROTL(d, 16);            \
    c += d; b ^= c; b = VROTL(b, 12);            \
    a += b; d ^= a; d = VROTL(d, 8);             \
    c += d; b ^= c; b = VROTL(b, 7);

ANONSET_MULTIVERSION
static void chacha20_block8(const uint32_t key[8], uint64_t counter0, uint32_t stream,
                            uint32_t sub, uint32_t out[128]) {
    anonset_v8u in[16];
    for (int i = 0; i < 4; i++) in[i] = (anonset_v8u){0} + CHACHA_CONST[i];
    for (int i = 0; i < 8; i++) in[4 + i] = (anonset_v8u){0} + key[i];
    for (int l = 0; l < 8; l++) {
        uint64_t c = counter0 + (uint64_t)l;
        in[12][l] = (uint32_t)c;
        in[13][l] = (uint32_t)(c >> 32);
    }
    in[14] = (anonset_v8u){0} + stream;
    in[15] = (anonset_v8u){0} + sub;
    anonset_v8u x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3], x4 = in[4], x5 = in[5],
                x6 = in[6], x7 = in[7], x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11],
                x12 = in[12], x13 = in[13], x14 = in[14], x15 = in[15];
    for (int r = 0; r < 10; r++) {
        VQR(x0, x4, x8, x12);
        VQR(x1, x5, x9, x13);
        VQR(x2, x6, x10, x14);
        VQR(x3, x7, x11, x15);
        VQR(x0, x5, x10, x15);
        VQR(x1, x6, x11, x12);
        VQR(x2, x7, x8, x13);
        VQR(x3, x4, x9, x14);
    }
    anonset_v8u x[16] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15};
    for (int i = 0; i < 16; i++) x[i] += in[i];
    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 16; i++) out[16 * l + i] = x[i][l];
}
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

void anonset_block8(const anonset_key *k, uint64_t counter0, uint32_t stream,
                    uint32_t sub, uint32_t out[128]) {
    if (k->kind == ANONSET_RNG_PHILOX) {
        for (int l = 0; l < 8; l++)
            philox_block(k->key, counter0 + (uint64_t)l, stream, sub, out + 16 * l);
    } else {
        chacha20_block8(k->key, counter0, stream, sub, out);
    }
}

void anonset_fill(const anonset_key *k, uint64_t counter0, uint32_t stream,
                  uint32_t sub, int64_t nblocks, uint32_t *out, int n_threads) {
    int nt = anonset_threads(n_threads);
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
        shared(k, counter0, stream, sub, nblocks, out)
#endif
    for (int64_t b = 0; b < nblocks; b += 8) {
        if (b + 8 <= nblocks) {
            anonset_block8(k, counter0 + (uint64_t)b, stream, sub, out + 16 * b);
        } else {
            for (int64_t e = b; e < nblocks; e++)
                anonset_block(k, counter0 + (uint64_t)e, stream, sub, out + 16 * e);
        }
    }
}
