#!/usr/bin/env bash
# make bench-analyze: remodel analyze's throughput on a generated dump, next
# to remodel inspect (reading and validating every byte: the floor), best
# of three runs each; writes the table into BENCHMARKS.md between the
# "analyze" markers.   scripts/bench_analyze.sh [BUILD]   SCALE=N (default 100)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${SCALE:-100}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
d=$CACHE/analyze-scale-$SCALE
if [ ! -f "$d/prelude.json" ]; then
    mkdir -p "$CACHE"
    "$GEN" --out "$d" --scale "$SCALE" --seed 1 --force >/dev/null || exit 1
fi
bytes=$("$R" inspect --json "$d" -q | python3 -c 'import json,sys; print(sum(n["bytes"] for n in json.load(sys.stdin)["namespaces"]))')
best() { # COMMAND...: the best wall time of three, in seconds
    local b= t0 t1 t i
    for i in 1 2 3; do
        t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || return 1; t1=$EPOCHREALTIME
        t=$(python3 -c "print($t1 - $t0)")
        b=$(python3 -c "print(min(x for x in ($t, ${b:-$t})))")
    done
    echo "$b"
}
ti=$(best "$R" inspect "$d" -q) && ta=$(best "$R" analyze "$d" -q) || { echo "bench-analyze: a run failed" >&2; exit 1; }
table=$(python3 - "$bytes" "$ti" "$ta" "$SCALE" <<'PY'
import sys
b, ti, ta, sc = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print("(scale %s dump: %.0f MB of BSON, best of three, `make bench-analyze`)\n" % (sc, b / 1e6))
print("| command | seconds | MB/s |\n|---|---:|---:|")
print("| `remodel inspect` (read and validate: the floor) | %.2f | %.0f |" % (ti, b / 1e6 / ti))
print("| `remodel analyze` (two passes: the relationships held in arrays) | %.2f | %.0f |" % (ta, b / 1e6 / ta))
PY
)
echo "$table"
python3 - "$OUT" "$table" <<'PY'
import re, sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
start, end = "<!-- analyze: begin -->", "<!-- analyze: end -->"
body = start + "\n" + table + "\n" + end
if start in text:
    text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m: body, text, flags=re.S)
else:
    text = text.rstrip() + "\n\n## remodel analyze\n\n" + body + "\n"
open(path, "w").write(text)
PY
