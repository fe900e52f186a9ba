/* The server's capabilities (online.h): what it said at connect (hello,
 * buildInfo) and the choices made from it, so that no layer above codes a
 * test server's quirk as a constant.
 *
 * MongoDB says its limits in hello (maxWriteBatchSize 100,000 since 3.6,
 * maxMessageSizeBytes 48,000,000, maxBsonObjectSize 16 MiB), keeps a
 * replacement's field order (_id first), and answers $in on an indexed
 * field from the index. The test servers differ where no field of theirs
 * says so: FerretDB 1.x announces 100,000 but stops answering an update
 * command of about a hundred statements (sixty pass); mongo-java-server
 * keeps the stored document's field order on a replace (a field a source
 * gained lands last); neither reads $in from a secondary index (FerretDB
 * pushes no $in down, mongo-java-server uses only _id's). Those are the
 * rows of servers[], keyed by the identity their replies show. A server
 * neither MongoDB nor in the table gets the conservative row (what is
 * right everywhere, if slower), with what a probe finds where it can ask:
 * whether a replace keeps the given field order, whether $in on an
 * indexed field is read from the index (explain). A batch's size is not
 * probed: a server that stalls on a large command says nothing, it only
 * stops answering. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "online.h"

typedef struct {
    const char *identity;
    /* 0: from hello's maxWriteBatchSize */
    int64_t write_chunk, update_chunk, insert_chunk;
    bool replace_keeps_order, in_by_index;
    const char *source;
} server_row_t;

/* The conservative choices, for a server that says nothing or that the
 * table does not know: write commands of 50 statements, results inserted
 * 1000 a command, rewrites as a delete and an insert, partners read whole
 * and matched here. */
static const server_row_t conservative = {"unknown", 50, 50, 1000, false, false,
                                          "conservative defaults (server not known)"};

static const server_row_t servers[] = {
    {"mongodb", 0, 0, 0, true, true, "hello's limits (MongoDB)"},
    /* FerretDB 1.x (SQLite): 100 statements stall an update command
     * (inserts of 1000 pass); its rewrite form is the one its suites were
     * measured with. */
    {"ferretdb", 50, 50, 1000, false, false,
     "server table (FerretDB: stalls near 100 statements)"},
    /* mongo-java-server: a replace keeps the stored field order. */
    {"mongo-java-server", 50, 50, 1000, false, false,
     "server table (mongo-java-server: replace keeps the stored field order)"},
};

/* A string field of reply into buf ("" when missing). */
static void
utf8_of (const bson_t *reply, const char *key, char *buf, size_t cap)
{
    bson_iter_t it;
    *buf = '\0';
    if (reply && bson_iter_init_find (&it, reply, key) && BSON_ITER_HOLDS_UTF8 (&it))
        bson_strncpy (buf, bson_iter_utf8 (&it, NULL), cap);
}

static int64_t
number_of (const bson_t *reply, const char *key)
{
    bson_iter_t it;
    if (reply && bson_iter_init_find (&it, reply, key) && BSON_ITER_HOLDS_NUMBER (&it))
        return bson_iter_as_int64 (&it);
    return 0;
}

static bool
has (const bson_t *reply, const char *key)
{
    bson_iter_t it;
    return reply && bson_iter_init_find (&it, reply, key);
}

/* Who answered, from what only one kind of server says: FerretDB names
 * itself in buildInfo (ferretdbVersion in 1.x, ferretdb in 2.x);
 * mongo-java-server refuses hello (it answers isMaster) and its buildInfo
 * has no gitVersion; MongoDB answers hello and builds carry gitVersion. */
static const char *
identity_of (const bson_t *hello, bool hello_refused, const bson_t *build_info)
{
    if (!build_info)
        return "unknown";
    if (has (build_info, "ferretdbVersion") || has (build_info, "ferretdb"))
        return "ferretdb";
    if (!has (build_info, "gitVersion"))
        return hello_refused ? "mongo-java-server" : "unknown";
    return hello && !hello_refused ? "mongodb" : "unknown";
}

