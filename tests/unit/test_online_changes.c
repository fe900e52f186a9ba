/* Change events into the _ids a sync recomputes from
 * (shell-ext/online_change_event.c, online_changes.c), without a server:
 * a change stream's batches in the shapes MongoDB and mongo-java-server
 * give them (the latter's update events name the update's spec, not the
 * _id, as documentKey: tests/fuzz/corpus/online holds real ones), oplog
 * entries, what makes a rescan, the oldest event's time, and the resume
 * token's time against the next point, remodel's own renames and drops
 * (finalize's switch) told from anyone else's; and a changed join partner's key
 * values, by which the drivers it affects are found (online_keys.c). */
#include "online_changes.h"
#include "remodel/docpath.h"
#include "test.h"

/* A MongoDB resume token: KeyString, a Timestamp (130) first. */
#define TOKEN "8265A1B2C30000000A2B022C0100296E5A1004ABCDEF"
#define TOKEN_T 0x65A1B2C3u
#define TOKEN_I 10u

/* The _ids of ns's list, as Extended JSON values joined by spaces. */
static void
ids_of (online_changes_t *ch, const char *ns, char *buf, size_t cap)
{
    online_idlist_t *l = online_changes_list (ch, ns, false);
    *buf = '\0';
    for (uint32_t i = 0; l && i < l->n; i++) {
        bson_iter_t id;
        bson_t one = BSON_INITIALIZER;
        char *json;
        size_t n = strlen (buf);
        T_CHECK (online_idlist_get (l, i, &id));
        bson_append_iter (&one, "v", 1, &id);
        json = bson_as_canonical_extended_json (&one, NULL);
        snprintf (buf + n, cap - n, "%s%s", n ? " " : "", json);
        bson_free (json);
        bson_destroy (&one);
    }
}

static void
test_stream_batch (void)
{
    online_changes_t ch;
    online_stream_at_t at = {false, 0, 0};
    int64_t id = -1;
    char ids[1024];
    bson_error_t e;
    /* insert, update and replace as MongoDB gives them, an update as
     * mongo-java-server does (documentKey the spec: the _id is
     * fullDocument's), a delete, the insert's _id again, an update
     * whose document is gone since (no _id anywhere: its delete
     * follows), something not an event. */
    bson_t *reply = bson_new_from_json (
        (const uint8_t *) "{\"cursor\": {\"id\": {\"$numberLong\": \"42\"}, \"ns\": \"crm.tasks\","
        " \"postBatchResumeToken\": {\"_data\": \"" TOKEN "\"}, \"firstBatch\": ["
        "{\"operationType\": \"insert\", \"documentKey\": {\"_id\": \"s1\"},"
        "  \"clusterTime\": {\"$timestamp\": {\"t\": 1700000200, \"i\": 1}}},"
        "{\"operationType\": \"update\", \"documentKey\": {\"_id\": {\"$numberInt\": \"7\"}},"
        "  \"fullDocument\": {\"_id\": {\"$numberInt\": \"7\"}, \"a\": 1},"
        "  \"clusterTime\": {\"$timestamp\": {\"t\": 1700000100, \"i\": 5}}},"
        "{\"operationType\": \"replace\", \"documentKey\": {\"_id\": {\"$numberLong\": \"7\"}}},"
        "{\"operationType\": \"update\", \"documentKey\": {\"$set\": {\"owner\": 2}},"
        "  \"fullDocument\": {\"_id\": {\"$oid\": \"5f1d7f3e9c1b2a3d4e5f6071\"}, \"owner\": 2}},"
        "{\"operationType\": \"delete\", \"documentKey\": {\"_id\": \"gone\"}, \"fullDocument\": null},"
        "{\"operationType\": \"insert\", \"documentKey\": {\"_id\": \"s1\"}},"
        "{\"operationType\": \"update\", \"documentKey\": {\"$set\": {\"owner\": 3}}, \"fullDocument\": {}},"
        "{\"documentKey\": {\"_id\": \"no type\"}},"
        "5]}, \"ok\": 1.0}",
        -1, &e);
    T_CHECK (reply != NULL);
    online_changes_init (&ch);
    online_stream_batch (&ch, "crm.tasks", reply, "firstBatch", &id, &at);
    T_CHECK (id == 42);
    T_CHECK (ch.events == 8);   /* every document of the batch */
    T_CHECK (ch.kept == 5);
    T_CHECK_STR (ch.rescan, "");
    T_CHECK (ch.oldest == 1700000100);
    ids_of (&ch, "crm.tasks", ids, sizeof ids);
    /* each once, first seen first; 7 and 7L are two _ids */
    T_CHECK_STR (ids, "{ \"v\" : \"s1\" } { \"v\" : { \"$numberInt\" : \"7\" } } "
                      "{ \"v\" : { \"$numberLong\" : \"7\" } } "
                      "{ \"v\" : { \"$oid\" : \"5f1d7f3e9c1b2a3d4e5f6071\" } } { \"v\" : \"gone\" }");
    T_CHECK (at.known && at.t == TOKEN_T && at.i == TOKEN_I);
    /* The same batch under the other name is not read as this one. */
    online_stream_batch (&ch, "crm.tasks", reply, "nextBatch", &id, &at);
    T_CHECK (ch.events == 8 && id == 42);
    online_changes_destroy (&ch);
    bson_destroy (reply);
}

