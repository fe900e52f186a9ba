/* remodel/indexes.h: index specifications carried through steps without a
 * dump (the API the online mode can feed listIndexes' results to): default
 * names as MongoDB makes them, a rename through every part that names
 * fields (key, $or in a partial filter, text weights, wildcardProjection),
 * an embed's project, hashed and text rules. */
#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

#include "remodel/indexes.h"
#include "remodel/plan.h"
#include "test.h"

static bson_t *
json (const char *text)
{
    bson_error_t err;
    bson_t *b = bson_new_from_json ((const uint8_t *) text, -1, &err);
    if (!b)
        fprintf (stderr, "  bad test JSON: %s\n", err.message);
    return b;
}

/* The specs of ns in p, as relaxed JSON, one per line. */
static char *
specs_text (rm_ixplan_t *p, const char *ns)
{
    rm_ixns_t *n = rm_ixplan_find (p, ns);
    char *out = bson_strdup ("");
    for (size_t i = 0; n && i < n->n; i++) {
        char *j = bson_as_relaxed_extended_json (n->specs[i], NULL);
        char *next = bson_strdup_printf ("%s%s\n", out, j);
        bson_free (out);
        bson_free (j);
        out = next;
    }
    return out;
}

static void
run_plan (rm_ixplan_t *p, const char *plan_json)
{
    rm_plan_t plan;
    bson_error_t err;
    if (!rm_plan_parse (&plan, plan_json, strlen (plan_json), &err)) {
        fprintf (stderr, "  plan: %s\n", err.message);
        T_CHECK (false);
        return;
    }
    for (size_t i = 0; i < plan.n; i++)
        rm_ixplan_step (p, &plan.steps[i]);
    rm_plan_destroy (&plan);
}

static void
test_default_names (void)
{
    bson_t *k1 = json ("{\"a\": 1, \"b\": -1}");
    bson_t *k2 = json ("{\"a\": 1.0, \"loc\": \"2dsphere\", \"h\": \"hashed\"}");
    bson_t *k3 = json ("{\"x\": {\"$numberLong\": \"1\"}, \"_fts\": \"text\", \"_ftsx\": 1}");
    bson_t *w = json ("{\"title\": 1, \"body\": 2}");
    char *n1 = rm_index_default_name (k1, NULL), *n2 = rm_index_default_name (k2, NULL),
         *n3 = rm_index_default_name (k3, w);
    T_CHECK_STR (n1, "a_1_b_-1");
    T_CHECK_STR (n2, "a_1_loc_2dsphere_h_hashed");
    T_CHECK_STR (n3, "x_1_title_text_body_text");
    bson_free (n1);
    bson_free (n2);
    bson_free (n3);
    bson_destroy (k1);
    bson_destroy (k2);
    bson_destroy (k3);
    bson_destroy (w);
}

static void
test_rename_every_part (void)
{
    rm_ixplan_t p;
    bson_t *ix = json (
        "[{\"v\": 2, \"key\": {\"_id\": 1}, \"name\": \"_id_\"},"
        " {\"v\": 2, \"key\": {\"_fts\": \"text\", \"_ftsx\": 1}, \"name\": \"title_text\","
        "  \"weights\": {\"title\": 1}, \"default_language\": \"english\"},"
        " {\"v\": 2, \"key\": {\"$**\": 1}, \"name\": \"$**_1\", \"wildcardProjection\": {\"a.b\": 1}},"
        " {\"v\": 2, \"key\": {\"n\": 1}, \"name\": \"n_1\","
        "  \"partialFilterExpression\": {\"$or\": [{\"a.b\": {\"$gt\": 1}}, {\"title\": \"x\"}]}},"
        " {\"v\": 2, \"key\": {\"a.b.c\": 1}, \"name\": \"a.b.c_1\", \"hidden\": true}]");
    char *text;
    rm_ixplan_init (&p);
    rm_ixplan_add (&p, "d.c", ix);
    run_plan (&p, "{\"remodel\": 1, \"steps\": [{\"rename\": {\"in\": \"d.c\", \"fields\": "
                  "{\"title\": \"heading\", \"a.b\": \"a.z\"}}}]}");
    text = specs_text (&p, "d.c");
    T_CHECK_STR (text,
                 "{ \"v\" : 2, \"key\" : { \"_id\" : 1 }, \"name\" : \"_id_\" }\n"
                 "{ \"v\" : 2, \"key\" : { \"_fts\" : \"text\", \"_ftsx\" : 1 }, \"name\" : "
                 "\"heading_text\", \"weights\" : { \"heading\" : 1 }, \"default_language\" : "
                 "\"english\" }\n"
                 "{ \"v\" : 2, \"key\" : { \"$**\" : 1 }, \"name\" : \"$**_1\", "
                 "\"wildcardProjection\" : { \"a.z\" : 1 } }\n"
                 "{ \"v\" : 2, \"key\" : { \"n\" : 1 }, \"name\" : \"n_1\", "
                 "\"partialFilterExpression\" : { \"$or\" : [ { \"a.z\" : { \"$gt\" : 1 } }, { "
                 "\"heading\" : \"x\" } ] } }\n"
                 "{ \"v\" : 2, \"key\" : { \"a.z.c\" : 1 }, \"name\" : \"a.z.c_1\", \"hidden\" : "
                 "true }\n");
    T_CHECK (p.n_changes == 4);
    T_CHECK (rm_ixplan_find (&p, "d.c")->changed);
    bson_free (text);
    rm_ixplan_destroy (&p);
    bson_destroy (ix);
}

