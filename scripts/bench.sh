#!/usr/bin/env bash
# Benchmark suite (make bench). A benchmark, never a test: it reports, it
# never fails the build. Usage: scripts/bench.sh [BUILD_DIR]
#   SCALE=N        remodel-gen --scale (default 1200, about 0.98 GB of BSON)
#   BENCH_CACHE=D  where generated inputs are cached
#                  (default ${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench)
#   BENCH_OUT=F    the report whose "remodel" and "references" markers'
#                  sections are replaced (default BENCHMARKS.md; "-": only
#                  BUILD/bench/{remodel,references,profile}.md)
#   BENCH_PYTHON=0 skip the by-hand Python scripts; BENCH_PROFILE=0 skip perf
#   BENCH_REPEAT=N runs of each short measurement, the fastest counts (default 3)
#   BENCH_OUTDIR=D where outputs are written (default a tmpfs, /dev/shm, when it
#                  has room: see "method" in the report)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel; GEN=$BUILD/remodel-gen
SCALE=${SCALE:-1200}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/scale-$SCALE
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
PLANS=$ROOT/scripts/bench
TIME=/usr/bin/time
log() { printf 'bench: %s\n' "$*" >&2; }
trap 'log "interrupted"; rm -rf "$WORK" "$SPILL"; exit 0' INT TERM

[ -x "$R" ] && [ -x "$GEN" ] || { log "build $R and $GEN first (make all)"; exit 0; }
[ -x "$TIME" ] || { log "/usr/bin/time (GNU time) is needed: apt-get install time"; exit 0; }
if [ -f "$ROOT/tests/peers/env.sh" ]; then . "$ROOT/tests/peers/env.sh"; fi

# ---- cached inputs: generated dump, plain/zstd/gzip archives, bucketized archive
mkdir -p "$CACHE"
D=$CACHE/dump A=$CACHE/dump.archive Z=$CACHE/dump.archive.zst G=$CACHE/dump.archive.gz BK=$CACHE/bucketized.archive
if [ ! -f "$D/prelude.json" ]; then
    log "generating scale $SCALE into $D"
    "$GEN" --out "$D" --scale "$SCALE" --seed 1 --force || { log "generation failed"; exit 0; }
    rm -f "$A" "$Z" "$G" "$BK"
fi
[ -f "$A" ] || "$R" convert -q "$D" "$A"
[ -f "$Z" ] || "$R" convert -q "$A" "$Z" --compress zstd:3
[ -f "$G" ] || "$R" convert -q "$A" "$G" --compress gzip:6
[ -f "$BK" ] || "$R" run -q "$PLANS/bucketize.json" --from "$A" --to "$BK"
[ -f "$CACHE/docs" ] || "$R" inspect --json "$A" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(n["documents"] for n in d["namespaces"]))' > "$CACHE/docs"
[ -f "$CACHE/bkdocs" ] || "$R" inspect --json "$BK" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(n["documents"] for n in d["namespaces"]))' > "$CACHE/bkdocs"

# Outputs go to a tmpfs when there is one with room for two copies of the
# dump: disk writeback (and remodel's fsync before its rename, which cat does
# not do) then stays out of every figure, which measure work, not the disk.
# Temporary stores and sort runs stay on the disk beside the inputs.
OUTBASE=${BENCH_OUTDIR:-}
if [ -z "$OUTBASE" ]; then
    OUTBASE=$CACHE
    shm_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 { print $4 }')
    [ -n "$shm_kb" ] && [ "$shm_kb" -gt $(( $(stat -c %s "$A") * 3 / 1024 )) ] && OUTBASE=/dev/shm
fi
WORK=$OUTBASE/remodel-bench-work.$$
SPILL=$CACHE/tmp.$$
mkdir -p "$WORK" "$SPILL"
export TMPDIR=$SPILL
REPEAT=${BENCH_REPEAT:-3}
RES=$CACHE/results.tsv.$$
: > "$RES"
size() { stat -c %s "$1"; }

# best KIND NAME ...: measure, REPEAT times (the report keeps the fastest run
# and the largest peak RSS)
best() {
    local i
    for ((i = 0; i < REPEAT; i++)); do measure "$@"; done
}

