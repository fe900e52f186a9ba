/* remodel/batchstep.h: one step of a plan over a batch held in memory, the
 * online companion's way into the engine. The results must be those of the
 * engine over the same documents (here, documents written out by hand from
 * the README's rules), a batch must forget the one before it, and a step
 * taken from a longer plan (its index not 1) must run as in that plan.
 * The step table behind them must have a full row for every kind. */
#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

#include "remodel/batchstep.h"
#include "step_class.h"
#include "test.h"

typedef struct {
    char text[4096];
    size_t len;
    int docs;
} sink_t;

/* Each result as "ns canonical-json\n", in the order given. */
static bool
collect (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sink_t *s = ctx;
    bson_t b;
    char *json;
    T_CHECK (bson_init_static (&b, doc, len));
    json = bson_as_relaxed_extended_json (&b, NULL);
    s->len += (size_t) snprintf (s->text + s->len, sizeof s->text - s->len, "%s %s\n", ns, json);
    s->docs++;
    bson_free (json);
    return true;
}

static void
add_json (rm_batchstep_t *b, size_t input, const char *json)
{
    bson_error_t err;
    bson_t *doc = bson_new_from_json ((const uint8_t *) json, -1, &err);
    T_CHECK (doc != NULL);
    if (doc) {
        rm_batchstep_add (b, input, bson_get_data (doc), doc->len);
        bson_destroy (doc);
    }
}

static const char embed_plan[] =
    "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\","
    " \"localField\": \"_id\", \"foreignField\": \"owner\", \"as\": \"tasks\","
    " \"project\": {\"owner\": 0}}}]}";

static void
test_embed_batch (void)
{
    rm_plan_t plan;
    bson_error_t err;
    rm_batchstep_t *b;
    sink_t s = {{0}, 0, 0};

    T_CHECK (rm_plan_parse (&plan, embed_plan, strlen (embed_plan), &err));
    b = rm_batchstep_new (&plan.steps[0], NULL);
    /* inputs: 0 from (tasks), 1 into (people) */
    add_json (b, 1, "{\"_id\": 1, \"name\": \"ann\"}");
    add_json (b, 1, "{\"_id\": 2, \"name\": \"bo\"}");
    add_json (b, 0, "{\"_id\": 11, \"owner\": 1, \"t\": \"b\"}");
    add_json (b, 0, "{\"_id\": 10, \"owner\": 1, \"t\": \"a\"}");
    add_json (b, 0, "{\"_id\": 12, \"owner\": 3, \"t\": \"c\"}");
    T_CHECK (rm_batchstep_run (b, collect, &s, &err));
    /* children by _id; an orphan stays in from; a parent without children
     * gets an empty array */
    T_CHECK_STR (s.text,
                 "crm.people { \"_id\" : 1, \"name\" : \"ann\", \"tasks\" : [ { \"_id\" : 10, \"t\" : \"a\" }, { \"_id\" : 11, \"t\" : \"b\" } ] }\n"
                 "crm.people { \"_id\" : 2, \"name\" : \"bo\", \"tasks\" : [  ] }\n"
                 "crm.tasks { \"_id\" : 12, \"owner\" : 3, \"t\" : \"c\" }\n");

    /* The next batch knows nothing of the first. */
    memset (&s, 0, sizeof s);
    add_json (b, 1, "{\"_id\": 3}");
    add_json (b, 0, "{\"_id\": 13, \"owner\": 3}");
    T_CHECK (rm_batchstep_run (b, collect, &s, &err));
    /* (no crm.tasks: every task was taken) */
    T_CHECK_STR (s.text, "crm.people { \"_id\" : 3, \"tasks\" : [ { \"_id\" : 13 } ] }\n");

    /* An empty batch gives nothing. */
    memset (&s, 0, sizeof s);
    T_CHECK (rm_batchstep_run (b, collect, &s, &err));
    T_CHECK (s.docs == 0);
    rm_batchstep_destroy (b);
    rm_plan_destroy (&plan);
}

