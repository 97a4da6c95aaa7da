/* Random-set publishing (paper 000 Sec. V-B; paper 004): the sampler.
 * The stream layout is documented in sample.h. */
#include "sample.h"

#include <stdlib.h>
#include <string.h>

#define SUB_DRAW 0u
#define SUB_COIN 1u
#define SUB_RETRY 2u            /* retry j of a rejected draw word: sub 2 + j */
#define PROD_MAX ((uint64_t)1 << 52)   /* rejection probability < 2^-12 per word */
#define TABLE_MAX 16384         /* largest colex table (128 KiB) */
#define CHUNK 1024              /* rows per work unit, aligned to global rows */
#define WBUF 4096               /* draw words per buffer fill (32 KiB) */

/* ------------------------------------------------------------ draw words */
static inline uint64_t word64(const uint32_t *w, int64_t i) {
    return (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
}

/* Replacement j of the rejected draw word t of stream s. */
static uint64_t retry_word(const anonset_key *key, uint32_t s, uint64_t t, uint32_t j) {
    uint32_t blk[16];
    anonset_block(key, t >> 3, s, SUB_RETRY + j, blk);
    return word64(blk, (int64_t)(t & 7u));
}

/* Mixed-radix digits dig[0..nf) of a uniform integer in [0, P), P = prod f,
 * from draw word t (value w) of stream s: Lemire's multiply-and-reject on P
 * with the multiplication done factor by factor (w f_0 = dig_0 2^64 + x, then
 * x f_1, ...: the high words are the digits, the last low word is the low
 * word of w P), so the digits are independent and uniform. */
static inline void draw_digits(const anonset_key *key, uint32_t s, uint64_t t, uint64_t w,
                               const uint64_t *f, int nf, uint64_t P, uint64_t *dig) {
    for (uint32_t j = 0;; j++) {
        uint64_t x = w;
        for (int i = 0; i < nf; i++) dig[i] = anonset_mul128(x, f[i], &x);
        if (x >= P || x >= (0 - P) % P) return;     /* (2^64 - P) mod P = 2^64 mod P */
        w = retry_word(key, s, t, j);
    }
}

/* ------------------------------------------------------------ subsets */
enum { BR_FIXED = 0, BR_TABLE = 1, BR_QUART = 2, BR_FLOYD = 3 };

/* C(n, k) for n <= 64 (exact: C(64, 32) < 2^61), from Pascal's rule. */
static uint64_t binom64(int32_t n, int32_t k) {
    if (k < 0 || k > n || n > 64) return 0;
    uint64_t row[65] = {1};
    for (int32_t m = 1; m <= n; m++)
        for (int32_t i = m; i > 0; i--) row[i] += row[i - 1];
    return row[k];
}

static uint64_t low_bits(int32_t n) {
    return n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
}

/* All k-subsets of [0, n) (n <= 64) as bitmasks in colex order, i.e. in
 * increasing order of the mask (Gosper's hack steps to the next one). */
static uint64_t *colex_table(int32_t n, int32_t k, uint64_t count) {
    uint64_t *tab = (uint64_t *)malloc((size_t)count * sizeof(uint64_t));
    if (!tab) return NULL;
    (void)n;
    uint64_t v = low_bits(k);
    for (uint64_t i = 0; i < count; i++) {
        tab[i] = v;
        if (i + 1 < count) {
            uint64_t c = v & (~v + 1);
            uint64_t r = v + c;
            v = (((r ^ v) >> 2) / c) | r;
        }
    }
    return tab;
}

/* Every 16-bit mask, grouped by popcount and increasing within a group:
 * t16[off16[k] + i] is the i-th k-subset of [0, 16) in colex order, and the
 * k-subsets of [0, m) are the first C(m, k) of the group. */
typedef struct {
    uint16_t t16[1 << 16];
    uint32_t off16[18];
    uint32_t binom[17][17];     /* C(m, k), m, k <= 16 */
} parts16;

static void parts16_build(parts16 *p) {
    uint32_t cnt[17] = {0};
    for (uint32_t m = 0; m < (1u << 16); m++) cnt[anonset_popcount64(m)]++;
    p->off16[0] = 0;
    for (int k = 0; k <= 16; k++) p->off16[k + 1] = p->off16[k] + cnt[k];
    uint32_t pos[17];
    for (int k = 0; k <= 16; k++) pos[k] = p->off16[k];
    for (uint32_t m = 0; m < (1u << 16); m++) p->t16[pos[anonset_popcount64(m)]++] = (uint16_t)m;
    for (int m = 0; m <= 16; m++)
        for (int k = 0; k <= 16; k++) p->binom[m][k] = (uint32_t)binom64(m, k);
}

/* Division by an invariant S (1 <= S < 2^48) of numerators R < 2^55 by one
 * multiplication (Granlund & Montgomery 1994, Thm. 4.2 with N = 55 bits):
 * with l = ceil(log2 S) and m = ceil(2^(55 + l) / S) <= 2^56,
 * floor(R / S) = floor(R m / 2^(55 + l)) = mulhi(R 2^9, m) >> l.  S = 1 is
 * m = 2^55, l = 0: no special case (R 2^9 < 2^64). */
#define QDIV_PRE 9
static void qdiv_make(uint64_t S, uint64_t *m, uint8_t *l) {
    const int ll = S > 1 ? anonset_msb64(S - 1) + 1 : 0;
    /* m = floor((2^(55 + l) - 1) / S) + 1 < 2^56 + 1 */
#if defined(__SIZEOF_INT128__)
    const uint64_t q = (uint64_t)((((unsigned __int128)1 << (55 + ll)) - 1u) / S);
#else
    uint64_t rem = 0, q = 0;     /* long division, portable (rem < 2 S < 2^49) */
    for (int bit = 55 + ll - 1; bit >= 0; bit--) {
        rem = (rem << 1) | 1u;
        const int take = rem >= S;
        if (take) rem -= S;
        if (bit < 64) q |= (uint64_t)take << bit;
    }
#endif
    *m = q + 1u;
    *l = (uint8_t)ll;
}

/* Unranking of k-subsets of [0, n), 16 < n <= 64, through their
 * compositions: the values are cut into parts of 16 (the last part holds the
 * rest); a composition (k_0, ..., k_{P-1}) has N = prod C(n_p, k_p) subsets,
 * listed in lexicographic order of the compositions with cumulative counts
 * cum; within a composition, index R is read in mixed radix (part 0 most
 * significant) and each digit indexes that part's colex list.  The digits
 * come from independent divisions, Q_p = R div S_p with S_p = prod_{i > p} N_i
 * (digit_p = Q_p - N_p Q_{p-1}), so they do not wait on each other.  Records
 * always have four parts: parts P .. 3 are empty (k = 0, N = 1, whose colex
 * list is the empty mask), which leaves the order and the digits unchanged.
 * A guide table over index buckets of 2^sh finds the composition: two
 * branch-free steps, then (rarely) a loop.  One record (64 bytes) per
 * composition. */
typedef struct {
    uint64_t cum;           /* index of the composition's first subset */
    uint64_t m[3];          /* divisors S_0, S_1, S_2 (qdiv_make) */
    uint32_t base[4];       /* t16 offset of part p's list: off16[k_p] */
    uint16_t N[4];          /* C(n_p, k_p) */
    uint8_t l[4];           /* shifts of the divisors */
    uint32_t pad;
} quart_comp;

typedef struct {
    int32_t n, k, parts;
    int64_t ncomp;
    int sh;
    quart_comp *comp;       /* ncomp + 2 (sentinels: cum = UINT64_MAX) */
    uint32_t *guide;        /* ((C(n, k) - 1) >> sh) + 1 */
} quart_plan;

static void quart_free(quart_plan *q) {
    free(q->comp); free(q->guide);
}

static int quart_build(quart_plan *q, const parts16 *p16, int32_t n, int32_t k, uint64_t total) {
    memset(q, 0, sizeof *q);
    q->n = n; q->k = k;
    q->parts = (n + 15) / 16;
    int32_t size[4] = {0, 0, 0, 0};
    for (int p = 0; p < q->parts; p++) size[p] = p == q->parts - 1 ? n - 16 * p : 16;
    /* compositions in lexicographic order (an odometer over k_0 .. k_{P-2};
     * the last part takes the rest): count, then fill */
    for (int pass = 0; pass < 2; pass++) {
        int32_t kk[4] = {0, 0, 0, 0};
        int64_t c = 0;
        uint64_t acc = 0;
        for (;;) {
            int32_t sum = 0;
            for (int p = 0; p < q->parts - 1; p++) sum += kk[p];
            kk[q->parts - 1] = k - sum;
            if (k - sum >= 0 && k - sum <= size[q->parts - 1]) {
                if (pass == 1) {
                    quart_comp *r = &q->comp[c];
                    uint64_t S = 1;
                    for (int p = 3; p >= 0; p--) {     /* parts >= P: k = 0 */
                        r->N[p] = (uint16_t)p16->binom[size[p]][kk[p]];
                        r->base[p] = p16->off16[kk[p]];
                        if (p < 3) qdiv_make(S, &r->m[p], &r->l[p]);
                        S *= r->N[p];
                    }
                    r->cum = acc;
                    acc += S;
                }
                c++;
            }
            int p = q->parts - 2;       /* odometer over k_p in [0, size_p] */
            while (p >= 0 && kk[p] == size[p]) kk[p--] = 0;
            if (p < 0) break;
            kk[p]++;
        }
        if (pass == 0) {
            q->ncomp = c;
            q->comp = (quart_comp *)calloc((size_t)(c + 2), sizeof(quart_comp));
            if (!q->comp) return 0;
        } else {
            q->comp[c].cum = q->comp[c + 1].cum = UINT64_MAX;
            if (acc != total) { quart_free(q); return 0; }
        }
    }
    const int bits = anonset_msb64(total - 1) + 1;
    q->sh = bits > 13 ? bits - 13 : 0;
    const uint64_t nb = ((total - 1) >> q->sh) + 1;
    q->guide = (uint32_t *)malloc((size_t)nb * sizeof(uint32_t));
    if (!q->guide) { quart_free(q); return 0; }
    int64_t c = 0;
    for (uint64_t h = 0; h < nb; h++) {
        while (q->comp[c + 1].cum <= h << q->sh) c++;
        q->guide[h] = (uint32_t)c;
    }
    return 1;
}

#if defined(__GNUC__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static __forceinline
#endif

/* The composition of index I: from the guide, two branch-free steps, then
 * (rarely) a loop. */
ALWAYS_INLINE int64_t quart_guess(const quart_plan *q, uint64_t I) {
    int64_t c = q->guide[I >> q->sh];
    c += q->comp[c + 1].cum <= I;
    c += q->comp[c + 1].cum <= I;
    return c;
}

/* The t16 positions of the four parts' lists for index I, given a guess
 * c <= its composition. */
ALWAYS_INLINE void quart_digits(const quart_plan *q, uint64_t I, int64_t c, uint32_t *pos) {
    const quart_comp *cp = q->comp;
    while (cp[c + 1].cum <= I) c++;
    const quart_comp *r = &cp[c];
    const uint64_t R = I - r->cum;
    const uint64_t R9 = R << QDIV_PRE;
    uint64_t lo;
    const uint64_t Q0 = anonset_mul128(R9, r->m[0], &lo) >> r->l[0];
    const uint64_t Q1 = anonset_mul128(R9, r->m[1], &lo) >> r->l[1];
    const uint64_t Q2 = anonset_mul128(R9, r->m[2], &lo) >> r->l[2];
    pos[0] = r->base[0] + (uint32_t)Q0;
    pos[1] = r->base[1] + (uint32_t)(Q1 - Q0 * r->N[1]);
    pos[2] = r->base[2] + (uint32_t)(Q2 - Q1 * r->N[2]);
    pos[3] = r->base[3] + (uint32_t)(R - Q2 * r->N[3]);
}

/* The subset whose four parts are at t16 positions pos. */
ALWAYS_INLINE uint64_t quart_parts(const uint16_t *t16, const uint32_t pos[4]) {
    return (uint64_t)t16[pos[0]] | (uint64_t)t16[pos[1]] << 16 |
           (uint64_t)t16[pos[2]] << 32 | (uint64_t)t16[pos[3]] << 48;
}

/* The I-th k-subset (I < C(n, k)) in the order above. */
static inline uint64_t quart_subset(const quart_plan *q, const parts16 *p16, uint64_t I) {
    uint32_t pos[4];
    quart_digits(q, I, quart_guess(q, I), pos);
    return quart_parts(p16->t16, pos);
}

/* Floyd's algorithm for d > 64: kd = min(k, n - k) draws, t_m uniform in
 * [0, m] for m = n - kd .. n - 1, packed into words with products of bounds
 * <= PROD_MAX; complemented within [0, n) when kd < k. */
typedef struct {
    int32_t kd, comp, nw;
    int32_t *first;         /* nw + 1: draws first[w] .. first[w+1]-1 in word w */
    uint64_t *prod;         /* nw: product of the word's bounds */
    uint64_t *thr;          /* nw: 2^64 mod prod (Lemire's rejection threshold) */
} floyd_plan;

static void floyd_free(floyd_plan *f) { free(f->first); free(f->prod); free(f->thr); }

static int floyd_build(floyd_plan *f, int32_t n, int32_t k) {
    memset(f, 0, sizeof *f);
    f->kd = k < n - k ? k : n - k;
    f->comp = f->kd < k;
    f->first = (int32_t *)malloc((size_t)(f->kd + 2) * sizeof(int32_t));
    f->prod = (uint64_t *)malloc((size_t)(f->kd + 1) * sizeof(uint64_t));
    f->thr = (uint64_t *)malloc((size_t)(f->kd + 1) * sizeof(uint64_t));
    if (!f->first || !f->prod || !f->thr) { floyd_free(f); return 0; }
    int32_t i = 0;
    while (i < f->kd) {
        uint64_t P = 1;
        f->first[f->nw] = i;
        while (i < f->kd) {
            const uint64_t b = (uint64_t)(n - f->kd + i) + 1u;
            if (P > PROD_MAX / b) break;
            P *= b;
            i++;
        }
        f->thr[f->nw] = (0 - P) % P;
        f->prod[f->nw++] = P;
    }
    f->first[f->nw] = f->kd;
    return 1;
}

/* The nf digits of Floyd's draw word wi (value x): t_m uniform in [0, m]
 * for m = m0 .. m0 + nf - 1. */
ALWAYS_INLINE void floyd_digits(const anonset_key *key, uint32_t s, const floyd_plan *f,
                                int32_t wi, int32_t m0, int32_t nf, uint64_t x, uint64_t t0,
                                uint64_t *dig) {
    const uint64_t x0 = x;
    for (int32_t i = 0; i < nf; i++) dig[i] = anonset_mul128(x, (uint64_t)(m0 + i) + 1u, &x);
    if (x < f->thr[wi]) {                      /* rejected (probability < 2^-12) */
        uint64_t fac[64];
        for (int32_t i = 0; i < nf; i++) fac[i] = (uint64_t)(m0 + i) + 1u;
        draw_digits(key, s, t0 + (uint64_t)wi, x0, fac, nf, f->prod[wi], dig);
    }
}

/* The mask (words 64-bit words) of the cnt values vs that Floyd's draws
 * chose, complemented within [0, n) where the plan drew the complement;
 * clears their membership bytes in seen. */
static void floyd_mask(const floyd_plan *f, int32_t n, const int32_t *vs, int32_t cnt,
                       uint8_t *seen, uint64_t *mask, int words) {
    for (int i = 0; i < words; i++) mask[i] = 0;
    for (int32_t j = 0; j < cnt; j++) {
        const int32_t v = vs[j];
        mask[v >> 6] |= (uint64_t)1 << (v & 63);
        seen[v] = 0;
    }
    if (f->comp) {
        for (int i = 0; i < words; i++) mask[i] = ~mask[i];
        for (int i = n >> 6; i < words; i++)
            mask[i] &= i == (n >> 6) ? low_bits(n & 63) : 0;
    }
}

/* A uniform k-subset of [0, n) into mask (words 64-bit words, zeroed here),
 * from the draw words w[0..nw) (word indices t0, t0 + 1, ...).  Membership
 * is tested in seen (n bytes, all zero on entry and on return), one byte
 * per value, and the values drawn are listed in vs (kd entries): testing
 * the bit mask itself made each draw's load read the 64-bit word that the
 * previous draw's store, at an address known only late, had just written
 * (one time in words), and the CPU's guesses about that order cost about
 * 26 cycles a draw; a byte is written again only when the very same value
 * is drawn next. */
static void floyd_subset(const anonset_key *key, uint32_t s, const floyd_plan *f, int32_t n,
                         const uint64_t *w, uint64_t t0, uint64_t *mask, int words,
                         uint8_t *seen, int32_t *vs) {
    uint64_t dig[64];
    int32_t cnt = 0;
    for (int32_t wi = 0; wi < f->nw; wi++) {
        const int32_t a = f->first[wi], nf = f->first[wi + 1] - a, m0 = n - f->kd + a;
        floyd_digits(key, s, f, wi, m0, nf, w[wi], t0, dig);
        for (int32_t i = 0; i < nf; i++) {
            /* branch-free: a collision (t already in) is unpredictable */
            const int32_t m = m0 + i, t = (int32_t)dig[i];
            const int32_t hit = seen[t];
            const int32_t v = t ^ ((t ^ m) & -hit);
            seen[v] = 1;
            vs[cnt++] = v;
        }
    }
    floyd_mask(f, n, vs, cnt, seen, mask, words);
}

/* floyd_subset for four cells of one branch at once (cell c: draw words
 * w[c], word indices t0[c], ...; membership bytes seen + c stride, values
 * drawn vs + c stride): the same subsets, the four cells' chains of
 * dependent draws overlapping. */
static void floyd_subset_x4(const anonset_key *key, uint32_t s, const floyd_plan *f, int32_t n,
                            const uint64_t *const w[4], const uint64_t t0[4],
                            uint64_t *const mask[4], int words, uint8_t *seen, int32_t *vs,
                            int64_t stride) {
    uint64_t dig[4][64];
    uint8_t *const s0 = seen, *const s1 = seen + stride, *const s2 = seen + 2 * stride,
                   *const s3 = seen + 3 * stride;
    int32_t *const v0 = vs, *const v1 = vs + stride, *const v2 = vs + 2 * stride,
                   *const v3 = vs + 3 * stride;
    int32_t cnt = 0;
    for (int32_t wi = 0; wi < f->nw; wi++) {
        const int32_t a = f->first[wi], nf = f->first[wi + 1] - a, m0 = n - f->kd + a;
        for (int c = 0; c < 4; c++) floyd_digits(key, s, f, wi, m0, nf, w[c][wi], t0[c], dig[c]);
        for (int32_t i = 0; i < nf; i++) {
            const int32_t m = m0 + i;
#define FLOYD_STEP(SEEN, VS, c) {                                             \
                const int32_t t = (int32_t)dig[c][i];                         \
                const int32_t v = t ^ ((t ^ m) & -(int32_t)SEEN[t]);          \
                SEEN[v] = 1;                                                  \
                VS[cnt] = v; }
            FLOYD_STEP(s0, v0, 0) FLOYD_STEP(s1, v1, 1) FLOYD_STEP(s2, v2, 2)
            FLOYD_STEP(s3, v3, 3)
#undef FLOYD_STEP
            cnt++;
        }
    }
    for (int c = 0; c < 4; c++)
        floyd_mask(f, n, vs + c * stride, cnt, seen + c * stride, mask[c], words);
}

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 anonset_u128;

