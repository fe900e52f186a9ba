/* The once-read partners' ordering prefix (shell-ext/batch/
 * online_partners.c, online_partner_prefix): for every pair of a few
 * hundred key values of every type a join key holds (numbers of four
 * types, strings and symbols of 0 to 20 bytes with NULs and high bytes
 * inside, ObjectIds, dates either side of 1970, null, MinKey, MaxKey,
 * bools, documents, arrays), a lower prefix is a lower value by
 * rm_value_compare, and an equal exact one an equal value. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/value.h"
#include "test.h"

static bson_t *
values (void)
{
    bson_t *s = bson_new ();
    uint64_t seed = 39;
    int k = 0;
    char key[16], str[24];
    bson_oid_t oid;
    bson_decimal128_t dec;

#define KEY() t_key_next (key, sizeof key, &k)
    for (int i = 0; i < 60; i++) {
        uint64_t r = t_xorshift (&seed);
        size_t len = r % 21;
        for (size_t j = 0; j < len; j++) /* a small alphabet: shared prefixes */
            str[j] = "ab\0\xff"[(t_xorshift (&seed) >> 7) % 4];
        if (r & 1)
            bson_append_utf8 (s, KEY (), -1, str, (int) len);
        else
            bson_append_symbol (s, KEY (), -1, str, (int) len);
    }
    bson_append_utf8 (s, KEY (), -1, "abababababababab", 14); /* 14, 15 and 16 bytes */
    bson_append_utf8 (s, KEY (), -1, "abababababababab", 15);
    bson_append_utf8 (s, KEY (), -1, "abababababababab", 16);
    bson_append_utf8 (s, KEY (), -1, "ababababababab\0", 15);
    for (int i = 0; i < 40; i++) {
        uint8_t b[12];
        uint64_t r = t_xorshift (&seed);
        memset (b, 0x65, sizeof b);
        b[(r >> 8) % 12] = (uint8_t) r; /* ObjectIds a byte apart, anywhere */
        if (i % 5 == 0)
            b[11] = (uint8_t) (r >> 16);
        bson_oid_init_from_data (&oid, b);
        bson_append_oid (s, KEY (), -1, &oid);
        bson_append_date_time (s, KEY (), -1, (int64_t) (r % 2000000) - 1000000);
    }
    bson_append_date_time (s, KEY (), -1, INT64_MIN);
    bson_append_date_time (s, KEY (), -1, INT64_MAX);
    bson_append_date_time (s, KEY (), -1, 0);
    for (int i = -5; i < 5; i++) {
        bson_append_int32 (s, KEY (), -1, i);
        bson_append_int64 (s, KEY (), -1, (int64_t) i * 3);
        bson_append_double (s, KEY (), -1, i * 1.5);
    }
    bson_decimal128_from_string ("2.5", &dec);
    bson_append_decimal128 (s, KEY (), -1, &dec);
    bson_append_null (s, KEY (), -1);
    bson_append_minkey (s, KEY (), -1);
    bson_append_maxkey (s, KEY (), -1);
    bson_append_bool (s, KEY (), -1, true);
    bson_append_bool (s, KEY (), -1, false);
    {
        bson_t d;
        BSON_APPEND_DOCUMENT_BEGIN (s, KEY (), &d);
        BSON_APPEND_INT32 (&d, "x", 1);
        bson_append_document_end (s, &d);
        BSON_APPEND_ARRAY_BEGIN (s, KEY (), &d);
        BSON_APPEND_UTF8 (&d, "0", "ab");
        bson_append_array_end (s, &d);
    }
#undef KEY
    return s;
}

static void
test_prefix_orders_as_values (void)
{
    bson_t *s = values ();
    bson_iter_t a, b;
    int pairs = 0, decided = 0, exact = 0, bad = 0;

    bson_iter_init (&a, s);
    while (bson_iter_next (&a)) {
        uint64_t ah, al;
        online_partner_prefix (&a, &ah, &al);
        bson_iter_init (&b, s);
        while (bson_iter_next (&b)) {
            uint64_t bh, bl;
            int c = rm_value_compare (&a, &b);
            online_partner_prefix (&b, &bh, &bl);
            pairs++;
            if (ah != bh || al != bl) {
                int p = ah != bh ? (ah < bh ? -1 : 1) : (al < bl ? -1 : 1);
                decided++;
                if (p != c && bad++ < 5)
                    fprintf (stderr, "  values %s and %s: prefix says %d, compare %d\n",
                             bson_iter_key (&a), bson_iter_key (&b), p, c);
                T_CHECK (p == c);
            } else if (online_partner_prefix_exact (ah, al)) {
                exact++;
                if (c != 0 && bad++ < 5)
                    fprintf (stderr, "  values %s and %s: equal exact prefixes, compare %d\n",
                             bson_iter_key (&a), bson_iter_key (&b), c);
                T_CHECK (c == 0);
            }
        }
    }
    /* most pairs decided by the prefix, and equal exact ones met */
    T_CHECK (decided > pairs * 9 / 10);
    T_CHECK (exact > 0);
    bson_destroy (s);
}

int
main (void)
{
    T_RUN (test_prefix_orders_as_values);
    return t_done ();
}
