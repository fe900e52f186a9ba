/*
 * crm.c: database "crm", the task-tracking system of "6 Rules of Thumb"
 * (people and tasks, one-to-many with a parent reference on the many side).
 *
 *   people {_id, name, ssn, birthdate, email?, phone|null, addresses: [...],
 *           active}
 *   tasks  {_id, description, due_date|null, owner, priority?, done, tags?}
 *
 * Addresses stay embedded (the seed's one-to-few example); tasks reference
 * their owner, so "embed tasks into people" has real work to do. About one
 * person in eight owns no task, and two people in a hundred were deleted
 * after their tasks were written, leaving orphan tasks whose owner matches
 * no person.
 */
#include "gen.h"

#define PEOPLE_PER_SCALE 100
#define TASKS_PER_SCALE 1000 /* ~10 per person */

#define PEOPLE_FROM INT64_C (1325376000) /* 2012-01-01 */
#define PEOPLE_SPAN INT64_C (47304000)   /* 1.5 years */
#define TASKS_FROM INT64_C (1370044800)  /* 2013-06-01 */
#define TASKS_SPAN_MS INT64_C (31536000000) /* one year */

/* A person's _id time is a function of the index alone, so the tasks
 * generator can rebuild any person's _id (owner) without a table. */
static int64_t
person_secs (uint64_t i, uint64_t n)
{
    return PEOPLE_FROM + (int64_t) (i * (uint64_t) PEOPLE_SPAN / n);
}

/* Deleted people are skipped when writing "people" but still own tasks. */
static bool
person_deleted (uint64_t i)
{
    return i % 50 == 17;
}

/* SSNs are unique while there are fewer than 8 million people: the index
 * goes through a permutation of [0, 800 * 9999) (1000003 is a prime that does
 * not divide 7999200) and gives the area and serial numbers. */
static void
format_ssn (gen_buf_t *buf, gen_rng_t *rng, uint64_t i, uint64_t offset)
{
    const uint64_t x = (i * UINT64_C (1000003) + offset) % UINT64_C (7999200);
    const int32_t group = gen_rng_between (rng, 1, 99);

    gen_buf_printf (buf, "%03u-%02d-%04u", (unsigned) (100 + x % 800), group,
                    (unsigned) (1 + x / 800));
}

static void
append_address (bson_t *addresses, uint32_t idx, gen_rng_t *rng)
{
    /* One draw per statement: C leaves argument evaluation order open. */
    const int32_t number = gen_rng_between (rng, 1, 999);
    char street[96], keybuf[16];
    gen_buf_t buf;
    bson_t addr;

    gen_buf_init (&buf, street, sizeof street);
    gen_buf_printf (&buf, "%d %s", number, gen_list_pick (&gen_list_streets, rng));

    bson_append_document_begin (addresses, gen_array_key (idx, keybuf), -1, &addr);
    gen_append_buf (&addr, "street", &buf);
    gen_append_utf8 (&addr, "city", gen_list_pick (&gen_list_cities, rng));
    gen_append_utf8 (&addr, "cc", gen_rng_percent (rng, 70) ? "USA" : "DEU");
    if (gen_rng_percent (rng, 30)) {
        gen_append_utf8 (&addr, "zip", gen_rng_percent (rng, 50) ? "04524" : "10115");
    }
    bson_append_document_end (addresses, &addr);
}

static bool
write_people (gen_ctx_t *ctx, uint64_t n, bson_error_t *error)
{
    const uint64_t ssn_offset = gen_hash_str (ctx->seed, "crm.ssn") % UINT64_C (7999200);
    char name_s[128], local_s[128], text_s[192];
    gen_buf_t name, local, text;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok = gen_coll_open (&coll, ctx, "crm", "people", error);

    gen_buf_init (&name, name_s, sizeof name_s);
    gen_buf_init (&local, local_s, sizeof local_s);
    gen_buf_init (&text, text_s, sizeof text_s);
    for (uint64_t i = 0; i < n && ok; i++) {
        bson_t *doc, addresses;
        uint32_t n_addr;

        if (person_deleted (i)) {
            continue;
        }
        gen_buf_reset (&name);
        gen_buf_reset (&local);
        gen_person_name (rng, &name, &local);
        n_addr = gen_rng_below (rng, 10) == 0 ? 0 : gen_rng_between (rng, 1, 3);

        doc = gen_coll_doc (&coll, i, person_secs (i, n));
        gen_append_buf (doc, "name", &name);

        gen_buf_reset (&text);
        format_ssn (&text, rng, i, ssn_offset);
        gen_append_buf (doc, "ssn", &text);

        /* Born 1950 .. 1999. */
        BSON_APPEND_DATE_TIME (doc, "birthdate",
                               (INT64_C (-7305) + gen_rng_below (rng, 18262)) * GEN_DAY_MS);

        if (gen_rng_percent (rng, 85)) {
            gen_buf_reset (&text);
            gen_buf_printf (&text, "%s%u@%s", local.data, (unsigned) (i % 1000),
                            gen_list_pick (&gen_list_mail_domains, rng));
            gen_append_buf (doc, "email", &text);
        }
        if (gen_rng_percent (rng, 12)) {
            BSON_APPEND_NULL (doc, "phone");
        } else {
            gen_buf_reset (&text);
            gen_buf_printf (&text, "+1-555-%04u", (unsigned) gen_rng_below (rng, 10000));
            gen_append_buf (doc, "phone", &text);
        }

        bson_append_array_begin (doc, "addresses", -1, &addresses);
        for (uint32_t a = 0; a < n_addr; a++) {
            append_address (&addresses, a, rng);
        }
        bson_append_array_end (doc, &addresses);

        BSON_APPEND_BOOL (doc, "active", gen_rng_percent (rng, 90));
        ok = gen_coll_write (&coll, error);
    }
    return gen_coll_close (&coll, ctx, ok, NULL, 0, error);
}

