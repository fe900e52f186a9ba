/* Collection-name escaping as mongodump does it (Go's url.QueryEscape, the
 * hashed form past 238 bytes), its reverse, and SHA-1. Expected hashed
 * stems come from mongodump's rule (escaped[:208] + "%24" + base64url(SHA-1),
 * computed independently) and from the real fixtures, read at run time from
 * tests/fixtures (tests run from the repository root). */
#include <bson/bson.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/nsname.h"
#include "remodel/sha1.h"
#include "test.h"

#define TESTDATA T_FIXTURES "mongo-tools/mongorestore/testdata/"

static uint64_t rng_state = UINT64_C(0x2545F4914F6CDD1D);

static uint64_t
rng (void)
{
    return t_xorshift (&rng_state);
}

static char *
repeat (const char *s, int times)
{
    size_t n = strlen (s);
    char *out = bson_malloc (n * (size_t) times + 1);
    for (int i = 0; i < times; i++)
        memcpy (out + n * (size_t) i, s, n);
    out[n * (size_t) times] = '\0';
    return out;
}

/* escape (name) == want, unescape (want) == name (unless hashed) */
static void
check_both (const char *name, const char *want)
{
    char *e = rm_nsname_escape (name);
    char *u = rm_nsname_unescape (want);
    T_CHECK_STR (e, want);
    T_CHECK_STR (u, name);
    bson_free (e);
    bson_free (u);
}

static void
test_escape_basic (void)
{
    check_both ("cafés", "caf%C3%A9s");
    check_both ("$", "%24");
    check_both (" ", "+");
    check_both ("a/b", "a%2Fb");
    check_both ("a b", "a+b");
    check_both ("a+b", "a%2Bb");
    check_both ("100%", "100%25");
    check_both ("", "");
    check_both ("foo", "foo");
    check_both ("system.buckets.foo_ts", "system.buckets.foo_ts");
    check_both ("AZaz09-_.~", "AZaz09-_.~");
    check_both ("a b~c-d_e.f$/é!*'()", "a+b~c-d_e.f%24%2F%C3%A9%21%2A%27%28%29");
    check_both ("\x01\x7f\xff", "%01%7F%FF");
    check_both ("$admin.system.users", "%24admin.system.users");
    check_both ("a:b@c=d&e;f,g?h#i[j]", "a%3Ab%40c%3Dd%26e%3Bf%2Cg%3Fh%23i%5Bj%5D");
}

/* Every byte alone: kept, '+', or %XX with uppercase hex. */
static void
test_escape_every_byte (void)
{
    static const char kept[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~";
    int bad = 0;
    for (int c = 1; c < 256; c++) {
        char in[2] = {(char) c, 0}, want[4];
        char *e;
        if (strchr (kept, c))
            snprintf (want, sizeof want, "%c", c);
        else if (c == ' ')
            snprintf (want, sizeof want, "+");
        else
            snprintf (want, sizeof want, "%%%02X", c);
        e = rm_nsname_escape (in);
        if (strcmp (e, want) != 0) {
            fprintf (stderr, "  byte 0x%02x: got \"%s\", want \"%s\"\n", c, e, want);
            bad++;
        }
        bson_free (e);
    }
    T_CHECK (bad == 0);
}

static void
test_unescape (void)
{
    char *u;
    /* lowercase hex is accepted, like Go's QueryUnescape */
    u = rm_nsname_unescape ("caf%c3%a9s");
    T_CHECK_STR (u, "cafés");
    bson_free (u);
    u = rm_nsname_unescape ("a%2fb");
    T_CHECK_STR (u, "a/b");
    bson_free (u);
    /* characters Go would have escaped still pass through */
    u = rm_nsname_unescape ("a$b/c");
    T_CHECK_STR (u, "a$b/c");
    bson_free (u);
    u = rm_nsname_unescape ("+%2B+");
    T_CHECK_STR (u, " + ");
    bson_free (u);
}

static void
test_unescape_bad (void)
{
    const char *bad[] = {"%", "%2", "abc%", "abc%4", "%G0", "%0G", "a%zzb", "%%24",
                         "%-1", "% 2", "%00", "a%00b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *u = rm_nsname_unescape (bad[i]);
        if (u)
            fprintf (stderr, "  \"%s\" accepted as \"%s\"\n", bad[i], u);
        T_CHECK (u == NULL);
        bson_free (u);
    }
}

/* unescape (escape (x)) == x for random names short enough not to hash. */
static void
test_roundtrip_random (void)
{
    static const char tricky[] = " +%$./~-_aZ09";
    int bad = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char name[80];
        size_t n = (size_t) (rng () % 80); /* escaped at most 237 bytes */
        char *e, *u;
        for (size_t i = 0; i < n; i++) {
            if (iter & 1)
                name[i] = tricky[rng () % (sizeof tricky - 1)];
            else
                name[i] = (char) (1 + rng () % 255);
        }
        name[n] = '\0';
        e = rm_nsname_escape (name);
        u = rm_nsname_unescape (e);
        if (!u || strcmp (u, name) != 0 || rm_nsname_is_hashed (e) || strlen (e) > 238)
            bad++;
        bson_free (e);
        bson_free (u);
    }
    T_CHECK (bad == 0);
}

