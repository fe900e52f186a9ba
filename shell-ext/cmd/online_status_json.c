/* remodel online status --json: one JSON document (relaxed Extended JSON,
 * dates as ISO-8601) for scripts and monitoring: the plan, its mode, the
 * step in progress, its partitions (each driving range with its namespace,
 * bounds, state, worker and documents done), the workers with their rates,
 * the throttle's state and reason, and the lease; JSON still (the error)
 * when the plan's state cannot be read. It only reads. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"
#include "remodel/cli.h"
#include "remodel/extjson.h"

/* A fused run's steps, for a pass of its first step s (n of them:
 * remodel/fuse.h): "steps" [1, 2, ...] and "ops" beside "step" and "op",
 * which are its first step's, where its checkpoints are. A step alone
 * has neither. */
static void
run_fields (const rm_step_t *s, size_t n, bson_t *part)
{
    bson_t steps, ops;
    char key[16];
    const char *kp;
    if (n <= 1)
        return;
    BSON_APPEND_ARRAY_BEGIN (part, "steps", &steps);
    for (size_t k = 0; k < n; k++) {
        bson_uint32_to_string ((uint32_t) k, &kp, key, sizeof key);
        BSON_APPEND_INT64 (&steps, kp, (int64_t) s[k].index);
    }
    bson_append_array_end (part, &steps);
    BSON_APPEND_ARRAY_BEGIN (part, "ops", &ops);
    for (size_t k = 0; k < n; k++) {
        bson_uint32_to_string ((uint32_t) k, &kp, key, sizeof key);
        BSON_APPEND_UTF8 (&ops, kp, s[k].op);
    }
    bson_append_array_end (part, &ops);
}

/* A pass as status --json lists it: pass p of step s, whose run fuses
 * run steps (run_fields), driven by ns. */
typedef struct {
    const rm_step_t *s;
    size_t run, p;
    const char *ns;
} pass_at_t;

/* Pass a's recorded partitions, when it was split in two or more
 * (online_partition_state.c): each appended to arr from *n on with its
 * bounds as recorded, its state, worker and counts. Returns how many (0:
 * the pass is one partition, its own checkpoint), -1 on an error. */
static int
split_pass (online_t *on, const pass_at_t *a, bool alive, bson_t *arr, uint32_t *n,
            bool *all_done, bson_error_t *err)
{
    const rm_step_t *s = a->s;
    size_t p = a->p;
    bson_t parts = BSON_INITIALIZER;
    bson_iter_t it;
    uint32_t k = 0, count;
    online_cp_where_t at = {s, p, 0, 0};
    if (!online_parts_get (on, &at, NULL, false, false, &parts, err)) {
        bson_destroy (&parts);
        return -1;
    }
    if ((count = online_parts_count (&parts)) < 2) {
        bson_destroy (&parts);
        return 0;
    }
    *all_done = true;
    for (bson_iter_init (&it, &parts); bson_iter_next (&it); k++) {
        char id[300], owner[160], key[16];
        const char *kp, *state;
        const uint8_t *data;
        uint32_t len;
        bson_t bounds, doc, last = BSON_INITIALIZER, part;
        bool there;
        online_cp_tally_t t = {false, 0, 0};
        bson_iter_document (&it, &len, &data);
        if (!bson_init_static (&bounds, data, len))
            continue;
        online_part_key (on, s, p, k, id, sizeof id);
        if (!online_state_get (on, "partitions", id, &doc, &there,
                               "reading a partition's checkpoint", err)) {
            bson_destroy (&doc);
            bson_destroy (&last);
            bson_destroy (&parts);
            return -1;
        }
        if (there)
            online_checkpoint_parse (&doc, &last, &t);
        online_field_utf8 (&doc, "owner", owner, sizeof owner);
        state = t.done ? "done" : !there ? "pending" : alive ? "running" : "stopped";
        *all_done = *all_done && t.done;
        bson_uint32_to_string ((*n)++, &kp, key, sizeof key);
        bson_append_document_begin (arr, kp, -1, &part);
        BSON_APPEND_UTF8 (&part, "ns", a->ns);
        BSON_APPEND_INT64 (&part, "step", (int64_t) s->index);
        BSON_APPEND_UTF8 (&part, "op", s->op);
        run_fields (s, a->run, &part);
        BSON_APPEND_INT64 (&part, "pass", (int64_t) p + 1);
        BSON_APPEND_INT64 (&part, "partition", (int64_t) k + 1);
        BSON_APPEND_INT64 (&part, "of", (int64_t) count);
        BSON_APPEND_DOCUMENT (&part, "bounds", &bounds);
        BSON_APPEND_UTF8 (&part, "state", state);
        if (*owner && !t.done)
            BSON_APPEND_UTF8 (&part, "worker", owner);
        else
            BSON_APPEND_NULL (&part, "worker");
        BSON_APPEND_INT64 (&part, "done", t.seen);
        BSON_APPEND_INT64 (&part, "written", t.changed);
        bson_append_document_end (arr, &part);
        bson_destroy (&last);
        bson_destroy (&doc);
    }
    bson_destroy (&parts);
    return (int) count;
}