/* floyd_subset for n <= 128 with the mask in a register pair: the same
 * subset, without the memory mask's store and reload of each draw (a
 * read after write the CPU cannot predict; 1.8x at d = 100, eta = 10). */
static inline anonset_u128 floyd_subset128(const anonset_key *key, uint32_t s,
                                          const floyd_plan *f, int32_t n, const uint64_t *w,
                                          uint64_t t0) {
    uint64_t dig[64];
    anonset_u128 M = 0;
    for (int32_t wi = 0; wi < f->nw; wi++) {
        const int32_t a = f->first[wi], nf = f->first[wi + 1] - a, m0 = n - f->kd + a;
        floyd_digits(key, s, f, wi, m0, nf, w[wi], t0, dig);
        for (int32_t i = 0; i < nf; i++) {
            const int32_t m = m0 + i, t = (int32_t)dig[i];
            const int32_t hit = (int32_t)(M >> t) & 1;
            const int32_t v = t ^ ((t ^ m) & -hit);
            M |= (anonset_u128)1 << v;
        }
    }
    if (f->comp) M = n >= 128 ? ~M : ~M & (((anonset_u128)1 << n) - 1);
    return M;
}

/* floyd_subset128 for four cells of one branch at once (cell c: draw words
 * w[c], word indices t0[c], ...): the same subsets.  Each draw waits on the
 * mask its cell's previous draw wrote (about ten cycles of shifts and
 * selects); four cells' chains are independent, so they overlap. */
