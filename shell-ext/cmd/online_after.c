/* The application's writes to the switched-in collections, after the
 * switch (online_cmd.h): a rollback of a finalized plan must not lose them.
 *
 * finalize records, before its first rename (with the switch's journal,
 * online_switch.c) and while the writes are still stopped, what lets a
 * later rollback tell (the plan's record, afterSwitch {capture, summed,
 * colls: [{ns, db, coll, result, docs, sum}], drops, decided, pending}),
 * and nothing that grows with the data, so that the window stays as
 * short as the drain. Before the first rename, not after the last: a
 * write to a namespace the switch has put in place while it renames the
 * next one comes after the mark, and is seen.
 *   - with a change log, only the point in it before the renames: the
 *     documents written since are its events on those namespaces, each
 *     _id once, which says how many and which; the switch's own renames
 *     and drops of intermediates (exact names) are skipped there, any
 *     other DDL tells nothing;
 *   - without one, each result's count (under its result name, which the
 *     switch then renames to the namespace) and an
 *     order-independent digest of its documents (the sum of their
 *     CRC-64s, online_coll_sum). Any insert or delete changes the count or
 *     the sum, any update that changes a document's bytes changes its CRC
 *     and so the sum (unless two CRC-64s collide, 2^-64); an update that
 *     leaves the bytes as they were loses nothing. A document's order in
 *     the collection, which a server may change, does not enter the sum.
 *     A maximum of some field would miss updates and deletes, a count
 *     alone updates. Without a log the window reads every source and
 *     result in full anyway (a sync and a verify): the verify folds each
 *     result it reads into these (online_blocked.c), and a result is
 *     read again only where what it folded is not all the server counts.
 * rollback then (online_finalize.c), of a finalized plan or of a switch
 * finalize did not finish (its namespaces whose moves are done, as the
 * server shows them, switched in; the others unswitched, in none of what
 * follows: their originals stayed where the application writes):
 *   check, before anything is renamed: the writes since the switch, from
 *     the log, else by the digests. With a log whose history no longer
 *     reaches the point (or that shows a drop or rename of one of them),
 *     nothing tells: refused, naming why, unless a flag says what to do
 *     with whatever they hold. With a log that shows none, the digests
 *     are taken then, the log read again after them: still none, so they
 *     are the collections as at the switch, for settle. Any writes, and
 *     neither --carry-writes nor --discard-writes-after-switch: refused
 *     (exit 2), naming how many in which collections. The choice is
 *     recorded (decided) before the first rename, so a rollback killed and
 *     run again keeps it.
 *   settle, once the originals are back (the results beside them, under
 *     their result names, where nothing writes any more): carried back
 *     (online_carry.c), or, with none chosen, the results' digests checked
 *     again, for writes that came between the check and the renames. Writes
 *     left in the results (discarded, or come in that gap) are pending.
 *   before the results are dropped (rollback again): a rollback that
 *     stopped before it settled settles first; pending writes are carried
 *     back with --carry-writes (or when a carry was chosen and stopped part
 *     way), dropped with --discard-writes-after-switch (said), and refused
 *     otherwise. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"
#include "remodel/crc64.h"

bool
online_coll_sum (online_t *on, const char *db, const char *coll, int64_t *docs, uint64_t *sum,
                 bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_t filter = BSON_INITIALIZER;
    online_cursor_t *cur = ops->find (on, c, &filter, NULL);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    char ns[300];
    *docs = 0;
    *sum = 0;
    snprintf (ns, sizeof ns, "%s.%s", db, coll);
    while (ops->next (cur, &doc)) {
        (*docs)++;
        on->window_summed += on->window_t0 != 0;
        *sum += rm_crc64_update (0, bson_get_data (doc), doc->len);
        /* finalize's checksums without a change log are taken with the
         * writes stopped: said every few seconds (nothing outside that
         * window). */
        if (*docs % 1000 == 0)
            online_blocked_progress (on, "checksum", NULL, ns, *docs, -1);
    }
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading a collection for its checksum");
    mongoc_collection_destroy (c);
    return ok;
}

