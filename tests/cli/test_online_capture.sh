#!/usr/bin/env bash
# remodel online's change capture (issue 23, its first part; docs/online.md,
# "Change capture"): on FerretDB and on mongo-java-server, each started with
# its change log (tests/peers/server.sh ... changelog: FerretDB's oplog,
# java's change streams) and without (none):
#   - the mode, in run's first line and in status;
#   - the start point, recorded before the copy: a write made before the run
#     is not after it in the log, a write made while the run is paused after
#     its first batch is, and so is the run's first checkpoint (read from
#     the point with pymongo: the oplog from its ts, the stream after its
#     token);
#   - a run killed and run again keeps the point; --restart takes a new one;
#   - lost history: FerretDB's 1 MiB oplog rolled over makes status say so
#     (mongo-java-server's oplog is not capped and it resumes after any
#     token, even once its oplog is dropped: nothing there to detect);
#   - without a change log, the "none" line, and the cost of finalize
#     estimated when the run ends.
#   REMODEL=build/remodel bash tests/cli/test_online_capture.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "capture: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
# A 1 MiB oplog (tests/peers/server.sh gives 64 MiB by default): rolled
# over below.
export PEERS_OPLOG_BYTES=1048576
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plan.json"
P=$T/plan.json
cat >"$T/backfill.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner",
                   "fields": {"owner_email": "email"}}}]}
EOF

# start KIND [changelog]: a fresh server holding the sample's crm.*; $uri.
start() {
    local dir=$T/srv-$1${2:+-log}
    "$SERVER" stop "$dir" >/dev/null 2>&1
    rm -rf "$dir"
    online_start "$1" "$dir" 0 ${2:-} || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
}

# py SCRIPT ARGS...: a pymongo script with the client as c ($uri).
py() {
    local code=$1; shift
    python3 -c "import sys, pymongo, bson
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
$code" "$uri" "$@"
}
insert() { py 'c.crm.tasks.insert_one({"_id": sys.argv[2], "owner": "nobody", "title": "probe"})' "$1"; }

# after_point: what the log holds after the plan's recorded point, from the
# point the record keeps: the _ids of crm.tasks' inserts, then how many
# writes to remodel.checkpoints (the oplog from its ts; a stream on each
# collection after its token, read until it is quiet).
after_point() {
    py '
rec = c.remodel.plans.find_one({"name": "plan.json"})["capture"]
def stream(db, coll):
    r = c[db].command({"aggregate": coll, "pipeline": [{"$changeStream": {"resumeAfter": rec["token"]}}], "cursor": {}})
    evs, cid = list(r["cursor"]["firstBatch"]), r["cursor"]["id"]
    while cid:
        r = c[db].command({"getMore": cid, "collection": coll, "maxTimeMS": 300})
        if not r["cursor"]["nextBatch"]:
            break
        evs += r["cursor"]["nextBatch"]
    return evs
if rec["mode"] == "oplog":
    log = list(c.local["oplog.rs"].find({"ts": {"$gt": rec["ts"]}}))
    ids = [e["o"]["_id"] for e in log if e["ns"] == "crm.tasks" and e["op"] == "i"]
    cps = sum(1 for e in log if e["ns"] == "remodel.checkpoints")
else:
    ids = [e["fullDocument"]["_id"] for e in stream("crm", "tasks") if e["operationType"] == "insert"]
    cps = len(stream("remodel", "checkpoints"))
print(" ".join(str(i) for i in ids if isinstance(i, str)), cps > 0)'
}

# point LINE: the point a capture line shows.
point() { sed -n 's/.*\(from ts \|resume point \)\(Timestamp([0-9]*, [0-9]*)\|{"_data":"[0-9a-f]*"}\).*/\2/p' <<<"$1"; }

