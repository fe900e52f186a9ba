/* The probes of one step (probe.h) for a caller outside the engine
 * (remodel/fieldcheck.h): the same rows of step_class.h, the same error.
 * The paths the step reads beyond its row's keys (engine_checks.c's
 * riders) are fields of their own here, each asked about by the caller:
 * `all` lists the row's probes and, after each, its riders. A join's
 * check (rm_fieldjoin_*) is the engine's own (probe.c's
 * rm_join_seen_check), given what the caller counted. */
#include "remodel/fieldcheck.h"

#include "engine_impl.h"
#include "step_class.h"

struct rm_fieldcheck {
    const rm_step_t *s;
    rm_step_run_t run;
    rm_probe_t **all;
    size_t n_all;
};

static void
list_all (rm_fieldcheck_t *c)
{
    size_t n = c->run.n_probes;
    for (size_t i = 0; i < c->run.n_probes; i++)
        n += c->run.probes[i].n_riders;
    c->all = bson_malloc0 ((n + 1) * sizeof *c->all);
    for (size_t i = 0; i < c->run.n_probes; i++) {
        c->all[c->n_all++] = &c->run.probes[i];
        for (size_t r = 0; r < c->run.probes[i].n_riders; r++)
            c->all[c->n_all++] = &c->run.probes[i].riders[r];
    }
}

rm_fieldcheck_t *
rm_fieldcheck_new (const rm_step_t *s, bool allow_missing)
{
    rm_fieldcheck_t *c = bson_malloc0 (sizeof *c);
    c->s = s;
    if (!allow_missing && !s->allow_missing && rm_step_classes[s->kind].probes) {
        rm_step_classes[s->kind].probes (s, &c->run);
        rm_engine_add_read_probes (s, &c->run);
    }
    list_all (c);
    return c;
}

rm_fieldcheck_t *
rm_fieldcheck_reads (const rm_step_t *s)
{
    rm_fieldcheck_t *c = bson_malloc0 (sizeof *c);
    c->s = s;
    if (rm_step_classes[s->kind].probes)
        rm_step_classes[s->kind].probes (s, &c->run);
    list_all (c);
    return c;
}

void
rm_fieldcheck_destroy (rm_fieldcheck_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->run.n_probes; i++)
        rm_probe_destroy (&c->run.probes[i]);
    bson_free (c->run.probes);
    bson_free (c->all);
    bson_free (c);
}

size_t
rm_fieldcheck_count (const rm_fieldcheck_t *c)
{
    return c->n_all;
}

const char *
rm_fieldcheck_path (const rm_fieldcheck_t *c, size_t i)
{
    return c->all[i]->path.text;
}

const char *
rm_fieldcheck_ns (const rm_fieldcheck_t *c, size_t i)
{
    return c->all[i]->ns;
}

void
rm_fieldcheck_seen (rm_fieldcheck_t *c, size_t i)
{
    c->all[i]->seen = true;
}

void
rm_fieldcheck_doc (rm_fieldcheck_t *c, size_t i, const uint8_t *doc, uint32_t len)
{
    rm_probe_doc_alone (c->all[i], doc, len);
}

void
rm_fieldcheck_docs (rm_fieldcheck_t *c, size_t i, uint64_t n)
{
    c->all[i]->docs = n;
}

bool
rm_fieldcheck_result (const rm_fieldcheck_t *c, bson_error_t *err)
{
    for (size_t i = 0; i < c->run.n_probes; i++)
        if (!rm_probe_check (&c->run.probes[i], err)) {
            rm_error_prefix (err, "step %zu (%s)", c->s->index, c->s->op);
            return false;
        }
    return true;
}

/* The joins' sides, by kind (the natural home is a row of step_table.c,
 * as engine_checks.c says of what the joins read). */
static void
embed_sides (const rm_step_t *s, rm_fieldjoin_side_t *local, rm_fieldjoin_side_t *foreign)
{
    const rm_embed_t *m = &s->u.embed;
    *local = (rm_fieldjoin_side_t){m->into.text, m->local.text, s->filter};
    *foreign = (rm_fieldjoin_side_t){m->from.text, m->foreign.text, s->match};
}

static void
summarize_sides (const rm_step_t *s, rm_fieldjoin_side_t *local, rm_fieldjoin_side_t *foreign)
{
    const rm_summarize_t *m = &s->u.summarize;
    *local = (rm_fieldjoin_side_t){m->into.text, m->local.text, s->filter};
    *foreign = (rm_fieldjoin_side_t){m->from.text, m->foreign.text, s->match};
}

static void
denorm_sides (const rm_step_t *s, rm_fieldjoin_side_t *local, rm_fieldjoin_side_t *foreign)
{
    const rm_denorm_t *d = &s->u.denorm;
    *local = (rm_fieldjoin_side_t){d->in.text, d->local.text, s->filter};
    *foreign = (rm_fieldjoin_side_t){d->from.text, d->foreign.text, s->match};
}

/* lookups: the check counts references looked up (rm_join_seen_t). */
static const struct {
    void (*sides) (const rm_step_t *, rm_fieldjoin_side_t *, rm_fieldjoin_side_t *);
    bool lookups;
} joins[RM_STEP_N_KINDS] = {
    [RM_STEP_EMBED] = {embed_sides, false},
    [RM_STEP_SUMMARIZE] = {summarize_sides, false},
    [RM_STEP_DENORMALIZE] = {denorm_sides, true},
};

bool
rm_fieldjoin_sides (const rm_step_t *s, rm_fieldjoin_side_t *local, rm_fieldjoin_side_t *foreign)
{
    if (!joins[s->kind].sides)
        return false;
    joins[s->kind].sides (s, local, foreign);
    return true;
}

bool
rm_fieldjoin_result (const rm_step_t *s, bool allow_missing, const rm_fieldjoin_count_t *n,
                     bson_error_t *err)
{
    rm_fieldjoin_side_t local, foreign;
    rm_join_seen_t j = {.lookups = joins[s->kind].lookups, .found = n->found};
    if (!rm_fieldjoin_sides (s, &local, &foreign))
        return true;
    j.local = local.path;
    j.foreign = foreign.path;
    if (j.lookups) {
        j.refs = n->refs;
        j.refs_ns = local.ns;
        j.partners = n->partners;
        j.partner_ns = foreign.ns;
    } else {
        /* offline counts `from`'s documents matched to `into`'s */
        j.refs = n->partners;
        j.refs_ns = foreign.ns;
        j.partners = n->docs;
        j.partner_ns = local.ns;
    }
    if (rm_join_seen_check (&j, allow_missing || s->allow_missing, err))
        return true;
    rm_error_prefix (err, "step %zu (%s)", s->index, s->op);
    return false;
}