static void
test_stream_rescan (void)
{
    online_changes_t ch;
    online_stream_at_t at = {false, 0, 0};
    int64_t id = -1;
    bson_error_t e;
    /* mongo-java-server's drop of another collection in this stream
     * (its tokens hold no time); after it, no _id is kept. */
    bson_t *reply = bson_new_from_json (
        (const uint8_t *) "{\"cursor\": {\"id\": 9, \"ns\": \"crm.tasks\", \"nextBatch\": ["
        "{\"_id\": {\"_data\": \"6b0626dd000000db\"}, \"operationType\": \"drop\","
        "  \"ns\": {\"db\": \"crm\", \"coll\": \"people_copy\"},"
        "  \"wallTime\": {\"$date\": {\"$numberLong\": \"1700000300000\"}}},"
        "{\"operationType\": \"insert\", \"documentKey\": {\"_id\": 1}}]},"
        " \"postBatchResumeToken\": {\"_data\": \"6b0626dd000000db\"}, \"ok\": 1.0}",
        -1, &e);
    online_changes_init (&ch);
    online_stream_batch (&ch, "crm.tasks", reply, "nextBatch", &id, &at);
    T_CHECK_STR (ch.rescan, "the change log shows a drop of crm.people_copy");
    T_CHECK (ch.events == 2 && ch.kept == 0);
    T_CHECK (ch.oldest == 1700000300);
    T_CHECK (id == 9);
    T_CHECK (!at.known); /* a token that is no KeyString */
    online_changes_destroy (&ch);
    bson_destroy (reply);
    /* An invalidate naming no namespace: the stream's. */
    reply = bson_new_from_json ((const uint8_t *) "{\"cursor\": {\"id\": 0, \"firstBatch\": ["
                                                  "{\"operationType\": \"invalidate\"}]}}",
                                -1, &e);
    online_changes_init (&ch);
    online_stream_batch (&ch, "crm.tasks", reply, "firstBatch", &id, &at);
    T_CHECK_STR (ch.rescan, "the change log shows a invalidate of crm.tasks");
    T_CHECK (id == 0);
    online_changes_destroy (&ch);
    bson_destroy (reply);
}

/* remodel's own DDL (finalize's switch, ch.own): a rename event as
 * MongoDB's documentation shows one (operationType "rename", ns, to),
 * then the invalidate MongoDB sends on the renamed collection's stream,
 * are skipped, the stream to be opened again after the invalidate; any
 * other rename or drop, or one of a name remodel renamed to elsewhere,
 * is still a rescan. */
static const online_ddl_t own_switch[] = {
    {"crm.people", "crm.people_remodel_ab12_backup"},
    {"crm.people_remodel_ab12_1", "crm.people"},
    {"crm.people_remodel_ab12_0", ""}, /* an intermediate result dropped */
};

#define EV_RENAME(from, to)                                                                      \
    "{\"_id\": {\"_data\": \"82aa\"}, \"operationType\": \"rename\","                         \
    " \"clusterTime\": {\"$timestamp\": {\"t\": 1700000400, \"i\": 1}},"                      \
    " \"wallTime\": {\"$date\": {\"$numberLong\": \"1700000400000\"}},"                         \
    " \"ns\": {\"db\": \"crm\", \"coll\": \"" from "\"}, \"to\": {\"db\": \"crm\", \"coll\": \"" to "\"}}"
