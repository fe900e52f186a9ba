/* summarize (the computed and subset patterns): for each parent of `into`,
 * $group-style accumulators over its matching children of `from` (joined
 * as embed joins, fed in `sort` order or `from`'s), written as fields of
 * the parent: top-level, or inside the document `as`. A field of the same
 * name is replaced where it stands (so a re-run refreshes in place), new
 * ones go at the end. Parents without children get what $group gives an
 * empty group. `from` is only read. */
#include <string.h>

#include "docbuf.h"
#include "embed_join.h"
#include "plan_parse.h"
#include "remodel/accum.h"
#include "remodel/bsondepth.h"

typedef struct {
    rm_engine_t *e;
    const rm_summarize_t *m;
    rm_ens_t *into;
    rm_store_t *next;
    rm_acc_t **accs;
    bson_t results;
    rm_buf_t doc;
    const uint8_t *pdoc; /* the parent being summarized */
    uint32_t plen;
    bool *written;       /* per result: written into the parent (m->n) */
} sum_t;

static bool
is_result (const rm_summarize_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp (m->names[i], key))
            return true;
    return false;
}

static void
append_result (sum_t *s, const char *name)
{
    bson_iter_t it;
    if (bson_iter_init_find (&it, &s->results, name))
        rm_docbuf_copy (&s->doc, &it);
}

/* The results as the document `as`. */
static void
append_as (sum_t *s)
{
    size_t sub;
    rm_docbuf_key (&s->doc, BSON_TYPE_DOCUMENT, s->m->as);
    sub = rm_docbuf_begin (&s->doc);
    rm_docbuf_append_all (&s->doc, &s->results);
    rm_docbuf_end (&s->doc, sub);
}

static bool
on_begin (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sum_t *s = ctx;
    (void) err;
    s->pdoc = doc;
    s->plen = len;
    for (size_t a = 0; a < s->m->n; a++)
        rm_acc_reset (s->accs[a]);
    return true;
}

static bool
on_child (void *ctx, const rm_child_t *c, bson_error_t *err)
{
    sum_t *s = ctx;
    for (size_t a = 0; a < s->m->n; a++)
        if (!rm_acc_add (s->accs[a], c->doc, c->len, c->seq, err)) {
            rm_error_prefix (err, "\"%s\"", s->m->names[a]);
            return false;
        }
    return true;
}

static bool
on_end (void *ctx, bson_error_t *err)
{
    sum_t *s = ctx;
    const rm_summarize_t *m = s->m;
    bool *written = s->written, as_written = false;
    bson_t d;
    bson_iter_t it;
    size_t start;

    bson_reinit (&s->results);
    for (size_t a = 0; a < m->n; a++)
        if (!rm_acc_finish (s->accs[a], &s->results, m->names[a], err))
            return false;

    rm_buf_reset (&s->doc);
    start = rm_docbuf_begin (&s->doc);
    memset (written, 0, m->n * sizeof *written);
    bson_init_static (&d, s->pdoc, s->plen);
    bson_iter_init (&it, &d);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (m->as && !strcmp (k, m->as)) {
            append_as (s);
            as_written = true;
        } else if (!m->as && is_result (m, k)) {
            for (size_t a = 0; a < m->n; a++)
                if (!strcmp (m->names[a], k) && !written[a]) {
                    append_result (s, k);
                    written[a] = true;
                }
        } else {
            rm_docbuf_copy (&s->doc, &it);
        }
    }
    if (m->as && !as_written)
        append_as (s);
    for (size_t a = 0; !m->as && a < m->n; a++)
        if (!written[a])
            append_result (s, m->names[a]);
    rm_docbuf_end (&s->doc, start);
    /* $push of documents nests them: no deeper than MongoDB stores. The
     * parent's fields stay at their levels, the results' one below at
     * most (in `as`), and a document of n bytes nests at most n / 7
     * levels (RM_BSON_DEPTH_MIN_LEN): short ones need no walk. */
    if ((s->plen >= RM_BSON_DEPTH_MIN_LEN (RM_BSON_MAX_NESTING + 1) ||
         s->results.len >= RM_BSON_DEPTH_MIN_LEN (RM_BSON_MAX_NESTING)) &&
        !rm_engine_depth_ok (s->into->stats->name, "parent", s->pdoc, s->plen, s->doc.data,
                             s->doc.len, err))
        return false;
    return rm_store_add (s->next, s->doc.data, (uint32_t) s->doc.len, err);
}

/* A parent the step's filter leaves out: as it is, no summary. */
static bool
on_pass (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sum_t *s = ctx;
    return rm_store_add (s->next, doc, len, err);
}

