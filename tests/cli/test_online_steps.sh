#!/usr/bin/env bash
# remodel online run, every step kind, on FerretDB and on mongo-java-server:
# the online result read back from the server equals `remodel run` on the
# same documents, namespace by namespace, document by document, byte for
# byte (tests/transforms/online_same.py). Side by side (embed with child
# and parent references, with keepSource and with outlier overflow;
# extract; field steps reading an earlier step's result; denormalize;
# summarize; unbucketize; the Atlas sample's customers.accounts ->
# accounts.account_id) and in place (a denormalize and summarize backfill);
# a join without its index is refused naming the createIndex to run;
# kill -9 at random moments during side-by-side runs, then a rerun, gives
# the same result.
#   REMODEL=build/remodel bash tests/cli/test_online_steps.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
ATLAS=$ROOT/../shared/fixtures/atlas-sample/dump
trap '"$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"' EXIT
CRASHES=${REMODEL_ONLINE_CRASHES:-4}
export ROOT PYTHONPATH=$ROOT/tests/transforms

mkdir -p "$T/plans"
cat >"$T/plans/embed-tasks.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}}]}
EOF
cat >"$T/plans/embed-parts.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "catalog.parts", "into": "catalog.products", "localField": "parts",
             "foreignField": "_id", "as": "parts", "project": {"name": 1, "partno": 1, "price": 1},
             "keepSource": true}}]}
EOF
cat >"$T/plans/outlier.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "blog.comments", "into": "blog.posts", "localField": "_id",
             "foreignField": "post_id", "as": "comments", "sort": {"ts": -1}, "countAs": "n_comments",
             "maxItems": 4, "onOverflow": "outlier"}}]}
EOF
cat >"$T/plans/evolve.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses",
               "style": "parentRef", "parentField": "person_id", "ordinalField": "n"}},
  {"rename": {"in": "crm.people", "fields": {"name": "fullName"}}},
  {"set": {"in": "crm.addresses", "fields": {"verified": false}}},
  {"version": {"in": "crm.people", "value": 2}}]}
EOF
cat >"$T/plans/denorm.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "logging.logmsg", "from": "logging.hosts", "localField": "host",
                   "fields": {"host_ip": "ipaddr", "dc": "datacenter"}}}]}
EOF
cat >"$T/plans/summary.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "logging.hosts", "from": "logging.logmsg", "localField": "_id",
                 "foreignField": "host",
                 "fields": {"messages": {"$count": {}}, "last_seen": {"$max": "$time"},
                            "pids": {"$addToSet": "$pid"},
                            "recent": {"$topN": {"n": 3, "sortBy": {"time": -1},
                                                 "output": {"time": "$time", "message": "$message"}}}}}}]}
EOF
cat >"$T/plans/students.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "school.courses", "into": "school.students", "localField": "courses",
             "foreignField": "_id", "as": "courses", "project": {"code": 1, "title": 1}}}]}
EOF
cat >"$T/plans/backfill.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "logging.logmsg", "from": "logging.hosts", "localField": "host",
                   "fields": {"host_ip": "ipaddr"}}},
  {"summarize": {"into": "logging.hosts", "from": "logging.logmsg", "localField": "_id",
                 "foreignField": "host",
                 "fields": {"messages": {"$count": {}}, "first_seen": {"$min": "$time"}}}}]}
EOF
cat >"$T/plans/bucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor_id", "granularity": "hours"}}]}
EOF
cat >"$T/plans/unbucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"unbucketize": {"from": "iot.buckets", "to": "iot.readings2", "timeField": "ts",
                   "metaField": "sensor_id", "granularity": "hours", "keepSource": false}}]}
EOF
cat >"$T/plans/atlas.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "sample_analytics.accounts", "into": "sample_analytics.customers",
             "localField": "accounts", "foreignField": "account_id", "as": "accounts",
             "project": {"_id": 0, "account_id": 1, "limit": 1, "products": 1}}}]}
