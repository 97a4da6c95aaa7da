/* k-d tree of Pseudocode 1's nearest searches; see msa_index.h. */
#include "msa_index.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_SIZE 8
#define MAX_STACK 256   /* 2 x the depth of a tree whose splits halve (< 64) */

static inline int32_t entry_code(const int32_t *xu, const int64_t *etid, int32_t nq,
                                 int64_t e, int32_t j)
{
    return xu[etid[e] * nq + j];
}

/* Reorder p[lo, hi) so that p[nth] holds the entry of rank nth by QI j's
 * code, smaller codes before, larger after (three-way quickselect). */
static void select_nth(int64_t *p, int64_t lo, int64_t hi, int64_t nth, const int32_t *xu,
                       const int64_t *etid, int32_t nq, int32_t j)
{
    while (hi - lo > 1) {
        const int32_t a = entry_code(xu, etid, nq, p[lo], j);
        const int32_t b = entry_code(xu, etid, nq, p[lo + (hi - lo) / 2], j);
        const int32_t c = entry_code(xu, etid, nq, p[hi - 1], j);
        const int32_t piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            const int32_t k = entry_code(xu, etid, nq, p[i], j);
            int64_t tmp;
            if (k < piv) {
                tmp = p[lt]; p[lt] = p[i]; p[i] = tmp;
                ++lt;
                ++i;
            } else if (k > piv) {
                --gt;
                tmp = p[gt]; p[gt] = p[i]; p[i] = tmp;
            } else {
                ++i;
            }
        }
        if (nth < lt)
            hi = lt;
        else if (nth >= gt)
            lo = gt;
        else
            return;
    }
}

/* Node over perm[b, e): its bounds, then its children (recursion depth is
 * the tree's, < 64). */
static int64_t build_node(anonset_msa_index *X, const anonset_msa_qi *s, const int32_t *xu,
                          const int64_t *etid, int64_t b, int64_t e, int64_t parent)
{
    const int32_t nq = s->n_qi;
    const int64_t id = X->n_nodes++;
    int32_t *lo = X->blo + id * nq, *hi = X->bhi + id * nq;
    X->nb[id] = b;
    X->ne[id] = e;
    X->parent[id] = parent;
    X->alive[id] = e - b;
    X->left[id] = X->right[id] = -1;
    int32_t best_j = -1;
    double best_spread = 0.0;
    int32_t cat_j = -1;
    for (int32_t j = 0; j < nq; ++j) {
        int32_t mn = entry_code(xu, etid, nq, X->perm[b], j), mx = mn, node = mn;
        for (int64_t q = b + 1; q < e; ++q) {
            const int32_t v = entry_code(xu, etid, nq, X->perm[q], j);
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            if (s->kind[j] != 0 && s->lca != NULL)
                node = s->lca[s->tab_off[j] + (int64_t)node * s->dom[j] + v];
        }
        if (s->kind[j] == 0) {
            lo[j] = mn;
            hi[j] = mx;
            const double spread = (double)(mx - mn) * s->scale[j];
            if (spread > best_spread) {
                best_spread = spread;
                best_j = j;
            }
        } else {
            lo[j] = hi[j] = s->lca != NULL ? node : -1;
            if (mx > mn && cat_j < 0)
                cat_j = j;
        }
    }
    if (best_j < 0)
        best_j = cat_j;
    if (e - b <= LEAF_SIZE || best_j < 0) {
        for (int64_t q = b; q < e; ++q)
            X->leaf_of[X->perm[q]] = id;
        return id;
    }
    const int64_t mid = b + (e - b) / 2;
    select_nth(X->perm, b, e, mid, xu, etid, nq, best_j);
    X->left[id] = build_node(X, s, xu, etid, b, mid, id);
    X->right[id] = build_node(X, s, xu, etid, mid, e, id);
    return id;
}

