/* The write decisions of online_write.c, without a server (online_batch.h,
 * its "server-free decisions"): given the document as read and what the
 * step makes of it, which write to send and on which condition; what its
 * backup notes; whether both fit; what a replacement must give back of
 * the application's; and what an insert refused with duplicate keys
 * leaves to rewrite. Each takes and gives plain values (documents,
 * counts), so tests/unit/test_online_write.c tries every branch. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"

/* Beyond this many top-level fields the checks below (quadratic) are not
 * worth it: the document is replaced. */
#define FIELD_UPDATE_MAX 64

/* Room in a backup for the checksums later versions add ($addToSet of
 * read and wrote_all: 11 bytes each), a dozen of each. */
#define BACKUP_ROOM 264

/* Whether a field name can stand as a path in $set or $unset. */
static bool
plain_name (const char *k)
{
    return *k && *k != '$' && !strchr (k, '.');
}

static bool
find_raw (const uint8_t *doc, uint32_t len, const char *k, rm_raw_value_t *v)
{
    bson_iter_t it;
    return bson_iter_init_from_data (&it, doc, len) && bson_iter_find (&it, k) &&
           rm_raw_value_of (&it, v);
}

static bool
same_raw (const rm_raw_value_t *a, const rm_raw_value_t *b)
{
    return a->type == b->type && a->len == b->len && memcmp (a->data, b->data, a->len) == 0;
}

uint64_t
online_fields_digest (const uint8_t *doc, uint32_t len)
{
    bson_iter_t it;
    uint64_t sum = 0;
    if (!bson_iter_init_from_data (&it, doc, len))
        return 0;
    while (bson_iter_next (&it)) {
        rm_raw_value_t v;
        const char *k = bson_iter_key (&it);
        uint64_t h = rm_crc64_update (0, (const uint8_t *) k, strlen (k) + 1);
        if (rm_raw_value_of (&it, &v)) {
            h = rm_crc64_update (h, &v.type, 1);
            h = rm_crc64_update (h, v.data, v.len);
        }
        sum += h;
    }
    return sum;
}

/* rollback gives back what remodel wrote of doc, field by field, keeping
 * the application's (online_undo.c); for a backup of an earlier remodel
 * (no fieldsWrote), doc where the document is still what remodel last
 * wrote and every version remodel read of it was the original or one it
 * wrote: no change of the application's is lost. */
void
online_write_backup (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen,
                     bson_t *sel, bson_t *u)
{
    bson_t inner, d;
    int64_t wrote = (int64_t) rm_crc64_update (0, want, wlen);
    bool whole;
    online_id_filter (doc, len, sel);
    bson_init (u);
    BSON_APPEND_DOCUMENT_BEGIN (u, "$setOnInsert", &inner);
    if (bson_init_static (&d, doc, len))
        BSON_APPEND_DOCUMENT (&inner, "doc", &d);
    bson_append_document_end (u, &inner);
    bson_init (&d);
    BSON_APPEND_INT64 (&d, "read", (int64_t) rm_crc64_update (0, doc, len));
    BSON_APPEND_INT64 (&d, "wrote_all", wrote);
    /* Field by field too, so that rollback keeps the application's
     * (online_undo.c). */
    whole = !online_undo_note (doc, len, want, wlen, &d);
    BSON_APPEND_DOCUMENT_BEGIN (u, "$set", &inner);
    BSON_APPEND_INT64 (&inner, "wrote", wrote);
    BSON_APPEND_INT64 (&inner, "wroteFields", (int64_t) online_fields_digest (want, wlen));
    if (whole)
        BSON_APPEND_BOOL (&inner, "undoWhole", true);
    bson_append_document_end (u, &inner);
    BSON_APPEND_DOCUMENT (u, "$addToSet", &d);
    bson_destroy (&d);
}

/* The size of a document's backup (online_write_backup): {_id, doc: <the
 * original>, wrote, wroteFields, read: [crc], wrote_all: [crc]}, and
 * BACKUP_ROOM. */
