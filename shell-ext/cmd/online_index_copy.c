/* What the switch carries over (online_cmd.h): each result that takes a
 * source collection's place at finalize gets that collection's indexes,
 * every option as listIndexes gives them (unique, partial, TTL,
 * collation, text, wildcard, sparse, hidden), and its validator; a result
 * is created with the source's default collation (online_index_copy_create).
 * They are made on the results at the end of `run`, at `sync` and at
 * `follow`'s first round, and checked (completed) by finalize before it
 * blocks the writes, so the write-blocked window builds none.
 *
 * The indexes a result gets are the plan's mapping of its source's (the
 * offline run's computation, remodel/indexes.h): a rename's keys renamed,
 * an unset's indexes dropped, an embedded child's made multikey on the
 * parent, an extracted array's moved to the children; each change a line
 * (`status` lists what each result has). What the mapping keeps but the
 * results still cannot (a key field in no result, or, for
 * a unique one, a field now inside an array, where uniqueness would hold
 * across the array's elements) is named and not made; a unique index the
 * results would violate is not made either, the documents that share a
 * key named, and finalize refuses the switch until none do. A validator
 * that rejects a document of the new design is named and not carried. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"
#include "remodel/indexes.h"

/* One result and the source collection it replaces. */
typedef struct {
    char db[128];
    char coll[256];
    char result[400];
} carry_t;

#define CARRY_MAX 64

/* The namespaces the plan replaces, each with its last result (as the
 * switch moves them, online_switch.c). */
static bool
carries_of_plan (online_t *on, carry_t *out, size_t *n, bson_error_t *err)
{
    rm_names_t nm = on->run->names; /* the identity; the moves its own */
    nm.moved = NULL;
    nm.n_moved = 0;
    *n = 0;
    if (!rm_names_of_plan (&nm, &on->run->plan, err))
        return false;
    for (size_t i = nm.n_moved; i-- > 0 && *n < CARRY_MAX;) {
        const char *dot = strchr (nm.moved[i].ns, '.');
        bool seen = false;
        carry_t *c = &out[*n];
        for (size_t k = 0; k < *n; k++)
            seen |= strlen (out[k].db) == (size_t) (dot - nm.moved[i].ns) &&
                    !strncmp (out[k].db, nm.moved[i].ns, (size_t) (dot - nm.moved[i].ns)) &&
                    !strcmp (out[k].coll, dot + 1);
        if (seen || !dot)
            continue;
        snprintf (c->db, sizeof c->db, "%.*s", (int) (dot - nm.moved[i].ns), nm.moved[i].ns);
        snprintf (c->coll, sizeof c->coll, "%s", dot + 1);
        snprintf (c->result, sizeof c->result, "%s", nm.moved[i].coll);
        (*n)++;
    }
    rm_names_clear (&nm);
    return true;
}

/* Whether db.coll holds a document matching filter. */
static bool
any (online_t *on, const char *db, const char *coll, const bson_t *filter, bool *yes,
     bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_t *opts =
        BCON_NEW ("limit", BCON_INT64 (1), "projection", "{", "_id", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, filter, opts);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    *yes = ops->next (cur, &doc);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading for an index's fields");
    bson_destroy (opts);
    mongoc_collection_destroy (c);
    return ok;
}

/* {path: {op: value}} in one call. */
static bool
any_where (online_t *on, const char *db, const char *coll, const char *path, const char *op,
           bool exists, bool *yes, bson_error_t *err)
{
    bson_t *q = strcmp (op, "$exists") == 0
                    ? BCON_NEW (path, "{", "$exists", BCON_BOOL (exists), "}")
                    : BCON_NEW (path, "{", op, BCON_UTF8 ("array"), "}");
    bool ok = any (on, db, coll, q, yes, err);
    bson_destroy (q);
    return ok;
}

/* Why the new design cannot keep the index whose key is key (unique or
 * not), into why; "" when it can. Text and wildcard keys name no field
 * of their own: not checked. */
