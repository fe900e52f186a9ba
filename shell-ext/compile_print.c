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
 * each range's {$match: {_id: {$in: [its _ids]}}} goes first. */
#include <string.h>

#include "compile.h"
#include "remodel/value.h"

void
compile_put_str (rm_buf_t *b, const char *s)
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

void
compile_put (rm_buf_t *b, const char *s)
{
    rm_buf_append (b, s, strlen (s));
}

static void
put_json (rm_buf_t *b, const bson_t *doc)
{
    char *j = bson_as_canonical_extended_json (doc, NULL);
    compile_put (b, j);
    bson_free (j);
}

static void
put_ns (rm_buf_t *b, const char *db, const char *coll)
{
    compile_put (b, "{\"db\": ");
    compile_put_str (b, db);
    compile_put (b, ", \"coll\": ");
    compile_put_str (b, coll);
    compile_put (b, "}");
}

void
compile_put_pipeline (rm_buf_t *b, const bson_t *pipeline, const char *indent)
{
    bson_iter_t it;
    bool first = true;
    compile_put (b, "[");
    bson_iter_init (&it, pipeline);
    while (bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t stage;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&stage, data, len);
        compile_put (b, first ? "\n" : ",\n");
        compile_put (b, indent);
        put_json (b, &stage);
        first = false;
    }
    compile_put (b, "]");
}

char *
compile_print_pipelines (online_t *on, const compile_plan_t *c)
{
    rm_buf_t b;
    char num[64];
    bool first_result = true;

    rm_buf_init (&b);
    compile_put (&b, "{\"remodel\": 1, \"plan\": ");
    compile_put_str (&b, on->name);
    snprintf (num, sizeof num, ", \"serverVersion\": \"%d.%d\",\n \"steps\": [", c->version.major,
              c->version.minor);
    compile_put (&b, num);
    for (size_t i = 0; i < c->n; i++) {
        const compile_step_t *st = &c->steps[i];
        snprintf (num, sizeof num, "%s\n  {\"step\": %zu, \"op\": ", i ? "," : "", st->s->index);
        compile_put (&b, num);
        compile_put_str (&b, st->s->op);
        if (!st->n_passes) {
            compile_put (&b, ", \"serverSide\": false, \"reason\": ");
            compile_put_str (&b, st->reason);
            compile_put (&b, "}");
            continue;
        }
        compile_put (&b, ", \"serverSide\": true, \"passes\": [");
        for (size_t p = 0; p < st->n_passes; p++) {
            const compile_pass_t *cp = &st->passes[p];
            snprintf (num, sizeof num, "%s\n   {\"pass\": %zu, \"ns\": ", p ? "," : "", cp->pass + 1);
            compile_put (&b, num);
            compile_put_str (&b, cp->drive->text);
            compile_put (&b, ", \"aggregate\": ");
            put_ns (&b, cp->drive->db, cp->coll);
            compile_put (&b, ",\n    \"pipeline\": ");
            compile_put_pipeline (&b, &cp->pipeline, "     ");
            compile_put (&b, "}");
        }
        compile_put (&b, "]");
        if (st->n_notes) {
            compile_put (&b, ",\n   \"notes\": [");
            for (size_t k = 0; k < st->n_notes; k++) {
                compile_put (&b, k ? ",\n     " : "");
                compile_put_str (&b, st->notes[k]);
            }
            compile_put (&b, "]");
        }
        compile_put (&b, "}");
    }
    compile_put (&b, "],\n \"results\": {");
    /* Each namespace's last collection (online_names.c keeps every move). */
    for (size_t i = 0; i < on->n_names; i++) {
        bool later = false;
        rm_nsref_t ref;
        char *dot;
        for (size_t k = i + 1; k < on->n_names; k++)
            later |= !strcmp (on->names[k].ns, on->names[i].ns);
        if (later)
            continue;
        compile_put (&b, first_result ? "" : ",\n   ");
        first_result = false;
        compile_put_str (&b, on->names[i].ns);
        compile_put (&b, ": ");
        ref.text = on->names[i].ns;
        dot = strchr (ref.text, '.');
        {
            char db[256];
            size_t n = dot ? (size_t) (dot - ref.text) : strlen (ref.text);
            snprintf (db, sizeof db, "%.*s", (int) n, ref.text);
            put_ns (&b, db, on->names[i].coll);
        }
    }
    compile_put (&b, "}}\n");
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}
