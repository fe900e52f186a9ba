/* The views of copy, move and delete (view_def.h): a copy's `to` held
 * nothing before it; a move's `from` held what it keeps and what went to
 * `to` (a $unionWith), unless fields or project changed the documents that
 * went; a delete's documents are gone (view_table.c says so). */
#include "view_def.h"

void
rm_view_copy (rm_views_t *vs, const rm_step_t *s)
{
    const rm_copy_t *x = &s->u.copy;
    rm_view_def_t *to = rm_views_get (vs, &x->to);
    if (s->kind == RM_STEP_MOVE) {
        rm_view_def_t *from = rm_views_get (vs, &x->from);
        if (x->set || x->project)
            rm_views_refuse (vs, from, "fields and project changed the documents moved to %s: "
                                       "no view gives them back",
                             x->to.text);
        else
            rm_views_union (vs, from, to);
    }
    rm_views_absent (to);
}
