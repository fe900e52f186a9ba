/* remodel online status: the plan's checkpoints as a table (read,
 * written, rate, ETA; a pass not begun yet as "pending"), then its mode,
 * the capture's point and whether the log still holds it (a following
 * plan's lag and last sample), an interrupted switch, the lease's holder,
 * what a rollback left, the last error. It only reads. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"
#include "remodel/cli.h"

/* A cell of the table, on the reporter's stream for a command's output
 * (out, online_say_out_stream): text from the state database or the plan
 * (a namespace, an operation) escaped as every message is
 * (rm_cli_put_text: a name holding ESC sequences, a newline or
 * bidirectional controls neither drives the terminal nor breaks the
 * table), then padded to width columns by what it took on the screen. */
static void
cell (FILE *out, const char *text, int width)
{
    size_t used = rm_cli_put_text (out, text, strlen (text));
    for (; (int) used < width; used++)
        fputc (' ', out);
}

/* The follow line: its last round, and how far the results are behind
 * the log now (the events after the recorded point, read without
 * writing anything, and the time since that point was taken). */
static void
status_follow (online_t *on, const bson_t *rec, const online_capture_t *c)
{
    FILE *out = online_say_out_stream (on);
    online_capture_t to;
    online_changes_t ch;
    const char *nss[64];
    bson_error_t why;
    bson_iter_t it;
    int64_t round = 0, at = 0, lag = 0, events = 0, pid = 0, now = time (NULL);
    online_sample_t s;
    char said[200];
    bool in_place;

    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "follow.round", &it))
        round = bson_iter_as_int64 (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "follow.at", &it))
        at = bson_iter_date_time (&it) / 1000;
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "follow.lagMs", &it))
        lag = bson_iter_as_int64 (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "follow.events", &it))
        events = bson_iter_as_int64 (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "follow.pid", &it))
        pid = bson_iter_as_int64 (&it);
    if (round)
        online_say_out (on, "follow: round %lld, %lld s ago (pid %lld): %lld events applied in "
                        "%.1f s\n", (long long) round, (long long) (now - at), (long long) pid,
                        (long long) events, (double) lag / 1000.0);
    online_capture_init (&to);
    online_changes_init (&ch);
    ch.nss = nss;
    ch.nns = online_changes_sources (on, nss, 64);
    if (!online_changes_read (on, c, &to, &ch, &why))
        rm_cli_line (out, "", "\n", "lag: not read: %s", why.message);
    else if (*ch.rescan)
        rm_cli_line (out, "", "\n", "lag: %lld events since the recorded point, and %s: the "
                     "next sync rescans", (long long) ch.events, ch.rescan);
    else if (!ch.events)
        online_say_out (on, "lag: none (the change log holds no event after the recorded "
                        "point)\n");
    else
        online_lag_line (on, rec, &ch);
    /* What finalize will verify with the writes stopped (online_sample.c);
     * in place there is no finalize. */
    in_place = bson_iter_init_find (&it, rec, "inPlace") && bson_iter_as_bool (&it);
    if (online_sample_read (rec, &s)) {
        online_sample_describe (&s, said, sizeof said);
        rm_cli_line (out, "", "\n", "sample: verified %s%s", said,
                     in_place ? "" : ": finalize verifies none while the writes are stopped");
    } else if (!in_place) {
        online_say_out (on, "sample: none verified ahead: finalize verifies one while the "
                        "writes are stopped (verify --sample N, or a follow running, verifies "
                        "one before)\n");
    }
    online_changes_destroy (&ch);
    online_capture_destroy (&to);
}

/* The capture lines: the mode and its start point, or for none what
 * finalize will cost at the rate the checkpoints show; then whether the
 * point is still in the log. A failed check is said, not fatal: status
 * shows what it can. */
