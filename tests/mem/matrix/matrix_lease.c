/* The lease in-process (matrix.h), after tests/cli/test_online_lease.sh,
 * at finalize's calls on the in-memory server:
 *   ask:   finalize held at a call while it holds its lease (the fault
 *          layer's delay), and another command asks (finalize, or
 *          rollback): refused (exit 2, "is being run by"), and it wrote
 *          nothing (every collection, document and the record as they
 *          were); then the holder is killed;
 *   stall: finalize held at a read and stopped (SIGSTOP) with a lease of
 *          1 s (REMODEL_ONLINE_LEASE_MS): rollback is refused while the
 *          lease lasts, then takes it over and completes (the originals
 *          back, or the results dropped when nothing was switched); then
 *          SIGCONT: finalize exits non-zero saying it lost its lease, and
 *          writes nothing more (the state as rollback left it, byte for
 *          byte). At a read, not a write: a write already sent when its
 *          process stalls lands, as on any server. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"

long
mx_lease_calls (const char *kind, long *ks, long cap)
{
    char line[512], cmd[64], target[256];
    long lease[16], nlease = 0, reads[1024], nreads = 0, got = 0, num, k;
    FILE *f = fopen (mx_sw.flog, "r");
    if (!f)
        return 0;
    /* Counted lines: "N COMMAND K TARGET PORT". The lease taken and let
     * go: the main thread's updates of the leases, in pairs (finalize
     * takes it again for its last record). */
    while (fgets (line, sizeof line, f)) {
        if (sscanf (line, "%ld %63s %ld %255s", &num, cmd, &k, target) != 4)
            continue;
        if (!strcmp (cmd, "update") && !strcmp (target, "leases") && nlease < 16)
            lease[nlease++] = num;
        else if (nlease == 1 && nreads < 1024 &&
                 (!strcmp (cmd, "find") || !strcmp (cmd, "listCollections")))
            reads[nreads++] = num;
    }
    fclose (f);
    if (!strcmp (kind, "ask")) {
        for (long p = 0; p + 1 < nlease; p += 2)
            for (long c = lease[p] + 1; c < lease[p + 1] && got < cap; c++)
                ks[got++] = c;
        return got;
    }
    /* Twelve reads spread over the first span (the switch's). */
    for (long i = 0; i < 12 && i < nreads && got < cap; i++)
        ks[got++] = reads[nreads <= 12 ? i : i * (nreads - 1) / 11];
    return got;
}

static bool
run_cmd (const char *cmd, mx_run_t *r)
{
    if (!strcmp (cmd, "finalize"))
        return mx_online (&mx_tgt, r, NULL, NULL, false, cmd, "--writes-stopped", NULL);
    return mx_online (&mx_tgt, r, NULL, NULL, false, cmd, NULL);
}

/* What the asking command did, from inside the holder's hold. */
static struct {
    const char *cmd;
    int rc, first_rc;
    bool refused, same;
    mx_state_t after;
    char why[1024];
} A;

static void
ask (pid_t holder)
{
    mx_state_t before;
    mx_run_t r;
    (void) holder;
    A.same = false;
    if (!mx_state_read (mx_srv.client, MX_SCOPE_CRM, &before, A.why, sizeof A.why))
        return;
    run_cmd (A.cmd, &r);
    A.rc = r.rc;
    A.refused = r.rc == 2 && strstr (r.err, " is being run by ");
    A.same = mx_state_read (mx_srv.client, MX_SCOPE_CRM, &A.after, A.why, sizeof A.why) &&
             mx_state_same (&A.after, &before, A.why, sizeof A.why);
    mx_state_free (&A.after);
    mx_state_free (&before);
}

