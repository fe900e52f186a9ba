/* The server's state as the matrix judges it (matrix.h): every document of
 * every collection of crm (or shop's originals), byte for byte in _id order; the state database's
 * collections by name (a key map, a probe or a temporary left shows
 * there); the plan's record: there or not, finalized, a switch journaled,
 * an after-switch record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

static int
by_name (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

void
mx_coll_append (mx_coll_t *c, const bson_t *d)
{
    c->bytes = realloc (c->bytes, c->len + d->len);
    memcpy (c->bytes + c->len, bson_get_data (d), d->len);
    c->len += d->len;
    c->count++;
}

static bool
read_coll (mongoc_client_t *cl, const char *db, mx_coll_t *c, char *why, size_t cap)
{
    mongoc_collection_t *coll = mongoc_client_get_collection (cl, db, c->name);
    bson_t q = BSON_INITIALIZER, opts = BSON_INITIALIZER, sort;
    const bson_t *d;
    bson_error_t err;
    mongoc_cursor_t *cur;
    bool ok;

    BSON_APPEND_DOCUMENT_BEGIN (&opts, "sort", &sort);
    BSON_APPEND_INT32 (&sort, "_id", 1);
    bson_append_document_end (&opts, &sort);
    cur = mongoc_collection_find_with_opts (coll, &q, &opts, NULL);
    while (mongoc_cursor_next (cur, &d))
        mx_coll_append (c, d);
    if (!(ok = !mongoc_cursor_error (cur, &err)))
        snprintf (why, cap, "reading %s.%s: %s", db, c->name, err.message);
    mongoc_cursor_destroy (cur);
    if (ok) {
        char *names[32];
        size_t n = 0, at = 0;
        bson_iter_t it;
        cur = mongoc_collection_find_indexes_with_opts (coll, NULL);
        while (mongoc_cursor_next (cur, &d) && n < 32)
            if (bson_iter_init_find (&it, d, "name") && BSON_ITER_HOLDS_UTF8 (&it))
                names[n++] = bson_strdup (bson_iter_utf8 (&it, NULL));
        if (!(ok = !mongoc_cursor_error (cur, &err)))
            snprintf (why, cap, "listing %s.%s's indexes: %s", db, c->name, err.message);
        mongoc_cursor_destroy (cur);
        qsort (names, n, sizeof *names, by_name);
        for (size_t i = 0; i < n; i++) {
            if (at < sizeof c->indexes)
                at += (size_t) snprintf (c->indexes + at, sizeof c->indexes - at, "%s%s",
                                         i ? " " : "", names[i]);
            bson_free (names[i]);
        }
    }
    mongoc_collection_destroy (coll);
    bson_destroy (&q);
    bson_destroy (&opts);
    return ok;
}

/* A database's collections, sorted (system.* left out). */
static char **
names (mongoc_client_t *cl, const char *db_name, char *why, size_t cap)
{
    mongoc_database_t *db = mongoc_client_get_database (cl, db_name);
    bson_error_t err;
    char **n = mongoc_database_get_collection_names_with_opts (db, NULL, &err);
    size_t k = 0, j = 0;
    mongoc_database_destroy (db);
    if (!n) {
        snprintf (why, cap, "listing %s: %s", db_name, err.message);
        return NULL;
    }
    for (k = 0; n[k]; k++)
        if (strncmp (n[k], "system.", 7))
            n[j++] = n[k];
        else
            bson_free (n[k]);
    n[j] = NULL;
    qsort (n, j, sizeof *n, by_name);
    return n;
}

