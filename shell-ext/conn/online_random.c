/* _ids at random, by the server's $sample: what verify's sample of
 * drivers (follow/online_incr.c) and a collection's partitions
 * (state/online_partition_sample.c) start from. A server may have none
 * (FerretDB 1.x), or fail now and then (mongo-java-server's "Comparison
 * method violates its general contract!", so it is asked three times):
 * then each caller reads another way, saying why. */
#include <string.h>

#include "online.h"

/* MongoDB answers a $sample of under 5% by a random cursor on the
 * storage engine, a few reads a document sampled. An engine without one
 * orders every document at random first: mongo-java-server took 1.3 s
 * for 400 of 100,000 tasks, where reading all their _ids took 0.1 s. A
 * mongos reports no engine but sends the $sample to its shards'. */
bool
online_random_cursor_of (const bson_t *status, char *why, size_t cap)
{
    bson_iter_t it;
    const char *engine = NULL;

    if (bson_iter_init_find (&it, status, "process") && BSON_ITER_HOLDS_UTF8 (&it) &&
        !strcmp (bson_iter_utf8 (&it, NULL), "mongos"))
        return true;
    if (bson_iter_init (&it, status) && bson_iter_find_descendant (&it, "storageEngine.name", &it) &&
        BSON_ITER_HOLDS_UTF8 (&it))
        engine = bson_iter_utf8 (&it, NULL);
    if (engine && (!strcmp (engine, "wiredTiger") || !strcmp (engine, "inMemory")))
        return true;
    if (engine)
        snprintf (why, cap, "its storage engine (%s) has no random cursor for $sample", engine);
    else
        snprintf (why, cap, "serverStatus names no storage engine with a random cursor for $sample");
    return false;
}

bool
online_random_cursor (online_t *on, char *why, size_t cap)
{
    if (!on->random_cursor) {
        bson_t *cmd = BCON_NEW ("serverStatus", BCON_INT32 (1));
        bson_t reply;
        bson_error_t fault;
        bool answered = online_ops (on)->command (on, NULL, "admin", cmd, &reply, &fault);

        /* A serverStatus refused (a user without clusterMonitor's
         * rights) says nothing: $sample is asked, as before this check,
         * rather than every _id read from a collection of any size. */
        if (!answered || online_random_cursor_of (&reply, on->random_why, sizeof on->random_why))
            on->random_cursor = 1;
        else
            on->random_cursor = -1;
        bson_destroy (&reply);
        bson_destroy (cmd);
    }
    if (on->random_cursor < 0 && why)
        snprintf (why, cap, "%s", on->random_why);
    return on->random_cursor > 0;
}

bool
online_random_ids (online_t *on, mongoc_collection_t *c, int64_t n, bson_t *ids, bool *sampled,
                   char *why, size_t cap, const char *what, bson_error_t *err)
{
    bson_t *pipe = BCON_NEW ("pipeline", "[", "{", "$sample", "{", "size", BCON_INT64 (n), "}", "}",
                             "{", "$project", "{", "_id", BCON_INT32 (1), "}", "}", "]");
    bson_error_t fault;
    bool ok = true;

    *sampled = false;
    for (int tries = 0; ok && !*sampled && tries < 3; tries++) {
        online_cursor_t *cur = online_ops (on)->aggregate (on, c, pipe, NULL);
        const bson_t *doc;
        uint32_t k = 0;
        /* A failed cursor may have yielded some: each try starts anew. */
        bson_reinit (ids);
        while (online_ops (on)->next (cur, &doc)) {
            bson_iter_t id;
            char key[16];
            const char *kp;
            if (!bson_iter_init_find (&id, doc, "_id"))
                continue;
            size_t kl = bson_uint32_to_string (k++, &kp, key, sizeof key);
            bson_append_iter (ids, kp, (int) kl, &id);
        }
        *sampled = online_ops (on)->end (cur, &fault);
        if (!*sampled && (fault.domain == MONGOC_ERROR_STREAM ||
                          fault.domain == MONGOC_ERROR_SERVER_SELECTION))
            ok = online_fail (on, err, &fault, what);
    }
    if (!*sampled) {
        bson_reinit (ids);
        if (ok)
            snprintf (why, cap, "%s", fault.message);
    }
    bson_destroy (pipe);
    return ok;
}
