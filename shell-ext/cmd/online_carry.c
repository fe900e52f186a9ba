/* rollback --carry-writes (online_cmd.h): the application's writes to the
 * switched-in collections carried back into the originals through the
 * plan's inverse, as a reverse sync does.
 *
 * Only a plan whose inverse gives back the originals exactly carries:
 * each step's row of the step table says whether it has one
 * (rm_step_inverse, remodel/plan.h: an embed's is an extract, an
 * extract's an embed, exact only when each element had an _id of its own,
 * bucketize's an unbucketize, a rename's the same rename the other way,
 * each under the conditions its step file states). A plan of several
 * steps carries through their inverses composed, the last step's first,
 * each staged in a collection of its own; the first step without one is
 * refused, named. A namespace the old design has no place for cannot
 * take a document whose parent is not there (refused, before anything is
 * written).
 *
 * The inverse runs in the core's engine (remodel/batchstep.h), as every
 * step online does, over the results as they are now (under their result
 * names, once rollback has renamed the originals back), and each document
 * it makes is compared with the original of its _id: the same fields and
 * values in any order (online_fields_digest: a server may keep another
 * order) stays as it is; one that differs replaces it; a new one is
 * inserted; an original the inverse no longer makes (deleted by the
 * application) is deleted. So it is idempotent: a carry killed part way is
 * done again by the next rollback.
 *
 * A finalize stopped part way through the switch leaves namespaces not
 * switched in (the record's unswitched): their originals stayed where the
 * application writes, so what the inverse makes for them is compared, not
 * written. One that differs is a write through a switched-in namespace
 * (an embedded child, say) or the application's own to the original, and
 * which is not known: refused, naming them, both kept (the results stay
 * beside the originals). An original there that the inverse no longer
 * makes stays (keeping it loses no write).
 *
 * From one deployment to another (--to-uri, online_dest_rollback.c), the
 * same computation: the results are read on the destination under their
 * final names, the originals compared and written on the source (the
 * stage collections, whose names hold "_remodel_", on the destination);
 * nothing is renamed. A dry run there counts what would be inserted,
 * replaced and deleted, writing nothing: only through an inverse of one
 * step, as the stages of several would be written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_carry_rule.h"
#include "online_cmd.h"
#include "remodel/batchstep.h"

/* What each refusal below leaves, and the way without carrying. */
static const char *
refused_tail (const online_t *on)
{
    return on->run->pair ? "nothing written to the source: --discard-writes-after-switch forgets the "
                      "commit without the writes made on the destination since"
                    : "nothing renamed: --discard-writes-after-switch rolls back without the "
                      "writes made after the switch";
}

/* Where a step loses what its inverse would need, the next run can keep
 * it: said after the refusal's reason. */
static const char keep_advice[] = " (a run with --keep-before keeps it for rollback "
                                  "--carry-writes: for the next plan, or this one run again)";

typedef struct {
    online_t *on;
    online_after_t a;
    online_idset_t seen[ONLINE_AFTER_MAX];
    mongoc_collection_t *originals[ONLINE_AFTER_MAX];
    bson_t sel;             /* {_id: ...}, refilled for each document */
    /* What the inverse made, compared with the originals a batch at a
     * time: one {_id: {$in: ...}} read a batch, the originals it finds in
     * there, looked up by their _ids' hashes (by). */
    online_docs_t pend[ONLINE_AFTER_MAX], there;
    struct carry_by { uint64_t h; size_t i; } *by;
    size_t by_cap;
    /* A composed inverse: where each namespace is read from now (its
     * result, then what the last step's inverse gave back, in the stage
     * collections COLL_remodel_ID_carryJ), and, before the last stage,
     * where each one's output goes (sinks). */
    char from[ONLINE_AFTER_MAX][400];
    mongoc_collection_t *sink[ONLINE_AFTER_MAX];
    bool final;
    /* Documents a batch: read, looked up by one $in, inserted by one
     * command into a stage collection. The server's insert chunk (its
     * capabilities record), within --batch-size. */
    size_t batch;
    bson_t *out;
    const bson_t **outp;
    bool exists[ONLINE_AFTER_MAX]; /* the namespace has a collection in the old design */
    bool dry;               /* only count what has nowhere to go (missing) */
    int64_t missing;
    int64_t inserted[ONLINE_AFTER_MAX], replaced[ONLINE_AFTER_MAX], deleted[ONLINE_AFTER_MAX];
    bool held[ONLINE_AFTER_MAX];   /* not switched in: compared, not written */
    bool counting;          /* a dry run (--to-uri): counted, not written */
    int64_t differ[ONLINE_AFTER_MAX];
    /* The plan's step whose inverse this pass runs from what run
     * --keep-before kept (online_carry_kept.c; NULL: the engine runs
     * it), and a batch of a kept set's namespace on its way there. */
    const rm_step_t *kept;
    online_docs_t kb;
} carry_t;

