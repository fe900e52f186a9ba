#!/usr/bin/env bash
# Indexes follow the plan (issue 63, item 1, offline): the output's
# metadata, over a dump made here whose collections carry single,
# compound, unique, sparse, partial (on a renamed field), TTL and
# collation indexes:
#  - rename: keys (and the partialFilterExpression) renamed, default
#    names regenerated, a name of its own kept, every option kept;
#  - unset: the indexes naming an unset field dropped, a compound one
#    losing its first field too, each said;
#  - embed: the child's indexes multikey on the parent under "as", but the
#    join key's; the unique one not unique, the TTL without
#    expireAfterSeconds, each said;
#  - extract: the parents' indexes on array.field the children's field,
#    the parentField index as before, the parent's dropped;
#  - the same lines from check --against and after run's summary;
#    --keep-indexes writes the metadata byte for byte as the input's;
#  - the renamed output restored by the real mongorestore into
#    mongo-java-server: the server builds the renamed indexes, and the
#    unique one refuses a duplicate of the new field; the embedded one
#    takes two parents with one value.
#   REMODEL=build/remodel bash tests/cli/test_index_follow.sh
. "$(dirname "$0")/lib.sh"

ROOT=$ROOT python3 - "$T/src" <<'EOF'
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "transforms"))
import rmlib
def i(n): return {"$numberInt": str(n)}
def ix(key, name, **opt):
    d = {"v": i(2), "key": {k: i(v) if isinstance(v, int) else v for k, v in key}, "name": name}
    d.update(opt)
    return d
idx = {"v": i(2), "key": {"_id": i(1)}, "name": "_id_"}
tasks = [idx,
         ix([("owner", 1)], "owner_1"),
         ix([("code", 1)], "code_1", unique=True),
         ix([("owner", 1), ("due", -1)], "owner_1_due_-1"),
         ix([("tag", 1)], "tag_1", sparse=True),
         ix([("due", 1)], "due_1", partialFilterExpression={"owner": {"$exists": True}}),
         ix([("made", 1)], "made_ttl", expireAfterSeconds=i(3600)),
         ix([("title", 1)], "title_1", collation={"locale": "fr", "strength": i(2)}),
         ix([("project_id", 1)], "project_id_1")]
orders = [idx, ix([("items.sku", 1)], "items.sku_1", unique=True), ix([("items", 1)], "items_1"),
          ix([("cust", 1), ("items.qty", 1)], "cust_1_items.qty_1"), ix([("cust", 1)], "cust_1")]
projects = [idx, ix([("name", 1)], "name_1")]
docs = {
    "crm.tasks": [{"_id": i(n), "owner": "o%d" % (n % 2), "code": "c%d" % n, "due": i(n), "tag": "t",
                   "made": {"$date": "2024-01-01T00:00:00Z"}, "title": "T%d" % n,
                   "project_id": i(n % 2)} for n in range(4)],
    "crm.orders": [{"_id": i(1), "cust": "a", "items": [{"sku": "x", "qty": i(1)}, {"sku": "y", "qty": i(2)}]},
                   {"_id": i(2), "cust": "b", "items": [{"sku": "z", "qty": i(1)}]}],
    "crm.projects": [{"_id": i(0), "name": "p0"}, {"_id": i(1), "name": "p1"}],
}
meta = {ns: {"indexes": ixs, "uuid": "0123456789abcdef0123456789abcdef",
             "collectionName": ns.split(".")[1], "type": "collection", "options": {}}
        for ns, ixs in [("crm.tasks", tasks), ("crm.orders", orders), ("crm.projects", projects)]}
rmlib.write_dump(sys.argv[1], {ns: [rmlib.ext(d) for d in ds] for ns, ds in docs.items()}, meta)
EOF
[ -f "$T/src/crm/tasks.metadata.json" ] || { fail "index follow: the dump is made"; exit 0; }

mkdir -p "$T/plans"
cat >"$T/plans/rename.json" <<'EOF'
{"remodel": 1, "steps": [{"rename": {"in": "crm.tasks", "fields": {"owner": "owner_id", "code": "ref",
  "due": "due_at", "tag": "label", "made": "created", "title": "heading"}}}]}
