/* Whether a partition's sample is asked of $sample
 * (shell-ext/conn/online_random.c, online_random_cursor_of), on
 * serverStatus replies shaped as MongoDB's documentation shows them (a
 * mongod on WiredTiger, one on the in-memory engine, a mongos) and as the
 * two test servers answer (mongo-java-server: no storageEngine; an
 * engine of another name). */
#include <stdio.h>
#include <string.h>

#include "online.h"
#include "test.h"

/* A mongod's reply: host, version, process, and storageEngine when
 * engine is not NULL. */
static void
mongod (bson_t *r, const char *process, const char *engine)
{
    bson_t se;
    bson_init (r);
    BSON_APPEND_UTF8 (r, "host", "m1.example.net:27017");
    BSON_APPEND_UTF8 (r, "version", "7.0.12");
    BSON_APPEND_UTF8 (r, "process", process);
    BSON_APPEND_INT64 (r, "pid", 4242);
    BSON_APPEND_DOUBLE (r, "uptime", 269.0);
    if (engine) {
        BSON_APPEND_DOCUMENT_BEGIN (r, "storageEngine", &se);
        BSON_APPEND_UTF8 (&se, "name", engine);
        BSON_APPEND_BOOL (&se, "supportsCommittedReads", true);
        BSON_APPEND_BOOL (&se, "persistent", strcmp (engine, "inMemory") != 0);
        bson_append_document_end (r, &se);
    }
    BSON_APPEND_DOUBLE (r, "ok", 1.0);
}

static void
test_wiredtiger (void)
{
    bson_t r;
    char why[200] = "";
    mongod (&r, "mongod", "wiredTiger");
    T_CHECK (online_random_cursor_of (&r, why, sizeof why));
    T_CHECK_STR (why, "");
    bson_destroy (&r);
    mongod (&r, "mongod", "inMemory");
    T_CHECK (online_random_cursor_of (&r, why, sizeof why));
    bson_destroy (&r);
}

static void
test_mongos (void)
{
    bson_t r;
    char why[200] = "";
    /* A mongos names no engine: its shards answer the $sample. */
    mongod (&r, "mongos", NULL);
    T_CHECK (online_random_cursor_of (&r, why, sizeof why));
    T_CHECK_STR (why, "");
    bson_destroy (&r);
}

static void
test_no_random_cursor (void)
{
    bson_t r;
    char why[200] = "";
    /* mongo-java-server: no storageEngine at all. */
    mongod (&r, "mongod", NULL);
    T_CHECK (!online_random_cursor_of (&r, why, sizeof why));
    T_CHECK_STR (why, "serverStatus names no storage engine with a random cursor for $sample");
    bson_destroy (&r);
    mongod (&r, "mongod", "ephemeralForTest");
    T_CHECK (!online_random_cursor_of (&r, why, sizeof why));
    T_CHECK_STR (why, "its storage engine (ephemeralForTest) has no random cursor for $sample");
    bson_destroy (&r);
    /* A name that is not a string says nothing. */
    bson_init (&r);
    BSON_APPEND_INT32 (&r, "storageEngine", 1);
    T_CHECK (!online_random_cursor_of (&r, why, sizeof why));
    bson_destroy (&r);
}

int
main (void)
{
    T_RUN (test_wiredtiger);
    T_RUN (test_mongos);
    T_RUN (test_no_random_cursor);
    return t_done ();
}
