/* Following the log for an output whose results do not name their driver
 * but are listed by the driver's own result (rm_pass_t.driver_list: an
 * extract with childRefs, whose parents keep an array of their children's
 * _ids and whose children say nothing of their parent). online_incr.c
 * calls these for each chunk of recomputed drivers (the parents):
 *   - online_refs_old, before anything of the chunk is written: the
 *     children the parents' results in the target list now (the old
 *     children), the only place that says which children were theirs;
 *   - online_refs_claimed: a child made now whose _id another parent's
 *     result lists, that parent not recomputed, is refused as
 *     online_check_claimed refuses a parentRef child (same words);
 *   - online_refs_missing: old children the chunk does not make again,
 *     removed from the target unless a parent outside the chunk lists
 *     them now (a parent recomputed earlier in the sync took them along).
 * Removed before the parents' new results are written: a sync killed in
 * between, run again, still reads the old lists (the parents unchanged in
 * the target) and finds what is left to remove; were the parents written
 * first, their old lists would be gone, and the children with them would
 * stay in the target for good.
 *
 * What is kept is the chunk's: its parents' lists, at most a batch of
 * parents, and nothing per result of the collection. The lookups by the
 * lists' field have no index in the parents' target (remodel run's
 * metadata gives it none): they are made only for children that are in
 * the target and moved or went away, not for every chunk. */
#include <stdio.h>
#include <string.h>

#include "online_changes.h"
#include "remodel/docpath.h"

/* The list of output k's old children in old. */
static const char *
old_name (const online_job_t *j, size_t k)
{
    return j->p->keep[k]->text;
}


/* Each _id listed in doc at path, to old's list ns (not an array: none). */
static void
note_listed (const bson_t *doc, const char *path, online_changes_t *old, const char *ns)
{
    bson_iter_t it, arr, e;
    if (!bson_iter_init (&it, doc) || !bson_iter_find_descendant (&it, path, &arr) ||
        !BSON_ITER_HOLDS_ARRAY (&arr) || !bson_iter_recurse (&arr, &e))
        return;
    while (bson_iter_next (&e))
        online_changes_add (old, ns, &e);
}

typedef struct {
    const char *path, *ns;
    const online_idlist_t *skip;
    online_changes_t *out;
    bson_t *first;
} listed_t;

static void
note_other_list (void *ctx, const bson_t *doc)
{
    listed_t *l = ctx;
    bson_iter_t id;
    if (!bson_iter_init_find (&id, doc, "_id") || (l->skip && online_idlist_has (l->skip, &id)))
        return;
    if (l->first && bson_empty (l->first))
        bson_append_iter (l->first, "_id", 3, &id);
    note_listed (doc, l->path, l->out, l->ns);
}

/* The parents of parents (their target) whose list at path holds one of
 * values, except those skip holds: each one's list, to out's list ns;
 * *first gets the first such parent's _id (when not NULL, for a message). */
static bool
listed_elsewhere (online_job_t *j, mongoc_collection_t *parents, const char *path,
                  const bson_t *values, const online_idlist_t *skip, online_changes_t *out,
                  const char *ns, bson_t *first, bson_error_t *err)
{
    /* _id comes with it unasked (a projection naming _id beside a path
     * under it is what FerretDB and mongo-java-server fail on). */
    bson_t *opts = BCON_NEW ("projection", "{", path, BCON_INT32 (1), "}");
    listed_t l = {path, ns, skip, out, first};
    bool ok = online_batch_docs_where (j, parents, path, values, opts, note_other_list, &l, NULL,
                                       err);
    bson_destroy (opts);
    return ok;
}


bool
online_refs_old (online_job_t *j, online_passrun_t *pr, const bson_t *ids, online_changes_t *old,
                 bson_error_t *err)
{
    bool ok = true;
    for (size_t k = 0; ok && k < j->p->n_keep; k++) {
        const char *path = j->p->driver_list[k];
        bson_t *opts;
        const online_ops_t *ops = online_ops (j->on);
        online_cursor_t *cur;
        const bson_t *doc;
        bson_error_t why;

        if (!path)
            continue;
        /* The list made even when empty: a chunk whose parents list
         * nothing has nothing to remove. */
        online_changes_list (old, old_name (j, k), true);
        opts = BCON_NEW ("projection", "{", path, BCON_INT32 (1), "}");
        cur = ops->keys (j->on, pr->targets[j->p->list_in[k]].coll, "_id", ids, opts);
        while (ops->next (cur, &doc))
            note_listed (doc, path, old, old_name (j, k));
        if (!ops->end (cur, &why))
            ok = online_fail (j->on, err, &why, "reading the parents' results in the target");
        bson_destroy (opts);
    }
    return ok;
}

void
online_refs_old_ids (const online_job_t *j, size_t k, const online_changes_t *old,
                     online_values_t *a)
{
    const online_idlist_t *l =
        online_changes_list ((online_changes_t *) old, old_name (j, k), false);
    for (uint32_t i = 0; l && i < l->n; i++) {
        bson_iter_t id;
        if (online_idlist_get (l, i, &id))
            online_values_add (a, &id);
    }
}

