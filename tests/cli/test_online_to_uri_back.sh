#!/usr/bin/env bash
# Going back from one deployment to another (--to-uri, issue 54 item 4):
# `remodel online rollback PLAN --uri SRC --to-uri DEST --carry-writes`
# after `finalize --writes-stopped` committed the plan on DEST and the
# application wrote there, in both directions: FerretDB (with its oplog)
# to mongo-java-server (change streams), and back. The plan embeds
# shop.kids into shop.parents (its inverse: an extract); some kids have no
# parent and stay in shop.kids.
#  - finalize records DEST's change-log point in the pair's record;
#  - an application writer on DEST: a parent renamed, one inserted with a
#    child, one deleted with its children; a child pushed into a parent,
#    one pulled, one changed in place; a parentless kid changed, one
#    deleted, one inserted; in shop.other, which the plan copied as it
#    is, a document changed, one deleted, one inserted (given back as
#    they are);
#  - rollback without a flag: refused (exit 2), naming the namespaces and
#    how many documents, nothing written;
#  - rollback --carry-writes --dry-run: says what it would carry; both
#    servers byte for byte as they were;
#  - rollback --carry-writes killed (kill -9) at a few of its writes to
#    SRC (held there by the fault layer's delay), then run again: exit 0,
#    and SRC equals the original SRC with exactly those writes applied in
#    the old design (built in Python here), byte for byte, none lost,
#    none doubled; the pair's record and status --json say the plan was
#    rolled back, the results kept on DEST; rollback again says so;
#  - a plan whose `set` overwrote a field (its inverse, the field
#    removed, would lose the old values): rollback --carry-writes, and
#    its dry run, refused (exit 2) naming the step and the field, SRC
#    untouched;
#    --discard-writes-after-switch forgets the commit, SRC untouched.
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_back.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
use_faulty || exit 1
to_uri_setup "to-uri back"
# A set over a field every item has: its inverse (the field removed)
# would lose the values it overwrote.
echo '{"remodel": 1, "steps": [{"set": {"in": "misc.items", "fields": {"v": "new"}}}]}' >"$T/plans/tag.json"

