/* Reading collection metadata JSON with libbson's Extended JSON parser. */
#include <string.h>

#include <bson/bson.h>

#include "jsonscan.h"
#include "remodel/metadata.h"
#include "remodel/nsname.h"

void
rm_metadata_read (const char *json, size_t len, rm_metadata_t *out)
{
    bson_t *b;
    bson_iter_t it, sub;

    memset (out, 0, sizeof *out);
    if (!json || len == 0)
        return;
    b = bson_new_from_json ((const uint8_t *) json, (ssize_t) len, NULL);
    if (!b)
        return;
    out->parsed = true;
    if (bson_iter_init_find (&it, b, "collectionName") && BSON_ITER_HOLDS_UTF8 (&it)) {
        uint32_t n;
        const char *v = bson_iter_utf8 (&it, &n);
        out->collection_name = bson_malloc ((size_t) n + 1);
        memcpy (out->collection_name, v, (size_t) n + 1);
        out->collection_name_len = n;
    }
    if (bson_iter_init_find (&it, b, "type") && BSON_ITER_HOLDS_UTF8 (&it))
        out->type = bson_strdup (bson_iter_utf8 (&it, NULL));
    if (bson_iter_init_find (&it, b, "options") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
        bson_iter_recurse (&it, &sub)) {
        while (bson_iter_next (&sub)) {
            if (strcmp (bson_iter_key (&sub), "viewOn") == 0)
                out->is_view = true;
            if (strcmp (bson_iter_key (&sub), "timeseries") == 0)
                out->is_timeseries = true;
        }
    }
    if (out->type && strcmp (out->type, "view") == 0)
        out->is_view = true;
    if (out->type && strcmp (out->type, "timeseries") == 0)
        out->is_timeseries = true;
    if (bson_iter_init_find (&it, b, "indexes") && BSON_ITER_HOLDS_ARRAY (&it) &&
        bson_iter_recurse (&it, &sub)) {
        while (bson_iter_next (&sub)) {
            bson_iter_t ix;
            if (BSON_ITER_HOLDS_DOCUMENT (&sub) && bson_iter_recurse (&sub, &ix) &&
                bson_iter_find (&ix, "name") && BSON_ITER_HOLDS_UTF8 (&ix)) {
                out->index_names = bson_realloc (out->index_names,
                                                 (out->n_indexes + 1) * sizeof (char *));
                out->index_names[out->n_indexes++] = bson_strdup (bson_iter_utf8 (&ix, NULL));
            }
        }
    }
    bson_destroy (b);
}

void
rm_metadata_clear (rm_metadata_t *m)
{
    for (size_t i = 0; i < m->n_indexes; i++)
        bson_free (m->index_names[i]);
    bson_free (m->index_names);
    bson_free (m->collection_name);
    bson_free (m->type);
    memset (m, 0, sizeof *m);
}


/* Growing text, with lengths: the metadata may hold any byte, NUL too. */
typedef struct {
    char *p;
    size_t len, cap;
} text_t;

static void
put (text_t *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = 2 * (t->len + n + 1);
        t->p = bson_realloc (t->p, t->cap);
    }
    memcpy (t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void
put_json_string (text_t *t, const char *text)
{
    char *esc = bson_utf8_escape_for_json (text, -1);
    put (t, "\"", 1);
    put (t, esc ? esc : "", esc ? strlen (esc) : 0);
    put (t, "\"", 1);
    bson_free (esc);
}

char *
rm_metadata_with_name (const char *json, size_t len, const char *coll, size_t *out_len)
{
    size_t i = 0, close = 0, key_at = 0, value_at = 0, value_end = 0;
    int depth = 0;
    bool found = false, expect_key = false, any_key = false;
    text_t out = {NULL, 0, 0};

    while (i < len && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t'))
        i++;
    if (i >= len || json[i] != '{')
        return NULL;
    /* One scan at the top level: keys, the value after "collectionName",
     * and the closing brace. */
    for (; i < len; i++) {
        char c = json[i];
        if (c == '"') {
            size_t end = rm_json_string_end (json, i, len);
            if (depth == 1 && expect_key) {
                any_key = true;
                if (end - i == 16 && memcmp (json + i, "\"collectionName\"", 16) == 0) {
                    size_t v = end;
                    while (v < len && json[v] != ':')
                        v++;
                    for (v++; v < len && (json[v] == ' ' || json[v] == '\n' || json[v] == '\r' ||
                                          json[v] == '\t'); v++)
                        ;
                    if (v < len && json[v] == '"' && !found) {
                        found = true;
                        key_at = i;
                        value_at = v;
                        value_end = rm_json_string_end (json, v, len);
                    }
                }
                expect_key = false;
            }
            i = end - 1;
        } else if (c == '{' || c == '[') {
            if (++depth == 1)
                expect_key = true;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                close = i;
                break;
            }
        } else if (c == ',' && depth == 1) {
            expect_key = true;
        }
    }
    if (depth != 0 || close == 0)
        return NULL;
    (void) key_at;
    if (found) {
        put (&out, json, value_at);
        put_json_string (&out, coll);
        put (&out, json + value_end, len - value_end);
    } else {
        size_t before = close;
        /* after the last key's value, before blanks and the brace */
        while (before > 0 && (json[before - 1] == ' ' || json[before - 1] == '\n' ||
                              json[before - 1] == '\r' || json[before - 1] == '\t'))
            before--;
        put (&out, json, before);
        put (&out, any_key ? ",\"collectionName\":" : "\"collectionName\":", any_key ? 18 : 17);
        put_json_string (&out, coll);
        put (&out, json + before, len - before);
    }
    *out_len = out.len;
    return out.p;
}

bool
rm_metadata_check_name (const rm_metadata_t *m, const char *file, const char *db,
                        bson_error_t *err)
{
    char *shown;
    if (!m->collection_name || (*m->collection_name &&
                                strlen (m->collection_name) == m->collection_name_len))
        return true;
    shown = rm_nsname_show (m->collection_name, m->collection_name_len);
    rm_error_set (err, RM_ERR_FORMAT, "%s: namespace with database \"%s\" and collection "
                  "\"%s\": %s (its collectionName)", file, db, shown,
                  *m->collection_name ? "a collection name holding a NUL byte"
                                      : "an empty collection name");
    bson_free (shown);
    return false;
}
