/* remodel/compile.h, passes.h, names.h: the compiler, plan in, pipelines
 * out. Each kind's passes, the names of its side-by-side results, its
 * pipelines in exact canonical Extended JSON (as remodel compile prints a
 * stage; these are the pipelines the shell suites run on mongo-java-server
 * and mingo, pinned here so a change shows without a server), and the
 * reasons a step is not a pipeline. The tables behind them must have a
 * row for every kind. */
#include <bson/bson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile_impl.h"
#include "step_class.h"
#include "view_def.h"
#include "remodel/sha1.h"
#include "test.h"

static bool
parse (rm_plan_t *plan, const char *json)
{
    bson_error_t err;
    bool ok = rm_plan_parse (plan, json, strlen (json), &err);
    if (!ok)
        fprintf (stderr, "  plan: %s\n", err.message);
    T_CHECK (ok);
    return ok;
}

/* Names as for a plan file /plans/<stem>.json that does not exist (the
 * path is kept as given; the id then depends on nothing else). */
static void
names_for (rm_names_t *nm, const char *path)
{
    rm_names_identify (nm, path);
}

/* The stages of a pipeline as remodel compile prints them: one canonical
 * Extended JSON document a line. */
static char *
stages (const bson_t *pipeline)
{
    rm_buf_t b;
    rm_buf_init (&b);
    rm_compile_put_pipeline (&b, pipeline, "");
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}

static void
check_pipeline (const rm_compile_step_t *st, size_t pass, const char *want)
{
    char *got;
    T_CHECK (pass < st->n_passes);
    if (pass >= st->n_passes)
        return;
    got = stages (&st->passes[pass].pipeline);
    T_CHECK_STR (got, want);
    bson_free (got);
}

/* ---- the tables ---- */

static void
test_tables (void)
{
    for (int k = 0; k < RM_STEP_N_KINDS; k++) {
        /* A pass planner each; a compiler or the reason there is none,
         * never both. */
        T_CHECK (rm_step_classes[k].passes != NULL);
        T_CHECK ((rm_compile_kinds[k].compile != NULL) != (rm_compile_kinds[k].refusal != NULL));
        /* and a view's inverse or the reason there is none (view_table.c) */
        T_CHECK ((rm_view_kinds[k].view != NULL) != (rm_view_kinds[k].refusal != NULL));
    }
}

/* ---- passes ---- */

static const char all_kinds[] =
    "{\"remodel\": 1, \"steps\": ["
    "{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\", \"localField\": \"_id\","
    " \"foreignField\": \"owner\", \"as\": \"tasks\"}},"
    "{\"extract\": {\"from\": \"crm.people\", \"path\": \"addresses\", \"to\": \"crm.addresses\","
    " \"style\": \"parentRef\", \"parentField\": \"person_id\"}},"
    "{\"set\": {\"in\": \"crm.people\", \"fields\": {\"verified\": false}}},"
    "{\"unset\": {\"in\": \"crm.people\", \"fields\": [\"ssn\"]}},"
    "{\"rename\": {\"in\": \"crm.people\", \"fields\": {\"name\": \"fullName\"}}},"
    "{\"version\": {\"in\": \"crm.people\", \"value\": 2}},"
    "{\"denormalize\": {\"in\": \"logging.logmsg\", \"from\": \"logging.hosts\","
    " \"localField\": \"host\", \"fields\": {\"host_ip\": \"ipaddr\"}}},"
    "{\"summarize\": {\"into\": \"logging.hosts\", \"from\": \"logging.logmsg\","
    " \"localField\": \"_id\", \"foreignField\": \"host\", \"fields\": {\"n\": {\"$count\": {}}}}},"
    "{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", \"timeField\": \"ts\","
    " \"metaField\": \"sensor\", \"granularity\": \"hours\"}},"
    "{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings2\", \"timeField\": \"ts\","
    " \"metaField\": \"sensor\", \"granularity\": \"hours\"}},"
    "{\"copy\": {\"from\": \"crm.people\", \"to\": \"crm.vip\", \"filter\": {\"vip\": true}}},"
    "{\"move\": {\"from\": \"blog.posts\", \"to\": \"blog.old\", \"filter\": {\"old\": true}}},"
    "{\"delete\": {\"from\": \"blog.posts\", \"filter\": {\"spam\": true}}},"
    "{\"rekey\": {\"from\": \"school.courses\", \"to\": \"school.by_code\", \"id\": \"$code\"}}]}";

/* "drive>partner:keep,keep" for each pass ('-': no partner). */
static void
check_passes (const rm_step_t *s, bool in_place, const char *want)
{
    rm_pass_t p[RM_MAX_PASSES];
    bson_error_t err;
    size_t np = rm_step_passes (s, in_place, p, &err);
    char got[512] = "";
    size_t at = 0;
    for (size_t i = 0; i < np; i++) {
        at += (size_t) snprintf (got + at, sizeof got - at, "%s%zu>", i ? " " : "", p[i].drive);
        at += (size_t) (p[i].partner < 0 ? snprintf (got + at, sizeof got - at, "-")
                                         : snprintf (got + at, sizeof got - at, "%d", p[i].partner));
        for (size_t k = 0; k < p[i].n_keep; k++)
            at += (size_t) snprintf (got + at, sizeof got - at, "%c%s", k ? ',' : ':',
                                     p[i].keep[k]->text);
        if (p[i].series)
            at += (size_t) snprintf (got + at, sizeof got - at, " by %s", p[i].series);
    }
    if (!np)
        snprintf (got, sizeof got, "refused: %s", err.message);
    T_CHECK_STR (got, want);
}

