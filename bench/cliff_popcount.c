/* Issue 16, target 2b: another map from draw words to the k-subsets of
 * d = 64, eta = 32 (head cells: 31 of the 63 other values), tried against the
 * kept composition unranking (bench/cliff_parts.c).  A uniform 63-bit word is
 * a uniform subset of any size; complemented when it holds more than 31, then
 * random unset members are added one at a time (10-bit Lemire draws, pdep to
 * find the member) until it holds 31.  Every step is permutation-invariant, so
 * the result is a uniform 31-subset, but the number of steps varies per cell
 * (about 2.7 on average) and its branches mispredict.
 *
 *   gcc -O3 -fopenmp -DANONSET_HAVE_OPENMP=1 -Icsrc/common -Icsrc/randomized \
 *       bench/cliff_popcount.c csrc/common/rng.c -lm -o cliff_popcount
 *   ./cliff_popcount
 *
 * Prints ChaCha20's cost of one 64-bit word a cell and the map's cost on
 * given words (ChaCha20 left out), then checks every output: 32 members, the
 * cell's value among them. */
#include "../csrc/randomized/sample.c"

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>

#define NCELLS (1 << 18)
static uint64_t words[3 * NCELLS], out[NCELLS];
static uint32_t blocks[6 * NCELLS + 64];
static int32_t vals[NCELLS];

#include "best_of.h"

/* Head cells: 31 of the 63 values other than v, then the gap at v.  The
 * first NCELLS words are the cells' own; extra words follow them. */
__attribute__((target("bmi2,popcnt")))
static uint64_t popcount_map(int64_t ncells, int k) {
    const uint64_t M63 = (1ull << 63) - 1;
    int64_t e = NCELLS;
    uint64_t used = 0;
    for (int64_t i = 0; i < ncells; i++) {
        uint64_t S = words[i] & M63;
        int c = __builtin_popcountll(S);
        if (c > k) {                          /* the complement: at most k members */
            S = ~S & M63;
            c = 63 - c;
        }
        int need = k - c;
        uint64_t r = 0;
        int left = 0;
        while (need > 0) {
            if (left == 0) {
                r = words[e++];
                left = 6;
                used++;
            }
            const uint32_t m = (uint32_t)(63 - c);           /* non-members */
            const uint32_t prod = (uint32_t)(r & 1023) * m;  /* Lemire, 10 bits */
            r >>= 10;
            left--;
            if ((prod & 1023) < (1024u % m))
                continue;                                      /* rejected */
            S |= _pdep_u64(1ull << (prod >> 10), ~S & M63);
            c++;
            need--;
        }
        out[i] = gap64(S, vals[i]);
    }
    return used;
}

int main(void) {
    anonset_key key;
    for (int i = 0; i < 8; i++) key.key[i] = 0x01020304u * (uint32_t)(i + 1);
    key.kind = ANONSET_RNG_CHACHA20;
    for (int64_t i = 0; i < NCELLS; i++) vals[i] = (int32_t)(i % 64);
    double v;
    BEST(v, { anonset_blocks(&key, 0, 0, 0, NCELLS / 8, blocks);
              memcpy(words, blocks, NCELLS * sizeof(uint64_t));
              for (int64_t i = 0; i < NCELLS; i++) out[i] = words[i]; });
    printf("ChaCha20: one 64-bit draw word a cell   %.2f ns\n", v);
    anonset_blocks(&key, 0, 0, 0, 3 * NCELLS / 8, blocks);
    memcpy(words, blocks, sizeof words);
    uint64_t used = 0;
    BEST(v, { used = popcount_map(NCELLS, 31); });
    printf("the popcount map on given words          %.2f ns a cell (%.3f extra words a cell)\n",
           v, (double)used / NCELLS);
    for (int64_t i = 0; i < NCELLS; i++)
        if (__builtin_popcountll(out[i]) != 32 || !((out[i] >> vals[i]) & 1)) {
            printf("cell %ld: not 32 members with its value\n", (long)i);
            return 1;
        }
    return 0;
}
