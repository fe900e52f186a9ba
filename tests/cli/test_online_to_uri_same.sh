#!/usr/bin/env bash
# --to-uri naming the source's own deployment, and what --drop may drop
# (issue 62 item 1), on FerretDB and on mongo-java-server:
#  - one server, its data in two databases (shop, which the plan embeds
#    kids into parents in, and crm, which the plan never names): --to-uri
#    spelled otherwise than --uri (localhost for 127.0.0.1, no slash, an
#    option added, both) with run, run --drop, follow, finalize and
#    rollback: each refused (exit 2), saying why, and every database,
#    collection, index and document byte as it was;
#  - the same spellings with --dry-run: nothing written either way;
#  - two servers, the destination holding crm.notes (a database the plan
#    does not name) and shop.parents: run --drop refused (exit 1) naming
#    crm.notes, nothing dropped on the destination; without --drop, the
#    refusal names both; --drop with --nsInclude naming crm.* (and shop.*)
#    drops both and the run completes, crm.notes the source's.
# CI_KINDS: the servers (default "ferretdb java").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_same.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
to_uri_setup "to-uri same deployment"

seed() {
    seed_shop 60 180 20
    py 'c.crm.notes.insert_many([{"_id": i, "text": "n%d" % i} for i in range(30)])
c.crm.notes.create_index("text")'
}
# (everything, lib_to_uri.sh: the state database "remodel" left out, where
# the marker is written and removed: it is looked at apart.)
everything_app() { everything remodel; }

for kind in ${CI_KINDS:-ferretdb java}; do
    online_start "$kind" "$T/srv-one-$kind" 0 changelog || continue
    SRC=$uri
    seed
    before=$(everything_app)
    port=$(port_of "$SRC")
    case $before in *"crm.notes:30"*"shop.kids:180"*"shop.other:20"*"shop.parents:60"*) ;;
        *) fail "$kind: seeded" "$before" ;; esac
    for spelled in "mongodb://localhost:$port/" "mongodb://127.0.0.1:$port" \
                   "mongodb://127.0.0.1:$port/?appname=x" "mongodb://localhost:$port/?directConnection=true"; do
        for cmd in "run --drop" "run" "follow" "finalize --writes-stopped" "rollback"; do
            # shellcheck disable=SC2086
            run_rm online $cmd "$P" --uri "$SRC" --to-uri "$spelled" -q
            expect_eq "$kind: $cmd --to-uri $spelled, the source's own deployment: refused (exit 2)" \
                "$rc" "2"
            expect_message "$kind: ... saying why, nothing written or dropped" \
                "--to-uri names the deployment --uri does" "nothing was written or dropped"
        done
        run_rm online run "$P" --uri "$SRC" --to-uri "$spelled" --drop --dry-run
        expect_eq "$kind: run --drop --dry-run --to-uri $spelled: writes nothing (exit 0 or 2)" \
            "$([ "$rc" = 0 ] || [ "$rc" = 2 ] && echo ok || echo "exit $rc")" "ok"
    done
    expect_eq "$kind: after every try, the server as it was: both databases, every index and byte" \
        "$(everything_app)" "$before"
    expect_eq "$kind: ... and no marker left in the state database" \
        "$(py 'print(c.remodel.markers.count_documents({}) if "remodel" in c.list_database_names() else 0)')" "0"
    "$SERVER" stop "$T/srv-one-$kind" >/dev/null 2>&1
done

# ---- what --drop may drop on another deployment ----
for dir in ${CI_KINDS_PAIR:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    pair_start "$from" "$to" || continue
    uri=$DST py 'c.crm.notes.insert_many([{"_id": "theirs-%d" % i} for i in range(5)])
c.shop.parents.insert_one({"_id": "old"})'
    dst_before=$(uri=$DST everything_app)
    two run -q
    expect_eq "$from->$to: a destination holding shop.parents and crm.notes: refused (exit 1)" "$rc" "1"
    expect_message "$from->$to: ... naming both, and what --drop would not drop" \
        "already holds shop.parents, crm.notes, which this run would write" \
        "--drop drops them first, but not those of a database the plan does not name unless --nsInclude names them"
    two run -q --drop
    expect_eq "$from->$to: run --drop: refused (exit 1): crm is no database of the plan's" "$rc" "1"
    expect_message "$from->$to: ... naming exactly what it would not drop" \
        "--drop would drop crm.notes on the destination" "nothing was written or dropped"
    expect_eq "$from->$to: ... the destination as it was, shop.parents too" \
        "$(uri=$DST everything_app)" "$dst_before"
    two run -q --drop --nsInclude 'crm.*' --nsInclude 'shop.*'
    expect_eq "$from->$to: run --drop --nsInclude crm.* shop.*: both dropped, the run completes (exit 0)" \
        "$rc:$(head -c 300 "$T/err")" "0:"
    expect_eq "$from->$to: ... crm.notes now the source's" \
        "$(uri=$DST py 'print(sorted(d["_id"] for d in c.crm.notes.find())[:3], c.crm.notes.count_documents({}))')" \
        "[0, 1, 2] 30"
    for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done
done
