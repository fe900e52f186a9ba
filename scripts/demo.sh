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
echo
echo "# a person before the plan, then after it, tasks embedded:"
run "$rm_" show dumps/sample --ns crm.people --limit 1
run "$rm_" show "$out/crm.archive.zst" --ns crm.people --limit 1 --pretty
run "$rm_" run dumps/plans/evolve-people.json --from dumps/sample --to "$out/evolved" --quiet
run "$rm_" inspect "$out/evolved"