/* The inverse of the plan into inv (online_carry_inverse); false with
 * RM_ERR_UNSUPPORTED naming the first step that has none. */
static bool
inverse (online_t *on, rm_plan_t *inv, bson_error_t *err)
{
    bson_t plan;
    char *json;
    const char *why;
    size_t refused;
    bool ok, *kept;

    memset (inv, 0, sizeof *inv);
    if (!online_plan_flag (on, "keepBefore", &on->own_run->keep_before, err))
        return false;
    kept = bson_malloc0 ((on->run->plan.n + 1) * sizeof *kept);
    for (size_t i = 0; i < on->run->plan.n; i++)
        kept[i] = online_kept_step (on, &on->run->plan.steps[i]);
    ok = online_carry_inverse (&on->run->plan, kept, &plan, &refused, &why);
    bson_free (kept);
    if (!ok) {
        const rm_step_t *s = &on->run->plan.steps[refused];
        bson_destroy (&plan);
        rm_error_set (err, RM_ERR_UNSUPPORTED, "plan %s: step %zu (%s): %s%s; %s", on->run->names.name,
                      s->index, s->op, why, s->kind == RM_STEP_DELETE ? keep_advice : "",
                      refused_tail (on));
        return false;
    }
    json = bson_as_relaxed_extended_json (&plan, NULL);
    ok = rm_plan_parse (inv, json, strlen (json), err);
    if (!ok)
        rm_error_prefix (err, "plan %s: its inverse", on->run->names.name);
    bson_free (json);
    bson_destroy (&plan);
    return ok;
}

/* An inverse that gives an element back as it was only when it was a
 * document with an _id of its own (an extract's: otherwise its child has
 * a generated _id, which the embed would leave in it; iv->own_ids): every
 * element of the originals' array checked, where they are now (back:
 * under their own names, else their backups'). */
static bool
elements_own_ids (online_t *on, const rm_step_t *s, const rm_step_inverse_t *iv, bool back,
                  bson_error_t *err)
{
    const rm_nsref_t *from = iv->own_ids;
    const char *path = iv->own_ids_path;
    char backup[400];
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *coll;
    bson_t filter = BSON_INITIALIZER, *opts;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true, aside = !back;

    rm_name_backup (&on->run->names, from->coll, backup, sizeof backup);
    /* A switch stopped part way has an original not yet renamed aside:
     * under its own name still. */
    if (aside && !online_coll_exists (on, from->db, backup, &aside, err))
        return false;
    coll = online_collection (on, from->db, aside ? backup : from->coll);
    opts = BCON_NEW ("projection", "{", path, BCON_INT32 (1), "}");
    cur = ops->find (on, coll, &filter, opts);
    while (ok && ops->next (cur, &doc)) {
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
                rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: plan %s: step %zu (%s): its "
                              "inverse gives the elements of %s back only when each had an _id "
                              "of its own, and %s's %s has one without; %s", on->run->where,
                              on->run->names.name, s->index, s->op, from->text, text, path,
                              refused_tail (on));
                bson_free (text);
                bson_destroy (&sel);
                ok = false;
            }
    }
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading the originals");
    bson_destroy (opts);
    mongoc_collection_destroy (coll);
    return ok;
}

/* The refusal of step s's inverse, which removes field from ns: what
 * it would lose (said) and how to roll back without carrying. */
static bool
not_absent (online_t *on, const rm_step_t *s, const char *field, const char *ns,
            const char *said, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: plan %s: step %zu (%s): its inverse removes "
                  "\"%s\" from %s, which is exact only where no document had it before the "
                  "run, and %s%s; %s", on->run->where, on->run->names.name, s->index, s->op, field, ns, said,
                  s->kind == RM_STEP_SET ? keep_advice : "", refused_tail (on));
    return false;
}

/* An inverse that removes the fields its step wrote (inv's unset, from
 * denormalize or summarize) is exact where none of them was there
 * before: as the run recorded them at its start (online_preflight.c's
 * <state-db>.before), and in the originals now, where the application
 * may have written one since (back: under their own names, else their
 * backups'). */
