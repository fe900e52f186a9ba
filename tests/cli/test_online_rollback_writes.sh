#!/usr/bin/env bash
# rollback after the cut-over never loses the application's writes (issue
# 34): the embed of dumps/plans/embed-tasks.json run, the application
# writing the sources, finalize, then the application writing the new
# design (tests/transforms/rollback_writes.py: people renamed, inserted,
# tasks pushed, changed in place and pulled, an orphan task inserted). On
# FerretDB with its oplog and mongo-java-server with its change streams
# (the writes counted from the log), and on mongo-java-server without one
# (found by the checksums finalize recorded):
#   - rollback refuses (exit 2), naming how many documents in which
#     collections (or which collections changed), nothing renamed;
#   - --discard-writes-after-switch puts the originals back byte for byte
#     and says the writes stay in the results; sync, which would overwrite
#     them, is refused meanwhile; rollback again refuses to drop them
#     (exit 2) until given the flag again, which says so;
#   - --carry-writes carries them back into the originals through the
#     inverse (an extract): every written document as expected, every
#     other byte for byte; rollback again then drops the results (exit 0);
# and, on the server without a log: a rename carried back; an extract
# carried back through an embed (a child of no post refused before
# anything is written, elements without an _id before anything is
# renamed); a set of a field no task had carried back (the field
# removed), one that overwrote a field refused, rollback offering only
# what works for it (issue 65); a rollback
# --carry-writes killed at its second rename (tests/peers/killat.sh)
# completed by rollback without the flag, which carries, and one killed at
# its deletes completed the same way; a write landing
# in the results between rollback's check and its renames found once the
# originals are back (exit 1), the results then never dropped without a
# flag; a switch that recorded nothing (an earlier remodel's) refused
# without a flag. RW_PLAIN_ONLY=1: the server without a log only;
# RW_DEBUG=1: the refusal's and the killed rollback's messages on stderr.
#   REMODEL=build/remodel bash tests/cli/test_online_rollback_writes.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "rollback writes: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
RW=$ROOT/tests/transforms/rollback_writes.py
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
echo '{"remodel": 1, "steps": [{"rename": {"in": "crm.people", "fields": {"name": "fullName"}}}]}' \
    >"$T/plans/rename.json"
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.tasks", "fields": {"design": 2}}}]}' \
    >"$T/plans/set.json"

# exists COLL: whether crm.COLL is on the server.
exists() { py 'print(sys.argv[2] in c.crm.list_collection_names())' "$1"; }
# before_writes: the application's writes to the sources, before the switch.
before_writes() {
    py 'c.crm.tasks.update_one({}, {"$set": {"description": "changed before the switch"}})
c.crm.tasks.insert_one({"_id": "t-before-%d" % c.crm.tasks.count_documents({}), "description": "before the switch", "owner": c.crm.people.find_one(sort=[("_id", 1)])["_id"]})'
}
# cycle KIND: run, the writes before, the originals noted, finalize, the
# writes after.
cycle() {
    online run embed --create-indexes -q
    expect_eq "$1: embed runs" "$rc:$(cat "$T/err")" "0:"
    before_writes
    pyrun "$RW" snapshot "$uri" "$T/snap"
    online finalize embed --writes-stopped
    expect_eq "$1: finalize switches, recording what rollback tells later writes by" \
        "$rc:$(grep -c 'checksums recorded' "$T/err")" "0:1"
    pyrun "$RW" write "$uri" "$T/snap" "${2:-}"
}

