/* rm_bson_check: every fixture document is accepted; one hand-made bad
 * document per rule gives its exact reason and offset; and the verdict on
 * hundreds of thousands of mutated and random documents equals libbson's,
 * except for the deliberate differences below.
 *
 * Differences from bson_validate (BSON_VALIDATE_UTF8 |
 * BSON_VALIDATE_UTF8_ALLOW_NULL) of the installed libbson 1.23, every one a
 * document libbson accepts and rm_bson_check rejects (none the other way):
 *
 *   GAP_UTF8      invalid UTF-8 in a string, code, symbol, regex pattern,
 *                 DBPointer namespace or code-with-scope code: libbson's
 *                 visitor stops at it without recording an error (fixed in
 *                 libbson 2.1), so the rest of that document goes unchecked.
 *   GAP_OVERLONG  C0 80, the overlong form of U+0000, in such a value:
 *                 libbson's UTF-8 check takes it for a NUL when NULs are
 *                 allowed; it is not UTF-8 (RFC 3629), so we reject it.
 *   GAP_HEADER    a nested document, array or scope whose length is below
 *                 5 or that does not end with 0x00: libbson skips it.
 *   GAP_AFTER_CWS a fault after a valid code-with-scope in the same
 *                 document: libbson's visitor returns "stop" on success.
 *   GAP_CWS_NUL   a code-with-scope's code not ending with 0x00: libbson
 *                 never checks that byte.
 *   GAP_REGEX_OPT invalid UTF-8 in regex options: libbson checks only the
 *                 pattern.
 *   GAP_DEPTH     more than 500 levels of nesting below the top-level
 *                 document: libbson 1.23 has no bound (it recurses); 2.x
 *                 has the same 500, the depth of mongo-tools'
 *                 deep_nested.bson.
 *
 * The differential test checks each verdict against a strict reference
 * built on libbson's own element walk (bson_iter_next, which does the
 * length and type checks) plus the checks above; the reference also says
 * which gap explains a difference from bson_validate, and a difference
 * without one fails. The exceptions are also shown one by one in
 * test_libbson_differences. */
#include <bson/bson.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/bsoncheck.h"
#include "test.h"

#define FIXTURES T_FIXTURES "mongo-tools"
#define BD FIXTURES "/bsondump/testdata/"
#define VFLAGS (BSON_VALIDATE_UTF8 | BSON_VALIDATE_UTF8_ALLOW_NULL)
#define MAX_DEPTH 500

enum {
    GAP_UTF8 = 1 << 0,
    GAP_OVERLONG = 1 << 1,
    GAP_HEADER = 1 << 2,
    GAP_AFTER_CWS = 1 << 3,
    GAP_CWS_NUL = 1 << 4,
    GAP_REGEX_OPT = 1 << 5,
    GAP_DEPTH = 1 << 6,
    N_GAPS = 7
};
static const char *gap_names[N_GAPS] = {"utf8",    "overlong-nul", "header", "after-cws",
                                        "cws-nul", "regex-options", "depth"};

/* ---------------------------------------------------------------------
 * The strict reference */

/* Text of a string-like value, NULs allowed. */
static bool
ref_text (const char *s, size_t n, unsigned *gaps)
{
    if (!bson_utf8_validate (s, n, true)) {
        *gaps |= GAP_UTF8;
        return false;
    }
    /* Valid for libbson and holding 0xC0: that can only be C0 80. */
    if (memchr (s, 0xC0, n)) {
        *gaps |= GAP_OVERLONG;
        return false;
    }
    return true;
}

static bool ref_doc (const uint8_t *data, size_t len, int depth, unsigned *gaps);

static bool
ref_sub (const uint8_t *data, uint32_t len, int depth, unsigned *gaps)
{
    bson_t b;
    if (!bson_init_static (&b, data, len)) {
        *gaps |= GAP_HEADER;
        return false;
    }
    if (depth + 1 > MAX_DEPTH) {
        *gaps |= GAP_DEPTH;
        return false;
    }
    return ref_doc (data, len, depth + 1, gaps);
}

/* The verdict of a strict validator; *gaps gets the reasons libbson 1.23
 * would miss the first fault found. */
static bool
ref_doc (const uint8_t *data, size_t len, int depth, unsigned *gaps)
{
    bson_t b;
    bson_iter_t it;
    bool ok = true, after_cws = false;

    if (!bson_init_static (&b, data, len) || !bson_iter_init (&it, &b))
        return false;
    while (ok && bson_iter_next (&it)) {
        const char *key = bson_iter_key (&it), *s, *opts;
        const uint8_t *sub;
        const bson_oid_t *oid;
        uint32_t n, subn;

        if (!bson_utf8_validate (key, strlen (key), false)) {
            ok = false;
            break;
        }
        switch (bson_iter_type (&it)) {
        case BSON_TYPE_UTF8:
            s = bson_iter_utf8 (&it, &n);
            ok = ref_text (s, n, gaps);
            break;
        case BSON_TYPE_CODE:
            s = bson_iter_code (&it, &n);
            ok = ref_text (s, n, gaps);
            break;
        case BSON_TYPE_SYMBOL:
            s = bson_iter_symbol (&it, &n);
            ok = ref_text (s, n, gaps);
            break;
        case BSON_TYPE_DBPOINTER:
            bson_iter_dbpointer (&it, &n, &s, &oid);
            ok = ref_text (s, n, gaps);
            break;
        case BSON_TYPE_REGEX:
            s = bson_iter_regex (&it, &opts);
            ok = ref_text (s, strlen (s), gaps);
            if (ok && !bson_utf8_validate (opts, strlen (opts), false)) {
                *gaps |= GAP_REGEX_OPT;
                ok = false;
            }
            break;
        case BSON_TYPE_DOCUMENT:
            bson_iter_document (&it, &subn, &sub);
            ok = ref_sub (sub, subn, depth, gaps);
            break;
        case BSON_TYPE_ARRAY:
            bson_iter_array (&it, &subn, &sub);
            ok = ref_sub (sub, subn, depth, gaps);
            break;
        case BSON_TYPE_CODEWSCOPE:
            s = bson_iter_codewscope (&it, &n, &subn, &sub);
            if (s[n] != '\0') {
                *gaps |= GAP_CWS_NUL;
                ok = false;
            } else {
                ok = ref_text (s, n, gaps) && ref_sub (sub, subn, depth, gaps);
            }
            after_cws |= ok;
            break;
        default:
            break;
        }
    }
    /* bson_iter_next also ends on corrupt input, with err_off set. */
    if (ok && it.err_off)
        ok = false;
    if (!ok && after_cws)
        *gaps |= GAP_AFTER_CWS;
    return ok;
}

static bool
libbson_ok (const uint8_t *doc, size_t len)
{
    bson_t b;
    size_t off = 0;
    return bson_init_static (&b, doc, len) && bson_validate (&b, VFLAGS, &off);
}

/* ---------------------------------------------------------------------
 * Helpers */

static uint64_t rng_state;

static uint64_t
rng (void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static size_t
rnd (size_t n)
{
    return n ? (size_t) (rng () % n) : 0;
}

static uint8_t *
slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    uint8_t *p;
    long n;
    if (!f)
        return NULL;
    fseek (f, 0, SEEK_END);
    n = ftell (f);
    fseek (f, 0, SEEK_SET);
    p = malloc ((size_t) n + 1);
    if (fread (p, 1, (size_t) n, f) != (size_t) n) {
        free (p);
        p = NULL;
    }
    fclose (f);
    *len = (size_t) n;
    return p;
}