/* Each pass's partitions: those the run recorded (split_pass), or the
 * pass as one partition, the whole of its driving collection (MinKey to
 * MaxKey), as its checkpoint shows it; pending until it has one. The one
 * place status --json learns partitions from. *step: the first step not
 * done (0: every one is); *rate: the running partitions' documents a
 * second. */
bool
online_status_partitions (online_t *on, const online_record_t *r, const char *holder, bool alive,
                          bson_t *arr, int64_t *step, int64_t *rate, bson_error_t *err)
{
    uint32_t n = 0;
    *step = 0;
    *rate = 0;
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, r->in_place);
        const rm_nsref_t *const *in = st->in;
        const rm_pass_t *passes = st->passes;
        size_t np = st->np;
        /* A fused run's partitions are its first step's; a plan run in
         * place fused nothing. */
        size_t run = r->in_place ? 1 : rm_names_run (&on->run->names, i);
        if (!online_step_runs (st, err))
            return false;
        if (!run)
            continue;
        for (size_t p = 0; p < np; p++) {
            char id[300], key[16];
            const char *kp, *state;
            bson_t doc, last, part, bounds;
            bool found;
            online_cp_tally_t t = {false, 0, 0};
            int64_t pr;
            bool split_done;
            pass_at_t at = {s, run, p, in[passes[p].drive]->text};
            int split = split_pass (on, &at, alive, arr, &n, &split_done, err);
            if (split < 0)
                return false;
            if (split > 0) {
                if (!split_done && !*step)
                    *step = (int64_t) s->index;
                continue;
            }
            if (p == 0)
                snprintf (id, sizeof id, "%s:%zu", on->run->names.id, s->index);
            else
                snprintf (id, sizeof id, "%s:%zu/%zu", on->run->names.id, s->index, p + 1);
            if (!online_state_get (on, "checkpoints", id, &doc, &found, "reading the checkpoints",
                                   err)) {
                bson_destroy (&doc);
                return false;
            }
            bson_init (&last);
            if (found)
                online_checkpoint_parse (&doc, &last, &t);
            state = t.done ? "done" : found && alive && !r->paused ? "running" : "pending";
            if (!t.done && !*step)
                *step = (int64_t) s->index;
            pr = found && !strcmp (state, "running") ? online_checkpoint_rate (&doc, NULL) : -1;
            if (pr > 0)
                *rate += pr;
            bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_document_begin (arr, kp, -1, &part);
            BSON_APPEND_UTF8 (&part, "ns", in[passes[p].drive]->text);
            BSON_APPEND_INT64 (&part, "step", (int64_t) s->index);
            BSON_APPEND_UTF8 (&part, "op", s->op);
            run_fields (s, run, &part);
            BSON_APPEND_INT64 (&part, "pass", (int64_t) p + 1);
            BSON_APPEND_DOCUMENT_BEGIN (&part, "bounds", &bounds);
            BSON_APPEND_MINKEY (&bounds, "min");
            BSON_APPEND_MAXKEY (&bounds, "max");
            bson_append_document_end (&part, &bounds);
            BSON_APPEND_UTF8 (&part, "state", state);
            if (!strcmp (state, "running"))
                BSON_APPEND_UTF8 (&part, "worker", holder);
            else
                BSON_APPEND_NULL (&part, "worker");
            BSON_APPEND_INT64 (&part, "done", t.seen);
            BSON_APPEND_INT64 (&part, "written", t.changed);
            /* In place, what was written is what changed; the rest of what
             * was read was left as it was (online_status.c says it too). */
            if (r->in_place) {
                BSON_APPEND_INT64 (&part, "changed", t.changed);
                BSON_APPEND_INT64 (&part, "unchanged", t.seen > t.changed ? t.seen - t.changed : 0);
            }
            if (pr >= 0)
                BSON_APPEND_INT64 (&part, "rate", pr);
            bson_append_document_end (arr, &part);
            bson_destroy (&last);
            bson_destroy (&doc);
        }
    }
    return true;
}

