#include "counts.h"

#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <stdint.h>

/* Offsets of the cells in the product of one row's sets: start from {0} and,
 * attribute by attribute, add member * stride.  Returns the number of cells,
 * or -1 if it would exceed cap. */
static int64_t product_offsets(int64_t i, int q, const uint64_t *const *masks,
                               const int32_t *d, const int64_t *stride,
                               int64_t *off, int64_t cap) {
    int64_t len = 1;
    off[0] = 0;
    for (int j = q - 1; j >= 0; j--) {
        int words = (d[j] + 63) >> 6;
        const uint64_t *m = masks[j] + i * words;
        int cnt = 0;
        for (int w = 0; w < words; w++) cnt += anonset_popcount64(m[w]);
        if (cnt == 0) return 0;
        if (len * cnt > cap) return -1;
        /* expand in place from the back so old entries are read before overwritten */
        int64_t newlen = len * cnt;
        int64_t pos = newlen;
        for (int w = words - 1; w >= 0; w--) {
            uint64_t bits = m[w];
            /* members of this word, highest first */
            while (bits) {
                int b = anonset_msb64(bits);
                bits &= ~((uint64_t)1 << b);
                int64_t add = (int64_t)(w * 64 + b) * stride[j];
                pos -= len;
                for (int64_t t = 0; t < len; t++) off[pos + t] = off[t] + add;
            }
        }
        /* pos == 0 here; the first block (the smallest member) was written
         * last and reads off[0..len) which still held the old values because
         * blocks are written back to front and the smallest block starts at 0. */
        len = newlen;
    }
    return len;
}

/* The direct count: every row increments each cell of its product set. */
static int count_w_direct(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                          int64_t max_set, int64_t ncells, int64_t *w, int n_threads) {
    if (q < 1 || q > 32 || max_set < 1) return ANONSET_ERR_VALUE;
    int64_t stride[32];
    int64_t s = 1;
    for (int j = q - 1; j >= 0; j--) { stride[j] = s; s *= d[j]; }
    if (s != ncells) return ANONSET_ERR_VALUE;
    int nt = anonset_threads(n_threads);
    int status = ANONSET_OK;
    int64_t **tables = (int64_t **)calloc((size_t)nt, sizeof(int64_t *));
    int32_t **tables32 = (int32_t **)calloc((size_t)nt, sizeof(int32_t *));
    if (!tables || !tables32) { free(tables); free(tables32); return ANONSET_ERR_NOMEM; }
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) \
        shared(n, q, masks, d, max_set, ncells, w, stride, tables, tables32, status, nt)
#endif
    {
        int tid = 0;
#if ANONSET_HAVE_OPENMP
        tid = omp_get_thread_num();
#endif
        /* Private tables: 32-bit counters while no cell can reach 2^31 (a
         * thread adds at most 1 per row to a cell), which halves the memory
         * traffic of the random increments; 64-bit otherwise. */
        int narrow = n < INT32_MAX;
        int64_t *tab = narrow ? NULL : (int64_t *)calloc((size_t)ncells, sizeof(int64_t));
        int32_t *tab32 = narrow ? (int32_t *)calloc((size_t)ncells, sizeof(int32_t)) : NULL;
        int64_t *off = (int64_t *)malloc((size_t)max_set * sizeof(int64_t));
        tables[tid] = tab;
        tables32[tid] = tab32;
        int ok = (tab || tab32) && off;
        if (!ok) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            status = ANONSET_ERR_NOMEM;
        }
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(static, 4096)
#endif
        for (int64_t i = 0; i < n; i++) {
            if (!ok) continue;
            /* the cells of the first q-1 sets (prefix offsets), then the last
             * set's members, which are adjacent cells of one row of the table */
            int64_t len = product_offsets(i, q - 1, masks, d, stride, off, max_set);
            const int lw = (d[q - 1] + 63) >> 6;
            const uint64_t *lm = masks[q - 1] + i * lw;
            int32_t last[64];
            int nlast = 0, overflow = 0;
            for (int wd = 0; wd < lw && !overflow; wd++) {
                uint64_t bits = lm[wd];
                while (bits) {
                    if (nlast == 64) { overflow = 1; break; }
                    last[nlast++] = wd * 64 + anonset_ctz64(bits);
                    bits &= bits - 1;
                }
            }
            if (len < 0 || overflow || len * nlast > max_set) {
#if ANONSET_HAVE_OPENMP
                #pragma omp atomic write
#endif
                status = ANONSET_ERR_SETSIZE;
                continue;
            }
            if (narrow) {
                for (int64_t t = 0; t < len; t++) {
                    int32_t *row = tab32 + off[t];
                    for (int e = 0; e < nlast; e++) row[last[e]]++;
                }
            } else {
                for (int64_t t = 0; t < len; t++) {
                    int64_t *row = tab + off[t];
                    for (int e = 0; e < nlast; e++) row[last[e]]++;
                }
            }
        }
        free(off);
#if ANONSET_HAVE_OPENMP
        #pragma omp barrier
        #pragma omp for schedule(static)
