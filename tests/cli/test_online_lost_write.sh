#!/usr/bin/env bash
# remodel online run when the connection drops around a batch's insert of
# its results, on FerretDB and on mongo-java-server (a TCP proxy between
# remodel and the server closes every connection at the Nth insert into
# the step's people results):
# - the insert never sent (what a server stopping or restarting does to a
#   command it had not read): the run retries that batch and finishes
#   with remodel run's documents (before the fix, the driver's failed
#   reply, an empty writeErrors, passed for "duplicates only, none": the
#   batch counted as written, its checkpoint saved, its three results
#   never there, exit 0);
# - the insert done by the server, its reply lost: the retried batch
#   meets its own results (duplicate _ids), rewrites them, and the run
#   finishes with remodel run's documents.
#   REMODEL=build/remodel bash tests/cli/test_online_lost_write.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && exit 0 # a proxy in front of a local server only
S=$ROOT/dumps/sample
trap 'proxy_stop
for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
"$REMODEL" run -q "$T/plans/embed.json" --from "$S" --to "$T/embed0.archive"
pid() { plan_id "$T/plans/$1.json"; }

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue
    port=${uri##*:}
    port=${port%/}
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --noIndexRestore --quiet
    for mode in unsent unanswered; do
        proxy_start "$port" --cut 'insert:people_remodel_*:5' --mode $mode
        cp "$T/plans/embed.json" "$T/plans/$mode.json"
        run_rm online run -q "$T/plans/$mode.json" --uri "mongodb://127.0.0.1:$pport/" \
            --create-indexes --batch-size 3 --retry-for 30
        proxy_stop
        expect_eq "$kind: every connection dropped at the fifth batch's insert ($mode): the run retries and finishes (exit 0)" \
            "$rc:$(grep -c "dropped every connection at insert 5 ($mode)" "$T/proxy.log")" "0:1"
        online_same "$kind: ... with remodel run's result, none of that batch's results missing" \
            "$T/embed0.archive" crm.people=people_remodel_$(pid $mode)_1 crm.tasks=tasks_remodel_$(pid $mode)_1
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
