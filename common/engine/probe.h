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

typedef struct {
    const char *key;        /* the plan key naming the field: "localField" */
    rm_path_t path;         /* the field (a dotted path) */
    char *ns;               /* the namespace it is looked for in */
    rm_path_t parent;       /* path less its last component (n == 0: top) */
    uint64_t docs;          /* documents looked at */
    bool seen;
    uint64_t sampled;       /* documents whose names were gathered */
    char *names[RM_PROBE_NAMES];
    size_t n_names;
} rm_probe_t;

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
    if (!p->seen)
        rm_probe_slow (p, doc, len);
}

/* The error for a field that documents were looked at for and never
 * found, naming the step's key, the field, the namespace and the closest
 * names seen; true when there is none. */
bool rm_probe_check (const rm_probe_t *p, bson_error_t *err);

/* The closest of names to word, for "did you mean": those within a few
 * edits (Damerau-Levenshtein), best first, at most max; returns the count. */
size_t rm_closest_names (const char *word, char *const *names, size_t n, const char **out,
                         size_t max);

#endif
