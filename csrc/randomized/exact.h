/* The exact-likelihood EM of anonset (000 Sec. V-C3 read as a likelihood):
 * the E-step over the distinct published set tuples.
 *
 * A record with true cell alpha publishes set S_j for attribute j with
 * probability proportional to f_j(alpha_j) = u_j + (1 - u_j) [alpha_j in S_j]
 * (u_j = kappa_d / kappa_c, reconstruct.likelihood_ratio), so a tuple u has
 * probability proportional to Z_u = sum_alpha pi_alpha prod_j f_{u,j}(alpha_j),
 * and the EM update is pi <- pi * G / N with
 * G_alpha = sum_u (weight_u / Z_u) prod_j f_{u,j}(alpha_j). */
#ifndef ANONSET_EXACT_H
#define ANONSET_EXACT_H

#include "anonset_common.h"

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

/* The same E-step by prefix-trie contraction: tuples sorted lexicographically
 * by their sets (attribute 0 first) share their prefixes, and pi is contracted
 * attribute by attribute along the trie: a node at depth t holds
 * sum over alpha_0..alpha_{t-1} of pi times the prefix's factors (a tensor over
 * attributes t..q-1), computed once for all tuples below it, using
 * f = u + (1 - u) [in S]: the sum over the whole axis (shared by the node's
 * children) plus the sum over the set's |S_t| rows.  G comes back along the
 * same trie (the adjoint of each contraction).  Cost about
 * sum_t (nodes at depth t + 1) |S_t| prod_{j > t} d_j instead of
 * U prod_j (1 + |S_j|).
 * masks[j]: U x words(d_j) uint64, the tuples' sets, distinct and sorted
 * by their bytes (memcmp of the words of attribute 0, then 1, ...: the order
 * of NumPy's unique on rows viewed as bytes; any such order keeps every
 * prefix's tuples contiguous); u[j]; weight[U]; pi[ncells] (C order); G[ncells] (out);
 * loglik (out): sum_u weight_u log Z_u.  The top-level groups are cut into
 * nchunk fixed chunks whose sums are added in chunk order: the result does
 * not depend on the number of threads.  ANONSET_ERR_VALUE if the tuples are
 * not sorted and distinct: checked pair by pair where check_order is
 * nonzero (one pass; an EM checks its first update only, its tuples do not
 * change), else only where the trie compares them (the first tuple of each
 * group: a tuple out of order inside a run of equal sets passes).
 * members[j] (may be NULL, or NULL for an attribute): U x k[j] int32, the
 * members of masks[j]'s sets in ascending order, each in [0, d_j); where
 * given, the sets are read from them instead of scanning their words (a wide
 * domain's set of a few values spans many zero words).  The sums run in the
 * same order either way: the same bits. */
int anonset_exact_trie(int64_t U, int q, const int32_t *dims, const uint64_t *const *masks,
                       const int32_t *const *members, const int32_t *k,
                       const double *u, const double *weight, const double *pi, double *G,
                       double *loglik, int nchunk, int check_order, int n_threads);

#endif
