/* rollback --carry-writes (online.h): the application's writes to the
 * switched-in collections carried back into the originals through the
 * plan's inverse, as a reverse sync does.
 *
 * Only a plan of one step whose inverse gives back the originals exactly
 * carries: the step's row of the step table says whether it has one
 * (rm_step_inverse, remodel/plan.h: an embed's is an extract, an
 * extract's an embed, exact only when each element had an _id of its own,
 * a rename's the same rename the other way, each under the conditions its
 * step file states); any other step is refused, named. A namespace the
 * old design has no place for cannot take a document whose parent is not
 * there (refused, before anything is written).
 *
 * The inverse runs in the core's engine (remodel/batchstep.h), as every
 * step online does, over the results as they are now (under their result
 * names, once rollback has renamed the originals back), and each document
 * it makes is compared with the original of its _id: the same fields and
 * values in any order (online_fields_digest: a server may keep another
 * order) stays as it is; one that differs replaces it; a new one is
 * inserted; an original the inverse no longer makes (deleted by the
 * application) is deleted. So it is idempotent: a carry killed part way is
 * done again by the next rollback. */
#include <stdio.h>
#include <string.h>

#include "online_changes.h"
#include "remodel/batchstep.h"
#include "remodel/cli.h"

#define BATCH 1000

typedef struct {
    online_t *on;
    online_after_t a;
    online_idset_t seen[ONLINE_AFTER_MAX];
    mongoc_collection_t *originals[ONLINE_AFTER_MAX];
    bson_t sel;             /* {_id: ...}, refilled for each document */
    bool exists[ONLINE_AFTER_MAX]; /* the namespace has a collection in the old design */
    bool dry;               /* only count what has nowhere to go (missing) */
    int64_t missing;
    int64_t inserted[ONLINE_AFTER_MAX], replaced[ONLINE_AFTER_MAX], deleted[ONLINE_AFTER_MAX];
} carry_t;

/* The inverse of the plan as a plan of one step, into inv; false with
 * RM_ERR_UNSUPPORTED naming the step that has none. */
static bool
inverse (online_t *on, rm_plan_t *inv, bson_error_t *err)
{
    const rm_step_t *s = on->plan.steps;
    bson_t *b = NULL;
    char *json;
    const char *why = NULL;
    bool ok;

    memset (inv, 0, sizeof *inv);
    if (on->plan.n != 1) {
        s = on->plan.n ? &on->plan.steps[1] : s;
        why = "--carry-writes carries back through a plan of one step";
    } else {
        /* The step's own row says (remodel/plan.h). */
        rm_step_inverse_t iv;
        rm_step_inverse (s, &iv);
        b = iv.plan;
        why = iv.why;
    }
    if (why) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "plan %s: step %zu (%s): %s; nothing renamed: "
                      "--discard-writes-after-switch rolls back without the writes made after "
                      "the switch", on->names.name, s->index, s->op, why);
        return false;
    }
    json = bson_as_relaxed_extended_json (b, NULL);
    ok = rm_plan_parse (inv, json, strlen (json), err);
    if (!ok)
        rm_error_prefix (err, "plan %s: the inverse of step 1 (%s)", on->names.name, s->op);
    bson_free (json);
    bson_destroy (b);
    return ok;
}

/* An inverse that gives an element back as it was only when it was a
 * document with an _id of its own (an extract's: otherwise its child has
 * a generated _id, which the embed would leave in it, iv->own_ids): every
 * element of the originals' array checked, where they are now (back:
 * under their own names, else their backups'). */
static bool
elements_own_ids (online_t *on, const rm_step_inverse_t *iv, bool back, bson_error_t *err)
{
    const rm_nsref_t *from = iv->own_ids;
    const char *path = iv->own_ids_path;
    char backup[400];
    mongoc_collection_t *coll;
    bson_t filter = BSON_INITIALIZER, *opts;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    rm_name_backup (&on->names, from->coll, backup, sizeof backup);
    coll = online_collection (on, from->db, back ? from->coll : backup);
    opts = BCON_NEW ("projection", "{", path, BCON_INT32 (1), "}");
    cur = mongoc_collection_find_with_opts (coll, &filter, opts, NULL);
    while (ok && mongoc_cursor_next (cur, &doc)) {
        bson_iter_t it, el, id;
        if (!bson_iter_init_find (&it, doc, path) || !BSON_ITER_HOLDS_ARRAY (&it) ||
            !bson_iter_recurse (&it, &el))
            continue;
        while (ok && bson_iter_next (&el))
            if (!BSON_ITER_HOLDS_DOCUMENT (&el) || !bson_iter_recurse (&el, &id) ||
                !bson_iter_find (&id, "_id")) {
                bson_t sel = BSON_INITIALIZER;
                char *text;
                online_id_filter (bson_get_data (doc), doc->len, &sel);
                text = bson_as_relaxed_extended_json (&sel, NULL);
                rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: plan %s: step 1 (%s): its inverse "
                              "gives the elements of %s back only when each had an _id of its "
                              "own, and %s's %s has one without; nothing renamed: "
                              "--discard-writes-after-switch rolls back without the writes made "
                              "after the switch", on->where, on->names.name,
                              on->plan.steps[0].op, from->text, text, path);
                bson_free (text);
                bson_destroy (&sel);
                ok = false;
            }
    }
    if (ok && mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "reading the originals");
    mongoc_cursor_destroy (cur);
    bson_destroy (opts);
    mongoc_collection_destroy (coll);
    return ok;
}

