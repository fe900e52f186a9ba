/* The switch's matrix (matrix.h): every server call of `online finalize`
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
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"

mx_switch_refs_t mx_sw;

static bool
clean (mx_run_t *r, const char *cmd)
{
    if (!strcmp (cmd, "finalize"))
        return mx_online (&mx_tgt, r, NULL, NULL, false, "finalize", "--writes-stopped", NULL);
    return mx_online (&mx_tgt, r, NULL, NULL, false, cmd, NULL);
}

static void
finalize_point (long k, const char *action)
{
    char sp[64], label[400], call[32];
    mx_run_t r;
    bool kill = !strcmp (action, "kill");

    if (!mx_restore ("run", "in-process: finalize"))
        return;
    snprintf (call, sizeof call, "any:%ld", k);
    mx_spec (sp, sizeof sp, call, action);
    if (!mx_online (&mx_tgt, &r, sp, NULL, kill, "finalize", "--writes-stopped", "--retry-for",
                    "2s", NULL)) {
        mx_say (false, "in-process: finalize, %s: %s", sp, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    mx_label (label, sizeof label, "finalize", call, action, &r);
    if (kill && !mx_killed_judge (label))
        return;
    mx_finalize_then (label, &r);
}

void
mx_finalize_then (const char *label, const mx_run_t *rp)
{
    char what[200];
    mx_run_t r = *rp, again;
    if (r.rc == 0) {
        snprintf (what, sizeof what, "exit 0 (a retry took it)");
    } else {
        clean (&again, "finalize");
        /* The reply to the write that marked it finalized was lost (or
         * one after it): finalize again says so, exit 2. */
        bool already = again.rc == 2 && strstr (again.err, "is finalized already");
        if (again.rc != 0 && !already) {
            mx_say (false, "%s: exit %d; finalize again: exit %d, not 0", label, r.rc, again.rc);
            mx_tail (&r), mx_tail (&again);
            return;
        }
        snprintf (what, sizeof what, "exit %d; finalize again: %s", r.rc,
                  already ? "finalized already (exit 2)" : "exit 0");
    }
    strncat (what, ": switched once, the clean finalize's documents, nothing else",
             sizeof what - strlen (what) - 1);
    if (!mx_judge (&mx_sw.fin, MX_SCOPE_CRM, label, what))
        return;
    clean (&again, "rollback");
    if (again.rc != 0) {
        mx_say (false, "%s: then rollback: exit %d, not 0", label, again.rc);
        mx_tail (&again);
        return;
    }
    mx_judge (&mx_sw.rb, MX_SCOPE_CRM, label, "then rollback: exit 0, the originals back byte for byte");
}

