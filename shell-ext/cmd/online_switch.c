/* The switch between the designs, as a journaled state machine (online_cmd.h):
 * finalize renames each namespace's collection COLL to its backup name
 * and the plan's result to COLL; rollback renames them back.
 *
 * Before the first rename, finalize checks that every rename can succeed
 * (the results are there, no backup name is taken, and, before its last
 * sync, that the server renames to names of that shape: a probe collection
 * renamed and dropped) and writes the moves into the plan's record
 * (switch: {direction, moves, drops, renames, renamed}), with the mark
 * rollback tells later writes by (afterSwitch, online_after.c; a switch
 * stopped part way is checked there too, in the namespaces whose moves
 * are done: online_switch_in). Each move is then done by what the server shows, not
 * by what a process believed: for COLL, RESULT and BACKUP, which exist
 * says whether the move is before its renames, half-way (COLL renamed
 * away, RESULT not yet in its place) or after; so a command killed at any
 * point, between a rename and its note in the journal included, is
 * completed by finalize run again and undone by rollback, each rename
 * done once. A state that is none of those (a collection made or dropped
 * by someone else) stops the switch naming the three collections.
 * Renames are retried on transient errors; nothing is dropped but the
 * intermediate results, and only once the plan is marked finalized. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"
#include "remodel/cli.h"

/* One namespace's switch. */
typedef struct {
    char ns[300];
    char db[128];
    char coll[256];         /* the namespace's collection */
    char result[400];       /* the plan's result for it */
    char backup[400];       /* where finalize keeps the original */
    bool original;          /* the namespace had a collection before */
} move_t;

#define MOVES_MAX 64

typedef struct {
    move_t moves[MOVES_MAX];
    size_t n;
    char drops[MOVES_MAX][400]; /* intermediate results: "db\0coll" */
    size_t n_drops;
    int64_t renames;
} journal_t;

static void
split_ns (const char *ns, char *db, size_t cap, const char **coll)
{
    const char *dot = strchr (ns, '.');
    snprintf (db, cap, "%.*s", (int) (dot - ns), ns);
    *coll = dot + 1;
}

bool
online_coll_exists (online_t *on, const char *db, const char *coll, bool *yes, bson_error_t *err)
{
    bson_t *f = BCON_NEW ("name", BCON_UTF8 (coll));
    bson_error_t why;
    char **names = online_collection_names (on, db, f, &why);
    bson_destroy (f);
    if (!names)
        return online_fail (on, err, &why, "listing collections");
    *yes = false;
    for (char **n = names; *n; n++)
        *yes |= strcmp (*n, coll) == 0;
    bson_strfreev (names);
    return true;
}

/* After a rename's reply was lost (the connection cut once it went out):
 * whether it applied, as the two collections show (a rename leaves no
 * other trace): 1 applied, 0 not (from still there, to not: sent again),
 * -1 neither (or they could not be listed): the error stands. */
static int
rename_applied (online_t *on, const char *db, const char *from, const char *to)
{
    bool from_there, to_there;
    bson_error_t ignored;
    if (!online_coll_exists (on, db, from, &from_there, &ignored) ||
        !online_coll_exists (on, db, to, &to_there, &ignored))
        return -1;
    return !from_there && to_there ? 1 : from_there && !to_there ? 0 : -1;
}

/* renameCollection without dropTarget: a rename never drops. The
 * switch's (switching) is said, and one whose reply a cut lost is judged
 * by what it left and, not applied, sent again, within --retry-for
 * (issue 60); the probe's fails at a cut, its probe going again whole,
 * timed again (a wait for the server is no rename's time). */
static bool
rename_coll (online_t *on, const char *db, const char *from, const char *to, bool switching,
             bson_error_t *err)
{
    char a[600], b[600];
    online_retry_t retry = {0, 0};
    bson_error_t why;
    bool ok;
    if (!online_lease_check (on, err))
        return false;
    snprintf (a, sizeof a, "%s.%s", db, from);
    snprintf (b, sizeof b, "%s.%s", db, to);
    ok = online_ops (on)->rename (on, a, b, false, &why);
    while (!ok && switching && online_transient (&why)) {
        int applied = rename_applied (on, db, from, to);
        if (applied == 1) {
            ok = true;
            break;
        }
        on->transient = applied == 0; /* online_retry waits only then */
        if (!online_retry (on, &retry, &why) || !online_lease_check (on, err))
            break;
        ok = online_ops (on)->rename (on, a, b, false, &why);
    }
    if (!ok) {
        char what[1300];
        snprintf (what, sizeof what, "renaming %s to %s", a, b);
        return online_fail (on, err, &why, what);
    }
    if (switching)
        online_say_note (on, "renamed %s to %s", a, b);
    return true;
}

