/* The decisions of rollback --carry-writes (online_carry.c) that need no
 * server (online_carry_rule.h): which inverse applies, composed; whether
 * an earlier step rewrote a namespace; what the run recorded of the
 * fields an inverse removes; what each document the inverse makes does to
 * its original; and the namespaces whose originals differ, named. Plain
 * values in and out, so tests/unit/test_online_carry_rule.c tries every
 * branch. */
#include <stdio.h>
#include <string.h>

#include "online_carry_rule.h"
#include "remodel/docpath.h"

/* The inverse of step s as a plan of one step (NULL, with why, when it
 * has none): the step's own row says (remodel/plan.h). */
static bson_t *
step_inverse (const rm_step_t *s, const char **why)
{
    rm_step_inverse_t iv;
    rm_step_inverse (s, &iv);
    *why = iv.why;
    return iv.plan;
}

/* A kept delete's place in the composed inverse (online_carry_rule.h):
 * its namespace named, nothing removed that a document has. */
static bson_t *
kept_placeholder (const rm_step_t *s)
{
    return BCON_NEW ("remodel", BCON_INT32 (1), "steps", "[", "{", "unset", "{", "in",
                     BCON_UTF8 (s->u.copy.from.text), "fields", "[", BCON_UTF8 ("_remodel_kept"),
                     "]", "}", "}", "]");
}

static bson_t *
inverse_of (const rm_step_t *s, const bool *kept, size_t i, const char **why)
{
    if (kept && kept[i] && s->kind == RM_STEP_DELETE) {
        *why = NULL;
        return kept_placeholder (s);
    }
    return step_inverse (s, why);
}

bool
online_carry_inverse (const rm_plan_t *plan, const bool *kept, bson_t *inv, size_t *refused,
                      const char **why)
{
    bson_t steps;
    size_t stop = 0;

    *why = NULL;
    bson_init (inv);
    BSON_APPEND_INT32 (inv, "remodel", 1);
    BSON_APPEND_ARRAY_BEGIN (inv, "steps", &steps);
    for (size_t i = plan->n; i-- > 0 && !*why;) {
        bson_t *b;
        bson_iter_t it;
        const uint8_t *data;
        uint32_t len;
        char key[16];
        const char *kp;
        stop = i;
        b = inverse_of (&plan->steps[i], kept, i, why);
        if (b && bson_iter_init (&it, b) && bson_iter_find_descendant (&it, "steps.0", &it) &&
            BSON_ITER_HOLDS_DOCUMENT (&it)) {
            bson_t one;
            bson_iter_document (&it, &len, &data);
            bson_init_static (&one, data, len);
            bson_uint32_to_string ((uint32_t) (plan->n - 1 - i), &kp, key, sizeof key);
            BSON_APPEND_DOCUMENT (&steps, kp, &one);
        }
        if (b)
            bson_destroy (b);
    }
    bson_append_array_end (inv, &steps);
    if (!*why)
        return true;
    /* The first step without one is named: the plan's order. */
    *refused = stop;
    for (size_t i = 0; i < plan->n; i++) {
        const char *w;
        bson_t *b = inverse_of (&plan->steps[i], kept, i, &w);
        if (b)
            bson_destroy (b);
        if (w) {
            *refused = i;
            *why = w;
            break;
        }
    }
    bson_reinit (inv);
    return false;
}

bool
online_carry_written_before (const online_t *on, size_t i, const char *ns)
{
    for (size_t j = 0; j < i; j++) {
        const online_step_t *st = online_step (on, &on->run->plan.steps[j], false);
        for (size_t k = 0; k < st->n_in; k++)
            if (!strcmp (st->in[k]->text, ns))
                return true;
        for (size_t k = 0; k < st->nt; k++)
            if (!strcmp (st->targets[k]->text, ns))
                return true;
    }
    return false;
}

