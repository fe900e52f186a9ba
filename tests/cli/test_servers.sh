#!/usr/bin/env bash
# The two test servers the online mode is proven on (issue 12): FerretDB
# and mongo-java-server, started by tests/peers/server.sh on loopback with
# throwaway data. Each takes the sample dump from mongorestore and gives it
# back to mongodump with the same documents, answers mongosh (2.x for
# FerretDB; 1.10.6 for mongo-java-server, whose wire version 7 mongosh 2.x
# refuses), and mongo-java-server's own $lookup matches remodel's embed,
# parent by parent: an independent judge of the join.
#   REMODEL=build/remodel bash tests/cli/test_servers.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT

# FerretDB 1.x has no decimal128 (the sample's catalog holds some): it gets
# the rest, and the online mode must say so where it meets one
for kind in ferretdb java; do
    uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/$kind" $kind 2>"$T/err")
    expect_eq "$kind: starts on loopback" "$(echo "$uri" | grep -c '^mongodb://127\.0\.0\.1:[0-9]*/$')" 1
    [ -n "$uri" ] || { cat "$T/err" >&2; continue; }
    # (and refuses the sample's legacy "ns" index option: no indexes there)
    if [ $kind == ferretdb ]; then sel=(--nsExclude 'catalog.*' --noIndexRestore); want="9 0 4808"; restored=4808
    else sel=(); want="11 0 5268"; restored=5268; fi
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip "${sel[@]}" >"$T/out" 2>&1
    expect_eq "$kind: mongorestore restores the sample" \
        "$?:$(grep -c "$restored document(s) restored successfully. 0 document(s) failed" "$T/out")" "0:1"
    "$MONGODUMP" --uri "$uri" --archive="$T/$kind.archive" >"$T/out" 2>&1
    expect_eq "$kind: mongodump dumps it back" "$?" 0
    "$REMODEL" diff "$S" "$T/$kind.archive" --json >"$T/diff.json" 2>/dev/null
    expect_eq "$kind: the same documents in every namespace (remodel diff)" "$(python3 - "$T/diff.json" "$kind" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["namespaces"] if sys.argv[2] != "ferretdb" or not r["ns"].startswith("catalog.")]
print(len(rows), sum(r["onlyInA"] + r["onlyInB"] + r["changed"] for r in rows),
      sum(r["documentsInA"] for r in rows))
EOF
)" "$want"
done
"$MONGORESTORE" --uri "$(cat "$T/ferretdb/uri")" --archive="$S.archive.gz" --gzip \
    --nsInclude 'catalog.parts' >"$T/out" 2>&1
expect_eq "ferretdb: has no decimal128 (a fact the online mode must handle)" \
    "$?:$(grep -c 'invalid BSON type bsonproto.Decimal128' "$T/ferretdb/log")" "1:1"

if [ -n "${MONGOSH:-}" ] && [ -x "$MONGOSH" ]; then
    expect_eq "ferretdb: mongosh 2.x counts the readings" \
        "$("$MONGOSH" "$(shell_uri "$(cat "$T/ferretdb/uri")")" --quiet --eval 'db.getSiblingDB("iot").readings.countDocuments({})' 2>&1)" 1600
    "$MONGOSH" "$(cat "$T/java/uri")" --quiet --eval 1 >"$T/out" 2>&1
    expect_eq "java: mongosh 2.x refuses wire version 7 (why mongosh 1.10.6 is pinned too)" \
        "$?:$(grep -c 'reports maximum wire version 7' "$T/out")" "1:1"
else
    fail "mongosh 2.x" "not installed (tests/peers/install.sh warns when npm fails)"
fi
if [ -n "${MONGOSH1:-}" ] && [ -x "$MONGOSH1" ]; then
    juri=$(shell_uri "$(cat "$T/java/uri")")
    expect_eq "java: mongosh 1.10.6 counts the readings" \
        "$("$MONGOSH1" "$juri" --quiet --eval 'db.getSiblingDB("iot").readings.countDocuments({})' 2>&1)" 1600
    # The server's $lookup against remodel's embed: per person, the tasks.
    "$MONGOSH1" "$juri" --quiet --eval 'db.getSiblingDB("crm").people.aggregate([
        {$lookup: {from: "tasks", localField: "_id", foreignField: "owner", as: "t"}},
        {$project: {ids: "$t._id"}}]).forEach(d => print(EJSON.stringify(d)))' >"$T/server.jsonl" 2>&1
    echo '{"remodel": 1, "steps": [{"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "t", "keepSource": true}}]}' >"$T/embed.json"
    "$REMODEL" run -q "$T/embed.json" --from "$S" --to "$T/embedded.archive"
    "$REMODEL" show "$T/embedded.archive" --ns crm.people >"$T/remodel.jsonl"
    expect_eq "java: its \$lookup and remodel's embed match the same tasks to each of the 98 people" \
        "$(python3 - "$T/server.jsonl" "$T/remodel.jsonl" <<'EOF'
import json, sys
def load(path, ids):
    out = {}
    for line in open(path):
        d = json.loads(line)
        out[json.dumps(d["_id"])] = sorted(json.dumps(x) for x in ids(d))
    return out
server = load(sys.argv[1], lambda d: d["ids"])
mine = load(sys.argv[2], lambda d: [t["_id"] for t in d.get("t", [])])
print(len(server), server == mine, sum(len(v) for v in server.values()))
EOF
)" "98 True 984"
else
    fail "mongosh 1.10.6" "not installed (tests/peers/install.sh warns when npm fails)"
fi

# Each stop notes the server's CPU seconds where REMODEL_SERVER_CPU says
# (tests/run.sh sums them by kind): the kind, the seconds (both restored
# the sample, so more than none), the directory.
for kind in ferretdb java; do
    REMODEL_SERVER_CPU=$T/cpu "$SERVER" stop "$T/$kind"
done
expect_eq "a stop notes the server's kind, CPU seconds and directory (REMODEL_SERVER_CPU)" \
    "$(awk '{print $1, ($2 > 0), $3}' "$T/cpu" 2>&1)" "$(printf 'ferretdb 1 %s\njava 1 %s' "$T/ferretdb" "$T/java")"