for kind in ferretdb java; do
    start $kind changelog || continue
    # desc POINT [MORE]: the capture line after "capture: ".
    if [ $kind == ferretdb ]; then
        desc() { echo "oplog (from ts $1${2:+; $2})"; }
        pre='oplog \(from ts Timestamp\([0-9]+, [0-9]+\)'
        dry='oplog \(from ts Timestamp\([0-9]+, [0-9]+\); a dry run records no start point\)'
    else
        desc() { echo "change streams (resume point $1, the event of remodel's own write: the server gives no tokens${2:+; $2})"; }
        pre='change streams \(resume point \{"_data":"[0-9a-f]+"\}, the event of'
        # The probe gives no token on java: the point comes of a sentinel.
        dry='change streams \(a dry run records no start point\)'
    fi
    insert before-run
    # Paused after its first batches, a write, then killed.
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/err1"
    "$REMODEL" online run "$P" --uri "$uri" --create-indexes --batch-size 10 --pause 100ms \
        >"$T/out" 2>"$T/err1" &
    pid=$!
    for ((i = 0; i < 100; i++)); do
        "$REMODEL" online status "$P" --uri "$uri" 2>/dev/null |
            awk '$1 == 1 && $5 > 0 { f = 1 } END { exit !f }' && break
        sleep 0.1
    done
    "$REMODEL" online pause -q "$P" --uri "$uri"
    for ((i = 0; i < 200; i++)); do grep -q 'paused (remodel online resume' "$T/err1" && break; sleep 0.1; done
    insert during-run
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    first=$(head -n 1 "$T/err1")
    p1=$(point "$first")
    if [[ $first =~ ^"remodel: capture: "$pre ]]; then
        expect_eq "$kind: run's first line: the mode and the point, recorded now" \
            "$first" "remodel: capture: $(desc "$p1" "recorded now, before the copy")"
    else fail "$kind: run's first line: the mode and the point, recorded now" "got [$first]"; fi
    run_rm online status "$P" --uri "$uri"
    expect_eq "$kind: status: the mode and the same point, exit 0" \
        "$rc:$(grep '^capture' "$T/out")" "0:capture: $(desc "$p1")"
    expect_eq "$kind: status: no history lost" "$(grep -c '^history' "$T/out")" "0"
    expect_eq "$kind: the log after the point: the write made during the run (paused after its first batch), not the one before; the run's checkpoints too" \
        "$(after_point)" "during-run True"
    # The killed run again: the point it recorded when it began.
    "$REMODEL" online resume -q "$P" --uri "$uri"
    run_rm online run "$P" --uri "$uri"
    # (Its very first line says it took the killed run's lease over.)
    expect_eq "$kind: the run again: exit 0, its capture line keeps the point" \
        "$rc:$(grep -m 1 '^remodel: capture:' "$T/err")" "0:remodel: capture: $(desc "$p1" "recorded when the plan's run began")"
    run_rm online run "$P" --uri "$uri" --restart
    p2=$(point "$(head -n 1 "$T/err")")
    if [ "$rc" == 0 ] && [ -n "$p2" ] && [ "$p2" != "$p1" ]; then
        expect_eq "$kind: --restart: a new point, recorded now" \
            "$(head -n 1 "$T/err")" "remodel: capture: $(desc "$p2" "recorded now, before the copy")"
    else
        fail "$kind: --restart: a new point, recorded now" "rc $rc, [$(head -n 1 "$T/err")] after [$p1]"
    fi
    run_rm online status "$P" --uri "$uri"
    expect_eq "$kind: status: --restart's point" "$(grep '^capture' "$T/out")" "capture: $(desc "$p2")"
    run_rm online run --dry-run "$P" --uri "$uri"
    got=$(head -n 1 "$T/err")
    if [ "$rc" == 0 ] && [[ $got =~ ^"remodel: capture: "$dry$ ]]; then
        pass "$kind: a dry run: the mode, no point recorded, exit 0"
    else fail "$kind: a dry run: the mode, no point recorded, exit 0" "rc $rc, got [$got]"; fi
    run_rm online status "$P" --uri "$uri"
    expect_eq "$kind: status after a dry run: --restart's point still" "$(grep '^capture' "$T/out")" \
        "capture: $(desc "$p2")"
    if [ $kind == ferretdb ]; then
        # 1.6 MB of writes through a 1 MiB oplog, trimmed every second.
        py 'c.scratch.fill.insert_many([{"pad": "x" * 2000, "i": i} for i in range(800)])'
        for ((i = 0; i < 30; i++)); do
            run_rm online status "$P" --uri "$uri"
            grep -q '^history lost' "$T/out" && break
            sleep 1
        done
        expect_eq "$kind: the oplog rolled over: status says history lost, in one line, exit 0" \
            "$rc:$(grep '^history' "$T/out")" "0:history lost since $p2: the next sync rescans everything"
    fi
