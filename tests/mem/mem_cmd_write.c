/* The write commands: insert, update, delete and findAndModify, each
 * write logged in the oplog (mem_oplog.c) when it is on. Ordered batches
 * stop at the first error; every error is a writeErrors entry, as
 * MongoDB answers. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mem.h"

/* The collection a write goes to, created on first use. */
static mem_coll_t *
target (const mem_call_t *call)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    if (!c) {
        bson_t o = BSON_INITIALIZER;
        c = mem_coll_create (mem_store (), call->db, mem_coll_name (call));
        BSON_APPEND_UTF8 (&o, "create", mem_coll_name (call));
        mem_oplog_log ("c", call->db, "$cmd", &o, NULL);
        bson_destroy (&o);
    }
    return c;
}

static void
write_error (bson_t *errors, int *nerr, int index, const bson_error_t *err)
{
    bson_t e;
    char k[16];
    snprintf (k, sizeof k, "%d", (*nerr)++);
    bson_append_document_begin (errors, k, -1, &e);
    BSON_APPEND_INT32 (&e, "index", index);
    BSON_APPEND_INT32 (&e, "code", err->code ? (int) err->code : MEM_E_BAD_VALUE);
    BSON_APPEND_UTF8 (&e, "errmsg", err->message);
    bson_append_document_end (errors, &e);
}

