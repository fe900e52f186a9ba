/* The public document-level form of the per-document steps (docstep.h):
 * rm_fields_apply, the same function the offline engine runs them with. */
#include "engine_impl.h"
#include "remodel/docstep.h"

struct rm_docstep {
    const rm_step_t *s;
    rm_fields_scratch_t scratch;
};

bool
rm_docstep_in_place (const rm_step_t *s)
{
    return s->kind == RM_STEP_SET || s->kind == RM_STEP_UNSET || s->kind == RM_STEP_RENAME ||
           s->kind == RM_STEP_VERSION;
}

rm_docstep_t *
rm_docstep_new (const rm_step_t *s, bson_error_t *err)
{
    rm_docstep_t *d;
    if (!rm_docstep_in_place (s)) {
        rm_error_set (err, RM_ERR_UNSUPPORTED,
                      "step %zu (%s): not a document-at-a-time step (set, unset, rename, "
                      "version)", s->index, s->op);
        return NULL;
    }
    d = bson_malloc0 (sizeof *d);
    d->s = s;
    rm_fields_scratch_init (&d->scratch);
    return d;
}

bool
rm_docstep_apply (rm_docstep_t *d, const char *ns_name, const uint8_t *doc, size_t len,
                  const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    return rm_fields_apply (&d->scratch, d->s, ns_name, doc, len, out, out_len, err);
}

void
rm_docstep_destroy (rm_docstep_t *d)
{
    if (!d)
        return;
    rm_fields_scratch_destroy (&d->scratch);
    bson_free (d);
}
