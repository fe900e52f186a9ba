/*
 * school.c: database "school", the university example of "Document Schema
 * Guidelines": students embed their few e-mail addresses (one-to-few) and
 * their ID card (one-to-one), and reference courses through an array of
 * child references (many-to-many).
 *
 *   courses  {_id, code, title, department, credits, capacity, online?}
 *   students {_id, name, emails: [{address, kind}], courses: [course _ids],
 *             id_card?: {number, issued_on, expires_on}, enrolled, year,
 *             gpa|null}
 *
 * Some students take no course yet (empty array), some courses are taken by
 * nobody, and introductory courses are far more popular than the rest.
 */
#include "gen.h"

#define COURSES_PER_SCALE 40
#define STUDENTS_PER_SCALE 300
#define MAX_COURSES 8

#define COURSES_FROM INT64_C (1567296000)  /* 2019-09-01 */
#define STUDENTS_FROM INT64_C (1567296000) /* 2019-09-01 */
#define STUDENTS_SPAN INT64_C (126230400)  /* four years */

typedef struct {
    const char *prefix;
    const char *name;
    const char *topics[4];
} department_t;

static const department_t departments[] = {
    {"CS", "Department of Computer Science",
     {"Cloud Computing", "Databases", "Algorithms", "Operating Systems"}},
    {"PHYS", "Department of Physics",
     {"Physics", "Quantum Mechanics", "Thermodynamics", "Optics"}},
    {"MATH", "Department of Mathematics",
     {"Linear Algebra", "Calculus", "Statistics", "Number Theory"}},
    {"HIST", "Department of History",
     {"Medieval Europe", "the Silk Road", "Modern Japan", "the Cold War"}},
    {"LING", "Department of Linguistics",
     {"Phonetics", "Syntax", "Sociolinguistics", "Old Norse"}},
    {"ECON", "Department of Economics",
     {"Microeconomics", "Game Theory", "Econometrics", "Development"}},
};

static const char *const levels[] = {
    "Introduction to", "Foundations of", "Topics in", "Advanced", "Seminar:",
};

static const char *const email_kinds[] = {"university", "personal", "work"};

static int64_t
course_secs (uint64_t i, uint64_t n)
{
    return COURSES_FROM + (int64_t) (i * UINT64_C (86400) * 30 / n);
}

static bool
write_courses (gen_ctx_t *ctx, uint64_t n, bson_error_t *error)
{
    const uint64_t n_dept = GEN_COUNT (departments);
    char text_s[128];
    gen_buf_t text;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok = gen_coll_open (&coll, ctx, "school", "courses", error);

    gen_buf_init (&text, text_s, sizeof text_s);
    for (uint64_t i = 0; i < n && ok; i++) {
        const department_t *dept = &departments[i % n_dept];
        const uint32_t level = gen_rng_below (rng, GEN_COUNT (levels));
        const uint32_t topic = gen_rng_below (rng, 4);
        bson_t *doc = gen_coll_doc (&coll, i, course_secs (i, n));

        /* Unique codes: CS101, PHYS101, ..., CS102, ... */
        gen_buf_reset (&text);
        gen_buf_printf (&text, "%s%u", dept->prefix, (unsigned) (101 + i / n_dept));
        gen_append_buf (doc, "code", &text);

        gen_buf_reset (&text);
        gen_buf_printf (&text, "%s %s", levels[level], dept->topics[topic]);
        gen_append_buf (doc, "title", &text);

        gen_append_utf8 (doc, "department", dept->name);
        BSON_APPEND_INT32 (doc, "credits", gen_rng_between (rng, 2, 8));
        BSON_APPEND_INT32 (doc, "capacity", 10 * gen_rng_between (rng, 2, 30));
        if (gen_rng_percent (rng, 20)) {
            BSON_APPEND_BOOL (doc, "online", true);
        }
        ok = gen_coll_write (&coll, error);
    }
    return gen_coll_close (&coll, ctx, ok, NULL, 0, error);
}

static void
append_emails (bson_t *doc, gen_rng_t *rng, const char *local, uint64_t i)
{
    const uint32_t n = gen_rng_percent (rng, 5) ? 0 : (uint32_t) gen_rng_between (rng, 1, 3);
    char text_s[192], keybuf[16];
    gen_buf_t text;
    bson_t arr;

    gen_buf_init (&text, text_s, sizeof text_s);
    bson_append_array_begin (doc, "emails", -1, &arr);
    for (uint32_t e = 0; e < n; e++) {
        bson_t email;

        /* The first address is the university one; its number keeps it
         * unique among students of the same name. */
        gen_buf_reset (&text);
        if (e == 0) {
            gen_buf_printf (&text, "%s%u@uni.example.edu", local, (unsigned) i);
        } else {
            gen_buf_printf (&text, "%s@%s", local, gen_list_pick (&gen_list_mail_domains, rng));
        }
        bson_append_document_begin (&arr, gen_array_key (e, keybuf), -1, &email);
        gen_append_buf (&email, "address", &text);
        gen_append_utf8 (&email, "kind", email_kinds[e]);
        bson_append_document_end (&arr, &email);
    }
    bson_append_array_end (doc, &arr);
}

