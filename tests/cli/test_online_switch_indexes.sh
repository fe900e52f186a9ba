#!/usr/bin/env bash
# What the switch carries over (issue 35, items 1 and 6), on FerretDB and
# mongo-java-server, each with its change log, the sample's crm:
#  - the sources' indexes on the switched-in collections with their
#    options, as listIndexes gives them on the originals (now the backups):
#    unique (sparse), sparse, and on java (FerretDB 1.x refuses them)
#    partial, TTL, collation, hidden and text; `run` says each it made;
#  - an index whose field the plan unsets (phone_1) is dropped by the
#    plan's mapping, as offline, and named; tasks' priority index is
#    made multikey on people (tasks.priority);
#  - a unique index the results violate (ssn_1: the plan sets every
#    person's ssn to "withheld") refuses finalize, naming the 98 documents' key
#    and their _ids, nothing renamed; with it dropped, finalize exit 0;
#  - plan B (an embed over the same sources) run before plan A's
#    finalize: after it, B's sync, verify, follow and finalize exit 2,
#    saying its source was switched by plan A; B's rollback still drops
#    its results (on FerretDB: see below).
#   REMODEL=build/remodel bash tests/cli/test_online_switch_indexes.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "switch indexes: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample

mkdir -p "$T/plans"
cat >"$T/plans/a.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}},
  {"unset": {"in": "crm.people", "fields": ["phone"]}},
  {"set": {"in": "crm.people", "fields": {"ssn": "withheld"}}}
]}
EOF
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/b.json"

# indexes KIND: the sources' indexes (those the server has).
indexes() {
    py 'from bson.son import SON
d = c.crm
people = [{"key": {"email": 1}, "name": "email_1", "unique": True, "sparse": True},
          {"key": {"phone": 1}, "name": "phone_1"},
          {"key": {"ssn": 1}, "name": "ssn_1", "unique": True}]
tasks = [{"key": {"owner": 1}, "name": "owner_1"},
         {"key": {"priority": -1}, "name": "priority_sparse", "sparse": True}]
if sys.argv[2] == "java":
    people += [{"key": {"name": 1}, "name": "name_active", "partialFilterExpression": {"active": True}},
               {"key": {"birthdate": 1}, "name": "birthdate_ttl", "expireAfterSeconds": 2147483647},
               {"key": {"name": -1}, "name": "name_ci", "collation": {"locale": "en", "strength": 2}},
               {"key": {"active": 1}, "name": "active_hidden", "hidden": True}]
    tasks += [{"key": {"description": "text"}, "name": "description_text"}]
d.command(SON([("createIndexes", "people"), ("indexes", people)]))
d.command(SON([("createIndexes", "tasks"), ("indexes", tasks)]))' "$1"
}
# specs COLL...: each collection's indexes, one a line, sorted, without
# the collection's name and the version.
specs() {
    py 'import json
for coll in sys.argv[2:]:
    for i in sorted(json.dumps({k: v for k, v in dict(ix).items() if k not in ("v", "ns")},
                               sort_keys=True, default=str) for ix in c.crm[coll].list_indexes()):
        print(i)' "$@"
}

for kind in ferretdb java; do
    online_start "$kind" "$T/$kind" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet || { fail "$kind: restore"; continue; }
    indexes "$kind" || { fail "$kind: the sources' indexes"; continue; }
    A=$(pid a)

    online run a
    expect_eq "$kind: run exit" "$rc" 0
    expect_message "$kind: run makes the sources' indexes on the results" \
        "remodel: run: made index email_1 of crm.people on crm.people_remodel_${A}_3"
    expect_message "$kind: run names an index the plan drops (the offline run's mapping)" \
        "remodel: run: the plan's indexes: crm.people: index \"phone_1\": dropped: its key names \"phone\", which is unset (step 2, unset)"
    expect_message "$kind: run makes the embedded child's index multikey on the parent" \
        "remodel: run: made index tasks_priority_sparse of crm.people on crm.people_remodel_${A}_3"
    online run b
    expect_eq "$kind: plan b's run exit" "$rc" 0

    online finalize a --writes-stopped
    expect_eq "$kind: finalize refused by a unique violation (exit)" "$rc" 1
    expect_message "$kind: the violation names the key and its documents" \
        "remodel: finalize: unique index ssn_1 of crm.people: the new design's crm.people_remodel_${A}_3 has 98 documents with { \"ssn\" : \"withheld\" } (_id { \"\$oid\" : \"4effa2006e278b470a2e7f05\" }, "
    expect_message "$kind: the refusal" \
        "plan a.json: 1 unique index(es) of the sources would not hold in the new design (the documents that share a key are named above); nothing renamed"
    n=$(py 'print(len([n for n in c.crm.list_collection_names() if n.endswith("_backup")]))')
    expect_eq "$kind: nothing renamed" "$n" 0

    py 'c.crm.people.drop_index("ssn_1")'
    specs people | grep -v '"phone_1"' >"$T/want-people"
    specs tasks >"$T/want-tasks"
    online finalize a --writes-stopped
    expect_eq "$kind: finalize exit" "$rc" 0
    specs "people_remodel_${A}_backup" | grep -v '"phone_1"' >"$T/was-people"
    specs "tasks_remodel_${A}_backup" >"$T/was-tasks"
    # The embedded child's indexes, on the parent under tasks.: not the
    # source's (test_online_index_follow.sh compares them with remodel run's).
    specs people | grep -v '"key": {"tasks\.' >"$T/got-people"
    specs tasks >"$T/got-tasks"
    if cmp -s "$T/want-people" "$T/got-people" && cmp -s "$T/want-tasks" "$T/got-tasks" &&
       cmp -s "$T/was-people" "$T/got-people" && [ "$(wc -l <"$T/got-people")" -ge 2 ]; then
        pass "$kind: the switched-in collections have the sources' indexes, options and all ($(cat "$T/got-people" "$T/got-tasks" | wc -l))"
    else
        fail "$kind: the switched-in collections' indexes" "$(diff "$T/want-people" "$T/got-people"; diff "$T/want-tasks" "$T/got-tasks")"
    fi
    if [ "$kind" == java ]; then
        for ix in '"partialFilterExpression": {"active": true}' '"expireAfterSeconds": 2147483647' \
                  '"collation": {"locale": "en", "strength": 2}' '"hidden": true' '"unique": true'; do
            grep -qF "$ix" "$T/got-people" && pass "$kind: carried: $ix" || fail "$kind: carried: $ix" "$(cat "$T/got-people")"
        done
    fi

    for cmd in sync verify finalize follow; do
        extra=
        [ "$cmd" == finalize ] && extra=--writes-stopped
        online "$cmd" b $extra
        expect_eq "$kind: plan b's $cmd after plan a's switch (exit)" "$rc" 2
        expect_message "$kind: plan b's $cmd says why" \
            "plan b.json: its source crm.tasks was switched by plan a.json after this plan's run began"
    done
    # mongo-java-server 1.46 fails here to drop plan b's crm.people result
    # ("Expected [MemoryUniqueIndex[name=ssn_1]] to be empty", its own
    # assertion, after this sequence only): checked on FerretDB.
    if [ "$kind" == ferretdb ]; then
        online rollback b
        expect_eq "$kind: plan b's rollback still drops its results" "$rc" 0
        n=$(py 'print(len([n for n in c.crm.list_collection_names() if "_remodel_'"$(pid b)"'_" in n]))')
        expect_eq "$kind: plan b's results gone" "$n" 0
    fi
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
