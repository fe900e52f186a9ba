/* What the fuzz harnesses share: a byte string turned into a file the
 * readers can open by name, and a reader drained to its end. Each harness
 * defines LLVMFuzzerTestOneInput; built with clang's libFuzzer for `make
 * fuzz`, and with replay.c (gcc, ASan and UBSan) for the corpus replay in
 * `make check`. */
#ifndef REMODEL_FUZZ_H
#define REMODEL_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "remodel/dump.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A memory file holding the bytes, named "/proc/self/fd/N" in path (the
 * tar reader opens its input again by name). Returns the descriptor. */
static inline int
fuzz_memfile (const uint8_t *data, size_t size, char *path, size_t path_len)
{
    int fd = memfd_create ("fuzz", 0);
    size_t done = 0;
    if (fd < 0)
        return -1;
    while (done < size) {
        ssize_t w = write (fd, data + done, size - done);
        if (w <= 0)
            break;
        done += (size_t) w;
    }
    snprintf (path, path_len, "/proc/self/fd/%d", fd);
    return fd;
}

/* Opens path as any dump and reads every item: the errors are the point,
 * so they are dropped; a crash or a sanitizer report is a finding. */
static inline void
fuzz_read_all (const char *path, bool skip_invalid)
{
    rm_read_opts_t opts = {0};
    bson_error_t err;
    rm_item_t item;
    rm_reader_t *r;
    uint64_t total = 0;

    opts.skip_invalid = skip_invalid;
    r = rm_reader_open (path, &opts, &err);
    if (!r)
        return;
    while (rm_reader_next (r, &item, &err) > 0)
        if (item.kind == RM_ITEM_DOC)
            total += item.len; /* touch what was handed out */
    (void) total;
    rm_reader_close (r);
}

#endif
