#!/usr/bin/env bash
# remodel diff A B: identical dumps in any two formats, and each kind of
# difference (documents only in one, changed with the first differing path,
# another order, metadata, namespaces only in one), counted as Python
# counts them from the same files; --json; the spilled sort gives the same
# report; exit 0 / 1 / 2.
#   REMODEL=build/remodel bash tests/cli/test_diff.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
diff_rm() { "$REMODEL" diff "$@" >"$T/out" 2>"$T/err"; rc=$?; }
row() { awk -v ns="$1" '$1 == ns { $1 = ""; sub(/^ /, ""); print }' "$T/out"; }

# --- identical ---------------------------------------------------------------
"$REMODEL" convert -q "$S" "$T/s.tar.zst"
for other in "$ROOT/dumps/sample.archive.gz" "$T/s.tar.zst"; do
    diff_rm "$S" "$other"
    expect_eq "identical ($(basename "$other")): exit 0" "$rc" 0
    expect_eq "identical ($(basename "$other")): 11 namespaces, all identical" \
        "$(awk 'NR > 1 && $2 == "identical"' "$T/out" | wc -l)" 11
done

# --- a plan's changes ------------------------------------------------------------
"$REMODEL" run -q "$ROOT/dumps/plans/embed-tasks.json" --from "$S" --to "$T/emb"
diff_rm "$S" "$T/emb"
expect_eq "after embed: exit 1" "$rc" 1
# What Python finds in the same files: documents matched by _id.
want=$(python3 - "$S/crm" "$T/emb/crm" <<'PY'
import sys, bson
def load(p): return {bson.encode({"k": d["_id"]}): bson.encode(d) for d in bson.decode_all(open(p, "rb").read())}
for c in ("people", "tasks"):
    a, b = load(sys.argv[1] + "/%s.bson" % c), load(sys.argv[2] + "/%s.bson" % c)
    print("crm.%s differs %d %d %d %d %d same" % (c, len(a), len(b), len(a.keys() - b.keys()),
          len(b.keys() - a.keys()), sum(1 for k in a.keys() & b.keys() if a[k] != b[k])))
PY
)
expect_eq "after embed: crm.people row" "crm.people $(row crm.people)" "$(echo "$want" | sed -n 1p)"
expect_eq "after embed: crm.tasks row" "crm.tasks $(row crm.tasks)" "$(echo "$want" | sed -n 2p)"
expect_eq "after embed: the others identical" "$(awk 'NR > 1 && $2 == "identical"' "$T/out" | wc -l)" 9
expect_eq "after embed: 5 examples of changed people, at tasks" \
    "$(grep -c '^crm.people: changed: _id {"$oid":"[0-9a-f]*"}: first difference at tasks$' "$T/out")" 5
expect_eq "after embed: stderr says they differ" "$(grep -c 'differ' "$T/err")" 1
# The same report through the external sort's spill files.
cp "$T/out" "$T/out.mem"
diff_rm "$S" "$T/emb" --memory 1K --tmp "$T"
check "--memory 1K: the same report" cmp -s "$T/out" "$T/out.mem"
expect_eq "--memory 1K: no sort run left" "$(ls -A "$T" | grep -c remodel-)" 0

# --- crafted differences -----------------------------------------------------------
python3 - "$T" <<'PY'
import os, sys, bson
t = sys.argv[1]
def put(d, db, c, docs, meta=None):
    os.makedirs("%s/%s/%s" % (t, d, db), exist_ok=True)
    open("%s/%s/%s/%s.bson" % (t, d, db, c), "wb").write(b"".join(bson.encode(x) for x in docs))
    if meta is not None:
        open("%s/%s/%s/%s.metadata.json" % (t, d, db, c), "w").write(meta)