done

for kind in ferretdb java; do
    start $kind || continue
    run_rm online run "$P" --uri "$uri" --create-indexes
    expect_eq "$kind, no change log: run's first line says none, exit 0" "$rc:$(head -n 1 "$T/err")" \
        "0:remodel: capture: none (a standalone server: sync, verify and finalize rescan every collection; the cost of finalize is said when this run ends)"
    last=$(tail -n 1 "$T/err")
    re="^remodel: capture: none: finalize re-reads about 4392 documents with writes stopped, about [0-9]+s at [0-9]+/s \(this run's rate\)$"
    if [[ $last =~ $re ]]; then pass "$kind, no change log: the run ends with finalize's cost (4 x 1098 documents)"
    else fail "$kind, no change log: the run ends with finalize's cost (4 x 1098 documents)" "got [$last]"; fi
    run_rm online status "$P" --uri "$uri"
    re="^capture: none \(a standalone server: sync, verify and finalize rescan every collection; finalize re-reads about 4392 documents with writes stopped, about [0-9]+s at [0-9]+/s\)$"
    got=$(grep '^capture' "$T/out")
    if [ "$rc" == 0 ] && [[ $got =~ $re ]] && ! grep -q '^history' "$T/out"; then
        pass "$kind, no change log: status says none, with the cost, exit 0"
    else fail "$kind, no change log: status says none, with the cost, exit 0" "rc $rc, got [$got]"; fi
    run_rm online run -q "$P" --uri "$uri"
    expect_eq "$kind, no change log: --quiet: nothing said" "$rc:$(cat "$T/err")" "0:"
    if [ $kind == java ]; then
        # On the server's side the run reads nothing itself: its checkpoints count.
        run_rm online run "$P" --uri "$uri" --server-side --restart
        last=$(tail -n 1 "$T/err")
        re="^remodel: capture: none: finalize re-reads about 4392 documents with writes stopped, about [0-9]+s at [0-9]+/s \(the rate its checkpoints show\)$"
        if [ "$rc" == 0 ] && [[ $last =~ $re ]]; then
            pass "$kind, no change log: --server-side: finalize's cost from the checkpoints"
        else fail "$kind, no change log: --server-side: finalize's cost from the checkpoints" "rc $rc, got [$last]"; fi
    fi
    # In place nothing is switched: the cost is each rescan's.
    run_rm online run "$T/backfill.json" --uri "$uri" --in-place --create-indexes
    expect_eq "$kind, no change log, in place: run's first line, exit 0" "$rc:$(head -n 1 "$T/err")" \
        "0:remodel: capture: none (a standalone server: sync, verify and finalize rescan every collection; the cost of a rescan is said when this run ends)"
    last=$(tail -n 1 "$T/err")
    re="^remodel: capture: none: each sync and verify re-reads about 1000 documents, about [0-9]+s at [0-9]+/s \(this run's rate\)$"
    if [[ $last =~ $re ]]; then pass "$kind, no change log, in place: the run ends with a rescan's cost"
    else fail "$kind, no change log, in place: the run ends with a rescan's cost" "got [$last]"; fi
done
