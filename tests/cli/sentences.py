#!/usr/bin/env python3
"""The median sentence length, in words, of a Markdown document's prose
(issue 52: docs/online.md read at a median of 49 words a sentence).

Prose is what is left without fenced code blocks, tables, headings and
HTML comments; a list item or paragraph is joined into one text, inline
code counts as one word, and a sentence ends at '.', '?' or '!' before a
space or the end, or at the end of a list item or paragraph.

    python3 tests/cli/sentences.py [--max N] FILE...

prints "MEDIAN WORDS SENTENCES FILE" for each file; with --max, exits 1
when a file's median is above N."""
import re
import sys


def blocks(text):
    """The paragraphs and list items of text's prose."""
    out, cur, fence = [], [], False
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("```"):
            fence = not fence
            if cur:
                out.append(" ".join(cur)); cur = []
            continue
        if fence or s.startswith("|") or s.startswith("#") or s.startswith("<!--"):
            if cur:
                out.append(" ".join(cur)); cur = []
            continue
        if not s or re.match(r"^([-*+]|\d+\.)\s", s):
            if cur:
                out.append(" ".join(cur)); cur = []
            s = re.sub(r"^([-*+]|\d+\.)\s+", "", s)
        if s:
            cur.append(s)
    if cur:
        out.append(" ".join(cur))
    return out


def sentences(block):
    block = re.sub(r"`[^`]*`", "CODE", block)
    block = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", block)
    # Abbreviations that end in a dot but not a sentence.
    block = re.sub(r"\b(e\.g|i\.e|etc|vs|cf)\.", r"\1", block)
    parts = re.split(r"(?<=[.?!])\s+", block)
    return [p for p in parts if re.search(r"\w", p)]


def median(xs):
    xs = sorted(xs)
    if not xs:
        return 0
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def main(argv):
    limit = None
    if len(argv) > 1 and argv[0] == "--max":
        limit, argv = float(argv[1]), argv[2:]
    worst = 0
    for path in argv:
        lengths = [len(s.split()) for b in blocks(open(path, encoding="utf-8").read())
                   for s in sentences(b)]
        m = median(lengths)
        print("%g %d %d %s" % (m, sum(lengths), len(lengths), path))
        if limit is not None and m > limit:
            worst = 1
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