static bool
cannot_keep (online_t *on, const carry_t *m, const bson_t *key, bool unique, char *why,
             size_t cap, bson_error_t *err)
{
    bson_iter_t it;
    bool ok = true;
    *why = '\0';
    /* An empty result keeps every index: nothing says its documents lack
     * a field (the application's next insert may have it). */
    {
        bson_t all = BSON_INITIALIZER;
        bool some = false;
        ok = any (on, m->db, m->result, &all, &some, err);
        bson_destroy (&all);
        if (!ok || !some)
            return ok;
    }
    if (!bson_iter_init (&it, key))
        return true;
    while (ok && !*why && bson_iter_next (&it)) {
        const char *f = bson_iter_key (&it);
        char prefix[512];
        bool src, res;
        if (BSON_ITER_HOLDS_UTF8 (&it) && !strcmp (bson_iter_utf8 (&it, NULL), "text"))
            continue;
        if (strstr (f, "$**") || !strncmp (f, "_fts", 4))
            continue;
        ok = any_where (on, m->db, m->coll, f, "$exists", true, &src, err) &&
             any_where (on, m->db, m->result, f, "$exists", true, &res, err);
        if (ok && src && !res) {
            snprintf (why, cap, "its field \"%s\" is in no document of the new design", f);
            break;
        }
        /* Each prefix of the path: an array there makes the index
         * multikey, and a unique one then compares elements. */
        for (const char *p = f; ok && unique && p;) {
            const char *dot = strchr (p, '.');
            snprintf (prefix, sizeof prefix, "%.*s", (int) (dot ? dot - f : (long) strlen (f)), f);
            ok = any_where (on, m->db, m->result, prefix, "$type", true, &res, err) &&
                 (!res || any_where (on, m->db, m->coll, prefix, "$type", true, &src, err));
            if (ok && res && !src) {
                snprintf (why, cap, "its field \"%s\" is inside an array (\"%s\") in the new "
                          "design, where a unique index would hold each element unique across "
                          "documents, not the field", f, prefix);
                break;
            }
            p = dot ? dot + 1 : NULL;
        }
    }
    return ok;
}

/* The documents a unique index ix holds, as a query: its partial filter,
 * and, sparse, its first key's field there. */
static void
dup_filter (const bson_t *ix, const bson_t *key, bson_t *filter)
{
    bson_iter_t it, k;
    bool sparse = bson_iter_init_find (&it, ix, "sparse") && bson_iter_as_bool (&it);

    if (bson_iter_init_find (&it, ix, "partialFilterExpression") &&
        BSON_ITER_HOLDS_DOCUMENT (&it)) {
        const uint8_t *data;
        uint32_t len;
        bson_t pf;
        bson_iter_document (&it, &len, &data);
        if (bson_init_static (&pf, data, len))
            bson_concat (filter, &pf);
    }
    if (sparse && bson_iter_init (&k, key) && bson_iter_next (&k)) {
        /* A sparse index holds the documents that have its field; in an
         * $and, as the partial filter may name that field too (a query
         * with a key twice is refused by some servers). */
        bson_t *both = BCON_NEW ("$and", "[", BCON_DOCUMENT (filter), "{", bson_iter_key (&k),
                                 "{", "$exists", BCON_BOOL (true), "}", "}", "]");
        bson_reinit (filter);
        bson_concat (filter, both);
        bson_destroy (both);
    }
}

/* {pipeline: [...]}: up to 10 keys (f0, f1... of the index's fields)
 * that more than one document of filter shares. */
static void
dup_pipeline (const bson_t *filter, const bson_t *key, bson_t *pipeline)
{
    bson_t stages, st, g, id;
    bson_iter_t k;
    int i = 0;

    BSON_APPEND_ARRAY_BEGIN (pipeline, "pipeline", &stages);
    BSON_APPEND_DOCUMENT_BEGIN (&stages, "0", &st);
    BSON_APPEND_DOCUMENT (&st, "$match", filter);
    bson_append_document_end (&stages, &st);
    BSON_APPEND_DOCUMENT_BEGIN (&stages, "1", &st);
    BSON_APPEND_DOCUMENT_BEGIN (&st, "$group", &g);
    BSON_APPEND_DOCUMENT_BEGIN (&g, "_id", &id);
    for (bson_iter_init (&k, key); bson_iter_next (&k); i++) {
        char ref[600], f[16];
        snprintf (f, sizeof f, "f%d", i);
        snprintf (ref, sizeof ref, "$%s", bson_iter_key (&k));
        BSON_APPEND_UTF8 (&id, f, ref);
    }
    bson_append_document_end (&g, &id);
    BSON_APPEND_DOCUMENT_BEGIN (&g, "n", &id);
    BSON_APPEND_INT32 (&id, "$sum", 1);
    bson_append_document_end (&g, &id);
    bson_append_document_end (&st, &g);
    bson_append_document_end (&stages, &st);
    BSON_APPEND_DOCUMENT_BEGIN (&stages, "2", &st);
    BSON_APPEND_DOCUMENT_BEGIN (&st, "$match", &g);
    BSON_APPEND_DOCUMENT_BEGIN (&g, "n", &id);
    BSON_APPEND_INT32 (&id, "$gt", 1);
    bson_append_document_end (&g, &id);
    bson_append_document_end (&st, &g);
    bson_append_document_end (&stages, &st);
    BSON_APPEND_DOCUMENT_BEGIN (&stages, "3", &st);
    BSON_APPEND_INT32 (&st, "$limit", 10);
    bson_append_document_end (&stages, &st);
    bson_append_array_end (pipeline, &stages);
}

