/* The exact-likelihood EM's E-step (see exact.h): by subset expansion
 * (anonset_exact_estep) and by prefix-trie contraction (anonset_exact_trie). */
#include "exact.h"
#include "fastlog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Offsets (C order over the attributes in subset s) of the cells in the
 * product of pattern u's member lists. */
static int64_t subset_offsets(int64_t u, int q, const int32_t *dims, int32_t s,
                              const int32_t *const *members, const int32_t *k,
                              int64_t *off) {
    int64_t len = 1, stride = 1;
    off[0] = 0;
    for (int j = q - 1; j >= 0; j--) {
        if (!((s >> j) & 1)) continue;
        const int32_t *mem = members[j] + u * k[j];
        int64_t newlen = len * k[j];
        /* back to front, as in counts.c, so the expansion can be in place */
        for (int t = k[j] - 1; t >= 0; t--) {
            int64_t add = (int64_t)mem[t] * stride;
            int64_t pos = (int64_t)t * len;
            for (int64_t e = 0; e < len; e++) off[pos + e] = off[e] + add;
        }
        len = newlen;
        stride *= dims[j];
    }
    return len;
}

int anonset_exact_estep(int64_t U, int q, const int32_t *dims,
                        const int32_t *const *members, const int32_t *k,
                        const double *weight, int nsub, const int32_t *sub,
                        const double *coef, const double *const *marg,
                        const int64_t *msize, double *const *acc, double *loglik,
                        int nchunk, int n_threads) {
    if (nchunk < 1 || nsub < 1 || q < 1 || q > 30) return ANONSET_ERR_VALUE;
    int64_t total = 0, offcap = 0;
    int64_t *start = (int64_t *)malloc((size_t)nsub * sizeof(int64_t));
    int64_t *ostart = (int64_t *)malloc((size_t)nsub * sizeof(int64_t));
    if (!start || !ostart) { free(start); free(ostart); return ANONSET_ERR_NOMEM; }
    for (int s = 0; s < nsub; s++) {
        start[s] = total;
        total += msize[s];
        int64_t len = 1;
        for (int j = 0; j < q; j++) if ((sub[s] >> j) & 1) len *= k[j];
        ostart[s] = offcap;
        offcap += len;
    }
    double *part = (double *)calloc((size_t)nchunk * (size_t)total, sizeof(double));
    double *ll = (double *)calloc((size_t)nchunk, sizeof(double));
    if (!part || !ll) {
        free(part); free(ll); free(start); free(ostart);
        return ANONSET_ERR_NOMEM;
    }
    int status = ANONSET_OK;
    int nt = anonset_threads(n_threads);
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1) default(none) \
        shared(U, q, dims, members, k, weight, nsub, sub, coef, marg, part, ll, \
               start, ostart, offcap, total, nchunk, status)
#endif
    for (int c = 0; c < nchunk; c++) {
        int64_t lo = U * c / nchunk, hi = U * (c + 1) / nchunk;
        int64_t *off = (int64_t *)malloc((size_t)offcap * sizeof(int64_t));
        if (!off) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            status = ANONSET_ERR_NOMEM;
            continue;
        }
        double *mine = part + (int64_t)c * total;
        double llc = 0.0;
        for (int64_t u = lo; u < hi; u++) {
            double z = 0.0;
            for (int s = 0; s < nsub; s++) {
                int64_t *o = off + ostart[s];
                int64_t len = subset_offsets(u, q, dims, sub[s], members, k, o);
                const double *mg = marg[s];
                double t = 0.0;
                for (int64_t e = 0; e < len; e++) t += mg[o[e]];
                z += coef[s] * t;
            }
            if (!(z > 0.0)) continue;  /* impossible pattern under pi: no mass */
            llc += weight[u] * log(z);
            for (int s = 0; s < nsub; s++) {
                const int64_t *o = off + ostart[s];
                int64_t len = 1;
                for (int j = 0; j < q; j++) if ((sub[s] >> j) & 1) len *= k[j];
                double val = weight[u] * coef[s] / z;
                double *dst = mine + start[s];
                for (int64_t e = 0; e < len; e++) dst[o[e]] += val;
            }
        }
        ll[c] = llc;
        free(off);
    }
    if (status == ANONSET_OK) {
#if ANONSET_HAVE_OPENMP
        #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
            shared(part, total, nchunk, nsub, start, msize, acc)
#endif
        for (int64_t m = 0; m < total; m++) {
            double sacc = 0.0;
            for (int c = 0; c < nchunk; c++) sacc += part[(int64_t)c * total + m];
            /* find the subset this cell belongs to */
            int s = 0;
            while (s + 1 < nsub && start[s + 1] <= m) s++;
            acc[s][m - start[s]] = sacc;
        }
        double l = 0.0;
        for (int c = 0; c < nchunk; c++) l += ll[c];
        *loglik = l;
    }
    free(part); free(ll); free(start); free(ostart);
    return status;
}