bool
online_carry_check (online_t *on, bool back, bson_error_t *err)
{
    rm_plan_t inv;
    rm_step_inverse_t iv;
    bool ok = inverse (on, &inv, err);
    if (ok)
        rm_plan_destroy (&inv);
    if (ok) {
        rm_step_inverse (&on->plan.steps[0], &iv);
        if (iv.own_ids)
            ok = elements_own_ids (on, &iv, back, err);
        if (iv.plan)
            bson_destroy (iv.plan);
    }
    return ok;
}

/* One document the inverse made (or one passed through) into its
 * original's place. */
static bool
put (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    carry_t *c = ctx;
    online_t *on = c->on;
    size_t k = 0;
    bson_t d;
    mongoc_cursor_t *cur;
    const bson_t *now;
    bson_error_t why;
    bool ok = true, there;

    while (k < c->a.n && strcmp (c->a.c[k].ns, ns) != 0)
        k++;
    bson_reinit (&c->sel);
    if (k == c->a.n || !online_id_filter (doc, len, &c->sel)) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: the inverse made a document of %s, "
                      "which the plan did not switch (or one without _id)", on->where,
                      on->names.name, ns);
        return false;
    }
    if (!online_idset_add (&c->seen[k], online_id_hash (doc, len))) {
        char *text = bson_as_relaxed_extended_json (&c->sel, NULL);
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: carrying back makes two documents of "
                      "%s with %s (the application gave one _id to two of them): carry "
                      "stopped; the results stay", on->where, on->names.name, ns, text);
        bson_free (text);
        return false;
    }
    /* A namespace the plan made (an extract's children) has no place in
     * the old design: what the inverse leaves there (children of no
     * parent) cannot be carried. */
    if (c->dry || !c->exists[k]) {
        c->missing += !c->exists[k];
        return true;
    }
    bson_init_static (&d, doc, len);
    cur = mongoc_collection_find_with_opts (c->originals[k], &c->sel, NULL, NULL);
    there = mongoc_cursor_next (cur, &now);
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "reading an original");
    if (ok && !there) {
        ok = online_lease_check (on, err) &&
             (mongoc_collection_insert_one (c->originals[k], &d, NULL, NULL, &why) ||
              online_fail (on, err, &why, "carrying a document back"));
        c->inserted[k] += ok;
    } else if (ok && (now->len != len ||
                      online_fields_digest (bson_get_data (now), now->len) !=
                          online_fields_digest (doc, len))) {
        ok = online_lease_check (on, err) &&
             (mongoc_collection_replace_one (c->originals[k], &c->sel, &d, NULL, NULL, &why) ||
              online_fail (on, err, &why, "carrying a document back"));
        c->replaced[k] += ok;
    }
    mongoc_cursor_destroy (cur);
    return ok;
}

/* The originals of move k the inverse no longer makes: deleted since. */
static bool
delete_gone (carry_t *c, size_t k, bson_error_t *err)
{
    online_t *on = c->on;
    mongoc_collection_t *coll = c->originals[k];
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (coll, &filter, opts, NULL);
    const bson_t *doc;
    online_values_t gone;
    bson_error_t why;
    bool ok = true;

    online_values_init (&gone);
    while (mongoc_cursor_next (cur, &doc)) {
        bson_iter_t id;
        if (!online_idset_has (&c->seen[k], online_id_hash (bson_get_data (doc), doc->len)) &&
            bson_iter_init_find (&id, doc, "_id"))
            online_values_add (&gone, &id);
    }
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "reading the originals");
    mongoc_cursor_destroy (cur);
    if (ok && gone.n) {
        bson_t sel = BSON_INITIALIZER, in;
        BSON_APPEND_DOCUMENT_BEGIN (&sel, "_id", &in);
        BSON_APPEND_ARRAY (&in, "$in", &gone.arr);
        bson_append_document_end (&sel, &in);
        ok = online_lease_check (on, err) &&
             (mongoc_collection_delete_many (coll, &sel, NULL, NULL, &why) ||
              online_fail (on, err, &why, "deleting an original the application deleted"));
        c->deleted[k] = ok ? gone.n : 0;
        bson_destroy (&sel);
    }
    bson_destroy (&gone.arr);
    bson_destroy (opts);
    return ok;
}

