#!/usr/bin/env bash
# The online mode's memory, measured (make bench-online runs it after the
# cut-over). A benchmark, never a test: it reports, it never fails the
# build. Usage: scripts/bench_online_memory.sh [BUILD_DIR]
#
# On mongo-java-server (in memory, so that the server's disk is not what
# is measured), remodel-online's peak resident memory (GNU time's maximum
# RSS) for `online run` then `online verify` of:
#   - an extract of posts' comments (parentRef: the children name their
#     parent), at two sizes: it keeps nothing per result, so the peak
#     should not grow with the data;
#   - a bucketize of readings (its buckets do not name a reading: it keeps
#     a set of the results' _ids), at two smaller sizes (mongo-java-server
#     scans the readings for each batch of series), with the default
#     --memory and with --memory 1M, past which the set is sorted on disk.
# It writes BUILD/bench/online-memory.md and the "online-memory" section
# of BENCHMARKS.md, between its markers.
#   MEMORY_SIZES   posts per size (default "50000 200000")
#   BUCKET_SIZES   series per size (default "10000 40000")
#   VERIFY_MAX     the largest N verified (default 50000): mongo-java-server
#                  took over 12 minutes and 5.9 GB to serve the verify of
#                  200,000 posts on 2026-11-26 (its $in of each batch
#                  scans the collection); the row says "not run"
#   BENCH_OUT=F    the report (default BENCHMARKS.md; "-": BUILD only)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel
SIZES=${MEMORY_SIZES-50000 200000}
BUCKET_SIZES=${BUCKET_SIZES-10000 40000}
VERIFY_MAX=${VERIFY_MAX:-50000}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
log() { printf 'bench-online-memory: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$BUILD/remodel-online" ] || { log "build $R and remodel-online first (make all)"; exit 0; }
[ -f "$ROOT/tests/peers/env.sh" ] && . "$ROOT/tests/peers/env.sh"
[ -x /usr/bin/time ] || { log "GNU time missing (scripts/install-deps.sh installs it)"; exit 0; }
SERVER=$ROOT/tests/peers/server.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-bench-memory.XXXXXX")
trap '"$SERVER" stop "$T/srv" >/dev/null 2>&1; rm -rf "$T"' EXIT
ROWS=$T/rows
: >"$ROWS"

cat >"$T/extract.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "blog.posts", "path": "comments", "to": "blog.comments",
               "style": "parentRef", "parentField": "post_id"}}]}
EOF
cat >"$T/bucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 60, "maxCount": 3}}]}
EOF

# load DB N: N posts of 3 comments each (blog), or N sensors of 3 readings
# each (iot): 3N results of either plan (buckets of one reading each).
load() {
    python3 - "$uri" "$1" "$2" <<'PY'
import sys, datetime, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
db, n = sys.argv[2], int(sys.argv[3])
t0 = datetime.datetime(2026, 1, 1)
for d in ("blog", "iot", "remodel"):
    c.drop_database(d)
for lo in range(0, n, 10000):
    if db == "blog":
        c.blog.posts.insert_many([{"_id": i, "title": "post %d" % i,
                                   "comments": [{"by": "u%d" % k, "text": "c%d" % k} for k in range(3)]}
                                  for i in range(lo, min(n, lo + 10000))])
    else:
        c.iot.readings.insert_many([{"sensor": i, "ts": t0 + datetime.timedelta(minutes=2 * k), "v": k}
                                    for i in range(lo, min(n, lo + 10000)) for k in range(3)])
PY
}

# peak WHAT N PLAN COMMAND ARGS...: the command's maximum RSS in MB.
peak() {
    local what=$1 n=$2 plan=$3 cmd=$4 kb; shift 4
    /usr/bin/time -f %M -o "$T/rss" "$R" online "$cmd" "$T/$plan.json" --uri "$uri" -q "$@" \
        2>"$T/err" >/dev/null || { log "$what $cmd failed: $(tail -n 2 "$T/err")"; return; }
    kb=$(tail -n 1 "$T/rss")
    printf '%s|%s|%s|%s\n' "$what" "$n" "$cmd" "$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')" >>"$ROWS"
    log "$what, $n: $cmd $(tail -n 1 "$ROWS" | cut -d'|' -f4) MB"
}

uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/srv" java 2>"$T/err") ||
    { log "mongo-java-server did not start: $(cat "$T/err")"; exit 0; }
for n in $SIZES; do
    load blog "$n"
    peak "extract (parentRef)" "$n" extract run --batch-size 1000
    [ "$n" -le "$VERIFY_MAX" ] && peak "extract (parentRef)" "$n" extract verify --batch-size 1000
done
for n in $BUCKET_SIZES; do
    load iot "$n"
    peak "bucketize, --memory 512M" "$n" bucket run --batch-size 3000
    [ "$n" -le "$VERIFY_MAX" ] && peak "bucketize, --memory 512M" "$n" bucket verify --batch-size 3000
    "$R" online rollback "$T/bucket.json" --uri "$uri" -q
    peak "bucketize, --memory 1M" "$n" bucket run --batch-size 3000 --memory 1M
    [ "$n" -le "$VERIFY_MAX" ] && peak "bucketize, --memory 1M" "$n" bucket verify --batch-size 3000 --memory 1M
done

# A row a plan and size, run and verify side by side: BUILD/bench/
# online-memory.md and the "online-memory" markers of BENCHMARKS.md.
python3 - "$ROWS" "$VERIFY_MAX" >"$T/section" <<'PY'
import sys, time
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
vmax = int(sys.argv[2])
print("(%s, mongo-java-server, `make bench-online`; peak RSS MB, GNU time)\n"
      % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
print("| plan | N | run MB | verify MB |\n|---|---:|---:|---:|")
seen = []
for what, n, cmd, mb in rows:
    if (what, n) not in seen:
        seen.append((what, n))
for what, n in seen:
    mb = {r[2]: r[3] for r in rows if r[0] == what and r[1] == n}
    print("| %s | %s | %s | %s |" % (what, "{:,}".format(int(n)), mb.get("run", "failed"),
                                     mb.get("verify", "failed" if int(n) <= vmax else "not run")))
PY
cat "$T/section"
python3 "$ROOT/scripts/bench/section.py" online-memory "$T/section" "$OUT" "$BUILD"
exit 0
