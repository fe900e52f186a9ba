#!/usr/bin/env bash
# The kill matrix of --to-uri (issue 54): `online run --to-uri` and
# `finalize --to-uri --writes-stopped` interrupted, in both directions
# (FerretDB with its oplog to mongo-java-server, and back), on the plan and
# data of test_online_to_uri.sh (shop.kids embedded into shop.parents;
# shop.other, which it does not touch, copied as it is with its index).
# Each call is numbered by the fault layer (shell-ext/conn/online_fault.c,
# REMODEL_ONLINE_FAULT=count with REMODEL_ONLINE_FAULT_LOG); a point is
#  - kill:N       the run killed (kill -9) at its call N: the layer holds
#                 the call (delay), the suite kills the process once the
#                 layer says it came;
#  - cut:N        call N's connection cut before it is sent;
#  - cut-after:N  call N sent, applied, its reply lost.
# After each, the same command again completes (exit 0; for finalize, or
# says it was committed already), a finalize after a run completes, and
# then: the destination's shop equals `remodel run` offline over the
# source's mongodump byte for byte, only the final names there, shop.other
# with its index; the source as it was (every document, byte for byte, its
# indexes, no state database); the destination's pairs record one,
# committed, shop.other noted copied.
# Also the destination stopped and started again (same directory and port)
# in the middle of a run, then the run again (mongo-java-server keeps
# nothing across a restart: the run again begins afresh).
#
# The default replay: per direction, a few points of the run spread over
# its calls (the copy of the results and of shop.other among them, each
# kind of interruption), and finalize at a few of its calls, both cuts.
# REMODEL_FAULT_MATRIX=full (make online-fault-matrix): every call of the
# run killed, every call of finalize cut and cut after. REMODEL_FAULT_ONLY
# ('run_point kill 12', 'finalize_point cut-after 30') replays one point
# (on CI_KINDS' first direction).
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_kill.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "to-uri kill matrix: needs local servers (skipped)"; exit 0; }
FULL=0
[ "${REMODEL_FAULT_MATRIX:-}" == full ] && FULL=1
trap 'for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
kids_plan emb shop
P=$T/plans/emb.json
t_lap=$SECONDS
# A short lease: each run renews it several times, and the renewals must
# go to the destination, which holds it (the source has no state database
# after any point); a killed run's lease is free again soon.
export REMODEL_ONLINE_LEASE_MS=3000
lap() { echo "# $1: $((SECONDS - t_lap)) s" >&2; t_lap=$SECONDS; }

seed() {
    py 'c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(400)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % 400, "x": i} for i in range(1200)])
c.shop.other.insert_many([{"_id": i, "v": i * 2} for i in range(300)])
c.shop.kids.create_index("owner")
c.shop.other.create_index("v", name="v_1")'
}
# A run's options: small batches, so that the copy is many calls.
RUN_OPTS=(--batch-size 50)
# fingerprint: the source's shop, every document's bytes, its indexes,
# and whether it has a state database.
fingerprint() {
    uri=$SRC py 'import hashlib
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
h = hashlib.sha1()
for n in sorted(c.shop.list_collection_names()):
    co = c.shop.get_collection(n, codec_options=CodecOptions(document_class=RawBSONDocument))
    k = 0
    for d in co.find().sort("_id", 1):
        h.update(d.raw); k += 1
    ix = sorted((i["name"], sorted(i["key"].items())) for i in c.shop[n].list_indexes())
    h.update(repr((n, k, ix)).encode())
print(h.hexdigest(), "remodel" in c.list_database_names())'
}
# fresh: the destination emptied of shop and of the state database.
fresh() { uri=$DST py 'c.drop_database("shop"); c.drop_database("remodel")'; }
# faulted SPEC CMD ARGS...: remodel online CMD --to-uri under the layer;
# status in $frc, stderr in $T/ferr, the calls in $T/flog.
faulted() {
    local spec=$1
    shift
    rm -f "$T/flog"
    REMODEL_ONLINE_FAULT=$spec REMODEL_ONLINE_FAULT_LOG=$T/flog \
        "$REMODEL" online "$1" "$P" --uri "$SRC" --to-uri "$DST" "${@:2}" >"$T/fout" 2>"$T/ferr"
    frc=$?
}
# killed N ARGS...: run --to-uri killed (kill -9) at its call N, held there.
killed() {
    local n=$1 w
    shift
    rm -f "$T/flog"
    REMODEL_ONLINE_FAULT=any:$n:delay=60000 REMODEL_ONLINE_FAULT_LOG=$T/flog \
        "$REMODEL" online run "$P" --uri "$SRC" --to-uri "$DST" "$@" >"$T/fout" 2>"$T/ferr" &
    local p=$!
    for ((w = 0; w < 600; w++)); do
        grep -q "^remodel-online: fault layer: call $n " "$T/ferr" 2>/dev/null && break
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
    frc=$?
}
two() { run_rm online "$1" "$P" --uri "$SRC" --to-uri "$DST" "${@:2}"; }
fired() { sed -n 's/^remodel-online: fault layer: \(call .*\)/\1/p' "$T/ferr" | head -n 1; }
# what N: call N of the counted run, as the log says it.
what() { awk -v n="$1" '$1 == n {print $2 " " $4}' "$2"; }

