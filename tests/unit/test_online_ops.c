/* The table of the server's operations (shell-ext/conn/online_ops.c)
 * without a server: libmongoc's implementation fills every row; a run
 * with no table of its own gets that one; and the callers ported to the
 * table send their calls through the run's table, so that another (a
 * destination server, a fault layer, these fakes) sees every one of them. */
#include "online_batch.h"
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

/* A fake write batch: the statements of each batch sent, as letters
 * (i insert, u update, r replace, d delete; upper case: upsert), one
 * string a batch, joined by '|'. */
static struct {
    char sent[256];
    char cur[64];
    int batches;
} wfake;

static online_wbatch_t *
fake_batch (online_t *on, mongoc_collection_t *c)
{
    wfake.batches++;
    wfake.cur[0] = '\0';
    return (online_wbatch_t *) &wfake;
}

static bool
fake_add (online_wbatch_t *b, online_wkind_t kind, const bson_t *sel, const bson_t *doc,
          bool upsert, bson_error_t *why)
{
    char c = "iurd"[kind];
    size_t n = strlen (wfake.cur);
    wfake.cur[n] = (char) (upsert ? c - 32 : c);
    wfake.cur[n + 1] = '\0';
    return true;
}

static bool
fake_send (online_wbatch_t *b, bson_t *reply, bson_error_t *why)
{
    size_t n = strlen (wfake.sent);
    snprintf (wfake.sent + n, sizeof wfake.sent - n, "%s%s", n ? "|" : "", wfake.cur);
    bson_init (reply);
    return true;
}

static void
fake_discard (online_wbatch_t *b)
{
}

/* Side by side, in the capabilities' sizes and forms: results inserted in
 * commands of insert_chunk; a rewrite a replace by _id (upsert) where a
 * replace keeps field order, in commands of write_chunk, else deletes in
 * those then inserts. */
static void
test_side_writes_through_table (void)
{
    static const struct {
        int64_t insert_chunk, write_chunk;
        bool keeps_order, rewrite;
        const char *sent;
    } rows[] = {
        {3, 50, false, false, "iii|iii|i"},
        {50, 50, false, false, "iiiiiii"},
        {50, 3, true, true, "RRR|RRR|R"},
        {4, 5, false, true, "ddddd|dd|iiii|iii"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        online_opts_t o;
        online_t on;
        online_ops_t ops = online_ops_mongoc;
        online_job_t j;
        rm_pass_t p;
        rm_nsref_t ns;
        online_writes_t w[1];
        online_docs_t out;
        size_t idx[7];
        bson_error_t err;
        memset (&o, 0, sizeof o);
        memset (&on, 0, sizeof on);
        memset (&j, 0, sizeof j);
        memset (&p, 0, sizeof p);
        memset (&ns, 0, sizeof ns);
        memset (&wfake, 0, sizeof wfake);
        on.o = &o;
        on.caps.insert_chunk = rows[r].insert_chunk;
        on.caps.write_chunk = rows[r].write_chunk;
        on.caps.replace_keeps_order = rows[r].keeps_order;
        ops.batch = fake_batch;
        ops.add = fake_add;
        ops.send = fake_send;
        ops.discard = fake_discard;
        on.ops = &ops;
        p.keep[0] = &ns;
        p.n_keep = 1;
        j.on = &on;
        j.p = &p;
        online_docs_init (&out);
        for (int i = 0; i < 7; i++) {
            bson_t d = BSON_INITIALIZER;
            BSON_APPEND_INT32 (&d, "_id", i);
            online_docs_add (&out, bson_get_data (&d), d.len, 0);
            bson_destroy (&d);
            idx[i] = (size_t) i;
        }
        online_writes_init (&w[0], &j, NULL, "writing results");
        if (rows[r].rewrite)
            T_CHECK (online_side_rewrite (&w[0], &out, idx, 7, &err));
        else
            T_CHECK (online_side_write (w, &out, &err));
        T_CHECK_STR (wfake.sent, rows[r].sent);
        online_docs_destroy (&out);
    }
}

int
main (void)
{
    T_RUN (test_rows);
    T_RUN (test_default);
    T_RUN (test_forget_through_table);
    T_RUN (test_sample_through_table);
    T_RUN (test_side_writes_through_table);
    return t_done ();
}
