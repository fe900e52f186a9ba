/* The server's capabilities record (shell-ext/conn/online_caps.c) without
 * a server: the choices made from hello and buildInfo as MongoDB 5.0, 7.0
 * and 8.0 answer them (their shapes as MongoDB's manual shows them: a
 * replica set member, a standalone, a mongos), and from the replies the
 * two test servers really gave (FerretDB 1.24, mongo-java-server 1.46,
 * captured with pymongo), which must reproduce the choices made before the
 * record existed: commands of 50 statements, a side-by-side rewrite as a
 * delete and an insert, partners read whole. The probe's judges of a
 * server the table does not know (explain, a replace read back). Then
 * the check of the hosts a replica set's hello lists (issue 50: libmongoc
 * 1.23.1 crashes on one it cannot parse). */
#include <stdlib.h>

#include "online.h"
#include "test.h"

static bson_t *
json (const char *text)
{
    bson_error_t err;
    bson_t *b = bson_new_from_json ((const uint8_t *) text, -1, &err);
    if (!b)
        fprintf (stderr, "  bad JSON: %s\n", err.message);
    return b;
}

#define MONGODB_BUILD(v, a, b, c)                                                           \
    "{\"version\": \"" v "\", \"gitVersion\": \"0123456789abcdef0123456789abcdef01234567\", " \
    "\"sysInfo\": \"deprecated\", \"loaderFlags\": \"\", \"compilerFlags\": \"\", "        \
    "\"allocator\": \"tcmalloc\", \"versionArray\": [" a ", " b ", " c ", 0], "              \
    "\"openssl\": {\"running\": \"OpenSSL 3.0.2\"}, \"javascriptEngine\": \"mozjs\", "      \
    "\"bits\": 64, \"debug\": false, \"maxBsonObjectSize\": 16777216, "                     \
    "\"storageEngines\": [\"devnull\", \"wiredTiger\"], \"ok\": 1}"

static void
check_choices (const online_caps_t *c, const char *identity, int64_t write, int64_t update,
               bool replace, bool by_index)
{
    T_CHECK_STR (c->identity, identity);
    T_CHECK (c->write_chunk == write);
    T_CHECK (c->update_chunk == update);
    /* Inserts: hello's limit on MongoDB, 1000 elsewhere. */
    T_CHECK (c->insert_chunk == (write == 50 ? 1000 : write));
    T_CHECK (c->replace_keeps_order == replace);
    T_CHECK (c->in_by_index == by_index);
    T_CHECK (c->source != NULL);
}

static void
test_mongodb_50_replica_set (void)
{
    bson_t *hello = json (
        "{\"topologyVersion\": {\"processId\": {\"$oid\": \"642b972dd6128edf1d22c73b\"}, "
        "\"counter\": 7}, \"hosts\": [\"db1.example.net:27017\", \"db2.example.net:27017\"], "
        "\"passives\": [\"db3.example.net:27017\"], \"setName\": \"rs0\", \"setVersion\": 3, "
        "\"isWritablePrimary\": true, \"secondary\": false, \"primary\": "
        "\"db1.example.net:27017\", \"me\": \"db1.example.net:27017\", "
        "\"maxBsonObjectSize\": 16777216, \"maxMessageSizeBytes\": 48000000, "
        "\"maxWriteBatchSize\": 100000, \"localTime\": {\"$date\": \"2024-01-04T06:27:18Z\"}, "
        "\"logicalSessionTimeoutMinutes\": 30, \"connectionId\": 258342, "
        "\"minWireVersion\": 0, \"maxWireVersion\": 13, \"readOnly\": false, \"ok\": 1}");
    bson_t *build = json (MONGODB_BUILD ("5.0.24", "5", "0", "24"));
    online_caps_t c;
    char bad[64];

    online_caps_choose (&c, hello, false, build);
    check_choices (&c, "mongodb", 100000, 100000, true, true);
    T_CHECK (c.known);
    T_CHECK_STR (c.version, "5.0.24");
    T_CHECK_STR (c.set_name, "rs0");
    T_CHECK (c.max_bson_size == 16777216 && c.max_message_size == 48000000);
    T_CHECK (online_caps_hosts_ok (hello, bad, sizeof bad));
    bson_destroy (hello);
    bson_destroy (build);
}

