#!/usr/bin/env bash
# remodel-memsrv, the in-memory test server (tests/mem/; docs/tests.md,
# "The in-memory server"), checked against the real test servers:
#   - one sequence of operations (tests/mem/conformance.py: inserts with a
#     duplicate _id, updates with each operator, upserts, replacements,
#     deletes, finds with sort, projection, skip, limit and small batches,
#     aggregates, a unique index and its violations, creates, renames,
#     listCollections, listIndexes, findAndModify, unknown commands and
#     stages) on FerretDB, mongo-java-server and memsrv: each step's
#     documents byte for byte, counts and error codes agree with both,
#     except the steps listed below where one of them is known to answer
#     otherwise than MongoDB (memsrv must then agree with the other);
#   - remodel online on memsrv with its change log (the oplog): run, status,
#     sync after writes, finalize, rollback give the collections the
#     offline engine (remodel run) gives on a dump of the same data;
#   - the test commands: memSnapshot and memRestore bring back the data
#     and the oplog (memDigest equal), memSet makes a command fail with a
#     given code, and remodel says so.
#   REMODEL=build/remodel bash tests/cli/test_mem_server.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
export ROOT
. "$ROOT/tests/cli/lib_mem.sh"
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
S=$ROOT/dumps/sample
mkdir -p "$T/plans"

# ---- the same operations on the three servers ----
for kind in mem ferretdb java; do
    online_start "$kind" "$T/srv-$kind" || continue
    python3 "$ROOT/tests/mem/conformance.py" "$uri" >"$T/$kind.steps" 2>"$T/err" ||
        fail "$kind: conformance.py ran" "$(tail -n 5 "$T/err")"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
# Where a real server is known to answer otherwise than MongoDB does (and
# memsrv does as MongoDB):
#   mongo-java-server: counts a failed ordered or unordered insert batch as
#     all inserted; makes no capped collection (create with capped fails,
#     so the second create succeeds); ignores listCollections' filter;
#     gives a missing rename source no code.
#   FerretDB 1.x: $sum over a path gives 0; $project with expressions,
#     $addFields and renameCollection's dropTarget are not implemented
#     (code 238), so every later step over the renamed collection differs;
#     an unknown stage is 40234 (MongoDB: 40324); a unique index over
#     duplicates fails with code 1 (MongoDB: 11000).
JAVA_DIFFERS="insert_dup insert_dup_unordered create create_exists list_filtered rename_missing"
FERRET_DIFFERS="agg_group agg_project agg_addfields agg_unknown_stage index_on_dups rename_drop_target
after_renames fam_update fam_delete docs_at_end drop"
if [ -s "$T/mem.steps" ] && [ -s "$T/java.steps" ] && [ -s "$T/ferretdb.steps" ]; then
    python3 - "$T" "$JAVA_DIFFERS" "$FERRET_DIFFERS" >"$T/cmp" 2>&1 <<'PY'
import json, sys
T, java_differs, ferret_differs = sys.argv[1], set(sys.argv[2].split()), set(sys.argv[3].split())
r = {k: [json.loads(l) for l in open(f"{T}/{k}.steps")] for k in ("mem", "java", "ferretdb")}
assert [s["step"] for s in r["mem"]] == [s["step"] for s in r["java"]] == [s["step"] for s in r["ferretdb"]]
bad, docs = 0, 0
for m, j, f in zip(r["mem"], r["java"], r["ferretdb"]):
    name = m["step"]
    if isinstance(m["result"], list):
        docs += len(m["result"])
    for other, res, differs in (("java", j, java_differs), ("ferretdb", f, ferret_differs)):
        if name not in differs and m != res:
            bad += 1
            print(f"{name}: memsrv {str(m['result'])[:200]} but {other} {str(res['result'])[:200]}")
    if m != j and m != f:
        bad += 1
        print(f"{name}: memsrv agrees with neither server")
print(f"{len(r['mem'])} steps, {docs} documents compared, {bad} differences")
sys.exit(1 if bad else 0)
PY
    if [ $? == 0 ]; then
        pass "the same operations: memsrv answers as FerretDB and mongo-java-server ($(tail -n 1 "$T/cmp"))"
    else
        fail "the same operations: memsrv answers as FerretDB and mongo-java-server" "$(cat "$T/cmp")"
    fi
else
    fail "the same operations on three servers" "a server's steps are missing"
fi

# ---- remodel online on memsrv, against the offline engine ----
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
# offline NAME DUMP: remodel run of the plan over DUMP into $T/NAME.archive.
offline() { "$REMODEL" run -q "$T/plans/embed.json" --from "$2" --to "$T/$1.archive"; }
# source_dump NAME: the server's crm as an archive, $T/NAME.archive.
source_dump() { "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$1.archive" --quiet; }
if online_start mem "$T/srv-online" 0 changelog &&
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' --noIndexRestore --quiet; then
    offline first "$S"
    online run embed --create-indexes
    expect_eq "online run: exit 0" "$rc" 0
    online_same "online run: the result is remodel run's" "$T/first.archive" "crm.people=$(target crm people)"
    online status embed
    if [ $rc == 0 ] && grep -q "capture: oplog" "$T/err" "$T/out"; then
        pass "online status: the change log is memsrv's oplog"
    else
        fail "online status: the change log is memsrv's oplog" "rc $rc: $(cat "$T/err" "$T/out" | head -n 20)"
    fi
    # Writes to the sources, read back from the oplog by sync.
    py "for k, t in enumerate(c.crm.tasks.find({}, {'_id': 1}).sort('_id', 1).limit(40)):
    c.crm.tasks.update_one({'_id': t['_id']}, {'\$set': {'title': 'changed %d' % k}})
