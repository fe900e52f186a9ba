/* Values during evaluation: the context's memory (blocks bumped through
 * and all released by a reset), building documents and arrays, encoding a
 * value as a BSON element, and what every operator asks of a value
 * (truthiness, order, type name, a number as a double or an integer). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "remodel/extjson.h"
#include "remodel/value.h"

#include "bsonwalk.h"
#include "expr_ctx.h"
#include "expr_utf8.h"

#define CHUNK_MIN (64 * 1024)
/* One document's scratch when no --memory says otherwise: --memory's own
 * default. */
#define DEFAULT_MEMORY ((size_t) 512 << 20)

/* The bound new contexts take (rm_expr_set_memory): process-wide, as
 * $$NOW is, set once by the command from its --memory. */
static size_t memory_bound;

void
rm_expr_set_memory (size_t bytes)
{
    __atomic_store_n (&memory_bound, bytes, __ATOMIC_SEQ_CST);
}

size_t
rm_expr_memory (void)
{
    size_t b = __atomic_load_n (&memory_bound, __ATOMIC_SEQ_CST);
    return b ? b : DEFAULT_MEMORY;
}

void
rm_expr_ctx_set_memory (rm_expr_ctx_t *cx, size_t bytes)
{
    cx->limit = bytes ? bytes : rm_expr_memory ();
}

static void
count (rm_expr_ctx_t *cx, size_t more)
{
    if (cx->live + cx->kept + more > cx->limit)
        cx->over = true;
}

void *
rm_xalloc (rm_expr_ctx_t *cx, size_t n)
{
    n = (n + 7) & ~(size_t) 7;
    count (cx, n);
    cx->live += n;
    while (cx->cur < cx->n_chunks) {
        rm_xchunk_t *c = &cx->chunks[cx->cur];
        if (c->cap - c->used >= n) {
            void *p = c->data + c->used;
            c->used += n;
            return p;
        }
        /* A block too small for this request stays for the next ones of
         * the next document; a later block may be big enough. */
        if (cx->cur + 1 < cx->n_chunks) {
            cx->cur++;
            continue;
        }
        break;
    }
    cx->chunks = bson_realloc (cx->chunks, (cx->n_chunks + 1) * sizeof *cx->chunks);
    rm_xchunk_t *c = &cx->chunks[cx->n_chunks];
    /* Each block at least twice the last: blocks are kept for the next
     * documents, and a value growing a little at a time ($reduce's
     * accumulator) must not leave one block per size behind it. */
    c->cap = n > CHUNK_MIN ? n : CHUNK_MIN;
    if (cx->n_chunks && c->cap < cx->chunks[cx->n_chunks - 1].cap * 2)
        c->cap = cx->chunks[cx->n_chunks - 1].cap * 2;
    c->data = bson_malloc (c->cap);
    c->used = n;
    cx->cur = cx->n_chunks++;
    return c->data;
}

bool
rm_xmem_check (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_error_t *err)
{
    char size[32];
    if (!cx->over)
        return true;
    if (cx->limit % ((size_t) 1 << 20) == 0)
        snprintf (size, sizeof size, "%zu MiB", cx->limit >> 20);
    else if (cx->limit % 1024 == 0)
        snprintf (size, sizeof size, "%zu KiB", cx->limit >> 10);
    else
        snprintf (size, sizeof size, "%zu bytes", cx->limit);
    /* Said as rm_xfail says an operator's error (its name first), set
     * here: expr_eval.c, which has rm_xfail, calls down into this file. */
    rm_error_set (err, RM_ERR_DATA,
                  "%s%sthis document's expression values pass %s of memory (the bound of "
                  "--memory): refused rather than exhausting memory",
                  e && e->op ? e->op->name : "", e && e->op ? ": " : "", size);
    return false;
}

void
rm_xmark (rm_expr_ctx_t *cx, rm_xmark_t *m)
{
    m->cur = cx->cur;
    m->used = cx->cur < cx->n_chunks ? cx->chunks[cx->cur].used : 0;
    m->live = cx->live;
}