static void
check_hashed (const char *name, const char *want)
{
    char *e = rm_nsname_escape (name);
    T_CHECK_STR (e, want);
    T_CHECK (strlen (e) == 238);
    T_CHECK (rm_nsname_is_hashed (e));
    bson_free (e);
}

/* 238 escaped bytes stay; 239 hash. */
static void
test_long_boundary (void)
{
    char *name = repeat ("a", 238), *e, *want;

    e = rm_nsname_escape (name);
    T_CHECK_STR (e, name);
    T_CHECK (!rm_nsname_is_hashed (e));
    bson_free (e);
    bson_free (name);

    name = repeat ("a", 239);
    want = bson_strdup_printf ("%.208s%%24_cMIV897lX9H69gojV5ddCb0Q5Q", name);
    check_hashed (name, want);
    bson_free (want);
    bson_free (name);

    /* "$" + 235: escaped exactly 238, kept; "$" + 236: 239, hashed */
    name = bson_strdup_printf ("$%s", (want = repeat ("a", 236)));
    bson_free (want);
    name[236] = '\0';
    e = rm_nsname_escape (name);
    T_CHECK (strlen (e) == 238);
    T_CHECK (strncmp (e, "%24aaa", 6) == 0);
    T_CHECK (!rm_nsname_is_hashed (e));
    bson_free (e);
    name[236] = 'a';
    want = repeat ("a", 205);
    e = bson_strdup_printf ("%%24%s%%24KlplfqAfAd8XZ7TcZQg6-pQmxbQ", want);
    check_hashed (name, e);
    bson_free (e);
    bson_free (want);
    bson_free (name);

    /* spaces: the length counts the escaped '+', not the raw byte */
    want = repeat ("a", 208);
    name = bson_strdup_printf ("%s%31s", want, "");
    e = bson_strdup_printf ("%s%%24dgUKOGYSA4I0TF9CkwiJ5EjklYY", want);
    check_hashed (name, e);
    bson_free (e);
    bson_free (name);
    bson_free (want);
}

/* The 208-byte cut is a plain byte cut: it can split a %XX sequence. */
static void
test_long_split_escape (void)
{
    /* mongo-tools' own test name: "abc...xyz+/@" x 8, escaped 35 bytes a
     * repetition; 208 = 5 * 35 + 33, so the cut falls after the '%' of %40 */
    char *name = repeat ("abcdefghijklmnopqrstuvwxyz+/@", 8), *e, *u;
    char *five = repeat ("abcdefghijklmnopqrstuvwxyz%2B%2F%40", 5);
    char *want = bson_strdup_printf ("%sabcdefghijklmnopqrstuvwxyz%%2B%%2F%%%%24WAXGeCTTKZpfgKNSxDT_VZNHOQY", five);
    check_hashed (name, want);
    T_CHECK (want[207] == '%' && want[208] == '%');
    /* the split sequence makes the stem unreadable: names come from metadata */
    u = rm_nsname_unescape (want);
    T_CHECK (u == NULL);
    bson_free (u);
    bson_free (want);
    bson_free (five);
    bson_free (name);

    /* 0xFF x 100: 300 escaped bytes, 208 = 69 * 3 + 1 */
    name = repeat ("\xff", 100);
    five = repeat ("%FF", 69);
    want = bson_strdup_printf ("%s%%%%24sMTPNijIf3fLUvFyfSLqf9ZxwJI", five);
    check_hashed (name, want);
    bson_free (want);
    bson_free (five);
    bson_free (name);

    /* é x 80 (UTF-8 C3 A9): the cut leaves "%C3%" */
    name = repeat ("é", 80);
    five = repeat ("%C3%A9", 34);
    want = bson_strdup_printf ("%s%%C3%%%%240FNKeUD21fWAlOmLIzrveqlQTHQ", five);
    e = rm_nsname_escape (name);
    T_CHECK_STR (e, want);
    T_CHECK (rm_nsname_is_hashed (e));
    bson_free (e);
    bson_free (want);
    bson_free (five);
    bson_free (name);
}