#endif
        for (int64_t m = 0; m < ncells; m++) {
            int64_t acc = 0;
            for (int t = 0; t < nt; t++) {
                if (tables[t]) acc += tables[t][m];
                if (tables32[t]) acc += tables32[t][m];
            }
            w[m] += acc;
        }
    }
    for (int t = 0; t < nt; t++) { free(tables[t]); free(tables32[t]); }
    free(tables);
    free(tables32);
    return status;
}

/* ---------------------------------------------------------------- factorized
 * w = sum_i e(S_i1) (x) ... (x) e(S_iq).  Rows are grouped by the set of one
 * attribute G (a pattern of at most 16 bits); within a group g the other
 * attributes' products are summed into V_g (their cells only, in C order, the
 * last of them L added as a 0/1 vector per prefix cell: contiguous, vectorized
 * adds), then multiplied out: W'[c] += V_g for c in the group's set.  A row
 * costs prod_{j != G, L} |S_j| vector adds of d_L counters instead of
 * prod_j |S_j| scattered increments; every group costs |S_G| x R adds
 * (R = prod_{j != G} d_j).  V counts at most FACT_UNIT rows (16-bit
 * counters, 16 per vector instruction).  Integer sums: the result does not
 * depend on the order, so it is the same for any number of threads. */
#define FACT_UNIT 8192      /* rows of one group per work unit (< 2^15: int16 counters) */
#define FACT_CHUNK (1 << 22)  /* rows sorted at a time (bounds the scratch) */
#define FACT_MAXL 32        /* largest d_L added as a vector */
#define FACT_VL 16          /* int16 lanes of one vector add */
#define FACT_SORT_ADDS 10.0 /* the counting sort's cost per row, in vector adds (measured) */
#define FACT_UNSORTED_BYTES (256 * 1024)   /* every pattern's V together, at most */
#if defined(__GNUC__)
/* 16 counters: one AVX2 instruction, or two SSE2 ones */
typedef int16_t fact_vec __attribute__((vector_size(32)));
#endif

typedef struct {
    int q, G, L, nrest;
    int rest[32];           /* attributes other than G, in order; L = rest[nrest-1] */
    int words[32];
    int bw[32];             /* bytes of a rest attribute's mask in a record */
    int64_t R, dG;          /* R: cells of V (the L axis padded to dLp) */
    int dLp;                /* 16 or 32 where d_L <= 32 (vector adds), else d_L */
    int64_t rstride[32];    /* strides of the rest attributes in V */
    int rec;                /* bytes of one packed row (the rest masks) */
    int16_t lut[256][8];    /* the 0/1 counters of a byte of a mask */
} fact_plan;

/* Word x of a mask stored in bw bytes (2 or 4: d <= 16 or 32; else words). */
static inline uint64_t rec_word(const unsigned char *p, int bw, int x) {
    if (bw == 2) { uint16_t v; memcpy(&v, p, 2); return v; }
    if (bw == 4) { uint32_t v; memcpy(&v, p, 4); return v; }
    uint64_t v;
    memcpy(&v, p + 8 * x, 8);
    return v;
}

#if defined(__GNUC__)
/* One record of the q' = 4 fast path into V: for every cell of the two
 * prefix sets (m0, m1: offsets s0, s1 per value), L's set m2 (d_L <= 16)
 * added as a 0/1 vector of 16 counters. */
__attribute__((always_inline))
static inline void fact_add_row(const fact_plan *fp, int16_t *V, uint64_t m0, uint64_t m1,
                                uint64_t m2, int64_t s0, int64_t s1) {
    fact_vec iv;
    memcpy(&iv, fp->lut[m2 & 255u], 16);
    memcpy((unsigned char *)&iv + 16, fp->lut[(m2 >> 8) & 255u], 16);
    int64_t o1[32];
    int n1 = 0;
    for (uint64_t b = m1; b; b &= b - 1) o1[n1++] = anonset_ctz64(b) * s1;
    for (uint64_t a = m0; a; a &= a - 1) {
        unsigned char *base = (unsigned char *)(V + anonset_ctz64(a) * s0);
        for (int y = 0; y < n1; y++) {
            unsigned char *row = base + o1[y] * (int64_t)sizeof(int16_t);
            fact_vec x;
            memcpy(&x, row, sizeof x);
            x += iv;
            memcpy(row, &x, sizeof x);
        }
    }
}
#endif

/* W'[c] += V for c in the group's set (its pattern): the multiply-out. */
static inline void fact_multiply_out(uint64_t pattern, const int16_t *V, int32_t *Wp,
                                     int64_t R) {
    for (uint64_t bits = pattern; bits; bits &= bits - 1) {
        int32_t *dst = Wp + (int64_t)anonset_ctz64(bits) * R;
        for (int64_t t = 0; t < R; t++) dst[t] += V[t];
    }
}