# measure KIND NAME INPUT_BYTES INPUT_DOCS MEMORY CMD...   (CMD run through bash -c)
measure() {
    local kind=$1 name=$2 bytes=$3 docs=$4 mem=$5; shift 5
    local cmd=$*
    rm -rf "$WORK"; mkdir -p "$WORK"
    sync
    log "$name${mem:+ (memory $mem)}: $cmd"
    if $TIME -f '%e %M' -o "$WORK/.time" bash -c "$cmd" > "$WORK/.stdout" 2> "$WORK/.stderr"; then
        read -r secs rss < <(tail -n1 "$WORK/.time")
        local spilled=-
        [ -f "$WORK/stats.json" ] && spilled=$(python3 -c 'import json,sys; print(str(json.load(open(sys.argv[1])).get("spilled")).lower())' "$WORK/stats.json" 2>/dev/null || echo -)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$bytes" "$docs" "${mem:--}" "$secs" "$rss" "$spilled" "$cmd" >> "$RES"
    else
        log "  failed: $(tail -n2 "$WORK/.stderr" | tr '\n' ' ')"
        printf '%s\t%s\t%s\t%s\t%s\tFAIL\t-\t-\t%s\n' "$kind" "$name" "$bytes" "$docs" "${mem:--}" "$cmd" >> "$RES"
    fi
    rm -rf "$WORK"; mkdir -p "$WORK"
}

AB=$(size "$A") ZB=$(size "$Z") GB=$(size "$G") BKB=$(size "$BK")
DOCS=$(cat "$CACHE/docs") BKDOCS=$(cat "$CACHE/bkdocs")
if command -v pigz >/dev/null; then GZ=pigz; else GZ=gzip; fi

# ---- floors (I/O and compression), read once first so every run sees a warm cache
cat "$A" "$Z" "$G" "$BK" > /dev/null
best floor cat "$AB" "$DOCS" "" "cat '$A' > '$WORK/out.archive'"
best floor cat-bucketized "$BKB" "$BKDOCS" "" "cat '$BK' > '$WORK/out.archive'"
best floor zstd "$ZB" "$DOCS" "" "zstd -q -dc '$Z' | zstd -q -3 -T0 > '$WORK/out.archive.zst'"
measure floor gzip "$GB" "$DOCS" "" "$GZ -dc '$G' | $GZ -6 > '$WORK/out.archive.gz'"

# ---- convert
best remodel convert-plain "$AB" "$DOCS" "" "'$R' convert -q '$A' '$WORK/out.archive'"
best remodel convert-zstd "$ZB" "$DOCS" "" "'$R' convert -q '$Z' '$WORK/out.archive.zst'"
measure remodel convert-gzip "$AB" "$DOCS" "" "'$R' convert -q '$A' '$WORK/out.archive.gz'"

# ---- plan steps, plain archive in and out, default --memory (512M) and 64M
for step in extract field denormalize unbucketize embed summarize bucketize; do
    in=$A b=$AB n=$DOCS
    [ $step = unbucketize ] && in=$BK b=$BKB n=$BKDOCS
    for mem in 512M 64M; do
        best remodel "$step" "$b" "$n" "$mem" \
            "'$R' run -q '$PLANS/$step.json' --from '$in' --to '$WORK/out.archive' --memory $mem --stats-json '$WORK/stats.json'"
    done
done

# ---- by hand (pymongo's bson, C extension) over the same dump, as a directory
if [ "${BENCH_PYTHON:-1}" != 0 ]; then
    if ! python3 -c 'import bson, sys; sys.exit(0 if bson.has_c() else 1)' 2>/dev/null; then
        python3 -m pip install -q pymongo==4.10.1 >&2 || log "pymongo unavailable: skipping the by-hand scripts"
    fi
    if python3 -c 'import bson' 2>/dev/null; then
        measure floor cat-dir "$AB" "$DOCS" "" "cp -r '$D' '$WORK/out'"
        for step in extract field denormalize embed; do
            measure python "$step" "$AB" "$DOCS" "" "python3 '$PLANS/${step}_by_hand.py' '$D' '$WORK/out'"
        done
        # The same transforms on a dump of only the namespaces they touch:
        # both sides then decode and write the same documents, directory to
        # directory (the scripts copy untouched files whole, remodel checks
        # every document, so on the whole dump they do different work).
        for step in extract field denormalize embed; do
            case $step in
                extract) nss="crm.people" ;; field) nss="logging.logmsg" ;;
                denormalize) nss="logging.logmsg logging.hosts" ;; embed) nss="crm.people crm.tasks" ;;
            esac
            sub=$CACHE/only-$step
            if [ ! -f "$sub/prelude.json" ]; then
                rm -rf "$sub"; mkdir -p "$sub"
                for ns in $nss; do
                    mkdir -p "$sub/${ns%%.*}"
                    cp "$D/${ns%%.*}/${ns#*.}.bson" "$D/${ns%%.*}/${ns#*.}.metadata.json" "$sub/${ns%%.*}/"
                done
                cp "$D/prelude.json" "$sub/"
            fi
            sb=$(du -cb "$sub"/*/*.bson | tail -n1 | cut -f1)
            sd=$("$R" inspect --json "$sub" | python3 -c 'import json,sys; print(sum(n["documents"] for n in json.load(sys.stdin)["namespaces"]))')
            measure python "$step-only" "$sb" "$sd" "" "python3 '$PLANS/${step}_by_hand.py' '$sub' '$WORK/out'"
            best remodel "$step-only" "$sb" "$sd" "512M" \
                "'$R' run -q '$PLANS/$step.json' --from '$sub' --to '$WORK/out' --stats-json '$WORK/stats.json'"
        done
    fi
fi

# ---- bsondump over the largest .bson of the dataset
if [ -x "${BSONDUMP:-}" ]; then
    big=$(ls -S "$D"/*/*.bson | head -n1)
    measure floor cat-bson "$(size "$big")" 0 "" "cat '$big' > '$WORK/out.bson'"
    measure bsondump "bsondump $(basename "$(dirname "$big")")/$(basename "$big")" "$(size "$big")" 0 "" "'$BSONDUMP' --quiet '$big' > /dev/null"
