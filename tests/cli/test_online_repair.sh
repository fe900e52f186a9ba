#!/usr/bin/env bash
# A lease that cannot be taken, and the way out (issue 50 item 5;
# shell-ext/state/online_lease.c, online_lease_rule.c; docs/bad-input.md).
# On mongo-java-server (online_kind: the lease's rules are remodel's;
# REMODEL_TEST_BOTH=1 runs this suite on both), after an in-place run, the plan's lease document in
# remodel.leases is changed as a damaged or hand-edited state database
# would have it: an epoch of 2^63-1 or below 0 (with a fence of it), an
# epoch that is no number, a holder (owner) that is no string, an expiry
# that is no date. Each time:
#   - run and rollback refuse it (exit 1) with one error naming the field
#     and the ways out, rollback --forget and run --restart;
#   - rollback --forget sets the lease back and forgets the plan, its
#     before-record too (exit 0, said), leaving a lease of the types a run writes;
#   - the next run takes the lease and runs the plan (exit 0).
# And what a killed run leaves in --tmp (issue 50 item 6): a spill file of
# a process that is gone is removed by a run that joins (run --join takes
# its partitions' leases, never the plan's, which the run it joins holds),
# as by every command taking the plan's lease (test_online_redteam.sh).
#   REMODEL=build/remodel bash tests/cli/test_online_repair.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "rp.parents", "fields": {"done": true}}}]}' >"$T/plans/fix.json"

# fresh: rp.parents made again and plan fix run over them in place, from
# the start.
fresh() {
    py "c.drop_database('rp')
c.rp.parents.insert_many([{'_id': i, 'n': i} for i in range(20)])"
    online run fix -q --in-place --restart
    [ "$rc" == 0 ] || fail "$kind: the in-place run before the mutation" "$(cat "$T/err")"
}
# lease_types: the lease document's fields' types, as pymongo names them.
lease_types() {
    py "d = c.remodel.leases.find_one({'_id': '$(pid fix)'})
print(type(d['owner']).__name__, isinstance(d['epoch'], int), type(d['expires']).__name__)"
}

# befores: how many before-records (what the run found before it wrote, for
# --carry-writes) the state database holds for plan fix.
befores() {
    py "print(c.remodel.before.count_documents({'_id': '$(pid fix)'}))"
}

# field name, the mutation ($set of the lease document), what the error says of it
mutations=(
    "epoch|{'epoch': bson.Int64(2**63 - 1)}|the lease's epoch 9223372036854775807 (in remodel.leases) is impossible"
    "epoch|{'epoch': bson.Int64(-5)}|the lease's epoch -5 (in remodel.leases) is impossible"
    "epoch|{'epoch': 'seven'}|the lease's epoch (in remodel.leases) is a string, not a number"
    "owner|{'owner': 5}|the lease's owner (in remodel.leases) is a 32-bit integer, not a string naming the holder"
    "expires|{'expires': 'tomorrow'}|the lease's expires (in remodel.leases) is a string, not a date"
)

for kind in $(online_kind java); do
    online_start $kind "$T/$kind" || continue
    for m in "${mutations[@]}"; do
        IFS='|' read -r field set said <<<"$m"
        fresh
        py "import bson
P = '$(pid fix)'
c.remodel.leases.update_one({'_id': P}, {'\$set': $set})
e = c.remodel.leases.find_one({'_id': P})['epoch']
if isinstance(e, int) and (e < 0 or e > 2**53):
    c.remodel.fences.insert_one({'_id': P + '#bad', 'plan': P, 'epoch': bson.Int64(e)})"
        online run fix
        expect_eq "$kind: $set: run refuses it (exit 1), one error naming $field and the ways out" \
            "$rc:$(grep -c '^remodel: error: ' "$T/err"):$(grep -cF "plan fix.json: $said" "$T/err"):$(grep -c "remodel online run .*fix.json --restart or remodel online rollback .*fix.json --forget (a plan run in place) sets the lease back$" "$T/err")" \
            "1:1:1:1"
        online rollback fix
        expect_eq "$kind: ... rollback without --forget refuses it too (exit 1); the run's before-record kept" \
            "$rc:$(grep -cF "plan fix.json: $said" "$T/err"):$(befores)" "1:1:1"
        online rollback fix --forget
        expect_eq "$kind: ... rollback --forget: exit 0, the lease set back, the plan forgotten" \
            "$rc:$(grep -c "remodel: plan fix.json: the lease's .* set back to [0-9]*, the newest possible one (--forget)" "$T/err"):$(py "print(c.remodel.plans.count_documents({'_id': '$(pid fix)'}))"):$(befores)" \
            "0:1:0:0"
        expect_eq "$kind: ... the lease left holds the types a run writes" "$(lease_types)" "str True datetime"
        online run fix -q --in-place
        expect_eq "$kind: ... the next run takes the lease and runs the plan (exit 0)" \
            "$rc:$(cat "$T/err"):$(py "print(c.rp.parents.count_documents({'done': True}))")" "0::20"
    done

    # A killed run's spill file in the --tmp of a run that joins.
    py "c.drop_database('rj')
c.rj.parents.insert_many([{'_id': i} for i in range(40)])"
    echo '{"remodel": 1, "steps": [{"set": {"in": "rj.parents", "fields": {"done": true}}}]}' >"$T/plans/join.json"
    rm -rf "$T/tmp" && mkdir -p "$T/tmp"
    sh -c 'exit 0' &
    dead=$!
    wait $dead
    : >"$T/tmp/.remodel-store.remodel-$dead-1"
    rm -f "$T/a.rc"
    ( "$REMODEL" online run "$T/plans/join.json" --uri "$uri" --partitions 8 --batch-size 5 \
        --pause 500ms -q >/dev/null 2>"$T/a.err"; echo $? >"$T/a.rc" ) &
    # A set step is one update on the server, with no partitions to wait
    # for (a wait for one done ran to its 60 s deadline): the join comes
    # once that run has ended, and still clears the dead process's file.
    wait
    online run join --join --batch-size 5 --tmp "$T/tmp"
    expect_eq "$kind: a killed run's spill file in --tmp: removed by a run that joins, said" \
        "$rc:$(cat "$T/a.rc"):$(ls -A "$T/tmp" | wc -l):$(grep -c "removed 1 stale temporary file(s) of killed remodel runs from $T/tmp" "$T/err"):$(py "print(c.rj['$(target rj parents)'].count_documents({'done': True}))")" \
        "0:0:0:1:40"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
exit 0