static void
test_passes (void)
{
    rm_plan_t plan;
    if (!parse (&plan, all_kinds))
        return;
    T_CHECK (plan.n == RM_STEP_N_KINDS);
    /* The parents, with their children; then the children no parent takes. */
    check_passes (&plan.steps[0], false, "1>0:crm.people 0>1:crm.tasks");
    check_passes (&plan.steps[1], false, "0>-:crm.people,crm.addresses");
    for (size_t i = 2; i < 6; i++) {
        check_passes (&plan.steps[i], false, "0>-:crm.people");
        check_passes (&plan.steps[i], true, "0>-:crm.people");
    }
    check_passes (&plan.steps[6], false, "0>1:logging.logmsg");
    check_passes (&plan.steps[6], true, "0>1:logging.logmsg");
    check_passes (&plan.steps[7], false, "0>1:logging.hosts");
    check_passes (&plan.steps[8], false, "0>-:iot.buckets by sensor");
    check_passes (&plan.steps[9], false, "0>-:iot.readings2");
    /* copy, move, delete: one pass over from, each result by its _id */
    check_passes (&plan.steps[10], false, "0>-:crm.vip");
    check_passes (&plan.steps[11], false, "0>-:blog.posts,blog.old");
    check_passes (&plan.steps[12], false, "0>-:blog.posts");
    /* In place too, writing "to" and removing from "from" themselves. */
    check_passes (&plan.steps[10], true, "0>-:crm.vip");
    check_passes (&plan.steps[11], true, "0>-:blog.posts,blog.old");
    check_passes (&plan.steps[12], true, "0>-:blog.posts");
    /* Those that make new documents are not backfills. */
    check_passes (&plan.steps[0], true,
                  "refused: step 1 (embed): --in-place takes set, unset, rename, version, "
                  "denormalize, summarize, copy, move and delete (the others make new "
                  "documents: run them side by side, without --in-place)");
    check_passes (&plan.steps[8], true,
                  "refused: step 9 (bucketize): --in-place takes set, unset, rename, version, "
                  "denormalize, summarize, copy, move and delete (the others make new "
                  "documents: run them side by side, without --in-place)");
    /* rekey: offline only, side by side too */
    check_passes (&plan.steps[13], false,
                  "refused: step 14 (rekey): rekey runs offline only (remodel run over a dump): "
                  "online, a change to a document of \"from\" or to a reference cannot be "
                  "followed to the re-keyed documents; dump, run the plan, and restore");
    rm_plan_destroy (&plan);
}

/* How each output's results are found from their driver: "f=FIELD" (a
 * field naming it), "l=PATH@OUT" (listed by the driver's result in output
 * OUT), "-" (neither); then "traced" or "untraced", and "by_id". */
static void
check_traces (const char *json, const char *want)
{
    rm_plan_t plan;
    rm_pass_t p[RM_MAX_PASSES];
    bson_error_t err;
    char got[256] = "";
    size_t at = 0;
    if (!parse (&plan, json))
        return;
    T_CHECK (rm_step_passes (&plan.steps[0], false, p, &err) == 1);
    for (size_t k = 0; k < p[0].n_keep; k++)
        at += (size_t) (p[0].driver_field[k]
                            ? snprintf (got + at, sizeof got - at, "f=%s ", p[0].driver_field[k])
                        : p[0].driver_list[k]
                            ? snprintf (got + at, sizeof got - at, "l=%s@%zu ", p[0].driver_list[k],
                                        p[0].list_in[k])
                            : snprintf (got + at, sizeof got - at, "- "));
    snprintf (got + at, sizeof got - at, "%s%s", rm_pass_traced (&p[0]) ? "traced" : "untraced",
              p[0].by_id ? " by_id" : "");
    T_CHECK_STR (got, want);
    rm_plan_destroy (&plan);
}

/* The fields each pass of a one-step plan reads of its partners, as
 * "pass0|pass1": "a,b" (partner_some), "*" (whole), "-" (no partners). */
static void
check_partner_fields (const char *json, const char *want)
{
    rm_plan_t plan;
    rm_pass_t p[RM_MAX_PASSES];
    bson_error_t err;
    char got[512] = "";
    size_t at = 0, np;
    if (!parse (&plan, json))
        return;
    np = rm_step_passes (&plan.steps[0], false, p, &err);
    T_CHECK (np > 0);
    for (size_t i = 0; i < np && at < sizeof got; i++) {
        if (i)
            at += (size_t) snprintf (got + at, sizeof got - at, "|");
        if (p[i].partner < 0)
            at += (size_t) snprintf (got + at, sizeof got - at, "-");
        else if (!p[i].partner_some)
            at += (size_t) snprintf (got + at, sizeof got - at, "*");
        for (size_t f = 0; p[i].partner >= 0 && p[i].partner_some && f < p[i].n_partner_fields; f++)
            at += (size_t) snprintf (got + at, sizeof got - at, "%s%.*s", f ? "," : "",
                                     (int) p[i].partner_lens[f], p[i].partner_fields[f]);
    }
    T_CHECK_STR (got, want);
    rm_plan_destroy (&plan);
}

static void
test_passes_partner_fields (void)
{
#define STEP(x) "{\"remodel\": 1, \"steps\": [" x "]}"
    /* embed: whole children to embed; of the parents, which take a child. */
    check_partner_fields (STEP ("{\"embed\": {\"from\": \"c.tasks\", \"into\": \"c.people\", "
                                "\"localField\": \"pid\", \"foreignField\": \"owner.id\", "
                                "\"as\": \"tasks\", \"project\": {\"title\": 1}}}"),
                          "*|_id,pid");
    check_partner_fields (STEP ("{\"embed\": {\"from\": \"c.tasks\", \"into\": \"c.people\", "
                                "\"localField\": \"_id\", \"foreignField\": \"owner\", "
                                "\"as\": \"tasks\", \"keepSource\": true}}"),
                          "*");
    check_partner_fields (STEP ("{\"embed\": {\"from\": \"c.tasks\", \"into\": \"c.people\", "
                                "\"localField\": \"refs.id\", \"foreignField\": \"_id\", "
                                "\"as\": \"tasks\"}}"),
                          "*|_id,refs");
    /* denormalize: the fields copied, by their top-level name, each once. */
    check_partner_fields (STEP ("{\"denormalize\": {\"in\": \"l.msg\", \"from\": \"l.hosts\", "
                                "\"localField\": \"host\", \"foreignField\": \"name.short\", "
                                "\"fields\": {\"ip\": \"net.ip\", \"dc\": \"dc\", "
                                "\"mask\": \"net.mask\", \"n\": \"_id\"}}}"),
                          "_id,name,net,dc");
    /* summarize: the sort, every "$path" ($$ROOT.x, $$CURRENT.x too), a
     * sortBy's keys; a literal adds nothing. */
    check_partner_fields (STEP ("{\"summarize\": {\"into\": \"l.hosts\", \"from\": \"l.msg\", "
                                "\"localField\": \"_id\", \"foreignField\": \"host\", "
                                "\"sort\": {\"at.t\": 1}, \"fields\": {"
                                "\"n\": {\"$count\": {}}, \"s\": {\"$sum\": 1}, "
                                "\"m\": {\"$max\": \"$$ROOT.size.kb\"}, "
                                "\"p\": {\"$addToSet\": \"$$CURRENT.pid\"}, "
                                "\"l\": {\"$last\": {\"$literal\": \"text\"}}, "
                                "\"r\": {\"$topN\": {\"n\": 2, \"sortBy\": {\"rank.a\": -1, "
                                "\"w\": 1}, \"output\": {\"x\": \"$msg\", \"y\": [\"$lvl\", 1]}}}}}}"),
                          "_id,host,at,size,pid,rank,w,msg,lvl");
    /* $$ROOT itself: whole partners. */
    check_partner_fields (STEP ("{\"summarize\": {\"into\": \"l.hosts\", \"from\": \"l.msg\", "
                                "\"localField\": \"_id\", \"foreignField\": \"host\", "
                                "\"fields\": {\"m\": {\"$max\": \"$t\"}, "
                                "\"f\": {\"$first\": \"$$ROOT\"}}}}"),
                          "*");
    check_partner_fields (STEP ("{\"summarize\": {\"into\": \"l.hosts\", \"from\": \"l.msg\", "
                                "\"localField\": \"_id\", \"foreignField\": \"host\", "
                                "\"fields\": {\"f\": {\"$last\": {\"d\": \"$$CURRENT\"}}}}}"),
                          "*");
    /* No partners. */
    check_partner_fields (STEP ("{\"set\": {\"in\": \"a.b\", \"fields\": {\"x\": 1}}}"), "-");
#undef STEP
}

