/*
 * catalog.c: database "catalog", the replacement-parts system of "6 Rules of
 * Thumb" (products and parts, one-to-many with an array of child references).
 *
 *   parts    {_id, partno, name, qty, cost (double), price (decimal128),
 *             weight_g?|null, supplier?}
 *   products {_id, name, manufacturer, catalog_number, parts: [part _ids],
 *             released, discontinued?}
 *
 * A tenth of the parts are common (washers, bolts) and appear in many
 * products, which turns one-to-many into many-to-many as the seed notes;
 * some parts belong to no product at all.
 */
#include "gen.h"

#define PARTS_PER_SCALE 400
#define PRODUCTS_PER_SCALE 60

#define PARTS_FROM INT64_C (1262304000) /* 2010-01-01 */
#define PARTS_SPAN INT64_C (94608000)   /* three years */
#define PRODUCTS_FROM INT64_C (1325376000) /* 2012-01-01 */
#define PRODUCTS_SPAN INT64_C (63072000)   /* two years */

/* Part numbers look like "123-aff-456" (digits, three of a-f, digits). The
 * index goes through a bijection of [0, 216e6), so part numbers are unique
 * yet do not count up visibly. 1000003 is prime and shares no factor with
 * 216e6 = 2^9 * 3^3 * 5^6, so multiplying by it permutes the range. */
static void
format_partno (gen_buf_t *buf, uint64_t i, uint64_t offset)
{
    const uint64_t modulus = UINT64_C (216000000);
    uint64_t x = (i * UINT64_C (1000003) + offset) % modulus;
    const unsigned low = (unsigned) (x % 1000);
    unsigned letters;

    x /= 1000;
    letters = (unsigned) (x % 216);
    x /= 216;
    gen_buf_printf (buf, "%03u-%c%c%c-%03u", (unsigned) x, "abcdef"[letters % 6],
                    "abcdef"[letters / 6 % 6], "abcdef"[letters / 36], low);
}

static int64_t
part_secs (uint64_t i, uint64_t n)
{
    return PARTS_FROM + (int64_t) (i * (uint64_t) PARTS_SPAN / n);
}

static bool
write_parts (gen_ctx_t *ctx, uint64_t n, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"partno"}, {1}, true}};
    const uint64_t offset = gen_hash_str (ctx->seed, "catalog.partno") % 216000000u;
    char text_s[128];
    gen_buf_t text;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok = gen_coll_open (&coll, ctx, "catalog", "parts", error);

    gen_buf_init (&text, text_s, sizeof text_s);
    for (uint64_t i = 0; i < n && ok; i++) {
        bson_t *doc = gen_coll_doc (&coll, i, part_secs (i, n));
        uint64_t cost_cents;
        uint64_t price_cents;

        gen_buf_reset (&text);
        format_partno (&text, i, offset);
        gen_append_buf (doc, "partno", &text);

        gen_buf_reset (&text);
        switch (gen_rng_below (rng, 3)) {
        case 0:
            gen_buf_printf (&text, "#%d ", gen_rng_between (rng, 1, 12));
            break;
        case 1:
            gen_buf_printf (&text, "M%d ", 2 * gen_rng_between (rng, 1, 8));
            break;
        default:
            gen_buf_put (&text, gen_list_pick (&gen_list_materials, rng));
            gen_buf_putc (&text, ' ');
            break;
        }
        gen_buf_put (&text, gen_list_pick (&gen_list_part_nouns, rng));
        gen_append_buf (doc, "name", &text);

        BSON_APPEND_INT32 (doc, "qty", gen_rng_percent (rng, 8) ? 0 : gen_rng_between (rng, 1, 500));

        /* Cents are integers until the last moment: 0.94 as a double, 3.99 as
         * a decimal128, like the seed's cost and price. */
        cost_cents = gen_rng_percent (rng, 90) ? (uint64_t) gen_rng_between (rng, 5, 999)
                                               : (uint64_t) gen_rng_between (rng, 1000, 20000);
        BSON_APPEND_DOUBLE (doc, "cost", (double) cost_cents / 100.0);
        price_cents = cost_cents * (uint64_t) gen_rng_between (rng, 150, 400) / 100;
        price_cents = (price_cents / 100 + 1) * 100 - 1; /* x.99 */
        gen_append_cents_decimal (doc, "price", price_cents);

        switch (gen_rng_below (rng, 20)) {
        case 0:
            BSON_APPEND_NULL (doc, "weight_g");
            break;
        case 1:
        case 2:
        case 3:
            break; /* never weighed: field missing */
        default:
            BSON_APPEND_DOUBLE (doc, "weight_g", (double) gen_rng_between (rng, 1, 5000) / 10.0);
            break;
        }
        if (gen_rng_percent (rng, 70)) {
            gen_append_utf8 (doc, "supplier", gen_list_pick (&gen_list_suppliers, rng));
        }
        ok = gen_coll_write (&coll, error);
    }
    return gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
}

