/* The key map (online_state.h): which keys each join partner had when
 * remodel read it, so that a change to the partner recomputes the results
 * it was in, not only those it is in now.
 *
 * Written wherever partners are fetched for a batch while the plan
 * follows a change log (run, sync), before the batch's checkpoint, and
 * likewise for drivers that hold their results' _ids (unbucketize's
 * buckets, keyed by <as>._id: online_incr_series.c), as one document per
 * partner:
 *   {_id: "<step>:<pass>:<partner's _id>", id: <partner's _id>, k: [<keys>]}
 * in the plan's own collection, <state-db>.keys_<plan id>,
 * so that a sync finds a partner's entry by its whole _id, the one lookup
 * both test servers answer through an index (mongo-java-server uses its
 * _id index for {_id: {$in: [...]}} and for nothing with another field:
 * a lookup by _id.id scanned the map, 4.7 s of a 7.5 s sync at scale 30).
 * Keys are only ever added ($addToSet): a partner read with key a, then
 * b, was in results of both; a stale key costs a driver recomputed for
 * nothing, a missing one would leave a result wrong. A new partner's entry
 * is inserted (FerretDB 1.x answers an upsert by scanning its collection);
 * one that is there already (a batch replayed after a crash, a partner
 * read again) is refused as a duplicate and gets the keys it lacks by an
 * update instead. Dropped with the plan (finalize, rollback, --restart). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_state.h"
#include "remodel/docpath.h"


typedef struct {
    uint64_t h;  /* online_id_hash of the entry */
    size_t i;    /* its index in there */
} there_t;

struct online_keys {
    online_t *on;
    const rm_step_t *s;
    size_t pass;
    const rm_path_t *key;
    mongoc_collection_t *coll;  /* <state-db>.keys_<plan id> */
    online_docs_t pending;      /* entries noted, written by flush */
    online_docs_t there;        /* flush: the map's entries for them */
    there_t *by_hash;           /* there's entries by their _id's hash */
    size_t nby, capby;
    bool known_first;           /* flush reads which are there first */
};

/* The plan's map, a collection of its own, so that forgetting it is a
 * drop, not a delete that scans every plan's entries while writes are
 * stopped (0.47 s of a finalize at scale 30 on mongo-java-server). */
static mongoc_collection_t *
map_collection (online_t *on)
{
    char name[160];
    snprintf (name, sizeof name, "keys_%s", on->run->names.id);
    return online_collection (on, on->run->o->state_db, name);
}

online_keys_t *
online_keys_new (online_t *on, const rm_step_t *s, size_t pass, const rm_path_t *key)
{
    online_keys_t *k = bson_malloc0 (sizeof *k);
    /* A run's partners are mostly new to the map; a sync's, mostly there
     * already, and a duplicate _id is slow to refuse (mongo-java-server:
     * about 1.4 ms each). */
    k->known_first = on->run->incr_running;
    k->on = on;
    k->s = s;
    k->pass = pass;
    k->key = key;
    k->coll = map_collection (on);
    online_docs_init (&k->pending);
    online_docs_init (&k->there);
    return k;
}

void
online_keys_destroy (online_keys_t *k)
{
    if (!k)
        return;
    mongoc_collection_destroy (k->coll);
    online_docs_destroy (&k->pending);
    online_docs_destroy (&k->there);
    bson_free (k->by_hash);
    bson_free (k);
}

/* An entry's _id: "<step>:<pass>:" and the partner's _id as hex
 * of its BSON type and bytes. A string, because mongo-java-server finds a
 * thousand document _ids by $in in 0.6 to 1.8 s, a thousand strings in
 * about 0.15 s; exact, because a partner's _id keeps its type and bytes
 * from read to read. */
