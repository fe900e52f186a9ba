/* Depth: rm_bson_depth counts levels as MongoDB's storage check does, no
 * step writes a document nesting deeper than MongoDB stores (the step,
 * the namespace and the _id named), and the walks that recurse over a
 * value (Extended JSON, the first difference) go through a value 100,000
 * levels deep without running out of stack. */
#include <bson/bson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/batchstep.h"
#include "remodel/bsondepth.h"
#include "remodel/docdiff.h"
#include "remodel/extjson.h"
#include "remodel/plan.h"
#include "test.h"

static void
le32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
    p[2] = (uint8_t) (v >> 16);
    p[3] = (uint8_t) (v >> 24);
}

/* {_id: 1, a: {a: ... {a: last}}}, its innermost field at level `levels`
 * (1: {_id: 1, a: last}); last an int32. bson_free it. */
static uint8_t *
deep_doc (size_t levels, int32_t last, size_t *len)
{
    /* head: 4 + the _id element (9); per level above the last: 0x03 "a\0"
     * and a length (7); the innermost 0x10 "a\0" int32 (7); per level
     * above the last its 0x00, and the top's */
    size_t n = 4 + 9 + (levels - 1) * 7 + 7 + (levels - 1) + 1, at = 0;
    uint8_t *d = bson_malloc (n);
    size_t inner = 7; /* the innermost element */
    le32 (d, (uint32_t) n);
    at = 4;
    memcpy (d + at, "\x10_id\0\x01\0\0\0", 9);
    at += 9;
    /* Containers from the top down: container k (1-based from the top)
     * holds levels - k elements' worth below it. */
    for (size_t k = 1; k < levels; k++) {
        size_t below = levels - k; /* levels under this container's holder */
        /* its length: 4 + (below - 1) * 7 + inner + (below - 1) + 1 */
        size_t clen = 4 + (below - 1) * 7 + inner + (below - 1) + 1;
        d[at] = 0x03;
        d[at + 1] = 'a';
        d[at + 2] = 0;
        le32 (d + at + 3, (uint32_t) clen);
        at += 7;
    }
    d[at] = 0x10;
    d[at + 1] = 'a';
    d[at + 2] = 0;
    le32 (d + at + 3, (uint32_t) last);
    at += 7;
    memset (d + at, 0, levels); /* each container's end, the top's */
    at += levels;
    BSON_ASSERT (at == n);
    *len = n;
    return d;
}

static int
depth_of_json (const char *json, int stop)
{
    bson_error_t err;
    bson_t *b = bson_new_from_json ((const uint8_t *) json, -1, &err);
    int d;
    if (!b)
        return -1;
    d = rm_bson_depth (bson_get_data (b), b->len, stop);
    bson_destroy (b);
    return d;
}

static void
test_depth_rule (void)
{
    size_t len;
    uint8_t *d;
    bson_t b;

    T_CHECK (depth_of_json ("{}", 100) == 0);
    T_CHECK (depth_of_json ("{\"a\": 1}", 100) == 1);
    /* an empty document or array adds no level (the server's
     * jstests/core/bson_depth_user_storage: {a: {}} at a limit of 1) */
    T_CHECK (depth_of_json ("{\"a\": {}}", 100) == 1);
    T_CHECK (depth_of_json ("{\"a\": [[]]}", 100) == 2);
    T_CHECK (depth_of_json ("{\"a\": {\"b\": 1}}", 100) == 2);
    T_CHECK (depth_of_json ("{\"a\": [1, {\"b\": [1]}], \"c\": 1}", 100) == 4);
    T_CHECK (depth_of_json ("{\"a\": {\"b\": {\"c\": 1}}}", 2) == 3);
    /* the deep_doc helper itself, by libbson's count */
    d = deep_doc (3, 7, &len);
    T_CHECK (bson_init_static (&b, d, len) && bson_validate (&b, 0, NULL));
    T_CHECK (rm_bson_depth (d, len, 100) == 3);
    bson_free (d);
    d = deep_doc (100, 7, &len);
    T_CHECK (rm_bson_depth (d, len, RM_BSON_MAX_NESTING) == 100);
    bson_free (d);
    d = deep_doc (101, 7, &len);
    T_CHECK (rm_bson_depth (d, len, RM_BSON_MAX_NESTING) == 101);
    T_CHECK (rm_bson_depth (d, len, RM_BSON_WALK_DEPTH) == 101);
    bson_free (d);
    d = deep_doc (100000, 7, &len);
    T_CHECK (rm_bson_depth (d, len, RM_BSON_WALK_DEPTH) == RM_BSON_WALK_DEPTH + 1);
    bson_free (d);
    /* The shortest document of 101 levels is RM_BSON_DEPTH_MIN_LEN (101)
     * bytes: empty keys, a null at the bottom. */
    {
        bson_t lv[101]; /* lv[0] the top, lv[i] the document at level i's field */
        bson_init (&lv[0]);
        for (int i = 1; i < 101; i++)
            T_CHECK (bson_append_document_begin (&lv[i - 1], "", 0, &lv[i]));
        T_CHECK (bson_append_null (&lv[100], "", 0));
        for (int i = 100; i >= 1; i--)
            T_CHECK (bson_append_document_end (&lv[i - 1], &lv[i]));
        T_CHECK (lv[0].len == RM_BSON_DEPTH_MIN_LEN (101));
        T_CHECK (rm_bson_depth (bson_get_data (&lv[0]), lv[0].len, 100) == 101);
        bson_destroy (&lv[0]);
    }
}

/* The Extended JSON of a document holds its marker of cut levels only
 * past RM_BSON_WALK_DEPTH levels below the top: a document of that depth
 * (as a dump may hold) is written whole. */
