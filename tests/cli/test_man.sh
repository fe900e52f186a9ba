#!/usr/bin/env bash
# The man pages (issue 22, "Docs"): docs/*.md through scripts/md2man.awk,
# rendered by groff as man renders them, checked on what a reader sees:
#  - each page converts, and groff -ww finds nothing to warn about;
#  - NAME ("name - what") and SYNOPSIS are there;
#  - every option that remodel --help and each command's --help print is
#    set in bold in that command's section of remodel(1) (or its OPTIONS),
#    and every option of remodel-online --help in remodel-online(1)'s
#    OPTIONS, each online command with a section of its own: the lists
#    come from the programs, so a new option without its page fails here;
#  - every step kind of the plan parser (common/engine/step_table.c) has
#    its section in remodel-plan(5), every key it takes in bold there;
#  - make install DESTDIR=... PREFIX=/usr puts the three pages under
#    share/man, and make uninstall removes them.
#   REMODEL=build/remodel bash tests/cli/test_man.sh
. "$(dirname "$0")/lib.sh"
B=$(dirname "$REMODEL")
B=${B#"$ROOT"/}
ONLINE=$(dirname "$REMODEL")/remodel-online
export MONGOC_DISABLE_SHM=1 # as remodel sets it for remodel-online
mk() { make --no-print-directory -C "$ROOT" BUILD="$B" "$@"; }

if ! command -v groff >/dev/null; then
    fail "groff is installed (scripts/install-deps.sh: groff-base)"
    exit 0
fi

# render PAGE: the page as a reader sees it, in ASCII (no Unicode hyphens),
# on lines long enough that nothing wraps or hyphenates, with bold kept as
# groff's overstrike (-P-c) and turned into \001...\002 around each run.
render() {
    groff -man -Tascii -rLL=250n -rHY=0 -P-c -P-u "$1" 2>/dev/null | awk '{
        out = ""; inb = 0
        for (i = 1; i <= length($0); i++) {
            c = substr($0, i, 1)
            if (substr($0, i + 1, 1) == "\b" && substr($0, i + 2, 1) == c) {
                if (!inb) { out = out "\001"; inb = 1 }
                out = out c; i += 2
            } else {
                if (inb) { out = out "\002"; inb = 0 }
                if (c != "\b") out = out c
            }
        }
        if (inb) out = out "\002"
        print out
    }'
}
plain() { tr -d '\001\002' <"$1"; }
# section FILE HEADING: the lines of the .SH (HEADING at column 0) or .SS
# (at column 3) whose heading starts with HEADING, to the next heading.
section() {
    awk -v h="$2" '{ p = $0; gsub(/[\001\002]/, "", p) }
        /^(   )?\001/ { on = index(p, h) == 1 || index(p, "   " h) == 1 }
        on' "$1"
}
# bold FILE: each bold run, one a line.
bold() { awk '{ s = $0; while (match(s, /\001[^\002]*\002/)) {
        print substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH) } }' "$1"; }
# options [all]: the option names (--long, -x) of a help text on stdin: of
# its usage and option lines (an option line starts with one; a line
# mentioning another command's option is not its), or with "all" of every
# line (remodel --help names them in its list of commands).
options() {
    awk -v all="${1:-}" 'all || /^usage:/ || /^ +(-|remodel )/ { s = $0
        while (match(s, /--[A-Za-z][A-Za-z0-9-]*/)) { print substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH) }
        if ($0 ~ /^ +-/) { s = $0
            while (match(s, /(^|[ ,])-[A-Za-z]([ ,]|$)/)) { o = substr(s, RSTART, RLENGTH); gsub(/[ ,]/, "", o); print o; s = substr(s, RSTART + RLENGTH - 1) } } }' | sort -u
}