ALWAYS_INLINE void floyd_subset128_x4(const anonset_key *key, uint32_t s, const floyd_plan *f,
                                      int32_t n, const uint64_t *const w[4],
                                      const uint64_t t0[4], anonset_u128 M[4]) {
    uint64_t dig[4][64];
    /* each mask as two words, tested and set without a branch on which
     * word a value falls in (values of a domain over 64 fall in either,
     * unpredictably) */
    uint64_t lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
    for (int32_t wi = 0; wi < f->nw; wi++) {
        const int32_t a = f->first[wi], nf = f->first[wi + 1] - a, m0 = n - f->kd + a;
        for (int c = 0; c < 4; c++) floyd_digits(key, s, f, wi, m0, nf, w[c][wi], t0[c], dig[c]);
        for (int32_t i = 0; i < nf; i++) {
            const int32_t m = m0 + i;
            for (int c = 0; c < 4; c++) {
                const int32_t t = (int32_t)dig[c][i];
                const uint64_t in_lo = (uint64_t)0 - (uint64_t)(t < 64);
                const uint64_t word = (lo[c] & in_lo) | (hi[c] & ~in_lo);
                const int32_t hit = (int32_t)(word >> (t & 63)) & 1;
                const int32_t v = t ^ ((t ^ m) & -hit);
                const uint64_t v_lo = (uint64_t)0 - (uint64_t)(v < 64);
                const uint64_t bit = (uint64_t)1 << (v & 63);
                lo[c] |= bit & v_lo;
                hi[c] |= bit & ~v_lo;
            }
        }
    }
    for (int c = 0; c < 4; c++) {
        M[c] = (anonset_u128)hi[c] << 64 | lo[c];
        if (f->comp) M[c] = n >= 128 ? ~M[c] : ~M[c] & (((anonset_u128)1 << n) - 1);
    }
}
#endif

/* Open a gap at v in a multiword mask of d - 1 virtual values: bits >= v
 * move up by one and bit v is set. */
static void open_gap(uint64_t *mask, int words, int32_t v) {
    uint64_t carry = 0;
    for (int i = 0; i < words; i++) {
        const uint64_t keep = i < (v >> 6) ? ~(uint64_t)0 : (i == (v >> 6) ? low_bits(v & 63) : 0);
        const uint64_t up = mask[i] & ~keep;
        mask[i] = (mask[i] & keep) | (up << 1) | carry;
        carry = up >> 63;
    }
    mask[v >> 6] |= (uint64_t)1 << (v & 63);
}

