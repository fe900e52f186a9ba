/* Collections and indexes: create (capped too), collMod, drop,
 * dropDatabase, renameCollection, listCollections, createIndexes,
 * listIndexes, dropIndexes, with MongoDB's error codes for a namespace
 * that is missing (26) or there already (48). */
#include <stdio.h>
#include <string.h>

#include "mem.h"

static void
ok (bson_t *reply)
{
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
log_cmd (const char *db, const char *key, const char *value, const bson_t *more)
{
    bson_t o = BSON_INITIALIZER;
    if (value)
        BSON_APPEND_UTF8 (&o, key, value);
    else
        BSON_APPEND_INT32 (&o, key, 1);
    if (more)
        bson_concat (&o, more);
    mem_oplog_log ("c", db, "$cmd", &o, NULL);
    bson_destroy (&o);
}

static void
create (const mem_call_t *call, bson_t *reply)
{
    const char *name = mem_coll_name (call);
    mem_coll_t *c;
    bson_iter_t it;
    char msg[300];
    if (!*name) {
        mem_error_reply (reply, MEM_E_INVALID_NS, "Invalid namespace specified");
        return;
    }
    if (mem_coll_find (mem_store (), call->db, name)) {
        snprintf (msg, sizeof msg, "Collection %s.%s already exists.", call->db, name);
        mem_error_reply (reply, MEM_E_NS_EXISTS, msg);
        return;
    }
    c = mem_coll_create (mem_store (), call->db, name);
    c->capped = mem_bool (call->body, "capped", false);
    c->max_bytes = mem_int (call->body, "size", 0);
    c->max_docs = mem_int (call->body, "max", 0);
    /* The options as listCollections shows them: all but the name and
     * the command's own fields. */
    bson_iter_init (&it, call->body);
    bson_iter_next (&it);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (k[0] != '$' && strcmp (k, "lsid") && strcmp (k, "writeConcern") && strcmp (k, "txnNumber"))
            bson_append_iter (&c->options, k, -1, &it);
    }
    log_cmd (call->db, "create", name, &c->options);
    ok (reply);
}

static void
coll_mod (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    if (!c) {
        mem_error_reply (reply, MEM_E_NS_NOT_FOUND, "ns does not exist");
        return;
    }
    /* The validation options it sets, as listCollections then shows them
     * (kept, not enforced: no insert is checked against them). */
    {
        static const char *const keys[] = {"validator", "validationLevel", "validationAction"};
        bson_t opts = BSON_INITIALIZER;
        bson_iter_t it;
        bson_copy_to_excluding_noinit (&c->options, &opts, keys[0], keys[1], keys[2], NULL);
        for (int k = 0; k < 3; k++)
            if (bson_iter_init_find (&it, call->body, keys[k]))
                bson_append_iter (&opts, keys[k], -1, &it);
        bson_destroy (&c->options);
        bson_copy_to (&opts, &c->options);
        bson_destroy (&opts);
    }
    log_cmd (call->db, "collMod", c->name, NULL);
    ok (reply);
}

static void
drop (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    if (!c) {
        mem_error_reply (reply, MEM_E_NS_NOT_FOUND, "ns not found");
        return;
    }
    log_cmd (call->db, "drop", c->name, NULL);
    mem_coll_drop (mem_store (), c);
    BSON_APPEND_UTF8 (reply, "ns", call->db);
    ok (reply);
}

static void
drop_database (const mem_call_t *call, bson_t *reply)
{
    mem_store_t *s = mem_store ();
    bool any = false;
    for (size_t i = s->n; i-- > 0;)
        if (!strcmp (s->c[i]->db, call->db)) {
            mem_coll_drop (s, s->c[i]);
            any = true;
        }
    if (any)
        log_cmd (call->db, "dropDatabase", NULL, NULL);
    BSON_APPEND_UTF8 (reply, "dropped", call->db);
    ok (reply);
}

/* "db.coll" into db and coll. */
static bool
split (const char *ns, char *db, size_t dcap, const char **coll)
{
    const char *dot = ns ? strchr (ns, '.') : NULL;
    if (!dot)
        return false;
    snprintf (db, dcap, "%.*s", (int) (dot - ns), ns);
    *coll = dot + 1;
    return true;
}