static int64_t
int_of (const bson_t *doc, const char *key, int64_t dflt)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, doc, key) ? bson_iter_as_int64 (&it) : dflt;
}

/* The record's afterSwitch into a (a->found false when there is none). */
static bool
after_read (online_t *on, online_after_t *a, bson_error_t *err)
{
    bson_t doc, sub;
    bson_iter_t it, arr;
    bool found, ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                       "reading the plan's record", err);
    const uint8_t *data;
    uint32_t len;

    memset (a, 0, sizeof *a);
    online_capture_init (&a->point);
    if (ok && bson_iter_init_find (&it, &doc, "afterSwitch") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        bson_iter_document (&it, &len, &data);
        bson_init_static (&sub, data, len);
        a->found = true;
        a->has_point = online_capture_load (&sub, &a->point) &&
                       a->point.mode != ONLINE_CAPTURE_NONE &&
                       (!bson_empty (&a->point.token) || a->point.has_ts);
        online_field_utf8 (&sub, "decided", a->decided, sizeof a->decided);
        a->pending = int_of (&sub, "pending", 0) != 0;
        /* A record from before only the point was kept at a switch with a
         * log has digests always. */
        a->summed = int_of (&sub, "summed", 1) != 0;
        if (bson_iter_init_find (&it, &sub, "colls") && bson_iter_recurse (&it, &arr))
            while (bson_iter_next (&arr) && a->n < ONLINE_AFTER_MAX &&
                   BSON_ITER_HOLDS_DOCUMENT (&arr)) {
                online_after_coll_t *c = &a->c[a->n++];
                bson_t m;
                bson_iter_document (&arr, &len, &data);
                bson_init_static (&m, data, len);
                online_field_utf8 (&m, "ns", c->ns, sizeof c->ns);
                online_field_utf8 (&m, "db", c->db, sizeof c->db);
                online_field_utf8 (&m, "coll", c->coll, sizeof c->coll);
                online_field_utf8 (&m, "result", c->result, sizeof c->result);
                online_field_utf8 (&m, "backup", c->backup, sizeof c->backup);
                c->docs = int_of (&m, "docs", 0);
                c->sum = (uint64_t) int_of (&m, "sum", 0);
                c->written = int_of (&m, "written", 0);
                c->unswitched = int_of (&m, "unswitched", 0) != 0;
            }
        if (bson_iter_init_find (&it, &sub, "drops") && bson_iter_recurse (&it, &arr))
            while (bson_iter_next (&arr) && a->n_drops < ONLINE_AFTER_MAX)
                if (BSON_ITER_HOLDS_UTF8 (&arr))
                    snprintf (a->drops[a->n_drops++], sizeof a->drops[0], "%s",
                              bson_iter_utf8 (&arr, NULL));
    }
    bson_destroy (&doc);
    return ok;
}

void
online_after_append (const online_after_t *a, bson_t *set)
{
    bson_t sw, arr, m;
    char key[16];
    const char *kp;
    BSON_APPEND_DOCUMENT_BEGIN (set, "afterSwitch", &sw);
    if (a->has_point)
        online_capture_append (&a->point, "capture", &sw);
    BSON_APPEND_UTF8 (&sw, "decided", a->decided);
    BSON_APPEND_BOOL (&sw, "pending", a->pending);
    BSON_APPEND_BOOL (&sw, "summed", a->summed);
    BSON_APPEND_ARRAY_BEGIN (&sw, "colls", &arr);
    for (size_t i = 0; i < a->n; i++) {
        bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, kp, &m);
        BSON_APPEND_UTF8 (&m, "ns", a->c[i].ns);
        BSON_APPEND_UTF8 (&m, "db", a->c[i].db);
        BSON_APPEND_UTF8 (&m, "coll", a->c[i].coll);
        BSON_APPEND_UTF8 (&m, "result", a->c[i].result);
        BSON_APPEND_UTF8 (&m, "backup", a->c[i].backup);
        BSON_APPEND_INT64 (&m, "docs", a->c[i].docs);
        BSON_APPEND_INT64 (&m, "sum", (int64_t) a->c[i].sum);
        BSON_APPEND_INT64 (&m, "written", a->c[i].written);
        BSON_APPEND_BOOL (&m, "unswitched", a->c[i].unswitched);
        bson_append_document_end (&arr, &m);
    }
    bson_append_array_end (&sw, &arr);
    BSON_APPEND_ARRAY_BEGIN (&sw, "drops", &arr);
    for (size_t i = 0; i < a->n_drops; i++) {
        bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        BSON_APPEND_UTF8 (&arr, kp, a->drops[i]);
    }
    bson_append_array_end (&sw, &arr);
    bson_append_document_end (set, &sw);
}

