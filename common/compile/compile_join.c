/* The joins as pipelines: embed, summarize, denormalize (compile_impl.h).
 *
 * Embed and summarize share one shape, chosen because every server since
 * 3.6 runs it (mongo-java-server too), where $lookup's sub-pipelines and
 * $sortArray are newer: $lookup the children with localField/foreignField
 * (the same matching the engine reproduces), $unwind them, $sort the
 * rows by parent, then by the children's order as the engine defines it
 * (ties included, append_sort), $group them back into
 * one parent with its children pushed or accumulated in that order, and
 * put the result where the step puts it: $addFields replaces a field
 * where it stands, else appends it, as the engine does. */
#include <stdio.h>
#include <string.h>

#include "compile_stage.h"

static bool
same_db (rm_compile_step_t *st, const rm_nsref_t *a, const rm_nsref_t *b)
{
    if (!strcmp (a->db, b->db))
        return true;
    rm_compile_refuse (st, "%s and %s are in different databases, and $lookup joins collections "
                        "of one database", a->text, b->text);
    return false;
}

/* Parents together, then the children in the engine's order
 * (rm_join_child_cmp): the step's sort keys, then, for embed (by_pos), the
 * order of the parent's array of references, then the child's _id. The
 * $lookup's own order (__rm_i) is never the tie-break: each server has
 * its own (an index's, a collection scan's, mongo-java-server's by the
 * parent's references), and the engine's is none of them. */
static void
append_sort (bson_t *p, const rm_sortspec_t *sort, bool by_pos)
{
    rm_cs_stage_t s;
    bool by_id = false;
    rm_cs_begin (p, &s, "$sort");
    BSON_APPEND_INT32 (&s.body, "_id", 1);
    for (size_t i = 0; sort && i < sort->n; i++) {
        char *k = bson_strdup_printf ("__rm.%s", sort->keys[i].path.text);
        BSON_APPEND_INT32 (&s.body, k, sort->keys[i].dir);
        by_id |= !strcmp (sort->keys[i].path.text, "_id");
        bson_free (k);
    }
    if (by_pos && !by_id)
        BSON_APPEND_INT32 (&s.body, "__rm_pos", 1);
    if (!by_id)
        BSON_APPEND_INT32 (&s.body, "__rm._id", 1);
    /* Last, so the order is total: the position separates only what _id
     * cannot (the engine's seq; a parent without children has one row,
     * __rm_i null). */
    BSON_APPEND_INT32 (&s.body, "__rm_i", 1);
    rm_cs_end (&s);
}

/* ---- embed ---- */

static void rewrite (bson_t *out, const char *key, bson_iter_t *it);

/* The child as it goes into the array: whole, or its top-level fields
 * filtered by the projection, in the child's own order (as $project
 * keeps them), then its computed fields in project's order, each read
 * from the child (the row's __rm): {$mergeObjects: [kept, {computed}]},
 * whose object leaves out a missing result, as $project does. */
static void
append_child (bson_t *doc, const char *key, const rm_embed_t *e)
{
    bson_t names, *expr;
    bson_iter_t it;
    bool id_listed = false;
    uint32_t n = 0;

    if (!e->project) {
        BSON_APPEND_UTF8 (doc, key, "$__rm");
        return;
    }
    bson_init (&names);
    for (size_t i = 0; i < e->n_proj; i++) {
        const rm_proj_field_t *f = &e->proj[i];
        char idx[16];
        id_listed |= !strcmp (f->name, "_id");
        if (f->kind == RM_PROJ_COMPUTED || (f->kind == RM_PROJ_INCLUDE) != e->project_inclusive)
            continue;
        snprintf (idx, sizeof idx, "%u", n++);
        BSON_APPEND_UTF8 (&names, idx, f->name);
    }
    if (e->project_inclusive && !id_listed) {
        char idx[16];
        snprintf (idx, sizeof idx, "%u", n++);
        BSON_APPEND_UTF8 (&names, idx, "_id"); /* included unless excluded */
    }
    if (e->project_inclusive)
        expr = BCON_NEW ("$arrayToObject", "{", "$filter", "{", "input", "{", "$objectToArray",
                         BCON_UTF8 ("$__rm"), "}", "cond", "{", "$in", "[", BCON_UTF8 ("$$this.k"),
                         BCON_ARRAY (&names), "]", "}", "}", "}");
    else
        expr = BCON_NEW ("$arrayToObject", "{", "$filter", "{", "input", "{", "$objectToArray",
                         BCON_UTF8 ("$__rm"), "}", "cond", "{", "$eq", "[", "{", "$in", "[",
                         BCON_UTF8 ("$$this.k"), BCON_ARRAY (&names), "]", "}", BCON_BOOL (false),
                         "]", "}", "}", "}");
    if (e->n_computed) {
        bson_t merged, arr, obj;
        BSON_APPEND_DOCUMENT_BEGIN (doc, key, &merged);
        BSON_APPEND_ARRAY_BEGIN (&merged, "$mergeObjects", &arr);
        BSON_APPEND_DOCUMENT (&arr, "0", expr);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "1", &obj);
        bson_iter_init (&it, e->project);
        for (size_t i = 0; i < e->n_proj && bson_iter_next (&it); i++)
            if (e->proj[i].kind == RM_PROJ_COMPUTED)
                rewrite (&obj, e->proj[i].name, &it);
        bson_append_document_end (&arr, &obj);
        bson_append_array_end (&merged, &arr);
        bson_append_document_end (doc, &merged);
    } else {
        BSON_APPEND_DOCUMENT (doc, key, expr);
    }
    bson_destroy (expr);
    bson_destroy (&names);
}

