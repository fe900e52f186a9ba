/* remodel-online: the online companion's commands (online_cmd.h). Reached as
 * `remodel online COMMAND ...`; errors are printed once, here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"
#include "remodel/expr.h"
#include "online_cmd.h"
#include "online_interrupt.h"

static const char usage[] =
    "usage: remodel online run PLAN --uri URI [options]\n"
    "       remodel online status|pause|resume PLAN --uri URI [--json]\n"
    "       remodel online throttle|unthrottle PLAN --uri URI\n"
    "       remodel online set PLAN --uri URI [--batch-size N] [--max-rate N] [--max-lag D]\n"
    "       remodel online verify|sync|follow PLAN --uri URI [--sample N]\n"
    "       remodel online finalize PLAN --uri URI [--block-writes|--writes-stopped]\n"
    "                                 [--max-window D] [--full-verify] [--sample N]\n"
    "                                 [--validators warn|error]\n"
    "       remodel online rollback PLAN --uri URI\n"
    "\n"
    "Applies a plan to a live MongoDB server in batches, in _id order, with a\n"
    "checkpoint after each batch: run it again after a crash and it goes on\n"
    "where it stopped; a second run of the same plan at once is refused (a\n"
    "lease). Each batch is transformed by the same engine as remodel run, so\n"
    "the same documents. Side by side (the default), a step writes its results\n"
    "to new collections COLL_remodel_ID_STEP beside the sources (ID: the plan's\n"
    "id, its file's name and a digest of its path; status prints it), which stay\n"
    "untouched until finalize; with --in-place, a backfill (denormalize,\n"
    "summarize, set, unset, rename, version) rewrites the documents themselves,\n"
    "and a copy, move or delete writes into its \"to\" and removes from its\n"
    "\"from\" themselves, keeping what each replaced or removed in the state\n"
    "database (backup.ID.STEP).\n"
    "\n"
    "  status             each step's progress\n"
    "                     (--json: one JSON document: partitions, workers, throttle)\n"
    "  pause, resume      the running process waits at its next batch, or goes on\n"
    "  throttle, unthrottle\n"
    "                     the same, recorded as a throttle: status says by whom\n"
    "  set                a running run's --batch-size, --max-rate or --max-lag,\n"
    "                     taken at its next batch\n"
    "  verify             recompute every range from the sources as they are now\n"
    "                     and compare with the results; exit 1 if any differ\n"
    "  sync               the same, writing what differs (run it while the\n"
    "                     application writes; repeated syncs converge); where the\n"
    "                     run recorded a point in the change log (status: capture),\n"
    "                     only what the changes since then affect\n"
    "  follow             sync from the change log in rounds (--pause between them,\n"
    "                     default 1s) until stopped (Ctrl-C) or finalize takes over\n"
    "  finalize           side by side: a last sync and verify, then the results\n"
    "                     renamed over the sources (kept as COLL_remodel_ID_backup);\n"
    "                     run again after an interruption, it completes the switch\n"
    "  rollback           in place: the replaced documents back, where unchanged\n"
    "                     since; side by side: a switch (finished or interrupted)\n"
    "                     undone rename by rename, or with none the results dropped\n"
    "\n"
    "  --uri URI          the server (mongodb://...; default: $MONGODB_URI, which\n"
    "                     keeps credentials off the command line; never printed)\n"
    "  --to-uri URI       another deployment to move the data to, reshaped: the\n"
    "                     source (--uri) is only read, the plan's state and the\n"
    "                     results, under their final names, live there\n"
    "                     (docs/online.md, \"From one deployment to another\");\n"
    "                     default: $MONGODB_TO_URI\n"
    "  --config FILE      uri: and toUri: lines, as mongo-tools' --config: the\n"
    "                     connection strings off the command line\n"
    "  --drop             run --to-uri: drop a namespace the destination holds that\n"
    "                     the run would write (without it: refused, exit 1)\n"
    "  --nsInclude P, --nsExclude P\n"
    "                     run --to-uri: the namespaces copied as they are (those\n"
    "                     the plan does not write), by mongorestore's patterns\n"
    "  --in-place         backfill the namespaces themselves (see above); the\n"
    "                     other commands use the mode the plan's run recorded\n"
    "  --create-indexes   create the index a join fetches its partners by when\n"
    "                     missing (otherwise the run is refused, naming it)\n"
    "  --keep-indexes     run: the results get the sources' indexes as they were,\n"
    "                     not as the plan maps them (remembered by the plan)\n"
    "  --keep-before      run: keep the values a set overwrites and the documents\n"
    "                     a delete drops, so that rollback --carry-writes can\n"
    "                     give them back (remembered by the plan)\n"
    "  --allow-missing    run: a field a step names that no document of its\n"
    "                     namespace has passes (as \"allowMissing\": true); without\n"
    "                     it such a field, and a namespace not on the server, are\n"
    "                     refused before anything is written, as remodel run does\n"
    "  --batch-size N     documents per batch (default 1000)\n"
    "  --batch-time D     size batches to take about D each (from --batch-size)\n"
    "  --memory SIZE      a step's set of result _ids, kept where results do not\n"
    "                     name their source (bucketize, unbucketize, extract with\n"
    "                     childRefs): past SIZE (default 512M) it is sorted on disk;\n"
    "                     run reads a pass's partners once when they fit in it;\n"
    "                     also the bound of one document's expression values\n"
    "  --tmp DIR          where it goes then (default $TMPDIR or /tmp)\n"
    "  --pause D          pause between batches (default 0; --pause-ms, its\n"
    "                     older name, is taken too)\n"
    "  --max-rate N       at most N documents read per second (default: no limit)\n"
    "  --partitions N     run: split each driving collection into N _id ranges,\n"
    "                     each with its own checkpoint, recorded when the run\n"
    "                     reaches it (default: about one a million documents;\n"
    "                     with --workers, at least four a worker)\n"
    "  --workers N        run: N threads, each on its own connection, read the\n"
    "                     partitions nobody holds, each under its own lease;\n"
    "                     verify, sync: N threads rescan by the partitions the\n"
    "                     run recorded (one range where it recorded none)\n"
    "                     (default 1)\n"
    "  --join             run: join the run of the plan in progress (this host or\n"
    "                     another): its workers take the partitions nobody holds,\n"
    "                     and the plan's lease when its holder is gone\n"
    "  --max-lag D        wait while a replica set's replication lag (majority or\n"
    "                     any secondary's) is over D, or flow control is lagged\n"
    "                     (default 2s; 0: never); on to half of it\n"
    "  --max-latency D    a batch whose round trips take over D halves the batch\n"
    "                     size, which grows back slowly under D/2 (default: none)\n"
    "  --write-concern W  the writes' w: a number or majority (default: the URI's)\n"
    "  --retry-for D      retry network errors, failovers and restarts with backoff\n"
    "                     for up to D (default 10m), then stop\n"
    "  --log-format F     text (default) or json: one line per batch on stderr\n"
    "  --capabilities probe\n"
    "                     probe the server's capabilities (replace's field order,\n"
    "                     $in by index) as for a server remodel does not know\n"
    "  --state-db DB      where checkpoints, the lease and backups live (default remodel)\n"
    "  --dry-run          read and compute, count, write nothing (no state either)\n"
    "  --restart          start a plan over that changed since its run began\n"
    "  --force            rollback in place: restore the originals of documents\n"
    "                     changed since remodel wrote them too (those changes lost)\n"
    "  --forget           rollback in place: keep such documents as they are, drop\n"
    "                     their backups and forget the plan\n"
    "  --carry-writes     rollback after finalize: carry the application's writes\n"
    "                     to the new collections back into the originals, through\n"
    "                     the plan's inverse (embed, extract, rename, bucketize,\n"
    "                     and plans of those, composed)\n"
    "  --discard-writes-after-switch\n"
    "                     rollback after finalize: drop those writes\n"
    "  --block-writes     finalize: block writes with setUserWriteBlockMode (6.0+)\n"
    "  --writes-stopped   finalize: the application's writes have stopped (without\n"
    "                     it or --block-writes: prepare, and estimate the window)\n"
    "  --max-window D     finalize: stop before the switch, nothing switched (exit\n"
    "                     status 3), rather than keep the writes stopped past D\n"
    "                     (default 10s; 0: no bound)\n"
    "  --validators A     finalize: after the switch, give each collection the plan\n"
    "                     changed the validator remodel compile --format validators\n"
    "                     prints (validationAction A: warn or error); again on a\n"
    "                     finalized plan to change A; rollback removes them\n"
    "  --full-verify      finalize: with a change log too, the full check (checksums,\n"
    "                     a sync and a verify of every result)\n"
    "  --differences FILE verify: write every differing _id to FILE, one Extended\n"
    "                     JSON _id a line (replaced whole once the verify is done)\n"
    "  --sample N         verify: N drivers a pass, not every result; follow: the\n"
    "                     sample it verifies every 10 minutes; finalize with a\n"
    "                     change log: one verified now, even if one was before\n"
    "                     (default 1000)\n"
    "  --server-side      run: each step as the server's aggregation pipelines\n"
    "                     (remodel compile), range by range with the same\n"
    "                     checkpoints and lease; a step no pipeline expresses\n"
    "                     runs client-side\n"
    "  --server-version V --server-side: the stages and operators of MongoDB V\n"
    "                     only; run, verify, sync, finalize, follow: joins by\n"
    "                     V's $lookup rules (9.0 or later: SERVER-36681's)\n"
    "                     (default: the server's own version)\n"
    "  --quiet, -q        no progress\n"
    "\n"
    "D, a duration: 50ms, 2s, 10m, 1h; a bare number counts milliseconds\n"
    "(--retry-for: seconds), as these options always did. An option is named\n"
    "in full (no abbreviation); one a command does not take is refused (exit 2),\n"
    "naming both.\n";

/* A refusal of the command line: "remodel: error: online: ...", escaped
 * (the plan's path or a value may hold any byte), exit 2. */
