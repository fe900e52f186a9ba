/*
 * gen.h: shared declarations of remodel-gen, the deterministic sample-data
 * generator that writes mongodump directory dumps.
 *
 * Every byte of output is a function of (--seed, --scale) only: no clock, no
 * pointers, no locale, no libm. Each collection draws from its own PRNG stream,
 * named after its namespace, so changing one dataset never shifts another.
 */
#ifndef REMODEL_GEN_H
#define REMODEL_GEN_H

#include <bson/bson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEN_COUNT(a) (sizeof (a) / sizeof ((a)[0]))

/* Milliseconds in a day, for BSON dates. */
#define GEN_DAY_MS INT64_C (86400000)

/* Run-wide settings and totals, filled by main.c. */
typedef struct {
    const char *root; /* directory being written (DIR.tmp while running) */
    uint64_t seed;
    uint64_t scale;
    bool verbose;
    uint64_t total_docs;
    uint64_t total_bytes;
} gen_ctx_t;

/* ---- rng.c: seeded PRNG (splitmix64 to seed xoshiro256**) ---------------- */

typedef struct {
    uint64_t s[4];
} gen_rng_t;

uint64_t gen_mix64 (uint64_t x);
uint64_t gen_hash_str (uint64_t seed, const char *str);
void gen_rng_init (gen_rng_t *rng, uint64_t seed, const char *stream);
uint64_t gen_rng_next (gen_rng_t *rng);
uint32_t gen_rng_below (gen_rng_t *rng, uint32_t n);
uint64_t gen_rng_below64 (gen_rng_t *rng, uint64_t n);
int32_t gen_rng_between (gen_rng_t *rng, int32_t lo, int32_t hi);
bool gen_rng_percent (gen_rng_t *rng, uint32_t percent);

/* ---- oid.c: reproducible ObjectIds ---------------------------------------- */

typedef struct {
    uint64_t process; /* 40-bit "process unique" part, from seed and namespace */
    uint32_t counter; /* 24-bit counter start */
} gen_idgen_t;

void gen_idgen_init (gen_idgen_t *idgen, uint64_t seed, const char *ns);
void gen_idgen_oid (const gen_idgen_t *idgen, uint64_t index, int64_t unix_secs, bson_oid_t *oid);

/* ---- pick.c: weighted choice among n items -------------------------------- */

typedef struct {
    uint64_t *cum; /* running sums of the weights */
    uint32_t n;
    uint64_t total;
} gen_picker_t;

/* The weight of item i (0: never picked); salt is the caller's, for a
 * hash that gives each item its own. */
typedef uint64_t (*gen_weight_fn) (uint32_t i, uint64_t salt);
bool gen_picker_init (gen_picker_t *picker, uint32_t n, gen_weight_fn weight, uint64_t salt,
                      bson_error_t *error);
uint32_t gen_picker_pick (const gen_picker_t *picker, gen_rng_t *rng);
void gen_picker_destroy (gen_picker_t *picker);
/* Time of a collection's document i of n, in seconds: what its _id holds. */
typedef int64_t (*gen_secs_fn) (uint64_t i, uint64_t n);
/* An array of k distinct documents of another collection, drawn with
 * picker (one weight per document there): their _ids, as ids makes them at
 * the times secs gives. k is at most GEN_MAX_PICKS, and well below the
 * number of documents: picks are redrawn until distinct. */
#define GEN_MAX_PICKS 64
void gen_append_picked_ids (bson_t *doc, const char *key, const gen_picker_t *picker,
                            gen_rng_t *rng, uint32_t k, const gen_idgen_t *ids, gen_secs_fn secs);

/* ---- text.c: bounded string building and filler text ---------------------- */

typedef struct {
    char *data;
    size_t len;
    size_t cap; /* including the NUL; appends past it are cut off */
} gen_buf_t;

