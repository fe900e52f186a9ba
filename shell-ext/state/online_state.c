/* What a run keeps on the server, in the state database (--state-db,
 * default "remodel"), so that it survives a crash and two runs stay apart.
 * A plan is known by its id (remodel/names.h: its file's name and a hash of
 * its full path), never by a pattern:
 *   plans       {_id: <plan id>, name, path, digest, inPlace, paused,
 *               finalized, switch, capture, partitions}: the plan the id
 *               was started with (another is refused unless --restart),
 *               its mode, pause, finalize, an interrupted switch's
 *               journal (online_switch.c), the change log's start point
 *               (online_capture.c), the partitions' bounds
 *               (online_partition_state.c)
 *   capture     {_id}: a sentinel, for a moment (online_capture.c)
 *   leases, fences: online_lease.c (the plan's, and its partitions')
 *   partitions  each partition's checkpoint: online_partition_state.c
 *   checkpoints {_id: "<plan id>:<step>" (":<step>/<pass>" for a step's
 *               second pass), plan, epoch, digest, step, pass, op, ns,
 *               last, seen, changed, done, updated, tool}: written only
 *               after a batch's writes were acknowledged, and only over
 *               a checkpoint of the same or an older lease epoch */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "online_state.h"
#include "remodel/value.h"

static mongoc_collection_t *
state (online_t *on, const char *coll)
{
    return online_collection (on, on->run->o->state_db, coll);
}


bool
online_plan_load (online_t *on, const online_opts_t *o, bson_error_t *err)
{
    on->own_run->o = o;
    if (!rm_plan_load (&on->own_run->plan, o->plan_path, err))
        return false;
    rm_names_identify (&on->own_run->names, o->plan_path);
    online_steps_resolve (on->own_run);
    /* Side by side, consecutive steps the engine runs in one pass run in
     * one online pass with one result (remodel/fuse.h); in place each
     * step keeps its own backups, and --server-side runs each step's
     * compiled pipelines, on the server, a step's each. A run records
     * which (unfused), for the commands after it (online_plan_mode). */
    if (!o->in_place && !o->server_side)
        on->own_run->names.fused = &on->run->plan;
    {
        char host[64] = "?";
        gethostname (host, sizeof host - 1);
        snprintf (on->owner, sizeof on->owner, "%s:%ld:%lld", host, (long) getpid (),
                  (long long) online_wall_ms ());
    }
    return true;
}

bool
online_plan_read (online_t *on, online_record_t *r, bson_error_t *err)
{
    bson_t doc;
    bool ok = online_state_get (on, "plans", on->run->names.id, &doc, &r->found, "reading the plan's record",
                                err);

    online_record_parse (&doc, r);
    r->found = ok && !bson_empty (&doc);
    bson_destroy (&doc);
    return ok;
}

static const char *
mode_name (bool in_place)
{
    return in_place ? "in place (--in-place)" : "side by side";
}

bool
online_plan_record (online_t *on, bool *fresh, bson_error_t *err)
{
    online_record_t r;
    bool ok = online_plan_read (on, &r, err);

    *fresh = false;
    if (ok && r.found && strcmp (r.digest, on->run->names.digest) != 0 && !on->run->o->restart) {
        rm_error_set (err, RM_ERR_USAGE,
                      "plan %s changed since its run began (digest %s, now %s): --restart "
                      "starts it over (its checkpoints are forgotten; what it wrote stays)",
                      on->run->names.name, r.digest, on->run->names.digest);
        return false;
    }
    if (ok && r.found && r.in_place != on->run->o->in_place && !on->run->o->restart) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s was started %s, not %s: run it as it began, "
                      "or --restart", on->run->names.name, mode_name (r.in_place), mode_name (on->run->o->in_place));
        return false;
    }
    if (ok && !online_plan_unswitched (on, &r, err))
        return false;
    if (ok && (!r.found || strcmp (r.digest, on->run->names.digest) != 0 || on->run->o->restart)) {
        bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
        bson_t *del = BCON_NEW ("plan", BCON_UTF8 (on->run->names.id)), *set;
        bson_error_t why;
        ok = online_lease_check (on, err) &&
             (online_ops (on)->state_delete (on, "checkpoints", del, true, &why) ||
              online_fail (on, err, &why, "forgetting the old checkpoints")) &&
             online_parts_forget (on, err);
        /* The old start point goes with the old checkpoints: the run
         * takes a new one (online_capture.c); a sample verified of the
         * old results (online_sample.c) goes with it, and the old
         * partitions (online_partition_state.c). */
        set = BCON_NEW ("$set", "{", "digest", BCON_UTF8 (on->run->names.digest), "inPlace",
                        BCON_BOOL (on->run->o->in_place), "unfused", BCON_BOOL (on->run->names.fused == NULL),
                        "name", BCON_UTF8 (on->run->names.name), "path",
                        BCON_UTF8 (on->run->names.path), "}", "$unset", "{", "capture",
                        BCON_UTF8 (""), "sampled", BCON_UTF8 (""), "partitions", BCON_UTF8 (""),
                        "}");
        *fresh = true;
        ok = ok && (online_ops (on)->state_update (on, "plans", q, set, true, NULL, &why) ||
                    online_fail (on, err, &why, "recording the plan"));
        bson_destroy (set);
        bson_destroy (del);
        bson_destroy (q);
    }
    return ok;
}

