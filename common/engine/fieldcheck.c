/* The probes of one step (probe.h) for a caller outside the engine
 * (remodel/fieldcheck.h): the same rows of step_class.h, the same error. */
#include "remodel/fieldcheck.h"

#include "engine_impl.h"
#include "step_class.h"

struct rm_fieldcheck {
    const rm_step_t *s;
    rm_step_run_t run;
};

rm_fieldcheck_t *
rm_fieldcheck_new (const rm_step_t *s, bool allow_missing)
{
    rm_fieldcheck_t *c = bson_malloc0 (sizeof *c);
    c->s = s;
    if (!allow_missing && !s->allow_missing && rm_step_classes[s->kind].probes)
        rm_step_classes[s->kind].probes (s, &c->run);
    return c;
}

rm_fieldcheck_t *
rm_fieldcheck_reads (const rm_step_t *s)
{
    rm_fieldcheck_t *c = bson_malloc0 (sizeof *c);
    c->s = s;
    if (rm_step_classes[s->kind].probes)
        rm_step_classes[s->kind].probes (s, &c->run);
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
    bson_free (c);
}

size_t
rm_fieldcheck_count (const rm_fieldcheck_t *c)
{
    return c->run.n_probes;
}

const char *
rm_fieldcheck_path (const rm_fieldcheck_t *c, size_t i)
{
    return c->run.probes[i].path.text;
}

const char *
rm_fieldcheck_ns (const rm_fieldcheck_t *c, size_t i)
{
    return c->run.probes[i].ns;
}

void
rm_fieldcheck_seen (rm_fieldcheck_t *c, size_t i)
{
    c->run.probes[i].seen = true;
}

void
rm_fieldcheck_doc (rm_fieldcheck_t *c, size_t i, const uint8_t *doc, uint32_t len)
{
    rm_probe_doc (&c->run.probes[i], doc, len);
}

void
rm_fieldcheck_docs (rm_fieldcheck_t *c, size_t i, uint64_t n)
{
    c->run.probes[i].docs = n;
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
