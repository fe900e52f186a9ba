/* Streams split at every byte boundary read exactly like whole ones; the
 * format and compression are told by content; options parse. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "remodel/crc64.h"
#include "remodel/dump.h"
#include "test.h"

#define FIX T_FIXTURES "mongo-tools/"

typedef struct {
    const uint8_t *data;
    size_t len, pos;
    size_t split;  /* first read ends here */
    size_t chunk;  /* then at most this many bytes per read; 0: no limit */
} src_t;

static ssize_t
src_read (void *ctx, void *buf, size_t len, bson_error_t *err)
{
    src_t *s = ctx;
    size_t n = s->len - s->pos;
    if (s->pos < s->split && n > s->split - s->pos)
        n = s->split - s->pos;
    if (s->chunk && n > s->chunk)
        n = s->chunk;
    if (n > len)
        n = len;
    memcpy (buf, s->data + s->pos, n);
    s->pos += n;
    return (ssize_t) n;
}

static uint8_t *
slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    uint8_t *p;
    if (!f)
        return NULL;
    fseek (f, 0, SEEK_END);
    *len = (size_t) ftell (f);
    fseek (f, 0, SEEK_SET);
    p = malloc (*len + 1);
    if (fread (p, 1, *len, f) != *len) {
        free (p);
        p = NULL;
    }
    fclose (f);
    return p;
}

/* Reads a whole dump from src and folds every item into one fingerprint:
 * namespace, kind and bytes of each item in order. "" on error. */
static void
fingerprint (src_t *src, char *out, size_t outlen)
{
    bson_error_t err;
    rm_instream_t *s = rm_instream_new (src_read, src, "test", src->len);
    rm_reader_t *r = rm_reader_open_stream (s, NULL, &err);
    rm_item_t item;
    uint64_t crc = 0, items = 0;
    int rc;

    out[0] = '\0';
    if (!r) {
        snprintf (out, outlen, "open: %s", err.message);
        return;
    }
    while ((rc = rm_reader_next (r, &item, &err)) > 0) {
        uint32_t tag[2] = {(uint32_t) item.ns->index, (uint32_t) item.kind};
        crc = rm_crc64_update (crc, tag, sizeof tag);
        if (item.kind == RM_ITEM_DOC)
            crc = rm_crc64_update (crc, item.doc, item.len);
        items++;
    }
    if (rc < 0)
        snprintf (out, outlen, "error: %s", err.message);
    else
        snprintf (out, outlen, "%s %zu ns %llu items %016llx",
                  rm_format_name (rm_reader_info (r)->format), rm_reader_info (r)->n_ns,
                  (unsigned long long) items, (unsigned long long) crc);
    rm_reader_close (r);
}