#define EV_INVALIDATE                                                                            \
    "{\"_id\": {\"_data\": \"82bb\"}, \"operationType\": \"invalidate\","                     \
    " \"clusterTime\": {\"$timestamp\": {\"t\": 1700000400, \"i\": 2}}}"

/* batch's events (JSON, comma-separated) through a stream of crm.people
 * with remodel's own DDL known (own) or not: ch's rescan, the _ids kept. */
static void
own_batch (const char *batch, bool own, online_changes_t *ch)
{
    bson_error_t e;
    char json[4096];
    online_stream_at_t at = {false, 0, 0};
    int64_t id = -1;
    bson_t *reply;
    snprintf (json, sizeof json, "{\"cursor\": {\"id\": 0, \"ns\": \"crm.people\", "
              "\"firstBatch\": [%s]}}", batch);
    reply = bson_new_from_json ((const uint8_t *) json, -1, &e);
    T_CHECK (reply != NULL);
    online_changes_init (ch);
    if (own) {
        ch->own = own_switch;
        ch->n_own = sizeof own_switch / sizeof own_switch[0];
    }
    if (reply)
        online_stream_batch (ch, "crm.people", reply, "firstBatch", &id, &at);
    bson_destroy (reply);
}

static void
test_stream_own_ddl (void)
{
    online_changes_t ch;
    char ids[256];
    bson_iter_t it;
    /* The switch's rename away, its invalidate, then (the stream opened
     * again) the rename into place and a write after it. */
    own_batch (EV_RENAME ("people", "people_remodel_ab12_backup") "," EV_INVALIDATE, true, &ch);
    T_CHECK_STR (ch.rescan, "");
    T_CHECK (ch.reopen != NULL && bson_iter_init_find (&it, ch.reopen, "_data") &&
             !strcmp (bson_iter_utf8 (&it, NULL), "82bb"));
    online_changes_destroy (&ch);
    own_batch (EV_RENAME ("people_remodel_ab12_1", "people") ","
               "{\"operationType\": \"insert\", \"documentKey\": {\"_id\": \"late\"}},"
               "{\"operationType\": \"drop\", \"ns\": {\"db\": \"crm\", \"coll\": "
               "\"people_remodel_ab12_0\"}}",
               true, &ch);
    ids_of (&ch, "crm.people", ids, sizeof ids);
    T_CHECK_STR (ch.rescan, "");
    T_CHECK_STR (ids, "{ \"v\" : \"late\" }");
    T_CHECK (ch.reopen == NULL && ch.events == 3);
    online_changes_destroy (&ch);
    /* The same events with nothing of remodel's known: a rescan. */
    own_batch (EV_RENAME ("people", "people_remodel_ab12_backup"), false, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a rename of crm.people");
    online_changes_destroy (&ch);
    /* Not remodel's: another target, another source, a drop of the
     * namespace, an invalidate after a write, a rename with no target. */
    own_batch (EV_RENAME ("people", "people_old"), true, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a rename of crm.people");
    online_changes_destroy (&ch);
    own_batch (EV_RENAME ("people_remodel_ab12_backup", "people"), true, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a rename of crm.people_remodel_ab12_backup");
    online_changes_destroy (&ch);
    own_batch ("{\"operationType\": \"drop\", \"ns\": {\"db\": \"crm\", \"coll\": \"people\"}}",
               true, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a drop of crm.people");
    online_changes_destroy (&ch);
    own_batch (EV_RENAME ("people", "people_remodel_ab12_backup") ","
               "{\"operationType\": \"insert\", \"documentKey\": {\"_id\": 1}}," EV_INVALIDATE,
               true, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a invalidate of crm.people");
    T_CHECK (ch.reopen == NULL);
    online_changes_destroy (&ch);
    own_batch ("{\"operationType\": \"rename\", \"ns\": {\"db\": \"crm\", \"coll\": \"people\"}}",
               true, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a rename of crm.people");
    online_changes_destroy (&ch);
    /* mongo-java-server's drop events name no collection: one a drop of
     * remodel's own (one intermediate here) is taken, a second is not. */
    own_batch ("{\"operationType\": \"drop\"},"
               "{\"operationType\": \"insert\", \"documentKey\": {\"_id\": 2}}",
               true, &ch);
    T_CHECK_STR (ch.rescan, "");
    T_CHECK (ch.kept == 1);
    online_changes_destroy (&ch);
    own_batch ("{\"operationType\": \"drop\"}, {\"operationType\": \"drop\"}", true, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a drop of crm.people");
    online_changes_destroy (&ch);
    own_batch ("{\"operationType\": \"drop\"}", false, &ch);
    T_CHECK_STR (ch.rescan, "the change log shows a drop of crm.people");
    online_changes_destroy (&ch);
}

static bson_t *
token (const char *data)
{
    return BCON_NEW ("_data", BCON_UTF8 (data));
}

/* The resume token's time, and a stream behind the next point until its
 * token's time reaches the point's. */
static void
test_token_time (void)
{
    uint32_t t = 0, i = 0;
    bson_t *tok = token (TOKEN);
    online_stream_at_t at = {false, 0, 0};
    online_capture_t to;

    T_CHECK (rm_resume_token_time (tok, &t, &i) && t == TOKEN_T && i == TOKEN_I);
    bson_destroy (tok);
    tok = token ("82FFFFFFFFFFFFFFFF");
    T_CHECK (rm_resume_token_time (tok, &t, &i) && t == 0xFFFFFFFFu && i == 0xFFFFFFFFu);
    bson_destroy (tok);
    tok = token ("8265a1b2c30000000a"); /* lower case */
    T_CHECK (rm_resume_token_time (tok, &t, &i) && t == TOKEN_T && i == TOKEN_I);
    bson_destroy (tok);
    tok = token ("8265A1B2C30000000"); /* one digit short */
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);
    tok = token ("8365A1B2C30000000A"); /* not a Timestamp first */
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);
    tok = token ("8265A1B2C3000000XA");
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);
    tok = BCON_NEW ("_data", BCON_INT32 (1));
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);

    online_capture_init (&to);
    to.has_ts = true;
    to.ts_t = TOKEN_T;
    to.ts_i = TOKEN_I;
    T_CHECK (!online_stream_behind (&at, &to)); /* nothing known: not behind */
    at.known = true;
    at.t = TOKEN_T - 1, at.i = 99;
    T_CHECK (online_stream_behind (&at, &to));
    at.t = TOKEN_T, at.i = TOKEN_I - 1;
    T_CHECK (online_stream_behind (&at, &to));
    at.t = TOKEN_T, at.i = TOKEN_I;
    T_CHECK (!online_stream_behind (&at, &to));
    at.t = TOKEN_T + 1, at.i = 0;
    T_CHECK (!online_stream_behind (&at, &to));
    at.t = 0;
    to.has_ts = false; /* a point without a time */
    T_CHECK (!online_stream_behind (&at, &to));
    online_capture_destroy (&to);
}

static void
oplog (online_changes_t *ch, const char *json, const char **nss, size_t n)
{
    bson_error_t e;
    bson_t *entry = bson_new_from_json ((const uint8_t *) json, -1, &e);
    T_CHECK (entry != NULL);
    if (!entry) {
        fprintf (stderr, "  %s: %s\n", json, e.message);
        return;
    }
    ch->nss = nss;
    ch->nns = n;
    online_oplog_entry (ch, entry);
    bson_destroy (entry);
}

static void
test_oplog (void)
{
    const char *nss[] = {"crm.people", "crm.tasks"};
    online_changes_t ch;
    char ids[512];
    online_changes_init (&ch);
    /* FerretDB's and MongoDB's: i and d name the _id in o, u in o2. */
    oplog (&ch, "{\"op\": \"i\", \"ns\": \"crm.tasks\", \"ts\": {\"$timestamp\": {\"t\": 1700000500, \"i\": 3}},"
                " \"o\": {\"_id\": 101, \"owner\": 7}}", nss, 2);
    oplog (&ch, "{\"op\": \"u\", \"ns\": \"crm.tasks\", \"ts\": {\"$timestamp\": {\"t\": 1700000400, \"i\": 1}},"
                " \"o\": {\"$v\": 1, \"$set\": {\"owner\": 4}}, \"o2\": {\"_id\": 103}}", nss, 2);
    oplog (&ch, "{\"op\": \"d\", \"ns\": \"crm.people\", \"o\": {\"_id\": \"p9\"}}", nss, 2);
    oplog (&ch, "{\"op\": \"u\", \"ns\": \"crm.tasks\", \"o\": {\"_id\": 999}}", nss, 2); /* no o2 */
    oplog (&ch, "{\"op\": \"n\", \"ns\": \"crm.tasks\", \"o\": {\"msg\": \"noop\"}}", nss, 2);
    oplog (&ch, "{\"ns\": \"crm.tasks\", \"o\": {\"_id\": 5}}", nss, 2);     /* no op: not counted */
    oplog (&ch, "{\"op\": \"i\", \"o\": {\"_id\": 5}}", nss, 2);             /* no ns */
    oplog (&ch, "{\"op\": \"i\", \"ns\": 3, \"o\": {\"_id\": 5}}", nss, 2);  /* ns not a string */
    T_CHECK (ch.events == 5);
    T_CHECK (ch.kept == 3);
    T_CHECK (ch.oldest == 1700000400);
    ids_of (&ch, "crm.tasks", ids, sizeof ids);
    T_CHECK_STR (ids, "{ \"v\" : { \"$numberInt\" : \"101\" } } { \"v\" : { \"$numberInt\" : \"103\" } }");
    ids_of (&ch, "crm.people", ids, sizeof ids);
    T_CHECK_STR (ids, "{ \"v\" : \"p9\" }");
    T_CHECK_STR (ch.rescan, "");
    online_changes_destroy (&ch);
}

/* A command entry: whether it names a source, itself or its database. */
static void
check_command (const char *json, const char *want)
{
    const char *nss[] = {"crm.people", "crm.tasks"};
    online_changes_t ch;
    online_changes_init (&ch);
    oplog (&ch, json, nss, 2);
    T_CHECK (ch.events == 1);
    if (strcmp (ch.rescan, want))
        fprintf (stderr, "  %s\n", json);
    T_CHECK_STR (ch.rescan, want);
    online_changes_destroy (&ch);
}

static void
test_oplog_commands (void)
{
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"drop\": \"people\"}}",
                   "the change log shows a drop of crm.people");
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"collMod\": \"tasks\", \"index\": "
                   "{\"name\": \"a_1\", \"hidden\": true}}}",
                   "the change log shows a collMod of crm.tasks");
    /* Only the validation set (finalize --validators' own): no document
     * and nothing a step computes changes. */
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"collMod\": \"tasks\", \"validator\": {},"
                   " \"validationLevel\": \"moderate\", \"validationAction\": \"warn\"}}", "");
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"renameCollection\": \"crm.tasks\","
                   " \"to\": \"crm.old\"}}",
                   "the change log shows a renameCollection of crm.tasks");
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"dropDatabase\": 1}}",
                   "the change log shows a dropDatabase of crm");
    /* Not a source: a prefix of one's name, another database, another
     * command. */
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"drop\": \"peop\"}}", "");
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"drop\": \"people_copy\"}}", "");
    check_command ("{\"op\": \"c\", \"ns\": \"cr.$cmd\", \"o\": {\"dropDatabase\": 1}}", "");
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"create\": \"people\"}}", "");
    check_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"drop\": 5}}", "");
}

