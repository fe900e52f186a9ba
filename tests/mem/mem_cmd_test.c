/* The test-only commands, for matrices that reset the server between
 * points in microseconds rather than restoring with a script:
 *   {memSnapshot: "name"}  saves every database (the oplog too)
 *   {memRestore: "name"}   puts them back as saved
 *   {memDigest: 1}         {namespaces: {"db.coll": {count, sha1}}, ...}
 *                          sha1 over the documents' bytes in order
 *   {memSet: {fail: CMD, code: N, times: N, delayCmd: CMD, delayMs: N}}
 *                          a command made to fail or wait ("*": any;
 *                          fail "" clears), as --fail and --delay;
 *                          oplogHold: N, oplogHoldNs: "db.coll", the
 *                          next N oplog entries of that namespace given
 *                          their ts but kept back, oplogRelease: true,
 *                          inserted now (a hole: mem_oplog.c) */
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "remodel/sha1.h"

static void
digest (bson_t *reply)
{
    mem_store_t *s = mem_store ();
    bson_t nss;
    int64_t total = 0;
    mem_store_sort (s);
    bson_append_document_begin (reply, "namespaces", -1, &nss);
    for (size_t i = 0; i < s->n; i++) {
        mem_coll_t *c = s->c[i];
        rm_buf_t all;
        unsigned char h[20];
        char hex[41], ns[400];
        bson_t d;
        rm_buf_init (&all);
        for (size_t k = 0; k < c->n; k++)
            if (c->docs[k])
                rm_buf_append (&all, bson_get_data (c->docs[k]), c->docs[k]->len);
        rm_sha1 (all.data, all.len, h);
        for (int b = 0; b < 20; b++)
            snprintf (hex + 2 * b, 3, "%02x", h[b]);
        snprintf (ns, sizeof ns, "%s.%s", c->db, c->name);
        bson_append_document_begin (&nss, ns, -1, &d);
        BSON_APPEND_INT64 (&d, "count", (int64_t) c->live);
        BSON_APPEND_UTF8 (&d, "sha1", hex);
        BSON_APPEND_INT32 (&d, "indexes", (int32_t) c->nidx);
        bson_append_document_end (&nss, &d);
        total += (int64_t) c->live;
        rm_buf_destroy (&all);
    }
    bson_append_document_end (reply, &nss);
    BSON_APPEND_INT64 (reply, "documents", total);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
set (const mem_call_t *call, bson_t *reply)
{
    mem_settings_t *st = mem_settings ();
    bson_t s;
    const char *v;
    if (!mem_sub (call->body, "memSet", &s)) {
        mem_error_reply (reply, MEM_E_BAD_VALUE, "memSet takes a document");
        return;
    }
    if ((v = mem_utf8 (&s, "fail"))) {
        bson_strncpy (st->fail_cmd, v, sizeof st->fail_cmd);
        st->fail_code = (int) mem_int (&s, "code", 1);
        st->fail_times = (int) mem_int (&s, "times", -1);
    }
    if ((v = mem_utf8 (&s, "delayCmd"))) {
        bson_strncpy (st->delay_cmd, v, sizeof st->delay_cmd);
        st->delay_ms = (int) mem_int (&s, "delayMs", 0);
    }
    if (mem_int (&s, "oplogHold", 0) > 0)
        mem_oplog_hold ((int) mem_int (&s, "oplogHold", 0),
                        mem_utf8 (&s, "oplogHoldNs") ? mem_utf8 (&s, "oplogHoldNs") : "");
    if (mem_bool (&s, "oplogRelease", false))
        mem_oplog_release ();
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

bool
mem_cmd_test (const mem_call_t *call, bson_t *reply, bool *handled)
{
    const char *n = call->name, *name = mem_utf8 (call->body, n);
    *handled = true;
    if (!strcmp (n, "memSnapshot") || !strcmp (n, "memRestore")) {
        if (!name) {
            mem_error_reply (reply, MEM_E_BAD_VALUE, "memSnapshot and memRestore take a name");
        } else if (!strcmp (n, "memSnapshot")) {
            mem_store_save (mem_store (), name);
            BSON_APPEND_DOUBLE (reply, "ok", 1);
        } else if (mem_store_restore (mem_store (), name)) {
            BSON_APPEND_DOUBLE (reply, "ok", 1);
        } else {
            mem_error_reply (reply, MEM_E_BAD_VALUE, "no snapshot of that name");
        }
    } else if (!strcmp (n, "memDigest")) {
        digest (reply);
    } else if (!strcmp (n, "memSet")) {
        set (call, reply);
    } else {
        *handled = false;
    }
    return true;
}