seed() {
    py 'c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(60)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % 60, "x": i} for i in range(180)])
c.shop.kids.insert_many([{"_id": 5000 + i, "owner": 900 + i, "x": -i} for i in range(5)])
c.shop.kids.create_index("owner")
c.shop.other.insert_many([{"_id": i, "v": i} for i in range(20)])'
}
# snap URI FILE: every document of shop (and misc) on URI, its bytes, in
# _id order, and the state database's collections with their counts.
snap() {
    uri=$1 py 'import bson
from bson.raw_bson import RawBSONDocument
raw = pymongo.MongoClient(sys.argv[1], directConnection=True, document_class=RawBSONDocument)
with open(sys.argv[2], "w") as f:
    for db in ("shop", "misc"):
        for coll in sorted(c[db].list_collection_names()):
            for d in sorted(raw[db][coll].find(), key=lambda d: repr(bson.decode(d.raw)["_id"])):
                print(db, coll, d.raw.hex(), file=f)
    for coll in sorted(c.remodel.list_collection_names()):
        print("remodel", coll, c.remodel[coll].count_documents({}), file=f)' "$2"
}
# The application's writes on DST, after the commit (the new design).
DEST_WRITES='p, k = c.shop.parents, c.shop.kids
p.update_one({"_id": 5}, {"$set": {"name": "renamed"}})
p.insert_one({"_id": 500, "name": "new", "kids": [{"_id": 7000, "x": 70}]})
p.delete_one({"_id": 7})
p.update_one({"_id": 3}, {"$push": {"kids": {"_id": 7001, "x": 71}}})
four = p.find_one({"_id": 4})["kids"]
p.update_one({"_id": 4}, {"$set": {"kids": [e for e in four if e["_id"] != 1004]}})
six = p.find_one({"_id": 6})["kids"]
p.update_one({"_id": 6}, {"$set": {"kids": [dict(e, x=606) if e["_id"] == 1006 else e for e in six]}})
k.update_one({"_id": 5001}, {"$set": {"x": 51}})
k.delete_one({"_id": 5002})
k.insert_one({"_id": 5009, "owner": 909, "x": 59})
o = c.shop.other
o.update_one({"_id": 2}, {"$set": {"v": -2}})
o.delete_one({"_id": 3})
o.insert_one({"_id": 99, "v": 99})'
# (FerretDB 1.x takes neither a positional $set nor a $pull by condition:
# the application rewrites the array.)
# expect_src FILE KIND: SRC (of KIND) as it was (snap FILE) with exactly
# those writes applied in the old design, into FILE.want. A document the
# carry wrote is as the inverse makes it: a parent without its kids; a kid
# that was embedded, its fields as embedded, then owner, its parent's
# _id; a kid that never was (no parent) as the application left it on
# DST. mongo-java-server keeps a replaced document's fields in the order
# they were stored (FerretDB takes the replacement's).
expect_src() {
    python3 - "$1" "$2" <<'EOF'
import sys, bson
rows = [l.split() for l in open(sys.argv[1])]
docs = {}
for db, coll, h in (r for r in rows if r[0] != "remodel"):
    docs[(coll, bson.decode(bytes.fromhex(h))["_id"])] = bytes.fromhex(h)
def put(coll, d):
    docs[(coll, d["_id"])] = bson.encode(d)
def kid(_id, x, owner):
    d = {"_id": _id, "x": x, "owner": owner}
    was = docs.get(("kids", _id))
    if was and sys.argv[2] == "java":
        d = {k: d[k] for k in bson.decode(was)}
    put("kids", d)
put("parents", {"_id": 5, "name": "renamed"})
put("parents", {"_id": 500, "name": "new"})
kid(7000, 70, 500)
del docs[("parents", 7)]
for key in [k for k, v in docs.items() if k[0] == "kids" and bson.decode(v)["owner"] == 7]:
    del docs[key]
kid(7001, 71, 3)
del docs[("kids", 1004)]
kid(1006, 606, 6)
put("kids", {"_id": 5001, "owner": 901, "x": 51})
del docs[("kids", 5002)]
put("kids", {"_id": 5009, "owner": 909, "x": 59})
put("other", {"_id": 2, "v": -2})
del docs[("other", 3)]
put("other", {"_id": 99, "v": 99})
with open(sys.argv[1] + ".want", "w") as f:
    for coll in ("kids", "other", "parents"):
        for key in sorted((k for k in docs if k[0] == coll), key=lambda k: repr(k[1])):
            print("shop", coll, docs[key].hex(), file=f)
    for r in rows:
        if r[0] != "shop":
            print(*r, file=f)
EOF
}
# killed SPEC: rollback --carry-writes held at SPEC's call (the fault
# layer's delay) and killed there (kill -9); the call it was held at in
# $held ("" when it ended first).
killed() {
    local w p
    rm -f "$T/flog"
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/ferr"
    REMODEL_ONLINE_FAULT=$1:delay=60000 REMODEL_ONLINE_FAULT_LOG=$T/flog \
        "$REMODEL" online rollback "$P" --uri "$SRC" --to-uri "$DST" --carry-writes \
        >"$T/fout" 2>"$T/ferr" &
    p=$!
    # Held once the layer said it and logged the call (in that order).
    at() { awk -v k="${1%%:*}" -v n="${1##*:}" '$2 == k && $3 == n {print $4; exit}' "$T/flog" 2>/dev/null; }
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        grep -q "^remodel-online: fault layer: call" "$T/ferr" 2>/dev/null && [ -n "$(at "$1")" ] && break
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
    held=
    grep -q "^remodel-online: fault layer: call" "$T/ferr" && held="${1%%:*} #${1##*:} on $(at "$1")"
}

