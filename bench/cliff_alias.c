/* Target 2b prototype: other exactly-uniform maps from ChaCha20 words to the
 * 31-subsets of the 63 other values (d = 64, eta = 32, p = 1: head cells),
 * against the kept kernel (anonset_sample_sets, csrc/ included).
 *
 *   gcc -O3 -fopenmp -DANONSET_HAVE_OPENMP=1 -Icsrc/common -Icsrc/randomized \
 *       bench/cliff_alias.c csrc/common/rng.c -lm -o /tmp/cliff_alias  (repo root)
 *   taskset -c 1 /tmp/cliff_alias bench [reps]   # interleaved timing, one thread
 *   /tmp/cliff_alias test                        # uniformity / exactness checks
 *
 * Maps (each cell: parts of 16, 16, 16, 15 values; composition (k0..k3),
 * sum 31, has weight w = prod C(n_p, k_p)):
 *   KERN16 / KERN64  the real kernel, 8 columns x 300,000 rows (the 2b pair)
 *   Q      the kept map (Lemire index in [0, C(63,31)), guide, 3 divisions,
 *          4 t16 lookups) in this file's harness: 1 word a cell
 *   V1     alias over compositions: word A (bucket = top 12 bits, u = low 52
 *          bits vs an exact integer threshold; masses s w_k, s = floor(2^64 /
 *          C(63,31)) = 20, the slack 2^64 - s C(63,31) is a 'reject' outcome),
 *          then word B read in mixed radix N0 N1 N2 N3 by four chained
 *          64x64->128 multiplies (Lemire; reject iff low < 2^64 mod P):
 *          2 words a cell
 *   V2     alias decided lazily on 20 bits (12 bucket + 20 of u; a tie, p ~
 *          2^-20, takes 32 more bits from the retry stream), then the pairs
 *          (k0,k1) and (k2,k3) each from 32 bits by a chained 32x32 Lemire
 *          (pair 0: low half of word A; pair 1: half of a word shared by two
 *          cells): 1.5 words a cell
 * Rejected cells are set aside and finished after the chunk's fast pass from
 * a sequential per-(chunk, column) retry stream (sub 9), only the rejected
 * piece redrawn (the composition is kept when a pair is rejected: exact).
 */
#include "../csrc/randomized/sample.c"

#include <math.h>
#include <stdio.h>
#include <omp.h>

#define SUB_RSEQ 9u

/* ------------------------------------------------------------ alias plan */
typedef struct { uint64_t thr; uint32_t prim, alias; } aent;

typedef struct {
    int n, k, ps[4], off[4];
    int mb;                     /* bucket bits */
    aent *tab;                  /* 1 << mb */
    uint32_t N[4][32];          /* C(ps_p, k), 0 beyond */
    uint32_t base[32];          /* off16[k] */
    uint32_t P01[32][32], P23[32][32];
    uint64_t T01[32][32], T23[32][32];   /* 2^pb mod P (pb set at build) */
    int pb;
    uint64_t W, s, rejmass;
    int ncomp;
    uint32_t rejcode;
} amap;

#define REJ 0x80000000u

static int amap_build(amap *m, const parts16 *p16, int n, int k, const int ps[4], int mb, int pb) {
    memset(m, 0, sizeof *m);
    m->n = n; m->k = k; m->mb = mb; m->pb = pb;
    int o = 0;
    for (int p = 0; p < 4; p++) { m->ps[p] = ps[p]; m->off[p] = o; o += ps[p]; }
    if (o != n) return 0;
    for (int p = 0; p < 4; p++)
        for (int j = 0; j < 32; j++) m->N[p][j] = j <= ps[p] ? (uint32_t)binom64(ps[p], j) : 0;
    for (int j = 0; j < 32; j++) m->base[j] = j <= 16 ? p16->off16[j] : 0;
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++) {
            uint64_t P = (uint64_t)m->N[0][a] * m->N[1][b];
            m->P01[a][b] = (uint32_t)P;
            m->T01[a][b] = P ? (((uint64_t)1 << pb) % P) : 0;
            P = (uint64_t)m->N[2][a] * m->N[3][b];
            m->P23[a][b] = (uint32_t)P;
            m->T23[a][b] = P ? (((uint64_t)1 << pb) % P) : 0;
        }
    m->W = binom64(n, k);
    m->s = (uint64_t)(((unsigned __int128)1 << 64) / m->W);
    const unsigned __int128 tot = (unsigned __int128)m->s * m->W;
    m->rejmass = (uint64_t)(((unsigned __int128)1 << 64) - tot);
    const int M = 1 << mb;
    const unsigned __int128 cap = (unsigned __int128)1 << (64 - mb);
    unsigned __int128 *mass = calloc(M, sizeof *mass);
    uint32_t *code = calloc(M, sizeof *code);
    int no = 0;
    uint64_t wsum = 0;
    for (int a = 0; a <= ps[0]; a++)
        for (int b = 0; b <= ps[1]; b++)
            for (int c = 0; c <= ps[2]; c++) {
                int d = k - a - b - c;
                if (d < 0 || d > ps[3]) continue;
                uint64_t w = (uint64_t)m->N[0][a] * m->N[1][b] * m->N[2][c] * m->N[3][d];
                if (no >= M) return 0;
                mass[no] = (unsigned __int128)w * m->s;
                code[no] = (uint32_t)(a | b << 8 | c << 16 | d << 24);
                wsum += w;
                no++;
            }
    m->ncomp = no;
    if (wsum != m->W) return 0;
    m->rejcode = code[0] | REJ;
    if (m->rejmass) { if (no >= M) return 0; mass[no] = m->rejmass; code[no++] = m->rejcode; }
    for (int i = no; i < M; i++) { mass[i] = 0; code[i] = m->rejcode; }
    /* Vose with exact integer masses; total = M cap exactly */
    int *sm = malloc(M * sizeof(int)), *lg = malloc(M * sizeof(int)), ns = 0, nl = 0;
    for (int i = 0; i < M; i++) { if (mass[i] < cap) sm[ns++] = i; else lg[nl++] = i; }
    m->tab = calloc(M, sizeof(aent));
    unsigned __int128 *left = malloc(M * sizeof *left);
    memcpy(left, mass, M * sizeof *left);
    while (ns > 0 && nl > 0) {
        const int l = sm[--ns], g = lg[nl - 1];
        m->tab[l].thr = (uint64_t)left[l];
        m->tab[l].prim = code[l];
        m->tab[l].alias = code[g];
        left[g] -= cap - left[l];
        if (left[g] < cap) { nl--; sm[ns++] = g; }
    }
    while (nl > 0) { const int g = lg[--nl]; if (left[g] != cap) return 0;
        m->tab[g].thr = (uint64_t)cap; m->tab[g].prim = m->tab[g].alias = code[g]; }
    while (ns > 0) { const int l = sm[--ns]; if (left[l] != cap) return 0;
        m->tab[l].thr = (uint64_t)cap; m->tab[l].prim = m->tab[l].alias = code[l]; }
    /* audit: every outcome's mass, summed over the table, exactly as built */
    for (int i = 0; i < no; i++) {
        unsigned __int128 got = 0;
        for (int j = 0; j < M; j++) {
            if (m->tab[j].prim == code[i]) got += m->tab[j].thr;
            if (m->tab[j].alias == code[i]) got += cap - m->tab[j].thr;
        }
        if (got != mass[i]) { fprintf(stderr, "alias audit failed at %d\n", i); return 0; }
    }
    free(mass); free(code); free(sm); free(lg); free(left);
    return 1;
}

