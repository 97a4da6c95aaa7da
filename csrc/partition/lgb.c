/* Local generalization and bucketization kernels (paper 002); see lgb.h. */
#include "lgb.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ Alg. 2 */

/* max-heap of runs by remaining count; ties: smaller run index first, so the
 * assignment is deterministic */
static int heap_less(const int64_t *cnt, int64_t a, int64_t b) {
    /* "a below b": a has fewer tuples left, or as many and a larger index */
    return cnt[a] < cnt[b] || (cnt[a] == cnt[b] && a > b);
}

static void heap_push(int64_t *h, int64_t *size, const int64_t *cnt, int64_t r) {
    int64_t i = (*size)++;
    h[i] = r;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!heap_less(cnt, h[p], h[i])) break;
        int64_t t = h[p]; h[p] = h[i]; h[i] = t;
        i = p;
    }
}

static int64_t heap_pop(int64_t *h, int64_t *size, const int64_t *cnt) {
    int64_t top = h[0];
    int64_t n = --(*size);
    h[0] = h[n];
    int64_t i = 0;
    for (;;) {
        int64_t a = 2 * i + 1, b = a + 1, m = i;
        if (a < n && heap_less(cnt, h[m], h[a])) m = a;
        if (b < n && heap_less(cnt, h[m], h[b])) m = b;
        if (m == i) break;
        int64_t t = h[m]; h[m] = h[i]; h[i] = t;
        i = m;
    }
    return top;
}

/* Anatomy's group creation + residue assignment (Xiao & Tao 2006; the
 * assignment of m-invariance) on runs [r0, r1).  left[r] = tuples of run r
 * not yet assigned, next[r] = position of the next one. */
static int divide_buckets(int64_t r0, int64_t r1, const int64_t *off, int64_t l,
                          int64_t *left, int64_t *next, int64_t *heap,
                          int64_t *members, int64_t *bucket, int64_t *nb) {
    int64_t hs = 0, first = *nb, popped_base;
    for (int64_t r = r0; r < r1; r++) {
        left[r] = off[r + 1] - off[r];
        next[r] = off[r];
        if (left[r] > 0) heap_push(heap, &hs, left, r);
    }
    /* members[(b - first) * l + j]: the run of the j-th tuple of bucket b */
    while (hs >= l) {
        int64_t b = (*nb)++;
        popped_base = (b - first) * l;
        for (int64_t j = 0; j < l; j++) members[popped_base + j] = heap_pop(heap, &hs, left);
        for (int64_t j = 0; j < l; j++) {
            int64_t r = members[popped_base + j];
            bucket[next[r]++] = b;
            if (--left[r] > 0) heap_push(heap, &hs, left, r);
        }
    }
    int64_t n_made = *nb - first;
    if (hs > 0 && n_made == 0) return ANONSET_ERR_VALUE;   /* not l-eligible */
    /* residue: fewer than l runs still hold tuples (one each when the set is
     * l-eligible); each goes to the first bucket of this call whose value
     * set lacks it.  Residue placed earlier counts as a member too. */
    int64_t res_run[64], res_bkt[64], n_res = 0;
    int64_t *rrun = res_run, *rbkt = res_bkt;
    int64_t cap = 64;
    int status = ANONSET_OK;
    while (hs > 0) {
        int64_t r = heap_pop(heap, &hs, left);
        while (left[r] > 0) {
            int64_t found = -1;
            for (int64_t b = 0; b < n_made && found < 0; b++) {
                int clash = 0;
                for (int64_t j = 0; j < l && !clash; j++) clash = members[b * l + j] == r;
                for (int64_t j = 0; j < n_res && !clash; j++)
                    clash = rbkt[j] == b && rrun[j] == r;
                if (!clash) found = b;
            }
            if (found < 0) { status = ANONSET_ERR_VALUE; goto done; }
            if (n_res == cap) {
                int64_t *nr = (int64_t *)malloc((size_t)(2 * cap) * sizeof(int64_t));
                int64_t *nbk = (int64_t *)malloc((size_t)(2 * cap) * sizeof(int64_t));
                if (!nr || !nbk) { free(nr); free(nbk); status = ANONSET_ERR_NOMEM; goto done; }
                memcpy(nr, rrun, (size_t)n_res * sizeof(int64_t));
                memcpy(nbk, rbkt, (size_t)n_res * sizeof(int64_t));
                if (rrun != res_run) { free(rrun); free(rbkt); }
                rrun = nr; rbkt = nbk; cap *= 2;
            }
            rrun[n_res] = r; rbkt[n_res] = found; n_res++;
            bucket[next[r]++] = first + found;
            left[r]--;
        }
    }
done:
    if (rrun != res_run) { free(rrun); free(rbkt); }
    return status;
}