static bool
after_write (online_t *on, const online_after_t *a, bson_error_t *err)
{
    bson_t u = BSON_INITIALIZER, set;
    bool ok;
    BSON_APPEND_DOCUMENT_BEGIN (&u, "$set", &set);
    online_after_append (a, &set);
    bson_append_document_end (&u, &set);
    ok = online_plan_update (on, &u, err);
    bson_destroy (&u);
    return ok;
}

bool
online_after_forget (online_t *on, bson_error_t *err)
{
    bson_t *u = BCON_NEW ("$unset", "{", "afterSwitch", BCON_UTF8 (""), "}");
    bool ok = online_plan_update (on, u, err);
    bson_destroy (u);
    return ok;
}

void
online_after_destroy (online_after_t *a)
{
    online_capture_destroy (&a->point);
}

/* Each collection's count and digest, where it is now (renamed: back
 * under its result name). */
static bool
after_sums (online_t *on, online_after_t *a, bool renamed, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; ok && i < a->n; i++)
        ok = a->c[i].unswitched ||
             online_coll_sum (on, a->c[i].db, renamed ? a->c[i].result : a->c[i].coll,
                              &a->c[i].docs, &a->c[i].sum, err);
    a->summed = ok;
    return ok;
}

/* The count of db.coll the server keeps (-1: not known). */
static int64_t
count_of (online_t *on, const char *db, const char *coll)
{
    /* The count command the driver's estimated count sends. */
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_t *cmd = BCON_NEW ("count", BCON_UTF8 (coll));
    bson_t reply;
    bson_iter_t it;
    bson_error_t why;
    int64_t n = -1;
    if (online_ops (on)->command (on, c, NULL, cmd, &reply, &why) &&
        bson_iter_init_find (&it, &reply, "n") && BSON_ITER_HOLDS_NUMBER (&it))
        n = bson_iter_as_int64 (&it);
    bson_destroy (&reply);
    bson_destroy (cmd);
    mongoc_collection_destroy (c);
    return n;
}

/* The results' digests under their result names, from what finalize's
 * full verify read of them (folded, online_blocked.c) where that is
 * every document the server counts there (a verify that passed read each
 * result once: a batch read again after a retry, say, shows as a count
 * too high), else read whole. A digest folded wrong could only make a
 * later rollback see a change where there is none (refused, never a
 * write lost); *read how many were read whole. */
static bool
after_sums_folded (online_t *on, online_after_t *a, int64_t *read, bson_error_t *err)
{
    bool ok = true;
    *read = 0;
    for (size_t i = 0; ok && i < a->n; i++) {
        online_after_coll_t *c = &a->c[i];
        if (online_blocked_folded (on, c->db, c->result, &c->docs, &c->sum) &&
            c->docs == count_of (on, c->db, c->result))
            continue;
        ok = online_coll_sum (on, c->db, c->result, &c->docs, &c->sum, err);
        *read += c->docs;
    }
    a->summed = ok;
    return ok;
}

/* The namespaces the plan switches into a, what each holds since the
 * switch not known (written -2), and the operator's choice decided. */
static bool
after_unknown (online_t *on, online_after_t *a, const char *decided, bson_error_t *err)
{
    bool ok = online_after_plan (on, a, err);
    online_capture_init (&a->point);
    for (size_t i = 0; i < a->n; i++)
        a->c[i].written = -2;
    snprintf (a->decided, sizeof a->decided, "%s", decided);
    return ok;
}

