/* A dump's namespaces by name: open addressing over FNV-1a of "db\0coll",
 * kept at most half full. */
#include <string.h>

#include "nsindex.h"

void
rm_nsindex_init (rm_nsindex_t *x)
{
    memset (x, 0, sizeof *x);
}

void
rm_nsindex_destroy (rm_nsindex_t *x)
{
    bson_free (x->slots);
    memset (x, 0, sizeof *x);
}

static size_t
hash (const char *db, const char *coll)
{
    uint64_t h = UINT64_C (14695981039346656037);
    for (const char *p = db; *p; p++)
        h = (h ^ (uint8_t) *p) * UINT64_C (1099511628211);
    h = (h ^ 0xff) * UINT64_C (1099511628211); /* no byte of a name: "a" "bc" is not "ab" "c" */
    for (const char *p = coll; *p; p++)
        h = (h ^ (uint8_t) *p) * UINT64_C (1099511628211);
    return (size_t) (h ^ (h >> 29));
}

static bool
same (const rm_ns_t *ns, const char *db, const char *coll)
{
    return strcmp (ns->db, db) == 0 && strcmp (ns->coll, coll) == 0;
}

/* Namespace i of info into the slots; a second one of the same name is
 * left out, so that the first is found, as a search from the start would. */
static void
put (rm_nsindex_t *x, const rm_dump_info_t *info, size_t i)
{
    const rm_ns_t *ns = info->ns[i];
    size_t s = hash (ns->db, ns->coll) & (x->cap - 1);
    for (; x->slots[s]; s = (s + 1) & (x->cap - 1))
        if (same (info->ns[x->slots[s] - 1], ns->db, ns->coll))
            return;
    x->slots[s] = i + 1;
}

static void
catch_up (rm_nsindex_t *x, const rm_dump_info_t *info)
{
    if (info->n_ns < x->indexed) {
        /* Namespaces removed (a list rebuilt): start again. */
        rm_nsindex_destroy (x);
    }
    if (2 * info->n_ns >= x->cap) {
        size_t cap = x->cap ? x->cap : 64;
        while (2 * info->n_ns >= cap)
            cap *= 2;
        bson_free (x->slots);
        x->slots = bson_malloc0 (cap * sizeof *x->slots);
        x->cap = cap;
        x->indexed = 0;
    }
    for (; x->indexed < info->n_ns; x->indexed++)
        put (x, info, x->indexed);
}

rm_ns_t *
rm_nsindex_find (rm_nsindex_t *x, const rm_dump_info_t *info, const char *db, const char *coll)
{
    catch_up (x, info);
    for (size_t s = hash (db, coll) & (x->cap - 1); x->slots[s]; s = (s + 1) & (x->cap - 1))
        if (same (info->ns[x->slots[s] - 1], db, coll))
            return info->ns[x->slots[s] - 1];
    return NULL;
}
