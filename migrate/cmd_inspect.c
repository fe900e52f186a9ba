/* remodel inspect SRC: what a dump holds, after reading and checking every
 * byte of it. */
#include <stdio.h>
#include <string.h>

#include "remodel/idcheck.h"
#include "remodel/metadata.h"
#include "remodel/nsname.h"
#include "remodel/sha1.h"
#include "tool.h"

static const char usage[] =
    "usage: remodel inspect SRC [--json] [options]\n"
    "\n"
    "Reads the whole dump, validating every document and every archive CRC, and\n"
    "lists its namespaces: type, documents, bytes, indexes, CRC status, and any\n"
    "integrity problem found (then the exit status is 1), duplicate _ids in a\n"
    "namespace included (mongorestore would fail on them).\n"
    "\n"
    "  --json                  one JSON document instead of the table\n"
    "  --memory SIZE           the budget of the sort of _ids (a quarter of it;\n"
    "                          default 512M); past it, runs go to --tmp\n"
    "  --tmp DIR               where that sort spills (default $TMPDIR or /tmp)\n"
    "  --skip-invalid[=FILE]   count bad documents (and keep them in FILE) and\n"
    "                          go on instead of stopping at the first\n"
    "  --quiet, -q             no progress meter\n"
    "  --help, -h              this text\n"
    "\n"
    "example: remodel inspect dumps/sample.archive.gz\n";

static const char *
ns_type (const rm_ns_t *ns)
{
    if (ns->is_oplog)
        return "oplog";
    if (ns->type[0])
        return ns->type;
    return "collection";
}

static void
print_json (const rm_dump_info_t *info, const char *src, const char *problem, uint64_t skipped,
            const rm_idcheck_t *ids)
{
    bson_t doc, arr, probs;
    char *json;

    bson_init (&doc);
    BSON_APPEND_UTF8 (&doc, "source", src);
    BSON_APPEND_UTF8 (&doc, "format", rm_format_name (info->format));
    BSON_APPEND_UTF8 (&doc, "compression",
                      info->format == RM_FORMAT_DIR ? "per file" : rm_codec_name (info->codec));
    if (info->server_version)
        BSON_APPEND_UTF8 (&doc, "serverVersion", info->server_version);
    if (info->tool_version)
        BSON_APPEND_UTF8 (&doc, "toolVersion", info->tool_version);
    BSON_APPEND_ARRAY_BEGIN (&doc, "namespaces", &arr);
    for (size_t i = 0; i < info->n_ns; i++) {
        const rm_ns_t *ns = info->ns[i];
        rm_metadata_t m;
        bson_t e, ix;
        char key[16], hex[48];
        const char *k;

        bson_uint32_to_string ((uint32_t) i, &k, key, sizeof key);
        bson_append_document_begin (&arr, k, -1, &e);
        BSON_APPEND_UTF8 (&e, "db", ns->db);
        BSON_APPEND_UTF8 (&e, "collection", ns->coll);
        if (strcmp (ns->data_coll, ns->coll) != 0)
            BSON_APPEND_UTF8 (&e, "dataCollection", ns->data_coll);
        BSON_APPEND_UTF8 (&e, "type", ns_type (ns));
        BSON_APPEND_INT64 (&e, "documents", (int64_t) ns->docs);
        BSON_APPEND_INT64 (&e, "bytes", (int64_t) ns->bytes);
        if (ns->invalid)
            BSON_APPEND_INT64 (&e, "invalid", (int64_t) ns->invalid);
        if (ids) {
            const char *first;
            uint64_t dups = rm_idcheck_dups (ids, (uint32_t) i, &first);
            BSON_APPEND_INT64 (&e, "duplicateIds", (int64_t) dups);
        }
        /* Fingerprints: equal CRCs mean the same documents in the same order. */
        snprintf (hex, sizeof hex, "%016llx", (unsigned long long) ns->crc);
        BSON_APPEND_UTF8 (&e, "crc", hex);
        if (ns->metadata_len > 0) {
            unsigned char sha[20];
            rm_sha1 (ns->metadata, ns->metadata_len, sha);
            for (int j = 0; j < 20; j++)
                snprintf (hex + 2 * j, 3, "%02x", sha[j]);
            BSON_APPEND_UTF8 (&e, "metadataSha1", hex);
        }
        if (info->format == RM_FORMAT_ARCHIVE)
            BSON_APPEND_BOOL (&e, "crcVerified", ns->crc_checked);
        rm_metadata_read (ns->metadata, ns->metadata_len, &m);
        BSON_APPEND_ARRAY_BEGIN (&e, "indexes", &ix);
        for (size_t j = 0; j < m.n_indexes; j++) {
            bson_uint32_to_string ((uint32_t) j, &k, key, sizeof key);
            bson_append_utf8 (&ix, k, -1, m.index_names[j], -1);
        }
        bson_append_array_end (&e, &ix);
        BSON_APPEND_BOOL (&e, "metadataParsed", m.parsed || ns->metadata_len == 0);
        rm_metadata_clear (&m);
        bson_append_document_end (&arr, &e);
    }
    bson_append_array_end (&doc, &arr);
    BSON_APPEND_INT64 (&doc, "invalidDocuments", (int64_t) skipped);
    BSON_APPEND_ARRAY_BEGIN (&doc, "problems", &probs);
    if (problem)
        BSON_APPEND_UTF8 (&probs, "0", problem);
    bson_append_array_end (&doc, &probs);
    json = bson_as_relaxed_extended_json (&doc, NULL);
    printf ("%s\n", json);
    bson_free (json);
    bson_destroy (&doc);
}

