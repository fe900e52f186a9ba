/* remodel-fault-matrix (matrix.h): every server call of `online finalize`
 * and of `online rollback`, each cut before it is sent, cut after it (the
 * server applied it, the reply is lost) and the command killed at it
 * (SIGKILL while the fault layer holds the call), on the in-memory server.
 *
 * References first, from clean runs on the same data: the run's state,
 * finalize's, rollback's after it, a second rollback's (the plan
 * forgotten); checked against the data as filled and against the offline
 * engine's output (remodel run over the same documents as a dump). Then
 * per point, the server reset to its snapshot:
 *   finalize with the fault; finalize again when it failed (exit 0, or
 *   exit 2 "is finalized already"); the state is the clean finalize's,
 *   every crm document byte for byte, no collection else (no probe, no
 *   temporary), the state database's collections the same; then rollback
 *   gives the clean rollback's state;
 *   rollback (after a clean finalize) with the fault; when it failed,
 *   rollback again: the clean rollback's state, or the second rollback's
 *   where the faulted one had completed (its record settled) and only its
 *   reply was lost.
 * Prints PASS/FAIL lines (tests/run.sh counts them).
 *   remodel-fault-matrix --memsrv BIN --remodel BIN --plan FILE --tmp DIR
 *                        [--only 'finalize any:12:cut'] [--actions 'cut cut-after kill']
 *                        [--lanes N]
 * The points are dealt to N lanes (default 4), forked processes each with
 * a server of its own, set up as the first and checked to hold the same
 * states. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"

static int passes, failures;
static mx_server_t S;
static mx_target_t T;
static mx_state_t s_run, s_fin, s_rb, s_gone;
static const char *only;

static void
say (bool ok, const char *fmt, ...)
{
    va_list ap;
    printf ("%s ", ok ? "PASS" : "FAIL");
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("\n");
    fflush (stdout);
    ok ? passes++ : failures++;
}

/* The last lines of a command's standard error, to ours, under a failure. */
static void
tail (const mx_run_t *r)
{
    const char *p = r->err + strlen (r->err);
    int lines = 0;
    while (p > r->err && lines < 8)
        if (*--p == '\n')
            lines++;
    fprintf (stderr, "  | %s\n", p);
}

static bool
restore (const char *snap, const char *label)
{
    char why[512];
    if (mx_server_cmd (&S, "memRestore", snap, why, sizeof why))
        return true;
    say (false, "%s: %s", label, why);
    return false;
}

/* The state now against want: a PASS or FAIL line named label: what. */
static bool
judge (const mx_state_t *want, const char *label, const char *what)
{
    mx_state_t got;
    char why[2048];
    bool ok = mx_state_read (S.client, &got, why, sizeof why) &&
              mx_state_same (&got, want, why, sizeof why);
    if (ok)
        say (true, "%s: %s", label, what);
    else
        say (false, "%s: %s: %s", label, what, why);
    mx_state_free (&got);
    return ok;
}

static bool
clean (mx_run_t *r, const char *cmd)
{
    if (!strcmp (cmd, "finalize"))
        return mx_online (&T, r, NULL, NULL, false, "finalize", "--writes-stopped", NULL);
    return mx_online (&T, r, NULL, NULL, false, cmd, NULL);
}

/* The fault's spec for ACTION at call K: a kill holds the call (a delay
 * far past any deadline) until the child is killed. */
static void
spec (char *out, size_t cap, long k, const char *action)
{
    if (!strcmp (action, "kill"))
        snprintf (out, cap, "any:%ld:delay=600000", k);
    else
        snprintf (out, cap, "any:%ld:%s", k, action);
}

static void
label_of (char *out, size_t cap, const char *cmd, long k, const char *action, const mx_run_t *r)
{
    char fired[200], *cut;
    mx_fired (r, fired, sizeof fired);
    if (r->killed && (cut = strstr (fired, " delayed")))
        snprintf (cut, sizeof fired - (size_t) (cut - fired), " killed");
    snprintf (out, cap, "in-process: %s, any:%ld:%s [%s]", cmd, k, action, fired);
}

