/* The table of the server's operations (shell-ext/conn/online_ops.c)
 * without a server: libmongoc's implementation fills every row; a run
 * with no table of its own gets that one; and the callers ported to the
 * table send their calls through the run's table, so that another (a
 * destination server, a fault layer, these fakes) sees every one of them. */
#include "online_state.h"
#include "test.h"

static void
test_rows (void)
{
    const online_ops_t *m = &online_ops_mongoc;
    T_CHECK_STR (m->name, "libmongoc");
    T_CHECK (m->find && m->range && m->keys && m->indexes && m->next && m->end && m->count);
    T_CHECK (m->batch && m->add && m->send && m->discard && m->write && m->replace_if);
    T_CHECK (m->rename && m->drop && m->index_command && m->drop_index);
    T_CHECK (m->stream && m->oplog);
    T_CHECK (m->state_read && m->state_insert && m->state_update && m->state_delete);
}

static void
test_default (void)
{
    online_t on;
    online_ops_t mine = online_ops_mongoc;
    memset (&on, 0, sizeof on);
    T_CHECK (online_ops (&on) == &online_ops_mongoc);
    on.ops = &mine;
    T_CHECK (online_ops (&on) == &mine);
}

/* A fake server: what the calls asked, and a cursor over want numbered _ids. */
static struct {
    char coll[64];
    char filter[256];
    bool many;
    int calls;
    int next, docs;
    bson_t doc;
} fake;

static bool
fake_state_delete (online_t *on, const char *coll, const bson_t *filter, bool many,
                   bson_error_t *why)
{
    char *json = bson_as_relaxed_extended_json (filter, NULL);
    snprintf (fake.coll, sizeof fake.coll, "%s", coll);
    snprintf (fake.filter, sizeof fake.filter, "%s", json);
    bson_free (json);
    fake.many = many;
    fake.calls++;
    return true;
}

static online_cursor_t *
fake_find (online_t *on, mongoc_collection_t *c, const bson_t *filter, const bson_t *opts)
{
    fake.calls++;
    fake.next = 0;
    return (online_cursor_t *) &fake;
}

static bool
fake_next (online_cursor_t *cur, const bson_t **doc)
{
    if (fake.next >= fake.docs)
        return false;
    bson_reinit (&fake.doc);
    BSON_APPEND_INT32 (&fake.doc, "_id", fake.next++);
    *doc = &fake.doc;
    return true;
}

static bool
fake_end (online_cursor_t *cur, bson_error_t *why)
{
    return true;
}

static void
test_forget_through_table (void)
{
    online_opts_t o;
    online_t on;
    online_ops_t ops = online_ops_mongoc;
    bson_error_t err;
    memset (&o, 0, sizeof o);
    memset (&on, 0, sizeof on);
    memset (&fake, 0, sizeof fake);
    o.state_db = "remodel";
    on.o = &o;
    snprintf (on.names.id, sizeof on.names.id, "p1");
    ops.state_delete = fake_state_delete;
    on.ops = &ops;
    T_CHECK (online_parts_forget (&on, &err));
    T_CHECK (fake.calls == 1);
    T_CHECK_STR (fake.coll, "partitions");
    T_CHECK_STR (fake.filter, "{ \"plan\" : \"p1\" }");
    T_CHECK (fake.many);
}

/* Without $sample (a random cursor refused), one _id in so many of a read
 * of every _id: 100 documents, 2 partitions, 4 sampled (one in 25). */
static void
test_sample_through_table (void)
{
    online_opts_t o;
    online_t on;
    online_ops_t ops = online_ops_mongoc;
    bson_error_t err;
    bson_t sample = BSON_INITIALIZER;
    char why[100] = "", *json;
    memset (&o, 0, sizeof o);
    memset (&on, 0, sizeof on);
    memset (&fake, 0, sizeof fake);
    bson_init (&fake.doc);
    fake.docs = 100;
    on.o = &o;
    on.random_cursor = -1;
    ops.find = fake_find;
    ops.next = fake_next;
    ops.end = fake_end;
    on.ops = &ops;
    T_CHECK (online_partition_sample_of (&on, NULL, 2, 100, &sample, why, sizeof why, &err));
    T_CHECK (fake.calls == 1);
    json = bson_as_relaxed_extended_json (&sample, NULL);
    T_CHECK_STR (json, "{ \"0\" : 0, \"1\" : 25, \"2\" : 50, \"3\" : 75 }");
    bson_free (json);
    bson_destroy (&sample);
    bson_destroy (&fake.doc);
}

int
main (void)
{
    T_RUN (test_rows);
    T_RUN (test_default);
    T_RUN (test_forget_through_table);
    T_RUN (test_sample_through_table);
    return t_done ();
}