static uint8_t *
gzip_bytes (const uint8_t *in, size_t len, size_t *out_len)
{
    z_stream z;
    uint8_t *out = malloc (len + 1024);
    memset (&z, 0, sizeof z);
    deflateInit2 (&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *) in;
    z.avail_in = (uInt) len;
    z.next_out = out;
    z.avail_out = (uInt) (len + 1024);
    deflate (&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd (&z);
    return out;
}

static uint8_t *
zstd_bytes (const uint8_t *in, size_t len, size_t *out_len)
{
    size_t cap = ZSTD_compressBound (len);
    uint8_t *out = malloc (cap);
    *out_len = ZSTD_compress (out, cap, in, len, 3);
    return out;
}

/* Every split point, and reads of 1 and 7 bytes, give the whole-read
 * fingerprint. */
static void
check_splits (const uint8_t *data, size_t len, const char *want_format)
{
    char whole[256], got[256];
    src_t src = {data, len, 0, len, 0};
    size_t bad = 0;

    fingerprint (&src, whole, sizeof whole);
    T_CHECK (strncmp (whole, want_format, strlen (want_format)) == 0);
    if (strncmp (whole, want_format, strlen (want_format)) != 0)
        fprintf (stderr, "  whole read: %s\n", whole);
    for (size_t split = 0; split <= len; split++) {
        src = (src_t){data, len, 0, split, 0};
        fingerprint (&src, got, sizeof got);
        if (strcmp (got, whole) != 0 && bad++ < 3)
            fprintf (stderr, "  split at %zu: %s\n", split, got);
    }
    for (size_t chunk = 1; chunk <= 7; chunk += 6) {
        src = (src_t){data, len, 0, 0, chunk};
        fingerprint (&src, got, sizeof got);
        if (strcmp (got, whole) != 0 && bad++ < 3)
            fprintf (stderr, "  %zu-byte reads: %s\n", chunk, got);
    }
    T_CHECK (bad == 0);
}

static void
run_file (const char *path, const char *want_format)
{
    size_t len, glen, zlen;
    uint8_t *data = slurp (path, &len), *g, *z;
    T_CHECK (data != NULL);
    if (!data)
        return;
    g = gzip_bytes (data, len, &glen);
    z = zstd_bytes (data, len, &zlen);
    check_splits (data, len, want_format);
    check_splits (g, glen, want_format);
    check_splits (z, zlen, want_format);
    free (data);
    free (g);
    free (z);
}

static void
test_archive_split_everywhere (void)
{
    run_file (FIX "mongorestore/testdata/dump-w-oplog.archive", "archive 3 ns 47 items");
    run_file (FIX "mongorestore/testdata/test.bar.archive", "archive 2 ns 4 items");
}

static void
test_bson_split_everywhere (void)
{
    run_file (FIX "bsondump/testdata/all_types.bson", "bson 1 ns 21 items");
    run_file (FIX "bsondump/testdata/deep_nested.bson", "bson 1 ns 2 items");
}

static void
test_truncation_found_at_every_length (void)
{
    /* Every proper prefix of an archive is an error, never a silent end. */
    size_t len;
    uint8_t *data = slurp (FIX "mongorestore/testdata/dump-w-oplog.archive", &len);
    size_t silent = 0;
    char got[256];
    T_CHECK (data != NULL);
    for (size_t cut = 4; data && cut < len; cut++) {
        src_t src = {data, cut, 0, cut, 0};
        fingerprint (&src, got, sizeof got);
        if (strncmp (got, "error: ", 7) != 0 && strncmp (got, "open: ", 6) != 0 && silent++ < 3)
            fprintf (stderr, "  prefix of %zu bytes read as: %s\n", cut, got);
    }
    T_CHECK (silent == 0);
    free (data);
}

static void
test_compress_parse (void)
{
    rm_compress_t c;
    bson_error_t err;
    T_CHECK (rm_compress_parse ("zstd", &c, &err) && c.codec == RM_CODEC_ZSTD && c.level == 0);
    T_CHECK (rm_compress_parse ("zstd:19", &c, &err) && c.level == 19);
    T_CHECK (rm_compress_parse ("gzip:1", &c, &err) && c.codec == RM_CODEC_GZIP && c.level == 1);
    T_CHECK (rm_compress_parse ("none", &c, &err) && c.codec == RM_CODEC_NONE);
    T_CHECK (!rm_compress_parse ("gzip:10", &c, &err));
    T_CHECK (strstr (err.message, "bad level") != NULL);
    T_CHECK (!rm_compress_parse ("zstd:x", &c, &err));
    T_CHECK (!rm_compress_parse ("brotli", &c, &err));
    T_CHECK (strstr (err.message, "unknown \"brotli\"") != NULL);
}

static void
test_destination_names (void)
{
    static const struct {
        const char *dst;
        rm_format_t f;
        rm_codec_t c;
    } cases[] = {
        {"x.archive", RM_FORMAT_ARCHIVE, RM_CODEC_NONE},
        {"x.archive.gz", RM_FORMAT_ARCHIVE, RM_CODEC_GZIP},
        {"x.archive.zst", RM_FORMAT_ARCHIVE, RM_CODEC_ZSTD},
        {"x.tar", RM_FORMAT_TAR, RM_CODEC_NONE},
        {"x.tar.zst", RM_FORMAT_TAR, RM_CODEC_ZSTD},
        {"x.tgz", RM_FORMAT_TAR, RM_CODEC_GZIP},
        {"x.bson", RM_FORMAT_BSON, RM_CODEC_NONE},
        {"x.bson.gz", RM_FORMAT_BSON, RM_CODEC_GZIP},
        {"-", RM_FORMAT_ARCHIVE, RM_CODEC_NONE},
        {"out", RM_FORMAT_DIR, RM_CODEC_NONE},
        {"out.gz.d", RM_FORMAT_DIR, RM_CODEC_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rm_write_opts_t o;
        memset (&o, 0, sizeof o);
        rm_write_opts_resolve (&o, cases[i].dst);
        if (o.format != cases[i].f || o.compress.codec != cases[i].c) {
            fprintf (stderr, "  %s: got %s/%s\n", cases[i].dst, rm_format_name (o.format),
                     rm_codec_name (o.compress.codec));
            T_CHECK (0);
        }
    }
}

/* Compresses data through an outstream into a temporary file and reads it
 * back through an instream; returns the file's size (0 on failure). */
static size_t
gzip_round_trip (const uint8_t *data, size_t len, int threads, bool *same)
{
    char path[] = "/tmp/remodel-test-gz-XXXXXX";
    int fd = mkstemp (path);
    rm_compress_t c = {RM_CODEC_GZIP, 6, threads};
    bson_error_t err;
    rm_outstream_t *o = rm_outstream_new (fd, path, &c, &err);
    rm_instream_t *in;
    const uint8_t *p;
    ssize_t n;
    size_t size;

    *same = false;
    if (!o || !rm_outstream_write (o, data, len, &err) || !rm_outstream_finish (o, &err))
        return 0;
    rm_outstream_destroy (o);
    size = (size_t) lseek (fd, 0, SEEK_END);
    close (fd);
    in = rm_instream_open (path, &err);
    n = in ? rm_instream_fill (in, len + 1, &p, &err) : -1;
    *same = n == (ssize_t) len && (len == 0 || memcmp (p, data, len) == 0) &&
            rm_instream_codec (in) == RM_CODEC_GZIP;
    rm_instream_close (in);
    unlink (path);
    return size;
}

static void
test_parallel_gzip (void)
{
    /* 3.5 MiB of compressible but varied bytes: four members in flight. */
    size_t len = 3 * (1u << 20) + (1u << 19);
    uint8_t *data = malloc (len);
    uint64_t x = 88172645463325252ull;
    size_t par, one, empty;
    bool same;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (uint8_t) ("abcdefgh"[x & 7]);
    }
    par = gzip_round_trip (data, len, 2, &same);
    T_CHECK (par > 0 && same);
    one = gzip_round_trip (data, len, 1, &same);
    T_CHECK (one > 0 && same);
    /* Independent members cost a little: the outputs differ in size. */
    T_CHECK (par != one);
    empty = gzip_round_trip (data, 0, 2, &same);
    T_CHECK (empty >= 18 && same); /* one empty member, still a gzip file */
    free (data);
}

static void
test_error_doc_format (void)
{
    bson_error_t err;
    rm_error_doc (&err, RM_ERR_FORMAT, "a.bson", "db.c", 3, 164, "truncated: %s", "x");
    T_CHECK_STR (err.message, "a.bson: db.c: document 3 at byte 164: truncated: x");
    T_CHECK (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_FORMAT);
    rm_error_doc (&err, RM_ERR_FORMAT, "a.bson", NULL, 1, 0, "bad");
    T_CHECK_STR (err.message, "a.bson: document 1 at byte 0: bad");
    rm_error_prefix (&err, "archive header");
    T_CHECK_STR (err.message, "archive header: a.bson: document 1 at byte 0: bad");
}

/* A growing byte buffer for archives built in memory. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} bytes_t;

static void
put (bytes_t *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc (b->p, b->cap);
    }
    memcpy (b->p + b->len, data, n);
    b->len += n;
}

static void
put_doc (bytes_t *b, const bson_t *d)
{
    put (b, bson_get_data (d), d->len);
}

static void
put_terminator (bytes_t *b)
{
    put (b, "\xff\xff\xff\xff", 4);
}

static void
put_ns_header (bytes_t *b, const char *coll, bool eof, uint64_t crc)
{
    bson_t h = BSON_INITIALIZER;
    BSON_APPEND_UTF8 (&h, "db", "t");
    BSON_APPEND_UTF8 (&h, "collection", coll);
    BSON_APPEND_BOOL (&h, "EOF", eof);
    BSON_APPEND_INT64 (&h, "CRC", (int64_t) crc);
    put_doc (b, &h);
    bson_destroy (&h);
}

/* An archive of about 14 MiB, more than the instream's window holds: two
 * namespaces in alternating segments of small documents, with a few of
 * 1-3 MiB that make the window grow. want[] gets each namespace's CRC,
 * computed one document at a time with the table version. */
static bytes_t
big_archive (uint64_t want[2])
{
    static const char *colls[2] = {"a", "b"};
    bytes_t b = {0};
    bson_t d = BSON_INITIALIZER;
    char *pad = malloc (3u << 20);
    uint64_t x = 0x9E3779B97F4A7C15ull;

    memset (pad, 'x', 3u << 20);
    put (&b, "\x6d\xe2\x99\x81", 4);
    BSON_APPEND_UTF8 (&d, "server_version", "7.0.0");
    put_doc (&b, &d);
    bson_reinit (&d);
    for (int i = 0; i < 2; i++) {
        BSON_APPEND_UTF8 (&d, "db", "t");
        BSON_APPEND_UTF8 (&d, "collection", colls[i]);
        BSON_APPEND_UTF8 (&d, "metadata", "");
        put_doc (&b, &d);
        bson_reinit (&d);
    }
    put_terminator (&b);
    want[0] = want[1] = 0;
    for (int seg = 0; seg < 40; seg++) {
        int ns = seg & 1;
        put_ns_header (&b, colls[ns], false, 0);
        for (int i = 0; i < 2000; i++) {
            size_t n;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            n = (x % 300) + ((seg % 13 == 5 && i == 700) ? (x % (3u << 20)) : 0) +
                (i % 97 == 0 ? (x % (200u << 10)) : 0);
            BSON_APPEND_INT64 (&d, "i", (int64_t) x);
            bson_append_utf8 (&d, "s", 1, pad, (int) n);
            want[ns] = rm_crc64_update_table (want[ns], bson_get_data (&d), d.len);
            put_doc (&b, &d);
            bson_reinit (&d);
        }
        put_terminator (&b);
    }
    for (int ns = 0; ns < 2; ns++) {
        put_ns_header (&b, colls[ns], true, want[ns]);
        put_terminator (&b);
    }
    bson_destroy (&d);
    free (pad);
    return b;
}

/* Reads the archive in reads of `chunk` bytes; got[] receives each
 * namespace's CRC as seen at its end. Returns the error text or "". */
/* Reads r to the end: each namespace's CRC into got, or the error into msg. */
static void
drain_crcs (rm_reader_t *r, uint64_t got[2], char *msg, size_t msglen)
{
    bson_error_t err;
    rm_item_t item;
    int rc;

    while ((rc = rm_reader_next (r, &item, &err)) > 0)
        if (item.kind == RM_ITEM_NS_END)
            got[item.ns->index] = item.ns->crc;
    if (rc < 0)
        snprintf (msg, msglen, "%s", err.message);
}

static void
read_crcs (const bytes_t *b, size_t chunk, uint64_t got[2], char *msg, size_t msglen)
{
    src_t src = {b->p, b->len, 0, 0, chunk};
    bson_error_t err;
    rm_instream_t *s = rm_instream_new (src_read, &src, "big", b->len);
    rm_reader_t *r = rm_reader_open_stream (s, NULL, &err);

    msg[0] = '\0';
    got[0] = got[1] = 0;
    if (!r) {
        snprintf (msg, msglen, "open: %s", err.message);
        return;
    }
    drain_crcs (r, got, msg, msglen);
    rm_reader_close (r);
}

/* The reader sums runs of documents into the CRC in one call: the runs
 * must end before the window slides or grows, whatever the read sizes. */
static void
test_crc_runs_across_window_moves (void)
{
    uint64_t want[2], got[2];
    bytes_t b = big_archive (want);
    static const size_t chunks[] = {0, 4093, 65536, 1000003};
    char msg[512];
    size_t at;

    T_CHECK (b.len > (12u << 20));
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        read_crcs (&b, chunks[i], got, msg, sizeof msg);
        if (msg[0])
            fprintf (stderr, "  %zu-byte reads: %s\n", chunks[i], msg);
        T_CHECK (msg[0] == '\0' && got[0] == want[0] && got[1] == want[1]);
    }
    /* One changed bit in the last EOF block's CRC is found. */
    at = b.len - 4 - 5; /* the CRC int64 ends one byte before the document */
    b.p[at] ^= 1;
    read_crcs (&b, 0, got, msg, sizeof msg);
    T_CHECK (strstr (msg, "t.b: CRC mismatch") != NULL);
    b.p[at] ^= 1;
    free (b.p);
}

