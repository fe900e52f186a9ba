/* bucketize and unbucketize in a plan (step_class.h): their keys read,
 * then freed; their namespaces, for plan.c. Both take the same keys into
 * the same struct (plan.h): unbucketize reads them as the bucketize it
 * reverses. Their runs are in step_bucket.c and step_unbucket.c. */
#include <string.h>

#include "plan_parse.h"

/* metaField: a field name or a list of distinct names; left out, every
 * reading is of one series (an empty list is more likely a slip). */
static bool
get_meta (rm_plan_ctx_t *c, const bson_iter_t *it, size_t *n, char ***names)
{
    bson_iter_t sub;
    if (BSON_ITER_HOLDS_UTF8 (it)) {
        *names = bson_malloc0 (sizeof **names);
        *n = 1;
        return rm_plan_get_field_name (c, it, &(*names)[0]);
    }
    if (!BSON_ITER_HOLDS_ARRAY (it) || !bson_iter_recurse (it, &sub))
        return rm_plan_fail (c, "metaField",
                             "must be a field name or a list of field names, not %s",
                             rm_plan_type_name (bson_iter_type (it)));
    while (bson_iter_next (&sub)) {
        const char *name = BSON_ITER_HOLDS_UTF8 (&sub) ? bson_iter_utf8 (&sub, NULL) : NULL;
        if (!name)
            return rm_plan_fail (c, "metaField", "must list field names (strings)");
        if (!*name || strchr (name, '.') || name[0] == '$')
            return rm_plan_fail (c, "metaField",
                                 "\"%s\" must be a plain field name (no dots, no $)", name);
        *names = bson_realloc (*names, (*n + 1) * sizeof **names);
        (*names)[(*n)++] = bson_strdup (name);
        for (size_t i = 0; i + 1 < *n; i++)
            if (!strcmp ((*names)[i], name))
                return rm_plan_fail (c, "metaField", "\"%s\" is named twice", name);
    }
    if (*n == 0)
        return rm_plan_fail (c, "metaField", "names no field (leave it out for readings of "
                             "one series)");
    return true;
}

/* The bucket's own fields: a meta field or "as" of the same name would
 * make a document with two fields of one name. */
static const char *const bucket_fields[] = {"_id", "start", "end", "count", "metaPositions",
                                            "stats", NULL};

static bool
check_bucket_names (rm_plan_ctx_t *c, const char *time_field, size_t n_meta, char **meta,
                    const char *as)
{
    for (size_t i = 0; i < n_meta; i++) {
        for (size_t j = 0; bucket_fields[j]; j++)
            if (!strcmp (meta[i], bucket_fields[j]))
                return rm_plan_fail (c, "metaField", "\"%s\" is a field of the bucket itself",
                                     meta[i]);
        if (time_field && !strcmp (meta[i], time_field))
            return rm_plan_fail (c, "metaField", "\"%s\" is also the timeField", meta[i]);
        if (!strcmp (meta[i], as))
            return rm_plan_fail (c, "metaField", "\"%s\" is also \"as\"", meta[i]);
    }
    for (size_t j = 0; bucket_fields[j]; j++)
        if (!strcmp (as, bucket_fields[j]))
            return rm_plan_fail (c, "as", "\"%s\" is a field of the bucket itself", as);
    return true;
}

