/* remodel compile --format validators (remodel/analyze.h): per namespace
 * a plan leaves changed, the collMod command of a $jsonSchema validator
 * for the fields the plan writes (validator_fields.c). Their types come
 * from the steps or, given a dump of the new design, from analyze's type
 * counts of it (the data decides); `required` where every document holds
 * the field; an array of documents' fields under its `items`. */
#include <string.h>

#include "compile_impl.h"
#include "remodel/analyze.h"

typedef struct {
    const char *path;
    bson_t types;      /* bsonType aliases, an array (empty: any) */
    bool required, array, object;
    const char *by;    /* the step that writes it, or NULL */
} field_t;

typedef struct {
    field_t *f;
    size_t n, cap;
} fields_t;

static field_t *
push (fields_t *fs, const char *path)
{
    field_t *f;
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 16;
        fs->f = bson_realloc (fs->f, fs->cap * sizeof *fs->f);
    }
    f = &fs->f[fs->n++];
    memset (f, 0, sizeof *f);
    f->path = path;
    bson_init (&f->types);
    return f;
}

/* The report's entry for ns ({ns, documents, fields}), or false. */
static bool
find_coll (const bson_t *report, const char *ns, bson_iter_t *coll)
{
    bson_iter_t it, c, k;
    if (!report || !bson_iter_init_find (&it, report, "collections") || !bson_iter_recurse (&it, &c))
        return false;
    while (bson_iter_next (&c))
        if (bson_iter_recurse (&c, &k) && bson_iter_find (&k, "ns") &&
            !strcmp (bson_iter_utf8 (&k, NULL), ns)) {
            *coll = c;
            return true;
        }
    return false;
}

static int64_t
get_int (const bson_iter_t *doc, const char *key)
{
    bson_iter_t k;
    return bson_iter_recurse (doc, &k) && bson_iter_find (&k, key) ? bson_iter_as_int64 (&k) : 0;
}

/* The step's field that path is, or lies under (NULL: none). */
static const rm_vfield_t *
plan_field (const rm_vns_t *x, const char *path, bool *under)
{
    for (size_t i = 0; i < x->n; i++) {
        size_t l = strlen (x->f[i].path);
        if (!strncmp (path, x->f[i].path, l) && (path[l] == '\0' || path[l] == '.')) {
            *under = path[l] == '.';
            return &x->f[i];
        }
    }
    return NULL;
}

/* The fields from the data: each report field the plan wrote (or every
 * one of a namespace it made), its types, and whether every document (or
 * every object of its parent; never an array's elements: the report
 * counts documents, not elements) holds it. */
static void
from_data (const rm_vns_t *x, const bson_iter_t *coll, fields_t *fs, bson_t *objects)
{
    bson_iter_t k, list, fd;
    int64_t docs = get_int (coll, "documents");
    if (!bson_iter_recurse (coll, &k) || !bson_iter_find (&k, "fields") ||
        !bson_iter_recurse (&k, &list))
        return;
    bson_init (objects);
    while (bson_iter_next (&list)) {
        bson_iter_t p, t;
        const char *path, *dot;
        bool under = false;
        const rm_vfield_t *pf;
        field_t *f;
        uint32_t i = 0;
        int64_t holders = get_int (&list, "documents"), parent_objects = docs;

        if (!bson_iter_recurse (&list, &p) || !bson_iter_find (&p, "path"))
            continue;
        path = bson_iter_utf8 (&p, NULL);
        pf = plan_field (x, path, &under);
        if (!pf && !x->whole)
            continue;
        f = push (fs, path);
        f->by = pf && !under ? pf->by : NULL;
        fd = list;
        if (bson_iter_recurse (&fd, &p) && bson_iter_find (&p, "types") && bson_iter_recurse (&p, &t))
            while (bson_iter_next (&t)) {
                char key[16];
                const char *kp;
                const char *name = bson_iter_key (&t);
                bson_uint32_to_string (i++, &kp, key, sizeof key);
                BSON_APPEND_UTF8 (&f->types, kp, name);
                f->array |= !strcmp (name, "array");
                f->object |= !strcmp (name, "object");
                if (!strcmp (name, "object"))
                    BSON_APPEND_INT64 (objects, path, bson_iter_as_int64 (&t));
            }
        dot = strrchr (path, '.');
        if (dot) {
            char *parent = bson_strndup (path, (size_t) (dot - path));
            bson_iter_t o;
            parent_objects = -1;
            for (size_t j = 0; j < fs->n - 1; j++)
                if (!strcmp (fs->f[j].path, parent) && !fs->f[j].array &&
                    bson_iter_init_find (&o, objects, parent))
                    parent_objects = bson_iter_as_int64 (&o);
            bson_free (parent);
        }
        f->required = holders == parent_objects && parent_objects > 0;
    }
}