void gen_buf_init (gen_buf_t *buf, char *storage, size_t cap);
void gen_buf_reset (gen_buf_t *buf);
void gen_buf_put (gen_buf_t *buf, const char *str);
void gen_buf_putc (gen_buf_t *buf, char c);
void gen_buf_printf (gen_buf_t *buf, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void gen_text_sentence (gen_buf_t *buf, gen_rng_t *rng, int min_words, int max_words);
void gen_text_paragraphs (gen_buf_t *buf, gen_rng_t *rng, int min_par, int max_par);
void gen_text_title (gen_buf_t *buf, gen_rng_t *rng);

/* ---- words.c: vocabulary ---------------------------------------------------- */

typedef struct {
    const char *const *items;
    size_t n;
} gen_list_t;

/* A name as displayed (UTF-8) and as it appears in e-mail addresses. */
typedef struct {
    const char *utf8;
    const char *ascii;
} gen_name_t;

extern const gen_list_t gen_list_vocab;
extern const gen_list_t gen_list_streets;
extern const gen_list_t gen_list_cities;
extern const gen_list_t gen_list_mail_domains;
extern const gen_list_t gen_list_task_verbs;
extern const gen_list_t gen_list_task_objects;
extern const gen_list_t gen_list_tags;
extern const gen_list_t gen_list_part_nouns;
extern const gen_list_t gen_list_materials;
extern const gen_list_t gen_list_product_adjs;
extern const gen_list_t gen_list_product_nouns;
extern const gen_list_t gen_list_manufacturers;
extern const gen_list_t gen_list_suppliers;
extern const gen_list_t gen_list_host_names;
extern const gen_list_t gen_list_os;
extern const gen_list_t gen_list_datacenters;
extern const gen_list_t gen_list_daemons;
extern const gen_list_t gen_list_title_words;

const char *gen_list_pick (const gen_list_t *list, gen_rng_t *rng);
void gen_person_name (gen_rng_t *rng, gen_buf_t *display, gen_buf_t *local_part);

/* ---- out.c and metadata.c: one collection of the dump ---------------------- */

/* One secondary index: up to three key fields, each ascending (1) or
 * descending (-1). Names follow the server's default ("host_1_time_-1"). */
typedef struct {
    const char *fields[3];
    int dirs[3];
    bool unique;
} gen_index_t;

/* One collection being written: <db>/<name>.bson, documents back to back,
 * then <name>.metadata.json. It holds the document being built and the
 * namespace's own PRNG stream and ObjectId generator, both named after
 * "db.name", so that no dataset shifts another's draws. */
typedef struct {
    char *db;
    char *name;
    char *bson_path;
    char *meta_path;
    FILE *fp;
    uint8_t *buf;
    size_t len;
    uint64_t docs;
    uint64_t bytes;
    bson_t doc;
    gen_rng_t rng;
    gen_idgen_t ids;
} gen_coll_t;

/* Creates the file; false on error. Either way, gen_coll_close ends coll. */
bool gen_coll_open (gen_coll_t *coll, const gen_ctx_t *ctx, const char *db, const char *name,
                    bson_error_t *error);
/* Starts the collection's document number index, made at unix_secs: coll's
 * doc, emptied, with the _id its ObjectId generator gives. Returns doc. */
bson_t *gen_coll_doc (gen_coll_t *coll, uint64_t index, int64_t unix_secs);
/* Writes the document started by gen_coll_doc. */
bool gen_coll_write (gen_coll_t *coll, bson_error_t *error);
/* If ok (nothing failed so far), writes the rest of the file and the
 * metadata with these secondary indexes; then frees coll. Returns whether
 * everything succeeded. */
bool gen_coll_close (gen_coll_t *coll, gen_ctx_t *ctx, bool ok, const gen_index_t *indexes,
                     size_t n_indexes, bson_error_t *error);

char *gen_metadata_json (const gen_ctx_t *ctx, const char *db, const char *coll,
                         const gen_index_t *indexes, size_t n_indexes);
bool gen_write_file (const char *path, const char *text, bson_error_t *error);
/* Sets error to "<what> <path>: <strerror (errno)>", errno as its code;
 * returns false. */
bool gen_errno_error (bson_error_t *error, const char *what, const char *path);

/* ---- bson helpers (out.c) --------------------------------------------------- */

/* Use instead of BSON_APPEND_UTF8, which evaluates its value twice (once for
 * strlen): with a random pick as the value, text and length would disagree. */
void gen_append_utf8 (bson_t *doc, const char *key, const char *value);

void gen_append_cents_decimal (bson_t *doc, const char *key, uint64_t cents);
/* The text built in buf (it may hold any byte but NUL). */
void gen_append_buf (bson_t *doc, const char *key, const gen_buf_t *buf);
/* An array of n words drawn from list. */
void gen_append_picks (bson_t *doc, const char *key, const gen_list_t *list, uint32_t n,
                       gen_rng_t *rng);
/* The key of array element i, "0", "1", ..., written into buf. */
const char *gen_array_key (uint32_t i, char buf[16]);

/* ---- datasets: one file each ------------------------------------------------ */

bool gen_crm (gen_ctx_t *ctx, bson_error_t *error);
bool gen_catalog (gen_ctx_t *ctx, bson_error_t *error);
bool gen_logging (gen_ctx_t *ctx, bson_error_t *error);
bool gen_school (gen_ctx_t *ctx, bson_error_t *error);
bool gen_blog (gen_ctx_t *ctx, bson_error_t *error);
bool gen_iot (gen_ctx_t *ctx, bson_error_t *error);

/* Domain of the bson_error_t values this program fills. */
#define GEN_ERROR_DOMAIN 0x6e6567u /* "gen" */

#endif /* REMODEL_GEN_H */
