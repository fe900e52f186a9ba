#!/usr/bin/env bash
# Runs each fuzz corpus for a set time: scripts/fuzz.sh BUILD SECONDS NAME:HARNESS...
# (make fuzz calls it). New inputs go to tests/fuzz/corpus/NAME, crashes to
# tests/fuzz/crashes/NAME; prints executions and findings per corpus.
set -u
cd "$(dirname "$0")/.."
build=$1 seconds=$2; shift 2
printf '%-12s %-10s %12s %8s %8s\n' CORPUS HARNESS EXECUTIONS INPUTS CRASHES
# (INPUTS: the corpus after this run, before it is minimized)
for pair in "$@"; do
    name=${pair%%:*} harness=${pair#*:}
    mkdir -p "tests/fuzz/corpus/$name" "tests/fuzz/crashes/$name"
    log=$(mktemp)
    "$build/fuzz_$harness" -max_total_time="$seconds" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="tests/fuzz/crashes/$name/" \
        "tests/fuzz/corpus/$name" >"$log" 2>&1
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    printf '%-12s %-10s %12s %8s %8s\n' "$name" "$harness" "${execs:-?}" \
        "$(ls "tests/fuzz/corpus/$name" | wc -l)" "$(ls "tests/fuzz/crashes/$name" | wc -l)"
    grep -m3 'ERROR: \|SUMMARY: ' "$log" | sed 's/^/    /'
    # Keep the committed corpus small: only inputs that add coverage.
    min=$(mktemp -d)
    "$build/fuzz_$harness" -merge=1 -max_len=65536 -timeout=20 "$min" "tests/fuzz/corpus/$name" >/dev/null 2>&1 &&
        [ -n "$(ls "$min")" ] && { rm -rf "tests/fuzz/corpus/$name"; mv "$min" "tests/fuzz/corpus/$name"; }
    rm -rf "$min" "$log"
done
