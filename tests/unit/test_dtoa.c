/* The shortest round-trip digits of a double (common/bson/dtoa_shortest.c)
 * against the loop they replaced (issue 61), kept here as the oracle:
 * printf's correctly rounded p digits for p = 1 to 17, the first that
 * strtod reads back as the same double, or at a power of two the p-digit
 * neighbour on the far side, which can read back when the nearest does
 * not. Over 200,000 seeded random bit patterns (REMODEL_DTOA_SCALE=N: N
 * times as many, a longer campaign than make check's), every power of two and
 * of ten with their neighbours, subnormals, integers and the named
 * boundaries; then the strings $toString and Extended JSON make of them.
 * And $toDecimal of a double, whose 34 digits came from printf's "%.33e"
 * and now come from integer arithmetic where it is exact: against that
 * printf, kept here too. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bson/bson.h>

#include "dtoa_shortest.h"
#include "expr_impl.h"
#include "remodel/expr.h"
#include "remodel/buf.h"
#include "remodel/extjson.h"
#include "test.h"

/* The old digits: fewest that read back, closest among those (printf
 * rounds a tie to even); e10 the exponent of the first. */
static int
oracle_digits (double d, char *dig, int *e10)
{
    char b[48];
    for (int p = 1; p <= 17; p++) {
        unsigned long long m = 0;
        int x, n;
        double back;

        snprintf (b, sizeof b, "%.*e", p - 1, d);
        back = strtod (b, NULL);
        for (const char *s = b; *s != 'e'; s++)
            if (*s != '.')
                m = m * 10 + (unsigned long long) (*s - '0');
        x = atoi (strchr (b, 'e') + 1) - (p - 1);
        if (back != d) {
            unsigned long long m2 = back < d ? m + 1 : m - 1;
            char c[48];
            snprintf (c, sizeof c, "%llue%d", m2, x);
            if (p == 17 || strtod (c, NULL) != d)
                continue;
            m = m2;
        }
        snprintf (b, sizeof b, "%llu", m);
        n = (int) strlen (b);
        *e10 = x + n - 1;
        while (n > 1 && b[n - 1] == '0')
            n--;
        memcpy (dig, b, (size_t) n);
        dig[n] = '\0';
        return n;
    }
    return -1;
}

static long compared, differed;

/* d's digits both ways; the first few differences printed. */
static void
same_as_oracle (double d)
{
    char got[RM_DTOA_DIGITS], want[48];
    int eg = 0, ew = 0, ng, nw;

    d = fabs (d);
    if (!(d > 0) || isinf (d))
        return;
    ng = rm_dtoa_shortest (d, got, &eg);
    nw = oracle_digits (d, want, &ew);
    compared++;
    if (ng != nw || eg != ew || strcmp (got, want)) {
        if (differed++ < 10)
            fprintf (stderr, "  %a (%.17g): got %s e%d, want %s e%d\n", d, d, got, eg, want, ew);
        t_fail_checks++;
    }
}

static double
from_bits (uint64_t b)
{
    double d;
    memcpy (&d, &b, sizeof d);
    return d;
}

static uint64_t seed = UINT64_C (0x5DEECE66D2718281);

/* How many times make check's random rounds (REMODEL_DTOA_SCALE, 1 by
 * default): the oracle's printf loop costs a microsecond a double. */
static int
scale (void)
{
    const char *s = getenv ("REMODEL_DTOA_SCALE");
    int n = s ? atoi (s) : 1;
    return n > 0 ? n : 1;
}

/* Seeded random bit patterns: every exponent about as often. */
static void
test_dtoa_random_bits (void)
{
    long before = compared;
    long n = 200000L * scale ();
    for (long i = 0; i < n; i++)
        same_as_oracle (from_bits (t_xorshift (&seed)));
    T_CHECK (compared - before > n - n / 200);
}

/* Every power of two and of ten in range, and the doubles either side. */
static void
test_dtoa_powers (void)
{
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp (1, e);
        same_as_oracle (p);
        same_as_oracle (nextafter (p, 0));
        same_as_oracle (nextafter (p, INFINITY));
    }
    for (int e = -323; e <= 308; e++) {
        char s[16];
        double p;
        snprintf (s, sizeof s, "1e%d", e);
        p = strtod (s, NULL);
        same_as_oracle (p);
        same_as_oracle (nextafter (p, 0));
        same_as_oracle (nextafter (p, INFINITY));
    }
}

/* Subnormals: the smallest ones one by one, random ones, and the top of
 * their range into the normals. */
static void
test_dtoa_subnormals (void)
{
    for (uint64_t c = 1; c <= 20000; c++)
        same_as_oracle (from_bits (c));
    for (int i = 0; i < 100000; i++)
        same_as_oracle (from_bits (t_xorshift (&seed) & ((UINT64_C (1) << 52) - 1)));
    for (uint64_t c = (UINT64_C (1) << 52) - 1000; c <= (UINT64_C (1) << 52) + 1000; c++)
        same_as_oracle (from_bits (c));
}