/* The query of the documents with a shared key (group: the pipeline's
 * {_id: {f0: ...}}) into q, the key alone (as the index's fields) into
 * keyq. */
static void
dup_query (const bson_t *filter, const bson_t *key, const bson_t *group, bson_t *q, bson_t *keyq)
{
    bson_iter_t k, gid, v;
    bson_t *and;
    int i = 0;

    for (bson_iter_init (&k, key); bson_iter_next (&k); i++) {
        char f[16];
        snprintf (f, sizeof f, "f%d", i);
        /* A key the documents lack is null to the index. */
        if (bson_iter_init_find (&gid, group, "_id") && BSON_ITER_HOLDS_DOCUMENT (&gid) &&
            bson_iter_recurse (&gid, &v) && bson_iter_find (&v, f))
            bson_append_iter (keyq, bson_iter_key (&k), -1, &v);
        else
            BSON_APPEND_NULL (keyq, bson_iter_key (&k));
    }
    and = BCON_NEW ("$and", "[", BCON_DOCUMENT (filter), BCON_DOCUMENT (keyq), "]");
    bson_concat (q, and);
    bson_destroy (and);
}

/* One shared key's line: the documents of c with it (q), up to 10 of
 * their _ids and how many there are. */
static bool
dup_say (online_t *on, const carry_t *m, const char *name, mongoc_collection_t *c, const bson_t *q,
         const bson_t *keyq, bson_error_t *err)
{
    bson_t *opts = BCON_NEW ("limit", BCON_INT64 (10), "projection", "{", "_id", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *dc = ops->find (on, c, q, opts);
    const bson_t *d;
    bson_error_t why;
    char ids[1200] = "", *keytext;
    size_t at = 0;
    int64_t n = 0;
    bool ok = true;

    while (ops->next (dc, &d)) {
        bson_iter_t di;
        if (bson_iter_init_find (&di, d, "_id") && at < sizeof ids) {
            bson_t one = BSON_INITIALIZER;
            char *t;
            bson_append_iter (&one, "_id", 3, &di);
            t = bson_as_relaxed_extended_json (&one, NULL);
            /* {"_id" : X}: X alone. */
            at += (size_t) snprintf (ids + at, sizeof ids - at, "%s%.*s", n ? ", " : "",
                                     (int) (strlen (t) > 12 ? strlen (t) - 12 : 0), t + 10);
            bson_free (t);
            bson_destroy (&one);
        }
        n++;
    }
    /* Ended before the count: a read of at most 10 leaves no cursor open. */
    if (!ops->end (dc, &why))
        ok = online_fail (on, err, &why, "reading the documents that share a unique key");
    if (ok && n == 10 && (n = ops->count (on, c, q, &why)) < 0)
        ok = online_fail (on, err, &why, "counting the documents that share a unique key");
    if (n > 10)
        snprintf (ids + strlen (ids), sizeof ids - strlen (ids), ", ...");
    bson_destroy (opts);
    keytext = bson_as_relaxed_extended_json (keyq, NULL);
    if (ok)
        online_say_warn (on, "%s: unique index %s of %s.%s: the new design's %s.%s has %lld "
                         "documents with %s (_id %s)", on->run->o->command, name, m->db, m->coll,
                         m->db, m->result, (long long) n, keytext, ids);
    bson_free (keytext);
    return ok;
}

/* The documents of the result that share a key of the unique index ix
 * (key, partial filter), named in lines; *dups how many keys are shared
 * (at most 10 looked at), once the server refused to build it. By $group
 * and $sum, which both test servers have; what this misses (a collation's
 * equal strings) is the server's error as it gave it. */
static bool
name_duplicates (online_t *on, const carry_t *m, const char *name, const bson_t *ix,
                 const bson_t *key, int64_t *dups, bson_error_t *err)
{
    bson_t pipeline = BSON_INITIALIZER, filter = BSON_INITIALIZER;
    mongoc_collection_t *c = online_collection (on, m->db, m->result);
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    *dups = 0;
    dup_filter (ix, key, &filter);
    dup_pipeline (&filter, key, &pipeline);
    cur = ops->aggregate (on, c, &pipeline, NULL);
    while (ok && ops->next (cur, &doc)) {
        bson_t q = BSON_INITIALIZER, keyq = BSON_INITIALIZER;
        (*dups)++;
        dup_query (&filter, key, doc, &q, &keyq);
        ok = dup_say (on, m, name, c, &q, &keyq, err);
        bson_destroy (&keyq);
        bson_destroy (&q);
    }
    if (!ops->end (cur, &why) && ok)
        ok = online_fail (on, err, &why, "looking for documents that share a unique key");
    mongoc_collection_destroy (c);
    bson_destroy (&pipeline);
    bson_destroy (&filter);
    return ok;
}

/* The indexes remodel made (--create-indexes) for any plan, as one
 * {madeIndexes: [...]}: each plan's record lists its own. Another plan's
 * over the same sources is a join's too, not the application's. */
static bool
made_indexes_all (online_t *on, bson_t *out, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, "plans");
    bson_t filter = BSON_INITIALIZER, arr;
    bson_t *opts = BCON_NEW ("projection", "{", "madeIndexes", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, &filter, opts);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    uint32_t n = 0;

    bson_init (out);
    BSON_APPEND_ARRAY_BEGIN (out, "madeIndexes", &arr);
    while (ops->next (cur, &doc)) {
        bson_iter_t it, list;
        if (!bson_iter_init_find (&it, doc, "madeIndexes") || !BSON_ITER_HOLDS_ARRAY (&it) ||
            !bson_iter_recurse (&it, &list))
            continue;
        while (bson_iter_next (&list)) {
            char key[16];
            const char *kp;
            bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_iter (&arr, kp, -1, &list);
        }
    }
    bson_append_array_end (out, &arr);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading the plans' records");
    mongoc_collection_destroy (c);
    bson_destroy (opts);
    return ok;
}