static void
put32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) v, p[1] = (uint8_t) (v >> 8), p[2] = (uint8_t) (v >> 16),
    p[3] = (uint8_t) (v >> 24);
}

static uint32_t
get32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
           (uint32_t) p[3] << 24;
}

/* The reason must be safe to print: printable ASCII or valid UTF-8. */
static bool
printable (const char *s)
{
    for (const char *c = s; *c; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7F)
            return false;
    return *s && bson_utf8_validate (s, strlen (s), false);
}

/* Hand-made documents: AUTO stands for the length of the whole literal. */
#define AUTO "\xEE\xEE\xEE\xEE"

static uint8_t *
lit (const char *bytes, size_t len)
{
    uint8_t *d = malloc (len ? len : 1);
    memcpy (d, bytes, len);
    if (len >= 4 && memcmp (d, AUTO, 4) == 0)
        put32 (d, (uint32_t) len);
    return d;
}

static int
expect_fault (const char *bytes, size_t len, size_t want_off, const char *want)
{
    rm_bson_fault_t f;
    uint8_t *d = lit (bytes, len);
    int before = t_fail_checks;
    bool ok = rm_bson_check (d, len, &f);

    T_CHECK (!ok);
    if (!ok) {
        T_CHECK_STR (f.reason, want);
        T_CHECK (f.offset == want_off);
        if (f.offset != want_off)
            fprintf (stderr, "  \"%s\": offset %zu, want %zu\n", want, f.offset, want_off);
    }
    free (d);
    return t_fail_checks - before;
}

/* ---------------------------------------------------------------------
 * Fixtures */

typedef struct {
    char path[512];
} path_t;

static path_t *fixture_paths;
static size_t n_fixture_paths;

static int
collect (const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    size_t n = strlen (path);
    if (type == FTW_F && n > 5 && strcmp (path + n - 5, ".bson") == 0) {
        fixture_paths = realloc (fixture_paths, (n_fixture_paths + 1) * sizeof *fixture_paths);
        snprintf (fixture_paths[n_fixture_paths++].path, sizeof (path_t), "%s", path);
    }
    return 0;
}

static int
cmp_paths (const void *a, const void *b)
{
    return strcmp (((const path_t *) a)->path, ((const path_t *) b)->path);
}

/* The frames of the fixture documents that are known bad, by file name and
 * index: the first documents of bad_type.bson and bad_cstring.bson. */
static bool
known_bad (const char *path, size_t index)
{
    return index == 0 && (strstr (path, "/bsondump/testdata/bad_type.bson") ||
                          strstr (path, "/bsondump/testdata/bad_cstring.bson"));
}

/* Valid documents for mutation, collected on the way. */
typedef struct {
    uint8_t *p;
    size_t n;
} buf_t;

static buf_t seeds[512];
static size_t n_seeds;

static void
add_seed (const uint8_t *p, size_t n)
{
    if (n_seeds < sizeof seeds / sizeof seeds[0] && n <= 4096) {
        seeds[n_seeds].p = malloc (n);
        memcpy (seeds[n_seeds].p, p, n);
        seeds[n_seeds++].n = n;
    }
}

/* Every document of every .bson file of mongo-tools' fixtures (real
 * mongodump and bsondump output, two of them deliberately bad) and of the
 * sample dump, frame by frame. */
static void
test_fixture_documents (void)
{
    size_t files = 0, docs = 0, bytes = 0, rejected = 0;

    nftw (FIXTURES, collect, 16, FTW_PHYS);
    nftw ("dumps/sample", collect, 16, FTW_PHYS);
    T_CHECK (n_fixture_paths > 50);
    qsort (fixture_paths, n_fixture_paths, sizeof *fixture_paths, cmp_paths);
    for (size_t i = 0; i < n_fixture_paths; i++) {
        const char *path = fixture_paths[i].path;
        size_t len, off = 0, index = 0, taken = 0;
        uint8_t *data = slurp (path, &len);
        T_CHECK (data != NULL);
        if (!data)
            continue;
        files++;
        /* Frame by frame: an int32 length, up to the first impossible one. */
        for (; len - off >= 5; off += get32 (data + off), index++) {
            uint32_t n = get32 (data + off);
            rm_bson_fault_t f;
            unsigned gaps = 0;
            bool ok, ref;
            if (n < 5 || n > len - off)
                break;
            ok = rm_bson_check (data + off, n, &f);
            ref = ref_doc (data + off, n, 0, &gaps);
            T_CHECK (ok == ref);
            T_CHECK (ok == libbson_ok (data + off, n));
            if (ok == known_bad (path, index)) {
                T_CHECK (!"fixture verdict");
                fprintf (stderr, "  %s document %zu: %s\n", path, index,
                         ok ? "accepted" : f.reason);
            }
            rejected += !ok;
            docs++;
            bytes += n;
            /* A few documents of every file seed the mutation test. */
            if (ok && taken < 4 && (index < 2 || rnd (64) == 0))
                add_seed (data + off, n), taken++;
        }
        free (data);
    }
    printf ("  %zu fixture files, %zu documents (%zu bytes), %zu rejected\n", files, docs,
            bytes, rejected);
    T_CHECK (rejected == 2);
    T_CHECK (docs > 6000);
}

static void
test_bad_fixtures (void)
{
    size_t len;
    rm_bson_fault_t f;
    uint8_t *d = slurp (BD "bad_type.bson", &len);

    /* The int64 "a" at byte 21 has its type byte replaced by 0xaa. */
    T_CHECK (d != NULL && len >= 82 && get32 (d) == 82);
    if (d) {
        T_CHECK (!rm_bson_check (d, 82, &f));
        T_CHECK_STR (f.reason, "unknown element type 0xaa for field \"a\"");
        T_CHECK (f.offset == 21);
        free (d);
    }
    /* The string element at byte 32: its key "b" runs on over what was its
     * 0x00 (now 0x01) and the first byte of the length, so the length is
     * read from byte 37: 00 00 49 20, the start of "I am a string". */
    d = slurp (BD "bad_cstring.bson", &len);
    T_CHECK (d != NULL && len >= 82 && get32 (d) == 82);
    if (d) {
        T_CHECK (!rm_bson_check (d, 82, &f));
        T_CHECK_STR (f.reason, "string length 541655040 for field \"b\\x01\\x0e\" runs past "
                               "the end of its document");
        T_CHECK (f.offset == 37);
        free (d);
    }
}

/* ---------------------------------------------------------------------
 * One bad document per rule */

typedef struct {
    const char *bytes;
    size_t len;
    size_t off;
    const char *reason;
} bad_t;

#define BAD(lit_, off_, reason_) {lit_, sizeof lit_ - 1, off_, reason_}

/* A valid code with scope { code "x", scope {} }: 15 bytes. */
#define CWS "\x0f\x00\x00\x00" "\x02\x00\x00\x00" "x\0" "\x05\x00\x00\x00\0"

