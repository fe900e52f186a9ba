/* The analysis's own structures (remodel/analyze.h): what the first pass
 * keeps of each collection and field, and the relationships found. */
#ifndef REMODEL_ANALYZE_INT_H
#define REMODEL_ANALYZE_INT_H

#include <stdio.h>

#include "remodel/analyze.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

/* Join keys (hashes of $lookup's canonical key bytes) and how often each
 * occurred: open addressing, grown by doubling. A key and its count share
 * a slot: an add costs one cache miss, not two (the first pass adds every
 * scalar of every document). */
typedef struct {
    uint64_t key;           /* 0: empty slot (a hash of 0 is stored as 1) */
    uint64_t count;
} rm_keyslot_t;

typedef struct {
    rm_keyslot_t *slots;
    size_t n, cap;
    bool mapped;            /* slots is a mapping of its own (analyze_keys.c) */
} rm_keymap_t;

#define RM_KEYMAP_BYTES(m) ((m)->cap * 2 * sizeof (uint64_t))
/* Tables of this many bytes or more are mappings of their own. */
#define RM_KEYMAP_MAPPED_MIN ((size_t) 1 << 20)
/* Doubles the table; returns how many bytes it grew by. */
size_t rm_keymap_grow (rm_keymap_t *m);
void rm_keymap_destroy (rm_keymap_t *m);

/* The adds, lookups and prefetches inline: the first pass's worker makes
 * one of each per key (analyze_adds.c), the call as dear as the rest but
 * for the miss. */
#define RM_KEYMAP_HOME(m, key) ((size_t) ((key) * 0x9E3779B97F4A7C15ULL) & ((m)->cap - 1))

