/* Pipeline stages shared by the compilers (compile_stage.h). */
#include <stdio.h>
#include <string.h>

#include "compile_stage.h"

void
rm_cs_begin (bson_t *pipeline, rm_cs_stage_t *s, const char *op)
{
    char key[16];
    s->pipeline = pipeline;
    snprintf (key, sizeof key, "%u", bson_count_keys (pipeline));
    BSON_APPEND_DOCUMENT_BEGIN (pipeline, key, &s->stage);
    BSON_APPEND_DOCUMENT_BEGIN (&s->stage, op, &s->body);
}

void
rm_cs_end (rm_cs_stage_t *s)
{
    bson_append_document_end (&s->stage, &s->body);
    bson_append_document_end (s->pipeline, &s->stage);
}

void
rm_cs_append (bson_t *pipeline, bson_t *stage)
{
    char key[16];
    snprintf (key, sizeof key, "%u", bson_count_keys (pipeline));
    BSON_APPEND_DOCUMENT (pipeline, key, stage);
    bson_destroy (stage);
}

char *
rm_cs_ref (const char *prefix, const char *path)
{
    return prefix ? bson_strdup_printf ("$%s.%s", prefix, path) : bson_strdup_printf ("$%s", path);
}

void
rm_cs_lookup (bson_t *pipeline, const char *from, const char *local, const char *foreign)
{
    rm_cs_append (pipeline, BCON_NEW ("$lookup", "{", "from", BCON_UTF8 (from), "localField",
                                   BCON_UTF8 (local), "foreignField", BCON_UTF8 (foreign), "as",
                                   BCON_UTF8 ("__rm"), "}"));
}

void
rm_cs_unwind (bson_t *pipeline)
{
    rm_cs_append (pipeline, BCON_NEW ("$unwind", "{", "path", BCON_UTF8 ("$__rm"),
                                   "includeArrayIndex", BCON_UTF8 ("__rm_i"),
                                   "preserveNullAndEmptyArrays", BCON_BOOL (true), "}"));
}

void
rm_cs_drop (bson_t *pipeline, const char *const *names, size_t n)
{
    rm_cs_stage_t s;
    rm_cs_begin (pipeline, &s, "$project");
    for (size_t i = 0; i < n; i++)
        BSON_APPEND_INT32 (&s.body, names[i], 0);
    rm_cs_end (&s);
}

void
rm_cs_append_has (bson_t *doc, const char *key, const char *expr)
{
    bson_t *e = BCON_NEW ("$gt", "[", "{", "$size", "{", "$objectToArray", "{", "v",
                          BCON_UTF8 (expr), "}", "}", "}", BCON_INT32 (0), "]");
    BSON_APPEND_DOCUMENT (doc, key, e);
    bson_destroy (e);
}

void
rm_cs_append_has_field (bson_t *doc, const char *key, const char *base, const char *path)
{
    bson_t *e;
    char *full;
    if (strchr (path, '.')) {
        full = bson_strdup_printf ("%s.%s", base, path);
        rm_cs_append_has (doc, key, full);
        bson_free (full);
        return;
    }
    e = BCON_NEW ("$in", "[", BCON_UTF8 (path), "{", "$map", "{", "input", "{", "$ifNull", "[", "{",
                  "$objectToArray", BCON_UTF8 (base), "}", "[", "]", "]", "}", "as", BCON_UTF8 ("f"),
                  "in", BCON_UTF8 ("$$f.k"), "}", "}", "]");
    BSON_APPEND_DOCUMENT (doc, key, e);
    bson_destroy (e);
}

void
rm_cs_append_no_child (bson_t *doc, const char *key)
{
    bson_t *e = BCON_NEW ("$eq", "[", BCON_UTF8 ("$__rm_i"), BCON_NULL, "]");
    BSON_APPEND_DOCUMENT (doc, key, e);
    bson_destroy (e);
}

bool
rm_cs_top_level (const rm_path_t *p)
{
    return p->n == 1;
}

bool
rm_cs_reserved (const char *name)
{
    return strncmp (name, "__rm", 4) == 0;
}
