/* A mongodump dump as a stream: its namespaces (with their metadata) known
 * up front, then documents tagged with their namespace, in any interleaving.
 *
 * Readers exist for archives, directory dumps, tar archives of a dump
 * directory and single .bson files; the format is detected from the bytes.
 * Writers exist for the same formats plus standard output. Every writer
 * writes under a temporary name and renames only on commit. */
#ifndef REMODEL_DUMP_H
#define REMODEL_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"
#include "remodel/stream.h"

typedef enum {
    RM_FORMAT_AUTO = 0,
    RM_FORMAT_ARCHIVE, /* mongodump --archive */
    RM_FORMAT_DIR,     /* mongodump --out DIR */
    RM_FORMAT_TAR,     /* a tar of a dump directory */
    RM_FORMAT_BSON,    /* one .bson file */
} rm_format_t;

const char *rm_format_name (rm_format_t f);
bool rm_format_parse (const char *text, rm_format_t *out);

/* One namespace of a dump. */
typedef struct {
    char *db;
    char *coll;        /* real name, as in the prelude or collectionName */
    char *data_coll;   /* name its documents are stored under: coll, or
                          system.buckets.<coll> for time-series before 8.3 */
    char *type;        /* "", "collection", "view", "timeseries" */
    bool has_type;     /* archives from 3.4/4.0 have no type field */
    char *metadata;    /* metadata JSON text, verbatim; NULL: none */
    size_t metadata_len;
    bool is_oplog;     /* db "" and collection "oplog" */
    bool is_view;      /* views hold no documents */

    /* Counted while the dump is read or written. */
    uint64_t docs;
    uint64_t bytes;
    uint64_t crc;      /* CRC-64 of the documents so far, in stream order */
    uint64_t invalid;  /* bad documents set aside (--skip-invalid) */
    bool crc_given;    /* writers: the caller copies the documents of a
                          source namespace unchanged and sets crc (the
                          reader's) before ending it, so no second pass */
    bool crc_checked;  /* an archive EOF block carried a CRC that matched */
    bool ended;
    size_t index;      /* position in rm_dump_info_t.ns */
} rm_ns_t;

/* What a reader knows once opened, and what a writer is told to write. */
typedef struct {
    rm_format_t format;
    rm_codec_t codec;       /* whole-stream compression (archive, bson, tar) */
    bool gzip_files;        /* a directory dump with .gz files */
    char *server_version;   /* NULL: unknown */
    char *tool_version;
    int concurrent_collections;
    rm_ns_t **ns;
    size_t n_ns;
} rm_dump_info_t;

void rm_dump_info_init (rm_dump_info_t *info);
void rm_dump_info_destroy (rm_dump_info_t *info);
rm_ns_t *rm_dump_info_add (rm_dump_info_t *info, const char *db, const char *coll);
rm_ns_t *rm_dump_info_find (const rm_dump_info_t *info, const char *db, const char *coll);
/* Finds by the name documents are stored under (coll or data_coll). */
rm_ns_t *rm_dump_info_find_data (const rm_dump_info_t *info, const char *db,
                                 const char *data_coll);
/* Copies the namespace list (names, types, metadata) without the counts. */
void rm_dump_info_copy (rm_dump_info_t *dst, const rm_dump_info_t *src);
/* "db.coll", or "oplog" for the oplog; into buf. */
const char *rm_ns_name (const rm_ns_t *ns, char *buf, size_t len);
void rm_ns_set_metadata (rm_ns_t *ns, const char *json, size_t len);
/* Copies what a namespace is (type, view, oplog, metadata) from s to d;
 * not its names or counts. */
void rm_ns_copy_kind (rm_ns_t *d, const rm_ns_t *s);

/* ---- reading ---- */

typedef struct rm_reader rm_reader_t;

typedef struct {
    bool skip_invalid;      /* set bad documents aside instead of failing */
    const char *quarantine; /* where they go (a .bson file); NULL: none */
    bool no_check;          /* trust the bytes (benchmarks only) */
    const char *tmpdir;     /* where a tar on standard input is copied before
                               it is read (NULL: $TMPDIR or /tmp) */
    const struct rm_nsselect *select; /* --nsInclude/--nsExclude/--nsFrom/--nsTo:
                               only these namespaces, renamed (NULL: all) */
} rm_read_opts_t;

typedef enum { RM_ITEM_DOC = 1, RM_ITEM_NS_END } rm_item_kind_t;

