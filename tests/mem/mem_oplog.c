/* The change log (--oplog): local.oplog.rs, a capped collection of the
 * store, as FerretDB keeps one (tests/peers/server.sh, docs/online.md):
 * {ts: Timestamp, op: i|u|d|c, ns, o, o2}. i has the document, d and
 * o2 of u the _id, u the document after, c the command. Writes to local
 * are not logged. A restore brings back the oplog with the data; the
 * clock of ts keeps going forward.
 *
 * A hole, as FerretDB makes under load (it takes an entry's ts, then
 * inserts it, so another connection's later entry can be read first):
 * mem_oplog_hold (n, ns) gives the next n entries of namespace ns their
 * ts but keeps them back (other namespaces' go in: a test's remodel
 * writes its own state meanwhile), and mem_oplog_release inserts them
 * after whatever came since. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mem.h"

static bool on;
static bool paused;
static uint32_t last_t, last_i;
#define MAX_HELD 16
static bson_t *held[MAX_HELD];
static int n_held, to_hold;
static char hold_ns[400];

void
mem_oplog_configure (bool enabled, int64_t bytes)
{
    mem_coll_t *c;
    bson_t o = BSON_INITIALIZER;
    on = enabled;
    if (!on)
        return;
    c = mem_coll_create (mem_store (), "local", "oplog.rs");
    c->capped = true;
    c->max_bytes = bytes;
    BSON_APPEND_BOOL (&o, "capped", true);
    BSON_APPEND_INT64 (&o, "size", bytes);
    bson_concat (&c->options, &o);
    bson_destroy (&o);
}

void
mem_oplog_pause (bool p)
{
    paused = p;
}

void
mem_oplog_hold (int n, const char *ns)
{
    to_hold = n < MAX_HELD ? n : MAX_HELD;
    snprintf (hold_ns, sizeof hold_ns, "%s", ns);
}

void
mem_oplog_release (void)
{
    mem_coll_t *log = mem_coll_find (mem_store (), "local", "oplog.rs");
    bson_error_t err;
    for (int k = 0; k < n_held; k++) {
        if (log)
            mem_coll_insert (log, held[k], &err);
        bson_destroy (held[k]);
    }
    n_held = to_hold = 0;
}

void
mem_oplog_log (const char *op, const char *db, const char *coll, const bson_t *o, const bson_t *o2)
{
    mem_coll_t *log;
    bson_t e = BSON_INITIALIZER;
    bson_error_t err;
    char ns[400];
    uint32_t t = (uint32_t) time (NULL);
    if (!on || paused || !strcmp (db, "local"))
        return;
    if (!(log = mem_coll_find (mem_store (), "local", "oplog.rs")))
        return;
    /* Increasing: the second, and a counter within it. */
    if (t <= last_t) {
        t = last_t;
        last_i++;
    } else {
        last_i = 1;
    }
    last_t = t;
    snprintf (ns, sizeof ns, "%s.%s", db, coll);
    BSON_APPEND_TIMESTAMP (&e, "ts", last_t, last_i);
    BSON_APPEND_INT64 (&e, "t", 1);
    BSON_APPEND_UTF8 (&e, "op", op);
    BSON_APPEND_UTF8 (&e, "ns", ns);
    BSON_APPEND_DOCUMENT (&e, "o", o);
    if (o2)
        BSON_APPEND_DOCUMENT (&e, "o2", o2);
    {
        struct timespec now;
        clock_gettime (CLOCK_REALTIME, &now);
        BSON_APPEND_DATE_TIME (&e, "wall", (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
    }
    if (to_hold > 0 && n_held < MAX_HELD && !strcmp (ns, hold_ns)) {
        to_hold--;
        held[n_held++] = bson_copy (&e);
        bson_destroy (&e);
        return;
    }
    /* No _id: an oplog entry has none; the _id hash skips it. */
    mem_coll_insert (log, &e, &err);
    bson_destroy (&e);
}