/* The slot holding key, or the empty one where it would go (cap > 0). */
static inline size_t
rm_keymap_slot (const rm_keymap_t *m, uint64_t key)
{
    size_t i = RM_KEYMAP_HOME (m, key);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Returns how many bytes the table grew by (0 but when it doubles). */
static inline size_t
rm_keymap_add (rm_keymap_t *m, uint64_t key, uint64_t times)
{
    size_t i, grew = 0;
    if ((m->n + 1) * 4 > m->cap * 3)
        grew = rm_keymap_grow (m);
    i = rm_keymap_slot (m, key);
    if (!m->slots[i].key) {
        m->slots[i].key = key;
        m->n++;
    }
    m->slots[i].count += times;
    return grew;
}

static inline uint64_t
rm_keymap_get (const rm_keymap_t *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    return m->slots[rm_keymap_slot (m, key)].count;
}

/* Asks for the slot of key into the cache, for an add soon after. */
static inline void
rm_keymap_prefetch (const rm_keymap_t *m, uint64_t key)
{
    if (m->cap)
        __builtin_prefetch (&m->slots[RM_KEYMAP_HOME (m, key)], 1);
}
/* The key of a value as $lookup matches it; scratch holds its bytes (reused:
 * no allocation per value once grown). */
uint64_t rm_analyze_key (const bson_iter_t *value, rm_buf_t *scratch);
/* The same key from the bytes rm_key_append gave. */
uint64_t rm_analyze_key_of (const uint8_t *bytes, size_t len);
/* The key of a CRC: 0 marks an empty slot, so a CRC of 0 is 1. */
#define RM_ANALYZE_KEY_OF_CRC(crc) ((crc) ? (crc) : 1)

#define RM_ANALYZE_MAX_PATHS RM_ANALYZE_PATHS_CAP
#define RM_ANALYZE_MAX_DEPTH 6
#define RM_ANALYZE_SAMPLE 4096   /* values that say whether a field holds words or ids */
#define RM_ANALYZE_KEY_MAX_STRING 128 /* longer strings are text, not references */
#define RM_ANALYZE_SHAPE 16      /* places of a document whose field the walk remembers */

typedef struct {
    char *path;
    size_t path_len;
    uint32_t hash;          /* of its path (analyze.c's walk continues it) */
    uint64_t docs;          /* documents holding it (once per document) */
    uint64_t last_doc;      /* the document that last counted */
    uint64_t types[256];    /* occurrences per BSON type */
    uint64_t arrays;        /* occurrences holding an array */
    rm_dist_t *lengths;     /* their lengths (NULL: none seen) */
    bool in_array;          /* reached through an array: several per document */
    bool keyed;             /* its scalar values' keys are kept */
    bool not_key;           /* a value no reference has (long text, a date...) */
    bool not_path;          /* its name (or a parent's) no path can spell: ["a.b"], ["$x"], [""] */
    rm_keymap_t keys;       /* in memory; spilled past --memory (analyze_spill.c) */
    uint64_t distinct;      /* distinct keys, once pass 1 is over */
    uint64_t values;        /* scalar occurrences keyed */
    uint64_t small;         /* of them numbers or strings of up to 3 bytes */
    uint64_t ints;          /* of them whole numbers (their range: int_min..int_max) */
    int64_t int_min, int_max;
    uint64_t sampled;       /* the first values that are not numbers (at most RM_ANALYZE_SAMPLE) */
    uint64_t vocab;         /* of them codes of up to 3 bytes or strings without a digit */
    int64_t date_min, date_max; /* its dates (types[BSON_TYPE_DATE_TIME] of them) */
    uint64_t elem_docs, elem_ids; /* array elements that are documents, with an _id or id */
    /* An object used as a map: its field names generated keys (hex ids,
     * UUIDs), each walked as RM_ANALYZE_MAP_KEY so that its paths count
     * as one (analyze.c). How many such names, and the first. */
    uint64_t map_keys;
    char map_example[40];
    /* The kinds of the keys it sent (a bit each: numbers, strings, ids,
     * binaries): keys of different kinds never have the same bytes
     * (rm_key_append's tags), so two fields without a kind in common
     * share no key (analyze_relate.c). */
    uint8_t key_kinds;
    /* Targets its values could reach that were not compared: past the
     * likeliest RM_ANALYZE_TARGETS_KEPT (analyze_pairs.c). */
    uint32_t targets_left;
    /* What a relational import holds as strings (analyze_strings.c,
     * kept by analyze_import.c for the top-level fields that may hold
     * them): of its strings, those that read as dates, integers,
     * decimals, and yes/no flags. */
    uint64_t str_seen, str_dates, str_ints, str_decimals, str_flags;
    /* Dates in another shape ("2001/01/01 00:47", "Jun 12 1998"): the
     * format of $dateFromString the first such string gave, how many
     * strings had it, and whether one of them could only be day first
     * (13/01/2000) or month first (01/13/2000); its month names as %b,
     * %B where they are full (analyze_strings.c). */
    char str_format[24];
    uint64_t str_formatted;
    bool str_day_first, str_month_first;
    uint8_t str_month_names;   /* 4: a month's full name seen, 8: its three letters */
} rm_field_t;

/* The path segment that stands for a map's generated keys. */
#define RM_ANALYZE_MAP_KEY "<key>"

/* A field's number among all the analysis's fields (collection, then
 * field): the spilled keys carry it. */
#define RM_FIELD_GID(ci, fi) ((uint32_t) ((ci) * RM_ANALYZE_MAX_PATHS + (fi)))

typedef struct {
    char *ns, *db, *coll;
    const char *metadata;   /* the dump's metadata text (NULL: none) */
    uint64_t docs, bytes, max_size;
    /* Document sizes: the first RM_ANALYZE_FEW_SIZES in few_sizes, a
     * distribution (41 KB) only past them: thousands of small collections
     * (one per tenant) would otherwise need one each. */
    rm_dist_t *sizes;
    uint32_t few_sizes[16];
    rm_field_t *fields;
    size_t n_fields;
    bool fields_capped;
    uint16_t slots[RM_ANALYZE_MAX_PATHS * 2]; /* fields by a hash of their path: index + 1 */
    /* The field last found at each of the first places of each field's
     * document value (by the parent's field number): index + 1, 0 none
     * (analyze.c's walk). */
    uint16_t (*shape)[RM_ANALYZE_SHAPE]; /* RM_ANALYZE_MAX_PATHS of them, the first pass only */
    /* The top level's, every place of it: a wide document (a table's
     * row of 60 columns) would look up most of its fields by name past
     * the first 16 (the first pass only). */
    uint16_t *top_shape;
    /* The first pass: its fields' key tables, by field number, owned by
     * the adds' worker (analyze_adds.c) until the pass ends; then each
     * moves to its field's keys and this is NULL. */
    rm_keymap_t *pass_keys;
    struct rm_adds *adds;   /* where the walk sends its keys (the first pass) */
    uint32_t index;         /* its number among the analysis's collections */
    size_t key_bytes;       /* its fields' key tables' bytes */
    char path[512];         /* the path being walked, built in place */
} rm_collection_t;

/* A candidate: from.field's keys against to.key's (the same database),
 * what they share. */
typedef struct {
    size_t from, field, to, key;
    uint64_t matched;       /* from.field's occurrences found */
    uint64_t distinct;      /* its distinct keys found */
    uint64_t repeated;      /* of them, those occurring more than once */
} rm_pair_t;

/* How sure analyze is that a candidate is a relationship
 * (analyze_score.c, docs/analyze.md "Evidence"): confident ones act
 * (checks, recommendations, the plan), possible ones are reported with
 * what would confirm them, rejected ones are listed in --json with why. */
typedef enum { RM_LEVEL_CONFIDENT, RM_LEVEL_POSSIBLE, RM_LEVEL_REJECTED } rm_level_t;

#define RM_EVIDENCE_MAX 8
typedef struct {
    double points;          /* for (> 0) or against (< 0) */
    char what[240];
} rm_evidence_item_t;

typedef struct {
    rm_level_t level;
    bool same_values;       /* non-key fields equal by value: a copy, not a reference */
    bool natural_shape;     /* no name ties the two: strings found among a unique field's */
    bool natural;           /* and the data makes it a reference (a natural key) */
    char tie[240];          /* the other targets that fit as well: "db.coll.key, ..." ("": none) */
    double score;           /* the items' points summed */
    double chance;          /* the share of the key's values the field's own range would hit */
    bool hinted;            /* the level is the hints' (references) */
    uint8_t n;
    rm_evidence_item_t item[RM_EVIDENCE_MAX];
} rm_evidence_t;

/* A candidate that measured like a relationship but that the evidence (or
 * the hints, or a better target for the same field) rejects. */
typedef struct {
    rm_pair_t pair;
    uint64_t refs;
    rm_evidence_t ev;
} rm_rejected_t;

#define RM_DUPS_SHOWN 3

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
    bool indexed;           /* the field the join looks documents up by leads an index */
    /* Keys the target holds in more than one document (keyDuplicates):
     * those of the smallest hashes, how many documents each, and the
     * value as relaxed JSON (analyze_dups.c). */
    uint8_t n_dups;
    uint64_t dup_key[RM_DUPS_SHOWN], dup_docs[RM_DUPS_SHOWN];
    char dup_value[RM_DUPS_SHOWN][64];
    rm_evidence_t ev;       /* its level (never rejected here: those are in a->rejected) */
    /* A reference to its own collection: a hierarchy (analyze_import.c):
     * the longest path from a root, the roots, and documents whose
     * parents lead round a circle. */
    bool tree_measured;
    uint32_t depth;
    uint64_t roots, cycles;
} rm_relation_t;

