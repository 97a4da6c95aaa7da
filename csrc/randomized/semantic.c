#include "semantic.h"
#include "draws.h"

#include <stdlib.h>
#include <string.h>

#define W ANONSET_SEM_MAX_WORDS

/* Sampler state: |R| = k values chosen (true value first); cand = extract(S,
 * R, d) as the AND of the compatibility rows of R; excl = positions excluded
 * by the duplicate-processing windows. */
typedef struct {
    uint64_t cand[W];
    uint64_t excl[W];
    int32_t k;
} semstate;

static inline const uint64_t *row_of(const anonset_sem_spec *s, int32_t v) {
    return s->compat + (int64_t)v * s->words;
}

static inline int popcount_w(const uint64_t *m, int words) {
    int c = 0;
    for (int w = 0; w < words; w++) c += anonset_popcount64(m[w]);
    return c;
}

static inline int lowest_w(const uint64_t *m, int words) {
    for (int w = 0; w < words; w++)
        if (m[w]) return 64 * w + anonset_ctz64(m[w]);
    return -1;
}

/* Index of the r-th (0-based) set bit of m. */
static inline int select_w(const uint64_t *m, int words, int r) {
    for (int w = 0; w < words; w++) {
        int c = anonset_popcount64(m[w]);
        if (r < c) {
            uint64_t x = m[w];
            for (int i = 0; i < r; i++) x &= x - 1;
            return 64 * w + anonset_ctz64(x);
        }
        r -= c;
    }
    return -1;
}

/* Greedy count on a line: the lowest candidate, then the lowest one compatible
 * with it, ... is a maximum set of pairwise compatible candidates when the
 * compatibility is monotone in the domain order (|pos_i - pos_j| >= d).
 * Stops as soon as n are found. */
static int greedy_at_least(const anonset_sem_spec *s, const uint64_t *m, int n) {
    uint64_t cur[W];
    int words = s->words;
    memcpy(cur, m, sizeof(uint64_t) * (size_t)words);
    int count = 0;
    for (;;) {
        if (count >= n) return 1;
        int c = lowest_w(cur, words);
        if (c < 0) return 0;
        count++;
        const uint64_t *r = row_of(s, c);
        for (int w = 0; w < words; w++) cur[w] &= r[w];
    }
}

/* Is there a clique of n values in the compatibility graph restricted to m? */
static int clique_at_least(const anonset_sem_spec *s, const uint64_t *m, int n) {
    int words = s->words;
    if (n <= 0) return 1;
    int have = popcount_w(m, words);
    if (have < n) return 0;
    if (n == 1) return 1;
    uint64_t rest[W], sub[W];
    memcpy(rest, m, sizeof(uint64_t) * (size_t)words);
    while (have >= n) {
        int c = lowest_w(rest, words);
        rest[c >> 6] &= ~((uint64_t)1 << (c & 63));
        have--;
        const uint64_t *r = row_of(s, c);
        /* rest holds only values above c: each clique is tried once, from its lowest value */
        for (int w = 0; w < words; w++) sub[w] = rest[w] & r[w];
        if (clique_at_least(s, sub, n - 1)) return 1;
    }
    return 0;
}

static inline int can_complete(const anonset_sem_spec *s, const uint64_t *m, int n) {
    if (n <= 0) return 1;
    return s->ordered ? greedy_at_least(s, m, n) : clique_at_least(s, m, n);
}

/* Alg. 3 window of value c on the circle 0..F-1: 2 * radius + 1 new positions. */
static void exclude_window(const anonset_sem_spec *s, uint64_t *excl, int32_t c) {
    int32_t F = s->F, r = s->radius;
    int32_t extra = 0, added = 0;
    for (int32_t o = -r; o <= r; o++) {
        int32_t p = ((c + o) % F + F) % F;
        uint64_t b = (uint64_t)1 << (p & 63);
        if (excl[p >> 6] & b) extra++;
        else { excl[p >> 6] |= b; added++; }
    }
    int32_t p = ((c + r + 1) % F + F) % F;
    for (int32_t steps = 0; extra > 0 && steps < F; steps++) {
        uint64_t b = (uint64_t)1 << (p & 63);
        if (!(excl[p >> 6] & b)) { excl[p >> 6] |= b; extra--; }
        p = p + 1 == F ? 0 : p + 1;
    }
    (void)added;
}

