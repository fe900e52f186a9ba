#!/usr/bin/env bash
# What finalize requires (issue 34; docs/online.md, "What finalize
# requires"), on FerretDB (oplog) and mongo-java-server (change streams),
# each started with its change log, the sample's crm.*:
#   - a run killed (-9) before its first checkpoint: follow and finalize
#     refused (exit 2), "has done no batch", naming each pass "not begun"
#     and `remodel online run PLAN`; nothing on the server changed;
#   - a run of a set on crm.tasks stopped by SIGINT part way: finalize
#     (its --sample 10 would find only the first, copied, drivers),
#     follow and sync refused (exit 2), naming the pass and how far its
#     checkpoint got; nothing on the server changed; the run resumed,
#     finalize drains, switches, says its window before and its length
#     after, and crm.tasks is remodel run's on the dump;
#   - an embed killed (-9) part way: finalize and follow refused, nothing
#     changed; the plan file then edited: verify, verify --sample, sync,
#     follow and finalize refused (exit 2) with what to do (restore the
#     file, or run --restart); restored, the run resumed, finalize
#     --full-verify (the rescans) says where it is every few seconds with
#     the writes stopped, its window line matches the time it took, and
#     people and tasks are remodel run's on the dump.
#   REMODEL=build/remodel bash tests/cli/test_online_complete.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "complete: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap 'for p in $(jobs -p); do kill -9 $p 2>/dev/null; done
for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
export LC_ALL=C
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.tasks", "fields": {"country": "US"}}}]}' \
    >"$T/plans/set.json"
"$REMODEL" run -q "$T/plans/embed.json" --from "$S" --to "$T/embed.archive"
"$REMODEL" run -q "$T/plans/set.json" --from "$S" --to "$T/set.archive"

