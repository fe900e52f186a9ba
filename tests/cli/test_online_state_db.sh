#!/usr/bin/env bash
# --state-db is remodel's alone (issue 62 item 2):
#  - names MongoDB refuses for a database (empty, a dot, $, a space, a
#    slash, a control character, 64 bytes) and the server's own (admin,
#    local, config, in any case): refused (exit 2) before any connection,
#    naming the option and the reason;
#  - a plan that reads or writes a namespace of the state database:
#    refused (exit 2), naming the step and the namespace;
#  - on FerretDB and mongo-java-server, one deployment: a state database
#    that is an application's (crm, holding crm.notes): run refused
#    (exit 2), naming the collection, nothing written (crm as it was, no
#    plans collection there); a state database of remodel's own (rmstate)
#    runs, and a second run over its records (resumed) is not refused;
#  - with --to-uri, both directions: an application database of the
#    state database's name on the source (which the copy would leave
#    behind) or on the destination: refused (exit 2), the destination
#    as it was.
#   REMODEL=build/remodel bash tests/cli/test_online_state_db.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"

# ---- names, refused before any connection ----
mkdir -p "$T/plans"
kids_plan emb shop
P=$T/plans/emb.json
long=$(printf 'a%.0s' {1..64})
for bad in "" "a.b" 'a$b' "a b" "a/b" 'a\b' "$(printf 'a\tb')" admin LOCAL Config "$long"; do
    run_rm online run "$P" --uri mongodb://127.0.0.1:1/ --state-db "$bad"
    expect_eq "--state-db [$bad]: refused (exit 2)" "$rc" "2"
    expect_message "--state-db [$bad]: ... naming the option, before any connection" \
        "--state-db: " "give a database of remodel's own"
done
run_rm online run "$P" --uri mongodb://127.0.0.1:1/ --state-db shop
expect_eq "--state-db shop, a database of the plan's: refused (exit 2)" "$rc" "2"
expect_message "... naming the step and the namespace" \
    "--state-db shop: step 1 (embed) of the plan names shop.kids"

# ---- on the servers ----
to_uri_setup "state-db"
seed() {
    seed_shop 40 120 10
    py 'c.crm.notes.insert_many([{"_id": i} for i in range(7)])'
}
crm_of() { uri=$1 py 'print(sorted(c.crm.list_collection_names()), c.crm.notes.count_documents({}))'; }

for kind in ${CI_KINDS:-ferretdb java}; do
    online_start "$kind" "$T/srv-one-$kind" 0 changelog || continue
    ONE=$uri
    seed
    run_rm online run "$P" --uri "$ONE" --state-db crm -q
    expect_eq "$kind: run --state-db crm, an application's database: refused (exit 2)" "$rc" "2"
    expect_message "$kind: ... naming what it holds, nothing written" \
        "--state-db crm: the server" "holds 1 collection(s) remodel does not make (notes)" \
        "nothing was written"
    expect_eq "$kind: ... crm as it was" "$(crm_of "$ONE")" "['notes'] 7"
    run_rm online run "$P" --uri "$ONE" --state-db rmstate -q
    expect_eq "$kind: run --state-db rmstate: runs (exit 0)" "$rc:$(head -c 300 "$T/err")" "0:"
    run_rm online run "$P" --uri "$ONE" --state-db rmstate -q
    expect_eq "$kind: ... run again over its records: not refused (exit 0)" \
        "$rc:$(head -c 300 "$T/err")" "0:"
    expect_eq "$kind: ... its records in rmstate" \
        "$(py 'print(c.rmstate.plans.count_documents({}), "plans" in c.crm.list_collection_names())')" "1 False"
    "$SERVER" stop "$T/srv-one-$kind" >/dev/null 2>&1
done

for dir in ${CI_KINDS_PAIR:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    pair_start "$from" "$to" || continue
    two run -q --state-db crm
    expect_eq "$from->$to: --to-uri --state-db crm, an application database on the source: refused (exit 2)" \
        "$rc" "2"
    expect_message "$from->$to: ... saying the copy would leave it behind" \
        "--state-db crm: the source" "a copy to another deployment would leave it behind"
    expect_eq "$from->$to: ... the destination as it was: no crm, no shop" \
        "$(uri=$DST py 'print(sorted(n for n in c.list_database_names() if n in ("crm", "shop")))')" "[]"
    uri=$DST py 'c.appstate.orders.insert_one({"_id": 1})'
    two run -q --state-db appstate
    expect_eq "$from->$to: --state-db appstate, an application database on the destination: refused (exit 2)" \
        "$rc" "2"
    expect_message "$from->$to: ... naming it" "--state-db appstate: the destination" "(orders)"
    for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done
done
