/* Which documents a step takes: its filter over the documents it changes
 * and its match over a join's other side (remodel/plan.h), for every
 * step; and the fields a pass must read for them online. Apart from the
 * join (join.c) that asks: the hash and sort-merge joins call these, and
 * join.c calls them. */
#include <string.h>

#include "embed_join.h"
#include "engine_impl.h"
#include "remodel/query.h"

bool
rm_step_select (rm_engine_t *e, const rm_step_t *s, bool match, rm_expr_ctx_t *cx,
                const char *ns_name, const uint8_t *doc, uint32_t len, bool *take,
                bson_error_t *err)
{
    bool ok;
    *take = true;
    if (!(match ? s->match : s->filter))
        return true;
    rm_expr_ctx_reset (cx);
    if (match) {
        ok = rm_query_match (s->match, cx, doc, len, take, err);
        if (!ok)
            rm_error_prefix (err, "match");
    } else {
        /* (e NULL: no count) */
        ok = rm_engine_filter (e, s, cx, doc, len, take, err);
    }
    if (ok)
        return true;
    *take = false;
    rm_doc_error (err, ns_name, "document", doc, len);
    return rm_engine_doc_error (e, s, err);
}

bool
rm_join_take_parent (const rm_join_t *j, rm_engine_t *e, rm_expr_ctx_t *cx, const uint8_t *doc,
                     uint32_t len, bool *take, bson_error_t *err)
{
    return rm_step_select (e, j->sel->s, false, cx, j->sel->into_name, doc, len, take, err);
}

bool
rm_join_take_child (const rm_join_t *j, const uint8_t *doc, uint32_t len, bool *take,
                    bson_error_t *err)
{
    if (!rm_step_select (j->sel->e, j->sel->s, true, j->sel->cx, j->sel->from_name, doc, len,
                         take, err))
        return false;
    j->sel->children += *take;
    return true;
}

static void
reads_path (const rm_path_t *path, void *arg)
{
    rm_pass_reads (arg, path->text, strlen (path->text));
}

void
rm_join_pass_reads (rm_pass_t *p, const rm_query_t *q)
{
    bool whole = false;
    if (!q)
        return;
    rm_query_paths (q, reads_path, p, &whole);
    if (whole)
        rm_pass_reads (p, "$", 1); /* $$ROOT: whole partners */
}