static bool
parse_bucket_stats (rm_plan_ctx_t *c, const bson_iter_t *it, rm_bucketize_t *b)
{
    static const char *const stat_names[] = {"count", "min", "max", "sum", "avg"};
    bson_iter_t sub, list;
    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return rm_plan_fail (c, "stats", "must be a document like {\"value\": [\"min\", \"max\"]}");
    while (bson_iter_next (&sub)) {
        const char *f = bson_iter_key (&sub);
        rm_bstat_t *st;
        if (!*f || strchr (f, '.') || f[0] == '$')
            return rm_plan_fail (c, "stats", "\"%s\" must be a plain field name (no dots, no $)",
                                 f);
        b->stats = bson_realloc (b->stats, (b->n_stats + 1) * sizeof *b->stats);
        st = &b->stats[b->n_stats++];
        memset (st, 0, sizeof *st);
        st->field = bson_strdup (f);
        if (BSON_ITER_HOLDS_DOCUMENT (&sub)) {
            /* {"expr": E, "stats": [...]}: the statistics of an
             * expression over each measurement, named f. */
            bson_iter_t k;
            bson_error_t why;
            bool has_list = false;
            bson_iter_recurse (&sub, &k);
            while (bson_iter_next (&k)) {
                if (!strcmp (bson_iter_key (&k), "expr") && !st->expr) {
                    st->expr = rm_expr_parse (&k, &why);
                    if (!st->expr)
                        return rm_plan_fail (c, "stats", "\"%s\": \"expr\": %s", f, why.message);
                    st->expr_doc = bson_new ();
                    bson_append_iter (st->expr_doc, "e", 1, &k);
                } else if (!strcmp (bson_iter_key (&k), "stats") && !has_list &&
                           BSON_ITER_HOLDS_ARRAY (&k)) {
                    bson_iter_recurse (&k, &list);
                    has_list = true;
                } else {
                    return rm_plan_fail (c, "stats", "\"%s\": must be {\"expr\": <expression>, "
                                         "\"stats\": [\"min\", ...]}, not \"%s\"", f,
                                         bson_iter_key (&k));
                }
            }
            if (!st->expr || !has_list)
                return rm_plan_fail (c, "stats", "\"%s\": must be {\"expr\": <expression>, "
                                     "\"stats\": [\"min\", ...]} (both keys)", f);
        } else if (!BSON_ITER_HOLDS_ARRAY (&sub) || !bson_iter_recurse (&sub, &list))
            return rm_plan_fail (c, "stats", "\"%s\": must be a list of statistics (count, min, "
                                 "max, sum, avg), or {\"expr\": <expression>, \"stats\": "
                                 "[...]}", f);
        while (bson_iter_next (&list)) {
            const char *v = BSON_ITER_HOLDS_UTF8 (&list) ? bson_iter_utf8 (&list, NULL) : "";
            int k = -1;
            for (int i = 0; i < 5; i++)
                if (!strcmp (v, stat_names[i]))
                    k = i;
            if (k < 0) {
                char near[120];
                return rm_plan_fail (c, "stats", "\"%s\": unknown statistic \"%s\" (count, min, "
                                     "max, sum, avg)%s", f, v,
                                     rm_plan_did_you_mean (v, stat_names, 5, near, sizeof near));
            }
            for (size_t i = 0; i < st->n; i++)
                if (st->kinds[i] == (rm_bstat_kind_t) k)
                    return rm_plan_fail (c, "stats", "\"%s\": \"%s\" is named twice", f, v);
            st->kinds = bson_realloc (st->kinds, (st->n + 1) * sizeof *st->kinds);
            st->kinds[st->n++] = (rm_bstat_kind_t) k;
        }
        if (st->n == 0)
            return rm_plan_fail (c, "stats", "\"%s\": names no statistic", f);
    }
    if (b->n_stats == 0)
        return rm_plan_fail (c, "stats", "names no field");
    return true;
}

/* ---- The window: granularity, spanSeconds, or $dateTrunc's keys ---- */

static const char *const window_keys[] = {"granularity", "spanSeconds", "unit", "binSize",
                                          "timezone", "startOfWeek"};
enum { W_GRAN, W_SPAN, W_UNIT, W_BIN, W_TZ, W_SOW, W_N };

/* Which of them the step gave. */
typedef struct {
    bool has[W_N];
} window_keys_t;

static bool
is_window_key (const char *k)
{
    for (int i = 0; i < W_N; i++)
        if (!strcmp (k, window_keys[i]))
            return true;
    return false;
}

static bool
parse_granularity (rm_plan_ctx_t *c, const bson_iter_t *it, rm_bucketize_t *b)
{
    static const char *const grans[] = {"seconds", "minutes", "hours", "days"};
    static const int64_t secs[] = {1, 60, 3600, 86400};
    const char *v;
    if (!rm_plan_get_string (c, it, &v))
        return false;
    for (int i = 0; i < 4; i++)
        if (!strcmp (v, grans[i])) {
            b->span = secs[i];
            return true;
        }
    /* weeks, months, ...: not a fixed number of seconds */
    return rm_plan_fail (c, "granularity", "must be \"seconds\", \"minutes\", \"hours\" or "
                         "\"days\", not \"%s\" (for calendar windows, months or years in a time "
                         "zone, give \"unit\" as $dateTrunc takes it: \"unit\": \"month\")", v);
}

static bool
parse_unit (rm_plan_ctx_t *c, const bson_iter_t *it, rm_bucketize_t *b)
{
    const char *names[RM_DT_MILLISECOND + 1], *v;
    char near[120];
    if (!rm_plan_get_string (c, it, &v))
        return false;
    if ((b->bins.unit = rm_dt_unit (v, strlen (v))) >= 0)
        return true;
    for (int u = 0; u <= RM_DT_MILLISECOND; u++)
        names[u] = rm_dt_unit_name (u);
    return rm_plan_fail (c, "unit", "unknown unit \"%s\" (year, quarter, month, week, day, hour, "
                         "minute, second, millisecond)%s", v,
                         rm_plan_did_you_mean (v, names, RM_DT_MILLISECOND + 1, near, sizeof near));
}

