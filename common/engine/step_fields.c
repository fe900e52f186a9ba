/* Field steps for schema evolution: set, unset, rename, version. Each
 * document is rewritten by copying its bytes with the changes (docpath),
 * through two byte buffers reused for every document. Their keys in a
 * plan are read at the end of this file. */
#include <stdlib.h>
#include <string.h>

#include "fields_scratch.h"
#include "plan_parse.h"

/* One document through the step, counted changed or unchanged. */
static bool
rm_fields_apply (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                 const uint8_t *doc, size_t len, const uint8_t **out, size_t *out_len,
                 bson_error_t *err)
{
    return rm_fields_rewrite (sc, s, ns_name, doc, len, out, out_len, err) &&
           rm_fields_done (sc, s, ns_name, doc, len,
                           s->kind == RM_STEP_SET && rm_expr_set_shallow (sc->cx), out, out_len,
                           err);
}

/* A leader (sc->run, whose first step is steps[0]): the document through
 * the whole run, each step counted. A document the run cannot take goes
 * through the steps one at a time. */
static bool
run_apply (rm_fields_scratch_t *sc, const rm_step_t *steps, const char *ns_name,
           const uint8_t *doc, uint32_t len, const uint8_t **out, size_t *out_len,
           bson_error_t *err)
{
    size_t n = rm_field_run_steps (sc->run);

    /* A result nested too deep goes the steps one at a time, so that the
     * step that made it so is the one named. */
    if (rm_field_run_apply (sc->run, doc, len, out, out_len, sc->changed) &&
        rm_engine_depth_ok (ns_name, "document", doc, len, *out, *out_len, err)) {
        for (size_t k = 0; k < n; k++)
            rm_fields_count_step (sc->e, &steps[k], sc->changed[k]);
    } else {
        *out = doc;
        *out_len = len;
        for (size_t k = 0; k < n; k++) {
            rm_buf_t *h = &sc->hold[k & 1];
            if (!rm_fields_apply (sc, &steps[k], ns_name, *out, *out_len, out, out_len, err)) {
                /* Named here: the caller would name the run's first step. */
                if (err->message[0] && strncmp (err->message, "step ", 5) != 0)
                    rm_error_prefix (err, "step %zu (%s)", steps[k].index, steps[k].op);
                return false;
            }
            /* The next step writes where this one did. */
            rm_buf_reset (h);
            rm_buf_append (h, *out, *out_len);
            *out = h->data;
        }
    }
    sc->last_out = *out;
    sc->last_len = *out_len;
    return true;
}

/* The run steps[0] leads, if any, into sc (field_run.h). */
static void
run_lead (rm_fields_scratch_t *sc, const rm_step_t *steps, size_t n, size_t at)
{
    sc->run = rm_field_run_fusable (steps) ? rm_field_run_new (steps, n, sc->cx) : NULL;
    sc->run_steps = steps;
    sc->run_max = n;
    if (sc->run) {
        sc->first = at;
        sc->changed = bson_malloc0 (rm_field_run_steps (sc->run) * sizeof *sc->changed);
    }
}

/* Store to store. A step that leads a run takes the whole run over the
 * store; the run's other steps, counted by then (each document counts
 * each step), have nothing left to do. */
bool
rm_step_fields_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *ns = rm_engine_find (e, &s->u.fields.in);
    size_t at = (size_t) (s - e->plan->steps);
    rm_store_t *next;
    rm_instream_t *in;
    rm_fields_scratch_t sc;
    rm_frame_t fr;
    bool ok = true, started = false;
    int rc = 0;

    if (rm_engine_step_run (e, s)->counts)
        return true; /* its run's leader ran it */
    next = rm_engine_store_new (e, ns, err);
    if (!next)
        return false;
    in = rm_store_open (ns->store, err);
    if (!in) {
        rm_store_destroy (next);
        return false;
    }
    rm_fields_scratch_init (&sc, e, rm_engine_now (e));
    while (ok && (rc = rm_store_next (in, &fr, err)) > 0) {
        const uint8_t *doc;
        size_t len;
        /* At the first document: an empty store makes no run, and leaves
         * every step uncounted, as it always did. */
        if (!started) {
            run_lead (&sc, s, e->plan->n - at, at);
            started = true;
        }
        ok = (sc.run ? run_apply (&sc, s, ns->stats->name, fr.data, fr.len, &doc, &len, err)
                     : rm_fields_apply (&sc, s, ns->stats->name, fr.data, fr.len, &doc, &len, err)) &&
             rm_store_add (next, doc, (uint32_t) len, err);
    }
    if (rc < 0)
        ok = false;
    rm_fields_scratch_destroy (&sc);
    rm_instream_close (in);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (ns, next, err);
}