static void
status_capture (online_t *on, const online_record_t *r)
{
    FILE *out = online_say_out_stream (on);
    int64_t seen = 0, rate = 0;
    online_capture_t c;
    bson_t doc;
    bson_error_t why;
    bool found, lost;
    char line[1200], more[300], point[400];

    online_capture_init (&c);
    if (!online_state_get (on, "plans", on->run->names.id, &doc, &found, "reading the plan's record",
                           &why)) {
        rm_cli_line (out, "", "\n", "capture: not read: %s", why.message);
    } else if (!online_capture_load (&doc, &c)) {
        online_say_out (on, "capture: no start point recorded (a run records one before its "
                        "copy begins; one begun before remodel did needs --restart)\n");
    } else {
        *more = '\0';
        if (c.mode == ONLINE_CAPTURE_NONE && online_checkpoint_totals (on, &seen, &rate, &why))
            online_capture_cost (seen, r->in_place, rate, more, sizeof more);
        online_capture_describe (&c, c.mode == ONLINE_CAPTURE_NONE ? more : NULL, line,
                                 sizeof line);
        rm_cli_line (out, "", "\n", "capture: %s", line);
        online_capture_point (&c, point, sizeof point);
        if (c.mode != ONLINE_CAPTURE_NONE && !online_capture_lost (on, &c, &lost, &why))
            rm_cli_line (out, "", "\n", "history: not checked: %s", why.message);
        else if (c.mode != ONLINE_CAPTURE_NONE && lost)
            rm_cli_line (out, "", "\n", "history lost since %s: the next sync rescans "
                         "everything", point);
        else if (c.mode != ONLINE_CAPTURE_NONE)
            status_follow (on, &doc, &c);
    }
    bson_destroy (&doc);
    online_capture_destroy (&c);
}

/* Which passes the table showed: (step, pass) of each checkpoint row. */
#define SHOWN_MAX 64

typedef struct {
    int64_t step[SHOWN_MAX], pass[SHOWN_MAX];
    int64_t seen[SHOWN_MAX], changed[SHOWN_MAX]; /* its checkpoint's */
    size_t n;
} shown_t;

static bool
was_shown (const shown_t *sh, int64_t step, int64_t pass)
{
    for (size_t i = 0; i < sh->n; i++)
        if (sh->step[i] == step && sh->pass[i] == pass)
            return true;
    return false;
}

/* The steps of the run plan step i begins (remodel/fuse.h): 0 for one
 * inside a run, whose row is its first step's. A plan that ran in place
 * fused nothing, whatever this command was given. */
static size_t
run_of (const online_t *on, const online_record_t *r, size_t i)
{
    return r->in_place ? 1 : rm_names_run (&on->run->names, i);
}

/* The STEP column: a fused run's steps as "1-4". */
static void
step_cell (const online_t *on, const online_record_t *r, const rm_step_t *s)
{
    size_t n = s->index >= 1 ? run_of (on, r, s->index - 1) : 1;
    char steps[32];
    if (n <= 1) {
        online_say_out (on, "%-5zu ", s->index);
        return;
    }
    snprintf (steps, sizeof steps, "%zu-%zu", s->index, s[n - 1].index);
    online_say_out (on, "%-5s ", steps);
}

/* Under the table, a line for each fused run: its steps read as one pass
 * and written as one result, which the table's row (its first step's
 * checkpoint) counts. */
static void
status_runs (online_t *on, const online_record_t *r)
{
    FILE *out = online_say_out_stream (on);
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const rm_nsref_t *in[4];
        char label[200], target[400];
        if (run_of (on, r, i) <= 1)
            continue;
        rm_step_inputs (s, in, 4);
        rm_names_label (&on->run->names, s, label, sizeof label);
        rm_name_target (&on->run->names, s, in[0], target, sizeof target);
        rm_cli_line (out, "", "\n", "%s %s: fused: one pass, one result (%s.%s)", label,
                     in[0]->text, in[0]->db, target);
    }
}

/* A row for each pass after those with a checkpoint that has none yet,
 * "pending": a run stopped between two passes would otherwise show only
 * the passes done and read as finished. A pass split in partitions is
 * not one: online_parts_list shows its partitions, pending ones too. */