static void
test_passes_traces (void)
{
    static const char x[] = "{\"remodel\": 1, \"steps\": [{\"extract\": {\"from\": \"blog.posts\","
                            " \"path\": \"a.comments\", \"to\": \"blog.comments\", \"style\": ";
    char json[400];
    snprintf (json, sizeof json, "%s\"parentRef\"}}]}", x);
    check_traces (json, "f=_id f=parent_id traced");
    snprintf (json, sizeof json, "%s\"both\"}}]}", x);
    check_traces (json, "f=_id f=parent_id traced");
    /* childRefs: the children say nothing of their parent; the parent's
     * result lists them at the path. */
    snprintf (json, sizeof json, "%s\"childRefs\"}}]}", x);
    check_traces (json, "f=_id l=a.comments@0 traced");
    check_traces ("{\"remodel\": 1, \"steps\": [{\"unbucketize\": {\"from\": \"iot.b\", \"to\": "
                  "\"iot.r\", \"timeField\": \"ts\", \"metaField\": \"s\", \"granularity\": "
                  "\"hours\"}}]}",
                  "- untraced");
    check_traces ("{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"crm.people\", \"fields\": "
                  "{\"v\": 1}}}]}",
                  "f=_id traced by_id");
}

/* How a sync from a change log finds each pass's results again, one
 * letter a pass: t (traced: driver_field), f (followed otherwise: by
 * series or by what its drivers hold, with "holds" named), - (neither:
 * rescanned in full). */
static void
check_followed (const rm_step_t *s, const char *want)
{
    rm_pass_t p[RM_MAX_PASSES];
    bson_error_t err;
    size_t np = rm_step_passes (s, false, p, &err);
    char got[128] = "";
    size_t at = 0;
    for (size_t i = 0; i < np; i++) {
        at += (size_t) snprintf (got + at, sizeof got - at, "%s%s", i ? " " : "",
                                 rm_pass_traced (&p[i]) ? "t" : rm_pass_followed (&p[i]) ? "f" : "-");
        if (p[i].holds)
            at += (size_t) snprintf (got + at, sizeof got - at, " holds %s", p[i].holds);
    }
    T_CHECK_STR (got, want);
}

static void
test_passes_followed (void)
{
    rm_plan_t plan;
    static const char json[] =
        "{\"remodel\": 1, \"steps\": ["
        "{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", \"timeField\": \"ts\","
        " \"metaField\": \"sensor\", \"granularity\": \"hours\", \"keepSource\": true,"
        " \"onInvalid\": {\"to\": \"iot.bad\"}}},"
        "{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.back\", \"timeField\": \"ts\","
        " \"metaField\": \"sensor\", \"granularity\": \"hours\", \"as\": \"m\","
        " \"onInvalid\": {\"to\": \"iot.bad\"}}},"
        "{\"extract\": {\"from\": \"iot.buckets\", \"path\": \"measurements\", \"to\": \"iot.m\","
        " \"style\": \"childRefs\"}}]}";
    if (!parse (&plan, json))
        return;
    check_followed (&plan.steps[0], "f");
    check_followed (&plan.steps[1], "f holds m f");
    check_followed (&plan.steps[2], "t");
    rm_plan_destroy (&plan);
    if (!parse (&plan, all_kinds))
        return;
    check_followed (&plan.steps[0], "t t");
    check_followed (&plan.steps[2], "t");
    check_followed (&plan.steps[8], "f");
    check_followed (&plan.steps[9], "f holds measurements");
    rm_plan_destroy (&plan);
}

/* Each pass's trace (rm_trace_t), which shell-ext/online_followers.c's
 * rows are keyed by: one letter a pass, n none, i _id, f a field, l the
 * driver's list, s series, h what the drivers hold. */
static void
check_trace (const rm_step_t *s, const char *want)
{
    static const char letter[RM_TRACE_N] = {[RM_TRACE_NONE] = 'n', [RM_TRACE_ID] = 'i',
                                            [RM_TRACE_FIELD] = 'f', [RM_TRACE_LIST] = 'l',
                                            [RM_TRACE_SERIES] = 's', [RM_TRACE_HELD] = 'h'};
    rm_pass_t p[RM_MAX_PASSES];
    bson_error_t err;
    size_t np = rm_step_passes (s, false, p, &err);
    char got[RM_MAX_PASSES + 1] = "";
    for (size_t i = 0; i < np; i++)
        got[i] = (unsigned) p[i].trace < RM_TRACE_N ? letter[p[i].trace] : '?';
    T_CHECK_STR (got, want);
}

