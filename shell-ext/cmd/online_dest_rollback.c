/* --to-uri: rollback of a plan finalize committed on the destination
 * (online_cmd.h): going back to the source, mongosync's "reverse".
 *
 * After the commit the application writes to the destination, and the
 * source is as it was at the commit: remodel wrote nothing there, and
 * this command is the only one that does. What the application wrote
 * since is read from the destination's change log, from the point
 * finalize recorded (online_dest_log.c):
 *  - nothing: the plan is marked rolled back, nothing written;
 *  - writes, without a flag: refused, naming how many of each namespace,
 *    as within one deployment (online_after.c);
 *  - --discard-writes-after-switch: the commit forgotten (the plan marked
 *    rolled back), the source as it was, the writes left on the
 *    destination only;
 *  - --carry-writes: carried back into the source through the plan's
 *    inverse (online_carry.c, the one-deployment carry's own computation:
 *    every result through the inverse, each document compared with the
 *    source's original and written only where it differs), refused where
 *    a step has no inverse, naming it. Idempotent, so a carry killed at
 *    any point is completed by the same command, nothing written twice.
 * The log says whether there is something to carry and how much; the
 * carry itself does not depend on it, so a destination without a log
 * (a standalone server) carries too. The namespaces the run copied as
 * they are have no inverse to run: their documents the log shows written
 * are given back as they are (online_dest_copy_back.c), which needs the
 * log (refused without one, before anything is written). The destination's results are kept
 * as they are (the pair's record says so, and status): remodel drops
 * nothing the application may still read. --dry-run writes nothing on
 * either server and says what it would do. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

/* What the record and status say of the destination's results after it. */
#define RESULTS_KEPT "kept on the destination under their final names, as the application " \
                     "left them (remodel drops nothing there: drop them once the application " \
                     "is back on the source)"

/* What the destination's log shows written since the commit: to the
 * results (finals) and to the namespaces copied as they are (the pair's
 * record's copied, pointing into it). */
typedef struct {
    const char *nss[2 * ONLINE_AFTER_MAX];
    size_t n_finals, n;     /* nss: the results' first, then the copies' */
    online_changes_t ch;
    int64_t total;          /* documents, each once (-1: it cannot tell) */
    char said[1200];        /* "ns: N document(s), ..." or why it cannot tell */
    char copies[600];       /* the copies' names, for a refusal */
} since_t;

static bool
written_since (online_t *on, const bson_t *rec, const online_after_t *finals, since_t *w,
               bson_error_t *err)
{
    online_capture_t from;
    bson_iter_t it, c;
    bool ok = true;
    size_t at = 0, cat = 0;

    w->n = 0;
    for (size_t k = 0; k < finals->n; k++)
        w->nss[w->n++] = finals->c[k].ns;
    w->n_finals = w->n;
    *w->copies = '\0';
    if (bson_iter_init_find (&it, rec, "copied") && BSON_ITER_HOLDS_ARRAY (&it) &&
        bson_iter_recurse (&it, &c))
        while (bson_iter_next (&c) && w->n < sizeof w->nss / sizeof *w->nss)
            if (BSON_ITER_HOLDS_UTF8 (&c) && cat < sizeof w->copies) {
                w->nss[w->n++] = bson_iter_utf8 (&c, NULL);
                cat += (size_t) snprintf (w->copies + cat, sizeof w->copies - cat, "%s%s",
                                          cat ? ", " : "", bson_iter_utf8 (&c, NULL));
            }
    online_capture_init (&from);
    if (!online_dest_point_load (rec, &from))
        snprintf (w->ch.rescan, sizeof w->ch.rescan, "the commit recorded no point of the "
                  "destination's change log (finalized by an earlier remodel)");
    else
        ok = online_dest_changes (on, &from, w->nss, w->n, &w->ch, err);
    w->total = 0;
    *w->said = '\0';
    if (ok && *w->ch.rescan) {
        w->total = -1;
        snprintf (w->said, sizeof w->said, "%s", w->ch.rescan);
    }
    for (size_t k = 0; ok && !*w->ch.rescan && k < w->n && at < sizeof w->said; k++) {
        online_idlist_t *l = online_changes_list (&w->ch, w->nss[k], false);
        if (!l || !l->n)
            continue;
        at += (size_t) snprintf (w->said + at, sizeof w->said - at, "%s%s: %u document(s)%s",
                                 at ? ", " : "", w->nss[k], l->n,
                                 k < w->n_finals ? "" : " (copied as it is)");
        w->total += l->n;
    }
    online_capture_destroy (&from);
    return ok;
}

/* The namespaces copied as they are: their writes given back (count:
 * only counted), each said. Without the log they cannot be told: refused
 * (before the carry writes anything). */
