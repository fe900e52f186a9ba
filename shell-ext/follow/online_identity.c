/* A source's identity (online_identity.h), recorded with each point in
 * the change log (capture.sources in the plan's record) and compared at
 * the next one by sync, follow and finalize's drain:
 *   - exists: a source renamed away or dropped (and not recreated) is
 *     gone; what the plan made from it stands for nothing now;
 *   - uuid (FerretDB; MongoDB): a collection dropped and recreated, or
 *     another renamed onto the name, has another;
 *   - options (validator, collation...): a collMod, or a recreate with
 *     other options.
 * It reads nothing but listCollections, one command a source, through
 * the connection layer below it (scripts/check_layers.sh). */
#include <stdio.h>
#include <string.h>

#include "online_identity.h"

/* ns's entry of listCollections into out, under key. */
static bool
read_one (online_t *on, const char *ns, bson_t *out, const char *key, bson_error_t *why)
{
    char db[128];
    const char *dot = strchr (ns, '.');
    bson_t *cmd, reply, entry;
    mongoc_collection_t *c;
    bson_iter_t it, batch, f;
    bool ok, exists = false;

    if (!dot || (size_t) (dot - ns) >= sizeof db)
        return true;
    snprintf (db, sizeof db, "%.*s", (int) (dot - ns), ns);
    cmd = BCON_NEW ("listCollections", BCON_INT32 (1), "filter", "{", "name",
                    BCON_UTF8 (dot + 1), "}");
    /* On the connection the source is on (--to-uri: the source's). */
    c = on->run->pair ? online_pair_side (on, ONLINE_SOURCE, db, dot + 1)
                 : online_collection (on, db, dot + 1);
    ok = online_ops (on)->command (on, c, db, cmd, &reply, why);
    mongoc_collection_destroy (c);
    bson_destroy (cmd);
    BSON_APPEND_DOCUMENT_BEGIN (out, key, &entry);
    BSON_APPEND_UTF8 (&entry, "ns", ns);
    /* mongo-java-server ignores the filter: the entry is found by name. */
    if (ok && bson_iter_init (&it, &reply) &&
        bson_iter_find_descendant (&it, "cursor.firstBatch", &it) &&
        bson_iter_recurse (&it, &batch))
        while (bson_iter_next (&batch))
            if (BSON_ITER_HOLDS_DOCUMENT (&batch) && bson_iter_recurse (&batch, &f) &&
                bson_iter_find (&f, "name") && BSON_ITER_HOLDS_UTF8 (&f) &&
                !strcmp (bson_iter_utf8 (&f, NULL), dot + 1)) {
                exists = true;
                break;
            }
    if (exists) {
        if (bson_iter_recurse (&batch, &f) && bson_iter_find_descendant (&f, "info.uuid", &f) &&
            BSON_ITER_HOLDS_BINARY (&f))
            bson_append_iter (&entry, "uuid", 4, &f);
        if (bson_iter_recurse (&batch, &f) && bson_iter_find (&f, "options") &&
            BSON_ITER_HOLDS_DOCUMENT (&f))
            bson_append_iter (&entry, "options", 7, &f);
    }
    BSON_APPEND_BOOL (&entry, "exists", exists);
    bson_append_document_end (out, &entry);
    bson_destroy (&reply);
    return ok;
}

bool
online_identity_read (online_t *on, const char **nss, size_t n, bson_t *out, bson_error_t *why)
{
    bson_reinit (out);
    for (size_t i = 0; i < n; i++) {
        char key[16];
        const char *kp;
        bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        if (!read_one (on, nss[i], out, kp, why))
            return false;
    }
    return true;
}

/* The entry of arr for ns into *entry (false: none). */
static bool
find_entry (const bson_t *arr, const char *ns, bson_iter_t *entry)
{
    bson_iter_t it, f;
    if (!bson_iter_init (&it, arr))
        return false;
    while (bson_iter_next (&it))
        if (BSON_ITER_HOLDS_DOCUMENT (&it) && bson_iter_recurse (&it, &f) &&
            bson_iter_find (&f, "ns") && BSON_ITER_HOLDS_UTF8 (&f) &&
            !strcmp (bson_iter_utf8 (&f, NULL), ns)) {
            *entry = it;
            return true;
        }
    return false;
}