static void
test_passes_trace (void)
{
    rm_plan_t plan;
    const char *want[] = {"ii", "f", "i", "i", "i", "i", "i", "i", "s", "h", "i", "i", "i", ""};
    if (!parse (&plan, all_kinds))
        return;
    for (size_t i = 0; i < plan.n; i++)
        check_trace (&plan.steps[i], want[i]);
    /* bucketize: the buckets hold their readings' _ids under `as`. */
    {
        rm_pass_t p[RM_MAX_PASSES];
        bson_error_t err;
        T_CHECK (rm_step_passes (&plan.steps[8], false, p, &err) == 1 && p[0].held_in &&
                 !strcmp (p[0].held_in, plan.steps[8].u.bucketize.as));
    }
    rm_plan_destroy (&plan);
    /* childRefs: listed by the parent's result; unbucketize's readings
     * set aside: held too. (A step writing _id, whose results named no
     * driver, is refused at plan load now.) */
    if (!parse (&plan, "{\"remodel\": 1, \"steps\": [{\"extract\": {\"from\": \"blog.posts\","
                       " \"path\": \"c\", \"to\": \"blog.c\", \"style\": \"childRefs\"}},"
                       "{\"unbucketize\": {\"from\": \"iot.b\", \"to\": \"iot.r\", \"timeField\":"
                       " \"ts\", \"metaField\": \"s\", \"granularity\": \"hours\","
                       " \"onInvalid\": {\"to\": \"iot.bad\"}}}]}"))
        return;
    check_trace (&plan.steps[0], "l");
    check_trace (&plan.steps[1], "hh");
    rm_plan_destroy (&plan);
}

static void
test_passes_variants (void)
{
    rm_plan_t plan;
    static const char json[] =
        "{\"remodel\": 1, \"steps\": ["
        "{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\", \"localField\": \"_id\","
        " \"foreignField\": \"owner\", \"as\": \"tasks\", \"keepSource\": true}},"
        "{\"denormalize\": {\"in\": \"crm.people\", \"from\": \"crm.bosses\","
        " \"localField\": \"boss\", \"fields\": {\"boss_name\": \"name\"}}},"
        "{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", \"timeField\": \"ts\","
        " \"metaField\": [\"sensor\", \"site\"], \"granularity\": \"hours\"}},"
        "{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings2\","
        " \"timeField\": \"ts\", \"metaField\": \"sensor\", \"granularity\": \"hours\","
        " \"onInvalid\": {\"to\": \"iot.bad\"}}}]}";
    if (!parse (&plan, json))
        return;
    /* keepSource: the children stay where they are, one pass. */
    check_passes (&plan.steps[0], false, "1>0:crm.people");
    /* The parser refuses a join of a namespace with itself; were one to
     * come through, the passes would too (a step copied, not destroyed). */
    {
        rm_step_t self = plan.steps[1];
        self.u.denorm.from = self.u.denorm.in;
        check_passes (&self, false,
                      "refused: step 2 (denormalize): a namespace denormalized from itself runs "
                      "offline only");
    }
    check_passes (&plan.steps[2], false,
                  "refused: step 3 (bucketize): bucketize by several metaFields runs offline only "
                  "(the online mode reads the readings series by series of one field)");
    /* The readings set aside come back after the others. */
    check_passes (&plan.steps[3], false, "0>-:iot.readings2 1>-:iot.readings2");
    rm_plan_destroy (&plan);
}

/* ---- names ---- */

static void
test_names (void)
{
    char dir[] = "/tmp/remodel-test-compile-XXXXXX", path[PATH_MAX], real[PATH_MAX], want[200],
         buf[200];
    unsigned char sha[20];
    rm_names_t nm;
    rm_plan_t plan;
    bson_error_t err;
    FILE *f;

    T_CHECK (mkdtemp (dir) != NULL);
    snprintf (path, sizeof path, "%s/v1.2 plan.json", dir);
    f = fopen (path, "w");
    T_CHECK (f != NULL);
    if (!f)
        return;
    fputs (all_kinds, f);
    fclose (f);
    names_for (&nm, path);
    /* The stem with the dot and space made _, then the hash of the full path. */
    T_CHECK (realpath (path, real) != NULL);
    rm_sha1 (real, strlen (real), sha);
    snprintf (want, sizeof want, "v1_2_plan_%02x%02x%02x%02x%02x%02x", sha[0], sha[1], sha[2],
              sha[3], sha[4], sha[5]);
    T_CHECK_STR (nm.id, want);
    T_CHECK_STR (nm.name, "v1.2 plan.json");
    T_CHECK_STR (nm.path, real);
    T_CHECK (strlen (nm.digest) == 16);
    if (!parse (&plan, all_kinds))
        return;
    rm_name_target (&nm, &plan.steps[0], &plan.steps[0].u.embed.into, buf, sizeof buf);
    snprintf (want, sizeof want, "people_remodel_%s_1", nm.id);
    T_CHECK_STR (buf, want);
    rm_name_backup (&nm, "people", buf, sizeof buf);
    snprintf (want, sizeof want, "people_remodel_%s_backup", nm.id);
    T_CHECK_STR (buf, want);
    rm_name_inplace_backup (&nm, &plan.steps[6], buf, sizeof buf);
    snprintf (want, sizeof want, "backup.%s.7", nm.id);
    T_CHECK_STR (buf, want);

    /* Side by side, each step reads where the one before left a namespace. */
    T_CHECK_STR (rm_name_now (&nm, &plan.steps[2].u.fields.in), "people");
    /* the plan online runs: all but its last step, a rekey (offline only,
     * which the names refuse, as the passes do) */
    plan.n--;
    T_CHECK (!rm_names_of_plan (&nm, &(rm_plan_t){plan.steps, plan.n + 1}, &err));
    T_CHECK (rm_names_of_plan (&nm, &plan, &err));
    plan.n++;
    snprintf (want, sizeof want, "people_remodel_%s_6", nm.id);
    T_CHECK_STR (rm_name_now (&nm, &plan.steps[2].u.fields.in), want);
    snprintf (want, sizeof want, "readings_remodel_%s_9", nm.id);
    T_CHECK_STR (rm_name_now (&nm, &plan.steps[8].u.bucketize.from), want); /* emptied */
    snprintf (want, sizeof want, "tasks_remodel_%s_1", nm.id);
    T_CHECK_STR (rm_name_now (&nm, &plan.steps[0].u.embed.from), want);
    rm_names_clear (&nm);
    T_CHECK (nm.n_moved == 0);
    T_CHECK_STR (rm_name_now (&nm, &plan.steps[2].u.fields.in), "people");

    /* The same file's name in another folder: another id. */
    {
        rm_names_t other;
        names_for (&other, "/elsewhere/v1.2 plan.json");
        T_CHECK (strncmp (other.id, "v1_2_plan_", 10) == 0 && strcmp (other.id, nm.id) != 0);
        T_CHECK_STR (other.path, "/elsewhere/v1.2 plan.json");
    }
    rm_plan_destroy (&plan);
    unlink (path);
    rmdir (dir);
}

/* ---- the compiler ---- */