/* Number of parts in one product: mostly 3 to 20, sometimes up to 60. */
static uint32_t
parts_per_product (gen_rng_t *rng)
{
    return gen_rng_percent (rng, 85) ? (uint32_t) gen_rng_between (rng, 3, 20)
                                     : (uint32_t) gen_rng_between (rng, 21, 60);
}

/* A tenth of the parts are common ones, in many products. */
static uint64_t
part_weight (uint32_t i, uint64_t salt)
{
    return gen_mix64 (salt + i) % 10 == 0 ? 25 : 1;
}

static bool
write_products (gen_ctx_t *ctx, uint64_t n_parts, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"catalog_number"}, {1}, false}};
    const uint64_t n = PRODUCTS_PER_SCALE * ctx->scale;
    const uint64_t salt = gen_hash_str (ctx->seed, "catalog.parts.common");
    char text_s[128];
    gen_buf_t text;
    gen_picker_t parts;
    gen_idgen_t part_ids;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok;

    if (!gen_picker_init (&parts, (uint32_t) n_parts, part_weight, salt, error)) {
        return false;
    }

    gen_idgen_init (&part_ids, ctx->seed, "catalog.parts");
    gen_buf_init (&text, text_s, sizeof text_s);
    ok = gen_coll_open (&coll, ctx, "catalog", "products", error);
    for (uint64_t i = 0; i < n && ok; i++) {
        const int64_t secs = PRODUCTS_FROM + (int64_t) (i * (uint64_t) PRODUCTS_SPAN / n);
        const uint32_t k = parts_per_product (rng);
        bson_t *doc = gen_coll_doc (&coll, i, secs);
        int64_t released;

        gen_buf_reset (&text);
        gen_buf_put (&text, gen_list_pick (&gen_list_product_adjs, rng));
        gen_buf_putc (&text, ' ');
        gen_buf_put (&text, gen_list_pick (&gen_list_product_nouns, rng));
        gen_append_buf (doc, "name", &text);
        gen_append_utf8 (doc, "manufacturer", gen_list_pick (&gen_list_manufacturers, rng));
        BSON_APPEND_INT32 (doc, "catalog_number", (int32_t) (1000 + i));

        /* Distinct parts within a product: at least 400 parts for at most
         * 60 picks. */
        gen_append_picked_ids (doc, "parts", &parts, rng, k, &part_ids, part_secs);

        released = secs + gen_rng_between (rng, 0, 90 * 86400);
        BSON_APPEND_DATE_TIME (doc, "released", released * 1000);
        if (gen_rng_percent (rng, 8)) {
            BSON_APPEND_BOOL (doc, "discontinued", true);
        }
        ok = gen_coll_write (&coll, error);
    }
    ok = gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
    gen_picker_destroy (&parts);
    return ok;
}

bool
gen_catalog (gen_ctx_t *ctx, bson_error_t *error)
{
    const uint64_t n_parts = PARTS_PER_SCALE * ctx->scale;

    return write_parts (ctx, n_parts, error) && write_products (ctx, n_parts, error);
}
