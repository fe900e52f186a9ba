/* Validation of one untrusted BSON document: one forward pass, no
 * allocation, and a reason that names the rule, the value and the field.
 *
 * libbson's bson_validate was used here before. Besides its vague reasons
 * ("corrupt BSON"), the installed 1.23 misses whole classes of bad input:
 * it accepts invalid UTF-8 in string values (its visitor stops without
 * recording an error), skips nested documents whose header is bad, stops
 * checking a document after a code-with-scope element, never checks that a
 * code-with-scope's code ends with 0x00, and recurses without a bound; and
 * its UTF-8 check takes C0 80, an overlong NUL, for valid. The differences
 * are listed and tested in tests/unit/test_bsoncheck.c.
 *
 * The walk leans on one invariant: the last byte of every container on the
 * stack is 0x00 (checked before the container is entered). So a scan for
 * the 0x00 ending a key or a regex cstring, or a UTF-8 sequence running
 * into the end of a string (whose last byte is checked first), stops at
 * that byte at the latest and never reads past the container.
 *
 * The scans over keys and text come in a portable version (8 bytes at a
 * time) and, on x86-64, in 16- and 32-byte windows of SSE2 with a DFA for
 * text that is not ASCII, the long runs with AVX2 and BMI2 where the CPU
 * has them; rm_bson_check_isa picks one, and the tests hold every one to
 * the same verdict, reason and offset. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bsonlayout.h"
#include "bytes.h"
#include "remodel/bsoncheck.h"
#include "remodel/bsondepth.h"

#if defined(__x86_64__) && defined(__SSE2__) && defined(__GNUC__)
#define HAVE_X86 1
#include <immintrin.h>
#endif

/* Every helper taking an isa (an rm_bson_isa_t) is inlined into one walk
 * per instruction set, where isa is a constant and the other branches
 * vanish. */
#define INLINE static inline __attribute__ ((always_inline))

/* Levels of documents and arrays below the top-level document: libbson
 * 2.x's bound, and the depth of mongo-tools' deep_nested.bson, which
 * bsondump must read. (The server stores at most 100 levels.) It also
 * bounds the frame stack below, 4 KB, and the walks that recurse over a
 * value (remodel/bsondepth.h). */
#define MAX_DEPTH RM_BSON_WALK_DEPTH

/* Marks the place of the quoted field path in a reason's format. */
#define F "\x01"

/* Rendered length of one key in a field path, before "..." */
#define KEY_MAX 40

#define HI8 0x8080808080808080ull

/* A container being walked, as offsets in the document; the type byte of
 * the element holding it is just before its key. */
typedef struct {
    uint32_t key; /* key of the element holding it (0 for the top) */
    uint32_t end; /* its final 0x00 */
} frame_t;

typedef struct {
    const uint8_t *doc;
    rm_bson_fault_t *fault;
    frame_t st[MAX_DEPTH + 1]; /* st[0] is the top-level document */
} walk_t;

static inline uint32_t
rd32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
           (uint32_t) p[3] << 24;
}

/* Index of the lowest byte with its high bit set; m != 0, m & ~HI8 == 0. */
static inline size_t
first_byte (uint64_t m)
{
#if defined(__GNUC__)
    return (size_t) __builtin_ctzll (m) >> 3;
#else
    size_t i = 0;
    while (!(m & 0x80))
        m >>= 8, i++;
    return i;
#endif
}

/* Length of the valid UTF-8 sequence at p (p[0] >= 0x80), 0 if invalid.
 * Unicode's table 3-7: no overlong forms (C0, C1, E0 80-9F, F0 80-8F),
 * no surrogates (ED A0-BF), nothing above U+10FFFF (F4 90+, F5-FF). A
 * continuation byte is never 0x00, so this stops at a terminating 0x00. */
