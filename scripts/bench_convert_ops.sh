#!/usr/bin/env bash
# Issue 61's conversion rows: what one `set` of $toString, $toDecimal or
# $round of a double costs per million documents, against a `set` of a
# constant and identity `remodel convert`. On bench-floor's 1M tasks
# (remodel-gen --scale 1000 --seed 1, crm.tasks only) with a double x =
# due_date in milliseconds / 7 added beforehand, once (16 to 17
# significant digits, as computed doubles have). Medians of five of wall
# and CPU (user + system) seconds; "x const" is a row's CPU over the
# constant set's (issue 61's ratio; CPU, as the machine is shared), and
# "per million" its CPU beyond the constant set's per 10^6 documents. A
# benchmark, never a test: it reports, it never fails. Prints a Markdown
# table; BENCH_OUT=FILE also writes it into FILE between the
# "convert-ops" markers (scripts/bench/section.py; they are in
# docs/performance.md).
#   scripts/bench_convert_ops.sh [REMODEL]   (default build/remodel)
#   FLOOR_SCALE=N (default 1000), RUNS=N (default 5)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-$ROOT/build/remodel}
GEN=$(dirname "$R")/remodel-gen
[ -x "$GEN" ] || GEN=$ROOT/build/remodel-gen
SCALE=${FLOOR_SCALE:-1000} RUNS=${RUNS:-5}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/floor-$SCALE
TIME=/usr/bin/time
log() { printf 'bench-convert-ops: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] || { log "build $R and $GEN first (make all)"; exit 0; }
[ -x "$TIME" ] || { log "/usr/bin/time (GNU time) is needed: apt-get install time"; exit 0; }
mkdir -p "$CACHE"
CRM=$CACHE/crm.archive IN=$CACHE/tasks-x.archive
WORK=$(mktemp -d "${TMPDIR:-/tmp}/convert-ops.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
plan() { # plan NAME FIELDS-JSON
    printf '{"remodel": 1, "steps": [{"set": {"in": "crm.tasks", "fields": %s}}]}\n' "$2" >"$WORK/$1.json"
}
if [ ! -f "$IN" ]; then
    if [ ! -f "$CRM" ]; then # as scripts/bench_floor.sh makes it (the same cache)
        log "generating scale $SCALE (crm only)"
        "$GEN" --out "$CACHE/gen" --scale "$SCALE" --seed 1 --force &&
            "$R" convert -q "$CACHE/gen" "$CRM" --nsInclude 'crm.*' || { log "generation failed"; exit 0; }
        rm -rf "$CACHE/gen"
    fi
    plan prep '{"x": {"$divide": [{"$toLong": "$due_date"}, 7]}}'
    "$R" convert -q "$CRM" "$WORK/tasks.archive" --nsInclude 'crm.tasks' &&
        "$R" run -q "$WORK/prep.json" --from "$WORK/tasks.archive" --to "$IN" || { log "preparing $IN failed"; exit 0; }
fi
plan const '{"s": "constant"}'
plan tostring '{"s": {"$toString": "$x"}}'
plan todecimal '{"s": {"$toDecimal": "$x"}}'
plan round '{"s": {"$round": ["$x", 2]}}'
cat "$IN" >/dev/null # into the page cache

# median NAME COMMAND: "NAME|WALL|CPU", medians of RUNS runs
median() {
    local name=$1 cmd=$2 i t u s
    : >"$WORK/times"
    for ((i = 0; i < RUNS; i++)); do
        rm -f "$WORK/out.archive"
        "$TIME" -f '%e %U %S' -o "$WORK/time" bash -c "$cmd" >/dev/null 2>"$WORK/err" ||
            { log "$name failed: $(tail -n2 "$WORK/err" | tr '\n' ' ')"; echo "$name|FAIL|FAIL"; return; }
        read -r t u s <"$WORK/time"
        echo "$t $u $s" >>"$WORK/times"
    done
    python3 - "$name" "$WORK/times" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
print("%s|%.3f|%.3f" % (sys.argv[1], statistics.median(r[0] for r in rows),
                        statistics.median(r[1] + r[2] for r in rows)))
PY
}
{
    median convert "'$R' convert -q '$IN' '$WORK/out.archive'"
    for p in const tostring todecimal round; do
        median "$p" "'$R' run -q '$WORK/$p.json' --from '$IN' --to '$WORK/out.archive'"
    done
} >"$WORK/rows"
n=$("$R" inspect "$IN" 2>/dev/null | awk '$1 == "crm.tasks" {print $3}')
table=$(python3 - "$WORK/rows" "${n:-1000000}" "$SCALE" "$RUNS" <<'PY'
import sys
rows = [l.strip().split("|") for l in open(sys.argv[1])]
n, scale, runs = int(sys.argv[2]), sys.argv[3], sys.argv[4]
what = {"convert": "identity `remodel convert`", "const": "`set` of a constant",
        "tostring": "`set` of `$toString` of a double", "todecimal": "`set` of `$toDecimal` of a double",
        "round": "`set` of `$round` of a double to 2 places"}
base = dict((r[0], r) for r in rows)
print("(remodel-gen --scale %s --seed 1, crm.tasks only, %d documents, with x = due_date ms / 7 added; "
      "medians of %s, `scripts/bench_convert_ops.sh`)\n" % (scale, n, runs))
print("| row | seconds | CPU seconds | x const (CPU) | CPU s per million over const |\n|---|---:|---:|---:|---:|")
const = base.get("const")
cc = float(const[2]) if const and const[2] != "FAIL" else None
for name, wall, cpu in rows:
    if wall == "FAIL":
        print("| %s | failed | | | |" % what[name])
        continue
    ratio = "%.2f" % (float(cpu) / cc) if cc and name not in ("convert", "const") else ""
    per = "%.2f" % ((float(cpu) - cc) * 1e6 / n) if cc and name not in ("convert", "const") else ""
    print("| %s | %s | %s | %s | %s |" % (what[name], wall, cpu, ratio, per))
PY
)
echo "$table"
if [ -n "${BENCH_OUT:-}" ]; then
    printf '%s\n' "$table" >"$WORK/section"
    python3 "$ROOT/scripts/bench/section.py" convert-ops "$WORK/section" "$BENCH_OUT" "$(dirname "$R")"
fi
exit 0
