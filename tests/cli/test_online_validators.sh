#!/usr/bin/env bash
# finalize --validators (issue 63) and the joins' indexes after the switch
# (issue 65):
#   - on remodel's in-memory server, which keeps a collMod's validator: after
#     finalize --validators warn each collection the plan changed holds the
#     validator `remodel compile --format validators --canonical` prints for
#     it (the same bytes), moderate, warn; finalize --validators error on the
#     finalized plan changes the action only; finalize again without it is
#     refused as before (exit 2); rollback gives the options from before back
#     (no validator) and drops the record's entry;
#   - killed at its first and second collMod (tests/peers/killat.sh), a
#     finalize --validators is completed by the next, and a rollback killed
#     at its first collMod by the next rollback;
#   - an index remodel made for a join on an earlier step's result (origin_1,
#     destination_1 on flights) is on that result before finalize and gone
#     from the new design's collection after it, on every server;
#   - FerretDB 1.x and mongo-java-server have no collMod: the probe says so,
#     exit 2, and nothing is switched;
#   - status --json's indexes: what the run built (the plan's mapping, or the
#     sources' as they were with run --keep-indexes), the mapping's changes,
#     the joins' indexes remodel made, and those finalize dropped.
#   REMODEL=build/remodel bash tests/cli/test_online_validators.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "validators: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
ONLINE=$(dirname "$REMODEL")/remodel-online
# flights is changed by step 1, so steps 2 and 3 join its result by origin
# and destination: remodel indexes the result for them.
cat >"$T/plans/fl.json" <<'PEOF'
{"remodel": 1, "steps": [
 {"set": {"in": "air.flights", "fields": {"v": 2}}},
 {"summarize": {"into": "air.airports", "from": "air.flights", "localField": "_id", "foreignField": "origin", "fields": {"departures": {"$count": {}}}}},
 {"summarize": {"into": "air.airports", "from": "air.flights", "localField": "_id", "foreignField": "destination", "fields": {"arrivals": {"$count": {}}}}}
]}
PEOF
seed() {
    py 'c.drop_database("air"); c.drop_database("remodel")
codes = ["AAA", "BBB", "CCC"]
c.air.airports.insert_many([{"_id": k, "name": "Airport " + k} for k in codes])
c.air.flights.insert_many([{"_id": i, "origin": codes[i % 3], "destination": codes[(i + 1) % 3]} for i in range(30)])'
}
indexes() { py 'print(" ".join(sorted(c.air[sys.argv[2]].index_information())))' "$1"; }
# opts COLL: validationAction, validationLevel and the validator (canonical).
opts() {
    py 'from bson import json_util
o = (list(c.air.list_collections(filter={"name": sys.argv[2]})) or [{}])[0].get("options", {})
v = o.get("validator")
print(o.get("validationAction"), o.get("validationLevel"),
      json_util.dumps(v, json_options=json_util.CANONICAL_JSON_OPTIONS) if v is not None else None)' "$1"
}
# compiled COLL: compile's validator for air.COLL, canonical.
compiled() {
    "$REMODEL" compile "$T/plans/fl.json" --format validators --canonical |
        python3 -c 'import sys, json
from bson import json_util
for l in sys.stdin:
    d = json_util.loads(l)
    if d["command"]["collMod"] == sys.argv[1]:
        print(json_util.dumps(d["command"]["validator"], json_options=json_util.CANONICAL_JSON_OPTIONS))' "$1"
}
# The plan of the indexes' section: name is indexed, then renamed.
cat >"$T/plans/flk.json" <<'PEOF'
{"remodel": 1, "steps": [
 {"set": {"in": "air.flights", "fields": {"v": 2}}},
 {"summarize": {"into": "air.airports", "from": "air.flights", "localField": "_id", "foreignField": "origin", "fields": {"departures": {"$count": {}}}}},
 {"rename": {"in": "air.airports", "fields": {"name": "title"}}}
]}
PEOF
# ixjson: status --json's indexes as keepIndexes|results|changes|made.
ixjson() {
    python3 -c 'import json, sys
ix = json.load(sys.stdin)["indexes"]
res = " ".join("%s %s %s %s" % (r["ns"], r["name"], json.dumps(json.loads(r["key"])), r["action"]) for r in ix["results"])
print("%s|%s|%d|%s" % (ix["keepIndexes"], res, len(ix["changes"]), " ".join(m["name"] for m in ix["made"])))'
}
killat() {
    MONGOC_DISABLE_SHM=1 "$ROOT/tests/peers/killat.sh" --timeout 600 -q --log "$T/klog" "$1" "$2" -- \
        "$ONLINE" "${@:3}" --uri "$uri" >"$T/kout" 2>"$T/kerr"
    krc=$?
}
ran() { online run fl --create-indexes; [ $rc == 0 ] || fail "$1: run" "$(cat "$T/err")"; }