static int
fail_usage (const char *fmt, const char *arg)
{
    char text[1024];
    snprintf (text, sizeof text, fmt, arg);
    online_say_warn (NULL, "error: online: %s (remodel online --help)", text);
    return 2;
}

/* The driver's own log, through the one voice (online_say_driver): errors
 * reach us as values and are printed once; its warnings (a server without
 * endSessions, as mongo-java-server) are noise unless REMODEL_ONLINE_DEBUG
 * is set. */
static void
driver_log (mongoc_log_level_t level, const char *domain, const char *message, void *ctx)
{
    (void) ctx;
    online_say_driver (level, domain, message);
}

/* After SIGINT or SIGTERM (online_signal.c): the one line that says where
 * the command stopped and whether the lease is free, read back from the
 * server (the command released it on its way out). */
static void
stopped_note (online_t *on, const online_cmd_t *c, const bson_error_t *err)
{
    char holder[200];
    int64_t left, epoch;
    bool gone, freed;
    bson_error_t why;

    online_lease_drop (on);
    freed = online_lease_status (on, holder, sizeof holder, &left, &epoch, &gone, &why) &&
            (!*holder || strncmp (holder, on->owner, strlen (on->owner)));
    online_say_warn (on, "%s: %s; %s; %s", c->name, err->message,
          freed ? "lease released"
                : "the lease could not be released (a run on this host takes it over at once)",
          c->on_stop);
}

