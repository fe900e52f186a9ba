/* remodel diff A B: two dumps compared namespace by namespace. Documents
 * are matched by _id (as $lookup compares values), through one external
 * sort per side so that memory stays within --memory whatever the sizes. */
#include <stdio.h>
#include <string.h>

#include "remodel/docdiff.h"
#include "remodel/extjson.h"
#include "remodel/sorter.h"
#include "tool.h"

static const char usage[] =
    "usage: remodel diff A B [--json] [--compare-uuids] [--memory SIZE] [--tmp DIR]\n"
    "\n"
    "Compares two dumps (any formats remodel reads) namespace by namespace:\n"
    "namespaces only in one, and for the others documents only in A, only in\n"
    "B and changed (matched by _id; the first field that differs is shown for\n"
    "up to 5 of each), the same documents in another order, and metadata\n"
    "(indexes, options: what differs is named, with each side's value; a\n"
    "collection UUID only with --compare-uuids). Exit status 0 when\n"
    "identical, 1 when they differ, 2 on a usage error or a dump that cannot\n"
    "be read.\n"
    "\n"
    "  --json          one JSON document instead of the table\n"
    "  --compare-uuids a collection UUID that differs is a difference too\n"
    "                  (each server gives its own: by default it is not)\n"
    "  --memory SIZE   budget for sorting the documents by _id (default 256M)\n"
    "  --tmp DIR       where sort runs go past it (default $TMPDIR or /tmp)\n"
    "  --quiet, -q     no progress meter\n"
    "\n"
    "example: remodel diff dumps/sample /tmp/roundtrip.archive\n";

#define EXAMPLES 5

enum { ONLY_A, ONLY_B, CHANGED };
static const char *const kind_names[] = {"only in A", "only in B", "changed"};
static const char *const kind_json[] = {"onlyInA", "onlyInB", "changed"};

typedef struct {
    char *name;
    bool in[2];              /* present in A, in B */
    char *meta[2];           /* metadata JSON of each side, copied */
    size_t meta_len[2];
    uint64_t docs[2], crc[2];
    uint64_t count[3];       /* ONLY_A, ONLY_B, CHANGED */
    char *example[3][EXAMPLES]; /* the _id (and ": first difference at PATH") */
    size_t n_example[3];
} entry_t;

typedef struct {
    entry_t *e;
    size_t n;
} table_t;

static entry_t *
entry_find (table_t *t, const char *name, size_t len)
{
    for (size_t i = 0; i < t->n; i++)
        if (strlen (t->e[i].name) == len && memcmp (t->e[i].name, name, len) == 0)
            return &t->e[i];
    return NULL;
}

static entry_t *
entry_get (table_t *t, const char *name)
{
    entry_t *e = entry_find (t, name, strlen (name));
    if (e)
        return e;
    t->e = bson_realloc (t->e, (t->n + 1) * sizeof *t->e);
    e = &t->e[t->n++];
    memset (e, 0, sizeof *e);
    e->name = bson_strdup (name);
    return e;
}

/* Reads one side whole into its sorter: key "db.coll\0<_id key>", value
 * the document. */
static bool
read_side (int side, const char *src, table_t *t, rm_sorter_t *sorter, bson_error_t *err)
{
    rm_reader_t *r = rm_reader_open (src, NULL, err);
    const rm_dump_info_t *info;
    rm_item_t item;
    rm_buf_t key;
    char name[512];
    int rc;
    bool ok;

    if (!r)
        return false;
    info = rm_reader_info (r);
    for (size_t i = 0; i < info->n_ns; i++) {
        entry_t *e = entry_get (t, rm_ns_name (info->ns[i], name, sizeof name));
        e->in[side] = true;
        e->meta_len[side] = info->ns[i]->metadata_len;
        e->meta[side] = bson_malloc (e->meta_len[side] + 1);
        if (e->meta_len[side])
            memcpy (e->meta[side], info->ns[i]->metadata, e->meta_len[side]);
        e->meta[side][e->meta_len[side]] = '\0';
    }
    rm_buf_init (&key);
    while ((rc = rm_reader_next (r, &item, err)) > 0) {
        entry_t *e;
        bson_t doc;
        bson_iter_t it;
        rm_ns_name (item.ns, name, sizeof name);
        e = entry_get (t, name);
        if (item.kind == RM_ITEM_NS_END) {
            e->crc[side] = item.ns->crc;
            continue;
        }
        e->docs[side]++;
        rm_buf_reset (&key);
        rm_buf_append (&key, name, strlen (name) + 1);
        bson_init_static (&doc, item.doc, item.len); /* the reader validated it */
        rm_key_append (&key, bson_iter_init_find (&it, &doc, "_id") ? &it : NULL);
        if (!rm_sorter_add (sorter, key.data, key.len, item.doc, item.len, err)) {
            rc = -1;
            break;
        }
    }
    rm_buf_destroy (&key);
    ok = rc == 0;
    if (!ok)
        rm_error_prefix (err, "%s", side == 0 ? "A" : "B");
    rm_reader_close (r);
    return ok;
}