/* Integers (the path that skips the scaling) and halves of them. */
static void
test_dtoa_integers (void)
{
    for (int i = 0; i < 100000; i++) {
        uint64_t r = t_xorshift (&seed);
        double d = (double) (r >> (11 + r % 53));
        same_as_oracle (d);
        same_as_oracle (d / 2);
        same_as_oracle (d * 1024);
    }
    for (int i = 1; i <= 100000; i++)
        same_as_oracle (i);
}

/* Named boundaries, with the digits written out (not only the oracle's). */
static void
test_dtoa_named (void)
{
    static const struct {
        double d;
        const char *dig;
        int e10;
    } cases[] = {
        {5e-324, "5", -324},
        {DBL_MIN, "22250738585072014", -308},
        {DBL_MAX, "17976931348623157", 308},
        {0.1, "1", -1},
        {0.3, "3", -1},
        {1.0 / 3, "3333333333333333", -1},
        {0.1 + 0.2, "30000000000000004", -1},
        {9007199254740991.0, "9007199254740991", 15},
        {9007199254740992.0, "9007199254740992", 15},
        {9007199254740993.0, "9007199254740992", 15}, /* reads as 2^53 */
        {9007199254740994.0, "9007199254740994", 15},
        {1337, "1337", 3},
        {1e23, "1", 23},
        {123456789012345680.0, "12345678901234568", 17},
        /* 2^-1017: the nearest 16 digits do not read back, the next ones
         * up do (the gap below a power of two is half the gap above). */
        {0x1p-1017, "7120236347223045", -307},
        /* Exact ties at 17 digits (2^50 + 1/4, + 3/4): the even digit. */
        {1125899906842624.25, "11258999068426242", 15},
        {1125899906842624.75, "11258999068426248", 15},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dig[RM_DTOA_DIGITS];
        int e10 = 0;
        rm_dtoa_shortest (cases[i].d, dig, &e10);
        T_CHECK_STR (dig, cases[i].dig);
        if (e10 != cases[i].e10)
            fprintf (stderr, "  %.17g: exponent %d, want %d\n", cases[i].d, e10, cases[i].e10);
        T_CHECK (e10 == cases[i].e10);
        same_as_oracle (cases[i].d);
    }
}