static void
embed_parents (const rm_names_t *nm, const rm_embed_t *e, bson_t *p)
{
    rm_cs_stage_t s;
    bson_t push, cond, arr, *e2;
    static const char *const scratch[] = {"__rm", "__rm_i", "__rm_pos", "__rm_kids"};

    rm_cs_lookup (p, rm_name_now (nm, &e->from), e->local.text, e->foreign.text);
    rm_cs_unwind (p);
    {
        /* Child referencing: the order of the parent's array of
         * references (a scalar reference: one position for all), after
         * the sort's keys. */
        char *l = rm_cs_ref (NULL, e->local.text), *f = rm_cs_ref ("__rm", e->foreign.text);
        rm_cs_append (p, BCON_NEW ("$addFields", "{", "__rm_pos", "{", "$cond", "[", "{", "$isArray",
                                BCON_UTF8 (l), "}", "{", "$indexOfArray", "[", BCON_UTF8 (l),
                                BCON_UTF8 (f), "]", "}", BCON_INT32 (0), "]", "}", "}"));
        bson_free (l);
        bson_free (f);
    }
    append_sort (p, &e->sort, true);

    rm_cs_begin (p, &s, "$group");
    BSON_APPEND_UTF8 (&s.body, "_id", "$_id");
    e2 = BCON_NEW ("$first", BCON_UTF8 ("$$ROOT"));
    BSON_APPEND_DOCUMENT (&s.body, "__rm_doc", e2);
    bson_destroy (e2);
    BSON_APPEND_DOCUMENT_BEGIN (&s.body, "__rm_kids", &push);
    BSON_APPEND_DOCUMENT_BEGIN (&push, "$push", &cond);
    BSON_APPEND_ARRAY_BEGIN (&cond, "$cond", &arr);
    rm_cs_append_no_child (&arr, "0");
    BSON_APPEND_NULL (&arr, "1");
    append_child (&arr, "2", e);
    bson_append_array_end (&cond, &arr);
    bson_append_document_end (&push, &cond);
    bson_append_document_end (&s.body, &push);
    rm_cs_end (&s);

    /* A parent with no child pushed one null: filtered out (a child is
     * never null). */
    rm_cs_append (p, BCON_NEW ("$replaceRoot", "{", "newRoot", "{", "$mergeObjects", "[",
                            BCON_UTF8 ("$__rm_doc"), "{", "__rm_kids", "{", "$filter", "{",
                            "input", BCON_UTF8 ("$__rm_kids"), "cond", "{", "$ne", "[",
                            BCON_UTF8 ("$$this"), BCON_NULL, "]", "}", "}", "}", "}", "]", "}",
                            "}"));
    rm_cs_begin (p, &s, "$addFields");
    if (e->limit > 0) {
        bson_t *sl = BCON_NEW ("$slice", "[", BCON_UTF8 ("$__rm_kids"),
                               BCON_INT32 ((int32_t) (e->limit > INT32_MAX ? INT32_MAX : e->limit)),
                               "]");
        BSON_APPEND_DOCUMENT (&s.body, e->as, sl);
        bson_destroy (sl);
    } else {
        BSON_APPEND_UTF8 (&s.body, e->as, "$__rm_kids");
    }
    if (e->count_as) {
        bson_t *sz = BCON_NEW ("$size", BCON_UTF8 ("$__rm_kids"));
        BSON_APPEND_DOCUMENT (&s.body, e->count_as, sz);
        bson_destroy (sz);
    }
    rm_cs_end (&s);
    rm_cs_drop (p, scratch, 4);
}