static bool
parse_window_key (rm_plan_ctx_t *c, const bson_iter_t *it, rm_bucketize_t *b, window_keys_t *w)
{
    const char *k = bson_iter_key (it), *v;
    int i = 0;
    while (strcmp (k, window_keys[i]))
        i++;
    w->has[i] = true;
    switch (i) {
    case W_GRAN: return parse_granularity (c, it, b);
    case W_SPAN: return rm_plan_get_int (c, it, 1, &b->span);
    case W_UNIT: return parse_unit (c, it, b);
    case W_BIN: return rm_plan_get_int (c, it, 1, &b->bins.bin);
    case W_TZ:
        if (!rm_plan_get_string (c, it, &v))
            return false;
        b->timezone = bson_strdup (v);
        if (!rm_tz_find (v, strlen (v), &b->bins.tz))
            return rm_plan_fail (c, k, "unrecognized time zone \"%s\" (an Olson name such as "
                                 "\"America/New_York\", or an offset such as \"+05:30\")", v);
        return true;
    default:
        if (!rm_plan_get_string (c, it, &v))
            return false;
        b->start_of_week = bson_strdup (v);
        if ((b->bins.sow = rm_dt_day_of_week (v, strlen (v))) < 0)
            return rm_plan_fail (c, k, "\"%s\" is not a day of the week (\"monday\" or "
                                 "\"mon\", ..., in any case)", v);
        return true;
    }
}

/* One way to give the window; $dateTrunc's keys only with unit. */
static bool
check_window_keys (rm_plan_ctx_t *c, rm_bucketize_t *b, const window_keys_t *w, bool reverse)
{
    int ways = w->has[W_GRAN] + w->has[W_SPAN] + w->has[W_UNIT];
    if (ways > 1)
        return rm_plan_fail (c, w->has[W_UNIT] ? "unit" : "spanSeconds",
                             "give one of \"granularity\", \"spanSeconds\" and \"unit\"");
    for (int i = W_BIN; i < W_N; i++)
        if (w->has[i] && !w->has[W_UNIT])
            return rm_plan_fail (c, window_keys[i], "is one of $dateTrunc's keys: give \"unit\" "
                                 "with it");
    if (ways == 0 && !reverse)
        return rm_plan_fail (c, "granularity", "missing (give \"granularity\", \"spanSeconds\" "
                             "or \"unit\")");
    if (w->has[W_SOW] && b->bins.unit != RM_DT_WEEK)
        return rm_plan_fail (c, "startOfWeek", "applies to the unit \"week\" only, not \"%s\"",
                             rm_dt_unit_name (b->bins.unit));
    if (b->span > INT64_MAX / 1000)
        return rm_plan_fail (c, "spanSeconds", "is too large");
    if (!w->has[W_UNIT])
        return true;
    b->calendar = true;
    if (!w->has[W_BIN])
        b->bins.bin = 1;
    if (!w->has[W_TZ])
        rm_tz_utc (&b->bins.tz);
    if (!w->has[W_SOW])
        b->bins.sow = 7;
    /* the server's bound ($dateTrunc refuses more) */
    if (b->bins.unit <= RM_DT_DAY && b->bins.bin > INT64_C (100000000000))
        return rm_plan_fail (c, "binSize", "is too large for the unit \"%s\" (at most "
                             "100000000000)", rm_dt_unit_name (b->bins.unit));
    return true;
}

