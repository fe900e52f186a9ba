/* What a sync from the change log may rewrite or remove in a target that a
 * later step reads, written down before it does (online_state.h).
 *
 * A step's rewritten and removed results are the next steps' changes
 * (online_incr.c): a summary over an extract's children recomputes the
 * posts whose children changed. Those are found by comparing results
 * with the target; once written, nothing differs. A sync killed after
 * step 1 wrote and before step 2 did would, run again, find step 1 right
 * and step 2 with nothing to do, and step 2's results would stay stale
 * for good. So before a chunk of step 1 writes, every _id it may touch
 * (the results its drivers make now, and those they had) goes to
 * <state-db>.made_<plan id>; the next sync reads them back as changes of
 * those targets, and the collection is dropped once the point the round
 * covers is saved. Only _ids, as the log's changes: recomputing a result
 * that had not changed costs a read, nothing more. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"

/* Ids in one journal document: far below 16 MiB whatever their type. */
#define MADE_PER_DOC 10000

static mongoc_collection_t *
made_collection (online_t *on)
{
    char name[160];
    snprintf (name, sizeof name, "made_%s", on->run->names.id);
    return online_collection (on, on->run->o->state_db, name);
}

bool
online_made_load (online_t *on, online_changes_t *made, bson_error_t *err)
{
    mongoc_collection_t *c = made_collection (on);
    bson_t empty = BSON_INITIALIZER;
    online_cursor_t *cur = online_ops (on)->find (on, c, &empty, NULL);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    while (online_ops (on)->next (cur, &doc)) {
        bson_iter_t ns, ids, id;
        if (!bson_iter_init_find (&ns, doc, "ns") || !BSON_ITER_HOLDS_UTF8 (&ns) ||
            !bson_iter_init_find (&ids, doc, "ids") || !bson_iter_recurse (&ids, &id))
            continue;
        while (bson_iter_next (&id))
            online_changes_add (made, bson_iter_utf8 (&ns, NULL), &id);
        on->made_noted = true;
    }
    if (!online_ops (on)->end (cur, &why))
        ok = online_fail (on, err, &why, "reading what an earlier sync was writing");
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_made_note (online_t *on, const char *ns, const bson_t *ids, bson_error_t *err)
{
    mongoc_collection_t *c;
    bson_iter_t it;
    bson_t doc, arr;
    bson_error_t why;
    uint32_t n = 0;
    bool ok = true, any = false;

    if (!bson_iter_init (&it, ids))
        return true;
    c = made_collection (on);
    /* A document per MADE_PER_DOC ids; each insert is durable on its own
     * (a kill between two leaves the first, which is all that was
     * written so far). */
    for (bool more = bson_iter_next (&it); ok && more;) {
        bson_init (&doc);
        BSON_APPEND_UTF8 (&doc, "ns", ns);
        BSON_APPEND_ARRAY_BEGIN (&doc, "ids", &arr);
        for (n = 0; more && n < MADE_PER_DOC; more = bson_iter_next (&it)) {
            char key[16];
            const char *kp;
            size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_iter (&arr, kp, (int) kl, &it);
        }
        bson_append_array_end (&doc, &arr);
        /* Fenced: a sync that lost its lease notes nothing more. */
        ok = online_lease_check (on, err) &&
             (online_ops (on)->write (on, c, ONLINE_W_INSERT, NULL, &doc, false, false, NULL,
                                      &why) ||
              online_fail (on, err, &why, "noting what a sync is about to write"));
        any |= ok;
        bson_destroy (&doc);
    }
    on->made_noted |= any;
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_made_drop (online_t *on, bool always, bson_error_t *err)
{
    mongoc_collection_t *c;
    bson_error_t why;
    bool ok;
    if (!on->made_noted && !always)
        return true;
    c = made_collection (on);
    /* NamespaceNotFound (26): nothing noted, nothing to forget. */
    ok = online_lease_check (on, err) &&
         (online_ops (on)->drop (on, c, &why) || online_drop_gone (&why) ||
          online_fail (on, err, &why, "forgetting what a sync was writing"));
    if (ok)
        on->made_noted = false;
    mongoc_collection_destroy (c);
    return ok;
}
