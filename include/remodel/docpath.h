/* Dotted paths in BSON documents: reading them as $lookup does, and
 * editing documents (set, unset, rename) by copying their bytes into a new
 * document, never through a tree. */
#ifndef REMODEL_DOCPATH_H
#define REMODEL_DOCPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/error.h"
#include "remodel/value.h"

#define RM_PATH_MAX_PARTS 32

typedef struct {
    char *text;                    /* "a.b.c" */
    char *parts[RM_PATH_MAX_PARTS]; /* pointers into a private copy */
    uint32_t lens[RM_PATH_MAX_PARTS]; /* their lengths */
    size_t n;
} rm_path_t;

/* Parses a dotted path; rejects "", empty components, and a leading '$'. */
bool rm_path_parse (rm_path_t *p, const char *text, bson_error_t *err);
void rm_path_destroy (rm_path_t *p);

/* Called for each value found; return false to stop. */
typedef bool (*rm_path_visit_fn) (const bson_iter_t *value, void *ctx);

/* Visits the values at path in doc the way $lookup resolves a path:
 * through arrays of documents (a.x over {a:[{x:1},{x:2}]} gives 1 and 2), a
 * numeric component also indexing an array. When the value at the end is
 * an array, expand_leaf_array visits its elements (and also the array
 * itself when also_whole is true: the foreign side of $lookup). On that
 * foreign side each element of an array the path goes through that the
 * rest of the path finds nothing in (a document without it, a scalar, an
 * array it does not enter) is visited as a missing value (value NULL), as
 * a query's {"a.x": null} matches {a: [{x: 1}, {y: 2}]} and, since
 * SERVER-36681, {a: [5, {x: 1}]}. Returns the number of values visited;
 * 0 means missing. */
size_t rm_path_visit (const uint8_t *doc, size_t len, const rm_path_t *p,
                      bool expand_leaf_array, bool also_whole, rm_path_visit_fn fn, void *ctx);

/* The foreign side of $lookup: the values rm_path_visit (expanding, also
 * whole) visits, and a missing path as one NULL, by the rules of a server
 * at feature compatibility version 9.0 (since_36681: every element of a
 * crossed array the rest of the path finds nothing in is missing) or of
 * one before it (MongoDB 5.0 to 8.x: only a document element without the
 * rest is, a scalar or an inner array is skipped, and a path that crossed
 * an array is never missing as a whole). {"a.b": null} then matches
 * {a: [{}]} in both, {a: []}, {a: [1]} and {a: [5, {b: 5}]} only since.
 * Returns the number visited: 0 only where, before SERVER-36681, a crossed
 * array gave nothing (such a document matches no local value). */
size_t rm_path_visit_foreign (const uint8_t *doc, size_t len, const rm_path_t *p,
                              bool since_36681, rm_path_visit_fn fn, void *ctx);

/* The first field named name (name_len bytes) of doc, found by walking
 * its raw bytes (libbson's bson_iter_find decodes every field it passes):
 * false if there is none. */
bool rm_doc_field (const uint8_t *doc, size_t len, const char *name, size_t name_len,
                   bson_iter_t *out);

/* The single value at a path without walking arrays (a plain lookup of
 * nested documents, numeric components indexing arrays): false if missing. */
bool rm_path_get (const uint8_t *doc, size_t len, const rm_path_t *p, bson_iter_t *out);

/* A value as BSON stores it: its type and the bytes after the key. */
typedef struct {
    uint8_t type;
    const uint8_t *data;
    uint32_t len;
} rm_raw_value_t;

/* The value at it, pointing into the iterated document. */
bool rm_raw_value_of (const bson_iter_t *it, rm_raw_value_t *v);
/* Appends value to holder (under an empty key) and points v at its bytes
 * there: valid until holder changes again. */
void rm_raw_value_encode (bson_t *holder, const bson_value_t *value, rm_raw_value_t *v);

/* Edits: each writes into out (emptied first) a copy of doc with one
 * change, keeping every other field in its place and order and every
 * untouched element byte for byte; on failure out is left empty.
 * set: replaces the value at path where it is, or appends it at the end of
 *   the innermost existing document, creating missing parent documents
 *   (appended at the end of their parent). Fails with err when a parent on
 *   the path exists and is not a document (as $set does).
 * unset: removes the field at path if present; like $unset it does not walk
 *   into arrays (a numeric component indexes one).
 * rename: moves the value from one path to another (as $rename: the new
 *   field takes the place of an existing one of that name, else goes at the
 *   end of its parent). */
bool rm_doc_set (rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *p,
                 const rm_raw_value_t *value, bson_error_t *err);
bool rm_doc_unset (rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *p,
                   bool *changed, bson_error_t *err);
bool rm_doc_rename (rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *from,
                    const rm_path_t *to, bool *changed, bson_error_t *err);

#endif
