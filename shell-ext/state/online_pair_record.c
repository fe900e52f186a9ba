/* --to-uri: which two deployments a plan's run moves between, recorded in
 * the destination's state database (pairs {_id: the plan's id, source,
 * destination}), so that a run is never resumed, synced or finalized
 * against another pair.
 *
 * A deployment is known by what it says of itself: the server's identity
 * and version (buildInfo, online_caps.c), its replica set's name (hello),
 * its host list and, where listCollections gives them (MongoDB, FerretDB),
 * the UUIDs of the plan's sources. Either of the last two may change while
 * the deployment stays the same: the hosts renamed, or a source dropped
 * and made again during follow (DDL, which the capture rescans). So the
 * pair is another only when both changed (same_deployment). */
#include <stdio.h>
#include <string.h>

#include "online_state.h"

/* "ferretdb 1.24.0, set rs0, uuids <hex digest>, at host:port", without
 * the uuids where the server gives none. */
static bool
fingerprint (online_t *on, online_side_t side, char *buf, size_t cap, bson_error_t *err)
{
    const online_caps_t *c = side == ONLINE_SOURCE ? &on->run->pair->caps : &on->run->caps;
    const char *where = side == ONLINE_SOURCE ? on->run->pair->where : on->run->where;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the UUIDs' bytes */
    bool any = false;
    char dbs[8][128];
    size_t n_dbs = 0, n_refs = 0;
    const rm_nsref_t *refs[32];

    /* The sources' UUIDs: the source's only (the destination's
     * collections are the run's own, made and dropped by it). */
    for (size_t i = 0; side == ONLINE_SOURCE && i < on->run->plan.n; i++) {
        const rm_nsref_t *in[8];
        size_t n_in = rm_step_inputs (&on->run->plan.steps[i], in, 8);
        for (size_t j = 0; j < n_in; j++) {
            size_t k = 0;
            if (n_refs < 32)
                refs[n_refs++] = in[j];
            while (k < n_dbs && strcmp (dbs[k], in[j]->db))
                k++;
            if (k == n_dbs && n_dbs < 8)
                bson_strncpy (dbs[n_dbs++], in[j]->db, sizeof dbs[0]);
        }
    }
    for (size_t k = 0; k < n_dbs; k++) {
        const char *db = dbs[k];
        bson_t list = BSON_INITIALIZER;
        bson_iter_t it, u;
        int n = 0;
        if (!online_pair_list (on, side, db, &list, &n, err)) {
            bson_destroy (&list);
            return false;
        }
        bson_iter_init (&it, &list);
        while (bson_iter_next (&it)) {
            bson_iter_t d;
            const bson_value_t *v;
            char name[256];
            bson_t one;
            bool source = false;
            if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &d))
                continue;
            /* Only the plan's sources: another collection made or dropped
             * in their database meanwhile leaves the pair as it was. */
            {
                uint32_t len;
                const uint8_t *data;
                bson_iter_document (&it, &len, &data);
                bson_init_static (&one, data, len);
                online_field_utf8 (&one, "name", name, sizeof name);
            }
            for (size_t r = 0; r < n_refs; r++)
                source |= !strcmp (refs[r]->db, db) && !strcmp (refs[r]->coll, name);
            if (!source ||
                !bson_iter_find_descendant (&d, "info.uuid", &u) || !BSON_ITER_HOLDS_BINARY (&u))
                continue;
            v = bson_iter_value (&u);
            for (uint32_t b = 0; b < v->value.v_binary.data_len; b++)
                h = (h ^ v->value.v_binary.data[b]) * 1099511628211ull;
            any = true;
        }
        bson_destroy (&list);
    }
    if (any)
        snprintf (buf, cap, "%s %s, set %s, uuids %016llx, at %s", c->identity, c->version,
                  *c->set_name ? c->set_name : "none", (unsigned long long) h, where);
    else
        snprintf (buf, cap, "%s %s, set %s, at %s", c->identity, c->version,
                  *c->set_name ? c->set_name : "none", where);
    return true;
}

/* A fingerprint's parts: what the server is ("ID VERSION, set S"), its
 * sources' UUIDs ("" where none), its hosts ("" in a record made before
 * they were kept beside the UUIDs). */
