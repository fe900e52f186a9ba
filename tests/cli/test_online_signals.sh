#!/usr/bin/env bash
# remodel online: stopping a run (issue 25, item 3), on mongo-java-server
# (online_kind: test_online_smoke.sh runs each command on both servers;
# REMODEL_TEST_BOTH=1 runs this suite on both).
#  - SIGINT, then SIGTERM, during a throttled run (the sample's
#    embed-tasks plan, --batch-size 50 --pause 200ms), once it has saved a
#    checkpoint: exit 130 and 143, one line saying where it stopped ("the
#    checkpoint saved", "lease released"), the checkpoint there (its count
#    the line's, not done), the lease's holder unset; the immediate rerun
#    starts at once (no "is being run by"), goes on from the checkpoint,
#    completes, and the results are remodel run's byte for byte.
#  - kill -9 then an immediate rerun: the dead holder on this host is taken
#    over at once (a line says so; done well within 15 s, not after the
#    30 s lease), the same results.
#  - A sync stopped by SIGTERM: exit 143, the lease released, a sync after
#    it completes.
#   REMODEL=build/remodel bash tests/cli/test_online_signals.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap 'for p in $(jobs -p); do kill -9 $p 2>/dev/null; done
"$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"' EXIT
export LC_ALL=C

plan=$T/embed-tasks.json
cp "$S/../plans/embed-tasks.json" "$plan"
ID=$(plan_id "$plan")
"$REMODEL" run -q "$plan" --from "$S" --to "$T/offline.archive"