typedef struct {
    rm_item_kind_t kind;
    rm_ns_t *ns;
    const uint8_t *doc; /* RM_ITEM_DOC: valid until the next call */
    uint32_t len;
    bool held;          /* doc stays valid and unchanged until rm_reader_close
                           (a mapped archive): rm_writer_doc_held may keep it */
    uint32_t n_docs;    /* RM_ITEM_DOC: documents one after another in doc..len,
                           all checked; more than one only from
                           rm_reader_next_run */
    uint64_t ordinal;   /* 1-based position of the document in its namespace */
} rm_item_t;

/* Opens any dump: "-" is standard input (an archive or .bson stream). */
rm_reader_t *rm_reader_open (const char *path, const rm_read_opts_t *opts,
                             bson_error_t *err);
/* Reads an archive or .bson stream from s (taken over, closed with the
 * reader): for callers with their own byte source. */
rm_reader_t *rm_reader_open_stream (rm_instream_t *s, const rm_read_opts_t *opts,
                                    bson_error_t *err);
/* Reads documents held in memory (the online companion's batches): the
 * namespaces of info (copied), the ith one's documents one after another
 * in docs[i], lens[i] bytes (kept by pointer until the reader closes);
 * name is the source in messages. */
rm_reader_t *rm_reader_open_memory (const char *name, const rm_dump_info_t *info,
                                    const uint8_t *const *docs, const size_t *lens);
const rm_dump_info_t *rm_reader_info (const rm_reader_t *r);
/* 1: an item; 0: the end (every namespace ended); -1: error. */
int rm_reader_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err);
/* As rm_reader_next, but an archive's documents may come as a run: the
 * ones right after the first that lie together and were checked already,
 * up to 256 KiB in all (rm_item_t.n_docs), for callers that copy them. */
int rm_reader_next_run (rm_reader_t *r, rm_item_t *item, bson_error_t *err);
/* Source bytes consumed so far and in all (0: unknown), for progress. */
void rm_reader_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total);
/* Documents set aside by skip_invalid. */
uint64_t rm_reader_skipped (const rm_reader_t *r);
void rm_reader_close (rm_reader_t *r);

/* ---- writing ---- */

typedef struct rm_writer rm_writer_t;

typedef struct {
    rm_format_t format;  /* AUTO: from the destination's name */
    rm_compress_t compress;
    bool compress_set;   /* false: from the destination's name */
    bool force;          /* replace an existing destination */
} rm_write_opts_t;

/* Picks format and compression from a destination name when the options
 * leave them open: *.archive[.gz|.zst], *.tar[.gz|.zst], *.tgz, *.bson[.gz|.zst],
 * "-" (an archive on stdout), anything else a directory. */
void rm_write_opts_resolve (rm_write_opts_t *opts, const char *dst);

/* Opens dst for a dump with the namespaces of info (kept by pointer: it must
 * outlive the writer). Documents are then given per namespace in any order. */
rm_writer_t *rm_writer_open (const char *dst, const rm_write_opts_t *opts,
                             rm_dump_info_t *info, bson_error_t *err);
bool rm_writer_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len,
                    bson_error_t *err);
/* As rm_writer_doc, for a document that stays valid and unchanged until
 * the writer is destroyed (rm_item_t.held, the reader closed after the
 * writer): a plain archive is then written from it without a copy. */
bool rm_writer_doc_held (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len,
                         bson_error_t *err);
/* n documents of ns one after another in docs[0..len) (a run of
 * rm_item_t.n_docs): as rm_writer_doc (held: rm_writer_doc_held) of each,
 * and an archive takes them in one piece. */
bool rm_writer_docs (rm_writer_t *w, rm_ns_t *ns, const uint8_t *docs, uint32_t len, uint32_t n,
                     bool held, bson_error_t *err);
bool rm_writer_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err);
/* A writer that gives each document to fn instead of writing a dump (the
 * online companion's batches); ns is one of info's. */
typedef bool (*rm_writer_fn) (void *ctx, const rm_ns_t *ns, const uint8_t *doc, uint32_t len,
                              bson_error_t *err);
rm_writer_t *rm_writer_open_fn (rm_dump_info_t *info, rm_writer_fn fn, void *ctx);
/* Ends every namespace not yet ended, flushes, renames into place. */
bool rm_writer_commit (rm_writer_t *w, bson_error_t *err);
/* Removes everything written. Safe after a failed call. */
void rm_writer_abort (rm_writer_t *w);
void rm_writer_destroy (rm_writer_t *w);

#endif