void
online_caps_choose (online_caps_t *c, const bson_t *hello, bool hello_refused,
                    const bson_t *build_info)
{
    const server_row_t *row = &conservative;
    const char *id = identity_of (hello, hello_refused, build_info);

    memset (c, 0, sizeof *c);
    c->known = build_info != NULL;
    bson_strncpy (c->identity, id, sizeof c->identity);
    utf8_of (build_info, "version", c->version, sizeof c->version);
    utf8_of (hello, "setName", c->set_name, sizeof c->set_name);
    utf8_of (hello, "msg", c->msg, sizeof c->msg);
    c->max_write_batch = number_of (hello, "maxWriteBatchSize");
    c->max_bson_size = number_of (hello, "maxBsonObjectSize");
    c->max_message_size = number_of (hello, "maxMessageSizeBytes");
    for (size_t i = 0; i < sizeof servers / sizeof *servers; i++)
        if (!strcmp (servers[i].identity, id))
            row = &servers[i];
    /* hello's limit where the row defers to it; a server that names none
     * gets the conservative size (the driver splits a command past
     * maxMessageSizeBytes itself). */
    c->write_chunk = row->write_chunk ? row->write_chunk
                     : c->max_write_batch > 0 ? c->max_write_batch : conservative.write_chunk;
    c->update_chunk = row->update_chunk ? row->update_chunk
                      : c->max_write_batch > 0 ? c->max_write_batch : conservative.update_chunk;
    c->insert_chunk = row->insert_chunk ? row->insert_chunk
                      : c->max_write_batch > 0 ? c->max_write_batch : conservative.insert_chunk;
    c->replace_keeps_order = row->replace_keeps_order;
    c->in_by_index = row->in_by_index;
    c->source = row->source;
}

/* A command's reply into reply (initialized either way): false when the
 * server refused it. */
static bool
ask (online_t *on, const char *name, bson_t *reply)
{
    bson_t cmd = BSON_INITIALIZER;
    bson_error_t why;
    bool ok;
    BSON_APPEND_INT32 (&cmd, name, 1);
    ok = online_ops (on)->command (on, NULL, "admin", &cmd, reply, &why);
    bson_destroy (&cmd);
    return ok;
}

bool
online_caps_order_kept (const bson_t *given, const bson_t *stored)
{
    bson_iter_t g, s;
    bool more_g, more_s;
    if (!bson_iter_init (&g, given) || !bson_iter_init (&s, stored))
        return false;
    for (;;) {
        more_g = bson_iter_next (&g);
        more_s = bson_iter_next (&s);
        if (!more_g || !more_s)
            return more_g == more_s;
        if (strcmp (bson_iter_key (&g), bson_iter_key (&s)))
            return false;
    }
}

/* The probe's two questions, on a scratch collection of the state
 * database: a document replaced by one with its fields in another order
 * and one more, read back; and a $in on an indexed field, explained.
 * False when the server refused a step (the conservative answers stand);
 * a server without explain answers "scans". */
