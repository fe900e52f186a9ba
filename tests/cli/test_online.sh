#!/usr/bin/env bash
# remodel online (issue 12, first part): a plan's per-document steps (set,
# unset, rename, version) applied to a live server, on mongo-java-server
# (online_kind: test_online_smoke.sh runs each command on both servers;
# REMODEL_TEST_BOTH=1 runs this suite on both). The result read back by mongodump equals `remodel run`
# on the same documents; a second run does nothing; kill -9 at random
# moments then a rerun gives the same result; a concurrent run is refused
# (lease); a changed plan is refused unless --restart; --dry-run writes
# nothing; bad URIs, unreachable servers and unsupported steps give one
# clear error (credentials never printed).
#   REMODEL=build/remodel bash tests/cli/test_online.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
CRASHES=${REMODEL_ONLINE_CRASHES:-4}

cat >"$T/plan.json" <<'EOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "crm.people", "fields": {"phone": "phoneNumber"}}},
  {"set": {"in": "crm.people", "fields": {"tier": "basic", "address.country": "IS"}}},
  {"version": {"in": "crm.people", "value": 2}},
  {"unset": {"in": "crm.tasks", "fields": ["done"]}}
]}
EOF
"$REMODEL" run -q "$T/plan.json" --from "$S" --to "$T/offline.archive"

# restore KIND: a fresh server of that kind holding the sample's crm.*
# (FerretDB: the part kept in $T/ferretdb-src.archive once it is made,
# below); URI in $uri.
restore() {
    [ "$1" == external ] || { "$SERVER" stop "$T/$1" >/dev/null 2>&1; rm -rf "$T/$1"; }
    online_start "$1" "$T/$1" || return 1
    if [ -f "$T/$1-src.archive" ]; then
        "$MONGORESTORE" --uri "$uri" --archive="$T/$1-src.archive" --noIndexRestore --quiet
    else
        "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
            --noIndexRestore --quiet
    fi
}
# same_as NAME ARCHIVE [REFERENCE]: crm.people and crm.tasks in ARCHIVE
# (dumped from the server) are REFERENCE's (default: the offline result of
# this server's data, $ref, of $ntasks tasks), document for document by
# _id, byte for byte.
same_as() {
    expect_eq "$1" "$(python3 - "${3:-$ref}" "$2" <<'PYEOF'
import sys, os
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "transforms"))
import bson, rmlib
def by_id(path):
    docs = rmlib.read_archive(path)[0]
    out = {}
    for ns in ("crm.people", "crm.tasks"):
        for raw in docs.get(ns, []):
            out[(ns, repr(bson.decode(bytes(raw))["_id"]))] = bytes(raw)
    return out
a, b = by_id(sys.argv[1]), by_id(sys.argv[2])
print(len(a), len(b), a == b)
PYEOF
)" "$((98 + ntasks)) $((98 + ntasks)) True"
}
export ROOT
dump() { "$MONGODUMP" --uri "$uri" --db crm --archive="$1" --quiet; }
# state_count COLL: the documents of a collection of the state database.
state_count() {
    pyrun -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
print(c.remodel[sys.argv[2]].count_documents({}))' "$uri" "$1"
}

for kind in $(online_kind java); do
    restore $kind || { fail "$kind: restore"; continue; }
    ref=$T/offline.archive ntasks=1000
    # FerretDB's SQLite handler scans the whole collection for each
    # conditional update an in-place step sends, so a pass over crm.tasks
    # costs the square of its size there (30 s to 80 s for the 1,000
    # tasks, and the kill loop below makes eight passes): it keeps the
    # first 150 by _id (a pass still a few seconds, so a kill in the
    # first second lands part way), and its reference is remodel run's
    # on them (mongo-java-server keeps all).
    if [ $kind == ferretdb ]; then
        ntasks=150 ref=$T/$kind-offline.archive
        pyrun -c 'import pymongo, sys