static const bad_t bad_docs[] = {
    /* The frame */
    BAD ("\x04\x00\x00\x00", 0, "document of 4 bytes is shorter than 5"),
    BAD ("\x04\x00\x00\x00\x00", 0, "document length 4 is below 5"),
    BAD ("\xff\xff\xff\xff\x00", 0, "document length -1 is below 5"),
    BAD ("\x06\x00\x00\x00\x00", 0, "document length 6 does not match the 5 bytes given"),
    BAD ("\x05\x00\x00\x00\x01", 4, "document does not end with 0x00"),
    BAD (AUTO "\x00" "\x0a" "a\0" "\0", 4, "0x00 end marker before the end of the document"),
    BAD (AUTO "\x03" "d\0" "\x08\x00\x00\x00" "\x00\x0a\x00\x00" "\0", 11,
         "0x00 end marker before the end of document \"d\""),
    BAD (AUTO "\x04" "a\0" "\x07\x00\x00\x00" "\x00\x00\x00" "\0", 11,
         "0x00 end marker before the end of array \"a\""),
    /* Type bytes and keys */
    BAD (AUTO "\x14" "a\0" "\0", 4, "unknown element type 0x14 for field \"a\""),
    BAD (AUTO "\x80" "a\0" "\0", 4, "unknown element type 0x80 for field \"a\""),
    BAD (AUTO "\x20" "abc" "\0", 4, "unknown element type 0x20"),
    BAD (AUTO "\x03" "d\0" "\x08\x00\x00\x00" "\x15" "ab" "\0" "\0", 11,
         "unknown element type 0x15 in \"d\""),
    BAD (AUTO "\x0a" "abc" "\0", 4, "field name not terminated"),
    BAD (AUTO "\x03" "d\0" "\x08\x00\x00\x00" "\x0a" "ab" "\0" "\0", 11,
         "field name not terminated in \"d\""),
    BAD (AUTO "\x0a" "a\xff" "\0" "\0", 6, "invalid UTF-8 in field name \"a\\xff\""),
    BAD (AUTO "\x0a" "a\xc0\x80" "\0" "\0", 6, "invalid UTF-8 in field name \"a\\xc0\\x80\""),
    /* Fixed sizes */
    BAD (AUTO "\x01" "x\0" "\x00\x00\x00\x00" "\0", 7,
         "double value of field \"x\" runs past the end of its document"),
    BAD (AUTO "\x07" "_id\0" "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b" "\0", 9,
         "ObjectId value of field \"_id\" runs past the end of its document"),
    BAD (AUTO "\x04" "a\0" "\x0a\x00\x00\x00" "\x10" "0\0" "\x01\x00" "\0" "\0", 14,
         "int32 value of field \"a.0\" runs past the end of its array"),
    BAD (AUTO "\x13" "d\0" "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" "\0",
         7, "decimal128 value of field \"d\" runs past the end of its document"),
    BAD (AUTO "\x08" "b\0" "\0", 7, "bool value of field \"b\" runs past the end of its document"),
    BAD (AUTO "\x08" "b\0" "\x02" "\0", 7, "bool value 0x02 of field \"b\" is not 0x00 or 0x01"),
    /* Strings */
    BAD (AUTO "\x02" "s\0" "\x01\x00" "\0", 7,
         "string value of field \"s\" runs past the end of its document"),
    BAD (AUTO "\x02" "s\0" "\x00\x00\x00\x00" "\0", 7,
         "string length 0 for field \"s\" is below 1"),
    BAD (AUTO "\x02" "s\0" "\xfe\xff\xff\xff" "\0", 7,
         "string length -2 for field \"s\" is below 1"),
    BAD (AUTO "\x02" "b\0" "\xe8\x03\x00\x00" "ab\0" "\0", 7,
         "string length 1000 for field \"b\" runs past the end of its document"),
    BAD (AUTO "\x02" "s\0" "\x04\x00\x00\x00" "abc" "\0", 7,
         "string length 4 for field \"s\" runs past the end of its document"),
    BAD (AUTO "\x02" "s\0" "\x02\x00\x00\x00" "ab" "\0", 12,
         "string of field \"s\" does not end with 0x00"),
    BAD (AUTO "\x02" "name\0" "\x04\x00\x00\x00" "a\xc3(" "\0" "\0", 15,
         "invalid UTF-8 in the value of field \"name\""),
    BAD (AUTO "\x0d" "c\0" "\x04\x00\x00\x00" "\xed\xa0\x80" "\0" "\0", 11,
         "invalid UTF-8 in the code of field \"c\""),
    BAD (AUTO "\x0e" "y\0" "\x05\x00\x00\x00" "\xf4\x90\x80\x80" "\0" "\0", 11,
         "invalid UTF-8 in the symbol of field \"y\""),
    BAD (AUTO "\x0d" "c\0" "\x00\x00\x00\x00" "\0", 7, "code length 0 for field \"c\" is below 1"),
    /* Nested documents and arrays */
    BAD (AUTO "\x03" "sub\0" "\x0e\x00\x00\x00" "\x03" "sub\0" "\x03\x00\x00\x00" "\0" "\0", 18,
         "nested document \"sub.sub\" length 3 is below 5"),
    BAD (AUTO "\x03" "d\0" "\x10\x00\x00\x00" "\0" "\0", 7,
         "nested document \"d\" length 16 runs past the end of its document"),
    BAD (AUTO "\x03" "d\0" "\x05\x00\x00\x00" "\x01" "\0", 11,
         "nested document \"d\" does not end with 0x00"),
    BAD (AUTO "\x03" "d\0" "\x05\x00" "\0", 7,
         "document value of field \"d\" runs past the end of its document"),
    BAD (AUTO "\x04" "a\0" "\x04\x00\x00\x00" "\0" "\0", 7, "array \"a\" length 4 is below 5"),
    BAD (AUTO "\x04" "a\0" "\x0c\x00\x00\x00" "\x04" "0\0" "\x06\x00\x00\x00" "\0" "\0", 14,
         "array \"a.0\" length 6 runs past the end of its array"),
    BAD (AUTO "\x04" "a\0" "\x05\x00\x00\x00" "\x07" "\0", 11, "array \"a\" does not end with 0x00"),
    /* Binary */
    BAD (AUTO "\x05" "b\0" "\x00\x00\x00\x00" "\0", 7,
         "binary value of field \"b\" runs past the end of its document"),
    BAD (AUTO "\x05" "b\0" "\xff\xff\xff\xff" "\x00" "\0", 7,
         "binary length -1 for field \"b\" is negative"),
    BAD (AUTO "\x05" "b\0" "\x02\x00\x00\x00" "\x00" "x" "\0", 7,
         "binary length 2 for field \"b\" runs past the end of its document"),
    BAD (AUTO "\x05" "b\0" "\x03\x00\x00\x00" "\x02" "abc" "\0", 7,
         "old binary (subtype 2) length 3 for field \"b\" is below 4"),
    BAD (AUTO "\x05" "b\0" "\x06\x00\x00\x00" "\x02" "\x03\x00\x00\x00" "xy" "\0", 12,
         "old binary (subtype 2) inner length 3 for field \"b\" is not 2"),
    /* Regex */
    BAD (AUTO "\x0b" "r\0" "abc" "\0", 7,
         "regex pattern of field \"r\" runs past the end of its document"),
    BAD (AUTO "\x0b" "r\0" "a\0" "i" "\0", 9,
         "regex options of field \"r\" runs past the end of its document"),
    BAD (AUTO "\x0b" "r\0" "\xe0\x80\x80" "\0" "\0" "\0", 7,
         "invalid UTF-8 in the regex of field \"r\""),
    /* DBPointer */
    BAD (AUTO "\x0c" "p\0" "\x02\x00\x00\x00" "n\0" "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"
         "\0", 13, "DBPointer value of field \"p\" runs past the end of its document"),
    BAD (AUTO "\x0c" "p\0" "\x00\x00\x00\x00" "\0", 7,
         "DBPointer namespace length 0 for field \"p\" is below 1"),
    BAD (AUTO "\x0c" "p\0" "\x03\x00\x00\x00" "\xc0\xaf\0" "\x01\x02\x03\x04\x05\x06\x07\x08\x09"
         "\x0a\x0b\x0c" "\0", 11, "invalid UTF-8 in the DBPointer namespace of field \"p\""),
    /* Code with scope */
    BAD (AUTO "\x0f" "c\0" "\x0d\x00\x00\x00" "\0", 7,
         "code with scope length 13 for field \"c\" is below 14"),
    BAD (AUTO "\x0f" "c\0" "\x10\x00\x00\x00" "\x02\x00\x00\x00" "x\0" "\x05\x00\x00\x00\0" "\0", 7,
         "code with scope length 16 for field \"c\" runs past the end of its document"),
    BAD (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x00\x00\x00\x00" "x\0" "\x05\x00\x00\x00\0" "\0", 11,
         "code length 0 for field \"c\" is below 1"),
    BAD (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x03\x00\x00\x00" "x\0" "\x05\x00\x00\x00\0" "\0", 11,
         "code length 3 for field \"c\" runs past the end of its code with scope"),
    BAD (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x02\x00\x00\x00" "xy" "\x05\x00\x00\x00\0" "\0", 16,
         "code of field \"c\" does not end with 0x00"),
    BAD (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x02\x00\x00\x00" "\xff\0" "\x05\x00\x00\x00\0" "\0",
         15, "invalid UTF-8 in the code of field \"c\""),
    BAD (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x02\x00\x00\x00" "x\0" "\x06\x00\x00\x00\0" "\0", 17,
         "scope length 6 for field \"c\" does not match the 5 bytes left in its code with scope"),
    BAD (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x02\x00\x00\x00" "x\0" "\x05\x00\x00\x00\x01" "\0",
         21, "scope of field \"c\" does not end with 0x00"),
    BAD (AUTO "\x0f" "c\0" "\x13\x00\x00\x00" "\x02\x00\x00\x00" "x\0" "\x09\x00\x00\x00"
         "\x08" "k\0" "\x05" "\0" "\0", 24, "bool value 0x05 of field \"c.k\" is not 0x00 or 0x01"),
    /* Deep inside: the path */
    BAD (AUTO "\x03" "a\0" "\x1a\x00\x00\x00" "\x04" "b\0" "\x12\x00\x00\x00" "\x03" "2\0"
         "\x0a\x00\x00\x00" "\x02" "c\0" "\x00\x00" "\0" "\0" "\0" "\0", 28,
         "string value of field \"a.b.2.c\" runs past the end of its document"),
    BAD (AUTO "\x0a" "say \"hi\"\\\x01\x7f\xc3\xa9\0" "\x08" "x\0" "\x09" "\0", 22,
         "bool value 0x09 of field \"x\" is not 0x00 or 0x01"),
    BAD (AUTO "\x08" "say \"hi\"\\\x01\x7f\xc3\xa9\0" "\x09" "\0", 19,
         "bool value 0x09 of field \"say \\\"hi\\\"\\\\\\x01\\x7fé\" is not 0x00 or 0x01"),
};