void
rm_xrewind (rm_expr_ctx_t *cx, const rm_xmark_t *m)
{
    for (size_t j = m->cur + 1; j <= cx->cur && j < cx->n_chunks; j++)
        cx->chunks[j].used = 0;
    if (m->cur < cx->n_chunks)
        cx->chunks[m->cur].used = m->used;
    cx->cur = m->cur;
    cx->live = m->live;
}

/* Where v's bytes start (NULL: it has none); *several when they are in
 * more than one piece (a regex's pattern and options). */
static const uint8_t *
bytes_of (const bson_value_t *v, bool *several)
{
    *several = false;
    switch (v->value_type) {
    case BSON_TYPE_UTF8:
        return (const uint8_t *) v->value.v_utf8.str;
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY:
        return v->value.v_doc.data;
    case BSON_TYPE_BINARY:
        return v->value.v_binary.data;
    case BSON_TYPE_CODE:
        return (const uint8_t *) v->value.v_code.code;
    case BSON_TYPE_SYMBOL:
        return (const uint8_t *) v->value.v_symbol.symbol;
    case BSON_TYPE_REGEX:
        *several = true;
        return (const uint8_t *) v->value.v_regex.regex;
    case BSON_TYPE_DBPOINTER:
        *several = true;
        return (const uint8_t *) v->value.v_dbpointer.collection;
    case BSON_TYPE_CODEWSCOPE:
        *several = true;
        return (const uint8_t *) v->value.v_codewscope.code;
    default:
        return NULL;
    }
}

bool
rm_xval_since (rm_expr_ctx_t *cx, const rm_xmark_t *m, const bson_value_t *v)
{
    bool several;
    const uint8_t *p = bytes_of (v, &several);
    if (several)
        return true; /* its pieces may lie apart: copied, to be safe */
    if (!p)
        return false;
    for (size_t j = m->cur; j <= cx->cur && j < cx->n_chunks; j++) {
        const rm_xchunk_t *c = &cx->chunks[j];
        size_t from = j == m->cur ? m->used : 0;
        if (p >= c->data + from && p < c->data + c->cap)
            return true;
    }
    return false;
}

bool
rm_xval_in_buf (const rm_buf_t *buf, const bson_value_t *v)
{
    bool several;
    const uint8_t *p = bytes_of (v, &several);
    return p && buf->len && p >= buf->data && p < buf->data + buf->len;
}

void
rm_xval_from_buf (rm_expr_ctx_t *cx, rm_buf_t *buf, bson_value_t *out)
{
    bson_iter_t it;
    uint8_t *p;

    if (!buf->len)
        return;
    p = rm_xalloc (cx, buf->len);
    memcpy (p, buf->data, buf->len);
    if (bson_iter_init_from_data (&it, p, buf->len) && bson_iter_next (&it))
        *out = *bson_iter_value (&it);
    rm_xval_unkeep (cx, buf);
}

void
rm_xset_string (rm_expr_ctx_t *cx, bson_value_t *v, const char *s, size_t len)
{
    char *p = rm_xalloc (cx, len + 1);
    if (len)
        memcpy (p, s, len);
    rm_xset_string_in (v, p, len);
}

/* The run's $$NOW: set by whoever starts the run (the engine from its
 * options, the online mode from the plan's record), else the clock at
 * its first reading. Process-wide: a process runs one plan at a time. */
static int64_t run_now;

void
rm_expr_set_run_now (int64_t ms)
{
    __atomic_store_n (&run_now, ms, __ATOMIC_SEQ_CST);
}

int64_t
rm_expr_run_now (void)
{
    int64_t now = __atomic_load_n (&run_now, __ATOMIC_SEQ_CST);
    if (now == 0) {
        struct timeval tv;
        int64_t expected = 0;
        gettimeofday (&tv, NULL);
        now = (int64_t) tv.tv_sec * 1000 + tv.tv_usec / 1000;
        if (!__atomic_compare_exchange_n (&run_now, &expected, now, false, __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST))
            now = expected;
    }
    return now;
}