static void state_init(const anonset_sem_spec *s, semstate *st, int32_t t) {
    const uint64_t *r = row_of(s, t);
    for (int w = 0; w < s->words; w++) { st->cand[w] = r[w]; st->excl[w] = 0; }
    st->k = 1;
    if (s->algo == ANONSET_SEM_DUPLICATE) exclude_window(s, st->excl, t);
}

static void state_add(const anonset_sem_spec *s, semstate *st, int32_t c) {
    const uint64_t *r = row_of(s, c);
    for (int w = 0; w < s->words; w++) st->cand[w] &= r[w];
    st->k++;
    if (s->algo == ANONSET_SEM_DUPLICATE) exclude_window(s, st->excl, c);
}

/* The values the next dummy is drawn from (uniformly); returns their number. */
static int candidates(const anonset_sem_spec *s, const semstate *st, uint64_t *out) {
    int words = s->words;
    int need = s->l - st->k - 1;           /* still to choose after this one */
    uint64_t ok[W], sub[W];
    if (need <= 0) {
        memcpy(ok, st->cand, sizeof(uint64_t) * (size_t)words);
    } else {
        memset(ok, 0, sizeof(uint64_t) * (size_t)words);
        for (int w = 0; w < words; w++) {
            uint64_t x = st->cand[w];
            while (x) {
                int c = 64 * w + anonset_ctz64(x);
                x &= x - 1;
                const uint64_t *r = row_of(s, c);
                for (int u = 0; u < words; u++) sub[u] = st->cand[u] & r[u];
                if (can_complete(s, sub, need)) ok[w] |= (uint64_t)1 << (c & 63);
            }
        }
    }
    if (s->algo == ANONSET_SEM_DUPLICATE) {
        int n = 0;
        for (int w = 0; w < words; w++) {
            out[w] = ok[w] & ~st->excl[w];
            n += anonset_popcount64(out[w]);
        }
        if (n > 0) return n;
    }
    memcpy(out, ok, sizeof(uint64_t) * (size_t)words);
    return popcount_w(out, words);
}

/* candidates() for domains of at most 64 values, on plain words. */
static inline int candidates1(const anonset_sem_spec *s, uint64_t cand, uint64_t excl,
                              int k, uint64_t *out) {
    int need = s->l - k - 1;
    uint64_t ok = cand;
    if (need > 0) {
        ok = 0;
        uint64_t x = cand;
        while (x) {
            int c = anonset_ctz64(x);
            x &= x - 1;
            uint64_t sub = cand & s->compat[c];
            if (can_complete(s, &sub, need)) ok |= (uint64_t)1 << c;
        }
    }
    if (s->algo == ANONSET_SEM_DUPLICATE && (ok & ~excl)) ok &= ~excl;
    *out = ok;
    return anonset_popcount64(ok);
}

static inline int select64(uint64_t x, int r) {
    for (int i = 0; i < r; i++) x &= x - 1;
    return anonset_ctz64(x);
}

/* ------------------------------------------------------------------ random */
#define SEM_MAIN 0x40000000u   /* | attr: word row & 15 of block row >> 4, sub 0 */
#define SEM_OVER 0x60000000u   /* | attr: blocks (row, sub 1, 2, ...) */

/* Draws (draws.h): overflow blocks are (row, SEM_OVER | attr, sub 1, 2, ...). */

static inline uint32_t bounded32(const anonset_key *key, uint64_t row, uint32_t attr,
                                 uint32_t w0, uint32_t n, uint32_t thr) {
    uint64_t x = (uint64_t)w0 * n;
    if ((uint32_t)x < thr) return anonset_bounded32_overflow(key, row, SEM_OVER | attr, 1, n, thr);
    return (uint32_t)(x >> 32);
}

/* floor(a / d) for a < 2^32 as the high half of magic * a, magic =
 * floor((2^64 - 1) / d) + 1, 2 <= d < 2^32 (Lemire, Kaser and Kurz 2019,
 * "Faster remainder by direct computation": exact for every 32-bit a). */
