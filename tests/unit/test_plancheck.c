/* The plan's own check (analyze_plancheck.c) on plans written by hand
 * against an analysis built by hand: a step that would write over a field
 * its documents already have is refused, naming the step and the field;
 * an array of references replaced in place, and copies into the elements
 * of an array of references, are not overwrites; and a step reading what
 * an earlier one took is refused, the earlier one the step to leave out. */
#include "analyze_int.h"
#include "test.h"

/* lib.books {_id, title, reviews (a count), shelf}, lib.reviews {_id,
 * bookId, stars}, lib.kits {_id, parts (an array of book ids)}: the
 * reviews' bookId a confident parent reference to the books' _id, one
 * parent each. */
static rm_field_t books_f[4], reviews_f[3], kits_f[2];
static rm_collection_t cols[3];
static rm_relation_t rel;
static rm_analysis_t a;

static void
field (rm_field_t *f, const char *path, uint64_t values)
{
    memset (f, 0, sizeof *f);
    f->path = (char *) path;
    f->values = f->distinct = values;
}

static void
setup (void)
{
    memset (cols, 0, sizeof cols);
    field (&books_f[0], "_id", 50);
    field (&books_f[1], "title", 50);
    field (&books_f[2], "reviews", 50);
    field (&books_f[3], "shelf", 50);
    field (&reviews_f[0], "_id", 150);
    field (&reviews_f[1], "bookId", 150);
    reviews_f[1].distinct = 50;
    field (&reviews_f[2], "stars", 150);
    field (&kits_f[0], "_id", 10);
    field (&kits_f[1], "parts", 40);
    kits_f[1].arrays = 10;
    cols[0] = (rm_collection_t) {.ns = "lib.books", .db = "lib", .coll = "books", .docs = 50,
                                 .fields = books_f, .n_fields = 4};
    cols[1] = (rm_collection_t) {.ns = "lib.reviews", .db = "lib", .coll = "reviews", .docs = 150,
                                 .fields = reviews_f, .n_fields = 3};
    cols[2] = (rm_collection_t) {.ns = "lib.kits", .db = "lib", .coll = "kits", .docs = 10,
                                 .fields = kits_f, .n_fields = 2};
    memset (&rel, 0, sizeof rel);
    rel.from = 1;
    rel.field = 1;
    rel.to = 0;
    rel.key = 0;
    rel.ev.level = RM_LEVEL_CONFIDENT;
    memset (&a, 0, sizeof a);
    a.cols = cols;
    a.n_cols = 3;
    a.rels = &rel;
    a.n_rels = 1;
}

/* The check of the plan whose steps are json (an array); *bad and why
 * filled. */
static bool
check_json (const char *json, size_t *bad, char *why, size_t len)
{
    bson_error_t err;
    bson_t *steps = bson_new_from_json ((const uint8_t *) json, -1, &err);
    bool ok;
    why[0] = '\0';
    *bad = 99;
    if (!steps) {
        fprintf (stderr, "  bad JSON in the test: %s\n", err.message);
        return false;
    }
    ok = rm_plan_check (&a, steps, bad, why, len);
    bson_destroy (steps);
    return ok;
}

#define EMBED_REVIEWS(extra)                                                                \
    "{\"embed\": {\"from\": \"lib.reviews\", \"into\": \"lib.books\", \"localField\": \"_id\", " \
    "\"foreignField\": \"bookId\", " extra "}}"

static void
test_embed_over_a_field (void)
{
    size_t bad;
    char why[700];
    setup ();
    /* The second step's array would replace the books' count of reviews. */
    T_CHECK (!check_json ("{\"0\": " EMBED_REVIEWS ("\"as\": \"notes\", \"keepSource\": true") ", \"1\": "
                          EMBED_REVIEWS ("\"as\": \"reviews\", \"keepSource\": true") "}", &bad, why,
                          sizeof why));
    T_CHECK (bad == 1);
    T_CHECK_STR (why, "step 2 (embed lib.reviews into lib.books as \"reviews\") would write over the "
                      "field \"reviews\" that lib.books's documents already have");
    /* Under another name it passes. */
    T_CHECK (check_json ("[" EMBED_REVIEWS ("\"as\": \"review_docs\", \"keepSource\": true") "]", &bad,
                         why, sizeof why));
}

static void
test_embed_count_over_a_field (void)
{
    size_t bad;
    char why[700];
    setup ();
    T_CHECK (!check_json ("[" EMBED_REVIEWS ("\"as\": \"latest\", \"limit\": 3, \"countAs\": \"shelf\", "
                                             "\"keepSource\": true") "]", &bad, why, sizeof why));
    T_CHECK (bad == 0);
    T_CHECK_STR (why, "step 1 (embed lib.reviews into lib.books) would write its count over the field "
                      "\"shelf\" that lib.books's documents already have");
    T_CHECK (check_json ("[" EMBED_REVIEWS ("\"as\": \"latest\", \"limit\": 3, \"countAs\": \"n_reviews\", "
                                            "\"keepSource\": true") "]", &bad, why, sizeof why));
}

