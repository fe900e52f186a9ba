/* remodel compile --format pipeline: the compiled plan as one JSON
 * document, values in canonical Extended JSON (so that an int32 stays an
 * int32 and a date a date), a pipeline stage a line:
 *
 *   {"remodel": 1, "plan": NAME, "serverVersion": "M.m",
 *    "steps": [{"step": N, "op": OP, "serverSide": true,
 *               "passes": [{"pass": P, "ns": NS, "aggregate": {"db", "coll"},
 *                           "pipeline": [...]}], "notes": [...]},
 *              {"step": N, "op": OP, "serverSide": false, "reason": WHY}],
 *    "results": {NS: {"db", "coll"}}}
 *
 * A pipeline is the whole step over its collection; run range by range,
 * each range's {$match: {_id: {$gt: A, $lte: B}}} goes first. */
#include <string.h>

#include "compile.h"
#include "remodel/value.h"

/* s as a JSON string (quoted, escaped), appended to b. */
static void
put_str (rm_buf_t *b, const char *s)
{
    bson_t d = BSON_INITIALIZER;
    char *j, *v;
    BSON_APPEND_UTF8 (&d, "s", s);
    j = bson_as_relaxed_extended_json (&d, NULL);
    /* { "s" : "..." } */
    v = strchr (j, ':') + 2;
    rm_buf_append (b, v, strlen (v) - 2);
    bson_free (j);
    bson_destroy (&d);
}

static void
put (rm_buf_t *b, const char *s)
{
    rm_buf_append (b, s, strlen (s));
}

static void
put_json (rm_buf_t *b, const bson_t *doc)
{
    char *j = bson_as_canonical_extended_json (doc, NULL);
    put (b, j);
    bson_free (j);
}

static void
put_ns (rm_buf_t *b, const char *db, const char *coll)
{
    put (b, "{\"db\": ");
    put_str (b, db);
    put (b, ", \"coll\": ");
    put_str (b, coll);
    put (b, "}");
}

static void
put_pipeline (rm_buf_t *b, const bson_t *pipeline, const char *indent)
{
    bson_iter_t it;
    bool first = true;
    put (b, "[");
    bson_iter_init (&it, pipeline);
    while (bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t stage;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&stage, data, len);
        put (b, first ? "\n" : ",\n");
        put (b, indent);
        put_json (b, &stage);
        first = false;
    }
    put (b, "]");
}

char *
compile_print_pipelines (online_t *on, const compile_plan_t *c)
{
    rm_buf_t b;
    char num[64];
    bool first_result = true;

    rm_buf_init (&b);
    put (&b, "{\"remodel\": 1, \"plan\": ");
    put_str (&b, on->name);
    snprintf (num, sizeof num, ", \"serverVersion\": \"%d.%d\",\n \"steps\": [", c->version.major,
              c->version.minor);
    put (&b, num);
    for (size_t i = 0; i < c->n; i++) {
        const compile_step_t *st = &c->steps[i];
        snprintf (num, sizeof num, "%s\n  {\"step\": %zu, \"op\": ", i ? "," : "", st->s->index);
        put (&b, num);
        put_str (&b, st->s->op);
        if (!st->n_passes) {
            put (&b, ", \"serverSide\": false, \"reason\": ");
            put_str (&b, st->reason);
            put (&b, "}");
            continue;
        }
        put (&b, ", \"serverSide\": true, \"passes\": [");
        for (size_t p = 0; p < st->n_passes; p++) {
            const compile_pass_t *cp = &st->passes[p];
            snprintf (num, sizeof num, "%s\n   {\"pass\": %zu, \"ns\": ", p ? "," : "", cp->pass + 1);
            put (&b, num);
            put_str (&b, cp->drive->text);
            put (&b, ", \"aggregate\": ");
            put_ns (&b, cp->drive->db, cp->coll);
            put (&b, ",\n    \"pipeline\": ");
            put_pipeline (&b, &cp->pipeline, "     ");
            put (&b, "}");
        }
        put (&b, "]");
        if (st->n_notes) {
            put (&b, ",\n   \"notes\": [");
            for (size_t k = 0; k < st->n_notes; k++) {
                put (&b, k ? ",\n     " : "");
                put_str (&b, st->notes[k]);
            }
            put (&b, "]");
        }
        put (&b, "}");
    }
    put (&b, "],\n \"results\": {");
    /* Each namespace's last collection (online_names.c keeps every move). */
    for (size_t i = 0; i < on->n_names; i++) {
        bool later = false;
        rm_nsref_t ref;
        char *dot;
        for (size_t k = i + 1; k < on->n_names; k++)
            later |= !strcmp (on->names[k].ns, on->names[i].ns);
        if (later)
            continue;
        put (&b, first_result ? "" : ",\n   ");
        first_result = false;
        put_str (&b, on->names[i].ns);
        put (&b, ": ");
        ref.text = on->names[i].ns;
        dot = strchr (ref.text, '.');
        {
            char db[256];
            size_t n = dot ? (size_t) (dot - ref.text) : strlen (ref.text);
            snprintf (db, sizeof db, "%.*s", (int) n, ref.text);
            put_ns (&b, db, on->names[i].coll);
        }
    }
    put (&b, "}}\n");
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}
