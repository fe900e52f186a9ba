/* MongoDB Extended JSON v2 out of BSON, byte for byte as the tools users
 * know print it: canonical as bsondump prints it, relaxed as mongoexport
 * does (both go through the Go driver's writer), and --pretty indented
 * with tabs as bsondump --pretty indents. */
#ifndef REMODEL_EXTJSON_H
#define REMODEL_EXTJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/value.h"

typedef enum {
    RM_EXTJSON_RELAXED,   /* numbers as JSON numbers, dates 1970-9999 as ISO-8601 */
    RM_EXTJSON_CANONICAL, /* every number and date typed ($numberInt, $date: {$numberLong}) */
} rm_extjson_mode_t;

/* Appends the Extended JSON of the document doc (len bytes, already
 * validated) to out, with no newline; pretty indents it with tabs. */
void rm_extjson_doc (rm_buf_t *out, const uint8_t *doc, size_t len, rm_extjson_mode_t mode,
                     bool pretty);

/* Appends the Extended JSON of the value at it. */
void rm_extjson_value (rm_buf_t *out, const bson_iter_t *it, rm_extjson_mode_t mode);

/* Appends a double as the Go driver formats it ("1.0", "1E+06", "NaN"). */
void rm_extjson_double (rm_buf_t *out, double d);

#endif