rm_expr_ctx_t *
rm_expr_ctx_new (int64_t now_ms)
{
    rm_expr_ctx_t *cx = bson_malloc0 (sizeof *cx);
    cx->now_ms = now_ms ? now_ms : rm_expr_run_now ();
    cx->limit = rm_expr_memory ();
    rm_buf_init (&cx->cmp[0]);
    rm_buf_init (&cx->cmp[1]);
    return cx;
}

void
rm_expr_ctx_reset (rm_expr_ctx_t *cx)
{
    for (size_t i = 0; i < cx->n_chunks; i++)
        cx->chunks[i].used = 0;
    cx->cur = 0;
    cx->live = cx->kept = 0;
    cx->over = false;
    cx->held = NULL;
    cx->set_shallow = false;
    /* Builders left open by an error go back to the pool. */
    cx->n_free = 0;
    for (size_t i = 0; i < cx->n_bufs; i++)
        cx->free_bufs[cx->n_free++] = cx->bufs[i];
}

void
rm_expr_ctx_destroy (rm_expr_ctx_t *cx)
{
    if (!cx)
        return;
    for (size_t i = 0; i < cx->n_chunks; i++)
        bson_free (cx->chunks[i].data);
    bson_free (cx->chunks);
    bson_free (cx->seen);
    bson_free (cx->shape);
    bson_free (cx->layout.bytes);
    bson_free (cx->layout.mask);
    bson_free (cx->layout.fields);
    bson_free (cx->layout.ends);
    bson_free (cx->layout.need);
    for (size_t i = 0; i < cx->n_needs; i++)
        bson_free (cx->needs[i].name);
    for (size_t i = 0; i < cx->n_bufs; i++) {
        rm_buf_destroy (cx->bufs[i]);
        bson_free (cx->bufs[i]);
    }
    bson_free (cx->bufs);
    bson_free (cx->free_bufs);
    rm_buf_destroy (&cx->cmp[0]);
    rm_buf_destroy (&cx->cmp[1]);
    bson_free (cx);
}

/* ---- Encoding ---- */

static void
put32 (rm_buf_t *b, uint32_t v)
{
    uint8_t w[4] = {(uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24)};
    rm_buf_append (b, w, 4);
}

static void
put64 (rm_buf_t *b, uint64_t v)
{
    put32 (b, (uint32_t) v);
    put32 (b, (uint32_t) (v >> 32));
}

static void
put_string (rm_buf_t *b, const char *s, uint32_t len)
{
    put32 (b, len + 1);
    rm_buf_append (b, s, len);
    rm_buf_append (b, "", 1);
}

static uint8_t *
le32_at (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
    p[2] = (uint8_t) (v >> 16);
    p[3] = (uint8_t) (v >> 24);
    return p + 4;
}

/* The common types written in one reservation, not an append per part
 * (each with its own room check): a set's results are mostly these.
 * False for the rest, nothing written. */
static bool
encode_common (rm_buf_t *b, const char *key, size_t key_len, const bson_value_t *v)
{
    uint32_t slen = v->value_type == BSON_TYPE_UTF8 ? v->value.v_utf8.len : 0;
    size_t need = key_len + 2 + 8 + (v->value_type == BSON_TYPE_UTF8 ? 5 + (size_t) slen : 0);
    uint64_t u;
    uint8_t *p;

    switch (v->value_type) {
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_UTF8:
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DATE_TIME:
    case BSON_TYPE_BOOL:
    case BSON_TYPE_NULL:
        break;
    default:
        return false;
    }
    if (need > b->cap - b->len)
        rm_buf_grow (b, need);
    p = b->data + b->len;
    *p++ = (uint8_t) v->value_type;
    if (key_len)
        memcpy (p, key, key_len);
    p += key_len;
    *p++ = 0;
    switch (v->value_type) {
    case BSON_TYPE_DOUBLE:
        memcpy (&u, &v->value.v_double, 8);
        p = le32_at (le32_at (p, (uint32_t) u), (uint32_t) (u >> 32));
        break;
    case BSON_TYPE_UTF8:
        p = le32_at (p, slen + 1);
        if (slen)
            memcpy (p, v->value.v_utf8.str, slen);
        p += slen;
        *p++ = 0;
        break;
    case BSON_TYPE_INT32:
        p = le32_at (p, (uint32_t) v->value.v_int32);
        break;
    case BSON_TYPE_INT64:
    case BSON_TYPE_DATE_TIME:
        u = v->value_type == BSON_TYPE_INT64 ? (uint64_t) v->value.v_int64 : (uint64_t) v->value.v_datetime;
        p = le32_at (le32_at (p, (uint32_t) u), (uint32_t) (u >> 32));
        break;
    case BSON_TYPE_BOOL:
        *p++ = v->value.v_bool ? 1 : 0;
        break;
    default: /* null: no bytes */
        break;
    }
    b->len = (size_t) (p - b->data);
    return true;
}

