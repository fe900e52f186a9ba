#!/usr/bin/env bash
# online run --dry-run evaluates every document of every step first (issue
# 48 item 6, issue 49): a plan whose set has a $toDate that fails on some
# documents is reported with how many fail and the first few, exit 1,
# nothing written (no result collection, no state); the same plan with an
# onError dry-runs clean.
#   REMODEL=build/remodel bash tests/cli/test_online_cutover_dryrun.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "dry run: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/dates.json" <<'PEOF'
{"remodel": 1, "steps": [
  {"set": {"in": "dry.items", "fields": {"when": {"$toDate": "$d"}}}}]}
PEOF
cat >"$T/plans/dates_ok.json" <<'PEOF'
{"remodel": 1, "steps": [
  {"set": {"in": "dry.items", "fields": {"when": {"$convert": {"input": "$d", "to": "date",
                                                               "onError": null}}}}}]}
PEOF
for kind in $(online_kinds); do
    online_start "$kind" "$T/srv-$kind" || continue
    # 3000 items, every tenth with a date no parser takes (300 fail).
    py "c.dry.items.insert_many([{'_id': i, 'd': ('not a date %d' % i) if i % 10 == 3 else '2024-01-%02dT00:00:00Z' % (i % 28 + 1)} for i in range(3000)])"
    online run dates --dry-run
    expect_eq "$kind: dry run of a failing \$toDate: exit 1" "$rc" 1
    expect_message "$kind: ... counts every failing document, names the first" \
        "300 document(s) fail" "dry run: fails:" "nothing written"
    shown=$(grep -c 'dry run: fails:' "$T/err")
    expect_eq "$kind: ... the first 5 said" "$shown" 5
    left=$(py "print(len([n for n in c.dry.list_collection_names() if '_remodel_' in n]))")
    expect_eq "$kind: ... nothing written" "$left" 0
    online run dates_ok --dry-run
    expect_eq "$kind: with onError: the dry run passes (exit 0)" "$rc" 0
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