# ---- the in-memory server: validators kept ----
if online_start mem "$T/srv-mem" 0 changelog; then
    seed; ran mem
    r=$(target air flights)
    expect_eq "mem: before finalize the join indexes are on flights' result" "$(indexes "$r")" \
        "_id_ destination_1 origin_1"
    online finalize fl --writes-stopped --validators warn
    expect_eq "mem: finalize --validators warn: exit 0" "$rc" 0
    expect_message "mem: ... the probe, then each collection named" "the server keeps a validator" \
        "air.flights validates the new design (validationAction warn" "air.airports validates"
    expect_eq "mem: ... the join indexes are not the new design's" "$(indexes flights)" "_id_"
    for coll in flights airports; do
        want=$(compiled $coll)
        [ -n "$want" ] || fail "mem: compile prints a validator for $coll"
        expect_eq "mem: air.$coll: compile's validator, moderate, warn" "$(opts $coll)" "warn moderate $want"
    done
    online finalize fl --writes-stopped --validators error
    expect_eq "mem: finalize --validators error on the finalized plan: exit 0" "$rc" 0
    expect_eq "mem: ... the action is error" "$(opts flights)" "error moderate $(compiled flights)"
    online finalize fl --writes-stopped
    expect_eq "mem: finalize again without it: finalized already (exit 2)" \
        "$rc:$(grep -c 'is finalized already' "$T/err")" "2:1"
    online rollback fl
    expect_eq "mem: rollback: exit 0" "$rc" 0
    expect_message "mem: ... the options from before the validators back" \
        "air.flights has its options from before the validators back"
    expect_eq "mem: ... the originals back, no validator" "$(opts flights)" "None None None"
    expect_eq "mem: ... the result beside them: validator {} (strict, error)" "$(opts "$r")" \
        "error strict {}"
    expect_eq "mem: ... the record forgets them" \
        "$(py 'print(c.remodel.plans.count_documents({"validators": {"$exists": True}}))')" 0
    online rollback fl

    # Killed at the first collMod (the record written, none applied) and at
    # the second (one applied): the next finalize completes it.
    for k in 1 2; do
        seed; ran "mem kill $k"
        online finalize fl --writes-stopped
        killat online_ops_mongoc_coll_mod $((k + 1)) finalize "$T/plans/fl.json" --writes-stopped --max-window 0 --validators warn
        expect_eq "mem: finalize killed at collMod $k (after the probe's): exit 137" "$krc" 137
        online finalize fl --writes-stopped --validators warn
        expect_eq "mem: ... finalize again: exit 0, both validators there" \
            "$rc:$(opts flights):$(opts airports)" \
            "0:warn moderate $(compiled flights):warn moderate $(compiled airports)"
        killat online_ops_mongoc_coll_mod "$k" rollback "$T/plans/fl.json"
        expect_eq "mem: rollback killed at its collMod $k: exit 137, the originals not back yet" \
            "$krc:$(py 'print(sum("_backup" in n for n in c.air.list_collection_names()))')" 137:2
        online rollback fl
        expect_eq "mem: ... rollback again: exit 0, no validator on the originals" \
            "$rc:$(opts flights):$(opts airports)" "0:None None None:None None None"
        online rollback fl
    done
