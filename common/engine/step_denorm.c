/* denormalize: the hash join (the referenced side fits in --memory; only
 * its copied values are kept, not whole documents) and the dispatch to the
 * external sort-merge otherwise. */
#include <string.h>

#include "denorm.h"
#include "keytab.h"
#include "plan_parse.h"

#define PER_DOC_OVERHEAD 100

typedef struct {
    rm_keytab_t keys; /* join key -> offset of its copied values in vals */
    rm_buf_t vals, tmp, one;
} dtable_t;

/* The hash join's table: key -> copied values of the first document of
 * `from` with that key (only the copies are kept, not whole documents). */
typedef struct rm_denorm_table {
    const rm_denorm_t *d;
    dtable_t t;
    rm_denorm_apply_t *apply;
    rm_refs_t refs;
    const uint8_t **values;
    size_t values_cap;
    uint64_t docs, bytes; /* of `from`, for the memory estimate */
    bool since_36681;     /* the engine's $lookup rules (rm_join_keys) */
    const char *from_name;
    /* The step's match failed on a document of `from` (err says why),
     * told at the next document of `in` or when the stage finishes. */
    bool failed;
    bson_error_t err;
} rm_denorm_table_t;

static rm_denorm_table_t *
rm_denorm_table_new (rm_engine_t *e, const rm_step_t *s, rm_step_run_t *run)
{
    rm_denorm_table_t *dt = bson_malloc0 (sizeof *dt);
    dt->d = &s->u.denorm;
    dt->since_36681 = e->opts.lookup_since_36681;
    dt->from_name = rm_engine_find (e, &dt->d->from)->stats->name;
    dt->apply = rm_denorm_apply_new (e, s, run);
    rm_keytab_init (&dt->t.keys, sizeof (size_t));
    return dt;
}

static void
rm_denorm_table_destroy (rm_denorm_table_t *dt)
{
    if (!dt)
        return;
    rm_denorm_apply_destroy (dt->apply);
    rm_buf_destroy (&dt->refs.keys);
    rm_keytab_destroy (&dt->t.keys);
    rm_buf_destroy (&dt->t.vals);
    rm_buf_destroy (&dt->t.tmp);
    rm_buf_destroy (&dt->t.one);
    bson_free (dt->values);
    bson_free (dt);
}

/* The one estimate of a table's memory, used in both engine modes so
 * they agree on which way a join goes. */
static uint64_t
need (uint64_t bytes, uint64_t docs)
{
    return bytes + docs * PER_DOC_OVERHEAD;
}

static uint64_t
rm_denorm_table_need (const rm_denorm_table_t *dt)
{
    return need (dt->bytes, dt->docs);
}

/* key -> copied values of the first document of `from` with that key. */
static void
rm_denorm_table_add (rm_denorm_table_t *dt, const uint8_t *doc, uint32_t doc_len)
{
    dtable_t *t = &dt->t;
    size_t nk, off = 0;
    bool values_made = false, take = false;
    size_t val_off = 0;

    rm_denorm_probe_from (dt->apply, doc, doc_len);
    dt->docs++;
    dt->bytes += doc_len;
    /* One the step's match leaves out is found by no reference. */
    if (!dt->failed && !rm_denorm_take_from (dt->apply, dt->from_name, doc, doc_len, &take, &dt->err))
        dt->failed = true;
    if (!take || dt->failed)
        return;
    nk = rm_join_keys (&dt->d->foreign, true, dt->since_36681, doc, doc_len, &t->tmp);
    for (size_t k = 0; k < nk; k++) {
        uint32_t len;
        bool fresh;
        size_t *slot_val;
        memcpy (&len, t->tmp.data + off, 4);
        slot_val = rm_keytab_add (&t->keys, t->tmp.data + off + 4, len, &fresh);
        if (fresh) {
            if (!values_made) {
                rm_denorm_values (dt->apply, doc, doc_len, &t->one);
                val_off = t->vals.len;
                rm_buf_append (&t->vals, t->one.data, t->one.len);
                values_made = true;
            }
            *slot_val = val_off;
        }
        off += 4 + len;
    }
}

