#!/usr/bin/env bash
# make bench's expressions row (issue 48, item 8): on bench-floor's 1M-task
# archive (remodel-gen --scale 1000 --seed 1, crm.* only: 98,000 people,
# 1,000,000 tasks), a plan of one set step of ten expressions and a filter
# (scripts/bench/expr.json), against identity `remodel convert` of the same
# archive and against the same change by a Python script (pymongo's bson,
# archive to archive: scripts/bench/expr_by_hand.py). The $toDate reads a
# string made beforehand, once, by a set of $dateToString
# (scripts/bench/expr_prep.json): every row reads that archive; the set
# runs again on one thread (--threads 1, no batches computed ahead). Best wall
# time of three (CPU seconds, user + system, of that run; peak RSS the
# largest); the by-hand output is checked equal to remodel's (remodel
# diff). Writes the table into BENCHMARKS.md between the "expressions"
# markers. Two rows of large plans (issue 62, item 6) on 1,000 small
# documents made here: one set of 40,000 fields, 3,000 sets of
# expressions. A benchmark, never a test: it reports, it never fails the build.
#   scripts/bench_expr.sh [BUILD]   FLOOR_SCALE=N (default 1000)
#   BENCH_PROFILE=0: no perf record of the remodel run
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${FLOOR_SCALE:-1000}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/floor-$SCALE
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
PLANS=$ROOT/scripts/bench
TIME=/usr/bin/time
log() { printf 'bench-expr: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] || { log "build $R and $GEN first (make all)"; exit 0; }
[ -x "$TIME" ] || { log "/usr/bin/time (GNU time) is needed: apt-get install time"; exit 0; }
mkdir -p "$CACHE"
CRM=$CACHE/crm.archive IN=$CACHE/crm-due-s.archive
if [ ! -f "$CRM" ]; then # as scripts/bench_floor.sh makes it (the same cache)
    log "generating scale $SCALE (crm only)"
    "$GEN" --out "$CACHE/gen" --scale "$SCALE" --seed 1 --force &&
        "$R" convert -q "$CACHE/gen" "$CRM" --nsInclude 'crm.*' || { log "generation failed"; exit 0; }
    rm -rf "$CACHE/gen"
fi
[ -f "$IN" ] || "$R" run -q "$PLANS/expr_prep.json" --from "$CRM" --to "$IN" || { log "preparing $IN failed"; exit 0; }
python3 -c 'import bson, fastcrc, sys; sys.exit(0 if bson.has_c() else 1)' 2>/dev/null ||
    python3 -m pip install -q pymongo==4.10.1 fastcrc==0.5.0 >&2 || log "pymongo or fastcrc unavailable: no by-hand row"

WORK=$(mktemp -d "$CACHE/expr.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cat "$IN" >/dev/null # into the page cache
bytes=$(stat -c %s "$IN")
# run NAME COMMAND: "NAME|SECONDS|CPU|PEAK_KB|COMMAND", best wall time of three
run() {
    local name=$1 cmd=$2 best= cpu= m=0 t u s k i
    for i in 1 2 3; do
        rm -f "$WORK/out.archive"
        "$TIME" -f '%e %U %S %M' -o "$WORK/time" bash -c "$cmd" >/dev/null 2>"$WORK/err" ||
            { log "$name failed: $(tail -n2 "$WORK/err" | tr '\n' ' ')"; echo "$name|FAIL|-|-|$cmd"; return; }
        read -r t u s k <"$WORK/time"
        if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then
            best=$t cpu=$(python3 -c "print(round($u + $s, 2))")
        fi
        [ "$k" -gt "$m" ] && m=$k
    done
    echo "$name|$best|$cpu|$m|$cmd"
}
show() { sed "s|$WORK|OUT|g; s|$CACHE|CACHE|g; s|$ROOT/||g; /^- /s|'||g" <<<"$1"; }
{
    run convert "'$R' convert -q '$IN' '$WORK/out.archive'"
    run expr "'$R' run -q '$PLANS/expr.json' --from '$IN' --to '$WORK/out.archive'"
    run expr1 "'$R' run -q '$PLANS/expr.json' --from '$IN' --to '$WORK/out.archive' --threads 1"
    python3 -c 'import bson, fastcrc' 2>/dev/null &&
        run by-hand "python3 '$PLANS/expr_by_hand.py' '$IN' '$WORK/out.archive'"
    # Large plans (issue 62, item 6), on 1,000 small documents of their own:
    # one set of 40,000 fields, and 3,000 sets of expressions in a row.
    python3 - "$WORK" <<'PY' &&
import json, sys
w = sys.argv[1]
json.dump({"t.c": [{"_id": i, "a": i, "s": "v%d" % i} for i in range(1000)]}, open(w + "/small.json", "w"))
json.dump({"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {
    "f%d" % i: {"$add": ["$a", i]} for i in range(40000)}}}]}, open(w + "/wide.json", "w"))
