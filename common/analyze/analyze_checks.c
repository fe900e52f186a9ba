/* The checks of remodel analyze (remodel/analyze.h), each with the rule
 * behind it: arrays that grow without bound, references without an index,
 * documents (or embeddings) near 16 MiB, time series of tiny documents
 * (bucket candidates, with the window their timestamps suggest), and
 * arrays of objects that look like entities of their own. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

#define MIB (1024.0 * 1024.0)
#define RULE4 RM_SRC_RULES ", rule 4: arrays should not grow without bound " \
              "(more than a couple of hundred embedded, more than a few thousand references)"
#define RULE16 RM_SRC_HOWTO ": a single MongoDB document cannot exceed 16MB"
/* Field names are the schema: names that are data make a path per entry,
 * which no index or query names in advance. */
#define RULE_MAP "the attribute pattern: field names that are values (ids, dates) go into an " \
                 "array of key-value documents, one path and one index for all of them"

/* A dot in a name is a step down in every path: MongoDB 5.0 allows such
 * names, and only $getField and $setField reach them. */
#define RULE_PATHLESS "MongoDB's field names: names with dots or a leading $ are reached only " \
                      "by $getField and $setField, never by a path"

static void
check (bson_t *out, uint32_t *n, const char *kind, const char *ns, const char *field,
       const char *rule, const char *fmt, ...) BSON_GNUC_PRINTF (7, 8);

static void
check (bson_t *out, uint32_t *n, const char *kind, const char *ns, const char *field,
       const char *rule, const char *fmt, ...)
{
    char key[16], what[600];
    bson_t c;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (what, sizeof what, fmt, ap);
    va_end (ap);
    snprintf (key, sizeof key, "%u", (*n)++);
    BSON_APPEND_DOCUMENT_BEGIN (out, key, &c);
    BSON_APPEND_UTF8 (&c, "check", kind);
    BSON_APPEND_UTF8 (&c, "ns", ns);
    if (field)
        BSON_APPEND_UTF8 (&c, "field", field);
    BSON_APPEND_UTF8 (&c, "finding", what);
    BSON_APPEND_UTF8 (&c, "rule", rule);
    bson_append_document_end (out, &c);
}

/* Many small documents with a date and a field naming few series
 * (rm_bucket_candidate says which, and the window). */
static void
bucket_candidate (const rm_analysis_t *a, const rm_collection_t *c, bson_t *out, uint32_t *n)
{
    rm_bucket_cand_t b;
    if (!rm_bucket_candidate (a, c, &b))
        return;
    if (!b.series) {
        check (out, n, "bucketCandidate", c->ns, b.time->path, RM_RULE_BUCKET,
               "%llu documents of %llu bytes on average, dated by \"%s\", one series: bucketize "
               "without metaField, granularity \"%s\" (about %.0f readings a bucket)",
               (unsigned long long) c->docs, (unsigned long long) (c->bytes / c->docs), b.time->path,
               b.granularity, b.per_bucket);
        return;
    }
    check (out, n, "bucketCandidate", c->ns, b.time->path, RM_RULE_BUCKET,
           "%llu documents of %llu bytes on average, dated by \"%s\", in %llu series of \"%s\": "
           "bucketize with metaField \"%s\", granularity \"%s\" (about %.0f readings a bucket)",
           (unsigned long long) c->docs, (unsigned long long) (c->bytes / c->docs), b.time->path,
           (unsigned long long) b.series->distinct, b.series->path, b.series->path, b.granularity,
           b.per_bucket);
}

