/* Partitions in-process (matrix.h): between finalize (or rollback) and
 * the in-memory server, the proxy of matrix_proxy.c cuts every message
 * of a stretch (STRETCH of them: the calls, and the handshakes of the
 * connections the driver opens again meanwhile), after messages spread
 * over the command (matrix_switch.c picks them), the stretch's first
 * applied with its reply lost at every other point. The command retries
 * (--retry-for 10s) and rides it out: it must exit 0 (a FAIL otherwise),
 * save where the stretch starts at its first message (its first contact,
 * which fails at once); should it fail, the same command again, and the
 * state judged as a cut point's (matrix_switch.c): the clean command's,
 * byte for byte. */
#include <stdio.h>
#include <string.h>

#include "matrix.h"

enum { STRETCH = 3 };

mx_proxy_t mx_px;

static bool
through (bool rollback, mx_run_t *r)
{
    mx_target_t t = {mx_px.uri, mx_tgt.plan};
    return rollback ? mx_online (&t, r, NULL, NULL, false, "rollback", "--retry-for", "10s", NULL)
                    : mx_online (&t, r, NULL, NULL, false, "finalize", "--writes-stopped",
                                 "--retry-for", "10s", NULL);
}

bool
mx_partition_count (long *fin, long *rb)
{
    mx_run_t r;
    mx_px.ctl->skip = mx_px.ctl->cut = 0;
    mx_px.ctl->n_renames = 0;
    for (int i = 0; i < 2; i++) {
        if (!mx_restore (i ? "fin" : "run", "in-process: partition"))
            return false;
        mx_px.ctl->seen = 0;
        mx_px.ctl->note_renames = i == 0;
        bool ran = through (i == 1, &r);
        mx_px.ctl->note_renames = 0;
        if (!ran || r.rc) {
            mx_say (false, "in-process: %s through the proxy: exit %d", i ? "rollback" : "finalize",
                    r.rc);
            mx_tail (&r);
            return false;
        }
        *(i ? rb : fin) = mx_px.ctl->seen;
    }
    mx_say (*fin > 0 && *rb > 0, "in-process: through the partition's proxy, no cut: finalize "
            "sends %ld messages, rollback %ld", *fin, *rb);
    return true;
}

int
mx_partition_renames (long *ks, int cap)
{
    int n = 0;
    for (; n < mx_px.ctl->n_renames && n < cap; n++)
        ks[n] = mx_px.ctl->renames[n];
    return n;
}

void
mx_partition_point (bool rollback, long skip, bool lose_first)
{
    char label[300];
    mx_run_t r;
    const char *cmd = rollback ? "rollback" : "finalize";
    if (!mx_restore (rollback ? "fin" : "run", "in-process: partition"))
        return;
    mx_px.ctl->seen = 0;
    mx_px.ctl->skip = skip;
    mx_px.ctl->lose_first = lose_first;
    mx_px.ctl->cut = STRETCH;
    bool ran = through (rollback, &r);
    long left = mx_px.ctl->cut;
    mx_px.ctl->skip = mx_px.ctl->cut = 0;
    snprintf (label, sizeof label, "in-process: %s, the server unreachable for %d messages after "
              "%ld%s", cmd, STRETCH, skip, lose_first ? " (the first applied, its reply lost)" : "");
    if (!ran) {
        mx_say (false, "%s: %s", label, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    /* A command that ended within the stretch's start saw none of it. */
    if (left == STRETCH && r.rc == 0) {
        mx_say (true, "%s: ended before it (exit 0)", label);
        return;
    }
    /* The stretch is over in moments and --retry-for gives ten seconds:
     * every call it cut is retried (a write checked first, as after a
     * cut), so the command completes in this one run (issue 60). Save
     * where the stretch holds the command's first contact: that fails at
     * once (a wrong address must not wait ten minutes), naming it. The
     * state is judged after a second run all the same, so that nothing
     * lost shows too. */
    if (r.rc != 0 && skip == 0 && !lose_first)
        mx_say (r.rc == 1 && strstr (r.err, "cannot reach the server"),
                "%s: exit %d, \"cannot reach the server\": a first contact is not retried", label,
                r.rc);
    else if (r.rc != 0)
        mx_say (false, "%s: exit %d where --retry-for 10s allows a retry, not 0", label, r.rc);
    if (r.rc != 0 && (skip != 0 || lose_first))
        mx_tail (&r);
    if (rollback)
        mx_rollback_then (label, &r);
    else
        mx_finalize_then (label, &r);
}