#define RM_REL_ACTS(r) ((r)->ev.level == RM_LEVEL_CONFIDENT)

struct rm_analysis {
    char *src;
    bson_t *hints;          /* NULL: none */
    rm_collection_t *cols;
    size_t n_cols;
    rm_relation_t *rels;
    size_t n_rels;
    rm_rejected_t *rejected;
    size_t n_rejected;
    /* The plan's own check (analyze_plancheck.c): the steps left out of
     * --plan-out, by their number among the recommended steps, and why. */
    bool *plan_skip;
    size_t n_plan_steps;
    char **plan_notes;
    size_t n_plan_notes;
    /* Bounded memory (analyze_spill.c): past a sixth of memory the key tables
     * go to an external sorter, and every question about keys is answered
     * from their merge, in key order, instead. */
    size_t memory;
    const char *tmpdir;
    size_t key_bytes;       /* all key tables' bytes now */
    struct rm_sorter *spill;   /* NULL: nothing spilled */
    char *merged_path;      /* the spilled keys merged: (key, field, count) */
    FILE *merged;
    size_t spilled_runs;
    uint64_t spilled_bytes;
    void (*progress) (void *ctx, int pass, rm_reader_t *r, uint64_t docs);
    void *progress_ctx;
};

#define RM_ANALYZE_FEW_SIZES 16
/* The q-quantile of a collection's document sizes, as rm_dist_quantile. */
uint64_t rm_collection_size_quantile (const rm_collection_t *c, double q);

