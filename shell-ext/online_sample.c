/* Samples of a plan's results verified ahead of the cut-over (online.h):
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
 * the point (online_plan_record). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online.h"

bool
online_sample_verify (online_t *on, int64_t n, int64_t *differ, bson_error_t *err)
{
    online_capture_t point;
    bool follows = false, ok;
    int64_t d;

    on->verify_sample = n;
    d = online_apply (on, ONLINE_VERIFY, err);
    on->verify_sample = 0;
    if (d < 0)
        return false;
    *differ = d;
    if (d > 0 || on->o->dry_run) /* --dry-run writes no state */
        return true;
    online_capture_init (&point);
    ok = online_follow_point (on, &point, &follows, err);
    online_capture_destroy (&point);
    if (ok && follows) {
        bson_t *upd = BCON_NEW ("$set", "{", "sampled", "{", "at",
                                BCON_DATE_TIME ((int64_t) time (NULL) * 1000), "drivers",
                                BCON_INT64 (n), "by", BCON_UTF8 (on->o->command), "}", "}");
        ok = online_plan_update (on, upd, err);
        bson_destroy (upd);
    }
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