static inline uint32_t fastdiv(uint64_t magic, uint32_t a) {
    uint64_t lo = (magic & 0xFFFFFFFFu) * (uint64_t)a;
    uint64_t hi = (magic >> 32) * (uint64_t)a;
    return (uint32_t)((hi + (lo >> 32)) >> 32);
}

/* ------------------------------------------------------------ path trees
 * Every path of the sampler from a true value t, as a tree: node u at depth k
 * (k values chosen) has cnt(u) children, the accepted candidates of its state
 * in ascending order, each reached with probability 1 / cnt(u); the leaves
 * are at depth l - 1.  Let N(leaf) = 1 and N(u) = cnt(u) * lcm of N over the
 * children of u.  One uniform r in [0, N(root)) then picks a whole path
 * exactly: at node u, i = r mod cnt(u) is the child and r / cnt(u) goes on.
 * (Induction: r is uniform on [0, R) with N(u) | R, so r mod cnt(u) is uniform,
 * independent of r / cnt(u), which is uniform on [0, R / cnt(u)), a multiple
 * of N(child).)  Each dummy is thus uniform over the same accepted candidates
 * as in the step-by-step sampler (the law is unchanged), for one bounded
 * draw per record.  A value gets a tree when it has at most tree_budget(F)
 * nodes and N(root) < 2^32 - a function of (spec, t) only, so the output
 * stays a pure function of (key, row, attr). */
typedef struct {
    uint64_t magic;     /* for fastdiv by cnt; unused when cnt <= 1 */
    uint32_t cnt;       /* children (0 at a leaf) */
    uint32_t child;     /* index of the first child; children are contiguous */
} semnode;

typedef struct {
    semnode *node;
    uint16_t *val;      /* the value chosen on the edge into each node */
    int64_t len, cap;
    int nomem;
} semforest;

typedef struct {
    int32_t root;       /* node index, or -1: step-by-step sampler */
    uint32_t N;         /* N(root) */
    uint32_t thr;       /* 2^32 mod N */
} semroot;

static int64_t tree_budget(int32_t F) {
    int64_t b = ((int64_t)1 << 20) / F;
    return b > 4096 ? 4096 : (b < 64 ? 64 : b);
}

static int64_t forest_alloc(semforest *f, int64_t k) {
    if (f->len + k > f->cap) {
        int64_t cap = f->cap ? f->cap : 1024;
        while (cap < f->len + k) cap *= 2;
        semnode *nn = (semnode *)realloc(f->node, sizeof(semnode) * (size_t)cap);
        if (!nn) { f->nomem = 1; return -1; }
        f->node = nn;
        uint16_t *nv = (uint16_t *)realloc(f->val, sizeof(uint16_t) * (size_t)cap);
        if (!nv) { f->nomem = 1; return -1; }
        f->val = nv;
        f->cap = cap;
    }
    int64_t at = f->len;
    f->len += k;
    return at;
}

static uint64_t gcd64(uint64_t a, uint64_t b) {
    while (b) { uint64_t t = a % b; a = b; b = t; }
    return a;
}

/* Fills the subtree below node u (state st); returns N(u), or 0 when it does
 * not fit (more than `limit` nodes in the forest, N >= 2^32, a state without
 * candidates, or no memory). */
static uint64_t tree_build(const anonset_sem_spec *s, semforest *f, int64_t u,
                           const semstate *st, int64_t limit) {
    f->node[u].magic = 0;
    f->node[u].cnt = 0;
    f->node[u].child = 0;
    if (st->k >= s->l) return 1;
    uint64_t m[W];
    int cnt = candidates(s, st, m);
    if (cnt == 0 || f->len + cnt > limit) return 0;
    int64_t c0 = forest_alloc(f, cnt);
    if (c0 < 0) return 0;
    f->node[u].cnt = (uint32_t)cnt;
    f->node[u].child = (uint32_t)c0;
    f->node[u].magic = cnt > 1 ? UINT64_MAX / (uint64_t)cnt + 1 : 0;
    uint64_t L = 1;
    int64_t i = c0;
    for (int w = 0; w < s->words; w++) {
        uint64_t x = m[w];
        while (x) {
            int c = 64 * w + anonset_ctz64(x);
            x &= x - 1;
            f->val[i] = (uint16_t)c;
            semstate child = *st;
            state_add(s, &child, c);
            uint64_t n = tree_build(s, f, i, &child, limit);
            if (!n) return 0;
            L = L / gcd64(L, n) * n;
            if (L > UINT32_MAX) return 0;
            i++;
        }
    }
    uint64_t N = L * (uint64_t)cnt;
    return N > UINT32_MAX ? 0 : N;
}

