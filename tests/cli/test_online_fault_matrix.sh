#!/usr/bin/env bash
# The fault layer's matrix (issue 53): every server call of `remodel
# online finalize` and of `rollback` cut by the fault layer
# (shell-ext/conn/online_fault.c) before it is sent (the server never sees
# it), after (the server applied it, the reply is lost), or the command
# killed at it. A small crm (people, tasks) and dumps/plans/embed-tasks.json.
#
# What runs where:
# - Every point, in-process, on the in-memory server (issue 60):
#   build/tests/remodel-fault-matrix (tests/mem/matrix/) runs finalize,
#   rollback, rollback --carry-writes (test_online_fault_carry.sh's plan
#   and writes) and finalize --to-uri (test_online_to_uri_kill.sh's) in
#   forked children through the online program's own main, each call
#   cut, cut after and killed, run --to-uri killed at each call, and
#   follow --to-uri killed, cut and cut after at each call of its round;
#   the switch suite's kill points (the state a kill leaves, then each
#   way out), the lease (asked while held, a holder stalled past it) and
#   partitions (a stretch of messages cut by a proxy, which each command
#   rides out within --retry-for, in one run, save at its first contact;
#   one at each of finalize's renames, its reply lost); about 2,400
#   points. It judges each state document by document against clean
#   runs, which it checks against the data, remodel run's offline output
#   and the application's writes carried back by hand.
# - A short replay on FerretDB and mongo-java-server here, for what only a
#   real server shows (its renames, its driver's reconnects, its change
#   log, a lease's timer), judged by the switch suite's checker
#   (tests/cli/test_online_switch.sh, check.py):
#   - counted first (REMODEL_ONLINE_FAULT=count): finalize switches,
#     rollback swaps back, each exit 0, the layer numbers their calls;
#   - finalize with a rename's reply lost, and rollback likewise: exit 0,
#     or the command again exits 0 (finalize: or says it was finalized
#     already); then the collections switched exactly once (remodel run's
#     documents byte for byte, the originals under their backup names, no
#     probe, no temporary), and rollback puts the originals back;
#   - a rename answered with a failure, a slow call; a lease renewal's
#     reply lost on FerretDB, one's read cut on mongo-java-server; on
#     FerretDB with its oplog, the syncs' state dropped after the switch.
# REMODEL_FAULT_MATRIX=full-real (make online-fault-matrix) adds a failure
# answered at every call in-process and run --to-uri's calls cut (--full),
# and runs every call, both cuts, each
# rename's reply lost, both lease points and the change log's on both
# real servers; =full runs the default part. REMODEL_FAULT_KINDS chooses the servers (mem: the
# replay on remodel-memsrv, reset between points by memSnapshot/
# memRestore); REMODEL_FAULT_ONLY replays one point (below); the
# in-process program replays one with --only (its --help).
#   REMODEL=build/remodel bash tests/cli/test_online_fault_matrix.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
# Every point in-process first: it needs no peer.
MATRIX=$(dirname "$REMODEL")/tests/remodel-fault-matrix
if [ -z "${REMODEL_FAULT_ONLY:-}" ] && [ -x "$MATRIX" ]; then
    mkdir -p "$T/inproc"
    # The campaign adds the layer's failure reply at every call (--full).
    full=()
    [ "${REMODEL_FAULT_MATRIX:-}" == full-real ] && full=(--full)
    "$MATRIX" --memsrv "$(dirname "$REMODEL")/tests/remodel-memsrv" --remodel "$REMODEL" \
        --plan "$ROOT/dumps/plans/embed-tasks.json" --tmp "$T/inproc" "${full[@]}" ||
        echo "# the in-process matrix failed (its FAIL lines above)" >&2
    rm -rf "$T/inproc"
elif [ -z "${REMODEL_FAULT_ONLY:-}" ]; then
    echo "# no $MATRIX (built with libmongoc): the in-process matrix skipped" >&2
fi
use_peers "peers" || exit 0
. "$ROOT/tests/cli/lib_mem.sh"
use_faulty || exit 1
FULL=0
case ${REMODEL_FAULT_MATRIX:-} in
    full-real) FULL=1 KINDS=${REMODEL_FAULT_KINDS:-$(online_kinds)} ;;
    *) KINDS=${REMODEL_FAULT_KINDS:-$(online_kinds)} ;;
esac
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java mem ferretdb-cl java-cl mem-cl; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms
t_lap=$SECONDS
lap() { echo "# $1: $((SECONDS - t_lap)) s" >&2; t_lap=$SECONDS; }

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
sed -n "/^cat >\"\$T\/check.py\" <<'PYEOF'\$/,/^PYEOF\$/p" "$ROOT/tests/cli/test_online_switch.sh" |
    sed '1d;$d' >"$T/check.py"