/* Whether index name of db.coll is one remodel made (rec: the made
 * indexes of every plan): the join's, not the application's, so not the
 * new design's either (rollback drops it from the source). */
static bool
made_by_remodel (const bson_t *rec, const carry_t *m, const char *name)
{
    bson_iter_t it, list, e;
    if (!bson_iter_init_find (&it, rec, "madeIndexes") || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &list))
        return false;
    while (bson_iter_next (&list)) {
        const char *f[3] = {"db", "coll", "name"}, *want[3] = {m->db, m->coll, name};
        bool same = true;
        for (int i = 0; same && i < 3; i++)
            same = bson_iter_recurse (&list, &e) && bson_iter_find (&e, f[i]) &&
                   BSON_ITER_HOLDS_UTF8 (&e) && !strcmp (bson_iter_utf8 (&e, NULL), want[i]);
        if (same)
            return true;
    }
    return false;
}

/* What the carry-over found, over every index. */
typedef struct {
    int64_t made, kept, cannot, violated;
    bson_t list; /* [{ns, name, key, action}]: the results' indexes, for status */
    uint32_t n;
    bool as_they_were; /* --keep-indexes: the sources' own, not the plan's mapping */
} tally_t;

/* Adds index name (key) of the result of m to t's list: action "built"
 * (as the plan maps it; now or by an earlier command), "kept" (as it was,
 * --keep-indexes), or "not carried" (why). */
static void
tally_index (tally_t *t, const carry_t *m, const char *name, const bson_t *key,
             const char *action, const char *why)
{
    char k[16], ns[400];
    const char *kp;
    /* The key as text: its field names have dots, which a stored
     * document's keys may not. */
    char *text = bson_as_relaxed_extended_json (key, NULL);
    bson_t one;
    bson_uint32_to_string (t->n++, &kp, k, sizeof k);
    snprintf (ns, sizeof ns, "%s.%s", m->db, m->coll);
    BSON_APPEND_DOCUMENT_BEGIN (&t->list, kp, &one);
    BSON_APPEND_UTF8 (&one, "ns", ns);
    BSON_APPEND_UTF8 (&one, "name", name);
    BSON_APPEND_UTF8 (&one, "key", text);
    BSON_APPEND_UTF8 (&one, "action", action);
    if (why)
        BSON_APPEND_UTF8 (&one, "why", why);
    bson_append_document_end (&t->list, &one);
    bson_free (text);
}

/* The index ix of m's source, made on its result unless there already
 * (by name) or named as one the new design cannot keep or violates. */
