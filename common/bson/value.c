/* BSON values as the MongoDB server compares them, and canonical join keys.
 *
 * The order follows the server's canonicalizeBSONType (bsontypes.h) and
 * compareElementValues (bsonelement.cpp), class by class:
 *
 *   MinKey < undefined < null (= missing) < numbers < string, symbol
 *   < object < array < BinData < ObjectId < bool < date < timestamp
 *   < regex < DBPointer < JavaScript code < code with scope < MaxKey
 *
 * The manual's "Comparison/Sort Order" lists JavaScript code and code with
 * scope between regex and MaxKey; it does not list DBPointer, which the
 * server puts between regex and code (canonical types 50, 55, 60, 65).
 *
 * undefined is its own class, just below null, as in the server (canonical
 * type 0 against null's 5; it is also where an empty array's sort key goes,
 * which is why [] sorts before null). It is not equal to null: since
 * MongoDB 8.0 a null local field no longer matches an undefined foreign one
 * in $lookup, and the server refuses undefined as an operand outright, so
 * keys keep it apart too. Folding it into null is two lines:
 * canonical_type's BSON_TYPE_UNDEFINED case and key_value's.
 *
 * Numbers compare by exact value across int32, int64, double and
 * decimal128, with NaN equal to NaN and below -Infinity, and -0 == 0. The
 * server is exact too (compareLongToDouble, compareDecimalToDouble, which
 * converts with directed rounding and checks the inexact flag). Here every
 * finite number is read as an integer times 2^e2 * 5^e5, exactly (a double
 * is m * 2^e, a decimal c * 10^q), and two that are close in magnitude are
 * brought to integers and compared as big integers (at most about 900
 * bits, for a decimal against a subnormal double).
 *
 * Keys encode the same equality as byte equality: see rm_key_append below. */
#include <math.h>
#include <string.h>

#include "bignum.h"
#include "dec128.h"
#include "remodel/value.h"

#if defined(__GNUC__) || defined(__clang__)
#define RM_NOINLINE __attribute__ ((noinline))
#else
#define RM_NOINLINE
#endif

/* Documents nested deeper than this are compared and keyed by their raw
 * bytes, so that hostile input cannot exhaust the stack through recursion.
 * The server stores at most 100 levels (and parses at most 200), so real
 * data never gets there. Compare and keys cut at the same depth, so they
 * still agree with each other. */
#define MAX_DEPTH 256

/* The server's canonical type numbers, so that a reader can check them
 * against bsontypes.h. */
enum {
    CT_MINKEY = -1,
    CT_UNDEFINED = 0,
    CT_NULL = 5,
    CT_NUMBER = 10,
    CT_STRING = 15,
    CT_OBJECT = 20,
    CT_ARRAY = 25,
    CT_BINARY = 30,
    CT_OID = 35,
    CT_BOOL = 40,
    CT_DATE = 45,
    CT_TIMESTAMP = 47,
    CT_REGEX = 50,
    CT_DBPOINTER = 55,
    CT_CODE = 60,
    CT_CODEWSCOPE = 65,
    CT_UNKNOWN = 100, /* bson_iter rejects unknown types; never seen in practice */
    CT_MAXKEY = 127,
};

int
rm_value_canonical_type (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_MINKEY:
        return CT_MINKEY;
    case BSON_TYPE_UNDEFINED:
        return CT_UNDEFINED;
    case BSON_TYPE_EOD: /* missing */
    case BSON_TYPE_NULL:
        return CT_NULL;
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128:
        return CT_NUMBER;
    case BSON_TYPE_UTF8:
    case BSON_TYPE_SYMBOL:
        return CT_STRING;
    case BSON_TYPE_DOCUMENT:
        return CT_OBJECT;
    case BSON_TYPE_ARRAY:
        return CT_ARRAY;
    case BSON_TYPE_BINARY:
        return CT_BINARY;
    case BSON_TYPE_OID:
        return CT_OID;
    case BSON_TYPE_BOOL:
        return CT_BOOL;
    case BSON_TYPE_DATE_TIME:
        return CT_DATE;
    case BSON_TYPE_TIMESTAMP:
        return CT_TIMESTAMP;
    case BSON_TYPE_REGEX:
        return CT_REGEX;
    case BSON_TYPE_DBPOINTER:
        return CT_DBPOINTER;
    case BSON_TYPE_CODE:
        return CT_CODE;
    case BSON_TYPE_CODEWSCOPE:
        return CT_CODEWSCOPE;
    case BSON_TYPE_MAXKEY:
        return CT_MAXKEY;
    default:
        return CT_UNKNOWN;
    }
}

static inline int
sign_of (int c)
{
    return (c > 0) - (c < 0);
}