/* Pieces of 1 byte to 3 MiB, so that some writes fill buffers and some
 * bypass them. */
static size_t
piece_len (uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    switch (*x % 8) {
    case 0: return (size_t) (*x >> 8) % (3u << 20);
    case 1: return 1;
    default: return (size_t) (*x >> 8) % 5000;
    }
}

/* Six files written at once through outstreams (more than the write
 * thread's spare buffers), with pieces of every size: each file holds
 * exactly its bytes, in order. */
static void
test_write_thread_many_files (void)
{
    enum { FILES = 6, TOTAL = 24u << 20 };
    char paths[FILES][64];
    int fds[FILES];
    rm_outstream_t *out[FILES];
    size_t written[FILES] = {0};
    uint8_t *data = malloc (TOTAL);
    uint64_t x = 0x2545F4914F6CDD1Dull;
    rm_compress_t none = {RM_CODEC_NONE, 0, 0};
    bson_error_t err;
    bool ok = true;

    for (size_t i = 0; i < TOTAL; i++)
        data[i] = (uint8_t) (i * 2654435761u >> 13);
    for (int f = 0; f < FILES; f++) {
        snprintf (paths[f], sizeof paths[f], "/tmp/remodel-test-wt-XXXXXX");
        fds[f] = mkstemp (paths[f]);
        out[f] = rm_outstream_new (fds[f], paths[f], &none, &err);
    }
    for (int round = 0; ok && round < 400; round++) {
        int f = (int) (x % FILES);
        size_t n = piece_len (&x);
        if (written[f] + n > TOTAL)
            continue;
        ok = rm_outstream_write (out[f], data + written[f], n, &err);
        written[f] += n;
    }
    for (int f = 0; f < FILES; f++) {
        const uint8_t *p;
        rm_instream_t *in;
        ok = rm_outstream_finish (out[f], &err) && ok;
        rm_outstream_destroy (out[f]);
        close (fds[f]);
        in = rm_instream_open (paths[f], &err);
        T_CHECK (in && rm_instream_fill (in, TOTAL + 1, &p, &err) == (ssize_t) written[f] &&
                 memcmp (p, data, written[f]) == 0);
        rm_instream_close (in);
        unlink (paths[f]);
    }
    T_CHECK (ok);
    free (data);
}

