/* What finalize does after the switch (online_cmd.h), outside the window
 * the writes were stopped for, and again each time it is run on a
 * finalized plan, so that a finalize killed after the switch is completed
 * by the next:
 *   - an index remodel made for a join on a result that is now the new
 *     design's collection is dropped (docs/online.md: the indexes
 *     --create-indexes and the joins make are not carried), unless the
 *     plan's mapping of the sources' indexes gives the result that name
 *     (the record's resultIndexes: the application's own);
 *   - with --validators, each namespace the plan changed gets the
 *     validator `remodel compile --format validators` prints for it
 *     (rm_validators_commands, the same code), by collMod with
 *     validationLevel moderate and the action given. Before the first
 *     collMod the plan's record keeps each collection's options as they
 *     were (validator, validationLevel, validationAction; kept from the
 *     first finalize on, so that a second, warn then error, keeps the
 *     options from before remodel), and rollback gives them back first.
 * Whether the server keeps a validator is probed on a scratch collection
 * of the state database, never assumed from its name: FerretDB 1.x and
 * mongo-java-server have no collMod. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"
#include "remodel/analyze.h"

#define PROBE_COLL "validators_probe"

/* The new design's db.coll after the switch: within one deployment the
 * namespace's own name; with --to-uri its final result on the destination
 * (a later command's names still point at the source until it commits). */
static mongoc_collection_t *
target (online_t *on, const char *db, const char *coll)
{
    return on->run->pair ? online_pair_side (on, ONLINE_DEST, db, coll)
                         : online_collection (on, db, coll);
}

bool
online_validators_probe (online_t *on, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    const char *db = on->run->o->state_db;
    mongoc_collection_t *c = online_collection (on, db, PROBE_COLL);
    bson_t *create = BCON_NEW ("create", BCON_UTF8 (PROBE_COLL));
    bson_t *mod = BCON_NEW ("validator", "{", "$jsonSchema", "{", "bsonType", BCON_UTF8 ("object"),
                            "}", "}", "validationLevel", BCON_UTF8 ("moderate"),
                            "validationAction", BCON_UTF8 ("warn"));
    bson_t opts = BSON_INITIALIZER;
    bson_error_t why, ignored;
    bson_iter_t it;
    bool ok, kept;

    /* Left by a probe killed half way, or new: either way made anew. */
    ops->drop (on, c, &ignored);
    ok = ops->command (on, c, db, create, NULL, &why);
    if (!ok) {
        online_fail (on, err, &why, "creating a collection to probe validators on");
    } else if (!ops->coll_mod (on, c, mod, &why)) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: --validators: this server does not take a "
                      "validator (collMod answered: %s; FerretDB 1.x and mongo-java-server "
                      "have none); nothing done: finalize without --validators",
                      on->run->where, why.message);
        ok = false;
    } else if (!(ok = online_collection_options (on, c, db, &opts, &why))) {
        online_fail (on, err, &why, "listing the probe's collection");
    } else {
        kept = bson_iter_init_find (&it, &opts, "validator") && BSON_ITER_HOLDS_DOCUMENT (&it);
        if (!kept) {
            rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: --validators: this server answers collMod "
                          "but keeps no validator (listCollections shows none after it); "
                          "nothing done: finalize without --validators", on->run->where);
            ok = false;
        }
    }
    ops->drop (on, c, &ignored);
    if (ok)
        online_say_note (on, "finalize: the server keeps a validator (probed on %s.%s)", db,
                         PROBE_COLL);
    bson_destroy (&opts);
    bson_destroy (create);
    bson_destroy (mod);
    mongoc_collection_destroy (c);
    return ok;
}

/* Whether the record's resultIndexes (the plan's mapping) has name on ns. */
static bool
mapped (const bson_t *rec, const char *ns, const char *name)
{
    bson_iter_t it, list, e;
    if (!bson_iter_init_find (&it, rec, "resultIndexes") || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &list))
        return false;
    while (bson_iter_next (&list)) {
        bool n = bson_iter_recurse (&list, &e) && bson_iter_find (&e, "ns") &&
                 BSON_ITER_HOLDS_UTF8 (&e) && !strcmp (bson_iter_utf8 (&e, NULL), ns);
        if (n && bson_iter_recurse (&list, &e) && bson_iter_find (&e, "name") &&
            BSON_ITER_HOLDS_UTF8 (&e) && !strcmp (bson_iter_utf8 (&e, NULL), name))
            return true;
    }
    return false;
}

