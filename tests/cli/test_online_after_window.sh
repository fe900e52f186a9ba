#!/usr/bin/env bash
# finalize's write-blocked window does not grow with the results (issue
# 34's leftovers): with a change log, finalize records only the log's
# point at the switch, so its closing line says 0 documents read whole for
# checksums in the window, at 2,196 documents and at 39,528 (remodel-gen
# scales 2 and 36, mongo-java-server with its change streams) and on the
# sample on FerretDB with its oplog; without a log it reads only the
# sources for their checksums there (the count said), the results'
# checksums folded from the verify's read of them (none read again, said;
# a rollback with nothing written then goes, exit 0). Rollback then, with
# a log:
#   - a write between rollback's check and its renames (the rollback
#     killed at its first rename, tests/peers/killat.sh) is found once the
#     originals are back (exit 1), by the digests the check took;
#   - on FerretDB with a small oplog rolled past the switch's point, the
#     history is lost: rollback refuses (exit 2) naming it, nothing
#     renamed; --discard-writes-after-switch rolls back and keeps the
#     results, which go only with the flag again.
# AW_DEBUG=1: the roll-over and the refusal on stderr; AW_FERRETDB_ONLY=1:
# the FerretDB part only.
#   REMODEL=build/remodel bash tests/cli/test_online_after_window.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "after window: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
GEN=$(dirname "$REMODEL")/remodel-gen
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"

exists() { py 'print(sys.argv[2] in c.crm.list_collection_names())' "$1"; }
# window: the documents finalize says it read whole for checksums with the
# writes stopped ("?" when it said no such line).
window() {
    sed -n 's/^remodel: finalize: the writes were stopped for [0-9.]* s (from the start of finalize to the end of the switch; \([0-9]*\) documents read whole for checksums in it)$/\1/p' "$T/err" | grep . || echo "?"
}
# finalized NAME: run, finalize; prints the window's count.
finalized() {
    online run embed --create-indexes -q
    [ $rc == 0 ] || { echo "run: $(cat "$T/err")"; return; }
    # What is read in the window, not how long it takes (a loaded machine
    # may pass the default 10 s bound: test_online_cutover tests it).
    online finalize embed --writes-stopped --max-window 0
    [ $rc == 0 ] || { echo "finalize: $(tail -n 1 "$T/err")"; return; }
    echo "$(window):$(grep -c 'no checksums recorded: nothing read with the writes stopped' "$T/err")"
}

# java_log: the change-log mongo-java-server of the three parts below,
# started once (each start is a JVM's); the parts after the first get it
# with their databases dropped (none needs a fresh server: no restart, no
# log size of its own).
java_uri=
java_log() {
    if [ -z "$java_uri" ]; then
        online_start java "$T/srv-java" 0 changelog && java_uri=$uri
        return
    fi
    uri=$java_uri
    py 'for d in c.list_database_names():
    if d not in ("admin", "config", "local"):
        c.drop_database(d)'
}

