/* The switch killed (matrix.h), in-process, as tests/cli/test_online_switch.sh
 * does under gdb on the real servers: the kill comes at one of the
 * command's server calls (the fault layer holds it; each rename and each
 * write of the switch's journal is one), so every point of the switch is
 * one of the matrix's. Here the state a kill leaves is judged before
 * anything completes it:
 *   - each namespace of the plan is before its move (the original live,
 *     the result beside it), half-way (the original under its backup name,
 *     the result not yet live) or after it (the result live, the original
 *     kept); no collection else but finalize's probe, which a kill in its
 *     checks may leave;
 *   - the moves in the journal's order: those before the one under way
 *     done, those after it not, at most one half-way;
 *   - the journal's count of renames in place one behind what the server
 *     shows at most (a kill between a rename and its note), its total
 *     four; without a journal, all before (or all after, finalized);
 *   - every collection holds the original's or remodel run's documents
 *     byte for byte, with their indexes (the clean run's);
 *   - `online status` says the interrupted switch as the journal holds it,
 *     or none, and "finalized" as the record says.
 * And the ways out the real-server suite takes: finalize killed, then
 * rollback at once; killed twice, then finalize; rollback killed, then
 * finalize forward, then rollback back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

static const char *const nss[] = {"people", "tasks"};
enum { BEFORE, HALF, AFTER, NOWHERE };

static bool
coll_same (const mx_coll_t *got, const mx_coll_t *want)
{
    return got && want && !strcmp (got->indexes, want->indexes) && got->count == want->count &&
           got->len == want->len && !memcmp (got->bytes, want->bytes, got->len);
}

/* Where namespace ns is, by the collections there; its documents checked
 * against the clean run's original and result (why says what differs). */
static int
where (const mx_state_t *st, const char *ns, char *why, size_t cap)
{
    char res[200], bak[200];
    snprintf (res, sizeof res, "%s_remodel_%s_1", ns, mx_sw.id);
    snprintf (bak, sizeof bak, "%s_remodel_%s_backup", ns, mx_sw.id);
    const mx_coll_t *c = mx_state_coll (st, ns), *r = mx_state_coll (st, res),
                    *b = mx_state_coll (st, bak);
    const mx_coll_t *orig = mx_state_coll (&mx_sw.run, ns), *result = mx_state_coll (&mx_sw.run, res);
    int at = r && c && !b ? BEFORE : r && b && !c ? HALF : !r && c && b ? AFTER : NOWHERE;
    const mx_coll_t *o = at == BEFORE ? c : b, *n = at == AFTER ? c : r;

    if (at == NOWHERE)
        snprintf (why, cap, "crm.%s is in no state of the switch: it %s, its result %s, its backup %s",
                  ns, c ? "exists" : "missing", r ? "exists" : "missing", b ? "exists" : "missing");
    else if (!coll_same (o, orig))
        snprintf (why, cap, "crm.%s: the original (as %s) is not the clean run's, byte for byte",
                  ns, o->name);
    else if (!coll_same (n, result))
        snprintf (why, cap, "crm.%s: the result (as %s) is not remodel run's, byte for byte", ns,
                  n->name);
    else
        return at;
    return NOWHERE;
}

/* The journal's moves, or the plan's, in order: each namespace's place. */
static bool
in_order (const mx_state_t *st, const int *at, int *observed, char *why, size_t cap)
{
    char order[256];
    int ranks[2], n = 0, halves = 0;
    snprintf (order, sizeof order, "%s", st->journal ? st->moves : "tasks people");
    for (char *tok = strtok (order, " "); tok && n < 2; tok = strtok (NULL, " "))
        for (int i = 0; i < 2; i++)
            if (!strcmp (tok, nss[i]))
                ranks[n++] = at[i];
    if (n != 2) {
        snprintf (why, cap, "the journal's moves are [%s], not crm.people's and crm.tasks'",
                  st->moves);
        return false;
    }
    *observed = ranks[0] + ranks[1];
    halves = (ranks[0] == HALF) + (ranks[1] == HALF);
    if (ranks[0] < ranks[1] || halves > 1) {
        snprintf (why, cap, "the moves are not switched in order: [%s] at %d, %d", order, ranks[0],
                  ranks[1]);
        return false;
    }
    return true;
}

/* What the journal says against what the server shows. */
static bool
journal_agrees (const mx_state_t *st, const int *at, int observed, char *why, size_t cap)
{
    if (!st->journal) {
        int want = st->finalized ? AFTER : BEFORE;
        if (at[0] != want || at[1] != want) {
            snprintf (why, cap, "%s, no switch journaled, but the moves are at %d, %d",
                      st->finalized ? "finalized" : "not finalized", at[0], at[1]);
            return false;
        }
        return true;
    }
    bool fin = !strcmp (st->direction, "finalize");
    long long lag = fin ? observed - st->renamed : st->renamed - observed;
    if ((!fin && strcmp (st->direction, "rollback")) || st->renames != 4 || lag < 0 || lag > 1) {
        snprintf (why, cap, "the journal (%s) says %lld of %lld renames in place, the server shows "
                  "%d", st->direction, st->renamed, st->renames, observed);
        return false;
    }
    if (st->finalized && fin && (at[0] != AFTER || at[1] != AFTER)) {
        snprintf (why, cap, "marked finalized while the moves are at %d, %d", at[0], at[1]);
        return false;
    }
    return true;
}

