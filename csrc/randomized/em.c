#include "em.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One mode product with a rotation: `in` has shape (dj, R) (the axis being
 * multiplied leads), `out` gets shape (R, dj): out[t, k] = sum_m M[k, m] in[m, t]
 * (M transposed if transpose), or with the a/b structure
 * out[t, k] = b * sum_m in[m, t] + (a - b) in[k, t].
 * Applying this once per attribute, the leading axis moves to the end each
 * time, so after all q products the array is back in its original order and
 * every product reads the leading axis contiguously (vectorizable) and writes
 * a small transposed tile that stays in L1.  Tiles of TB columns are
 * independent and computed in a fixed order: the result does not depend on
 * the number of threads. */
#define TB 128

/* Post-processing fused into the last mode product of an EM iteration, so
 * that the iteration makes no separate pass over the table:
 * POST_NONE writes the product; POST_RATIO writes w / product (0 where the
 * product is 0: the denominator of eq. 26); POST_UPDATE multiplies x by the
 * product in place and returns the largest change. */
enum { POST_NONE = 0, POST_RATIO = 1, POST_UPDATE = 2 };

static inline double rot_tile(int64_t tile, int64_t dj, int64_t R, const double *mat, double a,
                              double b, int transpose, const double *restrict in,
                              double *restrict out, int post, const double *restrict w,
                              double *restrict x) {
    const int64_t t0 = tile * TB;
    const int64_t len = R - t0 < TB ? R - t0 : TB;
    double acc[TB], val[TB];
    double mx = 0.0;
    if (mat == NULL) {
        for (int64_t t = 0; t < len; t++) acc[t] = 0.0;
        for (int64_t m = 0; m < dj; m++) {
            const double *sm = in + m * R + t0;
            for (int64_t t = 0; t < len; t++) acc[t] += sm[t];
        }
        for (int64_t t = 0; t < len; t++) acc[t] *= b;
    }
    for (int64_t k = 0; k < dj; k++) {
        if (mat == NULL) {
            const double c = a - b;
            const double *sk = in + k * R + t0;
            for (int64_t t = 0; t < len; t++) val[t] = acc[t] + c * sk[t];
        } else {
            for (int64_t t = 0; t < len; t++) val[t] = 0.0;
            for (int64_t m = 0; m < dj; m++) {
                const double mk = transpose ? mat[m * dj + k] : mat[k * dj + m];
                const double *sm = in + m * R + t0;
                for (int64_t t = 0; t < len; t++) val[t] += mk * sm[t];
            }
        }
        const int64_t base = t0 * dj + k;      /* position of (t0, k) in the output */
        if (post == POST_NONE) {
            for (int64_t t = 0; t < len; t++) out[base + t * dj] = val[t];
        } else if (post == POST_RATIO) {
            for (int64_t t = 0; t < len; t++) {
                const int64_t i = base + t * dj;
                out[i] = val[t] > 0.0 ? w[i] / val[t] : 0.0;
            }
        } else {
            for (int64_t t = 0; t < len; t++) {
                const int64_t i = base + t * dj;
                const double nx = x[i] * val[t];
                const double dlt = fabs(nx - x[i]);
                mx = dlt > mx ? dlt : mx;
                x[i] = nx;
            }
        }
    }
    return mx;
}

/* Tables of at most PAR_MIN cells run on one thread: below it a parallel
 * region costs more than it saves. */
#define PAR_MIN (1 << 16)

/* The q mode products; the last one with `post` (see rot_tile).  Written as
 * orphaned work-sharing loops: called inside a parallel region the tiles are
 * shared among the team (each product ends with the loop's barrier); called
 * outside one it runs on the calling thread.  For POST_UPDATE the largest
 * change is max-reduced into *mx (a max does not depend on the order). */
