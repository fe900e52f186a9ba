/*
 * text.c: fixed-capacity string building and filler prose. Buffers live on
 * the caller's stack and are reused for every document, so generating text
 * allocates nothing. Appends past the capacity are cut off rather than
 * failing: a slightly shorter sentence is harmless in sample data.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
gen_buf_init (gen_buf_t *buf, char *storage, size_t cap)
{
    buf->data = storage;
    buf->cap = cap;
    gen_buf_reset (buf);
}

void
gen_buf_reset (gen_buf_t *buf)
{
    buf->len = 0;
    buf->data[0] = '\0';
}

void
gen_buf_put (gen_buf_t *buf, const char *str)
{
    size_t n = strlen (str);

    if (n > buf->cap - 1 - buf->len) {
        n = buf->cap - 1 - buf->len;
    }
    memcpy (buf->data + buf->len, str, n);
    buf->len += n;
    buf->data[buf->len] = '\0';
}

void
gen_buf_putc (gen_buf_t *buf, char c)
{
    if (buf->len + 1 < buf->cap) {
        buf->data[buf->len++] = c;
        buf->data[buf->len] = '\0';
    }
}

/* Only used with %s, %d, %u and friends, which do not depend on the locale
 * (and this program never calls setlocale anyway). */
void
gen_buf_printf (gen_buf_t *buf, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf->data + buf->len, buf->cap - buf->len, fmt, ap);
    va_end (ap);
    if (n < 0) {
        buf->data[buf->len] = '\0';
    } else if ((size_t) n >= buf->cap - buf->len) {
        buf->len = buf->cap - 1;
    } else {
        buf->len += (size_t) n;
    }
}

/* ASCII-only upper-casing: toupper() would consult the locale. */
static void
capitalize_at (gen_buf_t *buf, size_t pos)
{
    if (pos < buf->len && buf->data[pos] >= 'a' && buf->data[pos] <= 'z') {
        buf->data[pos] = (char) (buf->data[pos] - 'a' + 'A');
    }
}

void
gen_text_sentence (gen_buf_t *buf, gen_rng_t *rng, int min_words, int max_words)
{
    const int words = gen_rng_between (rng, min_words, max_words);
    const size_t start = buf->len;

    for (int i = 0; i < words; i++) {
        if (i > 0) {
            /* An occasional comma keeps long sentences from reading as lists. */
            if (i > 2 && i < words - 2 && gen_rng_below (rng, 12) == 0) {
                gen_buf_putc (buf, ',');
            }
            gen_buf_putc (buf, ' ');
        }
        gen_buf_put (buf, gen_list_pick (&gen_list_vocab, rng));
    }
    capitalize_at (buf, start);
    gen_buf_putc (buf, gen_rng_below (rng, 10) == 0 ? '?' : '.');
}

void
gen_text_paragraphs (gen_buf_t *buf, gen_rng_t *rng, int min_par, int max_par)
{
    const int pars = gen_rng_between (rng, min_par, max_par);

    for (int p = 0; p < pars; p++) {
        const int sentences = gen_rng_between (rng, 2, 5);

        if (p > 0) {
            gen_buf_put (buf, "\n\n");
        }
        for (int s = 0; s < sentences; s++) {
            if (s > 0) {
                gen_buf_putc (buf, ' ');
            }
            gen_text_sentence (buf, rng, 6, 16);
        }
    }
}

/* Headline style: "Why Schema Design Matters", every word capitalized. */
void
gen_text_title (gen_buf_t *buf, gen_rng_t *rng)
{
    const int words = gen_rng_between (rng, 3, 7);

    for (int i = 0; i < words; i++) {
        const size_t start = buf->len + (i > 0 ? 1 : 0);

        if (i > 0) {
            gen_buf_putc (buf, ' ');
        }
        gen_buf_put (buf, gen_list_pick (i == 0 ? &gen_list_title_words : &gen_list_vocab, rng));
        capitalize_at (buf, start);
    }
}