static bool
carry_index (online_t *on, const carry_t *m, const bson_t *ix, const bson_t *have,
             const bson_t *rec, tally_t *t, bson_error_t *err)
{
    bson_iter_t it;
    const char *name;
    const uint8_t *data;
    uint32_t len;
    bson_t key, spec = BSON_INITIALIZER, *cmd;
    char why[700], there[256]; /* the result's name where it is (--to-uri: its final) */
    bool ok = true, unique, made = false;
    int64_t dups = 0;

    if (!bson_iter_init_find (&it, ix, "name") || !BSON_ITER_HOLDS_UTF8 (&it))
        return true;
    name = bson_iter_utf8 (&it, NULL);
    if (!strcmp (name, "_id_") || made_by_remodel (rec, m, name))
        return true;
    if (!bson_iter_init_find (&it, ix, "key") || !BSON_ITER_HOLDS_DOCUMENT (&it))
        return true;
    bson_iter_document (&it, &len, &data);
    if (!bson_init_static (&key, data, len))
        return true;
    if (bson_iter_init_find (&it, have, name)) {
        t->kept++;
        tally_index (t, m, name, &key, t->as_they_were ? "kept" : "built", NULL);
        return true;
    }
    unique = bson_iter_init_find (&it, ix, "unique") && bson_iter_as_bool (&it);
    /* --keep-indexes: as they were, as the offline run writes them. */
    *why = '\0';
    if (!t->as_they_were && !cannot_keep (on, m, &key, unique, why, sizeof why, err))
        return false;
    if (*why) {
        t->cannot++;
        tally_index (t, m, name, &key, "not carried", why);
        online_say_warn (on, "%s: index %s of %s.%s is not carried to the new design (%s.%s): "
                         "%s; make the index it needs after the switch", on->run->o->command, name,
                         m->db, m->coll, m->db, m->result, why);
        return true;
    }
    /* As listIndexes gives it, but its version and namespace (the
     * server's own, refused in a createIndexes by some). */
    bson_copy_to_excluding_noinit (ix, &spec, "v", "ns", NULL);
    {
        mongoc_collection_t *c = online_collection (on, m->db, m->result);
        bson_error_t fail;
        char what[900];
        bson_strncpy (there, mongoc_collection_get_name (c), sizeof there);
        cmd = BCON_NEW ("createIndexes", BCON_UTF8 (there), "indexes", "[",
                        BCON_DOCUMENT (&spec), "]");
        snprintf (what, sizeof what, "making index %s of %s.%s on %s.%s", name, m->db, m->coll,
                  m->db, there);
        ok = online_lease_check (on, err);
        made = ok && online_ops (on)->index_command (on, c, cmd, NULL, &fail);
        /* A unique index the server refuses: the documents that share a
         * key, named (the server is the judge of what violates it: a
         * missing field is one on MongoDB, not on FerretDB). */
        if (ok && !made && unique)
            ok = name_duplicates (on, m, name, ix, &key, &dups, err);
        if (ok && !made && !dups)
            ok = online_fail (on, err, &fail, what);
        mongoc_collection_destroy (c);
    }
    if (ok && dups)
        t->violated++;
    if (ok && made) {
        t->made++;
        tally_index (t, m, name, &key, t->as_they_were ? "kept" : "built", NULL);
        online_say_note (on, "%s: made index %s of %s.%s on %s.%s", on->run->o->command, name, m->db,
                         m->coll, m->db, there);
    }
    bson_destroy (cmd);
    bson_destroy (&spec);
    return ok;
}

/* The indexes of db.coll, each as listIndexes gives it, in out
 * (name: spec); *there false when the collection is not. */
static bool
indexes_of (online_t *on, const char *db, const char *coll, bson_t *out, bool *there,
            bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->indexes (on, c);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    *there = true;
    while (ops->next (cur, &doc)) {
        bson_iter_t it;
        if (bson_iter_init_find (&it, doc, "name") && BSON_ITER_HOLDS_UTF8 (&it))
            BSON_APPEND_DOCUMENT (out, bson_iter_utf8 (&it, NULL), doc);
    }
    if (!ops->end (cur, &why)) {
        if (why.code == 26)
            *there = false;
        else
            ok = online_fail (on, err, &why, "listing indexes");
    }
    mongoc_collection_destroy (c);
    return ok;
}

/* ns's indexes as listIndexes gives them, in their order, into the
 * array out, but those remodel made for a join (rec); *there false when
 * the collection is not. */