EOF

# The offline results, the reference.
for p in embed-tasks embed-parts outlier evolve denorm summary students backfill; do
    "$REMODEL" run -q "$T/plans/$p.json" --from "$S" --to "$T/$p.archive" ||
        fail "offline $p"
done
"$REMODEL" run -q "$T/plans/bucket.json" --from "$S" --to "$T/bucketized.archive"
"$REMODEL" run -q "$T/plans/unbucket.json" --from "$T/bucketized.archive" --to "$T/unbucket.archive"
"$REMODEL" run -q "$T/plans/atlas.json" --from "$ATLAS" --to "$T/atlas.archive"

# same NAME PLAN NS=COLL...: the server's collections are PLAN's offline result.
same() {
    local name=$1 plan=$2; shift 2
    if python3 "$ROOT/tests/transforms/online_same.py" "$uri" "$T/$plan.archive" "$@" >"$T/same" 2>&1; then
        pass "$name"
    else
        fail "$name" "$(cat "$T/same")"
    fi
}
online() { run_rm online run -q "$T/plans/$1.json" --uri "$uri" "${@:2}"; }

for kind in ferretdb java; do
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
    uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/$kind" "$kind" 2>"$T/err") ||
        { fail "$kind: start" "$(cat "$T/err")"; continue; }
    # FerretDB 1.x has no decimal128: catalog.parts (prices) is not restored there.
    exclude=()
    [ $kind == ferretdb ] && exclude=(--nsExclude catalog.parts)
    "$MONGORESTORE" --uri "$uri" --dir "$S" "${exclude[@]}" --noIndexRestore --quiet 2>"$T/err" ||
        { fail "$kind: restore" "$(cat "$T/err")"; continue; }
    "$MONGORESTORE" --uri "$uri" --archive="$T/bucketized.archive" --nsInclude iot.buckets \
        --noIndexRestore --quiet
    "$MONGORESTORE" --uri "$uri" --dir "$ATLAS" --nsInclude 'sample_analytics.*' --noIndexRestore --quiet
    "$MONGODUMP" --uri "$uri" --archive="$T/$kind-sources.archive" --quiet

    # A join whose partners have no index: refused before anything is written.
    online embed-tasks
    expect_eq "$kind: a join without its index: refused (exit 2), nothing written" \
        "$rc:$(python3 -c 'import pymongo, sys