/* Every document of move k's result: into the inverse (input number in,
 * or passed through when in < 0), a batch at a time (join: all of them,
 * run by the caller). */
static bool
carry_from (carry_t *c, size_t k, rm_batchstep_t *b, int in, bool join, bson_error_t *err)
{
    online_t *on = c->on;
    mongoc_collection_t *coll = online_collection (on, c->a.c[k].db, c->a.c[k].result);
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (coll, &filter, opts, NULL);
    const bson_t *doc;
    bson_error_t why;
    size_t n = 0;
    bool ok = true;

    while (ok && mongoc_cursor_next (cur, &doc)) {
        if (in < 0) {
            ok = put (c, c->a.c[k].ns, bson_get_data (doc), doc->len, err);
            continue;
        }
        rm_batchstep_add (b, (size_t) in, bson_get_data (doc), doc->len);
        /* A join's batch holds every partner: one batch, which the
         * engine spills to --tmp past memory. */
        if (!join && ++n == BATCH) {
            ok = rm_batchstep_run (b, put, c, err);
            n = 0;
        }
    }
    if (ok && mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "reading a result");
    if (ok && in >= 0 && !join && n)
        ok = rm_batchstep_run (b, put, c, err);
    mongoc_cursor_destroy (cur);
    bson_destroy (opts);
    mongoc_collection_destroy (coll);
    return ok;
}

/* One pass of the inverse over every result (dry: writing nothing). */
static bool
carry_pass (carry_t *c, const rm_plan_t *inv, bson_error_t *err)
{
    const rm_nsref_t *in[4];
    size_t n_in = rm_step_inputs (&inv->steps[0], in, 4);
    rm_batchstep_t *b = rm_batchstep_new (&inv->steps[0], c->on->o->tmpdir);
    bool ok = true;

    for (size_t k = 0; ok && k < c->a.n; k++) {
        int input = -1;
        for (size_t j = 0; j < n_in; j++)
            if (!strcmp (in[j]->text, c->a.c[k].ns))
                input = (int) j;
        ok = carry_from (c, k, b, input, n_in > 1, err);
    }
    if (ok && n_in > 1)
        ok = rm_batchstep_run (b, put, c, err);
    rm_batchstep_destroy (b);
    return ok;
}

bool
online_carry (online_t *on, bson_error_t *err)
{
    carry_t *c = bson_malloc0 (sizeof *c);
    rm_plan_t inv;
    bool ok = online_after_plan (on, &c->a, err), planned, all = true;

    c->on = on;
    bson_init (&c->sel);
    for (size_t k = 0; ok && k < c->a.n; k++) {
        c->originals[k] = online_collection (on, c->a.c[k].db, c->a.c[k].coll);
        ok = online_coll_exists (on, c->a.c[k].db, c->a.c[k].coll, &c->exists[k], err);
        all &= c->exists[k];
    }
    planned = ok = ok && inverse (on, &inv, err);
    /* Where a namespace has no place in the old design, a dry pass first:
     * nothing is written when something could not be carried. */
    if (ok && !all) {
        c->dry = true;
        ok = carry_pass (c, &inv, err);
        for (size_t k = 0; k < ONLINE_AFTER_MAX; k++) {
            online_idset_destroy (&c->seen[k]);
            memset (&c->seen[k], 0, sizeof c->seen[k]);
        }
        c->dry = false;
        if (ok && c->missing) {
            rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %lld document(s) written after the "
                          "switch belong to no document of the old design (children whose "
                          "parent is not there): nothing carried; the results stay beside the "
                          "originals: rollback --discard-writes-after-switch drops them",
                          on->where, on->names.name, (long long) c->missing);
            ok = false;
        }
        c->missing = 0;
    }
    ok = ok && carry_pass (c, &inv, err);
    for (size_t k = 0; ok && k < c->a.n; k++) {
        ok = !c->exists[k] || delete_gone (c, k, err);
        if (ok && c->exists[k] && !on->o->quiet)
            rm_cli_line (stderr, "", "\n", "remodel: rollback: carried back into %s.%s: %lld "
                         "inserted, %lld replaced, %lld deleted", c->a.c[k].db, c->a.c[k].coll,
                         (long long) c->inserted[k], (long long) c->replaced[k],
                         (long long) c->deleted[k]);
    }
    if (planned)
        rm_plan_destroy (&inv);
    for (size_t k = 0; k < ONLINE_AFTER_MAX; k++) {
        online_idset_destroy (&c->seen[k]);
        if (c->originals[k])
            mongoc_collection_destroy (c->originals[k]);
    }
    bson_destroy (&c->sel);
    bson_free (c);
    return ok;
}
