#!/usr/bin/env bash
# remodel online run --workers N and --join (issue 37 items 2 and 5;
# shell-ext/cmd/online_workers.c): parents whose _ids are of seven BSON
# types (int, long, double, string, ObjectId, date, binary), their
# children embedded, eight partitions, on both servers:
#   1. two processes with two workers each (the second --join): both exit
#      0, each read partitions, every parent read once, the results
#      remodel run's byte for byte;
#   2. three workers in one process: the partitions read by more than one
#      worker, none skipped or read twice, as remodel run;
#      status --json lists the eight partitions, done;
#   (1 embeds the children, the others set a field);
#   3. the first process killed with SIGKILL mid-run, the one that joined
#      takes its partitions and the plan's lease over at once (a process
#      of this host that is gone) and finishes: as remodel run, verify
#      passes;
#   4. a process stopped with SIGSTOP (leases of 2 s), another joins: it
#      waits for the stopped one's leases to lapse, takes them and
#      finishes; the stopped one continued writes nothing (no checkpoint
#      changes) and exits non-zero, saying it lost its lease.
#   REMODEL=build/remodel bash tests/cli/test_online_workers.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
# REMODEL_ONLINE_LEASE_MS is a hook of the tests' build only.
use_faulty || exit 1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
N=40 # parents of each type (60 for the three workers)
mkdir -p "$T/plans"

