/* Duplicate _ids in a dump's namespaces (remodel/idcheck.h), for inspect
 * and check --against: one sort, one message. */
#include <stdio.h>

#include "remodel/idcheck.h"
#include "tool.h"

/* The engine's default when --memory is not given (remodel/engine.h). */
#define DEFAULT_MEMORY ((size_t) 512 << 20)

size_t
tool_idcheck_budget (const tool_opts_t *o)
{
    return (o->memory ? o->memory : DEFAULT_MEMORY) / 4;
}

rm_idcheck_t *
tool_idcheck_new (const tool_opts_t *o)
{
    return rm_idcheck_new (tool_idcheck_budget (o), o->tmpdir);
}

bool
tool_idcheck_error (const rm_idcheck_t *c, const rm_dump_info_t *info, bson_error_t *err)
{
    size_t bad = 0, at = 0;
    for (size_t i = 0; i < info->n_ns; i++) {
        const char *first;
        if (rm_idcheck_dups (c, (uint32_t) i, &first) && !bad++)
            at = i;
    }
    if (bad) {
        const char *first;
        char name[512], more[64] = "";
        uint64_t n = rm_idcheck_dups (c, (uint32_t) at, &first);
        if (bad > 1)
            snprintf (more, sizeof more, " (and %zu more namespace(s))", bad - 1);
        rm_error_set (err, RM_ERR_DATA, "%s: %llu document(s) with an _id an earlier document "
                      "of it has (the first: %s): mongorestore would fail on them%s",
                      rm_ns_name (info->ns[at], name, sizeof name), (unsigned long long) n,
                      first ? first : "?", more);
        return false;
    }
    return true;
}