static void
test_mongodb_70_standalone (void)
{
    bson_t *hello = json (
        "{\"isWritablePrimary\": true, \"topologyVersion\": {\"processId\": {\"$oid\": "
        "\"65a1b2c3d4e5f60718293a4b\"}, \"counter\": 0}, \"maxBsonObjectSize\": 16777216, "
        "\"maxMessageSizeBytes\": 48000000, \"maxWriteBatchSize\": 100000, \"localTime\": "
        "{\"$date\": \"2024-05-01T10:00:00Z\"}, \"logicalSessionTimeoutMinutes\": 30, "
        "\"connectionId\": 12, \"minWireVersion\": 0, \"maxWireVersion\": 21, "
        "\"readOnly\": false, \"ok\": 1}");
    bson_t *build = json (MONGODB_BUILD ("7.0.12", "7", "0", "12"));
    online_caps_t c;

    online_caps_choose (&c, hello, false, build);
    check_choices (&c, "mongodb", 100000, 100000, true, true);
    T_CHECK_STR (c.set_name, "");
    T_CHECK_STR (c.msg, "");
    bson_destroy (hello);
    bson_destroy (build);
}

static void
test_mongodb_80_mongos (void)
{
    bson_t *hello = json (
        "{\"isWritablePrimary\": true, \"msg\": \"isdbgrid\", \"topologyVersion\": "
        "{\"processId\": {\"$oid\": \"66f0a1b2c3d4e5f607182930\"}, \"counter\": 0}, "
        "\"maxBsonObjectSize\": 16777216, \"maxMessageSizeBytes\": 48000000, "
        "\"maxWriteBatchSize\": 100000, \"localTime\": {\"$date\": \"2025-01-01T00:00:00Z\"}, "
        "\"logicalSessionTimeoutMinutes\": 30, \"connectionId\": 4, \"maxWireVersion\": 25, "
        "\"minWireVersion\": 0, \"ok\": 1}");
    bson_t *build = json (MONGODB_BUILD ("8.0.3", "8", "0", "3"));
    online_caps_t c;

    online_caps_choose (&c, hello, false, build);
    check_choices (&c, "mongodb", 100000, 100000, true, true);
    T_CHECK_STR (c.msg, "isdbgrid");
    bson_destroy (hello);
    bson_destroy (build);
}

/* A MongoDB whose hello names a smaller limit: the commands follow it. */
static void
test_mongodb_limit_followed (void)
{
    bson_t *hello = json ("{\"isWritablePrimary\": true, \"maxWriteBatchSize\": 1000, "
                          "\"maxBsonObjectSize\": 16777216, \"ok\": 1}");
    bson_t *none = json ("{\"isWritablePrimary\": true, \"ok\": 1}");
    bson_t *build = json (MONGODB_BUILD ("7.0.2", "7", "0", "2"));
    online_caps_t c;

    online_caps_choose (&c, hello, false, build);
    check_choices (&c, "mongodb", 1000, 1000, true, true);
    online_caps_choose (&c, none, false, build);
    check_choices (&c, "mongodb", 50, 50, true, true);
    bson_destroy (hello);
    bson_destroy (none);
    bson_destroy (build);
}

/* FerretDB 1.24's own replies: it announces 100,000 but its row keeps
 * the 50 it stalls past. */
static void
test_ferretdb (void)
{
    bson_t *hello = json (
        "{\"isWritablePrimary\": true, \"maxBsonObjectSize\": 16777216, "
        "\"maxMessageSizeBytes\": 48000000, \"maxWriteBatchSize\": 100000, \"localTime\": "
        "{\"$date\": \"2026-11-26T03:47:04.335Z\"}, \"logicalSessionTimeoutMinutes\": 30, "
        "\"connectionId\": 42, \"minWireVersion\": 0, \"maxWireVersion\": 21, "
        "\"readOnly\": false, \"ok\": 1.0}");
    bson_t *build = json (
        "{\"version\": \"7.0.12\", \"gitVersion\": \"7d9c7b9922555c1c8b64fe1ac596f4c1efb570ce\", "
        "\"modules\": [], \"sysInfo\": \"deprecated\", \"versionArray\": [7, 0, 12, 0], "
        "\"bits\": 64, \"debug\": false, \"maxBsonObjectSize\": 16777216, "
        "\"buildEnvironment\": {\"CGO_ENABLED\": \"0\", \"GOARCH\": \"amd64\"}, "
        "\"ferretdbVersion\": \"v1.24.0\", \"ferretdbFeatures\": {\"aggregationStages\": "
        "[\"$match\"]}, \"ok\": 1.0}");
    online_caps_t c;

    online_caps_choose (&c, hello, false, build);
    check_choices (&c, "ferretdb", 50, 50, false, false);
    T_CHECK (c.max_write_batch == 100000);
    T_CHECK_STR (c.version, "7.0.12");
    bson_destroy (hello);
    bson_destroy (build);
}

