#!/usr/bin/env bash
# Online workers against mongorestore's insertion workers (make
# bench-online; issue 37, item 6). A benchmark, never a test: it reports,
# it never fails the build. Usage: scripts/bench_online_workers.sh [BUILD_DIR]
#
# On each test server (FerretDB, mongo-java-server), started empty: the
# embed of crm.tasks into crm.people (side by side; it reads every
# document of both collections once as a driving range) timed as
# `remodel online run --workers N` for N in BENCH_WORKERS, beside
# `mongorestore --numInsertionWorkersPerCollection N` of the same two
# namespaces from the same dump. --workers is given only when this build's
# remodel online run takes it; otherwise only N = 1 runs, and the other
# rows say so. Each online run starts with fresh state and its targets
# are dropped after it; the join's index is built before, untimed. It
# also notes the CPU seconds of the server and of each client, which on
# a machine of two cores shared by server and client say where the time
# goes. It writes BUILD/bench/online-workers.md and the "online-workers"
# section of BENCHMARKS.md, between its markers.
#   SCALE=N          remodel-gen --scale (default 100: 9,800 people,
#                    100,000 tasks; cached beside bench_online.sh's). At
#                    scale 10 each run was a fifth of a second on
#                    mongo-java-server, a run's 70 fixed commands a third
#                    of it, its spread 60 to 120%: no rate
#                    (BENCHMARKS.md, "Online workers")
#   BENCH_SERVERS    default "ferretdb java"
#   BENCH_WORKERS    default "1 2 4"
#   BENCH_BATCH      --batch-size (default 1000)
#   BENCH_PARTS      partitions a worker with N > 1 (default 1: --partitions
#                    N). Without it at least four a worker of at least
#                    10,000 documents each (online_partition_state.c); on
#                    both test servers each partition's range is a scan
#                    of the whole collection
#   BENCH_REPEAT     runs of each (default 3): the table has the median
#                    and the spread (slowest - fastest, of the median)
#   BENCH_CACHE=D    where the generated dump is cached
#                    (default ${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench)
#   BENCH_OUT=F      the report (default BENCHMARKS.md; "-": BUILD only)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${SCALE:-100}
SERVERS=${BENCH_SERVERS:-ferretdb java}
WORKERS=${BENCH_WORKERS:-1 2 4}
BATCH=${BENCH_BATCH:-1000}
REPEAT=${BENCH_REPEAT:-3}
PARTS=${BENCH_PARTS:-1}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
TIME=/usr/bin/time
BENCH_NAME=bench-online-workers
. "$ROOT/scripts/bench_online_lib.sh"

D=$CACHE/online-scale-$SCALE/dump
if [ ! -f "$D/prelude.json" ]; then
    log "generating scale $SCALE into $D"
    mkdir -p "$CACHE/online-scale-$SCALE"
    "$GEN" --out "$D" --scale "$SCALE" --seed 1 --force >/dev/null || { log "generation failed"; exit 0; }