/* The options as the layer read them (remodel/cli.h, whose table says
 * which command takes each), into o; false after printing a refusal. */
static bool
read_opts (const rm_cli_value_t *v, online_opts_t *o, bson_error_t *err)
{
    const char *wc = v[RM_OPT_WRITE_CONCERN].text;
    const char *caps;
    uint64_t w;

    o->uri = v[RM_OPT_URI].text;
    o->to_uri = v[RM_OPT_TO_URI].text;
    if (v[RM_OPT_CONFIG].given && !online_config_read (v[RM_OPT_CONFIG].text, o, err))
        return false;
    /* As MONGODB_URI for --uri: the destination's credentials off the
     * command line (and out of ps). */
    if (!o->to_uri && getenv ("MONGODB_TO_URI") && *getenv ("MONGODB_TO_URI"))
        o->to_uri = getenv ("MONGODB_TO_URI");
    o->drop = v[RM_OPT_DROP].given;
    if (!online_dest_opts (v, o, err))
        return false;
    if (v[RM_OPT_STATE_DB].given)
        o->state_db = v[RM_OPT_STATE_DB].text;
    if (!online_state_db_name_check (o->state_db, err))
        return false;
    if (v[RM_OPT_BATCH_SIZE].given)
        o->batch_size = (int64_t) v[RM_OPT_BATCH_SIZE].n;
    o->pause_ms = (int64_t) v[RM_OPT_PAUSE].n;
    o->max_rate = (int64_t) v[RM_OPT_MAX_RATE].n;
    o->partitions = (int64_t) v[RM_OPT_PARTITIONS].n;
    o->workers = v[RM_OPT_WORKERS].given ? (int64_t) v[RM_OPT_WORKERS].n : 1;
    o->join = v[RM_OPT_JOIN].given;
    if (o->join && (v[RM_OPT_RESTART].given || v[RM_OPT_DRY_RUN].given ||
                    v[RM_OPT_SERVER_SIDE].given || v[RM_OPT_PARTITIONS].given)) {
        rm_error_set (err, RM_ERR_USAGE, "--join joins a run in progress as it began: without "
                      "--restart, --dry-run, --server-side or --partitions");
        return false;
    }
    if (o->workers > 1 && v[RM_OPT_SAMPLE].given) {
        rm_error_set (err, RM_ERR_USAGE, "--workers and --sample: one or the other (--workers "
                      "splits a full rescan by the run's partitions; --sample reads a sample)");
        return false;
    }
    if (v[RM_OPT_MAX_LAG].given)
        o->max_lag_ms = (int64_t) v[RM_OPT_MAX_LAG].n;
    o->max_latency_ms = (int64_t) v[RM_OPT_MAX_LATENCY].n;
    o->json = v[RM_OPT_JSON].given;
    /* The variable as documented before the option (remodel-online(1)). */
    caps = getenv ("REMODEL_ONLINE_CAPS");
    o->probe_caps = v[RM_OPT_CAPABILITIES].given || (caps && !strcmp (caps, "probe"));
    o->given_batch_size = v[RM_OPT_BATCH_SIZE].given;
    o->given_max_rate = v[RM_OPT_MAX_RATE].given;
    o->given_max_lag = v[RM_OPT_MAX_LAG].given;
    o->batch_time_ms = (int64_t) v[RM_OPT_BATCH_TIME].n;
    if (v[RM_OPT_RETRY_FOR].given)
        o->retry_for_ms = (int64_t) v[RM_OPT_RETRY_FOR].n;
    o->log_json = v[RM_OPT_LOG_FORMAT].given && v[RM_OPT_LOG_FORMAT].n == 1;
    o->dry_run = v[RM_OPT_DRY_RUN].given;
    o->restart = v[RM_OPT_RESTART].given;
    o->force = v[RM_OPT_FORCE].given;
    o->forget = v[RM_OPT_FORGET].given;
    o->discard_writes = v[RM_OPT_DISCARD_WRITES].given;
    o->carry_writes = v[RM_OPT_CARRY_WRITES].given;
    if (o->discard_writes && o->carry_writes) {
        rm_error_set (err, RM_ERR_USAGE, "--carry-writes and --discard-writes-after-switch: one "
                      "or the other (the first keeps the writes made after the switch, the "
                      "second drops them)");
        return false;
    }
    if (o->force && o->forget) {
        rm_error_set (err, RM_ERR_USAGE, "--force and --forget: one or the other (--force "
                      "restores the originals, --forget keeps the documents as they are)");
        return false;
    }
    o->in_place = v[RM_OPT_IN_PLACE].given;
    o->create_indexes = v[RM_OPT_CREATE_INDEXES].given;
    o->keep_indexes = v[RM_OPT_KEEP_INDEXES].given;
    o->keep_before = v[RM_OPT_KEEP_BEFORE].given;
    o->allow_missing = v[RM_OPT_ALLOW_MISSING].given;
    o->writes_stopped = v[RM_OPT_WRITES_STOPPED].given;
    o->full_verify = v[RM_OPT_FULL_VERIFY].given;
    o->validators = v[RM_OPT_VALIDATORS].given ? (v[RM_OPT_VALIDATORS].n ? "error" : "warn") : NULL;
    if (v[RM_OPT_MAX_WINDOW].given)
        o->max_window_ms = (int64_t) v[RM_OPT_MAX_WINDOW].n;
    if (v[RM_OPT_SAMPLE].given)
        o->sample = v[RM_OPT_SAMPLE].n;
    o->block_writes = v[RM_OPT_BLOCK_WRITES].given;
    o->server_side = v[RM_OPT_SERVER_SIDE].given;
    o->quiet = v[RM_OPT_QUIET].given;
    o->memory = v[RM_OPT_MEMORY].given ? (size_t) v[RM_OPT_MEMORY].n : (size_t) 512 << 20;
    /* It bounds one document's expression values too, as offline. */
    rm_expr_set_memory (o->memory);
    o->tmpdir = v[RM_OPT_TMP].text;
    o->differences = v[RM_OPT_DIFFERENCES].text;
    if (v[RM_OPT_SERVER_VERSION].given) {
        if (!rm_compile_version_option (v[RM_OPT_SERVER_VERSION].text, &o->server_version, err))
            return false;
        o->server_version_given = true;
    }
    if (wc) {
        bool majority = !strcmp (wc, "majority");
        if (!majority && !(rm_cli_parse_count (wc, &w) && w < 100)) {
            rm_error_set (err, RM_ERR_USAGE, "--write-concern: expected a number (below 100) or "
                          "majority, got \"%s\"", wc);
            return false;
        }
        o->write_concern = mongoc_write_concern_new ();
        if (majority)
            mongoc_write_concern_set_wmajority (o->write_concern, 0);
        else
            mongoc_write_concern_set_w (o->write_concern, (int32_t) w);
    }
    return true;
}