static void
compile_json (const char *json, const char *version, rm_plan_t *plan, rm_names_t *nm,
              rm_compile_plan_t *c)
{
    rm_compile_version_t v;
    bson_error_t err;
    T_CHECK (rm_compile_version_parse (version, &v));
    memset (c, 0, sizeof *c);
    if (!parse (plan, json))
        return;
    names_for (nm, "/plans/p.json");
    T_CHECK (rm_compile_plan (plan, nm, v, c, &err));
}

static void
compile_done (rm_plan_t *plan, rm_names_t *nm, rm_compile_plan_t *c)
{
    rm_compile_plan_destroy (c);
    rm_names_clear (nm);
    rm_plan_destroy (plan);
}

static void
test_version_parse (void)
{
    rm_compile_version_t v;
    T_CHECK (rm_compile_version_parse ("5.0", &v) && v.major == 5 && v.minor == 0);
    T_CHECK (rm_compile_version_parse ("4.2", &v) && v.major == 4 && v.minor == 2);
    T_CHECK (rm_compile_version_parse ("5.2.14", &v) && v.major == 5 && v.minor == 2);
    T_CHECK (rm_compile_version_parse ("6", &v) && v.major == 6 && v.minor == 0);
    T_CHECK (!rm_compile_version_parse ("five", &v));
    T_CHECK (!rm_compile_version_parse ("2.6", &v));
    T_CHECK (!rm_compile_version_parse ("5.", &v));
    T_CHECK (!rm_compile_version_parse ("5.0.", &v));
    T_CHECK (!rm_compile_version_parse ("5.0x", &v));
}