static bool
source_indexes (online_t *on, const carry_t *m, const bson_t *rec, bson_t *out, bool *there,
                bson_error_t *err)
{
    bson_t byname = BSON_INITIALIZER;
    bson_iter_t it, n;
    uint32_t i = 0;
    bool ok = indexes_of (on, m->db, m->coll, &byname, there, err);
    for (bson_iter_init (&it, &byname); ok && bson_iter_next (&it);) {
        const uint8_t *data;
        uint32_t len;
        bson_t ix;
        char k[16];
        const char *kp;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || made_by_remodel (rec, m, bson_iter_key (&it)))
            continue;
        bson_iter_document (&it, &len, &data);
        if (!bson_init_static (&ix, data, len) || !bson_iter_init_find (&n, &ix, "key"))
            continue;
        bson_uint32_to_string (i++, &kp, k, sizeof k);
        BSON_APPEND_DOCUMENT (out, kp, &ix);
    }
    bson_destroy (&byname);
    return ok;
}

/* Adds namespace db.coll to plan with its source's indexes (once; none
 * when it is not there: a namespace the plan makes, which gets what the
 * steps move into it, an extract's children's, as offline). */
/* In place, whether ns (db.coll) is the "to" of a copy or move of the
 * plan: made by the run, it starts with no index, as side by side. */
static bool
select_to (const online_t *on, const char *ns)
{
    for (size_t i = 0; on->run->o->in_place && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        if ((s->kind == RM_STEP_COPY || s->kind == RM_STEP_MOVE) &&
            !strcmp (s->u.copy.to.text, ns))
            return true;
    }
    return false;
}

static bool
plan_add (online_t *on, const carry_t *m, const bson_t *rec, rm_ixplan_t *plan,
          bson_error_t *err)
{
    char *name = bson_strdup_printf ("%s.%s", m->db, m->coll);
    bson_t arr = BSON_INITIALIZER;
    bool there = false, ok = true;
    if (!rm_ixplan_find (plan, name)) {
        if (!select_to (on, name))
            ok = source_indexes (on, m, rec, &arr, &there, err);
        if (ok)
            rm_ixplan_add (plan, name, &arr);
    }
    bson_destroy (&arr);
    bson_free (name);
    return ok;
}

/* The plan's mapping of the sources' indexes (the offline run's, through
 * remodel/indexes.h), into plan: every source the plan replaces and every
 * child it embeds, then each step over them. Each change is said, every
 * time, as the plan's line. */
static bool
index_plan (online_t *on, const carry_t *mv, size_t n, const bson_t *rec, rm_ixplan_t *plan,
            bool as_they_were, bson_error_t *err)
{
    const rm_plan_t *pl = &on->run->plan;
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = plan_add (on, &mv[i], rec, plan, err);
    if (as_they_were) {
        online_say_note (on, "%s: --keep-indexes: the sources' indexes as they were, not as the "
                         "plan maps them", on->run->o->command);
        return ok;
    }
    /* An embed's children, and a copy's source (which the copy leaves
     * in place): each a namespace the steps carry indexes from. */
    for (size_t i = 0; ok && i < pl->n; i++) {
        const rm_step_t *s = &pl->steps[i];
        const char *src = s->kind == RM_STEP_EMBED  ? s->u.embed.from.text
                          : s->kind == RM_STEP_COPY ? s->u.copy.from.text
                                                    : NULL;
        carry_t child;
        const char *dot;
        if (!src || !(dot = strchr (src, '.')))
            continue;
        snprintf (child.db, sizeof child.db, "%.*s", (int) (dot - src), src);
        snprintf (child.coll, sizeof child.coll, "%s", dot + 1);
        child.result[0] = '\0';
        ok = plan_add (on, &child, rec, plan, err);
    }
    for (size_t i = 0; ok && i < pl->n; i++)
        rm_ixplan_step (plan, &pl->steps[i]);
    for (size_t i = 0; ok && i < plan->n_changes; i++)
        online_say_note (on, "%s: the plan's indexes: %s", on->run->o->command, plan->changes[i]);
    return ok;
}

/* db.coll's options (listCollections, filtered by its name, on the
 * connection db.coll is on), into opts (empty when none). */
