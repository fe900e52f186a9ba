#!/usr/bin/env bash
# copy, move and delete (issue 64, item 1; docs/plans.md, "copy, move and
# delete"):
#  - offline, against the oracle of tests/transforms/copy_steps.py (not
#    remodel): the delayed flights moved to their own collection through
#    fields and project, the orders older than 2020 archived (copy, then
#    delete), every document in order and byte for byte, one pass, store
#    to store and to an archive; check --against's and run's counts; the
#    indexes carried; a whole move and its move back giving the input;
#    dumps/plans/archive-logs.json's counts on the sample;
#  - the plan's mistakes refused before any data is read, naming the step
#    and the key;
#  - compile: the pipelines of the sample's plan give remodel run's
#    results (mingo, tests/transforms/mingo_same.py), and online run
#    --server-side runs them on the server, as does the mongosh script:
#    remodel run's results;
#  - the output restored by the real mongorestore into mongo-java-server:
#    the documents and the carried indexes are there; the view compile
#    --format views writes for a move gives back the source's documents;
#  - online, side by side on mongo-java-server with its change log: the
#    run, then the application's writes (a flight made late, one made on
#    time, a late one inserted, one deleted), a sync and a round of
#    follow: each time the results are remodel run's over a dump of the
#    sources as they are (byte for byte); --to-uri to a second server,
#    synced after writes and finalized there: the same;
#  - --in-place refused for the plan begun side by side (in place:
#    test_online_copy_inplace.sh); after finalize and the
#    application's writes, rollback --carry-writes refuses a filtered move
#    and a delete, naming the step and why, carries the writes back
#    through a whole move's inverse (the move back) and drops a copy's.
#   REMODEL=build/remodel bash tests/cli/test_copy_steps.sh
. "$(dirname "$0")/lib.sh"
export REMODEL PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/w" "$T/plans"

# --- offline, against the oracle ---------------------------------------------
python3 "$ROOT/tests/transforms/copy_steps.py" "$T/w" 7 ||
    fail "copy_steps.py: every check of the oracle" "it exited with status $?"

# --- the plan's mistakes -----------------------------------------------------
SRC=$T/w/src
bad() {
    local name=$1 step=$2 want=$3
    echo "{\"remodel\": 1, \"steps\": [$step]}" >"$T/bad.json"
    run_rm check "$T/bad.json" --against "$SRC"
    expect_eq "refused: $name (exit 2, the step and key named)" \
        "$rc:$(grep -c -F -- "$want" "$T/err")" "2:1"
}
bad "a delete without a filter" '{"delete": {"from": "air.flights"}}' \
    'bad.json: plan: step 1 (delete): needs a "filter" choosing the documents to delete ({} for every one of them)'
bad "a copy into its own source" '{"copy": {"from": "air.flights", "to": "air.flights"}}' \
    'step 1 (copy): "to": must differ from "from" (air.flights)'
bad "a computed field in project" \
    '{"copy": {"from": "air.flights", "to": "air.x", "project": {"a": {"$toUpper": "$b"}}}}' \
    'step 1 (copy): "project": "a": must be 1 or 0 (true or false): compute a field in "fields"'
bad "project dropping _id" '{"move": {"from": "air.flights", "to": "air.x", "project": {"_id": 0}}}' \
    'step 1 (move): "project": "_id": 0: a copy keeps its document'
bad "fields writing _id" '{"copy": {"from": "air.flights", "to": "air.x", "fields": {"_id": 1}}}' \
    'step 1 (copy): "fields": "_id": a step may not write _id'
bad "a misspelt key" '{"copy": {"from": "air.flights", "too": "air.x"}}' \
    'step 1 (copy): "too": unknown key (copy takes from, to, fields, project, filter, allowMissing, why): did you mean "to"?'
bad "delete given a target" '{"delete": {"from": "air.flights", "to": "air.x", "filter": {}}}' \
    'step 1 (delete): "to": unknown key (delete takes from, filter, allowMissing, why)'
bad "a move into a namespace holding documents" '{"move": {"from": "air.flights", "to": "shop.orders"}}' \
    'step 1 (move): "to": namespace shop.orders already exists and holds 500 document(s)'

