#!/usr/bin/env bash
# make demo-online: remodel online end to end on the shipped sample, against
# a throwaway local FerretDB (the test peers, installed and cached by
# tests/peers/install.sh): restore, run with progress, a kill -9 and a
# resume, status, verify, an application's write found by verify and put
# right by sync, finalize, rollback; then an in-place backfill and its
# rollback. A command that runs past two seconds shows how far it is every
# two seconds (scripts/demo_lib.sh).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rm_=$(cd "$build" && pwd)/remodel
tests/peers/install.sh >/dev/null
. tests/peers/env.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/remodel-demo-online.XXXXXX")
trap 'tests/peers/server.sh stop "$dir/server" >/dev/null 2>&1; rm -rf "$dir"' EXIT
uri=$(REMODEL_SERVER_OWNER=$$ tests/peers/server.sh start "$dir/server" ferretdb)
plan=$dir/embed-tasks.json
cp dumps/plans/embed-tasks.json "$plan"

say() { echo; echo "# $*"; }
. scripts/demo_lib.sh
DEMO_STRIP=$dir/ DEMO_BIN=$rm_
run() { demo_run "$@" || true; } # as before: a failing step shows its error and the demo goes on
mongo() { python3 -c "import pymongo, sys
db = pymongo.MongoClient(sys.argv[1])
$1" "$uri"; }

say "a throwaway FerretDB on $uri, given the sample's crm database"
"$MONGORESTORE" --uri "$uri" --dir dumps/sample --nsInclude 'crm.*' --noIndexRestore --quiet
echo "# the plan, dumps/plans/embed-tasks.json:"; cat "$plan"
say "the join needs an index on crm.tasks.owner: refused, naming it"
run "$rm_" online run "$plan" --uri "$uri" || true
say "run, killed with SIGKILL after a second"
echo "\$ remodel online run embed-tasks.json --uri $uri --create-indexes --batch-size 10 --pause 50ms &"
"$rm_" online run "$plan" --uri "$uri" --create-indexes --batch-size 10 --pause 50ms &
pid=$!
sleep 1
kill -9 $pid
wait $pid 2>/dev/null || true
echo "# (kill -9 after a second)"
run "$rm_" online status "$plan" --uri "$uri"
say "run again: it goes on from the checkpoint (the dead run was on this host: its lease is taken over at once)"
run "$rm_" online run "$plan" --uri "$uri"
run "$rm_" online status "$plan" --uri "$uri"
run "$rm_" online verify "$plan" --uri "$uri"
say "the application changes a task; verify sees it, sync puts it right"
mongo 'db.crm.tasks.update_one({"owner": {"$exists": True}}, {"$set": {"description": "changed by the application"}})'
run "$rm_" online verify "$plan" --uri "$uri" || true
run "$rm_" online sync "$plan" --uri "$uri"
run "$rm_" online verify "$plan" --uri "$uri"
say "finalize (the application's writes stopped), then a person of the new design"
run "$rm_" online finalize "$plan" --uri "$uri" --writes-stopped
mongo 'import json; from bson import json_util
p = db.crm.people.find_one({"tasks.1": {"$exists": True}}, {"name": 1, "tasks": 1})
p["tasks"] = p["tasks"][:2]
print(json_util.dumps(p)[:300] + " ...")'
run "$rm_" online rollback "$plan" --uri "$uri"
run "$rm_" online rollback "$plan" --uri "$uri"
mongo 'print(sorted(db.crm.list_collection_names()))'

say "an in-place backfill: each task gets its owner's email, then rollback"
cat >"$dir/backfill.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner",
                   "fields": {"owner_email": "email"}}}]}
EOF
# (FerretDB rewrites about 20 documents a second: the lines with "..." say
# how far each phase is, as the server shows it)
with_owner=$(mongo 'print(db.crm.tasks.count_documents({"owner": {"$exists": True}}))')
DEMO_PROGRESS="mongo 'print(db.crm.tasks.count_documents({\"owner_email\": {\"\$exists\": True}}), \"of $with_owner tasks have owner_email\")'"
run "$rm_" online run "$dir/backfill.json" --uri "$uri" --in-place
mongo 'print(db.crm.tasks.find_one({"owner_email": {"$exists": True}}, {"description": 1, "owner_email": 1}))'
DEMO_PROGRESS=
run "$rm_" online verify "$dir/backfill.json" --uri "$uri"
DEMO_PROGRESS="mongo 'print(db.crm.tasks.count_documents({\"owner_email\": {\"\$exists\": True}}), \"of $with_owner tasks still have owner_email\")'"
run "$rm_" online rollback "$dir/backfill.json" --uri "$uri"
DEMO_PROGRESS=
mongo 'print(db.crm.tasks.count_documents({"owner_email": {"$exists": True}}), "tasks with owner_email left")'
