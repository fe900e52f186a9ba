/* remodel run --preview N: the first N documents of each namespace a plan
 * touches, before (from the source) and after (the same _ids in the
 * result, or the first N of a namespace the plan made), printed as show
 * prints them. The result is a temporary archive the caller removes. */
#include <stdio.h>
#include <string.h>

#include "remodel/extjson.h"
#include "tool.h"

typedef struct {
    const char *name;
    bool created;
    rm_buf_t ids;       /* the before documents' _id keys, each prefixed by its length */
    rm_buf_t docs[2];   /* before, after: documents, each prefixed by its length */
    uint64_t n_before, n_after;
} preview_ns_t;

static void
print_header (const char *name, const char *when)
{
    fputs ("==> ", stdout);
    rm_cli_put_text (stdout, name, strlen (name));
    printf (": %s <==\n", when);
}

static void
print_doc (rm_buf_t *json, const uint8_t *doc, uint32_t len)
{
    rm_buf_reset (json);
    rm_extjson_doc (json, doc, len, RM_EXTJSON_RELAXED, false);
    rm_buf_append (json, "\n", 1);
    fwrite (json->data, 1, json->len, stdout);
}

static void
id_key (rm_buf_t *key, const uint8_t *doc, uint32_t len)
{
    bson_t b;
    bson_iter_t it;
    rm_buf_reset (key);
    bson_init_static (&b, doc, len);
    rm_key_append (key, bson_iter_init_find (&it, &b, "_id") ? &it : NULL);
}

static bool
has_id (const rm_buf_t *ids, const rm_buf_t *key)
{
    for (size_t at = 0; at + 4 <= ids->len;) {
        uint32_t n;
        memcpy (&n, ids->data + at, 4);
        if (n == key->len && memcmp (ids->data + at + 4, key->data, n) == 0)
            return true;
        at += 4 + n;
    }
    return false;
}

/* One pass over a dump: before (side 0) keeps the first n documents of
 * each namespace and their _ids; after (side 1) keeps the documents with
 * those _ids, or the first n of a created namespace. At most n documents
 * per namespace are held. */
static bool
pass (int side, const char *src, preview_ns_t *pn, size_t n_pn, uint64_t n, bson_error_t *err)
{
    rm_reader_t *r = rm_reader_open (src, NULL, err);
    rm_buf_t key;
    rm_item_t item;
    char name[512];
    int rc;

    if (!r)
        return false;
    rm_buf_init (&key);
    while ((rc = rm_reader_next (r, &item, err)) > 0) {
        preview_ns_t *p = NULL;
        if (item.kind != RM_ITEM_DOC)
            continue;
        rm_ns_name (item.ns, name, sizeof name);
        for (size_t i = 0; i < n_pn && !p; i++)
            if (strcmp (pn[i].name, name) == 0)
                p = &pn[i];
        if (!p || (side == 0 ? p->n_before : p->n_after) >= n)
            continue;
        id_key (&key, item.doc, item.len);
        if (side == 0) {
            uint32_t klen = (uint32_t) key.len;
            rm_buf_append (&p->ids, &klen, 4);
            rm_buf_append (&p->ids, key.data, key.len);
            p->n_before++;
        } else {
            if (p->n_before > 0 && !has_id (&p->ids, &key))
                continue;
            p->n_after++;
        }
        rm_buf_append (&p->docs[side], &item.len, 4);
        rm_buf_append (&p->docs[side], item.doc, item.len);
    }
    rm_buf_destroy (&key);
    rm_reader_close (r);
    return rc == 0;
}

static void
print_docs (rm_buf_t *json, const rm_buf_t *docs)
{
    for (size_t at = 0; at + 4 <= docs->len;) {
        uint32_t len;
        memcpy (&len, docs->data + at, 4);
        print_doc (json, docs->data + at + 4, len);
        at += 4 + len;
    }
}
bool
tool_preview (const char *src, const char *result, const rm_ns_stats_t *st, size_t n_st,
              uint64_t n, bson_error_t *err)
{
    preview_ns_t *pn = bson_malloc0 ((n_st + 1) * sizeof *pn);
    size_t n_pn = 0;
    rm_buf_t json;
    bool ok;

    for (size_t i = 0; i < n_st; i++)
        if (st[i].touched || st[i].created) {
            pn[n_pn].name = st[i].name;
            pn[n_pn].created = st[i].created;
            rm_buf_init (&pn[n_pn].ids);
            rm_buf_init (&pn[n_pn].docs[0]);
            rm_buf_init (&pn[n_pn].docs[1]);
            n_pn++;
        }
    ok = pass (0, src, pn, n_pn, n, err) && pass (1, result, pn, n_pn, n, err);
    rm_buf_init (&json);
    for (size_t i = 0; ok && i < n_pn; i++) {
        if (!pn[i].created) {
            print_header (pn[i].name, "before");
            print_docs (&json, &pn[i].docs[0]);
        }
        print_header (pn[i].name, pn[i].created ? "after (new)" : "after");
        print_docs (&json, &pn[i].docs[1]);
        if (!pn[i].created && pn[i].n_after < pn[i].n_before)
            printf ("(%llu of the documents above are gone)\n",
                    (unsigned long long) (pn[i].n_before - pn[i].n_after));
    }
    rm_buf_destroy (&json);
    for (size_t i = 0; i < n_pn; i++) {
        rm_buf_destroy (&pn[i].ids);
        rm_buf_destroy (&pn[i].docs[0]);
        rm_buf_destroy (&pn[i].docs[1]);
    }
    bson_free (pn);
    return ok;
}