/* The one-pass path (rm_stage_class_t): the same rewrite, document by
 * document as the source is read. */
static bool
is_fields_step (const rm_step_t *s)
{
    return s->kind == RM_STEP_SET || s->kind == RM_STEP_UNSET || s->kind == RM_STEP_RENAME ||
           s->kind == RM_STEP_VERSION;
}

/* Stages open in plan order: a step the run of the step before it covers
 * follows that run's leader; another fusable one may lead a run of its
 * own. */
static void
fields_fuse (rm_engine_t *e, rm_stage_t *st, rm_fields_scratch_t *sc)
{
    size_t at = (size_t) (st->s - e->plan->steps);

    if (!e->stages || st != &e->stages[at] || !rm_field_run_fusable (st->s))
        return;
    if (at > 0 && is_fields_step (e->stages[at - 1].s) && e->stages[at - 1].data) {
        rm_fields_scratch_t *prev = e->stages[at - 1].data;
        rm_fields_scratch_t *lead = prev->run ? prev : prev->lead;
        if (lead && at < lead->first + rm_field_run_steps (lead->run)) {
            sc->lead = lead;
            return;
        }
    }
    run_lead (sc, st->s, e->plan->n - at, at);
}

static void
fields_open (rm_engine_t *e, rm_stage_t *st)
{
    rm_fields_scratch_t *sc = bson_malloc (sizeof *sc);
    rm_fields_scratch_init (sc, e, rm_engine_now (e));
    st->in = rm_engine_find (e, &st->s->u.fields.in);
    st->data = sc;
    fields_fuse (e, st, sc);
}

static bool
fields_apply (rm_stage_t *st, const uint8_t *doc, uint32_t len, rm_emit_fn emit, void *ctx,
              const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    rm_fields_scratch_t *sc = st->data;
    bool failed;
    (void) emit;
    (void) ctx;
    if (rm_fields_ahead_take (sc, st->s, st->in->stats->name, doc, len, out, out_len, &failed, err))
        return !failed;
    if (sc->run)
        return run_apply (sc, st->s, st->in->stats->name, doc, len, out, out_len, err);
    if (sc->lead && doc == sc->lead->last_out && len == sc->lead->last_len) {
        *out = doc; /* its leader applied this step already, and counted it */
        *out_len = len;
        return true;
    }
    return rm_fields_apply (sc, st->s, st->in->stats->name, doc, len, out, out_len, err);
}

static void
fields_close (rm_stage_t *st)
{
    if (st->data) {
        rm_fields_scratch_t *sc = st->data;
        rm_fields_ahead_destroy (sc->ahead); /* its threads first */
        rm_fields_scratch_destroy (sc);
    }
    bson_free (st->data);
}

/* A namespace's first field step computes its batches ahead on threads
 * (fields_ahead.c); a follower's documents are its leader's to compute. */
static void
fields_give (rm_stage_t *st, int slot, const uint8_t *const *docs, const uint32_t *lens, size_t n,
             int threads)
{
    rm_fields_scratch_t *sc = st->data;
    if (!sc->lead)
        rm_fields_ahead_give (sc, st->s, st->in->stats->name, slot, docs, lens, n, threads);
}

static void
fields_use (rm_stage_t *st, int slot)
{
    rm_fields_ahead_use (st->data, slot);
}

const rm_stage_class_t rm_fields_stage = {.open = fields_open,
                                          .apply = fields_apply,
                                          .ahead = fields_give,
                                          .ahead_use = fields_use,
                                          .close = fields_close};

/* The steps in a plan (step_class.h): their keys read, then freed; their
 * namespaces, for plan.c. */

