/* The views' definitions (view_def.h): one per namespace, each a
 * collection and a pipeline, rewritten step by step from the plan's end. */
#include <stdio.h>
#include <string.h>

#include "view_def.h"

rm_view_def_t *
rm_views_get (rm_views_t *vs, const rm_nsref_t *ns)
{
    rm_view_def_t *d;
    for (size_t i = 0; i < vs->n; i++)
        if (!strcmp (vs->defs[i].ns, ns->text))
            return &vs->defs[i];
    if (vs->n == vs->cap) {
        vs->cap = vs->cap ? 2 * vs->cap : 8;
        vs->defs = bson_realloc (vs->defs, vs->cap * sizeof *vs->defs);
    }
    d = &vs->defs[vs->n++];
    memset (d, 0, sizeof *d);
    d->ns = bson_strdup (ns->text);
    d->db = bson_strdup (ns->db);
    d->coll = bson_strdup (ns->coll);
    bson_init (&d->pipeline);
    return d;
}

void
rm_views_def_clear (rm_view_def_t *d)
{
    bson_free (d->db);
    bson_free (d->coll);
    bson_free (d->why);
    bson_destroy (&d->pipeline);
    d->db = d->coll = d->why = NULL;
}

void
rm_views_destroy (rm_views_t *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        rm_views_def_clear (&vs->defs[i]);
        bson_free (vs->defs[i].ns);
    }
    bson_free (vs->defs);
    memset (vs, 0, sizeof *vs);
}

void
rm_views_copy (rm_view_def_t *dst, const rm_view_def_t *src)
{
    bson_t copy;
    if (dst == src) {
        dst->changed = true;
        return;
    }
    bson_copy_to (&src->pipeline, &copy);
    rm_views_def_clear (dst);
    dst->db = src->db ? bson_strdup (src->db) : NULL;
    dst->coll = src->coll ? bson_strdup (src->coll) : NULL;
    dst->why = src->why ? bson_strdup (src->why) : NULL;
    bson_copy_to (&copy, &dst->pipeline);
    bson_destroy (&copy);
    dst->changed = true;
}

void
rm_views_absent (rm_view_def_t *d)
{
    rm_views_def_clear (d);
    bson_init (&d->pipeline);
    d->changed = true;
}

void
rm_views_refuse (rm_views_t *vs, rm_view_def_t *d, const char *fmt, ...)
{
    va_list ap;
    char *reason;
    d->changed = true;
    if (d->why)
        return;
    va_start (ap, fmt);
    reason = bson_strdupv_printf (fmt, ap);
    va_end (ap);
    d->why = bson_strdup_printf ("step %zu (%s): %s", vs->s->index, vs->s->op, reason);
    bson_free (reason);
}

static bool
is_union (const bson_iter_t *stage)
{
    bson_iter_t in;
    return BSON_ITER_HOLDS_DOCUMENT (stage) && bson_iter_recurse (stage, &in) &&
           bson_iter_next (&in) && !strcmp (bson_iter_key (&in), "$unionWith");
}

static void
put_at (bson_t *arr, unsigned *k, const bson_t *doc)
{
    char key[16];
    const char *kp;
    bson_uint32_to_string (*k, &kp, key, sizeof key);
    BSON_APPEND_DOCUMENT (arr, kp, doc);
    (*k)++;
}

/* out: in with stage put before its trailing $unionWith stages and, the
 * same way, into each of their pipelines. */
static void
append_to (bson_t *out, const bson_t *in, const bson_t *stage)
{
    bson_iter_t it;
    unsigned n = 0, first_union = 0, i = 0, k = 0;
    bson_iter_init (&it, in);
    while (bson_iter_next (&it)) {
        n++;
        if (!is_union (&it))
            first_union = n;
    }
    bson_iter_init (&it, in);
    while (bson_iter_next (&it)) {
        if (i++ == first_union)
            put_at (out, &k, stage);
        if (i <= first_union) {
            char key[16];
            const char *kp;
            bson_uint32_to_string (k++, &kp, key, sizeof key);
            bson_append_iter (out, kp, -1, &it);
        } else {
            bson_iter_t u, f;
            bson_t st = BSON_INITIALIZER, body, sub, newsub = BSON_INITIALIZER;
            const uint8_t *data;
            uint32_t len;
            const char *coll = "";
            bson_iter_recurse (&it, &u);
            bson_iter_next (&u);
            bson_init (&sub);
            if (bson_iter_recurse (&u, &f))
                while (bson_iter_next (&f)) {
                    if (!strcmp (bson_iter_key (&f), "coll"))
                        coll = bson_iter_utf8 (&f, NULL);
                    else if (!strcmp (bson_iter_key (&f), "pipeline")) {
                        bson_iter_array (&f, &len, &data);
                        bson_destroy (&sub);
                        bson_init_static (&sub, data, len);
                    }
                }
            append_to (&newsub, &sub, stage);
            BSON_APPEND_DOCUMENT_BEGIN (&st, "$unionWith", &body);
            BSON_APPEND_UTF8 (&body, "coll", coll);
            BSON_APPEND_ARRAY (&body, "pipeline", &newsub);
            bson_append_document_end (&st, &body);
            put_at (out, &k, &st);
            bson_destroy (&st);
            bson_destroy (&newsub);
            bson_destroy (&sub);
        }
    }
    if (first_union == n)
        put_at (out, &k, stage);
}

void
rm_views_append (rm_view_def_t *d, bson_t *stage)
{
    bson_t out = BSON_INITIALIZER;
    append_to (&out, &d->pipeline, stage);
    bson_destroy (&d->pipeline);
    bson_copy_to (&out, &d->pipeline);
    bson_destroy (&out);
    bson_destroy (stage);
    d->changed = true;
}

void
rm_views_union (rm_views_t *vs, rm_view_def_t *d, const rm_view_def_t *other)
{
    bson_t st = BSON_INITIALIZER, body;
    unsigned k = bson_count_keys (&d->pipeline);
    if (other->why)
        rm_views_refuse (vs, d, "%s", other->why);
    if (d->why || !other->coll)
        return;
    if (!d->coll) {
        rm_views_copy (d, other);
        return;
    }
    if (strcmp (d->db, other->db) != 0) {
        rm_views_refuse (vs, d, "it reads %s.%s, another database than %s.%s's (a view reads "
                                "one database)",
                         other->db, other->coll, d->db, d->coll);
        return;
    }
    if (RM_COMPILE_V (vs->version) < RM_COMPILE_VERSION (4, 4)) {
        rm_views_refuse (vs, d, "the view needs $unionWith (MongoDB 4.4) to add %s.%s's "
                                "documents",
                         other->db, other->coll);
        return;
    }
    BSON_APPEND_DOCUMENT_BEGIN (&st, "$unionWith", &body);
    BSON_APPEND_UTF8 (&body, "coll", other->coll);
    BSON_APPEND_ARRAY (&body, "pipeline", &other->pipeline);
    bson_append_document_end (&st, &body);
    put_at (&d->pipeline, &k, &st);
    bson_destroy (&st);
    d->changed = true;
}