/* The children no parent takes stay in from: each child with the parents
 * that could take it ($lookup the other way), kept when there is none. */
static void
embed_orphans (const rm_names_t *nm, const rm_embed_t *e, bson_t *p)
{
    static const char *const scratch[] = {"__rm"};
    rm_cs_lookup (p, rm_name_now (nm, &e->into), e->foreign.text, e->local.text);
    rm_cs_append (p, BCON_NEW ("$match", "{", "__rm", "{", "$size", BCON_INT32 (0), "}", "}"));
    rm_cs_drop (p, scratch, 1);
}

bool
rm_compile_embed (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_embed_t *e = &st->s->u.embed;
    (void) v;
    if (!same_db (st, &e->into, &e->from))
        return true;
    if (e->max_items > 0 || e->on_overflow == RM_OVERFLOW_OUTLIER)
        return rm_compile_refuse (st, "maxItems and onOverflow: a pipeline cannot stop at a parent "
                                   "past maxItems, and the outlier pages' _ids are deterministic "
                                   "ObjectIds (a hash of the parent's _id and the page) that no "
                                   "expression computes");
    if (strchr (e->as, '.') || (e->count_as && strchr (e->count_as, '.')))
        return rm_compile_refuse (st, "\"as\" or \"countAs\" with a dot: $addFields would set it in "
                                   "every element of an array on the way");
    if (rm_cs_reserved (e->as) || (e->count_as && rm_cs_reserved (e->count_as)))
        return rm_compile_refuse (st, "\"as\" or \"countAs\" starts with __rm, the compiled "
                                   "pipelines' scratch fields");
    embed_parents (nm, e, &st->passes[0].pipeline);
    if (st->n_passes > 1)
        embed_orphans (nm, e, &st->passes[1].pipeline);
    if (st->n_passes > 1) {
        rm_compile_guard (nm, st, &e->from, e->foreign.text);
        rm_compile_note (st, "the orphans (children no parent takes) are found by the $lookup the "
                          "other way, which agrees with the step's join except where a child's "
                          "foreignField holds an array: remodel online --server-side first "
                          "looks for one and runs the step client-side if it finds one; the "
                          "script stops there");
    }
    rm_compile_note (st, "a parent past 16 MiB stops the step in both: the engine names it; the "
                      "server's $merge fails (BSONObjectTooLarge), keeping the ranges before");
    return true;
}

/* ---- summarize ---- */

/* {$getField: ...} read from the child: its input, $$CURRENT when not
 * given (the shorthand {$getField: "name"} too), is the child; the field
 * name stays as it is. */
static void
rewrite_get_field (bson_t *out, const char *key, bson_iter_t *arg)
{
    bson_t op, body;
    bson_iter_t sub;
    bool has_input = false;
    BSON_APPEND_DOCUMENT_BEGIN (out, key, &op);
    BSON_APPEND_DOCUMENT_BEGIN (&op, "$getField", &body);
    if (BSON_ITER_HOLDS_DOCUMENT (arg) && bson_iter_recurse (arg, &sub)) {
        while (bson_iter_next (&sub)) {
            if (!strcmp (bson_iter_key (&sub), "input")) {
                rewrite (&body, "input", &sub);
                has_input = true;
            } else {
                bson_append_iter (&body, bson_iter_key (&sub), -1, &sub);
            }
        }
    } else {
        bson_append_iter (&body, "field", 5, arg);
    }
    if (!has_input)
        BSON_APPEND_UTF8 (&body, "input", "$__rm");
    bson_append_document_end (&op, &body);
    bson_append_document_end (out, &op);
}

/* expr with its field paths read from the child (the row's __rm):
 * "$a.b" -> "$__rm.a.b", "$$ROOT" -> "$__rm"; {$literal: ...} kept. */
