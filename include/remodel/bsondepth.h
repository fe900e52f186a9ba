/* How deep a document nests, as MongoDB counts it, and the bounds of the
 * walks that meet nested values. */
#ifndef REMODEL_BSONDEPTH_H
#define REMODEL_BSONDEPTH_H

#include <stddef.h>
#include <stdint.h>

/* The nesting MongoDB promises to store: "no more than 100 levels of
 * nesting for BSON documents" (the manual's Limits and Thresholds,
 * "Nested Depth for BSON Documents"). The server's own check counts as
 * rm_bson_depth does (a top-level field is at level 1, a field of its
 * value at 2; an empty document or array adds no level) against
 * maxBSONDepth less the 20 levels it keeps for the commands and oplog
 * entries wrapping a document: 180 by default today, 100 when the check
 * came (SERVER-26703). remodel holds what it writes to the documented
 * 100, which every server takes, and so does libbson's JSON reader. */
#define RM_BSON_MAX_NESTING 100

/* Levels of documents and arrays below the top-level document that the
 * readers accept (rm_bson_check) and so that every walk over a value
 * must go through whole: a recursive renderer stops below this, with a
 * marker, never deeper (a value made by an expression may be deeper than
 * anything read). */
#define RM_BSON_WALK_DEPTH 500

/* The fewest bytes of a document whose deepest field is at level `levels`:
 * its length and end (5), then per level below the first an element
 * holding a document (type, an empty key's 0x00, a length, an end: 7),
 * and the deepest field (type, 0x00: 2). A shorter document nests less:
 * no walk needed to know it. */
#define RM_BSON_DEPTH_MIN_LEN(levels) ((size_t) 7 * (size_t) (levels))

/* The levels of doc (len bytes, a valid document): the deepest level any
 * of its fields is at, 0 for {}. The walk stops past `stop` (at most
 * RM_BSON_WALK_DEPTH) and then returns stop + 1. No allocation, no
 * recursion. A code-with-scope's scope is not entered (the server's
 * storage check does not either). */
int rm_bson_depth (const uint8_t *doc, size_t len, int stop);

#endif