/* ------------------------------------------------------------ plans */
typedef struct {
    int kind;
    int32_t n, k;
    uint64_t count;             /* values of one index: C(n, k) (1 for BR_FIXED) */
    const uint64_t *tab;        /* BR_TABLE */
    const quart_plan *qp;       /* BR_QUART */
    const floyd_plan *fp;       /* BR_FLOYD */
    int32_t nw;                 /* draw words per cell */
} branch;

typedef struct {
    int active;                 /* draws sets (not exact, eta < d) */
    int use[2];                 /* branches that occur: [0] tail, [1] head */
    int coin_draw;              /* 0 < coin < 2^32 */
    branch br[2];
    int g;                      /* > 0: g indices per word; 0: wpc words per cell */
    int quart_only;             /* every used branch is BR_QUART (then g = 1) */
    int32_t wpc;
} attr_plan;

/* Tables and plans shared by the attributes of one call (read-only once
 * built): one entry per distinct (kind, n, k). */
typedef struct {
    int cap, len;
    int *kind;
    int32_t *n, *k;
    uint64_t **tab;
    quart_plan *qp;
    floyd_plan *fp;
    parts16 *p16;
} plan_cache;

static int cache_init(plan_cache *c, int cap) {
    memset(c, 0, sizeof *c);
    c->cap = cap;
    c->kind = (int *)calloc((size_t)cap, sizeof(int));
    c->n = (int32_t *)calloc((size_t)cap, sizeof(int32_t));
    c->k = (int32_t *)calloc((size_t)cap, sizeof(int32_t));
    c->tab = (uint64_t **)calloc((size_t)cap, sizeof(uint64_t *));
    c->qp = (quart_plan *)calloc((size_t)cap, sizeof(quart_plan));
    c->fp = (floyd_plan *)calloc((size_t)cap, sizeof(floyd_plan));
    return c->kind && c->n && c->k && c->tab && c->qp && c->fp;
}

static void cache_free(plan_cache *c) {
    for (int i = 0; i < c->len; i++) {
        free(c->tab[i]);
        quart_free(&c->qp[i]);
        floyd_free(&c->fp[i]);
    }
    free(c->kind); free(c->n); free(c->k); free(c->tab); free(c->qp); free(c->fp);
    free(c->p16);
}

/* The branch drawing a k-subset of n values for an attribute of domain d;
 * 0 on allocation failure. */
static int branch_plan(branch *b, plan_cache *c, int32_t d, int32_t n, int32_t k) {
    memset(b, 0, sizeof *b);
    b->n = n; b->k = k; b->count = 1;
    if (k == 0 || k == n) { b->kind = BR_FIXED; return 1; }
    if (d > 64) {
        b->kind = BR_FLOYD;
    } else {
        b->count = binom64(n, k);
        b->kind = b->count <= TABLE_MAX ? BR_TABLE : BR_QUART;
        b->nw = 1;
    }
    int i = 0;
    while (i < c->len && !(c->kind[i] == b->kind && c->n[i] == n && c->k[i] == k)) i++;
    if (i == c->len) {
        if (c->len == c->cap) return 0;
        int ok = 1;
        if (b->kind == BR_FLOYD) {
            ok = floyd_build(&c->fp[i], n, k);
        } else if (b->kind == BR_TABLE) {
            c->tab[i] = colex_table(n, k, b->count);
            ok = c->tab[i] != NULL;
        } else {
            if (!c->p16) {
                c->p16 = (parts16 *)malloc(sizeof(parts16));
                if (c->p16) parts16_build(c->p16);
            }
            ok = c->p16 && quart_build(&c->qp[i], c->p16, n, k, b->count);
        }
        if (!ok) return 0;
        c->kind[i] = b->kind; c->n[i] = n; c->k[i] = k;
        c->len++;
    }
    b->tab = c->tab[i];
    b->qp = &c->qp[i];
    b->fp = &c->fp[i];
    if (b->kind == BR_FLOYD) b->nw = b->fp->nw;
    return 1;
}

static int attr_plan_build(attr_plan *a, plan_cache *c, int32_t d, int32_t eta, uint64_t coin,
                           int exact) {
    memset(a, 0, sizeof *a);
    a->active = !exact && eta < d;
    if (!a->active) return 1;
    a->use[1] = coin > 0;
    a->use[0] = coin < ((uint64_t)1 << 32);
    a->coin_draw = a->use[0] && a->use[1];
    if (a->use[1] && !branch_plan(&a->br[1], c, d, d - 1, eta - 1)) return 0;
    if (a->use[0] && !branch_plan(&a->br[0], c, d, d, eta)) return 0;
    int packable = d <= 64, single = 0;
    uint64_t cmax = 1;
    for (int h = 0; h < 2; h++) {
        if (!a->use[h]) continue;
        if (a->br[h].kind == BR_QUART) single = 1;     /* one index per word */
        if (a->br[h].count > cmax) cmax = a->br[h].count;
        if (a->br[h].nw > a->wpc) a->wpc = a->br[h].nw;
    }
    a->quart_only = 1;
    for (int h = 0; h < 2; h++)
        if (a->use[h] && a->br[h].kind != BR_QUART) a->quart_only = 0;
    if (packable) {
        a->g = 1;
        if (single) {
            /* g = 1 */
        } else if (cmax > 1) {
            uint64_t p = cmax;
            while (a->g < 8 && p <= PROD_MAX / p) { p *= p; a->g *= 2; }
        } else {
            a->g = 8;   /* no draws at all */
        }
    }
    return 1;
}

/* ------------------------------------------------------------ cells */
static inline uint64_t gap64(uint64_t sub, int32_t v) {
    const uint64_t low = sub & low_bits(v);
    return low | ((sub ^ low) << 1) | ((uint64_t)1 << v);
}

/* The k-subset of branch b (n <= 64) with index I. */
static inline uint64_t subset64(const branch *b, const parts16 *p16, uint64_t I) {
    if (b->kind == BR_TABLE) return b->tab[I];
    if (b->kind == BR_QUART) return quart_subset(b->qp, p16, I);
    return b->k == 0 ? 0 : low_bits(b->n);
}

/* Indices of the g counters m g .. m g + g - 1 sharing draw word t = m
 * (value w); head[i] selects each one's branch. */
static inline void group_indices(const anonset_key *key, uint32_t s, const attr_plan *a,
                                 uint64_t m, uint64_t w, const uint8_t *head, uint64_t *idx) {
    uint64_t f[8], P = 1;
    for (int i = 0; i < a->g; i++) {
        f[i] = a->br[head[i]].count;
        P *= f[i];
    }
    if (P == 1) {
        for (int i = 0; i < a->g; i++) idx[i] = 0;
        return;
    }
    draw_digits(key, s, m, w, f, a->g, P, idx);
}

/* One cell that owns its words w[0..wpc) (word indices t0, t0 + 1, ...). */
static inline void cell_words(const anonset_key *key, uint32_t s, const attr_plan *a,
                              const parts16 *p16, int head, int32_t v, const uint64_t *w,
                              uint64_t t0, uint64_t *mask, int words, uint8_t *seen,
                              int32_t *vs) {
    const branch *b = &a->br[head];
    if (words == 1) {
        uint64_t I = 0;
        if (b->count > 1) {
            const uint64_t f = b->count;
            draw_digits(key, s, t0, w[0], &f, 1, f, &I);
        }
        const uint64_t sub = subset64(b, p16, I);
        mask[0] = head ? gap64(sub, v) : sub;
        return;
    }
#if defined(__SIZEOF_INT128__)
    if (words == 2 && b->kind == BR_FLOYD) {
        anonset_u128 M = floyd_subset128(key, s, b->fp, b->n, w, t0);
        if (head) {                /* the gap at v, as open_gap (n = d - 1 < 128) */
            const anonset_u128 low = M & (((anonset_u128)1 << v) - 1);
            M = low | ((M ^ low) << 1) | ((anonset_u128)1 << v);
        }
        mask[0] = (uint64_t)M;
        mask[1] = (uint64_t)(M >> 64);
        return;
    }
#endif
    if (b->kind == BR_FLOYD) {
        floyd_subset(key, s, b->fp, b->n, w, t0, mask, words, seen, vs);
    } else {                       /* BR_FIXED: k == 0 (head, eta = 1) */
        for (int i = 0; i < words; i++) mask[i] = 0;
    }
    if (head) open_gap(mask, words, v);
}