else
    log "bsondump not installed (tests/peers/install.sh): skipped"
fi

# ---- profile of the main miss (perf if it samples here, else callgrind on a small input)
PROF=$CACHE/profile.txt.$$
: > "$PROF"
if [ "${BENCH_PROFILE:-1}" != 0 ]; then
    worst=$(python3 "$PLANS/report.py" --worst "$RES")
    if [ -n "$worst" ]; then
        IFS=$'\t' read -r wname wcmd <<< "$worst"
        rm -rf "$WORK"; mkdir -p "$WORK"
        if perf record -q -e cpu-clock -o "$WORK/perf.data" -- true 2>/dev/null; then
            log "profiling $wname with perf record -e cpu-clock -g"
            { echo "profiler: perf record -e cpu-clock -g (hardware counters are not available here: perf stat -e instructions says <not supported>)"
              echo "command: $wcmd"
              perf record -q -e cpu-clock -g -o "$WORK/perf.data" -- bash -c "$wcmd" >/dev/null 2>&1
              perf report -i "$WORK/perf.data" --stdio --no-children --sort dso,symbol --percent-limit 1.5 -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 25
            } >> "$PROF"
        elif command -v valgrind >/dev/null; then
            log "perf unusable: profiling $wname with callgrind at scale 10"
            "$GEN" --out "$WORK/small" --scale 10 --force >/dev/null 2>&1
            "$R" convert -q "$WORK/small" "$WORK/small.archive"
            scmd=${wcmd//$A/$WORK/small.archive}
            { echo "profiler: valgrind --tool=callgrind (scale 10)"; echo "command: $scmd"
              valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" bash -c "$scmd" >/dev/null 2>&1
              callgrind_annotate "$WORK/cg.out" 2>/dev/null | sed -n '1,40p'; } >> "$PROF"
        fi
        rm -rf "$WORK"
    fi
fi

# ---- report
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/^Mem:/{print $2}') GiB RAM, inputs and temporary files on $(df -h "$CACHE" | awk 'NR==2{print $1}') ($(stat -f -c %T "$CACHE")), outputs on $(df -h "$OUTBASE" | awk 'NR==2{print $1}') ($(stat -f -c %T "$OUTBASE"))"
SEC=$CACHE/sections.$$
python3 "$PLANS/report.py" "$RES" --outdir "$SEC" --scale "$SCALE" --machine "$MACHINE" --repeat "$REPEAT" \
    --command "make bench SCALE=$SCALE" --cache "$CACHE" --profile "$PROF" --notes "$PLANS/notes.md" \
    || log "report failed; raw results in $RES"
for s in remodel references; do
    [ -f "$SEC/$s.md" ] && python3 "$PLANS/section.py" "$s" "$SEC/$s.md" "$OUT" "$BUILD"
done
[ -f "$SEC/profile.md" ] && python3 "$PLANS/section.py" profile "$SEC/profile.md" - "$BUILD"
rm -rf "$SEC"
python3 "$PLANS/report.py" "$RES" --scale "$SCALE" --table-only >&2 || true
rm -rf "$WORK" "$SPILL" "$PROF"
mv "$RES" "$CACHE/last-results.tsv" 2>/dev/null
log "raw results: $CACHE/last-results.tsv"
exit 0