static void
entry_id (const online_keys_t *k, bson_t *b, const char *name, size_t nlen, const bson_iter_t *id)
{
    static const char hex[] = "0123456789abcdef";
    rm_raw_value_t v;
    char head[192];
    int hl;
    char *s;

    if (!rm_raw_value_of (id, &v))
        return;
    hl = snprintf (head, sizeof head, "%zu:%zu:%02x", k->s->index, k->pass, (unsigned) v.type);
    if (hl < 0 || (size_t) hl >= sizeof head)
        hl = (int) sizeof head - 1;
    s = bson_malloc ((size_t) hl + 2 * (size_t) v.len + 1);
    memcpy (s, head, (size_t) hl);
    for (uint32_t i = 0; i < v.len; i++) {
        s[hl + 2 * i] = hex[v.data[i] >> 4];
        s[hl + 2 * i + 1] = hex[v.data[i] & 15];
    }
    bson_append_utf8 (b, name, (int) nlen, s, hl + 2 * (int) v.len);
    bson_free (s);
}

typedef struct {
    bson_t *arr;
    uint32_t *n;
} values_t;

static bool
add_value (const bson_iter_t *v, void *ctx)
{
    values_t *vs = ctx;
    char key[16];
    const char *kp;
    size_t kl = bson_uint32_to_string ((*vs->n)++, &kp, key, sizeof key);
    if (v)
        bson_append_iter (vs->arr, kp, (int) kl, v);
    else
        bson_append_null (vs->arr, kp, (int) kl);
    return true;
}

void
online_keys_values (const uint8_t *doc, uint32_t len, const rm_path_t *key, bson_t *arr,
                    uint32_t *n)
{
    values_t vs = {arr, n};
    /* Each element of an array and the array itself, null for a missing
     * one: every driver key that can match it. */
    if (rm_path_visit (doc, len, key, true, true, add_value, &vs) == 0)
        add_value (NULL, &vs);
}

bool
online_keys_note (online_keys_t *k, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bson_iter_t id;
    bson_t e = BSON_INITIALIZER, vals;
    uint32_t n = 0;

    (void) err;
    if (!rm_doc_field (doc, len, "_id", 3, &id))
        return true;
    entry_id (k, &e, "_id", 3, &id);
    bson_append_iter (&e, "id", 2, &id);
    BSON_APPEND_ARRAY_BEGIN (&e, "k", &vals);
    online_keys_values (doc, len, k->key, &vals, &n);
    bson_append_array_end (&e, &vals);
    online_docs_add (&k->pending, bson_get_data (&e), e.len, -1);
    bson_destroy (&e);
    return true;
}

/* Whether the array arr holds v, byte for byte (a key that only compares
 * equal, 1 and 1.0, is added again: one more stale key, never one less). */
static bool
holds (const bson_iter_t *arr, const bson_iter_t *v)
{
    bson_iter_t e;
    rm_raw_value_t a, b;
    if (!BSON_ITER_HOLDS_ARRAY (arr) || !bson_iter_recurse (arr, &e) || !rm_raw_value_of (v, &b))
        return false;
    while (bson_iter_next (&e))
        if (rm_raw_value_of (&e, &a) && a.type == b.type && a.len == b.len &&
            memcmp (a.data, b.data, a.len) == 0)
            return true;
    return false;
}

/* The find of the entries of partners ids ({_id: {$in: [...]}}), k only. */
static online_cursor_t *
find_entries (online_keys_t *k, const bson_t *ids)
{
    bson_t in = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("projection", "{", "k", BCON_INT32 (1), "}");
    online_cursor_t *cur;
    bson_iter_t it;
    uint32_t n = 0;

    if (bson_iter_init (&it, ids))
        while (bson_iter_next (&it)) {
            char key[16];
            const char *kp;
            size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            entry_id (k, &in, kp, kl, &it);
        }
    cur = online_ops (k->on)->keys (k->on, k->coll, "_id", &in, opts);
    bson_destroy (opts);
    bson_destroy (&in);
    return cur;
}