static bool
options_of (online_t *on, const char *db, const char *coll, bson_t *opts, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_error_t why;
    bool ok = online_collection_options (on, c, db, opts, &why);
    if (!ok)
        online_fail (on, err, &why, "listing collections");
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_index_copy_create (online_t *on, const char *db, const char *source, bson_t *cmd,
                          bson_error_t *err)
{
    bson_t opts = BSON_INITIALIZER;
    bson_iter_t it;
    bool ok = options_of (on, db, source, &opts, err);
    if (ok && bson_iter_init_find (&it, &opts, "collation") && BSON_ITER_HOLDS_DOCUMENT (&it))
        bson_append_iter (cmd, "collation", -1, &it);
    bson_destroy (&opts);
    return ok;
}

/* The source's validator on the result, unless it rejects a document of
 * the new design (named, not carried); its default collation, which only
 * a create gives, named when the result lacks it. */
static bool
carry_options (online_t *on, const carry_t *m, tally_t *t, bson_error_t *err)
{
    bson_t src = BSON_INITIALIZER, res = BSON_INITIALIZER;
    bson_iter_t it, r;
    bool ok = options_of (on, m->db, m->coll, &src, err) &&
              options_of (on, m->db, m->result, &res, err);
    if (ok && bson_iter_init_find (&it, &src, "collation") &&
        !bson_iter_init_find (&r, &res, "collation")) {
        t->cannot++;
        online_say_warn (on, "%s: %s.%s's default collation is not carried: %s.%s was created "
                         "without it (by an earlier remodel); remodel online run --restart "
                         "makes the results anew with it", on->run->o->command, m->db, m->coll, m->db,
                         m->result);
    }
    if (ok && bson_iter_init_find (&it, &src, "validator") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
        !bson_iter_init_find (&r, &res, "validator")) {
        const uint8_t *data;
        uint32_t len;
        bson_t v, nor = BSON_INITIALIZER, arr;
        bool rejects = false;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&v, data, len);
        BSON_APPEND_ARRAY_BEGIN (&nor, "$nor", &arr);
        BSON_APPEND_DOCUMENT (&arr, "0", &v);
        bson_append_array_end (&nor, &arr);
        ok = any (on, m->db, m->result, &nor, &rejects, err);
        if (ok && rejects) {
            char *text = bson_as_relaxed_extended_json (&v, NULL);
            t->cannot++;
            online_say_warn (on, "%s: the validator of %s.%s (%s) rejects documents of the new "
                             "design (%s.%s): not carried; give the new collection its own after "
                             "the switch (collMod)", on->run->o->command, m->db, m->coll, text, m->db,
                             m->result);
            bson_free (text);
        } else if (ok) {
            mongoc_collection_t *c = online_collection (on, m->db, m->result);
            bson_t *cmd = BCON_NEW ("collMod", BCON_UTF8 (mongoc_collection_get_name (c)),
                                    "validator", BCON_DOCUMENT (&v));
            bson_error_t why;
            if (bson_iter_init_find (&r, &src, "validationLevel"))
                bson_append_iter (cmd, "validationLevel", -1, &r);
            if (bson_iter_init_find (&r, &src, "validationAction"))
                bson_append_iter (cmd, "validationAction", -1, &r);
            ok = online_lease_check (on, err) &&
                 (online_ops (on)->command (on, c, m->db, cmd, NULL, &why) ||
                  online_fail (on, err, &why, "giving a result its source's validator"));
            if (ok)
                online_say_note (on, "%s: gave %s.%s the validator of %s.%s", on->run->o->command,
                                 m->db, m->result, m->db, m->coll);
            mongoc_collection_destroy (c);
            bson_destroy (cmd);
        }
        bson_destroy (&nor);
    }
    bson_destroy (&src);
    bson_destroy (&res);
    return ok;
}

static bool
any_select_to (const online_t *on)
{
    for (size_t i = 0; i < on->run->plan.n; i++)
        if (select_to (on, on->run->plan.steps[i].u.copy.to.text))
            return true;
    return false;
}

