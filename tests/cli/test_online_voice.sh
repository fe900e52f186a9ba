#!/usr/bin/env bash
# One voice (issue 53): every line remodel-online says goes through its
# reporter, conn/online_say.c, which alone picks the stream, honours
# --quiet and --log-format json and asks whether standard error is a
# terminal. A file of shell-ext/ that names standard output or error,
# prints to one without naming it (printf, puts, rm_cli_error), reads
# o->quiet or calls isatty decides one of those itself. The files not
# converted are listed in scripts/voice-unported.txt, a list that only
# shrinks: a listed file that no longer prints by hand fails too (remove
# it from the list).
#   REMODEL=build/remodel bash tests/cli/test_online_voice.sh
. "$(dirname "$0")/lib.sh"

# voice_check TOP LIST: "says LAYER/FILE: LINE" per file of TOP/*/ that
# prints by hand and is not listed, "gone LAYER/FILE" per listed file that
# is not there, "quiet LAYER/FILE" per listed file that no longer prints
# by hand. A stream handed in (FILE *out, as status's table
# is given online_say_out_stream) is the reporter's choice, not the
# file's; string literals and comments are not code.
voice_check() {
    python3 - "$1" "$2" <<'PYEOF'
import os, re, sys
top, listing = sys.argv[1], sys.argv[2]
said = re.compile(r"\b(printf|vprintf|puts|putchar|perror)\s*\(|\bstd(err|out)\b|"
                  r"\b(STDERR|STDOUT)_FILENO\b|\brm_cli_(message|vmessage|error)\s*\(|"
                  r"->quiet\b(?!\s*=[^=])|\bisatty\s*\(")
listed = [l.strip() for l in open(listing, encoding="utf-8") if l.strip() and not l.startswith("#")]
for f in sorted(set(listed)):
    if not os.path.exists(os.path.join(top, f)):
        print("gone", f)
for d in sorted(os.listdir(top)):
    if not os.path.isdir(os.path.join(top, d)):
        continue
    for name in sorted(os.listdir(os.path.join(top, d))):
        f = d + "/" + name
        if not name.endswith(".c") or f == "conn/online_say.c":
            continue
        hits = []
        for n, line in enumerate(open(os.path.join(top, f), encoding="utf-8"), 1):
            code = re.sub(r'"(\\.|[^"\\])*"', '""', line)
            code = re.sub(r"/\*.*?(\*/|$)|//.*", "", code)
            if said.search(code) and not code.lstrip().startswith("*"):
                hits.append(n)
        if hits and f not in listed:
            print("says %s: %d" % (f, hits[0]))
        if not hits and f in listed:
            print("quiet %s: remove it from the list" % f)
PYEOF
}

list="$ROOT/scripts/voice-unported.txt"
expect_eq "shell-ext/: every line said through conn/online_say.c but the listed files'" \
    "$(voice_check "$ROOT/shell-ext" "$list")" ""

# The check itself: each way of printing by hand found, in a file not
# listed; a stream handed in, a string, a comment and setting o->quiet
# are not; a listed file gone is named.
mkdir -p "$T/v/cmd" "$T/v/conn"
printf 'fprintf (stderr, "x");\n' >"$T/v/cmd/a.c"
printf 'if (!on->o->quiet)\n' >"$T/v/cmd/b.c"
printf 'puts ("x");\n' >"$T/v/cmd/c.c"
printf 'x = isatty (2);\n' >"$T/v/cmd/d.c"
printf 'rm_cli_error (&err);\n' >"$T/v/cmd/e.c"
printf 'fprintf (out, "on stderr");\n/* stdout */\no->quiet = true;\nsnprintf (b, 9, "x");\n' >"$T/v/cmd/f.c"
printf 'fputs ("x", stdout);\n' >"$T/v/conn/online_say.c"
printf 'cmd/g.c\ncmd/f.c\n' >"$T/v/list"
expect_eq "stderr, o->quiet read, puts, isatty, rm_cli_error: each named; a handed stream, a string, a comment, a set o->quiet: none; a listed file printing nothing: named" \
    "$(voice_check "$T/v" "$T/v/list" | tr '\n' ' ')" \
    "gone cmd/g.c says cmd/a.c: 1 says cmd/b.c: 1 says cmd/c.c: 1 says cmd/d.c: 1 says cmd/e.c: 1 quiet cmd/f.c: remove it from the list "
exit 0
