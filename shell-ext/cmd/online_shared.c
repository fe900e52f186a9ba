/* Plans that share sources (online_cmd.h). When plan A's finalize switches a
 * collection that plan B reads, B's results were made from what is now
 * A's backup: a sync, follow, verify or finalize of B would compare them
 * with A's results and blame the application, or switch them in over A's.
 * The server says so itself: A's original is there as
 * COLL_remodel_<A>_backup. B's run notes the other plans' backups of its
 * sources present when it begins (switchedBefore: it ran over their new
 * design); one that appears later refuses B, naming A. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"
#include "remodel/cli.h"

#define SHARED_MAX 32

/* Whether id is in the record's switchedBefore. */
static bool
noted (const bson_t *rec, const char *id)
{
    bson_iter_t it, a;
    if (!bson_iter_init_find (&it, rec, "switchedBefore") || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &a))
        return false;
    while (bson_iter_next (&a))
        if (BSON_ITER_HOLDS_UTF8 (&a) && !strcmp (bson_iter_utf8 (&a, NULL), id))
            return true;
    return false;
}

/* The other plans' backups of db.coll: ids[] (each "<id>", at most
 * SHARED_MAX in all), and the backup's name of the first new one. */
static bool
backups_of (online_t *on, const char *db, const char *coll, char (*ids)[96], size_t *n,
            bson_error_t *err)
{
    bson_error_t why;
    char **names = online_collection_names (on, db, NULL, &why);
    size_t cl = strlen (coll);
    if (!names)
        return online_fail (on, err, &why, "listing collections");
    for (char **p = names; *p && *n < SHARED_MAX; p++) {
        size_t len = strlen (*p);
        const char *mid = *p + cl + sizeof "_remodel_" - 1;
        const char *tail = *p + len - (sizeof "_backup" - 1);
        bool seen = false;
        if (len <= cl + sizeof "_remodel_" - 1 + sizeof "_backup" - 1 ||
            strncmp (*p, coll, cl) != 0 || strncmp (*p + cl, "_remodel_", 9) != 0 ||
            strcmp (tail, "_backup") != 0 || (size_t) (tail - mid) >= sizeof ids[0])
            continue;
        snprintf (ids[*n], sizeof ids[0], "%.*s", (int) (tail - mid), mid);
        for (size_t k = 0; k < *n; k++)
            seen |= !strcmp (ids[k], ids[*n]);
        if (!seen && strcmp (ids[*n], on->run->names.id) != 0)
            (*n)++;
    }
    bson_strfreev (names);
    return true;
}

bool
online_shared_check (online_t *on, bool run, bool fresh, bson_error_t *err)
{
    char ids[SHARED_MAX][96], where[SHARED_MAX][400];
    size_t n = 0;
    bson_t rec;
    bool found, ok = true;

    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_nsref_t *in[4];
        size_t ni = rm_step_inputs (&on->run->plan.steps[i], in, 4);
        for (size_t k = 0; ok && k < ni; k++) {
            size_t before = n;
            ok = backups_of (on, in[k]->db, in[k]->coll, ids, &n, err);
            for (size_t j = before; j < n; j++)
                snprintf (where[j], sizeof where[j], "%s.%s", in[k]->db, in[k]->coll);
            /* One plan's backup of two sources: named once. */
            for (size_t j = before; j < n; j++)
                for (size_t e = 0; e < before; e++)
                    if (!strcmp (ids[e], ids[j])) {
                        memmove (ids[j], ids[n - 1], sizeof ids[0]);
                        memmove (where[j], where[n - 1], sizeof where[0]);
                        n--, j--;
                        break;
                    }
        }
    }
    if (!ok)
        return false;
    if (run && fresh) {
        bson_t u = BSON_INITIALIZER, set, arr;
        char key[16];
        const char *kp;
        BSON_APPEND_DOCUMENT_BEGIN (&u, "$set", &set);
        BSON_APPEND_ARRAY_BEGIN (&set, "switchedBefore", &arr);
        for (size_t i = 0; i < n; i++) {
            bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
            BSON_APPEND_UTF8 (&arr, kp, ids[i]);
        }
        bson_append_array_end (&set, &arr);
        bson_append_document_end (&u, &set);
        ok = online_plan_update (on, &u, err);
        bson_destroy (&u);
        return ok;
    }
    if (!n)
        return true;
    ok = online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                           err);
    for (size_t i = 0; ok && i < n; i++) {
        bson_t other;
        bson_iter_t it;
        bool there;
        char name[256];
        const char *dot = strchr (where[i], '.');
        if (noted (&rec, ids[i]))
            continue;
        snprintf (name, sizeof name, "%s", ids[i]);
        if (online_state_get (on, "plans", ids[i], &other, &there, "reading another plan's record",
                              err) &&
            there && bson_iter_init_find (&it, &other, "name") && BSON_ITER_HOLDS_UTF8 (&it))
            snprintf (name, sizeof name, "%s", bson_iter_utf8 (&it, NULL));
        bson_destroy (&other);
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: its source %s was switched by plan %s "
                      "after this plan's run began (the original is now %.*s.%s_remodel_%s_backup, "
                      "and %s is that plan's result): nothing of this plan's results matches it; "
                      "remodel online rollback of plan %s swaps the original back, or remodel "
                      "online run --restart runs this plan anew over the new design",
                      on->run->where, on->run->names.name, where[i], name,
                      (int) (dot ? dot - where[i] : 0), where[i], dot ? dot + 1 : "", ids[i],
                      where[i], name);
        ok = false;
    }
    bson_destroy (&rec);
    return ok;
}

bool
online_switch_ready (online_t *on, bson_error_t *err)
{
    return online_shared_check (on, false, false, err) && online_index_copy (on, true, err);
}
