/* Duplicate _ids in the namespaces of a dump, in bounded memory: every
 * document's _id (by its canonical key, remodel/value.h: 1 and 1.0 are one
 * _id, as for the server's unique index) goes to an external sort
 * (remodel/sorter.h), and equal keys side by side are counted. What
 * `remodel inspect` and `remodel check --against` report, and what would
 * stop mongorestore. */
#ifndef REMODEL_IDCHECK_H
#define REMODEL_IDCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"

typedef struct rm_idcheck rm_idcheck_t;

/* memory: the sort's budget; tmpdir: its spill files (NULL: $TMPDIR). */
rm_idcheck_t *rm_idcheck_new (size_t memory, const char *tmpdir);
/* One document of the namespace numbered ns (the caller's numbering); a
 * document without _id is not counted (the server gives it one). */
bool rm_idcheck_add (rm_idcheck_t *c, uint32_t ns, const uint8_t *doc, uint32_t len,
                     bson_error_t *err);
/* No more documents: sorts and counts. */
bool rm_idcheck_finish (rm_idcheck_t *c, bson_error_t *err);
/* After finish: how many documents of ns have an _id an earlier one has,
 * and the smallest such _id (by key) as relaxed JSON "{ "_id" : ... }" in
 * *first (valid until destroy; NULL when none). */
uint64_t rm_idcheck_dups (const rm_idcheck_t *c, uint32_t ns, const char **first);
void rm_idcheck_destroy (rm_idcheck_t *c);

#endif
