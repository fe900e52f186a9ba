/* Copying a dump from one format to another: the identity transform, and
 * the loop every later transform grows from. */
#include <stdio.h>
#include <string.h>

#include "tool.h"

int
tool_copy (const char *src, const char *dst, tool_opts_t *o, const char *label)
{
    bson_error_t err;
    rm_reader_t *r;
    rm_writer_t *w = NULL;
    rm_dump_info_t out;
    tool_progress_t *prog;
    rm_item_t item;
    uint64_t docs = 0, bytes = 0;
    int rc;

    rm_write_opts_resolve (&o->write, dst);
    {
        const tool_path_t paths[] = {
            {src, "the source", false, false},
            {dst, "the destination", true, o->write.format == RM_FORMAT_DIR},
            {o->read.quarantine, "--skip-invalid", true, false},
        };
        if (!tool_paths_check (paths, 3, &err)) {
            tool_error (&err);
            return rm_cli_exit_status (&err);
        }
    }
    tool_sweep (dst, NULL, o->quiet);
    if (strcmp (dst, "-") != 0 && !tool_make_parents (dst, &err)) {
        tool_error (&err);
        return rm_cli_exit_status (&err);
    }
    r = rm_reader_open (src, &o->read, &err);
    if (!r) {
        tool_error (&err);
        tool_remove_made_parents ();
        return rm_cli_exit_status (&err);
    }
    /* The writer counts into its own copy of the namespace list. */
    rm_dump_info_copy (&out, rm_reader_info (r));
    /* Every namespace is copied unchanged: the archive writer can take the
     * reader's CRC of the same documents instead of computing it again. */
    for (size_t i = 0; i < out.n_ns; i++)
        out.ns[i]->crc_given = true;
    w = rm_writer_open (dst, &o->write, &out, &err);
    if (!w) {
        tool_error (&err);
        tool_remove_made_parents ();
        rm_dump_info_destroy (&out);
        rm_reader_close (r);
        return rm_cli_exit_status (&err);
    }
    prog = tool_progress_new (o->quiet, label);
    /* Documents as they are: a run at a time where they lie together. */
    while ((rc = rm_reader_next_run (r, &item, &err)) > 0) {
        rm_ns_t *ns = out.ns[item.ns->index];
        if (item.kind == RM_ITEM_DOC) {
            uint64_t before = docs;
            /* The reader is closed after the writer: a held document
             * outlives every buffer that points at it. */
            if (!(item.n_docs > 1 ? rm_writer_docs (w, ns, item.doc, item.len, item.n_docs,
                                                    item.held, &err)
                  : (item.held ? rm_writer_doc_held : rm_writer_doc) (w, ns, item.doc, item.len,
                                                                      &err))) {
                rc = -1;
                break;
            }
            docs += item.n_docs;
            bytes += item.len;
            if ((before ^ docs) >> 12) /* a run crossed a multiple of 4096 */
                tool_progress_draw (prog, r, docs);
        } else {
            ns->crc = item.ns->crc;
            if (!rm_writer_ns_end (w, ns, &err)) {
                rc = -1;
                break;
            }
        }
    }
    tool_progress_done (prog);
    if (rc == 0 && !rm_writer_commit (w, &err))
        rc = -1;
    if (rc < 0) {
        rm_writer_abort (w);
        if (strcmp (dst, "-") == 0 && tool_stdout_gone ()) {
            rc = RM_EXIT_PIPE; /* `remodel cat X | head`: end quietly, as cat does */
        } else {
            tool_error (&err);
            rc = rm_cli_exit_status (&err);
        }
    } else {
        if (rm_reader_skipped (r) > 0)
            tool_note (false, "%llu invalid document(s) set aside%s%s",
                       (unsigned long long) rm_reader_skipped (r),
                       o->read.quarantine ? " in " : " (not written anywhere: give "
                                                     "--skip-invalid=FILE to keep them)",
                       o->read.quarantine ? o->read.quarantine : "");
        if (o->verbose) /* as mongodump says "done dumping db.coll (N documents)" */
            for (size_t i = 0; i < out.n_ns; i++) {
                char name[512];
                tool_note (false, "%s: %llu document(s)", rm_ns_name (out.ns[i], name, sizeof name),
                           (unsigned long long) out.ns[i]->docs);
            }
        if (dst[0] != '-' || dst[1] != '\0')
            tool_note (o->quiet,
                       "wrote %s (%s, compression %s): %zu namespace(s), %llu document(s), "
                       "%llu bytes of BSON",
                       dst, rm_format_name (o->write.format),
                       rm_codec_name (o->write.compress.codec), out.n_ns,
                       (unsigned long long) docs, (unsigned long long) bytes);
    }
    rm_writer_destroy (w);
    rm_dump_info_destroy (&out);
    rm_reader_close (r);
    if (rc == 0)
        tool_keep_made_parents ();
    else
        tool_remove_made_parents ();
    return rc;
}