static inline size_t
utf8_seq (const uint8_t *p)
{
    uint8_t c = p[0], lo = 0x80, hi = 0xBF;

    if (c < 0xC2)
        return 0;
    if (c < 0xE0)
        return (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80)
            return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* Checks the UTF-8 of a string value [p, lim), where *lim is 0x00. NUL
 * bytes are allowed (strings are length-prefixed). Returns NULL if valid,
 * else the first byte of the first bad sequence. ASCII goes 32, then 8
 * bytes at a time; a short tail is one masked load when 8 bytes are
 * readable. The portable version of utf8_value_x86. */
INLINE const uint8_t *
utf8_value_scalar (const uint8_t *p, const uint8_t *lim, const uint8_t *safe8)
{
    for (;;) {
        size_t n;
        while (lim - p >= 32) {
            if ((rm_load_le64 (p) | rm_load_le64 (p + 8) | rm_load_le64 (p + 16) |
                 rm_load_le64 (p + 24)) & HI8)
                break;
            p += 32;
        }
        while (lim - p >= 8) {
            uint64_t m = rm_load_le64 (p) & HI8;
            if (m) {
                p += first_byte (m);
                goto multibyte;
            }
            p += 8;
        }
        if (p >= lim)
            return NULL;
        if (p <= safe8) {
            uint64_t m = rm_load_le64 (p) & HI8 & ((1ull << (8 * (lim - p))) - 1);
            if (!m)
                return NULL;
            p += first_byte (m);
        } else {
            while (p < lim && *p < 0x80)
                p++;
            if (p >= lim)
                return NULL;
        }
multibyte:
        if (!(n = utf8_seq (p)))
            return p;
        p += n;
        /* Non-ASCII text: stay here while it lasts (*lim is 0x00). */
        if (*p >= 0x80)
            goto multibyte;
    }
}

/* Scans a cstring (key or regex part) to its 0x00, which exists by the
 * container's end at the latest. Returns the 0x00, or NULL with *bad at the
 * first byte of invalid UTF-8. */
INLINE const uint8_t *
cstring_scalar (const uint8_t *p, const uint8_t *safe8, const uint8_t **bad)
{
    for (;;) {
        size_t n;
        if (p <= safe8) {
            uint64_t v = rm_load_le64 (p);
            /* High bit of the lowest byte that is 0x00 or >= 0x80; bytes
             * above it may be flagged wrongly (borrows), never below. */
            uint64_t m = (((v - 0x0101010101010101ull) & ~v) | v) & HI8;
            if (!m) {
                p += 8;
                continue;
            }
            p += first_byte (m);
        } else {
            while (*p && *p < 0x80)
                p++;
        }
        if (!*p)
            return p;
        if (!(n = utf8_seq (p))) {
            *bad = p;
            return NULL;
        }
        p += n;
    }
}

#ifdef HAVE_X86
/* The x86 scans read 16- and 32-byte windows of the document; tail and
 * tail32 are its last ones (documents this path sees have 32 bytes or
 * more). A scan at p near the end loads the last window instead and
 * shifts the bits of the bytes before p out: never a read past the
 * document. */

/* Bit i set if byte p[i] is 0x00 or >= 0x80 (the ends of an ASCII run in
 * a cstring): as a signed byte, below 1. Bits for bytes past the document
 * are clear; p is at most 15 bytes past tail. The position of the next
 * element hangs on this scan, so its latency counts: a predictable
 * branch, not a select, picks the window. */
static inline unsigned
stop16 (const uint8_t *p, const uint8_t *tail)
{
    const __m128i one = _mm_set1_epi8 (1);
    if (__builtin_expect (p <= tail, 1))
        return (unsigned) _mm_movemask_epi8 (
            _mm_cmpgt_epi8 (one, _mm_loadu_si128 ((const __m128i *) (const void *) p)));
    return (unsigned) _mm_movemask_epi8 (_mm_cmpgt_epi8 (
               one, _mm_loadu_si128 ((const __m128i *) (const void *) tail))) >> (p - tail);
}

/* Bit i set if byte p[i] is >= 0x80, for the 16 bytes from p. */
static inline uint32_t
high16_at (const uint8_t *p)
{
    return (uint32_t) _mm_movemask_epi8 (_mm_loadu_si128 ((const __m128i *) (const void *) p));
}

/* The same for the 32 bytes from p. */
static inline uint32_t
high32_at (const uint8_t *p)
{
    return high16_at (p) | high16_at (p + 16) << 16;
}

/* skip_ascii for more than 32 bytes: 32 at a time, then the window
 * ending at lim. Out of line, as is everything that few strings need: a
 * call inside the walk's loop would cost every string register moves. */
static __attribute__ ((noinline)) const uint8_t *
ascii_long (const uint8_t *p, const uint8_t *lim)
{
    uint32_t m;
    for (; lim - p > 32; p += 32)
        if ((m = high32_at (p)))
            return p + __builtin_ctz (m);
    m = high32_at (lim - 32) >> (32 - (lim - p));
    return m ? p + __builtin_ctz (m) : lim;
}

static __attribute__ ((target ("avx2"), noinline)) const uint8_t *
ascii_long_avx2 (const uint8_t *p, const uint8_t *lim)
{
    uint32_t m;
    for (; lim - p > 32; p += 32)
        if ((m = (uint32_t) _mm256_movemask_epi8 (
                 _mm256_loadu_si256 ((const __m256i *) (const void *) p))))
            return p + __builtin_ctz (m);
    m = (uint32_t) _mm256_movemask_epi8 (
            _mm256_loadu_si256 ((const __m256i *) (const void *) (lim - 32))) >>
        (32 - (lim - p));
    return m ? p + __builtin_ctz (m) : lim;
}

/* The first byte >= 0x80 in [p, lim), or lim; *lim is 0x00 and inside
 * the document, whose last 32-byte window is tail32. Nearly every string
 * is at most 32 bytes: one window for those, masked to the length, with
 * no loop and no branch on the length to mispredict. */
INLINE const uint8_t *
skip_ascii (const uint8_t *p, const uint8_t *lim, const uint8_t *tail32, int isa)
{
    size_t n = (size_t) (lim - p);
    uint32_t m;

    if (__builtin_expect (n > 32, 0))
        return isa == RM_BSON_ISA_AVX2 ? ascii_long_avx2 (p, lim) : ascii_long (p, lim);
    if (__builtin_expect (p <= tail32, 1))
        m = high32_at (p);
    else
        m = high32_at (tail32) >> (p - tail32);
    m &= (uint32_t) ((1ull << n) - 1);
    return m ? p + __builtin_ctz (m) : lim;
}

/* Text that is not ASCII goes through a DFA with no branch per byte: in
 * text mixing 1-, 2- and 3-byte characters, utf8_seq's branches on the
 * lead byte are a coin toss each. Each state is a shift, a multiple of 6;
 * the row of a byte holds, at bits [s, s + 6), the state after that byte
 * in state s, so a step is one load (independent of the state) and one
 * shift. The states: at a character boundary (ACC); owing 1, 2 or 3
 * continuation bytes (C1-C3); after E0, ED, F0 or F4, whose second byte
 * has a narrower range (Unicode's table 3-7); and ERR, which stays. */
enum { ACC = 0, C1 = 6, C2 = 12, C3 = 18, SE0 = 24, SED = 30, SF0 = 36, SF4 = 42, ERR = 48 };

#define ROW(acc, c1, c2, c3, e0, ed, f0, f4)                                                 \
    ((uint64_t) (acc) << ACC | (uint64_t) (c1) << C1 | (uint64_t) (c2) << C2 |               \
     (uint64_t) (c3) << C3 | (uint64_t) (e0) << SE0 | (uint64_t) (ed) << SED |               \
     (uint64_t) (f0) << SF0 | (uint64_t) (f4) << SF4 | (uint64_t) ERR << ERR)
#define LEAD(next) ROW (next, ERR, ERR, ERR, ERR, ERR, ERR, ERR)

static const uint64_t utf8_rows[256] = {
    [0x00 ... 0x7F] = LEAD (ACC),
    [0x80 ... 0x8F] = ROW (ERR, ACC, C1, C2, ERR, C1, ERR, C2),
    [0x90 ... 0x9F] = ROW (ERR, ACC, C1, C2, ERR, C1, C2, ERR),
    [0xA0 ... 0xBF] = ROW (ERR, ACC, C1, C2, C1, ERR, C2, ERR),
    [0xC0 ... 0xC1] = LEAD (ERR), /* overlong */
    [0xC2 ... 0xDF] = LEAD (C1),
    [0xE0] = LEAD (SE0),
    [0xE1 ... 0xEC] = LEAD (C2),
    [0xED] = LEAD (SED),
    [0xEE ... 0xEF] = LEAD (C2),
    [0xF0] = LEAD (SF0),
    [0xF1 ... 0xF3] = LEAD (C3),
    [0xF4] = LEAD (SF4),
    [0xF5 ... 0xFF] = LEAD (ERR), /* above U+10FFFF */
};

/* The first byte of the first invalid sequence in [p, lim), which starts
 * at a character boundary: where the DFA found a fault, utf8_seq gives
 * its place. */
static const uint8_t *
first_bad (const uint8_t *p, const uint8_t *lim)
{
    while (p < lim) {
        size_t n = *p < 0x80 ? 1 : utf8_seq (p);
        if (!n)
            return p;
        p += n;
    }
    return NULL; /* not reached: the DFA and utf8_seq agree */
}

/* Runs the DFA from p (a byte >= 0x80), 16 bytes at a time, to lim or to
 * a character boundary followed by 16 bytes of ASCII, and returns that
 * place; NULL if the text is not UTF-8. */
INLINE const uint8_t *
dfa_run (const uint8_t *p, const uint8_t *lim, const uint8_t *tail32)
{
    const uint8_t *tail = tail32 + 16;
    uint64_t s = ACC;

    for (;;) {
        if (lim - p >= 16) {
            /* unrolled: the shifts are the only chain */
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; i++)
                s = utf8_rows[p[i]] >> (s & 63);
            p += 16;
        } else {
            while (p < lim)
                s = utf8_rows[*p++] >> (s & 63);
        }
        if (p == lim || (s & 63) == ERR)
            break;
        if ((s & 63) == ACC && !(p <= tail ? high16_at (p) : high16_at (tail) >> (p - tail)))
            break;
    }
    return (s & 63) == ACC ? p : NULL;
}