json.dump({"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {
    "g%d" % i: {"$concat": ["$s", "-%d" % i]}}}} for i in range(3000)]}, open(w + "/sets.json", "w"))
PY
        python3 "$ROOT/tests/transforms/mkdump.py" "$WORK/small" "@$WORK/small.json" >/dev/null &&
        "$R" convert -q "$WORK/small" "$WORK/small.archive" && {
        run wide "'$R' run -q '$WORK/wide.json' --from '$WORK/small.archive' --to '$WORK/out.archive'"
        run sets "'$R' run -q '$WORK/sets.json' --from '$WORK/small.archive' --to '$WORK/out.archive'"
    }
} >"$WORK/rows"
# The by-hand output must be remodel's, document for document.
same="not compared"
if grep -q '^by-hand|[0-9]' "$WORK/rows"; then
    "$R" run -q "$PLANS/expr.json" --from "$IN" --to "$WORK/remodel.archive" &&
        python3 "$PLANS/expr_by_hand.py" "$IN" "$WORK/python.archive" &&
        if "$R" diff "$WORK/remodel.archive" "$WORK/python.archive" >"$WORK/diff" 2>&1; then
            same="the same documents as remodel's (remodel diff)"
        else
            same="DIFFERENT documents from remodel's: $(head -n3 "$WORK/diff" | tr '\n' ' ')"
        fi
    rm -f "$WORK/remodel.archive" "$WORK/python.archive"
fi
table=$(python3 - "$bytes" "$SCALE" "$WORK/rows" "$same" <<'PY'
import sys
b, sc, same = int(sys.argv[1]), sys.argv[2], sys.argv[4]
rows = [l.rstrip("\n").split("|", 4) for l in open(sys.argv[3])]
what = {"convert": "identity `remodel convert`",
        "expr": "`remodel run` of one `set` of ten expressions and a filter",
        "expr1": "the same, `--threads 1` (the expressions on the reading thread)",
        "by-hand": "by hand: Python, pymongo's `bson`, archive to archive",
        "wide": "`remodel run` of one `set` of 40,000 fields over 1,000 small documents",
        "sets": "`remodel run` of 3,000 `set`s of expressions over 1,000 small documents"}
small = ("wide", "sets")  # their own input: no MB/s, no command line
print("(bench-floor's archive with a string due date added: remodel-gen --scale %s --seed 1, crm.* only, "
      "1,000,000 tasks, about 60%% not done (the filter's), %.0f MB; best of three, `make bench-expr`; "
      "the by-hand output has %s)\n" % (sc, b / 1e6, same))
print("| row | seconds | CPU seconds | MB/s | peak RSS MB |\n|---|---:|---:|---:|---:|")
for name, t, cpu, kb, cmd in rows:
    if t == "FAIL":
        print("| %s | failed | | | |" % what[name])
        continue
    mbs = "-" if name in small else "%.0f" % (b / 1e6 / float(t))
    print("| %s | %.2f | %s | %s | %.0f |" % (what[name], float(t), cpu, mbs, int(kb) / 1024))
print()
for name, t, cpu, kb, cmd in rows:
    if name not in small:
        print("- %s: `%s`" % (name, cmd))
PY
)
table=$(show "$table")
echo "$table"
printf '%s\n' "$table" >"$WORK/section"
python3 "$ROOT/scripts/bench/section.py" expressions "$WORK/section" "$OUT" "$BUILD"
# Where the time goes: perf's top functions of the remodel run (stderr).
if [ "${BENCH_PROFILE:-1}" != 0 ] && perf record -q -e cpu-clock -o "$WORK/perf.data" -- true 2>/dev/null; then
    rm -f "$WORK/out.archive"
    perf record -q -e cpu-clock -g -o "$WORK/perf.data" -- \
        "$R" run -q "$PLANS/expr.json" --from "$IN" --to "$WORK/out.archive" >/dev/null 2>&1
    perf report -i "$WORK/perf.data" --stdio --no-children --sort symbol --percent-limit 1 -g none 2>/dev/null |
        grep -v '^#' | grep -v '^$' | head -n 25 >&2
fi
exit 0