/* The command line into o and *c (its row in the command table): the
 * status to exit with (2 a refusal, said; 0 after --help), or -1 to run
 * the command. */
static int
parse (int argc, char **argv, online_opts_t *o, const online_cmd_t **c)
{
    rm_cli_args_t args;
    rm_cmd_t cmd_id;
    char cmd_name[64];
    bson_error_t err = {0};
    const char *cmd;

    if (argc < 2 || !strcmp (argv[1], "--help") || !strcmp (argv[1], "-h")) {
        online_say_usage (usage, argc >= 2);
        return argc < 2 ? 2 : 0;
    }
    cmd = argv[1];
    /* The option layer knows these as "online X" (compile is remodel's). */
    snprintf (cmd_name, sizeof cmd_name, "online %s", cmd);
    *c = online_cmd_find (cmd);
    if (!*c || !rm_cli_command_find (cmd_name, &cmd_id))
        return fail_usage ("unknown command \"%s\"", cmd);
    if (!rm_cli_parse (cmd_id, argc, argv, 2, &args, &err) || !read_opts (args.v, o, &err)) {
        online_say_error (NULL, &err);
        rm_cli_args_destroy (&args);
        return 2;
    }
    if (args.v[RM_OPT_HELP].given) {
        online_say_usage (usage, true);
        rm_cli_args_destroy (&args);
        return 0;
    }
    if (args.n_pos != 1) {
        rm_cli_args_destroy (&args);
        return fail_usage ("%s takes one plan file", cmd);
    }
    o->plan_path = args.pos[0];
    o->command = (*c)->name;
    o->switching = (*c)->switching;
    o->starts = (*c)->starts;
    rm_cli_args_destroy (&args); /* o keeps only argv's strings */
    if (o->dry_run && !(*c)->dry_run)
        return fail_usage ("--dry-run: %s has no dry run (run, verify and sync have)", cmd);
    /* The environment keeps credentials off the command line (and out of
     * ps). */
    if (!o->uri)
        o->uri = getenv ("MONGODB_URI");
    if (!o->uri || !*o->uri)
        return fail_usage ("%s needs --uri (or uri in --config's file, or MONGODB_URI in the "
                           "environment)", cmd);
    return -1;
}