void
rm_xval_encode (rm_buf_t *b, const char *key, size_t key_len, const bson_value_t *v)
{
    uint8_t t = (uint8_t) v->value_type;
    const bson_value_t *x = v;
    uint64_t u;

    if (encode_common (b, key, key_len, v))
        return;
    rm_buf_append (b, &t, 1);
    rm_buf_append (b, key, key_len);
    rm_buf_append (b, "", 1);
    switch (v->value_type) {
    case BSON_TYPE_DOUBLE:
        memcpy (&u, &x->value.v_double, 8);
        put64 (b, u);
        break;
    case BSON_TYPE_UTF8:
        put_string (b, x->value.v_utf8.str, x->value.v_utf8.len);
        break;
    case BSON_TYPE_SYMBOL:
        put_string (b, x->value.v_symbol.symbol, x->value.v_symbol.len);
        break;
    case BSON_TYPE_CODE:
        put_string (b, x->value.v_code.code, x->value.v_code.code_len);
        break;
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY:
        rm_buf_append (b, x->value.v_doc.data, x->value.v_doc.data_len);
        break;
    case BSON_TYPE_BINARY: {
        uint8_t st = (uint8_t) x->value.v_binary.subtype;
        if (x->value.v_binary.subtype == BSON_SUBTYPE_BINARY_DEPRECATED) {
            put32 (b, x->value.v_binary.data_len + 4);
            rm_buf_append (b, &st, 1);
            put32 (b, x->value.v_binary.data_len);
        } else {
            put32 (b, x->value.v_binary.data_len);
            rm_buf_append (b, &st, 1);
        }
        rm_buf_append (b, x->value.v_binary.data, x->value.v_binary.data_len);
        break;
    }
    case BSON_TYPE_OID:
        rm_buf_append (b, x->value.v_oid.bytes, 12);
        break;
    case BSON_TYPE_BOOL: {
        uint8_t c = x->value.v_bool ? 1 : 0;
        rm_buf_append (b, &c, 1);
        break;
    }
    case BSON_TYPE_DATE_TIME:
        put64 (b, (uint64_t) x->value.v_datetime);
        break;
    case BSON_TYPE_REGEX:
        rm_buf_append (b, x->value.v_regex.regex, strlen (x->value.v_regex.regex) + 1);
        rm_buf_append (b, x->value.v_regex.options ? x->value.v_regex.options : "",
                       (x->value.v_regex.options ? strlen (x->value.v_regex.options) : 0) + 1);
        break;
    case BSON_TYPE_DBPOINTER:
        put_string (b, x->value.v_dbpointer.collection, x->value.v_dbpointer.collection_len);
        rm_buf_append (b, x->value.v_dbpointer.oid.bytes, 12);
        break;
    case BSON_TYPE_CODEWSCOPE:
        put32 (b, 4 + 4 + x->value.v_codewscope.code_len + 1 + x->value.v_codewscope.scope_len);
        put_string (b, x->value.v_codewscope.code, x->value.v_codewscope.code_len);
        rm_buf_append (b, x->value.v_codewscope.scope_data, x->value.v_codewscope.scope_len);
        break;
    case BSON_TYPE_INT32:
        put32 (b, (uint32_t) x->value.v_int32);
        break;
    case BSON_TYPE_TIMESTAMP:
        put32 (b, x->value.v_timestamp.increment);
        put32 (b, x->value.v_timestamp.timestamp);
        break;
    case BSON_TYPE_INT64:
        put64 (b, (uint64_t) x->value.v_int64);
        break;
    case BSON_TYPE_DECIMAL128:
        put64 (b, x->value.v_decimal128.low);
        put64 (b, x->value.v_decimal128.high);
        break;
    default: /* undefined, null, minKey, maxKey: no bytes */
        break;
    }
}