static void
test_embed_rules (void)
{
    rm_ixplan_t p;
    bson_t *child = json (
        "[{\"v\": 2, \"key\": {\"_id\": 1}, \"name\": \"_id_\"},"
        " {\"v\": 2, \"key\": {\"secret\": 1}, \"name\": \"secret_1\"},"
        " {\"v\": 2, \"key\": {\"h\": \"hashed\"}, \"name\": \"h_hashed\"},"
        " {\"v\": 2, \"key\": {\"pid\": 1, \"d\": 1}, \"name\": \"pid_1_d_1\"},"
        " {\"v\": 2, \"key\": {\"d\": 1}, \"name\": \"by_date\", \"unique\": true}]");
    bson_t *parent = json ("[{\"v\": 2, \"key\": {\"_id\": 1}, \"name\": \"_id_\"}]");
    char *text;
    rm_ixplan_init (&p);
    rm_ixplan_add (&p, "d.kids", child);
    rm_ixplan_add (&p, "d.parents", parent);
    rm_ixplan_add (&p, "d.bare", NULL);
    run_plan (&p, "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"d.kids\", \"into\": "
                  "\"d.parents\", \"localField\": \"_id\", \"foreignField\": \"pid\", \"as\": "
                  "\"k\", \"project\": {\"secret\": 0}}}]}");
    text = specs_text (&p, "d.parents");
    /* only by_date: secret left out by project, hashed refused, the join
     * key's; a name of its own prefixed, not unique */
    T_CHECK_STR (text, "{ \"v\" : 2, \"key\" : { \"_id\" : 1 }, \"name\" : \"_id_\" }\n"
                       "{ \"v\" : 2, \"key\" : { \"k.d\" : 1 }, \"name\" : \"k_by_date\" }\n");
    T_CHECK (p.n_changes == 4);
    bson_free (text);
    /* into a namespace without specifications: nothing made, said */
    run_plan (&p, "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"d.kids\", \"into\": "
                  "\"d.bare\", \"localField\": \"_id\", \"foreignField\": \"pid\", \"as\": "
                  "\"k\"}}]}");
    T_CHECK (rm_ixplan_find (&p, "d.bare")->n == 0);
    T_CHECK (!rm_ixplan_find (&p, "d.bare")->changed);
    T_CHECK (strstr (p.changes[p.n_changes - 1], "which has no metadata") != NULL);
    rm_ixplan_destroy (&p);
    bson_destroy (child);
    bson_destroy (parent);
}

/* A rename onto a field that has its own index: the renamed one would
 * be a second index on one key, which mongorestore refuses: dropped. */
static void
test_rename_onto_indexed (void)
{
    rm_ixplan_t p;
    bson_t *ix = json ("[{\"v\": 2, \"key\": {\"_id\": 1}, \"name\": \"_id_\"},"
                       " {\"v\": 2, \"key\": {\"a\": 1}, \"name\": \"a_1\"},"
                       " {\"v\": 2, \"key\": {\"b\": 1}, \"name\": \"b_1\", \"unique\": true}]");
    char *text;
    rm_ixplan_init (&p);
    rm_ixplan_add (&p, "d.c", ix);
    run_plan (&p, "{\"remodel\": 1, \"steps\": [{\"rename\": {\"in\": \"d.c\", \"fields\": "
                  "{\"a\": \"b\"}}}]}");
    text = specs_text (&p, "d.c");
    T_CHECK_STR (text, "{ \"v\" : 2, \"key\" : { \"_id\" : 1 }, \"name\" : \"_id_\" }\n"
                       "{ \"v\" : 2, \"key\" : { \"b\" : 1 }, \"name\" : \"b_1\", \"unique\" : "
                       "true }\n");
    T_CHECK (p.n_changes == 1 && strstr (p.changes[0], "dropped: its new key") != NULL);
    bson_free (text);
    rm_ixplan_destroy (&p);
    bson_destroy (ix);
}

int
main (void)
{
    T_RUN (test_default_names);
    T_RUN (test_rename_every_part);
    T_RUN (test_embed_rules);
    T_RUN (test_rename_onto_indexed);
    return t_done ();
}