static void
split (const char *f, char *head, char *uuids, char *at, size_t cap)
{
    const char *u = strstr (f, ", uuids "), *a = strstr (f, ", at ");
    const char *end = u ? u : a ? a : f + strlen (f);
    size_t n = (size_t) (end - f);

    snprintf (head, cap, "%.*s", (int) (n < cap ? n : cap - 1), f);
    *uuids = *at = '\0';
    if (u)
        snprintf (uuids, cap, "%.*s", (int) strcspn (u + 8, ","), u + 8);
    if (a)
        snprintf (at, cap, "%s", a + 5);
}

/* The same deployment: the same server and set, and its sources' UUIDs or
 * its hosts the same (one of them may have changed, not both). */
static bool
same_deployment (const char *had, const char *now)
{
    char h1[512], u1[512], a1[512], h2[512], u2[512], a2[512];

    split (had, h1, u1, a1, sizeof h1);
    split (now, h2, u2, a2, sizeof h2);
    if (strcmp (h1, h2))
        return false;
    return (*u1 && *u2 && !strcmp (u1, u2)) || (*a1 && *a2 && !strcmp (a1, a2));
}

bool
online_pair_record (online_t *on, bool begin, bson_error_t *err)
{
    char src[512], dst[512], had_src[512], had_dst[512];
    bson_t doc, *sel, *rec;
    bool found, ok;
    bson_error_t why;

    if (!fingerprint (on, ONLINE_SOURCE, src, sizeof src, err) ||
        !fingerprint (on, ONLINE_DEST, dst, sizeof dst, err))
        return false;
    sel = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    ok = online_ops (on)->state_read (on, "pairs", sel, &doc, &found, &why);
    if (!ok) {
        bson_destroy (sel);
        bson_destroy (&doc);
        return online_fail (on, err, &why, "reading the plan's pair of deployments");
    }
    if (found) {
        bson_iter_t it;
        /* Before resultsFinal, a run wrote its results side by side on the
         * destination and finalize renamed them: a run of that kind not
         * committed yet has results where this remodel does not look. */
        bool side = !bson_iter_init_find (&it, &doc, "resultsFinal") &&
                    !(bson_iter_init_find (&it, &doc, "committed") && bson_iter_as_bool (&it));
        online_field_utf8 (&doc, "source", had_src, sizeof had_src);
        online_field_utf8 (&doc, "destination", had_dst, sizeof had_dst);
        bson_destroy (&doc);
        bson_destroy (sel);
        if (side) {
            rm_error_set (err, RM_ERR_USAGE, "plan %s: its run on %s was begun by an earlier "
                          "remodel, which wrote the results side by side: finalize it with "
                          "that remodel, or drop its results (*_remodel_%s_*) and its records "
                          "(%s: pairs, plans) there and run again", on->run->names.name,
                          on->run->where, on->run->names.id, on->run->o->state_db);
            return false;
        }
        if (same_deployment (had_src, src) && same_deployment (had_dst, dst))
            return true;
        rm_error_set (err, RM_ERR_USAGE, "plan %s: recorded from %s to %s; this command names "
                      "%s to %s: give the pair its run began with (or rollback --forget it "
                      "there)", on->run->names.name, had_src, had_dst, src, dst);
        return false;
    }
    bson_destroy (&doc);
    if (!begin) {
        bson_destroy (sel);
        return true; /* nothing begun: the command says so itself */
    }
    rec = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id), "source", BCON_UTF8 (src), "destination",
                    BCON_UTF8 (dst), "plan", BCON_UTF8 (on->run->names.name), "resultsFinal",
                    BCON_BOOL (true));
    ok = online_ops (on)->state_insert (on, "pairs", rec, &why);
    bson_destroy (rec);
    bson_destroy (sel);
    return ok || online_fail (on, err, &why, "recording the plan's pair of deployments");
}

bool
online_pair_note (online_t *on, const bson_t *set, bson_error_t *err)
{
    bson_t *sel = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id)), u = BSON_INITIALIZER;
    bson_error_t why;
    bool ok;

    BSON_APPEND_DOCUMENT (&u, "$set", set);
    ok = online_ops (on)->state_update (on, "pairs", sel, &u, false, NULL, &why);
    bson_destroy (sel);
    bson_destroy (&u);
    return ok || online_fail (on, err, &why, "noting the plan's progress between deployments");
}

bool
online_pair_read (online_t *on, bson_t *doc, bool *found, bson_error_t *err)
{
    bson_t *sel = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    bson_error_t why;
    bool ok = online_ops (on)->state_read (on, "pairs", sel, doc, found, &why);
    bson_destroy (sel);
    return ok || online_fail (on, err, &why, "reading the plan's pair of deployments");
}
