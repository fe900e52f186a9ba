#!/usr/bin/env bash
# Runs every suite and ends with "N passed, N failed".
#   tests/run.sh BUILD [SANITIZE_BUILD]
# Unit suites are programs in BUILD/tests; command-line suites are
# tests/cli/*.sh, run with REMODEL=BUILD/remodel. Each prints PASS/FAIL lines.
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
sanbuild=${2:-}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

suites=0
run_suite() { # NAME COMMAND...
    local name=$1; shift
    suites=$((suites + 1))
    echo "== $name"
    "$@" >"$log/out" 2>"$log/err"
    local rc=$?
    cat "$log/out"
    if grep -q '^FAIL ' "$log/out" || [ $rc -ne 0 ]; then
        sed 's/^/    /' "$log/err" | tail -40
    fi
    grep -c '^PASS ' "$log/out" >>"$log/passes" || true
    grep -c '^FAIL ' "$log/out" >>"$log/fails" || true
    if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$log/out"; then
        echo "FAIL $name (exit $rc, no result lines)"
        echo 1 >>"$log/fails"
    fi
}

# Peer tools (bsondump, mongorestore, a server) are installed once and cached.
if [ -x tests/peers/install.sh ]; then
    tests/peers/install.sh >"$log/peers" 2>&1 || { echo "peer install failed:"; tail -30 "$log/peers"; }
    [ -f tests/peers/env.sh ] && . tests/peers/env.sh
fi

for t in "$build"/tests/test_*; do
    [ -x "$t" ] && run_suite "unit $(basename "$t")" "$t"
done
for t in tests/cli/test_*.sh; do
    [ -f "$t" ] && run_suite "cli $(basename "$t" .sh)" env REMODEL="$build/remodel" bash "$t"
done
if [ -n "$sanbuild" ]; then
    for t in "$sanbuild"/tests/test_*; do
        [ -x "$t" ] && run_suite "asan+ubsan unit $(basename "$t")" "$t"
    done
    for t in tests/cli/test_fixtures.sh tests/cli/test_errors.sh tests/cli/test_transforms.sh \
             tests/cli/test_names.sh tests/cli/test_plan_errors.sh tests/cli/test_outputs.sh \
             tests/cli/test_diff.sh tests/cli/test_preview.sh tests/cli/test_stops.sh \
             tests/cli/test_memory.sh tests/cli/test_checks.sh tests/cli/test_roundtrip.sh \
             tests/cli/test_analyze.sh tests/cli/test_analyze_patterns.sh; do
        [ -f "$t" ] && run_suite "asan+ubsan cli $(basename "$t" .sh)" \
            env REMODEL="$sanbuild/remodel" REMODEL_SANITIZE=1 bash "$t"
    done
fi

# The fuzz corpus and every saved crash input, replayed under ASan and UBSan
# (corpus NAME runs through the harness after the colon; see the Makefile).
if [ -n "$sanbuild" ]; then
    for pair in archive:reader bson:reader tar:reader compressed:reader dir:dir plan:plan metadata:metadata; do
        name=${pair%%:*} harness=${pair#*:}
        [ -x "$sanbuild/fuzz-replay/$harness" ] && run_suite "asan+ubsan fuzz replay $name" \
            "$sanbuild/fuzz-replay/$harness" "$name" tests/fuzz/corpus/"$name" tests/fuzz/crashes/"$name"
    done
fi

passed=$(awk '{ n += $1 } END { print n + 0 }' "$log/passes" 2>/dev/null)
failed=$(awk '{ n += $1 } END { print n + 0 }' "$log/fails" 2>/dev/null)
passed=${passed:-0}; failed=${failed:-0}
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