void
rm_analysis_checks (const rm_analysis_t *a, bson_t *out)
{
    uint32_t n = 0;
    for (size_t ci = 0; ci < a->n_cols; ci++) {
        const rm_collection_t *c = &a->cols[ci];
        if (c->max_size >= 8 * MIB)
            check (out, &n, "nearSizeLimit", c->ns, NULL, RULE16,
                   "its largest document is %.1f MiB, %.0f%% of 16 MiB", c->max_size / MIB,
                   100.0 * c->max_size / (16 * MIB));
        for (size_t i = 0; i < c->n_fields; i++) {
            const rm_field_t *f = &c->fields[i];
            bool objects = f->elem_docs > 0;
            if (f->map_keys)
                check (out, &n, "mapPattern", c->ns, f->path, RULE_MAP,
                       "an object used as a map: its field names are generated keys (hex ids or "
                       "UUIDs, like \"%s\"), %llu of them in %llu document(s), each a path of "
                       "its own; counted as one path, %s." RM_ANALYZE_MAP_KEY ". Fix: the "
                       "attribute pattern, an array of {k, v} documents ([{\"k\": \"%s\", "
                       "\"v\": {...}}, ...]) or the key as a field of each element, so that one "
                       "path and one index serve every key",
                       f->map_example, (unsigned long long) f->map_keys,
                       (unsigned long long) f->docs, f->path, f->map_example);
            /* Its own name, not a parent's: once per such name. */
            if (f->not_path && f->path_len >= 2 && !strcmp (f->path + f->path_len - 2, "\"]"))
                check (out, &n, "pathlessField", c->ns, f->path, RULE_PATHLESS,
                       "the field name %s holds a dot, starts with $ or is empty (legal since "
                       "MongoDB 5.0): a path would read it as something else (\"a.b\" as b inside "
                       "a), so no relationship or step is found or recommended on it or under it; "
                       "rename it ($setField and $getField can) to have it analyzed", f->path);
            if (!f->lengths)
                continue;
            if (f->lengths->max > (objects ? RM_ANALYZE_MANY : 2000))
                check (out, &n, "unboundedArray", c->ns, f->path, RULE4,
                       "an array of %s up to %llu long (p99 %llu)",
                       objects ? "embedded documents" : "values", (unsigned long long) f->lengths->max,
                       (unsigned long long) rm_dist_quantile (f->lengths, 0.99));
            if (rm_extract_candidate (f))
                check (out, &n, "extractCandidate", c->ns, f->path, RM_RULE_EXTRACT,
                       "%llu of its %llu embedded documents carry an _id (or id) of their own, "
                       "like entities of their own: extract them if they are read on their own",
                       (unsigned long long) f->elem_ids, (unsigned long long) f->elem_docs);
        }
        bucket_candidate (a, c, out, &n);
    }
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        const rm_collection_t *from = &a->cols[r->from], *to = &a->cols[r->to];
        const rm_collection_t *parent = r->child_refs ? from : to, *child = r->child_refs ? to : from;
        /* The field a join reads the other side by. */
        const rm_collection_t *ic = r->child_refs ? to : from;
        const char *ifield = r->child_refs ? to->fields[r->key].path : from->fields[r->field].path;
        double projected = (double) parent->max_size + (double) r->children.max * (double) child->max_size;
        if (!RM_REL_ACTS (r))
            continue; /* a possible relationship's checks would be guesses */
        if (!rm_analyze_indexed (ic, ifield))
            check (out, &n, "missingIndex", ic->ns, ifield,
                   RM_SRC_GUIDE ", mistake 3: missing indexes on foreign key fields",
                   "no index in the dump's metadata, and the join %s.%s -> %s.%s looks "
                   "documents up by it", from->ns, from->fields[r->field].path, to->ns,
                   to->fields[r->key].path);
        if (r->n_dups) {
            /* The values, as the report names them. */
            char vals[300] = "";
            size_t l = 0;
            uint64_t dups = to->fields[r->key].values - to->fields[r->key].distinct;
            for (uint8_t k = 0; k < r->n_dups && l < sizeof vals; k++)
                l += (size_t) snprintf (vals + l, sizeof vals - l, "%s%s in %llu documents",
                                        k ? ", " : "", r->dup_value[k],
                                        (unsigned long long) r->dup_docs[k]);
            check (out, &n, "duplicateKey", to->ns, to->fields[r->key].path,
                   RM_SRC_RULES ", Custom _id Field: the only requirement is that _id is a unique "
                   "field for the collection (a key a reference names must name one document)",
                   "%llu value(s) held by more than one document (%s%s): the join %s.%s -> %s.%s "
                   "brings each of them, so a parent referencing one gets more children than "
                   "references (children per parent counts what the join brings: max %llu); make "
                   "the key unique, or join by _id", (unsigned long long) dups, vals,
                   dups > r->n_dups ? ", ..." : "", from->ns, from->fields[r->field].path, to->ns,
                   to->fields[r->key].path, (unsigned long long) r->children.max);
        }
        if (projected >= 16 * MIB)
            check (out, &n, "embeddingTooLarge", parent->ns, NULL, RULE16,
                   "embedding %s into it could make a document of up to %.1f MiB (its largest "
                   "document with the most children, each as large as the largest child)",
                   child->ns, projected / MIB);
    }
}
