/* remodel-online: the online companion's commands (online.h). Reached as
 * `remodel online COMMAND ...`; errors are printed once, here. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online.h"

static const char usage[] =
    "usage: remodel online run PLAN --uri URI [options]\n"
    "       remodel online status PLAN --uri URI [--state-db DB]\n"
    "\n"
    "Applies a plan to a live MongoDB server in batches, in _id order, with a\n"
    "checkpoint after each batch: run it again after a crash and it goes on\n"
    "where it stopped; a second run of the same plan at once is refused (a\n"
    "lease). Each batch is transformed by the same engine as remodel run, so\n"
    "the same documents. Side by side (the default), a step writes its results\n"
    "to new collections COLL.remodel.PLAN.STEP beside the sources, which stay\n"
    "untouched; with --in-place, a backfill (denormalize, summarize, set, unset,\n"
    "rename, version) rewrites the documents themselves, keeping the originals\n"
    "of those it changes in the state database (backup.PLAN.STEP).\n"
    "\n"
    "  --uri URI          the server (mongodb://...; credentials are never printed)\n"
    "  --in-place         backfill the namespaces themselves (see above)\n"
    "  --create-indexes   create the index a join fetches its partners by when\n"
    "                     missing (otherwise the run is refused, naming it)\n"
    "  --batch-size N     documents per batch (default 1000)\n"
    "  --pause-ms MS      pause between batches (default 0)\n"
    "  --max-rate N       at most N documents read per second (default: no limit)\n"
    "  --state-db DB      where checkpoints, the lease and backups live (default remodel)\n"
    "  --dry-run          read and compute, count, write nothing (no state either)\n"
    "  --restart          start a plan over that changed since its run began\n"
    "  --quiet, -q        no progress\n";

static int
fail_usage (const char *fmt, const char *arg)
{
    fprintf (stderr, "remodel: error: online: ");
    fprintf (stderr, fmt, arg);
    fprintf (stderr, " (remodel online --help)\n");
    return 2;
}

static bool
parse_count (const char *s, int64_t *out)
{
    char *end;
    long long v;
    if (!s || !*s || strspn (s, "0123456789") != strlen (s))
        return false;
    v = strtoll (s, &end, 10);
    *out = v;
    return v >= 0 && !*end;
}

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
           O_INDEXES, O_HELP };
    static const struct option longopts[] = {
        {"uri", required_argument, NULL, O_URI},
        {"batch-size", required_argument, NULL, O_BATCH},
        {"pause-ms", required_argument, NULL, O_PAUSE},
        {"max-rate", required_argument, NULL, O_RATE},
        {"state-db", required_argument, NULL, O_STATE},
        {"dry-run", no_argument, NULL, O_DRY},
        {"restart", no_argument, NULL, O_RESTART},
        {"in-place", no_argument, NULL, O_INPLACE},
        {"create-indexes", no_argument, NULL, O_INDEXES},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    online_opts_t o = {.state_db = "remodel", .batch_size = 1000};
    online_t on;
    bson_error_t err;
    const char *cmd;
    int c, rc;

    if (argc < 2 || !strcmp (argv[1], "--help") || !strcmp (argv[1], "-h")) {
        fputs (usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    cmd = argv[1];
    if (strcmp (cmd, "run") != 0 && strcmp (cmd, "status") != 0)
        return fail_usage ("unknown command \"%s\"", cmd);
    optind = 2;
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_URI: o.uri = optarg; break;
        case O_STATE: o.state_db = optarg; break;
        case O_DRY: o.dry_run = true; break;
        case O_RESTART: o.restart = true; break;
        case O_INPLACE: o.in_place = true; break;
        case O_INDEXES: o.create_indexes = true; break;
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
    if (!o.uri)
        return fail_usage ("%s needs --uri", cmd);

    mongoc_log_set_handler (driver_log, NULL);
    mongoc_init ();
    memset (&on, 0, sizeof on);
    if (!online_plan_load (&on, &o, &err) || !online_connect (&on, &o, &err)) {
        rc = err.code == RM_ERR_USAGE ? 2 : 1;
    } else if (!strcmp (cmd, "status")) {
        rc = online_status (&on, &err) < 0 ? 1 : 0;
    } else {
        rc = online_run (&on, &err) ? 0 : 1;
    }
    /* A refusal (a plan or option at fault) is 2, as for remodel run. */
    if (rc && (err.code == RM_ERR_USAGE || err.code == RM_ERR_UNSUPPORTED))
        rc = 2;
    if (rc)
        fprintf (stderr, "remodel: error: %s\n", err.message);
    online_close (&on);
    mongoc_cleanup ();
    return rc;
}