/* One rename of the switch. Not static: the kill matrix stops the
 * process at each (tests/peers/killat.sh). */
bool
online_switch_rename (online_t *on, const char *db, const char *from, const char *to,
                      bson_error_t *err)
{
    return rename_coll (on, db, from, to, true, err);
}

bool
online_coll_drop (online_t *on, const char *db, const char *coll, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_error_t why;
    bool ok = online_lease_check (on, err) &&
              (online_ops (on)->drop (on, c, &why) || online_drop_gone (&why) ||
               online_fail (on, err, &why, "dropping a collection"));
    mongoc_collection_destroy (c);
    return ok;
}

/* A note in the plan's record. Not static: the kill matrix stops the
 * process at each state write of the switch here. */
bool
online_switch_note (online_t *on, const bson_t *update, bson_error_t *err)
{
    return online_plan_update (on, update, err);
}

/* ---- the journal ---- */

/* The moves from the plan: the namespaces whose collection it replaces,
 * each with its final result (on->run->names, last entry per namespace), and
 * the intermediate results a later step replaced. */
static bool
journal_plan (online_t *on, journal_t *j, bson_error_t *err)
{
    memset (j, 0, sizeof *j);
    if (!rm_names_of_plan (&on->own_run->names, &on->run->plan, err))
        return false;
    for (size_t i = on->run->names.n_moved; i-- > 0;) {
        bool seen = false;
        for (size_t k = 0; k < j->n; k++)
            seen |= strcmp (j->moves[k].ns, on->run->names.moved[i].ns) == 0;
        if (seen) {
            char db[128];
            const char *coll;
            split_ns (on->run->names.moved[i].ns, db, sizeof db, &coll);
            if (j->n_drops < MOVES_MAX) {
                size_t dl = strlen (db);
                memcpy (j->drops[j->n_drops], db, dl + 1);
                snprintf (j->drops[j->n_drops] + dl + 1, sizeof j->drops[0] - dl - 1, "%s",
                          on->run->names.moved[i].coll);
                j->n_drops++;
            }
            continue;
        }
        if (j->n == MOVES_MAX) {
            rm_error_set (err, RM_ERR_UNSUPPORTED, "plan %s changes more than %d namespaces",
                          on->run->names.name, MOVES_MAX);
            rm_names_clear (&on->own_run->names);
            return false;
        }
        {
            move_t *m = &j->moves[j->n++];
            const char *coll;
            snprintf (m->ns, sizeof m->ns, "%s", on->run->names.moved[i].ns);
            split_ns (m->ns, m->db, sizeof m->db, &coll);
            snprintf (m->coll, sizeof m->coll, "%s", coll);
            snprintf (m->result, sizeof m->result, "%s", on->run->names.moved[i].coll);
            rm_name_backup (&on->run->names, coll, m->backup, sizeof m->backup);
        }
    }
    rm_names_clear (&on->own_run->names);
    return true;
}

/* The journal of a switch about to begin: renamed is how many of its
 * renames are in place already (none before a finalize; all of them
 * before the rollback of a finished one). */