EOF
cat >"$T/plans/unset.json" <<'EOF'
{"remodel": 1, "steps": [{"unset": {"in": "crm.tasks", "fields": ["owner", "tag"]}}]}
EOF
cat >"$T/plans/embed.json" <<'EOF'
{"remodel": 1, "steps": [{"embed": {"from": "crm.tasks", "into": "crm.projects", "localField": "_id",
  "foreignField": "project_id", "as": "tasks"}}]}
EOF
cat >"$T/plans/extract.json" <<'EOF'
{"remodel": 1, "steps": [{"extract": {"from": "crm.orders", "path": "items", "to": "crm.lines",
  "style": "parentRef", "parentField": "order_id"}}]}
EOF

# specs DIR NS: NS's index specifications in DIR's metadata, one a line in
# their order, as compact JSON (canonical numbers shown as plain ones).
specs() {
    python3 - "$1/${2%%.*}/${2#*.}.metadata.json" <<'EOF'
import json, sys
def plain(v):
    if isinstance(v, dict):
        if len(v) == 1 and next(iter(v)) in ("$numberInt", "$numberLong"):
            return int(next(iter(v.values())))
        return {k: plain(x) for k, x in v.items()}
    return v
for spec in json.load(open(sys.argv[1]))["indexes"]:
    print(json.dumps(plain(spec), separators=(",", ":")))
EOF
}

# ---- rename ----
"$REMODEL" run "$T/plans/rename.json" --from "$T/src" --to "$T/rename" >"$T/out" 2>"$T/err"
expect_eq "rename: run exits 0" "$?" 0
expect_eq "rename: every index follows the new names, options kept" "$(specs "$T/rename" crm.tasks)" \
'{"v":2,"key":{"_id":1},"name":"_id_"}
{"v":2,"key":{"owner_id":1},"name":"owner_id_1"}
{"v":2,"key":{"ref":1},"name":"ref_1","unique":true}
{"v":2,"key":{"owner_id":1,"due_at":-1},"name":"owner_id_1_due_at_-1"}
{"v":2,"key":{"label":1},"name":"label_1","sparse":true}
{"v":2,"key":{"due_at":1},"name":"due_at_1","partialFilterExpression":{"owner_id":{"$exists":true}}}
{"v":2,"key":{"created":1},"name":"made_ttl","expireAfterSeconds":3600}
{"v":2,"key":{"heading":1},"name":"heading_1","collation":{"locale":"fr","strength":2}}
{"v":2,"key":{"project_id":1},"name":"project_id_1"}'
expect_eq "rename: the other keys of the metadata as they were" \
    "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(list(d), d["uuid"], d["options"])' "$T/rename/crm/tasks.metadata.json")" \
    "['indexes', 'uuid', 'collectionName', 'type', 'options'] 0123456789abcdef0123456789abcdef {}"
expect_eq "rename: a namespace the plan does not touch keeps its metadata byte for byte" \
    "$(cmp "$T/src/crm/orders.metadata.json" "$T/rename/crm/orders.metadata.json" && echo same)" same
rename_lines='index: crm.tasks: index "owner_1": now "owner_id_1", key {"owner":1} -> {"owner_id":1}, every option kept (step 1, rename)
index: crm.tasks: index "code_1": now "ref_1", key {"code":1} -> {"ref":1}, every option kept (step 1, rename)
index: crm.tasks: index "owner_1_due_-1": now "owner_id_1_due_at_-1", key {"owner":1,"due":-1} -> {"owner_id":1,"due_at":-1}, every option kept (step 1, rename)
index: crm.tasks: index "tag_1": now "label_1", key {"tag":1} -> {"label":1}, every option kept (step 1, rename)
index: crm.tasks: index "due_1": now "due_at_1", key {"due":1} -> {"due_at":1}, its partialFilterExpression too, every option kept (step 1, rename)
index: crm.tasks: index "made_ttl": key {"made":1} -> {"created":1} (its own name kept), every option kept (step 1, rename)
index: crm.tasks: index "title_1": now "heading_1", key {"title":1} -> {"heading":1}, every option kept (step 1, rename)'
expect_eq "rename: one line per index change after the summary, on stderr" "$(grep '^index: ' "$T/err")" "$rename_lines"
expect_eq "rename: the lines come after the table" \
    "$(grep -n -m1 '^NAMESPACE' "$T/err" | cut -d: -f1)-$(grep -n -m1 '^index: ' "$T/err" | cut -d: -f1)" \
    "1-$(( $(grep -c . "$T/err") - 7 ))"

