/* remodel-online: the online companion's commands (online.h). Reached as
 * `remodel online COMMAND ...`; errors are printed once, here. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online.h"

static const char usage[] =
    "usage: remodel online run PLAN --uri URI [options]\n"
    "       remodel online status|pause|resume PLAN --uri URI\n"
    "       remodel online verify|sync PLAN --uri URI [--in-place]\n"
    "       remodel online finalize PLAN --uri URI --block-writes|--writes-stopped\n"
    "       remodel online rollback PLAN --uri URI [--in-place]\n"
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
    "keeping what it replaced in the state database (backup.ID.STEP).\n"
    "\n"
    "  status             each step's progress\n"
    "  pause, resume      the running process waits at its next batch, or goes on\n"
    "  verify             recompute every range from the sources as they are now\n"
    "                     and compare with the results; exit 1 if any differ\n"
    "  sync               the same, writing what differs (run it while the\n"
    "                     application writes; repeated syncs converge)\n"
    "  finalize           side by side: a last sync and verify, then the results\n"
    "                     renamed over the sources (kept as COLL_remodel_ID_backup);\n"
    "                     run again after an interruption, it completes the switch\n"
    "  rollback           in place: the replaced documents back, where unchanged\n"
    "                     since; side by side: a switch (finished or interrupted)\n"
    "                     undone rename by rename, or with none the results dropped\n"
    "\n"
    "  --uri URI          the server (mongodb://...; default: $MONGODB_URI, which\n"
    "                     keeps credentials off the command line; never printed)\n"
    "  --in-place         backfill the namespaces themselves (see above)\n"
    "  --create-indexes   create the index a join fetches its partners by when\n"
    "                     missing (otherwise the run is refused, naming it)\n"
    "  --batch-size N     documents per batch (default 1000)\n"
    "  --batch-time MS    size batches to take about MS each (from --batch-size)\n"
    "  --pause-ms MS      pause between batches (default 0)\n"
    "  --max-rate N       at most N documents read per second (default: no limit)\n"
    "  --write-concern W  the writes' w: a number or majority (default: the URI's)\n"
    "  --retry-for S      retry network errors, failovers and restarts with backoff\n"
    "                     for up to S seconds (default 600), then stop\n"
    "  --log-format F     text (default) or json: one line per batch on stderr\n"
    "  --state-db DB      where checkpoints, the lease and backups live (default remodel)\n"
    "  --dry-run          read and compute, count, write nothing (no state either)\n"
    "  --restart          start a plan over that changed since its run began\n"
    "  --block-writes     finalize: block writes with setUserWriteBlockMode (6.0+)\n"
    "  --writes-stopped   finalize: the application's writes have stopped\n"
    "  --server-side      run: each step as the server's aggregation pipelines\n"
    "                     (remodel compile), range by range with the same\n"
    "                     checkpoints and lease; a step no pipeline expresses\n"
    "                     runs client-side\n"
    "  --server-version V --server-side: the stages and operators of MongoDB V\n"
    "                     only (default: the server's own version)\n"
    "  --quiet, -q        no progress\n"
    "\n"
    "An option a command does not take is refused (exit 2), naming both.\n";

static int
fail_usage (const char *fmt, const char *arg)
{
    fprintf (stderr, "remodel: error: online: ");
    fprintf (stderr, fmt, arg);
    fprintf (stderr, " (remodel online --help)\n");
    return 2;
}

/* A count: digits only, and no more than an int64_t holds (strtoll
 * saturates at LLONG_MAX with ERANGE, which is refused, not taken). */
static bool
parse_count (const char *s, int64_t *out)
{
    char *end;
    long long v;
    if (!s || !*s || strspn (s, "0123456789") != strlen (s))
        return false;
    errno = 0;
    v = strtoll (s, &end, 10);
    if (errno == ERANGE || *end)
        return false;
    *out = v;
    return true;
}