/* The rest of a text from its first byte >= 0x80: the DFA and ASCII
 * scans by turns. Returns NULL if valid, else the first bad byte. */
INLINE const uint8_t *
text_rest (const uint8_t *p, const uint8_t *lim, const uint8_t *tail32, int isa)
{
    for (;;) {
        const uint8_t *run = p;
        if (!(p = dfa_run (p, lim, tail32)))
            return first_bad (run, lim);
        if (p == lim || (p = skip_ascii (p, lim, tail32, isa)) == lim)
            return NULL;
    }
}

static __attribute__ ((noinline)) const uint8_t *
text_rest_sse2 (const uint8_t *p, const uint8_t *lim, const uint8_t *tail32)
{
    return text_rest (p, lim, tail32, RM_BSON_ISA_SSE2);
}

/* With BMI2 a shift by a register is one cycle (shrx). */
static __attribute__ ((target ("bmi2"), noinline)) const uint8_t *
text_rest_bmi2 (const uint8_t *p, const uint8_t *lim, const uint8_t *tail32)
{
    return text_rest (p, lim, tail32, RM_BSON_ISA_AVX2);
}

/* utf8_value_scalar with 32-byte scans over ASCII and the DFA over the
 * rest, out of line. */
INLINE const uint8_t *
utf8_value_x86 (const uint8_t *p, const uint8_t *lim, const uint8_t *tail32, int isa)
{
    if (__builtin_expect ((p = skip_ascii (p, lim, tail32, isa)) == lim, 1))
        return NULL;
    return isa == RM_BSON_ISA_AVX2 ? text_rest_bmi2 (p, lim, tail32)
                                   : text_rest_sse2 (p, lim, tail32);
}

/* p plus the offset of the 0x00 (lowest set bit of m, below 16). A jump
 * on the offset, rather than an add: the next element's position hangs
 * on it, and documents of one collection repeat their keys, so the
 * predicted jump lets the walk run ahead instead of waiting for the load
 * and the scan. */