static bool
fields_absent (online_t *on, const rm_step_t *s, const rm_step_t *u, bool back,
               bson_error_t *err)
{
    const rm_fields_t *f = &u->u.fields;
    bson_t doc;
    bool found, ok, aside = !back;
    char backup[400], reason[1024];
    const char *field;
    mongoc_collection_t *coll;

    ok = online_state_get (on, "before", on->run->names.id, &doc, &found,
                           "reading the fields there before the run", err);
    if (ok) {
        switch (online_carry_before (found ? &doc : NULL, on->run->names.digest, s->index, &field,
                                     reason, sizeof reason)) {
        case ONLINE_CARRY_ABSENT:
            break;
        case ONLINE_CARRY_PRESENT:
            ok = not_absent (on, s, field, f->in.text, reason, err);
            break;
        default:
            ok = not_absent (on, s, f->paths[0].text, f->in.text, reason, err);
        }
    }
    bson_destroy (&doc);
    if (!ok)
        return false;
    rm_name_backup (&on->run->names, f->in.coll, backup, sizeof backup);
    if (aside && !online_coll_exists (on, f->in.db, backup, &aside, err))
        return false;
    coll = online_collection (on, f->in.db, aside ? backup : f->in.coll);
    for (size_t i = 0; ok && i < f->n; i++) {
        bson_t *q = BCON_NEW (f->paths[i].text, "{", "$exists", BCON_BOOL (true), "}");
        bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "limit",
                                 BCON_INT64 (1));
        online_cursor_t *cur = online_ops (on)->find (on, coll, q, opts);
        const bson_t *d;
        bson_error_t why;
        bool read;
        if (online_ops (on)->next (cur, &d)) {
            bson_t sel = BSON_INITIALIZER;
            char *text, *said;
            online_id_filter (bson_get_data (d), d->len, &sel);
            text = bson_as_relaxed_extended_json (&sel, NULL);
            said = bson_strdup_printf ("the original %s has it now", text);
            ok = not_absent (on, s, f->paths[i].text, f->in.text, said, err);
            bson_free (said);
            bson_free (text);
            bson_destroy (&sel);
        }
        /* Its error asked only when it found none, as before. */
        read = online_ops (on)->end (cur, ok ? &why : NULL);
        if (ok && !read)
            ok = online_fail (on, err, &why, "reading the originals");
        bson_destroy (opts);
        bson_destroy (q);
    }
    mongoc_collection_destroy (coll);
    return ok;
}

/* A kept delete gives back the documents it dropped where their
 * originals are still there (online_carry_kept.c): its input must then
 * be the originals, no earlier step's results. */
static bool
kept_check (online_t *on, const rm_step_t *s, bson_error_t *err)
{
    size_t i = s->index - 1;
    if (s->kind != RM_STEP_DELETE || !online_carry_written_before (on, i, s->u.copy.from.text))
        return true;
    rm_error_set (err, RM_ERR_UNSUPPORTED, "plan %s: step %zu (%s): what it kept is given back "
                  "only where it deletes from the originals, and an earlier step rewrote %s; %s",
                  on->run->names.name, s->index, s->op, s->u.copy.from.text, refused_tail (on));
    return false;
}

bool
online_carry_check (online_t *on, bool back, bson_error_t *err)
{
    rm_plan_t inv;
    bool planned = inverse (on, &inv, err), ok = planned;
    /* inv runs the plan's inverses the last step's first. */
    for (size_t j = 0; ok && j < inv.n; j++) {
        const rm_step_t *s = &on->run->plan.steps[on->run->plan.n - 1 - j];
        /* What a kept step overwrote or dropped comes back from the
         * record: nothing of it is lost. */
        if (online_kept_step (on, s))
            ok = kept_check (on, s, err);
        else if (inv.steps[j].kind == RM_STEP_UNSET)
            ok = fields_absent (on, s, &inv.steps[j], back, err);
    }
    if (planned)
        rm_plan_destroy (&inv);
    /* An inverse whose exactness is the data's (an extract's) is checked
     * in the originals: only where no earlier step rewrote its source. */
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        rm_step_inverse_t iv;
        rm_step_inverse (s, &iv);
        if (iv.plan)
            bson_destroy (iv.plan);
        if (!iv.own_ids)
            continue;
        if (online_carry_written_before (on, i, iv.own_ids->text)) {
            rm_error_set (err, RM_ERR_UNSUPPORTED, "plan %s: step %zu (%s): its inverse is "
                          "exact only when each element had an _id of its own, which the "
                          "originals cannot show once an earlier step rewrote %s; %s",
                          on->run->names.name, s->index, s->op, iv.own_ids->text, refused_tail (on));
            ok = false;
        } else {
            ok = elements_own_ids (on, s, &iv, back, err);
        }
    }
    return ok;
}

void
online_carry_offer (online_t *on, bool back, const char *works, char *buf, size_t cap)
{
    bson_error_t why;
    const char *tail = refused_tail (on);
    char *cut;

    memset (&why, 0, sizeof why);
    if (online_carry_check (on, back, &why)) {
        snprintf (buf, cap, "%s", works);
        return;
    }
    /* The refusal's own advice is the caller's sentence already. */
    cut = strstr (why.message, tail);
    if (cut && cut - why.message >= 2)
        cut[-2] = '\0';
    /* Its own line: within the refusal's it would pass an error's room. */
    online_say_warn (on, "rollback: --carry-writes cannot carry the writes back: %s", why.message);
    snprintf (buf, cap, "--carry-writes cannot carry them back for this plan (said above)");
}