/* mongo-java-server 1.46 refuses hello (CommandNotFound); its isMaster
 * and buildInfo as it gave them. */
static void
test_mongo_java_server (void)
{
    bson_t *is_master = json (
        "{\"ismaster\": true, \"maxBsonObjectSize\": 16777216, \"maxWriteBatchSize\": 1000, "
        "\"maxMessageSizeBytes\": 48000000, \"maxWireVersion\": 7, \"minWireVersion\": 0, "
        "\"localTime\": {\"$date\": \"2026-11-26T03:47:08.522Z\"}, \"ok\": 1.0}");
    bson_t *build = json ("{\"version\": \"4.0.0\", \"versionArray\": [4, 0, 0], "
                          "\"maxBsonObjectSize\": 16777216, \"ok\": 1.0}");
    online_caps_t c;

    online_caps_choose (&c, is_master, true, build);
    check_choices (&c, "mongo-java-server", 50, 50, false, false);
    T_CHECK (c.max_write_batch == 1000);
    /* Neither hello nor isMaster: the same build still tells it. */
    online_caps_choose (&c, NULL, true, build);
    check_choices (&c, "mongo-java-server", 50, 50, false, false);
    bson_destroy (is_master);
    bson_destroy (build);
}

/* A server that answers neither, or one that is neither MongoDB nor in
 * the table: the conservative row; and a record never filled. */
static void
test_unknown_conservative (void)
{
    bson_t *build = json ("{\"version\": \"5.0.0\", \"gitVersion\": \"x\", \"ok\": 1}");
    online_caps_t c;
    online_t on;
    online_run_t on_run;

    online_caps_choose (&c, NULL, true, NULL);
    check_choices (&c, "unknown", 50, 50, false, false);
    T_CHECK (!c.known);
    online_caps_choose (&c, NULL, true, build);
    check_choices (&c, "unknown", 50, 50, false, false);
    online_init (&on, &on_run);
    T_CHECK (online_caps_write_chunk (&on) == 50);
    T_CHECK (online_caps_update_chunk (&on) == 50);
    T_CHECK (online_caps_insert_chunk (&on) == 1000);
    T_CHECK (!online_caps_replace_keeps_order (&on));
    T_CHECK (!online_caps_in_by_index (&on));
    bson_destroy (build);
}

static void
test_print (void)
{
    bson_t *hello = json ("{\"isWritablePrimary\": true, \"setName\": \"rs\\u001b[2J\", "
                          "\"maxWriteBatchSize\": 100000, \"maxBsonObjectSize\": 16777216, "
                          "\"maxMessageSizeBytes\": 48000000, \"ok\": 1}");
    bson_t *build = json (MONGODB_BUILD ("8.0.3", "8", "0", "3"));
    online_caps_t c;
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream (&text, &n);
    bson_t doc = BSON_INITIALIZER;
    bson_iter_t it;

    online_caps_choose (&c, hello, false, build);
    online_caps_print (&c, out);
    fclose (out);
    T_CHECK (strstr (text, "server: mongodb 8.0.3, replica set rs\\x1b[2J\n") != NULL);
    T_CHECK (strstr (text, "maxWriteBatchSize 100000") != NULL);
    T_CHECK (strstr (text, "100000 statements a command") != NULL);
    T_CHECK (strstr (text, "rewrite by replace") != NULL);
    online_caps_append (&c, &doc, "server");
    T_CHECK (bson_iter_init (&it, &doc) &&
             bson_iter_find_descendant (&it, "server.writeChunk", &it) &&
             bson_iter_as_int64 (&it) == 100000);
    T_CHECK (bson_iter_init (&it, &doc) &&
             bson_iter_find_descendant (&it, "server.identity", &it) &&
             !strcmp (bson_iter_utf8 (&it, NULL), "mongodb"));
    free (text);
    bson_destroy (&doc);
    bson_destroy (hello);
    bson_destroy (build);
}

