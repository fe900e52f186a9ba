/* The two ways embed finds each parent's children: a hash table when the
 * children fit in the memory budget, an external sort-merge when they do
 * not. Both hand the assembler the same thing: for each parent, in order,
 * its matching children, each once, in the order the plan asks for. */
#ifndef REMODEL_EMBED_JOIN_H
#define REMODEL_EMBED_JOIN_H

#include "engine_impl.h"
#include "remodel/passes.h"

/* One matched child, as the assembler sees it. */
typedef struct {
    const uint8_t *doc;
    uint32_t len;
    uint32_t slot; /* which of the parent's local keys it matched (first) */
    uint64_t seq;  /* position of the child in `from` */
    /* Where its _id element starts (rm_child_id_at): looked up once per
     * child, not twice per comparison. 0: not looked up yet. */
    uint32_t id_at;
    /* doc is already what the consumer keeps of the child (rm_join_t's
     * prepare made it), not the child as in `from`. */
    bool prepared;
} rm_child_t;

#define RM_CHILD_NO_ID UINT32_MAX
/* The offset of the document's _id element, RM_CHILD_NO_ID if it has none. */
uint32_t rm_child_id_at (const uint8_t *doc, uint32_t len);

/* What the step's "filter" and "match" (remodel/plan.h) select, set by
 * rm_join_run: the parents that take children (the others pass as they
 * are, through rm_join_t's pass) and the children that may be taken (the
 * others are taken by no parent: they stay in `from` as orphans do). cx
 * evaluates them on the thread that runs the join's consumer; the hash
 * join's probers make their own. */
typedef struct {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_query_t *filter, *match; /* NULL: every document */
    int64_t now;                      /* $$NOW of the run */
    const char *into_name, *from_name;
    rm_expr_ctx_t *cx;
    uint64_t parents, children;       /* those selected, for the join check */
} rm_join_sel_t;

/* A join of the documents of `into` (parents) with those of `from`
 * (children) by $lookup equality, handing each parent in order to a
 * consumer (embed builds the parent's array, summarize its computed
 * fields): begin with the parent, child for each of its matching children,
 * each once and in order, then end. The consumer sees one child at a time
 * and keeps what it needs: a parent's children are never all held at once
 * (a key may have millions), so its memory is its own business (embed
 * holds at most one document's worth, summarize its accumulators). The
 * parent's bytes stay valid until end; a child's only during its call. */
typedef struct {
    const rm_path_t *local, *foreign;
    const rm_sortspec_t *sort; /* the children's order (n == 0: none) */
    bool order_by_id;          /* ties by the parent's references first (embed) */
    bool rewrite_from;         /* from loses the matched children... */
    bool keep_source;          /* ...unless this */
    const rm_nsref_t *from, *into;
    bool (*begin) (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err);
    bool (*child) (void *ctx, const rm_child_t *c, bson_error_t *err);
    bool (*end) (void *ctx, bson_error_t *err);
    bool (*finish) (void *ctx, bson_error_t *err);
    /* Optional: appends to out what child will keep of c (embed: the child
     * projected), for the hash join's probe worker to make on its core, the
     * child in its cache, a batch ahead of the consumer. Only reads ctx. */
    void (*prepare) (const void *ctx, const rm_child_t *c, rm_buf_t *out);
    /* A parent the step's filter leaves out: instead of begin, child and
     * end, it goes here, to be kept byte for byte. */
    bool (*pass) (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err);
    void *ctx;
    /* Set by rm_join_run: the step's probes of localField and foreignField
     * (NULL: none), shown each parent and each child once, and the
     * engine's $lookup rules (rm_join_keys). */
    rm_probe_t *probe_local, *probe_foreign;
    bool since_36681;
    rm_join_sel_t *sel;
} rm_join_t;

/* Whether the step's filter (match, when match) takes doc, a document of
 * ns_name, into *take (always without one), cx reset first: the steps'
 * shared form of it. An error names the document ("<ns>: document <_id>:
 * filter: ...") and goes to rm_engine_doc_error: where that collects it
 * (check --against), *take is false (the document as it was) and the run
 * goes on; otherwise false. e: the engine on the thread that runs the
 * step, which counts what the filter leaves out for lack of a field it
 * compares (rm_engine_filter's warning); NULL on another thread, or
 * when asking again about a document asked about before: no count, and
 * an error is returned. */