# setp NAME DB: a field set on the parents.
setp() { echo "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"$2.parents\", \"fields\": {\"done\": true}}}]}" >"$T/plans/$1.json"; }
# counts PLAN: the first pass's partitions done of those recorded, the
# documents they read.
counts() {
    py "d = list(c.remodel.partitions.find({'plan': '$(pid "$1")', 'pass': 1}))
k = len(c.remodel.plans.find_one({'_id': '$(pid "$1")'})['partitions']['1'])
print('%d of %d done, %d read' % (sum(x['state'] == 'done' for x in d), k, sum(x['seen'] for x in d)))"
}
# owners PLAN FIELD: the distinct processes (FIELD 2: pid) or workers
# (FIELD 4) that read the first pass's partitions.
owners() {
    py "print(len({x['owner'].split(':')[$2] for x in c.remodel.partitions.find({'plan': '$(pid "$1")', 'pass': 1})}))"
}
# state PLAN: the plan's checkpoints and partitions, as they are.
state() {
    py "print(json.dumps([list(c.remodel.partitions.find({'plan': '$(pid "$1")'}, sort=[('_id', 1)])), list(c.remodel.checkpoints.find({'plan': '$(pid "$1")'}, sort=[('_id', 1)]))], default=str))"
}
# bg NAME ARGS...: remodel online ARGS in the background (reaped quietly),
# its pid in $bgpid, stderr in $T/NAME.err, its exit status in $T/NAME.rc.
bg() {
    local name=$1
    shift
    rm -f "$T/pid" "$T/$name.rc"
    ( "$REMODEL" online "$@" >/dev/null 2>"$T/$name.err" & echo $! >"$T/pid"; wait $!; echo $? >"$T/$name.rc" ) 2>/dev/null &
    while [ ! -s "$T/pid" ]; do sleep 0.01; done
    bgpid=$(cat "$T/pid")
}
waitrc() { while [ ! -s "$T/$1.rc" ]; do sleep 0.05; done; cat "$T/$1.rc"; }
# expect_rcs NAME GOT WANT BG...: as expect_eq, a failure showing the last
# lines each background process BG wrote to stderr (a crash's message).
expect_rcs() {
    local name=$1 got=$2 want=$3 b tails=""
    shift 3
    for b in "$@"; do tails="$tails; $b: $(tail -n 3 "$T/$b.err" | tr '\n' ' ')"; done
    if [ "$got" == "$want" ]; then pass "$name"; else fail "$name" "got [$got] want [$want]$tails"; fi
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue

    # 1. Two processes, two workers each.
    n=$(pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" w1 $N)
    kids_plan two w1
    offline_run two w1
    bg a run "$T/plans/two.json" --uri "$uri" --partitions 8 --workers 2 --batch-size 5 \
        --pause 100ms --create-indexes
    pyrun "$ROOT/tests/peers/partitions_done.py" "$uri" "$(pid two)" 1
    bg b run "$T/plans/two.json" --uri "$uri" --join --workers 2 --batch-size 5 --pause 100ms
    expect_rcs "$kind: two processes of two workers (one --join): both exit 0" \
        "$(waitrc a):$(waitrc b)" "0:0" a b
    expect_eq "$kind: ... both read partitions, every parent once" \
        "$(owners two 1):$(counts two)" "2:8 of 8 done, $n read"
    online_same "$kind: ... as remodel run, byte for byte" "$T/two.archive" "w1.parents=$(target w1 parents)"

    # 2. Three workers in one process.
    n=$(pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" w2 60)
    setp three w2
    offline_run three w2
    online run three --partitions 8 --workers 3 --batch-size 10 --pause 20ms
    expect_eq "$kind: three workers: exit 0, eight partitions, several workers, every parent once" \
        "$rc:$(grep -c '8 partitions, 3 worker' "$T/err"):$(($(owners three 3) > 1)):$(counts three)" \
        "0:1:1:8 of 8 done, $n read"
    online_same "$kind: ... as remodel run, byte for byte" "$T/three.archive" "w2.parents=$(target w2 parents)"
    # status --json lists the recorded partitions, not the pass as one.
    online status three --json
    expect_eq "$kind: ... status --json: the eight partitions, each done, their reads every parent once" \
        "$rc:$(python3 -c 'import json, sys
p = [x for x in json.load(sys.stdin)["partitions"] if x["pass"] == 1]
print(len(p), sum(x["state"] == "done" for x in p), {x["of"] for x in p}, sum(x["done"] for x in p))' <"$T/out")" \
        "0:8 8 {8} $n"

    # 3. The first process killed with SIGKILL, the one that joined finishes.
    n=$(pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" w3 $N)
    setp killed w3
    offline_run killed w3
    bg a run "$T/plans/killed.json" --uri "$uri" --partitions 8 --workers 2 --batch-size 5 \
        --pause 100ms
    apid=$bgpid
    pyrun "$ROOT/tests/peers/partitions_done.py" "$uri" "$(pid killed)" 2
    bg b run "$T/plans/killed.json" --uri "$uri" --join --workers 2 --batch-size 5 --pause 100ms
    sleep 0.3
    kill -9 "$apid"
    expect_rcs "$kind: the first killed with SIGKILL mid-run, the other finishes: exit 0" \
        "$(waitrc b):$(counts killed)" "0:8 of 8 done, $n read" b
    expect_eq "$kind: ... it took the plan's lease over at once" \
        "$(grep -c 'plan killed.json: lease taken over at once' "$T/b.err")" 1
    online_same "$kind: ... as remodel run, byte for byte" "$T/killed.archive" "w3.parents=$(target w3 parents)"
    online verify killed -q
    expect_eq "$kind: ... verify passes" "$rc:$(cat "$T/err")" "0:"

    # 4. A process stopped past its leases; another joins and finishes.
    pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" w4 $N >/dev/null
    setp stopped w4
    offline_run stopped w4
    export REMODEL_ONLINE_LEASE_MS=2000
    bg a run "$T/plans/stopped.json" --uri "$uri" --partitions 8 --batch-size 5 --pause 60ms
    apid=$bgpid
    pyrun "$ROOT/tests/peers/partitions_done.py" "$uri" "$(pid stopped)" 1
    kill -STOP "$apid"
    bg b run "$T/plans/stopped.json" --uri "$uri" --join --workers 2 --batch-size 5
    expect_rcs "$kind: a process stopped (SIGSTOP), another joins: it finishes (exit 0)" \
        "$(waitrc b):$(counts stopped)" "0:8 of 8 done, $n read" b
    before=$(state stopped)
    kill -CONT "$apid"
    expect_eq "$kind: ... the stopped one, continued, exits non-zero, saying it lost its lease" \
        "$(waitrc a):$(grep -c 'stopping before writing anything more' "$T/a.err")" "1:1"
    expect_eq "$kind: ... and wrote no checkpoint" "$(state stopped)" "$before"
    online_same "$kind: ... as remodel run, byte for byte" "$T/stopped.archive" "w4.parents=$(target w4 parents)"
    unset REMODEL_ONLINE_LEASE_MS
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
exit 0