/* Rows [r0, r1) counted into the thread's W' (dG x R, G-major). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fact_units_body(const fact_plan *fp, const unsigned char *recs,
                                  int64_t lo, int64_t hi, uint32_t pattern, int16_t *V,
                                  int32_t *Wp, int64_t *off, int64_t max_set,
                                  const int32_t *d) {
    const int64_t R = fp->R;
    const int L = fp->L, nrest = fp->nrest;
    const int dL = d[L];
    const int vec = dL <= FACT_MAXL;
    int status = ANONSET_OK;
    for (int64_t t = 0; t < R; t++) V[t] = 0;
    const int64_t setG = anonset_popcount64(pattern);
#if defined(__GNUC__)
    /* The common case (q' = 4, every other domain <= 32, d_L <= 16): a
     * straight loop over the two prefix sets, no offset list. */
    if (nrest == 3 && fp->bw[0] <= 4 && fp->bw[1] <= 4 && fp->bw[2] <= 4 && dL <= 16) {
        const int b0 = fp->bw[0], b1 = fp->bw[1], b2 = fp->bw[2];
        const int64_t s0 = fp->rstride[0], s1 = fp->rstride[1];
        for (int64_t i = lo; i < hi; i++) {
            const unsigned char *rw = recs + i * fp->rec;
            const uint64_t m0 = rec_word(rw, b0, 0), m1 = rec_word(rw + b0, b1, 0);
            const uint64_t m2 = rec_word(rw + b0 + b1, b2, 0);
            const int64_t c0 = anonset_popcount64(m0), c1 = anonset_popcount64(m1);
            if (c0 * c1 * anonset_popcount64(m2) * setG > max_set) {
                status = ANONSET_ERR_SETSIZE;
                continue;
            }
            fact_add_row(fp, V, m0, m1, m2, s0, s1);
        }
        goto multiply_out;
    }
#endif
    for (int64_t i = lo; i < hi; i++) {
        const unsigned char *rw = recs + i * fp->rec;
        /* prefix offsets over rest[0 .. nrest-2]: member lists first (values
         * times strides), then their sums; two prefix attributes (q' = 4)
         * have a direct double loop */
        int64_t len = 1;
        int pos = 0;
        int64_t memv[3][64];
        int nmem[3] = {0, 0, 0};
        for (int a = 0; a < nrest - 1; a++) {
            const int j = fp->rest[a];
            const int wj = fp->words[j], bw = fp->bw[a];
            int cnt = 0;
            for (int x = 0; x < wj; x++) cnt += anonset_popcount64(rec_word(rw + pos, bw, x));
            if (len * cnt > max_set) { status = ANONSET_ERR_SETSIZE; len = 0; break; }
            if (a < 3 && nrest - 1 <= 3 && cnt <= 64) {
                int e = 0;
                for (int x = 0; x < wj; x++) {
                    uint64_t bits = rec_word(rw + pos, bw, x);
                    while (bits) {
                        memv[a][e++] = (int64_t)(x * 64 + anonset_ctz64(bits)) * fp->rstride[a];
                        bits &= bits - 1;
                    }
                }
                nmem[a] = e;
            } else {
                nmem[0] = -1;       /* the general expansion below */
            }
            len *= cnt;
            pos += bw;
        }
        if (len && nmem[0] >= 0 && nrest - 1 <= 3) {
            int64_t e = 0;
            if (nrest - 1 == 0) {
                off[e++] = 0;
            } else if (nrest - 1 == 1) {
                for (int x = 0; x < nmem[0]; x++) off[e++] = memv[0][x];
            } else if (nrest - 1 == 2) {
                for (int x = 0; x < nmem[0]; x++)
                    for (int y = 0; y < nmem[1]; y++) off[e++] = memv[0][x] + memv[1][y];
            } else {
                for (int x = 0; x < nmem[0]; x++)
                    for (int y = 0; y < nmem[1]; y++)
                        for (int z = 0; z < nmem[2]; z++)
                            off[e++] = memv[0][x] + memv[1][y] + memv[2][z];
            }
        } else if (len) {
            /* expand: off[e * len + t] = off[t] + member_e * stride (back to front) */
            int64_t ln = 1;
            int ps = 0;
            off[0] = 0;
            for (int a = 0; a < nrest - 1; a++) {
                const int j = fp->rest[a];
                const int wj = fp->words[j], bw = fp->bw[a];
                int e = 0;
                for (int x = 0; x < wj; x++) e += anonset_popcount64(rec_word(rw + ps, bw, x));
                const int cnt = e;
                for (int x = wj - 1; x >= 0; x--) {
                    uint64_t bits = rec_word(rw + ps, bw, x);
                    while (bits) {
                        const int b = anonset_msb64(bits);
                        bits &= ~((uint64_t)1 << b);
                        e--;
                        const int64_t add = (int64_t)(x * 64 + b) * fp->rstride[a];
                        for (int64_t t = 0; t < ln; t++) off[e * ln + t] = off[t] + add;
                    }
                }
                ln *= cnt;
                ps += bw;
            }
        }
        if (!len) continue;
        const unsigned char *mL = rw + pos;
        const int wL = fp->words[L], bwL = fp->bw[nrest - 1];
        int cntL = 0;
        for (int x = 0; x < wL; x++) cntL += anonset_popcount64(rec_word(mL, bwL, x));
        if (len * cntL * setG > max_set) { status = ANONSET_ERR_SETSIZE; continue; }
        if (vec) {
            /* a fixed number of lanes (16 or 32; V has FACT_MAXL counters of
             * padding): lanes >= d_L add 0 to the next row's counters */
            int16_t ind[FACT_MAXL];
            const uint64_t mw = rec_word(mL, bwL, 0);
            for (int y = 0; y < FACT_MAXL / 8; y++)
                memcpy(ind + 8 * y, fp->lut[(mw >> (8 * y)) & 255u], sizeof fp->lut[0]);
            const int nv = dL <= 16 ? 16 / FACT_VL : FACT_MAXL / FACT_VL;
#if defined(__GNUC__)
            fact_vec iv[FACT_MAXL / FACT_VL];
            memcpy(iv, ind, sizeof iv);
            for (int64_t e = 0; e < len; e++) {
                unsigned char *row = (unsigned char *)(V + off[e]);
                for (int k = 0; k < nv; k++) {
                    fact_vec x;
                    memcpy(&x, row + k * sizeof x, sizeof x);
                    x += iv[k];
                    memcpy(row + k * sizeof x, &x, sizeof x);
                }
            }
#else
            for (int64_t e = 0; e < len; e++) {
                int16_t *row = V + off[e];
                for (int t = 0; t < nv * FACT_VL; t++) row[t] = (int16_t)(row[t] + ind[t]);
            }
#endif
        } else {
            int32_t mem[64];
            int nm = 0;
            for (int x = 0; x < wL && nm < 64; x++) {
                uint64_t bits = rec_word(mL, bwL, x);
                while (bits && nm < 64) { mem[nm++] = x * 64 + anonset_ctz64(bits); bits &= bits - 1; }
            }
            if (nm < cntL) { status = ANONSET_ERR_SETSIZE; continue; }
            for (int64_t e = 0; e < len; e++) {
                int16_t *row = V + off[e];
                for (int t = 0; t < nm; t++) row[mem[t]]++;
            }
        }
    }