bool
online_after_mark (online_t *on, bool follows, online_after_t *a, bson_error_t *err)
{
    int64_t docs = 0, read = 0;
    bool ok = online_after_plan (on, a, err);
    online_capture_init (&a->point);
    /* With a log, its point alone: the digests would read every result
     * with the writes stopped (rollback takes them, when it needs them).
     * Without one, the results' digests under their result names, where
     * nothing but remodel writes: each is the switched-in collection as
     * the switch puts it in place, whatever is written to it after;
     * folded from the verify's read where it can be. */
    if (ok && follows)
        ok = a->has_point = online_capture_start (on, &a->point, err);
    else if (ok)
        ok = after_sums_folded (on, a, &read, err);
    for (size_t i = 0; i < a->n; i++)
        docs += a->c[i].docs;
    if (ok && follows)
        online_say_note (on, "finalize: the change log's point before the switch recorded, so that "
                         "rollback finds the application's writes to the switched-in collections "
                         "there (no checksums recorded: nothing read with the writes stopped)");
    else if (ok)
        online_say_note (on, "finalize: the results' checksums recorded before the switch (%lld "
                         "documents, %lld of them read again for it, the rest as the verify read "
                         "them), so that rollback finds the application's writes to the "
                         "switched-in collections", (long long) docs, (long long) read);
    return ok;
}

size_t
online_after_own (const online_after_t *a, online_ddl_t *own, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n && n + 2 <= cap; i++) {
        const online_after_coll_t *c = &a->c[i];
        snprintf (own[n].from, sizeof own[0].from, "%s", c->ns);
        snprintf (own[n++].to, sizeof own[0].to, "%s.%s", c->db, c->backup);
        snprintf (own[n].from, sizeof own[0].from, "%s.%s", c->db, c->result);
        snprintf (own[n++].to, sizeof own[0].to, "%s", c->ns);
    }
    for (size_t i = 0; i < a->n_drops && n < cap; i++) {
        snprintf (own[n].from, sizeof own[0].from, "%s", a->drops[i]);
        own[n++].to[0] = '\0';
    }
    return n;
}

/* From the log: the _ids written to each collection since the switch's
 * point, into a->c[].written; *by_log false, with why, when it cannot
 * tell (its history no longer reaches the point, or it shows a drop or a
 * rename of one of them). */
static bool
after_log (online_t *on, online_after_t *a, bool *by_log, char *why, size_t cap,
           bson_error_t *err)
{
    online_capture_t now;
    online_changes_t ch;
    const char *nss[ONLINE_AFTER_MAX];
    bool lost = false, read = false, ok;
    size_t n_own = 2 * a->n + a->n_drops, n_nss = 0;
    online_ddl_t *own = bson_malloc0 ((n_own + 1) * sizeof *own);
    online_capture_init (&now);
    online_changes_init (&ch);
    /* The point is before the switch's renames: they, and its drops of
     * the intermediate results, are in the log after it, and are no
     * one's writes (exact names: any other DDL still tells nothing). */
    for (size_t i = 0; i < a->n; i++)
        if (!a->c[i].unswitched)
            nss[n_nss++] = a->c[i].ns;
    ch.own = own;
    ch.n_own = online_after_own (a, own, n_own);
    ch.nss = nss;
    ch.nns = n_nss;
    /* In oplog mode one read gives the point now and what came before it
     * (online_changes_read_next). */
    ok = online_capture_lost (on, &a->point, &lost, err) &&
         (lost || (online_changes_read_next (on, &a->point, &now, &ch, &read, err) &&
                   (read || online_changes_read (on, &a->point, &now, &ch, err))));
    *by_log = ok && !lost && !*ch.rescan;
    for (size_t i = 0; *by_log && i < a->n; i++) {
        online_idlist_t *l = online_changes_list (&ch, a->c[i].ns, false);
        a->c[i].written = l && !a->c[i].unswitched ? l->n : 0;
    }
    snprintf (why, cap, "%s", lost ? "its history no longer reaches that point" : ch.rescan);
    online_changes_destroy (&ch);
    online_capture_destroy (&now);
    bson_free (own);
    return ok;
}

