#!/usr/bin/env bash
# remodel online verify and sync --workers N (issue 37 items 1 and 2:
# shell-ext/cmd/online_workers.c, online_workers_rescan): parents whose
# _ids are of seven BSON types, their children embedded, run with
# --partitions 8 --workers 2; then results damaged by hand (updated,
# deleted, one added) in several partitions and sources changed (a child
# changed, a parent added, one deleted), on both servers:
#   1. verify --workers 3 and --workers 1: both exit 1, the same count,
#      and --differences lists the same _ids, in the same order, exactly
#      those damaged or changed; --workers 3 reads the eight recorded
#      partitions, every parent once;
#   2. sync --workers 3 rewrites or removes exactly those results (the
#      target's documents compared before and after), a verify then
#      exits 0, and the results are remodel run's on a dump of the
#      sources as they are now, byte for byte;
#   2b. a third of the results damaged (more than ten ranges differ):
#      verify --workers 3 and --workers 1 show the same number of
#      "the range after" lines, ten, the rest counted in one line;
#   3. a run read whole (one partition): verify --workers 2 says it reads
#      one range and finds what verify finds;
#   4. --workers with --sample is refused, naming why.
#   REMODEL=build/remodel bash tests/cli/test_online_verify_workers.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
N=20 # parents of each type
mkdir -p "$T/plans"

