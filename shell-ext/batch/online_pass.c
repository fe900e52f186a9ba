/* A step and its passes resolved once (online_pass.h). */
#include <stdio.h>
#include <string.h>

#include "online_pass.h"

void
online_pass_resolve (const online_t *on, const online_step_t *st, size_t pi, online_idset_t *sets,
                     size_t n_sets, online_pass_t *ps)
{
    const rm_pass_t *p = &st->passes[pi];

    memset (ps, 0, sizeof *ps);
    ps->st = st;
    ps->s = st->s;
    ps->p = p;
    ps->index = pi;
    rm_names_label (&on->run->names, st->s, ps->label, sizeof ps->label);
    ps->drive = st->in[p->drive];
    ps->drive_ns = ps->drive->text;
    snprintf (ps->drive_coll, sizeof ps->drive_coll, "%s", rm_name_now (&on->run->names, ps->drive));
    if (p->partner >= 0) {
        ps->partner = st->in[p->partner];
        snprintf (ps->partner_coll, sizeof ps->partner_coll, "%s",
                  rm_name_now (&on->run->names, ps->partner));
        ps->self_join = !strcmp (ps->partner->text, ps->drive_ns);
    }
    if (on->run->o->in_place) {
        rm_name_inplace_backup (&on->run->names, st->s, ps->backup, sizeof ps->backup);
        return;
    }
    for (size_t k = 0; k < p->n_keep; k++) {
        rm_name_target (&on->run->names, st->s, p->keep[k], ps->target[k], sizeof ps->target[k]);
        /* A pass whose results name their driver keeps no set: run asks
         * the target whose a result's _id is (online_check_claimed; a
         * driver's own _id is unique), and verify and sync find a result
         * no driver makes by the drivers' _ids (online_run.c, and
         * online_check_extras), so memory does not grow with the data. */
        for (size_t m = 0; m < n_sets; m++)
            if (!strcmp (sets[m].ns, p->keep[k]->text) && !sets[m].by_drivers)
                ps->sets[k] = &sets[m];
        ps->keeps_set |= ps->sets[k] != NULL;
    }
}
