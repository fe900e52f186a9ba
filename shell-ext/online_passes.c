/* How each step runs online (online.h): which input a pass reads range by
 * range, which partners it fetches for each range, and which of the
 * engine's outputs it keeps. The transform itself is the engine's
 * (remodel/batchstep.h); this only makes sure each batch holds everything
 * its outputs depend on. */
#include <string.h>

#include "online.h"

static bool
same_ns (const rm_nsref_t *a, const rm_nsref_t *b)
{
    return strcmp (a->text, b->text) == 0;
}

static size_t
refuse (const rm_step_t *s, bson_error_t *err, const char *why)
{
    rm_error_set (err, RM_ERR_UNSUPPORTED, "step %zu (%s): %s", s->index, s->op, why);
    return 0;
}

size_t
online_step_passes (const rm_step_t *s, bool in_place, online_pass_t *out, bson_error_t *err)
{
    memset (out, 0, 2 * sizeof *out);
    out[0].partner = out[1].partner = -1;
    switch (s->kind) {
    case RM_STEP_SET:
    case RM_STEP_UNSET:
    case RM_STEP_RENAME:
    case RM_STEP_VERSION:
        out[0].keep[out[0].n_keep++] = &s->u.fields.in;
        return 1;
    case RM_STEP_DENORMALIZE: {
        const rm_denorm_t *d = &s->u.denorm;
        if (same_ns (&d->in, &d->from))
            return refuse (s, err, "a namespace denormalized from itself runs offline only");
        out[0] = (online_pass_t){.drive = 0, .partner = 1, .drive_key = &d->local,
                                 .partner_key = &d->foreign, .keep = {&d->in}, .n_keep = 1};
        return 1;
    }
    case RM_STEP_SUMMARIZE: {
        const rm_summarize_t *m = &s->u.summarize;
        if (same_ns (&m->into, &m->from))
            return refuse (s, err, "a namespace summarized from itself runs offline only");
        out[0] = (online_pass_t){.drive = 0, .partner = 1, .drive_key = &m->local,
                                 .partner_key = &m->foreign, .keep = {&m->into}, .n_keep = 1};
        return 1;
    }
    default:
        break;
    }
    if (in_place)
        return refuse (s, err, "--in-place takes denormalize, summarize, set, unset, rename "
                               "and version (the others make new documents: run them side "
                               "by side, without --in-place)");
    switch (s->kind) {
    case RM_STEP_EMBED: {
        const rm_embed_t *m = &s->u.embed;
        if (same_ns (&m->into, &m->from))
            return refuse (s, err, "a namespace embedded into itself runs offline only");
        /* The parents, each with every child it matches; then, when the
         * matched children leave `from`, the children, each with every
         * parent that could take it: those no parent takes stay. */
        out[0] = (online_pass_t){.drive = 1, .partner = 0, .drive_key = &m->local,
                                 .partner_key = &m->foreign, .keep = {&m->into}, .n_keep = 1};
        if (m->on_overflow == RM_OVERFLOW_OUTLIER)
            out[0].keep[out[0].n_keep++] = &m->overflow_to;
        if (m->keep_source)
            return 1;
        out[1] = (online_pass_t){.drive = 0, .partner = 1, .drive_key = &m->foreign,
                                 .partner_key = &m->local, .keep = {&m->from}, .n_keep = 1};
        return 2;
    }
    case RM_STEP_EXTRACT:
        out[0].keep[out[0].n_keep++] = &s->u.extract.from;
        out[0].keep[out[0].n_keep++] = &s->u.extract.to;
        return 1;
    case RM_STEP_UNBUCKETIZE: {
        const rm_unbucketize_t *u = &s->u.unbucketize;
        /* The buckets' readings, then those onInvalid set aside; emptied
         * inputs (no keepSource) get no documents. */
        out[0].keep[out[0].n_keep++] = &u->to;
        if (!u->invalid_to.text)
            return 1;
        out[1].drive = 1;
        out[1].keep[out[1].n_keep++] = &u->to;
        return 2;
    }
    case RM_STEP_BUCKETIZE: {
        const rm_bucketize_t *b = &s->u.bucketize;
        /* A bucket needs every reading of its series in one batch: the
         * readings are read series by series of the metaField. */
        if (b->n_meta != 1)
            return refuse (s, err, "bucketize by several metaFields runs offline only (the "
                                   "online mode reads the readings series by series of one "
                                   "field)");
        out[0].series = b->meta[0];
        out[0].keep[out[0].n_keep++] = &b->to;
        if (b->invalid_to.text)
            out[0].keep[out[0].n_keep++] = &b->invalid_to;
        return 1;
    }
    default:
        return refuse (s, err, "not a step the online mode knows");
    }
}