static bool
rm_denorm_table_apply (rm_denorm_table_t *dt, const char *ns_name, const uint8_t *doc,
                       uint32_t len, const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    rm_refs_t *refs = &dt->refs;
    size_t off = 0;
    bool take;

    if (dt->failed) {
        *err = dt->err;
        return false;
    }
    *out = doc;
    *out_len = len;
    /* One the step's filter leaves out passes as it is. */
    if (!rm_denorm_take (dt->apply, false, ns_name, doc, len, &take, err))
        return false;
    if (!take)
        return true;
    rm_denorm_refs (dt->apply, doc, len, refs);
    if (refs->n > dt->values_cap) {
        dt->values_cap = refs->n * 2;
        dt->values = bson_realloc (dt->values, dt->values_cap * sizeof *dt->values);
    }
    for (size_t i = 0; i < refs->n; i++) {
        uint32_t klen;
        const size_t *val_off;
        memcpy (&klen, refs->keys.data + off, 4);
        dt->values[i] = NULL;
        if (klen == RM_DENORM_NO_REF) {
            off += 4;
            continue;
        }
        val_off = rm_keytab_find (&dt->t.keys, refs->keys.data + off + 4, klen);
        if (val_off)
            dt->values[i] = dt->t.vals.data + *val_off;
        off += 4 + klen;
    }
    return rm_denorm_apply (dt->apply, doc, len, dt->values, out, out_len, err) ||
           rm_doc_error (err, ns_name, "document", doc, len);
}

static bool
load (rm_denorm_table_t *dt, rm_ens_t *from, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (from->store, err);
    rm_frame_t f;
    int rc;

    if (!in)
        return false;
    while ((rc = rm_store_next (in, &f, err)) > 0 && !dt->failed)
        rm_denorm_table_add (dt, f.data, f.len);
    rm_instream_close (in);
    if (dt->failed) {
        *err = dt->err;
        return false;
    }
    return rc == 0;
}