static void
journal_append (const journal_t *j, const char *direction, int64_t renamed, bson_t *sw)
{
    bson_t arr, m;
    char key[16];
    const char *kp;
    BSON_APPEND_UTF8 (sw, "direction", direction);
    BSON_APPEND_INT64 (sw, "renames", j->renames);
    BSON_APPEND_INT64 (sw, "renamed", renamed);
    BSON_APPEND_ARRAY_BEGIN (sw, "moves", &arr);
    for (size_t i = 0; i < j->n; i++) {
        bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, kp, &m);
        BSON_APPEND_UTF8 (&m, "ns", j->moves[i].ns);
        BSON_APPEND_UTF8 (&m, "db", j->moves[i].db);
        BSON_APPEND_UTF8 (&m, "coll", j->moves[i].coll);
        BSON_APPEND_UTF8 (&m, "result", j->moves[i].result);
        BSON_APPEND_UTF8 (&m, "backup", j->moves[i].backup);
        BSON_APPEND_BOOL (&m, "original", j->moves[i].original);
        bson_append_document_end (&arr, &m);
    }
    bson_append_array_end (sw, &arr);
    BSON_APPEND_ARRAY_BEGIN (sw, "drops", &arr);
    for (size_t i = 0; i < j->n_drops; i++) {
        bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, kp, &m);
        BSON_APPEND_UTF8 (&m, "db", j->drops[i]);
        BSON_APPEND_UTF8 (&m, "coll", j->drops[i] + strlen (j->drops[i]) + 1);
        bson_append_document_end (&arr, &m);
    }
    bson_append_array_end (sw, &arr);
}

/* The journal, and with finalize's the fields of mark (what rollback
 * tells the application's writes after the switch by, online_after.c),
 * in one write: a switch journaled has its mark. */
static bool
journal_write (online_t *on, const journal_t *j, const char *direction, int64_t renamed,
               const bson_t *mark, bson_error_t *err)
{
    bson_t u = BSON_INITIALIZER, set, sw;
    bool ok;
    BSON_APPEND_DOCUMENT_BEGIN (&u, "$set", &set);
    BSON_APPEND_DOCUMENT_BEGIN (&set, "switch", &sw);
    journal_append (j, direction, renamed, &sw);
    bson_append_document_end (&set, &sw);
    if (mark)
        bson_concat (&set, mark);
    bson_append_document_end (&u, &set);
    ok = online_switch_note (on, &u, err);
    bson_destroy (&u);
    return ok;
}

/* The journal in the plan's record: *found false when there is none. */
static bool
journal_read (online_t *on, journal_t *j, bool *found, bson_error_t *err)
{
    bson_t doc;
    bson_iter_t it, arr, e;
    bool there, ok = online_state_get (on, "plans", on->run->names.id, &doc, &there,
                                       "reading the switch's journal", err);

    memset (j, 0, sizeof *j);
    *found = false;
    if (ok && bson_iter_init_find (&it, &doc, "switch") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        bson_iter_t sw;
        *found = true;
        if (bson_iter_recurse (&it, &sw) && bson_iter_find (&sw, "renames"))
            j->renames = bson_iter_as_int64 (&sw);
        if (bson_iter_recurse (&it, &sw) && bson_iter_find (&sw, "moves") &&
            bson_iter_recurse (&sw, &arr))
            while (bson_iter_next (&arr) && j->n < MOVES_MAX && BSON_ITER_HOLDS_DOCUMENT (&arr)) {
                const uint8_t *data;
                uint32_t len;
                bson_t m;
                move_t *mv = &j->moves[j->n++];
                bson_iter_document (&arr, &len, &data);
                bson_init_static (&m, data, len);
                online_field_utf8 (&m, "ns", mv->ns, sizeof mv->ns);
                online_field_utf8 (&m, "db", mv->db, sizeof mv->db);
                online_field_utf8 (&m, "coll", mv->coll, sizeof mv->coll);
                online_field_utf8 (&m, "result", mv->result, sizeof mv->result);
                online_field_utf8 (&m, "backup", mv->backup, sizeof mv->backup);
                mv->original = bson_iter_init_find (&e, &m, "original") && bson_iter_as_bool (&e);
            }
        if (bson_iter_recurse (&it, &sw) && bson_iter_find (&sw, "drops") &&
            bson_iter_recurse (&sw, &arr))
            while (bson_iter_next (&arr) && j->n_drops < MOVES_MAX &&
                   BSON_ITER_HOLDS_DOCUMENT (&arr)) {
                const uint8_t *data;
                uint32_t len;
                bson_t m;
                char db[128], coll[256];
                bson_iter_document (&arr, &len, &data);
                bson_init_static (&m, data, len);
                online_field_utf8 (&m, "db", db, sizeof db);
                online_field_utf8 (&m, "coll", coll, sizeof coll);
                memcpy (j->drops[j->n_drops], db, strlen (db) + 1);
                snprintf (j->drops[j->n_drops] + strlen (db) + 1,
                          sizeof j->drops[0] - strlen (db) - 1, "%s", coll);
                j->n_drops++;
            }
    }
    bson_destroy (&doc);
    return ok;
}

