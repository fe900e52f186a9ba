/* The regular expression operators: $regexMatch, $regexFind and
 * $regexFindAll ({input, regex, options}), with PCRE2 as the server uses
 * it: UTF mode always on, options i (caseless), m (multiline), s (dot
 * matches newlines), x (extended) and u (accepted, UTF being on anyway).
 * A match is {match, idx, captures}: idx counts code points, and a group
 * that took no part in the match is null in captures.
 *
 * A constant regex (and options) is compiled once, by the check function
 * at parse time, where an invalid one is refused naming the offset; its
 * pcre2_match_data is made then too, so that matching allocates nothing.
 * One compiled expression may be evaluated by several threads at once
 * (each with its own context), and a match data is not for two matches at
 * a time: the expression's own is taken under a try-lock, and a thread
 * that finds it taken uses a match data of its own for that evaluation
 * (allocated then: only under contention). A regex that is not constant
 * ({regex: "$pattern"}) is compiled when evaluated: the last one compiled
 * is kept (under the same lock), so that a field holding the same pattern
 * in every document compiles once.
 *
 * Every match runs with limits (match_limit, depth_limit): a pattern that
 * backtracks without end fails with an error naming the operator instead
 * of holding the run. Reaching a limit the pattern sets itself
 * ((*LIMIT_MATCH=n)) is an error as well, as on the server. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <string.h>

#include "expr_impl.h"
#include "expr_utf8.h"

/* PCRE2's own default (10 million), which the server runs with: a
 * pattern the server can match, this can. */
#define RX_MATCH_LIMIT 10000000u
/* Nested backtracking points: about 100 bytes of heap each, so this
 * caps a match at some hundreds of MB, where PCRE2's default (the match
 * limit) would let one take gigabytes. */
#define RX_DEPTH_LIMIT 1000000u
/* The server's limit on the length of these operators' patterns (2^14
 * bytes; its query $regex allows more). */
#define RX_MAX_PATTERN 16384u
/* $regexFindAll's output, as the server bounds it. */
#define RX_MAX_OUTPUT (64u * 1024 * 1024)

/* What a node keeps (e->data). */
typedef struct {
    bool konst;                 /* regex and options constant */
    bool null_pattern;          /* konst, and the regex null: always "no input" */
    pcre2_code *code;           /* konst: compiled at parse time */
    pcre2_match_data *md;       /* for code, under lock */
    pcre2_match_context *mctx;  /* the limits; only read while matching */
    bool jit;                   /* code was compiled by the JIT */
    pthread_mutex_t lock;
    /* Not konst: the last pattern compiled, under lock. */
    char *last_pat;
    size_t last_len;
    uint32_t last_opts;
    pcre2_code *last_code;
    pcre2_match_data *last_md;
} rx_t;

static void
rx_free (void *data)
{
    rx_t *rx = data;
    pcre2_match_data_free (rx->md);
    pcre2_code_free (rx->code);
    pcre2_match_data_free (rx->last_md);
    pcre2_code_free (rx->last_code);
    bson_free (rx->last_pat);
    pcre2_match_context_free (rx->mctx);
    pthread_mutex_destroy (&rx->lock);
    bson_free (rx);
}

/* ---- The regex and its options ---- */

/* A pattern to compile: has is false when the regex is null or missing
 * (the result is then that of a null input). */
typedef struct {
    bool has;
    const char *pat;
    size_t len;
    uint32_t opts;
} rx_spec_t;

/* The server's checks, in its order: regex a string or a BSON regex,
 * options a string, not options both in the BSON regex and in 'options',
 * no NUL byte in either, then each option letter known. On a refusal,
 * why says what (for a parse or an evaluation error alike). */
