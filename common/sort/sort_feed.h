/* The first step of the sort-merge joins (join_sort.c, denorm_sort.c): a
 * store's documents, each under each of its join keys, into an external
 * sorter. */
#ifndef REMODEL_SORT_FEED_H
#define REMODEL_SORT_FEED_H

#include "remodel/buf.h"
#include "remodel/sorter.h"
#include "store.h"

/* A framed key of this length is a slot without a key: it takes a slot
 * number but adds no record. */
#define RM_SORT_NO_KEY UINT32_MAX

/* What one document gives the sorter: n keys in keys, each framed by a
 * uint32 length, and what each key's record carries after the document's
 * seq: payload, or (payload NULL) the key's slot number, or (slot true)
 * the slot number and then payload. */
typedef struct {
    const rm_buf_t *keys;
    size_t n;
    const uint8_t *payload;
    size_t payload_len;
    bool slot;
} rm_sort_doc_t;

typedef void (*rm_sort_doc_fn) (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out);

/* Adds every document of store, the nth with seq n, to dst: one record per
 * key, [seq: be64][payload], [seq: be64][slot: be32] or [seq: be64][slot:
 * be32][payload], sorted by the key;
 * then finishes dst. */
bool rm_sort_feed (rm_store_t *store, rm_sorter_t *dst, rm_sort_doc_fn fn, void *ctx,
                   bson_error_t *err);

#endif
