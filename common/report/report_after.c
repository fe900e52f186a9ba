/* The design after a plan: the plan run over the source into a temporary
 * archive, which analyze then reads as it reads any dump, so the after
 * picture is measured, not predicted (sizes, largest documents, embedded
 * arrays' lengths, the references left). */
#include <stdlib.h>
#include <string.h>

#include "remodel/report.h"
#include "remodel/tmppath.h"

static void
copy_stats (const rm_engine_t *e, rm_ns_stats_t **stats, size_t *n_stats)
{
    const rm_ns_stats_t *st;
    size_t n = rm_engine_stats (e, &st);
    *stats = bson_malloc0 ((n ? n : 1) * sizeof **stats);
    for (size_t i = 0; i < n; i++) {
        (*stats)[i] = st[i];
        (*stats)[i].name = bson_strdup (st[i].name);
    }
    *n_stats = n;
}

void
rm_report_stats_free (rm_ns_stats_t *stats, size_t n)
{
    for (size_t i = 0; stats && i < n; i++)
        bson_free (stats[i].name);
    bson_free (stats);
}

rm_analysis_t *
rm_report_after (const rm_plan_t *plan, const char *src, const struct rm_nsselect *select,
                 const rm_engine_opts_t *eo, const rm_analyze_opts_t *ao, rm_ns_stats_t **stats,
                 size_t *n_stats, bson_error_t *err)
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
    if (ok && stats)
        copy_stats (e, stats, n_stats);
    rm_writer_destroy (w);
    rm_engine_destroy (e);
    rm_reader_close (r);
    rm_dump_info_destroy (&out);
    if (ok)
        a = rm_analyze (tmp, ao, err);
    rm_tmppath_remove (tmp);
    bson_free (tmp);
    if (!a && ok && stats) {
        rm_report_stats_free (*stats, *n_stats);
        *stats = NULL;
        *n_stats = 0;
    }
    return a;
}
