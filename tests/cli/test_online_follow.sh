#!/usr/bin/env bash
# remodel online with the application writing (issue 23's test): on
# FerretDB and on mongo-java-server, each started with its change log
# (tests/peers/server.sh ... changelog: FerretDB's oplog, java's change
# streams) and without (the full-rescan fallback), for embed, extract,
# denormalize, summarize, bucketize and a two-step chained plan (a
# denormalize whose result the second step, an embed, reads), each plan on
# its own database:
#   - an application writer (tests/transforms/app_writer.py: seeded, a
#     bounded loop of inserts, children moved to another parent, parents'
#     join keys changed where the plan joins on a non-_id field, copied and
#     summed fields changed, deletes and whole-document replaces; for
#     bucketize new, changed, deleted readings and readings moved in time
#     or to another series) runs while `online run` copies, throttled
#     (small batches, a pause), so that its writes overlap the copy: it
#     must have made writes acknowledged before the run ended;
#   - the writer again while `online follow` runs (when remodel has it,
#     after a sync; else while syncs run one after another, each exit 0);
#   - with the writes stopped: sync, then verify exit 0, every result as the
#     sources make it;
#   - the sources dumped then (mongodump), `remodel run` on that dump: the
#     side-by-side results are its documents, byte for byte
#     (online_same.py); for embed and the chained plan, finalize
#     --writes-stopped, then the live namespaces are those documents and
#     the originals, kept as backups, the dump's;
#   - with a change log, run and status name it (oplog, change streams) and
#     its history is not lost (a 64 MiB oplog here), so a sync that follows
#     the log has it all; without, capture none.
# Without a change log on mongo-java-server only (REMODEL_TEST_BOTH=1: on
# FerretDB too). The server configurations run at once (REMODEL_FOLLOW_JOBS=N for at
# most N at a time; 1: one after another), and in each the plans in three
# groups at once (REMODEL_FOLLOW_GROUPS=N): on mongo-java-server sharing
# one server, on FerretDB each group on its own, its sources alone there;
# REMODEL_FOLLOW_CONFIG=WORDS (e.g. "java changelog") and
# REMODEL_FOLLOW_PLAN=NAME run a part.
#   REMODEL=build/remodel bash tests/cli/test_online_follow.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "follow: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
W=$ROOT/tests/transforms/app_writer.py
T0=$T
trap '[ "$BASHPID" != "$$" ] || { for d in "$T0"/*/srv "$T0"/*/g*/srv; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T0"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms
# FerretDB's oplog large enough for every write of the suite: the history
# is never lost, so a sync following the log must find every change there.
export PEERS_OPLOG_BYTES=$((64 << 20))
N1=${REMODEL_FOLLOW_WRITES:-80}   # writes during the run
N2=${REMODEL_FOLLOW_WRITES2:-50}  # writes during follow (or repeated syncs)
JOBS=${REMODEL_FOLLOW_JOBS:-4}
NGROUPS=${REMODEL_FOLLOW_GROUPS:-3}
# follow is there when it answers --help.
FOLLOW=
"$REMODEL" online follow --help >/dev/null 2>&1 && FOLLOW=1

PL=$T0/plans
mkdir -p "$PL"
sed 's/"crm\./"emb./g' "$ROOT/dumps/plans/embed-tasks.json" >"$PL/embed.json"
cat >"$PL/extract.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "ext.people", "path": "addresses", "to": "ext.addresses",
               "style": "parentRef", "parentField": "person_id", "ordinalField": "n"}}]}
EOF
cat >"$PL/denorm.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shopd.orders", "from": "shopd.customers", "localField": "cust",
                   "foreignField": "code", "fields": {"cust_name": "name", "cust_tier": "tier"}}}]}
EOF
cat >"$PL/summary.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "shops.customers", "from": "shops.orders", "localField": "code",
                 "foreignField": "cust",
                 "fields": {"orders": {"$count": {}}, "total": {"$sum": "$amount"},
                            "last": {"$max": "$ts"}, "statuses": {"$addToSet": "$status"}}}}]}
