/* _ids at random, by the server's $sample: what verify's sample of
 * drivers (follow/online_incr.c) and a collection's partitions
 * (state/online_partition_sample.c) start from. A server may have none
 * (FerretDB 1.x), or fail now and then (mongo-java-server's "Comparison
 * method violates its general contract!", so it is asked three times):
 * then each caller reads another way, saying why. */
#include "online.h"

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
        mongoc_cursor_t *cur = mongoc_collection_aggregate (c, MONGOC_QUERY_NONE, pipe, NULL, NULL);
        const bson_t *doc;
        uint32_t k = 0;
        /* A failed cursor may have yielded some: each try starts anew. */
        bson_reinit (ids);
        while (mongoc_cursor_next (cur, &doc)) {
            bson_iter_t id;
            char key[16];
            const char *kp;
            if (!bson_iter_init_find (&id, doc, "_id"))
                continue;
            size_t kl = bson_uint32_to_string (k++, &kp, key, sizeof key);
            bson_append_iter (ids, kp, (int) kl, &id);
        }
        *sampled = !mongoc_cursor_error (cur, &fault);
        if (!*sampled && (fault.domain == MONGOC_ERROR_STREAM ||
                          fault.domain == MONGOC_ERROR_SERVER_SELECTION))
            ok = online_fail (on, err, &fault, what);
        mongoc_cursor_destroy (cur);
    }
    if (!*sampled) {
        bson_reinit (ids);
        if (ok)
            snprintf (why, cap, "%s", fault.message);
    }
    bson_destroy (pipe);
    return ok;
}
