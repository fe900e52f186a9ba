/* The server's own commands: the handshake (hello, isMaster: a primary
 * of --repl-set's set, standalone without it), ping, buildInfo,
 * serverStatus, listDatabases, endSessions and the few others drivers
 * and remodel ask. buildInfo names no gitVersion and no FerretDB field:
 * remodel then takes its conservative defaults (shell-ext/conn/
 * online_caps.c), the choices that are right everywhere. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mem.h"

static void
hello (const mem_call_t *call, bson_t *reply)
{
    mem_settings_t *st = mem_settings ();
    char me[64];
    struct timespec now;
    static int64_t connection;
    clock_gettime (CLOCK_REALTIME, &now);
    snprintf (me, sizeof me, "127.0.0.1:%d", call->port);
    if (!strcmp (call->name, "hello"))
        BSON_APPEND_BOOL (reply, "isWritablePrimary", true);
    BSON_APPEND_BOOL (reply, "helloOk", true);
    BSON_APPEND_BOOL (reply, "ismaster", true);
    if (*st->repl_set) {
        bson_t hosts;
        bson_oid_t election;
        BSON_APPEND_UTF8 (reply, "setName", st->repl_set);
        BSON_APPEND_INT32 (reply, "setVersion", 1);
        BSON_APPEND_BOOL (reply, "secondary", false);
        bson_append_array_begin (reply, "hosts", -1, &hosts);
        BSON_APPEND_UTF8 (&hosts, "0", me);
        bson_append_array_end (reply, &hosts);
        BSON_APPEND_UTF8 (reply, "primary", me);
        BSON_APPEND_UTF8 (reply, "me", me);
        bson_oid_init_from_string (&election, "7fffffff0000000000000001");
        BSON_APPEND_OID (reply, "electionId", &election);
    }
    BSON_APPEND_INT32 (reply, "maxBsonObjectSize", 16 * 1024 * 1024);
    BSON_APPEND_INT32 (reply, "maxMessageSizeBytes", 48000000);
    BSON_APPEND_INT32 (reply, "maxWriteBatchSize", 100000);
    BSON_APPEND_DATE_TIME (reply, "localTime", (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
    BSON_APPEND_INT32 (reply, "logicalSessionTimeoutMinutes", 30);
    BSON_APPEND_INT64 (reply, "connectionId", ++connection);
    BSON_APPEND_INT32 (reply, "minWireVersion", 0);
    BSON_APPEND_INT32 (reply, "maxWireVersion", 17);
    BSON_APPEND_BOOL (reply, "readOnly", false);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
build_info (bson_t *reply)
{
    bson_t v;
    BSON_APPEND_UTF8 (reply, "version", "6.0.0");
    bson_append_array_begin (reply, "versionArray", -1, &v);
    BSON_APPEND_INT32 (&v, "0", 6);
    BSON_APPEND_INT32 (&v, "1", 0);
    BSON_APPEND_INT32 (&v, "2", 0);
    BSON_APPEND_INT32 (&v, "3", 0);
    bson_append_array_end (reply, &v);
    BSON_APPEND_UTF8 (reply, "memsrv", "remodel-memsrv (tests/mem)");
    BSON_APPEND_INT32 (reply, "bits", 64);
    BSON_APPEND_INT32 (reply, "maxBsonObjectSize", 16 * 1024 * 1024);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

/* listDatabases: each database with a collection, sizes summed. */
static void
list_databases (const mem_call_t *call, bson_t *reply)
{
    mem_store_t *s = mem_store ();
    bool names_only = mem_bool (call->body, "nameOnly", false);
    bson_t arr;
    int k = 0;
    int64_t total = 0;
    mem_store_sort (s);
    bson_append_array_begin (reply, "databases", -1, &arr);
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        int64_t size = 0;
        bson_t d;
        char key[16];
        while (j < s->n && !strcmp (s->c[j]->db, s->c[i]->db))
            size += (int64_t) s->c[j++]->bytes;
        snprintf (key, sizeof key, "%d", k++);
        bson_append_document_begin (&arr, key, -1, &d);
        BSON_APPEND_UTF8 (&d, "name", s->c[i]->db);
        if (!names_only) {
            BSON_APPEND_INT64 (&d, "sizeOnDisk", size);
            BSON_APPEND_BOOL (&d, "empty", size == 0);
        }
        bson_append_document_end (&arr, &d);
        total += size;
        i = j;
    }
    bson_append_array_end (reply, &arr);
    if (!names_only)
        BSON_APPEND_INT64 (reply, "totalSize", total);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
server_status (const mem_call_t *call, bson_t *reply)
{
    struct timespec now;
    bson_t conn;
    clock_gettime (CLOCK_REALTIME, &now);
    BSON_APPEND_UTF8 (reply, "host", "127.0.0.1");
    BSON_APPEND_UTF8 (reply, "version", "6.0.0");
    BSON_APPEND_UTF8 (reply, "process", "remodel-memsrv");
    BSON_APPEND_DATE_TIME (reply, "localTime", (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
    bson_append_document_begin (reply, "connections", -1, &conn);
    BSON_APPEND_INT32 (&conn, "current", 1);
    bson_append_document_end (reply, &conn);
    (void) call;
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

bool
mem_cmd_admin (const mem_call_t *call, bson_t *reply, bool *handled)
{
    const char *n = call->name;
    *handled = true;
    if (!strcmp (n, "hello") || !strcasecmp (n, "isMaster"))
        hello (call, reply);
    else if (!strcasecmp (n, "buildInfo"))
        build_info (reply);
    else if (!strcmp (n, "listDatabases"))
        list_databases (call, reply);
    else if (!strcmp (n, "serverStatus"))
        server_status (call, reply);
    else if (!strcmp (n, "ping") || !strcmp (n, "endSessions") || !strcmp (n, "killSessions") ||
             !strcmp (n, "refreshSessions") || !strcmp (n, "getLastError"))
        BSON_APPEND_DOUBLE (reply, "ok", 1);
    else if (!strcmp (n, "whatsmyuri")) {
        BSON_APPEND_UTF8 (reply, "you", "127.0.0.1");
        BSON_APPEND_DOUBLE (reply, "ok", 1);
    } else if (!strcmp (n, "getParameter")) {
        BSON_APPEND_UTF8 (reply, "featureCompatibilityVersion", "6.0");
        BSON_APPEND_DOUBLE (reply, "ok", 1);
    } else
        *handled = false;
    return true;
}
