/* Temporary stores give back exactly the documents added, in order, even
 * one whose length starts with gzip's magic bytes (the store is not
 * compressed, and an instream looks at the first bytes for a codec); a
 * store file of the wrong size is an error, not fewer documents. */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine_impl.h"
#include "remodel/tmppath.h"
#include "test.h"

/* {"p": "xxx..."}, len bytes long (len >= 13). */
static uint8_t *
make_doc (uint32_t len)
{
    uint8_t *d = malloc (len);
    uint32_t slen = len - 12; /* with its NUL */
    memcpy (d, &len, 4);
    d[4] = 0x02;
    d[5] = 'p';
    d[6] = 0;
    memcpy (d + 7, &slen, 4);
    memset (d + 11, 'x', slen - 1);
    d[11 + slen - 1] = 0;
    d[len - 1] = 0;
    return d;
}

static char *
make_dir (void)
{
    char tmpl[] = "/tmp/remodel-test-store.XXXXXX";
    char *dir = mkdtemp (tmpl);
    return dir ? strdup (dir) : NULL;
}

static void
test_round_trip (void)
{
    /* 0x8b1f: the first two bytes are 1f 8b, gzip's magic. */
    uint32_t lens[] = {0x8b1f, 13, 5000, 0x8b1f, 200000};
    uint8_t *docs[5];
    char *dir = make_dir ();
    bson_error_t err;
    rm_store_t *s = rm_store_new (dir, "t.c", &err);
    rm_instream_t *in;
    rm_frame_t f;
    size_t i = 0;
    int rc;

    T_CHECK (s != NULL);
    for (size_t k = 0; k < 5; k++) {
        docs[k] = make_doc (lens[k]);
        T_CHECK (rm_store_add (s, docs[k], lens[k], &err));
    }
    T_CHECK (rm_store_seal (s, &err));
    T_CHECK (rm_store_count (s) == 5);
    /* Read twice: a store is read as often as needed. */
    for (int pass = 0; pass < 2; pass++) {
        in = rm_store_open (s, &err);
        T_CHECK (in != NULL);
        for (i = 0; in && (rc = rm_store_next (in, &f, &err)) > 0; i++)
            T_CHECK (i < 5 && f.len == lens[i] && memcmp (f.data, docs[i], f.len) == 0);
        T_CHECK (i == 5);
        rm_instream_close (in);
    }
    rm_store_destroy (s);
    for (size_t k = 0; k < 5; k++)
        free (docs[k]);
    T_CHECK (rmdir (dir) == 0); /* the store file is gone */
    free (dir);
}

static void
test_empty_store (void)
{
    char *dir = make_dir ();
    bson_error_t err;
    rm_store_t *s = rm_store_new (dir, "t.c", &err);
    rm_instream_t *in;
    rm_frame_t f;

    T_CHECK (rm_store_seal (s, &err));
    in = rm_store_open (s, &err);
    T_CHECK (in != NULL);
    T_CHECK (in && rm_store_next (in, &f, &err) == 0);
    rm_instream_close (in);
    rm_store_destroy (s);
    T_CHECK (rmdir (dir) == 0);
    free (dir);
}

/* A whole document cut off the end must not read as a shorter store. */
static void
test_truncated (void)
{
    char *dir = make_dir ();
    char *path = NULL;
    bson_error_t err;
    rm_store_t *s = rm_store_new (dir, "t.c", &err);
    uint8_t *d = make_doc (100);
    struct dirent *e;
    DIR *dd;

    T_CHECK (rm_store_add (s, d, 100, &err) && rm_store_add (s, d, 100, &err));
    T_CHECK (rm_store_seal (s, &err));
    dd = opendir (dir);
    while (dd && (e = readdir (dd)))
        if (e->d_name[0] == '.' && strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
            path = bson_strdup_printf ("%s/%s", dir, e->d_name);
    if (dd)
        closedir (dd);
    T_CHECK (path != NULL);
    T_CHECK (path && truncate (path, 4 + 100) == 0);
    memset (&err, 0, sizeof err);
    T_CHECK (rm_store_open (s, &err) == NULL);
    T_CHECK (strstr (err.message, "damaged temporary store") != NULL);
    T_CHECK (strstr (err.message, "t.c") != NULL);
    rm_store_destroy (s);
    bson_free (path);
    free (d);
    T_CHECK (rmdir (dir) == 0);
    free (dir);
}

int
main (void)
{
    T_RUN (test_round_trip);
    T_RUN (test_empty_store);
    T_RUN (test_truncated);
    return t_done ();
}