if [ -z "${AW_FERRETDB_ONLY:-}" ]; then
    # ---- mongo-java-server, change streams: two sizes ----
    for sc in 2 36; do
        "$GEN" --out "$T/gen$sc" --scale $sc --seed 1 --force >/dev/null ||
            { fail "remodel-gen --scale $sc"; continue; }
        java_log || continue
        "$MONGORESTORE" --uri "$uri" --dir "$T/gen$sc" --nsInclude 'crm.people' --nsInclude 'crm.tasks' \
            --noIndexRestore --quiet
        n=$(py 'print(c.crm.people.count_documents({}) + c.crm.tasks.count_documents({}))')
        expect_eq "java changelog: $n documents: finalize reads none whole with the writes stopped (only the log's point recorded)" \
            "$(finalized)" "0:1"
        online rollback embed -q && online rollback embed -q
        expect_eq "java changelog: $n documents: ... nothing written since: rollback twice, the results gone (exit 0)" \
            "$rc:$(exists "people_remodel_$(pid embed)_1")" "0:False"
        rm -rf "$T/gen$sc"
    done

    # ---- mongo-java-server, change streams: a write between the check and the renames ----
    ONLINE=$(dirname "$REMODEL")/remodel-online
    killat() {
        MONGOC_DISABLE_SHM=1 "$ROOT/tests/peers/killat.sh" --timeout 600 -q --log "$T/klog" "$1" "$2" -- \
            "$ONLINE" "${@:3}" --uri "$uri" >"$T/kout" 2>"$T/kerr"
        krc=$?
    }
    java_log && {
        "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
            --noIndexRestore --quiet
        e=$(pid embed)
        expect_eq "java changelog: the sample finalized, nothing read whole in the window" "$(finalized)" "0:1"
        killat online_switch_rename 1 rollback "$T/plans/embed.json"
        py 'c.crm.people.insert_one({"_id": "p-late", "name": "Late", "tasks": []})'
        online rollback embed
        expect_eq "java changelog: a write between rollback's check and its renames: found after them (exit 1), the results kept" \
            "$krc:$rc:$(grep -c 'the results beside them were written after the switch (crm.people: changed, by the checksums recorded at the switch)' "$T/err"):$(exists "people_remodel_${e}_1")" \
            "137:1:1:True"
        online rollback embed
        expect_eq "java changelog: ... rollback again refuses to drop them (exit 2)" \
            "$rc:$(grep -c 'crm.people: changed' "$T/err")" "2:1"
        online rollback embed --carry-writes
        expect_eq "java changelog: ... --carry-writes carries it back and drops the results (exit 0)" \
            "$rc:$(py 'print(c.crm.people.find_one({"_id": "p-late"}))'):$(exists "people_remodel_${e}_1")" \
            "0:{'_id': 'p-late', 'name': 'Late'}:False"
        "$SERVER" stop "$T/srv-java" >/dev/null 2>&1
    }

    # ---- mongo-java-server without a log: the checksums in the window, counted ----
    online_start java "$T/srv-plain" 0 && {
        "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
            --noIndexRestore --quiet
        online run embed --create-indexes -q
        online finalize embed --writes-stopped --max-window 0
        # the sources (now the backups) once; the results' checksums from
        # the verify's read of them, none read again
        expect_eq "java: without a log finalize checksums only the sources in the window, the results' from its verify's read" \
            "$rc:$(grep -c 'sync and verify every result in full (no change log to drain; the verify.s read gives the results. checksums)' "$T/err"):$(grep -c "the results' checksums recorded before the switch ($(py 'print(c.crm.people.count_documents({}) + c.crm.tasks.count_documents({}))') documents, 0 of them read again for it" "$T/err"):$(window)" \
            "0:1:1:$(py 'print(sum(c.crm[n].count_documents({}) for n in c.crm.list_collection_names() if n.endswith("_backup")))')"
        online rollback embed
        expect_eq "java: ... the folded checksums are the results': rollback with nothing written (exit 0)" \
            "$rc:$(exists "people_remodel_$(pid embed)_backup")" "0:False"
        "$SERVER" stop "$T/srv-plain" >/dev/null 2>&1
    }
fi

# ---- FerretDB, its oplog rolled past the switch ----
PEERS_OPLOG_BYTES=4194304 online_start ferretdb "$T/srv-ferret" 0 changelog && {
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    e=$(pid embed)
    expect_eq "ferretdb changelog: the sample finalized, nothing read whole in the window" "$(finalized)" "0:1"
    # A write after the switch, then filler through the 4 MiB oplog (trimmed
    # every second, a part at a time) until its first entry is past the
    # switch's point (at most a minute).
    py 'import time
c.crm.people.update_one({}, {"$set": {"name": "after the switch"}})
at = c.remodel.plans.find_one({"_id": sys.argv[2]})["afterSwitch"]["capture"]["ts"]
for i in range(60):
    first = c.local["oplog.rs"].find_one(sort=[("$natural", 1)])["ts"]
    if (first.time, first.inc) > (at.time, at.inc):
        break
    c.crm.filler.insert_many([{"pad": "x" * 50000} for _ in range(10)])
    time.sleep(1)
print("rolled" if (first.time, first.inc) > (at.time, at.inc) else "not rolled")' "$e" >"$T/rolled"
    [ -n "${AW_DEBUG:-}" ] && cat "$T/rolled" >&2
    online rollback embed
    [ -n "${AW_DEBUG:-}" ] && cat "$T/err" >&2
    expect_eq "ferretdb changelog: the oplog rolled past the switch: rollback refused (exit 2), naming it, nothing renamed" \
        "$(cat "$T/rolled"):$rc:$(grep -c 'the change log cannot say what was written to the switched-in collections since the switch (its history no longer reaches that point), and the switch recorded only its point there' "$T/err"):$(exists "people_remodel_${e}_backup")" \
        "rolled:2:1:True"
    online rollback embed --discard-writes-after-switch
    expect_eq "ferretdb changelog: ... --discard-writes-after-switch: the originals back (exit 0), the results kept" \
        "$rc:$(exists "people_remodel_${e}_backup"):$(exists "people_remodel_${e}_1"):$(py 'print(c.crm.people.count_documents({"name": "after the switch"}))')" \
        "0:False:True:0"
    online rollback embed
    expect_eq "ferretdb changelog: ... rollback again refuses to drop them (exit 2), naming the history lost" \
        "$rc:$(grep -c 'crm.people: not known (history lost)' "$T/err"):$(exists "people_remodel_${e}_1")" "2:1:True"
    online rollback embed --discard-writes-after-switch -q
    expect_eq "ferretdb changelog: ... dropped with the flag again (exit 0)" \
        "$rc:$(exists "people_remodel_${e}_1")" "0:False"
}