/* remodel's own renames and drops in the oplog (ch.own): skipped; the
 * same names with another target, or no target, still a rescan. */
static void
check_own_command (const char *json, const char *want)
{
    const char *nss[] = {"crm.people", "crm.tasks"};
    const online_ddl_t own[] = {{"crm.people", "crm.people_remodel_ab12_backup"},
                                {"crm.tasks", ""}};
    online_changes_t ch;
    online_changes_init (&ch);
    ch.own = own;
    ch.n_own = 2;
    oplog (&ch, json, nss, 2);
    T_CHECK (ch.events == 1);
    if (strcmp (ch.rescan, want))
        fprintf (stderr, "  %s\n", json);
    T_CHECK_STR (ch.rescan, want);
    online_changes_destroy (&ch);
}

static void
test_oplog_own_commands (void)
{
    check_own_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"renameCollection\": "
                       "\"crm.people\", \"to\": \"crm.people_remodel_ab12_backup\", \"stayTemp\": false}}",
                       "");
    check_own_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"drop\": \"tasks\"}}", "");
    check_own_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"renameCollection\": "
                       "\"crm.people\", \"to\": \"crm.people_old\"}}",
                       "the change log shows a renameCollection of crm.people");
    check_own_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"renameCollection\": "
                       "\"crm.people\"}}",
                       "the change log shows a renameCollection of crm.people");
    check_own_command ("{\"op\": \"c\", \"ns\": \"crm.$cmd\", \"o\": {\"drop\": \"people\"}}",
                       "the change log shows a drop of crm.people");
}