bool
online_plan_unswitched (online_t *on, const online_record_t *r, bson_error_t *err)
{
    if (r->switching) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s: a %s of its collections was interrupted: "
                      "remodel online finalize completes it, remodel online rollback undoes it",
                      on->run->names.name, r->direction);
        return false;
    }
    if (r->finalized) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s is finalized (its results are the live "
                      "collections): remodel online rollback first to run, verify or sync it "
                      "again", on->run->names.name);
        return false;
    }
    if (r->after_pending) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s: its results hold the application's writes "
                      "made after the switch, which a run, sync or finalize would overwrite: "
                      "remodel online rollback --carry-writes carries them into the originals, "
                      "--discard-writes-after-switch drops them", on->run->names.name);
        return false;
    }
    return true;
}

bool
online_plan_mode (online_t *on, online_opts_t *o, bool run, bson_error_t *err)
{
    online_record_t r;
    if (run && o->restart)
        return true; /* starting over: in the mode the flags say */
    if (!online_plan_read (on, &r, err))
        return false;
    if (!r.found)
        return true;
    /* There is no flag for side by side: only --in-place can contradict
     * the record, and run's own check (online_plan_record) says so with
     * its --restart. */
    if (!run && o->in_place && !r.in_place) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s ran side by side: --in-place contradicts it "
                      "(leave it out: the mode its run recorded is used)", on->run->names.name);
        return false;
    }
    o->in_place |= r.in_place;
    /* As the run that began the plan fused or not (online_plan_load),
     * whatever this command's flags: the names of its results are those. */
    on->own_run->names.fused = o->in_place || r.unfused ? NULL : &on->run->plan;
    return true;
}

bool
online_plan_check (online_t *on, bson_error_t *err)
{
    online_record_t r;
    if (!online_plan_read (on, &r, err))
        return false;
    if (!r.found) {
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s has not run here (remodel online run first)",
                      on->run->where, on->run->names.name);
        return false;
    }
    if (strcmp (r.digest, on->run->names.digest) != 0) {
        /* Its results, checkpoints and change log point are the plan's
         * as it ran: no command mixes them with another plan's. */
        rm_error_set (err, RM_ERR_USAGE, "plan %s changed since its run began (digest %s, now "
                      "%s), so its results are not this plan's: restore the file as it was, or "
                      "start over with remodel online run %s --restart", on->run->names.name, r.digest,
                      on->run->names.digest, on->run->o->plan_path);
        return false;
    }
    if (r.in_place != on->run->o->in_place) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s runs %s, not %s", on->run->names.name,
                      mode_name (r.in_place), mode_name (on->run->o->in_place));
        return false;
    }
    return true;
}

/* The record's updates set, unset and add to sets: one sent again after
 * its reply was lost in a cut changes nothing more, so a transient error
 * is retried here within --retry-for, as a checkpoint is (the ops table
 * sends a write again only when it never went out). */
bool
online_plan_update (online_t *on, const bson_t *update, bson_error_t *err)
{
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    bson_t reply = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t why;
    online_retry_t retry = {0, 0};
    bool ok;
    /* The holder of a lease writes only while it holds it. */
    while (!(ok = online_lease_check (on, err) &&
                  (online_ops (on)->state_update (on, "plans", q, update, false, &reply, &why) ||
                   online_fail (on, err, &why, "updating the plan's record"))) &&
           online_retry (on, &retry, err)) {
        bson_destroy (&reply); /* the driver initializes it again */
        bson_init (&reply);
    }
    if (ok && !(bson_iter_init_find (&it, &reply, "matchedCount") && bson_iter_as_int64 (&it) == 1)) {
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s has not run here", on->run->where, on->run->names.name);
        ok = false;
    }
    bson_destroy (&reply);
    bson_destroy (q);
    return ok;
}