static void
test_compile_fields (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    compile_json ("{\"remodel\": 1, \"steps\": ["
                  "{\"set\": {\"in\": \"crm.people\", \"fields\": {\"ok\": false, "
                  "\"n\": {\"$numberLong\": \"7\"}}}},"
                  "{\"unset\": {\"in\": \"crm.people\", \"fields\": [\"ssn\", \"tmp\"]}},"
                  "{\"rename\": {\"in\": \"crm.people\", \"fields\": {\"name\": \"fullName\"}}},"
                  "{\"version\": {\"in\": \"crm.people\", \"value\": 2}}]}",
                  "5.0", &plan, &nm, &c);
    T_CHECK (c.n == 4);
    if (c.n != 4)
        return;
    T_CHECK_STR (nm.id, "p_3bf20557b1d4");
    /* Each step reads the collection the one before wrote. */
    T_CHECK_STR (c.steps[0].passes[0].coll, "people");
    T_CHECK_STR (c.steps[1].passes[0].coll, "people_remodel_p_3bf20557b1d4_1");
    T_CHECK_STR (c.steps[3].passes[0].target, "people_remodel_p_3bf20557b1d4_4");
    check_pipeline (&c.steps[0], 0,
                    "[\n"
                    "{ \"$addFields\" : { \"ok\" : false, \"n\" : { \"$numberLong\" : \"7\" } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"people_remodel_p_3bf20557b1d4_1\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    check_pipeline (&c.steps[1], 0,
                    "[\n"
                    "{ \"$project\" : { \"ssn\" : { \"$numberInt\" : \"0\" }, \"tmp\" : { \"$numberInt\" : \"0\" } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"people_remodel_p_3bf20557b1d4_2\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    check_pipeline (&c.steps[2], 0,
                    "[\n"
                    "{ \"$addFields\" : { \"fullName\" : { \"$cond\" : [ { \"$in\" : [ \"name\", { \"$map\" : { \"input\" : { \"$ifNull\" : [ { \"$objectToArray\" : \"$$ROOT\" }, [  ] ] }, \"as\" : \"f\", \"in\" : \"$$f.k\" } } ] }, \"$name\", \"$fullName\" ] } } },\n"
                    "{ \"$project\" : { \"name\" : { \"$numberInt\" : \"0\" } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"people_remodel_p_3bf20557b1d4_3\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    check_pipeline (&c.steps[3], 0,
                    "[\n"
                    "{ \"$addFields\" : { \"schemaVersion\" : { \"$literal\" : { \"$numberInt\" : \"2\" } } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"people_remodel_p_3bf20557b1d4_4\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    compile_done (&plan, &nm, &c);
}

static void
test_compile_embed (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    compile_json ("{\"remodel\": 1, \"steps\": ["
                  "{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\", "
                  "\"localField\": \"_id\", \"foreignField\": \"owner\", \"as\": \"tasks\", "
                  "\"sort\": {\"due\": 1}}}]}",
                  "5.0", &plan, &nm, &c);
    T_CHECK (c.n == 1 && c.steps[0].n_passes == 2);
    if (c.n != 1 || c.steps[0].n_passes != 2)
        return;
    T_CHECK_STR (c.steps[0].passes[0].drive->text, "crm.people");
    T_CHECK_STR (c.steps[0].passes[1].drive->text, "crm.tasks");
    check_pipeline (&c.steps[0], 0,
                    "[\n"
                    "{ \"$lookup\" : { \"from\" : \"tasks\", \"localField\" : \"_id\", \"foreignField\" : \"owner\", \"as\" : \"__rm\" } },\n"
                    "{ \"$unwind\" : { \"path\" : \"$__rm\", \"includeArrayIndex\" : \"__rm_i\", \"preserveNullAndEmptyArrays\" : true } },\n"
                    "{ \"$addFields\" : { \"__rm_pos\" : { \"$cond\" : [ { \"$isArray\" : \"$_id\" }, { \"$indexOfArray\" : [ \"$_id\", \"$__rm.owner\" ] }, { \"$numberInt\" : \"0\" } ] } } },\n"
                    /* ties on "due": the parent's references, then _id, as
                     * the engine (never the $lookup's own order, __rm_i) */
                    "{ \"$sort\" : { \"_id\" : { \"$numberInt\" : \"1\" }, \"__rm.due\" : { \"$numberInt\" : \"1\" }, \"__rm_pos\" : { \"$numberInt\" : \"1\" }, \"__rm._id\" : { \"$numberInt\" : \"1\" }, \"__rm_i\" : { \"$numberInt\" : \"1\" } } },\n"
                    "{ \"$group\" : { \"_id\" : \"$_id\", \"__rm_doc\" : { \"$first\" : \"$$ROOT\" }, \"__rm_kids\" : { \"$push\" : { \"$cond\" : [ { \"$eq\" : [ \"$__rm_i\", null ] }, null, \"$__rm\" ] } } } },\n"
                    "{ \"$replaceRoot\" : { \"newRoot\" : { \"$mergeObjects\" : [ \"$__rm_doc\", { \"__rm_kids\" : { \"$filter\" : { \"input\" : \"$__rm_kids\", \"cond\" : { \"$ne\" : [ \"$$this\", null ] } } } } ] } } },\n"
                    "{ \"$addFields\" : { \"tasks\" : \"$__rm_kids\" } },\n"
                    "{ \"$project\" : { \"__rm\" : { \"$numberInt\" : \"0\" }, \"__rm_i\" : { \"$numberInt\" : \"0\" }, \"__rm_pos\" : { \"$numberInt\" : \"0\" }, \"__rm_kids\" : { \"$numberInt\" : \"0\" } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"people_remodel_p_3bf20557b1d4_1\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    /* The orphans: looked up the other way, in the parents as they are
     * before this step (this step's own result is another collection). */
    check_pipeline (&c.steps[0], 1,
                    "[\n"
                    "{ \"$lookup\" : { \"from\" : \"people\", \"localField\" : \"owner\", \"foreignField\" : \"_id\", \"as\" : \"__rm\" } },\n"
                    "{ \"$match\" : { \"__rm\" : { \"$size\" : { \"$numberInt\" : \"0\" } } } },\n"
                    "{ \"$project\" : { \"__rm\" : { \"$numberInt\" : \"0\" } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"tasks_remodel_p_3bf20557b1d4_1\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    /* Exact unless a child's foreignField holds an array. */
    T_CHECK (c.steps[0].guard_ns == &plan.steps[0].u.embed.from);
    T_CHECK_STR (c.steps[0].guard_coll, "tasks");
    T_CHECK_STR (c.steps[0].guard_field, "owner");
    T_CHECK (c.steps[0].n_notes == 2);
    compile_done (&plan, &nm, &c);
}

static void
test_compile_denormalize (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    compile_json ("{\"remodel\": 1, \"steps\": ["
                  "{\"denormalize\": {\"in\": \"logging.logmsg\", \"from\": \"logging.hosts\","
                  " \"localField\": \"host\", \"fields\": {\"host_ip\": \"ipaddr\"}}}]}",
                  "5.0", &plan, &nm, &c);
    T_CHECK (c.n == 1 && c.steps[0].n_passes == 1);
    if (c.n != 1 || c.steps[0].n_passes != 1)
        return;
    check_pipeline (&c.steps[0], 0,
                    "[\n"
                    "{ \"$lookup\" : { \"from\" : \"hosts\", \"localField\" : \"host\", \"foreignField\" : \"_id\", \"as\" : \"__rm\" } },\n"
                    "{ \"$addFields\" : { \"__rm_n\" : { \"$size\" : \"$__rm\" }, \"__rm\" : { \"$arrayElemAt\" : [ \"$__rm\", { \"$numberInt\" : \"0\" } ] } } },\n"
                    "{ \"$addFields\" : { \"host_ip\" : { \"$cond\" : [ { \"$and\" : [ { \"$ne\" : [ { \"$ifNull\" : [ \"$host\", null ] }, null ] }, { \"$eq\" : [ { \"$isArray\" : \"$host\" }, false ] } ] }, { \"$cond\" : [ { \"$gt\" : [ \"$__rm_n\", { \"$numberInt\" : \"0\" } ] }, { \"$cond\" : [ { \"$in\" : [ \"ipaddr\", { \"$map\" : { \"input\" : { \"$ifNull\" : [ { \"$objectToArray\" : \"$__rm\" }, [  ] ] }, \"as\" : \"f\", \"in\" : \"$$f.k\" } } ] }, \"$__rm.ipaddr\", \"$host_ip\" ] }, \"$host_ip\" ] }, \"$host_ip\" ] } } },\n"
                    "{ \"$project\" : { \"__rm\" : { \"$numberInt\" : \"0\" }, \"__rm_n\" : { \"$numberInt\" : \"0\" } } },\n"
                    "{ \"$merge\" : { \"into\" : { \"db\" : \"logging\", \"coll\" : \"logmsg_remodel_p_3bf20557b1d4_1\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]");
    T_CHECK_STR (c.steps[0].guard_field, "host");
    compile_done (&plan, &nm, &c);
}

/* $topN as itself from 5.2; below, the rows sorted by its sortBy, pushed
 * and sliced. */
static void
test_compile_summarize (void)
{
    static const char json[] =
        "{\"remodel\": 1, \"steps\": ["
        "{\"summarize\": {\"into\": \"logging.hosts\", \"from\": \"logging.logmsg\","
        " \"localField\": \"_id\", \"foreignField\": \"host\", \"fields\": {"
        "\"n\": {\"$count\": {}}, \"top\": {\"$topN\": {\"n\": 2, \"sortBy\": {\"time\": -1},"
        " \"output\": \"$time\"}}}}}]}";
    static const char *const want40 =
        "[\n"
        "{ \"$lookup\" : { \"from\" : \"logmsg\", \"localField\" : \"_id\", \"foreignField\" : \"host\", \"as\" : \"__rm\" } },\n"
        "{ \"$unwind\" : { \"path\" : \"$__rm\", \"includeArrayIndex\" : \"__rm_i\", \"preserveNullAndEmptyArrays\" : true } },\n"
        "{ \"$sort\" : { \"_id\" : { \"$numberInt\" : \"1\" }, \"__rm.time\" : { \"$numberInt\" : \"-1\" }, \"__rm._id\" : { \"$numberInt\" : \"1\" }, \"__rm_i\" : { \"$numberInt\" : \"1\" } } },\n"
        "{ \"$group\" : { \"_id\" : \"$_id\", \"__rm_doc\" : { \"$first\" : \"$$ROOT\" }, \"__rm_n\" : { \"$sum\" : { \"$cond\" : [ { \"$eq\" : [ \"$__rm_i\", null ] }, { \"$numberInt\" : \"0\" }, { \"$numberInt\" : \"1\" } ] } }, \"__rm_f0\" : { \"$sum\" : { \"$cond\" : [ { \"$eq\" : [ \"$__rm_i\", null ] }, { \"$numberInt\" : \"0\" }, { \"$numberInt\" : \"1\" } ] } }, \"__rm_f1\" : { \"$push\" : { \"$cond\" : [ { \"$eq\" : [ \"$__rm_i\", null ] }, null, { \"$ifNull\" : [ \"$__rm.time\", null ] } ] } } } },\n"
        "{ \"$replaceRoot\" : { \"newRoot\" : { \"$mergeObjects\" : [ \"$__rm_doc\", { \"__rm_f0\" : \"$__rm_f0\", \"__rm_f1\" : { \"$cond\" : [ { \"$eq\" : [ \"$__rm_n\", { \"$numberInt\" : \"0\" } ] }, [  ], { \"$slice\" : [ \"$__rm_f1\", { \"$numberInt\" : \"2\" } ] } ] } } ] } } },\n"
        "{ \"$addFields\" : { \"n\" : \"$__rm_f0\", \"top\" : \"$__rm_f1\" } },\n"
        "{ \"$project\" : { \"__rm\" : { \"$numberInt\" : \"0\" }, \"__rm_i\" : { \"$numberInt\" : \"0\" }, \"__rm_n\" : { \"$numberInt\" : \"0\" }, \"__rm_f0\" : { \"$numberInt\" : \"0\" }, \"__rm_f1\" : { \"$numberInt\" : \"0\" } } },\n"
        "{ \"$merge\" : { \"into\" : { \"db\" : \"logging\", \"coll\" : \"hosts_remodel_p_3bf20557b1d4_1\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]";
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    char *got;

    compile_json (json, "4.0", &plan, &nm, &c);
    check_pipeline (&c.steps[0], 0, want40);
    compile_done (&plan, &nm, &c);

    compile_json (json, "5.2", &plan, &nm, &c);
    T_CHECK (c.n == 1 && c.steps[0].n_passes == 1);
    if (c.n == 1 && c.steps[0].n_passes == 1) {
        got = stages (&c.steps[0].passes[0].pipeline);
        T_CHECK (strstr (got, "\"__rm_f1\" : { \"$topN\" : { \"n\" : { \"$numberInt\" : \"2\" }, "
                              "\"sortBy\" : { \"__rm.time\" : { \"$numberInt\" : \"-1\" } }, "
                              "\"output\" : { \"$cond\" : [ { \"$eq\" : [ \"$__rm_i\", null ] }, "
                              "null, \"$__rm.time\" ] } } }") != NULL);
        T_CHECK (strstr (got, "$slice") == NULL);
        bson_free (got);
    }
    compile_done (&plan, &nm, &c);
}

static void
check_reason (const char *json, const char *version, size_t step, const char *want)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    compile_json (json, version, &plan, &nm, &c);
    T_CHECK (step < c.n);
    if (step < c.n) {
        T_CHECK (c.steps[step].n_passes == 0);
        T_CHECK_STR (c.steps[step].reason, want);
    }
    compile_done (&plan, &nm, &c);
}

static void
test_refusals (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;

    /* The kinds no pipeline computes, with the table's reason; the steps
     * after them still compile, reading their results. */
    compile_json (all_kinds, "5.0", &plan, &nm, &c);
    T_CHECK (c.n == RM_STEP_N_KINDS);
    for (size_t i = 0; i < c.n; i++) {
        const rm_compile_kind_t *k = &rm_compile_kinds[plan.steps[i].kind];
        rm_pass_t p[RM_MAX_PASSES];
        bson_error_t why;
        /* a kind online refuses (rekey) gives that reason first */
        if (!rm_step_passes (&plan.steps[i], false, p, &why)) {
            T_CHECK (c.steps[i].n_passes == 0);
            T_CHECK_STR (c.steps[i].reason, why.message);
        } else if (k->refusal) {
            T_CHECK (c.steps[i].n_passes == 0);
            T_CHECK_STR (c.steps[i].reason, k->refusal);
        } else {
            T_CHECK (c.steps[i].n_passes > 0);
        }
    }
    T_CHECK_STR (c.steps[2].passes[0].coll, "people_remodel_p_3bf20557b1d4_2");
    compile_done (&plan, &nm, &c);

    check_reason ("{\"remodel\": 1, \"steps\": [{\"extract\": {\"from\": \"crm.people\","
                  " \"path\": \"addresses\", \"to\": \"crm.addresses\", \"style\": \"parentRef\","
                  " \"parentField\": \"person_id\"}}]}",
                  "5.0", 0,
                  "an element without an _id of its own gets a deterministic ObjectId (a hash of "
                  "the parent's _id, the path and the position), which no aggregation expression "
                  "computes");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"rename\": {\"in\": \"crm.people\","
                  " \"fields\": {\"a.b\": \"c\"}}}]}",
                  "5.0", 0,
                  "\"a.b\" is a dotted path: through one, $addFields and $project reach into every "
                  "element of an array on the way and replace a scalar in the way, where the step "
                  "does not; compile takes top-level fields");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"crm.tasks\","
                  " \"into\": \"crm.people\", \"localField\": \"_id\", \"foreignField\": \"owner\","
                  " \"as\": \"tasks\", \"filter\": {\"v\": {\"$lt\": 2}}}}]}",
                  "5.0", 0,
                  "a step with a filter runs client-side: its results are not its own documents, "
                  "so a pipeline cannot keep the documents it leaves out as they are");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"crm.tasks\","
                  " \"into\": \"crm.people\", \"localField\": \"_id\", \"foreignField\": \"owner\","
                  " \"as\": \"tasks\", \"match\": {\"done\": false}}}]}",
                  "5.0", 0,
                  "a step with a match runs client-side: its $lookup would need a pipeline the "
                  "compiler does not write yet");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"rename\": {\"in\": \"crm.people\","
                  " \"fields\": {\"a\": \"__rm_x\"}}}]}",
                  "5.0", 0,
                  "a field starting with __rm, the compiled pipelines' scratch fields");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"other.tasks\","
                  " \"into\": \"crm.people\", \"localField\": \"_id\", \"foreignField\": \"owner\","
                  " \"as\": \"tasks\"}}]}",
                  "5.0", 0,
                  "crm.people and other.tasks are in different databases, and $lookup joins "
                  "collections of one database");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"denormalize\": {\"in\": \"crm.tasks\","
                  " \"from\": \"crm.people\", \"localField\": \"owner\", \"fields\": {\"who\": \"name\"},"
                  " \"onMissing\": \"error\"}}]}",
                  "5.0", 0, "onMissing \"error\": a pipeline cannot stop at a document");
    check_reason ("{\"remodel\": 1, \"steps\": [{\"summarize\": {\"into\": \"logging.hosts\","
                  " \"from\": \"logging.logmsg\", \"localField\": \"_id\", \"foreignField\": \"host\","
                  " \"fields\": {\"a\": {\"$first\": \"$time\"}, \"t\": {\"$topN\": {\"n\": 1,"
                  " \"sortBy\": {\"time\": 1}, \"output\": \"$time\"}}}}}]}",
                  "4.0", 0,
                  "$topN and $bottomN need MongoDB 5.2 (--server-version 5.2): below it, compile "
                  "sorts the children by one sortBy and slices, which leaves no order for "
                  "\"sort\", $first, $last, $addToSet (which keeps the order it meets values in) "
                  "or a second $topN/$bottomN");
    /* A step the online mode cannot run: its passes' reason. */
    check_reason ("{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"iot.readings\","
                  " \"to\": \"iot.buckets\", \"timeField\": \"ts\", \"metaField\": [\"a\", \"b\"],"
                  " \"granularity\": \"hours\"}}]}",
                  "5.0", 0,
                  "step 1 (bucketize): bucketize by several metaFields runs offline only (the "
                  "online mode reads the readings series by series of one field)");
    /* Without one, the series is the whole collection, read for each change. */
    check_reason ("{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"iot.readings\","
                  " \"to\": \"iot.buckets\", \"timeField\": \"ts\", \"granularity\": \"hours\"}}]}",
                  "5.0", 0,
                  "step 1 (bucketize): bucketize without metaField runs offline only (the online "
                  "mode reads and recomputes the readings series by series: here one series, the "
                  "whole collection, read again for each change)");
}

