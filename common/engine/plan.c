/* Reading and checking plans: the plan document, its steps array, each
 * step's operation (found in the table of steps, step_class.h) and the keys
 * every step takes, then the checks across steps. Each operation's own keys
 * are read by its parse, in its step_*.c (with the readers they share in
 * plan_parse.c). Every error names the step (1-based), its operation, the
 * key and the reason, so a plan can be fixed before any data is read. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"
#include "probe.h"
#include "plan_parse.h"

const char *
rm_step_kind_name (rm_step_kind_t k)
{
    return rm_step_classes[k].name;
}

/* "embed, extract, ...": the operations, as the table lists them. */
static void
operation_list (char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < RM_STEP_N_KINDS && n < cap; k++)
        n += (size_t) snprintf (buf + n, cap - n, "%s%s", k ? ", " : "", rm_step_classes[k].name);
}

/* The error for an operation no row names, with the closest one. */
static bool
unknown_operation (rm_plan_ctx_t *c, const char *op)
{
    char *names[RM_STEP_N_KINDS];
    const char *close[1];
    char list[256];

    for (int k = 0; k < RM_STEP_N_KINDS; k++)
        names[k] = (char *) rm_step_classes[k].name;
    operation_list (list, sizeof list);
    if (rm_closest_names (op, names, RM_STEP_N_KINDS, close, 1))
        return rm_plan_fail (c, NULL, "unknown operation (%s): did you mean \"%s\"?", list,
                             close[0]);
    return rm_plan_fail (c, NULL, "unknown operation (%s)", list);
}

static bool
check_keys (rm_plan_ctx_t *c, rm_step_kind_t kind, const bson_t *body)
{
    bson_iter_t it;
    char allowed[400] = "", near[120];
    const char *names[24];
    size_t n = 0;

    for (size_t i = 0; rm_step_classes[kind].keys[i]; i++) {
        const char *k = rm_step_classes[kind].keys[i] + (rm_step_classes[kind].keys[i][0] == '*');
        if (i)
            strncat (allowed, ", ", sizeof allowed - strlen (allowed) - 1);
        strncat (allowed, k, sizeof allowed - strlen (allowed) - 1);
        if (n < 22)
            names[n++] = k;
    }
    strncat (allowed, ", filter, allowMissing, why", sizeof allowed - strlen (allowed) - 1);
    names[n++] = "filter";
    names[n++] = "allowMissing";
    names[n++] = "why";
    bson_iter_init (&it, body);
    while (bson_iter_next (&it)) {
        bool known = !strcmp (bson_iter_key (&it), "allowMissing") ||
                     !strcmp (bson_iter_key (&it), "filter") ||
                     (!strcmp (bson_iter_key (&it), "why") && BSON_ITER_HOLDS_UTF8 (&it));
        for (size_t i = 0; rm_step_classes[kind].keys[i] && !known; i++)
            known = !strcmp (bson_iter_key (&it), rm_step_classes[kind].keys[i] + (rm_step_classes[kind].keys[i][0] == '*'));
        if (!known)
            return rm_plan_fail (c, bson_iter_key (&it), "unknown key (%s takes %s)%s",
                                 c->op, allowed,
                                 rm_plan_did_you_mean (bson_iter_key (&it), names, n, near,
                                                       sizeof near));
    }
    for (size_t i = 0; rm_step_classes[kind].keys[i]; i++)
        if (rm_step_classes[kind].keys[i][0] == '*' && !bson_has_field (body, rm_step_classes[kind].keys[i] + 1))
            return rm_plan_fail (c, rm_step_classes[kind].keys[i] + 1, "missing (required)");
    return true;
}

/* Skips a JSON string starting at its opening quote; returns the index
 * after the closing quote. */

static int
key_order (const void *x, const void *y)
{
    return strcmp (*(const char *const *) x, *(const char *const *) y);
}

/* A key given twice in the document at it or in any document inside it
 * (JSON allows it, libbson keeps both, and which one counts would be a
 * guess). Writes the dotted path of the first such key to path; sorts the
 * keys of each document, so a large "fields" costs n log n. */
