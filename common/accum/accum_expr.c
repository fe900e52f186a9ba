/* The expressions an accumulator evaluates for each document, as $group
 * takes them: any aggregation expression (remodel/expr.h), from a path
 * ("$qty") to {"$multiply": ["$qty", "$unitPrice"]}. What the accumulators
 * want of one is a value as a libbson iterator (kept in the caller's
 * scratch document, reused) or appended to a document of theirs. The
 * evaluation context is the caller's (one per accumulator state), reset
 * once per document by the caller. */
#include <string.h>

#include "remodel/error.h"
#include "remodel/expr.h"

#include "accum_impl.h"

struct rm_acc_expr {
    rm_expr_t *x;
    bson_t *lit; /* a constant's value as {"v": value} (rm_acc_expr_literal) */
};

void
rm_acc_expr_destroy (rm_acc_expr_t *e)
{
    if (!e)
        return;
    rm_expr_destroy (e->x);
    if (e->lit)
        bson_destroy (e->lit);
    bson_free (e);
}

static rm_acc_expr_t *
wrap (rm_expr_t *x)
{
    rm_acc_expr_t *e;
    const bson_value_t *v;

    if (!x)
        return NULL;
    e = bson_malloc0 (sizeof *e);
    e->x = x;
    if (rm_expr_constant (x, &v)) {
        e->lit = bson_new ();
        bson_append_value (e->lit, "v", 1, v);
    }
    return e;
}

rm_acc_expr_t *
rm_acc_expr_parse (const bson_iter_t *it, bson_error_t *err)
{
    return wrap (rm_expr_parse (it, err));
}

rm_acc_expr_t *
rm_acc_expr_path (const char *dotted, bson_error_t *err)
{
    bson_t d = BSON_INITIALIZER;
    bson_iter_t it;
    char *s = bson_strdup_printf ("$%s", dotted);
    rm_acc_expr_t *e;

    BSON_APPEND_UTF8 (&d, "p", s);
    bson_iter_init_find (&it, &d, "p");
    e = wrap (rm_expr_parse (&it, err));
    bson_destroy (&d);
    bson_free (s);
    return e;
}

const rm_expr_t *
rm_acc_expr_expr (const rm_acc_expr_t *e)
{
    return e->x;
}

bool
rm_acc_expr_literal (const rm_acc_expr_t *e, bson_iter_t *out)
{
    return e->lit && bson_iter_init_find (out, e->lit, "v");
}

int
rm_acc_expr_eval (const rm_acc_expr_t *e, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                  bson_t *scratch, bson_iter_t *out, bson_error_t *err)
{
    bson_value_t v;

    if (e->lit)
        return bson_iter_init_find (out, e->lit, "v") ? 1 : 0;
    if (!rm_expr_eval (cx, e->x, doc, len, &v, err))
        return -1;
    if (v.value_type == BSON_TYPE_EOD)
        return 0;
    bson_reinit (scratch);
    bson_append_value (scratch, "v", 1, &v);
    return bson_iter_init_find (out, scratch, "v") ? 1 : 0;
}

int
rm_acc_expr_append (const rm_acc_expr_t *e, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                    bson_t *dst, const char *key, int keylen, bool null_if_missing, bson_error_t *err)
{
    bson_value_t v;

    if (!rm_expr_eval (cx, e->x, doc, len, &v, err))
        return -1;
    if (v.value_type == BSON_TYPE_EOD) {
        if (null_if_missing)
            bson_append_null (dst, key, keylen);
        return 0;
    }
    bson_append_value (dst, key, keylen, &v);
    return 1;
}