/* Owners are skewed: one in eight people gets nothing, the rest between
 * 1 and 19 shares. Deleted people keep their shares (orphan tasks). */
static uint64_t
owner_weight (uint32_t i, uint64_t salt)
{
    const uint64_t h = gen_mix64 (salt + i);

    return h % 8 == 0 ? 0 : 1 + (h >> 8) % 19;
}

static bool
write_tasks (gen_ctx_t *ctx, uint64_t n_people, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"owner"}, {1}, false}};
    const uint64_t n = TASKS_PER_SCALE * ctx->scale;
    const uint64_t salt = gen_hash_str (ctx->seed, "crm.people.weight");
    const int64_t step_ms = TASKS_SPAN_MS / (int64_t) n;
    char text_s[192];
    gen_buf_t text;
    gen_picker_t owners;
    gen_idgen_t people_ids;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    int64_t clock_ms = TASKS_FROM * 1000;
    bool ok;

    if (!gen_picker_init (&owners, (uint32_t) n_people, owner_weight, salt, error)) {
        return false;
    }

    gen_idgen_init (&people_ids, ctx->seed, "crm.people");
    gen_buf_init (&text, text_s, sizeof text_s);
    ok = gen_coll_open (&coll, ctx, "crm", "tasks", error);
    for (uint64_t i = 0; i < n && ok; i++) {
        const uint32_t owner = gen_picker_pick (&owners, rng);
        bson_t *doc;
        bson_oid_t oid;

        /* Tasks arrive in time order at irregular intervals. */
        clock_ms += (int64_t) gen_rng_below64 (rng, (uint64_t) step_ms * 2 + 1);

        doc = gen_coll_doc (&coll, i, clock_ms / 1000);
        gen_buf_reset (&text);
        gen_buf_put (&text, gen_list_pick (&gen_list_task_verbs, rng));
        gen_buf_putc (&text, ' ');
        gen_buf_put (&text, gen_list_pick (&gen_list_task_objects, rng));
        if (gen_rng_percent (rng, 25)) {
            gen_buf_printf (&text, " #%u", (unsigned) gen_rng_between (rng, 100, 9999));
        }
        gen_append_buf (doc, "description", &text);

        if (gen_rng_percent (rng, 5)) {
            BSON_APPEND_NULL (doc, "due_date");
        } else {
            /* Due dates are whole days, like ISODate("2014-04-01"). */
            const int64_t day = clock_ms / GEN_DAY_MS + gen_rng_between (rng, 1, 45);

            BSON_APPEND_DATE_TIME (doc, "due_date", day * GEN_DAY_MS);
        }

        gen_idgen_oid (&people_ids, owner, person_secs (owner, n_people), &oid);
        BSON_APPEND_OID (doc, "owner", &oid);

        if (gen_rng_percent (rng, 80)) {
            BSON_APPEND_INT32 (doc, "priority", gen_rng_between (rng, 1, 4));
        }
        BSON_APPEND_BOOL (doc, "done", gen_rng_percent (rng, 40));
        if (gen_rng_percent (rng, 40)) {
            const uint32_t n_tags = gen_rng_between (rng, 1, 3);

            gen_append_picks (doc, "tags", &gen_list_tags, n_tags, rng);
        }
        ok = gen_coll_write (&coll, error);
    }
    ok = gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
    gen_picker_destroy (&owners);
    return ok;
}

bool
gen_crm (gen_ctx_t *ctx, bson_error_t *error)
{
    const uint64_t n_people = PEOPLE_PER_SCALE * ctx->scale;

    return write_people (ctx, n_people, error) && write_tasks (ctx, n_people, error);
}
