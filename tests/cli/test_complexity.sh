#!/usr/bin/env bash
# Each function's complexity (issue 53): scripts/check_complexity.sh over
# shell-ext/ (a PASS or FAIL line per function over the limits or listed
# in scripts/complexity-allow.txt), then the check itself on a small tree
# of its own: a function over the limits (complexity, lines, parameters)
# fails unless listed, a listed one within them fails (the list only
# shrinks), and so does one listed that is no more.
#   REMODEL=build/remodel bash tests/cli/test_complexity.sh
. "$(dirname "$0")/lib.sh"

check=$ROOT/scripts/check_complexity.sh
lizard=${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/bin/lizard
if [ ! -x "$lizard" ] && ! command -v lizard >/dev/null; then
    echo "SKIP complexity: no lizard (tests/peers/install.sh installs it)"
    exit 0
fi

# The project's own: its lines as they are (tests/run.sh counts them).
"$check" "$ROOT"

# A tree of one file with a function of complexity 42 (41 ifs) and one
# of 3, and the allow-list given.
mkdir -p "$T/tree/shell-ext/cmd"
{
    echo "int big (int x)"
    echo "{"
    for i in $(seq 1 41); do echo "    if (x == $i) x++;"; done
    echo "    return x;"
    echo "}"
    echo "int small (int x)"
    echo "{"
    echo "    if (x) return 1;"
    echo "    if (x > 2) return 2;"
    echo "    return 0;"
    echo "}"
} >"$T/tree/shell-ext/cmd/f.c"
mini() { printf '%s\n' "$@" >"$T/allow"; "$check" "$T/tree" "$T/allow" >"$T/out" 2>&1; rc=$?; }

mini "# nothing listed"
expect_eq "a function over 40, not listed: fails, naming it and its figures" \
    "$rc:$(grep -c '^FAIL complexity: shell-ext/cmd/f.c:big: complexity 42, 45 lines, 1 parameter (at most 40, 120, 7)$' "$T/out")" "1:1"

mini "shell-ext/cmd/f.c:big"
expect_eq "listed: passes, said allowed for now" \
    "$rc:$(grep -c '^PASS complexity: shell-ext/cmd/f.c:big: complexity 42, 45 lines, 1 parameter, allowed for now' "$T/out"):$(grep -c '^FAIL' "$T/out")" "0:1:0"

mini "shell-ext/cmd/f.c:big" "shell-ext/cmd/f.c:small  # done already"
expect_eq "listed but within the limits: fails (the list only shrinks)" \
    "$rc:$(grep -c '^FAIL complexity: shell-ext/cmd/f.c:small is within the limits now' "$T/out")" "1:1"

mini "shell-ext/cmd/f.c:big" "shell-ext/cmd/gone.c:old"
expect_eq "listed but no more: fails, naming it" \
    "$rc:$(grep -c '^FAIL complexity: shell-ext/cmd/gone.c:old, listed in allow, is not in shell-ext/ now' "$T/out")" "1:1"

# Over 120 lines at a complexity of 1.
{
    echo "int long_one (int x)"
    echo "{"
    for i in $(seq 1 125); do echo "    x += $i;"; done
    echo "    return x;"
    echo "}"
} >"$T/tree/shell-ext/cmd/f.c"
mini "# none"
expect_eq "a function over 120 lines: fails" \
    "$rc:$(grep -c '^FAIL complexity: shell-ext/cmd/f.c:long_one: complexity 1, 129 lines' "$T/out")" "1:1"

# Eight parameters, and seven.
{
    echo "int eight (int a, int b, int c, int d, int e, int f, int g, int h)"
    echo "{"
    echo "    return a + b + c + d + e + f + g + h;"
    echo "}"
    echo "int seven (int a, int b, int c, int d, int e, int f, int g)"
    echo "{"
    echo "    return a + b + c + d + e + f + g;"
    echo "}"
} >"$T/tree/shell-ext/cmd/f.c"
mini "# none"
expect_eq "a function of 8 parameters fails, naming them; one of 7 passes" \
    "$rc:$(grep -c '^FAIL complexity: shell-ext/cmd/f.c:eight: complexity 1, 4 lines, 8 parameters (at most 40, 120, 7)$' "$T/out"):$(grep -c 'f.c:seven' "$T/out")" "1:1:0"
mini "shell-ext/cmd/f.c:eight"
expect_eq "listed: passes" "$rc:$(grep -c '^FAIL' "$T/out")" "0:0"