static bool
probe_ask (online_t *on, mongoc_collection_t *c, bool *keeps, bool *by_index)
{
    const online_ops_t *ops = online_ops (on);
    bson_t *first = BCON_NEW ("_id", BCON_INT32 (1), "a", BCON_INT32 (1), "b", BCON_INT32 (2));
    bson_t *second = BCON_NEW ("_id", BCON_INT32 (1), "c", BCON_INT32 (3), "b", BCON_INT32 (2),
                               "a", BCON_INT32 (1));
    bson_t *sel = BCON_NEW ("_id", BCON_INT32 (1));
    bson_t *index = BCON_NEW ("createIndexes", BCON_UTF8 (mongoc_collection_get_name (c)),
                              "indexes", "[", "{", "key", "{", "k", BCON_INT32 (1), "}", "name",
                              BCON_UTF8 ("k_1"), "}", "]");
    bson_t *in = BCON_NEW ("find", BCON_UTF8 (mongoc_collection_get_name (c)), "filter", "{",
                           "k", "{", "$in", "[", BCON_INT32 (1), BCON_INT32 (2), "]", "}", "}");
    bson_t *explain = BCON_NEW ("explain", BCON_DOCUMENT (in), "verbosity",
                                BCON_UTF8 ("queryPlanner"));
    bson_t reply;
    const bson_t *doc;
    online_cursor_t *cur;
    bson_error_t why;
    bool ok = ops->write (on, c, ONLINE_W_INSERT, NULL, first, false, false, NULL, &why) &&
              ops->write (on, c, ONLINE_W_REPLACE, sel, second, false, false, NULL, &why);

    *keeps = *by_index = false;
    if (ok) {
        cur = ops->find (on, c, sel, NULL);
        ok = ops->next (cur, &doc);
        *keeps = ok && online_caps_order_kept (second, doc);
        ops->end (cur, NULL);
    }
    ok = ok && ops->index_command (on, c, index, NULL, &why);
    if (ok && ops->command (on, c, NULL, explain, &reply, &why))
        *by_index = online_explain_indexed (&reply);
    if (ok)
        bson_destroy (&reply);
    bson_destroy (first);
    bson_destroy (second);
    bson_destroy (sel);
    bson_destroy (index);
    bson_destroy (in);
    bson_destroy (explain);
    return ok;
}

/* Where the findings are kept: the state database's capabilities, a
 * document a server (_id its host list), so that a run asks once and the
 * commands after it (status, sync, finalize) read the same answers. */
static bool
probe_recorded (online_t *on, online_caps_t *c)
{
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->run->where));
    bson_t doc;
    bson_iter_t it;
    bson_error_t why;
    bool found = false;

    if (online_ops (on)->state_read (on, "capabilities", q, &doc, &found, &why) && found) {
        c->replace_keeps_order = bson_iter_init_find (&it, &doc, "replaceKeepsOrder") &&
                                 bson_iter_as_bool (&it);
        c->in_by_index = bson_iter_init_find (&it, &doc, "inByIndex") && bson_iter_as_bool (&it);
        c->source = "probe (recorded in the state database's capabilities)";
    }
    bson_destroy (&doc);
    bson_destroy (q);
    return found;
}

/* A server the table does not know (or any, with --capabilities probe or
 * REMODEL_ONLINE_CAPS=probe: a user's choice, the tests' for theirs): its
 * answers as recorded, or, for a run that starts and writes (not
 * --dry-run), asked now and recorded.
 * Nothing here fails a command: a refusal keeps the conservative row. */
void
online_caps_probe (online_t *on)
{
    mongoc_collection_t *rec, *scratch;
    char name[64];
    bool keeps, by_index;
    bson_error_t why;

    if (!on->run->o || !on->run->o->state_db)
        return;
    if (strcmp (on->run->caps.identity, "unknown") && !on->run->o->probe_caps)
        return;
    if (probe_recorded (on, &on->own_run->caps) || !on->run->o->starts || on->run->o->dry_run)
        return;
    snprintf (name, sizeof name, "capabilitiesProbe_%ld", (long) getpid ());
    scratch = online_collection (on, on->run->o->state_db, name);
    if (probe_ask (on, scratch, &keeps, &by_index)) {
        bson_t *sel = BCON_NEW ("_id", BCON_UTF8 (on->run->where));
        bson_t *doc = BCON_NEW ("_id", BCON_UTF8 (on->run->where), "identity",
                                BCON_UTF8 (on->run->caps.identity), "version",
                                BCON_UTF8 (on->run->caps.version), "replaceKeepsOrder",
                                BCON_BOOL (keeps), "inByIndex", BCON_BOOL (by_index));
        rec = online_collection (on, on->run->o->state_db, "capabilities");
        if (online_ops (on)->write (on, rec, ONLINE_W_REPLACE, sel, doc, true, false, NULL, &why))
            probe_recorded (on, &on->own_run->caps);
        mongoc_collection_destroy (rec);
        bson_destroy (sel);
        bson_destroy (doc);
    }
    online_ops (on)->drop (on, scratch, &why);
    mongoc_collection_destroy (scratch);
}