/* ---- each move, by what the server shows ---- */

/* The states: online_switch_state.c (RACED: half-way, and the
 * namespace's collection made again by the application's writes,
 * online_raced.c). */
typedef online_switch_at_t at_t;

static bool
observe (online_t *on, const move_t *m, at_t *at, bson_error_t *err)
{
    bool c, r, b;
    if (!online_coll_exists (on, m->db, m->coll, &c, err) ||
        !online_coll_exists (on, m->db, m->result, &r, err) ||
        !online_coll_exists (on, m->db, m->backup, &b, err))
        return false;
    *at = online_switch_state (m->original, c, r, b);
    if (*at == ONLINE_AT_NONE) {
        rm_error_set (err, RM_ERR_FORMAT,
                      "%s: plan %s: %s is in no state the switch leaves: %s.%s %s, %s.%s %s, "
                      "%s.%s %s (the namespace %s a collection before); nothing renamed: "
                      "put them back as they were, then run the command again",
                      on->run->where, on->run->names.name, m->ns, m->db, m->coll, c ? "exists" : "is missing",
                      m->db, m->result, r ? "exists" : "is missing", m->db, m->backup,
                      b ? "exists" : "is missing", m->original ? "had" : "had no");
        return false;
    }
    return true;
}

/* Done renames, for status. */
static int64_t
renames_done (const move_t *m, at_t at)
{
    return online_switch_done (m->original, at);
}

/* The renames in place, as the server shows them. */
static bool
renames_observed (online_t *on, const journal_t *j, int64_t *renamed, bson_error_t *err)
{
    *renamed = 0;
    for (size_t i = 0; i < j->n; i++) {
        at_t at;
        if (!observe (on, &j->moves[i], &at, err))
            return false;
        *renamed += renames_done (&j->moves[i], at);
    }
    return true;
}

/* A switch an earlier command began, taken over in direction: the journal
 * says so, and how many renames that command made (it may have been
 * killed between a rename and its note). */
static bool
journal_resume (online_t *on, const journal_t *j, const char *direction, bson_error_t *err)
{
    int64_t renamed;
    bson_t *u;
    bool ok = renames_observed (on, j, &renamed, err);
    if (!ok)
        return false;
    u = BCON_NEW ("$set", "{", "switch.direction", BCON_UTF8 (direction), "switch.renamed",
                  BCON_INT64 (renamed), "}");
    ok = online_switch_note (on, u, err);
    bson_destroy (u);
    return ok;
}

static bool
note_progress (online_t *on, int64_t renamed, bson_error_t *err)
{
    bson_t *u = BCON_NEW ("$set", "{", "switch.renamed", BCON_INT64 (renamed), "}");
    bool ok = online_switch_note (on, u, err);
    bson_destroy (u);
    return ok;
}

/* The collection the application's writes made again at m's name,
 * renamed aside to the first free COLL_remodel_ID_raced_N (online_raced.c). */
static bool
raced_aside (online_t *on, const move_t *m, bson_error_t *err)
{
    char name[400];
    bool there = true;
    for (int n = 1; there && n <= 1000; n++) {
        online_raced_name (on, m->coll, n, name, sizeof name);
        if (!online_coll_exists (on, m->db, name, &there, err))
            return false;
    }
    online_say_warn (on, "%s.%s was made again by the application's writes during the switch (they "
                     "have not stopped): renamed aside, to be carried back into the original by "
                     "rollback", m->db, m->coll);
    return online_switch_rename (on, m->db, m->coll, name, err);
}