/* The writes since the switch, into a->c[].written (-1: changed, how
 * many unknown), from the log where its history reaches the point, else
 * by the digests of the collections at names (coll, or result once
 * renamed back); *total the collections written. sum (a check whose
 * settle compares digests): with a log that shows none, the digests are
 * taken, and the log read again after them. lost (cap bytes): why the
 * log cannot tell, where nothing else can ("" otherwise). */
static bool
after_find (online_t *on, online_after_t *a, bool renamed, bool sum, size_t *total,
            const char **how, char *lost, size_t cap, bson_error_t *err)
{
    bool ok = true, by_log = false;
    char why[300] = "";
    *total = 0;
    *lost = '\0';
    if (a->has_point && !renamed) {
        bool none = true;
        ok = after_log (on, a, &by_log, why, sizeof why, err);
        for (size_t i = 0; by_log && i < a->n; i++)
            none &= a->c[i].written == 0;
        /* None up to a point after the digests: they are the switch's. */
        if (ok && by_log && none && sum)
            ok = after_sums (on, a, false, err) && after_log (on, a, &by_log, why, sizeof why, err);
        if (ok && !by_log && a->summed)
            online_say_note (on, "rollback: the change log cannot say what was written since the "
                             "switch (%s): the checksums recorded then tell", why);
        if (ok && !by_log && !a->summed) {
            /* The switch kept only the point: nothing else tells. */
            snprintf (lost, cap, "%s", why);
            for (size_t i = 0; i < a->n; i++)
                a->c[i].written = a->c[i].unswitched ? 0 : -3;
            by_log = true;
        }
    }
    for (size_t i = 0; ok && !by_log && i < a->n; i++) {
        int64_t docs;
        uint64_t digest;
        if (a->c[i].unswitched) {
            a->c[i].written = 0;
            continue;
        }
        if (!a->summed) {
            a->c[i].written = -2;
            continue;
        }
        ok = online_coll_sum (on, a->c[i].db, renamed ? a->c[i].result : a->c[i].coll, &docs,
                              &digest, err);
        a->c[i].written = ok && (docs != a->c[i].docs || digest != a->c[i].sum) ? -1 : 0;
        if (a->c[i].written)
            online_say_note (on, "rollback: %s changed since the switch (%lld documents then, %lld "
                             "now)", a->c[i].ns, (long long) a->c[i].docs,
                             (long long) docs);
    }
    for (size_t i = 0; ok && i < a->n; i++)
        *total += a->c[i].written != 0;
    *how = *lost ? "the change log, whose history since the switch is lost"
         : by_log ? "the change log"
         : a->summed ? "the checksums recorded at the switch" : "nothing recorded to tell by";
    return ok;
}

/* "crm.people: 2 documents, crm.tasks: changed" */
static void
after_describe (const online_after_t *a, char *buf, size_t cap)
{
    size_t at = 0;
    *buf = '\0';
    for (size_t i = 0; i < a->n && at < cap; i++) {
        if (!a->c[i].written)
            continue;
        if (a->c[i].written > 0)
            at += (size_t) snprintf (buf + at, cap - at, "%s%s: %lld document(s)", at ? ", " : "",
                                     a->c[i].ns, (long long) a->c[i].written);
        else
            at += (size_t) snprintf (buf + at, cap - at, "%s%s: %s", at ? ", " : "", a->c[i].ns,
                                     a->c[i].written == -1   ? "changed"
                                     : a->c[i].written == -3 ? "not known (history lost)"
                                                             : "not known");
    }
}

/* A switch finalize did not finish: which namespaces it switched in
 * (the others are unswitched, checked in none of what follows), said;
 * *none true when it switched in none. */
