/* Where two documents first differ, as a dotted path: what `remodel diff`
 * shows for a changed document, and what a verification reports. */
#ifndef REMODEL_DOCDIFF_H
#define REMODEL_DOCDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/value.h"

/* Compares two valid documents field by field, in order (names, types and
 * value bytes; no numeric equivalence: 1 and 1.0 differ, as bytes do).
 * Returns false when they are the same bytes. Otherwise appends to path
 * the dotted path of the first field that differs (array elements by
 * index), one side's field when the other has none there, and returns
 * true. path is not NUL-terminated. */
bool rm_doc_first_difference (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                              rm_buf_t *path);

#endif