/* The lists: membership by type and bytes, chunks in order. */
static void
test_idlist (void)
{
    online_changes_t ch;
    online_idlist_t *l;
    online_values_t v;
    bson_t *vals = BCON_NEW ("a", BCON_INT32 (5), "b", BCON_INT64 (5), "c", BCON_UTF8 ("5"));
    bson_iter_t it;
    uint32_t at = 0;
    int64_t kept;

    online_changes_init (&ch);
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < 3000; k++) {
            bson_t *d = BCON_NEW ("v", BCON_INT32 (k));
            bson_iter_init_find (&it, d, "v");
            online_changes_add (&ch, "x.y", &it);
            bson_destroy (d);
        }
    l = online_changes_list (&ch, "x.y", false);
    T_CHECK (l && l->n == 3000 && ch.kept == 3000);
    bson_iter_init_find (&it, vals, "a");
    T_CHECK (l && online_idlist_has (l, &it));
    bson_iter_init_find (&it, vals, "b");
    T_CHECK (l && !online_idlist_has (l, &it)); /* 5L is not 5 */
    bson_iter_init_find (&it, vals, "c");
    T_CHECK (l && !online_idlist_has (l, &it));
    T_CHECK (online_changes_list (&ch, "x.z", false) == NULL);
    online_values_init (&v);
    T_CHECK (l && online_idlist_chunk (l, &at, 1000, &v) == 1000 && at == 1000);
    T_CHECK (l && online_idlist_chunk (l, &at, 5000, &v) == 2000 && at == 3000);
    T_CHECK (bson_iter_init_find (&it, &v.arr, "0") && bson_iter_int32 (&it) == 1000);
    T_CHECK (bson_iter_init_find (&it, &v.arr, "1999") && bson_iter_int32 (&it) == 2999);
    bson_destroy (&v.arr);
    kept = ch.kept;
    online_idlist_clear (l, &kept);
    T_CHECK (kept == 0 && l->n == 0);
    bson_iter_init_find (&it, vals, "a");
    T_CHECK (!online_idlist_has (l, &it));
    bson_destroy (vals);
    online_changes_destroy (&ch);
}

