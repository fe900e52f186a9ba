/* --to-uri without a server: which connection each collection is routed
 * to (online_pair_client, conn/online.h), and the pair's record
 * (state/online_pair_record.c) through a fake table of operations: none
 * recorded and a run beginning, it is written; the same pair, passed;
 * another source or destination, refused naming both. */
#include "online_state.h"
#include "test.h"

static void
test_routing (void)
{
    online_opts_t o = {.state_db = "remodel"};
    online_pair_t pair;
    online_t on;
    mongoc_client_t *dest = (mongoc_client_t *) (uintptr_t) 0x10;
    mongoc_client_t *src = (mongoc_client_t *) (uintptr_t) 0x20;

    memset (&on, 0, sizeof on);
    memset (&pair, 0, sizeof pair);
    on.o = &o;
    on.client = dest;
    on.pair = &pair;
    pair.client = src;
    /* a plan's namespace under its own name: the source's */
    T_CHECK (online_pair_client (&on, "shop", "parents") == src);
    /* a result, side by side, and the state database: the destination's */
    T_CHECK (online_pair_client (&on, "shop", "parents_remodel_emb_0123456789ab_1") == dest);
    T_CHECK (online_pair_client (&on, "remodel", "plans") == dest);
    /* once finalize named the results: every collection */
    pair.all_dest = true;
    T_CHECK (online_pair_client (&on, "shop", "parents") == dest);
}

/* The fake state database: one pairs document, or none. */
static struct {
    bson_t doc;
    bool has;
    int inserts;
} fake;

static bool
fake_read (online_t *on, const char *coll, const bson_t *filter, bson_t *doc, bool *found,
           bson_error_t *why)
{
    (void) on, (void) filter, (void) why;
    T_CHECK_STR (coll, "pairs");
    bson_init (doc);
    *found = fake.has;
    if (fake.has)
        bson_concat (doc, &fake.doc);
    return true;
}

static bool
fake_insert (online_t *on, const char *coll, const bson_t *doc, bson_error_t *why)
{
    (void) on, (void) why;
    T_CHECK_STR (coll, "pairs");
    bson_reinit (&fake.doc);
    bson_concat (&fake.doc, doc);
    fake.has = true;
    fake.inserts++;
    return true;
}

static void
test_record (void)
{
    online_opts_t o = {.state_db = "remodel"};
    online_ops_t ops = online_ops_mongoc;
    online_pair_t pair;
    online_t on;
    bson_error_t err = {0};

    memset (&on, 0, sizeof on);
    memset (&pair, 0, sizeof pair);
    bson_init (&fake.doc);
    ops.state_read = fake_read;
    ops.state_insert = fake_insert;
    on.o = &o;
    on.ops = &ops;
    on.pair = &pair;
    snprintf (on.names.id, sizeof on.names.id, "emb_0123456789ab");
    snprintf (on.names.name, sizeof on.names.name, "emb.json");
    snprintf (on.caps.identity, sizeof on.caps.identity, "mongo-java-server");
    snprintf (on.caps.version, sizeof on.caps.version, "4.0.0");
    snprintf (on.where, sizeof on.where, "127.0.0.1:2");
    snprintf (pair.caps.identity, sizeof pair.caps.identity, "ferretdb");
    snprintf (pair.caps.version, sizeof pair.caps.version, "7.0.12");
    snprintf (pair.caps.set_name, sizeof pair.caps.set_name, "rs0");
    snprintf (pair.where, sizeof pair.where, "127.0.0.1:1");

    /* nothing recorded: a command that does not begin passes, writes nothing */
    T_CHECK (online_pair_record (&on, false, &err));
    T_CHECK (fake.inserts == 0);
    /* a run beginning records both, by what they say */
    T_CHECK (online_pair_record (&on, true, &err));
    T_CHECK (fake.inserts == 1);
    {
        char s[200], d[200];
        online_field_utf8 (&fake.doc, "source", s, sizeof s);
        online_field_utf8 (&fake.doc, "destination", d, sizeof d);
        T_CHECK_STR (s, "ferretdb 7.0.12, set rs0, at 127.0.0.1:1");
        T_CHECK_STR (d, "mongo-java-server 4.0.0, set none, at 127.0.0.1:2");
    }
    /* the same pair again: passed, nothing written */
    T_CHECK (online_pair_record (&on, true, &err));
    T_CHECK (fake.inserts == 1);
    /* another source: refused, naming both pairs */
    snprintf (pair.where, sizeof pair.where, "127.0.0.1:3");
    T_CHECK (!online_pair_record (&on, false, &err));
    T_CHECK (err.code == RM_ERR_USAGE);
    T_CHECK (strstr (err.message, "recorded from ferretdb 7.0.12, set rs0, at 127.0.0.1:1 to "
                                  "mongo-java-server 4.0.0, set none, at 127.0.0.1:2") != NULL);
    T_CHECK (strstr (err.message, "this command names ferretdb 7.0.12, set rs0, at "
                                  "127.0.0.1:3") != NULL);
    bson_destroy (&fake.doc);
}

int
main (void)
{
    T_RUN (test_routing);
    T_RUN (test_record);
    return t_done ();
}