static const char long_plan[] =
    "{\"remodel\": 1, \"steps\": ["
    "{\"set\": {\"in\": \"a.x\", \"fields\": {\"one\": 1}}},"
    "{\"extract\": {\"from\": \"a.x\", \"path\": \"items\", \"to\": \"a.items\", \"style\": \"parentRef\","
    " \"parentField\": \"x_id\"}},"
    "{\"rename\": {\"in\": \"a.x\", \"fields\": {\"one\": \"uno\"}}}]}";

static void
test_step_of_longer_plan (void)
{
    rm_plan_t plan;
    bson_error_t err;
    rm_batchstep_t *b;
    sink_t s = {{0}, 0, 0};

    T_CHECK (rm_plan_parse (&plan, long_plan, strlen (long_plan), &err));
    /* step 3 alone: its engine records are found by position (a rename
     * puts the new field at the end) */
    b = rm_batchstep_new (&plan.steps[2], NULL);
    add_json (b, 0, "{\"_id\": 1, \"one\": 1, \"z\": true}");
    T_CHECK (rm_batchstep_run (b, collect, &s, &err));
    T_CHECK_STR (s.text, "a.x { \"_id\" : 1, \"z\" : true, \"uno\" : 1 }\n");
    rm_batchstep_destroy (b);

    /* step 2 alone: parents and the children it makes */
    memset (&s, 0, sizeof s);
    b = rm_batchstep_new (&plan.steps[1], NULL);
    add_json (b, 0, "{\"_id\": 7, \"items\": [{\"_id\": 70}, {\"_id\": 71}]}");
    T_CHECK (rm_batchstep_run (b, collect, &s, &err));
    T_CHECK_STR (s.text, "a.items { \"_id\" : 70, \"x_id\" : 7 }\n"
                         "a.items { \"_id\" : 71, \"x_id\" : 7 }\n"
                         "a.x { \"_id\" : 7 }\n");
    rm_batchstep_destroy (b);
    rm_plan_destroy (&plan);
}

static void
test_error_names_document (void)
{
    static const char plan_text[] =
        "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"a.x\", \"fields\": {\"p\": "
        "{\"$switch\": {\"branches\": [{\"case\": {\"$eq\": [\"$p\", 4]}, \"then\": 1}]}}}}}]}";
    rm_plan_t plan;
    bson_error_t err;
    rm_batchstep_t *b;
    sink_t s = {{0}, 0, 0};

    T_CHECK (rm_plan_parse (&plan, plan_text, strlen (plan_text), &err));
    b = rm_batchstep_new (&plan.steps[0], NULL);
    add_json (b, 0, "{\"_id\": \"k\", \"p\": 5}");
    T_CHECK (!rm_batchstep_run (b, collect, &s, &err));
    T_CHECK (strstr (err.message, "step 1 (set)") != NULL);
    T_CHECK (strstr (err.message, "\"k\"") != NULL);
    T_CHECK (strstr (err.message, "field \"p\": $switch: no branch matched") != NULL);
    rm_batchstep_destroy (b);
    rm_plan_destroy (&plan);
}

/* Every kind has a full row in the step table: a row left out is zeroed
 * (only a missing last row fails step_table.c's _Static_assert). Each
 * kind's ns lists, for a step of that kind, something it reads and
 * something it writes. */
static void
test_step_table (void)
{
    for (int k = 0; k < RM_STEP_N_KINDS; k++) {
        const rm_step_class_t *row = &rm_step_classes[k];
        rm_step_t s;
        rm_step_ns_t ns;
        T_CHECK (row->name != NULL);
        T_CHECK (row->keys[0] != NULL);
        T_CHECK (row->parse != NULL);
        T_CHECK (row->clear != NULL);
        T_CHECK (row->ns != NULL);
        T_CHECK (row->run != NULL);
        if (!row->ns)
            continue;
        memset (&s, 0, sizeof s);
        memset (&ns, 0, sizeof ns);
        s.kind = (rm_step_kind_t) k;
        row->ns (&s, &ns);
        T_CHECK (ns.reads.n > 0 && ns.writes.n > 0);
    }
}

int
main (void)
{
    T_RUN (test_step_table); /* first: a zeroed row can crash the others */
    T_RUN (test_embed_batch);
    T_RUN (test_step_of_longer_plan);
    T_RUN (test_error_names_document);
    return t_done ();
}
