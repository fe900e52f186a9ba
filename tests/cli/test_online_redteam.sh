#!/usr/bin/env bash
# What a red-team pass broke in the online program (issue 50 items 3, 5
# and 6), on both servers:
#   1. names that drive the terminal: a collection named with ESC
#      sequences (clear the screen, set the window's title), a newline and
#      bidirectional controls, a lease holder and a last error the same:
#      status prints no control byte and no reordering character (shown
#      \x1b, \x0a, \u202e), one table row; status --json is valid JSON
#      holding the name as it is (shell-ext/cmd/online_status.c,
#      common/cli/cli_text.c);
#   2. state that lies is not believed (shell-ext/state/
#      online_partition_state.c, shell-ext/cmd/online_workers.c): after a
#      run of four partitions, with the pass's checkpoint marked not done,
#      a gap between two partitions, a partition's checkpoint past its
#      range's end, and a partitions entry that is not a document are
#      refused naming the plan, step and partition (exit 1, not 0 with
#      parents unwritten, nor 134); status --json prints JSON all the
#      same; a running partition marked done is read on from its
#      checkpoint (every result written);
#   3. a lease epoch of 2^63-1 or below 0 is refused naming the way out
#      (run --restart), which sets it back (shell-ext/state/online_lease.c);
#   4. a killed run's spill file in --tmp is removed by the next online
#      run (rm_tmppath_sweep_for, as the offline commands do).
#   REMODEL=build/remodel bash tests/cli/test_online_redteam.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
N=20 # parents of each type

