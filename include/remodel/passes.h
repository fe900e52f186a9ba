/* How each step runs over a live server, range by range (the online
 * runner, shell-ext/cmd/online_run.c, and the compiler, remodel/compile.h,
 * both plan a step this way): which input a pass reads in _id order,
 * which partners it fetches for each range, and which of the engine's
 * outputs it keeps. Pure computation from the plan: no driver needed. */
#ifndef REMODEL_PASSES_H
#define REMODEL_PASSES_H

#include <stdbool.h>
#include <stddef.h>

#include "remodel/error.h"
#include "remodel/plan.h"

/* How a pass's results trace back to the documents that made them (its
 * drivers), which says how a sync from a change log finds what a change
 * affects (shell-ext/follow/online_followers.c, a row each): not at all (the
 * step is rescanned in full); each result by its driver's _id; some
 * output's by a field naming the driver (driver_field); some output's
 * listed by the driver's own result (driver_list); by series (a result
 * holds its series' value: series); by what the drivers hold (holds, or
 * a reading set aside that is its own result). */
typedef enum {
    RM_TRACE_NONE,
    RM_TRACE_ID,
    RM_TRACE_FIELD,
    RM_TRACE_LIST,
    RM_TRACE_SERIES,
    RM_TRACE_HELD,
    RM_TRACE_N
} rm_trace_t;

/* The most partner fields a pass lists (rm_pass_t.partner_fields). */
#define RM_PASS_MAX_FIELDS 16

/* One pass of a step: the input read in _id order, range by range, and
 * the outputs of the engine that pass writes. */
typedef struct {
    size_t drive;           /* input number (rm_step_inputs' order) */
    const char *series;     /* read series by series of this field (bucketize's
                               metaField) rather than in _id ranges */
    int partner;            /* input number of the join partners, -1: none */
    const rm_path_t *drive_key;   /* the values looked up... */
    const rm_path_t *partner_key; /* ...among the partners' (with $in) */
    const rm_nsref_t *keep[4];    /* the outputs this pass writes */
    size_t n_keep;
    /* Per keep[]: the field of its results that holds their driving
     * document's _id: "_id" where each result is its driver's own (at most
     * one per output), another field where a driver makes several (an
     * extract's children by their parentField, an outlier's overflow pages
     * by parent_id), NULL where the results do not say which driver made
     * them. Following a change log recomputes a changed driver alone where
     * every output names its drivers (rm_trace_t). */
    const char *driver_field[4];
    /* Per keep[] whose driver_field is NULL: the field of the driver's own
     * result in output list_in[] (the parents, by _id) that lists this
     * output's results' _ids (an extract's parent's array of its
     * childRefs), by which they are found again; NULL: none. */
    const char *driver_list[4];
    size_t list_in[4];
    /* Every output's driver_field is "_id": a driver's results are found
     * by its _id, and no set of the results' _ids is kept (online_run.c). */
    bool by_id;
    /* Where driver_field is NULL, a sync may still find a driver's results
     * again (RM_TRACE_SERIES, RM_TRACE_HELD): a pass read by series
     * (bucketize) by the series field each result holds at its top; a
     * pass whose drivers hold their results' _ids (unbucketize: the
     * readings' _ids under holds, its `as` array) by the key map, which
     * notes them whenever a driver is read. */
    const char *holds;
    /* A pass read by series: the array of its first output's results
     * (bucketize's `as`) whose elements keep their drivers' _ids, by which
     * the series a driver was in is found again. */
    const char *held_in;
    bool followed;
    /* What the pass reads of its partners (partner >= 0): with
     * partner_some, only the top-level fields listed (partner_lens[i]
     * bytes at partner_fields[i], each once, _id and partner_key's among
     * them): the rest of a partner changes none of its results, so the
     * online run fetches partners with only these (shell-ext's
     * online_partner_projection). Without it, whole partners (an embed's
     * children, an accumulator of $$ROOT, or more fields than fit). */
    bool partner_some;
    size_t n_partner_fields;
    const char *partner_fields[RM_PASS_MAX_FIELDS];
    uint32_t partner_lens[RM_PASS_MAX_FIELDS];
    /* The first partner of a key value, in the order the partners come,
     * is the one the pass takes (denormalize, docs/plans.md); the other
     * passes order their partners themselves (by _id, or a sort). */
    bool partner_first;
    /* From all the above, set by rm_step_passes alone. */
    rm_trace_t trace;
} rm_pass_t;

/* A step has at most this many passes. */
#define RM_MAX_PASSES 2

/* The passes of step s into out[RM_MAX_PASSES] (0: it cannot run online,
 * err says why, RM_ERR_UNSUPPORTED); in_place: the --in-place form. */
size_t rm_step_passes (const rm_step_t *s, bool in_place, rm_pass_t *out, bson_error_t *err);

/* Adds to p's partner fields the top-level field of a dotted path (len
 * bytes at path, "a" of "a.b"), once; one more than fit, or a name no
 * projection can take (empty, or a leading '$'), makes p read whole
 * partners. The passes functions call it, and rm_step_passes for _id
 * and partner_key. */
void rm_pass_reads (rm_pass_t *p, const char *path, size_t len);

/* Whether every output of p names the driver of each of its results
 * (rm_pass_t.driver_field), or is listed by the driver's own result
 * (driver_list), so that a driver's results can be found. */
bool rm_pass_traced (const rm_pass_t *p);
/* Whether a sync from a change log recomputes only what changed for p:
 * traced, or followed by its series or by what its drivers hold. */
bool rm_pass_followed (const rm_pass_t *p);

/* The namespaces a step gives new contents side by side (its targets):
 * what its passes write, then what it empties, each once; at most 8. */
size_t rm_step_targets (const rm_step_t *s, const rm_pass_t *passes, size_t np,
                        const rm_nsref_t **out);

#endif