/* The fields from the steps alone. */
static void
from_steps (const rm_vns_t *x, fields_t *fs)
{
    for (size_t i = 0; i < x->n; i++) {
        field_t *f = push (fs, x->f[i].path);
        f->by = x->f[i].by;
        f->required = x->f[i].required && !strchr (x->f[i].path, '.');
        if (x->f[i].type) {
            BSON_APPEND_UTF8 (&f->types, "0", x->f[i].type);
            f->array = !strcmp (x->f[i].type, "array");
            f->object = !strcmp (x->f[i].type, "object");
        }
    }
}

static void schema_of (const fields_t *fs, const char *prefix, bson_t *props, bson_t *required);

/* One field's schema: its types, and its fields under `properties` (an
 * object) and `items` (an array's document elements). */
static void
field_schema (const fields_t *fs, const field_t *f, bson_t *out)
{
    bson_t props, req, items, sub, subreq;
    uint32_t n = bson_count_keys (&f->types);
    bool nested = false;
    size_t l = strlen (f->path);
    for (size_t i = 0; i < fs->n && !nested; i++)
        nested = !strncmp (fs->f[i].path, f->path, l) && fs->f[i].path[l] == '.';
    if (n == 1) {
        bson_iter_t it;
        bson_iter_init_find (&it, &f->types, "0");
        BSON_APPEND_UTF8 (out, "bsonType", bson_iter_utf8 (&it, NULL));
    } else if (n > 1) {
        BSON_APPEND_ARRAY (out, "bsonType", &f->types);
    }
    if (f->by) {
        char *d = bson_strdup_printf ("written by %s", f->by);
        BSON_APPEND_UTF8 (out, "description", d);
        bson_free (d);
    }
    if (!nested)
        return;
    bson_init (&sub);
    bson_init (&subreq);
    schema_of (fs, f->path, &sub, &subreq);
    if (f->array) {
        BSON_APPEND_DOCUMENT_BEGIN (out, "items", &items);
        BSON_APPEND_DOCUMENT (&items, "properties", &sub);
        bson_append_document_end (out, &items);
    }
    if (f->object || !f->array) {
        BSON_APPEND_DOCUMENT_BEGIN (out, "properties", &props);
        bson_concat (&props, &sub);
        bson_append_document_end (out, &props);
        if (!bson_empty (&subreq)) {
            BSON_APPEND_ARRAY_BEGIN (out, "required", &req);
            bson_concat (&req, &subreq);
            bson_append_array_end (out, &req);
        }
    }
    bson_destroy (&sub);
    bson_destroy (&subreq);
}

/* The fields directly under prefix (NULL: the top level). */
static void
schema_of (const fields_t *fs, const char *prefix, bson_t *props, bson_t *required)
{
    size_t l = prefix ? strlen (prefix) : 0;
    uint32_t r = 0;
    for (size_t i = 0; i < fs->n; i++) {
        const field_t *f = &fs->f[i];
        const char *name = f->path;
        bson_t s;
        if (prefix) {
            if (strncmp (name, prefix, l) != 0 || name[l] != '.')
                continue;
            name += l + 1;
        }
        if (strchr (name, '.'))
            continue;
        BSON_APPEND_DOCUMENT_BEGIN (props, name, &s);
        field_schema (fs, f, &s);
        bson_append_document_end (props, &s);
        if (f->required) {
            char key[16];
            const char *kp;
            bson_uint32_to_string (r++, &kp, key, sizeof key);
            BSON_APPEND_UTF8 (required, kp, name);
        }
    }
}