#if defined(__GNUC__)
multiply_out:
#endif
    fact_multiply_out(pattern, V, Wp, R);
    return status;
}


/* The same body compiled twice: portable (SSE2 on x86-64) and, where the CPU
 * has it, AVX2 (8 counters per instruction), chosen at run time. */
static int fact_units(const fact_plan *fp, const unsigned char *recs, int64_t lo, int64_t hi,
                      uint32_t pattern, int16_t *V, int32_t *Wp, int64_t *off,
                      int64_t max_set, const int32_t *d) {
    return fact_units_body(fp, recs, lo, hi, pattern, V, Wp, off, max_set, d);
}

#if ANONSET_X86_DISPATCH
ANONSET_TARGET_AVX2
static int fact_units_avx2(const fact_plan *fp, const unsigned char *recs, int64_t lo, int64_t hi,
                           uint32_t pattern, int16_t *V, int32_t *Wp, int64_t *off,
                           int64_t max_set, const int32_t *d) {
    return fact_units_body(fp, recs, lo, hi, pattern, V, Wp, off, max_set, d);
}
#endif

/* The plan of a factorized count on attribute G. */
/* The plan of a factorized count on attribute G, the vector attribute L last
 * among the others (which keep their order before it). */
static void fact_plan_init(fact_plan *fp, int q, const int32_t *d, int64_t ncells, int G,
                           int L) {
    memset(fp, 0, sizeof *fp);
    fp->q = q; fp->G = G; fp->dG = d[G];
    for (int j = 0; j < q; j++) fp->words[j] = (d[j] + 63) >> 6;
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < q; j++) {
            if (j == G || (pass == 0) == (j == L)) continue;
            const int bw = d[j] <= 16 ? 2 : (d[j] <= 32 ? 4 : 8 * fp->words[j]);
            fp->bw[fp->nrest] = bw;
            fp->rest[fp->nrest++] = j;
            fp->rec += bw;
        }
    fp->L = L;
    /* the L axis padded to whole vectors: rows of V never overlap, so one
     * row's vector add never waits on a partly overlapping store */
    fp->dLp = d[L] <= 16 ? 16 : (d[L] <= 32 ? 32 : d[L]);
    fp->R = ncells / d[G] / d[L] * fp->dLp;
    int64_t st = 1;
    for (int a = fp->nrest - 1; a >= 0; a--) {
        fp->rstride[a] = st;
        st *= a == fp->nrest - 1 ? fp->dLp : d[fp->rest[a]];
    }
    for (int v = 0; v < 256; v++)
        for (int t = 0; t < 8; t++) fp->lut[v][t] = (int16_t)((v >> t) & 1);
}

/* Counting sort of rows [c0, c0 + m) by G's pattern (at most 16 bits):
 * start[k] .. start[k+1] are the rows of pattern k, their rest masks packed
 * into recs. */