/* An array of references embedded in place: as is the local field, which
 * the children replace. */
static void
test_embed_in_place (void)
{
    size_t bad;
    char why[700];
    setup ();
    T_CHECK (check_json ("[{\"embed\": {\"from\": \"lib.books\", \"into\": \"lib.kits\", \"localField\": "
                         "\"parts\", \"foreignField\": \"_id\", \"as\": \"parts\", \"keepSource\": true}}]",
                         &bad, why, sizeof why));
    T_CHECK_STR (why, "");
}

static void
test_denormalize_over_a_field (void)
{
    size_t bad;
    char why[700];
    setup ();
    /* Beside a plain reference: the copy "stars" is a field the reviews have. */
    T_CHECK (!check_json ("[{\"denormalize\": {\"in\": \"lib.reviews\", \"from\": \"lib.books\", "
                          "\"localField\": \"bookId\", \"foreignField\": \"_id\", \"fields\": "
                          "{\"book_title\": \"title\", \"stars\": \"shelf\"}}}]", &bad, why, sizeof why));
    T_CHECK (bad == 0);
    T_CHECK_STR (why, "step 1 (denormalize into lib.reviews) would write over the field \"stars\" "
                      "that its documents already have");
    T_CHECK (check_json ("[{\"denormalize\": {\"in\": \"lib.reviews\", \"from\": \"lib.books\", "
                         "\"localField\": \"bookId\", \"foreignField\": \"_id\", \"fields\": "
                         "{\"book_title\": \"title\"}}}]", &bad, why, sizeof why));
    /* Into the elements of an array of references: {id, ...} each, the
     * reference kept in id; "_id" of the kits is no element's field. */
    T_CHECK (check_json ("[{\"denormalize\": {\"in\": \"lib.kits\", \"from\": \"lib.books\", "
                         "\"localField\": \"parts\", \"foreignField\": \"_id\", \"fields\": "
                         "{\"_id\": \"title\"}}}]", &bad, why, sizeof why));
}

static void
test_summarize_over_a_field (void)
{
    size_t bad;
    char why[700];
    setup ();
    T_CHECK (!check_json ("[{\"summarize\": {\"from\": \"lib.reviews\", \"into\": \"lib.books\", "
                          "\"localField\": \"_id\", \"foreignField\": \"bookId\", \"fields\": "
                          "{\"reviews\": {\"$count\": {}}}}}]", &bad, why, sizeof why));
    T_CHECK (bad == 0);
    T_CHECK_STR (why, "step 1 (summarize into lib.books) would write over the field \"reviews\" that "
                      "its documents already have");
    T_CHECK (check_json ("[{\"summarize\": {\"from\": \"lib.reviews\", \"into\": \"lib.books\", "
                         "\"localField\": \"_id\", \"foreignField\": \"bookId\", \"fields\": "
                         "{\"reviews_count\": {\"$count\": {}}}}}]", &bad, why, sizeof why));
}

/* The reviews taken into the books (one parent each, vouched for), then
 * read again: the taking step is the one to leave out. */
static void
test_read_after_taken (void)
{
    size_t bad;
    char why[700];
    setup ();
    T_CHECK (!check_json ("[" EMBED_REVIEWS ("\"as\": \"review_docs\"") ", {\"summarize\": {\"from\": "
                          "\"lib.reviews\", \"into\": \"lib.books\", \"localField\": \"_id\", "
                          "\"foreignField\": \"bookId\", \"fields\": {\"n\": {\"$count\": {}}}}}]",
                          &bad, why, sizeof why));
    T_CHECK (bad == 0);
    T_CHECK_STR (why, "step 1 takes documents out of lib.reviews, which step 2 (summarize) then reads "
                      "as \"from\": it would join against what is left");
    /* Shared children are not taken at all. */
    reviews_f[1].distinct = 50;
    rel.shared = 3;
    T_CHECK (!check_json ("[" EMBED_REVIEWS ("\"as\": \"review_docs\"") "]", &bad, why, sizeof why));
    T_CHECK_STR (why, "step 1 (embed lib.reviews into lib.books without keepSource): some children have "
                      "more than one parent");
}

int
main (void)
{
    T_RUN (test_embed_over_a_field);
    T_RUN (test_embed_count_over_a_field);
    T_RUN (test_embed_in_place);
    T_RUN (test_denormalize_over_a_field);
    T_RUN (test_summarize_over_a_field);
    T_RUN (test_read_after_taken);
    return t_done ();
}