"$REMODEL" check "$T/plans/rename.json" --against "$T/src" >"$T/check" 2>"$T/err"
expect_eq "check --against: exits 0" "$?" 0
expect_eq "check --against: the same lines, on stderr" "$(grep '^index: ' "$T/err")" "$rename_lines"
"$REMODEL" check "$T/plans/rename.json" --against "$T/src" -q >"$T/out" 2>"$T/err"
expect_eq "check --against -q: no index line" "$?:$(grep -c '^index: ' "$T/err")" "0:0"
expect_eq "check --against: standard output the verdict alone" "$(cat "$T/check")" \
    "$T/plans/rename.json: 1 step(s), valid against $T/src"

"$REMODEL" run "$T/plans/rename.json" --from "$T/src" --dry-run -q --stats-json "$T/stats.json" >"$T/out" 2>"$T/err"
expect_eq "--stats-json: indexChanges holds the same lines" \
    "$(python3 -c 'import json, sys; print("\n".join("index: " + l for l in json.load(open(sys.argv[1]))["indexChanges"]))' "$T/stats.json")" \
    "$rename_lines"

# ---- --keep-indexes ----
"$REMODEL" run "$T/plans/rename.json" --from "$T/src" --to "$T/kept" --keep-indexes >"$T/out" 2>"$T/err"
expect_eq "--keep-indexes: run exits 0" "$?" 0
expect_eq "--keep-indexes: the metadata byte for byte as the input's" \
    "$(cmp "$T/src/crm/tasks.metadata.json" "$T/kept/crm/tasks.metadata.json" && echo same)" same
expect_eq "--keep-indexes: no index line" "$(grep -c '^index: ' "$T/err")" 0

# ---- unset ----
"$REMODEL" run "$T/plans/unset.json" --from "$T/src" --to "$T/unset" >"$T/out" 2>"$T/err"
expect_eq "unset: run exits 0" "$?" 0
expect_eq "unset: the indexes naming owner or tag dropped, the rest as they were" \
    "$(specs "$T/unset" crm.tasks | python3 -c 'import json, sys; print(" ".join(json.loads(l)["name"] for l in sys.stdin))')" \
    "_id_ code_1 made_ttl title_1 project_id_1"
expect_eq "unset: each drop said, the compound prefix and the partial filter too" "$(grep '^index: ' "$T/err")" \
'index: crm.tasks: index "owner_1": dropped: its key names "owner", which is unset (step 1, unset)
index: crm.tasks: index "owner_1_due_-1": dropped: "owner", the first field of its compound key {"owner":1,"due":-1}, is unset (no index on the remaining fields is made: create one if queries need it) (step 1, unset)
index: crm.tasks: index "tag_1": dropped: its key names "tag", which is unset (step 1, unset)
index: crm.tasks: index "due_1": dropped: its partialFilterExpression names "owner", which is unset (step 1, unset)'

# ---- embed ----
"$REMODEL" run "$T/plans/embed.json" --from "$T/src" --to "$T/embed" >"$T/out" 2>"$T/err"
expect_eq "embed: run exits 0" "$?" 0
expect_eq "embed: the child's indexes multikey on the parent, not unique, no TTL, not the join key" \
    "$(specs "$T/embed" crm.projects)" \
