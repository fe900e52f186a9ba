/* In place, the rollback of a copy, move or delete (online_cmd.h): one
 * journal entry of the step (online_write_select.c) undone. The original
 * a move or delete took out of "from" is inserted back, byte for byte, at
 * its _id; the document a copy or move wrote into "to" is taken out while
 * it is still one remodel wrote (its checksum among the entry's); then the
 * entry goes. Each write is conditional on what was just read, and each
 * step of it is found done or not by reading again, so a kill anywhere is
 * completed by rollback run again. A document of "to" the application
 * changed since, or one it inserted at an original's _id in "from", is
 * left as it is and named (the original kept in the entry), unless
 * --force (the original back, the change lost) or --forget (kept as it
 * is, the entry dropped). */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"
#include "remodel/crc64.h"

/* Whether the array a of bd holds v. */
static bool
holds (const bson_t *bd, const char *a, int64_t v)
{
    bson_iter_t it, e;
    if (!bson_iter_init_find (&it, bd, a) || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &e))
        return false;
    while (bson_iter_next (&e))
        if (bson_iter_as_int64 (&e) == v)
            return true;
    return false;
}

/* c's document q into now (a copy; empty when there is none): *there. */
static bool
read_one (online_t *on, mongoc_collection_t *c, const bson_t *q, bson_t *now, bool *there,
          bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, q, NULL);
    const bson_t *doc;
    bson_error_t why;
    *there = ops->next (cur, &doc);
    if (*there)
        bson_copy_to (doc, now);
    else
        bson_init (now);
    return ops->end (cur, &why) || online_fail (on, err, &why, "reading a document");
}

static void
left (online_t *on, const rm_step_t *s, const char *bname, const bson_t *q, const char *ns,
      const char *what, int64_t kept)
{
    char *text = bson_as_relaxed_extended_json (q, NULL);
    if (kept < 10)
        online_say_warn (on, "rollback: step %zu (%s) %s: document %s %s: left as it is; its "
                         "original stays in %s.%s (rollback --force restores it, --forget keeps "
                         "the document as it is)", s->index, s->op, ns, text, what,
                         on->run->o->state_db, bname);
    bson_free (text);
}

