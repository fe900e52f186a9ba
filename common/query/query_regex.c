/* The query's regular expressions ($regex, {a: /re/}, a regex in $in,
 * $all or $not): PCRE2 in UTF mode, as the server's (pcre_util's flags:
 * i, m, s, x, and u, which UTF mode makes a no-op). Compiled once, at
 * parse time; matched in memory of the matching call's stack, so that a
 * document costs no allocation. A match past PCRE2's limits (a pattern
 * that backtracks catastrophically) is an error, not a silent mismatch. */
#include <stdlib.h>
#include <string.h>

#include "query_impl.h"

/* PCRE2's default match limit (the server keeps PCRE2's defaults); the
 * heap it may use for backtracking is capped far below PCRE2's 20 GB. */
#define MATCH_LIMIT 10000000u
#define HEAP_LIMIT_KIB 65536u

bool
rm_qregex_compile (rm_qregex_t *re, const char *pattern, size_t len, const char *flags,
                   bson_error_t *err)
{
    uint32_t opts = PCRE2_UTF;
    int code;
    PCRE2_SIZE at;

    memset (re, 0, sizeof *re);
    if (memchr (pattern, '\0', len)) {
        rm_error_set (err, RM_ERR_USAGE, "Regular expression cannot contain an embedded null byte");
        return false;
    }
    for (const char *f = flags; *f; f++) {
        switch (*f) {
        case 'i': opts |= PCRE2_CASELESS; break;
        case 'm': opts |= PCRE2_MULTILINE; break;
        case 's': opts |= PCRE2_DOTALL; break;
        case 'x': opts |= PCRE2_EXTENDED; break;
        case 'u': break;
        default:
            rm_error_set (err, RM_ERR_USAGE, "$regex: invalid flag in regex options: %c", *f);
            return false;
        }
    }
    re->code = pcre2_compile ((PCRE2_SPTR) pattern, len, opts, &code, &at, NULL);
    if (!re->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message (code, msg, sizeof msg);
        rm_error_set (err, RM_ERR_USAGE, "Regular expression is invalid: %s (at offset %zu of /%.*s/)",
                      (const char *) msg, (size_t) at, (int) (len > 200 ? 200 : len), pattern);
        return false;
    }
    re->pattern = bson_strndup (pattern, len);
    re->flags = bson_strdup (flags);
    return true;
}

void
rm_qregex_destroy (rm_qregex_t *re)
{
    pcre2_code_free (re->code);
    bson_free (re->pattern);
    bson_free (re->flags);
    memset (re, 0, sizeof *re);
}

pcre2_match_context *
rm_qregex_limits (void)
{
    pcre2_match_context *m = pcre2_match_context_create (NULL);
    if (m) {
        pcre2_set_match_limit (m, MATCH_LIMIT);
        pcre2_set_heap_limit (m, HEAP_LIMIT_KIB);
    }
    return m;
}

/* PCRE2's allocator for one match call: the state's arena first, the heap
 * past it. Nothing is freed in the arena: it lives as long as the call. */
static void *
arena_malloc (PCRE2_SIZE size, void *data)
{
    rm_qstate_t *st = data;
    size_t need = (size + 15) & ~(size_t) 15;

    if (need <= RM_QARENA - st->used) {
        void *p = st->arena + st->used;
        st->used += need;
        return p;
    }
    return malloc (size);
}

static void
arena_free (void *p, void *data)
{
    rm_qstate_t *st = data;
    if (p && ((unsigned char *) p < st->arena || (unsigned char *) p >= st->arena + RM_QARENA))
        free (p);
}

/* The match data of the call, made at its first regex: PCRE2 keeps its
 * backtracking frames there, reused by every later match. */
static bool
state_ready (rm_qstate_t *st)
{
    if (st->md)
        return true;
    st->gcx = pcre2_general_context_create (arena_malloc, arena_free, st);
    if (st->gcx)
        st->md = pcre2_match_data_create (1, st->gcx);
    if (!st->md) {
        rm_error_set (st->err, RM_ERR_NOMEM, "$regex: out of memory");
        st->failed = true;
        return false;
    }
    return true;
}

void
rm_qstate_done (rm_qstate_t *st)
{
    if (st->md)
        pcre2_match_data_free (st->md);
    if (st->gcx)
        pcre2_general_context_free (st->gcx);
    st->md = NULL;
    st->gcx = NULL;
}

bool
rm_qregex_match (rm_qstate_t *st, const rm_qregex_t *re, const char *s, uint32_t len)
{
    int rc;

    if (!state_ready (st))
        return false;
    rc = pcre2_match (re->code, (PCRE2_SPTR) s, len, 0, 0, st->md, st->q->mctx);
    if (rc >= 0)
        return true;
    if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL)
        return false;
    /* A string that is not UTF-8 matches nothing (the server's UTF mode
     * refuses it too); running out of steps or memory is an error. */
    if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
        return false;
    {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message (rc, msg, sizeof msg);
        rm_error_set (st->err, RM_ERR_DATA,
                      "$regex: matching /%.100s/%s against a string of %u bytes failed: %s "
                      "(a pattern that backtracks too much: simplify it)",
                      re->pattern, re->flags, len, (const char *) msg);
    }
    st->failed = true;
    return false;
}
