/* What the plan's record and a checkpoint say, read from the documents
 * the state database holds (online_state.h): online_state.c fetches them, these
 * read their fields. A field missing or of another type reads as none.
 * Calls nothing of the program. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"

void
online_record_parse (const bson_t *doc, online_record_t *r)
{
    bson_iter_t it, sw;

    memset (r, 0, sizeof *r);
    if (bson_iter_init_find (&it, doc, "digest") && BSON_ITER_HOLDS_UTF8 (&it))
        snprintf (r->digest, sizeof r->digest, "%s", bson_iter_utf8 (&it, NULL));
    if (bson_iter_init_find (&it, doc, "inPlace"))
        r->in_place = bson_iter_as_bool (&it);
    if (bson_iter_init_find (&it, doc, "unfused"))
        r->unfused = bson_iter_as_bool (&it);
    if (bson_iter_init_find (&it, doc, "paused"))
        r->paused = bson_iter_as_bool (&it);
    if (bson_iter_init_find (&it, doc, "finalized"))
        r->finalized = bson_iter_as_bool (&it);
    if (bson_iter_init_find (&it, doc, "error") && BSON_ITER_HOLDS_UTF8 (&it))
        snprintf (r->error, sizeof r->error, "%s", bson_iter_utf8 (&it, NULL));
    if (bson_iter_init_find (&it, doc, "rollbackLeft"))
        r->rollback_left = bson_iter_as_int64 (&it);
    r->after_pending = bson_iter_init (&it, doc) &&
                       bson_iter_find_descendant (&it, "afterSwitch.pending", &sw) &&
                       bson_iter_as_bool (&sw);
    if (bson_iter_init_find (&it, doc, "now") && BSON_ITER_HOLDS_DATE_TIME (&it))
        r->now_ms = bson_iter_date_time (&it);
    if (bson_iter_init_find (&it, doc, "lookupRules") && BSON_ITER_HOLDS_UTF8 (&it))
        r->lookup_rules = !strcmp (bson_iter_utf8 (&it, NULL), "9.0") ? 2 : 1;
    if (bson_iter_init_find (&it, doc, "switch") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        r->switching = true;
        if (bson_iter_recurse (&it, &sw) && bson_iter_find (&sw, "direction") &&
            BSON_ITER_HOLDS_UTF8 (&sw))
            snprintf (r->direction, sizeof r->direction, "%s", bson_iter_utf8 (&sw, NULL));
        if (bson_iter_recurse (&it, &sw) && bson_iter_find (&sw, "renamed"))
            r->renamed = bson_iter_as_int64 (&sw);
        if (bson_iter_recurse (&it, &sw) && bson_iter_find (&sw, "renames"))
            r->renames = bson_iter_as_int64 (&sw);
    }
}

void
online_checkpoint_parse (const bson_t *doc, bson_t *last, online_cp_tally_t *t)
{
    bson_iter_t it;
    t->done = false;
    t->seen = t->changed = 0;
    if (bson_iter_init_find (&it, doc, "last"))
        bson_append_iter (last, "last", 4, &it);
    if (bson_iter_init_find (&it, doc, "done"))
        t->done = bson_iter_as_bool (&it);
    if (bson_iter_init_find (&it, doc, "seen"))
        t->seen = bson_iter_as_int64 (&it);
    if (bson_iter_init_find (&it, doc, "changed"))
        t->changed = bson_iter_as_int64 (&it);
}