/* The commands, as bits, and which of them each option is for: an option
 * given to a command that does not take it is refused, naming both. */
enum {
    C_RUN = 1 << 0, C_STATUS = 1 << 1, C_VERIFY = 1 << 2, C_SYNC = 1 << 3,
    C_FINALIZE = 1 << 4, C_ROLLBACK = 1 << 5, C_PAUSE = 1 << 6, C_RESUME = 1 << 7,
    C_SERVER = C_RUN | C_STATUS | C_VERIFY | C_SYNC | C_FINALIZE | C_ROLLBACK | C_PAUSE | C_RESUME,
    /* what reads the sources in batches: finalize's last sync too */
    C_BATCHES = C_RUN | C_VERIFY | C_SYNC | C_FINALIZE,
};
static const char *const commands[] = {"run", "status", "verify", "sync", "finalize",
                                       "rollback", "pause", "resume", NULL};

/* The driver's own log: errors reach us as values and are printed once;
 * its warnings (a server without endSessions, as mongo-java-server) are
 * noise unless REMODEL_ONLINE_DEBUG is set. */
static void
driver_log (mongoc_log_level_t level, const char *domain, const char *message, void *ctx)
{
    (void) ctx;
    if (level <= MONGOC_LOG_LEVEL_ERROR || getenv ("REMODEL_ONLINE_DEBUG"))
        mongoc_log_default_handler (level, domain, message, NULL);
}