/* A write the thread fails (a regular file opened read-only) is told by a
 * later write or the finish, with the stream's name; destroying a stream
 * with writes still queued leaks nothing (the sanitizer build checks). */
static void
test_write_thread_errors (void)
{
    char path[] = "/tmp/remodel-test-wt-XXXXXX";
    int fd = mkstemp (path);
    int ro = open (path, O_RDONLY);
    rm_compress_t none = {RM_CODEC_NONE, 0, 0};
    uint8_t *chunk = calloc (1, 100000);
    bson_error_t err;
    rm_outstream_t *o = rm_outstream_new (ro, "the-output", &none, &err);
    bool ok = true;
    int writes = 0;

    memset (&err, 0, sizeof err);
    while (ok && writes < 1000) {
        ok = rm_outstream_write (o, chunk, 100000, &err);
        writes++;
    }
    if (ok)
        ok = rm_outstream_finish (o, &err);
    T_CHECK (!ok);
    T_CHECK (strstr (err.message, "the-output: write failed: Bad file descriptor") != NULL);
    T_CHECK (err.code == RM_ERR_IO);
    rm_outstream_destroy (o);

    /* 30 MB queued, then destroyed without a finish */
    o = rm_outstream_new (fd, path, &none, &err);
    for (int i = 0; i < 300; i++)
        rm_outstream_write (o, chunk, 100000, &err);
    rm_outstream_destroy (o);
    close (ro);
    close (fd);
    unlink (path);
    free (chunk);
}

