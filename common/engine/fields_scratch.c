/* A field step's scratch (fields_scratch.h) and one document through a
 * step, shared by the steps (step_fields.c) and the threads that compute
 * their documents ahead (fields_ahead.c). */
#include <string.h>

#include "fields_scratch.h"

void
rm_fields_scratch_init (rm_fields_scratch_t *sc, rm_engine_t *e, int64_t now_ms)
{
    memset (sc, 0, sizeof *sc);
    rm_buf_init (&sc->buf[0]);
    rm_buf_init (&sc->buf[1]);
    rm_buf_init (&sc->hold[0]);
    rm_buf_init (&sc->hold[1]);
    sc->cx = rm_expr_ctx_new (now_ms);
    sc->e = e;
}

void
rm_fields_scratch_destroy (rm_fields_scratch_t *sc)
{
    rm_buf_destroy (&sc->buf[0]);
    rm_buf_destroy (&sc->buf[1]);
    rm_buf_destroy (&sc->hold[0]);
    rm_buf_destroy (&sc->hold[1]);
    rm_expr_ctx_destroy (sc->cx);
    rm_field_run_destroy (sc->run);
    bson_free (sc->changed);
}

bool
rm_fields_done (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                const uint8_t *doc, size_t len, bool shallow, const uint8_t **out,
                size_t *out_len, bson_error_t *err)
{
    if (s->kind != RM_STEP_UNSET && !shallow &&
        !rm_engine_depth_ok (ns_name, "document", doc, len, *out, *out_len, err)) {
        if (!rm_engine_doc_error (sc->e, s, err))
            return false;
        *out = doc; /* left as it came, as a failing expression leaves it */
        *out_len = len;
    }
    rm_engine_rewrote (sc->e, s, doc, len, *out, *out_len);
    return true;
}

bool
rm_fields_rewrite (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                   const uint8_t *doc, size_t len, const uint8_t **out, size_t *out_len,
                   bson_error_t *err)
{
    const rm_fields_t *f = &s->u.fields;
    bool take = true;

    rm_expr_ctx_reset (sc->cx);
    /* The filter's reads and the set's share one walk of the document
     * (until the next reset). */
    rm_expr_ctx_hold (sc->cx, doc, (uint32_t) len);
    *out = doc;
    *out_len = len;
    if (!rm_engine_filter (sc->e, s, sc->cx, doc, (uint32_t) len, &take, err)) {
        rm_doc_error (err, ns_name, "document", doc, (uint32_t) len);
        return rm_engine_doc_error (sc->e, s, err);
    }
    if (!take)
        return true; /* passes byte for byte */
    if (s->kind == RM_STEP_SET) {
        /* Appended to a thread's job (into), else made in buf[0]. */
        rm_buf_t *b = sc->into ? sc->into : &sc->buf[0];
        if (!sc->into)
            rm_buf_reset (b);
        size_t at = b->len;
        if (!rm_expr_set_append (f->set, sc->cx, doc, (uint32_t) len, b, err)) {
            rm_doc_error (err, ns_name, "document", doc, (uint32_t) len);
            return rm_engine_doc_error (sc->e, s, err);
        }
        *out = b->data + at;
        *out_len = b->len - at;
        return true;
    }
    if (s->kind == RM_STEP_UNSET) {
        /* The $unset stage: all its paths in one copy. */
        bool changed;
        rm_expr_unset_apply (f->unset, doc, (uint32_t) len, &sc->buf[0], &changed);
        *out = sc->buf[0].data;
        *out_len = sc->buf[0].len;
        return true;
    }
    for (size_t i = 0; i < f->n; i++) {
        rm_buf_t *b = &sc->buf[i & 1];
        bool changed = false, ok;
        switch (s->kind) {
        case RM_STEP_VERSION:
            ok = rm_doc_set (b, doc, len, &f->paths[i], &f->raw[i], err);
            break;
        default:
            ok = rm_doc_rename (b, doc, len, &f->paths[i], &f->to[i], &changed, err);
            break;
        }
        if (!ok)
            return rm_doc_error (err, ns_name, "document", doc, (uint32_t) len);
        doc = b->data;
        len = b->len;
    }
    *out = doc;
    *out_len = len;
    return true;
}

void
rm_fields_count_step (rm_engine_t *e, const rm_step_t *s, bool changed)
{
    rm_step_run_t *run = rm_engine_step_run (e, s);
    run->counts = true;
    if (changed)
        run->changed++;
    else
        run->unchanged++;
}
