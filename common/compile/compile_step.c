/* What a kind's compiler records on its step (compile_impl.h): why it is
 * not a pipeline, a note, the guard. Apart from compile_plan.c, which
 * calls the compilers through the table in compile_table.c, so that the
 * compilers call down to this file and never back up to their caller. */
#include <stdarg.h>
#include <stdio.h>

#include "compile_impl.h"

bool
rm_compile_refuse (rm_compile_step_t *st, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (st->reason, sizeof st->reason, fmt, ap);
    va_end (ap);
    for (size_t i = 0; i < st->n_passes; i++)
        bson_destroy (&st->passes[i].pipeline);
    st->n_passes = 0;
    return true;
}

void
rm_compile_note (rm_compile_step_t *st, const char *fmt, ...)
{
    va_list ap;
    if (st->n_notes == RM_COMPILE_MAX_NOTES)
        return;
    va_start (ap, fmt);
    st->notes[st->n_notes++] = bson_strdupv_printf (fmt, ap);
    va_end (ap);
}

void
rm_compile_guard (const rm_names_t *nm, rm_compile_step_t *st, const rm_nsref_t *ns,
                  const char *field)
{
    st->guard_ns = ns;
    st->guard_field = field;
    snprintf (st->guard_coll, sizeof st->guard_coll, "%s", rm_name_now (nm, ns));
}