/* ------------------------------------------------------------ retry stream */
typedef struct {
    const anonset_key *key;
    uint32_t s;
    uint64_t ctr;
    uint32_t buf[16 * 8];
    int pos;
    int64_t used;
} rstream;

static void rs_init(rstream *r, const anonset_key *key, uint32_t s, uint64_t start) {
    r->key = key; r->s = s; r->ctr = start; r->pos = 64; r->used = 0;
}
static uint64_t rs_next(rstream *r) {
    if (r->pos == 64) {
        anonset_blocks(r->key, r->ctr, r->s, SUB_RSEQ, 8, r->buf);
        r->ctr += 8;
        r->pos = 0;
    }
    r->used++;
    return word64(r->buf, r->pos++);
}

/* ------------------------------------------------------------ cells */
#define KB(K, p) (((K) >> (8 * (p))) & 31u)

ALWAYS_INLINE uint64_t assemble(const amap *m, const uint16_t *t16, uint32_t K, const uint32_t d[4],
                                const int S1, const int S2, const int S3) {
    return (uint64_t)t16[m->base[KB(K, 0)] + d[0]] |
           (uint64_t)t16[m->base[KB(K, 1)] + d[1]] << S1 |
           (uint64_t)t16[m->base[KB(K, 2)] + d[2]] << S2 |
           (uint64_t)t16[m->base[KB(K, 3)] + d[3]] << S3;
}

/* V1 fast: word A -> composition (full 52-bit compare), word B -> 4 digits. */
ALWAYS_INLINE uint64_t v1_cell(const amap *m, const uint16_t *t16, uint64_t A, uint64_t B,
                               const int MB, const int S1, const int S2, const int S3,
                               unsigned *flag) {
    const aent *e = &m->tab[A >> (64 - MB)];
    const uint64_t u = (A << MB) >> MB;
    const uint32_t K = u < e->thr ? e->prim : e->alias;
    const uint32_t k0 = KB(K, 0), k1 = KB(K, 1), k2 = KB(K, 2), k3 = KB(K, 3);
    uint64_t x = B, lo;
    uint32_t d[4];
    d[0] = (uint32_t)anonset_mul128(x, m->N[0][k0], &x);
    d[1] = (uint32_t)anonset_mul128(x, m->N[1][k1], &x);
    d[2] = (uint32_t)anonset_mul128(x, m->N[2][k2], &x);
    d[3] = (uint32_t)anonset_mul128(x, m->N[3][k3], &lo);
    const uint64_t P = (uint64_t)m->P01[k0][k1] * m->P23[k2][k3];
    *flag = (K >> 31) | (lo < P);           /* Lemire: exact test in the slow path */
    return assemble(m, t16, K, d, S1, S2, S3);
}