static void
fields_add (rm_fields_t *f)
{
    /* Doubling: a step of 200,000 fields must not copy its arrays each time. */
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->paths = bson_realloc (f->paths, f->cap * sizeof *f->paths);
        f->to = bson_realloc (f->to, f->cap * sizeof *f->to);
        f->values = bson_realloc (f->values, f->cap * sizeof *f->values);
    }
    memset (&f->paths[f->n], 0, sizeof *f->paths);
    memset (&f->to[f->n], 0, sizeof *f->to);
    memset (&f->values[f->n], 0, sizeof *f->values);
    f->n++;
}

/* The values as the edits take them (encoded once, not per document). */
static void
fields_encode (rm_fields_t *f)
{
    bson_iter_t it;

    f->raw_holder = bson_new ();
    f->raw = bson_malloc0 ((f->n ? f->n : 1) * sizeof *f->raw);
    for (size_t i = 0; i < f->n; i++)
        if (f->values[i].value_type)
            bson_append_value (f->raw_holder, "", 0, &f->values[i]);
    /* pointed at only now: appending may move the holder's bytes */
    bson_iter_init (&it, f->raw_holder);
    for (size_t i = 0; i < f->n; i++)
        if (f->values[i].value_type && bson_iter_next (&it))
            rm_raw_value_of (&it, &f->raw[i]);
}

/* Two paths conflict when one is a prefix of the other (as in an update). */
static bool
paths_conflict (const rm_path_t *a, const rm_path_t *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++)
        if (strcmp (a->parts[i], b->parts[i]) != 0)
            return false;
    return true;
}

/* Part by part, a prefix first: then a path and every path it is a prefix
 * of stand together, and a conflict is always between neighbours. */
static int
path_order (const void *x, const void *y)
{
    const rm_path_t *a = *(const rm_path_t *const *) x, *b = *(const rm_path_t *const *) y;
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        int c = strcmp (a->parts[i], b->parts[i]);
        if (c)
            return c;
    }
    return (a->n > b->n) - (a->n < b->n);
}

/* Every path the step writes or removes (for rename, the old and the new
 * paths together, as $rename takes them): none may be _id or under it
 * (the update operators refuse to change _id), and no two may overlap.
 * Sorted, so that 200,000 fields take n log n, not n^2. */
static bool
check_paths (rm_plan_ctx_t *c, rm_step_kind_t kind, const rm_fields_t *f)
{
    size_t n = kind == RM_STEP_RENAME ? 2 * f->n : f->n;
    const rm_path_t **all = bson_malloc ((n ? n : 1) * sizeof *all);
    bool ok = true;

    for (size_t i = 0; i < f->n; i++) {
        all[i] = &f->paths[i];
        if (kind == RM_STEP_RENAME)
            all[f->n + i] = &f->to[i];
    }
    for (size_t i = 0; ok && i < n; i++)
        if (all[i]->n > 0 && strcmp (all[i]->parts[0], "_id") == 0)
            ok = rm_plan_fail (c, kind == RM_STEP_VERSION ? "field" : "fields",
                               "\"%s\": _id cannot be changed (MongoDB's update operators refuse it)",
                               all[i]->text);
    if (ok)
        qsort (all, n, sizeof *all, path_order);
    for (size_t i = 0; ok && i + 1 < n; i++)
        if (paths_conflict (all[i], all[i + 1]))
            ok = rm_plan_fail (c, "fields", kind == RM_STEP_RENAME
                               ? "\"%s\" and \"%s\" overlap (as $rename refuses: to swap, rename through a "
                                 "third name in separate steps)"
                               : "\"%s\" and \"%s\" overlap",
                               all[i]->text, all[i + 1]->text);
    bson_free (all);
    return ok;
}

/* set is the $set stage: each value an expression (a string starting
 * with '$' a path, {"$literal": ...} a literal one, Extended JSON such as
 * {"$date": ...} a literal value), a document of fields standing for
 * their dotted paths. Its paths are kept for the checks below. */
