/* The index a join's partners are fetched by (online_batch.h). Without one,
 * every batch's $in would scan the whole collection: the run is refused
 * with the command that makes it, unless --create-indexes. A dry run
 * creates nothing: it refuses as the run would, or says what it would
 * create. What remodel creates is noted in the plan's record (madeIndexes),
 * and a rollback that forgets the plan drops exactly those; the indexes
 * `remodel run` gives the namespaces a step creates (an overflow page's
 * parent_id) are made with them. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/engine.h"

/* Whether spec (an index's "key") starts with field. */
static bool
leads_with (const bson_t *spec, const char *field)
{
    bson_iter_t it;
    return bson_iter_init (&it, spec) && bson_iter_next (&it) && strcmp (bson_iter_key (&it), field) == 0;
}

/* Notes in the plan's record that remodel made index name ({key: 1}) on
 * db.coll, before anything is read by it. verify holds no lease: its
 * note is written without one (it is an index it made all the same). */
static bool
note_made (online_t *on, const char *db, const char *coll, const char *name, const char *key,
           bson_error_t *err)
{
    bson_t *u = BCON_NEW ("$addToSet", "{", "madeIndexes", "{", "db", BCON_UTF8 (db), "coll",
                          BCON_UTF8 (coll), "name", BCON_UTF8 (name), "key", BCON_UTF8 (key),
                          "}", "}");
    bool ok;
    if (on->lease) {
        ok = online_plan_update (on, u, err);
    } else {
        bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
        bson_error_t why;
        ok = online_ops (on)->state_update (on, "plans", q, u, false, NULL, &why) ||
             online_fail (on, err, &why, "noting an index it made");
        bson_destroy (q);
    }
    bson_destroy (u);
    return ok;
}

/* Whether db.coll has index name on {key: 1} and nothing else: the one
 * remodel made (another of that name is not remodel's). */
static bool
has_made (online_t *on, const char *db, const char *coll, const char *name, const char *key,
          bson_error_t *err, bool *found)
{
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *c = online_collection (on, db, coll);
    online_cursor_t *cur = ops->indexes (on, c);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    *found = false;
    while (!*found && ops->next (cur, &doc)) {
        bson_iter_t it, k;
        if (!bson_iter_init_find (&it, doc, "name") || !BSON_ITER_HOLDS_UTF8 (&it) ||
            strcmp (bson_iter_utf8 (&it, NULL), name) != 0)
            continue;
        *found = bson_iter_init_find (&it, doc, "key") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
                 bson_iter_recurse (&it, &k) && bson_iter_next (&k) &&
                 !strcmp (bson_iter_key (&k), key) && bson_iter_as_int64 (&k) == 1 &&
                 !bson_iter_next (&k);
    }
    /* Its collection gone (results dropped): the index went with it. */
    if (!ops->end (cur, &why) && why.code != 26)
        ok = online_fail (on, err, &why, "listing indexes");
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_index_drop_made (online_t *on, bson_error_t *err)
{
    bson_t rec;
    bson_iter_t it, list;
    bool found, ok;

    ok = online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           err);
    if (ok && found && bson_iter_init_find (&it, &rec, "madeIndexes") &&
        BSON_ITER_HOLDS_ARRAY (&it) && bson_iter_recurse (&it, &list)) {
        while (ok && bson_iter_next (&list)) {
            const char *f[4] = {"db", "coll", "name", "key"}, *v[4] = {NULL, NULL, NULL, NULL};
            bson_iter_t e;
            bool there = false;
            for (int i = 0; i < 4; i++)
                if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, f[i]) &&
                    BSON_ITER_HOLDS_UTF8 (&e))
                    v[i] = bson_iter_utf8 (&e, NULL);
            if (!v[0] || !v[1] || !v[2] || !v[3])
                continue;
            ok = has_made (on, v[0], v[1], v[2], v[3], err, &there);
            if (ok && there) {
                mongoc_collection_t *c = online_collection (on, v[0], v[1]);
                bson_error_t why;
                ok = online_lease_check (on, err) &&
                     (online_ops (on)->drop_index (on, c, v[2], &why) ||
                      online_fail (on, err, &why, "dropping an index it made"));
                mongoc_collection_destroy (c);
                if (ok)
                    online_say_note (on, "rollback: dropped index %s of %s.%s (made by "
                                     "--create-indexes)", v[2], v[0], v[1]);
            }
        }
    }
    bson_destroy (&rec);
    return ok;
}

/* The indexes `remodel run` writes in the metadata of the namespaces step
 * s creates (rm_step_created_info), made on their targets db.coll[i]. */
