#!/usr/bin/env bash
# From one deployment to another (--to-uri, issue 54), across vendors in
# both directions: FerretDB (with its oplog) to mongo-java-server, and
# mongo-java-server (with its oplog) to FerretDB. A plan embeds shop.kids
# into shop.parents; shop.other, which it does not touch, has an index.
#  - a destination already holding shop.parents: run refused (exit 1),
#    naming it, nothing written on either side; --drop drops it;
#  - run killed (kill -9) mid-copy, resumed: it completes, the results
#    under their final names (nothing side by side, before finalize);
#  - another source against the same destination: refused (exit 2),
#    naming both pairs;
#  - status --json's canCommit: false before a verify and after a source
#    write, true after a clean verify; sync rewrites from the source's
#    log; follow runs until SIGINT; rollback --carry-writes before the commit
#    refused (nothing to carry back: tests/cli/test_online_to_uri_back.sh
#    goes back after one);
#  - finalize without --writes-stopped refused (exit 2); with it, the
#    destination's shop equals `remodel run` offline over a mongodump of
#    the source, byte for byte, shop.other with its index; the source has
#    no state database and its collections as they were; after it, sync
#    is refused and finalize says it was done;
#  - a plan with an intermediate result (two steps on shop.parents): it
#    is beside the final names until finalize; rollback before the commit
#    drops the results, the intermediate and the copy, and forgets the
#    pair; finalize cut after the intermediate's drop: sync refused, then
#    finalize completes, only the final names left, equal to the offline
#    run byte for byte.
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
use_faulty || exit 1
to_uri_setup "to-uri"
seed() { seed_shop 400 1200 50; }
colls() { uri=$1 py 'print(",".join(sorted(c.shop.list_collection_names())))'; }
# A plan whose first step's result of shop.parents is an intermediate.
P2=$T/plans/two.json
cat >"$P2" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "shop.kids", "into": "shop.parents", "localField": "_id", "foreignField": "owner", "as": "kids", "project": {"owner": 0}}},
  {"set": {"in": "shop.parents", "fields": {"design": 2}}}
]}
EOF
tw() { run_rm online "$1" "$P2" --uri "$SRC" --to-uri "$DST" "${@:2}"; }

for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    pair_start "$from" "$to" || continue
    online_start ferretdb "$T/srv-other-$from" 0 || continue
    OTHER=$uri

    # ---- a destination holding a namespace the run would write ----
    uri=$DST py 'c.shop.parents.insert_one({"_id": "old"})'
    two run -q
    expect_eq "$from->$to: a destination holding shop.parents: refused (exit 1)" "$rc" "1"
    expect_message "$from->$to: ... naming it, nothing written" \
        "already holds shop.parents, which this run would write: nothing was written (--drop drops it first)"
    # (mongo-java-server makes a database of any name a read asks: its
    # state database may be listed, empty)
    expect_eq "$from->$to: ... the destination as it was, no state recorded there" \
        "$(uri=$DST py 'print(sorted(c.shop.list_collection_names()), c.shop.parents.count_documents({}),
