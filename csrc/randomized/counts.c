#include "counts.h"

#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <stdint.h>

/* Offsets of the cells in the product of one row's sets: start from {0} and,
 * attribute by attribute, add member * stride.  Returns the number of cells,
 * or -1 if it would exceed cap. */
static int64_t product_offsets(int64_t i, int q, const uint64_t *const *masks,
                               const int32_t *d, const int64_t *stride,
                               int64_t *off, int64_t cap) {
    int64_t len = 1;
    off[0] = 0;
    for (int j = q - 1; j >= 0; j--) {
        int words = (d[j] + 63) >> 6;
        const uint64_t *m = masks[j] + i * words;
        int cnt = 0;
        for (int w = 0; w < words; w++) cnt += anonset_popcount64(m[w]);
        if (cnt == 0) return 0;
        if (len * cnt > cap) return -1;
        /* expand in place from the back so old entries are read before overwritten */
        int64_t newlen = len * cnt;
        int64_t pos = newlen;
        for (int w = words - 1; w >= 0; w--) {
            uint64_t bits = m[w];
            /* members of this word, highest first */
            while (bits) {
                int b = anonset_msb64(bits);
                bits &= ~((uint64_t)1 << b);
                int64_t add = (int64_t)(w * 64 + b) * stride[j];
                pos -= len;
                for (int64_t t = 0; t < len; t++) off[pos + t] = off[t] + add;
            }
        }
        /* pos == 0 here; the first block (the smallest member) was written
         * last and reads off[0..len) which still held the old values because
         * blocks are written back to front and the smallest block starts at 0. */
        len = newlen;
    }
    return len;
}

int anonset_count_w(int64_t n, int q, const uint64_t *const *masks, const int32_t *d,
                    int64_t max_set, int64_t ncells, int64_t *w, int n_threads) {
    if (q < 1 || q > 32 || max_set < 1) return ANONSET_ERR_VALUE;
    int64_t stride[32];
    int64_t s = 1;
    for (int j = q - 1; j >= 0; j--) { stride[j] = s; s *= d[j]; }
    if (s != ncells) return ANONSET_ERR_VALUE;
    int nt = anonset_threads(n_threads);
    int status = ANONSET_OK;
    int64_t **tables = (int64_t **)calloc((size_t)nt, sizeof(int64_t *));
    int32_t **tables32 = (int32_t **)calloc((size_t)nt, sizeof(int32_t *));
    if (!tables || !tables32) { free(tables); free(tables32); return ANONSET_ERR_NOMEM; }
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel num_threads(nt) default(none) \
        shared(n, q, masks, d, max_set, ncells, w, stride, tables, tables32, status, nt)
#endif
    {
        int tid = 0;
#if ANONSET_HAVE_OPENMP
        tid = omp_get_thread_num();
#endif
        /* Private tables: 32-bit counters while no cell can reach 2^31 (a
         * thread adds at most 1 per row to a cell), which halves the memory
         * traffic of the random increments; 64-bit otherwise. */
        int narrow = n < INT32_MAX;
        int64_t *tab = narrow ? NULL : (int64_t *)calloc((size_t)ncells, sizeof(int64_t));
        int32_t *tab32 = narrow ? (int32_t *)calloc((size_t)ncells, sizeof(int32_t)) : NULL;
        int64_t *off = (int64_t *)malloc((size_t)max_set * sizeof(int64_t));
        tables[tid] = tab;
        tables32[tid] = tab32;
        int ok = (tab || tab32) && off;
        if (!ok) {
#if ANONSET_HAVE_OPENMP
            #pragma omp atomic write
#endif
            status = ANONSET_ERR_NOMEM;
        }
#if ANONSET_HAVE_OPENMP
        #pragma omp for schedule(static, 4096)
#endif
        for (int64_t i = 0; i < n; i++) {
            if (!ok) continue;
            /* the cells of the first q-1 sets (prefix offsets), then the last
             * set's members, which are adjacent cells of one row of the table */
            int64_t len = product_offsets(i, q - 1, masks, d, stride, off, max_set);
            const int lw = (d[q - 1] + 63) >> 6;
            const uint64_t *lm = masks[q - 1] + i * lw;
            int32_t last[64];
            int nlast = 0, overflow = 0;
            for (int wd = 0; wd < lw && !overflow; wd++) {
                uint64_t bits = lm[wd];
                while (bits) {
                    if (nlast == 64) { overflow = 1; break; }
                    last[nlast++] = wd * 64 + anonset_ctz64(bits);
                    bits &= bits - 1;
                }
            }
            if (len < 0 || overflow || len * nlast > max_set) {
#if ANONSET_HAVE_OPENMP
                #pragma omp atomic write
#endif
                status = ANONSET_ERR_SETSIZE;
                continue;
            }
            if (narrow) {
                for (int64_t t = 0; t < len; t++) {
                    int32_t *row = tab32 + off[t];
                    for (int e = 0; e < nlast; e++) row[last[e]]++;
                }
            } else {
                for (int64_t t = 0; t < len; t++) {
                    int64_t *row = tab + off[t];
                    for (int e = 0; e < nlast; e++) row[last[e]]++;
                }
            }
        }
        free(off);
#if ANONSET_HAVE_OPENMP
        #pragma omp barrier
        #pragma omp for schedule(static)
#endif
        for (int64_t m = 0; m < ncells; m++) {
            int64_t acc = 0;
            for (int t = 0; t < nt; t++) {
                if (tables[t]) acc += tables[t][m];
                if (tables32[t]) acc += tables32[t][m];
            }
            w[m] += acc;
        }
    }
    for (int t = 0; t < nt; t++) { free(tables[t]); free(tables32[t]); }
    free(tables);
    free(tables32);
    return status;
}

int anonset_members(int64_t n, int32_t d, const uint64_t *mask, int32_t k,
                    int32_t *members, int n_threads) {
    int words = (d + 63) >> 6;
    int bad = 0;
    int nt = anonset_threads(n_threads);
    (void)nt;
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(static) default(none) \
        shared(n, mask, k, members, words) reduction(|:bad)
#endif
    for (int64_t i = 0; i < n; i++) {
        int t = 0;
        for (int w = 0; w < words; w++) {
            uint64_t bits = mask[i * words + w];
            while (bits) {
                int b = anonset_ctz64(bits);
                bits &= bits - 1;
                if (t < k) members[i * k + t] = w * 64 + b;
                t++;
            }
        }
        if (t != k) bad = 1;
    }
    return bad ? ANONSET_ERR_SETSIZE : ANONSET_OK;
}