static int
by_cmp (const void *x, const void *y)
{
    const struct carry_by *a = x, *b = y;
    return a->h < b->h ? -1 : a->h > b->h;
}

/* The original with doc's _id among those read for the batch (NULL:
 * none). */
static const uint8_t *
original_of (const carry_t *c, const uint8_t *doc, uint32_t len, uint32_t *olen)
{
    struct carry_by key = {online_id_hash (doc, len), 0};
    size_t lo = 0, hi = c->there.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->by[mid].h < key.h)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < c->there.n && c->by[lo].h == key.h; lo++) {
        const uint8_t *o = online_doc_bytes (&c->there, c->by[lo].i);
        *olen = c->there.docs[c->by[lo].i].len;
        if (online_same_id (o, *olen, doc, len))
            return o;
    }
    return NULL;
}

/* The batch of move k into the originals: each document compared with
 * the original of its _id (read in one query), inserted, replaced or
 * left as it is. */
static bool
flush (carry_t *c, size_t k, bson_error_t *err)
{
    online_t *on = c->on;
    online_docs_t *p = &c->pend[k];
    online_values_t ids;
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur;
    const bson_t *now;
    bson_error_t why;
    bool ok = true;

    if (!p->n)
        return true;
    online_values_init (&ids);
    for (size_t i = 0; i < p->n; i++) {
        bson_iter_t id;
        if (bson_iter_init_from_data (&id, online_doc_bytes (p, i), p->docs[i].len) &&
            bson_iter_find (&id, "_id"))
            online_values_add (&ids, &id);
    }
    online_docs_reset (&c->there);
    cur = ops->keys (on, c->originals[k], "_id", &ids.arr, NULL);
    while (ops->next (cur, &now))
        online_docs_add (&c->there, bson_get_data (now), now->len, -1);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading the originals");
    bson_destroy (&ids.arr);
    if (ok && c->there.n > c->by_cap) {
        c->by_cap = c->there.n;
        c->by = bson_realloc (c->by, c->by_cap * sizeof *c->by);
    }
    for (size_t i = 0; ok && i < c->there.n; i++) {
        c->by[i].h = online_id_hash (online_doc_bytes (&c->there, i), c->there.docs[i].len);
        c->by[i].i = i;
    }
    if (ok)
        qsort (c->by, c->there.n, sizeof *c->by, by_cmp);
    for (size_t i = 0; ok && i < p->n; i++) {
        const uint8_t *doc = online_doc_bytes (p, i), *o;
        uint32_t len = p->docs[i].len, olen = 0;
        bson_t d;
        bson_init_static (&d, doc, len);
        bson_reinit (&c->sel);
        online_id_filter (doc, len, &c->sel);
        o = original_of (c, doc, len, &olen);
        online_carry_write_t w = online_carry_write (o, olen, doc, len);
        if (c->held[k]) {
            c->differ[k] += w != ONLINE_CARRY_KEEP;
        } else if (c->counting) {
            c->inserted[k] += w == ONLINE_CARRY_INSERT;
            c->replaced[k] += w == ONLINE_CARRY_REPLACE;
        } else if (w == ONLINE_CARRY_INSERT) {
            ok = online_lease_check (on, err) &&
                 (ops->write (on, c->originals[k], ONLINE_W_INSERT, NULL, &d, false, false, NULL,
                              &why) ||
                  online_fail (on, err, &why, "carrying a document back"));
            c->inserted[k] += ok;
        } else if (w == ONLINE_CARRY_REPLACE) {
            ok = online_lease_check (on, err) &&
                 (ops->write (on, c->originals[k], ONLINE_W_REPLACE, &c->sel, &d, false, false,
                              NULL, &why) ||
                  online_fail (on, err, &why, "carrying a document back"));
            c->replaced[k] += ok;
        }
    }
    online_docs_reset (p);
    return ok;
}

/* The first of a write command's reply's errors (writeErrors, then its
 * writeConcernError) into why, as the driver says one; false when it
 * has one. */
static bool
write_reply_ok (const bson_t *reply, bson_error_t *why)
{
    bson_iter_t it, e, f;
    uint32_t domain = MONGOC_ERROR_COMMAND;
    if (bson_iter_init_find (&it, reply, "writeErrors") && BSON_ITER_HOLDS_ARRAY (&it) &&
        bson_iter_recurse (&it, &e) && bson_iter_next (&e) && BSON_ITER_HOLDS_DOCUMENT (&e))
        bson_iter_recurse (&e, &f);
    else if (bson_iter_init_find (&it, reply, "writeConcernError") &&
             BSON_ITER_HOLDS_DOCUMENT (&it) && bson_iter_recurse (&it, &f))
        domain = MONGOC_ERROR_WRITE_CONCERN;
    else
        return true;
    memset (why, 0, sizeof *why);
    why->domain = domain;
    while (bson_iter_next (&f))
        if (!strcmp (bson_iter_key (&f), "code"))
            why->code = (uint32_t) bson_iter_as_int64 (&f);
        else if (!strcmp (bson_iter_key (&f), "errmsg") && BSON_ITER_HOLDS_UTF8 (&f))
            bson_strncpy (why->message, bson_iter_utf8 (&f, NULL), sizeof why->message);
    return false;
}