static void
add_example (entry_t *e, int kind, const uint8_t *doc, size_t len, const rm_buf_t *path)
{
    rm_buf_t text;
    bson_t b;
    bson_iter_t it;

    e->count[kind]++;
    if (e->n_example[kind] == EXAMPLES)
        return;
    rm_buf_init (&text);
    if (bson_init_static (&b, doc, len) && bson_iter_init_find (&it, &b, "_id"))
        rm_extjson_value (&text, &it, RM_EXTJSON_RELAXED);
    else
        rm_buf_append (&text, "(no _id)", 8);
    if (path) {
        rm_buf_append (&text, ": first difference at ", 22);
        rm_buf_append (&text, path->data, path->len);
    }
    rm_buf_append (&text, "", 1);
    e->example[kind][e->n_example[kind]++] = (char *) text.data;
}

/* Keys compare as the sorter orders them: bytes, then the shorter first. */
static int
key_cmp (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = memcmp (a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static bool
merge (table_t *t, rm_sorter_t *sa, rm_sorter_t *sb, bson_error_t *err)
{
    const uint8_t *ka = NULL, *kb = NULL, *va = NULL, *vb = NULL;
    size_t kal = 0, kbl = 0, val = 0, vbl = 0;
    int ra = rm_sorter_next (sa, &ka, &kal, &va, &val, err);
    int rb = ra < 0 ? -1 : rm_sorter_next (sb, &kb, &kbl, &vb, &vbl, err);
    rm_buf_t path;

    rm_buf_init (&path);
    while (ra > 0 || rb > 0) {
        int c = ra <= 0 ? 1 : rb <= 0 ? -1 : key_cmp (ka, kal, kb, kbl);
        const uint8_t *k = c <= 0 ? ka : kb;
        entry_t *e = entry_find (t, (const char *) k, strlen ((const char *) k));
        if (c == 0) {
            rm_buf_reset (&path);
            if (rm_doc_first_difference (va, val, vb, vbl, &path))
                add_example (e, CHANGED, va, val, &path);
        } else {
            add_example (e, c < 0 ? ONLY_A : ONLY_B, c < 0 ? va : vb, c < 0 ? val : vbl, NULL);
        }
        if (c <= 0 && (ra = rm_sorter_next (sa, &ka, &kal, &va, &val, err)) < 0)
            break;
        if (c >= 0 && (rb = rm_sorter_next (sb, &kb, &kbl, &vb, &vbl, err)) < 0)
            break;
    }
    rm_buf_destroy (&path);
    return ra >= 0 && rb >= 0;
}

static const char *
status_of (const entry_t *e, const char *meta)
{
    if (!e->in[0])
        return "only in B";
    if (!e->in[1])
        return "only in A";
    if (e->count[ONLY_A] || e->count[ONLY_B] || e->count[CHANGED])
        return "differs";
    if (e->crc[0] != e->crc[1])
        return "reordered"; /* the same documents, another order */
    return meta ? "metadata" : "identical";
}

static void
print_table (const table_t *t, char *const *meta)
{
    printf ("%-40s %-10s %10s %10s %9s %9s %9s  %s\n", "NAMESPACE", "STATUS", "A", "B",
            "ONLY A", "ONLY B", "CHANGED", "METADATA");
    for (size_t i = 0; i < t->n; i++) {
        const entry_t *e = &t->e[i];
        char a[24] = "-", b[24] = "-";
        if (e->in[0])
            snprintf (a, sizeof a, "%llu", (unsigned long long) e->docs[0]);
        if (e->in[1])
            snprintf (b, sizeof b, "%llu", (unsigned long long) e->docs[1]);
        tool_put_cell (stdout, e->name, 40);
        printf (" %-10s %10s %10s %9llu %9llu %9llu  ", status_of (e, meta[i]), a, b,
                (unsigned long long) e->count[ONLY_A], (unsigned long long) e->count[ONLY_B],
                (unsigned long long) e->count[CHANGED]);
        fputs (!e->in[0] || !e->in[1] ? "-" : meta[i] ? "differs" : "same", stdout);
        putchar ('\n');
    }
    for (size_t i = 0; i < t->n; i++) {
        const entry_t *e = &t->e[i];
        for (int k = 0; k < 3; k++)
            for (size_t j = 0; j < e->n_example[k]; j++) {
                tool_put_cell (stdout, e->name, 0);
                printf (": %s: _id ", kind_names[k]);
                tool_put_cell (stdout, e->example[k][j], 0);
                putchar ('\n');
            }
        if (meta[i]) {
            tool_put_cell (stdout, e->name, 0);
            fputs (": metadata: ", stdout);
            tool_put_cell (stdout, meta[i], 0);
            putchar ('\n');
        }
    }
}

static void
print_json (const table_t *t, char *const *meta, const char *a, const char *b, bool same)
{
    bson_t doc, arr;
    char *json;

    bson_init (&doc);
    BSON_APPEND_UTF8 (&doc, "a", a);
    BSON_APPEND_UTF8 (&doc, "b", b);
    BSON_APPEND_BOOL (&doc, "identical", same);
    BSON_APPEND_ARRAY_BEGIN (&doc, "namespaces", &arr);
    for (size_t i = 0; i < t->n; i++) {
        const entry_t *e = &t->e[i];
        bson_t d, ex;
        char key[16];
        const char *k;
        bson_uint32_to_string ((uint32_t) i, &k, key, sizeof key);
        bson_append_document_begin (&arr, k, -1, &d);
        BSON_APPEND_UTF8 (&d, "ns", e->name);
        BSON_APPEND_UTF8 (&d, "status", status_of (e, meta[i]));
        if (e->in[0])
            BSON_APPEND_INT64 (&d, "documentsInA", (int64_t) e->docs[0]);
        if (e->in[1])
            BSON_APPEND_INT64 (&d, "documentsInB", (int64_t) e->docs[1]);
        for (int kind = 0; kind < 3; kind++)
            BSON_APPEND_INT64 (&d, kind_json[kind], (int64_t) e->count[kind]);
        if (meta[i])
            BSON_APPEND_UTF8 (&d, "metadata", meta[i]);
        BSON_APPEND_ARRAY_BEGIN (&d, "examples", &ex);
        for (int kind = 0, n = 0; kind < 3; kind++)
            for (size_t j = 0; j < e->n_example[kind]; j++, n++) {
                char line[600];
                bson_uint32_to_string ((uint32_t) n, &k, key, sizeof key);
                snprintf (line, sizeof line, "%s: _id %s", kind_names[kind], e->example[kind][j]);
                bson_append_utf8 (&ex, k, -1, line, -1);
            }
        bson_append_array_end (&d, &ex);
        bson_append_document_end (&arr, &d);
    }
    bson_append_array_end (&doc, &arr);
    json = bson_as_relaxed_extended_json (&doc, NULL);
    printf ("%s\n", json);
    bson_free (json);
    bson_destroy (&doc);
}

static int
by_name (const void *x, const void *y)
{
    return strcmp (((const entry_t *) x)->name, ((const entry_t *) y)->name);
}

int
cmd_diff (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = usage, .cmd = RM_CMD_DIFF, .min_pos = 2, .max_pos = 2};
    tool_opts_t o;
    char *pos[2], **meta = NULL;
    int n, status = 2;
    bool help, same = true;
    bson_error_t err;
    table_t t = {NULL, 0};
    rm_sorter_t *sa = NULL, *sb = NULL;
    size_t memory;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    memory = o.memory ? o.memory : (size_t) 256 << 20;
    sa = rm_sorter_new (memory / 2, o.tmpdir, NULL, NULL);
    sb = rm_sorter_new (memory / 2, o.tmpdir, NULL, NULL);
    if (!read_side (0, pos[0], &t, sa, &err) || !read_side (1, pos[1], &t, sb, &err) ||
        !rm_sorter_finish (sa, &err) || !rm_sorter_finish (sb, &err))
        goto fail;
    qsort (t.e, t.n, sizeof *t.e, by_name);
    if (!merge (&t, sa, sb, &err))
        goto fail;
    meta = bson_malloc0 ((t.n + 1) * sizeof *meta);
    for (size_t i = 0; i < t.n; i++) {
        if (t.e[i].in[0] && t.e[i].in[1])
            meta[i] = tool_metadata_difference (t.e[i].meta[0], t.e[i].meta_len[0], t.e[i].meta[1],
                                                t.e[i].meta_len[1], o.compare_uuids);
        if (strcmp (status_of (&t.e[i], meta[i]), "identical") != 0)
            same = false;
    }
    if (o.json)
        print_json (&t, meta, pos[0], pos[1], same);
    else
        print_table (&t, meta);
    if (!same && !o.json)
        tool_note (o.quiet, "%s and %s differ", pos[0], pos[1]);
    status = same ? 0 : 1;
    goto done;
fail:
    tool_error (&err);
done:
    for (size_t i = 0; i < t.n; i++) {
        bson_free (t.e[i].meta[0]);
        bson_free (t.e[i].meta[1]);
        for (int k = 0; k < 3; k++)
            for (size_t j = 0; j < t.e[i].n_example[k]; j++)
                bson_free (t.e[i].example[k][j]);
        bson_free (t.e[i].name);
        if (meta)
            bson_free (meta[i]);
    }
    bson_free (meta);
    bson_free (t.e);
    rm_sorter_destroy (sa);
    rm_sorter_destroy (sb);
    return status;
}
