#include "em.h"
#include "fastlog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Mode products.  For attribute j the table is viewed as (P, d_j, Q), P and
 * Q the products of the sizes before and after j, and
 *   out[p, k, q] = sum_m M'[k, m] in[p, m, q]      (M' = M or M^T),
 * or with the a/b structure of eq. 21
 *   out[p, k, q] = b sum_m in[p, m, q] + (a - b) in[p, k, q].
 * Every read and write is contiguous along q, so the loops vectorize; for
 * the last attribute (Q = 1) they run along k.  The work is cut into units
 * of about UNIT cells that depend only on the shape (p ranges, and q blocks
 * where Q is long), so the result and the order of every sum do not depend
 * on the number of threads.
 *
 * The last product of an EM half-iteration is fused with its use:
 * POST_RATIO writes w / y (0 where y = 0: the ratio of eq. 26) and sums the
 * log-likelihood terms w log y; POST_UPDATE multiplies x by the product in
 * place and records the largest and the summed absolute change.  Sums are
 * kept per unit and added in unit order. */
#define UNIT 512
#define QBLOCK 256

/* Tables of fewer cells run on one thread: below it the barriers of the 2q
 * products per iteration cost more than the second thread saves (measured
 * in bench/compare_perf.py: "EM threads"). */
#define PAR_MIN (1 << 15)

int anonset_em_threads(int64_t ncells, int n_threads) {
    int nt = anonset_threads(n_threads);
#if ANONSET_HAVE_OPENMP
    /* never more threads than processors this process may run on */
    const int procs = omp_get_num_procs();
    if (nt > procs) nt = procs;
#endif
    return ncells < PAR_MIN ? 1 : (nt > 0 ? nt : 1);
}

static int em_simd_level(void) {
#if ANONSET_X86_DISPATCH
    if (anonset_cpu_avx2()) return ANONSET_SIMD_AVX2;
#endif
    return ANONSET_SIMD_GENERIC;
}


enum { POST_NONE = 0, POST_RATIO = 1, POST_UPDATE = 2 };

/* log(v) with v given by its bits: csrc/common/fastlog.h */
#define em_log_bits anonset_log_bits

static inline double em_log(double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return em_log_bits(bits);
}

double anonset_em_log(double v) { return em_log(v); }

/* Partial results of one unit of a fused last product. */
typedef struct {
    double ll;          /* sum of w log y over w > 0 */
    double sy;          /* sum of y */
    double moved;       /* sum |x' - x| */
    double mx;          /* max |x' - x| */
} unit_sums;

typedef struct {
    int64_t P, Q, dj;
    int64_t qb, nqb, pb;    /* q block length and count; p per unit where Q is short */
    int64_t units;
} axis_shape;

static axis_shape axis_of(int q, const int32_t *dims, int j) {
    axis_shape a;
    a.P = 1; a.Q = 1;
    for (int i = 0; i < j; i++) a.P *= dims[i];
    for (int i = j + 1; i < q; i++) a.Q *= dims[i];
    a.dj = dims[j];
    if (a.Q >= 16) {
        a.qb = a.Q < QBLOCK ? a.Q : QBLOCK;
        a.nqb = (a.Q + a.qb - 1) / a.qb;
        a.pb = 1;
        a.units = a.P * a.nqb;
    } else {
        a.qb = a.Q;
        a.nqb = 1;
        a.pb = UNIT / (a.dj * a.Q) > 0 ? UNIT / (a.dj * a.Q) : 1;
        a.units = (a.P + a.pb - 1) / a.pb;
    }
    return a;
}

/* Sums over a unit are kept in LANES partial sums (element i of a run goes
 * to lane i mod LANES) and added in lane order at the end: a fixed order
 * (the same bits for every thread count and SIMD level) that still lets the
 * compiler vectorize the loops.  l4[0]: log-likelihood, [1]: sum y,
 * [2]: sum |change|, [3]: max |change|. */
#define LANES 4

static inline void post_ratio(const double *restrict wk, const double *restrict val,
                              double *restrict out, int64_t len, double (*l4)[LANES]) {
    for (int64_t t = 0; t < len; t++) out[t] = val[t] > 0.0 ? wk[t] / val[t] : 0.0;
    if (!l4) return;
    /* y > 0 wherever w > 0 unless x is 0 there: such a term is taken at the
     * smallest normal y (see em_log).  The terms first (a loop the compiler
     * vectorizes, len <= QBLOCK), then the lane sums. */
    double lg[QBLOCK];
    /* w log y for every t, without a branch (so the loop vectorizes): where
     * w = 0 the product is 0 * (a finite log) = -0 or 0, which adds nothing */
    const uint64_t *vbits = (const uint64_t *)val;    /* built with -fno-strict-aliasing */
    for (int64_t t = 0; t < len; t++) lg[t] = wk[t] * em_log_bits(vbits[t]);
    int64_t t = 0;
    for (; t + LANES <= len; t += LANES)
        for (int e = 0; e < LANES; e++) {
            l4[1][e] += val[t + e];
            l4[0][e] += lg[t + e];
        }
    for (int e = 0; t < len; t++, e++) {
        l4[1][e] += val[t];
        l4[0][e] += lg[t];
    }
}