static inline int
cmp_u64 (uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static inline int
cmp_i64 (int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* Bytes, then length: the server's string order (memcmp of the common
 * part, the longer string greater), which allows embedded NULs. */
static int
cmp_bytes (const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp (a, b, n) : 0;
    if (c)
        return sign_of (c);
    return (alen > blen) - (alen < blen);
}

/* ---- Numbers -----------------------------------------------------------
 * A number, exactly: kind, sign and |value| = (hi:lo) * 2^e2 * 5^e5. An
 * integer has e2 = e5 = 0; a double m * 2^e has e2 = e, e5 = 0; a decimal
 * c * 10^q has e2 = e5 = q. Zero has hi = lo = 0 and neg false, whatever
 * sign it was written with. */
typedef enum { NUM_NAN, NUM_NEG_INF, NUM_FINITE, NUM_POS_INF } num_kind_t;

typedef struct {
    num_kind_t kind;
    bool neg;
    uint64_t hi, lo;
    int32_t e2, e5;
} num_t;

#define TWO_63 9223372036854775808.0 /* 2^63, exact as a double */
#define LOG2_5 2.3219280948873623478703194294894

static void
num_from_int64 (num_t *n, int64_t v)
{
    n->kind = NUM_FINITE;
    n->neg = v < 0;
    n->hi = 0;
    /* 0 - (uint64_t) v is |v| even for INT64_MIN */
    n->lo = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;
    n->e2 = n->e5 = 0;
}

static void
num_from_double (num_t *n, double d)
{
    uint64_t bits, frac;
    int exp;

    memcpy (&bits, &d, sizeof bits);
    exp = (int) (bits >> 52 & 0x7ff);
    frac = bits & ((UINT64_C (1) << 52) - 1);
    n->neg = bits >> 63;
    n->hi = 0;
    n->e5 = 0;
    if (exp == 0x7ff) {
        n->kind = frac ? NUM_NAN : n->neg ? NUM_NEG_INF : NUM_POS_INF;
        return;
    }
    n->kind = NUM_FINITE;
    if (exp == 0) { /* subnormal or zero */
        n->lo = frac;
        n->e2 = -1074;
    } else {
        n->lo = frac | UINT64_C (1) << 52;
        n->e2 = exp - 1075;
    }
    if (n->lo == 0)
        n->neg = false;
}

/* A decimal c * 10^q as dec128.h reads it (a non-canonical coefficient is
 * zero). */
static void
num_from_decimal (num_t *n, const bson_decimal128_t *dec)
{
    rm_dec_t x;

    rm_dec_unpack (dec, &x);
    n->neg = x.neg;
    if (x.kind == RM_DEC_NAN) {
        n->kind = NUM_NAN;
        return;
    }
    if (x.kind == RM_DEC_INF) {
        n->kind = n->neg ? NUM_NEG_INF : NUM_POS_INF;
        return;
    }
    n->kind = NUM_FINITE;
    n->hi = x.hi;
    n->lo = x.lo;
    n->e2 = n->e5 = x.exp;
    if (n->hi == 0 && n->lo == 0)
        n->neg = false;
}

/* The value of an int32 or int64. Here and below, the _unsafe getters
 * skip a second type check: the caller has looked at the type, and
 * bson_iter_next has checked the value's bounds. */
static inline int64_t
int_value (const bson_iter_t *it, bson_type_t t)
{
    return t == BSON_TYPE_INT32 ? bson_iter_int32_unsafe (it) : bson_iter_int64_unsafe (it);
}

static void
num_from_iter (num_t *n, const bson_iter_t *it, bson_type_t t)
{
    bson_decimal128_t dec;

    if (t == BSON_TYPE_DOUBLE) {
        num_from_double (n, bson_iter_double_unsafe (it));
    } else if (t == BSON_TYPE_DECIMAL128) {
        bson_iter_decimal128_unsafe (it, &dec);
        num_from_decimal (n, &dec);
    } else {
        num_from_int64 (n, int_value (it, t));
    }
}

static unsigned
u128_bitlen (uint64_t hi, uint64_t lo)
{
    rm_big_t x;
    rm_big_set (&x, hi, lo);
    return rm_big_bitlen (&x);
}

/* |x| against |y|, both finite and nonzero. Kept out of line: its big
 * integers should not sit in the frame of every recursive compare. */
static RM_NOINLINE int
num_cmp_magnitude (const num_t *x, const num_t *y)
{
    rm_big_t l, r;
    int32_t d2, d5;

    /* log2 |x| lies in [lx - 1, lx): far apart, the estimate decides. The
     * margin of 2 also covers the rounding of e5 * LOG2_5 (|e5| < 6200),
     * and keeps the exact path below to values within a factor of 16. */
    double lx = (double) u128_bitlen (x->hi, x->lo) + x->e2 + x->e5 * LOG2_5;
    double ly = (double) u128_bitlen (y->hi, y->lo) + y->e2 + y->e5 * LOG2_5;
    if (lx > ly + 2)
        return 1;
    if (ly > lx + 2)
        return -1;

    /* Close: divide both by 2^min(e2) * 5^min(e5), leaving integers. The
     * sizes stay bounded because the values are close: a decimal against a
     * decimal or an integer scales one side only; against a double, the
     * decimal exponent is within [-360, 310] (doubles lie within
     * [2^-1074, 2^1024)), so 5^|q| has at most about 840 bits. */
    rm_big_set (&l, x->hi, x->lo);
    rm_big_set (&r, y->hi, y->lo);
    d2 = x->e2 - y->e2;
    d5 = x->e5 - y->e5;
    if (d2 > 0)
        rm_big_shl (&l, (unsigned) d2);
    else
        rm_big_shl (&r, (unsigned) -d2);
    if (d5 > 0)
        rm_big_mul_pow5 (&l, (unsigned) d5);
    else
        rm_big_mul_pow5 (&r, (unsigned) -d5);
    return rm_big_cmp (&l, &r);
}

/* NaN < -Inf < negatives < zero < positives < +Inf */
static int
num_rank (const num_t *n)
{
    switch (n->kind) {
    case NUM_NAN:
        return 0;
    case NUM_NEG_INF:
        return 1;
    case NUM_POS_INF:
        return 5;
    default:
        if (n->hi == 0 && n->lo == 0)
            return 3;
        return n->neg ? 2 : 4;
    }
}

static int
num_cmp (const num_t *x, const num_t *y)
{
    int rx = num_rank (x), ry = num_rank (y);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    if (rx == 2)
        return -num_cmp_magnitude (x, y);
    if (rx == 4)
        return num_cmp_magnitude (x, y);
    return 0;
}

/* NaN equals NaN and is below every other number; -0 == 0 already. */
static int
cmp_double (double a, double b)
{
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    if (a == b)
        return 0;
    return isnan (a) ? (isnan (b) ? 0 : -1) : 1;
}

/* Exact, like the server's compareLongToDouble: doubles at or beyond
 * +-2^63 are outside int64's range; below that a double's integer part
 * fits an int64 and its fraction is exact. */
static int
cmp_int64_double (int64_t i, double d)
{
    int64_t t;
    double frac;

    if (isnan (d))
        return 1;
    if (d >= TWO_63)
        return -1;
    if (d < -TWO_63)
        return 1;
    t = (int64_t) d; /* truncates toward zero, exactly */
    if (i != t)
        return i < t ? -1 : 1;
    frac = d - (double) t;
    return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

static int
compare_numbers (const bson_iter_t *a, bson_type_t ta, const bson_iter_t *b, bson_type_t tb)
{
    num_t x, y;

    /* The common cases without decoding: integers and doubles. */
    if (ta != BSON_TYPE_DECIMAL128 && tb != BSON_TYPE_DECIMAL128) {
        bool a_int = ta != BSON_TYPE_DOUBLE, b_int = tb != BSON_TYPE_DOUBLE;
        if (a_int && b_int)
            return cmp_i64 (int_value (a, ta), int_value (b, tb));
        if (!a_int && !b_int)
            return cmp_double (bson_iter_double_unsafe (a), bson_iter_double_unsafe (b));
        if (a_int)
            return cmp_int64_double (int_value (a, ta), bson_iter_double_unsafe (b));
        return -cmp_int64_double (int_value (b, tb), bson_iter_double_unsafe (a));
    }
    num_from_iter (&x, a, ta);
    num_from_iter (&y, b, tb);
    return num_cmp (&x, &y);
}

/* ---- Comparison --------------------------------------------------------- */

static bool
quick_int (const bson_value_t *v, int64_t *i)
{
    if (v->value_type == BSON_TYPE_INT32)
        *i = v->value.v_int32;
    else if (v->value_type == BSON_TYPE_INT64)
        *i = v->value.v_int64;
    else
        return false;
    return true;
}

bool
rm_value_compare_quick (const bson_value_t *a, const bson_value_t *b, int *c)
{
    int64_t ia = 0, ib = 0;
    bool a_int = quick_int (a, &ia), b_int = quick_int (b, &ib);
    bool a_dbl = a->value_type == BSON_TYPE_DOUBLE, b_dbl = b->value_type == BSON_TYPE_DOUBLE;

    if (a_int && b_int)
        *c = cmp_i64 (ia, ib);
    else if (a_dbl && b_dbl)
        *c = cmp_double (a->value.v_double, b->value.v_double);
    else if (a_int && b_dbl)
        *c = cmp_int64_double (ia, b->value.v_double);
    else if (a_dbl && b_int)
        *c = -cmp_int64_double (ib, a->value.v_double);
    else if (a->value_type == BSON_TYPE_UTF8 && b->value_type == BSON_TYPE_UTF8)
        *c = cmp_bytes (a->value.v_utf8.str, a->value.v_utf8.len, b->value.v_utf8.str, b->value.v_utf8.len);
    else
        return false;
    return true;
}

static int compare_values (const bson_iter_t *a, const bson_iter_t *b, int depth);

/* Two embedded documents or arrays at nesting depth `depth`, as the server
 * compares them (BSONObj::woCompare): element by element, each by the
 * canonical type of its value, then (documents only) its name, then its
 * value; a document that runs out first is smaller. Array element names
 * are ignored: in a valid array they are "0", "1"... at both sides. */
static int
compare_containers (const uint8_t *da, uint32_t la, const uint8_t *db, uint32_t lb,
                    bool is_array, int depth)
{
    bson_iter_t ia, ib;

    if (depth > MAX_DEPTH || !bson_iter_init_from_data (&ia, da, la) ||
        !bson_iter_init_from_data (&ib, db, lb))
        return cmp_bytes (da, la, db, lb);
    for (;;) {
        bool more_a = bson_iter_next (&ia), more_b = bson_iter_next (&ib);
        int c;

        if (!more_a || !more_b)
            return (int) more_a - (int) more_b;
        c = rm_value_canonical_type (bson_iter_type_unsafe (&ia)) -
            rm_value_canonical_type (bson_iter_type_unsafe (&ib));
        if (c)
            return sign_of (c);
        if (!is_array) {
            c = strcmp (bson_iter_key_unsafe (&ia), bson_iter_key_unsafe (&ib));
            if (c)
                return sign_of (c);
        }
        c = compare_values (&ia, &ib, depth);
        if (c)
            return c;
    }
}

/* a and b (of types ta and tb) are of the same canonical class. */
static int
compare_same_class (const bson_iter_t *a, bson_type_t ta, const bson_iter_t *b, bson_type_t tb,
                    int cls, int depth)
{
    const uint8_t *pa, *pb;
    const char *sa, *sb;
    uint32_t la, lb, sla, slb;
    int c;

    switch (cls) {
    case CT_NUMBER:
        return compare_numbers (a, ta, b, tb);
    case CT_STRING:
        sa = ta == BSON_TYPE_SYMBOL ? bson_iter_symbol (a, &la) : bson_iter_utf8 (a, &la);
        sb = tb == BSON_TYPE_SYMBOL ? bson_iter_symbol (b, &lb) : bson_iter_utf8 (b, &lb);
        return cmp_bytes (sa, la, sb, lb);
    case CT_OBJECT:
        bson_iter_document (a, &la, &pa);
        bson_iter_document (b, &lb, &pb);
        return compare_containers (pa, la, pb, lb, false, depth + 1);
    case CT_ARRAY:
        bson_iter_array (a, &la, &pa);
        bson_iter_array (b, &lb, &pb);
        return compare_containers (pa, la, pb, lb, true, depth + 1);
    case CT_BINARY: {
        /* The server: length, then subtype, then bytes. */
        bson_subtype_t suba, subb;
        bson_iter_binary (a, &suba, &la, &pa);
        bson_iter_binary (b, &subb, &lb, &pb);
        if (la != lb)
            return la < lb ? -1 : 1;
        if ((uint8_t) suba != (uint8_t) subb)
            return (uint8_t) suba < (uint8_t) subb ? -1 : 1;
        return la ? sign_of (memcmp (pa, pb, la)) : 0;
    }
    case CT_OID:
        return sign_of (memcmp (bson_iter_oid (a)->bytes, bson_iter_oid (b)->bytes, 12));
    case CT_BOOL:
        return (int) bson_iter_bool (a) - (int) bson_iter_bool (b);
    case CT_DATE:
        return cmp_i64 (bson_iter_date_time (a), bson_iter_date_time (b));
    case CT_TIMESTAMP: {
        uint32_t ts_a, inc_a, ts_b, inc_b;
        bson_iter_timestamp (a, &ts_a, &inc_a);
        bson_iter_timestamp (b, &ts_b, &inc_b);
        return ts_a != ts_b ? cmp_u64 (ts_a, ts_b) : cmp_u64 (inc_a, inc_b);
    }
    case CT_REGEX: {
        const char *oa, *ob;
        sa = bson_iter_regex (a, &oa);
        sb = bson_iter_regex (b, &ob);
        c = strcmp (sa, sb);
        return sign_of (c ? c : strcmp (oa, ob));
    }
    case CT_DBPOINTER: {
        /* The server compares the value's size, then its bytes: the
         * namespace's length, the namespace, the ObjectId. */
        const bson_oid_t *oa, *ob;
        bson_iter_dbpointer (a, &la, &sa, &oa);
        bson_iter_dbpointer (b, &lb, &sb, &ob);
        if (la != lb)
            return la < lb ? -1 : 1;
        c = la ? memcmp (sa, sb, la) : 0;
        return sign_of (c ? c : memcmp (oa->bytes, ob->bytes, 12));
    }
    case CT_CODE:
        sa = bson_iter_code (a, &la);
        sb = bson_iter_code (b, &lb);
        return cmp_bytes (sa, la, sb, lb);
    case CT_CODEWSCOPE:
        /* The code as a string, then the scope as a document. */
        sa = bson_iter_codewscope (a, &la, &sla, &pa);
        sb = bson_iter_codewscope (b, &lb, &slb, &pb);
        c = cmp_bytes (sa, la, sb, lb);
        return c ? c : compare_containers (pa, sla, pb, slb, false, depth + 1);
    case CT_UNKNOWN:
        return cmp_u64 (ta, tb);
    default: /* MinKey, MaxKey, null, undefined: one value each */
        return 0;
    }
}

static int
compare_values (const bson_iter_t *a, const bson_iter_t *b, int depth)
{
    bson_type_t ta = a ? bson_iter_type_unsafe (a) : BSON_TYPE_EOD;
    bson_type_t tb = b ? bson_iter_type_unsafe (b) : BSON_TYPE_EOD;
    int ca, cb;

    /* the most common case in joins and sorts, in a few instructions */
    if (ta == BSON_TYPE_INT32 && tb == BSON_TYPE_INT32)
        return cmp_i64 (bson_iter_int32_unsafe (a), bson_iter_int32_unsafe (b));
    ca = rm_value_canonical_type (ta);
    cb = rm_value_canonical_type (tb);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (!a || !b) /* missing against missing or null */
        return 0;
    return compare_same_class (a, ta, b, tb, ca, depth);
}

int
rm_value_compare (const bson_iter_t *a, const bson_iter_t *b)
{
    return compare_values (a, b, 0);
}

/* ---- Keys ----------------------------------------------------------------
 * A key is a tag byte for the equality class, then a payload whose length
 * the tag and the payload's own length fields fix, so no key is a prefix
 * of another and a concatenation of keys splits only one way.
 *
 *   MinKey, MaxKey, undefined, null (and missing): the tag alone.
 *   Numbers: KEY_NUMBER, then one of
 *     NUM_KEY_NAN                        any NaN, double or decimal;
 *     NUM_KEY_INT, 8 bytes               any integer in int64's range,
 *                                        whatever its type (-0 is 0);
 *     NUM_KEY_DOUBLE, 8 bytes            any other value a double holds
 *                                        exactly (0.5, 2^70, +-Inf), as
 *                                        the double's bits;
 *     NUM_KEY_DECIMAL, sign, 2-byte exponent, 16-byte coefficient
 *                                        any other decimal128, with the
 *                                        coefficient's trailing zeros
 *                                        moved into the exponent.
 *     Every value lands in exactly one of these forms, and each form is
 *     unique to its value, so equal numbers have equal bytes.
 *   String and symbol: KEY_STRING, 4-byte length, bytes. They are one
 *     class: the server compares them as strings and $eq matches across
 *     them.
 *   Document: KEY_DOCUMENT, then per field KEY_MORE, the name, a NUL, the
 *     value's key; then KEY_END. Array: the same without names. Field
 *     order counts, as it does for the server.
 *   Anything else: its tag and its bytes, length-prefixed where they vary.
 *     Regex: pattern and options, NUL-terminated (they hold no NUL).
 *     Code with scope: the code, then the scope's key as a document.
 *
 * Multi-byte integers are big-endian, which also makes int64 keys (sign bit
 * flipped) sort numerically; nothing relies on that. */
enum {
    KEY_END = 0x00,
    KEY_MORE = 0x01,

    KEY_MINKEY = 0x01,
    KEY_UNDEFINED = 0x02,
    KEY_NULL = 0x03,
    KEY_NUMBER = 0x10,
    KEY_STRING = 0x20,
    KEY_DOCUMENT = 0x28,
    KEY_RAW_DOCUMENT = 0x29, /* deeper than MAX_DEPTH: 4-byte length, bytes */
    KEY_ARRAY = 0x30,
    KEY_RAW_ARRAY = 0x31,
    KEY_BINARY = 0x38,
    KEY_OID = 0x40,
    KEY_BOOL = 0x48,
    KEY_DATE = 0x50,
    KEY_TIMESTAMP = 0x58,
    KEY_REGEX = 0x60,
    KEY_DBPOINTER = 0x68,
    KEY_CODE = 0x70,
    KEY_CODEWSCOPE = 0x78,
    KEY_UNKNOWN = 0x7f, /* then the type byte */
    KEY_MAXKEY = 0xff,
};

enum { NUM_KEY_NAN, NUM_KEY_INT, NUM_KEY_DOUBLE, NUM_KEY_DECIMAL };

static inline void
put_u8 (rm_buf_t *out, uint8_t v)
{
    rm_buf_append (out, &v, 1);
}

/* Room for n more bytes at out's end, counted in: a key written in place
 * at once, not a piece per append (analyze and embed key every value). */
static inline uint8_t *
put_room (rm_buf_t *out, size_t n)
{
    uint8_t *w;
    if (n > out->cap - out->len)
        rm_buf_grow (out, n);
    w = out->data + out->len;
    out->len += n;
    return w;
}

static inline void
store_be (uint8_t *w, uint64_t v, int bytes)
{
    /* The widths keys use, as one store each (analyze keys every number). */
    if (bytes == 8) {
        uint64_t be = BSON_UINT64_TO_BE (v);
        memcpy (w, &be, 8);
    } else if (bytes == 4) {
        uint32_t be = BSON_UINT32_TO_BE ((uint32_t) v);
        memcpy (w, &be, 4);
    } else {
        for (int i = 0; i < bytes; i++)
            w[i] = (uint8_t) (v >> 8 * (bytes - 1 - i));
    }
}

static void
put_be (rm_buf_t *out, uint64_t v, int bytes)
{
    store_be (put_room (out, (size_t) bytes), v, bytes);
}

/* 4-byte length, then the bytes. */
static void
put_bytes (rm_buf_t *out, const void *p, uint32_t len)
{
    uint8_t *w = put_room (out, 4 + (size_t) len);
    store_be (w, len, 4);
    if (len)
        memcpy (w + 4, p, len);
}

static void
key_int64 (rm_buf_t *out, int64_t v)
{
    uint8_t *w = put_room (out, 10);
    w[0] = KEY_NUMBER;
    w[1] = NUM_KEY_INT;
    store_be (w + 2, (uint64_t) v ^ UINT64_C (1) << 63, 8);
}

static void
key_double (rm_buf_t *out, double d)
{
    uint64_t bits;

    if (isnan (d)) {
        put_u8 (out, KEY_NUMBER);
        put_u8 (out, NUM_KEY_NAN);
        return;
    }
    if (d >= -TWO_63 && d < TWO_63) {
        int64_t i = (int64_t) d;
        if ((double) i == d) { /* also takes -0.0 to 0 */
            key_int64 (out, i);
            return;
        }
    }
    memcpy (&bits, &d, sizeof bits);
    put_u8 (out, KEY_NUMBER);
    put_u8 (out, NUM_KEY_DOUBLE);
    put_be (out, bits, 8);
}

/* 2^e as a double, for -1022 <= e <= 1023. */
static double
pow2 (int e)
{
    uint64_t bits = (uint64_t) (e + 1023) << 52;
    double d;
    memcpy (&d, &bits, sizeof d);
    return d;
}

/* The double equal to c * 10^q, if there is one. c is nonzero, has no
 * factor 10 and fewer than 114 bits. c * 10^q = (c * 5^q) * 2^q: a double
 * needs the 5^q to cancel (q < 0: 5^-q divides c) or to stay small (q >= 0:
 * c * 5^q has at most 53 bits once its factors 2 are out). The exponents
 * reached (from -48 to 135) are all in a double's normal range. */
static bool
decimal_as_double (const rm_big_t *c, int32_t q, double *d)
{
    rm_big_t t = *c;
    unsigned tz;
    int32_t e2 = q;
    uint64_t hi, lo;

    if (q < 0) {
        if (q < -48) /* 5^49 > 2^113 > c */
            return false;
        for (int32_t i = 0; i < -q; i++)
            if (rm_big_divmod_small (&t, 5) != 0)
                return false;
    } else {
        if (q > 22) /* 5^23 > 2^53 */
            return false;
        rm_big_mul_pow5 (&t, (unsigned) q);
    }
    tz = rm_big_ctz (&t);
    rm_big_shr (&t, tz);
    e2 += (int32_t) tz;
    if (rm_big_bitlen (&t) > 53)
        return false;
    rm_big_get (&t, &hi, &lo);
    *d = (double) lo * pow2 (e2);
    return true;
}

static RM_NOINLINE void
key_decimal (rm_buf_t *out, const bson_iter_t *it)
{
    bson_decimal128_t dec;
    num_t n;
    rm_big_t c;
    int32_t q;
    uint64_t hi, lo;
    double d;

    bson_iter_decimal128_unsafe (it, &dec);
    num_from_decimal (&n, &dec);
    switch (n.kind) {
    case NUM_NAN:
        key_double (out, NAN);
        return;
    case NUM_NEG_INF:
        key_double (out, -INFINITY);
        return;
    case NUM_POS_INF:
        key_double (out, INFINITY);
        return;
    default:
        break;
    }
    if (n.hi == 0 && n.lo == 0) {
        key_int64 (out, 0);
        return;
    }

    /* One representation per value: no trailing zeros in the coefficient.
     * Then the value is an integer exactly when q >= 0. */
    rm_big_set (&c, n.hi, n.lo);
    q = n.e5;
    while (rm_big_mod_small (&c, 10) == 0) {
        rm_big_divmod_small (&c, 10);
        q++;
    }

    /* 10^19 > 2^63: an integer with q > 18 is out of int64's range. */
    if (q >= 0 && q <= 18) {
        rm_big_t v = c;
        for (int32_t i = 0; i < q; i++)
            rm_big_mul_small (&v, 10);
        if (rm_big_bitlen (&v) <= 64) {
            rm_big_get (&v, &hi, &lo);
            if (lo < UINT64_C (1) << 63) {
                key_int64 (out, n.neg ? -(int64_t) lo : (int64_t) lo);
                return;
            }
            if (n.neg && lo == UINT64_C (1) << 63) {
                key_int64 (out, INT64_MIN);
                return;
            }
        }
    }
    if (decimal_as_double (&c, q, &d)) {
        key_double (out, n.neg ? -d : d);
        return;
    }
    rm_big_get (&c, &hi, &lo);
    put_u8 (out, KEY_NUMBER);
    put_u8 (out, NUM_KEY_DECIMAL);
    put_u8 (out, n.neg ? 1 : 0);
    put_be (out, (uint64_t) (q + 0x8000), 2); /* q is within [-6176, 6144] */
    put_be (out, hi, 8);
    put_be (out, lo, 8);
}

static void key_value (rm_buf_t *out, const bson_iter_t *it, int depth);

static void
key_container (rm_buf_t *out, const uint8_t *data, uint32_t len, bool is_array, int depth)
{
    bson_iter_t it;

    if (depth > MAX_DEPTH || !bson_iter_init_from_data (&it, data, len)) {
        put_u8 (out, is_array ? KEY_RAW_ARRAY : KEY_RAW_DOCUMENT);
        put_bytes (out, data, len);
        return;
    }
    put_u8 (out, is_array ? KEY_ARRAY : KEY_DOCUMENT);
    while (bson_iter_next (&it)) {
        put_u8 (out, KEY_MORE);
        if (!is_array)
            rm_buf_append (out, bson_iter_key_unsafe (&it), bson_iter_key_len (&it) + 1);
        key_value (out, &it, depth);
    }
    put_u8 (out, KEY_END);
}

static void
key_value (rm_buf_t *out, const bson_iter_t *it, int depth)
{
    const uint8_t *p;
    const char *s;
    uint32_t len, slen;

    switch (it ? bson_iter_type_unsafe (it) : BSON_TYPE_EOD) {
    case BSON_TYPE_EOD:
    case BSON_TYPE_NULL:
        put_u8 (out, KEY_NULL);
        break;
    case BSON_TYPE_UNDEFINED:
        put_u8 (out, KEY_UNDEFINED);
        break;
    case BSON_TYPE_MINKEY:
        put_u8 (out, KEY_MINKEY);
        break;
    case BSON_TYPE_MAXKEY:
        put_u8 (out, KEY_MAXKEY);
        break;
    case BSON_TYPE_INT32:
        key_int64 (out, bson_iter_int32_unsafe (it));
        break;
    case BSON_TYPE_INT64:
        key_int64 (out, bson_iter_int64_unsafe (it));
        break;
    case BSON_TYPE_DOUBLE:
        key_double (out, bson_iter_double_unsafe (it));
        break;
    case BSON_TYPE_DECIMAL128:
        key_decimal (out, it);
        break;
    case BSON_TYPE_UTF8:
        s = bson_iter_utf8 (it, &len);
        put_u8 (out, KEY_STRING);
        put_bytes (out, s, len);
        break;
    case BSON_TYPE_SYMBOL:
        s = bson_iter_symbol (it, &len);
        put_u8 (out, KEY_STRING);
        put_bytes (out, s, len);
        break;
    case BSON_TYPE_DOCUMENT:
        bson_iter_document (it, &len, &p);
        key_container (out, p, len, false, depth + 1);
        break;
    case BSON_TYPE_ARRAY:
        bson_iter_array (it, &len, &p);
        key_container (out, p, len, true, depth + 1);
        break;
    case BSON_TYPE_BINARY: {
        bson_subtype_t sub;
        bson_iter_binary (it, &sub, &len, &p);
        put_u8 (out, KEY_BINARY);
        put_u8 (out, (uint8_t) sub);
        put_bytes (out, p, len);
        break;
    }
    case BSON_TYPE_OID:
        put_u8 (out, KEY_OID);
        rm_buf_append (out, bson_iter_oid (it)->bytes, 12);
        break;
    case BSON_TYPE_BOOL:
        put_u8 (out, KEY_BOOL);
        put_u8 (out, bson_iter_bool (it) ? 1 : 0);
        break;
    case BSON_TYPE_DATE_TIME:
        put_u8 (out, KEY_DATE);
        put_be (out, (uint64_t) bson_iter_date_time (it), 8);
        break;
    case BSON_TYPE_TIMESTAMP: {
        uint32_t t, i;
        bson_iter_timestamp (it, &t, &i);
        put_u8 (out, KEY_TIMESTAMP);
        put_be (out, (uint64_t) t << 32 | i, 8);
        break;
    }
    case BSON_TYPE_REGEX: {
        const char *options;
        s = bson_iter_regex (it, &options);
        put_u8 (out, KEY_REGEX);
        rm_buf_append (out, s, strlen (s) + 1);
        rm_buf_append (out, options, strlen (options) + 1);
        break;
    }
    case BSON_TYPE_DBPOINTER: {
        const bson_oid_t *oid;
        bson_iter_dbpointer (it, &len, &s, &oid);
        put_u8 (out, KEY_DBPOINTER);
        put_bytes (out, s, len);
        rm_buf_append (out, oid->bytes, 12);
        break;
    }
    case BSON_TYPE_CODE:
        s = bson_iter_code (it, &len);
        put_u8 (out, KEY_CODE);
        put_bytes (out, s, len);
        break;
    case BSON_TYPE_CODEWSCOPE:
        s = bson_iter_codewscope (it, &len, &slen, &p);
        put_u8 (out, KEY_CODEWSCOPE);
        put_bytes (out, s, len);
        key_container (out, p, slen, false, depth + 1);
        break;
    default:
        put_u8 (out, KEY_UNKNOWN);
        put_u8 (out, (uint8_t) bson_iter_type_unsafe (it));
        break;
    }
}

void
rm_key_append (rm_buf_t *out, const bson_iter_t *it)
{
    key_value (out, it, 0);
}

static uint32_t
le32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

bool
rm_key_append_scalar (rm_buf_t *out, bson_type_t t, const uint8_t *v)
{
    /* The cases of key_value for these types, from the value's bytes: a
     * validated document's (rm_bson_check), whose lengths hold. */
    uint64_t u64;
    double d;
    uint32_t len;
    uint8_t *w;
    switch (t) {
    case BSON_TYPE_INT32:
        key_int64 (out, (int32_t) le32 (v));
        return true;
    case BSON_TYPE_INT64:
        memcpy (&u64, v, 8);
        key_int64 (out, (int64_t) BSON_UINT64_FROM_LE (u64));
        return true;
    case BSON_TYPE_DOUBLE:
        memcpy (&d, v, 8);
        key_double (out, BSON_DOUBLE_FROM_LE (d));
        return true;
    case BSON_TYPE_UTF8:
    case BSON_TYPE_SYMBOL:
        /* bson_iter_utf8's length: the bytes before the final NUL. */
        len = le32 (v);
        len = len ? len - 1 : 0;
        w = put_room (out, 5 + (size_t) len);
        w[0] = KEY_STRING;
        store_be (w + 1, len, 4);
        memcpy (w + 5, v + 4, len);
        return true;
    case BSON_TYPE_OID:
        w = put_room (out, 13);
        w[0] = KEY_OID;
        memcpy (w + 1, v, 12);
        return true;
    case BSON_TYPE_BINARY:
        /* The old subtype (2) repeats the length inside: its bytes follow
         * it, as bson_iter_binary gives them. */
        len = le32 (v);
        put_u8 (out, KEY_BINARY);
        put_u8 (out, v[4]);
        if (v[4] == BSON_SUBTYPE_BINARY_DEPRECATED)
            put_bytes (out, v + 9, len - 4);
        else
            put_bytes (out, v + 5, len);
        return true;
    default:
        return false;
    }
}

/* ---- Hash ----------------------------------------------------------------
 * Eight bytes at a time (little-endian, so the hash is the same on every
 * machine): each word is scrambled by multiply-rotate-multiply and folded
 * into the state, which is rotated and multiplied in turn (the round of
 * xxHash64); the length goes in first so that keys differing only by
 * trailing zero bytes differ; a final avalanche (MurmurHash3's fmix64)
 * spreads every input bit over every output bit. */
#define H_P1 UINT64_C (0x9e3779b97f4a7c15)
#define H_P2 UINT64_C (0xc2b2ae3d27d4eb4f)
#define H_P3 UINT64_C (0x165667b19e3779f9)

static inline uint64_t
rotl64 (uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static inline uint64_t
hash_round (uint64_t h, uint64_t k)
{
    k *= H_P2;
    k = rotl64 (k, 31);
    k *= H_P1;
    h ^= k;
    return rotl64 (h, 27) * H_P1 + H_P3;
}

uint64_t
rm_key_hash (const uint8_t *key, size_t len)
{
    uint64_t h = H_P3 ^ (uint64_t) len * H_P1;
    uint64_t k;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        memcpy (&k, key + i, 8);
        h = hash_round (h, BSON_UINT64_FROM_LE (k));
    }
    if (i < len) {
        k = 0;
        for (size_t j = 0; i + j < len; j++)
            k |= (uint64_t) key[i + j] << (8 * j);
        h = hash_round (h, k);
    }
    h ^= h >> 33;
    h *= UINT64_C (0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C (0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

const char *
rm_value_type_name (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_DOUBLE: return "double";
    case BSON_TYPE_UTF8: return "string";
    case BSON_TYPE_DOCUMENT: return "object";
    case BSON_TYPE_ARRAY: return "array";
    case BSON_TYPE_BINARY: return "binData";
    case BSON_TYPE_UNDEFINED: return "undefined";
    case BSON_TYPE_OID: return "objectId";
    case BSON_TYPE_BOOL: return "bool";
    case BSON_TYPE_DATE_TIME: return "date";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_REGEX: return "regex";
    case BSON_TYPE_DBPOINTER: return "dbPointer";
    case BSON_TYPE_CODE: return "javascript";
    case BSON_TYPE_SYMBOL: return "symbol";
    case BSON_TYPE_CODEWSCOPE: return "javascriptWithScope";
    case BSON_TYPE_INT32: return "int";
    case BSON_TYPE_TIMESTAMP: return "timestamp";
    case BSON_TYPE_INT64: return "long";
    case BSON_TYPE_DECIMAL128: return "decimal";
    case BSON_TYPE_MINKEY: return "minKey";
    case BSON_TYPE_MAXKEY: return "maxKey";
    default: return "unknown";
    }
}

static int
hex_digit (char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool
rm_resume_token_time (const bson_t *token, uint32_t *t, uint32_t *i)
{
    bson_iter_t it;
    const char *hex;
    uint32_t len;
    uint64_t ts = 0;

    if (!token || !bson_iter_init_find (&it, token, "_data") || !BSON_ITER_HOLDS_UTF8 (&it))
        return false;
    hex = bson_iter_utf8 (&it, &len);
    /* KeyString: the type byte of a Timestamp (130), then its 8 bytes. */
    if (len < 18 || hex_digit (hex[0]) != 8 || hex_digit (hex[1]) != 2)
        return false;
    for (int k = 2; k < 18; k++) {
        int d = hex_digit (hex[k]);
        if (d < 0)
            return false;
        ts = ts << 4 | (uint64_t) d;
    }
    *t = (uint32_t) (ts >> 32);
    *i = (uint32_t) ts;
    return true;
}

bool
rm_iter_is_number (const bson_iter_t *it)
{
    bson_type_t t = bson_iter_type (it);
    return t == BSON_TYPE_INT32 || t == BSON_TYPE_INT64 || t == BSON_TYPE_DOUBLE ||
           t == BSON_TYPE_DECIMAL128;
}

bool
rm_iter_is_nan (const bson_iter_t *it)
{
    if (!it)
        return false;
    if (BSON_ITER_HOLDS_DOUBLE (it))
        return isnan (bson_iter_double (it));
    if (BSON_ITER_HOLDS_DECIMAL128 (it)) {
        bson_decimal128_t d;
        rm_dec_t x;
        bson_iter_decimal128 (it, &d);
        rm_dec_unpack (&d, &x);
        return x.kind == RM_DEC_NAN;
    }
    return false;
}
