#!/usr/bin/env bash
# A rescan's reads of the target (issue 65, item 3;
# shell-ext/batch/online_merge.c): verify and sync read a range's results
# beside its drivers, one cursor over the target a range in _id order,
# never a query of each batch's _ids ({_id: {$in: ...}}), which FerretDB
# answers by reading the whole target, once a batch. On a server run
# without a change log (sync then rescans every range, as after the log
# rolled off), 2000 documents, a set plan run --batch-size 100
# --partitions 4 --workers 2, then three sources changed, one added and
# one removed; counted by REMODEL_ONLINE_TRACE (its lines give each
# read's documents):
#   1. sync, one reader: exit 0, the five differences rewritten or
#      removed (the result of the source removed found by the merge: a
#      target document between two drivers, neither's), one find of the
#      target beside the drivers and none with $in: its 2000 documents,
#      where a query a batch read the target 20 times on FerretDB, and a
#      second read of its _ids looked for results no range makes; the
#      range's rewrites and removal held and sent as two write commands
#      (a delete command a batch with changes cost FerretDB a whole read);
#   2. verify --workers 2: exit 0, one find of the target per recorded
#      partition (4) and one of its _ids, none with $in, 2 x 2000 read;
#   3. the results the sources make, each the source's n doubled
#      (pymongo); then two sources removed and sync --workers 2: each
#      partition's merge removes its one (a delete command each), no read
#      of the _ids after;
#   4. string _ids (ASCII and not, which the merge looks for by _id when
#      it misses them): sync after changes finds exactly those, verify 0;
#      a source of each kind removed: both results removed, counted once
#      (past a non-ASCII _id the merge is not sure: the step's end looks
#      for the drivers again).
#   REMODEL=build/remodel bash tests/cli/test_online_rescan_reads.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "o.items", "fields": {"m": {"$multiply": ["$n", 2]}}}}]}' >"$T/plans/dbl.json"
echo '{"remodel": 1, "steps": [{"set": {"in": "o.words", "fields": {"m": {"$multiply": ["$n", 2]}}}}]}' >"$T/plans/words.json"

# reads COLL FILE: "finds:with_in:documents" of the trace lines in FILE
# that read COLL (a find naming it, a getMore of its cursor).
reads() {
    python3 -c 'import re, sys
coll, finds, ins, docs = sys.argv[1], 0, 0, 0
for l in open(sys.argv[2]):
    if not l.startswith("trace: "):
        continue
    m = re.search(r"\((\d+) documents\)$", l.rstrip())
    if ("\"find\" : \"%s\"" % coll) in l:
        finds += 1
        ins += "$in" in l
    elif not ("\"getMore\"" in l and ("\"collection\" : \"%s\"" % coll) in l):
        continue
    docs += int(m.group(1)) if m else 0
print("%d:%d:%d" % (finds, ins, docs))' "$1" "$2"
}
# writes COLL FILE: the write commands (delete, insert, update) to COLL
# in FILE's trace lines.
writes() { grep -cE "^trace: .*\"(delete|insert|update)\" : \"$1\"" "$2"; }
# traced CMD [OPTION]...: online CMD of plan dbl, --batch-size 100, traced;
# the target's reads ($to's, as reads gives them) in $r, its write
# commands in $w.
traced() {
    REMODEL_ONLINE_TRACE=1 run_rm online "$1" "$T/plans/dbl.json" --uri "$uri" --batch-size 100 "${@:2}"
    r=$(reads "$to" "$T/err")
    w=$(writes "$to" "$T/err")
}
# gone: the count of results no range makes that the sync in $T/err removed.
gone() { sed -n 's/.* \([0-9][0-9]*\) documents in .* that no range makes (their sources are gone): removed$/\1/p' "$T/err" | paste -sd+ | bc; }
# doubled DB COLL: "sources wrong" of DB.COLL's results against its sources.
doubled() {
    py 't = c[sys.argv[2]][[n for n in c[sys.argv[2]].list_collection_names() if n.startswith(sys.argv[3] + "_remodel_")][0]]
src = {d["_id"]: d["n"] for d in c[sys.argv[2]][sys.argv[3]].find()}
res = {d["_id"]: d.get("m") for d in t.find()}
print(len(src), sum(1 for k, v in src.items() if res.get(k) != 2 * v) + len(set(res) - set(src)))' "$1" "$2"
}

