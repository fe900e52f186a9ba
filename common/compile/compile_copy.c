/* copy, move, delete as pipelines (compile_impl.h): the documents the
 * filter selects through a $match, `fields` as $addFields and `project`
 * as $project, into `to`'s target; the documents a move or a delete
 * leaves, through {$match: {$nor: [filter]}} (exactly the others, missing
 * fields included), into `from`'s. Each pass names its own output. */
#include "compile_stage.h"

static void
match (bson_t *pipeline, const bson_t *q)
{
    rm_cs_stage_t st;
    rm_cs_begin (pipeline, &st, "$match");
    bson_concat (&st.body, q);
    rm_cs_end (&st);
}

/* The documents a move or a delete leaves: {$nor: [filter]} ({} without
 * one: none). */
static void
match_others (bson_t *pipeline, const bson_t *filter)
{
    bson_t q = BSON_INITIALIZER, arr, empty = BSON_INITIALIZER;
    BSON_APPEND_ARRAY_BEGIN (&q, "$nor", &arr);
    BSON_APPEND_DOCUMENT (&arr, "0", filter ? filter : &empty);
    bson_append_array_end (&q, &arr);
    match (pipeline, &q);
    bson_destroy (&q);
}

/* The selected documents as `to` gets them. */
static void
copies (const rm_step_t *s, bson_t *pipeline)
{
    const rm_copy_t *x = &s->u.copy;
    rm_cs_stage_t st;
    if (s->filter_doc)
        match (pipeline, s->filter_doc);
    if (x->set_doc) {
        rm_cs_begin (pipeline, &st, "$addFields");
        bson_concat (&st.body, x->set_doc);
        rm_cs_end (&st);
    }
    if (x->project) {
        rm_cs_begin (pipeline, &st, "$project");
        for (size_t i = 0; i < x->n_proj; i++)
            BSON_APPEND_INT32 (&st.body, x->proj[i], x->project_inclusive ? 1 : 0);
        /* {"_id": 1} alone: every field dropped but _id */
        if (!x->n_proj)
            BSON_APPEND_INT32 (&st.body, "_id", 1);
        rm_cs_end (&st);
    }
}

bool
rm_compile_copy (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_step_t *s = st->s;
    (void) nm;
    (void) v;
    for (size_t i = 0; s->u.copy.set && i < rm_expr_set_count (s->u.copy.set); i++)
        if (rm_cs_reserved (rm_expr_set_path (s->u.copy.set, i)))
            return rm_compile_refuse (st, "a field starting with __rm, the compiled pipelines' "
                                          "scratch fields");
    if (s->kind == RM_STEP_DELETE) {
        st->passes[0].out = &s->u.copy.from;
        match_others (&st->passes[0].pipeline, s->filter_doc);
        return true;
    }
    st->passes[0].out = &s->u.copy.to;
    copies (s, &st->passes[0].pipeline);
    if (s->kind == RM_STEP_MOVE) {
        /* the second pass reads from as the first does */
        st->passes[1] = st->passes[0];
        st->passes[1].pass = 1;
        st->passes[1].out = &s->u.copy.from;
        bson_init (&st->passes[1].pipeline);
        match_others (&st->passes[1].pipeline, s->filter_doc);
        st->n_passes = 2;
    }
    return true;
}
