/* remodel online run --server-side (remodel/compile.h): each compiled pass runs on
 * the server, range by range over the driving collection's _id, as
 *   [{$match: {_id: {$in: <the range's _ids, read in order after the checkpoint>}}},
 *    <the step's stages>, {$merge: <its target>}]
 * with the client-side runner's checkpoints (one per pass, written after
 * each range's $merge is acknowledged), lease, pause, retries and status.
 * A range replayed after a crash merges the same documents again. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

/* The smallest pipeline using the stage, to see whether the server has it. */
static bson_t *
probe_stage (online_t *on, const char *stage)
{
    if (!strcmp (stage, "$lookup"))
        return BCON_NEW ("0", "{", "$lookup", "{", "from", BCON_UTF8 ("probe"), "localField",
                         BCON_UTF8 ("a"), "foreignField", BCON_UTF8 ("a"), "as", BCON_UTF8 ("b"),
                         "}", "}");
    if (!strcmp (stage, "$unwind"))
        return BCON_NEW ("0", "{", "$unwind", "{", "path", BCON_UTF8 ("$a"), "includeArrayIndex",
                         BCON_UTF8 ("i"), "preserveNullAndEmptyArrays", BCON_BOOL (true), "}", "}");
    if (!strcmp (stage, "$sort"))
        return BCON_NEW ("0", "{", "$sort", "{", "a", BCON_INT32 (1), "}", "}");
    if (!strcmp (stage, "$group"))
        return BCON_NEW ("0", "{", "$group", "{", "_id", BCON_UTF8 ("$a"), "}", "}");
    if (!strcmp (stage, "$replaceRoot"))
        return BCON_NEW ("0", "{", "$replaceRoot", "{", "newRoot", BCON_UTF8 ("$$ROOT"), "}", "}");
    if (!strcmp (stage, "$addFields"))
        return BCON_NEW ("0", "{", "$addFields", "{", "a", BCON_INT32 (1), "}", "}");
    if (!strcmp (stage, "$project"))
        return BCON_NEW ("0", "{", "$project", "{", "a", BCON_INT32 (0), "}", "}");
    if (!strcmp (stage, "$merge"))
        return BCON_NEW ("0", "{", "$merge", "{", "into", "{", "db", BCON_UTF8 (on->run->o->state_db),
                         "coll", BCON_UTF8 ("probe_merge"), "}", "on", BCON_UTF8 ("_id"),
                         "whenMatched", BCON_UTF8 ("replace"), "whenNotMatched",
                         BCON_UTF8 ("insert"), "}", "}");
    return BCON_NEW ("0", "{", "$match", "{", "}", "}");
}

/* The shard key of db.coll from config.collections (a sharded cluster's
 * mongos; elsewhere nothing is found): false when not sharded. */
static bool
shard_key (online_t *on, const char *db, const char *coll, bson_t *key)
{
    mongoc_collection_t *c = online_collection (on, "config", "collections");
    char *id = bson_strdup_printf ("%s.%s", db, coll);
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (id));
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, q, NULL);
    const bson_t *doc;
    bson_iter_t it;
    bool sharded = false;
    if (ops->next (cur, &doc) && bson_iter_init_find (&it, doc, "key") &&
        BSON_ITER_HOLDS_DOCUMENT (&it) &&
        !(bson_iter_init_find (&it, doc, "dropped") && bson_iter_as_bool (&it))) {
        uint32_t len;
        const uint8_t *data;
        bson_t found;
        bson_iter_init_find (&it, doc, "key");
        bson_iter_document (&it, &len, &data);
        bson_init_static (&found, data, len);
        bson_copy_to (&found, key);
        sharded = true;
    }
    ops->end (cur, NULL); /* an error (no config database): not sharded */
    bson_destroy (q);
    bson_free (id);
    mongoc_collection_destroy (c);
    return sharded;
}

/* On a sharded cluster: $merge on _id needs _id to hold the target's shard
 * key; a sharded $lookup "from" needs 5.1. What the cluster says decides;
 * elsewhere this finds nothing. */