static void
rollback_point (long k, const char *action)
{
    char sp[64], label[400], call[32];
    mx_run_t r;
    bool kill = !strcmp (action, "kill");

    if (!mx_restore ("fin", "in-process: rollback"))
        return;
    snprintf (call, sizeof call, "any:%ld", k);
    mx_spec (sp, sizeof sp, call, action);
    if (!mx_online (&mx_tgt, &r, sp, NULL, kill, "rollback", "--retry-for", "2s", NULL)) {
        mx_say (false, "in-process: rollback, %s: %s", sp, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    mx_label (label, sizeof label, "rollback", call, action, &r);
    if (kill && !mx_killed_judge (label))
        return;
    mx_rollback_then (label, &r);
}

void
mx_rollback_then (const char *label, const mx_run_t *rp)
{
    char what[200], why[512];
    mx_run_t r = *rp, again;
    mx_state_t now;
    const mx_state_t *want = &mx_sw.rb;
    bool settled;
    if (r.rc == 0) {
        mx_judge (&mx_sw.rb, MX_SCOPE_CRM, label, "exit 0 (a retry took it): the originals back byte for byte, the "
                             "results beside them");
        return;
    }
    if (!mx_state_read (mx_srv.client, MX_SCOPE_CRM, &now, why, sizeof why)) {
        mx_say (false, "%s: %s", label, why);
        return;
    }
    /* Its last write of the record applied, only the reply lost: the
     * rollback had completed, and the one typed again is a second
     * rollback, which drops the results and forgets the plan. */
    settled = now.record && !now.finalized && !now.journal && !now.after_switch;
    mx_state_free (&now);
    if (settled)
        want = &mx_sw.gone;
    clean (&again, "rollback");
    if (again.rc != 0) {
        mx_say (false, "%s: exit %d; rollback again: exit %d, not 0", label, r.rc, again.rc);
        mx_tail (&r), mx_tail (&again);
        return;
    }
    snprintf (what, sizeof what, "exit %d; rollback again: exit 0: %s", r.rc,
              settled ? "the originals back, the results dropped, the plan forgotten"
                      : "the originals back byte for byte, the results beside them");
    mx_judge (want, MX_SCOPE_CRM, label, what);
}

/* The calls of a command counted by the fault layer (its log's numbered
 * lines), from snapshot snap; its state after into st. */
static long first_rename; /* the switch's first rename in finalize, by its number in "any" */

static long
count_calls (const char *snap, const char *cmd, const char *log, mx_state_t *st)
{
    mx_run_t r;
    char line[512], why[512];
    long n = 0, renames = 0;
    FILE *f;

    if (!mx_restore (snap, cmd))
        return 0;
    remove (log);
    bool ran = !strcmp (cmd, "finalize")
                   ? mx_online (&mx_tgt, &r, "count", log, false, cmd, "--writes-stopped", NULL)
                   : mx_online (&mx_tgt, &r, "count", log, false, cmd, NULL);
    if (!ran || r.rc != 0) {
        mx_say (false, "in-process: %s under the fault layer, counting: exit %d", cmd, r.rc);
        mx_tail (&r);
        return 0;
    }
    if ((f = fopen (log, "r"))) {
        while (fgets (line, sizeof line, f)) {
            n += line[0] >= '0' && line[0] <= '9';
            /* The checks' two probes are renamed first, then the switch's. */
            if (!strcmp (cmd, "finalize") && strstr (line, " renameCollection ") &&
                ++renames == 3)
                first_rename = n;
        }
        fclose (f);
    }
    if (!mx_state_read (mx_srv.client, MX_SCOPE_CRM, st, why, sizeof why)) {
        mx_say (false, "in-process: %s: %s", cmd, why);
        return 0;
    }
    mx_say (n > 0, "in-process: %s under the fault layer, counting: exit 0, %ld calls", cmd, n);
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
    for (size_t i = 0; i < mx_sw.run.ncoll && !pid; i++)
        if (!strncmp (mx_sw.run.coll[i].name, "people_remodel_", 15))
            pid = mx_sw.run.coll[i].name + 15;
    if (!pid || strlen (pid) < 3) {
        mx_say (false, "in-process: the run made crm.people's result (people_remodel_ID_1)");
        return false;
    }
    char *id = mx_sw.id;
    snprintf (id, sizeof mx_sw.id, "%.*s", (int) (strlen (pid) - 2), pid); /* less "_1" */
    for (size_t i = 0; i < 2; i++) {
        mx_coll_t orig, off;
        snprintf (path, sizeof path, "%s/orig/crm/%s.bson", tmp, colls[i]);
        bool read = mx_coll_from_file (&orig, colls[i], path);
        snprintf (path, sizeof path, "%s/off/crm/%s.bson", tmp, colls[i]);
        read = mx_coll_from_file (&off, colls[i], path) && read;
        if (!read) {
            mx_say (false, "in-process: reading the dump and the offline output of crm.%s", colls[i]);
            ok = false;
            continue;
        }
        struct {
            const mx_state_t *st;
            const char *suffix, *what;
            const mx_coll_t *want;
        } at[] = {{&mx_sw.run, "", "the run: the original", &orig},
                  {&mx_sw.run, "_1", "the run: remodel run's result", &off},
                  {&mx_sw.fin, "", "finalize: remodel run's result live", &off},
                  {&mx_sw.fin, "_backup", "finalize: the original under its backup name", &orig},
                  {&mx_sw.rb, "", "rollback: the original back", &orig},
                  {&mx_sw.rb, "_1", "rollback: the result beside it", &off},
                  {&mx_sw.gone, "", "rollback again: the original", &orig}};
        for (size_t j = 0; j < sizeof at / sizeof *at; j++) {
            const mx_coll_t *c;
            if (*at[j].suffix)
                snprintf (name, sizeof name, "%s_remodel_%s%s", colls[i], id, at[j].suffix);
            else
                snprintf (name, sizeof name, "%s", colls[i]);
            c = mx_state_coll (at[j].st, name);
            bool same = c && mx_coll_same_docs (c, at[j].want);
            mx_say (same, "in-process: clean %s: crm.%s, %zu documents byte for byte", at[j].what,
                 name, c ? c->count : 0);
            ok = ok && same;
        }
        free (orig.bytes);
        free (off.bytes);
    }
    mx_say (mx_sw.fin.ncoll == 4 && mx_sw.rb.ncoll == 4 && mx_sw.gone.ncoll == 2 && mx_sw.fin.finalized &&
             !mx_sw.fin.journal && !mx_sw.rb.finalized && !mx_sw.rb.journal && !mx_sw.gone.record,
         "in-process: clean states: finalize 4 collections, finalized, no journal; rollback 4, "
         "not finalized; rollback again 2, the plan forgotten");
    return ok;
}

/* A server of its own for a lane: started, filled, the plan run
 * (snapshot "run"), finalized clean (snapshot "fin"); its states the
 * main server's, or the lane says so. */
static const mx_opts_t *O;

static bool
lane_server (int lane, const char *dir)
{
    char why[1024];
    mx_run_t r;
    mx_state_t st;
    bool ok;

    mkdir (dir, 0755);
    if (!mx_server_start (&mx_srv, O->memsrv, dir, false, why, sizeof why)) {
        mx_say (false, "in-process: lane %d: the in-memory server: %s", lane, why);
        return false;
    }
    mx_tgt.uri = mx_srv.uri;
    ok = mx_fill (&mx_srv, why, sizeof why) &&
         mx_online (&mx_tgt, &r, NULL, NULL, false, "run", "-q", "--create-indexes", NULL) &&
         r.rc == 0 && mx_server_cmd (&mx_srv, "memSnapshot", "run", why, sizeof why) &&
         mx_state_read (mx_srv.client, MX_SCOPE_CRM, &st, why, sizeof why) && mx_state_same (&st, &mx_sw.run, why, sizeof why);
    if (ok) {
        mx_state_free (&st);
        ok = clean (&r, "finalize") && r.rc == 0 &&
             mx_server_cmd (&mx_srv, "memSnapshot", "fin", why, sizeof why) &&
             mx_state_read (mx_srv.client, MX_SCOPE_CRM, &st, why, sizeof why) &&
             mx_state_same (&st, &mx_sw.fin, why, sizeof why);
    }
    mx_state_free (&st);
    ok = ok && mx_proxy_start (&mx_px, mx_srv.uri, why, sizeof why);
    mx_say (ok, "in-process: lane %d: its server filled, run and finalized as the first: %s", lane,
         ok ? "the same states" : why);
    return ok;
}

static void
stop_proxy (void)
{
    mx_proxy_stop (&mx_px);
}

typedef struct {
    const char *cmd;
    long k;
    int act;
} point_t;
static point_t *points;

static void
point (long i)
{
    const char *cmd = points[i].cmd;
    if (!strcmp (cmd, "finalize"))
        finalize_point (points[i].k, O->acts[points[i].act]);
    else if (!strcmp (cmd, "rollback"))
        rollback_point (points[i].k, O->acts[points[i].act]);
    else if (!strcmp (cmd, "undo"))
        mx_kill_undo_point (points[i].k);
    else if (!strcmp (cmd, "twice"))
        mx_kill_twice_point (points[i].k);
    else if (!strcmp (cmd, "forward"))
        mx_kill_forward_point (points[i].k);
    else if (!strcmp (cmd, "ask"))
        mx_lease_ask_point (points[i].k);
    else if (!strncmp (cmd, "partition", 9))
        mx_partition_point (!strcmp (cmd, "partition-rollback"), points[i].k, points[i].act);
    else
        mx_lease_stall_point (points[i].k);
}

/* The partitions' points (matrix_partition.c): a stretch after every
 * 24th message of finalize, every 20th of rollback's (a point the driver
 * rides out waits for its rescans: seconds, not milliseconds); and one at
 * each of finalize's renames, applied and its reply lost (the switch
 * judges it by the collections and goes on), wherever the sampling
 * falls. */
static long
partition_points (const mx_opts_t *o, long fmsgs, long rmsgs, long npoints, long cap,
                  const long *renames, int n_renames)
{
    char at[32];
    for (int w = 0; w < 2; w++)
        for (long k = 0; k < (w ? rmsgs : fmsgs) && npoints < cap; k += w ? 20 : 24) {
            snprintf (at, sizeof at, "after:%ld", k);
            if (mx_wanted (o, w ? "partition-rollback" : "partition", at, "cut"))
                points[npoints++] = (point_t) {w ? "partition-rollback" : "partition", k,
                                               (int) (k / (w ? 20 : 24) % 2)};
        }
    for (int i = 0; i < n_renames && npoints < cap; i++) {
        snprintf (at, sizeof at, "after:%ld", renames[i]);
        if (mx_wanted (o, "partition", at, "cut"))
            points[npoints++] = (point_t) {"partition", renames[i], 1};
    }
    return npoints;
}

/* The lease's points (matrix_lease.c) at the calls it picks. */
static long
lease_points (const mx_opts_t *o, long npoints, long cap)
{
    static const char *const kinds[] = {"ask", "stall"};
    long ks[512];
    char call[32];
    for (int w = 0; w < 2; w++) {
        long n = mx_lease_calls (kinds[w], ks, 512);
        for (long i = 0; i < n && npoints < cap; i++) {
            snprintf (call, sizeof call, "any:%ld", ks[i]);
            if (mx_wanted (o, kinds[w], call, "lease"))
                points[npoints++] = (point_t) {kinds[w], ks[i], 0};
        }
    }
    return npoints;
}

/* The kill's ways out (matrix_killed.c), at each call of the command
 * they kill: "undo" and "twice" finalize's, "forward" rollback's. */
static long
kill_points (const mx_opts_t *o, long fcalls, long rcalls, long npoints)
{
    static const char *const ways[] = {"undo", "twice", "forward"};
    char call[32];
    bool kill = false;
    for (int a = 0; a < o->nacts; a++)
        kill = kill || !strcmp (o->acts[a], "kill");
    /* Killed twice: from the switch's first rename, two calls before it,
     * on (before, the second run has the whole switch to make). */
    for (int w = 0; w < 3 && kill; w++)
        for (long k = w == 1 && first_rename > 2 ? first_rename - 2 : 1;
             k <= (w < 2 ? fcalls : rcalls); k++) {
            snprintf (call, sizeof call, "any:%ld", k);
            if (mx_wanted (o, ways[w], call, "kill"))
                points[npoints++] = (point_t) {ways[w], k, 0};
        }
    return npoints;
}

bool
mx_switch_matrix (const mx_opts_t *o)
{
    char why[1024], log[700], call[32];
    mx_run_t r;
    long fcalls, rcalls, npoints = 0;

    O = o;
    mx_tgt.plan = o->plan;
    if (!mx_server_start (&mx_srv, o->memsrv, o->tmp, false, why, sizeof why)) {
        mx_say (false, "in-process: the in-memory server: %s", why);
        return false;
    }
    mx_tgt.uri = mx_srv.uri;
    bool ok = mx_fill (&mx_srv, why, sizeof why) &&
              mx_offline (o->remodel, o->plan, o->tmp, why, sizeof why);
    if (!ok)
        mx_say (false, "in-process: %s", why);
    ok = ok && mx_online (&mx_tgt, &r, NULL, NULL, false, "run", "-q", "--create-indexes", NULL);
    if (ok && r.rc != 0) {
        mx_say (false, "in-process: online run: exit %d", r.rc);
        mx_tail (&r);
        ok = false;
    }
    ok = ok && mx_server_cmd (&mx_srv, "memSnapshot", "run", why, sizeof why) &&
         mx_state_read (mx_srv.client, MX_SCOPE_CRM, &mx_sw.run, why, sizeof why);
    snprintf (mx_sw.flog, sizeof mx_sw.flog, "%s/finalize-calls.log", o->tmp);
    snprintf (log, sizeof log, "%s/rollback-calls.log", o->tmp);
    fcalls = ok ? count_calls ("run", "finalize", mx_sw.flog, &mx_sw.fin) : 0;
    ok = ok && fcalls > 0 && mx_server_cmd (&mx_srv, "memSnapshot", "fin", why, sizeof why);
    rcalls = ok ? count_calls ("fin", "rollback", log, &mx_sw.rb) : 0;
    ok = ok && rcalls > 0 && clean (&r, "rollback") && r.rc == 0 &&
         mx_state_read (mx_srv.client, MX_SCOPE_CRM, &mx_sw.gone, why, sizeof why);
    if (!ok || !check_refs (o->tmp)) {
        mx_say (false, "in-process: the references from clean runs: %s", ok ? "see above" : why);
        mx_server_stop (&mx_srv);
        return false;
    }
    long fmsgs = 0, rmsgs = 0, renames[MX_RENAMES];
    int n_renames = 0;
    if (!mx_proxy_start (&mx_px, mx_srv.uri, why, sizeof why))
        mx_say (false, "in-process: %s", why);
    else if (mx_partition_count (&fmsgs, &rmsgs))
        n_renames = mx_partition_renames (renames, MX_RENAMES);
    mx_proxy_stop (&mx_px);
    mx_server_stop (&mx_srv);

    long cap = (fcalls + rcalls) * 9 + fmsgs + rmsgs + MX_RENAMES + 1;
    points = calloc ((size_t) cap, sizeof *points);
    for (int a = 0; a < o->nacts; a++)
        for (long k = 1; k <= fcalls; k++) {
            snprintf (call, sizeof call, "any:%ld", k);
            if (mx_wanted (o, "finalize", call, o->acts[a]))
                points[npoints++] = (point_t) {"finalize", k, a};
        }
    for (int a = 0; a < o->nacts; a++)
        for (long k = 1; k <= rcalls; k++) {
            snprintf (call, sizeof call, "any:%ld", k);
            if (mx_wanted (o, "rollback", call, o->acts[a]))
                points[npoints++] = (point_t) {"rollback", k, a};
        }
    long plain = npoints;
    npoints = kill_points (o, fcalls, rcalls, npoints);
    long killed = npoints;
    npoints = lease_points (o, npoints, cap);
    long leased = npoints;
    npoints = partition_points (o, fmsgs, rmsgs, npoints, cap, renames, n_renames);
    mx_lanes (o, "switch", npoints, lane_server, point, stop_proxy);
    fprintf (stderr, "# in-process: finalize and rollback: %ld points (finalize's %ld calls, "
             "rollback's %ld; actions as asked), %ld of them a kill's ways out, %ld the "
             "lease's, %ld partitions\n", npoints, fcalls, rcalls, killed - plain,
             leased - killed, npoints - leased);
    free (points);
    mx_state_free (&mx_sw.run), mx_state_free (&mx_sw.fin), mx_state_free (&mx_sw.rb),
        mx_state_free (&mx_sw.gone);
    return true;
}