bool
online_index_created (online_t *on, const rm_step_t *s, const rm_nsref_t *const *targets,
                      const char **colls, size_t n, bson_error_t *err)
{
    rm_dump_info_t made;
    bool ok = true;

    rm_dump_info_init (&made);
    rm_step_created_info (s, &made);
    for (size_t i = 0; ok && i < made.n_ns; i++) {
        const rm_ns_t *ns = made.ns[i];
        bson_t *meta;
        bson_iter_t it, list;
        const char *coll = NULL;
        for (size_t t = 0; t < n; t++)
            if (!strcmp (targets[t]->db, ns->db) && !strcmp (targets[t]->coll, ns->coll))
                coll = colls[t];
        if (!coll || !ns->metadata ||
            !(meta = bson_new_from_json ((const uint8_t *) ns->metadata,
                                         (ssize_t) ns->metadata_len, NULL)))
            continue;
        if (bson_iter_init_find (&it, meta, "indexes") && BSON_ITER_HOLDS_ARRAY (&it) &&
            bson_iter_recurse (&it, &list)) {
            while (ok && bson_iter_next (&list)) {
                bson_iter_t e;
                const uint8_t *data;
                uint32_t len;
                bson_t key, *cmd;
                const char *name = NULL;
                bson_error_t why;
                mongoc_collection_t *c;
                if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, "name") &&
                    BSON_ITER_HOLDS_UTF8 (&e))
                    name = bson_iter_utf8 (&e, NULL);
                if (!name || !strcmp (name, "_id_") || !bson_iter_recurse (&list, &e) ||
                    !bson_iter_find (&e, "key") || !BSON_ITER_HOLDS_DOCUMENT (&e))
                    continue;
                bson_iter_document (&e, &len, &data);
                if (!bson_init_static (&key, data, len))
                    continue;
                /* The handle's name: with --to-uri a final result has
                 * its namespace's own on the destination. */
                c = online_collection (on, ns->db, coll);
                cmd = BCON_NEW ("createIndexes", BCON_UTF8 (mongoc_collection_get_name (c)),
                                "indexes", "[", "{", "key", BCON_DOCUMENT (&key), "name",
                                BCON_UTF8 (name), "}", "]");
                ok = online_lease_check (on, err) &&
                     (online_ops (on)->index_command (on, c, cmd, NULL, &why) ||
                      online_fail (on, err, &why, "creating an index of a new collection"));
                mongoc_collection_destroy (c);
                bson_destroy (cmd);
            }
        }
        bson_destroy (meta);
    }
    rm_dump_info_destroy (&made);
    return ok;
}

bool
online_index_check (online_t *on, const char *db, const char *coll, const char *key, bool create,
                    bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *c;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool found = false, ok = true;

    if (strcmp (key, "_id") == 0)
        return true; /* every collection has it */
    c = online_collection (on, db, coll);
    cur = ops->indexes (on, c);
    while (!found && ops->next (cur, &doc)) {
        bson_iter_t it;
        const uint8_t *data;
        uint32_t len;
        bson_t spec;
        if (bson_iter_init_find (&it, doc, "key") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
            bson_iter_document (&it, &len, &data);
            if (bson_init_static (&spec, data, len))
                found = leads_with (&spec, key);
        }
    }
    /* A collection that does not exist yet has no index and no documents:
     * NamespaceNotFound (26) is not an error here. */
    if (!ops->end (cur, &why) && why.code != 26)
        ok = online_fail (on, err, &why, "listing indexes");
    if (ok && !found) {
        if (create && on->run->o->dry_run) {
            /* A dry run writes nothing: it says what a run would make. */
            online_say_note (on, "dry run: %s.%s has no index on \"%s\", by which the join fetches "
                             "its documents: a run would create it (--create-indexes); this one "
                             "fetches them without", db, coll, key);
        } else if (create) {
            char name[300];
            bson_t *cmd;
            snprintf (name, sizeof name, "%s_1", key);
            bson_t reply;
            bson_iter_t a, b;
            cmd = BCON_NEW ("createIndexes", BCON_UTF8 (mongoc_collection_get_name (c)), "indexes",
                            "[", "{", "key", "{",
                            key, BCON_INT32 (1), "}", "name", BCON_UTF8 (name), "}", "]");
            /* Fenced as every write: a holder resumed past its lease
             * (another run may have rolled back) makes no index. */
            bson_init (&reply);
            ok = online_lease_check (on, err) &&
                 (ops->index_command (on, c, cmd, &reply, &why) ||
                  online_fail (on, err, &why, "creating an index"));
            /* Noted only when this command made it: an index another
             * client made in between is not remodel's to drop. */
            if (ok && !(bson_iter_init_find (&a, &reply, "numIndexesBefore") &&
                        bson_iter_init_find (&b, &reply, "numIndexesAfter") &&
                        bson_iter_as_int64 (&a) == bson_iter_as_int64 (&b)))
                ok = note_made (on, db, coll, name, key, err);
            bson_destroy (&reply);
            bson_destroy (cmd);
        } else {
            /* After a run by the compiled pipelines or the mongosh script,
             * which need no index, sync, verify and finalize still do:
             * they compute client-side, batch by batch. */
            const char *cmd = on->run->o->command ? on->run->o->command : "run";
            bool later = !on->run->o->starts;
            rm_error_set (err, RM_ERR_USAGE,
                          "%s.%s has no index on \"%s\", by which the join fetches its "
                          "documents%s%s%s; create it (db.getSiblingDB(\"%s\").getCollection(\"%s\")"
                          ".createIndex({\"%s\": 1})) or give %s --create-indexes",
                          db, coll, key, later ? " (" : "", later ? cmd : "",
                          later ? " computes client-side, batch by batch, even after a run by "
                                  "the compiled pipelines or the mongosh script, which need none)"
                                : "",
                          db, coll, key, cmd);
            ok = false;
        }
    }
    mongoc_collection_destroy (c);
    return ok;
}