void
mx_lease_ask_point (long k)
{
    char call[32], sp[64], label[400];
    mx_run_t r;
    snprintf (call, sizeof call, "any:%ld", k);
    mx_spec (sp, sizeof sp, call, "kill");
    if (!mx_restore ("run", "in-process: lease"))
        return;
    A.cmd = k % 2 ? "finalize" : "rollback";
    A.rc = -1, A.refused = A.same = false, A.why[0] = '\0';
    mx_online_at_fault = ask;
    bool ran = mx_online (&mx_tgt, &r, sp, NULL, true, "finalize", "--writes-stopped", NULL);
    mx_online_at_fault = NULL;
    mx_label (label, sizeof label, "finalize holding its lease", call, "held", &r);
    if (!ran) {
        mx_say (false, "%s: %s", label, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    mx_say (A.refused && A.same, "%s: %s meanwhile: exit %d%s, nothing written%s%s", label, A.cmd,
            A.rc, A.refused ? " (is being run by it)" : ", not refused", A.same ? "" : ": ",
            A.why);
}

static int64_t
now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char stall_err[4096];

static void
stall (pid_t holder)
{
    mx_run_t r;
    int64_t deadline = now_ms () + 120000;
    kill (holder, SIGSTOP);
    A.first_rc = -1;
    /* Refused while its lease lasts; taken over once it expired. */
    do {
        if (A.first_rc >= 0) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep (&ts, NULL);
        }
        run_cmd ("rollback", &r);
        if (A.first_rc < 0)
            A.first_rc = r.rc;
    } while (r.rc == 2 && strstr (r.err, " is being run by ") && now_ms () < deadline);
    A.rc = r.rc;
    snprintf (stall_err, sizeof stall_err, "%s", r.err);
    mx_state_read (mx_srv.client, MX_SCOPE_CRM, &A.after, A.why, sizeof A.why);
    kill (holder, SIGCONT);
}

void
mx_lease_stall_point (long k)
{
    char call[32], sp[64], label[400], why[1024] = "";
    mx_run_t r;
    mx_state_t now;
    snprintf (call, sizeof call, "any:%ld", k);
    /* Held a second (stopped well within it: the stall comes at the
     * call); resumed past it, the call goes at once. */
    snprintf (sp, sizeof sp, "%s:delay=1000", call);
    if (!mx_restore ("run", "in-process: lease"))
        return;
    memset (&A.after, 0, sizeof A.after);
    setenv ("REMODEL_ONLINE_LEASE_MS", "1000", 1);
    mx_online_at_fault = stall;
    bool ran = mx_online (&mx_tgt, &r, sp, NULL, false, "finalize", "--writes-stopped", NULL);
    mx_online_at_fault = NULL;
    unsetenv ("REMODEL_ONLINE_LEASE_MS");
    mx_label (label, sizeof label, "finalize stalled past its lease", call, "stall", &r);
    bool dropped = strstr (stall_err, "remodel: rollback: dropped ") != NULL;
    /* It says it lost its lease, or its checks find the state changed
     * before that (a verify's differences, a namespace in no state of the
     * switch, the plan forgotten): either way it stops, non-zero. */
    bool lost = strstr (r.err, "lost its lease") || strstr (r.err, "lease was not renewed");
    bool ok = ran && A.first_rc == 2 && A.rc == 0 && r.rc != 0;
    if (!ok) {
        mx_say (false, "%s: rollback first exit %d (2 wanted), at last exit %d (0 wanted); "
                "finalize resumed: exit %d (non-zero wanted)", label, A.first_rc, A.rc, r.rc);
        mx_tail (&r);
    } else {
        /* Nothing more written once resumed; what rollback left is its
         * clean state. */
        ok = mx_state_read (mx_srv.client, MX_SCOPE_CRM, &now, why, sizeof why) &&
             mx_state_same (&now, &A.after, why, sizeof why) &&
             mx_state_same (&A.after, dropped ? &mx_sw.gone : &mx_sw.rb, why, sizeof why);
        mx_state_free (&now);
        mx_say (ok, "%s: rollback refused while the lease lasts (exit 2), then takes it over "
                "(exit 0: %s); finalize resumed: exit %d, %s, wrote nothing more%s%s", label,
                dropped ? "the results dropped" : "the originals back", r.rc,
                lost ? "lost its lease" : "stopped at the state it found changed", ok ? "" : ": ",
                why);
    }
    mx_state_free (&A.after);
}
