/* (l, d)-semantic diversity publishing (paper 001, Sec. 5).
 *
 * Every record keeps its QIDs; its sensitive value t becomes a set R of l
 * values, pairwise at semantic distance >= d, holding t and l - 1 dummies
 * drawn one after the other (Alg. 1, line 10: rand(extract(S, R, d))).
 *
 * The distance enters only through a compatibility graph: bit j of row i of
 * `compat` is set iff i != j and dist(v_i, v_j) >= d.  extract(S, R, d) is then
 * the AND of the rows of R.  A dummy c is accepted only if R + {c} can still
 * be completed to l values (the A_max rule of eq. 5-10, made exact):
 *   - ordered attributes (ordered != 0: values in ascending position, dist =
 *     |pos_i - pos_j|): the greedy left-to-right count of mutually compatible values
 *     among the remaining candidates, which is the maximum for points on a
 *     line (interval scheduling) and equals eq. 9 with linear, not cyclic, ends;
 *   - any other distance (tree LCA heights, a user matrix): an exact clique
 *     search in the compatibility graph (depth <= l - 2).
 * Rejecting and redrawing (eq. 10) is the same as drawing uniformly from the
 * accepted candidates, which is what the kernel does (one bounded draw).
 *
 * ANONSET_SEM_DUPLICATE (Alg. 3, ordered domains, distance |i - j| in index
 * units): each chosen value also excludes a window of 2 * radius + 1 positions
 * on the circle 0..F-1 (radius = d - 1), and a window that overlaps positions
 * already excluded is extended to the right (cyclically) until it has excluded
 * exactly 2 * radius + 1 new positions, so every chosen value removes the same
 * number of candidates.  The next dummy is drawn from the accepted candidates
 * outside the excluded positions; when there are none (F too small for the
 * windows), from the accepted candidates of the simple algorithm.
 *
 * Randomness: record `row` starts from one 32-bit main word, word row & 15 of
 * block (counter row >> 4, stream 0x40000000 | attr, sub 0) - 128 records
 * share one eight-block call - and goes on, where it needs more, with the
 * words of blocks (counter row, stream 0x60000000 | attr, sub 1, 2, ...).
 * Where the tree of all sampler paths from the true value t is small (at most
 * min(4096, max(64, 2^20 / F)) nodes and N(t) < 2^32, see semantic.c), one
 * uniform draw in [0, N(t)) (Lemire's method on those words) picks the whole
 * set: the child at each node is r mod cnt and r / cnt goes on, which gives
 * each dummy exactly the step-by-step law above.  Otherwise the dummies are
 * drawn step by step, 16-bit bounded draws from the same words.  Which of the
 * two a value uses depends on (spec, t) only, so the output is a pure function
 * of (key, row, attr): identical for any number of threads and any
 * partitioning. */
#ifndef ANONSET_SEMANTIC_H
#define ANONSET_SEMANTIC_H

#include "rng.h"

#define ANONSET_SEM_MAX_WORDS 16   /* domains of at most 1024 values */
#define ANONSET_SEM_MAX_L 64

typedef enum { ANONSET_SEM_SIMPLE = 0, ANONSET_SEM_DUPLICATE = 1 } anonset_sem_algo;

typedef enum {
    ANONSET_SEM_INFEASIBLE = 10,   /* some true value has no valid set of l values */
    ANONSET_SEM_TOO_BIG = 11       /* exact enumeration exceeded its node budget */
} anonset_sem_status;

typedef struct {
    int32_t F;               /* domain size, 1..64 * ANONSET_SEM_MAX_WORDS */
    int32_t words;           /* (F + 63) / 64 */
    int32_t l;               /* set size, 1..min(F, ANONSET_SEM_MAX_L) */
    int32_t algo;            /* anonset_sem_algo */
    int32_t radius;          /* duplicate processing: d - 1 (index units) */
    int32_t ordered;         /* nonzero: values are points on a line in domain order
                                and compat is monotone (greedy feasibility) */
    const uint64_t *compat;  /* F * words compatibility rows */
} anonset_sem_spec;

/* Publish n records: codes[i] in [0, F); out: n * words uint64 bitmasks,
 * overwritten.  row0: global index of codes[0]; attr: the stream id
 * (< 2^28).  Before drawing anything, every code is checked: returns
 * ANONSET_ERR_VALUE for a code outside the domain or a bad spec, and
 * ANONSET_SEM_INFEASIBLE when some occurring value has no set of l values
 * pairwise compatible (out is then unspecified). */
int anonset_sem_sample(const anonset_sem_spec *spec, const anonset_key *key,
                       int64_t n, int64_t row0, uint32_t attr,
                       const int32_t *codes, uint64_t *out, int n_threads);

/* For each value t: N[t] = the size of the single draw that picks a whole
 * set from t's path tree and nodes[t] its node count, or N[t] = 0 where t is
 * sampled step by step (tree too large, or t infeasible).  For tests and docs. */
int anonset_sem_paths(const anonset_sem_spec *spec, uint32_t *N, int64_t *nodes);

/* feasible[t] = 1 iff some set of l values pairwise compatible contains t. */
int anonset_sem_feasible(const anonset_sem_spec *spec, int32_t *feasible);

/* Exact selection probabilities: q[t * F + j] = P(j is a dummy | true t),
 * by enumerating every path of the sampler (the same candidate function as
 * anonset_sem_sample).  Rows of infeasible t are left at 0.  Fails with
 * ANONSET_SEM_TOO_BIG when a row needs more than max_nodes tree nodes.
 * nodes receives the total number of nodes visited. */
int anonset_sem_exact_q(const anonset_sem_spec *spec, int64_t max_nodes,
                        double *q, int64_t *nodes, int n_threads);

#endif