static void
rewrite (bson_t *out, const char *key, bson_iter_t *it)
{
    if (BSON_ITER_HOLDS_UTF8 (it)) {
        const char *s = bson_iter_utf8 (it, NULL);
        char *r = NULL;
        if (s[0] == '$' && s[1] != '$')
            r = bson_strdup_printf ("$__rm.%s", s + 1);
        else if (!strncmp (s, "$$ROOT", 6) || !strncmp (s, "$$CURRENT", 9))
            r = bson_strdup_printf ("$__rm%s", s + (s[2] == 'R' ? 6 : 9));
        BSON_APPEND_UTF8 (out, key, r ? r : s);
        bson_free (r);
    } else if (BSON_ITER_HOLDS_DOCUMENT (it) || BSON_ITER_HOLDS_ARRAY (it)) {
        bson_iter_t sub;
        bson_t child;
        bool arr = BSON_ITER_HOLDS_ARRAY (it);
        if (!arr && bson_iter_recurse (it, &sub) && bson_iter_next (&sub)) {
            const char *op = bson_iter_key (&sub);
            if (!strcmp (op, "$literal") || !strcmp (op, "$const")) {
                bson_append_iter (out, key, -1, it);
                return;
            }
            if (!strcmp (op, "$getField")) {
                rewrite_get_field (out, key, &sub);
                return;
            }
        }
        if (arr)
            BSON_APPEND_ARRAY_BEGIN (out, key, &child);
        else
            BSON_APPEND_DOCUMENT_BEGIN (out, key, &child);
        bson_iter_recurse (it, &sub);
        while (bson_iter_next (&sub))
            rewrite (&child, bson_iter_key (&sub), &sub);
        if (arr)
            bson_append_array_end (out, &child);
        else
            bson_append_document_end (out, &child);
    } else {
        bson_append_iter (out, key, -1, it);
    }
}

/* Appends key: {$cond: [<no child>, null, expr read from the child]}: the
 * row of a parent with no child feeds nothing but a null, which $sum,
 * $avg, $min and $max ignore, and $first/$last give for an empty group. */
static void
append_from_child (bson_t *doc, const char *key, bson_iter_t *expr, bool null_for_missing)
{
    bson_t c, arr;
    BSON_APPEND_DOCUMENT_BEGIN (doc, key, &c);
    BSON_APPEND_ARRAY_BEGIN (&c, "$cond", &arr);
    rm_cs_append_no_child (&arr, "0");
    BSON_APPEND_NULL (&arr, "1");
    if (null_for_missing) {
        /* $topN keeps a missing output as null; $push would skip it. */
        bson_t inull, iarr;
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "2", &inull);
        BSON_APPEND_ARRAY_BEGIN (&inull, "$ifNull", &iarr);
        rewrite (&iarr, "0", expr);
        BSON_APPEND_NULL (&iarr, "1");
        bson_append_array_end (&inull, &iarr);
        bson_append_document_end (&arr, &inull);
    } else {
        rewrite (&arr, "2", expr);
    }
    bson_append_array_end (&c, &arr);
    bson_append_document_end (doc, &c);
}

typedef struct {
    const char *op;       /* the accumulator's name */
    bool empty_array;     /* an empty group gives [] */
    int64_t slice;        /* the $topN fallback: keep this many (negative: the last) */
} acc_out_t;

/* The $sortBy of a $topN/$bottomN, read from the child. */
static void
append_sort_by (bson_t *doc, bson_iter_t *sort_by)
{
    bson_t sb;
    bson_iter_t k;
    BSON_APPEND_DOCUMENT_BEGIN (doc, "sortBy", &sb);
    bson_iter_recurse (sort_by, &k);
    while (bson_iter_next (&k)) {
        char *key = bson_strdup_printf ("__rm.%s", bson_iter_key (&k));
        bson_append_iter (&sb, key, -1, &k);
        bson_free (key);
    }
    bson_append_document_end (doc, &sb);
}

/* The accumulator of result i in the $group, and what to do with its value. */
static void
append_accumulator (bson_t *group, const char *key, bson_iter_t *acc, bool native_top,
                    acc_out_t *out)
{
    bson_iter_t a;
    bson_t body;
    bson_iter_recurse (acc, &a);
    bson_iter_next (&a);
    out->op = bson_iter_key (&a);
    out->empty_array = !strcmp (out->op, "$addToSet");
    out->slice = 0;
    BSON_APPEND_DOCUMENT_BEGIN (group, key, &body);
    if (!strcmp (out->op, "$count")) {
        bson_t c, arr;
        BSON_APPEND_DOCUMENT_BEGIN (&body, "$sum", &c);
        BSON_APPEND_ARRAY_BEGIN (&c, "$cond", &arr);
        rm_cs_append_no_child (&arr, "0");
        BSON_APPEND_INT32 (&arr, "1", 0);
        BSON_APPEND_INT32 (&arr, "2", 1);
        bson_append_array_end (&c, &arr);
        bson_append_document_end (&body, &c);
    } else if (!strcmp (out->op, "$topN") || !strcmp (out->op, "$bottomN")) {
        bson_iter_t n, sort_by, output;
        bson_iter_recurse (&a, &n);
        bson_iter_find (&n, "n");
        bson_iter_recurse (&a, &sort_by);
        bson_iter_find (&sort_by, "sortBy");
        bson_iter_recurse (&a, &output);
        bson_iter_find (&output, "output");
        out->empty_array = true;
        if (native_top) {
            bson_t t;
            BSON_APPEND_DOCUMENT_BEGIN (&body, out->op, &t);
            bson_append_iter (&t, "n", 1, &n);
            append_sort_by (&t, &sort_by);
            append_from_child (&t, "output", &output, false);
            bson_append_document_end (&body, &t);
        } else {
            /* Below 5.2: the rows come sorted by sortBy (summarize_sort),
             * all pushed, then sliced. */
            int64_t k = bson_iter_as_int64 (&n);
            out->slice = !strcmp (out->op, "$topN") ? k : -k;
            append_from_child (&body, "$push", &output, true);
        }
    } else {
        append_from_child (&body, out->op, &a, false);
    }
    bson_append_document_end (group, &body);
}

