/* Fuzzes the dump readers: the input is a file of any format (archive,
 * .bson, tar, each plain, gzip or zstd), told apart by its bytes exactly as
 * for a user's file. One harness, run over four corpora (archive, bson,
 * tar, compressed) so that each parser gets inputs near its own format.
 * Odd-sized inputs are read with --skip-invalid, so resuming after a bad
 * document is fuzzed too. */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile (data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    fuzz_read_all (path, size & 1);
    close (fd);
    return 0;
}