static void
rename_collection (const mem_call_t *call, bson_t *reply)
{
    const char *from = mem_utf8 (call->body, "renameCollection"), *to = mem_utf8 (call->body, "to");
    char fdb[128], tdb[128];
    const char *fc, *tc;
    mem_coll_t *c, *t;
    bson_t more = BSON_INITIALIZER;
    if (!split (from, fdb, sizeof fdb, &fc) || !split (to, tdb, sizeof tdb, &tc)) {
        mem_error_reply (reply, MEM_E_INVALID_NS, "Invalid namespace specified");
        return;
    }
    if (!(c = mem_coll_find (mem_store (), fdb, fc))) {
        mem_error_reply (reply, MEM_E_NS_NOT_FOUND, "source namespace does not exist");
        return;
    }
    if ((t = mem_coll_find (mem_store (), tdb, tc))) {
        if (t == c) {
            mem_error_reply (reply, 20, "Can't rename a collection to itself");
            return;
        }
        if (!mem_bool (call->body, "dropTarget", false)) {
            mem_error_reply (reply, MEM_E_NS_EXISTS, "target namespace exists");
            return;
        }
        mem_coll_drop (mem_store (), t);
    }
    BSON_APPEND_UTF8 (&more, "to", to);
    BSON_APPEND_BOOL (&more, "dropTarget", t != NULL);
    log_cmd (fdb, "renameCollection", from, &more);
    bson_destroy (&more);
    bson_free (c->db);
    bson_free (c->name);
    c->db = bson_strdup (tdb);
    c->name = bson_strdup (tc);
    mem_store_sort (mem_store ());
    ok (reply);
}

static void
id_index (bson_t *out, const char *key)
{
    bson_t d, k;
    bson_append_document_begin (out, key, -1, &d);
    BSON_APPEND_INT32 (&d, "v", 2);
    bson_append_document_begin (&d, "key", -1, &k);
    BSON_APPEND_INT32 (&k, "_id", 1);
    bson_append_document_end (&d, &k);
    BSON_APPEND_UTF8 (&d, "name", "_id_");
    bson_append_document_end (out, &d);
}

static void
list_collections (const mem_call_t *call, bson_t *reply)
{
    mem_store_t *s = mem_store ();
    bson_t filter;
    bool has_filter = mem_sub (call->body, "filter", &filter);
    bool names_only = mem_bool (call->body, "nameOnly", false);
    mem_list_t out = {0};
    bson_error_t err = {0};
    for (size_t i = 0; i < s->n; i++) {
        bson_t *d, opts, info;
        bool yes = true;
        if (strcmp (s->c[i]->db, call->db))
            continue;
        d = bson_new ();
        BSON_APPEND_UTF8 (d, "name", s->c[i]->name);
        BSON_APPEND_UTF8 (d, "type", "collection");
        if (!names_only) {
            bson_append_document_begin (d, "options", -1, &opts);
            bson_concat (&opts, &s->c[i]->options);
            bson_append_document_end (d, &opts);
            bson_append_document_begin (d, "info", -1, &info);
            BSON_APPEND_BOOL (&info, "readOnly", false);
            bson_append_document_end (d, &info);
            id_index (d, "idIndex");
        }
        if (has_filter && !mem_matches (&filter, d, &yes, &err)) {
            bson_destroy (d);
            mem_list_free (&out, true);
            mem_err_reply (reply, &err);
            return;
        }
        if (yes)
            mem_list_push (&out, d);
        else
            bson_destroy (d);
    }
    mem_cursor_reply (call->db, "$cmd.listCollections", &out, 0, reply);
}

