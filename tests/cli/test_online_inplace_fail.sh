#!/usr/bin/env bash
# An in-place run that meets a failing expression part way (issue 62, item
# 7): the batches before it are changed where they are, and the error says
# so: the collection, how many documents, and the rollback that puts them
# back. Then that rollback restores every document byte for byte. On
# FerretDB and mongo-java-server: t.c holds 31 documents, the last one's
# date "n/a", which $toDate fails on; batches of 10 (the red team's case
# was 3,000 of 3,001: FerretDB takes minutes over that in place).
#   REMODEL=build/remodel bash tests/cli/test_online_inplace_fail.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
trap 'for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {"at": {"$toDate": "$d"}}}}]}' \
    >"$T/plans/todate.json"

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
done