void
online_caps_fill (online_t *on)
{
    bson_t hello, build;
    bool hello_ok = ask (on, "hello", &hello), legacy = false, build_ok;

    if (!hello_ok) {
        bson_destroy (&hello);
        legacy = ask (on, "isMaster", &hello);
    }
    build_ok = ask (on, "buildInfo", &build);
    online_caps_choose (&on->own_run->caps, hello_ok || legacy ? &hello : NULL, !hello_ok,
                        build_ok ? &build : NULL);
    bson_destroy (&hello);
    bson_destroy (&build);
}

/* The accessors: a connection whose record was never filled (a unit
 * test's, one that failed before buildInfo) has the conservative row. */
int64_t
online_caps_write_chunk (const online_t *on)
{
    return on->run->caps.write_chunk > 0 ? on->run->caps.write_chunk : conservative.write_chunk;
}

int64_t
online_caps_insert_chunk (const online_t *on)
{
    return on->run->caps.insert_chunk > 0 ? on->run->caps.insert_chunk : conservative.insert_chunk;
}

int64_t
online_caps_update_chunk (const online_t *on)
{
    return on->run->caps.update_chunk > 0 ? on->run->caps.update_chunk : conservative.update_chunk;
}

bool
online_caps_replace_keeps_order (const online_t *on)
{
    return on->run->caps.write_chunk > 0 && on->run->caps.replace_keeps_order;
}

bool
online_caps_in_by_index (const online_t *on)
{
    return on->run->caps.write_chunk > 0 && on->run->caps.in_by_index;
}

/* The text a server sent, as it prints: printable ASCII kept, every
 * other byte as \xNN. */
static void
escaped (const char *s, char *buf, size_t cap)
{
    size_t at = 0;
    for (; *s && at + 5 < cap; s++) {
        unsigned char ch = (unsigned char) *s;
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            buf[at++] = (char) ch;
        else
            at += (size_t) snprintf (buf + at, cap - at, "\\x%02x", ch);
    }
    buf[at] = '\0';
}

void
online_caps_print (const online_caps_t *c, FILE *out)
{
    char version[sizeof c->version * 4], set[sizeof c->set_name * 4];
    if (!c->known && !c->write_chunk) {
        fprintf (out, "server: not asked\n");
        return;
    }
    escaped (c->version, version, sizeof version);
    escaped (c->set_name, set, sizeof set);
    fprintf (out, "server: %s %s%s%s%s%s\n", c->identity, *version ? version : "(no version)",
             *set ? ", replica set " : "", set, !strcmp (c->msg, "isdbgrid") ? ", mongos" : "",
             c->max_write_batch ? "" : ", no limits in hello");
    if (c->max_write_batch)
        fprintf (out, "  limits: maxWriteBatchSize %lld, maxBsonObjectSize %lld, "
                 "maxMessageSizeBytes %lld\n", (long long) c->max_write_batch,
                 (long long) c->max_bson_size, (long long) c->max_message_size);
    fprintf (out, "  writes: %lld statements a command, %lld key-map updates a command, %lld "
             "results an insert; a side-by-side rewrite by %s; partners %s\n",
             (long long) c->write_chunk, (long long) c->update_chunk,
             (long long) c->insert_chunk, c->replace_keeps_order ? "replace" : "delete and insert",
             c->in_by_index ? "found by key ($in, by their index)"
                            : "read whole, $in matched here");
    fprintf (out, "  from: %s\n", c->source ? c->source : conservative.source);
    online_caps_log_print (c, out);
}