static void products(int q, const int32_t *dims, const double *const *mats, const double *a,
                     const double *b, const double *x_in, double *y, double *scratch,
                     int transpose, int post, const double *w, double *x, double *mx) {
    int64_t n = 1;
    for (int j = 0; j < q; j++) n *= dims[j];
    const double *cur = x_in;
    for (int j = 0; j < q; j++) {
        /* alternate so that the last product lands in y */
        double *dst = ((q - 1 - j) % 2 == 0) ? y : scratch;
        const int64_t dj = dims[j], R = n / dims[j];
        const int64_t ntiles = (R + TB - 1) / TB;
        const int pj = j == q - 1 ? post : POST_NONE;
        const double *mat = mats ? mats[j] : NULL;
        const double aj = a ? a[j] : 0.0, bj = b ? b[j] : 0.0;
        double local = 0.0;
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(static)
#endif
        for (int64_t tile = 0; tile < ntiles; tile++) {
            double m = rot_tile(tile, dj, R, mat, aj, bj, transpose, cur, dst, pj, w, x);
            local = m > local ? m : local;
        }
        if (pj == POST_UPDATE) {
#if ANONSET_HAVE_OPENMP
            #pragma omp critical(anonset_em_max)
#endif
            { if (local > *mx) *mx = local; }
#if ANONSET_HAVE_OPENMP
            #pragma omp barrier
#endif
        }
        cur = dst;
    }
}

int anonset_kron_apply(int q, const int32_t *dims, const double *const *mats,
                       const double *a, const double *b, const double *x,
                       double *y, double *scratch, int transpose, int n_threads) {
    if (q < 1) return ANONSET_ERR_VALUE;
    int64_t n = 1;
    for (int j = 0; j < q; j++) n *= dims[j];
    int nt = anonset_threads(n_threads);
    double unused = 0.0;
    if (nt <= 1 || n <= PAR_MIN) {
        products(q, dims, mats, a, b, x, y, scratch, transpose, POST_NONE, NULL, NULL, &unused);
        return ANONSET_OK;
    }
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) \
        shared(q, dims, mats, a, b, x, y, scratch, transpose, unused)
#endif
    products(q, dims, mats, a, b, x, y, scratch, transpose, POST_NONE, NULL, NULL, &unused);
    return ANONSET_OK;
}

/* One EM run; every thread of the team executes this loop, sharing the
 * tiles of each product (one parallel region per run, not per product). */
static void em_loop(int q, const int32_t *dims, const double *const *mats, const double *a,
                    const double *b, const double *w, double *x, double *y, double *z,
                    double *tmp, int64_t max_iter, double tol, int64_t *it, double *ch,
                    double *mx) {
    for (;;) {
#if ANONSET_HAVE_OPENMP
        #pragma omp single
#endif
        *mx = 0.0;
        /* r_beta = w_beta / sum_gamma delta[gamma, beta] x_gamma  (eq. 26) */
        products(q, dims, mats, a, b, x, y, tmp, 1, POST_RATIO, w, NULL, mx);
        /* x_alpha <- x_alpha * sum_beta delta[alpha, beta] r_beta; the largest change */
        products(q, dims, mats, a, b, y, z, tmp, 0, POST_UPDATE, NULL, x, mx);
#if ANONSET_HAVE_OPENMP
        #pragma omp single
#endif
        {
            (*it)++;
            *ch = *mx;
        }
        /* the single's barrier: every thread sees the same *it and *ch */
        if (*ch <= tol || *it >= max_iter) break;
    }
}

int anonset_em_kron(int q, const int32_t *dims, const double *const *mats,
                    const double *a, const double *b, const double *w,
                    double *x, double *scratch, int64_t max_iter, double tol,
                    int64_t *iters, double *change, int n_threads) {
    int64_t n = 1;
    for (int j = 0; j < q; j++) n *= dims[j];
    double *y = scratch, *z = scratch + n, *tmp = scratch + 2 * n;
    int nt = anonset_threads(n_threads);
    int64_t it = 0;
    double ch = INFINITY, mx = 0.0;
    if (max_iter > 0) {
        if (nt <= 1 || n <= PAR_MIN) {
            em_loop(q, dims, mats, a, b, w, x, y, z, tmp, max_iter, tol, &it, &ch, &mx);
        } else {
#if ANONSET_HAVE_OPENMP
            #pragma omp parallel num_threads(nt) default(none) \
                shared(q, dims, mats, a, b, w, x, y, z, tmp, max_iter, tol, it, ch, mx)
#endif
            em_loop(q, dims, mats, a, b, w, x, y, z, tmp, max_iter, tol, &it, &ch, &mx);
        }
    }
    *iters = it;
    *change = ch;
    return ANONSET_OK;
}

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