/* $toString of a double: the server's forms at the exponent breaks. */
static void
test_dtoa_tostring (void)
{
    static const struct {
        double d;
        const char *s;
    } cases[] = {
        {1e-5, "1e-05"},
        {1.5e-5, "1.5e-05"},
        {0.0001, "0.0001"},
        {0.00012345, "0.00012345"},
        {1e15, "1000000000000000"},
        {9999999999999998.0, "9999999999999998"},
        {1e16, "1e+16"},
        {1.2345e16, "1.2345e+16"},
        {1e21, "1e+21"},
        {123.456, "123.456"},
        {-1.5, "-1.5"},
        {1337.0, "1337"},
        {-0.0, "-0"},
        {0.0, "0"},
        {5e-324, "5e-324"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {-0x1p-1017, "-7.120236347223045e-307"},
        {INFINITY, "Infinity"},
        {-INFINITY, "-Infinity"},
        {NAN, "NaN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s[64];
        size_t n = rm_xdouble_string (cases[i].d, s, sizeof s);
        T_CHECK_STR (s, cases[i].s);
        T_CHECK (n == strlen (cases[i].s));
    }
}

/* Extended JSON's doubles, Go's shortest 'G' form. */
static void
test_dtoa_extjson (void)
{
    static const struct {
        double d;
        const char *s;
    } cases[] = {
        {0.1, "0.1"},
        {-0.1, "-0.1"},
        {1.0, "1.0"},
        {123456.5, "123456.5"},
        {1e6, "1E+06"},
        {1e-5, "1E-05"},
        {5e-324, "5E-324"},
        {DBL_MAX, "1.7976931348623157E+308"},
        /* was 7.1202363472230444E-307: 17 digits where 16 read back */
        {0x1p-1017, "7.120236347223045E-307"},
        {-0.0, "-0.0"},
    };
    rm_buf_t b;
    rm_buf_init (&b);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rm_buf_reset (&b);
        rm_extjson_double (&b, cases[i].d);
        rm_buf_append (&b, "", 1);
        T_CHECK_STR ((const char *) b.data, cases[i].s);
    }
    rm_buf_destroy (&b);
}

/* The old $toDecimal of a double: 34 digits by printf, then 15, half to
 * even both times, read by libbson. */
static void
oracle_decimal (double x, bson_decimal128_t *out)
{
    char s[64], t[64], dig[40];
    int n = 0, e10;
    bool up;

    if (x == 0) {
        bson_decimal128_from_string (signbit (x) ? "-0" : "0", out);
        return;
    }
    snprintf (s, sizeof s, "%.33e", fabs (x));
    for (const char *p = s; *p != 'e'; p++)
        if (*p != '.')
            dig[n++] = *p;
    e10 = atoi (strchr (s, 'e') + 1);
    up = dig[15] > '5';
    if (dig[15] == '5') {
        up = (dig[14] - '0') % 2 == 1;
        for (int i = 16; i < n; i++)
            if (dig[i] != '0')
                up = true;
    }
    if (up) {
        int i = 14;
        while (i >= 0 && dig[i] == '9')
            dig[i--] = '0';
        if (i >= 0) {
            dig[i]++;
        } else {
            dig[0] = '1';
            e10++;
        }
    }
    dig[15] = '\0';
    snprintf (t, sizeof t, "%s%sE%d", x < 0 ? "-" : "", dig, e10 - 14);
    bson_decimal128_from_string (t, out);
}

static rm_expr_t *to_dec;
static rm_expr_ctx_t *to_dec_cx;
static long dec_compared, dec_differed;

/* {$toDecimal: "$x"} over {x: d}, bit for bit against the oracle. */
static void
decimal_same (double d)
{
    bson_t doc;
    bson_value_t out;
    bson_error_t err;
    bson_decimal128_t want;

    if (isnan (d) || isinf (d))
        return;
    bson_init (&doc);
    BSON_APPEND_DOUBLE (&doc, "x", d);
    oracle_decimal (d, &want);
    dec_compared++;
    if (!rm_expr_eval (to_dec_cx, to_dec, bson_get_data (&doc), doc.len, &out, &err) ||
        out.value_type != BSON_TYPE_DECIMAL128 || out.value.v_decimal128.high != want.high ||
        out.value.v_decimal128.low != want.low) {
        if (dec_differed++ < 10) {
            char g[BSON_DECIMAL128_STRING] = "?", w[BSON_DECIMAL128_STRING];
            if (out.value_type == BSON_TYPE_DECIMAL128)
                bson_decimal128_to_string (&out.value.v_decimal128, g);
            bson_decimal128_to_string (&want, w);
            fprintf (stderr, "  $toDecimal of %a (%.17g): got %s, want %s\n", d, d, g, w);
        }
        t_fail_checks++;
    }
    bson_destroy (&doc);
}

static void
test_dtoa_todecimal (void)
{
    bson_error_t err;
    bson_t *ex = bson_new_from_json ((const uint8_t *) "{\"e\": {\"$toDecimal\": \"$x\"}}", -1, &err);
    bson_iter_t it;
    long before = dec_compared;

    T_CHECK (ex && bson_iter_init_find (&it, ex, "e"));
    to_dec = rm_expr_parse (&it, &err);
    T_CHECK (to_dec != NULL);
    to_dec_cx = rm_expr_ctx_new (0);
    if (!to_dec)
        return;
    /* Random bit patterns (most outside the exact path's range) */
    for (long i = 0; i < 50000L * scale (); i++)
        decimal_same (from_bits (t_xorshift (&seed)));
    /* and random doubles inside it, 1e-22 to 1e35, either sign. */
    for (long i = 0; i < 200000L * scale (); i++) {
        uint64_t r = t_xorshift (&seed);
        uint64_t bq = 1023 - 74 + (r >> 52) % (74 + 118);
        decimal_same (from_bits ((r & (UINT64_C (0x800FFFFFFFFFFFFF))) | bq << 52));
    }
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp (1, e);
        decimal_same (p);
        decimal_same (-nextafter (p, 0));
        decimal_same (nextafter (p, INFINITY));
    }
    for (int e = -323; e <= 308; e++) {
        char s[16];
        double p;
        snprintf (s, sizeof s, "1e%d", e);
        p = strtod (s, NULL);
        decimal_same (p);
        decimal_same (nextafter (p, 0));
        decimal_same (nextafter (p, INFINITY));
    }
    /* Integers, halves (ties at the 15th digit: 100000000000000.5) and
     * numbers with 16 or 17 digits. */
    for (int i = 0; i < 200000; i++) {
        uint64_t r = t_xorshift (&seed);
        double d = (double) (r >> (11 + r % 53));
        decimal_same (d);
        decimal_same (d + 0.5);
        decimal_same (d / 4);
    }
    for (double d = 99999999999999.5; d < 100000000000100.0; d += 0.5)
        decimal_same (d);
    decimal_same (0.0);
    decimal_same (-0.0);
    decimal_same (DBL_MAX);
    decimal_same (5e-324);
    decimal_same (0.1);
    decimal_same (2.5);
    decimal_same (1e-21);
    decimal_same (9.999999999999999e33);
    decimal_same (1e34);
    T_CHECK (dec_compared - before > 250000L * scale () + 600000);
    rm_expr_ctx_destroy (to_dec_cx);
    rm_expr_destroy (to_dec);
    bson_destroy (ex);
}

int
main (void)
{
    T_RUN (test_dtoa_named);
    T_RUN (test_dtoa_powers);
    T_RUN (test_dtoa_subnormals);
    T_RUN (test_dtoa_integers);
    T_RUN (test_dtoa_random_bits);
    T_RUN (test_dtoa_tostring);
    T_RUN (test_dtoa_extjson);
    T_RUN (test_dtoa_todecimal);
    fprintf (stderr, "  dtoa: %ld doubles compared with the oracle, %ld differed; $toDecimal: %ld, %ld\n",
             compared, differed, dec_compared, dec_differed);
    return t_done ();
}
