/* --to-uri: the destination's change log, for going back (online_cmd.h).
 *
 * Once finalize committed the plan, the application writes to the
 * destination; rollback --carry-writes must know whether it did, and
 * what. finalize records the destination's point at the commit (its
 * oplog's last entry, or a change stream's resume token where it offers
 * streams) beside the pair; rollback reads the destination's log from
 * there over the results' namespaces.
 *
 * Both go through the code that takes and reads a point within one
 * deployment (online_capture.c, online_changes.c), on a view of on in
 * which every collection is the destination's (no pair): the layers below
 * then ask on's connection, the destination's, as they would ask the one
 * deployment's. The source's log is never read here. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

/* on as if the destination were the one deployment: every collection,
 * stream and oplog read on->client's. Shares on's plan, names and lease
 * (nothing of them is freed through it). */
static void
dest_view (const online_t *on, online_t *d, online_run_t *d_run)
{
    online_view (on, d, d_run);
    d_run->pair = NULL;
}

bool
online_dest_point_take (online_t *on, bool write, online_capture_t *c, bson_error_t *err)
{
    online_t d;
    online_run_t d_run;
    bool ok;

    dest_view (on, &d, &d_run);
    /* start may write a sentinel to the state database (a stream that
     * gives no token): not in a dry run, which asks where it stands. */
    ok = write ? online_capture_start (&d, c, err) : online_capture_detect (&d, c, err);
    on->transient = d.transient;
    return ok;
}

bool
online_dest_point_load (const bson_t *rec, online_capture_t *c)
{
    bson_iter_t it;
    bson_t one = BSON_INITIALIZER, sub;
    const uint8_t *data;
    uint32_t len;
    bool ok = false;

    /* online_capture_load reads a record's "capture": the point is put
     * under that key. */
    if (bson_iter_init_find (&it, rec, "destPoint") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        bson_iter_document (&it, &len, &data);
        if (bson_init_static (&sub, data, len)) {
            BSON_APPEND_DOCUMENT (&one, "capture", &sub);
            ok = online_capture_load (&one, c);
        }
    }
    bson_destroy (&one);
    return ok;
}

bool
online_dest_changes (online_t *on, const online_capture_t *from, const char **nss, size_t nns,
                     online_changes_t *ch, bson_error_t *err)
{
    online_t d;
    online_run_t d_run;
    online_capture_t to;
    bool ok;

    if (from->mode == ONLINE_CAPTURE_NONE) {
        snprintf (ch->rescan, sizeof ch->rescan, "the destination kept no change log at the "
                  "commit (no oplog, no change streams)");
        return true;
    }
    dest_view (on, &d, &d_run);
    online_capture_init (&to);
    /* Where the log stands now bounds the read (writes nothing). */
    ch->nss = nss;
    ch->nns = nns;
    ok = online_capture_detect (&d, &to, err) && online_changes_read (&d, from, &to, ch, err);
    on->transient = d.transient;
    online_capture_destroy (&to);
    return ok;
}