static uint64_t v1_slow(const amap *m, const uint16_t *t16, uint64_t A, uint64_t B, rstream *rs) {
    const int MB = m->mb;
    const aent *e = &m->tab[A >> (64 - MB)];
    uint64_t u = (A << MB) >> MB;
    uint32_t K = u < e->thr ? e->prim : e->alias;
    while (K & REJ) {
        const uint64_t w = rs_next(rs);
        e = &m->tab[w >> (64 - MB)];
        u = (w << MB) >> MB;
        K = u < e->thr ? e->prim : e->alias;
    }
    const uint32_t k0 = KB(K, 0), k1 = KB(K, 1), k2 = KB(K, 2), k3 = KB(K, 3);
    const uint64_t P = (uint64_t)m->P01[k0][k1] * m->P23[k2][k3];
    const uint64_t thr = (0 - P) % P;
    uint32_t d[4];
    for (;;) {
        uint64_t x = B, lo;
        d[0] = (uint32_t)anonset_mul128(x, m->N[0][k0], &x);
        d[1] = (uint32_t)anonset_mul128(x, m->N[1][k1], &x);
        d[2] = (uint32_t)anonset_mul128(x, m->N[2][k2], &x);
        d[3] = (uint32_t)anonset_mul128(x, m->N[3][k3], &lo);
        if (lo >= thr) break;
        B = rs_next(rs);
    }
    return assemble(m, t16, K, d, m->off[1], m->off[2], m->off[3]);
}

/* V2 fast: top MB bits bucket, next LB bits the lazy compare, low PB bits of
 * A pair 0, c1 (PB bits) pair 1. */
ALWAYS_INLINE uint64_t v2_cell(const amap *m, const uint16_t *t16, uint64_t A, uint64_t c1,
                               const int MB, const int LB, const int PB,
                               const int S1, const int S2, const int S3, unsigned *flag) {
    const aent *e = &m->tab[A >> (64 - MB)];
    const uint64_t uh = (A << MB) >> (64 - LB);
    const uint64_t th = e->thr >> (64 - MB - LB);
    const uint32_t K = uh < th ? e->prim : e->alias;
    const uint32_t k0 = KB(K, 0), k1 = KB(K, 1), k2 = KB(K, 2), k3 = KB(K, 3);
    const uint64_t pm = PB >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << PB) - 1);
    uint32_t d[4];
    uint64_t x = (A & pm) * m->N[0][k0];
    d[0] = (uint32_t)(x >> PB);
    x = (x & pm) * m->N[1][k1];
    d[1] = (uint32_t)(x >> PB);
    const unsigned r0 = (x & pm) < m->T01[k0][k1];
    uint64_t y = (c1 & pm) * m->N[2][k2];
    d[2] = (uint32_t)(y >> PB);
    y = (y & pm) * m->N[3][k3];
    d[3] = (uint32_t)(y >> PB);
    const unsigned r1 = (y & pm) < m->T23[k2][k3];
    *flag = (K >> 31) | (uh == th) | r0 | r1;
    return assemble(m, t16, K, d, S1, S2, S3);
}

static void pair_draw(uint64_t c, uint32_t Na, uint32_t Nb, uint64_t T, int PB, rstream *rs,
                      uint32_t *da, uint32_t *db) {
    const uint64_t pm = ((uint64_t)1 << PB) - 1;
    for (;;) {
        uint64_t x = (c & pm) * Na;
        *da = (uint32_t)(x >> PB);
        x = (x & pm) * Nb;
        *db = (uint32_t)(x >> PB);
        if ((x & pm) >= T) return;
        c = rs_next(rs);
    }
}

static uint64_t v2_slow(const amap *m, const uint16_t *t16, uint64_t A, uint64_t c1, int LB,
                        rstream *rs) {
    const int MB = m->mb, PB = m->pb;
    const aent *e = &m->tab[A >> (64 - MB)];
    const uint64_t uh = (A << MB) >> (64 - LB);
    const uint64_t th = e->thr >> (64 - MB - LB);
    uint32_t K;
    if (uh != th) {
        K = uh < th ? e->prim : e->alias;
    } else {                            /* tie: the low 64 - MB - LB bits of u, fresh */
        const int lw = 64 - MB - LB;
        const uint64_t ul = rs_next(rs) & (((uint64_t)1 << lw) - 1);
        const uint64_t tl = e->thr & (((uint64_t)1 << lw) - 1);
        K = ul < tl ? e->prim : e->alias;
    }
    while (K & REJ) {                   /* a whole fresh alias draw (full width) */
        const uint64_t w = rs_next(rs);
        e = &m->tab[w >> (64 - MB)];
        const uint64_t u = (w << MB) >> MB;
        K = u < e->thr ? e->prim : e->alias;
    }
    const uint32_t k0 = KB(K, 0), k1 = KB(K, 1), k2 = KB(K, 2), k3 = KB(K, 3);
    uint32_t d[4];
    pair_draw(A, m->N[0][k0], m->N[1][k1], m->T01[k0][k1], PB, rs, &d[0], &d[1]);
    pair_draw(c1, m->N[2][k2], m->N[3][k3], m->T23[k2][k3], PB, rs, &d[2], &d[3]);
    return assemble(m, t16, K, d, m->off[1], m->off[2], m->off[3]);
}


/* V3: the same map as V2 (bit for bit), with 8-byte alias entries (thr >> 32
 * in 21 bits, two 16-bit codes k0 | k1 << 5 | k2 << 10 | rej << 15; k3 =
 * 31 - k0 - k1 - k2): a 32 KiB table; per-part (N, base) records; 32-bit
 * thresholds; two passes over 32 cells (codes, then digits and subsets). */
typedef struct { uint32_t N, base; } kinfo;
typedef struct {
    uint64_t tab8[4096];
    kinfo ki[4][32];
    uint32_t T01[32][32], T23[32][32];
} v3plan;

static uint64_t code16(uint32_t K) {
    return (uint64_t)(KB(K, 0) | KB(K, 1) << 5 | KB(K, 2) << 10 | (K >> 31) << 15);
}