/* Move m forward (back: backward) one rename; *at its new state. */
static bool
move_once (online_t *on, const move_t *m, bool back, at_t *at, bson_error_t *err)
{
    at_t to = *at;
    switch (online_switch_next (m->original, back, &to)) {
    case ONLINE_RENAME_RACED_ASIDE:
        return raced_aside (on, m, err) && (*at = to, true);
    case ONLINE_RENAME_COLL_TO_BACKUP:
        return online_switch_rename (on, m->db, m->coll, m->backup, err) && (*at = to, true);
    case ONLINE_RENAME_RESULT_TO_COLL:
        return online_switch_rename (on, m->db, m->result, m->coll, err) && (*at = to, true);
    case ONLINE_RENAME_COLL_TO_RESULT:
        return online_switch_rename (on, m->db, m->coll, m->result, err) && (*at = to, true);
    case ONLINE_RENAME_BACKUP_TO_COLL:
        return online_switch_rename (on, m->db, m->backup, m->coll, err) && (*at = to, true);
    case ONLINE_RENAME_NONE:
        break;
    }
    return true;
}

/* Every move to its end state, one rename at a time, each retried after
 * a transient error by observing again (a rename the server made before
 * the connection broke is not made twice). The journal's count of
 * renames in place: the moves before this one (in the plan's order) are
 * switched, those after it are not, whichever the direction. */
static bool
run_moves (online_t *on, const journal_t *j, bool back, bson_error_t *err)
{
    for (size_t k = 0; k < j->n; k++) {
        size_t idx = back ? j->n - 1 - k : k;
        const move_t *m = &j->moves[idx];
        at_t goal = back ? ONLINE_AT_BEFORE : ONLINE_AT_AFTER, at;
        int64_t before = 0;
        online_retry_t retry = {0, 0};
        int races = 0;
        for (size_t i = 0; i < idx; i++)
            before += j->moves[i].original ? 2 : 1;
        for (;;) {
            bool ok = observe (on, m, &at, err), raced;
            if (ok && at == goal)
                break;
            ok = ok && move_once (on, m, back, &at, err) &&
                 note_progress (on, before + renames_done (m, at), err);
            /* A rename refused because a write made the collection again
             * in between: observed, renamed aside, on (bounded). */
            raced = !ok && races++ < 100 && observe (on, m, &at, &(bson_error_t) {0}) &&
                    at == ONLINE_AT_RACED;
            if (!ok && !raced && !online_retry (on, &retry, err))
                return false;
        }
    }
    return true;
}


/* The probe collections of m's namespace: collections of ours, named
 * like the backup, in the state database, where no change stream or
 * oplog read of the sources looks: a drop in a source's database shows in
 * its streams (mongo-java-server's drop events name no collection, so
 * each read as a drop of a source), in the state database it does not.
 * What a finalize killed in its probe left is dropped by the next probe,
 * or by the rollback that drops the results. */
static void
probe_names (online_t *on, const move_t *m, char *probe, char *probe2, size_t cap)
{
    snprintf (probe, cap, "%s_remodel_%s_probe", m->coll, on->run->names.id);
    snprintf (probe2, cap, "%s_remodel_%s_probe2", m->coll, on->run->names.id);
}

static bool
drop_probes (online_t *on, const move_t *m, bson_error_t *err)
{
    char probe[420], probe2[420];
    const char *sdb = on->run->o->state_db;
    bool old, old2;
    probe_names (on, m, probe, probe2, sizeof probe);
    /* An earlier remodel probed in the source's database: dropped only
     * where it is there, since a drop is an event in the sources' log. */
    return online_coll_drop (on, sdb, probe, err) && online_coll_drop (on, sdb, probe2, err) &&
           online_coll_exists (on, m->db, probe, &old, err) &&
           online_coll_exists (on, m->db, probe2, &old2, err) &&
           (!old || online_coll_drop (on, m->db, probe, err)) &&
           (!old2 || online_coll_drop (on, m->db, probe2, err));
}

/* Before the first rename: every result there, no backup name taken, no
 * namespace too long. */