/* Pass 1 for one document. */
void rm_collection_add (rm_collection_t *c, uint64_t seq, const uint8_t *doc, uint32_t len);

/* analyze_adds.c: the first pass's adds to the key tables, on a worker
 * thread, in the order the walk finds the keys, with the spill decision
 * (rm_analyze_spill_keys past a sixth of --memory) taken after each
 * document as in place: the same tables, the same spills. The walk
 * (main thread) hands over blocks of entries. */
enum {
    RM_ADD_KEY,
    RM_ADD_DROP,
    RM_ADD_DOC,             /* nothing but RM_ADD_END */
    RM_ADD_OP = 0xff,       /* the entry's own op; RM_ADD_END may be set with it */
    RM_ADD_END = 0x100      /* a document's end after it: the spill check */
};
typedef struct {
    /* RM_ADD_KEY: its bytes in the block's bytes, which the worker
     * replaces with their hash (16 bytes an entry, not 24: the blocks
     * cross from one core to the other). */
    union {
        struct {
            uint32_t off, len;
        } at;
        uint64_t key;
    } u;
    uint32_t col;
    uint16_t field;
    uint16_t op;            /* RM_ADD_* */
} rm_add_t;

#define RM_ADDS_BLOCK 4096      /* entries a hand-over */

typedef struct rm_adds {
    rm_add_t *cur;          /* the block being filled (main thread) */
    size_t n;
    rm_buf_t *bytes;        /* its keys' bytes (rm_key_append) */
    uint64_t handed;        /* entries handed over before cur's */
    bool failed;            /* the worker failed (seen at a hand-over) */
    struct rm_adds_shared *shared;
} rm_adds_t;

/* Starts the worker over a's collections (their pass_keys allocated);
 * without a thread, each block is added in place as it fills. */
rm_adds_t *rm_adds_start (rm_analysis_t *a);
void rm_adds_hand_over (rm_adds_t *q);
/* Waits for the worker and frees q; moves each collection's pass_keys
 * to its fields. false (err set) if the worker failed. */
bool rm_adds_finish (rm_adds_t *q, rm_analysis_t *a, bson_error_t *err);

/* An entry; for RM_ADD_KEY, v is the value (of type t, one of the types
 * rm_key_append_scalar keys) whose key it adds (its bytes are copied into
 * the block: the worker hashes them). */
static inline void
rm_adds_push (rm_adds_t *q, uint16_t op, uint32_t col, size_t field, bson_type_t t, const uint8_t *v)
{
    rm_add_t *e = &q->cur[q->n++];
    if (op == RM_ADD_KEY) {
        e->u.at.off = (uint32_t) q->bytes->len;
        rm_key_append_scalar (q->bytes, t, v);
        e->u.at.len = (uint32_t) (q->bytes->len - e->u.at.off);
    }
    e->col = col;
    e->field = (uint16_t) field;
    e->op = op;
    if (q->n == RM_ADDS_BLOCK)
        rm_adds_hand_over (q);
}

/* How many entries so far: where a document's begin (rm_adds_end_doc). */
#define RM_ADDS_MARK(q) ((q)->handed + (q)->n)

/* The end of a document whose entries began at mark: the worker takes the
 * spill decision after its last entry, marked RM_ADD_END while it is in
 * the block being filled (an RM_ADD_DOC entry otherwise: one entry a
 * document fewer than an entry of its own each). After a document that
 * sent nothing none: the tables grew not since the last decision, which
 * was not to spill (or they spilled), so it would decide the same. */
