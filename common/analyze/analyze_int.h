/* The analysis's own structures (remodel/analyze.h): what the first pass
 * keeps of each collection and field, and the relationships found. */
#ifndef REMODEL_ANALYZE_INT_H
#define REMODEL_ANALYZE_INT_H

#include "remodel/analyze.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

/* Join keys (hashes of $lookup's canonical key bytes) and how often each
 * occurred: open addressing, grown by doubling. */
typedef struct {
    uint64_t *keys;         /* 0: empty slot (a hash of 0 is stored as 1) */
    uint64_t *counts;
    size_t n, cap;
} rm_keymap_t;

void rm_keymap_add (rm_keymap_t *m, uint64_t key, uint64_t times);
uint64_t rm_keymap_get (const rm_keymap_t *m, uint64_t key);
void rm_keymap_destroy (rm_keymap_t *m);
/* The key of a value as $lookup matches it; scratch holds its bytes (reused:
 * no allocation per value once grown). */
uint64_t rm_analyze_key (const bson_iter_t *value, rm_buf_t *scratch);

#define RM_ANALYZE_MAX_PATHS 256
#define RM_ANALYZE_MAX_DEPTH 6
#define RM_ANALYZE_KEY_MAX_STRING 128 /* longer strings are text, not references */

typedef struct {
    char *path;
    uint64_t docs;          /* documents holding it (once per document) */
    uint64_t last_doc;      /* the document that last counted */
    uint64_t types[256];    /* occurrences per BSON type */
    uint64_t arrays;        /* occurrences holding an array */
    rm_dist_t *lengths;     /* their lengths (NULL: none seen) */
    bool in_array;          /* reached through an array: several per document */
    bool keyed;             /* its scalar values' keys are kept */
    bool not_key;           /* a value no reference has (long text, a date...) */
    rm_keymap_t keys;       /* in memory; spilled past --memory (analyze_spill.c) */
    uint64_t distinct;      /* distinct keys, once pass 1 is over */
    uint64_t values;        /* scalar occurrences keyed */
    uint64_t small;         /* of them numbers or strings of up to 3 bytes */
    int64_t date_min, date_max; /* its dates (types[BSON_TYPE_DATE_TIME] of them) */
    uint64_t elem_docs, elem_ids; /* array elements that are documents, with an _id or id */
} rm_field_t;

typedef struct {
    char *ns, *db, *coll;
    const char *metadata;   /* the dump's metadata text (NULL: none) */
    uint64_t docs, bytes, max_size;
    rm_dist_t sizes;
    rm_field_t *fields;
    size_t n_fields;
    bool fields_capped;
    uint16_t slots[RM_ANALYZE_MAX_PATHS * 2]; /* fields by a hash of their path: index + 1 */
    rm_buf_t scratch;       /* key bytes, reused */
    char path[512];         /* the path being walked, built in place */
} rm_collection_t;

/* One relationship: from.field's values found among to.key's. */
typedef struct {
    size_t from, to;        /* collections */
    size_t field, key;      /* their fields */
    bool child_refs;        /* from holds an array of references: from is the parent */
    bool two_way;           /* the other direction was found too */
    uint64_t refs, matched; /* reference occurrences, those found */
    uint64_t distinct_matched;
    uint64_t orphans;       /* occurrences found nowhere */
    uint64_t shared;        /* children referenced by more than one parent */
    uint64_t parents_none;  /* parents with no child */
    rm_dist_t children;     /* children per parent */
    bool indexed;           /* the referencing field leads an index in the metadata */
} rm_relation_t;

struct rm_analysis {
    char *src;
    bson_t *hints;          /* NULL: none */
    rm_collection_t *cols;
    size_t n_cols;
    rm_relation_t *rels;
    size_t n_rels;
};

rm_field_t *rm_collection_field (rm_collection_t *c, const char *path, bool in_array);
/* Pass 1 for one document. */
void rm_collection_add (rm_collection_t *c, uint64_t seq, const uint8_t *doc, uint32_t len);
/* analyze_hints.c: whether hints[key] lists ns; whether a readTogether
 * group holds both; ns's readWriteRatio. */
bool rm_hints_lists (const bson_t *hints, const char *key, const char *ns);
bool rm_hints_together (const bson_t *hints, const char *a, const char *b);
bool rm_hints_ratio (const bson_t *hints, const char *ns, double *ratio);
/* Whether an index of the collection's metadata starts with path (_id
 * always does). */
bool rm_analyze_indexed (const rm_collection_t *c, const char *path);
/* The checks of analyze_checks.c (appended to out, an array). */
void rm_analysis_checks (const rm_analysis_t *a, bson_t *out);
/* Finds the relationships (pass 2 over src for those held in arrays). */
bool rm_analyze_relate (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err);

#endif