void
rm_expr_raw (rm_expr_ctx_t *cx, const bson_value_t *v, rm_raw_value_t *raw)
{
    rm_buf_t *b = &cx->cmp[0];
    uint8_t *p;

    rm_buf_reset (b);
    rm_xval_encode (b, "", 0, v);
    p = rm_xalloc (cx, b->len - 2);
    memcpy (p, b->data + 2, b->len - 2);
    raw->type = (uint8_t) v->value_type;
    raw->data = p;
    raw->len = (uint32_t) (b->len - 2);
}

void
rm_expr_append (bson_t *doc, const char *key, int key_len, const bson_value_t *v)
{
    if (!rm_xval_missing (v))
        bson_append_value (doc, key, key_len, v);
}

/* ---- Builders ---- */

rm_buf_t *
rm_xbuf_take (rm_expr_ctx_t *cx)
{
    if (cx->n_free == 0) {
        rm_buf_t *nb = bson_malloc (sizeof *nb);
        rm_buf_init (nb);
        cx->bufs = bson_realloc (cx->bufs, (cx->n_bufs + 1) * sizeof *cx->bufs);
        cx->free_bufs = bson_realloc (cx->free_bufs, (cx->n_bufs + 1) * sizeof *cx->free_bufs);
        cx->bufs[cx->n_bufs++] = nb;
        cx->free_bufs[cx->n_free++] = nb;
    }
    rm_buf_t *b = cx->free_bufs[--cx->n_free];
    rm_buf_reset (b);
    return b;
}

void
rm_xbuf_give (rm_expr_ctx_t *cx, rm_buf_t *buf)
{
    cx->free_bufs[cx->n_free++] = buf;
}

void
rm_xval_unkeep (rm_expr_ctx_t *cx, rm_buf_t *buf)
{
    cx->kept -= buf->len <= cx->kept ? buf->len : cx->kept;
    rm_buf_reset (buf);
}

void
rm_xval_keep (rm_expr_ctx_t *cx, rm_buf_t *buf, const bson_value_t *v, bson_value_t *out)
{
    bson_iter_t it;
    uint32_t len;

    rm_xval_unkeep (cx, buf);
    if (rm_xval_missing (v)) {
        rm_xset_missing (out);
        return;
    }
    put32 (buf, 0);
    rm_xval_encode (buf, "", 0, v);
    rm_buf_append (buf, "", 1);
    len = (uint32_t) buf->len;
    memcpy (buf->data, &len, 4);
    count (cx, buf->len);
    cx->kept += buf->len;
    if (bson_iter_init_from_data (&it, buf->data, buf->len) && bson_iter_next (&it))
        *out = *bson_iter_value (&it);
    else
        rm_xset_null (out); /* (cannot happen: the bytes are ours) */
}

void
rm_xbuild_begin (rm_expr_ctx_t *cx, rm_xbuild_t *b, bool array)
{
    b->cx = cx;
    b->buf = rm_xbuf_take (cx);
    b->n = 0;
    b->array = array;
    put32 (b->buf, 0);
}

void
rm_xbuild_field (rm_xbuild_t *b, const char *key, size_t key_len, const bson_value_t *v)
{
    if (rm_xval_missing (v))
        return;
    rm_xval_encode (b->buf, key, key_len, v);
    b->n++;
    count (b->cx, b->buf->len);
}

/* An array index as its key's digits into key (16 bytes): a third of an
 * array-building operator's time went to snprintf. */
