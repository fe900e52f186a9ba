#!/usr/bin/env bash
# An in-place run that meets a failing expression part way (issue 62, item
# 7): the batches before it are changed where they are, and the error says
# so: the collection, how many documents, and the rollback that puts them
# back. Then that rollback restores every document byte for byte. On
# FerretDB and mongo-java-server: t.c holds 31 documents, the last one's
# date "n/a", which $toDate fails on; batches of 10 (the red team's case
# was 3,000 of 3,001: FerretDB takes minutes over that in place). And a
# document a step would nest past MongoDB's 100 levels (issue 62, item 4):
# refused online as `remodel run` refuses it, naming the step, the
# namespace and the _id, side by side and in place.
#   REMODEL=build/remodel bash tests/cli/test_online_inplace_fail.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {"at": {"$toDate": "$d"}}}}]}' \
    >"$T/plans/todate.json"
P32=$(python3 -c 'print(".".join(["p"] * 32))')
echo '{"remodel": 1, "steps": [{"set": {"in": "t.d", "fields": {"'"$P32"'": "$a"}}}]}' >"$T/plans/deep.json"

# snap FILE: t.c's documents, their bytes, by _id.
snap() { py 'import bson
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
db = c.get_database("t", codec_options=CodecOptions(document_class=RawBSONDocument))
json.dump(sorted(d.raw.hex() for d in db.c.find()), open(sys.argv[2], "w"))' "$1"; }

for kind in $(online_kinds); do
    online_start "$kind" "$T/srv-$kind" || continue
    py 'c.t.c.insert_many([{"_id": i, "d": "2024-01-%02d" % (1 + i % 28)} for i in range(1, 31)])
c.t.c.insert_one({"_id": 31, "d": "n/a"})'
    snap "$T/before.json"
    online run todate --in-place --batch-size 10
    if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ]; then pass "$kind: the failing document: a clean failure"
    else fail "$kind: the failing document: a clean failure" "exit $rc: $(cat "$T/err")"; fi
    expect_message "$kind: ... the document and the operator, the collection part migrated, the rollback" \
        'document { "_id" : 31 }: field "at": $toDate' \
        "(--in-place: t.c is left part migrated, 30 document(s) changed where they are; \`remodel online rollback $T/plans/todate.json\` with the same --uri puts them back, or fix the plan and run again to go on)"
    expect_eq "$kind: ... and so it is: 30 documents have the date" \
        "$(py 'print(c.t.c.count_documents({"at": {"$exists": True}}))')" 30
    online rollback todate
    expect_eq "$kind: the rollback it names: exit 0" "$rc" 0
    snap "$T/after.json"
    expect_eq "$kind: ... every document as it was, byte for byte" \
        "$(cmp -s "$T/before.json" "$T/after.json" && echo same)" same

    # t.d: ten flat documents, then one whose a nests 69 levels (70 in all):
    # a 32-part path to it makes 101.
    py 'c.t.d.insert_many([{"_id": i, "a": 1} for i in range(1, 11)])
v = 1
for _ in range(69):
    v = {"a": v}
c.t.d.insert_one({"_id": 11, "a": v})'
    online run deep --batch-size 5
    expect_eq "$kind: a result nested past 100 levels, side by side: exit 1" "$rc" 1
    expect_message "$kind: ... the step, the namespace, the _id" \
        'step 1 (set): t.d: document { "_id" : 11 }: would nest 101 levels deep (MongoDB stores at most 100 levels of nesting)'
    online rollback deep
    online run deep --in-place --batch-size 5
    expect_eq "$kind: ... in place: exit 1" "$rc" 1
    expect_message "$kind: ... the same, and the ten changed before it" \
        'step 1 (set): t.d: document { "_id" : 11 }: would nest 101 levels deep' \
        "(--in-place: t.d is left part migrated, 10 document(s) changed where they are;"
    expect_eq "$kind: ... the deep document as it was" \
        "$(py 'print(sorted(c.t.d.find_one({"_id": 11})))')" "['_id', 'a']"
done
