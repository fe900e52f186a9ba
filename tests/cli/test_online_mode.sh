#!/usr/bin/env bash
# remodel online: the mode a plan's run recorded is used (issue 25, item
# 6), on FerretDB and on mongo-java-server.
#  - A plan run with --in-place: status says "mode: in place"; verify, sync,
#    run again and rollback without --in-place work in place (exit 0, their
#    usual lines; rollback restores every document byte for byte);
#    finalize without it says there is nothing to finalize in place.
#  - A plan run side by side: --in-place given to verify, sync or rollback
#    contradicts it, as --force or --forget given to rollback: refused
#    (exit 2, saying so), nothing written.
#   REMODEL=build/remodel bash tests/cli/test_online_mode.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '"$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"' EXIT
export LC_ALL=C

cat >"$T/backfill.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"tier": "basic"}}}
]}
EOF
cat >"$T/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks"}}
]}
EOF

restore() {
    [ "$1" == external ] || { "$SERVER" stop "$T/$1" >/dev/null 2>&1; rm -rf "$T/$1"; }
    online_start "$1" "$T/$1" || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
}
# snap FILE: crm.people's and crm.tasks' documents, their bytes by _id.
snap() { python3 -c 'import json, sys, bson, pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
c = pymongo.MongoClient(sys.argv[1]).get_database("crm", codec_options=CodecOptions(document_class=RawBSONDocument))
json.dump({n: sorted(d.raw.hex() for d in c[n].find()) for n in ("people", "tasks")}, open(sys.argv[2], "w"))' "$uri" "$1"; }

for kind in $(online_kinds); do
    restore $kind || { fail "$kind: restore"; continue; }
    snap "$T/before.json"
    run_rm online run -q --in-place "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: run --in-place" "$rc:$(cat "$T/err")" "0:"
    run_rm online status "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: status: mode: in place" "$(grep -c '^mode: in place' "$T/out")" 1
    run_rm online verify "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: verify without --in-place: the recorded mode, exit 0" "$rc" 0
    expect_message "$kind: ... every result as the sources make it" \
        "remodel: verify: plan backfill.json: every result as the sources make it"
    run_rm online sync "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: sync without --in-place: the recorded mode, exit 0" \
        "$rc:$(grep -c '^remodel: sync: plan backfill.json: every result as the sources make it$' "$T/err")" "0:1"
    run_rm online run "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: run again without --in-place: resumes in place (every step done before)" \
        "$rc:$(grep -c 'done before' "$T/err")" "0:1"
    run_rm online finalize "$T/backfill.json" --uri "$uri" --writes-stopped
    expect_eq "$kind: finalize without --in-place: nothing to finalize in place (exit 2)" \
        "$rc:$(grep -c 'ran in place: its documents are already the new design' "$T/err")" "2:1"
    run_rm online rollback "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: rollback without --in-place: restores in place" \
        "$rc:$(grep -c '^remodel: rollback: step 1 (set) crm.people: 98 restored, 0 left$' "$T/err")" "0:1"
    snap "$T/after.json"
    expect_eq "$kind: ... every document as it was, byte for byte" \
        "$(cmp -s "$T/before.json" "$T/after.json" && echo same)" same

    # Side by side: --in-place contradicts the record.
    run_rm online run -q "$T/embed.json" --uri "$uri" --create-indexes
    expect_eq "$kind: run side by side" "$rc:$(cat "$T/err")" "0:"
    snap "$T/sbs.json"
    for cmd in verify sync rollback; do
        run_rm online $cmd --in-place "$T/embed.json" --uri "$uri"
        expect_eq "$kind: $cmd --in-place of a side-by-side plan: refused (exit 2)" "$rc" 2
        expect_message "$kind: ... saying so" \
            "remodel: error: plan embed.json ran side by side: --in-place contradicts it (leave it out: the mode its run recorded is used)"
    done
    for flag in force forget; do
        run_rm online rollback --$flag "$T/embed.json" --uri "$uri"
        expect_eq "$kind: rollback --$flag of a side-by-side plan: refused (exit 2)" "$rc" 2
        expect_message "$kind: ... saying so" \
            "plan embed.json ran side by side: --$flag is for an in-place rollback"
    done
    snap "$T/sbs2.json"
    expect_eq "$kind: ... nothing written" "$(cmp -s "$T/sbs.json" "$T/sbs2.json" && echo same)" same
    run_rm online verify "$T/embed.json" --uri "$uri"
    expect_eq "$kind: verify without it: exit 0" "$rc" 0
done