t = pymongo.MongoClient(sys.argv[1]).crm.tasks
ids = [d["_id"] for d in t.find({}, {"_id": 1}).sort("_id", 1)]
t.delete_many({"_id": {"$in": ids[150:]}})' "$uri"
        dump "$T/$kind-src.archive"
        "$REMODEL" run -q "$T/plan.json" --from "$T/$kind-src.archive" --to "$ref"
    fi
    run_rm online run --in-place "$T/plan.json" --uri "$uri" --batch-size 30
    expect_eq "$kind: online run: exit 0, one line per step" "$rc:$(grep -c '^remodel: step [1-4] ' "$T/err")" "0:4"
    expect_message "$kind: online run --in-place: counts what it read and changed" \
        "remodel: step 1 (rename) crm.people: 98 read, 98 changed" \
        "remodel: step 4 (unset) crm.tasks: $ntasks read, $ntasks changed"
    dump "$T/$kind-1.archive"
    same_as "$kind: the server's documents are remodel run's, byte for byte" "$T/$kind-1.archive"
    expect_eq "$kind: the originals kept in the state database" \
        "$(state_count "backup.$(plan_id "$T/plan.json").1"):$(state_count "backup.$(plan_id "$T/plan.json").4")" "98:$ntasks"
    run_rm online status "$T/plan.json" --uri "$uri"
    expect_eq "$kind: status: every step done, with its counts" \
        "$(awk '/^[0-9]/ { print $1, $2, $3, $4, $5, $6 } /^mode:/ { print }' "$T/out" | tr '\n' '|')" \
        "1 rename crm.people done 98 98|2 set crm.people done 98 98|3 version crm.people done 98 98|4 unset crm.tasks done $ntasks $ntasks|mode: in place|"
    run_rm online run -q --in-place "$T/plan.json" --uri "$uri"
    dump "$T/$kind-2.archive"
    expect_eq "$kind: a second run does nothing: exit 0, silent" "$rc:$(cat "$T/err")" "0:"
    same_as "$kind: a second run does nothing: the same documents" "$T/$kind-2.archive" "$T/$kind-1.archive"

    # A changed plan is refused, then started over with --restart.
    # (a plan is known by its file's full path: the same file, edited)
    cp "$T/plan.json" "$T/plan.orig"
    sed 's/"basic"/"gold"/' "$T/plan.orig" >"$T/plan.json"
    run_rm online run -q --in-place "$T/plan.json" --uri "$uri"
    expect_eq "$kind: a changed plan under the same name: refused (exit 2)" "$rc" 2
    expect_message "$kind: ... saying so" "plan plan.json changed since its run began" "--restart starts it over"
    run_rm online run -q --in-place --restart "$T/plan.json" --uri "$uri"
    expect_eq "$kind: --restart runs it" "$rc:$(cat "$T/err")" "0:"
    expect_eq "$kind: ... and its set took" "$(pyrun -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1]); print(c.crm.people.count_documents({"tier": "gold"}))' "$uri")" 98
    cp "$T/plan.orig" "$T/plan.json"

    # --dry-run on fresh data: counts, writes nothing, keeps no state.
    restore $kind
    dump "$T/$kind-before.archive"
    run_rm online run --in-place --dry-run "$T/plan.json" --uri "$uri"
    expect_eq "$kind: --dry-run: exit 0, says what it would change" \
        "$rc:$(grep -c 'would change' "$T/err")" "0:4"
    dump "$T/$kind-after.archive"
    expect_eq "$kind: --dry-run: no state kept" "$(state_count checkpoints):$(state_count leases)" "0:0"
    same_as "$kind: --dry-run: the data untouched" "$T/$kind-after.archive" "$T/$kind-before.archive"

    # kill -9 at random moments, then a rerun: the same result.
    for ((i = 1; i <= CRASHES; i++)); do
        restore $kind
        "$REMODEL" online run -q --in-place "$T/plan.json" --uri "$uri" --batch-size 7 --pause-ms 10 >/dev/null 2>&1 &
        pid=$!
        sleep "0.$(printf '%02d' $((RANDOM % 90 + 5)))"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        expect_eq "$kind: killed ($i) part way: not every step done yet" \
            "$(pyrun -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1]); print(c.remodel.checkpoints.count_documents({"done": True}) < 4)' "$uri")" True
        # The killed run's lease expires; a new run takes it over.
        pyrun -c 'import pymongo, sys, datetime
c = pymongo.MongoClient(sys.argv[1])
c.remodel.leases.update_many({}, {"$set": {"expires": datetime.datetime(2000, 1, 1)}})' "$uri"
        run_rm online run -q --in-place "$T/plan.json" --uri "$uri"
        dump "$T/$kind-crash.archive"
        expect_eq "$kind: killed (-9) at a random moment ($i), then run again: exit 0" "$rc:$(cat "$T/err")" "0:"
        same_as "$kind: killed at a random moment ($i), then run again: remodel run's documents" "$T/$kind-crash.archive"
    done

    # A second run at once is refused by the lease.
    restore $kind
    "$REMODEL" online run -q --in-place "$T/plan.json" --uri "$uri" --batch-size 5 --pause-ms 200 >/dev/null 2>&1 &
    pid=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do [ "$(state_count leases)" == 1 ] && break; sleep 0.1; done
    run_rm online run -q --in-place "$T/plan.json" --uri "$uri"
    expect_eq "$kind: a concurrent run of the plan: refused (exit 2)" "$rc" 2
    expect_message "$kind: ... naming the run that holds it" "plan plan.json is being run by"
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
done

# Errors: unsupported steps, bad URIs, unreachable servers; never a password.
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"a": 1}}}, {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks"}}]}' >"$T/embed.json"
run_rm online run --in-place "$T/embed.json" --uri "$uri"
expect_eq "--in-place with a step that makes new documents: refused before anything (exit 2)" \
    "$rc:$(pyrun -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1]); print(c.crm.people.count_documents({"a": 1}))' "$uri")" "2:0"
expect_message "... naming the step" "step 2 (embed): --in-place takes set, unset, rename, version, denormalize, summarize, copy, move and delete"
run_rm online run "$T/plan.json" --uri "not a uri"
expect_eq "a bad --uri: exit 2" "$rc:$(grep -c . "$T/err")" "2:1"
run_rm online run "$T/plan.json" --uri "mongodb://ann:s3cr3tpw@127.0.0.1:1/"
expect_eq "an unreachable server: exit 1, one line" "$rc:$(grep -c . "$T/err")" "1:1"
expect_message "... naming the host, not the credentials" "127.0.0.1:1: cannot reach the server"
expect_eq "... the password is not printed" "$(grep -c s3cr3tpw "$T/err")" 0