static bool
has_duplicate_key (bson_iter_t *it, char *path, size_t path_len)
{
    const char **keys = NULL;
    size_t n = 0, cap = 0;
    bool dup = false;
    bson_iter_t walk = *it;

    while (!dup && bson_iter_next (&walk)) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            keys = bson_realloc (keys, cap * sizeof *keys);
        }
        keys[n++] = bson_iter_key (&walk);
        if (BSON_ITER_HOLDS_DOCUMENT (&walk) || BSON_ITER_HOLDS_ARRAY (&walk)) {
            bson_iter_t sub;
            char inner[256] = "";
            if (bson_iter_recurse (&walk, &sub) && has_duplicate_key (&sub, inner, sizeof inner)) {
                snprintf (path, path_len, "%s.%s", bson_iter_key (&walk), inner);
                dup = true;
            }
        }
    }
    if (!dup && n > 1) {
        qsort (keys, n, sizeof *keys, key_order);
        for (size_t i = 0; i + 1 < n && !dup; i++)
            if (strcmp (keys[i], keys[i + 1]) == 0) {
                snprintf (path, path_len, "%s", keys[i]);
                dup = true;
            }
    }
    bson_free (keys);
    return dup;
}

/* The end of the JSON object that starts the text (after leading blanks):
 * what follows it must be blank, or the plan file holds more than a plan. */
static size_t
object_end (const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return rm_json_value_end (s, i, len);
}

/* The N of libbson's "position N" in a parse error, or -1. */
static long
parse_position (const char *message)
{
    const char *p = strstr (message, "position ");
    return p ? strtol (p + 9, NULL, 10) : -1;
}

/* "line L column C" (from 1) of byte at in the text, as editors count. */
static void
line_column (const char *s, size_t at, char *out, size_t out_len)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at; i++) {
        if (s[i] == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char) s[i] & 0xC0) != 0x80) { /* characters, not UTF-8 bytes */
            col++;
        }
    }
    snprintf (out, out_len, "line %zu column %zu", line, col);
}

/* When the whole plan does not parse, finds which step holds the bad
 * literal: the steps array's elements are cut out by bracket matching and
 * parsed one by one. Returns the 1-based step, 0 if not found. */
static size_t
locate_bad_step (const char *s, size_t len, char *op, size_t op_len, size_t *at, bson_error_t *why)
{
    /* s need not end with a NUL (a plan given as bytes): search within len. */
    const char *key = memmem (s, len, "\"steps\"", 7);
    size_t i, step = 0;
    if (!key)
        return 0;
    i = (size_t) (key - s) + 7;
    while (i < len && s[i] != '[')
        i++;
    for (i++; i < len;) {
        size_t start;
        while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t' || s[i] == ','))
            i++;
        if (i >= len || s[i] == ']')
            return 0;
        start = i;
        i = rm_json_value_end (s, i, len);
        step++;
        {
            char *wrapped = bson_strdup_printf ("{\"s\": %.*s}", (int) (i - start), s + start);
            bson_t *b = bson_new_from_json ((const uint8_t *) wrapped, -1, why);
            bson_free (wrapped);
            if (b) {
                bson_destroy (b);
                continue;
            }
            /* The operation: the step's first key. */
            {
                const char *q = memchr (s + start, '"', i - start);
                const char *q2 = q ? memchr (q + 1, '"', (size_t) (s + i - q - 1)) : NULL;
                snprintf (op, op_len, "%.*s", q && q2 ? (int) (q2 - q - 1) : 1, q && q2 ? q + 1 : "?");
            }
            *at = start;
            return step;
        }
    }
    return 0;
}

/* ---- {"$type": ...} in a plan ---- */

#define TYPE_HIDDEN "\"$$typ\"" /* never a field, an operator or a variable */

