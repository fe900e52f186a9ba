/* The design after a plan: the plan run over the source into a temporary
 * archive, which analyze then reads as it reads any dump, so the after
 * picture is measured, not predicted (sizes, largest documents, embedded
 * arrays' lengths, the references left). */
#include <stdlib.h>
#include <string.h>

#include "remodel/report.h"
#include "remodel/tmppath.h"

rm_analysis_t *
rm_report_after (const rm_plan_t *plan, const char *src, const struct rm_nsselect *select,
                 const rm_engine_opts_t *eo, const rm_analyze_opts_t *ao, bson_error_t *err)
{
    char *where = bson_strdup_printf ("%s/report.archive", rm_tmpdir (eo->tmpdir));
    char *tmp = rm_tmppath_new (where);
    rm_write_opts_t wo;
    rm_dump_info_t out;
    rm_engine_t *e = NULL;
    rm_writer_t *w = NULL;
    rm_read_opts_t ro = {.select = select};
    rm_reader_t *r = rm_reader_open (src, &ro, err);
    rm_analysis_t *a = NULL;
    bool ok = r != NULL;

    bson_free (where);
    memset (&wo, 0, sizeof wo);
    rm_write_opts_resolve (&wo, tmp);
    rm_dump_info_init (&out);
    if (ok) {
        e = rm_engine_new (plan, eo);
        ok = rm_engine_prepare (e, rm_reader_info (r), &out, err);
    }
    if (ok) {
        w = rm_writer_open (tmp, &wo, &out, err);
        ok = w != NULL;
    }
    ok = ok && rm_engine_run (e, r, w, err) && rm_writer_commit (w, err);
    if (!ok && w)
        rm_writer_abort (w);
    rm_writer_destroy (w);
    rm_engine_destroy (e);
    rm_reader_close (r);
    rm_dump_info_destroy (&out);
    if (ok)
        a = rm_analyze (tmp, ao, err);
    rm_tmppath_remove (tmp);
    bson_free (tmp);
    return a;
}
