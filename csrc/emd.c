/* Tree-metric EMD kernels; see emd.h for the formula and the contract. */
#include "emd.h"
#include "anonset_common.h"

#include <math.h>
#include <stdlib.h>

/* Trees up to this many nodes use a stack buffer (Adult's largest hierarchy,
 * age in years, has 73 leaves + 24 inner nodes). */
#define EMD_STACK_NODES 512

int anonset_tree_check(int64_t n_nodes, int64_t d, const int64_t *parent)
{
    if (parent == NULL || d < 1 || n_nodes < d)
        return ANONSET_ERR_VALUE;
    if (parent[n_nodes - 1] != -1)
        return ANONSET_ERR_VALUE;
    for (int64_t v = 0; v < n_nodes - 1; ++v) {
        if (parent[v] <= v || parent[v] >= n_nodes)
            return ANONSET_ERR_VALUE;
    }
    return ANONSET_OK;
}

/* One bottom-up pass: extra[v] accumulates sum over leaves below v of
 * (p_i - q_i); each non-root edge costs weight[v] * |extra[v]|.  extra[0..d)
 * holds p - q on entry; inner entries are zeroed here. */
static double tree_pass(int64_t d, int64_t n_nodes, const int64_t *parent,
                        const double *weight, double *extra)
{
    for (int64_t v = d; v < n_nodes; ++v)
        extra[v] = 0.0;
    double acc = 0.0;
    for (int64_t v = 0; v < n_nodes - 1; ++v) {
        const double e = extra[v];
        acc += weight[v] * fabs(e);
        extra[parent[v]] += e;
    }
    return acc;
}

static double row_i64(int64_t d, const int64_t *row, const double *q, int64_t n_nodes,
                      const int64_t *parent, const double *weight, double *extra)
{
    int64_t s = 0;   /* exact: 64-bit counts never overflow at census scale */
    for (int64_t i = 0; i < d; ++i)
        s += row[i];
    if (s <= 0)
        return NAN;
    const double sd = (double)s;
    for (int64_t i = 0; i < d; ++i)
        extra[i] = (double)row[i] / sd - q[i];
    return tree_pass(d, n_nodes, parent, weight, extra);
}

static double row_f64(int64_t d, const double *row, const double *q, int64_t n_nodes,
                      const int64_t *parent, const double *weight, double *extra)
{
    double s = 0.0;
    for (int64_t i = 0; i < d; ++i)
        s += row[i];
    if (!(s > 0.0))
        return NAN;
    for (int64_t i = 0; i < d; ++i)
        extra[i] = row[i] / s - q[i];
    return tree_pass(d, n_nodes, parent, weight, extra);
}

/* kind 0: int64 rows, kind 1: double rows.  Work is split into fixed chunks of
 * ANONSET_EMD_CHUNK rows (never by thread count); each output depends on its
 * own row only, so any thread count gives bit-identical results. */