static bool
preflight (online_t *on, journal_t *j, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; ok && i < j->n; i++) {
        move_t *m = &j->moves[i];
        bool r, b;
        ok = online_coll_exists (on, m->db, m->result, &r, err) &&
             online_coll_exists (on, m->db, m->backup, &b, err) &&
             online_coll_exists (on, m->db, m->coll, &m->original, err);
        if (ok && !r) {
            rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: the result for %s (%s.%s) is not "
                          "there: remodel online run first; nothing renamed", on->run->where,
                          on->run->names.name, m->ns, m->db, m->result);
            return false;
        }
        if (ok && b) {
            rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: %s.%s, where finalize would keep the "
                          "original %s, exists already; nothing renamed", on->run->where, on->run->names.name,
                          m->db, m->backup, m->ns);
            return false;
        }
        if (ok && strlen (m->db) + 1 + strlen (m->backup) > 255) {
            rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: %s.%s is longer than a namespace "
                          "may be (255 bytes): give the plan a shorter file name; nothing "
                          "renamed", on->run->where, on->run->names.name, m->db, m->backup);
            return false;
        }
        j->renames += m->original ? 2 : 1;
    }
    return ok;
}

/* One move's probe: its names cleared, probe made, renamed to probe2 (the
 * time in *ms), probe2 dropped. A whole that may run again: a rename
 * whose reply a cut lost is cleared by the next try's first drops. */
static bool
probe_once (online_t *on, const move_t *m, int64_t *ms, bool *there, bson_error_t *err)
{
    const char *sdb = on->run->o->state_db;
    char probe[420], probe2[420];
    int64_t t0;
    bool ok;
    probe_names (on, m, probe, probe2, sizeof probe);
    on->transient = false;
    ok = drop_probes (on, m, err) && online_coll_exists (on, m->db, m->coll, there, err);
    if (ok) {
        bson_t *cmd = BCON_NEW ("create", BCON_UTF8 (probe));
        bson_error_t why;
        ok = online_lease_check (on, err) &&
             (online_ops (on)->command (on, NULL, sdb, cmd, NULL, &why) ||
              online_fail (on, err, &why, "creating a probe collection"));
        bson_destroy (cmd);
    }
    /* Timed: the switch is as many renames, each with its note in
     * the journal (a write of the plan's record, counted with it). */
    t0 = online_mono_ms ();
    if (ok && !rename_coll (on, sdb, probe, probe2, false, err)) {
        if (on->transient) /* a cut, not a refusal: tried again */
            return false;
        bson_error_t ignored;
        rm_error_prefix (err, "%s: plan %s: the server refuses to rename a collection "
                         "named like %s.%s's (nothing of the plan renamed)", on->run->where,
                         on->run->names.name, m->db, m->coll);
        online_coll_drop (on, sdb, probe, &ignored);
        on->transient = false;
        return false;
    }
    *ms = online_mono_ms () - t0;
    return ok && online_coll_drop (on, sdb, probe2, err);
}

bool
online_switch_probe (online_t *on, int64_t *rename_ms, size_t *renames, bson_error_t *err)
{
    journal_t *j = bson_malloc0 (sizeof *j);
    bool ok = journal_plan (on, j, err);
    *rename_ms = 0;
    *renames = 0;
    for (size_t i = 0; ok && i < j->n; i++) {
        online_retry_t retry = {0, 0};
        int64_t ms = 0;
        bool there = false;
        /* After a transient error the move's probe goes again whole. */
        while (!(ok = probe_once (on, &j->moves[i], &ms, &there, err)) &&
               online_retry (on, &retry, err))
            ;
        if (ok && ms > *rename_ms)
            *rename_ms = ms;
        *renames += there ? 2 : 1;
    }
    bson_free (j);
    return ok;
}

static bool
drop_intermediates (online_t *on, const journal_t *j, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; ok && i < j->n_drops; i++)
        ok = online_coll_drop (on, j->drops[i], j->drops[i] + strlen (j->drops[i]) + 1, err);
    return ok;
}