bool
rm_denorm_hash_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_ens_t *in = rm_engine_find (e, &d->in), *from = rm_engine_find (e, &d->from);
    rm_denorm_table_t *dt = rm_denorm_table_new (e, s, rm_engine_step_run (e, s));
    rm_store_t *next = NULL;
    rm_instream_t *is = NULL;
    rm_frame_t f;
    bool ok;
    int rc = 0;

    ok = load (dt, from, err) && (next = rm_engine_store_new (e, in, err)) &&
         (is = rm_store_open (in->store, err));
    while (ok && (rc = rm_store_next (is, &f, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        ok = rm_denorm_table_apply (dt, in->stats->name, f.data, f.len, &out, &out_len, err) &&
             rm_store_add (next, out, (uint32_t) out_len, err);
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (is);
    rm_denorm_table_destroy (dt);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (in, next, err);
}

bool
rm_step_denorm_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *from = rm_engine_find (e, &s->u.denorm.from);
    uint64_t n = need (rm_store_bytes (from->store), rm_store_count (from->store));
    bool ok;
    if (n <= e->opts.memory) {
        ok = rm_engine_stores_fit (e, n, NULL, err) && rm_denorm_hash_run (e, s, err);
    } else {
        e->spilled = true;
        ok = rm_engine_stores_fit (e, e->opts.memory, NULL, err) && rm_denorm_sort_run (e, s, err);
    }
    rm_engine_stores_free (e);
    return ok;
}

/* The one-pass path (rm_stage_class_t), when no step changes `from`
 * (engine_stream.c sees to that): the table fills while `from` is read
 * (documents of `in` wait until it has been read whole), then each
 * document of `in` is looked up as it comes. */
static const rm_nsref_t *
denorm_reads_first (const rm_step_t *s)
{
    return &s->u.denorm.from;
}

static void
denorm_open (rm_engine_t *e, rm_stage_t *st)
{
    st->in = rm_engine_find (e, &st->s->u.denorm.in);
    st->from = rm_engine_find (e, &st->s->u.denorm.from);
    st->data = rm_denorm_table_new (e, st->s, rm_engine_step_run (e, st->s));
}

static uint64_t
denorm_fill (rm_stage_t *st, const uint8_t *doc, uint32_t len)
{
    rm_denorm_table_add (st->data, doc, len);
    return rm_denorm_table_need (st->data);
}

static bool
denorm_apply (rm_stage_t *st, const uint8_t *doc, uint32_t len, rm_emit_fn emit, void *ctx,
              const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    (void) emit;
    (void) ctx;
    return rm_denorm_table_apply (st->data, st->in->stats->name, doc, len, out, out_len, err);
}

/* A match that failed on a document of `from` and no document of `in`
 * came after to say so: said now. */
static bool
denorm_finish (rm_stage_t *st, rm_emit_fn emit, void *ctx, bson_error_t *err)
{
    rm_denorm_table_t *dt = st->data;
    (void) emit;
    (void) ctx;
    if (dt->failed)
        *err = dt->err;
    return !dt->failed;
}

static void
denorm_close (rm_stage_t *st)
{
    rm_denorm_table_destroy (st->data);
}

const rm_stage_class_t rm_denorm_stage = {.reads_first = denorm_reads_first,
                                          .open = denorm_open,
                                          .apply = denorm_apply,
                                          .fill = denorm_fill,
                                          .finish = denorm_finish,
                                          .close = denorm_close};

/* The checks once it has run (engine_checks.c): the fields it names; no
 * lookup finding anything is refused (unless `from` is empty: nothing to
 * find), most of them finding nothing is a warning (a few misses are the
 * data's own: a deleted product). */
void
rm_denorm_probes (const rm_step_t *s, rm_step_run_t *run)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_engine_add_probe (run, "localField", d->local.text, &d->in);
    rm_engine_add_probe (run, "foreignField", d->foreign.text, &d->from);
    for (size_t i = 0; i < d->n; i++)
        if (!d->exprs[i])
            rm_engine_add_probe (run, "fields", d->sources[i].text, &d->from);
}

bool
rm_denorm_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run, bson_error_t *err)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_engine_find (e, &d->in)->stats->missed += run->missed;
    /* (probe 1, foreignField's, counted `from`'s documents) */
    rm_join_seen_t j = {.lookups = true, .refs = run->lookups,
                        .partners = run->n_probes > 1 ? run->probes[1].docs : 0,
                        .found = run->lookups - run->missed, .refs_ns = d->in.text,
                        .partner_ns = d->from.text, .local = d->local.text,
                        .foreign = d->foreign.text};
    if (!rm_join_seen_check (&j, rm_engine_allows_missing (e, s), err))
        return false;
    if (run->missed * 2 > run->lookups)
        rm_engine_warn (e, s, "%llu of the %llu references in %s found nothing in %s (localField "
                        "\"%s\", foreignField \"%s\")", (unsigned long long) run->missed,
                        (unsigned long long) run->lookups, d->in.text, d->from.text,
                        d->local.text, d->foreign.text);
    return true;
}

/* The step in a plan (step_class.h): its keys read, then freed; its
 * namespaces, for plan.c. */

/* Target's name checked and added; source is a path (its "$" optional)
 * or, with expr, an expression over the matched document. */
