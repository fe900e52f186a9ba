/* Samples of a plan's results verified ahead of the cut-over (online_cmd.h):
 * by `verify --sample N`, and by `follow` now and then between its
 * rounds; finalize, finding one recorded, does not verify its own while
 * the application's writes are stopped.
 *
 * Why a sample verified before the writes stop still holds at the
 * cut-over: a result that was right stays right until a document it is
 * made of changes, and every change after the plan's recorded point is
 * recomputed by the syncs after it (finalize's drain the last of them),
 * whose points follow one another without a gap; each of those compares
 * what it recomputes with the result, and rewrites it if it differs. What
 * the sample checks is the rest: that the results of drivers nothing
 * touched since are what the sources make.
 *
 * Only a sample that finds no difference is recorded. While the
 * application writes, a driver written after the last sync differs until
 * the next one, so a difference proves nothing either way: follow samples
 * again a minute later, and finalize, finding none recorded, verifies its
 * own. A fresh run (--restart, a changed plan) forgets the record with
 * the point (online_plan_record), and a sample is recorded only on
 * condition that the point is still the one it began with: one that
 * began before such a run is of results that are gone. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

/* The plan's recorded point as it is now, into capture (empty: none). */
static bool
point_now (online_t *on, bson_t *capture, bson_error_t *err)
{
    bson_t doc, sub;
    bson_iter_t it;
    const uint8_t *data;
    uint32_t len;
    bool found, have = false;
    bool ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                "reading the plan's record", err);
    if (ok && bson_iter_init_find (&it, &doc, "capture") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        bson_iter_document (&it, &len, &data);
        if (bson_init_static (&sub, data, len)) {
            bson_copy_to (&sub, capture);
            have = true;
        }
    }
    if (!have)
        bson_init (capture);
    bson_destroy (&doc);
    return ok;
}

bool
online_sample_verify (online_t *on, int64_t n, int64_t *differ, bson_error_t *err)
{
    mongoc_collection_t *plans;
    bson_t was, *q, *upd;
    bson_error_t why;
    bool ok;
    int64_t d;

    /* The point the sample is of: a run begun anew meanwhile (--restart)
     * takes a new one, and the sample is then of results that are gone. */
    if (!point_now (on, &was, err))
        return false;
    on->own_run->verify_sample = n;
    d = online_apply (on, ONLINE_VERIFY, err);
    on->own_run->verify_sample = 0;
    if (d < 0 || d > 0 || on->run->o->dry_run || bson_empty (&was)) {
        /* --dry-run writes no state; a plan with no point follows no log */
        bson_destroy (&was);
        *differ = d > 0 ? d : 0;
        return d >= 0;
    }
    *differ = 0;
    plans = online_collection (on, on->run->o->state_db, "plans");
    q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id), "capture", BCON_DOCUMENT (&was));
    upd = BCON_NEW ("$set", "{", "sampled", "{", "at", BCON_DATE_TIME ((int64_t) time (NULL) * 1000),
                    "drivers", BCON_INT64 (n), "by", BCON_UTF8 (on->run->o->command), "}", "}");
    /* Recorded only where the point is still the one verified against. */
    ok = online_lease_check (on, err) &&
         (online_ops (on)->write (on, plans, ONLINE_W_UPDATE, q, upd, false, false, NULL, &why) ||
          online_fail (on, err, &why, "recording the sample in the plan's record"));
    bson_destroy (upd);
    bson_destroy (q);
    bson_destroy (&was);
    mongoc_collection_destroy (plans);
    return ok;
}

bool
online_sample_read (const bson_t *rec, online_sample_t *s)
{
    bson_iter_t it;
    memset (s, 0, sizeof *s);
    if (!bson_iter_init (&it, rec) || !bson_iter_find_descendant (&it, "sampled.at", &it) ||
        !BSON_ITER_HOLDS_DATE_TIME (&it))
        return false;
    s->at_ms = bson_iter_date_time (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "sampled.drivers", &it))
        s->drivers = bson_iter_as_int64 (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "sampled.by", &it) &&
        BSON_ITER_HOLDS_UTF8 (&it))
        snprintf (s->by, sizeof s->by, "%s", bson_iter_utf8 (&it, NULL));
    return true;
}

void
online_sample_describe (const online_sample_t *s, char *buf, size_t cap)
{
    int64_t ago = (int64_t) time (NULL) - s->at_ms / 1000;
    snprintf (buf, cap, "%lld s ago, by %s (%lld drivers a pass), none differed",
              (long long) (ago > 0 ? ago : 0), *s->by ? s->by : "?", (long long) s->drivers);
}