static bool
rx_spec (const bson_value_t *re, const bson_value_t *opt, rx_spec_t *sp, char *why, size_t cap)
{
    const char *flags = NULL;
    size_t flen = 0;

    memset (sp, 0, sizeof *sp);
    if (!rm_xval_nullish (re) && re->value_type != BSON_TYPE_UTF8 && re->value_type != BSON_TYPE_REGEX) {
        snprintf (why, cap, "needs 'regex' to be of type string or regex, not %s", rm_xval_type_name (re));
        return false;
    }
    if (!rm_xval_nullish (opt) && opt->value_type != BSON_TYPE_UTF8) {
        snprintf (why, cap, "needs 'options' to be of type string, not %s", rm_xval_type_name (opt));
        return false;
    }
    if (re->value_type == BSON_TYPE_REGEX) {
        const char *rf = re->value.v_regex.options ? re->value.v_regex.options : "";
        if (rf[0] && !rm_xval_nullish (opt)) {
            snprintf (why, cap, "found regex option(s) specified in both 'regex' (/%s/%s) and 'options'",
                      re->value.v_regex.regex, rf);
            return false;
        }
        sp->has = true;
        sp->pat = re->value.v_regex.regex;
        sp->len = strlen (sp->pat);
        flags = rf;
        flen = strlen (rf);
    } else if (re->value_type == BSON_TYPE_UTF8) {
        sp->has = true;
        sp->pat = re->value.v_utf8.str;
        sp->len = re->value.v_utf8.len;
    }
    if (!rm_xval_nullish (opt)) {
        flags = opt->value.v_utf8.str;
        flen = opt->value.v_utf8.len;
    }
    if (sp->has && memchr (sp->pat, '\0', sp->len)) {
        snprintf (why, cap, "a regular expression cannot contain an embedded null byte");
        return false;
    }
    if (flags && memchr (flags, '\0', flen)) {
        snprintf (why, cap, "regular expression options cannot contain an embedded null byte");
        return false;
    }
    /* The letters are checked with no pattern too: the server refuses
     * {options: "I"} alone, before it looks for a regex to compile. */
    sp->opts = PCRE2_UTF;
    for (size_t i = 0; i < flen; i++) {
        switch (flags[i]) {
        case 'i':
            sp->opts |= PCRE2_CASELESS;
            break;
        case 'm':
            sp->opts |= PCRE2_MULTILINE;
            break;
        case 's':
            sp->opts |= PCRE2_DOTALL;
            break;
        case 'x':
            sp->opts |= PCRE2_EXTENDED;
            break;
        case 'u':
            break;
        default:
            snprintf (why, cap, "invalid flag in regex options: %c", flags[i]);
            return false;
        }
    }
    return true;
}

/* Whether the pattern sets the limit that rc says was reached. */
static bool
own_limit (const pcre2_code *code, int rc)
{
    uint32_t v;
    return pcre2_pattern_info (code, rc == PCRE2_ERROR_MATCHLIMIT ? PCRE2_INFO_MATCHLIMIT : PCRE2_INFO_DEPTHLIMIT,
                               &v) == 0;
}

/* Compiles sp (NULL with why on an invalid pattern, naming the offset). */
static pcre2_code *
rx_compile (const rx_spec_t *sp, char *why, size_t cap)
{
    pcre2_compile_context *cc = pcre2_compile_context_create (NULL);
    pcre2_code *code;
    int ec;
    PCRE2_SIZE off;

    pcre2_set_max_pattern_length (cc, RX_MAX_PATTERN);
    code = pcre2_compile ((PCRE2_SPTR) (sp->len ? sp->pat : ""), sp->len, sp->opts, &ec, &off, cc);
    pcre2_compile_context_free (cc);
    if (!code) {
        PCRE2_UCHAR msg[160];
        if (pcre2_get_error_message (ec, msg, sizeof msg) < 0)
            snprintf ((char *) msg, sizeof msg, "error %d", ec);
        snprintf (why, cap, "invalid regular expression /%.*s/ at offset %zu: %s",
                  sp->len > 80 ? 80 : (int) sp->len, sp->pat, (size_t) off, (const char *) msg);
    }
    return code;
}