static int fact_sort(const fact_plan *fp, const uint64_t *const *masks, int64_t c0, int64_t m,
                     int64_t *start, unsigned char *recs) {
    const int G = fp->G, wG = fp->words[G];
    const uint64_t *mg = masks[G] + c0 * wG;
    memset(start, 0, (size_t)65537 * sizeof(int64_t));
    for (int64_t i = 0; i < m; i++) start[(mg[i * wG] & 0xFFFFu) + 1]++;
    for (int k = 0; k < 65536; k++) start[k + 1] += start[k];
    int64_t *pos = (int64_t *)malloc((size_t)65536 * sizeof(int64_t));
    if (!pos) return ANONSET_ERR_NOMEM;
    memcpy(pos, start, (size_t)65536 * sizeof(int64_t));
    for (int64_t i = 0; i < m; i++) {
        const uint16_t key = (uint16_t)(mg[i * wG] & 0xFFFFu);
        const int64_t at = pos[key]++;
        unsigned char *dst = recs + at * fp->rec;
        for (int a = 0; a < fp->nrest; a++) {
            const int j = fp->rest[a], bw = fp->bw[a];
            const uint64_t *src = masks[j] + (c0 + i) * fp->words[j];
            if (bw == 2) { const uint16_t v = (uint16_t)src[0]; memcpy(dst, &v, 2); }
            else if (bw == 4) { const uint32_t v = (uint32_t)src[0]; memcpy(dst, &v, 4); }
            else memcpy(dst, src, (size_t)bw);
            dst += bw;
        }
    }
    free(pos);
    return ANONSET_OK;
}

/* Work units (pieces of at most FACT_UNIT rows of one pattern) of a sorted
 * chunk, counted into the threads' W' tables. */
static int fact_count_chunk(const fact_plan *fp, const int64_t *start, const unsigned char *recs,
                            int32_t **Wps, int64_t max_set, const int32_t *d, int nt) {
    int64_t nunits = 0;
    for (int k = 0; k < 65536; k++)
        nunits += (start[k + 1] - start[k] + FACT_UNIT - 1) / FACT_UNIT;
    int64_t *ulo = (int64_t *)malloc((size_t)(nunits > 0 ? nunits : 1) * 3 * sizeof(int64_t));
    if (!ulo) return ANONSET_ERR_NOMEM;
    int64_t u = 0;
    for (int k = 0; k < 65536; k++)
        for (int64_t r = start[k]; r < start[k + 1]; r += FACT_UNIT) {
            ulo[3 * u] = r;
            ulo[3 * u + 1] = r + FACT_UNIT < start[k + 1] ? r + FACT_UNIT : start[k + 1];
            ulo[3 * u + 2] = k;
            u++;
        }
    int st = ANONSET_OK;
#if ANONSET_X86_DISPATCH
    const int avx2 = anonset_cpu_avx2();
#else
    const int avx2 = 0;
#endif
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) \
        shared(fp, recs, ulo, nunits, Wps, max_set, d, st, avx2) if (nunits > 1)
#endif
    {
        int tid = 0;
#if ANONSET_HAVE_OPENMP
        tid = omp_get_thread_num();
#endif
        /* V aligned to 64 bytes (rows of 16 or 32 counters: whole vectors) */
        unsigned char *Vraw = (unsigned char *)malloc((size_t)(fp->R + FACT_MAXL) * sizeof(int16_t) + 64);
        int16_t *V = Vraw ? (int16_t *)(Vraw + (64 - ((uintptr_t)Vraw & 63u))) : NULL;
        /* a prefix never has more cells than min(max_set, R) */
        int64_t *off = (int64_t *)malloc((size_t)(max_set < fp->R ? max_set : fp->R) *
                                         sizeof(int64_t));
        const int ok = V && off;
        if (!ok) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            st = ANONSET_ERR_NOMEM;
        }
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t v = 0; v < nunits; v++) {
            if (!ok) continue;
            const int64_t lo = ulo[3 * v], hi = ulo[3 * v + 1];
            const uint32_t key = (uint32_t)ulo[3 * v + 2];
            int r;
#if ANONSET_X86_DISPATCH
            if (avx2)
                r = fact_units_avx2(fp, recs, lo, hi, key, V, Wps[tid], off, max_set, d);
            else
#endif
                r = fact_units(fp, recs, lo, hi, key, V, Wps[tid], off, max_set, d);
            (void)avx2;
            if (r != ANONSET_OK) {
#if ANONSET_HAVE_OPENMP
                #pragma omp atomic write
#endif
                st = r;
            }
        }
        free(Vraw);
        free(off);
    }
    free(ulo);
    return st;
}

