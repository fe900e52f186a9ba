/* Duplicate _ids (remodel/idcheck.h). A record a document: key (the
 * namespace's number, big-endian, then the _id's canonical key), value
 * {_id: ...} for the message. The per-namespace results are a small array
 * grown to the highest number seen, not a table per document. */
#include <string.h>

#include <bson/bson.h>

#include "remodel/buf.h"
#include "remodel/docpath.h"
#include "remodel/idcheck.h"
#include "remodel/sorter.h"
#include "remodel/value.h"
#include "sortkey.h"

typedef struct {
    uint64_t dups;
    char *first;
} ns_dups_t;

struct rm_idcheck {
    rm_sorter_t *sort;
    rm_buf_t key, val;
    ns_dups_t *ns;
    size_t n_ns;
};

rm_idcheck_t *
rm_idcheck_new (size_t memory, const char *tmpdir)
{
    rm_idcheck_t *c = bson_malloc0 (sizeof *c);
    c->sort = rm_sorter_new (memory, tmpdir, NULL, NULL);
    rm_buf_init (&c->key);
    rm_buf_init (&c->val);
    return c;
}

void
rm_idcheck_destroy (rm_idcheck_t *c)
{
    if (!c)
        return;
    rm_sorter_destroy (c->sort);
    rm_buf_destroy (&c->key);
    rm_buf_destroy (&c->val);
    for (size_t i = 0; i < c->n_ns; i++)
        bson_free (c->ns[i].first);
    bson_free (c->ns);
    bson_free (c);
}

bool
rm_idcheck_add (rm_idcheck_t *c, uint32_t ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bson_iter_t id;
    rm_raw_value_t v;
    uint8_t be[4], t;
    int32_t n;

    if (!rm_doc_field (doc, len, "_id", 3, &id))
        return true;
    rm_buf_reset (&c->key);
    rm_put_be32 (be, ns);
    rm_buf_append (&c->key, be, sizeof be);
    rm_key_append (&c->key, &id);
    /* {_id: <value>}, for the message: the value's bytes as they are. */
    if (!rm_raw_value_of (&id, &v))
        return true;
    t = (uint8_t) v.type;
    rm_buf_reset (&c->val);
    rm_buf_append (&c->val, "\0\0\0\0", 4);
    rm_buf_append (&c->val, &t, 1);
    rm_buf_append (&c->val, "_id", 4);
    rm_buf_append (&c->val, v.data, v.len);
    rm_buf_append (&c->val, "", 1);
    n = (int32_t) BSON_UINT32_TO_LE ((uint32_t) c->val.len);
    memcpy (c->val.data, &n, 4);
    return rm_sorter_add (c->sort, c->key.data, c->key.len, c->val.data, c->val.len, err);
}

static ns_dups_t *
ns_at (rm_idcheck_t *c, uint32_t ns)
{
    if (ns >= c->n_ns) {
        c->ns = bson_realloc (c->ns, (ns + 1) * sizeof *c->ns);
        memset (c->ns + c->n_ns, 0, (ns + 1 - c->n_ns) * sizeof *c->ns);
        c->n_ns = ns + 1;
    }
    return &c->ns[ns];
}

bool
rm_idcheck_finish (rm_idcheck_t *c, bson_error_t *err)
{
    const uint8_t *key, *val;
    size_t klen, vlen;
    int r;

    if (!rm_sorter_finish (c->sort, err))
        return false;
    rm_buf_reset (&c->key);
    while ((r = rm_sorter_next (c->sort, &key, &klen, &val, &vlen, err)) == 1) {
        if (c->key.len == klen && !memcmp (c->key.data, key, klen)) {
            /* Named as the first document of the group has it. */
            ns_dups_t *d = ns_at (c, rm_get_be32 (key));
            bson_t b;
            if (d->dups++ == 0 && bson_init_static (&b, c->val.data, c->val.len))
                d->first = bson_as_relaxed_extended_json (&b, NULL);
            continue;
        }
        rm_buf_reset (&c->key);
        rm_buf_append (&c->key, key, klen);
        rm_buf_reset (&c->val);
        rm_buf_append (&c->val, val, vlen);
    }
    return r == 0;
}

uint64_t
rm_idcheck_dups (const rm_idcheck_t *c, uint32_t ns, const char **first)
{
    *first = ns < c->n_ns ? c->ns[ns].first : NULL;
    return ns < c->n_ns ? c->ns[ns].dups : 0;
}
