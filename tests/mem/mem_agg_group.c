/* $group: documents grouped by their _id expression's value (groups in
 * the order first seen), each accumulator computed over its members:
 * $sum (and $count: {}), $avg, $min, $max, $first, $last, $push,
 * $addToSet. */
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "remodel/expr.h"
#include "remodel/value.h"

typedef struct {
    rm_buf_t key;
    bson_t id;      /* {"_id": value} */
    size_t *members;
    size_t n, cap;
} group_t;

typedef struct {
    const char *name, *op;
    rm_expr_t *e; /* NULL for $count */
} acc_t;

static rm_expr_ctx_t *
cx (void)
{
    static rm_expr_ctx_t *one;
    if (!one)
        one = rm_expr_ctx_new (0);
    rm_expr_ctx_reset (one);
    return one;
}

/* The sum of numbers: int32 while it fits, int64 for integers, double
 * once any is. Non-numbers are skipped, as $sum does. */
typedef struct {
    int64_t i;
    double d;
    bool any_double, any_long;
    size_t count;
} sum_t;

static void
sum_add (sum_t *s, const bson_value_t *v)
{
    switch (v->value_type) {
    case BSON_TYPE_INT32: s->i += v->value.v_int32; break;
    case BSON_TYPE_INT64: s->i += v->value.v_int64; s->any_long = true; break;
    case BSON_TYPE_DOUBLE: s->d += v->value.v_double; s->any_double = true; break;
    default: return;
    }
    s->count++;
}

static void
sum_put (bson_t *out, const char *key, const sum_t *s, bool avg)
{
    if (avg) {
        if (s->count)
            BSON_APPEND_DOUBLE (out, key, ((double) s->i + s->d) / (double) s->count);
        else
            BSON_APPEND_NULL (out, key);
    } else if (s->any_double) {
        BSON_APPEND_DOUBLE (out, key, (double) s->i + s->d);
    } else if (!s->any_long && s->i >= INT32_MIN && s->i <= INT32_MAX) {
        BSON_APPEND_INT32 (out, key, (int32_t) s->i);
    } else {
        BSON_APPEND_INT64 (out, key, s->i);
    }
}

static bool
accumulate (const acc_t *a, const group_t *g, mem_list_t *docs, bson_t *out, bson_error_t *err)
{
    sum_t s = {0};
    bson_t held = BSON_INITIALIZER, arr;
    bool has = false, is_array = !strcmp (a->op, "$push") || !strcmp (a->op, "$addToSet");
    int k = 0;
    for (size_t m = 0; m < g->n; m++) {
        const bson_t *d = docs->d[g->members[m]];
        bson_value_t v;
        bson_iter_t it, cur;
        if (!a->e) {
            s.i++;
            continue;
        }
        if (!rm_expr_eval (cx (), a->e, bson_get_data (d), d->len, &v, err)) {
            bson_destroy (&held);
            return false;
        }
        if (!strcmp (a->op, "$sum") || !strcmp (a->op, "$avg")) {
            sum_add (&s, &v);
            continue;
        }
        if (is_array) {
            char ks[16];
            bson_t one = BSON_INITIALIZER;
            bool dup = false;
            if (v.value_type == BSON_TYPE_EOD)
                continue;
            rm_expr_append (&one, "v", 1, &v);
            bson_iter_init_find (&cur, &one, "v");
            if (!strcmp (a->op, "$addToSet")) {
                bson_iter_init (&it, &held);
                while (!dup && bson_iter_next (&it))
                    dup = !rm_value_compare (&it, &cur);
            }
            if (!dup) {
                snprintf (ks, sizeof ks, "%d", k++);
                bson_append_iter (&held, ks, -1, &cur);
            }
            bson_destroy (&one);
            continue;
        }
        /* $first, $last, $min, $max: one value held. */
        {
            bson_t one = BSON_INITIALIZER;
            bool take;
            rm_expr_append (&one, "v", 1, &v);
            if (!bson_iter_init_find (&cur, &one, "v")) {
                bson_destroy (&one);
                continue;
            }
            take = !has || !strcmp (a->op, "$last");
            if (has && bson_iter_init_find (&it, &held, "v")) {
                int c = rm_value_compare (&cur, &it);
                if ((!strcmp (a->op, "$min") && c < 0) || (!strcmp (a->op, "$max") && c > 0))
                    take = true;
            }
            if (take) {
                bson_reinit (&held);
                bson_append_iter (&held, "v", 1, &cur);
                has = true;
            }
            bson_destroy (&one);
        }
    }
    if (!a->e || !strcmp (a->op, "$sum") || !strcmp (a->op, "$avg")) {
        sum_put (out, a->name, &s, !strcmp (a->op, "$avg"));
    } else if (is_array) {
        bson_append_array_begin (out, a->name, -1, &arr);
        bson_concat (&arr, &held);
        bson_append_array_end (out, &arr);
    } else {
        bson_iter_t it;
        if (has && bson_iter_init_find (&it, &held, "v"))
            bson_append_iter (out, a->name, -1, &it);
        else
            BSON_APPEND_NULL (out, a->name);
    }
    bson_destroy (&held);
    return true;
}