#if defined(__GNUC__)
/* Factorized counting without the sort, where every pattern's V fits the
 * cache together (q' = 4, the other domains <= 32 values, d_L <= 16): rows
 * [lo, hi) in input order, each added into the V of its G pattern (slot[]);
 * a V is multiplied out into W' when it has counted FACT_UNIT rows, and at
 * the end.  The same integer sums as the sorted path. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fact_unsorted_body(const fact_plan *fp, const uint64_t *const *masks,
                                     int64_t lo, int64_t hi, const int16_t *slot,
                                     const uint32_t *pat, int npat, int16_t *Vall,
                                     int32_t *cnt, int32_t *Wp, int64_t max_set) {
    const int64_t R = fp->R, VR = fp->R + FACT_MAXL;
    const int G = fp->G, j0 = fp->rest[0], j1 = fp->rest[1], j2 = fp->rest[2];
    const int64_t s0 = fp->rstride[0], s1 = fp->rstride[1];
    int status = ANONSET_OK;
    for (int64_t t = 0; t < (int64_t)npat * VR; t++) Vall[t] = 0;
    for (int g = 0; g < npat; g++) cnt[g] = 0;
    for (int64_t i = lo; i <= hi; i++) {
        int g = -1;
        if (i < hi) {
            g = slot[masks[G][i] & 0xFFFFu];
            const uint64_t m0 = masks[j0][i], m1 = masks[j1][i], m2 = masks[j2][i];
            const int64_t c0 = anonset_popcount64(m0), c1 = anonset_popcount64(m1);
            if (c0 * c1 * anonset_popcount64(m2) * anonset_popcount64(pat[g]) > max_set) {
                status = ANONSET_ERR_SETSIZE;
                continue;
            }
            int16_t *V = Vall + (int64_t)g * VR;
            fact_add_row(fp, V, m0, m1, m2, s0, s1);
            if (++cnt[g] < FACT_UNIT) continue;
        }
        /* multiply out: one full V, or (after the last row) every V */
        for (int h = g >= 0 ? g : 0; h < (g >= 0 ? g + 1 : npat); h++) {
            if (!cnt[h]) continue;
            int16_t *V = Vall + (int64_t)h * VR;
            fact_multiply_out(pat[h], V, Wp, R);
            for (int64_t t = 0; t < R; t++) V[t] = 0;
            cnt[h] = 0;
        }
    }
    return status;
}

static int fact_unsorted(const fact_plan *fp, const uint64_t *const *masks, int64_t lo,
                         int64_t hi, const int16_t *slot, const uint32_t *pat, int npat,
                         int16_t *Vall, int32_t *cnt, int32_t *Wp, int64_t max_set) {
    return fact_unsorted_body(fp, masks, lo, hi, slot, pat, npat, Vall, cnt, Wp, max_set);
}

#if ANONSET_X86_DISPATCH
ANONSET_TARGET_AVX2
static int fact_unsorted_avx2(const fact_plan *fp, const uint64_t *const *masks, int64_t lo,
                              int64_t hi, const int16_t *slot, const uint32_t *pat, int npat,
                              int16_t *Vall, int32_t *cnt, int32_t *Wp, int64_t max_set) {
    return fact_unsorted_body(fp, masks, lo, hi, slot, pat, npat, Vall, cnt, Wp, max_set);
}
#endif

/* The unsorted pass over rows [c0, c0 + m), split among the threads. */
static int fact_unsorted_chunk(const fact_plan *fp, const uint64_t *const *masks, int64_t c0,
                               int64_t m, const int16_t *slot, const uint32_t *pat, int npat,
                               int32_t **Wps, int64_t max_set, int nt) {
    int st = ANONSET_OK;
#if ANONSET_X86_DISPATCH
    const int avx2 = anonset_cpu_avx2();
#else
    const int avx2 = 0;
#endif
    (void)avx2;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) \
        shared(fp, masks, c0, m, slot, pat, npat, Wps, max_set, st, avx2, nt) if (m >= 65536)
#endif
    {
        int tid = 0, nth = 1;
#if ANONSET_HAVE_OPENMP
        tid = omp_get_thread_num();
        nth = omp_get_num_threads();
#endif
        /* 64-byte aligned: a 32-byte row of V never straddles two cache
         * lines (a 16-byte-aligned V measured 10-20 % slower) */
        unsigned char *Vraw = (unsigned char *)malloc((size_t)npat * (size_t)(fp->R + FACT_MAXL) *
                                                      sizeof(int16_t) + 64);
        int16_t *Vall = Vraw ? (int16_t *)(Vraw + (64 - ((uintptr_t)Vraw & 63u))) : NULL;
        int32_t *cnt = (int32_t *)malloc((size_t)npat * sizeof(int32_t));
        int r = Vall && cnt ? ANONSET_OK : ANONSET_ERR_NOMEM;
        if (r == ANONSET_OK) {
            const int64_t lo = c0 + m * tid / nth, hi = c0 + m * (tid + 1) / nth;
#if ANONSET_X86_DISPATCH
            if (avx2)
                r = fact_unsorted_avx2(fp, masks, lo, hi, slot, pat, npat, Vall, cnt, Wps[tid], max_set);
            else
#endif
                r = fact_unsorted(fp, masks, lo, hi, slot, pat, npat, Vall, cnt, Wps[tid], max_set);
        }
        if (r != ANONSET_OK) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            st = r;
        }
        free(Vraw);
        free(cnt);
    }
    return st;
}
#endif