/* The made index {db, coll, name} (a madeIndexes entry) when coll is the
 * final result of a namespace the plan changed: dropped from the new
 * design's collection, unless the plan maps that name there. */
static bool
drop_join_index (online_t *on, const bson_t *rec, const char *db, const char *coll,
                 const char *name, bson_error_t *err)
{
    const rm_names_t *nm = &on->run->names;
    bool ok = true;
    for (size_t i = nm->n_moved; ok && i-- > 0;) {
        const char *dot = strchr (nm->moved[i].ns, '.');
        char ns[400];
        bool last = true;
        if (!dot || strcmp (nm->moved[i].coll, coll) != 0 ||
            strncmp (nm->moved[i].ns, db, (size_t) (dot - nm->moved[i].ns)) != 0 ||
            db[dot - nm->moved[i].ns] != '\0')
            continue;
        for (size_t k = i + 1; k < nm->n_moved; k++)
            last &= strcmp (nm->moved[k].ns, nm->moved[i].ns) != 0;
        snprintf (ns, sizeof ns, "%s", nm->moved[i].ns);
        if (!last || mapped (rec, ns, name))
            return true;
        {
            mongoc_collection_t *c = target (on, db, dot + 1);
            bson_error_t why;
            /* Gone already (a finalize before this one dropped it). */
            if (online_ops (on)->drop_index (on, c, name, &why)) {
                /* For status --json: what the run built and finalize dropped. */
                bson_t *u = BCON_NEW ("$addToSet", "{", "droppedIndexes", "{", "ns", BCON_UTF8 (ns),
                                      "name", BCON_UTF8 (name), "why",
                                      BCON_UTF8 ("made by remodel for a join"), "}", "}");
                online_say_note (on, "finalize: dropped index %s of %s (made by remodel for a "
                                 "join, not the new design's)", name, ns);
                ok = online_plan_update (on, u, err);
                bson_destroy (u);
            } else if (why.code != 27 && why.code != 26 && !strstr (why.message, "not found"))
                ok = online_fail (on, err, &why, "dropping an index remodel made for a join");
            mongoc_collection_destroy (c);
        }
        return ok;
    }
    return ok;
}

static bool
drop_join_indexes (online_t *on, const bson_t *rec, bson_error_t *err)
{
    bson_iter_t it, list, e;
    bool ok = true;
    if (!bson_iter_init_find (&it, rec, "madeIndexes") || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &list))
        return true;
    while (ok && bson_iter_next (&list)) {
        const char *f[3] = {"db", "coll", "name"}, *v[3] = {NULL, NULL, NULL};
        for (int i = 0; i < 3; i++)
            if (bson_iter_recurse (&list, &e) && bson_iter_find (&e, f[i]) && BSON_ITER_HOLDS_UTF8 (&e))
                v[i] = bson_iter_utf8 (&e, NULL);
        if (v[0] && v[1] && v[2])
            ok = drop_join_index (on, rec, v[0], v[1], v[2], err);
    }
    return ok;
}

/* The options kept for the rollback, {db, coll, before}, one per command
 * (those of an earlier finalize kept as they are), into kept. */
