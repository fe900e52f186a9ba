#!/usr/bin/env bash
# remodel online resumes after a checkpoint's _id across every BSON type
# (issue 21 item 3): a collection whose _ids are of mixed types (null,
# false, true, int, long, double, string, document, binData, ObjectId,
# date, timestamp; on mongo-java-server also MinKey, MaxKey and decimal,
# which FerretDB 1.24 cannot store), a `set` step, and:
#   1. both servers: side by side, --batch-size 5, kill -9 at a random
#      checkpoint, run again: every document backfilled, as remodel run;
#   2. FerretDB, in place: the server stopped for 3 s and started again
#      mid-run (mongo-java-server keeps no data across a restart): the run
#      retries and finishes, every document changed, as remodel run;
#   3. mongo-java-server, --server-side (FerretDB has no $merge), killed
#      and run again: as remodel run;
#   4. mongo-java-server, the mongosh script (mongosh 1.10.6), killed and
#      run again: as remodel run;
#   5. FerretDB: sync with the server restarted mid-pass removes nothing:
#      every result is still there, and verify passes.
# A resume filter {_id: {$gt: last}} keeps to last's type: each of these
# then loses the documents of the types after it.
#   REMODEL=build/remodel bash tests/cli/test_online_ids.sh
. "$(dirname "$0")/lib.sh"
# Not ONLINE_SHARE=1 (lib.sh, online_take): it stops its FerretDB mid-run and
# starts it again on its port.
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms
MONGOSH1=${MONGOSH1:-}
N=12 # _ids of each type
mkdir -p "$T/plans"

# mk.py URI KIND DB: DB.things with N _ids of each type KIND can store.
cat >"$T/mk.py" <<'EOF'
import datetime, sys
import pymongo
from bson import Binary, Decimal128, Int64, MaxKey, MinKey, ObjectId, Timestamp
uri, kind, db, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
c.drop_database(db)
ids = [None, False, True]
for i in range(n):
    ids += [i, Int64(10**12 + i), i + 0.5, "s%03d" % i, {"k": i}, Binary(b"b%03d" % i),
            ObjectId(b"%012d" % i), datetime.datetime(2000, 1, 1) + datetime.timedelta(days=i),
            Timestamp(1000 + i, 1)]
if kind == "java":
    ids += [MinKey(), MaxKey(), Decimal128("0.25")]
c[db].things.insert_many([{"_id": v, "n": k} for k, v in enumerate(ids)])
print(len(ids))
EOF
# at.py URI SEEN PID: once a checkpoint of a pass not done has SEEN or more
# read, kill -9 PID (with PID 0, just return); exit 3 when PID ended first.
cat >"$T/at.py" <<'EOF'
import os, sys, time
import pymongo
uri, seen, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
t0 = time.time()
while time.time() - t0 < 60:
    if c.remodel.checkpoints.find_one({"seen": {"$gte": seen}, "done": False}):
        if pid:
            os.kill(pid, 9)
        sys.exit(0)
    if pid and not alive(pid):
        sys.exit(3)
    time.sleep(0.005)
