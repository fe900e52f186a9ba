/* Whether a plan's run finished (online_state.h): every pass of every step
 * done, by the run's own checkpoints, never by a sample of its results.
 *
 * finalize, follow and sync take a run's results as a whole copy and
 * keep them current from then on: a sync from the change log recomputes
 * only what changed, so a range the run never copied stays missing, and
 * finalize's verify by sample may miss it too (FerretDB has no $sample:
 * its sample is the first drivers in _id order, the very ones a stopped
 * run did first). So they refuse a run that has not finished, naming
 * what is left and the command that finishes it, before they take the
 * lease or write anything. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"
#include "remodel/cli.h"

/* What a checkpoint says of one pass. */
typedef struct {
    int64_t step, pass, seen;
    bool done;
    char last[160];         /* the last _id copied, as JSON ("" when none) */
} cp_t;

#define CP_MAX 64

static bool
read_checkpoints (online_t *on, cp_t *cps, size_t *n, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, "checkpoints");
    bson_t *q = BCON_NEW ("plan", BCON_UTF8 (on->run->names.id));
    online_cursor_t *cur = online_ops (on)->find (on, c, q, NULL);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    *n = 0;
    while (online_ops (on)->next (cur, &doc) && *n < CP_MAX) {
        cp_t *p = &cps[(*n)++];
        bson_iter_t it;
        memset (p, 0, sizeof *p);
        p->pass = 1;
        if (bson_iter_init_find (&it, doc, "step"))
            p->step = bson_iter_as_int64 (&it);
        if (bson_iter_init_find (&it, doc, "pass"))
            p->pass = bson_iter_as_int64 (&it);
        if (bson_iter_init_find (&it, doc, "seen"))
            p->seen = bson_iter_as_int64 (&it);
        if (bson_iter_init_find (&it, doc, "done"))
            p->done = bson_iter_as_bool (&it);
        if (bson_iter_init_find (&it, doc, "last")) {
            bson_t tmp = BSON_INITIALIZER;
            char *text;
            bson_append_iter (&tmp, "_id", 3, &it);
            text = bson_as_relaxed_extended_json (&tmp, NULL);
            snprintf (p->last, sizeof p->last, "%s", text ? text : "");
            bson_free (text);
            bson_destroy (&tmp);
        }
    }
    if (!online_ops (on)->end (cur, &why))
        ok = online_fail (on, err, &why, "reading the checkpoints");
    bson_destroy (q);
    mongoc_collection_destroy (c);
    return ok;
}

/* At most this many passes are named; the rest counted. */
#define LEFT_NAMED 4

bool
online_run_complete (online_t *on, bson_error_t *err)
{
    static cp_t cps[CP_MAX];
    size_t n_cps, left = 0, named = 0, started = 0;
    char said[1200] = "", more[64] = "";
    size_t used = 0;

    if (!read_checkpoints (on, cps, &n_cps, err))
        return false;
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, on->run->o->in_place);
        const rm_nsref_t *const *in = st->in;
        const rm_pass_t *passes = st->passes;
        size_t np = st->np;
        char label[200];
        /* A fused run's checkpoints are its first step's (remodel/fuse.h). */
        if (np && rm_names_run (&on->run->names, i) == 0)
            continue;
        rm_names_label (&on->run->names, s, label, sizeof label);
        if (!online_step_runs (st, err)) {
            rm_error_prefix (err, "%s", on->run->o->plan_path);
            return false;
        }
        for (size_t p = 0; p < np; p++) {
            const cp_t *cp = NULL;
            char pass[40] = "", how[300];
            for (size_t k = 0; k < n_cps; k++)
                if (cps[k].step == (int64_t) s->index && cps[k].pass == (int64_t) p + 1)
                    cp = &cps[k];
            started += cp != NULL;
            if (cp && cp->done)
                continue;
            if (left++ >= LEFT_NAMED)
                continue;
            if (np > 1)
                snprintf (pass, sizeof pass, ", pass %zu of %zu", p + 1, np);
            if (!cp)
                snprintf (how, sizeof how, "not begun");
            else if (*cp->last)
                snprintf (how, sizeof how, "%lld read, its checkpoint after %s", (long long) cp->seen,
                          cp->last);
            else
                snprintf (how, sizeof how, "%lld read", (long long) cp->seen);
            used += (size_t) snprintf (said + used, used < sizeof said ? sizeof said - used : 0,
                                       "%s%s %s%s: %s", named++ ? "; " : "", label,
                                       in[passes[p].drive]->text, pass, how);
            if (used >= sizeof said)
                used = sizeof said - 1;
        }
    }
    if (!left)
        return true;
    if (left > named)
        snprintf (more, sizeof more, "; %zu more pass(es) not finished", left - named);
    rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: %s takes the results of a finished run, and "
                  "its run %s: %s%s; remodel online run %s finishes it (then %s again); nothing "
                  "%s", on->run->where, on->run->names.name, on->run->o->command,
                  started ? "has not finished" : "has done no batch", said, more, on->run->o->plan_path,
                  on->run->o->command, on->run->o->switching ? "switched" : "written");
    return false;
}
