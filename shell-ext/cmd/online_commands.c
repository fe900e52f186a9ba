/* The commands as a table (online_cmd.h), which main dispatches by; each
 * command's function checks its transition in the plan's life
 * (online_life.c) once, at its top, and returns the exit status (err set
 * for main to print once). */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

static int
cmd_status (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    (void) c;
    return (on->run->o->json ? online_status_json (on, err) : online_status (on, err)) < 0 ? 1 : 0;
}

/* pause, resume, throttle, unthrottle, set: through the plan's record;
 * every worker takes it at its next batch (online_throttle.c). ok: done,
 * then said in the row's words. */
static int
said (online_t *on, const online_cmd_t *c, bool ok)
{
    if (ok)
        online_say_note (on, "plan %s %s", on->run->names.name, c->said);
    return ok ? 0 : 1;
}

static int
cmd_pause (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    return said (on, c, online_plan_set (on, "paused", true, err));
}

static int
cmd_resume (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    return said (on, c, online_plan_set (on, "paused", false, err));
}

static int
cmd_throttle (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    return said (on, c, online_throttle_manual (on, true, err));
}

static int
cmd_unthrottle (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    return said (on, c, online_throttle_manual (on, false, err));
}

static int
cmd_set (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    return said (on, c, online_throttle_set (on, on->run->o, err));
}

/* verify's and sync's line: n results that differ (verify) or were
 * rewritten (sync); first, all: verify's first _id and where the rest
 * went. */
static void
rescan_said (online_t *on, const online_cmd_t *c, bool sync, int64_t n, const char *first,
             const char *all)
{
    const online_opts_t *o = on->run->o;
    if (n == 0)
        online_say_note (on, "%s: plan %s: every result %sas the sources make it", c->name,
                         on->run->names.name, !sync && o->sample > 0 ? "of the sample " : "");
    else if (n > 0)
        online_say_note (on, "%s: plan %s: %lld result(s) %s%s%s%s", c->name, on->run->names.name,
                         (long long) n,
                         !sync ? "differ" : o->dry_run ? "would be rewritten or removed"
                                                       : "rewritten or removed",
                         *first ? ", the first: " : "", first, all);
}

/* verify keeps the _ids it finds differing: the first for its line, all
 * of them for --differences. Exit 1 when any differ (said in its line:
 * no error line). */
static int
cmd_verify (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    int64_t n, differ = 0, listed = 0;
    char first[800] = "", all[1200] = "";

    if (!online_diffs_open (on, o->differences, err) ||
        !online_life_check (on, c->life, err))
        n = -1;
    else if (o->sample > 0)
        n = online_sample_verify (on, o->sample, &differ, err) ? differ : -1;
    else
        n = online_apply (on, ONLINE_VERIFY, err);
    if (n > 0)
        online_diffs_first (on, first, sizeof first);
    if (!online_diffs_close (on, n >= 0, &listed, err))
        n = -1;
    if (on->run->pair && !online_dest_verified (on, n, err)) /* --to-uri: for canCommit */
        n = -1;
    if (n > 0 && o->differences)
        snprintf (all, sizeof all, "; their %lld _id(s) in %s", (long long) listed,
                  o->differences);
    rescan_said (on, c, false, n, first, all);
    if (n > 0)
        err->code = 0;
    return n != 0 ? 1 : 0;
}

/* A sync keeps a finished run's results current: it finishes none. */
static int
cmd_sync (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    int64_t n = online_life_check (on, c->life, err) ? online_apply (on, ONLINE_SYNC, err) : -1;
    rescan_said (on, c, true, n, "", "");
    return n < 0 ? 1 : 0;
}

static int
cmd_follow (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    return online_follow (on, c->life, err) >= 0 ? 0 : 1; /* checks its life, retried */
}

/* finalize and rollback check their flags first, then their transition
 * (online_finalize.c). */
/* After the switch, outside the window, what finalize completes each
 * time it runs (online_validators.c): a finalized plan gets only that,
 * and is refused as before unless --validators asked for something. */
