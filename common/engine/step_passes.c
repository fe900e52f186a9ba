/* How each step runs online (remodel/passes.h): which input a pass reads
 * range by range, which partners it fetches for each range, which of the
 * engine's outputs it keeps, and how those trace back to the documents
 * that made them. The transform itself is the engine's
 * (remodel/batchstep.h); this only makes sure each batch holds everything
 * its outputs depend on. Each kind's passes function lives in its step
 * file and is found in its row of the step table (step_class.h); what
 * they share is in passes_shared.c (below the step files, which this
 * file is above). */
#include <stdio.h>
#include <string.h>

#include "step_class.h"

static rm_trace_t
trace_of (const rm_pass_t *p)
{
    bool listed = false;
    if (rm_pass_traced (p)) {
        for (size_t o = 0; o < p->n_keep; o++)
            listed |= p->driver_list[o] != NULL;
        return listed ? RM_TRACE_LIST : p->by_id ? RM_TRACE_ID : RM_TRACE_FIELD;
    }
    if (!p->followed)
        return RM_TRACE_NONE;
    return p->series ? RM_TRACE_SERIES : RM_TRACE_HELD;
}

size_t
rm_step_passes (const rm_step_t *s, bool in_place, rm_pass_t *out, bson_error_t *err)
{
    const rm_step_class_t *k =
        (unsigned) s->kind < RM_STEP_N_KINDS ? &rm_step_classes[s->kind] : NULL;
    memset (out, 0, RM_MAX_PASSES * sizeof *out);
    out[0].partner = out[1].partner = -1;
    if (!k || !k->passes)
        return rm_pass_refuse (s, err, "not a step the online mode knows");
    if (in_place && !k->in_place) {
        /* "--in-place takes a, b and c": the kinds whose row says so. */
        char why[400];
        int total = 0, m = 0;
        size_t n = (size_t) snprintf (why, sizeof why, "--in-place takes");
        for (int i = 0; i < RM_STEP_N_KINDS; i++)
            total += rm_step_classes[i].in_place;
        for (int i = 0; i < RM_STEP_N_KINDS && n < sizeof why; i++)
            if (rm_step_classes[i].in_place)
                n += (size_t) snprintf (why + n, sizeof why - n, "%s %s",
                                        !m++ ? "" : m == total ? " and" : ",",
                                        rm_step_kind_name ((rm_step_kind_t) i));
        if (n < sizeof why)
            snprintf (why + n, sizeof why - n, " (the others make new documents: run them side "
                                               "by side, without --in-place)");
        return rm_pass_refuse (s, err, why);
    }
    size_t n = k->passes (s, out, err);
    /* by_id and the trace from what the outputs say, in one place; and
     * every partner's _id and key, which the join and the change log's
     * key map read of each. */
    for (size_t i = 0; i < n; i++) {
        if (out[i].partner >= 0 && out[i].partner_some) {
            rm_pass_t step = out[i]; /* what the step reads, after those two */
            out[i].n_partner_fields = 0;
            rm_pass_reads (&out[i], "_id", 3);
            rm_pass_reads (&out[i], out[i].partner_key->text, strlen (out[i].partner_key->text));
            for (size_t f = 0; f < step.n_partner_fields; f++)
                rm_pass_reads (&out[i], step.partner_fields[f], step.partner_lens[f]);
        }
        out[i].by_id = out[i].n_keep > 0;
        for (size_t o = 0; o < out[i].n_keep; o++)
            out[i].by_id &= out[i].driver_field[o] && !strcmp (out[i].driver_field[o], "_id");
        out[i].trace = trace_of (&out[i]);
    }
    return n;
}

bool
rm_pass_traced (const rm_pass_t *p)
{
    for (size_t o = 0; o < p->n_keep; o++)
        if (!p->driver_field[o] && !p->driver_list[o])
            return false;
    return p->n_keep > 0;
}

bool
rm_pass_followed (const rm_pass_t *p)
{
    return rm_pass_traced (p) || p->followed;
}

/* What the passes write, and what the step empties. */
size_t
rm_step_targets (const rm_step_t *s, const rm_pass_t *passes, size_t np, const rm_nsref_t **out)
{
    size_t n = 0, ne;
    const rm_nsref_t *emptied[4];
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < passes[i].n_keep; k++) {
            bool seen = false;
            for (size_t m = 0; m < n; m++)
                seen |= !strcmp (out[m]->text, passes[i].keep[k]->text);
            if (!seen)
                out[n++] = passes[i].keep[k];
        }
    ne = rm_step_empties (s, emptied, 4);
    for (size_t i = 0; i < ne; i++) {
        bool seen = false;
        for (size_t m = 0; m < n; m++)
            seen |= !strcmp (out[m]->text, emptied[i]->text);
        if (!seen)
            out[n++] = emptied[i];
    }
    return n;
}
