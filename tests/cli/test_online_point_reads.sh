#!/usr/bin/env bash
# Reads of a few changed documents (issue 65, item 3;
# shell-ext/conn/online_points.c): a sync from the change log reads the
# documents its events name by {_id: {$in: [...]}}, which FerretDB 1.x
# answers by reading the whole collection, where it serves an equality
# on a string _id without one. Where a server's explain says so, up to
# 16 such _ids are read one find each. On each server with its change
# log, a set plan on o.words (string _ids) and o.nums (int _ids), 600
# documents each, run; then, counted by REMODEL_ONLINE_TRACE:
#   1. 3 words and 3 nums changed, sync: exit 0; on FerretDB the words
#      read by point (finds of {_id: "w..."}, none of words with $in),
#      the nums by $in (FerretDB pushes no number _id down); on
#      mongo-java-server (no explain) every read by $in, no point;
#   2. explain asked once for the $in and once a type on a connection
#      (FerretDB: 3; the java server refuses it: then $in, still 3 asked);
#   3. 20 words changed (more than 16): sync reads them by $in, and
#      deletes them (a rewrite: a delete and an insert on these servers)
#      by one statement of their _ids, one command (online_write.c);
#   4. every result its source's n doubled (pymongo), verify exit 0.
#   REMODEL=build/remodel bash tests/cli/test_online_point_reads.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "point reads: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "o.words", "fields": {"m": {"$multiply": ["$n", 2]}}}},
 {"set": {"in": "o.nums", "fields": {"m": {"$multiply": ["$n", 2]}}}}]}' >"$T/plans/dbl.json"

# finds COLL FILE: "points:with_in" of the trace's finds of COLL in FILE
# (a point: a filter of _id alone, a value not a document).
finds() {
    python3 -c 'import re, sys
coll, points, ins = sys.argv[1], 0, 0
for l in open(sys.argv[2]):
    if not re.match(r"trace: .* ms \S+: \{ \"find\" : \"%s\"," % re.escape(coll), l):
        continue
    ins += "$in" in l
    points += re.search(r"\"filter\" : \{ \"_id\" : [^{]", l) is not None
print("%d:%d" % (points, ins))' "$1" "$2"
}
explains() { grep -c '^trace: .* ms [^ ]*: { "explain" : ' "$1"; }
# doubled COLL: "sources wrong" of o.COLL's results against its sources.
doubled() {
    py 't = c.o[[n for n in c.o.list_collection_names() if n.startswith(sys.argv[2] + "_remodel_")][0]]
src = {d["_id"]: d["n"] for d in c.o[sys.argv[2]].find()}
res = {d["_id"]: d.get("m") for d in t.find()}
print(len(src), sum(1 for k, v in src.items() if res.get(k) != 2 * v) + len(set(res) - set(src)))' "$1"
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" 0 changelog || continue
    py 'c.o.words.insert_many([{"_id": "w%04d" % i, "n": i} for i in range(600)])
c.o.nums.insert_many([{"_id": i, "n": i} for i in range(600)])'
    online run dbl
    expect_eq "$kind: run: exit 0" "$rc" 0

    # 1, 2. a few changes of each.
    py 'for i in (5, 300, 599):
    c.o.words.update_one({"_id": "w%04d" % i}, {"$set": {"n": 10000 + i}})
    c.o.nums.update_one({"_id": i}, {"$set": {"n": 10000 + i}})'
    REMODEL_ONLINE_TRACE=1 run_rm online sync "$T/plans/dbl.json" --uri "$uri"
    w=$(finds words "$T/err") n=$(finds nums "$T/err") e=$(explains "$T/err")
    if [ $kind == ferretdb ]; then
        expect_eq "$kind: sync of 3 + 3 changes: exit 0; words read by point, none by \$in; nums by \$in, none by point; explain asked 3 times" \
            "$rc:$([ "${w%:*}" -ge 3 ] && echo points):${w#*:}:${n%:*}:$([ "${n#*:}" -ge 1 ] && echo in):$e" \
            "0:points:0:0:in:3"
    else
        expect_eq "$kind: sync of 3 + 3 changes: exit 0; explain refused, so every read by \$in, none by point; explain asked 3 times" \
            "$rc:${w%:*}:$([ "${w#*:}" -ge 1 ] && echo in):${n%:*}:$([ "${n#*:}" -ge 1 ] && echo in):$e" \
            "0:0:in:0:in:3"
    fi

    # 3. more than 16: by $in.
    py 'for i in range(100, 120):
    c.o.words.update_one({"_id": "w%04d" % i}, {"$set": {"n": 20000 + i}})'
    REMODEL_ONLINE_TRACE=1 run_rm online sync "$T/plans/dbl.json" --uri "$uri"
    w=$(finds words "$T/err")
    expect_eq "$kind: sync of 20 changed words: exit 0, read by \$in, no point" \
        "$rc:${w%:*}:$([ "${w#*:}" -ge 1 ] && echo in)" "0:0:in"
    # Each rewritten as a delete and an insert on both servers: the 20
    # deletes one statement of their _ids, in one command.
    d=$(grep -c '^trace: .* ms [^ ]*: { "delete" : "words_remodel_' "$T/err")
    q=$(grep '^trace: .* ms [^ ]*: { "delete" : "words_remodel_' "$T/err" | grep -c '"deletes" : \[ { "q" : { "_id" : { "\$in" : \[ "w0100", ')
    expect_eq "$kind: ... their deletes one command, one statement of their _ids (\$in)" "$d:$q" "1:1"

    # 4. the results.
    expect_eq "$kind: every word's result its n doubled" "$(doubled words)" "600 0"
    expect_eq "$kind: every num's result its n doubled" "$(doubled nums)" "600 0"
    online verify dbl
    expect_eq "$kind: verify: exit 0" "$rc" 0
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