static size_t
json_blank (const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

static size_t hide_value (char *s, size_t i, size_t len, int depth);

/* An object's "$type" keys, unless it also holds "$binary" (then it is
 * the legacy binary form, left to the reader). Returns the index after
 * it; malformed text is left for the reader to refuse. */
static size_t
hide_object (char *s, size_t i, size_t len, int depth)
{
    size_t at[16], n = 0;
    bool binary = false;

    for (i++;;) {
        size_t k;
        i = json_blank (s, i, len);
        if (i >= len || s[i] != '"')
            return i < len && s[i] == '}' ? i + 1 : len;
        k = i;
        i = rm_json_string_end (s, i, len);
        if (i - k == 7 && !memcmp (s + k, "\"$type\"", 7) && n < 16)
            at[n++] = k;
        if (i - k == 9 && !memcmp (s + k, "\"$binary\"", 9))
            binary = true;
        i = json_blank (s, i, len);
        if (i >= len || s[i] != ':')
            return len;
        i = hide_value (s, i + 1, len, depth + 1);
        i = json_blank (s, i, len);
        if (i < len && s[i] == ',') {
            i++;
            continue;
        }
        if (i < len && s[i] == '}') {
            for (size_t j = 0; !binary && j < n; j++)
                memcpy (s + at[j], TYPE_HIDDEN, 7);
            return i + 1;
        }
        return len;
    }
}

static size_t
hide_value (char *s, size_t i, size_t len, int depth)
{
    i = json_blank (s, i, len);
    if (i >= len || depth > 200)
        return len;
    if (s[i] == '{')
        return hide_object (s, i, len, depth);
    if (s[i] == '[') {
        for (i++;;) {
            i = json_blank (s, i, len);
            if (i < len && s[i] == ']')
                return i + 1;
            i = hide_value (s, i, len, depth + 1);
            i = json_blank (s, i, len);
            if (i < len && s[i] == ',')
                i++;
            else
                return i < len && s[i] == ']' ? i + 1 : len;
        }
    }
    return rm_json_value_end (s, i, len);
}

static char *
type_keys_hide (const char *json, size_t len)
{
    char *s = bson_malloc (len + 1);
    memcpy (s, json, len);
    s[len] = '\0';
    hide_value (s, 0, len, 0);
    return s;
}

/* The document again, each hidden key named "$type". */
static void
type_keys_restore (const bson_t *in, bson_t *out, int depth)
{
    bson_iter_t it;
    bson_iter_init (&it, in);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        bool doc = BSON_ITER_HOLDS_DOCUMENT (&it), arr = BSON_ITER_HOLDS_ARRAY (&it);
        if (!strcmp (k, "$$typ"))
            k = "$type";
        if ((doc || arr) && depth < 200) {
            uint32_t l;
            const uint8_t *d;
            bson_t sub, child;
            if (doc)
                bson_iter_document (&it, &l, &d);
            else
                bson_iter_array (&it, &l, &d);
            bson_init_static (&sub, d, l);
            if (doc)
                bson_append_document_begin (out, k, -1, &child);
            else
                bson_append_array_begin (out, k, -1, &child);
            type_keys_restore (&sub, &child, depth + 1);
            if (doc)
                bson_append_document_end (out, &child);
            else
                bson_append_array_end (out, &child);
        } else {
            bson_append_iter (out, k, -1, &it);
        }
    }
}

/* "filter" and "match": a query document, compiled (remodel/query.h) and
 * kept as written for compile. Every step takes filter; match only the
 * rows that list it (the joins: the joined side's documents). */
static bool
parse_query (rm_plan_ctx_t *c, bson_iter_t *it, rm_query_t **q, bson_t **doc)
{
    const char *key = bson_iter_key (it);
    bson_error_t qerr;
    uint32_t len;
    const uint8_t *data;

    if (!BSON_ITER_HOLDS_DOCUMENT (it))
        return rm_plan_fail (c, key, "must be a query document, like {\"status\": \"open\"}");
    *q = rm_query_parse (it, &qerr);
    if (!*q)
        return rm_plan_fail (c, key, "%s", qerr.message);
    bson_iter_document (it, &len, &data);
    *doc = bson_new_from_data (data, len);
    return true;
}

/* A plan saved as UTF-16 or UTF-32 (Windows editors and PowerShell's
 * redirection write UTF-16), by its byte order mark or, without one, by
 * where the zero bytes of its first ASCII characters fall (RFC 4627's
 * rule: JSON begins with two ASCII characters): what it is, else NULL. A
 * JSON text in UTF-8 holds no zero byte. */
