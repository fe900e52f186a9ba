#!/usr/bin/env bash
# Makes the online harness's corpus (tests/fuzz/fuzz_online.c) from what
# real servers answer: FerretDB (its oplog) and mongo-java-server (change
# streams), each started with its change log (tests/peers/server.sh). On
# each, remodel online runs a plan and syncs it after writes, leaving its
# record, lease, fences and checkpoints in the state database; then a
# change stream's replies (aggregate and getMore, around inserts, updates,
# a replace, deletes and a drop) and the oplog's entries are read raw.
# Each file is the harness's byte (0 stream reply, 1 oplog entry, 2 the
# plan's record, 3 a lease or fence, 4 a checkpoint) then the BSON.
#   tests/fuzz/seeds_online.sh BUILD   (run once; make fuzz grows the corpus)
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
. tests/peers/env.sh
C=$PWD/tests/fuzz/corpus/online
T=$(mktemp -d)
trap 'for d in "$T"/srv-*; do "$PEERS_SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$C"
cp dumps/plans/embed-tasks.json "$T/embed.json"

for kind in ferretdb java; do
    uri=$(REMODEL_SERVER_OWNER=$$ "$PEERS_SERVER" start "$T/srv-$kind" "$kind" changelog)
    python3 - "$uri" <<'PY'
import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
c.crm.people.insert_many([{"_id": i, "name": "p%d" % i} for i in range(20)])
c.crm.tasks.insert_many([{"_id": 100 + i, "owner": i % 20, "due_date": i} for i in range(60)])
c.crm.tasks.create_index("owner")
PY
    "$build/remodel" online run "$T/embed.json" --uri "$uri" -q
    python3 - "$uri" <<'PY'
import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
c.crm.tasks.update_one({"_id": 101}, {"$set": {"owner": 7}})
c.crm.tasks.insert_one({"_id": "t-new", "owner": 3, "due_date": 1})
c.crm.tasks.delete_one({"_id": 102})
PY
    "$build/remodel" online sync "$T/embed.json" --uri "$uri" -q
    python3 - "$uri" "$kind" "$C" <<'PY'
import sys, os, hashlib, pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
uri, kind, out = sys.argv[1:]
c = pymongo.MongoClient(uri, directConnection=True)
raw = CodecOptions(document_class=RawBSONDocument)
n = [0]
def save(tag, doc):
    data = bytes([tag]) + doc.raw
    name = "%s-%d-%s" % (kind, tag, hashlib.sha1(data).hexdigest()[:12])
    open(os.path.join(out, name), "wb").write(data)
    n[0] += 1
st = c.get_database("remodel", codec_options=raw)
for coll, tag in (("plans", 2), ("leases", 3), ("fences", 3), ("checkpoints", 4)):
    for d in st[coll].find():
        save(tag, d)
if kind == "java":
    db = c.get_database("crm", codec_options=raw)
    r = db.command({"aggregate": "tasks", "pipeline": [{"$changeStream": {"fullDocument": "updateLookup"}}],
                    "cursor": {}}, codec_options=raw)
    save(0, r)
    cid = r["cursor"]["id"]
    c.crm.tasks.insert_one({"_id": "s1", "owner": 1})
    c.crm.tasks.update_one({"_id": "s1"}, {"$set": {"owner": 2}})
    c.crm.tasks.replace_one({"_id": "s1"}, {"owner": 4, "due_date": 9})
    c.crm.tasks.delete_one({"_id": "s1"})
    save(0, db.command({"getMore": cid, "collection": "tasks", "maxTimeMS": 500}, codec_options=raw))
    c.crm.drop_collection("people_copy")
    c.crm.people_copy.insert_one({"_id": 1})
    r = db.command({"aggregate": "people_copy", "pipeline": [{"$changeStream": {}}], "cursor": {}},
                   codec_options=raw)
    c.crm.drop_collection("people_copy")
    save(0, db.command({"getMore": r["cursor"]["id"], "collection": "people_copy", "maxTimeMS": 500}, codec_options=raw))
else:
    loc = c.get_database("local", codec_options=raw)
    c.crm.tasks.replace_one({"_id": 103}, {"owner": 4, "due_date": 9})
    c.crm.people_copy.insert_one({"_id": 1})
    c.crm.drop_collection("people_copy")
    nss = ["crm.tasks", "crm.people", "crm.people_copy", "crm.$cmd", "remodel.plans"]
    for e in loc["oplog.rs"].find({"ns": {"$in": nss}}).sort("$natural", -1).limit(40):
        save(1, e)
print("%s: %d inputs" % (kind, n[0]))
PY
    "$PEERS_SERVER" stop "$T/srv-$kind" >/dev/null
done
du -sh "$C"