static int count_w_factorized(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                              int64_t max_set, int64_t ncells, int64_t *w, int n_threads,
                              int G, int L, const int16_t *slot, const uint32_t *pat,
                              int npat) {
    const int nt = anonset_threads(n_threads);
    const int64_t chunk = n < FACT_CHUNK ? n : FACT_CHUNK;
    fact_plan *fp = (fact_plan *)malloc(sizeof(fact_plan));
    int64_t *start = (int64_t *)malloc((size_t)65537 * sizeof(int64_t));
    int32_t **Wps = (int32_t **)calloc((size_t)nt, sizeof(int32_t *));
    unsigned char *recs = NULL;
    int status = fp && start && Wps ? ANONSET_OK : ANONSET_ERR_NOMEM;
    if (status == ANONSET_OK) {
        fact_plan_init(fp, q, d, ncells, G, L);
        recs = slot ? NULL : (unsigned char *)malloc((size_t)chunk * (size_t)fp->rec);
        if (!slot && !recs) status = ANONSET_ERR_NOMEM;
    }
    /* per-thread W' in 32 bits: a chunk has at most 2^22 rows */
    const int64_t dG = d[G], R = status == ANONSET_OK ? fp->R : 0;
    for (int t = 0; t < nt && status == ANONSET_OK; t++) {
        Wps[t] = (int32_t *)calloc((size_t)(dG * R), sizeof(int32_t));
        if (!Wps[t]) status = ANONSET_ERR_NOMEM;
    }
    /* where each cell of W' (G-major, then the rest in the plan's order, L
     * padded) lands in w (C order); -1 for padding */
    int64_t wstride[32], strideG = 0;
    {
        int64_t st = 1;
        for (int j = q - 1; j >= 0; j--) { wstride[j] = st; st *= d[j]; }
        strideG = wstride[G];
    }
    int64_t *wmap = status == ANONSET_OK ? (int64_t *)malloc((size_t)R * sizeof(int64_t)) : NULL;
    if (status == ANONSET_OK && !wmap) status = ANONSET_ERR_NOMEM;
    if (status == ANONSET_OK) {
        int32_t idx[32] = {0};
        const int last = fp->nrest - 1;
        for (int64_t r = 0; r < R; r++) {
            int64_t o = 0;
            for (int a = 0; a < fp->nrest; a++) o += idx[a] * wstride[fp->rest[a]];
            wmap[r] = idx[last] < d[fp->L] ? o : -1;
            for (int a = last; a >= 0; a--) {     /* odometer, last fastest */
                if (++idx[a] < (a == last ? fp->dLp : d[fp->rest[a]])) break;
                idx[a] = 0;
            }
        }
    }
    for (int64_t c0 = 0; c0 < n && status == ANONSET_OK; c0 += chunk) {
        const int64_t m = n - c0 < chunk ? n - c0 : chunk;
#if defined(__GNUC__)
        if (slot)
            status = fact_unsorted_chunk(fp, masks, c0, m, slot, pat, npat, Wps, max_set, nt);
        else
#endif
        {
            status = fact_sort(fp, masks, c0, m, start, recs);
            if (status == ANONSET_OK)
                status = fact_count_chunk(fp, start, recs, Wps, max_set, d, nt);
        }
        if (status != ANONSET_OK) break;
        /* w += sum over threads of W', in thread order (integer sums) */
#if ANONSET_HAVE_OPENMP
        #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
            shared(w, Wps, nt, strideG, dG, R, wmap) if (dG * R > 65536)
#endif
        for (int64_t c = 0; c < dG; c++) {
            for (int64_t r = 0; r < R; r++) {
                int64_t acc = 0;
                for (int t = 0; t < nt; t++) {
                    acc += Wps[t][c * R + r];
                    Wps[t][c * R + r] = 0;
                }
                if (wmap[r] >= 0) w[c * strideG + wmap[r]] += acc;
            }
        }
    }
    free(wmap);
    if (Wps)
        for (int t = 0; t < nt; t++) free(Wps[t]);
    free(Wps); free(recs); free(start); free(fp);
    return status;
}

int anonset_count_w(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                    int64_t max_set, int64_t ncells, int64_t *w, int n_threads) {
    return anonset_count_w_method(n, q, masks, d, max_set, ncells, w, n_threads, 0);
}