for mode in "ferretdb changelog" "java changelog" "java"; do
    [ -n "${RW_PLAIN_ONLY:-}" ] && [ "$mode" != java ] && continue
    kind=${mode%% *} log=${mode#* }
    [ "$log" == "$mode" ] && log=
    name="$kind${log:+ $log}"
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind$log" 0 $log || continue
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    e=$(pid embed)
    cycle "$name"

    # ---- refused ----
    online rollback embed
    [ -n "${RW_DEBUG:-}" ] && cat "$T/err" >&2
    if [ -n "$log" ]; then
        want="written since the switch, by the change log: crm.tasks: 1 document(s), crm.people: 3 document(s)"
    else
        want="written since the switch, by the checksums recorded at the switch: crm.tasks: changed, crm.people: changed"
    fi
    expect_eq "$name: rollback refused (exit 2), naming the writes, nothing renamed" \
        "$rc:$(grep -c -F "$want" "$T/err"):$(grep -c 'nothing renamed' "$T/err"):$(exists "people_remodel_${e}_backup")" \
        "2:1:1:True"

    # ---- discarded ----
    online rollback embed --discard-writes-after-switch
    expect_eq "$name: --discard-writes-after-switch: the originals back (exit 0), the writes said to stay in the results" \
        "$rc:$(grep -c 'left in the results beside the originals' "$T/err")" "0:1"
    expect_eq "$name: ... the originals byte for byte as at the switch" \
        "$(pyrun "$RW" check "$uri" "$T/snap" original)" "ok 98 1001"
    online sync embed
    expect_eq "$name: ... sync refused meanwhile (exit 2): it would overwrite them" \
        "$rc:$(grep -c 'which a run, sync or finalize would overwrite' "$T/err")" "2:1"
    online status embed
    expect_eq "$name: ... status says so" \
        "$rc:$(grep -c "^rollback: the results beside the originals hold the application's writes" "$T/out")" "0:1"
    online rollback embed
    expect_eq "$name: rollback again refuses to drop the results holding them (exit 2), both kept" \
        "$rc:$(grep -c 'the results hold writes made after the switch' "$T/err"):$(exists "people_remodel_${e}_1")" \
        "2:1:True"
    online rollback embed --discard-writes-after-switch
    expect_eq "$name: ... with the flag they are dropped, and it says so" \
        "$rc:$(grep -c 'are dropped with the results' "$T/err"):$(exists "people_remodel_${e}_1"):$(exists "tasks_remodel_${e}_1")" \
        "0:1:False:False"

    # ---- carried back ----
    cycle "$name: again"
    online rollback embed --carry-writes
    expect_eq "$name: --carry-writes (exit 0): carried into crm.people and crm.tasks" \
        "$rc:$(grep -o 'carried back into crm.[a-z]*: .*' "$T/err" | sort | tr '\n' '|')" \
        "0:carried back into crm.people: 1 inserted, 1 replaced, 0 deleted|carried back into crm.tasks: 3 inserted, 1 replaced, 1 deleted|"
    expect_eq "$name: ... every written document in the originals, the rest byte for byte" \
        "$(pyrun "$RW" check "$uri" "$T/snap" carried)" "ok 99 1004"
    online rollback embed
    expect_eq "$name: ... rollback again drops the results (exit 0)" \
        "$rc:$(exists "people_remodel_${e}_1")" "0:False"
    [ -z "$log" ] && break
    "$SERVER" stop "$T/srv-$kind$log" >/dev/null 2>&1
done

# ---- without a log: a rename carried back, a set refused ----
online run rename -q && online finalize rename --writes-stopped -q
py 'first = c.crm.people.find_one(sort=[("_id", 1)])["_id"]
c.crm.people.update_one({"_id": first}, {"$set": {"fullName": "Renamed After Switch"}})
c.crm.people.insert_one({"_id": "p-rename", "fullName": "Inserted After Switch"})'
online rollback rename
expect_eq "java: rename: rollback refused (exit 2)" "$rc:$(grep -c 'crm.people: changed' "$T/err")" "2:1"
online rollback rename --carry-writes
expect_eq "java: rename: --carry-writes: the new names back under the old (exit 0)" \
    "$rc:$(py 'p = c.crm.people
first = p.find_one(sort=[("_id", 1)])
print(first["name"], p.find_one({"_id": "p-rename"}), p.count_documents({"fullName": {"$exists": True}}), p.count_documents({}))')" \
    "0:Renamed After Switch {'_id': 'p-rename', 'name': 'Inserted After Switch'} 0 100"
online rollback rename -q

# A set of a field no task had: its inverse removes it (issue 65).
online run set -q && online finalize set --writes-stopped -q
py 'c.crm.tasks.insert_one({"_id": "t-set", "design": 2, "title": "after the switch"})
c.crm.tasks.update_one({"_id": c.crm.tasks.find_one(sort=[("_id", 1)])["_id"]}, {"$set": {"note": "after"}})'
online rollback set
expect_eq "java: set of a new field: rollback refused (exit 2), offering --carry-writes" \
    "$rc:$(grep -c 'carries them back into the originals\|carries whatever differs back' "$T/err"):$(grep -c 'cannot carry' "$T/err")" "2:1:0"
online rollback set --carry-writes
expect_eq "java: ... --carry-writes (exit 0): the set's field removed, the writes since kept" \
    "$rc:$(py 't = c.crm.tasks
print(t.count_documents({"design": {"$exists": True}}), t.find_one({"_id": "t-set"}), t.count_documents({"note": "after"}))')" \
    "0:0 {'_id': 't-set', 'title': 'after the switch'} 1"
online rollback set -q
expect_eq "java: ... rollback again drops the results" "$rc:$(exists "tasks_remodel_$(pid set)_1")" "0:False"
# The tasks as the cycles below expect them.
py 'c.crm.tasks.delete_one({"_id": "t-set"}); c.crm.tasks.update_many({}, {"$unset": {"note": ""}})'
# A set that overwrote a field some task had: no inverse gives it back.
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.tasks", "fields": {"description": "x"}}}]}' \
    >"$T/plans/setover.json"
online run setover -q && online finalize setover --writes-stopped -q
py 'c.crm.tasks.insert_one({"_id": "t-over", "description": "x"})'
online rollback setover
expect_eq "java: set over a field: rollback refused (exit 2), offering only what works, saying why not" \
    "$rc:$(grep -c 'carries them back into the originals' "$T/err"):$(grep -c 'cannot carry them back for this plan' "$T/err"):$(grep -c 'removes "description" from crm.tasks, which is exact only where no document had it before the run, and some had it when the run began' "$T/err")" \
    "2:0:1:1"
online rollback setover --carry-writes
expect_eq "java: ... --carry-writes refused (exit 2), nothing renamed" \
    "$rc:$(exists "tasks_remodel_$(pid setover)_backup")" "2:True"
online rollback setover --discard-writes-after-switch -q && online rollback setover --discard-writes-after-switch -q
expect_eq "java: ... discarded twice, the results gone" "$rc:$(exists "tasks_remodel_$(pid setover)_1")" "0:False"

# ---- killed, then run again ----
# killat ARGS...: remodel-online under tests/peers/killat.sh, killed at a
# call (remodel would leave libmongoc's /dev/shm/mongoc-PID behind).
ONLINE=$(dirname "$REMODEL")/remodel-online
killat() {
    MONGOC_DISABLE_SHM=1 "$ROOT/tests/peers/killat.sh" --timeout 600 -q --log "$T/klog" "$1" "$2" -- \
        "$ONLINE" "${@:3}" --uri "$uri" >"$T/kout" 2>"$T/kerr"
    krc=$?
}
# A carry killed after its first rename back: rollback again, without the
# flag, keeps the choice it recorded and carries.
cycle "java: killed" -k
killat online_switch_rename 2 rollback "$T/plans/embed.json" --carry-writes
online rollback embed
expect_eq "java: rollback --carry-writes killed at its second rename ($krc), then rollback: it completes and carries (exit 0)" \
    "$krc:$rc:$(grep -c 'carried back into' "$T/err")" "137:0:2"
expect_eq "java: ... every written document in the originals, the rest byte for byte" \
    "$(pyrun "$RW" check "$uri" "$T/snap" carried)" "ok 101 1007"
online rollback embed -q
# A carry killed part way (at its deletes): rollback, without the
# flag, carries the rest and then drops the results.
cycle "java: carry killed" -r
killat mongoc_collection_delete_many 1 rollback "$T/plans/embed.json" --carry-writes
online rollback embed
expect_eq "java: a carry killed at its deletes ($krc), then rollback: it carries the rest and drops the results (exit 0)" \
    "$krc:$rc:$(grep -c 'carried back into' "$T/err"):$(exists "people_remodel_${e}_1")" "137:0:2:False"
expect_eq "java: ... every written document in the originals, the rest byte for byte" \
    "$(pyrun "$RW" check "$uri" "$T/snap" carried | cut -d' ' -f1)" "ok"
# No write by the check, one before the renames (the rollback killed at
# its first): found in the results once the originals are back (exit 1),
# never dropped without a flag.
online run embed --create-indexes -q && online finalize embed --writes-stopped -q
killat online_switch_rename 1 rollback "$T/plans/embed.json"
[ -n "${RW_DEBUG:-}" ] && cat "$T/kerr" "$T/err" >&2
py 'c.crm.people.insert_one({"_id": "p-late", "name": "Late", "tasks": []})'
online rollback embed
expect_eq "java: a write between rollback's check and its renames: found after them (exit 1), the results kept" \
    "$krc:$rc:$(grep -c 'the results beside them were written after the switch' "$T/err"):$(exists "people_remodel_${e}_1")" \
    "137:1:1:True"
online rollback embed
expect_eq "java: ... rollback again refuses to drop them (exit 2)" \
    "$rc:$(grep -c 'crm.people: changed' "$T/err")" "2:1"
online rollback embed --carry-writes
expect_eq "java: ... --carry-writes carries it back and drops the results (exit 0)" \
    "$rc:$(py 'print(c.crm.people.find_one({"_id": "p-late"}))'):$(exists "people_remodel_${e}_1")" \
    "0:{'_id': 'p-late', 'name': 'Late'}:False"
# A switch with nothing recorded (an earlier remodel's finalize): refused
# without a flag; discarded, the results still go only with the flag.
online run embed --create-indexes -q && online finalize embed --writes-stopped -q
py 'c.remodel.plans.update_one({"_id": sys.argv[2]}, {"$unset": {"afterSwitch": ""}})' "$e"
online rollback embed
expect_eq "java: nothing recorded at the switch: rollback refused (exit 2), nothing renamed" \
    "$rc:$(grep -c 'its switch recorded nothing to tell' "$T/err"):$(exists "people_remodel_${e}_backup")" "2:1:True"
online rollback embed --discard-writes-after-switch
online rollback embed
expect_eq "java: ... discarded: the originals back, the results dropped only with the flag again (exit 2)" \
    "$rc:$(grep -c 'crm.people: not known' "$T/err"):$(exists "people_remodel_${e}_1")" "2:1:True"
online rollback embed --discard-writes-after-switch
expect_eq "java: ... and then dropped (exit 0)" "$rc:$(exists "people_remodel_${e}_1")" "0:False"
online run embed --create-indexes -q && online finalize embed --writes-stopped -q
py 'c.remodel.plans.update_one({"_id": sys.argv[2]}, {"$unset": {"afterSwitch": ""}})
c.crm.people.insert_one({"_id": "p-unrecorded", "name": "Unrecorded", "tasks": []})' "$e"
online rollback embed --carry-writes
expect_eq "java: ... with --carry-writes whatever differs is carried (exit 0)" \
    "$rc:$(grep -o 'carried back into crm.people: [0-9]* inserted' "$T/err"):$(py 'print(c.crm.people.find_one({"_id": "p-unrecorded"}))')" \
    "0:carried back into crm.people: 1 inserted:{'_id': 'p-unrecorded', 'name': 'Unrecorded'}"
online rollback embed -q

# ---- an extract carried back (its inverse an embed) ----
cat >"$T/plans/extract.json" <<'PLAN'
{"remodel": 1, "steps": [{"extract": {"from": "blog.posts", "path": "comments", "to": "blog.comments",
  "style": "parentRef", "parentField": "post_id", "ordinalField": "n"}}]}
PLAN
py 'c.blog.posts.drop()
c.blog.posts.insert_many([{"_id": i, "title": "post %d" % i, "comments": [
    {"_id": "c%d-%d" % (i, k), "text": "comment %d of %d" % (k, i)} for k in range(i % 4)]}
    for i in range(1, 21)])'
py 'import bson
print([bson.encode(d).hex() for d in c.blog.posts.find().sort("_id", 1)])' >"$T/posts.orig"
online run extract -q && online finalize extract --writes-stopped -q
py 'cm = c.blog.comments
cm.insert_one({"_id": "c-new", "text": "after the switch", "post_id": 2, "n": 9})
cm.update_one({"_id": "c3-1"}, {"$set": {"text": "changed after the switch"}})
cm.delete_one({"_id": "c3-0"})
c.blog.posts.insert_one({"_id": 99, "title": "a post after the switch"})
c.blog.posts.update_one({"_id": 5}, {"$set": {"title": "retitled"}})'
online rollback extract
expect_eq "java: extract: rollback refused (exit 2)" "$rc:$(grep -c 'blog.comments: changed' "$T/err")" "2:1"
online rollback extract --carry-writes
expect_eq "java: extract: --carry-writes through an embed (exit 0), blog.posts: 1 inserted, 3 replaced" \
    "$rc:$(grep -o 'carried back into blog.posts: .*' "$T/err")" \
    "0:carried back into blog.posts: 1 inserted, 3 replaced, 0 deleted"
expect_eq "java: extract: ... the written posts as expected, every other byte for byte" \
    "$(py 'import bson
orig = [bytes.fromhex(h) for h in eval(open(sys.argv[2]).read())]
now = {d["_id"]: d for d in c.blog.posts.find()}
want = {bson.decode(b)["_id"]: bson.decode(b) for b in orig}
want[2]["comments"].append({"_id": "c-new", "text": "after the switch"})
want[3]["comments"] = [{"_id": "c3-1", "text": "changed after the switch"}, want[3]["comments"][2]]
want[5]["title"] = "retitled"
want[99] = {"_id": 99, "title": "a post after the switch", "comments": []}
raw = {bson.decode(b)["_id"]: b for b in orig}
same = all(bson.encode(now[i]) == raw[i] for i in raw if i not in (2, 3, 5))
print(now == want, same)' "$T/posts.orig")" "True True"
online rollback extract -q
expect_eq "java: extract: ... rollback again drops the results, blog.comments gone" \
    "$rc:$(py 'print(sorted(c.blog.list_collection_names()))')" "0:['posts']"
# A child of no parent cannot be carried (nothing written, the results
# kept); elements without an _id of their own have no exact inverse.
online run extract -q && online finalize extract --writes-stopped -q
py 'c.blog.comments.insert_one({"_id": "c-orphan", "text": "of no post", "post_id": 1000, "n": 0})'
online rollback extract --carry-writes
expect_eq "java: extract: a child of no post: nothing carried (exit 1), the results kept" \
    "$rc:$(grep -c '1 document(s) written after the switch belong to no document of the old design' "$T/err"):$(py 'print(c.blog.posts.count_documents({"comments": {"$exists": True}}), "comments_remodel_%s_1" % sys.argv[2] in c.blog.list_collection_names())' "$(pid extract)")" \
    "1:1:21 True"
online rollback extract --discard-writes-after-switch -q
expect_eq "java: extract: ... then discarded (exit 0)" \
    "$rc:$(py 'print(sorted(c.blog.list_collection_names()))')" "0:['posts']"
py 'c.blog.posts.insert_one({"_id": 100, "title": "no ids", "comments": [{"text": "no _id"}]})'
online run extract -q && online finalize extract --writes-stopped -q
online rollback extract --carry-writes

expect_eq "java: extract: elements without their own _id: --carry-writes refused (exit 2), naming the step, nothing renamed" \
    "$rc:$(grep -c "step 1 (extract): its inverse gives the elements of blog.posts back only when each had an _id of its own, and { \"_id\" : 100 }'s comments has one without" "$T/err"):$(py 'print("posts_remodel_%s_backup" % sys.argv[2] in c.blog.list_collection_names())' "$(pid extract)")" \
    "2:1:True"