fi
DOCS=$("$R" inspect --json "$D" | python3 -c '
import json, sys
print(sum(n["documents"] for n in json.load(sys.stdin)["namespaces"]
          if n["db"] == "crm" and n["collection"] in ("people", "tasks")))')

# Whether this build's online run has workers at all.
HAS_WORKERS=0
"$R" online run --help 2>&1 | grep -q -- '--workers' && HAS_WORKERS=1

mkdir -p "$T/plans"
plan() { # TAG: a plan of its own name, so its own state and targets
    cat >"$T/plans/embed-$1.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}}]}
EOF
    echo "$T/plans/embed-$1.json"
}
pyq() { python3 -c "import pymongo, sys
c = pymongo.MongoClient(sys.argv[1])
$1" "$uri" "${@:2}"; }

RES=$T/results.tsv
: >"$RES"
# result SERVER TOOL WORKERS WALL DOCS CLIENT_CPU SERVER_CPU
result() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RES"; }

# restore N: mongorestore of crm.people and crm.tasks into another
# database, N insertion workers a collection, timed, then dropped.
restore() {
    local n=$1 t0 t1 c0 c1
    c0=$(cpu "$spid"); t0=$(now)
    "$TIME" -f '%U %S' -o "$T/time" "$MONGORESTORE" --uri "$uri" --dir "$D" \
        --nsInclude crm.people --nsInclude crm.tasks --nsFrom 'crm.*' --nsTo 'benchw.*' \
        --numInsertionWorkersPerCollection "$n" --noIndexRestore --quiet 2>"$T/err" ||
        { log "$kind: mongorestore -j $n failed: $(tail -n2 "$T/err")"; result "$kind" restore "$n" FAIL - - -; return 0; }
    t1=$(now); c1=$(cpu "$spid")
    result "$kind" restore "$n" "$(sub "$t1" "$t0")" "$DOCS" "$(awk 'END { printf "%.2f", $1 + $2 }' "$T/time")" "$(sub "$c1" "$c0")"
    log "$kind: mongorestore, $n insertion worker(s): $DOCS documents in $(sub "$t1" "$t0") s"
    pyq 'c.drop_database("benchw")'
}

# online N: one timed `remodel online run` with N workers, fresh state.
online() {
    local n=$1 f t0 t1 c0 c1 read args=(--batch-size "$BATCH" --create-indexes -q)
    if [ "$n" != 1 ] && [ $HAS_WORKERS == 0 ]; then
        result "$kind" online "$n" NA - - -
        return 0
    fi
    [ $HAS_WORKERS == 1 ] && args+=(--workers "$n")
    [ $HAS_WORKERS == 1 ] && [ "$n" != 1 ] && args+=(--partitions "$((PARTS * n))")
    f=$(plan "w$n")
    c0=$(cpu "$spid"); t0=$(now)
    if ! "$TIME" -f '%U %S' -o "$T/time" "$R" online run "$f" --uri "$uri" "${args[@]}" >/dev/null 2>"$T/err"; then
        log "$kind: online run, $n worker(s), failed: $(grep -v '^Command exited' "$T/err" | tail -n2)"
        result "$kind" online "$n" FAIL - - -
        return 0
    fi
    t1=$(now); c1=$(cpu "$spid")
    read=$(pyq 'print(sum(d.get("seen", 0) for d in c.remodel.checkpoints.find()))')
    result "$kind" online "$n" "$(sub "$t1" "$t0")" "$read" "$(awk 'END { printf "%.2f", $1 + $2 }' "$T/time")" "$(sub "$c1" "$c0")"
    log "$kind: online run, $n worker(s): $read read in $(sub "$t1" "$t0") s"
    pyq '
c.drop_database("remodel")
for n in c.crm.list_collection_names():
    if "_remodel_" in n:
        c.crm.drop_collection(n)'
}

for kind in $SERVERS; do
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
    uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/$kind" "$kind" 2>"$T/err") ||
        { log "$kind: the server did not start: $(tail -n2 "$T/err")"; continue; }
    spid=$(cat "$T/$kind/pid")
    # The sources, untimed, and the join's index.
    "$MONGORESTORE" --uri "$uri" --dir "$D" --nsInclude crm.people --nsInclude crm.tasks \
        --noIndexRestore --quiet 2>"$T/err" || { log "$kind: restore failed"; continue; }
    pyq 'c.crm.tasks.create_index("owner")'
    for i in $(seq "$REPEAT"); do
        for n in $WORKERS; do
            restore "$n"
            online "$n"
        done
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done

# ---- the report
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
python3 - "$RES" - "$SCALE" "$MACHINE" "$BATCH" "$HAS_WORKERS" "$REPEAT" "$PARTS" \
    "mongorestore $("$MONGORESTORE" --version | head -n1 | sed "s/.*version: //")" >"$T/section" <<'PYEOF'
import sys, time
res, out, scale, machine, batch, has_workers, repeat, parts, mrversion = sys.argv[1:10]
rows = [l.rstrip("\n").split("\t") for l in open(res) if l.strip()]
# Each (server, tool, workers): its median run by wall time (a FAIL or
# NA wins), with the spread of the walls beside it.
runs = {}
for r in rows:
    runs.setdefault((r[0], r[1], r[2]), []).append(r)
by, spread = {}, {}
for k, rs in runs.items():
    bad = [r for r in rs if r[3] in ("FAIL", "NA")]
    if bad:
        by[k] = bad[0]
        continue
    rs.sort(key=lambda r: float(r[3]))
    by[k] = rs[len(rs) // 2]
    lo, hi, mid = float(rs[0][3]), float(rs[-1][3]), float(by[k][3])
    spread[k] = "%.0f%%" % (100 * (hi - lo) / mid) if len(rs) > 1 and mid > 0 else "—"
TARGET = {"java": 80, "ferretdb": 50}
def rate(r):
    return float(r[4]) / float(r[3]) if r and r[3] not in ("FAIL", "NA") and float(r[3]) > 0 else None
t = ["| server | workers | mongorestore s (spread) | docs/s | CPU s: server, client | remodel online run s (spread) | docs/s | CPU s: server, client | vs mongorestore | target (issue) |",
     "|---|---:|---:|---:|---|---:|---:|---|---:|---|"]
def wall(k, r):
    return "%s (%s)" % (r[3], spread[k]) if k in spread else r[3]
for (server, tool, n), r in sorted(by.items(), key=lambda kv: (kv[0][0], int(kv[0][2]))):
    if tool != "restore":
        continue
    o = by.get((server, "online", n))
    rr, ro = rate(r), rate(o)
    if o and o[3] == "NA":
        on = "| — | — | — | — | not run: this build's `online run` has no `--workers` |"
    elif not ro:
        on = "| failed | — | — | — | — |"
    else:
        pct = 100 * ro / rr if rr else 0
        want = TARGET.get(server, 50)
        on = "| %s | %s | %s, %s | %.0f%% | ≥ %d%%: %s |" % (
            wall((server, "online", n), o), "{:,.0f}".format(ro), o[6], o[5], pct, want,
            "met" if pct >= want else "**missed: %.0f%%**" % pct)
    t.append("| %s | %s | %s | %s | %s, %s %s" % (
        server, n, wall((server, tool, n), r), "{:,.0f}".format(rr) if rr else "—", r[6], r[5], on))
print("(%s; scale %s, `--batch-size %s`%s; %s; `make bench-online`)\n" % (
    time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), scale, batch,
    (", N > 1 with `--partitions %sN`" % ("" if parts == "1" else parts)) if has_workers == "1"
    else ", no `--workers` in this build", "one run" if repeat == "1"
    else "the median of %s runs, (spread): slowest minus fastest, of the median" % repeat))
print("\n".join(t))
PYEOF
cat "$T/section"
python3 "$ROOT/scripts/bench/section.py" online-workers "$T/section" "$OUT" "$BUILD"
exit 0