static inline void
rm_adds_end_doc (rm_adds_t *q, uint32_t col, uint64_t mark)
{
    if (RM_ADDS_MARK (q) == mark)
        return;
    if (q->n)
        q->cur[q->n - 1].op |= RM_ADD_END;
    else
        rm_adds_push (q, RM_ADD_DOC | RM_ADD_END, col, 0, BSON_TYPE_EOD, NULL);
}
/* analyze_hints.c: whether hints[key] lists ns; whether a readTogether
 * group holds both; ns's readWriteRatio. */
bool rm_hints_lists (const bson_t *hints, const char *key, const char *ns);
bool rm_hints_together (const bson_t *hints, const char *a, const char *b);
bool rm_hints_ratio (const bson_t *hints, const char *ns, double *ratio);
/* A note (a string appended to out, an array) for each name of the hints
 * that meets no collection (or, for references, no field) the analysis
 * read: a misspelt hint would otherwise do nothing, silently. */
void rm_analysis_hint_notes (const rm_analysis_t *a, bson_t *out);
/* Whether an index of the collection's metadata starts with path (_id
 * always does). */
bool rm_analyze_indexed (const rm_collection_t *c, const char *path);
/* The checks of analyze_checks.c (appended to out, an array). */
void rm_analysis_checks (const rm_analysis_t *a, bson_t *out);
/* Pass 2: fn for each document of the parent side of each child-reference
 * relationship, with the path of its references (seq: the document's
 * number in the pass). */
typedef bool (*rm_parent_fn) (void *ctx, size_t rel, const uint8_t *doc, uint32_t len,
                              const rm_path_t *path, uint64_t seq, bson_error_t *err);
/* analyze_parents.c. For each namespace of a dump (by its index), the
 * analysis's collection + 1 (0: none); bson_free it. */
size_t *rm_analysis_col_of (const rm_analysis_t *a, const rm_dump_info_t *info);
bool rm_analyze_each_parent (rm_analysis_t *a, const rm_read_opts_t *ro, rm_parent_fn fn, void *ctx,
                             bson_error_t *err);
/* analyze_split.c. fn (ctx, i) for each i below n, on two threads; each
 * call must touch only what piece i owns. Returns once all are done. */
void rm_analyze_split (size_t n, void (*fn) (void *ctx, size_t i), void *ctx);
/* analyze_spill.c. Sends every key table to the sorter (and frees them). */
bool rm_analyze_spill_keys (rm_analysis_t *a, bson_error_t *err);
/* After pass 1: the rest too, then merges them into a->merged and sets
 * each field's distinct count. */
bool rm_analyze_spill_merge (rm_analysis_t *a, bson_error_t *err);
/* What the candidates share, from the merged keys (pairs sorted by from's
 * and to's field numbers). */
bool rm_analyze_spill_pairs (rm_analysis_t *a, rm_pair_t *pairs, size_t n, bson_error_t *err);
/* Children per parent of the parent-reference relationships. */
bool rm_analyze_spill_parents (rm_analysis_t *a, bson_error_t *err);
/* Children per parent of the child-reference relationships: pass 2, its
 * references joined to the children's keys by sorting. */
bool rm_analyze_spill_child_refs (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err);
void rm_analyze_spill_destroy (rm_analysis_t *a);

/* analyze_score.c: the evidence for and against pair p (rate: its match
 * rate), its level, the hints' references applied. */
void rm_analyze_score (const rm_analysis_t *a, const rm_pair_t *p, rm_evidence_t *ev);
/* analyze_score.c: the evidence of r's shape, once its children per
 * parent are counted (orphans; children spread evenly, as values over a
 * range are, or skewed, as references are), and its level again. */
void rm_analyze_shape (const rm_analysis_t *a, rm_relation_t *r);
/* What the hints' "references" say of from.field: 0 nothing, -1 rejected
 * (null), 1 the target is to.key (then *target says whether this pair is it). */
int rm_hints_reference (const bson_t *hints, const char *from_ns, const char *field,
                        const char *to_ns, const char *key, bool *target);
/* Whether a field's name says it holds a parent of its own collection
 * (parent, manager, reportsTo, supervisor): only such a field is matched
 * against its own collection's key (a hierarchy). */
bool rm_hierarchy_named (const char *path);
/* One sentence: what would confirm a possible relationship. */
void rm_evidence_confirm (const rm_analysis_t *a, const rm_relation_t *r, char *out, size_t len);
const char *rm_level_name (rm_level_t l);