/* The status by one map, as remodel's (a refusal 2), from the command's
 * rc and err; the error said once. */
static int
finish (online_t *on, const online_cmd_t *c, int rc, bson_error_t *err)
{
    if (rc && err->domain == RM_ERROR_DOMAIN && err->code == RM_ERR_INTERRUPTED &&
        online_stop_requested ()) {
        rc = 128 + online_stop_requested (); /* as a shell reports it: 130, 143 */
        stopped_note (on, c, err);
    } else if (rc && err->code) {
        rc = rm_cli_exit_status (err);
        online_say_error (on, err);
    } else if (!rc && online_stop_requested () && c->life != ONLINE_DO_FOLLOW) {
        /* It came when nothing was left to stop between (a switch's renames
         * are never left half done); follow stops on it by design. */
        online_say_note (on, "%s: %s came as it was finishing: it completed first", c->name,
                         online_stop_name ());
    }
    return rc;
}

/* The connections, for begin: true when made. A connection whose
 * buildInfo went unanswered (a cut as it connected: online_caps.c keeps
 * the conservative row and says nothing) has no identity for the pair's
 * record to match; follow, which retries, connects again while it may,
 * then goes on with what it has. A --to-uri run, which records that
 * identity, connects again too, and fails rather than record none (the
 * run again would be refused as another pair). */
