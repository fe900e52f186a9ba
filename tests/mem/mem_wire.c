/* MongoDB's wire protocol as libmongoc 1.23 speaks it: OP_QUERY on
 * DB.$cmd for the handshake (answered with OP_REPLY) and OP_MSG for the
 * rest (a body, section kind 0, and document sequences, kind 1, which
 * are merged into the body as arrays of their identifier's name). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem.h"
#include "mem_wire.h"

enum { OP_REPLY = 1, OP_QUERY = 2004, OP_MSG = 2013 };

static int32_t
le32 (const uint8_t *p)
{
    return (int32_t) ((uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
                      (uint32_t) p[3] << 24);
}

static void
put32 (rm_buf_t *b, int32_t v)
{
    uint8_t p[4] = {(uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24)};
    rm_buf_append (b, p, 4);
}

static bool
read_all (int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read (fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t) r;
    }
    return true;
}

static bool
write_all (int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = write (fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t) r;
    }
    return true;
}

bool
mem_wire_read (int fd, rm_buf_t *msg)
{
    uint8_t head[4];
    int32_t len;
    if (!read_all (fd, head, 4))
        return false;
    len = le32 (head);
    if (len < 16 || len > 64 * 1024 * 1024)
        return false;
    rm_buf_reset (msg);
    rm_buf_grow (msg, (size_t) len);
    memcpy (msg->data, head, 4);
    msg->len = (size_t) len;
    return read_all (fd, msg->data + 4, (size_t) len - 4);
}

/* A body's command name: its first key. */
static const char *
first_key (const bson_t *b)
{
    bson_iter_t it;
    return bson_iter_init (&it, b) && bson_iter_next (&it) ? bson_iter_key (&it) : "";
}

static void
run (const bson_t *body, const char *db, int port, bson_t *reply)
{
    mem_call_t call = {.db = db, .name = first_key (body), .body = body, .port = port};
    mem_command (&call, reply);
}

/* OP_QUERY: flags, "db.$cmd", skip, limit, the query ({$query: cmd, ...}
 * or the command itself). */
static bool
op_query (const uint8_t *p, size_t n, int port, bson_t *reply)
{
    const char *ns = (const char *) p + 4;
    size_t nl = strnlen (ns, n - 4);
    const uint8_t *q = p + 4 + nl + 1 + 8;
    char db[128];
    bson_t cmd, inner;
    bson_iter_t it;
    if (q + 5 > p + n || !bson_init_static (&cmd, q, (size_t) le32 (q)))
        return false;
    snprintf (db, sizeof db, "%.*s", (int) (strchr (ns, '.') ? strchr (ns, '.') - ns : (long) nl), ns);
    if (bson_iter_init_find (&it, &cmd, "$query") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&inner, data, len);
        run (&inner, db, port, reply);
    } else {
        run (&cmd, db, port, reply);
    }
    return true;
}

/* OP_MSG: flag bits, then sections to the end (less a checksum). */
static bool
op_msg (const uint8_t *p, size_t n, int port, bson_t *reply)
{
    uint32_t flags = (uint32_t) le32 (p);
    const uint8_t *s = p + 4, *end = p + n - ((flags & 1) ? 4 : 0);
    bson_t body, merged = BSON_INITIALIZER, b;
    bool have_body = false;
    const char *db;
    while (s < end) {
        if (*s == 0) {
            int32_t l = le32 (s + 1);
            if (!bson_init_static (&body, s + 1, (size_t) l))
                return false;
            have_body = true;
            s += 1 + l;
        } else if (*s == 1) {
            int32_t l = le32 (s + 1);
            const uint8_t *q = s + 5, *stop = s + 1 + l;
            const char *id = (const char *) q;
            bson_t arr;
            int i = 0;
            q += strlen (id) + 1;
            bson_append_array_begin (&merged, id, -1, &arr);
            while (q < stop) {
                char k[16];
                int32_t dl = le32 (q);
                if (!bson_init_static (&b, q, (size_t) dl))
                    return false;
                snprintf (k, sizeof k, "%d", i++);
                bson_append_document (&arr, k, -1, &b);
                q += dl;
            }
            bson_append_array_end (&merged, &arr);
            s = stop;
        } else {
            return false;
        }
    }
    if (!have_body)
        return false;
    {
        bson_t all = BSON_INITIALIZER;
        bson_concat (&all, &body);
        bson_concat (&all, &merged);
        db = mem_utf8 (&body, "$db");
        run (&all, db ? db : "admin", port, reply);
        bson_destroy (&all);
    }
    bson_destroy (&merged);
    return true;
}

bool
mem_wire_answer (int fd, const rm_buf_t *msg, int port)
{
    int32_t req = le32 (msg->data + 4), op = le32 (msg->data + 12);
    const uint8_t *p = msg->data + 16;
    size_t n = msg->len - 16;
    bson_t reply;
    rm_buf_t out;
    bool ok;
    bson_init (&reply);
    if (op == OP_QUERY)
        ok = op_query (p, n, port, &reply);
    else if (op == OP_MSG)
        ok = op_msg (p, n, port, &reply);
    else
        ok = false;
    if (!ok) {
        bson_destroy (&reply);
        return false;
    }
    /* moreToCome from the client (an unacknowledged write): no reply. */
    if (op == OP_MSG && (le32 (p) & 2)) {
        bson_destroy (&reply);
        return true;
    }
    rm_buf_init (&out);
    put32 (&out, 0);
    put32 (&out, req + 1);
    put32 (&out, req);
    put32 (&out, op == OP_QUERY ? OP_REPLY : OP_MSG);
    if (op == OP_QUERY) {
        put32 (&out, 8); /* AwaitCapable */
        put32 (&out, 0);
        put32 (&out, 0); /* cursor id: 8 bytes */
        put32 (&out, 0); /* starting from */
        put32 (&out, 1); /* one document */
    } else {
        put32 (&out, 0);
        rm_buf_append (&out, "", 1); /* section kind 0 */
    }
    rm_buf_append (&out, bson_get_data (&reply), reply.len);
    {
        int32_t total = (int32_t) out.len;
        uint8_t le[4] = {(uint8_t) total, (uint8_t) (total >> 8), (uint8_t) (total >> 16),
                         (uint8_t) (total >> 24)};
        memcpy (out.data, le, 4);
    }
    ok = write_all (fd, out.data, out.len);
    rm_buf_destroy (&out);
    bson_destroy (&reply);
    return ok;
}