static void
print_table (const rm_dump_info_t *info, const char *src, const char *problem, uint64_t skipped,
             const rm_idcheck_t *ids)
{
    uint64_t docs = 0, bytes = 0;

    tool_put_cell (stdout, src, 0);
    printf (": %s", rm_format_name (info->format));
    if (info->format == RM_FORMAT_DIR)
        printf (info->gzip_files ? ", gzip per file" : "");
    else if (info->codec != RM_CODEC_NONE)
        printf (", %s", rm_codec_name (info->codec));
    if (info->server_version) {
        fputs (", server ", stdout);
        tool_put_cell (stdout, info->server_version, 0);
    }
    printf ("\n\n%-40s %-11s %10s %12s  %s\n", "NAMESPACE", "TYPE", "DOCUMENTS", "BYTES", "INDEXES");
    for (size_t i = 0; i < info->n_ns; i++) {
        const rm_ns_t *ns = info->ns[i];
        rm_metadata_t m;
        char name[512];
        rm_metadata_read (ns->metadata, ns->metadata_len, &m);
        tool_put_cell (stdout, rm_ns_name (ns, name, sizeof name), 40);
        putchar (' ');
        tool_put_cell (stdout, ns_type (ns), 11);
        printf (" %10llu %12llu  ", (unsigned long long) ns->docs, (unsigned long long) ns->bytes);
        for (size_t j = 0; j < m.n_indexes; j++) {
            fputs (j ? ", " : "", stdout);
            tool_put_cell (stdout, m.index_names[j], 0);
        }
        if (!m.parsed && ns->metadata_len > 0)
            printf ("(metadata is not valid JSON: kept verbatim)");
        if (ns->invalid)
            printf ("  [%llu invalid]", (unsigned long long) ns->invalid);
        if (ids) {
            const char *first;
            uint64_t dups = rm_idcheck_dups (ids, (uint32_t) i, &first);
            if (dups)
                printf ("  [%llu duplicate _id]", (unsigned long long) dups);
        }
        printf ("\n");
        rm_metadata_clear (&m);
        docs += ns->docs;
        bytes += ns->bytes;
    }
    printf ("\n%zu namespace(s), %llu document(s), %llu bytes of BSON", info->n_ns,
            (unsigned long long) docs, (unsigned long long) bytes);
    if (info->format == RM_FORMAT_ARCHIVE && !problem)
        printf (skipped ? "; CRCs not verifiable where documents were set aside" : "; every CRC verified");
    printf ("\n");
    if (skipped)
        printf ("%llu invalid document(s) set aside\n", (unsigned long long) skipped);
    if (problem) {
        fputs ("problem: ", stdout);
        tool_put_cell (stdout, problem, 0);
        putchar ('\n');
    }
}

int
cmd_inspect (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = usage, .cmd = RM_CMD_INSPECT, .min_pos = 1, .max_pos = 1};
    tool_opts_t o;
    char *pos[1];
    int n, rc, status;
    bool help;
    bson_error_t err;
    rm_reader_t *r;
    rm_item_t item;
    tool_progress_t *prog;
    rm_idcheck_t *ids;
    uint64_t docs = 0;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    if (!(r = tool_open_source (pos[0], &o, &status)))
        return status;
    prog = tool_progress_new (o.quiet, "inspect");
    ids = tool_idcheck_new (&o);
    while ((rc = rm_reader_next (r, &item, &err)) > 0)
        if (item.kind == RM_ITEM_DOC) {
            tool_progress_tick (prog, r, ++docs);
            if (!rm_idcheck_add (ids, (uint32_t) item.ns->index, item.doc, item.len, &err)) {
                rc = -1;
                break;
            }
        }
    tool_progress_done (prog);
    /* Duplicate _ids are known once every document is read; a read that
     * stopped early says nothing of them. */
    if (rc == 0 && (!rm_idcheck_finish (ids, &err) ||
                    !tool_idcheck_error (ids, rm_reader_info (r), &err)))
        rc = -1;
    else if (rc < 0) {
        rm_idcheck_destroy (ids);
        ids = NULL;
    }
    if (o.json)
        print_json (rm_reader_info (r), pos[0], rc < 0 ? err.message : NULL,
                    rm_reader_skipped (r), ids);
    else
        print_table (rm_reader_info (r), pos[0], rc < 0 ? err.message : NULL,
                     rm_reader_skipped (r), ids);
    if (rc < 0)
        tool_error (&err);
    rm_idcheck_destroy (ids);
    rm_reader_close (r);
    return rc < 0 ? rm_cli_exit_status (&err) : 0;
}
