/* The inverse rows of denormalize and summarize (rm_step_inverse,
 * common/engine/step_inverse.c): each removes what its step wrote, an
 * unset of `in` (`into`), whatever filter, match or onMissing the step
 * has; the condition that makes it exact (the fields absent before) is
 * the online run's to record. Then those of copy, move and delete. Each
 * inverse is checked as a plan the parser takes, run over a batch; last,
 * bucketize's unbucketize, as a plan the parser takes. */
#include <string.h>

#include "remodel/batchstep.h"
#include "remodel/plan.h"
#include "test.h"

/* The inverse plan of the only step of plan json, as Extended JSON, and
 * parsed into inv (NULL: it has none, or it is not a plan). */
static char *
inverse_of (const char *json, rm_plan_t *inv)
{
    rm_plan_t plan;
    rm_step_inverse_t iv;
    bson_error_t err;
    char *text = NULL;
    if (!rm_plan_parse (&plan, json, strlen (json), &err)) {
        fprintf (stderr, "  %s\n", err.message);
        return NULL;
    }
    rm_step_inverse (&plan.steps[0], &iv);
    if (iv.plan) {
        text = bson_as_canonical_extended_json (iv.plan, NULL);
        if (!rm_plan_parse (inv, text, strlen (text), &err)) {
            fprintf (stderr, "  %s\n", err.message);
            bson_free (text);
            text = NULL;
        }
        bson_destroy (iv.plan);
    }
    rm_plan_destroy (&plan);
    return text;
}

static bool
keep (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bson_t d;
    (void) ns;
    (void) err;
    if (bson_init_static (&d, doc, len)) {
        char *j = bson_as_relaxed_extended_json (&d, NULL);
        strncat (ctx, j, 500);
        bson_free (j);
    }
    return true;
}

/* The inverse's step over one document (its JSON), as JSON. */
static void
run_over (rm_plan_t *inv, const char *doc, char *out)
{
    bson_t *d = bson_new_from_json ((const uint8_t *) doc, -1, NULL);
    rm_batchstep_t *b = rm_batchstep_new (&inv->steps[0], NULL);
    bson_error_t err;
    out[0] = '\0';
    rm_batchstep_add (b, 0, bson_get_data (d), d->len);
    T_CHECK (rm_batchstep_run (b, keep, out, &err));
    rm_batchstep_destroy (b);
    bson_destroy (d);
}

static void
test_denormalize_removes_its_copies (void)
{
    rm_plan_t inv;
    char out[600];
    char *text = inverse_of (
        "{\"remodel\": 1, \"steps\": [{\"denormalize\": {\"in\": \"s.orders\", \"from\": "
        "\"s.customers\", \"localField\": \"cust\", \"fields\": {\"cust_name\": \"name\", "
        "\"tier\": {\"$toUpper\": \"$tier\"}}, \"onMissing\": \"null\", \"filter\": "
        "{\"qty\": {\"$gt\": 1}}}}]}",
        &inv);
    T_CHECK (text != NULL);
    if (!text)
        return;
    T_CHECK_STR (text, "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unset\" : "
                       "{ \"in\" : \"s.orders\", \"fields\" : [ \"cust_name\", \"tier\" ] } } ] }");
    run_over (&inv, "{\"_id\": 1, \"cust\": 2, \"cust_name\": \"a\", \"qty\": 3, \"tier\": null}", out);
    T_CHECK_STR (out, "{ \"_id\" : 1, \"cust\" : 2, \"qty\" : 3 }");
    bson_free (text);
    rm_plan_destroy (&inv);
}

static void
test_summarize_removes_its_results (void)
{
    rm_plan_t inv;
    char out[600];
    char *text = inverse_of (
        "{\"remodel\": 1, \"steps\": [{\"summarize\": {\"into\": \"s.customers\", \"from\": "
        "\"s.orders\", \"localField\": \"_id\", \"foreignField\": \"cust\", \"fields\": "
        "{\"total\": {\"$sum\": \"$qty\"}, \"n\": {\"$sum\": 1}}}}]}",
        &inv);
    T_CHECK (text != NULL);
    if (!text)
        return;
    T_CHECK_STR (text, "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unset\" : "
                       "{ \"in\" : \"s.customers\", \"fields\" : [ \"total\", \"n\" ] } } ] }");
    run_over (&inv, "{\"_id\": 1, \"total\": 5, \"name\": \"x\", \"n\": 2}", out);
    T_CHECK_STR (out, "{ \"_id\" : 1, \"name\" : \"x\" }");
    bson_free (text);
    rm_plan_destroy (&inv);
    /* With "as", the document that holds them. */
    text = inverse_of ("{\"remodel\": 1, \"steps\": [{\"summarize\": {\"into\": \"s.customers\", "
                       "\"from\": \"s.orders\", \"localField\": \"_id\", \"foreignField\": "
                       "\"cust\", \"as\": \"stats\", \"fields\": {\"total\": {\"$sum\": "
                       "\"$qty\"}}}}]}",
                       &inv);
    T_CHECK (text != NULL);
    if (!text)
        return;
    T_CHECK_STR (text, "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unset\" : "
                       "{ \"in\" : \"s.customers\", \"fields\" : [ \"stats\" ] } } ] }");
    bson_free (text);
    rm_plan_destroy (&inv);
}