/* analyze_plancheck.c: whether steps (a plan's "steps" array) lose
 * nothing: each step reads only namespaces no earlier step took documents
 * out of, and an embed without keepSource takes only children with one
 * parent that are not read alone. On the first failure: false, *bad the
 * step to leave out, why what failed. */
bool rm_plan_check (const rm_analysis_t *a, const bson_t *steps, size_t *bad, char *why, size_t len);
/* Decides a->plan_skip: the recommended steps checked, the less safe of
 * each conflict left out, until the plan passes. */
void rm_analyze_plan_resolve (rm_analysis_t *a);

/* analyze_keys.c: a duplicated key of r's target, held by docs documents,
 * kept when among the smallest RM_DUPS_SHOWN hashes. */
void rm_relation_dup (rm_relation_t *r, uint64_t key, uint64_t docs);
/* analyze_dups.c: the acting relationships' duplicated target keys (from
 * the key tables, or rm_analyze_spill_dups), then their values: a pass
 * over the target collections, only when there are some. */
bool rm_analyze_dups (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err);
bool rm_analyze_spill_dups (rm_analysis_t *a, bson_error_t *err);

/* analyze_strings.c: a top-level string (v: its BSON value) counted into
 * f's str_ counts, by the first pass. */
void rm_analyze_count_string (rm_field_t *f, const uint8_t *v);
/* The format of $dateFromString f's dates held as strings in another
 * shape than ISO's have, into out (cap bytes); false when the field's
 * numbers are day first in one string and month first in another. */
bool rm_analyze_date_format (const rm_field_t *f, char *out, size_t cap);

/* analyze_import.c: keeps the str_ counts of the fields whose strings
 * could be another type's (the rest zeroed), then one more read of src,
 * only when there is something to measure: the depth of each hierarchy
 * (a reference to its own collection). */
bool rm_analyze_import (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err);

/* The least share of a field's occurrences found among a target's keys
 * for a candidate to measure like a relationship (analyze_relate.c); the
 * search for candidates relies on it (analyze_pairs.c). */
#define RM_ANALYZE_MIN_MATCH 0.8
/* Targets a field is compared with at most: where its values fit more
 * (small integers every collection holds), the likeliest, the rest
 * counted (targets_left). */
#define RM_ANALYZE_TARGETS_KEPT 8

/* analyze_pairs.c: the candidates, without comparing every field with
 * every field. A picker knows each field's role (the predicates say which
 * may hold references, which may be their target) and keeps each field's
 * likeliest targets as they are offered; finish returns the pairs in
 * field-number order (and frees the picker). */
typedef bool (*rm_field_pred_t) (const rm_collection_t *c, const rm_field_t *f);
typedef struct rm_pairpick rm_pairpick_t;
#define RM_PICK_REFS 1
#define RM_PICK_TARGET 2
rm_pairpick_t *rm_pairpick_new (rm_analysis_t *a, rm_field_pred_t is_refs, rm_field_pred_t is_target);
/* RM_PICK_* of the field numbered gid (RM_FIELD_GID). */
uint8_t rm_pairpick_role (const rm_pairpick_t *p, uint32_t gid);
/* Whether a $lookup could join the two (one database, two collections). */
bool rm_pairpick_may_join (const rm_pairpick_t *p, uint32_t from, uint32_t to);
/* from may hold references to to: found of its occurrences were seen
 * among to's keys (all of them, or those the search looked at). */
void rm_pairpick_offer (rm_pairpick_t *p, uint32_t from, uint32_t to, uint64_t found);
rm_pair_t *rm_pairpick_finish (rm_pairpick_t *p, size_t *n);
/* The search with the key tables in memory. */
void rm_analyze_pick_in_memory (rm_analysis_t *a, rm_pairpick_t *p);
/* analyze_spill.c: the same from the merged keys. */
bool rm_analyze_spill_pick (rm_analysis_t *a, rm_pairpick_t *p, bson_error_t *err);

/* Finds the relationships (pass 2 over src for those held in arrays). */
bool rm_analyze_relate (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err);

#endif