static const char *
wide_encoding (const char *json, size_t len)
{
    const uint8_t *b = (const uint8_t *) json;
    if (len >= 4 && !memcmp (b, "\x00\x00\xFE\xFF", 4))
        return "UTF-32 (big-endian, with a byte order mark)";
    if (len >= 4 && !memcmp (b, "\xFF\xFE\x00\x00", 4))
        return "UTF-32 (little-endian, with a byte order mark)";
    if (len >= 2 && !memcmp (b, "\xFE\xFF", 2))
        return "UTF-16 (big-endian, with a byte order mark)";
    if (len >= 2 && !memcmp (b, "\xFF\xFE", 2))
        return "UTF-16 (little-endian, with a byte order mark)";
    if (len >= 4 && !b[0] && !b[1] && !b[2] && b[3])
        return "UTF-32 (big-endian)";
    if (len >= 4 && b[0] && !b[1] && !b[2] && !b[3])
        return "UTF-32 (little-endian)";
    if (len >= 2 && !b[0] && b[1])
        return "UTF-16 (big-endian)";
    if (len >= 2 && b[0] && !b[1])
        return "UTF-16 (little-endian)";
    return NULL;
}

bool
rm_plan_parse (rm_plan_t *plan, const char *json, size_t len, bson_error_t *err)
{
    const char *wide;
    bson_error_t jerr;
    bson_t *doc;
    bson_iter_t it, steps;
    bool ok = true, has_version = false, has_steps = false;

    memset (plan, 0, sizeof *plan);
    /* A UTF-8 byte order mark, which some editors write first: not JSON,
     * but no doubt what it means. */
    if (len >= 3 && !memcmp (json, "\xEF\xBB\xBF", 3)) {
        json += 3;
        len -= 3;
    }
    /* Else its zero bytes would be read as the end of the object. */
    if ((wide = wide_encoding (json, len))) {
        rm_error_set (err, RM_ERR_USAGE, "plan: the file is %s: save it as UTF-8", wide);
        return false;
    }
    {
        /* Said before parsing: libbson would only call the rest a bad token. */
        size_t end = object_end (json, len);
        for (size_t i = end; i < len; i++)
            if (json[i] != ' ' && json[i] != '\n' && json[i] != '\r' && json[i] != '\t') {
                char where[64];
                line_column (json, i, where, sizeof where);
                rm_error_set (err, RM_ERR_USAGE, "plan: %s: something follows the plan's closing "
                              "brace (a plan file holds one JSON object)", where);
                return false;
            }
    }
    {
        /* libbson reads {"$type": ...} as legacy binary ({"$binary": ...,
         * "$type": ...}); in a plan it is the query or expression
         * operator: hidden from the reader under a key of the same length
         * (error positions stay right), then put back. */
        char *text = memmem (json, len, "\"$type\"", 7) ? type_keys_hide (json, len) : NULL;
        doc = bson_new_from_json ((const uint8_t *) (text ? text : json), (ssize_t) len, &jerr);
        if (doc && text) {
            bson_t *back = bson_new ();
            type_keys_restore (doc, back, 0);
            bson_destroy (doc);
            doc = back;
        }
        bson_free (text);
    }
    if (!doc) {
        char op[64];
        bson_error_t why;
        size_t start = 0, step = locate_bad_step (json, len, op, sizeof op, &start, &why);
        char where[64];
        /* libbson says "position N" in the text it parsed: the step wrapped
         * in {"s": ...} (6 bytes before it), or the whole plan. */
        long pos = parse_position (step ? why.message : jerr.message);
        size_t at = step ? (pos >= 6 ? start + (size_t) pos - 6 : start) : (pos >= 0 ? (size_t) pos : len);
        line_column (json, at < len ? at : len, where, sizeof where);
        if (step)
            rm_error_set (err, RM_ERR_USAGE, "plan: step %zu (%s), %s: not valid Extended JSON: %s", step,
                          op, where, why.message);
        else
            rm_error_set (err, RM_ERR_USAGE, "plan: %s: not valid JSON: %s", where, jerr.message);
        return false;
    }
    bson_iter_init (&it, doc);
    {
        /* Duplicates at the top, or inside one step (named by its number). */
        bson_iter_t top = it, steps_it, one;
        char path[300] = "";
        size_t step = 0;
        if (ok && bson_iter_find (&top, "steps") && BSON_ITER_HOLDS_ARRAY (&top) &&
            bson_iter_recurse (&top, &steps_it)) {
            while (ok && bson_iter_next (&steps_it)) {
                step++;
                if ((BSON_ITER_HOLDS_DOCUMENT (&steps_it)) && bson_iter_recurse (&steps_it, &one) &&
                    has_duplicate_key (&one, path, sizeof path)) {
                    bson_iter_t op;
                    const char *name = bson_iter_recurse (&steps_it, &op) && bson_iter_next (&op)
                                           ? bson_iter_key (&op) : "?";
                    const char *dot = strchr (path, '.');
                    rm_error_set (err, RM_ERR_USAGE, "plan: step %zu (%s): \"%s\": given twice", step,
                                  name, dot ? dot + 1 : path);
                    ok = false;
                }
            }
        }
        top = it;
        if (ok && has_duplicate_key (&top, path, sizeof path) && !strchr (path, '.')) {
            rm_error_set (err, RM_ERR_USAGE, "plan: \"%s\": given twice", path);
            ok = false;
        }
    }
    while (ok && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (!strcmp (k, "remodel")) {
            has_version = true;
            /* Exactly 1: 1.5 is not the format's version 1. */
            if (!(BSON_ITER_HOLDS_INT32 (&it) || BSON_ITER_HOLDS_INT64 (&it) ||
                  BSON_ITER_HOLDS_DOUBLE (&it)) ||
                (BSON_ITER_HOLDS_DOUBLE (&it) ? bson_iter_double (&it) != 1.0
                                              : bson_iter_as_int64 (&it) != 1)) {
                rm_error_set (err, RM_ERR_USAGE, "plan: \"remodel\" must be 1 (the plan format's version)");
                ok = false;
            }
        } else if (!strcmp (k, "steps")) {
            has_steps = true;
            if (!BSON_ITER_HOLDS_ARRAY (&it)) {
                rm_error_set (err, RM_ERR_USAGE, "plan: \"steps\" must be an array");
                ok = false;
            } else {
                steps = it;
            }
        } else {
            static const char *const top[] = {"remodel", "steps"};
            char near[120];
            rm_error_set (err, RM_ERR_USAGE, "plan: unknown top-level key \"%s\" (a plan has "
                          "\"remodel\" and \"steps\")%s", k,
                          rm_plan_did_you_mean (k, top, 2, near, sizeof near));
            ok = false;
        }
    }
    if (ok && !has_version) {
        rm_error_set (err, RM_ERR_USAGE, "plan: missing \"remodel\": 1");
        ok = false;
    }
    if (ok && !has_steps) {
        rm_error_set (err, RM_ERR_USAGE, "plan: missing \"steps\"");
        ok = false;
    }
    if (ok) {
        bson_iter_t s;
        bson_iter_recurse (&steps, &s);
        while (ok && bson_iter_next (&s)) {
            rm_plan_ctx_t c = {err, plan->n + 1, "?"};
            bson_iter_t body;
            rm_step_t *st;
            uint32_t blen;
            const uint8_t *bdata;
            bson_t b;
            int kind = -1;

            plan->steps = bson_realloc (plan->steps, (plan->n + 1) * sizeof *plan->steps);
            st = &plan->steps[plan->n++];
            memset (st, 0, sizeof *st);
            st->index = c.index;
            if (!BSON_ITER_HOLDS_DOCUMENT (&s) || !bson_iter_recurse (&s, &body) ||
                !bson_iter_next (&body)) {
                ok = rm_plan_fail (&c, NULL, "a step is a document with one operation, like {\"embed\": {...}}");
                break;
            }
            for (int i = 0; i < RM_STEP_N_KINDS; i++)
                if (!strcmp (bson_iter_key (&body), rm_step_classes[i].name))
                    kind = i;
            if (kind < 0) {
                c.op = bson_iter_key (&body);
                ok = unknown_operation (&c, c.op);
                break;
            }
            st->kind = (rm_step_kind_t) kind;
            st->op = rm_step_classes[kind].name;
            c.op = st->op;
            if (!BSON_ITER_HOLDS_DOCUMENT (&body)) {
                ok = rm_plan_fail (&c, NULL, "the operation's value must be a document");
                break;
            }
            bson_iter_document (&body, &blen, &bdata);
            bson_init_static (&b, bdata, blen);
            if (bson_iter_next (&body)) {
                ok = rm_plan_fail (&c, bson_iter_key (&body), "a step holds exactly one operation");
                break;
            }
            ok = check_keys (&c, st->kind, &b);
            if (ok) {
                /* allowMissing is every step's: read here, hidden from the
                 * operation's own parser; so is "why", a comment (remodel
                 * analyze --plan-out says there why it chose the step). */
                bson_iter_t fields;
                bson_t rest;
                if (bson_iter_init_find (&fields, &b, "allowMissing"))
                    ok = rm_plan_get_bool (&c, &fields, &st->allow_missing);
                if (ok && bson_has_field (&b, "filter") && !rm_step_classes[st->kind].filters)
                    ok = rm_plan_fail (&c, "filter", "%s does not take a filter yet (docs/plans.md, "
                                       "\"Expressions and filters\", lists the steps that do)", c.op);
                if (ok && bson_iter_init_find (&fields, &b, "filter"))
                    ok = parse_query (&c, &fields, &st->filter, &st->filter_doc);
                if (ok && bson_iter_init_find (&fields, &b, "match"))
                    ok = parse_query (&c, &fields, &st->match, &st->match_doc);
                bson_init (&rest);
                bson_copy_to_excluding_noinit (&b, &rest, "allowMissing", "why", "filter", "match", NULL);
                bson_iter_init (&fields, &rest);
                if (ok)
                    ok = rm_step_classes[st->kind].parse (&c, &fields, st);
                bson_destroy (&rest);
            }
        }
        if (ok && plan->n == 0) {
            rm_error_set (err, RM_ERR_USAGE, "plan: \"steps\" is empty");
            ok = false;
        }
    }
    bson_destroy (doc);
    if (!ok)
        rm_plan_destroy (plan);
    return ok;
}

