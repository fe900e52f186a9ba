/* The table of the server's operations (shell-ext/conn/online_ops.c)
 * without a server: libmongoc's implementation fills every row, and a run
 * with no table of its own gets that one. That the callers send every call
 * through the table is checked by tests/cli/test_server_calls.sh, and what
 * the calls do, against the real test servers, by the online suites: no
 * fake server stands in for one here. */
#include "online_batch.h"
#include "test.h"

static void
test_rows (void)
{
    const online_ops_t *m = &online_ops_mongoc;
    T_CHECK_STR (m->name, "libmongoc");
    T_CHECK (m->find && m->range && m->keys && m->indexes && m->next && m->end && m->count);
    T_CHECK (m->estimate);
    T_CHECK (m->batch && m->add && m->send && m->discard && m->write && m->replace_if);
    T_CHECK (m->rename && m->drop && m->index_command && m->drop_index);
    T_CHECK (m->coll_mod);
    T_CHECK (m->stream && m->oplog && m->aggregate && m->command);
    T_CHECK (m->state_read && m->state_insert && m->state_update && m->state_delete);
}

static void
test_default (void)
{
    online_t on;
    online_run_t on_run;
    online_ops_t mine = online_ops_mongoc;
    online_init (&on, &on_run);
    T_CHECK (online_ops (&on) == &online_ops_mongoc);
    on.own_run->ops = &mine;
    T_CHECK (online_ops (&on) == &mine);
}

int
main (void)
{
    T_RUN (test_rows);
    T_RUN (test_default);
    return t_done ();
}