static int eligible(const int64_t *off, int64_t r0, int64_t r1, int64_t l) {
    int64_t n = off[r1] - off[r0], mx = 0;
    if (n <= 0) return 0;
    for (int64_t r = r0; r < r1; r++) {
        int64_t c = off[r + 1] - off[r];
        if (c > mx) mx = c;
    }
    return mx * l <= n;
}

int anonset_lgb_bucketize(int64_t n_runs, const int64_t *run_count, int64_t l,
                          int64_t *bucket, int64_t *n_buckets) {
    if (n_runs <= 0 || l < 1) return ANONSET_ERR_VALUE;
    int status = ANONSET_OK;
    int64_t *off = (int64_t *)malloc((size_t)(n_runs + 1) * sizeof(int64_t));
    int64_t *left = (int64_t *)malloc((size_t)n_runs * sizeof(int64_t));
    int64_t *next = (int64_t *)malloc((size_t)n_runs * sizeof(int64_t));
    int64_t *heap = (int64_t *)malloc((size_t)n_runs * sizeof(int64_t));
    /* a DFS over run ranges: at most one pending range per recursion level
     * plus one, and a range always has >= 1 run: n_runs + 1 pairs suffice */
    int64_t *stack = (int64_t *)malloc((size_t)(2 * n_runs + 2) * sizeof(int64_t));
    int64_t *members = NULL;
    if (!off || !left || !next || !heap || !stack) { status = ANONSET_ERR_NOMEM; goto out; }
    off[0] = 0;
    for (int64_t r = 0; r < n_runs; r++) {
        if (run_count[r] < 1) { status = ANONSET_ERR_VALUE; goto out; }
        off[r + 1] = off[r] + run_count[r];
    }
    members = (int64_t *)malloc((size_t)(off[n_runs] > 0 ? off[n_runs] : 1) * sizeof(int64_t));
    if (!members) { status = ANONSET_ERR_NOMEM; goto out; }
    if (!eligible(off, 0, n_runs, l)) { status = ANONSET_ERR_VALUE; goto out; }
    int64_t sp = 0, nb = 0;
    stack[sp++] = 0; stack[sp++] = n_runs;
    while (sp > 0) {
        int64_t r1 = stack[--sp], r0 = stack[--sp];
        int64_t n = off[r1] - off[r0];
        /* lower weighted median: the run holding tuple (n - 1) / 2 */
        int64_t target = off[r0] + (n - 1) / 2, m = r0;
        while (off[m + 1] <= target) m++;
        /* small = [r0, m], big = (m, r1): split while both stay l-eligible */
        if (m + 1 < r1 && eligible(off, r0, m + 1, l) && eligible(off, m + 1, r1, l)) {
            stack[sp++] = m + 1; stack[sp++] = r1;      /* big later */
            stack[sp++] = r0; stack[sp++] = m + 1;      /* small first */
        } else {
            status = divide_buckets(r0, r1, off, l, left, next, heap, members, bucket, &nb);
            if (status != ANONSET_OK) goto out;
        }
    }
    *n_buckets = nb;
out:
    free(off); free(left); free(next); free(heap); free(stack); free(members);
    return status;
}

/* ------------------------------------------------------ cost of a range */

static inline double range_cost(int32_t kind, const double *tab, int32_t d, int32_t lo,
                                int32_t hi) {
    return kind == 0 ? tab[hi] - tab[lo] : tab[(int64_t)lo * d + hi];
}