static bool
on_finish (void *ctx, bson_error_t *err)
{
    sum_t *s = ctx;
    rm_store_t *next = s->next;
    s->next = NULL;
    return rm_engine_store_swap (s->into, next, err);
}

bool
rm_step_summarize_run (rm_engine_t *e, const rm_step_t *st, bson_error_t *err)
{
    const rm_summarize_t *m = &st->u.summarize;
    sum_t s;
    rm_join_t j = {.local = &m->local, .foreign = &m->foreign, .sort = &m->sort,
                   .from = &m->from, .into = &m->into, .begin = on_begin, .child = on_child,
                   .end = on_end, .pass = on_pass, .finish = on_finish,
                   .prepare = rm_join_copy_child, .ctx = &s};
    bool ok;

    memset (&s, 0, sizeof s);
    s.e = e;
    s.m = m;
    s.into = rm_engine_find (e, &m->into);
    s.accs = bson_malloc0 (m->n * sizeof *s.accs);
    s.written = bson_malloc0 ((m->n ? m->n : 1) * sizeof *s.written);
    for (size_t a = 0; a < m->n; a++)
        s.accs[a] = rm_acc_new (m->accs[a]);
    bson_init (&s.results);
    s.next = rm_engine_store_new (e, s.into, err);
    ok = s.next && rm_join_run (e, &j, err);
    rm_store_destroy (s.next);
    for (size_t a = 0; a < m->n; a++)
        rm_acc_destroy (s.accs[a]);
    bson_free (s.accs);
    bson_free (s.written);
    bson_destroy (&s.results);
    rm_buf_destroy (&s.doc);
    return ok;
}

/* The checks once it has run (engine_checks.c), as embed's. */
void
rm_summarize_probes (const rm_step_t *s, rm_step_run_t *run)
{
    rm_engine_add_probe (run, "localField", s->u.summarize.local.text, &s->u.summarize.into);
    rm_engine_add_probe (run, "foreignField", s->u.summarize.foreign.text, &s->u.summarize.from);
}

bool
rm_summarize_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                    bson_error_t *err)
{
    const rm_summarize_t *m = &s->u.summarize;
    return rm_engine_join_check (e, s, run, &m->from, &m->into, &m->local, &m->foreign, err);
}

/* The step in a plan (step_class.h): its keys read, then freed; its
 * namespaces, for plan.c. */

bool
rm_plan_parse_summarize (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_summarize_t *m = &s->u.summarize;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "into")) ok = rm_plan_get_ns (c, it, &m->into);
        else if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &m->from);
        else if (!strcmp (k, "localField")) ok = rm_plan_get_path (c, it, &m->local);
        else if (!strcmp (k, "foreignField")) ok = rm_plan_get_path (c, it, &m->foreign);
        else if (!strcmp (k, "as")) ok = rm_plan_get_field_name (c, it, &m->as);
        else if (!strcmp (k, "sort")) ok = rm_plan_parse_sort (c, it, &m->sort);
        else if (!strcmp (k, "fields")) {
            bson_iter_t sub;
            if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
                return rm_plan_fail (c, k,
                                     "must be a document {\"name\": {\"$sum\": \"$qty\"}, ...}");
            while (bson_iter_next (&sub)) {
                const char *name = bson_iter_key (&sub);
                bson_error_t aerr;
                rm_acc_spec_t *acc;
                if (!*name || strchr (name, '.') || name[0] == '$')
                    return rm_plan_fail (c, k, "\"%s\" must be a plain field name (no dots, no $)",
                                         name);
                acc = rm_acc_spec_parse (&sub, &aerr);
                if (!acc)
                    return rm_plan_fail (c, k, "\"%s\": %s", name, aerr.message);
                m->names = bson_realloc (m->names, (m->n + 1) * sizeof *m->names);
                m->accs = bson_realloc (m->accs, (m->n + 1) * sizeof *m->accs);
                m->names[m->n] = bson_strdup (name);
                m->accs[m->n++] = acc;
            }
            if (m->n == 0)
                return rm_plan_fail (c, k, "names no field");
            {
                uint32_t flen;
                const uint8_t *fdata;
                bson_iter_document (it, &flen, &fdata);
                if (m->exprs)
                    bson_destroy (m->exprs);
                m->exprs = bson_new_from_data (fdata, flen);
            }
        }
        if (!ok)
            return false;
    }
    if (m->into.text && m->from.text && !strcmp (m->into.text, m->from.text))
        return rm_plan_fail (c, "into", "must differ from \"from\" (%s)", m->from.text);
    /* Without "as", the results are top-level fields of the parents. */
    for (size_t i = 0; !m->as && i < m->n; i++)
        if (!rm_plan_check_written (c, "fields", m->names[i]))
            return false;
    return true;
}