static bool
check_sharding (online_t *on, const rm_compile_plan_t *c, bson_error_t *err)
{
    for (size_t i = 0; i < c->n; i++)
        for (size_t p = 0; p < c->steps[i].n_passes; p++) {
            const rm_compile_pass_t *cp = &c->steps[i].passes[p];
            bson_t key;
            bson_iter_t it, st, body;
            if (shard_key (on, cp->out->db, cp->target, &key)) {
                bool only_id = bson_iter_init (&it, &key);
                while (only_id && bson_iter_next (&it))
                    only_id = !strcmp (bson_iter_key (&it), "_id");
                bson_destroy (&key);
                if (!only_id) {
                    rm_error_set (err, RM_ERR_UNSUPPORTED,
                                  "%s: step %zu (%s): %s.%s is sharded by a key other than _id, "
                                  "and the compiled $merge replaces by _id, which must hold the "
                                  "shard key: shard it by _id, or drop it and let the run create "
                                  "it unsharded", on->run->where, c->steps[i].s->index,
                                  c->steps[i].s->op, cp->out->db, cp->target);
                    return false;
                }
            }
            bson_iter_init (&it, &cp->pipeline);
            while (bson_iter_next (&it))
                if (bson_iter_recurse (&it, &st) && bson_iter_find (&st, "$lookup") &&
                    bson_iter_recurse (&st, &body) && bson_iter_find (&body, "from") &&
                    RM_COMPILE_V (c->version) < RM_COMPILE_VERSION (5, 1) &&
                    shard_key (on, cp->drive->db, bson_iter_utf8 (&body, NULL), &key)) {
                    bson_destroy (&key);
                    rm_error_set (err, RM_ERR_UNSUPPORTED,
                                  "%s: step %zu (%s): %s.%s is sharded, and $lookup reads a "
                                  "sharded collection from MongoDB 5.1 (the server is %d.%d)",
                                  on->run->where, c->steps[i].s->index, c->steps[i].s->op,
                                  cp->drive->db, bson_iter_utf8 (&body, NULL), c->version.major,
                                  c->version.minor);
                    return false;
                }
        }
    return true;
}

bool
online_server_check (online_t *on, const rm_compile_plan_t *c, bson_error_t *err)
{
    const char *names[32];
    size_t n = 0;
    mongoc_collection_t *probe = online_collection (on, on->run->o->state_db, "probe");
    const online_ops_t *ops = online_ops (on);
    bool ok = true;

    for (size_t i = 0; i < c->n; i++)
        for (size_t p = 0; p < c->steps[i].n_passes; p++)
            n = rm_compile_stage_names (&c->steps[i].passes[p].pipeline, names, n, 32);
    for (size_t k = 0; ok && k < n; k++) {
        bson_t *pipeline = probe_stage (on, names[k]);
        bson_t opts = BSON_INITIALIZER;
        online_cursor_t *cur;
        const bson_t *doc;
        bson_error_t why;
        BSON_APPEND_BOOL (&opts, "allowDiskUse", true);
        cur = ops->aggregate (on, probe, pipeline, &opts);
        while (ops->next (cur, &doc))
            ;
        if (!ops->end (cur, &why)) {
            ok = online_fail (on, err, &why, "trying a stage");
            if (!on->transient) {
                const char *who = "";
                for (size_t i = 0; i < c->n && !*who; i++)
                    for (size_t p = 0; p < c->steps[i].n_passes; p++) {
                        const char *used[32];
                        size_t m =
                            rm_compile_stage_names (&c->steps[i].passes[p].pipeline, used, 0, 32);
                        for (size_t u = 0; u < m; u++)
                            if (!strcmp (used[u], names[k]))
                                who = c->steps[i].s->op;
                    }
                rm_error_set (err, RM_ERR_UNSUPPORTED,
                              "%s: the server has no aggregation stage %s, which the compiled "
                              "pipelines need (%s; the server said: %s): run without "
                              "--server-side (client-side mode runs every step)",
                              on->run->where, names[k], who, why.message);
            }
        }
        bson_destroy (&opts);
        bson_destroy (pipeline);
    }
    mongoc_collection_destroy (probe);
    return ok && check_sharding (on, c, err);
}

bool
online_server_exact (online_t *on, const rm_compile_step_t *st, bool *exact, bson_error_t *err)
{
    mongoc_collection_t *c;
    bson_t *filter, *opts;
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    *exact = true;
    if (!st->guard_ns)
        return true;
    c = online_collection (on, st->guard_ns->db, st->guard_coll);
    filter = BCON_NEW (st->guard_field, "{", "$type", BCON_INT32 (4), "}");
    opts = BCON_NEW ("limit", BCON_INT64 (1), "projection", "{", "_id", BCON_INT32 (1), "}");
    cur = ops->find (on, c, filter, opts);
    if (ops->next (cur, &doc)) {
        char *id = bson_as_relaxed_extended_json (doc, NULL);
        *exact = false;
        online_say_note (on, "step %zu (%s): %s has a document whose \"%s\" holds an array (%s), "
                         "for which the compiled pipeline is not exact: this step runs client-side",
                         st->s->index, st->s->op, st->guard_ns->text,
                         st->guard_field, id);
        bson_free (id);
    }
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "looking for arrays the pipelines do not take");
    bson_destroy (filter);
    bson_destroy (opts);
    mongoc_collection_destroy (c);
    return ok;
}