# judge NAME: the destination, the source and the state as they must be
# after a finalize.
judge() {
    uri=$DST online_same "$1: the destination equals remodel run offline, byte for byte" \
        "$T/emb-$from.archive" shop.parents=parents shop.kids=kids shop.other=other
    expect_eq "$1: ... only the final names, shop.other's index" \
        "$(uri=$DST py 'print(",".join(sorted(c.shop.list_collection_names())),
sorted(i["name"] for i in c.shop.other.list_indexes()))')" "kids,other,parents ['_id_', 'v_1']"
    expect_eq "$1: ... the source as it was, no state database there" "$(fingerprint)" "$before"
    expect_eq "$1: ... one pair recorded, committed, shop.other copied" \
        "$(uri=$DST py 'print(c.remodel.pairs.count_documents({}), [(d.get("committed"), d.get("copied")) for d in c.remodel.pairs.find()])')" \
        "1 [(True, ['shop.other'])]"
}
# finalized NAME: finalize --writes-stopped (exit 0), then judge.
finalized() {
    two finalize --writes-stopped
    expect_eq "$1: then finalize --writes-stopped: exit 0" "$rc" 0
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" | tail -n 6 >&2
    judge "$1"
}

# run_point HOW N: the run interrupted at call N (kill, cut, cut-after),
# run again, finalize.
run_point() {
    local how=$1 k=$2 n
    fresh
    if [ "$how" == kill ]; then
        killed "$k" "${RUN_OPTS[@]}"
        n="$from->$to: run killed (kill -9) at call $k [$(what "$k" "$T/run.flog")]"
        expect_eq "$n: the layer held the call, the run killed there" "$(fired | cut -d' ' -f1-2):$frc" \
            "call $k:137"
    else
        faulted "any:$k:$how" run "${RUN_OPTS[@]}" --retry-for 1s
        n="$from->$to: run, call $k $how [$(fired)]"
    fi
    two run -q "${RUN_OPTS[@]}"
    expect_eq "$n: the run again completes (exit 0)" "$rc:$(head -c 300 "$T/err")" "0:"
    finalized "$n"
}
# finalize_point HOW N: finalize with call N cut (before or after), again.
finalize_point() {
    local how=$1 k=$2 n
    fresh
    two run -q "${RUN_OPTS[@]}"
    [ $rc == 0 ] || { fail "$from->$to: run before finalize point $k" "$(cat "$T/err")"; return; }
    faulted "any:$k:$how" finalize --writes-stopped --max-window 0 --retry-for 1s
    n="$from->$to: finalize, call $k $how [$(fired)]"
    if [ $frc == 0 ]; then
        pass "$n: exit 0 (the retry took it)"
        judge "$n"
        return
    fi
    # Interrupted while naming the results: run refused (exit 2) until a
    # finalize completes it.
    if [ "$(uri=$DST py 'd = c.remodel.pairs.find_one() or {}
print(bool(d.get("naming")) and not d.get("committed"))')" == True ]; then
        two run -q "${RUN_OPTS[@]}"
        expect_eq "$n: interrupted while naming: run refused (exit 2), saying finalize completes it" \
            "$rc $(grep -c 'while giving the results their final names: finalize --writes-stopped again' "$T/err")" "2 1"
    fi
    two finalize --writes-stopped
    if [ $rc == 0 ] && grep -q 'was committed on .* already' "$T/err"; then
        pass "$n: failed (exit $frc); finalize again: committed already (exit 0)"
    else
        expect_eq "$n: failed (exit $frc); finalize again: exit 0" "$rc" 0
        [ $rc == 0 ] || sed 's/^/  /' "$T/ferr" "$T/err" | tail -n 8 >&2
    fi
    judge "$n"
}

# restart_point: the destination stopped and started again (its directory,
# its port) while a run writes, then the run again, finalize.
restart_point() {
    local p prc w m port
    fresh
    "$REMODEL" online run "$P" --uri "$SRC" --to-uri "$DST" -q --batch-size 10 --pause 40ms \
        >"$T/out" 2>"$T/err.restart" &
    p=$!
    for ((w = 0; w < 400; w++)); do
        m=$(uri=$DST py 'n = [x for x in c.shop.list_collection_names() if x.startswith("parents_remodel_")]
print(c.shop[n[0]].count_documents({}) if n else 0)' 2>/dev/null)
        [ "${m:-0}" -ge 40 ] && break
        sleep 0.05
    done
    port=${DST##*:} port=${port%%/*} port=${port%%\?*}
    "$SERVER" stop "$T/srv-dst-$to" >/dev/null 2>&1
    online_start "$to" "$T/srv-dst-$to" "$port"
    expect_eq "$from->$to: the destination restarted mid-run ($m results written), on its port" \
        "$uri" "$DST"
    wait $p
    prc=$?
    two run -q "${RUN_OPTS[@]}"
    expect_eq "$from->$to: ... the run (exit $prc) again completes (exit 0)" "$rc:$(head -c 300 "$T/err")" "0:"
    finalized "$from->$to: the destination restarted mid-run"
}

total=0
for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    online_start "$from" "$T/srv-src-$from" 0 changelog || continue
    SRC=$uri
    seed
    online_start "$to" "$T/srv-dst-$to" 0 || continue
    DST=$uri
    before=$(fingerprint)
    uri=$SRC offline_run emb shop
    mv "$T/emb.archive" "$T/emb-$from.archive"
    if [ -n "${REMODEL_FAULT_ONLY:-}" ]; then
        fresh
        faulted count run "${RUN_OPTS[@]}"
        cp "$T/flog" "$T/run.flog"
        eval "$REMODEL_FAULT_ONLY"
        break
    fi

    # ---- counted: the run's calls, finalize's calls ----
    fresh
    faulted count run "${RUN_OPTS[@]}"
    expect_eq "$from->$to: run under the layer, counting (exit 0)" "$frc" 0
    cp "$T/flog" "$T/run.flog"
    rcalls=$(grep -c '^[0-9]' "$T/run.flog")
    faulted count finalize --writes-stopped --max-window 0
    expect_eq "$from->$to: finalize under the layer, counting (exit 0)" "$frc" 0
    cp "$T/flog" "$T/fin.flog"
    fcalls=$(grep -c '^[0-9]' "$T/fin.flog")
    judge "$from->$to: counted run and finalize"
    for f in run fin; do
        echo "# $from->$to: $f: $(awk '$1 != "-" {print $2 ":" $4}' "$T/$f.flog" | uniq -c |
            awk '{printf "%s%s%s", sep, $2, ($1 > 1 ? "x" $1 : ""); sep = " "}')" >&2
    done
    # The run's copy of shop.other (its documents' writes, its index,
    # its note in the pairs record): points there are the copy of an
    # untouched namespace.
    other=$(awk '$1 != "-" && $4 == "other" {print $1}' "$T/run.flog")
    o1=$(echo "$other" | head -n 1) o2=$(echo "$other" | tail -n 1)
    note=$(awk '$1 != "-" && $2 == "update" && $4 == "pairs" {k = $1} END {print k}' "$T/run.flog")
    expect_eq "$from->$to: the counted run wrote shop.other and noted it copied" \
        "$([ -n "$o1" ] && [ -n "$note" ] && [ "$note" -gt "$o2" ] && echo yes)" yes
    lap "$from->$to: counted ($rcalls run calls, $fcalls finalize calls)"

    # ---- run interrupted ----
    if [ $FULL == 1 ]; then
        for ((k = 1; k <= rcalls; k++)); do run_point kill $k; total=$((total + 1)); done
        for k in $other $note; do
            run_point cut $k
            run_point cut-after $k
            total=$((total + 2))
        done
    else
        # kill -9 at the third write of results (some written, not all),
        # a checkpoint's reply lost midway through the rest, shop.other's
        # copy killed midway, its note in the pairs record (the run's last
        # call) cut, then its reply lost.
        ins=$(awk '$1 != "-" && $2 == "insert" && $4 ~ /_remodel_/ {print $1}' "$T/run.flog")
        cks=$(awk '$1 != "-" && $2 == "update" && $4 == "checkpoints" {print $1}' "$T/run.flog")
        run_point kill "$(echo "$ins" | sed -n 3p)"
        run_point cut-after "$(echo "$cks" | sed -n "$((($(echo "$cks" | wc -l) + 1) / 2))p")"
        run_point cut "$rcalls"
        run_point kill "$(((o1 + o2) / 2))"
        run_point cut-after "$note"
        total=$((total + 5))
    fi
    lap "$from->$to: run interrupted"

    # ---- finalize interrupted ----
    if [ $FULL == 1 ]; then
        for ((k = 1; k <= fcalls; k++)); do
            finalize_point cut $k
            finalize_point cut-after $k
            total=$((total + 2))
        done
    else
        renames=$(awk '$1 != "-" && $2 == "renameCollection" {print $1}' "$T/fin.flog")
        fnote=$(awk '$1 != "-" && $2 == "update" && $4 == "pairs" {k = $1} END {print k}' "$T/fin.flog")
        finalize_point cut "$(((fcalls + 1) / 2))"
        finalize_point cut-after "$(echo "$renames" | head -n 1)"
        finalize_point cut-after "$fnote"
        total=$((total + 3))
    fi
    lap "$from->$to: finalize interrupted"

    restart_point
    total=$((total + 1))
    lap "$from->$to: destination restarted"
    for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done
done
echo "# $total points" >&2