static bool
keep_before (online_t *on, const bson_t *rec, const bson_t *cmds, bson_t *kept, bson_error_t *err)
{
    bson_iter_t it, c, f;
    uint32_t n = 0;
    bool ok = true;
    if (bson_iter_init_find (&it, rec, "validators") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
        bson_iter_recurse (&it, &f) && bson_iter_find (&f, "before") && BSON_ITER_HOLDS_ARRAY (&f)) {
        const uint8_t *data;
        uint32_t len;
        bson_iter_array (&f, &len, &data);
        bson_t had;
        if (bson_init_static (&had, data, len))
            bson_copy_to (&had, kept);
        return true;
    }
    bson_init (kept);
    bson_iter_init (&c, cmds);
    while (ok && bson_iter_next (&c)) {
        bson_iter_t d, k;
        const char *db, *coll;
        bson_t opts = BSON_INITIALIZER, one, before;
        mongoc_collection_t *col;
        bson_error_t why;
        char key[16];
        const char *kp;
        if (!bson_iter_recurse (&c, &d) || !bson_iter_find (&d, "db") ||
            !bson_iter_recurse (&c, &k) || !bson_iter_find_descendant (&k, "command.collMod", &k))
            continue;
        db = bson_iter_utf8 (&d, NULL);
        coll = bson_iter_utf8 (&k, NULL);
        col = target (on, db, coll);
        ok = online_collection_options (on, col, db, &opts, &why) ||
             online_fail (on, err, &why, "reading a collection's options");
        mongoc_collection_destroy (col);
        bson_uint32_to_string (n++, &kp, key, sizeof key);
        BSON_APPEND_DOCUMENT_BEGIN (kept, kp, &one);
        BSON_APPEND_UTF8 (&one, "db", db);
        BSON_APPEND_UTF8 (&one, "coll", coll);
        BSON_APPEND_DOCUMENT_BEGIN (&one, "before", &before);
        bson_copy_to_excluding_noinit (&opts, &before, "capped", "size", "max", "collation",
                                       "clusteredIndex", "timeseries", "expireAfterSeconds",
                                       "viewOn", "pipeline", "storageEngine", "indexOptionDefaults",
                                       NULL);
        bson_append_document_end (&one, &before);
        bson_append_document_end (kept, &one);
        bson_destroy (&opts);
    }
    return ok;
}

/* The plan's validators, each by collMod, the earlier options kept in
 * the record first. */
static bool
apply_validators (online_t *on, const bson_t *rec, bson_error_t *err)
{
    const char *action = on->run->o->validators;
    bson_t cmds = BSON_INITIALIZER, kept, *set;
    bson_iter_t it;
    int n = 0;
    bool ok;

    rm_validators_commands (&on->run->plan, NULL, action, &cmds);
    ok = keep_before (on, rec, &cmds, &kept, err);
    if (ok) {
        set = BCON_NEW ("$set", "{", "validators", "{", "action", BCON_UTF8 (action), "before",
                        BCON_ARRAY (&kept), "}", "}");
        ok = online_plan_update (on, set, err);
        bson_destroy (set);
    }
    bson_iter_init (&it, &cmds);
    while (ok && bson_iter_next (&it)) {
        bson_iter_t d, k;
        bson_t mod = BSON_INITIALIZER;
        const uint8_t *data;
        uint32_t len;
        bson_t cmd;
        mongoc_collection_t *c;
        bson_error_t why;
        if (!bson_iter_recurse (&it, &d) || !bson_iter_find (&d, "db") ||
            !bson_iter_recurse (&it, &k) || !bson_iter_find (&k, "command") ||
            !BSON_ITER_HOLDS_DOCUMENT (&k))
            continue;
        bson_iter_document (&k, &len, &data);
        bson_init_static (&cmd, data, len);
        bson_copy_to_excluding_noinit (&cmd, &mod, "collMod", NULL);
        bson_iter_recurse (&it, &k);
        bson_iter_find_descendant (&k, "command.collMod", &k);
        c = target (on, bson_iter_utf8 (&d, NULL), bson_iter_utf8 (&k, NULL));
        ok = online_lease_check (on, err) &&
             (online_ops (on)->coll_mod (on, c, &mod, &why) ||
              online_fail (on, err, &why, "giving a collection its validator"));
        if (ok) {
            n++;
            online_say_note (on, "finalize: %s.%s validates the new design (validationAction %s, "
                             "validationLevel moderate)", bson_iter_utf8 (&d, NULL),
                             bson_iter_utf8 (&k, NULL), action);
        }
        mongoc_collection_destroy (c);
        bson_destroy (&mod);
    }
    if (ok && n == 0)
        online_say_note (on, "finalize: --validators: the plan writes no field a validator "
                         "checks; none given");
    bson_destroy (&kept);
    bson_destroy (&cmds);
    return ok;
}

