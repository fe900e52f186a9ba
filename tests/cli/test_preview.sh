#!/usr/bin/env bash
# remodel run --preview N: N documents of each namespace the plan touches,
# before and after, checked against show of the source and of a real run's
# output; nothing written anywhere.
#   REMODEL=build/remodel bash tests/cli/test_preview.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
P=$ROOT/dumps/plans
mkdir -p "$T/tmp"
# section NAME WHEN: the lines under "==> NAME: WHEN <==" in $T/out.
section() { awk -v h="==> $1: $2 <==" '/^==> / { on = ($0 == h); next } on' "$T/out"; }

for plan in embed-tasks evolve-people; do
    "$REMODEL" run -q "$P/$plan.json" --from "$S" --to "$T/$plan.archive"
    TMPDIR=$T/tmp "$REMODEL" run -q "$P/$plan.json" --from "$S" --preview 3 >"$T/out" 2>"$T/err"
    expect_eq "$plan: exit 0" "$?" 0
    expect_eq "$plan: nothing left in TMPDIR" "$(ls -A "$T/tmp")" ""
done

# embed: people before = the first 3 of the source; after = the same _ids in the result.
TMPDIR=$T/tmp "$REMODEL" run -q "$P/embed-tasks.json" --from "$S" --preview 3 >"$T/out"
expect_eq "embed: the headers" "$(grep '^==> ' "$T/out" | tr '\n' '|')" \
    "==> crm.people: before <==|==> crm.people: after <==|==> crm.tasks: before <==|==> crm.tasks: after <==|"
expect_eq "embed: people before = show of the source" "$(section crm.people before)" \
    "$("$REMODEL" show "$S" --ns crm.people --limit 3)"
want=$(for id in $(section crm.people before | python3 -c '
import json, sys
for l in sys.stdin: print(json.dumps(json.loads(l)["_id"], separators=(",", ":")))'); do
    "$REMODEL" show "$T/embed-tasks.archive" --ns crm.people --id "$id"; done)
expect_eq "embed: people after = the same _ids in the real result" "$(section crm.people after)" "$want"
expect_eq "embed: the after documents hold the tasks" "$(section crm.people after | grep -c '"tasks":\[')" 3
# The first 3 tasks were embedded: gone from crm.tasks, and said so.
expect_eq "embed: tasks embedded are gone from crm.tasks" "$(section crm.tasks after | grep -c .)" 1
expect_eq "embed: ... and the preview says how many" "$(section crm.tasks after)" "(3 of the documents above are gone)"

# extract: a new namespace shows its first documents, as in the real result.
TMPDIR=$T/tmp "$REMODEL" run -q "$P/evolve-people.json" --from "$S" --preview 2 >"$T/out"
expect_eq "extract: the new namespace's first 2, as in the real result" "$(section crm.addresses 'after (new)')" \
    "$("$REMODEL" show "$T/evolve-people.archive" --ns crm.addresses --limit 2)"
expect_eq "extract: people renamed and versioned in the preview" \
    "$(section crm.people after | grep -c '"fullName":.*"schemaVersion":2}$')" 2

# Refusals: --preview writes nothing, so no --to; it reads the source twice.
run_rm run "$P/embed-tasks.json" --from "$S" --preview 2 --to "$T/x.archive"
expect_eq "--preview with --to: exit 2, nothing written" "$rc:$(test -e "$T/x.archive" && echo written)" "2:"
run_rm run "$P/embed-tasks.json" --from - --preview 2 </dev/null
expect_eq "--preview of standard input: exit 2" "$rc" 2
run_rm run "$P/embed-tasks.json" --from "$S" --preview 0
expect_eq "--preview 0: exit 2" "$rc" 2
