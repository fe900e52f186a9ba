#!/usr/bin/env bash
# make bench-server-side: remodel online run --server-side (the compiled
# pipelines, run by the server) against client-side online mode (documents
# through remodel-online's engine), for an embed and a denormalize
# backfill (side by side), on mongo-java-server, at batch size 1000.
# Prints a Markdown table and writes it into BENCHMARKS.md between the
# "server-side" markers.
#   scripts/bench_server_side.sh [BUILD]     SCALE=N (default 10)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${SCALE:-10}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
log() { printf 'bench-server-side: %s\n' "$*" >&2; }

. "$ROOT/tests/peers/env.sh"
SERVER=$ROOT/tests/peers/server.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-bench-ss.XXXXXX")
trap '"$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"' EXIT

d=$CACHE/online-scale-$SCALE/dump
if [ ! -f "$d/prelude.json" ]; then
    log "generating scale $SCALE into $d"
    mkdir -p "$CACHE/online-scale-$SCALE"
    "$GEN" --out "$d" --scale "$SCALE" --seed 1 --force >/dev/null || { log "generation failed"; exit 1; }
fi
cat >"$T/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}}]}
EOF
cat >"$T/denormalize.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "logging.logmsg", "from": "logging.hosts", "localField": "host",
                   "fields": {"host_ip": "ipaddr", "dc": "datacenter"}}}]}
EOF

uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/java" java 2>"$T/err") || { log "no server: $(cat "$T/err")"; exit 1; }
"$MONGORESTORE" --uri "$uri" --dir "$d" --nsInclude 'crm.*' --nsInclude 'logging.*' --noIndexRestore --quiet ||
    { log "restore failed"; exit 1; }
python3 -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1]); c.crm.tasks.create_index("owner"); c.crm.people.create_index("_id")' "$uri"

clean() {
    python3 -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1]); c.drop_database("remodel")
for db in ("crm", "logging"):
    for n in c[db].list_collection_names():
        if "_remodel_" in n: c[db].drop_collection(n)' "$uri"
}
rows=()
for step in embed denormalize; do
    for mode in client server; do
        clean
        args=(--batch-size 1000 --create-indexes)
        [ $mode == server ] && args+=(--server-side --server-version 4.0)
        t0=$EPOCHREALTIME
        "$R" online run "$T/$step.json" --uri "$uri" "${args[@]}" 2>"$T/err" ||
            { log "$step $mode failed: $(tail -2 "$T/err")"; continue; }
        t1=$EPOCHREALTIME
        read -r n < <(sed -n 's/^remodel: step .*: \([0-9]*\) read, .*/\1/p' "$T/err" | awk '{ r += $1 } END { print r }')
        secs=$(python3 -c "print('%.2f' % ($t1 - $t0))")
        rate=$(python3 -c "print(int($n / ($t1 - $t0)))")
        log "$step $mode: $n documents read in $secs s ($rate/s)"
        rows+=("| $step | $mode-side | $n | $secs | $rate |")
    done
done
table=$(printf '%s\n' "| step | mode | documents read | seconds | docs/s |" "|---|---|---:|---:|---:|" "${rows[@]}")
echo "$table"
printf '(%s, scale %s dump, mongo-java-server, batch size 1000, `make bench-server-side`)\n\n%s\n' \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$SCALE" "$table" >"$T/section"
python3 "$ROOT/scripts/bench/section.py" server-side "$T/section" "$OUT" "$BUILD"
