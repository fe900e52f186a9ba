/* A switch that the application's writes race (online_cmd.h): writes that in
 * fact go on while finalize (or rollback) renames, though the operator
 * said they had stopped.
 *
 * Between a namespace's two renames its name is free, and an insert (or
 * an upsert) there makes a new collection under it: the next rename
 * would fail, and the move would be in no state the switch leaves. That
 * collection holds the application's writes in the old design, made
 * after the original was renamed away: the switch renames it aside, to
 * COLL_remodel_ID_raced_N (the first N free), and goes on, in either
 * direction, as often as it happens (online_switch.c, which calls this
 * file; nothing here calls it). rollback, once
 * the originals are back, carries each such collection's documents into
 * its original and drops it (a document whose _id the original holds
 * already is left there, named: which of the two is the application's
 * last word no one can tell); finalize completes its switch but fails,
 * naming them, since its results lack those writes: rollback, then sync
 * and finalize again with the writes stopped, loses none of them. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

void
online_raced_name (online_t *on, const char *coll, int n, char *buf, size_t cap)
{
    snprintf (buf, cap, "%s_remodel_%s_raced_%d", coll, on->run->names.id, n);
}

/* The raced collections of db.coll: calls fn for each; false when fn
 * does (or listing fails). */
static bool
each_raced (online_t *on, const char *db, const char *coll,
            bool (*fn) (online_t *on, const char *db, const char *raced, const char *coll,
                        void *arg, bson_error_t *err),
            void *arg, bson_error_t *err)
{
    char prefix[400], **names;
    bson_error_t why;
    bool ok = true;
    size_t pl;
    online_raced_name (on, coll, 0, prefix, sizeof prefix);
    pl = strlen (prefix) - 1; /* "..._raced_" */
    names = online_collection_names (on, db, NULL, &why);
    if (!names)
        return online_fail (on, err, &why, "listing collections");
    for (char **n = names; ok && *n; n++)
        if (!strncmp (*n, prefix, pl) && (*n)[pl] && strspn (*n + pl, "0123456789") == strlen (*n + pl))
            ok = fn (on, db, *n, coll, arg, err);
    bson_strfreev (names);
    return ok;
}

static bool
count_one (online_t *on, const char *db, const char *raced, const char *coll, void *arg,
           bson_error_t *err)
{
    int64_t *n = arg, k;
    mongoc_collection_t *c = online_collection (on, db, raced);
    bson_t q = BSON_INITIALIZER;
    bson_error_t why;
    k = online_ops (on)->count (on, c, &q, &why);
    mongoc_collection_destroy (c);
    if (k < 0)
        return online_fail (on, err, &why, "counting a raced collection's documents");
    online_say_warn (on, "finalize: %lld document(s) the application wrote to %s.%s during the "
                     "switch are in %s.%s, in the old design", (long long) k, db,
                     coll, db, raced);
    n[0] += k;
    n[1]++;
    return true;
}

/* Each namespace the plan switches, by fn. */
static bool
each_moved (online_t *on,
            bool (*fn) (online_t *on, const char *db, const char *raced, const char *coll,
                        void *arg, bson_error_t *err),
            void *arg, bson_error_t *err)
{
    bool ok = rm_names_of_plan (&on->own_run->names, &on->run->plan, err);
    for (size_t i = 0; ok && i < on->run->names.n_moved; i++) {
        char db[128];
        const char *dot = strchr (on->run->names.moved[i].ns, '.');
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= strcmp (on->run->names.moved[k].ns, on->run->names.moved[i].ns) == 0;
        if (seen || !dot)
            continue;
        snprintf (db, sizeof db, "%.*s", (int) (dot - on->run->names.moved[i].ns),
                  on->run->names.moved[i].ns);
        ok = each_raced (on, db, dot + 1, fn, arg, err);
    }
    rm_names_clear (&on->own_run->names);
    return ok;
}

bool
online_raced_check (online_t *on, bson_error_t *err)
{
    int64_t n[2] = {0, 0};
    if (!each_moved (on, count_one, n, err))
        return false;
    if (n[1]) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: the application wrote %lld document(s) "
                      "to the sources during the switch (%lld collection(s) listed above), "
                      "so its writes had not stopped and the results lack them: remodel online "
                      "rollback puts the originals back and carries those documents into them; "
                      "then sync and finalize again, with the writes stopped", on->run->where,
                      on->run->names.name, (long long) n[0], (long long) n[1]);
        return false;
    }
    return true;
}

/* rollback: raced's documents into the original coll, one insert each;
 * one whose _id coll holds is left (named); raced dropped when empty. */
static bool
carry_one (online_t *on, const char *db, const char *raced, const char *coll, void *arg,
           bson_error_t *err)
{
    int64_t *left = arg, carried = 0, kept = 0;
    mongoc_collection_t *from = online_collection (on, db, raced), *to = online_collection (on, db, coll);
    const online_ops_t *ops = online_ops (on);
    bson_t q = BSON_INITIALIZER;
    online_cursor_t *cur = ops->find (on, from, &q, NULL);
    const bson_t *d;
    bson_error_t why;
    bool ok = true;

    while (ok && ops->next (cur, &d)) {
        bson_t sel = BSON_INITIALIZER;
        bson_iter_t id;
        if (!bson_iter_init_find (&id, d, "_id"))
            continue;
        online_id_append (&sel, &id);
        ok = online_lease_check (on, err);
        if (ok && ops->write (on, to, ONLINE_W_INSERT, NULL, d, false, false, NULL, &why)) {
            carried++;
            ok = ops->write (on, from, ONLINE_W_DELETE, &sel, NULL, false, false, NULL, &why) ||
                 online_fail (on, err, &why, "removing a carried document");
        } else if (ok && why.code == 11000) {
            char *text = bson_as_relaxed_extended_json (&sel, NULL);
            online_say_warn (on, "rollback: %s.%s: document %s, written during the switch, has an "
                             "_id %s.%s holds already: left in %s.%s",
                             db, raced, text, db, coll, db, raced);
            bson_free (text);
            kept++;
        } else if (ok) {
            ok = online_fail (on, err, &why, "carrying a document written during the switch");
        }
        bson_destroy (&sel);
    }
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading a raced collection");
    mongoc_collection_destroy (from);
    mongoc_collection_destroy (to);
    if (ok)
        online_say_note (on, "rollback: %lld document(s) written to %s.%s during the switch "
                         "carried back into it from %s.%s%s", (long long) carried,
                         db, coll, db, raced, kept ? "" : " (dropped)");
    *left += kept;
    if (ok && !kept) {
        mongoc_collection_t *r = online_collection (on, db, raced);
        ok = online_lease_check (on, err) && (ops->drop (on, r, &why) ||
                                              online_fail (on, err, &why, "dropping a raced collection"));
        mongoc_collection_destroy (r);
    }
    return ok;
}

bool
online_raced_carry (online_t *on, bson_error_t *err)
{
    int64_t left = 0;
    if (!each_moved (on, carry_one, &left, err))
        return false;
    if (left) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %lld document(s) written during the "
                      "switch have an _id their original holds already: left where they are "
                      "(listed above); merge them by hand, then drop those collections",
                      on->run->where, on->run->names.name, (long long) left);
        return false;
    }
    return true;
}