/* The reason step json has no inverse (NULL: it has one). */
static const char *
no_inverse (const char *json)
{
    rm_plan_t plan;
    rm_step_inverse_t iv;
    bson_error_t err;
    if (!rm_plan_parse (&plan, json, strlen (json), &err))
        return err.message[0] ? "not a plan" : NULL;
    rm_step_inverse (&plan.steps[0], &iv);
    if (iv.plan)
        bson_destroy (iv.plan);
    rm_plan_destroy (&plan);
    return iv.why;
}

/* copy, move, delete (step_copy_plan.c): a copy's inverse deletes every
 * document of `to`; a whole move's is the move back, which gives each
 * document again as it was; a filtered move and a delete have none. */
static void
test_copy_move_delete (void)
{
    rm_plan_t inv;
    char out[600];
    const char *why;
    char *text = inverse_of ("{\"remodel\": 1, \"steps\": [{\"copy\": {\"from\": \"a.f\", \"to\": "
                             "\"a.late\", \"filter\": {\"d\": {\"$gt\": 15}}}}]}",
                             &inv);
    T_CHECK (text != NULL);
    if (!text)
        return;
    T_CHECK_STR (text, "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"delete\" : "
                       "{ \"from\" : \"a.late\", \"filter\" : {  } } } ] }");
    run_over (&inv, "{\"_id\": 1, \"d\": 20}", out);
    T_CHECK_STR (out, "");
    bson_free (text);
    rm_plan_destroy (&inv);

    text = inverse_of ("{\"remodel\": 1, \"steps\": [{\"move\": {\"from\": \"a.f\", \"to\": "
                       "\"b.f\"}}]}",
                       &inv);
    T_CHECK (text != NULL);
    if (!text)
        return;
    T_CHECK_STR (text, "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"move\" : "
                       "{ \"from\" : \"b.f\", \"to\" : \"a.f\" } } ] }");
    run_over (&inv, "{\"_id\": 1, \"d\": 20, \"x\": [1, {\"y\": null}]}", out);
    T_CHECK_STR (out, "{ \"_id\" : 1, \"d\" : 20, \"x\" : [ 1, { \"y\" : null } ] }");
    bson_free (text);
    rm_plan_destroy (&inv);

    why = no_inverse ("{\"remodel\": 1, \"steps\": [{\"move\": {\"from\": \"a.f\", \"to\": "
                      "\"b.f\", \"filter\": {\"d\": 1}}}]}");
    T_CHECK (why && strstr (why, "a move with a filter has no inverse"));
    why = no_inverse ("{\"remodel\": 1, \"steps\": [{\"move\": {\"from\": \"a.f\", \"to\": "
                      "\"b.f\", \"project\": {\"d\": 1}}}]}");
    T_CHECK (why && strstr (why, "fields and project change the documents moved"));
    why = no_inverse ("{\"remodel\": 1, \"steps\": [{\"delete\": {\"from\": \"a.f\", "
                      "\"filter\": {}}}]}");
    T_CHECK (why && strstr (why, "a delete drops its documents"));
}

/* bucketize (step_bucket.c): unbucketize with its timeField, metaField
 * and as; without a metaField (one series) the inverse gives none, and
 * the parser takes it. */
static void
test_bucketize (void)
{
    static const struct {
        const char *plan, *inverse;
        size_t n_meta;
    } cases[] = {
        {"{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"a.r\", \"to\": \"a.b\", "
         "\"timeField\": \"t\", \"metaField\": \"s\", \"granularity\": \"hours\"}}]}",
         "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unbucketize\" : { \"from\" "
         ": \"a.b\", \"to\" : \"a.r\", \"timeField\" : \"t\", \"metaField\" : [ \"s\" ], \"as\" : "
         "\"measurements\", \"keepSource\" : false } } ] }",
         1},
        {"{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"a.r\", \"to\": \"a.b\", "
         "\"timeField\": \"t\", \"unit\": \"day\"}}]}",
         "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unbucketize\" : { \"from\" "
         ": \"a.b\", \"to\" : \"a.r\", \"timeField\" : \"t\", \"as\" : \"measurements\", "
         "\"keepSource\" : false } } ] }",
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rm_plan_t inv;
        char *text = inverse_of (cases[i].plan, &inv);
        T_CHECK (text != NULL);
        if (!text)
            continue;
        T_CHECK_STR (text, cases[i].inverse);
        T_CHECK (inv.steps[0].u.unbucketize.n_meta == cases[i].n_meta);
        bson_free (text);
        rm_plan_destroy (&inv);
    }
}

int
main (void)
{
    T_RUN (test_denormalize_removes_its_copies);
    T_RUN (test_summarize_removes_its_results);
    T_RUN (test_copy_move_delete);
    T_RUN (test_bucketize);
    return t_done ();
}