bool
rm_plan_load (rm_plan_t *plan, const char *path, bson_error_t *err)
{
    FILE *f = fopen (path, "rb");
    char *text;
    long len;
    bool ok;

    memset (plan, 0, sizeof *plan);
    if (!f) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open the plan: %s", path, strerror (errno));
        return false;
    }
    fseek (f, 0, SEEK_END);
    len = ftell (f);
    fseek (f, 0, SEEK_SET);
    if (len < 0 || len > (16 << 20)) {
        fclose (f);
        rm_error_set (err, RM_ERR_USAGE, "%s: not a plan (larger than 16 MiB)", path);
        return false;
    }
    text = bson_malloc ((size_t) len + 1);
    if (fread (text, 1, (size_t) len, f) != (size_t) len) {
        fclose (f);
        bson_free (text);
        rm_error_set (err, RM_ERR_IO, "%s: cannot read the plan", path);
        return false;
    }
    fclose (f);
    text[len] = '\0';
    ok = rm_plan_parse (plan, text, (size_t) len, err);
    if (!ok)
        rm_error_prefix (err, "%s", path);
    bson_free (text);
    return ok;
}

/* What the step's row says of its namespaces. */
static void
step_ns (const rm_step_t *s, rm_step_ns_t *ns)
{
    memset (ns, 0, sizeof *ns);
    rm_step_classes[s->kind].ns (s, ns);
}

