/* Fuzzes the directory layout: the input is a list of files, each
 *   [1 byte: name length][name][4 bytes LE: size][bytes]
 * written into a fresh directory (names mapped to safe ones: at most two
 * levels, no "." or ".." components), which is then read as a dump. It
 * reaches the layout's naming rules, metadata JSON, prelude.json, hashed
 * names and the .bson reading behind them. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "remodel/tmppath.h"

/* Keeps name characters a dump uses; a '/' splits at most once. */
static void
safe_name (const uint8_t *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    bool slash = false;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        char c = (char) in[i];
        if (c == '/' && !slash && o > 0) {
            slash = true;
            out[o++] = c;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   (c && strchr ("._-%+$", c))) {
            out[o++] = c;
        }
    }
    out[o] = '\0';
}

static bool
bad_component (const char *name)
{
    const char *slash = strchr (name, '/');
    size_t n = slash ? (size_t) (slash - name) : strlen (name);
    if (n == 0 || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
        return true;
    return slash && bad_component (slash + 1);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char root[] = "/tmp/remodel-fuzz-dir.XXXXXX";
    size_t at = 0;

    if (!mkdtemp (root))
        return 0;
    while (at < size) {
        char name[128], path[300];
        size_t nlen = data[at++], flen;
        uint32_t len = 0;
        FILE *f;
        if (at + nlen + 4 > size)
            break;
        safe_name (data + at, nlen, name, sizeof name);
        at += nlen;
        memcpy (&len, data + at, 4);
        at += 4;
        flen = len < size - at ? len : size - at;
        if (!name[0] || bad_component (name)) {
            at += flen;
            continue;
        }
        if (strchr (name, '/')) {
            char dir[300];
            snprintf (dir, sizeof dir, "%s/%.*s", root, (int) (strchr (name, '/') - name), name);
            mkdir (dir, 0700);
        }
        snprintf (path, sizeof path, "%s/%s", root, name);
        if ((f = fopen (path, "wb"))) {
            fwrite (data + at, 1, flen, f);
            fclose (f);
        }
        at += flen;
    }
    fuzz_read_all (root, size & 1);
    rm_rmtree (root);
    return 0;
}
