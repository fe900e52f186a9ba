/* Replays fuzz inputs without libFuzzer: `replay DIR|FILE...` feeds every
 * file to the harness it is linked with, one by one, and prints one result
 * line. Built with gcc, ASan and UBSan by `make check`, so the committed
 * corpus and every past crash input run under the sanitizers each time. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static size_t inputs;

static void
replay_file (const char *path)
{
    FILE *f = fopen (path, "rb");
    uint8_t *buf;
    long n;
    if (!f)
        return;
    fseek (f, 0, SEEK_END);
    n = ftell (f);
    fseek (f, 0, SEEK_SET);
    buf = malloc ((size_t) n + 1);
    if (buf && fread (buf, 1, (size_t) n, f) == (size_t) n) {
        LLVMFuzzerTestOneInput (buf, (size_t) n);
        inputs++;
    }
    free (buf);
    fclose (f);
}

static void
replay (const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    if (stat (path, &st) != 0)
        return;
    if (!S_ISDIR (st.st_mode)) {
        replay_file (path);
        return;
    }
    if (!(d = opendir (path)))
        return;
    while ((e = readdir (d))) {
        char child[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf (child, sizeof child, "%s/%s", path, e->d_name);
        replay (child);
    }
    closedir (d);
}

int
main (int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "?";
    for (int i = 2; i < argc; i++)
        replay (argv[i]);
    /* Reaching here means no input crashed or tripped a sanitizer. */
    printf ("%s fuzz replay %s (%zu inputs)\n", inputs > 0 ? "PASS" : "FAIL", name, inputs);
    return inputs > 0 ? 0 : 1;
}