typedef struct {
    int64_t n_total;
    const int32_t *codes;
    int32_t na;
    const int32_t *attrs, *dom, *kind;
    const int64_t *off;
    const double *tab;
} lgb_ctx;

static inline int32_t code_of(const lgb_ctx *c, int32_t j, int64_t row) {
    return c->codes[(int64_t)c->attrs[j] * c->n_total + row];
}

static inline double cost_of(const lgb_ctx *c, int32_t j, int32_t lo, int32_t hi) {
    int32_t a = c->attrs[j];
    return range_cost(c->kind[a], c->tab + c->off[a], c->dom[a], lo, hi);
}

/* ------------------------------------------------------------------ Alg. 3 */


/* k-th smallest of v[0..n-1] (v is permuted); Hoare quickselect with a
 * median-of-three pivot */
static int32_t select_kth(int32_t *v, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int32_t a = v[lo], b = v[mid], c = v[hi];
        int32_t p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < p) i++;
            while (v[j] > p) j--;
            if (i <= j) { int32_t t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

typedef struct { double w; int32_t j, lo, hi; } dim_order;

static int cmp_dim(const void *x, const void *y) {
    const dim_order *a = (const dim_order *)x, *b = (const dim_order *)y;
    if (a->w > b->w) return -1;
    if (a->w < b->w) return 1;
    return (a->j > b->j) - (a->j < b->j);
}

int anonset_lgb_mondrian(int64_t m, int64_t *idx, int64_t n_total, const int32_t *codes,
                         int32_t na, const int32_t *attrs, const int32_t *dom,
                         const int32_t *cost_kind, const int64_t *cost_off,
                         const double *cost_tab, int64_t k, int32_t below_max,
                         int64_t *group_end, int64_t *n_groups) {
    if (m < k || k < 1 || na < 0) return ANONSET_ERR_VALUE;
    lgb_ctx c = {n_total, codes, na, attrs, dom, cost_kind, cost_off, cost_tab};
    int status = ANONSET_OK;
    int32_t *vals = (int32_t *)malloc((size_t)m * sizeof(int32_t));
    int64_t *right = (int64_t *)malloc((size_t)m * sizeof(int64_t));
    dim_order *ord = (dim_order *)malloc((size_t)(na > 0 ? na : 1) * sizeof(dim_order));
    /* DFS over index ranges: the depth is at most m / k */
    int64_t *stack = (int64_t *)malloc((size_t)(2 * (m / k) + 4) * sizeof(int64_t));
    if (!vals || !right || !ord || !stack) { status = ANONSET_ERR_NOMEM; goto out; }
    int64_t sp = 0, ng = 0;
    stack[sp++] = 0; stack[sp++] = m;
    while (sp > 0) {
        int64_t e = stack[--sp], s = stack[--sp], sz = e - s;
        int split = 0;
        if (sz >= 2 * k) {
            /* choose_dimension: attributes in decreasing NCP width of the
             * node's range (ties: attribute order), as Mondrian's widest
             * normalized range; the next one whenever a split fails */
            for (int32_t j = 0; j < na; j++) {
                int32_t lo = code_of(&c, j, idx[s]), hi = lo;
                for (int64_t i = s + 1; i < e; i++) {
                    int32_t v = code_of(&c, j, idx[i]);
                    if (v < lo) lo = v;
                    if (v > hi) hi = v;
                }
                ord[j].w = lo == hi ? -1.0 : cost_of(&c, j, lo, hi);
                ord[j].j = j; ord[j].lo = lo; ord[j].hi = hi;
            }
            qsort(ord, (size_t)na, sizeof(dim_order), cmp_dim);
            for (int32_t t = 0; t < na && !split; t++) {
                if (ord[t].w < 0) break;            /* a single value: no split */
                int32_t j = ord[t].j;
                for (int64_t i = s; i < e; i++) vals[i - s] = code_of(&c, j, idx[i]);
                int32_t med = select_kth(vals, sz, (sz - 1) / 2);
                if (below_max && med == ord[t].hi) {
                    /* the lower median is the node's largest value (a value
                     * held by most rows and last in code order): split below
                     * it instead of leaving S_r empty */
                    int32_t below = ord[t].lo;
                    for (int64_t i = s; i < e; i++) {
                        int32_t v = code_of(&c, j, idx[i]);
                        if (v < med && v > below) below = v;
                    }
                    med = below;
                }
                int64_t nl = 0;
                for (int64_t i = s; i < e; i++) nl += code_of(&c, j, idx[i]) <= med;
                if (nl >= k && sz - nl >= k) {
                    /* stable partition of idx[s..e) by code <= med */
                    int64_t w = s, r = 0;
                    for (int64_t i = s; i < e; i++) {
                        if (code_of(&c, j, idx[i]) <= med) idx[w++] = idx[i];
                        else right[r++] = idx[i];
                    }
                    memcpy(idx + w, right, (size_t)r * sizeof(int64_t));
                    stack[sp++] = s + nl; stack[sp++] = e;   /* right later */
                    stack[sp++] = s; stack[sp++] = s + nl;   /* left first */
                    split = 1;
                }
            }
        }
        if (!split) group_end[ng++] = e;
    }
    *n_groups = ng;
out:
    free(vals); free(right); free(ord); free(stack);
    return status;
}

/* ------------------------------------------------------------------ Alg. 4 */

/* NCP of generalizing rows a and b together (Xu et al.'s distance) */
static double pair_cost(const lgb_ctx *c, int64_t a, int64_t b) {
    double s = 0.0;
    for (int32_t j = 0; j < c->na; j++) {
        int32_t x = code_of(c, j, a), y = code_of(c, j, b);
        s += x <= y ? cost_of(c, j, x, y) : cost_of(c, j, y, x);
    }
    return s;
}

/* NCP per tuple of box [lo, hi] widened by row r */
static double widened_cost(const lgb_ctx *c, const int32_t *lo, const int32_t *hi, int64_t r) {
    double s = 0.0;
    for (int32_t j = 0; j < c->na; j++) {
        int32_t v = code_of(c, j, r);
        s += cost_of(c, j, v < lo[j] ? v : lo[j], v > hi[j] ? v : hi[j]);
    }
    return s;
}

static void widen(const lgb_ctx *c, int32_t *lo, int32_t *hi, int64_t r) {
    for (int32_t j = 0; j < c->na; j++) {
        int32_t v = code_of(c, j, r);
        if (v < lo[j]) lo[j] = v;
        if (v > hi[j]) hi[j] = v;
    }
}

static void init_box(const lgb_ctx *c, int32_t *lo, int32_t *hi, int64_t r) {
    for (int32_t j = 0; j < c->na; j++) lo[j] = hi[j] = code_of(c, j, r);
}

typedef struct { double key; int64_t pos; } keyed;

static int cmp_keyed(const void *x, const void *y) {
    const keyed *a = (const keyed *)x, *b = (const keyed *)y;
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* rounds of the farthest-point seed search (Xu et al. repeat it a few times) */
#define LGB_SEED_ROUNDS 3

int anonset_lgb_topdown(int64_t m, int64_t *idx, int64_t n_total, const int32_t *codes,
                        int32_t na, const int32_t *attrs, const int32_t *dom,
                        const int32_t *cost_kind, const int64_t *cost_off,
                        const double *cost_tab, int64_t k, int32_t balance,
                        int64_t *group_end, int64_t *n_groups) {
    if (m < k || k < 1 || na < 0) return ANONSET_ERR_VALUE;
    lgb_ctx c = {n_total, codes, na, attrs, dom, cost_kind, cost_off, cost_tab};
    int status = ANONSET_OK;
    int32_t nb = na > 0 ? na : 1;
    int32_t *box = (int32_t *)malloc((size_t)(4 * nb) * sizeof(int32_t));
    uint8_t *side = (uint8_t *)malloc((size_t)m);
    int64_t *tmp = (int64_t *)malloc((size_t)m * sizeof(int64_t));
    keyed *keys = (keyed *)malloc((size_t)m * sizeof(keyed));
    int64_t *stack = (int64_t *)malloc((size_t)(2 * (m / k) + 4) * sizeof(int64_t));
    if (!box || !side || !tmp || !keys || !stack) { status = ANONSET_ERR_NOMEM; goto out; }
    int32_t *lo1 = box, *hi1 = box + nb, *lo2 = box + 2 * nb, *hi2 = box + 3 * nb;
    int64_t sp = 0, ng = 0;
    stack[sp++] = 0; stack[sp++] = m;
    while (sp > 0) {
        int64_t e = stack[--sp], s = stack[--sp], sz = e - s;
        if (sz < 2 * k || na == 0) { group_end[ng++] = e; continue; }
        /* find_seeds: u = first row, then alternate farthest points */
        int64_t u = s, v = s;
        for (int r = 0; r < LGB_SEED_ROUNDS; r++) {
            double best = -1.0;
            int64_t arg = u;
            for (int64_t i = s; i < e; i++) {
                double d = pair_cost(&c, idx[u], idx[i]);
                if (d > best) { best = d; arg = i; }
            }
            if (arg == v) break;                 /* converged */
            v = u; u = arg;
        }
        if (u == v) { group_end[ng++] = e; continue; }   /* all rows identical */
        /* divide_table: greedy assignment by the increase of the group NCP
         * (|G| + 1) * ncp(G + t) - |G| * ncp(G), in the subset's order */
        init_box(&c, lo1, hi1, idx[u]); init_box(&c, lo2, hi2, idx[v]);
        double c1 = 0.0, c2 = 0.0;
        int64_t n1 = 1, n2 = 1;
        for (int64_t i = s; i < e; i++) side[i - s] = 2;
        side[u - s] = 0; side[v - s] = 1;
        for (int64_t i = s; i < e; i++) {
            if (side[i - s] != 2) continue;
            double w1 = widened_cost(&c, lo1, hi1, idx[i]);
            double w2 = widened_cost(&c, lo2, hi2, idx[i]);
            double d1 = (double)(n1 + 1) * w1 - (double)n1 * c1;
            double d2 = (double)(n2 + 1) * w2 - (double)n2 * c2;
            if (d1 < d2 || (d1 == d2 && n1 <= n2)) {
                side[i - s] = 0; widen(&c, lo1, hi1, idx[i]); c1 = w1; n1++;
            } else {
                side[i - s] = 1; widen(&c, lo2, hi2, idx[i]); c2 = w2; n2++;
            }
        }
        /* Xu et al.'s adjustment: a side with fewer than k rows takes the
         * k - |G| rows of the other side that widen it least (balance != 0;
         * with balance == 0, Alg. 4 as printed: an undersized side makes the
         * whole node one group, line 19) */
        if (balance && (n1 < k || n2 < k)) {
            uint8_t small = n1 < k ? 0 : 1;
            int32_t *slo = small == 0 ? lo1 : lo2, *shi = small == 0 ? hi1 : hi2;
            int64_t need = k - (small == 0 ? n1 : n2), nk = 0;
            for (int64_t i = s; i < e; i++) {
                if (side[i - s] == small || i == u || i == v) continue;
                keys[nk].key = widened_cost(&c, slo, shi, idx[i]);
                keys[nk].pos = i;
                nk++;
            }
            qsort(keys, (size_t)nk, sizeof(keyed), cmp_keyed);
            for (int64_t t = 0; t < need && t < nk; t++) side[keys[t].pos - s] = small;
            if (small == 0) { n1 += need; n2 -= need; } else { n2 += need; n1 -= need; }
        }
        if (n1 < k || n2 < k) { group_end[ng++] = e; continue; }   /* Alg. 4 line 19 */
        int64_t w = s, r = 0;
        for (int64_t i = s; i < e; i++) {
            if (side[i - s] == 0) idx[w++] = idx[i];
            else tmp[r++] = idx[i];
        }
        memcpy(idx + w, tmp, (size_t)r * sizeof(int64_t));
        stack[sp++] = s + n1; stack[sp++] = e;
        stack[sp++] = s; stack[sp++] = s + n1;
    }
    *n_groups = ng;
out:
    free(box); free(side); free(tmp); free(keys); free(stack);
    return status;
}