/* Per-thread buffers. */
typedef struct {
    uint32_t *u32;      /* raw blocks: 2 (cap + 16) words */
    uint64_t *w64;      /* draw words: cap + 16 */
    uint32_t *coins;    /* coin blocks of one chunk */
    uint8_t *seen;      /* Floyd's membership bytes: one per value, all zero; four
                         * lanes of stride bytes (floyd_subset_x4) */
    int32_t *vs;        /* Floyd's values drawn: four lanes of stride */
    int64_t stride;     /* the largest domain */
    int64_t cap;        /* draw words per fill */
} thread_bufs;

/* Draw words t0, t0 + 1, ... (cnt of them, cnt <= cap) of stream s into
 * b->w64.  Word indices are 64-bit and wrap (counter * words per cell). */
static void fill_words(const anonset_key *key, uint32_t s, uint64_t t0, uint64_t cnt,
                       thread_bufs *b) {
    uint64_t done = 0;
    while (done < cnt) {
        const uint64_t t = t0 + done;                       /* wraps mod 2^64 */
        uint64_t len = cnt - done;
        if (t + len < t) len = 0 - t;                        /* up to the wrap */
        const uint64_t b0 = t >> 3, nb = ((t & 7u) + len + 7) >> 3;
        anonset_blocks(key, b0, s, SUB_DRAW, (int64_t)nb, b->u32);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* little-endian: the pairs of 32-bit words are the 64-bit words */
        memcpy(b->w64 + done, b->u32 + 2 * (t & 7u), (size_t)len * sizeof(uint64_t));
#else
        for (uint64_t i = 0; i < len; i++) b->w64[done + i] = word64(b->u32, (int64_t)((t & 7u) + i));
#endif
        done += len;
    }
}

static inline int code_ok(int32_t v, int32_t d) { return v >= 0 && v < d; }

/* A code outside [0, d): the cell is published empty (and the call fails). */
static inline int bad_cell(int32_t v, int32_t d, uint64_t *mask, int words) {
    if (code_ok(v, d)) return 0;
    for (int w = 0; w < words; w++) mask[w] = 0;
    return 1;
}

/* Cells of rows [ga, gb) (global counters) of one attribute, row mode.
 * Returns nonzero if a code was outside the domain. */
/* The one-entry table of a branch without draws (head with eta = 1). */
static const uint64_t EMPTY_SUBSET[1] = {0};

/* Packed cells of the groups m in [mf, ml), which lie wholly inside the rows
 * [ga, gb): G (1, 2, 4 or 8) is a constant in each instantiation, so the
 * digit chain unrolls; heads come from coins[r - c0] (coin_draw) or are
 * fixed.  Writes out[r - ga]; returns nonzero on a code outside [0, d). */
ALWAYS_INLINE int packed_groups(const anonset_key *key, uint32_t s, const attr_plan *a,
                                const parts16 *p16, int32_t d, uint64_t coin,
                                const uint32_t *coins, uint64_t c0, uint64_t mf, uint64_t ml,
                                uint64_t m0, const uint64_t *w, int64_t ga,
                                const int32_t *codes, uint64_t *out, const int G) {
    const uint64_t *tab[2], cnt[2] = {a->br[0].count, a->br[1].count};
    const quart_plan *qp[2];
    int quart[2];
    for (int h = 0; h < 2; h++) {
        tab[h] = a->br[h].kind == BR_TABLE ? a->br[h].tab : EMPTY_SUBSET;
        quart[h] = a->br[h].kind == BR_QUART;
        qp[h] = a->br[h].qp;
    }
    const int coin_draw = a->coin_draw, fixed_head = a->use[1];
    /* without coins every group has the same product and threshold */
    uint64_t P = 1;
    for (int i = 0; i < G; i++) P *= cnt[fixed_head];
    const uint64_t thr = P > 1 ? (0 - P) % P : 0;
    unsigned bad = 0;
    for (uint64_t m = mf; m < ml; m++) {
        const uint64_t r0 = m * (uint64_t)G;
        int hd[8];
        uint64_t f[8], dg[8];
        uint64_t Pm = P, tm = thr;
        for (int i = 0; i < G; i++) {
            hd[i] = coin_draw ? coins[r0 + (uint64_t)i - 16 * c0] < coin : fixed_head;
            f[i] = cnt[hd[i]];
        }
        if (coin_draw) {
            Pm = 1;
            for (int i = 0; i < G; i++) Pm *= f[i];
            tm = Pm;                 /* the threshold is computed only when needed */
        }
        uint64_t x = w[m - m0];
        for (int i = 0; i < G; i++) dg[i] = anonset_mul128(x, f[i], &x);
        if (x < tm && Pm > 1 && x < (0 - Pm) % Pm)      /* rejected: the slow path */
            draw_digits(key, s, m, w[m - m0], f, G, Pm, dg);
        const int64_t base = (int64_t)r0 - ga;
        for (int i = 0; i < G; i++) {
            const int32_t v = codes[base + i];
            const unsigned ok = (uint32_t)v < (uint32_t)d;
            const int32_t vv = ok ? v : 0;
            const uint64_t sub = quart[hd[i]] ? quart_subset(qp[hd[i]], p16, dg[i])
                                              : tab[hd[i]][dg[i]];
            /* branch-free selects: with coins, head or tail is unpredictable */
            const uint64_t res = sub ^ ((gap64(sub, vv) ^ sub) & ((uint64_t)0 - (uint64_t)hd[i]));
            out[base + i] = res & ((uint64_t)0 - (uint64_t)ok);
            bad |= !ok;
        }
    }
    return (int)bad;
}

/* One published cell of the composition path: the subset (head: with the
 * gap opened at the true value v); 0 and *bad set for a code outside [0, d). */
ALWAYS_INLINE uint64_t quart_cell(uint64_t sub, uint64_t h, int32_t v, int32_t d, unsigned *bad) {
    const unsigned ok = (uint32_t)v < (uint32_t)d;
    const int32_t vv = ok ? v : 0;
    /* branch-free selects: with coins, head or tail is unpredictable */
    const uint64_t res = sub ^ ((gap64(sub, vv) ^ sub) & ((uint64_t)0 - h));
    *bad |= !ok;
    return res & ((uint64_t)0 - (uint64_t)ok);
}

/* Cells of rows [ga, gb) (at most CHUNK) of an attribute whose used branches
 * all unrank through compositions (BR_QUART, one index per draw word
 * w[r - ga]): the same sets as packed_groups with G = 1, computed 32 cells at
 * a time in three passes so that the work of different cells overlaps (the
 * indices and the compositions' guesses; the parts' positions in t16; the
 * subsets).  A rejected draw (up to 1 in 8 words where C(n, k) is close to
 * 2^61) is set aside, and the retries of all of them are computed at the end,
 * 16 blocks side by side instead of one scalar block each.  Writes
 * out[r - ga]; returns nonzero on a code outside [0, d).  HEAD is a constant
 * in each instantiation: 0 or 1 (every cell tail, or every cell head: p = 0
 * or p = 1, where the per-cell selects compile away) or 2 (a coin per cell). */