pages="remodel.1 remodel-online.1 remodel-plan.5"
for p in $pages; do
    name=${p%.*}
    if ! (cd "$ROOT" && awk -f scripts/md2man.awk "docs/$p.md") >"$T/$p" 2>"$T/err"; then
        fail "$p: md2man.awk converts docs/$p.md" "$(cat "$T/err")"
        continue
    fi
    groff -ww -z -man "$T/$p" >"$T/warn" 2>&1
    expect_eq "$p: groff -ww -man renders it without a warning" "$?:$(cat "$T/warn")" "0:"
    if command -v man >/dev/null; then
        n=$(MANWIDTH=80 MAN_KEEP_FORMATTING= man -l "$T/$p" 2>"$T/err" | grep -c .)
        expect_eq "$p: man -l shows it (no error)" "$([ "$n" -gt 20 ] && echo lines):$(cat "$T/err")" "lines:"
    fi
    render "$T/$p" >"$T/$p.txt"
    section "$T/$p.txt" NAME | plain /dev/stdin >"$T/name"
    expect_eq "$p: NAME reads \"$name - ...\"" "$(sed -n 2p "$T/name" | grep -c "^       $name - [a-z]")" 1
    section "$T/$p.txt" SYNOPSIS >"$T/syn"
    expect_eq "$p: SYNOPSIS is there, not empty" "$([ "$(wc -l <"$T/syn")" -gt 1 ] && echo yes)" yes
    for s in DESCRIPTION "EXIT STATUS" EXAMPLES "SEE ALSO"; do
        [ "$p" == remodel-plan.5 ] && [ "$s" == "EXIT STATUS" ] && continue
        expect_eq "$p: has $s" "$(plain "$T/$p.txt" | grep -cx "$s")" 1
    done
done

# remodel(1): each command of remodel --help has its section; each option
# of its --help is bold there or in OPTIONS.
R=$T/remodel.1.txt
section "$R" OPTIONS | bold /dev/stdin >"$T/common"
"$REMODEL" --help >"$T/top"
cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$T/top")
expect_eq "remodel --help lists its commands" "$(wc -w <<<"$cmds" | tr -d ' ')" 10
bold "$R" >"$T/all"
missing=
for o in $(options all <"$T/top"); do grep -qxF -- "$o" "$T/all" || missing="$missing $o"; done
expect_eq "remodel(1): every option remodel --help names, in bold" "$missing" ""
"$ONLINE" --help >"$T/online-help" 2>&1
for c in $cmds; do
    section "$R" "remodel $c" >"$T/sec"
    if [ ! -s "$T/sec" ]; then fail "remodel(1): a section \"remodel $c ...\""; continue; fi
    "$REMODEL" "$c" --help >"$T/help" 2>&1
    if cmp -s "$T/help" "$T/online-help"; then
        # The companion's command: its own usage line's options here, the
        # rest in remodel-online(1).
        grep "remodel $c " "$T/help" >"$T/help2"
        mv "$T/help2" "$T/help"
    fi
    bold "$T/sec" | cat - "$T/common" >"$T/ok"
    missing=
    for o in $(options <"$T/help"); do grep -qxF -- "$o" "$T/ok" || missing="$missing $o"; done
    expect_eq "remodel(1): remodel $c: each of its $(options <"$T/help" | wc -l) options in bold" "$missing" ""
done

# remodel-online(1): each option in OPTIONS, each command a section.
O=$T/remodel-online.1.txt
section "$O" OPTIONS | bold /dev/stdin >"$T/ok"
n=$(options <"$T/online-help" | wc -l)
missing=
for o in $(options <"$T/online-help"); do grep -qxF -- "$o" "$T/ok" || missing="$missing $o"; done
expect_eq "remodel-online(1): each of the $n options of remodel-online --help in bold in OPTIONS" \
    "$([ "$n" -ge 19 ] && echo many):$missing" "many:"
# (remodel compile is remodel's own since issue 22: remodel(1) has it.)
ocmds=$(grep -o 'remodel online [a-z|]*' "$T/online-help" | sed 's/remodel online //' | tr '|' '\n' | sort -u)
missing=
for c in $ocmds; do
    h="remodel online $c"
    [ -n "$(section "$O" "$h ")" ] || missing="$missing $c"