int anonset_count_w_method(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                           int64_t max_set, int64_t ncells, int64_t *w, int n_threads,
                           int method) {
    if (q < 1 || q > 32 || max_set < 1 || method < 0 || method > 2) return ANONSET_ERR_VALUE;
    int64_t s = 1;
    for (int j = q - 1; j >= 0; j--) {
        if (d[j] < 1) return ANONSET_ERR_VALUE;
        s *= d[j];
    }
    if (s != ncells) return ANONSET_ERR_VALUE;
    /* Factorized counting (see count_w_factorized) on the grouping attribute
     * G (at most 16 values) and vector attribute L that minimize the
     * estimated operations, n x prod_{j != G, L} |S_j| x ceil(d_L / 16)
     * vector adds plus patterns(G) x |S_G| x R / 16 for the multiply-out
     * (mean set sizes from 1,024 sampled rows, patterns counted exactly),
     * when that is below a quarter of the direct count's
     * n x prod_j |S_j| increments. */
    if (method == 1) return count_w_direct(n, q, masks, d, max_set, ncells, w, n_threads);
    if (q >= 2 && (n >= 4096 || method == 2) && n > 0) {
        double mean[32], prod = 1.0;
        const int64_t step = n / 1024 > 0 ? n / 1024 : 1;
        for (int j = 0; j < q; j++) {
            const int wj = (d[j] + 63) >> 6;
            int64_t tot = 0, cnt = 0;
            for (int64_t i = 0; i < n; i += step, cnt++)
                for (int x = 0; x < wj; x++) tot += anonset_popcount64(masks[j][i * wj + x]);
            mean[j] = (double)tot / (double)cnt;
            prod *= mean[j];
        }
        /* seen: the patterns of the G at hand; best_seen: of the best G so far */
        uint8_t *seen = (uint8_t *)malloc((size_t)2 * 65536);
        if (!seen) return ANONSET_ERR_NOMEM;
        uint8_t *best_seen = seen + 65536;
        int bestG = -1, bestL = -1, bestU = 0;
        double bestc = 0.0, bestr = 0.0;
        for (int G = 0; G < q; G++) {
            if (d[G] > 16 || mean[G] <= 0.0) continue;
            memset(seen, 0, (size_t)65536);
            /* stores only (a load of the flag would wait on the previous
             * row's store to it), then one count */
            for (int64_t i = 0; i < n; i++) seen[masks[G][i] & 0xFFFFu] = 1;
            int64_t patterns = 0;
            for (int k = 0; k < 65536; k++) patterns += seen[k];
            const double R = (double)(ncells / d[G]);
            int narrow = 1;                 /* the others' sets in one word of <= 32 bits */
            for (int j = 0; j < q; j++) narrow &= j == G || d[j] <= 32;
            for (int L = 0; L < q; L++) {
                if (L == G) continue;
                const double lanes = d[L] <= 16 ? 1.0 : (d[L] <= 32 ? 2.0 : mean[L]);
                const double rest = mean[L] > 0.0 ? prod / (mean[G] * mean[L]) : 0.0;
                const double c = (double)n * rest * lanes + (double)patterns * mean[G] * R / 16.0;
                /* the counting sort costs about FACT_SORT_ADDS vector adds a
                 * row; it is skipped where every pattern's V (16-bit
                 * counters) fits FACT_UNSORTED_BYTES together */
                int unsorted = 0;
#if defined(__GNUC__)
                unsorted = q == 4 && narrow && d[L] <= 16 && patterns <= 32767 &&
                           (double)patterns * (R / d[L] * 16.0 + FACT_MAXL) * 2.0 <=
                               (double)FACT_UNSORTED_BYTES;
#endif
                const double r = c + (unsorted ? 0.0 : FACT_SORT_ADDS * (double)n);
                if (bestG < 0 || r < bestr) {
                    bestr = r; bestc = c; bestG = G; bestL = L; bestU = unsorted;
                }
            }
            if (bestG == G) memcpy(best_seen, seen, (size_t)65536);
        }
        if (bestG >= 0 && (method == 2 || bestc < 0.25 * (double)n * prod)) {
            int16_t *slot = NULL;
            uint32_t *pat = NULL;
            int npat = 0;
            if (bestU) {
                /* the patterns of G and their slots */
                slot = (int16_t *)malloc((size_t)65536 * sizeof(int16_t));
                pat = (uint32_t *)malloc((size_t)32768 * sizeof(uint32_t));
                if (!slot || !pat) { free(slot); free(pat); free(seen); return ANONSET_ERR_NOMEM; }
                for (int k = 0; k < 65536; k++) {
                    slot[k] = best_seen[k] ? (int16_t)npat : (int16_t)-1;
                    if (best_seen[k]) pat[npat++] = (uint32_t)k;
                }
            }
            free(seen);
            const int status = count_w_factorized(n, q, masks, d, max_set, ncells, w, n_threads, bestG,
                                        bestL, slot, pat, npat);
            free(slot);
            free(pat);
            return status;
        }
        free(seen);
    }
    return count_w_direct(n, q, masks, d, max_set, ncells, w, n_threads);
}

int anonset_members(int64_t n, int32_t d, const uint64_t *mask, int32_t k,
                    int32_t *members, int n_threads) {
    int words = (d + 63) >> 6;
    int bad = 0;
    int nt = anonset_threads(n_threads);
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
        shared(n, mask, k, members, words) reduction(|:bad)
#endif
    for (int64_t i = 0; i < n; i++) {
        int t = 0;
        for (int w = 0; w < words; w++) {
            uint64_t bits = mask[i * words + w];
            while (bits) {
                int b = anonset_ctz64(bits);
                bits &= bits - 1;
                if (t < k) members[i * k + t] = w * 64 + b;
                t++;
            }
        }
        if (t != k) bad = 1;
    }
    return bad ? ANONSET_ERR_SETSIZE : ANONSET_OK;
}
