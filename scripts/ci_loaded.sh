#!/usr/bin/env bash
# Runs .ci/run on a clean clone of HEAD several times in a row with the
# machine kept busy beside it (stress-ng's CPU workers), stopping at the first
# run that fails: the proof that no check depends on timing under load
# (docs/tests.md, "Under load"). A long campaign, never part of make check.
#   scripts/ci_loaded.sh [RUNS] [BUSY]    (3 runs, 2 busy workers by default)
# Each run's log and a summary line per run go to build/ci-loaded/.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-3}
busy=${2:-2}
if ! command -v stress-ng >/dev/null; then
    [ "$(id -u)" -eq 0 ] || { echo "ci_loaded: needs stress-ng: sudo apt-get install -y stress-ng" >&2; exit 1; }
    echo "ci_loaded: installing stress-ng" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q stress-ng >/dev/null ||
        { apt-get update -q >/dev/null || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -q stress-ng >/dev/null; }
fi
out=$PWD/build/ci-loaded
mkdir -p "$out"
rev=$(git rev-parse --short HEAD)
clone=$(mktemp -d "${TMPDIR:-/tmp}/remodel-ci-loaded.XXXXXX")
stress=
stop() {
    [ -n "$stress" ] && kill "$stress" 2>/dev/null && wait "$stress" 2>/dev/null
    rm -rf "$clone"
}
trap stop EXIT
stress-ng --cpu "$busy" --timeout 0 --quiet &
stress=$!
summary=$out/summary.txt
echo "# $(date -u +%FT%TZ) $rev: $runs runs of .ci/run beside stress-ng --cpu $busy" >>"$summary"
for i in $(seq 1 "$runs"); do
    log=$out/run-$rev-$i.log
    # Each run gets its own clean clone, as CI does: nothing built or cached
    # in the tree by one run helps the next.
    rm -rf "$clone/remodel"
    git clone -q --no-local "$PWD" "$clone/remodel"
    git -C "$clone/remodel" checkout -q "$rev"
    start=$(date +%s)
    rc=0
    (cd "$clone/remodel" && CI=true bash .ci/run </dev/null) >"$log" 2>&1 || rc=$?
    secs=$(( $(date +%s) - start ))
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    line="run $i of $runs at $rev: exit $rc, $secs s, ${counts:-no count}, load $load"
    echo "$line" | tee -a "$summary"
    [ "$rc" -eq 0 ] || { echo "ci_loaded: run $i failed; its log: $log" >&2; exit 1; }
done
echo "ci_loaded: $runs loaded runs passed at $rev" | tee -a "$summary"