c.crm.tasks.insert_one({'_id': 'new-task', 'owner': c.crm.people.find_one(sort=[('_id', 1)])['_id'], 'title': 'new', 'due_date': 1})
c.crm.tasks.delete_one({'_id': c.crm.tasks.find_one(sort=[('_id', -1)])['_id']})"
    source_dump second
    offline after "$T/second.archive"
    online sync embed
    expect_eq "online sync after writes: exit 0" "$rc" 0
    read=$(figure read)
    if [ -n "$read" ] && [ "$read" -gt 0 ] && [ "$read" -lt 1000 ]; then
        pass "online sync read what the oplog shows changed ($read documents)"
    else
        fail "online sync read what the oplog shows changed" "read '$read': $(grep 'change log' "$T/err")"
    fi
    online_same "online sync: the result is remodel run's on the changed data" "$T/after.archive" \
        "crm.people=$(target crm people)"
    online finalize embed --writes-stopped --max-window 0
    if [ $rc == 0 ] && grep -q "finalized" "$T/err"; then
        pass "online finalize: switched"
    else
        fail "online finalize: switched" "rc $rc: $(tail -n 5 "$T/err")"
    fi
    online_same "after finalize crm.people is remodel run's result" "$T/after.archive" crm.people=people
    online rollback embed
    expect_eq "online rollback: exit 0" "$rc" 0
    online_same "after rollback crm.tasks is the source as it was" "$T/second.archive" \
        crm.tasks=tasks
    python3 - "$uri" "$T/second.archive" >"$T/cmp" 2>&1 <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "transforms"))
import pymongo, rmlib
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
src = rmlib.read_archive(sys.argv[2])[0]["crm.people"]
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
now = list(c.crm.get_collection("people", CodecOptions(document_class=RawBSONDocument)).find().sort("_id", 1))
a = sorted(bytes(r) for r in src)
b = sorted(bytes(d.raw) for d in now)
print(len(a), len(b), a == b)
sys.exit(0 if a == b else 1)
PY
    if [ $? == 0 ]; then pass "after rollback crm.people is the source as it was ($(cat "$T/cmp"))"; else fail "after rollback crm.people is the source as it was" "$(cat "$T/cmp")"; fi

    # ---- the test commands ----
    before=$(mem_digest)
    mem_snapshot switched
    py "c.crm.people.delete_many({})
c.crm.tasks.update_many({}, {'\$set': {'gone': True}})
c.crm.drop_collection('tasks_remodel_x')"
    after=$(mem_digest)
    mem_restore switched
    if [ "$(mem_digest)" == "$before" ] && [ "$after" != "$before" ] &&
        grep -q "^local.oplog.rs " <<<"$before" && grep -q "^crm.people 98 " <<<"$before"; then
        pass "memRestore brings back the snapshot, oplog included ($(wc -l <<<"$before") namespaces)"
    else
        fail "memRestore brings back the snapshot, oplog included" "before: $before
after the writes: $after
restored: $(mem_digest)"
    fi
    # A command made to fail: remodel reports the server's code.
    mem_cmd '{"memSet": {"fail": "find", "code": 13}}' >/dev/null
    online status embed
    if [ $rc != 0 ] && grep -q "made to fail" "$T/err"; then
        pass "memSet: a command made to fail, remodel says the server's error"
    else
        fail "memSet: a command made to fail, remodel says the server's error" "rc $rc: $(tail -n 3 "$T/err")"
    fi
    mem_cmd '{"memSet": {"fail": ""}}' >/dev/null
    online status embed
    expect_eq "memSet fail \"\": the calls pass again" "$rc" 0
    # A delayed command: ping timed alone, before and after the setting.
    ms=$(py "import time
def ping():
    t = time.monotonic(); c.admin.command('ping'); return int((time.monotonic() - t) * 1000)
before = ping()
c.admin.command('memSet', {'delayCmd': 'ping', 'delayMs': 3000})
print(before, ping())")
    # 3 s: more than a ping takes on a loaded machine, the one before.
    if [ "${ms% *}" -lt 3000 ] && [ "${ms#* }" -ge 3000 ]; then
        pass "memSet: a delayed command answers after its delay (ping ${ms% *} ms, then ${ms#* } ms)"
    else
        fail "memSet: a delayed command answers after its delay" "ping before and after: $ms ms"
    fi
    mem_cmd '{"unknownThing": 1}' >"$T/out" 2>&1
    if grep -q "no such command" "$T/out"; then pass "an unknown command: CommandNotFound"; else fail "an unknown command: CommandNotFound" "$(tail -n 2 "$T/out")"; fi
fi
"$SERVER" stop "$T/srv-online" >/dev/null 2>&1
