/* A step's exact inverse (remodel/plan.h), from its row of the step table
 * (step_class.h): for rollback --carry-writes, which carries the
 * application's writes after a switch back through it, and names no step
 * kind itself. */
#include <string.h>

#include "step_class.h"

void
rm_step_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    memset (out, 0, sizeof *out);
    if ((unsigned) s->kind < RM_STEP_N_KINDS && rm_step_classes[s->kind].inverse)
        rm_step_classes[s->kind].inverse (s, out);
    else
        out->why = "remodel knows no exact inverse of it to carry writes back through";
}