int
main (int argc, char **argv)
{
    enum { O_URI = 256, O_BATCH, O_PAUSE, O_RATE, O_STATE, O_DRY, O_RESTART, O_INPLACE,
           O_INDEXES, O_WC, O_BTIME, O_LOG, O_RETRY, O_STOPPED, O_BLOCK, O_HELP, O_SVERSION,
           O_SERVERSIDE };
    static const struct option longopts[] = {
        /* Keep in step with takes[] below. */
        {"uri", required_argument, NULL, O_URI},
        {"batch-size", required_argument, NULL, O_BATCH},
        {"pause-ms", required_argument, NULL, O_PAUSE},
        {"max-rate", required_argument, NULL, O_RATE},
        {"state-db", required_argument, NULL, O_STATE},
        {"dry-run", no_argument, NULL, O_DRY},
        {"restart", no_argument, NULL, O_RESTART},
        {"in-place", no_argument, NULL, O_INPLACE},
        {"create-indexes", no_argument, NULL, O_INDEXES},
        {"write-concern", required_argument, NULL, O_WC},
        {"batch-time", required_argument, NULL, O_BTIME},
        {"log-format", required_argument, NULL, O_LOG},
        {"retry-for", required_argument, NULL, O_RETRY},
        {"writes-stopped", no_argument, NULL, O_STOPPED},
        {"block-writes", no_argument, NULL, O_BLOCK},
        {"server-version", required_argument, NULL, O_SVERSION},
        {"server-side", no_argument, NULL, O_SERVERSIDE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    /* Which commands take each option (by longopts' order; --dry-run is
     * taken by all to refuse it with its own reason below). */
    static const int takes[] = {
        C_SERVER,                        /* --uri */
        C_BATCHES,                       /* --batch-size */
        C_BATCHES,                       /* --pause-ms */
        C_BATCHES,                       /* --max-rate */
        C_SERVER,                        /* --state-db */
        C_SERVER,                        /* --dry-run */
        C_RUN | C_VERIFY | C_SYNC,       /* --restart */
        C_SERVER,                        /* --in-place */
        C_BATCHES,                       /* --create-indexes */
        C_RUN | C_SYNC | C_FINALIZE | C_ROLLBACK, /* --write-concern */
        C_BATCHES,                       /* --batch-time */
        C_BATCHES,                       /* --log-format */
        C_SERVER,                        /* --retry-for */
        C_FINALIZE,                      /* --writes-stopped */
        C_FINALIZE,                      /* --block-writes */
        C_RUN,                           /* --server-version */
        C_RUN,                           /* --server-side */
        C_SERVER,                        /* --quiet */
        C_SERVER,                        /* --help */
    };
    _Static_assert (sizeof takes / sizeof takes[0] + 1 == sizeof longopts / sizeof longopts[0],
                    "an option without its commands");
    online_opts_t o = {.state_db = "remodel", .batch_size = 1000, .retry_for_ms = 600000};
    int64_t n;
    bool known = false;
    online_t on;
    bson_error_t err = {0};
    const char *cmd;
    int c, rc, idx, cmd_bit = 0;

    if (argc < 2 || !strcmp (argv[1], "--help") || !strcmp (argv[1], "-h")) {
        fputs (usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    cmd = argv[1];
    for (size_t i = 0; commands[i]; i++)
        if (strcmp (cmd, commands[i]) == 0) {
            known = true;
            cmd_bit = 1 << i;
        }
    if (!known)
        return fail_usage ("unknown command \"%s\"", cmd);
    optind = 2;
    opterr = 0;
    while ((idx = -1, c = getopt_long (argc, argv, ":qh", longopts, &idx)) != -1) {
        /* -q and -h are --quiet and --help. */
        for (size_t i = 0; idx < 0 && (c == 'q' || c == 'h') && longopts[i].name; i++)
            if (longopts[i].val == (c == 'q' ? 'q' : O_HELP))
                idx = (int) i;
        if (idx >= 0 && !(takes[idx] & cmd_bit)) {
            fprintf (stderr, "remodel: error: online: %s does not take --%s (remodel online "
                     "--help)\n", cmd, longopts[idx].name);
            return 2;
        }
        switch (c) {
        case O_URI: o.uri = optarg; break;
        case O_STATE: o.state_db = optarg; break;
        case O_DRY: o.dry_run = true; break;
        case O_RESTART: o.restart = true; break;
        case O_INPLACE: o.in_place = true; break;
        case O_INDEXES: o.create_indexes = true; break;
        case O_STOPPED: o.writes_stopped = true; break;
        case O_BLOCK: o.block_writes = true; break;
        case O_SERVERSIDE: o.server_side = true; break;
        case O_SVERSION:
            if (!rm_compile_version_parse (optarg, &o.server_version))
                return fail_usage ("--server-version: \"%s\" is not a MongoDB version like 5.0 "
                                   "(3.6 or later)", optarg);
            o.server_version_given = true;
            break;
        case O_WC:
            if (!o.write_concern)
                o.write_concern = mongoc_write_concern_new ();
            if (!strcmp (optarg, "majority"))
                mongoc_write_concern_set_wmajority (o.write_concern, 0);
            else if (parse_count (optarg, &n) && n < 100)
                mongoc_write_concern_set_w (o.write_concern, (int32_t) n);
            else
                return fail_usage ("--write-concern: \"%s\" is not a number or majority", optarg);
            break;
        case O_BTIME:
            if (!parse_count (optarg, &o.batch_time_ms) || o.batch_time_ms < 1)
                return fail_usage ("--batch-time: \"%s\" is not a count of milliseconds", optarg);
            break;
        case O_RETRY:
            if (!parse_count (optarg, &n) || n > INT64_MAX / 1000)
                return fail_usage ("--retry-for: \"%s\" is not a count of seconds", optarg);
            o.retry_for_ms = n * 1000;
            break;
        case O_LOG:
            if (strcmp (optarg, "json") && strcmp (optarg, "text"))
                return fail_usage ("--log-format: \"%s\" is not text or json", optarg);
            o.log_json = !strcmp (optarg, "json");
            break;
        case 'q': o.quiet = true; break;
        case 'h':
        case O_HELP: fputs (usage, stdout); return 0;
        case O_BATCH:
            if (!parse_count (optarg, &o.batch_size) || o.batch_size < 1)
                return fail_usage ("--batch-size: \"%s\" is not a count of at least 1", optarg);
            break;
        case O_PAUSE:
            if (!parse_count (optarg, &o.pause_ms))
                return fail_usage ("--pause-ms: \"%s\" is not a count of milliseconds", optarg);
            break;
        case O_RATE:
            if (!parse_count (optarg, &o.max_rate))
                return fail_usage ("--max-rate: \"%s\" is not a count of documents", optarg);
            break;
        case ':': return fail_usage ("option \"%s\" needs a value", argv[optind - 1]);
        default: return fail_usage ("unknown option \"%s\"", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return fail_usage ("%s takes one plan file", cmd);
    o.plan_path = argv[optind];
    /* These write only state or switch collections: a dry run of them
     * would still write, so there is none. */
    if (o.dry_run && (!strcmp (cmd, "finalize") || !strcmp (cmd, "rollback") ||
                      !strcmp (cmd, "pause") || !strcmp (cmd, "resume")))
        return fail_usage ("--dry-run: %s has no dry run (run, verify and sync have)", cmd);
    /* The environment keeps credentials off the command line (and out of
     * ps). */
    if (!o.uri)
        o.uri = getenv ("MONGODB_URI");
    if (!o.uri || !*o.uri)
        return fail_usage ("%s needs --uri (or MONGODB_URI in the environment)", cmd);

    mongoc_log_set_handler (driver_log, NULL);
    mongoc_init ();
    memset (&on, 0, sizeof on);
    if (!online_plan_load (&on, &o, &err) || !online_connect (&on, &o, &err)) {
        rc = err.code == RM_ERR_USAGE ? 2 : 1;
    } else if (!strcmp (cmd, "status")) {
        rc = online_status (&on, &err) < 0 ? 1 : 0;
    } else if (!strcmp (cmd, "pause") || !strcmp (cmd, "resume")) {
        rc = online_plan_set (&on, "paused", !strcmp (cmd, "pause"), &err) ? 0 : 1;
        if (!rc && !o.quiet)
            fprintf (stderr, "remodel: plan %s %s\n", on.names.name,
                     !strcmp (cmd, "pause") ? "paused (a run waits at its next batch)" : "resumed");
    } else if (!strcmp (cmd, "verify") || !strcmp (cmd, "sync")) {
        bool sync = !strcmp (cmd, "sync");
        n = online_apply (&on, sync ? ONLINE_SYNC : ONLINE_VERIFY, &err);
        rc = n < 0 ? 1 : (!sync && n > 0) ? 1 : 0;
        if (n == 0 && !o.quiet)
            fprintf (stderr, "remodel: %s: plan %s: every result as the sources make it\n", cmd,
                     on.names.name);
        else if (n > 0 && !o.quiet)
            fprintf (stderr, "remodel: %s: plan %s: %lld result(s) %s\n", cmd, on.names.name,
                     (long long) n,
                     !sync ? "differ" : o.dry_run ? "would be rewritten or removed"
                                                  : "rewritten or removed");
        if (!sync && n > 0)
            err.code = 0; /* said above; no error line */
    } else if (!strcmp (cmd, "finalize")) {
        rc = online_finalize (&on, &err) ? 0 : 1;
    } else if (!strcmp (cmd, "rollback")) {
        rc = online_rollback (&on, &err) ? 0 : 1;
    } else {
        rc = online_apply (&on, ONLINE_RUN, &err) < 0 ? 1 : 0;
    }
    /* A refusal (a plan or option at fault) is 2, as for remodel run. */
    if (rc && (err.code == RM_ERR_USAGE || err.code == RM_ERR_UNSUPPORTED))
        rc = 2;
    if (rc && err.code)
        fprintf (stderr, "remodel: error: %s\n", err.message);
    online_close (&on);
    if (o.write_concern)
        mongoc_write_concern_destroy (o.write_concern);
    mongoc_cleanup ();
    return rc;
}