static int
by_hash_cmp (const void *a, const void *b)
{
    uint64_t x = ((const there_t *) a)->h, y = ((const there_t *) b)->h;
    return x < y ? -1 : x > y;
}

/* Reads into k->there the map's entries for the pending partners (those
 * whose index is in which; all when NULL). */
static bool
read_there (online_keys_t *k, const bool *which, bson_error_t *err)
{
    online_docs_t *p = &k->pending;
    const online_ops_t *ops = online_ops (k->on);
    bson_t ids = BSON_INITIALIZER;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    online_docs_reset (&k->there);
    for (size_t i = 0, n = 0; i < p->n; i++) {
        bson_iter_t id;
        char key[16];
        const char *kp;
        size_t kl;
        if (which && !which[i])
            continue;
        kl = bson_uint32_to_string ((uint32_t) n++, &kp, key, sizeof key);
        bson_iter_init_from_data (&id, online_doc_bytes (p, i), p->docs[i].len);
        if (bson_iter_find (&id, "id"))
            bson_append_iter (&ids, kp, (int) kl, &id);
    }
    cur = find_entries (k, &ids);
    k->nby = 0;
    while (ops->next (cur, &doc)) {
        if (k->nby == k->capby) {
            k->capby = k->capby ? 2 * k->capby : 256;
            k->by_hash = bson_realloc (k->by_hash, k->capby * sizeof *k->by_hash);
        }
        k->by_hash[k->nby++] = (there_t){online_id_hash (bson_get_data (doc), doc->len), k->there.n};
        online_docs_add (&k->there, bson_get_data (doc), doc->len, -1);
    }
    if (!ops->end (cur, &why))
        ok = online_fail (k->on, err, &why, "reading the join's key map");
    bson_destroy (&ids);
    qsort (k->by_hash, k->nby, sizeof *k->by_hash, by_hash_cmp);
    return ok;
}

/* The entry of k->there with the _id of pending entry e, or -1. */
static ssize_t
find_there (const online_keys_t *k, const uint8_t *e, uint32_t len)
{
    uint64_t h = online_id_hash (e, len);
    size_t lo = 0, hi = k->nby;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->by_hash[mid].h < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < k->nby && k->by_hash[lo].h == h; lo++) {
        size_t i = k->by_hash[lo].i;
        if (online_same_id (online_doc_bytes (&k->there, i), k->there.docs[i].len, e, len))
            return (ssize_t) i;
    }
    return -1;
}

/* Adds to the update u ({$addToSet: {k: {$each: [...]}}}) the values of
 * entry e that have (there non-NULL) lacks; false when there are none. */
static bool
lacking (const uint8_t *e, uint32_t len, const uint8_t *have, uint32_t hlen, bson_t *u)
{
    bson_iter_t vals, v, had;
    bson_t set, each, arr;
    uint32_t n = 0;

    if (!rm_doc_field (e, len, "k", 1, &vals) || !bson_iter_recurse (&vals, &v))
        return false;
    if (have && !rm_doc_field (have, hlen, "k", 1, &had))
        have = NULL;
    BSON_APPEND_DOCUMENT_BEGIN (u, "$addToSet", &set);
    BSON_APPEND_DOCUMENT_BEGIN (&set, "k", &each);
    BSON_APPEND_ARRAY_BEGIN (&each, "$each", &arr);
    while (bson_iter_next (&v))
        if (!have || !holds (&had, &v)) {
            char key[16];
            const char *kp;
            size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_iter (&arr, kp, (int) kl, &v);
        }
    bson_append_array_end (&each, &arr);
    bson_append_document_end (&set, &each);
    bson_append_document_end (u, &set);
    return n > 0;
}

/* Sends batch b, which is gone after (fenced like every write: a run
 * that lost its lease sends nothing). refused, when not NULL, gets the bulk indexes refused as
 * duplicate _ids, which are then no error, and *complete whether each of
 * its nops inserts was either inserted or refused (mongo-java-server
 * stops an unordered bulk at its first duplicate: those after it are
 * neither). A failure that lists no duplicate (the connection lost: the
 * driver's reply holds an empty writeErrors) is an error. */