static size_t
index_key (char *key, uint32_t n)
{
    char tmp[16];
    size_t len = 0, i = 0;
    do {
        tmp[len++] = (char) ('0' + n % 10);
        n /= 10;
    } while (n);
    while (len)
        key[i++] = tmp[--len];
    key[i] = '\0';
    return i;
}

void
rm_xbuild_push (rm_xbuild_t *b, const bson_value_t *v)
{
    char key[16];
    size_t kl = index_key (key, (uint32_t) b->n++);
    bson_value_t null_v;

    if (rm_xval_missing (v)) {
        rm_xset_null (&null_v);
        v = &null_v;
    }
    rm_xval_encode (b->buf, key, kl, v);
    count (b->cx, b->buf->len);
}

void
rm_xbuild_end (rm_xbuild_t *b, bson_value_t *out)
{
    rm_buf_t *buf = b->buf;
    uint8_t *p;
    uint32_t len;

    rm_buf_append (buf, "", 1);
    len = (uint32_t) buf->len;
    buf->data[0] = (uint8_t) len;
    buf->data[1] = (uint8_t) (len >> 8);
    buf->data[2] = (uint8_t) (len >> 16);
    buf->data[3] = (uint8_t) (len >> 24);
    p = rm_xalloc (b->cx, len);
    memcpy (p, buf->data, len);
    out->value_type = b->array ? BSON_TYPE_ARRAY : BSON_TYPE_DOCUMENT;
    out->value.v_doc.data = p;
    out->value.v_doc.data_len = len;
    rm_xbuild_abort (b);
}

void
rm_xbuild_abort (rm_xbuild_t *b)
{
    if (b->buf)
        b->cx->free_bufs[b->cx->n_free++] = b->buf;
    b->buf = NULL;
}

bool
rm_xval_iter (const bson_value_t *v, bson_iter_t *it)
{
    if (v->value_type != BSON_TYPE_ARRAY && v->value_type != BSON_TYPE_DOCUMENT)
        return false;
    return bson_iter_init_from_data (it, v->value.v_doc.data, v->value.v_doc.data_len);
}

uint32_t
rm_xval_count (const bson_value_t *v)
{
    /* By the lengths alone (bsonwalk.h), not libbson's iterator: every
     * array operator counts its input before it reads it. */
    rm_walk_t w;
    rm_elem_t el;
    uint32_t n = 0;
    if ((v->value_type != BSON_TYPE_ARRAY && v->value_type != BSON_TYPE_DOCUMENT) ||
        !rm_walk_init (&w, v->value.v_doc.data, v->value.v_doc.data_len))
        return 0;
    while (rm_walk_next (&w, &el) > 0)
        n++;
    return n;
}

/* ---- What operators ask of values ---- */

bool
rm_xval_truthy (const bson_value_t *v)
{
    switch (v->value_type) {
    case BSON_TYPE_EOD:
    case BSON_TYPE_NULL:
    case BSON_TYPE_UNDEFINED:
        return false;
    case BSON_TYPE_BOOL:
        return v->value.v_bool;
    case BSON_TYPE_INT32:
        return v->value.v_int32 != 0;
    case BSON_TYPE_INT64:
        return v->value.v_int64 != 0;
    case BSON_TYPE_DOUBLE:
        /* NaN is true, as the server has it (NaN != 0). */
        return v->value.v_double != 0.0;
    case BSON_TYPE_DECIMAL128: {
        double d;
        rm_xval_to_double (v, &d);
        /* Any zero (0E-10, -0) is false; only the coefficient decides. */
        uint64_t hi = v->value.v_decimal128.high, lo = v->value.v_decimal128.low;
        if (((hi >> 61) & 3) == 3)
            return ((hi >> 58) & 0x1f) >= 0x1e; /* NaN and infinity are true */
        return (hi & ((UINT64_C (1) << 49) - 1)) != 0 || lo != 0;
    }
    default:
        return true;
    }
}