static inline void post_update(double *restrict xk, const double *restrict val, int64_t len,
                               double (*l4)[LANES]) {
    int64_t t = 0;
    for (; t + LANES <= len; t += LANES)
        for (int e = 0; e < LANES; e++) {
            const double nx = xk[t + e] * val[t + e];
            const double dlt = fabs(nx - xk[t + e]);
            l4[2][e] += dlt;
            l4[3][e] = dlt > l4[3][e] ? dlt : l4[3][e];
            xk[t + e] = nx;
        }
    for (int e = 0; t < len; t++, e++) {
        const double nx = xk[t] * val[t];
        const double dlt = fabs(nx - xk[t]);
        l4[2][e] += dlt;
        l4[3][e] = dlt > l4[3][e] ? dlt : l4[3][e];
        xk[t] = nx;
    }
}

static inline void lanes_close(double (*l4)[LANES], unit_sums *sum) {
    sum->ll = sum->sy = sum->moved = sum->mx = 0.0;
    for (int e = 0; e < LANES; e++) {
        sum->ll += l4[0][e];
        sum->sy += l4[1][e];
        sum->moved += l4[2][e];
        sum->mx = l4[3][e] > sum->mx ? l4[3][e] : sum->mx;
    }
}

/* One unit of one mode product (see above). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void axis_unit_body(const axis_shape *sh, int64_t u, const double *mat, double a,
                                  double b, int transpose, const double *restrict in,
                                  double *restrict out, int post, const double *restrict w,
                                  double *restrict x, unit_sums *sum) {
    const int64_t dj = sh->dj, Q = sh->Q;
    int64_t p0, p1, q0, q1;
    if (sh->nqb > 1 || sh->pb == 1) {
        p0 = u / sh->nqb; p1 = p0 + 1;
        q0 = (u % sh->nqb) * sh->qb;
        q1 = q0 + sh->qb < Q ? q0 + sh->qb : Q;
    } else {
        p0 = u * sh->pb;
        p1 = p0 + sh->pb < sh->P ? p0 + sh->pb : sh->P;
        q0 = 0; q1 = Q;
    }
    const int64_t len = q1 - q0;
    const double c = a - b;
    double acc[QBLOCK], val[QBLOCK];
    double l4[4][LANES] = {{0.0}};
    if (Q == 1) {
        /* the last attribute: each p is a row of d_j contiguous cells, taken
         * in runs of at most QBLOCK (the size of val) */
        for (int64_t p = p0; p < p1; p++) {
            const double *ip = in + p * dj;
            double *op = out + p * dj;
            double sm = 0.0;
            if (mat == NULL) {
                for (int64_t m = 0; m < dj; m++) sm += ip[m];
                sm *= b;
            }
            for (int64_t k0 = 0; k0 < dj; k0 += QBLOCK) {
                const int64_t kl = dj - k0 < QBLOCK ? dj - k0 : QBLOCK;
                double *vk = post == POST_NONE ? op + k0 : val;   /* the product, in place */
                if (mat == NULL) {
                    for (int64_t k = 0; k < kl; k++) vk[k] = sm + c * ip[k0 + k];
                } else {
                    for (int64_t k = 0; k < kl; k++) {
                        double v = 0.0;
                        for (int64_t m = 0; m < dj; m++)
                            v += (transpose ? mat[m * dj + k0 + k] : mat[(k0 + k) * dj + m]) * ip[m];
                        vk[k] = v;
                    }
                }
                if (post == POST_RATIO)
                    post_ratio(w + p * dj + k0, val, op + k0, kl, sum ? l4 : NULL);
                else if (post == POST_UPDATE)
                    post_update(x + p * dj + k0, val, kl, l4);
            }
        }
        if (sum) lanes_close(l4, sum);
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        const double *ip = in + p * dj * Q + q0;
        double *op = out + p * dj * Q + q0;
        if (mat == NULL) {
            for (int64_t t = 0; t < len; t++) acc[t] = 0.0;
            for (int64_t m = 0; m < dj; m++)
                for (int64_t t = 0; t < len; t++) acc[t] += ip[m * Q + t];
            for (int64_t t = 0; t < len; t++) acc[t] *= b;
        }
        for (int64_t k = 0; k < dj; k++) {
            const double *ik = ip + k * Q;
            double *ok = op + k * Q;
            double *vk = post == POST_NONE ? ok : val;      /* the product, in place */
            if (mat == NULL) {
                for (int64_t t = 0; t < len; t++) vk[t] = acc[t] + c * ik[t];
            } else {
                for (int64_t t = 0; t < len; t++) vk[t] = 0.0;
                for (int64_t m = 0; m < dj; m++) {
                    const double mk = transpose ? mat[m * dj + k] : mat[k * dj + m];
                    const double *im = ip + m * Q;
                    for (int64_t t = 0; t < len; t++) vk[t] += mk * im[t];
                }
            }
            const int64_t base = (p * dj + k) * Q + q0;
            if (post == POST_NONE) {
                /* written above */
            } else if (post == POST_RATIO) {
                post_ratio(w + base, val, ok, len, sum ? l4 : NULL);
            } else {
                post_update(x + base, val, len, l4);
            }
        }
    }
    if (sum) lanes_close(l4, sum);
}