static uint64_t
backup_size (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen)
{
    bson_iter_t it;
    rm_raw_value_t v;
    uint64_t id = rm_doc_field (doc, len, "_id", 3, &it) && rm_raw_value_of (&it, &v) ? v.len : 0;
    return 4 + (1 + 4 + id) + (1 + 4 + (uint64_t) len) + (1 + 6 + 8) + (1 + 12 + 8) +
           (1 + 5 + 4 + 11 + 1) + (1 + 10 + 4 + 11 + 1) + 1 + BACKUP_ROOM +
           online_undo_room (doc, len, want, wlen);
}

online_write_fit_t
online_write_fits (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen,
                   uint64_t *size)
{
    uint64_t backup = backup_size (doc, len, want, wlen);
    if (wlen > ONLINE_DOC_MAX) {
        *size = wlen;
        return ONLINE_WRITE_DOC_TOO_LARGE;
    }
    *size = backup;
    return backup > ONLINE_DOC_MAX ? ONLINE_WRITE_BACKUP_TOO_LARGE : ONLINE_WRITE_FITS;
}

/* Whether want keeps doc's fields in doc's order, with new ones only after
 * them, in lexicographic order (MongoDB 5.0+ appends several new fields
 * in that order, older servers and the test servers in the order given:
 * then both agree), every name one $set can take. */
static bool
reachable (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen)
{
    bson_iter_t a, b;
    const char *last_new = NULL;
    rm_raw_value_t v;
    size_t n = 0;

    if (!bson_iter_init_from_data (&a, doc, len) || !bson_iter_init_from_data (&b, want, wlen))
        return false;
    while (bson_iter_next (&b)) {
        const char *k = bson_iter_key (&b);
        if (++n > FIELD_UPDATE_MAX)
            return false;
        if (!find_raw (doc, len, k, &v)) {
            if (!plain_name (k) || (last_new && strcmp (last_new, k) >= 0))
                return false;
            last_new = k;
            continue;
        }
        if (last_new)
            return false; /* an old field after a new one: it moved */
        /* doc's next field that want keeps must be this one */
        for (;;) {
            if (!bson_iter_next (&a))
                return false;
            if (strcmp (bson_iter_key (&a), k) == 0)
                break;
            if (find_raw (want, wlen, bson_iter_key (&a), &v))
                return false; /* kept, but later in want: moved */
        }
    }
    return true;
}

online_write_form_t
online_write_form (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen,
                   bson_t *u)
{
    bson_iter_t it;
    bson_t set, unset;
    rm_raw_value_t ov, wv;
    size_t n_set = 0, n_unset = 0;
    bool ok = true;

    bson_init (u);
    if (!reachable (doc, len, want, wlen))
        return ONLINE_WRITE_REPLACE;
    bson_init (&set);
    bson_init (&unset);
    bson_iter_init_from_data (&it, want, wlen);
    while (ok && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (find_raw (doc, len, k, &ov) && rm_raw_value_of (&it, &wv) && same_raw (&ov, &wv))
            continue;
        ok = plain_name (k) && bson_append_iter (&set, k, -1, &it);
        n_set++;
    }
    bson_iter_init_from_data (&it, doc, len);
    while (ok && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (find_raw (want, wlen, k, &wv))
            continue;
        ok = plain_name (k) && BSON_APPEND_UTF8 (&unset, k, "");
        n_unset++;
    }
    ok = ok && (n_set || n_unset);
    if (ok && n_set)
        BSON_APPEND_DOCUMENT (u, "$set", &set);
    if (ok && n_unset)
        BSON_APPEND_DOCUMENT (u, "$unset", &unset);
    bson_destroy (&set);
    bson_destroy (&unset);
    return ok ? ONLINE_WRITE_FIELDS : ONLINE_WRITE_REPLACE;
}

/* Adds to sel the condition that doc's top-level field of path (up to its
 * first dot) is as read: its value, or {$exists: false}; once a name. */
static void
filter_field (bson_t *sel, const uint8_t *doc, uint32_t len, const char *path)
{
    int n = (int) strcspn (path, ".");
    bson_iter_t it;
    bson_t inner;

    if (n == 3 && !memcmp (path, "_id", 3))
        return;
    if (bson_iter_init (&it, sel) && bson_iter_find_w_len (&it, path, n))
        return;
    if (bson_iter_init_from_data (&it, doc, len) && bson_iter_find_w_len (&it, path, n)) {
        bson_append_iter (sel, path, n, &it);
        return;
    }
    bson_append_document_begin (sel, path, n, &inner);
    BSON_APPEND_BOOL (&inner, "$exists", false);
    bson_append_document_end (sel, &inner);
}