for kind in ${KINDS:-$(online_kinds)}; do
    online_start $kind "$T/$kind" || continue
    py 'c.o.items.insert_many([{"_id": i, "n": i} for i in range(2000)])'
    online run dbl --batch-size 100 --partitions 4 --workers 2
    to=$(target o items)
    expect_eq "$kind: run --partitions 4 --workers 2: exit 0, 2000 results" \
        "$rc:$(py "print(c.o['$to'].count_documents({}))")" "0:2000"
    py 'for i in (5, 1000, 1999): c.o.items.update_one({"_id": i}, {"$set": {"n": -i}})
c.o.items.insert_one({"_id": 2500, "n": 1})
c.o.items.delete_one({"_id": 700})'

    # 1. sync, one reader.
    traced sync
    expect_eq "$kind: sync (a rescan): exit 0, 5 rewritten or removed, the one no range makes among them; the target read once (finds:\$in:documents), beside the drivers" \
        "$rc:$(grep -c 'plan dbl.json: 5 result(s) rewritten or removed' "$T/err"):$(gone):$r" "0:1:1:1:0:2000"
    [ "$r" == "1:0:2000" ] || grep "^trace: .*$to" "$T/err" | head -n 5 >&2
    # The changes are in 4 of the 20 batches: each batch's rewrite was a
    # delete command and an insert (FerretDB reads the whole target for
    # each delete of number _ids); the range's are held and sent together.
    expect_eq "$kind: ... the range's rewrites and removal in two write commands (a delete and an insert; MongoDB: a delete and an update)" \
        "$w" "2"

    # 2. verify --workers 2: the run's four partitions, each a range.
    traced verify --workers 2
    expect_eq "$kind: verify --workers 2: exit 0, one find of the target per partition (4) and one for results no range makes, no \$in, 2 x 2000 documents" \
        "$rc:$r" "0:5:0:4000"

    # 3. the results, by pymongo.
    expect_eq "$kind: ... every result its source's n doubled, none without a source" \
        "$(doubled o items)" "2000 0"

    # 3b. sync --workers 2 after two sources removed: each partition's
    # merge removes what no driver makes; no read of the _ids after.
    py 'c.o.items.delete_many({"_id": {"$in": [701, 1500]}})'
    traced sync --workers 2
    expect_eq "$kind: sync --workers 2, two sources gone: exit 0, 2 no range makes, removed; one find of the target per partition (4), no \$in, 2000 documents; one delete command in each of the two partitions" \
        "$rc:$(gone):$r:$w" "0:2:4:0:2000:2"
    expect_eq "$kind: ... every result its source's n doubled, none without a source" \
        "$(doubled o items)" "1998 0"

    # 4. string _ids: ASCII ones merged, the others (é) looked for by _id
    # when missed; a source changed of each kind, one added of each.
    py 'c.o.words.insert_many([{"_id": "w%04d" % i, "n": i} for i in range(300)] +
                  [{"_id": "é%03d" % i, "n": i} for i in range(20)])'
    online run words --batch-size 40
    py 'c.o.words.update_one({"_id": "w0007"}, {"$set": {"n": 77}})
c.o.words.update_one({"_id": "é005"}, {"$set": {"n": 55}})
c.o.words.insert_many([{"_id": "w0150x", "n": 3}, {"_id": "é100", "n": 4}])'
    online verify words --batch-size 40
    expect_eq "$kind: words: verify finds the four (exit 1)" \
        "$rc:$(sed -n 's/.*: \([0-9]*\) results missing or different.*/\1/p' "$T/err" | paste -sd+ | bc)" "1:4"
    # One source of each kind gone too: the merge is not sure past a
    # non-ASCII _id, so the step's end looks for the drivers again; each
    # removed once, counted once.
    py 'c.o.words.delete_many({"_id": {"$in": ["w0100", "é007"]}})'
    online sync words --batch-size 40
    s=$rc g=$(gone)
    online verify words --batch-size 40
    expect_eq "$kind: ... sync exit 0, two no range makes, removed; then verify exit 0, every result its source's n doubled" \
        "$s:$g:$rc:$(doubled o words)" "0:2:0:320 0"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