bool
online_rollback_select (online_t *on, const rm_step_t *s, mongoc_collection_t *b,
                        mongoc_collection_t *from, const char *bname, const bson_t *bd,
                        online_rb_tally_t *t, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    const online_ops_t *ops = online_ops (on);
    const rm_copy_t *x = &s->u.copy;
    mongoc_collection_t *to = NULL;
    bson_iter_t id, it;
    bson_t q = BSON_INITIALIZER, tnow, fnow, orig;
    bson_error_t why;
    bool ok = true, tthere = false, fthere = false, ours = true, gone, forced = false;

    if (!bson_iter_init_find (&id, bd, "_id"))
        return true;
    online_id_append (&q, &id);
    gone = bson_iter_init_find (&it, bd, "gone") && bson_iter_as_bool (&it) &&
           bson_iter_init_find (&it, bd, "doc") && BSON_ITER_HOLDS_DOCUMENT (&it);
    if (gone) {
        const uint8_t *data;
        uint32_t len;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&orig, data, len);
    }
    bson_init (&tnow);
    bson_init (&fnow);
    /* What "to" holds at the _id: remodel's, or changed since. */
    if (s->kind != RM_STEP_DELETE) {
        to = online_collection (on, x->to.db, x->to.coll);
        bson_destroy (&tnow);
        ok = read_one (on, to, &q, &tnow, &tthere, err);
        ours = !tthere ||
               holds (bd, "made", (int64_t) rm_crc64_update (0, bson_get_data (&tnow), tnow.len)) ||
               holds (bd, "madeFields",
                      (int64_t) online_fields_digest (bson_get_data (&tnow), tnow.len));
    }
    /* What "from" holds at the original's _id: nothing, or the original
     * (given back already), or the application's. */
    if (ok && gone) {
        bson_destroy (&fnow);
        ok = read_one (on, from, &q, &fnow, &fthere, err);
        ours &= !fthere || (fnow.len == orig.len && online_fields_digest (bson_get_data (&fnow),
                                                                          fnow.len) ==
                                                        online_fields_digest (bson_get_data (&orig),
                                                                              orig.len));
    }
    forced = !ours && o->force;
    if (ok && !ours && !o->force) {
        if (o->forget) {
            t->forgotten++;
        } else {
            left (on, s, bname, &q, tthere ? x->to.text : x->from.text,
                  tthere ? "changed in \"to\" since remodel wrote it there"
                         : "inserted again in \"from\" since remodel took it out",
                  t->kept);
            t->kept++;
            goto done;
        }
    } else if (ok && gone) {
        /* The original back first: a kill after it finds it there. */
        if (!fthere)
            ok = online_lease_check (on, err) &&
                 (ops->write (on, from, ONLINE_W_INSERT, NULL, &orig, false, false, NULL, &why) ||
                  online_fail (on, err, &why, "giving back a removed document"));
        else if (forced) {
            bool same, undid;
            ok = online_replace_checked (on, from, bson_get_data (&fnow), fnow.len,
                                         bson_get_data (&orig), orig.len, &same, &undid, err);
        }
    }
    /* Then remodel's document out of "to", on condition it is as read. */
    if (ok && tthere && (ours || o->force))
        ok = online_lease_check (on, err) &&
             (ops->write (on, to, ONLINE_W_DELETE, &tnow, NULL, false, false, NULL, &why) ||
              online_fail (on, err, &why, "removing a document remodel wrote"));
    if (ok && (ours || o->force))
        t->restored++;
    t->forced += ok && forced;
    ok = ok && online_lease_check (on, err) &&
         (ops->write (on, b, ONLINE_W_DELETE, &q, NULL, false, false, NULL, &why) ||
          online_fail (on, err, &why, "removing a restored backup"));
done:
    if (to)
        mongoc_collection_destroy (to);
    bson_destroy (&q);
    bson_destroy (&tnow);
    bson_destroy (&fnow);
    return ok;
}

void
online_select_made_flag (const rm_step_t *s, char *buf, size_t cap)
{
    snprintf (buf, cap, "madeTo%zu", s->index);
}

bool
online_rollback_select_end (online_t *on, const rm_step_t *s, int64_t kept, bson_error_t *err)
{
    const rm_nsref_t *to = &s->u.copy.to;
    mongoc_collection_t *c;
    bson_t all = BSON_INITIALIZER;
    bson_error_t why;
    char flag[64];
    bool made, ok;
    int64_t n;

    if (s->kind == RM_STEP_DELETE || kept)
        return true;
    online_select_made_flag (s, flag, sizeof flag);
    if (!online_plan_flag (on, flag, &made, err))
        return false;
    if (!made)
        return true;
    {
        /* Dropped already (a rollback run again). */
        char **names = online_collection_names (on, to->db, NULL, &why);
        bool there = false;
        if (!names)
            return online_fail (on, err, &why, "listing collections");
        for (size_t i = 0; names[i]; i++)
            there |= !strcmp (names[i], to->coll);
        bson_strfreev (names);
        if (!there)
            return true;
    }
    c = online_collection (on, to->db, to->coll);
    n = online_ops (on)->count (on, c, &all, &why);
    ok = n >= 0 || online_fail (on, err, &why, "counting the documents of \"to\"");
    if (ok && n == 0) {
        ok = online_lease_check (on, err) &&
             (online_ops (on)->drop (on, c, &why) ||
              online_fail (on, err, &why, "dropping the emptied \"to\""));
        if (ok)
            online_say_note (on, "rollback: step %zu (%s): dropped %s, which the run made",
                             s->index, s->op, to->text);
    }
    mongoc_collection_destroy (c);
    bson_destroy (&all);
    return ok;
}
