/* A step and its passes resolved once (shell-ext/batch/online_pass.c),
 * without a server: what each pass reads and writes under the names they
 * have now, as an earlier step's results move them, side by side and in
 * place, and which of the step's sets of result _ids a pass keeps. */
#include <stdlib.h>

#include "online_pass.h"
#include "test.h"

static const char plan_text[] =
    "{\"remodel\": 1, \"steps\": ["
    "{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\","
    " \"localField\": \"_id\", \"foreignField\": \"owner\", \"as\": \"tasks\"}},"
    "{\"version\": {\"in\": \"crm.people\", \"value\": 2}}]}";

/* on over the plan, named as if its file were /plans/p.json. */
static void
setup (online_t *on, online_opts_t *o, bool in_place)
{
    bson_error_t err;
    static online_run_t run;

    online_init (on, &run);
    memset (o, 0, sizeof *o);
    o->in_place = in_place;
    on->own_run->o = o;
    T_CHECK (rm_plan_parse (&on->own_run->plan, plan_text, strlen (plan_text), &err));
    rm_names_identify (&on->own_run->names, "/plans/p.json");
    online_steps_resolve (on->own_run);
}

static void
teardown (online_t *on)
{
    online_run_destroy (on->own_run);
}

static void
test_side_by_side (void)
{
    online_opts_t o;
    online_t on;
    const online_step_t *st;
    online_pass_t ps;
    online_idset_t sets[8];
    bson_error_t err;
    char want[400];

    setup (&on, &o, false);
    st = online_step (&on, &on.run->plan.steps[0], o.in_place);
    T_CHECK (online_step_runs (st, &err));
    /* The parents with their children, then the children no parent
     * takes; each namespace a target. */
    T_CHECK (st->np == 2);
    if (st->np != 2 || st->nt != 2)
        return;
    T_CHECK_STR (st->targets[0]->text, "crm.people");
    T_CHECK_STR (st->targets[1]->text, "crm.tasks");
    memset (sets, 0, sizeof sets);
    sets[0].ns = st->targets[0]->text;
    sets[1].ns = st->targets[1]->text;
    online_pass_resolve (&on, st, 0, sets, st->nt, &ps);
    T_CHECK (ps.s == &on.run->plan.steps[0] && ps.p == &st->passes[0] && ps.index == 0);
    T_CHECK_STR (ps.drive_ns, "crm.people");
    T_CHECK_STR (ps.drive_coll, "people");
    T_CHECK (ps.partner != NULL);
    T_CHECK_STR (ps.partner->text, "crm.tasks");
    T_CHECK_STR (ps.partner_coll, "tasks");
    T_CHECK (!ps.self_join);
    rm_name_target (&on.run->names, &on.run->plan.steps[0], st->targets[0], want, sizeof want);
    T_CHECK_STR (ps.target[0], want);
    T_CHECK (ps.sets[0] == &sets[0] && ps.keeps_set);
    T_CHECK_STR (ps.backup, "");
    online_pass_resolve (&on, st, 1, sets, st->nt, &ps);
    T_CHECK_STR (ps.drive_ns, "crm.tasks");
    T_CHECK_STR (ps.partner_coll, "people");
    T_CHECK (ps.sets[0] == &sets[1]);

    /* A set its drivers keep is no set of the pass's. */
    sets[0].by_drivers = true;
    online_pass_resolve (&on, st, 0, sets, st->nt, &ps);
    T_CHECK_STR (ps.target[0], want);
    T_CHECK (ps.sets[0] == NULL && !ps.keeps_set);

    /* Step 2 reads step 1's results where they are now. */
    rm_name_move_step (&on.own_run->names, &on.run->plan.steps[0], st->targets, st->nt);
    st = online_step (&on, &on.run->plan.steps[1], o.in_place);
    T_CHECK (online_step_runs (st, &err));
    online_pass_resolve (&on, st, 0, NULL, 0, &ps);
    T_CHECK_STR (ps.drive_ns, "crm.people");
    T_CHECK_STR (ps.drive_coll, want);
    T_CHECK (ps.partner == NULL);
    T_CHECK (!ps.keeps_set);
    teardown (&on);
}

static void
test_in_place (void)
{
    online_opts_t o;
    online_t on;
    const online_step_t *st;
    online_pass_t ps;
    bson_error_t err;
    char want[400];

    setup (&on, &o, true);
    st = online_step (&on, &on.run->plan.steps[1], o.in_place);
    T_CHECK (online_step_runs (st, &err));
    T_CHECK (st->np == 1 && st->nt == 0);
    online_pass_resolve (&on, st, 0, NULL, 0, &ps);
    T_CHECK_STR (ps.drive_coll, "people");
    rm_name_inplace_backup (&on.run->names, &on.run->plan.steps[1], want, sizeof want);
    T_CHECK_STR (ps.backup, want);
    T_CHECK_STR (ps.target[0], "");
    teardown (&on);
}

int
main (void)
{
    T_RUN (test_side_by_side);
    T_RUN (test_in_place);
    return t_done ();
}