static bool
parse_accs (const bson_iter_t *arg, rm_expr_t **id, acc_t **accs, size_t *n, bson_error_t *err)
{
    bson_iter_t f;
    *id = NULL;
    *n = 0;
    *accs = NULL;
    bson_iter_recurse (arg, &f);
    while (bson_iter_next (&f)) {
        bson_iter_t op;
        acc_t *a;
        if (!strcmp (bson_iter_key (&f), "_id")) {
            if (!(*id = rm_expr_parse (&f, err)))
                return false;
            continue;
        }
        if (!BSON_ITER_HOLDS_DOCUMENT (&f) || !bson_iter_recurse (&f, &op) || !bson_iter_next (&op)) {
            bson_set_error (err, 1, 40234, "The field '%s' must be an accumulator object", bson_iter_key (&f));
            return false;
        }
        *accs = bson_realloc (*accs, (*n + 1) * sizeof **accs);
        a = &(*accs)[(*n)++];
        a->name = bson_iter_key (&f);
        a->op = bson_iter_key (&op);
        a->e = NULL;
        if (!strcmp (a->op, "$count"))
            continue;
        if (strcmp (a->op, "$sum") && strcmp (a->op, "$avg") && strcmp (a->op, "$min") &&
            strcmp (a->op, "$max") && strcmp (a->op, "$first") && strcmp (a->op, "$last") &&
            strcmp (a->op, "$push") && strcmp (a->op, "$addToSet")) {
            bson_set_error (err, 1, 15952, "unknown group operator '%s'", a->op);
            return false;
        }
        if (!(a->e = rm_expr_parse (&op, err)))
            return false;
    }
    if (!*id) {
        bson_set_error (err, 1, 15955, "a group specification must include an _id");
        return false;
    }
    return true;
}

bool
mem_agg_group (const bson_iter_t *arg, mem_list_t *docs, bson_error_t *err)
{
    rm_expr_t *id = NULL;
    acc_t *accs = NULL;
    size_t nacc = 0, ng = 0;
    group_t *g = NULL;
    mem_list_t next = {0};
    bool ok = BSON_ITER_HOLDS_DOCUMENT (arg) && parse_accs (arg, &id, &accs, &nacc, err);
    for (size_t i = 0; ok && i < docs->n; i++) {
        bson_value_t v;
        bson_t one = BSON_INITIALIZER;
        bson_iter_t it;
        rm_buf_t key;
        size_t at = ng;
        if (!(ok = rm_expr_eval (cx (), id, bson_get_data (docs->d[i]), docs->d[i]->len, &v, err)))
            break;
        if (v.value_type == BSON_TYPE_EOD)
            BSON_APPEND_NULL (&one, "_id");
        else
            rm_expr_append (&one, "_id", 3, &v);
        bson_iter_init_find (&it, &one, "_id");
        rm_buf_init (&key);
        rm_key_append (&key, &it);
        for (size_t k = 0; k < ng; k++)
            if (g[k].key.len == key.len && !memcmp (g[k].key.data, key.data, key.len))
                at = k;
        if (at == ng) {
            g = bson_realloc (g, (ng + 1) * sizeof *g);
            memset (&g[ng], 0, sizeof *g);
            g[ng].key = key;
            bson_copy_to (&one, &g[ng].id);
            ng++;
        } else {
            rm_buf_destroy (&key);
        }
        if (g[at].n == g[at].cap) {
            g[at].cap = g[at].cap ? 2 * g[at].cap : 8;
            g[at].members = bson_realloc (g[at].members, g[at].cap * sizeof *g[at].members);
        }
        g[at].members[g[at].n++] = i;
        bson_destroy (&one);
    }
    for (size_t k = 0; ok && k < ng; k++) {
        bson_t *out = bson_copy (&g[k].id);
        for (size_t a = 0; ok && a < nacc; a++)
            ok = accumulate (&accs[a], &g[k], docs, out, err);
        mem_list_push (&next, out);
    }
    for (size_t k = 0; k < ng; k++) {
        rm_buf_destroy (&g[k].key);
        bson_destroy (&g[k].id);
        bson_free (g[k].members);
    }
    bson_free (g);
    for (size_t a = 0; a < nacc; a++)
        rm_expr_destroy (accs[a].e);
    bson_free (accs);
    rm_expr_destroy (id);
    if (!ok) {
        mem_list_free (&next, true);
        if (!err->code)
            bson_set_error (err, 1, 15947, "a group's fields must be specified in an object");
        return false;
    }
    mem_list_free (docs, true);
    *docs = next;
    return true;
}
