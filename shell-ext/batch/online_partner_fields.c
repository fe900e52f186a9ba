/* A pass's partners fetched with only the fields it reads of them
 * (remodel/passes.h's partner_fields): what a partner holds besides
 * changes none of the pass's results, and the server need not send it
 * (FerretDB: a fifth of the CPU of a find of people by _id, BENCHMARKS.md
 * "Online workers"). The fields are top-level names, so each comes back
 * whole, as it is stored. */
#include "online_batch.h"

bool
online_partner_projection (const rm_pass_t *p, bson_t *opts)
{
    bson_t proj;
    if (p->partner < 0 || !p->partner_some)
        return false;
    BSON_APPEND_DOCUMENT_BEGIN (opts, "projection", &proj);
    for (size_t i = 0; i < p->n_partner_fields; i++)
        bson_append_int32 (&proj, p->partner_fields[i], (int) p->partner_lens[i], 1);
    bson_append_document_end (opts, &proj);
    return true;
}
