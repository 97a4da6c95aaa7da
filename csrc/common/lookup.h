/* Codes of a column of whole numbers through a lookup table (encode.py's
 * integer path): one pass where NumPy took six.
 *
 * anonset_lut_codes: vals holds n integers of `width` bytes (1, 2, 4 or 8;
 * signed when `is_signed`); codes[i] = table[vals[i] - lo] where lo <=
 * vals[i] < lo + len, else -1.  Returns the number of cells outside
 * [lo, lo + len).  The table's entries are codes or -1. */
#ifndef ANONSET_LOOKUP_H
#define ANONSET_LOOKUP_H

#include <stdint.h>

int64_t anonset_lut_codes(const void *vals, int width, int is_signed, int64_t n, int64_t lo,
                          const int32_t *table, int64_t len, int32_t *codes);

#endif
