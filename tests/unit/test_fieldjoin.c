/* A join's check as the online companion asks it (remodel/fieldcheck.h,
 * common/engine/fieldcheck.c over probe.c's rm_join_seen_check, the
 * decision `remodel run` makes): each join's two sides, and the refusal
 * of one whose references found nothing, in the offline words, unless
 * allowed or there was nothing to find. */
#include <string.h>

#include "remodel/fieldcheck.h"
#include "remodel/plan.h"
#include "test.h"

#define EMBED                                                                                  \
    "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"crm.tasks\", \"into\": "          \
    "\"crm.people\", \"localField\": \"name\", \"foreignField\": \"owner\", \"as\": \"t\", " \
    "\"match\": {\"open\": true}%s}}]}"
#define DENORM                                                                                 \
    "{\"remodel\": 1, \"steps\": [{\"denormalize\": {\"in\": \"crm.tasks\", \"from\": "      \
    "\"crm.people\", \"localField\": \"title\", \"foreignField\": \"_id\", \"fields\": "     \
    "{\"who\": \"name\"}, \"filter\": {\"done\": false}}}]}"

static bool
parse (rm_plan_t *plan, const char *json)
{
    bson_error_t err;
    if (rm_plan_parse (plan, json, strlen (json), &err))
        return true;
    fprintf (stderr, "  %s\n", err.message);
    return false;
}

/* embed and summarize read their references in `into`, look them up in
 * `from`; denormalize in `in`, in `from`; each side with the documents
 * the step takes (its filter, its match). */
static void
test_sides (void)
{
    rm_plan_t plan;
    char json[600];
    rm_fieldjoin_side_t l, f;
    bson_error_t e;
    snprintf (json, sizeof json, EMBED, "");
    T_CHECK (parse (&plan, json));
    T_CHECK (rm_fieldjoin_sides (&plan.steps[0], &l, &f));
    T_CHECK_STR (l.ns, "crm.people");
    T_CHECK_STR (l.path, "name");
    T_CHECK (l.query == NULL);
    T_CHECK_STR (f.ns, "crm.tasks");
    T_CHECK_STR (f.path, "owner");
    T_CHECK (f.query == plan.steps[0].match && f.query);
    rm_plan_destroy (&plan);

    T_CHECK (parse (&plan, DENORM));
    T_CHECK (rm_fieldjoin_sides (&plan.steps[0], &l, &f));
    T_CHECK_STR (l.ns, "crm.tasks");
    T_CHECK_STR (l.path, "title");
    T_CHECK (l.query == plan.steps[0].filter && l.query);
    T_CHECK_STR (f.ns, "crm.people");
    T_CHECK_STR (f.path, "_id");
    rm_plan_destroy (&plan);

    T_CHECK (parse (&plan, "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"a.b\", \"fields\": "
                           "{\"v\": 1}}}]}"));
    T_CHECK (!rm_fieldjoin_sides (&plan.steps[0], &l, &f));
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], false, &(rm_fieldjoin_count_t){1, 1, 1, 0},
                                  &e));
    rm_plan_destroy (&plan);
}

/* The words `remodel run` refuses with (engine_checks.c, step_denorm.c
 * call the same function), prefixed with the step. */
static void
test_refused (void)
{
    rm_plan_t plan;
    char json[600];
    bson_error_t err;
    rm_fieldjoin_count_t n = {.docs = 50, .refs = 50, .partners = 300, .found = 0};
    snprintf (json, sizeof json, EMBED, "");
    T_CHECK (parse (&plan, json));
    T_CHECK (!rm_fieldjoin_result (&plan.steps[0], false, &n, &err));
    T_CHECK_STR (err.message, "step 1 (embed): none of the 300 documents of crm.tasks matches any "
                              "of the 50 of crm.people (localField \"name\" = foreignField "
                              "\"owner\"): check the fields and their types (if that is expected, "
                              "add \"allowMissing\": true to the step)");
    rm_plan_destroy (&plan);

    n = (rm_fieldjoin_count_t){.docs = 280, .refs = 300, .partners = 50, .found = 0};
    T_CHECK (parse (&plan, DENORM));
    T_CHECK (!rm_fieldjoin_result (&plan.steps[0], false, &n, &err));
    T_CHECK_STR (err.message, "step 1 (denormalize): none of the 300 references in crm.tasks "
                              "(localField \"title\") is found in crm.people (foreignField "
                              "\"_id\"): check the fields and their types (if that is expected, "
                              "add \"allowMissing\": true to the step)");
    rm_plan_destroy (&plan);
}

/* Not refused: something found, nothing to look up or nothing to find,
 * --allow-missing, or "allowMissing": true on the step. */
static void
test_passed (void)
{
    rm_plan_t plan;
    char json[600];
    rm_fieldjoin_count_t n = {.docs = 50, .refs = 50, .partners = 300, .found = 0}, m;
    bson_error_t e;
    snprintf (json, sizeof json, EMBED, "");
    T_CHECK (parse (&plan, json));
    m = n, m.found = 1;
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], false, &m, &e));
    m = n, m.docs = 0;
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], false, &m, &e));
    m = n, m.partners = 0;
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], false, &m, &e));
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], true, &n, &e));
    rm_plan_destroy (&plan);

    snprintf (json, sizeof json, EMBED, ", \"allowMissing\": true");
    T_CHECK (parse (&plan, json));
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], false, &n, &e));
    rm_plan_destroy (&plan);

    /* denormalize counts references: a side with documents but none */
    T_CHECK (parse (&plan, DENORM));
    m = (rm_fieldjoin_count_t){.docs = 20, .refs = 0, .partners = 50, .found = 0};
    T_CHECK (rm_fieldjoin_result (&plan.steps[0], false, &m, &e));
    rm_plan_destroy (&plan);
}

int
main (void)
{
    T_RUN (test_sides);
    T_RUN (test_refused);
    T_RUN (test_passed);
    return t_done ();
}