/* Reads a small text file whole. */
static char *
slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    char *buf;
    size_t n;
    if (!f) {
        fprintf (stderr, "  cannot open %s (run from the repository root)\n", path);
        return NULL;
    }
    buf = bson_malloc (1 << 16);
    n = fread (buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose (f);
    *len = n;
    return buf;
}

/* Names of the files in dir ending in suffix, stem only (suffix cut). */
static int
stems_in (const char *dir, const char *suffix, char stems[][300], int max)
{
    DIR *d = opendir (dir);
    struct dirent *de;
    int n = 0;
    size_t sl = strlen (suffix);
    if (!d) {
        fprintf (stderr, "  cannot open %s (run from the repository root)\n", dir);
        return -1;
    }
    while ((de = readdir (d)) && n < max) {
        size_t l = strlen (de->d_name);
        if (l > sl && l - sl < 300 && strcmp (de->d_name + l - sl, suffix) == 0) {
            memcpy (stems[n], de->d_name, l - sl);
            stems[n][l - sl] = '\0';
            n++;
        }
    }
    closedir (d);
    return n;
}

/* mongorestore's testdata/longcollectionname: the real collection name is in
 * the metadata's collectionName, and mongodump named the files after its
 * hashed escape. */
static void
test_long_fixture (void)
{
    const char *dir = TESTDATA "longcollectionname/db1";
    const char *literal_stem =
        "aVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVery"
        "VeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVery"
        "VeryVeryVeryVeryLongCollectionNameConsistingOfE%24xFO0VquRn7cg3QooSZD5sglTddU";
    char stems[4][300], path[1024];
    char *json, *e;
    size_t len = 0;
    bson_t *meta;
    bson_error_t error;
    bson_iter_t it;
    const char *coll = NULL;
    int n = stems_in (dir, ".bson", stems, 4);

    T_CHECK (n == 1);
    if (n != 1)
        return;
    T_CHECK_STR (stems[0], literal_stem);
    T_CHECK (rm_nsname_is_hashed (stems[0]));

    snprintf (path, sizeof path, "%s/%s.metadata.json", dir, stems[0]);
    json = slurp (path, &len);
    T_CHECK (json != NULL);
    if (!json)
        return;
    meta = bson_new_from_json ((const uint8_t *) json, (ssize_t) len, &error);
    T_CHECK (meta != NULL);
    if (meta && bson_iter_init_find (&it, meta, "collectionName") && BSON_ITER_HOLDS_UTF8 (&it))
        coll = bson_iter_utf8 (&it, NULL);
    T_CHECK (coll != NULL);
    if (coll) {
        T_CHECK (strlen (coll) == 247);
        e = rm_nsname_escape (coll);
        T_CHECK_STR (e, stems[0]);
        bson_free (e);
    }
    if (meta)
        bson_destroy (meta);
    bson_free (json);

    /* the fixture beside it has the hashed form with a made-up hash */
    n = stems_in (TESTDATA "longcollectionname", ".bson", stems, 4);
    T_CHECK (n == 1);
    if (n == 1) {
        T_CHECK (rm_nsname_is_hashed (stems[0]));
        T_CHECK (strstr (stems[0], "%24someMadeUpInvalidHashString") != NULL);
    }
}

/* mongorestore's testdata/specialcharacter: "cafés" in db1. */
static void
test_special_fixture (void)
{
    char stems[4][300];
    int n = stems_in (TESTDATA "specialcharacter/db1", ".bson", stems, 4);
    char *u, *e;
    T_CHECK (n == 1);
    if (n != 1)
        return;
    u = rm_nsname_unescape (stems[0]);
    T_CHECK_STR (u, "cafés");
    e = rm_nsname_escape ("cafés");
    T_CHECK_STR (e, stems[0]);
    T_CHECK (!rm_nsname_is_hashed (stems[0]));
    bson_free (u);
    bson_free (e);
}

