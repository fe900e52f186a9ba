#!/usr/bin/env bash
# remodel compile's pipelines run by an independent implementation of the
# aggregation language, mingo (Node, tests/peers/mingo): for each plan, the
# documents they give equal those remodel run writes, namespace by
# namespace, field order included (tests/transforms/compile_same.py); at
# --server-version 4.0 (the $topN fallback) and 5.2 ($topN itself, which
# mongo-java-server lacks, so only mingo runs it here). Numbers compare by
# value: JavaScript has one number type (the named departure; the types are
# compared byte for byte on mongo-java-server by test_compile.sh).
#   REMODEL=build/remodel bash tests/cli/test_compile_mingo.sh
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/peers/env.sh"
export PYTHONPATH=$ROOT/tests/transforms
S=$ROOT/dumps/sample
if [ -z "${MINGO_DIR:-}" ] || ! command -v node >/dev/null; then
    fail "mingo-missing" "mingo is installed by tests/peers/install.sh (npm); node must be on PATH"
    exit 0
fi
mkdir -p "$T/plans"
cp "$ROOT"/dumps/plans/*.json "$T/plans/"
cat >"$T/plans/students.json" <<'P'
{"remodel": 1, "steps": [
  {"embed": {"from": "school.courses", "into": "school.students", "localField": "courses",
             "foreignField": "_id", "as": "courses", "project": {"code": 1, "title": 1}, "countAs": "n"}}]}
P
cat >"$T/plans/subset.json" <<'P'
{"remodel": 1, "steps": [
  {"embed": {"from": "blog.comments", "into": "blog.posts", "localField": "_id",
             "foreignField": "post_id", "as": "recent", "sort": {"ts": -1}, "limit": 3,
             "countAs": "n_comments", "keepSource": true}}]}
P
cat >"$T/plans/summary.json" <<'P'
{"remodel": 1, "steps": [
  {"summarize": {"into": "logging.hosts", "from": "logging.logmsg", "localField": "_id",
                 "foreignField": "host", "as": "stats",
                 "fields": {"messages": {"$count": {}}, "last_seen": {"$max": "$time"},
                            "first": {"$min": "$time"}, "avg_pid": {"$avg": "$pid"},
                            "sum_pid": {"$sum": "$pid"},
                            "recent": {"$topN": {"n": 3, "sortBy": {"time": -1},
                                                 "output": {"time": "$time", "message": "$message"}}}}}}]}
P
cat >"$T/plans/ordered.json" <<'P'
{"remodel": 1, "steps": [
  {"summarize": {"into": "logging.hosts", "from": "logging.logmsg", "localField": "_id",
                 "foreignField": "host", "sort": {"time": 1},
                 "fields": {"messages": {"$count": {}}, "firstmsg": {"$first": "$message"},
                            "lastmsg": {"$last": "$message"},
                            "recent": {"$topN": {"n": 3, "sortBy": {"time": -1}, "output": "$message"}},
                            "oldest": {"$bottomN": {"n": 2, "sortBy": {"time": -1}, "output": "$time"}}}}}]}
P
cat >"$T/plans/fields.json" <<'P'
{"remodel": 1, "steps": [
  {"rename": {"in": "crm.people", "fields": {"name": "fullName", "nosuch": "other"}}},
  {"set": {"in": "crm.people", "fields": {"verified": false, "ssn": {"$numberLong": "7"}}}},
  {"unset": {"in": "crm.people", "fields": ["addresses"]}},
  {"version": {"in": "crm.people", "value": 2}}]}
P
for p in embed-tasks embed-parts students subset backfill-logging summary fields; do
    python3 "$ROOT/tests/transforms/compile_same.py" "$REMODEL" "$MINGO_DIR" "$T/plans/$p.json" "$S" \
        "$p (4.0)" --server-version 4.0
done
for p in summary ordered; do
    python3 "$ROOT/tests/transforms/compile_same.py" "$REMODEL" "$MINGO_DIR" "$T/plans/$p.json" "$S" \
        "$p (5.2)" --server-version 5.2
done
# The Atlas sample: customers.accounts -> accounts.account_id, child referencing.
ATLAS=$ROOT/../shared/fixtures/atlas-sample/dump
if [ -d "$ATLAS/sample_analytics" ]; then
    cat >"$T/plans/atlas.json" <<'P'
{"remodel": 1, "steps": [
  {"embed": {"from": "sample_analytics.accounts", "into": "sample_analytics.customers",
             "localField": "accounts", "foreignField": "account_id", "as": "accounts",
             "project": {"_id": 0, "account_id": 1, "limit": 1, "products": 1}, "keepSource": true}}]}
P
    mkdir -p "$T/atlas"
    "$REMODEL" convert "$ATLAS" "$T/atlas.archive" --nsInclude 'sample_analytics.accounts' \
        --nsInclude 'sample_analytics.customers' -q
    python3 "$ROOT/tests/transforms/compile_same.py" "$REMODEL" "$MINGO_DIR" "$T/plans/atlas.json" \
        "$T/atlas.archive" "atlas customers.accounts (5.0)"
fi