#define QBATCH 32
ALWAYS_INLINE int quart_rows_as(const anonset_key *key, uint32_t s, const attr_plan *a,
                                const parts16 *p16, int32_t d, uint64_t coin,
                                const uint32_t *coins, uint64_t c0, int64_t ga, int64_t gb,
                                const uint64_t *w, const int32_t *codes, uint64_t *out,
                                const int HEAD) {
    const quart_plan *qp[2] = {a->br[0].qp, a->br[1].qp};
    const uint64_t cnt[2] = {a->br[0].count, a->br[1].count};
    const uint64_t thr[2] = {(0 - cnt[0]) % (cnt[0] ? cnt[0] : 1),
                             (0 - cnt[1]) % (cnt[1] ? cnt[1] : 1)};
    const int coin_draw = HEAD == 2, fixed_head = HEAD == 1;
    const uint16_t *t16 = p16->t16;
    unsigned bad = 0;
    int32_t pend[CHUNK];
    int np = 0;
    for (int64_t b0 = 0; b0 < gb - ga; b0 += QBATCH) {
        const int64_t nb = gb - ga - b0 < QBATCH ? gb - ga - b0 : QBATCH;
        uint64_t I[QBATCH];
        int64_t c[QBATCH];
        uint8_t hd[QBATCH];
        uint32_t pos[QBATCH][4];
        for (int64_t i = 0; i < nb; i++) {
            const int64_t k = b0 + i;
            const int h = coin_draw ? coins[(uint64_t)(ga + k) - 16 * c0] < coin : fixed_head;
            uint64_t x;
            const uint64_t idx = anonset_mul128(w[k], cnt[h], &x);
            pend[np] = (int32_t)k;
            np += x < thr[h];               /* rejected: retried below */
            hd[i] = (uint8_t)h;
            I[i] = idx;
            c[i] = quart_guess(qp[h], idx);
        }
#define HD(i) (coin_draw ? hd[i] : fixed_head)     /* a constant unless coins */
        for (int64_t i = 0; i < nb; i++) quart_digits(qp[HD(i)], I[i], c[i], pos[i]);
        for (int64_t i = 0; i < nb; i++) {
            const uint64_t sub = quart_parts(t16, pos[i]);
            out[b0 + i] = quart_cell(sub, (uint64_t)HD(i), codes[b0 + i], d, &bad);
        }
#undef HD
    }
    /* retry j of the draw word of row r: word r mod 8 of block (r div 8, s,
     * sub 2 + j), as draw_digits reads it */
    for (uint32_t j = 0; np > 0; j++) {
        int keep = 0;
        for (int p0 = 0; p0 < np; p0 += 16) {
            const int len = np - p0 < 16 ? np - p0 : 16;
            uint64_t ctr[16];
            uint32_t blk[256];
            for (int e = 0; e < len; e++) ctr[e] = (uint64_t)(ga + pend[p0 + e]) >> 3;
            anonset_blocks_at(key, ctr, s, SUB_RETRY + j, len, blk);
            for (int e = 0; e < len; e++) {
                const int32_t k = pend[p0 + e];
                const uint64_t r = (uint64_t)(ga + k);
                const int h = coin_draw ? coins[r - 16 * c0] < coin : fixed_head;
                uint64_t x;
                const uint64_t idx = anonset_mul128(word64(blk + 16 * e, (int64_t)(r & 7u)),
                                                    cnt[h], &x);
                if (x < thr[h]) {
                    pend[keep++] = k;
                } else {
                    out[k] = quart_cell(quart_subset(qp[h], p16, idx), (uint64_t)h, codes[k], d,
                                        &bad);
                }
            }
        }
        np = keep;
    }
    return (int)bad;
}

/* The instantiations of quart_rows_as. */
static int quart_rows(const anonset_key *key, uint32_t s, const attr_plan *a,
                      const parts16 *p16, int32_t d, uint64_t coin, const uint32_t *coins,
                      uint64_t c0, int64_t ga, int64_t gb, const uint64_t *w,
                      const int32_t *codes, uint64_t *out) {
    if (a->coin_draw)
        return quart_rows_as(key, s, a, p16, d, coin, coins, c0, ga, gb, w, codes, out, 2);
    if (a->use[1])
        return quart_rows_as(key, s, a, p16, d, coin, coins, c0, ga, gb, w, codes, out, 1);
    return quart_rows_as(key, s, a, p16, d, coin, coins, c0, ga, gb, w, codes, out, 0);
}

/* Four cells of rows q[0..4) (global; draw words from b->w64, whose first is
 * row ra's) that use Floyd branch br (head h: the gap opened at the true
 * value), as cell_words would draw them one at a time. */
static void floyd_cells_x4(const anonset_key *key, uint32_t s, const branch *br, int h,
                           const int64_t q[4], int64_t ra, int64_t ga, int64_t wpc,
                           const int32_t *codes, uint64_t *out, int words, thread_bufs *b) {
    const uint64_t *w[4];
    uint64_t t0[4];
    for (int c = 0; c < 4; c++) {
        w[c] = b->w64 + (q[c] - ra) * wpc;
        t0[c] = (uint64_t)q[c] * (uint64_t)wpc;
    }
#if defined(__SIZEOF_INT128__)
    if (words == 2) {
        anonset_u128 M[4];
        floyd_subset128_x4(key, s, br->fp, br->n, w, t0, M);
        for (int c = 0; c < 4; c++) {
            const int64_t k = q[c] - ga;
            anonset_u128 X = M[c];
            if (h) {                       /* the gap at v, as cell_words */
                const int32_t v = codes[k];
                const anonset_u128 low = X & (((anonset_u128)1 << v) - 1);
                X = low | ((X ^ low) << 1) | ((anonset_u128)1 << v);
            }
            out[k * 2] = (uint64_t)X;
            out[k * 2 + 1] = (uint64_t)(X >> 64);
        }
        return;
    }
#endif
    uint64_t *mask[4];
    for (int c = 0; c < 4; c++) mask[c] = out + (q[c] - ga) * words;
    floyd_subset_x4(key, s, br->fp, br->n, w, t0, mask, words, b->seen, b->vs, b->stride);
    if (h)
        for (int c = 0; c < 4; c++) open_gap(mask[c], words, codes[q[c] - ga]);
}

