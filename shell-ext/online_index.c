/* The index a join's partners are fetched by (online.h). Without one,
 * every batch's $in would scan the whole collection: the run is refused
 * with the command that makes it, unless --create-indexes. A dry run
 * creates nothing: it refuses as the run would, or says what it would
 * create. */
#include <stdio.h>
#include <string.h>

#include "online.h"
#include "remodel/cli.h"

/* Whether spec (an index's "key") starts with field. */
static bool
leads_with (const bson_t *spec, const char *field)
{
    bson_iter_t it;
    return bson_iter_init (&it, spec) && bson_iter_next (&it) && strcmp (bson_iter_key (&it), field) == 0;
}

bool
online_index_check (online_t *on, const char *db, const char *coll, const char *key, bool create,
                    bson_error_t *err)
{
    mongoc_collection_t *c;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool found = false, ok = true;

    if (strcmp (key, "_id") == 0)
        return true; /* every collection has it */
    c = online_collection (on, db, coll);
    cur = mongoc_collection_find_indexes_with_opts (c, NULL);
    while (!found && mongoc_cursor_next (cur, &doc)) {
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
    if (mongoc_cursor_error (cur, &why) && why.code != 26)
        ok = online_fail (on, err, &why, "listing indexes");
    mongoc_cursor_destroy (cur);
    if (ok && !found) {
        if (create && on->o->dry_run) {
            /* A dry run writes nothing: it says what a run would make. */
            if (!on->o->quiet)
                rm_cli_line (stderr, "", "\n",
                             "remodel: dry run: %s.%s has no index on \"%s\", by which the join "
                             "fetches its documents: a run would create it (--create-indexes); "
                             "this one fetches them without", db, coll, key);
        } else if (create) {
            char name[300];
            bson_t *cmd;
            snprintf (name, sizeof name, "%s_1", key);
            cmd = BCON_NEW ("createIndexes", BCON_UTF8 (coll), "indexes", "[", "{", "key", "{",
                            key, BCON_INT32 (1), "}", "name", BCON_UTF8 (name), "}", "]");
            ok = mongoc_collection_write_command_with_opts (c, cmd, NULL, NULL, &why) ||
                 online_fail (on, err, &why, "creating an index");
            bson_destroy (cmd);
        } else {
            /* After a run by the compiled pipelines or the mongosh script,
             * which need no index, sync, verify and finalize still do:
             * they compute client-side, batch by batch. */
            const char *cmd = on->o->command ? on->o->command : "run";
            bool later = strcmp (cmd, "run") != 0;
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