bool
online_index_copy (online_t *on, bool finalize, bson_error_t *err)
{
    static bool followed; /* follow: its first round makes them */
    carry_t *mv;
    size_t n = 0;
    tally_t t = {0, 0, 0, 0, BSON_INITIALIZER, 0, false};
    bson_t rec = BSON_INITIALIZER;
    rm_ixplan_t plan;
    bool ok;

    /* No result replaces anything; in place, a copy's or move's "to"
     * is made by the run and gets the indexes the plan carries to it. */
    if (on->run->o->dry_run || (on->run->o->in_place && !any_select_to (on)))
        return true;
    if (on->run->following && !finalize) {
        if (followed)
            return true;
        followed = true;
    }
    /* Given to this run, or recorded by the run that began the plan. */
    t.as_they_were = on->run->o->keep_indexes;
    if (!t.as_they_were && !online_plan_flag (on, "keepIndexes", &t.as_they_were, err))
        return false;
    mv = bson_malloc0 (CARRY_MAX * sizeof *mv);
    rm_ixplan_init (&plan);
    ok = made_indexes_all (on, &rec, err) && carries_of_plan (on, mv, &n, err) &&
         index_plan (on, mv, n, &rec, &plan, t.as_they_were, err);
    for (size_t i = 0; ok && i < n; i++) {
        bson_t src = BSON_INITIALIZER, have = BSON_INITIALIZER;
        bool s_there, r_there;
        char to_ns[400];
        /* In place, only the "to"s, which are their own results. */
        snprintf (to_ns, sizeof to_ns, "%s.%s", mv[i].db, mv[i].coll);
        if (on->run->o->in_place) {
            if (!select_to (on, to_ns))
                continue;
            snprintf (mv[i].result, sizeof mv[i].result, "%s", mv[i].coll);
        }
        ok = indexes_of (on, mv[i].db, mv[i].coll, &src, &s_there, err) &&
             indexes_of (on, mv[i].db, mv[i].result, &have, &r_there, err);
        /* A result not made yet (a step that failed): nothing to carry
         * it to. A namespace the plan makes gets what the plan moves
         * into it (its own indexes are online_index_created's). */
        if (ok && r_there) {
            char *name = bson_strdup_printf ("%s.%s", mv[i].db, mv[i].coll);
            rm_ixns_t *ns = rm_ixplan_find (&plan, name);
            ok = !s_there || on->run->o->in_place || carry_options (on, &mv[i], &t, err);
            for (size_t k = 0; ok && ns && k < ns->n; k++)
                ok = carry_index (on, &mv[i], ns->specs[k], &have, &rec, &t, err);
            bson_free (name);
        }
        bson_destroy (&src);
        bson_destroy (&have);
    }
    bson_free (mv);
    bson_destroy (&rec);
    /* For status: the results' indexes and the plan's changes to them, by
     * the command that holds the plan's lease (a joining worker's are
     * its holder's). */
    if (ok && on->lease && !t.violated) {
        bson_t changes = BSON_INITIALIZER;
        bson_t *u;
        for (size_t i = 0; i < plan.n_changes; i++) {
            char k[16];
            const char *kp;
            bson_uint32_to_string ((uint32_t) i, &kp, k, sizeof k);
            BSON_APPEND_UTF8 (&changes, kp, plan.changes[i]);
        }
        u = BCON_NEW ("$set", "{", "resultIndexes", BCON_ARRAY (&t.list), "indexChanges",
                      BCON_ARRAY (&changes), "keepIndexes", BCON_BOOL (t.as_they_were), "}");
        ok = online_plan_update (on, u, err);
        bson_destroy (u);
        bson_destroy (&changes);
    }
    rm_ixplan_destroy (&plan);
    bson_destroy (&t.list);
    if (ok && finalize && t.violated) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %lld unique index(es) of the sources "
                      "would not hold in the new design (the documents that share a key are "
                      "named above); nothing renamed: change those documents or the plan, sync, "
                      "then finalize again", on->run->where, on->run->names.name, (long long) t.violated);
        return false;
    }
    if (ok && (t.made || t.kept || t.cannot))
        online_say_note (on, "%s: the sources' indexes, %s, are on the results (%lld made "
                         "now, %lld there already, %lld not carried)", on->run->o->command,
                         t.as_they_were ? "as they were (--keep-indexes)" : "as the plan maps them",
                         (long long) t.made, (long long) t.kept, (long long) t.cannot);
    return ok;
}

void
online_index_copy_status (online_t *on)
{
    bson_t rec;
    bson_iter_t it, list, e;
    bson_error_t why;
    bool found;
    if (!online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           &why) || !found) {
        bson_destroy (&rec);
        return;
    }
    if (bson_iter_init_find (&it, &rec, "resultIndexes") && BSON_ITER_HOLDS_ARRAY (&it) &&
        bson_iter_recurse (&it, &list))
        while (bson_iter_next (&list)) {
            const char *ns = NULL, *name = NULL, *key = NULL;
            /* One the plan could not keep was named when it was not made. */
            if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, "action") &&
                BSON_ITER_HOLDS_UTF8 (&e) && !strcmp (bson_iter_utf8 (&e, NULL), "not carried"))
                continue;
            if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, "ns") && BSON_ITER_HOLDS_UTF8 (&e))
                ns = bson_iter_utf8 (&e, NULL);
            if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, "name") &&
                BSON_ITER_HOLDS_UTF8 (&e))
                name = bson_iter_utf8 (&e, NULL);
            if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, "key") &&
                BSON_ITER_HOLDS_UTF8 (&e))
                key = bson_iter_utf8 (&e, NULL);
            if (ns && name && key)
                rm_cli_line (online_say_out_stream (on), "", "\n", "index: %s's result has %s "
                             "%s (the plan's mapping of the source's)", ns, name, key);
        }
    bson_destroy (&rec);
}