/* doc as one line of relaxed Extended JSON, the command's output, on the
 * reporter's stream (standard output), in one write. */
static void
put_json (const online_t *on, const bson_t *doc)
{
    rm_buf_t line;
    rm_buf_init (&line);
    rm_extjson_doc (&line, bson_get_data (doc), doc->len, RM_EXTJSON_RELAXED, false);
    rm_buf_append (&line, "\n", 1);
    fwrite (line.data, 1, line.len, online_say_out_stream (on));
    rm_buf_destroy (&line);
}

static void
plan_doc (online_t *on, bool found, bson_t *out)
{
    bson_t sub;
    BSON_APPEND_DOCUMENT_BEGIN (out, "plan", &sub);
    BSON_APPEND_UTF8 (&sub, "name", on->run->names.name);
    BSON_APPEND_UTF8 (&sub, "path", on->run->names.path);
    BSON_APPEND_UTF8 (&sub, "id", on->run->names.id);
    BSON_APPEND_BOOL (&sub, "found", found);
    bson_append_document_end (out, &sub);
}

/* The status document on standard output: 0, or -1 with err and nothing
 * printed. */
/* The indexes the plan's commands built, kept, did not carry or dropped
 * (their records: online_index_copy.c, online_index.c, online_validators.c),
 * each list empty until one is recorded. */
static void
indexes_doc (const bson_t *rec, bson_t *out)
{
    static const char *const from[] = {"resultIndexes", "indexChanges", "madeIndexes",
                                        "droppedIndexes"};
    static const char *const to[] = {"results", "changes", "made", "dropped"};
    bson_t sub, empty = BSON_INITIALIZER;
    bson_iter_t it;
    BSON_APPEND_DOCUMENT_BEGIN (out, "indexes", &sub);
    BSON_APPEND_BOOL (&sub, "keepIndexes", bson_iter_init_find (&it, rec, "keepIndexes") &&
                                               bson_iter_as_bool (&it));
    for (int i = 0; i < 4; i++) {
        if (bson_iter_init_find (&it, rec, from[i]) && BSON_ITER_HOLDS_ARRAY (&it))
            BSON_APPEND_VALUE (&sub, to[i], bson_iter_value (&it));
        else
            BSON_APPEND_ARRAY (&sub, to[i], &empty);
    }
    bson_append_document_end (out, &sub);
}