static bool
parse_set (rm_plan_ctx_t *c, bson_iter_t *it, rm_fields_t *f)
{
    bson_error_t perr;
    uint32_t len;
    const uint8_t *data;

    f->set = rm_expr_set_parse (it, &perr);
    if (!f->set && perr.code == RM_ERR_INTERRUPTED) {
        *c->err = perr; /* a signal while reading: not the plan's fault */
        return false;
    }
    if (!f->set)
        return rm_plan_fail (c, "fields", "%s", perr.message);
    bson_iter_document (it, &len, &data);
    f->set_doc = bson_new_from_data (data, len);
    for (size_t i = 0; i < rm_expr_set_count (f->set); i++) {
        fields_add (f);
        if (!rm_path_parse (&f->paths[f->n - 1], rm_expr_set_path (f->set, i), &perr))
            return rm_plan_fail (c, "fields", "%s", perr.message);
    }
    return true;
}

bool
rm_plan_parse_fields (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_step_kind_t kind = s->kind;
    rm_fields_t *f = &s->u.fields;
    bson_error_t perr;
    bool has_field = false;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        if (!strcmp (k, "in")) {
            if (!rm_plan_get_ns (c, it, &f->in))
                return false;
        } else if (kind == RM_STEP_VERSION && !strcmp (k, "field")) {
            if (f->n == 0)
                fields_add (f);
            if (!rm_plan_get_path (c, it, &f->paths[0]))
                return false;
            has_field = true;
        } else if (kind == RM_STEP_VERSION && !strcmp (k, "value")) {
            if (f->n == 0)
                fields_add (f);
            bson_value_copy (bson_iter_value (it), &f->values[0]);
        } else if (!strcmp (k, "fields") && kind == RM_STEP_UNSET) {
            bson_iter_t sub;
            if (!BSON_ITER_HOLDS_ARRAY (it) || !bson_iter_recurse (it, &sub))
                return rm_plan_fail (c, k, "must be an array of field paths");
            while (bson_iter_next (&sub)) {
                fields_add (f);
                if (!rm_plan_get_path (c, &sub, &f->paths[f->n - 1]))
                    return rm_plan_fail (c, k, "element %s: %s", bson_iter_key (&sub), "must be a field path");
            }
        } else if (!strcmp (k, "fields") && kind == RM_STEP_SET) {
            if (!parse_set (c, it, f))
                return false;
        } else if (!strcmp (k, "fields") && kind != RM_STEP_VERSION) {
            bson_iter_t sub;
            if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
                return rm_plan_fail (c, k, "must be a document of %s",
                                     kind == RM_STEP_SET ? "{\"path\": value}" : "{\"old.path\": \"new.path\"}");
            while (bson_iter_next (&sub)) {
                fields_add (f);
                if (!rm_path_parse (&f->paths[f->n - 1], bson_iter_key (&sub), &perr))
                    return rm_plan_fail (c, k, "%s", perr.message);
                if (kind != RM_STEP_SET) {
                    const char *to;
                    if (!BSON_ITER_HOLDS_UTF8 (&sub))
                        return rm_plan_fail (c, k, "the new name of \"%s\" must be a string", bson_iter_key (&sub));
                    uint32_t to_len;
                    to = bson_iter_utf8 (&sub, &to_len);
                    if (strlen (to) != to_len)
                        return rm_plan_fail (c, k,
                                             "the new name of \"%s\" must not hold a NUL byte",
                                             bson_iter_key (&sub));
                    if (!rm_path_parse (&f->to[f->n - 1], to, &perr))
                        return rm_plan_fail (c, k, "%s", perr.message);
                    if (paths_conflict (&f->paths[f->n - 1], &f->to[f->n - 1]))
                        return rm_plan_fail (c, k,
                                             "cannot rename \"%s\" to \"%s\": one contains the other",
                                             bson_iter_key (&sub), to);
                }
            }
        } else {
            return rm_plan_fail (c, k, "unknown key");
        }
    }
    if (kind == RM_STEP_VERSION && !has_field) {
        if (f->n == 0)
            fields_add (f);
        rm_path_parse (&f->paths[0], "schemaVersion", &perr);
    }
    fields_encode (f);
    if (kind == RM_STEP_UNSET)
        f->unset = rm_expr_unset_new (f->paths, f->n);
    if (kind != RM_STEP_VERSION && f->n == 0 && f->in.text)
        return rm_plan_fail (c, "fields", "names no field");
    return check_paths (c, kind, f);
}