INLINE const uint8_t *
key_end (const uint8_t *p, unsigned m)
{
    switch (__builtin_ctz (m) & 15) { /* the & drops the range check */
    case 0: return p;
    case 1: return p + 1;
    case 2: return p + 2;
    case 3: return p + 3;
    case 4: return p + 4;
    case 5: return p + 5;
    case 6: return p + 6;
    case 7: return p + 7;
    case 8: return p + 8;
    case 9: return p + 9;
    case 10: return p + 10;
    case 11: return p + 11;
    case 12: return p + 12;
    case 13: return p + 13;
    case 14: return p + 14;
    default: return p + 15;
    }
}

/* cstring_scalar with 16-byte scans: an ASCII key under 16 bytes is one
 * window. The 0x00 ending it lies within 15 bytes past tail, so near the
 * end a window always has a set bit. */
INLINE const uint8_t *
cstring_x86 (const uint8_t *p, const uint8_t *tail, const uint8_t **bad)
{
    unsigned m = stop16 (p, tail);

    if (__builtin_expect (m && !p[__builtin_ctz (m)], 1))
        return key_end (p, m);
    for (;;) {
        size_t n;
        if (!m) {
            p += 16;
            m = stop16 (p, tail);
            continue;
        }
        p += __builtin_ctz (m);
        if (!*p)
            return p;
        if (!(n = utf8_seq (p))) {
            *bad = p;
            return NULL;
        }
        p += n;
        m = stop16 (p, tail);
    }
}
#endif

/* The byte scans of one walk: bounds for the loads past a position. */
typedef struct {
    const uint8_t *safe8;  /* the last 8-byte load (scalar) */
    const uint8_t *tail;   /* the last 16-byte window (x86) */
    const uint8_t *tail32; /* the last 32-byte window (x86) */
} reach_t;

INLINE const uint8_t *
scan_cstring (const uint8_t *p, reach_t r, const uint8_t **bad, int isa)
{
#ifdef HAVE_X86
    if (isa != RM_BSON_ISA_SCALAR)
        return cstring_x86 (p, r.tail, bad);
#endif
    return cstring_scalar (p, r.safe8, bad);
}

INLINE const uint8_t *
scan_utf8 (const uint8_t *p, const uint8_t *lim, reach_t r, int isa)
{
#ifdef HAVE_X86
    if (isa != RM_BSON_ISA_SCALAR)
        return utf8_value_x86 (p, lim, r.tail32, isa);
#endif
    return utf8_value_scalar (p, lim, r.safe8);
}

static const char *
type_name (uint8_t t)
{
    switch (t) {
    case 0x01: return "double";
    case 0x02: return "string";
    case 0x03: return "document";
    case 0x04: return "array";
    case 0x05: return "binary";
    case 0x07: return "ObjectId";
    case 0x08: return "bool";
    case 0x09: return "date";
    case 0x0B: return "regex";
    case 0x0C: return "DBPointer";
    case 0x0D: return "code";
    case 0x0E: return "symbol";
    case 0x0F: return "code with scope";
    case 0x10: return "int32";
    case 0x11: return "timestamp";
    case 0x12: return "int64";
    case 0x13: return "decimal128";
    default: return "value";
    }
}

/* Renders a key for a message into out (NULL: only measure): printable
 * ASCII and valid UTF-8 as is, '"' and '\' escaped, other bytes as \xNN,
 * and "..." after KEY_MAX characters. The key ends with 0x00. */
static size_t
render_key (const uint8_t *k, char *out)
{
    size_t n = 0;

    while (*k) {
        char unit[5];
        size_t u, adv = 1;
        uint8_t c = *k;

        if (c == '"' || c == '\\') {
            unit[0] = '\\', unit[1] = (char) c, u = 2;
        } else if (c >= 0x20 && c < 0x7F) {
            unit[0] = (char) c, u = 1;
        } else if (c >= 0x80 && (adv = utf8_seq (k)) != 0) {
            memcpy (unit, k, adv), u = adv;
        } else {
            snprintf (unit, sizeof unit, "\\x%02x", c), u = 4, adv = 1;
        }
        if (n + u > KEY_MAX) {
            if (out)
                memcpy (out + n, "...", 3);
            return n + 3;
        }
        if (out)
            memcpy (out + n, unit, u);
        n += u;
        k += adv;
    }
    return n;
}

/* Writes the dotted path of the containers' keys and then key (if any) to
 * out, in at most budget characters: when too long, the first key, "...",
 * and as many of the last keys as fit. */
static void
render_path (const walk_t *w, int depth, const uint8_t *key, char *out, size_t budget)
{
#define K(i) ((i) < (size_t) depth ? w->doc + w->st[(i) + 1].key : key)
    uint8_t len[MAX_DEPTH + 1]; /* a rendered key is at most KEY_MAX + 3 */
    size_t n = (size_t) depth + (key != NULL), total, o = 0, from = 1, i;

    out[0] = '\0';
    if (!n)
        return;
    for (total = n - 1, i = 0; i < n; i++)
        total += len[i] = (uint8_t) render_key (K (i), NULL);
    if (total > budget) {
        /* first "..." k[from] "." ... k[n-1] */
        size_t tail = len[n - 1];
        for (from = n - 1; from > 1 && len[0] + 3 + tail + 1 + len[from - 1] <= budget; from--)
            tail += 1 + len[from - 1];
        if (len[0] + 3 + tail > budget || from == 0) {
            if ((size_t) len[n - 1] + 3 > budget)
                return; /* not reached: every reason leaves room for 46 */
            memcpy (out, "...", 3), o = 3;
            render_key (K (n - 1), out + o), o += len[n - 1];
            out[o] = '\0';
            return;
        }
    }
    render_key (K (0), out), o = len[0];
    if (from > 1)
        memcpy (out + o, "...", 3), o += 3;
    for (i = from; i < n; i++) {
        if (from == 1 || i > from)
            out[o++] = '.';
        render_key (K (i), out + o), o += len[i];
    }
    out[o] = '\0';
#undef K
}

