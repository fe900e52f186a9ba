/* The sample a driving collection's partitions are computed from
 * (online_partition.c), read from the server: its _ids at random by
 * $sample (online_random_ids), at most one in 25 documents (mongosync
 * takes 4%: more and MongoDB's $sample sorts the whole collection
 * instead of its random cursor) and 100 a partition asked for. Where the
 * server has no $sample (FerretDB 1.x), it fails, or it has no random
 * cursor (mongo-java-server: online_random_cursor), one _id in so many
 * of a read of every _id in the server's natural order: a read of the
 * whole collection's _ids, once, where one query per bound with skip
 * would read the collection's first half as many times as bounds. The
 * partitions hold every _id whatever the sample; the sample only makes
 * them even. */
#include "online_state.h"

bool
online_partition_sample (online_t *on, mongoc_collection_t *c, int want, bson_t *sample,
                         int64_t *total, char *no_sample, size_t cap, bson_error_t *err)
{
    bson_error_t why;

    bson_reinit (sample);
    *total = online_estimated_of (on, c, &why);
    if (*total < 0)
        return online_fail (on, err, &why, "counting documents to partition");
    return online_partition_sample_of (on, c, want, *total, sample, no_sample, cap, err);
}

bool
online_partition_sample_of (online_t *on, mongoc_collection_t *c, int want, int64_t total,
                            bson_t *sample, char *no_sample, size_t cap, bson_error_t *err)
{
    bson_error_t why;
    int64_t n;
    bool sampled, ok;

    bson_reinit (sample);
    n = total / 25 < 100 * (int64_t) want ? total / 25 : 100 * (int64_t) want;
    if (want <= 1 || n < 1)
        return true; /* one partition: nothing to sample */
    ok = true;
    sampled = false;
    if (online_random_cursor (on, no_sample, cap))
        ok = online_random_ids (on, c, n, sample, &sampled, no_sample, cap,
                                "sampling _ids to partition", err);
    if (ok && !sampled) {
        bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
        bson_t empty = BSON_INITIALIZER;
        const online_ops_t *ops = online_ops (on);
        online_cursor_t *cur = ops->find (on, c, &empty, opts);
        int64_t every = total / n > 1 ? total / n : 1, seen = 0;
        uint32_t k = 0;
        const bson_t *doc;
        while (ops->next (cur, &doc)) {
            bson_iter_t id;
            char key[16];
            const char *kp;
            if (seen++ % every || !bson_iter_init_find (&id, doc, "_id"))
                continue;
            size_t kl = bson_uint32_to_string (k++, &kp, key, sizeof key);
            bson_append_iter (sample, kp, (int) kl, &id);
        }
        if (!ops->end (cur, &why))
            ok = online_fail (on, err, &why, "reading _ids to partition");
        bson_destroy (opts);
    }
    return ok;
}