static bool
denorm_add (rm_plan_ctx_t *c, rm_denorm_t *d, const char *target, const char *source,
            const bson_iter_t *expr)
{
    bson_error_t perr;
    if (!*target || strchr (target, '.') || target[0] == '$')
        return rm_plan_fail (c, "fields", "\"%s\" must be a plain field name (no dots, no $)",
                             target);
    if (!rm_plan_check_written (c, "fields", target))
        return false;
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp (d->targets[i], target))
            return rm_plan_fail (c, "fields", "\"%s\" is named twice", target);
    d->targets = bson_realloc (d->targets, (d->n + 1) * sizeof *d->targets);
    d->sources = bson_realloc (d->sources, (d->n + 1) * sizeof *d->sources);
    d->exprs = bson_realloc (d->exprs, (d->n + 1) * sizeof *d->exprs);
    d->targets[d->n] = bson_strdup (target);
    memset (&d->sources[d->n], 0, sizeof *d->sources);
    d->exprs[d->n] = NULL;
    d->n++;
    if (expr) {
        d->exprs[d->n - 1] = rm_expr_parse (expr, &perr);
        if (!d->exprs[d->n - 1])
            return rm_plan_fail (c, "fields", "\"%s\": %s", target, perr.message);
        if (!d->expr_doc)
            d->expr_doc = bson_new ();
        bson_append_iter (d->expr_doc, target, -1, expr);
        d->n_exprs++;
        return true;
    }
    if (source[0] == '$')
        source++; /* {"name": "$name"} reads like an aggregation expression */
    if (!rm_path_parse (&d->sources[d->n - 1], source, &perr))
        return rm_plan_fail (c, "fields", "%s", perr.message);
    return true;
}

bool
rm_plan_parse_denorm (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_denorm_t *d = &s->u.denorm;
    bson_error_t perr;
    bool has_foreign = false;
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "in")) ok = rm_plan_get_ns (c, it, &d->in);
        else if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &d->from);
        else if (!strcmp (k, "localField")) ok = rm_plan_get_path (c, it, &d->local);
        else if (!strcmp (k, "foreignField")) ok = rm_plan_get_path (c, it, &d->foreign), has_foreign = true;
        else if (!strcmp (k, "onMissing")) {
            const char *v;
            ok = rm_plan_get_string (c, it, &v);
            if (ok && !strcmp (v, "keep")) d->on_missing = RM_MISSING_KEEP;
            else if (ok && !strcmp (v, "null")) d->on_missing = RM_MISSING_NULL;
            else if (ok && !strcmp (v, "error")) d->on_missing = RM_MISSING_ERROR;
            else if (ok) ok = rm_plan_fail (c, k, "must be \"keep\", \"null\" or \"error\", not \"%s\"", v);
        } else if (!strcmp (k, "fields")) {
            bson_iter_t sub;
            if (BSON_ITER_HOLDS_DOCUMENT (it) && bson_iter_recurse (it, &sub)) {
                /* A string is a path (today's form, "$" optional); a
                 * variable ("$$ROOT.a", "$$REMOVE"), a document or an
                 * array, an expression over the matched document, as in
                 * $addFields after the $lookup. */
                while (ok && bson_iter_next (&sub)) {
                    if (BSON_ITER_HOLDS_UTF8 (&sub) &&
                        strncmp (bson_iter_utf8 (&sub, NULL), "$$", 2) != 0)
                        ok = denorm_add (c, d, bson_iter_key (&sub), bson_iter_utf8 (&sub, NULL),
                                         NULL);
                    else if (BSON_ITER_HOLDS_UTF8 (&sub) || BSON_ITER_HOLDS_DOCUMENT (&sub) ||
                             BSON_ITER_HOLDS_ARRAY (&sub))
                        ok = denorm_add (c, d, bson_iter_key (&sub), NULL, &sub);
                    else
                        return rm_plan_fail (c, k,
                                             "the source of \"%s\" must be a field path string "
                                             "or an expression ({\"$toUpper\": \"$code\"}; "
                                             "{\"$literal\": ...} for a constant)",
                                             bson_iter_key (&sub));
                }
            } else if (BSON_ITER_HOLDS_ARRAY (it) && bson_iter_recurse (it, &sub)) {
                while (ok && bson_iter_next (&sub)) {
                    if (!BSON_ITER_HOLDS_UTF8 (&sub))
                        return rm_plan_fail (c, k, "must list field names (strings)");
                    ok = denorm_add (c, d, bson_iter_utf8 (&sub, NULL), bson_iter_utf8 (&sub, NULL),
                                     NULL);
                }
            } else {
                return rm_plan_fail (c, k,
                                     "must be {\"target\": \"source.path\"} or [\"name\", ...]");
            }
            if (ok && d->n == 0)
                return rm_plan_fail (c, k, "names no field");
        }
        if (!ok)
            return false;
    }
    if (!has_foreign)
        rm_path_parse (&d->foreign, "_id", &perr);
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp (d->targets[i], "id") || (d->local.n == 1 && !strcmp (d->targets[i], d->local.parts[0])))
            return rm_plan_fail (c, "fields", "\"%s\" would overwrite the reference itself",
                                 d->targets[i]);
    if (d->in.text && d->from.text && !strcmp (d->in.text, d->from.text))
        return rm_plan_fail (c, "from", "must differ from \"in\" (%s)", d->in.text);
    return true;
}