static bool
after_half (online_t *on, online_after_t *a, bool *none, bson_error_t *err)
{
    char in[1200] = "", out[1200] = "";
    size_t at_in = 0, at_out = 0;
    bool ok = online_switch_in (on, a, err);
    *none = true;
    for (size_t i = 0; ok && i < a->n; i++) {
        bool u = a->c[i].unswitched;
        char *buf = u ? out : in;
        size_t *at = u ? &at_out : &at_in;
        *none &= u;
        if (*at < sizeof in)
            *at += (size_t) snprintf (buf + *at, sizeof in - *at, "%s%s", *at ? ", " : "",
                                      a->c[i].ns);
    }
    if (ok && !*none)
        online_say_note (on, "rollback: finalize stopped part way through the switch: %s switched "
                         "in (checked for writes since the switch), %s%s", in,
                         *out ? out : "none other", *out ? " not yet (their originals as they are)"
                                                         : "");
    return ok;
}

bool
online_after_check (online_t *on, bool finalized, bool switching, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    online_after_t a;
    size_t total = 0;
    const char *how = "";
    char said[1200], lost[300], offer[700];
    bool ok = after_read (on, &a, err), none = false;

    /* A rollback begun (its choice stands), or a switch of an earlier
     * remodel stopped before it was done: nothing to check again. */
    if (ok && switching && (!a.found || *a.decided)) {
        online_after_destroy (&a);
        return true;
    }
    /* A finalized plan has every namespace switched in; a switch stopped
     * part way those whose moves are done, as the server shows them now
     * (a write to one of them since its rename came after the mark). None
     * yet: nothing to check, nothing recorded goes. */
    for (size_t i = 0; i < a.n; i++)
        a.c[i].unswitched = false;
    if (ok && !finalized)
        ok = after_half (on, &a, &none, err);
    if (ok && none) {
        online_after_destroy (&a);
        return online_after_forget (on, err);
    }

    if (ok && !a.found) {
        online_after_destroy (&a);
        if (o->carry_writes)
            return online_carry_check (on, false, err);
        if (o->discard_writes) {
            /* What the results hold is not known: pending, so that they
             * too go only with the flag. */
            ok = after_unknown (on, &a, "discard", err);
            a.pending = true;
            ok = ok && after_write (on, &a, err);
            online_after_destroy (&a);
            return ok;
        }
        online_carry_offer (on, false, "--carry-writes carries whatever differs back into the "
                            "originals", offer, sizeof offer);
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: its switch recorded nothing to tell the "
                      "application's writes since by (finalized by an earlier remodel): a "
                      "rollback could lose them; nothing renamed: %s, "
                      "--discard-writes-after-switch rolls back without them", on->run->where,
                      on->run->names.name, offer);
        return false;
    }
    ok = ok && after_find (on, &a, false, !o->carry_writes, &total, &how, lost, sizeof lost, err);
    after_describe (&a, said, sizeof said);
    /* Only what will work for this plan is offered. */
    if (ok && (*lost || total) && !o->carry_writes && !o->discard_writes)
        online_carry_offer (on, false, *lost ? "--carry-writes carries whatever differs back "
                            "into the originals" : "--carry-writes carries them back into the "
                            "originals", offer, sizeof offer);
    if (ok && *lost && !o->carry_writes && !o->discard_writes) {
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: the change log cannot say what was "
                      "written to the switched-in collections since the switch (%s), and the "
                      "switch recorded only its point there: a rollback could lose those writes; "
                      "nothing renamed: --discard-writes-after-switch rolls back leaving the "
                      "results as they are beside the originals, %s", on->run->where,
                      on->run->names.name, lost, offer);
        ok = false;
    } else if (ok && total && !o->carry_writes && !o->discard_writes) {
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: written since the switch, by %s: %s; a "
                      "rollback would lose those writes; nothing renamed: %s, "
                      "--discard-writes-after-switch drops them",
                      on->run->where, on->run->names.name, how, said, offer);
        ok = false;
    }
    ok = ok && (!o->carry_writes || online_carry_check (on, false, err));
    if (ok && total)
        online_say_note (on, "rollback: written since the switch, by %s: %s: %s",
                         how, said, o->carry_writes ? "carried back into the originals once "
                         "they are back (--carry-writes)" : "left in the results beside the "
                         "originals (--discard-writes-after-switch)");
    if (ok) {
        snprintf (a.decided, sizeof a.decided, "%s",
                  o->carry_writes ? "carry" : o->discard_writes ? "discard" : "none");
        a.pending = total && o->discard_writes;
        ok = after_write (on, &a, err);
    }
    online_after_destroy (&a);
    return ok;
}