static void
test_is_hashed (void)
{
    char *a208 = repeat ("a", 208);
    char *ok = bson_strdup_printf ("%s%%24xFO0VquRn7cg3QooSZD5sglTddU", a208);
    char *s;

    T_CHECK (strlen (ok) == 238);
    T_CHECK (rm_nsname_is_hashed (ok));
    T_CHECK (!rm_nsname_is_hashed (""));
    T_CHECK (!rm_nsname_is_hashed ("foo"));
    T_CHECK (!rm_nsname_is_hashed ("%24"));
    /* the short form of the tail alone is not the long-name form */
    T_CHECK (!rm_nsname_is_hashed ("%24xFO0VquRn7cg3QooSZD5sglTddU"));
    T_CHECK (!rm_nsname_is_hashed ("x%24xFO0VquRn7cg3QooSZD5sglTddU"));

    /* one byte more or less */
    s = bson_strdup_printf ("a%s", ok);
    T_CHECK (!rm_nsname_is_hashed (s));
    bson_free (s);
    s = bson_strdup (ok + 1);
    T_CHECK (!rm_nsname_is_hashed (s));
    bson_free (s);
    s = bson_strdup_printf ("%sA", ok);
    T_CHECK (!rm_nsname_is_hashed (s));
    bson_free (s);

    /* not base64url in the hash part: '+', '/', '=', '%' */
    const char *wrong = "+/=%";
    for (int i = 0; wrong[i]; i++) {
        s = bson_strdup (ok);
        s[237 - i * 7] = wrong[i];
        T_CHECK (!rm_nsname_is_hashed (s));
        bson_free (s);
    }
    /* delimiter missing or moved */
    s = bson_strdup (ok);
    s[210] = '5';
    T_CHECK (!rm_nsname_is_hashed (s));
    bson_free (s);
    s = bson_strdup_printf ("%.207s%%24%s", a208, "xFO0VquRn7cg3QooSZD5sglTddUa");
    T_CHECK (strlen (s) == 238);
    T_CHECK (!rm_nsname_is_hashed (s));
    bson_free (s);
    /* 238 plain bytes */
    s = repeat ("a", 238);
    T_CHECK (!rm_nsname_is_hashed (s));
    bson_free (s);

    bson_free (ok);
    bson_free (a208);
}

static void
check_sha1 (const void *data, size_t len, const char *want_hex)
{
    unsigned char d[20];
    char hex[41];
    rm_sha1 (data, len, d);
    for (int i = 0; i < 20; i++)
        snprintf (hex + 2 * i, 3, "%02x", d[i]);
    T_CHECK_STR (hex, want_hex);
}

static void
test_sha1 (void)
{
    /* FIPS 180-1 appendix vectors */
    check_sha1 ("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
    check_sha1 ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
                "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    check_sha1 ("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    check_sha1 (NULL, 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    {
        char *m = repeat ("a", 1000000);
        check_sha1 (m, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
        /* lengths around the padding boundaries (55/56: one or two final
         * blocks; 64: an exact block) */
        check_sha1 (m, 55, "c1c8bbdc22796e28c0e15163d20899b65621d65a");
        check_sha1 (m, 56, "c2db330f6083854c99d4b5bfb6e8f29f201be699");
        check_sha1 (m, 63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5");
        check_sha1 (m, 64, "0098ba824b5c16427bd7a1122a5a442a25ec644d");
        check_sha1 (m, 65, "11655326c708d70319be2610e8a57d9a5b959d3b");
        check_sha1 (m, 119, "ee971065aaa017e0632a8ca6c77bb3bf8b1dfc56");
        check_sha1 (m, 120, "f34c1488385346a55709ba056ddd08280dd4c6d6");
        check_sha1 (m, 128, "ad5b3fdbcb526778c2839d2f151ea753995e26a0");
        bson_free (m);
    }
}

int
main (void)
{
    T_RUN (test_escape_basic);
    T_RUN (test_escape_every_byte);
    T_RUN (test_unescape);
    T_RUN (test_unescape_bad);
    T_RUN (test_roundtrip_random);
    T_RUN (test_long_boundary);
    T_RUN (test_long_split_escape);
    T_RUN (test_long_fixture);
    T_RUN (test_special_fixture);
    T_RUN (test_is_hashed);
    T_RUN (test_sha1);
    return t_done ();
}