/* A changed partner's key values at path, as Extended JSON of the array
 * online_keys_values builds: the driver keys a $lookup matches it by. */
static void
check_keys (const char *doc_json, const char *path, const char *want)
{
    bson_error_t e;
    bson_t *doc = bson_new_from_json ((const uint8_t *) doc_json, -1, &e);
    bson_t arr = BSON_INITIALIZER;
    rm_path_t key;
    uint32_t n = 0;
    char *got;
    T_CHECK (doc && rm_path_parse (&key, path, &e));
    if (!doc)
        return;
    online_keys_values (bson_get_data (doc), doc->len, &key, &arr, &n);
    got = bson_as_relaxed_extended_json (&arr, NULL);
    T_CHECK_STR (got, want);
    T_CHECK (n == (uint32_t) bson_count_keys (&arr));
    bson_free (got);
    rm_path_destroy (&key);
    bson_destroy (&arr);
    bson_destroy (doc);
}

static void
test_partner_keys (void)
{
    check_keys ("{\"_id\": 1, \"owner\": 7}", "owner", "{ \"0\" : 7 }");
    /* an array: each element and the array itself */
    check_keys ("{\"_id\": 1, \"owner\": [3, \"x\"]}", "owner",
                "{ \"0\" : 3, \"1\" : \"x\", \"2\" : [ 3, \"x\" ] }");
    /* missing: null, which a driver without the field matches */
    check_keys ("{\"_id\": 1}", "owner", "{ \"0\" : null }");
    /* a path through an array of documents: an element without the
     * field is null too, as {"refs.p": null} matches it */
    check_keys ("{\"_id\": 1, \"refs\": [{\"p\": \"a\"}, {\"p\": \"b\"}, {\"q\": 1}]}", "refs.p",
                "{ \"0\" : \"a\", \"1\" : \"b\", \"2\" : null }");
}

int
main (void)
{
    T_RUN (test_stream_batch);
    T_RUN (test_stream_rescan);
    T_RUN (test_stream_own_ddl);
    T_RUN (test_token_time);
    T_RUN (test_oplog);
    T_RUN (test_oplog_commands);
    T_RUN (test_oplog_own_commands);
    T_RUN (test_idlist);
    T_RUN (test_partner_keys);
    return t_done ();
}
