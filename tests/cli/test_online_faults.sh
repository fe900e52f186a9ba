#!/usr/bin/env bash
# remodel online under faults and odd input (issue 21), on FerretDB and on
# mongo-java-server:
# - --dry-run writes nothing anywhere: every database, collection, index
#   and document (the state database's too) the same before and after;
#   a missing join index refused as a run would, or reported with
#   --create-indexes, never made; sync --dry-run rewrites nothing;
# - a malformed --uri (a password holding '@', ':', '/', '%') refused
#   without echoing any part of the password;
# - a source gains a field after run: one sync makes the result remodel
#   run's, verify then passes and a second sync rewrites nothing (a
#   replace on mongo-java-server kept the old field order: never did);
# - --in-place, a document near 16 MiB whose backup (or new version)
#   would not fit: refused by namespace and _id at once, not retried,
#   nothing of its batch written;
# - --log-format json: every line JSON, for a plan named with quotes, a
#   backslash, a control byte and UTF-8, and for such a namespace;
# - the server gone (a proxy drops every connection) while a batch's join
#   partners are fetched (--memory 1K: each batch finds its own): the run
#   retries that batch and finishes with remodel run's documents (the
#   retried batch once, not twice);
# - the server gone while the pass's partners are read once (their
#   cursor's first getMore): the read is retried from its start, said as a
#   batch's retry is, and the run finishes with remodel run's documents.
# And with no server: an option a command does not take is refused naming
# both (a flag meant for one command never silently ignored by another);
# a count past 64 bits is refused, not wrapped.
#   REMODEL=build/remodel bash tests/cli/test_online_faults.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1

# refused NAME WANT ARGS...: remodel ARGS exits 2 with the one line
# "remodel: error: WANT" (the option layer's words, as remodel's offline
# commands say them).
refused() {
    local n=$1 want=$2
    shift 2
    run_rm "$@"
    expect_eq "$n: exit 2, one line naming it" "$rc:$(cat "$T/err")" "2:remodel: error: $want"
}
not_its() { echo "option \"$2\" is not one of remodel $1's (see remodel $1 --help)"; }
echo '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}]}' >"$T/p.json"
refused "status --batch-size" "$(not_its "online status" --batch-size)" online status "$T/p.json" --uri mongodb://127.0.0.1:1/ --batch-size 5
refused "rollback --writes-stopped" "$(not_its "online rollback" --writes-stopped)" online rollback "$T/p.json" --writes-stopped
refused "finalize --server-side" "$(not_its "online finalize" --server-side)" online finalize "$T/p.json" --writes-stopped --server-side
refused "pause --restart" "$(not_its "online pause" --restart)" online pause "$T/p.json" --restart
refused "compile --uri" "$(not_its compile --uri)" compile "$T/p.json" --uri mongodb://127.0.0.1:1/
refused "run --format" "$(not_its "online run" --format)" online run "$T/p.json" --format mongosh
refused "--batch-size past 64 bits" '--batch-size: expected a number of documents (1 or more), got "99999999999999999999"' \
    online run "$T/p.json" --batch-size 99999999999999999999
refused "--retry-for past 64 bits of milliseconds" \
    '--retry-for: expected a duration like 50ms, 2s, 10m or 1h (a bare number: seconds), got "9223372036854776"' \
    online run "$T/p.json" --retry-for 9223372036854776
run_rm compile "$T/p.json" -q --server-version 6.0
expect_eq "compile -q --server-version: taken (exit 0)" "$rc" 0

use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap 'proxy_stop
for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms

mkdir -p "$T/plans"
online() { run_rm online "$1" -q "$T/plans/$2.json" --uri "$uri" "${@:3}"; }
pid() { plan_id "$T/plans/$1.json"; }
pyq() { pyrun -c "import pymongo, sys
db = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
$1" "$uri" "${@:2}"; }

# Everything on the server: each collection's documents (hashed in _id
# order), count and indexes, the state database included.
cat >"$T/snapshot.py" <<'EOF'
import hashlib, sys, pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
raw = CodecOptions(document_class=RawBSONDocument)
for d in sorted(c.list_database_names()):
    if d in ("admin", "local", "config"):
        continue
    for n in sorted(c[d].list_collection_names()):
        h, k = hashlib.sha1(), 0
        for doc in c[d].get_collection(n, codec_options=raw).find().sort("_id", 1):
            h.update(doc.raw)
            k += 1
        idx = sorted((i["name"], str(i["key"])) for i in c[d][n].list_indexes())
        print(d, n, k, h.hexdigest(), idx)
EOF
snapshot() { pyrun "$T/snapshot.py" "$uri" >"$1"; }

# pw_fragments PASSWORD FILE: the pieces of PASSWORD (three characters,
# case ignored, a letter or digit among them) found in FILE, or "none".
pw_fragments() {
    python3 -c 'import sys
pw, err = sys.argv[1], open(sys.argv[2], encoding="utf-8", errors="replace").read().lower()
bits = {pw[i:i + 3].lower() for i in range(len(pw) - 2) if any(c.isalnum() for c in pw[i:i + 3])}
print(" ".join(sorted(b for b in bits if b in err)) or "none")' "$1" "$2"
}

# A document of logging.logmsg, first in _id order, of exactly SIZE bytes.
big_doc() {
    pyq 'import bson
from bson import ObjectId
d = db.logging.logmsg.find_one(sort=[("_id", 1)])
d["_id"], d["pad"] = ObjectId("000000000000000000000001"), ""
d["pad"] = "x" * ('"$1"' - len(bson.encode(d)))
db.logging.logmsg.insert_one(d)'
}

for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" || continue
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --nsInclude 'logging.*' \
        --noIndexRestore --quiet
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$kind-crm0.archive" --quiet
    "$REMODEL" run -q "$ROOT/dumps/plans/embed-tasks.json" --from "$T/$kind-crm0.archive" \
        --to "$T/$kind-embed0.archive"
    cp "$ROOT/dumps/plans/backfill-logging.json" "$T/plans/backfill.json"
    cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"

    # --dry-run writes nothing anywhere.
    snapshot "$T/snap0"
    # (not -q: a dry run's notes are what it is for)
    dry() { run_rm online run "$T/plans/$1.json" --uri "$uri" --dry-run "${@:2}"; }
    dry backfill
    expect_eq "$kind: run --dry-run of a two-step plan: exit 0" "$rc" 0
    expect_message "$kind: ... step 2's input, step 1's result, said not written" \
        "step 2 (summarize): dry run: logging.logmsg is an earlier step's result (logging.logmsg_remodel_$(pid backfill)_1), which a dry run does not write: not there, so read as empty"
    dry backfill --create-indexes
    expect_eq "$kind: run --dry-run --create-indexes: exit 0" "$rc" 0
    dry backfill --in-place --create-indexes
    expect_eq "$kind: run --dry-run --in-place --create-indexes: exit 0" "$rc" 0
    expect_message "$kind: ... the index a run would make on a source reported" \
        "dry run: logging.logmsg has no index on \"host\", by which the join fetches its documents: a run would create it (--create-indexes)"
    dry embed
    expect_eq "$kind: run --dry-run without a join index: refused as a run is (exit 2)" \
        "$rc:$(grep -c 'crm.tasks has no index on "owner"' "$T/err")" "2:1"
    dry embed --create-indexes
    expect_eq "$kind: run --dry-run --create-indexes: exit 0, the index a run would make reported" \
        "$rc:$(grep -c 'crm.tasks has no index on "owner", by which the join fetches its documents: a run would create it' "$T/err")" "0:1"
    snapshot "$T/snap1"
    expect_eq "$kind: ... no collection, index or document written (state database included)" \
        "$(diff "$T/snap0" "$T/snap1" | head -5)" ""

    # Credentials in a malformed --uri are never echoed.
    port=${uri##*:}
    port=${port%%/*}
    for pw in 'p@s3cr3tPW' 'zq:W8xvQ' 'ab/Kq9rrZ' 'x%zzY7klM' 'Hq@7:Lm/9%Tz' '1/b?c=d'; do
        run_rm online status -q "$T/plans/embed.json" --uri "mongodb://ann:$pw@127.0.0.1:$port/"
        expect_eq "$kind: --uri with a password holding an unescaped '${pw//[A-Za-z0-9]/}': refused (exit 2), one line, no piece of the user name or password" \
            "$rc:$(grep -c . "$T/err"):$(grep -c 'not a MongoDB connection string' "$T/err"):$(pw_fragments "ann:$pw" "$T/err")" "2:1:1:none"
    done
    run_rm online status -q "$T/plans/embed.json" --uri "mongodb://127.0.0.1:$port/?appName=me@host"
    expect_eq "$kind: ... an '@' where a URI may hold one (appName): accepted, nothing said" "$rc:$(cat "$T/err")" "0:"
    MONGODB_URI="mongodb://ann:p@s3cr3tPW@127.0.0.1:$port/?authSource=admin" \
        run_rm online status -q "$T/plans/embed.json"
    expect_eq "$kind: ... in MONGODB_URI too" "$rc:$(pw_fragments 'p@s3cr3tPW' "$T/err")" "2:none"
    run_rm online status -q "$T/plans/embed.json" --uri "mongodb://ann@zz:Rk4@127.0.0.1:$port/"
    expect_eq "$kind: ... a user name holding an '@'" "$rc:$(pw_fragments 'zz:Rk4' "$T/err")" "2:none"
    run_rm online status -q "$T/plans/embed.json" --uri "mongodb://ann:p%40s3cr3tPW@127.0.0.1:$port/"
    expect_eq "$kind: ... a password escaped as it should be: no piece of it in what is said" \
        "$(pw_fragments 'p@s3cr3tPW' "$T/err")" none

    # --log-format json: a line per batch, JSON whatever the names.
    tab=$(printf '\t')
    name="ü \"q\"\\${tab}x"
    cp "$T/plans/embed.json" "$T/plans/$name.json"
    online run "$name" --dry-run --create-indexes --log-format json --batch-size 40
    expect_eq "$kind: --log-format json, a plan named with a quote, a backslash, a tab and UTF-8: every line JSON, the name as it is" \
        "$rc:$(python3 -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.startswith("{")]
print(len(lines) >= 4, all(l["plan"] == sys.argv[2] + ".json" for l in lines))' "$T/err" "$name")" "0:True True"
    # A namespace so named (FerretDB refuses a quote in a collection name).
    coll="b\\s${tab}ü"
    [ $kind == java ] && coll="$coll\"q"
    pyq 'db.jx[sys.argv[2]].insert_many([{"_id": i} for i in range(5)])' "$coll"
    python3 -c 'import json, sys
print(json.dumps({"remodel": 1, "steps": [{"set": {"in": "jx." + sys.argv[1], "fields": {"v": 2}}}]}))' \
        "$coll" >"$T/plans/odd ns.json"
    online run "odd ns" --log-format json --batch-size 2
    expect_eq "$kind: --log-format json, a namespace with a backslash, a tab and UTF-8: every line JSON, the namespace as it is" \
        "$rc:$(python3 -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.startswith("{")]
print(len(lines), all(l["ns"] == "jx." + sys.argv[2] for l in lines))' "$T/err" "$coll")" "0:3 True"

    # The server gone while a batch's partners are fetched: that batch
    # is retried, once.
    if [ $kind != external ]; then
        # The third find on tasks by owner (a batch's partners): every
        # connection dropped, that find unsent, new ones closed for 0.5 s.
        proxy_start "$port" --cut find:tasks:3 --having owner --down 0.5
        cp "$T/plans/embed.json" "$T/plans/e10.json"
        run_rm online run -q "$T/plans/e10.json" --uri "mongodb://127.0.0.1:$pport/" \
            --create-indexes --batch-size 10 --memory 1K
        proxy_stop
        expect_eq "$kind: every connection dropped while the third batch's partners were fetched: the run retries and finishes (exit 0)" \
            "$rc:$(grep -c 'dropped every connection at find 3' "$T/proxy.log"):$(grep -c 'two results' "$T/err")" "0:1:0"
        online_same "$kind: ... with remodel run's result" "$T/$kind-embed0.archive" \
            crm.people=people_remodel_$(pid e10)_1 crm.tasks=tasks_remodel_$(pid e10)_1

        # The first getMore of the read once (its cursor's second reply of
        # 100 tasks): every connection dropped, new ones closed 0.5 s.
        proxy_start "$port" --cut 'getMore:tasks:1' --down 0.5
        cp "$T/plans/embed.json" "$T/plans/e11.json"
        run_rm online run "$T/plans/e11.json" --uri "mongodb://127.0.0.1:$pport/" \
            --create-indexes --batch-size 10
        proxy_stop
        expect_eq "$kind: every connection dropped while the pass's partners were read once: the read retried from its start, said once, the run finishes (exit 0)" \
            "$rc:$(grep -c 'dropped every connection at getMore 1' "$T/proxy.log"):$(grep -c "reading a pass's partners: .*; retrying in 250 ms" "$T/err")" "0:1:1"
        online_same "$kind: ... with remodel run's result" "$T/$kind-embed0.archive" \
            crm.people=people_remodel_$(pid e11)_1 crm.tasks=tasks_remodel_$(pid e11)_1
    fi

    # A source gains a field after the run: one sync, then nothing differs.
    cp "$T/plans/embed.json" "$T/plans/e13.json"
    online run e13 --create-indexes
    pyq 'p = db.crm.people.find_one(sort=[("_id", 1)])
db.crm.people.update_one({"_id": p["_id"]}, {"$set": {"gained": 1}})'
    online sync e13 --dry-run
    online verify e13
    expect_eq "$kind: sync --dry-run rewrites nothing: verify still finds the result (exit 1)" "$rc" 1
    run_rm online sync "$T/plans/e13.json" --uri "$uri" --dry-run
    expect_message "$kind: ... and says what it would do" "1 result(s) would be rewritten or removed"
    for c in finalize rollback pause resume; do
        run_rm online "$c" "$T/plans/e13.json" --uri "$uri" --dry-run $([ $c == finalize ] && echo --writes-stopped)
        expect_eq "$kind: $c --dry-run: refused, there is none (exit 2, one line)" \
            "$rc:$(grep -c . "$T/err"):$(grep -c "has no dry run" "$T/err")" "2:1:1"
    done
    expect_eq "$kind: ... and nothing switched or paused" \
        "$(pyq 'print(sorted(n for n in db.crm.list_collection_names() if "backup" in n), (db.remodel.plans.find_one({"_id": sys.argv[2]}) or {}).get("paused", False))' "$(pid e13)")" "[] False"
    online sync e13
    expect_eq "$kind: a source gained a field: sync rewrites its result (exit 0)" \
        "$rc:$(cat "$T/err")" "0:"
    online verify e13
    expect_eq "$kind: ... verify then finds nothing (exit 0)" "$rc:$(cat "$T/err")" "0:"
    run_rm online sync "$T/plans/e13.json" --uri "$uri"
    # (the one line saying a server that is no replica set tells no lag aside)
    expect_eq "$kind: ... a second sync rewrites nothing" \
        "$rc:$(grep -v '^remodel: throttle: replication lag not available' "$T/err")" \
        "0:remodel: sync: plan e13.json: every result as the sources make it"
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$kind-crm1.archive" --quiet
    "$REMODEL" run -q "$T/plans/e13.json" --from "$T/$kind-crm1.archive" --to "$T/$kind-e13.archive"
    online_same "$kind: ... the results remodel run's, byte for byte" "$T/$kind-e13.archive" \
        crm.people=people_remodel_$(pid e13)_1 crm.tasks=tasks_remodel_$(pid e13)_1

    # In place, a document near 16 MiB: its backup would not fit.
    big_doc 16777000
    cp "$T/plans/backfill.json" "$T/plans/big1.json"
    s0=$(date +%s)
    timeout 600 "$REMODEL" online run -q "$T/plans/big1.json" --uri "$uri" --in-place \
        --create-indexes --batch-size 64 >"$T/out" 2>"$T/err"
    rc=$?
    expect_eq "$kind: --in-place, a document whose backup would pass 16 MiB: exit 1 at once (within half the 600 s a retry would take, however loaded the machine), one line naming it, no retry" \
        "$rc:$(( $(date +%s) - s0 < 300 )):$(grep -c . "$T/err"):$(grep -c 'logging.logmsg document { "_id" : { "$oid" : "000000000000000000000001" } }: its backup (the original and checksums, in the state database) would be 167[0-9]\{5\} bytes, over the 16777216' "$T/err")" \
        "1:1:1:1"
    expect_eq "$kind: ... nothing of its batch written (no document changed, no backup)" \
        "$(pyq 'print(db.logging.logmsg.count_documents({"host_ip": {"$exists": True}}), db.remodel[sys.argv[2]].count_documents({}))' "backup.$(pid big1).1")" "0 0"
    pyq 'db.logging.logmsg.delete_one({"_id": __import__("bson").ObjectId("000000000000000000000001")})'
    big_doc 16777210
    cp "$T/plans/backfill.json" "$T/plans/big2.json"
    timeout 600 "$REMODEL" online run -q "$T/plans/big2.json" --uri "$uri" --in-place \
        --create-indexes --batch-size 64 >"$T/out" 2>"$T/err"
    rc=$?
    expect_eq "$kind: ... a document the step would make larger than 16 MiB: exit 1, one line naming it" \
        "$rc:$(grep -c . "$T/err"):$(grep -c 'logging.logmsg: document { "_id" : { "$oid" : "000000000000000000000001" } } would be 16777233 bytes' "$T/err")" \
        "1:1:1"
    pyq 'db.logging.logmsg.delete_one({"_id": __import__("bson").ObjectId("000000000000000000000001")})'
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
