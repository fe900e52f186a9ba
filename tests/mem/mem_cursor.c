/* Cursors: a query's results, kept whole when the first batch does not
 * hold them all, handed out by getMore, ended by killCursors or at the
 * last batch. */
#include <stdio.h>
#include <string.h>

#include "mem.h"

typedef struct {
    int64_t id;
    char ns[400];
    mem_list_t docs;
    size_t pos;
} cursor_t;

static cursor_t *cursors;
static size_t ncursors;
static int64_t next_id = 7340033;

/* Appends up to max documents of l from *pos (and at most 16 MiB) as
 * array key of reply. */
static void
batch (bson_t *cur, const char *key, mem_list_t *l, size_t *pos, int64_t max)
{
    bson_t arr;
    size_t bytes = 0;
    int i = 0;
    bson_append_array_begin (cur, key, -1, &arr);
    while (*pos < l->n && (max <= 0 || i < max) && bytes < 16 * 1024 * 1024) {
        char k[16];
        snprintf (k, sizeof k, "%d", i++);
        bytes += l->d[*pos]->len;
        bson_append_document (&arr, k, -1, l->d[*pos]);
        (*pos)++;
    }
    bson_append_array_end (cur, &arr);
}

void
mem_cursor_reply (const char *db, const char *coll, mem_list_t *docs, int64_t first, bson_t *reply)
{
    bson_t cur;
    size_t pos = 0;
    int64_t id = 0;
    char ns[400];
    snprintf (ns, sizeof ns, "%s.%s", db, coll);
    bson_append_document_begin (reply, "cursor", -1, &cur);
    batch (&cur, "firstBatch", docs, &pos, first);
    if (pos < docs->n) {
        cursor_t *c;
        cursors = bson_realloc (cursors, (ncursors + 1) * sizeof *cursors);
        c = &cursors[ncursors++];
        c->id = id = next_id++;
        bson_strncpy (c->ns, ns, sizeof c->ns);
        c->docs = *docs;
        c->pos = pos;
        memset (docs, 0, sizeof *docs);
    } else {
        mem_list_free (docs, true);
    }
    BSON_APPEND_INT64 (&cur, "id", id);
    BSON_APPEND_UTF8 (&cur, "ns", ns);
    bson_append_document_end (reply, &cur);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
end (size_t i)
{
    mem_list_free (&cursors[i].docs, true);
    memmove (cursors + i, cursors + i + 1, (ncursors - i - 1) * sizeof *cursors);
    ncursors--;
}

void
mem_cursor_more (int64_t id, int64_t size, bson_t *reply)
{
    for (size_t i = 0; i < ncursors; i++) {
        cursor_t *c = &cursors[i];
        bson_t cur;
        if (c->id != id)
            continue;
        bson_append_document_begin (reply, "cursor", -1, &cur);
        batch (&cur, "nextBatch", &c->docs, &c->pos, size);
        BSON_APPEND_INT64 (&cur, "id", c->pos < c->docs.n ? id : 0);
        BSON_APPEND_UTF8 (&cur, "ns", c->ns);
        bson_append_document_end (reply, &cur);
        BSON_APPEND_DOUBLE (reply, "ok", 1);
        if (c->pos >= c->docs.n)
            end (i);
        return;
    }
    {
        char msg[80];
        snprintf (msg, sizeof msg, "cursor id %lld not found", (long long) id);
        mem_error_reply (reply, MEM_E_CURSOR_NOT_FOUND, msg);
    }
}

bool
mem_cursor_kill (int64_t id)
{
    for (size_t i = 0; i < ncursors; i++)
        if (cursors[i].id == id) {
            end (i);
            return true;
        }
    return false;
}