/* No collection in crm but the switch's names and finalize's probes. */
static bool
nothing_else (const mx_state_t *st, char *why, size_t cap)
{
    char probe[200];
    snprintf (probe, sizeof probe, "_remodel_%s_probe", mx_sw.id);
    for (size_t i = 0; i < st->ncoll; i++) {
        const char *n = st->coll[i].name, *p = strstr (n, probe);
        bool known = p && (!strcmp (p + strlen (probe), "") || !strcmp (p + strlen (probe), "2"));
        for (int k = 0; k < 2 && !known; k++) {
            size_t len = strlen (nss[k]);
            known = !strncmp (n, nss[k], len) &&
                    (!n[len] || (!strncmp (n + len, "_remodel_", 9) &&
                                 !strncmp (n + len + 9, mx_sw.id, strlen (mx_sw.id)) &&
                                 (!strcmp (n + len + 9 + strlen (mx_sw.id), "_1") ||
                                  !strcmp (n + len + 9 + strlen (mx_sw.id), "_backup"))));
        }
        if (!known) {
            snprintf (why, cap, "crm holds %s, none of the switch's names", n);
            return false;
        }
    }
    return true;
}

/* `online status`: the switch as the journal holds it, or none. */
static bool
status_says (const mx_state_t *st, char *why, size_t cap)
{
    mx_run_t r;
    char want[300];
    bool ran;
    mx_online_stdout = true;
    ran = mx_online (&mx_tgt, &r, NULL, NULL, false, "status", NULL);
    mx_online_stdout = false;
    if (!ran || r.rc != 0) {
        snprintf (why, cap, "status: exit %d", r.rc);
        return false;
    }
    snprintf (want, sizeof want, "\nmode: side by side%s\n", st->finalized ? "; finalized" : "");
    if (!strstr (r.err, want)) {
        snprintf (why, cap, "status does not say [%s]", want + 1);
        return false;
    }
    bool says = strstr (r.err, "\nswitch: ") != NULL;
    snprintf (want, sizeof want, "\nswitch: the %s of the collections was interrupted after %lld of "
              "%lld renames\n", st->direction, st->renamed, st->renames);
    if (st->journal ? !strstr (r.err, want) : says) {
        snprintf (why, cap, "status says %s, the journal %s", says ? "a switch" : "none",
                  st->journal ? want + 1 : "none");
        return false;
    }
    return true;
}

bool
mx_killed_judge (const char *label)
{
    mx_state_t st;
    char why[1024] = "";
    int at[2], observed = 0;
    bool ok = mx_state_read (mx_srv.client, MX_SCOPE_CRM, &st, why, sizeof why) && st.record &&
              nothing_else (&st, why, sizeof why);
    for (int i = 0; ok && i < 2; i++)
        ok = (at[i] = where (&st, nss[i], why, sizeof why)) != NOWHERE;
    ok = ok && in_order (&st, at, &observed, why, sizeof why) &&
         journal_agrees (&st, at, observed, why, sizeof why) && status_says (&st, why, sizeof why);
    if (!ok && !*why)
        snprintf (why, sizeof why, "no record of the plan");
    mx_say (ok, "%s: killed: every collection where the journal says (%s %lld of %lld), every "
            "document there byte for byte; status says it%s%s", label,
            st.journal ? st.direction : "none", st.renamed, st.renames, ok ? "" : ": ", why);
    mx_state_free (&st);
    return ok;
}

/* CMD killed at call k (from snapshot snap); false (said) when it could
 * not run or was not killed. */
static bool
killed_at (const char *snap, const char *cmd, const char *shown, long k, mx_run_t *r, char *label,
           size_t cap)
{
    char call[32], sp[64];
    snprintf (call, sizeof call, "any:%ld", k);
    mx_spec (sp, sizeof sp, call, "kill");
    if (snap && !mx_restore (snap, "in-process: killed"))
        return false;
    bool ran = !strcmp (cmd, "finalize")
                   ? mx_online (&mx_tgt, r, sp, NULL, true, cmd, "--writes-stopped", NULL)
                   : mx_online (&mx_tgt, r, sp, NULL, true, cmd, NULL);
    mx_label (label, cap, shown, call, "kill", r);
    if (!ran)
        mx_say (false, "%s: %s", label, strstr (r->err, "\n(") ?: r->err);
    return ran;
}

static bool
again (const char *cmd, int *rc, char *err, size_t cap)
{
    mx_run_t r;
    bool ran = !strcmp (cmd, "finalize")
                   ? mx_online (&mx_tgt, &r, NULL, NULL, false, cmd, "--writes-stopped", NULL)
                   : mx_online (&mx_tgt, &r, NULL, NULL, false, cmd, NULL);
    *rc = ran ? r.rc : -1;
    snprintf (err, cap, "%s", r.err);
    return ran;
}