static bool
connect_once (online_t *on, online_opts_t *o, const online_cmd_t *c, online_retry_t *r,
              bson_error_t *err)
{
    bool ok = o->to_uri ? online_pair_connect (on, o, err) : online_connect (on, o, err);
    bool unknown;

    /* Before anything is written (the capabilities' probe writes in the
     * state database): a run's records go into remodel's own database
     * (online_state_db.c), and --to-uri is not the source under another
     * name (online_pair_same.c). */
    ok = ok && (!o->starts || o->dry_run || online_state_db_holdings_check (on, err)) &&
         (!o->to_uri || online_pair_distinct (on, err));
    if (ok)
        online_caps_probe (on);
    unknown = ok && (!on->run->caps.known || (on->run->pair && !on->run->pair->caps.known));

    bool records = o->to_uri && o->starts && !o->dry_run;
    if (!unknown || (c->life != ONLINE_DO_FOLLOW && !records))
        return ok;
    if (online_stop_requested ()) {
        if (!records)
            return ok;
        rm_error_set (err, RM_ERR_IO, "%s: the server did not answer buildInfo as it connected",
                      !on->run->caps.known ? on->run->where : on->run->pair->where);
        return false;
    }
    on->transient = true;
    rm_error_set (err, RM_ERR_IO, "%s: the server did not answer buildInfo as it connected",
                  !on->run->caps.known ? on->run->where : on->run->pair->where);
    if (!online_retry (on, r, err)) {
        if (records)
            return false; /* err: the retries' last word */
        memset (err, 0, sizeof *err);
        return true;
    }
    memset (err, 0, sizeof *err); /* waited: begin connects again */
    online_pair_close (on);
    online_close (on);
    return false;
}