/* docs into c (a stage collection: on's connection's), as the driver's
 * insert_many sent them: insert commands, ordered, in the connection's
 * write concern; each within a command's 16 MB (the driver's within a
 * message's 48: a stage of larger documents is sent in more commands). */
static bool
insert_ordered (online_t *on, mongoc_collection_t *c, const bson_t **docs, size_t n,
                bson_error_t *why)
{
    const mongoc_write_concern_t *wc = mongoc_client_get_write_concern (on->client);
    const size_t cap = 16 * 1024 * 1024 - 64 * 1024;
    bool ok = true;
    for (size_t i = 0; ok && i < n;) {
        bson_t *cmd = BCON_NEW ("insert", BCON_UTF8 (mongoc_collection_get_name (c)));
        bson_t arr, reply;
        size_t bytes = 0;
        char key[16];
        const char *kp;
        BSON_APPEND_ARRAY_BEGIN (cmd, "documents", &arr);
        for (uint32_t k = 0; i < n && (k == 0 || bytes + docs[i]->len <= cap); i++, k++) {
            bson_uint32_to_string (k, &kp, key, sizeof key);
            BSON_APPEND_DOCUMENT (&arr, kp, docs[i]);
            bytes += docs[i]->len;
        }
        bson_append_array_end (cmd, &arr);
        BSON_APPEND_BOOL (cmd, "ordered", true);
        if (wc && !mongoc_write_concern_is_default (wc))
            mongoc_write_concern_append ((mongoc_write_concern_t *) wc, cmd);
        ok = online_ops (on)->command (on, c, NULL, cmd, &reply, why) &&
             write_reply_ok (&reply, why);
        bson_destroy (&reply);
        bson_destroy (cmd);
    }
    return ok;
}

/* The batch of move k into its stage collection. */
static bool
sink_flush (carry_t *c, size_t k, bson_error_t *err)
{
    online_docs_t *p = &c->pend[k];
    bson_error_t why;
    bool ok;
    if (!p->n)
        return true;
    for (size_t i = 0; i < p->n; i++) {
        bson_init_static (&c->out[i], online_doc_bytes (p, i), p->docs[i].len);
        c->outp[i] = &c->out[i];
    }
    ok = online_lease_check (c->on, err) &&
         (insert_ordered (c->on, c->sink[k], c->outp, p->n, &why) ||
          online_fail (c->on, err, &why, "writing what an inverse step gave back"));
    online_docs_reset (p);
    return ok;
}

/* One document the inverse made (or one passed through), for its
 * original's place (a batch at a time: flush). */
static bool
put (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    carry_t *c = ctx;
    online_t *on = c->on;
    size_t k = 0;

    while (k < c->a.n && strcmp (c->a.c[k].ns, ns) != 0)
        k++;
    bson_reinit (&c->sel);
    if (k == c->a.n || !online_id_filter (doc, len, &c->sel)) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: the inverse made a document of %s, "
                      "which the plan did not switch (or one without _id)", on->run->where,
                      on->run->names.name, ns);
        return false;
    }
    if (!online_idset_add (&c->seen[k], online_id_hash (doc, len))) {
        char *text = bson_as_relaxed_extended_json (&c->sel, NULL);
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: carrying back makes two documents of "
                      "%s with %s (the application gave one _id to two of them): carry "
                      "stopped; the results stay", on->run->where, on->run->names.name, ns, text);
        bson_free (text);
        return false;
    }
    /* Before the last stage: into the stage's collection. */
    if (!c->final) {
        online_docs_add (&c->pend[k], doc, len, -1);
        return c->pend[k].n < c->batch || sink_flush (c, k, err);
    }
    /* A namespace the plan made (an extract's children) has no place in
     * the old design: what the inverse leaves there (children of no
     * parent) cannot be carried. */
    if (c->dry || !c->exists[k]) {
        c->missing += !c->exists[k];
        return true;
    }
    online_docs_add (&c->pend[k], doc, len, -1);
    return c->pend[k].n < c->batch || flush (c, k, err);
}