static void
test_bad_documents (void)
{
    for (size_t i = 0; i < sizeof bad_docs / sizeof bad_docs[0]; i++) {
        const bad_t *b = &bad_docs[i];
        uint8_t *d = lit (b->bytes, b->len);
        unsigned gaps = 0;
        if (expect_fault (b->bytes, b->len, b->off, b->reason))
            fprintf (stderr, "  (row %zu)\n", i);
        /* The reference agrees that each is bad. */
        T_CHECK (!ref_doc (d, b->len, 0, &gaps));
        free (d);
    }
}

/* Valid documents with every type, the deprecated ones included, and the
 * corner cases the rules allow. */
static const bad_t good_docs[] = {
    {AUTO "\0", 5, 0, NULL},
    BAD (AUTO "\x0a" "\0" "\0", 0, NULL), /* empty key */
    BAD (AUTO "\x02" "s\0" "\x05\x00\x00\x00" "a\0b\0" "\0" "\0", 0, NULL), /* NULs in a string */
    BAD (AUTO "\x02" "s\0" "\x01\x00\x00\x00" "\0" "\0", 0, NULL),            /* "" */
    BAD (AUTO "\x02" "\xf0\x9f\x98\x80\0" "\x0b\x00\x00\x00" "\xe4\xb8\xad\xef\xbf\xbf\xf4\x8f\xbf\xbf"
         "\0" "\0", 0, NULL), /* U+1F600 key, U+4E2D U+FFFF U+10FFFF value */
    BAD (AUTO "\x06" "u\0" "\x0a" "n\0" "\x7f" "M\0" "\xff" "m\0" "\0", 0, NULL),
    BAD (AUTO "\x05" "b\0" "\x00\x00\x00\x00" "\x80" "\0", 0, NULL),
    BAD (AUTO "\x05" "b\0" "\x04\x00\x00\x00" "\x02" "\x00\x00\x00\x00" "\0", 0, NULL),
    BAD (AUTO "\x0b" "r\0" "\0" "\0" "\0", 0, NULL),
    BAD (AUTO "\x0b" "r\0" "^a\xc3\xa9\0" "imx\0" "\0", 0, NULL),
    BAD (AUTO "\x0c" "p\0" "\x02\x00\x00\x00" "n\0" "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"
         "\x0c" "\0", 0, NULL),
    BAD (AUTO "\x0f" "c\0" CWS "\0", 0, NULL),
    BAD (AUTO "\x0e" "y\0" "\x02\x00\x00\x00" "y\0" "\x0d" "c\0" "\x02\x00\x00\x00" "\0\0" "\0", 0, NULL),
    BAD (AUTO "\x08" "t\0" "\x01" "\x08" "f\0" "\x00" "\x03" "e\0" "\x05\x00\x00\x00\0" "\x04" "a\0"
         "\x05\x00\x00\x00\0" "\0", 0, NULL),
};

static void
test_good_documents (void)
{
    for (size_t i = 0; i < sizeof good_docs / sizeof good_docs[0]; i++) {
        const bad_t *g = &good_docs[i];
        uint8_t *d = lit (g->bytes, g->len);
        rm_bson_fault_t f;
        unsigned gaps = 0;
        bool ok = rm_bson_check (d, g->len, &f);
        T_CHECK (ok);
        if (!ok)
            fprintf (stderr, "  good row %zu: %s at %zu\n", i, f.reason, f.offset);
        T_CHECK (ref_doc (d, g->len, 0, &gaps));
        T_CHECK (libbson_ok (d, g->len));
        free (d);
    }
}

/* Sequences at the edges of UTF-8: valid, overlong, surrogates, above
 * U+10FFFF, bytes that never occur, truncated, cut by ASCII. */
static const struct {
    const char *s;
    bool valid;
} seqs[] = {
    {"\x7f", true},           {"\xc2\x80", true},         {"\xdf\xbf", true},
    {"\xe0\xa0\x80", true},   {"\xed\x9f\xbf", true},     {"\xee\x80\x80", true},
    {"\xef\xbf\xbf", true},   {"\xf0\x90\x80\x80", true}, {"\xf4\x8f\xbf\xbf", true},
    {"\xc0\x80", false},      {"\xc0\xaf", false},        {"\xc1\xbf", false},
    {"\xe0\x80\x80", false},  {"\xe0\x9f\xbf", false},    {"\xed\xa0\x80", false},
    {"\xed\xbf\xbf", false},  {"\xf0\x80\x80\x80", false}, {"\xf0\x8f\xbf\xbf", false},
    {"\xf4\x90\x80\x80", false}, {"\xf5\x80\x80\x80", false}, {"\xf8\x88\x80\x80\x80", false},
    {"\xfe", false},          {"\xff", false},            {"\x80", false},
    {"\xbf", false},          {"\xc2", false},            {"\xe0\xa0", false},
    {"\xf0\x90\x80", false},  {"\xc2\x41", false},        {"\xe1\x80\x41", false},
};