done
expect_eq "remodel-online(1): a section for each of its $(wc -w <<<"$ocmds" | tr -d ' ') commands" "$missing" ""

# remodel-plan(5): the parser's step kinds and their keys, from the table.
P=$T/remodel-plan.5.txt
awk 'BEGIN { RS = "\\[RM_STEP_" } NR > 1 && !toy { s = $0; line = ""
        if (i = index(s, "};")) s = substr(s, 1, i)  # the table ends there
        if (i = index(s, "#ifdef")) { s = substr(s, 1, i); toy = 1 }  # the test build has a toy after
        while (match(s, /"[^"]*"/)) { w = substr(s, RSTART + 1, RLENGTH - 2); sub(/^\*/, "", w)
            line = line " " w; s = substr(s, RSTART + RLENGTH) }
        sub(/^ /, "", line); if (line != "") print line }' "$ROOT/common/engine/step_table.c" >"$T/kinds"
# The keys every step takes besides, as the parser lists them in its
# "unknown key" message (common/engine/: ", allowMissing, why").
every=$(cat "$ROOT"/common/engine/*.c | grep -o '", [a-zA-Z, ]*allowMissing[a-zA-Z, ]*"' | head -1 | tr -d '",')
expect_eq "step_table.c: the fourteen step kinds read" "$(wc -l <"$T/kinds" | tr -d ' '):$every" "14: filter allowMissing why"
bold "$P" >"$T/all"
missing=
for k in $every; do grep -qxF -- "$k" "$T/all" || missing="$missing $k"; done
expect_eq "remodel-plan(5): the keys of every step ($every) in bold" "$missing" ""
while read -r kind keys; do
    section "$P" "$kind" | awk -v k="$kind" 'NR > 1 || $0 ~ "^   \001" k "\002$"' >"$T/sec"
    if [ ! -s "$T/sec" ]; then fail "remodel-plan(5): a section \"$kind\""; continue; fi
    bold "$T/sec" >"$T/ok"
    missing=
    for k in $keys; do grep -qxF -- "$k" "$T/ok" || missing="$missing $k"; done
    expect_eq "remodel-plan(5): $kind: its section, each of its $(wc -w <<<"$keys" | tr -d ' ') keys in bold" "$missing" ""
done <"$T/kinds"

# make man, make install, make uninstall.
D=$T/d
mk -s install DESTDIR="$D" PREFIX=/usr >"$T/out" 2>"$T/err"
expect_eq "make install DESTDIR PREFIX=/usr: exit 0" "$?" 0
got=$(cd "$D/usr" 2>/dev/null && find share -type f | sort | tr '\n' ' ')
expect_eq "... the three pages under share/man" "$got" \
    "share/man/man1/remodel-online.1 share/man/man1/remodel.1 share/man/man5/remodel-plan.5 "
for p in $pages; do
    s=${p##*.}
    expect_eq "... $p installed as converted" \
        "$(cmp -s "$D/usr/share/man/man$s/$p" "$T/$p" && echo same)" same
done
mk -s uninstall DESTDIR="$D" PREFIX=/usr >"$T/out" 2>"$T/err"
expect_eq "make uninstall: exit 0, no page left" "$?:$(find "$D" -path '*/man/*' -type f | wc -l)" "0:0"
out=$(mk -n man 2>&1)
expect_eq "make -n man after install: nothing to rebuild" "$(grep -c md2man <<<"$out")" 0
out=$(mk -n -W docs/remodel-plan.5.md man 2>&1)
expect_eq "docs/remodel-plan.5.md changed: make man rebuilds that page only" \
    "$(grep -c 'md2man.awk docs/remodel-plan.5.md' <<<"$out"):$(grep -c md2man <<<"$out")" "1:1"