/* Fills the fault: offset of at, and the reason from fmt where F stands for
 * the quoted path of the containers' keys and key. Returns false. */
static bool __attribute__ ((format (printf, 5, 6)))
fail (const walk_t *w, int depth, const uint8_t *at, const uint8_t *key, const char *fmt, ...)
{
    rm_bson_fault_t *f = w->fault;
    char msg[sizeof f->reason], path[sizeof f->reason];
    char *mark;
    size_t fixed;
    va_list ap;

    if (!f)
        return false;
    f->offset = (size_t) (at - w->doc);
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    if (!(mark = strchr (msg, F[0]))) {
        memcpy (f->reason, msg, sizeof msg);
        return false;
    }
    *mark = '\0';
    fixed = strlen (msg) + strlen (mark + 1) + 2;
    render_path (w, depth, key, path,
                 fixed < sizeof f->reason - 1 ? sizeof f->reason - 1 - fixed : 0);
    snprintf (f->reason, sizeof f->reason, "%s\"%s\"%s", msg, path, mark + 1);
    return false;
}

#define FAIL(at, key, ...) fail (&w, depth, (at), (key), __VA_ARGS__)
#define OF_ITS (depth && doc[w.st[depth].key - 1] == 0x04 ? "array" : "document")

static bool
known_type (uint8_t t)
{
    return (t >= 0x01 && t <= 0x13) || t == 0x7F || t == 0xFF;
}

/* A key that is not terminated or not UTF-8; unless the type byte before
 * it is already wrong: that comes first in the document. */
static bool
key_fault (const walk_t *w, int depth, const uint8_t *el, const uint8_t *end,
           const uint8_t *bad)
{
    const uint8_t *key = el + 1;
    bool terminated = memchr (key, 0, (size_t) (end - key)) != NULL;

    if (!known_type (*el)) {
        if (terminated)
            return fail (w, depth, el, key, "unknown element type 0x%02x for field " F, *el);
        if (depth)
            return fail (w, depth, el, NULL, "unknown element type 0x%02x in " F, *el);
        return fail (w, depth, el, NULL, "unknown element type 0x%02x", *el);
    }
    if (bad)
        return fail (w, depth, bad, key, "invalid UTF-8 in field name " F);
    if (depth)
        return fail (w, depth, el, NULL, "field name not terminated in " F);
    return fail (w, depth, el, NULL, "field name not terminated");
}

/* The bounds of the scans' loads in a document of len bytes. */
INLINE reach_t
reach_of (const uint8_t *doc, size_t len)
{
    reach_t r;
    r.safe8 = len >= 8 ? doc + len - 8 : doc;
    r.tail = len >= 32 ? doc + len - 16 : NULL; /* x86: only for >= 32 */
    r.tail32 = len >= 32 ? doc + len - 32 : NULL;
    return r;
}

/* Checks the document, its top-level fields from offset from on (4: all
 * of them; past 4 when those before were found good another way). */
