#include "em.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* out = M_j applied along axis j of in (C order, shape dims).
 *
 * The array is viewed as (outer, d_j, inner).  Work is split into tiles of
 * one outer index and TILE consecutive inner indices, so every inner loop runs
 * over contiguous memory (vectorizable) and every tile is computed by one
 * thread in a fixed order: the result does not depend on the thread count. */
#define TILE 256

static void mode_product(int q, const int32_t *dims, int j, const double *mat,
                         double a, double b, int transpose, const double *in,
                         double *out, int nt) {
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < j; i++) outer *= dims[i];
    for (int i = j + 1; i < q; i++) inner *= dims[i];
    const int64_t dj = dims[j];
    const int64_t tiles_per = (inner + TILE - 1) / TILE;
    const int64_t ntiles = outer * tiles_per;
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
        shared(mat, a, b, transpose, in, out, inner, dj, tiles_per, ntiles) \
        if (ntiles > 1 && outer * inner * dj > 65536)
#endif
    for (int64_t tile = 0; tile < ntiles; tile++) {
        const int64_t o = tile / tiles_per;
        const int64_t t0 = (tile % tiles_per) * TILE;
        const int64_t len = inner - t0 < TILE ? inner - t0 : TILE;
        const double *src = in + o * dj * inner + t0;
        double *dst = out + o * dj * inner + t0;
        double acc[TILE];
        if (mat == NULL) {
            /* a on the diagonal, b off it: out_k = b * sum_m in_m + (a - b) * in_k */
            for (int64_t t = 0; t < len; t++) acc[t] = 0.0;
            for (int64_t k = 0; k < dj; k++) {
                const double *sk = src + k * inner;
                for (int64_t t = 0; t < len; t++) acc[t] += sk[t];
            }
            const double c = a - b;
            for (int64_t k = 0; k < dj; k++) {
                const double *sk = src + k * inner;
                double *dk = dst + k * inner;
                for (int64_t t = 0; t < len; t++) dk[t] = b * acc[t] + c * sk[t];
            }
        } else {
            for (int64_t k = 0; k < dj; k++) {
                for (int64_t t = 0; t < len; t++) acc[t] = 0.0;
                for (int64_t m = 0; m < dj; m++) {
                    const double mk = transpose ? mat[m * dj + k] : mat[k * dj + m];
                    const double *sm = src + m * inner;
                    for (int64_t t = 0; t < len; t++) acc[t] += mk * sm[t];
                }
                double *dk = dst + k * inner;
                for (int64_t t = 0; t < len; t++) dk[t] = acc[t];
            }
        }
    }
}

int anonset_kron_apply(int q, const int32_t *dims, const double *const *mats,
                       const double *a, const double *b, const double *x,
                       double *y, double *scratch, int transpose, int n_threads) {
    if (q < 1) return ANONSET_ERR_VALUE;
    int nt = anonset_threads(n_threads);
    const double *cur = x;
    for (int j = 0; j < q; j++) {
        /* alternate so that the last mode product lands in y */
        double *dst = ((q - 1 - j) % 2 == 0) ? y : scratch;
        mode_product(q, dims, j, mats ? mats[j] : NULL, a ? a[j] : 0.0, b ? b[j] : 0.0,
                     transpose, cur, dst, nt);
        cur = dst;
    }
    return ANONSET_OK;
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
    double ch = INFINITY;
    while (it < max_iter) {
        /* y_beta = sum_gamma delta[gamma, beta] x_gamma  (denominator of eq. 26) */
        anonset_kron_apply(q, dims, mats, a, b, x, y, tmp, 1, nt);
#if ANONSET_HAVE_OPENMP
        #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
            shared(n, y, w) if (n > 32768)
#endif
        for (int64_t m = 0; m < n; m++) y[m] = y[m] > 0.0 ? w[m] / y[m] : 0.0;
        /* z_alpha = sum_beta delta[alpha, beta] w_beta / y_beta */
        anonset_kron_apply(q, dims, mats, a, b, y, z, tmp, 0, nt);
        double mx = 0.0;
#if ANONSET_HAVE_OPENMP
        #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
            shared(n, x, z) reduction(max:mx) if (n > 32768)
#endif
        for (int64_t m = 0; m < n; m++) {
            double nx = x[m] * z[m];
            double dlt = fabs(nx - x[m]);
            if (dlt > mx) mx = dlt;
            x[m] = nx;
        }
        it++;
        ch = mx;
        if (ch <= tol) break;
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