/* The tree of true value t, or root = -1. */
static void tree_for(const anonset_sem_spec *s, semforest *f, int32_t t, semroot *r) {
    r->root = -1;
    int64_t start = f->len;
    if (start + 1 > (int64_t)UINT32_MAX - 4096 || forest_alloc(f, 1) < 0) return;
    f->val[start] = (uint16_t)t;
    semstate st;
    state_init(s, &st, t);
    uint64_t N = tree_build(s, f, start, &st, start + tree_budget(s->F));
    if (!N) { f->len = start; return; }
    r->root = (int32_t)start;
    r->N = (uint32_t)N;
    r->thr = N > 1 ? (uint32_t)(0u - (uint32_t)N) % (uint32_t)N : 0u;
}

static int check_spec(const anonset_sem_spec *s) {
    if (!s || !s->compat || s->F < 1 || s->F > 64 * W || s->words != (s->F + 63) / 64 ||
        s->l < 1 || s->l > s->F || s->l > ANONSET_SEM_MAX_L ||
        (s->algo != ANONSET_SEM_SIMPLE && s->algo != ANONSET_SEM_DUPLICATE) ||
        s->radius < 0 || 2 * (int64_t)s->radius + 1 > s->F)
        return 0;
    return 1;
}

#define SEM_CHUNK 4096   /* rows per task: fixed, so the schedule never depends on threads */