static bool
execute (online_keys_t *k, online_wbatch_t *b, bson_t *refused, size_t nops,
         bool *complete, bson_error_t *err)
{
    bson_t reply;
    bson_error_t why;
    bson_iter_t it, e, f, wc;
    uint32_t n = 0;
    int64_t inserted;
    bool ok;

    if (complete)
        *complete = true;
    if (!online_lease_check (k->on, err)) {
        online_ops (k->on)->discard (b);
        return false;
    }
    ok = online_ops (k->on)->send (b, &reply, &why);
    if (!ok && refused && bson_iter_init_find (&it, &reply, "writeErrors") &&
        bson_iter_recurse (&it, &e) &&
        !(bson_iter_init_find (&f, &reply, "writeConcernErrors") && bson_iter_recurse (&f, &wc) &&
          bson_iter_next (&wc))) {
        ok = true;
        while (ok && bson_iter_next (&e)) {
            bson_iter_t code, index;
            char key[16];
            const char *kp;
            size_t kl;
            ok = bson_iter_recurse (&e, &code) && bson_iter_find (&code, "code") &&
                 bson_iter_as_int64 (&code) == 11000 && bson_iter_recurse (&e, &index) &&
                 bson_iter_find (&index, "index");
            if (ok) {
                kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
                bson_append_int64 (refused, kp, (int) kl, bson_iter_as_int64 (&index));
            }
        }
        inserted = bson_iter_init_find (&it, &reply, "nInserted") ? bson_iter_as_int64 (&it) : -1;
        if (ok && n == 0)
            ok = false;
        if (ok && complete)
            *complete = inserted >= 0 && (size_t) inserted + n == nops;
    }
    bson_destroy (&reply);
    return ok || online_fail (k->on, err, &why, "writing the join's key map");
}

/* Gives each pending entry whose index is in which (all when NULL) the
 * keys the map lacks, by updates, in commands of the server's size
 * (online_caps_update_chunk); have: whether
 * k->there says what the map holds. */
static bool
add_keys (online_keys_t *k, const bool *which, bool have, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (k->on);
    online_docs_t *p = &k->pending;
    online_wbatch_t *b = NULL;
    size_t in_bulk = 0;
    bson_error_t why;
    bool ok = true;

    for (size_t i = 0; ok && i < p->n; i++) {
        const uint8_t *e = online_doc_bytes (p, i);
        ssize_t t = have ? find_there (k, e, p->docs[i].len) : -1;
        bson_t sel = BSON_INITIALIZER, u = BSON_INITIALIZER;
        bson_iter_t id;
        if ((which && !which[i]) || (have && t < 0))
            goto next;
        if (!lacking (e, p->docs[i].len, t < 0 ? NULL : online_doc_bytes (&k->there, (size_t) t),
                      t < 0 ? 0 : k->there.docs[t].len, &u))
            goto next;
        if (!rm_doc_field (e, p->docs[i].len, "_id", 3, &id))
            goto next;
        bson_append_iter (&sel, "_id", 3, &id);
        if (!b)
            b = ops->batch (k->on, k->coll);
        ok = ops->add (b, ONLINE_W_UPDATE, &sel, &u, false, &why) ||
             online_fail (k->on, err, &why, "writing the join's key map");
        if (ok && (int64_t) ++in_bulk >= online_caps_update_chunk (k->on)) {
            ok = execute (k, b, NULL, 0, NULL, err);
            b = NULL;
            in_bulk = 0;
        }
    next:
        bson_destroy (&sel);
        bson_destroy (&u);
    }
    if (ok && b) {
        ok = execute (k, b, NULL, 0, NULL, err);
        b = NULL;
    }
    if (b)
        ops->discard (b);
    return ok;
}