'{"v":2,"key":{"_id":1},"name":"_id_"}
{"v":2,"key":{"name":1},"name":"name_1"}
{"v":2,"key":{"tasks.owner":1},"name":"tasks.owner_1"}
{"v":2,"key":{"tasks.code":1},"name":"tasks.code_1"}
{"v":2,"key":{"tasks.owner":1,"tasks.due":-1},"name":"tasks.owner_1_tasks.due_-1"}
{"v":2,"key":{"tasks.tag":1},"name":"tasks.tag_1","sparse":true}
{"v":2,"key":{"tasks.due":1},"name":"tasks.due_1","partialFilterExpression":{"tasks.owner":{"$exists":true}}}
{"v":2,"key":{"tasks.made":1},"name":"tasks_made_ttl"}
{"v":2,"key":{"tasks.title":1},"name":"tasks.title_1","collation":{"locale":"fr","strength":2}}'
expect_eq "embed: the child's own metadata as it was" \
    "$(cmp "$T/src/crm/tasks.metadata.json" "$T/embed/crm/tasks.metadata.json" && echo same)" same
expect_message "embed: the unique one said not unique" \
    'index: crm.projects: index "tasks.code_1": new, key {"tasks.code":1}, from crm.tasks'"'"'s "code_1", multikey on the array "tasks"; not unique:'
expect_message "embed: the TTL said" \
    'index: crm.projects: index "tasks_made_ttl": new, key {"tasks.made":1}, from crm.tasks'"'"'s "made_ttl", multikey on the array "tasks"; no expireAfterSeconds'
expect_message "embed: the join key's said" \
    'index: crm.tasks: index "project_id_1": not carried to crm.projects: its key holds the join key "project_id" (step 1, embed)'

# ---- extract ----
"$REMODEL" run "$T/plans/extract.json" --from "$T/src" --to "$T/extract" >"$T/out" 2>"$T/err"
expect_eq "extract: run exits 0" "$?" 0
expect_eq "extract: the children have parentField's index and the array's fields'" \
    "$(specs "$T/extract" crm.lines)" \
'{"v":2,"key":{"_id":1},"name":"_id_"}
{"v":2,"key":{"order_id":1},"name":"order_id_1"}
{"v":2,"key":{"sku":1},"name":"sku_1"}'
expect_eq "extract: the parents keep only the indexes on what they keep" \
    "$(specs "$T/extract" crm.orders)" \
'{"v":2,"key":{"_id":1},"name":"_id_"}
{"v":2,"key":{"cust":1},"name":"cust_1"}'
expect_eq "extract: each change said" "$(grep '^index: ' "$T/err")" \
'index: crm.lines: index "sku_1": new, key {"sku":1}, from crm.orders'"'"'s "items.sku_1", the elements of "items"; not unique: unique on the parents allowed two equal elements in one parent (step 1, extract)
index: crm.orders: index "items.sku_1": dropped: its fields moved with "items" to crm.lines (step 1, extract)
index: crm.orders: index "items_1": dropped: its key names the array "items", which goes to the children (an index on whole elements is not carried to crm.lines) (step 1, extract)
index: crm.orders: index "cust_1_items.qty_1": dropped: its key names "items.qty", which goes to crm.lines, and "cust", which the children do not have (step 1, extract)'

# ---- a step with a filter changes some documents only ----
cat >"$T/plans/filtered.json" <<'EOF'
{"remodel": 1, "steps": [{"rename": {"in": "crm.tasks", "filter": {"due": {"$lt": 2}}, "fields": {"owner": "owner_id"}}},
 {"set": {"in": "crm.tasks", "fields": {"tag": "$$REMOVE", "title": {"$cond": [true, "$$REMOVE", 1]}}}},
 {"unset": {"in": "crm.tasks", "filter": {"due": 3}, "fields": ["code"]}}]}
EOF
"$REMODEL" run "$T/plans/filtered.json" --from "$T/src" --to "$T/filtered" >"$T/out" 2>"$T/err"
expect_eq "filtered: run exits 0" "$?" 0
expect_eq "filtered: a filtered rename keeps the index and adds one on the new names; set's \$\$REMOVE drops" \
    "$(specs "$T/filtered" crm.tasks | python3 -c 'import json, sys; print(" ".join(json.loads(l)["name"] for l in sys.stdin))')" \
    "_id_ owner_1 code_1 owner_1_due_-1 due_1 made_ttl title_1 project_id_1 owner_id_1 owner_id_1_due_-1"