/* UTF-8 edge sequences inside a string value, against libbson's own
 * bson_utf8_validate (NULs allowed): the same verdict but for C0 80. */
static void
test_utf8_sequences (void)
{
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        /* at the start, in the middle and at the end of a long ASCII run,
         * so both the word-at-a-time path and the byte tail see it */
        for (size_t at = 0; at < 3; at++) {
            uint8_t doc[128];
            size_t n = strlen (seqs[i].s), pre = at == 0 ? 0 : at == 1 ? 37 : 61, post = 61 - pre;
            size_t sl = pre + n + post + 1, len = 4 + 3 + 4 + sl + 1;
            rm_bson_fault_t f;
            bool ok;
            put32 (doc, (uint32_t) len);
            memcpy (doc + 4, "\x02s\0", 3);
            put32 (doc + 7, (uint32_t) sl);
            memset (doc + 11, 'a', pre);
            memcpy (doc + 11 + pre, seqs[i].s, n);
            memset (doc + 11 + pre + n, 'z', post);
            doc[11 + sl - 1] = 0;
            doc[len - 1] = 0;
            ok = rm_bson_check (doc, len, &f);
            T_CHECK (ok == seqs[i].valid);
            if (ok != seqs[i].valid)
                fprintf (stderr, "  sequence %zu at %zu: %s\n", i, pre, ok ? "accepted" : f.reason);
            if (!ok) {
                T_CHECK_STR (f.reason, "invalid UTF-8 in the value of field \"s\"");
                T_CHECK (f.offset == 11 + pre);
            }
            /* libbson's UTF-8 check agrees, but for C0 80 */
            T_CHECK (bson_utf8_validate (seqs[i].s, n, true) == seqs[i].valid ||
                     memcmp (seqs[i].s, "\xc0\x80", 2) == 0);
            /* as a key */
            memcpy (doc + 11 + pre + n, "\0", 1);
            doc[4] = 0x0a;
            memmove (doc + 5, doc + 11, pre + n + 1);
            len = 5 + pre + n + 1 + 1;
            doc[len - 1] = 0;
            put32 (doc, (uint32_t) len);
            ok = rm_bson_check (doc, len, &f);
            T_CHECK (ok == seqs[i].valid);
            if (!ok)
                T_CHECK (f.offset == 5 + pre && strncmp (f.reason, "invalid UTF-8 in field name",
                                                         27) == 0);
        }
    }
}

/* ---------------------------------------------------------------------
 * Nesting and paths */

/* {a: {a: ... {} }} with levels documents below the top. */
static size_t
deep_doc (uint8_t *out, int levels, char type)
{
    size_t len = 5 + (size_t) levels * 8, o = 0;
    for (int i = 0; i < levels; i++) {
        put32 (out + o, (uint32_t) (len - o - (size_t) i));
        out[o + 4] = (uint8_t) type;
        out[o + 5] = type == 4 ? '0' : 'a';
        out[o + 6] = 0;
        o += 7;
    }
    put32 (out + o, 5);
    memset (out + o + 4, 0, 1 + (size_t) levels);
    return len;
}

static void
test_depth (void)
{
    static uint8_t doc[5 + 8 * 520];
    rm_bson_fault_t f;
    unsigned gaps = 0;
    size_t len = deep_doc (doc, MAX_DEPTH, 3);

    T_CHECK (rm_bson_check (doc, len, &f));
    T_CHECK (ref_doc (doc, len, 0, &gaps));
    len = deep_doc (doc, MAX_DEPTH + 1, 3);
    T_CHECK (!rm_bson_check (doc, len, &f));
    /* the path keeps its first key and as many of the last as fit: 57 */
    T_CHECK_STR (f.reason, "nesting deeper than 500 levels at field \"a...a.a.a.a.a.a.a.a.a.a.a."
                           "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a."
                           "a.a.a.a.a.a.a.a.a.a.a\"");
    T_CHECK (strlen (f.reason) == sizeof f.reason - 1);
    T_CHECK (f.offset == 4 + 500 * 7);
    T_CHECK (!ref_doc (doc, len, 0, &gaps) && (gaps & GAP_DEPTH));
    len = deep_doc (doc, 510, 4);
    T_CHECK (!rm_bson_check (doc, len, &f));
    T_CHECK (strncmp (f.reason, "nesting deeper than 500 levels at field \"0...0.0",
                      strlen ("nesting deeper than 500 levels at field \"0...0.0")) == 0);
}