/* The journal's direction, counts and its moves' collections (at it). */
static void
read_journal (const bson_iter_t *at, mx_state_t *st)
{
    bson_iter_t sw, m, f;
    size_t len = 0;
    if (bson_iter_recurse (at, &sw) && bson_iter_find (&sw, "direction") &&
        BSON_ITER_HOLDS_UTF8 (&sw))
        bson_strncpy (st->direction, bson_iter_utf8 (&sw, NULL), sizeof st->direction);
    if (bson_iter_recurse (at, &sw) && bson_iter_find (&sw, "renames"))
        st->renames = bson_iter_as_int64 (&sw);
    if (bson_iter_recurse (at, &sw) && bson_iter_find (&sw, "renamed"))
        st->renamed = bson_iter_as_int64 (&sw);
    if (!bson_iter_recurse (at, &sw) || !bson_iter_find (&sw, "moves") ||
        !BSON_ITER_HOLDS_ARRAY (&sw) || !bson_iter_recurse (&sw, &m))
        return;
    while (bson_iter_next (&m))
        if (BSON_ITER_HOLDS_DOCUMENT (&m) && bson_iter_recurse (&m, &f) &&
            bson_iter_find (&f, "coll") && BSON_ITER_HOLDS_UTF8 (&f) && len < sizeof st->moves)
            len += (size_t) snprintf (st->moves + len, sizeof st->moves - len, "%s%s",
                                      len ? " " : "", bson_iter_utf8 (&f, NULL));
}

static bool
read_record (mongoc_client_t *cl, mx_state_t *st, char *why, size_t cap)
{
    mongoc_collection_t *plans = mongoc_client_get_collection (cl, "remodel", "plans");
    bson_t q = BSON_INITIALIZER;
    const bson_t *d;
    bson_error_t err;
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (plans, &q, NULL, NULL);
    bool ok;
    bson_iter_t it;

    /* The matrix runs one plan: its record is the only one. */
    while (mongoc_cursor_next (cur, &d)) {
        st->record = true;
        st->finalized = bson_iter_init_find (&it, d, "finalized") && bson_iter_as_bool (&it);
        st->journal = bson_iter_init_find (&it, d, "switch") && BSON_ITER_HOLDS_DOCUMENT (&it);
        if (st->journal)
            read_journal (&it, st);
        st->after_switch = bson_iter_init_find (&it, d, "afterSwitch");
    }
    if (!(ok = !mongoc_cursor_error (cur, &err)))
        snprintf (why, cap, "reading remodel.plans: %s", err.message);
    mongoc_cursor_destroy (cur);
    mongoc_collection_destroy (plans);
    bson_destroy (&q);
    return ok;
}

/* A result's name: NAME_remodel_ID_STEP, ID ending in 12 hex digits. */
static bool
is_result (const char *n)
{
    const char *r = strstr (n, "_remodel_"), *u = strrchr (n, '_');
    size_t hex = 0;
    if (!r || !u || !u[1] || strspn (u + 1, "0123456789") != strlen (u + 1) || u - n < 13)
        return false;
    for (const char *p = u - 12; p < u && strchr ("0123456789abcdef", *p); p++)
        hex++;
    return hex == 12 && u[-13] == '_';
}

bool
mx_state_read (mongoc_client_t *cl, unsigned scope, mx_state_t *st, char *why, size_t cap)
{
    const char *db = scope == MX_SCOPE_CRM ? "crm" : "shop";
    char **crm, **state;
    bool ok = true;

    memset (st, 0, sizeof *st);
    if (!(crm = names (cl, db, why, cap)))
        return false;
    for (size_t i = 0; crm[i] && ok; i++) {
        if (scope == MX_SCOPE_SHOP_ORIGINALS && is_result (crm[i]))
            continue;
        if (st->ncoll == sizeof st->coll / sizeof *st->coll) {
            snprintf (why, cap, "the database holds more than %zu collections", st->ncoll);
            ok = false;
            break;
        }
        mx_coll_t *c = &st->coll[st->ncoll++];
        bson_strncpy (c->name, crm[i], sizeof c->name);
        ok = read_coll (cl, db, c, why, cap);
    }
    bson_strfreev (crm);
    if (!ok || scope != MX_SCOPE_CRM)
        return ok;
    if (!(state = names (cl, "remodel", why, cap)))
        return false;
    for (size_t i = 0; state[i]; i++) {
        size_t at = strlen (st->state_names);
        snprintf (st->state_names + at, sizeof st->state_names - at, "%s%s", at ? " " : "",
                  state[i]);
    }
    bson_strfreev (state);
    return read_record (cl, st, why, cap);
}

void
mx_state_free (mx_state_t *st)
{
    for (size_t i = 0; i < st->ncoll; i++)
        free (st->coll[i].bytes);
    st->ncoll = 0;
}

