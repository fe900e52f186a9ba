/* Building a document from the raw bytes of another: copied elements stay
 * byte for byte (bson_append_iter would re-encode some values, e.g. sort a
 * regex's options), new ones come from small bson_t values. */
#ifndef REMODEL_DOCBUF_H
#define REMODEL_DOCBUF_H

#include <bson/bson.h>

#include "remodel/value.h"

/* Starts a document (or a nested one) at the end of b; returns its start. */
size_t rm_docbuf_begin (rm_buf_t *b);
/* Copies the element at it (key and value) as it is. */
void rm_docbuf_copy (rm_buf_t *b, const bson_iter_t *it);
/* Copies the element at it under another key. */
void rm_docbuf_copy_as (rm_buf_t *b, const char *key, const bson_iter_t *it);
/* Appends every element of src. */
void rm_docbuf_append_all (rm_buf_t *b, const bson_t *src);
/* Appends an element header (type, key) for a value written next. */
void rm_docbuf_key (rm_buf_t *b, bson_type_t type, const char *key);
/* Ends the document begun at start: terminator and length. */
void rm_docbuf_end (rm_buf_t *b, size_t start);
/* A deterministic ObjectId for a document a step derives from a parent:
 * the parent's creation time (when its _id is an ObjectId, else 0), then a
 * hash of the parent's _id, a tag and a number. The same input always
 * gives the same id (the online mode relies on it). scratch is reused. */
void rm_derived_oid (rm_buf_t *scratch, const bson_iter_t *parent_id, const char *tag,
                     uint32_t n, uint8_t oid[12]);
/* The raw bytes of the value at it (after the key). */
const uint8_t *rm_iter_value_bytes (const bson_iter_t *it, uint32_t *len);

#endif
