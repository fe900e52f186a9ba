/* remodel compile --format pipeline: the compiled plan as one document,
 * a pipeline stage a line, its values in mongosh's syntax (compile_shell.c:
 * a pipeline pasted into mongosh runs, every type kept), or with
 * --canonical in canonical Extended JSON (strict JSON, for programs):
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

#include "compile_impl.h"
#include "remodel/value.h"

static void
put_json (rm_buf_t *b, const bson_t *doc)
{
    char *j = bson_as_canonical_extended_json (doc, NULL);
    rm_compile_put (b, j);
    bson_free (j);
}

static void
put_ns (rm_buf_t *b, const char *db, const char *coll)
{
    rm_compile_put (b, "{\"db\": ");
    rm_compile_put_str (b, db);
    rm_compile_put (b, ", \"coll\": ");
    rm_compile_put_str (b, coll);
    rm_compile_put (b, "}");
}

static void
put_pipeline (rm_buf_t *b, const bson_t *pipeline, const char *indent, bool canonical)
{
    bson_iter_t it;
    bool first = true;
    rm_compile_put (b, "[");
    bson_iter_init (&it, pipeline);
    while (bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t stage;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&stage, data, len);
        rm_compile_put (b, first ? "\n" : ",\n");
        rm_compile_put (b, indent);
        if (canonical)
            put_json (b, &stage);
        else
            rm_compile_put_shell (b, &stage);
        first = false;
    }
    rm_compile_put (b, "]");
}

void
rm_compile_put_pipeline (rm_buf_t *b, const bson_t *pipeline, const char *indent)
{
    put_pipeline (b, pipeline, indent, true);
}

char *
rm_compile_print_pipelines (const rm_names_t *nm, const rm_compile_plan_t *c, bool canonical)
{
    rm_buf_t b;
    char num[64];
    bool first_result = true;

    rm_buf_init (&b);
    rm_compile_put (&b, "{\"remodel\": 1, \"plan\": ");
    rm_compile_put_str (&b, nm->name);
    snprintf (num, sizeof num, ", \"serverVersion\": \"%d.%d\",\n \"steps\": [", c->version.major,
              c->version.minor);
    rm_compile_put (&b, num);
    for (size_t i = 0; i < c->n; i++) {
        const rm_compile_step_t *st = &c->steps[i];
        snprintf (num, sizeof num, "%s\n  {\"step\": %zu, \"op\": ", i ? "," : "", st->s->index);
        rm_compile_put (&b, num);
        rm_compile_put_str (&b, st->s->op);
        if (!st->n_passes) {
            rm_compile_put (&b, ", \"serverSide\": false, \"reason\": ");
            rm_compile_put_str (&b, st->reason);
            rm_compile_put (&b, "}");
            continue;
        }
        rm_compile_put (&b, ", \"serverSide\": true, \"passes\": [");
        for (size_t p = 0; p < st->n_passes; p++) {
            const rm_compile_pass_t *cp = &st->passes[p];
            snprintf (num, sizeof num, "%s\n   {\"pass\": %zu, \"ns\": ", p ? "," : "", cp->pass + 1);
            rm_compile_put (&b, num);
            rm_compile_put_str (&b, cp->drive->text);
            rm_compile_put (&b, ", \"aggregate\": ");
            put_ns (&b, cp->drive->db, cp->coll);
            rm_compile_put (&b, ",\n    \"pipeline\": ");
            put_pipeline (&b, &cp->pipeline, "     ", canonical);
            rm_compile_put (&b, "}");
        }
        rm_compile_put (&b, "]");
        if (st->n_notes) {
            rm_compile_put (&b, ",\n   \"notes\": [");
            for (size_t k = 0; k < st->n_notes; k++) {
                rm_compile_put (&b, k ? ",\n     " : "");
                rm_compile_put_str (&b, st->notes[k]);
            }
            rm_compile_put (&b, "]");
        }
        rm_compile_put (&b, "}");
    }
    rm_compile_put (&b, "],\n \"results\": {");
    /* Each namespace's last collection (names.c keeps every move). */
    for (size_t i = 0; i < nm->n_moved; i++) {
        bool later = false;
        rm_nsref_t ref;
        char *dot;
        for (size_t k = i + 1; k < nm->n_moved; k++)
            later |= !strcmp (nm->moved[k].ns, nm->moved[i].ns);
        if (later)
            continue;
        rm_compile_put (&b, first_result ? "" : ",\n   ");
        first_result = false;
        rm_compile_put_str (&b, nm->moved[i].ns);
        rm_compile_put (&b, ": ");
        ref.text = nm->moved[i].ns;
        dot = strchr (ref.text, '.');
        {
            char db[256];
            size_t n = dot ? (size_t) (dot - ref.text) : strlen (ref.text);
            snprintf (db, sizeof db, "%.*s", (int) n, ref.text);
            put_ns (&b, db, nm->moved[i].coll);
        }
    }
    rm_compile_put (&b, "}}\n");
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}