bool
online_plan_set (online_t *on, const char *field, bool value, bson_error_t *err)
{
    bson_t *set = BCON_NEW ("$set", "{", field, BCON_BOOL (value), "}");
    bool ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

/* A flag of the plan's record: keysMissing (its run wrote no key map,
 * online_apply), handover (finalize asks a follower for the lease). */
bool
online_plan_flag (online_t *on, const char *name, bool *set, bson_error_t *err)
{
    bson_t doc;
    bson_iter_t it;
    bool found, ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                       "reading the plan's record", err);
    *set = ok && bson_iter_init_find (&it, &doc, name) && bson_iter_as_bool (&it);
    bson_destroy (&doc);
    return ok;
}

bool
online_plan_paused (online_t *on, bool *paused, bson_error_t *err)
{
    online_record_t r;
    *paused = false;
    if (!online_plan_read (on, &r, err))
        return false;
    *paused = r.paused;
    return true;
}

/* Sleeps while the plan is paused (remodel online pause), renewing the
 * lease; says so once. */
bool
online_wait_while_paused (online_t *on, bson_error_t *err)
{
    bool paused, said = false;
    for (;;) {
        if (!online_plan_paused (on, &paused, err))
            return false;
        if (!paused)
            break;
        if (!online_stop_check (on, "while paused", err))
            return false;
        if (!said)
            online_say_aside (on, "plan %s paused (remodel online resume goes on)",
                              on->run->names.name);
        said = true;
        if (!online_lease_check (on, err))
            return false;
        online_sleep_ms (1000);
    }
    if (said)
        online_say_note (on, "plan %s resumed", on->run->names.name);
    return true;
}

static void
checkpoint_id (online_t *on, const rm_step_t *s, size_t p, char *buf, size_t cap)
{
    if (p == 0)
        snprintf (buf, cap, "%s:%zu", on->run->names.id, s->index);
    else
        snprintf (buf, cap, "%s:%zu/%zu", on->run->names.id, s->index, p + 1);
}

bool
online_checkpoint_read (online_t *on, const online_cp_where_t *at, bson_t *last,
                        online_cp_tally_t *t, bson_error_t *err)
{
    char id[300];
    bson_t *q, doc;
    bson_error_t why;
    bool ok = true, found;

    checkpoint_id (on, at->s, at->p, id, sizeof id);
    q = BCON_NEW ("_id", BCON_UTF8 (id));
    *t = (online_cp_tally_t) {false, 0, 0};
    if (!online_ops (on)->state_read (on, "checkpoints", q, &doc, &found, &why))
        ok = online_fail (on, err, &why, "reading a checkpoint");
    else if (found)
        online_checkpoint_parse (&doc, last, t);
    bson_destroy (&doc);
    bson_destroy (q);
    return ok;
}

/* An upsert of set at _id id of the state database's collection coll,
 * fenced by the lease: never over what a newer lease epoch wrote (that
 * upsert meets the _id and fails with a duplicate key, said as this one
 * having lost its lease), and only while the lease holds. what names the
 * record in messages ("checkpoint", "partition's checkpoint"). */
bool
online_fenced_upsert (online_t *on, const char *coll, const char *id, const bson_t *set,
                      const char *what, bson_error_t *err)
{
    bson_t *q;
    bson_error_t why;
    char doing[80];
    bool ok;

    q = BCON_NEW ("_id", BCON_UTF8 (id), "$or", "[", "{", "epoch", "{", "$lte",
                  BCON_INT64 (on->epoch), "}", "}", "{", "epoch", "{", "$exists", BCON_BOOL (false),
                  "}", "}", "]");
    snprintf (doing, sizeof doing, "writing a %s", what);
    ok = online_lease_check (on, err) &&
         (online_ops (on)->state_update (on, coll, q, set, true, NULL, &why) ||
          (why.code == 11000
               ? (rm_error_set (err, RM_ERR_IO, "%s: plan %s: a newer run wrote this %s; this "
                                "one lost its lease and stops", on->run->where, on->run->names.name, what),
                  false)
               : online_fail (on, err, &why, doing)));
    bson_destroy (q);
    return ok;
}