/* ---------------------------------------------------------------- the trie */
typedef struct {
    int q;
    const int32_t *dims;
    const uint64_t *const *masks;
    const int32_t *const *members;  /* per depth: U x k[t] ascending, or NULL */
    const int32_t *k;
    const int *words;
    const double *u, *weight;
    const int64_t *R;           /* R[t] = prod_{j > t} d_j */
    int simd;                   /* ANONSET_SIMD_* for the leaves' terms */
} trie_ctx;

/* Per-thread scratch: for each depth t, the children's tensors C[t] and
 * their adjoints A[t] (R[t] each), the node's axis sum S[t] and the sum of its
 * children's adjoints H[t] (R[t] each). */
typedef struct {
    double *C[32], *A[32], *S[32], *H[32];
} trie_scratch;

static int same_set(const trie_ctx *c, int t, int64_t i, int64_t j) {
    if (c->members && c->members[t]) {
        const int kt = c->k[t];
        const int32_t *a = c->members[t] + i * kt, *b = c->members[t] + j * kt;
        for (int e = 0; e < kt; e++)
            if (a[e] != b[e]) return 0;
        return 1;
    }
    const int wt = c->words[t];
    const uint64_t *m = c->masks[t];
    for (int x = 0; x < wt; x++)
        if (m[i * wt + x] != m[j * wt + x]) return 0;
    return 1;
}

/* The end of the run of tuples in [i, hi) whose set t equals tuple i's (the
 * run is contiguous: the tuples are sorted): galloping, then bisection, so a
 * node's groups cost O(log) comparisons each rather than one per tuple. */
static int64_t group_end(const trie_ctx *c, int t, int64_t i, int64_t hi) {
    int64_t step = 1, in = i;           /* same_set(i, in) holds */
    while (in + step < hi && same_set(c, t, i, in + step)) {
        in += step;
        step *= 2;
    }
    int64_t out = in + step < hi ? in + step : hi;   /* out == hi or differs */
    while (out - in > 1) {
        const int64_t mid = in + (out - in) / 2;
        if (same_set(c, t, i, mid)) in = mid; else out = mid;
    }
    return out;
}

/* child = u_t S + (1 - u_t) sum_{alpha in S_t(i)} T[alpha, :] */
static void child_of(const trie_ctx *c, int t, int64_t i, const double *T, const double *S,
                     double *child) {
    const int64_t R = c->R[t];
    const double ut = c->u[t], vt = 1.0 - c->u[t];
    for (int64_t r = 0; r < R; r++) child[r] = 0.0;
    if (c->members && c->members[t]) {
        const int kt = c->k[t];
        const int32_t *mem = c->members[t] + i * kt;
        for (int e = 0; e < kt; e++) {
            const double *row = T + (int64_t)mem[e] * R;
            for (int64_t r = 0; r < R; r++) child[r] += row[r];
        }
    } else {
        const int wt = c->words[t];
        const uint64_t *m = c->masks[t] + i * wt;
        for (int x = 0; x < wt; x++)
            for (uint64_t bits = m[x]; bits; bits &= bits - 1) {
                const double *row = T + (int64_t)(x * 64 + anonset_ctz64(bits)) * R;
                for (int64_t r = 0; r < R; r++) child[r] += row[r];
            }
    }
    for (int64_t r = 0; r < R; r++) child[r] = ut * S[r] + vt * child[r];
}