print(pymongo.MongoClient(sys.argv[1]).crm.list_collection_names().count("people_remodel_embed-tasks_1"))' "$uri")" "2:0"
    expect_message "$kind: ... naming the index to create" \
        'step 1 (embed): crm.tasks has no index on "owner"' \
        'db.getSiblingDB("crm").getCollection("tasks").createIndex({"owner": 1})'

    online embed-tasks --create-indexes --batch-size 7
    expect_eq "$kind: embed (parent references), side by side: exit 0" "$rc:$(cat "$T/err")" "0:"
    same "$kind: embed: people with their tasks, the orphan tasks left, as remodel run" embed-tasks \
        crm.people=people_remodel_embed-tasks_1 crm.tasks=tasks_remodel_embed-tasks_1
    if [ $kind == java ]; then
        online embed-parts --batch-size 9
        same "$kind: embed (child references, keepSource): as remodel run" embed-parts \
            catalog.products=products_remodel_embed-parts_1
    fi
    online outlier --create-indexes --batch-size 6
    same "$kind: embed with outlier overflow and countAs: posts, orphans, overflow pages as remodel run" outlier \
        blog.posts=posts_remodel_outlier_1 blog.comments=comments_remodel_outlier_1 \
        blog.posts_comments_overflow=posts_comments_overflow_remodel_outlier_1
    online students --create-indexes --batch-size 25
    same "$kind: embed of shared children (many-to-many by an array of ids): as remodel run" students \
        school.students=students_remodel_students_1
    online evolve --batch-size 11
    same "$kind: extract, then field steps reading its result: as remodel run" evolve \
        crm.people=people_remodel_evolve_4 crm.addresses=addresses_remodel_evolve_3
    online denorm --batch-size 100
    same "$kind: denormalize, side by side: as remodel run" denorm \
        logging.logmsg=logmsg_remodel_denorm_1
    online summary --create-indexes --batch-size 3
    same "$kind: summarize (\$count, \$max, \$addToSet, \$topN), side by side: as remodel run" summary \
        logging.hosts=hosts_remodel_summary_1
    online unbucket --batch-size 5
    same "$kind: unbucketize (keepSource false): the readings back, the buckets emptied, as remodel run" unbucket \
        iot.readings2=readings2_remodel_unbucket_1 iot.buckets=buckets_remodel_unbucket_1
    online atlas --create-indexes --batch-size 40
    same "$kind: the Atlas sample's customers with their accounts (accounts.account_id): as remodel run" atlas \
        sample_analytics.customers=customers_remodel_atlas_1
    "$MONGODUMP" --uri "$uri" --archive="$T/$kind-after.archive" --quiet
    same_sources=$(python3 - "$T/$kind-sources.archive" "$T/$kind-after.archive" <<'PYEOF'
import sys, rmlib
a, b = rmlib.read_archive(sys.argv[1])[0], rmlib.read_archive(sys.argv[2])[0]
print(all(sorted(map(bytes, a[ns])) == sorted(map(bytes, b.get(ns, []))) for ns in a
          if not ns.startswith("remodel.")))
PYEOF
)
    expect_eq "$kind: side by side: every source collection as it was" "$same_sources" True

    # In place: a backfill of denormalized copies and computed summaries.
    online backfill --in-place --batch-size 50
    expect_eq "$kind: --in-place backfill: exit 0" "$rc:$(cat "$T/err")" "0:"
    same "$kind: --in-place: logmsg and hosts themselves as remodel run makes them" backfill \
        logging.logmsg=logmsg logging.hosts=hosts
    online backfill --in-place
    expect_eq "$kind: --in-place run again: nothing to do" "$rc:$(cat "$T/err")" "0:"
    run_rm online run "$T/plans/bucket.json" --uri "$uri"
    expect_eq "$kind: bucketize online: refused (exit 2), saying why" \
        "$rc:$(grep -c 'bucketize runs offline only so far' "$T/err")" "2:1"

    # kill -9 at random moments, then a rerun: the same result.
    for ((i = 1; i <= CRASHES; i++)); do
        case $((i % 3)) in
        0) p=outlier map="blog.posts=posts_remodel_crash$i_1 blog.comments=comments_remodel_crash$i_1 blog.posts_comments_overflow=posts_comments_overflow_remodel_crash$i_1" ;;
        1) p=embed-tasks map="crm.people=people_remodel_crash$i_1 crm.tasks=tasks_remodel_crash$i_1" ;;
        2) p=evolve map="crm.people=people_remodel_crash$i_4 crm.addresses=addresses_remodel_crash$i_3" ;;
        esac
        cp "$T/plans/$p.json" "$T/plans/crash$i.json"
        "$REMODEL" online run -q "$T/plans/crash$i.json" --uri "$uri" --batch-size 3 --pause-ms 5 >/dev/null 2>&1 &
        pid=$!
        sleep "0.$(printf '%02d' $((RANDOM % 90 + 5)))"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        python3 -c 'import pymongo, sys, datetime
c = pymongo.MongoClient(sys.argv[1])
c.remodel.leases.update_many({}, {"$set": {"expires": datetime.datetime(2000, 1, 1)}})' "$uri"
        online crash$i
        expect_eq "$kind: $p killed (-9) at a random moment ($i), then run again: exit 0" "$rc:$(cat "$T/err")" "0:"
        # shellcheck disable=SC2086
        same "$kind: $p killed at a random moment ($i), then run again: remodel run's documents" $p $map
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