/* An application's change to any field the condition names makes the
 * write match nothing (the document is read again and redone); a change
 * to any other field neither stops it nor is overwritten by it, and the
 * server finds the document by _id instead of comparing it whole. */
void
online_write_filter (const rm_fieldcheck_t *reads, const char *ns, const uint8_t *doc,
                     uint32_t len, const bson_t *u, bson_t *sel)
{
    bson_iter_t op, f;

    online_id_filter (doc, len, sel);
    for (size_t i = 0; reads && i < rm_fieldcheck_count (reads); i++)
        if (!strcmp (rm_fieldcheck_ns (reads, i), ns))
            filter_field (sel, doc, len, rm_fieldcheck_path (reads, i));
    if (!bson_iter_init (&op, u))
        return;
    while (bson_iter_next (&op))
        if (BSON_ITER_HOLDS_DOCUMENT (&op) && bson_iter_recurse (&op, &f))
            while (bson_iter_next (&f))
                filter_field (sel, doc, len, bson_iter_key (&f));
}

/* Names a $set cannot take stay as the replacement left them; each field
 * given back is conditional on what want gave it, so a later write of the
 * application's stands. */
bool
online_write_give_back (const uint8_t *doc, uint32_t len, const uint8_t *pre, uint32_t plen,
                        const uint8_t *want, uint32_t wlen, bson_t *sel, bson_t *u)
{
    bson_t set = BSON_INITIALIZER;
    bson_iter_t it;
    rm_raw_value_t dv, pv;
    bool undid = false;

    online_id_filter (doc, len, sel);
    bson_init (u);
    bson_iter_init_from_data (&it, pre, plen);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (!strcmp (k, "_id") || !plain_name (k) ||
            (find_raw (doc, len, k, &dv) && rm_raw_value_of (&it, &pv) && same_raw (&dv, &pv)))
            continue;
        bson_append_iter (&set, k, -1, &it);
        filter_field (sel, want, wlen, k);
        undid = true;
    }
    if (undid)
        BSON_APPEND_DOCUMENT (u, "$set", &set);
    bson_destroy (&set);
    return undid;
}

/* Only duplicate keys are expected (a batch replayed after its write's
 * reply was lost). The failure must be theirs: one the server never
 * answered (the connection lost; the driver's reply holds writeErrors
 * then too, empty) vouches for nothing. */
online_insert_retry_t
online_insert_failed (const bson_t *reply, uint32_t code, bool rewrite_dups, const size_t *idx,
                      size_t from, size_t to, size_t *dups, size_t *nd)
{
    bson_iter_t it, e;
    int64_t inserted = bson_iter_init_find (&it, reply, "nInserted") ? bson_iter_as_int64 (&it)
                                                                     : -1;
    bool dups_only = rewrite_dups && code == 11000 &&
                     !(bson_iter_init_find (&it, reply, "writeConcernErrors") &&
                       bson_iter_recurse (&it, &e) && bson_iter_next (&e)) &&
                     bson_iter_init_find (&it, reply, "writeErrors") && bson_iter_recurse (&it, &e);
    *nd = 0;
    while (dups_only && bson_iter_next (&e)) {
        bson_iter_t f, g;
        int64_t at = -1, c = 0;
        if (bson_iter_recurse (&e, &f) && bson_iter_find (&f, "index"))
            at = bson_iter_as_int64 (&f);
        if (bson_iter_recurse (&e, &g) && bson_iter_find (&g, "code"))
            c = bson_iter_as_int64 (&g);
        if (c != 11000 || at < 0 || from + (size_t) at >= to || *nd == to - from)
            dups_only = false;
        else
            dups[(*nd)++] = idx[from + (size_t) at];
    }
    if (!dups_only || *nd == 0)
        return ONLINE_INSERT_FAIL;
    if (inserted >= 0 && (size_t) inserted + *nd == to - from)
        return ONLINE_INSERT_REWRITE_DUPS;
    return ONLINE_INSERT_REWRITE_ALL;
}