void
online_caps_append (const online_caps_t *c, bson_t *doc, const char *key)
{
    bson_t sub;
    BSON_APPEND_DOCUMENT_BEGIN (doc, key, &sub);
    BSON_APPEND_UTF8 (&sub, "identity", *c->identity ? c->identity : "unknown");
    BSON_APPEND_UTF8 (&sub, "version", c->version);
    if (*c->set_name)
        BSON_APPEND_UTF8 (&sub, "setName", c->set_name);
    else
        BSON_APPEND_NULL (&sub, "setName");
    BSON_APPEND_BOOL (&sub, "mongos", !strcmp (c->msg, "isdbgrid"));
    BSON_APPEND_INT64 (&sub, "maxWriteBatchSize", c->max_write_batch);
    BSON_APPEND_INT64 (&sub, "maxBsonObjectSize", c->max_bson_size);
    BSON_APPEND_INT64 (&sub, "maxMessageSizeBytes", c->max_message_size);
    BSON_APPEND_INT64 (&sub, "writeChunk", c->write_chunk);
    BSON_APPEND_INT64 (&sub, "updateChunk", c->update_chunk);
    BSON_APPEND_INT64 (&sub, "insertChunk", c->insert_chunk);
    BSON_APPEND_UTF8 (&sub, "rewrite", c->replace_keeps_order ? "replace" : "delete and insert");
    BSON_APPEND_UTF8 (&sub, "partners", c->in_by_index ? "by key" : "whole");
    BSON_APPEND_UTF8 (&sub, "from", c->source ? c->source : conservative.source);
    online_caps_log_append (c, &sub);
    bson_append_document_end (doc, &sub);
}

/* A port: 1 to 65535, digits only. */
static bool
port_ok (const char *s)
{
    long v = 0;
    if (!*s || strlen (s) > 5)
        return false;
    for (; *s; s++) {
        if (!isdigit ((unsigned char) *s))
            return false;
        v = v * 10 + (*s - '0');
    }
    return v >= 1 && v <= 65535;
}

bool
online_caps_host_ok (const char *s)
{
    size_t n = strlen (s), name;
    const char *colon;

    if (n == 0 || n > 255)
        return false;
    /* A Unix domain socket, as the driver takes it. */
    if (s[0] == '/')
        return n > 5 && !strcmp (s + n - 5, ".sock") && !strpbrk (s, " ,?@\\");
    if (s[0] == '[') {
        const char *close = strchr (s, ']');
        if (!close || close == s + 1)
            return false;
        for (const char *p = s + 1; p < close; p++)
            if (!isalnum ((unsigned char) *p) && *p != ':' && *p != '.' && *p != '%')
                return false;
        return !close[1] || (close[1] == ':' && port_ok (close + 2));
    }
    colon = strchr (s, ':');
    if (colon && (strchr (colon + 1, ':') || !port_ok (colon + 1)))
        return false;
    name = colon ? (size_t) (colon - s) : n;
    if (name == 0)
        return false;
    for (size_t i = 0; i < name; i++)
        if (!isalnum ((unsigned char) s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_')
            return false;
    return true;
}

bool
online_caps_hosts_ok (const bson_t *hello, char *bad, size_t cap)
{
    static const char *const lists[] = {"hosts", "passives", "arbiters"};
    bson_iter_t it, e;

    *bad = '\0';
    if (bson_iter_init_find (&it, hello, "me") &&
        (!BSON_ITER_HOLDS_UTF8 (&it) || !online_caps_host_ok (bson_iter_utf8 (&it, NULL)))) {
        escaped (BSON_ITER_HOLDS_UTF8 (&it) ? bson_iter_utf8 (&it, NULL) : "(not a string)", bad,
                 cap);
        return false;
    }
    for (size_t l = 0; l < sizeof lists / sizeof *lists; l++) {
        if (!bson_iter_init_find (&it, hello, lists[l]) || !BSON_ITER_HOLDS_ARRAY (&it) ||
            !bson_iter_recurse (&it, &e))
            continue;
        while (bson_iter_next (&e))
            if (!BSON_ITER_HOLDS_UTF8 (&e) || !online_caps_host_ok (bson_iter_utf8 (&e, NULL))) {
                escaped (BSON_ITER_HOLDS_UTF8 (&e) ? bson_iter_utf8 (&e, NULL) : "(not a string)",
                         bad, cap);
                return false;
            }
    }
    return true;
}