/* The _ids of the driving collection after last (none: from the start),
 * in _id order, through one cursor for the whole pass, as the client-side
 * runner reads; opened again after an error. After last of any type
 * (online_range_after); NULL when its filter does not fit. */
static online_cursor_t *
open_ids (online_t *on, mongoc_collection_t *drive, const bson_t *last, int64_t batch,
          bson_error_t *err)
{
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "sort", "{", "_id",
                             BCON_INT32 (1), "}", "batchSize", BCON_INT64 (batch));
    bson_iter_t it;
    online_cursor_t *cur = NULL;
    if (bson_iter_init_find (&it, last, "last") && !online_range_after (&it, &filter))
        rm_error_set (err, RM_ERR_DATA, "%s: the checkpoint's _id makes too large a query",
                      on->run->where);
    else
        cur = online_ops (on)->find (on, drive, &filter, opts);
    bson_destroy (opts);
    bson_destroy (&filter);
    return cur;
}

/* The next range: up to batch _ids into ids (an array), the last of them
 * into hi as "last". after: the checkpoint the cursor was just opened
 * after ({"last": <_id>}), whose filter may let through a few _ids before
 * it (online_range_before), first: skipped; NULL once a range was read.
 * Once the cursor is read to its end it is ended (*cur NULL, *ended set:
 * a cursor read again past its end is an error). Returns how many (0:
 * the end), -1 on error. */
static int64_t
next_range (online_t *on, online_cursor_t **cur, bool *ended, int64_t batch, const bson_t *after,
            bson_t *ids, bson_t *hi, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    const bson_t *doc;
    bson_iter_t it, lit;
    bson_error_t why;
    int64_t n = 0;
    bool skipping = after && bson_iter_init_find (&lit, after, "last"), more = !*ended;

    bson_reinit (ids);
    while (n < batch && more && (more = ops->next (*cur, &doc))) {
        char key[24];
        if (!bson_iter_init_find (&it, doc, "_id"))
            continue;
        if (skipping && online_range_before (&it, &lit))
            continue;
        skipping = false;
        snprintf (key, sizeof key, "%lld", (long long) n++);
        BSON_APPEND_VALUE (ids, key, bson_iter_value (&it));
        bson_reinit (hi);
        BSON_APPEND_VALUE (hi, "last", bson_iter_value (&it));
    }
    if (!more && !*ended) {
        bool ok = ops->end (*cur, &why);
        *cur = NULL;
        *ended = true;
        if (!ok)
            return online_fail (on, err, &why, "reading the next range's _ids") ? 0 : -1;
    }
    return n;
}

/* Runs the range's _ids through the pipeline; counts what its target
 * holds of them then (every compiled pass keeps the _ids it reads). */
static bool
run_range (online_t *on, const rm_compile_pass_t *cp, mongoc_collection_t *drive,
           mongoc_collection_t *target, const bson_t *ids, int64_t *written, bson_error_t *err)
{
    bson_t pipeline = BSON_INITIALIZER, stage = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    bson_t filter = BSON_INITIALIZER, in;
    bson_iter_t it;
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    int64_t n;

    rm_compile_range_stage (&stage, ids);
    BSON_APPEND_DOCUMENT (&pipeline, "0", &stage);
    bson_iter_init (&it, &cp->pipeline);
    for (uint32_t i = 1; bson_iter_next (&it); i++) {
        char key[16];
        snprintf (key, sizeof key, "%u", i);
        bson_append_iter (&pipeline, key, -1, &it);
    }
    BSON_APPEND_BOOL (&opts, "allowDiskUse", true);
    if (on->run->o->write_concern)
        mongoc_write_concern_append (on->run->o->write_concern, &opts);
    /* The range's $merge is a write: only while the lease is ours. */
    if (!online_lease_check (on, err)) {
        bson_destroy (&opts);
        bson_destroy (&pipeline);
        bson_destroy (&stage);
        return false;
    }
    cur = ops->aggregate (on, drive, &pipeline, &opts);
    while (ops->next (cur, &doc))
        ;
    if (!ops->end (cur, &why)) {
        ok = online_fail (on, err, &why, "running a range's pipeline");
        if (!on->transient) {
            size_t l = strlen (err->message);
            snprintf (err->message + l, sizeof err->message - l,
                      " (an operator this server lacks? --server-version compiles for an older "
                      "one; client-side mode runs every step)");
        }
    }
    if (ok) {
        BSON_APPEND_DOCUMENT_BEGIN (&filter, "_id", &in);
        BSON_APPEND_ARRAY (&in, "$in", ids);
        bson_append_document_end (&filter, &in);
        n = ops->count (on, target, &filter, &why);
        if (n < 0)
            ok = online_fail (on, err, &why, "counting a range's results");
        else
            *written += n;
    }
    bson_destroy (&filter);
    bson_destroy (&opts);
    bson_destroy (&stage);
    bson_destroy (&pipeline);
    return ok;
}