online_carry_before_t
online_carry_before (const bson_t *before, const char *digest, size_t step, const char **field,
                     char *said, size_t cap)
{
    bson_t entry;
    bson_iter_t it, st, e;
    bool have = false;

    *field = NULL;
    *said = '\0';
    /* The entry of this plan (its digest) for this step. */
    if (before && bson_iter_init_find (&it, before, "digest") && BSON_ITER_HOLDS_UTF8 (&it) &&
        !strcmp (bson_iter_utf8 (&it, NULL), digest) &&
        bson_iter_init_find (&it, before, "steps") && bson_iter_recurse (&it, &st))
        while (!have && bson_iter_next (&st)) {
            const uint8_t *data;
            uint32_t len;
            if (!BSON_ITER_HOLDS_DOCUMENT (&st))
                continue;
            bson_iter_document (&st, &len, &data);
            have = bson_init_static (&entry, data, len) &&
                   bson_iter_init_find (&e, &entry, "step") &&
                   bson_iter_as_int64 (&e) == (int64_t) step;
        }
    if (!have) {
        snprintf (said, cap, "the run recorded nothing of whether any was (it began before "
                  "remodel recorded it)");
        return ONLINE_CARRY_UNRECORDED;
    }
    if (bson_iter_init_find (&e, &entry, "unknown") && BSON_ITER_HOLDS_UTF8 (&e)) {
        snprintf (said, cap, "the run could not tell whether any was: %s",
                  bson_iter_utf8 (&e, NULL));
        return ONLINE_CARRY_UNKNOWN;
    }
    if (bson_iter_init_find (&e, &entry, "present") && bson_iter_recurse (&e, &it) &&
        bson_iter_next (&it) && BSON_ITER_HOLDS_UTF8 (&it)) {
        *field = bson_iter_utf8 (&it, NULL);
        snprintf (said, cap, "some had it when the run began");
        return ONLINE_CARRY_PRESENT;
    }
    return ONLINE_CARRY_ABSENT;
}

online_carry_write_t
online_carry_write (const uint8_t *orig, uint32_t olen, const uint8_t *doc, uint32_t len)
{
    if (!orig)
        return ONLINE_CARRY_INSERT;
    /* A server may keep another order: the same fields and values stay. */
    if (olen != len || online_fields_digest (orig, olen) != online_fields_digest (doc, len))
        return ONLINE_CARRY_REPLACE;
    return ONLINE_CARRY_KEEP;
}

size_t
online_carry_held (const online_after_t *a, const int64_t *differ, char *said, size_t cap)
{
    size_t at = 0;
    *said = '\0';
    for (size_t k = 0; k < a->n && at < cap; k++)
        if (differ[k])
            at += (size_t) snprintf (said + at, cap - at, "%s%s: %lld document(s)", at ? ", " : "",
                                     a->c[k].ns, (long long) differ[k]);
    return at;
}

/* Whether two values are the same type and bytes (1 and 1.0 differ: a
 * type the application changed is its write). */
static bool
same_value (const bson_iter_t *a, const bson_iter_t *b)
{
    rm_raw_value_t x, y;
    return rm_raw_value_of (a, &x) && rm_raw_value_of (b, &y) && x.type == y.type &&
           x.len == y.len && !memcmp (x.data, y.data, x.len);
}

void
online_carry_restore (const uint8_t *doc, uint32_t len, const rm_path_t *fields, size_t n,
                      const bson_t *entry, const bool *stay, bson_t *out)
{
    bson_t d;
    bson_iter_t it, old, made;
    bool has_old = false, has_new = false;

    if (entry && bson_iter_init_find (&old, entry, "old") && BSON_ITER_HOLDS_DOCUMENT (&old))
        has_old = true;
    if (entry && bson_iter_init_find (&made, entry, "new") && BSON_ITER_HOLDS_DOCUMENT (&made))
        has_new = true;
    if (!bson_init_static (&d, doc, len) || !bson_iter_init (&it, &d))
        return;
    while (bson_iter_next (&it)) {
        const char *key = bson_iter_key (&it);
        bson_iter_t o, m;
        size_t i = 0;
        while (i < n && strcmp (fields[i].text, key) != 0)
            i++;
        if (i == n || (!entry && stay && stay[i])) {
            bson_append_iter (out, key, -1, &it);
            continue;
        }
        /* Not kept: the document had no such field before the set. */
        if (!has_old || !bson_iter_recurse (&old, &o) || !bson_iter_find (&o, key))
            continue;
        if (has_new && bson_iter_recurse (&made, &m) && bson_iter_find (&m, key) &&
            same_value (&it, &m))
            bson_append_iter (out, key, -1, &o);
        else
            bson_append_iter (out, key, -1, &it);
    }
}

void
online_carry_present (const bson_t *before, size_t step, const rm_path_t *fields, size_t n,
                      bool *had)
{
    bson_iter_t it, st, e, p;
    memset (had, 0, n * sizeof *had);
    if (!before || !bson_iter_init_find (&it, before, "steps") || !bson_iter_recurse (&it, &st))
        return;
    while (bson_iter_next (&st)) {
        if (!BSON_ITER_HOLDS_DOCUMENT (&st) || !bson_iter_recurse (&st, &e) ||
            !bson_iter_find (&e, "step") || bson_iter_as_int64 (&e) != (int64_t) step ||
            !bson_iter_recurse (&st, &e) || !bson_iter_find (&e, "present") ||
            !bson_iter_recurse (&e, &p))
            continue;
        while (bson_iter_next (&p))
            for (size_t i = 0; BSON_ITER_HOLDS_UTF8 (&p) && i < n; i++)
                had[i] |= !strcmp (fields[i].text, bson_iter_utf8 (&p, NULL));
    }
}
