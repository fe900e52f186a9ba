/* Whether a few _ids are read one find each rather than by one $in
 * (online.h, "points"): the choice of ops_keys (online_ops.c).
 *
 * follow's rounds, finalize's drain and the checks around them read the
 * documents a change named by {_id: {$in: [...]}}, a few at a time.
 * MongoDB and mongo-java-server answer that from the _id index. FerretDB
 * 1.x pushes no $in down to its storage: it reads and decodes the whole
 * collection for it, once a round, whatever the round's size. It does
 * push down an equality on an _id of some types (a string, an ObjectId;
 * not a number), which then costs about a twentieth of a whole read (at
 * 20,000 documents: 20 ms against 380 ms). So where a server says, by
 * explain, that it serves a point read of the keys' type and not their
 * $in, up to ONLINE_POINTS_MAX keys are read as that many finds.
 *
 * Nothing is assumed of a server: a connection asks explain once for an
 * _id $in, then once per type of key it meets (the answer is the
 * server's, not a collection's), and keeps the answers. A server whose
 * explain refuses, or says nothing either way, keeps the $in, right
 * everywhere. With --to-uri a connection reaches two servers and a
 * collection's handle does not say which it is on: the $in is kept. */
#include <string.h>

#include "online.h"
#include "remodel/value.h"

/* Past this many keys one whole read costs less than the points would on
 * a server that decodes the whole collection for a point it cannot push
 * down in another type, and about what they cost where it can. */
#define ONLINE_POINTS_MAX 16

/* The types a point read may be asked for: scalars, whose {_id: v} means
 * equality as the $in's element does (a document could read as an
 * operator, an array or a regex matches otherwise). */
static bool
point_type (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_UTF8:
    case BSON_TYPE_OID:
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DATE_TIME:
    case BSON_TYPE_BOOL:
    case BSON_TYPE_BINARY:
        return true;
    default:
        return false;
    }
}

/* explain's answer for filter on c: 1 the server serves it without a
 * whole read, 0 it does not, -1 it did not say (refused, or an answer of
 * another shape). */
static int
explained (online_t *on, mongoc_collection_t *c, const bson_t *filter, online_points_ask_fn ask)
{
    bson_t *find = BCON_NEW ("find", BCON_UTF8 (mongoc_collection_get_name (c)), "filter",
                             BCON_DOCUMENT (filter));
    bson_t *cmd = BCON_NEW ("explain", BCON_DOCUMENT (find), "verbosity",
                            BCON_UTF8 ("queryPlanner"));
    bson_t reply;
    bson_error_t why;
    int said = -1;

    if (ask (on, c, NULL, cmd, &reply, &why))
        said = online_explain_served (&reply);
    bson_destroy (&reply);
    bson_destroy (cmd);
    bson_destroy (find);
    return said;
}

/* Whether the keys hold two that are one to the server (1 and 1.0 find
 * the same document: the points would read it twice, the $in once). */
static bool
repeats (const bson_t *keys)
{
    bson_iter_t a, b;
    if (!bson_iter_init (&a, keys))
        return true;
    while (bson_iter_next (&a)) {
        b = a;
        while (bson_iter_next (&b))
            if (rm_value_compare (&a, &b) == 0)
                return true;
    }
    return false;
}

/* Whether opts leaves each point's read the same as the $in's share of
 * it: a projection or a batch size only (a sort or a limit spans keys). */
static bool
opts_per_key (const bson_t *opts)
{
    bson_iter_t it;
    if (!opts || !bson_iter_init (&it, opts))
        return true;
    while (bson_iter_next (&it))
        if (strcmp (bson_iter_key (&it), "projection") && strcmp (bson_iter_key (&it), "batchSize"))
            return false;
    return true;
}

bool
online_points_fit (online_t *on, mongoc_collection_t *c, const char *field, const bson_t *keys,
                   const bson_t *opts, online_points_ask_fn ask)
{
    online_points_memo_t *m = &on->points;
    uint32_t n = bson_count_keys (keys);
    bson_iter_t it;

    if (strcmp (field, "_id") || n == 0 || n > ONLINE_POINTS_MAX || on->run->pair ||
        !opts_per_key (opts) || m->in_served == 1 || !bson_iter_init (&it, keys))
        return false;
    while (bson_iter_next (&it))
        if (!point_type (bson_iter_type (&it)))
            return false;
    if (m->in_served == 0) {
        bson_t filter = BSON_INITIALIZER, cond;
        BSON_APPEND_DOCUMENT_BEGIN (&filter, "_id", &cond);
        BSON_APPEND_ARRAY (&cond, "$in", keys);
        bson_append_document_end (&filter, &cond);
        /* Not served, or no answer: either way the points are asked
         * about; only a server that says it serves the $in keeps it. */
        m->in_served = explained (on, c, &filter, ask) == 1 ? 1 : 2;
        bson_destroy (&filter);
        if (m->in_served == 1)
            return false;
    }
    bson_iter_init (&it, keys);
    while (bson_iter_next (&it)) {
        uint32_t t = (uint32_t) bson_iter_type (&it);
        uint64_t bit = 1ULL << (t & 63);
        int k = t >> 6;
        if (!(m->asked[k] & bit)) {
            bson_t filter = BSON_INITIALIZER;
            bson_append_iter (&filter, "_id", 3, &it);
            if (explained (on, c, &filter, ask) == 1)
                m->served[k] |= bit;
            m->asked[k] |= bit;
            bson_destroy (&filter);
        }
        if (!(m->served[k] & bit))
            return false;
    }
    return !repeats (keys);
}
