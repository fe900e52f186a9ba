/*
 * metadata.c: the <coll>.metadata.json text, byte for byte as mongodump
 * 100.x writes it for a 7.0 server: one line of canonical Extended JSON v2,
 * keys in the order indexes, uuid, collectionName ("options" left out when
 * empty), no trailing newline. libbson's own JSON output puts spaces around
 * ':' and ',', so the text is assembled here instead.
 */
#include "gen.h"

#include <stdio.h>
#include <string.h>

/* JSON string with the escapes Go's encoder would use for these names. */
static void
append_json_string (bson_string_t *out, const char *str)
{
    bson_string_append_c (out, '"');
    for (const unsigned char *p = (const unsigned char *) str; *p; p++) {
        if (*p == '"' || *p == '\\') {
            bson_string_append_c (out, '\\');
            bson_string_append_c (out, (char) *p);
        } else if (*p < 0x20) {
            bson_string_append_printf (out, "\\u%04x", (unsigned) *p);
        } else {
            bson_string_append_c (out, (char) *p);
        }
    }
    bson_string_append_c (out, '"');
}

/* {"v":{"$numberInt":"2"},"unique":true,"key":{...},"name":"..."}: the field
 * order of the fixtures dumped from real 7.0 servers. */
static void
append_index (bson_string_t *out, const gen_index_t *index)
{
    bson_string_t *name = bson_string_new (NULL);

    bson_string_append (out, "{\"v\":{\"$numberInt\":\"2\"},");
    if (index->unique) {
        bson_string_append (out, "\"unique\":true,");
    }
    bson_string_append (out, "\"key\":{");
    for (int k = 0; k < 3 && index->fields[k]; k++) {
        if (k > 0) {
            bson_string_append_c (out, ',');
            bson_string_append_c (name, '_');
        }
        append_json_string (out, index->fields[k]);
        bson_string_append_printf (out, ":{\"$numberInt\":\"%d\"}", index->dirs[k]);
        bson_string_append_printf (name, "%s_%d", index->fields[k], index->dirs[k]);
    }
    bson_string_append (out, "},\"name\":");
    append_json_string (out, name->str);
    bson_string_append_c (out, '}');
    bson_string_free (name, true);
}

/* A random-looking (version 4 layout) UUID that depends only on the seed and
 * the namespace, so reruns produce identical metadata files. */
static void
append_uuid (bson_string_t *out, uint64_t seed, const char *ns)
{
    const uint64_t h1 = gen_hash_str (seed, ns);
    const uint64_t h2 = gen_mix64 (h1 ^ UINT64_C (0x75756964)); /* "uuid" */
    uint8_t bytes[16];

    for (int i = 0; i < 8; i++) {
        bytes[i] = (uint8_t) (h1 >> (8 * i));
        bytes[8 + i] = (uint8_t) (h2 >> (8 * i));
    }
    bytes[6] = (uint8_t) ((bytes[6] & 0x0f) | 0x40);
    bytes[8] = (uint8_t) ((bytes[8] & 0x3f) | 0x80);
    bson_string_append_c (out, '"');
    for (int i = 0; i < 16; i++) {
        bson_string_append_printf (out, "%02x", (unsigned) bytes[i]);
    }
    bson_string_append_c (out, '"');
}

/* Returns the metadata text; free with bson_free. */
char *
gen_metadata_json (const gen_ctx_t *ctx, const char *db, const char *coll,
                   const gen_index_t *indexes, size_t n_indexes)
{
    bson_string_t *out = bson_string_new ("{\"indexes\":[");
    char *ns = bson_strdup_printf ("uuid:%s.%s", db, coll);

    bson_string_append (out,
                        "{\"v\":{\"$numberInt\":\"2\"},"
                        "\"key\":{\"_id\":{\"$numberInt\":\"1\"}},"
                        "\"name\":\"_id_\"}");
    for (size_t i = 0; i < n_indexes; i++) {
        bson_string_append_c (out, ',');
        append_index (out, &indexes[i]);
    }
    bson_string_append (out, "],\"uuid\":");
    append_uuid (out, ctx->seed, ns);
    bson_string_append (out, ",\"collectionName\":");
    append_json_string (out, coll);
    bson_string_append_c (out, '}');
    bson_free (ns);
    return bson_string_free (out, false);
}

/* Writes text to path exactly, without a trailing newline. */
bool
gen_write_file (const char *path, const char *text, bson_error_t *error)
{
    const size_t len = strlen (text);
    FILE *fp = fopen (path, "wb");

    if (!fp) {
        return gen_errno_error (error, "cannot create", path);
    }
    if (fwrite (text, 1, len, fp) != len) {
        gen_errno_error (error, "cannot write", path);
        fclose (fp);
        return false;
    }
    if (fclose (fp) != 0) {
        return gen_errno_error (error, "cannot write", path);
    }
    return true;
}
