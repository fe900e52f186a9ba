/* The namespaces a plan switches at finalize, each with the names of its
 * result and its backup: what finalize records the application's writes
 * after the switch by (online_after.c) and what a carry back writes into
 * (online_carry.c). Apart from both, which it serves, and reads nothing
 * from the server. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

bool
online_after_plan (online_t *on, online_after_t *a, bson_error_t *err)
{
    memset (a, 0, sizeof *a);
    if (!rm_names_of_plan (&on->own_run->names, &on->run->plan, err))
        return false;
    /* The last name of each namespace is its final result. */
    for (size_t i = on->run->names.n_moved; i-- > 0 && a->n < ONLINE_AFTER_MAX;) {
        online_after_coll_t *c = &a->c[a->n];
        const char *dot = strchr (on->run->names.moved[i].ns, '.');
        bool seen = !rm_names_last (&on->run->names, i);
        /* An earlier result of a namespace: an intermediate, which
         * finalize drops. */
        if (seen && a->n_drops < ONLINE_AFTER_MAX)
            snprintf (a->drops[a->n_drops++], sizeof a->drops[0], "%.*s.%s",
                      dot ? (int) (dot - on->run->names.moved[i].ns) : 0, on->run->names.moved[i].ns,
                      on->run->names.moved[i].coll);
        if (seen || !dot)
            continue;
        snprintf (c->ns, sizeof c->ns, "%s", on->run->names.moved[i].ns);
        snprintf (c->db, sizeof c->db, "%.*s", (int) (dot - on->run->names.moved[i].ns),
                  on->run->names.moved[i].ns);
        snprintf (c->coll, sizeof c->coll, "%s", dot + 1);
        snprintf (c->result, sizeof c->result, "%s", on->run->names.moved[i].coll);
        rm_name_backup (&on->run->names, c->coll, c->backup, sizeof c->backup);
        a->n++;
    }
    rm_names_clear (&on->own_run->names);
    return true;
}