sys.exit(3)
EOF
# plan NAME DB: a plan setting done: true on DB.things, in $T/plans/NAME.json.
plan() { echo "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"$2.things\", \"fields\": {\"done\": true}}}]}" >"$T/plans/$1.json"; }
# killed_at NAME CMD...: CMD in the background, killed -9 once a
# checkpoint has read a random 10 to 40 documents; stderr in $T/NAME.err.
killed_at() {
    local name=$1 pid outer
    shift
    # (in a subshell that reaps it quietly: no "Killed" from this shell)
    rm -f "$T/pid"
    ( "$@" >/dev/null 2>"$T/$name.err" & echo $! >"$T/pid"; wait $! ) 2>/dev/null &
    outer=$!
    while [ ! -s "$T/pid" ]; do sleep 0.01; done
    pid=$(cat "$T/pid")
    pyrun "$T/at.py" "$uri" $((RANDOM % 31 + 10)) "$pid"
    wait $outer
    expect_eq "$name: killed part way (a checkpoint not done)" \
        "$(py 'print(c.remodel.checkpoints.count_documents({"done": False}) > 0)')" True
    # The killed run's lease expires; the next run takes it over.
    py 'c.remodel.leases.update_many({}, {"$set": {"expires": datetime.datetime(2000, 1, 1)}})'
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue
    [ $kind == external ] && kind=java # a real server stores every type

    # 1. Side by side, killed at a random checkpoint, run again.
    n=$(pyrun "$T/mk.py" "$uri" $kind ids1 $N)
    plan kill ids1
    offline_run kill ids1
    killed_at "$kind: run --batch-size 5" \
        "$REMODEL" online run -q "$T/plans/kill.json" --uri "$uri" --batch-size 5 --pause-ms 40
    run_rm online run -q "$T/plans/kill.json" --uri "$uri" --batch-size 5
    expect_eq "$kind: run again: exit 0" "$rc:$(cat "$T/err")" "0:"
    to=$(target ids1 things)
    expect_eq "$kind: ... every one of the $n documents of mixed _id types backfilled" \
        "$(py "print(c.ids1['$to'].count_documents({'done': True}))")" "$n"
    online_same "$kind: ... as remodel run, byte for byte" "$T/kill.archive" "ids1.things=$to"
    run_rm online verify -q "$T/plans/kill.json" --uri "$uri"
    expect_eq "$kind: ... verify passes" "$rc:$(cat "$T/err")" "0:"

    if [ $kind == java ]; then
        # 3. --server-side, killed and run again.
        pyrun "$T/mk.py" "$uri" $kind ids3 $N >/dev/null
        plan server ids3
        offline_run server ids3
        killed_at "$kind: run --server-side" \
            "$REMODEL" online run -q "$T/plans/server.json" --uri "$uri" --server-side \
            --batch-size 5 --pause-ms 40
        run_rm online run -q "$T/plans/server.json" --uri "$uri" --server-side --batch-size 5
        expect_eq "$kind: --server-side run again: exit 0" "$rc:$(cat "$T/err")" "0:"
        to=$(target ids3 things)
        expect_eq "$kind: ... every document backfilled" \
            "$(py "print(c.ids3['$to'].count_documents({'done': True}))")" "$n"
        online_same "$kind: ... as remodel run, byte for byte" "$T/server.archive" "ids3.things=$to"

        # 4. The mongosh script, killed and run again.
        if [ -n "$MONGOSH1" ] && [ -x "$MONGOSH1" ]; then
            pyrun "$T/mk.py" "$uri" $kind ids4 $N >/dev/null
            plan script ids4
            offline_run script ids4
            "$REMODEL" compile "$T/plans/script.json" --format mongosh --server-version 4.0 \
                >"$T/script.js" 2>"$T/err"
            killed_at "$kind: the mongosh script" "$MONGOSH1" --quiet "$(shell_uri "$uri")" \
                --eval 'var batchSize = 5, pauseMs = 40, owner = "ids-test"' "$T/script.js"
            "$MONGOSH1" --quiet "$(shell_uri "$uri")" --eval 'var batchSize = 5, owner = "ids-test"' \
                "$T/script.js" >"$T/s2" 2>&1
            expect_eq "$kind: the mongosh script run again: exit 0" "$?" 0
            to=$(target ids4 things)
            expect_eq "$kind: ... every document backfilled" \
                "$(py "print(c.ids4['$to'].count_documents({'done': True}))")" "$n"
            online_same "$kind: ... as remodel run, byte for byte" "$T/script.archive" "ids4.things=$to"
        else
            fail "$kind: the mongosh script: mongosh 1.10.6 is not installed (tests/peers/install.sh)"
        fi
    fi
    [ $kind == ferretdb ] || { "$SERVER" stop "$T/$kind" >/dev/null 2>&1; continue; }
    port=${uri##*:}
    port=${port%/}
    # down: the server gone at once, as in a crash (stopped gently, FerretDB
    # would first serve the run's open connection to its end).
    down() { kill -9 "$(cat "$T/$kind/pid")"; "$SERVER" stop "$T/$kind" >/dev/null 2>&1; }

    # 2. In place, the server stopped for 3 s mid-run (FerretDB keeps its data).
    pyrun "$T/mk.py" "$uri" $kind ids2 $N >/dev/null
    plan restart ids2
    offline_run restart ids2
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/run.err"
    "$REMODEL" online run "$T/plans/restart.json" --uri "$uri" --in-place --batch-size 5 \
        --pause-ms 40 --retry-for 60 >/dev/null 2>"$T/run.err" &
    pid=$!
    pyrun "$T/at.py" "$uri" $((RANDOM % 31 + 10)) 0
    down
    sleep 3
    online_start $kind "$T/$kind" "$port"
    wait $pid
    expect_eq "$kind: in place, the server stopped for 3 s mid-run: the run retries and finishes (exit 0)" \
        "$?:$(grep -c 'retrying in' "$T/run.err" | awk '{ print ($1 > 0) }')" "0:1"
    grep -q 'retrying in' "$T/run.err" || tail -n 3 "$T/run.err" >&2
    expect_eq "$kind: ... every document changed" \
        "$(py 'print(c.ids2.things.count_documents({"done": True}))')" "$n"
    online_same "$kind: ... as remodel run, byte for byte" "$T/restart.archive" "ids2.things=things"

    # 5. sync across a restart: the other types' results are no stray.
    pyrun "$T/mk.py" "$uri" $kind ids5 $N >/dev/null
    plan sync ids5
    offline_run sync ids5
    run_rm online run -q "$T/plans/sync.json" --uri "$uri"
    to=$(target ids5 things)
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/sync.err"
    "$REMODEL" online sync "$T/plans/sync.json" --uri "$uri" --batch-size 5 --pause-ms 40 \
        --retry-for 60 --log-format json >/dev/null 2>"$T/sync.err" &
    pid=$!
    for ((w = 0; w < 300; w++)); do
        [ "$(grep -c '"batch"' "$T/sync.err")" -ge $((RANDOM % 6 + 2)) ] && break
        sleep 0.01
    done
    down
    sleep 3
    online_start $kind "$T/$kind" "$port"
    wait $pid
    expect_eq "$kind: sync with the server stopped for 3 s mid-pass: exit 0, after a retry" \
        "$?:$(grep -c 'retrying in' "$T/sync.err" | awk '{ print ($1 > 0) }')" "0:1"
    grep -q 'retrying in' "$T/sync.err" || tail -n 3 "$T/sync.err" >&2
    expect_eq "$kind: ... no valid result removed" \
        "$(py "print(c.ids5['$to'].count_documents({'done': True}))"):$(grep -c 'no range makes\|sources are gone' "$T/sync.err")" "$n:0"
    online_same "$kind: ... the results as remodel run, byte for byte" "$T/sync.archive" "ids5.things=$to"
    run_rm online verify -q "$T/plans/sync.json" --uri "$uri"
    expect_eq "$kind: ... verify passes" "$rc:$(cat "$T/err")" "0:"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
