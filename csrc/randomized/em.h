/* Reconstruction kernels (paper 000, Sec. V-D).
 *
 * The transition matrix delta of eq. 19 is a Kronecker product of one
 * d_j x d_j matrix per attribute; it is applied attribute by attribute
 * ("mode products"), never formed as a |C| x |C| matrix. */
#ifndef ANONSET_EM_H
#define ANONSET_EM_H

#include "anonset_common.h"

/* The paper's EM, eq. 26, iterated from x (in: x^0, out: the last iterate).
 * dims[q]: domain sizes; C order (last attribute fastest).
 * For attribute j: if mats[j] is NULL the matrix has a[j] on the diagonal and
 * b[j] off it (eq. 21); otherwise mats[j] is a dense d_j x d_j row-major matrix
 * M with delta[alpha, beta] = prod_j M_j[alpha_j, beta_j].
 * w: the counts of eq. 17 as doubles.  scratch: 3 * ncells doubles.
 * Stops after max_iter iterations or when max_alpha |x^{#+1} - x^#| <= tol.
 * iters / change receive the iterations done and the last max change. */
int anonset_em_kron(int q, const int32_t *dims, const double *const *mats,
                    const double *a, const double *b, const double *w,
                    double *x, double *scratch, int64_t max_iter, double tol,
                    int64_t *iters, double *change, int n_threads);

/* y = (M_0 (x) ... (x) M_{q-1}) x, or with every M_j transposed if transpose.
 * scratch: ncells doubles; x is not modified. */
int anonset_kron_apply(int q, const int32_t *dims, const double *const *mats,
                       const double *a, const double *b, const double *x,
                       double *y, double *scratch, int transpose, int n_threads);

/* One E-step of the exact-likelihood EM over U distinct published set tuples.
 * members[j]: U * k[j] int32 members of attribute j's set in pattern u;
 * weight[u]: how many records share pattern u;
 * For each of nsub attribute subsets S (bitmask sub[s] over the q attributes,
 * coefficient coef[s] > 0): marg[s] is the marginal of the current pi over the
 * attributes of S (C order over them) and acc[s] (same size) receives
 * sum_u weight[u] * coef[s] / Z_u over the cells of the product of pattern u's
 * sets on S, where Z_u = sum_s coef[s] * sum_{those cells} marg[s].
 * loglik receives sum_u weight[u] * log(Z_u).
 * Work is split into nchunk fixed chunks of patterns whose partial sums are
 * added in chunk order, so the result is identical for any number of threads. */
int anonset_exact_estep(int64_t U, int q, const int32_t *dims,
                        const int32_t *const *members, const int32_t *k,
                        const double *weight, int nsub, const int32_t *sub,
                        const double *coef, const double *const *marg,
                        const int64_t *msize, double *const *acc, double *loglik,
                        int nchunk, int n_threads);

#endif
