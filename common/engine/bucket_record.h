/* A reading's sort record for bucketize (step_bucket.c), made on the
 * step's thread or ahead of it on the other core (bucket_record.c). */
#ifndef REMODEL_BUCKET_RECORD_H
#define REMODEL_BUCKET_RECORD_H

#include <pthread.h>

#include "remodel/buf.h"
#include "remodel/plan.h"

/* Dates in a key: signed milliseconds with the sign bit flipped, so that
 * memcmp orders them. */
#define RM_BUCKET_SIGN_FLIP 0x8000000000000000ULL

/* bson_iter_t asks for 128-byte alignment but its sizeof is not a multiple
 * of it, so arrays of it hold misaligned elements: each gets a slot. */
typedef struct {
    bson_iter_t it;
} rm_bucket_slot_t;

/* The window of a reading at t (ms): floor(t / span) * span for
 * granularity and spanSeconds, $dateTrunc's bin for unit (calendar
 * windows: months, years in a time zone); *end (when not NULL) the next
 * window's start. False, why set, when a bound leaves the int64 range. */
bool rm_bucket_window (const rm_bucketize_t *b, int64_t t, int64_t *start, int64_t *end,
                       char *why, size_t cap);

/* One reading's top-level fields of interest, found in one scan. */
typedef struct {
    rm_bucket_slot_t *meta; /* n_meta */
    bool *has_meta;
    int32_t *pos;           /* each meta field's index among the top-level fields */
    bson_iter_t time, id;
    bool has_time, has_id;
    bool last_is_positions; /* its measurement would end with a field _metaPositions */
    uint32_t *meta_len;     /* the names' lengths, once a run: a field's name is */
    uint32_t time_len;      /* compared only when its length matches */
} rm_bucket_scan_t;

void rm_bucket_scan_init (rm_bucket_scan_t *s, const rm_bucketize_t *b);
void rm_bucket_scan_destroy (rm_bucket_scan_t *s);
void rm_bucket_scan (rm_bucket_scan_t *s, const rm_bucketize_t *b, const uint8_t *doc, uint32_t len);

/* The record's key and value (step_bucket.c says their layout), or why
 * the reading cannot go in a bucket. */
typedef struct {
    rm_bucket_scan_t sc;
    rm_buf_t mkey, key, val;
    char why[300];
} rm_bucket_record_t;

void rm_bucket_record_init (rm_bucket_record_t *r, const rm_bucketize_t *b);
void rm_bucket_record_destroy (rm_bucket_record_t *r);
/* True: r->key and r->val hold the reading's record; false: r->why says
 * what is wrong with it (onInvalid's case). */
bool rm_bucket_record_make (rm_bucket_record_t *r, const rm_bucketize_t *b, const uint8_t *doc,
                            uint32_t len);

/* The records of a store held in memory, made on both cores: a thread
 * makes those of every other run of readings while the step adds the
 * ones before to its sorter and makes those between itself; the step
 * takes them all in the store's order. */
#define RM_BUCKET_AHEAD_BLOCKS 4

typedef struct {
    const rm_bucketize_t *b;
    const uint8_t *mem;
    size_t mem_len, made_to; /* the thread's place in mem */
    rm_bucket_record_t rec;  /* the thread's */
    struct {
        rm_buf_t data;       /* entries: [doc offset][klen][vlen][key][value] */
        size_t end;          /* where its readings end in mem */
        bool full;
    } block[RM_BUCKET_AHEAD_BLOCKS];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started, stop;
    /* the step's side */
    int use;                 /* the block read next, or being read */
    size_t pos;              /* in it */
    bool holding;
    rm_bucket_record_t own;  /* the step's own run: its record */
    size_t own_at, own_left; /* the next reading of it, how many are left */
} rm_bucket_ahead_t;

/* Whether a store of n documents is worth a thread. */
bool rm_bucket_ahead_worth (uint64_t n);
/* False: no thread could start (the step makes its records itself). */
bool rm_bucket_ahead_start (rm_bucket_ahead_t *a, const rm_bucketize_t *b, const uint8_t *mem,
                            size_t mem_len);
/* The next reading in the store's order: 1 with its document, and its
 * record (key non-NULL) or why it is invalid (key NULL, why set); 0 at the
 * end. What it points to stays valid until the next call. */
int rm_bucket_ahead_next (rm_bucket_ahead_t *a, const uint8_t **doc, uint32_t *len,
                          const uint8_t **key, size_t *klen, const uint8_t **val, size_t *vlen,
                          const char **why);
/* Stops the thread (at any point) and frees what it holds. */
void rm_bucket_ahead_stop (rm_bucket_ahead_t *a);

#endif
