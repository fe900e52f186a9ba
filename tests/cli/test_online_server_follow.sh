#!/usr/bin/env bash
# A --server-side run followed (issue 35, item 3), on mongo-java-server
# with its change streams (FerretDB 1.x has no $lookup or $merge: no
# server-side run there). The run on the server's side notes no join
# partner's keys, so the change log alone cannot say which results a
# task moved to another owner was in: the first sync after it rescans
# every step in full (saying why), noting them; the next sync follows the
# log again, and a task moved then is traced. After each sync a full
# verify finds every result as the sources make them; finalize exit 0.
#   REMODEL=build/remodel bash tests/cli/test_online_server_follow.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "server-side follow: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/e.json"

# move N SEED: N tasks moved to another owner, the number moved printed.
move() {
    py 'r = random.Random(int(sys.argv[3]))
people = sorted(p["_id"] for p in c.crm.people.find({}, {"_id": 1}))
tasks = sorted(t["_id"] for t in c.crm.tasks.find({"owner": {"$in": people}}, {"_id": 1}))
n = 0
for t in r.sample(tasks, int(sys.argv[2])):
    old = c.crm.tasks.find_one({"_id": t})["owner"]
    new = r.choice([p for p in people if p != old])
    n += c.crm.tasks.update_one({"_id": t}, {"$set": {"owner": new}}).modified_count
print(n)' "$1" "$2"
}

kind=java
online_start "$kind" "$T/$kind" 0 changelog || exit 0
"$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
    --noIndexRestore --quiet || { fail "$kind: restore"; exit 0; }
online run e --server-side --create-indexes
expect_eq "$kind: run --server-side exit" "$rc" 0

expect_eq "$kind: 5 tasks moved to another owner" "$(move 5 1)" 5
online sync e
expect_eq "$kind: sync exit" "$rc" 0
expect_message "$kind: the first sync rescans in full, saying why" \
    "remodel: sync: every step rescanned in full: the run was --server-side, which notes no join partner's keys"
online verify e
expect_eq "$kind: verify after it: every result right" "$rc:$(tail -n 1 "$T/err")" \
    "0:remodel: verify: plan e.json: every result as the sources make it"

expect_eq "$kind: 5 more tasks moved" "$(move 5 2)" 5
online sync e
expect_eq "$kind: the next sync exit" "$rc" 0
if grep -q "rescanned in full" "$T/err"; then
    fail "$kind: the next sync follows the log" "$(cat "$T/err")"
else
    expect_message "$kind: the next sync follows the log" "remodel: sync: change log: "
fi
online verify e
expect_eq "$kind: verify after it: every result right" "$rc:$(tail -n 1 "$T/err")" \
    "0:remodel: verify: plan e.json: every result as the sources make it"
online finalize e --writes-stopped
expect_eq "$kind: finalize exit" "$rc" 0