bool
online_checkpoint_write (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
                         const char *coll, const bson_value_t *last, const online_cp_tally_t *t,
                         bson_error_t *err)
{
    const rm_step_t *s = at->s;
    size_t p = at->p;
    char id[300];
    bson_t set, inner;
    bool ok;

    checkpoint_id (on, s, p, id, sizeof id);
    bson_init (&set);
    BSON_APPEND_DOCUMENT_BEGIN (&set, "$set", &inner);
    BSON_APPEND_UTF8 (&inner, "plan", on->run->names.id);
    BSON_APPEND_INT64 (&inner, "epoch", on->epoch);
    BSON_APPEND_UTF8 (&inner, "digest", on->run->names.digest);
    BSON_APPEND_INT64 (&inner, "step", (int64_t) s->index);
    BSON_APPEND_INT64 (&inner, "pass", (int64_t) p + 1);
    BSON_APPEND_UTF8 (&inner, "op", s->op);
    BSON_APPEND_UTF8 (&inner, "ns", ns->text);
    BSON_APPEND_UTF8 (&inner, "db", ns->db);
    BSON_APPEND_UTF8 (&inner, "coll", coll);
    if (last) {
        BSON_APPEND_VALUE (&inner, "last", last);
        /* The type bracket too: a resume goes on through the later ones
         * (online_range.c). */
        BSON_APPEND_UTF8 (&inner, "lastType", rm_value_type_name (last->value_type));
    }
    BSON_APPEND_INT64 (&inner, "seen", t->seen);
    BSON_APPEND_INT64 (&inner, "changed", t->changed);
    BSON_APPEND_BOOL (&inner, "done", t->done);
    BSON_APPEND_DATE_TIME (&inner, "updated", online_wall_ms ());
    BSON_APPEND_UTF8 (&inner, "tool", "remodel 0.1.0");
    bson_append_document_end (&set, &inner);
    BSON_APPEND_DOCUMENT_BEGIN (&set, "$setOnInsert", &inner);
    BSON_APPEND_DATE_TIME (&inner, "started", online_wall_ms ());
    bson_append_document_end (&set, &inner);
    BSON_APPEND_DOCUMENT_BEGIN (&set, "$inc", &inner);
    BSON_APPEND_INT64 (&inner, "busyMs", on->busy_ms);
    bson_append_document_end (&set, &inner);
    ok = online_fenced_upsert (on, "checkpoints", id, &set, "checkpoint", err);
    if (ok)
        on->busy_ms = 0;
    bson_destroy (&set);
    return ok;
}

bool
online_checkpoint_save (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
                        const char *coll, const bson_t *last, const online_cp_tally_t *t,
                        bson_error_t *err)
{
    online_retry_t retry = {0, 0};
    bson_iter_t it;
    const bson_value_t *v = bson_iter_init_find (&it, last, "last") ? bson_iter_value (&it) : NULL;
    while (!online_checkpoint_write (on, at, ns, coll, v, t, err))
        if (!online_retry (on, &retry, err))
            return false;
    return true;
}

/* The server refused $collStats as an unknown stage (40324): not asked
 * again by this process, which talks to that one server. */
#define UNKNOWN_STAGE 40324
static bool no_collstats;

/* The count of c from the server's metadata: $collStats' count (summed
 * over a sharded collection's shards), where the count command
 * (estimatedDocumentCount) is no lookup everywhere: FerretDB 1.x answers
 * it by reading every document (half a second for 10,000, as long as
 * reading them all: BENCHMARKS.md, "Online workers"). A server without
 * $collStats (mongo-java-server, which counts from memory) gets the count
 * command; -1 and why when that fails too. */
int64_t
online_estimated_of (online_t *on, mongoc_collection_t *c, bson_error_t *why)
{
    const online_ops_t *ops = online_ops (on);
    bson_t *pipe;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t refused;
    int64_t n = 0;
    bool counted = false;

    if (__atomic_load_n (&no_collstats, __ATOMIC_RELAXED))
        return ops->estimate (on, c, why);
    pipe = BCON_NEW ("pipeline", "[", "{", "$collStats", "{", "count", "{", "}", "}", "}", "]");
    cur = ops->aggregate (on, c, pipe, NULL);
    while (ops->next (cur, &doc)) {
        bson_iter_t it;
        if (bson_iter_init_find (&it, doc, "count") && BSON_ITER_HOLDS_NUMBER (&it)) {
            n += bson_iter_as_int64 (&it);
            counted = true;
        }
    }
    if (!ops->end (cur, &refused)) {
        counted = false;
        if ((refused.domain == MONGOC_ERROR_SERVER || refused.domain == MONGOC_ERROR_QUERY) &&
            refused.code == UNKNOWN_STAGE)
            __atomic_store_n (&no_collstats, true, __ATOMIC_RELAXED);
    }
    bson_destroy (pipe);
    return counted ? n : ops->estimate (on, c, why);
}

/* The bytes and documents of c from the server's metadata: collStats'
 * size (the documents' BSON on mongo-java-server, the storage's on
 * FerretDB, which is larger) and count; -1 each when unknown. */