sum(c.remodel[n].count_documents({}) for n in c.remodel.list_collection_names()))')" \
        "['parents'] 1 0"

    # ---- run --drop, killed mid-copy (kill -9), resumed ----
    "$REMODEL" online run "$P" --uri "$SRC" --to-uri "$DST" --drop -q --batch-size 10 --pause 40ms \
        >"$T/out" 2>"$T/err.kill" &
    pid=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        n=$(uri=$DST py 'print(c.shop.parents.count_documents({}))')
        [ "$n" -ge 40 ] && break
        sleep 0.05
    done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    expect_eq "$from->$to: run killed (kill -9) mid-copy: some results written, not all" \
        "$([ "$n" -ge 40 ] && [ "$n" -lt 400 ] && echo mid || echo "at $n")" "mid"
    # ---- another source against the same destination ----
    run_rm online status "$P" --uri "$OTHER" --to-uri "$DST"
    expect_eq "$from->$to: another source against this destination: refused (exit 2)" "$rc" "2"
    [ "$from" = java ] && said=mongo-java-server || said=ferretdb
    expect_message "$from->$to: ... naming both pairs" "plan emb.json: recorded from $said" \
        "this command names ferretdb" "give the pair its run began with"
    two run -q
    expect_eq "$from->$to: the run resumed completes (exit 0)" "$rc:$(cat "$T/err")" "0:"
    expect_eq "$from->$to: ... the results under their final names from the start, nothing side by side" \
        "$(colls "$DST")" "kids,other,parents"

    # ---- status --json: canCommit ----
    cancommit() { two status --json --max-lag 1m; python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); print(d["canCommit"], d["toUri"]["why"])' "$T/out"; }
    expect_eq "$from->$to: status --json before any verify: canCommit false, saying why" \
        "$(cancommit)" "False no verify yet (remodel online verify --to-uri)"
    two verify -q
    expect_eq "$from->$to: verify --to-uri: every result as the source makes it (exit 0)" "$rc" "0"
    expect_eq "$from->$to: ... then canCommit true" "$(cancommit)" "True None"
    uri=$SRC py 'c.shop.parents.update_one({"_id": 5}, {"$set": {"name": "changed"}})'
    two verify -q
    expect_eq "$from->$to: a source written since: verify finds it (exit 1), canCommit false" \
        "$rc $(cancommit)" "1 False the last verify found results that differ (sync, then verify)"

    two sync
    expect_message "$from->$to: sync --to-uri rewrites it on the destination (from the source's log)" \
        "sync: plan emb.json: 1 result(s) rewritten or removed"
    # follow follows the source's log until a signal (more in
    # tests/cli/test_online_to_uri_follow.sh). --foreground: one SIGINT,
    # to follow alone; timeout also signals its process group, and a
    # second SIGINT ends a command at once (exit 130), by design.
    timeout --foreground --preserve-status -s INT 4 "$REMODEL" online follow "$P" --uri "$SRC" --to-uri "$DST" \
        --pause 200ms >"$T/out" 2>"$T/err"
    expect_eq "$from->$to: follow --to-uri: follows the source's log until SIGINT (exit 0)" \
        "$?:$(grep -c 'follow: plan emb.json: stopped after [0-9]* rounds (interrupted)' "$T/err")" "0:1"
    two rollback --carry-writes
    expect_eq "$from->$to: rollback --carry-writes --to-uri before the commit: refused (exit 2)" "$rc" "2"
    expect_message "$from->$to: ... nothing to carry back, said" \
        "plan emb.json was not committed on" "so there is nothing to carry back"

    # ---- finalize ----
    two finalize
    expect_eq "$from->$to: finalize without --writes-stopped prepares: the window estimated, nothing committed (exit 0)" \
        "$rc $(uri=$DST py 'print(c.remodel.pairs.find_one().get("committed"))')" "0 None"
    expect_message "$from->$to: ... its phases said" "finalize: the cut-over's window, estimated: about" \
        "the drain" "the verify" "the copied namespaces brought to the source's state" "the confirmation" \
        "the switch of the pair's record" "then run remodel online finalize"
    uri=$SRC py 'c.shop.kids.insert_one({"_id": 5000, "owner": 7, "x": -1})