bool
online_refs_claimed (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                     const online_idlist_t *drivers, online_changes_t *old, bson_error_t *err)
{
    bool ok = true;
    for (size_t k = 0; ok && k < j->p->n_keep; k++) {
        const char *path = j->p->driver_list[k];
        const online_idlist_t *had = online_changes_list (old, old_name (j, k), false);
        online_values_t fresh, there;
        online_changes_t others;
        bson_t first = BSON_INITIALIZER;

        if (!path)
            continue;
        /* A child its parent listed already is that parent's: only the
         * others can be another's, and only those in the target are. */
        online_values_init (&fresh);
        online_values_init (&there);
        for (size_t i = 0; i < out->n; i++) {
            bson_iter_t id;
            if (out->docs[i].keep == (int) k &&
                rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id) &&
                !(had && online_idlist_has (had, &id)))
                online_values_add (&fresh, &id);
        }
        if (fresh.n)
            ok = online_batch_ids_where (j, pr->targets[k].coll, "_id", &fresh.arr,
                                         online_values_add, &there, err);
        online_changes_init (&others);
        if (ok && there.n)
            ok = listed_elsewhere (j, pr->targets[j->p->list_in[k]].coll, path, &there.arr,
                                   drivers, &others, "listed", &first, err);
        if (ok && !bson_empty (&first)) {
            /* The first child of those that another parent lists: named
             * as the target holds it, then as it is made now. */
            const online_idlist_t *l = online_changes_list (&others, "listed", false);
            bson_iter_t it, id;
            char a[240] = "?", b[240] = "?";
            bool found = false;
            bson_iter_init (&it, &there.arr);
            while (!found && bson_iter_next (&it))
                found = l && online_idlist_has (l, &it);
            for (size_t i = 0; found && i < out->n; i++)
                if (out->docs[i].keep == (int) k &&
                    rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id) &&
                    online_value_hash (&id) == online_value_hash (&it) &&
                    bson_iter_type (&id) == bson_iter_type (&it)) {
                    bson_t q = BSON_INITIALIZER;
                    const online_ops_t *ops = online_ops (j->on);
                    online_cursor_t *cur;
                    const bson_t *doc;
                    online_id_append (&q, &it);
                    cur = ops->find (j->on, pr->targets[k].coll, &q, NULL);
                    if (ops->next (cur, &doc))
                        online_doc_text (bson_get_data (doc), doc->len, a, sizeof a);
                    ops->end (cur, NULL);
                    bson_destroy (&q);
                    online_doc_text (online_doc_bytes (out, i), out->docs[i].len, b, sizeof b);
                    break;
                }
            rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): two results for %s with one _id "
                          "(%s and %s): stopping before either overwrites the other",
                          j->on->run->where, j->s->index, j->s->op, j->p->keep[k]->text, a, b);
            ok = false;
        }
        online_changes_destroy (&others);
        bson_destroy (&first);
        bson_destroy (&fresh.arr);
        bson_destroy (&there.arr);
    }
    return ok;
}

bool
online_refs_missing (online_job_t *j, online_passrun_t *pr, const bson_t *ids,
                     const online_changes_t *old, const online_docs_t *out, int64_t *missing,
                     bson_error_t *err)
{
    bool write = pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run, ok = true;
    for (size_t k = 0; ok && k < j->p->n_keep; k++) {
        const char *path = j->p->driver_list[k];
        const online_idlist_t *had =
            online_changes_list ((online_changes_t *) old, old_name (j, k), false);
        online_changes_t made;
        const online_idlist_t *mine, *kept;
        online_values_t gone, there;
        bson_iter_t it;

        if (!path || !had || !had->n)
            continue;
        online_changes_init (&made);
        for (size_t i = 0; i < out->n; i++) {
            bson_iter_t id;
            if (out->docs[i].keep == (int) k &&
                rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id))
                online_changes_add (&made, "made", &id);
        }
        mine = online_changes_list (&made, "made", false);
        online_values_init (&gone);
        online_values_init (&there);
        for (uint32_t i = 0; i < had->n; i++) {
            bson_iter_t id;
            if (online_idlist_get (had, i, &id) && !(mine && online_idlist_has (mine, &id)))
                online_values_add (&gone, &id);
        }
        /* Only those still in the target (a sync killed after removing
         * them, run again, finds them gone), and of those, the ones no
         * parent outside the chunk lists now. */
        if (gone.n)
            ok = online_batch_ids_where (j, pr->targets[k].coll, "_id", &gone.arr,
                                         online_values_add, &there, err);
        if (ok && there.n) {
            /* The chunk's parents, skipped: their lists are the old ones. */
            if (bson_iter_init (&it, ids))
                while (bson_iter_next (&it))
                    online_changes_add (&made, "chunk", &it);
            ok = listed_elsewhere (j, pr->targets[j->p->list_in[k]].coll, path, &there.arr,
                                   online_changes_list (&made, "chunk", true), &made, "kept",
                                   NULL, err);
        }
        kept = online_changes_list (&made, "kept", false);
        if (ok && there.n && bson_iter_init (&it, &there.arr))
            while (ok && bson_iter_next (&it)) {
                if (kept && online_idlist_has (kept, &it))
                    continue;
                online_diff_note (j->on, j->p->keep[k]->text, &it);
                if (write) {
                    ok = online_writes_delete (&pr->targets[k], &it, err);
                    if (pr->changed)
                        online_changes_add (pr->changed, j->p->keep[k]->text, &it);
                }
                (*missing)++;
            }
        ok = ok && online_writes_flush (&pr->targets[k], err);
        online_changes_destroy (&made);
        bson_destroy (&gone.arr);
        bson_destroy (&there.arr);
    }
    return ok;
}