static int batch(int kind, int64_t n_rows, int64_t d, const void *P, const double *q,
                 int64_t n_nodes, const int64_t *parent, const double *weight,
                 int n_threads, double *out)
{
    if (n_rows < 0 || (n_rows > 0 && (P == NULL || out == NULL)) || q == NULL
        || weight == NULL || n_threads < 1)
        return ANONSET_ERR_VALUE;
    int status = anonset_tree_check(n_nodes, d, parent);
    if (status != ANONSET_OK)
        return status;
    const int64_t n_chunks = (n_rows + ANONSET_EMD_CHUNK - 1) / ANONSET_EMD_CHUNK;
    int failed = 0;
    /* never more threads than chunks, nor than ANONSET_EMD_WORK_PER_THREAD
     * node visits each: waking a second thread costs more than a small batch
     * (8 ms vs 0.05 ms for 142 rows on the loaded 2-core dev VM).  Outputs
     * do not depend on the thread count either way. */
    {
        const double work = (double)n_rows * (double)n_nodes;
        const double by_work = 1.0 + work / (double)ANONSET_EMD_WORK_PER_THREAD;
        if ((double)n_threads > by_work)
            n_threads = (int)by_work;
        if ((int64_t)n_threads > n_chunks)
            n_threads = n_chunks > 0 ? (int)n_chunks : 1;
        if (n_threads < 1)
            n_threads = 1;
#if ANONSET_FORK_GUARD
        if (anonset_fork_child)         /* a fork child: see anonset_common.h */
            n_threads = 1;
#endif
    }
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for default(none) schedule(static) num_threads(n_threads) \
        shared(kind, n_chunks, n_rows, d, P, q, n_nodes, parent, weight, out, failed)
#else
    (void)n_threads;
#endif
    for (int64_t c = 0; c < n_chunks; ++c) {
        double stack_buf[EMD_STACK_NODES];
        double *extra = stack_buf;
        if (n_nodes > EMD_STACK_NODES) {
            extra = (double *)malloc((size_t)n_nodes * sizeof(double));
            if (extra == NULL) {
#if ANONSET_HAVE_OPENMP
                #pragma omp atomic write
#endif
                failed = 1;
                continue;
            }
        }
        const int64_t r0 = c * ANONSET_EMD_CHUNK;
        const int64_t r1 = r0 + ANONSET_EMD_CHUNK < n_rows ? r0 + ANONSET_EMD_CHUNK : n_rows;
        if (kind == 0) {
            const int64_t *Pi = (const int64_t *)P;
            for (int64_t r = r0; r < r1; ++r)
                out[r] = row_i64(d, Pi + r * d, q, n_nodes, parent, weight, extra);
        } else {
            const double *Pf = (const double *)P;
            for (int64_t r = r0; r < r1; ++r)
                out[r] = row_f64(d, Pf + r * d, q, n_nodes, parent, weight, extra);
        }
        if (extra != stack_buf)
            free(extra);
    }
    return failed ? ANONSET_ERR_NOMEM : ANONSET_OK;
}

int anonset_tree_emd_batch_i64(int64_t n_rows, int64_t d, const int64_t *P,
                               const double *q, int64_t n_nodes,
                               const int64_t *parent, const double *weight,
                               int n_threads, double *out)
{
    return batch(0, n_rows, d, P, q, n_nodes, parent, weight, n_threads, out);
}

int anonset_tree_emd_batch_f64(int64_t n_rows, int64_t d, const double *P,
                               const double *q, int64_t n_nodes,
                               const int64_t *parent, const double *weight,
                               int n_threads, double *out)
{
    return batch(1, n_rows, d, P, q, n_nodes, parent, weight, n_threads, out);
}

/* One pass: sum, and flags for non-finite / negative entries.  Returns the
 * bad code offset (0 OK, 1 non-finite, 2 negative, 3 zero sum). */
static int scan(int64_t d, const double *x, double *sum)
{
    double s = 0.0;
    int nonfinite = 0, negative = 0;
    for (int64_t i = 0; i < d; ++i) {
        const double v = x[i];
        nonfinite |= !isfinite(v);
        negative |= v < 0.0;
        s += v;
    }
    *sum = s;
    if (nonfinite)
        return 1;
    if (negative)
        return 2;
    if (!(s > 0.0))
        return 3;
    return 0;
}

int anonset_tree_emd_pair(int64_t d, const double *p, const double *q,
                          int64_t n_nodes, const int64_t *parent,
                          const double *weight, double *out, int *bad)
{
    int dummy;
    if (bad == NULL)
        bad = &dummy;
    *bad = 0;
    if (p == NULL || q == NULL || weight == NULL || out == NULL) {
        *bad = 7;
        return ANONSET_ERR_VALUE;
    }
    double sp, sq;
    int b = scan(d, p, &sp);
    if (b) {
        *bad = b;
        return ANONSET_ERR_VALUE;
    }
    b = scan(d, q, &sq);
    if (b) {
        *bad = 3 + b;
        return ANONSET_ERR_VALUE;
    }
    if (anonset_tree_check(n_nodes, d, parent) != ANONSET_OK) {
        *bad = 7;
        return ANONSET_ERR_VALUE;
    }
    double stack_buf[EMD_STACK_NODES];
    double *extra = stack_buf;
    if (n_nodes > EMD_STACK_NODES) {
        extra = (double *)malloc((size_t)n_nodes * sizeof(double));
        if (extra == NULL)
            return ANONSET_ERR_NOMEM;
    }
    for (int64_t i = 0; i < d; ++i)
        extra[i] = p[i] / sp - q[i] / sq;
    *out = tree_pass(d, n_nodes, parent, weight, extra);
    if (extra != stack_buf)
        free(extra);
    return ANONSET_OK;
}