/* Whether set i of depth t is below set j in the tuples' byte order (the
 * order _unique_rows sorts by): the first differing byte decides. */
static inline int set_below(const trie_ctx *c, int t, int64_t i, int64_t j) {
#if !(defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
      __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
    if (c->members && c->members[t]) {
        /* The same order from the members (little-endian words: value v is
         * bit v & 7 of byte v >> 3).  The first differing byte is the byte of
         * the smallest value in one set only; of two bytes, the larger is the
         * one holding the highest bit in which they differ. */
        const int kt = c->k[t];
        const int32_t *a = c->members[t] + i * kt, *b = c->members[t] + j * kt;
        int x = 0, y = 0;
        while (x < kt && y < kt && a[x] == b[y]) { x++; y++; }
        if (x == kt && y == kt) return 0;                  /* the same set */
        const int32_t v = y == kt || (x < kt && a[x] < b[y]) ? a[x] : b[y];
        const int32_t byte = v >> 3;
        unsigned ba = 0, bb = 0;
        for (; x < kt && (a[x] >> 3) == byte; x++) ba |= 1u << (a[x] & 7);
        for (; y < kt && (b[y] >> 3) == byte; y++) bb |= 1u << (b[y] & 7);
        const unsigned diff = ba ^ bb;                     /* nonzero: v is in one */
        int h = 7;
        while (!((diff >> h) & 1u)) h--;
        return (int)((bb >> h) & 1u);
    }
#endif
    const int wt = c->words[t];
    const uint64_t *a = c->masks[t] + i * wt, *b = c->masks[t] + j * wt;
    if (wt == 1) return anonset_byte_order64(a[0]) < anonset_byte_order64(b[0]);
    return memcmp(a, b, (size_t)wt * sizeof(uint64_t)) < 0;
}

/* Whether the tuples are strictly increasing in their bytes (attribute 0
 * first): one pass over adjacent pairs.  The trie's own checks compare the
 * first tuple of each group only, and a group's end is found by galloping,
 * which steps over a tuple out of order inside a run of equal sets. */
static int tuples_sorted(const trie_ctx *c, int64_t U) {
    for (int64_t s = 1; s < U; s++) {
        int t = 0;
        while (t < c->q && same_set(c, t, s - 1, s)) t++;
        if (t == c->q || !set_below(c, t, s - 1, s)) return 0;
    }
    return 1;
}

/* The leaves' log-likelihood terms w log Z and adjoints w / Z; Z = 0 is
 * impossible under pi and carries no mass (its weight is taken as 0).
 * Selects, no branch: the loop vectorizes where 64-bit integer compares are
 * vector instructions (the AVX2 version; its products and sums are rounded as
 * the portable one's, no fused multiply-add, so both give the same bits). */
static inline void leaf_terms_body(const double *restrict Z, const double *restrict wb,
                                   double *restrict lg, double *restrict adj, int n) {
    /* the selects on the bits (built with -fno-strict-aliasing): GCC does
     * not if-convert a select on a double compare, which may trap */
    const uint64_t *zb = (const uint64_t *)Z, *wbits = (const uint64_t *)wb;
    for (int k = 0; k < n; k++) {
        const int64_t zi = (int64_t)zb[k];
        /* Z > 0 and not NaN: 0 < bits <= the bits of +inf */
        const uint64_t keep = (uint64_t)0 - (uint64_t)((zi > 0) & (zi <= 0x7FF0000000000000ll));
        union { uint64_t u; double d; } w, zd;
        w.u = wbits[k] & keep;                                  /* w, or 0 */
        zd.u = (zb[k] & keep) | (0x3FF0000000000000ull & ~keep);  /* Z, or 1 */
        lg[k] = w.d * anonset_log_bits(zb[k]);
        adj[k] = w.d / zd.d;
    }
}