static void
finish (bson_t *reply, bson_t *errors, int nerr)
{
    if (nerr)
        BSON_APPEND_ARRAY (reply, "writeErrors", errors);
    bson_destroy (errors);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

/* An _id first: the given one, or a new ObjectId. */
static void
with_id (const bson_t *doc, bson_t *out)
{
    bson_iter_t it;
    bson_init (out);
    if (bson_iter_init_find (&it, doc, "_id")) {
        bson_append_iter (out, "_id", 3, &it);
    } else {
        bson_oid_t oid;
        bson_oid_init (&oid, NULL);
        BSON_APPEND_OID (out, "_id", &oid);
    }
    bson_iter_init (&it, doc);
    while (bson_iter_next (&it))
        if (strcmp (bson_iter_key (&it), "_id"))
            bson_append_iter (out, NULL, 0, &it);
}

static bool
insert_one (mem_coll_t *c, const bson_t *doc, bson_error_t *err)
{
    bson_t d;
    bool ok;
    with_id (doc, &d);
    ok = mem_coll_insert (c, &d, err);
    if (ok)
        mem_oplog_log ("i", c->db, c->name, &d, NULL);
    bson_destroy (&d);
    return ok;
}

static void
insert (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = target (call);
    bson_t docs, errors = BSON_INITIALIZER;
    bson_iter_t it;
    bool ordered = mem_bool (call->body, "ordered", true);
    int n = 0, nerr = 0, i = 0;
    if (mem_sub (call->body, "documents", &docs) && bson_iter_init (&it, &docs))
        for (; bson_iter_next (&it); i++) {
            bson_t d;
            bson_error_t err = {0};
            uint32_t len;
            const uint8_t *data;
            if (!BSON_ITER_HOLDS_DOCUMENT (&it))
                continue;
            bson_iter_document (&it, &len, &data);
            bson_init_static (&d, data, len);
            if (insert_one (c, &d, &err)) {
                n++;
            } else {
                write_error (&errors, &nerr, i, &err);
                if (ordered)
                    break;
            }
        }
    BSON_APPEND_INT32 (reply, "n", n);
    finish (reply, &errors, nerr);
}

/* One update statement: its matches rewritten (the first only unless
 * multi), or an upsert's insert. */
static bool
update_one (mem_coll_t *c, const bson_t *st, int64_t *n, int64_t *modified, bson_t *upserted_id,
            bson_error_t *err)
{
    bson_t q, u;
    bool has_q = mem_sub (st, "q", &q), multi = mem_bool (st, "multi", false);
    size_t *slots, ns;
    if (!mem_sub (st, "u", &u)) {
        bson_set_error (err, 1, MEM_E_FAILED_TO_PARSE, "update statement needs u (a document)");
        return false;
    }
    if (!mem_match_slots (c, has_q ? &q : NULL, &slots, &ns, err))
        return false;
    for (size_t i = 0; i < ns && (multi || i < 1); i++) {
        bson_t out;
        bson_t *old = c->docs[slots[i]];
        bool changed;
        if (!mem_update_apply (old, &u, false, &out, err)) {
            bson_destroy (&out);
            bson_free (slots);
            return false;
        }
        changed = out.len != old->len || memcmp (bson_get_data (&out), bson_get_data (old), out.len);
        if (changed) {
            bson_iter_t id;
            bson_t o2 = BSON_INITIALIZER;
            if (!mem_coll_replace (c, slots[i], &out, err)) {
                bson_destroy (&out);
                bson_destroy (&o2);
                bson_free (slots);
                return false;
            }
            if (bson_iter_init_find (&id, &out, "_id"))
                bson_append_iter (&o2, "_id", 3, &id);
            mem_oplog_log ("u", c->db, c->name, &out, &o2);
            bson_destroy (&o2);
            (*modified)++;
        }
        (*n)++;
        bson_destroy (&out);
    }
    bson_free (slots);
    if (!ns && mem_bool (st, "upsert", false)) {
        bson_t seed, out, d;
        bson_iter_t id;
        bool ok;
        mem_update_seed (has_q ? &q : NULL, &seed);
        ok = mem_update_apply (&seed, &u, true, &out, err);
        bson_destroy (&seed);
        if (ok) {
            with_id (&out, &d);
            ok = mem_coll_insert (c, &d, err);
            if (ok) {
                mem_oplog_log ("i", c->db, c->name, &d, NULL);
                bson_iter_init_find (&id, &d, "_id");
                bson_append_iter (upserted_id, "_id", 3, &id);
                (*n)++;
            }
            bson_destroy (&d);
        }
        bson_destroy (&out);
        return ok;
    }
    return true;
}

static void
update (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = target (call);
    bson_t sts, errors = BSON_INITIALIZER, ups = BSON_INITIALIZER;
    bson_iter_t it;
    bool ordered = mem_bool (call->body, "ordered", true);
    int64_t n = 0, modified = 0;
    int nerr = 0, nups = 0, i = 0;
    if (mem_sub (call->body, "updates", &sts) && bson_iter_init (&it, &sts))
        for (; bson_iter_next (&it); i++) {
            bson_t st, id = BSON_INITIALIZER;
            bson_error_t err = {0};
            uint32_t len;
            const uint8_t *data;
            if (!BSON_ITER_HOLDS_DOCUMENT (&it))
                continue;
            bson_iter_document (&it, &len, &data);
            bson_init_static (&st, data, len);
            if (update_one (c, &st, &n, &modified, &id, &err)) {
                if (!bson_empty (&id)) {
                    bson_t e;
                    char k[16];
                    bson_iter_t v;
                    snprintf (k, sizeof k, "%d", nups++);
                    bson_append_document_begin (&ups, k, -1, &e);
                    BSON_APPEND_INT32 (&e, "index", i);
                    bson_iter_init_find (&v, &id, "_id");
                    bson_append_iter (&e, "_id", 3, &v);
                    bson_append_document_end (&ups, &e);
                }
                bson_destroy (&id);
            } else {
                bson_destroy (&id);
                write_error (&errors, &nerr, i, &err);
                if (ordered)
                    break;
            }
        }
    BSON_APPEND_INT32 (reply, "n", (int32_t) n);
    BSON_APPEND_INT32 (reply, "nModified", (int32_t) modified);
    if (nups)
        BSON_APPEND_ARRAY (reply, "upserted", &ups);
    bson_destroy (&ups);
    finish (reply, &errors, nerr);
}

static void
remove_slot (mem_coll_t *c, size_t slot)
{
    bson_iter_t id;
    bson_t o = BSON_INITIALIZER;
    if (bson_iter_init_find (&id, c->docs[slot], "_id"))
        bson_append_iter (&o, "_id", 3, &id);
    mem_coll_remove (c, slot);
    mem_oplog_log ("d", c->db, c->name, &o, NULL);
    bson_destroy (&o);
}

static void
delete (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    bson_t sts, errors = BSON_INITIALIZER;
    bson_iter_t it;
    int n = 0, nerr = 0, i = 0;
    if (mem_sub (call->body, "deletes", &sts) && bson_iter_init (&it, &sts))
        for (; bson_iter_next (&it); i++) {
            bson_t st, q;
            bson_error_t err = {0};
            size_t *slots, ns;
            uint32_t len;
            const uint8_t *data;
            int64_t limit;
            if (!BSON_ITER_HOLDS_DOCUMENT (&it))
                continue;
            bson_iter_document (&it, &len, &data);
            bson_init_static (&st, data, len);
            limit = mem_int (&st, "limit", 0);
            if (!mem_match_slots (c, mem_sub (&st, "q", &q) ? &q : NULL, &slots, &ns, &err)) {
                write_error (&errors, &nerr, i, &err);
                if (mem_bool (call->body, "ordered", true))
                    break;
                continue;
            }
            for (size_t k = 0; k < ns && (!limit || k < 1); k++, n++)
                remove_slot (c, slots[k]);
            bson_free (slots);
            mem_coll_tidy (c);
        }
    BSON_APPEND_INT32 (reply, "n", n);
    finish (reply, &errors, nerr);
}

/* findAndModify: the first match by sort, removed or updated (or an
 * upsert's insert); value is the document before, or after with new. */
static void
find_and_modify (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = target (call);
    bson_t q, sort, u, fields, le, value = BSON_INITIALIZER, upserted = BSON_INITIALIZER;
    bool has_q = mem_sub (call->body, "query", &q), want_new = mem_bool (call->body, "new", false);
    bool has_fields = mem_sub (call->body, "fields", &fields);
    bson_error_t err = {0};
    size_t *slots, ns;
    bson_t **d;
    int64_t n = 0, modified = 0;
    bool found = false, ok = true;
    if (!mem_match_slots (c, has_q ? &q : NULL, &slots, &ns, &err)) {
        mem_err_reply (reply, &err);
        return;
    }
    d = bson_malloc ((ns ? ns : 1) * sizeof *d);
    for (size_t i = 0; i < ns; i++)
        d[i] = c->docs[slots[i]];
    if (mem_sub (call->body, "sort", &sort))
        mem_sort (d, ns, &sort);
    if (ns) {
        size_t slot = 0;
        for (size_t i = 0; i < ns; i++)
            if (c->docs[slots[i]] == d[0])
                slot = slots[i];
        found = true;
        if (mem_bool (call->body, "remove", false)) {
            bson_concat (&value, d[0]);
            remove_slot (c, slot);
            mem_coll_tidy (c);
            n = 1;
        } else if (mem_sub (call->body, "update", &u)) {
            bson_t st = BSON_INITIALIZER, id = BSON_INITIALIZER, before;
            bson_iter_t idv;
            bson_copy_to (d[0], &before);
            bson_iter_init_find (&idv, d[0], "_id");
            bson_t qid = BSON_INITIALIZER;
            bson_append_iter (&qid, "_id", 3, &idv);
            BSON_APPEND_DOCUMENT (&st, "q", &qid);
            BSON_APPEND_DOCUMENT (&st, "u", &u);
            ok = update_one (c, &st, &n, &modified, &id, &err);
            if (ok) {
                bson_iter_t bid;
                ssize_t at;
                bson_iter_init_find (&bid, &before, "_id");
                at = mem_coll_find_id (c, &bid);
                bson_concat (&value, want_new && at >= 0 ? c->docs[at] : &before);
            }
            bson_destroy (&before);
            bson_destroy (&qid);
            bson_destroy (&st);
            bson_destroy (&id);
        }
    } else if (mem_bool (call->body, "upsert", false) && mem_sub (call->body, "update", &u)) {
        bson_t st = BSON_INITIALIZER;
        BSON_APPEND_DOCUMENT (&st, "q", has_q ? &q : &value);
        BSON_APPEND_DOCUMENT (&st, "u", &u);
        BSON_APPEND_BOOL (&st, "upsert", true);
        ok = update_one (c, &st, &n, &modified, &upserted, &err);
        if (ok && want_new) {
            bson_iter_t id;
            bson_iter_init_find (&id, &upserted, "_id");
            bson_concat (&value, c->docs[mem_coll_find_id (c, &id)]);
        }
        bson_destroy (&st);
    }
    bson_free (d);
    bson_free (slots);
    if (!ok) {
        mem_err_reply (reply, &err);
    } else {
        bson_append_document_begin (reply, "lastErrorObject", -1, &le);
        BSON_APPEND_INT32 (&le, "n", (int32_t) n);
        if (!mem_bool (call->body, "remove", false))
            BSON_APPEND_BOOL (&le, "updatedExisting", found);
        if (!bson_empty (&upserted)) {
            bson_iter_t id;
            bson_iter_init_find (&id, &upserted, "_id");
            bson_append_iter (&le, "upserted", -1, &id);
        }
        bson_append_document_end (reply, &le);
        if (bson_empty (&value) && !(found || (!bson_empty (&upserted) && want_new))) {
            BSON_APPEND_NULL (reply, "value");
        } else {
            bson_t p;
            mem_project (&value, has_fields ? &fields : NULL, &p, &err);
            BSON_APPEND_DOCUMENT (reply, "value", &p);
            bson_destroy (&p);
        }
        BSON_APPEND_DOUBLE (reply, "ok", 1);
    }
    bson_destroy (&value);
    bson_destroy (&upserted);
}

bool
mem_cmd_write (const mem_call_t *call, bson_t *reply, bool *handled)
{
    const char *n = call->name;
    *handled = true;
    if (!strcmp (n, "insert"))
        insert (call, reply);
    else if (!strcmp (n, "update"))
        update (call, reply);
    else if (!strcmp (n, "delete"))
        delete (call, reply);
    else if (!strcasecmp (n, "findAndModify"))
        find_and_modify (call, reply);
    else
        *handled = false;
    return true;
}
