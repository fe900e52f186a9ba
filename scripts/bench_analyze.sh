#!/usr/bin/env bash
# make bench-analyze: remodel analyze's throughput and peak memory on the
# benchmark dump (make bench's, remodel-gen --scale 1200 --seed 1, shared
# cache), next to remodel inspect (reading and validating every byte: the
# floor); analyze with its default --memory and with budgets small enough
# to spill its join keys. Best of three runs each (peak RSS: the largest);
# writes the table into BENCHMARKS.md between the "analyze" markers.
# Then analyze at scale (issue 50): dumps of many small collections
# (tests/transforms/analyze_scale.py), seconds, peak RSS and the --json
# report's size, between the "analyze-scale" markers.
#   scripts/bench_analyze.sh [BUILD]   SCALE=N (default 1200)
#   ANALYZE_SCALE_ONLY=1: the scale table only (no benchmark dump)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${SCALE:-1200}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/scale-$SCALE
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench-analyze: /usr/bin/time (GNU time) is needed: apt-get install time" >&2; exit 1; }
# scale_rows: "NAME|SECONDS|PEAK_KB|REPORT_BYTES|RELATIONSHIPS" for each
# dump of many collections (one run each: seconds, not a best of three;
# the largest take minutes before issue 50's change).
scale_rows() {
    local w=$1 spec name t k
    for spec in "unrelated 100" "unrelated 400" "unrelated 800" "unrelated 3000" "refs 800" \
                "refs 2000 --wide 10000"; do
        name=${spec// /-}
        [ -d "$w/$name" ] || python3 "$ROOT/tests/transforms/analyze_scale.py" "$w/$name" $spec || return 1
        "$TIME" -f '%e %M' -o "$w/time" "$R" analyze "$w/$name" --json -q >"$w/out" 2>"$w/err" ||
            { echo "bench-analyze: analyze $spec failed: $(head -c 300 "$w/err")" >&2; return 1; }
        read -r t k <"$w/time"
        echo "$spec|$t|$k|$(stat -c %s "$w/out")|$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["relationships"]))' "$w/out")"
    done
}
scale_table() {
    python3 - "$1" <<'PY'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
print("(dumps of many collections of five documents, tests/transforms/analyze_scale.py: "
      "`unrelated N` whose fields say nothing of each other, `refs N` whose fields look like "
      "references to every other collection, `--wide F` one more of F fields; one run each, "
      "`remodel analyze --json -q`, `make bench-analyze`)\n")
print("| dump | seconds | peak RSS MB | --json report MB | relationships |\n|---|---:|---:|---:|---:|")
for spec, t, kb, size, rels in rows:
    print("| `%s` | %.2f | %.0f | %.1f | %s |" % (spec, float(t), int(kb) / 1024, int(size) / 1e6, rels))
PY
}
# put_table MARKER TABLE: the table in BUILD/bench/MARKER.md and between
# MARKER's begin and end in $OUT (scripts/bench/section.py).
put_table() {
    printf '%s\n' "$2" >"$WORK/section"
    python3 "$ROOT/scripts/bench/section.py" "$1" "$WORK/section" "$OUT" "$BUILD"
}
if [ -n "${ANALYZE_SCALE_ONLY:-}" ]; then
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
    scale_rows "$WORK" >"$WORK/rows" || exit 1
    table=$(scale_table "$WORK/rows")
    echo "$table"
    put_table analyze-scale "$table"
    exit 0
fi
d=$CACHE/dump
if [ ! -f "$d/prelude.json" ]; then
    mkdir -p "$CACHE"
    "$GEN" --out "$d" --scale "$SCALE" --seed 1 --force >/dev/null || exit 1
fi
cat "$d"/*/* >/dev/null   # into the page cache, as for make bench
bytes=$("$R" inspect --json "$d" -q | python3 -c 'import json,sys; print(sum(n["bytes"] for n in json.load(sys.stdin)["namespaces"]))')
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# run NAME COMMAND...: "NAME SECONDS PEAK_KB SPILLED" (best wall time of
# three, largest peak RSS; SPILLED from analyze's note on stderr).
run() {
    local name=$1 b= m=0 t k i spilled=-
    shift
    for i in 1 2 3; do
        "$TIME" -f '%e %M' -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
        read -r t k <"$WORK/time"
        b=$(python3 -c "print(min($t, ${b:-$t}))")
        [ "$k" -gt "$m" ] && m=$k
    done
    if grep -q "spilled under" "$WORK/err"; then
        spilled=$(sed -n 's/.*: \([0-9]*\) sorted run(s), \([0-9.]*\) MB, spilled.*/\1 runs, \2 MB/p' "$WORK/err")
    fi
    echo "$name|$b|$m|$spilled"
}
{
    run inspect "$R" inspect "$d" -q &&
    run "analyze" "$R" analyze "$d" &&
    run "analyze --memory 64M" "$R" analyze "$d" --memory 64M --tmp "$WORK" &&
    run "analyze --memory 16M" "$R" analyze "$d" --memory 16M --tmp "$WORK"
} >"$WORK/rows" || { echo "bench-analyze: a run failed" >&2; exit 1; }
# The report is the same whatever the budget: the benchmark checks it too.
"$R" analyze "$d" --json -q >"$WORK/a.json" && "$R" analyze "$d" --json -q --memory 16M --tmp "$WORK" >"$WORK/b.json" &&
    cmp -s "$WORK/a.json" "$WORK/b.json" || { echo "bench-analyze: the report under --memory 16M differs" >&2; exit 1; }
table=$(python3 - "$bytes" "$SCALE" "$WORK/rows" <<'PY'
import sys
b, sc = int(sys.argv[1]), sys.argv[2]
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[3])]
print("(the benchmark dump: remodel-gen --scale %s --seed 1, %.0f MB of BSON; best of three, "
      "`make bench-analyze`; the report under every budget is the same, byte for byte)\n" % (sc, b / 1e6))
print("| command | seconds | MB/s | peak RSS MB | join keys spilled |\n|---|---:|---:|---:|---|")
what = {"inspect": "`remodel inspect` (read and validate: the floor)"}
for name, t, kb, sp in rows:
    label = what.get(name, "`remodel %s` (two passes: relationships held in arrays)" % name)
    print("| %s | %.2f | %.0f | %.0f | %s |" % (label, float(t), b / 1e6 / float(t), int(kb) / 1024,
                                             sp if name != "inspect" else "—"))
PY
)
echo "$table"
put_table analyze "$table"
scale_rows "$WORK" >"$WORK/scale" || exit 1
table=$(scale_table "$WORK/scale")
echo "$table"
put_table analyze-scale "$table"