bool
online_server_pass (online_t *on, const rm_compile_step_t *st, const rm_compile_pass_t *cp,
                    bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    const rm_step_t *s = st->s;
    mongoc_collection_t *drive = online_collection (on, cp->drive->db, cp->coll);
    mongoc_collection_t *target = online_collection (on, cp->out->db, cp->target);
    bson_t last = BSON_INITIALIZER, hi = BSON_INITIALIZER, ids = BSON_INITIALIZER;
    online_cursor_t *cur = NULL;
    int64_t t0 = online_mono_ms ();
    online_retry_t retry = {0, 0};
    online_cp_where_t at = {s, cp->pass, 0, 0};
    online_cp_tally_t t = {false, 0, 0};
    bool ok, drawn = false, ended = false; /* ended: cur read to its end */

    ok = online_checkpoint_read (on, &at, &last, &t, err);
    if (ok && t.done) {
        online_say_note (on, "step %zu (%s) %s: done before", s->index, s->op,
                         cp->drive->text);
        goto out;
    }
    while (ok) {
        int64_t b0 = online_mono_ms (), n, w = 0;
        bool opened = !cur && !ended;
        /* SIGINT, SIGTERM: between two ranges, the last one's checkpoint
         * saved (online_signal.c). */
        if (!(ok = online_stop_check_step (on, s, cp->drive->text, t.seen, "the checkpoint saved",
                                           err)))
            break;
        if (opened && !(cur = open_ids (on, drive, &last, o->batch_size, err))) {
            ok = false;
            break;
        }
        if (!online_wait_while_paused (on, err) ||
            (n = next_range (on, &cur, &ended, o->batch_size, opened ? &last : NULL, &ids, &hi,
                             err)) < 0 ||
            (n > 0 && !run_range (on, cp, drive, target, &ids, &w, err))) {
            /* The range again, from the checkpoint. */
            online_ops (on)->end (cur, NULL);
            cur = NULL;
            ended = false;
            n = -1;
        }
        online_batch_end_t end = online_retry_batch (on, &retry, n, err);
        if (end == ONLINE_BATCH_AGAIN)
            continue;
        if (!(ok = end != ONLINE_BATCH_FAILED) || end == ONLINE_BATCH_DONE)
            break;
        t.seen += n;
        t.changed += w;
        on->busy_ms += online_mono_ms () - b0; /* status's rate (online_state.c) */
        if (!(ok = online_checkpoint_save (on, &at, cp->drive, cp->coll, &hi, &t, err)))
            break;
        bson_reinit (&last);
        bson_concat (&last, &hi);
        {
            int64_t now = online_mono_ms (), all = now - t0;
            online_batch_line_t line = {s, cp->pass, cp->drive->text, true, n, now - b0, t.seen,
                                        t.changed, all > 0 ? t.seen * 1000 / all : 0};
            if (online_say_how (on).json)
                online_json_batch (on, &line);
            else
                drawn |= online_say_progress (on, "step %zu (%s) %s: %lld read, %lld written, "
                                              "%lld/s (server-side) ", s->index, s->op,
                                              cp->drive->text, (long long) t.seen,
                                              (long long) t.changed,
                                              (long long) (all > 0 ? t.seen * 1000 / all : 0));
        }
        if (o->max_rate > 0)
            online_sleep_ms (t0 + t.seen * 1000 / o->max_rate - online_mono_ms ());
        online_sleep_ms (o->pause_ms);
    }
    if (ok) {
        t.done = true;
        ok = online_checkpoint_save (on, &at, cp->drive, cp->coll, &last, &t, err);
    }
    if (ok)
        online_say_closing (on, drawn, "step %zu (%s) %s: %lld read, %lld written (server-side)",
                            s->index, s->op, cp->drive->text, (long long) t.seen,
                            (long long) t.changed);
out:
    online_ops (on)->end (cur, NULL);
    bson_destroy (&ids);
    bson_destroy (&last);
    bson_destroy (&hi);
    mongoc_collection_destroy (target);
    mongoc_collection_destroy (drive);
    return ok;
}
