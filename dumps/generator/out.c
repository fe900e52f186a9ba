/*
 * out.c: writes one collection of the dump, <root>/<db>/<coll>.bson with
 * documents back to back and then <coll>.metadata.json beside it.
 *
 * Documents are copied into a 4 MiB buffer and written with one fwrite per
 * buffer: per-document fwrite calls (each taking the stream lock) would
 * dominate the run time at --scale 1000.
 *
 * Also the small bson helpers every dataset uses for its fields.
 */
#include "gen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define GEN_OUT_BUF_SIZE ((size_t) 4 << 20)

bool
gen_errno_error (bson_error_t *error, const char *what, const char *path)
{
    bson_set_error (error, GEN_ERROR_DOMAIN, (uint32_t) errno, "%s %s: %s", what, path,
                    strerror (errno));
    return false;
}

bool
gen_coll_open (gen_coll_t *coll, const gen_ctx_t *ctx, const char *db, const char *name,
               bson_error_t *error)
{
    char *dir = bson_strdup_printf ("%s/%s", ctx->root, db);
    char *ns = bson_strdup_printf ("%s.%s", db, name);

    memset (coll, 0, sizeof *coll);
    bson_init (&coll->doc);
    gen_rng_init (&coll->rng, ctx->seed, ns);
    gen_idgen_init (&coll->ids, ctx->seed, ns);
    bson_free (ns);
    /* The database folder is shared by its collections: EEXIST is fine. */
    if (mkdir (dir, 0777) != 0 && errno != EEXIST) {
        gen_errno_error (error, "cannot create directory", dir);
        bson_free (dir);
        return false;
    }
    coll->db = bson_strdup (db);
    coll->name = bson_strdup (name);
    coll->bson_path = bson_strdup_printf ("%s/%s.bson", dir, name);
    coll->meta_path = bson_strdup_printf ("%s/%s.metadata.json", dir, name);
    bson_free (dir);

    coll->buf = bson_malloc (GEN_OUT_BUF_SIZE);
    coll->fp = fopen (coll->bson_path, "wb");
    if (!coll->fp) {
        return gen_errno_error (error, "cannot create", coll->bson_path);
    }
    return true;
}

bson_t *
gen_coll_doc (gen_coll_t *coll, uint64_t index, int64_t unix_secs)
{
    bson_oid_t oid;

    bson_reinit (&coll->doc);
    gen_idgen_oid (&coll->ids, index, unix_secs, &oid);
    BSON_APPEND_OID (&coll->doc, "_id", &oid);
    return &coll->doc;
}

static bool
flush_buffer (gen_coll_t *coll, bson_error_t *error)
{
    if (coll->len > 0 && fwrite (coll->buf, 1, coll->len, coll->fp) != coll->len) {
        return gen_errno_error (error, "cannot write", coll->bson_path);
    }
    coll->len = 0;
    return true;
}

bool
gen_coll_write (gen_coll_t *coll, bson_error_t *error)
{
    const uint8_t *data = bson_get_data (&coll->doc);
    const size_t len = coll->doc.len;

    if (coll->len + len > GEN_OUT_BUF_SIZE && !flush_buffer (coll, error)) {
        return false;
    }
    if (len > GEN_OUT_BUF_SIZE) {
        /* Never happens with these datasets; kept so the function is total. */
        if (fwrite (data, 1, len, coll->fp) != len) {
            return gen_errno_error (error, "cannot write", coll->bson_path);
        }
    } else {
        memcpy (coll->buf + coll->len, data, len);
        coll->len += len;
    }
    coll->docs++;
    coll->bytes += len;
    return true;
}

/* Flushes and closes the .bson file, then writes the metadata. */
static bool
finish (gen_coll_t *coll, gen_ctx_t *ctx, const gen_index_t *indexes, size_t n_indexes,
        bson_error_t *error)
{
    FILE *fp = coll->fp;
    char *json;
    bool ok;

    if (!flush_buffer (coll, error)) {
        return false;
    }
    coll->fp = NULL;
    /* fclose reports write errors that buffering delayed (disk full). */
    if (fclose (fp) != 0) {
        return gen_errno_error (error, "cannot write", coll->bson_path);
    }

    json = gen_metadata_json (ctx, coll->db, coll->name, indexes, n_indexes);
    ok = gen_write_file (coll->meta_path, json, error);
    bson_free (json);
    if (!ok) {
        return false;
    }

    ctx->total_docs += coll->docs;
    ctx->total_bytes += coll->bytes;
    if (ctx->verbose) {
        fprintf (stderr, "remodel-gen: %s.%s: %" PRIu64 " documents, %" PRIu64 " bytes\n", coll->db,
                 coll->name, coll->docs, coll->bytes);
    }
    return true;
}

bool
gen_coll_close (gen_coll_t *coll, gen_ctx_t *ctx, bool ok, const gen_index_t *indexes,
                size_t n_indexes, bson_error_t *error)
{
    ok = ok && finish (coll, ctx, indexes, n_indexes, error);
    if (coll->fp) {
        fclose (coll->fp);
    }
    bson_destroy (&coll->doc);
    bson_free (coll->buf);
    bson_free (coll->db);
    bson_free (coll->name);
    bson_free (coll->bson_path);
    bson_free (coll->meta_path);
    return ok;
}

void
gen_append_utf8 (bson_t *doc, const char *key, const char *value)
{
    bson_append_utf8 (doc, key, -1, value, -1);
}

/* Prices are integers of cents internally, so a decimal128 "12.34" is built
 * from its text rather than from a double (which would not round-trip). */
void
gen_append_cents_decimal (bson_t *doc, const char *key, uint64_t cents)
{
    char text[32];
    bson_decimal128_t dec;

    snprintf (text, sizeof text, "%" PRIu64 ".%02u", cents / 100, (unsigned) (cents % 100));
    bson_decimal128_from_string (text, &dec);
    bson_append_decimal128 (doc, key, -1, &dec);
}

void
gen_append_buf (bson_t *doc, const char *key, const gen_buf_t *buf)
{
    bson_append_utf8 (doc, key, -1, buf->data, (int) buf->len);
}

void
gen_append_picks (bson_t *doc, const char *key, const gen_list_t *list, uint32_t n,
                  gen_rng_t *rng)
{
    char keybuf[16];
    bson_t arr;

    bson_append_array_begin (doc, key, -1, &arr);
    for (uint32_t i = 0; i < n; i++) {
        gen_append_utf8 (&arr, gen_array_key (i, keybuf), gen_list_pick (list, rng));
    }
    bson_append_array_end (doc, &arr);
}

const char *
gen_array_key (uint32_t i, char buf[16])
{
    const char *key;

    bson_uint32_to_string (i, &key, buf, 16);
    return key;
}