bool rm_step_select (rm_engine_t *e, const rm_step_t *s, bool match, rm_expr_ctx_t *cx,
                     const char *ns_name, const uint8_t *doc, uint32_t len, bool *take,
                     bson_error_t *err);
/* The same for a join's parent (the filter) and child (the match): e as
 * rm_step_select's (the join's own, j->sel->e, on its main thread), cx
 * the calling thread's; rm_join_take_child uses the join's own, on the
 * main thread, and counts the children it takes (the joins count the
 * parents on their consumer's thread). */
bool rm_join_take_parent (const rm_join_t *j, rm_engine_t *e, rm_expr_ctx_t *cx,
                          const uint8_t *doc, uint32_t len, bool *take, bson_error_t *err);
bool rm_join_take_child (const rm_join_t *j, const uint8_t *doc, uint32_t len, bool *take,
                         bson_error_t *err);
/* Adds what a query reads of the partners to p's partner fields (whole
 * partners when it reads $$ROOT): online, a pass whose partners a match
 * (embed's second pass: a filter) selects fetches those fields too. */
void rm_join_pass_reads (rm_pass_t *p, const rm_query_t *q);

/* The order of a parent's children: the join's sort keys when given;
 * then (ties, or no sort), with order_by_id, when localField held several
 * keys (by_slot: an array of references) the order of that array; then
 * _id ascending; two children of one _id (a dump's) in their order in
 * `from` (seq), so the order is total. The compiled pipelines sort by the
 * same keys (compile_join.c). */
int rm_join_child_cmp (const rm_join_t *j, bool by_slot, const rm_child_t *a,
                       const rm_child_t *b);
/* Sorts n children (each once) in that order. */
void rm_join_order (const rm_join_t *j, rm_child_t *c, size_t n, bool by_slot);

/* Runs the join: the hash table when the children fit in --memory, the
 * external sort-merge otherwise (both give the same result). */
bool rm_join_run (rm_engine_t *e, const rm_join_t *j, bson_error_t *err);

/* Appends the canonical join keys of the value(s) at path to keys (each
 * framed by a uint32 length), distinct, in the order of the values: the
 * local side (foreign false) expands an array into its elements, and
 * missing, null or an empty array give the single null key; the foreign
 * side also matches an array as a whole, and reads a path through arrays
 * by the rules of MongoDB 9.0 (since_36681, rm_path_visit_foreign) or of
 * 5.0 to 8.x, where such a path may give no key at all. Returns the
 * count. */
size_t rm_join_keys (const rm_path_t *path, bool foreign, bool since_36681, const uint8_t *doc,
                     uint32_t len, rm_buf_t *keys);

/* Appends rm_join_keys of a child (the foreign side) to keys, and puts
 * rm_child_id_at in id_at, in one walk of the child where it can (tmp:
 * scratch space where it cannot). */
size_t rm_join_child_keys (const rm_join_t *j, const uint8_t *doc, uint32_t len, rm_buf_t *keys,
                           rm_buf_t *tmp, uint32_t *id_at);

/* Builds each parent with its children, as the join hands them on, and
 * writes it, the overflow pages and the counts: the join's consumer. */
typedef struct rm_embed_out rm_embed_out_t;
rm_embed_out_t *rm_embed_out_new (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_embed_out_begin (void *o, const uint8_t *doc, uint32_t len, bson_error_t *err);
bool rm_embed_out_child (void *o, const rm_child_t *c, bson_error_t *err);
void rm_embed_out_prepare (const void *o, const rm_child_t *c, rm_buf_t *out);
bool rm_embed_out_end (void *o, bson_error_t *err);
/* A parent the step's filter leaves out, kept as it is (no `as`, no
 * countAs). */
bool rm_embed_out_pass (void *o, const uint8_t *doc, uint32_t len, bson_error_t *err);
/* Seals and swaps the parent and overflow stores in. */
bool rm_embed_out_finish (void *o, bson_error_t *err);
void rm_embed_out_destroy (rm_embed_out_t *o);

/* A prepare that copies the child as it is: a consumer reading much of
 * each child then reads them in order, warm, not once a cache miss. */
void rm_join_copy_child (const void *ctx, const rm_child_t *c, rm_buf_t *out);

bool rm_join_hash_run (rm_engine_t *e, const rm_join_t *j, bson_error_t *err);
bool rm_join_sort_run (rm_engine_t *e, const rm_join_t *j, bson_error_t *err);

#endif