static bool
status_pending (online_t *on, const online_record_t *r, const shown_t *sh, bson_error_t *err)
{
    FILE *out = online_say_out_stream (on);
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, r->in_place);
        if (!online_step_runs (st, err))
            return false;
        if (!run_of (on, r, i))
            continue;
        for (size_t p = 0; p < st->np; p++) {
            char opname[64];
            bson_t parts = BSON_INITIALIZER;
            uint32_t split;
            if (was_shown (sh, (int64_t) s->index, (int64_t) p + 1))
                continue;
            online_cp_where_t at = {s, p, 0, 0};
            if (!online_parts_get (on, &at, NULL, false, false, &parts, err)) {
                bson_destroy (&parts);
                return false;
            }
            split = online_parts_count (&parts);
            bson_destroy (&parts);
            if (split >= 2)
                continue;
            if (p > 0)
                snprintf (opname, sizeof opname, "%s/%zu", s->op, p + 1);
            else
                snprintf (opname, sizeof opname, "%s", s->op);
            step_cell (on, r, s);
            cell (out, opname, 14);
            fputc (' ', out);
            cell (out, st->in[st->passes[p].drive]->text, 30);
            online_say_out (on, " %-8s %10d %10d %8s %8s\n", "pending", 0, 0, "-", "-");
        }
    }
    return true;
}

/* In place, a pass's checkpoint counts the documents it rewrote
 * ("changed": their bytes differ); the rest of those it read it left as
 * they were (its filter left them out, or they were already right). A
 * line each under the table, so that the table's columns stay as the
 * suites and scripts read them. Side by side every result is written
 * (WRITTEN): what differs from the sources is not counted there. */
static void
status_counts (online_t *on, const online_record_t *r, const shown_t *sh)
{
    FILE *out = online_say_out_stream (on);
    for (size_t i = 0; r->in_place && i < sh->n; i++) {
        const rm_step_t *s;
        const online_step_t *st;
        if (sh->step[i] < 1 || (size_t) sh->step[i] > on->run->plan.n)
            continue;
        s = &on->run->plan.steps[sh->step[i] - 1];
        st = online_step (on, s, true);
        if (sh->pass[i] < 1 || (size_t) sh->pass[i] > st->np)
            continue;
        rm_cli_line (out, "", "\n", "step %lld (%s) %s: %lld changed, %lld unchanged",
                     (long long) sh->step[i], s->op, st->in[st->passes[sh->pass[i] - 1].drive]->text,
                     (long long) sh->changed[i],
                     (long long) (sh->seen[i] > sh->changed[i] ? sh->seen[i] - sh->changed[i] : 0));
    }
}

/* One checkpoint as stored. */
typedef struct {
    const char *op, *ns, *db, *coll;
    int64_t step, pass, seen, changed;
    bool done;
} row_t;

static const char *
row_utf8 (const bson_t *doc, const char *key, const char *none)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, doc, key) && BSON_ITER_HOLDS_UTF8 (&it)
               ? bson_iter_utf8 (&it, NULL) : none;
}

static int64_t
row_int (const bson_t *doc, const char *key, int64_t none)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, doc, key) ? bson_iter_as_int64 (&it) : none;
}

static void
row_parse (const bson_t *doc, row_t *w)
{
    bson_iter_t it;
    w->op = row_utf8 (doc, "op", "?");
    w->ns = row_utf8 (doc, "ns", "?");
    w->db = row_utf8 (doc, "db", NULL);
    w->coll = row_utf8 (doc, "coll", NULL);
    w->step = row_int (doc, "step", 0);
    w->pass = row_int (doc, "pass", 1);
    w->seen = row_int (doc, "seen", 0);
    w->changed = row_int (doc, "changed", 0);
    w->done = bson_iter_init_find (&it, doc, "done") && bson_iter_as_bool (&it);
}