static void v3_build(v3plan *v, const amap *m) {
    for (int j = 0; j < 4096; j++) {
        const aent *e = &m->tab[j];
        v->tab8[j] = (e->thr >> 32) | code16(e->prim) << 21 | code16(e->alias) << 37;
    }
    for (int p = 0; p < 4; p++)
        for (int k = 0; k < 32; k++) { v->ki[p][k].N = m->N[p][k]; v->ki[p][k].base = m->base[k]; }
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++) {
            v->T01[a][b] = (uint32_t)m->T01[a][b];
            v->T23[a][b] = (uint32_t)m->T23[a][b];
        }
}

#define V3B 32
ALWAYS_INLINE int v3_batch(const v3plan *v, const uint16_t *t16, const uint64_t *wa,
                           const uint32_t *wc, const int32_t *codes, uint64_t *out, int64_t n,
                           int32_t *pend, int np, int32_t base_i) {
    uint32_t cd[V3B];
    uint8_t fl[V3B];
    for (int64_t i = 0; i < n; i++) {
        const uint64_t A = wa[i];
        const uint64_t e = v->tab8[A >> 52];
        const uint64_t uh = (A >> 32) & 0xfffff, th = e & 0x1fffff;
        const uint64_t c = (uh < th ? e >> 21 : e >> 37) & 0xffff;
        cd[i] = (uint32_t)c;
        fl[i] = (uint8_t)((c >> 15) | (uh == th));
    }
    for (int64_t i = 0; i < n; i++) {
        const uint32_t c = cd[i];
        const uint32_t k0 = c & 31, k1 = (c >> 5) & 31, k2 = (c >> 10) & 31, k3 = 31 - k0 - k1 - k2;
        const kinfo i0 = v->ki[0][k0], i1 = v->ki[1][k1], i2 = v->ki[2][k2], i3 = v->ki[3][k3 & 31];
        uint64_t x = (uint64_t)(uint32_t)wa[i] * i0.N;
        const uint32_t d0 = (uint32_t)(x >> 32);
        x = (uint64_t)(uint32_t)x * i1.N;
        const uint32_t d1 = (uint32_t)(x >> 32);
        const unsigned r0 = (uint32_t)x < v->T01[k0][k1];
        uint64_t y = (uint64_t)wc[i] * i2.N;
        const uint32_t d2 = (uint32_t)(y >> 32);
        y = (uint64_t)(uint32_t)y * i3.N;
        const uint32_t d3 = (uint32_t)(y >> 32);
        const unsigned r1 = (uint32_t)y < v->T23[k2][k3 & 31];
        const uint64_t sub = (uint64_t)t16[i0.base + d0] | (uint64_t)t16[i1.base + d1] << 16 |
                             (uint64_t)t16[i2.base + d2] << 32 | (uint64_t)t16[i3.base + d3] << 48;
        out[i] = gap64(sub, codes[i]);
        pend[np] = base_i + (int32_t)i;
        np += fl[i] | r0 | r1;
    }
    return np;
}

/* ------------------------------------------------------------ harness */
#define NCOL 8
#define NROW 300000
#define CH 1024

typedef struct {
    anonset_key key;
    int32_t *codes[NCOL];
    uint64_t *outs[NCOL];
    parts16 *p16;
    amap m64;
    quart_plan q;
    v3plan *v3;
    uint64_t T, thrT;
    int64_t retry_words, pend_cells;
} ctx;

static double now(void) { return omp_get_wtime(); }

static double run_kernel(ctx *c, int32_t d, int32_t eta) {
    int32_t dd[NCOL], ee[NCOL], ex[NCOL], id[NCOL];
    uint64_t coin[NCOL];
    const int32_t *codes[NCOL];
    uint64_t *outs[NCOL];
    for (int j = 0; j < NCOL; j++) {
        dd[j] = d; ee[j] = eta; ex[j] = 0; id[j] = j; coin[j] = (uint64_t)1 << 32;
        codes[j] = c->codes[j]; outs[j] = c->outs[j];
    }
    /* codes are in [0, 64): for d = 16 use code & 15 (prepared copies) */
    const double t0 = now();
    anonset_sample_sets(&c->key, NROW, 0, NCOL, codes, dd, ee, coin, ex, id, NULL, outs, 1);
    return (now() - t0) / ((double)NROW * NCOL) * 1e9;
}

static uint32_t g_u32[2 * 2 * CH + 64];
static int g_nochacha = 0;