static int
cmd_finalize (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    bool prepare = !o->writes_stopped && !o->block_writes;
    online_record_t r;
    (void) c;
    if (o->validators && !prepare && !online_validators_probe (on, err))
        return 1;
    if (on->run->pair) /* --to-uri (online_dest_finalize.c) */
        return online_dest_finalize (on, err) && online_finalize_after (on, err) ? 0 : 1;
    if (!o->in_place && online_plan_read (on, &r, err) && r.found && r.finalized && !r.switching) {
        if (!online_finalize_after (on, err))
            return 1;
        if (o->validators)
            return 0;
        rm_error_set (err, RM_ERR_USAGE, "plan %s is finalized already", on->run->names.name);
        return 1;
    }
    if (!online_finalize (on, err))
        return 1;
    return prepare || online_finalize_after (on, err) ? 0 : 1;
}

/* --to-uri: going back to the source (online_dest_rollback.c), which
 * alone has a dry run: within one deployment a rollback renames. */
static int
cmd_rollback (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    if (on->run->pair)
        return online_dest_rollback (on, err) ? 0 : 1;
    if (on->run->o->dry_run) {
        rm_error_set (err, RM_ERR_USAGE, "--dry-run: %s has no dry run (run, verify and sync "
                      "have; rollback --to-uri of a committed plan has)", c->name);
        return 1;
    }
    return online_rollback (on, err) ? 0 : 1;
}

/* run's transition is checked by the plan's record as the run takes it
 * (online_plan_record), after the checks of the plan against the server
 * (preflight, indexes) that it always made first, and not by a dry run
 * or a join, which record nothing. */
static int
cmd_run (online_t *on, const online_cmd_t *c, bson_error_t *err)
{
    (void) c;
    if (on->run->pair) /* --to-uri (online_dest.c) */
        return online_dest_run (on, err);
    return online_apply (on, ONLINE_RUN, err) < 0 ? 1 : 0;
}

/* name, function, life; lease, --dry-run, signals, mode, switching,
 * starts; on_stop, said. The commands that write only state or switch
 * collections have no dry run (it would still write); status, which
 * writes nothing, takes the flag as it always did. */
static const online_cmd_t commands[] = {
    {"run", cmd_run, ONLINE_DO_RUN, true, true, true, true, false, true,
     "run it again to go on from there", NULL},
    {"status", cmd_status, ONLINE_DO_STATUS, false, true, false, false, false, false, "", NULL},
    {"pause", cmd_pause, ONLINE_DO_CONTROL, false, false, false, false, false, false, "",
     "paused (a run waits at its next batch)"},
    {"resume", cmd_resume, ONLINE_DO_CONTROL, false, false, false, false, false, false, "",
     "resumed"},
    {"throttle", cmd_throttle, ONLINE_DO_CONTROL, false, false, false, false, false, false, "",
     "throttled (a run waits at its next batch)"},
    {"unthrottle", cmd_unthrottle, ONLINE_DO_CONTROL, false, false, false, false, false, false,
     "", "unthrottled"},
    {"set", cmd_set, ONLINE_DO_CONTROL, false, false, false, false, false, false, "",
     "set (a run takes it at its next batch)"},
    {"verify", cmd_verify, ONLINE_DO_VERIFY, false, true, false, true, false, false, "", NULL},
    {"sync", cmd_sync, ONLINE_DO_SYNC, true, true, true, true, false, false,
     "sync again when ready", NULL},
    {"follow", cmd_follow, ONLINE_DO_FOLLOW, true, false, true, true, false, false, "", NULL},
    {"finalize", cmd_finalize, ONLINE_DO_FINALIZE, true, false, true, true, true, false,
     "nothing was renamed; finalize again when ready", NULL},
    {"rollback", cmd_rollback, ONLINE_DO_ROLLBACK, true, true, true, true, false, false,
     "rollback again goes on", NULL},
};

const online_cmd_t *
online_cmd_find (const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp (name, commands[i].name))
            return &commands[i];
    return NULL;
}