/* One role of them (the member of rm_step_ns_t at `role`), and its keys if
 * asked, into the caller's arrays. */
static size_t
step_refs (const rm_step_t *s, size_t role, const rm_nsref_t **out, const char **keys,
           size_t max)
{
    rm_step_ns_t ns;
    const rm_step_refs_t *l = (const rm_step_refs_t *) ((const char *) &ns + role);
    size_t n;
    step_ns (s, &ns);
    n = l->n < max ? l->n : max;
    for (size_t i = 0; i < n; i++) {
        out[i] = l->at[i].ns;
        if (keys)
            keys[i] = l->at[i].key;
    }
    return n;
}

size_t
rm_step_inputs (const rm_step_t *s, const rm_nsref_t **out, size_t max)
{
    return step_refs (s, offsetof (rm_step_ns_t, reads), out, NULL, max);
}

size_t
rm_step_outputs (const rm_step_t *s, const rm_nsref_t **out, size_t max)
{
    return step_refs (s, offsetof (rm_step_ns_t, writes), out, NULL, max);
}

size_t
rm_step_creates (const rm_step_t *s, const rm_nsref_t **out, const char **keys, size_t max)
{
    return step_refs (s, offsetof (rm_step_ns_t, creates), out, keys, max);
}

size_t
rm_step_empties (const rm_step_t *s, const rm_nsref_t **out, size_t max)
{
    return step_refs (s, offsetof (rm_step_ns_t, empties), out, NULL, max);
}