void
mx_kill_undo_point (long k)
{
    char label[400], err[4096], what[200];
    mx_run_t r;
    int rc;
    if (!killed_at ("run", "finalize", "finalize (then rollback)", k, &r, label, sizeof label))
        return;
    /* The state the kill left is the plain finalize point's, judged there. */
    again ("rollback", &rc, err, sizeof err);
    /* Nothing switched, nothing journaled: rollback drops the results and
     * forgets the plan at once. */
    bool dropped = strstr (err, "remodel: rollback: dropped ") != NULL;
    snprintf (what, sizeof what, "rollback at once: exit %d: %s", rc,
              dropped ? "nothing was switched: the results dropped, the plan forgotten"
                      : "the originals back byte for byte, the results beside them");
    if (rc != 0) {
        mx_say (false, "%s: %s", label, what);
        return;
    }
    if (!mx_judge (dropped ? &mx_sw.gone : &mx_sw.rb, MX_SCOPE_CRM, label, what) || dropped)
        return;
    again ("rollback", &rc, err, sizeof err);
    if (rc == 0)
        mx_judge (&mx_sw.gone, MX_SCOPE_CRM, label, "rollback again: the results dropped, the plan forgotten");
    else
        mx_say (false, "%s: rollback again: exit %d", label, rc);
}

void
mx_kill_twice_point (long k)
{
    char label[400], l2[400], err[4096], what[200];
    mx_run_t r;
    int rc;
    if (!killed_at ("run", "finalize", "finalize (twice)", k, &r, label, sizeof label))
        return;
    /* Killed again at the second run's first rename (a state left by two
     * interrupted runs), unless it has none left. */
    char call[32] = "renameCollection:1", sp[64];
    mx_spec (sp, sizeof sp, call, "kill");
    bool ran = mx_online (&mx_tgt, &r, sp, NULL, true, "finalize", "--writes-stopped", NULL);
    bool ended = !ran && !r.killed && !strstr (r.err, "no end within");
    snprintf (l2, sizeof l2, "%s, then again at %s", label, call);
    if (!ran && !ended) {
        mx_say (false, "%s: %s", l2, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    if (ended) {
        /* The second run ended before its call k: it completed the switch,
         * or said it is finalized already. */
        bool already = r.rc == 2 && strstr (r.err, "is finalized already");
        if (r.rc != 0 && !already) {
            mx_say (false, "%s: the second run, with no rename: exit %d", l2, r.rc);
            mx_tail (&r);
            return;
        }
        mx_judge (&mx_sw.fin, MX_SCOPE_CRM, l2, already ? "the second run: finalized already, "
                  "switched once" : "the second run renamed nothing, completed it: switched once");
        return;
    }
    if (!mx_killed_judge (l2))
        return;
    again ("finalize", &rc, err, sizeof err);
    bool already = rc == 2 && strstr (err, "is finalized already");
    snprintf (what, sizeof what, "then finalize: %s: switched once, the clean finalize's documents",
              already ? "finalized already (exit 2)" : "exit 0");
    if (rc != 0 && !already)
        mx_say (false, "%s: then finalize: exit %d", l2, rc);
    else
        mx_judge (&mx_sw.fin, MX_SCOPE_CRM, l2, what);
}

void
mx_kill_forward_point (long k)
{
    char label[400], err[4096], what[200];
    mx_run_t r;
    mx_state_t st;
    int rc;
    if (!killed_at ("fin", "rollback", "rollback (then finalize)", k, &r, label, sizeof label))
        return;
    /* The state the kill left is the plain rollback point's, judged there. */
    if (!mx_state_read (mx_srv.client, MX_SCOPE_CRM, &st, err, sizeof err)) {
        mx_say (false, "%s: %s", label, err);
        return;
    }
    /* Killed before its first note, or after its record settled: the plan
     * is finalized as it was, or rolled back already. */
    bool as_was = st.finalized && !st.journal, settled = !st.finalized && !st.journal;
    mx_state_free (&st);
    again ("finalize", &rc, err, sizeof err);
    if (settled) {
        /* The rollback had completed: finalize switches again. */
        snprintf (what, sizeof what, "the rollback had completed; finalize: exit %d", rc);
    } else if (as_was) {
        snprintf (what, sizeof what, "finalize then: finalized already: exit %d", rc);
        if (rc != 2 || !strstr (err, "is finalized already")) {
            mx_say (false, "%s: %s, not 2 \"is finalized already\"", label, what);
            return;
        }
        rc = 0;
    } else {
        snprintf (what, sizeof what, "finalize then completes forward: exit %d", rc);
    }
    if (rc != 0) {
        mx_say (false, "%s: %s", label, what);
        return;
    }
    strncat (what, ": the results live, the originals kept", sizeof what - strlen (what) - 1);
    if (!mx_judge (&mx_sw.fin, MX_SCOPE_CRM, label, what))
        return;
    again ("rollback", &rc, err, sizeof err);
    if (rc == 0)
        mx_judge (&mx_sw.rb, MX_SCOPE_CRM, label, "then rollback: the originals back byte for byte");
    else
        mx_say (false, "%s: then rollback: exit %d", label, rc);
}