/* The document remodel compile --format pipeline prints, whole. */
static void
test_print (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    char *text;
    compile_json ("{\"remodel\": 1, \"steps\": ["
                  "{\"extract\": {\"from\": \"crm.people\", \"path\": \"addresses\","
                  " \"to\": \"crm.addresses\", \"style\": \"parentRef\", \"parentField\": \"pid\"}},"
                  "{\"unset\": {\"in\": \"crm.people\", \"fields\": [\"ssn\"]}}]}",
                  "4.2", &plan, &nm, &c);
    text = rm_compile_print_pipelines (&nm, &c, true);
    T_CHECK_STR (text,
                 "{\"remodel\": 1, \"plan\": \"p.json\", \"serverVersion\": \"4.2\",\n"
                 " \"steps\": [\n"
                 "  {\"step\": 1, \"op\": \"extract\", \"serverSide\": false, \"reason\": \"an element without an _id of its own gets a deterministic ObjectId (a hash of the parent's _id, the path and the position), which no aggregation expression computes\"},\n"
                 "  {\"step\": 2, \"op\": \"unset\", \"serverSide\": true, \"passes\": [\n"
                 "   {\"pass\": 1, \"ns\": \"crm.people\", \"aggregate\": {\"db\": \"crm\", \"coll\": \"people_remodel_p_3bf20557b1d4_1\"},\n"
                 "    \"pipeline\": [\n"
                 "     { \"$project\" : { \"ssn\" : { \"$numberInt\" : \"0\" } } },\n"
                 "     { \"$merge\" : { \"into\" : { \"db\" : \"crm\", \"coll\" : \"people_remodel_p_3bf20557b1d4_2\" }, \"on\" : \"_id\", \"whenMatched\" : \"replace\", \"whenNotMatched\" : \"insert\" } }]}]}],\n"
                 " \"results\": {\"crm.addresses\": {\"db\": \"crm\", \"coll\": \"addresses_remodel_p_3bf20557b1d4_1\"},\n"
                 "   \"crm.people\": {\"db\": \"crm\", \"coll\": \"people_remodel_p_3bf20557b1d4_2\"}}}\n");
    bson_free (text);
    text = rm_compile_print_mongosh (&nm, &c);
    T_CHECK (strstr (text, "const PLAN = {name: \"p.json\", id: \"p_3bf20557b1d4\", path: "
                           "\"/plans/p.json\", digest: \"0000000000000000\", steps: [\n"
                           "  {step: 1, op: \"extract\", serverSide: false, reason: ") != NULL);
    bson_free (text);
    compile_done (&plan, &nm, &c);
}