fi

# ---- --to-uri: the destination's collections, from one memsrv to another ----
if online_start mem "$T/srv-dst"; then
    dst=$uri
    online_start mem "$T/srv-src" && src=$uri && {
        seed
        online run fl --to-uri "$dst"
        [ $rc == 0 ] || fail "to-uri: run" "$(cat "$T/err")"
        uri=$dst
        expect_eq "to-uri: before finalize the join indexes are on the destination's flights" \
            "$(indexes flights)" "_id_ destination_1 origin_1"
        uri=$src
        online finalize fl --to-uri "$dst" --writes-stopped --validators warn
        expect_eq "to-uri: finalize --validators warn: exit 0" "$rc" 0
        uri=$dst
        expect_eq "to-uri: ... on the destination: compile's validators, no join index" \
            "$(opts flights):$(opts airports):$(indexes flights)" \
            "warn moderate $(compiled flights):warn moderate $(compiled airports):_id_"
        uri=$src
        expect_eq "to-uri: ... none on the source" "$(opts flights)" "None None None"
        online rollback fl --to-uri "$dst"
        uri=$dst
        expect_eq "to-uri: rollback refused (writes unknown): exit 2, the validators stay" \
            "$rc:$(opts flights)" "2:warn moderate $(compiled flights)"
        uri=$src
        online rollback fl --to-uri "$dst" --discard-writes-after-switch
        uri=$dst
        expect_eq "to-uri: rollback --discard-writes-after-switch: exit 0, the validators gone" \
            "$rc:$(opts flights):$(opts airports)" "0:error strict {}:error strict {}"
    }
fi

# ---- FerretDB 1.x and mongo-java-server: no collMod ----
for kind in ferretdb java; do
    online_start "$kind" "$T/srv-$kind" || continue
    seed; ran "$kind"
    online finalize fl --writes-stopped --validators warn
    expect_eq "$kind: finalize --validators: exit 2" "$rc" 2
    expect_message "$kind: ... the probe says the server takes no validator" \
        "this server does not take a validator" "nothing done: finalize without --validators"
    expect_eq "$kind: ... nothing switched" \
        "$(py 'print(sum("_backup" in n for n in c.air.list_collection_names()))')" 0
    online finalize fl --writes-stopped
    expect_eq "$kind: finalize without it: exit 0" "$rc" 0
    expect_eq "$kind: ... the join indexes are not the new design's" "$(indexes flights)" "_id_"
    online rollback fl
    expect_eq "$kind: rollback: exit 0, the originals back" "$rc:$(indexes flights)" "0:_id_"
    online rollback fl

    # status --json's indexes: the plan's mapping (name_1 renamed title_1)
    # or, with --keep-indexes, the sources' as they were; finalize's drops.
    for keep in "" --keep-indexes; do
        seed; py 'c.air.airports.create_index("name")'
        online run flk $keep
        [ $rc == 0 ] || fail "$kind: run flk $keep" "$(cat "$T/err")"
        online status flk --json
        expect_eq "$kind: run ${keep:-(mapped)}: status --json's indexes" "$(ixjson <"$T/out")" \
            "$([ -n "$keep" ] && echo 'True|air.airports name_1 {"name": 1} kept|0' ||
                echo 'False|air.airports title_1 {"title": 1} built|1')|origin_1"
        online finalize flk --writes-stopped
        online status flk --json
        expect_eq "$kind: ... finalized: air.airports' indexes; origin_1 dropped from flights" \
            "$rc:$(indexes airports):$(python3 -c 'import json, sys
print(" ".join(d["ns"] + "." + d["name"] for d in json.load(sys.stdin)["indexes"]["dropped"]))' <"$T/out")" \
            "0:_id_ $([ -n "$keep" ] && echo name_1 || echo title_1):air.flights.origin_1"
        online rollback flk; online rollback flk
    done
done