static bool
copies_back (online_t *on, since_t *w, bool count, bson_error_t *err)
{
    bool ok = true;
    for (size_t k = w->n_finals; ok && k < w->n; k++) {
        int64_t put = 0, gone = 0;
        ok = online_dest_copy_back (on, &w->ch, w->nss[k], count, &put, &gone, err);
        if (ok && (put || gone))
            online_say_note (on, "rollback: %s %s on the source (copied as it is): %lld "
                             "replaced or inserted, %lld deleted", count ? "would give back"
                             : "given back", w->nss[k], (long long) put, (long long) gone);
    }
    return ok;
}

static bool
copies_unknown (online_t *on, const since_t *w, bson_error_t *err)
{
    if (w->total >= 0 || w->n == w->n_finals)
        return false;
    rm_error_set (err, RM_ERR_USAGE, "rollback --to-uri --carry-writes: plan %s: the writes made "
                  "on the destination to the namespaces copied as they are (%s) cannot be told "
                  "without its change log (%s): nothing written; --discard-writes-after-switch "
                  "forgets the commit without them", on->run->names.name, w->copies, w->said);
    return true;
}

/* The plan marked rolled back in the pair's record (how: "carried",
 * "discarded", "unwritten"). */
static bool
mark (online_t *on, const char *how, const since_t *w, bson_error_t *err)
{
    time_t now = time (NULL);
    char at[32];
    bson_t *set;
    bool ok;

    strftime (at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime (&now));
    set = BCON_NEW ("rolledBack", "{", "at", BCON_UTF8 (at), "how", BCON_UTF8 (how),
                    "writesSince", BCON_INT64 (w->total), "results", BCON_UTF8 (RESULTS_KEPT),
                    "}");
    ok = online_pair_note (on, set, err);
    bson_destroy (set);
    return ok;
}

/* The refusal of a rollback that would lose the writes since the commit. */
static bool
refuse_written (online_t *on, const char *at, const since_t *w, bson_error_t *err)
{
    char offer[700];
    /* Only what will work for this plan is offered (online_carry.c). */
    online_carry_offer (on, true, w->total > 0 ? "--carry-writes carries them back through the "
                        "plan's inverse" : "--carry-writes carries whatever it wrote back "
                        "through the plan's inverse", offer, sizeof offer);
    if (w->total > 0)
        rm_error_set (err, RM_ERR_USAGE, "rollback --to-uri: plan %s: the destination's change "
                      "log shows writes since the commit at %s (%s), which the source does not "
                      "hold: %s, --discard-writes-after-switch forgets the commit without them; "
                      "nothing written", on->run->names.name, at, w->said, offer);
    else
        rm_error_set (err, RM_ERR_USAGE, "rollback --to-uri: plan %s: whether the application "
                      "wrote to the destination since the commit at %s is not known (%s): %s, "
                      "--discard-writes-after-switch forgets the commit without it; nothing "
                      "written", on->run->names.name, at, w->said, offer);
    return false;
}

/* --dry-run: what the command would do, nothing written on either side
 * (the carry only counts). */
static bool
dry (online_t *on, const char *at, since_t *w, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;

    if (w->total >= 0)
        online_say_note (on, "rollback --dry-run: plan %s: the destination's change log shows "
                         "%lld document(s) written since the commit at %s%s%s%s",
                         on->run->names.name, (long long) w->total, at, *w->said ? " (" : "",
                         w->said, *w->said ? ")" : "");
    else
        online_say_note (on, "rollback --dry-run: plan %s: whether the destination was written "
                         "since the commit at %s is not known (%s)", on->run->names.name, at,
                         w->said);
    if (o->carry_writes && (copies_unknown (on, w, err) || !online_carry_check (on, true, err) ||
                            !online_carry (on, NULL, err) || !copies_back (on, w, true, err)))
        return false;
    if (o->discard_writes)
        online_say_note (on, "rollback --dry-run: would forget the commit, the source as it is%s",
                         w->total ? " (the writes since stay on the destination only)" : "");
    else if (!o->carry_writes && w->total)
        return refuse_written (on, at, w, err);
    else if (!o->carry_writes)
        online_say_note (on, "rollback --dry-run: would mark the plan rolled back, nothing to "
                         "carry");
    online_say_note (on, "rollback --dry-run: nothing written on either server");
    return true;
}

