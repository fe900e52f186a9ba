/* What the core needs to know from a collection's metadata JSON. The text
 * itself is always passed through verbatim; this only reads it. */
#ifndef REMODEL_METADATA_H
#define REMODEL_METADATA_H

#include <stdbool.h>
#include <stddef.h>

#include "remodel/error.h"

typedef struct {
    bool parsed;            /* false: not valid Extended JSON (kept verbatim) */
    char *collection_name;  /* "collectionName", or NULL */
    size_t collection_name_len; /* its bytes: more than strlen when it holds a
                                   NUL ("\u0000"), which no name may */
    char *type;             /* "type", or NULL */
    bool is_view;           /* type "view" or options.viewOn */
    bool is_timeseries;     /* type "timeseries" or options.timeseries */
    char **index_names;
    size_t n_indexes;
} rm_metadata_t;

void rm_metadata_read (const char *json, size_t len, rm_metadata_t *out);
void rm_metadata_clear (rm_metadata_t *m);

/* Refuses a collectionName no collection may have (empty, or holding a
 * NUL), naming FILE and the database. True when there is none. */
bool rm_metadata_check_name (const rm_metadata_t *m, const char *file, const char *db,
                             bson_error_t *err);

/* The metadata text with its top-level "collectionName" set to coll:
 * replaced where it stands, or added before the closing brace; every other
 * byte kept. For the directory layout, which names a long collection's
 * files by a hash and needs the real name here (and after a rename, the
 * new one). NULL when the text is not a JSON object. bson_free it. */
char *rm_metadata_with_name (const char *json, size_t len, const char *coll, size_t *out_len);

#endif
