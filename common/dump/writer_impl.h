/* Internals shared by the format writers. */
#ifndef REMODEL_WRITER_IMPL_H
#define REMODEL_WRITER_IMPL_H

#include "remodel/dump.h"

typedef struct {
    /* Sets up the output at w->tmp (or stdout when w->to_stdout). */
    bool (*open) (rm_writer_t *w, bson_error_t *err);
    bool (*doc) (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len,
                 bson_error_t *err);
    bool (*ns_end) (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err);
    /* Flushes and closes everything at w->tmp, ready to be renamed. */
    bool (*finish) (rm_writer_t *w, bson_error_t *err);
    void (*destroy) (rm_writer_t *w);
    /* Optional: n small documents one after another (rm_writer_docs);
     * without it, each goes to doc. */
    bool (*docs) (rm_writer_t *w, rm_ns_t *ns, const uint8_t *docs, uint32_t len,
                  bson_error_t *err);
} rm_writer_ops_t;

struct rm_writer {
    const rm_writer_ops_t *ops;
    void *impl;
    char *dst;
    char *tmp;        /* NULL when writing to stdout */
    bool to_stdout;
    rm_write_opts_t opts;
    rm_dump_info_t *info;
    bool done;        /* committed or aborted */
    bool doc_held;    /* the document being given is rm_writer_doc_held's */
};

extern const rm_writer_ops_t rm_archive_writer_ops;
extern const rm_writer_ops_t rm_dir_writer_ops;
extern const rm_writer_ops_t rm_tar_writer_ops;
extern const rm_writer_ops_t rm_bson_writer_ops;

/* The directory writer, used by the tar writer too: writes the dump
 * directory at root. */
typedef struct rm_dirw rm_dirw_t;
rm_dirw_t *rm_dirw_new (const char *root, rm_dump_info_t *info, bool gzip_files,
                        const rm_compress_t *c, bson_error_t *err);
bool rm_dirw_doc (rm_dirw_t *d, rm_ns_t *ns, const uint8_t *doc, uint32_t len,
                  bson_error_t *err);
bool rm_dirw_ns_end (rm_dirw_t *d, rm_ns_t *ns, bson_error_t *err);
bool rm_dirw_finish (rm_dirw_t *d, bson_error_t *err);
void rm_dirw_destroy (rm_dirw_t *d);

/* The server version an archive's prelude gets when the source did not say:
 * mongo-tools' own word for it (mongodump writes it when it cannot tell,
 * mongorestore accepts it), not an invented version. */
#define RM_DEFAULT_SERVER_VERSION "unknown"
#define RM_TOOL_VERSION "remodel 0.1.0"

#endif