static void axis_unit(const axis_shape *sh, int64_t u, const double *mat, double a, double b,
                      int transpose, const double *restrict in, double *restrict out, int post,
                      const double *restrict w, double *restrict x, unit_sums *sum) {
    axis_unit_body(sh, u, mat, a, b, transpose, in, out, post, w, x, sum);
}

#if ANONSET_X86_DISPATCH
/* AVX2 without FMA: four doubles per instruction, and every product and sum
 * rounded exactly as in the portable version (no fused multiply-add), so
 * both give the same bits. */
__attribute__((target("avx2")))
static void axis_unit_avx2(const axis_shape *sh, int64_t u, const double *mat, double a,
                           double b, int transpose, const double *restrict in,
                           double *restrict out, int post, const double *restrict w,
                           double *restrict x, unit_sums *sum) {
    axis_unit_body(sh, u, mat, a, b, transpose, in, out, post, w, x, sum);
}
#endif

typedef struct {
    int q;
    const int32_t *dims;
    const double *const *mats;
    const double *a, *b;
    const double *w;
    int64_t n;
    int simd;               /* ANONSET_SIMD_* in use */
    unit_sums *sums;        /* one per unit of the last product */
} em_ctx;

/* The q mode products; the last one with `post`.  Written as orphaned
 * work-sharing loops: inside a parallel region the units are shared among
 * the team (each product ends with the loop's barrier); outside one they run
 * on the calling thread.  Unit sums go to ctx->sums (last product only). */
static void products(const em_ctx *ctx, const double *x_in, double *y, double *scratch,
                     int transpose, int post, double *x, unit_sums *psums) {
    const double *cur = x_in;
    for (int j = 0; j < ctx->q; j++) {
        /* alternate so that the last product lands in y */
        double *dst = ((ctx->q - 1 - j) % 2 == 0) ? y : scratch;
        const axis_shape sh = axis_of(ctx->q, ctx->dims, j);
        const int pj = j == ctx->q - 1 ? post : POST_NONE;
        const double *mat = ctx->mats ? ctx->mats[j] : NULL;
        const double aj = ctx->a ? ctx->a[j] : 0.0, bj = ctx->b ? ctx->b[j] : 0.0;
        unit_sums *sums = pj != POST_NONE ? psums : NULL;
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(static)
#endif
        for (int64_t u = 0; u < sh.units; u++) {
            unit_sums *su = sums ? sums + u : NULL;
#if ANONSET_X86_DISPATCH
            if (ctx->simd >= ANONSET_SIMD_AVX2)
                axis_unit_avx2(&sh, u, mat, aj, bj, transpose, cur, dst, pj, ctx->w, x, su);
            else
#endif
                axis_unit(&sh, u, mat, aj, bj, transpose, cur, dst, pj, ctx->w, x, su);
        }
        cur = dst;
    }
}

/* Units of the last product (the size of ctx->sums). */
static int64_t last_units(int q, const int32_t *dims) {
    return axis_of(q, dims, q - 1).units;
}

int anonset_kron_apply(int q, const int32_t *dims, const double *const *mats,
                       const double *a, const double *b, const double *x,
                       double *y, double *scratch, int transpose, int n_threads) {
    if (q < 1) return ANONSET_ERR_VALUE;
    em_ctx ctx = {q, dims, mats, a, b, NULL, 1, em_simd_level(), NULL};
    for (int j = 0; j < q; j++) ctx.n *= dims[j];
    int nt = anonset_em_threads(ctx.n, n_threads);
    if (nt <= 1) {
        products(&ctx, x, y, scratch, transpose, POST_NONE, NULL, NULL);
        return ANONSET_OK;
    }
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) shared(ctx, x, y, scratch, transpose)
#endif
    products(&ctx, x, y, scratch, transpose, POST_NONE, NULL, NULL);
    return ANONSET_OK;
}