static void
finalize_point (long k, const char *action)
{
    char sp[64], label[400], what[200];
    mx_run_t r, again;
    bool kill = !strcmp (action, "kill");

    if (!restore ("run", "in-process: finalize"))
        return;
    spec (sp, sizeof sp, k, action);
    if (!mx_online (&T, &r, sp, NULL, kill, "finalize", "--writes-stopped", NULL)) {
        say (false, "in-process: finalize, %s: %s", sp, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    label_of (label, sizeof label, "finalize", k, action, &r);
    if (r.rc == 0) {
        snprintf (what, sizeof what, "exit 0 (a retry took it)");
    } else {
        clean (&again, "finalize");
        /* The reply to the write that marked it finalized was lost (or
         * one after it): finalize again says so, exit 2. */
        bool already = again.rc == 2 && strstr (again.err, "is finalized already");
        if (again.rc != 0 && !already) {
            say (false, "%s: exit %d; finalize again: exit %d, not 0", label, r.rc, again.rc);
            tail (&r), tail (&again);
            return;
        }
        snprintf (what, sizeof what, "exit %d; finalize again: %s", r.rc,
                  already ? "finalized already (exit 2)" : "exit 0");
    }
    strncat (what, ": switched once, the clean finalize's documents, nothing else",
             sizeof what - strlen (what) - 1);
    if (!judge (&s_fin, label, what))
        return;
    clean (&again, "rollback");
    if (again.rc != 0) {
        say (false, "%s: then rollback: exit %d, not 0", label, again.rc);
        tail (&again);
        return;
    }
    judge (&s_rb, label, "then rollback: exit 0, the originals back byte for byte");
}

static void
rollback_point (long k, const char *action)
{
    char sp[64], label[400], what[200], why[512];
    mx_run_t r, again;
    mx_state_t now;
    const mx_state_t *want = &s_rb;
    bool kill = !strcmp (action, "kill"), settled;

    if (!restore ("fin", "in-process: rollback"))
        return;
    spec (sp, sizeof sp, k, action);
    if (!mx_online (&T, &r, sp, NULL, kill, "rollback", NULL)) {
        say (false, "in-process: rollback, %s: %s", sp, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    label_of (label, sizeof label, "rollback", k, action, &r);
    if (r.rc == 0) {
        judge (&s_rb, label, "exit 0 (a retry took it): the originals back byte for byte, the "
                             "results beside them");
        return;
    }
    if (!mx_state_read (S.client, &now, why, sizeof why)) {
        say (false, "%s: %s", label, why);
        return;
    }
    /* Its last write of the record applied, only the reply lost: the
     * rollback had completed, and the one typed again is a second
     * rollback, which drops the results and forgets the plan. */
    settled = now.record && !now.finalized && !now.journal && !now.after_switch;
    mx_state_free (&now);
    if (settled)
        want = &s_gone;
    clean (&again, "rollback");
    if (again.rc != 0) {
        say (false, "%s: exit %d; rollback again: exit %d, not 0", label, r.rc, again.rc);
        tail (&r), tail (&again);
        return;
    }
    snprintf (what, sizeof what, "exit %d; rollback again: exit 0: %s", r.rc,
              settled ? "the originals back, the results dropped, the plan forgotten"
                      : "the originals back byte for byte, the results beside them");
    judge (want, label, what);
}

/* The calls of a command counted by the fault layer (its log's numbered
 * lines), from snapshot snap; its state after into st. */
static long
count_calls (const char *snap, const char *cmd, const char *log, mx_state_t *st)
{
    mx_run_t r;
    char line[512], why[512];
    long n = 0;
    FILE *f;

    if (!restore (snap, cmd))
        return 0;
    remove (log);
    bool ran = !strcmp (cmd, "finalize")
                   ? mx_online (&T, &r, "count", log, false, cmd, "--writes-stopped", NULL)
                   : mx_online (&T, &r, "count", log, false, cmd, NULL);
    if (!ran || r.rc != 0) {
        say (false, "in-process: %s under the fault layer, counting: exit %d", cmd, r.rc);
        tail (&r);
        return 0;
    }
    if ((f = fopen (log, "r"))) {
        while (fgets (line, sizeof line, f))
            n += line[0] >= '0' && line[0] <= '9';
        fclose (f);
    }
    if (!mx_state_read (S.client, st, why, sizeof why)) {
        say (false, "in-process: %s: %s", cmd, why);
        return 0;
    }
    say (n > 0, "in-process: %s under the fault layer, counting: exit 0, %ld calls", cmd, n);
    return n;
}

/* The references' own checks: the originals as filled, the results as the
 * offline engine makes them, under each state's names. */
static bool
check_refs (const char *tmp)
{
    static const char *const colls[] = {"people", "tasks"};
    char path[700], name[200];
    const char *pid = NULL;
    bool ok = true;

    /* The plan's id, from the result collection's name. */
    for (size_t i = 0; i < s_run.ncoll && !pid; i++)
        if (!strncmp (s_run.coll[i].name, "people_remodel_", 15))
            pid = s_run.coll[i].name + 15;
    if (!pid || strlen (pid) < 3) {
        say (false, "in-process: the run made crm.people's result (people_remodel_ID_1)");
        return false;
    }
    char id[128];
    snprintf (id, sizeof id, "%.*s", (int) (strlen (pid) - 2), pid); /* less "_1" */
    for (size_t i = 0; i < 2; i++) {
        mx_coll_t orig, off;
        snprintf (path, sizeof path, "%s/orig/crm/%s.bson", tmp, colls[i]);
        bool read = mx_coll_from_file (&orig, colls[i], path);
        snprintf (path, sizeof path, "%s/off/crm/%s.bson", tmp, colls[i]);
        read = mx_coll_from_file (&off, colls[i], path) && read;
        if (!read) {
            say (false, "in-process: reading the dump and the offline output of crm.%s", colls[i]);
            ok = false;
            continue;
        }
        struct {
            const mx_state_t *st;
            const char *suffix, *what;
            const mx_coll_t *want;
        } at[] = {{&s_run, "", "the run: the original", &orig},
                  {&s_run, "_1", "the run: remodel run's result", &off},
                  {&s_fin, "", "finalize: remodel run's result live", &off},
                  {&s_fin, "_backup", "finalize: the original under its backup name", &orig},
                  {&s_rb, "", "rollback: the original back", &orig},
                  {&s_rb, "_1", "rollback: the result beside it", &off},
                  {&s_gone, "", "rollback again: the original", &orig}};
        for (size_t j = 0; j < sizeof at / sizeof *at; j++) {
            const mx_coll_t *c;
            if (*at[j].suffix)
                snprintf (name, sizeof name, "%s_remodel_%s%s", colls[i], id, at[j].suffix);
            else
                snprintf (name, sizeof name, "%s", colls[i]);
            c = mx_state_coll (at[j].st, name);
            bool same = c && mx_coll_same_docs (c, at[j].want);
            say (same, "in-process: clean %s: crm.%s, %zu documents byte for byte", at[j].what,
                 name, c ? c->count : 0);
            ok = ok && same;
        }
        free (orig.bytes);
        free (off.bytes);
    }
    say (s_fin.ncoll == 4 && s_rb.ncoll == 4 && s_gone.ncoll == 2 && s_fin.finalized &&
             !s_fin.journal && !s_rb.finalized && !s_rb.journal && !s_gone.record,
         "in-process: clean states: finalize 4 collections, finalized, no journal; rollback 4, "
         "not finalized; rollback again 2, the plan forgotten");
    return ok;
}

static bool
wanted (const char *cmd, long k, const char *action)
{
    char me[128];
    if (!only)
        return true;
    snprintf (me, sizeof me, "%s any:%ld:%s", cmd, k, action);
    return !strcmp (me, only);
}

/* A server of its own for a lane: started, filled, the plan run
 * (snapshot "run"), finalized clean (snapshot "fin"); its states the
 * main server's, or the lane says so. */
static bool
lane_server (const char *memsrv, const char *dir, int lane)
{
    char why[1024];
    mx_run_t r;
    mx_state_t st;
    bool ok;

    mkdir (dir, 0755);
    if (!mx_server_start (&S, memsrv, dir, why, sizeof why)) {
        say (false, "in-process: lane %d: the in-memory server: %s", lane, why);
        return false;
    }
    T.uri = S.uri;
    ok = mx_fill (&S, why, sizeof why) &&
         mx_online (&T, &r, NULL, NULL, false, "run", "-q", "--create-indexes", NULL) &&
         r.rc == 0 && mx_server_cmd (&S, "memSnapshot", "run", why, sizeof why) &&
         mx_state_read (S.client, &st, why, sizeof why) && mx_state_same (&st, &s_run, why, sizeof why);
    if (ok) {
        mx_state_free (&st);
        ok = clean (&r, "finalize") && r.rc == 0 &&
             mx_server_cmd (&S, "memSnapshot", "fin", why, sizeof why) &&
             mx_state_read (S.client, &st, why, sizeof why) &&
             mx_state_same (&st, &s_fin, why, sizeof why);
    }
    mx_state_free (&st);
    say (ok, "in-process: lane %d: its server filled, run and finalized as the first: %s", lane,
         ok ? "the same states" : why);
    return ok;
}

typedef struct {
    const char *cmd;
    long k;
    int act;
} point_t;

int
main (int argc, char **argv)
{
    const char *memsrv = NULL, *remodel = NULL, *tmp = NULL;
    const char *actions = "cut cut-after kill";
    char why[1024], log[700], acts[3][16], path[700];
    mx_run_t r;
    long fcalls, rcalls, npoints = 0;
    int nacts = 0, lanes = 4;
    pid_t pids[16];
    point_t *points;
    struct timespec t0, t1;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp (argv[i], "--memsrv"))
            memsrv = argv[i + 1];
        else if (!strcmp (argv[i], "--remodel"))
            remodel = argv[i + 1];
        else if (!strcmp (argv[i], "--plan"))
            T.plan = argv[i + 1];
        else if (!strcmp (argv[i], "--tmp"))
            tmp = argv[i + 1];
        else if (!strcmp (argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp (argv[i], "--actions"))
            actions = argv[i + 1];
        else if (!strcmp (argv[i], "--lanes"))
            lanes = atoi (argv[i + 1]);
    }
    if (!memsrv || !remodel || !T.plan || !tmp || lanes < 1 || lanes > 16) {
        fprintf (stderr, "usage: remodel-fault-matrix --memsrv BIN --remodel BIN --plan FILE "
                         "--tmp DIR [--only 'CMD any:N:ACTION'] [--actions 'cut cut-after kill'] "
                         "[--lanes N (1-16, default 4)]\n");
        return 2;
    }
    for (const char *p = actions; *p && nacts < 3;) {
        int n = 0;
        while (*p == ' ')
            p++;
        while (p[n] && p[n] != ' ')
            n++;
        if (n)
            snprintf (acts[nacts++], sizeof acts[0], "%.*s", n, p);
        p += n;
    }
    clock_gettime (CLOCK_MONOTONIC, &t0);
    mongoc_init ();
    if (!mx_server_start (&S, memsrv, tmp, why, sizeof why)) {
        say (false, "in-process: the in-memory server: %s", why);
        return 1;
    }
    T.uri = S.uri;
    bool ok = mx_fill (&S, why, sizeof why) && mx_offline (remodel, T.plan, tmp, why, sizeof why);
    if (!ok)
        say (false, "in-process: %s", why);
    ok = ok && mx_online (&T, &r, NULL, NULL, false, "run", "-q", "--create-indexes", NULL);
    if (ok && r.rc != 0) {
        say (false, "in-process: online run: exit %d", r.rc);
        tail (&r);
        ok = false;
    }
    ok = ok && mx_server_cmd (&S, "memSnapshot", "run", why, sizeof why) &&
         mx_state_read (S.client, &s_run, why, sizeof why);
    snprintf (log, sizeof log, "%s/calls.log", tmp);
    fcalls = ok ? count_calls ("run", "finalize", log, &s_fin) : 0;
    ok = ok && fcalls > 0 && mx_server_cmd (&S, "memSnapshot", "fin", why, sizeof why);
    rcalls = ok ? count_calls ("fin", "rollback", log, &s_rb) : 0;
    ok = ok && rcalls > 0 && clean (&r, "rollback") && r.rc == 0 &&
         mx_state_read (S.client, &s_gone, why, sizeof why);
    if (!ok || !check_refs (tmp)) {
        say (false, "in-process: the references from clean runs: %s", ok ? "see above" : why);
        mx_server_stop (&S);
        return 1;
    }
    mx_server_stop (&S);

    /* Every point, dealt to the lanes in turn: a point's time is mostly
     * waiting (a round trip's wake-ups, a fork), so lanes, each with a
     * server of its own, overlap them. */
    points = calloc ((size_t) (fcalls + rcalls) * 3 + 1, sizeof *points);
    for (int a = 0; a < nacts; a++)
        for (long k = 1; k <= fcalls; k++)
            if (wanted ("finalize", k, acts[a]))
                points[npoints++] = (point_t) {"finalize", k, a};
    for (int a = 0; a < nacts; a++)
        for (long k = 1; k <= rcalls; k++)
            if (wanted ("rollback", k, acts[a]))
                points[npoints++] = (point_t) {"rollback", k, a};
    if (lanes > npoints)
        lanes = npoints ? (int) npoints : 1;
    fflush (stdout);
    fflush (stderr);
    for (int l = 0; l < lanes; l++) {
        if ((pids[l] = fork ()) != 0)
            continue;
        snprintf (path, sizeof path, "%s/lane%d.out", tmp, l);
        if (!freopen (path, "w", stdout))
            _exit (3);
        passes = failures = 0;
        snprintf (path, sizeof path, "%s/lane%d", tmp, l);
        bool up = lane_server (memsrv, path, l);
        for (long i = l; up && i < npoints; i += lanes) {
            if (!strcmp (points[i].cmd, "finalize"))
                finalize_point (points[i].k, acts[points[i].act]);
            else
                rollback_point (points[i].k, acts[points[i].act]);
        }
        mx_server_stop (&S);
        fflush (stdout);
        _exit (0);
    }
    /* The lanes' lines, lane by lane, counted as they are printed. */
    for (int l = 0; l < lanes; l++) {
        int status;
        char line[4096];
        FILE *f;
        waitpid (pids[l], &status, 0);
        snprintf (path, sizeof path, "%s/lane%d.out", tmp, l);
        if (!(f = fopen (path, "r")) || !WIFEXITED (status) || WEXITSTATUS (status)) {
            say (false, "in-process: lane %d ended with status %d", l, status);
            if (f)
                fclose (f);
            continue;
        }
        while (fgets (line, sizeof line, f)) {
            fputs (line, stdout);
            passes += !strncmp (line, "PASS ", 5);
            failures += !strncmp (line, "FAIL ", 5);
        }
        fclose (f);
    }
    clock_gettime (CLOCK_MONOTONIC, &t1);
    fprintf (stderr, "# in-process: %ld points (finalize's %ld calls, rollback's %ld, each %s) "
             "in %.1f s, %d lanes: %d passed, %d failed\n", npoints, fcalls, rcalls, actions,
             (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9, lanes,
             passes, failures);
    free (points);
    mx_state_free (&s_run), mx_state_free (&s_fin), mx_state_free (&s_rb),
        mx_state_free (&s_gone);
    mongoc_cleanup ();
    return failures ? 1 : 0;
}