# The plan of dumps/plans/ on the sample: its counts, the oracle's (the
# sample's .bson read here).
run_rm check "$ROOT/dumps/plans/archive-logs.json" --against "$ROOT/dumps/sample"
want=$(python3 -c 'import bson, sys, datetime
docs = bson.decode_all(open(sys.argv[1], "rb").read())
cut = datetime.datetime(2014, 3, 28)
old = [d for d in docs if d["time"] < cut]
debug = [d for d in docs if d["time"] >= cut and d["severity"] == "debug"]
print("step 1 (move) logging.logmsg: %d of %d document(s) selected, moved to logging.logmsg_archive" % (len(old), len(docs)))
print("step 2 (delete) logging.logmsg: %d of %d document(s) selected, deleted" % (len(debug), len(docs) - len(old)))' "$ROOT/dumps/sample/logging/logmsg.bson")
expect_eq "dumps/plans/archive-logs.json on the sample: valid, the counts the oracle's" \
    "$rc:$(grep '^step ' "$T/err")" "0:$want"

# --- compile ----------------------------------------------------------------
MINGO_DIR=${MINGO_DIR:-${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/mingo}
if [ -d "$MINGO_DIR/node_modules/mingo" ]; then
    for v in 4.0 5.2; do
        PYTHONPATH=$ROOT/tests/transforms python3 "$ROOT/tests/transforms/mingo_same.py" \
            --remodel "$REMODEL" --mingo "$MINGO_DIR" --plan "$ROOT/dumps/plans/archive-logs.json" \
            --src "$ROOT/dumps/sample" --name "archive-logs" --server-version "$v" || true
    done
else
    fail "mingo: installed in $MINGO_DIR" "run tests/peers/install.sh"
fi

# --- restored by mongorestore ------------------------------------------------
use_peers "copy steps: peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "copy steps: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; for d in "$T"/java*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
online_start java "$T/java" 0 changelog || exit 0
"$MONGORESTORE" --uri "$uri" --archive="$T/w/out-to-an-archive.archive" --quiet 2>"$T/err" ||
    fail "java: mongorestore takes the output" "$(tail -3 "$T/err")"
online_same "java: the restored namespaces are the output's, document for document" \
    "$T/w/out-to-an-archive.archive" air.flights=flights air.delayed=delayed shop.orders=orders \
    archive.orders=orders
expect_eq "java: the server built the indexes carried to the copies" \
    "$(py 'print(" ".join(sorted(i["name"] for i in c.air.delayed.list_indexes())), "/",
      " ".join(sorted(i["name"] for i in c.archive.orders.list_indexes())))')" \
    "_id_ delay_-1 origin_1_dest_1 / _id_ placed_1"

# The views of the old shape (compile --format views) over a move's and a
# copy's restored output give back the source dump's namespaces.
cat >"$T/plans/mv.json" <<'EOF2'
{"remodel": 1, "steps": [
  {"move": {"from": "air.flights", "to": "air.delayed", "filter": {"delay": {"$gt": 15}}}},
  {"copy": {"from": "shop.orders", "to": "shop.old", "filter": {"placed": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}}}]}
EOF2
"$REMODEL" compile "$T/plans/mv.json" --format views --canonical >"$T/mv.views" 2>"$T/err"
expect_eq "views: one for the move's source, a \$unionWith of what went; none for the copy's" \
    "$(python3 -c 'import sys; from bson import json_util
v = [json_util.loads(l) for l in open(sys.argv[1])]
print([(x["db"], x["command"]["create"], x["command"]["pipeline"]) for x in v])' "$T/mv.views")" \
    "[('air', 'flights_before', [{'\$unionWith': {'coll': 'delayed', 'pipeline': []}}])]"
rm -rf "$T/mv-out"
"$REMODEL" run -q "$T/plans/mv.json" --from "$SRC" --to "$T/mv-out" 2>/dev/null &&
    "$MONGORESTORE" --uri "$uri" --dir "$T/mv-out" --drop >"$T/restore" 2>&1 ||
    fail "java: the move's output restored" "$(tail -3 "$T/restore")"
if python3 "$ROOT/tests/transforms/views_same.py" "$uri" "$SRC" "$T/mv.views" >"$T/same-mv" 2>&1; then
    pass "java: the move's view gives back the source's flights ($(tr '\n' ';' <"$T/same-mv"))"
else
    fail "java: the move's view gives back the source's flights" "$(cat "$T/same-mv")"
fi

# --- online, side by side, with the application's writes ---------------------
cat >"$T/plans/late.json" <<'EOF2'
{"remodel": 1, "steps": [
  {"copy": {"from": "oair.flights", "to": "oair.jfk", "filter": {"origin": "JFK"},
            "project": {"origin": 1, "dest": 1}}},
  {"move": {"from": "oair.flights", "to": "oair.delayed", "filter": {"delay": {"$gt": 15}},
            "fields": {"late_by": {"$subtract": ["$delay", 15]}}, "project": {"notes": 0}}},
  {"delete": {"from": "oair.flights", "filter": {"cancelled": true}}}]}
EOF2
PAIRS="oair.jfk=jfk_remodel_@_1 oair.delayed=delayed_remodel_@_2 oair.flights=flights_remodel_@_3"
py 'random.seed(64)
c.oair.flights.insert_many([{"_id": i, "origin": random.choice(["JFK", "LAX", "ORD"]),
                             "dest": random.choice(["ATL", "SFO"]), "delay": random.randrange(-5, 60),
                             "notes": "n%d" % i, "cancelled": i % 11 == 0} for i in range(300)])'
same() {
    rm -f "$T/late.archive"
    offline_run late oair || fail "java: $1: the offline reference"
    online_same "java: $1: the results are remodel run's on the sources as they are" \
        "$T/late.archive" ${PAIRS//@/$(pid late)}
    online verify late
    expect_eq "java: $1: verify finds every result as the sources make it" \
        "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
}
online run late --batch-size 13 -q
expect_eq "java: online run (exit 0, nothing said)" "$rc:$(cat "$T/err")" "0:"
same "after the run"
# writes SEED: a flight made late, one made on time, a late JFK one
# inserted, a late one and a cancelled one deleted, one cancelled.
writes() {
    py 'n = int(sys.argv[2]); random.seed(n); f = c[sys.argv[3]].flights
def some(q): return random.choice(sorted(x["_id"] for x in f.find(q, {"_id": 1})))
f.update_one({"_id": some({"delay": {"$lte": 15}, "cancelled": False})}, {"$set": {"delay": 40 + n}})
f.update_one({"_id": some({"delay": {"$gt": 15}, "cancelled": False})}, {"$set": {"delay": 3}})
f.update_one({"_id": some({"origin": "JFK", "cancelled": False})}, {"$set": {"origin": "LAX"}})
f.insert_one({"_id": 1000 + n, "origin": "JFK", "dest": "SFO", "delay": 90, "notes": "new", "cancelled": False})
f.delete_one({"_id": some({"delay": {"$gt": 15}})})
f.update_one({"_id": some({"cancelled": False})}, {"$set": {"cancelled": True}})' "$1" "${2:-oair}"
}
writes 1
online sync late
expect_eq "java: sync follows the log (exit 0, no step rescanned)" \
    "$rc:$(grep -c 'rescanned in full' "$T/err"):$(grep -c 'change log: [1-9]' "$T/err")" "0:0:1"
expect_eq "java: sync reads the flights the writes changed, not the 300" \
    "$(r=$(figure read); [ -n "$r" ] && [ "$r" -gt 0 ] && [ "$r" -lt 60 ] && echo few || echo "read '$r'")" "few"
same "after writes and a sync"
writes 2
: >"$T/follow.err"
"$REMODEL" online follow "$T/plans/late.json" --uri "$uri" --pause 200ms 2>"$T/follow.err" &
fp=$!
for ((iend = SECONDS + 120; SECONDS < iend; )); do grep -q 'change log: [1-9]' "$T/follow.err" 2>/dev/null && break; sleep 0.2; done
kill -TERM "$fp"; wait "$fp"; frc=$?
expect_eq "java: follow: a round from the log (none rescanned), TERM stops it (exit 0)" \
    "$frc:$(grep -c 'change log: [1-9]' "$T/follow.err" | awk '{print ($1 > 0)}'):$(grep -c 'rescanned in full' "$T/follow.err")" "0:1:0"
same "after more writes and a round of follow"

# --- server-side: the compiled pipelines on the server ------------------------
sed 's/"oair\./"osrv./g' "$T/plans/late.json" >"$T/plans/srv.json"
py 'random.seed(65)
c.osrv.flights.insert_many([{"_id": i, "origin": random.choice(["JFK", "LAX", "ORD"]),
                             "dest": random.choice(["ATL", "SFO"]),
                             "delay": random.choice([random.randrange(-5, 60), 20.5, "late", None]),
                             "notes": "n%d" % i, "cancelled": i % 11 == 0} for i in range(300)])
c.osrv.flights.insert_one({"_id": 300, "origin": "JFK"})'
online run srv --server-side -q
expect_eq "java: online run --server-side (exit 0, nothing said)" "$rc:$(cat "$T/err")" "0:"
rm -f "$T/srv.archive"
offline_run srv osrv || fail "java: server-side: the offline reference"
online_same "java: server-side: the pipelines' results are remodel run's" \
    "$T/srv.archive" osrv.jfk=jfk_remodel_$(pid srv)_1 osrv.delayed=delayed_remodel_$(pid srv)_2 \
    osrv.flights=flights_remodel_$(pid srv)_3

# --- the mongosh script of the same plan ---------------------------------------
if [ -n "${MONGOSH1:-}" ] && [ -x "$MONGOSH1" ]; then
    sed 's/"oair\./"osh./g' "$T/plans/late.json" >"$T/plans/sh.json"
    py 'c.osh.flights.insert_many(list(c.osrv.flights.find()))'
    "$REMODEL" compile "$T/plans/sh.json" --format mongosh --server-version 4.0 >"$T/sh.js" 2>"$T/err"
    "$MONGOSH1" --quiet "$(shell_uri "$uri")" "$T/sh.js" >"$T/sh.out" 2>&1
    expect_eq "java: the compiled mongosh script runs (exit 0)" "$?" 0
    rm -f "$T/sh.archive"
    offline_run sh osh || fail "java: script: the offline reference"
    online_same "java: the script's results are remodel run's" "$T/sh.archive" \
        osh.jfk=jfk_remodel_$(pid sh)_1 osh.delayed=delayed_remodel_$(pid sh)_2 \
        osh.flights=flights_remodel_$(pid sh)_3
else
    fail "mongosh 1.10.6 installed" "MONGOSH1 not installed (tests/peers/install.sh)"
fi

# --- --to-uri: to another server, finalized there --------------------------------
sed 's/"oair\./"oto./g' "$T/plans/late.json" >"$T/plans/to.json"
py 'random.seed(66)
c.oto.flights.insert_many([{"_id": i, "origin": random.choice(["JFK", "LAX"]), "dest": "SFO",
                            "delay": random.randrange(-5, 60), "notes": "n%d" % i,
                            "cancelled": i % 7 == 0} for i in range(200)])'
SRC=$uri
if online_start java "$T/java2" 0; then
    DST=$uri uri=$SRC
    tu() { run_rm online "$1" "$T/plans/to.json" --uri "$SRC" --to-uri "$DST" "${@:2}"; }
    tu run -q
    expect_eq "java->java: run --to-uri (exit 0, nothing said)" "$rc:$(cat "$T/err")" "0:"
    writes 3 oto
    tu sync -q
    expect_eq "java->java: sync --to-uri after the writes (exit 0)" "$rc" 0
    tu finalize --writes-stopped -q
    expect_eq "java->java: finalize --to-uri (exit 0)" "$rc:$(cat "$T/err")" "0:"
    rm -f "$T/to.archive"
    offline_run to oto || fail "java->java: the offline reference"
    uri=$DST online_same "java->java: the destination's collections are remodel run's over the source as it is" \
        "$T/to.archive" oto.jfk=jfk oto.delayed=delayed oto.flights=flights
    uri=$SRC
fi

# --- in place, and the inverses ----------------------------------------------
# (In place, on both servers, with writes, rollback and kills:
# tests/cli/test_online_copy_inplace.sh.)
online run late --in-place -q
expect_eq "java: --in-place for the plan begun side by side refused (exit 2), naming both modes" \
    "$rc:$(grep -c -F 'was started side by side, not in place (--in-place)' "$T/err")" "2:1"
online finalize late --writes-stopped -q
expect_eq "java: finalized (exit 0)" "$rc:$(cat "$T/err")" "0:"
py 'c.oair.flights.update_one({}, {"$set": {"app": 1}})'
online rollback late --carry-writes
expect_eq "java: rollback --carry-writes refused (exit 2), naming the first step without an inverse and why" \
    "$rc:$(grep -c -F 'step 2 (move): a move with a filter has no inverse here' "$T/err")" "2:1"
echo '{"remodel": 1, "steps": [{"delete": {"from": "odel.flights", "filter": {"cancelled": true}}}]}' >"$T/plans/purge.json"
py 'c.odel.flights.insert_many([{"_id": i, "cancelled": i % 3 == 0} for i in range(30)])'
online run purge -q && online finalize purge --writes-stopped -q
expect_eq "java: a delete run and finalized (exit 0)" "$rc:$(cat "$T/err"):$(py 'print(c.odel.flights.count_documents({}))')" "0::20"
py 'c.odel.flights.insert_one({"_id": 99, "cancelled": False})'
online rollback purge --carry-writes
expect_eq "java: its rollback --carry-writes refused (exit 2), naming the delete and why" \
    "$rc:$(grep -c -F 'step 1 (delete): a delete drops its documents and nothing gives them back' "$T/err")" "2:1"
# A whole move's inverse is the move back: the application's writes to the
# moved collection come back with it.
echo '{"remodel": 1, "steps": [{"move": {"from": "omv.flights", "to": "omv.old_flights"}}]}' >"$T/plans/whole.json"
py 'c.omv.flights.insert_many([{"_id": i, "n": i} for i in range(25)])'
online run whole -q && online finalize whole --writes-stopped -q
expect_eq "java: a whole move run and finalized (exit 0): the source empty, the documents moved" \
    "$rc:$(cat "$T/err"):$(py 'print(c.omv.flights.count_documents({}), c.omv.old_flights.count_documents({}))')" "0::0 25"
py 'c.omv.old_flights.insert_one({"_id": 100, "n": 100}); c.omv.old_flights.update_one({"_id": 3}, {"$set": {"n": -3}})'
online rollback whole --carry-writes
expect_eq "java: its rollback --carry-writes moves the documents back with the writes made since (exit 0)" \
    "$rc:$(py 'print(c.omv.flights.count_documents({}), c.omv.flights.find_one({"_id": 3})["n"], c.omv.flights.count_documents({"_id": 100}))')" "0:26 -3 1"
# A copy's inverse deletes the copies: the source, never switched, keeps
# the application's writes.
echo '{"remodel": 1, "steps": [{"copy": {"from": "ocp.flights", "to": "ocp.jfk", "filter": {"o": "JFK"}}}]}' >"$T/plans/cp.json"
py 'c.ocp.flights.insert_many([{"_id": i, "o": ["JFK", "LAX"][i % 2]} for i in range(20)])'
online run cp -q && online finalize cp --writes-stopped -q
expect_eq "java: a copy run and finalized (exit 0): the copies beside the source" \
    "$rc:$(cat "$T/err"):$(py 'print(c.ocp.flights.count_documents({}), c.ocp.jfk.count_documents({}))')" "0::20 10"
py 'c.ocp.jfk.insert_one({"_id": 100, "o": "JFK"}); c.ocp.flights.insert_one({"_id": 101, "o": "JFK"})'
online rollback cp --carry-writes
expect_eq "java: its rollback --carry-writes (exit 0): the source as the application left it, no copies" \
    "$rc:$(py 'print(c.ocp.flights.count_documents({}), c.ocp.jfk.count_documents({}))')" "0:21 0"
