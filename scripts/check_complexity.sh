#!/usr/bin/env bash
# Each function's complexity (issue 53): lizard (installed by
# tests/peers/install.sh into the peers cache) over shell-ext/, failing on
# a function whose cyclomatic complexity is over 40, that is over 120
# lines or that takes more than 7 parameters (issue 60: they grew unseen),
# unless scripts/complexity-allow.txt lists it ("file:function", a line
# each; # starts a comment). A listed function now within every limit
# fails too, so the list only shrinks: take its line out.
#   scripts/check_complexity.sh [SOURCE_ROOT [ALLOW_FILE]]   (make check)
# Prints a PASS or FAIL line per function over a limit or listed, and one
# for the whole (tests/run.sh counts them); exits 1 on any FAIL, 0 with a
# SKIP line when lizard is not installed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$here}
allow=${2:-$here/scripts/complexity-allow.txt}
MAX_CCN=${MAX_CCN:-40}
MAX_LINES=${MAX_LINES:-120}
MAX_PARAMS=${MAX_PARAMS:-7}
cache=${REMODEL_PEERS:-$HOME/.cache/remodel-peers}
lizard=${LIZARD:-$cache/bin/lizard}
if [ ! -x "$lizard" ]; then
    lizard=$(command -v lizard) || {
        echo "SKIP complexity: no lizard (tests/peers/install.sh installs it)"
        exit 0
    }
fi

# Every function of shell-ext/ as "file:function ccn length params", by
# lizard's CSV (nloc,ccn,token,param,length,location,file,function,
# long_name,start,end).
rows=$(cd "$root" && "$lizard" --csv shell-ext 2>/dev/null) || {
    echo "FAIL complexity: lizard failed on $root/shell-ext"
    exit 1
}
list=$(printf '%s\n' "$rows" | awk -F, '{
    gsub(/"/, ""); f = $7; sub(/^\.\//, "", f); print f ":" $8, $2, $5, $4 }')
[ -n "$list" ] || { echo "FAIL complexity: lizard found no function in $root/shell-ext"; exit 1; }
allowed=$( [ -f "$allow" ] && sed -e 's/#.*//' -e 's/[[:space:]]//g' "$allow" | grep -v '^$')

fails=0 over=0
while read -r name ccn len params; do
    big=0
    [ "$ccn" -gt "$MAX_CCN" ] || [ "$len" -gt "$MAX_LINES" ] || [ "$params" -gt "$MAX_PARAMS" ] && big=1
    figures="complexity $ccn, $len lines, $params parameter$([ "$params" -eq 1 ] || echo s)"
    listed=0
    grep -qxF "$name" <<<"$allowed" && listed=1
    if [ $big -eq 1 ] && [ $listed -eq 0 ]; then
        echo "FAIL complexity: $name: $figures (at most $MAX_CCN, $MAX_LINES, $MAX_PARAMS)"
        fails=$((fails + 1))
    elif [ $big -eq 1 ]; then
        echo "PASS complexity: $name: $figures, allowed for now ($(basename "$allow"))"
        over=$((over + 1))
    elif [ $listed -eq 1 ]; then
        echo "FAIL complexity: $name is within the limits now ($figures): take its line out of $(basename "$allow")"
        fails=$((fails + 1))
    fi
done <<<"$list"
# A listed function that is no more (renamed, split, its file gone).
while read -r name; do
    [ -n "$name" ] || continue
    awk '{ print $1 }' <<<"$list" | grep -qxF "$name" || {
        echo "FAIL complexity: $name, listed in $(basename "$allow"), is not in shell-ext/ now: take its line out"
        fails=$((fails + 1))
    }
done <<<"$allowed"
n=$(wc -l <<<"$list")
if [ $fails -gt 0 ]; then
    echo "FAIL complexity: $fails finding(s) over $n functions"
    exit 1
fi
echo "PASS complexity: $n functions of shell-ext/ at most complexity $MAX_CCN, $MAX_LINES lines and $MAX_PARAMS parameters ($over allowed for now)"
