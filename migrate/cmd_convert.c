/* remodel convert SRC DST and remodel cat SRC. */
#include <stdio.h>

#include "tool.h"

static const char convert_usage[] =
    "usage: remodel convert SRC DST [options]\n"
    "\n"
    "Copies a dump into another format or compression, documents byte for byte\n"
    "and metadata verbatim. SRC: an archive (plain, gzip, zstd), a dump directory,\n"
    "a tar of one, a .bson file, or - for standard input; told apart by content.\n"
    "DST's format follows its name unless --format says: *.archive[.gz|.zst],\n"
    "*.tar[.gz|.zst], *.tgz, *.bson[.gz|.zst], - (archive on stdout), else a\n"
    "directory.\n"
    "\n"
    "  --format archive|dir|tar|bson   the destination's format\n"
    "  --compress zstd[:LEVEL]|gzip[:LEVEL]|none\n"
    "                                  compression (a directory: gzip per file)\n"
    "  --threads N                     compression threads: zstd workers or parallel\n"
    "                                  gzip members (default: one per core)\n"
    "  --force, -f                     replace an existing destination\n"
    "  --skip-invalid[=FILE]           set bad documents aside (into FILE) instead\n"
    "                                  of failing, and report how many\n"
    "  --quiet, -q                     no progress or summary\n"
    "  --help, -h                      this text\n"
    "\n"
    "example: remodel convert dump/ shop.archive.zst --compress zstd:6\n";

static const char cat_usage[] =
    "usage: remodel cat SRC [options]\n"
    "\n"
    "Writes SRC (any dump remodel reads) to standard output as a plain mongodump\n"
    "archive, e.g.  remodel cat x.archive.zst | mongorestore --archive\n"
    "\n"
    "  --compress gzip[:LEVEL]|zstd[:LEVEL]|none   compress the stream (default none)\n"
    "  --format archive|bson           bson: the documents of a one-collection dump\n"
    "  --skip-invalid[=FILE]           set bad documents aside instead of failing\n"
    "  --quiet, -q                     (cat prints no progress anyway)\n"
    "  --help, -h                      this text\n";

int
cmd_convert (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = convert_usage, .cmd = RM_CMD_CONVERT, .min_pos = 2, .max_pos = 2};
    tool_opts_t o;
    char *pos[2];
    int n;
    bool help;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    return tool_copy (pos[0], pos[1], &o, "convert");
}

int
cmd_cat (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = cat_usage, .cmd = RM_CMD_CAT, .min_pos = 1, .max_pos = 1};
    tool_opts_t o;
    char *pos[1];
    int n;
    bool help;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    if (o.write.format == RM_FORMAT_AUTO)
        o.write.format = RM_FORMAT_ARCHIVE;
    if (!o.write.compress_set) {
        o.write.compress.codec = RM_CODEC_NONE;
        o.write.compress_set = true;
    }
    o.quiet = true; /* stdout carries the data; the meter would only confuse pipes */
    return tool_copy (pos[0], "-", &o, "cat");
}