/* The originals of move k the inverse no longer makes: deleted since. */
static bool
delete_gone (carry_t *c, size_t k, bson_error_t *err)
{
    online_t *on = c->on;
    mongoc_collection_t *coll = c->originals[k];
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, coll, &filter, opts);
    const bson_t *doc;
    online_values_t gone;
    bson_error_t why;
    bool ok = true;

    online_values_init (&gone);
    while (ops->next (cur, &doc)) {
        bson_iter_t id;
        if (!online_idset_has (&c->seen[k], online_id_hash (bson_get_data (doc), doc->len)) &&
            bson_iter_init_find (&id, doc, "_id"))
            online_values_add (&gone, &id);
    }
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading the originals");
    if (ok && c->counting)
        c->deleted[k] = gone.n;
    else if (ok && gone.n) {
        bson_t sel = BSON_INITIALIZER, in;
        BSON_APPEND_DOCUMENT_BEGIN (&sel, "_id", &in);
        BSON_APPEND_ARRAY (&in, "$in", &gone.arr);
        bson_append_document_end (&sel, &in);
        ok = online_lease_check (on, err) &&
             (ops->write (on, coll, ONLINE_W_DELETE, &sel, NULL, false, true, NULL, &why) ||
              online_fail (on, err, &why, "deleting an original the application deleted"));
        c->deleted[k] = ok ? gone.n : 0;
        bson_destroy (&sel);
    }
    bson_destroy (&gone.arr);
    bson_destroy (opts);
    return ok;
}

/* Every document of move k where it is now (its result, or the last
 * stage's collection): into the inverse step (input number in, or passed
 * through when in < 0), a batch at a time (join: all of them, run by the
 * caller). */
static bool
carry_from (carry_t *c, size_t k, rm_batchstep_t *b, int in, bool join, bson_error_t *err)
{
    online_t *on = c->on;
    /* --to-uri: a result under its final name is the destination's (the
     * routing gives a plan's namespace under its own name the source). */
    mongoc_collection_t *coll = on->run->pair && !strcmp (c->from[k], c->a.c[k].coll)
                                    ? online_pair_side (on, ONLINE_DEST, c->a.c[k].db, c->from[k])
                                    : online_collection (on, c->a.c[k].db, c->from[k]);
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, coll, &filter, opts);
    const bson_t *doc;
    bson_error_t why;
    size_t n = 0;
    bool ok = true;
    /* A kept set's namespace: restored from the record, a batch at a time. */
    bool restoring = c->kept && c->kept->kind == RM_STEP_SET &&
                     !strcmp (c->kept->u.fields.in.text, c->a.c[k].ns);

    while (ok && ops->next (cur, &doc)) {
        if (in < 0 && restoring) {
            online_docs_add (&c->kb, bson_get_data (doc), doc->len, -1);
            if (c->kb.n >= c->batch) {
                ok = online_carry_kept_set (on, c->kept, &c->kb, put, c, err);
                online_docs_reset (&c->kb);
            }
            continue;
        }
        if (in < 0) {
            ok = put (c, c->a.c[k].ns, bson_get_data (doc), doc->len, err);
            continue;
        }
        rm_batchstep_add (b, (size_t) in, bson_get_data (doc), doc->len);
        /* A join's batch holds every partner: one batch, which the
         * engine spills to --tmp past memory. */
        if (!join && ++n == c->batch) {
            ok = rm_batchstep_run (b, put, c, err);
            n = 0;
        }
    }
    /* Ended before the last batch's writes: a cursor read to its end
     * (the one way on) sends nothing more. */
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading a result");
    if (ok && in >= 0 && !join && n)
        ok = rm_batchstep_run (b, put, c, err);
    if (ok && restoring && c->kb.n)
        ok = online_carry_kept_set (on, c->kept, &c->kb, put, c, err);
    online_docs_reset (&c->kb);
    bson_destroy (opts);
    mongoc_collection_destroy (coll);
    return ok;
}

/* Whether the results hold a document with doc's _id in ns (put saw
 * it this pass). */
static bool
seen_in (void *ctx, const char *ns, const uint8_t *doc, uint32_t len)
{
    carry_t *c = ctx;
    for (size_t k = 0; k < c->a.n; k++)
        if (!strcmp (c->a.c[k].ns, ns))
            return online_idset_has (&c->seen[k], online_id_hash (doc, len));
    return false;
}

/* The pass of a kept step's inverse: every namespace as it is (a set's
 * restored on the way), then a delete's documents given back. */
static bool
kept_pass (carry_t *c, bson_error_t *err)
{
    bool ok = true;
    size_t from = c->a.n;
    for (size_t k = 0; ok && k < c->a.n; k++) {
        ok = carry_from (c, k, NULL, -1, false, err);
        if (c->kept->kind == RM_STEP_DELETE && !strcmp (c->a.c[k].ns, c->kept->u.copy.from.text))
            from = k;
    }
    if (ok && from < c->a.n)
        ok = online_carry_kept_dropped (c->on, c->kept, c->originals[from], c->batch, seen_in,
                                        put, c, err);
    for (size_t k = 0; ok && k < c->a.n; k++)
        ok = c->final ? flush (c, k, err) : sink_flush (c, k, err);
    return ok;
}

/* One pass of an inverse step over every namespace where it is now
 * (dry: writing nothing), into the originals (final) or the stage's
 * collections. */