/* Which accumulators order matters to, for the $topN fallback. */
static bool
find_op (const rm_summarize_t *m, const char *op, bson_iter_t *found)
{
    bson_iter_t f, a;
    size_t n = 0;
    bson_iter_init (&f, m->exprs);
    while (bson_iter_next (&f)) {
        bson_iter_recurse (&f, &a);
        if (bson_iter_next (&a) && !strcmp (bson_iter_key (&a), op)) {
            if (found)
                *found = a;
            n++;
        }
    }
    return n > 0;
}

bool
rm_compile_summarize (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_summarize_t *m = &st->s->u.summarize;
    bson_t *p = &st->passes[0].pipeline;
    bool native_top = RM_COMPILE_V (v) >= RM_COMPILE_VERSION (5, 2);
    bool top = find_op (m, "$topN", NULL) || find_op (m, "$bottomN", NULL);
    rm_sortspec_t fallback = {NULL, 0};
    acc_out_t outs[64];
    rm_cs_stage_t s;
    bson_iter_t f;
    size_t i;
    static const char *const scratch[] = {"__rm", "__rm_i", "__rm_n", "__rm_f"};

    if (!same_db (st, &m->into, &m->from))
        return true;
    if (m->n > 64)
        return rm_compile_refuse (st, "more than 64 fields: compile them in two steps");
    if (m->as && rm_cs_reserved (m->as))
        return rm_compile_refuse (st, "\"as\" starts with __rm, the compiled pipelines' scratch fields");
    for (i = 0; i < m->n; i++)
        if (rm_cs_reserved (m->names[i]))
            return rm_compile_refuse (st, "field \"%s\" starts with __rm, the compiled pipelines' "
                                       "scratch fields", m->names[i]);
    if (top && !native_top) {
        /* $topN and $bottomN are MongoDB 5.2's: below, the rows are sorted
         * by the one sortBy and pushed, which leaves no order for $first,
         * $last, $addToSet or another $topN. */
        bson_iter_t t, sb, k;
        size_t n_top = 0;
        bson_iter_init (&f, m->exprs);
        while (bson_iter_next (&f)) {
            bson_iter_t a;
            bson_iter_recurse (&f, &a);
            bson_iter_next (&a);
            n_top += !strcmp (bson_iter_key (&a), "$topN") || !strcmp (bson_iter_key (&a), "$bottomN");
        }
        if (n_top > 1 || find_op (m, "$first", NULL) || find_op (m, "$last", NULL) ||
            find_op (m, "$addToSet", NULL) || m->sort.n)
            return rm_compile_refuse (st, "$topN and $bottomN need MongoDB 5.2 (--server-version "
                                       "5.2): below it, compile sorts the children by one "
                                       "sortBy and slices, which leaves no order for \"sort\", "
                                       "$first, $last, $addToSet (which keeps the order it "
                                       "meets values in) or a second $topN/$bottomN");
        if (!find_op (m, "$topN", &t))
            find_op (m, "$bottomN", &t);
        bson_iter_recurse (&t, &sb);
        bson_iter_find (&sb, "sortBy");
        bson_iter_recurse (&sb, &k);
        while (bson_iter_next (&k)) {
            fallback.keys = bson_realloc (fallback.keys, (fallback.n + 1) * sizeof *fallback.keys);
            memset (&fallback.keys[fallback.n], 0, sizeof *fallback.keys);
            rm_path_parse (&fallback.keys[fallback.n].path, bson_iter_key (&k), NULL);
            fallback.keys[fallback.n].dir = bson_iter_as_int64 (&k) < 0 ? -1 : 1;
            fallback.n++;
        }
        rm_compile_note (st, "$topN/$bottomN below MongoDB 5.2: the children sorted by sortBy "
                          "(ties by _id), pushed and sliced");
    }

    rm_cs_lookup (p, rm_name_now (nm, &m->from), m->local.text, m->foreign.text);
    rm_cs_unwind (p);
    append_sort (p, fallback.n ? &fallback : &m->sort, false);
    for (i = 0; i < fallback.n; i++)
        rm_path_destroy (&fallback.keys[i].path);
    bson_free (fallback.keys);

    rm_cs_begin (p, &s, "$group");
    BSON_APPEND_UTF8 (&s.body, "_id", "$_id");
    {
        bson_t *first = BCON_NEW ("$first", BCON_UTF8 ("$$ROOT"));
        bson_t *count = BCON_NEW ("$sum", "{", "$cond", "[", "{", "$eq", "[", BCON_UTF8 ("$__rm_i"),
                                  BCON_NULL, "]", "}", BCON_INT32 (0), BCON_INT32 (1), "]", "}");
        BSON_APPEND_DOCUMENT (&s.body, "__rm_doc", first);
        BSON_APPEND_DOCUMENT (&s.body, "__rm_n", count);
        bson_destroy (first);
        bson_destroy (count);
    }
    bson_iter_init (&f, m->exprs);
    for (i = 0; bson_iter_next (&f); i++) {
        char key[32];
        snprintf (key, sizeof key, "__rm_f%zu", i);
        append_accumulator (&s.body, key, &f, native_top, &outs[i]);
    }
    rm_cs_end (&s);

    /* The parent back, with its results under __rm_f: an empty group's
     * arrays are [] (its row pushed a null), the $topN fallback sliced. */
    {
        bson_t stage, rr, mo, arr, res;
        char key[16];
        snprintf (key, sizeof key, "%u", bson_count_keys (p));
        BSON_APPEND_DOCUMENT_BEGIN (p, key, &stage);
        BSON_APPEND_DOCUMENT_BEGIN (&stage, "$replaceRoot", &rr);
        BSON_APPEND_DOCUMENT_BEGIN (&rr, "newRoot", &mo);
        BSON_APPEND_ARRAY_BEGIN (&mo, "$mergeObjects", &arr);
        BSON_APPEND_UTF8 (&arr, "0", "$__rm_doc");
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "1", &res);
        for (size_t k = 0; k < m->n; k++) {
            char name[32], ref[40];
            bson_t *val;
            snprintf (name, sizeof name, "__rm_f%zu", k);
            snprintf (ref, sizeof ref, "$__rm_f%zu", k);
            if (!outs[k].empty_array) {
                BSON_APPEND_UTF8 (&res, name, ref);
                continue;
            }
            if (outs[k].slice)
                val = BCON_NEW ("$cond", "[", "{", "$eq", "[", BCON_UTF8 ("$__rm_n"), BCON_INT32 (0),
                                "]", "}", "[", "]", "{", "$slice", "[", BCON_UTF8 (ref),
                                BCON_INT32 ((int32_t) outs[k].slice), "]", "}", "]");
            else
                val = BCON_NEW ("$cond", "[", "{", "$eq", "[", BCON_UTF8 ("$__rm_n"), BCON_INT32 (0),
                                "]", "}", "[", "]", BCON_UTF8 (ref), "]");
            BSON_APPEND_DOCUMENT (&res, name, val);
            bson_destroy (val);
        }
        bson_append_document_end (&arr, &res);
        bson_append_array_end (&mo, &arr);
        bson_append_document_end (&rr, &mo);
        bson_append_document_end (&stage, &rr);
        bson_append_document_end (p, &stage);
    }
    /* The results where the step puts them. */
    rm_cs_begin (p, &s, "$addFields");
    if (m->as) {
        bson_t mo, arr, obj;
        BSON_APPEND_DOCUMENT_BEGIN (&s.body, m->as, &mo);
        BSON_APPEND_ARRAY_BEGIN (&mo, "$mergeObjects", &arr);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "0", &obj);
        for (size_t k = 0; k < m->n; k++) {
            char ref[40];
            snprintf (ref, sizeof ref, "$__rm_f%zu", k);
            BSON_APPEND_UTF8 (&obj, m->names[k], ref);
        }
        bson_append_document_end (&arr, &obj);
        bson_append_array_end (&mo, &arr);
        bson_append_document_end (&s.body, &mo);
    } else {
        for (size_t k = 0; k < m->n; k++) {
            char ref[40];
            snprintf (ref, sizeof ref, "$__rm_f%zu", k);
            BSON_APPEND_UTF8 (&s.body, m->names[k], ref);
        }
    }
    rm_cs_end (&s);
    {
        const char *drop[4 + 64];
        char names[64][32];
        size_t nd = 0;
        for (size_t k = 0; k < 3; k++)
            drop[nd++] = scratch[k];
        for (size_t k = 0; k < m->n; k++) {
            snprintf (names[k], sizeof names[k], "__rm_f%zu", k);
            drop[nd++] = names[k];
        }
        rm_cs_drop (p, drop, nd);
    }
    if (find_op (m, "$addToSet", NULL))
        rm_compile_note (st, "$addToSet: MongoDB leaves the order of a set's elements unspecified; "
                          "the server's order may differ from remodel run's");
    if (top && native_top)
        rm_compile_note (st, "$topN/$bottomN: children that tie on sortBy come in the server's "
                          "order, which MongoDB leaves unspecified (remodel run keeps from's)");
    return true;
}