if ! grep -q '^uri, pid, orig_path, off_path, moves_s, drops_s, expect, phase = ' "$T/check.py"; then
    fail "the switch suite's checker" "check.py not found in tests/cli/test_online_switch.sh"
    exit 0
fi
MOVES="tasks=1,people=1"

# fill: crm and the state database dropped, then 8 people and 24 tasks
# (three each, one owner missing: an orphan), inserted in _id order.
fill() {
    python3 -c 'import pymongo, sys, os, datetime
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
c.drop_database("crm"); c.drop_database("remodel")
c.crm.people.insert_many([{"_id": i, "name": "p%d" % i, "phone": "555-%04d" % i} for i in range(1, 9)])
c.crm.tasks.insert_many([{"_id": 100 + t, "owner": 1 + t % 9, "title": "t%d" % t,
                          "due_date": datetime.datetime(2026, 1, 1 + (t * 7) % 28), "done": t % 2 == 0}
                         for t in range(24)])
os._exit(0)' "$uri"
}
# setup KIND: a fresh server, filled, its dump (the originals) and remodel
# run's result of the plan on it.
setup() {
    "$SERVER" stop "$T/$1" >/dev/null 2>&1
    rm -rf "$T/$1"
    online_start "$1" "$T/$1" || return 1
    fill
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$1-orig.archive" --quiet
    "$REMODEL" run -q --force "$T/plans/embed.json" --from "$T/$1-orig.archive" --to "$T/$1-offline.archive" ||
        { fail "$1: remodel run offline"; return 1; }
    pid=$(plan_id "$T/plans/embed.json")
}
online() { run_rm online "$1" "$T/plans/embed.json" --uri "$uri" "${@:2}"; }
# state NAME EXPECT PHASE: check.py's verdict (the switch suite's).
state() {
    summary=$(python3 "$T/check.py" "$uri" "$pid" "$T/$kind-orig.archive" "$T/$kind-offline.archive" \
        "$MOVES" "" "$2" "$3" 2>&1)
    if [ "${summary#ok: }" != "$summary" ]; then pass "$1"; else fail "$1" "$summary"; fi
}
# faulted SPEC CMD ARGS...: remodel online CMD with REMODEL_ONLINE_FAULT=SPEC;
# its status in $frc, its stderr in $T/ferr, the calls in $T/flog.
faulted() {
    local spec=$1
    shift
    rm -f "$T/flog"
    REMODEL_ONLINE_FAULT=$spec REMODEL_ONLINE_FAULT_LOG=$T/flog \
        "$REMODEL" online "$1" "$T/plans/embed.json" --uri "$uri" --retry-for 2s "${@:2}" \
        >"$T/fout" 2>"$T/ferr"
    frc=$?
}
# prepared [finalized]: crm filled again, the plan run (and finalized).
# On mem the first time makes a snapshot, the others restore it.
prepared() {
    local snap=prepared-${1:-run}
    if [ "$kind" == mem ] && [ -n "${SNAPS[$snap]:-}" ]; then
        mem_restore "$snap" || { fail "$kind: memRestore $snap"; return 1; }
        return 0
    fi
    fill
    online run -q --create-indexes
    [ $rc == 0 ] || { fail "$kind: online run" "$(cat "$T/err")"; return 1; }
    if [ "${1:-}" == finalized ]; then
        online finalize --writes-stopped
        [ $rc == 0 ] || { fail "$kind: finalize before a rollback point" "$(cat "$T/err")"; return 1; }
    fi
    if [ "$kind" == mem ]; then
        mem_snapshot "$snap" && SNAPS[$snap]=1
    fi
    return 0
}
declare -A SNAPS
# fired: what the layer did, as it said it ("call N (KIND #K) cut ...").
fired() { sed -n 's/^remodel-online: fault layer: \(call .*\)/\1/p' "$T/ferr" | head -n 1; }