EOF
cat >"$PL/bucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor_id", "granularity": "hours",
                 "stats": {"temperature": ["count", "min", "max"]}}}]}
EOF
cat >"$PL/chain.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shopc.orders", "from": "shopc.customers", "localField": "cust",
                   "foreignField": "code", "fields": {"cust_tier": "tier"}}},
  {"embed": {"from": "shopc.orders", "into": "shopc.customers", "localField": "code",
             "foreignField": "cust", "as": "orders", "project": {"cust": 0}, "sort": {"ts": 1}}}]}
EOF

# The plans: NAME DB PROFILE BATCH RESULTS FINALIZE. RESULTS: each namespace
# the plan writes and the step whose result it ends in (COLL:STEP). BATCH
# gives every run some 40 batches or more, 20 ms apart, for the writes to
# fall into.
PLANS="embed emb tasks 20 people:1,tasks:1 finalize
chain shopc shop 20 customers:2,orders:2 finalize
extract ext people 3 people:1,addresses:1 -
denorm shopd shop 20 orders:1 -
summary shops shop 3 customers:1 -
bucket iot readings 20 buckets:1,readings:1 -"

# kinds PROFILE: what the writer must have done, all of it, over both phases.
kinds() {
    case $1 in
    tasks) echo "insert task,insert person,move task,update task,update person,delete task,delete person,replace task,replace person" ;;
    people) echo "insert person,move address,update address,push address,update person,empty addresses,delete person,replace person" ;;
    shop) echo "insert order,insert customer,move order,change code,update customer,update order,delete order,delete customer,replace order,replace customer" ;;
    readings) echo "insert reading,update reading,move reading in time,move reading to another series,delete reading,replace reading" ;;
    esac
}

# writer_check NAME PROFILE W1 W2: both phases' writers ended well, the
# first one's writes acknowledged before the run ended (> 0), every kind
# of write made.
writer_check() {
    local got
    got=$(pyin "$(kinds "$2")" "$3" "$4" <<'PYEOF' 2>&1
import json, sys
want = sys.argv[1].split(",")
w = [json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[2:]]
kinds = {}
for x in w:
    for k, v in x["kinds"].items():
        kinds[k] = kinds.get(k, 0) + v
missing = [k for k in want if not kinds.get(k)]
print("during run %s; missing kinds %s" % ("> 0" if w[0]["during"] > 0 else "0 of %d" % w[0]["ops"], missing))
PYEOF
)
    expect_eq "$1" "$got" "during run > 0; missing kinds []"
}

# note WHAT: with REMODEL_FOLLOW_TRACE set, the time and WHAT on stderr.
note() { [ -z "${REMODEL_FOLLOW_TRACE:-}" ] || echo "  [$(date +%T.%N | cut -c1-12)] $cfg: $*" >&2; }

# same NAME ARCHIVE NS=COLL...: online_same, connected to the server alone
# (FerretDB started with --repl-set-name names no reachable member).
same() { local uri="$uri?directConnection=true"; online_same "$@"; }

# excludes DB: --excludeCollection for every collection of DB that is not a
# source (the side-by-side results, their backups).
excludes() {
    pyrun -c 'import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
for n in sorted(c[sys.argv[2]].list_collection_names()):
    if "_remodel_" in n:
        print("--excludeCollection=" + n)' "$uri" "$1"
}