static void leaf_terms(const double *restrict Z, const double *restrict wb,
                       double *restrict lg, double *restrict adj, int n) {
    leaf_terms_body(Z, wb, lg, adj, n);
}

#if ANONSET_X86_DISPATCH
__attribute__((target("avx2")))
static void leaf_terms_avx2(const double *restrict Z, const double *restrict wb,
                            double *restrict lg, double *restrict adj, int n) {
    leaf_terms_body(Z, wb, lg, adj, n);
}
#endif

#define LEAF_BLOCK 256

/* The last depth (t = q - 1, one cell per child): tuples [lo, hi) below a
 * node whose tensor T has d_t cells.  child_of and its adjoint with one cell
 * per child, in blocks: the children's values Z first, then their
 * log terms and adjoints (loops that vectorize: the log is fastlog.h's), then
 * the sums and the scatter of the adjoints into Gt.  Returns nonzero if the
 * sets are not strictly increasing (unsorted or a repeated tuple). */
static int trie_leaves(const trie_ctx *c, int t, const double *T, const double *S,
                       int64_t lo, int64_t hi, double *Gt, double *H, double *ll) {
    const double ut = c->u[t], vt = 1.0 - c->u[t], uS = ut * S[0];
    const int wt = c->words[t];
    const uint64_t *masks = c->masks[t];
    const int32_t *members = c->members ? c->members[t] : NULL;
    const int kt = members ? c->k[t] : 0;
    const double *weight = c->weight;
    double Z[LEAF_BLOCK], lg[LEAF_BLOCK], adj[LEAF_BLOCK];
    double l = *ll, h = H[0];
    for (int64_t i0 = lo; i0 < hi; i0 += LEAF_BLOCK) {
        const int n = (int)(hi - i0 < LEAF_BLOCK ? hi - i0 : LEAF_BLOCK);
        for (int k = 0; k < n; k++) {
            double z = 0.0;
            if (members) {
                const int32_t *mem = members + (i0 + k) * kt;
                for (int e = 0; e < kt; e++) z += T[mem[e]];
            } else {
                const uint64_t *m = masks + (i0 + k) * wt;
                for (int x = 0; x < wt; x++)
                    for (uint64_t bits = m[x]; bits; bits &= bits - 1)
                        z += T[x * 64 + anonset_ctz64(bits)];
            }
            Z[k] = uS + vt * z;
        }
#if ANONSET_X86_DISPATCH
        if (c->simd >= ANONSET_SIMD_AVX2) leaf_terms_avx2(Z, weight + i0, lg, adj, n);
        else
#endif
            leaf_terms(Z, weight + i0, lg, adj, n);
        for (int k = 0; k < n; k++) {
            const int64_t i = i0 + k;
            if (i + 1 < hi && !set_below(c, t, i, i + 1)) return 1;
            l += lg[k];
            h += adj[k];
            const double va = vt * adj[k];
            if (members) {
                const int32_t *mem = members + i * kt;
                for (int e = 0; e < kt; e++) Gt[mem[e]] += va;
            } else {
                const uint64_t *m = masks + i * wt;
                for (int x = 0; x < wt; x++)
                    for (uint64_t bits = m[x]; bits; bits &= bits - 1)
                        Gt[x * 64 + anonset_ctz64(bits)] += va;
            }
        }
    }
    *ll = l;
    H[0] = h;
    return 0;
}

