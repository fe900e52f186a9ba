/* The two ways embed finds each parent's children: a hash table when the
 * children fit in the memory budget, an external sort-merge when they do
 * not. Both hand the assembler the same thing: for each parent, in order,
 * its matching children, each once, in the order the plan asks for. */
#ifndef REMODEL_EMBED_JOIN_H
#define REMODEL_EMBED_JOIN_H

#include "engine_impl.h"

/* One matched child, as the assembler sees it. */
typedef struct {
    const uint8_t *doc;
    uint32_t len;
    uint32_t slot; /* which of the parent's local keys it matched (first) */
    uint64_t seq;  /* position of the child in `from` */
} rm_child_t;

/* Puts a parent's children (each once) in embed's order: the plan's sort
 * when given; else, when localField held several keys (an array of
 * references), the order of that array, each key's children by _id; else
 * by _id ascending. Ties keep their order in `from`. */
void rm_embed_order (const rm_embed_t *spec, rm_child_t *c, size_t n, bool by_slot);

/* Appends the canonical join keys of the value(s) at path to keys (each
 * framed by a uint32 length), distinct, in the order of the values: the
 * local side (foreign false) expands an array into its elements; the
 * foreign side also matches an array as a whole. Missing, null or an empty
 * array give the single null key. Returns the count. */
size_t rm_join_keys (const rm_path_t *path, bool foreign, const uint8_t *doc, uint32_t len,
                     rm_buf_t *keys);

/* Builds the parent with its children (from the assembler) and writes it,
 * the overflow documents and the counts. */
typedef struct rm_embed_out rm_embed_out_t;
rm_embed_out_t *rm_embed_out_new (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_embed_out_parent (rm_embed_out_t *o, const uint8_t *doc, uint32_t len,
                          const rm_child_t *children, size_t n, bson_error_t *err);
/* Seals and swaps the parent and overflow stores in. */
bool rm_embed_out_finish (rm_embed_out_t *o, bson_error_t *err);
void rm_embed_out_destroy (rm_embed_out_t *o);

bool rm_embed_hash_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_embed_sort_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);

#endif