/* The check: e->data for every node; a constant regex compiled now. */
static bool
check_regex (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    rx_t *rx = bson_malloc0 (sizeof *rx);
    const rm_expr_t *re = e->args[1], *opt = e->args[2];
    bson_value_t none;
    char why[300];

    pthread_mutex_init (&rx->lock, NULL);
    rx->mctx = pcre2_match_context_create (NULL);
    pcre2_set_match_limit (rx->mctx, RX_MATCH_LIMIT);
    pcre2_set_depth_limit (rx->mctx, RX_DEPTH_LIMIT);
    e->data = rx;
    e->data_free = rx_free;
    /* a regex left out is a missing one, as the server's regex_find.js
     * has it ({input: "$text"} finds nothing) */
    rm_xset_missing (&none);
    rx->konst = (!re || re->kind == RM_X_CONST) && (!opt || opt->kind == RM_X_CONST);
    if (rx->konst) {
        rx_spec_t sp;
        if (!rx_spec (re ? &re->konst : &none, opt ? &opt->konst : &none, &sp, why, sizeof why))
            return rm_xparse_fail (err, e, "%s", why);
        if (!sp.has) {
            rx->null_pattern = true;
            return true;
        }
        if (!(rx->code = rx_compile (&sp, why, sizeof why)))
            return rm_xparse_fail (err, e, "%s", why);
        /* Compiled to machine code once, as it is matched against every
         * document: where the JIT is not there (or refuses the pattern),
         * pcre2_match interprets it as before. Not a pattern that sets its
         * own limits ((*LIMIT_MATCH=n)): the JIT counts them otherwise. */
        if (!own_limit (rx->code, PCRE2_ERROR_MATCHLIMIT) && !own_limit (rx->code, PCRE2_ERROR_DEPTHLIMIT))
            rx->jit = pcre2_jit_compile (rx->code, PCRE2_JIT_COMPLETE) == 0;
        rx->md = pcre2_match_data_create_from_pattern (rx->code, NULL);
    }
    return true;
}

/* ---- Evaluating ---- */

/* One evaluation's pattern and match data, and what to give back. */
typedef struct {
    const pcre2_code *code;
    pcre2_match_data *md;
    bool locked;
    pcre2_code *own_code;       /* compiled for this evaluation only */
    pcre2_match_data *own_md;
    const char *s;              /* the input */
    size_t len;
    bool utf_checked;
} rx_run_t;

static void
rx_release (rx_t *rx, rx_run_t *r)
{
    if (r->locked)
        pthread_mutex_unlock (&rx->lock);
    pcre2_match_data_free (r->own_md);
    pcre2_code_free (r->own_code);
    memset (r, 0, sizeof *r);
}

/* A non-constant pattern: the one kept if it is the same, else compiled
 * (and kept when the lock is ours). */
static bool
rx_dynamic (rm_expr_ctx_t *cx, const rm_expr_t *e, rx_t *rx, const rx_spec_t *sp, rx_run_t *r,
            bson_error_t *err)
{
    char why[300];
    pcre2_code *code;

    if (r->locked && rx->last_code && rx->last_len == sp->len && rx->last_opts == sp->opts &&
        !memcmp (rx->last_pat, sp->pat, sp->len)) {
        r->code = rx->last_code;
        r->md = rx->last_md;
        return true;
    }
    if (!(code = rx_compile (sp, why, sizeof why)))
        return rm_xfail (err, e, "%s", why);
    if (r->locked) {
        pcre2_match_data_free (rx->last_md);
        pcre2_code_free (rx->last_code);
        bson_free (rx->last_pat);
        rx->last_pat = bson_malloc (sp->len + 1);
        memcpy (rx->last_pat, sp->pat, sp->len);
        rx->last_len = sp->len;
        rx->last_opts = sp->opts;
        rx->last_code = code;
        rx->last_md = pcre2_match_data_create_from_pattern (code, NULL);
        r->code = code;
        r->md = rx->last_md;
    } else {
        r->own_code = code;
        r->own_md = pcre2_match_data_create_from_pattern (code, NULL);
        r->code = code;
        r->md = r->own_md;
    }
    return true;
}

/* Evaluates input, regex and options (in that order, all three), checks
 * them in the server's order (regex and options first, then input) and
 * readies r. *null when the input or the regex is null or missing. */