# finalize_point SPEC: finalize with SPEC's fault, again when it failed;
# switched once; rollback puts the originals back.
finalize_point() {
    local n="$kind: finalize, $1"
    prepared || return 1
    faulted "$1" finalize --writes-stopped
    n="$n [$(fired)]"
    if [ $frc != 0 ]; then
        online finalize --writes-stopped
        # The cut lost the reply to the write that marked the plan
        # finalized (or one after it): finalize again says so, exit 2, as
        # after a kill there (test_online_switch.sh); the state shows it.
        if [ $rc == 2 ] && grep -q 'is finalized already' "$T/err"; then
            pass "$n: failed (exit $frc); finalize again: it was finalized already (exit 2)"
        else
            expect_eq "$n: failed (exit $frc); finalize again: exit 0" "$rc" 0
            [ $rc == 0 ] || { sed 's/^/  /' "$T/ferr" "$T/err" | tail -n 12 >&2; }
        fi
    else
        pass "$n: exit 0 (the driver or remodel's retry took it)"
    fi
    state "$n: switched once, remodel run's documents, the originals kept, nothing else" after rollback
    online rollback
    expect_eq "$n: then rollback: exit 0" "$rc" 0
    state "$n: ... the originals back byte for byte" before rollback
}
# rollback_point SPEC: the plan finalized, rollback with SPEC's fault,
# again when it failed; the originals back.
rollback_point() {
    local n="$kind: rollback, $1"
    prepared finalized || return 1
    faulted "$1" rollback
    n="$n [$(fired)]"
    if [ $frc != 0 ] && [ "$(settled)" == 1 ]; then
        # Its last state write applied, only the reply lost: the rollback
        # had completed, and the one typed again is a second rollback,
        # which drops the results (they hold nothing written after the
        # switch: the settling made sure).
        online rollback
        expect_eq "$n: failed (exit $frc) after its last write; rollback again: exit 0" "$rc" 0
        state "$n: ... the originals back, the results dropped, the plan forgotten" gone rollback
        return
    fi
    if [ $frc != 0 ]; then
        online rollback
        expect_eq "$n: failed (exit $frc); rollback again: exit 0" "$rc" 0
        [ $rc == 0 ] || { sed 's/^/  /' "$T/ferr" "$T/err" | tail -n 12 >&2; }
    else
        pass "$n: exit 0 (the driver or remodel's retry took it)"
    fi
    state "$n: the originals back byte for byte, the results beside them" before rollback
}
# settled: 1 when the plan's record says a rollback completed (not
# finalized, no switch journaled, nothing left to settle), else 0.
settled() {
    python3 -c 'import pymongo, sys
d = pymongo.MongoClient(sys.argv[1]).remodel.plans.find_one({"_id": sys.argv[2]}) or {}
print(int(not d.get("finalized") and "switch" not in d and "afterSwitch" not in d))' "$uri" "$pid"
}

# count CMD: the calls CMD made (the "any" numbering) in $calls, its
# renameCollection calls in $renames, the sequence on standard error.
count_calls() {
    calls=$(grep -c '^[0-9]' "$T/flog")
    renames=$(grep -c ' renameCollection ' "$T/flog")
    echo "# $kind: $1: $calls calls: $(awk '$1 != "-" {print $2}' "$T/flog" | uniq -c |
        awk '{printf "%s%s%s", sep, $2, ($1 > 1 ? "x" $1 : ""); sep = " "}')" >&2
}
# On a server with its change log, after a sync that left the plan's key
# map (keys_ID) in the state database, finalize with a fault at a call
# found by counting a finalize first; finalize again completes, or says it
# was finalized already, and nothing of the plan's syncs (keys_ID,
# made_ID) is left in the state database. The calls: the reply to its
# last write of the plan's record lost (the $unset of the switch's
# journal), and the key map's drop cut before it is sent.
cl_prepared() {
    fill
    online run -q --create-indexes
    [ $rc == 0 ] || { fail "$kind: online run (change log)" "$(cat "$T/err")"; return 1; }
    python3 -c 'import pymongo, sys, os
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
c.crm.tasks.update_one({"_id": 101}, {"$set": {"owner": 3}})
c.crm.people.update_one({"_id": 2}, {"$set": {"name": "renamed"}})
c.crm.tasks.insert_one({"_id": 500, "owner": 4, "title": "new"})
os._exit(0)' "$uri"
    online sync
    [ $rc == 0 ] || { fail "$kind: online sync (change log)" "$(cat "$T/err")"; return 1; }
}
# left: the state database's collections of the plan's syncs.
left() {
    python3 -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
print(" ".join(sorted(n for n in c.remodel.list_collection_names() if n.endswith("_" + sys.argv[2]))))' \
        "$uri" "$pid"
}
# sync_state_point WHAT CALL ACTION: CALL an awk pattern over the counted
# finalize's log lines ("N COMMAND K TARGET"), its last match faulted.
sync_state_point() {
    local k n="$kind: finalize with the change log, $1"
    cl_prepared || return 1
    expect_eq "$n: a sync from the change log leaves the plan's key map" "$(left)" "keys_$pid"
    faulted count finalize --writes-stopped
    k=$(awk "$2"' {k = $2 ":" $3} END {print k}' "$T/flog")
    cl_prepared || return 1
    faulted "$k:$3" finalize --writes-stopped
    n="$n [$(fired)]"
    if [ $frc != 0 ]; then
        online finalize --writes-stopped
        if [ $rc == 2 ] && grep -q 'is finalized already' "$T/err"; then
            pass "$n: failed (exit $frc); finalize again: it was finalized already (exit 2)"
        else
            expect_eq "$n: failed (exit $frc); finalize again: exit 0" "$rc" 0
        fi
    else
        pass "$n: exit 0 (the driver or remodel's retry took it)"
    fi
    expect_eq "$n: ... nothing of the plan's syncs left in the state database" "$(left)" ""
}
sync_state_points() {
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/$kind-cl" 0 changelog || return 1
    sync_state_point "its last \$unset's reply lost" '$2 == "update" && $4 == "plans"' cut-after
    sync_state_point "the key map's drop cut" '$2 == "drop" && $4 ~ /^keys_/' cut
    "$SERVER" stop "$T/$kind-cl" >/dev/null 2>&1
}