static bool
parse_bucket_keys (rm_plan_ctx_t *c, bson_iter_t *it, rm_bucketize_t *b, bool reverse)
{
    window_keys_t w = {0};
    b->max_count = reverse ? 0 : 1000;
    b->keep_source = reverse;
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &b->from);
        else if (!strcmp (k, "to")) ok = rm_plan_get_ns (c, it, &b->to);
        else if (!strcmp (k, "timeField")) ok = rm_plan_get_field_name (c, it, &b->time_field);
        else if (!strcmp (k, "metaField")) ok = get_meta (c, it, &b->n_meta, &b->meta);
        else if (!strcmp (k, "as")) ok = rm_plan_get_field_name (c, it, &b->as);
        else if (!strcmp (k, "maxCount")) ok = rm_plan_get_int (c, it, 1, &b->max_count);
        else if (!strcmp (k, "keepSource")) ok = rm_plan_get_bool (c, it, &b->keep_source);
        else if (!strcmp (k, "stats")) ok = parse_bucket_stats (c, it, b);
        else if (is_window_key (k)) ok = parse_window_key (c, it, b, &w);
        else if (!strcmp (k, "onInvalid")) {
            bson_iter_t sub;
            if (BSON_ITER_HOLDS_UTF8 (it) && !strcmp (bson_iter_utf8 (it, NULL), "error"))
                ;
            else if (BSON_ITER_HOLDS_DOCUMENT (it) && bson_iter_recurse (it, &sub) &&
                     bson_iter_next (&sub) && !strcmp (bson_iter_key (&sub), "to")) {
                bson_iter_t rest = sub;
                if (bson_iter_next (&rest))
                    return rm_plan_fail (c, k, "unknown key \"%s\" (onInvalid takes \"to\")", bson_iter_key (&rest));
                const char *text = BSON_ITER_HOLDS_UTF8 (&sub) ? bson_iter_utf8 (&sub, NULL) : "";
                const char *dot = strchr (text, '.');
                if (!dot || dot == text || !dot[1])
                    return rm_plan_fail (c, k, "\"to\": \"%s\" is not a namespace (db.collection)",
                                         text);
                b->invalid_to.text = bson_strdup (text);
                b->invalid_to.db = bson_strndup (text, (size_t) (dot - text));
                b->invalid_to.coll = bson_strdup (dot + 1);
            } else
                ok = rm_plan_fail (c, k, "must be \"error\" or {\"to\": \"db.collection\"}");
        }
        if (!ok)
            return false;
    }
    if (!check_window_keys (c, b, &w, reverse))
        return false;
    if (!b->as)
        b->as = bson_strdup ("measurements");
    if (!check_bucket_names (c, b->time_field, b->n_meta, b->meta, b->as))
        return false;
    if (!strcmp (b->from.text, b->to.text))
        return rm_plan_fail (c, "to", "must differ from \"from\" (%s)", b->from.text);
    if (b->invalid_to.text && (!strcmp (b->invalid_to.text, b->from.text) ||
                               !strcmp (b->invalid_to.text, b->to.text)))
        return rm_plan_fail (c, "onInvalid",
                             "its namespace must differ from \"from\" and \"to\" (%s)",
                             b->invalid_to.text);
    return true;
}

bool
rm_plan_parse_bucketize (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    return parse_bucket_keys (c, it, &s->u.bucketize, false);
}

/* The same keys, read as the bucketize being reversed (plan.h). */
bool
rm_plan_parse_unbucketize (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    return parse_bucket_keys (c, it, &s->u.unbucketize, true);
}

/* bucketize and unbucketize: the same struct */
void
rm_plan_clear_bucket (rm_step_t *s)
{
    rm_bucketize_t *b = &s->u.bucketize;
    rm_plan_nsref_clear (&b->from);
    rm_plan_nsref_clear (&b->to);
    rm_plan_nsref_clear (&b->invalid_to);
    bson_free (b->time_field);
    bson_free (b->as);
    bson_free (b->timezone);
    bson_free (b->start_of_week);
    for (size_t j = 0; j < b->n_meta; j++)
        bson_free (b->meta[j]);
    bson_free (b->meta);
    for (size_t j = 0; j < b->n_stats; j++) {
        bson_free (b->stats[j].field);
        bson_free (b->stats[j].kinds);
        rm_expr_destroy (b->stats[j].expr);
        if (b->stats[j].expr_doc)
            bson_destroy (b->stats[j].expr_doc);
    }
    bson_free (b->stats);
}

/* from is read, written and, without keepSource, emptied (but for the
 * readings a filter leaves out); to and onInvalid's namespace are made. */
void
rm_plan_ns_bucketize (const rm_step_t *s, rm_step_ns_t *ns)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    rm_step_refs_add (&ns->reads, &b->from, "from");
    ns->writes = ns->reads;
    rm_step_ns_make (ns, &b->to, "to");
    if (b->invalid_to.text)
        rm_step_ns_make (ns, &b->invalid_to, "onInvalid");
    if (!b->keep_source && !s->filter)
        ns->empties = ns->reads;
}

/* from is read, and onInvalid's namespace, whose set-aside readings come
 * back; to is made; without keepSource both are written and emptied (but
 * for the buckets a filter leaves out, which stay in from). */
void
rm_plan_ns_unbucketize (const rm_step_t *s, rm_step_ns_t *ns)
{
    const rm_unbucketize_t *u = &s->u.unbucketize;
    rm_step_refs_add (&ns->reads, &u->from, "from");
    if (u->invalid_to.text)
        rm_step_refs_add (&ns->reads, &u->invalid_to, "onInvalid");
    rm_step_ns_make (ns, &u->to, "to");
    if (!u->keep_source) {
        for (size_t i = 0; i < ns->reads.n; i++)
            rm_step_refs_add (&ns->writes, ns->reads.at[i].ns, ns->reads.at[i].key);
        for (size_t i = 0; i < ns->reads.n; i++)
            if (i > 0 || !s->filter)
                rm_step_refs_add (&ns->empties, ns->reads.at[i].ns, ns->reads.at[i].key);
    }
}