bool
online_finalize_after (online_t *on, bson_error_t *err)
{
    bson_t rec;
    bool found, ok;
    if (!online_lease_take (on, err))
        return false;
    ok = online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           err) &&
         rm_names_of_plan (&on->own_run->names, &on->run->plan, err);
    ok = ok && drop_join_indexes (on, &rec, err);
    ok = ok && (!on->run->o->validators || apply_validators (on, &rec, err));
    rm_names_clear (&on->own_run->names);
    bson_destroy (&rec);
    online_lease_drop (on);
    return ok;
}

/* One collection's options as they were before the validators. */
static bool
restore_one (online_t *on, const bson_t *entry, bson_error_t *err)
{
    bson_iter_t d, c, b, o;
    bson_t mod = BSON_INITIALIZER, empty = BSON_INITIALIZER;
    mongoc_collection_t *col;
    bson_error_t why;
    bool ok;
    if (!bson_iter_init_find (&d, entry, "db") || !bson_iter_init_find (&c, entry, "coll") ||
        !bson_iter_init_find (&b, entry, "before") || !BSON_ITER_HOLDS_DOCUMENT (&b))
        return true;
    /* What a collection has when none was set: no validator, strict, error. */
    if (bson_iter_recurse (&b, &o) && bson_iter_find (&o, "validator"))
        bson_append_iter (&mod, "validator", -1, &o);
    else
        BSON_APPEND_DOCUMENT (&mod, "validator", &empty);
    if (bson_iter_recurse (&b, &o) && bson_iter_find (&o, "validationLevel"))
        bson_append_iter (&mod, "validationLevel", -1, &o);
    else
        BSON_APPEND_UTF8 (&mod, "validationLevel", "strict");
    if (bson_iter_recurse (&b, &o) && bson_iter_find (&o, "validationAction"))
        bson_append_iter (&mod, "validationAction", -1, &o);
    else
        BSON_APPEND_UTF8 (&mod, "validationAction", "error");
    col = target (on, bson_iter_utf8 (&d, NULL), bson_iter_utf8 (&c, NULL));
    ok = online_ops (on)->coll_mod (on, col, &mod, &why);
    /* A collection gone (dropped by hand) has no validator to remove. */
    if (!ok && why.code == 26)
        ok = true;
    else if (!ok)
        online_fail (on, err, &why, "giving a collection its options back");
    if (ok)
        online_say_note (on, "rollback: %s.%s has its options from before the validators back",
                         bson_iter_utf8 (&d, NULL), bson_iter_utf8 (&c, NULL));
    mongoc_collection_destroy (col);
    bson_destroy (&mod);
    return ok;
}

bool
online_validators_remove (online_t *on, bson_error_t *err)
{
    bson_t rec, *unset;
    bson_iter_t it, f, list;
    bool found, ok, had;
    if (!online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           err))
        return false;
    had = found && bson_iter_init_find (&it, &rec, "validators") && BSON_ITER_HOLDS_DOCUMENT (&it);
    if (!had) {
        bson_destroy (&rec);
        return true;
    }
    ok = true;
    /* Under the caller's lease. Before the switch back: the collections are still at these names
     * (a crash after this is done again, the record's entry still there). */
    if (ok && bson_iter_recurse (&it, &f) && bson_iter_find (&f, "before") &&
        bson_iter_recurse (&f, &list))
        while (ok && bson_iter_next (&list)) {
            const uint8_t *data;
            uint32_t len;
            bson_t e;
            if (!BSON_ITER_HOLDS_DOCUMENT (&list))
                continue;
            bson_iter_document (&list, &len, &data);
            ok = !bson_init_static (&e, data, len) || restore_one (on, &e, err);
        }
    if (ok) {
        unset = BCON_NEW ("$unset", "{", "validators", BCON_INT32 (1), "}");
        ok = online_plan_update (on, unset, err);
        bson_destroy (unset);
    }
    bson_destroy (&rec);
    return ok;
}