/* variant: 0 = Q, 1 = V1, 2 = V2 */
static double run_variant(ctx *c, int var) {
    const uint16_t *t16 = c->p16->t16;
    const amap *m = &c->m64;
    const int wpc2 = var == 0 ? 2 : var == 1 ? 4 : 3;    /* half-words per cell */
    const v3plan *v3 = c->v3;
    int32_t pend[CH];
    const double t0 = now();
    for (int64_t ga = 0; ga < NROW; ga += CH) {
        const int64_t nb = NROW - ga < CH ? NROW - ga : CH;
        for (int j = 0; j < NCOL; j++) {
            const int32_t *codes = c->codes[j] + ga;
            uint64_t *out = c->outs[j] + ga;
            const int64_t nw = (CH * wpc2) / 2;            /* words of this chunk */
            if (!g_nochacha)
                anonset_blocks(&c->key, (uint64_t)(ga / CH) * (uint64_t)(nw / 8), (uint32_t)j,
                               SUB_DRAW, nw / 8, g_u32);
            const uint64_t *w = (const uint64_t *)g_u32;
            int np = 0;
            if (var == 0) {
                const quart_plan *q = &c->q;
                for (int64_t b0 = 0; b0 < nb; b0 += QBATCH) {
                    uint64_t I[QBATCH]; int64_t cg[QBATCH]; uint32_t pos[QBATCH][4];
                    const int64_t n = nb - b0 < QBATCH ? nb - b0 : QBATCH;
                    for (int64_t i = 0; i < n; i++) {
                        uint64_t lo;
                        I[i] = anonset_mul128(w[b0 + i], c->T, &lo);
                        pend[np] = (int32_t)(b0 + i);
                        np += lo < c->thrT;
                        cg[i] = quart_guess(q, I[i]);
                    }
                    for (int64_t i = 0; i < n; i++) quart_digits(q, I[i], cg[i], pos[i]);
                    for (int64_t i = 0; i < n; i++)
                        out[b0 + i] = gap64(quart_parts(t16, pos[i]), codes[b0 + i]);
                }
                if (np) {
                    rstream rs;
                    rs_init(&rs, &c->key, (uint32_t)j, (uint64_t)(ga / CH) << 20);
                    for (int p = 0; p < np; p++) {
                        const int i = pend[p];
                        uint64_t lo, I;
                        do { I = anonset_mul128(rs_next(&rs), c->T, &lo); } while (lo < c->thrT);
                        out[i] = gap64(quart_subset(q, c->p16, I), codes[i]);
                    }
                    c->retry_words += rs.used;
                }
            } else if (var == 1) {
                const uint64_t *wa = w, *wb = w + CH;
                for (int64_t i = 0; i < nb; i++) {
                    unsigned f;
                    const uint64_t sub = v1_cell(m, t16, wa[i], wb[i], 12, 16, 32, 48, &f);
                    out[i] = gap64(sub, codes[i]);
                    pend[np] = (int32_t)i;
                    np += f;
                }
                if (np) {
                    rstream rs;
                    rs_init(&rs, &c->key, (uint32_t)j, (uint64_t)(ga / CH) << 20);
                    for (int p = 0; p < np; p++) {
                        const int i = pend[p];
                        out[i] = gap64(v1_slow(m, t16, wa[i], wb[i], &rs), codes[i]);
                    }
                    c->retry_words += rs.used;
                }
            } else if (var == 4) {
                for (int64_t i = 0; i < nb; i++) {
                    const uint64_t x = w[i];
                    const uint64_t sub = (uint64_t)t16[x & 0xffff] | (uint64_t)t16[(x >> 16) & 0xffff] << 16 |
                                         (uint64_t)t16[(x >> 32) & 0xffff] << 32 |
                                         (uint64_t)t16[x >> 48] << 48;
                    out[i] = gap64(sub, codes[i]);
                }
            } else if (var == 3) {
                const uint64_t *wa = w;
                const uint32_t *wc = g_u32 + 2 * CH;
                for (int64_t b0 = 0; b0 < nb; b0 += V3B) {
                    const int64_t n = nb - b0 < V3B ? nb - b0 : V3B;
                    np = v3_batch(v3, t16, wa + b0, wc + b0, codes + b0, out + b0, n, pend, np,
                                  (int32_t)b0);
                }
                if (np) {
                    rstream rs;
                    rs_init(&rs, &c->key, (uint32_t)j, (uint64_t)(ga / CH) << 20);
                    for (int p = 0; p < np; p++) {
                        const int i = pend[p];
                        out[i] = gap64(v2_slow(m, t16, wa[i], wc[i], 20, &rs), codes[i]);
                    }
                    c->retry_words += rs.used;
                }
            } else {
                const uint64_t *wa = w;
                const uint32_t *wc = g_u32 + 2 * CH;            /* 32-bit halves */
                for (int64_t i = 0; i < nb; i++) {
                    unsigned f;
                    const uint64_t sub = v2_cell(m, t16, wa[i], wc[i], 12, 20, 32, 16, 32, 48, &f);
                    out[i] = gap64(sub, codes[i]);
                    pend[np] = (int32_t)i;
                    np += f;
                }
                if (np) {
                    rstream rs;
                    rs_init(&rs, &c->key, (uint32_t)j, (uint64_t)(ga / CH) << 20);
                    for (int p = 0; p < np; p++) {
                        const int i = pend[p];
                        out[i] = gap64(v2_slow(m, t16, wa[i], wc[i], 20, &rs), codes[i]);
                    }
                    c->retry_words += rs.used;
                }
            }
            c->pend_cells += np;
        }
    }
    return (now() - t0) / ((double)NROW * NCOL) * 1e9;
}

static int check_outs(ctx *c, const char *name) {
    for (int j = 0; j < NCOL; j++)
        for (int64_t i = 0; i < NROW; i++) {
            const uint64_t o = c->outs[j][i];
            if (__builtin_popcountll(o) != 32 || !((o >> c->codes[j][i]) & 1)) {
                printf("%s: column %d row %ld bad mask %016llx\n", name, j, (long)i,
                       (unsigned long long)o);
                return 1;
            }
        }
    return 0;
}

static void loadavg(char *buf, size_t n) {
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = 0;
    if (f) { if (!fgets(buf, (int)n, f)) buf[0] = 0; fclose(f); }
    size_t l = strlen(buf);
    if (l && buf[l - 1] == '\n') buf[l - 1] = 0;
}

