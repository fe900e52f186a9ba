#!/usr/bin/env bash
# The safety properties of one deployment, for --to-uri (issue 54 item 5),
# on the plan and data of test_online_to_uri.sh (shop.kids embedded into
# shop.parents; shop.other, which it does not touch, copied as it is), in
# both directions (FerretDB with its oplog to mongo-java-server, and
# mongo-java-server with its change streams to FerretDB):
#  - run --to-uri --dry-run writes nothing on either server (their
#    databases, collections, indexes and every document, byte for byte,
#    before and after) and says what it would do; finalize has no dry
#    run: refused (exit 2), saying so, nothing written;
#  - credentials of both never printed: a user and a password in each
#    URI (neither test server speaks SASL: each command stops at the
#    handshake, the source's or, the source answering, the destination's);
#    no stdout or stderr of status, status --json, a dry run, verify,
#    follow (the source's in MONGODB_URI), finalize, a plan error, a
#    server down, with REMODEL_ONLINE_TRACE=1, holds a user or password;
#    an unescaped @ refused naming --to-uri, without quoting it;
#  - a destination written by someone else after run (a result changed,
#    one inserted under the result's name): verify --to-uri finds both
#    (exit 1, named as within one deployment, both in --differences);
#    then (FerretDB source) sync rescans in full, saying why, and verify
#    is clean, or (mongo-java-server source) finalize's drain does;
#  - the source (FerretDB, which keeps its data and oplog) stopped and
#    started again on its directory and port during follow --to-uri,
#    written after it: follow rides it out (or stops with one error naming
#    the source), a follow after it applies the writes, verify is clean;
#  - DDL on the source during follow --to-uri (shop.kids dropped and made
#    again, other documents): follow rescans once, saying so, the results
#    are remodel run's over the source then; the pair is the same (FerretDB
#    gives the sources' UUIDs, which change; its hosts do not);
#  - after each direction, finalize --writes-stopped: the destination
#    equals remodel run offline over the source's mongodump, byte for
#    byte, under the final names only.
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_safety.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
# REMODEL_ONLINE_LEASE_MS is a hook of the tests' build only.
use_faulty || exit 1
to_uri_setup "to-uri safety"
to_uri_cleanup() { kill $(jobs -p) 2>/dev/null; }
# A short lease: a follow stopped by a restart frees it soon. Not so
# short that a loaded machine stalls its renewals past it (a follow whose
# renewal is late stops, as it must: at 3 s, a load of 10 did that).
export REMODEL_ONLINE_LEASE_MS=8000

seed() { seed_shop 400 1200 50; }
both() { echo "src[$(uri=$SRC everything)] dst[$(uri=$DST everything)]"; }
colls() { uri=$1 py 'print(",".join(sorted(c.shop.list_collection_names())))'; }
# with_creds URI USER PASS: URI with USER:PASS@ after the scheme.
with_creds() { echo "${1/mongodb:\/\//mongodb://$2:$3@}"; }
# leaked NAME FILE...: none of the files holds a secret of either URI.
leaked() {
    local n=$1 f hits=""
    shift
    for f in "$@"; do
        grep -l -e 's3cr3t-SRC' -e 's3cr3t-DST' -e 'u%40src' -e 'u@src' -e 'u%40dst' -e 'u@dst' \
            "$f" >/dev/null 2>&1 && hits="$hits $(basename "$f"): $(grep -m1 -e s3cr3t -e 'u%40' -e 'u@' "$f")"
    done
    expect_eq "$n" "${hits:-none}" "none"
}

