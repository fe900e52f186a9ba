/* Probes: whether a field a step names occurs in the documents it reads.
 * A field found in no document of a namespace that has documents is almost
 * always a misspelling ("acounts" for "accounts"), and running on would
 * empty data without a word: the engine refuses the step instead, naming
 * the field and the closest names that do occur, unless the step says
 * "allowMissing": true. A probe costs a lookup per document until the
 * field is first seen, and nothing after. */
#ifndef REMODEL_PROBE_H
#define REMODEL_PROBE_H

#include "remodel/docpath.h"
#include "remodel/error.h"

#define RM_PROBE_NAMES 64 /* distinct names kept for "did you mean" */

typedef struct rm_probe rm_probe_t;

struct rm_probe {
    const char *key;        /* the plan key naming the field: "localField" */
    rm_path_t path;         /* the field (a dotted path) */
    char *ns;               /* the namespace it is looked for in */
    rm_path_t parent;       /* path less its last component (n == 0: top) */
    uint64_t docs;          /* documents looked at */
    bool seen;
    bool whole_name;    /* a top-level field is named the whole dotted path */
    uint64_t sampled;       /* documents whose names were gathered */
    char *names[RM_PROBE_NAMES];
    size_t n_names;
    /* Probes of other paths of the same documents, fed with this one: the
     * paths a step reads beyond the keys its row probes (accumulators,
     * project, sort, match, filter: engine_checks.c's
     * rm_engine_add_read_probes), looked for in the documents the step's
     * code already feeds this probe. */
    rm_probe_t *riders;
    size_t n_riders, riders_unseen;
};

void rm_probe_init (rm_probe_t *p, const char *key, const char *path, const char *ns);
void rm_probe_destroy (rm_probe_t *p);

void rm_probe_slow (rm_probe_t *p, const uint8_t *doc, uint32_t len);

/* Looks at one document (p may be NULL: no probe). */
static inline void
rm_probe_doc (rm_probe_t *p, const uint8_t *doc, uint32_t len)
{
    if (!p)
        return;
    p->docs++;
    if (!p->seen || p->riders_unseen)
        rm_probe_slow (p, doc, len);
}

/* rm_probe_doc for p alone, its riders not fed (a caller that asks about
 * each of them on its own: fieldcheck.c). */
void rm_probe_doc_alone (rm_probe_t *p, const uint8_t *doc, uint32_t len);

/* Adds a rider of p (above): the field at path, named by key in errors
 * (p's namespace). None when p or a rider already probes that path. */
void rm_probe_add_rider (rm_probe_t *p, const char *key, const char *path);

/* The error for a field that documents were looked at for and never
 * found, naming the step's key, the field, the namespace and the closest
 * names seen, p's own first, then its riders'; true when there is none. */
bool rm_probe_check (const rm_probe_t *p, bson_error_t *err);

/* A join as its check sees it: counted by the engine as it ran the step
 * over a dump, or by the online companion on a server before a run
 * (remodel/fieldcheck.h). A join in which nothing found a partner is
 * almost always keys of two types or the wrong field, and running on
 * would empty data (an embed's arrays all [], a denormalize's copies all
 * null) without a word: the one place that decides it, and says it. */
typedef struct {
    /* true: denormalize, refs are the references of refs_ns (localField)
     * looked up in partner_ns (foreignField); false: embed, summarize,
     * refs are the documents of refs_ns (`from`, foreignField) matched to
     * those of partner_ns (`into`, localField). */
    bool lookups;
    uint64_t refs;     /* those looked up (references or documents) */
    uint64_t partners; /* the other side's documents */
    uint64_t found;    /* of refs, those that found a partner */
    const char *refs_ns, *partner_ns, *local, *foreign;
} rm_join_seen_t;

/* The error for a join of which no reference found a partner while
 * both sides had some, unless allow_missing ("allowMissing": true, or
 * --allow-missing); true when there is none. */
bool rm_join_seen_check (const rm_join_seen_t *j, bool allow_missing, bson_error_t *err);

/* The closest of names to word, for "did you mean": those within a few
 * edits (Damerau-Levenshtein), best first, at most max; returns the count. */
size_t rm_closest_names (const char *word, char *const *names, size_t n, const char **out,
                         size_t max);

#endif