static void
test_long_paths (void)
{
    uint8_t doc[4096];
    rm_bson_fault_t f;
    size_t o = 0;
    char key[300];

    /* {k*100: {b: [ {"\x01"*60: true-ish 0x07}]}} built by hand */
    memset (key, 'k', 100), key[100] = 0;
    o = 4;
    doc[o++] = 3;
    memcpy (doc + o, key, 101), o += 101;
    size_t l1 = o;
    o += 4;
    doc[o++] = 4;
    memcpy (doc + o, "b", 2), o += 2;
    size_t l2 = o;
    o += 4;
    doc[o++] = 3;
    memcpy (doc + o, "0", 2), o += 2;
    size_t l3 = o;
    o += 4;
    doc[o++] = 8;
    memset (doc + o, 1, 60), o += 60;
    doc[o++] = 0;
    size_t bad = o;
    doc[o++] = 7;
    doc[o++] = 0, put32 (doc + l3, (uint32_t) (o - l3));
    doc[o++] = 0, put32 (doc + l2, (uint32_t) (o - l2));
    doc[o++] = 0, put32 (doc + l1, (uint32_t) (o - l1));
    doc[o++] = 0, put32 (doc, (uint32_t) o);
    T_CHECK (!rm_bson_check (doc, o, &f));
    T_CHECK (f.offset == bad);
    T_CHECK_STR (f.reason,
                 "bool value 0x07 of field \"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk....b.0."
                 "\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01...\" is not 0x00 or 0x01");
    T_CHECK (strlen (f.reason) < sizeof f.reason);
    T_CHECK (printable (f.reason));

    /* A 1 MB key with a bad byte at its end: the reason stays short. */
    {
        size_t klen = 1 << 20, len = 4 + 1 + klen + 1 + 1;
        uint8_t *big = malloc (len);
        put32 (big, (uint32_t) len);
        big[4] = 0x0a;
        memset (big + 5, 'x', klen);
        big[5 + klen - 1] = 0xff;
        big[5 + klen] = 0;
        big[len - 1] = 0;
        T_CHECK (!rm_bson_check (big, len, &f));
        T_CHECK (f.offset == 5 + klen - 1);
        T_CHECK_STR (f.reason, "invalid UTF-8 in field name "
                               "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
        free (big);
    }
    /* No fault struct: just the verdict. */
    T_CHECK (!rm_bson_check ((const uint8_t *) "\x05\x00\x00\x00\x01", 5, NULL));
    T_CHECK (rm_bson_check ((const uint8_t *) "\x05\x00\x00\x00\x00", 5, NULL));
}

/* ---------------------------------------------------------------------
 * Differences from libbson, one by one */

typedef struct {
    const char *bytes;
    size_t len;
    unsigned gap;
    const char *reason;
} diff_t;

#define DIFF(lit_, gap_, reason_) {lit_, sizeof lit_ - 1, gap_, reason_}

static const diff_t diffs[] = {
    DIFF (AUTO "\x02" "s\0" "\x02\x00\x00\x00" "\xff\0" "\0", GAP_UTF8,
          "invalid UTF-8 in the value of field \"s\""),
    DIFF (AUTO "\x02" "s\0" "\x03\x00\x00\x00" "\xc0\x80\0" "\0", GAP_OVERLONG,
          "invalid UTF-8 in the value of field \"s\""),
    DIFF (AUTO "\x03" "d\0" "\x05\x00\x00\x00" "\x01" "\0", GAP_HEADER,
          "nested document \"d\" does not end with 0x00"),
    DIFF (AUTO "\x0f" "c\0" CWS "\x14" "z\0" "\0", GAP_AFTER_CWS,
          "unknown element type 0x14 for field \"z\""),
    DIFF (AUTO "\x0f" "c\0" "\x0f\x00\x00\x00" "\x02\x00\x00\x00" "xy" "\x05\x00\x00\x00\0" "\0",
          GAP_CWS_NUL, "code of field \"c\" does not end with 0x00"),
    DIFF (AUTO "\x0b" "r\0" "a\0" "\xff\0" "\0", GAP_REGEX_OPT,
          "invalid UTF-8 in the regex options of field \"r\""),
};

static void
test_libbson_differences (void)
{
    static uint8_t deep[5 + 8 * 510];
    size_t len;
    unsigned gaps;
    rm_bson_fault_t f;

    for (size_t i = 0; i < sizeof diffs / sizeof diffs[0]; i++) {
        uint8_t *d = lit (diffs[i].bytes, diffs[i].len);
        gaps = 0;
        T_CHECK (!rm_bson_check (d, diffs[i].len, &f));
        T_CHECK_STR (f.reason, diffs[i].reason);
        T_CHECK (!ref_doc (d, diffs[i].len, 0, &gaps) && gaps == diffs[i].gap);
        printf ("  libbson %s: %s\n", libbson_ok (d, diffs[i].len) ? "accepts" : "rejects",
                diffs[i].reason);
        free (d);
    }
    len = deep_doc (deep, MAX_DEPTH + 1, 3);
    gaps = 0;
    T_CHECK (!rm_bson_check (deep, len, &f));
    T_CHECK (!ref_doc (deep, len, 0, &gaps) && gaps == GAP_DEPTH);
    printf ("  libbson %s: %d levels of nesting\n", libbson_ok (deep, len) ? "accepts" : "rejects",
            MAX_DEPTH + 1);
}

/* ---------------------------------------------------------------------
 * Differential: mutated and random documents */

typedef struct {
    size_t cases, valid, differ, by_gap[N_GAPS], bad;
} tally_t;

/* The layout rm_bson_check_like keeps, from every document checked
 * before (test_differential_mutations makes it the seed's before each
 * mutation of it). */
static rm_bson_like_t like;
static size_t like_placed; /* documents it placed fields of */

/* The scans of every instruction set the machine has (the scalar ones
 * everywhere), and the check by the layout of the documents before, must
 * give rm_bson_check's verdict, reason and offset. */
static bool
same_on_every_isa (const uint8_t *d, size_t len, bool ok, const rm_bson_fault_t *f)
{
    bool same = true;
    rm_bson_fault_t h;
    uint32_t had = like.n;
    bool lo = rm_bson_check_like (&like, d, len, &h);
    if (had && len >= 5 && get32 (d) == len && (like.n == had || like.n == 0))
        like_placed++;
    if (lo != ok || (!ok && (h.offset != f->offset || strcmp (h.reason, f->reason) != 0))) {
        fprintf (stderr, "  by the layout: %s at %zu, default: %s at %zu\n", lo ? "valid" : h.reason,
                 lo ? 0 : h.offset, ok ? "valid" : f->reason, ok ? 0 : f->offset);
        same = false;
    }
    for (int isa = RM_BSON_ISA_SCALAR; isa <= RM_BSON_ISA_BEST; isa++) {
        rm_bson_fault_t g;
        bool o = rm_bson_check_isa (d, len, &g, (rm_bson_isa_t) isa);
        if (o != ok || (!ok && (g.offset != f->offset || strcmp (g.reason, f->reason) != 0))) {
            fprintf (stderr, "  isa %d: %s at %zu, default: %s at %zu\n", isa,
                     o ? "valid" : g.reason, o ? 0 : g.offset, ok ? "valid" : f->reason,
                     ok ? 0 : f->offset);
            same = false;
        }
    }
    return same;
}

static void
compare (const uint8_t *in, size_t len, tally_t *t)
{
    /* An exact copy, so that the sanitizers see any read past the end. */
    uint8_t *d = memcpy (malloc (len), in, len);
    rm_bson_fault_t f;
    unsigned gaps = 0;
    bool ok = rm_bson_check (d, len, &f);
    bool ref = ref_doc (d, len, 0, &gaps);
    bool lb = libbson_ok (d, len);
    bool fine = ok == ref && same_on_every_isa (d, len, ok, &f);

    t->cases++;
    t->valid += ok;
    if (!ok && (f.offset >= len || !printable (f.reason)))
        fine = false;
    if (ok != lb) {
        t->differ++;
        /* Only the listed gaps, and only one way. */
        if (ok || !gaps)
            fine = false;
        for (int g = 0; g < N_GAPS; g++)
            if (gaps & (1u << g))
                t->by_gap[g]++;
    }
    if (!fine && t->bad++ < 5) {
        fprintf (stderr, "  mismatch: rm %s, reference %s (gaps %#x), libbson %s; %zu bytes:",
                 ok ? "valid" : f.reason, ref ? "valid" : "invalid", gaps,
                 lb ? "valid" : "invalid", len);
        for (size_t i = 0; i < len && i < 256; i++)
            fprintf (stderr, " %02x", d[i]);
        fprintf (stderr, "\n");
    }
    free (d);
}

static void
report (const char *what, const tally_t *t)
{
    printf ("  %s: %zu cases, %zu valid, %zu differ from libbson (", what, t->cases, t->valid,
            t->differ);
    for (int g = 0, first = 1; g < N_GAPS; g++)
        if (t->by_gap[g])
            printf ("%s%s %zu", first ? "" : ", ", gap_names[g], t->by_gap[g]), first = 0;
    printf (")\n");
}

/* Offsets of the length fields of a valid document, for targeted
 * mutations. */
static size_t
length_fields (const uint8_t *doc, size_t len, size_t base, size_t *out, size_t n, size_t max)
{
    bson_t b;
    bson_iter_t it;
    if (n < max)
        out[n++] = base;
    if (!bson_init_static (&b, doc, len) || !bson_iter_init (&it, &b))
        return n;
    while (bson_iter_next (&it) && n < max) {
        const char *key = bson_iter_key (&it);
        size_t v = (size_t) ((const uint8_t *) key - doc) + strlen (key) + 1;
        uint32_t sn;
        const uint8_t *sub;
        switch (bson_iter_type (&it)) {
        case BSON_TYPE_UTF8:
        case BSON_TYPE_CODE:
        case BSON_TYPE_SYMBOL:
        case BSON_TYPE_DBPOINTER:
        case BSON_TYPE_BINARY:
            out[n++] = base + v;
            break;
        case BSON_TYPE_DOCUMENT:
        case BSON_TYPE_ARRAY:
            bson_iter_document (&it, &sn, &sub);
            if (!sub)
                bson_iter_array (&it, &sn, &sub);
            n = length_fields (sub, sn, base + v, out, n, max);
            break;
        case BSON_TYPE_CODEWSCOPE: {
            uint32_t cl, l;
            bson_iter_codewscope (&it, &cl, &sn, &sub);
            out[n++] = base + v;
            if (n < max)
                out[n++] = base + v + 4;
            l = (uint32_t) (sub - doc);
            n = length_fields (sub, sn, base + l, out, n, max);
            break;
        }
        default:
            break;
        }
    }
    return n;
}

/* Valid documents with long keys and long strings of ASCII and mixed
 * text, so that mutations land at every place of the scans' windows. */
static void
add_text_seeds (void)
{
    static const char *const chars[] = {"a", "b", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80"};
    char text[400], key[80];

    for (int d = 0; d < 24; d++) {
        bson_t b;
        bson_init (&b);
        for (int e = 0; e < 3; e++) {
            size_t n = 1 + rnd (d < 12 ? 140 : 330), kn = 1 + rnd (70), i = 0;
            bool ascii = rnd (2);
            while (i + 4 < n) {
                const char *c = chars[ascii ? rnd (2) : rnd (5)];
                memcpy (text + i, c, strlen (c)), i += strlen (c);
            }
            memset (key, 'k', kn), key[kn] = 0;
            key[rnd (kn)] = (char) ('0' + e);
            if (e == 2 && !ascii)
                memcpy (key + kn / 2 - (kn >= 2), "\xc3\xa9", kn >= 2 ? 2 : 0);
            bson_append_utf8 (&b, key, -1, text, (int) i);
        }
        add_seed (bson_get_data (&b), b.len);
        bson_destroy (&b);
    }
}

/* Valid documents with every type, built with libbson. */
static void
add_built_seeds (void)
{
    bson_t b, c, scope, arr;
    bson_oid_t oid;
    bson_decimal128_t dec = {0x1234, 0x3040000000000000ull};
    const uint8_t bin[] = {1, 2, 3, 0xff, 0};

    bson_oid_init_from_string (&oid, "5f1d7a6e2c1b4a3d9e8f7a6b");
    bson_init (&scope);
    BSON_APPEND_INT32 (&scope, "x", 1);
    BSON_APPEND_UTF8 (&scope, "s", "scope \xc3\xa9");
    for (int round = 0; round < 3; round++) {
        bson_init (&b);
        BSON_APPEND_DOUBLE (&b, "d", 1.5);
        bson_append_utf8 (&b, "s", 1, "h\xc3\xa9llo\0w\xe4\xb8\xad\xf0\x9f\x98\x80", 15);
        BSON_APPEND_DOCUMENT_BEGIN (&b, "sub", &c);
        BSON_APPEND_INT64 (&c, "n", 42);
        BSON_APPEND_ARRAY_BEGIN (&c, "arr", &arr);
        BSON_APPEND_UTF8 (&arr, "0", "x");
        BSON_APPEND_BOOL (&arr, "1", true);
        BSON_APPEND_NULL (&arr, "2");
        bson_append_array_end (&c, &arr);
        bson_append_document_end (&b, &c);
        BSON_APPEND_BINARY (&b, "bin", BSON_SUBTYPE_BINARY, bin, sizeof bin);
        BSON_APPEND_BINARY (&b, "old", BSON_SUBTYPE_BINARY_DEPRECATED, bin, sizeof bin);
        BSON_APPEND_UNDEFINED (&b, "u");
        BSON_APPEND_OID (&b, "_id", &oid);
        BSON_APPEND_BOOL (&b, "f", false);
        BSON_APPEND_DATE_TIME (&b, "dt", 1600000000000);
        BSON_APPEND_REGEX (&b, "re", "^a.*\xc3\xa9$", "imsx");
        BSON_APPEND_DBPOINTER (&b, "ptr", "db.coll", &oid);
        BSON_APPEND_CODE (&b, "code", "function () { return 1; }");
        BSON_APPEND_SYMBOL (&b, "sym", "symbol");
        BSON_APPEND_CODE_WITH_SCOPE (&b, "cws", "f(x)", &scope);
        if (round == 1)
            BSON_APPEND_CODE_WITH_SCOPE (&b, "cws2", "g", NULL);
        BSON_APPEND_INT32 (&b, "i", -7);
        BSON_APPEND_TIMESTAMP (&b, "ts", 1, 2);
        BSON_APPEND_DECIMAL128 (&b, "dec", &dec);
        BSON_APPEND_MINKEY (&b, "min");
        BSON_APPEND_MAXKEY (&b, "max");
        if (round == 2) {
            BSON_APPEND_DOCUMENT_BEGIN (&b, "empty", &c);
            bson_append_document_end (&b, &c);
            BSON_APPEND_UTF8 (&b, "\xe2\x82\xac key", "");
        }
        add_seed (bson_get_data (&b), b.len);
        bson_destroy (&b);
    }
    bson_destroy (&scope);
    add_text_seeds ();
}

static void
mutate (uint8_t *d, size_t *len, size_t cap, const size_t *lens, size_t n_lens)
{
    static const uint8_t special[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x0b, 0x0f,
                                      0x13, 0x14, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0,
                                      0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
    size_t n = *len, at;
    int ops = 1 + (int) rnd (3);

    for (int i = 0; i < ops && n > 0; i++) {
        at = rnd (n);
        switch (rnd (8)) {
        case 0:
            d[at] = (uint8_t) rng ();
            break;
        case 1:
            d[at] ^= (uint8_t) (1u << rnd (8));
            break;
        case 2:
            d[at] = special[rnd (sizeof special)];
            break;
        case 3:
            if (n < cap) {
                memmove (d + at + 1, d + at, n - at);
                d[at] = rnd (2) ? special[rnd (sizeof special)] : (uint8_t) rng ();
                n++;
            }
            break;
        case 4:
            memmove (d + at, d + at + 1, n - at - 1);
            n--;
            break;
        case 5:
        case 6:
        case 7: {
            /* A length field, or any 4 bytes, set to a boundary value. */
            uint32_t v, cur;
            if (n_lens && rnd (4))
                at = lens[rnd (n_lens)];
            if (at + 4 > n)
                break;
            cur = get32 (d + at);
            switch (rnd (10)) {
            case 0: v = 0; break;
            case 1: v = 4 + (uint32_t) rnd (2); break;
            case 2: v = 0xffffffffu - (uint32_t) rnd (2); break;
            case 3: v = 0x7fffffffu + (uint32_t) rnd (2); break;
            case 4: v = (uint32_t) (n - at) - (uint32_t) rnd (3); break;
            case 5: v = 13 + (uint32_t) rnd (3); break;
            default: v = cur + (uint32_t) rnd (5) - 2; break;
            }
            put32 (d + at, v);
            break;
        }
        }
    }
    /* Mostly keep the frame right, so the walk gets to the elements. */
    if (n >= 5 && rnd (16))
        put32 (d, (uint32_t) n);
    if (n >= 1 && rnd (16))
        d[n - 1] = 0;
    *len = n;
}

static void
test_differential_mutations (void)
{
    enum { CASES = 250000, CAP = 8192 };
    static uint8_t d[CAP];
    static size_t lens[256];
    tally_t t = {0};

    rng_state = 20240607;
    add_built_seeds ();
    T_CHECK (n_seeds > 100);
    for (size_t s = 0; s < n_seeds; s++)
        T_CHECK (rm_bson_check (seeds[s].p, seeds[s].n, NULL));
    for (size_t i = 0; i < CASES; i++) {
        const buf_t *s = &seeds[i % n_seeds];
        size_t len = s->n, n_lens = length_fields (s->p, s->n, 0, lens, 0, 256);
        /* The layout of the seed, for its mutation: the first fields
         * placed, the values changed under them. */
        rm_bson_like_init (&like);
        T_CHECK (rm_bson_check_like (&like, s->p, s->n, NULL));
        memcpy (d, s->p, len);
        mutate (d, &len, CAP, lens, n_lens);
        /* as bson_validate needs: after bson_init_static succeeds */
        if (len >= 5 && get32 (d) == len && d[len - 1] == 0)
            compare (d, len, &t);
        else
            T_CHECK (!rm_bson_check (d, len, NULL));
    }
    report ("mutations", &t);
    printf ("  %zu checked with a layout in place\n", like_placed);
    T_CHECK (t.bad == 0);
    T_CHECK (t.cases > 200000);
    T_CHECK (like_placed > 100000);
}

/* ---------------------------------------------------------------------
 * UTF-8 at the edges of the scans' windows and blocks */

/* Fills t[0, n) with text: ASCII (mode 0), or ASCII mixed with NULs and
 * 2-, 3- and 4-byte characters, a character cut short at the end. */
static void
filler (uint8_t *t, size_t n, int mode)
{
    static const char *const chars[] = {"a", "Z", "\0", "\xc3\xa9", "\xe4\xb8\xad",
                                        "\xef\xbf\xbf", "\xf0\x9f\x98\x80"};
    size_t i = 0;
    while (i < n) {
        size_t c = mode == 0 ? 0 : rnd (sizeof chars / sizeof chars[0]);
        size_t k = c == 2 ? 1 : strlen (chars[c]);
        memcpy (t + i, chars[c], k < n - i ? k : n - i);
        i += k;
    }
}

/* Puts text t[0, n) into a document as kind 0: a string value, 1: a key,
 * 2: a regex pattern, 3: a code-with-scope's code; then trail more bytes
 * (a null element with a long key), so that the text ends at every
 * distance from the document's end. Returns the offset of the text. */
static size_t
text_doc (uint8_t *doc, size_t *len, const uint8_t *t, size_t n, int kind, size_t trail)
{
    size_t o = 4, at;

    switch (kind) {
    case 0:
    case 3:
        doc[o++] = kind == 0 ? 0x02 : 0x0F;
        memcpy (doc + o, "s\0", 2), o += 2;
        if (kind == 3)
            put32 (doc + o, (uint32_t) (4 + 4 + n + 1 + 5)), o += 4;
        put32 (doc + o, (uint32_t) (n + 1)), o += 4;
        at = o;
        memcpy (doc + o, t, n), o += n;
        doc[o++] = 0;
        if (kind == 3)
            memcpy (doc + o, "\x05\0\0\0\0", 5), o += 5;
        break;
    case 1:
        doc[o++] = 0x0A;
        at = o;
        memcpy (doc + o, t, n), o += n;
        doc[o++] = 0;
        break;
    default:
        doc[o++] = 0x0B;
        memcpy (doc + o, "r\0", 2), o += 2;
        at = o;
        memcpy (doc + o, t, n), o += n;
        doc[o++] = 0;
        memcpy (doc + o, "i\0", 2), o += 2;
        break;
    }
    if (trail) {
        doc[o++] = 0x0A;
        memset (doc + o, 'k', trail - 1), o += trail - 1;
        doc[o++] = 0;
    }
    doc[o++] = 0;
    put32 (doc, (uint32_t) o);
    *len = o;
    return at;
}

/* Every sequence above at every position of texts whose lengths straddle
 * 16, 32, 64 and 128 bytes (cut short where it runs past the end), in
 * values, keys, regexes and code, in ASCII or in mixed text, at several
 * distances from the document's end: every instruction set's scans, the
 * strict reference and libbson give the same verdicts, and in ASCII a
 * bad sequence is reported where it starts. */
static void
test_utf8_boundaries (void)
{
    static const size_t lens[] = {1,  2,  3,  5,  7,  8,  9,  15, 16, 17, 18, 19, 20,
                                  30, 31, 32, 33, 34, 35, 47, 48, 49, 62, 63, 64, 65,
                                  66, 67, 95, 96, 97, 126, 127, 128, 129, 130, 131};
    static const size_t trails[] = {0, 3, 17, 40};
    static uint8_t doc[512];
    uint8_t t[160];
    tally_t tally = {0};
    size_t offsets = 0;

    rng_state = 1234;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li];
        for (size_t at = 0; at < n; at++) {
            for (size_t c = 0; c < 4 * sizeof seqs / sizeof seqs[0]; c++) {
                size_t i = c / 4, k = strlen (seqs[i].s), len, base;
                int kind = (int) (c % 4), mode = (int) ((at + c) % 3 == 0);
                size_t trail = trails[(at + i) % 4];
                filler (t, n, mode);
                memcpy (t + at, seqs[i].s, k < n - at ? k : n - at);
                base = text_doc (doc, &len, t, n, kind, trail);
                compare (doc, len, &tally);
                /* in ASCII, the first bad byte is the sequence's start */
                if (mode == 0 && !(seqs[i].valid && k <= n - at)) {
                    rm_bson_fault_t f;
                    T_CHECK (!rm_bson_check (doc, len, &f) && f.offset == base + at);
                    offsets++;
                }
            }
        }
    }
    report ("UTF-8 at window edges", &tally);
    printf ("  %zu bad-sequence offsets checked\n", offsets);
    T_CHECK (tally.bad == 0);
}

static void
test_differential_random (void)
{
    enum { CASES = 120000 };
    static const uint8_t types[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                                    0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x7f,
                                    0xff, 0x00};
    uint8_t d[96];
    tally_t t = {0};

    rng_state = 77;
    for (size_t i = 0; i < CASES; i++) {
        size_t len = 5 + rnd (rnd (2) ? 24 : 91);
        for (size_t k = 4; k < len - 1; k++) {
            switch (rnd (8)) {
            case 0: d[k] = types[rnd (sizeof types)]; break;
            case 1: d[k] = (uint8_t) rnd (16); break;
            case 2: d[k] = 0; break;
            case 3:
            case 4: d[k] = (uint8_t) ('a' + rnd (4)); break;
            case 5: d[k] = (uint8_t) (0x80 + rnd (0x80)); break;
            default: d[k] = (uint8_t) rng (); break;
            }
        }
        put32 (d, (uint32_t) len);
        d[len - 1] = 0;
        compare (d, len, &t);
    }
    report ("random", &t);
    T_CHECK (t.bad == 0);
}

int
main (void)
{
    rng_state = 1;
    T_RUN (test_fixture_documents);
    T_RUN (test_bad_fixtures);
    T_RUN (test_bad_documents);
    T_RUN (test_good_documents);
    T_RUN (test_utf8_sequences);
    T_RUN (test_depth);
    T_RUN (test_long_paths);
    T_RUN (test_libbson_differences);
    T_RUN (test_differential_mutations);
    T_RUN (test_differential_random);
    T_RUN (test_utf8_boundaries);
    return t_done ();
}