/* Once SIGINT/SIGTERM has come, an outstream takes nothing more and
 * finishes nothing, in every codec: every writer (the tar's too) stops
 * there, whether or not its input side is still reading. */
static void
test_outstream_stops_on_signal (void)
{
    static const rm_codec_t codecs[] = {RM_CODEC_NONE, RM_CODEC_GZIP, RM_CODEC_ZSTD};
    uint8_t chunk[4096] = {1};

    for (size_t i = 0; i < 3; i++) {
        for (int threads = 1; threads <= 2; threads++) {
            char path[] = "/tmp/remodel-test-sig-XXXXXX";
            int fd = mkstemp (path);
            rm_compress_t c = {codecs[i], 0, threads};
            bson_error_t err;
            rm_outstream_t *o = rm_outstream_new (fd, path, &c, &err);

            memset (&err, 0, sizeof err);
            T_CHECK (o && rm_outstream_write (o, chunk, sizeof chunk, &err));
            rm_interrupted = SIGTERM;
            T_CHECK (!rm_outstream_write (o, chunk, sizeof chunk, &err));
            T_CHECK (err.code == RM_ERR_INTERRUPTED);
            memset (&err, 0, sizeof err);
            T_CHECK (!rm_outstream_finish (o, &err));
            T_CHECK (err.code == RM_ERR_INTERRUPTED);
            rm_interrupted = 0;
            rm_outstream_destroy (o);
            close (fd);
            unlink (path);
        }
    }
}

