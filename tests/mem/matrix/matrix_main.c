/* remodel-fault-matrix (matrix.h): the fault layer's matrices in-process,
 * on the in-memory server: finalize's and rollback's (matrix_switch.c,
 * with the kill's ways out, the lease and partitions: matrix_killed.c,
 * matrix_lease.c, matrix_partition.c), rollback --carry-writes'
 * (matrix_carry.c), --to-uri's run and finalize (matrix_to_uri.c) and
 * follow (matrix_follow.c). Every call of each command cut before it is
 * sent, cut after it, and the command killed at it (and, asked, answered
 * by the layer with a failure).
 * Prints PASS/FAIL lines (tests/run.sh counts them); exit 1 on a FAIL.
 *   remodel-fault-matrix --memsrv BIN --remodel BIN --plan FILE --tmp DIR
 *       [--matrix switch|carry|to-uri|follow|all] [--actions 'cut cut-after kill [fail]']
 *       [--only 'CMD CALL:ACTION'] [--lanes N] [--full]
 * --plan is the switch's (dumps/plans/embed-tasks.json); the carry writes
 * its own. --full (the campaign's): the actions with fail, and every
 * action at run --to-uri's calls (make check kills it at each, as
 * test_online_to_uri_kill.sh's campaign does). --only replays one point ('finalize any:12:cut', 'rollback
 * any:3:kill', 'carry update:2:cut-after', 'undo any:40:kill', 'twice
 * any:120:kill', 'forward any:9:kill', 'ask any:30:lease', 'partition
 * after:32:cut', 'follow any:7:cut'); with a last '*', every point whose
 * name starts so ('partition*': the partitions). The points are dealt to N
 * lanes (default 4), forked processes each with a server of its own, set
 * up as the first and checked to hold the same states. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matrix.h"

static void
usage (void)
{
    fprintf (stderr, "usage: remodel-fault-matrix --memsrv BIN --remodel BIN --plan FILE --tmp DIR "
                     "[--matrix switch|carry|to-uri|follow|all] [--actions 'cut cut-after kill [fail]'] "
                     "[--only 'CMD CALL:ACTION' or 'PREFIX*'] [--lanes N (1-16, default 4)] [--full]\n");
    exit (2);
}

int
main (int argc, char **argv)
{
    mx_opts_t o = {.lanes = 4};
    const char *actions = "cut cut-after kill", *matrix = "all";
    struct timespec t0, t1;
    bool ok = true;

    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (argv[i], "--full")) {
            o.full = true;
            actions = "cut cut-after kill fail";
            i--;
            continue;
        }
        if (!v)
            usage ();
        if (!strcmp (argv[i], "--memsrv"))
            o.memsrv = v;
        else if (!strcmp (argv[i], "--remodel"))
            o.remodel = v;
        else if (!strcmp (argv[i], "--plan"))
            o.plan = v;
        else if (!strcmp (argv[i], "--tmp"))
            o.tmp = v;
        else if (!strcmp (argv[i], "--only"))
            o.only = v;
        else if (!strcmp (argv[i], "--actions"))
            actions = v;
        else if (!strcmp (argv[i], "--matrix"))
            matrix = v;
        else if (!strcmp (argv[i], "--lanes"))
            o.lanes = atoi (v);
        else
            usage ();
    }
    if (!o.memsrv || !o.remodel || !o.plan || !o.tmp || o.lanes < 1 || o.lanes > 16 ||
        (strcmp (matrix, "switch") && strcmp (matrix, "carry") && strcmp (matrix, "to-uri") &&
         strcmp (matrix, "follow") && strcmp (matrix, "all")))
        usage ();
    for (const char *p = actions; *p && o.nacts < 4;) {
        int n = 0;
        while (*p == ' ')
            p++;
        while (p[n] && p[n] != ' ')
            n++;
        if (n)
            snprintf (o.acts[o.nacts++], sizeof o.acts[0], "%.*s", n, p);
        p += n;
    }
    clock_gettime (CLOCK_MONOTONIC, &t0);
    mongoc_init ();
    if (!strcmp (matrix, "switch") || !strcmp (matrix, "all"))
        ok = mx_switch_matrix (&o) && ok;
    if (!strcmp (matrix, "carry") || !strcmp (matrix, "all"))
        ok = mx_carry_matrix (&o) && ok;
    if (!strcmp (matrix, "to-uri") || !strcmp (matrix, "all"))
        ok = mx_to_uri_matrix (&o) && ok;
    if (!strcmp (matrix, "follow") || !strcmp (matrix, "all"))
        ok = mx_follow_matrix (&o) && ok;
    clock_gettime (CLOCK_MONOTONIC, &t1);
    fprintf (stderr, "# in-process: %.1f s, %d lanes: %d passed, %d failed\n",
             (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9, o.lanes,
             mx_passes, mx_failures);
    mongoc_cleanup ();
    return ok && !mx_failures ? 0 : 1;
}