# mutate PLAN CODE: CODE run with P the plan's id (c the client), then
# the pass's own checkpoint marked not done, so that run reads the
# partitions again.
mutate() {
    py "P = '$(pid "$1")'
$2
c.remodel.checkpoints.update_many({'plan': P}, {'\$set': {'done': False}})"
}
# results DB: the documents in DB's side-by-side result of parents.
results() { py "print(c['$1'][[n for n in c['$1'].list_collection_names() if n.startswith('parents_remodel_')][0]].count_documents({}))"; }
setp() { echo "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"$2.parents\", \"fields\": {\"done\": true}}}]}" >"$T/plans/$1.json"; }
# fresh NAME DB: DB's parents made again, plan NAME run over them in four
# partitions from the start: exit 0.
fresh() {
    n=$(python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" "$2" $N)
    setp "$1" "$2"
    online run "$1" -q --partitions 4 --restart
}
# json_ok: standard output is one JSON document.
json_ok() { python3 -c 'import json, sys; json.load(sys.stdin)' <"$T/out" 2>/dev/null && echo valid; }

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue

    # 1. Names that drive the terminal.
    py "c.drop_database('rt1')
name = 'p\x1b[2J\x1b]0;pwn\x07\n\u202eevil\u2066x\u2028y'
c.rt1[name].insert_many([{'_id': i} for i in range(5)])
json.dump({'remodel': 1, 'steps': [{'set': {'in': 'rt1.' + name, 'fields': {'done': True}}}]},
          open(sys.argv[2], 'w'))" "$T/plans/hostile.json"
    online run hostile -q
    expect_eq "$kind: a collection named with ESC, a newline and bidi controls: run exit 0" "$rc" 0
    py "import datetime
P = '$(pid hostile)'
c.remodel.plans.update_one({'_id': P}, {'\$set': {'error': 'boom\x1b[2J\nline\u202erev'}})
c.remodel.leases.update_one({'_id': P}, {'\$set': {'owner': 'h\x1b]0;t\x07:1:2', 'expires': datetime.datetime(2100, 1, 1)}})"
    online status hostile
    expect_eq "$kind: ... status: exit 0, no ESC, BEL or reordering character in what it prints" \
        "$rc:$(LC_ALL=C grep -c $'\x1b\|\x07\|\xe2\x80[\xa8-\xae]\|\xe2\x81[\xa6-\xa9]' "$T/out")" "0:0"
    expect_eq "$kind: ... the table: a header and one row, the name escaped in it" \
        "$(sed -n '2p' "$T/out" | grep -c '^1 .*rt1\.p\\x1b\[2J\\x1b\]0;pwn\\x07\\x0a\\u202eevil\\u2066x\\u2028y  *done')" 1
    expect_eq "$kind: ... the lease's holder and the last error escaped" \
        "$(grep -c '^lease: held by h\\x1b\]0;t\\x07:1:2 (epoch' "$T/out"):$(grep -c '^last error: boom\\x1b\[2J\\x0aline\\u202erev$' "$T/out")" "1:1"
    online status hostile --json
    expect_eq "$kind: ... status --json: valid JSON, the name, holder and error as they are" \
        "$rc:$(python3 -c 'import json, sys; d = json.load(sys.stdin)
print(d["partitions"][0]["ns"] == "rt1.p\x1b[2J\x1b]0;pwn\x07\n\u202eevil\u2066x\u2028y",
      d["lease"]["holder"] == "h\x1b]0;t\x07:1:2", d["error"] == "boom\x1b[2J\nline\u202erev")' <"$T/out")" \
        "0:True True True"
    py "c.remodel.leases.update_one({'_id': '$(pid hostile)'}, {'\$set': {'owner': ''}})"

    # 2. State that lies. A gap between partitions 2 and 3.
    fresh lies rt2
    expect_eq "$kind: four partitions, run: exit 0, every result" "$rc:$(results rt2)" "0:$n"
    mutate lies "c.remodel.plans.update_one({'_id': P}, {'\$set': {'partitions.1.2.lo': {'after': 6}}})"
    online run lies
    expect_eq "$kind: a gap between partitions 2 and 3: refused, naming plan, step, partition" \
        "$rc:$(grep -c "plan lies.json, step 1: its partitions in remodel.plans (partitions.1) are not what a run records: partition 3 of 4 does not begin where partition 2 ends.*remodel online run .*lies.json --restart" "$T/err")" "1:1"
    online status lies --json
    expect_eq "$kind: ... status --json: exit 1, JSON with the error" \
        "$rc:$(json_ok):$(grep -c '"unreadable":true,"error":".*partition 3 of 4 does not begin' "$T/out")" "1:valid:1"

    # A partition's checkpoint past its range's end (partition 2 ends at 4).
    fresh lies rt2
    mutate lies "c.remodel.partitions.update_one({'_id': P + ':1#1'}, {'\$set': {'last': 100, 'done': False, 'state': 'running'}})"
    online run lies
    expect_eq "$kind: a checkpoint past its range's end: refused, naming the partition" \
        "$rc:$(grep -c 'plan lies.json, step 1, partition 2 of 4: its checkpoint in remodel.partitions lies outside its range' "$T/err")" "1:1"

    # A running partition marked done, its results not written: read on.
    fresh lies rt2
    mutate lies "c.remodel.partitions.update_one({'_id': P + ':1#1'}, {'\$set': {'last': 1, 'done': True, 'state': 'done'}})
t = [x for x in c.rt2.list_collection_names() if x.startswith('parents_remodel_')][0]
c.rt2[t].delete_many({'_id': {'\$gt': 1, '\$lte': 4}})"
    online run lies
    expect_eq "$kind: a running partition marked done: read on from its checkpoint, every result" \
        "$rc:$(grep -c 'plan lies.json, step 1, partition 2 of 4: marked done, but its range holds _ids after its checkpoint' "$T/err"):$(results rt2)" "0:1:$n"

    # A partitions entry that is not a document: an error, not an abort.
    fresh lies rt2
    mutate lies "c.remodel.plans.update_one({'_id': P}, {'\$set': {'partitions.1': [5, 6]}})"
    online run lies
    expect_eq "$kind: partitions.1 holding numbers: run refuses (exit 1, not 134)" \
        "$rc:$(grep -c 'partition 1 of 2 is not a document' "$T/err")" "1:1"
    online status lies --json
    expect_eq "$kind: ... status --json: exit 1, valid JSON" "$rc:$(json_ok)" "1:valid"
    online status lies
    expect_eq "$kind: ... status: exit 1, the error said" \
        "$rc:$(grep -c 'partition 1 of 2 is not a document' "$T/err")" "1:1"

    # 3. An impossible lease epoch, then --restart.
    for e in 9223372036854775807 -5; do
        fresh lies rt2
        py "import bson
P = '$(pid lies)'
c.remodel.leases.update_one({'_id': P}, {'\$set': {'epoch': bson.Int64($e)}})
c.remodel.fences.insert_one({'_id': P + '#bad', 'plan': P, 'epoch': bson.Int64($e)})"
        online run lies
        expect_eq "$kind: lease epoch $e: refused, naming run --restart" \
            "$rc:$(grep -c "plan lies.json: the lease's epoch $e (in remodel.leases) is impossible.*remodel online run .*lies.json --restart" "$T/err")" "1:1"
        online run lies --restart
        expect_eq "$kind: ... run --restart sets it back: exit 0, and the next run too" \
            "$rc:$(grep -c "the lease's impossible epoch $e set back" "$T/err")" "0:1"
        online run lies
        expect_eq "$kind: ... the next run: exit 0" "$rc" 0
    done

    # 4. A killed run's spill file in --tmp.
    mkdir -p "$T/tmp"
    sh -c 'exit 0' &
    dead=$!
    wait $dead
    : >"$T/tmp/.remodel-store.remodel-$dead-1"
    fresh lies rt2
    online run lies --restart --tmp "$T/tmp"
    expect_eq "$kind: a killed run's spill file in --tmp: removed by the next online run, said" \
        "$rc:$(ls -A "$T/tmp" | wc -l):$(grep -c "removed 1 stale temporary file(s) of killed remodel runs from $T/tmp" "$T/err")" "0:0:1"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
exit 0
