/* remodel/fuse.h: which consecutive steps run fused, as one online pass
 * with one result per namespace. Field steps on one namespace form a run;
 * a join, a step on another namespace or one that reads a partner ends
 * it. Under fused names (remodel/names.h) a run's steps all write its one
 * result, named after its last step, and the plan moves the namespace
 * once for it; the engine over a run (rm_batchstep_new_run) makes what
 * the steps make one after the other. */
#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

#include "remodel/batchstep.h"
#include "remodel/fuse.h"
#include "remodel/names.h"
#include "test.h"

static const char plan_text[] =
    "{\"remodel\": 1, \"steps\": ["
    "{\"set\": {\"in\": \"fz.items\", \"fields\": {\"flag\": true}}},"
    "{\"unset\": {\"in\": \"fz.items\", \"fields\": [\"old\"]}},"
    "{\"rename\": {\"in\": \"fz.items\", \"fields\": {\"name\": \"title\"}}},"
    "{\"version\": {\"in\": \"fz.items\", \"value\": 3}},"
    "{\"denormalize\": {\"in\": \"fz.items\", \"from\": \"fz.owners\", \"localField\": \"owner\","
    " \"fields\": {\"owner_name\": \"name\"}}},"
    "{\"set\": {\"in\": \"fz.items\", \"fields\": {\"b\": 1}}},"
    "{\"set\": {\"in\": \"fz.owners\", \"fields\": {\"c\": 1}}},"
    "{\"unset\": {\"in\": \"fz.owners\", \"fields\": [\"c\"]}},"
    "{\"embed\": {\"from\": \"fz.items\", \"into\": \"fz.owners\", \"localField\": \"_id\","
    " \"foreignField\": \"owner\", \"as\": \"items\"}},"
    "{\"set\": {\"in\": \"fz.owners\", \"fields\": {\"d\": 1}}}]}";

static void
test_runs (void)
{
    rm_plan_t plan;
    bson_error_t err;
    /* Per step: its run's first step and length. */
    static const size_t want_first[] = {0, 0, 0, 0, 4, 5, 6, 6, 8, 9};
    static const size_t want_len[] = {4, 4, 4, 4, 1, 1, 2, 2, 1, 1};

    T_CHECK (rm_plan_parse (&plan, plan_text, strlen (plan_text), &err));
    T_CHECK (plan.n == 10);
    for (size_t i = 0; i < plan.n && i < 10; i++) {
        size_t first = 99, n = rm_plan_run (&plan, i, &first);
        if (first != want_first[i] || n != want_len[i])
            fprintf (stderr, "step %zu: run from %zu of %zu, want from %zu of %zu\n", i + 1,
                     first, n, want_first[i], want_len[i]);
        T_CHECK (first == want_first[i] && n == want_len[i]);
    }
    /* The join reads a partner; the embed makes documents of another
     * namespace's: neither is one of a run. */
    T_CHECK (rm_step_fusable (&plan, &plan.steps[0]));
    T_CHECK (!rm_step_fusable (&plan, &plan.steps[4]));
    T_CHECK (!rm_step_fusable (&plan, &plan.steps[8]));
    rm_plan_destroy (&plan);
}

static void
test_names (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    bson_error_t err;
    char buf[400], want[400];
    const rm_nsref_t *in[4];

    T_CHECK (rm_plan_parse (&plan, plan_text, strlen (plan_text), &err));
    rm_names_identify (&nm, "/plans/f.json");
    rm_step_inputs (&plan.steps[1], in, 4);
    /* The compiler's names: each step its own. */
    rm_name_target (&nm, &plan.steps[1], in[0], buf, sizeof buf);
    snprintf (want, sizeof want, "items_remodel_%s_2", nm.id);
    T_CHECK_STR (buf, want);
    T_CHECK (rm_names_of_plan (&nm, &plan, &err));
    T_CHECK (nm.n_moved == 11); /* the embed's two targets */
    rm_names_label (&nm, &plan.steps[0], buf, sizeof buf);
    T_CHECK_STR (buf, "step 1 (set)");

    nm.fused = &plan;
    rm_name_target (&nm, &plan.steps[1], in[0], buf, sizeof buf);
    snprintf (want, sizeof want, "items_remodel_%s_4", nm.id);
    T_CHECK_STR (buf, want);
    /* A move per run, not per step: runs 1-4 and 7-8 move theirs once... */
    T_CHECK (rm_names_of_plan (&nm, &plan, &err));
    T_CHECK (nm.n_moved == 7);
    /* ...to the name of their last step, never to one of a step inside. */
    for (size_t i = 0; i < nm.n_moved; i++) {
        const char *end = strrchr (nm.moved[i].coll, '_');
        T_CHECK (end && strcmp (end, "_1") && strcmp (end, "_2") && strcmp (end, "_3") &&
                 strcmp (end, "_7"));
    }
    snprintf (want, sizeof want, "items_remodel_%s_4", nm.id);
    T_CHECK_STR (nm.moved[0].coll, want);
    snprintf (want, sizeof want, "owners_remodel_%s_8", nm.id);
    T_CHECK_STR (nm.moved[3].coll, want);
    T_CHECK (rm_names_run (&nm, 0) == 4 && rm_names_run (&nm, 2) == 0 && rm_names_run (&nm, 4) == 1);
    rm_names_label (&nm, &plan.steps[0], buf, sizeof buf);
    T_CHECK_STR (buf, "steps 1-4 (set, unset, rename, version)");
    rm_names_label (&nm, &plan.steps[6], buf, sizeof buf);
    T_CHECK_STR (buf, "steps 7-8 (set, unset)");
    rm_names_clear (&nm);
    rm_plan_destroy (&plan);
}

typedef struct {
    char text[2048];
    size_t len;
} sink_t;

static bool
collect (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sink_t *s = ctx;
    bson_t b;
    char *json;
    (void) err;
    T_CHECK (bson_init_static (&b, doc, len));
    json = bson_as_relaxed_extended_json (&b, NULL);
    s->len += (size_t) snprintf (s->text + s->len, sizeof s->text - s->len, "%s %s\n", ns, json);
    bson_free (json);
    return true;
}

/* The run's engine over a batch: the four steps' result at once. */
static void
test_batch_run (void)
{
    rm_plan_t plan;
    bson_error_t err;
    sink_t s = {{0}, 0};
    rm_batchstep_t *b;
    bson_t *doc;

    T_CHECK (rm_plan_parse (&plan, plan_text, strlen (plan_text), &err));
    b = rm_batchstep_new_run (&plan.steps[0], 4, NULL);
    doc = BCON_NEW ("_id", BCON_INT32 (1), "name", "n1", "old", BCON_INT32 (5), "qty", BCON_INT32 (2));
    rm_batchstep_add (b, 0, bson_get_data (doc), doc->len);
    T_CHECK (rm_batchstep_run (b, collect, &s, &err));
    T_CHECK_STR (s.text, "fz.items { \"_id\" : 1, \"qty\" : 2, \"flag\" : true, \"title\" : \"n1\", "
                         "\"schemaVersion\" : 3 }\n");
    bson_destroy (doc);
    rm_batchstep_destroy (b);
    rm_plan_destroy (&plan);
}

int
main (void)
{
    T_RUN (test_runs);
    T_RUN (test_names);
    T_RUN (test_batch_run);
    return t_done ();
}
