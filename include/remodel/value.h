/* BSON values as MongoDB compares them (the manual's "Comparison/Sort Order"):
 * the sort order across types, and a canonical byte encoding of join keys
 * so that $lookup equality is memcmp equality. */
#ifndef REMODEL_VALUE_H
#define REMODEL_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <bson/bson.h>

#include "remodel/buf.h"

/* MongoDB's comparison of two values: <0, 0, >0. Numbers by value across
 * int32/int64/double/decimal128 (NaN equal to NaN, below all numbers; -0 ==
 * 0), strings and symbols by bytes, documents field by field (type order,
 * then name, then value, as the server does), arrays element by element,
 * then BinData, ObjectId, bool, date (signed), timestamp, regex, MaxKey. A
 * NULL iterator means "missing" and compares as null. */
int rm_value_compare (const bson_iter_t *a, const bson_iter_t *b);
/* rm_value_compare's answer into *c without encoding the values, for two
 * numbers that are not decimals or two strings; false (nothing set) for
 * any other pair. */
bool rm_value_compare_quick (const bson_value_t *a, const bson_value_t *b, int *c);
/* The element it is at is a number: an int32, int64, double or decimal128. */
bool rm_iter_is_number (const bson_iter_t *it);
/* The element it is at is a NaN (a double's or a decimal's); false for a
 * missing one (NULL). */
bool rm_iter_is_nan (const bson_iter_t *it);

/* The canonical type class of a value in the sort order (MinKey lowest). */
int rm_value_canonical_type (bson_type_t t);
/* A BSON type's $type alias ("objectId", "string", "minKey"). */
const char *rm_value_type_name (bson_type_t t);

/* Appends the canonical key of a value to out: two values have equal keys
 * exactly when $lookup finds them equal (1 == 1.0 == NumberLong(1) ==
 * NumberDecimal("1"); null == missing; documents and arrays by full value,
 * recursively canonical). A NULL iterator encodes "missing" (== null). The
 * memcmp order of keys is a total order consistent with that equality, but
 * not MongoDB's sort order: use rm_value_compare for sorting. */
void rm_key_append (rm_buf_t *out, const bson_iter_t *it);
/* The same key for a scalar from its value's bytes (where a BSON element's
 * value starts) in a document rm_bson_check accepted: numbers, strings,
 * symbols, ObjectIds and binaries, the types a reference can have. false
 * (nothing appended) for any other type. */
bool rm_key_append_scalar (rm_buf_t *out, bson_type_t t, const uint8_t *v);

/* A 64-bit hash of a key's bytes, for hash joins. */
uint64_t rm_key_hash (const uint8_t *key, size_t len);

/* The cluster time a MongoDB change stream resume token stands at (4.2+:
 * {_data: "82" then the Timestamp's 8 bytes big-endian, in hex, then
 * more}), into *t, *i: false for a token of another form (another
 * server's, or an older one). */
bool rm_resume_token_time (const bson_t *token, uint32_t *t, uint32_t *i);

#endif
