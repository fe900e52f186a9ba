#!/usr/bin/env bash
# Regenerates the shipped sample dump (deterministic: same bytes every time)
# and its gzip archive form.  scripts/make-dumps.sh BUILD
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
"$build/remodel-gen" --out dumps/sample --scale 1 --seed 1 --force
"$build/remodel" convert --quiet --force dumps/sample dumps/sample.archive.gz
echo "dumps/sample and dumps/sample.archive.gz regenerated"