m1 = '{"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"x":1},"name":"x_1"}]}'
m2 = '{"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"y":1},"name":"y_1"}]}'
docs = [{"_id": i, "a": {"b": [1, 2, {"c": i}]}} for i in range(10)]
put("A", "t", "order", docs); put("B", "t", "order", docs[::-1])
put("A", "t", "path", docs); put("B", "t", "path", docs[:3] + [{"_id": 3, "a": {"b": [1, 2, {"c": 99}]}}] + docs[4:])
put("A", "t", "extra", docs); put("B", "t", "extra", docs[:5] + [dict(docs[5], z=1)] + docs[6:])
put("A", "t", "meta", docs, m1); put("B", "t", "meta", docs, m2)
put("A", "t", "gone", docs)
put("B", "t", "new", docs)
put("A", "t", "nums", [{"_id": 1, "v": 1}]); put("B", "t", "nums", [{"_id": 1.0, "v": 1}])
# Metadata named (issue 34): an index's options, a collection option, the
# UUID alone (no difference unless asked), an older mongodump's index "ns".
ix = '{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"email":1},"name":"email_1"%s}'
put("A", "t", "uniq", docs, '{"indexes":[%s],"uuid":"%s","collectionName":"uniq"}' % (ix % ',"unique":true', "a" * 32))
put("B", "t", "uniq", docs, '{"indexes":[%s],"uuid":"%s","collectionName":"uniq"}' % (ix % '', "b" * 32))
put("A", "t", "opts", docs, '{"options":{"validator":{"$jsonSchema":{"required":["a","b"]}}},"indexes":[],"collectionName":"opts"}')
put("B", "t", "opts", docs, '{"options":{"validator":{"$jsonSchema":{"required":["a"]}}},"indexes":[],"collectionName":"opts"}')
put("A", "t", "uuid", docs, '{"indexes":[%s],"uuid":"%s","collectionName":"uuid"}' % (ix % '', "a" * 32))
put("B", "t", "uuid", docs, '{"indexes":[%s],"collectionName":"uuid","uuid":"%s"}' % (ix % ',"ns":"x.uuid"', "b" * 32))
# An index spec's fields in another order: the same index (issue 65); its
# key's order is the index's own: another index.
put("A", "t", "ixorder", docs, '{"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"a":1,"b":1},"name":"ab","unique":true}]}')
put("B", "t", "ixorder", docs, '{"indexes":[{"name":"_id_","key":{"_id":1},"v":2},{"unique":true,"name":"ab","v":2,"key":{"a":1,"b":1}}]}')
put("A", "t", "keyorder", docs, '{"indexes":[{"v":2,"key":{"a":1,"b":1},"name":"ab"}]}')
put("B", "t", "keyorder", docs, '{"indexes":[{"v":2,"key":{"b":1,"a":1},"name":"ab"}]}')
PY
diff_rm "$T/A" "$T/B"
expect_eq "crafted: exit 1" "$rc" 1
expect_eq "another order: reordered, nothing else" "$(row t.order)" "reordered 10 10 0 0 0 same"
expect_eq "a nested value: changed" "$(row t.path)" "differs 10 10 0 0 1 same"
expect_eq "a nested value: its path" "$(grep '^t.path: ' "$T/out")" 't.path: changed: _id 3: first difference at a.b.2.c'
expect_eq "a field more in B: its name" "$(grep '^t.extra: ' "$T/out")" 't.extra: changed: _id 5: first difference at z'
expect_eq "metadata: the row" "$(row t.meta)" "metadata 10 10 0 0 0 differs"
expect_eq "metadata: the indexes" "$(grep '^t.meta: ' "$T/out")" 't.meta: metadata: indexes only in A: x_1; indexes only in B: y_1'
expect_eq "metadata: an index's option, named with each side's value" "$(grep '^t.uniq: ' "$T/out")" \
    't.uniq: metadata: index "email_1" unique: true in A, none in B'
expect_eq "metadata: a collection option, its path and values" "$(grep '^t.opts: ' "$T/out")" \
    't.opts: metadata: options.validator.$jsonSchema.required.1: "b" in A, none in B'
expect_eq "metadata: an index spec's fields in another order alone: identical" \
    "$(row t.ixorder):$(grep -c '^t.ixorder: ' "$T/out")" "identical 10 10 0 0 0 same:0"
expect_eq "metadata: an index's key in another order: a difference, named by its path" \
    "$(row t.keyorder):$(grep '^t.keyorder: ' "$T/out")" \
    'metadata 10 10 0 0 0 differs:t.keyorder: metadata: index "ab" key: {"a":1,"b":1} in A, {"b":1,"a":1} in B'
expect_eq "metadata: the UUID, field order and an index's ns alone: identical" \
    "$(row t.uuid):$(grep -c '^t.uuid: ' "$T/out")" "identical 10 10 0 0 0 same:0"
diff_rm "$T/A" "$T/B" --compare-uuids
expect_eq "--compare-uuids: the UUID is a difference, with its values" "$(row t.uuid):$(grep '^t.uuid: ' "$T/out")" \
    "metadata 10 10 0 0 0 differs:t.uuid: metadata: uuid: \"$(printf 'a%.0s' $(seq 32))\" in A, \"$(printf 'b%.0s' $(seq 32))\" in B"
expect_eq "--compare-uuids: and the rest as before" "$(grep '^t.uniq: ' "$T/out")" \
    "t.uniq: metadata: index \"email_1\" unique: true in A, none in B; uuid: \"$(printf 'a%.0s' $(seq 32))\" in A, \"$(printf 'b%.0s' $(seq 32))\" in B"
diff_rm "$T/A" "$T/B"
expect_eq "a namespace only in A" "$(row t.gone)" "only in A 10 - 10 0 0 -"
expect_eq "a namespace only in B" "$(row t.new)" "only in B - 10 0 10 0 -"
expect_eq "_id 1 and 1.0 are one document whose bytes differ" "$(row t.nums)" "differs 1 1 0 0 1 same"
expect_eq "_id 1 and 1.0: the difference is in _id" "$(grep '^t.nums: ' "$T/out")" 't.nums: changed: _id 1: first difference at _id'

# --json
"$REMODEL" diff --json "$T/A" "$T/B" >"$T/j" 2>/dev/null
expect_eq "--json: exit 1" "$?" 1
expect_eq "--json: fields" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
by = {n["ns"]: n for n in d["namespaces"]}
print(d["identical"], by["t.path"]["changed"], by["t.path"]["examples"][0], by["t.gone"]["status"],
      "documentsInB" in by["t.gone"], by["t.meta"]["metadata"])' "$T/j")" \
    "False 1 changed: _id 3: first difference at a.b.2.c only in A False indexes only in A: x_1; indexes only in B: y_1"
"$REMODEL" diff --json "$S" "$ROOT/dumps/sample.archive.gz" >"$T/j" 2>/dev/null
expect_eq "--json identical: exit 0, identical true" "$?:$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["identical"])' "$T/j")" "0:True"

# --- errors: exit 2 -----------------------------------------------------------------
diff_rm "$S" "$MT/bsondump/testdata/partial_file.bson"
expect_eq "B unreadable: exit 2" "$rc" 2
expect_message "B unreadable: says which" "B: " "partial_file.bson"
diff_rm "$S"
expect_eq "one argument: exit 2" "$rc" 2