static bool
write_file (const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen (path, "wb");
    bool ok = f && fwrite (p, 1, n, f) == n;
    if (f)
        ok = fclose (f) == 0 && ok;
    return ok;
}

/* Reads the dump at path to its end: each namespace's CRC at its end, the
 * error text ("" if none), and whether progress ended at the file's size. */
static void
read_path (const char *path, uint64_t got[2], char *msg, size_t msglen, bool *progress_done)
{
    bson_error_t err;
    rm_reader_t *r = rm_reader_open (path, NULL, &err);
    uint64_t done = 0, total = 0;

    msg[0] = '\0';
    got[0] = got[1] = 0;
    *progress_done = false;
    if (!r) {
        snprintf (msg, msglen, "open: %s", err.message);
        return;
    }
    drain_crcs (r, got, msg, msglen);
    rm_reader_progress (r, &done, &total);
    *progress_done = total > 0 && done == total;
    rm_reader_close (r);
}

/* Files big enough for the read-ahead thread, plain and compressed: the
 * same documents and CRCs as in memory; cut or damaged compressed files
 * fail with the codec's error. */
static void
test_read_ahead (void)
{
    uint64_t want[2], got[2];
    bytes_t b = big_archive (want);
    size_t glen, zlen;
    uint8_t *g = gzip_bytes (b.p, b.len, &glen), *z = zstd_bytes (b.p, b.len, &zlen);
    char path[] = "/tmp/remodel-test-ra-XXXXXX", msg[512];
    int fd = mkstemp (path);
    bool done;

    close (fd);
    T_CHECK (write_file (path, b.p, b.len));
    read_path (path, got, msg, sizeof msg, &done);
    T_CHECK (msg[0] == '\0' && got[0] == want[0] && got[1] == want[1] && done);
    if (msg[0])
        fprintf (stderr, "  plain: %s\n", msg);

    T_CHECK (write_file (path, g, glen));
    read_path (path, got, msg, sizeof msg, &done);
    T_CHECK (msg[0] == '\0' && got[0] == want[0] && got[1] == want[1] && done);
    if (msg[0])
        fprintf (stderr, "  gzip: %s\n", msg);

    T_CHECK (write_file (path, z, zlen));
    read_path (path, got, msg, sizeof msg, &done);
    T_CHECK (msg[0] == '\0' && got[0] == want[0] && got[1] == want[1] && done);
    if (msg[0])
        fprintf (stderr, "  zstd: %s\n", msg);

    T_CHECK (write_file (path, z, zlen * 3 / 4));
    read_path (path, got, msg, sizeof msg, &done);
    T_CHECK (strstr (msg, "truncated zstd stream") != NULL);
    T_CHECK (write_file (path, g, glen * 3 / 4));
    read_path (path, got, msg, sizeof msg, &done);
    T_CHECK (strstr (msg, "truncated gzip stream") != NULL);
    g[glen / 2] ^= 0x55;
    T_CHECK (write_file (path, g, glen));
    read_path (path, got, msg, sizeof msg, &done);
    T_CHECK (msg[0] != '\0');

    /* Closed before the end, with the thread still reading. */
    T_CHECK (write_file (path, b.p, b.len));
    {
        bson_error_t err;
        rm_reader_t *r = rm_reader_open (path, NULL, &err);
        rm_item_t item;
        T_CHECK (r && rm_reader_next (r, &item, &err) == 1);
        rm_reader_close (r);
    }
    unlink (path);
    free (g);
    free (z);
    free (b.p);
}

int
main (void)
{
    T_RUN (test_archive_split_everywhere);
    T_RUN (test_bson_split_everywhere);
    T_RUN (test_truncation_found_at_every_length);
    T_RUN (test_compress_parse);
    T_RUN (test_destination_names);
    T_RUN (test_error_doc_format);
    T_RUN (test_parallel_gzip);
    T_RUN (test_crc_runs_across_window_moves);
    T_RUN (test_write_thread_many_files);
    T_RUN (test_write_thread_errors);
    T_RUN (test_outstream_stops_on_signal);
    T_RUN (test_read_ahead);
    return t_done ();
}