int anonset_sem_sample(const anonset_sem_spec *spec, const anonset_key *key,
                       int64_t n, int64_t row0, uint32_t attr,
                       const int32_t *codes, uint64_t *out, int n_threads) {
    if (!check_spec(spec) || n < 0 || row0 < 0 || attr > 0x0FFFFFFFu) return ANONSET_ERR_VALUE;
    int nt = anonset_threads(n_threads);
    (void)nt;
    int64_t nchunks = (n + SEM_CHUNK - 1) / SEM_CHUNK;
    int32_t F = spec->F;
    int words = spec->words;
    /* Which values occur (and are all codes in the domain?) */
    uint8_t *present = (uint8_t *)calloc((size_t)F, 1);
    if (!present) return ANONSET_ERR_NOMEM;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t t = codes[i];
        if ((uint32_t)t >= (uint32_t)F) { bad = 1; break; }
        present[t] = 1;
    }
    if (bad) { free(present); return ANONSET_ERR_VALUE; }
    /* Per occurring value: feasibility, its path tree where small, else the
     * state and candidates of the first step of the step-by-step sampler. */
    semroot *roots = (semroot *)calloc((size_t)F, sizeof(semroot));
    semstate *first = (semstate *)malloc(sizeof(semstate) * (size_t)F);
    uint64_t *fcand = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)F * (size_t)words);
    int32_t *fcnt = (int32_t *)calloc((size_t)F, sizeof(int32_t));
    semforest forest = {NULL, NULL, 0, 0, 0};
    int status = ANONSET_OK;
    if (!roots || !first || !fcand || !fcnt) status = ANONSET_ERR_NOMEM;
    for (int32_t t = 0; t < F && status == ANONSET_OK; t++) {
        roots[t].root = -1;
        if (!present[t]) continue;
        state_init(spec, first + t, t);
        if (!can_complete(spec, first[t].cand, spec->l - 1)) { status = ANONSET_SEM_INFEASIBLE; break; }
        tree_for(spec, &forest, t, roots + t);
        if (forest.nomem) { status = ANONSET_ERR_NOMEM; break; }
        if (roots[t].root < 0) {
            fcnt[t] = spec->l > 1 ? candidates(spec, first + t, fcand + (int64_t)t * words) : 0;
        }
    }
    free(present);
    int stuck = 0;
    const semnode *node = forest.node;
    const uint16_t *val = forest.val;
    const int l = spec->l;
    if (status == ANONSET_OK) {
#if ANONSET_HAVE_OPENMP
        #pragma omp parallel for num_threads(nt) schedule(dynamic, 1) default(none) \
            shared(spec, key, n, row0, attr, codes, out, nchunks, first, fcand, fcnt, roots, \
                   node, val, words, l) \
            reduction(|:stuck) if (nchunks > 1)
#endif
        for (int64_t ch = 0; ch < nchunks; ch++) {
            uint32_t blk[128];
            uint64_t cached = UINT64_MAX;
            int64_t end = (ch + 1) * SEM_CHUNK < n ? (ch + 1) * SEM_CHUNK : n;
            for (int64_t i = ch * SEM_CHUNK; i < end; i++) {
                int32_t t = codes[i];
                uint64_t row = (uint64_t)(row0 + i);
                /* the record's main word: word row & 15 of block (row >> 4,
                 * SEM_MAIN | attr, 0); eight blocks (128 records) per call */
                if ((row >> 7) != cached) {
                    cached = row >> 7;
                    anonset_block8(key, cached << 3, SEM_MAIN | attr, 0u, blk);
                }
                uint32_t w0 = blk[row & 127u];
                const semroot *rt = roots + t;
                if (rt->root >= 0) {
                    /* one bounded draw picks the whole path */
                    uint32_t r = rt->N > 1 ? bounded32(key, row, attr, w0, rt->N, rt->thr) : 0u;
                    uint32_t u = (uint32_t)rt->root;
                    if (words == 1) {
                        uint64_t msk = (uint64_t)1 << t;
                        for (int k = 1; k < l; k++) {
                            const semnode *nd = node + u;
                            uint32_t q = nd->cnt > 1 ? fastdiv(nd->magic, r) : r;
                            u = nd->child + (r - q * nd->cnt);
                            r = q;
                            msk |= (uint64_t)1 << val[u];
                        }
                        out[i] = msk;
                    } else {
                        uint64_t *mask = out + i * words;
                        for (int w = 0; w < words; w++) mask[w] = 0;
                        mask[t >> 6] |= (uint64_t)1 << (t & 63);
                        for (int k = 1; k < l; k++) {
                            const semnode *nd = node + u;
                            uint32_t q = nd->cnt > 1 ? fastdiv(nd->magic, r) : r;
                            u = nd->child + (r - q * nd->cnt);
                            r = q;
                            int v = val[u];
                            mask[v >> 6] |= (uint64_t)1 << (v & 63);
                        }
                    }
                    continue;
                }
                /* step by step: 16-bit draws from the main word, then from
                 * the overflow blocks */
                anonset_draws c;
                anonset_draws_init(&c, key, row, SEM_OVER | attr, 1, &w0, 1);
                uint64_t *mask = out + i * words;
                for (int w = 0; w < words; w++) mask[w] = 0;
                if (words == 1) {
                    /* F <= 64: the state lives in registers */
                    uint64_t cand = first[t].cand[0], excl = first[t].excl[0];
                    uint64_t m = fcand[t], msk = (uint64_t)1 << t;
                    int cnt = fcnt[t];
                    for (int k = 1; k < l; ) {
                        if (cnt == 0) { stuck = 1; break; }
                        int v = select64(m, (int)anonset_bounded16(&c, (uint32_t)cnt));
                        msk |= (uint64_t)1 << v;
                        cand &= spec->compat[v];
                        if (spec->algo == ANONSET_SEM_DUPLICATE) exclude_window(spec, &excl, v);
                        if (++k < l) cnt = candidates1(spec, cand, excl, k, &m);
                    }
                    mask[0] = msk;
                    continue;
                }
                semstate st = first[t];
                mask[t >> 6] |= (uint64_t)1 << (t & 63);
                while (st.k < l) {
                    uint64_t m[W];
                    int cnt;
                    if (st.k == 1) {
                        cnt = fcnt[t];
                        memcpy(m, fcand + (int64_t)t * words, sizeof(uint64_t) * (size_t)words);
                    } else {
                        cnt = candidates(spec, &st, m);
                    }
                    if (cnt == 0) { stuck = 1; break; }
                    int v = select_w(m, words, (int)anonset_bounded16(&c, (uint32_t)cnt));
                    state_add(spec, &st, v);
                    mask[v >> 6] |= (uint64_t)1 << (v & 63);
                }
            }
        }
    }
    free(roots); free(first); free(fcand); free(fcnt);
    free(forest.node); free(forest.val);
    if (status != ANONSET_OK) return status;
    return stuck ? ANONSET_SEM_INFEASIBLE : ANONSET_OK;
}

