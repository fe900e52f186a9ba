#!/usr/bin/env bash
# The rows of issue 39 (make bench, make bench-floor): each command against
# the floor, cat of its input archive plus sync of the copy (remodel fsyncs
# its output too), run in turn (command, floor, command, floor...) so that
# each pair sees the same load; the row is the median of the pairs' ratios
# (floor seconds over the command's: its share of the floor's throughput).
# A benchmark, never a test: it reports, it never fails the build.
# Usage: scripts/bench_floor.sh [BUILD_DIR]
#   FLOOR_SCALE=N  remodel-gen --scale of the crm dataset (default 1000:
#                  98,000 people, 1,000,000 tasks, 161 MB) and, divided by
#                  5, of the whole dump summarize and bucketize read
#   BENCH_CACHE=D  where generated inputs are cached (as scripts/bench.sh)
#   BENCH_OUT=F    the report whose "floor" markers' section is replaced
#                  (default BENCHMARKS.md; "-": only BUILD/bench/floor.md)
#   FLOOR_PAIRS=N  pairs per row (default 5)
#   FLOOR_BASE=B   a second remodel binary (say main's), run in each pair
#                  too (command, base, floor): its columns are "before"
#   FLOOR_ONLY=P   only the rows whose name holds P (with BENCH_OUT set
#                  elsewhere: the section keeps only those rows)
# Besides the issue's rows, convert of the same crm data as a directory,
# a gzip and a zstd archive (no target: what they cost against copying
# the same input).
# Each run's CPU seconds (user + system, all threads) are kept beside its
# wall seconds: on a loaded machine the wall follows the load, the CPU
# seconds the work.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${FLOOR_SCALE:-1000}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/floor-$SCALE
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
PAIRS=${FLOOR_PAIRS:-5}
BASE=${FLOOR_BASE:-}
ONLY=${FLOOR_ONLY:-}
PLANS=$ROOT/scripts/bench
log() { printf 'bench-floor: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] || { log "build $R and $GEN first (make all)"; exit 0; }
[ -x /usr/bin/time ] || { log "/usr/bin/time (GNU time) is needed"; exit 0; }
mkdir -p "$CACHE"
CRM=$CACHE/crm.archive ALL=$CACHE/all.archive
if [ ! -f "$CRM" ]; then
    log "generating scale $SCALE (crm only)"
    "$GEN" --out "$CACHE/gen" --scale "$SCALE" --seed 1 --force &&
        "$R" convert -q "$CACHE/gen" "$CRM" --nsInclude 'crm.*' || { log "generation failed"; exit 0; }
    rm -rf "$CACHE/gen"
fi
if [ ! -f "$ALL" ]; then
    log "generating scale $((SCALE / 5)) (whole dump)"
    "$GEN" --out "$CACHE/gen" --scale $((SCALE / 5)) --seed 1 --force &&
        "$R" convert -q "$CACHE/gen" "$ALL" || { log "generation failed"; exit 0; }
    rm -rf "$CACHE/gen"
fi
for v in dir archive.gz archive.zst; do
    [ -e "$CACHE/crm.$v" ] || "$R" convert -q "$CRM" "$CACHE/crm.$v" ||
        { log "making crm.$v failed"; exit 0; }
done
# Outputs go beside the inputs, on the disk, and are synced: the floor is
# the issue's, cat plus sync.
WORK=$CACHE/work.$$
mkdir -p "$WORK"
export TMPDIR=$WORK
trap 'rm -rf "$WORK"; exit 0' INT TERM

# The wall is taken by date's nanoseconds around the run: GNU time's %e
# has hundredths only, 4% of a 0.25 s command, as much as the differences
# measured (the spawn of time and bash -c is in the floor's runs too).
secs() { # CMD...: wall seconds, CPU seconds (user + system), peak RSS kB (bash -c)
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/.t" bash -c "$*" >/dev/null 2>&1 || { printf 'FAIL\t\t'; return; }
    t1=$(date +%s%N)
    tail -n1 "$WORK/.t" | awk -v ns=$((t1 - t0)) '{ printf "%.4f\t%.2f\t%s", ns / 1e9, $2 + $3, $4 }'
}

ROWS=$WORK/rows
: > "$ROWS"
row() { # NAME TARGET INPUT CMD (its remodel '$R'; BASE in its place for "before")
    local name=$1 target=$2 in=$3 cmd=$4 i a b c=$'FAIL\t\t'
    local floor="cat '$in' > '$WORK/floor.out' && sync '$WORK/floor.out'"
    case $name in *"$ONLY"*) ;; *) return ;; esac
    # A directory's floor: cp -r of it, then sync of the copy's files.
    [ -d "$in" ] && floor="cp -r '$in' '$WORK/floor.out' && sync '$WORK/floor.out'/*/*"
    cat "$in" > /dev/null 2>&1 || cat "$in"/*/* > /dev/null
    log "$name: $cmd"
    for ((i = 0; i < PAIRS; i++)); do
        # With a before binary, every other pair runs it first: the
        # first run after the floor's copy pays more system time (the
        # page cache's state), and each binary takes that place as often.
        if [ -n "$BASE" ] && ((i % 2)); then
            c=$(secs "${cmd/"'$R'"/"'$BASE'"}")
            rm -rf "$WORK/out".* "$WORK/an.json"
        fi
        a=$(secs "$cmd")
        rm -rf "$WORK/out".* "$WORK/an.json"
        if [ -n "$BASE" ] && ! ((i % 2)); then
            c=$(secs "${cmd/"'$R'"/"'$BASE'"}")
            rm -rf "$WORK/out".* "$WORK/an.json"
        fi
        b=$(secs "$floor")
        rm -rf "$WORK/floor.out"
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$target" "$a" "$b" "$c" >> "$ROWS"
    done
}

row "run embed tasks into people" 0.30 "$CRM" \
    "'$R' run -q '$PLANS/embed.json' --from '$CRM' --to '$WORK/out.archive'"
row "analyze --json" 0.35 "$CRM" "'$R' analyze --json '$CRM' > '$WORK/an.json'"
row "convert (identity)" 0.85 "$CRM" "'$R' convert -q '$CRM' '$WORK/out.archive'"
row "convert, directory to directory" 0 "$CACHE/crm.dir" \
    "'$R' convert -q '$CACHE/crm.dir' '$WORK/out.dir'"
row "convert, gzip archive to gzip archive" 0 "$CACHE/crm.archive.gz" \
    "'$R' convert -q '$CACHE/crm.archive.gz' '$WORK/out.archive.gz'"
row "convert, zstd archive to zstd archive" 0 "$CACHE/crm.archive.zst" \
    "'$R' convert -q '$CACHE/crm.archive.zst' '$WORK/out.archive.zst'"
row "run summarize logmsg into hosts" 0.35 "$ALL" \
    "'$R' run -q '$PLANS/summarize.json' --from '$ALL' --to '$WORK/out.archive'"
row "run bucketize iot.readings" 0.35 "$ALL" \
    "'$R' run -q '$PLANS/bucketize.json' --from '$ALL' --to '$WORK/out.archive'"

python3 - "$ROWS" - "$SCALE" "$PAIRS" "$(uptime | sed 's/.*load average: //')" "$BASE" >"$WORK/section" <<'EOF'
import statistics, sys, datetime
rows, out, scale, pairs, load, base = sys.argv[1:7]
by = {}
def run(f):
    # (wall s, CPU s, peak RSS kB), None for a failed run
    return None if f[0] == "FAIL" or float(f[0]) <= 0 else tuple(float(x) for x in f)
for line in open(rows):
    f = line.rstrip("\n").split("\t")
    name, target = f[0], float(f[1])
    a, b, c = run(f[2:5]), run(f[5:8]), run(f[8:11])
    by.setdefault(name, [target, [], []])
    if a and b:
        by[name][1].append((a, b))
    if c and b:
        by[name][2].append((c, b))
med = statistics.median
L = [f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, load average {load} at the "
     f"end; crm-only archive at scale {scale}, whole dump at scale {int(scale) // 5}; the median of "
     f"{pairs} pairs{', the before binary in each' if base else ''}; `make bench-floor`)",
     ""]
if base:
    L += ["| command | CPU s before | CPU s | wall s before | wall s | floor: CPU s, wall s | "
          "share before | share | peak RSS MB before, after | target |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
else:
    L += ["| command | CPU s | wall s | floor: CPU s, wall s | share of the floor | peak RSS MB | target |",
          "|---|---:|---:|---:|---:|---:|---|"]
for name, (target, p, q) in by.items():
    if not p:
        L.append(f"| {name} | FAIL | | | | | |"); continue
    share = med(b[0] / a[0] for a, b in p)
    verdict = "met" if share >= target else f"**missed by {100 * (target - share):.0f} points**"
    goal = f"≥ {100 * target:.0f}%: {verdict}" if target > 0 else "(none)"
    cpu, wall = med(a[1] for a, _ in p), med(a[0] for a, _ in p)
    fl = f"{med(b[1] for _, b in p):.2f}, {med(b[0] for _, b in p):.3f}"
    rss = max(a[2] for a, _ in p) / 1024
    if base:
        bshare = bcpu = bwall = brss = "FAIL"
        if q:
            bshare = f"{100 * med(b[0] / c[0] for c, b in q):.0f}%"
            bcpu, bwall = f"{med(c[1] for c, _ in q):.2f}", f"{med(c[0] for c, _ in q):.3f}"
            brss = f"{max(c[2] for c, _ in q) / 1024:.0f}"
        L.append(f"| {name} | {bcpu} | {cpu:.2f} | {bwall} | {wall:.3f} | {fl} | {bshare} | "
                 f"{100 * share:.0f}% | {brss}, {rss:.0f} | {goal} |")
    else:
        L.append(f"| {name} | {cpu:.2f} | {wall:.3f} | {fl} | {100 * share:.0f}% | {rss:.0f} | "
                 f"{goal} |")
print("\n".join(L))
EOF
cat "$WORK/section"
python3 "$ROOT/scripts/bench/section.py" floor "$WORK/section" "$OUT" "$BUILD"
rm -rf "$WORK"
exit 0
