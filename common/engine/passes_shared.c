/* What the kinds' passes functions (step_class.h, one in each step file)
 * share: apart from step_passes.c, which reads the step table and so is
 * above the step files, while these are below them. */
#include <string.h>

#include "step_class.h"

bool
rm_pass_same_ns (const rm_nsref_t *a, const rm_nsref_t *b)
{
    return strcmp (a->text, b->text) == 0;
}

bool
rm_pass_is_id (const char *field)
{
    return field && (!strcmp (field, "_id") || !strncmp (field, "_id.", 4));
}

bool
rm_pass_any_id (char **fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (rm_pass_is_id (fields[i]))
            return true;
    return false;
}

size_t
rm_pass_refuse (const rm_step_t *s, bson_error_t *err, const char *why)
{
    rm_error_set (err, RM_ERR_UNSUPPORTED, "step %zu (%s): %s", s->index, s->op, why);
    return 0;
}

void
rm_pass_reads (rm_pass_t *p, const char *path, size_t len)
{
    const char *dot = memchr (path, '.', len);
    uint32_t top = (uint32_t) (dot ? (size_t) (dot - path) : len);
    if (!p->partner_some)
        return;
    for (size_t i = 0; i < p->n_partner_fields; i++)
        if (p->partner_lens[i] == top && !memcmp (p->partner_fields[i], path, top))
            return;
    if (!top || path[0] == '$' || p->n_partner_fields == RM_PASS_MAX_FIELDS) {
        p->partner_some = false;
        p->n_partner_fields = 0;
        return;
    }
    p->partner_fields[p->n_partner_fields] = path;
    p->partner_lens[p->n_partner_fields++] = top;
}