# restore KIND: a fresh server of that kind with its change log, holding
# the sample's crm.*, the join's index made.
restore() {
    "$SERVER" stop "$T/srv-$1" >/dev/null 2>&1
    rm -rf "$T/srv-$1" # FerretDB keeps the data of an earlier start
    online_start "$1" "$T/srv-$1" 0 changelog || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet && py 'c.crm.tasks.create_index("owner")'
}
# every document of every database but the server's own, hashed in _id order
hash_all() {
    py '
import hashlib
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
h = hashlib.sha1()
for d in sorted(c.list_database_names()):
    if d in ("admin", "local", "config"):
        continue
    for n in sorted(c[d].list_collection_names()):
        h.update(("%s.%s;" % (d, n)).encode())
        for doc in c[d].get_collection(n, CodecOptions(document_class=RawBSONDocument)).find().sort("_id", 1):
            h.update(doc.raw)
print(h.hexdigest())'
}
# checkpoint_wait PID: until the run PID has saved a checkpoint with a batch in it.
checkpoint_wait() {
    for _ in $(seq 300); do
        [ "$(py 'print(c.remodel.checkpoints.count_documents({"seen": {"$gt": 0}, "done": False}))')" -gt 0 ] && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# refused NAME PLAN CMD ARGS... -- WANT...: remodel online CMD of PLAN
# refused (exit 2, at once: follow would run until stopped) with one line
# holding every WANT.
refused() {
    local name=$1 plan=$2 cmd=$3; shift 3
    local args=() want=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    want=("$@")
    timeout 600 "$REMODEL" online "$cmd" "$T/plans/$plan.json" --uri "$uri" "${args[@]}" \
        >"$T/out" 2>"$T/err"
    rc=$?
    expect_eq "$name: $cmd refused (exit 2, one line)" "$rc:$(grep -c . "$T/err")" "2:1"
    expect_message "$name: ... naming what is left and what finishes it" "${want[@]}"
}

for kind in $(online_kinds); do
    # ---- a run that did no batch ----
    restore $kind || { fail "$kind: restore"; continue; }
    "$KILLAT" -q online_checkpoint_write 1 -- "$ONLINE" run "$T/plans/embed.json" --uri "$uri" \
        >/dev/null 2>"$T/kerr"
    expect_eq "$kind: a run killed at its first checkpoint" "$?" 137
    h0=$(hash_all)
    for cmd in follow "finalize --writes-stopped"; do
        # shellcheck disable=SC2086
        refused "$kind: no batch" embed $cmd -- \
            "plan embed.json: ${cmd%% *} takes the results of a finished run, and its run has done no batch: step 1 (embed) crm.people, pass 1 of 2: not begun; step 1 (embed) crm.tasks, pass 2 of 2: not begun; remodel online run $T/plans/embed.json finishes it (then ${cmd%% *} again); nothing"
    done
    expect_eq "$kind: no batch: nothing on the server changed" "$(hash_all)" "$h0"

    # ---- a run stopped by SIGINT part way ----
    restore $kind || { fail "$kind: restore"; continue; }
    "$REMODEL" online run "$T/plans/set.json" --uri "$uri" --batch-size 50 --pause 200ms \
        >/dev/null 2>"$T/a.err" &
    a=$!
    checkpoint_wait $a || fail "$kind: SIGINT: the run saves a checkpoint" "$(cat "$T/a.err")"
    kill -INT $a
    wait $a
    expect_eq "$kind: SIGINT part way: exit 130" "$?" 130
    read=$(py 'print(c.remodel.checkpoints.find_one({"step": 1})["seen"])')
    h0=$(hash_all)
    refused "$kind: SIGINT" set finalize --writes-stopped --sample 10 -- \
        "finalize takes the results of a finished run, and its run has not finished: step 1 (set) crm.tasks: $read read, its checkpoint after { \"_id\" : " \
        "remodel online run $T/plans/set.json finishes it (then finalize again); nothing switched"
    refused "$kind: SIGINT" set follow -- "follow takes the results of a finished run" \
        "step 1 (set) crm.tasks: $read read" "nothing written"
    refused "$kind: SIGINT" set sync -- "sync takes the results of a finished run" \
        "step 1 (set) crm.tasks: $read read" "nothing written"
    expect_eq "$kind: SIGINT: finalize, follow, sync refused: nothing on the server changed" \
        "$(hash_all)" "$h0"
    expect_eq "$kind: ... crm.tasks is still the original ($read of 1000 copied)" \
        "$(py 'print(c.crm.tasks.count_documents({"country": "US"}), c.crm.tasks.count_documents({}))')" "0 1000"
    online run set
    expect_eq "$kind: SIGINT: the run resumed completes" "$rc" 0
    online finalize set --writes-stopped
    expect_eq "$kind: then finalize switches (exit 0)" "$rc" 0
    [ $rc == 0 ] || cat "$T/err" >&2
    expect_message "$kind: ... saying first what it does with the writes stopped" \
        "remodel: finalize: with the writes stopped (--writes-stopped), it will drain the change log (every write since the last sync's point), verify a sample of 1000 drivers a pass, switch the collections and confirm from the log that nothing was written meanwhile"
    if grep -q '^remodel: finalize: the writes were stopped for [0-9]*\.[0-9] s (from the start of finalize to the end of the switch; 0 documents read whole for checksums in it)$' "$T/err" &&
        [ "$(tail -n 2 "$T/err" | grep -c 'the writes were stopped for')" == 1 ]; then
        pass "$kind: ... and how long the writes were blocked, at the end"
    else
        fail "$kind: ... and how long the writes were blocked, at the end" "$(cat "$T/err")"
    fi
    online_same "$kind: SIGINT, resumed, finalized: crm.tasks is remodel run's" "$T/set.archive" \
        crm.tasks=tasks

    # ---- a run killed part way; the plan changed meanwhile ----
    restore $kind || { fail "$kind: restore"; continue; }
    "$REMODEL" online run "$T/plans/embed.json" --uri "$uri" --batch-size 10 --pause 200ms \
        >/dev/null 2>&1 &
    a=$!
    checkpoint_wait $a || fail "$kind: kill -9: the run saves a checkpoint"
    kill -9 $a
    wait $a 2>/dev/null
    h0=$(hash_all)
    # killed in pass 1 (people, 10 batches) most often, in pass 2 (tasks) sometimes
    left='its run has not finished: (step 1 \(embed\) crm\.people, pass 1 of 2: [1-9][0-9]* read, its checkpoint after \{ "_id" : \{ "\$oid" : "[0-9a-f]{24}" \} \}; step 1 \(embed\) crm\.tasks, pass 2 of 2: not begun|step 1 \(embed\) crm\.tasks, pass 2 of 2: [1-9][0-9]* read, its checkpoint after \{ "_id" : \{ "\$oid" : "[0-9a-f]{24}" \} \}); remodel online run '
    refused "$kind: kill -9" embed finalize --writes-stopped -- \
        "remodel online run $T/plans/embed.json finishes it (then finalize again); nothing switched"
    expect_eq "$kind: kill -9: ... the pass its checkpoint stopped in, how far, the pass after it not begun" \
        "$(grep -Ec "$left" "$T/err")" 1
    refused "$kind: kill -9" embed follow -- "remodel online run $T/plans/embed.json finishes it (then follow again); nothing written"
    expect_eq "$kind: kill -9: ... follow names the same" "$(grep -Ec "$left" "$T/err")" 1
    expect_eq "$kind: kill -9: finalize and follow refused: nothing on the server changed" \
        "$(hash_all)" "$h0"
    cp "$T/plans/embed.json" "$T/embed.orig"
    sed 's/"due_date": 1/"due_date": -1/' "$T/embed.orig" >"$T/plans/embed.json"
    for cmd in verify "verify --sample 5" sync follow "finalize --writes-stopped"; do
        # shellcheck disable=SC2086
        refused "$kind: a changed plan: ${cmd%% *}" embed $cmd -- \
            "plan embed.json changed since its run began (digest " \
            "so its results are not this plan's: restore the file as it was, or start over with remodel online run $T/plans/embed.json --restart"
    done
    expect_eq "$kind: a changed plan: nothing on the server changed" "$(hash_all)" "$h0"
    cp "$T/embed.orig" "$T/plans/embed.json"
    online run embed
    expect_eq "$kind: the file restored, the run resumed completes" "$rc" 0
    s0=$(date +%s%N)
    online finalize embed --writes-stopped --full-verify --batch-size 100 --pause 500ms
    ms=$((($(date +%s%N) - s0) / 1000000))
    expect_eq "$kind: finalize --full-verify switches (exit 0)" "$rc" 0
    [ $rc == 0 ] || cat "$T/err" >&2
    expect_message "$kind: ... saying first what it does with the writes stopped, and its cost" \
        "remodel: finalize: with the writes stopped (--writes-stopped), it will read every source it switches (checksums), sync and verify every result in full (--full-verify; the verify's read gives the results' checksums), switch the collections, then check the originals against the checksums: finalize re-reads about 4392 documents with writes stopped"
    expect_eq "$kind: ... the rescans say where they are every few seconds" \
        "$(grep -c '^remodel: finalize: \(sync\|verify\): step 1 (embed) crm\.\(people\|tasks\): [0-9]* read (the writes stopped for [0-9]* s)$' "$T/err" | awk '{ print ($1 >= 1) }')" 1
    said=$(sed -n 's/^remodel: finalize: the writes were stopped for \([0-9]*\)\.[0-9] s (from the start of finalize to the end of the switch; [0-9]* documents read whole for checksums in it)$/\1/p' "$T/err")
    expect_eq "$kind: ... its window line is the time it took (${said:-?} s of ${ms} ms)" \
        "$([ -n "$said" ] && [ $((said * 1000)) -le $ms ] && [ $((said * 1000 + 3000)) -ge $ms ] && echo yes)" yes
    online_same "$kind: killed, resumed, finalized: people and tasks are remodel run's" \
        "$T/embed.archive" crm.people=people crm.tasks=tasks
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
