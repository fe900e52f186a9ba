/* Internals shared by the format readers (archive, directory, tar, bson). */
#ifndef REMODEL_READER_IMPL_H
#define REMODEL_READER_IMPL_H

#include "remodel/dump.h"
#include "nsindex.h"

typedef struct {
    int (*next) (rm_reader_t *r, rm_item_t *item, bson_error_t *err);
    void (*progress) (const rm_reader_t *r, uint64_t *done, uint64_t *total);
    void (*close) (rm_reader_t *r);
} rm_reader_ops_t;

/* Documents of one namespace that lie one after another in a stream's
 * window, not yet added to the namespace's CRC: one CRC call over the run
 * costs far less than one per (small) document. */
typedef struct {
    rm_ns_t *ns;
    rm_instream_t *s;
    const uint8_t *start;
    size_t len;
} rm_crc_run_t;

struct rm_reader {
    const rm_reader_ops_t *ops;
    void *impl;
    char *path;        /* the name in messages ("<stdin>" for standard input) */
    char *spool;       /* a tar read from standard input, copied here */
    rm_dump_info_t info;
    rm_read_opts_t opts;
    uint64_t skipped;
    int quarantine_fd;
    rm_crc_run_t crc_run;
    bool runs;         /* this call may give a run (rm_reader_next_run) */
    /* --nsInclude/--nsExclude/--nsFrom (reader_select.c): callers see
     * view, the selected namespaces under their new names; map takes an
     * index of info to one of view (or (size_t) -1: not selected). */
    bool viewing;
    rm_dump_info_t view;
    size_t *map, n_map;
};

bool rm_reader_select_init (rm_reader_t *r, bson_error_t *err);
/* Maps an item onto the view: 1, or 0 when its namespace is not selected,
 * -1 on error. */
int rm_reader_select_item (rm_reader_t *r, rm_item_t *item, bson_error_t *err);
/* Copies the counts (documents, CRC, ...) into the view. */
void rm_reader_select_sync (rm_reader_t *r);
void rm_reader_select_destroy (rm_reader_t *r);

/* Each format's opener fills r->info and r->ops/impl; false on error. The
 * instream s has been opened on the file (NULL for a directory) and is owned
 * by the format from then on. */
bool rm_archive_reader_init (rm_reader_t *r, rm_instream_t *s, bson_error_t *err);
bool rm_bson_reader_init (rm_reader_t *r, rm_instream_t *s, bson_error_t *err);
bool rm_dir_reader_init (rm_reader_t *r, bson_error_t *err);
bool rm_tar_reader_init (rm_reader_t *r, bson_error_t *err);
bool rm_mem_reader_init (rm_reader_t *r, const rm_dump_info_t *info, const uint8_t *const *docs,
                         const size_t *lens);

/* The file a reader that needs several passes opens. */
static inline const char *
rm_reader_file (const rm_reader_t *r)
{
    return r->spool ? r->spool : r->path;
}

/* write(2) until all n bytes of p are written; name is the file's, for
 * the message. */
bool rm_reader_write_all (int fd, const char *name, const uint8_t *p, size_t n, bson_error_t *err);

/* The next valid document of ns on s (reader_frame.c): a frame from rm_frame_next, with bad
 * documents set aside when --skip-invalid allows it and every other error
 * given the file, namespace, ordinal and offset. Updates ns's counts. */
rm_frame_kind_t rm_reader_frame (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns,
                                 uint32_t max_len, rm_frame_t *f, bson_error_t *err);

/* Within rm_reader_next_run, extends the document f that
 * rm_reader_frame just gave (of ns, on s) with the documents right after
 * it that lie whole in the window and were checked already (or need no
 * check), up to RM_READER_RUN_MAX bytes in all, counting them as
 * rm_reader_frame does; returns how many documents f holds now. */
#define RM_READER_RUN_MAX ((uint32_t) 256u << 10)
uint32_t rm_reader_frame_run (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns, uint32_t max_len,
                              rm_frame_t *f);

/* Adds the pending run of documents to its namespace's CRC. Called before
 * anything reads ns->crc and before the run's stream is closed;
 * rm_reader_frame and rm_reader_next call it whenever needed otherwise. */
void rm_reader_crc_flush (rm_reader_t *r);

/* Directory dumps and tars share their file naming. */
typedef enum { RM_FILE_OTHER = 0, RM_FILE_BSON, RM_FILE_METADATA } rm_file_kind_t;
/* Classifies a file name inside a db directory; *stem gets the collection
 * part (bson_free it). */
rm_file_kind_t rm_layout_classify (const char *name, char **stem);

/* Adds the namespace a metadata file describes (real name from
 * collectionName when present). where: the db directory, for messages;
 * names: info's index (nsindex.h), one for the whole scan. */
rm_ns_t *rm_layout_add_metadata (rm_dump_info_t *info, rm_nsindex_t *names, const char *where,
                                 const char *db, const char *stem, const char *json, size_t len,
                                 bson_error_t *err);
/* Finds or adds the namespace a .bson file holds: pairs system.buckets.X
 * with the time-series X. Returns NULL (err set) for a bad name. */
rm_ns_t *rm_layout_ns_for_bson (rm_dump_info_t *info, rm_nsindex_t *names, const char *where,
                                const char *db, const char *stem, bson_error_t *err);
/* Reads a whole small file (metadata, prelude) from s. bson_free it. */
char *rm_layout_slurp (rm_instream_t *s, size_t *len, bson_error_t *err);
/* Reads a prelude.json text into info's versions. */
void rm_layout_read_prelude (rm_dump_info_t *info, const char *json, size_t len);
/* The next document of ns's .bson file (a directory's file, a tar's
 * member) on s, into item: 1, or 0 at the end of the file, or -1 (err
 * set). An archive's -1 terminator has no place in a .bson file. */
int rm_layout_next_doc (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns, rm_item_t *item,
                        bson_error_t *err);
/* Marks ns ended and makes item say so; returns 1, as a next op does. */
int rm_layout_end_ns (rm_ns_t *ns, rm_item_t *item);

#endif
