#!/usr/bin/env bash
# make demo: the main job on the shipped sample dump: a plan that embeds
# each person's tasks into the person (one-to-many, parent referencing ->
# embedding), then a look at the result.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rm_=$build/remodel
out=$(mktemp -d "${TMPDIR:-/tmp}/remodel-demo.XXXXXX")
trap 'rm -rf "$out"' EXIT

run() { echo; echo "\$ $*"; "$@"; }
run "$rm_" inspect dumps/sample
echo; echo "\$ cat dumps/plans/embed-tasks.json"; cat dumps/plans/embed-tasks.json
run "$rm_" check dumps/plans/embed-tasks.json --against dumps/sample
run "$rm_" run dumps/plans/embed-tasks.json --from dumps/sample --to "$out/crm.archive.zst"
run "$rm_" inspect "$out/crm.archive.zst"
"$rm_" convert -q "$out/crm.archive.zst" "$out/dir"
echo
echo "# the first person after the plan, tasks embedded (first two shown):"
python3 - "$out/dir/crm/people.bson" <<'PY' || echo "(install pymongo to see a document here)"
import sys
from bson import decode_file_iter, json_util
person = next(decode_file_iter(open(sys.argv[1], "rb")))
person["tasks"] = person["tasks"][:2] + (["..."] if len(person["tasks"]) > 2 else [])
print(json_util.dumps(person, indent=1))
PY
run "$rm_" run dumps/plans/evolve-people.json --from dumps/sample --to "$out/evolved" --quiet
run "$rm_" inspect "$out/evolved"