/* ns's command line {"db": DB, "command": {"collMod": ...}} into line. */
static void
build_line (bson_t *line, const rm_vns_t *x, const fields_t *fs, const char *action)
{
    const char *dot = strchr (x->ns, '.');
    char *db = bson_strndup (x->ns, (size_t) (dot - x->ns));
    bson_t cmd, v, js, props = BSON_INITIALIZER, req = BSON_INITIALIZER;

    schema_of (fs, NULL, &props, &req);
    BSON_APPEND_UTF8 (line, "db", db);
    BSON_APPEND_DOCUMENT_BEGIN (line, "command", &cmd);
    BSON_APPEND_UTF8 (&cmd, "collMod", dot + 1);
    BSON_APPEND_DOCUMENT_BEGIN (&cmd, "validator", &v);
    BSON_APPEND_DOCUMENT_BEGIN (&v, "$jsonSchema", &js);
    BSON_APPEND_UTF8 (&js, "bsonType", "object");
    if (!bson_empty (&req))
        BSON_APPEND_ARRAY (&js, "required", &req);
    BSON_APPEND_DOCUMENT (&js, "properties", &props);
    bson_append_document_end (&v, &js);
    bson_append_document_end (&cmd, &v);
    BSON_APPEND_UTF8 (&cmd, "validationLevel", "moderate");
    BSON_APPEND_UTF8 (&cmd, "validationAction", action);
    bson_append_document_end (line, &cmd);
    bson_destroy (&props);
    bson_destroy (&req);
    bson_free (db);
}

/* Each namespace's line, to each (the printer's and the online mode's). */
static void
each_line (const rm_plan_t *plan, const bson_t *report, const char *action,
           void (*each) (const bson_t *line, void *arg), void *arg)
{
    rm_vplan_t vp;
    rm_compile_validator_fields (plan, &vp);
    for (size_t i = 0; i < vp.n; i++) {
        fields_t fs = {0};
        bson_t objects = BSON_INITIALIZER;
        bson_iter_t coll;
        if (report) {
            bson_destroy (&objects);
            if (find_coll (report, vp.ns[i].ns, &coll))
                from_data (&vp.ns[i], &coll, &fs, &objects);
            else
                bson_init (&objects);
        } else {
            from_steps (&vp.ns[i], &fs);
        }
        if (fs.n) {
            bson_t line = BSON_INITIALIZER;
            build_line (&line, &vp.ns[i], &fs, action);
            each (&line, arg);
            bson_destroy (&line);
        }
        for (size_t k = 0; k < fs.n; k++)
            bson_destroy (&fs.f[k].types);
        bson_free (fs.f);
        bson_destroy (&objects);
    }
    rm_vplan_destroy (&vp);
}

typedef struct {
    rm_buf_t *b;
    bool canonical;
} printing_t;

static void
print_line (const bson_t *line, void *arg)
{
    printing_t *p = arg;
    rm_compile_put_line (p->b, line, p->canonical);
}

static void
array_line (const bson_t *line, void *arg)
{
    bson_t *out = arg;
    char key[16];
    const char *kp;
    bson_uint32_to_string (bson_count_keys (out), &kp, key, sizeof key);
    BSON_APPEND_DOCUMENT (out, kp, line);
}

void
rm_validators_commands (const rm_plan_t *plan, const bson_t *report, const char *action,
                        bson_t *out)
{
    each_line (plan, report, action, array_line, out);
}

char *
rm_validators_print (const rm_plan_t *plan, const bson_t *report, const char *action,
                     bool canonical)
{
    rm_buf_t b;
    printing_t p = {&b, canonical};
    rm_buf_init (&b);
    each_line (plan, report, action, print_line, &p);
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}