INLINE bool
walk (const uint8_t *doc, size_t len, rm_bson_fault_t *f, int isa, size_t from)
{
    walk_t w;
    const uint8_t *p, *end, *bad;
    reach_t reach;
    int depth = 0;
    int32_t declared;

    w.doc = doc;
    w.fault = f;
    if (len < 5)
        return FAIL (doc, NULL, "document of %zu bytes is shorter than 5", len);
    declared = (int32_t) rd32 (doc);
    if (declared < 5)
        return FAIL (doc, NULL, "document length %d is below 5", declared);
    if ((size_t) declared != len)
        return FAIL (doc, NULL, "document length %d does not match the %zu bytes given",
                     declared, len);
    if (doc[len - 1])
        return FAIL (doc + len - 1, NULL, "document does not end with 0x00");

    /* Every scan starts past byte 4: below 8 bytes, no 8-byte loads. */
    reach = reach_of (doc, len);
    p = doc + from;
    end = doc + len - 1;
    w.st[0].key = 0;
    w.st[0].end = (uint32_t) (len - 1);

    for (;;) {
        const uint8_t *el = p, *key, *v, *q;
        size_t avail;
        int32_t l;
        uint8_t t = *p;

        if (!t) {
            if (p != end) {
                if (!depth)
                    return FAIL (p, NULL, "0x00 end marker before the end of the document");
                return FAIL (p, NULL, "0x00 end marker before the end of %s " F,
                             OF_ITS);
            }
            if (!depth)
                return true;
            p = end + 1;
            end = doc + w.st[--depth].end;
            continue;
        }

        key = p + 1;
        bad = NULL;
        q = scan_cstring (key, reach, &bad, isa);
        if (!q || q >= end)
            return key_fault (&w, depth, el, end, bad);
        v = q + 1;
        avail = (size_t) (end - v); /* bytes for the value, before the 0x00 */

        switch (t) {
        case 0x01: /* double */
        case 0x09: /* UTC datetime */
        case 0x11: /* timestamp */
        case 0x12: /* int64 */
            if (avail < 8)
                goto past;
            p = v + 8;
            break;
        case 0x07: /* ObjectId */
            if (avail < 12)
                goto past;
            p = v + 12;
            break;
        case 0x10: /* int32 */
            if (avail < 4)
                goto past;
            p = v + 4;
            break;
        case 0x13: /* decimal128 */
            if (avail < 16)
                goto past;
            p = v + 16;
            break;
        case 0x06: /* undefined (deprecated) */
        case 0x0A: /* null */
            p = v;
            break;
        case 0x08: /* bool */
            if (avail < 1)
                goto past;
            if (*v > 1)
                return FAIL (v, key, "bool value 0x%02x of field " F " is not 0x00 or 0x01",
                             *v);
            p = v + 1;
            break;

        case 0x02: /* string */
        case 0x0D: /* JavaScript code */
        case 0x0E: /* symbol (deprecated) */
        case 0x0C: /* DBPointer (deprecated): string, then an ObjectId */
            if (avail < 4)
                goto past;
            l = (int32_t) rd32 (v);
            if (l < 1)
                return FAIL (v, key, "%s length %d for field " F " is below 1",
                             t == 0x0C ? "DBPointer namespace" : type_name (t), l);
            if ((size_t) l > avail - 4)
                return FAIL (v, key, "%s length %d for field " F
                             " runs past the end of its %s",
                             t == 0x0C ? "DBPointer namespace" : type_name (t), l, OF_ITS);
            if (v[4 + l - 1])
                return FAIL (v + 4 + l - 1, key, "%s of field " F " does not end with 0x00",
                             t == 0x0C ? "DBPointer namespace" : type_name (t));
            if ((bad = scan_utf8 (v + 4, v + 4 + l - 1, reach, isa)))
                return FAIL (bad, key, "invalid UTF-8 in the %s of field " F,
                             t == 0x02   ? "value"
                             : t == 0x0C ? "DBPointer namespace"
                                         : type_name (t));
            p = v + 4 + l;
            if (t == 0x0C) {
                if (avail - 4 - (size_t) l < 12)
                    return FAIL (p, key, "DBPointer value of field " F
                                 " runs past the end of its %s", OF_ITS);
                p += 12;
            }
            break;

        case 0x03: /* document */
        case 0x04: /* array */
            if (avail < 4)
                goto past;
            l = (int32_t) rd32 (v);
            if (l < 5)
                return FAIL (v, key, "%s " F " length %d is below 5",
                             t == 0x03 ? "nested document" : "array", l);
            if ((size_t) l > avail)
                return FAIL (v, key, "%s " F " length %d runs past the end of its %s",
                             t == 0x03 ? "nested document" : "array", l, OF_ITS);
            if (v[l - 1])
                return FAIL (v + l - 1, key, "%s " F " does not end with 0x00",
                             t == 0x03 ? "nested document" : "array");
            if (depth == MAX_DEPTH)
                return FAIL (el, key, "nesting deeper than %d levels at field " F,
                             MAX_DEPTH);
            end = v + l - 1;
            depth++;
            w.st[depth].key = (uint32_t) (key - doc);
            w.st[depth].end = (uint32_t) (end - doc);
            p = v + 4;
            break;

        case 0x05: /* binary: length, subtype, bytes */
            if (avail < 5)
                goto past;
            l = (int32_t) rd32 (v);
            if (l < 0)
                return FAIL (v, key, "binary length %d for field " F " is negative", l);
            if ((size_t) l > avail - 5)
                return FAIL (v, key, "binary length %d for field " F
                             " runs past the end of its %s", l, OF_ITS);
            /* The old binary subtype repeats the length inside. */
            if (v[4] == 0x02) {
                int32_t inner;
                if (l < 4)
                    return FAIL (v, key, "old binary (subtype 2) length %d for field " F
                                 " is below 4", l);
                inner = (int32_t) rd32 (v + 5);
                if (inner != l - 4)
                    return FAIL (v + 5, key, "old binary (subtype 2) inner length %d for "
                                 "field " F " is not %d", inner, l - 4);
            }
            p = v + 5 + l;
            break;

        case 0x0B: /* regex: pattern and options, two cstrings */
            if (!(q = scan_cstring (v, reach, &bad, isa)))
                return FAIL (bad, key, "invalid UTF-8 in the regex of field " F);
            if (q >= end)
                return FAIL (v, key, "regex pattern of field " F
                             " runs past the end of its %s", OF_ITS);
            v = q + 1;
            if (!(q = scan_cstring (v, reach, &bad, isa)))
                return FAIL (bad, key, "invalid UTF-8 in the regex options of field " F);
            if (q >= end)
                return FAIL (v, key, "regex options of field " F
                             " runs past the end of its %s", OF_ITS);
            p = q + 1;
            break;

        case 0x0F: { /* code with scope: total length, string, document */
            const uint8_t *s;
            int32_t ls, lscope;

            if (avail < 4)
                goto past;
            l = (int32_t) rd32 (v);
            if (l < 14)
                return FAIL (v, key, "code with scope length %d for field " F
                             " is below 14", l);
            if ((size_t) l > avail)
                return FAIL (v, key, "code with scope length %d for field " F
                             " runs past the end of its %s", l, OF_ITS);
            ls = (int32_t) rd32 (v + 4);
            if (ls < 1)
                return FAIL (v + 4, key, "code length %d for field " F " is below 1", ls);
            if (ls > l - 13) /* the scope takes 5 bytes at least */
                return FAIL (v + 4, key, "code length %d for field " F
                             " runs past the end of its code with scope", ls);
            if (v[8 + ls - 1])
                return FAIL (v + 8 + ls - 1, key, "code of field " F
                             " does not end with 0x00");
            if ((bad = scan_utf8 (v + 8, v + 8 + ls - 1, reach, isa)))
                return FAIL (bad, key, "invalid UTF-8 in the code of field " F);
            s = v + 8 + ls;
            lscope = (int32_t) rd32 (s);
            if (lscope != l - 8 - ls)
                return FAIL (s, key, "scope length %d for field " F " does not match the "
                             "%d bytes left in its code with scope", lscope, l - 8 - ls);
            if (s[lscope - 1])
                return FAIL (s + lscope - 1, key, "scope of field " F
                             " does not end with 0x00");
            if (depth == MAX_DEPTH)
                return FAIL (el, key, "nesting deeper than %d levels at field " F,
                             MAX_DEPTH);
            end = s + lscope - 1;
            depth++;
            w.st[depth].key = (uint32_t) (key - doc);
            w.st[depth].end = (uint32_t) (end - doc);
            p = s + 4;
            break;
        }

        default:
            /* Out here, the jump table of the switch spans 0x01-0x13. */
            if (t == 0x7F || t == 0xFF) { /* max key, min key */
                p = v;
                break;
            }
            return FAIL (el, key, "unknown element type 0x%02x for field " F, t);
        }
        continue;

past:
        return FAIL (v, key, "%s value of field " F " runs past the end of its %s",
                     type_name (t), OF_ITS);
    }
}