/* The connections and the checks every command makes before its own.
 * follow, which runs unattended, retries a transient error here (a
 * server restarting as it starts) for up to --retry-for, as it does in
 * its rounds (online_follow_cmd.c); a connection that failed is made
 * again, one that answered is reused (the driver reconnects it). */
static bool
begin (online_t *on, online_opts_t *o, const online_cmd_t *c, bson_error_t *err)
{
    online_retry_t r = {0, 0};
    bool connected = false;

    on->own_run->o = o; /* online_retry's --retry-for, before a connection fills it */
    if (!online_state_db_plan_check (on, err))
        return false;
    for (;;) {
        on->transient = false;
        memset (err, 0, sizeof *err);
        if (!connected && !(connected = connect_once (on, o, c, &r, err)) && !*err->message)
            continue; /* made again after an unanswered buildInfo, waited already */
        /* --to-uri: another pair, or a namespace held, refused
         * (online_dest.c); a contradicting --in-place too (2, by finish). */
        if (connected && (!o->to_uri || online_dest_check (on, c->life, c->starts, err)) &&
            (!c->mode || online_plan_mode (on, o, c->starts, err)))
            return true;
        if (c->life != ONLINE_DO_FOLLOW || online_stop_requested () || !online_retry (on, &r, err))
            return false;
        if (!connected) {
            online_pair_close (on);
            online_close (on);
        }
    }
}

int
main (int argc, char **argv)
{
    online_opts_t o = {.state_db = "remodel", .batch_size = 1000, .retry_for_ms = 600000,
                       .max_lag_ms = 2000, .max_window_ms = 10000};
    const online_cmd_t *c = NULL;
    online_run_t run;       /* what the command's threads share (online.h) */
    online_t on;            /* its own connection and counts */
    bson_error_t err = {0};
    int rc;

    online_say_start (); /* the trace's clock */
    rc = parse (argc, argv, &o, &c);

    if (rc >= 0) {
        if (o.write_concern)
            mongoc_write_concern_destroy (o.write_concern);
        bson_free (o.config_uri);
        bson_free (o.config_to_uri);
        return rc;
    }
    /* The commands that hold the lease stop cleanly on SIGINT and SIGTERM;
     * the others (they write nothing) end at once, as any program. */
    if (c->signals)
        online_signal_install ();
    mongoc_log_set_handler (driver_log, NULL);
    mongoc_init ();
    online_init (&on, &run);
    if (!online_plan_load (&on, &o, &err) || !begin (&on, &o, c, &err))
        rc = 1; /* the status: finish's */
    else
        rc = c->fn (&on, c, &err);
    rc = finish (&on, c, rc, &err);
    /* A lease still held (an early return) is released, not left to
     * expire: here, where the commands release it, not in the connection
     * below them. */
    online_lease_drop (&on);
    online_pair_close (&on);
    online_close (&on);
    online_run_destroy (&run);
    if (o.ns_select)
        rm_nsselect_destroy (o.ns_select);
    bson_free (o.config_uri);
    bson_free (o.config_to_uri);
    if (o.write_concern)
        mongoc_write_concern_destroy (o.write_concern);
    /* A call left running by a stop or at finalize's bound is still in
     * the driver (online_interrupt.h): the cleanup would free what it
     * reads, so it waits a second for the call, then is skipped and the
     * process's end stops the call. */
    if (online_calls_settle (1000))
        mongoc_cleanup ();
    int64_t exit_wait = online_hook_ms (ONLINE_HOOK_EXIT_WAIT_MS);
    if (exit_wait > 0)
        online_calls_settle (exit_wait);
    return rc;
}