pyq() { python3 -c "import pymongo, sys, json, datetime, hashlib
from bson import Binary, Int64, ObjectId, json_util
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
$1" "$uri"; }
# snap DB COLL: each document of DB.COLL, its _id (canonical Extended
# JSON) and a digest of its bytes, sorted.
snap() {
    pyq "from bson.raw_bson import RawBSONDocument
from bson.codec_options import CodecOptions
import bson
for d in c['$1'].get_collection('$2', codec_options=CodecOptions(document_class=RawBSONDocument)).find():
    print(json_util.dumps({'_id': bson.decode(d.raw)['_id']}, json_options=json_util.CANONICAL_JSON_OPTIONS), hashlib.sha1(d.raw).hexdigest())" | sort
}
# ids FILE: the _ids of a --differences file as {"_id": ...} lines, sorted.
ids() { python3 -c 'import sys
from bson import json_util
for l in open(sys.argv[1]):
    print(json_util.dumps({"_id": json_util.loads(l)}, json_options=json_util.CANONICAL_JSON_OPTIONS))' "$1" | sort; }
# parts ERR: the "N partitions, W worker(s): R read" of a rescan's stderr.
parts() { sed -n 's/.*: \([0-9]* partitions, [0-9]* worker(s): [0-9]* read\)$/\1/p' "$1"; }

for kind in ${KINDS:-$(online_kinds)}; do
    online_start $kind "$T/$kind" || continue

    n=$(pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" v1 $N)
    kids_plan vw v1
    online run vw --partitions 8 --workers 2 --batch-size 7 --create-indexes
    run_rc=$rc
    to=$(target v1 parents)
    # Results damaged by hand, across the partitions: three changed (an
    # int's, a string's, a date's), two removed (an ObjectId's, a
    # binary's), one added that no parent makes; the sources changed: a
    # child of the long 10**12+5 (its parent's result), a parent added
    # (double 1000.5), one removed (string s0009).
    pyq "t = c.v1['$to']
t.update_one({'_id': 3}, {'\$set': {'n': -1}})
t.update_one({'_id': 's0011'}, {'\$unset': {'kids': 1}})
t.update_one({'_id': datetime.datetime(2000, 1, 8)}, {'\$set': {'x': 1}})
t.delete_one({'_id': ObjectId(b'%012d' % 4)})
t.delete_one({'_id': Binary(b'b0017')})
t.insert_one({'_id': 'zz-stray', 'n': 0})
c.v1.kids.update_one({'owner': Int64(10**12 + 5)}, {'\$set': {'x': 99}})
c.v1.parents.insert_one({'_id': 1000.5, 'n': 1000})
c.v1.parents.delete_one({'_id': 's0009'})"
    # The results that differ, and the children of the parent removed
    # (the children's pass finds their parent's result gone).
    results=$(pyq "for v in [3, 's0011', datetime.datetime(2000, 1, 8), ObjectId(b'%012d' % 4), Binary(b'b0017'), 'zz-stray', Int64(10**12 + 5), 1000.5, 's0009']:
    print(json_util.dumps({'_id': v}, json_options=json_util.CANONICAL_JSON_OPTIONS))" | sort)
    want=$( (echo "$results"; pyq "for k in c.v1.kids.find({'owner': 's0009'}):
    print(json_util.dumps({'_id': k['_id']}, json_options=json_util.CANONICAL_JSON_OPTIONS))") | sort)
    # partitions PASS: how many the run recorded for the pass.
    partitions() { pyq "print(len(c.remodel.plans.find_one({'_id': '$(pid vw)'})['partitions']['$1']))"; }
    k1=$(partitions 1)
    k2=$(partitions 1/2)

    # 1. verify with three workers and with one.
    online verify vw --workers 3 --differences "$T/d3"
    cp "$T/err" "$T/v3.err"
    v3_rc=$rc
    online verify vw --workers 1 --differences "$T/d1"
    cp "$T/err" "$T/v1.err"
    v1_rc=$rc
    last() { grep -o 'plan vw.json: [0-9]* result(s) differ' "$1"; }
    expect_eq "$kind: after run --partitions 8 --workers 2, verify --workers 3 and --workers 1: both exit 1, the same count (11)" \
        "$run_rc:$v3_rc:$v1_rc:$(grep -c 'plan vw.json: 11 result(s) differ' "$T/v3.err"):$(last "$T/v3.err")" \
        "0:1:1:1:$(last "$T/v1.err")"
    expect_eq "$kind: ... --differences: the damaged and changed _ids" "$(ids "$T/d3")" "$want"
    if cmp -s "$T/d1" "$T/d3"; then pass "$kind: ... the same list with 1 and 3 workers, in the same order"
    else fail "$kind: ... the same list with 1 and 3 workers, in the same order" "$(diff "$T/d1" "$T/d3" | head -20)"; fi
    expect_eq "$kind: ... --workers 3 read the recorded partitions, every parent and child once" \
        "$(parts "$T/v3.err")" "$k1 partitions, 3 worker(s): $n read
$k2 partitions, 3 worker(s): $((2 * n)) read"

    # 2. sync --workers 3 writes exactly those, then verify passes.
    snap v1 "$to" >"$T/before"
    online sync vw --workers 3
    expect_eq "$kind: sync --workers 3: exit 0, 11 rewritten or removed, by the partitions" \
        "$rc:$(grep -c 'plan vw.json: 11 result(s) rewritten or removed' "$T/err"):$(parts "$T/err")" \
        "0:1:$k1 partitions, 3 worker(s): $n read
$k2 partitions, 3 worker(s): $((2 * n)) read"
    snap v1 "$to" >"$T/after"
    expect_eq "$kind: ... the results it wrote or removed: exactly those" \
        "$(diff "$T/before" "$T/after" | sed -n 's/^[<>] \(.*\) [0-9a-f]*$/\1/p' | sort -u)" "$results"
    online verify vw --workers 3 -q
    expect_eq "$kind: ... a verify then passes" "$rc:$(cat "$T/err")" "0:"
    "$MONGODUMP" --uri "$uri" --db v1 --excludeCollection "$to" --archive="$T/v1.archive" --quiet
    "$REMODEL" run -q --force "$T/plans/vw.json" --from "$T/v1.archive" --to "$T/vw.archive" \
        2>"$T/off.err" || fail "$kind: remodel run" "$(cat "$T/off.err")"
    online_same "$kind: ... as remodel run on a dump of the sources now, byte for byte" \
        "$T/vw.archive" "v1.parents=$to"

    # 2b. More than ten ranges differ (a third of the results damaged,
    # batches of 5): as many lines with 1 and 3 workers, ten of a pass
    # shown, the rest counted.
    pyq "t = c.v1['$to']
for x in [d['_id'] for d in t.find({}, {'_id': 1})][::3]:
    t.update_one({'_id': x}, {'\$set': {'x': 1}})"
    # shown: verify's status, its "the range after" lines, its "N more"
    # lines (N itself differs: --workers 1 reads the pass as one range, its
    # batches not cut at the partitions' bounds).
    shown() { echo "$rc:$(grep -c ': the range after ' "$T/err"):$(grep -c ' more ranges differ$' "$T/err")"; }
    online verify vw --workers 1 --batch-size 5
    s1=$(shown)
    online verify vw --workers 3 --batch-size 5
    expect_eq "$kind: more than ten ranges differ: verify --workers 3 shows as many ranges as --workers 1, ten, the rest counted" \
        "$(shown):$s1" "1:10:1:1:10:1"

    # 3. A run that read it whole: one range, one worker.
    pyrun "$ROOT/tests/transforms/mixed_ids.py" "$uri" v2 3 >/dev/null
    kids_plan whole v2
    online run whole --create-indexes -q
    pyq "c.v2['$(target v2 parents)'].delete_one({'_id': 2})"
    online verify whole --workers 2
    expect_eq "$kind: a run read whole: verify --workers 2 reads each pass as one range, finds the one removed" \
        "$rc:$(grep -c 'one range, one worker (its run read it whole)' "$T/err"):$(grep -c 'plan whole.json: 1 result(s) differ, the first: 2 in v2.parents' "$T/err")" \
        "1:2:1"

    # 4. --workers with --sample.
    online verify vw --workers 2 --sample 5
    expect_eq "$kind: verify --workers --sample: refused, naming why" \
        "$rc:$(grep -c -- '--workers and --sample: one or the other' "$T/err")" "2:1"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
exit 0