static int cmpd(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void setup(ctx *c) {
    for (int i = 0; i < 8; i++) c->key.key[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    c->key.kind = ANONSET_RNG_CHACHA20;
    c->p16 = malloc(sizeof(parts16));
    parts16_build(c->p16);
    const int ps[4] = {16, 16, 16, 15};
    if (!amap_build(&c->m64, c->p16, 63, 31, ps, 12, 32)) { printf("amap build failed\n"); exit(1); }
    c->T = binom64(63, 31);
    c->thrT = (0 - c->T) % c->T;
    if (!quart_build(&c->q, c->p16, 63, 31, c->T)) { printf("quart build failed\n"); exit(1); }
    c->v3 = malloc(sizeof(v3plan));
    v3_build(c->v3, &c->m64);
}

static int bench(int reps) {
    static ctx c;
    setup(&c);
    int32_t *codes16[NCOL], *codes64[NCOL];
    uint64_t x = 88172645463325252ull;
    for (int j = 0; j < NCOL; j++) {
        codes64[j] = malloc(NROW * sizeof(int32_t));
        codes16[j] = malloc(NROW * sizeof(int32_t));
        for (int64_t i = 0; i < NROW; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            codes64[j][i] = (int32_t)(x % 64u);
            codes16[j][i] = (int32_t)(x % 16u);
        }
        c.outs[j] = calloc(NROW, sizeof(uint64_t));
    }
    enum { NV = 11 };
    const char *names[NV] = {"KERN d=16 eta=5", "KERN d=64 eta=32", "Q  kept map, this harness",
                             "V1 alias + 64-bit mixed radix", "V2 alias lazy + 2x32-bit pairs",
                             "V3 = V2 map, 8-byte alias entries, 2 passes",
                             "Q  map only (ChaCha20 left out)", "V1 map only (ChaCha20 left out)",
                             "V2 map only (ChaCha20 left out)", "V3 map only (ChaCha20 left out)",
                             "floor: 4 t16 lookups of raw bits + gap + I/O, no ChaCha20, no map"};
    double *t[NV];
    for (int v = 0; v < NV; v++) t[v] = malloc(reps * sizeof(double));
    double *ratio[NV];
    for (int v = 0; v < NV; v++) ratio[v] = malloc(reps * sizeof(double));
    char la0[128], la1[128];
    loadavg(la0, sizeof la0);
    /* warm-up */
    for (int j = 0; j < NCOL; j++) c.codes[j] = codes64[j];
    for (int v = 2; v < 6; v++) run_variant(&c, v - 2);
    /* V3 gives the same sets as V2, bit for bit */
    {
        uint64_t *keep[NCOL];
        run_variant(&c, 2);
        for (int j = 0; j < NCOL; j++) {
            keep[j] = malloc(NROW * sizeof(uint64_t));
            memcpy(keep[j], c.outs[j], NROW * sizeof(uint64_t));
        }
        run_variant(&c, 3);
        for (int j = 0; j < NCOL; j++) {
            if (memcmp(keep[j], c.outs[j], NROW * sizeof(uint64_t))) {
                printf("V3 differs from V2 in column %d\n", j);
                return 1;
            }
            free(keep[j]);
        }
        printf("V3 == V2 bit for bit on %d cells\n", NROW * NCOL);
    }
    int64_t rw[16] = {0}, pc[16] = {0};
    for (int r = 0; r < reps; r++) {
        for (int v = 0; v < NV; v++) {
            const int vv = (v + r) % NV;          /* rotate the order */
            for (int j = 0; j < NCOL; j++) c.codes[j] = vv == 0 ? codes16[j] : codes64[j];
            if (vv == 0) t[vv][r] = run_kernel(&c, 16, 5);
            else if (vv == 1) t[vv][r] = run_kernel(&c, 64, 32);
            else {
                c.retry_words = c.pend_cells = 0;
                g_nochacha = vv >= 6;
                t[vv][r] = run_variant(&c, vv == 10 ? 4 : vv >= 6 ? vv - 6 : vv - 2);
                g_nochacha = 0;
                rw[vv] += c.retry_words; pc[vv] += c.pend_cells;
            }
            if (vv >= 1 && vv < 6 && check_outs(&c, names[vv])) return 1;
        }
        for (int v = 0; v < NV; v++) ratio[v][r] = t[v][r] / t[0][r];
    }
    loadavg(la1, sizeof la1);
    const double base_w[NV] = {0.25, 1.0, 1.0, 2.0, 1.5, 1.5, 0, 0, 0, 0, 0};
    printf("one thread, %d interleaved reps, %d columns x %d rows; load before [%s] after [%s]\n",
           reps, NCOL, NROW, la0, la1);
    printf("| variant | ns/cell median | min | max | ratio to d=16 (median of per-rep) | "
           "words/cell (draw + retry) | cells set aside |\n|---|---|---|---|---|---|---|\n");
    for (int v = 0; v < NV; v++) {
        double med, mn, mx, rmed;
        qsort(t[v], reps, sizeof(double), cmpd);
        med = t[v][reps / 2]; mn = t[v][0]; mx = t[v][reps - 1];
        qsort(ratio[v], reps, sizeof(double), cmpd);
        rmed = ratio[v][reps / 2];
        double wpc = base_w[v], setaside = 0;
        if (v >= 2) {
            wpc += (double)rw[v] / ((double)reps * NROW * NCOL);
            setaside = (double)pc[v] / ((double)reps * NROW * NCOL);
        }
        printf("| %s | %.2f | %.2f | %.2f | %.2f | %.4f | %.4f |\n", names[v], med, mn, mx, rmed,
               wpc, setaside);
    }
    printf("(d=16 kernel: 4 cells per word, 0.25; d=64 kernel: 1 word + retries in its own stream)\n");
    printf("alias: %d compositions, scale s = %llu, reject mass / 2^64 = %.5f\n", c.m64.ncomp,
           (unsigned long long)c.m64.s, (double)c.m64.rejmass / 18446744073709551616.0);
    return 0;
}

/* ------------------------------------------------------------ tests */
static double chi2_p(double chi2, double df) {     /* Wilson-Hilferty upper tail */
    const double z = (pow(chi2 / df, 1.0 / 3) - (1 - 2 / (9 * df))) / sqrt(2 / (9 * df));
    return 0.5 * erfc(z / sqrt(2));
}

/* Words: a sequential ChaCha20 stream (key, stream s, sub 0). */
typedef struct { rstream r; } wsrc;

static int test_small(const parts16 *p16, int var, int mb, int lb, int pb, int64_t ndraw,
                      uint32_t s) {
    /* d = 12, eta = 5: head cells draw 4 of the 11 other values, parts 3,3,3,2 */
    const int ps[4] = {3, 3, 3, 2};
    amap m;
    if (!amap_build(&m, p16, 11, 4, ps, mb, pb)) { printf("build failed\n"); return 1; }
    anonset_key key;
    for (int i = 0; i < 8; i++) key.key[i] = 0x2545F491u * (uint32_t)(i + 3);
    if (getenv("SEED")) key.key[1] ^= (uint32_t)atoi(getenv("SEED")) * 0x9e3779b9u;
    key.kind = ANONSET_RNG_CHACHA20;
    static int32_t rank[1 << 11];
    int nsub = 0;
    for (int x = 0; x < (1 << 11); x++) rank[x] = __builtin_popcount(x) == 4 ? nsub++ : -1;
    int64_t *cnt = calloc(nsub, sizeof(int64_t));
    rstream src, rs;
    rs_init(&src, &key, s, 0);
    src.s = s;
    rs_init(&rs, &key, s + 1000, 0);
    int64_t setaside = 0, bad = 0;
    for (int64_t i = 0; i < ndraw; i++) {
        /* the main stream uses sub SUB_RSEQ too, but another stream id */
        const uint64_t A = rs_next(&src), B = rs_next(&src);
        unsigned f;
        uint64_t sub;
        if (var == 1) {
            sub = v1_cell(&m, p16->t16, A, B, mb, m.off[1], m.off[2], m.off[3], &f);
            if (f) { sub = v1_slow(&m, p16->t16, A, B, &rs); setaside++; }
        } else {
            sub = v2_cell(&m, p16->t16, A, B, mb, lb, pb, m.off[1], m.off[2], m.off[3], &f);
            if (f) { sub = v2_slow(&m, p16->t16, A, B, lb, &rs); setaside++; }
        }
        const int r = sub < (1u << 11) ? rank[sub] : -1;
        if (r < 0) { bad++; continue; }
        cnt[r]++;
        const int v = (int)(B % 12u);
        const uint64_t o = gap64(sub, v);
        if (__builtin_popcountll(o) != 5 || !((o >> v) & 1) || (o >> 12)) bad++;
    }
    const double e = (double)ndraw / nsub;
    double chi = 0;
    int64_t mn = INT64_MAX, mx = 0;
    for (int i = 0; i < nsub; i++) {
        chi += (cnt[i] - e) * (cnt[i] - e) / e;
        if (cnt[i] < mn) mn = cnt[i];
        if (cnt[i] > mx) mx = cnt[i];
    }
    printf("| small d=12 eta=5 | %s mb=%d lb=%d pb=%d | %lld | %d subsets | chi2 %.1f (df %d) p=%.3f | "
           "min/max count %lld/%lld (exp %.0f) | set aside %.4f | bad %lld | retry words %lld |\n",
           var == 1 ? "V1" : "V2", mb, lb, pb, (long long)ndraw, nsub, chi, nsub - 1,
           chi2_p(chi, nsub - 1), (long long)mn, (long long)mx, e, (double)setaside / ndraw,
           (long long)bad, (long long)rs.used);
    free(cnt);
    free(m.tab);
    return bad != 0;
}

/* d = 64 statistics of V1/V2 over ndraw cells: popcount and v, the
 * composition (k0..k3) against exact w_k / C(63,31) (bins pooled to expected
 * >= 20), and each of the 63 positions' inclusion. */
static int test_big(ctx *c, int var, int64_t ndraw) {
    const amap *m = &c->m64;
    rstream src, rs;
    anonset_key key = c->key;
    key.key[0] ^= 0x5555u + (getenv("SEED") ? (uint32_t)atoi(getenv("SEED")) * 0x10001u : 0);
    rs_init(&src, &key, 77, 0);
    rs_init(&rs, &key, 78, 0);
    static int64_t comp[17][17][17];
    memset(comp, 0, sizeof comp);
    int64_t pos[63] = {0}, bad = 0, setaside = 0;
    for (int64_t i = 0; i < ndraw; i++) {
        const uint64_t A = rs_next(&src), B = rs_next(&src);
        unsigned f;
        uint64_t sub;
        if (var == 1) {
            sub = v1_cell(m, c->p16->t16, A, B, 12, 16, 32, 48, &f);
            if (f) { sub = v1_slow(m, c->p16->t16, A, B, &rs); setaside++; }
        } else {
            sub = v2_cell(m, c->p16->t16, A, (uint32_t)B, 12, 20, 32, 16, 32, 48, &f);
            if (f) { sub = v2_slow(m, c->p16->t16, A, (uint32_t)B, 20, &rs); setaside++; }
        }
        const int v = (int)(B >> 58);
        const uint64_t o = gap64(sub, v);
        if (__builtin_popcountll(o) != 32 || !((o >> v) & 1) || (sub >> 63)) { bad++; continue; }
        comp[__builtin_popcountll(sub & 0xffff)][__builtin_popcountll((sub >> 16) & 0xffff)]
            [__builtin_popcountll((sub >> 32) & 0xffff)]++;
        for (int p = 0; p < 63; p++) pos[p] += (sub >> p) & 1;
    }
    /* composition chi-square with pooling */
    const double W = (double)c->T;
    double chi = 0, pe = 0, po = 0;
    int df = 0;
    for (int a = 0; a <= 16; a++) for (int b = 0; b <= 16; b++) for (int cc = 0; cc <= 16; cc++) {
        const int d = 31 - a - b - cc;
        if (d < 0 || d > 15) continue;
        const double ex = (double)ndraw * (double)binom64(16, a) * binom64(16, b) * binom64(16, cc) *
                          binom64(15, d) / W;
        pe += ex; po += (double)comp[a][b][cc];
        if (pe >= 20) { chi += (po - pe) * (po - pe) / pe; df++; pe = po = 0; }
    }
    if (pe > 0) { chi += (po - pe) * (po - pe) / (pe > 0 ? pe : 1); df++; }
    df -= 1;
    double zmax = 0;
    const double pin = 31.0 / 63, sd = sqrt(ndraw * pin * (1 - pin));
    double chip = 0;
    for (int p = 0; p < 63; p++) {
        const double z = (pos[p] - ndraw * pin) / sd;
        chip += z * z;
        if (fabs(z) > zmax) zmax = fabs(z);
    }
    printf("| d=64 eta=32 | %s | %lld cells | compositions chi2 %.1f (df %d) p=%.3f | positions "
           "sum z^2 %.1f (63) p=%.3f, max |z| %.2f | set aside %.5f | bad %lld | retry words %lld |\n",
           var == 1 ? "V1" : "V2", (long long)ndraw, chi, df, chi2_p(chi, df), chip,
           chi2_p(chip, 63), zmax, (double)setaside / ndraw, (long long)bad, (long long)rs.used);
    return bad != 0;
}

/* Exhaustive check of the chained pair Lemire at width B on the real part
 * sizes: every (k0, k1) with P = N0 N1 <= 2^(B-4), all 2^B inputs: accepted
 * inputs give every (d0, d1) exactly floor(2^B / P) times. */
static int test_pairs_exhaustive(const amap *m, int B) {
    int npairs = 0, bad = 0;
    const uint64_t pm = ((uint64_t)1 << B) - 1;
    uint32_t *hit = malloc(sizeof(uint32_t) << (B - 4));
    for (int a = 0; a <= 16; a++) for (int b = 0; b <= 16; b++) {
        const uint64_t Na = m->N[0][a], Nb = m->N[1][b], P = Na * Nb;
        if (!P || P > ((uint64_t)1 << (B - 4))) continue;
        const uint64_t T = ((uint64_t)1 << B) % P;
        memset(hit, 0, P * sizeof(uint32_t));
        for (uint64_t cc = 0; cc <= pm; cc++) {
            uint64_t x = cc * Na;
            const uint64_t da = x >> B;
            x = (x & pm) * Nb;
            const uint64_t db = x >> B;
            if ((x & pm) < T) continue;
            hit[da * Nb + db]++;
        }
        const uint32_t want = (uint32_t)(((uint64_t)1 << B) / P);
        for (uint64_t i = 0; i < P; i++) if (hit[i] != want) { bad++; break; }
        npairs++;
    }
    free(hit);
    printf("| pair chain exhaustive | width %d | %d pairs (k0,k1) with N0 N1 <= 2^%d | "
           "every digit pair hit exactly floor(2^B/P) times: %s |\n", B, npairs, B - 4,
           bad ? "NO" : "yes");
    return bad;
}

static int test(void) {
    static ctx c;
    setup(&c);
    int bad = 0;
    printf("alias table d=64: %d compositions + reject, 4096 buckets, audit of masses: exact "
           "(built); s=%llu; reject mass/2^64=%.6f\n", c.m64.ncomp,
           (unsigned long long)c.m64.s, (double)c.m64.rejmass / 18446744073709551616.0);
    bad |= test_pairs_exhaustive(&c.m64, 24);
    const int64_t N = 10000000;
    bad |= test_small(c.p16, 1, 5, 0, 0, N, 1);
    bad |= test_small(c.p16, 2, 5, 20, 32, N, 2);
    bad |= test_small(c.p16, 2, 5, 2, 6, N, 3);     /* stress: ties 1 in 4, pair rejects */
    bad |= test_small(c.p16, 2, 6, 1, 4, N, 4);     /* harder stress */
    bad |= test_big(&c, 1, 20000000);
    bad |= test_big(&c, 2, 20000000);
    printf(bad ? "FAILED\n" : "all checks passed\n");
    return bad;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "test")) return test();
    const int reps = argc > 2 ? atoi(argv[2]) : 9;
    return bench(reps);
}