# REMODEL_FAULT_ONLY='rollback_point any:47:cut-after' runs that alone (on
# REMODEL_FAULT_KIND, default ferretdb), to replay one point.
if [ -n "${REMODEL_FAULT_ONLY:-}" ]; then
    kind=${REMODEL_FAULT_KIND:-ferretdb}
    setup $kind && eval "$REMODEL_FAULT_ONLY"
    exit 0
fi
total=0
for kind in $KINDS; do
    [ $kind == external ] && { echo "# the fault matrix needs local servers: skipped on $kind" >&2; continue; }
    SNAPS=()
    setup $kind || continue
    prepared || continue
    faulted count finalize --writes-stopped
    expect_eq "$kind: finalize under the layer, counting: exit 0, four renames" \
        "$frc:$(grep -c '^remodel: renamed ' "$T/ferr")" "0:4"
    state "$kind: ... switched, remodel run's documents" after rollback
    count_calls finalize
    fcalls=$calls frenames=$renames
    faulted count rollback
    expect_eq "$kind: rollback under the layer, counting: exit 0" "$frc" 0
    state "$kind: ... the originals back" before rollback
    count_calls rollback
    rcalls=$calls rrenames=$renames
    # finalize renames each probe too (two more).
    expect_eq "$kind: the layer sees every rename: finalize's four (and its probes'), rollback's four" \
        "$((frenames >= 4)):$rrenames" "1:4"
    lap "$kind: counted"

    if [ $FULL == 1 ]; then
        for ((k = 1; k <= fcalls; k++)); do
            finalize_point "any:$k:cut"
            finalize_point "any:$k:cut-after"
        done
        lap "$kind: finalize, each of its $fcalls calls cut, both ways"
        for ((k = 1; k <= rcalls; k++)); do
            rollback_point "any:$k:cut"
            rollback_point "any:$k:cut-after"
        done
        lap "$kind: rollback, each of its $rcalls calls cut, both ways"
        # Each rename's reply lost: the hardest case for a switch done once.
        for ((k = 1; k <= frenames; k++)); do finalize_point "renameCollection:$k:cut-after"; done
        for ((k = 1; k <= rrenames; k++)); do rollback_point "renameCollection:$k:cut-after"; done
        total=$((total + 2 * (fcalls + rcalls) + frenames + rrenames))
        lap "$kind: each rename's reply lost"
    else
        # Every call runs in-process (above); here a rename's reply lost
        # in the middle of the switch, each way, as this server renames.
        finalize_point "renameCollection:4:cut-after"
        rollback_point "renameCollection:2:cut-after"
        total=$((total + 2))
        lap "$kind: a rename's reply lost, each way"
    fi
    # A failure answered by the server, and a slow call, once each.
    finalize_point "renameCollection:3:fail"
    finalize_point "any:$(((fcalls + 1) / 2)):delay=300"
    total=$((total + 2))
    # The lease's renewals (a thread of their own, out of "any"): with a
    # 3 s lease one comes every 0.5 s, and the pause before the switch
    # makes sure one falls inside finalize. The default run shares them
    # out: the renewal's reply lost on FerretDB, its read cut on
    # mongo-java-server (each point takes seconds of the lease's timer).
    export REMODEL_ONLINE_LEASE_MS=3000 REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=1200
    for p in lease.update:1:cut-after lease.find:1:cut; do
        [ $FULL == 0 ] && [ "$kind:$p" == ferretdb:lease.find:1:cut ] && continue
        [ $FULL == 0 ] && [ "$kind:$p" == java:lease.update:1:cut-after ] && continue
        finalize_point "$p"
        expect_eq "$kind: finalize, $p: the fault came" "$(fired | grep -c "(${p%%:*} #1)")" 1
        total=$((total + 1))
    done
    unset REMODEL_ONLINE_LEASE_MS REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS
    lap "$kind: the lease's renewals cut"
    # The change log's points test remodel's own drop of the syncs' state:
    # by default on FerretDB only (its oplog; starting mongo-java-server
    # with its change streams again costs the most of its replay).
    if [ $FULL == 1 ] || [ $kind != java ]; then
        sync_state_points
        total=$((total + 2))
        lap "$kind: with the change log, the syncs' state dropped after the switch"
    fi
done
echo "# $total fault points" >&2
