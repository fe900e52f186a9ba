/* Fuzzes what the online program reads from a server and stores there:
 * the input's first byte says what the rest (a BSON document, checked
 * only as a server's reply is, by its length) is taken for:
 *   0  a change stream's reply (aggregate's firstBatch, getMore's nextBatch)
 *   1  an oplog entry
 *   2  the plan's record (its fields, the change log's point, the sample,
 *      the sources' identities)
 *   3  a lease document
 *   4  a checkpoint (and its last _id made into the resume's filter)
 * tests/fuzz/seeds_online.sh makes the corpus from real servers' answers.
 * A crash or a sanitizer report is a finding: whatever a server says,
 * the program says an error or goes on, never crashes. */
#include <stdlib.h>

#include "fuzz.h"
#include "online_cmd.h"
#include "online_identity.h"

enum { AS_STREAM, AS_OPLOG, AS_RECORD, AS_LEASE, AS_CHECKPOINT, AS_N };

static void
stream (const bson_t *reply)
{
    static const char *const batches[] = {"firstBatch", "nextBatch"};
    for (size_t b = 0; b < 2; b++) {
        online_changes_t ch;
        online_stream_at_t at = {false, 0, 0};
        online_capture_t to;
        int64_t id;
        online_changes_init (&ch);
        online_capture_init (&to);
        to.has_ts = true;
        to.ts_t = 1700000000;
        online_stream_batch (&ch, "db.coll", reply, batches[b], &id, &at);
        (void) online_stream_behind (&at, &to);
        /* every _id noted reads back */
        for (size_t l = 0; l < ch.n; l++)
            for (uint32_t i = 0; i < ch.lists[l].n; i++) {
                bson_iter_t v;
                if (online_idlist_get (&ch.lists[l], i, &v))
                    (void) online_idlist_has (&ch.lists[l], &v);
            }
        online_capture_destroy (&to);
        online_changes_destroy (&ch);
    }
}

static void
oplog (const bson_t *e)
{
    static const char *nss[] = {"db.coll", "db.other", "crm.people"};
    online_changes_t ch;
    online_changes_init (&ch);
    ch.nss = nss;
    ch.nns = 3;
    online_oplog_entry (&ch, e);
    online_oplog_entry (&ch, e); /* twice: noted once */
    online_changes_destroy (&ch);
}

static void
record (const bson_t *doc)
{
    online_record_t r;
    online_capture_t c;
    online_sample_t s;
    char buf[1024];
    uint32_t t, i;

    online_record_parse (doc, &r);
    online_capture_init (&c);
    if (online_capture_load (doc, &c)) {
        const char *gone;
        char changed[300];
        online_capture_point (&c, buf, sizeof buf);
        online_capture_describe (&c, "more", buf, sizeof buf);
        (void) rm_resume_token_time (&c.token, &t, &i);
        online_identity_compare (&c.sources, &c.sources, &gone, changed, sizeof changed);
    }
    online_capture_destroy (&c);
    if (online_sample_read (doc, &s))
        online_sample_describe (&s, buf, sizeof buf);
}

static void
lease (const bson_t *doc)
{
    char owner[160];
    int64_t epoch, expires;
    online_lease_parse (doc, owner, sizeof owner, &epoch, &expires);
    (void) online_lease_blocks (true, owner, "elsewhere.example:1:1", expires, 0);
    (void) online_lease_next_epoch (epoch, epoch);
}

static void
checkpoint (const bson_t *doc)
{
    bson_t last = BSON_INITIALIZER, filter = BSON_INITIALIZER;
    bson_iter_t it;
    online_cp_tally_t t;
    online_checkpoint_parse (doc, &last, &t);
    if (bson_iter_init_find (&it, &last, "last")) {
        (void) online_range_after (&it, &filter);
        (void) online_range_before (&it, &it);
    }
    bson_destroy (&filter);
    bson_destroy (&last);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    bson_t doc;
    uint8_t *copy;

    if (size < 1 + 5)
        return 0;
    /* An aligned copy of its own, as a reply's buffer is. */
    copy = malloc (size - 1);
    if (!copy)
        return 0;
    memcpy (copy, data + 1, size - 1);
    if (bson_init_static (&doc, copy, size - 1)) {
        switch (data[0] % AS_N) {
        case AS_STREAM: stream (&doc); break;
        case AS_OPLOG: oplog (&doc); break;
        case AS_RECORD: record (&doc); break;
        case AS_LEASE: lease (&doc); break;
        case AS_CHECKPOINT: checkpoint (&doc); break;
        }
    }
    free (copy);
    return 0;
}