/* A row of the table for checkpoint doc, noted in shown. */
static void
status_row (online_t *on, const online_record_t *r, const bson_t *doc, bool alive, shown_t *shown)
{
    FILE *out = online_say_out_stream (on);
    row_t w;
    const char *st;
    int64_t rate, total, eta = -1;
    char opname[64], etab[32], rateb[32];

    row_parse (doc, &w);
    rate = online_checkpoint_rate (doc, NULL);
    st = w.done ? "done" : r->paused ? "paused" : alive ? "running" : "stopped";
    /* Only a step that moves has time left: a stopped one shows "-",
     * never a "0s" that reads as nearly done; and a count below what
     * was read (documents deleted since) says nothing either. */
    if (!strcmp (st, "running") && rate > 0 && w.db && w.coll &&
        (total = online_estimated (on, w.db, w.coll)) > w.seen)
        eta = (total - w.seen + rate - 1) / rate;
    /* Paused, no time is left "remaining": the ETA counts again from
     * the resume. */
    if (!w.done && r->paused)
        snprintf (etab, sizeof etab, "paused");
    else
        online_duration (etab, sizeof etab, w.done ? -1 : eta);
    if (rate < 0)
        snprintf (rateb, sizeof rateb, "-");
    else
        snprintf (rateb, sizeof rateb, "%lld", (long long) rate);
    if (w.pass > 1)
        snprintf (opname, sizeof opname, "%s/%lld", w.op, (long long) w.pass);
    else
        snprintf (opname, sizeof opname, "%s", w.op);
    /* op and ns are as the state database holds them: escaped. */
    if (w.step >= 1 && (size_t) w.step <= on->run->plan.n)
        step_cell (on, r, &on->run->plan.steps[w.step - 1]);
    else
        online_say_out (on, "%-5lld ", (long long) w.step);
    cell (out, opname, 14);
    fputc (' ', out);
    cell (out, w.ns, 30);
    online_say_out (on, " %-8s %10lld %10lld %8s %8s\n", st, (long long) w.seen,
                    (long long) w.changed, rateb, etab);
    if (shown->n < SHOWN_MAX) {
        shown->step[shown->n] = w.step;
        shown->seen[shown->n] = w.seen;
        shown->changed[shown->n] = w.changed;
        shown->pass[shown->n++] = w.pass;
    }
}

/* The table of the plan's checkpoints: how many rows, -1 on an error. */
static int
status_table (online_t *on, const online_record_t *r, bool alive, shown_t *shown,
              bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, "checkpoints");
    bson_t *q = BCON_NEW ("plan", BCON_UTF8 (on->run->names.id));
    bson_t *opts = BCON_NEW ("sort", "{", "step", BCON_INT32 (1), "pass", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, q, opts);
    const bson_t *doc;
    bson_error_t why;
    int rows = 0;

    online_say_out (on, "%-5s %-14s %-30s %-8s %10s %10s %8s %8s\n", "STEP", "OPERATION",
                    "NAMESPACE", "STATUS", "READ", "WRITTEN", "RATE/S", "ETA");
    while (ops->next (cur, &doc)) {
        status_row (on, r, doc, alive, shown);
        rows++;
    }
    if (!ops->end (cur, &why)) {
        online_fail (on, err, &why, "reading the checkpoints");
        rows = -1;
    }
    bson_destroy (q);
    bson_destroy (opts);
    mongoc_collection_destroy (c);
    return rows;
}

/* No checkpoint yet: a run may be starting (it holds the lease and has
 * not finished its first batch), or one stopped before that. */
static void
status_none (online_t *on, const online_record_t *r, const char *holder, bool gone)
{
    FILE *out = online_say_out_stream (on);
    if (*holder && !gone)
        rm_cli_line (out, "", "\n", "(plan %s: starting on %s: run by %s, no batch done yet)",
                     on->run->names.name, on->run->where, holder);
    else if (*holder)
        rm_cli_line (out, "", "\n", "(plan %s: its run by %s on %s stopped before its first "
                     "batch was done)", on->run->names.name, holder, on->run->where);
    else if (r->found)
        rm_cli_line (out, "", "\n", "(plan %s: no batch done on %s yet)", on->run->names.name,
                     on->run->where);
    else
        rm_cli_line (out, "", "\n", "(plan %s has not run on %s)", on->run->names.name, on->run->where);
}