/* One EM run; every thread of the team executes this loop, sharing the
 * units of each product (one parallel region per run).  The log-likelihood
 * is computed at the input of iterations 0, K, 2K, ... (K = ll_every) and the
 * run stops there when its gain over the last K iterations, per iteration
 * and per unit of w, is <= tol_ll. */
static void em_loop(const em_ctx *ctx, double *x, double *y, double *z, double *tmp,
                    int64_t max_iter, double tol, double tol_ll, int64_t ll_every,
                    int64_t nunits, anonset_em_report *rep, int *want) {
    for (;;) {
        /* r_beta = w_beta / sum_gamma delta[gamma, beta] x_gamma  (eq. 26) */
        products(ctx, x, y, tmp, 1, POST_RATIO, NULL, *want ? ctx->sums : NULL);
#if ANONSET_HAVE_OPENMP
        #pragma omp single
#endif
        if (*want) {
            double ll = 0.0, sy = 0.0;
            for (int64_t u = 0; u < nunits; u++) { ll += ctx->sums[u].ll; sy += ctx->sums[u].sy; }
            rep->loglik_prev = rep->loglik;
            rep->loglik = ll - sy;
            if (rep->iters >= ll_every) {
                rep->gain = (rep->loglik - rep->loglik_prev) / ((double)ll_every * rep->sum_w);
                if (tol_ll > 0.0 && rep->gain <= tol_ll) rep->stop = 1;
            }
        }
        if (rep->stop) break;
        /* x_alpha <- x_alpha * sum_beta delta[alpha, beta] r_beta */
        products(ctx, y, z, tmp, 0, POST_UPDATE, x, ctx->sums);
#if ANONSET_HAVE_OPENMP
        #pragma omp single
#endif
        {
            double mx = 0.0, moved = 0.0;
            for (int64_t u = 0; u < nunits; u++) {
                mx = ctx->sums[u].mx > mx ? ctx->sums[u].mx : mx;
                moved += ctx->sums[u].moved;
            }
            rep->iters++;
            rep->change = mx;
            rep->moved = moved;
            rep->stop = rep->iters >= max_iter || mx <= tol;
            *want = ll_every > 0 && rep->iters % ll_every == 0;
        }
        /* the single's barrier: every thread sees the same rep->stop */
        if (rep->stop) break;
    }
}

int anonset_em_run(int q, const int32_t *dims, const double *const *mats,
                   const double *a, const double *b, const double *w,
                   double *x, double *scratch, int64_t max_iter, double tol, double tol_ll,
                   int64_t ll_every, anonset_em_report *rep, int n_threads, int simd) {
    if (q < 1 || max_iter < 0 || ll_every < 0) return ANONSET_ERR_VALUE;
    const int best = em_simd_level();
    em_ctx ctx = {q, dims, mats, a, b, w, 1, simd < 0 || simd > best ? best : simd, NULL};
    for (int j = 0; j < q; j++) ctx.n *= dims[j];
    const int64_t n = ctx.n, nunits = last_units(q, dims);
    double *y = scratch, *z = scratch + n, *tmp = scratch + 2 * n;
    ctx.sums = (unit_sums *)calloc((size_t)nunits, sizeof(unit_sums));
    if (!ctx.sums) return ANONSET_ERR_NOMEM;
    double sw = 0.0;
    for (int64_t i = 0; i < n; i++) sw += w[i];
    memset(rep, 0, sizeof *rep);
    rep->sum_w = sw > 0.0 ? sw : 1.0;
    rep->change = INFINITY;
    rep->gain = INFINITY;
    rep->loglik = NAN;
    if (tol_ll > 0.0 && ll_every == 0) ll_every = 1;
    int want = ll_every > 0;
    if (max_iter > 0) {
        const int nt = anonset_em_threads(n, n_threads);
        if (nt <= 1) {
            em_loop(&ctx, x, y, z, tmp, max_iter, tol, tol_ll, ll_every, nunits, rep, &want);
        } else {
#if ANONSET_HAVE_OPENMP
            #pragma omp parallel num_threads(nt) default(none) \
                shared(ctx, x, y, z, tmp, max_iter, tol, tol_ll, ll_every, nunits, rep, want)
#endif
            em_loop(&ctx, x, y, z, tmp, max_iter, tol, tol_ll, ll_every, nunits, rep, &want);
        }
    }
    free(ctx.sums);
    return ANONSET_OK;
}

int anonset_em_kron(int q, const int32_t *dims, const double *const *mats,
                    const double *a, const double *b, const double *w,
                    double *x, double *scratch, int64_t max_iter, double tol,
                    int64_t *iters, double *change, int n_threads) {
    anonset_em_report rep;
    const int st = anonset_em_run(q, dims, mats, a, b, w, x, scratch, max_iter, tol, 0.0, 0,
                                  &rep, n_threads, -1);
    *iters = rep.iters;
    *change = rep.change;
    return st;
}
