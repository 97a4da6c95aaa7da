/* Kernels of the papers' partition baselines; see baselines.h. */
#include "baselines.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- Anatomy's groups */

/* Sort keys descending (qsort needs no context: the key packs count and code). */
static int cmp_desc(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a < b) - (a > b);
}

/* First position p in [from, to) whose value has at most v rows left; the
 * values ord[from..to) are in non-increasing order of left[]. */
static int64_t first_at_most(const int64_t *left, const int32_t *ord, int64_t from,
                             int64_t to, int64_t v) {
    while (from < to) {
        int64_t mid = from + (to - from) / 2;
        if (left[ord[mid]] <= v) to = mid;
        else from = mid + 1;
    }
    return from;
}

/* After the first l values of ord (sorted by left[], descending) lost one row
 * each, move the values that now trail equal-count values behind them.  The
 * only disorder is a run A = [a, l) of values that had `was` rows (now
 * was - 1) followed by a run B = [l, b) still at `was`: exchange them. */
static void restore_order(const int64_t *left, int32_t *ord, int64_t l, int64_t live) {
    if (live <= l) return;
    int64_t was = left[ord[l - 1]] + 1;
    if (left[ord[l]] != was) return;
    int64_t a = first_at_most(left, ord, 0, l, was - 1);
    int64_t b = first_at_most(left, ord, l, live, was - 1);
    int64_t len_a = l - a, len_b = b - l;
    int64_t swaps = len_a < len_b ? len_a : len_b;
    /* B's last `swaps` values go to A's first places: both runs end sorted */
    int64_t from = len_a < len_b ? b - swaps : l;
    for (int64_t i = 0; i < swaps; i++) {
        int32_t t = ord[a + i];
        ord[a + i] = ord[from + i];
        ord[from + i] = t;
    }
}

int anonset_diverse_groups(int64_t n, int64_t n_seg, const int64_t *seg_off,
                           const int32_t *codes, int32_t d, int64_t l,
                           int64_t *group, int64_t *n_groups) {
    if (n < 0 || n_seg < 0 || d < 1 || l < 1) return ANONSET_ERR_VALUE;
    if (n_seg > 0 && (seg_off[0] != 0 || seg_off[n_seg] != n)) return ANONSET_ERR_VALUE;
    for (int64_t i = 0; i < n; i++) {
        if (codes[i] < 0 || codes[i] >= d) return ANONSET_ERR_VALUE;
        group[i] = -1;
    }
    int status = ANONSET_OK;
    int64_t *left = (int64_t *)calloc((size_t)d, sizeof(int64_t));
    int64_t *start = (int64_t *)calloc((size_t)d, sizeof(int64_t));
    int64_t *taken = (int64_t *)calloc((size_t)d, sizeof(int64_t));
    int32_t *ord = (int32_t *)malloc((size_t)d * sizeof(int32_t));
    int64_t *keys = (int64_t *)malloc((size_t)d * sizeof(int64_t));
    int64_t *byval = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    int64_t g = 0;
    if (!left || !start || !taken || !ord || !keys || !byval) {
        status = ANONSET_ERR_NOMEM;
        goto out;
    }
    for (int64_t s = 0; s < n_seg; s++) {
        int64_t lo = seg_off[s], hi = seg_off[s + 1], k = 0;
        if (hi < lo) { status = ANONSET_ERR_VALUE; goto out; }
        for (int64_t i = lo; i < hi; i++)
            if (left[codes[i]]++ == 0) ord[k++] = codes[i];
        /* the segment's positions grouped by value, in position order */
        int64_t at = lo;
        for (int64_t p = 0; p < k; p++) {
            start[ord[p]] = at;
            at += left[ord[p]];
        }
        for (int64_t i = lo; i < hi; i++) {
            int32_t v = codes[i];
            byval[start[v] + taken[v]++] = i;
        }
        for (int64_t p = 0; p < k; p++) {
            taken[ord[p]] = 0;
            keys[p] = left[ord[p]] * (int64_t)d + (d - 1 - ord[p]);
        }
        qsort(keys, (size_t)k, sizeof(int64_t), cmp_desc);
        for (int64_t p = 0; p < k; p++) ord[p] = (int32_t)(d - 1 - keys[p] % d);
        int64_t live = k;
        while (live >= l) {
            for (int64_t j = 0; j < l; j++) {
                int32_t v = ord[j];
                group[byval[start[v] + taken[v]++]] = g;
                left[v]--;
            }
            g++;
            restore_order(left, ord, l, live);
            live = first_at_most(left, ord, 0, live, 0);
        }
        for (int64_t p = 0; p < k; p++) {
            left[ord[p]] = 0;
            taken[ord[p]] = 0;
        }
    }
    *n_groups = g;
out:
    free(left);
    free(start);
    free(taken);
    free(ord);
    free(keys);
    free(byval);
    return status;
}

