#!/usr/bin/env bash
# The kill matrix of --to-uri (issue 54): `online run --to-uri`, `follow
# --to-uri` and `finalize --to-uri --writes-stopped` interrupted, in both
# directions (FerretDB with its oplog to mongo-java-server, and back), on
# the plan and data of test_online_to_uri.sh (shop.kids embedded into
# shop.parents; shop.other, which it does not touch, copied as it is with
# its index).
# Each call is numbered by the fault layer (shell-ext/conn/online_fault.c,
# REMODEL_ONLINE_FAULT=count with REMODEL_ONLINE_FAULT_LOG); a point is
#  - kill:N       the command killed (kill -9) at its call N: the layer
#                 holds the call (delay), the suite kills the process once
#                 the layer says it came;
#  - cut:N        call N's connection cut before it is sent;
#  - cut-after:N  call N sent, applied, its reply lost.
# After each, the same command again completes (exit 0; for finalize, or
# says it was committed already), a finalize after a run completes, and
# then: the destination's shop equals `remodel run` offline over the
# source's mongodump byte for byte, only the final names there, shop.other
# with its index; the source as it was (every document, byte for byte, its
# indexes, no state database); the destination's pairs record one,
# committed, shop.other noted copied.
# Follow's points: the source seeded again, a run, then an application's
# writes on the source (inserts, updates and deletes of parents and of
# kids, drawn from a fixed seed: the same writes on the same data, so that
# a follow's calls are numbered the same each time); follow --to-uri
# interrupted at call N of its first round or of that round's sample
# (cut and cut-after with --retry-for 1s: the follow retries, at every
# call from its connections' first on, goes on to its sample and stops
# at SIGINT, exit 0); follow again while the application writes
# more (between its rounds), stopped by SIGINT (exit 0); then
# finalize --writes-stopped, which drains what follow left, and the checks
# above against the source as the writes left it.
# Also the destination stopped and started again (same directory and port)
# in the middle of a run, then the run again (mongo-java-server keeps
# nothing across a restart: the run again begins afresh).
#
# The default replay: per direction, a few points of the run spread over
# its calls (the copy of the results and of shop.other among them, each
# kind of interruption); finalize at a few of its calls, both cuts
# (shop.other's drop for its last copy, its reply lost, among them);
# follow at four calls of its round, two a direction: kill -9 at its
# second write of results and the round's point saved after its last
# write of results with its reply lost (the first direction); the last
# read of the source's log before it reads the source cut and kill -9 at
# its sample's first read of the results (the second). Every call of
# follow's round is killed, cut and cut after in-process in make check
# (build/tests/remodel-fault-matrix, tests/mem/matrix/matrix_follow.c).
# REMODEL_FAULT_MATRIX=full (make online-fault-matrix): every call of the
# run killed, every call of finalize cut and cut after, every call of
# follow's round (the first, to its sample recorded) killed, cut and cut
# after; REMODEL_FAULT_CALLS=A-B keeps its points at calls A to B (a long
# campaign run in parts). REMODEL_FAULT_ONLY ('run_point kill 12',
# 'finalize_point cut-after 30', 'follow_point cut 41') replays one point
# (on CI_KINDS' first direction).
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_kill.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
use_faulty || exit 1
to_uri_setup "to-uri kill matrix"
FULL=0
[ "${REMODEL_FAULT_MATRIX:-}" == full ] && FULL=1
# The full matrix's calls: REMODEL_FAULT_CALLS=A-B, or all of them.
calls=${REMODEL_FAULT_CALLS:-1-100000}
[[ $calls =~ ^[0-9]+-[0-9]+$ ]] || { echo "REMODEL_FAULT_CALLS is A-B, not $calls" >&2; exit 2; }
call_lo=${calls%-*} call_hi=${calls#*-}
# in_calls N: whether call N is among them.
in_calls() { [ "$1" -ge "$call_lo" ] && [ "$1" -le "$call_hi" ]; }
t_lap=$SECONDS
# A short lease: each run renews it several times, and the renewals must
# go to the destination, which holds it (the source has no state database
# after any point); a killed run's lease is free again soon.
export REMODEL_ONLINE_LEASE_MS=3000
lap() { echo "# $1: $((SECONDS - t_lap)) s" >&2; t_lap=$SECONDS; }

SEED_PY='c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(400)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % 400, "x": i} for i in range(1200)])
c.shop.other.insert_many([{"_id": i, "v": i * 2} for i in range(300)])
c.shop.kids.create_index("owner")
c.shop.other.create_index("v", name="v_1")'
seed() { py "$SEED_PY"; }
# A run's options: small batches, so that the copy is many calls.
RUN_OPTS=(--batch-size 50)
# fingerprint: the source's shop, every document's bytes, its indexes,
# and whether it has a state database.
# (FINGERPRINT_PY defines it for a client s, for judge's script.)
FINGERPRINT_PY='def fingerprint(s):
    import hashlib
    from bson.codec_options import CodecOptions
    from bson.raw_bson import RawBSONDocument
    h = hashlib.sha1()
    for n in sorted(s.shop.list_collection_names()):
        co = s.shop.get_collection(n, codec_options=CodecOptions(document_class=RawBSONDocument))
        k = 0
        for d in co.find().sort("_id", 1):
            h.update(d.raw); k += 1
        ix = sorted((i["name"], sorted(i["key"].items())) for i in s.shop[n].list_indexes())
        h.update(repr((n, k, ix)).encode())
    return "%s %s" % (h.hexdigest(), "remodel" in s.list_database_names())'
fingerprint() { uri=$SRC py "$FINGERPRINT_PY
print(fingerprint(c))"; }
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
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/ferr"
    REMODEL_ONLINE_FAULT=any:$n:delay=60000 REMODEL_ONLINE_FAULT_LOG=$T/flog \
        "$REMODEL" online run "$P" --uri "$SRC" --to-uri "$DST" "$@" >"$T/fout" 2>"$T/ferr" &
    local p=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        grep -q "^remodel-online: fault layer: call $n " "$T/ferr" 2>/dev/null && break
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
    frc=$?
}
fired() { sed -n 's/^remodel-online: fault layer: \(call .*\)/\1/p' "$T/ferr" | head -n 1; }
# what N: call N of the counted run, as the log says it.
what() { awk -v n="$1" '$1 == n {print $2 " " $4}' "$2"; }

# judge NAME: the destination, the source and the state as they must be
# after a finalize.
judge() {
    uri=$DST online_same "$1: the destination equals remodel run offline, byte for byte" \
        "$T/emb-$from.archive" shop.parents=parents shop.kids=kids shop.other=other
    # The destination's names and pairs record, the source's fingerprint,
    # in one script (a python is slow to start).
    local d
    d=$(uri=$DST py "$FINGERPRINT_PY"'
print(",".join(sorted(c.shop.list_collection_names())),
      sorted(i["name"] for i in c.shop.other.list_indexes()))
print(fingerprint(pymongo.MongoClient(sys.argv[2], directConnection=True, serverSelectionTimeoutMS=10000)))
print(c.remodel.pairs.count_documents({}), [(d.get("committed"), d.get("copied")) for d in c.remodel.pairs.find()])' "$SRC")
    expect_eq "$1: ... only the final names, shop.other's index" \
        "$(echo "$d" | sed -n 1p)" "kids,other,parents ['_id_', 'v_1']"
    expect_eq "$1: ... the source as it was, no state database there" "$(echo "$d" | sed -n 2p)" "$before"
    expect_eq "$1: ... one pair recorded, committed, shop.other copied" \
        "$(echo "$d" | sed -n 3p)" "1 [(True, ['shop.other'])]"
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
    # Interrupted while dropping the intermediate results (a plan that
    # has some): run refused (exit 2) until a finalize completes it.
    if [ "$(uri=$DST py 'd = c.remodel.pairs.find_one() or {}
print(bool(d.get("finishing")) and not d.get("committed"))')" == True ]; then
        two run -q "${RUN_OPTS[@]}"
        expect_eq "$n: interrupted while dropping: run refused (exit 2), saying finalize completes it" \
            "$rc $(grep -c 'while dropping the intermediate results: finalize --writes-stopped again' "$T/err")" "2 1"
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
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        m=$(uri=$DST py 'print(c.shop.parents.count_documents({}))' 2>/dev/null)
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

# ---- follow interrupted ----
# writes SEED N: the application's writes on the source, N of them, one by
# one: inserts, updates and deletes of parents and of kids (a kid moved to
# another parent, a kid of a new parent), drawn from random.Random(SEED):
# on the same source, the same writes, so that a follow's calls are
# numbered the same each time.
writes() {
    uri=$SRC py 'seed, m = int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
for n in range(m):
    k, i = rnd.randrange(8), seed * 100000 + n
    p, kid = rnd.randrange(420), 1000 + rnd.randrange(1250)
    if k == 0:
        c.shop.parents.update_one({"_id": p}, {"$set": {"name": "w%d" % i}}, upsert=True)
    elif k == 1:
        c.shop.parents.delete_one({"_id": rnd.randrange(400)})
    elif k == 2:
        c.shop.kids.update_one({"_id": kid}, {"$set": {"x": -i}})
    elif k == 3:
        c.shop.kids.update_one({"_id": kid}, {"$set": {"owner": rnd.randrange(420)}})
    elif k == 4:
        c.shop.kids.delete_one({"_id": kid})
    elif k == 5:
        c.shop.kids.insert_one({"_id": i, "owner": rnd.randrange(420), "x": n})
    elif k == 6:
        c.shop.parents.insert_one({"_id": i, "name": "new%d" % n})
    else:
        c.shop.kids.insert_one({"_id": i + 50000, "owner": seed * 100000 + rnd.randrange(n + 1), "x": 0})' "$1" "$2"
}
# follow_setup: the destination fresh, the source's shop as seeded (in
# one client's script: a python is slow to start), run --to-uri, then the
# application's first writes, which a follow's first round applies. A
# FerretDB source's oplog begun again first (fresh_log): the points
# before left theirs.
follow_setup() {
    fresh_log "$T/srv-src-$from"
    uri=$SRC py 'd = pymongo.MongoClient(sys.argv[2], directConnection=True, serverSelectionTimeoutMS=10000)
d.drop_database("shop"); d.drop_database("remodel")
c.drop_database("shop")
'"$SEED_PY" "$DST"
    two run -q
    [ $rc == 0 ] || fail "$from->$to: run before a follow point" "$(head -c 600 "$T/err")"
    writes 1 60
}
# follow_bg SPEC PAUSE ARGS...: follow --to-uri in the background, under
# the layer (SPEC, "" for none), rounds PAUSE apart (60s: a stop comes in
# the pause, after the first round and its sample), a small sample; its
# pid in $fp, stderr in $T/ferr, its calls in $T/flog.
follow_bg() {
    local layer=()
    rm -f "$T/flog"
    # Emptied here, not by the background job's redirection, which may
    # come after said looked: said would find the last follow's words
    # and signal this one before it installs its handler (a background
    # job ignores SIGINT until then), and it would never stop.
    : >"$T/ferr"
    [ -n "$1" ] && layer=(REMODEL_ONLINE_FAULT="$1" REMODEL_ONLINE_FAULT_LOG="$T/flog")
    env "${layer[@]}" "$REMODEL" online follow "$P" --uri "$SRC" --to-uri "$DST" --pause "$2" \
        --sample 50 "${@:3}" >"$T/fout" 2>"$T/ferr" &
    fp=$!
}
# said TEXT: waits (240 s at most) until $T/ferr holds TEXT, or $fp ended.
said() {
    local w
    for ((w = 0, wend = SECONDS + 240; SECONDS < wend; w++)); do
        grep -qF -- "$1" "$T/ferr" 2>/dev/null && return 0
        kill -0 $fp 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# held N: the call the layer acted on, "call N COMMAND"; want N: what it
# must be, the counted follow's call N. In the round's sample (after the
# round noted in $fnoted) the reads vary with the drivers sampled ($sample
# on mongo-java-server): there, the call's number alone.
held() {
    if [ "$1" -gt "$fnoted" ]; then
        fired | cut -d' ' -f1-2
    else
        fired | sed 's/^\(call [0-9]*\) (\([^ ]*\) #.*/\1 \2/'
    fi
}
want() {
    if [ "$1" -gt "$fnoted" ]; then
        echo "call $1"
    else
        echo "call $1 $(what "$1" "$T/follow.flog" | cut -d' ' -f1)"
    fi
}
# moved N: says so (a note, no check) when the call the layer acted on is
# not the counted follow's call N: how many reads a change stream's
# getMore or a round takes varies with the machine's load, so the
# numbering can move a call; the point still cut or killed follow at a
# call, which the checks around judge.
moved() {
    local h w
    h=$(held "$1") w=$(want "$1")
    [ "$h" == "$w" ] || echo "# $from->$to: follow's call $1 was $h here, $w when counted (the numbering moved)" >&2
}
# stopped: once the follow ($fp) verified its first round's sample (or
# ended), SIGINT; its status in $frc.
stopped() {
    said "documents verified"
    kill -INT $fp 2>/dev/null
    wait $fp
    frc=$?
}
# follow_count: a follow's calls, counted, in $T/follow.flog; the number of
# its round's last (the first round, then its sample recorded) in $fround,
# the round's noted in the plan's record (before the sample) in $fnoted.
follow_count() {
    follow_setup
    follow_bg count 60s
    stopped
    expect_eq "$from->$to: follow under the layer, counting: its round, stopped by SIGINT (exit 0)" \
        "$frc:$(grep -c 'follow: plan emb.json: stopped after 1 rounds (interrupted)' "$T/ferr")" "0:1"
    cp "$T/flog" "$T/follow.flog"
    fround=$(awk '$1 != "-" && $2 == "update" && $4 == "plans" {print $1}' "$T/follow.flog" | tail -n 1)
    fnoted=$(awk '$1 != "-" && $2 == "update" && $4 == "plans" {print $1}' "$T/follow.flog" | tail -n 2 | head -n 1)
}
# follow_point HOW N: follow --to-uri, the source written since the run,
# interrupted at its call N (kill, cut, cut-after); follow again, the
# application writing meanwhile, between its rounds, stopped by SIGINT;
# finalize --writes-stopped (which drains what follow left), judged.
follow_point() {
    local how=$1 k=$2 n
    follow_setup
    if [ "$how" == kill ]; then
        follow_bg "any:$k:delay=60000" 60s
        said "fault layer: call $k "
        kill -9 $fp 2>/dev/null
        wait $fp 2>/dev/null
        frc=$?
        n="$from->$to: follow killed (kill -9) at call $k [$(what "$k" "$T/follow.flog")]"
        expect_eq "$n: the layer held call $k, the follow killed there" \
            "$(held $k | cut -d' ' -f1-2):$frc" "call $k:137"
        moved "$k"
    else
        follow_bg "any:$k:$how" 60s --retry-for 1s
        stopped
        n="$from->$to: follow, call $k $how [$(what "$k" "$T/follow.flog")]"
        # Every call of follow is retried (--retry-for), from its
        # connections' first to the round's sample: it goes on.
        expect_eq "$n: the fault came at call $k" "$(held $k | cut -d' ' -f1-2)" "call $k"
        moved "$k"
        expect_eq "$n: the follow retried, went on to its sample, stopped by SIGINT (exit 0)" \
            "$frc:$(grep -q 'documents verified' "$T/ferr" && echo 1):$(grep -c 'stopped after [0-9]* rounds (interrupted)' "$T/ferr")" \
            "0:1:1"
        [ $frc == 0 ] || sed 's/^/  /' "$T/ferr" | tail -n 6 >&2
    fi
    follow_bg "" 200ms
    writes 2 40
    stopped
    expect_eq "$n: follow again, the application writing: its rounds, stopped by SIGINT (exit 0)" \
        "$frc:$(grep -c 'follow: plan emb.json: stopped after [0-9]* rounds (interrupted)' "$T/ferr")" "0:1"
    [ $frc == 0 ] || sed 's/^/  /' "$T/ferr" | tail -n 6 >&2
    # The application stopped: the source as it is now, the offline run
    # over its dump, then finalize, judged.
    before=$(fingerprint)
    uri=$SRC offline_run emb shop
    mv "$T/emb.archive" "$T/emb-$from.archive"
    finalized "$n"
}

total=0
for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    pair_start "$from" "$to" || continue
    before=$(fingerprint)
    uri=$SRC offline_run emb shop
    mv "$T/emb.archive" "$T/emb-$from.archive"
    if [ -n "${REMODEL_FAULT_ONLY:-}" ]; then
        if [[ $REMODEL_FAULT_ONLY == *follow_point* ]]; then
            follow_count
        else
            fresh
            faulted count run "${RUN_OPTS[@]}"
            cp "$T/flog" "$T/run.flog"
        fi
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
        for ((k = 1; k <= rcalls; k++)); do
            in_calls $k || continue
            run_point kill $k
            total=$((total + 1))
        done
        for k in $other $note; do
            in_calls $k || continue
            run_point cut $k
            run_point cut-after $k
            total=$((total + 2))
        done
    else
        # kill -9 at the third write of results (some written, not all),
        # a checkpoint's reply lost midway through the rest, shop.other's
        # copy killed midway, its note in the pairs record (the run's last
        # call) cut, then its reply lost.
        ins=$(awk '$1 != "-" && $2 == "insert" && ($4 == "parents" || $4 == "kids") {print $1}' "$T/run.flog")
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
            in_calls $k || continue
            finalize_point cut $k
            finalize_point cut-after $k
            total=$((total + 2))
        done
    else
        copies=$(awk '$1 != "-" && $2 == "insert" && $4 == "other" {print $1}' "$T/fin.flog")
        fnote=$(awk '$1 != "-" && $2 == "update" && $4 == "pairs" {k = $1} END {print k}' "$T/fin.flog")
        dropo=$(awk '$1 != "-" && $2 == "drop" && $4 == "other" {print $1; exit}' "$T/fin.flog")
        finalize_point cut "$(((fcalls + 1) / 2))"
        finalize_point cut-after "$(echo "$copies" | head -n 1)"
        finalize_point cut-after "$fnote"
        finalize_point cut-after "$dropo"
        total=$((total + 4))
    fi
    lap "$from->$to: finalize interrupted"

    restart_point
    total=$((total + 1))
    lap "$from->$to: destination restarted"

    # ---- follow interrupted (the source written since the run) ----
    follow_count
    lap "$from->$to: follow counted ($fround calls to its round's sample recorded)"
    if [ $FULL == 1 ]; then
        for ((k = 1; k <= fround; k++)); do
            in_calls $k || continue
            follow_point kill $k
            follow_point cut $k
            follow_point cut-after $k
            total=$((total + 3))
        done
    else
        # kill -9 at the round's second write of results (some written,
        # not all); the last read of the source's log before the round's
        # reads of the source cut; the round's point saved after its last
        # write of results, its reply lost; kill -9 at the sample's first
        # read of the results.
        ws=$(awk '$1 != "-" && $2 ~ /^(insert|update|delete)$/ && ($4 == "parents" || $4 == "kids") {print $1}' "$T/follow.flog")
        made=$(awk '$1 != "-" && $4 ~ /^made_/ {print $1; exit}' "$T/follow.flog")
        log1=$(awk -v m="$made" '$1 != "-" && $1 < m && ($2 == "getMore" || $4 == "oplog.rs") {k = $1} END {print k}' "$T/follow.flog")
        saved=$(awk -v l="$(echo "$ws" | tail -n 1)" '$1 != "-" && $1 > l && $2 == "update" && $4 == "plans" {print $1; exit}' "$T/follow.flog")
        sampled=$(awk -v l="$fnoted" -v d="$(port_of "$DST")" '$1 != "-" && $1 > l && ($4 == "parents" || $4 == "kids") && $5 == d {print $1; exit}' "$T/follow.flog")
        # Two a direction, the four across both: every call of the round
        # is killed, cut and cut after in-process (matrix_follow.c).
        if [ "$from" == "${first_from:=$from}" ]; then
            follow_point kill "$(echo "$ws" | sed -n 2p)"
            follow_point cut-after "$saved"
        else
            follow_point cut "$log1"
            follow_point kill "$sampled"
        fi
        total=$((total + 2))
    fi
    lap "$from->$to: follow interrupted"
    for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done
done
echo "# $total points" >&2
