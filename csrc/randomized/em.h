/* Reconstruction kernels (paper 000, Sec. V-D).
 *
 * The transition matrix delta of eq. 19 is a Kronecker product of one
 * d_j x d_j matrix per attribute; it is applied attribute by attribute
 * ("mode products"), never formed as a |C| x |C| matrix. */
#ifndef ANONSET_EM_H
#define ANONSET_EM_H

#include "anonset_common.h"

/* What an EM run did (anonset_em_run). */
typedef struct {
    int64_t iters;          /* iterations done */
    double change;          /* largest |x' - x| of the last iteration */
    double moved;           /* sum |x' - x| of the last iteration */
    double loglik;          /* L(x) = sum_b w_b log y_b - sum_b y_b, y = delta^T x, at the
                             * last iteration whose input it was computed at (NaN: never) */
    double loglik_prev;     /* the one before (ll_every iterations earlier) */
    double gain;            /* (loglik - loglik_prev) / (ll_every sum_b w_b): the gain per
                             * iteration and unit of w (inf before two) */
    double sum_w;
    int stop;
} anonset_em_report;

/* The paper's EM, eq. 26, iterated from x (in: x^0, out: the last iterate).
 * dims[q]: domain sizes; C order (last attribute fastest).
 * For attribute j: if mats[j] is NULL the matrix has a[j] on the diagonal and
 * b[j] off it (eq. 21); otherwise mats[j] is a dense d_j x d_j row-major matrix
 * M with delta[alpha, beta] = prod_j M_j[alpha_j, beta_j].
 * w: the counts of eq. 17 as doubles.  scratch: 3 * ncells doubles.
 * Eq. 26 is the EM of the Poisson model w ~ Poisson(delta^T x) (Shepp &
 * Vardi 1982): it never lowers L(x) = sum w log y - sum y.  L is computed at
 * the input of iterations 0, K, 2K, ... (K = ll_every; 0 = never, taken as 1
 * when tol_ll > 0).  Stops after max_iter iterations, or when the largest
 * change of a cell is <= tol, or (tol_ll > 0) at an L computation where the
 * gain of L over the last K iterations, per iteration and divided by
 * sum w, is <= tol_ll (x is then that input).  simd: -1 = the best the CPU has,
 * else at most that ANONSET_SIMD_* level (AVX2 without FMA: the result does
 * not depend on the SIMD level, nor on the number of threads). */
int anonset_em_run(int q, const int32_t *dims, const double *const *mats,
                   const double *a, const double *b, const double *w,
                   double *x, double *scratch, int64_t max_iter, double tol, double tol_ll,
                   int64_t ll_every, anonset_em_report *rep, int n_threads, int simd);

/* em_log of the kernels (for tests against libm). */
double anonset_em_log(double v);

/* anonset_em_run without the log-likelihood rule; iters / change receive the
 * iterations done and the last max change. */
int anonset_em_kron(int q, const int32_t *dims, const double *const *mats,
                    const double *a, const double *b, const double *w,
                    double *x, double *scratch, int64_t max_iter, double tol,
                    int64_t *iters, double *change, int n_threads);

/* Threads the EM kernels use for a table of ncells cells when n_threads are
 * asked for: one below 2^15 cells, never more than the processors available. */
int anonset_em_threads(int64_t ncells, int n_threads);

/* y = (M_0 (x) ... (x) M_{q-1}) x, or with every M_j transposed if transpose.
 * scratch: ncells doubles; x is not modified. */
int anonset_kron_apply(int q, const int32_t *dims, const double *const *mats,
                       const double *a, const double *b, const double *x,
                       double *y, double *scratch, int transpose, int n_threads);

#endif