const mx_coll_t *
mx_state_coll (const mx_state_t *st, const char *name)
{
    for (size_t i = 0; i < st->ncoll; i++)
        if (!strcmp (st->coll[i].name, name))
            return &st->coll[i];
    return NULL;
}

static void
list (const mx_state_t *st, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < st->ncoll && at < cap; i++)
        at += (size_t) snprintf (out + at, cap - at, "%s%s", i ? " " : "", st->coll[i].name);
}

bool
mx_state_same (const mx_state_t *got, const mx_state_t *want, char *why, size_t cap)
{
    char g[1024], w[1024];
    list (got, g, sizeof g);
    list (want, w, sizeof w);
    if (strcmp (g, w)) {
        snprintf (why, cap, "the database holds [%s], not [%s]", g, w);
        return false;
    }
    for (size_t i = 0; i < want->ncoll; i++) {
        const mx_coll_t *a = &got->coll[i], *b = &want->coll[i];
        if (strcmp (a->indexes, b->indexes)) {
            snprintf (why, cap, "%s: indexes [%s], not [%s]", a->name, a->indexes, b->indexes);
            return false;
        }
        if (a->count != b->count || a->len != b->len || memcmp (a->bytes, b->bytes, a->len)) {
            snprintf (why, cap, "%s: %zu documents (%zu bytes), not the %zu wanted (%zu "
                      "bytes), or not byte for byte", a->name, a->count, a->len, b->count, b->len);
            return false;
        }
    }
    if (strcmp (got->state_names, want->state_names)) {
        snprintf (why, cap, "the state database holds [%s], not [%s]", got->state_names,
                  want->state_names);
        return false;
    }
    if (got->record != want->record || got->finalized != want->finalized ||
        got->journal != want->journal || got->after_switch != want->after_switch) {
        snprintf (why, cap, "the plan's record: there %d, finalized %d, switch journaled %d, "
                  "afterSwitch %d; wanted %d, %d, %d, %d", got->record, got->finalized,
                  got->journal, got->after_switch, want->record, want->finalized, want->journal,
                  want->after_switch);
        return false;
    }
    return true;
}

bool
mx_coll_from_file (mx_coll_t *c, const char *name, const char *path)
{
    bson_reader_t *r = bson_reader_new_from_file (path, NULL);
    const bson_t *d;
    bool eof = false;
    memset (c, 0, sizeof *c);
    bson_strncpy (c->name, name, sizeof c->name);
    if (!r)
        return false;
    while ((d = bson_reader_read (r, &eof)))
        mx_coll_append (c, d);
    bson_reader_destroy (r);
    return eof;
}

/* The documents of c, each at its offset, for a sort. */
static const uint8_t **
docs (const mx_coll_t *c)
{
    const uint8_t **v = calloc (c->count + 1, sizeof *v);
    size_t k = 0;
    for (size_t at = 0; at + 4 <= c->len && k < c->count; k++) {
        uint32_t n;
        v[k] = c->bytes + at;
        memcpy (&n, v[k], 4);
        at += BSON_UINT32_FROM_LE (n);
    }
    return v;
}

static uint32_t
doc_len (const uint8_t *d)
{
    uint32_t n;
    memcpy (&n, d, 4);
    return BSON_UINT32_FROM_LE (n);
}

static int
by_bytes (const void *a, const void *b)
{
    const uint8_t *x = *(const uint8_t *const *) a, *y = *(const uint8_t *const *) b;
    uint32_t lx = doc_len (x), ly = doc_len (y);
    int c = memcmp (x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

bool
mx_coll_same_docs (const mx_coll_t *a, const mx_coll_t *b)
{
    const uint8_t **x, **y;
    bool same = a->count == b->count && a->len == b->len;
    if (!same)
        return false;
    x = docs (a), y = docs (b);
    qsort (x, a->count, sizeof *x, by_bytes);
    qsort (y, b->count, sizeof *y, by_bytes);
    for (size_t i = 0; i < a->count && same; i++)
        same = !by_bytes (&x[i], &y[i]);
    free (x);
    free (y);
    return same;
}
