/* A dump's namespaces by name, hashed (nsindex.c): a directory dump of
 * thousands of collections is matched file by file to the namespaces its
 * metadata named, and a list searched from the start each time made that
 * quadratic (10,000 collections: 8 s to inspect). The namespaces stay in
 * the order the dump lists them: the index only points into it. */
#ifndef REMODEL_DUMP_NSINDEX_H
#define REMODEL_DUMP_NSINDEX_H

#include "remodel/dump.h"

typedef struct {
    size_t *slots;     /* a namespace's position in info->ns + 1; 0: free */
    size_t cap;        /* a power of two, or 0 before the first find */
    size_t indexed;    /* info->ns[0..indexed) are in slots */
} rm_nsindex_t;

void rm_nsindex_init (rm_nsindex_t *x);
void rm_nsindex_destroy (rm_nsindex_t *x);
/* The first namespace db.coll of info (as rm_dump_info_find), or NULL.
 * The namespaces added to info since the last call (rm_dump_info_add, by
 * anyone) are indexed first; x serves one info only. */
rm_ns_t *rm_nsindex_find (rm_nsindex_t *x, const rm_dump_info_t *info, const char *db, const char *coll);

#endif