static bool
rx_begin (rm_expr_ctx_t *cx, const rm_expr_t *e, rx_run_t *r, bool *null, bson_error_t *err)
{
    rx_t *rx = e->data;
    bson_value_t v[3];
    rx_spec_t sp;
    char why[300];

    memset (r, 0, sizeof *r);
    *null = false;
    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (!rx->konst) {
        if (!rx_spec (&v[1], &v[2], &sp, why, sizeof why))
            return rm_xfail (err, e, "%s", why);
        if (sp.has) {
            r->locked = pthread_mutex_trylock (&rx->lock) == 0;
            if (!rx_dynamic (cx, e, rx, &sp, r, err)) {
                rx_release (rx, r);
                return false;
            }
        }
    } else if (!rx->null_pattern) {
        r->code = rx->code;
        if ((r->locked = pthread_mutex_trylock (&rx->lock) == 0))
            r->md = rx->md;
        else
            r->md = r->own_md = pcre2_match_data_create_from_pattern (rx->code, NULL);
    }
    if (!rm_xval_nullish (&v[0]) && v[0].value_type != BSON_TYPE_UTF8) {
        rx_release (rx, r);
        return rm_xfail (err, e, "needs 'input' to be of type string, not %s: %s", rm_xval_type_name (&v[0]),
                         rm_xshow (cx, &v[0]));
    }
    if (rm_xval_nullish (&v[0]) || !r->code) {
        rx_release (rx, r);
        *null = true;
        return true;
    }
    r->s = v[0].value.v_utf8.str;
    r->len = v[0].value.v_utf8.len;
    return true;
}

/* One match from byte start: > 0 matched, 0 none, < 0 an error (set). */
static int
rx_exec (rm_expr_ctx_t *cx, const rm_expr_t *e, rx_run_t *r, size_t start, bson_error_t *err)
{
    rx_t *rx = e->data;
    /* The subject's UTF-8 is checked once, by the first match: the later
     * ones start at code point boundaries of a subject known valid. */
    uint32_t opts = r->utf_checked ? PCRE2_NO_UTF_CHECK : 0;
    int rc = pcre2_match (r->code, (PCRE2_SPTR) r->s, r->len, start, opts, r->md, rx->mctx);
    /* The JIT's limits are not the interpreter's (its own stack, no depth
     * limit): a search that reaches one is run again interpreted, so what
     * is found, and the error a runaway pattern gets, stay the same. */
    if (rx->jit && r->code == rx->code &&
        (rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT))
        rc = pcre2_match (r->code, (PCRE2_SPTR) r->s, r->len, start, opts | PCRE2_NO_JIT, r->md, rx->mctx);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    /* Any other failure is an error, a limit the pattern sets itself
     * ("(*LIMIT_MATCH=1)fé") too: the server (4.2 on) fails the
     * operator rather than report no match. */
    if (rc < 0) {
        PCRE2_UCHAR msg[160];
        bson_value_t in;
        if (pcre2_get_error_message (rc, msg, sizeof msg) < 0)
            snprintf ((char *) msg, sizeof msg, "error %d", rc);
        rm_xset_string (cx, &in, r->s, r->len > 200 ? 200 : r->len);
        rm_xfail (err, e, "error while matching the regular expression against %s: %s", rm_xshow (cx, &in),
                  (const char *) msg);
        return -1;
    }
    r->utf_checked = true;
    return 1;
}

/* The last match as {match, idx, captures}; *size grows by its bytes. */
static void
rx_match_doc (rm_expr_ctx_t *cx, const rx_run_t *r, size_t idx, bson_value_t *out, size_t *size)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer (r->md);
    uint32_t ncap = 0;
    rm_xbuild_t doc, caps;
    bson_value_t v;

    pcre2_pattern_info (r->code, PCRE2_INFO_CAPTURECOUNT, &ncap);
    rm_xbuild_begin (cx, &doc, false);
    v.value_type = BSON_TYPE_UTF8;
    v.value.v_utf8.str = (char *) r->s + ov[0];
    v.value.v_utf8.len = (uint32_t) (ov[1] - ov[0]);
    rm_xbuild_field (&doc, "match", 5, &v);
    rm_xset_int32 (&v, (int32_t) idx);
    rm_xbuild_field (&doc, "idx", 3, &v);
    rm_xbuild_begin (cx, &caps, true);
    *size += ov[1] - ov[0] + 32;
    for (uint32_t i = 1; i <= ncap; i++) {
        if (ov[2 * i] == PCRE2_UNSET) {
            rm_xset_null (&v);
        } else {
            v.value_type = BSON_TYPE_UTF8;
            v.value.v_utf8.str = (char *) r->s + ov[2 * i];
            v.value.v_utf8.len = (uint32_t) (ov[2 * i + 1] - ov[2 * i]);
            *size += ov[2 * i + 1] - ov[2 * i];
        }
        *size += 8;
        rm_xbuild_push (&caps, &v);
    }
    rm_xbuild_end (&caps, &v);
    rm_xbuild_field (&doc, "captures", 8, &v);
    rm_xbuild_end (&doc, out);
}