/* ---- denormalize ---- */

bool
rm_compile_denormalize (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_denorm_t *d = &st->s->u.denorm;
    bson_t *p = &st->passes[0].pipeline;
    rm_cs_stage_t s;
    static const char *const scratch[] = {"__rm", "__rm_n"};
    char *local = rm_cs_ref (NULL, d->local.text);
    (void) v;

    if (!same_db (st, &d->in, &d->from)) {
        bson_free (local);
        return true;
    }
    if (!rm_cs_top_level (&d->local)) {
        bson_free (local);
        return rm_compile_refuse (st, "localField \"%s\" is a dotted path: its copies go beside "
                                   "it, inside the sub-document or in every element of an "
                                   "array there, which compile does not express yet",
                               d->local.text);
    }
    if (d->on_missing == RM_MISSING_ERROR) {
        bson_free (local);
        return rm_compile_refuse (st, "onMissing \"error\": a pipeline cannot stop at a document");
    }
    for (size_t i = 0; i < d->n; i++)
        if (rm_cs_reserved (d->targets[i])) {
            bson_free (local);
            return rm_compile_refuse (st, "field \"%s\" starts with __rm, the compiled pipelines' "
                                       "scratch fields", d->targets[i]);
        }

    rm_cs_lookup (p, rm_name_now (nm, &d->from), d->local.text, d->foreign.text);
    /* How many matched, and the first in from's order. */
    rm_cs_append (p, BCON_NEW ("$addFields", "{", "__rm_n", "{", "$size", BCON_UTF8 ("$__rm"), "}",
                            "__rm", "{", "$arrayElemAt", "[", BCON_UTF8 ("$__rm"), BCON_INT32 (0),
                            "]", "}", "}"));
    rm_cs_begin (p, &s, "$addFields");
    for (size_t i = 0; i < d->n; i++) {
        /* target = a scalar reference (not missing, null or an array) ?
         *            (matched ? (source there ? copy : as it is)
         *                     : (onMissing null ? null : as it is))
         *          : as it is
         * "as it is" reads the target itself: missing leaves it missing. */
        char *src = d->exprs[i] ? NULL : rm_cs_ref ("__rm", d->sources[i].text);
        char *keep = rm_cs_ref (NULL, d->targets[i]);
        bson_t c, arr, scalar, sarr, ne, nearr, ifn, ifarr, notarr, narr, isa, copy, carr, m, marr;
        BSON_APPEND_DOCUMENT_BEGIN (&s.body, d->targets[i], &c);
        BSON_APPEND_ARRAY_BEGIN (&c, "$cond", &arr);
        /* 0: a scalar reference */
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "0", &scalar);
        BSON_APPEND_ARRAY_BEGIN (&scalar, "$and", &sarr);
        BSON_APPEND_DOCUMENT_BEGIN (&sarr, "0", &ne);
        BSON_APPEND_ARRAY_BEGIN (&ne, "$ne", &nearr);
        BSON_APPEND_DOCUMENT_BEGIN (&nearr, "0", &ifn);
        BSON_APPEND_ARRAY_BEGIN (&ifn, "$ifNull", &ifarr);
        BSON_APPEND_UTF8 (&ifarr, "0", local);
        BSON_APPEND_NULL (&ifarr, "1");
        bson_append_array_end (&ifn, &ifarr);
        bson_append_document_end (&nearr, &ifn);
        BSON_APPEND_NULL (&nearr, "1");
        bson_append_array_end (&ne, &nearr);
        bson_append_document_end (&sarr, &ne);
        BSON_APPEND_DOCUMENT_BEGIN (&sarr, "1", &notarr);
        BSON_APPEND_ARRAY_BEGIN (&notarr, "$eq", &narr);
        BSON_APPEND_DOCUMENT_BEGIN (&narr, "0", &isa);
        BSON_APPEND_UTF8 (&isa, "$isArray", local);
        bson_append_document_end (&narr, &isa);
        BSON_APPEND_BOOL (&narr, "1", false);
        bson_append_array_end (&notarr, &narr);
        bson_append_document_end (&sarr, &notarr);
        bson_append_array_end (&scalar, &sarr);
        bson_append_document_end (&arr, &scalar);
        /* 1: matched ? ... : ... */
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "1", &m);
        BSON_APPEND_ARRAY_BEGIN (&m, "$cond", &marr);
        {
            bson_t *matched = BCON_NEW ("$gt", "[", BCON_UTF8 ("$__rm_n"), BCON_INT32 (0), "]");
            BSON_APPEND_DOCUMENT (&marr, "0", matched);
            bson_destroy (matched);
        }
        BSON_APPEND_DOCUMENT_BEGIN (&marr, "1", &copy);
        BSON_APPEND_ARRAY_BEGIN (&copy, "$cond", &carr);
        if (d->exprs[i]) {
            /* The expression over the matched document (__rm); a missing
             * result leaves the target as it is, as a path finding
             * nothing: {$objectToArray: {v: E}} is empty then. */
            bson_iter_t ex;
            bson_t has, hasarr, size, ota, obj;
            bson_iter_init_find (&ex, d->expr_doc, d->targets[i]);
            BSON_APPEND_DOCUMENT_BEGIN (&carr, "0", &has);
            BSON_APPEND_ARRAY_BEGIN (&has, "$gt", &hasarr);
            BSON_APPEND_DOCUMENT_BEGIN (&hasarr, "0", &size);
            BSON_APPEND_DOCUMENT_BEGIN (&size, "$size", &ota);
            BSON_APPEND_DOCUMENT_BEGIN (&ota, "$objectToArray", &obj);
            rewrite (&obj, "v", &ex);
            bson_append_document_end (&ota, &obj);
            bson_append_document_end (&size, &ota);
            bson_append_document_end (&hasarr, &size);
            BSON_APPEND_INT32 (&hasarr, "1", 0);
            bson_append_array_end (&has, &hasarr);
            bson_append_document_end (&carr, &has);
            rewrite (&carr, "1", &ex);
        } else {
            rm_cs_append_has_field (&carr, "0", "$__rm", d->sources[i].text);
            BSON_APPEND_UTF8 (&carr, "1", src);
        }
        BSON_APPEND_UTF8 (&carr, "2", keep);
        bson_append_array_end (&copy, &carr);
        bson_append_document_end (&marr, &copy);
        if (d->on_missing == RM_MISSING_NULL)
            BSON_APPEND_NULL (&marr, "2");
        else
            BSON_APPEND_UTF8 (&marr, "2", keep);
        bson_append_array_end (&m, &marr);
        bson_append_document_end (&arr, &m);
        /* 2: not a scalar reference */
        BSON_APPEND_UTF8 (&arr, "2", keep);
        bson_append_array_end (&c, &arr);
        bson_append_document_end (&s.body, &c);
        bson_free (src);
        bson_free (keep);
    }
    rm_cs_end (&s);
    rm_cs_drop (p, scratch, 2);
    bson_free (local);
    /* The array shapes (references in an array, a reference in each
     * element) are the step's too, but not this pipeline's: a server
     * holding one runs the step client-side (online_server.c). */
    rm_compile_guard (nm, st, &d->in, d->local.text);
    rm_compile_note (st, "a document whose localField holds an array (of references, or of "
                      "elements holding them) is left as it is by this pipeline, where the step "
                      "rewrites the array: remodel online --server-side first looks for one "
                      "({\"%s\": {\"$type\": \"array\"}}) and runs the step client-side if "
                      "it finds one; the script stops there", d->local.text);
    rm_compile_note (st, "when several documents of from match, the first the $lookup returns is "
                      "copied (for a collection restored from a dump: the dump's order, as "
                      "remodel run)");
    return true;
}