# restore KIND: a fresh server of that kind holding the sample's crm.*, its
# join index made; URI in $uri.
restore() {
    [ "$1" == external ] || { "$SERVER" stop "$T/$1" >/dev/null 2>&1; rm -rf "$T/$1"; }
    online_start "$1" "$T/$1" || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet &&
        q 'c.crm.tasks.create_index("owner")' >/dev/null
}
# q PYTHON [ARG...]: runs PYTHON with c, a client of $uri, the ARGs from
# sys.argv[2]; prints what it prints.
q() { local py=$1; shift; python3 -c "import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
$py" "$uri" "$@"; }
# checkpoint_wait PID: until the run PID has saved a checkpoint (20 s at most).
checkpoint_wait() {
    for _ in $(seq 200); do
        [ "$(q 'print(c.remodel.checkpoints.count_documents({"seen": {"$gt": 0}}))')" -gt 0 ] && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# what the plan's checkpoints say: "seen/done" of each, sorted by _id.
checkpoints() { q 'print(" ".join("%s/%s" % (d.get("seen"), d.get("done")) for d in c.remodel.checkpoints.find({}).sort("_id", 1)))'; }
lease_owner() { q 'd = c.remodel.leases.find_one({"_id": sys.argv[2]}); print(repr(d and d.get("owner")))' "$ID"; }
same_results() {
    online_same "$1" "$T/offline.archive" "crm.people=people_remodel_${ID}_1" \
        "crm.tasks=tasks_remodel_${ID}_1"
}

for kind in $(online_kind java); do
    for sig in INT TERM; do
        want=$([ $sig == INT ] && echo 130 || echo 143)
        restore $kind || { fail "$kind: restore"; continue 2; }
        # Emptied first: the job truncates it itself, perhaps after the first look.
        : >"$T/a.err"
        "$REMODEL" online run "$plan" --uri "$uri" --batch-size 50 --pause 200ms \
            >/dev/null 2>"$T/a.err" &
        a=$!
        checkpoint_wait $a || fail "$kind: SIG$sig: the run saves a checkpoint" "$(cat "$T/a.err")"
        kill -$sig $a
        wait $a; rc=$?
        expect_eq "$kind: SIG$sig during a run: exit $want" "$rc" "$want"
        line=$(grep "stopped by" "$T/a.err")
        if [[ $line =~ ^remodel:\ run:\ plan\ embed-tasks\.json:\ stopped\ by\ SIG$sig\ after\ step\ 1\ \(embed\)\ crm\.(people|tasks):\ ([0-9]+)\ read,\ the\ checkpoint\ saved\;\ lease\ released\;\ run\ it\ again\ to\ go\ on\ from\ there$ ]] &&
            [ "$(grep -c . "$T/a.err")" -le 4 ] && ! grep -q "error" "$T/a.err"; then
            pass "$kind: SIG$sig: one line says where it stopped, the checkpoint saved, the lease released"
            read=${BASH_REMATCH[2]}
        else
            fail "$kind: SIG$sig: one line says where it stopped, the checkpoint saved, the lease released" \
                "$(cat "$T/a.err")"
            read=?
        fi
        cps=$(checkpoints)
        if [[ " $cps " == *" $read/False "* ]]; then
            pass "$kind: SIG$sig: the checkpoint is there, at the count said ($cps)"
        else
            fail "$kind: SIG$sig: the checkpoint is there, at the count said" "read $read, checkpoints $cps"
        fi
        expect_eq "$kind: SIG$sig: the lease's holder is unset" "$(lease_owner)" "''"
        s0=$(date +%s%N)
        run_rm online run "$plan" --uri "$uri"
        ms=$((($(date +%s%N) - s0) / 1000000))
        expect_eq "$kind: SIG$sig: the immediate rerun completes (exit 0), not refused" \
            "$rc:$(grep -c 'is being run by\|taken over' "$T/err")" "0:0"
        expect_eq "$kind: SIG$sig: ... in well under the lease's 30 s (${ms} ms)" "$((ms < 15000))" 1
        expect_message "$kind: SIG$sig: ... going on from the checkpoint" \
            "remodel: step 1 (embed) crm.tasks: 1000 read, 16 written"
        same_results "$kind: SIG$sig: stopped and rerun: remodel run's results, byte for byte"
    done

    # kill -9: the holder is gone; the next run on this host takes over at once.
    restore $kind || { fail "$kind: restore"; continue; }
    "$REMODEL" online run "$plan" --uri "$uri" --batch-size 50 --pause 200ms >/dev/null 2>&1 &
    a=$!
    checkpoint_wait $a || fail "$kind: kill -9: the run saves a checkpoint"
    kill -9 $a; wait $a 2>/dev/null
    expect_eq "$kind: kill -9: the lease still names the dead run" \
        "$(lease_owner | grep -c ":$a:")" 1
    s0=$(date +%s%N)
    run_rm online run "$plan" --uri "$uri"
    ms=$((($(date +%s%N) - s0) / 1000000))
    expect_eq "$kind: kill -9: the immediate rerun completes (exit 0)" "$rc" 0
    expect_eq "$kind: kill -9: ... within 15 s, not after the 30 s lease (${ms} ms)" "$((ms < 15000))" 1
    expect_message "$kind: kill -9: ... saying it took the gone holder's lease over" \
        "remodel: plan embed-tasks.json: lease taken over at once from $(hostname):$a:" \
        "a process of this host that is gone (epoch 2, after its 1)"
    same_results "$kind: kill -9 and rerun: remodel run's results, byte for byte"

    # A sync, stopped: nothing to keep, the lease released, the next one completes.
    q 'c.crm.tasks.update_many({}, {"$set": {"priority": 9}})' >/dev/null
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/a.err"
    "$REMODEL" online sync "$plan" --uri "$uri" --batch-size 50 --pause 200ms >/dev/null 2>"$T/a.err" &
    a=$!
    sleep 1
    kill -TERM $a
    wait $a; rc=$?
    expect_eq "$kind: SIGTERM during a sync: exit 143, one line" \
        "$rc:$(grep -c '^remodel: sync: plan embed-tasks.json: stopped by SIGTERM after step 1 (embed) crm.\(people\|tasks\): [0-9]* read, nothing kept (it starts over); lease released; sync again when ready$' "$T/a.err")" "143:1"
    expect_eq "$kind: SIGTERM during a sync: the lease's holder is unset" "$(lease_owner)" "''"
    run_rm online sync "$plan" --uri "$uri"
    expect_eq "$kind: the next sync completes" "$rc" 0
    run_rm online verify "$plan" --uri "$uri"
    expect_eq "$kind: ... and verify finds every result as the sources make it" "$rc" 0
done