/* Inserts the pending entries the map has no entry for (have: k->there
 * says which); those refused as there already are read, and get the keys
 * they lack by update (a partner read again with the same key, the common
 * case, costs no update: FerretDB 1.x answers each by a scan). */
static bool
insert_new (online_keys_t *k, bool have, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (k->on);
    online_docs_t *p = &k->pending;
    online_wbatch_t *b = ops->batch (k->on, k->coll);
    size_t *op = bson_malloc ((p->n ? p->n : 1) * sizeof *op), nop = 0;
    bool *again = bson_malloc0 (p->n ? p->n : 1);
    bson_t refused = BSON_INITIALIZER;
    bson_error_t why;
    bson_iter_t it;
    bool ok = true, any = false, complete = true;

    for (size_t i = 0; ok && i < p->n; i++) {
        bson_t e;
        if (have && find_there (k, online_doc_bytes (p, i), p->docs[i].len) >= 0)
            continue;
        bson_init_static (&e, online_doc_bytes (p, i), p->docs[i].len);
        ok = ops->add (b, ONLINE_W_INSERT, NULL, &e, false, &why) ||
             online_fail (k->on, err, &why, "writing the join's key map");
        op[nop++] = i;
    }
    if (ok && nop)
        ok = execute (k, b, &refused, nop, &complete, err);
    else
        ops->discard (b);
    if (ok && !complete) {
        /* Some neither inserted nor refused: what is there now read and
         * given its keys, the rest inserted again (each round leaves
         * fewer: what the server inserted or refused is there now). */
        bson_destroy (&refused);
        bson_free (op);
        bson_free (again);
        return read_there (k, NULL, err) && add_keys (k, NULL, true, err) &&
               insert_new (k, true, err);
    }
    if (ok && bson_iter_init (&it, &refused))
        while (bson_iter_next (&it)) {
            int64_t x = bson_iter_as_int64 (&it);
            if (x >= 0 && (size_t) x < nop)
                again[op[x]] = any = true;
        }
    if (ok && any)
        ok = read_there (k, again, err) && add_keys (k, again, true, err);
    bson_destroy (&refused);
    bson_free (op);
    bson_free (again);
    return ok;
}

bool
online_keys_flush (online_keys_t *k, bson_error_t *err)
{
    bool ok = true;

    if (!k->pending.n)
        return true;
    /* read_there fills k->there afresh wherever it is used. */
    if (k->known_first)
        ok = read_there (k, NULL, err) && add_keys (k, NULL, true, err);
    ok = ok && insert_new (k, k->known_first, err);
    online_docs_reset (&k->pending);
    return ok;
}

bool
online_keys_old (online_keys_t *k, const bson_t *ids, bson_t *arr, uint32_t *n, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (k->on);
    online_cursor_t *cur = find_entries (k, ids);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    while (ops->next (cur, &doc)) {
        bson_iter_t vals, v;
        if (!bson_iter_init_find (&vals, doc, "k") || !bson_iter_recurse (&vals, &v))
            continue;
        while (bson_iter_next (&v)) {
            char key[16];
            const char *kp;
            size_t kl = bson_uint32_to_string ((*n)++, &kp, key, sizeof key);
            bson_append_iter (arr, kp, (int) kl, &v);
        }
    }
    if (!ops->end (cur, &why))
        ok = online_fail (k->on, err, &why, "reading the join's key map");
    return ok;
}

bool
online_keys_drop_plan (online_t *on, bson_error_t *err)
{
    mongoc_collection_t *c = map_collection (on);
    bson_error_t why;
    /* NamespaceNotFound (26): no map, nothing to forget. */
    bool ok = online_lease_check (on, err) &&
              (online_ops (on)->drop (on, c, &why) || online_drop_gone (&why) ||
               online_fail (on, err, &why, "forgetting the join's key map"));
    mongoc_collection_destroy (c);
    return ok;
}
