#!/usr/bin/env bash
# make demo: the main job on the shipped sample dump. Until the transform
# engine lands, that is reading, checking and converting it.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rm_=$build/remodel
out=$(mktemp -d "${TMPDIR:-/tmp}/remodel-demo.XXXXXX")
trap 'rm -rf "$out"' EXIT

run() { echo; echo "\$ $*"; "$@"; }
run "$rm_" inspect dumps/sample
run "$rm_" convert dumps/sample "$out/sample.archive.zst" --compress zstd:6
run "$rm_" convert "$out/sample.archive.zst" "$out/sample.tar.gz"
run "$rm_" inspect "$out/sample.tar.gz"
run "$rm_" convert dumps/sample/crm/tasks.bson "$out/tasks.bson.zst"
run "$rm_" inspect --json "$out/tasks.bson.zst"
