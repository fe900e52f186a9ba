/* summarize (the computed and subset patterns): for each parent of `into`,
 * $group-style accumulators over its matching children of `from` (joined
 * as embed joins, fed in `sort` order or `from`'s), written as fields of
 * the parent: top-level, or inside the document `as`. A field of the same
 * name is replaced where it stands (so a re-run refreshes in place), new
 * ones go at the end. Parents without children get what $group gives an
 * empty group. `from` is only read. */
#include <string.h>

#include "docbuf.h"
#include "embed_join.h"
#include "remodel/accum.h"

typedef struct {
    rm_engine_t *e;
    const rm_summarize_t *m;
    rm_ens_t *into;
    rm_store_t *next;
    rm_acc_t **accs;
    bson_t results;
    rm_buf_t doc;
    const uint8_t *pdoc; /* the parent being summarized */
    uint32_t plen;
} sum_t;

static bool
is_result (const rm_summarize_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp (m->names[i], key))
            return true;
    return false;
}

static void
append_result (sum_t *s, const char *name)
{
    bson_iter_t it;
    if (bson_iter_init_find (&it, &s->results, name))
        rm_docbuf_copy (&s->doc, &it);
}

/* The results as the document `as`. */
static void
append_as (sum_t *s)
{
    size_t sub;
    rm_docbuf_key (&s->doc, BSON_TYPE_DOCUMENT, s->m->as);
    sub = rm_docbuf_begin (&s->doc);
    rm_docbuf_append_all (&s->doc, &s->results);
    rm_docbuf_end (&s->doc, sub);
}

static bool
on_begin (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sum_t *s = ctx;
    (void) err;
    s->pdoc = doc;
    s->plen = len;
    for (size_t a = 0; a < s->m->n; a++)
        rm_acc_reset (s->accs[a]);
    return true;
}

static bool
on_child (void *ctx, const rm_child_t *c, bson_error_t *err)
{
    sum_t *s = ctx;
    for (size_t a = 0; a < s->m->n; a++)
        if (!rm_acc_add (s->accs[a], c->doc, c->len, c->seq, err)) {
            rm_error_prefix (err, "\"%s\"", s->m->names[a]);
            return false;
        }
    return true;
}

static bool
on_end (void *ctx, bson_error_t *err)
{
    sum_t *s = ctx;
    const rm_summarize_t *m = s->m;
    bool *written = NULL, as_written = false;
    bson_t d;
    bson_iter_t it;
    size_t start;

    bson_reinit (&s->results);
    for (size_t a = 0; a < m->n; a++)
        if (!rm_acc_finish (s->accs[a], &s->results, m->names[a], err))
            return false;

    rm_buf_reset (&s->doc);
    start = rm_docbuf_begin (&s->doc);
    written = m->as ? NULL : bson_malloc0 (m->n * sizeof *written);
    bson_init_static (&d, s->pdoc, s->plen);
    bson_iter_init (&it, &d);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (m->as && !strcmp (k, m->as)) {
            append_as (s);
            as_written = true;
        } else if (!m->as && is_result (m, k)) {
            for (size_t a = 0; a < m->n; a++)
                if (!strcmp (m->names[a], k) && !written[a]) {
                    append_result (s, k);
                    written[a] = true;
                }
        } else {
            rm_docbuf_copy (&s->doc, &it);
        }
    }
    if (m->as && !as_written)
        append_as (s);
    for (size_t a = 0; !m->as && a < m->n; a++)
        if (!written[a])
            append_result (s, m->names[a]);
    bson_free (written);
    rm_docbuf_end (&s->doc, start);
    return rm_store_add (s->next, s->doc.data, (uint32_t) s->doc.len, err);
}

static bool
on_finish (void *ctx, bson_error_t *err)
{
    sum_t *s = ctx;
    rm_store_t *next = s->next;
    s->next = NULL;
    return rm_engine_store_swap (s->into, next, err);
}

bool
rm_step_summarize_run (rm_engine_t *e, const rm_step_t *st, bson_error_t *err)
{
    const rm_summarize_t *m = &st->u.summarize;
    sum_t s;
    rm_join_t j = {.local = &m->local, .foreign = &m->foreign, .sort = &m->sort,
                   .from = &m->from, .into = &m->into, .begin = on_begin, .child = on_child,
                   .end = on_end, .finish = on_finish, .ctx = &s};
    bool ok;

    memset (&s, 0, sizeof s);
    s.e = e;
    s.m = m;
    s.into = rm_engine_find (e, &m->into);
    s.accs = bson_malloc0 (m->n * sizeof *s.accs);
    for (size_t a = 0; a < m->n; a++)
        s.accs[a] = rm_acc_new (m->accs[a]);
    bson_init (&s.results);
    s.next = rm_engine_store_new (e, s.into, err);
    ok = s.next && rm_join_run (e, &j, err);
    rm_store_destroy (s.next);
    for (size_t a = 0; a < m->n; a++)
        rm_acc_destroy (s.accs[a]);
    bson_free (s.accs);
    bson_destroy (&s.results);
    rm_buf_destroy (&s.doc);
    return ok;
}