/* ---- The layout of the documents before (bsonlayout.h) ----
 *
 * A field the layout places (its type byte and key are the good
 * document's, and its value's length) needs only its value's own check:
 * none for a size fixed by its type, 0x00 or 0x01 for a bool, the NUL at
 * its end and its UTF-8 for a string. Anything else (a nested document, a
 * binary and the rest) ends the layout, and the walk goes on from there.
 * TPC-H's lineitems: fourteen of seventeen fields, two fifths of the
 * check's instructions. */

/* The kinds of value the layout holds: 1 nothing to check, 2 a bool, 3
 * a string (as code and symbol); 0 one that ends it. */
static uint8_t
like_kind (uint8_t t)
{
    switch (t) {
    case 0x01: case 0x06: case 0x07: case 0x09: case 0x0A: case 0x10: case 0x11: case 0x12:
    case 0x13: case 0x7F: case 0xFF:
        return 1;
    case 0x08:
        return 2;
    case 0x02: case 0x0D: case 0x0E:
        return 3;
    default:
        return 0;
    }
}

/* The layout of doc, a good document. */
static void
like_make (rm_bson_like_t *lk, const uint8_t *doc, size_t len)
{
    uint32_t p = 4, n = 0, c = 0;

    memset (lk->mask, 0, 4);
    while (doc[p] && n < RM_BSON_LIKE_FIELDS) {
        uint8_t t = doc[p];
        uint32_t v = p + 2 + (uint32_t) strlen ((const char *) doc + p + 1), e;
        switch (like_kind (t)) {
        case 1:
            e = v + (t == 0x06 || t == 0x0A || t == 0x7F || t == 0xFF ? 0
                     : t == 0x10                                      ? 4
                     : t == 0x07                                      ? 12
                     : t == 0x13                                      ? 16
                                                                      : 8);
            break;
        case 2: e = v + 1; break;
        case 3: e = v + 4 + rd32 (doc + v); break;
        default: e = UINT32_MAX; break;
        }
        if (e > RM_BSON_LIKE_MAX || e >= len)
            break;
        rm_layout_mask (lk->mask, t, p, v, e);
        if (like_kind (t) > 1) {
            lk->check_at[c] = v;
            lk->check_bool[c++] = t == 0x08;
        }
        lk->end[n++] = e;
        p = e;
    }
    lk->len = n ? lk->end[n - 1] : 0;
    lk->n_check = c;
    rm_layout_bytes (lk->bytes, doc, lk->mask, lk->len);
    lk->n = n;
    lk->served = 0;
}

/* Where the walk of doc (its length and terminator good) may start: past
 * the fields the layout places whose values are good (4: none). A
 * layout that places fewer than half of its fields is made again from a
 * later document (rm_layout_keep). */
INLINE size_t
like_take (rm_bson_like_t *lk, const uint8_t *doc, size_t len, int isa)
{
    uint32_t lim = lk->len < len - 1 ? lk->len : (uint32_t) (len - 1);
    uint32_t agree = isa == RM_BSON_ISA_AVX2 ? rm_layout_agree_avx2 (doc, lk->bytes, lk->mask, lim)
                                             : rm_layout_agree (doc, lk->bytes, lk->mask, lim);
    uint32_t k = agree < lk->len ? rm_layout_count (lk->end, lk->n, agree) : lk->n;
    reach_t reach = reach_of (doc, len);

    if (!rm_layout_keep (k, lk->n, &lk->served, &lk->wait, &lk->backoff))
        lk->n = 0;
    if (!k)
        return 4;
    for (uint32_t j = 0, to = lk->end[k - 1]; j < lk->n_check && lk->check_at[j] < to; j++) {
        const uint8_t *v = doc + lk->check_at[j];
        if (lk->check_bool[j]) {
            if (*v > 1)
                return 4; /* the walk says so, in its words */
        } else {
            uint32_t l = rd32 (v); /* the layout's: at least 1, within */
            if (v[4 + l - 1] || scan_utf8 (v + 4, v + 4 + l - 1, reach, isa))
                return 4;
        }
    }
    return lk->end[k - 1];
}

