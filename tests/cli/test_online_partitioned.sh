#!/usr/bin/env bash
# remodel online run, partition by partition (issue 37 item 1;
# shell-ext/state/online_partition_state.c): parents whose _ids are of
# seven BSON types (int, long, double, string, ObjectId, date, binary),
# their children embedded, on both servers:
#   1. --partitions 8: eight partitions recorded in the plan's record, each
#      with its checkpoint; their counts add up to every parent once (none
#      skipped or read twice), and the results are remodel run's, byte for
#      byte; status lists the eight, done; the sample read from the
#      _ids, as neither server's $sample is a random cursor;
#   2. the same killed with SIGKILL once two partitions are done, the
#      parents' distribution then changed, run again: the partitions are
#      the recorded ones (not recomputed), the done ones are not read
#      again, and the results are remodel run's, byte for byte;
#   3. in place, --partitions 3: at least three (one per type bracket the
#      sample saw: numbers are one), all done, as remodel run;
#   4. without --partitions, a small collection is one partition: the
#      pass's own checkpoint, as before partitions, nothing in
#      <state-db>.partitions.
#   REMODEL=build/remodel bash tests/cli/test_online_partitioned.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
N=30 # parents of each type
mkdir -p "$T/plans"

# parts PLAN: the plan's recorded partitions of step 1, as JSON.
parts() { py "print(json.dumps(c.remodel.plans.find_one({'_id': '$(pid "$1")'})['partitions']['1'], default=str, sort_keys=True))"; }
# counts PLAN: partitions done, and the documents they read in all.
counts() {
    py "d = list(c.remodel.partitions.find({'plan': '$(pid "$1")', 'pass': 1}))
print('%d done, %d read' % (sum(x['state'] == 'done' for x in d), sum(x['seen'] for x in d)))"
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue

    # 1. Eight partitions, one worker.
    n=$(pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" p1 $N)
    kids_plan eight p1
    offline_run eight p1
    REMODEL_ONLINE_TRACE=1 online run eight --partitions 8 --batch-size 10 --create-indexes
    expect_eq "$kind: run --partitions 8: exit 0, says so" \
        "$rc:$(grep -c 'step 1 (embed) p1.parents: 8 partitions' "$T/err")" "0:1"
    # Neither server's $sample is a random cursor (serverStatus names no
    # such engine): the sample is read from the _ids, not asked of a
    # $sample that would order the collection at random. (The other read
    # of the _ids is the preflight's: the embed's references, _id here,
    # until one finds a partner.)
    expect_eq "$kind: ... sampled from the _ids, no \$sample" \
        "$(grep -c '"\$sample"' "$T/err"):$(grep -c '"find" : "parents", "filter" : {  }, "projection" : { "_id" : 1 }' "$T/err")" "0:2"
    expect_eq "$kind: ... eight partitions recorded in the plan's record" \
        "$(py "print(len(c.remodel.plans.find_one({'_id': '$(pid eight)'})['partitions']['1']))")" 8
    expect_eq "$kind: ... each with its checkpoint, done, every parent read once" \
        "$(counts eight)" "8 done, $n read"
    to=$(target p1 parents)
    online_same "$kind: ... as remodel run, byte for byte" "$T/eight.archive" "p1.parents=$to"
    online status eight
    expect_eq "$kind: ... status lists the eight partitions, done" \
        "$(grep -c '^1 .* of 8  done' "$T/out")" 8

    # 2. Killed once two partitions are done, the data's spread changed,
    # run again.
    pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" p2 $N >/dev/null
    kids_plan killed p2
    offline_run killed p2
    rm -f "$T/pid"
    ( "$REMODEL" online run -q "$T/plans/killed.json" --uri "$uri" --partitions 8 --batch-size 5 \
        --pause 30ms --create-indexes >/dev/null 2>"$T/killed.err" & echo $! >"$T/pid"; wait $! ) 2>/dev/null &
    outer=$!
    while [ ! -s "$T/pid" ]; do sleep 0.01; done
    pyrun "$ROOT/tests/peers/partitions_done.py" "$uri" "$(pid killed)" 2 "$(cat "$T/pid")"
    wait $outer
    before=$(parts killed)
    left=$(py "print(8 - c.remodel.partitions.count_documents({'plan': '$(pid killed)', 'pass': 1, 'state': 'done'}))")
    seen=$(py "print(sum(x['seen'] for x in c.remodel.partitions.find({'plan': '$(pid killed)', 'pass': 1})))")
    expect_eq "$kind: killed with SIGKILL, partitions left to do" "$((left >= 1 && left <= 6))" 1
    # A recompute would split at other values: the strings now outnumber the rest.
    py "c.p2.others.insert_many([{'_id': 's%05d' % i} for i in range(2000)])"
    py "c.remodel.leases.update_many({}, {'\$set': {'expires': datetime.datetime(2000, 1, 1)}})"
    online run killed --partitions 3 --batch-size 5 --log-format json
    expect_eq "$kind: ... run again (--partitions 3 given): exit 0" "$rc" 0
    expect_eq "$kind: ... the recorded partitions, not recomputed" "$(parts killed)" "$before"
    expect_eq "$kind: ... every parent read once in all" "$(counts killed)" "8 done, $n read"
    expect_eq "$kind: ... what the killed run read is not read again ($seen of $n)" \
        "$(sed -n '/"pass":1,/s/.*"batch":\([0-9]*\),.*/\1/p' "$T/err" | awk '{ s += $1 } END { print s + 0 }')" \
        "$((n - seen))"
    to=$(target p2 parents)
    online_same "$kind: ... as remodel run, byte for byte" "$T/killed.archive" "p2.parents=$to"
    online verify killed -q
    expect_eq "$kind: ... verify passes" "$rc:$(cat "$T/err")" "0:"

    # 3. In place, three partitions.
    pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" p3 $N >/dev/null
    echo '{"remodel": 1, "steps": [{"set": {"in": "p3.parents", "fields": {"done": true}}}]}' >"$T/plans/inplace.json"
    offline_run inplace p3
    online run inplace --in-place --partitions 3 --batch-size 9
    k=$(py "print(len(c.remodel.plans.find_one({'_id': '$(pid inplace)'})['partitions']['1']))")
    expect_eq "$kind: in place, --partitions 3: exit 0, at least three, all done" \
        "$rc:$((k >= 3)):$(counts inplace)" "0:1:$k done, $n read"
    online_same "$kind: ... as remodel run, byte for byte" "$T/inplace.archive" "p3.parents=parents"

    # 4. A small collection without --partitions: one, as before.
    pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" p4 5 >/dev/null
    kids_plan small p4
    online run small --create-indexes
    expect_eq "$kind: a small collection: one partition, the pass's own checkpoint" \
        "$rc:$(grep -c partitions "$T/err"):$(py "print(len(c.remodel.plans.find_one({'_id': '$(pid small)'})['partitions']['1']))"):$(py "print(c.remodel.partitions.count_documents({'plan': '$(pid small)'}))"):$(py "print(c.remodel.checkpoints.find_one({'plan': '$(pid small)'})['done'])")" \
        "0:0:1:0:True"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
exit 0