int64_t
online_bytes_of (online_t *on, mongoc_collection_t *c, int64_t *count)
{
    bson_t *cmd = BCON_NEW ("collStats", BCON_UTF8 (mongoc_collection_get_name (c)));
    bson_t reply;
    bson_iter_t it;
    int64_t size = -1;

    *count = -1;
    if (online_ops (on)->command (on, c, NULL, cmd, &reply, NULL)) {
        if (bson_iter_init_find (&it, &reply, "size") && BSON_ITER_HOLDS_NUMBER (&it))
            size = bson_iter_as_int64 (&it);
        if (bson_iter_init_find (&it, &reply, "count") && BSON_ITER_HOLDS_NUMBER (&it))
            *count = bson_iter_as_int64 (&it);
    }
    bson_destroy (&reply);
    bson_destroy (cmd);
    return size;
}

/* A step's driving collection now, for the ETA: from the server's
 * metadata, not a scan (online_estimated_of); -1 when unknown. */
int64_t
online_estimated (online_t *on, const char *db, const char *coll)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    int64_t n = online_estimated_of (on, c, NULL);
    mongoc_collection_destroy (c);
    return n;
}

/* Below this many milliseconds of reading and writing a pass has no rate
 * worth showing (a pass of one quick batch would show 333333/s). */
#define RATE_MIN_MS 100

/* A checkpoint's documents a second: seen over the time its batches took
 * (busyMs), never over the wall time since it started, which holds the
 * pauses, the lease waits and the time between two runs; -1 when too
 * short to measure (or recorded by a remodel that kept no busyMs). */
int64_t
online_checkpoint_rate (const bson_t *doc, int64_t *busy)
{
    bson_iter_t it;
    int64_t seen = 0, ms = 0;
    if (bson_iter_init_find (&it, doc, "seen"))
        seen = bson_iter_as_int64 (&it);
    if (bson_iter_init_find (&it, doc, "busyMs"))
        ms = bson_iter_as_int64 (&it);
    if (busy)
        *busy = ms;
    return ms >= RATE_MIN_MS ? seen * 1000 / ms : -1;
}

void
online_duration (char *buf, size_t cap, int64_t s)
{
    if (s < 0)
        snprintf (buf, cap, "-");
    else if (s < 120)
        snprintf (buf, cap, "%llds", (long long) s);
    else if (s < 7200)
        snprintf (buf, cap, "%lldm", (long long) (s / 60));
    else
        snprintf (buf, cap, "%lldh%02lldm", (long long) (s / 3600), (long long) (s / 60 % 60));
}

bool
online_checkpoint_totals (online_t *on, int64_t *seen, int64_t *rate, bson_error_t *err)
{
    mongoc_collection_t *c = state (on, "checkpoints");
    bson_t *q = BCON_NEW ("plan", BCON_UTF8 (on->run->names.id));
    online_cursor_t *cur = online_ops (on)->find (on, c, q, NULL);
    const bson_t *doc;
    bson_error_t why;
    bson_iter_t it;
    int64_t ms = 0;
    bool ok = true;

    *seen = *rate = 0;
    while (online_ops (on)->next (cur, &doc)) {
        int64_t busy = 0, started = 0, updated = 0;
        if (bson_iter_init_find (&it, doc, "seen"))
            *seen += bson_iter_as_int64 (&it);
        online_checkpoint_rate (doc, &busy);
        if (bson_iter_init_find (&it, doc, "started") && BSON_ITER_HOLDS_DATE_TIME (&it))
            started = bson_iter_date_time (&it);
        if (bson_iter_init_find (&it, doc, "updated") && BSON_ITER_HOLDS_DATE_TIME (&it))
            updated = bson_iter_date_time (&it);
        /* For a cost, any measure beats none: the batches' time however
         * short, else (a checkpoint of an older remodel) the wall time. */
        if (busy > 0)
            ms += busy;
        else if (started && updated > started && !bson_has_field (doc, "busyMs"))
            ms += updated - started;
    }
    if (!online_ops (on)->end (cur, &why))
        ok = online_fail (on, err, &why, "reading the checkpoints");
    if (ms > 0)
        *rate = *seen * 1000 / ms;
    bson_destroy (q);
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_plan_note_error (online_t *on, const char *message)
{
    bson_error_t lost;
    if (!on->lease || !online_lease_check (on, &lost))
        return false;
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    bson_t *set = message ? BCON_NEW ("$set", "{", "error", BCON_UTF8 (message), "}")
                          : BCON_NEW ("$unset", "{", "error", BCON_UTF8 (""), "}");
    bool ok = online_ops (on)->state_update (on, "plans", q, set, false, NULL, NULL);
    bson_destroy (set);
    bson_destroy (q);
    return ok;
}