void
rm_plan_clear_summarize (rm_step_t *s)
{
    rm_summarize_t *m = &s->u.summarize;
    rm_plan_nsref_clear (&m->into);
    rm_plan_nsref_clear (&m->from);
    rm_path_destroy (&m->local);
    rm_path_destroy (&m->foreign);
    bson_free (m->as);
    rm_plan_sortspec_clear (&m->sort);
    for (size_t j = 0; j < m->n; j++) {
        bson_free (m->names[j]);
        rm_acc_spec_destroy (m->accs[j]);
    }
    bson_free (m->names);
    bson_free (m->accs);
    if (m->exprs)
        bson_destroy (m->exprs);
}

/* into is read and written; from is only read. */
void
rm_plan_ns_summarize (const rm_step_t *s, rm_step_ns_t *ns)
{
    rm_step_refs_add (&ns->reads, &s->u.summarize.into, "into");
    rm_step_refs_add (&ns->reads, &s->u.summarize.from, "from");
    rm_step_refs_add (&ns->writes, &s->u.summarize.into, "into");
}

/* The fields of the children an accumulator's expression may read (it):
 * each "$path" string ("$$ROOT.path", "$$CURRENT.path" too) and each key
 * of a sortBy; $$ROOT itself reads whole children (rm_pass_reads takes
 * the leading '$' so). A superset does no harm: {"$literal": "$x"} adds
 * x. */
static void
expr_reads (rm_pass_t *p, bson_iter_t *it)
{
    while (bson_iter_next (it)) {
        bson_iter_t sub;
        if (BSON_ITER_HOLDS_UTF8 (it)) {
            uint32_t len;
            const char *v = bson_iter_utf8 (it, &len);
            if (!len || v[0] != '$')
                continue; /* a literal */
            if (!strncmp (v, "$$ROOT.", 7))
                rm_pass_reads (p, v + 7, len - 7);
            else if (!strncmp (v, "$$CURRENT.", 10))
                rm_pass_reads (p, v + 10, len - 10);
            else if (len > 1 && v[1] != '$')
                rm_pass_reads (p, v + 1, len - 1); /* "$a.b" */
            else
                rm_pass_reads (p, v, len); /* $$ROOT: whole children */
        } else if ((BSON_ITER_HOLDS_DOCUMENT (it) || BSON_ITER_HOLDS_ARRAY (it)) &&
                   bson_iter_recurse (it, &sub)) {
            if (BSON_ITER_HOLDS_DOCUMENT (it) && !strcmp (bson_iter_key (it), "sortBy")) {
                bson_iter_t key = sub;
                while (bson_iter_next (&key))
                    rm_pass_reads (p, bson_iter_key (&key), bson_iter_key_len (&key));
            }
            expr_reads (p, &sub);
        }
    }
}

/* Online (remodel/passes.h): the documents of `into`, each with the
 * partners its key matches. */
size_t
rm_summarize_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_summarize_t *m = &s->u.summarize;
    bson_iter_t it;
    if (rm_pass_same_ns (&m->into, &m->from))
        return rm_pass_refuse (s, err, "a namespace summarized from itself runs offline only");
    out[0] = (rm_pass_t){.drive = 0, .partner = 1, .drive_key = &m->local,
                         .partner_key = &m->foreign, .keep = {&m->into}, .n_keep = 1,
                         .driver_field = {(m->as ? rm_pass_is_id (m->as)
                                                 : rm_pass_any_id (m->names, m->n))
                                              ? NULL
                                              : "_id"}};
    /* Of each partner, what the order they are fed in and the
     * accumulators read (and its _id and foreignField). */
    out[0].partner_some = true;
    for (size_t i = 0; i < m->sort.n; i++)
        rm_pass_reads (&out[0], m->sort.keys[i].path.text, strlen (m->sort.keys[i].path.text));
    if (m->exprs && bson_iter_init (&it, m->exprs))
        expr_reads (&out[0], &it);
    else
        rm_pass_reads (&out[0], "$", 1);
    /* and what the step's match reads of them (the filter reads the
     * drivers, which come whole) */
    rm_join_pass_reads (&out[0], s->match);
    return 1;
}

/* summarize's inverse (remodel/plan.h): its computed fields removed from
 * `into` (the document `as`, or each top-level result). Exact only where
 * no document of `into` had one of them before the step, as denormalize's
 * (step_denorm.c). */
void
rm_summarize_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_summarize_t *m = &s->u.summarize;
    char *as[1] = {m->as};
    out->plan = m->as ? rm_inverse_unset (&m->into, as, 1) : rm_inverse_unset (&m->into, m->names, m->n);
}