/* Popular courses (one in seven) get 30 shares, new ones (one in ten)
 * none yet, the rest 1 to 10. */
static uint64_t
course_weight (uint32_t i, uint64_t salt)
{
    const uint64_t h = gen_mix64 (salt + i);

    if (h % 7 == 0) {
        return 30;
    }
    if ((h >> 8) % 10 == 0) {
        return 0;
    }
    return 1 + (h >> 16) % 10;
}

static bool
write_students (gen_ctx_t *ctx, uint64_t n_courses, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"courses"}, {1}, false}};
    const uint64_t n = STUDENTS_PER_SCALE * ctx->scale;
    const uint64_t salt = gen_hash_str (ctx->seed, "school.courses.popularity");
    char name_s[128], local_s[128], text_s[64];
    gen_buf_t name, local, text;
    gen_picker_t courses;
    gen_idgen_t course_ids;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok;

    if (!gen_picker_init (&courses, (uint32_t) n_courses, course_weight, salt, error)) {
        return false;
    }

    gen_idgen_init (&course_ids, ctx->seed, "school.courses");
    gen_buf_init (&name, name_s, sizeof name_s);
    gen_buf_init (&local, local_s, sizeof local_s);
    gen_buf_init (&text, text_s, sizeof text_s);
    ok = gen_coll_open (&coll, ctx, "school", "students", error);
    for (uint64_t i = 0; i < n && ok; i++) {
        const int64_t secs = STUDENTS_FROM + (int64_t) (i * (uint64_t) STUDENTS_SPAN / n);
        const int64_t enrolled_day = secs / 86400;
        const int32_t year = 1 + (int32_t) ((n - 1 - i) * 4 / n); /* early = senior */
        const uint32_t k =
            gen_rng_percent (rng, 8) ? 0 : (uint32_t) gen_rng_between (rng, 1, MAX_COURSES);
        bson_t *doc = gen_coll_doc (&coll, i, secs);

        gen_buf_reset (&name);
        gen_buf_reset (&local);
        gen_person_name (rng, &name, &local);
        gen_append_buf (doc, "name", &name);
        append_emails (doc, rng, local.data, i);

        /* Distinct courses per student: at least 40 courses for at most 8
         * picks. */
        gen_append_picked_ids (doc, "courses", &courses, rng, k, &course_ids, course_secs);

        /* The seed's one-to-one example: card number "123-1234-123". */
        if (gen_rng_percent (rng, 95)) {
            const uint32_t card_a = gen_rng_below (rng, 1000);
            const uint32_t card_b = gen_rng_below (rng, 10000);
            const uint32_t card_c = gen_rng_below (rng, 1000);
            bson_t card;

            gen_buf_reset (&text);
            gen_buf_printf (&text, "%03u-%04u-%03u", (unsigned) card_a, (unsigned) card_b,
                            (unsigned) card_c);
            BSON_APPEND_DOCUMENT_BEGIN (doc, "id_card", &card);
            gen_append_buf (&card, "number", &text);
            BSON_APPEND_DATE_TIME (&card, "issued_on", enrolled_day * GEN_DAY_MS);
            /* Valid four years (one of them a leap year). */
            BSON_APPEND_DATE_TIME (&card, "expires_on", (enrolled_day + 4 * 365 + 1) * GEN_DAY_MS);
            bson_append_document_end (doc, &card);
        }

        BSON_APPEND_DATE_TIME (doc, "enrolled", enrolled_day * GEN_DAY_MS);
        BSON_APPEND_INT32 (doc, "year", year);
        /* First-years have no grades yet. */
        if (year == 1 || gen_rng_percent (rng, 3)) {
            BSON_APPEND_NULL (doc, "gpa");
        } else {
            BSON_APPEND_DOUBLE (doc, "gpa", (double) gen_rng_between (rng, 150, 400) / 100.0);
        }
        ok = gen_coll_write (&coll, error);
    }
    ok = gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
    gen_picker_destroy (&courses);
    return ok;
}

bool
gen_school (gen_ctx_t *ctx, bson_error_t *error)
{
    const uint64_t n_courses = COURSES_PER_SCALE * ctx->scale;

    return write_courses (ctx, n_courses, error) && write_students (ctx, n_courses, error);
}
