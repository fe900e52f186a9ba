/* The inverse rows of denormalize and summarize (rm_step_inverse,
 * common/engine/step_inverse.c): each removes what its step wrote, an
 * unset of `in` (`into`), whatever filter, match or onMissing the step
 * has; the condition that makes it exact (the fields absent before) is
 * the online run's to record. Each inverse is checked as a plan the
 * parser takes, run over a batch: the fields gone, the rest as it was. */
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

int
main (void)
{
    T_RUN (test_denormalize_removes_its_copies);
    T_RUN (test_summarize_removes_its_results);
    return t_done ();
}