static bool
carry_pass (carry_t *c, const rm_step_t *step, bson_error_t *err)
{
    const rm_nsref_t *in[4];
    size_t n_in = rm_step_inputs (step, in, 4);
    rm_batchstep_t *b;
    bool ok = true;

    if (c->kept)
        return kept_pass (c, err);
    b = rm_batchstep_new (step, c->on->run->o->tmpdir);
    for (size_t k = 0; ok && k < c->a.n; k++) {
        int input = -1;
        for (size_t j = 0; j < n_in; j++)
            if (!strcmp (in[j]->text, c->a.c[k].ns))
                input = (int) j;
        ok = carry_from (c, k, b, input, n_in > 1, err);
    }
    if (ok && n_in > 1)
        ok = rm_batchstep_run (b, put, c, err);
    for (size_t k = 0; ok && k < c->a.n; k++)
        ok = c->final ? flush (c, k, err) : sink_flush (c, k, err);
    rm_batchstep_destroy (b);
    return ok;
}

static void
seen_reset (carry_t *c)
{
    for (size_t k = 0; k < ONLINE_AFTER_MAX; k++) {
        online_idset_destroy (&c->seen[k]);
        memset (&c->seen[k], 0, sizeof c->seen[k]);
    }
}

/* The stage collection of move k after inverse step j. */
static void
stage_name (const carry_t *c, size_t k, size_t j, char *buf, size_t cap)
{
    snprintf (buf, cap, "%s_remodel_%s_carry%zu", c->a.c[k].coll, c->on->run->names.id, j);
}

/* Each stage's collections dropped (before a stage writes them, so that
 * a carry killed part way starts it afresh, and once carried). */
static bool
stages_drop (carry_t *c, size_t from, size_t to, bson_error_t *err)
{
    bool ok = true;
    for (size_t j = from; ok && j < to; j++)
        for (size_t k = 0; ok && k < c->a.n; k++) {
            char name[400];
            stage_name (c, k, j, name, sizeof name);
            ok = online_coll_drop (c->on, c->a.c[k].db, name, err);
        }
    return ok;
}

/* The plan's step whose inverse is inv's step j, where run --keep-before
 * kept what it needs (NULL: the engine runs inv's step). */
static const rm_step_t *
kept_of (online_t *on, size_t j)
{
    const rm_step_t *s = &on->run->plan.steps[on->run->plan.n - 1 - j];
    return online_kept_step (on, s) ? s : NULL;
}

/* The inverse's steps but its last, each over what the one before gave
 * back, into the stage collections. */
static bool
carry_stages (carry_t *c, const rm_plan_t *inv, bson_error_t *err)
{
    bool ok = true;
    for (size_t j = 0; ok && j + 1 < inv->n; j++) {
        ok = stages_drop (c, j, j + 1, err);
        for (size_t k = 0; ok && k < c->a.n; k++) {
            char name[400];
            stage_name (c, k, j, name, sizeof name);
            c->sink[k] = online_collection (c->on, c->a.c[k].db, name);
        }
        c->kept = kept_of (c->on, j);
        ok = ok && carry_pass (c, &inv->steps[j], err);
        seen_reset (c);
        for (size_t k = 0; k < c->a.n; k++) {
            if (c->sink[k])
                mongoc_collection_destroy (c->sink[k]);
            c->sink[k] = NULL;
            stage_name (c, k, j, c->from[k], sizeof c->from[k]);
        }
    }
    return ok;
}

/* The namespaces not switched in whose originals differ from what the
 * inverse makes: refused, naming them. */
static bool
held_check (carry_t *c, bson_error_t *err)
{
    char said[1200];
    if (!online_carry_held (&c->a, c->differ, said, sizeof said))
        return true;
    rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: carried back into the namespaces the "
                  "stopped switch had switched in, but what the inverse makes differs from the "
                  "originals of those it had not (%s): written through a switched-in one, or by "
                  "the application to the original itself, which is not known: left as they "
                  "are; the results stay beside the originals: compare them by hand, then "
                  "rollback --discard-writes-after-switch drops the results", c->on->run->where,
                  c->on->run->names.name, said);
    return false;
}

/* --to-uri: whether the source holds db.coll (the old design's place). */
static bool
source_has (online_t *on, const char *db, const char *coll, bool *yes, bson_error_t *err)
{
    bson_t list = BSON_INITIALIZER;
    bson_iter_t it;
    int n = 0;
    bool ok = online_pair_list (on, ONLINE_SOURCE, db, &list, &n, err);

    *yes = false;
    if (ok && bson_iter_init (&it, &list))
        while (bson_iter_next (&it)) {
            bson_iter_t f;
            if (BSON_ITER_HOLDS_DOCUMENT (&it) && bson_iter_recurse (&it, &f) &&
                bson_iter_find (&f, "name") && BSON_ITER_HOLDS_UTF8 (&f))
                *yes |= !strcmp (bson_iter_utf8 (&f, NULL), coll);
        }
    bson_destroy (&list);
    return ok;
}