/* The rollback proper, under the lease. */
static bool
go_back (online_t *on, const char *at, since_t *w, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    const char *how = o->carry_writes ? "carried" : o->discard_writes ? "discarded" : "unwritten";

    if (!o->carry_writes && !o->discard_writes && w->total)
        return refuse_written (on, at, w, err);
    if (o->carry_writes && w->total >= 0)
        online_say_note (on, "rollback: plan %s: carrying back %lld document(s) written to the "
                         "destination since the commit%s%s%s", on->run->names.name,
                         (long long) w->total, *w->said ? " (" : "", w->said,
                         *w->said ? ")" : "");
    if (o->carry_writes && (copies_unknown (on, w, err) || !online_carry_check (on, true, err) ||
                            !online_carry (on, NULL, err) || !copies_back (on, w, false, err)))
        return false;
    /* The validators finalize gave (online_validators.c). */
    if (!online_validators_remove (on, err) || !mark (on, how, w, err))
        return false;
    online_say_note (on, "rollback: plan %s rolled back (%s): the source is the application's "
                     "again%s; the results are %s", on->run->names.name, how,
                     o->carry_writes    ? ", with the writes made on the destination since the commit"
                     : o->discard_writes ? ", without the writes made on the destination since the "
                                           "commit"
                                         : "",
                     RESULTS_KEPT);
    return true;
}

bool
online_dest_rollback (online_t *on, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    online_after_t finals;
    bson_t copies, rec;
    bson_iter_t it;
    since_t w;
    char at[40];
    bool found, ok;
    int n = 0;

    if (o->carry_writes && o->discard_writes) {
        rm_error_set (err, RM_ERR_USAGE, "rollback: --carry-writes and "
                      "--discard-writes-after-switch: give one");
        return false;
    }
    if (!online_dest_committed (on, at, sizeof at, err))
        return false;
    /* Not committed: the application never moved; the results on the
     * destination go, as within one deployment. */
    if (!*at) {
        if (o->carry_writes || o->discard_writes || o->dry_run) {
            rm_error_set (err, RM_ERR_USAGE, "rollback --to-uri: plan %s was not committed on "
                          "%s: the application never wrote there, so there is nothing to carry "
                          "back; rollback without --%s drops the results there", on->run->names.name,
                          on->run->where, o->carry_writes     ? "carry-writes"
                                     : o->discard_writes ? "discard-writes-after-switch"
                                                         : "dry-run");
            return false;
        }
        return online_rollback (on, err); /* online_dest_forget, under its lease */
    }
    ok = online_pair_read (on, &rec, &found, err);
    if (ok && bson_iter_init (&it, &rec) && bson_iter_find_descendant (&it, "rolledBack.at", &it)) {
        online_say_note (on, "rollback: plan %s was rolled back on %s already, at %s: the source "
                         "is the application's; the results are %s", on->run->names.name, on->run->where,
                         bson_iter_utf8 (&it, NULL), RESULTS_KEPT);
        bson_destroy (&rec);
        return true;
    }
    /* A carry reads the results whole: the destination's writes stop
     * first, as the source's did for finalize. */
    ok = ok && (o->dry_run || online_lease_take (on, err));
    online_changes_init (&w.ch);
    if (ok) {
        ok = online_dest_finals (on, &finals, &copies, &n, err) &&
             written_since (on, &rec, &finals, &w, err) &&
             (o->dry_run ? dry (on, at, &w, err) : go_back (on, at, &w, err));
        online_after_destroy (&finals);
        bson_destroy (&copies);
    }
    online_changes_destroy (&w.ch);
    bson_destroy (&rec);
    online_lease_drop (on);
    return ok;
}

void
online_dest_rolled_back (const bson_t *rec, bson_t *sub, char *why, size_t cap)
{
    bson_iter_t it;
    bson_t rb;
    const uint8_t *data;
    uint32_t len;
    char at[40], how[16];

    if (!bson_iter_init_find (&it, rec, "rolledBack") || !BSON_ITER_HOLDS_DOCUMENT (&it))
        return;
    bson_iter_document (&it, &len, &data);
    if (!bson_init_static (&rb, data, len))
        return;
    online_field_utf8 (&rb, "at", at, sizeof at);
    online_field_utf8 (&rb, "how", how, sizeof how);
    if (why)
        snprintf (why, cap, "rolled back at %s (%s): the source is the application's again; the "
                  "results are %s", at, how, RESULTS_KEPT);
    if (sub)
        BSON_APPEND_DOCUMENT (sub, "rolledBack", &rb);
}

void
online_dest_status_line (online_t *on)
{
    bson_t rec;
    bson_error_t err;
    bool found;
    char at[40] = "", why[700] = "";

    if (!online_pair_read (on, &rec, &found, &err) || !found) {
        bson_destroy (&rec);
        return; /* status said the record's state itself */
    }
    online_field_utf8 (&rec, "committedAt", at, sizeof at);
    online_dest_rolled_back (&rec, NULL, why, sizeof why);
    if (*why)
        rm_cli_line (online_say_out_stream (on), "", "\n", "to-uri: committed at %s, then %s",
                     at, why);
    else if (*at)
        rm_cli_line (online_say_out_stream (on), "", "\n", "to-uri: committed on %s at %s: the "
                     "application writes there; remodel online rollback %s --carry-writes goes "
                     "back to the source with its writes", on->run->where, at, on->run->o->plan_path);
    bson_destroy (&rec);
}