/* false for a null input or regex. */
static bool
eval_regex_match (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    rx_run_t r;
    bool null;
    int rc;

    if (!rx_begin (cx, e, &r, &null, err))
        return false;
    if (null) {
        rm_xset_bool (out, false);
        return true;
    }
    rc = rx_exec (cx, e, &r, 0, err);
    rx_release (e->data, &r);
    if (rc < 0)
        return false;
    rm_xset_bool (out, rc > 0);
    return true;
}

/* The first match, or null (no match, or a null input or regex). */
static bool
eval_regex_find (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    rx_run_t r;
    bool null;
    int rc;
    size_t size = 0;

    if (!rx_begin (cx, e, &r, &null, err))
        return false;
    rm_xset_null (out);
    if (null)
        return true;
    rc = rx_exec (cx, e, &r, 0, err);
    if (rc > 0) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer (r.md);
        rx_match_doc (cx, &r, rm_xutf8_count (r.s, ov[0]), out, &size);
    }
    rx_release (e->data, &r);
    return rc >= 0;
}

/* Every match, none overlapping, [] for none (or a null input or
 * regex). As the server walks: after an empty match the next search
 * starts one code point further, after a match that is not empty at its
 * end, and the walk stops once the start reaches the end of the input
 * (so an empty match at the very end counts only if it is the first, or
 * follows an empty one). */
static bool
eval_regex_find_all (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    rx_run_t r;
    bool null;
    rm_xbuild_t all;
    size_t pos = 0, cpos = 0, size = 0;

    if (!rx_begin (cx, e, &r, &null, err))
        return false;
    rm_xbuild_begin (cx, &all, true);
    if (null) {
        rm_xbuild_end (&all, out);
        return true;
    }
    do {
        PCRE2_SIZE *ov;
        bson_value_t m;
        int rc = rx_exec (cx, e, &r, pos, err);
        if (rc < 0) {
            rm_xbuild_abort (&all);
            rx_release (e->data, &r);
            return false;
        }
        if (rc == 0)
            break;
        ov = pcre2_get_ovector_pointer (r.md);
        cpos += rm_xutf8_count (r.s + pos, ov[0] - pos);
        pos = ov[0];
        rx_match_doc (cx, &r, cpos, &m, &size);
        if (size > RX_MAX_OUTPUT) {
            rm_xbuild_abort (&all);
            rx_release (e->data, &r);
            return rm_xfail (err, e, "the size of buffer to store output exceeded the 64MB limit");
        }
        rm_xbuild_push (&all, &m);
        if (ov[1] == ov[0]) {
            if (pos >= r.len)
                break;
            pos += rm_xutf8_len ((unsigned char) r.s[pos]);
            cpos++;
        } else {
            cpos += rm_xutf8_count (r.s + ov[0], ov[1] - ov[0]);
            pos = ov[1];
        }
    } while (pos < r.len);
    rx_release (e->data, &r);
    rm_xbuild_end (&all, out);
    return true;
}

const rm_xop_t rm_xops_regex[] = {
    {"$regexMatch", eval_regex_match, 0, 0, {"input", "regex", "options"}, NULL, check_regex},
    {"$regexFind", eval_regex_find, 0, 0, {"input", "regex", "options"}, NULL, check_regex},
    {"$regexFindAll", eval_regex_find_all, 0, 0, {"input", "regex", "options"}, NULL, check_regex},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