/* A name list that tracks what exists as the steps run. */
typedef struct {
    char **names;
    size_t n;
} names_t;

static bool
names_has (const names_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp (l->names[i], name))
            return true;
    return false;
}

static void
names_remove (names_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp (l->names[i], name)) {
            bson_free (l->names[i]);
            l->names[i--] = l->names[--l->n];
        }
}

static void
names_clear (names_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        bson_free (l->names[i]);
    bson_free (l->names);
}

static void
names_add (names_t *l, const char *name)
{
    l->names = bson_realloc (l->names, (l->n + 1) * sizeof *l->names);
    l->names[l->n++] = bson_strdup (name);
}

bool
rm_plan_check_against (const rm_plan_t *plan, const rm_dump_info_t *info, bson_error_t *err)
{
    names_t have = {NULL, 0}, made = {NULL, 0}, emptied = {NULL, 0};
    bool ok = true;

    for (size_t i = 0; i < info->n_ns; i++) {
        char *name = bson_strdup_printf ("%s.%s", info->ns[i]->db, info->ns[i]->coll);
        names_add (&have, name);
        bson_free (name);
    }
    for (size_t i = 0; ok && i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        rm_step_ns_t ns;
        const rm_step_ref_t *r;
        rm_plan_ctx_t c = {err, s->index, s->op};
        step_ns (s, &ns);
        for (size_t j = 0; ok && j < ns.reads.n; j++) {
            r = &ns.reads.at[j];
            if (!names_has (&have, r->ns->text)) {
                const char *close[3];
                size_t n = rm_closest_names (r->ns->text, have.names, have.n, close, 3);
                ok = rm_plan_fail (&c, r->key,
                                   "namespace %s is not in the input (nor made by an earlier "
                                   "step)%s%s%s%s%s%s%s", r->ns->text,
                                   n ? "; did you mean \"" : "", n ? close[0] : "",
                                   n > 1 ? "\" or \"" : "", n > 1 ? close[1] : "",
                                   n > 2 ? "\" or \"" : "", n > 2 ? close[2] : "", n ? "\"?" : "");
            }
        }
        /* A step creates a namespace that does not exist, or one that is
         * empty: in the input (checked when the step runs), or emptied by
         * an earlier step (bucketize, unbucketize without keepSource). */
        for (size_t j = 0; ok && j < ns.creates.n; j++) {
            r = &ns.creates.at[j];
            if (names_has (&made, r->ns->text) && !names_has (&emptied, r->ns->text))
                ok = rm_plan_fail (&c, r->key,
                                   "namespace %s already exists (made by an earlier step)",
                                   r->ns->text);
            names_add (&have, r->ns->text);
            names_add (&made, r->ns->text);
            names_remove (&emptied, r->ns->text);
        }
        for (size_t j = 0; ok && j < ns.empties.n; j++)
            names_add (&emptied, ns.empties.at[j].ns->text);
    }
    names_clear (&made);
    names_clear (&emptied);
    for (size_t i = 0; i < have.n; i++)
        bson_free (have.names[i]);
    bson_free (have.names);
    return ok;
}

void
rm_plan_destroy (rm_plan_t *plan)
{
    /* A step that failed to parse has its kind (or none yet: zeroed, and
     * clearing zeroes frees nothing). */
    for (size_t i = 0; i < plan->n; i++) {
        rm_step_t *st = &plan->steps[i];
        rm_step_classes[st->kind].clear (st);
        rm_query_destroy (st->filter);
        rm_query_destroy (st->match);
        if (st->filter_doc)
            bson_destroy (st->filter_doc);
        if (st->match_doc)
            bson_destroy (st->match_doc);
    }
    bson_free (plan->steps);
    memset (plan, 0, sizeof *plan);
}