/* Tuples [lo, hi) below a node at depth t (they share the sets of attributes
 * 0..t-1), whose tensor T has d_t x R[t] cells: adds the node's adjoint into
 * Gt (d_t x R[t]) and the log-likelihood terms into *ll.  At the root the
 * u_t part of the adjoint (the same for every row) is left in H for the
 * caller.  Returns nonzero if tuples are not sorted or repeat. */
static int trie_node(const trie_ctx *c, trie_scratch *sc, int t, const double *T,
                     const double *S, int64_t lo, int64_t hi, double *Gt, double *H,
                     double *ll) {
    if (t == c->q - 1) return trie_leaves(c, t, T, S, lo, hi, Gt, H, ll);
    const int64_t R = c->R[t];
    const double vt = 1.0 - c->u[t];
    double *child = sc->C[t], *adj = sc->A[t];
    for (int64_t i = lo; i < hi;) {
        const int64_t g = group_end(c, t, i, hi);
        child_of(c, t, i, T, S, child);
        {
            /* the child is a node at depth t + 1: its axis sum, then recurse */
            const int64_t R1 = c->R[t + 1], d1 = c->dims[t + 1];
            double *S1 = sc->S[t + 1], *H1 = sc->H[t + 1];
            for (int64_t r = 0; r < R1; r++) { S1[r] = 0.0; H1[r] = 0.0; }
            for (int64_t a = 0; a < d1; a++)
                for (int64_t r = 0; r < R1; r++) S1[r] += child[a * R1 + r];
            for (int64_t r = 0; r < R; r++) adj[r] = 0.0;
            if (trie_node(c, sc, t + 1, child, S1, i, g, adj, H1, ll)) return 1;
            const double u1 = c->u[t + 1];
            for (int64_t a = 0; a < d1; a++)
                for (int64_t r = 0; r < R1; r++) adj[a * R1 + r] += u1 * H1[r];
        }
        /* adjoint of child_of: u_t part into H (every row), set rows here */
        for (int64_t r = 0; r < R; r++) H[r] += adj[r];
        if (c->members && c->members[t]) {
            const int kt = c->k[t];
            const int32_t *mem = c->members[t] + i * kt;
            for (int e = 0; e < kt; e++) {
                double *row = Gt + (int64_t)mem[e] * R;
                for (int64_t r = 0; r < R; r++) row[r] += vt * adj[r];
            }
        } else {
            const int wt = c->words[t];
            const uint64_t *m = c->masks[t] + i * wt;
            for (int x = 0; x < wt; x++)
                for (uint64_t bits = m[x]; bits; bits &= bits - 1) {
                    double *row = Gt + (int64_t)(x * 64 + anonset_ctz64(bits)) * R;
                    for (int64_t r = 0; r < R; r++) row[r] += vt * adj[r];
                }
        }
        /* sorted by their bytes: the next set compares larger */
        if (g < hi && !set_below(c, t, i, g)) return 1;
        i = g;
    }
    return 0;
}

