#!/usr/bin/env bash
# Issue 65's rescan row: a sync after the change log is gone rescans every
# range, and should cost no more than the run did. On a server without a
# change log (so that sync rescans), N documents of about 220 bytes with
# number _ids, a set plan: `online run`, then 3 sources deleted, 3 added
# and 1 changed, spread over the collection, `online sync`, and `online
# sync` again (nothing to do). The binaries of BASE (a commit, built in its
# own tree) and of this tree take turns, ROUNDS rounds; wall seconds of
# each command, and the sync's write commands to the target (counted from
# REMODEL_ONLINE_TRACE). A benchmark, never a test: it reports.
#   scripts/bench_rescan.sh [BUILD]   BASE=COMMIT (default: none, this tree
#   alone) RESCAN_DOCS=20000 RESCAN_ROUNDS=3 RESCAN_SERVERS="ferretdb java"
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen TIME=/usr/bin/time
SERVERS=${RESCAN_SERVERS:-ferretdb java}
BENCH_NAME=bench-rescan
. "$ROOT/scripts/bench_online_lib.sh"
N=${RESCAN_DOCS:-20000}
ROUNDS=${RESCAN_ROUNDS:-3}

# The base's binary, built once in a worktree of its own.
bins="this:$R"
if [ -n "${BASE:-}" ]; then
    bt=$T/base
    git -C "$ROOT" worktree add -q --detach "$bt" "$BASE" &&
        make -C "$bt" -j2 --no-print-directory all >/dev/null 2>&1 ||
        { log "building $BASE failed"; git -C "$ROOT" worktree remove --force "$bt"; exit 0; }
    bins="base:$bt/build/remodel $bins"
fi
echo '{"remodel": 1, "steps": [{"set": {"in": "o.items", "fields": {"m": {"$multiply": ["$n", 2]}, "t": {"$concat": ["$s", "!"]}}}}]}' >"$T/plan.json"

# timed NAME ARGS...: remodel online ARGS traced; "NAME SECONDS WRITES".
timed() {
    local name=$1 t0 t1
    shift
    t0=$(now)
    REMODEL_ONLINE_TRACE=1 "$bin" online "$@" >/dev/null 2>"$T/err" || log "$label: $name failed: $(grep -v '^trace' "$T/err" | tail -n 2)"
    t1=$(now)
    echo "$name $(sub "$t1" "$t0") $(grep -cE '^trace: .*"(delete|insert|update)" : "items_remodel' "$T/err")"
}
for kind in $SERVERS; do
    for round in $(seq 1 "$ROUNDS"); do
        for b in $bins; do
            label=${b%%:*} bin=${b#*:}
            "$SERVER" stop "$T/$kind" >/dev/null 2>&1
            rm -rf "$T/$kind"
            "$SERVER" start "$T/$kind" "$kind" >/dev/null || { log "$kind did not start"; continue 2; }
            uri=$(cat "$T/$kind/uri")
            python3 - "$uri" "$N" <<'PY'
import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
n = int(sys.argv[2])
c.o.items.insert_many([{"_id": i, "n": i, "s": "x" * 200} for i in range(n)])
PY
            run=$(timed run run "$T/plan.json" --uri "$uri")
            python3 - "$uri" "$N" <<'PY'
import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
n = int(sys.argv[2])
c.o.items.delete_many({"_id": {"$in": [n // 7, 3 * n // 7, 5 * n // 7]}})
c.o.items.insert_many([{"_id": n + k, "n": k, "s": "y"} for k in range(3)])
c.o.items.update_one({"_id": n // 2}, {"$set": {"n": -1}})
PY
            sync=$(timed sync sync "$T/plan.json" --uri "$uri")
            quiet=$(timed quiet sync "$T/plan.json" --uri "$uri")
            echo "$kind round $round $label: $run | $sync | $quiet (name seconds write-commands)"
        done
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
[ -n "${BASE:-}" ] && git -C "$ROOT" worktree remove --force "$T/base"
exit 0
