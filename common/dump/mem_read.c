/* A reader over documents held in memory: the online companion's batches,
 * read by the same engine as a dump. The documents came from a server
 * (already checked there), so only their framing is checked here. */
#include <string.h>

#include "reader_impl.h"

typedef struct {
    const uint8_t *const *docs; /* per namespace: documents one after another */
    const size_t *lens;
    size_t ns;                  /* the namespace being read */
    size_t off;                 /* the next document's offset in it */
    uint64_t ordinal;
    uint64_t done, total;
} memread_t;

static int
mem_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    memread_t *m = r->impl;
    rm_ns_t *ns;
    uint32_t len;

    if (m->ns >= r->info.n_ns)
        return 0;
    ns = r->info.ns[m->ns];
    item->ns = ns;
    if (m->off >= m->lens[m->ns]) {
        item->kind = RM_ITEM_NS_END;
        ns->ended = true;
        m->ns++;
        m->off = 0;
        m->ordinal = 0;
        return 1;
    }
    if (m->lens[m->ns] - m->off < 5 ||
        (memcpy (&len, m->docs[m->ns] + m->off, 4), len = BSON_UINT32_FROM_LE (len),
         len < 5 || len > m->lens[m->ns] - m->off || m->docs[m->ns][m->off + len - 1] != 0)) {
        char name[512];
        rm_error_set (err, RM_ERR_FORMAT, "%s: %s: document %llu at byte %zu: bad length",
                      r->path, rm_ns_name (ns, name, sizeof name),
                      (unsigned long long) m->ordinal + 1, m->off);
        return -1;
    }
    item->kind = RM_ITEM_DOC;
    item->doc = m->docs[m->ns] + m->off;
    item->len = len;
    item->ordinal = ++m->ordinal;
    ns->docs++;
    ns->bytes += len;
    m->off += len;
    m->done += len;
    return 1;
}

static void
mem_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total)
{
    const memread_t *m = r->impl;
    *done = m->done;
    *total = m->total;
}

static void
mem_close (rm_reader_t *r)
{
    bson_free (r->impl);
    r->impl = NULL;
}

static const rm_reader_ops_t mem_ops = {mem_next, mem_progress, mem_close};

bool
rm_mem_reader_init (rm_reader_t *r, const rm_dump_info_t *info, const uint8_t *const *docs,
                    const size_t *lens)
{
    memread_t *m = bson_malloc0 (sizeof *m);
    rm_dump_info_copy (&r->info, info);
    m->docs = docs;
    m->lens = lens;
    for (size_t i = 0; i < info->n_ns; i++)
        m->total += lens[i];
    r->impl = m;
    r->ops = &mem_ops;
    return true;
}