static int sample_rows(const anonset_key *key, uint32_t s, const attr_plan *a,
                       const parts16 *p16, int32_t d, uint64_t coin, int64_t ga, int64_t gb,
                       const int32_t *codes, uint64_t *out, thread_bufs *b) {
    const int words = (d + 63) >> 6;
    int bad = 0;
    const uint64_t c0 = (uint64_t)ga >> 4;
    if (a->coin_draw)
        anonset_blocks(key, c0, s, SUB_COIN, (int64_t)(((uint64_t)(gb - 1) >> 4) - c0 + 1),
                       b->coins);
#define HEAD(r) (a->coin_draw ? (uint8_t)(b->coins[(uint64_t)(r) - 16 * c0] < coin) \
                              : (uint8_t)a->use[1])
    if (a->g > 0) {
        const uint64_t g = (uint64_t)a->g;
        const uint64_t m0 = (uint64_t)ga / g, m1 = (uint64_t)(gb - 1) / g;
        const int draws = a->br[0].count > 1 || a->br[1].count > 1;
        if (draws) fill_words(key, s, m0, m1 - m0 + 1, b);
        if (a->g == 1 && a->quart_only)
            return quart_rows(key, s, a, p16, d, coin, b->coins, c0, ga, gb, b->w64, codes, out);
        /* groups wholly inside [ga, gb): the fast loop */
        const uint64_t mf = ((uint64_t)ga + g - 1) / g, ml = (uint64_t)gb / g;
        if (draws && mf < ml) {
            const uint64_t *w = b->w64;
            const uint32_t *cs = b->coins;
            switch (a->g) {
            case 1: bad |= packed_groups(key, s, a, p16, d, coin, cs, c0, mf, ml, m0, w, ga, codes, out, 1); break;
            case 2: bad |= packed_groups(key, s, a, p16, d, coin, cs, c0, mf, ml, m0, w, ga, codes, out, 2); break;
            case 4: bad |= packed_groups(key, s, a, p16, d, coin, cs, c0, mf, ml, m0, w, ga, codes, out, 4); break;
            default: bad |= packed_groups(key, s, a, p16, d, coin, cs, c0, mf, ml, m0, w, ga, codes, out, 8); break;
            }
        }
        for (uint64_t m = m0; m <= m1; m++) {
            if (draws && m >= mf && m < ml) continue;
            uint8_t head[8];
            uint64_t idx[8];
            for (uint64_t i = 0; i < g && i < 8; i++) head[i] = HEAD(m * g + i);
            if (draws) group_indices(key, s, a, m, b->w64[m - m0], head, idx);
            else for (uint64_t i = 0; i < g && i < 8; i++) idx[i] = 0;
            const int64_t lo = (int64_t)(m * g) < ga ? ga : (int64_t)(m * g);
            const int64_t hi = (int64_t)(m * g + g) > gb ? gb : (int64_t)(m * g + g);
            for (int64_t r = lo; r < hi; r++) {
                const int64_t i = r - ga;
                const int32_t v = codes[i];
                const uint64_t e = (uint64_t)r - m * g;
                if (!code_ok(v, d)) { out[i] = 0; bad = 1; continue; }
                const uint64_t sub = subset64(&a->br[head[e]], p16, idx[e]);
                out[i] = head[e] ? gap64(sub, v) : sub;
            }
        }
        return bad;
    }
    const int64_t wpc = a->wpc;     /* 0: no draws (d > 64, eta = 1, p = 1) */
    const int64_t per = wpc == 0 ? gb - ga : (b->cap / wpc > 0 ? b->cap / wpc : 1);
    for (int64_t ra = ga; ra < gb; ra += per) {
        const int64_t rb = ra + per < gb ? ra + per : gb;
        if (wpc > 0)
            fill_words(key, s, (uint64_t)ra * (uint64_t)wpc, (uint64_t)((rb - ra) * wpc), b);
        if (words >= 2) {
            /* d > 64: the cells of each Floyd branch four at a time */
            int64_t q[2][4];
            int nq[2] = {0, 0};
            for (int64_t r = ra; r < rb; r++) {
                const int64_t i = r - ga;
                const int32_t v = codes[i];
                uint64_t *mask = out + i * words;
                if (bad_cell(v, d, mask, words)) { bad = 1; continue; }
                const int h = HEAD(r);
                if (a->br[h].kind != BR_FLOYD) {
                    cell_words(key, s, a, p16, h, v, b->w64 + (r - ra) * wpc,
                               (uint64_t)r * (uint64_t)wpc, mask, words, b->seen, b->vs);
                    continue;
                }
                q[h][nq[h]++] = r;
                if (nq[h] < 4) continue;
                nq[h] = 0;
                floyd_cells_x4(key, s, &a->br[h], h, q[h], ra, ga, wpc, codes, out, words, b);
            }
            for (int h = 0; h < 2; h++)
                for (int c = 0; c < nq[h]; c++) {
                    const int64_t r = q[h][c], i = r - ga;
                    cell_words(key, s, a, p16, h, codes[i], b->w64 + (r - ra) * wpc,
                               (uint64_t)r * (uint64_t)wpc, out + i * words, words, b->seen,
                               b->vs);
                }
            continue;
        }
        for (int64_t r = ra; r < rb; r++) {
            const int64_t i = r - ga;
            const int32_t v = codes[i];
            uint64_t *mask = out + i * words;
            if (bad_cell(v, d, mask, words)) { bad = 1; continue; }
            cell_words(key, s, a, p16, HEAD(r), v, b->w64 + (r - ra) * wpc,
                       (uint64_t)r * (uint64_t)wpc, mask, words, b->seen, b->vs);
        }
    }
#undef HEAD
    return bad;
}

/* Cells with explicit counters (persistent-key mode): each reads the words
 * its counter addresses, exactly as a row with that index would.  The
 * counters are scattered (a keyed hash of the record id and value), so each
 * cell needs blocks of its own; they are computed 16 cells at a time, side
 * by side (anonset_blocks_at), instead of one scalar block after another. */
#define CBATCH 16
#define CWORDS 8                /* a Floyd cell's words held in a batch (more: one by one) */
static int sample_counters(const anonset_key *key, uint32_t s, const attr_plan *a,
                           const parts16 *p16, int32_t d, uint64_t coin, int64_t lo,
                           int64_t hi, const uint64_t *ctrs, const int32_t *codes,
                           uint64_t *out, thread_bufs *b) {
    const int words = (d + 63) >> 6;
    int bad = 0;
    const int draws = a->br[0].count > 1 || a->br[1].count > 1;
    uint32_t cblk[CBATCH * 16], wblk[CBATCH * 16 * (CWORDS / 8 + 1)];
    uint64_t at[CBATCH * (CWORDS / 8 + 1)];
    for (int64_t i0 = lo; i0 < hi; i0 += CBATCH) {
        const int nb = hi - i0 < CBATCH ? (int)(hi - i0) : CBATCH;
        if (a->coin_draw) {
            for (int e = 0; e < nb; e++) at[e] = ctrs[i0 + e] >> 4;
            anonset_blocks_at(key, at, s, SUB_COIN, nb, cblk);
        }
        if (a->g > 0) {
            const uint64_t g = (uint64_t)a->g;
            if (draws) {
                for (int e = 0; e < nb; e++) at[e] = (ctrs[i0 + e] / g) >> 3;
                anonset_blocks_at(key, at, s, SUB_DRAW, nb, wblk);
            }
            if (a->quart_only && draws) {
                /* g = 1, every branch unranked through compositions: the
                 * passes of quart_rows_as over the batch (index and guess;
                 * the parts' positions; the subsets), so that the cells'
                 * work overlaps */
                uint64_t I[CBATCH];
                int64_t cg[CBATCH];
                uint32_t pos[CBATCH][4];
                uint8_t hd[CBATCH], ok[CBATCH];
                for (int e = 0; e < nb; e++) {
                    const int64_t i = i0 + e;
                    const uint64_t c = ctrs[i];
                    ok[e] = !bad_cell(codes[i], d, out + i, 1);
                    bad |= !ok[e];
                    hd[e] = a->coin_draw ? (uint8_t)(cblk[16 * e + (c & 15u)] < coin)
                                         : (uint8_t)a->use[1];
                    group_indices(key, s, a, c, word64(wblk + 16 * e, (int64_t)(c & 7u)),
                                  &hd[e], &I[e]);
                    cg[e] = quart_guess(a->br[hd[e]].qp, I[e]);
                }
                for (int e = 0; e < nb; e++) quart_digits(a->br[hd[e]].qp, I[e], cg[e], pos[e]);
                for (int e = 0; e < nb; e++) {
                    if (!ok[e]) continue;
                    const uint64_t sub = quart_parts(p16->t16, pos[e]);
                    out[i0 + e] = hd[e] ? gap64(sub, codes[i0 + e]) : sub;
                }
                continue;
            }
            for (int e = 0; e < nb; e++) {
                const int64_t i = i0 + e;
                const uint64_t c = ctrs[i];
                const int32_t v = codes[i];
                uint64_t *mask = out + i * words;
                if (bad_cell(v, d, mask, words)) { bad = 1; continue; }
                const uint64_t m = c / g, r = c % g;
                uint8_t head[8];
                uint64_t idx[8];
                for (uint64_t t = 0; t < g && t < 8; t++)
                    head[t] = a->coin_draw ? (uint8_t)(cblk[16 * e + ((m * g + t) & 15u)] < coin)
                                           : (uint8_t)a->use[1];
                if (draws)
                    group_indices(key, s, a, m, word64(wblk + 16 * e, (int64_t)(m & 7u)), head,
                                  idx);
                else
                    for (uint64_t t = 0; t < g && t < 8; t++) idx[t] = 0;
                const uint64_t sub = subset64(&a->br[head[r]], p16, idx[r]);
                mask[0] = head[r] ? gap64(sub, v) : sub;
            }
            continue;
        }
        /* every counter owns words c W .. c W + W - 1 (Floyd: W <= CWORDS
         * here), in at most W / 8 + 1 blocks from block (c W) div 8 on */
        const uint64_t W = (uint64_t)a->wpc;
        const int per = W == 0 ? 0 : (int)(((W + 7) >> 3) + 1);
        if (W > 0 && W <= CWORDS) {
            int nblk = 0;
            for (int e = 0; e < nb; e++) {
                const uint64_t first = (ctrs[i0 + e] * W) >> 3;
                for (int k = 0; k < per; k++) at[nblk++] = first + (uint64_t)k;
            }
            for (int k0 = 0; k0 < nblk; k0 += CBATCH)
                anonset_blocks_at(key, at + k0, s, SUB_DRAW,
                                  nblk - k0 < CBATCH ? nblk - k0 : CBATCH, wblk + 16 * k0);
        }
        for (int e = 0; e < nb; e++) {
            const int64_t i = i0 + e;
            const uint64_t c = ctrs[i];
            const int32_t v = codes[i];
            uint64_t *mask = out + i * words;
            if (bad_cell(v, d, mask, words)) { bad = 1; continue; }
            const int head = a->coin_draw ? cblk[16 * e + (c & 15u)] < coin : a->use[1];
            const uint64_t t0 = c * W;
            if (W > 0 && W <= CWORDS) {
                /* words t0 .. t0 + W - 1 from word t0 mod 8 of this cell's first
                 * block on; where the word index wraps past 2^64 the words
                 * restart at block 0, as fill_words reads them */
                const uint32_t *blk = wblk + 16 * (e * per);
                if (t0 + (W - 1) >= t0) {
                    for (uint64_t k = 0; k < W; k++)
                        b->w64[k] = word64(blk, (int64_t)((t0 & 7u) + k));
                } else {
                    fill_words(key, s, t0, W, b);
                }
            } else if (W > 0) {
                fill_words(key, s, t0, W, b);
            }
            cell_words(key, s, a, p16, head, v, b->w64, t0, mask, words, b->seen, b->vs);
        }
    }
    return bad;
}

