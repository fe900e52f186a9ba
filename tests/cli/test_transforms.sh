#!/usr/bin/env bash
# Transforms against the spec (docs/commands.md: "remodel run", "remodel check";
# docs/plans.md: "Plans", "embed", "extract", "Field steps"): the seeds' examples as golden
# cases, $lookup edge cases, every BSON type byte for byte, round-trip
# properties over generated data, plan validation, --dry-run, --stats-json
# and temporary files. Expected outputs are written by hand in
# tests/transforms/cases/*.json (see tests/transforms/run_case.py); every case
# runs to a directory, with --memory 1K (external sorts) and to an archive,
# and the three must agree byte for byte.
#   REMODEL=build/remodel bash tests/cli/test_transforms.sh
. "$(dirname "$0")/lib.sh"

TD=$ROOT/tests/transforms
SLOW=1
[ -n "${REMODEL_SANITIZE:-}" ] && SLOW=3
export REMODEL PYTHONDONTWRITEBYTECODE=1
BG=""
cleanup() {
    local p
    for p in $BG; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap '[ "$BASHPID" != "$$" ] || cleanup' EXIT

if ! python3 -c 'import bson, bson.json_util' 2>"$T/err"; then
    fail "python3 with pymongo's bson package" "$(cat "$T/err"); run tests/peers/install.sh"
    exit 0
fi

# py NAME SCRIPT ARGS...: a Python driver prints its own PASS/FAIL lines.
py() {
    local n=$1; shift
    python3 "$@"
    local st=$?
    [ $st -eq 0 ] || fail "$n" "python3 $* exited with status $st"
}

mkdir -p "$T/w" "$T/tmp"

# --- 1, 2, 4: golden cases, edge cases, field steps, plan validation -------
py "json cases" "$TD/run_case.py" "$T/w" "$TD"/cases/*.json
py "every BSON type" "$TD/types_case.py" "$T/w"
py "\$lookup semantics (MongoDB's own cases)" "$TD/lookup_semantics.py" "$T/w"

# --- 3: round-trip properties over generated data ---------------------------
py "properties" "$TD/props.py" "$T/w" 30

# --- 5: --dry-run, --stats-json, temporary files ----------------------------
mkdump() { python3 "$TD/mkdump.py" "$@"; }
IN=$T/in
mkdump "$IN" '{
  "crm.people": [{"_id": 1, "name": "A"}, {"_id": 2, "name": "B"}],
  "crm.tasks": [{"_id": 10, "owner": 9}, {"_id": 11, "owner": 1}, {"_id": 12},
                {"_id": 13, "owner": 2}, {"_id": 14, "owner": 1}],
  "other.keep": [{"_id": "k"}]}'
PLAN=$T/plan.json
cat >"$PLAN" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id",
             "foreignField": "owner", "as": "tasks", "project": {"owner": 0}}}]}
EOF

# tmp_empty NAME: nothing at all is left in --tmp (the stores and sort runs
# are hidden files: .remodel-store.*, .remodel-spill.*).
tmp_empty() {
    local left; left=$(ls -A "$T/tmp")
    if [ -z "$left" ]; then pass "$1"; else fail "$1" "left in --tmp: $left"; fi
    rm -rf "$T/tmp"; mkdir -p "$T/tmp"
}

# summary_row NAMESPACE: "IN OUT EMBEDDED ORPHANS OVERFLOW EXTRACTED" from the
# summary (printed on stdout or stderr).
summary_row() { cat "$T/out" "$T/err" | awk -v ns="$1" '$1 == ns { print $2, $3, $4, $5, $6, $7 }'; }

run_rm run "$PLAN" --from "$IN" --to "$T/dry.archive" --dry-run --tmp "$T/tmp"
expect_eq "dry-run: exit status 0" "$rc" 0
check "dry-run: nothing written" test ! -e "$T/dry.archive"
expect_eq "dry-run: no temporary output beside the destination" "$(ls -A "$T" | grep -c -- '\.remodel-')" 0
expect_eq "dry-run: summary row crm.people" "$(summary_row crm.people)" "2 2 3 0 0 0"
expect_eq "dry-run: summary row crm.tasks" "$(summary_row crm.tasks)" "5 2 0 2 0 0"
expect_eq "dry-run: summary row for the untouched other.keep" "$(summary_row other.keep)" "1 1 0 0 0 0"
tmp_empty "dry-run: --tmp left empty"

run_rm run "$PLAN" --from "$IN" --dry-run --tmp "$T/tmp"
expect_eq "dry-run without --to: exit status 0, summary printed" "$rc:$(summary_row crm.tasks)" "0:5 2 0 2 0 0"
tmp_empty "dry-run without --to: --tmp left empty"

run_rm run "$PLAN" --from "$IN" --to "$T/o1" --stats-json "$T/stats.json" --tmp "$T/tmp"
expect_eq "run: exit status 0" "$rc" 0
expect_eq "run: summary row crm.tasks" "$(summary_row crm.tasks)" "5 2 0 2 0 0"
stats=$(python3 - "$T/stats.json" <<'EOF' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))
keys = ("in", "out", "embedded", "orphans", "overflow", "extracted")
rows = {n["ns"]: [n.get(k) for k in keys] for n in s["namespaces"]}
print(json.dumps({"spilled": s.get("spilled"), "namespaces": rows}, sort_keys=True))
EOF
)
expect_eq "--stats-json: exact numbers for a simple embed" "$stats" \
    '{"namespaces": {"crm.people": [2, 2, 3, 0, 0, 0], "crm.tasks": [5, 2, 0, 2, 0, 0], "other.keep": [1, 1, 0, 0, 0, 0]}, "spilled": false}'
tmp_empty "run: --tmp left empty after success"

run_rm run "$PLAN" --from "$IN" --to "$T/o2" --memory 1K --tmp "$T/tmp" --quiet
expect_eq "run --memory 1K: exit status 0" "$rc" 0
check "run --memory 1K: same bytes as in memory" diff -r "$T/o1" "$T/o2"
tmp_empty "run --memory 1K: --tmp left empty after success"

# the same input as an archive, and from standard input
"$REMODEL" convert -q "$IN" "$T/in.archive"
run_rm run "$PLAN" --from "$T/in.archive" --to "$T/o3" --tmp "$T/tmp" --quiet
# (an archive carries the server version: the output gets a prelude.json)
check "run from an archive: same bytes as from the directory" diff -r -x prelude.json "$T/o1" "$T/o3"
"$REMODEL" run "$PLAN" --from - --to "$T/o4" --tmp "$T/tmp" --quiet <"$T/in.archive" 2>"$T/err"
check "run from standard input: same bytes" diff -r -x prelude.json "$T/o1" "$T/o4"
tmp_empty "runs from archive and stdin: --tmp left empty"

# a failing run (maxItems exceeded) leaves nothing behind, in memory or spilling
cat >"$T/fail.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"x": 1}}},
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id",
             "foreignField": "owner", "as": "tasks", "maxItems": 1}}]}
EOF
for mem in 512M 1K; do
    run_rm run "$T/fail.json" --from "$IN" --to "$T/of" --memory $mem --tmp "$T/tmp"
    expect_eq "failing run (--memory $mem): exit status 1..125 and one error line" \
        "$([ "$rc" -ge 1 ] && [ "$rc" -le 125 ] && echo bad)$(grep -c '^remodel: error: ' "$T/err")$(wc -l <"$T/err")" "bad11"
    check "failing run (--memory $mem): no destination" test ! -e "$T/of"
    expect_eq "failing run (--memory $mem): no temporary output beside the destination" \
        "$(ls -A "$T" | grep -c -- '\.remodel-')" 0
    tmp_empty "failing run (--memory $mem): --tmp left empty"
done
run_rm run "$T/fail.json" --from "$IN" --dry-run --tmp "$T/tmp"
expect_eq "failing plan under --dry-run fails too" "$([ "$rc" -ne 0 ] && echo failed)" "failed"
tmp_empty "failing dry run: --tmp left empty"

# SIGTERM while the sort runs are on disk: the run's files are in --tmp while
# it works, and none is left afterwards, nor any output.
python3 "$TD/bigdump.py" "$T/big" 200000
cat >"$T/big.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "t.c", "into": "t.p", "localField": "_id", "foreignField": "owner", "as": "k"}}]}
EOF
"$REMODEL" run "$T/big.json" --from "$T/big" --to "$T/obig" --memory 64K --tmp "$T/tmp" -q \
    >/dev/null 2>"$T/err" &
pid=$!
BG="$BG $pid"
seen=""
for _ in $(seq 1 $((400 * SLOW))); do
    seen=$(ls -A "$T/tmp" | grep -E '^\.?remodel-(spill|store)' | head -1)
    [ -n "$seen" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
if [ -n "$seen" ]; then pass "spilling run: its temporary files are in --tmp ($seen)"
else fail "spilling run: its temporary files are in --tmp" "none seen while it ran"; fi
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
BG=""
if [ -n "$seen" ]; then
    expect_eq "SIGTERM: the run stops with a failure status" "$([ "$rc" -ne 0 ] && echo stopped)" "stopped"
    check "SIGTERM: no destination" test ! -e "$T/obig"
    expect_eq "SIGTERM: no temporary output beside the destination" "$(ls -A "$T" | grep -c -- '\.remodel-')" 0
fi
tmp_empty "SIGTERM: --tmp left empty"

# --- denormalize and summarize: re-runs give the same bytes, generated data,
# $group number rules, 20000-document groups spilling under --memory 1K (the
# JSON cases cases/denormalize.json and cases/summarize.json run above) ------
py "denormalize/summarize properties" "$TD/denorm_props.py" "$T/w" 30

# --- the one-pass path (field steps, extract, denormalize while reading) ----
# equals --memory 1K and --batch byte for byte, whatever the segment order
py "one-pass properties" "$TD/stream_props.py" "$T/w" 20

# --- documents checked ahead on the read-ahead thread: a big file gives the
# same outputs, messages and set-aside documents as the same bytes on stdin
mkdir -p "$T/ca"
py "check-ahead" "$TD/check_ahead.py" "$T/ca"
rm -rf "$T/ca"

# --- bucketize / unbucketize: round trips, --memory 1K, fixtures untouched ---
# (tests/transforms/cases/bucket.json runs with the json cases above)
py "bucket properties" "$TD/bucket_props.py" "$T/w" 40
# --- the real time-series archive: untouched namespaces pass through ---------
ts_arch=$MT/mongorestore/testdata/timeseries_tests/dump.archive
printf '%s' '{"remodel": 1, "steps": [{"version": {"in": "admin.system.version", "value": 2}}]}' >"$T/ts-plan.json"
"$REMODEL" run "$T/ts-plan.json" --from "$ts_arch" --to "$T/ts-run.archive" --quiet
"$REMODEL" convert --quiet "$ts_arch" "$T/ts-conv.archive"
ts_fp() { "$REMODEL" inspect --json --quiet "$1" | python3 -c '
import json, sys
for n in json.load(sys.stdin)["namespaces"]:
    if n["db"] == "timeseries_test" or n["collection"] == "system.views":
        print(n["db"], n["collection"], n.get("dataCollection"), n["documents"], n["crc"], n.get("metadataSha1"))'; }
expect_eq "time-series archive: untouched namespaces byte-identical after run" "$(ts_fp "$T/ts-run.archive")" "$(ts_fp "$ts_arch")"
expect_eq "time-series archive: run and convert agree on untouched namespaces" "$(ts_fp "$T/ts-run.archive")" "$(ts_fp "$T/ts-conv.archive")"
exit 0
