#!/usr/bin/env bash
# docs/guide-redesign.md's commands, as written, in order, against a fresh
# in-memory server with its change log (the one that keeps validators):
# the sample's crm restored, then every `$ remodel` line of the guide run
# from the repository root by tests/transforms/readme_examples.py --uri,
# its exit status and the output shown checked (test_readme.sh runs the
# offline ones alone, as for every guide).
#   REMODEL=build/remodel bash tests/cli/test_online_guide_redesign.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "guide-redesign: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/srv" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
online_start mem "$T/srv" 0 changelog || exit 0
if "$MONGORESTORE" --uri "$uri" --dir "$ROOT/dumps/sample" --nsInclude 'crm.*' --quiet 2>"$T/err"; then
    pass "guide-redesign: the sample's crm restored"
else
    fail "guide-redesign: the sample's crm restored" "$(cat "$T/err")"
fi
python3 "$ROOT/tests/transforms/readme_examples.py" --root "$ROOT" --least 10 --uri "$uri" \
    "$REMODEL" "$ROOT/docs/guide-redesign.md"