void
rm_plan_clear_fields (rm_step_t *s)
{
    rm_fields_t *f = &s->u.fields;
    rm_plan_nsref_clear (&f->in);
    for (size_t i = 0; i < f->n; i++) {
        rm_path_destroy (&f->paths[i]);
        rm_path_destroy (&f->to[i]);
        if (f->values[i].value_type)
            bson_value_destroy (&f->values[i]);
    }
    bson_free (f->paths);
    bson_free (f->to);
    bson_free (f->values);
    bson_free (f->raw);
    if (f->raw_holder)
        bson_destroy (f->raw_holder);
    rm_expr_set_destroy (f->set);
    rm_expr_unset_destroy (f->unset);
    if (f->set_doc)
        bson_destroy (f->set_doc);
}

/* set, unset, rename, version: in is read and written. */
void
rm_plan_ns_fields (const rm_step_t *s, rm_step_ns_t *ns)
{
    rm_step_refs_add (&ns->reads, &s->u.fields.in, "in");
    ns->writes = ns->reads;
}

/* Online (remodel/passes.h): each document rewritten on its own, also in
 * place. */
size_t
rm_fields_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    out[0].keep[out[0].n_keep] = &s->u.fields.in;
    out[0].driver_field[out[0].n_keep++] = "_id";
    return 1;
}

/* unset and version have none: what they remove or overwrite is gone
 * from their results. Said per kind (remodel/plan.h). */
void
rm_fields_no_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    out->why = s->kind == RM_STEP_UNSET ? "the fields it removes are not in its results"
                                        : "the version it overwrites is not in its results";
}

/* set's inverse (remodel/plan.h): the fields it writes removed, as
 * denormalize's copies are. Exact only where no document had one of them
 * before the step (a value it overwrote is not in its results): the
 * online run records that, and rollback --carry-writes refuses where it
 * did not hold. Top-level fields only: removing a.b would leave an empty
 * a where the set made it. */
void
rm_set_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_fields_t *f = &s->u.fields;
    char *names[64];
    if (f->n > sizeof names / sizeof names[0]) {
        out->why = "it sets more than 64 fields: its inverse removes at most 64";
        return;
    }
    for (size_t i = 0; i < f->n; i++) {
        if (f->paths[i].n != 1) {
            out->why = "it sets a field inside another: its inverse removes top-level fields only";
            return;
        }
        names[i] = f->paths[i].text;
    }
    out->plan = rm_inverse_unset (&f->in, names, f->n);
}

/* rename's inverse (remodel/plan.h): of top-level fields, the same
 * rename the other way. */
void
rm_rename_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_fields_t *f = &s->u.fields;
    bson_t steps, st, r, fields;
    if (s->filter) {
        /* The renamed documents no longer match a filter on the old name,
         * and the inverse cannot tell them from those left out. */
        out->why = "it has a filter: which documents it renamed is not in its results";
        return;
    }
    for (size_t i = 0; i < f->n; i++)
        if (f->paths[i].n != 1 || f->to[i].n != 1) {
            out->why = "its inverse renames top-level fields only";
            return;
        }
    out->plan = bson_new ();
    BSON_APPEND_INT32 (out->plan, "remodel", 1);
    BSON_APPEND_ARRAY_BEGIN (out->plan, "steps", &steps);
    BSON_APPEND_DOCUMENT_BEGIN (&steps, "0", &st);
    BSON_APPEND_DOCUMENT_BEGIN (&st, "rename", &r);
    BSON_APPEND_UTF8 (&r, "in", f->in.text);
    BSON_APPEND_DOCUMENT_BEGIN (&r, "fields", &fields);
    for (size_t i = 0; i < f->n; i++)
        BSON_APPEND_UTF8 (&fields, f->to[i].text, f->paths[i].text);
    bson_append_document_end (&r, &fields);
    bson_append_document_end (&st, &r);
    bson_append_document_end (&steps, &st);
    bson_append_array_end (out->plan, &steps);
}