/* -------------------------------------------------------- l-diverse Mondrian */

/* k-th smallest (0-based) of buf[0..m-1], reordering buf (Hoare selection). */
static int32_t select_kth(int32_t *buf, int64_t m, int64_t k) {
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        int32_t pivot = buf[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (buf[i] < pivot) i++;
            while (buf[j] > pivot) j--;
            if (i <= j) {
                int32_t t = buf[i];
                buf[i++] = buf[j];
                buf[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return buf[k];
    }
    return buf[k];
}

/* Is a set of rows with these counts (over d_s values, `rows` in all)
 * frequency l-diverse? */
static int l_diverse(const int64_t *cnt, int32_t d_s, int64_t rows, int64_t l) {
    if (rows <= 0) return 0;
    for (int32_t v = 0; v < d_s; v++)
        if (cnt[v] * l > rows) return 0;
    return 1;
}

/* Try the cut "x < cut" on attribute column col of the node idx[0..m-1]:
 * returns the size of the left side when both sides are l-diverse (and the
 * rows are then reordered, left side first), else -1. */
static int64_t try_cut(int64_t *idx, int64_t m, const int32_t *col, int32_t cut,
                       const int32_t *sens, int32_t d_s, int64_t l,
                       const int64_t *total, int64_t *left_cnt) {
    int64_t nl = 0;
    memset(left_cnt, 0, (size_t)d_s * sizeof(int64_t));
    for (int64_t i = 0; i < m; i++)
        if (col[idx[i]] < cut) {
            left_cnt[sens[idx[i]]]++;
            nl++;
        }
    if (nl == 0 || nl == m || !l_diverse(left_cnt, d_s, nl, l)) return -1;
    for (int32_t v = 0; v < d_s; v++)
        if ((total[v] - left_cnt[v]) * l > m - nl) return -1;
    int64_t i = 0, j = m - 1;        /* stable enough: groups are sets */
    while (i <= j) {
        if (col[idx[i]] < cut) i++;
        else {
            int64_t t = idx[i];
            idx[i] = idx[j];
            idx[j--] = t;
        }
    }
    return nl;
}

int anonset_mondrian_ldiverse(int64_t m, int64_t *idx, int64_t n_total, int32_t q,
                              const int32_t *codes, const int32_t *dom,
                              const int32_t *sens, int32_t d_s, int64_t l, int32_t tries,
                              int64_t *group_end, int64_t *n_groups) {
    if (m < 1 || q < 0 || d_s < 1 || l < 1 || tries < 1 || n_total < m) return ANONSET_ERR_VALUE;
    for (int32_t a = 0; a < q; a++)
        if (dom[a] < 1) return ANONSET_ERR_VALUE;
    for (int64_t i = 0; i < m; i++) {
        int64_t r = idx[i];
        if (r < 0 || r >= n_total || sens[r] < 0 || sens[r] >= d_s) return ANONSET_ERR_VALUE;
        for (int32_t a = 0; a < q; a++) {
            int32_t c = codes[(int64_t)a * n_total + r];
            if (c < 0 || c >= dom[a]) return ANONSET_ERR_VALUE;
        }
    }
    int status = ANONSET_OK;
    int64_t *total = (int64_t *)calloc((size_t)d_s, sizeof(int64_t));
    int64_t *left_cnt = (int64_t *)calloc((size_t)d_s, sizeof(int64_t));
    int32_t *buf = (int32_t *)malloc((size_t)m * sizeof(int32_t));
    int32_t *lo_v = (int32_t *)malloc((size_t)(q > 0 ? q : 1) * sizeof(int32_t));
    int32_t *hi_v = (int32_t *)malloc((size_t)(q > 0 ? q : 1) * sizeof(int32_t));
    int32_t *tried = (int32_t *)malloc((size_t)(q > 0 ? q : 1) * sizeof(int32_t));
    /* DFS over [begin, end) ranges of idx: a node pushes at most two ranges
     * and each range holds >= l rows, so 2 * (m / l + 1) pairs suffice */
    int64_t cap = 2 * (m / l + 2);
    int64_t *stack = (int64_t *)malloc((size_t)(2 * cap) * sizeof(int64_t));
    int64_t sp = 0, ng = 0;
    if (!total || !left_cnt || !buf || !lo_v || !hi_v || !tried || !stack) {
        status = ANONSET_ERR_NOMEM;
        goto out;
    }
    for (int64_t i = 0; i < m; i++) total[sens[idx[i]]]++;
    if (!l_diverse(total, d_s, m, l)) { status = ANONSET_ERR_VALUE; goto out; }
    stack[sp++] = 0;
    stack[sp++] = m;
    while (sp > 0) {
        int64_t end = stack[--sp], begin = stack[--sp], size = end - begin;
        int64_t *node = idx + begin, cut_at = -1;
        memset(total, 0, (size_t)d_s * sizeof(int64_t));
        for (int64_t i = 0; i < size; i++) total[sens[node[i]]]++;
        for (int32_t a = 0; a < q; a++) {
            const int32_t *col = codes + (int64_t)a * n_total;
            lo_v[a] = hi_v[a] = col[node[0]];
            for (int64_t i = 1; i < size; i++) {
                int32_t c = col[node[i]];
                if (c < lo_v[a]) lo_v[a] = c;
                if (c > hi_v[a]) hi_v[a] = c;
            }
            tried[a] = lo_v[a] == hi_v[a];      /* a constant column cannot be cut */
        }
        for (;;) {
            int32_t best = -1;
            double wbest = -1.0;
            for (int32_t a = 0; a < q; a++) {
                if (tried[a]) continue;
                double w = dom[a] > 1 ? (double)(hi_v[a] - lo_v[a]) / (double)(dom[a] - 1) : 0.0;
                if (w > wbest) { wbest = w; best = a; }
            }
            if (best < 0) break;
            tried[best] = 1;
            const int32_t *col = codes + (int64_t)best * n_total;
            /* the median first, then ranks alternately below and above it */
            int64_t mid = (size - 1) / 2, step = size / (2 * tries) + 1;
            for (int32_t t = 0; t < tries && cut_at < 0; t++) {
                int64_t off = ((t + 1) / 2) * step, rank = t % 2 ? mid - off : mid + off;
                if (rank < 0 || rank >= size) continue;
                for (int64_t i = 0; i < size; i++) buf[i] = col[node[i]];
                int32_t v = select_kth(buf, size, rank);
                /* left = {x <= v}, else left = {x < v} */
                cut_at = try_cut(node, size, col, v + 1, sens, d_s, l, total, left_cnt);
                if (cut_at < 0) cut_at = try_cut(node, size, col, v, sens, d_s, l, total, left_cnt);
            }
            if (cut_at >= 0) break;
        }
        if (cut_at < 0) {
            if (ng >= m / l + 1) { status = ANONSET_ERR_VALUE; goto out; }
            group_end[ng++] = end;
            continue;
        }
        if (sp + 4 > 2 * cap) { status = ANONSET_ERR_VALUE; goto out; }
        stack[sp++] = begin + cut_at;          /* right half, after the left one */
        stack[sp++] = end;
        stack[sp++] = begin;
        stack[sp++] = begin + cut_at;
    }
    *n_groups = ng;
out:
    free(total);
    free(left_cnt);
    free(buf);
    free(lo_v);
    free(hi_v);
    free(tried);
    free(stack);
    return status;
}
