/* A field step's scratch and one document through a step
 * (fields_scratch.c), for the steps set, unset, rename and version
 * (step_fields.c) and the threads that compute their documents ahead of
 * the reading thread (fields_ahead.c). */
#ifndef REMODEL_FIELDS_SCRATCH_H
#define REMODEL_FIELDS_SCRATCH_H

#include "engine_impl.h"
#include "field_run.h"

typedef struct rm_fields_ahead rm_fields_ahead_t;

/* The two buffers a document is rewritten through, back and forth, and
 * the context set's and filter's expressions are evaluated in. In the
 * one-pass path, the first step of a run of fusable steps (field_run.h)
 * leads it, and the others follow: they let through what it wrote. */
typedef struct rm_fields_scratch rm_fields_scratch_t;
struct rm_fields_scratch {
    rm_buf_t buf[2];
    rm_expr_ctx_t *cx;
    rm_engine_t *e;             /* NULL: a thread's (fields_ahead.c) */
    rm_field_run_t *run;        /* a leader's run */
    bool *changed;              /* per step of it, for one document */
    rm_buf_t hold[2];           /* its documents step by step (a name twice) */
    const uint8_t *last_out;    /* what it gave the last document */
    size_t last_len;
    size_t first;               /* its first step's index in the plan */
    rm_fields_scratch_t *lead;  /* a follower's leader */
    const rm_step_t *run_steps; /* rm_field_run_new's, for the threads' runs */
    size_t run_max;
    rm_fields_ahead_t *ahead;   /* its threads, from the first batch */
    /* A thread's job's results (fields_ahead.c): a set's document is
     * appended there by rm_fields_rewrite, not made in buf and copied. */
    rm_buf_t *into;
};

/* e NULL: a thread's, which counts nothing and keeps no error. */
void rm_fields_scratch_init (rm_fields_scratch_t *sc, rm_engine_t *e, int64_t now_ms);
/* Its threads (ahead) are the step's to stop first. */
void rm_fields_scratch_destroy (rm_fields_scratch_t *sc);

/* doc through step s (its filter, then its change) into *out: doc itself
 * when the filter leaves it out, else one of sc's buffers. false with err
 * naming the document when it fails (unless the engine's doc_error takes
 * it: then true, doc as it came). */
bool rm_fields_rewrite (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                        const uint8_t *doc, size_t len, const uint8_t **out, size_t *out_len,
                        bson_error_t *err);
/* doc's result *out checked for depth, and counted. shallow: a set of
 * top-level fields to shallow values (rm_expr_set_shallow), which adds
 * no level past the bound; unset only takes levels away. */
bool rm_fields_done (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                     const uint8_t *doc, size_t len, bool shallow, const uint8_t **out,
                     size_t *out_len, bson_error_t *err);
/* A step of a run counted for one document. */
void rm_fields_count_step (rm_engine_t *e, const rm_step_t *s, bool changed);

/* fields_ahead.c. The reading thread gives a batch of documents of the
 * step's namespace into one of two slots; threads compute each as the
 * step (or sc's run) would, while it feeds the other slot's. */
void rm_fields_ahead_give (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                           int slot, const uint8_t *const *docs, const uint32_t *lens, size_t n,
                           int threads);
/* Waits for slot's batch (computing what no thread took yet), whose
 * results apply then takes in order; -1: none any more. */
void rm_fields_ahead_use (rm_fields_scratch_t *sc, int slot);
/* doc's result, when it is the next one computed ahead and came out
 * clean: taken as apply would make it (true; *failed and err when the
 * engine's checks refuse it); false: apply computes it now. s: the step,
 * or the run's first. */
bool rm_fields_ahead_take (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                           const uint8_t *doc, uint32_t len, const uint8_t **out,
                           size_t *out_len, bool *failed, bson_error_t *err);
/* Stops the threads (a batch still computing is dropped) and frees. */
void rm_fields_ahead_destroy (rm_fields_ahead_t *a);

#endif