# round: follow's last round, in the plan's record on the destination.
round() { uri=$DST py 'd = c.remodel.plans.find_one({"_id": sys.argv[2]}) or {}
print(d.get("follow", {}).get("round", 0))' "$(pid emb)"; }
# rounds N: waits until follow's record shows round N or past (a
# generous deadline, 180 s: a loaded machine slows every round).
rounds() {
    local r end=$((SECONDS + 180))
    while [ $SECONDS -lt $end ]; do
        r=$(round 2>/dev/null)
        [ "${r:-0}" -ge "$1" ] && return 0
        kill -0 "$fp" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
# follow_bg ARGS...: follow --to-uri in the background, its pid in $fp.
follow_bg() {
    : >"$T/follow.err"
    "$REMODEL" online follow "$P" --uri "$SRC" --to-uri "$DST" "$@" >"$T/follow.out" 2>"$T/follow.err" &
    fp=$!
}
# follow_stop: SIGTERM to follow, its status in $frc.
follow_stop() { kill -TERM "$fp" 2>/dev/null; wait "$fp"; frc=$?; }

# ddl_case: 3. DDL on the source during follow --to-uri: shop.kids
# dropped and made again (its index first, other documents); follow
# rescans once, says so, and the destination's results are remodel run's
# over the source as it is then.
ddl_case() {
    local r0
    # (long pauses: the drop and the create, index first, fall between two
    # rounds, not into a rescan that would find no index)
    r0=$(round)
    follow_bg --pause 1500ms
    rounds $((r0 + 2)) || fail "$from->$to: ddl: follow's first rounds" "$(tail -n 3 "$T/follow.err")"
    r0=$(round)
    uri=$SRC py 'k = c.shop.kids
k.drop()
k.create_index("owner")
k.insert_many([{"_id": 2000 + i, "owner": i % 350, "x": -i} for i in range(900)])'
    rounds $((r0 + 4)) || fail "$from->$to: ddl: follow's rounds after the drop" "$(tail -n 3 "$T/follow.err")"
    follow_stop
    cp "$T/follow.err" "$T/ddl.err"
    # The drop and the create are two events: a round may fall between
    # them on a loaded machine (the script's own start takes a second or
    # more), and each is then a rescan of its own, rightly. Not at every
    # round: four rounds ran after them.
    n=$(grep -c 'rescanned in full' "$T/follow.err")
    expect_eq "$from->$to: shop.kids dropped and made again during follow --to-uri: rescanned once or twice, said, not at every round (exit 0)" \
        "$frc:$([ "$n" -ge 1 ] && [ "$n" -le 2 ] && echo said || echo "$n rescans")" "0:said"
    [ "$frc" == 0 ] || sed 's/^/  /' "$T/follow.err" | tail -n 3 >&2
    uri=$SRC offline_run emb shop
    uri=$DST online_same "$from->$to: ... the destination's results equal remodel run offline over the source as it is then" \
        "$T/emb.archive" shop.parents="$R"
}

# restart_case: 5. the source stopped and started again (its directory,
# its port; FerretDB keeps its data and its oplog) during follow --to-uri,
# written after it; follow rides it out or stops with one error naming
# the source; a follow after it applies the writes.
restart_case() {
    local r0 port
    r0=$(round)
    follow_bg --pause 300ms
    rounds $((r0 + 2)) || fail "$from->$to: restart: follow's first rounds" "$(tail -n 3 "$T/follow.err")"
    r0=$(round)
    port=${SRC##*:} port=${port%%/*}
    "$SERVER" stop "$T/srv-src-$from" >/dev/null 2>&1
    sleep 1
    online_start "$from" "$T/srv-src-$from" "$port" changelog
    expect_eq "$from->$to: the source restarted during follow --to-uri, on its port" "$uri" "$SRC"
    uri=$SRC py 'c.shop.parents.update_one({"_id": 3}, {"$set": {"name": "after the restart"}})
c.shop.kids.insert_one({"_id": 7777, "owner": 3, "x": 77})
c.shop.parents.delete_one({"_id": 4})'
    if kill -0 "$fp" 2>/dev/null; then
        rounds $((r0 + 3))
        follow_stop
    else
        wait "$fp"; frc=$?
    fi
    cp "$T/follow.err" "$T/restart.err"
    echo "# $from->$to: follow across the restart: exit $frc; $(grep -v '^remodel: follow: round' "$T/follow.err" | tail -n 3 | tr '\n' '|')" >&2
    if [ "$frc" == 0 ]; then
        pass "$from->$to: ... follow rode it out (exit 0 at SIGTERM)"
    else
        expect_eq "$from->$to: ... follow stopped (exit $frc) with one error, naming the source" \
            "$(grep -c '^remodel: error: ' "$T/follow.err"):$(grep -c '^remodel: error: .*source' "$T/follow.err")" "1:1"
    fi
    r0=$(round)
    follow_bg --pause 300ms
    rounds $((r0 + 2)) || fail "$from->$to: restart: a follow after it" "$(tail -n 3 "$T/follow.err")"
    follow_stop
    expect_eq "$from->$to: ... a follow after it follows (exit 0)" "$frc" "0"
    two verify
    expect_eq "$from->$to: ... then verify --to-uri: the writes after the restart followed (exit 0)" "$rc" "0"
    [ "$rc" == 0 ] || sed 's/^/  /' "$T/err" | tail -n 4 >&2
}

# written_case HOW: 4. a destination written by someone else after run (a
# result changed, one inserted under the result's name): verify --to-uri
# finds both (exit 1, as within one deployment); HOW repairs it: "sync"
# (then verify is clean) or "finalize" (its drain; judged after it).
written_case() {
    uri=$DST py 'c.shop[sys.argv[2]].update_one({"_id": 7}, {"$set": {"name": "written on the destination"}})
c.shop[sys.argv[2]].insert_one({"_id": 99999, "name": "not from the source"})' "$R"
    two verify --differences "$T/diff.txt"
    expect_eq "$from->$to: results written on the destination: verify --to-uri finds them (exit 1)" "$rc" "1"
    expect_message "$from->$to: ... naming the first, as within one deployment" \
        "1 documents in shop.$R that no range makes" \
        "verify: plan emb.json: 2 result(s) differ, the first: 7 in shop.parents, 99999 in shop.parents"
    expect_eq "$from->$to: ... --differences holds both _ids" \
        "$(grep -c . "$T/diff.txt") $(grep -c -e '"7"' -e '"99999"' "$T/diff.txt")" "2 2"
    if [ "$1" == sync ]; then
        two sync
        expect_eq "$from->$to: ... sync --to-uri after it (exit 0)" "$rc" "0"
        expect_message "$from->$to: ... rescans in full, saying why, rewriting and removing them" \
            "rescanned in full (verify found 2 result(s) on" "and the source's change log shows no write since the last point" \
            "sync: plan emb.json: 2 result(s) rewritten or removed"
        two verify
        expect_eq "$from->$to: ... then verify --to-uri: nothing differs (exit 0)" "$rc" "0"
    fi
}

for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    pair_start "$from" "$to" || continue
    online_start ferretdb "$T/srv-other-$from" 0 || continue
    OTHER=$uri

    # ---- 1. dry runs ----
    before=$(both)
    two run --dry-run
    expect_eq "$from->$to: run --to-uri --dry-run (exit 0)" "$rc" "0"
    expect_message "$from->$to: ... says what it would do, recording no point" \
        "a dry run records no start point)" "step 1 (embed) shop.parents: 400 read, 400 would write" \
        "step 1 (embed) shop.kids: 1200 read, 0 would write"
    expect_eq "$from->$to: ... nothing written on either server (every database, collection, document)" \
        "$(both)" "$before"
    two finalize --writes-stopped --dry-run
    expect_eq "$from->$to: finalize --to-uri --dry-run: refused (exit 2)" "$rc" "2"
    expect_message "$from->$to: ... saying which commands have one" \
        "online: --dry-run: finalize has no dry run (run, verify and sync have)"
    expect_eq "$from->$to: ... nothing written on either server" "$(both)" "$before"

    # ---- 2. credentials never printed ----
    CSRC=$(with_creds "$SRC" 'u%40src' 's3cr3t-SRC')
    CDST=$(with_creds "$DST" 'u%40dst' 's3cr3t-DST')
    COTHER=$(with_creds "$OTHER" 'u%40src' 's3cr3t-SRC')
    cred() { # cred NAME CMD ARGS...: remodel online CMD with the credentialed pair
        local n=$1; shift
        REMODEL_ONLINE_TRACE=1 "$REMODEL" online "$1" "$P" --uri "$CSRC" --to-uri "$CDST" "${@:2}" \
            >"$T/cred-$n.out" 2>"$T/cred-$n.err"
        echo $? >"$T/cred-$n.rc"
    }
    cred status status
    cred json status --json
    cred dry run --dry-run
    cred verify verify
    echo '{"remodel": 1, "steps": [{"embed": {"from": "shop.kids"}}]}' >"$T/plans/bad.json"
    REMODEL_ONLINE_TRACE=1 "$REMODEL" online run "$T/plans/bad.json" --uri "$CSRC" --to-uri "$CDST" \
        >"$T/cred-plan.out" 2>"$T/cred-plan.err"
    echo $? >"$T/cred-plan.rc"
    REMODEL_ONLINE_TRACE=1 "$REMODEL" online status "$P" --uri "$CSRC" --to-uri mongodb://u%40dst:s3cr3t-DST@127.0.0.1:1/ \
        --retry-for 0s >"$T/cred-down.out" 2>"$T/cred-down.err"
    echo $? >"$T/cred-down.rc"
    # The destination's credentials only: the source answers, traced.
    REMODEL_ONLINE_TRACE=1 "$REMODEL" online status "$P" --uri "$SRC" --to-uri "$CDST" --json \
        >"$T/cred-dst.out" 2>"$T/cred-dst.err"
    echo $? >"$T/cred-dst.rc"
    # The source's in MONGODB_URI, the destination's on the command line.
    MONGODB_URI=$CSRC REMODEL_ONLINE_TRACE=1 "$REMODEL" online follow "$P" --to-uri "$CDST" \
        --retry-for 0s >"$T/cred-env.out" 2>"$T/cred-env.err"
    echo $? >"$T/cred-env.rc"
    # A password with an unescaped @: refused without quoting it.
    "$REMODEL" online finalize "$P" --uri "$SRC" --to-uri "${DST/mongodb:\/\//mongodb://u:s3cr3t-DST@x@}" \
        --writes-stopped >"$T/cred-at.out" 2>"$T/cred-at.err"
    echo $? >"$T/cred-at.rc"
    echo "# $from->$to: credentialed: $(for n in status json dry verify plan down dst env at; do printf '%s=%s ' $n "$(cat "$T/cred-$n.rc")"; done)" >&2
    expect_eq "$from->$to: credentialed pairs: each command fails (exit 1; a plan error, an unescaped @: 2)" \
        "$(for n in status json dry verify plan down dst env at; do printf '%s ' "$(cat "$T/cred-$n.rc")"; done)" \
        "1 1 1 1 2 1 1 1 2 "
    expect_eq "$from->$to: ... naming the side refused: the source, or the destination once the source answered" \
        "$(grep -c 'the source (--uri)' "$T/cred-status.err") $(grep -c 'the destination (--to-uri)' "$T/cred-dst.err") $(grep -c '^-> \|^remodel-online: trace\|hello\|buildInfo' "$T/cred-dst.err" | awk '{print ($1 > 0)}')" \
        "1 1 1"
    expect_eq "$from->$to: ... an unescaped @ in --to-uri's password: refused, naming --to-uri alone" \
        "$(cat "$T/cred-at.err")" \
        "remodel: error: the destination (--to-uri): not a MongoDB connection string: a user name or password must percent-encode '@', ':', '/', '?', '#', '[', ']' and '%' (an '@' is %40, a '/' %2F)"
    leaked "$from->$to: credentials of both never printed: status, --json, dry run, verify, follow, finalize, a plan error, a server down, MONGODB_URI, traced" \
        "$T"/cred-*.out "$T"/cred-*.err

    # ---- the run, then 4. a destination written by someone else ----
    two run -q
    expect_eq "$from->$to: run --to-uri (exit 0)" "$rc:$(cat "$T/err")" "0:"
    R=parents # the results have their final names on the destination from the start
    if [ "$from" == ferretdb ]; then
        written_case sync
        restart_case
        # Its collections' UUIDs change with the DDL, its hosts do not: the
        # same pair (shell-ext/state/online_pair_record.c).
        ddl_case
    else
        ddl_case
        written_case finalize
    fi
    two finalize --writes-stopped
    expect_eq "$from->$to: finalize --writes-stopped (exit 0)" "$rc" "0"
    [ "$from" == ferretdb ] || expect_message "$from->$to: ... its drain rescans in full the results written on the destination" \
        "rescanned in full (verify found 2 result(s) on"
    [ "$rc" == 0 ] || sed 's/^/  /' "$T/err" | tail -n 4 >&2
    uri=$SRC offline_run emb shop
    uri=$DST online_same "$from->$to: the destination equals remodel run offline over the source's dump, byte for byte" \
        "$T/emb.archive" shop.parents=parents shop.kids=kids shop.other=other
    expect_eq "$from->$to: ... only the final names there" "$(colls "$DST")" "kids,other,parents"
    for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done
done