int anonset_exact_trie(int64_t U, int q, const int32_t *dims, const uint64_t *const *masks,
                       const int32_t *const *members, const int32_t *k,
                       const double *u, const double *weight, const double *pi, double *G,
                       double *loglik, int nchunk, int check_order, int n_threads) {
    if (q < 1 || q > 30 || U < 0 || nchunk < 1) return ANONSET_ERR_VALUE;
    int64_t R[32];
    int words[32];
    R[q - 1] = 1;
    for (int t = q - 2; t >= 0; t--) R[t] = R[t + 1] * dims[t + 1];
    for (int t = 0; t < q; t++) words[t] = (dims[t] + 63) >> 6;
    const int64_t ncells = R[0] * dims[0];
    if (members)
        for (int t = 0; t < q; t++)
            if (members[t] && (!k || k[t] < 0)) return ANONSET_ERR_VALUE;
    trie_ctx c = {q, dims, masks, members, k, words, u, weight, R, ANONSET_SIMD_GENERIC};
#if ANONSET_X86_DISPATCH
    if (anonset_cpu_avx2()) c.simd = ANONSET_SIMD_AVX2;
#endif
    /* chunk boundaries at top-level groups: chunk k starts at the first group
     * starting at or after U k / nchunk */
    int64_t *cb = (int64_t *)malloc((size_t)(nchunk + 1) * sizeof(int64_t));
    double *part = (double *)calloc((size_t)nchunk * (size_t)ncells, sizeof(double));
    double *hpart = (double *)calloc((size_t)nchunk * (size_t)R[0], sizeof(double));
    double *llp = (double *)calloc((size_t)nchunk, sizeof(double));
    double *S0 = (double *)calloc((size_t)R[0], sizeof(double));
    int status = cb && part && hpart && llp && S0 ? ANONSET_OK : ANONSET_ERR_NOMEM;
    if (status == ANONSET_OK && check_order && !tuples_sorted(&c, U)) status = ANONSET_ERR_VALUE;
    if (status == ANONSET_OK) {
        /* one pass over the top-level group starts */
        int k = 0;
        cb[k++] = 0;
        int64_t next = U / nchunk;      /* U k / nchunk */
        for (int64_t s = 1; s < U && k < nchunk; s++)
            if (s >= next && !same_set(&c, 0, s - 1, s)) {
                cb[k++] = s;
                next = U * k / nchunk;
            }
        while (k <= nchunk) cb[k++] = U;
        for (int64_t a = 0; a < dims[0]; a++)
            for (int64_t r = 0; r < R[0]; r++) S0[r] += pi[a * R[0] + r];
    }
    const int nt = anonset_threads(n_threads);
    (void)nt;
    if (status == ANONSET_OK) {
#if ANONSET_HAVE_OPENMP
        #pragma omp parallel num_threads(nt) default(none) \
            shared(c, cb, part, hpart, llp, S0, pi, nchunk, ncells, R, q, status) if (nchunk > 1)
#endif
        {
            trie_scratch sc;
            int64_t tot = 0;
            for (int t = 0; t < q; t++) tot += 4 * R[t];
            double *buf = (double *)malloc((size_t)tot * sizeof(double));
            if (buf) {
                double *p = buf;
                for (int t = 0; t < q; t++) {
                    sc.C[t] = p; p += R[t];
                    sc.A[t] = p; p += R[t];
                    sc.S[t] = p; p += R[t];
                    sc.H[t] = p; p += R[t];
                }
            } else {
#if ANONSET_HAVE_OPENMP
                #pragma omp atomic write
#endif
                status = ANONSET_ERR_NOMEM;
            }
#if ANONSET_HAVE_OPENMP
            #pragma omp for schedule(dynamic, 1)
#endif
            for (int k = 0; k < nchunk; k++) {
                if (!buf || cb[k] >= cb[k + 1]) continue;
                double ll = 0.0;
                if (trie_node(&c, &sc, 0, pi, S0, cb[k], cb[k + 1],
                              part + (int64_t)k * ncells, hpart + (int64_t)k * R[0], &ll)) {
#if ANONSET_HAVE_OPENMP
                    #pragma omp atomic write
#endif
                    status = ANONSET_ERR_VALUE;
                }
                llp[k] = ll;
            }
            free(buf);
        }
    }
    if (status == ANONSET_OK) {
        /* G = sum over chunks, in chunk order, of the set rows plus u_0 H */
        const double u0 = u[0];
        for (int64_t i = 0; i < ncells; i++) G[i] = 0.0;
        double ll = 0.0;
        for (int k = 0; k < nchunk; k++) {
            const double *pk = part + (int64_t)k * ncells, *hk = hpart + (int64_t)k * R[0];
            for (int64_t a = 0; a < dims[0]; a++)
                for (int64_t r = 0; r < R[0]; r++) G[a * R[0] + r] += pk[a * R[0] + r] + u0 * hk[r];
            ll += llp[k];
        }
        *loglik = ll;
    }
    free(cb); free(part); free(hpart); free(llp); free(S0);
    return status;
}