static void
test_extjson_bound (void)
{
    rm_buf_t out;
    size_t len;
    uint8_t *d;
    const char *cut;

    rm_buf_init (&out);
    d = deep_doc (RM_BSON_WALK_DEPTH + 1, 7, &len); /* 500 containers below the top */
    rm_extjson_doc (&out, d, len, RM_EXTJSON_RELAXED, false);
    rm_buf_append (&out, "", 1);
    T_CHECK (strstr ((char *) out.data, "...") == NULL);
    T_CHECK (strstr ((char *) out.data, "{\"a\":7}") != NULL);
    bson_free (d);

    rm_buf_reset (&out);
    d = deep_doc (100000, 7, &len);
    rm_extjson_doc (&out, d, len, RM_EXTJSON_CANONICAL, false);
    rm_buf_append (&out, "", 1);
    cut = strstr ((char *) out.data, "{...}");
    T_CHECK (cut != NULL);
    /* the top, then 500 levels of {"a": */
    T_CHECK (cut && (size_t) (cut - (char *) out.data) ==
                        strlen ("{\"_id\":{\"$numberInt\":\"1\"},\"a\":") +
                            RM_BSON_WALK_DEPTH * strlen ("{\"a\":"));
    rm_buf_reset (&out);
    rm_extjson_doc (&out, d, len, RM_EXTJSON_RELAXED, true); /* and indented */
    T_CHECK (out.len > 0);
    bson_free (d);
    rm_buf_destroy (&out);
}

static void
test_first_difference_bound (void)
{
    rm_buf_t path;
    size_t la, lb;
    uint8_t *a = deep_doc (100000, 1, &la), *b = deep_doc (100000, 2, &lb);

    rm_buf_init (&path);
    T_CHECK (rm_doc_first_difference (a, la, b, lb, &path));
    /* a.a.a...: said at the field of the container RM_BSON_WALK_DEPTH
     * levels down */
    T_CHECK (path.len == ((size_t) RM_BSON_WALK_DEPTH + 1) * 2 - 1);
    rm_buf_reset (&path);
    bson_free (b);
    b = deep_doc (50, 2, &lb);
    bson_free (a);
    a = deep_doc (50, 1, &la);
    T_CHECK (rm_doc_first_difference (a, la, b, lb, &path));
    T_CHECK (path.len == 50 * 2 - 1); /* the innermost a */
    bson_free (a);
    bson_free (b);
    rm_buf_destroy (&path);
}

typedef struct {
    int docs;
    int depth;
} sink_t;

static bool
collect (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sink_t *s = ctx;
    (void) ns;
    (void) err;
    s->docs++;
    s->depth = rm_bson_depth (doc, len, RM_BSON_WALK_DEPTH);
    return true;
}

/* set "p.p...p" (parts of them) to value over a batch of one document,
 * the plan's second step. */
static bool
set_path (size_t parts, const char *value, const uint8_t *doc, size_t len, sink_t *s,
          bson_error_t *err)
{
    char text[512], *p;
    rm_plan_t plan;
    rm_batchstep_t *b;
    bool ok;

    p = text + sprintf (text, "{\"remodel\": 1, \"steps\": [{\"version\": {\"in\": \"a.x\", "
                              "\"value\": 1}}, {\"set\": {\"in\": \"a.x\", \"fields\": {\"");
    for (size_t i = 0; i < parts; i++)
        p += sprintf (p, "%sp", i ? "." : "");
    sprintf (p, "\": %s}}}]}", value);
    if (!rm_plan_parse (&plan, text, strlen (text), err)) {
        fprintf (stderr, "  plan: %s\n", err->message);
        T_CHECK (false);
        return false;
    }
    b = rm_batchstep_new (&plan.steps[1], NULL);
    rm_batchstep_add (b, 0, doc, (uint32_t) len);
    memset (s, 0, sizeof *s);
    ok = rm_batchstep_run (b, collect, s, err);
    rm_batchstep_destroy (b);
    rm_plan_destroy (&plan);
    return ok;
}

/* The online companion's way into the steps (remodel/batchstep.h) refuses
 * what `remodel run` refuses. */
static void
test_step_refused (void)
{
    bson_error_t err;
    sink_t s;
    size_t len;
    uint8_t *d = deep_doc (70, 7, &len); /* a's value: 69 levels */

    /* 31 + 69 = 100 levels: written */
    T_CHECK (set_path (31, "\"$a\"", d, len, &s, &err));
    T_CHECK (s.docs == 1 && s.depth == 100);
    /* 32 + 69: refused, naming the step, the namespace and the document */
    T_CHECK (!set_path (32, "\"$a\"", d, len, &s, &err));
    T_CHECK (s.docs == 0);
    T_CHECK (err.code == RM_ERR_DATA);
    T_CHECK_STR (err.message, "step 2 (set): a.x: document { \"_id\" : 1 }: would nest 101 "
                              "levels deep (MongoDB stores at most 100 levels of nesting)");
    bson_free (d);

    /* A document that came 150 levels deep, which a server holds (its
     * own bound is higher), goes on: the step did not deepen it. */
    d = deep_doc (150, 7, &len);
    T_CHECK (set_path (1, "1", d, len, &s, &err));
    T_CHECK (s.docs == 1 && s.depth == 150);
    /* but no deeper */
    T_CHECK (!set_path (2, "\"$a\"", d, len, &s, &err));
    T_CHECK (strstr (err.message, "would nest 151 levels deep") != NULL);
    bson_free (d);
}

int
main (void)
{
    T_RUN (test_depth_rule);
    T_RUN (test_extjson_bound);
    T_RUN (test_first_difference_bound);
    T_RUN (test_step_refused);
    return t_done ();
}
