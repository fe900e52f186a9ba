/* The evaluation context's fields: known only to expr_value.c (its
 * memory) and expr_eval.c (its variables); operators go through
 * expr_impl.h's functions. */
#ifndef REMODEL_EXPR_CTX_H
#define REMODEL_EXPR_CTX_H

#include "expr_impl.h"

/* One block of the context's memory: values built for the document being
 * evaluated, all released at once by a reset and reused. */
typedef struct {
    uint8_t *data;
    size_t used, cap;
} rm_xchunk_t;

/* A top-level field of the held document: where it starts (its type
 * byte), its key's length, and where it ends. */
typedef struct {
    uint32_t start, klen, end;
} rm_xfield_t;

/* A name asked for (rm_xheld_find): its tag and length, its last eight
 * bytes as a number (tail) when longer than eight, its bytes (owned), and
 * where the held document has it: seen[at] when gen is the document's. */
#define RM_XNEEDS 32
/* A key the held documents had at one place: its bytes and NUL, zeros
 * after (key), its length (UINT32_MAX: sixteen or more, too long to tell
 * this way), and the need it is (1 + its index; 0: none). */
typedef struct {
    _Alignas (16) uint8_t key[16];
    uint32_t klen;
    uint8_t need;
} rm_xshape_t;
#define RM_XNEED_HASH 128
typedef struct {
    uint64_t tag, tail;
    uint32_t klen, at, gen;
    uint32_t lay_at; /* its first field in the layout (UINT32_MAX: none) */
    char *name;
} rm_xneed_t;

/* The layout of a document held before (expr_held.c): the bytes of its
 * first RM_XLAYOUT_MAX that place its fields (each type byte, key and
 * NUL, and the length of a value that has one), as bytes & mask; its
 * fields there, and each one's need (1 + its index; 0: none). A document
 * whose bytes agree under the mask up to a field's end has that field,
 * and every one before it, where this one had them. Its memory grows
 * with seen's (a warm context allocates nothing). */
#define RM_XLAYOUT_MAX 1024
typedef struct {
    uint8_t *bytes, *mask; /* RM_XLAYOUT_MAX each */
    uint32_t len;          /* the bytes it covers, from offset 0 */
    rm_xfield_t *fields;   /* cap_seen each, as ends and need */
    uint32_t *ends;        /* each field's end */
    uint8_t *need;
    size_t n;
    uint32_t wait;    /* documents to let go by before it is made again */
    uint32_t backoff; /* the next wait, should that one serve no better */
    uint32_t served;  /* documents it placed half its fields of, or more */
} rm_xlayout_t;


struct rm_expr_ctx {
    rm_xchunk_t *chunks;
    size_t n_chunks, cur;
    rm_buf_t **bufs;      /* every builder buffer made */
    size_t n_bufs;
    rm_buf_t **free_bufs; /* those not in use */
    size_t n_free;
    rm_buf_t cmp[2];      /* rm_xval_compare's two encodings */
    int64_t now_ms;
    const uint8_t *root;
    uint32_t root_len;
    bson_value_t current; /* $$CURRENT */
    bson_value_t vars[RM_X_MAX_VARS];
    int depth;
    /* The bound on one document's scratch (docs/plans.md, "Memory"):
     * what rm_xalloc handed out since the reset (live), what builders and
     * $reduce's kept accumulators hold besides (kept), against limit. Past
     * it, over stays set until the reset, and the evaluation fails at the
     * operator that crossed it (rm_xmem_check). */
    size_t live, kept, limit;
    bool over;
    /* The held document's top-level fields met so far (rm_expr_ctx_hold,
     * expr_held.c): each path read looks among them first and walks
     * on from where the last stopped, so N reads of one document cost one
     * walk, not N, and a set's copy goes by them without walking again. */
    const uint8_t *held;
    uint32_t held_len, held_pos;
    bool held_end, held_bad; /* walked to its end; met bad bytes */
    rm_xfield_t *seen;
    size_t n_seen, cap_seen;
    /* The top-level names this context's reads asked for (a step's: its
     * filter's and its expressions'), kept from document to document:
     * the walk matches each field it meets against them by a hash of its
     * tag, so that a read of a name met already is one load, however far
     * into the document it lies (expr_held.c). */
    rm_xneed_t needs[RM_XNEEDS];
    uint8_t need_hash[RM_XNEED_HASH]; /* 1 + a need's index; 0: free */
    size_t n_needs;
    uint32_t gen;         /* the held document's number: a need's `at`
                           * is this document's when its gen is */
    /* The keys of the documents held before, by place (expr_held.c):
     * a field whose key is the one its place had is known without
     * scanning for its end nor hashing it. */
    rm_xshape_t *shape;
    size_t n_shape, cap_shape;
    bool held_slow;       /* a field of the held document was not its
                           * place's (field_slow) */
    rm_xlayout_t layout;  /* n 0: none (made again after a full walk) */
    /* The held document's first lay_k fields are the layout's (when
     * lay_gen is its gen): a need whose lay_at is below is there, noted
     * or not (expr_held.c). */
    uint32_t lay_gen;
    size_t lay_k;
    /* A set's copy found none of its names (the set's number,
     * expr_addfields.c; 0: none) in the first none_upto places of the
     * shape: a document whose fields are all their places' has none
     * either. Cleared when the shape changes. */
    uint64_t none_set;
    size_t none_upto;
    bool set_shallow; /* rm_expr_set_shallow's answer */
};

/* expr_held.c */
/* The held document's first top-level field named (name, nlen), or NULL. */
const rm_xfield_t *rm_xheld_find (rm_expr_ctx_t *cx, const char *name, uint32_t nlen);
/* Walks the held document to its end: false if its bytes are bad (then
 * seen stops where they do). */
bool rm_xheld_all (rm_expr_ctx_t *cx);

#endif