int anonset_sem_paths(const anonset_sem_spec *spec, uint32_t *N, int64_t *nodes) {
    if (!check_spec(spec)) return ANONSET_ERR_VALUE;
    semforest forest = {NULL, NULL, 0, 0, 0};
    for (int32_t t = 0; t < spec->F; t++) {
        semroot r;
        N[t] = 0;
        nodes[t] = 0;
        semstate st;
        state_init(spec, &st, t);
        if (!can_complete(spec, st.cand, spec->l - 1)) continue;
        tree_for(spec, &forest, t, &r);
        if (forest.nomem) break;
        if (r.root >= 0) { N[t] = r.N; nodes[t] = forest.len; }
        forest.len = 0;
    }
    int nomem = forest.nomem;
    free(forest.node); free(forest.val);
    return nomem ? ANONSET_ERR_NOMEM : ANONSET_OK;
}

int anonset_sem_feasible(const anonset_sem_spec *spec, int32_t *feasible) {
    if (!check_spec(spec)) return ANONSET_ERR_VALUE;
    for (int32_t t = 0; t < spec->F; t++) {
        semstate st;
        state_init(spec, &st, t);
        feasible[t] = can_complete(spec, st.cand, spec->l - 1);
    }
    return ANONSET_OK;
}

/* Depth-first walk over every path of the sampler from state st reached with
 * probability prob; q receives P(value is a dummy). */
static int walk(const anonset_sem_spec *s, const semstate *st, double prob,
                double *q, int64_t *nodes, int64_t max_nodes) {
    if (st->k >= s->l) return ANONSET_OK;
    uint64_t m[W];
    int cnt = candidates(s, st, m);
    if (cnt == 0) return ANONSET_SEM_INFEASIBLE;
    double p = prob / cnt;
    for (int w = 0; w < s->words; w++) {
        uint64_t x = m[w];
        while (x) {
            int c = 64 * w + anonset_ctz64(x);
            x &= x - 1;
            if (++*nodes > max_nodes) return ANONSET_SEM_TOO_BIG;
            q[c] += p;
            semstate child = *st;
            state_add(s, &child, c);
            int rc = walk(s, &child, p, q, nodes, max_nodes);
            if (rc != ANONSET_OK) return rc;
        }
    }
    return ANONSET_OK;
}

int anonset_sem_exact_q(const anonset_sem_spec *spec, int64_t max_nodes,
                        double *q, int64_t *nodes, int n_threads) {
    if (!check_spec(spec) || max_nodes < 0) return ANONSET_ERR_VALUE;
    int32_t F = spec->F;
    int nt = anonset_threads(n_threads);
    (void)nt;
    int status = ANONSET_OK;
    int64_t total = 0;
    memset(q, 0, sizeof(double) * (size_t)F * (size_t)F);
#if ANONSET_HAVE_OPENMP
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1) default(none) \
        shared(spec, max_nodes, q, F) reduction(max:status) reduction(+:total)
#endif
    for (int32_t t = 0; t < F; t++) {
        semstate st;
        int64_t cnt = 0;
        state_init(spec, &st, t);
        if (!can_complete(spec, st.cand, spec->l - 1)) continue;
        int rc = walk(spec, &st, 1.0, q + (int64_t)t * F, &cnt, max_nodes);
        total += cnt;
        if (rc > status) status = rc;
    }
    *nodes = total;
    return status;
}
