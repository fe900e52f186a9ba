/* What the matrices share (matrix.h): the PASS/FAIL lines, the server
 * under test, a reset, a judgement, a fault's spec and label, and the
 * lanes the points are dealt to. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "matrix.h"

int mx_passes, mx_failures;
mx_server_t mx_srv;
mx_target_t mx_tgt;

void
mx_say (bool ok, const char *fmt, ...)
{
    va_list ap;
    printf ("%s ", ok ? "PASS" : "FAIL");
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("\n");
    fflush (stdout);
    ok ? mx_passes++ : mx_failures++;
}

void
mx_tail (const mx_run_t *r)
{
    const char *p = r->err + strlen (r->err);
    int lines = 0;
    while (p > r->err && lines < 8)
        if (*--p == '\n')
            lines++;
    fprintf (stderr, "  | %s\n", p);
}

bool
mx_restore (const char *snap, const char *label)
{
    char why[512];
    if (mx_server_cmd (&mx_srv, "memRestore", snap, why, sizeof why))
        return true;
    mx_say (false, "%s: %s", label, why);
    return false;
}

bool
mx_judge (const mx_state_t *want, unsigned scope, const char *label, const char *what)
{
    mx_state_t got;
    char why[2048];
    bool ok = mx_state_read (mx_srv.client, scope, &got, why, sizeof why) &&
              mx_state_same (&got, want, why, sizeof why);
    if (ok)
        mx_say (true, "%s: %s", label, what);
    else
        mx_say (false, "%s: %s: %s", label, what, why);
    mx_state_free (&got);
    return ok;
}

void
mx_spec (char *out, size_t cap, const char *call, const char *action)
{
    /* A kill holds the call (a delay far past any deadline) until the
     * child is killed. */
    if (!strcmp (action, "kill"))
        snprintf (out, cap, "%s:delay=600000", call);
    else
        snprintf (out, cap, "%s:%s", call, action);
}

void
mx_label (char *out, size_t cap, const char *cmd, const char *call, const char *action,
          const mx_run_t *r)
{
    char fired[200], *cut;
    mx_fired (r, fired, sizeof fired);
    if (r->killed && (cut = strstr (fired, " delayed")))
        snprintf (cut, sizeof fired - (size_t) (cut - fired), " killed");
    snprintf (out, cap, "in-process: %s, %s:%s [%s]", cmd, call, action, fired);
}

bool
mx_wanted (const mx_opts_t *o, const char *cmd, const char *call, const char *action)
{
    char me[160];
    size_t n = o->only ? strlen (o->only) : 0;
    if (!o->only)
        return true;
    snprintf (me, sizeof me, "%s %s:%s", cmd, call, action);
    /* 'partition*': every point whose name starts so (a class of them). */
    if (n && o->only[n - 1] == '*')
        return !strncmp (me, o->only, n - 1);
    return !strcmp (me, o->only);
}

pid_t
mx_fork (void)
{
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0) {
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        /* The parent gone before the request: nobody would send it. */
        if (getppid () != parent)
            _exit (127);
    }
    return pid;
}

void
mx_lanes (const mx_opts_t *o, const char *name, long npoints, bool (*setup) (int, const char *),
          void (*point) (long), void (*teardown) (void))
{
    int lanes = o->lanes > npoints ? (npoints ? (int) npoints : 1) : o->lanes;
    pid_t pids[16];
    char path[700];

    fflush (stdout);
    fflush (stderr);
    for (int l = 0; l < lanes; l++) {
        if ((pids[l] = mx_fork ()) != 0)
            continue;
        snprintf (path, sizeof path, "%s/%s-lane%d.out", o->tmp, name, l);
        if (!freopen (path, "w", stdout))
            _exit (3);
        mx_passes = mx_failures = 0;
        snprintf (path, sizeof path, "%s/%s-lane%d", o->tmp, name, l);
        bool up = setup (l, path);
        for (long i = l; up && i < npoints; i += lanes)
            point (i);
        mx_server_stop (&mx_srv);
        if (teardown)
            teardown ();
        fflush (stdout);
        _exit (0);
    }
    /* The lanes' lines, lane by lane, counted as they are printed. */
    for (int l = 0; l < lanes; l++) {
        int status = 0;
        char line[4096];
        FILE *f;
        waitpid (pids[l], &status, 0);
        snprintf (path, sizeof path, "%s/%s-lane%d.out", o->tmp, name, l);
        if (!(f = fopen (path, "r")) || !WIFEXITED (status) || WEXITSTATUS (status)) {
            mx_say (false, "in-process: %s: lane %d ended with status %d", name, l, status);
            if (f)
                fclose (f);
            continue;
        }
        while (fgets (line, sizeof line, f)) {
            fputs (line, stdout);
            mx_passes += !strncmp (line, "PASS ", 5);
            mx_failures += !strncmp (line, "FAIL ", 5);
        }
        fclose (f);
    }
    fflush (stdout);
}