void
rm_plan_clear_denorm (rm_step_t *s)
{
    rm_denorm_t *d = &s->u.denorm;
    rm_plan_nsref_clear (&d->in);
    rm_plan_nsref_clear (&d->from);
    rm_path_destroy (&d->local);
    rm_path_destroy (&d->foreign);
    for (size_t j = 0; j < d->n; j++) {
        bson_free (d->targets[j]);
        rm_path_destroy (&d->sources[j]);
        rm_expr_destroy (d->exprs[j]);
    }
    bson_free (d->targets);
    bson_free (d->sources);
    bson_free (d->exprs);
    if (d->expr_doc)
        bson_destroy (d->expr_doc);
}

/* in is read and written; from is only read. */
void
rm_plan_ns_denorm (const rm_step_t *s, rm_step_ns_t *ns)
{
    rm_step_refs_add (&ns->reads, &s->u.denorm.in, "in");
    rm_step_refs_add (&ns->reads, &s->u.denorm.from, "from");
    rm_step_refs_add (&ns->writes, &s->u.denorm.in, "in");
}

static void
pass_reads_path (const rm_path_t *path, void *arg)
{
    rm_pass_reads (arg, path->text, strlen (path->text));
}

/* Online (remodel/passes.h): the documents of `in`, each with the
 * partners its key matches; results keep their driver's _id unless a
 * target is under _id. */
size_t
rm_denorm_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_denorm_t *d = &s->u.denorm;
    if (rm_pass_same_ns (&d->in, &d->from))
        return rm_pass_refuse (s, err, "a namespace denormalized from itself runs offline only");
    out[0] = (rm_pass_t){.drive = 0, .partner = 1, .drive_key = &d->local,
                         .partner_key = &d->foreign, .keep = {&d->in}, .n_keep = 1,
                         .driver_field = {rm_pass_any_id (d->targets, d->n) ? NULL : "_id"}};
    /* Of each partner, the fields copied (and its _id and foreignField). */
    out[0].partner_some = true;
    out[0].partner_first = true;
    for (size_t i = 0; i < d->n; i++) {
        bool whole = false;
        if (!d->exprs[i])
            rm_pass_reads (&out[0], d->sources[i].text, strlen (d->sources[i].text));
        else
            rm_expr_paths (d->exprs[i], pass_reads_path, &out[0], &whole);
        if (whole)
            out[0].partner_some = false; /* $$ROOT: whole partners */
    }
    /* and what the step's match reads of them */
    rm_join_pass_reads (&out[0], s->match);
    return 1;
}

/* denormalize's inverse (remodel/plan.h): its copied fields removed from
 * `in`, whatever its filter, match or onMissing left them on. Exact only
 * where no document of `in` had one of them before the step (a value it
 * overwrote is not in its results): the online run records that, and
 * rollback --carry-writes refuses where it did not hold. */
void
rm_denorm_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    out->plan = rm_inverse_unset (&s->u.denorm.in, s->u.denorm.targets, s->u.denorm.n);
}