bool
online_carry (online_t *on, const online_after_t *rec, bson_error_t *err)
{
    carry_t *c = bson_malloc0 (sizeof *c);
    rm_plan_t inv;
    bool ok = online_after_plan (on, &c->a, err), planned, all = true;

    for (size_t k = 0; ok && rec && k < c->a.n; k++)
        for (size_t i = 0; i < rec->n; i++)
            c->held[k] |= rec->c[i].unswitched && !strcmp (rec->c[i].ns, c->a.c[k].ns);

    c->on = on;
    c->batch = (size_t) BSON_MIN (BSON_MAX (online_caps_insert_chunk (on), 1),
                                  BSON_MAX (on->run->o->batch_size, 1));
    c->out = bson_malloc (c->batch * sizeof *c->out);
    c->outp = bson_malloc (c->batch * sizeof *c->outp);
    bson_init (&c->sel);
    online_docs_init (&c->there);
    online_docs_init (&c->kb);
    for (size_t k = 0; k < ONLINE_AFTER_MAX; k++)
        online_docs_init (&c->pend[k]);
    for (size_t k = 0; ok && k < c->a.n; k++) {
        /* --to-uri: the originals under their own names are the source's,
         * the results the destination's under the same names. */
        c->originals[k] = online_collection (on, c->a.c[k].db, c->a.c[k].coll);
        snprintf (c->from[k], sizeof c->from[k], "%s",
                  on->run->pair ? c->a.c[k].coll : c->a.c[k].result);
        ok = on->run->pair ? source_has (on, c->a.c[k].db, c->a.c[k].coll, &c->exists[k], err)
                      : online_coll_exists (on, c->a.c[k].db, c->a.c[k].coll, &c->exists[k], err);
        all &= c->exists[k];
    }
    c->counting = on->run->pair && on->run->o->dry_run;
    planned = ok = ok && inverse (on, &inv, err);
    if (ok && c->counting && inv.n > 1) {
        rm_error_set (err, RM_ERR_USAGE, "rollback --dry-run: plan %s: its inverse has %zu "
                      "steps, each after the first run over what the one before wrote to a stage "
                      "collection: a dry run, which writes nothing, counts through one only",
                      on->run->names.name, inv.n);
        ok = false;
    }
    ok = ok && carry_stages (c, &inv, err);
    c->final = true;
    c->kept = planned ? kept_of (on, inv.n - 1) : NULL;
    /* Where a namespace has no place in the old design, a dry pass first:
     * nothing is written when something could not be carried. */
    if (ok && !all) {
        c->dry = true;
        ok = carry_pass (c, &inv.steps[inv.n - 1], err);
        seen_reset (c);
        c->dry = false;
        if (ok && c->missing) {
            rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %lld document(s) written after the "
                          "switch belong to no document of the old design (children whose "
                          "parent is not there): nothing carried; the results stay beside the "
                          "originals: rollback --discard-writes-after-switch drops them",
                          on->run->where, on->run->names.name, (long long) c->missing);
            ok = false;
        }
        c->missing = 0;
    }
    ok = ok && carry_pass (c, &inv.steps[inv.n - 1], err);
    for (size_t k = 0; ok && k < c->a.n; k++) {
        ok = !c->exists[k] || c->held[k] || delete_gone (c, k, err);
        if (ok && c->exists[k] && !c->held[k])
            online_say_note (on, "rollback: %s %s.%s%s: %lld inserted, %lld replaced, "
                             "%lld deleted", c->counting ? "would carry back into" : "carried back into",
                             c->a.c[k].db, c->a.c[k].coll, on->run->pair ? " on the source" : "",
                             (long long) c->inserted[k], (long long) c->replaced[k],
                             (long long) c->deleted[k]);
    }
    /* The stages served: gone (a carry that failed leaves them for the
     * next, which drops them before it writes them). */
    ok = ok && (!planned || stages_drop (c, 0, inv.n ? inv.n - 1 : 0, err)) &&
         held_check (c, err);
    if (planned)
        rm_plan_destroy (&inv);
    for (size_t k = 0; k < ONLINE_AFTER_MAX; k++) {
        online_idset_destroy (&c->seen[k]);
        if (c->originals[k])
            mongoc_collection_destroy (c->originals[k]);
    }
    for (size_t k = 0; k < ONLINE_AFTER_MAX; k++)
        online_docs_destroy (&c->pend[k]);
    online_docs_destroy (&c->there);
    online_docs_destroy (&c->kb);
    bson_free (c->by);
    bson_free (c->out);
    bson_free (c->outp);
    bson_destroy (&c->sel);
    bson_free (c);
    return ok;
}