/* Field key of the entry at e: its value's bytes (NULL, 0: absent). */
static const uint8_t *
field (const bson_iter_t *e, const char *key, uint32_t *len)
{
    bson_iter_t f;
    if (!bson_iter_recurse (e, &f) || !bson_iter_find (&f, key)) {
        *len = 0;
        return NULL;
    }
    if (BSON_ITER_HOLDS_DOCUMENT (&f)) {
        const uint8_t *d;
        bson_iter_document (&f, len, &d);
        return d;
    }
    if (BSON_ITER_HOLDS_BINARY (&f)) {
        const uint8_t *d;
        bson_subtype_t st;
        bson_iter_binary (&f, &st, len, &d);
        return d;
    }
    *len = bson_iter_as_bool (&f) ? 1 : 0;
    return (const uint8_t *) (*len ? "1" : "");
}

static bool
same (const uint8_t *a, uint32_t la, const uint8_t *b, uint32_t lb)
{
    return la == lb && (!la || !memcmp (a, b, la));
}

void
online_identity_compare (const bson_t *was, const bson_t *now, const char **gone, char *changed,
                         size_t cap)
{
    bson_iter_t it, f, old;

    *gone = NULL;
    *changed = '\0';
    if (!bson_iter_init (&it, now))
        return;
    while (bson_iter_next (&it)) {
        const uint8_t *a, *b;
        uint32_t la, lb;
        const char *ns;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &f) ||
            !bson_iter_find (&f, "ns") || !BSON_ITER_HOLDS_UTF8 (&f))
            continue;
        ns = bson_iter_utf8 (&f, NULL);
        if (!find_entry (was, ns, &old))
            continue;
        field (&it, "exists", &lb);
        if (!lb) {
            if (!*gone)
                *gone = ns;
            continue;
        }
        if (*changed)
            continue;
        field (&old, "exists", &la);
        if (!la) {
            snprintf (changed, cap, "%s was gone at the last point and is there again", ns);
            continue;
        }
        a = field (&old, "uuid", &la);
        b = field (&it, "uuid", &lb);
        if (a && b && !same (a, la, b, lb)) {
            snprintf (changed, cap, "%s is another collection than at the last point (its UUID "
                      "changed: dropped and created again, or another renamed onto its name)",
                      ns);
            continue;
        }
        a = field (&old, "options", &la);
        b = field (&it, "options", &lb);
        if (!same (a, la, b, lb))
            snprintf (changed, cap, "the options of %s changed since the last point (collMod, "
                      "or created again with others)", ns);
    }
}

bool
online_identity_proven (const bson_t *was, const bson_t *now)
{
    bson_iter_t it, f, old;
    size_t n = 0;
    if (!bson_iter_init (&it, now))
        return false;
    while (bson_iter_next (&it)) {
        const uint8_t *a, *b;
        uint32_t la, lb;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &f) ||
            !bson_iter_find (&f, "ns") || !BSON_ITER_HOLDS_UTF8 (&f) ||
            !find_entry (was, bson_iter_utf8 (&f, NULL), &old))
            return false;
        a = field (&old, "uuid", &la);
        b = field (&it, "uuid", &lb);
        if (!a || !b || !same (a, la, b, lb))
            return false;
        n++;
    }
    return n > 0;
}

bool
online_identity_now (online_t *on, const char **nss, size_t n, bson_t *out, bson_error_t *err)
{
    bson_error_t why;
    if (online_identity_read (on, nss, n, out, &why))
        return true;
    /* online_fail: a cut connection here is retried as any round's call
     * (follow, --retry-for). */
    return online_fail (on, err, &why, "listing the plan's sources");
}

bool
online_identity_check (online_t *on, const online_capture_t *from, const bson_t *now,
                       char *rescan, size_t cap, char *later, bson_error_t *err)
{
    const char *gone;
    char changed[300];

    online_identity_compare (&from->sources, now, &gone, changed, sizeof changed);
    if (gone) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s: source %s is gone since the last point "
                      "(dropped, or renamed away): put it back under its name "
                      "(renameCollection, or mongorestore) and sync again, which rescans the "
                      "steps that read it; or rollback to drop the plan's results",
                      on->run->names.name, gone);
        snprintf (later, ONLINE_IDENTITY_NOTE, "%s was gone at a round since the last point",
                  gone);
        /* follow waits for it as for a server away (--retry-for): a drop
         * and create again, a mongorestore --drop, pass. */
        on->transient = on->run->following;
        return false;
    }
    if (!*rescan && *from->rescan)
        snprintf (rescan, cap, "%s", from->rescan);
    if (!*rescan && *changed)
        snprintf (rescan, cap, "%s", changed);
    return true;
}
