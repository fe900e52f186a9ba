#!/usr/bin/env python3
"""One benchmark's figures, written where they belong: always to
BUILD/bench/NAME.md (the current figures of the last run, nothing else),
and into the report (BENCHMARKS.md) between its markers

    <!-- NAME: begin -->
    ...
    <!-- NAME: end -->

replacing what was there. Never appended: a report without the markers is
left as it is and the figures stay in BUILD (BENCHMARKS.md is kept under
300 lines by hand; its prose sits outside the markers, the scripts' tables
inside). BENCH_NOTE, when set, is said under the figures (a loaded
machine, say).

    section.py NAME BODY_FILE REPORT BUILD_DIR     (REPORT "-": BUILD only)
"""
import os
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: section.py NAME BODY_FILE REPORT BUILD_DIR")
    name, body_file, report, build = sys.argv[1:5]
    body = open(body_file).read().strip("\n")
    note = os.environ.get("BENCH_NOTE", "").strip()
    if note:
        body += "\n\n" + note
    os.makedirs(os.path.join(build, "bench"), exist_ok=True)
    mine = os.path.join(build, "bench", name + ".md")
    with open(mine, "w") as f:
        f.write(body + "\n")
    print("bench: the figures are in " + mine, file=sys.stderr)
    if report == "-":
        return
    start, end = "<!-- %s: begin -->" % name, "<!-- %s: end -->" % name
    try:
        text = open(report).read()
    except OSError:
        text = ""
    i = text.find(start)
    j = text.find(end, i + len(start)) if i >= 0 else -1
    if i < 0 or j < 0:
        print("bench: %s has no %s ... %s markers: left as it is" % (report, start, end),
              file=sys.stderr)
        return
    text = text[:i] + start + "\n" + body + "\n" + text[j:]
    tmp = report + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, report)
    print("bench: replaced the %s section of %s" % (name, report), file=sys.stderr)


if __name__ == "__main__":
    main()