/* --format mongosh --views: the views' part, before the steps' runner,
 * and nothing of it without --views. */
static void
test_print_mongosh_views (void)
{
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;
    char *text, *why = NULL;
    const char *views, *runner;
    compile_json ("{\"remodel\": 1, \"steps\": ["
                  "{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\", \"localField\": \"_id\","
                  " \"foreignField\": \"owner\", \"as\": \"tasks\", \"project\": {\"owner\": 0}}},"
                  "{\"set\": {\"in\": \"crm.notes\", \"fields\": {\"v\": 2}}}]}",
                  "5.0", &plan, &nm, &c);
    text = rm_compile_print_mongosh (&nm, &c);
    T_CHECK (strstr (text, "VIEWS") == NULL && strstr (text, "createView") == NULL);
    bson_free (text);
    text = rm_compile_print_mongosh_views (&nm, &c, &plan, &why);
    views = strstr (text, "const VIEWS = [\n  EJSON.deserialize({ \"db\" : \"crm\", \"command\" : "
                          "{ \"create\" : \"tasks_before\", \"viewOn\" : \"people\", ");
    runner = strstr (text, "// ---- the runner");
    T_CHECK (views != NULL && runner != NULL && views < runner);
    /* the children's view and the parents', then the end of the list;
     * the set's namespace has none, and the reason */
    T_CHECK (views && strstr (views, "people_before") && strstr (views, "\n];\n") &&
             strstr (views, "people_before") < strstr (views, "\n];\n") && !strstr (views, "notes"));
    T_CHECK_STR (why, "no view of crm.notes: step 2 (set): set wrote computed values over the "
                      "old ones: no view gives them back\n");
    T_CHECK (strstr (text, "renamed aside") && strstr (text, "if (typeof views === 'boolean' && views)"));
    bson_free (text);
    bson_free (why);
    compile_done (&plan, &nm, &c);
}

int
main (void)
{
    T_RUN (test_tables); /* first: a zeroed row can crash the others */
    T_RUN (test_passes);
    T_RUN (test_passes_variants);
    T_RUN (test_passes_traces);
    T_RUN (test_passes_partner_fields);
    T_RUN (test_passes_followed);
    T_RUN (test_passes_trace);
    T_RUN (test_names);
    T_RUN (test_version_parse);
    T_RUN (test_compile_fields);
    T_RUN (test_compile_embed);
    T_RUN (test_compile_denormalize);
    T_RUN (test_compile_summarize);
    T_RUN (test_refusals);
    T_RUN (test_print);
    T_RUN (test_print_mongosh_views);
    return t_done ();
}