c.shop.other.delete_one({"_id": 3})'
    two finalize --writes-stopped --max-window 0
    expect_eq "$from->$to: finalize --writes-stopped (exit 0)" "$rc" "0"
    expect_message "$from->$to: ... committed, the copy brought over from the source's log, the source's point" \
        "finalize: plan emb.json committed on" "2 result(s) under their final names" \
        "0 namespace(s) copied whole" "the source as of" "finalize: the window, estimated by the prepare" \
        "the copied namespaces: 1 event(s) of the source's change log since the last copy" \
        "finalize: the writes were stopped for"
    [ "$from" = ferretdb ] && point="its oplog at Timestamp(" || point="not a replica set: no oplog read"
    expect_message "$from->$to: ... the source's log point it reached" "$point"
    uri=$SRC offline_run emb shop
    uri=$DST online_same "$from->$to: the destination equals remodel run offline over the source's dump, byte for byte" \
        "$T/emb.archive" shop.parents=parents shop.kids=kids shop.other=other
    expect_eq "$from->$to: ... only the final names there" "$(colls "$DST")" "kids,other,parents"
    expect_eq "$from->$to: ... shop.other's index copied" \
        "$(uri=$DST py 'print(sorted(i["name"] for i in c.shop.other.list_indexes()))')" "['_id_', 'v_1']"
    expect_eq "$from->$to: the source: its collections as they were, no state database" \
        "$(colls "$SRC") $(uri=$SRC py 'print("remodel" in c.list_database_names())')" \
        "kids,other,parents False"
    expect_eq "$from->$to: the pair recorded committed on the destination" \
        "$(uri=$DST py 'd = c.remodel.pairs.find_one(); print(d["committed"], d["copied"])')" \
        "True ['shop.other']"
    two sync -q
    expect_eq "$from->$to: sync after the commit: refused (exit 2), saying why" \
        "$rc $(grep -c 'was committed on .*: its results have their final names there' "$T/err")" "2 1"
    two finalize --writes-stopped
    expect_eq "$from->$to: finalize again: committed already, said (exit 0)" \
        "$rc $(grep -c 'finalize: plan emb.json was committed on .* already' "$T/err")" "0 1"

    # ---- a plan with an intermediate result (two steps on shop.parents) ----
    I=parents_remodel_$(plan_id "$P2")_1
    tw run -q --drop
    expect_eq "$from->$to: two steps: run --drop (exit 0): the final results under their names, the intermediate beside them" \
        "$rc $(colls "$DST")" "0 kids,other,parents,$I"
    tw rollback
    expect_eq "$from->$to: ... rollback before the commit: the results, the intermediate and the copy dropped, the pair forgotten (exit 0)" \
        "$rc [$(colls "$DST")] $(uri=$DST py 'print(c.remodel.pairs.count_documents({"plan": "two.json"}))')" "0 [] 0"
    expect_message "$from->$to: ... each said" "rollback: dropped shop.parents on the destination" \
        "rollback: dropped shop.$I on the destination" "rollback: dropped shop.other on the destination (copied as it is)"
    tw run -q
    expect_eq "$from->$to: ... run again, without --drop: nothing held there now (exit 0)" "$rc" "0"
    # Finalize's one drop: the intermediate's (shop.other is brought to
    # the source's state from its change log, not dropped and copied).
    REMODEL_ONLINE_FAULT=drop:1:cut-after tw finalize --writes-stopped --retry-for 0
    expect_eq "$from->$to: ... finalize, the intermediate's drop sent, its reply lost: exit 1, nothing committed" \
        "$rc $(uri=$DST py 'd = c.remodel.pairs.find_one({"plan": "two.json"}); print(d.get("finishing"), d.get("committed"))')" \
        "1 True None"
    tw sync -q
    expect_eq "$from->$to: ... then sync refused (exit 2): finalize completes it" \
        "$rc $(grep -c 'while dropping the intermediate results: finalize --writes-stopped again' "$T/err")" "2 1"
    tw finalize --writes-stopped
    expect_eq "$from->$to: ... finalize again completes (exit 0): only the final names there" \
        "$rc $(colls "$DST")" "0 kids,other,parents"
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" | tail -n 4 >&2
    uri=$SRC offline_run two shop
    uri=$DST online_same "$from->$to: ... the destination equals remodel run offline, byte for byte" \
        "$T/two.archive" shop.parents=parents shop.kids=kids shop.other=other
    for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done
done

# ---- options without a destination ----
run_rm online run "$P" --uri mongodb://127.0.0.1:1 --drop
expect_eq "--drop without --to-uri: refused (exit 2)" "$rc" "2"
expect_message "... saying it needs --to-uri" "they need --to-uri"
run_rm online run "$P" --uri mongodb://127.0.0.1:1 --to-uri mongodb://127.0.0.1:2 --create-indexes
expect_eq "--to-uri --create-indexes: refused (the source is only read, exit 2)" "$rc" "2"