/* The plan's lines under the table: its path and mode, its joins' rules,
 * the capture, an interrupted switch. */
static void
status_plan (online_t *on, const online_record_t *r)
{
    FILE *out = online_say_out_stream (on);
    if (r->found) {
        rm_cli_line (out, "", "\n", "plan: %s (id %s)", on->run->names.path, on->run->names.id);
        online_say_out (on, "mode: %s%s%s\n", r->in_place ? "in place"
                                              : on->run->pair ? "to another deployment (the results "
                                                                "under their final names there)"
                                                              : "side by side",
                        r->paused ? "; paused (remodel online resume)" : "",
                        r->finalized ? "; finalized" : "");
    }
    if (r->lookup_rules)
        online_say_out (on, "joins: $lookup by MongoDB %s's rules (the other commands take them "
                        "from here unless given --server-version)\n",
                        r->lookup_rules == 2 ? "9.0" : "5.0-8.x");
    if (r->found)
        status_capture (on, r);
    if (r->switching) {
        rm_cli_line (out, "", "\n", "switch: the %s of the collections was interrupted after "
                     "%lld of %lld renames", r->direction, (long long) r->renamed,
                     (long long) r->renames);
        rm_cli_line (out, "", "\n", "  remodel online finalize %s --writes-stopped completes "
                     "it; remodel online rollback %s undoes it", on->run->o->plan_path,
                     on->run->o->plan_path);
    }
}

/* The holder and the last error are as the state database holds them,
 * the plan's path as given: escaped, each one line. */
static void
status_lease (online_t *on, const online_record_t *r, const char *holder, int64_t left,
              int64_t epoch)
{
    FILE *out = online_say_out_stream (on);
    if (*holder)
        rm_cli_line (out, "", "\n", "lease: held by %s (epoch %lld), for %lld s more unless "
                     "renewed", holder, (long long) epoch, (long long) ((left + 999) / 1000));
    if (r->rollback_left)
        rm_cli_line (out, "", "\n", "rollback: %lld document(s) changed since remodel wrote "
                     "them were left as they are; remodel online rollback %s --force restores "
                     "their originals (their later changes are lost), --forget keeps them and "
                     "forgets the plan", (long long) r->rollback_left, on->run->o->plan_path);
    if (r->after_pending)
        rm_cli_line (out, "", "\n", "rollback: the results beside the originals hold the "
                     "application's writes made after the switch; remodel online rollback %s "
                     "--carry-writes carries them into the originals, "
                     "--discard-writes-after-switch drops them", on->run->o->plan_path);
    if (*r->error)
        rm_cli_line (out, "", "\n", "last error: %s", r->error);
}

int
online_status (online_t *on, bson_error_t *err)
{
    online_record_t r;
    char holder[200];
    int64_t left = 0, epoch = 0;
    bool gone = false;
    int rows;
    shown_t shown = {.n = 0};

    if (!online_plan_read (on, &r, err) ||
        !online_lease_status (on, holder, sizeof holder, &left, &epoch, &gone, err))
        return -1;
    rows = status_table (on, &r, *holder && !gone, &shown, err);
    if (rows < 0 || (rows && !status_pending (on, &r, &shown, err)))
        return -1;
    status_counts (on, &r, &shown);
    status_runs (on, &r);
    if (!rows)
        status_none (on, &r, holder, gone);
    /* The passes split in partitions (online_partition_state.c). */
    if (rows && online_parts_list (on, *holder && !gone, err) < 0)
        return -1;
    status_plan (on, &r);
    if (r.found && !r.in_place)
        online_index_copy_status (on);
    if (r.found)
        online_status_throttle (on, *holder && !gone);
    status_lease (on, &r, holder, left, epoch);
    if (on->run->pair) /* --to-uri: committed, rolled back (online_dest_rollback.c) */
        online_dest_status_line (on);
    /* What the server is and the write forms chosen for it (online_caps.c). */
    online_caps_log_probe (on);
    online_caps_print (&on->run->caps, online_say_out_stream (on));
    return rows;
}