/* Cells without draws: exact attributes (the true value alone) and eta = d
 * (the whole domain). */
static int sample_fixed(int exact, int32_t d, int64_t lo, int64_t hi, const int32_t *codes,
                        uint64_t *out) {
    const int words = (d + 63) >> 6;
    int bad = 0;
    for (int64_t i = lo; i < hi; i++) {
        const int32_t v = codes[i];
        uint64_t *mask = out + i * words;
        if (bad_cell(v, d, mask, words)) { bad = 1; continue; }
        if (exact) {
            for (int w = 0; w < words; w++) mask[w] = 0;
            mask[v >> 6] = (uint64_t)1 << (v & 63);
        } else {
            for (int w = 0; w < words; w++) mask[w] = ~(uint64_t)0;
            if (d & 63) mask[words - 1] = low_bits(d & 63);
        }
    }
    return bad;
}

int anonset_sample_sets(const anonset_key *key, int64_t n, int64_t row0, int q,
                        const int32_t *const *codes, const int32_t *d,
                        const int32_t *eta, const uint64_t *coin,
                        const int32_t *exact, const int32_t *attr_id,
                        const uint64_t *const *counters,
                        uint64_t *const *out, int n_threads) {
    for (int j = 0; j < q; j++) {
        if (d[j] < 1 || d[j] > ANONSET_MAX_DOMAIN || eta[j] < 1 || eta[j] > d[j] ||
            attr_id[j] < 0 || coin[j] > ((uint64_t)1 << 32))
            return ANONSET_ERR_VALUE;
    }
    if (n <= 0 || q <= 0) return ANONSET_OK;
    if (row0 < 0) return ANONSET_ERR_VALUE;
    plan_cache cache;
    attr_plan *plans = (attr_plan *)calloc((size_t)q, sizeof(attr_plan));
    int nomem = !cache_init(&cache, 2 * q) || !plans;
    int64_t cap = WBUF;
    int32_t dmax = 1;           /* Floyd's buffers: the largest domain */
    for (int j = 0; j < q && !nomem; j++) {
        if (!attr_plan_build(&plans[j], &cache, d[j], eta[j], coin[j], exact[j])) nomem = 1;
        else if (plans[j].g == 0 && plans[j].wpc > cap) cap = plans[j].wpc;
        if (d[j] > dmax) dmax = d[j];
    }
    const parts16 *p16 = cache.p16;
    const int64_t cfirst = row0 / CHUNK, nchunks = (row0 + n - 1) / CHUNK - cfirst + 1;
    int bad = 0;
    int nt = anonset_threads(n_threads);
    (void)nt;
    /* Every cell is a pure function of (key, counter, attribute): the
     * schedule cannot change the output. */
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) reduction(|:bad) \
        shared(key, n, row0, q, codes, d, coin, exact, attr_id, counters, out, plans, p16, \
               cap, dmax, cfirst, nchunks, nomem) if (!nomem && nchunks > 1)
#endif
    {
        thread_bufs b;
        b.cap = cap;
        b.u32 = nomem ? NULL : (uint32_t *)malloc((size_t)(2 * (cap + 16)) * sizeof(uint32_t));
        b.w64 = nomem ? NULL : (uint64_t *)malloc((size_t)(cap + 16) * sizeof(uint64_t));
        b.coins = nomem ? NULL
                        : (uint32_t *)malloc((size_t)(CHUNK / 16 + 2) * 16 * sizeof(uint32_t));
        b.stride = dmax;
        b.seen = nomem ? NULL : (uint8_t *)calloc((size_t)(4 * dmax), 1);
        b.vs = nomem ? NULL : (int32_t *)malloc((size_t)(4 * dmax) * sizeof(int32_t));
        const int ok = b.u32 && b.w64 && b.coins && b.seen && b.vs;
        if (!ok) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            nomem = 1;
        }
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(dynamic, 2)
#endif
        for (int64_t ci = 0; ci < nchunks; ci++) {
            if (!ok) continue;
            const int64_t c = cfirst + ci;
            const int64_t ga = c * CHUNK > row0 ? c * CHUNK : row0;
            const int64_t gb = (c + 1) * CHUNK < row0 + n ? (c + 1) * CHUNK : row0 + n;
            const int64_t lo = ga - row0, hi = gb - row0;
            for (int j = 0; j < q; j++) {
                const int32_t dj = d[j];
                const int words = (dj + 63) >> 6;
                const uint32_t s = (uint32_t)attr_id[j];
                const attr_plan *a = &plans[j];
                if (!a->active)
                    bad |= sample_fixed(exact[j], dj, lo, hi, codes[j], out[j]);
                else if (counters && counters[j])
                    bad |= sample_counters(key, s, a, p16, dj, coin[j], lo, hi, counters[j],
                                           codes[j], out[j], &b);
                else
                    bad |= sample_rows(key, s, a, p16, dj, coin[j], ga, gb, codes[j] + lo,
                                       out[j] + lo * words, &b);
            }
        }
        free(b.u32);
        free(b.w64);
        free(b.coins);
        free(b.seen);
        free(b.vs);
    }
    cache_free(&cache);
    free(plans);
    if (nomem) return ANONSET_ERR_NOMEM;
    return bad ? ANONSET_ERR_VALUE : ANONSET_OK;
}
