# Sourced by the online benchmarks (bench_online.sh,
# bench_online_workers.sh) after they set BUILD, ROOT, R, GEN, TIME,
# SERVERS and BENCH_NAME: log(), cpu(), now(), sub(), the tools they need
# (each missing one said, and the benchmark skipped with exit 0),
# $SERVER, and $T, a scratch directory whose servers are stopped and
# which is removed on exit.
log() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] && [ -x "$BUILD/remodel-online" ] ||
    { log "build $R, $GEN and remodel-online first (make all)"; exit 0; }
[ -x "$TIME" ] || { log "/usr/bin/time (GNU time) is needed: apt-get install time"; exit 0; }
[ -f "$ROOT/tests/peers/env.sh" ] && . "$ROOT/tests/peers/env.sh"
[ -x "${MONGORESTORE:-}" ] || { log "mongorestore missing (tests/peers/install.sh)"; exit 0; }
python3 -c 'import pymongo' 2>/dev/null || { log "pymongo is needed"; exit 0; }
SERVER=$ROOT/tests/peers/server.sh

T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-$BENCH_NAME.XXXXXX")
cleanup() {
    local k
    for k in $SERVERS; do "$SERVER" stop "$T/$k" >/dev/null 2>&1; done
    rm -rf "$T"
}
trap 'cleanup; log interrupted; exit 0' INT TERM
trap cleanup EXIT

# cpu PID: the process's user+system CPU seconds so far; now: the wall
# clock in seconds; sub A B: A - B to the hundredth.
cpu() {
    awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f\n", ($12 + $13) / t }' "/proc/$1/stat" 2>/dev/null || echo 0
}
now() { echo "$EPOCHREALTIME"; }
sub() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) - float(sys.argv[2])))' "$1" "$2"; }