/* One walk and one take per instruction set, each a function of its own
 * (the layout's code inlined into the walk's function cost its loop a
 * tenth more instructions). Documents under 32 bytes take the scalar
 * ones: the x86 scans need one whole 32-byte window. The AVX2 walk is
 * compiled as the SSE2 one (an AVX2 build of all of it ran slower), but
 * long ASCII goes to ascii_long_avx2 and non-ASCII text to
 * text_rest_bmi2. */
typedef bool (*walk_fn_t) (const uint8_t *doc, size_t len, rm_bson_fault_t *f, size_t from);
typedef size_t (*take_fn_t) (rm_bson_like_t *lk, const uint8_t *doc, size_t len);
#define BY_ISA(name, isa)                                                                          \
    static __attribute__ ((noinline)) bool walk_##name (const uint8_t *doc, size_t len,           \
                                                        rm_bson_fault_t *f, size_t from)          \
    {                                                                                              \
        return walk (doc, len, f, isa, from);                                                      \
    }                                                                                              \
    static __attribute__ ((noinline)) size_t take_##name (rm_bson_like_t *lk, const uint8_t *doc, \
                                                          size_t len)                              \
    {                                                                                              \
        return like_take (lk, doc, len, isa);                                                      \
    }
BY_ISA (scalar, RM_BSON_ISA_SCALAR)
#ifdef HAVE_X86
BY_ISA (sse2, RM_BSON_ISA_SSE2)
BY_ISA (avx2, RM_BSON_ISA_AVX2)
#endif

/* rm_bson_check_like past its wait, by one instruction set's walk and
 * take: the fields the layout places taken, the rest walked, and a layout
 * made from a good document when none is kept. */
static __attribute__ ((noinline)) bool
like_check (rm_bson_like_t *lk, const uint8_t *doc, size_t len, rm_bson_fault_t *f, walk_fn_t walk_fn,
            take_fn_t take_fn)
{
    size_t from = 4;
    bool ok;
    if (lk->n && len >= 5 && rd32 (doc) == len && !doc[len - 1])
        from = take_fn (lk, doc, len);
    ok = walk_fn (doc, len, f, from);
    if (ok && !lk->n && !lk->wait)
        like_make (lk, doc, len);
    return ok;
}

/* Out of line: inlined into rm_bson_check_like, it made that function
 * save five registers at every call, the plain walk's too. */
static __attribute__ ((noinline)) bool
check_isa (rm_bson_like_t *lk, const uint8_t *doc, size_t len, rm_bson_fault_t *f,
           rm_bson_isa_t isa)
{
    walk_fn_t walk_fn = walk_scalar;
    take_fn_t take_fn = take_scalar;

#ifdef HAVE_X86
    if (len >= 32) {
        if (isa >= RM_BSON_ISA_AVX2 && __builtin_cpu_supports ("avx2") &&
            __builtin_cpu_supports ("bmi2")) {
            walk_fn = walk_avx2;
            take_fn = take_avx2;
        } else if (isa >= RM_BSON_ISA_SSE2) {
            walk_fn = walk_sse2;
            take_fn = take_sse2;
        }
    }
#endif
    if (!lk)
        return walk_fn (doc, len, f, 4);
    if (!lk->n && lk->wait) {
        lk->wait--;
        return walk_fn (doc, len, f, 4);
    }
    return like_check (lk, doc, len, f, walk_fn, take_fn);
}

bool
rm_bson_check_isa (const uint8_t *doc, size_t len, rm_bson_fault_t *f, rm_bson_isa_t isa)
{
    return check_isa (NULL, doc, len, f, isa);
}

#ifdef HAVE_X86
/* Whether the AVX2 walk runs here, asked of the CPU once. */
static inline bool
have_avx2 (void)
{
    static int avx2 = -1; /* every thread finds the same: relaxed will do */
    int have = __atomic_load_n (&avx2, __ATOMIC_RELAXED);
    if (have < 0) {
        have = __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("bmi2");
        __atomic_store_n (&avx2, have, __ATOMIC_RELAXED);
    }
    return have;
}
#endif

/* Both below take the common case straight, each call in tail position:
 * through check_isa's dispatch a document cost some thirty instructions
 * more, as much as the layout saves on documents that differ early. */
bool
rm_bson_check (const uint8_t *doc, size_t len, rm_bson_fault_t *f)
{
#ifdef HAVE_X86
    if (len >= 32 && have_avx2 ())
        return walk_avx2 (doc, len, f, 4);
#endif
    return check_isa (NULL, doc, len, f, RM_BSON_ISA_BEST);
}

void
rm_bson_like_init (rm_bson_like_t *like)
{
    like->n = like->wait = like->backoff = like->served = 0;
    like->len = 0;
}

bool
rm_bson_check_like (rm_bson_like_t *like, const uint8_t *doc, size_t len, rm_bson_fault_t *f)
{
#ifdef HAVE_X86
    if (len >= 32 && have_avx2 ()) {
        if (!like->n && like->wait) {
            /* No layout for a while: the plain walk, a call in tail
             * position (documents that differ early pay nothing more). */
            like->wait--;
            return walk_avx2 (doc, len, f, 4);
        }
        return like_check (like, doc, len, f, walk_avx2, take_avx2);
    }
#endif
    return check_isa (like, doc, len, f, RM_BSON_ISA_BEST);
}