static void
create_indexes (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    bson_t specs;
    bson_iter_t it;
    bool created = false;
    size_t before;
    if (!c) {
        c = mem_coll_create (mem_store (), call->db, mem_coll_name (call));
        log_cmd (call->db, "create", c->name, NULL);
        created = true;
    }
    before = c->nidx;
    if (mem_sub (call->body, "indexes", &specs) && bson_iter_init (&it, &specs))
        while (bson_iter_next (&it)) {
            bson_t spec, key;
            uint32_t len;
            const uint8_t *data;
            const char *name;
            mem_index_t *ix;
            bson_error_t err = {0};
            bool there = false;
            if (!BSON_ITER_HOLDS_DOCUMENT (&it))
                continue;
            bson_iter_document (&it, &len, &data);
            bson_init_static (&spec, data, len);
            name = mem_utf8 (&spec, "name");
            if (!name || !mem_sub (&spec, "key", &key)) {
                mem_error_reply (reply, MEM_E_FAILED_TO_PARSE, "index specification needs key and name");
                return;
            }
            for (size_t i = 0; i < c->nidx; i++)
                there |= !strcmp (c->idx[i].name, name);
            if (there)
                continue;
            c->idx = bson_realloc (c->idx, (c->nidx + 1) * sizeof *c->idx);
            ix = &c->idx[c->nidx++];
            ix->name = bson_strdup (name);
            /* Inline, not a copy of a static bson_t: a copy is heap-held
             * through pointers to its own fields, which the realloc above
             * (a second index) and dropIndexes' memmove would leave behind. */
            bson_init (&ix->key);
            bson_concat (&ix->key, &key);
            ix->unique = mem_bool (&spec, "unique", false);
            /* Existing documents must already be unique. */
            for (size_t s = 0; ix->unique && s < c->n; s++)
                if (c->docs[s] && !mem_coll_unique_ok (c, c->docs[s], (ssize_t) s, &err)) {
                    bson_free (ix->name);
                    bson_destroy (&ix->key);
                    c->nidx--;
                    mem_err_reply (reply, &err);
                    return;
                }
        }
    BSON_APPEND_INT32 (reply, "numIndexesBefore", (int32_t) before);
    BSON_APPEND_INT32 (reply, "numIndexesAfter", (int32_t) c->nidx);
    BSON_APPEND_BOOL (reply, "createdCollectionAutomatically", created);
    ok (reply);
}

static void
list_indexes (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    mem_list_t out = {0};
    char msg[300];
    if (!c) {
        snprintf (msg, sizeof msg, "ns does not exist: %s.%s", call->db, mem_coll_name (call));
        mem_error_reply (reply, MEM_E_NS_NOT_FOUND, msg);
        return;
    }
    for (size_t i = 0; i < c->nidx; i++) {
        bson_t *d = bson_new ();
        BSON_APPEND_INT32 (d, "v", 2);
        BSON_APPEND_DOCUMENT (d, "key", &c->idx[i].key);
        BSON_APPEND_UTF8 (d, "name", c->idx[i].name);
        if (c->idx[i].unique)
            BSON_APPEND_BOOL (d, "unique", true);
        mem_list_push (&out, d);
    }
    mem_cursor_reply (call->db, c->name, &out, 0, reply);
}

static void
drop_indexes (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    const char *which = mem_utf8 (call->body, "index");
    bool all = which && !strcmp (which, "*"), found = false;
    char msg[300];
    if (!c) {
        mem_error_reply (reply, MEM_E_NS_NOT_FOUND, "ns not found");
        return;
    }
    BSON_APPEND_INT32 (reply, "nIndexesWas", (int32_t) c->nidx);
    for (size_t i = c->nidx; i-- > 1;)
        if (all || (which && !strcmp (c->idx[i].name, which))) {
            bson_free (c->idx[i].name);
            bson_destroy (&c->idx[i].key);
            memmove (c->idx + i, c->idx + i + 1, (c->nidx - i - 1) * sizeof *c->idx);
            c->nidx--;
            found = true;
        }
    if (!found && !all) {
        bson_reinit (reply);
        snprintf (msg, sizeof msg, "index not found with name [%s]", which ? which : "");
        mem_error_reply (reply, MEM_E_INDEX_NOT_FOUND, msg);
        return;
    }
    ok (reply);
}

bool
mem_cmd_ddl (const mem_call_t *call, bson_t *reply, bool *handled)
{
    static const struct {
        const char *name;
        void (*fn) (const mem_call_t *, bson_t *);
    } cmds[] = {
        {"create", create},
        {"collMod", coll_mod},
        {"drop", drop},
        {"dropDatabase", drop_database},
        {"renameCollection", rename_collection},
        {"listCollections", list_collections},
        {"createIndexes", create_indexes},
        {"listIndexes", list_indexes},
        {"dropIndexes", drop_indexes},
        {"deleteIndexes", drop_indexes},
    };
    *handled = false;
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (!strcmp (call->name, cmds[i].name)) {
            *handled = true;
            cmds[i].fn (call, reply);
        }
    return true;
}