int anonset_msa_index_build(anonset_msa_index *X, const anonset_msa_qi *qi, const int32_t *xu,
                            int64_t n_ent, const int64_t *etid, int32_t n_clusters,
                            const int64_t *cbeg, const int64_t *cne)
{
    const int64_t cap = 2 * n_ent + n_clusters + 1;
    const size_t nq = (size_t)(qi->n_qi > 0 ? qi->n_qi : 1);
    memset(X, 0, sizeof *X);
    for (int32_t j = 0; j < qi->n_qi && qi->lca != NULL; ++j) {
        const int64_t dj = qi->dom[j];
        for (int64_t i = 0; qi->kind[j] != 0 && i < dj * dj; ++i)
            if (qi->lca[qi->tab_off[j] + i] < 0 || qi->lca[qi->tab_off[j] + i] >= dj)
                return ANONSET_ERR_VALUE;
    }
    X->perm = malloc((size_t)(n_ent > 0 ? n_ent : 1) * sizeof(int64_t));
    X->leaf_of = malloc((size_t)(n_ent > 0 ? n_ent : 1) * sizeof(int64_t));
    X->nb = malloc((size_t)cap * sizeof(int64_t));
    X->ne = malloc((size_t)cap * sizeof(int64_t));
    X->left = malloc((size_t)cap * sizeof(int64_t));
    X->right = malloc((size_t)cap * sizeof(int64_t));
    X->parent = malloc((size_t)cap * sizeof(int64_t));
    X->alive = malloc((size_t)cap * sizeof(int64_t));
    X->blo = malloc((size_t)cap * nq * sizeof(int32_t));
    X->bhi = malloc((size_t)cap * nq * sizeof(int32_t));
    X->root = malloc((size_t)n_clusters * sizeof(int64_t));
    X->code = malloc((size_t)(n_ent > 0 ? n_ent : 1) * nq * sizeof(int32_t));
    X->gone = calloc((size_t)(n_ent > 0 ? n_ent : 1), 1);
    X->slot = malloc((size_t)(n_ent > 0 ? n_ent : 1) * sizeof(int64_t));
    if (!X->perm || !X->leaf_of || !X->nb || !X->ne || !X->left || !X->right || !X->parent
        || !X->alive || !X->blo || !X->bhi || !X->root || !X->code || !X->gone || !X->slot) {
        anonset_msa_index_free(X);
        return ANONSET_ERR_NOMEM;
    }
    for (int64_t e = 0; e < n_ent; ++e)
        X->perm[e] = e;
    for (int32_t c = 0; c < n_clusters; ++c)
        X->root[c] = cne[c] > 0 ? build_node(X, qi, xu, etid, cbeg[c], cbeg[c] + cne[c], -1)
                                : -1;
    /* the tuples in leaf order: a leaf's scan reads consecutive memory */
    X->n_qi = qi->n_qi;
    for (int64_t q = 0; q < n_ent; ++q) {
        X->slot[X->perm[q]] = q;
        for (int32_t j = 0; j < qi->n_qi; ++j)
            X->code[q * qi->n_qi + j] = xu[etid[X->perm[q]] * qi->n_qi + j];
    }
    return ANONSET_OK;
}

/* Lower bound of the squared eq. 2 distance from xr to any entry of node id
 * (the terms in anonset_msa_qi_sqd's order; see the header). */
static inline double node_bound(const anonset_msa_index *X, const anonset_msa_qi *s,
                                int64_t id, const int32_t *xr)
{
    const int32_t nq = s->n_qi;
    const int32_t *lo = X->blo + id * nq, *hi = X->bhi + id * nq;
    double acc = 0.0;
    for (int32_t j = 0; j < nq; ++j) {
        if (s->kind[j] == 0) {
            const int32_t gap = xr[j] < lo[j] ? lo[j] - xr[j] : (xr[j] > hi[j] ? xr[j] - hi[j] : 0);
            const double df = (double)gap * s->scale[j];
            acc += df * df;
        } else if (lo[j] >= 0) {
            const int64_t off = s->tab_off[j] + (int64_t)xr[j] * s->dom[j] + lo[j];
            if (s->lca[off] != lo[j])
                acc += s->tab[off];
        }
    }
    return acc;
}

int64_t anonset_msa_index_nearest(const anonset_msa_index *X, const anonset_msa_qi *qi,
                                  const int64_t *epos, int32_t c, const int32_t *xr)
{
    const int32_t nq = qi->n_qi;
    int64_t stack[MAX_STACK];
    double bound[MAX_STACK];
    int top = 0;
    double bd = DBL_MAX;
    int64_t bpos = INT64_MAX, best = -1;
    if (X->root[c] < 0 || X->alive[X->root[c]] == 0)
        return -1;
    stack[top] = X->root[c];
    bound[top++] = 0.0;
    while (top > 0) {
        --top;
        const int64_t id = stack[top];
        if (bound[top] > bd || X->alive[id] == 0)
            continue;
        if (X->left[id] < 0) {
            for (int64_t q = X->nb[id]; q < X->ne[id]; ++q) {
                if (X->gone[q])
                    continue;
                const double dd = anonset_msa_qi_sqd(qi, xr, X->code + q * nq);
                if (dd < bd || (dd == bd && epos[X->perm[q]] < bpos)) {
                    bd = dd;
                    best = X->perm[q];
                    bpos = epos[best];
                }
            }
            continue;
        }
        const int64_t l = X->left[id], r = X->right[id];
        const double bl = node_bound(X, qi, l, xr), br = node_bound(X, qi, r, xr);
        /* the nearer child is popped first */
        const int64_t far = bl <= br ? r : l, near = bl <= br ? l : r;
        const double bfar = bl <= br ? br : bl, bnear = bl <= br ? bl : br;
        if (X->alive[far] > 0 && bfar <= bd) {
            stack[top] = far;
            bound[top++] = bfar;
        }
        if (X->alive[near] > 0 && bnear <= bd) {
            stack[top] = near;
            bound[top++] = bnear;
        }
    }
    return best;
}

void anonset_msa_index_remove(anonset_msa_index *X, int64_t e)
{
    X->gone[X->slot[e]] = 1;
    for (int64_t id = X->leaf_of[e]; id >= 0; id = X->parent[id])
        X->alive[id] -= 1;
}

void anonset_msa_index_free(anonset_msa_index *X)
{
    free(X->perm);
    free(X->leaf_of);
    free(X->nb);
    free(X->ne);
    free(X->left);
    free(X->right);
    free(X->parent);
    free(X->alive);
    free(X->blo);
    free(X->bhi);
    free(X->root);
    free(X->code);
    free(X->gone);
    free(X->slot);
    memset(X, 0, sizeof *X);
}