for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    online_start "$from" "$T/srv-src-$from" 0 changelog || continue
    SRC=$uri
    seed
    online_start "$to" "$T/srv-dst-$to" 0 changelog || continue
    DST=$uri
    d="$from->$to"

    two run -q
    two finalize --writes-stopped
    [ "$to" = ferretdb ] && mode=oplog || mode=changeStream
    expect_eq "$d: finalize commits, recording the destination's change-log point ($mode)" \
        "$rc $(uri=$DST py 'print(c.remodel.pairs.find_one()["destPoint"]["mode"])')" "0 $mode"
    [ "$to" = ferretdb ] && said="oplog (from ts" || said="change streams (resume point"
    expect_message "$d: ... and says it" "finalize: the destination's change log at the commit: $said"
    snap "$SRC" "$T/src0"
    uri=$DST py "$DEST_WRITES"
    expect_src "$T/src0" "$from"

    # ---- without a flag: refused, naming what was written ----
    two rollback
    expect_eq "$d: rollback of a plan written on the destination since the commit: refused (exit 2)" "$rc" "2"
    expect_message "$d: ... naming the namespaces and how many, nothing written" \
        "the destination's change log shows writes since the commit" "shop.parents: 6 document(s)" \
        "shop.kids: 3 document(s)" "shop.other: 3 document(s) (copied as it is)" \
        "--carry-writes carries them back" "nothing written"
    snap "$SRC" "$T/src1"
    expect_eq "$d: ... the source as it was" "$(cmp -s "$T/src0" "$T/src1" && echo same)" "same"

    # ---- the dry run ----
    snap "$DST" "$T/dst0"
    two rollback --carry-writes --dry-run
    expect_eq "$d: rollback --carry-writes --dry-run (exit 0)" "$rc:$(grep -c 'error' "$T/err")" "0:0"
    expect_message "$d: ... says what it would carry" \
        "shows 12 document(s) written since the commit" \
        "rollback: would carry back into shop.parents on the source: 1 inserted, 1 replaced, 1 deleted" \
        "rollback: would carry back into shop.kids on the source: 3 inserted, 2 replaced, 5 deleted" \
        "rollback: would give back shop.other on the source (copied as it is): 2 replaced or inserted, 1 deleted" \
        "nothing written on either server"
    snap "$SRC" "$T/src1"
    snap "$DST" "$T/dst1"
    expect_eq "$d: ... both servers as they were, byte for byte" \
        "$(cmp -s "$T/src0" "$T/src1" && cmp -s "$T/dst0" "$T/dst1" && echo same)" "same"

    # ---- the carry, killed at a few of its writes, run again ----
    # (Each command's first update and delete are the marker's, written
    # and removed on the destination to tell the deployments apart; then
    # the lease's update: the carry's writes to the source come after.)
    for spec in update:3 insert:2 delete:2; do
        killed "$spec"
        expect_eq "$d: rollback --carry-writes killed (kill -9) at a write to the source ($spec)" \
            "$(echo "$held" | sed 's/ on \(kids\|parents\)$/ on SRC/')" "${spec/:/ #} on SRC"
    done
    two rollback --carry-writes
    expect_eq "$d: rollback --carry-writes again completes (exit 0)" "$rc" "0"
    expect_message "$d: ... saying it carried back into the source and kept the results" \
        "rollback: carried back into shop.kids on the source" \
        "rollback: plan emb.json rolled back (carried): the source is the application's again" \
        "kept on the destination under their final names"
    snap "$SRC" "$T/src2"
    if cmp -s "$T/src0.want" "$T/src2"; then
        pass "$d: the source equals the original with exactly the destination's writes, old design, byte for byte"
    else
        fail "$d: the source equals the original with exactly the destination's writes, old design, byte for byte" \
            "$(diff "$T/src0.want" "$T/src2" | head -n 10 | cut -c1-200)"
    fi
    expect_eq "$d: the pair's record: rolled back, carried, the results kept" \
        "$(uri=$DST py 'r = c.remodel.pairs.find_one()["rolledBack"]; print(r["how"], r["writesSince"], r["results"][:47])')" \
        "carried 12 kept on the destination under their final names"
    two status --json
    expect_eq "$d: status --json says it" \
        "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["toUri"]; print(d["rolledBack"]["how"], d["canCommit"], d["why"][:15])' "$T/out")" \
        "carried False rolled back at "
    two status
    expect_eq "$d: status says it too" \
        "$(grep -c '^to-uri: committed at .*, then rolled back at .* (carried): the source is the application.s again; the results are kept on the destination' "$T/out")" "1"
    two rollback --carry-writes
    expect_eq "$d: rollback again: done already, said (exit 0)" \
        "$rc $(grep -c 'was rolled back on .* already' "$T/err")" "0 1"

    # ---- a plan whose inverse would lose what it overwrote ----
    uri=$SRC py 'c.misc.items.insert_many([{"_id": i, "v": i} for i in range(20)])'
    run_rm online run "$T/plans/tag.json" --uri "$SRC" --to-uri "$DST" --nsInclude 'misc.*' -q
    run_rm online finalize "$T/plans/tag.json" --uri "$SRC" --to-uri "$DST" --writes-stopped -q
    expect_eq "$d: a plan with a set step, committed (exit 0)" "$rc" "0"
    uri=$DST py 'c.misc.items.update_one({"_id": 3}, {"$set": {"v": 33}})'
    snap "$SRC" "$T/src3"
    for dry in "" --dry-run; do
        run_rm online rollback "$T/plans/tag.json" --uri "$SRC" --to-uri "$DST" --carry-writes $dry
        expect_eq "$d: rollback --carry-writes $dry of it: refused (exit 2)" "$rc" "2"
        expect_message "$d: ... naming the step and the field it overwrote" "plan tag.json: step 1 (set): its inverse removes \"v\" from misc.items" \
            "nothing written to the source: --discard-writes-after-switch forgets the commit"
    done
    run_rm online rollback "$T/plans/tag.json" --uri "$SRC" --to-uri "$DST" --discard-writes-after-switch
    expect_eq "$d: rollback --discard-writes-after-switch of it: the commit forgotten (exit 0)" \
        "$rc $(grep -c 'rolled back (discarded)' "$T/err")" "0 1"
    snap "$SRC" "$T/src4"
    expect_eq "$d: ... the source untouched by all three" "$(cmp -s "$T/src3" "$T/src4" && echo same)" "same"
    for s in "$T"/srv-*; do "$SERVER" stop "$s" >/dev/null 2>&1; done
done
