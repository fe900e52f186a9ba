#!/usr/bin/env bash
# Every step's preconditions before the first write (issue 49): a plan of
# several steps whose last one's join lacks an index is refused before
# any step writes (no result collection, no index made), naming the step;
# and --create-indexes, given to the run that began the plan, is
# remembered in its record: a later command without it creates a join
# index that went missing rather than refuse.
#   REMODEL=build/remodel bash tests/cli/test_online_cutover_indexes.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "cutover indexes: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
# Steps 1 and 2 need no index (joins by _id, a rename); step 3 joins
# blog.comments by post_id, which has none.
cat >"$T/plans/three.json" <<'PEOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner",
                   "foreignField": "_id", "fields": {"owner_name": "name"}}},
  {"rename": {"in": "crm.people", "fields": {"name": "fullName"}}},
  {"embed": {"from": "blog.comments", "into": "blog.posts", "localField": "_id",
             "foreignField": "post_id", "as": "comments"}}]}
PEOF
results() { py "print(sum(1 for d in ('crm', 'blog') for n in c[d].list_collection_names() if '_remodel_' in n))"; }

for kind in $(online_kinds); do
    online_start "$kind" "$T/srv-$kind" || continue
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --nsInclude 'blog.*' \
        --noIndexRestore --quiet 2>/dev/null || { fail "$kind: restore"; continue; }
    online run three
    expect_eq "$kind: step 3 lacks its index: refused (exit 2)" "$rc" 2
    expect_message "$kind: ... naming step 3, before any step writes" "step 3 (embed)" \
        "checked before any step writes" "post_id"
    expect_eq "$kind: ... no result written" "$(results)" 0
    online run three --create-indexes
    [ $rc == 0 ] && pass "$kind: run --create-indexes: exit 0" || fail "$kind: run --create-indexes: exit 0" "$(cat "$T/err")"
    # The index the run made goes missing; a verify without the flag
    # makes it again, as the run was told.
    py "c.blog.comments.drop_index('post_id_1')"
    online verify three
    [ $rc == 0 ] && pass "$kind: verify without --create-indexes: as the run was given it (exit 0)" ||
        fail "$kind: verify without --create-indexes: as the run was given it (exit 0)" "$(cat "$T/err")"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
