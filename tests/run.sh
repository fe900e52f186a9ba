#!/usr/bin/env bash
# Runs every suite and ends with the failures, if any, and
# "N passed, N failed".
#   tests/run.sh BUILD [SANITIZE_BUILD]
# Unit suites are programs in BUILD/tests; command-line suites are
# tests/cli/*.sh, run with REMODEL=BUILD/remodel. Each prints PASS/FAIL lines.
# RUN_PARTS (default all): unit, cli (every command-line suite) or online
# (those that start a server: test_online*, test_compile*, test_servers).
# RUN_ONLY: only the suites whose name holds it (make check T=NAME).
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
sanbuild=${2:-}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# python3 by its own path, not a version manager's shim (tests/python.sh).
. tests/python.sh

parts=${RUN_PARTS:-all}
only=${RUN_ONLY:-}
suites=0
# wanted PART NAME: whether the suite NAME of PART is to run.
wanted() {
    case $parts in
        all) ;;
        unit) [ "$1" == unit ] || return 1 ;;
        cli) [ "$1" == cli ] || return 1 ;;
        online) [ "$1" == cli ] || return 1
                case $2 in test_online* | test_compile* | test_servers) ;; *) return 1 ;; esac ;;
        *) echo "tests/run.sh: RUN_PARTS is unit, cli or online, not $parts" >&2; exit 2 ;;
    esac
    [ -z "$only" ] || [[ $2 == *"$only"* ]]
}
# exec_suite DIR COMMAND...: runs a suite, its output, status and seconds
# in DIR (out, err, rc, secs; secs last, whole, once the rest is written).
exec_suite() {
    local dir=$1 t0=$SECONDS; shift
    mkdir -p "$dir"
    "$@" >"$dir/out" 2>"$dir/err"
    echo $? >"$dir/rc"
    echo $((SECONDS - t0)) >"$dir/secs.new" && mv "$dir/secs.new" "$dir/secs"
}
# report_suite NAME DIR: prints what exec_suite kept and counts it.
report_suite() {
    local name=$1 dir=$2 rc
    rc=$(cat "$dir/rc")
    suites=$((suites + 1))
    echo "== $name"
    cat "$dir/out"
    # How long: make check is kept near 30 minutes (docs/tests.md).
    echo "-- $name: $(cat "$dir/secs") s"
    if grep -q '^FAIL ' "$dir/out" || [ "$rc" -ne 0 ]; then
        sed 's/^/    /' "$dir/err" | tail -40
    fi
    grep -c '^PASS ' "$dir/out" >>"$log/passes" || true
    grep -c '^FAIL ' "$dir/out" >>"$log/fails" || true
    grep '^FAIL ' "$dir/out" | sed "s/^/$name: /" >>"$log/faillines" || true
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$dir/out"; then
        echo "FAIL $name (exit $rc, no result lines)"
        echo 1 >>"$log/fails"
        echo "$name: FAIL exit $rc, no result lines" >>"$log/faillines"
    fi
    rm -rf "$dir"
}
run_suite() { # NAME COMMAND...
    local name=$1; shift
    exec_suite "$log/suite" "$@"
    report_suite "$name" "$log/suite"
}