static int
status_doc (online_t *on, bson_error_t *err)
{
    online_record_t r;
    char holder[200], tstate[32], reason[300], note[400];
    int64_t left = 0, epoch = 0, step = 0, rate = 0, since = 0, lag = -1;
    bool gone = false, alive, found;
    bson_t out = BSON_INITIALIZER, arr, sub, rec;
    bson_iter_t it;

    if (!online_plan_read (on, &r, err) ||
        !online_lease_status (on, holder, sizeof holder, &left, &epoch, &gone, err)) {
        bson_destroy (&out);
        return -1;
    }
    if (!online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           err)) {
        bson_destroy (&rec);
        bson_destroy (&out);
        return -1;
    }
    alive = *holder && !gone;
    plan_doc (on, r.found, &out);
    BSON_APPEND_UTF8 (&out, "mode", r.in_place ? "in place" : "side by side");
    BSON_APPEND_BOOL (&out, "paused", r.paused);
    BSON_APPEND_BOOL (&out, "finalized", r.finalized);
    BSON_APPEND_ARRAY_BEGIN (&out, "partitions", &arr);
    if (!online_status_partitions (on, &r, holder, alive, &arr, &step, &rate, err)) {
        bson_destroy (&rec);
        bson_destroy (&out);
        return -1;
    }
    bson_append_array_end (&out, &arr);
    /* The step in progress (null once every step is done, or before a
     * run began). */
    if (step && r.found)
        BSON_APPEND_INT64 (&out, "step", step);
    else
        BSON_APPEND_NULL (&out, "step");
    BSON_APPEND_ARRAY_BEGIN (&out, "workers", &arr);
    if (alive) {
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "0", &sub);
        BSON_APPEND_UTF8 (&sub, "id", holder);
        BSON_APPEND_INT64 (&sub, "rate", rate);
        BSON_APPEND_INT64 (&sub, "epoch", epoch);
        bson_append_document_end (&arr, &sub);
    }
    bson_append_array_end (&out, &arr);
    online_throttle_read (&rec, tstate, sizeof tstate, reason, sizeof reason, &since, &lag, note,
                          sizeof note);
    BSON_APPEND_DOCUMENT_BEGIN (&out, "throttle", &sub);
    /* A state recorded by a run that is gone is no one's now. */
    BSON_APPEND_UTF8 (&sub, "state", !alive ? "not running" : *tstate ? tstate : "running");
    if (alive && !strcmp (tstate, "throttled"))
        BSON_APPEND_UTF8 (&sub, "reason", reason);
    else
        BSON_APPEND_NULL (&sub, "reason");
    if (since)
        BSON_APPEND_DATE_TIME (&sub, "since", since);
    else
        BSON_APPEND_NULL (&sub, "since");
    BSON_APPEND_BOOL (&sub, "manual",
                      bson_iter_init (&it, &rec) &&
                          bson_iter_find_descendant (&it, "throttle.manual", &it) &&
                          bson_iter_as_bool (&it));
    if (lag >= 0)
        BSON_APPEND_INT64 (&sub, "lagMs", lag);
    else
        BSON_APPEND_NULL (&sub, "lagMs");
    if (*note)
        BSON_APPEND_UTF8 (&sub, "lag", note);
    bson_append_document_end (&out, &sub);
    if (bson_iter_init_find (&it, &rec, "settings") && BSON_ITER_HOLDS_DOCUMENT (&it))
        BSON_APPEND_VALUE (&out, "settings", bson_iter_value (&it));
    indexes_doc (&rec, &out);
    if (*holder) {
        BSON_APPEND_DOCUMENT_BEGIN (&out, "lease", &sub);
        BSON_APPEND_UTF8 (&sub, "holder", holder);
        BSON_APPEND_INT64 (&sub, "epoch", epoch);
        BSON_APPEND_INT64 (&sub, "leftMs", left);
        BSON_APPEND_BOOL (&sub, "gone", gone);
        bson_append_document_end (&out, &sub);
    } else {
        BSON_APPEND_NULL (&out, "lease");
    }
    if (*r.error)
        BSON_APPEND_UTF8 (&out, "error", r.error);
    else
        BSON_APPEND_NULL (&out, "error");
    /* What the server is and the write forms chosen for it (online_caps.c). */
    online_caps_log_probe (on);
    online_caps_append (&on->run->caps, &out, "server");
    if (on->run->pair) /* --to-uri: toUri and canCommit (online_dest_status.c) */
        online_dest_status (on, &out);
    put_json (on, &out);
    bson_destroy (&rec);
    bson_destroy (&out);
    return 0;
}

/* A script reading standard output gets JSON whatever happens: when the
 * plan's state cannot be read (the server away, a record that is not
 * what a run writes), the plan, "unreadable": true and the error's
 * message, as well as the error on standard error and a non-zero exit
 * status. */
int
online_status_json (online_t *on, bson_error_t *err)
{
    bson_t out = BSON_INITIALIZER;
    if (status_doc (on, err) == 0) {
        bson_destroy (&out);
        return 0;
    }
    plan_doc (on, false, &out);
    BSON_APPEND_BOOL (&out, "unreadable", true);
    BSON_APPEND_UTF8 (&out, "error", err->message);
    put_json (on, &out);
    bson_destroy (&out);
    return -1;
}

void
online_status_throttle (online_t *on, bool alive)
{
    char tstate[32], reason[300], note[400], ago[32];
    int64_t since, lag;
    bson_t rec;
    bool found;
    bson_error_t why;
    time_t now = time (NULL);
    FILE *out = online_say_out_stream (on);

    if (!online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           &why)) {
        rm_cli_line (out, "", "\n", "throttle: not read: %s", why.message);
        bson_destroy (&rec);
        return;
    }
    online_throttle_read (&rec, tstate, sizeof tstate, reason, sizeof reason, &since, &lag, note,
                          sizeof note);
    online_duration (ago, sizeof ago, since ? (int64_t) now - since / 1000 : -1);
    if (alive && !strcmp (tstate, "throttled"))
        rm_cli_line (out, "", "\n", "throttle: throttled for %s: %s", ago, reason);
    else if (alive && lag >= 0)
        online_say_out (on, "throttle: none (replication lag %.1f s)\n", (double) lag / 1000.0);
    else if (alive && *note)
        rm_cli_line (out, "", "\n", "throttle: none (%s)", note);
    bson_destroy (&rec);
}