bool
online_switch_forward (online_t *on, const bson_t *mark, size_t *n_switched, bson_error_t *err)
{
    journal_t *j = bson_malloc0 (sizeof *j);
    bool found, ok = journal_read (on, j, &found, err);
    bson_t *done;

    if (ok && !found) {
        /* The mark with the journal, before the first rename. */
        ok = journal_plan (on, j, err) && preflight (on, j, err) &&
             journal_write (on, j, "finalize", 0, mark, err);
    } else if (ok) {
        ok = journal_resume (on, j, "finalize", err);
        if (ok)
            online_say_note (on, "finalize: completing the switch an earlier command began");
    }
    ok = ok && run_moves (on, j, false, err);
    /* Switched once every rename is done, whatever becomes of the record's
     * writes after them: the caller drops what served the syncs then
     * (a lost reply to the last $unset would leave them for good, since a
     * finalize after it is refused as finalized already). */
    *n_switched = ok ? j->n : 0;
    /* Finalized before anything is dropped: the intermediates are what no
     * later command needs. */
    done = BCON_NEW ("$set", "{", "finalized", BCON_BOOL (true), "}");
    ok = ok && online_switch_note (on, done, err) && drop_intermediates (on, j, err);
    bson_destroy (done);
    done = BCON_NEW ("$unset", "{", "switch", BCON_UTF8 (""), "}");
    ok = ok && online_switch_note (on, done, err);
    bson_destroy (done);
    bson_free (j);
    return ok;
}

bool
online_switch_in (online_t *on, online_after_t *a, bson_error_t *err)
{
    journal_t *j = bson_malloc0 (sizeof *j);
    bool found, ok = journal_read (on, j, &found, err);
    for (size_t i = 0; ok && i < a->n; i++) {
        at_t at = ONLINE_AT_BEFORE;
        for (size_t k = 0; ok && k < j->n; k++)
            if (!strcmp (j->moves[k].ns, a->c[i].ns))
                ok = observe (on, &j->moves[k], &at, err);
        /* Half-way or raced, the result is not under COLL yet: what is
         * written there goes into the original (online_raced.c). */
        a->c[i].unswitched = at != ONLINE_AT_AFTER;
    }
    bson_free (j);
    return ok;
}

bool
online_switch_back (online_t *on, bool unsettled, bool *undone, bson_error_t *err)
{
    journal_t *j = bson_malloc0 (sizeof *j);
    online_record_t r;
    bool found, ok = online_plan_read (on, &r, err) && journal_read (on, j, &found, err);
    bson_t *u;

    *undone = false;
    if (ok && !found && !r.finalized) {
        /* A rollback whose renames were done and recorded (finalized
         * false, the journal gone) but that stopped before it settled:
         * finished here as it would have gone on (the raced writes carried,
         * the caller settles), the results kept beside the originals. */
        if (unsettled) {
            ok = online_raced_carry (on, err);
            *undone = ok;
            bson_free (j);
            return ok;
        }
        /* Nothing was switched: the caller drops the results. But no
         * backup may be there (a switch whose journal is gone). */
        ok = journal_plan (on, j, err);
        for (size_t i = 0; ok && i < j->n; i++) {
            bool b;
            ok = drop_probes (on, &j->moves[i], err) &&
                 online_coll_exists (on, j->moves[i].db, j->moves[i].backup, &b, err);
            if (ok && b) {
                rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %s.%s holds an original, but the "
                              "plan is not finalized and no switch is journaled: nothing "
                              "dropped; rename it back to %s.%s by hand", on->run->where, on->run->names.name,
                              j->moves[i].db, j->moves[i].backup, j->moves[i].db,
                              j->moves[i].coll);
                ok = false;
            }
        }
        bson_free (j);
        return ok;
    }
    if (ok && !found) {
        /* Finalized and done: the moves again from the plan; the backups
         * say which namespaces had an original. */
        ok = journal_plan (on, j, err);
        for (size_t i = 0; ok && i < j->n; i++) {
            ok = online_coll_exists (on, j->moves[i].db, j->moves[i].backup,
                                     &j->moves[i].original, err);
            j->renames += j->moves[i].original ? 2 : 1;
        }
        j->n_drops = 0;
        ok = ok && journal_write (on, j, "rollback", j->renames, NULL, err);
    } else if (ok) {
        ok = journal_resume (on, j, "rollback", err);
    }
    ok = ok && run_moves (on, j, true, err);
    u = BCON_NEW ("$set", "{", "finalized", BCON_BOOL (false), "}", "$unset", "{", "switch",
                  BCON_UTF8 (""), "}");
    ok = ok && online_switch_note (on, u, err);
    bson_destroy (u);
    /* The writes a race left beside the originals go into them. */
    ok = ok && online_raced_carry (on, err);
    *undone = ok;
    bson_free (j);
    return ok;
}
