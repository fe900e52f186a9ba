/* Fuzzes the plan parser and checker: the input is the plan's text. A plan
 * that parses is also checked against a small dump's namespaces, as
 * `remodel check --against` does. */
#include "fuzz.h"
#include "remodel/plan.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    rm_plan_t plan;
    bson_error_t err;
    rm_dump_info_t info;

    if (!rm_plan_parse (&plan, (const char *) data, size, &err))
        return 0;
    rm_dump_info_init (&info);
    rm_dump_info_add (&info, "crm", "people");
    rm_dump_info_add (&info, "crm", "tasks");
    rm_dump_info_add (&info, "iot", "readings");
    rm_plan_check_against (&plan, &info, &err);
    rm_dump_info_destroy (&info);
    rm_plan_destroy (&plan);
    return 0;
}