/* Carried back, then no longer recorded: the results hold nothing the
 * originals lack. */
static bool
carry_and_forget (online_t *on, const online_after_t *a, bson_error_t *err)
{
    return online_carry (on, a, err) && online_after_forget (on, err);
}

bool
online_after_settle (online_t *on, bson_error_t *err)
{
    online_after_t a;
    size_t total = 0;
    const char *how = "";
    char said[1200], lost[300];
    bool ok = after_read (on, &a, err);

    /* Nothing recorded (a switch of an earlier remodel): carried on the
     * operator's word alone, recorded first as below. */
    if (ok && !a.found && on->run->o->carry_writes) {
        ok = after_unknown (on, &a, "carry", err);
        a.found = true;
    }
    if (ok && a.found && !a.pending) {
        if ((!strcmp (a.decided, "carry") && !on->run->o->discard_writes) || on->run->o->carry_writes) {
            /* Pending until carried: a carry that fails leaves the
             * results guarded (and is tried again by rollback). */
            a.pending = true;
            ok = after_write (on, &a, err) && carry_and_forget (on, &a, err);
        } else {
            /* What came between the check and the renames (or the whole
             * of it, for a check a killed rollback never made). */
            ok = after_find (on, &a, true, false, &total, &how, lost, sizeof lost, err);
            after_describe (&a, said, sizeof said);
            a.pending = total != 0;
            ok = ok && (a.pending ? after_write (on, &a, err) : online_after_forget (on, err));
            if (ok && a.pending && !on->run->o->discard_writes) {
                rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: the originals are back, but the "
                              "results beside them were written after the switch (%s, by %s): "
                              "rollback again refuses to drop them: with --carry-writes it "
                              "carries them back into the originals, with "
                              "--discard-writes-after-switch it drops them", on->run->where,
                              on->run->names.name, said, how);
                ok = false;
            }
        }
    }
    online_after_destroy (&a);
    return ok;
}

bool
online_after_before_drop (online_t *on, bson_error_t *err)
{
    online_after_t a;
    char said[1200];
    bool ok = after_read (on, &a, err);

    /* A rollback stopped before it settled. */
    if (ok && a.found && !a.pending) {
        online_after_destroy (&a);
        online_capture_init (&a.point);
        ok = online_after_settle (on, err) && after_read (on, &a, err);
    }
    if (ok && a.found && a.pending) {
        after_describe (&a, said, sizeof said);
        /* A carry chosen before (killed part way) goes on without the
         * flag, as a killed rollback's renames do. */
        if (on->run->o->carry_writes || (!strcmp (a.decided, "carry") && !on->run->o->discard_writes)) {
            ok = online_carry_check (on, true, err) && carry_and_forget (on, &a, err);
        } else if (on->run->o->discard_writes) {
            online_say_note (on, "rollback: the writes made after the switch (%s) are dropped with "
                             "the results (--discard-writes-after-switch)", said);
        } else {
            rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: the results hold writes made after "
                          "the switch (%s): nothing dropped: --carry-writes carries them back "
                          "into the originals, --discard-writes-after-switch drops them",
                          on->run->where, on->run->names.name, said);
            ok = false;
        }
    }
    online_after_destroy (&a);
    return ok;
}

bool
online_after_unsettled (online_t *on, bool *unsettled, bson_error_t *err)
{
    online_after_t a;
    bool ok = after_read (on, &a, err);
    /* The record's afterSwitch outlives the switch back only until the
     * rollback settles it; pending, it was settled (writes kept). */
    *unsettled = ok && a.found && !a.pending;
    online_after_destroy (&a);
    return ok;
}
