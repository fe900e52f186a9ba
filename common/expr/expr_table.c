/* The catalogue: every operator this build evaluates, found by name in
 * the families' tables, and those refused by name with the reason
 * (docs/plans.md, "Expressions and filters", lists both). */
#include <string.h>

#include "expr_impl.h"

static const rm_xop_t *const families[] = {
    rm_xops_core, rm_xops_arith, rm_xops_convert, rm_xops_string, rm_xops_regex,
    rm_xops_date, rm_xops_array, rm_xops_object,
};
#define N_FAMILIES (sizeof families / sizeof families[0])

const rm_xop_t *
rm_xop_find (const char *name)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const rm_xop_t *op = families[f]; op->name; op++)
            if (!strcmp (op->name, name))
                return op;
    return NULL;
}

static const struct {
    const char *name, *why;
} refused[] = {
    {"$function", "it runs JavaScript on the server"},
    {"$accumulator", "it runs JavaScript on the server"},
    {"$where", "it runs JavaScript on the server"},
    {"$meta", "it reads the server's search and text scores"},
    {"$rand", "a migration must give the same result on every run (use $$NOW or a field)"},
    {"$sampleRate", "a migration must give the same result on every run"},
    {"$toHashedIndexKey", "it needs the server's hash function"},
    {"$median", "not in this build yet (the server's approximate method is not written down)"},
    {"$percentile", "not in this build yet (the server's approximate method is not written down)"},
    {NULL, NULL},
};

const char *
rm_xop_refused (const char *name)
{
    for (size_t i = 0; refused[i].name; i++)
        if (refused[i].why && !strcmp (refused[i].name, name))
            return refused[i].why;
    return NULL;
}

/* The entry point: the parser is given the catalogue to look operators
 * up in, so that it sits below the families that call back into it. */
rm_expr_t *
rm_expr_parse (const bson_iter_t *it, bson_error_t *err)
{
    rm_xparse_t p;
    rm_expr_t *e = NULL;
    memset (&p, 0, sizeof p);
    p.find = rm_xop_find;
    p.refused = rm_xop_refused;
    if (!rm_xparse_expr (&p, it, &e, err))
        return NULL;
    return e;
}

bool
rm_expr_op_supported (const char *name)
{
    return rm_xop_find (name) != NULL;
}

const char *
rm_expr_op_name (size_t i)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const rm_xop_t *op = families[f]; op->name; op++)
            if (i-- == 0)
                return op->name;
    return NULL;
}