/* A value as an iterator over the encoding in b: {"": v}. */
static const bson_iter_t *
iter_of (rm_buf_t *b, const bson_value_t *v, bson_iter_t *it)
{
    if (rm_xval_missing (v))
        return NULL;
    rm_buf_reset (b);
    put32 (b, 0);
    rm_xval_encode (b, "", 0, v);
    rm_buf_append (b, "", 1);
    uint32_t len = (uint32_t) b->len;
    memcpy (b->data, &len, 4);
    if (!bson_iter_init_from_data (it, b->data, b->len) || !bson_iter_next (it))
        return NULL;
    return it;
}

int
rm_xval_compare (rm_expr_ctx_t *cx, const bson_value_t *a, const bson_value_t *b)
{
    bson_iter_t ia, ib;
    int c;
    if (rm_value_compare_quick (a, b, &c))
        return c;
    const bson_iter_t *pa = iter_of (&cx->cmp[0], a, &ia);
    const bson_iter_t *pb = iter_of (&cx->cmp[1], b, &ib);
    return rm_value_compare (pa, pb);
}

int
rm_expr_compare (rm_expr_ctx_t *cx, const bson_value_t *a, const bson_value_t *b)
{
    return rm_xval_compare (cx, a, b);
}

const char *
rm_xval_type_name (const bson_value_t *v)
{
    return rm_xval_missing (v) ? "missing" : rm_value_type_name (v->value_type);
}

bool
rm_xval_to_double (const bson_value_t *v, double *d)
{
    switch (v->value_type) {
    case BSON_TYPE_INT32:
        *d = v->value.v_int32;
        return true;
    case BSON_TYPE_INT64:
        *d = (double) v->value.v_int64;
        return true;
    case BSON_TYPE_DOUBLE:
        *d = v->value.v_double;
        return true;
    case BSON_TYPE_DECIMAL128: {
        char s[BSON_DECIMAL128_STRING];
        bson_decimal128_to_string (&v->value.v_decimal128, s);
        if (!strcmp (s, "NaN") || !strcmp (s, "-NaN"))
            *d = NAN;
        else if (!strcmp (s, "Infinity"))
            *d = INFINITY;
        else if (!strcmp (s, "-Infinity"))
            *d = -INFINITY;
        else
            *d = strtod (s, NULL);
        return true;
    }
    default:
        return false;
    }
}

bool
rm_xval_to_int64 (const bson_value_t *v, int64_t *i)
{
    double d;
    switch (v->value_type) {
    case BSON_TYPE_INT32:
        *i = v->value.v_int32;
        return true;
    case BSON_TYPE_INT64:
        *i = v->value.v_int64;
        return true;
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128:
        if (!rm_xval_to_double (v, &d) || d != floor (d) || d < -9223372036854775808.0 ||
            d >= 9223372036854775808.0)
            return false;
        *i = (int64_t) d;
        return true;
    default:
        return false;
    }
}

const char *
rm_expr_show (rm_expr_ctx_t *cx, const bson_value_t *v, size_t max)
{
    rm_buf_t out, *b = &cx->cmp[1];
    bson_iter_t it;
    char *s;

    if (rm_xval_missing (v))
        return "missing";
    rm_buf_init (&out);
    if (iter_of (b, v, &it))
        rm_extjson_value (&out, &it, RM_EXTJSON_RELAXED);
    if (out.len > max) {
        /* Cut at a character's start, and say so. */
        size_t n = max;
        while (n > 0 && rm_xutf8_is_cont (out.data[n]))
            n--;
        out.len = n;
        rm_buf_append (&out, "...", 3);
    }
    s = rm_xalloc (cx, out.len + 1);
    memcpy (s, out.data, out.len);
    s[out.len] = '\0';
    rm_buf_destroy (&out);
    /* Control bytes would drive a terminal: shown as '?' (the JSON writer
     * escapes them in strings; keys and the rest are escaped above us). */
    for (char *c = s; *c; c++)
        if ((unsigned char) *c < 0x20)
            *c = '?';
    return s;
}

const char *
rm_xshow (rm_expr_ctx_t *cx, const bson_value_t *v)
{
    return rm_expr_show (cx, v, 60);
}