expect_eq "filtered: each said" "$(grep '^index: ' "$T/err")" \
'index: crm.tasks: index "owner_1": kept (the step'"'"'s filter renames in some documents only), and a copy "owner_id_1" made on key {"owner_id":1}, every option kept (step 1, rename)
index: crm.tasks: index "owner_1_due_-1": kept (the step'"'"'s filter renames in some documents only), and a copy "owner_id_1_due_-1" made on key {"owner_id":1,"due":-1}, every option kept (step 1, rename)
index: crm.tasks: index "due_1": kept (the step'"'"'s filter renames in some documents only); no copy on key {"due":1}: an index of that name or key exists (step 1, rename)
index: crm.tasks: index "tag_1": dropped: its key names "tag", which is unset (step 2, set)
index: crm.tasks: index "code_1": kept, though its key names "code": the step'"'"'s filter unsets it in some documents only (step 3, unset)'

# ---- the archive's prelude, and what the server builds from it ----
"$REMODEL" run "$T/plans/rename.json" --from "$T/src" --to "$T/rename.archive" -q 2>"$T/err"
expect_eq "rename to an archive: exits 0" "$?" 0
"$REMODEL" run "$T/plans/embed.json" --from "$T/src" --to "$T/embed.archive" -q 2>"$T/err"
expect_eq "embed to an archive: exits 0" "$?" 0
expect_eq "archive: the prelude's metadata has the renamed indexes" \
    "$(ROOT=$ROOT python3 -c 'import os, sys, json
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "transforms"))
import rmlib
print(" ".join(i["name"] for i in json.loads(rmlib.read_archive(sys.argv[1])[1]["crm.tasks"])["indexes"]))' "$T/rename.archive")" \
    "_id_ owner_id_1 ref_1 owner_id_1_due_at_-1 label_1 due_at_1 made_ttl heading_1 project_id_1"

use_peers "index follow: peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "index follow: external deployments are not started here (skipped)"; exit 0; }
online_start java "$T/java" || exit 0
"$MONGORESTORE" --uri "$uri" --archive="$T/rename.archive" --quiet 2>"$T/err" ||
    fail "java: mongorestore takes the renamed output" "$(tail -3 "$T/err")"
expect_eq "java: the server built the renamed indexes" \
    "$(py 'print(" ".join(sorted("%s:%s%s" % (i["name"], ",".join(i["key"]), ":unique" if i.get("unique") else "")
                          for i in c.crm.tasks.list_indexes())))')" \
    "_id_:_id due_at_1:due_at heading_1:heading label_1:label made_ttl:created owner_id_1:owner_id owner_id_1_due_at_-1:owner_id,due_at project_id_1:project_id ref_1:ref:unique"
expect_eq "java: the renamed unique index refuses a duplicate of the new field" \
    "$(py 'try:
    c.crm.tasks.insert_one({"_id": 99, "ref": "c1"})
    print("taken")
except pymongo.errors.DuplicateKeyError:
    print("refused")')" refused
expect_eq "java: ... and takes a new value" \
    "$(py 'c.crm.tasks.insert_one({"_id": 98, "ref": "c98"}); print("taken")')" taken
py 'c.drop_database("crm")'
"$MONGORESTORE" --uri "$uri" --archive="$T/embed.archive" --quiet 2>"$T/err" ||
    fail "java: mongorestore takes the embedded output" "$(tail -3 "$T/err")"
expect_eq "java: the parent has the multikey indexes, none unique" \
    "$(py 'print(" ".join(sorted("%s%s" % (i["name"], ":unique" if i.get("unique") else "")
                          for i in c.crm.projects.list_indexes())))')" \
    "_id_ name_1 tasks.code_1 tasks.due_1 tasks.owner_1 tasks.owner_1_tasks.due_-1 tasks.tag_1 tasks.title_1 tasks_made_ttl"
expect_eq "java: two parents may hold tasks with one code" \
    "$(py 'c.crm.projects.insert_one({"_id": 7, "tasks": [{"code": "c1"}]}); print(c.crm.projects.count_documents({"tasks.code": "c1"}))')" 2