# scenario NAME DB PROFILE BATCH RESULTS FINALIZE (on the server at $uri,
# $cfg its name, $seed the writer's).
scenario() {
    local name=$1 db=$2 profile=$3 batch=$4 results=$5 fin=$6
    local P=$PL/$name.json tag="$cfg: $name" id map=() live=() backups=() r ns coll ex wpid rrc
    id=$(plan_id "$P")
    for r in ${results//,/ }; do
        coll=${r%:*}
        map+=("$db.$coll=${coll}_remodel_${id}_${r#*:}")
        live+=("$db.$coll=$coll")
    done

    note "$name: start"
    # mongo-java-server 1.46 builds an index without its collection's
    # lock (AbstractMongoCollection.addIndex, which the synchronized
    # collection does not wrap): an insert or update during the build can
    # fail with "Unknown error: null" (the index list changed under its
    # iteration; upstream issue 195; reproduced: a writer's inserts and
    # updates of crm.tasks alongside 400 createIndexes of new fields of
    # it, 5 writes failed so). The run's --create-indexes builds after
    # its first line, when the writer starts: on java the join indexes a
    # run would make are made first (its dry run names them), so that no
    # build meets the writer. FerretDB builds them during the writes.
    if [ "$kind" == java ]; then
        "$REMODEL" online run "$P" --uri "$uri" --dry-run --create-indexes 2>&1 >/dev/null |
            sed -n 's/^.*dry run: \([^ ]*\) has no index on "\([^"]*\)", by which the join .*$/\1 \2/p' |
            while read -r ns field; do
                py "c['${ns%%.*}']['${ns#*.}'].create_index('$field')" >/dev/null
            done
    fi
    # 1. The writer, connected and ready, writes from the run's first line
    # on (said before the run reads any source).
    rm -f "$T/ready" "$T/ended" "$T/run.err" "$T/w1" "$T/w2" "$T/w2.done" "$T/syncs.err"
    python3 "$W" write "$uri" "$profile" "$db" "$seed" "$N1" --ready "$T/ready" \
        --start "$T/run.err" --end "$T/ended" >"$T/w1" 2>"$T/w1.err" &
    wpid=$!
    for ((i = 0; i < 600; i++)); do [ -e "$T/ready" ] && break; kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
    note "$name: writer ready, run"
    "$REMODEL" online run "$P" --uri "$uri" --create-indexes --batch-size "$batch" --pause 20ms \
        >"$T/run.out" 2>"$T/run.err"
    rrc=$?
    touch "$T/ended"
    wait $wpid
    expect_eq "$tag: the writer ran to its end: exit 0" "$?:$(tail -c 300 "$T/w1.err")" "0:"
    # bucketize on mongo-java-server once made "two results for
    # iot.buckets with one _id" here: a reading moved to another series
    # while a batch read it (online_batch.c's series_only keeps it out).
    expect_eq "$tag: run while the application writes: exit 0" "$rrc" 0
    [ "$rrc" == 0 ] || echo "  run: $(tail -n 3 "$T/run.err")" >&2

    note "$name: run and writer done: $(tail -n 1 "$T/w1")"
    # The change log the configuration has, its history all there.
    run_rm online status "$P" --uri "$uri"
    expect_eq "$tag: status: capture $want_capture, no history lost" \
        "$rc:$(grep -c "^capture: $want_capture" "$T/out"):$(grep -c '^history' "$T/out")" "0:1:0"

    # 2. The writer again while follow runs, after a sync; without follow
    # (today), while syncs run one after another, each exit 0, the first
    # as the writer starts.
    # follow needs a change log: without one, syncs one after another.
    local follow=$FOLLOW
    [ "$want_capture" == "none (" ] && follow=
    if [ -n "$follow" ]; then
        run_rm online sync "$P" --uri "$uri"
        expect_eq "$tag: sync after the run: exit 0" "$rc" 0
    fi
    note "$name: phase 2"
    { python3 "$W" write "$uri" "$profile" "$db" $((seed + 1)) "$N2" >"$T/w2" 2>"$T/w2.err"
      echo $? >"$T/w2.done"; } &
    wpid=$!
    if [ -n "$follow" ]; then
        : >"$T/follow.err"
        "$REMODEL" online follow "$P" --uri "$uri" >"$T/follow.out" 2>"$T/follow.err" &
        local fpid=$! frc
        wait $wpid
        kill -INT $fpid 2>/dev/null
        # Bounded: a follow that does not stop is killed (and fails).
        for ((i = 0; i < 600; i++)); do kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
        kill -KILL $fpid 2>/dev/null
        wait $fpid
        frc=$?
        expect_eq "$tag: follow while the application writes, stopped by SIGINT: exit 0" "$frc" 0
        [ "$frc" == 0 ] || echo "  follow: $(tail -n 3 "$T/follow.err")" >&2
    else
        local syncs=0 bad=0
        while :; do
            "$REMODEL" online sync -q "$P" --uri "$uri" 2>>"$T/syncs.err" || bad=$((bad + 1))
            syncs=$((syncs + 1))
            [ -e "$T/w2.done" ] && break
        done
        wait $wpid
        expect_eq "$tag: syncs while the application writes (no change log to follow): each exit 0" "$bad of $syncs" "0 of $syncs"
        [ "$bad" == 0 ] || echo "  syncs: $(tail -n 3 "$T/syncs.err")" >&2
    fi
    expect_eq "$tag: the second writer ran to its end: exit 0" "$(cat "$T/w2.done"):$(tail -c 300 "$T/w2.err")" "0:"
    writer_check "$tag: the writer wrote during the run, every kind of write (both phases)" \
        "$profile" "$T/w1" "$T/w2"

    note "$name: phase 2 done: $(tail -n 1 "$T/w2")"
    # 3. The writes stopped: sync, verify.
    run_rm online sync "$P" --uri "$uri"
    expect_eq "$tag: sync, the writes stopped: exit 0" "$rc" 0
    note "$name: synced"
    run_rm online verify "$P" --uri "$uri"
    expect_eq "$tag: verify: exit 0, every result as the sources make it" \
        "$rc:$(cat "$T/err")" "0:remodel: verify: plan $name.json: every result as the sources make it"

    note "$name: verified"
    # 4. remodel run on a dump of the sources taken now.
    mapfile -t ex < <(excludes "$db")
    "$MONGODUMP" --uri "$uri" --db "$db" "${ex[@]}" --archive="$T/src-$name.archive" --quiet 2>"$T/err" ||
        fail "$tag: mongodump of the sources" "$(cat "$T/err")"
    "$REMODEL" run -q "$P" --from "$T/src-$name.archive" --to "$T/off-$name.archive" 2>"$T/err" ||
        fail "$tag: remodel run on the dump" "$(cat "$T/err")"
    note "$name: dumped, offline run"
    same "$tag: the results are remodel run's on a dump of the sources taken when the writes stopped" \
        "$T/off-$name.archive" "${map[@]}"
    note "$name: compared"
    if [ "$fin" == finalize ]; then
        run_rm online finalize "$P" --uri "$uri" --writes-stopped
        expect_eq "$tag: finalize --writes-stopped: exit 0" "$rc" 0
        [ "$rc" == 0 ] || echo "  finalize: $(tail -n 3 "$T/err")" >&2
        same "$tag: after finalize, the live namespaces are remodel run's" \
            "$T/off-$name.archive" "${live[@]}"
        for ns in $(python3 -c 'import sys, rmlib
print(" ".join(n for n in rmlib.read_archive(sys.argv[1])[0] if n.startswith(sys.argv[2] + ".")))' \
            "$T/src-$name.archive" "$db"); do
            backups+=("$ns=${ns#*.}_remodel_${id}_backup")
        done
        same "$tag: ... the originals kept as backups, as dumped" "$T/src-$name.archive" "${backups[@]}"
    fi
}

# group_plans G: group G's lines of PLANS (the plans dealt in turn to
# NGROUPS groups, REMODEL_FOLLOW_PLAN choosing one), each after its place
# in the list (from 1).
group_plans() {
    local k=0 line
    while read -r line; do
        k=$((k + 1))
        [ $(((k - 1) % NGROUPS)) == "$1" ] || continue
        [[ " $line " == *" ${REMODEL_FOLLOW_PLAN:-${line%% *}} "* ]] || continue
        echo "$k $line"
    done <<<"$PLANS"
}

# group_server KIND LOG PLANS: a server in $T/srv ($uri) holding the
# sources of the plans listed (group_plans), its oplog begun again after
# the load.
group_server() {
    local dbs
    dbs=" $(awk '{print $3}' "$3" | tr '\n' ' ')"
    online_start "$1" "$T/srv" 0 $2 || return 1
    # The sample: crm.* as emb.*, crm.people as ext.people, iot.readings;
    # the generated shop three times.
    if ! { { [[ $dbs != *" emb "* ]] ||
             "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
                 --nsFrom 'crm.$c$' --nsTo 'emb.$c$' --noIndexRestore --quiet; } &&
           { [[ $dbs != *" iot "* ]] ||
             "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'iot.readings' \
                 --noIndexRestore --quiet; } &&
           { [[ $dbs != *" ext "* ]] ||
             "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.people' \
                 --nsFrom 'crm.people' --nsTo 'ext.people' --noIndexRestore --quiet; } &&
           { [[ $dbs != *" shopd "* ]] || pyrun "$W" load "$uri" shopd 1; } &&
           { [[ $dbs != *" shops "* ]] || pyrun "$W" load "$uri" shops 1; } &&
           { [[ $dbs != *" shopc "* ]] || pyrun "$W" load "$uri" shopc 1; }; } 2>"$T/err"; then
        fail "$cfg: restore the sources" "$(cat "$T/err")"
        "$SERVER" stop "$T/srv" >/dev/null 2>&1
        return 1
    fi
    # FerretDB's oplog begun again after the load: the follows read it
    # round after round.
    fresh_log "$T/srv"
}

# config KIND [changelog]: a server of that kind, the sources restored, then
# every plan.
config() {
    local kind=$1 log=${2:-} line db
    cfg=$kind$([ -n "$log" ] && echo " with its change log" || echo " without a change log")
    case $kind:$log in
    ferretdb:changelog) want_capture="oplog (from ts" ;;
    java:changelog) want_capture="change streams (resume point" ;;
    *) want_capture="none (" ;;
    esac
    # The plans in NGROUPS groups at once (each plan on its own database),
    # the writer's seed by the plan's place in the list. On FerretDB each
    # group has a server of its own: it decodes every entry of its oplog
    # at each read (the follows read it round after round), so a server
    # holds only its group's writes; a start of mongo-java-server (a JVM)
    # costs more than the groups sharing one.
    local g apart=
    [ "$kind" == ferretdb ] && apart=1
    if [ -z "$apart" ]; then
        NGROUPS=1 group_plans 0 >"$T/plans"
        group_server "$kind" "$log" "$T/plans" || return
    fi
    for ((g = 0; g < NGROUPS; g++)); do
        mkdir -p "$T/g$g"
        (
            T=$T/g$g
            group_plans $g >"$T/plans"
            [ -s "$T/plans" ] || exit 0
            [ -z "$apart" ] || group_server "$kind" "$log" "$T/plans" || exit 0
            local line k
            while read -r k line; do
                seed=$((k * 10))
                # shellcheck disable=SC2086
                scenario $line
            done <"$T/plans"
            [ -z "$apart" ] || "$SERVER" stop "$T/srv" >/dev/null 2>&1
        ) >"$T/g$g.out" 2>"$T/g$g.err" &
    done
    wait
    for ((g = 0; g < NGROUPS; g++)); do cat "$T/g$g.out"; cat "$T/g$g.err" >&2; done
    [ -n "$apart" ] || "$SERVER" stop "$T/srv" >/dev/null 2>&1
}

# Without a change log, the rescan is remodel's own and the same on any
# server: on mongo-java-server alone (online_kind in lib.sh;
# REMODEL_TEST_BOTH=1 adds FerretDB's).
CONFIGS="ferretdb changelog
java changelog
$(for k in $(online_kind java); do echo "$k"; done)"
n=0
while read -r kind log; do
    [[ "$kind $log" == *${REMODEL_FOLLOW_CONFIG:-}* ]] || continue
    n=$((n + 1))
    mkdir -p "$T0/$n"
    ( T=$T0/$n; config $kind $log ) >"$T0/$n.out" 2>"$T0/$n.err" &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 0.2; done
done <<<"$CONFIGS"
wait
for ((i = 1; i <= n; i++)); do cat "$T0/$i.out"; cat "$T0/$i.err" >&2; done