# The suites that start a server spend much of their time waiting on it
# (and on sleeps and polls of their own): they run after the others,
# RUN_JOBS of them (default 2) at once, each in its own directory with its
# own servers on ports the kernel picks, reported in order as each
# finishes (its "-- NAME: N s" is then the time it took beside another).
# RUN_JOBS=1: one after another, in their place.
jobs_max=${RUN_JOBS:-2}
case $jobs_max in [1-9]) ;; *) echo "tests/run.sh: RUN_JOBS is 1 to 9, not $jobs_max" >&2; exit 2 ;; esac
pool_names=() pool_next=0
# pool_flush: reports the started suites that have finished, in order,
# up to the first still running.
pool_flush() {
    while [ $pool_next -lt ${#pool_names[@]} ] && [ -f "$log/pool$pool_next/secs" ]; do
        report_suite "${pool_names[$pool_next]}" "$log/pool$pool_next"
        pool_next=$((pool_next + 1))
    done
}
# pool_suite NAME COMMAND...: runs it in the pool, once fewer than
# RUN_JOBS are running.
pool_suite() {
    local name=$1; shift
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
        wait -n 2>/dev/null
        pool_flush
    done
    exec_suite "$log/pool${#pool_names[@]}" "$@" &
    pool_names+=("$name")
}
# pool_wait: every suite of the pool finished and reported.
pool_wait() {
    while [ -n "$(jobs -rp)" ]; do
        wait -n 2>/dev/null
        pool_flush
    done
    wait
    pool_flush
}

# Peer tools (bsondump, mongorestore, a server) are installed once and cached.
if [ "$parts" != unit ] && [ -x tests/peers/install.sh ]; then
    tests/peers/install.sh >"$log/peers" 2>&1 || { echo "peer install failed:"; tail -30 "$log/peers"; }
    [ -f tests/peers/env.sh ] && . tests/peers/env.sh
fi

for t in "$build"/tests/test_*; do
    [ -x "$t" ] && wanted unit "$(basename "$t")" && run_suite "unit $(basename "$t")" "$t"
done
# The layers by calls, on the objects just built (scripts/check_layers.sh).
wanted unit check_layers && run_suite "layers check_layers" scripts/check_layers.sh "$build"
# The suites that start a server after the others, RUN_JOBS at a time.
pooled=()
for t in tests/cli/test_*.sh; do
    name=$(basename "$t" .sh)
    [ -f "$t" ] && wanted cli "$name" || continue
    case $name in
        test_online* | test_compile* | test_servers)
            [ "$jobs_max" -gt 1 ] && { pooled+=("$t"); continue; } ;;
    esac
    run_suite "cli $name" env REMODEL="$build/remodel" bash "$t"
done
for t in ${pooled[@]+"${pooled[@]}"}; do
    pool_suite "cli $(basename "$t" .sh)" env REMODEL="$build/remodel" bash "$t"
done
pool_wait
if [ -n "$sanbuild" ]; then
    for t in "$sanbuild"/tests/test_*; do
        [ -x "$t" ] && wanted unit "$(basename "$t")" && run_suite "asan+ubsan unit $(basename "$t")" "$t"
    done
    for t in tests/cli/test_fixtures.sh tests/cli/test_errors.sh tests/cli/test_transforms.sh \
             tests/cli/test_names.sh tests/cli/test_plan_errors.sh tests/cli/test_outputs.sh \
             tests/cli/test_diff.sh tests/cli/test_preview.sh tests/cli/test_stops.sh \
             tests/cli/test_memory.sh tests/cli/test_checks.sh tests/cli/test_roundtrip.sh \
             tests/cli/test_analyze.sh tests/cli/test_analyze_patterns.sh tests/cli/test_analyze_evidence.sh; do
        [ -f "$t" ] && wanted cli "$(basename "$t" .sh)" && run_suite "asan+ubsan cli $(basename "$t" .sh)" \
            env REMODEL="$sanbuild/remodel" REMODEL_SANITIZE=1 bash "$t"
    done
fi

# The fuzz corpus and every saved crash input, replayed under ASan and UBSan
# (corpus NAME runs through the harness after the colon; see the Makefile).
if [ -n "$sanbuild" ]; then
    for pair in archive:reader bson:reader tar:reader compressed:reader dir:dir plan:plan metadata:metadata \
                online:online; do
        name=${pair%%:*} harness=${pair#*:}
        [ -x "$sanbuild/fuzz-replay/$harness" ] && wanted unit "fuzz_$name" && run_suite "asan+ubsan fuzz replay $name" \
            "$sanbuild/fuzz-replay/$harness" "$name" tests/fuzz/corpus/"$name" tests/fuzz/crashes/"$name"
    done
fi

[ $suites -gt 0 ] || echo "tests/run.sh: no suite of part $parts matches '$only'" >&2
passed=$(awk '{ n += $1 } END { print n + 0 }' "$log/passes" 2>/dev/null)
failed=$(awk '{ n += $1 } END { print n + 0 }' "$log/fails" 2>/dev/null)
passed=${passed:-0}; failed=${failed:-0}
# The failures again at the end: a log read from its tail (CI's) shows
# them beside the count, not hours of output above it.
if [ -s "$log/faillines" ]; then
    echo
    echo "failed:"
    sed 's/^/  /' "$log/faillines"
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
