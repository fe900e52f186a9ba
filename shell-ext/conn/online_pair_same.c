/* Two connection strings, one deployment? (issue 62): --to-uri names the
 * deployment the results go to, and everything a run there writes or
 * drops (--drop) is meant for that other deployment. A destination that
 * is the source under another spelling (localhost for 127.0.0.1, a slash
 * left out, an option added, a seed list in another order, an SRV name)
 * would have its namespaces dropped and rewritten on the source itself,
 * so strings prove nothing: the servers are asked.
 *
 * - hello's topologyVersion.processId is an ObjectId per server process
 *   (MongoDB 4.4+): one process answering both is one deployment. Other
 *   processes may still be one deployment (two members of a replica set,
 *   two mongos of a cluster), and set names and hosts may repeat across
 *   deployments (two test sets both called rs0 on localhost:27017), so
 *   nothing in hello proves two deployments apart.
 * - The sure test, a marker: a random token written through the
 *   destination's connection into its state database, looked for through
 *   the source's, read from the primary (a secondary could lag behind the
 *   write and miss it), then removed. Only remodel's state database is
 *   written; a run that writes nothing (--dry-run) asks hello alone.
 * The source is first asked which databases it has: where the state
 * database is not among them the token cannot be there, and a find is
 * not sent (mongo-java-server lists a database that a read merely names). */
#include <string.h>
#include <time.h>

#include "online.h"

/* The collection of the state database the markers are written to. */
#define MARKERS "markers"

/* hello's (isMaster's on a server without it) process id into oid. */
static bool
process_id (online_t *on, mongoc_collection_t *c, bson_oid_t *oid)
{
    static const char *const asks[] = {"hello", "isMaster"};
    bson_iter_t it, pid;
    bool found = false;

    for (size_t k = 0; k < 2 && !found; k++) {
        bson_t cmd = BSON_INITIALIZER, reply;
        bson_error_t why;
        bool ok;
        BSON_APPEND_INT32 (&cmd, asks[k], 1);
        ok = online_ops (on)->command (on, c, "admin", &cmd, &reply, &why);
        if (ok && bson_iter_init (&it, &reply) &&
            bson_iter_find_descendant (&it, "topologyVersion.processId", &pid) &&
            BSON_ITER_HOLDS_OID (&pid)) {
            bson_oid_copy (bson_iter_oid (&pid), oid);
            found = true;
        }
        bson_destroy (&cmd);
        bson_destroy (&reply);
        if (ok)
            break; /* hello answered: isMaster would say no more */
    }
    return found;
}

/* Whether the source lists the state database (true where it would not
 * say: then the find decides). */
static bool
source_has_state_db (online_t *on)
{
    bson_error_t err;
    char **dbs = online_pair_databases (on, ONLINE_SOURCE, &err);
    bool has = dbs == NULL;

    for (size_t i = 0; dbs && dbs[i]; i++)
        has |= !strcmp (dbs[i], on->run->o->state_db);
    if (dbs)
        bson_strfreev (dbs);
    return has;
}

/* The marker: written through the destination, looked for through the
 * source (*seen), removed. */
static bool
marker_seen (online_t *on, bool *seen, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *c;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_oid_t oid;
    bson_t *sel, *u, *opts;
    bson_error_t why;
    char token[25];
    bool ok;

    bson_oid_init (&oid, NULL);
    bson_oid_to_string (&oid, token);
    sel = BCON_NEW ("_id", BCON_UTF8 (token));
    u = BCON_NEW ("$set", "{", "at", BCON_DATE_TIME ((int64_t) time (NULL) * 1000), "}");
    *seen = false;
    ok = ops->state_update (on, MARKERS, sel, u, true, NULL, &why) ||
         online_fail (on, err, &why, "writing a marker on the destination (--to-uri) to tell "
                      "the two deployments apart");
    if (ok && source_has_state_db (on)) {
        opts = BCON_NEW ("limit", BCON_INT64 (1));
        c = online_pair_side_primary (on, ONLINE_SOURCE, on->run->o->state_db, MARKERS);
        cur = ops->find (on, c, sel, opts);
        *seen = ops->next (cur, &doc);
        ok = ops->end (cur, &why) ||
             online_fail (on, err, &why, "looking for the destination's marker on the source");
        mongoc_collection_destroy (c);
        bson_destroy (opts);
    }
    /* Removed either way: where it stays (a cut), it names no plan and
     * the next command writes a token of its own. */
    if (ok)
        ok = ops->state_delete (on, MARKERS, sel, false, &why) ||
             online_fail (on, err, &why, "removing the marker from the destination");
    bson_destroy (sel);
    bson_destroy (u);
    return ok;
}

bool
online_pair_distinct (online_t *on, bson_error_t *err)
{
    mongoc_collection_t *src = online_pair_side (on, ONLINE_SOURCE, "admin", "$cmd");
    bson_oid_t a, b;
    bool same = process_id (on, src, &a) && process_id (on, NULL, &b) && bson_oid_equal (&a, &b);
    const char *how = "one server process answers both (hello's topologyVersion.processId)";

    mongoc_collection_destroy (src);
    if (!same && !on->run->o->dry_run) {
        if (!marker_seen (on, &same, err))
            return false;
        how = "a marker written through --to-uri was read back through --uri";
    }
    if (same)
        rm_error_set (err, RM_ERR_USAGE, "--to-uri names the deployment --uri does (%s: %s): "
                      "a run to another deployment would write and drop the source's own "
                      "namespaces; nothing was written or dropped (leave --to-uri out to "
                      "migrate within one deployment)", on->run->where, how);
    return !same;
}