static void
test_host_parse (void)
{
    const char *good[] = {"db1.example.net:27017", "localhost", "127.0.0.1:1", "[::1]:27017",
                          "[fe80::1%eth0]:27018", "[::1]", "/tmp/mongodb-27017.sock",
                          "a_b-c:65535"};
    const char *bad[] = {"", "bad host:27017", "h:x", "h:0", "h:65536", "a:b:27017",
                         "h:27017/x", "[::1", "[]:1", "[::1]x", ":27017", "h,i:1", "h@i:1",
                         "/tmp/x", "h:123456"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        if (!online_caps_host_ok (good[i])) {
            fprintf (stderr, "  refused: %s\n", good[i]);
            t_fail_checks++;
        }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (online_caps_host_ok (bad[i])) {
            fprintf (stderr, "  taken: %s\n", bad[i]);
            t_fail_checks++;
        }
}

static void
test_hosts_of_hello (void)
{
    bson_t *passive = json ("{\"hosts\": [\"a:1\"], \"passives\": [\"b:2\", \"c d:3\"], "
                            "\"me\": \"a:1\", \"ok\": 1}");
    bson_t *arbiter = json ("{\"hosts\": [\"a:1\"], \"arbiters\": [\"e:\\u00e9\"], \"ok\": 1}");
    bson_t *me = json ("{\"hosts\": [\"a:1\"], \"me\": 5, \"ok\": 1}");
    bson_t *none = json ("{\"isWritablePrimary\": true, \"ok\": 1}");
    char bad[64];

    T_CHECK (!online_caps_hosts_ok (passive, bad, sizeof bad));
    T_CHECK_STR (bad, "c d:3");
    T_CHECK (!online_caps_hosts_ok (arbiter, bad, sizeof bad));
    T_CHECK_STR (bad, "e:\\xc3\\xa9");
    T_CHECK (!online_caps_hosts_ok (me, bad, sizeof bad));
    T_CHECK_STR (bad, "(not a string)");
    T_CHECK (online_caps_hosts_ok (none, bad, sizeof bad));
    bson_destroy (passive);
    bson_destroy (arbiter);
    bson_destroy (me);
    bson_destroy (none);
}

/* The probe's judges: explain replies as MongoDB 5.0 (classic), 7.0
 * (slot-based, the plan under queryPlan) and a mongos give them, and as
 * FerretDB 1.24 gave it; a replace read back in the given order or not. */
static void
test_probe_judges (void)
{
    bson_t *classic = json (
        "{\"queryPlanner\": {\"namespace\": \"remodel.p\", \"winningPlan\": {\"stage\": "
        "\"FETCH\", \"inputStage\": {\"stage\": \"IXSCAN\", \"keyPattern\": {\"k\": 1}, "
        "\"indexName\": \"k_1\"}}, \"rejectedPlans\": []}, \"ok\": 1}");
    bson_t *sbe = json (
        "{\"explainVersion\": \"2\", \"queryPlanner\": {\"winningPlan\": {\"queryPlan\": "
        "{\"stage\": \"FETCH\", \"planNodeId\": 2, \"inputStage\": {\"stage\": \"IXSCAN\", "
        "\"planNodeId\": 1, \"indexName\": \"k_1\"}}, \"slotBasedPlan\": {\"slots\": \"\"}}}, "
        "\"ok\": 1}");
    bson_t *sharded = json (
        "{\"queryPlanner\": {\"winningPlan\": {\"stage\": \"SINGLE_SHARD\", \"shards\": "
        "[{\"shardName\": \"s0\", \"winningPlan\": {\"stage\": \"FETCH\", \"inputStage\": "
        "{\"stage\": \"IXSCAN\"}}}]}}, \"ok\": 1}");
    bson_t *collscan = json ("{\"queryPlanner\": {\"winningPlan\": {\"stage\": \"COLLSCAN\", "
                             "\"filter\": {\"k\": {\"$in\": [1, 2]}}}}, \"ok\": 1}");
    bson_t *ferretdb = json ("{\"queryPlanner\": {\"Plan\": [\"id=2 parent=0 notused=0 "
                             "detail=SCAN p_f50c43ef\"]}, \"ok\": 1}");
    bson_t *given = json ("{\"_id\": 1, \"c\": 3, \"b\": 2, \"a\": 1}");
    bson_t *kept = json ("{\"_id\": 1, \"c\": 3, \"b\": 2, \"a\": 1}");
    bson_t *stored = json ("{\"_id\": 1, \"a\": 1, \"b\": 2, \"c\": 3}");
    bson_t *shorter = json ("{\"_id\": 1, \"c\": 3, \"b\": 2}");

    T_CHECK (online_explain_indexed (classic));
    T_CHECK (online_explain_indexed (sbe));
    T_CHECK (online_explain_indexed (sharded));
    T_CHECK (!online_explain_indexed (collscan));
    T_CHECK (!online_explain_indexed (ferretdb));
    T_CHECK (online_caps_order_kept (given, kept));
    T_CHECK (!online_caps_order_kept (given, stored));
    T_CHECK (!online_caps_order_kept (given, shorter));
    bson_destroy (classic);
    bson_destroy (sbe);
    bson_destroy (sharded);
    bson_destroy (collscan);
    bson_destroy (ferretdb);
    bson_destroy (given);
    bson_destroy (kept);
    bson_destroy (stored);
    bson_destroy (shorter);
}

/* The points' judge (online_points.c): an _id read served without a
 * whole read, as MongoDB 6.0 (IDHACK), 8.0 (EXPRESS_IXSCAN) and FerretDB
 * 1.24 (filterPushdown, true for a string _id's equality, false for its
 * $in: the replies it gave, captured with pymongo) say it; a collection
 * scan and FerretDB's refusal to push a filter down are not. */
static void
test_served_judge (void)
{
    bson_t *idhack = json ("{\"queryPlanner\": {\"winningPlan\": {\"stage\": \"IDHACK\"}}, "
                           "\"ok\": 1}");
    bson_t *express = json ("{\"explainVersion\": \"1\", \"queryPlanner\": {\"winningPlan\": "
                            "{\"isCached\": false, \"stage\": \"EXPRESS_IXSCAN\", "
                            "\"keyPattern\": \"{ _id: 1 }\"}}, \"ok\": 1}");
    bson_t *ixscan = json ("{\"queryPlanner\": {\"winningPlan\": {\"stage\": \"FETCH\", "
                           "\"inputStage\": {\"stage\": \"IXSCAN\", \"indexName\": \"_id_\"}}}, "
                           "\"ok\": 1}");
    bson_t *pushed = json ("{\"queryPlanner\": {\"Plan\": [\"id=2 parent=0 notused=0 "
                           "detail=SCAN s_f60c4582\"]}, \"explainVersion\": \"1\", "
                           "\"filterPushdown\": true, \"sortPushdown\": false, "
                           "\"limitPushdown\": false, \"ok\": 1.0}");
    bson_t *not_pushed = json ("{\"queryPlanner\": {\"Plan\": [\"id=2 parent=0 notused=0 "
                               "detail=SCAN s_f60c4582\"]}, \"explainVersion\": \"1\", "
                               "\"filterPushdown\": false, \"sortPushdown\": false, "
                               "\"limitPushdown\": false, \"ok\": 1.0}");
    bson_t *collscan = json ("{\"queryPlanner\": {\"winningPlan\": {\"stage\": \"COLLSCAN\"}}, "
                             "\"ok\": 1}");

    T_CHECK (online_explain_served (idhack));
    T_CHECK (online_explain_served (express));
    T_CHECK (online_explain_served (ixscan));
    T_CHECK (online_explain_served (pushed));
    T_CHECK (!online_explain_served (not_pushed));
    T_CHECK (!online_explain_served (collscan));
    /* The index judge still wants an index scan itself. */
    T_CHECK (!online_explain_indexed (idhack));
    T_CHECK (!online_explain_indexed (pushed));
    bson_destroy (idhack);
    bson_destroy (express);
    bson_destroy (ixscan);
    bson_destroy (pushed);
    bson_destroy (not_pushed);
    bson_destroy (collscan);
}

int
main (void)
{
    T_RUN (test_mongodb_50_replica_set);
    T_RUN (test_mongodb_70_standalone);
    T_RUN (test_mongodb_80_mongos);
    T_RUN (test_mongodb_limit_followed);
    T_RUN (test_ferretdb);
    T_RUN (test_mongo_java_server);
    T_RUN (test_unknown_conservative);
    T_RUN (test_print);
    T_RUN (test_host_parse);
    T_RUN (test_hosts_of_hello);
    T_RUN (test_probe_judges);
    T_RUN (test_served_judge);
    return t_done ();
}
